"""A picture of container states over time: one lane per container (PNG, matplotlib).

Each lane shows the state the recorder saw (coloured by state and reason, from receive
times) and, as black bars, each run of the container from its API ``startedAt`` to
``finishedAt`` — one separate bar per run, also for back-to-back runs (:func:`run_bars`). Marks (a delete, a signal...) are vertical lines across all lanes.

When the test recorded Nodes or node Leases (NF cases), each node gets a lane above the
containers (:func:`node_lanes`): its ``Ready`` condition over time (True / Unknown / False),
each Lease ``renewTime`` as a tick, each taint from its ``timeAdded`` (API time) until it was
seen gone, labelled ``key:effect``. A declared fault window (e2e.faults) is shaded across all
lanes, and a recorder GAP is hatched: nothing was seen there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence, cast

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.patches import Patch
from matplotlib.text import Text

from ..record.recorder import FAULT_KIND, GAP_KIND, Change
from .png import png
from ..record.timeline import Attempt, attempts, container_history, container_samples, parse_time, restart_gaps

COLOURS = {
    "running": "#4caf50",
    "waiting": "#ffc107",
    "waiting(CrashLoopBackOff)": "#ff9800",
    "waiting(PodInitializing)": "#bdbdbd",
    "waiting(ContainerCreating)": "#bdbdbd",
    "terminated(Completed)": "#90caf9",
    "terminated(Error)": "#e53935",
    "terminated(OOMKilled)": "#8e24aa",
}


def _colour(label: str) -> str:
    return COLOURS.get(label) or COLOURS.get(label.split("(")[0], "#9e9e9e")


# Seconds: the shortest run bar drawn, and the clear space kept between two runs' bars.
RUN_MIN_WIDTH_S = 0.3
RUN_SPACE_S = 0.15


def run_bars(runs: Sequence[Attempt], t0: float, end: float) -> list[tuple[float, float]]:
    """``(x0, width)`` of each run's bar (seconds after ``t0``), one separate bar per run.

    API ``startedAt``/``finishedAt`` have 1 s resolution, so back-to-back runs share a
    second (one ends at 3, the next starts at 3; a short run starts and ends at 3): drawn
    as they are, their bars touch or overlap and read as one. Each bar is at least
    ``RUN_MIN_WIDTH_S`` wide and starts ``RUN_SPACE_S`` after the previous one ends (shifted
    right by at most a few tenths, within the timestamps' own resolution); a run still
    running ends at ``end``, one whose end was never seen at the next run's start.
    """
    bars: list[tuple[float, float]] = []
    prev_end = None
    for i, run in enumerate(runs):
        x0 = run.started_at - t0
        if prev_end is not None:
            x0 = max(x0, prev_end + RUN_SPACE_S)
        if run.finished_at is not None:
            x1 = run.finished_at - t0
        else:  # still running, or its end was never seen: up to the next run's start
            x1 = runs[i + 1].started_at - t0 if i + 1 < len(runs) else end
        x1 = max(x1, x0 + RUN_MIN_WIDTH_S)
        bars.append((x0, x1 - x0))
        prev_end = x1
    return bars


NODE_READY_COLOURS = {"True": "#4caf50", "Unknown": "#9e9e9e", "False": "#e53935"}
TAINT_COLOUR, LEASE_COLOUR, FAULT_COLOUR = "#6a1b9a", "#1565c0", "#e57373"


def node_lanes(changes: Sequence[Change]) -> dict[str, dict]:
    """Per node (Node or Lease name): ``ready`` [(receive time, Ready status)] on change,
    ``renewals`` [renewTime epoch s], ``taints`` [(key:effect, timeAdded or first seen, gone or
    None)]. Empty when the recording has neither Nodes nor Leases."""
    lanes: dict[str, dict] = {}

    def lane(name: str) -> dict:
        return lanes.setdefault(name, {"ready": [], "renewals": [], "taints": []})

    open_taints: dict[tuple[str, str], tuple[str, float]] = {}
    for ch in changes:
        if ch.kind == "Lease":
            t = parse_time((ch.obj.get("spec") or {}).get("renewTime"))
            renewals = lane(ch.name)["renewals"]
            if t is not None and (not renewals or t > renewals[-1]):
                renewals.append(t)
        elif ch.kind == "Node" and ch.type != "DELETED":
            this = lane(ch.name)
            ready = next((c.get("status") for c in (ch.obj.get("status") or {}).get("conditions") or [] if c.get("type") == "Ready"), None)
            if ready and (not this["ready"] or this["ready"][-1][1] != ready):
                this["ready"].append((ch.received_at, ready))
            now = {f"{t.get('key')}:{t.get('effect')}": parse_time(t.get("timeAdded")) or ch.received_at
                   for t in (ch.obj.get("spec") or {}).get("taints") or []}
            for label, added in now.items():
                open_taints.setdefault((ch.name, label), (label, added))
            for (node, label), (_, added) in list(open_taints.items()):
                if node == ch.name and label not in now:
                    this["taints"].append((label, added, ch.received_at))
                    del open_taints[(node, label)]
    for (node, label), (_, added) in open_taints.items():
        lanes[node]["taints"].append((label, added, None))
    return lanes


def _draw_node_lane(ax, y: int, lane: dict, t0: float, end: float) -> None:
    ready = lane["ready"]
    for i, (at, status) in enumerate(ready):
        x1 = (ready[i + 1][0] - t0) if i + 1 < len(ready) else end
        ax.broken_barh([(at - t0, max(x1 - (at - t0), 0.05))], (y - 0.35, 0.3), facecolors=NODE_READY_COLOURS.get(status, "#bdbdbd"))
    for r in lane["renewals"]:
        ax.plot([r - t0, r - t0], [y - 0.02, y + 0.12], color=LEASE_COLOUR, linewidth=1)
    for k, (label, added, gone) in enumerate(lane["taints"]):
        x0 = added - t0
        x1 = (gone - t0) if gone is not None else end
        level = y + 0.18 + 0.1 * (k % 2)
        ax.broken_barh([(x0, max(x1 - x0, 0.05))], (level, 0.07), facecolors=TAINT_COLOUR)
        ax.text(x0, level + 0.08, label.replace("node.kubernetes.io/", ""), fontsize=7, color=TAINT_COLOUR, va="bottom")


# the heights (lane units) of the rows the marks' labels are put on, lowest first
MARK_ROWS_Y = (-0.55, -0.38, -0.21, -0.04)


def stagger(labels: Sequence[Text]) -> list[tuple[int, str]]:
    """Lay out the marks' ``labels`` (in time order, in their figure, each text starting at its
    mark's line) so that none overprints another or leaves the axes' frame.

    A label that would run past the frame's right edge ends at its line instead (right-aligned).
    Each label goes on the lowest row of :data:`MARK_ROWS_Y` where it overprints no earlier label.
    When some label finds no row with room, every label is replaced by its number ``[n]`` (n from
    1, in time order) and the ``(n, label)`` pairs are returned for a key under the picture
    (:func:`render`); otherwise ``[]``. Numbers that still find no room (marks closer than a
    number's width, four deep) go on the row whose last label ends first."""
    texts = [label.get_text().strip() for label in labels]
    if _place(labels, texts):
        return []
    numbers = [f"[{n}]" for n in range(1, len(texts) + 1)]
    _place(labels, numbers)
    return list(enumerate(texts, start=1))


def _place(labels: Sequence[Text], texts: Sequence[str]) -> bool:
    """Put each label, showing its text, on the lowest free row; False when one found none."""
    ends = [float("-inf")] * len(MARK_ROWS_Y)
    fitted = True
    for label, text in zip(labels, texts, strict=True):
        _fit_in_frame(label, text)
        box = label.get_window_extent()
        row = next((i for i, e in enumerate(ends) if e < box.x0), None)
        if row is None:
            fitted = False
            row = min(range(len(ends)), key=ends.__getitem__)
        label.set_y(MARK_ROWS_Y[row])
        ends[row] = box.x1
    return fitted


def _fit_in_frame(label: Text, text: str) -> None:
    """Show ``text`` to the right of the label's line, or to its left when it would run past
    the right edge of the axes' frame."""
    label.set_text(f" {text}")
    label.set_horizontalalignment("left")
    axes = label.axes
    if axes is not None and label.get_window_extent().x1 > axes.bbox.x1:
        label.set_text(f"{text} ")
        label.set_horizontalalignment("right")


def _mark_key(ax, key: list[tuple[int, str]]) -> int:
    """The key of the marks :func:`stagger` numbered, under the x axis' label (wrapped); returns
    its number of lines."""
    entries = [f"[{n}] {text}" for n, text in key]
    lines, line = [], ""
    for entry in entries:
        if line and len(line) + 3 + len(entry) > KEY_LINE_CHARS:
            lines.append(line)
            line = ""
        line = f"{line}   {entry}" if line else entry
    lines.append(line)
    ax.annotate("\n".join(lines), xy=(0, 0), xycoords=("axes fraction", ax.xaxis.label), xytext=(0, -4),
                textcoords="offset points", va="top", ha="left", fontsize=8, color=MARK_COLOUR)
    return len(lines)


# characters of the marks' key per line (fontsize 8 on the 12-inch-wide picture)
KEY_LINE_CHARS = 170
# the height (inches) a line of the key adds to the picture
KEY_LINE_IN = 0.2
MARK_COLOUR = "#1565c0"


def render(
    changes: Sequence[Change],
    t0: float,
    path: Path,
    title: str = "",
    marks: Sequence[tuple[float, str]] = (),
) -> Path | None:
    """Draw the lanes of every container seen in ``changes`` to ``path`` (PNG, :mod:`e2e.pictures.png`).

    ``t0`` (epoch s) is time zero on the x axis; ``marks`` are ``(epoch s, label)`` pairs.
    Returns ``path``, or ``None`` when no container was seen.
    """
    lanes: list[tuple[str, str]] = []
    for s in container_samples(changes):
        if (s.pod, s.container) not in lanes:
            lanes.append((s.pod, s.container))
    nodes = node_lanes(changes)
    if not lanes and not nodes:
        return None
    end = max(c.received_at for c in changes) - t0 + 1.0
    fig, ax = plt.subplots(figsize=(12, 2.2 + 0.9 * (len(lanes) + len(nodes))))
    seen_labels: dict[str, str] = {}
    for y, (_name, lane) in enumerate(nodes.items(), start=len(lanes)):
        _draw_node_lane(ax, y, lane, t0, end)
    for w in (c for c in changes if c.kind == FAULT_KIND):
        ax.axvspan(w.obj["from"] - t0, w.obj["to"] - t0, color=FAULT_COLOUR, alpha=0.15, linewidth=0)
        ax.text(w.obj["from"] - t0, len(lanes) + len(nodes) - 0.2, f" fault: {w.name}", fontsize=8, color="#b71c1c", va="top")
    for g in (c for c in changes if c.kind == GAP_KIND):
        ax.axvspan(g.obj["from"] - t0, g.obj["to"] - t0, facecolor="none", edgecolor="#616161", hatch="xx", linewidth=0)
    for y, (pod, container) in enumerate(lanes):
        history = container_history(changes, pod, container)
        for i, s in enumerate(history):
            x0 = s.received_at - t0
            x1 = (history[i + 1].received_at - t0) if i + 1 < len(history) else end
            colour = _colour(s.label)
            seen_labels.setdefault(s.label, colour)
            ax.broken_barh([(x0, max(x1 - x0, 0.05))], (y - 0.35, 0.5), facecolors=colour)
        runs = attempts(changes, pod, container)
        ax.broken_barh(run_bars(runs, t0, end), (y + 0.2, 0.15), facecolors="black")
        for prev, gap in zip(runs, restart_gaps(runs), strict=False):
            if gap >= 3:  # label the gaps wide enough to hold their text
                ax.text(cast(float, prev.finished_at) - t0 + gap / 2, y + 0.42, f"gap {gap:.0f} s", ha="center", va="bottom", fontsize=8)
    mark_labels = []
    for when, label in sorted(marks):
        x = when - t0
        ax.axvline(x, color=MARK_COLOUR, linestyle="--", linewidth=1)
        mark_labels.append(ax.text(x, MARK_ROWS_Y[0], " " + label, va="bottom", ha="left", fontsize=8, color=MARK_COLOUR))
    ax.set_yticks(range(len(lanes) + len(nodes)))
    ax.set_yticklabels([f"{pod}\n{c}" if len({p for p, _ in lanes}) > 1 else c for pod, c in lanes]
                       + [f"node {n}\nReady, lease, taints" for n in nodes], fontsize=8)
    ax.set_ylim(-0.6, len(lanes) + len(nodes) - 0.05)
    ax.set_xlim(left=min(0.0, ax.get_xlim()[0]))
    ax.set_xlabel("seconds since the manifests were applied (state: receive time; black bars: API startedAt–finishedAt)")
    ax.grid(axis="x", alpha=0.3)
    handles = [Patch(color=c, label=lbl) for lbl, c in seen_labels.items()]
    if lanes:
        handles.append(Patch(color="black", label=f"container run: API startedAt–finishedAt, whole seconds (runs in one second: "
                                                   f"≥ {RUN_MIN_WIDTH_S} s wide, {RUN_SPACE_S} s apart)"))
    if nodes:
        handles += [Patch(color=c, label=f"node Ready={s}") for s, c in NODE_READY_COLOURS.items()]
        handles += [Patch(color=LEASE_COLOUR, label="Lease renewTime"), Patch(color=TAINT_COLOUR, label="taint (from timeAdded)")]
    if any(c.kind == FAULT_KIND for c in changes):
        handles.append(Patch(color=FAULT_COLOUR, alpha=0.4, label="fault window"))
    ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(0, 1.01), ncol=3, fontsize=8, frameon=False)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    key = stagger(mark_labels)
    if key:
        added_in = KEY_LINE_IN * _mark_key(ax, key)
        fig.set_figheight(fig.get_figheight() + added_in)
        fig.tight_layout()  # it leaves the key out: room for it below
        fig.subplots_adjust(bottom=fig.subplotpars.bottom + added_in / fig.get_figheight())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(png(fig))
    return path
