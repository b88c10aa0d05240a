"""A picture of HTTP traffic during a pod's termination (CASES.md PS-4), as a PNG.

Three panels on one time axis (seconds since the load started):

1. requests sent per time bin, stacked by outcome: successes green, failures coloured by
   class (refused, reset, timeout, other, HTTP 5xx);
2. each request's latency (log scale), failures as crosses;
3. one lane per pod with its endpoint condition (ready / terminating but serving /
   terminating and not serving / not ready; no bar once removed from the EndpointSlice),
   the preStop hook as a hatched bar, and markers for the delete, SIGTERM and the
   container's exit.

Deletes, SIGTERMs and exits are also drawn as vertical lines across the first two panels,
so a failure can be read against them without reading any code. A fault window (e2e.faults:
from the inject to the undo) is shaded across all three panels and named at the top.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter

from ..evidence.endpoints import EndpointState
from ..evidence.load import Request
from .png import png

OK_COLOUR = "#43a047"
FAILURE_COLOURS = {
    "refused": "#e53935",
    "reset": "#fb8c00",
    "timeout": "#8e24aa",
    "other": "#6d4c41",
    "http-error": "#1e88e5",
}
ENDPOINT_COLOURS = {
    "ready": "#66bb6a",
    "terminating, serving": "#ffee58",
    "terminating, not serving": "#ffa726",
    "not ready": "#bdbdbd",
}
_CLASS_TEXT = {"refused": "connection refused", "reset": "connection reset/closed", "timeout": "timeout",
               "other": "other error", "http-error": "HTTP non-2xx"}
DELETE_COLOUR, SIGTERM_COLOUR, EXIT_COLOUR = "black", "#d32f2f", "#424242"
FAULT_COLOUR = "#e57373"


@dataclass(frozen=True)
class PodEvents:
    """What happened to one terminated pod (epoch s; None when not seen): the delete (the
    test's request, or first sight of its deletionTimestamp), the preStop hook (start, end),
    SIGTERM (the app's log), the container's exit and how (``"exit 0"``, ``"exit 143"``)."""

    pod: str
    delete_at: float | None = None
    prestop: tuple[float, float] | None = None
    sigterm_at: float | None = None
    exit_at: float | None = None
    exit_label: str = "exit"


def outcome_class(r: Request) -> str:
    """``ok``, an error class, or ``http-error`` for a non-2xx status."""
    if r.ok:
        return "ok"
    return r.outcome if r.outcome in FAILURE_COLOURS else "http-error"


def bins(requests: Sequence[Request], t0: float, bin_s: float) -> dict[str, dict[int, int]]:
    """``{class: {bin index: count}}`` of requests by send time (bin i = [t0 + i·bin_s, …))."""
    out: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    for r in requests:
        out[outcome_class(r)][int((r.sent_at - t0) // bin_s)] += 1
    return out


def _short(pod: str) -> str:
    return pod if len(pod) <= 28 else "…" + pod[-27:]


def render(
    requests: Sequence[Request],
    states: Sequence[EndpointState],
    pods: Sequence[PodEvents],
    t0: float,
    title: str,
    bin_s: float = 0.5,
    windows: Sequence[tuple[float, float, str]] = (),
) -> bytes:
    """The PNG (bytes, :mod:`e2e.pictures.png`) described in the module doc; ``t0`` (epoch s) is time zero;
    ``windows`` are fault windows ``(from, to, name)`` in epoch s."""
    lane_pods = [p.pod for p in pods]
    for s in states:
        if s.pod not in lane_pods:
            lane_pods.append(s.pod)
    n_lanes = max(1, len(lane_pods))
    fig, (ax_n, ax_lat, ax_ep) = plt.subplots(
        3, 1, sharex=True, figsize=(13, 7 + 0.45 * n_lanes),
        gridspec_kw={"height_ratios": [3, 2, max(1.2, 0.55 * n_lanes)]},
    )
    # -- 1: requests per bin, stacked by outcome -----------------------------------------
    counted = bins(requests, t0, bin_s)
    classes = ["ok"] + [c for c in FAILURE_COLOURS if c in counted]
    all_bins = sorted({i for c in counted.values() for i in c})
    bottom: Counter[int] = Counter()
    for cls in classes:
        xs = [i * bin_s for i in all_bins]
        ys = [counted[cls].get(i, 0) for i in all_bins]
        colour = OK_COLOUR if cls == "ok" else FAILURE_COLOURS[cls]
        ax_n.bar(xs, ys, width=bin_s, align="edge", bottom=[bottom[i] for i in all_bins], color=colour,
                 edgecolor="white", linewidth=0.3, label="succeeded (2xx)" if cls == "ok" else f"failed: {_CLASS_TEXT.get(cls, cls)}")
        for i, y in zip(all_bins, ys, strict=True):
            bottom[i] += y
    ax_n.set_ylabel(f"requests sent\nper {bin_s:g} s")
    failures = Counter(outcome_class(r) for r in requests if not r.ok)
    fail_text = ", ".join(f"{k}: {v}" for k, v in sorted(failures.items())) or "none"
    ax_n.set_title(f"{title}\n{len(requests)} requests, {sum(failures.values())} failed ({fail_text})", fontsize=10)

    # -- 2: latency of each request ---------------------------------------------------------
    ok = [r for r in requests if r.ok]
    ax_lat.scatter([r.sent_at - t0 for r in ok], [max(r.latency_s * 1000, 0.1) for r in ok], s=6, color=OK_COLOUR,
                   label="succeeded")
    for cls, colour in FAILURE_COLOURS.items():
        rs = [r for r in requests if not r.ok and outcome_class(r) == cls]
        if rs:
            ax_lat.scatter([r.sent_at - t0 for r in rs], [max(r.latency_s * 1000, 0.1) for r in rs], s=40, marker="x",
                           color=colour, label=f"failed: {_CLASS_TEXT[cls]}")
    ax_lat.set_yscale("log")
    plain = FuncFormatter(lambda v, _: f"{v:g}")
    ax_lat.yaxis.set_major_formatter(plain)
    ax_lat.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:g}" if str(f"{v:g}")[0] in "25" else ""))
    ax_lat.set_ylabel("latency (ms)\nby send time")

    # -- 3: endpoint lanes -------------------------------------------------------------------
    end = max([r.done_at - t0 for r in requests] + [s.received_at - t0 for s in states] + [w[1] - t0 for w in windows] + [1.0]) + 0.5
    by_pod: dict[str, list[EndpointState]] = defaultdict(list)
    for s in states:
        by_pod[s.pod].append(s)
    for y, pod in enumerate(lane_pods):
        hist = by_pod.get(pod, [])
        for i, s in enumerate(hist):
            if not s.present:
                continue
            x0 = s.received_at - t0
            x1 = (hist[i + 1].received_at - t0) if i + 1 < len(hist) else end
            ax_ep.broken_barh([(x0, max(x1 - x0, 0.05))], (y - 0.3, 0.6), facecolors=ENDPOINT_COLOURS.get(s.label, "#9e9e9e"))
    for p in pods:
        y = lane_pods.index(p.pod)
        if p.prestop:
            ax_ep.broken_barh([(p.prestop[0] - t0, max(p.prestop[1] - p.prestop[0], 0.05))], (y + 0.3, 0.14),
                              facecolors="none", edgecolors="black", hatch="////", linewidth=0.8)
        if p.delete_at is not None:
            ax_ep.plot(p.delete_at - t0, y - 0.42, marker="v", color=DELETE_COLOUR, markersize=9)
        if p.sigterm_at is not None:
            ax_ep.plot(p.sigterm_at - t0, y, marker="*", color=SIGTERM_COLOUR, markersize=14)
        if p.exit_at is not None:
            ax_ep.plot(p.exit_at - t0, y, marker="X", color=EXIT_COLOUR, markersize=10)
            ax_ep.annotate(p.exit_label, (p.exit_at - t0, y), xytext=(6, -12), textcoords="offset points", fontsize=8)
    ax_ep.set_yticks(range(len(lane_pods)))
    ax_ep.set_yticklabels([_short(p) for p in lane_pods], fontsize=8)
    ax_ep.set_ylim(-0.65, len(lane_pods) - 0.35)
    ax_ep.invert_yaxis()
    ax_ep.set_ylabel("endpoint\nper pod")
    ax_ep.set_xlabel("seconds since the load started (request send time; endpoint changes: recorder receive time; "
                     "SIGTERM/exit: the app's own log)")

    # -- vertical lines across the traffic panels -----------------------------------------------
    for ax in (ax_n, ax_lat):
        for p in pods:
            for at, colour, style in ((p.delete_at, DELETE_COLOUR, "--"), (p.sigterm_at, SIGTERM_COLOUR, ":"),
                                      (p.exit_at, EXIT_COLOUR, "-.")):
                if at is not None:
                    ax.axvline(at - t0, color=colour, linestyle=style, linewidth=1.1)
        ax.grid(axis="both", alpha=0.25)
    ax_ep.grid(axis="x", alpha=0.25)
    for start, stop, name in windows:
        for ax in (ax_n, ax_lat, ax_ep):
            ax.axvspan(start - t0, stop - t0, color=FAULT_COLOUR, alpha=0.18, linewidth=0)
        ax_n.annotate(f"fault: {name}", (start - t0, 1.0), xycoords=("data", "axes fraction"), xytext=(2, -10),
                      textcoords="offset points", fontsize=8, color="#b71c1c")
    ax_ep.set_xlim(min([0.0, *(p.delete_at - t0 for p in pods if p.delete_at is not None)]) - 0.2, end)

    marker_handles = [
        Line2D([], [], color=DELETE_COLOUR, linestyle="--", marker="v", label="pod delete"),
        Line2D([], [], color=SIGTERM_COLOUR, linestyle=":", marker="*", markersize=10, label="SIGTERM received"),
        Line2D([], [], color=EXIT_COLOUR, linestyle="-.", marker="X", label="container exit"),
        Patch(facecolor="none", edgecolor="black", hatch="////", label="preStop hook"),
        *([Patch(color=FAULT_COLOUR, alpha=0.35, label="fault window (inject → undo)")] if windows else []),
    ]
    ax_n.legend(loc="upper left", bbox_to_anchor=(1.005, 1.0), fontsize=8, title="requests", title_fontsize=8)
    ax_lat.legend(handles=marker_handles, loc="upper left", bbox_to_anchor=(1.005, 1.0), fontsize=8,
                  title="events", title_fontsize=8)
    ax_ep.legend(handles=[Patch(color=c, label=lbl) for lbl, c in ENDPOINT_COLOURS.items()],
                 loc="upper left", bbox_to_anchor=(1.005, 1.0), fontsize=8, title="endpoint (EndpointSlice)",
                 title_fontsize=8)
    fig.tight_layout()
    return png(fig)
