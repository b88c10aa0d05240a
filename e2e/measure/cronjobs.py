"""CJ: the Jobs a CronJob created, read from their recorded metadata (CASES-workloads.md §4 CJ-4) —
the values :mod:`scenarios.cronjobs` judges and tests/test_mutations.py feeds with mutated records."""

from __future__ import annotations

import time

from e2e.record.timeline import parse_time

from .values import Value

#: The annotation the CronJob controller puts on each Job: the slot it was created for (RFC 3339).
SCHEDULED = "batch.kubernetes.io/cronjob-scheduled-timestamp"


def rfc3339(epoch: float) -> str:
    """``epoch`` (s) as the API writes a time: ``2026-12-02T11:02:00Z`` (whole seconds, UTC)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def slot_job(cronjob: str, slot: float) -> str:
    """The name the controller gives the Job of ``slot`` (epoch s): the CronJob's name and the slot in Unix minutes."""
    return f"{cronjob}-{int(slot // 60)}"


def jobs_at_resume(key: str, cronjob: str, jobs: dict[str, dict], slot: float, resumed_at: float) -> list[Value]:
    """CJ-4 for the variant ``key`` from the Jobs of ``cronjob`` recorded after its resume at
    ``resumed_at`` (epoch s; name → ``{"created": creationTimestamp, "annotations": …}``), ``slot``
    the newest slot before the resume (epoch s): ``jobs_at_resume[key]``, ``job_slot[key]``
    (``newest`` when the newest slot's Job is among them, else ``another``) and, for ``missed`` with
    a Job, that Job's (else the first one's) ``scheduled_annotation[missed]`` (the documented
    string's ``{slot}`` filled) and ``job_after_resume_s[missed]`` (its creation − the resume, s)."""
    details = {"jobs": jobs, "resumed_at": resumed_at, "slot": rfc3339(slot)}
    newest = slot_job(cronjob, slot)
    out = [Value("CJ-4", f"jobs_at_resume[{key}]", len(jobs), details),
           Value("CJ-4", f"job_slot[{key}]", "newest" if newest in jobs else "another", details)]
    if key == "missed" and jobs:
        job = jobs.get(newest) or next(iter(jobs.values()))
        created = parse_time(job["created"])
        out += [Value("CJ-4", "scheduled_annotation[missed]", (job.get("annotations") or {}).get(SCHEDULED), details,
                      {"slot": rfc3339(slot)}),
                Value("CJ-4", "job_after_resume_s[missed]", None if created is None else created - resumed_at, details)]
    return out
