"""Known upstream bugs (Expectation.known_bug): the judge's verdicts, the plugin's outcomes through
real pytest sessions (``pytester``) and compare's known-bug class.

Where no fix is known to reach the cluster's patch, a value that holds today's (buggy) expectation
is ``bug-present``: the test passes, marked; a value that holds the correct one is ``bug-fixed``: a
loud outcome of its own (skipped, counted apart, exit status 0). Where the bug's fix (KnownBug.fix)
should be in the patch, the correct value is ``fixed-as-expected`` (a pass) and the buggy one
``bug-present-despite-fix`` (the test fails, naming the fix). Any other value fails."""

from __future__ import annotations

import json

import pytest

from e2e.cli.compare import compare, load_run, main
from dataclasses import replace

from e2e.judge.expectations import REGISTRY, Band, CherryPick, Expectation, Fix, KnownBug, Registry
from e2e.judge.measurements import ExpectationFailed, Judge, MeasurementLog
from e2e.evidence.stamps import Stamp
from e2e.documented import known_bugs as kb_doc
from e2e.measure.known_bugs import (api_status_before, first_probe_after_start, fit_line, kubelet_leak, probes_before_started,
                                    readiness_during_termination, ready_before_first_probe, started_when_first_running)
from e2e.record.recorder import Change
from e2e.documented import known_bugs as doc
from e2e.evidence.kubelet_heap import HeapSample
from e2e.record.timeline import ContainerSample
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
        "correct": "6 s within [5.5, 9.5] s", "mechanism": BUG.mechanism, "expected": "present",
        "fix": "no fix is known",
        "range": "since an unknown release (none older than the ones read was checked); no fix known"}
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
        "kubernetes/kubernetes#116676 (closed, not fixed); no fix is known)",
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
        "(buggy: 'Pending'; correct: 'Failed'; kubernetes/kubernetes#116676 (closed, not fixed); no fix is known)",
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
    ("bug-present", "bug-fixed", "known bug: present → gone (no fix known)"),
    ("bug-fixed", "bug-present", "known bug: gone (no fix known) → present"),
    ("undocumented", "bug-present", "known bug: undocumented → present"),
    ("bug-present", "fixed-as-expected", "known bug: present → fixed"),
    ("fixed-as-expected", "fixed-as-expected", "known bug: fixed"),
])
def test_compare_lists_known_bug_states_as_their_own_class(tmp_path, a, b, change):
    value = {"bug-present": "Pending", "bug-fixed": "Failed", "undocumented": "Pending", "fixed-as-expected": "Failed"}
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


def test_a_present_despite_fix_value_fails_the_compare_by_its_test_not_by_its_class(tmp_path):
    ra = write(tmp_path / "a", [kb("ra", "v1.36.2", "Failed", "fixed-as-expected")])
    rb = write(tmp_path / "b", [kb("rb", "v1.36.3", "Pending", "bug-present-despite-fix")])
    xml = (rb / "junit.xml").read_text().replace('name="test_x">', 'name="test_x"><failure message="known bug"/>')
    (rb / "junit.xml").write_text(xml)
    (row, outcome) = compare(load_run(ra), load_run(rb))
    assert row.change == "known bug: fixed → present despite its fix"
    assert (outcome.b, outcome.change) == ("failed", "unexplained")


# -- the patch range and the fix (KnownBug.since, .fix): the four states of issue 44 -----------------

# The shape of a bug fixed on master for 1.37.0 and cherry-picked to release-1.36 for 1.36.3, to
# release-1.35 (open, not yet released); its facts are made up for the test, its shape is RS-6's and RS-5's
FIX = Fix("merged", "test", pr="kubernetes/kubernetes#900", released="1.37.0",
          cherry_picks=(CherryPick("release-1.36", "kubernetes/kubernetes#901", "merged", "1.36.3"),
                        CherryPick("release-1.35", "kubernetes/kubernetes#902", "open")))
FIXED_BUG = KnownBug("kubernetes/kubernetes#899 (open)", correct=6.0, correct_band=Band(5.5, 9.5), mechanism="m", fix=FIX)
PATCHED = Expectation("KB-1", "pod_gone_after_delete_s", 20.0, "[UP] test", unit="s", band=Band(20, 23), why="test",
                      known_bug=FIXED_BUG, verified_in=("1.35.4", "1.36.3", "1.37.2"))


