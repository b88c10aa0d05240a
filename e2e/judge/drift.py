"""Drift: judged values that still pass but move, night over night, where they will not for long.

Pure functions over the runs of the values history (:mod:`e2e.report.history`, oldest first).

**A series** is one measured value over the nights: the values of one test's ``case``/``name``
(``CL-1 restart_gap[2]`` of ``test_backoff_gaps…``) on one Kubernetes minor (``1.37``), each night
(a run of the history) the one it measured — the last, where a test judged the same name twice,
as ``make compare`` keys them. A name judged by two tests (``ES-1 crossing_to_failed_s`` of
``test_container_limit[single]`` and ``[sibling]``) is two series; another minor starts another
series (values are never compared across versions). A series holds only numbers with a numeric
band (strings and flags have no edge to drift to); a value ``inconclusive`` (judged while the
host's CPU was starved, e2e.judge.pressure) says nothing about Kubernetes and is left out. The
rules read the trailing nights whose band is the newest one: a documented band changed starts
over too.

**The rules**, over the last :data:`K` (5) nights of a series:

- *towards an edge*: the band's edge nearer to the newest value (the lower one on a tie; an
  open band ``≥ low`` has only its lower edge) was approached every night — each value strictly
  closer to it than the night before, i.e. strictly increasing towards the upper edge, strictly
  decreasing towards the lower — and by a total (newest − oldest of the k) of at least
  :data:`MOVE` (a third) of the band's width (an open band: of the oldest value's distance from its
  edge). Why a third: over the 7 full and partial runs of this suite on v1.37.2 kept on the
  developers' machine, three values in four moved by less than a quarter of their band from night
  to night, and k values of jitter are strictly monotonic by chance once in 60 (2 of 5! orders),
  so jitter rarely does both; a value that does keeps its pace and crosses the edge within about
  k more nights.
- *spread widened*: the spread (highest − lowest) of the last k nights is at least :data:`WIDER`
  (3) times the spread of the k nights before, and at least :data:`MOVE` of the band's width. Two
  sets of 5 values of the same normal noise have ranges 3× apart in 3 % of cases (2×: 11 %); the
  width floor keeps a widening the band absorbs easily (0.01 s → 0.05 s in a 10 s band) quiet.
  Needs 2k nights and a closed band.

A band of one value (``low == high``) has no room to drift in (its value passes or fails) and a
series of fewer than k nights (2k for the spread) is not judged. Nights are named by run id.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..base.verdicts import INCONCLUSIVE
from .expectations import measured_number, number

# nights each rule reads (the spread rule: twice as many)
K = 5
# the least total move towards an edge, and the least widened spread, as a share of the band's width
MOVE = 1 / 3
# the least ratio of the last k nights' spread to the k nights' before it
WIDER = 3.0
# nights a chart shows: the window of both rules
CHART_NIGHTS = 2 * K
# left out of a series: a timing value judged while the host's CPU was starved (e2e.judge.pressure)
LEFT_OUT = (INCONCLUSIVE,)


@dataclass(frozen=True)
class Point:
    """One night's value of a series: the run, its ``time`` (ISO), the ``value`` in the series'
    unit, the ``band`` ``(low, high)`` it was judged against (``high`` None: open), the
    ``documented`` number (None: not a number) and the ``verdict``."""

    run_id: str
    time: str
    value: float
    band: tuple[float, float | None]
    documented: float | None
    verdict: str


@dataclass
class Series:
    """One measured value over the nights (module doc): ``points`` oldest first."""

    case: str
    name: str
    test: str
    minor: str
    unit: str
    points: list[Point] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, str, str, str]:
        return self.case, self.name, self.test, self.minor

    def banded(self) -> list[Point]:
        """The trailing points whose band is the newest point's (the rules' nights)."""
        out: list[Point] = []
        for p in reversed(self.points):
            if p.band != self.points[-1].band:
                break
            out.append(p)
        return out[::-1]

    def shown(self, value: float) -> str:
        """``value`` with the precision the summary gives this series' values, no unit."""
        p = self.points[-1]
        return measured_number(value, p.documented, list(p.band))


