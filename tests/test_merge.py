"""e2e.cli.merge: the shards of one run (``--shard I/N``) merged into one reports directory —
counts, values and outcomes as one run's, ``make compare`` single vs merged without a change,
and a shard or test that never reported a visible hole, never a smaller green run; shards of
different splits refused, naming the tests lost and doubled. Built from the real run of
tests/data/report-cl split into two shards, and from real pytest runs of the plugin
(``pytester``) whose shards record their selection, inputs and part at collection."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from e2e.cli import compare as cmp
from e2e.cli.merge import annotation, main
from e2e.plugin import clusters as plugin  # the preflight
from e2e.report import history
from e2e.report.junit import run_id_of
from e2e.run.plan import Cost
from e2e.run.shards import SHARD_FILE, ShardRecord, read_record, split_inputs, write_record

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
        record(dest, shard, given or tests)
    return dest


def record(dest: Path, shard: str, part: list[str], selection: list[str] = TESTS, durations_s: float = 100.0) -> None:
    """The record the plugin writes for shard ``shard`` of a split of ``selection`` (TESTS) with
    ``part`` as its part."""
    index, count = map(int, shard.split("/"))
    inputs = split_inputs("eb322d2", "v1.37.2", [Cost(t, "default", duration_s=durations_s) for t in selection], selection, count)
    write_record(dest / SHARD_FILE, ShardRecord(index, RUN, inputs, selection, part))


@pytest.fixture
def shards(tmp_path):
    return [reports(tmp_path / "s1", TESTS[:1], "1/2"), reports(tmp_path / "s2", TESTS[1:], "2/2")]


def test_two_shards_merge_into_one_run_with_the_counts_and_values_of_a_single_one(tmp_path, shards, capsys):
    single = reports(tmp_path / "single", TESTS)
    assert main([*map(str, shards), "--out", str(tmp_path / "m"), "--no-html"]) == 0
    out = capsys.readouterr().out
    assert "every test of the selection reported" in out
    assert "status: passed: every test of the selection reported, none failed or flaky" in out
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
    assert "\n\nStatus: **passed** — every test of the selection reported" in summary
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
    # its runner left no reports (the nightly's artifact of a shard that failed before its pytest)
    assert main([str(shards[0]), str(tmp_path / "gone"), "--out", str(tmp_path / "m"), "--no-html"]) == 1
    out = capsys.readouterr().out
    assert f"HOLE {tmp_path / 'gone'}: no such directory (its runner left no reports)" in out
    assert "HOLE shard 2/2 left no record" in out
    assert f"HOLE {TESTS[1]}: in the part of no shard that left a record (shard 2/2 left none)" in out
    rows = cmp.compare(cmp.load_run(reports(tmp_path / "single", TESTS)), cmp.load_run(tmp_path / "m"))
    assert ("outcome", "unexplained") in {(r.name, r.change) for r in rows}
    assert cmp.load_run(tmp_path / "m").outcomes[TESTS[1]] == "error"
    summary = (tmp_path / "m" / "summary.md").read_text()
    assert "- shard 2/2 left no record" in summary and "Status: **incomplete** — 3 hole(s)" in summary


def test_a_test_given_to_a_shard_and_never_reported_is_a_hole(tmp_path, capsys):
    s1 = reports(tmp_path / "s1", TESTS[:1], "1/1", given=TESTS)
    assert main([str(s1), "--out", str(tmp_path / "m"), "--no-html"]) == 1
    assert f"HOLE {TESTS[1]}: given to shard 1/1, never reported" in capsys.readouterr().out
    assert cmp.load_run(tmp_path / "m").outcomes[TESTS[1]] == "error"


def test_a_night_with_a_hole_is_recorded_after_the_last_nights_and_the_next_night_goes_on(tmp_path, capsys):
    # issue 41 (3): a shard that left no record refused the whole minor: nothing published, and
    # the next night's values history started again from zero
    def night(n: int, shards: list[str], history_file: Path | None) -> tuple[int, Path]:
        dirs = []
        for shard in shards:
            i = int(shard[0])
            d = reports(tmp_path / f"night{n}-s{i}", TESTS[i - 1:i], shard)
            for f in (d / SHARD_FILE, d / "measurements.json"):  # the night's own run id
                f.write_text(f.read_text().replace(RUN, f"2026120{n}-021700-beef"))
            dirs.append(str(d))
        out = tmp_path / f"night{n}"
        return main([*dirs, "--out", str(out), "--no-html", *(["--history", str(history_file)] if history_file else [])]), out

    assert night(1, ["1/2", "2/2"], None)[0] == 0
    rc, out2 = night(2, ["1/2"], tmp_path / "night1" / history.HISTORY)  # shard 2/2 never started
    assert rc == 1 and "Status: **incomplete**" in (out2 / "summary.md").read_text()
    runs, _ = history.read(out2 / history.HISTORY)
    assert [r["run_id"] for r in runs] == ["merged-20261201-021700-beef", "merged-20261202-021700-beef"]
    assert {v["test"] for v in runs[-1]["values"]} == {TESTS[0]}  # what did report
    rc, out3 = night(3, ["1/2", "2/2"], out2 / history.HISTORY)
    assert rc == 0 and [r["run_id"] for r in history.read(out3 / history.HISTORY)[0]] == [
        "merged-20261201-021700-beef", "merged-20261202-021700-beef", "merged-20261203-021700-beef"]


def test_the_durations_of_the_night_win_over_those_carried_from_the_last_one(tmp_path, shards, capsys):
    # each shard starts from the last night's durations.json (the nightly feeds it back): its own
    # tests' entries are this night's, the other tests' are carried; before, the last shard's
    # carried entries overwrote the tests the other shards had just measured
    for s in shards:
        (s / "durations.json").write_text(json.dumps({t: {"wall_s": 50.0, "run_id": "20261201-021700-beef"} for t in TESTS}))
    for s, t, wall in ((shards[0], TESTS[0], 104.4), (shards[1], TESTS[1], 4.2)):
        entry = json.loads((s / "durations.json").read_text())
        (s / "durations.json").write_text(json.dumps({**entry, t: {"wall_s": wall, "run_id": RUN}}))
    assert main([*map(str, shards), "--out", str(tmp_path / "m"), "--no-html"]) == 0
    merged = json.loads((tmp_path / "m" / "durations.json").read_text())
    assert {t: merged[t]["wall_s"] for t in TESTS} == {TESTS[0]: 104.4, TESTS[1]: 4.2}


@pytest.mark.parametrize("problem, expected", [
    ("unreadable record", "shard.json: not a shard record"),
    ("edited selection", "is not the one its inputs name"),
    ("twice", "shard 1/2 twice"),
    ("one shard of two splits", "shards of different splits: durations digest"),
    ("other count", "shards of different splits: shard count 2 (1/2) vs 3 (2/3)"),
    ("other commit", "shards of different splits: commit eb322d2 (1/2) vs 0000000 (2/2)"),
    ("overlap", "the parts of one split overlap: lost (in no shard's part): none; doubled (in two parts): "
                f"{TESTS[0]} (1/2, 2/2)"),
    ("no record at all", "no shard left a record (shard.json)"),
    ("out not empty", "is not empty"),
])
def test_bad_input_is_refused_in_one_line(tmp_path, shards, capsys, problem, expected):
    args = [*map(str, shards)]
    out = tmp_path / "m"
    if problem == "unreadable record":
        (shards[1] / SHARD_FILE).write_text(json.dumps({"shard": "2/2", "run_id": RUN, "tests": TESTS[1:]}))
    elif problem == "edited selection":
        data = json.loads((shards[1] / SHARD_FILE).read_text())
        (shards[1] / SHARD_FILE).write_text(json.dumps({**data, "selection": TESTS[1:]}))
    elif problem == "twice":
        args = [str(shards[0]), str(shards[0])]
    elif problem == "one shard of two splits":  # the same shard of a runner that split on other durations
        record(shards[1], "1/2", TESTS[1:], durations_s=50.0)
    elif problem == "other count":
        record(shards[1], "2/3", TESTS[1:])
    elif problem == "other commit":
        data = json.loads((shards[1] / SHARD_FILE).read_text())
        (shards[1] / SHARD_FILE).write_text(json.dumps({**data, "inputs": {**data["inputs"], "commit": "0000000"}}))
    elif problem == "overlap":
        record(shards[1], "2/2", TESTS)
    elif problem == "no record at all":
        for s in shards:
            (s / SHARD_FILE).unlink()
    else:
        out.mkdir()
        (out / "x").write_text("")
    assert main([*args, "--out", str(out), "--no-html"]) == 2
    err = capsys.readouterr().err
    assert expected in err and len(err.strip().splitlines()) == 1
    assert problem == "out not empty" or not out.exists()  # refused before anything is written


# -- real pytest runs of the plugin: each shard records its selection, inputs and part at collection

FOUR = """
import pytest

