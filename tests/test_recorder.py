"""The recorder outlives a dropped watch (reconnects from its last resourceVersion and marks the
gap) and a dead recorder is never silent (Recorder.check raises). The API is faked at the
watch stream; no cluster."""

from __future__ import annotations

import json
import threading
import time
from types import SimpleNamespace

import pytest
from kubernetes.client.exceptions import ApiException
from urllib3.exceptions import ProtocolError

import e2e.record.recorder as recorder_module
from e2e.record.recorder import GAP_KIND, Change, Recorder, RecorderDied, written_before
from e2e.record.timeline import format_table, rows


def pod(name: str, rv: str) -> dict:
    return {"kind": "Pod", "metadata": {"name": name, "resourceVersion": rv}, "status": {"phase": "Running"}}


class Script:
    """What successive watch streams do: raise, yield events, or idle."""

    def __init__(self, steps):
        self.steps = list(steps)
        self.calls: list[str | None] = []
        self.lock = threading.Lock()

    def next(self, rv):
        with self.lock:
            self.calls.append(rv)
            return self.steps.pop(0) if self.steps else "idle"


def fake_watch(script: Script):
    class FakeWatch:
        def stream(self, func, namespace, resource_version=None, **kw):
            step = script.next(resource_version)
            if isinstance(step, BaseException):
                raise step
            if step == "idle":
                time.sleep(0.05)
                return
            yield from step

        def stop(self):
            pass

    return FakeWatch


class Lists:
    """The Pod list: the n-th full list answers resourceVersion ``versions[n]`` (the last one
    again after that) with pod ``a`` at that version; a ``limit=1`` probe answers ``probe``
    (an exception is raised) and is counted."""

    def __init__(self, versions=("10",), probe=None):
        self.versions, self.probe = list(versions), probe
        self.full = self.probes = 0

    def __call__(self, namespace, _preload_content=True, limit=None, _request_timeout=None):
        if limit is not None:
            self.probes += 1
            if isinstance(self.probe, BaseException):
                raise self.probe
        else:
            self.full += 1
        rv = self.versions[min(self.full, len(self.versions)) - 1] if self.full else self.versions[0]
        return SimpleNamespace(data=json.dumps({"metadata": {"resourceVersion": rv}, "items": [pod("a", rv)]}))


def make(monkeypatch, steps, lists: Lists | None = None) -> tuple[Recorder, Script]:
    script = Script(steps)
    monkeypatch.setattr(recorder_module.watch, "Watch", fake_watch(script))
    monkeypatch.setattr(recorder_module.Recorder, "_error", _fast_error)
    rec = Recorder(SimpleNamespace(), "ns", ["Pod"])
    rec._list = {"Pod": lists or Lists()}
    return rec, script


def _fast_error(self, kind, err):
    """Recorder._error with a 0.2 s retry instead of 1 s."""
    msg = f"{kind} watch: {type(err).__name__}: {err}"
    with self._lock:
        self.errors.append(msg)
        self._down_since.setdefault(kind, (time.time(), msg))
    time.sleep(0.2)


def wait(cond, timeout=5.0):
    end = time.time() + timeout
    while time.time() < end:
        if cond():
            return True
        time.sleep(0.02)
    return False


def test_a_dropped_watch_reconnects_from_its_resource_version_and_marks_the_gap(monkeypatch):
    event = {"type": "MODIFIED", "raw_object": pod("a", "11")}
    rec, script = make(monkeypatch, [[event], ProtocolError("connection reset"), ConnectionRefusedError("refused"), []])
    before = time.time()
    with rec:
        assert wait(lambda: len(rec.changes(GAP_KIND)) >= 2)
    first, second = rec.changes(GAP_KIND)[:2]
    assert first.name == "Pod" and first.obj["to"] - first.obj["from"] >= 0.15  # retried after 0.2 s
    assert "ProtocolError" in first.obj["error"] and "ConnectionRefusedError" in second.obj["error"]
    # watched from the list's version, then resumed from the last event's, never from scratch
    assert script.calls[:4] == ["10", "11", "11", "11"]
    assert [c.type for c in rec.changes("Pod")] == ["LISTED", "MODIFIED"]
    rec.check()  # reconnected: alive
    with pytest.raises(RecorderDied, match="gap in the checked window: Pod watch down"):
        rec.check(since=before)
    table = format_table(rows(rec.changes(), before))
    assert "recorder/Pod" in table and "GAP" in table


def test_a_killed_watch_thread_makes_the_recorder_dead(monkeypatch):
    rec, _ = make(monkeypatch, [])
    with rec:
        rec.check()
        rec.kill("Pod", "killed by a test")
        assert wait(lambda: not rec._threads[0].is_alive())
        with pytest.raises(RecorderDied, match="the recorder died.*Pod watch ended: RuntimeError: killed by a test"):
            rec.check()


