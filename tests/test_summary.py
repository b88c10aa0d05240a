"""The run summary (e2e.report.summary): per case the most telling verdict, the values against their
bands, flakes/skips/undocumented with reasons; at the end of the terminal output, in
summary.md, and as the plain summary.html page."""

from __future__ import annotations

import json

import pytest
from helpers import fake_scenario_conftest

from e2e.report import history
from e2e.report.summary import Outcome, build, drift_lines, expected, key_values, markdown, rank, terminal_lines, value

TEST = "scenarios/crashloop/test_crashloop.py::test_backoff_gaps_and_waiting_state"


def m(case: str, name: str, val, verdict: str = "pass", band=None, documented=None, unit: str = "", test: str = TEST,
      run_id: str = "run-1", **details) -> dict:
    """A measurements.json entry (the fields the summary reads)."""
    return {"case": case, "name": name, "value": val, "unit": unit, "documented": documented, "band": band,
            "why": details.pop("why", ""), "source": "[S1] CASES.md", "verdict": verdict, "test": test,
            "run_id": run_id, "kubernetes": "v1.37.2", "details": details}


GAPS = [m("CL-1", f"restart_gap[{i}]", v, band=b, documented=d, unit="s")
        for i, (v, d, b) in enumerate([(0.0, 0.0, [0, 3]), (11.0, 10.0, [9, 23]), (21.0, 20.0, [19, 33])])]


def test_case_verdict_is_the_most_telling():
    values = GAPS + [
        m("CL-2", "waiting_reason", "CrashLoopBackOff", documented="CrashLoopBackOff"),
        m("CL-2", "phase_while_waiting", "Pending", verdict="fail", documented="Running"),
        m("OM-1", "last_terminated_reason", "Error", verdict="flake", documented="OOMKilled",
          reason="OOMKilled missing on a 137 exit (upstream race)"),
        m("OM-5", "oom_score_adj", 0, verdict="skipped", documented=-997, reason="clamped by the node"),
        m("PS-9", "grace", 3, verdict="undocumented", why="PS-9 grace: nothing documented for 1.37"),
        m("PS-9", "other", 1, verdict="surprising"),  # a verdict this module does not know: shown as it is
    ]
    outcomes = [Outcome(TEST, "failed", ["CL-1", "CL-2"], "ExpectationFailed: 1 of 5 measured values"),
                Outcome("t::om1", "passed", ["OM-1"]), Outcome("t::om5", "passed", ["OM-5"]),
                Outcome("t::sc1", "skipped", ["SC-1"], "needs Kubernetes 1.33+, cluster is v1.32.0")]
    summaries = {s.case: s for s in build(values, outcomes)}
    assert [s for s in summaries] == ["CL-1", "CL-2", "OM-1", "OM-5", "PS-9", "SC-1"]
    # CL-1's values pass but its test failed (through CL-2): the case is not a pass
    assert {c: s.verdict for c, s in summaries.items()} == {
        "CL-1": "fail", "CL-2": "fail", "OM-1": "flake", "OM-5": "skipped", "PS-9": "surprising", "SC-1": "skipped"}
    assert summaries["OM-1"].notes() == [
        "flake: last_terminated_reason = 'Error' — OOMKilled missing on a 137 exit (upstream race)"]
    assert summaries["PS-9"].notes()[0] == "undocumented: grace = 3 — PS-9 grace: nothing documented for 1.37"
    assert summaries["CL-2"].notes() == [
        "fail: phase_while_waiting = 'Pending' — expected 'Running'",
        f"test failed: {TEST} — ExpectationFailed: 1 of 5 measured values"]
    assert summaries["SC-1"].notes() == ["test skipped: t::sc1 — needs Kubernetes 1.33+, cluster is v1.32.0"]


