"""What the allure report gets per test (e2e.report.artifacts): one step per judged value, the test's
docstring, pictures and every value in full (band, source) in its description, and where its files are."""

from __future__ import annotations

import base64
import json

import pytest

from e2e.report.artifacts import description_html

JUDGING_TEST = """
from e2e.judge.expectations import Band, Expectation, Registry
from e2e.judge.measurements import Judge, MeasurementLog
from e2e.report.artifacts import publish

def test_judged(tmp_path):
    registry = Registry()
    registry.add(
        Expectation("CL-1", "restart_gap[1]", 10.0, "[S1] CASES.md CL-1", unit="s", band=Band(9, 23),
                    why="1 s truncation, +10 s re-sync", verified_in=("1.37.2",)),
        Expectation("OM-1", "last_terminated_reason", "OOMKilled", "[S0] CASES.md OM-1", verified_in=("1.37.2",)),
        Expectation("CL-1", "restart_gap[2]", 20.0, "[S1]", unit="s", band=Band(19, 33), why="test", minors=(38, None)),
    )
    judge = Judge(MeasurementLog(tmp_path / "m.json"), "t", "run", "v1.37.2", 37, registry=registry)
    judge.expect("CL-1", "restart_gap[1]", 11.0)
    judge.expect("CL-1", "restart_gap[1]", 41.0)
    judge.set_aside("OM-1", "last_terminated_reason", "Error", "flake", "OOMKilled missing on a 137 exit")
    judge.expect("CL-1", "restart_gap[2]", 21.0)  # documented from 1.38 on
    publish(judge, {"timeline.txt": "t (s)", "recording.json.gz": b"\\x1f\\x8b" * 600}, "CL-1 gaps.", "run/t/")
"""


def _one_result(pytester: pytest.Pytester, tmp_path, source: str, **outcomes: int) -> dict:
    """Runs the test module ``source`` with allure into ``tmp_path`` (its ``outcomes`` asserted when
    given) and returns the one allure result it wrote."""
    pytester.makepyfile(test_j=source)
    results = tmp_path / "allure-results"
    run = pytester.runpytest(f"--alluredir={results}", f"--reports-dir={tmp_path}")
    if outcomes:
        run.assert_outcomes(**outcomes)
    (result,) = [json.loads(p.read_text()) for p in results.glob("*-result.json")]
    return result


def test_every_judged_value_is_a_step_and_a_row_with_band_and_source(pytester: pytest.Pytester, monkeypatch, tmp_path):
    monkeypatch.setenv("E2E_RUN_ID", "run-steps")
    result = _one_result(pytester, tmp_path, JUDGING_TEST, passed=1)
    (head,) = result["steps"]
    assert head["name"] == "judged values: 1 pass, 1 fail, 1 flake, 1 undocumented"
    assert head["status"] == "failed"
    steps = {s["name"]: s for s in head["steps"]}
    assert [s["status"] for s in head["steps"]] == ["passed", "failed", "broken", "skipped"]
    # a step's title says the value and what was expected, its status the verdict: its parameters
    # only what neither says (the band, source, versions are in the description's table, once)
    ok = steps["CL-1 restart_gap[1] = 11 s (expected 10 s within [9, 23] s)"]
    assert ok.get("parameters", []) == []
    failed = steps["CL-1 restart_gap[1] = 41 s (expected 10 s within [9, 23] s)"]
    assert "CL-1 restart_gap[1]: measured 41 s, expected 10 s within [9, 23] s" in failed["statusDetails"]["message"]
    flake = steps["OM-1 last_terminated_reason = 'Error' (expected 'OOMKilled')"]
    assert {p["name"]: p["value"] for p in flake["parameters"]} == {"reason": "OOMKilled missing on a 137 exit"}
    undocumented = head["steps"][3]
    assert undocumented["name"] == "CL-1 restart_gap[2] = 21 (nothing documented)"
    assert "nothing documented for 1.37" in {p["name"]: p["value"] for p in undocumented["parameters"]}["why"]
    # the description: the docstring, then every value in full, then where the test's files are
    page = result["descriptionHtml"]
    assert page.startswith("<p>CL-1 gaps.</p>\n")
    assert page.count("<tr>") == 1 + 2 * 4
    assert ">CL-1 restart_gap[1]</td>" in page and ">41 s</td>" in page and ">10 s within [9, 23] s</td>" in page
    assert "<b>band</b>: 1 s truncation, +10 s re-sync<br><b>source</b>: [S1] CASES.md CL-1</td>" in page
    assert ">flake</td>" in page and "<b>reason</b>: OOMKilled missing on a 137 exit" in page
    assert "<code>run/t/</code>" in page and "timeline.txt (5 B)" in page and "recording.json.gz (1.2 KB)" in page
    assert result.get("attachments", []) == []  # the files are beside the report, not in it


