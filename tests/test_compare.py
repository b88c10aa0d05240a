"""e2e.cli.compare: classification of changes between two runs, table, JSON and exit code."""

from __future__ import annotations

import json

import pytest

from e2e.cli.compare import RunNotFound, compare, load_run, main

T = "scenarios/crashloop/test_crashloop.py::test_backoff_gaps_and_waiting_state"


def m(run_id, kubernetes, name, value, documented, band, verdict="pass", versions="1.37–newer", test=T, case="CL-1"):
    return {"case": case, "name": name, "value": value, "unit": "s", "documented": documented, "band": band,
            "why": "", "source": "[S0]", "versions": versions, "verdict": verdict, "test": test,
            "run_id": run_id, "kubernetes": kubernetes, "measured_at": "", "details": {}, "template": documented}


def write_run(dir_, items, junit_cases=()):
    dir_.mkdir(parents=True, exist_ok=True)
    (dir_ / "measurements.json").write_text(json.dumps({"measurements": items}))
    if junit_cases:
        cases = "".join(
            f'<testcase classname="scenarios.crashloop.test_crashloop" name="{n}">{body}</testcase>' for n, body in junit_cases
        )
        (dir_ / "junit.xml").write_text(f'<testsuites><testsuite name="pytest">{cases}</testsuite></testsuites>')
    return dir_


@pytest.fixture
def runs(tmp_path):
    a = write_run(tmp_path / "a", [
        m("ra", "v1.34.4", "restart_gap[1]", 16.0, 10.0, [9, 28], versions="1.0–1.34"),
        m("ra", "v1.34.4", "restart_gap[0]", 1.0, 0.0, [0, 3]),
        m("ra", "v1.34.4", "restart_gap[2]", 21.0, 20.0, [19, 33]),
        m("ra", "v1.34.4", "gone", 1.0, 1.0, [0, 2]),
        m("ra", "v1.34.4", "crashloopbackoff_visible_s", 12.0, 0.0, [0, 1], case="CL-2"),
    ], [("test_backoff_gaps_and_waiting_state", ""), ("test_other", "")])
    b = write_run(tmp_path / "b", [
        m("rb", "v1.37.2", "restart_gap[1]", 15.0, 10.0, [9, 18]),
        m("rb", "v1.37.2", "restart_gap[0]", 2.0, 0.0, [0, 3]),
        m("rb", "v1.37.2", "restart_gap[2]", 40.0, 20.0, [19, 33], verdict="fail"),
        m("rb", "v1.37.2", "crashloopbackoff_visible_s", 0.1, None, None, verdict="undocumented", case="CL-2"),
    ], [("test_backoff_gaps_and_waiting_state", '<failure message="x"/>'), ("test_other", '<skipped message="needs 1.38"/>')])
    return a, b


def test_classifies_each_change(runs):
    rows = {(r.case, r.name): r.change for r in compare(load_run(runs[0]), load_run(runs[1]))}
    assert rows[("CL-1", "restart_gap[0]")] == "same"  # same expectation, holds: within the band
    assert rows[("CL-1", "restart_gap[1]")] == "documented change"  # version-keyed band, holds
    assert rows[("CL-1", "restart_gap[2]")] == "unexplained"  # fails its own band
    assert rows[("CL-1", "gone")] == "missing (test failed)"  # the failed test is its own unexplained row
    assert rows[("CL-2", "crashloopbackoff_visible_s")] == "undocumented"


def test_outcome_changes(runs):
    rows = [r for r in compare(load_run(runs[0]), load_run(runs[1])) if r.name == "outcome"]
    by_test = {r.test.split("::")[-1]: (r.a, r.b, r.change) for r in rows}
    assert by_test["test_backoff_gaps_and_waiting_state"] == ("passed", "failed", "unexplained")
    assert by_test["test_other"] == ("passed", "skipped", "outcome changed")


def test_main_prints_table_writes_json_and_exits_1_on_unexplained(runs, tmp_path, capsys):
    out = tmp_path / "cmp.json"
    assert main([str(runs[0]), str(runs[1]), "--json", str(out)]) == 1
    text = capsys.readouterr().out
    assert "A: v1.34.4 run ra" in text and "B: v1.37.2 run rb" in text
    assert "restart_gap[1]" in text and "documented change" in text and "summary:" in text
    data = json.loads(out.read_text())
    assert data["a"]["kubernetes"] == "v1.34.4" and len(data["rows"]) >= 5


