"""``--reruns N`` (pytest-rerunfailures, opt-in) as the suite allows it: only a failed value or a
wait that ran out is rerun, never an infrastructure failure; a test that failed and then passed
ends **flaky** — its own outcome in the terminal, junit.xml and the summary, never a pass — and
every attempt's values stay in measurements.json, the rerun's with ``details.attempt``. Through
the real plugin (``pytester``), the real judge and ``make compare``'s junit reading."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from e2e.cli import compare as cmp
from e2e.report.summary import Outcome, build, markdown
from helpers import fake_scenario_conftest

pytest_plugins = ["pytester"]

ENTRY = 'Expectation("XX-1", "gap_s", 10.0, "[UP] x", unit="s", band=Band(9, 18), why="back-off", verified_in=("1.37.2",))'
CONFTEST = fake_scenario_conftest(ENTRY).replace(
    'judge = Judge(MeasurementLog(tmp_path / "m.json"), request.node.nodeid, "run", "v1.37.2", minor=37, cgroup=1,\n'
    '                  registry=REGISTRY)',
    'import os\n    judge = Judge(MeasurementLog(os.environ["RERUN_LOG"]), request.node.nodeid, "run", "v1.37.2", minor=37, cgroup=1,\n'
    '                  registry=REGISTRY, attempt=getattr(request.node, "execution_count", 1))')
TEST = '''
import os
import pytest
from pathlib import Path
from e2e.faults.core import ClusterBroken

@pytest.mark.case("XX-1")
def test_gap(scenario):
    marker = Path(os.environ["RERUN_LOG"] + ".ran")
    first = not marker.exists()
    marker.write_text("x")
    if os.environ.get("RERUN_FAULT") == "infra":
        raise ClusterBroken("the kubelet did not come back")
    scenario.expect("XX-1", "gap_s", 30.0 if first or os.environ.get("RERUN_FAULT") == "always" else 12.0)
'''


@pytest.fixture
def run(pytester, monkeypatch, tmp_path):
    assert "RERUN_LOG" in CONFTEST  # the fixture's judge writes where the test reads
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_case=TEST)
    log = tmp_path / "measurements.json"
    monkeypatch.setenv("RERUN_LOG", str(log))

    def go(*args: str, fault: str = ""):
        monkeypatch.setenv("RERUN_FAULT", fault)
        result = pytester.runpytest_inprocess("-p", "no:cacheprovider", f"--junitxml={tmp_path / 'junit.xml'}", *args)
        values = json.loads(log.read_text())["measurements"] if log.exists() else []
        return result, values, tmp_path / "junit.xml"

    return go


def test_a_value_failing_once_then_holding_ends_flaky_with_both_attempts_kept(run):
    result, values, junit = run("--reruns", "1")
    out = result.stdout.str()
    assert "1 flaky" in out and " passed" not in out.splitlines()[-1]
    result.stdout.fnmatch_lines(["FLAKY test_case.py::test_gap: failed on attempt 1 (ExpectationFailed: *), passed on attempt 2"])
    assert [(v["value"], v["verdict"], v["details"].get("attempt")) for v in values] == [(30.0, "fail", None), (12.0, "pass", 2)]
    outcomes = cmp._outcomes(junit)
    assert outcomes == {"test_case.py::test_gap": "flaky"}
    (case,) = build(values, [Outcome("test_case.py::test_gap", "flaky", ["XX-1"], "failed on attempt 1")])
    assert case.verdict == "flaky" and [v["value"] for v in case.values] == [12.0]
    assert "attempt 1 (rerun after it): gap_s = 30 s fail" in markdown([case], [], "t")


def _testcases(junit: Path) -> list[ET.Element]:
    return list(ET.parse(junit).getroot().iter("testcase"))


def test_junit_has_one_testcase_per_test_its_failed_attempt_inside(run):
    """The rerun demonstration on a cluster (issue 27): pytest's junitxml wrote attempt 1 as a
    testcase of its own with no failure in it — one more pass to any junit reader."""
    _, _, junit = run("--reruns", "1")
    (case,) = _testcases(junit)
    assert [c.tag for c in case if c.tag != "properties"] == ["flakyFailure"]
    assert case.find("flakyFailure").get("message").startswith("ExpectationFailed: 1 of 1 measured values")
    assert ET.parse(junit).getroot().find("testsuite").get("tests") == "1"


def test_a_test_failing_every_attempt_has_its_reruns_inside_its_failure(run):
    _, values, junit = run("--reruns", "2", fault="always")
    (case,) = _testcases(junit)
    assert [c.tag for c in case if c.tag != "properties"] == ["failure", "rerunFailure", "rerunFailure"]
    assert all(c.get("message").startswith("ExpectationFailed: ") for c in case.iter("rerunFailure"))
    assert [v["verdict"] for v in values] == ["fail", "fail", "fail"]
    assert cmp._outcomes(junit) == {"test_case.py::test_gap": "failed"}


def test_an_infrastructure_failure_is_never_rerun(run):
    result, values, _ = run("--reruns", "2", fault="infra")
    result.assert_outcomes(failed=1)
    assert "rerun" not in result.stdout.str().splitlines()[-1] and "FLAKY" not in result.stdout.str()


def test_without_reruns_a_failure_stays_a_failure(run):
    result, values, junit = run()
    result.assert_outcomes(failed=1)
    assert [v["verdict"] for v in values] == ["fail"] and cmp._outcomes(junit) == {"test_case.py::test_gap": "failed"}
    assert ET.parse(junit).getroot().find(".//failure") is not None


def test_compare_counts_a_flaky_test_apart_never_as_a_pass(run, tmp_path):
    import shutil

    _, values, junit = run("--reruns", "1")
    b = tmp_path / "b"
    b.mkdir()
    shutil.copy(junit, b / "junit.xml")
    (b / "measurements.json").write_text(json.dumps({"measurements": values}))
    a = tmp_path / "a"
    a.mkdir()
    (a / "junit.xml").write_text('<testsuites><testsuite name="pytest"><testcase classname="test_case" name="test_gap"/>'
                                 "</testsuite></testsuites>")
    (a / "measurements.json").write_text(json.dumps({"measurements": [{**values[-1], "run_id": "a", "details": {}}]}))
    rows = cmp.compare(cmp.load_run(a), cmp.load_run(b))
    assert [(r.name, r.a, r.b, r.change) for r in rows if r.name == "outcome"] == [("outcome", "passed", "flaky", "flaky")]
    assert not [r for r in rows if r.change == "unexplained"]


def test_a_test_flaky_two_nights_running_is_counted_on_the_second_too(run, tmp_path):
    # issue 41 (4): compare listed a flaky test only when its outcome changed, so a test flaky
    # every night was counted on none after the first
    import shutil

    _, values, junit = run("--reruns", "1")
    nights = []
    for night in ("a", "b"):
        d = tmp_path / night
        d.mkdir()
        shutil.copy(junit, d / "junit.xml")
        (d / "measurements.json").write_text(json.dumps({"measurements": [{**v, "run_id": night} for v in values]}))
        nights.append(cmp.load_run(d))
    rows = cmp.compare(*nights)
    assert [(r.name, r.a, r.b, r.change) for r in rows if r.name == "outcome"] == [("outcome", "flaky", "flaky", "flaky")]
    assert "1 flaky" in cmp.table(*nights, rows).splitlines()[-1] and not [r for r in rows if r.change == "unexplained"]


def test_the_html_reports_reading_of_allure_results_keeps_the_last_attempt_flaky(tmp_path):
    from e2e.report.summary import read_allure_results

    for i, (status, start) in enumerate([("failed", 1), ("passed", 2), ("passed", 3)]):
        nodeid = "t.py::test_a" if i < 2 else "t.py::test_b"
        (tmp_path / f"{i}-result.json").write_text(json.dumps({
            "name": nodeid.split("::")[1], "status": status, "start": start, "statusDetails": {"message": "boom"},
            "labels": [{"name": "_nodeid", "value": nodeid}]}))
    tests = read_allure_results(tmp_path)
    assert [(t.outcome.test, t.outcome.outcome) for t in tests] == [("t.py::test_a", "flaky"), ("t.py::test_b", "passed")]
