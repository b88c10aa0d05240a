"""The judged values of the last runs, night over night: ``<reports>/values-history.jsonl``.

One JSON line per run, oldest first, at most :data:`KEEP` lines (the oldest go)::

    {"run_id": "20261201-155306-a9d0", "time": "2026-12-01T15:53:41.380+00:00",
     "values": [{"case": "CL-1", "name": "restart_gap[2]", "test": "scenarios/…::test_…",
                 "kubernetes": "v1.37.2", "value": 19.0, "unit": "s", "documented": 20,
                 "band": [9, 20], "verdict": "pass"}, …]}

``time`` is the run's first judged value's ``measured_at`` (UTC); ``values`` holds every value
of the run's ``measurements.json`` — strings and flags too — of each test's last attempt (a rerun's
earlier attempts are not the run's values: e2e.report.summary counts them apart); ``documented`` is
kept where it is a number (it sets the precision a value is shown with), else ``None``.

A run is recorded when its reports are published (:mod:`e2e.plugin.options`) and by the merge of
its shards (:mod:`e2e.cli.merge`): :func:`record`. Recording the same run again replaces its line
where it stands, so a second publication of a run adds no entry (building its HTML report again
only reads the file). The nightly workflow carries the file from night to night (the merge's
``--history``), as it carries ``allure-history.jsonl``; :mod:`e2e.judge.drift` reads it.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

HISTORY = "values-history.jsonl"
# runs kept: twice the nights the drift rules read (e2e.judge.drift: 2 × 5), so a reader of the
# file sees as far back again; ~0.1 MB a line for a full run of this suite (700 values)
KEEP = 20

_VALUE_KEYS = ("case", "name", "test", "kubernetes", "value", "unit", "band", "verdict")


class HistoryProblem(ValueError):
    """A line of the history that cannot be read; the message names the line and why."""


def entry(measurements: list[dict], run_id: str) -> dict | None:
    """The history line (a dict, module doc) of run ``run_id`` from ``measurements`` (the
    entries of ``measurements.json``), or None when the run judged no value. ``KeyError`` for a
    measurement without one of ``case``, ``name``, ``test``, ``run_id``, ``value``, ``verdict``."""
    mine = [m for m in measurements if m["run_id"] == run_id]
    if not mine:
        return None
    attempt = {m["test"]: _attempt(m) for m in mine}
    for m in mine:
        attempt[m["test"]] = max(attempt[m["test"]], _attempt(m))
    values = []
    for m in mine:
        if _attempt(m) != attempt[m["test"]]:
            continue
        doc = m.get("documented")
        values.append({"case": m["case"], "name": m["name"], "test": m["test"],
                       "kubernetes": m.get("kubernetes", ""), "value": m["value"], "unit": m.get("unit", ""),
                       "documented": doc if _is_number(doc) else None, "band": m.get("band"),
                       "verdict": m["verdict"]})
    times = sorted(m["measured_at"] for m in mine if m.get("measured_at"))
    return {"run_id": run_id, "time": times[0] if times else "", "values": values}


def _attempt(m: dict) -> int:
    return int((m.get("details") or {}).get("attempt") or 1)


def _is_number(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def parse_line(text: str, where: str) -> dict:
    """One line of the history as a dict; :class:`HistoryProblem` naming ``where`` (``file:line``)
    when it is not JSON, not an object with ``run_id`` (str), ``time`` (str) and ``values`` (a list
    of objects, each with ``case`` and ``name`` strings and the other keys of the module doc)."""
    try:
        line = json.loads(text)
    except ValueError as e:
        raise HistoryProblem(f"{where}: not JSON ({e})") from None
    if not isinstance(line, dict) or not isinstance(line.get("run_id"), str) \
            or not isinstance(line.get("time"), str) or not isinstance(line.get("values"), list):
        raise HistoryProblem(f"{where}: not a run's line (an object with run_id, time and values)")
    for i, v in enumerate(line["values"]):
        if not isinstance(v, dict) or any(k not in v for k in _VALUE_KEYS) \
                or not isinstance(v["case"], str) or not isinstance(v["name"], str):
            raise HistoryProblem(f"{where}: value {i} is not a judged value (keys {', '.join(_VALUE_KEYS)})")
    return line


def read(path: Path) -> tuple[list[dict], list[str]]:
    """The runs of the history file ``path``, oldest first, and the problems met: a line that
    cannot be read (:func:`parse_line`) is skipped and said in one line (``values-history.jsonl:3:
    not JSON (…)``). A missing file: no runs, no problem; an empty line is skipped silently."""
    if not path.exists():
        return [], []
    runs, problems = [], []
    for n, text in enumerate(path.read_text().splitlines(), 1):
        if not text.strip():
            continue
        try:
            runs.append(parse_line(text, f"{path.name}:{n}"))
        except HistoryProblem as e:
            problems.append(str(e))
    return runs, problems


def record(reports: Path, run_id: str, measurements: list[dict]) -> list[str]:
    """Add run ``run_id`` (its values among ``measurements``) to ``reports/values-history.jsonl``:
    appended, or replacing the line of the same run where it stands (no second entry); then only
    the last :data:`KEEP` runs are kept. Nothing is written when the run judged no value. The
    file is rewritten atomically. Returns the problems of the file as it was (:func:`read`):
    lines skipped, and so dropped from the new file."""
    path = reports / HISTORY
    runs, problems = read(path)
    line = entry(measurements, run_id)
    if line is None:
        return problems
    at = next((i for i, r in enumerate(runs) if r["run_id"] == run_id), None)
    if at is None:
        runs.append(line)
    else:
        runs[at] = line
    runs = runs[-KEEP:]
    reports.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=reports, prefix=f".{HISTORY}.")
    with os.fdopen(fd, "w") as f:
        f.writelines(json.dumps(r, default=str, separators=(",", ":")) + "\n" for r in runs)
    os.chmod(tmp, 0o644)  # mkstemp makes it private; a report is for everyone
    os.replace(tmp, path)
    return problems

