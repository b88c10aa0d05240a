"""Compare two runs: what moved between Kubernetes versions (or between two nights).

A run is a reports directory (or its ``measurements.json``): the measurements of one run id
(the newest in the file unless ``--run-id-a/-b`` say otherwise) and, when ``junit.xml`` sits
next to it, each test's outcome.

For each measurement (keyed by test, case ID and name) the comparison says:

- ``same``: the expectation is the same and the new value holds — any change is within the
  documented band;
- ``not run``: the test did not run in one of the two runs (no outcome in its junit.xml and
  no measurement) — e.g. a full run compared with a run of one test;
- ``new``: measured only in B; ``skipped in B`` / ``missing (test failed)``: gone from B because
  its test was skipped or failed (the failure is its own ``unexplained`` outcome row);
- ``gate changed``: a value keyed by a feature gate's state (``[gate off]``/``[gate on]``,
  e2e.cluster.gates.gate_key) gone from B because B's cluster ran the gate the other way — the
  same test measured the same name under the other state, and that value held (e.g. RR-2's
  ``creation[gate off]`` on 1.35, ``creation[gate on]`` on 1.36, whose gate is on as shipped);
- ``keyed by facts``: a value whose name's qualifier follows a cluster fact (the controller
  manager's grace, ``[fast-lifecycle]`` / ``[multi-node]``; a lease duration) gone from B while B
  measured the one other qualifier of it, which held, and the two runs' facts differ (listed under
  the table: the reason) — e.g. the suite's own cluster against one the suite did not make; or a
  value that reads a fact holding on the suite's own clusters only (its ``fact``, e.g. ES-7's
  ``eviction_hard[kind]``: ``kubelet_config.evictionHard``) gone from B, whose facts differ in it;
- ``missing (test xfailed)``: gone from B because its test hit its documented flake there;
- ``documented change``: the expectation itself differs (keyed by another version or cgroup)
  and the new value holds its own;
- ``unexplained``: the new value fails its expectation, or a value disappeared/appeared while
  its test still ran, or a test's outcome went from passed to failed/error;
- ``expected failure``: the new value fails inside a test B ran as an expected failure
  (``xfailed``: a negative control such as ``make app``'s naive app) — never unexplained;
- ``undocumented``: one side has no documented value for its version (shown, not judged);
- a value that B measured in another variant of the same test because B skipped A's (RR-1's
  ``[gates-1.34]`` on 1.34, ``[default]`` once the gate is on by default) is compared across the
  move, classified as any other, its ``note`` naming the move (``variant moved: [gates-1.34] →
  [default]``); the two tests' passed/skipped swap is ``variant moved``, never a change;
- ``known bug: <A> → <B>`` / ``known bug: <state>``: a known upstream bug's state changed, or
  stayed (listed either way: its own class, never unexplained) — ``present`` (as expected on the
  run's patch), ``fixed`` (as expected: the patch has the fix), ``gone (no fix known)`` (the correct
  value where no fix is known to reach the patch: ``bug-fixed``), ``present despite its fix`` (the
  test failed: its outcome row is unexplained), or A's verdict;
- ``race: <A> → <B>`` / ``race: <outcome>``: a known bug that shows only when a race goes its way
  (``details.race`` of either side, e2e.judge.expectations ``KnownBug.race``): whether the race
  ``happened`` or ``did not happen`` in each run — never a fix, never unexplained; the row's
  ``note`` says how often it happened over every run of both files (``happened in 2 of 5 runs``).
  A run judged before the bug was declared a race reads as its outcome (bug-present: happened,
  bug-fixed: did not happen);
- ``set aside`` / ``holds now``: the value was skipped with an environment reason in B / only
  in A; skipped in B after holding in A is ``unexplained``, and so is a value that fails in B
  whatever A had set aside; ``flake``: B hit a race upstream tolerates (its reason in the
  details), or only A did — the race not happening again is no fix;
- ``inconclusive``: B's timing value failed while the host was overloaded (e2e.judge.pressure;
  the pressure figures in its ``details.host``): counted apart, never unexplained — run B again
  on a quieter host; a test that ended so is an ``inconclusive`` outcome row. Inconclusive in A
  and holding in B: ``holds now``.
- ``unverified (carried forward)``: the new value holds an expectation whose source was not read
  for B's version (verdict ``unverified-carried-forward``): not a failure, never ``same``.

A test that failed and then passed on a rerun (``--reruns``) in B is a ``flaky`` outcome row —
also when it was flaky in A: never a pass, never unexplained, counted in the summary line (its
values are the last attempt's; the earlier attempts' stay in B's measurements.json).
A test that failed (or errored) in B is always an ``unexplained`` outcome row, changed or not;
a test that ran in only one of the runs otherwise is ``not run``, never a change.

Standard library only: ``make compare`` runs it with the system Python, no venv needed; the
verdicts, outcomes and classes are :mod:`e2e.base.verdicts`' (standard library only too).

Usage: ``python -m e2e.cli.compare A B [--json OUT]``; prints a table, writes the JSON (default:
``compare.json`` next to B's measurements), and exits 1 when anything is unexplained (for CI),
2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from e2e.base.junit import junit_nodeid
from e2e.base.verdicts import (
    ERROR, EXPECTED_FAILURE, FAIL, FAILED, FLAKY, INCONCLUSIVE, INTERRUPTED, KNOWN_BUG_STATES,
    NOT_RUN, OUTCOME_CHANGED, OWN_SKIPS, PASSED, RACE_HAPPENED, RACE_OF_VERDICT, SAME, DOCUMENTED_CHANGE, SKIPPED,
    TestOutcome, UNDOCUMENTED, UNEXPLAINED, VERDICTS, XFAILED, outcome as outcome_row, value_change,
)
from e2e.base import facts


# the qualifiers of a value keyed by a gate's state (e2e.cluster.gates.gate_key), and the class of
# such a value gone from B because B ran the gate the other way
GATE_STATES = ("[gate on]", "[gate off]")
GATE_CHANGED = "gate changed"
# the class of a value gone from B because its name's qualifier follows a cluster fact that differs
# between the runs (e.g. a band keyed by the controller manager's grace, e2e.documented.faults.grace_key:
# ``[fast-lifecycle]`` on the suite's profile, ``[multi-node]`` on a cluster with the upstream defaults)
FACTS_CHANGED = "keyed by facts"
# the class of a test's outcome that went passed <-> skipped because its values moved to another
# variant of the test (:func:`_moved`), and the note on each such value
VARIANT_MOVED = "variant moved"


class RunNotFound(ValueError):
    """The path is not a reports directory or measurements file, or the run id is not in it."""


@dataclass
class Run:
    """One run: ``measurements`` keyed by (test, case, name); ``outcomes`` test -> status;
    ``races``: per key, the race outcome (:func:`race_outcome`) of every run of the file that
    measured it, by run id."""

    path: str
    run_id: str
    kubernetes: str
    measurements: dict[tuple[str, str, str], dict]
    outcomes: dict[str, str] = field(default_factory=dict)
    races: dict[tuple[str, str, str], dict[str, str]] = field(default_factory=dict)

    def ran(self, test: str) -> bool:
        """Whether ``test`` ran in this run: it has an outcome in junit.xml or a measurement."""
        return test in self.outcomes or any(t == test for t, _, _ in self.measurements)


def _outcomes(junit: Path) -> dict[str, str]:
    """``{nodeid-ish: passed|failed|error|skipped|undocumented|bug fixed?|inconclusive|xfailed|flaky|interrupted}``
    from a pytest junit.xml (``undocumented``: skipped by the plugin for values with nothing
    documented; ``bug fixed?``: for a known bug's correct value; ``inconclusive``: for a timing
    value that failed under host overload; e2e.plugin.outcomes.settle), read from the testcase's
    ``outcome`` property the plugin writes."""
    out = {}
    for tc in ET.parse(junit).getroot().iter("testcase"):
        test = junit_nodeid(tc)
        settled = {p.get("value", "") for p in tc.iter("property") if p.get("name") == "outcome"}
        status = PASSED
        for child in tc:
            if child.tag in ("failure", ERROR, SKIPPED):  # junitxml's tags: its error and skipped are pytest's words
                status = {"failure": FAILED}.get(child.tag, child.tag)
                if child.tag == SKIPPED and child.get("type") == "pytest.xfail":
                    status = XFAILED
                elif child.tag == SKIPPED:
                    status = next((o.name for o in OWN_SKIPS if _settled(settled, o.prop, child, _reason_prefix(o.name))),
                                  status)
        if status == PASSED:  # a pass the plugin settled otherwise: flaky (a rerun), interrupted (Ctrl-C)
            status = next((o.name for o in (outcome_row(FLAKY), outcome_row(INTERRUPTED)) if o.prop in settled), status)
        out[test] = status
    return out


def _reason_prefix(outcome: str) -> str:
    """How the skip reason of a test the plugin settled as ``outcome`` starts (a junit.xml older
    than the ``outcome`` property is read by it)."""
    return next(v.reason for v in VERDICTS if v.outcome == outcome and v.reason)


def _settled(settled: set[str], outcome: str, skipped: ET.Element, prefix: str) -> bool:
    """Whether the plugin settled a test as ``outcome``: its ``outcome`` property; a testcase
    without one (hand-written, or older than the property): its skip reason's prefix."""
    if settled:
        return outcome in settled
    return (skipped.get("message") or "").startswith(prefix)