def test_a_known_bugs_note_names_its_issue_and_correct_value():
    """Trial 6: summary.md said only "bug-present: killed_after_first_delete_s = 20.0 s"."""
    bug = {"issue": "kubernetes/kubernetes#134338 (open)", "buggy": "20 s within [20, 23] s",
           "correct": "6 s within [5.5, 9.5] s", "mechanism": "runSleepHandler waits for the pod worker's context only"}
    values = [m("KB-1", "pod_gone_after_delete_s", 20.0, verdict="bug-present", band=[20, 23], documented=20.0, unit="s",
                known_bug=bug),
              m("KB-1", "pod_gone_s", 7.0, verdict="bug-fixed", band=[20, 23], documented=20.0, unit="s", known_bug=bug)]
    (s,) = build(values, [])
    assert s.notes() == [
        "bug-present: pod_gone_after_delete_s = 20 s — known bug kubernetes/kubernetes#134338 (open); "
        "correct: 6 s within [5.5, 9.5] s",
        "bug-fixed: pod_gone_s = 7 s — known bug kubernetes/kubernetes#134338 (open); correct: 6 s within [5.5, 9.5] s"]


def test_rank_puts_unknown_verdicts_after_fail():
    assert sorted(["pass", "skipped", "odd", "fail", "flake", "undocumented"], key=rank) == \
        ["fail", "odd", "undocumented", "flake", "skipped", "pass"]


def test_values_and_expectations_read_like_the_judge():
    assert value(GAPS[1]) == "11 s"
    assert expected(GAPS[1]) == "10 s within [9, 23] s"
    assert value(m("CL-2", "waiting_reason", "CrashLoopBackOff")) == "'CrashLoopBackOff'"
    assert expected(m("PS-9", "grace", 3, verdict="undocumented")) == "-"
    # numbers in full, an open end as measurements.json writes it (None)
    restarts = m("CL-4", "restart_count[OnFailure,exit1]", 1, band=[1, None], documented=1, unit="restarts")
    assert expected(restarts) == "≥ 1 restarts"
    assert expected(m("ES-1", "x", 1.0, band=[0, 104857000.0], documented=0, unit="B")) == "0 B within [0, 104857000] B"
    assert value(m("CL-2", "visible", 0.127, unit="s")) == "0.127 s"
    # a new user's sixth trial: a number judged by equality lost its unit ("documented 6")
    assert expected(m("TR-1", "x", 6.0, documented=6, unit="s")) == "6 s"
    assert expected(m("TR-1", "flag", True, documented=True)) == "True"


def test_values_have_the_precision_and_bounds_of_their_documented_value():
    """issue 29 (6): the summary printed ``20.195712 s`` against a documented ``20 s within [19, 24] s``,
    and ``[1, 1000000000]`` for an open upper bound."""
    def timing(val, documented, band):
        return m("NF-6", "x_s", val, band=band, documented=documented, unit="s")

    assert value(timing(20.195712, 20.0, [19, 24])) == "20 s"
    assert value(timing(5.991337, 6.0, [5.5, 6.5])) == "6.0 s"
    assert value(timing(0.507577, 0.1, [0.1, 1])) == "0.5 s"
    # never rounded across a band end: a value outside reads outside
    assert value(timing(23.04, 10.0, [9, 23])) == "23.04 s" and value(timing(8.96, 10.0, [9, 23])) == "8.96 s"
    assert value(m("CL-1", "exact", 20.4, documented=20.0, unit="s")) == "20.4 s"  # judged by equality: not "20 s"
    assert value(m("CL-2", "visible", 0.127, unit="s")) == "0.127 s"  # nothing documented: as measured
    # a value that is not zero never reads "0" (CL-2 on CI: 0.355 s against 0 within [0, 19])
    assert value(timing(0.355, 0.0, [0, 19])) == "0.4 s" and value(timing(0.0004, 0.0, [0, 3])) == "0.0004 s"
    assert value(timing(0.0, 0.0, [0, 3])) == "0 s"
    # a new user's sixth trial: inside the band but read as its end (−0.806 s as "−1 s" against
    # [−1, 1]); rounded up to twice itself (0.054 s as "0.1 s" against [0, 1])
    assert value(timing(-0.806, 0.0, [-1, 1])) == "-0.8 s" and value(timing(0.054, 0.0, [0, 1])) == "0.05 s"
    assert value(timing(0.996, 0.0, [-1, 1])) == "0.996 s" and value(timing(-1.0, 0.0, [-1, 1])) == "-1 s"
    assert value(timing(0.14, 0.0, [0, 1])) == "0.1 s"  # rounded down: as before
    probes = m("PS-8", "readiness_probes_during_termination", 4, band=[1, None], documented=1, unit="probes")
    (s,) = build([probes], [Outcome(TEST, "passed", ["PS-8"])])
    assert key_values(s) == "readiness_probes_during_termination 4 probes vs ≥ 1"
    (s,) = build([timing(20.195712, 20.0, [19, 24])], [Outcome(TEST, "passed", ["NF-6"])])
    assert key_values(s) == "x_s 20 s vs 20 [19, 24]"
    # a new user's fourth trial: "4 pass" beside 3 values and no "more" — the flag was left out unsaid
    flag = m("NF-6", "endpoint_not_ready_first", True, documented=True)
    (s,) = build([timing(20.195712, 20.0, [19, 24]), flag], [Outcome(TEST, "passed", ["NF-6"])])
    assert key_values(s) == "x_s 20 s vs 20 [19, 24] · … 1 more"
    assert key_values(s, 0) == "… 2 more"
    # a new user's trial: a case whose values all have no band (flags, strings) read only "… 3 more"
    values = [m("NF-9", "containers_ready", False, documented=False), m("NF-9", "pod_phase", "Failed", documented="Failed"),
              m("NF-9", "x", 3)]
    (s,) = build(values, [Outcome(TEST, "passed", ["NF-9"])])
    assert key_values(s) == "containers_ready False vs False · pod_phase 'Failed' vs 'Failed' · x 3 vs -"
    assert key_values(s, 2) == "containers_ready False vs False · pod_phase 'Failed' vs 'Failed' · … 1 more"


