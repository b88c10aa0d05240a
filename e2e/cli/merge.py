"""Merge the reports of the shards of one run (``--shard I/N``, :mod:`e2e.run.shards`) into one
reports directory, as if the run had been made on one machine.

Input: the shards' reports directories. Each holds ``shard.json``, written at collection before
any test ran (:mod:`e2e.run.shards`: the whole selection, the split's inputs — commit, Kubernetes
version, durations and selection digests, shard count — and the shard's part), then, once a test
ran, ``junit.xml`` (its run id a test-suite property, :func:`e2e.report.junit.run_id_of`),
``measurements.json``, ``allure-results/`` and ``durations.json``.

Refused, before anything is written (:class:`MergeError`, one line, exit 2):

- shards of **different inputs**: the message names each input that differs, with each shard's
  value, and — from the shards' selections and parts — the tests **lost** (in no shard's part) and
  **doubled** (in two parts), e.g. two runners that split on different ``durations.json``;
- shards of one split whose parts overlap, the same shard twice, a record that cannot be read,
  no record at all, a ``--history`` file that is missing, a ``measurements.json`` that is no
  measurements file (the file and the entry named: :class:`e2e.base.measurement.BadMeasurement`).

Then what did report is merged, and every test of the selection without a result is a **hole**:
a test in no recorded part (its shard left no record: a dir without ``shard.json``, whose pytest
stopped before collection, or no dir at all), every test of a shard without a junit.xml of its own
(none: its pytest stopped before its first test; an earlier run's: a reports dir reused) and a
test a shard was given and never reported. Each such test is a test case with an error of its
own in ``junit.xml`` (``e2e.merge``/``shard_3_of_3`` stands for a shard that left no record when
every test of the selection is in another part), so a merged run with a hole is never green and
``make compare`` counts it unexplained; ``summary.md`` lists the holes. A dir without
``shard.json`` is named among them, nothing of it merged (nothing says which split it was of).

Output (``--out``, created; an existing directory is refused unless empty):

- ``measurements.json``: every reporting shard's values under one run id, ``merged-<first
  shard's run id>``; each value keeps its shard and original run id in ``details.shard`` /
  ``details.shard_run_id``, so ``make compare`` and the upgrade report read the merged run like
  any other;
- ``junit.xml``: one test suite with every shard's test cases and the holes (``time``: the longest
  shard's, the shards ran side by side), properties ``merged_shards``, ``run_id`` and ``status``;
- ``allure-results/`` (the reporting shards' files), the HTML report built from them
  (:func:`e2e.cli.htmlreport.build`), ``summary.md`` (the night's status, cases, values, tests,
  drift, holes) and ``durations.json`` (each test's entry of this run from the shard that ran it,
  an entry carried from an earlier run where no shard measured the test: the next night's split);
- ``values-history.jsonl``: the merged run recorded as one run (:func:`e2e.report.history.record`),
  after the nights of ``--history FILE`` (the history the last night left; without it the merged
  run is the first night), which is read, not changed; its drift lines go into ``summary.md``. A
  night with holes is recorded too (the values that did report), so the chain goes on.

The night's **status** (:func:`status`): ``incomplete`` with a hole; else ``failed`` when a test
failed or errored; else ``flaky`` when a test failed and then passed on a rerun (``--reruns``: not
a pass, not a failure — the night is flagged, each such test counted in the summary and in
``make compare``); else ``passed``. Under GitHub Actions (``GITHUB_ACTIONS=true``) a flaky night is
also a workflow warning and an incomplete one an error annotation.

Usage: ``python -m e2e.cli.merge SHARD_DIR [SHARD_DIR …] --out DIR [--history FILE]``; exit 0 when
every test of the selection reported (whatever its outcome: ``make compare`` judges those), 1
with a hole, 2 on bad input. A line of the history that cannot be read is said on standard error
and dropped.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from ..base.measurement import BadMeasurement, Measurement
from ..base.verdicts import ERROR, FAILED, FLAKY, PASSED
from ..report import history
from ..report.junit import RUN_ID, run_id_of
from ..report.summary import Outcome, drift_lines, markdown, read_allure_results
from ..report.summary import build as build_summary
from ..run.shards import SHARD_FILE, ShardRecord, SplitInputs, read_record
from ..base.junit import junit_nodeid
from . import htmlreport

HOLE_CLASS = "e2e.merge"
# the night's status, most telling first (module doc): incomplete, then the table's failed, flaky, passed
INCOMPLETE = "incomplete"


class MergeError(ValueError):
    """Input the merge cannot use (module doc): said in one line, exit 2."""


@dataclass
class Shard:
    """One shard's reports directory ``path`` and its ``record`` (e2e.run.shards)."""

    path: Path
    record: ShardRecord

    @property
    def index(self) -> int:
        return self.record.index

    @property
    def count(self) -> int:
        return self.record.inputs.count

    @property
    def name(self) -> str:
        """``"2/3"``."""
        return self.record.shard

    @property
    def run_id(self) -> str:
        return self.record.run_id

    @property
    def tests(self) -> list[str]:
        """The node ids of the shard's part."""
        return self.record.tests


