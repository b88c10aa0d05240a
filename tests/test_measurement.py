"""The measurement record (e2e.base.measurement): what the judge writes is what the reports read
back, entries of real runs round-trip unchanged, and an entry that is no measurement is refused
by name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from e2e.base.measurement import BadMeasurement, Measurement
from e2e.judge.expectations import Band, Expectation, Registry
from e2e.judge.measurements import Judge, MeasurementLog

DATA = Path(__file__).resolve().parent / "data"
REAL = sorted(DATA.glob("**/measurements.json"))


@pytest.mark.parametrize("path", REAL, ids=lambda p: str(p.relative_to(DATA)))
def test_entries_of_real_runs_round_trip_unchanged(path):
    # every field an entry has comes back as it was; a field added since (verified_in, fact) takes its default
    items = json.loads(path.read_text())["measurements"]
    assert items
    for m in items:
        back = Measurement.from_json(m).to_json()
        assert {k: back[k] for k in m} == m
        added = {k: back[k] for k in back.keys() - m.keys()}
        assert added == {k: v for k, v in {"verified_in": [], "fact": ""}.items() if k in added}


def test_what_the_judge_writes_reads_back_as_the_same_record(tmp_path):
    r = Registry()
    r.add(Expectation("XX-1", "gap", 10, "[UP]", unit="s", band=Band(9, 12), why="one period", verified_in=("1.37.2",)))
    log = MeasurementLog(tmp_path / "measurements.json")
    judge = Judge(log, "t.py::test_x", "run", "v1.37.2", minor=37, registry=r)
    judge.expect("XX-1", "gap", 11.0, details={"n": 1})
    (written,) = log.read()["measurements"]
    back = Measurement.from_json(written)
    assert back == judge.verdicts[0].measurement
    assert (back.verdict, back.band, back.details) == ("pass", [9, 12], {"n": 1})


def test_an_entry_written_before_a_field_existed_takes_its_default():
    old = {k: v for k, v in _entry().items() if k not in ("verified_in", "where", "cgroup", "template")}
    m = Measurement.from_json(old)
    assert (m.verified_in, m.where, m.cgroup, m.template) == ([], "", None, None)


@pytest.mark.parametrize("change, said", [
    (lambda e: e.pop("verdict"), "XX-1 gap of t.py::test_x: missing verdict"),
    (lambda e: e.update(colour="red"), "unknown colour"),
    (lambda e: e.update(verdict=1), "not a string: verdict"),
    (lambda e: e.update(details=[1]), "details is not a JSON object"),
])
def test_an_entry_that_is_no_measurement_is_refused_by_name(change, said):
    entry = _entry()
    change(entry)
    with pytest.raises(BadMeasurement, match=said):
        Measurement.from_json(entry)
    with pytest.raises(BadMeasurement, match="a JSON object, not list"):
        Measurement.from_json([entry])


def _entry() -> dict:
    return {"case": "XX-1", "name": "gap", "value": 11.0, "unit": "s", "documented": 10, "band": [9, 12],
            "why": "w", "source": "s", "versions": "1.37–newer", "verdict": "pass", "test": "t.py::test_x",
            "run_id": "r", "kubernetes": "v1.37.2", "measured_at": "", "details": {}, "template": 10,
            "cgroup": None, "where": "", "verified_in": ["1.37.2"]}
