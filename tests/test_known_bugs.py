"""Known upstream bugs (Expectation.known_bug): the judge's verdicts, the plugin's outcomes through
real pytest sessions (``pytester``) and compare's known-bug class.

A value that holds today's (buggy) expectation is ``bug-present``: the test passes, marked; a value
that holds the correct one is ``bug-fixed``: a loud outcome of its own (skipped, counted apart,
exit status 0); any other value fails."""

from __future__ import annotations

import json

import pytest

from e2e.cli.compare import compare, load_run, main
from e2e.judge.expectations import Band, Expectation, KnownBug, Registry
from e2e.judge.measurements import Judge, MeasurementLog
from helpers import fake_scenario_conftest

BUG = KnownBug("kubernetes/kubernetes#134338 (open)", correct=6.0, correct_band=Band(5.5, 9.5),
               mechanism="lifecycle/handlers.go runSleepHandler waits for the pod worker's context only")
GONE = Expectation("KB-1", "pod_gone_after_delete_s", 20.0, "[UP] test", unit="s", band=Band(20, 23), why="test",
                   known_bug=BUG, verified_in=("1.37.2",))


@pytest.fixture
def judge(tmp_path) -> Judge:
    r = Registry()
    r.add(GONE)
    return Judge(MeasurementLog(tmp_path / "m.json"), test="t", run_id="r", kubernetes="v1.37.2", minor=37, registry=r)


@pytest.mark.parametrize("value, verdict, outcome", [
    (21.0, "bug-present", "bug-present"),
    (7.0, "bug-fixed", "bug-fixed"),
    (14.0, "fail", None),
])
def test_verdict_of_a_known_bug_value(judge, value, verdict, outcome):
    judge.expect("KB-1", "pod_gone_after_delete_s", value)
    (m,) = json.loads(judge.log.path.read_text())["measurements"]
    assert m["verdict"] == verdict
    assert m["details"]["known_bug"] == {
        "issue": "kubernetes/kubernetes#134338 (open)", "buggy": "20 s within [20, 23] s",
        "correct": "6 s within [5.5, 9.5] s", "mechanism": BUG.mechanism}
    assert [v.measurement.name for v in judge.failures] == ([] if verdict != "fail" else ["pod_gone_after_delete_s"])
    if outcome is not None:
        assert judge.outcome()[0] == outcome


def test_a_known_bug_needs_its_issue_and_a_correct_value_judged_alike():
    with pytest.raises(ValueError, match="upstream issue"):
        KnownBug("", correct=0, mechanism="x")
    with pytest.raises(ValueError, match="both with a band, or neither"):
        Expectation("KB-9", "x", 1.0, "[UP]", band=Band(1, 2), why="test", known_bug=KnownBug("k/k#1", correct=0, mechanism="m"))
    with pytest.raises(ValueError, match="not a known bug"):
        Expectation("KB-9", "x", "a", "[UP]").correct()


CONFTEST = fake_scenario_conftest('''
    Expectation("KB-3", "phase", "Pending", "[UP] test", cgroup=1,
                known_bug=KnownBug("kubernetes/kubernetes#116676 (closed, not fixed)", correct="Failed",
                                   mechanism="getPhase counts an init container failed by its exit code only")),
    Expectation("KB-3", "main_started", False, "[UP] test"),
''')


@pytest.fixture
def run(pytester):
    pytester.makeconftest(CONFTEST)

    def go(phase: str, *args: str):
        pytester.makepyfile(test_case=f'''
def test_x(scenario):
    scenario.judge.expect("KB-3", "main_started", False)
    scenario.judge.expect("KB-3", "phase", {phase!r})
''')
        return pytester.runpytest_inprocess("-p", "no:cacheprovider", "-rA", *args)

    return go


def test_bug_present_passes_marked_known_bug(run, pytester):
    r = run("Pending", "--junitxml=j.xml")
    r.assert_outcomes(passed=1)
    r.stdout.fnmatch_lines([
        "*known upstream bugs present*",
        "KNOWN BUG test_case.py::test_x: known bug present: KB-3 phase = 'Pending' (buggy: 'Pending'; correct: 'Failed'; "
        "kubernetes/kubernetes#116676 (closed, not fixed))",
    ])
    assert 'name="known_bug" value="known bug present: KB-3 phase' in (pytester.path / "j.xml").read_text()
    assert r.ret == 0


