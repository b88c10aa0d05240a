"""JB-6 — podReplacementPolicy and ``status.terminating`` (CASES-workloads.md §4 JB-6; complements DR-5).

Two Jobs (no podFailurePolicy, backoffLimit 3) whose pod ignores SIGTERM (grace 15 s); each
running pod is deleted. ``TerminatingOrFailed`` counts the pod failed at the delete and replaces it
after the first back-off (10 s from the deletion request) while it is still terminating;
``Failed`` waits for the pod to be Failed (SIGKILL at 15 s), then the back-off: the replacement
comes 25 s after the delete, and ``terminating`` is 1, ``active`` 0 meanwhile.
"""

from __future__ import annotations

import pytest

from e2e.documented import jobs as doc
from e2e.record.recorder import Change, written_before
from e2e.record.timeline import parse_time
from e2e.run.scenario import Scenario
from e2e.base.waiting import PODS_SLACK_S

from .job_helpers import by_creation, job_pods

# a workload family (CASES-workloads.md): `make e2e-workloads`, not in the default `make e2e`
pytestmark = pytest.mark.workloads

POLICIES = {"TerminatingOrFailed": "replace-early", "Failed": "replace-late"}


def running(pod: dict) -> bool:
    return any("running" in (cs.get("state") or {}) for cs in (pod.get("status") or {}).get("containerStatuses") or [])


def settled(sc: Scenario, job: str) -> bool:
    """The Job's status shows its replacement active and no pod terminating any more."""
    status = (sc.get("Job", job) or {}).get("status") or {}
    return status.get("active", 0) >= 1 and not status.get("terminating")


def _written(ch: Change | None) -> dict | None:
    """A change's receive time and resourceVersion, for the details."""
    return None if ch is None else {"received_at": ch.received_at, "resourceVersion": ch.obj["metadata"].get("resourceVersion")}


@pytest.mark.record("Pod", "Event", "Job")
@pytest.mark.case("JB-6")
def test_pod_replacement_policy(scenario: Scenario):
    """JB-6: replacement after the delete + back-off (TerminatingOrFailed) or after the kill + back-off
    (Failed); failed counted at the delete or at the kill; active/terminating meanwhile."""
    sc = scenario
    for policy, name in POLICIES.items():
        sc.apply("job-replacement.yaml", name=name, policy=policy, grace=doc.JB6_GRACE_S)
    first = {name: sc.wait_for(f"{name}'s pod running", lambda name=name: next(
        (n for n, p in job_pods(sc, name).items() if running(p)), None), PODS_SLACK_S) for name in POLICIES.values()}
    deleted_at = {name: sc.delete_pod(pod) for name, pod in first.items()}
    budget = sc.judge.wait_budget_s("JB-6", "replacement_after_delete_s[Failed]") + PODS_SLACK_S
    for policy, name in POLICIES.items():
        new = sc.wait_for(f"{name}'s replacement", lambda name=name: next(
            (p for n, p in job_pods(sc, name).items() if n != first[name]), None), budget)
        # judge the status history once the old pod has left status.terminating (its kill at the grace
        # period's end) and the replacement is active: the history then holds every step between
        sc.wait_for(f"{name}: the replacement active, nothing terminating", lambda name=name: settled(sc, name), budget)
        old = first[name]
        old_done = next((ch for ch in sc.recorder.changes("Pod", old)
                         if (ch.obj.get("status") or {}).get("phase") in ("Failed", "Succeeded")), None)
        job_changes = sc.recorder.changes("Job", name)
        history = [ch.obj.get("status") or {} for ch in job_changes]
        failed = next((ch for ch, s in zip(job_changes, history, strict=True) if s.get("failed", 0) >= 1), None)
        details = {"job_status_history": history, "old_pod_terminal": _written(old_done), "failed": _written(failed),
                   "pods": [p["metadata"]["name"] for p in by_creation(job_pods(sc, name))]}
        sc.expect("JB-6", f"replacement_after_delete_s[{policy}]",
                  parse_time(new["metadata"]["creationTimestamp"]) - deleted_at[name], details=details)
        # the Job's count and the pod's phase come on two watch streams, in no common order (with Failed
        # the count follows the phase by ms and can be received first): their write order says which came first
        sc.expect("JB-6", f"failed_before_old_pod_finished[{policy}]",
                  failed is not None and (old_done is None or written_before(failed, old_done)), details=details)
        sc.expect("JB-6", f"max_active_while_terminating[{policy}]",
                  max((s.get("active", 0) for s in history if s.get("terminating", 0) > 0), default=0), details=details)
        if policy == "Failed":
            sc.expect("JB-6", "max_terminating[Failed]", max((s.get("terminating", 0) for s in history), default=0),
                      details=details)
