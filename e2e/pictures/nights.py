"""A picture of a test's judged values over the last nights against their bands, as a PNG.

One small panel per series (:mod:`e2e.judge.drift`: one value of the test on one Kubernetes
minor), four to a row: the value of each night (a run of the values history) as a dot on a line —
red where it failed its band —, the band it was judged against shaded green (an open band ``≥ low``
shaded up to the top), and the nights along the bottom, the first and the last named by their run's
date and time (``12-01 15:53``). A series that drifts has its title and line in red, the title
saying which rule (``drift: towards 20``, ``drift: spread``).

An edge far from the values — further than :data:`NEAR` (in the value's unit) and than :data:`FAR`
times their own scale (their spread, or their size): a band written ``[1, 1e9]`` for "at least 1",
or ``[0, 19]`` s around values of 0.1 s — is not stretched to, so the values keep the panel's height:
the shading runs to the panel's border, which names the edge (``↑ 19``), and the title gives the band.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.axes import Axes

from ..base.verdicts import FAIL
from ..judge.expectations import number
from ..judge.drift import CHART_NIGHTS, Drift, Point, Series, band_text
from .png import png

COLUMNS = 4
PANEL_IN = (2.9, 1.5)  # width, height of one panel (inches; 80 dpi: e2e.pictures.png)
BAND_COLOUR, VALUE_COLOUR, FAIL_COLOUR, DRIFT_COLOUR = "#c8e6c9", "#1565c0", "#d32f2f", "#d32f2f"
FAILED = (FAIL,)
# an edge further from the values than both of these is not drawn to (module doc)
NEAR, FAR = 10.0, 5.0

_STAMP = re.compile(r"(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})\d{2}")


def night_label(run_id: str) -> str:
    """``"12-01 15:53"`` of run id ``20261201-155306-a9d0`` (also ``merged-…``); else the run id."""
    found = _STAMP.search(run_id)
    return f"{found[2]}-{found[3]} {found[4]}:{found[5]}" if found else run_id


def view(values: Sequence[float], band: tuple[float, float | None]) -> tuple[float, float]:
    """The panel's value range: the values, and each band edge near enough to them (module doc)."""
    lo, hi = min(values), max(values)
    reach = max(NEAR, FAR * max(hi - lo, abs((lo + hi) / 2)))
    for edge in band:
        if edge is not None and (lo - reach <= edge <= hi + reach):
            lo, hi = min(lo, edge), max(hi, edge)
    pad = (hi - lo) * 0.12 or max(abs(hi) * 0.1, 0.5)
    return lo - pad, hi + pad


def _panel(ax: Axes, s: Series, points: list[Point], drift: Drift | None) -> None:
    xs = list(range(len(points)))
    values = [p.value for p in points]
    bottom, top = view(values, points[-1].band)
    lows = [max(p.band[0], bottom) for p in points]
    highs = [top if p.band[1] is None else min(p.band[1], top) for p in points]
    # each night's band across its whole column
    ax.fill_between([x - 0.5 for x in xs] + [len(xs) - 0.5], lows + lows[-1:], highs + highs[-1:], step="post",
                    color=BAND_COLOUR, linewidth=0)
    low, high = points[-1].band
    for edge, y, arrow in ((high, top, "↑"), (low, bottom, "↓")):
        if edge is not None and not bottom <= edge <= top:  # an edge off the panel: where it is
            ax.annotate(f"{arrow} {number(edge)}", (1, y), xycoords=("axes fraction", "data"), fontsize=6,
                        xytext=(-3, -2 if arrow == "↑" else 2), textcoords="offset points",
                        ha="right", va="top" if arrow == "↑" else "bottom", color="#2e7d32")
    colour = DRIFT_COLOUR if drift else VALUE_COLOUR
    ax.plot(xs, values, color=colour, linewidth=1.8 if drift else 1.0, zorder=2)
    ax.scatter(xs, values, s=12, zorder=3,
               c=[FAIL_COLOUR if p.verdict in FAILED else colour for p in points])
    ax.set_ylim(bottom, top)
    ax.set_xlim(-0.5, len(points) - 0.5)
    ax.set_xticks([0, len(points) - 1] if len(points) > 1 else [0])
    ax.set_xticklabels([night_label(points[0].run_id), night_label(points[-1].run_id)][: len(ax.get_xticks())])
    ax.tick_params(labelsize=6, length=2, pad=1)
    band = band_text(points[-1].band)
    unit = f" {s.unit}" if s.unit else ""
    title = f"{s.case} {s.name}\n{band}{unit}"
    if drift is not None:
        title += " · drift: " + (f"towards {number(drift.edge or 0.0)}" if drift.kind == "edge" else "spread")
    # a text, not a title: a title's place is measured at every drawing
    ax.text(0, 1.04, title, transform=ax.transAxes, fontsize=6.5, color=DRIFT_COLOUR if drift else "black",
            ha="left", va="bottom")


def chart(panels: list[Series], drifting: dict[tuple[str, str, str, str], Drift], nights: int = CHART_NIGHTS) -> bytes:
    """One PNG of ``panels`` (series of one test, each with at least one point): each series'
    last ``nights`` nights against its bands (module doc); ``drifting`` maps a series' key to its
    drift (:func:`e2e.judge.drift.drifts`). ``ValueError`` without a panel."""
    if not panels:
        raise ValueError("no series to chart")
    rows = -(-len(panels) // COLUMNS)
    columns = min(COLUMNS, len(panels))
    fig, axes = plt.subplots(rows, columns, figsize=(PANEL_IN[0] * columns, PANEL_IN[1] * rows), squeeze=False)
    for ax, s in zip(axes.flat, panels, strict=False):  # the grid may have a free place or three
        _panel(ax, s, s.points[-nights:], drifting.get(s.key))
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    # fixed margins (tight_layout measures every label: seconds for a run's charts)
    fig.subplots_adjust(left=0.35 / (PANEL_IN[0] * columns), right=1 - 0.1 / (PANEL_IN[0] * columns),
                        bottom=0.25 / (PANEL_IN[1] * rows), top=1 - 0.35 / (PANEL_IN[1] * rows),
                        wspace=0.25, hspace=0.75)
    return png(fig, tight=False)
