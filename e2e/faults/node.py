"""Faults of a whole worker node of a multi-node kind cluster (CASES-faults.md §3b, NF-4, NF-8,
NF-9): each is a :func:`e2e.faults.core.fault` (inject, yield the window, always undo, health
check, broken cluster replaced).

=====================  ========================================================  ===============================
fault (window name)    inject                                                    undo
=====================  ========================================================  ===============================
``node-pause``         ``docker pause <worker>`` (cgroup freezer: kubelet,       ``docker unpause <worker>``
                       containerd, shims and apps frozen; heartbeats stop,        (only if still paused)
                       apps time out instead of refusing)
``partition-reject``   in the worker: ``iptables -I OUTPUT -d <control-plane>    the same rules ``-D`` (every copy)
                       -p tcp --dport 6443 -j REJECT --reject-with tcp-reset``
                       (and ``ip6tables`` for its IPv6 address)
``partition-drop``     the same rules with ``-j DROP`` (packets vanish: the       the same rules ``-D``
                       client notices only by its own timeouts)
``node-shutdown``      in the worker: the logind signal ``PrepareForShutdown``   ``PrepareForShutdown(false)``,
                       ``(true)`` (``busctl emit``), which the kubelet's          the kube-system pods it left
                       graceful node shutdown manager acts on                     Failed deleted, the kubelet
                                                                                  restarted if it lost its lock
=====================  ========================================================  ===============================

Partition: the rule cuts the worker's connections to the API server (its kubelet and kube-proxy,
which reach it at ``<cluster>-control-plane:6443``) and nothing else: pod traffic between the
nodes and the host's NodePort traffic keep flowing, so NF-8 sees the control path alone. kind's
Docker network is dual-stack and that name resolves to both addresses: on this host the kubelet
and kube-proxy connect over IPv6 (``ss -tn`` in the worker: ``[fc00:…::2] → [fc00:…::3]:6443``),
so the cut needs an ``ip6tables`` rule as well as the ``iptables`` one (found on the real
cluster: with IPv4 alone the node never went Unknown). Each rule carries the comment
:data:`PARTITION_COMMENT` so the undo removes exactly them. A partition inside
one node is not possible: the kubelet and the API server would share its network namespace, and
this host's cgroup v1 rules out ``-m cgroup`` matching per process (CASES-faults.md §3b).

Shutdown: the kubelet listens for the signal on ``/org/freedesktop/login1``, matching interface
and member, not the sender (``pkg/kubelet/nodeshutdown/systemd/inhibit_linux.go``
``MonitorShutdown``), so emitting it from the node is what upstream's own e2e does
(``test/e2e_node/node_shutdown_linux_test.go``); no machine shuts down. Pods it kills stay
``Failed`` (nodeshutdown_manager.go ``killPods``); the undo deletes those of kube-system on the
node (their controllers already made replacements), so the health check sees a clean cluster.
:func:`shutdown_capability` says whether the node can take the fault at all.

Found on the real cluster (v1.37.2, in one of two cancelled shutdowns): afterwards the kubelet
held **no** inhibitor lock, so a later real shutdown would not be delayed. ``processShutdownEvent``
closes the lock's fd N (deferred ``ReleaseInhibitLock``); on the cancel ``acquireInhibitLock`` gets
the new lock — the kernel hands out the lowest free fd, often N again — and then closes "the old
one", fd N: the new lock, or whatever else now has that number (nodeshutdown_manager_linux.go
``acquireInhibitLock``, systemd/inhibit_linux.go ``ReleaseInhibitLock`` = ``syscall.Close``; the
same in v1.34.4). The undo therefore restarts the kubelet when the lock is gone, which takes a
fresh one: the node is left as the fault found it.

Every function takes the test (a fault site: a :class:`e2e.run.scenario.Scenario`) and the worker's
node container name (kind names the Kubernetes node alike); they refuse the shared default profile.
"""

from __future__ import annotations

import json
import subprocess
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterator, cast

from ..cluster.egress import NETWORK
from .core import RECOVERY_TIMEOUT_S, FaultSite, FaultWindow, fault

if TYPE_CHECKING:
    from ..cluster.kind import Kind

