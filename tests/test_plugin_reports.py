"""e2e.plugin: every way of running the suite writes the same reports (pytester runs)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from e2e.cli import htmlreport
from e2e.cli.htmlreport import have_node
from e2e.plugin import clusters as plugin  # the preflight and what it uses
from helpers import nodes_holding

PASSING = "def test_ok():\n    assert True\n"


@pytest.fixture
def no_preflight(monkeypatch):
    """The runs below name a cluster they never use: skip the preflight that would dial it."""
    monkeypatch.setattr(plugin, "_preflight", lambda config: None)


def _results(allure_dir):
    return [json.loads(p.read_text()) for p in allure_dir.glob("*-result.json")]


def test_a_cluster_run_writes_junit_and_allure_into_the_reports_dir(pytester, no_preflight, tmp_path):
    # issue 20 (5): `pytest scenarios/... --keep-cluster --reports-dir R` wrote only measurements.json
    pytester.makepyfile(test_one=PASSING)
    reports = tmp_path / "R"
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("")
    result = pytester.runpytest("--kubeconfig", str(kubeconfig), "--keep-cluster", "--reports-dir", str(reports))
    result.assert_outcomes(passed=1)
    (case,) = ET.parse(reports / "junit.xml").getroot().iter("testcase")
    assert case.get("name") == "test_ok"
    assert [r["status"] for r in _results(reports / "allure-results")] == ["passed"]


def test_explicit_junitxml_and_alluredir_win(pytester, no_preflight, tmp_path):
    pytester.makepyfile(test_one=PASSING)
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("")
    junit, allure_dir = tmp_path / "elsewhere.xml", tmp_path / "allure-elsewhere"
    result = pytester.runpytest("--kubeconfig", str(kubeconfig), "--reports-dir", str(tmp_path / "R"),
                                "--junitxml", str(junit), "--alluredir", str(allure_dir))
    result.assert_outcomes(passed=1)
    assert junit.exists() and _results(allure_dir)
    assert not (tmp_path / "R" / "junit.xml").exists() and not (tmp_path / "R" / "allure-results").exists()


def test_a_run_without_a_cluster_writes_no_reports(pytester, monkeypatch):
    # `make test` (the framework's own tests) must not write reports/junit.xml over a scenario run's
    monkeypatch.delenv("E2E_NODE_IMAGE", raising=False)
    pytester.makepyfile(test_one=PASSING)
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    assert not (pytester.path / "reports").exists()


# a cluster that answers but whose one node holds only busybox
NodesWithoutImages = nodes_holding("docker.io/library/busybox:1.36.1")


def test_kubeconfig_without_the_workload_images_is_one_preflight_error(pytester, monkeypatch, tmp_path):
    # issue 20 (11): each test timed out on ErrImageNeverPull instead
    monkeypatch.setattr(plugin, "Kube", NodesWithoutImages)
    monkeypatch.setattr(plugin, "IMAGE_LIST_WAIT_S", 0)
    monkeypatch.setattr(plugin, "workload_images", lambda: {"busybox_image": "busybox:1.36.1", "app_image": "my/app:1"})
    pytester.makepyfile(test_one=PASSING, test_two=PASSING)
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("")
    result = pytester.runpytest("--kubeconfig", str(kubeconfig), "--reports-dir", str(tmp_path / "R"))
    assert result.ret == 4
    said = result.stdout.str() + result.stderr.str()
    assert said.count("pod-lifecycle-e2e cannot run") == 1  # issue 30 (10): printed twice (Exit: and ! ... !)
    result.stderr.fnmatch_lines(["*pod-lifecycle-e2e cannot run: workload image(s) not on the cluster's nodes: "
                                 "my/app:1 (E2E_APP_IMAGE) missing on worker*"])
    assert "kind load docker-image" in said
    assert "busybox" not in said.split("cannot run:")[1].split("\n")[0]


# an earlier run's id (the folder of its tests' files) and the values it measured
EARLIER = "20261130-010203-abcd"
LAST_RUN = {"junit.xml": "<last-run/>", "allure-results/old-result.json": "{}", "summary.md": "# Run before",
            "measurements.json": json.dumps({"measurements": [{"run_id": EARLIER, "case": "CL-1", "name": "restart_gap[1]"}]}),
            "allure-report/index.html": "the last run's report", f"{EARLIER}/scenarios_x.py__test_x/timeline.txt": "t (s)"}


def _last_run(reports):
    """The reports directory as the last run left it."""
    for name, text in LAST_RUN.items():
        (reports / name).parent.mkdir(parents=True, exist_ok=True)
        (reports / name).write_text(text)


def _run_after_last_run(pytester, tmp_path, *args, subprocess=False):
    """pytest on a --kubeconfig cluster (the plugin's preflight stubbed by the caller), its
    reports directory as the last run left it; the result and that directory."""
    kubeconfig, reports = tmp_path / "kubeconfig", tmp_path / "R"
    kubeconfig.write_text("")
    _last_run(reports)
    run = pytester.runpytest_subprocess if subprocess else pytester.runpytest
    return run(*args, "--kubeconfig", str(kubeconfig), "--reports-dir", str(reports)), reports


def _as_left(reports) -> dict:
    return {str(p.relative_to(reports)): p.read_text() for p in sorted(reports.rglob("*")) if p.is_file()}


def test_a_preflight_stop_leaves_the_last_runs_reports(pytester, monkeypatch, tmp_path):
    """issue 30 (6): the preflight's exit emptied allure-results/ (cleaned when pytest configured)."""
    monkeypatch.setattr(plugin, "Kube", NodesWithoutImages)
    monkeypatch.setattr(plugin, "IMAGE_LIST_WAIT_S", 0)
    monkeypatch.setattr(plugin, "workload_images", lambda: {"busybox_image": "busybox:1.36.1", "app_image": "my/app:1"})
    pytester.makepyfile(test_one=PASSING)
    result, reports = _run_after_last_run(pytester, tmp_path)
    assert result.ret == 4
    assert _as_left(reports) == LAST_RUN


def test_an_empty_selection_leaves_the_last_runs_reports_and_says_why(pytester, no_preflight, tmp_path):
    """issue 30 (6): ``-k NOPE`` wrote an empty junit.xml over the last run's and said only
    "2 deselected"."""
    pytester.makepyfile(test_one=PASSING, test_two=PASSING)
    result, reports = _run_after_last_run(pytester, tmp_path, "-k", "NOPE")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    assert _as_left(reports) == LAST_RUN
    result.stdout.fnmatch_lines([f"pod-lifecycle-e2e: no test selected: 2 collected, all deselected by -k 'NOPE'; "
                                 f"the last run's reports in {reports} are left as they were"])


def test_a_run_that_ran_a_test_replaces_the_last_runs_reports(pytester, no_preflight, tmp_path):
    pytester.makepyfile(test_one=PASSING)
    result, reports = _run_after_last_run(pytester, tmp_path)
    result.assert_outcomes(passed=1)
    (case,) = ET.parse(reports / "junit.xml").getroot().iter("testcase")
    assert case.get("name") == "test_ok"
    assert [r["status"] for r in _results(reports / "allure-results")] == ["passed"]
    assert not (reports / "allure-results" / "old-result.json").exists()
    assert not list(reports.glob(".incoming-*"))
    assert "no test ran" not in result.stdout.str()


def test_xdist_workers_write_into_the_reports_published_at_the_end(pytester, tmp_path):
    pytester.makeconftest("from e2e.cli import htmlreport\nfrom e2e.plugin import clusters\n"
                          "clusters._preflight = lambda config: None\nhtmlreport.have_node = lambda: False\n")
    pytester.makepyfile(test_one=PASSING, test_two=PASSING.replace("test_ok", "test_also_ok"))
    result, reports = _run_after_last_run(pytester, tmp_path, "-n", "1", subprocess=True)
    result.assert_outcomes(passed=2)
    assert len(list(ET.parse(reports / "junit.xml").getroot().iter("testcase"))) == 2
    assert [r["status"] for r in _results(reports / "allure-results")] == ["passed", "passed"]
    assert not (reports / "allure-results" / "old-result.json").exists() and not list(reports.glob(".incoming-*"))


RUN = "20261201-120000-beef"
MEASURING = """
import os
from pathlib import Path

import pytest

from e2e.judge.expectations import Band, Expectation, Registry
from e2e.judge.measurements import Judge, MeasurementLog


@pytest.mark.case("CL-1")
def test_measures(request):
    # as the scenario fixture judges: into --reports-dir's measurements.json
    registry = Registry()
    registry.add(Expectation("CL-1", "restart_gap[1]", 10.0, "[S1]", unit="s", band=Band(9, 23), why="test",
                              verified_in=("1.37.2",)))
    log = MeasurementLog(Path(request.config.getoption("--reports-dir")) / "measurements.json")
    Judge(log, request.node.nodeid, os.environ["E2E_RUN_ID"], "v1.37.2", 37, registry=registry).expect("CL-1", "restart_gap[1]", 11.0)
"""


def test_every_report_a_run_leaves_is_of_that_run(pytester, no_preflight, monkeypatch, tmp_path):
    """issue 29 (3): after a plain pytest run (the guide's own flow) allure-report/ still showed
    the run before, measurements.json kept every run's values and the folders of earlier runs
    stayed, while junit.xml, allure-results/ and summary.md were the new run's."""
    monkeypatch.setenv("E2E_RUN_ID", RUN)
    pytester.makepyfile(test_m=MEASURING)
    result, reports = _run_after_last_run(pytester, tmp_path)
    result.assert_outcomes(passed=1)
    assert result.ret == 0
    left = _as_left(reports)
    assert [(m["run_id"], m.get("value")) for m in json.loads(left["measurements.json"])["measurements"]] == [(RUN, 11.0)]
    assert left["summary.md"].startswith(f"# Run {RUN}")
    assert not (reports / EARLIER).exists()
    # the HTML page is this run's (here the plain one: tests/conftest.py), the last run's report is gone
    assert "test_measures" in left["summary.html"] and "allure-report/index.html" not in left
    result.stdout.fnmatch_lines([f"node/npm not found: wrote the plain summary page {reports / 'summary.html'} *"])


def test_each_run_is_recorded_once_in_the_values_history_and_its_summary_says_what_drifts(
        pytester, no_preflight, monkeypatch, tmp_path):
    """issue 27 (5): the history carries every judged value from run to run."""
    pytester.makepyfile(test_m=MEASURING)
    reports, kubeconfig = tmp_path / "R", tmp_path / "kubeconfig"
    kubeconfig.write_text("")
    reports.mkdir()
    (reports / "values-history.jsonl").write_text("{a line cut short\n")
    said = []
    for run in (RUN, "20261201-130000-cafe"):
        monkeypatch.setenv("E2E_RUN_ID", run)
        result = pytester.runpytest("--kubeconfig", str(kubeconfig), "--reports-dir", str(reports))
        result.assert_outcomes(passed=1)
        said.append(result.stdout.str())
    runs = [json.loads(line) for line in (reports / "values-history.jsonl").read_text().splitlines()]
    assert [r["run_id"] for r in runs] == [RUN, "20261201-130000-cafe"]
    assert [(v["case"], v["name"], v["value"], v["band"], v["verdict"]) for v in runs[1]["values"]] == [
        ("CL-1", "restart_gap[1]", 11.0, [9, 23], "pass")]
    assert "values history: values-history.jsonl:1: not JSON" in said[0] and "values history" not in said[1]
    none = "drift: none over the last 5 nights (0 value(s) with 5 nights or more and room in their band)"
    assert none in said[1] and f"- {none}" in (reports / "summary.md").read_text()
    htmlreport.main([str(reports)])  # make report: the history as it was
    assert len((reports / "values-history.jsonl").read_text().splitlines()) == 2


@pytest.mark.skipif(not have_node(), reason="node/npm not installed: the Allure report needs them")
def test_a_plain_pytest_run_ends_with_its_allure_report(pytester, no_preflight, monkeypatch, tmp_path):
    monkeypatch.setattr(htmlreport, "have_node", have_node)  # the real Allure CLI (tests/conftest.py: E2E_CACHE)
    pytester.makepyfile(test_one=PASSING)
    result, reports = _run_after_last_run(pytester, tmp_path)
    result.assert_outcomes(passed=1)
    tests = json.loads((reports / "allure-report" / "test-results.json").read_text())["byId"].values()
    assert [t["name"] for t in tests] == ["test_ok"]
    assert not (reports / "summary.html").exists()
    result.stdout.fnmatch_lines([f"report: {reports / 'allure-report' / 'index.html'}"])


def test_a_report_that_cannot_be_made_fails_a_passing_run(pytester, no_preflight, monkeypatch, tmp_path):
    def full(*args, **kwargs):
        raise OSError("No space left on device")

    monkeypatch.setattr(htmlreport.summary, "write_html", full)
    pytester.makepyfile(test_one=PASSING)
    result, reports = _run_after_last_run(pytester, tmp_path)
    result.assert_outcomes(passed=1)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*HTML report of the run not made: No space left on device*"])
    assert not (reports / "allure-report").exists()  # not the last run's either


class ImagesListedLate(NodesWithoutImages):
    """A node that lists the app image only from its third listing on (the kubelet's refresh)."""

    listings = 0

    def nodes(self):
        ImagesListedLate.listings += 1
        (node,) = super().nodes()
        if self.listings >= 3:
            node["status"]["images"].append({"names": ["docker.io/my/app:1"]})
        return [node]


def test_images_loaded_a_moment_ago_are_awaited_in_the_nodes_image_lists(pytester, monkeypatch, tmp_path):
    """issue 30 (9): the preflight refused a cluster for ~40 s after `kind load` (the kubelet lists
    a new image only at its next refresh, ~30 s), although the nodes had it."""
    monkeypatch.setattr(plugin, "Kube", ImagesListedLate)
    monkeypatch.setattr(plugin, "IMAGE_LIST_POLL_S", 0.01)
    monkeypatch.setattr(plugin, "workload_images", lambda: {"busybox_image": "busybox:1.36.1", "app_image": "my/app:1"})
    pytester.makepyfile(test_one=PASSING)
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("")
    result = pytester.runpytest("--kubeconfig", str(kubeconfig), "--reports-dir", str(tmp_path / "R"))
    result.assert_outcomes(passed=1)
    assert ImagesListedLate.listings >= 3
    assert result.stdout.str().count("my/app:1 not in the nodes' image lists yet") == 1


def test_the_plugin_registers_its_markers_outside_this_repository(pytester):
    # a test folder of your own has no pyproject.toml listing case/serial/min_k8s/record
    pytester.makepyfile(test_marked='''
import pytest

@pytest.mark.case("XX-1")
@pytest.mark.serial
@pytest.mark.min_k8s(33)
@pytest.mark.record("Pod", "Job")
def test_marked():
    pass
''')
    result = pytester.runpytest("-W", "error::pytest.PytestUnknownMarkWarning", "--strict-markers")
    result.assert_outcomes(passed=1)


FACTS_RECORDED = """
import pytest

from e2e.plugin.clusters import record_facts


@pytest.mark.case("CL-1")
def test_records(request):
    # as Clusters._connect records them on connecting to a profile's cluster
    record_facts(request.config, "default", {"server": "v1.37.2", "api_server_gates_on": [], "nodes": {
        "w2": {"kubelet": "v1.37.2", "runtime": "containerd://2.1.4", "zone": "zone-b", "taints": [],
               "kubelet_config": {"crashLoopBackOff": {"maxContainerRestartPeriod": "20s"}},
               "cgroup": {"version": None, "reason": "needs node access"}}}})
"""


def test_the_runs_facts_are_published_beside_its_measurements(pytester, no_preflight, monkeypatch, tmp_path):
    """issue 42 item 3: facts.json beside measurements.json and a section of summary.md; a run that
    recorded none leaves no earlier run's facts.json."""
    monkeypatch.setenv("E2E_RUN_ID", RUN)
    pytester.makepyfile(test_m=MEASURING + FACTS_RECORDED)
    result, reports = _run_after_last_run(pytester, tmp_path)
    result.assert_outcomes(passed=2)
    assert json.loads((reports / "facts.json").read_text())["default"]["nodes"]["w2"]["zone"] == "zone-b"
    summary = (reports / "summary.md").read_text()
    assert "## Cluster facts" in summary and "| w2 | v1.37.2 | containerd://2.1.4 | zone-b | — | unknown: needs node access | 20s |" in summary
    pytester.makepyfile(test_m=MEASURING)
    monkeypatch.setenv("E2E_RUN_ID", "20261201-130000-cafe")
    result = pytester.runpytest("--kubeconfig", str(tmp_path / "kubeconfig"), "--reports-dir", str(reports))
    result.assert_outcomes(passed=1)
    assert not (reports / "facts.json").exists()
