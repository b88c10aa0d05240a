"""make report (e2e.cli.htmlreport): the Allure report without its analytics tag, one history entry
per run, and the plain summary.html page when Node.js is missing."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from e2e.cli import htmlreport
from e2e.cli.htmlreport import generate, have_node, strip_analytics

# a real run's reports directory, trimmed: allure-results/ and measurements.json (see its README)
FIXTURE = Path(__file__).resolve().parent / "data" / "report-cl"

TEMPLATE_END = """    <script>
      window.allure = window.allure || {};
    </script>
    <script async src="https://www.googletagmanager.com/gtag/js?id=G-LNDJ3J7WT0"></script>
    <script>
        window.dataLayer = window.dataLayer || [];
        function gtag(){dataLayer.push(arguments);}
        gtag('js', new Date());
    </script>
    <script>window.allureReportData = {};</script>
</body>"""


def test_make_e2e_leaves_the_report_to_the_run():
    # issue 29 (3): the run itself builds its HTML report (e2e.plugin.options); make e2e must not build it again
    plan = subprocess.run(["make", "-n", "e2e"], cwd=FIXTURE.parents[2], capture_output=True, text=True, check=True).stdout
    assert "pytest scenarios" in plan and "e2e.cli.htmlreport" not in plan


def test_strip_analytics_keeps_the_report_scripts():
    page = strip_analytics(TEMPLATE_END)
    assert "googletagmanager" not in page and "gtag" not in page
    assert "window.allure = window.allure || {};" in page and "window.allureReportData" in page


@pytest.fixture
def reports(tmp_path) -> Path:
    shutil.copytree(FIXTURE / "allure-results", tmp_path / "allure-results")
    shutil.copy2(FIXTURE / "measurements.json", tmp_path)
    return tmp_path


def test_without_node_the_plain_page(reports, monkeypatch, capsys):
    monkeypatch.setattr(htmlreport, "have_node", lambda: False)
    assert htmlreport.main([str(reports)]) == 0
    page = (reports / "summary.html").read_text()
    assert "node/npm not found: wrote the plain summary page" in capsys.readouterr().out
    assert "CL — crash loop back-off" in page
    assert 'alt="timeline.png" src="data:image/png;base64,' in page
    assert "restart_gap[1]" in page and "within [" in page  # the values from measurements.json
    assert not (reports / "allure-report").exists()


def test_no_results_is_an_error(tmp_path, capsys):
    (tmp_path / "allure-results").mkdir()
    assert htmlreport.main([str(tmp_path)]) == 1
    assert "no allure results" in capsys.readouterr().err


@pytest.mark.skipif(not have_node(), reason="node/npm not installed: the Allure report needs them")
def test_history_gets_one_entry_per_run(reports):
    history = reports / "allure-history.jsonl"
    for _ in range(2):  # the same results twice: one entry
        index = generate(reports / "allure-results", reports / "allure-report", history, "t")
    assert len(history.read_text().splitlines()) == 1
    assert "googletagmanager" not in index.read_text()
    (next(reports.glob("allure-results/*-result.json"))).rename(reports / "allure-results" / "0-result.json")
    generate(reports / "allure-results", reports / "allure-report", history, "t")  # "another run"
    assert len(history.read_text().splitlines()) == 2


def test_a_ctrl_c_the_run_ignores_does_not_reach_allure_generate(tmp_path):
    """make interrupt-check run 10: SIGINT to the run's process group as it finished — said and
    ignored by the run (e2e.plugin.signals) — killed `allure generate`, a process of the same
    group: no HTML report, exit 1 for a run whose tests passed. A process that ignores SIGINT, as
    the run does then, sends it to its whole group while a stand-in CLI takes a second."""
    cli = tmp_path / "allure"
    cli.write_text('#!/bin/sh\nsleep 1\nmkdir -p "$E2E_ALLURE_OUTPUT"\necho "<html></html>" > "$E2E_ALLURE_OUTPUT/index.html"\n')
    cli.chmod(0o755)
    results = tmp_path / "results"
    results.mkdir()
    (results / "a-result.json").write_text("{}")
    script = f"""
import os, signal, threading, time
from pathlib import Path
from e2e.cli import htmlreport
htmlreport.allure_cli = lambda: Path({str(cli)!r})
signal.signal(signal.SIGINT, lambda signum, frame: None)  # said and ignored, as e2e.plugin.signals.Stop
threading.Timer(0.3, lambda: os.killpg(0, signal.SIGINT)).start()
print(htmlreport.generate(Path({str(results)!r}), Path({str(tmp_path / 'out')!r}), None, "run"))
"""
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, start_new_session=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(tmp_path / "out" / "index.html")


def test_a_result_tagged_flaky_gets_allures_flaky_mark(tmp_path):
    """The rerun demonstration on a cluster: the report showed the flaky test as a plain pass with a
    retry — allure-pytest writes the plugin's tag, not Allure's own statusDetails.flaky."""
    import json

    results = tmp_path / "allure-results"
    results.mkdir()
    flaky = {"status": "passed", "labels": [{"name": "tag", "value": "flaky"}], "statusDetails": {"message": "m"}}
    plain = {"status": "passed", "labels": [{"name": "tag", "value": "known bug present"}]}
    (results / "a-result.json").write_text(json.dumps(flaky))
    (results / "b-result.json").write_text(json.dumps(plain))
    (results / "c-result.json").write_text("not json")
    assert htmlreport.mark_flaky(results) == 1
    assert json.loads((results / "a-result.json").read_text())["statusDetails"] == {"message": "m", "flaky": True}
    assert json.loads((results / "b-result.json").read_text()) == plain
    assert htmlreport.mark_flaky(results) == 0  # a second build marks nothing twice


def test_pytests_own_fixture_finalizers_are_left_out_of_the_report(pytester: pytest.Pytester, tmp_path):
    """Trial 5: every test had teardown steps ``scenario::<lambda>``, ``cluster::<lambda>``, … in
    Allure's unknown status — the finalizer pytest registers on each fixture to call
    ``pytest_fixture_post_finalizer``, which allure-pytest records after it has written the
    fixture's container (no status, no stop). The fixtures' own teardowns stay."""
    import json

    pytester.makepyfile(test_f='''
import pytest

@pytest.fixture
def resource():
    yield 1

def test_uses(resource):
    assert resource == 1
''')
    results = tmp_path / "allure-results"
    pytester.runpytest(f"--alluredir={results}").assert_outcomes(passed=1)
    htmlreport.build(tmp_path, results, history=False)
    afters = [a for f in results.glob("*-container.json") for a in json.loads(f.read_text()).get("afters", [])]
    assert [a["name"] for a in afters] == ["resource::1"]  # allure-pytest names the teardown by its index
    assert all(a["status"] == "passed" for a in afters)