def test_terminal_lines_and_markdown():
    outcomes = [Outcome(TEST, "passed", ["CL-1"])]
    summaries = build(GAPS, outcomes)
    assert terminal_lines(summaries, outcomes) == [
        "CL-1   PASS         3 pass                   restart_gap[0] 0 s vs 0 [0, 3] · restart_gap[1] 11 s vs 10 [9, 23] · "
        "restart_gap[2] 21 s vs 20 [19, 33]",
        "tests: 1 passed",
    ]
    md = markdown(summaries, outcomes, "Run run-1")
    assert "| CL-1 | **pass** | 3 pass |" in md
    assert "| restart_gap[1] | 11 s | 10 s within [9, 23] s | pass | [S1] CASES.md |" in md
    assert f"- test `{TEST}`: passed" in md


def test_drift_lines_of_a_run_over_its_history_in_summary_md(tmp_path):
    gaps = [13.0, 15.0, 17.0, 18.0, 19.0]  # CL-1 restart_gap[1] over 5 nights, creeping to 23
    for i, gap in enumerate(gaps):
        run = f"run-{i}"
        history.record(tmp_path, run, [{**g, "run_id": run, "value": gap if g["name"] == "restart_gap[1]" else g["value"]}
                                       for g in GAPS])
    lines = drift_lines(tmp_path, "run-4")
    assert lines == ["drift: CL-1 restart_gap[1] 13 → 15 → 17 → 18 → 19 s towards 23 (band [9, 23]) over nights "
                     "run-0 … run-4 (Kubernetes 1.37)"]
    outcomes = [Outcome(TEST, "passed", ["CL-1"])]
    md = markdown(build(GAPS, outcomes), outcomes, "Run run-4", lines)
    assert f"## Values night over night ({history.HISTORY})\n\n- {lines[0]}\n" in md
    assert "night over night" not in markdown(build(GAPS, outcomes), outcomes, "Run run-4")
    assert drift_lines(tmp_path, "run-5") is None  # a run the history does not hold
    assert drift_lines(tmp_path / "none", "run-4") is None
    with open(tmp_path / history.HISTORY, "a") as f:
        f.write("{broken\n")
    assert drift_lines(tmp_path, "run-4")[1].startswith(f"values history: {history.HISTORY}:6: not JSON")