def load_run(path: str | Path, run_id: str | None = None) -> Run:
    """Read a run from a reports directory or a measurements.json; raises :class:`RunNotFound`."""
    path = Path(path)
    file = path / "measurements.json" if path.is_dir() else path
    if not file.exists():
        raise RunNotFound(f"{path}: no measurements.json")
    try:
        items = json.loads(file.read_text())["measurements"]
        run_ids = list(dict.fromkeys(m["run_id"] for m in items))
    except (ValueError, KeyError, TypeError) as e:
        raise RunNotFound(f"{file}: not a measurements file ({type(e).__name__}: {e})") from None
    if not items:
        raise RunNotFound(f"{file}: no measurements")
    chosen = run_id or run_ids[-1]
    if chosen not in run_ids:
        raise RunNotFound(f"{file}: no run {chosen} (runs: {', '.join(run_ids)})")
    keyed = _keyed(items)
    ms = {key: m for key, m in keyed if m["run_id"] == chosen}
    junit = file.parent / "junit.xml"
    try:
        outcomes = _outcomes(junit) if junit.exists() else {}
    except ET.ParseError as e:
        raise RunNotFound(f"{junit}: not a JUnit XML file ({e})") from None
    kubernetes = next(iter(ms.values()))["kubernetes"]
    races: dict[tuple[str, str, str], dict[str, str]] = {}
    for key, m in keyed:
        outcome = race_outcome(m)
        if outcome is not None:
            races.setdefault(key, {})[m["run_id"]] = outcome
    return Run(str(file), chosen, kubernetes, ms, outcomes, races)


