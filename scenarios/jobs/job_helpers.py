"""Shared by the Job scenarios (JB, and DR-5/DR-6 in scenarios/disruption/test_job.py): a Job's
conditions and pods as the recorder saw them, for Jobs of any name."""

from __future__ import annotations

from e2e.record.pods import condition
from e2e.record.recorder import Change
from e2e.record.timeline import parse_time
from e2e.run.scenario import Scenario


def job(sc: Scenario, name: str = "job") -> dict:
    return sc.get("Job", name) or {}


def job_finished(sc: Scenario, name: str = "job") -> dict | None:
    """The Job's Complete or Failed condition once it has one."""
    for type_ in ("Complete", "Failed"):
        found = condition(job(sc, name), type_)
        if found and found.get("status") == "True":
            return found
    return None


def condition_seen(sc: Scenario, type_: str, name: str = "job") -> dict | None:
    """The Job's condition ``type_`` (status True) as first recorded, also after it was replaced."""
    for ch in sc.recorder.changes("Job", name):
        found = condition(ch.obj, type_)
        if found and found.get("status") == "True":
            return found
    return None


def job_pods(sc: Scenario, job_name: str = "job") -> dict[str, dict]:
    """Every pod of ``job_name`` ever recorded: name → its last recorded state (before a DELETED)."""
    out: dict[str, dict] = {}
    for ch in sc.recorder.changes("Pod"):
        labels = (ch.obj.get("metadata") or {}).get("labels") or {}
        if labels.get("job-name") != job_name:
            continue
        if ch.type != "DELETED" or ch.name not in out:
            out[ch.name] = ch.obj
    return out


def by_creation(pods: dict[str, dict]) -> list[dict]:
    return sorted(pods.values(), key=lambda p: (parse_time(p["metadata"]["creationTimestamp"]), p["metadata"]["name"]))


def index_of(pod: dict) -> str | None:
    return ((pod.get("metadata") or {}).get("annotations") or {}).get("batch.kubernetes.io/job-completion-index")


def terminated(sc: Scenario, pod: str) -> dict | None:
    """The ``terminated`` state of ``pod``'s first container, first recorded."""
    for ch in sc.recorder.changes("Pod", pod):
        for cs in (ch.obj.get("status") or {}).get("containerStatuses") or []:
            term = (cs.get("state") or {}).get("terminated")
            if term:
                return term
    return None


def finished_at(sc: Scenario, pod: str) -> float | None:
    return parse_time((terminated(sc, pod) or {}).get("finishedAt"))


def deletion_requested(sc: Scenario, pod: str) -> float | None:
    """When ``pod``'s deletion was asked for (API time, epoch s), first recorded: its
    ``deletionTimestamp`` is the request's time plus the grace period
    (``metadata.deletionGracePeriodSeconds``), the moment the pod is due to be gone."""
    for ch in sc.recorder.changes("Pod", pod):
        meta = ch.obj.get("metadata") or {}
        stamp = parse_time(meta.get("deletionTimestamp"))
        if stamp is not None:
            return stamp - (meta.get("deletionGracePeriodSeconds") or 0)
    return None


def deleted_change(sc: Scenario, kind: str, name: str) -> Change | None:
    return next((ch for ch in sc.recorder.changes(kind, name) if ch.type == "DELETED"), None)


def status_history(sc: Scenario, name: str = "job") -> list[dict]:
    return [ch.obj.get("status") or {} for ch in sc.recorder.changes("Job", name)]