@pytest.fixture
def cluster():  # the split counts the tests with a cluster; these need none
    return None

@pytest.mark.parametrize("name", ["a", "b", "c", "d"])
def test_t(cluster, name):
    pass
"""


def node(name: str) -> str:
    return f"test_four.py::test_t[{name}]"


@pytest.fixture
def runner(pytester, tmp_path, monkeypatch):
    """``run(shard, reports, durations={name: s}, preflight=False)``: one runner's pytest of
    test_four.py with ``--shard``, its durations.json (``wall_s`` per test) put in ``reports``
    first; the preflight (which dials the cluster) skipped unless asked for."""
    pytester.makepyfile(test_four=FOUR)
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("")
    preflight = plugin._preflight
    monkeypatch.delenv("PYTEST_XDIST_WORKER_COUNT", raising=False)  # these tests under xdist: each run is sequential

    def run(shard: str, reports: Path, durations: dict[str, float] | None = None, preflight_runs: bool = False,
            *args: str):
        if durations is not None:
            reports.mkdir(parents=True, exist_ok=True)
            (reports / "durations.json").write_text(json.dumps({node(n): {"wall_s": s} for n, s in durations.items()}))
        monkeypatch.setattr(plugin, "_preflight", preflight if preflight_runs else lambda config: None)
        monkeypatch.delenv("E2E_RUN_ID", raising=False)  # each runner's own run
        # "--option=value": a path given as an argument of its own would move the rootdir
        # (a Ctrl-C of the run stops it, not the tests here: no_reraise_ctrlc)
        return pytester.runpytest("-p", "no:cacheprovider", f"--kubeconfig={kubeconfig}", f"--shard={shard}",
                                  f"--reports-dir={reports}", *args, no_reraise_ctrlc=True)

    return run


def test_shards_split_on_different_durations_are_refused_naming_the_lost_and_doubled_tests(runner, tmp_path, capsys):
    # issue 41 (3): two runners of one selection whose durations.json differ (a reports dir reused
    # on one of them) computed different splits; the merge said every test reported
    r1, r2 = tmp_path / "r1", tmp_path / "r2"
    runner("1/2", r1, {"a": 100, "b": 90, "c": 20, "d": 10}).assert_outcomes(passed=2)
    runner("2/2", r2, {"a": 10, "b": 100, "c": 90, "d": 20}).assert_outcomes(passed=2)
    first, second = read_record(r1 / SHARD_FILE), read_record(r2 / SHARD_FILE)
    # each runner's own split: b is in neither part, d in both
    assert (first.tests, second.tests) == ([node("a"), node("d")], [node("c"), node("d")])
    assert first.selection == second.selection == [node(n) for n in "abcd"]
    assert first.inputs.durations != second.inputs.durations and first.inputs.selection == second.inputs.selection
    capsys.readouterr()
    assert main([str(r1), str(r2), "--out", str(tmp_path / "m"), "--no-html"]) == 2
    err = capsys.readouterr().err
    assert (f"merge: shards of different splits: durations digest {first.inputs.durations} (1/2) vs "
            f"{second.inputs.durations} (2/2). With these parts, lost (in no shard's part): {node('b')}; "
            f"doubled (in two parts): {node('d')} (1/2, 2/2). Run every shard of one selection") in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "m").exists()


def test_a_night_with_a_shard_that_never_started_merges_the_other_two_with_its_tests_as_holes(runner, tmp_path, capsys):
    # issue 41 (3): a shard dir without shard.json refused the whole minor
    r1, r2, r3 = tmp_path / "r1", tmp_path / "r2", tmp_path / "r3"
    stopped = runner("3/3", r3, preflight_runs=True)  # an empty kubeconfig: the preflight stops it, exit 4
    assert stopped.ret == 4 and not (r3 / SHARD_FILE).exists()
    runner("1/3", r1).assert_outcomes(passed=2)
    runner("2/3", r2).assert_outcomes(passed=1)
    parts = [read_record(d / SHARD_FILE).tests for d in (r1, r2)]
    assert parts == [[node("a"), node("d")], [node("b")]]  # every test 60 s (unknown): c was shard 3's
    capsys.readouterr()
    out = tmp_path / "m"
    assert main([str(r1), str(r2), str(r3), "--out", str(out), "--no-html"]) == 1
    said = capsys.readouterr().out
    assert f"HOLE {r3}: no shard.json (its pytest stopped before collection): nothing of it merged" in said
    assert "HOLE shard 3/3 left no record" in said
    assert f"HOLE {node('c')}: in the part of no shard that left a record (shard 3/3 left none)" in said
    assert "status: incomplete: 3 hole(s), listed under Holes" in said
    outcomes = cmp._outcomes(out / "junit.xml")  # as make compare reads them
    assert outcomes == {node("a"): "passed", node("b"): "passed", node("c"): "error", node("d"): "passed"}
    summary = (out / "summary.md").read_text()
    assert "(2 of 3 shards)" in summary and "Status: **incomplete** — 3 hole(s)" in summary
    assert f"- {node('c')}: in the part of no shard that left a record (shard 3/3 left none)" in summary


def test_a_shard_stopped_before_its_first_test_leaves_its_record_and_its_stale_junit_is_not_taken(
        runner, pytester, tmp_path, capsys):
    r1, r2 = tmp_path / "r1", tmp_path / "r2"
    runner("1/2", r1).assert_outcomes(passed=2)  # an earlier run in the same reports dir
    earlier = read_record(r1 / SHARD_FILE).run_id
    assert run_id_of(r1 / "junit.xml") == earlier
    pytester.makeconftest("def pytest_collection_finish(session):\n    raise KeyboardInterrupt  # Ctrl-C\n")
    runner("1/2", r1)
    record_ = read_record(r1 / SHARD_FILE)
    assert record_.run_id != earlier and record_.tests == [node("a"), node("c")]  # written at collection
    assert run_id_of(r1 / "junit.xml") == earlier  # the last run's reports as they were
    pytester.makeconftest("")
    runner("2/2", r2).assert_outcomes(passed=2)
    capsys.readouterr()
    assert main([str(r1), str(r2), "--out", str(tmp_path / "m"), "--no-html"]) == 1
    said = capsys.readouterr().out
    assert (f"HOLE shard 1/2 ({r1}): its junit.xml is of run {earlier}, not of the shard's run {record_.run_id} "
            "(a reports dir reused)") in said
    assert f"HOLE {node('a')}: given to shard 1/2, never reported" in said and f"HOLE {node('c')}:" in said
    assert cmp._outcomes(tmp_path / "m" / "junit.xml") == {node("a"): "error", node("b"): "passed", node("c"): "error",
                                                            node("d"): "passed"}


FLAKY = """
import os
import pytest
from pathlib import Path
from e2e.base.waiting import WaitTimeout