def test_identical_runs_exit_0(tmp_path):
    items = [m("r1", "v1.37.2", "restart_gap[0]", 1.0, 0.0, [0, 3])]
    a = write_run(tmp_path / "a", items)
    b = write_run(tmp_path / "b", [dict(items[0], run_id="r2", value=2.0)])
    assert main([str(a), str(b)]) == 0


def test_newest_run_of_a_file_is_taken_unless_named(tmp_path):
    d = write_run(tmp_path / "x", [m("old", "v1.34.4", "n", 1.0, 1.0, [0, 2]), m("new", "v1.37.2", "n", 1.5, 1.0, [0, 2])])
    assert load_run(d).run_id == "new"
    assert load_run(d, "old").kubernetes == "v1.34.4"
    with pytest.raises(RunNotFound, match="no run nope"):
        load_run(d, "nope")


def test_bad_input_is_a_clear_error(tmp_path, capsys):
    assert main([str(tmp_path / "missing"), str(tmp_path / "missing")]) == 2
    assert "no measurements.json" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(RunNotFound, match="not a measurements file"):
        load_run(tmp_path / "bad.json")


def test_a_value_gone_from_a_passing_test_is_unexplained(tmp_path):
    a = write_run(tmp_path / "a", [m("r1", "v1.37.2", "x", 1.0, 1.0, [0, 2]), m("r1", "v1.37.2", "y", 1.0, 1.0, [0, 2])],
                  [("test_backoff_gaps_and_waiting_state", "")])
    b = write_run(tmp_path / "b", [m("r2", "v1.37.2", "x", 1.0, 1.0, [0, 2])], [("test_backoff_gaps_and_waiting_state", "")])
    rows = {r.name: r.change for r in compare(load_run(a), load_run(b))}
    assert rows == {"x": "same", "y": "unexplained"}


def test_a_value_keyed_by_a_gate_gone_when_the_gate_flipped_is_a_gate_change(tmp_path):
    # RR-2 from 1.35 to 1.36: RestartAllContainersOnContainerExits off as shipped, then on
    a = write_run(tmp_path / "a", [m("r1", "v1.35.4", "creation[gate off]", "422", "422", None, case="RR-2"),
                                   m("r1", "v1.35.4", "other[gate off]", 1.0, 1.0, [0, 2], case="RR-2")],
                  [("test_backoff_gaps_and_waiting_state", "")])
    b = write_run(tmp_path / "b", [m("r2", "v1.36.3", "creation[gate on]", "created", "created", None, case="RR-2"),
                                   m("r2", "v1.36.3", "other[gate on]", 9.0, 1.0, [0, 2], verdict="fail", case="RR-2")],
                  [("test_backoff_gaps_and_waiting_state", "")])
    rows = {r.name: r for r in compare(load_run(a), load_run(b))}
    assert rows["creation[gate off]"].change == "gate changed"
    assert "'creation[gate on]'" in rows["creation[gate off]"].note
    assert rows["creation[gate on]"].change == "new"
    # the counterpart failed: the flip explains nothing
    assert rows["other[gate off]"].change == "unexplained"


def test_a_value_keyed_by_a_fact_that_differs_is_explained_by_the_facts(tmp_path):
    """The suite's own cluster (controller manager grace 20 s: ``[multi-node-fast-lifecycle]``)
    against the foreign one (upstream 50 s: ``[multi-node]``): 4 NF values were unexplained."""
    a = write_run(tmp_path / "a", [m("r1", "v1.37.2", "unknown_after_last_renew_s[fast]", 20.2, 20.0, [19, 24], case="NF-4"),
                                   m("r1", "v1.37.2", "other[fast]", 1.0, 1.0, [0, 2], case="NF-4"),
                                   m("r1", "v1.37.2", "two[x]", 1.0, 1.0, [0, 2], case="NF-4")],
                  [("test_backoff_gaps_and_waiting_state", "")])
    b = write_run(tmp_path / "b", [m("r2", "v1.37.2", "unknown_after_last_renew_s[slow]", 51.0, 50.0, [49, 62], case="NF-4"),
                                   m("r2", "v1.37.2", "other[slow]", 9.0, 1.0, [0, 2], verdict="fail", case="NF-4"),
                                   m("r2", "v1.37.2", "two[y]", 1.0, 1.0, [0, 2], case="NF-4"),
                                   m("r2", "v1.37.2", "two[z]", 1.0, 1.0, [0, 2], case="NF-4")],
                  [("test_backoff_gaps_and_waiting_state", "")])
    facts = ["multi-node: controller_manager.node-monitor-grace-period 20s → 50s"]
    rows = {r.name: r for r in compare(load_run(a), load_run(b), facts)}
    assert rows["unknown_after_last_renew_s[fast]"].change == "keyed by facts"
    assert "'unknown_after_last_renew_s[slow]' instead (verdict pass)" in rows["unknown_after_last_renew_s[fast]"].note
    assert rows["other[fast]"].change == "unexplained"  # its counterpart failed
    assert rows["two[x]"].change == "unexplained"  # two candidates: no match
    # the same runs with equal facts: nothing explains the move
    assert {r.name: r.change for r in compare(load_run(a), load_run(b))}["unknown_after_last_renew_s[fast]"] == "unexplained"


