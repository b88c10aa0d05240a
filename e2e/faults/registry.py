"""Faults of the suite's registry container (:mod:`e2e.cluster.registry`), each a
:func:`e2e.faults.core.fault` (inject, window, always undo, health check):

=========================  ==========================================================  ==========================
fault (window name)        inject                                                      undo
=========================  ==========================================================  ==========================
``registry-stop``          ``docker stop -t 1`` of the registry container (its         ``docker start``, then the
                           process ends: open connections are closed, new ones         registry answers ``/v2/``
                           refused)                                                    again
``registry-pause``         ``docker pause`` (the cgroup freezer: connections stay      ``docker unpause``
                           open, nothing is answered — a stalled registry)
``registry-throttle``      a token-bucket qdisc on the registry's own ``eth0``         ``tc qdisc del`` of it
                           (its netns, entered from the host with ``nsenter``):
                           what it sends to the nodes leaves at ``rate``
=========================  ==========================================================  ==========================

They touch the registry only, never a node's own state: they may run on the shared default
cluster (``shared_ok``), and the health check is the cluster's plus the registry's own answer.

**The registry as a pod** (:class:`~e2e.cluster.registry.PodRegistry`, a ``--kubeconfig`` cluster
entered through the node agent): each fault is done in the registry's node on its process
(:meth:`~e2e.cluster.registry.PodRegistry.pid`: ``crictl inspect``), through ``site.node_exec``:

- ``registry-throttle``: the same ``tc`` qdisc, ``nsenter -t <pid> -n`` into the pod's network
  namespace from the node (the node's own ``tc``: :data:`e2e.cluster.nodeaccess.NSENTER`), on the pod's ``eth0`` (the CRI's interface name);
- ``registry-pause``: the cgroup freezer of the registry container's own cgroup, the one
  ``docker pause`` writes (:data:`POD_FREEZE_SCRIPT`: ``cgroup.freeze`` on v2, ``freezer.state`` on v1);
- ``registry-stop``: **not** a stop of the process. Deleting the pod (or scaling a Deployment to
  0) and making it again would give a new pod IP and an empty registry (its storage is the
  container's), while ``docker start`` brings back the same container at the same address with
  its images; and the kubelet restarts a killed container at once. So the pod's network goes
  dark instead (:data:`POD_STOP_SCRIPT`): an iptables ``DROP`` of everything the registry sends
  (OUTPUT of its network namespace), its qdisc deleted (a throttle's queue is discarded, as it is
  when ``docker stop`` ends the namespace) and its established connections aborted (``ss -K``,
  whose reset is dropped too). What the nodes see matches ``docker stop`` for an open pull (no
  more bytes, no FIN, no reset; after the start a keepalive probe finds no socket: reset by the
  same address) and for a connection after the start (a new one, to the registry holding its
  images); a new connection *during* the window differs: its SYN is answered by nothing (a
  timeout) until the pod's readiness probe fails, then kube-proxy REJECTs it (the Service has no
  endpoint: connection refused), where ``docker stop`` gives "no route to host" once the node's
  ARP for the gone container fails. The open pull keeps its path: that REJECT matches
  ``--ctstate NEW`` only (pkg/proxy/iptables) and kube-proxy clears conntrack entries of UDP only
  (pkg/proxy/conntrack/cleanup.go). The undo
  deletes the ``DROP`` (:data:`POD_START_SCRIPT`); no qdisc is put back, as ``docker start``
  makes a namespace without one.

None of them cuts the node agent's exec channel (API server → kubelet → containerd → the agent's
host-network pod: the registry pod is none of these), so no undo is armed on the node; what a
killed run leaves (the ``DROP``, a qdisc, a frozen container) is inside the registry pod and goes
with it when ``make clean`` deletes the run's namespace.
"""

from __future__ import annotations

import subprocess
from contextlib import contextmanager
from typing import Callable, Iterator

from ..cluster.registry import PORT, PodRegistry, Registry, RegistryError, container_inspect_script, inspected_pid
from .core import RECOVERY_TIMEOUT_S, FaultSite, FaultWindow, fault, health

# The registry's interface on the suite's network, inside its container.
IFACE = "eth0"
# tbf: bucket size and queue latency of the throttle (a few full-size frames; a queue long
# enough that nothing is dropped at the rate asked for: the transfer is slowed, not cut).
BURST = "32kbit"
LATENCY = "2s"


def _run(*cmd: str, timeout: float = 60) -> subprocess.CompletedProcess:
    r = subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise RegistryError(f"{' '.join(cmd)}: {r.stderr.strip() or r.stdout.strip()}")
    return r


# The comment of the pod registry's stop rule (POD_STOP_SCRIPT).
STOP_COMMENT = "ple2e-registry-stop"
_DROP = f"OUTPUT -m comment --comment {STOP_COMMENT} -j DROP"