def minor(kubernetes: str) -> str:
    """``"1.37"`` of ``"v1.37.2"``; a version string of another shape is its own minor."""
    parts = kubernetes.removeprefix("v").split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 and all(p.isdigit() for p in parts[:2]) else kubernetes


def _number(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _band(band: object) -> tuple[float, float | None] | None:
    if isinstance(band, (list, tuple)) and len(band) == 2 and _number(band[0]) \
            and (band[1] is None or _number(band[1])):
        return float(band[0]), None if band[1] is None else float(band[1])
    return None


def series(runs: list[dict]) -> list[Series]:
    """Every series (module doc) of ``runs`` (the history's lines, oldest first), in the order
    they first appear."""
    out: dict[tuple[str, str, str, str], Series] = {}
    for run in runs:
        night: dict[tuple[str, str, str, str], tuple[dict, tuple[float, float | None]]] = {}
        for v in run["values"]:
            band = _band(v["band"])
            if band is None or not _number(v["value"]) or v["verdict"] in LEFT_OUT:
                continue
            night[(v["case"], v["name"], v["test"], minor(str(v["kubernetes"])))] = (v, band)  # the last one
        for key, (v, band) in night.items():
            s = out.setdefault(key, Series(*key, unit=str(v.get("unit") or "")))
            doc = v.get("documented")
            s.points.append(Point(run["run_id"], run["time"], float(v["value"]), band,
                                  float(doc) if isinstance(doc, (int, float)) and _number(doc) else None, v["verdict"]))
    return list(out.values())


@dataclass(frozen=True)
class Drift:
    """A series that drifts: ``kind`` ``"edge"`` (towards ``edge``, over ``nights``) or
    ``"spread"`` (``nights``' spread against ``before``'s)."""

    series: Series
    kind: str
    nights: list[Point]
    edge: float | None = None
    before: list[Point] = field(default_factory=list)

    def line(self, with_test: bool = False) -> str:
        """``drift: CL-1 restart_gap[2] 15 → 16 → 17 → 18 → 19 s towards 20 (band [9, 20]) over
        nights 20261201-… … 20261202-…`` or ``drift: … spread 0.3–6 s over nights a … b, 3.9× the
        1.2–2.6 s over nights c … d (band [0, 11.4])``; ``with_test``: the test's name after the
        value's (for a name judged by more than one test)."""
        s = self.series
        unit = f" {s.unit}" if s.unit else ""
        what = f"{s.case} {s.name}" + (f" ({s.test.rpartition('::')[2]})" if with_test else "")
        band = band_text(s.points[-1].band)
        if self.kind == "edge":
            values = " → ".join(_distinct(s, [p.value for p in self.nights]))
            return (f"drift: {what} {values}{unit} towards {number(self.edge or 0.0)} (band {band}) "
                    f"over nights {_nights(self.nights)} (Kubernetes {s.minor})")
        now, was = _spread(self.nights), _spread(self.before)
        ratio = f"{now / was:.1f}×" if was else "from none"
        return (f"drift: {what} spread {_range(s, self.nights)}{unit} over nights {_nights(self.nights)}, {ratio} "
                f"the {_range(s, self.before)}{unit} over nights {_nights(self.before)} (band {band}, Kubernetes {s.minor})")


def band_text(band: tuple[float, float | None]) -> str:
    """``[9, 20]``, or ``≥ 1`` for an open band (as the summary writes a band)."""
    low, high = band
    return f"≥ {number(low)}" if high is None else f"[{number(low)}, {number(high)}]"


def _distinct(s: Series, values: list[float]) -> list[str]:
    """``values`` as the summary shows them (:meth:`Series.shown`), with more decimals (up to 6)
    where two nights in a row would read the same: a strict trend reads as one."""
    texts = [s.shown(v) for v in values]
    places = max(len(t.partition(".")[2]) for t in texts)
    while places < 6 and any(texts[i] == texts[i + 1] for i in range(len(texts) - 1)):
        places += 1
        texts = [f"{v:.{places}f}" for v in values]
    return texts


def _nights(points: list[Point]) -> str:
    return f"{points[0].run_id} … {points[-1].run_id}"


def _spread(points: list[Point]) -> float:
    values = [p.value for p in points]
    return max(values) - min(values)


def _range(s: Series, points: list[Point]) -> str:
    values = [p.value for p in points]
    return f"{s.shown(min(values))}–{s.shown(max(values))}"


def towards_edge(s: Series, k: int = K) -> Drift | None:
    """The *towards an edge* rule (module doc) on the last ``k`` nights of ``s``: a
    :class:`Drift` or None. ``ValueError`` for ``k`` < 2."""
    if k < 2:
        raise ValueError(f"k must be at least 2 nights, not {k}")
    nights = s.banded()[-k:]
    if len(nights) < k:
        return None
    low, high = nights[-1].band
    if high is not None and high <= low:
        return None
    values = [p.value for p in nights]
    newest = values[-1]
    up = high is not None and high - newest < newest - low
    edge = high if up and high is not None else low
    if not all(values[i + 1] > values[i] if up else values[i + 1] < values[i] for i in range(k - 1)):
        return None
    scale = high - low if high is not None else abs(values[0] - low)
    if scale <= 0 or abs(newest - values[0]) < MOVE * scale:
        return None
    return Drift(s, "edge", nights, edge=edge)


def spread_widened(s: Series, k: int = K) -> Drift | None:
    """The *spread widened* rule (module doc) on the last ``2 k`` nights of ``s``: a
    :class:`Drift` or None. ``ValueError`` for ``k`` < 2."""
    if k < 2:
        raise ValueError(f"k must be at least 2 nights, not {k}")
    banded = s.banded()[-2 * k:]
    if len(banded) < 2 * k:
        return None
    low, high = banded[-1].band
    if high is None or high <= low:
        return None
    before, nights = banded[:k], banded[k:]
    now, was = _spread(nights), _spread(before)
    if now < MOVE * (high - low) or now < WIDER * was:
        return None
    return Drift(s, "spread", nights, before=before)


def drifts(all_series: list[Series], k: int = K, run_id: str | None = None) -> list[Drift]:
    """Every drift of ``all_series`` under both rules (module doc), sorted by case, name and test;
    ``run_id``: only series measured in that run (its newest night), as a run's summary lists
    them. ``ValueError`` for ``k`` < 2."""
    out = []
    for s in sorted(all_series, key=lambda s: s.key):
        if run_id is not None and s.points[-1].run_id != run_id:
            continue
        out += [d for d in (towards_edge(s, k), spread_widened(s, k)) if d is not None]
    return out


def lines(all_series: list[Series], k: int = K, run_id: str | None = None) -> list[str]:
    """The drift lines of a run's summary (:meth:`Drift.line`; the test named where its value's
    name is judged by more than one test of the minor), or one line saying there is none and how
    many series had the k nights to judge."""
    found = drifts(all_series, k, run_id)
    shared: dict[tuple[str, str, str], int] = {}
    for s in all_series:
        shared[(s.case, s.name, s.minor)] = shared.get((s.case, s.name, s.minor), 0) + 1
    if found:
        return [d.line(with_test=shared[(d.series.case, d.series.name, d.series.minor)] > 1) for d in found]
    judged = [s for s in all_series if (run_id is None or s.points[-1].run_id == run_id) and len(s.banded()) >= k
              and s.points[-1].band[1] != s.points[-1].band[0]]
    return [f"drift: none over the last {k} nights ({len(judged)} value(s) with {k} nights or more and room in their band)"]