def test_a_value_reading_a_fact_that_differs_in_b_is_explained_by_the_facts(tmp_path):
    """ES-7's ``eviction_hard[kind]`` (the suite's own clusters only) gone from a run on a cluster
    with its own evictionHard: the facts explain it; with the fact the same, or no fact, they do not."""
    a = write_run(tmp_path / "a", [dict(m("r1", "v1.37.2", "eviction_hard[kind]", "{}", "{}", None, case="ES-7"),
                                        fact="kubelet_config.evictionHard"),
                                   m("r1", "v1.37.2", "plain[kind]", 1.0, 1.0, [0, 2], case="ES-7")],
                  [("test_backoff_gaps_and_waiting_state", "")])
    b = write_run(tmp_path / "b", [m("r2", "v1.37.2", "kept", 1.0, 1.0, [0, 2], case="ES-7")],
                  [("test_backoff_gaps_and_waiting_state", "")])
    facts = ["default/control-plane: kubelet_config.evictionHardly 1 → 2",
             "default/control-plane: kubelet_config.evictionHard.nodefs.available 0% → 1%",
             "default/control-plane: kubelet_config.evictionHard.memory.available unset → 150Mi"]
    rows = {r.name: r for r in compare(load_run(a), load_run(b), facts)}
    assert rows["eviction_hard[kind]"].change == "keyed by facts"
    assert rows["eviction_hard[kind]"].note == ("it reads kubelet_config.evictionHard, which differs in B: " + facts[1]
                                                + " (and 1 more below the table)")
    assert rows["plain[kind]"].change == "unexplained"  # no fact: nothing explains it
    other = ["default/control-plane: kubelet_config.evictionHardly 1 → 2"]
    assert {r.name: r.change for r in compare(load_run(a), load_run(b), other)}["eviction_hard[kind]"] == "unexplained"
    assert {r.name: r.change for r in compare(load_run(a), load_run(b))}["eviction_hard[kind]"] == "unexplained"


def test_a_value_gone_with_its_test_xfailed_in_b_is_no_unexplained_change(tmp_path):
    # OM-6 hit its documented flake in B (exit 137 without OOMKilled): its test xfailed
    a = write_run(tmp_path / "a", [m("r1", "v1.37.2", "terminated_reason[run=1]", "OOMKilled", "OOMKilled", None),
                                   m("r1", "v1.37.2", "x", 1.0, 1.0, [0, 2], test="scenarios/crashloop/test_crashloop.py::test_other")],
                  [("test_backoff_gaps_and_waiting_state", ""), ("test_other", "")])
    b = write_run(tmp_path / "b", [m("r2", "v1.37.2", "x", 1.0, 1.0, [0, 2], test="scenarios/crashloop/test_crashloop.py::test_other")],
                  [("test_backoff_gaps_and_waiting_state", '<skipped type="pytest.xfail" message="flake"/>'), ("test_other", "")])
    rows = {r.name: r.change for r in compare(load_run(a), load_run(b))}
    assert rows["terminated_reason[run=1]"] == "missing (test xfailed)"


def test_set_aside_values_are_not_hidden_as_same(tmp_path):
    a = write_run(tmp_path / "a", [m("r1", "v1.37.2", "x", 0, -997, None), m("r1", "v1.37.2", "y", 0, -998, None, verdict="skipped")])
    b = write_run(tmp_path / "b", [m("r2", "v1.37.2", "x", 0, -997, None, verdict="skipped"),
                                   m("r2", "v1.37.2", "y", 0, -998, None, verdict="skipped")])
    rows = {r.name: r.change for r in compare(load_run(a), load_run(b))}
    assert rows == {"x": "unexplained", "y": "set aside"}


