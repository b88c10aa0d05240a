"""CL-1 (and OM-1's restarts): the back-off gaps between a container's runs, from the recorder's
pod changes (CASES.md CL-1: ``gap[i]`` = start of run i+2 − end of run i+1, API times, s)."""

from __future__ import annotations

from collections.abc import Iterable

from e2e.measure.values import Value
from e2e.record.recorder import Change
from e2e.record.timeline import attempts, restart_gaps


def restart_gap_values(case: str, changes: Iterable[Change], pod: str, container: str, count: int) -> list[Value]:
    """``<case> restart_gap[i]`` for the first ``count`` gaps of ``container`` in ``pod`` that the
    recording shows (fewer when fewer runs ended: the caller requires how many it waited for), each
    ``around`` the next run's start (epoch s). Source: CASES.md CL-1 (gaps 0, 10, 20, 40 s)."""
    runs = attempts(changes, pod, container)
    gaps = restart_gaps(runs)
    return [Value(case, f"restart_gap[{i}]", gap, at=runs[i + 1].started_at) for i, gap in enumerate(gaps[:count])]