SKIPPED_CHILD_TEST = """
from e2e.judge.expectations import Band, Expectation, Registry
from e2e.judge.measurements import Judge, MeasurementLog
from e2e.report.artifacts import publish

def test_judged(tmp_path):
    registry = Registry()
    registry.add(Expectation("CL-1", "restart_gap[1]", 10.0, "[S1]", unit="s", band=Band(9, 23), why="w",
                             verified_in=("1.37.2",)),
                 Expectation("CL-1", "restart_gap[2]", 20.0, "[S1]", unit="s", band=Band(19, 33), why="w", minors=(38, None)))
    judge = Judge(MeasurementLog(tmp_path / "m.json"), "t", "run", "v1.37.2", 37, registry=registry)
    judge.expect("CL-1", "restart_gap[1]", 11.0)
    judge.expect("CL-1", "restart_gap[2]", 21.0)  # documented from 1.38 on: nothing for 1.37
    publish(judge, {}, "CL-1 gaps.", "run/t/")
"""


def test_the_head_step_is_never_green_over_a_value_that_did_not_pass(pytester: pytest.Pytester, monkeypatch, tmp_path):
    """Trial 5: "judged values: 3 pass, 1 inconclusive" showed green over its skipped child."""
    monkeypatch.setenv("E2E_RUN_ID", "run-head")
    result = _one_result(pytester, tmp_path, SKIPPED_CHILD_TEST)
    (head,) = result["steps"]
    assert [s["status"] for s in head["steps"]] == ["passed", "skipped"]
    assert head["status"] == "skipped"


KNOWN_BUG_TEST = """
from e2e.judge.expectations import Band, Expectation, KnownBug, Registry
from e2e.judge.measurements import Judge, MeasurementLog
from e2e.report.artifacts import publish

def test_judged(tmp_path):
    registry = Registry()
    bug = KnownBug("kubernetes/kubernetes#134338 (open)", correct=6.0, correct_band=Band(5.5, 9.5),
                   mechanism="runSleepHandler waits for the pod worker's context only")
    registry.add(Expectation("CL-1", "restart_gap[1]", 10.0, "[S1]", unit="s", band=Band(9, 23), why="w",
                             verified_in=("1.37.2",)),
                 Expectation("KB-1", "pod_gone_after_delete_s", 20.0, "[UP]", unit="s", band=Band(20, 23), why="w",
                             known_bug=bug, verified_in=("1.37.2",)))
    judge = Judge(MeasurementLog(tmp_path / "m.json"), "t", "run", "v1.37.2", 37, registry=registry)
    judge.expect("CL-1", "restart_gap[1]", 11.0)
    judge.expect("KB-1", "pod_gone_after_delete_s", 20.0)
    publish(judge, {}, "KB-1.", "run/t/")
"""


def test_a_known_bug_present_is_a_passed_step_marked_with_its_issue(pytester: pytest.Pytester, monkeypatch, tmp_path):
    """Trial 6: a bug-present value (the documented behaviour: the test passes) was a skipped step
    "Skipped: bug-present" under a skipped head, inside a passed test."""
    monkeypatch.setenv("E2E_RUN_ID", "run-kb")
    result = _one_result(pytester, tmp_path, KNOWN_BUG_TEST, passed=1)
    (head,) = result["steps"]
    assert head["name"] == "judged values: 1 pass, 1 bug-present"
    assert [s["status"] for s in head["steps"]] == ["passed", "passed"]
    assert head["status"] == "passed"
    bug = head["steps"][1]
    assert bug["name"] == "KB-1 pod_gone_after_delete_s = 20 s (expected 20 s within [20, 23] s)"
    assert {p["name"]: p["value"] for p in bug["parameters"]} == {
        "known bug present": "kubernetes/kubernetes#134338 (open); correct: 6 s within [5.5, 9.5] s; no fix is known"}
    # the description's row of the value names the issue, the correct value and the mechanism
    assert ("<b>known bug</b>: kubernetes/kubernetes#134338 (open); correct: 6 s within [5.5, 9.5] s; "
            "no fix is known; mechanism: runSleepHandler waits for the pod worker&#x27;s context only") in result["descriptionHtml"]


