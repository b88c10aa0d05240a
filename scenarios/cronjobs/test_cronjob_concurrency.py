"""CJ-3 — concurrency policies (CASES-workloads.md §1.7 W32; §4 CJ-3; R37). ``slow``: about 3 min.

Five CronJobs on ``*/1 * * * *`` at once, each Job running 90 s (past the next slot M0+60):

- Forbid (no deadline; deadline 200 s): M0+60 is skipped (``JobAlreadyActive``) while the first Job
  runs, and not lost: its Job starts as the first ends (≈ M0+92), annotated M0+60;
- Forbid with deadline 20 s: by then the skipped slot is past the deadline; the next Job is M0+120's,
  on its slot, and no ``MissSchedule`` is emitted (the controller never finds the old slot);
- Replace: at M0+60 the first Job is deleted and the second created in the same sync;
- Allow: the second Job runs beside the first.
"""

from __future__ import annotations

import time

import pytest

from e2e.documented import cronjobs as doc
from e2e.measure.cronjobs import SCHEDULED, rfc3339
from e2e.record.timeline import parse_time
from e2e.run.scenario import Scenario
from e2e.base.waiting import WAIT_SLACK_S

from .test_cronjob_api import BASE
from .test_cronjob_missed import jobs_of

# a workload family (CASES-workloads.md): `make e2e-workloads`, not in the default `make e2e`
pytestmark = pytest.mark.workloads

POLICIES = {"forbid": "Forbid", "forbid-20": "Forbid", "forbid-200": "Forbid", "replace": "Replace", "allow": "Allow"}


def slot_label(annotation: str | None, m0: float) -> str:
    """``M0+60`` for the annotation of the slot 60 s after M0."""
    t = parse_time(annotation)
    return "none" if t is None else f"M0+{int(t - m0)}"


@pytest.mark.slow
@pytest.mark.record("Pod", "Event", "Job")
@pytest.mark.case("CJ-3")
def test_concurrency_policies(scenario: Scenario):
    """CJ-3: Forbid keeps the skipped slot (R37) unless it is past the deadline; Replace deletes and
    creates in one sync; Allow overlaps."""
    sc = scenario
    now = time.time()
    if now % 60 > 50:  # the five creations must land before the first slot
        time.sleep(61 - now % 60)
    m0 = (time.time() // 60 + 1) * 60
    for key, policy in POLICIES.items():
        sc.apply("cronjob.yaml", **{**BASE, "name": f"cj-{key}", "schedule": "*/1 * * * *", "concurrency": policy,
                                    "deadline": doc.CJ3_DEADLINES[key], "job_sleep_s": doc.CJ3_JOB_S})
    end = m0 + 120 + doc.CJ_SYNC_S + 2
    sc.wait_for("the slot M0+120 and its Jobs", lambda: time.time() >= end or None, end - time.time() + WAIT_SLACK_S,
                interval_s=1.0)
    jobs = {key: sorted(jobs_of(sc, f"cj-{key}").values(), key=lambda j: j["metadata"]["creationTimestamp"]) for key in POLICIES}
    details = {key: [{"name": j["metadata"]["name"], "created": j["metadata"]["creationTimestamp"],
                      "slot": (j["metadata"].get("annotations") or {}).get(SCHEDULED)} for j in js] for key, js in jobs.items()}
    details["M0"] = rfc3339(m0)

    def second(key: str) -> dict | None:
        return jobs[key][1] if len(jobs[key]) > 1 else None

    def slot_of(job: dict | None) -> str:
        return "none" if job is None else slot_label((job["metadata"].get("annotations") or {}).get(SCHEDULED), m0)

    skip = sc.events("JobAlreadyActive", "cj-forbid")
    sc.expect("CJ-3", "skip_message", skip[0].obj.get("message") if skip else None, details=details)
    for key in ("forbid", "forbid-200", "forbid-20", "replace", "allow"):
        sc.expect("CJ-3", f"second_job_slot[{key}]", slot_of(second(key)), details=details)
    for key in ("forbid", "forbid-200"):
        first_done = next((parse_time(ch.obj["status"]["completionTime"]) for ch in sc.recorder.changes("Job", jobs[key][0]["metadata"]["name"])
                           if (ch.obj.get("status") or {}).get("completionTime")), None) if jobs[key] else None
        nxt = second(key)
        sc.expect("CJ-3", f"second_job_after_first_done_s[{key}]",
                  None if nxt is None or first_done is None else parse_time(nxt["metadata"]["creationTimestamp"]) - first_done,
                  details=details)
    sc.expect("CJ-3", "miss_schedule_events[forbid-20]", len(sc.events("MissSchedule", "cj-forbid-20")), details=details)
    for key, slot in (("forbid-20", m0 + 120), ("replace", m0 + 60)):
        nxt = second(key)
        sc.expect("CJ-3", f"second_job_after_slot_s[{key}]",
                  None if nxt is None else parse_time(nxt["metadata"]["creationTimestamp"]) - slot, details=details)
    first_replace = jobs["replace"][0]["metadata"]["name"] if jobs["replace"] else None
    sc.expect("CJ-3", "first_job_deleted[replace]",
              any(e.obj.get("message") == f"Deleted job {first_replace}" for e in sc.events("SuccessfulDelete", "cj-replace")),
              details={**details, "events": [e.obj.get("message") for e in sc.events("SuccessfulDelete", "cj-replace")]})
    allow = jobs["allow"]
    first_allow_done = next((parse_time(ch.obj["status"]["completionTime"]) for ch in sc.recorder.changes("Job", allow[0]["metadata"]["name"])
                             if (ch.obj.get("status") or {}).get("completionTime")), None) if allow else None
    sc.expect("CJ-3", "overlap[allow]", len(allow) > 1 and (first_allow_done is None
                                                          or parse_time(allow[1]["metadata"]["creationTimestamp"]) < first_allow_done),
              details=details)