def test_summary_at_the_end_of_a_run(pytester: pytest.Pytester, monkeypatch, tmp_path):
    """The plugin prints the summary from this run's measurements and writes summary.md."""
    monkeypatch.setenv("E2E_RUN_ID", "run-now")
    pytester.makeini("[pytest]\nmarkers =\n    case(*ids): case IDs\n")
    pytester.makepyfile(test_x="""
        import pytest

        @pytest.mark.case("CL-1")
        def test_gaps():
            pass

        @pytest.mark.case("SC-1")
        def test_sidecar():
            pytest.skip("needs Kubernetes 1.33+, cluster is v1.32.0")

        @pytest.mark.case("PS-9")
        def test_new(scenario):
            scenario.judge.expect("PS-9", "grace", 3.0)

        @pytest.mark.case("PS-8")
        def test_own_words():  # a body's skip reason is its own: only the judged values make undocumented
            pytest.skip("undocumented: the body's own words")
    """)
    pytester.makeconftest(fake_scenario_conftest('''
        Expectation("PS-9", "grace", 3.0, "[S0] test", unit="s", band=Band(2, 4), why="test", minors=(38, None)),
    '''))
    old = m("CL-1", "restart_gap[0]", 99.0, verdict="fail", band=[0, 3], documented=0.0, unit="s",
            test="test_x.py::test_gaps", run_id="run-before")
    now = m("CL-1", "restart_gap[0]", 1.0, band=[0, 3], documented=0.0, unit="s", test="test_x.py::test_gaps",
            run_id="run-now")
    (tmp_path / "measurements.json").write_text(json.dumps({"measurements": [old, now]}))
    result = pytester.runpytest(f"--reports-dir={tmp_path}")
    assert result.parseoutcomes() == {"passed": 1, "skipped": 2, "undocumented": 1}
    result.stdout.fnmatch_lines([
        "*= pod-lifecycle-e2e: cases =*",
        "CL-1   PASS         1 pass                   restart_gap[0] 1 s vs 0 [0, 3]",
        "PS-8   SKIPPED      no values",
        "         test skipped: test_x.py::test_own_words — undocumented: the body's own words",
        "PS-9   UNDOCUMENTED no values",
        "         test undocumented: test_x.py::test_new — undocumented: 1 value(s) with nothing documented *",
        "SC-1   SKIPPED      no values",
        "         test skipped: test_x.py::test_sidecar — needs Kubernetes 1.33+, cluster is v1.32.0",
        "tests: 1 passed, 2 skipped, 1 undocumented",
        f"summary: {tmp_path / 'summary.md'}",
    ])
    md = (tmp_path / "summary.md").read_text()
    assert md.startswith("# Run run-now — Kubernetes v1.37.2\n")
    assert "99" not in md  # another run's value


def test_a_run_on_a_release_not_read_reports_unverified_carried_forward(pytester: pytest.Pytester, monkeypatch, tmp_path):
    """A fake 1.38 cluster: values that hold entries read only up to 1.37 are
    unverified-carried-forward in the case block, summary.md, junit.xml and a section of their own."""
    monkeypatch.setenv("E2E_RUN_ID", "run-138")
    pytester.makeini("[pytest]\nmarkers =\n    case(*ids): case IDs\n")
    pytester.makepyfile(test_x=f"""
        import pytest
        from e2e.judge.measurements import MeasurementLog

        @pytest.mark.case("CL-1")
        def test_gaps(scenario):
            scenario.judge.kubernetes, scenario.judge.minor = "v1.38.0", 38
            scenario.judge.log, scenario.judge.run_id = MeasurementLog({str(tmp_path / "measurements.json")!r}), "run-138"
            scenario.judge.expect("CL-1", "restart_gap[1]", 11.0)
            scenario.judge.expect("CL-1", "restart_gap[0]", 1.0)
    """)
    pytester.makeconftest(fake_scenario_conftest('''
        Expectation("CL-1", "restart_gap[1]", 10.0, "[S0] test", unit="s", band=Band(9, 18), why="test", minors=(35, None),
                    verified_in=("1.35.4", "1.37.2")),
        Expectation("CL-1", "restart_gap[0]", 0.0, "[S0] test", unit="s", band=Band(0, 3), why="test",
                    verified_in=("1.37.2", "1.38.0")),
    '''))
    result = pytester.runpytest(f"--reports-dir={tmp_path}", "--junitxml=j.xml")
    assert result.parseoutcomes() == {"passed": 1}
    reason = "documented for 1.35–newer, read in 1.35.4, 1.37.2, not in 1.38: carried forward"
    result.stdout.fnmatch_lines([
        "*= pod-lifecycle-e2e: cases =*",
        "CL-1   UNVERIFIED-CARRIED-FORWARD 1 unverified-carried-forward, 1 pass *",
        f"         unverified-carried-forward: restart_gap[[]1[]] = 11 s — {reason}",
        "tests: 1 passed",
        "*= values judged against expectations not read in this version's source *",
        f"UNVERIFIED test_x.py::test_gaps: unverified, carried forward: CL-1 restart_gap[[]1[]] = 11 s ({reason})",
    ])
    md = (tmp_path / "summary.md").read_text()
    assert md.startswith("# Run run-138 — Kubernetes v1.38.0\n")
    assert "| CL-1 | **unverified-carried-forward** | 1 unverified-carried-forward, 1 pass |" in md
    assert "| restart_gap[1] | 11 s | 10 s within [9, 18] s | unverified-carried-forward | [S0] test |" in md
    assert "| restart_gap[0] | 1 s | 0 s within [0, 3] s | pass | [S0] test |" in md
    values = {m["name"]: m for m in json.loads((tmp_path / "measurements.json").read_text())["measurements"]}
    assert values["restart_gap[1]"]["verdict"] == "unverified-carried-forward"
    assert values["restart_gap[1]"]["verified_in"] == ["1.35.4", "1.37.2"]
    assert 'name="unverified" value="unverified, carried forward: CL-1 restart_gap[1] = 11 s' in (pytester.path / "j.xml").read_text()


