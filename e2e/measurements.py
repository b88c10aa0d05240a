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
import json
import os
import tempfile
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Callable

from filelock import FileLock

from .expectations import REGISTRY, Expectation, NotDocumented, Registry


@dataclass
class Measurement:
    """One judged value. ``value`` is a number in ``unit`` or a string; ``verdict`` is
    ``pass``, ``fail``, ``undocumented`` (nothing documented for this version: kept, not
    judged), or set aside with ``details.reason`` (:meth:`Judge.set_aside`): ``skipped`` (the
    environment prevents the documented behaviour, e.g. clamped OOM scores, OM-5) or ``flake``
    (a race upstream tolerates, e.g. OOMKilled missing on a 137 exit, OM-1)."""

    case: str
    name: str
    value: float | int | str | None
    unit: str
    documented: float | str | bool | None
    band: list[float] | None
    why: str
    source: str
    versions: str
    verdict: str
    test: str
    run_id: str
    kubernetes: str
    measured_at: str
    details: dict = field(default_factory=dict)
    # the registry's documented value before {placeholders} were filled (e.g. a message
    # naming the pod): what stays the same from run to run
    template: float | str | bool | None = None


class MeasurementLog:
    """Appends measurements to one JSON file, safe across processes (see module doc)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = FileLock(str(self.path) + ".lock")

    def append(self, m: Measurement) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock:
            data = self.read()
            data["measurements"].append(asdict(m))
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".measurements.")
            with os.fdopen(fd, "w") as f:
                json.dump(data, f, indent=1, default=str)
            os.chmod(tmp, 0o644)  # mkstemp makes it private; a report is for everyone
            os.replace(tmp, self.path)

    def read(self) -> dict:
        if not self.path.exists():
            return {"measurements": []}
        with open(self.path) as f:
            return json.load(f)


class ExpectationFailed(AssertionError):
    """Raised by :meth:`Judge.verify`; its message explains every failed value."""


@dataclass
class Verdict:
    measurement: Measurement
    expectation: Expectation
    context: str

    def explain(self) -> str:
        m, e = self.measurement, self.expectation
        unit = f" {m.unit}" if m.unit and isinstance(m.value, (int, float)) else ""
        value = f"{m.value:g}" if isinstance(m.value, float) else repr(m.value) if isinstance(m.value, str) else m.value
        lines = [
            f"{m.case} {m.name}: measured {value}{unit}, expected {e.describe()}",
            f"  documented for Kubernetes {e.versions()} (cluster: {m.kubernetes})",
        ]
        if e.why:
            lines.append(f"  band: {e.why}")
        lines.append(f"  source: {e.source}")
        if self.context:
            lines.append("  timeline:")
            lines.extend("    " + line for line in self.context.splitlines())
        return "\n".join(lines)


class Judge:
    """Judges one test's measurements; see module doc.

    ``minor``/``cgroup`` select version-keyed expectations; ``kubernetes`` is the full
    version string written next to each value.
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
    ):
        self.log, self.test, self.run_id = log, test, run_id
        self.kubernetes, self.minor, self.cgroup = kubernetes, minor, cgroup
        self.registry = registry
        self.context = context
        self.verdicts: list[Verdict] = []
        self.undocumented: list[str] = []

    def expectation(self, case: str, name: str, **params: object) -> Expectation:
        """The registry entry for this cluster; ``params`` fill ``{placeholders}`` of a
        documented string (e.g. the pod name in a message). Raises ``NotDocumented``."""
        exp = self.registry.lookup(case, name, self.minor, self.cgroup)
        if params and isinstance(exp.documented, str):
            exp = replace(exp, documented=exp.documented.format(**params))
        return exp

    def expect(
        self,
        case: str,
        name: str,
        value: float | int | str | None,
        context: str | None = None,
        details: dict | None = None,
        **params: object,
    ) -> bool:
        """Record ``value`` for ``case``/``name`` with its verdict; True when it holds.

        ``name`` may carry an index (``restart_gap[2]``); the registry is looked up with it
        as given. Where nothing is documented for this cluster's version the value is still
        written (verdict ``undocumented``) and counts as holding. ``context`` (text) goes into the failure message; by default the judge's
        timeline excerpt.
        """
        try:
            template = self.registry.lookup(case, name, self.minor, self.cgroup).documented
            exp = self.expectation(case, name, **params)
        except NotDocumented as e:
            self.undocumented.append(str(e))
            self.log.append(self._measurement(case, name, value, "", None, None, str(e), "", "", "undocumented", details))
            return True
        ok = exp.holds_for(value)
        m = self._measurement(
            case, name, value, exp.unit, exp.documented, [exp.band.low, exp.band.high] if exp.band else None,
            exp.why, exp.source, exp.versions(), "pass" if ok else "fail", details,
        )
        m.template = template
        self.log.append(m)
        if context is None and not ok and self.context is not None:
            context = self.context()
        self.verdicts.append(Verdict(m, exp, context or ""))
        return ok

    def _measurement(self, case, name, value, unit, documented, band, why, source, versions, verdict, details) -> Measurement:
        return Measurement(
            case=case, name=name, value=value, unit=unit, documented=documented, band=band, why=why,
            source=source, versions=versions, verdict=verdict, test=self.test, run_id=self.run_id,
            kubernetes=self.kubernetes,
            measured_at=dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds"),
            details=details or {},
        )

    SET_ASIDE = ("skipped", "flake")

    def set_aside(self, case: str, name: str, value: object, verdict: str, reason: str,
                  details: dict | None = None, **params: object) -> Measurement:
        """Write ``value`` next to its documented expectation with ``verdict`` ``skipped`` or
        ``flake`` and ``reason``: visible in measurements.json and the summary, never a failure
        and never a pass. ``NotDocumented`` propagates: only a documented value can be set aside."""
        if verdict not in self.SET_ASIDE:
            raise ValueError(f"verdict must be one of {self.SET_ASIDE}, not {verdict!r}")
        template = self.registry.lookup(case, name, self.minor, self.cgroup).documented
        exp = self.expectation(case, name, **params)
        m = self._measurement(
            case, name, value, exp.unit, exp.documented, [exp.band.low, exp.band.high] if exp.band else None,
            exp.why, exp.source, exp.versions(), verdict, {**(details or {}), "reason": reason},
        )
        m.template = template
        self.log.append(m)
        self.verdicts.append(Verdict(m, exp, reason))
        return m

    @property
    def failures(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.measurement.verdict == "fail"]

    def summary(self) -> str:
        """One line per judged value: verdict, case, name, measured, expected; then the
        values measured where nothing is documented for this version."""
        out = []
        for v in self.verdicts:
            m = v.measurement
            out.append(f"{m.verdict.upper():4}  {m.case:5} {m.name:32} measured {m.value!r} {m.unit}  expected {v.expectation.describe()}")
        out.extend(f"UNDOCUMENTED  {text}" for text in self.undocumented)
        if self.failures:
            out += ["", "failed values, explained:"] + [v.explain() for v in self.failures]
        return "\n".join(out)

    def verify(self) -> None:
        """Raise :class:`ExpectationFailed` explaining every failed value, if any."""
        failed = self.failures
        if failed:
            head = f"{len(failed)} of {len(self.verdicts)} measured values outside their documented expectation"
            raise ExpectationFailed(head + "\n" + "\n".join(v.explain() for v in failed))
