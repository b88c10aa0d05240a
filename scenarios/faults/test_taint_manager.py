"""NF-3 — taint-manager arithmetic with a test taint (CASES-faults.md §2.2, §4 NF-3, C4, C8).

A NoExecute test taint (``chaos.e2e/evict=1:NoExecute``, e2e.faults.node_tainted) on the only
node, removed 15 s later: a pod without toleration is deleted at once, one tolerating 10 s 10 s
after the taint (a taint added through the API has no ``timeAdded``: the host time the patch
returned is the reference), one tolerating 30 s is cancelled by the removal, one tolerating for ever
stays. CoreDNS and local-path-provisioner tolerate the test key meanwhile. Also: a server dry
run of a pod with its own ``unreachable`` toleration (C4), and the FailedScheduling text of a
pod created under the taint (C8, CASES-faults.md §6 point 5 on 1.34.4), built from the nodes the
scheduler saw and the pod's pin (e2e.documented.faults.nf3_scheduling_from: on a cluster of
several nodes the others count too).
"""

from __future__ import annotations

import json
import time

import pytest

from e2e.documented import faults as doc
from e2e.faults import TEST_TAINT, addons_tolerate, node_tainted
from e2e.record.pods import condition
from e2e.record.recorder import Change
from e2e.run.scenario import Scenario
from e2e.base.waiting import FAULT_SLACK_S
from e2e.record.nodes import taint_seen
from e2e.record.pods import deletion_requested_at

from .fault_helpers import (
    wait_until_time,
)


def tolerations(seconds: int | None) -> str:
    """The JSON tolerations of a test pod: none; ``tolerationSeconds``; -1: for ever."""
    if seconds is None:
        return "[]"
    tol = {"key": TEST_TAINT["key"], "operator": "Exists", "effect": TEST_TAINT["effect"]}
    if seconds >= 0:
        tol["tolerationSeconds"] = seconds
    return json.dumps([tol])


def nodes_before(changes: list[Change], at: float) -> list[dict]:
    """Every node of a Node recording (``recorder.changes("Node")``) in its last state received at
    or before ``at`` (epoch s); deleted ones left out."""
    last: dict[str, Change] = {}
    for ch in changes:
        if ch.received_at <= at:
            last[ch.name] = ch
    return [ch.obj for ch in last.values() if ch.type != "DELETED"]


def eviction_event(sc: Scenario, pod: str, prefix: str) -> str | None:
    for ch in sc.recorder.changes("Event"):
        ev = ch.obj
        if ev.get("reason") == "TaintManagerEviction" and (ev.get("involvedObject") or {}).get("name") == pod \
                and (ev.get("message") or "").startswith(prefix):
            return ev["message"]
    return None


