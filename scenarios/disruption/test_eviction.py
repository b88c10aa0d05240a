"""DR-1 — the Eviction API against PodDisruptionBudgets (CASES-faults.md §1.3 C24–C29, §4 DR-1).

A Deployment of 3 busybox pods (web.yaml, exec readiness on /tmp/ready), then per test one
budget situation; each eviction's HTTP status, message, ``details.causes`` and
``retryAfterSeconds`` is judged, with the PodDisruptionBudget's status (recorded by watch) and
the evicted pod's DisruptionTarget condition. Values: e2e/documented/disruption.py.
"""

from __future__ import annotations

import pytest

from e2e.documented import disruption as doc
from e2e.record.pods import condition
from e2e.run.scenario import Scenario
from e2e.base.waiting import PODS_SLACK_S

from .disruption_helpers import (apply_pdb, budget_cause, make_unready, pdb_status, status_of, wait_pdb,
                                wait_ready, web_values)

RECORD = ("Pod", "Event", "PodDisruptionBudget", "ReplicaSet")


def apply_web(sc: Scenario) -> list[str]:
    sc.apply("web.yaml", **web_values(doc.DR1_REPLICAS))
    return wait_ready(sc, doc.DR1_REPLICAS, app="web")


def judge_pdb(sc: Scenario, variant: str, status: dict, *fields: str) -> None:
    names = {"expectedPods": "pdb_expected_pods", "desiredHealthy": "pdb_desired_healthy",
             "currentHealthy": "pdb_current_healthy", "disruptionsAllowed": "pdb_disruptions_allowed"}
    for f in fields:
        sc.expect("DR-1", f"{names[f]}[{variant}]", status.get(f, 0), details={"pdb_status": status})


def wait_unready(sc: Scenario, pod: str) -> None:
    sc.wait_for(f"{pod} not Ready", lambda: (condition(sc.pod(pod), "Ready") or {}).get("status") == "False", PODS_SLACK_S)


@pytest.mark.record(*RECORD)
@pytest.mark.case("DR-1")
def test_min_available_refuses(scenario: Scenario):
    """DR-1 (a): minAvailable 3 over 3 ready pods → 429, cause DisruptionBudget "needs 3
    healthy pods and has 3 currently", no Retry-After; the pod stays."""
    sc = scenario
    names = apply_web(sc)
    apply_pdb(sc, "pdb-a", minAvailable=3)
    status = wait_pdb(sc, "pdb-a", currentHealthy=3, expectedPods=3)
    judge_pdb(sc, "min-available", status, "expectedPods", "desiredHealthy", "currentHealthy", "disruptionsAllowed")
    answer = sc.evict(names[0])
    code, message, causes, retry_after = status_of(answer)
    cause = budget_cause(causes)
    details = {"answer": answer.body}
    sc.expect("DR-1", "eviction_status[min-available]", code, details=details)
    sc.expect("DR-1", "eviction_message[min-available]", message, details=details)
    sc.expect("DR-1", "cause_type[min-available]", cause.get("reason", cause.get("type")), details=details)
    sc.expect("DR-1", "cause_message[min-available]", cause.get("message"), details=details, pdb="pdb-a")
    sc.expect("DR-1", "retry_after_s[min-available]", retry_after, details=details)


@pytest.mark.record(*RECORD)
@pytest.mark.case("DR-1")
def test_max_unavailable_allows_one(scenario: Scenario):
    """DR-1 (b): maxUnavailable 1 → the first eviction passes (201) with DisruptionTarget
    EvictionByEvictionAPI and the pod's own grace; an immediate second one gets 429 until the
    replacement is Ready."""
    sc = scenario
    names = apply_web(sc)
    apply_pdb(sc, "pdb-b", maxUnavailable=1)
    status = wait_pdb(sc, "pdb-b", currentHealthy=3, expectedPods=3)
    judge_pdb(sc, "max-unavailable", status, "expectedPods", "desiredHealthy", "disruptionsAllowed")
    first, second = sc.evict(names[0]), sc.evict(names[1])
    sc.expect("DR-1", "eviction_status[max-unavailable]", first.status, details={"answer": first.body})
    code, _, causes, _ = status_of(second)
    sc.expect("DR-1", "second_eviction_status[max-unavailable]", code, details={"answer": second.body})
    sc.expect("DR-1", "second_cause_message[max-unavailable]", budget_cause(causes).get("message"),
              details={"answer": second.body}, pdb="pdb-b")

    evicted = sc.wait_for(f"{names[0]} marked for deletion", lambda: (lambda p: p if (p or {}).get("metadata", {}).get("deletionTimestamp") else None)(sc.pod(names[0])), PODS_SLACK_S)
    target = condition(evicted, "DisruptionTarget") or {}
    sc.expect("DR-1", "disruption_target_status[max-unavailable]", target.get("status"), details={"condition": target})
    sc.expect("DR-1", "disruption_target_reason[max-unavailable]", target.get("reason"), details={"condition": target})
    sc.expect("DR-1", "disruption_target_message[max-unavailable]", target.get("message"), details={"condition": target})
    sc.expect("DR-1", "deletion_grace_period_s[max-unavailable]", evicted["metadata"].get("deletionGracePeriodSeconds"))

    wait_ready(sc, doc.DR1_REPLICAS, app="web")
    after = wait_pdb(sc, "pdb-b", currentHealthy=3)
    sc.expect("DR-1", "disruptions_allowed_after_replacement_ready[max-unavailable]", after.get("disruptionsAllowed", 0),
              details={"pdb_status": after})