# Seconds a docker command may take (pause/unpause freeze or thaw every process of the node).
DOCKER_TIMEOUT_S = 60
# The API server's port inside the kind network (kind's control plane: 6443).
APISERVER_PORT = 6443
# The iptables comment that marks the partition rule (the undo removes every rule carrying it).
PARTITION_COMMENT = "pod-lifecycle-e2e-partition"
PARTITION_MODES = {"reject": ["REJECT", "--reject-with", "tcp-reset"], "drop": ["DROP"]}
# logind's shutdown signal (org.freedesktop.login1(5)); the kubelet's match rule
# (nodeshutdown/systemd/inhibit_linux.go): type signal, interface, member, path.
LOGIN1_PATH = "/org/freedesktop/login1"
LOGIN1_MANAGER = "org.freedesktop.login1.Manager"
# What the kubelet logs when its shutdown manager cannot start (pkg/kubelet/kubelet.go), and the
# "why" of its delay inhibitor lock (nodeshutdown/systemd/inhibit_linux.go InhibitShutdown).
SHUTDOWN_MANAGER_FAILED = "Failed to start node shutdown manager"
# Seconds a systemctl call may take (a kubelet restart).
SYSTEMCTL_TIMEOUT_S = 60
INHIBIT_WHY = "Kubelet needs time to handle node shutdown"


def docker(*args: str, timeout: float = DOCKER_TIMEOUT_S) -> str:
    """Run ``docker <args>`` on the host for at most ``timeout`` s; returns its stdout.
    ``RuntimeError`` with stderr on failure."""
    r = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"docker {' '.join(args)}: {(r.stderr or r.stdout).strip()}")
    return r.stdout


def node_addresses(node: str) -> list[str]:
    """The addresses of the ``node`` container on the suite's Docker network (``docker inspect``;
    :data:`e2e.cluster.egress.NETWORK`): IPv4, then IPv6 where the network has it (dual-stack, as
    kind's). ``RuntimeError`` when it has none there."""
    networks = json.loads(docker("inspect", "-f", "{{json .NetworkSettings.Networks}}", node))
    net = networks.get(NETWORK) or {}
    addresses = [a for a in (net.get("IPAddress"), net.get("GlobalIPv6Address")) if a]
    if not addresses:
        raise RuntimeError(f"node {node} has no address on the {NETWORK} network: {sorted(networks)}")
    return addresses


def paused(node: str) -> bool:
    """Whether the ``node`` container is paused (``docker inspect .State.Paused``)."""
    return docker("inspect", "-f", "{{.State.Paused}}", node).strip() == "true"


@contextmanager
def node_paused(site: FaultSite, node: str, recovery_timeout_s: float = RECOVERY_TIMEOUT_S) -> Iterator[FaultWindow]:
    """The worker ``node`` frozen (``docker pause``) for the ``with`` block (NF-4)."""
    def unpause() -> None:
        if paused(node):  # idempotent: a retried undo finds it running already
            docker("unpause", node)

    with fault(site, "node-pause", node, lambda: docker("pause", node), unpause, recovery_timeout_s) as window:
        yield window


def partition_rule(apiserver: str, mode: str) -> tuple[str, list[str]]:
    """``(command, rule)``: ``iptables`` or ``ip6tables`` (by the address family) and the OUTPUT
    rule (without ``-I``/``-D``) that cuts the node's connections to the API server at
    ``apiserver`` (address): ``mode`` ``reject`` (TCP reset) or ``drop``; ``ValueError`` for
    another mode."""
    if mode not in PARTITION_MODES:
        raise ValueError(f"partition mode must be one of {sorted(PARTITION_MODES)}, not {mode!r}")
    command = "ip6tables" if ":" in apiserver else "iptables"
    return command, ["OUTPUT", "-d", apiserver, "-p", "tcp", "--dport", str(APISERVER_PORT),
                     "-m", "comment", "--comment", PARTITION_COMMENT, "-j", *PARTITION_MODES[mode]]


