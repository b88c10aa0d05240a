"""e2e.report.nights and e2e.pictures.nights: each test's values over the last nights, charted at the
end of its description in the HTML report (a copy of the results: building again adds nothing twice),
with the drift lines of its values. On the real run of tests/data/report-cl and nights made from it."""

from __future__ import annotations

import base64
import io
import json
import re
import shutil
from pathlib import Path

import pytest
from PIL import Image

from e2e.cli import htmlreport
from e2e.pictures.nights import chart, night_label
from e2e.report import history, nights

DATA = Path(__file__).resolve().parent / "data" / "report-cl"
RUN = "20261130-131531-504c"
GAPS = "scenarios/crashloop/test_crashloop.py::test_backoff_gaps_and_waiting_state"
NEVER = "scenarios/crashloop/test_crashloop.py::test_failing_init_container_never"
CHART = re.compile(r'<img alt="values over the last nights" style="max-width:100%" src="data:image/png;base64,([^"]+)">')


def reports_with_nights(dest: Path, gap1: list[float]) -> Path:
    """The real run's reports in ``dest``, its values history holding nights before it: the same
    values, but ``CL-1 restart_gap[1]`` one of ``gap1`` each night (the real run's 15 s is the last)."""
    shutil.copytree(DATA / "allure-results", dest / "allure-results")
    shutil.copy(DATA / "measurements.json", dest / "measurements.json")
    real = json.loads((DATA / "measurements.json").read_text())["measurements"]
    for day, gap in enumerate(gap1, 25):
        run_id = f"202611{day}-021700-beef"
        shifted = [{**m, "run_id": run_id, "value": gap if m["name"] == "restart_gap[1]" else m["value"]} for m in real]
        history.record(dest, run_id, shifted)
    history.record(dest, RUN, real)
    return dest


def descriptions(results: Path) -> dict[str, str]:
    out = {}
    for f in results.glob("*-result.json"):
        r = json.loads(f.read_text())
        nodeid = next(label["value"] for label in r["labels"] if label["name"] == "_nodeid")
        out[nodeid] = r.get("descriptionHtml", "")
    return out


def test_a_test_with_banded_values_gets_its_chart_in_a_copy_of_the_results(tmp_path):
    reports = reports_with_nights(tmp_path / "R", [12, 13, 14, 13])
    before = descriptions(reports / "allure-results")
    (tmp_path / "copy").mkdir()
    shown = nights.with_charts(reports / "allure-results", reports, tmp_path / "copy")
    assert shown == tmp_path / "copy"
    after = descriptions(shown)
    assert after[GAPS].startswith(before[GAPS]) and "<h4>Values over the last nights</h4>" in after[GAPS]
    image = Image.open(io.BytesIO(base64.b64decode(CHART.search(after[GAPS])[1])))
    # 7 values with a band of some width (CL-1 restart_gap[0..3], CL-2 crashloopbackoff_visible_s ×3): 2 rows of 4
    assert image.format == "PNG" and image.size == (928, 240)
    assert "drift:" not in after[GAPS]
    assert after[NEVER] == before[NEVER]  # CL-8: strings and flags only
    assert descriptions(reports / "allure-results") == before  # the run's own results are as they were
    assert sorted(p.name for p in shown.iterdir()) == sorted(p.name for p in (reports / "allure-results").iterdir())


def test_a_drifting_value_is_named_under_its_chart(tmp_path):
    reports = reports_with_nights(tmp_path / "R", [11, 12, 13, 14])
    (tmp_path / "copy").mkdir()
    text = descriptions(nights.with_charts(reports / "allure-results", reports, tmp_path / "copy"))[GAPS]
    assert f"drift: CL-1 restart_gap[1] 11 → 12 → 13 → 14 → 15 s towards 18 (band [9, 18]) over nights " \
           f"20261125-021700-beef … {RUN} (Kubernetes 1.37)" in text


def test_without_a_history_or_a_second_night_the_results_are_used_as_they_are(tmp_path):
    reports = tmp_path / "R"
    shutil.copytree(DATA / "allure-results", reports / "allure-results")
    shutil.copy(DATA / "measurements.json", reports / "measurements.json")
    assert nights.with_charts(reports / "allure-results", reports, tmp_path) == reports / "allure-results"
    history.record(reports, RUN, json.loads((DATA / "measurements.json").read_text())["measurements"])
    assert nights.with_charts(reports / "allure-results", reports, tmp_path) == reports / "allure-results"


def test_the_plain_page_shows_the_chart_once_however_often_it_is_built(tmp_path, monkeypatch):
    monkeypatch.setattr(htmlreport, "have_node", lambda: False)
    reports = reports_with_nights(tmp_path / "R", [12, 13, 14, 13])
    for _ in range(2):
        page = htmlreport.build(reports)
    # the plain page shows each picture of a description (e2e.report.summary.read_allure_results)
    assert page.read_text().count('<img alt="values over the last nights" src="data:image/png;base64,') == 1
    assert "Values over the last nights" not in "".join(descriptions(reports / "allure-results").values())


def test_a_chart_needs_a_series_and_nights_are_named_by_their_runs_time():
    with pytest.raises(ValueError, match="no series"):
        chart([], {})
    assert night_label("20261201-155306-a9d0") == "12-01 15:53"
    assert night_label("merged-20261201-155306-a9d0") == "12-01 15:53"
    assert night_label("nightly-7") == "nightly-7"