def judged(tmp_path, kubernetes: str, value: float, entry: Expectation = PATCHED) -> tuple[Judge, dict]:
    r = Registry()
    r.add(entry)
    j = Judge(MeasurementLog(tmp_path / f"{kubernetes}-{value}.json"), test="t", run_id="r", kubernetes=kubernetes,
              minor=int(kubernetes.split(".")[1]), registry=r)
    j.expect("KB-1", "pod_gone_after_delete_s", value)
    (m,) = json.loads(j.log.path.read_text())["measurements"]
    return j, m


@pytest.mark.parametrize("kubernetes, value, verdict, expected, documented", [
    ("v1.36.2", 21.0, "bug-present", "present", 20.0),          # present as expected on this patch
    ("v1.36.3", 7.0, "fixed-as-expected", "fixed", 6.0),        # fixed as expected (the cherry-pick's release)
    ("v1.37.2", 7.0, "fixed-as-expected", "fixed", 6.0),        # ... and every patch of the master fix's minor on
    ("v1.36.3", 21.0, "bug-present-despite-fix", "fixed", 6.0),  # present although the fix should be in
    ("v1.36.2", 7.0, "bug-fixed", "present", 20.0),             # gone although no fix is known for this patch
    ("v1.35.4", 7.0, "bug-fixed", "present", 20.0),             # the 1.35 cherry-pick is open: no fix on 1.35
    ("v1.36.3", 14.0, "fail", "fixed", 6.0),                    # neither
])
def test_the_verdict_of_a_known_bug_reads_the_clusters_patch_against_its_fix(tmp_path, kubernetes, value, verdict,
                                                                              expected, documented):
    j, m = judged(tmp_path, kubernetes, value)
    assert (m["verdict"], m["details"]["known_bug"]["expected"], m["documented"]) == (verdict, expected, documented)
    assert [v.measurement.verdict for v in j.failures] == [verdict] * (verdict in ("fail", "bug-present-despite-fix"))
    if verdict == "fixed-as-expected":
        assert j.outcome() is None  # a plain pass, the value's verdict says why
        j.verify()


def test_present_despite_the_fix_fails_the_test_naming_the_fix_and_its_release(tmp_path):
    j, m = judged(tmp_path, "v1.36.3", 21.0)
    assert m["details"]["known_bug"]["fix"] == ("the fix is cherry-pick kubernetes/kubernetes#901 to release-1.36 "
                                                "(merged), released in 1.36.3 (on master: kubernetes/kubernetes#900, merged)")
    with pytest.raises(ExpectationFailed) as e:
        j.verify()
    assert "KB-1 pod_gone_after_delete_s: measured 21.0 s, expected 6 s within [5.5, 9.5] s" in str(e.value)
    assert ("known bug kubernetes/kubernetes#899 (open) present although its fix should be in v1.36.3: the fix is "
            "cherry-pick kubernetes/kubernetes#901 to release-1.36 (merged), released in 1.36.3") in str(e.value)


def test_gone_although_no_fix_is_known_stays_a_loud_outcome_naming_the_fix_that_is_not_out(tmp_path):
    j, _ = judged(tmp_path, "v1.35.4", 7.0)
    kind, reason = j.outcome()
    assert kind == "bug-fixed" and reason.endswith(
        "kubernetes/kubernetes#899 (open); the fix is cherry-pick kubernetes/kubernetes#902 to release-1.35 (open), "
        "not yet released (on master: kubernetes/kubernetes#900, merged))")


@pytest.mark.parametrize("kubernetes, fix, expected", [
    ("v1.36.2", FIX, "present"), ("v1.36.3", FIX, "fixed"), ("v1.36.9", FIX, "fixed"), ("v1.37.0", FIX, "fixed"),
    ("v1.38.1", FIX, "fixed"), ("v1.35.9", FIX, "present"), ("v1.34.4", FIX, "present"),
    ("v1.36.3-eks-4a1b", FIX, "fixed"), ("v1.36", FIX, "unknown"), ("v1.36.3", None, "present"),
    # RS-5's shape: in 1.37.2 (its first 1.37 patch unknown), the 1.36 cherry-pick merged after 1.36.3
    ("v1.37.1", Fix("merged", "t", released="≤1.37.2"), "unknown"),
    ("v1.37.2", Fix("merged", "t", released="≤1.37.2"), "fixed"),
    ("v1.36.3", Fix("merged", "t", cherry_picks=(CherryPick("release-1.36", "k/k#1", "merged", ">1.36.3"),)), "present"),
    ("v1.36.4", Fix("merged", "t", cherry_picks=(CherryPick("release-1.36", "k/k#1", "merged", ">1.36.3"),)), "unknown"),
])
def test_the_state_a_patch_is_expected_in(kubernetes, fix, expected):
    assert KnownBug("k/k#9", correct=0, mechanism="m", fix=fix).expected_on(kubernetes) == expected


