"""Fault injectors (CASES-faults.md §3b, §5): one protocol (:mod:`e2e.faults.core`: inject,
yield a :class:`FaultWindow`, always undo, health check, a broken cluster replaced), the node
components (:mod:`e2e.faults.components`), a NoExecute test taint (:mod:`e2e.faults.taints`) and
whole worker nodes of two-node profiles (:mod:`e2e.faults.node`: frozen, cut off from the API
server, a graceful shutdown, a reboot; import them from there). Scenarios say *what* fault; the shell lines
live here.

Every fault is a context manager: ``with kubelet_stopped(sc) as window:`` injects, yields its
:class:`FaultWindow` (``injected_at``, ``undone_at``: host time, epoch s), **always** undoes, then
polls the cluster's health (:func:`check_health`; the report is attached to the test as
``recovery-<fault>.txt``). It raises :class:`ClusterBroken` when the cluster has not recovered
(its logs exported, a new one made for the next test of the profile) and :class:`FaultRefused`
on the shared ``default`` profile — every fault but the test taint needs a profile of its own
(``@pytest.mark.profile``, ``profiles/<name>.yaml``) and a ``serial`` test (alone on its cluster).

Arguments the faults share:

- ``site``: where the fault acts: the test's :class:`e2e.run.scenario.Scenario` (anything with
  what :class:`e2e.faults.core.FaultSite` names);
- ``node``: the kind node container to act on (kind names the Kubernetes node alike); for the
  node components ``None`` is the control plane;
- ``recovery_timeout_s``: seconds the cluster gets after the undo to pass the health check
  (default :data:`e2e.faults.core.RECOVERY_TIMEOUT_S`, 180 s);
- ``kube``: the cluster's API clients (:class:`e2e.cluster.kube.Kube`, ``sc.kube``).
"""

from .components import (
    apiserver_down,
    containerd_restarted,
    containerd_stopped,
    kubelet_killed,
    kubelet_restarted,
    kubelet_stopped,
)
from .core import ClusterBroken, FaultRefused, FaultWindow, RecoveryReport, check_health, fault, health
from .taints import TEST_TAINT, addons_tolerate, node_tainted, node_taints

__all__ = [
    "ClusterBroken", "FaultRefused", "FaultWindow", "RecoveryReport", "TEST_TAINT", "addons_tolerate",
    "apiserver_down", "check_health", "containerd_restarted", "containerd_stopped", "fault", "health",
    "kubelet_killed", "kubelet_restarted", "kubelet_stopped", "node_tainted", "node_taints",
]
