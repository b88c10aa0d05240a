"""A wait that times out on a judged measurement has a verdict (issue 20, item 10)."""

from __future__ import annotations

import json

import pytest

from e2e.judge.expectations import Band, Expectation, Registry
from e2e.judge.measurements import ExpectationFailed, Judge, MeasurementLog
from e2e.run.scenario import Scenario
from e2e.base.waiting import WaitTimeout


class QuietRecorder:
    started_at = 0.0

    def changes(self, kind=None, name=None):
        return []

    def check(self, since=None):
        pass


@pytest.fixture
def sc(tmp_path) -> Scenario:
    r = Registry()
    r.add(Expectation("ZZ-1", "job_complete_after_s", 5.0, "[UP] test", unit="s", band=Band(4, 8), why="mechanism"))
    judge = Judge(MeasurementLog(tmp_path / "m.json"), "t", "r", "v1.37.2", minor=37, registry=r)
    return Scenario(None, "ns", QuietRecorder(), judge, tmp_path, 37, 1)


def test_a_hang_on_a_judged_measurement_fails_with_its_case_and_band(sc, tmp_path):
    with pytest.raises(ExpectationFailed) as err:
        sc.wait_for("job z complete", lambda: None, 0.3, interval_s=0.05, case="ZZ-1", measurement="job_complete_after_s")
    text = str(err.value)
    assert "Z-1 job_complete_after_s: measured nothing, expected 5 s within [4, 8] s" in text
    assert "timed out after 0.3 s waiting for job z complete" in text
    (m,) = json.loads((tmp_path / "m.json").read_text())["measurements"]
    assert (m["verdict"], m["value"], m["details"]["timed_out_after_s"]) == ("fail", None, 0.3)


def test_a_plain_wait_still_times_out_as_before(sc):
    with pytest.raises(WaitTimeout, match="timed out after 0.2 s waiting for x"):
        sc.wait_for("x", lambda: None, 0.2, interval_s=0.05)


def test_a_timed_out_wait_says_what_the_scenario_explains(sc):
    with pytest.raises(WaitTimeout) as err:
        sc.wait_for("10 pods ended", lambda: None, 0.2, interval_s=0.05, explain=lambda: "not ended: evict-exit0-3 phase Running")
    assert "last observed: \nnot ended: evict-exit0-3 phase Running\n" in str(err.value)


def test_a_value_read_as_none_is_not_reported_as_a_timeout(sc, tmp_path):
    # issue 29: "measured nothing" is a wait that timed out; a value the test read as None (a
    # condition without a reason, a field not set) says so instead, wherever it is shown
    sc.judge.registry.add(Expectation("ZZ-1", "reason", "DeadlineExceeded", "[UP] test"))
    sc.expect("ZZ-1", "reason", None)
    with pytest.raises(ExpectationFailed) as err:
        sc.judge.verify()
    text = str(err.value)
    assert "ZZ-1 reason: measured None (a value read as None, not a timeout), expected 'DeadlineExceeded'" in text
    assert "nothing" not in text
    assert "measured None (a value read as None, not a timeout)" in sc.judge.summary()


def test_a_timeout_stays_measured_nothing_in_the_summary_too(sc):
    with pytest.raises(ExpectationFailed):
        sc.wait_for("job z complete", lambda: None, 0.2, interval_s=0.05, case="ZZ-1", measurement="job_complete_after_s")
    assert "measured nothing  expected 5 s within [4, 8] s" in sc.judge.summary()