@pytest.mark.parametrize("kubernetes, value, verdict", [
    ("v1.37.1", 21.0, "bug-present"),  # unknown whether 1.37.1 has the fix: present, as without one
    ("v1.37.1", 7.0, "bug-fixed"),     # ... and the correct value a finding to check, never a silent pass
    ("v1.37.2", 7.0, "fixed-as-expected"),
])
def test_a_patch_the_facts_cannot_tell_is_judged_as_one_without_the_fix(tmp_path, kubernetes, value, verdict):
    bug = KnownBug("k/k#9", correct=6.0, correct_band=Band(5.5, 9.5), mechanism="m",
                   fix=Fix("merged", "t", pr="k/k#10", released="≤1.37.2"))
    _, m = judged(tmp_path, kubernetes, value, replace(PATCHED, known_bug=bug))
    assert m["verdict"] == verdict


@pytest.mark.parametrize("kubernetes, value, verdict, race", [
    ("v1.36.2", 21.0, "bug-present", "happened"),       # a race stays a race where the fix is not in
    ("v1.36.2", 7.0, "pass", "did not happen"),
    ("v1.36.3", 7.0, "fixed-as-expected", None),        # where the fix is in, the race no longer decides
    ("v1.36.3", 21.0, "bug-present-despite-fix", None),
])
def test_a_race_stays_a_race_until_its_fix(tmp_path, kubernetes, value, verdict, race):
    _, m = judged(tmp_path, kubernetes, value, replace(PATCHED, known_bug=replace(FIXED_BUG, race="r")))
    assert (m["verdict"], (m["details"].get("race") or {}).get("outcome")) == (verdict, race)


def test_a_fix_names_releases_as_read_or_is_refused():
    for bad in ("1.37", "v1.37.0", "1.37.0?", "≥1.37.0"):
        with pytest.raises(ValueError, match="is no release"):
            Fix("merged", "t", released=bad)
    with pytest.raises(ValueError, match="not on release-1.36"):
        CherryPick("release-1.36", "k/k#1", "merged", "1.35.5")
    with pytest.raises(ValueError, match="no release branch"):
        CherryPick("1.36", "k/k#1", "merged")
    with pytest.raises(ValueError, match="two cherry-picks to release-1.36"):
        Fix("merged", "t", cherry_picks=(CherryPick("release-1.36", "k/k#1", "open"),) * 2)
    with pytest.raises(ValueError, match="no source"):
        Fix("merged", " ")
    with pytest.raises(ValueError, match="no release 1.<minor>.<patch>"):
        KnownBug("k/k#9", correct=0, mechanism="m", since="1.35")


def test_every_known_bug_of_the_suite_names_its_fix_as_read():
    """The suite's entries (issue 44 items 2 and 3): RS-5's fix is in 1.37.2, its 1.36 cherry-pick
    after 1.36.3; RS-6's in 1.37.0, no cherry-pick; KB-6's in 1.37.0, its cherry-picks open; KB-4's
    merged on master, in no release; KB-7's merged on master, its 1.36 and 1.35 cherry-picks open, none
    to release-1.37; KB-1's and KB-5's proposed fixes are open; the others have none."""
    expected = {("RS-5", v): s for v, s in (("v1.36.3", "present"), ("v1.36.4", "unknown"), ("v1.37.2", "fixed"))}
    expected |= {("RS-6", v): s for v, s in (("v1.36.3", "present"), ("v1.37.0", "fixed"), ("v1.37.2", "fixed"))}
    # issue 44 item 3: KB-6's fix #140882 in 1.37.0, its cherry-picks open; KB-4's #141342 in no release
    expected |= {("KB-6", v): s for v, s in (("v1.35.4", "present"), ("v1.36.0", "absent"), ("v1.36.2", "absent"),
                                             ("v1.36.3", "present"), ("v1.37.0", "fixed"), ("v1.37.2", "fixed"))}
    expected |= {("KB-4", v): "present" for v in ("v1.35.4", "v1.36.3", "v1.37.2", "v1.37.3")}
    expected |= {("KB-7", v): "present" for v in ("v1.35.4", "v1.36.2", "v1.36.3", "v1.37.2", "v1.37.3")}
    # KB-8's fix #139850 in 1.37.0, its cherry-pick #140066 in 1.36.3; 1.36.0–1.36.2 have the leak
    expected |= {("KB-8", v): s for v, s in (("v1.36.0", "present"), ("v1.36.2", "present"), ("v1.36.3", "fixed"),
                                             ("v1.37.0", "fixed"), ("v1.37.2", "fixed"))}
    bugs = [e for e in REGISTRY.entries if e.known_bug is not None]
    for (case, version), state in expected.items():
        assert {e.known_bug.expected_on(version) for e in bugs if e.case == case} == {state}, (case, version)
    fixed = {e.case for e in bugs if e.known_bug.fix is not None}
    assert fixed == {"KB-1", "KB-4", "KB-5", "KB-6", "KB-7", "KB-8", "RS-5", "RS-6"}
    assert all(e.known_bug.expected_on(v) == "present" for e in bugs if e.case not in ("RS-5", "RS-6", "KB-6", "KB-8")
               for v in ("v1.34.4", "v1.35.4", "v1.36.3", "v1.37.2"))