def test_a_test_failing_in_both_runs_is_unexplained(tmp_path):
    junit = [("test_backoff_gaps_and_waiting_state", '<failure message="x"/>')]
    a = write_run(tmp_path / "a", [m("r1", "v1.37.2", "x", 1.0, 1.0, [0, 2])], junit)
    b = write_run(tmp_path / "b", [m("r2", "v1.37.2", "x", 1.0, 1.0, [0, 2])], junit)
    assert main([str(a), str(b)]) == 1
    assert (b / "compare.json").exists()  # next to B by default


def test_malformed_inputs_exit_2(tmp_path, capsys):
    (tmp_path / "list").mkdir()
    (tmp_path / "list" / "measurements.json").write_text('{"measurements": [1, 2]}')
    assert main([str(tmp_path / "list"), str(tmp_path / "list")]) == 2
    d = write_run(tmp_path / "x", [m("r1", "v1.37.2", "x", 1.0, 1.0, [0, 2])])
    (d / "junit.xml").write_text("<testsuites><broken")
    assert main([str(d), str(d)]) == 2
    assert "not a JUnit XML file" in capsys.readouterr().err


def test_a_flake_is_shown_as_such(tmp_path):
    a = write_run(tmp_path / "a", [m("r1", "v1.37.2", "exit_code", 137, 137, None)])
    b = write_run(tmp_path / "b", [m("r2", "v1.37.2", "exit_code", 137, 137, None, verdict="flake")])
    assert [r.change for r in compare(load_run(a), load_run(b))] == ["flake"]


def test_undocumented_and_xfailed_tests_are_their_own_outcomes(tmp_path):
    from e2e.cli.compare import _outcomes

    junit = tmp_path / "junit.xml"
    junit.write_text(
        '<testsuites><testsuite>'
        '<testcase classname="scenarios.x.test_x" name="test_u"><skipped type="pytest.skip" message="undocumented: 1 value(s)"/></testcase>'
        '<testcase classname="scenarios.x.test_x" name="test_f"><skipped type="pytest.xfail" message="flake: OM-1 ..."/></testcase>'
        '<testcase classname="scenarios.x.test_x" name="test_s"><skipped type="pytest.skip" message="environment: ..."/></testcase>'
        '</testsuite></testsuites>')
    assert _outcomes(junit) == {"scenarios/x/test_x.py::test_u": "undocumented",
                                "scenarios/x/test_x.py::test_f": "xfailed",
                                "scenarios/x/test_x.py::test_s": "skipped"}


def test_the_outcome_property_names_undocumented_and_bug_fixed_whatever_the_skip_says(tmp_path):
    from e2e.cli.compare import _outcomes

    def case(name, outcome, message):
        return (f'<testcase classname="scenarios.x.test_x" name="{name}"><properties>'
                f'<property name="outcome" value="{outcome}"/></properties>'
                f'<skipped type="pytest.skip" message="{message}"/></testcase>')

    junit = tmp_path / "junit.xml"
    junit.write_text('<testsuites><testsuite>' + case("test_u", "undocumented", "worded otherwise")
                     + case("test_b", "bug-fixed", "worded otherwise") + case("test_s", "skipped", "undocumented: not so")
                     + '</testsuite></testsuites>')
    assert _outcomes(junit) == {"scenarios/x/test_x.py::test_u": "undocumented",
                                "scenarios/x/test_x.py::test_b": "bug fixed?",
                                "scenarios/x/test_x.py::test_s": "skipped"}


def test_tests_that_did_not_run_in_one_run_are_not_run(tmp_path, capsys):
    # issue 20 (5): a full run against a run of one test gave 74 "unexplained" + 8 "outcome changed"
    def test_id(n):
        return f"scenarios/crashloop/test_crashloop.py::{n}"

    names = ["test_a", "test_b", "test_c"]
    full = [m("r1", "v1.37.2", "x", 1.0, 1.0, [0, 2], test=test_id(n)) for n in names]
    a = write_run(tmp_path / "a", full, [(n, "") for n in names] + [("test_skipped", '<skipped message="needs 1.38"/>')])
    one = [m("r2", "v1.37.2", "x", 1.5, 1.0, [0, 2], test=test_id("test_b"))]
    for b in (write_run(tmp_path / "b", one, [("test_b", "")]), write_run(tmp_path / "b-no-junit", one)):
        rows = compare(load_run(a), load_run(b))
        changes = {(r.test.split("::")[-1], r.name): r.change for r in rows}
        assert changes[("test_b", "x")] == "same"
        assert changes[("test_a", "x")] == changes[("test_c", "x")] == "not run"
        assert {c for (t, n), c in changes.items() if n == "outcome"} <= {"not run"}
        assert main([str(a), str(b)]) == 0
        assert "unexplained" not in capsys.readouterr().out
    # the other way round (the one-test run first) the same tests did not run in A
    rows = compare(load_run(tmp_path / "b"), load_run(a))
    assert {r.change for r in rows if r.test != test_id("test_b")} == {"not run"}


