"""Named measurements, judged against the registry, kept in ``reports/measurements.json``.

A :class:`Judge` belongs to one test. :meth:`Judge.expect` records a measured value with its
expectation (case ID, documented value, band, why, source) and its verdict at once, so the
file holds every value even when the test fails later or the run is interrupted. Failed
verdicts are collected and raised together by :meth:`Judge.verify` as one
:class:`ExpectationFailed` that says, per value: measured, expected, band, case ID, source
and the relevant part of the timeline.

``measurements.json`` is one JSON document ``{"measurements": [...]}`` rewritten atomically
(temp file + rename) under a file lock, so parallel workers append safely and a reader never
sees half a file.
"""

from __future__ import annotations

import datetime as dt
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Callable, cast


from ..record.hostload import Pressure
from ..base.jsonfile import read_json, update_json
from .expectations import ABSENT, FIXED, REGISTRY, Band, Expectation, KnownBug, NotDocumented, Registry, measured_number
from ..base.measurement import Measurement as Measurement  # the record: e2e.base (read here by the app and tests)
from ..base.verdicts import BUG_FIXED_PREFIX as BUG_FIXED_PREFIX  # re-exported: tests/test_mutations.py reads it here
from ..base.verdicts import (
    ABSENT_AS_EXPECTED, BUG_FIXED, BUG_PRESENT, BUG_PRESENT_DESPITE_FIX, FAIL, FAILING_VERDICTS, FIXED_AS_EXPECTED, INCONCLUSIVE,
    KNOWN_BUG_VERDICTS, PASS, RACE_ABSENT, RACE_HAPPENED, SET_ASIDE_VERDICTS, SETTLING, UNDOCUMENTED, UNVERIFIED,
    UNVERIFIED_PREFIX, ValueVerdict,
)
from .pressure import describe, host_details, inconclusive, limit

_PACKAGE_DIR = str(Path(__file__).resolve().parents[1])  # the e2e package: its frames are not the caller

# The verdicts, outcomes and reasons are e2e.base.verdicts' (the one table). A race's value says in
# ``details.race.outcome`` (e2e.cli.compare counts them over runs): RACE_HAPPENED — the value holds
# the outcome that needs the race: KnownBug.race, the buggy one, the expectation's documented value
# (verdict bug-present); Expectation.race, the race's other outcome, Race.documented (verdict pass,
# judged against Race.band). RACE_ABSENT — the value holds the other one: KnownBug.correct, or the
# expectation's own usual value (verdict pass). UNVERIFIED: the verdict of a value that holds an
# expectation applying to the cluster's minor by its range (Expectation.minors) whose source was not
# read in any release of that minor (Expectation.verified_in): judged against the newest documented
# value, so a regression still fails, but never shown as read in this version's source.
# ``details.judged`` keeps the verdict it would have had (pass or bug-present), ``details.reason``
# says where it was read.

# A wait's budget (s) where the band it would use is not documented for this cluster
# (Judge.wait_budget_s): generous, so the value is still measured and shown — as undocumented.
UNDOCUMENTED_WAIT_S = 120.0


