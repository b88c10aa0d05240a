"""Container histories, attempts, restart gaps and the readable table (e2e.record.timeline), and the
recording's JSON round trip (e2e.record.recorder.dump_changes / load_changes)."""

from __future__ import annotations

import pytest
from helpers import change, cstatus, epoch, event, pod, running, terminated, ts, waiting

from e2e.record.recorder import Change, dump_changes, load_changes
from e2e.record.timeline import (
    MARK, Attempt, Row, attempts, container_history, container_samples, excerpt, format_table, mark_rows, parse_time, restart_gaps, rows,
    status_sequence,
)

BACKOFF_MSG = "back-off 10s restarting failed container=app pod=crash_ns(uid-1)"


def crash_pod(status: dict, phase: str = "Running", ready: str = "False") -> dict:
    return pod("crash", phase=phase, statuses=[status], conditions={"Ready": ready})


@pytest.fixture
def crashloop() -> list[Change]:
    """A container that runs ~1 s and exits 1 under restartPolicy Always (CASES.md CL-1):
    runs start at 1, 2, 13 and 34 s (gaps 0, 10, 20 s). The run at 13 s is only ever seen
    as ``lastState``; one change repeats the previous status."""
    err = lambda s, f: terminated(1, "Error", s, f)  # noqa: E731
    return [
        change(0.1, crash_pod(cstatus("app", waiting("ContainerCreating")), phase="Pending"), "ADDED"),
        change(1.2, crash_pod(cstatus("app", running(1), ready=True, started=True), ready="True")),
        change(2.5, crash_pod(cstatus("app", err(1, 2), started=False))),
        change(3.1, crash_pod(cstatus("app", running(2), ready=True, started=True, restarts=1, last=err(1, 2)), ready="True")),
        change(4.2, crash_pod(cstatus("app", waiting("CrashLoopBackOff", BACKOFF_MSG), restarts=1, last=err(2, 3), started=False))),
        change(4.3, event("crash.1", "BackOff", "Back-off restarting failed container app", involved="crash", type_="Warning", count=2)),
        change(15.0, crash_pod(cstatus("app", waiting("CrashLoopBackOff", BACKOFF_MSG.replace("10s", "20s")), restarts=2, last=err(13, 14), started=False))),
        change(16.0, crash_pod(cstatus("app", waiting("CrashLoopBackOff", BACKOFF_MSG.replace("10s", "20s")), restarts=2, last=err(13, 14), started=False))),
        change(34.4, crash_pod(cstatus("app", running(34), ready=True, started=True, restarts=3, last=err(13, 14)), ready="True")),
    ]


def test_parse_time():
    assert parse_time(ts(17)) == epoch(17)
    assert parse_time("2026-11-29T07:45:17Z") == epoch(17)
    assert parse_time("2026-11-29T07:45:17.250000Z") == pytest.approx(epoch(17) + 0.25)
    assert parse_time(None) is None
    assert parse_time("") is None


def test_attempts_merge_state_and_last_state_without_duplicates(crashloop):
    runs = attempts(crashloop, "crash", "app")
    assert runs == [
        Attempt(epoch(1), epoch(2), 1, "Error"),
        Attempt(epoch(2), epoch(3), 1, "Error"),  # seen running, its end only as lastState
        Attempt(epoch(13), epoch(14), 1, "Error"),  # never seen running
        Attempt(epoch(34), None, None, ""),  # still running
    ]


def test_attempts_ignore_other_pods_containers_and_kinds(crashloop):
    other = pod("other", statuses=[cstatus("app", running(50))])
    sidecar_named_app = pod("crash", statuses=[cstatus("helper", running(60))])
    changes = [*crashloop, change(40, other), change(41, sidecar_named_app)]
    assert [a.started_at for a in attempts(changes, "crash", "app")] == [epoch(1), epoch(2), epoch(13), epoch(34)]
    assert attempts(changes, "crash", "nope") == []


def test_attempts_include_init_containers():
    p = pod("init-fails", init=("init",), init_statuses=[cstatus("init", waiting("CrashLoopBackOff"), restarts=1, last=terminated(1, "Error", 5, 6))])
    assert attempts([change(7, p)], "init-fails", "init") == [Attempt(epoch(5), epoch(6), 1, "Error")]


