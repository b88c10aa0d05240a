"""The recorder's table with the container-written stamps (:mod:`e2e.evidence.stamps`) and the
scenario's marks put in: one timeline of both clocks, for a failure's context and the artifacts."""

from __future__ import annotations

from typing import Callable, Sequence

from ..record.recorder import Change
from ..record.timeline import Row, format_table, mark_rows, rows
from .stamps import Stamp


def merged_rows(
    changes: Sequence[Change], stamps: Sequence[Stamp], t0: float, marks: Sequence[tuple[float, str]] = ()
) -> list[Row]:
    """The recorder's table (:func:`e2e.record.timeline.rows`) of ``changes`` with the container-written
    ``stamps`` and the scenario's ``marks`` (``(epoch s, label)``, :attr:`e2e.run.scenario.Scenario.marks`)
    put in, all sorted by time (``t`` seconds after ``t0``, epoch s)."""
    out = list(rows(changes, t0))
    for s in stamps:
        rest = " ".join(f"{k}={v}" for k, v in s.fields if k != "container")
        out.append(Row(s.at - t0, f"  stamp {s.container}".rstrip(), s.event, f"(container clock) {rest}".strip()))
    out.extend(mark_rows(marks, t0))
    return sorted(out, key=lambda r: r.t)


def merged_table(
    changes: Sequence[Change],
    stamps: Sequence[Stamp],
    t0: float,
    marks: Sequence[tuple[float, str]] = (),
    keep: Callable[[Stamp], bool] | None = None,
) -> str:
    """The text table of :func:`merged_rows` of ``changes``, ``stamps`` and ``marks`` (fixed width,
    millisecond times after ``t0``, epoch s); ``keep`` filters stamps (e.g. leave out periodic ticks)."""
    picked = [s for s in stamps if keep is None or keep(s)]
    return format_table(merged_rows(changes, picked, t0, marks))