def _keyed(items: list[dict]) -> list[tuple[tuple[str, str, str], dict]]:
    """Each measurement with its key (test, case, name); a name a test measured more than once in an
    attempt of a run (PC-6's two "probe" pods, ST-4's two claims) gets ``#2``, ``#3`` … after its
    first, in the order measured, so every value is compared, not only the last. A rerun's values
    (``details.attempt``) take the same keys again: the last attempt's are the run's."""
    seen: dict[tuple, int] = {}
    out = []
    for m in items:
        of = (m["run_id"], m["test"], m["case"], m["name"], (m.get("details") or {}).get("attempt", 1))
        n = seen[of] = seen.get(of, 0) + 1
        out.append(((m["test"], m["case"], m["name"] if n == 1 else f"{m['name']} #{n}"), m))
    return out


def race_outcome(m: dict | None) -> str | None:
    """Whether the race behind a known bug's value happened (``details.race.outcome``); for a
    value judged before its bug was declared a race, its verdict read so (bug-present: happened,
    bug-fixed: did not happen); None for any other value."""
    if m is None:
        return None
    race = (m.get("details") or {}).get("race")
    if isinstance(race, dict) and race.get("outcome"):
        return race["outcome"]
    return RACE_OF_VERDICT.get(m["verdict"])


def _is_race(m: dict | None) -> bool:
    return m is not None and "race" in (m.get("details") or {})


@dataclass
class Row:
    """One compared measurement (or test outcome when ``name`` is ``outcome``)."""

    test: str
    case: str
    name: str
    a: object
    b: object
    expected_a: str
    expected_b: str
    verdict_a: str
    verdict_b: str
    change: str
    note: str = ""  # what the change class adds (a race: how often it happened)
    test_a: str = ""  # A's test when the value moved to another variant of it (``VARIANT_MOVED``)