@contextmanager
def node_partitioned(site: FaultSite, node: str, mode: str, recovery_timeout_s: float = RECOVERY_TIMEOUT_S
                     ) -> Iterator[FaultWindow]:
    """The worker ``node`` cut off from the API server for the ``with`` block (NF-8):
    ``mode`` ``reject`` or ``drop`` (see the module doc)."""
    rules = [partition_rule(a, mode) for a in node_addresses(cast("Kind", site.kind).control_plane)]  # faults run on kind clusters

    def cut() -> None:
        for command, rule in rules:
            site.node_exec(command, "-I", *rule, node=node)

    def heal() -> None:
        # every copy of every rule, so a retried inject leaves nothing behind; then none may be left
        removes = "; ".join(f"while {command} -D {' '.join(rule)} 2>/dev/null; do :; done" for command, rule in rules)
        listed = "; ".join(f"{command} -S OUTPUT" for command in sorted({c for c, _ in rules}))
        site.node_exec("sh", "-c", f"{removes}; ! ( {listed} ) | grep -q -- {PARTITION_COMMENT}", node=node)

    with fault(site, f"partition-{mode}", node, cut, heal, recovery_timeout_s) as window:
        yield window


def prepare_for_shutdown(site: FaultSite, node: str, active: bool) -> None:
    """Emit logind's ``PrepareForShutdown(active)`` on the node's system bus (``busctl emit``)."""
    site.node_exec("busctl", "emit", LOGIN1_PATH, LOGIN1_MANAGER, "PrepareForShutdown", "b",
                   "true" if active else "false", node=node)


def holds_inhibitor_lock(site: FaultSite, node: str) -> bool:
    """Whether the kubelet on ``node`` holds its logind delay lock (``systemd-inhibit --list``)."""
    try:
        locks = site.node_exec("systemd-inhibit", "--list", "--no-pager", node=node)
    except RuntimeError:
        return False
    return any(INHIBIT_WHY in line and "delay" in line for line in locks.splitlines())


def shutdown_capability(site: FaultSite, node: str) -> str | None:
    """``None`` when the kubelet of ``node`` handles graceful node shutdown, else why not
    (CASES-faults.md NF-9): its log says "Failed to start node shutdown manager" (no D-Bus or
    logind in the node image, or ``shutdownGracePeriod`` 0), or ``systemd-inhibit --list`` does
    not show its delay lock "Kubelet needs time to handle node shutdown"."""
    log = site.node_exec("sh", "-c", "journalctl -u kubelet --no-pager -o cat | grep -F "
                                     f"'{SHUTDOWN_MANAGER_FAILED}' | tail -n 1", node=node).strip()
    if log:
        return f"the kubelet on {node} logged: {log[:300]}"
    try:
        locks = site.node_exec("systemd-inhibit", "--list", "--no-pager", node=node)
    except RuntimeError as e:
        return f"no logind inhibitor list on {node} (D-Bus or systemd-logind missing from the node image): {e}"
    held = [line for line in locks.splitlines() if INHIBIT_WHY in line and "delay" in line]
    if not held:
        return (f"the kubelet on {node} holds no delay inhibitor lock {INHIBIT_WHY!r} "
                f"(shutdownGracePeriod 0?); systemd-inhibit --list: {locks.strip()[:300]}")
    return None


@contextmanager
def node_shutdown(site: FaultSite, node: str, recovery_timeout_s: float = RECOVERY_TIMEOUT_S) -> Iterator[FaultWindow]:
    """A graceful shutdown of ``node`` announced for the ``with`` block and cancelled at its end
    (NF-9); see the module doc. Check :func:`shutdown_capability` first."""
    def cancel() -> None:
        prepare_for_shutdown(site, node, False)
        failed: list[Any] = site.kube.core.list_namespaced_pod(  # the API sets metadata.name
            "kube-system", field_selector=f"spec.nodeName={node},status.phase=Failed").items
        for pod in failed:
            site.kube.core.delete_namespaced_pod(pod.metadata.name, "kube-system")
        if not holds_inhibitor_lock(site, node):
            site.node_exec("systemctl", "restart", "kubelet", node=node, timeout=SYSTEMCTL_TIMEOUT_S)

    with fault(site, "node-shutdown", node, lambda: prepare_for_shutdown(site, node, True), cancel,
               recovery_timeout_s) as window:
        yield window

