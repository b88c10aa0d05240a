"""JB-8 — Job back-off beyond DR-6 (CASES-workloads.md §1.6 W22; §4 JB-8).

(a) ``restartPolicy: OnFailure``, backoffLimit 2, the container exits 1 after 1 s: the kubelet
restarts it in place (CL-1's gaps: at once, then 10 s) and the Job controller fails the Job when
the pod's restarts reach the limit (``pastBackoffLimitOnFailure``: ``>=``), deleting the pod.
"""

from __future__ import annotations

import pytest

from e2e.documented import jobs as doc
from e2e.measure.jobs import end_reason, restart_count_at_failure, restarts_up_to_failure_target
from e2e.measure.values import expect_all
from e2e.run.scenario import Scenario
from e2e.base.waiting import PODS_SLACK_S

from .job_helpers import deletion_requested, job_finished, job_pods

# a workload family (CASES-workloads.md): `make e2e-workloads`, not in the default `make e2e`
pytestmark = pytest.mark.workloads


@pytest.mark.record("Pod", "Event", "Job")
@pytest.mark.case("JB-8")
def test_on_failure_restarts_count(scenario: Scenario):
    """JB-8 (a): OnFailure restarts count toward backoffLimit 2: Failed BackoffLimitExceeded at
    restartCount 2, the pod deleted, no second pod."""
    sc = scenario
    sc.apply("job-onfailure.yaml", backoff_limit=doc.JB8_BACKOFF_LIMIT)
    finished = sc.wait_for("the Job Complete or Failed", lambda: job_finished(sc), 2 * PODS_SLACK_S)
    pods = job_pods(sc)
    sc.require(pods, "the Job's pod was recorded")
    name = sorted(pods)[0]
    # the pod's restartCount as the controller last saw it before it failed the Job: the highest
    # recorded up to the FailureTarget
    counts, before = restarts_up_to_failure_target(sc.recorder.changes("Pod", name), sc.recorder.changes("Job", "job"))
    expect_all(sc.expect, [restart_count_at_failure(counts, before, finished)])
    sc.expect("JB-8", "failed_reason", end_reason(finished))
    sc.expect("JB-8", "failed_message", finished.get("message"))
    sc.expect("JB-8", "pod_deleted", deletion_requested(sc, name) is not None)
    sc.expect("JB-8", "pods_total", len(pods), details={"pods": sorted(pods)})


@pytest.mark.record("Pod", "Event", "Job")
@pytest.mark.case("JB-8")
def test_parallel_waves(scenario: Scenario):
    """JB-8 (b) (R36; ~35 s, so not `slow`): parallelism 2, backoffLimit 3, pods failing after 5 s: Job-wide back-off;
    BackoffLimitExceeded after backoffLimit + 1 (or + 2) failed pods. The timeline and the total
    time are recorded, not judged (the waves overlap)."""
    sc = scenario
    sc.apply("job-waves.yaml", backoff_limit=doc.JB8B_BACKOFF_LIMIT, fail_after_s=doc.JB8B_FAIL_AFTER_S)
    budget = doc.JB8B_FAIL_AFTER_S * (doc.JB8B_BACKOFF_LIMIT + 1) + 10 * (1 + 2 + 4) + 2 * PODS_SLACK_S
    finished = sc.wait_for("the Job Complete or Failed", lambda: job_finished(sc), budget)
    pods = job_pods(sc)
    failed = [n for n, p in pods.items() if any(((cs.get("state") or {}).get("terminated") or {}).get("exitCode") == 1
                                                 for cs in (p.get("status") or {}).get("containerStatuses") or [])]
    timeline = sorted((p["metadata"]["creationTimestamp"], n) for n, p in pods.items())
    sc.note("total_s", f"{(finished.get('lastTransitionTime') or '')} (created: {timeline[0][0] if timeline else None})")
    sc.expect("JB-8", "failed_reason[waves]", end_reason(finished),
              details={"condition": finished})
    sc.expect("JB-8", "failed_pods[waves]", len(failed), details={"pods": timeline, "failed": sorted(failed)})
