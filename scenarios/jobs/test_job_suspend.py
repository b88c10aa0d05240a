"""JB-7 — suspend and resume (CASES-workloads.md §4 JB-7, R35).

completions 2, parallelism 1, pods of 8 s. Suspended once the first pod runs: the pod is deleted
(its tracking finalizer removed first: never counted as failed), ``Suspended`` True (``JobSuspended``,
"Job suspended"), startTime kept (1.34, 1.35) or cleared (1.36+: MutableSchedulingDirectivesForSuspendedJobs).
Resumed 5 s after the pod is gone: startTime set anew, two pods, ``Complete`` with succeeded 2 and
no tracking finalizer left.
"""

from __future__ import annotations

import time

import pytest

from e2e.cluster import gates
from e2e.documented import jobs as doc
from e2e.record.pods import condition
from e2e.record.timeline import parse_time
from e2e.run.scenario import Scenario
from e2e.base.waiting import PODS_SLACK_S

from .job_helpers import deleted_change, deletion_requested, job, job_pods

# a workload family (CASES-workloads.md): `make e2e-workloads`, not in the default `make e2e`
pytestmark = pytest.mark.workloads

TRACKING = "batch.kubernetes.io/job-tracking"
GATE = "MutableSchedulingDirectivesForSuspendedJobs"


@pytest.mark.record("Pod", "Event", "Job")
@pytest.mark.case("JB-7")
def test_suspend_and_resume(scenario: Scenario):
    """JB-7: suspend deletes the running pod, stops the clock; resume completes the Job."""
    sc = scenario
    sc.apply("job-suspend.yaml", run_s=doc.JB7_RUN_S)
    first = sc.wait_for("the first pod running", lambda: next(
        (n for n, p in job_pods(sc).items()
         if any("running" in (cs.get("state") or {}) for cs in (p.get("status") or {}).get("containerStatuses") or [])), None),
        PODS_SLACK_S)
    sc.patch("Job", "job", {"spec": {"suspend": True}}, patch_type="merge")
    suspended = sc.wait_for_condition("Job", "job", "Suspended", timeout_s=PODS_SLACK_S)
    sc.wait_for(f"{first} gone", lambda: deleted_change(sc, "Pod", first), PODS_SLACK_S)
    while_suspended = dict(job(sc).get("status") or {})
    time.sleep(doc.JB7_PAUSE_S)
    resumed_at = time.time()
    sc.patch("Job", "job", {"spec": {"suspend": False}}, patch_type="merge")
    complete = sc.wait_for_condition("Job", "job", "Complete",
                                     timeout_s=sc.judge.wait_budget_s("JB-7", "complete_after_resume_s") + PODS_SLACK_S)
    status = job(sc).get("status") or {}
    details = {"status_while_suspended": while_suspended, "status": status}
    sc.expect("JB-7", "suspended_reason", suspended.get("reason"), details=details)
    sc.expect("JB-7", "suspended_message", suspended.get("message"), details=details)
    sc.expect("JB-7", "events", " ".join(e.obj.get("reason") for e in sc.recorder.changes("Event")
                                         if e.obj.get("reason") in ("Suspended", "Resumed")
                                         and (e.obj.get("involvedObject") or {}).get("kind") == "Job"))
    sc.expect("JB-7", "pod_deleted_on_suspend", deletion_requested(sc, first) is not None)
    sc.expect("JB-7", "failed", status.get("failed", 0), details=details)
    gate = gates.api_server(sc.kube).describe(GATE)
    sc.note(f"gate {GATE}", gate)
    sc.expect("JB-7", "start_time_while_suspended", "cleared" if not while_suspended.get("startTime") else "kept",
              details={**details, f"gate {GATE}": gate})
    started = parse_time(status.get("startTime"))
    sc.expect("JB-7", "start_time_after_resume_s", None if started is None else started - resumed_at, details=details)
    sc.expect("JB-7", "complete_after_resume_s", parse_time(complete.get("lastTransitionTime")) - resumed_at, details=details)
    sc.expect("JB-7", "succeeded", status.get("succeeded", 0), details=details)
    left = [n for n, p in job_pods(sc).items() if TRACKING in ((p.get("metadata") or {}).get("finalizers") or [])
            and deleted_change(sc, "Pod", n) is None]
    sc.expect("JB-7", "tracking_finalizers_left", len(left), details={"pods": left})
    sc.note("resumed_condition", str(condition(job(sc), "Suspended")))
