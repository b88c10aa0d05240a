"""A failed timing value under host overload is inconclusive (e2e.judge.pressure), from fake
``/proc/pressure/cpu`` readings: the judge's verdicts, the plugin's outcome, the summary, the
reports' pages and ``make compare``. Nothing else is changed by the pressure."""

from __future__ import annotations

import json

import pytest
from helpers import fake_scenario_conftest

from e2e.cli.compare import _outcomes, compare, load_run, main
from e2e.judge.expectations import Band, Expectation, Registry
from e2e.judge.measurements import Judge, MeasurementLog
from e2e.judge.pressure import LIMIT, LIMIT_ENV, describe, inconclusive, limit
from e2e.record.hostload import HostLoad, PsiCounter
from e2e.report.summary import Outcome, build, host_line, markdown, read_allure_results, terminal_lines

REGISTRY = Registry()
REGISTRY.add(
    Expectation("CL-1", "restart_gap[1]", 10.0, "[S0] test", unit="s", band=Band(9, 18), why="back-off 10 s; test", verified_in=("1.37.2",)),
    Expectation("SC-3", "order_ms", 500.0, "[S0] test", unit="ms", band=Band(0, 1000), why="test", verified_in=("1.37.2",)),
    Expectation("CL-1", "restarts", 3, "[S0] test", unit="restarts", band=Band(3, 5), why="test", verified_in=("1.37.2",)),
    Expectation("CL-2", "waiting_reason", "CrashLoopBackOff", "[S0] test"),
)


@pytest.fixture(autouse=True)
def limit_of_10_percent(monkeypatch):
    """The mechanism at a limit of 10 % (the documented default is 90 %, see e2e.judge.pressure)."""
    monkeypatch.setenv(LIMIT_ENV, "0.1")


def loaded_host(rate: float, seconds: int = 60) -> HostLoad:
    """A host whose PSI ``some`` total grew by ``rate`` of the wall time over ``seconds`` 1 s
    samples from t = 1000 (epoch s); fake ``/proc/pressure/cpu`` readings."""
    clock = [1_000.0]

    def read(path: str) -> str:
        return f"some avg10=0.00 avg60=0.00 avg300=0.00 total={round((clock[0] - 1_000) * rate * 1e6)}\n"

    host = HostLoad(PsiCounter(read), clock=lambda: clock[0])
    for _ in range(seconds + 1):
        host.sample()
        clock[0] += 1
    clock[0] -= 1
    return host


def judge(tmp_path, rate: float | None) -> Judge:
    host = loaded_host(rate) if rate is not None else None
    return Judge(MeasurementLog(tmp_path / "measurements.json"), "t.py::test_x", "run", "v1.37.2", minor=37,
                 registry=REGISTRY, host=(lambda: host.window(1_000)) if host else None)


def test_a_failed_timing_value_under_pressure_is_inconclusive(tmp_path):
    j = judge(tmp_path, 0.42)
    assert j.expect("CL-1", "restart_gap[1]", 25.0) is False
    assert j.expect("SC-3", "order_ms", 1500.0) is False  # ms is a timing too
    m = j.verdicts[0].measurement
    assert m.verdict == "inconclusive" and not j.failures
    j.verify()  # not a failure
    host = {"pressure": 0.42, "peak_10s": 0.42, "source": "psi", "window_s": [1000.0, 1060.0], "samples": 61,
            "limit": 0.1}
    assert m.details["host"] == host
    assert m.details["reason"] == ("host overloaded: expected 10 s within [9, 18] s; CPU pressure 42 % over 60 s "
                                   "(peak 10 s 42 %, psi; limit 10 %)")
    kind, reason = j.outcome()
    assert kind == "inconclusive"
    assert reason.startswith("inconclusive: host overloaded: 2 timing value(s) failed while the host's CPU was starved: "
                             "CL-1 restart_gap[1] = 25 s (expected 10 s within [9, 18] s; CPU pressure 42 % over 60 s")
    written = json.loads((tmp_path / "measurements.json").read_text())["measurements"]
    assert [w["verdict"] for w in written] == ["inconclusive", "inconclusive"] and written[0]["details"]["host"] == host


def test_a_failed_timing_value_without_pressure_fails(tmp_path):
    j = judge(tmp_path, 0.02)
    j.expect("CL-1", "restart_gap[1]", 25.0)
    assert [v.measurement.verdict for v in j.verdicts] == ["fail"]
    assert j.verdicts[0].measurement.details["host"]["pressure"] == 0.02  # recorded all the same
    with pytest.raises(AssertionError, match="restart_gap"):
        j.verify()