def test_description_has_the_docstring_and_pictures_inline():
    png = b"\x89PNG\r\n\x1a\nfake"
    page = description_html("""CL-1 gaps 0, 10, 20, 40 s;
        CL-2 waiting <state>.

        Second paragraph.""", {"timeline.png": png, "timeline.txt": "t (s)", "traffic.png": png}, None, "run/t/")
    assert page.startswith("<p>CL-1 gaps 0, 10, 20, 40 s;\nCL-2 waiting &lt;state&gt;.</p>\n<p>Second paragraph.</p>\n")
    assert page.count("<img ") == 2
    assert f'src="data:image/png;base64,{base64.b64encode(png).decode()}"' in page
    assert "<figcaption>traffic.png</figcaption>" in page


def test_a_docstrings_inline_literals_read_as_code():
    # issue 29 (6): the report showed raw markup ("DR-2: ``kubectl drain --pod-selector …``")
    page = description_html("DR-2: ``kubectl drain --pod-selector …`` over 2 pods, ``<none>``.", {}, None, "run/t/")
    assert page.startswith("<p>DR-2: <code>kubectl drain --pod-selector …</code> over 2 pods, <code>&lt;none&gt;</code>.</p>")


def test_summary_html_reads_the_settled_outcome_from_its_hidden_label(pytester: pytest.Pytester, monkeypatch, tmp_path):
    """The plugin labels every scenario's allure result ``_outcome`` (``none``: nothing settled);
    summary.html takes an undocumented test from it, not from the skip's words."""
    from helpers import fake_scenario_conftest

    from e2e.report.summary import read_allure_results

    monkeypatch.setenv("E2E_RUN_ID", "run-label")
    pytester.makeconftest(fake_scenario_conftest('''
    Expectation("CL-1", "restart_gap[1]", 10.0, "[S0] test", unit="s", band=Band(9, 18), why="test", minors=(38, None)),
'''))
    pytester.makepyfile(test_o='''
import pytest

def test_undocumented(scenario):
    scenario.judge.expect("CL-1", "restart_gap[1]", 12.0)

def test_own_words(scenario):
    pytest.skip("undocumented: the body's own words")
''')
    results = tmp_path / "allure-results"
    pytester.runpytest(f"--alluredir={results}", f"--reports-dir={tmp_path}").assert_outcomes(skipped=1)
    labels = {r["name"]: [lb["value"] for lb in r["labels"] if lb["name"] == "_outcome"]
              for r in (json.loads(p.read_text()) for p in results.glob("*-result.json"))}
    assert labels == {"test_undocumented": ["undocumented"], "test_own_words": ["none"]}
    assert {t.name: t.outcome.outcome for t in read_allure_results(results)} == {
        "test_undocumented": "undocumented", "test_own_words": "skipped"}


@pytest.mark.parametrize("workers", [[], ["-n", "1"]], ids=["in-process", "xdist"])
def test_a_settled_skip_reads_as_its_reason_judged_at_the_judging_line(pytester: pytest.Pytester, monkeypatch, tmp_path,
                                                                      workers):
    """Trial 5: an inconclusive test's page showed the raw tuple ``('…/test_grace.py', 75, "Skipped: …")``,
    75 the decorator's line, not the line that judged the value (also on a pytest-xdist worker)."""
    from helpers import fake_scenario_conftest

    monkeypatch.setenv("E2E_RUN_ID", "run-skip-text")
    pytester.makeconftest(fake_scenario_conftest('''
    Expectation("CL-1", "restart_gap[1]", 10.0, "[S0] test", unit="s", band=Band(9, 18), why="test", minors=(38, None)),
'''))
    pytester.makepyfile(test_o='''
import pytest

@pytest.mark.parametrize("n", [1])
def test_undocumented(scenario, n):
    sc = scenario
    sc.judge.expect("CL-1", "restart_gap[1]", 12.0)
''')
    results = tmp_path / "allure-results"
    run = pytester.runpytest(f"--alluredir={results}", f"--reports-dir={tmp_path}", "-p", "xdist", *workers)
    assert run.ret == pytest.ExitCode.OK
    (result,) = [json.loads(p.read_text()) for p in results.glob("*-result.json")]
    trace = result["statusDetails"]["trace"]
    assert trace.startswith("Skipped: undocumented: 1 value(s)"), trace
    assert trace.endswith("judged at test_o.py:6"), trace
