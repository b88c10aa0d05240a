"""Container-written timestamps ("stamps"): parse them, collect them, judge an order and the
gaps between them, and merge them with the recorder's API view.

Why: API timestamps (``startedAt``, ``finishedAt``) have 1 s resolution and cannot prove an
order inside one second (CASES.md "Measuring timings honestly"). The SC scenarios' containers
therefore write their own lines, defined by :data:`STAMP_SH` (a manifest's ``${stamp_sh}``)::

    <epoch seconds>.<microseconds> <container> <event> [detail]

``now`` reads the kernel's CLOCK_REALTIME with busybox ``adjtimex`` (µs; busybox ``date``
has no ``%N``). On kind the node shares the host's kernel clock, so a stamp compares directly
with the test process's ``time.time()`` and the recorder's receive times.

``say`` writes each line twice: to stdout (read with the logs API while the pod exists) and
appended to ``/dev/termination-log``, which the kubelet copies into
``state.terminated.message`` (last 4096 bytes, ``MaxContainerTerminationMessageLength`` in
pkg/kubelet/container/runtime.go) when the container ends — so the stamps of a deleted pod
survive in the recording. An exec probe writes its lines into the container's log through
``> /proc/1/fd/1`` (the stdout of the container's first process).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from ..measurements import Judge
from ..expectations import NotDocumented
from ..recorder import Change
from ..timeline import Row, format_table, rows

# Shell prelude of every SC container and exec probe (one line, so that it can fill a
# ``${stamp_sh}`` placeholder inside a YAML block scalar). ``say WORDS`` writes
# "<now> WORDS" to stdout and appends it to /dev/termination-log.
STAMP_SH = (
    "now() { adjtimex | awk '/tv_sec/{s=$2} /tv_usec/{u=$2} END{printf \"%d.%06d\", s, u}'; }; "
    "say() { l=\"$(now) $*\"; echo \"$l\"; echo \"$l\" >> /dev/termination-log; }"
)

ARROW = " → "

_LINE = re.compile(r"^\s*(\d{9,}\.\d{1,9})\s+(\S+)\s+(\S+)(?:\s+(.*))?$")


@dataclass(frozen=True, order=True)
class Stamp:
    """One container-written line: ``t`` epoch seconds (µs resolution), the ``container``
    that wrote it, its ``event`` (``start``, ``sigterm``, ``exit``, ``startup-ok``...)."""

    t: float
    container: str
    event: str
    detail: str = ""

    @property
    def key(self) -> str:
        """``"<container> <event>"``: how orders name a stamp (``"app sigterm"``)."""
        return f"{self.container} {self.event}"


def parse_stamps(text: str | None) -> list[Stamp]:
    """Every stamp line of ``text`` (a log or a termination message), in text order.
    Lines that are not stamps are ignored."""
    out = []
    for line in (text or "").splitlines():
        m = _LINE.match(line)
        if m:
            out.append(Stamp(float(m.group(1)), m.group(2), m.group(3), (m.group(4) or "").strip()))
    return out


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
            term = holder.get("terminated") or {}
            found.extend(parse_stamps(term.get("message")))
    return merge(found)


def stamps_from_changes(changes: Iterable[Change], pod: str | None = None) -> list[Stamp]:
    """Stamps of every termination message the recorder saw (of ``pod``, or of every pod):
    the stamps of containers that ended, also after their pod was deleted."""
    return merge(*(stamps_from_pod(c.obj) for c in changes if c.kind == "Pod" and (pod is None or c.name == pod)))


def find(stamps: Sequence[Stamp], key: str, nth: int = 0) -> Stamp | None:
    """The ``nth`` (0 = first, -1 = last) stamp whose :attr:`Stamp.key` is ``key``, or None."""
    hits = [s for s in sorted(stamps) if s.key == key]
    if not hits:
        return None
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
    return ms(b.t - a.t)


def ms(seconds: float) -> float:
    """``seconds`` as milliseconds rounded to 0.1 ms (stamps have µs resolution)."""
    return round(seconds * 1000.0, 1)


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
            seen.append((s.t, i, key))
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
    ref = t_ref if t_ref is not None else (min((s.t for s in stamps), default=0.0))
    details = {}
    for key in keys:
        s = find(stamps, key)
        details[key] = None if s is None else ms(s.t - ref)
    return judge.expect(case, name, measured_order(stamps, keys), context=context, details={"ms_after_ref": details}, **params)


def merged_rows(
    changes: Sequence[Change], stamps: Sequence[Stamp], t0: float, marks: Sequence[tuple[float, str]] = ()
) -> list[Row]:
    """The recorder's table (:func:`e2e.timeline.rows`) with the container-written stamps and
    the scenario's marks put in, all sorted by time (``t`` seconds after ``t0``)."""
    out = list(rows(changes, t0))
    out.extend(Row(s.t - t0, f"  stamp {s.container}", s.event, ("(container clock) " + s.detail).strip()) for s in stamps)
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