def test_a_failed_value_that_is_no_timing_fails_under_pressure(tmp_path):
    j = judge(tmp_path, 0.9)
    j.expect("CL-1", "restarts", 9)
    j.expect("CL-2", "waiting_reason", "Error")
    assert [v.measurement.verdict for v in j.verdicts] == ["fail", "fail"]
    assert j.verdicts[1].measurement.details["host"]["pressure"] == 0.9


def test_a_value_that_holds_passes_under_pressure(tmp_path):
    j = judge(tmp_path, 0.9)
    assert j.expect("CL-1", "restart_gap[1]", 12.0) is True
    assert j.verdicts[0].measurement.verdict == "pass" and j.outcome() is None


def test_a_failure_beside_an_inconclusive_value_fails_the_test(tmp_path):
    j = judge(tmp_path, 0.9)
    j.expect("CL-1", "restart_gap[1]", 25.0)
    j.expect("CL-1", "restarts", 9)
    with pytest.raises(AssertionError, match="1 of 2 measured values"):
        j.verify()


def test_without_a_sampler_nothing_is_recorded_or_changed(tmp_path):
    j = judge(tmp_path, None)
    j.expect("CL-1", "restart_gap[1]", 25.0)
    m = j.verdicts[0].measurement
    assert m.verdict == "fail" and "host" not in m.details


def test_the_limit_is_overridable_and_recorded(tmp_path, monkeypatch):
    monkeypatch.setenv(LIMIT_ENV, "0.5")
    j = judge(tmp_path, 0.42)
    j.expect("CL-1", "restart_gap[1]", 25.0)
    m = j.verdicts[0].measurement
    assert m.verdict == "fail" and m.details["host"]["limit"] == 0.5
    assert limit({}) == LIMIT == 0.90
    for bad in ("0", "1.5", "25%", "lots"):
        with pytest.raises(ValueError, match=f"{LIMIT_ENV}='{bad}': a fraction of wall time in \\(0, 1\\]"):
            limit({LIMIT_ENV: bad})


def test_the_limit_is_a_bound_a_short_window_is_no_evidence_and_1_switches_it_off():
    def host(pressure: float, seconds: float, limit_: float = 0.1) -> dict:
        return {"pressure": pressure, "peak_10s": pressure, "source": "psi", "window_s": [0.0, seconds], "limit": limit_}

    assert inconclusive("fail", "s", host(0.11, 60))
    assert not inconclusive("fail", "s", host(0.10, 60))  # at the limit: still within the budget
    assert not inconclusive("fail", "s", host(0.9, 0.5))  # half a second cannot have stalled anything by 1 s
    assert not inconclusive("fail", "s", host(1.0, 60, limit({LIMIT_ENV: "1"})))
    assert not inconclusive("pass", "s", host(1.0, 60)) and not inconclusive("fail", "runs", host(1.0, 60))


def test_an_unknown_pressure_never_makes_a_value_inconclusive(tmp_path):
    j = Judge(MeasurementLog(tmp_path / "m.json"), "t", "run", "v1.37.2", minor=37, registry=REGISTRY,
              host=lambda: None)
    j.expect("CL-1", "restart_gap[1]", 25.0)
    m = j.verdicts[0].measurement
    assert m.verdict == "fail" and m.details["host"] == {"pressure": None, "limit": 0.1}
    assert describe(m.details["host"]) == "CPU pressure unknown (limit 10 %)"


# -- the plugin: the test's outcome ------------------------------------------------------

CONFTEST = fake_scenario_conftest('''
    Expectation("CL-1", "restart_gap[1]", 10.0, "[S0] test", unit="s", band=Band(9, 18), why="back-off 10 s; test", verified_in=("1.37.2",)),
    Expectation("CL-1", "restarts", 3, "[S0] test", unit="restarts", band=Band(3, 5), why="test", verified_in=("1.37.2",)),
''') + '''

from pathlib import Path

from e2e.record.hostload import HostLoad, PsiCounter


def host(rate):
    """60 s of fake /proc/pressure/cpu readings with some total growing by rate of the wall time."""
    clock = [1000.0]
    h = HostLoad(PsiCounter(lambda path: f"some avg10=0 avg60=0 avg300=0 total={round((clock[0] - 1000) * rate * 1e6)}\\n"),
                 clock=lambda: clock[0])
    h.sample()
    clock[0] += 60
    return h


def judged_under(rate, scenario, request):
    h = host(rate)
    scenario.judge = Judge(MeasurementLog(Path(request.config.getoption("--reports-dir")) / "measurements.json"),
                           request.node.nodeid, "run", "v1.37.2", minor=37, cgroup=1, registry=REGISTRY,
                           host=lambda: h.window(1000.0))
    return scenario


@pytest.fixture
def starved(scenario, request):
    return judged_under(0.6, scenario, request)


@pytest.fixture
def quiet(scenario, request):
    return judged_under(0.01, scenario, request)
'''


