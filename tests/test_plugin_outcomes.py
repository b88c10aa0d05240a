"""The plugin's one outcome policy (e2e.plugin.outcomes.settle), run through real pytest sessions
(``pytester``): every judged value is verified whatever the body did; undocumented values and
a dead recorder are never a pass; a flake is an xfail; an environment limit a skip."""

from __future__ import annotations

import pytest
from helpers import fake_scenario_conftest

CONFTEST = fake_scenario_conftest('''
    Expectation("CL-1", "restart_gap[1]", 10.0, "[S0] test", unit="s", band=Band(9, 18), why="test", minors=(37, None)),
    Expectation("OM-1", "reason_missing", 0, "[UP] test", unit="runs", band=Band(0, 0), why="test"),
''')


@pytest.fixture
def run(pytester):
    pytester.makeconftest(CONFTEST)

    def go(body: str, *args: str):
        pytester.makepyfile(test_case="import pytest\n\n" + body)
        return pytester.runpytest_inprocess("-p", "no:cacheprovider", "-rA", *args)

    return go


def test_a_failed_value_fails_even_after_the_body_skipped(run):
    r = run('''
def test_x(scenario):
    scenario.judge.expect("CL-1", "restart_gap[1]", 25.0)
    pytest.skip("the body gave up")
''')
    r.assert_outcomes(failed=1)
    r.stdout.fnmatch_lines(["*CL-1 restart_gap[[]1[]]: measured 25 s, expected 10 s within [[]9, 18[]] s*",
                            "*judged at test_case.py:5*"])


def test_a_failed_value_fails_a_body_that_passed(run):
    r = run('''
def test_x(scenario):
    scenario.judge.expect("CL-1", "restart_gap[1]", 25.0)
''')
    r.assert_outcomes(failed=1)


def test_undocumented_values_end_the_test_as_undocumented_not_passed(run):
    r = run('''
def test_x(scenario):
    scenario.judge.minor = 34
    assert scenario.judge.expect("CL-1", "restart_gap[1]", 12.0) is False
''')
    r.assert_outcomes(skipped=0, passed=0)
    r.stdout.fnmatch_lines(["test_case.py U*",
                            "*UNDOCUMENTED test_case.py::test_x: undocumented: 1 value(s)*CL-1 restart_gap[[]1[]] = 12 *nothing documented for 1.34*",
                            "*= 1 undocumented in *"])
    assert r.ret == 0  # not a failure: visible, counted apart


def test_undocumented_is_a_skip_with_its_reason_in_junit(run, pytester):
    run('''
def test_x(scenario):
    scenario.judge.minor = 34
    scenario.judge.expect("CL-1", "restart_gap[1]", 12.0)
''', "--junitxml=j.xml")
    xml = (pytester.path / "j.xml").read_text()
    assert '<skipped type="pytest.skip" message="undocumented: 1 value(s)' in xml
    assert 'name="outcome" value="undocumented"' in xml


def test_a_flake_is_an_xfail_with_its_reason(run):
    r = run('''
def test_x(scenario):
    scenario.judge.expect("CL-1", "restart_gap[1]", 12.0)
    scenario.judge.set_aside("OM-1", "reason_missing", 1, "flake", "OOMKilled reason missing on a 137 exit")
''')
    r.assert_outcomes(xfailed=1)
    r.stdout.fnmatch_lines(["*XFAIL*flake: OM-1 reason_missing = 1 runs: OOMKilled reason missing on a 137 exit*"])


def test_an_environment_limit_is_a_skip_after_the_value_was_shown(run):
    r = run('''
def test_x(scenario):
    scenario.judge.set_aside("OM-1", "reason_missing", 0, "skipped", "clamped by the host")
''')
    r.assert_outcomes(skipped=1)
    r.stdout.fnmatch_lines(["*SKIPPED*environment: OM-1 reason_missing = 0 runs: clamped by the host*"])


def test_a_settled_skip_crosses_from_an_xdist_worker(run, pytester):
    # its report's longrepr (SkipLocation) went to execnet as is: "can't serialize", the worker
    # crashed, exit 3 and no summary (seen on a --kubeconfig run with -n 2)
    pytester.makepyfile(test_case='import pytest\n\ndef test_x(scenario):\n'
                                  '    scenario.judge.set_aside("OM-1", "reason_missing", 0, "skipped", "clamped by the host")\n')
    r = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rA", "-n", "1")
    assert r.ret == 0, r.stdout.str() + r.stderr.str()
    r.assert_outcomes(skipped=1)
    r.stdout.fnmatch_lines(["*SKIPPED*environment: OM-1 reason_missing = 0 runs: clamped by the host*"])


