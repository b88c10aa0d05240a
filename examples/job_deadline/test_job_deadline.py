"""JD-1 — a Job past its activeDeadlineSeconds fails (a case outside CASES.md: the guide's
page "Write your own case", docs/writing-a-case.md, walks through this file).

Documented (read in v1.34.4, v1.35.4, v1.36.3 and v1.37.2, pkg/controller/job/job_controller.go):
the controller requeues the Job for the moment its deadline passes (``syncJob``:
``queue.AddAfter(key, syncDuration)``); then ``pastActiveDeadline`` is true and it sets the
interim condition ``FailureTarget`` with reason ``DeadlineExceeded`` and message "Job was active
longer than specified deadline" (``newFailureCondition``; up to 1.36 through
``delayTerminalCondition``, true with the gate ``JobPodReplacementPolicy``, GA and locked on since
1.34, pkg/features/kube_features.go), and ``Failed`` with the same reason once its pods are gone.
"""

from __future__ import annotations

import pytest

from e2e.judge.expectations import Band, Expectation, register
from e2e.run.scenario import Scenario
from e2e.record.timeline import parse_time

DEADLINE_S = 5
SOURCE = "[UP] pkg/controller/job/job_controller.go syncJob, pastActiveDeadline, newFailureCondition (v1.34.4–v1.37.2)"
READ_IN = ("1.34.4", "1.35.4", "1.36.3", "1.37.2")  # the releases whose source was read for these values
register([
    Expectation("JD-1", "failure_target_after_start_s", DEADLINE_S, SOURCE, unit="s", minors=(34, None),
                band=Band(DEADLINE_S - 1, DEADLINE_S + 3),
                why="−1 s timestamp truncation; +1 s truncation +1 s queue wake-up and sync +1 s status write"),
    Expectation("JD-1", "failure_target_reason", "DeadlineExceeded", SOURCE, minors=(34, None)),
    Expectation("JD-1", "failure_target_message", "Job was active longer than specified deadline", SOURCE, minors=(34, None)),
    Expectation("JD-1", "failed_reason", "DeadlineExceeded", SOURCE, minors=(34, None)),
], verified_in=READ_IN)


@pytest.mark.case("JD-1")
@pytest.mark.record("Pod", "Event", "Job")
def test_job_past_its_deadline_fails(scenario: Scenario):
    sc = scenario
    sc.apply("job.yaml", name="deadline", deadline_s=DEADLINE_S)
    target = sc.wait_for_condition("Job", "deadline", "FailureTarget", timeout_s=DEADLINE_S + 30,
                                   case="JD-1", measurement="failure_target_after_start_s")
    job = sc.get("Job", "deadline")
    started = parse_time(job["status"]["startTime"])
    sc.expect("JD-1", "failure_target_after_start_s", parse_time(target["lastTransitionTime"]) - started)
    sc.expect("JD-1", "failure_target_reason", target.get("reason"))
    sc.expect("JD-1", "failure_target_message", target.get("message"))
    failed = sc.wait_for_condition("Job", "deadline", "Failed", timeout_s=60)
    sc.expect("JD-1", "failed_reason", failed.get("reason"))
