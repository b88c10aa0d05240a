"""The judged values over the last nights, in the HTML report beside the test that judged them.

Before the report is built (:func:`e2e.cli.htmlreport.build`), each test of the run whose values
have at least two nights in ``values-history.jsonl`` (:mod:`e2e.report.history`) gets, at the end
of its description, a picture of them (:func:`e2e.pictures.nights.chart`: the last
:data:`~e2e.judge.drift.CHART_NIGHTS` nights, one panel per value with a numeric band of some
width) and the drift lines of its values (:mod:`e2e.judge.drift`). The run's own
``allure-results/`` are not changed: the report is built from a copy (:func:`with_charts`), so
building it again adds nothing twice. A test without such values, a value without a numeric band
(strings, flags) or a band of one value (it passes or fails: the table says which) gets no panel.
"""

from __future__ import annotations

import base64
import html
import json
import shutil
from collections import defaultdict
from pathlib import Path

from ..pictures.nights import chart
from ..judge import drift
from . import history

CAPTION = (f"Each judged value of this test over the last nights (up to {drift.CHART_NIGHTS}, "
           f"{history.HISTORY}) against its band; red: a failed value, or a value that drifts")


def run_of(reports: Path) -> str | None:
    """The run the reports directory holds: the newest run id of its ``measurements.json``
    (None without one, or without a value)."""
    path = reports / "measurements.json"
    if not path.exists():
        return None
    items = json.loads(path.read_text())["measurements"]
    return items[-1]["run_id"] if items else None


def charted(runs: list[dict], run_id: str) -> dict[str, tuple[list[drift.Series], list[drift.Drift]]]:
    """Per test (node id) measured in run ``run_id``, its series to chart (measured that night,
    two nights or more, a band with room) and their drifts."""
    all_series = drift.series(runs)
    found = {d.series.key: d for d in drift.drifts(all_series, run_id=run_id)}
    out: dict[str, tuple[list[drift.Series], list[drift.Drift]]] = defaultdict(lambda: ([], []))
    for s in all_series:
        low, high = s.points[-1].band
        if s.points[-1].run_id == run_id and len(s.points) >= 2 and high != low:
            out[s.test][0].append(s)
            if s.key in found:
                out[s.test][1].append(found[s.key])
    return dict(out)


def figure_html(panels: list[drift.Series], drifts: list[drift.Drift]) -> str:
    """The description's part of one test: a heading, the chart (PNG, data URI) and its drift lines."""
    data = base64.b64encode(chart(panels, {d.series.key: d for d in drifts})).decode()
    said = "".join(f"<br><b>{html.escape(d.line())}</b>" for d in drifts)
    return (f'<h4>Values over the last nights</h4><figure><img alt="values over the last nights" '
            f'style="max-width:100%" src="data:image/png;base64,{data}">'
            f"<figcaption>{html.escape(CAPTION)}{said}</figcaption></figure>")


def with_charts(results: Path, reports: Path, dest: Path) -> Path:
    """The results to build the report of ``reports`` from: ``results`` itself when it is no
    directory, ``reports`` has no history or no test has a chart; else ``dest`` (an empty
    directory) holding a copy of ``results`` whose tests' descriptions end with their charts
    (module doc). A result file that is not JSON is copied as it is; lines of the history that
    cannot be read are skipped (the run's summary names them)."""
    runs = history.read(reports / history.HISTORY)[0]
    run_id = run_of(reports) or (runs[-1]["run_id"] if runs else None)
    tests = charted(runs, run_id) if run_id else {}
    if not tests or not results.is_dir():
        return results
    parts: dict[str, str] = {}
    for f in results.iterdir():
        if not f.is_file():
            continue
        if f.name.endswith("-result.json"):
            try:
                result = json.loads(f.read_text())
            except ValueError:
                shutil.copy2(f, dest / f.name)
                continue
            test = next((label["value"] for label in result.get("labels", []) if label.get("name") == "_nodeid"), None)
            if test in tests:
                if test not in parts:
                    parts[test] = figure_html(*tests[test])
                result["descriptionHtml"] = (result.get("descriptionHtml") or "") + "\n" + parts[test]
                (dest / f.name).write_text(json.dumps(result))
                continue
        shutil.copy2(f, dest / f.name)
    return dest