def test_an_interrupted_test_is_not_counted_as_passed(pytester: pytest.Pytester, monkeypatch, tmp_path):
    """issue 30 (1): Ctrl-C in a test's body leaves it only a passed setup report; pytest counts it
    in no outcome, and the summary (terminal and summary.md) said "2 passed" for pytest's 1."""
    monkeypatch.setenv("E2E_RUN_ID", "run-now")
    pytester.makeini("[pytest]\nmarkers =\n    case(*ids): case IDs\n")
    pytester.makepyfile(test_x="""
        import pytest

        @pytest.mark.case("CL-1")
        def test_first():
            pass

        @pytest.mark.case("CL-2")
        def test_ctrl_c():
            raise KeyboardInterrupt  # what Ctrl-C raises in the body
    """)
    result = pytester.runpytest_inprocess(f"--reports-dir={tmp_path}", no_reraise_ctrlc=True)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert result.parseoutcomes() == {"passed": 1}
    result.stdout.fnmatch_lines([
        "CL-1   NO VALUES    no values",
        "CL-2   INTERRUPTED  no values",
        "         test interrupted: test_x.py::test_ctrl_c — stopped before its body ended",
        "tests: 1 interrupted, 1 passed",
    ])
    md = (tmp_path / "summary.md").read_text()
    assert "Tests: 1 interrupted, 1 passed" in md and "## CL-2: interrupted" in md
    assert "test `test_x.py::test_ctrl_c`: passed" not in md


def test_a_run_whose_only_test_was_stopped_in_its_set_up_leaves_the_last_summary(pytester: pytest.Pytester, monkeypatch, tmp_path):
    """make interrupt-check, run 1 (SIGINT 19 s into the first test's cluster creation): the terminal
    named the test interrupted and summary.md was written ("1 interrupted"), while junit.xml — no
    test reported — was left as the last run's: the reports directory contradicted itself."""
    monkeypatch.setenv("E2E_RUN_ID", "run-now")
    (tmp_path / "summary.md").write_text("the last run's")
    pytester.makeini("[pytest]\nmarkers =\n    case(*ids): case IDs\n")
    pytester.makepyfile(test_x="""
        import pytest

        @pytest.fixture
        def kind_cluster():
            raise KeyboardInterrupt  # Ctrl-C while kind creates the cluster

        @pytest.mark.case("NF-3")
        def test_needs_a_cluster(kind_cluster):
            pass
    """)
    result = pytester.runpytest_inprocess(f"--reports-dir={tmp_path}", no_reraise_ctrlc=True)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["NF-3   INTERRUPTED  no values", "tests: 1 interrupted"])
    assert "summary: " not in result.stdout.str()
    assert (tmp_path / "summary.md").read_text() == "the last run's"