@pytest.mark.record(*RECORD)
@pytest.mark.case("DR-1")
def test_new_pdb(scenario: Scenario):
    """DR-1 (c): an eviction right after the PDB's creation: 429 "still being processed" with
    Retry-After 10 while the PDB controller has not observed it, or 201 with no Retry-After if it
    was faster: a race upstream tolerates (e2e.documented.disruption NEW_PDB_RACE), recorded as such
    on both values."""
    sc = scenario
    names = apply_web(sc)
    apply_pdb(sc, "pdb-c", maxUnavailable=1)
    answer = sc.evict(names[0])
    code, _, causes, retry_after = status_of(answer)
    cause = budget_cause(causes).get("message", "")
    observed = pdb_status(sc, "pdb-c").get("observedGeneration", 0)
    sc.expect("DR-1", "answer[new-pdb]", f"{code} {cause}".strip() if code != 201 else "201",
              details={"answer": answer.body, "observedGeneration_seen_by_the_recorder_after": observed}, pdb="pdb-c")
    sc.expect("DR-1", "retry_after_s[new-pdb]", retry_after, details={"answer": answer.body})


@pytest.mark.record(*RECORD)
@pytest.mark.case("DR-1")
def test_two_pdbs(scenario: Scenario):
    """DR-1 (d): two PDBs select the pod → the eviction is refused with a Status of code 500
    "This pod has more than one PodDisruptionBudget…"; the pod stays."""
    sc = scenario
    names = apply_web(sc)
    apply_pdb(sc, "pdb-d1", maxUnavailable=1)
    apply_pdb(sc, "pdb-d2", maxUnavailable=1)
    wait_pdb(sc, "pdb-d1", currentHealthy=3)
    wait_pdb(sc, "pdb-d2", currentHealthy=3)
    answer = sc.evict(names[0])
    sc.expect("DR-1", "eviction_status[two-pdbs]", answer.status, details={"answer": answer.body})
    sc.expect("DR-1", "status_code[two-pdbs]", (answer.body or {}).get("code"), details={"answer": answer.body})
    sc.expect("DR-1", "eviction_message[two-pdbs]", (answer.body or {}).get("message"), details={"answer": answer.body})
    deleted = not sc.never_within(2.0, f"{names[0]} marked for deletion",
                                  lambda: (sc.pod(names[0]) or {}).get("metadata", {}).get("deletionTimestamp"))
    sc.expect("DR-1", "pod_deleted[two-pdbs]", deleted)


