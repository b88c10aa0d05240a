"""JB-1, JB-2 — how a Job ends (CASES-workloads.md §1.6 W23, W24, W26; §4 JB-1, JB-2).

JB-1: an Indexed Job (parallelism 2, completions 4) with the rules ``FailJob onExitCodes In [42]``,
``Count onExitCodes In [1]``; index 1 exits 42 after 5 s. FailureTarget (``PodFailurePolicy``, the
rule's message) at once, the other running pod deleted in the same sync, ``Failed`` only once that
pod — whose TERM trap waits 3 s — is no longer terminating; no replacement, no ``Complete``.

JB-2 (a): ``activeDeadlineSeconds`` 20 while the back-off grows (pods failing after 5 s): the deadline
wins (``DeadlineExceeded``), the running second pod is deleted. (b): ``ttlSecondsAfterFinished`` 10:
the TTL controller deletes the finished Job 10 s after completionTime, foreground (its pod first).
"""

from __future__ import annotations

import pytest

from e2e.documented import jobs as doc
from e2e.measure.jobs import active_deadline, end_reason
from e2e.measure.values import expect_all
from e2e.record.recorder import written_before
from e2e.record.timeline import parse_time
from e2e.run.scenario import Scenario
from e2e.base.waiting import PODS_SLACK_S

from .job_helpers import (by_creation, condition_seen, deleted_change, deletion_requested, finished_at, index_of, job,
                          job_finished, job_pods, status_history, terminated)

# a workload family (CASES-workloads.md): `make e2e-workloads`, not in the default `make e2e`
pytestmark = pytest.mark.workloads

RECORD = ("Pod", "Event", "Job")


@pytest.mark.record(*RECORD)
@pytest.mark.case("JB-1")
def test_fail_job_rule(scenario: Scenario):
    """JB-1: FailJob on exit 42 — FailureTarget at the exit, the other pod deleted, Failed after it
    is gone, same reason and message; 2 pods in all."""
    sc = scenario
    sc.apply("job-failjob.yaml", parallelism=doc.JB1_PARALLELISM, grace=doc.JB1_GRACE_S,
             fail_after_s=doc.JB1_FAIL_AFTER_S, term_delay_s=doc.JB1_TERM_DELAY_S)
    budget = doc.JB1_FAIL_AFTER_S + doc.JB1_TERM_DELAY_S + doc.JB1_GRACE_S + PODS_SLACK_S
    finished = sc.wait_for("the Job Complete or Failed", lambda: job_finished(sc), budget)

    pods = job_pods(sc)
    details = {"pods": {n: {"index": index_of(p), "created": p["metadata"]["creationTimestamp"],
                            "deletionTimestamp": p["metadata"].get("deletionTimestamp"), "terminated": terminated(sc, n)}
                        for n, p in pods.items()},
               "job_status": status_history(sc)[-1:]}
    failing = next((n for n, p in pods.items() if index_of(p) == "1"), None)
    others = [n for n, p in pods.items() if index_of(p) != "1"]
    sc.require(failing is not None and others, f"the pods of index 1 and another index were recorded: {sorted(pods)}")
    target = condition_seen(sc, "FailureTarget") or {}
    sc.expect("JB-1", "failure_target_reason", target.get("reason"), details=details)
    sc.expect("JB-1", "failure_target_message", target.get("message"), namespace=sc.namespace, pod=failing, details=details)
    target_at = parse_time(target.get("lastTransitionTime"))
    exit_at = finished_at(sc, failing)
    sc.expect("JB-1", "failure_target_after_exit_s", None if None in (target_at, exit_at) else target_at - exit_at, details=details)
    other = others[0]
    deleted_at = deletion_requested(sc, other)
    sc.expect("JB-1", "other_pod_deleted_after_target_s", None if None in (deleted_at, target_at) else deleted_at - target_at,
              details=details)
    sc.expect("JB-1", "other_pod_exit_code", (terminated(sc, other) or {}).get("exitCode"), details=details)
    failed_at = parse_time(finished.get("lastTransitionTime"))
    sc.expect("JB-1", "failed_after_failure_target_s", None if None in (failed_at, target_at) else failed_at - target_at,
              details=details)
    last_exit = max((t for t in (finished_at(sc, n) for n in pods) if t is not None), default=None)
    sc.expect("JB-1", "failed_after_last_pod_finished_s", None if None in (failed_at, last_exit) else failed_at - last_exit,
              details=details)
    sc.expect("JB-1", "failed_reason", end_reason(finished))
    sc.expect("JB-1", "failed_message", finished.get("message"), namespace=sc.namespace, pod=failing)
    sc.expect("JB-1", "complete_seen", condition_seen(sc, "Complete") is not None)
    sc.expect("JB-1", "pods_total", len(pods), details=details)