def test_junit_names_every_interrupted_test_as_the_summary_does(pytester: pytest.Pytester, monkeypatch, tmp_path):
    """make interrupt-check run 15 (-n 2, Ctrl-C twice): summary.md counted 2 tests, junit.xml had
    1 testcase — the test stopped in its set-up had none; and the one stopped in its body read as
    passed to any junit reader. Both are testcases with ``outcome=interrupted`` now; pytest's own
    counts (``tests``, failures, errors, skipped) are untouched: it counts them in no outcome."""
    import xml.etree.ElementTree as ET

    from e2e.cli import compare as cmp

    monkeypatch.setenv("E2E_RUN_ID", "run-now")
    pytester.makeini("[pytest]\nmarkers =\n    case(*ids): case IDs\n")
    pytester.makepyfile(test_x="""
        import pytest

        @pytest.fixture
        def kind_cluster():
            raise KeyboardInterrupt  # Ctrl-C while kind creates the cluster

        @pytest.mark.case("CL-1")
        def test_first():
            pass

        @pytest.mark.case("NF-3")
        def test_needs_a_cluster(kind_cluster):
            pass
    """)
    junit = tmp_path / "junit.xml"
    result = pytester.runpytest_inprocess(f"--reports-dir={tmp_path}", f"--junitxml={junit}", no_reraise_ctrlc=True)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["tests: 1 interrupted, 1 passed"])
    suite = ET.parse(junit).getroot().find("testsuite")
    assert [c.get("name") for c in suite.iter("testcase")] == ["test_first", "test_needs_a_cluster"]
    assert suite.get("tests") == "1" and suite.get("failures") == suite.get("errors") == suite.get("skipped") == "0"
    stopped = suite.findall("testcase")[1]
    assert stopped.get("classname") == "test_x"
    assert {p.get("name"): p.get("value") for p in stopped.iter("property")} == {
        "outcome": "interrupted", "interrupted_reason": "stopped during its set-up, before any report"}
    assert cmp._outcomes(junit) == {"test_x.py::test_first": "passed", "test_x.py::test_needs_a_cluster": "interrupted"}


def test_junit_names_a_test_stopped_in_its_body_pytest_left_nameless(pytester: pytest.Pytester, monkeypatch, tmp_path):
    """make interrupt-check run 9 (SIGTERM, -n 2): pytest's junitxml wrote each test stopped after
    its set-up as a testcase with a time and no name; with the suite's own testcase beside it,
    junit.xml had 5 testcases for the summary's 3 tests."""
    import xml.etree.ElementTree as ET

    monkeypatch.setenv("E2E_RUN_ID", "run-now")
    pytester.makeini("[pytest]\nmarkers =\n    case(*ids): case IDs\n")
    pytester.makepyfile(test_x="""
        import pytest

        @pytest.mark.case("CL-1")
        def test_first():
            pass

        @pytest.mark.case("NF-3")
        def test_stopped():
            raise KeyboardInterrupt  # Ctrl-C in the test's body
    """)
    junit = tmp_path / "junit.xml"
    result = pytester.runpytest_inprocess(f"--reports-dir={tmp_path}", f"--junitxml={junit}", no_reraise_ctrlc=True)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["tests: 1 interrupted, 1 passed"])
    cases = list(ET.parse(junit).getroot().iter("testcase"))
    assert [(c.get("classname"), c.get("name")) for c in cases] == [("test_x", "test_first"), ("test_x", "test_stopped")]
    assert {p.get("name"): p.get("value") for p in cases[1].iter("property")}["outcome"] == "interrupted"


def test_a_test_stopped_in_its_set_up_is_named_interrupted(pytester: pytest.Pytester, monkeypatch, tmp_path):
    """A new user's trial: Ctrl-C while a test's cluster was created left no trace of that test
    (no report at all): the summary said only "2 passed"."""
    monkeypatch.setenv("E2E_RUN_ID", "run-now")
    pytester.makeini("[pytest]\nmarkers =\n    case(*ids): case IDs\n")
    pytester.makepyfile(test_x="""
        import pytest

        @pytest.fixture
        def kind_cluster():
            raise KeyboardInterrupt  # Ctrl-C while kind creates the cluster

        @pytest.mark.case("CL-1")
        def test_first():
            pass

        @pytest.mark.case("NF-3")
        def test_needs_a_cluster(kind_cluster):
            pass
    """)
    result = pytester.runpytest_inprocess(f"--reports-dir={tmp_path}", no_reraise_ctrlc=True)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines([
        "NF-3   INTERRUPTED  no values",
        "         test interrupted: test_x.py::test_needs_a_cluster — *",
        "tests: 1 interrupted, 1 passed",
    ])