@dataclass
class Merged:
    """What :func:`merge` did: the ``holes`` (each said in one line), the lines of the history
    skipped, the night's ``status`` and the one line that says it (:func:`status`)."""

    holes: list[str]
    skipped: list[str]
    status: str
    said: str


def read_shard(path: Path) -> Shard | None:
    """The shard of the reports directory ``path``; None when it holds no record (its pytest
    stopped before collection, or it is no shard's); :class:`MergeError` for a record that cannot
    be read."""
    try:
        return Shard(path, read_record(path / SHARD_FILE))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise MergeError(f"{path / SHARD_FILE}: {e}") from None


def lost_and_doubled(shards: list[Shard]) -> tuple[list[str], dict[str, list[str]]]:
    """The tests of the shards' selections in no shard's part (sorted), and those in two or more
    parts with their shards (``{node id: ["1/3", "3/3"]}``)."""
    selection = set().union(*(s.record.selection for s in shards))
    owners: dict[str, list[str]] = defaultdict(list)
    for s in shards:
        for t in s.tests:
            owners[t].append(s.name)
    return sorted(selection - owners.keys()), {t: o for t, o in sorted(owners.items()) if len(o) > 1}


def _said(lost: list[str], doubled: dict[str, list[str]]) -> str:
    return (f"lost (in no shard's part): {', '.join(lost) if lost else 'none'}; doubled (in two parts): "
            + (", ".join(f"{t} ({', '.join(o)})" for t, o in doubled.items()) if doubled else "none"))


def _absent(shards: list[Shard]) -> list[str]:
    """The shards ``i/N`` of every count among ``shards`` with no record among them."""
    present = {s.name for s in shards}
    return [f"{i}/{n}" for n in sorted({s.count for s in shards}) for i in range(1, n + 1) if f"{i}/{n}" not in present]


def check(shards: list[Shard]) -> None:
    """:class:`MergeError` when ``shards`` (at least one) are not the parts of one split (module
    doc): inputs that differ (naming each such input with each shard's value, and the tests lost
    and doubled), the same shard twice, or parts of one split that overlap."""
    lost, doubled = lost_and_doubled(shards)
    first = shards[0].record.inputs
    differ = [label for label in SplitInputs.LABELS.values()
              if any(label in first.differences(s.record.inputs) for s in shards)]
    if differ:
        field_of = {label: name for name, label in SplitInputs.LABELS.items()}
        values = []
        for label in differ:
            by_value: dict[str, list[str]] = defaultdict(list)
            for s in sorted(shards, key=lambda s: (s.count, s.index)):
                by_value[str(getattr(s.record.inputs, field_of[label]))].append(s.name)
            values.append(f"{label} " + " vs ".join(f"{v} ({', '.join(names)})" for v, names in by_value.items()))
        absent = _absent(shards)
        raise MergeError(f"shards of different splits: {'; '.join(values)}. With these parts, "
                         + _said(lost, doubled)
                         + (f" (shard {', '.join(absent)} left no record: its part is not known)" if absent else "")
                         + ". Run every shard of one selection from the same commit, node image and durations.json")
    seen: dict[str, Path] = {}
    for s in shards:
        if s.name in seen:
            raise MergeError(f"shard {s.name} twice: {seen[s.name]} and {s.path}")
        seen[s.name] = s.path
    if doubled:
        raise MergeError(f"the parts of one split overlap: {_said([], doubled)}")