@pytest.mark.record(*RECORD)
@pytest.mark.case("JB-2")
def test_active_deadline(scenario: Scenario):
    """JB-2 (a): activeDeadlineSeconds 20 beats backoffLimit 6: FailureTarget DeadlineExceeded at
    startTime + 20 s, the running second pod deleted, Failed DeadlineExceeded."""
    sc = scenario
    sc.apply("job-deadline.yaml", deadline_s=doc.JB2_DEADLINE_S, fail_after_s=doc.JB2_FAIL_AFTER_S)
    sc.wait_for_condition("Job", "job", "FailureTarget", timeout_s=sc.judge.wait_budget_s("JB-2", "failure_target_after_start_s")
                          + PODS_SLACK_S, case="JB-2", measurement="failure_target_after_start_s")
    finished = sc.wait_for("the Job Complete or Failed", lambda: job_finished(sc), PODS_SLACK_S)
    target = condition_seen(sc, "FailureTarget") or {}
    pods = [{"name": p["metadata"]["name"], "created": p["metadata"]["creationTimestamp"],
             "deletionTimestamp": p["metadata"].get("deletionTimestamp"), "terminated": terminated(sc, p["metadata"]["name"])}
            for p in by_creation(job_pods(sc))]
    after_start, pods_total, running_pod_deleted = active_deadline(pods, job(sc).get("status") or {})
    expect_all(sc.expect, [after_start])
    sc.expect("JB-2", "failure_target_reason", target.get("reason"))
    sc.expect("JB-2", "failure_target_message", target.get("message"))
    sc.expect("JB-2", "failed_reason", end_reason(finished))
    expect_all(sc.expect, [pods_total, running_pod_deleted])


@pytest.mark.record(*RECORD)
@pytest.mark.case("JB-2")
def test_ttl_after_finished(scenario: Scenario):
    """JB-2 (b): ttlSecondsAfterFinished 10: the Job's deletion starts 10 s after completionTime,
    foreground: its pod is gone before the Job."""
    sc = scenario
    sc.apply("job-ttl.yaml", ttl_s=doc.JB2_TTL_S)
    sc.wait_for_condition("Job", "ttl", "Complete", timeout_s=PODS_SLACK_S)
    gone = sc.wait_for("the Job deleted", lambda: deleted_change(sc, "Job", "ttl"),
                       sc.judge.wait_budget_s("JB-2", "ttl_delete_after_completion_s") + PODS_SLACK_S)
    changes = sc.recorder.changes("Job", "ttl")
    completion = parse_time(next((ch.obj["status"]["completionTime"] for ch in changes
                                  if (ch.obj.get("status") or {}).get("completionTime")), None))
    deleting = next((ch for ch in changes if ch.obj["metadata"].get("deletionTimestamp")), None)
    stamp = parse_time(deleting.obj["metadata"]["deletionTimestamp"]) if deleting else None
    details = {"job": [{"type": ch.type, "received_at": ch.received_at, "deletionTimestamp": ch.obj["metadata"].get("deletionTimestamp"),
                        "finalizers": ch.obj["metadata"].get("finalizers")} for ch in changes]}
    sc.expect("JB-2", "ttl_delete_after_completion_s", None if None in (stamp, completion) else stamp - completion, details=details)
    sc.expect("JB-2", "ttl_propagation", " ".join((deleting.obj["metadata"].get("finalizers") or []) if deleting else []) or None,
              details=details)
    # Two watches deliver in no common order: compare the deletes' write order (written_before) rather
    # than the receive times (both in the details).
    pod_gone = [deleted_change(sc, "Pod", name) for name in job_pods(sc, "ttl")]
    job_rv = gone.obj["metadata"]["resourceVersion"]
    sc.expect("JB-2", "pods_gone_before_job",
              bool(pod_gone) and all(ch is not None and written_before(ch, gone) for ch in pod_gone),
              details={**details, "job_deleted": {"received_at": gone.received_at, "resourceVersion": job_rv},
                       "pods_deleted": [{"received_at": ch.received_at, "resourceVersion": ch.obj["metadata"]["resourceVersion"]}
                                        if ch else None for ch in pod_gone]})
