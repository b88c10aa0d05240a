"""Faults of a node's own components, injected through the site's node access (``docker exec``
into a kind node, or the node agent: e2e.cluster.nodeaccess) (CASES-faults.md §3b): each is a
:func:`e2e.faults.core.fault` (arm the undo on the node, inject, yield the window, always undo,
health check, broken cluster replaced).

=========================  ==========================================================  ==========================
fault (window name)        inject                                                      undo
=========================  ==========================================================  ==========================
``kubelet-stop``           ``systemctl stop kubelet``                                  ``systemctl start kubelet``
``kubelet-restart``        ``systemctl restart kubelet``                               ``systemctl start kubelet`` (no-op when active)
``kubelet-sigkill``        ``systemctl kill -s KILL kubelet`` (``Restart=always``,     ``systemctl start kubelet``
                           ``RestartSec=1s``: systemd starts it again)
``containerd-restart``     ``systemctl restart containerd`` (shims survive:            ``systemctl start containerd``
                           ``KillMode=process``)
``containerd-stop``        ``systemctl stop containerd``                               ``systemctl start containerd``
``apiserver-down``         ``mv`` the static pod manifest *out of*                     ``mv`` it back
                           ``/etc/kubernetes/manifests`` (a file left inside, even
                           ``.bak``, would still run)
=========================  ==========================================================  ==========================

kind's units: ``kubelet.service`` and ``containerd.service`` have ``Restart=always`` and
``KillMode=process`` (kind v0.33.0 ``images/base/files/etc/systemd/system/*.service``). Every
function takes the test (a fault site: a :class:`e2e.run.scenario.Scenario`) and the node
container (default: the control plane); they refuse the shared default profile.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Iterator

from ..cluster.nodeaccess import DETACH_S, cut_by_stop, detached_argv, undo_unit
from .core import RECOVERY_TIMEOUT_S, WINDOW_S, FaultRefused, FaultSite, FaultWindow, fault

MANIFESTS = "/etc/kubernetes/manifests"
APISERVER_MANIFEST = f"{MANIFESTS}/kube-apiserver.yaml"
# Where the manifest waits during the outage: outside the kubelet's static pod directory.
APISERVER_PARKED = "/etc/kubernetes/kube-apiserver.yaml.parked"
# Seconds a systemctl call may take (a stop waits for the unit's processes).
SYSTEMCTL_TIMEOUT_S = 60


def node_of(site: FaultSite, node: str | None) -> str:
    """``node``, or the site's control-plane node container (a kind cluster); ``FaultRefused``
    without a node on a ``--kubeconfig`` cluster (the node agent never enters the control plane)."""
    if node:
        return node
    if site.kind is None:
        raise FaultRefused("name the node: on a --kubeconfig cluster a fault has no default node "
                           "(the node agent never enters a control-plane node)")
    return site.kind.control_plane


def _systemctl(site: FaultSite, node: str, *args: str) -> None:
    site.node_exec("systemctl", *args, node=node, timeout=SYSTEMCTL_TIMEOUT_S)


def _inject_unit(site: FaultSite, name: str, node: str, *args: str) -> None:
    """``systemctl <args>`` in ``node``; through the node agent detached (a transient timer
    :data:`~e2e.cluster.nodeaccess.DETACH_S` s later, waited for here): stopping or restarting the
    kubelet or containerd cuts the exec that asked for it before it could answer."""
    access = getattr(site, "access", None)
    if access is None or access.name == "docker":
        _systemctl(site, node, *args)
        return
    site.node_exec(*detached_argv(undo_unit(name, node, role="inject"), ("systemctl", *args), DETACH_S), node=node)
    time.sleep(DETACH_S)


@contextmanager
def _unit_fault(site: FaultSite, name: str, node: str | None, inject: tuple[str, ...], unit: str,
                recovery_timeout_s: float, window_s: float) -> Iterator[FaultWindow]:
    """``systemctl <inject>`` for the block, ``systemctl start <unit>`` after it. A stop of a unit
    the node access's channel goes through (the kubelet, containerd through the agent:
    :func:`~e2e.cluster.nodeaccess.cut_by_stop`) keeps the node out of reach for the block: its
    armed undo ends it at the planned end, ``window_s`` after the inject (``cuts_channel``)."""
    node = node_of(site, node)
    cuts = inject[0] == "stop" and cut_by_stop(getattr(site, "access", None), unit)
    with fault(site, name, node, lambda: _inject_unit(site, name, node, *inject), lambda: _systemctl(site, node, "start", unit),
               recovery_timeout_s, node_undo=("systemctl", "start", unit), window_s=window_s, cuts_channel=cuts) as window:
        yield window


def kubelet_stopped(site: FaultSite, node: str | None = None, recovery_timeout_s: float = RECOVERY_TIMEOUT_S,
                    window_s: float = WINDOW_S):
    """The kubelet stopped for the ``with`` block (heartbeats stop, containers keep running). ``window_s``: the planned
    stop (s). Through the node agent the stop cuts the exec channel, so the undo armed on the node starts the kubelet
    then (``window.undone_at``: when, from the node's journal); through ``docker exec`` the suite starts it at the end
    of the block, and the armed undo fires only ``window_s`` + 30 s after the inject."""
    return _unit_fault(site, "kubelet-stop", node, ("stop", "kubelet"), "kubelet", recovery_timeout_s, window_s)


def kubelet_restarted(site: FaultSite, node: str | None = None, recovery_timeout_s: float = RECOVERY_TIMEOUT_S,
                      window_s: float = WINDOW_S):
    """One ``systemctl restart kubelet`` at the start of the block (NF-5). ``window_s``: the longest
    the block lasts (s); the undo armed on the node fires that long (+ 30 s) after the inject."""
    return _unit_fault(site, "kubelet-restart", node, ("restart", "kubelet"), "kubelet", recovery_timeout_s, window_s)


def kubelet_killed(site: FaultSite, node: str | None = None, recovery_timeout_s: float = RECOVERY_TIMEOUT_S,
                   window_s: float = WINDOW_S):
    """The kubelet SIGKILLed at the start of the block; systemd restarts it after 1 s (NF-5). ``window_s``: the longest
    the block lasts (s); the undo armed on the node fires that long (+ 30 s) after the inject."""
    return _unit_fault(site, "kubelet-sigkill", node, ("kill", "-s", "KILL", "kubelet"), "kubelet", recovery_timeout_s,
                       window_s)


def containerd_restarted(site: FaultSite, node: str | None = None, recovery_timeout_s: float = RECOVERY_TIMEOUT_S,
                         window_s: float = WINDOW_S):
    """One ``systemctl restart containerd`` at the start of the block (NF-6 (a)). ``window_s``: the longest
    the block lasts (s); the undo armed on the node fires that long (+ 30 s) after the inject."""
    return _unit_fault(site, "containerd-restart", node, ("restart", "containerd"), "containerd", recovery_timeout_s,
                       window_s)


def containerd_stopped(site: FaultSite, node: str | None = None, recovery_timeout_s: float = RECOVERY_TIMEOUT_S,
                       window_s: float = WINDOW_S):
    """containerd stopped for the ``with`` block (NF-6 (b)). ``window_s``: the planned stop (s). Through the node
    agent the stop cuts the exec channel, so the undo armed on the node starts containerd then (``window.undone_at``:
    when, from the node's journal); through ``docker exec`` the suite starts it at the end of the block, and the armed
    undo fires only ``window_s`` + 30 s after the inject."""
    return _unit_fault(site, "containerd-stop", node, ("stop", "containerd"), "containerd", recovery_timeout_s,
                       window_s)


@contextmanager
def apiserver_down(site: FaultSite, node: str | None = None, recovery_timeout_s: float = RECOVERY_TIMEOUT_S,
                   window_s: float = WINDOW_S) -> Iterator[FaultWindow]:
    """The API server's static pod manifest moved out of the kubelet's directory for the
    block: the kubelet stops the pod within seconds (inotify), and starts it again once the
    manifest is back (NF-7). ``window_s``: the longest the block lasts (s); the undo armed on
    the node fires that long (+ 30 s) after the inject."""
    node = node_of(site, node)

    def move_out() -> None:
        site.node_exec("mv", APISERVER_MANIFEST, APISERVER_PARKED, node=node)

    def move_back() -> None:
        # idempotent: after a failed first attempt the manifest may already be back
        site.node_exec("sh", "-c", f"test -f {APISERVER_MANIFEST} || mv {APISERVER_PARKED} {APISERVER_MANIFEST}", node=node)

    with fault(site, "apiserver-down", node, move_out, move_back, recovery_timeout_s,
               node_undo=("sh", "-c", f"test -f {APISERVER_MANIFEST} || mv {APISERVER_PARKED} {APISERVER_MANIFEST}"),
               window_s=window_s) as window:
        yield window