# -- KB-4, KB-5, KB-6 (issue 44 item 3): the measurements and the suite's own entries -----------


def stamps(*rows: tuple[float, str]) -> list[Stamp]:
    return [Stamp(at, event) for at, event in rows]


# a restarted run with the bug: liveness and readiness before the startup probe's first success
RESTARTED = stamps((100.0, "start"), (100.4, "probe:readiness:success"), (101.2, "probe:liveness:success"),
                   (102.2, "probe:liveness:success"), (120.3, "probe:startup:success"), (121.2, "probe:liveness:success"))
# the correct one: nothing before the startup probe's success
GATED = stamps((100.0, "start"), (100.9, "probe:startup:failure"), (102.9, "probe:startup:success"),
               (103.1, "probe:readiness:success"), (103.5, "probe:liveness:success"))


@pytest.mark.parametrize("log, runs", [(RESTARTED, 3), (GATED, 0), (RESTARTED[:4], None)])
def test_probe_runs_before_the_startup_probe_passed(log, runs):
    v = probes_before_started("restarted", log)
    assert (v.case, v.name, v.value) == ("KB-4", "probe_runs_before_started[restarted]", runs)
    assert v.at == (None if runs is None else next(s.at for s in log if s.event == "probe:startup:success"))


def sample(at: float, restart_count: int, state: str, started: bool | None) -> ContainerSample:
    return ContainerSample(at, "p", "app", False, state, "", "", restart_count, None, None, None, False, started)


def test_started_in_the_first_running_status_of_a_run():
    samples = [sample(1, 0, "waiting", False), sample(2, 0, "running", False), sample(9, 0, "running", True),
               sample(30, 1, "waiting", None), sample(31, 1, "running", True), sample(40, 1, "running", False)]
    assert [started_when_first_running(k, samples, "app", n).value for k, n in (("first run", 0), ("restarted", 1))] == [False, True]
    assert started_when_first_running("restarted", samples, "app", 2).value is None
    assert started_when_first_running("restarted", samples, "other", 1).value is None


@pytest.mark.parametrize("log, ready_false_at, values", [
    # the fix: the probe fails at the next period, Ready False at once; runs go on through the grace period
    (stamps((49.0, "probe:readiness:success"), (50.0, "sigterm"), (50.6, "probe:readiness:failure"),
            (51.6, "probe:readiness:failure")), 51.1, [1.1, 2]),
    # the bug: no exec probe after the cancel; Ready False when the container is gone
    (stamps((49.0, "probe:readiness:success"), (50.0, "sigterm")), 66.2, [16.2, 0]),
    (stamps((50.0, "sigterm"),), None, [None, 0]),
])
def test_readiness_during_termination(log, ready_false_at, values):
    got = readiness_during_termination(50.0, ready_false_at, log)
    assert [(v.case, v.name) for v in got] == [("KB-6", "ready_false_after_sigterm_s"), ("KB-6", "readiness_probe_runs_after_sigterm")]
    assert [v.value for v in got] == values


def suite_judge(tmp_path, kubernetes: str, cgroup: int | None = 1) -> Judge:
    return Judge(MeasurementLog(tmp_path / f"{kubernetes}.json"), test="t", run_id="r", kubernetes=kubernetes,
                 minor=int(kubernetes.split(".")[1]), cgroup=cgroup)


