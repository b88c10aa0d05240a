"""JB-5 — successPolicy (CASES-workloads.md §4 JB-5).

An Indexed Job (completions 3, parallelism 3) with ``successPolicy: {rules: [{succeededIndexes:
"0"}]}``: index 0 exits 0 after 3 s. ``SuccessCriteriaMet`` (reason ``SuccessPolicy``, "Matched
rules at index 0") at once, indexes 1 and 2 deleted in the same sync, ``Complete`` (same reason)
only once they are gone — their TERM trap waits 2 s, then exits 0.
"""

from __future__ import annotations

import pytest

from e2e.documented import jobs as doc
from e2e.record.timeline import parse_time
from e2e.run.scenario import Scenario
from e2e.base.waiting import PODS_SLACK_S

from .job_helpers import condition_seen, deletion_requested, finished_at, index_of, job, job_finished, job_pods, terminated

# a workload family (CASES-workloads.md): `make e2e-workloads`, not in the default `make e2e`
pytestmark = pytest.mark.workloads


@pytest.mark.record("Pod", "Event", "Job")
@pytest.mark.case("JB-5")
def test_success_policy(scenario: Scenario):
    """JB-5: SuccessCriteriaMet at index 0's exit, the other indexes deleted, Complete after them."""
    sc = scenario
    sc.apply("job-success-policy.yaml", done_after_s=doc.JB5_DONE_AFTER_S, term_delay_s=doc.JB5_TERM_DELAY_S,
             grace=doc.JB5_GRACE_S)
    finished = sc.wait_for("the Job Complete or Failed", lambda: job_finished(sc),
                           doc.JB5_DONE_AFTER_S + doc.JB5_GRACE_S + PODS_SLACK_S)
    pods = job_pods(sc)
    details = {"pods": {n: {"index": index_of(p), "deletionTimestamp": p["metadata"].get("deletionTimestamp"),
                            "phase": (p.get("status") or {}).get("phase"), "terminated": terminated(sc, n)}
                        for n, p in pods.items()},
               "job_status": job(sc).get("status")}
    first = next((n for n, p in pods.items() if index_of(p) == "0"), None)
    sc.require(first is not None, f"index 0's pod was recorded: {sorted(pods)}")
    met = condition_seen(sc, "SuccessCriteriaMet") or {}
    sc.expect("JB-5", "criteria_met_reason", met.get("reason"), details=details)
    sc.expect("JB-5", "criteria_met_message", met.get("message"), details=details)
    met_at, done_at = parse_time(met.get("lastTransitionTime")), finished_at(sc, first)
    sc.expect("JB-5", "criteria_met_after_exit_s", None if None in (met_at, done_at) else met_at - done_at, details=details)
    sc.expect("JB-5", "other_pods_deleted", sum(1 for n in pods if n != first and deletion_requested(sc, n) is not None),
              details=details)
    complete_at = parse_time(finished.get("lastTransitionTime"))
    sc.expect("JB-5", "complete_after_criteria_met_s", None if None in (complete_at, met_at) else complete_at - met_at,
              details=details)
    sc.expect("JB-5", "complete_reason", finished.get("reason") if finished.get("type") == "Complete" else finished.get("type"))
    sc.expect("JB-5", "succeeded", (job(sc).get("status") or {}).get("succeeded", 0), details=details)
