"""Merge the reports of the shards of one run (``--shard I/N``, :mod:`e2e.run.shards`) into one
reports directory, as if the run had been made on one machine.

Input: the shards' reports directories, each with ``shard.json`` (which shard, its run id, the
tests it was given), ``junit.xml``, ``measurements.json`` and ``allure-results/``. Output
(``--out``, created; an existing directory is refused unless empty):

- ``measurements.json``: every shard's values under one run id, ``merged-<first shard's run id>``;
  each value keeps its shard and original run id in ``details.shard`` / ``details.shard_run_id``,
  so ``make compare`` and the upgrade report read the merged run like any other;
- ``junit.xml``: one test suite with every shard's test cases (``time``: the longest shard's,
  the shards ran side by side); a **hole** — a shard of ``1..N`` with no reports, or a test a
  shard was given and never reported — is a test case with an error of its own
  (``e2e.merge``/``shard_2_of_3``, or the test's own name), so a merged run with a hole is never
  green, and ``make compare`` counts it unexplained;
- ``allure-results/`` (all shards' files), the HTML report built from them
  (:func:`e2e.cli.htmlreport.build`), ``summary.md`` (cases, values, tests, drift, holes) and
  ``durations.json`` (every shard's, for the next split);
- ``values-history.jsonl``: the merged run recorded as one run (:func:`e2e.report.history.record`),
  after the nights of ``--history FILE`` (the history the last night left; without it the merged
  run is the first night), which is read, not changed; its drift lines go into ``summary.md``.

Usage: ``python -m e2e.cli.merge SHARD_DIR [SHARD_DIR …] --out DIR [--history FILE]``; exit 0 when
every shard and every test reported, 1 with a hole, 2 on bad input (no shard record, shards of
different runs or counts, the same shard twice, a ``--history`` file that is missing). A line of the
history that cannot be read is said on standard error and dropped.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from ..report.summary import build as build_summary
from ..report import history
from ..report.summary import drift_lines, markdown, read_allure_results
from ..run.shards import SHARD_FILE, parse_shard
from . import htmlreport
from .compare import junit_nodeid

HOLE_CLASS = "e2e.merge"


class MergeError(ValueError):
    """Input the merge cannot use (module doc): said in one line, exit 2."""


@dataclass
class Shard:
    """One shard's reports directory ``path``: ``index`` of ``count``, its ``run_id`` and the
    ``tests`` (node ids) it was given."""

    path: Path
    index: int
    count: int
    run_id: str
    tests: list[str] = field(default_factory=list)


def read_shard(path: Path) -> Shard:
    """The shard record of the reports directory ``path``; :class:`MergeError` without one."""
    try:
        record = json.loads((path / SHARD_FILE).read_text())
        index, count = parse_shard(record["shard"])
        return Shard(path, index, count, record["run_id"], list(record["tests"]))
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise MergeError(f"{path}: no usable {SHARD_FILE} ({e}); a shard's reports come from a run with --shard I/N") from None


def _missing(test: str, message: str) -> ET.Element:
    """A test a shard was given and never reported, as a junit test case with an error."""
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


def merge(shards: list[Shard], out: Path, history_file: Path | None = None) -> tuple[list[str], list[str]]:
    """Write the merged reports of ``shards`` to ``out`` (module doc), the merged run recorded in
    ``out/values-history.jsonl`` after the runs of ``history_file`` (None: none before it); returns
    the holes and the history's lines skipped, each said in one line. :class:`MergeError` for shards
    of different counts, the same shard twice or a ``history_file`` that does not exist."""
    if not shards:
        raise MergeError("no shard given")
    counts = {s.count for s in shards}
    if len(counts) != 1:
        raise MergeError(f"shards of different splits: {sorted(f'{s.index}/{s.count}' for s in shards)}")
    count = counts.pop()
    seen: dict[int, Path] = {}
    for s in shards:
        if s.index in seen:
            raise MergeError(f"shard {s.index}/{count} twice: {seen[s.index]} and {s.path}")
        seen[s.index] = s.path
    if history_file is not None and not history_file.is_file():
        raise MergeError(f"--history {history_file}: no such file")
    shards = sorted(shards, key=lambda s: s.index)
    run_id = f"merged-{shards[0].run_id}"
    out.mkdir(parents=True, exist_ok=True)
    holes = [f"shard {i}/{count} did not report" for i in range(1, count + 1) if i not in seen]

    cases: list[ET.Element] = []
    wall = 0.0
    measurements: list[dict] = []
    durations: dict = {}
    (out / "allure-results").mkdir(exist_ok=True)
    for s in shards:
        junit = s.path / "junit.xml"
        if not junit.is_file():
            holes.append(f"shard {s.index}/{count} ({s.path}) has no junit.xml")
            continue
        mine, time_s = _suite_cases(junit)
        wall = max(wall, time_s)
        cases += mine
        reported = {junit_nodeid(c) for c in mine}
        for t in (t for t in s.tests if t not in reported):
            holes.append(f"{t}: given to shard {s.index}/{count}, never reported")
            cases.append(_missing(t, f"given to shard {s.index}/{count}, never reported"))
        if (s.path / "measurements.json").is_file():
            for m in json.loads((s.path / "measurements.json").read_text())["measurements"]:
                if m["run_id"] == s.run_id:
                    m["details"] = {**(m.get("details") or {}), "shard": f"{s.index}/{count}", "shard_run_id": s.run_id}
                    measurements.append({**m, "run_id": run_id})
        if (s.path / "durations.json").is_file():
            durations.update(json.loads((s.path / "durations.json").read_text()))
        results = s.path / "allure-results"
        if results.is_dir():
            for f in results.iterdir():
                if f.is_file():
                    shutil.copy2(f, out / "allure-results" / f.name)
    cases += [_hole(f"shard_{i}_of_{count}", f"shard {i}/{count} did not report") for i in range(1, count + 1) if i not in seen]

    suite = ET.Element("testsuite", name="pytest", tests=str(len(cases)), time=f"{wall:.3f}",
                       failures=str(sum(1 for c in cases if c.find("failure") is not None)),
                       errors=str(sum(1 for c in cases if c.find("error") is not None)),
                       skipped=str(sum(1 for c in cases if c.find("skipped") is not None)))
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="merged_shards", value=f"{len(seen)} of {count}")
    ET.SubElement(props, "property", name="run_id", value=run_id)
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

    outcomes = [t.outcome for t in read_allure_results(out / "allure-results")]
    kubernetes = sorted({m["kubernetes"] for m in measurements})
    title = f"Run {run_id} ({len(seen)} of {count} shards)" + (f" — Kubernetes {', '.join(kubernetes)}" if kubernetes else "")
    text = markdown(build_summary(measurements, outcomes), outcomes, title, drift_lines(out, run_id))
    text += "\n## Holes\n\n" + ("\n".join(f"- {h}" for h in holes) if holes else "none") + "\n"
    (out / "summary.md").write_text(text)
    return holes, skipped


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
        holes, skipped = merge([read_shard(d) for d in args.shards], args.out, args.history)
    except MergeError as e:
        print(f"merge: {e}", file=sys.stderr)
        return 2
    for problem in skipped:
        print(f"merge: values history: {problem}: skipped", file=sys.stderr)
    if not args.no_html:
        try:
            print(htmlreport.said(htmlreport.build(args.out, history=False)))
        except (htmlreport.ReportError, OSError) as e:
            print(f"merge: the HTML report not made: {e}", file=sys.stderr)
    print(f"merged {args.out}: " + ("every shard and every test reported" if not holes else f"{len(holes)} hole(s):"))
    for h in holes:
        print(f"  HOLE {h}")
    return 1 if holes else 0


if __name__ == "__main__":
    sys.exit(main())
