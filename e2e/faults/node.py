"""Faults of a whole worker node of a multi-node kind cluster (CASES-faults.md §3b, NF-4, NF-8,
NF-9; a reboot, :func:`node_rebooted`): each is a :func:`e2e.faults.core.fault` (inject, yield the window, always undo, health
check, broken cluster replaced).

=====================  ========================================================  ===============================
fault (window name)    inject                                                    undo
=====================  ========================================================  ===============================
``node-pause``         ``docker pause <worker>`` (cgroup freezer: kubelet,       ``docker unpause <worker>``
                       containerd, shims and apps frozen; heartbeats stop,        (only if still paused)
                       apps time out instead of refusing); through the node
                       agent frozen inside the node (e2e.cluster.freezer:         the freezer's thaw (armed on
                       kubelet, containerd and shims, the kubepods tree)          the node first: at the
                                                                                  planned end)
``partition-reject``   in the worker: ``iptables -I OUTPUT -d <API server>       the same rules ``-D`` (every copy;
                       -p tcp --dport <port> -j REJECT --reject-with             armed on the node first)
                       tcp-reset`` (and ``ip6tables`` for its IPv6 address)
``partition-drop``     the same rules with ``-j DROP`` (packets vanish: the       the same rules ``-D``
                       client notices only by its own timeouts)
``node-shutdown``      in the worker: the logind signal ``PrepareForShutdown``   ``PrepareForShutdown(false)``,
                       ``(true)`` (``busctl emit``), which the kubelet's          the kube-system pods it left
                       graceful node shutdown manager acts on                     Failed deleted, the kubelet
                                                                                  restarted if it lost its lock
``node-reboot``        in the worker: a kubelet drop-in for a new boot ID; then   ``docker start <worker>``; the
                       ``docker stop <worker>`` (its systemd halts: units         static CNI's routes set again,
                       stopped, containers killed)                                the kubelet awaited, the
                                                                                  drop-in removed, guard and
                                                                                  ports checked
=====================  ========================================================  ===============================

Partition: the rule cuts the worker's connections to the API server (its kubelet and kube-proxy,
which reach it at ``<cluster>-control-plane:6443``) and nothing else: pod traffic between the
nodes and the host's NodePort traffic keep flowing, so NF-8 sees the control path alone. kind's
Docker network is dual-stack and that name resolves to both addresses: on this host the kubelet
and kube-proxy connect over IPv6 (``ss -tn`` in the worker: ``[fc00:…::2] → [fc00:…::3]:6443``),
so the cut needs an ``ip6tables`` rule as well as the ``iptables`` one (found on the real
cluster: with IPv4 alone the node never went Unknown). Through the node agent (a ``--kubeconfig``
cluster, no Docker) the address and port are read in the node instead: the ``server`` of the
kubelet's own kubeconfig (:data:`KUBELET_KUBECONFIG`), resolved there (``getent ahosts``: both
families). The cut also cuts the agent's exec once it is in: the API server still dials the
kubelet (10250), but the kubelet asks the API server to authorize each request (its webhook
authorizer's SubjectAccessReview: "connection refused" in its log, measured on v1.37.2), so the
rules' removal is armed on the node first (a systemd timer) and the suite waits for it when its
own undo cannot get through. Each rule carries the comment
:data:`PARTITION_COMMENT` so the undo removes exactly them. A partition inside
one node is not possible: the kubelet and the API server would share its network namespace, and
this host's cgroup v1 rules out ``-m cgroup`` matching per process (CASES-faults.md §3b).

Partition healed through a kubelet restart (KB-7, :func:`node_partitioned_kubelet_restarted`,
window ``partition-<mode>-restart``): the same cut, but the heal first restarts the kubelet
(``systemctl restart kubelet``) while the rules still cut it, then deletes them — a kubelet that
starts with the API server's status of its pods as the cut left it, stale by whatever happened on
the node meanwhile (kubernetes#141473). The restart runs only while a rule is still there, so the
suite's heal retried after the node's armed one (through the agent) restarts nothing a second time.

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
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterator, cast
from urllib.parse import urlsplit

import yaml

from ..cluster import freezer
from ..cluster.egress import NETWORK, NODE_CHAIN
from ..cluster.nodeaccess import DETACH_S, NodeRefused, cut_by_shutdown, detached_argv, undo_unit
from ..base.waiting import wait_until
from .core import RECOVERY_TIMEOUT_S, WINDOW_S, FaultSite, FaultWindow, fault, refuse_shared, require_docker

if TYPE_CHECKING:
    from ..cluster.kind import Kind

# Seconds a docker command may take (pause/unpause freeze or thaw every process of the node).
DOCKER_TIMEOUT_S = 60
# The API server's port inside the kind network (kind's control plane: 6443).
APISERVER_PORT = 6443
# The kubelet's kubeconfig (kubeadm's path, kind's too): where a node's kubelet finds its API server.
KUBELET_KUBECONFIG = "/etc/kubernetes/kubelet.conf"
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
def node_paused(site: FaultSite, node: str, recovery_timeout_s: float = RECOVERY_TIMEOUT_S,
                window_s: float = WINDOW_S) -> Iterator[FaultWindow]:
    """The worker ``node`` frozen for the ``with`` block (NF-4): its kubelet stops renewing its
    Lease, its pods answer nothing. ``window_s``: the planned pause (s).

    On the suite's kind cluster ``docker pause`` of the node container (the cgroup freezer on
    every process of the node, systemd too), ``docker unpause`` after the block. Through the node
    agent (a ``--kubeconfig`` cluster) the freeze is done inside the node
    (:mod:`e2e.cluster.freezer`: the kubelet, containerd and its shims, and the kubepods tree;
    the kernel, systemd and journald keep running): first its ``check`` (the test is skipped
    with its reason when the node cannot be frozen so), then the thaw armed on the node (a
    systemd timer, :func:`e2e.cluster.nodeaccess.arm`) to fire at the planned end, ``window_s``
    after the freeze, which is injected detached (:data:`~e2e.cluster.nodeaccess.DETACH_S`): the
    agent's pod is frozen with the others, and its exec goes through the frozen kubelet. The
    suite's own thaw reaches the node only once the timer thawed it; ``window.undone_at`` is
    then the timer's fire time from the node's journal."""
    access = getattr(site, "access", None)
    if access is None or access.name == "docker":
        def unpause() -> None:
            if paused(node):  # idempotent: a retried undo finds it running already
                docker("unpause", node)

        with fault(site, "node-pause", node, lambda: docker("pause", node), unpause, recovery_timeout_s) as window:
            yield window
        return
    import pytest

    refuse_shared(site, "node-pause")
    try:
        check = access.exec(node, freezer.argv("check"))
    except NodeRefused as e:  # a control-plane node, or one outside --node-selector
        pytest.skip(f"fault node-pause: {e}")
    if check.exit_code != 0:
        pytest.skip(f"fault node-pause: node {node} cannot be frozen from inside (e2e.cluster.freezer check, "
                    f"exit {check.exit_code}): {(check.stderr or check.stdout).strip()}")

    def freeze() -> None:
        site.node_exec(*detached_argv(undo_unit("node-pause", node, role="inject"), freezer.argv("freeze"), DETACH_S),
                       node=node)
        time.sleep(DETACH_S)

    with fault(site, "node-pause", node, freeze, lambda: site.node_exec(*freezer.argv("thaw"), node=node),
               recovery_timeout_s, node_undo=freezer.argv("thaw"), window_s=window_s, cuts_channel=True) as window:
        yield window


def partition_rule(apiserver: str, mode: str, port: int = APISERVER_PORT) -> tuple[str, list[str]]:
    """``(command, rule)``: ``iptables`` or ``ip6tables`` (by the address family) and the OUTPUT
    rule (without ``-I``/``-D``) that cuts the node's connections to the API server at
    ``apiserver`` (address) and ``port``: ``mode`` ``reject`` (TCP reset) or ``drop``; ``ValueError`` for
    another mode."""
    if mode not in PARTITION_MODES:
        raise ValueError(f"partition mode must be one of {sorted(PARTITION_MODES)}, not {mode!r}")
    command = "ip6tables" if ":" in apiserver else "iptables"
    return command, ["OUTPUT", "-d", apiserver, "-p", "tcp", "--dport", str(port),
                     "-m", "comment", "--comment", PARTITION_COMMENT, "-j", *PARTITION_MODES[mode]]


def kubelet_server(kubeconfig: str) -> tuple[str, int]:
    """``(host, port)`` of the API server a kubelet's ``kubeconfig`` (the YAML text of
    :data:`KUBELET_KUBECONFIG`) names: its current context's cluster's ``server`` (the only
    cluster when there is no current context); the port 443 when the URL has none. ``ValueError``
    naming what is missing."""
    try:
        config = yaml.safe_load(kubeconfig) or {}
    except yaml.YAMLError as e:
        raise ValueError(f"{KUBELET_KUBECONFIG} is not YAML: {e}") from None
    clusters = {c.get("name"): c.get("cluster") or {} for c in config.get("clusters") or []}
    contexts = {c.get("name"): c.get("context") or {} for c in config.get("contexts") or []}
    current = contexts.get(config.get("current-context"), {}).get("cluster")
    cluster = clusters.get(current) if current in clusters else (next(iter(clusters.values())) if len(clusters) == 1 else None)
    server = (cluster or {}).get("server")
    if not server:
        raise ValueError(f"{KUBELET_KUBECONFIG} names no API server (clusters {sorted(map(str, clusters))}, "
                         f"current-context {config.get('current-context')!r})")
    url = urlsplit(server)
    if not url.hostname:
        raise ValueError(f"{KUBELET_KUBECONFIG}: server {server!r} has no host")
    return url.hostname, url.port or 443


def apiserver_in_node(site: FaultSite, node: str) -> tuple[list[str], int]:
    """``(addresses, port)`` of the API server as ``node``'s kubelet reaches it, read in the node:
    the server of :data:`KUBELET_KUBECONFIG` (:func:`kubelet_server`), its host resolved by the
    node's own resolver (``getent ahosts``: IPv4 and IPv6, as the kubelet may use either).
    ``RuntimeError`` when the name resolves to nothing."""
    host, port = kubelet_server(site.node_exec("cat", KUBELET_KUBECONFIG, node=node))
    answer = site.node_exec("sh", "-c", 'getent ahosts "$1" || true', "sh", host, node=node)
    addresses = sorted({line.split()[0] for line in answer.splitlines() if line.split()}, key=lambda a: (":" in a, a))
    if not addresses:
        raise RuntimeError(f"node {node}: the API server's host {host} (from {KUBELET_KUBECONFIG}) resolves to no address "
                           "there (getent ahosts)")
    return addresses, port


@contextmanager
def node_partitioned(site: FaultSite, node: str, mode: str, recovery_timeout_s: float = RECOVERY_TIMEOUT_S,
                     window_s: float = WINDOW_S, *, restart_kubelet: bool = False) -> Iterator[FaultWindow]:
    """The worker ``node`` cut off from the API server for the ``with`` block (NF-8):
    ``mode`` ``reject`` or ``drop`` (see the module doc). The API server's addresses: on the
    suite's kind cluster the control plane's on its Docker network (``docker inspect``), through
    the node agent read in the node (:func:`apiserver_in_node`). The undo (every rule deleted) is
    armed on the node first. Through the agent the cut also cuts the exec (the kubelet authorizes
    each exec at the API server), so the node ends the partition itself at the planned end,
    ``window_s`` (s) after the inject (``cuts_channel``: ``window.undone_at`` is then when it did,
    from the node's journal); through ``docker exec`` the suite heals it at the end of the block
    and the armed undo only guards it, ``window_s`` + 30 s after the inject. ``restart_kubelet``:
    the heal (and the armed undo) restarts the kubelet first, while a rule still cuts it
    (:func:`node_partitioned_kubelet_restarted`)."""
    access = getattr(site, "access", None)
    cuts_channel = access is not None and access.name != "docker"
    if not cuts_channel:
        addresses, port = node_addresses(cast("Kind", site.kind).control_plane), APISERVER_PORT
    else:
        addresses, port = apiserver_in_node(site, node)
    rules = [partition_rule(a, mode, port) for a in addresses]

    def cut() -> None:
        for command, rule in rules:
            site.node_exec(command, "-I", *rule, node=node)

    # every copy of every rule, so a retried inject leaves nothing behind; then none may be left
    removes = "; ".join(f"while {command} -D {' '.join(rule)} 2>/dev/null; do :; done" for command, rule in rules)
    listed = "; ".join(f"{command} -S OUTPUT" for command in sorted({c for c, _ in rules}))
    undo = removes
    if restart_kubelet:  # only while still cut: a heal retried after the armed one restarts nothing
        present = " || ".join(f"{command} -C {' '.join(rule)} 2>/dev/null" for command, rule in rules)
        undo = f"if {present}; then systemctl restart kubelet; fi; {removes}"

    def heal() -> None:
        site.node_exec("sh", "-c", f"{undo}; ! ( {listed} ) | grep -q -- {PARTITION_COMMENT}", node=node,
                       timeout=SYSTEMCTL_TIMEOUT_S)  # long enough for restart_kubelet's systemctl restart

    with fault(site, f"partition-{mode}-restart" if restart_kubelet else f"partition-{mode}", node, cut, heal,
               recovery_timeout_s, node_undo=("sh", "-c", undo), window_s=window_s, cuts_channel=cuts_channel,
               detached=False) as window:  # cut() runs in the exec: the window starts right after the arm
        yield window


def node_partitioned_kubelet_restarted(site: FaultSite, node: str, mode: str, recovery_timeout_s: float = RECOVERY_TIMEOUT_S,
                                       window_s: float = WINDOW_S):
    """:func:`node_partitioned` healed through a kubelet restart (KB-7; module doc): at the end of
    the ``with`` block (through the agent: at the planned end, ``window_s`` s after the inject) the
    kubelet is restarted while the rules still cut it, then the rules are deleted, so the new
    kubelet's first word to the API server follows a start with the API's status of its pods as
    the cut left it. Window ``partition-<mode>-restart``."""
    return node_partitioned(site, node, mode, recovery_timeout_s, window_s, restart_kubelet=True)


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
def node_shutdown(site: FaultSite, node: str, recovery_timeout_s: float = RECOVERY_TIMEOUT_S,
                  window_s: float = WINDOW_S) -> Iterator[FaultWindow]:
    """A graceful shutdown of ``node`` announced for the ``with`` block and cancelled at its end
    (NF-9); see the module doc. Check :func:`shutdown_capability` first. ``window_s``: the planned
    shutdown (s). Through the node agent the shutdown kills the agent's pod too, and the node
    admits no new one until the cancel (:func:`~e2e.cluster.nodeaccess.cut_by_shutdown`): the
    cancel armed on the node ends it at the planned end, ``window_s`` after the inject
    (``cuts_channel``), and the suite's undo follows once the agent runs there again."""
    def cancel() -> None:
        prepare_for_shutdown(site, node, False)
        failed: list[Any] = site.kube.core.list_namespaced_pod(  # the API sets metadata.name
            "kube-system", field_selector=f"spec.nodeName={node},status.phase=Failed").items
        for pod in failed:
            site.kube.core.delete_namespaced_pod(pod.metadata.name, "kube-system")
        if not holds_inhibitor_lock(site, node):
            site.node_exec("systemctl", "restart", "kubelet", node=node, timeout=SYSTEMCTL_TIMEOUT_S)

    with fault(site, "node-shutdown", node, lambda: prepare_for_shutdown(site, node, True), cancel,
               recovery_timeout_s, node_undo=("busctl", "emit", LOGIN1_PATH, LOGIN1_MANAGER, "PrepareForShutdown", "b",
                                              "false"), window_s=window_s,
               cuts_channel=cut_by_shutdown(getattr(site, "access", None))) as window:
        yield window



# -- reboot ---------------------------------------------------------------------------------
# Seconds `docker stop` lets the node's systemd halt (kind's stop signal SIGRTMIN+3: every unit
# stopped in order, then what is left SIGTERMed and SIGKILLed) before Docker SIGKILLs what remains
# (node_rebooted's default halt_timeout_s; a machine's systemd would wait up to 90 s).
REBOOT_HALT_S = 30
# Seconds a rebooted node gets to boot: kind's entrypoint done (systemd is PID 1), then the kubelet
# started (every ExecStartPre, the node guard's too, succeeded).
BOOT_TIMEOUT_S = 120
BOOT_POLL_S = 0.5
# The boot ID of each boot of a rebooted node (/run is a tmpfs: gone with every stop), bind-mounted
# over the kernel's before the kubelet starts by a kubelet drop-in the reboot writes for that boot.
KERNEL_BOOT_ID = "/proc/sys/kernel/random/boot_id"
BOOT_ID_FILE = "/run/ple2e-boot-id"
BOOT_ID_DROPIN = "/etc/systemd/system/kubelet.service.d/04-ple2e-boot-id.conf"
BOOT_ID_DROPIN_TEXT = f"""# Written by pod-lifecycle-e2e (e2e/faults/node.py node_rebooted); removed once the kubelet started.
[Service]
ExecStartPre=/bin/sh -c 'test -s {BOOT_ID_FILE} || {{ cat /proc/sys/kernel/random/uuid > {BOOT_ID_FILE} && mount --bind {BOOT_ID_FILE} {KERNEL_BOOT_ID}; }}'
"""


def guard_state(site: FaultSite, node: str) -> list[str]:
    """The node guard of ``node`` as it is now (:mod:`e2e.cluster.egress`): its ``unreachable``
    routes, the rules of its chain and the jumps to it, one line each, sorted."""
    chain = NODE_CHAIN
    script = "; ".join([
        "ip -4 route show type unreachable", "ip -6 route show type unreachable",
        *(f"{ipt} -w -S {chain} 2>/dev/null; {ipt} -w -S OUTPUT | grep -- '-j {chain}'; {ipt} -w -S FORWARD | grep -- '-j {chain}'"
          for ipt in ("iptables", "ip6tables")),
        "true"])
    return sorted(line.strip() for line in site.node_exec("sh", "-c", script, node=node).splitlines() if line.strip())


def _node_state(node: str) -> tuple[bool, str]:
    """``(running, StartedAt)`` of the ``node`` container (``docker inspect``)."""
    running, started = docker("inspect", "-f", "{{.State.Running}} {{.State.StartedAt}}", node).split()
    return running == "true", started


def _pid1(node: str) -> str:
    try:
        return docker("exec", node, "cat", "/proc/1/comm").strip()
    except RuntimeError:  # not running (yet)
        return ""


def _active(site: FaultSite, node: str, unit: str) -> str:
    try:
        return site.node_exec("systemctl", "is-active", unit, node=node).strip()
    except RuntimeError as e:  # exits non-zero unless active: its output is in the message
        return str(e).rsplit(":", 1)[-1].strip() or "unknown"


@contextmanager
def node_rebooted(site: FaultSite, node: str, recovery_timeout_s: float = RECOVERY_TIMEOUT_S,
                  halt_timeout_s: float = REBOOT_HALT_S) -> Iterator[FaultWindow]:
    """The worker ``node`` goes down at the start of the ``with`` block and boots at its end: an
    empty block is a reboot, a block that waits a node that stays off that long (``window.
    injected_at``: it is off; ``undone_at``: it booted, its kubelet running). ``halt_timeout_s``:
    seconds its systemd gets to halt before Docker SIGKILLs what is left (0: a power cut or a hard
    reset — nothing is stopped in order). ``ValueError`` for the control plane (its API server would
    go with it: reboot a worker).

    What a reboot is here: ``docker stop`` of the node container, then ``docker start``. The stop
    sends kind's stop signal (SIGRTMIN+3) to the node's systemd, which halts as a rebooting machine
    does — every unit stopped in order (the kubelet, containerd), then the processes left (the
    containers) SIGTERMed and SIGKILLed, Docker SIGKILLing what remains after
    :data:`REBOOT_HALT_S`; the kubelet's graceful node shutdown is not told (no logind
    ``PrepareForShutdown``: for that first half, :func:`node_shutdown`). The start boots it again:
    kind's entrypoint, systemd, containerd, the kubelet. As on a real machine ``/run`` (a tmpfs) is
    empty — no container or pod sandbox survives, containerd's tasks and shims are gone — while
    ``/var`` (a volume) keeps containerd's records, so the kubelet finds every pod's sandbox dead
    and makes a new one (``SandboxChanged``), its containers restarted (restart count + 1). The
    node's Lease stops: it goes ``Unknown`` when it stays off past the node monitor's grace (on
    v1.37.2 with a 20 s grace: a halt under 1 s when the pods end on SIGTERM, about 6 s from the
    start to ``KubeletReady``), else it
    stays Ready as the kubelet posts ``KubeletReady`` on its start. Why a stop and a start: a
    ``docker restart`` is the same two steps with no room between them (the block is that room,
    and the undo starts the node only if it is not running); a ``systemctl reboot`` inside the
    node would end the container's init and leave the start to Docker's restart policy (kind's
    ``on-failure:1``); ``docker pause`` keeps every process and its state (:func:`node_paused`).

    One thing a container cannot have of a reboot is a new kernel: its boot ID
    (``/proc/sys/kernel/random/boot_id``, what the kubelet reports as ``status.nodeInfo.bootID``
    and compares to emit its ``Rebooted`` event) is the host's. So the reboot writes a kubelet
    drop-in (:data:`BOOT_ID_DROPIN`) before the stop that, on this boot only, bind-mounts a new
    random ID over it before the kubelet starts, and removes the drop-in once the kubelet runs:
    each reboot gives the node a new boot ID, as the kernel would.

    Safe, each checked after the boot (the undo fails with a ``RuntimeError`` naming what differs
    — retried once, then the cluster is replaced as broken and ``ClusterBroken`` raised — when one
    does not hold; a node without the guard is not rebooted at all, a ``RuntimeError``):

    - **the offline node guard** (:mod:`e2e.cluster.egress`): its kubelet drop-in runs it before
      every kubelet start, so on the boot too, before any pod (a fresh ``/run``: no container
      runs before the kubelet starts one); its routes and rules after the boot must equal those
      before (:func:`guard_state`);
    - **the static CNI** (several nodes, offline image): the node's conflist is a mount, kept; the
      routes to the other nodes' pod subnets and the masquerade rule live in the node's network
      namespace, new after the boot, so they are set again (:meth:`e2e.cluster.kind.Kind.wire_nodes`,
      on every node: the others' routes follow the node's address should Docker give it another) as
      soon as systemd runs — until then a pod there reaching the other node's pods meets the node
      guard's ``unreachable`` route, nothing leaves (on v1.37.2: the routes 0.4 s after the
      kubelet's start, its first sandbox 1.6 s after; the timeline marks both moments);
    - **the host ports**: those Docker publishes for the node (``docker port``; kind publishes
      its ports on the control plane, on 127.0.0.1) must be the same after the boot.

    Then the health check of every fault (every node Ready with its Lease renewed after the boot,
    every kube-system pod Running and ready)."""
    require_docker(site, "node-reboot", "docker stop and start of the whole node container")
    kind = cast("Kind", site.kind)  # faults run on kind clusters
    if node == kind.control_plane:
        raise ValueError(f"node_rebooted reboots a worker: {node} is the control plane, whose API server the test, "
                         "its recorder and the health check talk to")
    before: dict[str, Any] = {}

    def halt() -> None:
        before.update(state=_node_state(node), ports=docker("port", node), guard=guard_state(site, node))
        if not before["guard"]:
            raise RuntimeError(f"node {node} has no node guard to keep (e2e.cluster.egress): not a suite's cluster?")
        site.node_exec("sh", "-c", 'printf "%s" "$1" > "$2"', "sh", BOOT_ID_DROPIN_TEXT, BOOT_ID_DROPIN, node=node)
        docker("stop", "-t", f"{halt_timeout_s:g}", node, timeout=halt_timeout_s + DOCKER_TIMEOUT_S)

    def boot() -> None:
        if "state" not in before:
            return  # nothing was done
        running, started = _node_state(node)
        if running and started == before["state"][1] and _active(site, node, "kubelet") == "active":
            # never stopped (a Ctrl-C before the stop took): the node as it was, but for the drop-in
            site.node_exec("rm", "-f", BOOT_ID_DROPIN, node=node)
            return
        if running and started == before["state"][1]:  # halting still: let it end, then boot
            wait_until(f"{node} halted", lambda: not _node_state(node)[0], halt_timeout_s + DOCKER_TIMEOUT_S, BOOT_POLL_S)
            running = False
        if not running:
            docker("start", node)
        wait_until(f"{node} booted (systemd PID 1)", lambda: _pid1(node) == "systemd", BOOT_TIMEOUT_S, BOOT_POLL_S)
        site.mark(time.time(), f"{node} booting (systemd runs)")
        kind.wire_nodes()
        site.mark(time.time(), f"{node}: pod routes set again")
        wait_until(f"the kubelet on {node} started", lambda: _active(site, node, "kubelet") == "active", BOOT_TIMEOUT_S,
                   BOOT_POLL_S)
        site.node_exec("sh", "-c", f"rm -f {BOOT_ID_DROPIN} && systemctl daemon-reload", node=node)
        problems = []
        guard = guard_state(site, node)
        if guard != before["guard"]:
            problems.append(f"its node guard differs: before {before['guard']}, after {guard}")
        ports = docker("port", node)
        if ports != before["ports"]:
            problems.append(f"its published ports differ: before {before['ports']!r}, after {ports!r}")
        if problems:
            raise RuntimeError(f"node {node} after its reboot: " + "; ".join(problems))

    with fault(site, "node-reboot", node, halt, boot, recovery_timeout_s) as window:
        yield window