@pytest.mark.parametrize("kubernetes, case, name, value, verdict", [
    # KB-4 (a race): on 1.35+ the copy is the bug, the gated run did not happen to race; 1.34 has no copy
    ("v1.37.2", "KB-4", "probe_runs_before_started[restarted]", 3, "bug-present"),
    ("v1.37.2", "KB-4", "probe_runs_before_started[restarted]", 0, "pass"),
    ("v1.37.2", "KB-4", "started_when_first_running[restarted]", True, "bug-present"),
    ("v1.34.4", "KB-4", "probe_runs_before_started[restarted]", 0, "pass"),
    ("v1.34.4", "KB-4", "probe_runs_before_started[restarted]", 3, "fail"),
    ("v1.37.2", "KB-4", "probe_runs_before_started[first run]", 1, "fail"),
    # KB-5: no fix released; the correct reason would be a finding
    ("v1.37.2", "KB-5", "terminated_reason", "OOMKilled", "bug-present"),
    ("v1.37.2", "KB-5", "terminated_reason", "Error", "bug-fixed"),
    # KB-6: fixed in 1.37.0; present on 1.35/1.36; 1.34 never had it
    ("v1.37.2", "KB-6", "ready_false_after_sigterm_s", 1.1, "fixed-as-expected"),
    ("v1.37.2", "KB-6", "ready_false_after_sigterm_s", 16.2, "bug-present-despite-fix"),
    ("v1.37.2", "KB-6", "readiness_probe_runs_after_sigterm", 13, "fixed-as-expected"),
    ("v1.36.3", "KB-6", "ready_false_after_sigterm_s", 16.2, "bug-present"),
    ("v1.36.3", "KB-6", "readiness_probe_runs_after_sigterm", 0, "bug-present"),
    ("v1.36.3", "KB-6", "readiness_probe_runs_after_sigterm", 13, "bug-fixed"),
    # KB-6: 1.36.0–1.36.2 never had it (#141006; v1.36.2's startPodSync): the correct value as expected, the bug a failure
    ("v1.36.2", "KB-6", "ready_false_after_sigterm_s", 1.1, "absent-as-expected"),
    ("v1.36.2", "KB-6", "readiness_probe_runs_after_sigterm", 13, "absent-as-expected"),
    ("v1.36.2", "KB-6", "ready_false_after_sigterm_s", 16.2, "fail"),
    ("v1.34.4", "KB-6", "ready_false_after_sigterm_s", 1.1, "pass"),
    ("v1.34.4", "KB-6", "ready_false_after_sigterm_s", 16.2, "fail"),
    # KB-7: #141487 in no release, no cherry-pick to release-1.37: present on 1.35+; 1.34 starts readiness at Failure
    ("v1.37.2", "KB-7", "ready_before_first_probe[replacement]", True, "bug-present"),
    ("v1.37.2", "KB-7", "ready_s_before_first_probe[replacement]", 24.1, "bug-present"),
    ("v1.37.2", "KB-7", "ready_s_before_first_probe[replacement]", 0.0, "bug-fixed"),
    ("v1.37.2", "KB-7", "ready_s_before_first_probe[replacement]", 8.0, "fail"),  # neither band: e.g. the restart too late
    ("v1.36.2", "KB-7", "ready_before_first_probe[replacement]", True, "bug-present"),
    ("v1.36.3", "KB-7", "ready_before_first_probe[replacement]", False, "bug-fixed"),
    ("v1.34.4", "KB-7", "ready_before_first_probe[replacement]", False, "pass"),
    ("v1.34.4", "KB-7", "ready_s_before_first_probe[replacement]", 24.1, "fail"),
    ("v1.37.2", "KB-7", "api_status_at_restart", "Ready=True restartCount=0", "pass"),
    ("v1.37.2", "KB-7", "api_status_at_restart", "Ready=False restartCount=0", "fail"),  # the node went Unknown: no input
    ("v1.37.2", "KB-7", "replacement_start_before_restart_s", 13.4, "pass"),
    ("v1.37.2", "KB-7", "replacement_start_before_restart_s", 8.0, "fail"),  # inside the 10 s grace: not the bug's input
    ("v1.37.2", "KB-7", "first_readiness_probe_after_start_s[replacement]", 40.6, "pass"),
    ("v1.37.2", "KB-7", "first_readiness_probe_after_start_s[replacement]", 12.0, "fail"),
    # KB-8: the leak on 1.36.0–1.36.2; fixed in 1.36.3 (#140066) and 1.37.0 (#139850); 1.34 and 1.35 never had it
    ("v1.36.2", "KB-8", "heap_objects_per_pod_sync", 3.1, "bug-present"),
    ("v1.36.2", "KB-8", "heap_objects_per_pod_sync", 0.05, "bug-fixed"),
    ("v1.36.2", "KB-8", "heap_objects_per_pod_sync", 0.5, "fail"),  # between the bands: neither
    ("v1.36.3", "KB-8", "heap_objects_per_pod_sync", 0.05, "fixed-as-expected"),
    ("v1.36.3", "KB-8", "heap_objects_per_pod_sync", 3.1, "bug-present-despite-fix"),
    ("v1.37.2", "KB-8", "heap_objects_per_pod_sync", -0.1, "fixed-as-expected"),
    ("v1.37.2", "KB-8", "heap_objects_per_pod_sync", 1.2, "bug-present-despite-fix"),
    ("v1.35.4", "KB-8", "heap_objects_per_pod_sync", 0.05, "pass"),
    ("v1.35.4", "KB-8", "heap_objects_per_pod_sync", 3.1, "fail"),
    ("v1.36.2", "KB-8", "goroutines_per_pod_sync", 0.001, "pass"),
    ("v1.36.2", "KB-8", "goroutines_per_pod_sync", 1.0, "fail"),
    ("v1.36.3", "KB-8", "heap_objects_fit_stderr", 0.15, "pass"),
    ("v1.36.3", "KB-8", "heap_objects_fit_stderr", 0.3, "fail"),
    ("v1.36.2", "KB-8", "pod_syncs_per_s", 18.5, "pass"),
    ("v1.36.2", "KB-8", "pod_syncs_per_s", 0.4, "fail"),  # the periodic re-syncs alone: the probes changed nothing
])
def test_the_suites_new_known_bugs_judged_by_patch(tmp_path, kubernetes, case, name, value, verdict):
    j = suite_judge(tmp_path, kubernetes)
    j.expect(case, name, value)
    (m,) = json.loads(j.log.path.read_text())["measurements"]
    assert m["verdict"] == verdict


