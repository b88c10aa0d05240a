"""Values set aside with a reason (Judge.set_aside): written next to the documented value, shown in
the summary, never counted as a failure or a pass."""

from __future__ import annotations

import json

import pytest

from e2e.judge.expectations import Expectation, Registry, UnknownMeasurement
from e2e.judge.measurements import Judge, MeasurementLog


@pytest.fixture
def judge(tmp_path) -> Judge:
    r = Registry()
    r.add(Expectation("OM-5", "oom_score_adj[Guaranteed]", -997, "[S0]"))
    return Judge(MeasurementLog(tmp_path / "measurements.json"), test="t", run_id="r", kubernetes="v1.37.2", minor=37, registry=r)


def test_skipped_value_is_written_with_reason_and_documented_value(judge):
    judge.set_aside("OM-5", "oom_score_adj[Guaranteed]", 0, "skipped", "clamped by the runtime", details={"floor": 0})
    (m,) = json.loads(judge.log.path.read_text())["measurements"]
    assert (m["value"], m["documented"], m["verdict"]) == (0, -997, "skipped")
    assert m["details"] == {"floor": 0, "reason": "clamped by the runtime"}
    assert judge.failures == []
    judge.verify()  # nothing failed
    assert "SKIPPED" in judge.summary() and "oom_score_adj[Guaranteed]" in judge.summary()


def test_only_known_verdicts_and_documented_names(judge):
    with pytest.raises(ValueError):
        judge.set_aside("OM-5", "oom_score_adj[Guaranteed]", 0, "pass", "no")
    with pytest.raises(UnknownMeasurement):
        judge.set_aside("OM-5", "nothing", 0, "flake", "no")