class MeasurementLog:
    """Appends measurements to one JSON file, safe across processes (see module doc)."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def append(self, m: Measurement) -> None:
        update_json(self.path, lambda data: {**data, "measurements": [*data["measurements"], m.to_json()]}, self._empty,
                    indent=1, default=str)

    def read(self) -> dict:
        return read_json(self.path, self._empty)

    def keep_only(self, run_id: str) -> None:
        """Drop every value of another run than ``run_id`` (the reports are the last run's)."""
        if self.path.exists():
            update_json(self.path, lambda data: {**data, "measurements": [m for m in data["measurements"] if m["run_id"] == run_id]},
                        self._empty, indent=1, default=str)

    @staticmethod
    def _empty() -> dict:
        return {"measurements": []}


class ExpectationFailed(AssertionError):
    """Raised by :meth:`Judge.verify`; its message explains every failed value."""


@dataclass
class Verdict:
    measurement: Measurement
    expectation: Expectation
    context: str

    def explain(self, same_as: Verdict | None = None) -> str:
        """Measured, expected, versions, where judged, band, source and the context (the timeline),
        or, when ``same_as`` showed the very same context above, a reference to it."""
        m, e = self.measurement, self.expectation
        lines = [
            f"{m.case} {m.name}: measured {measured(m)}, expected {e.describe()}",
            f"  documented for Kubernetes {e.versions()} (cluster: {m.kubernetes}"
            + (f", cgroup v{m.cgroup})" if m.cgroup else ", cgroup unknown)"),
        ]
        if "carried_forward" in m.details:
            lines.append(f"  unverified: {m.details['carried_forward']}")
        if m.verdict == BUG_PRESENT_DESPITE_FIX:
            kb = m.details["known_bug"]
            lines.append(f"  known bug {kb['issue']} present although its fix should be in {m.kubernetes}: {kb['fix']} "
                         f"(buggy: {kb['buggy']})")
        if m.where:
            lines.append(f"  judged at {m.where}")
        if e.why:
            lines.append(f"  band: {e.why}")
        lines.append(f"  source: {e.source}")
        if same_as is not None:
            lines.append(f"  timeline: the one under {same_as.measurement.case} {same_as.measurement.name} above")
        elif self.context:
            lines.append("  timeline:")
            lines.extend("    " + line for line in self.context.splitlines())
        return "\n".join(lines)


def explain_all(verdicts: list[Verdict]) -> list[str]:
    """Each verdict explained (:meth:`Verdict.explain`); a context identical to one shown above —
    values judged at the same moment quote the same timeline — is referred to, not repeated."""
    first: dict[str, Verdict] = {}
    out = []
    for v in verdicts:
        shown_above = first.setdefault(v.context, v) if v.context else v
        out.append(v.explain(same_as=None if shown_above is v else shown_above))
    return out


def shown(value: object, unit: str = "", documented: object = None, band: list[float] | None = None) -> str:
    """A value as a message shows it: numbers with their unit and the precision of the
    ``documented`` number and its ``band`` (:func:`e2e.judge.expectations.measured_number`),
    strings quoted, ``None`` as ``None`` (a measured value: :func:`measured`)."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (int, float)):
        return measured_number(value, documented, band) + (f" {unit}" if unit else "")
    return repr(value)


def measured_none(details: dict | None) -> str:
    """What a measured ``None`` with these ``details`` is, as every message and report shows it:
    ``nothing`` for a wait that timed out (:meth:`e2e.run.scenario.Scenario.wait_for` with
    ``case``/``measurement`` records ``None`` with ``details.timed_out_after_s``), else
    ``None (a value read as None, not a timeout)`` (a field not set, a condition without a reason)."""
    return "nothing" if "timed_out_after_s" in (details or {}) else "None (a value read as None, not a timeout)"


def measured(m: Measurement) -> str:
    """The measured value of ``m`` as a message shows it (:func:`shown`); ``None`` as
    :func:`measured_none` says."""
    if m.value is None:
        return measured_none(m.details)
    return shown(m.value, m.unit, m.documented, m.band)


def _caller() -> str:
    """``file:line`` of the innermost frame outside the e2e package: the test's own call."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        path = frame.f_code.co_filename
        if not path.startswith(_PACKAGE_DIR):
            try:
                path = os.path.relpath(path)
            except ValueError:
                pass
            return f"{path}:{frame.f_lineno}"
        frame = frame.f_back
    return ""


class Judge:
    """Judges one test's measurements; see module doc.

    ``minor``/``cgroup`` select version-keyed expectations; ``kubernetes`` is the full
    version string written next to each value. ``host`` gives the host's CPU pressure from the
    test's start to now (:meth:`e2e.record.hostload.HostLoad.window`; None: not measured), judged
    against :func:`e2e.judge.pressure.limit` (``ValueError`` for a bad ``E2E_PRESSURE_LIMIT``).
    ``attempt``: which run of the test this is (2 and on: a rerun, ``--reruns``); each value of a
    rerun carries it as ``details.attempt``, so every attempt's values stay and tell apart.
    """

    def __init__(
        self,
        log: MeasurementLog,
        test: str,
        run_id: str,
        kubernetes: str,
        minor: int,
        cgroup: int | None = None,
        registry: Registry = REGISTRY,
        context: Callable[[], str] | None = None,
        host: Callable[[], Pressure | None] | None = None,
        attempt: int = 1,
    ):
        self.log, self.test, self.run_id = log, test, run_id
        self.attempt = attempt
        self.kubernetes, self.minor, self.cgroup = kubernetes, minor, cgroup
        self.registry = registry
        self.context = context
        self.host = host
        self.pressure_limit = limit() if host is not None else None
        self.verdicts: list[Verdict] = []
        self.undocumented: list[Measurement] = []

    def expectation(self, case: str, name: str, **params: object) -> Expectation:
        """The registry entry for this cluster with ``params`` filling the ``{placeholders}`` of
        a documented string (:meth:`Expectation.fill`). Raises ``UnknownMeasurement`` (name never
        documented) or ``NotDocumented`` (not for this cluster's version/cgroup)."""
        return self.registry.lookup(case, name, self.minor, self.cgroup).fill(**params)

    def wait_budget_s(self, case: str, name: str, fallback_s: float = UNDOCUMENTED_WAIT_S) -> float:
        """The upper end of the band of ``case``/``name`` in seconds (a band in ``ms`` is
        converted), for a wait's timeout; where nothing is documented for this cluster,
        ``fallback_s`` (default :data:`UNDOCUMENTED_WAIT_S`) — the values judged later still end
        ``undocumented``."""
        try:
            exp = self.expectation(case, name)
        except NotDocumented:
            return fallback_s
        band = cast(Band, exp.band)  # a wait is budgeted by a banded value
        return band.high / 1000.0 if exp.unit == "ms" else band.high

    def expect(
        self,
        case: str,
        name: str,
        value: float | int | str | None,
        context: str | None = None,
        details: dict | None = None,
        **params: object,
    ) -> bool:
        """Record ``value`` for ``case``/``name`` with its verdict; True when it holds (a race's
        correct outcome included, ``KnownBug.race``).

        ``name`` may carry an index (``restart_gap[2]``) that falls back to the plain name
        (:meth:`Registry.lookup`). A name the registry has never heard of raises
        :class:`UnknownMeasurement` at once. Where nothing is documented for this cluster the
        value is written with verdict ``undocumented`` and False is returned: never a pass (the
        plugin ends the test skipped, listing it). ``context`` (text) goes into the failure
        message; by default the judge's timeline excerpt.
        """
        return self._expect(case, name, value, context, details, None, params)

    def expect_against(self, expectation: Expectation, value: float | int | str | None, context: str | None = None,
                       details: dict | None = None) -> bool:
        """:meth:`expect` with ``expectation`` instead of the registry's entry: a documented value
        built from the cluster's own settings (e.g. :func:`e2e.documented.faults.nf2_from`), its
        case and name those of the value."""
        return self._expect(expectation.case, expectation.name, value, context, details, expectation, {})

    def _expect(self, case: str, name: str, value: float | int | str | None, context: str | None, details: dict | None,
                expectation: Expectation | None, params: dict) -> bool:
        where = _caller()
        try:  # UnknownMeasurement (never documented) propagates
            raw = expectation if expectation is not None else self.registry.lookup(case, name, self.minor, self.cgroup)
        except NotDocumented as e:
            m = self._measurement(case, name, value, "", None, None, str(e), "", "", UNDOCUMENTED, details, where)
            self.log.append(m)
            self.undocumented.append(m)
            return False
        template, exp = raw.documented, raw.fill(**params)
        ok = exp.holds_for(value)
        verdict = PASS if ok else FAIL
        if exp.race is not None and (ok or exp.raced().holds_for(value)):  # either outcome of a race passes
            details = {**(details or {}), "race": {"outcome": RACE_ABSENT if ok else RACE_HAPPENED,
                                                   "about": exp.raced().why}}
            exp = exp if ok else exp.raced()
            ok, verdict = True, PASS
        state = exp.known_bug.expected_on(self.kubernetes) if exp.known_bug is not None else None
        if state in (FIXED, ABSENT):
            # the fix should be in this patch, or it never had the bug: the correct value is the documented one
            details = {**(details or {}), "known_bug": _known_bug_details(exp, self.kubernetes)}
            buggy, exp = ok, exp.correct()
            template, ok = exp.documented, exp.holds_for(value)
            if state == ABSENT:
                verdict = ABSENT_AS_EXPECTED if ok else FAIL
            else:
                verdict = FIXED_AS_EXPECTED if ok else BUG_PRESENT_DESPITE_FIX if buggy else FAIL
        elif exp.known_bug is not None:
            correct = not ok and exp.correct().holds_for(value)
            details = {**(details or {}), "known_bug": _known_bug_details(exp, self.kubernetes)}
            if exp.known_bug.race and (ok or correct):  # either outcome of a race is accepted and recorded
                verdict = BUG_PRESENT if ok else PASS
                details["race"] = {"outcome": RACE_HAPPENED if ok else RACE_ABSENT, "about": exp.known_bug.race}
                ok = True
            else:
                verdict = BUG_PRESENT if ok else BUG_FIXED if correct else FAIL
        if not exp.verified_for(self.minor):
            carried = (f"documented for {exp.versions()}, read in {', '.join(exp.verified_in) or 'no release'}, "
                       f"not in 1.{self.minor}: carried forward")
            if verdict in (PASS, BUG_PRESENT, FIXED_AS_EXPECTED, ABSENT_AS_EXPECTED):
                details = {**(details or {}), "judged": verdict, "reason": carried}
                verdict = UNVERIFIED
            else:  # a failure (or a known bug's fix) stays what it is, saying so
                details = {**(details or {}), "carried_forward": carried}
        m = self._measurement(
            case, name, value, exp.unit, exp.documented, exp.band.as_list() if exp.band else None,
            exp.why, exp.source, exp.versions(), verdict, details, where,
        )
        m.template, m.verified_in, m.fact = template, list(exp.verified_in), exp.fact
        if inconclusive(verdict, exp.unit, m.details.get("host")):
            m.verdict = INCONCLUSIVE
            m.details["reason"] = f"host overloaded: expected {exp.describe()}; {describe(m.details['host'])}"
        self.log.append(m)
        if context is None and verdict in FAILING_VERDICTS and self.context is not None:
            context = self.context()
        self.verdicts.append(Verdict(m, exp, context or ""))
        return ok

    def _measurement(self, case, name, value, unit, documented, band, why, source, versions, verdict, details,
                     where="") -> Measurement:
        if self.host is not None:
            details = {**(details or {}), "host": host_details(self.host(), cast(float, self.pressure_limit))}
        if self.attempt > 1:
            details = {**(details or {}), "attempt": self.attempt}
        return Measurement(
            case=case, name=name, value=value, unit=unit, documented=documented, band=band, why=why,
            source=source, versions=versions, verdict=verdict, test=self.test, run_id=self.run_id,
            kubernetes=self.kubernetes,
            measured_at=dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds"),
            details=details or {}, cgroup=self.cgroup, where=where,
        )

    SET_ASIDE = SET_ASIDE_VERDICTS

    def set_aside(self, case: str, name: str, value: object, verdict: str, reason: str,
                  details: dict | None = None, **params: object) -> Measurement:
        """Write ``value`` next to its documented expectation with ``verdict`` ``skipped`` (an
        environment limit) or ``flake`` (a race upstream tolerates) and ``reason``: visible in
        measurements.json and the summary, never a failure and never a pass — the plugin ends
        the test skipped or xfailed with the reason. ``UnknownMeasurement``/``NotDocumented``
        propagate: only a documented value can be set aside."""
        if verdict not in self.SET_ASIDE:
            raise ValueError(f"verdict must be one of {self.SET_ASIDE}, not {verdict!r}")
        where = _caller()
        raw = self.registry.lookup(case, name, self.minor, self.cgroup)
        template, exp = raw.documented, raw.fill(**params)
        m = self._measurement(
            case, name, value, exp.unit, exp.documented, exp.band.as_list() if exp.band else None,
            exp.why, exp.source, exp.versions(), verdict, {**(details or {}), "reason": reason}, where,
        )
        m.template, m.verified_in = template, list(exp.verified_in)
        self.log.append(m)
        self.verdicts.append(Verdict(m, exp, reason))
        return m

    @property
    def failures(self) -> list[Verdict]:
        """The values that fail the test: ``fail`` and ``bug-present-despite-fix``
        (:data:`e2e.base.verdicts.FAILING_VERDICTS`), in the order judged."""
        return [v for v in self.verdicts if v.measurement.verdict in FAILING_VERDICTS]

    def set_aside_values(self, verdict: str) -> list[Measurement]:
        return [v.measurement for v in self.verdicts if v.measurement.verdict == verdict]

    def judged_at(self, verdict: str) -> str:
        """``file:line`` of the test code that judged the first value with ``verdict`` (an outcome
        :meth:`outcome` settles: ``inconclusive``, ``undocumented``, ``bug-fixed``, ``skipped``,
        ``flake``); ``""`` when none was judged so or where is unknown."""
        judged = [*self.undocumented, *(v.measurement for v in self.verdicts)]
        return next((m.where for m in judged if m.verdict == verdict and m.where), "")

    def carried_forward(self) -> str | None:
        """``"unverified, carried forward: CL-1 restart_gap[1] = 11 s (documented for 1.35–newer,
        read in 1.35.4, …, not in 1.38: carried forward); …"`` for the :data:`UNVERIFIED` values
        of this test, or None when there are none: what the plugin marks a test with, whatever
        its outcome."""
        found = self.set_aside_values(UNVERIFIED)
        if not found:
            return None
        return f"{UNVERIFIED_PREFIX} " + "; ".join(f"{m.case} {m.name} = {measured(m)} ({m.details['reason']})"
                                                     for m in found)

    def summary(self) -> str:
        """One line per judged value: verdict, case, name, measured, expected; then the
        values measured where nothing is documented for this cluster."""
        out = []
        for v in self.verdicts:
            m = v.measurement
            out.append(f"{m.verdict.upper():7} {m.case:5} {m.name:32} measured {measured(m)}  expected {v.expectation.describe()}")
        out.extend(f"UNDOCUMENTED {m.case:5} {m.name:32} measured {measured(m)}  ({m.why})" for m in self.undocumented)
        if self.failures:
            out += ["", "failed values, explained:"] + explain_all(self.failures)
        return "\n".join(out)

    def verify(self) -> None:
        """Raise :class:`ExpectationFailed` explaining every failed value, if any."""
        failed = self.failures
        if failed:
            head = f"{len(failed)} of {len(self.verdicts)} measured values outside their documented expectation"
            raise ExpectationFailed(head + "\n" + "\n".join(explain_all(failed)))

    def outcome(self) -> tuple[str, str] | None:
        """What the judged values make of a test whose body ended without failing, after
        :meth:`verify`: ``("inconclusive", reason)`` (a failed timing value under host
        overload, :mod:`e2e.judge.pressure`: skip, counted apart; first, as a failure would be),
        ``("undocumented", reason)`` (skip), ``("bug-fixed", reason)`` (a known
        bug's correct value was measured: skip, counted apart), ``("skipped", reason)`` (an
        environment limit, skip), ``("flake", reason)`` (xfail), ``("bug-present", reason)``
        (a pass marked "known bug present", also when the value is :data:`UNVERIFIED`), or ``None``
        (a pass). The reason lists every such value with its measured value and why (a known bug:
        buggy and correct value, issue). Unverified values are listed apart (:meth:`carried_forward`)."""
        for row in SETTLING:  # the table's precedence: the first verdict found settles
            reason = self._settles(row)
            if reason is not None:
                return row.name, reason
        return None

    def _settles(self, row: ValueVerdict) -> str | None:
        """The reason a test ends with for its values with ``row``'s verdict, or None when it has none
        (a known bug present also counts an :data:`UNVERIFIED` value that would have been one)."""
        if row.name == UNDOCUMENTED:
            if not self.undocumented:
                return None
            items = "; ".join(f"{m.case} {m.name} = {measured(m)} ({m.why})" for m in self.undocumented)
            return f"{row.reason} {len(self.undocumented)} value(s) with nothing documented for this cluster: {items}"
        found = [v for v in self.verdicts if row.name == v.measurement.verdict
                 or (row.name == BUG_PRESENT and v.measurement.details.get("judged") == BUG_PRESENT)]
        if not found:
            return None
        if row.name == INCONCLUSIVE:
            items = "; ".join(f"{v.measurement.case} {v.measurement.name} = {measured(v.measurement)} "
                              f"(expected {v.expectation.describe()}; {describe(v.measurement.details['host'])})" for v in found)
            return f"{row.reason}: {len(found)} timing value(s) failed while the host's CPU was starved: {items}"
        if row.name in KNOWN_BUG_VERDICTS:
            return f"{row.reason} " + "; ".join(_known_bug_item(v) for v in found)
        # set aside (ENVIRONMENT, TOLERATED_RACE): the reason each was set aside with
        return f"{row.reason} " + "; ".join(f"{m.case} {m.name} = {measured(m)}: {m.details.get('reason', '')}"
                                            for m in (v.measurement for v in found))


def _known_bug_details(exp: Expectation, kubernetes: str) -> dict:
    """What ``details.known_bug`` of a known bug's measurement on a cluster of ``kubernetes`` holds:
    the issue, the buggy and correct values, the mechanism, the bug's state expected on this patch
    (``expected``: present, fixed or unknown), the fix that removes it from this patch (``fix``)
    and the patch range that has it (``range``); a race's text under ``race``."""
    kb, correct = cast(KnownBug, exp.known_bug), exp.correct()
    out = {"issue": kb.issue, "buggy": exp.describe(), "correct": correct.describe(), "mechanism": kb.mechanism,
           "expected": kb.expected_on(kubernetes), "fix": kb.remedy(kubernetes), "range": kb.patch_range()}
    return {**out, "race": kb.race} if kb.race else out


def known_bug_note(known_bug: dict, mechanism: bool = False) -> str:
    """``details.known_bug`` of a measurement as the reports name it: ``"kubernetes/kubernetes#134338
    (open); correct: 6 s within [5.5, 9.5] s; no fix is known"`` (the fix as the judge wrote it; a
    value judged before fixes were recorded has none), with ``; mechanism: …`` when ``mechanism``.
    ``KeyError`` for a dict that is no ``details.known_bug``."""
    note = f"{known_bug['issue']}; correct: {known_bug['correct']}" + (f"; {known_bug['fix']}" if known_bug.get("fix") else "")
    return f"{note}; mechanism: {known_bug['mechanism']}" if mechanism else note


def _known_bug_item(v: Verdict) -> str:
    """``KB-1 pod_gone_after_delete_s = 21 s (buggy: …; correct: …; kubernetes/kubernetes#…; no fix is
    known)`` — the fix that would remove it from the cluster's patch last; a race's value says so:
    ``(a race, this run buggy: …; correct: …; …)``."""
    m, e = v.measurement, v.expectation
    kb = cast(KnownBug, e.known_bug)
    return (f"{m.case} {m.name} = {measured(m)} ({'a race, this run ' if kb.race else ''}buggy: {e.describe()}; "
            f"correct: {e.correct().describe()}; {kb.issue}; {kb.remedy(m.kubernetes)})")
