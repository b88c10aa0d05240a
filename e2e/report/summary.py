"""The run summary: per case ID its verdict, the measured values against their documented
ones, and every flake, skip or undocumented value with its reason.

Read from ``measurements.json`` (the values of one run, :mod:`e2e.judge.measurements`) and the
tests' outcomes; the values that drift over the last nights from ``values-history.jsonl``
(:mod:`e2e.judge.drift`). :class:`RunSummary` is the plugin part: it collects the outcomes (also from
xdist workers), prints the summary at the end of pytest's terminal output and writes
``<reports>/summary.md``.

A case's verdict is the most telling verdict among its values and tests, by the ``rank`` of the
table :mod:`e2e.base.verdicts`: ``fail`` (a value or a test failed) and ``bug-present-despite-fix``
(a known bug whose fix should be in), then ``inconclusive``, ``bug-present``, ``bug-fixed`` and any
verdict string the table does not know (shown as it is),
``interrupted`` (a test of the case was stopped by Ctrl-C before its body ended), ``flaky``,
``undocumented``, ``unverified-carried-forward`` (held an expectation whose source was not read
for this version), ``flake``, ``skipped``, ``pass`` and ``fixed-as-expected``; a case whose tests
ran without judging a value says ``no values``. The known bugs a run's cluster patch still has are
listed apart, each with the fix that would remove it.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from html import unescape as html_unescape
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ..base.verdicts import (
    ERROR, FAIL, FAILED, FLAKY, INCONCLUSIVE, OUTCOMES, SKIP, INTERRUPTED, KNOWN_BUG_VERDICTS, PASS, PASSED, SKIPPED, UNDOCUMENTED,
    UNDOCUMENTED_PREFIX, XFAILED, XPASSED, rank,
)
from ..base import facts
from ..base.measurement import still_has
from ..judge.expectations import equal_to, measured_number, number
from ..judge.measurements import known_bug_note, measured_none
from ..judge.pressure import TIMING_UNITS, percent
from ..judge import drift
from . import history
from .junit import mark_interrupted, stamp_run_id

# the order of verdicts (most telling first) is the table's: e2e.base.verdicts.rank; a test ending with
# undocumented values is skipped with a reason starting with e2e.base.verdicts.UNDOCUMENTED_PREFIX
# the outcome the plugin settled a test with (e2e.plugin.outcomes.settle: ``undocumented``,
# ``bug-fixed``, ``skipped``, ``flake``) is the ``outcome`` user property of its reports (junit.xml
# shows it); the call report carries the outcome's reason as this attribute (xdist passes both on)
OUTCOME_PROPERTY = "outcome"
OUTCOME_REASON = "e2e_outcome_reason"
# ... and the hidden allure label of every scenario with that outcome or "none" (read by summary.html)
ALLURE_OUTCOME = "_outcome"
# values per case shown on the terminal line (summary.md lists them all)
TERMINAL_VALUES = 4


@dataclass
class Outcome:
    """One test's result: ``outcome`` passed, failed, error (setup or teardown failed),
    skipped, undocumented (skipped by the plugin for values with nothing documented),
    inconclusive (skipped by the plugin for a timing value that failed under host overload,
    :mod:`e2e.judge.pressure`), xfailed, xpassed or interrupted (its setup passed, its body never
    ended: Ctrl-C; pytest counts it in no outcome); ``reason`` of a skip or xfail, or the first
    line of a failure."""

    test: str
    outcome: str
    cases: list[str]
    reason: str = ""


@dataclass
class CaseSummary:
    case: str
    verdict: str
    values: list[dict] = field(default_factory=list)
    tests: list[Outcome] = field(default_factory=list)
    earlier: list[dict] = field(default_factory=list)  # values of attempts before a rerun

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = defaultdict(int)
        for m in self.values:
            out[m["verdict"]] += 1
        return dict(out)

    def notes(self) -> list[str]:
        """Why a value or test is not a plain pass: failed, flake, skipped, undocumented,
        unverified-carried-forward, with reasons; a known bug's value (bug-present, bug-fixed,
        fixed-as-expected, bug-present-despite-fix, absent-as-expected) with its issue, correct value and fix."""
        out = []
        for m in self.values:
            if m["verdict"] == PASS:
                continue
            reason = (m.get("details") or {}).get("reason") or (m["why"] if m["verdict"] == UNDOCUMENTED else "")
            if m["verdict"] == FAIL:
                reason = f"expected {expected(m)}"
            elif m["verdict"] in KNOWN_BUG_VERDICTS and (m.get("details") or {}).get("known_bug"):
                reason = f"known bug {known_bug_note(m['details']['known_bug'])}"
            out.append(f"{m['verdict']}: {m['name']} = {value(m)}" + (f" — {reason}" if reason else ""))
        for t in self.tests:
            if t.outcome != PASSED:
                out.append(f"test {t.outcome}: {t.test}" + (f" — {t.reason}" if t.reason else ""))
        out += [f"attempt {attempt_of(m)} (rerun after it): {m['name']} = {value(m)} {m['verdict']}"
                for m in self.earlier if m["verdict"] != PASS]
        return out


def value(m: dict) -> str:
    """``"11 s"``, ``"'CrashLoopBackOff'"``: a measurement's value with its unit, a number with
    the precision of its documented one (:func:`e2e.judge.expectations.measured_number`);
    ``"nothing"`` for a wait that timed out, as the failure message and ``measurements.txt`` say
    (:func:`e2e.judge.measurements.measured_none`)."""
    v = m["value"]
    if v is None:
        return measured_none(m.get("details"))
    if isinstance(v, float):
        v = measured_number(v, m.get("documented"), m.get("band"))
    elif isinstance(v, str):
        v = repr(v if len(v) <= 60 else v[:57] + "...")
    return f"{v} {m['unit']}".strip() if m.get("unit") and not isinstance(m["value"], str) else str(v)


def expected(m: dict) -> str:
    """``"10 s within [9, 23] s"``, ``"≥ 1 restarts"`` (an open band) or the documented value;
    ``"-"`` when nothing is documented."""
    if m.get("band"):
        unit = f" {m['unit']}" if m.get("unit") else ""
        low, high = m["band"]
        if high is None:
            return f"≥ {number(low)}{unit}"
        return f"{_number(m['documented'])}{unit} within {band(m['band'])}{unit}"
    if m.get("documented") is None:
        return "-"
    doc = m["documented"]
    return equal_to(doc if not isinstance(doc, str) or len(doc) <= 60 else doc[:57] + "...", m.get("unit") or "")


def settled(report: pytest.TestReport | pytest.CollectReport) -> tuple[str, str] | None:
    """``(outcome, reason)`` of a call report whose outcome the plugin settled (see
    :data:`OUTCOME_PROPERTY`), else None: read from the report, never from its skip text."""
    if report.when != "call":  # also a CollectReport (no user properties)
        return None
    outcome = next((v for k, v in report.user_properties if k == OUTCOME_PROPERTY), None)
    return None if outcome is None else (str(outcome), str(getattr(report, OUTCOME_REASON, "")))


def outcome_of(reports: list) -> Outcome | None:
    """The :class:`Outcome` of one test from its setup/call/teardown reports (pytest's
    ``TestReport``), or None before any report. A test passes only with a passed call report:
    one whose setup passed and whose body was interrupted has none (``interrupted``)."""
    if not reports:
        return None
    first = reports[0]
    cases = [v for k, v in first.user_properties if k == "case"]
    outcome, reason = PASSED, ""
    for rep in reports:
        if rep.outcome == "rerun":  # a failed attempt before a rerun (pytest-rerunfailures): the last one counts
            continue
        if rep.passed and (done := settled(rep)) and done[0] == FLAKY:
            outcome, reason = done
        elif hasattr(rep, "wasxfail"):
            outcome, reason = (XFAILED if rep.skipped else XPASSED), rep.wasxfail
        elif rep.skipped and (done := settled(rep)):
            outcome, reason = _summary_outcome(done[0]), done[1]
        elif rep.skipped:
            longrepr = rep.longrepr
            text = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
            outcome, reason = SKIPPED, text.removeprefix("Skipped: ")
        elif rep.failed:
            crash = getattr(rep.longrepr, "reprcrash", None)
            text = crash.message if crash is not None else str(rep.longrepr)
            outcome, reason = (FAILED if rep.when == "call" else ERROR), (text.strip().splitlines() or [""])[0]
            break
    if outcome == PASSED and not any(rep.when == "call" for rep in reports):
        outcome, reason = INTERRUPTED, "stopped before its body ended"
    return Outcome(first.nodeid, outcome, cases, reason)


def _summary_outcome(settled_as: str) -> str:
    """The outcome the summary gives a skipped test the plugin settled with ``outcome`` property
    ``settled_as`` (the table's ``summary``: undocumented, inconclusive, else skipped)."""
    row = next((o for o in OUTCOMES if o.prop == settled_as), None)
    return row.summary if row is not None and row.ends == SKIP else SKIPPED


def attempt_of(m: dict) -> int:
    """Which attempt of its test measured ``m``: 1, or ``details.attempt`` of a rerun."""
    return int((m.get("details") or {}).get("attempt") or 1)


def build(measurements: list[dict], outcomes: list[Outcome]) -> list[CaseSummary]:
    """One :class:`CaseSummary` per case ID seen in ``measurements`` or ``outcomes``, sorted by
    case family and number. A test's values of an attempt before its last (a rerun, ``--reruns``)
    are the case's ``earlier`` ones: listed, never its verdict — a flaky test makes it ``flaky``."""
    cases: dict[str, CaseSummary] = {}

    def get(case: str) -> CaseSummary:
        return cases.setdefault(case, CaseSummary(case, ""))

    last: dict[str, int] = {}  # per test, its last attempt (a rerun's values carry details.attempt)
    for m in measurements:
        last[m["test"]] = max(last.get(m["test"], 1), attempt_of(m))
    for m in measurements:
        s = get(m["case"])
        (s.values if attempt_of(m) == last[m["test"]] else s.earlier).append(m)
    for o in outcomes:
        for case in o.cases:
            get(case).tests.append(o)
    for s in cases.values():
        verdicts = [m["verdict"] for m in s.values]
        verdicts += [FAIL for t in s.tests if t.outcome in (FAILED, ERROR)]
        verdicts += [t.outcome for t in s.tests if t.outcome in (INTERRUPTED, FLAKY)]
        if not s.values:
            verdicts += [t.outcome for t in s.tests if t.outcome in (SKIPPED, UNDOCUMENTED)]
        s.verdict = min(verdicts, key=rank) if verdicts else "no values"
    return sorted(cases.values(), key=lambda s: _case_key(s.case))


def _case_key(case: str) -> tuple:
    family, _, number = case.partition("-")
    return (family, int(number) if number.isdigit() else 0, number)


def key_values(s: CaseSummary, limit: int | None = None) -> str:
    """The case's numeric values against their documented value and band:
    ``restart_gap[1] 11 s vs 10 [9, 23] · probes 4 vs ≥ 1 · … 3 more`` (at most ``limit``);
    "more" counts every value not shown — flags, strings and numbers without a band too. A case
    with no banded value shows its first values whatever their kind (at most ``limit``, else
    :data:`TERMINAL_VALUES`): ``pod_phase 'Failed' vs 'Failed' · … 2 more``."""
    shown = [m for m in s.values if m.get("band")]
    if not shown:
        shown = s.values[:TERMINAL_VALUES if limit is None else limit]
    shown = shown[:limit] if limit is not None else shown
    more = len(s.values) - len(shown)
    parts = [f"{m['name']} {value(m)} vs {expected(m)}" if not m.get("band") else f"{m['name']} {value(m)} vs "
             + (band(m["band"]) if m["band"][1] is None else f"{_number(m['documented'])} {band(m['band'])}")
             for m in shown]
    return " · ".join(parts + ([f"… {more} more"] if more else []))


def _number(x: object) -> str:
    return number(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else str(x)


def band(low_high: list) -> str:
    """``[9, 18]``, or ``≥ 1`` for an open end (``None`` in measurements.json)."""
    low, high = low_high
    return f"≥ {number(low)}" if high is None else f"[{number(low)}, {number(high)}]"


def host_line(measurements: list[dict]) -> str | None:
    """The host's CPU pressure over the run's judged values (``details.host``,
    :mod:`e2e.judge.pressure`): the highest over a value's window and which value, the highest
    10 s, the limit and how many values were beyond it (inconclusive: failed there); None
    when no value has a measured pressure. An ``inconclusive`` verdict ranks among the verdicts
    this module does not list (:func:`rank`): right after ``fail``."""
    hosts = [(m, m["details"]["host"]) for m in measurements
             if ((m.get("details") or {}).get("host") or {}).get("pressure") is not None]
    if not hosts:
        return None
    worst, host = max(hosts, key=lambda mh: mh[1]["pressure"])
    limits = sorted({h["limit"] for _, h in hosts})
    over = [m for m, h in hosts if h["pressure"] > h["limit"]]
    timing = sum(m.get("unit") in TIMING_UNITS for m in over)
    starved = sum(m["verdict"] == INCONCLUSIVE for m, _ in hosts)
    return (f"host CPU pressure ({', '.join(sorted({h['source'] for _, h in hosts}))}) over the judged values' windows: "
            f"highest {percent(host['pressure'])} ({worst['case']} {worst['name']}), highest 10 s "
            f"{percent(max(h['peak_10s'] for _, h in hosts))}; limit {', '.join(percent(x) for x in limits)}: "
            f"{len(over)} of {len(hosts)} value(s) beyond it ({timing} timing: only a failed timing value can be "
            f"inconclusive), {starved} inconclusive")


def terminal_lines(summaries: list[CaseSummary], outcomes: list[Outcome]) -> list[str]:
    """The summary printed at the end of the run: a line per case and its notes, the tests' counts,
    a ``known bug:`` line per bug the cluster's patch still has (with its fix), the host's pressure
    last (:func:`host_line`)."""
    lines = []
    for s in summaries:
        counts = ", ".join(f"{n} {v}" for v, n in sorted(s.counts().items(), key=lambda kv: rank(kv[0])))
        kv = key_values(s, TERMINAL_VALUES)
        lines.append(f"{s.case:6} {s.verdict.upper():12} {counts or 'no values':24} {kv}".rstrip())
        lines.extend(f"         {note}" for note in s.notes())
    totals: defaultdict[str, int] = defaultdict(int)
    for o in outcomes:
        totals[o.outcome] += 1
    lines.append("tests: " + (", ".join(f"{n} {k}" for k, n in sorted(totals.items())) or "none"))
    lines += [f"known bug: {line}" for line in still_has(m for s in summaries for m in s.values)]
    host = host_line([m for s in summaries for m in s.values])
    return lines + ([host] if host else [])


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown(summaries: list[CaseSummary], outcomes: list[Outcome], title: str, drift: list[str] | None = None) -> str:
    """``summary.md``: the case table, the host's pressure, the ``drift`` lines (:func:`drift_lines`;
    None: no section), the known bugs the cluster's patch still has, each with the fix that would
    remove it (:func:`e2e.base.measurement.still_has`; no section when none), then per case every
    value and every test."""
    out = [f"# {title}", "", "| case | verdict | values | key values |", "| --- | --- | --- | --- |"]
    for s in summaries:
        counts = ", ".join(f"{n} {v}" for v, n in sorted(s.counts().items(), key=lambda kv: rank(kv[0])))
        out.append(f"| {s.case} | **{s.verdict}** | {counts or 'no values'} | {_cell(key_values(s, TERMINAL_VALUES))} |")
    totals: defaultdict[str, int] = defaultdict(int)
    for o in outcomes:
        totals[o.outcome] += 1
    out += ["", "Tests: " + (", ".join(f"{n} {k}" for k, n in sorted(totals.items())) or "none"), ""]
    host = host_line([m for s in summaries for m in s.values])
    out += [host, ""] if host else []
    if drift is not None:
        out += [f"## Values night over night ({history.HISTORY})", ""] + [f"- {_cell(line)}" for line in drift] + [""]
    bugs = still_has(m for s in summaries for m in s.values)
    if bugs:
        out += ["## Known bugs this patch still has", ""] + [f"- {_cell(line)}" for line in bugs] + [""]
    for s in summaries:
        out += [f"## {s.case}: {s.verdict}", ""]
        if s.values:
            out += ["| value | measured | documented | verdict | source |", "| --- | --- | --- | --- | --- |"]
            out += [f"| {_cell(m['name'])} | {_cell(value(m))} | {_cell(expected(m))} | {m['verdict']} | {_cell(m.get('source', ''))} |"
                    for m in s.values]
            out.append("")
        notes = s.notes()
        if notes:
            out += [f"- {_cell(n)}" for n in notes] + [""]
        # the other tests are in the notes, with their reasons
        out += [f"- test `{t.test}`: {t.outcome}" for t in s.tests if t.outcome == PASSED] + [""]
    return "\n".join(out)


def drift_lines(reports_dir: Path, run_id: str) -> list[str] | None:
    """The drift lines of run ``run_id`` over the values history of ``reports_dir``
    (:func:`e2e.judge.drift.lines`), then a line per history line skipped; None when the
    history does not hold the run (no history, or the run judged no value)."""
    runs, problems = history.read(reports_dir / history.HISTORY)
    if not any(r["run_id"] == run_id for r in runs):
        return None
    return drift.lines(drift.series(runs), run_id=run_id) + [f"values history: {p}: skipped" for p in problems]


def read_measurements(path: Path, run_id: str | None = None) -> list[dict]:
    """The measurements of ``path`` (``measurements.json``) of run ``run_id`` (all when None);
    ``[]`` when the file does not exist."""
    if not path.exists():
        return []
    items = json.loads(path.read_text())["measurements"]
    return [m for m in items if run_id is None or m["run_id"] == run_id]


class RunSummary:
    """Plugin part (controller only): outcomes of every test, summary at the end."""

    def __init__(self, reports_dir: Path, run_id: str):
        self.reports_dir, self.run_id = reports_dir, run_id
        self._reports: dict[str, list] = defaultdict(list)
        self._cases: dict[str, list[str]] = {}  # of the tests this process collected (not under xdist)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self._cases = {i.nodeid: [str(v) for k, v in i.user_properties if k == "case"] for i in session.items}

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        self._reports.setdefault(nodeid, [])  # a test stopped before its first report still counts

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self._reports[report.nodeid].append(report)

    def outcomes(self) -> list[Outcome]:
        """Every started test's :class:`Outcome`; one stopped (Ctrl-C) before any report — in its
        set-up, e.g. while its cluster was created — is ``interrupted`` too."""
        return [outcome_of(r) or Outcome(nodeid, INTERRUPTED, self._cases.get(nodeid, []),
                                         "stopped during its set-up, before any report")
                for nodeid, r in self._reports.items()]

    def stamp_junit(self, session: pytest.Session) -> None:
        """The end of a run (e2e.plugin.runend), once junit.xml is written and before it is
        published: the tests stopped before any report marked interrupted in it
        (:func:`~e2e.report.junit.mark_interrupted`), and the run id stamped on it."""
        junit = session.config.option.xmlpath
        interrupted = {o.test: (o.reason, sum(r.duration for r in self._reports.get(o.test, [])))
                       for o in self.outcomes() if o.outcome == INTERRUPTED}
        if junit and interrupted and Path(junit).is_file():
            mark_interrupted(Path(junit), interrupted)
        if junit and Path(junit).is_file():
            stamp_run_id(Path(junit), self.run_id)

    def pytest_terminal_summary(self, terminalreporter) -> None:
        outcomes = self.outcomes()
        if not outcomes:
            return
        measurements = read_measurements(self.reports_dir / "measurements.json", self.run_id)
        summaries = build(measurements, outcomes)
        if not any(s.tests or s.values for s in summaries):
            return
        terminalreporter.write_sep("=", "pod-lifecycle-e2e: cases")
        for line in terminal_lines(summaries, outcomes):
            terminalreporter.write_line(line)
        if not any(self._reports.values()):
            # no test reported: nothing ran, and the last run's reports stay as they were
            # (e2e.plugin.options.StagedReports), the summary and the values history beside them too
            return
        drifting = drift_lines(self.reports_dir, self.run_id)
        for line in drifting or []:
            terminalreporter.write_line(line, yellow=not line.startswith("drift: none"))
        kubernetes = sorted({m["kubernetes"] for m in measurements})
        title = f"Run {self.run_id}" + (f" — Kubernetes {', '.join(kubernetes)}" if kubernetes else "")
        self.reports_dir.mkdir(parents=True, exist_ok=True)
        path = self.reports_dir / "summary.md"
        text = markdown(summaries, outcomes, title, drifting)
        try:  # the run's cluster facts, published beside measurements.json (e2e.plugin.clusters.record_facts)
            text += "\n" + facts.markdown(json.loads((self.reports_dir / "facts.json").read_text())) + "\n"
        except (OSError, ValueError):
            pass
        path.write_text(text)
        terminalreporter.write_line(f"summary: {path}")


# -- the plain HTML page (make report without Node.js) ------------------------------------

_ALLURE_STATUS = {"passed": PASSED, "failed": FAILED, "broken": ERROR, "skipped": SKIPPED}  # allure's statuses: ours


@dataclass
class AllureTest:
    """One test of ``allure-results``: its outcome, family (``parentSuite``) and PNG pictures
    (name, base64)."""

    outcome: Outcome
    name: str
    family: str
    pictures: list[tuple[str, str]]


# a picture of a test's description (e2e.report.artifacts.description_html)
_PICTURE = re.compile(r'<img alt="([^"]*)"[^>]* src="data:image/png;base64,([^"]+)"')


def read_allure_results(results: Path) -> list[AllureTest]:
    """The tests of an ``allure-results`` directory (files ``*-result.json``), in start order; of
    a test rerun (``--reruns``) its last attempt, ``flaky`` when it passed after a failed one.

    The test's node ID comes from its hidden ``_nodeid`` label (set by the plugin), else
    its allure ``fullName``; its cases from its ``case`` labels; an outcome the plugin settled
    from its hidden ``_outcome`` label; its pictures from its description."""
    tests = []
    for path in results.glob("*-result.json"):
        r = json.loads(path.read_text())
        labels: dict[str, list[str]] = defaultdict(list)
        for label in r.get("labels", []):
            labels[label["name"]].append(label["value"])
        message = ((r.get("statusDetails") or {}).get("message") or "").strip().removeprefix("Skipped: ")
        status = _ALLURE_STATUS.get(r.get("status", ""), r.get("status", "unknown"))
        # the outcome the plugin settled (hidden label); a result without one (a scenario's before
        # the label, or not a scenario): its skip reason's prefix
        settled = labels.get(ALLURE_OUTCOME) or ([UNDOCUMENTED] if message.startswith(UNDOCUMENTED_PREFIX) else [])
        if status == SKIPPED and len(settled) == 1 and _summary_outcome(settled[0]) != SKIPPED:
            status = _summary_outcome(settled[0])
        outcome = Outcome(
            (labels.get("_nodeid") or [r.get("fullName", r["name"])])[0],
            status,
            labels.get("case", []),
            message.splitlines()[0] if message else "",
        )
        pictures = [(html_unescape(name), data) for name, data in _PICTURE.findall(r.get("descriptionHtml", ""))]
        tests.append((r.get("start", 0), AllureTest(outcome, r["name"], (labels.get("parentSuite") or [""])[0], pictures)))
    # a test rerun (--reruns) has a result per attempt: the last one stands, flaky after a failed one
    last: dict[str, AllureTest] = {}
    for _, t in sorted(tests, key=lambda st: st[0]):
        before = last.pop(t.outcome.test, None)
        if before is not None and before.outcome.outcome in (FAILED, ERROR) and t.outcome.outcome == PASSED:
            t.outcome.outcome, t.outcome.reason = FLAKY, f"failed on an earlier attempt ({before.outcome.reason})"
        last[t.outcome.test] = t
    return list(last.values())


def html(tests: list[AllureTest], measurements: list[dict], title: str) -> str:
    """The plain page: counts by status, the case table, the known bugs the cluster's patch still
    has (:func:`e2e.base.measurement.still_has`), then per family every test with its outcome,
    judged values and pictures (embedded, so the page is one file)."""
    from html import escape

    outcomes = [t.outcome for t in tests]
    summaries = build(measurements, outcomes)
    totals: defaultdict[str, int] = defaultdict(int)
    for o in outcomes:
        totals[o.outcome] += 1
    by_test: dict[str, list[dict]] = defaultdict(list)
    for m in measurements:
        by_test[m["test"]].append(m)
    out = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">', f"<title>{escape(title)}</title>",
        "<style>body{font:14px sans-serif;margin:2em;max-width:80em}table{border-collapse:collapse;margin:.5em 0}"
        "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}"
        ".pass,.passed,.fixed-as-expected,.absent-as-expected{color:#15803d}.fail,.failed,.error,.bug-present-despite-fix{color:#b91c1c;font-weight:bold}"
        ".skipped,.undocumented,.flake,.inconclusive{color:#92400e}img{max-width:100%;border:1px solid #ddd}</style>",
        "</head><body>", f"<h1>{escape(title)}</h1>",
        '<p id="counts">' + ", ".join(f'<span class="{escape(k)}" data-status="{escape(k)}">{n} {escape(k)}</span>'
                                      for k, n in sorted(totals.items())) + "</p>",
        "<table><tr><th>case</th><th>verdict</th><th>values</th><th>key values</th></tr>",
    ]
    for s in summaries:
        counts = ", ".join(f"{n} {v}" for v, n in sorted(s.counts().items(), key=lambda kv: rank(kv[0])))
        out.append(f'<tr><td>{escape(s.case)}</td><td class="{escape(s.verdict)}">{escape(s.verdict)}</td>'
                   f"<td>{escape(counts or 'no values')}</td><td>{escape(key_values(s))}</td></tr>")
    out.append("</table>")
    bugs = still_has(measurements)
    if bugs:
        out += ['<h2>Known bugs this patch still has</h2>', '<ul id="known-bugs">']
        out += [f"<li>{escape(line)}</li>" for line in bugs] + ["</ul>"]
    families: dict[str, list[AllureTest]] = defaultdict(list)
    for t in tests:
        families[t.family].append(t)
    for family_name, members in families.items():
        out.append(f"<h2>{escape(family_name or 'other tests')}</h2>")
        for t in members:
            o = t.outcome
            out.append(f'<h3>{escape(", ".join(o.cases))} · {escape(t.name)} · <span class="{escape(o.outcome)}">'
                       f"{escape(o.outcome)}</span></h3>")
            if o.reason:
                out.append(f"<pre>{escape(o.reason)}</pre>")
            values = by_test.get(o.test, [])
            if values:
                out.append("<table><tr><th>case</th><th>value</th><th>measured</th><th>documented</th>"
                           "<th>verdict</th><th>source</th></tr>")
                out += [f"<tr><td>{escape(m['case'])}</td><td>{escape(m['name'])}</td><td>{escape(value(m))}</td>"
                        f"<td>{escape(expected(m))}</td><td class=\"{escape(m['verdict'])}\">{escape(m['verdict'])}</td>"
                        f"<td>{escape(m.get('source') or '')}</td></tr>" for m in values]
                out.append("</table>")
            out += [f'<p><img alt="{escape(name)}" src="data:image/png;base64,{data}"></p>' for name, data in t.pictures]
    out.append("</body></html>")
    return "\n".join(out)


def newest_run(measurements: list[dict]) -> str | None:
    return measurements[-1]["run_id"] if measurements else None


def write_html(reports: Path, title: str, results: Path | None = None) -> Path:
    """``reports/summary.html`` from ``results`` (default ``reports/allure-results``) and the newest
    run of ``reports/measurements.json``; returns its path. ``FileNotFoundError`` without results."""
    results = results if results is not None else reports / "allure-results"
    if not results.is_dir():
        raise FileNotFoundError(f"{results}: no allure results (run the scenarios with --alluredir {results})")
    measurements = read_measurements(reports / "measurements.json")
    measurements = [m for m in measurements if m["run_id"] == newest_run(measurements)]
    page = reports / "summary.html"
    page.write_text(html(read_allure_results(results), measurements, title))
    return page