@pytest.mark.parametrize("cgroup, reason, code, verdicts", [
    (1, "OOMKilled", 143, ["bug-present", "pass"]),
    (2, "OOMKilled", 137, ["pass", "pass"]),
    (2, "OOMKilled", 143, ["pass", "fail"]),
])
def test_kb5_is_keyed_by_cgroup(tmp_path, cgroup, reason, code, verdicts):
    """cgroup v2's memory.oom.group kills the whole container at the child's OOM kill: 137, no bug to judge."""
    j = suite_judge(tmp_path, "v1.37.2", cgroup)
    j.expect("KB-5", "terminated_reason", reason)
    j.expect("KB-5", "exit_code", code)
    assert [m["verdict"] for m in json.loads(j.log.path.read_text())["measurements"]] == verdicts


def test_an_unaffected_range_is_one_minors_patches_with_its_reason():
    from e2e.judge.expectations import Unaffected

    u = Unaffected("1.36.0", "1.36.2", "startPodSync of v1.36.2")
    assert (u.covers(36, 0), u.covers(36, 2), u.covers(36, 3), u.covers(35, 1)) == (True, True, False, False)
    bug = KnownBug("k/k#1", correct=0, mechanism="m", since="1.35.0", unaffected=(u,))
    assert bug.remedy("v1.36.1") == "1.36.0–1.36.2 do not have it (startPodSync of v1.36.2)"
    assert bug.patch_range() == "since 1.35.0; 1.36.0–1.36.2 do not have it; no fix known"
    for first, last, why in (("1.36.2", "1.36.0", "w"), ("1.35.0", "1.36.2", "w"), ("1.36", "1.36.2", "w"), ("1.36.0", "1.36.2", " ")):
        with pytest.raises(ValueError):
            Unaffected(first, last, why)


# -- KB-7 (issue 44 item 3): a container recreated during an API cut, Ready before its probe -----


def ready_sample(at: float, restart_count: int, state: str, ready: bool) -> ContainerSample:
    return ContainerSample(at, "p", "app", False, state, "", "", restart_count, None, None, None, ready, True)


# the first run Ready; the cut; the restarted kubelet's first status of the replacement Ready (the bug), then its
# failing probe at 191.2 makes it not Ready
STALE = [ready_sample(100, 0, "running", False), ready_sample(141, 0, "running", True),
         ready_sample(167, 1, "running", True), ready_sample(191.5, 1, "running", False)]
# the fix: the replacement's first status not Ready
FIXED = [ready_sample(100, 0, "running", False), ready_sample(141, 0, "running", True), ready_sample(167, 1, "running", False)]