def _missing(test: str, message: str) -> ET.Element:
    """A test of the selection that did not report, as a junit test case with an error."""
    path, _, name = test.partition("::")
    return _hole(name, message, path.removesuffix(".py").replace("/", "."))


def _suite_cases(path: Path) -> tuple[list[ET.Element], float]:
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    return [c for s in suites for c in s.findall("testcase")], max((float(s.get("time") or 0) for s in suites), default=0.0)


def _hole(name: str, message: str, classname: str = HOLE_CLASS) -> ET.Element:
    case = ET.Element("testcase", classname=classname, name=name, time="0")
    ET.SubElement(case, "error", message=message).text = message
    return case


def _own_junit(s: Shard) -> str | None:
    """None when the shard's junit.xml is its own run's (or names no run: older than the
    property); else why the shard has none."""
    junit = s.path / "junit.xml"
    if not junit.is_file():
        return "no junit.xml: its pytest stopped before its first test"
    try:
        other = run_id_of(junit)
    except (OSError, ET.ParseError) as e:
        return f"its junit.xml cannot be read ({e})"
    if other is not None and other != s.run_id:
        return f"its junit.xml is of run {other}, not of the shard's run {s.run_id} (a reports dir reused)"
    return None


def _durations(shards: list[Shard]) -> dict:
    """Each test's entry of the shards' ``durations.json``: the one this run measured (its
    ``run_id`` the shard's) over one carried from an earlier run (e2e.record.hostload.DurationLog);
    a file that cannot be read counts as empty."""
    fresh: dict = {}
    carried: dict = {}
    for s in shards:
        try:
            data = json.loads((s.path / "durations.json").read_text())
        except (OSError, ValueError):
            continue
        for nodeid, entry in (data.items() if isinstance(data, dict) else ()):
            mine = isinstance(entry, dict) and entry.get("run_id") == s.run_id
            (fresh if mine else carried).setdefault(nodeid, entry)
    return {**carried, **fresh}


def _values(s: Shard) -> list[Measurement]:
    """The shard's values of its own run (``measurements.json``; none without the file).
    :class:`MergeError` naming the file for one that is no measurements file."""
    path = s.path / "measurements.json"
    if not path.is_file():
        return []
    try:
        items = json.loads(path.read_text())["measurements"]
        return [m for m in map(Measurement.from_json, items) if m.run_id == s.run_id]
    except (ValueError, KeyError, TypeError) as e:  # BadMeasurement is a ValueError, as is bad JSON
        said = str(e) if isinstance(e, BadMeasurement) else f"{type(e).__name__}: {e}"
        raise MergeError(f"{path}: not a measurements file ({said})") from None