# The pod path's registry-stop, run in the registry's node as ``sh -c SCRIPT sh <pid>``: the
# registry's network namespace drops all it sends, loses its throttle's queue and aborts its
# established connections; exits 1 naming a connection still there (a kernel without
# CONFIG_INET_DIAG_DESTROY cannot abort one: then the pull would resume after the start).
POD_STOP_SCRIPT = f"""set -u
p=$1
nsenter -t "$p" -n -- iptables -w -I {_DROP} || exit 1
nsenter -t "$p" -n -- tc qdisc del dev {IFACE} root 2>/dev/null
nsenter -t "$p" -n -- ss -K -tn state established '( sport = :{PORT} )' >/dev/null || exit 1
left=$(nsenter -t "$p" -n -- ss -Htn state established '( sport = :{PORT} )')
[ -z "$left" ] || {{ echo "ss -K left connections of the registry open (kernel without CONFIG_INET_DIAG_DESTROY?): $left" >&2; exit 1; }}
echo stopped"""
# The undo of POD_STOP_SCRIPT (``sh -c SCRIPT sh <pid>``): every DROP of it deleted; idempotent.
POD_START_SCRIPT = f"""set -u
p=$1
while nsenter -t "$p" -n -- iptables -w -C {_DROP} 2>/dev/null; do
  nsenter -t "$p" -n -- iptables -w -D {_DROP} || exit 1
done
echo started"""
# The pod path's registry-pause, ``sh -c SCRIPT sh <pid> <freeze|thaw|state>`` in the node: the
# freezer of the cgroup whose cgroup.procs holds the process (v2 ``cgroup.freeze`` 1/0, v1
# ``freezer.state`` FROZEN/THAWED); prints ``<cgroup> <state>``, exit 2 when no cgroup holds it. v2 is told by
# the unified root's cgroup.controllers.
POD_FREEZE_SCRIPT = """set -u
p=$1
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then root=/sys/fs/cgroup f=cgroup.freeze on=1 off=0
else root=/sys/fs/cgroup/freezer f=freezer.state on=FROZEN off=THAWED; fi
d=$(find "$root" -name cgroup.procs -exec grep -lx "$p" {} + 2>/dev/null | head -n 1)
[ -n "$d" ] || { echo "process $p is in no cgroup below $root" >&2; exit 2; }
d=${d%/cgroup.procs}
case $2 in
freeze) echo $on > "$d/$f" || exit 1 ;;
thaw) echo $off > "$d/$f" || exit 1 ;;
state) ;;
*) echo "mode must be freeze, thaw or state: $2" >&2; exit 2 ;;
esac
echo "$d $(cat "$d/$f")"
"""

FREEZE_MODES = ("freeze", "thaw", "state")


def pod_stop_argv(pid: int) -> list[str]:
    """The node command of :data:`POD_STOP_SCRIPT` for the registry process ``pid``."""
    return ["sh", "-c", POD_STOP_SCRIPT, "sh", str(pid)]


def pod_start_argv(pid: int) -> list[str]:
    """The node command of :data:`POD_START_SCRIPT` for the registry process ``pid``."""
    return ["sh", "-c", POD_START_SCRIPT, "sh", str(pid)]


def pod_freeze_argv(pid: int, mode: str) -> list[str]:
    """The node command of :data:`POD_FREEZE_SCRIPT` for the registry process ``pid`` in ``mode``
    (one of :data:`FREEZE_MODES`; ``ValueError`` for another)."""
    if mode not in FREEZE_MODES:
        raise ValueError(f"freeze mode must be one of {FREEZE_MODES}, not {mode!r}")
    return ["sh", "-c", POD_FREEZE_SCRIPT, "sh", str(pid), mode]


# What a killed run's registry fault left in the pod (``sh -c SCRIPT sh <pid>`` in its node): a
# line per fault still on — the stop's DROP, a throttle's tbf qdisc (a freeze: POD_FREEZE_SCRIPT state).
POD_STATE_SCRIPT = f"""set -u
p=$1
nsenter -t "$p" -n -- iptables -w -C {_DROP} 2>/dev/null && echo "network dark (iptables DROP {STOP_COMMENT})"
nsenter -t "$p" -n -- tc qdisc show dev {IFACE} | grep -q ' tbf ' && echo "throttled (tbf qdisc on {IFACE})"
true"""
# freezer.state / cgroup.freeze values of a frozen (or freezing) cgroup
FROZEN = ("FROZEN", "FREEZING", "1")


def left_in_pod(run: Callable[[str, list[str]], str], node: str, namespace: str, pod: str) -> list[str]:
    """The registry faults still on in registry pod ``namespace/pod`` on ``node`` (``run(node,
    argv)`` → stdout: a node command through the agent), a line each: network dark, throttled,
    frozen (with its cgroup); empty when none is. The errors of ``run``; :class:`RegistryError`
    when the pod's process cannot be found."""
    pid = inspected_pid(run(node, ["sh", "-c", container_inspect_script(namespace, pod)]), f"{namespace}/{pod} on {node}")
    lines = [line.strip() for line in run(node, ["sh", "-c", POD_STATE_SCRIPT, "sh", str(pid)]).splitlines() if line.strip()]
    cgroup, _, state = run(node, pod_freeze_argv(pid, "state")).strip().rpartition(" ")
    if state in FROZEN:
        lines.append(f"frozen ({cgroup} {state})")
    return lines


