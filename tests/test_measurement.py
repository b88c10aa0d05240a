"""The measurement record (e2e.base.measurement): what the judge writes is what the reports read
back, entries of real runs round-trip unchanged, and an entry that is no measurement is refused
by name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from e2e.base.measurement import BadMeasurement, Measurement, still_has
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


def _kb(case, name, verdict, kubernetes="v1.36.2", issue="kubernetes/kubernetes#141155", expected="present",
        fix="the fix is cherry-pick kubernetes/kubernetes#142042 to release-1.36 (open), not yet released", **details):
    kb = {"issue": issue, "buggy": "b", "correct": "c", "mechanism": "m", "expected": expected, "fix": fix}
    return {"case": case, "name": name, "verdict": verdict, "kubernetes": kubernetes, "details": {"known_bug": kb, **details}}


def test_still_has_lists_each_bug_a_patch_still_has_with_the_fix_that_would_remove_it():
    """Issue 44: "your patch v1.36.2 still has #141155; the fix is cherry-pick #142042, not yet
    released" (the shape; the values are the issue's example, no case of the suite's)."""
    lines = still_has([
        _kb("KB-9", "a", "bug-present"), _kb("KB-9", "b", "unverified-carried-forward", judged="bug-present"),
        _kb("KB-9", "a", "bug-present"),  # a second value of the same name: named once
        _kb("KB-8", "x", "pass", issue="k/k#1", race={"outcome": "did not happen"}),  # a race the patch still has
        _kb("KB-7", "y", "bug-present-despite-fix", kubernetes="v1.36.3", issue="k/k#2", expected="fixed",
            fix="the fix k/k#3 (merged) is released in 1.36.3"),
        _kb("KB-6", "z", "bug-fixed", issue="k/k#4"),  # gone: not what the patch still has (a finding of its own)
        _kb("KB-5", "w", "fixed-as-expected", issue="k/k#5", expected="fixed"),
        _kb("KB-4", "v", "pass", issue="k/k#6", expected="fixed", race={"outcome": "did not happen"}),
        {"case": "CL-1", "name": "gap", "verdict": "pass", "kubernetes": "v1.36.2", "details": {}},
        {**_kb("KB-3", "old", "bug-present", issue="k/k#7"), "details": {"known_bug": {"issue": "k/k#7"}}},  # no fix recorded
    ])
    assert lines == [
        "v1.36.2 still has kubernetes/kubernetes#141155 — KB-9 a, KB-9 b: the fix is cherry-pick "
        "kubernetes/kubernetes#142042 to release-1.36 (open), not yet released",
        "v1.36.2 still has k/k#1 — KB-8 x (a race, not seen this run): the fix is cherry-pick kubernetes/kubernetes#142042 "
        "to release-1.36 (open), not yet released",
        "v1.36.3 still has k/k#2 — KB-7 y although its fix should be in: the fix k/k#3 (merged) is released in 1.36.3",
        "v1.36.2 still has k/k#7 — KB-3 old",
    ]
    assert still_has([]) == []
