"""e2e.report.history: values-history.jsonl, one line per run — appended once (recording a run again
replaces its line), capped to the last KEEP runs, a line that cannot be read named and skipped."""

from __future__ import annotations

import json

from e2e.report import history
from e2e.report.history import HISTORY, KEEP


def measurement(run_id: str, value: object = 11.0, name: str = "restart_gap[1]", **extra) -> dict:
    return {"case": "CL-1", "name": name, "test": "scenarios/t.py::test_gaps", "run_id": run_id, "value": value,
            "unit": "s", "documented": 10, "band": [9, 23], "verdict": "pass", "kubernetes": "v1.37.2",
            "measured_at": "2026-12-01T02:17:03.000+00:00", "details": {}, "why": "long text", **extra}


def run_ids(reports) -> list[str]:
    return [json.loads(line)["run_id"] for line in (reports / HISTORY).read_text().splitlines()]


def test_a_run_is_one_line_with_every_judged_value(tmp_path):
    ms = [measurement("r1"), measurement("r1", "CrashLoopBackOff", name="reason", band=None, documented="CrashLoopBackOff",
                                         measured_at="2026-12-01T02:17:01.000+00:00"),
          measurement("r0")]
    assert history.record(tmp_path, "r1", ms) == []
    (line,) = (tmp_path / HISTORY).read_text().splitlines()
    run = json.loads(line)
    assert run["run_id"] == "r1" and run["time"] == "2026-12-01T02:17:01.000+00:00"  # its first value
    assert run["values"] == [
        {"case": "CL-1", "name": "restart_gap[1]", "test": "scenarios/t.py::test_gaps", "kubernetes": "v1.37.2",
         "value": 11.0, "unit": "s", "documented": 10, "band": [9, 23], "verdict": "pass"},
        {"case": "CL-1", "name": "reason", "test": "scenarios/t.py::test_gaps", "kubernetes": "v1.37.2",
         "value": "CrashLoopBackOff", "unit": "s", "documented": None, "band": None, "verdict": "pass"}]


def test_recording_the_same_run_again_adds_no_line(tmp_path):
    history.record(tmp_path, "r1", [measurement("r1", 11.0)])
    history.record(tmp_path, "r2", [measurement("r2", 12.0)])
    history.record(tmp_path, "r1", [measurement("r1", 13.0)])
    assert run_ids(tmp_path) == ["r1", "r2"]
    runs, problems = history.read(tmp_path / HISTORY)
    assert [r["values"][0]["value"] for r in runs] == [13.0, 12.0] and problems == []


def test_only_the_last_keep_runs_are_kept(tmp_path):
    for i in range(KEEP + 3):
        history.record(tmp_path, f"r{i:02d}", [measurement(f"r{i:02d}")])
    assert run_ids(tmp_path) == [f"r{i:02d}" for i in range(3, KEEP + 3)]


def test_a_run_without_values_writes_nothing(tmp_path):
    assert history.record(tmp_path, "r1", [measurement("r0")]) == []
    assert not (tmp_path / HISTORY).exists()


def test_a_rerun_keeps_only_the_last_attempt(tmp_path):
    history.record(tmp_path, "r1", [measurement("r1", 30.0), measurement("r1", 12.0, details={"attempt": 2})])
    (run,), _ = history.read(tmp_path / HISTORY)
    assert [v["value"] for v in run["values"]] == [12.0]


def test_a_line_that_cannot_be_read_is_named_skipped_and_dropped(tmp_path):
    good = json.dumps(history.entry([measurement("r1")], "r1"))
    (tmp_path / HISTORY).write_text("\n".join([
        good, "{not json", json.dumps({"run_id": "r2"}), "",
        json.dumps({"run_id": "r3", "time": "", "values": [{"case": "CL-1"}]})]) + "\n")
    runs, problems = history.read(tmp_path / HISTORY)
    assert [r["run_id"] for r in runs] == ["r1"]
    assert [p.split(" (")[0] for p in problems] == [
        f"{HISTORY}:2: not JSON", f"{HISTORY}:3: not a run's line", f"{HISTORY}:5: value 0 is not a judged value"]
    assert history.record(tmp_path, "r4", [measurement("r4")]) == problems
    assert run_ids(tmp_path) == ["r1", "r4"]


def test_a_missing_history_is_no_run_and_no_problem(tmp_path):
    assert history.read(tmp_path / HISTORY) == ([], [])