def test_a_dead_recorder_fails_a_test_whose_values_held(run):
    r = run('''
def test_x(scenario):
    scenario.judge.expect("CL-1", "restart_gap[1]", 12.0)
    scenario.recorder.dead = True
''')
    r.assert_outcomes(failed=1)
    r.stdout.fnmatch_lines(["*RecorderDied: the recorder died*killed by a test*"])


def test_a_misspelt_name_fails_at_the_line_that_judged_it(run):
    r = run('''
def test_x(scenario):
    scenario.judge.expect("CL-1", "restart_gpa[1]", 12.0)
''')
    r.assert_outcomes(failed=1)
    r.stdout.fnmatch_lines(["*UnknownMeasurement: CL-1 restart_gpa[[]1[]]: not a measurement the registry knows*"])


def test_values_that_hold_pass(run):
    r = run('''
def test_x(scenario):
    scenario.judge.expect("CL-1", "restart_gap[1]", 12.0)
''')
    r.assert_outcomes(passed=1)


def test_a_broken_cluster_fails_with_its_reason_and_no_traceback(run):
    r = run('''
from e2e.faults import ClusterBroken

def test_x(scenario):
    raise ClusterBroken("the cluster did not recover from kubelet-stop on n within 180 s: node n Ready=Unknown")
''')
    r.assert_outcomes(failed=1)
    r.stdout.fnmatch_lines(["*ClusterBroken: the cluster did not recover from kubelet-stop on n within 180 s: node n Ready=Unknown*"])
    assert "core.py" not in r.stdout.str()


def test_the_outcome_rides_on_the_report_not_in_the_skip_text(run, pytester):
    """The settled outcome and its reason are on the call report (``outcome`` user property, reason
    attribute: e2e.report.summary.settled); a body's own skip worded like one stays a plain skip."""
    pytester.makeconftest(CONFTEST + '''

from e2e.report.summary import settled


def pytest_runtest_logreport(report):
    if report.when == "call":
        print(f"\\nSETTLED {report.nodeid.split('::')[1]} {settled(report)!r}")
''')
    r = run('''
def test_x(scenario):
    scenario.judge.minor = 34
    scenario.judge.expect("CL-1", "restart_gap[1]", 12.0)

def test_own_words(scenario):
    pytest.skip("undocumented: the body's own words")
''', "-s")
    r.assert_outcomes(skipped=1)
    r.stdout.fnmatch_lines(["*SETTLED test_x ('undocumented', 'undocumented: 1 value(s) with nothing documented*1.34*')",
                            "*SETTLED test_own_words None", "*= 1 skipped, 1 undocumented in *"])


def test_a_collection_error_is_reported_as_such(run, pytester):
    """The outcome hooks see collection reports too (they carry no settled outcome)."""
    pytester.makepyfile(test_broken="import no_such_module_here\n")
    r = run('''
def test_x(scenario):
    pass
''')
    r.stdout.fnmatch_lines(["*ERROR collecting test_broken.py*", "*1 error*"])
    assert "INTERNALERROR" not in r.stdout.str() + r.stderr.str()


def test_the_outcome_survives_the_way_xdist_sends_reports(run, pytester):
    """xdist sends a worker's reports through pytest's public report hooks: the settled outcome
    and its reason come out on the controller's side."""
    pytester.makeconftest(CONFTEST + '''

from e2e.report.summary import settled

CONFIG = []


def pytest_configure(config):
    CONFIG.append(config)


def pytest_runtest_logreport(report):
    if report.when == "call":
        hook = CONFIG[0].hook
        data = hook.pytest_report_to_serializable(config=CONFIG[0], report=report)
        copy = hook.pytest_report_from_serializable(config=CONFIG[0], data=data)
        print(f"\\nSENT {settled(copy)!r}")
''')
    r = run('''
def test_x(scenario):
    scenario.judge.minor = 34
    scenario.judge.expect("CL-1", "restart_gap[1]", 12.0)
''', "-s")
    r.stdout.fnmatch_lines(["*SENT ('undocumented', 'undocumented: 1 value(s) with nothing documented*1.34*')"])
