"""Timestamps that containers and their exec probes write into the container log.

A container (or an exec probe running inside it) prints one line per fact::

    <label> <epoch seconds>.<microseconds>

for example ``start 1795939931.839358`` or ``probe:startup:failure 1795939933.582386``.
The time is the kernel clock read by busybox ``adjtimex`` (``date +%N`` does not work in the
preloaded busybox), which on kind is the host's clock too, so stamps compare directly with
the recorder's receive times (CASES.md "Measuring timings honestly"). The shell helper the
manifests use::

    stamp() { adjtimex | awk -v l="$1" '/tv_sec/{s=$2} /tv_usec/{u=$2} END{printf "%s %d.%06d\\n", l, s, u}'; }

An exec probe is a process in the container but not a child of its PID 1, so its stdout is
not the container log; it writes to ``/proc/1/fd/1`` (PID 1's stdout) instead. Lines that do
not have the stamp shape (anything else the container prints) are ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Sequence

STAMP_LINE = re.compile(r"^(?P<label>[A-Za-z0-9_.:/\-]+) (?P<sec>\d+)\.(?P<usec>\d{6})$")


@dataclass(frozen=True)
class Stamp:
    """One written fact: ``label`` (no spaces) and ``at`` (epoch seconds, µs resolution)."""

    label: str
    at: float


def parse(text: str) -> list[Stamp]:
    """The stamps of a container log, in the order they were written (log order).

    Lines of any other shape are skipped; a trailing ``\\r`` is tolerated.
    """
    out = []
    for line in text.splitlines():
        m = STAMP_LINE.match(line.strip())
        if m:
            out.append(Stamp(m["label"], int(m["sec"]) + int(m["usec"]) / 1e6))
    return out


def labelled(stamps: Iterable[Stamp], prefix: str) -> list[Stamp]:
    """The stamps whose label is ``prefix`` or starts with ``prefix + ":"``
    (``labelled(s, "probe:startup")`` gives every startup probe run, whatever its result)."""
    return [s for s in stamps if s.label == prefix or s.label.startswith(prefix + ":")]


def first(stamps: Iterable[Stamp], label: str) -> Stamp | None:
    """The first stamp labelled exactly ``label``, or ``None``."""
    return next((s for s in stamps if s.label == label), None)


def before(stamps: Iterable[Stamp], at: float) -> list[Stamp]:
    """The stamps written strictly before ``at`` (epoch s)."""
    return [s for s in stamps if s.at < at]


def intervals(stamps: Sequence[Stamp]) -> list[float]:
    """Seconds between consecutive stamps (``len(stamps) - 1`` values, rounded to 1 ms)."""
    return [round(b.at - a.at, 3) for a, b in zip(stamps, stamps[1:])]
