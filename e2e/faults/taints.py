"""A NoExecute test taint on a node, and the cluster add-ons that must tolerate it
(CASES-faults.md NF-3; DR-5 (b)).

:func:`node_tainted` is a fault (:func:`e2e.faults.core.fault`): the taint is added at the
start of the block and always removed — checked gone — at its end, then the health check runs.
It may run on the shared default cluster (``serial`` tests): it touches only the test's own
taint key, and the add-ons tolerate it for the block (:func:`addons_tolerate`), so nothing but
the test's pods is evicted.

Without that toleration CoreDNS (it tolerates only ``CriticalAddonsOnly`` and the control-plane
taint) and local-path-provisioner would be evicted by the taint-eviction controller too.
"""

from __future__ import annotations

import time
from contextlib import ExitStack, contextmanager
from typing import Iterator

from ..base.waiting import wait_until
from .core import RECOVERY_TIMEOUT_S, FaultSite, FaultWindow, fault

# The test taint of CASES-faults.md NF-3 (a key nobody else uses).
TEST_TAINT = {"key": "chaos.e2e/evict", "value": "1", "effect": "NoExecute"}
# The add-on Deployments of a kind cluster that must tolerate the test taint: (namespace, name).
ADDONS = (("kube-system", "coredns"), ("local-path-storage", "local-path-provisioner"))
# Seconds an add-on's rollout may take (a new pod: scheduling, container start on 2 busy cores).
ROLLOUT_TIMEOUT_S = 120


def node_taints(kube, node: str) -> list[dict]:
    """``spec.taints`` of ``node`` as the API's JSON (``[]`` when it has none)."""
    return ((kube.get("Node", node, None) or {}).get("spec") or {}).get("taints") or []


def rolled_out(dep: dict | None, generation: int) -> bool:
    """True when Deployment ``dep`` has observed ``generation`` (its ``metadata.generation``
    after a change) and every replica is updated and available."""
    if not dep:
        return False
    want = (dep.get("spec") or {}).get("replicas", 1)
    status = dep.get("status") or {}
    return ((status.get("observedGeneration") or 0) >= generation and status.get("updatedReplicas") == want
            and status.get("replicas") == want and status.get("availableReplicas") == want)


@contextmanager
def _tolerating(site: FaultSite, namespace: str, name: str, taint: dict) -> Iterator[None]:
    kube = site.kube
    original = (kube.get("Deployment", name, namespace) or {})["spec"]["template"]["spec"].get("tolerations") or []
    added = original + [{"key": taint["key"], "operator": "Exists", "effect": taint["effect"]}]

    def roll(tolerations: list[dict], what: str) -> None:
        site.mark(time.time(), f"{name}: {what}")
        done = kube.patch("Deployment", name, namespace, {"spec": {"template": {"spec": {"tolerations": tolerations}}}})
        generation = done["metadata"]["generation"]
        wait_until(f"{namespace}/{name} rolled out ({what})",
                   lambda: rolled_out(kube.get("Deployment", name, namespace), generation), ROLLOUT_TIMEOUT_S, 0.5)

    roll(added, f"tolerate {taint['key']}")
    try:
        yield
    finally:
        roll(original, "tolerations restored")


@contextmanager
def addons_tolerate(site: FaultSite, taint: dict = TEST_TAINT, addons=ADDONS) -> Iterator[None]:
    """Each add-on Deployment of ``addons`` that exists tolerates ``taint`` for the block; the
    original tolerations are restored afterwards (rollouts waited for both ways)."""
    with ExitStack() as stack:
        for namespace, name in addons:
            if site.kube.get("Deployment", name, namespace) is not None:
                stack.enter_context(_tolerating(site, namespace, name, taint))
        yield


@contextmanager
def node_tainted(site: FaultSite, node: str, taint: dict = TEST_TAINT,
                 recovery_timeout_s: float = RECOVERY_TIMEOUT_S) -> Iterator[FaultWindow]:
    """``taint`` on ``node`` for the block (``kubectl taint node <n> chaos.e2e/evict=1:NoExecute``);
    removed at the end and checked gone (``RuntimeError`` naming the command to remove it by
    hand otherwise, which the fault protocol retries once, then counts the cluster broken)."""
    kube = site.kube

    def add() -> None:
        kube.patch("Node", node, None, {"spec": {"taints": node_taints(kube, node) + [taint]}}, patch_type="merge")

    def remove() -> None:
        rest = [t for t in node_taints(kube, node) if t.get("key") != taint["key"]]
        kube.patch("Node", node, None, {"spec": {"taints": rest or None}}, patch_type="merge")
        if any(t.get("key") == taint["key"] for t in node_taints(kube, node)):
            raise RuntimeError(f"node {node} still has the taint {taint['key']}: "
                               f"remove it by hand (kubectl taint node {node} {taint['key']}-)")

    with fault(site, f"taint-{taint['effect']}", node, add, remove, recovery_timeout_s, shared_ok=True) as window:
        yield window
