"""The shared node vocabulary: a node's Lease renewals, conditions and taints, read from their
recordings (``changes``: :meth:`e2e.record.recorder.Recorder.changes` of one object, oldest first —
``recorder.changes("Lease", node)`` or ``recorder.changes("Node", node)``; record them with
``@pytest.mark.record("Node", "Lease")``).

Times: ``received_at`` is the host's receive time of a change (epoch s, the recorder's clock);
``renewTime`` is the kubelet's (µs, the same host clock on kind); a condition's
``lastTransitionTime`` and a taint's ``timeAdded`` are API times truncated to the second
(:func:`e2e.record.apitime.api_seconds` compares them with host time).

- Lease: :func:`renewals`, :func:`last_renew_before`, :func:`lease_duration`;
- conditions: :func:`condition_changes` (each distinct state of one condition: :class:`Seen`),
  :func:`first_condition`, :func:`flips` (True → not True transitions);
- taints: :func:`taint_seen` (the first recorded ``key:effect``), :func:`taint_gone`;
- :func:`ready_seen` — the first change showing Ready=True after a moment (recovery).

Pod conditions use the same :func:`condition_changes` on a pod's recording.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from .pods import condition
from .recorder import Change
from .timeline import parse_time


# -- Lease ---------------------------------------------------------------------------------------

def renewals(lease: Iterable[Change]) -> list[float]:
    """The distinct ``spec.renewTime`` values of a Lease's recording (epoch s, µs), rising."""
    out: list[float] = []
    for ch in lease:
        t = parse_time((ch.obj.get("spec") or {}).get("renewTime"))
        if t is not None and (not out or t > out[-1]):
            out.append(t)
    return out


def last_renew_before(lease: Iterable[Change], t: float) -> float | None:
    """The last ``renewTime`` (epoch s) at or before epoch second ``t`` (e.g. a fault's moment),
    or None when the recording has none."""
    before = [r for r in renewals(lease) if r <= t]
    return before[-1] if before else None


def lease_duration(lease: Sequence[Change]) -> int | None:
    """``spec.leaseDurationSeconds`` (s) of the newest recorded Lease, or None."""
    return ((lease[-1].obj if lease else {}).get("spec") or {}).get("leaseDurationSeconds")


# -- conditions ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Seen:
    """A condition (or taint) as first recorded: the host's ``received_at`` (epoch s) and the
    condition's (or taint's) own dict."""

    received_at: float
    obj: dict


def condition_changes(changes: Iterable[Change], type_: str = "Ready", with_reason: bool = True) -> list[Seen]:
    """Each distinct state of the ``type_`` condition over a node's (or pod's) recording, in
    order: a new (status, reason, lastTransitionTime) — without ``with_reason``, a new (status,
    lastTransitionTime), as a pod's condition is compared."""
    def key(cond: dict) -> tuple:
        return (cond.get("status"), cond.get("reason") if with_reason else None, cond.get("lastTransitionTime"))

    out: list[Seen] = []
    for ch in changes:
        cond = condition(ch.obj, type_)
        if cond and (not out or key(out[-1].obj) != key(cond)):
            out.append(Seen(ch.received_at, cond))
    return out


def first_condition(changes: Iterable[Change], status: str, type_: str = "Ready", after: float = 0.0) -> Seen | None:
    """The first distinct state of the ``type_`` condition with ``status`` received at or after
    epoch second ``after`` (:func:`condition_changes`), or None."""
    return next((s for s in condition_changes(changes, type_) if s.obj.get("status") == status and s.received_at >= after),
                None)


def flips(changes: list[Seen], since: float, until: float) -> int:
    """How many True → not-True transitions ``changes`` (:func:`condition_changes`) shows with a
    receive time in ``[since, until]`` (epoch s)."""
    n = 0
    for prev, cur in zip(changes, changes[1:], strict=False):
        if since <= cur.received_at <= until and prev.obj.get("status") == "True" and cur.obj.get("status") != "True":
            n += 1
    return n


# -- taints --------------------------------------------------------------------------------------

def taint_seen(node: Iterable[Change], key: str, effect: str, after: float = 0.0) -> Seen | None:
    """The first recorded taint ``key:effect`` of a node's recording received at or after epoch
    second ``after``: the taint's dict (a taint the node lifecycle controller added, NoSchedule or
    NoExecute, carries ``timeAdded``, API time; one added through the API by hand has none), or None."""
    for ch in node:
        if ch.received_at < after:
            continue
        for t in (ch.obj.get("spec") or {}).get("taints") or []:
            if t.get("key") == key and t.get("effect") == effect:
                return Seen(ch.received_at, t)
    return None


def taint_gone(node: Iterable[Change], key: str, after: float) -> float | None:
    """The first receive time (epoch s) at or after ``after`` at which the node has no taint
    ``key`` (any effect), or None."""
    for ch in node:
        if ch.received_at >= after and not any(t.get("key") == key for t in (ch.obj.get("spec") or {}).get("taints") or []):
            return ch.received_at
    return None


def ready_seen(node: Iterable[Change], after: float) -> float | None:
    """The first receive time (epoch s) at or after ``after`` of a change of the node's recording
    that shows Ready=True — any change (a status update counts), unlike :func:`first_condition`,
    which waits for a new state; None before any."""
    for ch in node:
        if ch.received_at >= after and (condition(ch.obj, "Ready") or {}).get("status") == "True":
            return ch.received_at
    return None
