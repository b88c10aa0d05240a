"""One judged value as ``measurements.json`` holds it: :class:`Measurement`, written by the judge
(:mod:`e2e.judge.measurements`) and read back by the reports (standard library only)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import MISSING, asdict, dataclass, field, fields
from typing import Any

from .verdicts import BUG_PRESENT, BUG_PRESENT_DESPITE_FIX, RACE_ABSENT


class BadMeasurement(ValueError):
    """An entry of ``measurements.json`` that is no measurement: a key missing, a key unknown, or
    a field of the wrong type; the message names which."""


@dataclass
class Measurement:
    """One judged value. ``value`` is a number in ``unit`` or a string; ``verdict`` one of the value
    verdicts of :mod:`e2e.base.verdicts` (``pass``, ``fail``, ``undocumented``, ``inconclusive``,
    ``bug-present``, ``bug-fixed``, ``fixed-as-expected``, ``bug-present-despite-fix``,
    ``unverified-carried-forward``, ``skipped``, ``flake``: what
    each means and how its test ends is that table's); ``details.reason`` the reason of a value set
    aside (:meth:`e2e.judge.measurements.Judge.set_aside`) or carried forward. ``band`` is ``[low,
    high]`` (``high`` ``None`` for an open end). A known upstream bug's value has the issue, correct
    value and mechanism in ``details.known_bug``; a race's value ``details.race.outcome``
    (``"happened"`` / ``"did not happen"``); ``details.known_bug`` also holds the state the
    cluster's patch is expected to be in (``expected``), the fix that would remove the bug from it
    (``fix``) and the patch range that has it (``range``; :func:`still_has`); with a host sampler
    every value has the host's CPU pressure of its window in ``details.host`` (:mod:`e2e.judge.pressure`); a rerun's value its
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


def still_has(measurements: Iterable[Mapping]) -> list[str]:
    """The known bugs each run's cluster patch still has, one line per Kubernetes version and
    upstream issue, in the order first judged, as the summary and the upgrade report list them:
    ``"v1.36.3 still has kubernetes/kubernetes#138760 (R21; …) — RS-5 running_after_resize: the fix
    is cherry-pick kubernetes/kubernetes#141004 to release-1.36 (merged), not in 1.36.3: released
    later or not yet (unknown) (on master: …)"``. ``measurements`` are ``measurements.json``
    entries (dicts). A bug counts when a value of it was judged present (``bug-present``, also
    carried forward, or ``bug-present-despite-fix``: then ``"although its fix should be in"``), or
    is a race that did not happen this run on a patch no fix is known to reach (``"(a race, not
    seen this run)"``). A value judged before fixes were recorded names none."""
    found: dict[tuple[str, str], dict] = {}
    for m in measurements:
        details = m.get("details") or {}
        kb = details.get("known_bug")
        if not isinstance(kb, Mapping):
            continue
        race = (details.get("race") or {}).get("outcome") == RACE_ABSENT and kb.get("expected") != "fixed"
        present = m["verdict"] in (BUG_PRESENT, BUG_PRESENT_DESPITE_FIX) or details.get("judged") == BUG_PRESENT
        if not (present or race):
            continue
        bug = found.setdefault((m["kubernetes"], kb["issue"]), {"values": [], "fix": kb.get("fix", ""),
                                                               "despite": False, "seen": False})
        name = f"{m['case']} {m['name']}"
        bug["values"] += [name] if name not in bug["values"] else []
        bug["despite"] |= m["verdict"] == BUG_PRESENT_DESPITE_FIX
        bug["seen"] |= present
    lines = []
    for (kubernetes, issue), bug in found.items():
        text = f"{kubernetes} still has {issue} — {', '.join(bug['values'])}"
        text += "" if bug["seen"] else " (a race, not seen this run)"
        text += " although its fix should be in" if bug["despite"] else ""
        lines.append(text + (f": {bug['fix']}" if bug["fix"] else ""))
    return lines
