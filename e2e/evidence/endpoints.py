"""Endpoint conditions of pods over time, from the recorder's EndpointSlice changes.

An EndpointSlice lists endpoints with ``conditions`` ``ready``, ``serving`` and
``terminating`` and a ``targetRef`` naming the pod. The EndpointSlice controller writes them
(``podToEndpoint`` in k8s.io/endpointslice utils.go): ``serving`` = the pod's readiness,
``terminating`` = the pod has a ``deletionTimestamp``, ``ready`` = serving and not
terminating (CASES.md PS-3). A pod's endpoint that disappears from every slice of the
namespace is *removed* (``present=False``).

Times are the recorder's receive times (epoch s, client clock).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from ..record.pods import Until
from ..record.recorder import Change


@dataclass(frozen=True)
class EndpointState:
    """The endpoint of ``pod`` as of ``received_at`` (epoch s): its conditions ``ready``,
    ``serving``, ``terminating`` (None when the slice leaves one out); ``present`` False once it
    left every slice."""

    received_at: float
    pod: str
    ready: bool | None
    serving: bool | None
    terminating: bool | None
    present: bool = True

    @property
    def label(self) -> str:
        if not self.present:
            return "removed"
        if self.ready:
            return "ready"
        if self.terminating:
            return "terminating, serving" if self.serving else "terminating, not serving"
        return "not ready"


def _conditions(slice_obj: dict) -> dict[str, tuple[bool | None, bool | None, bool | None]]:
    out = {}
    for ep in slice_obj.get("endpoints") or []:
        ref = (ep.get("targetRef") or {}).get("name")
        if not ref:
            continue
        c = ep.get("conditions") or {}
        out[ref] = (c.get("ready"), c.get("serving"), c.get("terminating"))
    return out


def endpoint_states(changes: Iterable[Change]) -> list[EndpointState]:
    """Every change of any pod's endpoint conditions in ``changes`` (the EndpointSlice ones are
    read), oldest first (see module doc)."""
    slices: dict[str, dict[str, tuple]] = {}
    current: dict[str, tuple] = {}
    out: list[EndpointState] = []
    for ch in changes:
        if ch.kind != "EndpointSlice":
            continue
        if ch.type == "DELETED":
            slices.pop(ch.name, None)
        else:
            slices[ch.name] = _conditions(ch.obj)
        merged: dict[str, tuple] = {}
        for by_pod in slices.values():
            merged.update(by_pod)
        for pod, conds in merged.items():
            if current.get(pod) != conds:
                current[pod] = conds
                out.append(EndpointState(ch.received_at, pod, *conds))
        for pod in [p for p in current if p not in merged]:
            del current[pod]
            out.append(EndpointState(ch.received_at, pod, None, None, None, present=False))
    return out


def first(states: Sequence[EndpointState], pod: str, after: float | None = None, **conds: bool) -> EndpointState | None:
    """The first state of ``pod`` in ``states`` (received at or after ``after``, epoch s) whose conditions match
    ``conds`` (e.g. ``ready=False``; ``present=False`` for its removal)."""
    for s in states:
        if s.pod != pod or (after is not None and s.received_at < after):
            continue
        if all(getattr(s, k) == v for k, v in conds.items()):
            return s
    return None


def pods(states: Sequence[EndpointState]) -> list[str]:
    """The pods of ``states`` in the order their endpoint first appeared."""
    seen: list[str] = []
    for s in states:
        if s.pod not in seen:
            seen.append(s.pod)
    return seen


def ready_pods(states: Sequence[EndpointState]) -> set[str]:
    """The pods whose latest endpoint state in ``states`` is ready."""
    latest: dict[str, EndpointState] = {}
    for s in states:
        latest[s.pod] = s
    return {p for p, s in latest.items() if s.present and s.ready}


def endpoint_ready(pod: str, ready: bool = True, after: float | None = None) -> Until[EndpointState]:
    """A named wait (:meth:`e2e.run.scenario.Scenario.wait`): the first recorded endpoint state of
    ``pod`` with ``ready`` (at or after ``after``, epoch s); gives that state. The test records
    EndpointSlices (``@pytest.mark.record(..., "EndpointSlice")``)."""
    return Until(f"endpoint of {pod} ready={str(ready).lower()}",
                 lambda sc: first(endpoint_states(sc.recorder.changes("EndpointSlice")), pod, after=after, ready=ready))


def ready_count(count: int) -> Until[set[str]]:
    """A named wait: exactly ``count`` pods with a ready endpoint; gives their names."""
    def check(sc) -> set[str] | None:
        ready = ready_pods(endpoint_states(sc.recorder.changes("EndpointSlice")))
        return ready if len(ready) == count else None
    return Until(f"{count} ready endpoints", check)
