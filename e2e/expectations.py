"""The registry of documented values: one entry per (case ID, measurement name, version range).

Every number here comes from ``../shared/CASES.md`` (the case ID says where) or from the
Kubernetes source named in ``source``; every band says in ``why`` why it is that wide.
Bands are decided from the mechanism, never from a run: a value outside its band is a
finding to report, not a band to widen.

Shapes
------
``Expectation.documented`` is a number (with ``unit``) or a string (an exact status, reason
or message). Numbers are judged against ``band`` (inclusive ``[low, high]``), strings by
equality, or by ``re.fullmatch`` when ``pattern`` is true.

Lookup is by case ID, measurement name and the cluster's Kubernetes minor version
(``1.<minor>``); an entry may also be keyed by the node's cgroup version.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable


@dataclass(frozen=True)
class Band:
    """An inclusive range ``[low, high]`` in the expectation's unit."""

    low: float
    high: float

    def __contains__(self, value: float) -> bool:
        return self.low <= value <= self.high

    def __str__(self) -> str:
        return f"[{self.low:g}, {self.high:g}]"


@dataclass(frozen=True)
class Expectation:
    """One documented value and how far a measurement may stray from it.

    ``minors`` is the inclusive range of Kubernetes minor versions the entry applies to
    (``None`` = open end); ``cgroup`` restricts it to cgroup v1 or v2 nodes.
    """

    case: str
    name: str
    documented: float | str | bool
    source: str
    unit: str = ""
    band: Band | None = None
    why: str = ""
    pattern: bool = False
    minors: tuple[int | None, int | None] = (None, None)
    cgroup: int | None = None

    def applies_to(self, minor: int, cgroup: int | None = None) -> bool:
        low, high = self.minors
        if low is not None and minor < low:
            return False
        if high is not None and minor > high:
            return False
        return self.cgroup is None or cgroup is None or self.cgroup == cgroup

    def holds_for(self, value: object) -> bool:
        """True when ``value`` meets the expectation (band, equality or pattern)."""
        if self.band is not None:
            return isinstance(value, (int, float)) and not isinstance(value, bool) and value in self.band
        if self.pattern:
            return isinstance(value, str) and re.fullmatch(str(self.documented), value) is not None
        # True == 1 in Python; a documented flag and a documented number must not stand in for each other
        return isinstance(value, bool) == isinstance(self.documented, bool) and value == self.documented

    def describe(self) -> str:
        """``"20 s within [19, 23] s"``, ``"'CrashLoopBackOff'"`` or ``"matching /re/"``."""
        if self.band is not None:
            unit = f" {self.unit}" if self.unit else ""
            return f"{self.documented:g}{unit} within {self.band}{unit}"
        if self.pattern:
            return f"matching /{self.documented}/"
        return repr(self.documented)

    def versions(self) -> str:
        low, high = self.minors
        if low is None and high is None:
            text = "all versions"
        elif low == high:
            text = f"1.{low}"
        else:
            text = f"1.{low if low is not None else '0'}–{'1.' + str(high) if high is not None else 'newer'}"
        return text + (f", cgroup v{self.cgroup}" if self.cgroup else "")


class NotDocumented(LookupError):
    """No expectation of the registry applies to this case, name and version."""


@dataclass
class Registry:
    """Expectations indexed by ``(case, name)``; see :meth:`lookup`."""

    entries: list[Expectation] = field(default_factory=list)

    def add(self, *expectations: Expectation) -> None:
        for new in expectations:
            for old in self.entries:
                if (old.case, old.name, old.cgroup) == (new.case, new.name, new.cgroup) and _overlap(
                    old.minors, new.minors
                ):
                    raise ValueError(f"{new.case} {new.name}: versions {new.versions()} overlap {old.versions()}")
            self.entries.append(new)

    def lookup(self, case: str, name: str, minor: int, cgroup: int | None = None) -> Expectation:
        """The expectation for ``case``/``name`` on Kubernetes ``1.<minor>``.

        ``name`` is matched exactly, else without a trailing ``[...]`` qualifier (so
        ``waiting_message[restartCount=2]`` uses the ``waiting_message`` entry).
        Raises :class:`NotDocumented` (with the versions that are documented) when none applies.
        """
        candidates = [e for e in self.entries if e.case == case and e.name == name]
        if not candidates and name.endswith("]") and "[" in name:
            base = name[: name.rindex("[")]
            candidates = [e for e in self.entries if e.case == case and e.name == base]
        for exp in candidates:
            if exp.applies_to(minor, cgroup):
                return exp
        known = ", ".join(e.versions() for e in candidates) or "none"
        raise NotDocumented(f"{case} {name}: nothing documented for 1.{minor} (documented for: {known})")

    def cases(self) -> list[str]:
        return sorted({e.case for e in self.entries})


def _overlap(a: tuple[int | None, int | None], b: tuple[int | None, int | None]) -> bool:
    lo = max(x for x in (a[0], b[0], -1) if x is not None)
    hi = min(x for x in (a[1], b[1], 10**6) if x is not None)
    return lo <= hi


REGISTRY = Registry()


def register(expectations: Iterable[Expectation]) -> None:
    REGISTRY.add(*expectations)
