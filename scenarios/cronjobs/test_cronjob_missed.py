"""CJ-4 — missed slots: suspend, deadline, and too many misses (CASES-workloads.md §1.7 W27, W30, W31, W34; §4 CJ-4).

Three CronJobs on ``* * * * *``, created suspended; their ``status.lastScheduleTime`` is patched
into the past (status subresource) instead of waiting out a suspension: (a) "missed" 3 slots back,
(b) "deadline" the same with ``startingDeadlineSeconds: 20``, (c) "too-many" 3 hours back (180
slots). All three are resumed together, 22–45 s into a minute:

- (a) exactly one Job at once, for the newest missed slot (its name and scheduled-timestamp);
- (b) no Job (the newest slot is past the deadline, outside the controller's search window: no
  ``MissSchedule`` either), then a Job at the next slot;
- (c) a Warning ``TooManyMissedTimes``, and still one Job for the newest slot.
"""

from __future__ import annotations

import time

import pytest

from e2e.documented import cronjobs as doc
from e2e.measure.cronjobs import jobs_at_resume, rfc3339, slot_job
from e2e.measure.values import expect_all
from e2e.record.timeline import parse_time
from e2e.run.scenario import Scenario
from e2e.base.waiting import WAIT_SLACK_S

from .test_cronjob_api import BASE

# a workload family (CASES-workloads.md): `make e2e-workloads`, not in the default `make e2e`
pytestmark = pytest.mark.workloads

VARIANTS = {"missed": ("cj-missed", "null", 60 * doc.CJ4_MISSED_SLOTS),
            "deadline": ("cj-deadline", doc.CJ4_DEADLINE_S, 60 * doc.CJ4_MISSED_SLOTS),
            "too-many": ("cj-too-many", "null", 3600 * doc.CJ4_HOURS_BACK)}


def jobs_of(sc: Scenario, cronjob: str) -> dict[str, dict]:
    """The Jobs the CronJob created (its name a prefix), first recorded state by name."""
    out: dict[str, dict] = {}
    for ch in sc.recorder.changes("Job"):
        if ch.name.startswith(cronjob + "-") and ch.name[len(cronjob) + 1:].isdigit() and ch.name not in out:
            out[ch.name] = ch.obj
    return out


@pytest.mark.record("Pod", "Event", "Job")
@pytest.mark.case("CJ-4")
def test_missed_slots(scenario: Scenario):
    """CJ-4: one Job for the newest missed slot; none past the deadline (no MissSchedule), then one
    at the next slot; TooManyMissedTimes and still one Job after 180 missed slots."""
    sc = scenario
    now = time.time()
    newest_before = now - now % 60
    for name, deadline, back_s in VARIANTS.values():
        sc.apply("cronjob.yaml", **{**BASE, "name": name, "schedule": "* * * * *", "deadline": deadline, "suspend": "true"})
        sc.patch("CronJob", name, {"status": {"lastScheduleTime": rfc3339(newest_before - back_s)}}, patch_type="merge",
                 subresource="status")
    low, high = doc.CJ4_RESUME_WINDOW
    second = time.time() % 60
    if not low <= second <= high:
        time.sleep((low - second) % 60)
    resumed_at = time.time()
    sc.require(low - 1 <= resumed_at % 60 <= high + 1, f"the resume falls {low}–{high} s into a minute: {resumed_at % 60:.1f}")
    slot = resumed_at - resumed_at % 60          # the newest slot before the resume
    for name, _, _ in VARIANTS.values():
        sc.patch("CronJob", name, {"spec": {"suspend": False}}, patch_type="merge")
    settle = min(doc.CJ_SYNC_S + WAIT_SLACK_S / 6, slot + 59 - time.time())  # stay inside this minute
    sc.wait_for("Jobs for cj-missed and cj-too-many", lambda: jobs_of(sc, "cj-missed") and jobs_of(sc, "cj-too-many") or None,
                max(settle, 1.0))
    time.sleep(max(0.0, min(2.0, slot + 59 - time.time())))  # a second Job would come in the same sync
    for key in ("missed", "too-many"):
        name = VARIANTS[key][0]
        jobs = jobs_of(sc, name)
        created = {n: {"created": j["metadata"]["creationTimestamp"], "annotations": j["metadata"].get("annotations")}
                   for n, j in jobs.items()}
        expect_all(sc.expect, jobs_at_resume(key, name, created, slot, resumed_at))
    warning = sc.events("TooManyMissedTimes", "cj-too-many")
    sc.expect("CJ-4", "too_many_missed_message", warning[0].obj.get("message") if warning else None)
    sc.expect("CJ-4", "too_many_missed_type", warning[0].obj.get("type") if warning else None)

    name = VARIANTS["deadline"][0]
    sc.expect("CJ-4", "jobs_at_resume[deadline]", len(jobs_of(sc, name)), details={"jobs": sorted(jobs_of(sc, name))})
    next_slot = slot + 60
    nxt = sc.wait_for(f"a Job for {name} at the next slot", lambda: jobs_of(sc, name).get(slot_job(name, next_slot)),
                      next_slot - time.time() + sc.judge.wait_budget_s("CJ-4", "next_job_after_slot_s[deadline]") + WAIT_SLACK_S)
    sc.expect("CJ-4", "miss_schedule_events[deadline]", len(sc.events("MissSchedule", name)),
              details={"events": [e.obj.get("message") for e in sc.recorder.changes("Event")
                                  if (e.obj.get("involvedObject") or {}).get("name") == name]})
    sc.expect("CJ-4", "next_job_after_slot_s[deadline]", parse_time(nxt["metadata"]["creationTimestamp"]) - next_slot,
              details={"job": nxt["metadata"]["name"], "slot": rfc3339(next_slot)})
