"""Judging the order of stamps (:mod:`e2e.evidence.stamps`) against a documented order: the
registry's string ``"app sigterm → app exit → ..."``, measured as the same keys in the order their
first stamps happened."""

from __future__ import annotations

from typing import Sequence

from ..judge.expectations import NotDocumented
from ..judge.measurements import Judge
from .stamps import Stamp, find, ms

ARROW = " → "


def measured_order(stamps: Sequence[Stamp], keys: Sequence[str]) -> str:
    """The order in which the first stamp of each of ``keys`` happened, as
    ``"app sigterm → app exit → ..."``; keys never stamped are listed at the end as
    ``"(missing: sidecar-1 exit)"``. Ties keep the order of ``keys``."""
    seen = []
    missing = []
    for i, key in enumerate(keys):
        s = find(stamps, key)
        if s is None:
            missing.append(key)
        else:
            seen.append((s.at, i, key))
    text = ARROW.join(key for _, _, key in sorted(seen))
    if missing:
        text += f" (missing: {', '.join(missing)})"
    return text


def expected_keys(judge: Judge, case: str, name: str, **params: object) -> list[str] | None:
    """The stamp keys of the documented order ``case``/``name`` (its documented string split at
    ``→``; ``params`` fill its ``{placeholders}``), or None when nothing is documented for this cluster's version."""
    try:
        documented = judge.expectation(case, name, **params).documented
    except NotDocumented:
        return None
    return [k.strip() for k in str(documented).split(ARROW.strip())]


def expect_order(
    judge: Judge,
    case: str,
    name: str,
    stamps: Sequence[Stamp],
    context: str | None = None,
    t_ref: float | None = None,
    **params: object,
) -> bool:
    """Judge the order of ``stamps`` against the documented order ``case``/``name``; returns True
    when it holds (as :meth:`e2e.judge.measurements.Judge.expect`).

    The expected order is the registry's documented string (``"app sigterm → app exit → ..."``,
    ``{placeholders}`` filled from ``params``); the measured value is :func:`measured_order` of
    the same keys, so a failure reads "measured <order>, expected <order>" with the case ID.
    Every key's time goes into the measurement's details, in ms after ``t_ref`` (epoch s; the
    first stamp when None). ``context`` (e.g. :func:`merged_table`) goes into a failure message.
    Where the order is not documented for the version, every stamp's order is recorded.
    """
    keys = expected_keys(judge, case, name, **params)
    if keys is None:
        keys = list(dict.fromkeys(s.key for s in sorted(stamps)))
    ref = t_ref if t_ref is not None else (min((s.at for s in stamps), default=0.0))
    details = {}
    for key in keys:
        s = find(stamps, key)
        details[key] = None if s is None else ms(s.at - ref)
    return judge.expect(case, name, measured_order(stamps, keys), context=context, details={"ms_after_ref": details}, **params)