def test_attempts_keep_two_runs_started_in_the_same_second():
    first = terminated(1, "Error", 5, 5, cid="containerd://a")  # ran 0.3 s within second 5
    changes = [
        change(5.5, crash_pod(cstatus("app", first, cid="containerd://a"))),
        # restarted in second 5
        change(5.9, crash_pod(cstatus("app", running(5), ready=True, restarts=1, last=first, cid="containerd://b"))),
    ]
    runs = attempts(changes, "crash", "app")
    assert len(runs) == 2  # restartCount 1 = two runs


def test_restart_gaps(crashloop):
    assert restart_gaps(attempts(crashloop, "crash", "app")) == [0.0, 10.0, 20.0]


def test_restart_gaps_stop_at_a_run_whose_end_was_not_seen():
    runs = [Attempt(10, 11, 1, "Error"), Attempt(11, None, None, ""), Attempt(40, 41, 1, "Error")]
    assert restart_gaps(runs) == [0]
    assert restart_gaps([]) == []
    assert restart_gaps([Attempt(1, 2, 1, "Error")]) == []


def test_container_samples_cover_every_change(crashloop):
    samples = container_samples(crashloop, "crash")
    assert len(samples) == 8  # every pod change, the event excluded
    assert samples[0].state == "waiting" and samples[0].reason == "ContainerCreating"
    assert samples[2].exit_code == 1 and samples[2].finished_at == epoch(2)


def test_container_history_keeps_only_changes(crashloop):
    history = container_history(crashloop, "crash", "app")
    assert [(s.label, s.restart_count) for s in history] == [
        ("waiting(ContainerCreating)", 0),
        ("running", 0),
        ("terminated(Error)", 0),
        ("running", 1),
        ("waiting(CrashLoopBackOff)", 1),
        ("waiting(CrashLoopBackOff)", 2),  # same state, new restart count
        ("running", 3),  # the repeated change at 16 s is gone
    ]
    assert history[4].message == BACKOFF_MSG
    assert history[-1].received_at == epoch(0) + 34.4


def test_rows_show_status_changes_container_states_and_events(crashloop):
    table = rows(crashloop, epoch(0))
    statuses = [r.what for r in table if r.subject == "pod/crash" and not r.what.startswith("condition")]
    assert statuses == [
        "STATUS ContainerCreating",
        "STATUS Running",
        "STATUS Error",
        "STATUS Running",
        "STATUS CrashLoopBackOff",
        "STATUS Running",
    ]
    container_rows = [r for r in table if r.subject.strip() == "container crash/app"]
    assert len(container_rows) == 7
    events = [r for r in table if r.subject.startswith("event")]
    assert len(events) == 1
    assert events[0].subject == "event Pod/crash"
    assert events[0].what == "Warning BackOff"
    assert events[0].detail.endswith("(x2)")
    assert table[0].t == pytest.approx(0.1)
    assert [r.t for r in table] == sorted(r.t for r in table)


def test_an_events_row_names_its_container_and_a_long_detail_is_cut():
    """Trial 5: five "event Pod/msgs Container started" rows did not say which container, and a
    2457-character termination message filled one row."""
    started = [dict(event(f"e{i}", "Started", "Container started", involved="msgs"),
                    involvedObject={"kind": "Pod", "name": "msgs", "fieldPath": path})
               for i, path in enumerate(["spec.containers{file}", "spec.initContainers{init}", ""])]
    long = event("e9", "Failed", "B" * 2457, involved="msgs", type_="Warning")
    table = rows([change(i, e, "ADDED") for i, e in enumerate([*started, long])], epoch(0))
    assert [r.subject for r in table if r.subject.startswith("event")][:3] == ["event Pod/msgs/file", "event Pod/msgs/init", "event Pod/msgs"]
    text = format_table(table)
    (line,) = [ln for ln in text.splitlines() if "Warning Failed" in ln]
    assert line.endswith("BBBB… (2457 characters)") and len(line) < 450
    assert "B" * 250 in line


