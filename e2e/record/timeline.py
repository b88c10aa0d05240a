"""Turn a recording into container histories, run attempts, a readable table and a picture.

Times:

- ``received_at`` (epoch seconds, client clock) orders what the recorder saw;
- API timestamps (``startedAt``, ``finishedAt``: RFC 3339, 1 s resolution) date what the
  kubelet reported. Restart gaps are measured on the API timestamps (CASES.md CL-1).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any, Iterable, Sequence, cast

from .podstatus import pod_columns
from .recorder import Change


def parse_time(value: str | None) -> float | None:
    """An RFC 3339 API timestamp (``2026-11-29T07:45:17Z``, or a MicroTime such as a Lease's
    ``renewTime`` ``2026-11-30T15:50:01.123456Z``) as epoch seconds, or ``None``."""
    if not value:
        return None
    return dt.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


@dataclass(frozen=True)
class ContainerSample:
    """A container's status as seen in one pod change.

    ``state`` is ``waiting``, ``running`` or ``terminated``; ``reason`` its reason
    (``CrashLoopBackOff``, ``Error``...); ``started_at``/``finished_at`` epoch seconds of the
    API timestamps of the current state.
    """

    received_at: float
    pod: str
    container: str
    init: bool
    state: str
    reason: str
    message: str
    restart_count: int
    exit_code: int | None
    started_at: float | None
    finished_at: float | None
    ready: bool
    started: bool | None

    @property
    def label(self) -> str:
        return f"{self.state}({self.reason})" if self.reason else self.state


def _sample(received_at: float, pod: str, cs: dict, init: bool) -> ContainerSample:
    state = cs.get("state") or {}
    name, body = next(iter(state.items()), ("unknown", {}))
    body = cast(dict, body or {})
    return ContainerSample(
        received_at=received_at,
        pod=pod,
        container=cs["name"],
        init=init,
        state=name,
        reason=body.get("reason") or "",
        message=body.get("message") or "",
        restart_count=cs.get("restartCount", 0),
        exit_code=body.get("exitCode"),
        started_at=parse_time(body.get("startedAt")),
        finished_at=parse_time(body.get("finishedAt")),
        ready=bool(cs.get("ready")),
        started=cs.get("started"),
    )


def container_samples(changes: Iterable[Change], pod: str | None = None) -> list[ContainerSample]:
    """Every container status of every observed pod change, oldest first."""
    out = []
    for ch in changes:
        if ch.kind != "Pod" or (pod is not None and ch.name != pod):
            continue
        status = ch.obj.get("status") or {}
        for key, init in (("initContainerStatuses", True), ("containerStatuses", False)):
            for cs in status.get(key) or []:
                out.append(_sample(ch.received_at, ch.name, cs, init))
    return out


def container_history(changes: Iterable[Change], pod: str, container: str) -> list[ContainerSample]:
    """The samples of one container where its state, reason, restart count or readiness changed."""
    history: list[ContainerSample] = []
    for s in container_samples(changes, pod):
        if s.container != container:
            continue
        key = (s.state, s.reason, s.restart_count, s.ready, s.started)
        if history:
            last = history[-1]
            if (last.state, last.reason, last.restart_count, last.ready, last.started) == key:
                continue
        history.append(s)
    return history


@dataclass(frozen=True)
class Attempt:
    """One run of a container: API ``startedAt``/``finishedAt`` (epoch s) and how it ended."""

    started_at: float
    finished_at: float | None
    exit_code: int | None
    reason: str


def attempts(changes: Iterable[Change], pod: str, container: str) -> list[Attempt]:
    """The container's runs in start order, merged from ``state`` and ``lastState``.

    A run is identified by its runtime ``containerID`` (``startedAt`` has 1 s resolution, so
    two short runs can share it). A run that lasted under a second may never be seen
    ``running``; its ``terminated`` record (now or later as ``lastState``) still carries its
    ``startedAt``.
    """
    runs: dict[str, Attempt] = {}
    order: dict[str, int] = {}
    for ch in changes:
        if ch.kind != "Pod" or ch.name != pod:
            continue
        status = ch.obj.get("status") or {}
        for cs in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
            if cs.get("name") != container:
                continue
            for holder, current in ((cs.get("lastState") or {}, False), (cs.get("state") or {}, True)):
                term, running = holder.get("terminated"), holder.get("running")
                body = term or running
                if not body or not body.get("startedAt"):
                    continue
                run_id = body.get("containerID") or (cs.get("containerID") if current else None) or body["startedAt"]
                order.setdefault(run_id, len(order))
                start = cast(float, parse_time(body["startedAt"]))  # startedAt is set (above)
                if term:
                    runs[run_id] = Attempt(start, parse_time(term.get("finishedAt")), term.get("exitCode"), term.get("reason") or "")
                elif run_id not in runs:
                    runs[run_id] = Attempt(start, None, None, "")
    return [runs[k] for k in sorted(runs, key=lambda k: (runs[k].started_at, order[k]))]


def restart_gaps(runs: Sequence[Attempt]) -> list[float]:
    """``gap[i]`` = ``runs[i+1].started_at - runs[i].finished_at`` in seconds (CASES.md CL-1);
    stops at the first run whose end was not seen."""
    gaps = []
    for prev, nxt in zip(runs, runs[1:], strict=False):
        if prev.finished_at is None:
            break
        gaps.append(nxt.started_at - prev.finished_at)
    return gaps


def status_sequence(changes: Iterable[Change], pod: str) -> list[str]:
    """kubectl's STATUS column (``Init:0/2``, ``PodInitializing``...) of every recorded change
    of ``pod``, consecutive repeats dropped."""
    seq: list[str] = []
    for ch in changes:
        if ch.kind != "Pod" or ch.name != pod:
            continue
        status = pod_columns(ch.obj).status
        if not seq or seq[-1] != status:
            seq.append(status)
    return seq


# -- the table a person reads --------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """One line of the timeline: ``t`` seconds after ``t0``, what changed, details."""

    t: float
    subject: str
    what: str
    detail: str = ""


def _condition_rows(last: dict[tuple[str, str, str], tuple], ch: Change, t0: float, subject: str) -> list[Row]:
    """A row for each of ``ch.obj``'s ``status.conditions`` whose status, reason or message
    changed since ``last`` (updated in place; keyed by kind, name and condition type)."""
    out = []
    for cond in (ch.obj.get("status") or {}).get("conditions") or []:
        key = (ch.kind, ch.name, cond.get("type", "?"))
        value = (cond.get("status"), cond.get("reason") or "", cond.get("message") or "")
        if last.get(key) == value:
            continue
        last[key] = value
        detail = []
        if value[1]:
            detail.append(f"reason={value[1]}")
        if value[2]:
            detail.append(f"message={value[2]!r}")
        out.append(Row(ch.received_at - t0, subject, f"condition {key[2]}={value[0]}", " ".join(detail)))
    return out


# What the table shows of each further recorded kind (``@pytest.mark.record(...)``), besides
# its conditions: (status field paths, spec field paths) printed when any of them changes.
OBJECT_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "Job": (("active", "ready", "succeeded", "failed", "terminating"), ()),
    "Deployment": (("replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas"), ("replicas",)),
    "ReplicaSet": (("replicas", "readyReplicas", "availableReplicas"), ("replicas",)),
    "StatefulSet": (("replicas", "readyReplicas", "availableReplicas", "updatedReplicas"), ("replicas",)),
    "HorizontalPodAutoscaler": (("currentReplicas", "desiredReplicas"), ("minReplicas",)),
    "PodDisruptionBudget": (("expectedPods", "currentHealthy", "desiredHealthy", "disruptionsAllowed"), ()),
    "Node": ((), ("unschedulable", "taints")),
}


# what an absent spec field means (the API omits false booleans)
SPEC_DEFAULTS = {"unschedulable": False}


def _field_text(name: str, value: Any) -> str:
    if name == "taints":
        value = ",".join(f"{t.get('key')}:{t.get('effect')}" + (f"@{t['timeAdded']}" if t.get("timeAdded") else "")
                         for t in value or []) or "none"
    return f"{name}={value}"


def _object_rows(last: dict[tuple[str, str], tuple], ch: Change, t0: float) -> list[Row]:
    """Rows of a recorded Job, Deployment, ReplicaSet, PodDisruptionBudget or Node: its
    :data:`OBJECT_FIELDS` when they change (``last`` updated in place), ``deleted``."""
    subject = f"{ch.kind.lower()}/{ch.name}"
    if ch.type == "DELETED":
        return [Row(ch.received_at - t0, subject, "deleted")]
    status_fields, spec_fields = OBJECT_FIELDS.get(ch.kind, ((), ()))
    status, spec = ch.obj.get("status") or {}, ch.obj.get("spec") or {}
    shown = tuple(["spec." + _field_text(f, spec.get(f, SPEC_DEFAULTS.get(f))) for f in spec_fields]
                  + [_field_text(f, status.get(f, 0)) for f in status_fields])
    if not shown or last.get((ch.kind, ch.name)) == shown:
        return []
    last[(ch.kind, ch.name)] = shown
    return [Row(ch.received_at - t0, subject, "status", " ".join(shown))]


# Seconds a gap may outlast its fault window and still count as inside it: the watch notices
# the API is back only at its next reconnect attempt (e2e.record.recorder RETRY_MAX_S) and the API
# server answers only some seconds after its manifest is back.
GAP_GRACE_S = 60.0


def rows(changes: Sequence[Change], t0: float) -> list[Row]:
    """The table of a recording, in receive order: pod STATUS/READY changes, a pod's deletion
    metadata (deletionTimestamp, deletionGracePeriodSeconds) when it changes, pod conditions
    (type=status, reason, message) when they change, container state changes (subject
    ``container <pod>/<container>``), events, EndpointSlice endpoints, node Lease renewals,
    declared fault windows (a recorder GAP inside one is marked expected), and of the further
    kinds of :data:`OBJECT_FIELDS` their fields and conditions when they change."""
    out: list[Row] = []
    windows = [ch for ch in changes if ch.kind == "Fault"]
    last_pod: dict[str, tuple] = {}
    last_deletion: dict[str, tuple] = {}
    last_container: dict[tuple[str, str], tuple] = {}
    last_condition: dict[tuple[str, str, str], tuple] = {}
    last_object: dict[tuple[str, str], tuple] = {}
    for ch in changes:
        if ch.kind == "Pod":
            cols = pod_columns(ch.obj)
            phase = (ch.obj.get("status") or {}).get("phase", "")
            key = (cols.status, cols.ready, phase, ch.type == "DELETED")
            if last_pod.get(ch.name) != key:
                last_pod[ch.name] = key
                what = "deleted" if ch.type == "DELETED" else f"STATUS {cols.status}"
                out.append(Row(ch.received_at - t0, f"pod/{ch.name}", what, f"READY {cols.ready} phase {phase}"))
            meta = ch.obj.get("metadata") or {}
            deletion = (meta.get("deletionTimestamp"), meta.get("deletionGracePeriodSeconds"))
            if deletion[0] and ch.type != "DELETED" and last_deletion.get(ch.name) != deletion:
                # a delete's metadata: also a second delete that only shortens the grace
                last_deletion[ch.name] = deletion
                out.append(Row(ch.received_at - t0, f"pod/{ch.name}", "deletion",
                               f"deletionTimestamp {deletion[0]} deletionGracePeriodSeconds {deletion[1]}"))
            status = ch.obj.get("status") or {}
            for key_name, init in (("initContainerStatuses", True), ("containerStatuses", False)):
                for cs in status.get(key_name) or []:
                    s = _sample(ch.received_at, ch.name, cs, init)
                    ck = (s.state, s.reason, s.restart_count, s.ready, s.started)
                    if last_container.get((ch.name, s.container)) == ck:
                        continue
                    last_container[(ch.name, s.container)] = ck
                    detail = [f"restarts={s.restart_count}", f"ready={s.ready}"]
                    if s.exit_code is not None:
                        detail.append(f"exit={s.exit_code}")
                    if s.message:
                        detail.append(f"message={s.message!r}")
                    prefix = "init " if init else ""
                    out.append(Row(ch.received_at - t0, f"  {prefix}container {ch.name}/{s.container}", s.label, " ".join(detail)))
            out.extend(_condition_rows(last_condition, ch, t0, f"pod/{ch.name}"))
        elif ch.kind == "Event" and ch.type in ("ADDED", "LISTED", "MODIFIED"):
            ev = ch.obj
            inv = ev.get("involvedObject") or {}
            count = ev.get("count") or 1
            # the container an Event of a pod is about: involvedObject.fieldPath spec.containers{app}
            container = re.fullmatch(r"spec\.(?:init|ephemeral)?[cC]ontainers\{(.+)\}", inv.get("fieldPath") or "")
            out.append(
                Row(
                    ch.received_at - t0,
                    f"event {inv.get('kind', '')}/{inv.get('name', '')}" + (f"/{container.group(1)}" if container else ""),
                    f"{ev.get('type', '')} {ev.get('reason', '')}",
                    f"{ev.get('message', '')}" + (f" (x{count})" if count > 1 else ""),
                )
            )
        elif ch.kind == "EndpointSlice":
            for ep in ch.obj.get("endpoints") or []:
                cond = ep.get("conditions") or {}
                ref = (ep.get("targetRef") or {}).get("name", "?")
                out.append(
                    Row(
                        ch.received_at - t0,
                        f"endpointslice/{ch.name}",
                        f"endpoint {ref}",
                        " ".join(f"{k}={cond.get(k)}" for k in ("ready", "serving", "terminating")),
                    )
                )
        elif ch.kind == "Recorder" and ch.type == "GAP":
            gap = ch.obj
            inside = next((w.name for w in windows if w.obj["from"] <= gap["from"] and gap["to"] <= w.obj["to"] + GAP_GRACE_S), None)
            expected = f" (expected: inside fault {inside})" if inside else ""
            out.append(Row(gap["from"] - t0, f"recorder/{ch.name}", f"GAP {gap['to'] - gap['from']:.1f} s",
                           f"watch down, nothing recorded until t+{gap['to'] - t0:.3f}{expected}: {gap['error']}"))
        elif ch.kind == "Fault":
            w = ch.obj
            out.append(Row(w["from"] - t0, f"fault/{ch.name}", f"injected on {w['node']}"))
            out.append(Row(w["to"] - t0, f"fault/{ch.name}", "undone"))
        elif ch.kind == "Lease":
            spec = ch.obj.get("spec") or {}
            out.append(Row(ch.received_at - t0, f"lease/{ch.name}", "renew",
                           f"renewTime={spec.get('renewTime')} leaseDurationSeconds={spec.get('leaseDurationSeconds')}"))
        elif ch.kind in OBJECT_FIELDS:
            out.extend(_object_rows(last_object, ch, t0))
            if ch.type != "DELETED":
                out.extend(_condition_rows(last_condition, ch, t0, f"{ch.kind.lower()}/{ch.name}"))
    out.sort(key=lambda r: r.t)  # a gap is received at its end and shown at its start
    return out


# Characters of a row's detail shown in the table; a longer one (a termination message of
# kilobytes) is cut there with "… (N characters)": the whole text stays in the recording.
DETAIL_MAX = 300


def format_table(table: Sequence[Row]) -> str:
    """Fixed-width text: ``t+  12.345s  subject  what  detail``, a line per row (a detail's own
    line breaks — an Event's message often ends with one, a probe's output has several — read
    ``⏎`` between spaces; a detail longer than :data:`DETAIL_MAX` characters is cut, saying its length),
    ending with a line break."""
    if not table:
        return "(nothing recorded)\n"
    w_subject = max(len(r.subject) for r in table)
    w_what = max(len(r.what) for r in table)
    lines = [f"{'t (s)':>9}  {'subject':<{w_subject}}  {'change':<{w_what}}  detail"]
    for r in table:
        detail = " ⏎ ".join(part.strip() for part in r.detail.strip().splitlines() if part.strip())
        if len(detail) > DETAIL_MAX:
            detail = f"{detail[:DETAIL_MAX]}… ({len(detail)} characters)"
        lines.append(f"{r.t:>+9.3f}  {r.subject:<{w_subject}}  {r.what:<{w_what}}  {detail}".rstrip())
    return "\n".join(lines) + "\n"


# The subject of a row of the test's own actions (``Scenario.marks``: apply, patch, exec, delete…)
MARK = "mark"


def mark_rows(marks: Iterable[tuple[float, str]], t0: float) -> list[Row]:
    """The test's own actions — ``(epoch s, label)`` — as rows of subject :data:`MARK`."""
    return [Row(when - t0, MARK, label) for when, label in marks]