def test_a_value_carried_forward_unverified_is_its_own_class(tmp_path):
    a = write_run(tmp_path / "a", [m("r1", "v1.37.2", "x", 11.0, 10.0, [9, 18]), m("r1", "v1.37.2", "y", 0, -997, None)])
    b = write_run(tmp_path / "b", [m("r2", "v1.38.0", "x", 12.0, 10.0, [9, 18], verdict="unverified-carried-forward"),
                                   m("r2", "v1.38.0", "y", 0, -997, None, verdict="skipped")])
    a2 = write_run(tmp_path / "a2", [m("r3", "v1.38.0", "y", 0, -997, None, verdict="unverified-carried-forward")])
    assert {r.name: r.change for r in compare(load_run(a), load_run(b))} == {"x": "unverified (carried forward)",
                                                                             "y": "unexplained"}
    assert [r.change for r in compare(load_run(a2), load_run(b))] == ["new", "unexplained"]  # y held (unverified) in A
    only_x = write_run(tmp_path / "bx", [m("r4", "v1.38.0", "x", 12.0, 10.0, [9, 18], verdict="unverified-carried-forward")])
    assert main([str(write_run(tmp_path / "ax", [m("r5", "v1.37.2", "x", 11.0, 10.0, [9, 18])])), str(only_x)]) == 0


def test_a_flake_gone_is_still_a_flake_and_a_failure_after_a_set_aside_is_unexplained(tmp_path):
    # issue 29's audit of flakes: a race upstream tolerates that did not happen in B is no fix
    # ("holds now" read as one), and a value failing in B is unexplained whatever A had set aside
    a = write_run(tmp_path / "a", [m("r1", "v1.37.2", "flaked", 1, 0, [0, 0], verdict="flake"),
                                   m("r1", "v1.37.2", "flake_then_fail", 1, 0, [0, 0], verdict="flake"),
                                   m("r1", "v1.37.2", "skipped_then_fail", 0, -997, None, verdict="skipped")])
    b = write_run(tmp_path / "b", [m("r2", "v1.37.2", "flaked", 0, 0, [0, 0]),
                                   m("r2", "v1.37.2", "flake_then_fail", 5, 0, [0, 0], verdict="fail"),
                                   m("r2", "v1.37.2", "skipped_then_fail", 5, -997, None, verdict="fail")])
    rows = {r.name: r.change for r in compare(load_run(a), load_run(b))}
    assert rows == {"flaked": "flake", "flake_then_fail": "unexplained", "skipped_then_fail": "unexplained"}
    assert main([str(a), str(b)]) == 1


def test_a_failed_value_of_an_expected_failure_is_not_unexplained(tmp_path):
    """Session 9, `make compare` of two `make app` runs (v1.37.2, v1.34.4): the naive app's values
    fail by design in its strict-xfail tests (app.yaml expect_to_fail) and read "unexplained"."""
    naive = "test_delete_one_pod_under_load"
    a = write_run(tmp_path / "a", [m("ra", "v1.37.2", "failed_requests", 2, 0, [0, 0], verdict="fail", test=f"scenarios/crashloop/test_crashloop.py::{naive}")],
                  [(naive, '<skipped type="pytest.xfail" message="negative control"/>')])
    b = write_run(tmp_path / "b", [m("rb", "v1.34.4", "failed_requests", 2, 0, [0, 0], verdict="fail", test=f"scenarios/crashloop/test_crashloop.py::{naive}")],
                  [(naive, '<skipped type="pytest.xfail" message="negative control"/>')])
    (row,) = [r for r in compare(load_run(a), load_run(b)) if r.name == "failed_requests"]
    assert row.change == "expected failure"
    assert main([str(a), str(b)]) == 0
    b2 = write_run(tmp_path / "b2", [m("rb", "v1.34.4", "failed_requests", 2, 0, [0, 0], verdict="fail", test=f"scenarios/crashloop/test_crashloop.py::{naive}")],
                   [(naive, '<failure message="x"/>')])
    assert [r.change for r in compare(load_run(a), load_run(b2)) if r.name == "failed_requests"] == ["unexplained"]