def test_rows_mark_deletion_and_endpoint_slices():
    p = pod("web", phase="Running", statuses=[cstatus("app", running(0), ready=True)], conditions={"Ready": "True"})
    slice_ = {
        "kind": "EndpointSlice",
        "metadata": {"name": "web-abc"},
        "endpoints": [{"targetRef": {"name": "web"}, "conditions": {"ready": False, "serving": True, "terminating": True}}],
    }
    table = rows([change(0, p), change(1, slice_), change(2, p, "DELETED")], epoch(0))
    assert [r.what for r in table if r.subject == "pod/web"] == ["STATUS Running", "condition Ready=True", "deleted"]
    (ep,) = [r for r in table if r.subject == "endpointslice/web-abc"]
    assert ep.what == "endpoint web"
    assert ep.detail == "ready=False serving=True terminating=True"


def test_a_second_delete_that_only_shortens_the_grace_is_a_row():
    """Trial 6, defect 5: a delete's metadata (deletionTimestamp, deletionGracePeriodSeconds) is a
    row when it changes — also a second delete that shortens the grace and changes nothing else."""
    running_pod = pod("web", phase="Running", statuses=[cstatus("app", running(0), ready=True)])

    def deleting(at: str, grace: int) -> dict:
        obj = pod("web", phase="Running", statuses=[cstatus("app", running(0), ready=True)], deletion=at)
        obj["metadata"]["deletionGracePeriodSeconds"] = grace
        return obj

    table = rows([change(0, running_pod), change(1, deleting(ts(21), 20)), change(4, deleting(ts(7), 6)),
                  change(5, deleting(ts(7), 6))], epoch(0))
    deletion = [(r.t, r.detail) for r in table if r.subject == "pod/web" and r.what == "deletion"]
    assert deletion == [(1.0, f"deletionTimestamp {ts(21)} deletionGracePeriodSeconds 20"),
                        (4.0, f"deletionTimestamp {ts(7)} deletionGracePeriodSeconds 6")]


def test_container_rows_name_their_pod():
    # issue 20 (7): with three pods, "container/app running restarts=1" was ambiguous
    changes = [change(i, pod(name, phase="Running", statuses=[cstatus("app", running(i), restarts=1)])) for i, name in enumerate("abc")]
    changes.append(change(4, pod("d", init=("setup",), init_statuses=[cstatus("setup", running(4))], statuses=[cstatus("app", waiting("PodInitializing"))])))
    subjects = [r.subject.strip() for r in rows(changes, epoch(0)) if "container" in r.subject]
    assert subjects == ["container a/app", "container b/app", "container c/app", "init container d/setup", "container d/app"]


def test_pod_conditions_are_rows_on_change():
    # issue 20 (7): DisruptionTarget, PodResizeInProgress, Ready=False with its reason
    def with_conditions(*conds: dict) -> dict:
        p = pod("web", phase="Running", statuses=[cstatus("app", running(0), ready=True)])
        p["status"]["conditions"] = list(conds)
        return p

    ready = {"type": "Ready", "status": "True"}
    not_ready = {"type": "Ready", "status": "False", "reason": "ContainersNotReady", "message": "containers with unready status: [app]"}
    target = {"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI", "message": "Eviction API: evicting"}
    changes = [
        change(0, with_conditions(ready)),
        change(1, with_conditions(ready)),  # no change: no row
        change(2, with_conditions(ready, target)),
        change(3, with_conditions(not_ready, target)),
    ]
    conds = [(r.t, r.what, r.detail) for r in rows(changes, epoch(0)) if r.what.startswith("condition")]
    assert conds == [
        (0, "condition Ready=True", ""),
        (2, "condition DisruptionTarget=True", "reason=EvictionByEvictionAPI message='Eviction API: evicting'"),
        (3, "condition Ready=False", "reason=ContainersNotReady message='containers with unready status: [app]'"),
    ]
    assert all(r.subject == "pod/web" for r in rows(changes, epoch(0)) if r.what.startswith("condition"))