def test_bug_fixed_is_a_loud_outcome_of_its_own_not_a_failure(run, pytester):
    r = run("Failed", "--junitxml=j.xml")
    r.assert_outcomes(passed=0, failed=0, skipped=0)
    r.stdout.fnmatch_lines([
        "test_case.py B*",
        "*known upstream bugs no longer present*",
        "BUG FIXED? test_case.py::test_x: bug no longer present — fixed on this version? KB-3 phase = 'Failed' "
        "(buggy: 'Pending'; correct: 'Failed'; kubernetes/kubernetes#116676 (closed, not fixed))",
        "*= 1 bug fixed? in *",
    ])
    xml = (pytester.path / "j.xml").read_text()
    assert 'message="bug no longer present — fixed on this version? KB-3 phase' in xml
    assert 'name="outcome" value="bug-fixed"' in xml
    assert r.ret == 0


def test_any_other_value_of_a_known_bug_fails(run):
    r = run("Running")
    r.assert_outcomes(failed=1)
    r.stdout.fnmatch_lines(["*KB-3 phase: measured 'Running', expected 'Pending'*"])


# -- compare: the known-bug class -----------------------------------------------------------

TEST = "scenarios/known_bugs/test_known_bugs.py::test_x"


def kb(run_id, kubernetes, value, verdict):
    return {"case": "KB-3", "name": "phase", "value": value, "unit": "", "documented": "Pending", "band": None,
            "why": "", "source": "[UP]", "versions": "1.34–newer, cgroup v1", "verdict": verdict, "test": TEST,
            "run_id": run_id, "kubernetes": kubernetes, "measured_at": "", "details": {}, "template": "Pending"}


def write(dir_, items, skipped_message=None):
    dir_.mkdir()
    (dir_ / "measurements.json").write_text(json.dumps({"measurements": items}))
    body = f'<skipped type="pytest.skip" message="{skipped_message}"/>' if skipped_message else ""
    (dir_ / "junit.xml").write_text('<testsuites><testsuite name="pytest"><testcase classname="scenarios.known_bugs.'
                                    f'test_known_bugs" name="test_x">{body}</testcase></testsuite></testsuites>')
    return dir_


@pytest.mark.parametrize("a, b, change", [
    ("bug-present", "bug-present", "known bug: present"),
    ("bug-present", "bug-fixed", "known bug: present → fixed"),
    ("bug-fixed", "bug-present", "known bug: fixed → present"),
    ("undocumented", "bug-present", "known bug: undocumented → present"),
])
def test_compare_lists_known_bug_states_as_their_own_class(tmp_path, a, b, change):
    value = {"bug-present": "Pending", "bug-fixed": "Failed", "undocumented": "Pending"}
    ra = write(tmp_path / "a", [kb("ra", "v1.34.4", value[a], a)])
    rb = write(tmp_path / "b", [kb("rb", "v1.37.2", value[b], b)],
               "bug no longer present — fixed on this version? KB-3 phase = 'Failed'" if b == "bug-fixed" else None)
    (row, *outcome) = compare(load_run(ra), load_run(rb))
    assert (row.name, row.change) == ("phase", change)
    if b == "bug-fixed":  # the test's outcome went from passed to "bug fixed?": listed, not unexplained
        assert [(o.a, o.b, o.change) for o in outcome] == [("passed", "bug fixed?", "outcome changed")]
    assert main([str(ra), str(rb), "--json", str(tmp_path / "c.json")]) == 0


def test_a_known_bug_value_that_fails_is_unexplained(tmp_path):
    ra = write(tmp_path / "a", [kb("ra", "v1.34.4", "Pending", "bug-present")])
    rb = write(tmp_path / "b", [kb("rb", "v1.37.2", "Running", "fail")])
    (row, *_) = compare(load_run(ra), load_run(rb))
    assert row.change == "unexplained"