@pytest.mark.parametrize("samples, probe_at, values", [
    (STALE, 191.2, [True, 24.2]),
    (FIXED, 191.2, [False, 0.0]),
    (STALE[:2], 191.2, [False, 0.0]),  # the replacement never reported: no Ready before its probe
    (STALE, None, [None, None]),  # its probe never ran: nothing to judge
])
def test_ready_before_the_replacements_first_readiness_probe(samples, probe_at, values):
    got = ready_before_first_probe("replacement", samples, "app", 1, probe_at)
    assert [(v.case, v.name) for v in got] == [("KB-7", "ready_before_first_probe[replacement]"),
                                               ("KB-7", "ready_s_before_first_probe[replacement]")]
    assert [v.value for v in got] == values
    # the first run's Ready (restartCount 0) never counts for the replacement
    assert ready_before_first_probe("replacement", STALE[:2], "app", 1, 191.2)[0].value is False


def test_first_readiness_probe_after_the_runs_start():
    log = [Stamp(100.0, "start", (("run", "2"),)), Stamp(140.6, "probe:readiness:failure"), Stamp(141.6, "probe:readiness:failure")]
    v = first_probe_after_start("replacement", log)
    assert (v.name, v.value, v.at) == ("first_readiness_probe_after_start_s[replacement]", 40.6, 140.6)
    assert first_probe_after_start("replacement", log[:1]).value is None


def pod_change(at: float, ready: str, restart_count: int) -> Change:
    obj = {"metadata": {"name": "stale-ready"},
           "status": {"conditions": [{"type": "Ready", "status": ready}],
                      "containerStatuses": [{"name": "app", "restartCount": restart_count, "containerID": f"containerd://{restart_count}"}]}}
    return Change(at, "Pod", "MODIFIED", "stale-ready", obj)


def test_the_api_status_the_restarted_kubelet_starts_from():
    changes = [pod_change(100, "False", 0), pod_change(141, "True", 0), pod_change(167, "True", 1)]
    v = api_status_before(changes, "app", 165.0)
    assert (v.name, v.value, v.at) == ("api_status_at_restart", "Ready=True restartCount=0", 141)
    assert api_status_before(changes, "app", 99.0).value is None


def test_kb7_cut_stays_inside_the_node_monitor_grace_period():
    """The multi-node profile's defaults (lease 40 s, grace 50 s) leave room for the cut; the
    fast-lifecycle one's (20 s, 20 s) do not, so the node would go Unknown and its pods not Ready."""
    assert kb_doc.KB7_CUT_S < kb_doc.kb7_cut_limit_s(40, 50) == pytest.approx(34.6)
    assert kb_doc.KB7_CUT_S > kb_doc.kb7_cut_limit_s(20, 20)
    # the bug's window is open: the restart ≥ 10 s after the replacement's start, its probe 40 s after it
    assert 0 < kb_doc.KB7_STALE_LOW_S < kb_doc.KB7_INITIAL_DELAY_S - kb_doc.KB7_HEAL_AFTER_EXIT_S < kb_doc.KB7_STALE_HIGH_S
# -- KB-8: what the kubelet keeps per pod sync --------------------------------------------------


def test_fit_line_gives_slope_intercept_and_the_slopes_standard_error():
    exact = fit_line([0, 1, 2, 3], [5, 8, 11, 14])
    assert (exact.slope, exact.intercept, exact.stderr, exact.n) == (3.0, 5.0, 0.0, 4)
    # residuals +1, −1, −1, +1 around y = 2.5 + 0·x: Σr² = 4, n − 2 = 2, Σ(x − x̄)² = 5 → √(2 / 5)
    noisy = fit_line([0, 1, 2, 3], [3.5, 1.5, 1.5, 3.5])
    assert noisy.slope == pytest.approx(0.0) and noisy.stderr == pytest.approx((2 / 5) ** 0.5)
    for xs, ys in (([0, 1], [0, 1]), ([0, 1, 2], [0, 1]), ([1, 1, 1], [0, 1, 2])):
        with pytest.raises(ValueError):
            fit_line(xs, ys)