def test_a_number_judged_by_equality_keeps_its_unit(tmp_path):
    """Trial 6: `make compare` showed an equality-judged number without its unit ("0" for "0
    restarts") while a banded one had it ("10 s in [9, 18]")."""
    a = write_run(tmp_path / "a", [dict(m("ra", "v1.34.4", "restart_count", 0, 0, None), unit="restarts"),
                                   dict(m("ra", "v1.34.4", "reason", "Error", "Error", None), unit="")])
    b = write_run(tmp_path / "b", [dict(m("rb", "v1.37.2", "restart_count", 1, 0, None, verdict="fail"), unit="restarts"),
                                   dict(m("rb", "v1.37.2", "reason", "Error", "Error", None), unit="")])
    rows = {r.name: r for r in compare(load_run(a), load_run(b))}
    assert rows["restart_count"].expected_a == rows["restart_count"].expected_b == "0 restarts"
    assert rows["reason"].expected_a == "'Error'"


def test_a_value_that_moved_to_another_variant_of_its_test_is_compared_there(tmp_path):
    # RR-1 from 1.34 to 1.37: on 1.34 the gate-on values come from the gates-1.34 variant (the
    # default one is skipped); on 1.37 the gate is on by default and gates-1.34 is skipped
    base = "scenarios/restart/test_restart.py::test_exit_code_rules_and_probes_after_a_final_exit"
    old, new = f"{base}[gates-1.34]", f"{base}[default]"
    a = write_run(tmp_path / "a", [m("r1", "v1.34.4", "restarts[rules]", 2, 2, [2, 2], test=old, case="RR-1"),
                                   m("r1", "v1.34.4", "restart_gap[1]", 13.0, 10.0, [9, 20], test=old, case="RR-1")])
    b = write_run(tmp_path / "b", [m("r2", "v1.37.2", "restarts[rules]", 2, 2, [2, 2], test=new, case="RR-1"),
                                   m("r2", "v1.37.2", "restart_gap[1]", 14.0, 10.0, [9, 18], test=new, case="RR-1")])
    for run, skipped in ((a, new), (b, old)):
        (run / "junit.xml").write_text(
            '<testsuites><testsuite name="pytest">'
            + "".join(f'<testcase classname="scenarios.restart.test_restart" name="{t.split("::")[1]}">'
                      + ("<skipped/>" if t == skipped else "") + "</testcase>" for t in (old, new))
            + "</testsuite></testsuites>")
    rows = compare(load_run(a), load_run(b))
    values = {r.name: r for r in rows if r.name != "outcome"}
    assert set(values) == {"restarts[rules]", "restart_gap[1]"}  # no "new" + "skipped in B" pairs
    assert values["restarts[rules]"].change == "same"
    assert values["restart_gap[1]"].change == "documented change"  # its band changed: judged across the move
    assert values["restart_gap[1]"].test == new and "[gates-1.34] → [default]" in values["restart_gap[1]"].note
    outcomes = {r.test: r.change for r in rows if r.name == "outcome"}
    assert outcomes == {old: "variant moved", new: "variant moved"}


def test_a_name_measured_twice_in_a_test_is_compared_twice(tmp_path):
    # PC-6 measures not_ready_after_signal_s[probe] for each of its two "probe" pods
    a = write_run(tmp_path / "a", [m("r1", "v1.37.2", "x", 17.0, 16.75, [15, 20.5]), m("r1", "v1.37.2", "x", 17.5, 16.75, [15, 20.5])])
    b = write_run(tmp_path / "b", [m("r2", "v1.37.2", "x", 17.2, 16.75, [15, 20.5]),
                                   m("r2", "v1.37.2", "x", 30.0, 16.75, [15, 20.5], verdict="fail")])
    rows = {r.name: r.change for r in compare(load_run(a), load_run(b))}
    assert rows == {"x": "same", "x #2": "unexplained"}  # before: only the last, as "x"
    assert len(load_run(a).measurements) == 2