def _in_node(site: FaultSite, reg: PodRegistry, argv: list[str]) -> str:
    return site.node_exec(*argv, node=reg.node, timeout=60)


def _probe(site: FaultSite, reg: Registry):
    """The cluster's health (:func:`e2e.faults.core.health`, the other rooms' nodes left out) and
    the registry's answer to ``GET /v2/``."""
    def probe(kube) -> tuple[list[str], list[str]]:
        checks, problems = health(kube, elsewhere=getattr(site, "elsewhere", ()))
        status = reg.ping()
        (checks if status in (200, 401) else problems).append(f"registry {reg.name} GET /v2/ -> {status}")
        return checks, problems
    return probe


@contextmanager
def registry_stopped(site: FaultSite, reg: Registry, recovery_timeout_s: float = RECOVERY_TIMEOUT_S) -> Iterator[FaultWindow]:
    """The registry gone for the window: ``docker stop`` / ``docker start`` of its container; for a
    pod its network dark (:data:`POD_STOP_SCRIPT`, the module doc says what differs), then lit again."""
    if isinstance(reg, PodRegistry):
        def inject() -> None:
            _in_node(site, reg, pod_stop_argv(reg.pid()))

        def undo() -> None:
            _in_node(site, reg, pod_start_argv(reg.pid()))
            reg.wait_ready()
    else:
        def inject() -> None:
            _run("docker", "stop", "-t", "1", reg.name)

        def undo() -> None:
            _run("docker", "start", reg.name)
            reg.wait_ready()  # the published port is read again: Docker may give a new one

    with fault(site, "registry-stop", reg.name, inject, undo, recovery_timeout_s, shared_ok=True,
               probe=_probe(site, reg)) as window:
        yield window


@contextmanager
def registry_paused(site: FaultSite, reg: Registry, recovery_timeout_s: float = RECOVERY_TIMEOUT_S) -> Iterator[FaultWindow]:
    """The registry frozen for the window (connections stay open, nothing is answered): ``docker
    pause`` / ``unpause`` of its container; for a pod the freezer of its container's cgroup in the
    node (:data:`POD_FREEZE_SCRIPT`; the process keeps its PID while frozen)."""
    if isinstance(reg, PodRegistry):
        pid: list[int] = []

        def inject() -> None:
            pid.append(reg.pid())
            _in_node(site, reg, pod_freeze_argv(pid[0], "freeze"))

        def undo() -> None:
            if pid:  # nothing was frozen when the PID could not be read
                _in_node(site, reg, pod_freeze_argv(pid[0], "thaw"))
    else:
        def inject() -> None:
            _run("docker", "pause", reg.name)

        def undo() -> None:
            _run("docker", "unpause", reg.name)

    with fault(site, "registry-pause", reg.name, inject, undo, recovery_timeout_s, shared_ok=True,
               probe=_probe(site, reg)) as window:
        yield window


def tc_command(pid: int, *args: str) -> list[str]:
    """``tc`` run in the network namespace of process ``pid`` (the registry's): on the host for a
    container, in the registry's node for a pod."""
    return ["nsenter", "-t", str(pid), "-n", "tc", *args]


@contextmanager
def registry_throttled(site: FaultSite, reg: Registry, rate: str,
                       recovery_timeout_s: float = RECOVERY_TIMEOUT_S) -> Iterator[FaultWindow]:
    """What the registry sends leaves at ``rate`` (tc's units: ``4mbit``…) for the window. The
    process is looked up at each step: a registry stopped and started inside the window has a new
    network namespace, without the qdisc (the undo then has nothing to remove; a pod registry's
    stop deletes the qdisc itself). ``tc`` runs on the host for a container, in the registry's
    node (``site.node_exec``) for a pod."""
    def tc(pid: int, *args: str) -> str:
        argv = tc_command(pid, *args)
        return _in_node(site, reg, argv) if isinstance(reg, PodRegistry) else _run(*argv).stdout

    def inject() -> None:
        tc(reg.pid(), "qdisc", "replace", "dev", IFACE, "root", "tbf", "rate", rate, "burst", BURST, "latency", LATENCY)

    def undo() -> None:
        pid = reg.pid()
        if pid and "tbf" in tc(pid, "qdisc", "show", "dev", IFACE):
            tc(pid, "qdisc", "del", "dev", IFACE, "root")

    with fault(site, "registry-throttle", reg.name, inject, undo, recovery_timeout_s, shared_ok=True,
               probe=_probe(site, reg)) as window:
        yield window
