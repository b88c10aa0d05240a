"""ES: an ephemeral-storage eviction's delays, from the writer's own ``crossed`` stamp and the
recorder's view of the eviction (:func:`e2e.evidence.ephemeral.eviction`: receive times)."""

from __future__ import annotations

from e2e.evidence.ephemeral import Eviction
from e2e.measure.values import Value


def eviction_delays(case: str, ev: Eviction, crossed: float, details: dict | None = None) -> list[Value]:
    """``<case> crossing_to_evicted_event_s`` (the ``Evicted`` event's receive time − the writer's
    ``crossed`` stamp, epoch s), ``crossing_to_failed_s`` and ``evicted_event_to_failed_s`` (to the
    first terminal status received; None while none was seen), s to the ms. Source: CASES.md ES-1
    (the kubelet's eviction manager: its monitoring period and the stats' age)."""
    terminal = ev.terminal_received_at
    return [
        Value(case, "crossing_to_evicted_event_s", round(ev.event_received_at - crossed, 3), at=ev.event_received_at,
              details=details or {}),
        Value(case, "crossing_to_failed_s", None if terminal is None else round(terminal - crossed, 3), at=terminal,
              details=details or {}),
        Value(case, "evicted_event_to_failed_s", None if terminal is None else round(terminal - ev.event_received_at, 3),
              at=terminal),
    ]