def test_format_table(crashloop):
    text = format_table(rows(crashloop, epoch(0)))
    lines = text.splitlines()
    assert lines[0].split() == ["t", "(s)", "subject", "change", "detail"]
    assert "STATUS CrashLoopBackOff" in text
    assert "waiting(CrashLoopBackOff)" in text
    assert "Warning BackOff" in text and "Back-off restarting failed container app (x2)" in text
    assert "exit=1" in text
    assert "+34.400" in text
    assert format_table([]) == "(nothing recorded)\n"


def test_a_row_is_one_line_whatever_its_detail_and_the_table_ends_with_a_line_break():
    """A new user's fourth trial: a readiness probe's Unhealthy event (the kubelet's message ends
    with the probe's output and a newline) broke its row in two — "(x2)" alone on the next line —
    and timeline.txt had no final line break."""
    table = [Row(1.5, "event Pod/web", "Warning Unhealthy", "Readiness probe failed: cat: /tmp/ready: No such file\n (x2)"),
             Row(2.0, "event Pod/web", "Warning Unhealthy", "first line\n\n  second line  \n")]
    text = format_table(table)
    assert text.endswith("\n") and len(text.splitlines()) == 3
    assert text.splitlines()[1].endswith("Readiness probe failed: cat: /tmp/ready: No such file ⏎ (x2)")
    assert text.splitlines()[2].endswith("Warning Unhealthy  first line ⏎ second line")


def test_excerpt_around_a_moment_and_at_the_end(crashloop):
    table = rows(crashloop, epoch(0))
    near = excerpt(table, around=34, width_s=1)
    assert "STATUS Running" in near and "ContainerCreating" not in near
    tail = excerpt(table, limit=2)
    assert len(tail.splitlines()) == 3  # header + 2 rows
    assert "+34.400" in tail


def test_excerpt_keeps_the_rows_nearest_the_moment():
    # issue 20 (1): 60 rows at t = 0...59 s, around=40 used to show t = 10...34 (row 40 cut)
    table = [Row(float(t), "pod/p", f"row {t}") for t in range(60)]
    shown = [float(line.split()[0]) for line in excerpt(table, around=40).splitlines()[1:]]
    assert 40.0 in shown
    assert shown == [float(t) for t in range(28, 53)]  # 25 rows centred on 40, in time order
    # near the edge of the recording the window keeps the nearest rows that exist
    early = [float(line.split()[0]) for line in excerpt(table, around=1, width_s=30).splitlines()[1:]]
    assert early == [float(t) for t in range(0, 25)]


def test_excerpt_keeps_the_last_actions_before_the_moment_within_its_limit():
    # issue 29 (5): 60 rows at t = 0...59 s, an action at t = 0.5, 5.5, ... 55.5 s
    table = sorted([Row(float(t), "pod/p", f"row {t}") for t in range(60)]
                   + mark_rows([(100.5 + t, f"act {t}") for t in range(0, 60, 5)], 100.0), key=lambda r: r.t)

    def shown(text: str) -> tuple[list[str], list[str]]:
        lines = [line.split(maxsplit=2) for line in text.splitlines()[1:]]
        return [what.strip() for _, subject, what in lines if subject == MARK], [t for t, subject, _ in lines if subject != MARK]

    actions, others = shown(excerpt(table, around=50, width_s=5))
    # the last 8 actions up to the moment, however long before; one after it, within the window
    assert actions == [f"act {t}" for t in range(10, 50, 5)] + ["act 50"]
    assert others == [f"+{t}.000" for t in range(45, 56)]
    assert len(excerpt(table, around=50, width_s=30).splitlines()) == 1 + 25  # the limit holds, actions included
    actions, others = shown(excerpt(table, limit=10, actions=3))  # at the end
    assert actions == ["act 45", "act 50", "act 55"] and others == [f"+{t}.000" for t in range(53, 60)]