def heap_samples(objects_per_sync: float, goroutines_per_sync: float = 0.0, wobble: int = 0, n: int = 121) -> list[HeapSample]:
    """A kubelet sampled every 2 s under 30 syncs/s (KB-8's load and window): its heap grows
    ``objects_per_sync`` (≈ 120 B each) per sync, give or take ``wobble`` objects every other
    sample; RSS 1 MB/min; 0.3 cores."""
    out = []
    for i in range(n):
        syncs = 10_000 + 60 * i
        extra = wobble if i % 2 else -wobble
        objects = 400_000 + round(objects_per_sync * 60 * i) + extra
        out.append(HeapSample(1000.0 + 2 * i, syncs, objects, 40_000_000 + 120 * (objects - 400_000), 300 + goroutines_per_sync * 60 * i,
                              90e6 + 1e6 * i * 2 / 60, 50 + 0.3 * 2 * i, 500 + i))
    return out


@pytest.mark.parametrize("per_sync, wobble, slope, stderr_below", [
    (3.42, 0, 3.42, 1e-9),     # the issue's leak
    (0.0, 0, 0.0, 1e-9),       # the fix
    (0.0, 3000, 0.0, 0.2),     # the fix, a live heap wandering by ±3000 objects: still resolved to < 0.2
    (3.42, 3000, 3.42, 0.2),
])
def test_kubelet_leak_is_the_heaps_slope_against_pod_syncs(per_sync, wobble, slope, stderr_below):
    values = {v.name: v for v in kubelet_leak(heap_samples(per_sync, wobble=wobble))}
    assert sorted(values) == ["goroutines_per_pod_sync", "heap_objects_fit_stderr", "heap_objects_per_pod_sync", "pod_syncs_per_s"]
    assert {v.case for v in values.values()} == {"KB-8"}
    assert values["heap_objects_per_pod_sync"].value == pytest.approx(slope, abs=0.01)
    assert values["heap_objects_fit_stderr"].value < stderr_below
    assert values["goroutines_per_pod_sync"].value == 0
    assert values["pod_syncs_per_s"].value == 30.0
    d = values["heap_objects_per_pod_sync"].details
    assert (d["samples"], d["window_s"], d["pod_syncs"], d["forced_collections"], d["kubelet_cpu_cores"]) == (121, 240.0, 7200, 120, 0.3)
    assert d["heap_bytes_per_pod_sync"]["slope"] == pytest.approx(120 * slope, abs=2)
    assert d["rss_bytes"]["per_s"] == pytest.approx(1e6 / 60, abs=0.1)


def test_kubelet_leak_sees_a_goroutine_per_sync():
    values = {v.name: v.value for v in kubelet_leak(heap_samples(0.0, goroutines_per_sync=1.0))}
    assert values["goroutines_per_pod_sync"] == pytest.approx(1.0)


def test_kubelet_leak_refuses_too_few_samples_no_syncs_and_a_restarted_kubelet():
    samples = heap_samples(0.0, n=5)
    with pytest.raises(ValueError, match="3 or more samples"):
        kubelet_leak(samples[:2])
    with pytest.raises(ValueError, match="no pod sync"):
        kubelet_leak([replace(s, pod_syncs=10_000) for s in samples])
    with pytest.raises(ValueError, match="restarted"):
        kubelet_leak([*samples[:3], replace(samples[3], pod_syncs=5)])


def test_kb8_bands_keep_a_leak_and_none_apart_by_two_of_the_fits_standard_errors():
    """The bands from the source (module doc of e2e.documented.known_bugs, KB-8): a leaked context
    keeps 1 to 6 objects; none is kept elsewhere; each band reaches KB8_MARGIN beyond, twice the
    largest standard error judged, and the two stay apart."""
    (leak,) = [e for e in REGISTRY.entries if (e.case, e.name, e.minors) == ("KB-8", "heap_objects_per_pod_sync", (36, None))]
    (older,) = [e for e in REGISTRY.entries if (e.case, e.name, e.minors) == ("KB-8", "heap_objects_per_pod_sync", (34, 35))]
    assert doc.KB8_ISSUE_OBJECTS_PER_SYNC == 3.42 and doc.KB8_MARGIN == 2 * doc.KB8_FIT_STDERR_MAX
    assert leak.band == Band(doc.KB8_LEAK_MIN_OBJECTS - doc.KB8_MARGIN, doc.KB8_LEAK_MAX_OBJECTS + doc.KB8_MARGIN) == Band(0.6, 6.4)
    assert leak.known_bug.correct_band == older.band == Band(-0.4, 0.4)
    assert leak.band.low > leak.known_bug.correct_band.high
    assert leak.documented in leak.band and leak.known_bug.since == "1.36.0"
    assert [c.pr for c in leak.known_bug.fix.cherry_picks] == ["kubernetes/kubernetes#140066"]
    assert "1.36.2" in leak.verified_in and {"1.34.4", "1.35.4"} <= set(older.verified_in)