@pytest.mark.serial
@pytest.mark.profile(doc.FAST)
@pytest.mark.record("Pod", "Event", "Node")
@pytest.mark.case("NF-3")
@pytest.mark.node_faults("node_tainted", case="NF-3", window_s=doc.NF3_REMOVE_AFTER_S, node="first")
def test_taint_manager(scenario: Scenario):
    """NF-3: no toleration → deleted at the taint + [−1, 2] s; 10 s → + [9, 12] s, both with
    DisruptionTarget DeletionByTaintManager; the taint removed at 15 s cancels the 30 s pod; the
    infinite one stays; the plugin adds only the missing default toleration; the FailedScheduling
    text of a pod under the taint."""
    sc = scenario
    node = sc.default_node()  # a kind cluster's only node; on --kubeconfig the node its facts chose
    (dry,) = sc.apply("own-toleration.yaml", dry_run=True)
    tols = sorted(f"{t['key']}={t.get('tolerationSeconds')}" for t in dry["spec"].get("tolerations") or [])
    sc.expect("NF-3", "dry_run_tolerations", " ".join(tols), details={"tolerations": dry["spec"].get("tolerations")})

    for name, seconds in doc.NF3_TOLERATIONS.items():
        sc.apply("taint-pods.yaml", name=name, tolerations=tolerations(seconds))
    sc.wait_for("the test pods running", lambda: all((sc.pod(p) or {}).get("status", {}).get("phase") == "Running"
                                                     for p in doc.NF3_TOLERATIONS), FAULT_SLACK_S)
    with addons_tolerate(sc):
        with node_tainted(sc, node) as window:
            taint = sc.wait_for("the taint recorded", lambda: taint_seen(sc.recorder.changes("Node", node), TEST_TAINT["key"], TEST_TAINT["effect"]), 30)
            # a taint added through the API carries no timeAdded (kubectl taint sets none either): the
            # reference is the host time the taint patch returned
            added = window.injected_at
            sc.apply("taint-pods.yaml", name="unscheduled", tolerations="[]")
            sc.wait_for("none and t10 deleted", lambda: deletion_requested_at(sc.recorder.changes("Pod", "none")) and deletion_requested_at(sc.recorder.changes("Pod", "t10")),
                        doc.NF3_REMOVE_AFTER_S + 5)
            failed = sc.wait_for("FailedScheduling of the pod created under the taint", lambda: next(
                (c for c in sc.recorder.changes("Event") if c.obj.get("reason") == "FailedScheduling"
                 and (c.obj.get("involvedObject") or {}).get("name") == "unscheduled"), None), 30)
            # the nodes as the scheduler saw them: their last recorded state before its event
            seen = nodes_before(sc.recorder.changes("Node"), failed.received_at)
            wait_until_time(sc, window.injected_at + doc.NF3_REMOVE_AFTER_S, "the taint's 15 s")
        # the 30 s pod would have been deleted by timeAdded + 30 (+ 2 s, as t10's band): watch until then
        t30_deadline = added + doc.NF3_TOLERATIONS["t30"] + 2 * doc.API_RESOLUTION_S + 1 - time.time()
        t30_kept = sc.never_within(max(0.0, t30_deadline), "t30 deleted after the taint was removed",
                                   lambda: deletion_requested_at(sc.recorder.changes("Pod", "t30")), interval_s=0.5)

    for name in ("none", "t10"):
        at = deletion_requested_at(sc.recorder.changes("Pod", name))
        sc.expect("NF-3", f"deleted_after_taint_s[{name}]", None if at is None else round(at - added, 3),
                  details={"taint_patched_at": added, "taint": taint.obj, "delete_requested_at": at})
        target = next((condition(c.obj, "DisruptionTarget") for c in sc.recorder.changes("Pod", name)
                       if condition(c.obj, "DisruptionTarget")), None) or {}
        sc.expect("NF-3", "disruption_target_reason", target.get("reason"), details={"pod": name, "condition": target})
        sc.expect("NF-3", "disruption_target_message", target.get("message"), details={"pod": name, "condition": target})
        sc.expect("NF-3", "marking_event", eviction_event(sc, name, "Marking"), namespace=sc.namespace, pod=name)
    sc.expect("NF-3", "deleted[t30]", not t30_kept)
    sc.expect("NF-3", "cancelling_event", eviction_event(sc, "t30", "Cancelling"), namespace=sc.namespace, pod="t30")
    sc.expect("NF-3", "deleted[infinite]", deletion_requested_at(sc.recorder.changes("Pod", "infinite")) is not None)
    # the scheduler's text from the facts: the node count, their taints and the test's pin (doc.nf3_scheduling_from)
    spec = (sc.pod("unscheduled") or {}).get("spec") or {}
    sc.expect("NF-3", "scheduling_message", failed.obj.get("message"),
              details={"event": failed.obj, "nodes": {(n.get("metadata") or {}).get("name"): (n.get("spec") or {}).get("taints")
                                                       for n in seen}, "pod_node_selector": spec.get("nodeSelector")},
              expectation=doc.nf3_scheduling_from(seen, spec, sc.kubernetes_minor))