def test_excerpt_of_a_short_recording_keeps_every_row():
    # a new user's trial: 20 rows and 1 action showed the action and the last 4 rows only
    # (rest[len(rest) - room:] with room 24 > 20 rows: index -4), leaving out the events that
    # explained the failure
    table = sorted([Row(0.75, "event Pod/web", "Warning FailedPostStartHook"), Row(0.757, "event Pod/web", "Normal Killing")]
                   + [Row(1.0 + i / 10, "pod/web", f"row {i}") for i in range(18)]
                   + mark_rows([(100.0, "apply pod.yaml")], 100.0), key=lambda r: r.t)
    text = excerpt(table)
    assert len(text.splitlines()) == 1 + 21 and "FailedPostStartHook" in text and "Killing" in text


def test_dump_and_load_changes_round_trip(crashloop, tmp_path):
    path = tmp_path / "recording.json"
    path.write_text(dump_changes(crashloop))
    loaded = load_changes(path)
    assert loaded == crashloop
    assert all(isinstance(c, Change) for c in loaded)
    assert restart_gaps(attempts(loaded, "crash", "app")) == [0.0, 10.0, 20.0]


def test_dump_empty_recording(tmp_path):
    path = tmp_path / "empty.json"
    path.write_text(dump_changes([]))
    assert load_changes(path) == []


def test_status_sequence_follows_kubectl_and_drops_repeats():
    init_run = pod("p", init=("init",), phase="Pending", init_statuses=[cstatus("init", running(1))],
                   statuses=[cstatus("app", waiting("PodInitializing"))])
    init_err = pod("p", init=("init",), phase="Pending", init_statuses=[cstatus("init", terminated(1, "Error", 1, 2))],
                   statuses=[cstatus("app", waiting("PodInitializing"))])
    backoff = pod("p", init=("init",), phase="Pending", init_statuses=[cstatus("init", waiting("CrashLoopBackOff"), restarts=1)],
                  statuses=[cstatus("app", waiting("PodInitializing"))])
    other = pod("q", phase="Running", statuses=[cstatus("app", running(1), ready=True)])
    changes = [change(1, init_run), change(1.5, init_run), change(2, init_err), change(2.1, other), change(3, backoff)]
    assert status_sequence(changes, "p") == ["Init:0/1", "Init:Error", "Init:CrashLoopBackOff"]


def test_rows_of_further_kinds_show_fields_and_conditions_on_change():
    # issue 20 (8): Jobs, Deployments, PDBs and Nodes recorded on request appear in the timeline
    job = {"kind": "Job", "metadata": {"name": "once"}, "status": {"active": 1}}
    done = {"kind": "Job", "metadata": {"name": "once"},
            "status": {"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]}}
    pdb = {"kind": "PodDisruptionBudget", "metadata": {"name": "web"},
           "status": {"expectedPods": 1, "currentHealthy": 1, "desiredHealthy": 1, "disruptionsAllowed": 0,
                      "conditions": [{"type": "DisruptionAllowed", "status": "False", "reason": "InsufficientPods"}]}}
    node = {"kind": "Node", "metadata": {"name": "n1"}, "spec": {"unschedulable": True,
            "taints": [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]},
            "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}}
    schedulable = {"kind": "Node", "metadata": {"name": "n2"}, "spec": {}, "status": {}}
    table = rows([change(0, job, "ADDED"), change(1, job), change(2, done), change(3, pdb), change(4, node), change(5, done, "DELETED"),
                  change(6, schedulable)], epoch(0))
    got = [(r.t, r.subject, r.what, r.detail) for r in table]
    assert got == [
        (0, "job/once", "status", "active=1 ready=0 succeeded=0 failed=0 terminating=0"),
        (2, "job/once", "status", "active=0 ready=0 succeeded=1 failed=0 terminating=0"),
        (2, "job/once", "condition Complete=True", ""),
        (3, "poddisruptionbudget/web", "status", "expectedPods=1 currentHealthy=1 desiredHealthy=1 disruptionsAllowed=0"),
        (3, "poddisruptionbudget/web", "condition DisruptionAllowed=False", "reason=InsufficientPods"),
        (4, "node/n1", "status", "spec.unschedulable=True spec.taints=node.kubernetes.io/unschedulable:NoSchedule"),
        (4, "node/n1", "condition Ready=True", "reason=KubeletReady"),
        (5, "job/once", "deleted", ""),
        (6, "node/n2", "status", "spec.unschedulable=False spec.taints=none"),
    ]