def status(holes: list[str], outcomes: list[Outcome]) -> tuple[str, str]:
    """The night's status (module doc) and the line that says it, e.g. ``("flaky", "flaky: 2
    test(s) failed, then passed on a rerun — not a pass: a, b")``."""
    failed = [o.test for o in outcomes if o.outcome in (FAILED, ERROR)]
    flaky = [o.test for o in outcomes if o.outcome == FLAKY]
    also = "; ".join(part for part in (f"{len(failed)} failed" if failed else "",
                                       f"{len(flaky)} flaky" if flaky else "") if part)
    if holes:
        return INCOMPLETE, f"{INCOMPLETE}: {len(holes)} hole(s), listed under Holes" + (f"; {also}" if also else "")
    if failed:
        return FAILED, f"{FAILED}: {len(failed)} test(s) failed: {', '.join(failed)}" + (f"; {len(flaky)} flaky" if flaky else "")
    if flaky:
        return FLAKY, f"{FLAKY}: {len(flaky)} test(s) failed, then passed on a rerun — not a pass: {', '.join(flaky)}"
    return PASSED, f"{PASSED}: every test of the selection reported, none failed or flaky"


def merge(dirs: list[Path], out: Path, history_file: Path | None = None) -> Merged:
    """Write the merged reports of the shards' reports directories ``dirs`` to ``out`` (module
    doc), the merged run recorded in ``out/values-history.jsonl`` after the runs of
    ``history_file`` (None: none before it). :class:`MergeError` for bad input (module doc),
    before anything is written."""
    if not dirs:
        raise MergeError("no shard given")
    found = [(d, read_shard(d)) for d in dirs]
    shards = sorted((s for _, s in found if s is not None), key=lambda s: s.index)
    if not shards:
        raise MergeError(f"no shard left a record ({SHARD_FILE}) in {', '.join(map(str, dirs))}: nothing says what was selected")
    check(shards)
    if history_file is not None and not history_file.is_file():
        raise MergeError(f"--history {history_file}: no such file")
    values = {s.name: _values(s) for s in shards}
    count, selection = shards[0].count, shards[0].record.selection
    run_id = f"merged-{shards[0].run_id}"
    out.mkdir(parents=True, exist_ok=True)
    holes = [f"{d}: no {SHARD_FILE} (its pytest stopped before collection): nothing of it merged" if d.is_dir()
             else f"{d}: no such directory (its runner left no reports)" for d, s in found if s is None]
    absent = _absent(shards)
    holes += [f"shard {a} left no record" for a in absent]
    cases: list[ET.Element] = []
    assigned = {t for s in shards for t in s.tests}
    unassigned = [t for t in selection if t not in assigned]
    why = f"in the part of no shard that left a record (shard {', '.join(absent)} left none)" if absent else "in no shard's part"
    for t in unassigned:
        holes.append(f"{t}: {why}")
        cases.append(_missing(t, why))
    if not unassigned:
        cases += [_hole(f"shard_{a.replace('/', '_of_')}", f"shard {a} left no record") for a in absent]

    wall = 0.0
    measurements: list[dict] = []
    (out / "allure-results").mkdir(exist_ok=True)
    for s in shards:
        lacking = _own_junit(s)
        if lacking is not None:
            if s.tests:
                holes.append(f"shard {s.name} ({s.path}): {lacking}")
            for t in s.tests:
                holes.append(f"{t}: given to shard {s.name}, never reported")
                cases.append(_missing(t, f"given to shard {s.name}, never reported ({lacking})"))
            continue
        mine, time_s = _suite_cases(s.path / "junit.xml")
        wall = max(wall, time_s)
        cases += mine
        reported = {junit_nodeid(c) for c in mine}
        for t in (t for t in s.tests if t not in reported):
            holes.append(f"{t}: given to shard {s.name}, never reported")
            cases.append(_missing(t, f"given to shard {s.name}, never reported"))
        for m in values[s.name]:
            m.details = {**m.details, "shard": s.name, "shard_run_id": s.run_id}
            m.run_id = run_id
            measurements.append(m.to_json())
        results = s.path / "allure-results"
        if results.is_dir():
            for f in results.iterdir():
                if f.is_file():
                    shutil.copy2(f, out / "allure-results" / f.name)
    durations = _durations(shards)

    outcomes = [t.outcome for t in read_allure_results(out / "allure-results")]
    night, said = status(holes, outcomes)
    suite = ET.Element("testsuite", name="pytest", tests=str(len(cases)), time=f"{wall:.3f}",
                       failures=str(sum(1 for c in cases if c.find("failure") is not None)),
                       errors=str(sum(1 for c in cases if c.find("error") is not None)),
                       skipped=str(sum(1 for c in cases if c.find("skipped") is not None)))
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="merged_shards", value=f"{len(shards)} of {count}")
    ET.SubElement(props, "property", name=RUN_ID, value=run_id)
    ET.SubElement(props, "property", name="status", value=night)
    suite.extend(cases)
    root = ET.Element("testsuites")
    root.append(suite)
    ET.ElementTree(root).write(out / "junit.xml", encoding="utf-8", xml_declaration=True)
    (out / "measurements.json").write_text(json.dumps({"measurements": measurements}, indent=1))
    if durations:
        (out / "durations.json").write_text(json.dumps(durations, indent=1, sort_keys=True))

    if history_file is not None:
        shutil.copy2(history_file, out / history.HISTORY)
    skipped = history.record(out, run_id, measurements)

    kubernetes = sorted({m["kubernetes"] for m in measurements})
    title = f"Run {run_id} ({len(shards)} of {count} shards)" + (f" — Kubernetes {', '.join(kubernetes)}" if kubernetes else "")
    head, _, rest = markdown(build_summary(measurements, outcomes), outcomes, title, drift_lines(out, run_id)).partition("\n\n")
    text = f"{head}\n\nStatus: **{night}** — {said.partition(': ')[2]}\n\n{rest}"
    text += "\n## Holes\n\n" + ("\n".join(f"- {h}" for h in holes) if holes else "none") + "\n"
    (out / "summary.md").write_text(text)
    return Merged(holes, skipped, night, said)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m e2e.cli.merge", description=__doc__.splitlines()[0])
    p.add_argument("shards", nargs="+", type=Path, help="the shards' reports directories")
    p.add_argument("--out", type=Path, required=True, help="the merged run's reports directory (new or empty)")
    p.add_argument("--no-html", action="store_true", help="do not build the HTML report")
    p.add_argument("--history", type=Path, default=None, metavar="FILE",
                   help="the values history of the nights before (the last night's values-history.jsonl)")
    args = p.parse_args(argv)
    try:
        if args.out.exists() and any(args.out.iterdir()):
            raise MergeError(f"{args.out} is not empty: merge into a new directory")
        merged = merge(args.shards, args.out, args.history)
    except MergeError as e:
        print(f"merge: {e}", file=sys.stderr)
        return 2
    for problem in merged.skipped:
        print(f"merge: values history: {problem}: skipped", file=sys.stderr)
    if not args.no_html:
        try:
            print(htmlreport.said(htmlreport.build(args.out, history=False)))
        except (htmlreport.ReportError, OSError) as e:
            print(f"merge: the HTML report not made: {e}", file=sys.stderr)
    print(f"merged {args.out}: " + ("every test of the selection reported" if not merged.holes else f"{len(merged.holes)} hole(s):"))
    for h in merged.holes:
        print(f"  HOLE {h}")
    print(f"status: {merged.said}")
    if os.environ.get("GITHUB_ACTIONS") == "true" and merged.status in (INCOMPLETE, FLAKY):
        print(annotation("error" if merged.status == INCOMPLETE else "warning", f"{args.out.name}: {merged.status}", merged.said))
    return 1 if merged.holes else 0


def annotation(level: str, title: str, message: str) -> str:
    """A GitHub Actions workflow command (``::warning title=…::…``) that flags the run's page,
    its data and property escaped as the runner reads them back."""
    def data(text: str) -> str:
        return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return f"::{level} title={data(title).replace(':', '%3A').replace(',', '%2C')}::{data(message)}"


if __name__ == "__main__":
    sys.exit(main())