@pytest.mark.record(*RECORD)
@pytest.mark.case("DR-1")
def test_unready_pod(scenario: Scenario):
    """DR-1 (e): an unready pod under IfHealthyBudget is evicted only while currentHealthy ≥
    desiredHealthy > 0 (429 with minAvailable 3, 201 with minAvailable 2 although
    disruptionsAllowed is 0); under AlwaysAllow at once."""
    sc = scenario
    names = apply_web(sc)
    apply_pdb(sc, "pdb-e", minAvailable=3, unhealthyPodEvictionPolicy="IfHealthyBudget")
    wait_pdb(sc, "pdb-e", currentHealthy=3)

    # IfHealthyBudget, currentHealthy 2 < desiredHealthy 3: refused
    make_unready(sc, names[0])
    wait_unready(sc, names[0])
    wait_pdb(sc, "pdb-e", currentHealthy=2, desiredHealthy=3)
    answer = sc.evict(names[0])
    code, _, causes, _ = status_of(answer)
    sc.expect("DR-1", "eviction_status[unready-if-healthy-short]", code, details={"answer": answer.body})
    sc.expect("DR-1", "cause_message[unready-if-healthy-short]", budget_cause(causes).get("message"),
              details={"answer": answer.body}, pdb="pdb-e")

    # IfHealthyBudget, currentHealthy 2 ≥ desiredHealthy 2 > 0: evicted, no budget decrement
    sc.patch("PodDisruptionBudget", "pdb-e", {"spec": {"minAvailable": 2}}, patch_type="merge")
    status = wait_pdb(sc, "pdb-e", currentHealthy=2, desiredHealthy=2)
    sc.expect("DR-1", "pdb_disruptions_allowed[unready-if-healthy-enough]", status.get("disruptionsAllowed", 0),
              details={"pdb_status": status})
    answer = sc.evict(names[0])
    sc.expect("DR-1", "eviction_status[unready-if-healthy-enough]", answer.status, details={"answer": answer.body})

    # AlwaysAllow with minAvailable 3 and one pod unready: evicted at once
    ready = wait_ready(sc, doc.DR1_REPLICAS, app="web")
    victim = next(p for p in ready if p != names[0])
    sc.patch("PodDisruptionBudget", "pdb-e", {"spec": {"minAvailable": 3, "unhealthyPodEvictionPolicy": "AlwaysAllow"}},
             patch_type="merge")
    wait_pdb(sc, "pdb-e", currentHealthy=3, desiredHealthy=3)
    make_unready(sc, victim)
    wait_unready(sc, victim)
    status = wait_pdb(sc, "pdb-e", currentHealthy=2)
    sc.expect("DR-1", "pdb_current_healthy[unready-always-allow]", status.get("currentHealthy", 0), details={"pdb_status": status})
    answer = sc.evict(victim)
    sc.expect("DR-1", "eviction_status[unready-always-allow]", answer.status, details={"answer": answer.body})


@pytest.mark.record(*RECORD)
@pytest.mark.case("DR-1")
def test_pending_pod(scenario: Scenario):
    """DR-1 (f): a Pending pod is evicted although its PDB allows no disruption (no budget check)."""
    sc = scenario
    sc.apply("pending-pod.yaml")
    apply_pdb(sc, "pdb-f", app="pending", minAvailable=1)
    status = wait_pdb(sc, "pdb-f", expectedPods=1)
    sc.expect("DR-1", "pod_phase[pending]", ((sc.pod("pending") or {}).get("status") or {}).get("phase"))
    sc.expect("DR-1", "pdb_disruptions_allowed[pending]", status.get("disruptionsAllowed", 0), details={"pdb_status": status})
    answer = sc.evict("pending")
    sc.expect("DR-1", "eviction_status[pending]", answer.status, details={"answer": answer.body})


@pytest.mark.record(*RECORD)
@pytest.mark.case("DR-1")
def test_plain_delete(scenario: Scenario):
    """DR-1 (g): a plain DELETE is not blocked by minAvailable 3 and adds no DisruptionTarget;
    the PDB still counts the loss (currentHealthy 2)."""
    sc = scenario
    names = apply_web(sc)
    apply_pdb(sc, "pdb-g", minAvailable=3)
    wait_pdb(sc, "pdb-g", currentHealthy=3)
    sc.delete("Pod", names[0])
    sc.wait_for(f"{names[0]} gone", lambda: (sc.recorder.changes("Pod", names[0]) or [None])[-1].type == "DELETED", PODS_SLACK_S)
    wait_ready(sc, doc.DR1_REPLICAS, app="web")
    wait_pdb(sc, "pdb-g", currentHealthy=3)
    reasons = sorted({(condition(ch.obj, "DisruptionTarget") or {}).get("reason") for ch in sc.recorder.changes("Pod", names[0])} - {None})
    sc.expect("DR-1", "disruption_target_reason[delete]", reasons[0] if reasons else "none", details={"reasons_seen": reasons})
    healthy = [((ch.obj.get("status") or {}).get("currentHealthy") or 0) for ch in sc.recorder.changes("PodDisruptionBudget", "pdb-g")
               if (ch.obj.get("status") or {}).get("observedGeneration")]
    sc.expect("DR-1", "pdb_current_healthy_min[delete]", min(healthy), details={"current_healthy_over_time": healthy})
