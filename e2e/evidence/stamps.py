"""Container-written timestamps ("stamps"): the one line shape every container of the suite
writes, its parser, and what the families do with stamps (orders, gaps, first/last of an event,
a merged table with the recorder's API view).

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
(µs; busybox ``date`` has no ``%N``). On kind the node shares the host's kernel clock, so a
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
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

from kubernetes.client.exceptions import ApiException

from ..cluster.stamp_sh import STAMP_SH  # noqa: F401  (the writer of the shape parsed here, named here too)
from ..judge.expectations import NotDocumented
from ..judge.measurements import Judge
from ..record.recorder import Change
from ..record.pods import container_statuses, ever_started
from ..record.timeline import Row, format_table, rows

if TYPE_CHECKING:
    from ..run.scenario import Scenario

LINE = re.compile(r"^(?P<sec>\d{9,11})\.(?P<usec>\d{6}) (?P<event>[A-Za-z][\w:./-]*)(?: (?P<fields>.*))?$")

ARROW = " → "


@dataclass(frozen=True, order=True)
class Stamp:
    """One container-written line: ``at`` epoch seconds (µs resolution), its ``event``
    (``start``, ``sigterm``, ``probe:startup:failure``, ``SIGTERM``...) and its ``key=value``
    ``fields`` (in line order)."""

    at: float
    event: str
    fields: tuple[tuple[str, str], ...] = ()

    def get(self, key: str, default: str = "") -> str:
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
        """True when every given field has the given value."""
        return all(self.get(k, None) == v for k, v in fields.items())


def parse_line(line: str) -> Stamp | None:
    """The :class:`Stamp` of one line, or None for a line of another shape (a trailing ``\\r``
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
    """Every stamp of a container log or termination message (text or lines), in text order."""
    lines = (text or "").splitlines() if text is None or isinstance(text, str) else text
    return [s for s in map(parse_line, lines) if s is not None]


def first(stamps: Iterable[Stamp], event: str, after: float | None = None, **fields: str) -> Stamp | None:
    """The first ``event`` (at or after ``after``, epoch s) whose fields include ``fields``."""
    return next((s for s in stamps if s.event == event and (after is None or s.at >= after) and s.has(**fields)), None)


def last(stamps: Sequence[Stamp], event: str, **fields: str) -> Stamp | None:
    """The last ``event`` whose fields include ``fields``."""
    return first(reversed(stamps), event, **fields)


def labelled(stamps: Iterable[Stamp], prefix: str) -> list[Stamp]:
    """The stamps whose event is ``prefix`` or starts with ``prefix + ":"``
    (``labelled(s, "probe:startup")`` gives every startup probe run, whatever its result)."""
    return [s for s in stamps if s.event == prefix or s.event.startswith(prefix + ":")]


def before(stamps: Iterable[Stamp], at: float) -> list[Stamp]:
    """The stamps written strictly before ``at`` (epoch s)."""
    return [s for s in stamps if s.at < at]


def intervals(stamps: Sequence[Stamp]) -> list[float]:
    """Seconds between consecutive stamps (``len(stamps) - 1`` values, rounded to 1 ms)."""
    return [round(b.at - a.at, 3) for a, b in zip(stamps, stamps[1:])]


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
    """Stamps in the termination messages (``state`` and ``lastState``) of every container of
    ``pod`` (the API's JSON shape)."""
    status = pod.get("status") or {}
    found: list[Stamp] = []
    for cs in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
        for holder in (cs.get("state") or {}, cs.get("lastState") or {}):
            found.extend(parse((holder.get("terminated") or {}).get("message")))
    return merge(found)


def stamps_from_changes(changes: Iterable[Change], pod: str | None = None) -> list[Stamp]:
    """Stamps of every termination message the recorder saw (of ``pod``, or of every pod):
    the stamps of containers that ended, also after their pod was deleted."""
    return merge(*(stamps_from_pod(c.obj) for c in changes if c.kind == "Pod" and (pod is None or c.name == pod)))


def stamps_from_logs(sc: "Scenario", pod: str, containers: Sequence[str] = ()) -> list[Stamp]:
    """Stamps in the current (and, after a restart, previous) logs of the containers of ``pod``
    (``containers``, or all); none of a container not started yet or already gone (its
    termination message has them: :func:`stamps_from_changes`)."""
    found: list[Stamp] = []
    for name, cs in container_statuses(sc.pod(pod)).items():
        if containers and name not in containers:
            continue
        for previous in (False, True) if cs.get("restartCount") else (False,):
            try:
                found.extend(parse(sc.kube.logs(sc.namespace, pod, name, previous=previous)))
            except ApiException:
                pass
    return merge(found)


def stamps_of(sc: "Scenario", pod: str | None) -> list[Stamp]:
    """Every stamp of ``pod`` seen so far: its containers' logs and the termination messages the
    recorder saw (also of a deleted pod); none for ``pod`` None."""
    if pod is None:
        return []
    return merge(stamps_from_changes(sc.recorder.changes("Pod"), pod), stamps_from_logs(sc, pod))


class StampWatch:
    """Reads a container's log (at most every ``interval_s``, once it has started) until it shows
    ``event``: the kubelet deletes an evicted pod's containers, and their logs, as soon as the pod
    is terminal (kubelet.go cleanUpContainersInPod), so the stamps are read while it runs.
    :attr:`times` is ``{event: epoch s}`` (:func:`event_times`)."""

    def __init__(self, sc: "Scenario", pod: str, container: str, event: str, interval_s: float = 0.5):
        self.sc, self.pod, self.container, self.event, self.interval_s = sc, pod, container, event, interval_s
        self.times: dict[str, float] = {}
        self._asked = 0.0

    def poll(self) -> None:
        now = time.time()
        if self.event in self.times or now - self._asked < self.interval_s:
            return
        self._asked = now
        if ever_started(self.sc.recorder.changes("Pod", self.pod), self.container):
            self.times.update(event_times(stamps_from_logs(self.sc, self.pod, [self.container])))


def find(stamps: Sequence[Stamp], key: str, nth: int = 0) -> Stamp | None:
    """The ``nth`` (0 = first, -1 = last) stamp whose :attr:`Stamp.key` is ``key``, or None."""
    hits = [s for s in sorted(stamps) if s.key == key]
    try:
        return hits[nth]
    except IndexError:
        return None


def gap_ms(stamps: Sequence[Stamp], earlier: str, later: str) -> float | None:
    """Milliseconds from the first ``earlier`` stamp to the first ``later`` stamp (negative when
    ``later`` came first), rounded to 0.1 ms; None when either is missing."""
    a, b = find(stamps, earlier), find(stamps, later)
    if a is None or b is None:
        return None
    return ms(b.at - a.at)


def ms(seconds: float) -> float:
    """``seconds`` as milliseconds rounded to 0.1 ms (stamps have µs resolution)."""
    return round(seconds * 1000.0, 1)


def since_ms(stamp: Stamp | None, t: float | Stamp | None) -> float | None:
    """Milliseconds from ``t`` (epoch s, or a stamp) to ``stamp`` (0.1 ms); None when either is missing."""
    if isinstance(t, Stamp):
        t = t.at
    return None if stamp is None or t is None else ms(stamp.at - t)


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
    ``→``), or None when nothing is documented for this cluster's version."""
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
    """Judge the order of ``stamps`` against the documented order ``case``/``name``.

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


def merged_rows(
    changes: Sequence[Change], stamps: Sequence[Stamp], t0: float, marks: Sequence[tuple[float, str]] = ()
) -> list[Row]:
    """The recorder's table (:func:`e2e.record.timeline.rows`) with the container-written stamps and
    the scenario's marks put in, all sorted by time (``t`` seconds after ``t0``)."""
    out = list(rows(changes, t0))
    for s in stamps:
        rest = " ".join(f"{k}={v}" for k, v in s.fields if k != "container")
        out.append(Row(s.at - t0, f"  stamp {s.container}".rstrip(), s.event, f"(container clock) {rest}".strip()))
    out.extend(Row(t - t0, "mark", label) for t, label in marks)
    return sorted(out, key=lambda r: r.t)


def merged_table(
    changes: Sequence[Change],
    stamps: Sequence[Stamp],
    t0: float,
    marks: Sequence[tuple[float, str]] = (),
    keep: Callable[[Stamp], bool] | None = None,
) -> str:
    """:func:`merged_rows` as fixed-width text (millisecond times); ``keep`` filters stamps
    (e.g. leave out periodic ticks)."""
    picked = [s for s in stamps if keep is None or keep(s)]
    return format_table(merged_rows(changes, picked, t0, marks))