@pytest.fixture
def cluster():
    return None

@pytest.mark.parametrize("name", ["a", "b"])
def test_t(cluster, name):
    marker = Path(os.environ["FLAKY_MARKER"] + name)
    if name == "a" and not marker.exists():
        marker.write_text("failed once")
        raise WaitTimeout("the pod to be Ready", 30)
"""


def test_a_night_whose_only_failure_passed_on_a_rerun_is_flagged_flaky_not_failed(runner, pytester, tmp_path, capsys,
                                                                                  monkeypatch):
    # issue 41 (4): the nightly reruns a test that failed on a wait or a value once; one that then
    # passes does not fail the night (exit 0) but flags it, in the summary and as a workflow warning
    pytester.makepyfile(test_four=FLAKY)
    monkeypatch.setenv("FLAKY_MARKER", str(tmp_path / "marker-"))
    r1 = tmp_path / "r1"
    result = runner("1/1", r1, None, False, "--reruns", "1")
    assert result.parseoutcomes() == {"passed": 1, "rerun": 1, "flaky": 1}
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    capsys.readouterr()
    out = tmp_path / "reports-1.37"
    assert main([str(r1), "--out", str(out), "--no-html"]) == 0
    said = capsys.readouterr().out
    assert "status: flaky: 1 test(s) failed, then passed on a rerun — not a pass: test_four.py::test_t[a]" in said
    assert "::warning title=reports-1.37%3A flaky::flaky: 1 test(s) failed" in said
    assert "Status: **flaky** — 1 test(s) failed, then passed on a rerun" in (out / "summary.md").read_text()
    assert "Tests: 1 flaky, 1 passed" in (out / "summary.md").read_text()
    assert cmp._outcomes(out / "junit.xml") == {node("a"): "flaky", node("b"): "passed"}


def test_a_workflow_annotation_escapes_what_the_runner_reads_back():
    assert annotation("error", "reports-1.37: incomplete, 2", "50% lost\nnext") == \
        "::error title=reports-1.37%3A incomplete%2C 2::50%25 lost%0Anext"


def test_a_shard_whose_measurements_are_no_measurements_is_refused_before_anything_is_written(tmp_path, shards, capsys):
    path = shards[1] / "measurements.json"
    items = json.loads(path.read_text())["measurements"]
    del items[0]["verdict"]
    path.write_text(json.dumps({"measurements": items}))
    assert main([*map(str, shards), "--out", str(tmp_path / "m"), "--no-html"]) == 2
    err = capsys.readouterr().err
    assert f"{path}: not a measurements file (measurement {items[0]['case']} {items[0]['name']}" in err
    assert "missing verdict" in err
    assert not (tmp_path / "m").exists()