def test_an_outage_is_retried_with_back_off_and_the_gap_closes_once():
    """An API server away for many attempts (NF-7): waits of 1, 2, 4, 4 … s, one GAP when it is back."""
    rec = Recorder(SimpleNamespace(), "ns", ["Pod"])
    waits = []
    rec._stop = SimpleNamespace(wait=waits.append, is_set=lambda: False)
    for _ in range(5):
        rec._error("Pod", ConnectionRefusedError("refused"))
    assert waits == [1.0, 2.0, 4.0, 4.0, 4.0]
    rec._close_gap("Pod")
    rec._error("Pod", ConnectionRefusedError("refused again"))
    assert waits[-1] == 1.0  # a new outage starts the back-off again
    assert [g.type for g in rec.changes(GAP_KIND)] == ["GAP"]


# -- 410 Gone and BOOKMARK ----------------------------------------------------------------


def test_a_bookmark_moves_the_resource_version_and_records_nothing(monkeypatch):
    bookmark = {"type": "BOOKMARK", "raw_object": {"kind": "Pod", "metadata": {"resourceVersion": "15"}}}
    rec, script = make(monkeypatch, [[bookmark], [{"type": "MODIFIED", "raw_object": pod("a", "16")}]])
    with rec:
        assert wait(lambda: len(script.calls) >= 3)
    assert script.calls[:3] == ["10", "15", "16"]  # the next watch starts at the bookmark's version
    assert [c.type for c in rec.changes("Pod")] == ["LISTED", "MODIFIED"]  # no change for the bookmark
    assert not rec.errors and not rec.gaps()


@pytest.mark.parametrize("gone", [
    [{"type": "ERROR", "raw_object": {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old resource version"}}],
    ApiException(status=410, reason="Gone"),
], ids=["error event", "exception"])
def test_410_gone_relists_and_watches_from_the_new_list(monkeypatch, gone):
    lists = Lists(versions=("10", "20"))
    rec, script = make(monkeypatch, [gone, [{"type": "MODIFIED", "raw_object": pod("a", "21")}]], lists)
    with rec:
        assert wait(lambda: len(script.calls) >= 3)
    assert lists.full == 2  # the start's list, then one re-list
    assert script.calls[:3] == ["10", "20", "21"]  # the stale version is never asked for again
    assert [(c.type, c.obj["metadata"]["resourceVersion"]) for c in rec.changes("Pod")] == [
        ("LISTED", "10"), ("LISTED", "20"), ("MODIFIED", "21")]
    assert not rec.errors and not rec.gaps()  # a 410 is no outage
    rec.check()


def test_after_an_outage_a_410_probe_counts_as_the_api_back_then_the_watch_relists(monkeypatch):
    lists = Lists(versions=("10", "30"), probe=ApiException(status=410, reason="Gone"))
    rec, script = make(monkeypatch, [ProtocolError("connection reset"), ApiException(status=410, reason="Gone")], lists)
    with rec:
        assert wait(lambda: len(script.calls) >= 3)
    assert lists.probes == 1 and lists.full == 2
    assert script.calls[:3] == ["10", "10", "30"]
    (gap,) = rec.changes(GAP_KIND)  # closed once, by the probe the API answered (with 410)
    assert "ProtocolError" in gap.obj["error"]
    assert [c.type for c in rec.changes("Pod")] == ["LISTED", "LISTED"]
    rec.check()


def test_a_watch_error_other_than_410_is_an_outage_not_a_relist(monkeypatch):
    error = {"type": "ERROR", "raw_object": {"kind": "Status", "code": 500, "reason": "InternalError"}}
    lists = Lists()
    rec, script = make(monkeypatch, [[error]], lists)
    with rec:
        assert wait(lambda: len(rec.changes(GAP_KIND)) >= 1)
    assert lists.full == 1 and lists.probes == 1
    assert "watch error" in rec.changes(GAP_KIND)[0].obj["error"] and script.calls[:2] == ["10", "10"]


def _written(rv: str | None, received_at: float, kind: str = "Pod") -> Change:
    meta = {"name": "x", **({"resourceVersion": rv} if rv is not None else {})}
    return Change(received_at, kind, "MODIFIED", "x", {"metadata": meta})


def test_written_before_reads_the_revision_not_the_receive_time():
    # a Job's change caused by a pod's, received first on its own stream: the revisions keep the write order
    pod, job = _written("1041", 10.003, "Pod"), _written("1042", 10.001, "Job")
    assert written_before(pod, job) and not written_before(job, pod)
    assert written_before(_written("999", 5.0), _written("1000", 4.0))  # numbers, not text ("999" > "1000")
    with pytest.raises(ValueError, match=r"Pod/x received at 3.0 has no numeric resourceVersion \(None\)"):
        written_before(_written(None, 3.0), pod)
    with pytest.raises(ValueError, match=r"Job/x received at 3.0 has no numeric resourceVersion \('abc'\)"):
        written_before(pod, _written("abc", 3.0, "Job"))