@pytest.fixture
def run(pytester, monkeypatch, tmp_path):
    monkeypatch.setenv("E2E_RUN_ID", "run")
    pytester.makeconftest(CONFTEST)

    def go(body: str, *args: str):
        pytester.makepyfile(test_case="import pytest\n\n" + body)
        return pytester.runpytest_inprocess("-p", "no:cacheprovider", f"--reports-dir={tmp_path}", *args)

    return go


def test_a_starved_failure_ends_the_test_inconclusive_listed_and_counted_apart(run, pytester, tmp_path):
    r = run('''
@pytest.mark.case("CL-1")
def test_slow(starved):
    starved.judge.expect("CL-1", "restart_gap[1]", 25.0)

@pytest.mark.case("CL-1")
def test_fast(starved):
    starved.judge.expect("CL-1", "restart_gap[1]", 12.0)

@pytest.mark.case("CL-1")
def test_wrong_count(starved):
    starved.judge.expect("CL-1", "restarts", 9)

@pytest.mark.case("CL-1")
def test_slow_on_a_quiet_host(quiet):
    quiet.judge.expect("CL-1", "restart_gap[1]", 25.0)
''', "--junitxml=j.xml")
    assert r.parseoutcomes() == {"passed": 1, "failed": 2, "inconclusive": 1}
    r.stdout.fnmatch_lines([
        "test_case.py I.FF*",
        "*= pod-lifecycle-e2e: cases =*",
        "CL-1   FAIL         2 fail, 1 inconclusive, 1 pass *",
        "         inconclusive: restart_gap[[]1[]] = 25 s — host overloaded: expected 10 s within [[]9, 18[]] s; CPU pressure 60 %*",
        "         test inconclusive: test_case.py::test_slow — inconclusive: host overloaded: *",
        "tests: 2 failed, 1 inconclusive, 1 passed",
        "host CPU pressure (psi) over the judged values' windows: highest 60 % (CL-1 restart_gap[[]1[]]), highest 10 s "
        "60 %; limit 10 %: 3 of 4 value(s) beyond it (2 timing: only a failed timing value can be inconclusive), "
        "1 inconclusive",
        "*= inconclusive values (a timing value failed while the host's CPU was starved: neither a pass nor a product failure) =*",
        "INCONCLUSIVE test_case.py::test_slow: inconclusive: host overloaded: 1 timing value(s) failed while the host's CPU "
        "was starved: CL-1 restart_gap[[]1[]] = 25 s (expected 10 s within [[]9, 18[]] s; CPU pressure 60 % over 60 s "
        "(peak 10 s 60 %, psi; limit 10 %))",
        "*= 2 failed, 1 passed, 1 inconclusive in *",
    ])
    junit = pytester.path / "j.xml"
    xml = junit.read_text()
    assert 'name="outcome" value="inconclusive"' in xml and 'message="inconclusive: host overloaded: 1 timing' in xml
    assert _outcomes(junit)["test_case.py::test_slow"] == "inconclusive"
    md = (tmp_path / "summary.md").read_text()
    assert "Tests: 2 failed, 1 inconclusive, 1 passed" in md and "| restart_gap[1] | 25 s | 10 s within [9, 18] s | inconclusive |" in md
    assert r.ret == pytest.ExitCode.TESTS_FAILED  # the two product failures; alone, an inconclusive test exits 0


def test_an_inconclusive_test_alone_is_no_failed_run(run):
    r = run('''
def test_slow(starved):
    starved.judge.expect("CL-1", "restart_gap[1]", 25.0)
''', "-rs")
    assert r.ret == 0
    r.stdout.fnmatch_lines(["*= 1 inconclusive in *"])


# -- the summary, the reports' pages and compare -------------------------------------------


