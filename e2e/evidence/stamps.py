"""Container-written timestamps ("stamps"): the one line shape every container of the suite
writes, its parser, and picking stamps (first/last of an event, gaps, the stamps of the
termination messages the recorder saw). Reading them from the cluster's logs is
:mod:`e2e.evidence.stamp_logs`, judging a documented order :mod:`e2e.evidence.stamp_order`, the
table merged with the recorder's API view :mod:`e2e.evidence.stamp_table`.

Why: API timestamps (``startedAt``, ``finishedAt``) have 1 s resolution and cannot prove an
order inside one second (CASES.md "Measuring timings honestly"). So containers write their own
lines, one per fact::

    <epoch seconds>.<microseconds> <event> [key=value ...]

for example ``1795940222.692360 sigterm container=sidecar-1`` (a busybox container, through
:data:`STAMP_SH`), ``1795939933.582386 probe:startup:failure`` (an exec probe) or
``1764400000.123456 SIGTERM mode=drain pid=1 inflight=0`` (the lifecycle-app,
``hack/images/lifecycle-app``, which writes the same shape). Values may be double-quoted
(``agent="kube-probe/1.37"``). Lines of any other shape are not stamps and are ignored.

Busybox containers get the shell functions of :data:`STAMP_SH` through the manifest placeholder
``${stamp_sh}`` (filled for every manifest by :meth:`e2e.run.scenario.Scenario.manifests`).
``stamp EVENT [key=value ...]`` reads the kernel's CLOCK_REALTIME with busybox ``adjtimex``
(µs — also while the kernel clock's status has STA_NANO and ``adjtimex`` prints nanoseconds;
busybox ``date`` has no ``%N``). On kind the node shares the host's kernel clock, so a
stamp compares directly with the test process's ``time.time()`` and the recorder's receive times.

``stamp`` writes each line twice: to stdout (read with the logs API while the pod exists) and
appended to ``/dev/termination-log``, which the kubelet copies into
``state.terminated.message`` (its last 4096 bytes, ``MaxContainerTerminationMessageLength`` in
pkg/kubelet/container/runtime.go, read by kuberuntime_container.go getTerminationMessage) when
the container ends — so the stamps of a deleted pod survive in the recording. An exec probe is
not a child of the container's PID 1: it writes its lines to the container log through
``> /proc/1/fd/1`` (PID 1's stdout).

The scenario's own actions on the timeline (a delete, a signal sent) are *marks*
(:attr:`e2e.run.scenario.Scenario.marks`), never stamps.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Iterable, Sequence, overload

from ..cluster.stamp_sh import STAMP_SH  # noqa: F401  (the writer of the shape parsed here, named here too)
from ..record.recorder import Change

LINE = re.compile(r"^(?P<sec>\d{9,11})\.(?P<usec>\d{6}) (?P<event>[A-Za-z][\w:./-]*)(?: (?P<fields>.*))?$")


@dataclass(frozen=True, order=True)
class Stamp:
    """One container-written line: ``at`` epoch seconds (µs resolution), its ``event``
    (``start``, ``sigterm``, ``probe:startup:failure``, ``SIGTERM``...) and its ``key=value``
    ``fields`` (in line order)."""

    at: float
    event: str
    fields: tuple[tuple[str, str], ...] = ()

    @overload
    def get(self, key: str, default: str = "") -> str: ...
    @overload
    def get(self, key: str, default: None) -> str | None: ...

    def get(self, key: str, default: str | None = "") -> str | None:
        """The value of field ``key`` (``default`` when the line has none)."""
        return next((v for k, v in self.fields if k == key), default)

    @property
    def container(self) -> str:
        """The ``container=`` field: which container wrote it, where several share an order."""
        return self.get("container")

    @property
    def key(self) -> str:
        """``"<container> <event>"`` (just ``event`` without a container): how documented
        orders name a stamp (``"app sigterm"``)."""
        return f"{self.container} {self.event}" if self.container else self.event

    def has(self, **fields: str) -> bool:
        """True when every one of ``fields`` has the given value (``has(container="app")``)."""
        return all(self.get(k, None) == v for k, v in fields.items())


def parse_line(line: str) -> Stamp | None:
    """The :class:`Stamp` of one ``line``, or None for a line of another shape (a trailing ``\\r``
    and surrounding blanks are tolerated; a word after the event that is not ``key=value``
    makes the line no stamp)."""
    m = LINE.match(line.strip())
    if not m:
        return None
    try:
        tokens = shlex.split(m["fields"] or "")
    except ValueError:
        return None
    if not all("=" in t for t in tokens):
        return None
    fields = tuple(tuple(t.split("=", 1)) for t in tokens)
    return Stamp(int(m["sec"]) + int(m["usec"]) / 1e6, m["event"], fields)  # type: ignore[arg-type]


def parse(text: str | Iterable[str] | None) -> list[Stamp]:
    """Every stamp of ``text``, a container log or termination message (text or lines), in text order."""
    lines = (text or "").splitlines() if text is None or isinstance(text, str) else text
    return [s for s in map(parse_line, lines) if s is not None]


def first(stamps: Iterable[Stamp], event: str, after: float | None = None, **fields: str) -> Stamp | None:
    """The first ``event`` (at or after ``after``, epoch s) whose fields include ``fields``."""
    return next((s for s in stamps if s.event == event and (after is None or s.at >= after) and s.has(**fields)), None)


def last(stamps: Sequence[Stamp], event: str, **fields: str) -> Stamp | None:
    """The last ``event`` whose fields include ``fields``."""
    return first(reversed(stamps), event, None, **fields)


def labelled(stamps: Iterable[Stamp], prefix: str) -> list[Stamp]:
    """The stamps whose event is ``prefix`` or starts with ``prefix + ":"``
    (``labelled(s, "probe:startup")`` gives every startup probe run, whatever its result)."""
    return [s for s in stamps if s.event == prefix or s.event.startswith(prefix + ":")]


def before(stamps: Iterable[Stamp], at: float) -> list[Stamp]:
    """The stamps written strictly before ``at`` (epoch s)."""
    return [s for s in stamps if s.at < at]


def intervals(stamps: Sequence[Stamp]) -> list[float]:
    """The seconds between consecutive ``stamps`` (``len(stamps) - 1`` values, rounded to 1 ms)."""
    return [round(b.at - a.at, 3) for a, b in zip(stamps, stamps[1:], strict=False)]


def event_times(stamps: Iterable[Stamp]) -> dict[str, float]:
    """``{event: epoch s}`` of the first stamp of each event."""
    times: dict[str, float] = {}
    for s in stamps:
        times.setdefault(s.event, s.at)
    return times


def merge(*groups: Iterable[Stamp]) -> list[Stamp]:
    """The union of ``groups`` without duplicates (the same line read from a log and from a
    termination message), sorted by time."""
    return sorted({s for g in groups for s in g})


def stamps_from_pod(pod: dict) -> list[Stamp]:
    """The stamps in the termination messages (``state`` and ``lastState``) of every container of
    ``pod`` (the API's JSON shape), in time order."""
    status = pod.get("status") or {}
    found: list[Stamp] = []
    for cs in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
        for holder in (cs.get("state") or {}, cs.get("lastState") or {}):
            found.extend(parse((holder.get("terminated") or {}).get("message")))
    return merge(found)


def stamps_from_changes(changes: Iterable[Change], pod: str | None = None) -> list[Stamp]:
    """The stamps of every termination message in ``changes`` (of ``pod``, or of every pod), in time order:
    the stamps of containers that ended, also after their pod was deleted."""
    return merge(*(stamps_from_pod(c.obj) for c in changes if c.kind == "Pod" and (pod is None or c.name == pod)))


def find(stamps: Sequence[Stamp], key: str, nth: int = 0) -> Stamp | None:
    """The ``nth`` (0 = first, -1 = last) stamp whose :attr:`Stamp.key` is ``key``, or None."""
    hits = [s for s in sorted(stamps) if s.key == key]
    try:
        return hits[nth]
    except IndexError:
        return None


def gap_ms(stamps: Sequence[Stamp], earlier: str, later: str) -> float | None:
    """The milliseconds from the first ``earlier`` stamp to the first ``later`` stamp of ``stamps`` (negative when
    ``later`` came first), rounded to 0.1 ms; None when either is missing."""
    a, b = find(stamps, earlier), find(stamps, later)
    if a is None or b is None:
        return None
    return ms(b.at - a.at)


def ms(seconds: float) -> float:
    """``seconds`` as milliseconds rounded to 0.1 ms (stamps have µs resolution)."""
    return round(seconds * 1000.0, 1)


def since_ms(stamp: Stamp | None, t: float | Stamp | None) -> float | None:
    """The milliseconds from ``t`` (epoch s, or a stamp) to ``stamp`` (0.1 ms); None when either is missing."""
    if isinstance(t, Stamp):
        t = t.at
    return None if stamp is None or t is None else ms(stamp.at - t)
