"""One judged value as ``measurements.json`` holds it: :class:`Measurement`, written by the judge
(:mod:`e2e.judge.measurements`) and read back by the reports (standard library only)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, asdict, dataclass, field, fields
from typing import Any


class BadMeasurement(ValueError):
    """An entry of ``measurements.json`` that is no measurement: a key missing, a key unknown, or
    a field of the wrong type; the message names which."""


@dataclass
class Measurement:
    """One judged value. ``value`` is a number in ``unit`` or a string; ``verdict`` one of the value
    verdicts of :mod:`e2e.base.verdicts` (``pass``, ``fail``, ``undocumented``, ``inconclusive``,
    ``bug-present``, ``bug-fixed``, ``unverified-carried-forward``, ``skipped``, ``flake``: what
    each means and how its test ends is that table's); ``details.reason`` the reason of a value set
    aside (:meth:`e2e.judge.measurements.Judge.set_aside`) or carried forward. ``band`` is ``[low,
    high]`` (``high`` ``None`` for an open end). A known upstream bug's value has the issue, correct
    value and mechanism in ``details.known_bug``; a race's value ``details.race.outcome``
    (``"happened"`` / ``"did not happen"``); with a host sampler every value has the host's CPU
    pressure of its window in ``details.host`` (:mod:`e2e.judge.pressure`); a rerun's value its
    attempt in ``details.attempt``. ``verified_in`` the releases whose source was read for the
    expectation (``["1.37.2", …]``; ``[]`` when undocumented). ``cgroup`` the node's cgroup version
    the value was judged for (``None``: unknown); ``where`` the ``file:line`` of the test code that
    judged it; ``template`` the registry's documented value before ``{placeholders}`` were filled
    (e.g. a message naming the pod): what stays the same from run to run; ``fact`` the cluster
    fact the value reads where it holds on the suite's own clusters only (``Expectation.fact``;
    ``""``: none)."""

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
    template: float | str | bool | None = None
    cgroup: int | None = None
    where: str = ""
    verified_in: list[str] = field(default_factory=list)
    fact: str = ""

    def to_json(self) -> dict[str, Any]:
        """The entry of ``measurements.json``: every field by its name."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: object) -> Measurement:
        """The measurement of an entry of ``measurements.json``; a field added after the entry was
        written takes its default. :class:`BadMeasurement` naming the problem for an entry that is
        not a JSON object, lacks a field without default, has a field this record does not know
        (nothing is dropped silently) or a text field that is no string."""
        if not isinstance(data, Mapping):
            raise BadMeasurement(f"a measurement is a JSON object, not {type(data).__name__}: {data!r:.80}")
        known = {f.name: f for f in fields(cls)}
        missing = [n for n, f in known.items() if n not in data and f.default is MISSING and f.default_factory is MISSING]
        unknown = sorted(set(data) - set(known))
        where = f"{data.get('case', '?')} {data.get('name', '?')} of {data.get('test', '?')}"
        if missing or unknown:
            said = "; ".join(part for part in (f"missing {', '.join(missing)}" if missing else "",
                                               f"unknown {', '.join(unknown)}" if unknown else "") if part)
            raise BadMeasurement(f"measurement {where}: {said}")
        wrong = [n for n in ("case", "name", "verdict", "test", "run_id") if not isinstance(data[n], str)]
        if wrong or not isinstance(data.get("details", {}), Mapping):
            raise BadMeasurement(f"measurement {where}: not a string: {', '.join(wrong)}" if wrong
                                 else f"measurement {where}: details is not a JSON object")
        return cls(**{**data, "details": dict(data.get("details") or {})})
