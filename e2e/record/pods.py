"""The shared pod vocabulary: one name per fact of a pod (its API JSON) or of its recording, and
named wait conditions (:class:`Until`) for :meth:`e2e.run.scenario.Scenario.wait`.

Reading a pod (``pod``: the API's JSON shape, as the recorder keeps it; ``None`` reads as a pod
with no status):

- :func:`container_statuses` / :func:`container_status` — init, main and ephemeral containers;
- :func:`state` — ``running`` / ``waiting`` / ``terminated`` of a container;
- :func:`phase`, :func:`condition`, :func:`last_termination` (``lastState.terminated``).

Reading a recording (``changes``: :meth:`e2e.record.recorder.Recorder.changes` of one pod, oldest first):

- :func:`first_terminated` / :func:`last_terminated` — a container's ``state.terminated``;
  :func:`terminated_runs` — every ended run; :func:`ever_started`;
- :func:`deletion_seen` (the first change with a ``deletionTimestamp``), :func:`gone` (DELETED);
  :func:`deletion_requested_at` (when the delete was asked for);
- :func:`events_of` — the Event changes of a reason about an object.

Waiting (:class:`Until`: what it waits for, and a check of the scenario that returns the fact or
a falsy value): :func:`pod_phase`, :func:`pod_ready`, :func:`pod_gone`, :func:`container_running`,
:func:`container_terminated`, :func:`until` for anything else; ``endpoint_ready`` lives with the
EndpointSlice evidence (:func:`e2e.evidence.endpoints.endpoint_ready`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Generic, Iterable, Protocol, Sequence, TypeVar, cast

from .recorder import Change, Recorder
from .timeline import parse_time

T = TypeVar("T")


# -- a pod --------------------------------------------------------------------------------------


def container_statuses(pod: dict | None) -> dict[str, dict]:
    """Returns container name → its status, for init, main and ephemeral containers of ``pod``."""
    status = (pod or {}).get("status") or {}
    found = {}
    for key in ("initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses"):
        for cs in status.get(key) or []:
            found[cs["name"]] = cs
    return found


def container_status(pod: dict | None, container: str) -> dict:
    """The status of ``container`` in ``pod`` ({} when the pod or the container has none yet)."""
    return container_statuses(pod).get(container) or {}


def state(pod: dict | None, container: str) -> str | None:
    """``"running"``, ``"waiting"`` or ``"terminated"``: the state of ``container``, or None."""
    return next(iter(container_status(pod, container).get("state") or {}), None)


def phase(pod: dict | None) -> str | None:
    """``status.phase`` of ``pod`` (None before the recorder has seen it)."""
    return ((pod or {}).get("status") or {}).get("phase")


def condition(pod: dict | None, type_: str) -> dict | None:
    """The ``status.conditions`` entry of ``pod`` (or any object's API JSON) with type ``type_``, or None."""
    return next((c for c in ((pod or {}).get("status") or {}).get("conditions") or [] if c.get("type") == type_), None)


def last_termination(pod: dict | None, container: str) -> dict:
    """``lastState.terminated`` of ``container`` (the previous run's end), or {}."""
    return (container_status(pod, container).get("lastState") or {}).get("terminated") or {}


# -- a recording of a pod -------------------------------------------------------------------------


def first_terminated(changes: Iterable[Change], container: str) -> tuple[Change, dict] | None:
    """The first change in which ``container`` is terminated, with its ``state.terminated``."""
    for ch in changes:
        term = (container_status(ch.obj, container).get("state") or {}).get("terminated")
        if term:
            return ch, term
    return None


def terminated_runs(changes: Iterable[Change], container: str) -> list[tuple[str, dict, list[str]]]:
    """Every ended run of ``container`` as ``(containerID, terminated state, reasons seen in order)``,
    in start order, from ``state`` and ``lastState``. The reasons show whether the API first said
    something else (``Error`` before ``OOMKilled``: the runtime race upstream tolerates)."""
    runs: dict[str, dict] = {}
    seen: dict[str, list[str]] = {}
    for ch in changes:
        cs = container_status(ch.obj, container)
        for holder, current in ((cs.get("lastState") or {}, False), (cs.get("state") or {}, True)):
            term = holder.get("terminated")
            cid = term and (term.get("containerID") or (cs.get("containerID") if current else None))
            if not cid or not term:  # cid is set only with term
                continue
            runs[cid] = term
            reasons = seen.setdefault(cid, [])
            if not reasons or reasons[-1] != (term.get("reason") or "(none)"):
                reasons.append(term.get("reason") or "(none)")
    return [(c, runs[c], seen[c]) for c in sorted(runs, key=lambda c: (runs[c].get("startedAt") or "", c))]


def ever_started(changes: Iterable[Change], container: str) -> bool:
    """True when any recorded status shows ``container`` past waiting (running, terminated) or started."""
    return any(state(ch.obj, container) not in (None, "waiting") or container_status(ch.obj, container).get("started")
               for ch in changes if container_status(ch.obj, container))


def last_terminated(changes: Sequence[Change], container: str) -> dict:
    """The newest ``state.terminated`` of ``container`` in ``changes`` (also in the DELETED
    object), or {}."""
    found = first_terminated(reversed(changes), container)
    return found[1] if found else {}


def deletion_seen(changes: Iterable[Change]) -> Change | None:
    """The first change that carries a ``deletionTimestamp``."""
    return next((ch for ch in changes if (ch.obj.get("metadata") or {}).get("deletionTimestamp")), None)


def deletion_requested_at(changes: Iterable[Change]) -> float | None:
    """Returns when the deletion of a pod was requested, from its recording ``changes`` (API time,
    epoch s, 1 s resolution): ``deletionTimestamp − deletionGracePeriodSeconds`` of the first change that
    has one (:func:`deletion_seen`); None before any."""
    seen = deletion_seen(changes)
    if seen is None:
        return None
    meta = seen.obj["metadata"]
    return cast(float, parse_time(meta["deletionTimestamp"])) - int(meta.get("deletionGracePeriodSeconds") or 0)


def gone(changes: Sequence[Change]) -> bool:
    """True once the newest change is the object's DELETED."""
    return bool(changes) and changes[-1].type == "DELETED"


def events_of(changes: Iterable[Change], reason: str, involved: str | None = None) -> list[Change]:
    """The Event changes with ``reason`` (about the object named ``involved``, or any), oldest first."""
    return [ch for ch in changes if ch.obj.get("reason") == reason
            and (involved is None or (ch.obj.get("involvedObject") or {}).get("name") == involved)]


# -- named wait conditions -------------------------------------------------------------------------


class Watched(Protocol):
    """What a wait condition is checked on: the test's :class:`e2e.run.scenario.Scenario`, named
    here by what the conditions of this module read (the record layer does not import the run
    layer)."""

    recorder: Recorder

    def pod(self, name: str) -> dict | None:
        """The newest recorded state of pod ``name`` (:meth:`e2e.run.scenario.Scenario.pod`)."""
        ...


@dataclass(frozen=True)
class Until(Generic[T]):
    """A named wait condition: ``what`` it waits for (the progress line, the timeout's message)
    and ``check(scenario)``, which returns the awaited fact, or a falsy value while it is not there."""

    what: str
    check: Callable[[Watched], T | None]


def until(what: str, check: Callable[[Any], T | None]) -> Until[T]:
    """A condition of its own: ``what`` it waits for, in words, and ``check``
    (``until("3 runs", lambda sc: len(sc.attempts("p", "app")) >= 3)``; ``check`` gets the test's
    scenario and may read anything of it)."""
    return Until(what, check)


def pod_phase(pod: str, *phases: str) -> Until[str]:
    """``pod`` in one of ``phases`` (``Running``, ``Succeeded``, ``Failed``...); gives the phase."""
    return Until(f"{pod} {' or '.join(phases)}", lambda sc: phase(sc.pod(pod)) if phase(sc.pod(pod)) in phases else None)


def pod_ready(pod: str) -> Until[dict]:
    """``pod``'s Ready condition True; gives the condition."""
    def check(sc: Watched) -> dict | None:
        ready = condition(sc.pod(pod), "Ready")
        return ready if ready and ready.get("status") == "True" else None
    return Until(f"{pod} Ready", check)


def pod_gone(pod: str) -> Until[bool]:
    """``pod`` deleted (the recorder saw its DELETED)."""
    return Until(f"{pod} gone", lambda sc: gone(sc.recorder.changes("Pod", pod)))


def container_running(pod: str, container: str = "app") -> Until[bool]:
    """``container`` of ``pod`` running."""
    return Until(f"{pod}/{container} running", lambda sc: state(sc.pod(pod), container) == "running")


def container_terminated(pod: str, container: str = "app") -> Until[tuple[Change, dict]]:
    """``container`` of ``pod`` terminated; gives the first change that shows it and its
    ``state.terminated``."""
    return Until(f"{pod}/{container} terminated", lambda sc: first_terminated(sc.recorder.changes("Pod", pod), container))
