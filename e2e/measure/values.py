"""A measured value before the judge sees it: what every function of :mod:`e2e.measure` returns.

A scenario hands the values to :meth:`e2e.run.scenario.Scenario.expect` (``expect_all(sc.expect, …)``);
tests/test_mutations.py hands the same values, measured from mutated recordings, to a
:class:`~e2e.judge.measurements.Judge` (``expect_all(judge.expect, …)``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping


@dataclass(frozen=True)
class Value:
    """``value`` of ``case``/``name`` (a number in the documented unit, a string or a bool), with
    ``details``: the evidence it was read from (into ``measurements.json``), ``params`` that fill
    the documented string's ``{placeholders}`` (:meth:`e2e.judge.expectations.Expectation.fill`),
    and ``at`` (epoch s, or None): the moment it was measured at, which a scenario shows the timeline
    around when the value fails."""

    case: str
    name: str
    value: float | int | str | None
    details: Mapping[str, object] = field(default_factory=dict)
    params: Mapping[str, object] = field(default_factory=dict)
    at: float | None = None


def expect_all(expect: Callable[..., bool], values: Iterable[Value], **details: object) -> None:
    """Hand each of ``values`` to ``expect`` (``Scenario.expect``: ``(case, name, value, around=…,
    details=…, **params)``), ``details`` added to each value's own; ``around`` only for a value with
    an ``at``."""
    for v in values:
        around = {} if v.at is None else {"around": v.at}
        expect(v.case, v.name, v.value, details={**v.details, **details} or None, **around, **v.params)
