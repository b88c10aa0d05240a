"""e2e.pictures.states draws the container lanes of a synthetic recording (no cluster)."""

from __future__ import annotations

import matplotlib.axes
import matplotlib.text
from matplotlib.backends.backend_agg import FigureCanvasAgg
from helpers import change, cstatus, epoch, pod, running, terminated

from e2e.pictures import states as picture
from e2e.record.timeline import Attempt


def _five_back_to_back_runs() -> list:
    """Five runs of ``app``, each starting in the second the previous one finished (API
    timestamps have 1 s resolution): 1–2, 2–3, 3–3, 3–4, 4–(running)."""
    spans = [(1, 2), (2, 3), (3, 3), (3, 4)]
    out, last = [], None
    for i, (s, f) in enumerate(spans):
        run = terminated(1, "Error", s, f, cid=f"containerd://{i}")
        out.append(change(f + 0.5, pod("crash", phase="Running", statuses=[cstatus("app", run, restarts=i, last=last, cid=f"containerd://{i}")])))
        last = run
    out.append(change(4.5, pod("crash", phase="Running", statuses=[cstatus("app", running(4), restarts=4, last=last, cid="containerd://4")])))
    return out


def _separate_bars(xranges: list[tuple[float, float]]) -> int:
    """How many bars a reader sees: touching or overlapping ranges look like one."""
    count, end = 0, None
    for x0, width in sorted(xranges):
        if end is None or x0 > end:
            count += 1
        end = max(end if end is not None else x0, x0 + width)
    return count


def test_back_to_back_runs_are_separate_bars(tmp_path, monkeypatch):
    # issue 20 (7): 5 runs of a container were drawn as touching/overlapping bars
    drawn: list[tuple[float, float]] = []
    real = matplotlib.axes.Axes.broken_barh

    def spy(self, xranges, yrange, **kw):
        if kw.get("facecolors") == "black":
            drawn.extend(xranges)
        return real(self, xranges, yrange, **kw)

    monkeypatch.setattr(matplotlib.axes.Axes, "broken_barh", spy)
    changes = _five_back_to_back_runs()
    assert picture.render(changes, epoch(0), tmp_path / "t.png") == tmp_path / "t.png"
    assert (tmp_path / "t.png").stat().st_size > 0
    assert len(drawn) == 5
    assert _separate_bars(drawn) == 5


def test_run_bars_keep_time_order_and_space():
    runs = [Attempt(epoch(1), epoch(2), 1, "Error"), Attempt(epoch(5), None, None, ""), Attempt(epoch(9), None, None, "")]
    bars = picture.run_bars(runs, epoch(0), end=20.0)
    space = picture.RUN_SPACE_S
    # the run whose end was never seen reaches the next start; that one starts a space later
    assert bars == [(1.0, 1.0), (5.0, 4.0), (9.0 + space, 11.0 - space)]
    assert picture.run_bars([], epoch(0), 10.0) == []


def test_node_lane_shows_ready_lease_renewals_taints_and_the_fault(tmp_path):
    """NF: a node lane (Ready over time, Lease ticks, taints from timeAdded), a fault window."""
    from e2e.record.recorder import Change

    def node(at, ready, taints=()):
        return Change(epoch(at), "Node", "MODIFIED", "n", {"status": {"conditions": [{"type": "Ready", "status": ready}]},
                                                           "spec": {"taints": list(taints)}})

    taint = {"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule", "timeAdded": "2026-11-29T07:45:31Z"}
    leases = [Change(epoch(t), "Lease", "MODIFIED", "n", {"spec": {"renewTime": f"2026-11-29T07:45:{t:02d}.250000Z"}})
              for t in (1, 6, 11)]
    fault = Change(epoch(60), "Fault", "FAULT", "kubelet-stop", {"from": epoch(12), "to": epoch(60), "node": "n"})
    changes = [*leases, node(0, "True"), node(31, "Unknown", [taint]), node(65, "True"), fault]
    lanes = picture.node_lanes(changes)
    assert lanes["n"]["ready"] == [(epoch(0), "True"), (epoch(31), "Unknown"), (epoch(65), "True")]
    assert [round(r - epoch(0), 2) for r in lanes["n"]["renewals"]] == [1.25, 6.25, 11.25]
    assert lanes["n"]["taints"] == [("node.kubernetes.io/unreachable:NoSchedule", epoch(31), epoch(65))]
    assert picture.render(changes, epoch(0), tmp_path / "t.png", title="NF-2") == tmp_path / "t.png"


