"""API timestamps compared with host time, with their 1 s resolution.

The API writes most times as ``metav1.Time``: RFC 3339 in whole seconds (``startedAt``,
``finishedAt``, ``lastTransitionTime``, ``creationTimestamp``, ``deletionTimestamp``, a taint's
``timeAdded``, a Job's ``startTime``: k8s.io/apimachinery pkg/apis/meta/v1/time.go
``Time.MarshalJSON`` drops the fraction). ``metav1.MicroTime`` keeps microseconds (a Lease's
``renewTime``, an Event's ``eventTime``: ``2026-11-30T15:50:01.123456Z``). A host time —
``time.time()``, a recorded change's ``received_at``, what :meth:`e2e.run.scenario.Scenario.delete_pod`
returns, a fault window's ``injected_at`` — has µs resolution, and kind's nodes share the host's
clock.

So a whole-second API time ``T`` says only that the moment was in ``[T, T + 1)`` s: read as one
number (:func:`e2e.record.timeline.parse_time`) an event 0.4 s *after* a host time ``h`` in the
same second reads as before it (``T < h``). :func:`api_time` keeps both ends, and
:class:`ApiTime` compares them with a host time correctly:

- :meth:`ApiTime.seconds_after` — the interval of ``moment − h`` (a duration from a host time);
- :meth:`ApiTime.surely_before` / :meth:`ApiTime.surely_after` — an order that holds whatever
  the fraction was; neither: it cannot be told from the API.

A judged duration from a host time to an API time is ``T − h`` (``seconds_after(h)[0]``, the
low end), and its documented band starts one second lower ("−1 s timestamp truncation",
:data:`TIME_RESOLUTION_S`, which :data:`e2e.documented.kubelet.API_TIMESTAMP_RESOLUTION_S` names).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

# metav1.Time: RFC 3339 in whole seconds (apimachinery pkg/apis/meta/v1/time.go Time.MarshalJSON)
TIME_RESOLUTION_S = 1.0
# metav1.MicroTime: RFC 3339 with six fraction digits
MICRO_TIME_RESOLUTION_S = 1e-6


@dataclass(frozen=True)
class ApiTime:
    """The moment an API timestamp stands for: at or after ``earliest`` and before ``latest``
    (epoch s; ``latest − earliest`` is the timestamp's resolution: 1 s for a ``metav1.Time``,
    1 µs for a ``MicroTime``)."""

    earliest: float
    latest: float

    def seconds_after(self, host_s: float) -> tuple[float, float]:
        """``(low, high)`` in seconds: the moment minus the host time ``host_s`` (epoch s) lies in
        ``[low, high)``; negative values: the moment came first. Returns ``low`` = ``T − h``, what a
        band with "−1 s timestamp truncation" judges."""
        return self.earliest - host_s, self.latest - host_s

    def surely_before(self, host_s: float) -> bool:
        """True when the moment was before host time ``host_s`` (epoch s) whatever the dropped
        fraction was (``latest ≤ host_s``)."""
        return self.latest <= host_s

    def surely_after(self, host_s: float) -> bool:
        """True when the moment was at or after host time ``host_s`` (epoch s) whatever the dropped
        fraction was (``earliest ≥ host_s``)."""
        return self.earliest >= host_s


def api_time(value: str | None) -> ApiTime | None:
    """The moment the RFC 3339 API timestamp ``value`` stands for (``"2026-11-29T07:45:17Z"``: from 07:45:17
    up to 07:45:18; a ``MicroTime`` such as ``"…:17.123456Z"`` to the µs), or None for no
    timestamp (``None`` or ``""``). Raises ``ValueError`` for text that is no RFC 3339 time."""
    if not value:
        return None
    at = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    resolution = MICRO_TIME_RESOLUTION_S if "." in value else TIME_RESOLUTION_S
    return ApiTime(at.timestamp(), at.timestamp() + resolution)