def _expected(m: dict | None) -> str:
    if m is None:
        return "—"
    if m["verdict"] == UNDOCUMENTED:
        return UNDOCUMENTED
    unit = f" {m['unit']}" if m.get("unit") else ""
    if m.get("band"):
        low, high = m["band"]
        return f"{m['documented']}{unit} in [{low:g}, {'∞)' if high is None else f'{high:g}]'}"
    if isinstance(m["documented"], (int, float)) and not isinstance(m["documented"], bool):
        return f"{m['documented']:g}{unit}"  # judged by equality: a number still has its unit
    # a text filled with the run's own names (IM's registry address): its template is the contract
    template = m.get("template")
    return repr(template if isinstance(template, str) else m["documented"])


def _other_gate_state(b: Run, key: tuple[str, str, str]) -> tuple[str, str, str, str] | None:
    """B's value of ``key`` measured under the gate's other state (same test and case, the name with
    ``[gate on]`` and ``[gate off]`` swapped) when it held (not failed): ``(test, case, name,
    verdict)``; None when the name carries no gate state or B has no such value that held."""
    test, case, name = key
    on, off = GATE_STATES
    if on not in name and off not in name:
        return None
    swapped = name.replace(on, "\0").replace(off, on).replace("\0", off)
    m = b.measurements.get((test, case, swapped))
    if m is None or m["verdict"] in (FAIL, INCONCLUSIVE):
        return None
    return test, case, swapped, m["verdict"]


def _other_qualifier(a: Run, b: Run, key: tuple[str, str, str]) -> tuple[str, str] | None:
    """B's one value of the same test and case whose name is ``key``'s with another ``[qualifier]``
    (``unknown_after_last_renew_s[fast-lifecycle]`` → ``…[multi-node]``), which A did not measure,
    and which held: ``(name, verdict)``; None when the name has no qualifier, or B has none or
    several such values."""
    test, case, name = key
    if not name.endswith("]") or "[" not in name:
        return None
    stem = name[:name.index("[")]
    found = [(n, m["verdict"]) for (t, c, n), m in b.measurements.items()
             if t == test and c == case and n != name and n.startswith(stem + "[") and n.endswith("]")
             and (t, c, n) not in a.measurements]
    if len(found) != 1 or found[0][1] in (FAIL, INCONCLUSIVE):
        return None
    return found[0]


def _fact_differs(fact: str, facts_differ: Sequence[str]) -> list[str]:
    """The lines of ``facts_differ`` (:func:`facts_diff`) about ``fact`` or a field under it
    (``kubelet_config.evictionHard`` matches ``"default/control-plane:
    kubelet_config.evictionHard.nodefs.available 0% → 1%"``); ``[]`` for no fact."""
    if not fact:
        return []
    keys = [(line, line.split(": ", 1)[1].split(" ", 1)[0]) for line in facts_differ if ": " in line]
    return [line for line, key in keys if key == fact or key.startswith(fact + ".")]


def _variant(test: str) -> str:
    """``[gates-1.34]`` of ``…::test_x[gates-1.34]``; ``""`` for a test without parameters."""
    return test[test.index("["):] if test.endswith("]") and "[" in test else ""


def _moved(a: Run, b: Run) -> dict[tuple[str, str, str], tuple[str, str, str]]:
    """A's keys whose value B measured in another variant of the same test (the same test
    function, case and name, other parameters: e.g. a gate's profile ``[gates-1.34]`` on 1.34,
    ``[default]`` once the gate is on by default), because B skipped A's variant: A's key -> B's.
    Only one-to-one matches; a value B still measured under A's key stays there."""
    def base(test: str) -> str:
        return test[: len(test) - len(_variant(test))]

    Key = tuple[str, str, str]
    gone: dict[Key, list[Key]] = {}
    for key in a.measurements.keys() - b.measurements.keys():
        if b.outcomes.get(key[0]) == SKIPPED:
            gone.setdefault((base(key[0]), *key[1:]), []).append(key)
    came: dict[Key, list[Key]] = {}
    for key in b.measurements.keys() - a.measurements.keys():
        came.setdefault((base(key[0]), *key[1:]), []).append(key)
    return {ka[0]: kb[0] for k, ka in gone.items() if len(ka) == 1 and len(kb := came.get(k, [])) == 1}


def _same_expectation(a: dict, b: dict) -> bool:
    def ident(m: dict) -> tuple:
        return (m.get("template", m["documented"]), m["band"], m.get("versions"))

    return ident(a) == ident(b)


