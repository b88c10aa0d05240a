"""JB-4 — backoffLimitPerIndex, maxFailedIndexes and FailIndex (CASES-workloads.md §1.6 W24, W25; §4 JB-4).

Two Indexed Jobs at once (completions 4, parallelism 4, ``backoffLimitPerIndex: 1``): index 1
always exits 1, index 2 exits 42 (``FailIndex onExitCodes In [42]``), 0 and 3 exit 0. Index 1 gets
one retry after the per-index back-off (10 s), index 2 none. Without maxFailedIndexes the Job ends
``FailedIndexes`` with failedIndexes "1,2", completedIndexes "0,3"; with ``maxFailedIndexes: 1``
it ends ``MaxFailedIndexesExceeded`` once the second index fails. Dry runs: backoffLimitPerIndex
with ``restartPolicy: OnFailure`` (accepted: only a podFailurePolicy needs Never) and without
Indexed completion (refused).
"""

from __future__ import annotations

import json

import pytest

from e2e.cluster.kube import ApiRefused
from e2e.documented import jobs as doc
from e2e.record.timeline import parse_time
from e2e.run.scenario import Scenario
from e2e.base.waiting import PODS_SLACK_S

from .job_helpers import by_creation, finished_at, index_of, job, job_finished, job_pods

# a workload family (CASES-workloads.md): `make e2e-workloads`, not in the default `make e2e`
pytestmark = pytest.mark.workloads

FAIL_INDEX = {"rules": [{"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [42]}}]}
BASE = dict(completion_mode="Indexed", per_index=doc.JB4_PER_INDEX, max_failed="null", policy=json.dumps(FAIL_INDEX),
            restart_policy="Never")


def dry_run(sc: Scenario, **values: object) -> ApiRefused | None:
    try:
        sc.apply("job-per-index.yaml", dry_run=True, **{**BASE, **values})
    except ApiRefused as e:
        return e
    return None


@pytest.mark.record("Pod", "Event", "Job")
@pytest.mark.case("JB-4")
def test_backoff_limit_per_index(scenario: Scenario):
    """JB-4: per-index retries (index 1: 2 pods, the retry 10 s later; index 2: 1 pod), FailedIndexes;
    with maxFailedIndexes 1, MaxFailedIndexesExceeded; the two dry runs."""
    sc = scenario
    err = dry_run(sc, name="onfailure", policy="null", restart_policy="OnFailure")
    sc.expect("JB-4", "accepted[OnFailure]", err is None, details={"error": err.body if err else None})
    err = dry_run(sc, name="nonindexed", completion_mode="NonIndexed", policy="null")
    causes = ((err.body if err else {}).get("details") or {}).get("causes") or [{}]
    sc.expect("JB-4", "rejected_message[NonIndexed]", causes[0].get("message"), details={"causes": causes})
    sc.expect("JB-4", "rejected_field[NonIndexed]", causes[0].get("field"), details={"causes": causes})

    sc.apply("job-per-index.yaml", **{**BASE, "name": "perindex"})
    sc.apply("job-per-index.yaml", **{**BASE, "name": "maxfailed", "max_failed": doc.JB4_MAX_FAILED})
    budget = sc.judge.wait_budget_s("JB-4", "index_retry_gap_s") + PODS_SLACK_S
    finished = sc.wait_for("Job perindex Complete or Failed", lambda: job_finished(sc, "perindex"), budget)
    capped = sc.wait_for("Job maxfailed Complete or Failed", lambda: job_finished(sc, "maxfailed"), PODS_SLACK_S)

    status = job(sc, "perindex").get("status") or {}
    pods = by_creation(job_pods(sc, "perindex"))
    details = {"job_status": status, "pods": [{"name": p["metadata"]["name"], "index": index_of(p),
                                                "created": p["metadata"]["creationTimestamp"],
                                                "annotations": p["metadata"].get("annotations")} for p in pods]}
    sc.expect("JB-4", "failed_indexes", status.get("failedIndexes"), details=details)
    sc.expect("JB-4", "completed_indexes", status.get("completedIndexes"), details=details)
    sc.expect("JB-4", "failed_reason", finished.get("reason") if finished.get("type") == "Failed" else finished.get("type"))
    sc.expect("JB-4", "failed_message", finished.get("message"))
    one = [p for p in pods if index_of(p) == "1"]
    sc.expect("JB-4", "pods_of_index_1", len(one), details=details)
    sc.expect("JB-4", "pods_of_index_2", sum(1 for p in pods if index_of(p) == "2"), details=details)
    if len(one) >= 2:
        sc.expect("JB-4", "retry_failure_count",
                  (one[1]["metadata"].get("annotations") or {}).get("batch.kubernetes.io/job-index-failure-count"), details=details)
        done = finished_at(sc, one[0]["metadata"]["name"])
        sc.expect("JB-4", "index_retry_gap_s",
                  None if done is None else parse_time(one[1]["metadata"]["creationTimestamp"]) - done, details=details)

    capped_status = job(sc, "maxfailed").get("status") or {}
    sc.expect("JB-4", "failed_reason[max-failed]", capped.get("reason") if capped.get("type") == "Failed" else capped.get("type"),
              details={"job_status": capped_status})
    sc.expect("JB-4", "failed_message[max-failed]", capped.get("message"))
    sc.expect("JB-4", "failed_indexes[max-failed]", capped_status.get("failedIndexes"), details={"job_status": capped_status})
