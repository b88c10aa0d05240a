"""Fault injectors (CASES-faults.md §3b, §5): one protocol (:mod:`e2e.faults.core`: inject,
yield a :class:`FaultWindow`, always undo, health check, a broken cluster replaced), the node
components (:mod:`e2e.faults.components`) and a NoExecute test taint (:mod:`e2e.faults.taints`).
Scenarios say *what* fault; the shell lines live here."""

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