def compare(a: Run, b: Run, facts_differ: Sequence[str] = ()) -> list[Row]:
    """Every measurement and changed test outcome of ``a`` and ``b``, classified (module doc);
    ``facts_differ``: what differs between the runs' cluster facts (:func:`facts_diff`), which may
    explain a value keyed by a fact (:data:`FACTS_CHANGED`)."""
    rows: list[Row] = []
    moved = _moved(a, b)
    into = set(moved.values())
    for key in sorted(set(a.measurements) | set(b.measurements)):
        if key in into:
            continue  # compared with A's value, under A's key
        key_b = moved.get(key, key)
        ma, mb = a.measurements.get(key), b.measurements.get(key_b)
        test, case, name = key_b
        note, race_a, race_b = "", race_outcome(ma), race_outcome(mb)
        if key_b != key:
            note = f"{VARIANT_MOVED}: {_variant(key[0])} → {_variant(test)}"
        if not (a.ran(key[0]) and b.ran(test)):
            change = NOT_RUN
        elif ma is None:
            change = "new"
        elif mb is None:
            change = {SKIPPED: "skipped in B", FAILED: "missing (test failed)", ERROR: "missing (test error)",
                      XFAILED: "missing (test xfailed)"}.get(b.outcomes.get(test, PASSED), UNEXPLAINED)
            other = _other_gate_state(b, key)
            if change == UNEXPLAINED and other is not None:
                change, note = GATE_CHANGED, f"B measured {other[2]!r} instead (verdict {other[3]})"
            requalified = _other_qualifier(a, b, key) if change == UNEXPLAINED and facts_differ else None
            if requalified is not None:
                change, note = FACTS_CHANGED, (f"B measured {requalified[0]!r} instead (verdict {requalified[1]}): "
                                               "the clusters' facts differ (listed below the table)")
            differs = _fact_differs(ma.get("fact") or "", facts_differ) if change == UNEXPLAINED else []
            if differs:
                change, note = FACTS_CHANGED, (f"it reads {ma['fact']}, which differs in B: {differs[0]}"
                                               + (f" (and {len(differs) - 1} more below the table)" if len(differs) > 1 else ""))
        elif (_is_race(ma) or _is_race(mb)) and race_a is not None and race_b is not None:
            change, note = _race_change(race_a, race_b, {**a.races.get(key, {}), **b.races.get(key_b, {})})
        elif (by_table := value_change(ma["verdict"], mb["verdict"])) is not None:
            change = _known_bug_change(ma["verdict"], mb["verdict"]) if mb["verdict"] in KNOWN_BUG_STATES else by_table
        elif mb["verdict"] == FAIL and b.outcomes.get(test) == XFAILED:
            # a negative control (strict xfail: e.g. `make app`'s naive app, app.yaml expect_to_fail)
            # failed as it must; had it held, its test would have failed (XPASS strict) instead
            change = EXPECTED_FAILURE
        elif mb["verdict"] == FAIL:
            change = UNEXPLAINED
        elif _same_expectation(ma, mb):
            change = SAME
        else:
            change = DOCUMENTED_CHANGE
        rows.append(
            Row(test, case, name, ma and ma["value"], mb and mb["value"], _expected(ma), _expected(mb),
                ma["verdict"] if ma else "—", mb["verdict"] if mb else "—", change, note,
                key[0] if key_b != key else "")
        )
    moved_tests = {k[0] for pair in moved.items() for k in pair}
    for test in sorted(set(a.outcomes) | set(b.outcomes)):
        oa, ob = a.outcomes.get(test, "—"), b.outcomes.get(test, "—")
        row = _outcome_row(ob)
        if oa != ob or row.listed:
            if row.change == UNEXPLAINED:
                change = UNEXPLAINED
            elif not (a.ran(test) and b.ran(test)):
                change = NOT_RUN
            elif test not in a.outcomes or test not in b.outcomes:
                continue  # ran in both, one run has no junit.xml: no outcome to compare
            elif row.change != OUTCOME_CHANGED:
                change = row.change  # inconclusive, flaky: counted apart, never a pass
            elif {oa, ob} == {PASSED, SKIPPED} and test in moved_tests:
                change = VARIANT_MOVED  # its values are compared in the variant that ran
            else:
                change = OUTCOME_CHANGED
            rows.append(Row(test, "", "outcome", oa, ob, "", "", oa, ob, change))
    return rows


