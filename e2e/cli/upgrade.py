"""The upgrade report: what each minor upgrade along a path of runs changed.

Input: the reports directories of one run per Kubernetes version, oldest first (``make matrix``
writes ``reports-1.34`` … ``reports-1.37``). Each adjacent pair is compared with
:func:`e2e.cli.compare.compare`; every measured contract (test, case ID, measurement name) is then
followed along the path, and the report names the **first upgrade that changed it**:

- ``documented change``: the documented value or band differs between the two versions (each
  version's expectation read from its own source) and each run holds its own — the change the
  upgrade is known to make. An expectation re-keyed with the same value and band is no change;
- ``known bug: A → B``: a known upstream bug's state changed (``present``, ``fixed`` as expected
  on the newer patch, ``gone (no fix known)``, ``present despite its fix``);
- ``unexplained``: a value failed its expectation, or appeared/disappeared while its test ran, or
  a test failed — in any run of the path, the first one included;
- ``gate changed``: a value keyed by a feature gate's state gone because the newer version runs the
  gate the other way (its counterpart under the other state held);
- ``outcome changed``: a test's outcome moved (e.g. passed → skipped) without a failure;
- ``undocumented``: a value with nothing documented on one side (the suite's aim is none);
- ``unverified (carried forward)``: the newer version's value holds an expectation whose source
  was not read for that version (``Expectation.verified_in``): listed, not failing.

A race that went the other way at an upgrade (compare's ``race: …``, either outcome documented)
is no change of the contract: not listed.

A test that failed and then passed on a rerun (``--reruns``: compare's ``flaky``) is counted in its
run's row and named under its own heading: not a pass, and not what fails the report.

Per run, the report lists the known bugs its cluster's patch still has, each with the fix that
would remove it (``v1.36.3 still has kubernetes/kubernetes#138760 — RS-5 …: the fix is cherry-pick
kubernetes/kubernetes#141004 to release-1.36 (merged), …``).

Outputs ``upgrade.md`` (tables for people) and ``upgrade.json`` (the same, for tools) in the
output directory. A documented text filled with a run's own names (IM's registry address) is shown
as its template (:mod:`e2e.cli.compare`); two long texts that differ are shown from shortly before
they part. Standard library only, like :mod:`e2e.cli.compare`.

Usage: ``python -m e2e.cli.upgrade RUN RUN [RUN …] [--out reports-matrix]``; exit 0 when nothing is
unexplained, 1 when something is (or a run failed tests), 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field
from pathlib import Path

from e2e.base.measurement import still_has
from e2e.base.verdicts import (
    ERROR, FAILED, FLAKY, HOLDS_NOW, NOT_RUN, PASS, PASSED, SAME, SET_ASIDE, SKIPPED, TOLERATED_RACE, UNDOCUMENTED, XFAILED,
)
from e2e.cli.compare import VARIANT_MOVED, Row, Run, RunNotFound, compare, load_run

# compare's classes that are no change of a contract between two versions (a test variant skipped
# for its moved values: they are compared in the variant that ran)
UNCHANGED = (SAME, NOT_RUN, HOLDS_NOW, TOLERATED_RACE, SET_ASIDE, VARIANT_MOVED)
# compare's classes of a race's value (either outcome documented): no change of a contract either
RACE = "race:"
# classes that make the report (and `make matrix`) fail
FAILING = ("unexplained",)


@dataclass
class RunSummary:
    """One version's run: test outcomes counted from its junit.xml, values by verdict, wall time
    (s, pytest's own ``testsuite time``; None without junit.xml), and the known bugs its patch
    still has (:func:`e2e.base.measurement.still_has`: one line per bug, with its fix)."""

    path: str
    kubernetes: str
    run_id: str
    outcomes: dict[str, int]
    values: dict[str, int]
    wall_s: float | None
    failed_tests: list[str]
    # failed, then passed on a rerun (--reruns): not a pass, not a failure — counted and named
    flaky_tests: list[str] = field(default_factory=list)
    # the known bugs its cluster's patch still has, each with the fix that would remove it
    known_bugs: list[str] = field(default_factory=list)


@dataclass
class Change:
    """A contract's first change along the path: at the upgrade ``a`` → ``b`` (versions)."""

    test: str
    case: str
    name: str
    a: str
    b: str
    old: object
    new: object
    expected_old: str
    expected_new: str
    change: str


def summarize(run: Run) -> RunSummary:
    """Counts of one run (see :class:`RunSummary`)."""
    outcomes: dict[str, int] = {}
    for status in run.outcomes.values():
        outcomes[status] = outcomes.get(status, 0) + 1
    values: dict[str, int] = {}
    for m in run.measurements.values():
        values[m["verdict"]] = values.get(m["verdict"], 0) + 1
    wall = None
    junit = Path(run.path).parent / "junit.xml"
    if junit.exists():
        root = ET.parse(junit).getroot()
        suite = root if root.tag == "testsuite" else root.find("testsuite")
        time_s = suite.get("time") if suite is not None else None
        if time_s:
            wall = float(time_s)
    failed = sorted(t for t, s in run.outcomes.items() if s in (FAILED, ERROR))
    flaky = sorted(t for t, s in run.outcomes.items() if s == FLAKY)
    return RunSummary(run.path, run.kubernetes, run.run_id, outcomes, values, wall, failed, flaky,
                      still_has(run.measurements.values()))


def _contract_changed(row: Row, a: Run, b: Run) -> str | None:
    """The class of ``row`` when it changes the contract, else None (see module doc)."""
    if row.change in UNCHANGED or row.change.startswith(RACE):
        return None
    if row.change == "documented change":
        ma = a.measurements[(row.test_a or row.test, row.case, row.name)]
        mb = b.measurements[(row.test, row.case, row.name)]
        same = (ma.get("template", ma["documented"]), ma["band"]) == (mb.get("template", mb["documented"]), mb["band"])
        return None if same else row.change
    return row.change


def upgrade_path(runs: list[Run]) -> tuple[list[Change], list[list[Row]]]:
    """Along ``runs`` (oldest first): each contract's first change, plus every unexplained one
    (at whichever upgrade it happens), and every step's rows."""
    changes: list[Change] = []
    seen: set[tuple[str, str, str]] = set()
    steps = []
    for a, b in zip(runs, runs[1:], strict=False):
        rows = compare(a, b)
        steps.append(rows)
        for row in rows:
            kind = _contract_changed(row, a, b)
            key = (row.test, row.case, row.name)
            if kind is None or (key in seen and kind not in FAILING):
                continue
            seen.add(key)
            changes.append(Change(row.test, row.case, row.name, a.kubernetes, b.kubernetes, row.a, row.b,
                                  row.expected_a, row.expected_b, kind))
    return changes, steps


WIDTH = 60  # characters of a value in a table cell


def _text(v: object) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    return ("—" if v is None else str(v)).replace("|", "\\|").replace("\n", " ")


def _cut(text: str) -> str:
    return text if len(text) <= WIDTH else text[:WIDTH - 3] + "..."


def _fmt(v: object) -> str:
    return _cut(_text(v))


def _fmt_pair(old: object, new: object) -> tuple[str, str]:
    """``old`` and ``new`` for two cells: two long texts that differ start at the word 20 or more
    characters before they part (after "…"), so the cut never hides the difference."""
    a, b = _text(old), _text(new)
    if a != b and max(len(a), len(b)) > WIDTH:
        start = a.rfind(" ", 0, max(0, len(os.path.commonprefix([a, b])) - 20)) + 1
        if start:
            a, b = "…" + a[start:], "…" + b[start:]
    return _cut(a), _cut(b)


def markdown(summaries: list[RunSummary], changes: list[Change]) -> str:
    """``upgrade.md``: the runs, what is unexplained, the flaky tests, the known bugs each run's
    patch still has (with the fix that would remove each), then the changes grouped by the upgrade
    that made them."""
    path = " → ".join(s.kubernetes for s in summaries)
    lines = [f"# Upgrade path {path}", "", "## Runs", "",
             "| version | tests | passed | failed | flaky | skipped | undocumented | xfailed | values | values pass | wall |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for s in summaries:
        o = s.outcomes
        wall = f"{s.wall_s / 60:.1f} min" if s.wall_s is not None else "—"
        lines.append(f"| {s.kubernetes} | {sum(o.values())} | {o.get(PASSED, 0)} | "
                     f"{o.get(FAILED, 0) + o.get(ERROR, 0)} | {o.get(FLAKY, 0)} | {o.get(SKIPPED, 0)} | "
                     f"{o.get(UNDOCUMENTED, 0)} | {o.get(XFAILED, 0)} | {sum(s.values.values())} | "
                     f"{s.values.get(PASS, 0)} | {wall} |")
    failed = [(s.kubernetes, t) for s in summaries for t in s.failed_tests]
    unexplained = [c for c in changes if c.change in FAILING]
    lines += ["", "## Unexplained", ""]
    if not unexplained and not failed:
        lines.append("none")
    lines += [f"- {v}: test failed: `{t}`" for v, t in failed]
    lines += [f"- {c.a} → {c.b}: test outcome {c.old} → {c.new}: `{c.test}`" if c.name == "outcome" else
              f"- {c.a} → {c.b}: {c.case} `{c.name}`: {_fmt(c.old)} → {_fmt(c.new)} "
              f"(expected {_fmt(c.expected_new)}) in `{c.test}`" for c in unexplained]
    flaky = [(s.kubernetes, t) for s in summaries for t in s.flaky_tests]
    if flaky:
        lines += ["", "## Flaky (failed, then passed on a rerun: not a pass, not a failure)", ""]
        lines += [f"- {v}: `{t}`" for v, t in flaky]
    lines += ["", "## Known bugs each patch still has", ""]
    lines += [f"- {line}" for s in summaries for line in s.known_bugs] or ["none"]
    lines += ["", "## What each upgrade changed", ""]
    steps = list(zip(summaries, summaries[1:], strict=False))
    for a, b in steps:
        mine = [c for c in changes if c.a == a.kubernetes and c.b == b.kubernetes]
        lines += [f"### {a.kubernetes} → {b.kubernetes}", ""]
        if not mine:
            lines += ["no contract changed", ""]
            continue
        lines += ["| case | measurement | old value | new value | documented before | documented after | change |",
                  "|---|---|---|---|---|---|---|"]
        lines += [f"| {c.case or '—'} | " + (f"outcome of `{c.test.split('::')[-1]}`" if c.name == "outcome" else f"`{c.name}`")
                  + " | {} | {} | {} | {} | ".format(*_fmt_pair(c.old, c.new), *_fmt_pair(c.expected_old, c.expected_new))
                  + f"{c.change} |" for c in mine]
        lines.append("")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m e2e.cli.upgrade", description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+", help="reports dirs (or measurements.json) of one run per version, oldest first")
    p.add_argument("--out", default="reports-matrix", help="where upgrade.md and upgrade.json go")
    args = p.parse_args(argv)
    if len(args.runs) < 2:
        print("upgrade: give at least two runs, oldest version first", file=sys.stderr)
        return 2
    try:
        runs = [load_run(r) for r in args.runs]
    except RunNotFound as e:
        print(f"upgrade: {e}", file=sys.stderr)
        return 2
    summaries = [summarize(r) for r in runs]
    changes, steps = upgrade_path(runs)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    text = markdown(summaries, changes)
    (out / "upgrade.md").write_text(text)
    (out / "upgrade.json").write_text(json.dumps({
        "path": [s.kubernetes for s in summaries],
        "runs": [asdict(s) for s in summaries],
        "changes": [asdict(c) for c in changes],
        "steps": [{"a": a.kubernetes, "b": b.kubernetes, "rows": [asdict(r) for r in rows]}
                  for (a, b), rows in zip(zip(runs, runs[1:], strict=False), steps, strict=True)],
    }, indent=1, default=str))
    print(text)
    print(f"upgrade: written {out / 'upgrade.md'} and {out / 'upgrade.json'}")
    bad = any(c.change in FAILING for c in changes) or any(s.failed_tests for s in summaries)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
