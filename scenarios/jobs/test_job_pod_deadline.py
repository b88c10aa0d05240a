"""JB-3 — a pod-level activeDeadlineSeconds in a Job (CASES-workloads.md §4 JB-3, R18; known bug
kubernetes/kubernetes#115688, open).

The kubelet fails the pod at its deadline — phase Failed, reason ``DeadlineExceeded`` — although the
container, sent SIGTERM, exits 0. No podFailurePolicy rule can tell this failure: the exit code is
0 (a ``FailJob onExitCodes NotIn [0]`` rule does not match) and the pod carries no condition for
it (no ``DisruptionTarget``, nothing a deadline rule could match: the known bug). Each failure
counts: backoffLimit 1 → 2 pods, ``BackoffLimitExceeded``.
"""

from __future__ import annotations

import pytest

from e2e.documented import jobs as doc
from e2e.measure.jobs import deadline_failure, end_reason
from e2e.measure.values import expect_all
from e2e.record.timeline import parse_time
from e2e.run.scenario import Scenario
from e2e.base.waiting import PODS_SLACK_S

from .job_helpers import by_creation, job_finished, job_pods, terminated

# a workload family (CASES-workloads.md): `make e2e-workloads`, not in the default `make e2e`
pytestmark = pytest.mark.workloads

@pytest.mark.record("Pod", "Event", "Job")
@pytest.mark.case("JB-3")
def test_pod_deadline_in_a_job(scenario: Scenario):
    """JB-3: the pod's own deadline: Failed/DeadlineExceeded with exit 0, no condition to match
    (known bug #115688), the Job fails BackoffLimitExceeded after backoffLimit + 1 pods."""
    sc = scenario
    sc.apply("job-pod-deadline.yaml", backoff_limit=doc.JB3_BACKOFF_LIMIT, pod_deadline_s=doc.JB3_POD_DEADLINE_S,
             grace=doc.JB3_GRACE_S)
    budget = 2 * doc.JB3_POD_DEADLINE_S + sc.judge.wait_budget_s("DR-6", "backoff_gap_s[1]") + PODS_SLACK_S
    finished = sc.wait_for("the Job Complete or Failed", lambda: job_finished(sc), budget)
    pods = by_creation(job_pods(sc))
    sc.require(pods, "the Job's pods were recorded")
    first = pods[0]["metadata"]["name"]
    failed = next((ch.obj for ch in sc.recorder.changes("Pod", first) if (ch.obj.get("status") or {}).get("phase") == "Failed"), None)
    sc.require(failed is not None, f"{first} was seen Failed")
    status = failed["status"]
    term = terminated(sc, first) or {}
    details = {"pod_status": {k: status.get(k) for k in ("phase", "reason", "message", "conditions", "startTime")},
               "terminated": term}
    judged = deadline_failure(details["pod_status"])
    expect_all(sc.expect, judged[:2], terminated=term)
    sc.expect("JB-3", "pod_message", status.get("message"), details=details)
    sc.expect("JB-3", "container_exit_code", term.get("exitCode"), details=details)
    started, done = parse_time(status.get("startTime")), parse_time(term.get("finishedAt"))
    sc.expect("JB-3", "container_finished_after_start_s", None if None in (started, done) else done - started, details=details)
    expect_all(sc.expect, judged[2:], terminated=term)
    sc.expect("JB-3", "pods_total", len(pods), details={"pods": [p["metadata"]["name"] for p in pods]})
    sc.expect("JB-3", "failed_reason", end_reason(finished),
              details={"condition": finished})