def excerpt(table: Sequence[Row], around: float | None = None, width_s: float = 30.0, limit: int = 25,
            actions: int = 8) -> str:
    """At most ``limit`` rows of ``table`` (in time order), formatted by :func:`format_table`.

    The moment is ``around`` (seconds relative to the table's ``t0``), else the table's end. The
    test's own actions that led to it are always there, however long before: the last
    ``actions`` rows of subject :data:`MARK` up to the moment. The other rows: with ``around``,
    those within ``width_s`` seconds of it, the nearest to it first — a window centred on the
    moment, so the row at ``around`` and its neighbours on both sides are there; without, the
    last ones (the end of the recording).
    """
    rows_ = list(table)
    moment = around if around is not None else max((r.t for r in rows_), default=0.0)
    led = [i for i, r in enumerate(rows_) if r.subject == MARK and r.t <= moment][-actions:]
    rest = [i for i in range(len(rows_)) if i not in set(led)]
    room = max(limit - len(led), 0)
    if around is None:
        picked = rest[max(len(rest) - room, 0):]  # a short recording: all of it (never a negative index)
    else:
        near = [i for i in rest if abs(rows_[i].t - around) <= width_s]
        picked = sorted(near, key=lambda i: (abs(rows_[i].t - around), i))[:room]
    return format_table([rows_[i] for i in sorted({*led, *picked})])
