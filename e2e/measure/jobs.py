"""JB: a Job's end read from its recording (CASES-workloads.md §4 JB-2, JB-3, JB-8) — pure functions
over recorded changes and the stored status, the values :mod:`scenarios.jobs` judges and
tests/test_mutations.py feeds with mutated records."""

from __future__ import annotations

from e2e.record.pods import condition
from e2e.record.recorder import Change, written_before
from e2e.record.timeline import parse_time

from .values import Value

#: The conditions every pod carries; any other is one a podFailurePolicy rule could match (JB-3).
STANDARD_CONDITIONS = frozenset({"PodScheduled", "Initialized", "ContainersReady", "Ready", "PodReadyToStartContainers"})


def end_reason(finished: dict) -> str | None:
    """The Job's end as judged: a ``Failed`` condition's reason, else the condition's type (``Complete``)."""
    return finished.get("reason") if finished.get("type") == "Failed" else finished.get("type")


def restarts(pod: dict) -> int:
    """The sum of the restartCounts of ``pod``'s containers."""
    return sum(cs.get("restartCount", 0) for cs in (pod.get("status") or {}).get("containerStatuses") or [])


def restarts_up_to_failure_target(pod_changes: list[Change], job_changes: list[Change]) -> tuple[list[int], list[int]]:
    """(the pod's restart count in each recorded change before its deletion, in each change written
    before the Job's first FailureTarget=True — every change when the Job got none). Written before:
    :func:`e2e.record.recorder.written_before` (the pod's change that caused the FailureTarget can be
    received after it, on another watch stream); ``ValueError`` for a change without resourceVersion."""
    counts = [restarts(ch.obj) for ch in pod_changes if not ch.obj["metadata"].get("deletionTimestamp")]
    target = next((ch for ch in job_changes if (condition(ch.obj, "FailureTarget") or {}).get("status") == "True"), None)
    before = [restarts(ch.obj) for ch in pod_changes if target is None or written_before(ch, target)]
    return counts, before


def restart_count_at_failure(counts: list[int], before: list[int], finished: dict) -> Value:
    """JB-8 (a) ``restart_count_at_failure``: the highest restart count recorded up to the FailureTarget
    (0 with none) — the count the controller compared with backoffLimit (``>=``)."""
    return Value("JB-8", "restart_count_at_failure", max(before or [0]),
                 {"restart_counts": counts, "before_failure_target": before, "condition": finished})


def failure_target(job_status: dict) -> dict:
    """The Job status's FailureTarget condition ({} without one)."""
    return condition({"status": job_status}, "FailureTarget") or {}


def active_deadline(pods: list[dict], job_status: dict) -> list[Value]:
    """JB-2 (a) from the Job's pods by creation (each ``{"name", "created", "deletionTimestamp",
    "terminated"}``, its last recorded state) and the Job's status: ``failure_target_after_start_s``
    (FailureTarget's lastTransitionTime − startTime, s; None when either is missing), ``pods_total``,
    ``running_pod_deleted`` (the last pod's deletion asked for and its TERM trap's exit 143)."""
    details = {"pods": pods, "job_status": job_status}
    target, started = parse_time(failure_target(job_status).get("lastTransitionTime")), parse_time(job_status.get("startTime"))
    last = pods[-1] if pods else {}
    return [Value("JB-2", "failure_target_after_start_s", None if target is None or started is None else target - started, details),
            Value("JB-2", "pods_total", len(pods), details),
            Value("JB-2", "running_pod_deleted", bool(last) and last.get("deletionTimestamp") is not None
                  and (last.get("terminated") or {}).get("exitCode") == 143, details)]


def deadline_failure(pod_status: dict) -> list[Value]:
    """JB-3 from the status the pod was first seen Failed with: ``pod_phase``, ``pod_reason``,
    ``disruption_target`` (a DisruptionTarget condition), ``deadline_condition`` (any condition
    beyond :data:`STANDARD_CONDITIONS` naming a deadline in its type or reason: known bug
    kubernetes#115688 says none)."""
    conditions = pod_status.get("conditions") or []
    extra = [c for c in conditions if c.get("type") not in STANDARD_CONDITIONS]
    details = {"pod_status": pod_status}
    return [Value("JB-3", "pod_phase", pod_status.get("phase"), details),
            Value("JB-3", "pod_reason", pod_status.get("reason"), details),
            Value("JB-3", "disruption_target", any(c.get("type") == "DisruptionTarget" for c in conditions), details),
            Value("JB-3", "deadline_condition", any("Deadline" in f"{c.get('type')} {c.get('reason')}" for c in extra),
                  {**details, "other_conditions": extra})]
