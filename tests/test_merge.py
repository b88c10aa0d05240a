"""e2e.cli.merge: the shards of one run (``--shard I/N``) merged into one reports directory —
counts, values and outcomes as one run's, ``make compare`` single vs merged without a change,
and a shard or test that never reported a visible hole, never a smaller green run. Built from
the real run of tests/data/report-cl, split into two shards."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from e2e.cli import compare as cmp
from e2e.cli.merge import main
from e2e.report import history
from e2e.run.shards import SHARD_FILE

DATA = Path(__file__).resolve().parent / "data" / "report-cl"
RUN = "20261130-131531-504c"
TESTS = ["scenarios/crashloop/test_crashloop.py::test_backoff_gaps_and_waiting_state",
         "scenarios/crashloop/test_crashloop.py::test_failing_init_container_never"]


def junit(tests: list[str], time_s: float) -> str:
    cases = "".join(f'<testcase classname="{t.split("::")[0].removesuffix(".py").replace("/", ".")}" '
                    f'name="{t.split("::")[1]}" time="{time_s / len(tests):.3f}"/>' for t in tests)
    return (f'<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="0" '
            f'skipped="0" tests="{len(tests)}" time="{time_s}">{cases}</testsuite></testsuites>')


def reports(dest: Path, tests: list[str], shard: str | None = None, given: list[str] | None = None) -> Path:
    """A reports directory holding ``tests`` of the real run (their values and allure results)."""
    (dest / "allure-results").mkdir(parents=True)
    for f in (DATA / "allure-results").iterdir():
        if f.name.endswith("-result.json"):
            labels = {label["name"]: label["value"] for label in json.loads(f.read_text())["labels"]}
            if labels.get("_nodeid") not in tests:
                continue
        shutil.copy(f, dest / "allure-results" / f.name)
    items = [m for m in json.loads((DATA / "measurements.json").read_text())["measurements"] if m["test"] in tests]
    (dest / "measurements.json").write_text(json.dumps({"measurements": items}))
    (dest / "junit.xml").write_text(junit(tests, 100.0 * len(tests)))
    if shard:
        (dest / SHARD_FILE).write_text(json.dumps({"shard": shard, "run_id": RUN, "tests": given or tests}))
    return dest


@pytest.fixture
def shards(tmp_path):
    return [reports(tmp_path / "s1", TESTS[:1], "1/2"), reports(tmp_path / "s2", TESTS[1:], "2/2")]


def test_two_shards_merge_into_one_run_with_the_counts_and_values_of_a_single_one(tmp_path, shards, capsys):
    single = reports(tmp_path / "single", TESTS)
    assert main([*map(str, shards), "--out", str(tmp_path / "m"), "--no-html"]) == 0
    assert "every shard and every test reported" in capsys.readouterr().out
    merged = json.loads((tmp_path / "m" / "measurements.json").read_text())["measurements"]
    assert len(merged) == len(json.loads((single / "measurements.json").read_text())["measurements"]) == 17
    assert {m["run_id"] for m in merged} == {f"merged-{RUN}"}
    assert {m["details"]["shard"] for m in merged} == {"1/2", "2/2"}
    a, b = cmp.load_run(single), cmp.load_run(tmp_path / "m")
    assert b.outcomes == a.outcomes == {t: "passed" for t in TESTS}
    rows = cmp.compare(a, b)
    assert rows and {r.change for r in rows} == {"same"}
    summary = (tmp_path / "m" / "summary.md").read_text()
    assert "(2 of 2 shards)" in summary and "## Holes\n\nnone" in summary and "Tests: 2 passed" in summary
    suite = (tmp_path / "m" / "junit.xml").read_text()
    assert 'tests="2"' in suite and 'time="100.000"' in suite  # the longest shard's wall time


def test_the_merged_run_is_one_night_of_the_values_history_after_the_last_nights(tmp_path, shards, capsys):
    earlier = [m for m in json.loads((DATA / "measurements.json").read_text())["measurements"] if m["test"] in TESTS]
    last = tmp_path / "last-night"
    for i, gap in enumerate([11.0, 12.0, 13.0, 14.0]):  # CL-1 restart_gap[1]; the merged run's is 15 s
        history.record(last, f"merged-2026112{i}-021700-beef", [
            {**m, "run_id": f"merged-2026112{i}-021700-beef", "value": gap if m["name"] == "restart_gap[1]" else m["value"]}
            for m in earlier])
    before = (last / history.HISTORY).read_text()
    out = tmp_path / "m"
    assert main([*map(str, shards), "--out", str(out), "--no-html", "--history", str(last / history.HISTORY)]) == 0
    runs, problems = history.read(out / history.HISTORY)
    assert [r["run_id"] for r in runs][-2:] == ["merged-20261123-021700-beef", f"merged-{RUN}"] and problems == []
    assert len(runs[-1]["values"]) == 17  # every value of both shards, as one run
    assert (last / history.HISTORY).read_text() == before  # read, not changed
    assert (f"- drift: CL-1 restart_gap[1] 11 → 12 → 13 → 14 → 15 s towards 18 (band [9, 18]) over nights "
            f"merged-20261120-021700-beef … merged-{RUN} (Kubernetes 1.37)") in (out / "summary.md").read_text()


def test_without_a_history_the_merged_run_is_the_first_night_and_a_missing_one_is_refused(tmp_path, shards, capsys):
    assert main([*map(str, shards), "--out", str(tmp_path / "m"), "--no-html"]) == 0
    assert [r["run_id"] for r in history.read(tmp_path / "m" / history.HISTORY)[0]] == [f"merged-{RUN}"]
    assert main([*map(str, shards), "--out", str(tmp_path / "m2"), "--no-html", "--history", str(tmp_path / "nope")]) == 2
    assert f"--history {tmp_path / 'nope'}: no such file" in capsys.readouterr().err
    (tmp_path / "broken.jsonl").write_text("{broken\n")
    assert main([*map(str, shards), "--out", str(tmp_path / "m3"), "--no-html", "--history", str(tmp_path / "broken.jsonl")]) == 0
    assert f"merge: values history: {history.HISTORY}:1: not JSON" in capsys.readouterr().err
    assert len(history.read(tmp_path / "m3" / history.HISTORY)[0]) == 1


def test_a_shard_that_never_reported_is_a_hole_and_fails(tmp_path, shards, capsys):
    assert main([str(shards[0]), "--out", str(tmp_path / "m"), "--no-html"]) == 1
    assert "HOLE shard 2/2 did not report" in capsys.readouterr().out
    rows = cmp.compare(cmp.load_run(reports(tmp_path / "single", TESTS)), cmp.load_run(tmp_path / "m"))
    assert ("outcome", "unexplained") in {(r.name, r.change) for r in rows}
    assert "- shard 2/2 did not report" in (tmp_path / "m" / "summary.md").read_text()


def test_a_test_given_to_a_shard_and_never_reported_is_a_hole(tmp_path, capsys):
    s1 = reports(tmp_path / "s1", TESTS[:1], "1/1", given=TESTS)
    assert main([str(s1), "--out", str(tmp_path / "m"), "--no-html"]) == 1
    assert f"HOLE {TESTS[1]}: given to shard 1/1, never reported" in capsys.readouterr().out
    assert cmp.load_run(tmp_path / "m").outcomes[TESTS[1]] == "error"


@pytest.mark.parametrize("problem, expected", [
    ("no record", "no usable shard.json"),
    ("twice", "shard 1/2 twice"),
    ("other split", "shards of different splits"),
    ("out not empty", "is not empty"),
])
def test_bad_input_is_refused_in_one_line(tmp_path, shards, capsys, problem, expected):
    args = [*map(str, shards)]
    out = tmp_path / "m"
    if problem == "no record":
        (shards[1] / SHARD_FILE).unlink()
    elif problem == "twice":
        args = [str(shards[0]), str(shards[0])]
    elif problem == "other split":
        (shards[1] / SHARD_FILE).write_text(json.dumps({"shard": "2/3", "run_id": RUN, "tests": TESTS[1:]}))
    else:
        out.mkdir()
        (out / "x").write_text("")
    assert main([*args, "--out", str(out), "--no-html"]) == 2
    err = capsys.readouterr().err
    assert expected in err and len(err.strip().splitlines()) == 1
