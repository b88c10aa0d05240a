"""CJ-2 — slot timing, naming, status and history (CASES-workloads.md §1.7 W27, W33; §4 CJ-2). ``slow``: six
minute slots.

``*/1 * * * *`` with history limits 2 (successful) and 1 (failed); each Job exits with its minute's
parity (even: 0, odd: 1). Every Job is created at its slot, named ``cj-<slot Unix minutes>`` and
annotated with the slot; ``lastScheduleTime`` is the newest slot; ``SuccessfulCreate`` once per slot,
``SawCompletedJob`` per finished Job; at the end 2 Complete and 1 Failed Jobs are left, the oldest
removed first.
"""

from __future__ import annotations

import time

import pytest

from e2e.documented import cronjobs as doc
from e2e.measure.cronjobs import SCHEDULED, rfc3339, slot_job
from e2e.record.pods import condition
from e2e.record.timeline import parse_time
from e2e.run.scenario import Scenario
from e2e.base.waiting import WAIT_SLACK_S

from .test_cronjob_api import BASE
from .test_cronjob_missed import jobs_of

# a workload family (CASES-workloads.md): `make e2e-workloads`, not in the default `make e2e`
pytestmark = pytest.mark.workloads

PARITY = "$(( $(date +%M) % 2 ))"


def finished(job: dict) -> str | None:
    for type_ in ("Complete", "Failed"):
        if (condition(job, type_) or {}).get("status") == "True":
            return type_
    return None


@pytest.mark.slow
@pytest.mark.record("Pod", "Event", "Job")
@pytest.mark.case("CJ-2")
def test_slots_and_history(scenario: Scenario):
    """CJ-2: six slots: each Job at its slot, named and annotated after it; history pruned to 2
    Complete and 1 Failed, oldest first."""
    sc = scenario
    sc.apply("cronjob.yaml", **{**BASE, "schedule": "*/1 * * * *", "successful_limit": doc.CJ2_SUCCESSFUL_LIMIT,
                                "failed_limit": doc.CJ2_FAILED_LIMIT, "exit_code": PARITY})
    first_slot = (time.time() // 60 + 1) * 60
    last_slot = first_slot + 60 * (doc.CJ2_SLOTS - 1)

    def last_done() -> bool:
        latest = {ch.name: ch.obj for ch in sc.recorder.changes("Job") if ch.type != "DELETED"}
        return finished(latest.get(slot_job("cj", last_slot)) or {}) is not None

    sc.wait_for(f"{doc.CJ2_SLOTS} slots, the last Job finished", lambda: last_done() or None,
                last_slot - time.time() + WAIT_SLACK_S)
    time.sleep(2)  # the cleanup after the last Job's completion runs in the next sync
    created = jobs_of(sc, "cj")
    slots = [first_slot + 60 * i for i in range(doc.CJ2_SLOTS)]
    details = {n: {"created": j["metadata"]["creationTimestamp"], "annotation": (j["metadata"].get("annotations") or {}).get(SCHEDULED)}
               for n, j in created.items()}
    for i, slot in enumerate(slots):
        job = created.get(slot_job("cj", slot))
        sc.expect("CJ-2", f"created_after_slot_s[{i}]",
                  None if job is None else parse_time(job["metadata"]["creationTimestamp"]) - slot, details=details)
    named = sum(1 for slot in slots if slot_job("cj", slot) in created
                and (created[slot_job("cj", slot)]["metadata"].get("annotations") or {}).get(SCHEDULED) == rfc3339(slot))
    sc.expect("CJ-2", "jobs_named_after_their_slot", named, details=details)
    sc.expect("CJ-2", "created_events", len({e.obj.get("message") for e in sc.events("SuccessfulCreate", "cj")}),
              details={"events": [e.obj.get("message") for e in sc.events("SuccessfulCreate", "cj")]})
    saw = sc.events("SawCompletedJob", "cj")
    sc.expect("CJ-2", "saw_completed_message", saw[0].obj.get("message") if saw else None,
              details={"events": [e.obj.get("message") for e in saw]})
    cj = sc.get("CronJob", "cj") or {}
    sc.expect("CJ-2", "last_schedule_time", (cj.get("status") or {}).get("lastScheduleTime"), slot=rfc3339(last_slot),
              details={"status": cj.get("status")})
    left = {ch.name: ch.obj for ch in sc.recorder.changes("Job") if ch.name in created}
    gone = {ch.name for ch in sc.recorder.changes("Job") if ch.type == "DELETED"}
    kept = {n: finished(j) for n, j in left.items() if n not in gone}
    sc.expect("CJ-2", "complete_jobs_left", sum(1 for t in kept.values() if t == "Complete"), details={"kept": kept})
    sc.expect("CJ-2", "failed_jobs_left", sum(1 for t in kept.values() if t == "Failed"), details={"kept": kept})
    # oldest first: within each kind, every deleted Job is older than every kept one
    ok = all(not (n in gone and m in kept and finished(left[n]) == kept[m] and n > m) for n in left for m in kept)
    sc.expect("CJ-2", "oldest_deleted_first", ok, details={"kept": kept, "deleted": sorted(gone),
                                                           "events": [e.obj.get("message") for e in sc.events("SuccessfulDelete", "cj")]})