def test_the_legend_says_run_bars_are_whole_second_stamps_moved_apart(tmp_path, monkeypatch):
    """Trial 5 (LC-3, run 4): both runs' startedAt and run 1's finishedAt were one second (t = 0.641),
    yet run 1's bar was drawn 0.64–0.94 and run 2's from 1.09 — run_bars' minimum width and space,
    which the legend did not say: it says so now."""
    labels: list[str] = []
    real = matplotlib.axes.Axes.legend

    def spy(self, *args, handles=(), **kw):
        labels.extend(h.get_label() for h in handles)
        return real(self, *args, handles=handles, **kw)

    monkeypatch.setattr(matplotlib.axes.Axes, "legend", spy)
    picture.render(_five_back_to_back_runs(), epoch(0), tmp_path / "t.png")
    (run,) = [label for label in labels if label.startswith("container run")]
    assert "whole seconds" in run
    assert f"{picture.RUN_MIN_WIDTH_S} s" in run and f"{picture.RUN_SPACE_S} s" in run


def test_close_marks_labels_do_not_overprint(tmp_path, monkeypatch):
    """Trial 5 (LC-3): the labels of two exec marks 0.11 s apart on a 2 s axis were printed over
    each other (they were stacked only when closer than 3 % of the axis)."""
    texts: list = []
    real = matplotlib.axes.Axes.text

    def spy(self, x, y, s, *args, **kw):
        t = real(self, x, y, s, *args, **kw)
        if s.startswith(" exec"):
            texts.append(t)
        return t

    monkeypatch.setattr(matplotlib.axes.Axes, "text", spy)
    marks = [(epoch(2) + 0.291, "exec touch /data/a"), (epoch(2) + 0.5, "exec kill 1"), (epoch(4) + 0.2, "exec ls")]
    picture.render(_five_back_to_back_runs(), epoch(0), tmp_path / "t.png", marks=marks)
    renderer = FigureCanvasAgg(texts[0].figure).get_renderer()
    boxes = [t.get_window_extent(renderer) for t in texts]
    assert len(boxes) == 3
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])


def _texts_of(tmp_path, monkeypatch, marks) -> tuple[list, list, object]:
    """Render with ``marks``; the texts laid out in the drawn picture, those of ``ax.text``, the figure."""
    texts: list = []
    real = matplotlib.axes.Axes.text

    def spy(self, x, y, s, *args, **kw):
        t = real(self, x, y, s, *args, **kw)
        texts.append(t)
        return t

    monkeypatch.setattr(matplotlib.axes.Axes, "text", spy)
    picture.render(_five_back_to_back_runs(), epoch(0), tmp_path / "t.png", marks=marks)
    fig = texts[0].figure
    FigureCanvasAgg(fig).draw()
    shown = [t for t in fig.findobj(matplotlib.text.Text) if t.get_visible() and t.get_text().strip()]
    return shown, texts, fig


def _overlapping(shown) -> list[tuple[str, str]]:
    boxes = [t.get_window_extent() for t in shown]
    return [(shown[i].get_text(), shown[j].get_text()) for i, a in enumerate(boxes) for j, b in enumerate(boxes)
            if i < j and a.overlaps(b)]


def test_crowded_marks_are_numbered_with_a_key_under_the_picture(tmp_path, monkeypatch):
    """Trial 6 (defect 6): eight marks within a second needed more rows than there are, so their
    labels were printed over each other. Now each mark shows its number and the key lists them."""
    marks = [(epoch(2) + 0.1 * k, f"patch resize memory to {k}00Mi") for k in range(8)]
    shown, _, fig = _texts_of(tmp_path, monkeypatch, marks)
    assert not _overlapping(shown)
    ours = [t for t in shown if t.get_color() == picture.MARK_COLOUR]  # the marks' numbers and the key
    assert all(0 <= b.x0 and b.x1 <= fig.bbox.width and 0 <= b.y0 and b.y1 <= fig.bbox.height
               for b in (t.get_window_extent() for t in ours))
    words = " ".join(t.get_text() for t in ours)
    assert all(f"[{n}] {label}" in words for n, (_, label) in enumerate(marks, start=1))


def test_a_mark_label_at_the_right_edge_ends_at_its_line(tmp_path, monkeypatch):
    """Trial 6 (defect 6): the label of a mark near the axis' right end ran past the frame."""
    label = "delete --grace-period=5 crash: a second delete that only shortens the grace"
    shown, texts, _ = _texts_of(tmp_path, monkeypatch, [(epoch(5) + 0.9, label)])
    (text,) = [t for t in texts if label in t.get_text()]
    frame = text.axes.bbox
    box = text.get_window_extent()
    assert frame.x0 <= box.x0 and box.x1 <= frame.x1, f"label {box.x0:.0f}–{box.x1:.0f} px, frame {frame.x0:.0f}–{frame.x1:.0f} px"
    assert not _overlapping(shown)