def _outcome_row(name: str) -> TestOutcome:
    """The table's row of a test outcome; an outcome it does not know (``—``: none) is classed as
    a changed outcome."""
    try:
        return outcome_row(name)
    except KeyError:
        return TestOutcome(name)


def _race_change(a: str, b: str, runs: dict[str, str]) -> tuple[str, str]:
    """``("race: happened → did not happen", "happened in 1 of 2 runs")``: the race's outcome in A
    and B, and how often it happened over ``runs`` (run id -> outcome, both files)."""
    change = f"race: {b}" if a == b else f"race: {a} → {b}"
    return change, f"{RACE_HAPPENED} in {sum(o == RACE_HAPPENED for o in runs.values())} of {len(runs)} runs"


def _known_bug_change(a: str, b: str) -> str:
    """Returns ``known bug: present → fixed`` (a changed state, :data:`KNOWN_BUG_STATES`; A's verdict
    when A was not judged as the known bug) or ``known bug: present`` (unchanged)."""
    sa, sb = KNOWN_BUG_STATES.get(a, a), KNOWN_BUG_STATES[b]
    return f"known bug: {sb}" if sa == sb else f"known bug: {sa} → {sb}"


def _fmt(v: object) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    text = "—" if v is None else str(v)
    return text if len(text) <= 40 else text[:37] + "..."


def table(a: Run, b: Run, rows: list[Row]) -> str:
    """The human-readable comparison."""
    head = [f"A: {a.kubernetes} run {a.run_id} ({a.path})", f"B: {b.kubernetes} run {b.run_id} ({b.path})", ""]
    cols = ["case", "measurement", "A", "B", "expected A", "expected B", "change"]
    data = [[r.case, r.name if r.name != "outcome" else f"outcome {r.test.split('::')[-1]}", _fmt(r.a), _fmt(r.b),
             _fmt(r.expected_a), _fmt(r.expected_b), r.change + (f" ({r.note})" if r.note else "")] for r in rows]
    widths = [max(len(c), *(len(d[i]) for d in data)) if data else len(c) for i, c in enumerate(cols)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True))]
    lines += ["  ".join(str(x).ljust(w) for x, w in zip(d, widths, strict=True)) for d in data]
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.change] = counts.get(r.change, 0) + 1
    summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    return "\n".join(head + lines + ["", f"summary: {summary or 'nothing to compare'}"])


def facts_diff(a: Path, b: Path) -> list[str]:
    """What differs between the cluster facts of reports directories ``a`` and ``b`` (each run's
    ``facts.json``, e2e.base.facts.diff); ``[]`` when they agree or either run has none (a run
    before facts were recorded, or one stopped before its first cluster)."""
    try:
        fa, fb = (json.loads((d / "facts.json").read_text()) for d in (a, b))
    except (OSError, ValueError):
        return []
    return facts.diff(fa, fb)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m e2e.cli.compare", description=__doc__.split("\n\n")[0])
    p.add_argument("a", help="reports dir or measurements.json of the earlier run")
    p.add_argument("b", help="reports dir or measurements.json of the later run")
    p.add_argument("--run-id-a")
    p.add_argument("--run-id-b")
    p.add_argument("--json", default=None, help="write the comparison as JSON here (default: compare.json next to B)")
    args = p.parse_args(argv)
    try:
        a, b = load_run(args.a, args.run_id_a), load_run(args.b, args.run_id_b)
    except RunNotFound as e:
        print(f"compare: {e}", file=sys.stderr)
        return 2
    facts = facts_diff(Path(a.path).parent, Path(b.path).parent)
    rows = compare(a, b, facts)
    print(table(a, b, rows))
    if facts:
        print("\ncluster facts that differ (facts.json of each run; the reason for a change above):")
        print("\n".join(f"  {line}" for line in facts))
    out = Path(args.json) if args.json else Path(b.path).parent / "compare.json"
    out.write_text(json.dumps(
        {"a": {"run_id": a.run_id, "kubernetes": a.kubernetes, "path": a.path},
         "b": {"run_id": b.run_id, "kubernetes": b.kubernetes, "path": b.path},
         "rows": [asdict(r) for r in rows], "facts_diff": facts}, indent=1, default=str))
    return 1 if any(r.change == UNEXPLAINED for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