def measurement(name: str, value: float, verdict: str, pressure: float | None, run_id: str = "rb", **extra) -> dict:
    host = {"pressure": pressure, "limit": 0.1}
    if pressure is not None:
        host |= {"peak_10s": pressure * 2, "source": "psi", "window_s": [0.0, 50.0], "samples": 51}
    details = {"host": host} | ({"reason": "host overloaded: expected 10 s within [9, 18] s"} if verdict == "inconclusive" else {})
    return {"case": "CL-1", "name": name, "value": value, "unit": "s", "documented": 10.0, "band": [9, 18], "why": "",
            "source": "[S0]", "versions": "1.0–newer", "verdict": verdict, "test": "t.py::test_x", "run_id": run_id,
            "kubernetes": "v1.37.2", "measured_at": "", "details": details, "template": 10.0} | extra


def test_the_summary_lists_inconclusive_values_and_the_hosts_pressure():
    values = [measurement("restart_gap[1]", 25.0, "inconclusive", 0.4), measurement("restart_gap[2]", 12.0, "pass", 0.05)]
    outcomes = [Outcome("t.py::test_x", "inconclusive", ["CL-1"], "inconclusive: host overloaded: …")]
    [s] = build(values, outcomes)
    assert s.verdict == "inconclusive"  # right after fail, before undocumented, flake, skipped and pass
    lines = terminal_lines([s], outcomes)
    assert lines[0].startswith("CL-1   INCONCLUSIVE 1 inconclusive, 1 pass")
    assert lines[1:] == [
        "         inconclusive: restart_gap[1] = 25 s — host overloaded: expected 10 s within [9, 18] s",
        "         test inconclusive: t.py::test_x — inconclusive: host overloaded: …",
        "tests: 1 inconclusive",
        "host CPU pressure (psi) over the judged values' windows: highest 40 % (CL-1 restart_gap[1]), highest 10 s 80 %; "
        "limit 10 %: 1 of 2 value(s) beyond it (1 timing: only a failed timing value can be inconclusive), 1 inconclusive"]
    assert "host CPU pressure (psi)" in markdown([s], outcomes, "run")
    assert host_line([measurement("a", 1.0, "pass", None)]) is None  # no measured pressure: no line


def test_the_plain_page_shows_an_inconclusive_test_as_such(tmp_path):
    result = {"name": "test_x", "status": "skipped", "start": 1,
              "statusDetails": {"message": "Skipped: inconclusive: host overloaded: 1 timing value(s) failed"},
              "labels": [{"name": "_nodeid", "value": "t.py::test_x"}, {"name": "_outcome", "value": "inconclusive"}]}
    (tmp_path / "1-result.json").write_text(json.dumps(result))
    [t] = read_allure_results(tmp_path)
    assert (t.outcome.outcome, t.outcome.reason) == ("inconclusive", "inconclusive: host overloaded: 1 timing value(s) failed")


def test_compare_counts_inconclusive_apart_never_unexplained(tmp_path, capsys):
    def write(name: str, items: list[dict], outcome: str) -> str:
        d = tmp_path / name
        d.mkdir()
        (d / "measurements.json").write_text(json.dumps({"measurements": items}))
        body = {"passed": "", "inconclusive": '<properties><property name="outcome" value="inconclusive"/></properties>'
                "<skipped type=\"pytest.skip\" message=\"inconclusive: host overloaded: 1 timing value(s)\"/>"}[outcome]
        (d / "junit.xml").write_text(f'<testsuites><testsuite><testcase classname="t" name="test_x">{body}</testcase>'
                                     "</testsuite></testsuites>")
        return str(d)

    a = write("a", [measurement("restart_gap[1]", 11.0, "pass", 0.01, "ra"),
                    measurement("restart_gap[2]", 30.0, "inconclusive", 0.5, "ra")], "inconclusive")
    b = write("b", [measurement("restart_gap[1]", 25.0, "inconclusive", 0.5),
                    measurement("restart_gap[2]", 12.0, "pass", 0.01)], "inconclusive")
    rows = {r.name: r.change for r in compare(load_run(a), load_run(b))}
    assert rows == {"restart_gap[1]": "inconclusive", "restart_gap[2]": "holds now"}
    c = write("c", [measurement("restart_gap[1]", 11.0, "pass", 0.01, "rc")], "passed")
    rows_outcome = [r for r in compare(load_run(c), load_run(b)) if r.name == "outcome"]
    assert [(r.a, r.b, r.change) for r in rows_outcome] == [("passed", "inconclusive", "inconclusive")]
    assert main([c, b]) == 0
    assert "summary: 2 inconclusive" in capsys.readouterr().out
    # an old measurements.json without details.host still reads
    old = write("old", [measurement("restart_gap[1]", 11.0, "pass", None, "ro") | {"details": {}}], "passed")
    assert main([old, b]) == 0