def test_a_wait_that_timed_out_reads_measured_nothing_as_the_failure_message_does(tmp_path):
    """issue 41 (7): a timed-out wait showed as ``None s`` in summary.md and the terminal case table,
    where its failure message and measurements.txt say "measured nothing"."""
    from e2e.judge.expectations import Band, Expectation, Registry
    from e2e.judge.measurements import ExpectationFailed, Judge, MeasurementLog
    from e2e.report.summary import read_measurements
    from e2e.run.scenario import Scenario

    class QuietRecorder:
        started_at = 0.0

        def changes(self, kind=None, name=None):
            return []

        def check(self, since=None):
            pass

    r = Registry()
    r.add(Expectation("ZZ-1", "job_complete_after_s", 5.0, "[UP] test", unit="s", band=Band(4, 8), why="mechanism"))
    r.add(Expectation("ZZ-1", "reason", "DeadlineExceeded", "[UP] test"))
    judge = Judge(MeasurementLog(tmp_path / "measurements.json"), TEST, "run-1", "v1.37.2", minor=37, registry=r)
    sc = Scenario(None, "ns", QuietRecorder(), judge, tmp_path, 37, 1)
    with pytest.raises(ExpectationFailed, match="job_complete_after_s: measured nothing"):
        sc.wait_for("job z complete", lambda: None, 0.2, interval_s=0.05, case="ZZ-1", measurement="job_complete_after_s")
    sc.expect("ZZ-1", "reason", None)  # a value read as None: not a timeout, and not "nothing"
    assert "measured nothing  expected 5 s within [4, 8] s" in judge.summary()  # measurements.txt

    values = read_measurements(tmp_path / "measurements.json", "run-1")
    timed_out, read_none = values
    assert value(timed_out) == "nothing"
    assert value(read_none) == "None (a value read as None, not a timeout)"
    outcomes = [Outcome(TEST, "failed", ["ZZ-1"], "ExpectationFailed: 1 of 1 measured values")]
    summaries = build(values, outcomes)
    lines = terminal_lines(summaries, outcomes)
    md = markdown(summaries, outcomes, "Run run-1")
    for text in ("\n".join(lines), md):
        assert "None s" not in text
        assert "job_complete_after_s nothing vs 5 [4, 8]" in text  # the case table's key values
        assert "fail: job_complete_after_s = nothing — expected 5 s within [4, 8] s" in text
    assert "| job_complete_after_s | nothing | 5 s within [4, 8] s | fail |" in md


def test_the_summary_lists_the_known_bugs_this_patch_still_has_with_their_fix(tmp_path):
    """RS-6 judged by the suite's own entry on v1.36.3 (present: its fix #138462 is in 1.37.0, no
    cherry-pick known) and on v1.37.2 (fixed as expected: not listed)."""
    from e2e.judge.measurements import Judge, MeasurementLog
    from e2e.report.summary import html

    log = MeasurementLog(tmp_path / "measurements.json")
    for kubernetes, evicted in (("v1.36.3", False), ("v1.37.2", True)):
        Judge(log, "t::rs6", "r", kubernetes, minor=int(kubernetes.split(".")[1])).expect("RS-6", "sidecar_evicted", evicted)
    values = log.read()["measurements"]
    assert [v["verdict"] for v in values] == ["bug-present", "fixed-as-expected"]
    line = ("v1.36.3 still has kubernetes/kubernetes#138371 (R32; fixed in 1.37 by #138462) — RS-6 sidecar_evicted: "
            "the fix kubernetes/kubernetes#138462 (merged) is released in 1.37.0; no cherry-pick to release-1.36 is known")
    summaries = build(values, [Outcome("t::rs6", "passed", ["RS-6"])])
    assert f"## Known bugs this patch still has\n\n- {line}\n" in markdown(summaries, [], "t")
    assert f"known bug: {line}" in terminal_lines(summaries, [])
    assert f"<li>{line}</li>" in html([], values, "t")
    assert "## Known bugs" not in markdown(build(values[1:], []), [], "t")
