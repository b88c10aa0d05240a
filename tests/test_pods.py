"""The shared pod vocabulary (e2e.record.pods) and the scenario's named waits and pod delete, on
synthetic pods and recordings (no cluster)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from helpers import change, cstatus, event, pod, running, terminated, waiting

from e2e.record import pods
from e2e.record.recorder import Change
from e2e.run.scenario import Scenario
from e2e.base.waiting import WaitTimeout

SIDECAR_POD = pod("p", sidecars=("sidecar",), phase="Running", conditions={"Ready": "True"},
                  init_statuses=[cstatus("sidecar", running(1), last=terminated(1, "Error"), restarts=1)],
                  statuses=[cstatus("app", waiting("CrashLoopBackOff"))])


def test_reading_a_pod():
    assert set(pods.container_statuses(SIDECAR_POD)) == {"sidecar", "app"}
    assert pods.container_status(SIDECAR_POD, "sidecar")["restartCount"] == 1
    assert pods.container_status(SIDECAR_POD, "nope") == {} and pods.container_status(None, "app") == {}
    assert pods.state(SIDECAR_POD, "sidecar") == "running" and pods.state(SIDECAR_POD, "app") == "waiting"
    assert pods.state(None, "app") is None
    assert pods.phase(SIDECAR_POD) == "Running" and pods.phase(None) is None
    assert pods.condition(SIDECAR_POD, "Ready") == {"type": "Ready", "status": "True"}
    assert pods.condition(SIDECAR_POD, "PodScheduled") is None
    assert pods.last_termination(SIDECAR_POD, "sidecar")["reason"] == "Error"
    assert pods.last_termination(SIDECAR_POD, "app") == {}


def test_reading_a_recording():
    run = pod("p", statuses=[cstatus("app", running(0))])
    ended = pod("p", statuses=[cstatus("app", terminated(137, "Error"))], deletion="2026-11-29T00:00:05Z")
    again = pod("p", statuses=[cstatus("app", terminated(143, "Error"))], deletion="2026-11-29T00:00:05Z")
    changes = [change(0, run), change(1, ended), change(2, again), change(3, again, "DELETED")]
    ch, term = pods.first_terminated(changes, "app")
    assert ch is changes[1] and term["exitCode"] == 137
    assert pods.last_terminated(changes, "app")["exitCode"] == 143 and pods.last_terminated(changes[:1], "app") == {}
    assert pods.first_terminated(changes[:1], "app") is None
    assert pods.deletion_seen(changes) is changes[1] and pods.deletion_seen(changes[:1]) is None
    assert pods.gone(changes) and not pods.gone(changes[:3]) and not pods.gone([])
    events = [change(0, event("e1", "Killing", "Stopping container app")), change(1, event("e2", "Killing", "x", involved="q")),
              change(2, event("e3", "Pulled", "y"))]
    assert [c.obj["metadata"]["name"] for c in pods.events_of(events, "Killing")] == ["e1", "e2"]
    assert [c.obj["metadata"]["name"] for c in pods.events_of(events, "Killing", "q")] == ["e2"]


class Recording:
    """A recorder whose pod ``p`` goes through ``states`` one poll at a time."""

    kinds = ("Pod", "Event")
    started_at = 0.0

    def __init__(self, *states: dict):
        self.states, self.polls = list(states), 0

    def latest(self, kind, name):
        self.polls += 1
        return self.states[min(self.polls - 1, len(self.states) - 1)]

    def changes(self, kind=None, name=None):
        self.polls += 1
        return [Change(float(i), "Pod", "MODIFIED", "p", s) for i, s in enumerate(self.states[:self.polls])]

    def check(self, since=None):
        pass


def scenario(recorder, kube=None) -> Scenario:
    return Scenario(kube, "ns", recorder, judge=None, manifest_dir=Path("."), kubernetes_minor=37, cgroup=2)


def test_named_waits_return_what_they_found():
    pending, running_ = pod("p", phase="Pending"), pod("p", phase="Running", statuses=[cstatus("app", running(0))])
    assert scenario(Recording(pending, running_)).wait(pods.pod_phase("p", "Running", "Succeeded"), 5, interval_s=0.01) == "Running"
    assert scenario(Recording(pending, running_)).wait(pods.container_running("p"), 5, interval_s=0.01) is True
    done = pod("p", statuses=[cstatus("app", terminated(0, "Completed"))])
    ch, term = scenario(Recording(running_, done)).wait(pods.container_terminated("p"), 5, interval_s=0.01)
    assert term["reason"] == "Completed" and ch.obj is done
    ready = pod("p", conditions={"Ready": "True"})
    assert scenario(Recording(pending, ready)).wait(pods.pod_ready("p"), 5, interval_s=0.01)["status"] == "True"
    assert scenario(Recording(pending)).wait(pods.until("a fact", lambda sc: 42), 1) == 42


def test_a_named_wait_times_out_with_its_name():
    with pytest.raises(WaitTimeout, match="p Running"):
        scenario(Recording(pod("p", phase="Pending"))).wait(pods.pod_phase("p", "Running"), 0.05, interval_s=0.01)


def test_delete_pod_sends_the_grace_period_and_marks_the_delete():
    calls = []
    kube = SimpleNamespace(core=SimpleNamespace(delete_namespaced_pod=lambda name, ns, **kw: calls.append((name, ns, kw))))
    sc = scenario(Recording(pod()), kube)
    t = sc.delete_pod("web", grace_period_s=3)
    sc.delete_pod("db")
    assert calls == [("web", "ns", {"grace_period_seconds": 3}), ("db", "ns", {})]
    assert sc.marks[0] == (t, "delete web (grace 3 s)") and sc.marks[1][1] == "delete db"


def test_terminated_runs_and_ever_started():
    first = terminated(137, "Error", started=0, finished=1, cid="c1")
    first_oom = terminated(137, "OOMKilled", started=0, finished=1, cid="c1")
    second = terminated(137, "OOMKilled", started=2, finished=3, cid="c2")
    changes = [change(0, pod("p", statuses=[cstatus("app", waiting("ContainerCreating"))])),
               change(1, pod("p", statuses=[cstatus("app", first)])),
               change(2, pod("p", statuses=[cstatus("app", first_oom)])),
               change(3, pod("p", statuses=[cstatus("app", running(2), last=first_oom)])),
               change(4, pod("p", statuses=[cstatus("app", second, last=first_oom)]))]
    runs = pods.terminated_runs(changes, "app")
    assert [(cid, reasons) for cid, _, reasons in runs] == [("c1", ["Error", "OOMKilled"]), ("c2", ["OOMKilled"])]
    assert pods.terminated_runs(changes[:1], "app") == []
    assert pods.ever_started(changes, "app") and not pods.ever_started(changes[:1], "app")
    assert pods.ever_started([change(0, pod("p", statuses=[cstatus("app", waiting("x"), started=True)]))], "app")
