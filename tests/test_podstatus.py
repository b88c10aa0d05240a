"""pod_columns against kubectl's printPod (pkg/printers/internalversion/printers.go)."""

from __future__ import annotations

from helpers import cstatus, pod, running, terminated, ts, waiting

from e2e.record.podstatus import PodColumns, pod_columns


def test_pending_pod_without_statuses():
    assert pod_columns(pod(phase="Pending")) == PodColumns(ready="0/1", status="Pending", restarts=0)


def test_pod_without_status_at_all():
    p = pod()
    del p["status"]
    assert pod_columns(p) == PodColumns(ready="0/1", status="", restarts=0)


def test_scheduling_gated_overrides_phase():
    p = pod(phase="Pending")
    p["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]
    assert pod_columns(p).status == "SchedulingGated"


def test_status_reason_overrides_phase():
    assert pod_columns(pod(phase="Failed", reason="Evicted")).status == "Evicted"


def test_first_plain_init_container_running():
    p = pod(
        init=("init-a", "init-b"),
        phase="Pending",
        init_statuses=[cstatus("init-a", running(0)), cstatus("init-b", waiting("PodInitializing"))],
        statuses=[cstatus("app", waiting("PodInitializing"))],
    )
    assert pod_columns(p) == PodColumns(ready="0/1", status="Init:0/2", restarts=0)


def test_second_plain_init_container_running():
    p = pod(
        init=("init-a", "init-b"),
        phase="Pending",
        init_statuses=[cstatus("init-a", terminated(0, "Completed")), cstatus("init-b", running(2))],
        statuses=[cstatus("app", waiting("PodInitializing"))],
    )
    assert pod_columns(p).status == "Init:1/2"


def test_init_error():
    p = pod(
        init=("init",),
        phase="Pending",
        init_statuses=[cstatus("init", terminated(1, "Error"))],
        statuses=[cstatus("app", waiting("PodInitializing"))],
    )
    assert pod_columns(p) == PodColumns(ready="0/1", status="Init:Error", restarts=0)


def test_init_terminated_without_reason_shows_exit_code_or_signal():
    exit_code = pod(init=("init",), init_statuses=[cstatus("init", terminated(3))])
    signal = pod(init=("init",), init_statuses=[cstatus("init", terminated(137, signal=9))])
    assert pod_columns(exit_code).status == "Init:ExitCode:3"
    assert pod_columns(signal).status == "Init:Signal:9"


def test_init_crash_loop_back_off_counts_init_restarts():
    p = pod(
        init=("init",),
        phase="Pending",
        init_statuses=[
            cstatus("init", waiting("CrashLoopBackOff", "back-off 20s restarting failed container=init"), restarts=3, last=terminated(1, "Error"))
        ],
        statuses=[cstatus("app", waiting("PodInitializing"))],
    )
    assert pod_columns(p) == PodColumns(ready="0/1", status="Init:CrashLoopBackOff", restarts=3)


def test_pod_initializing_after_inits_done():
    p = pod(
        init=("init-a", "init-b"),
        phase="Pending",
        init_statuses=[cstatus("init-a", terminated(0, "Completed")), cstatus("init-b", terminated(0, "Completed", 1, 2))],
        statuses=[cstatus("app", waiting("PodInitializing"))],
        conditions={"Initialized": "True"},
    )
    assert pod_columns(p) == PodColumns(ready="0/1", status="PodInitializing", restarts=0)


def test_native_sidecar_counts_in_ready():
    p = pod(
        sidecars=("proxy",),
        phase="Running",
        init_statuses=[cstatus("proxy", running(0), ready=True, started=True)],
        statuses=[cstatus("app", running(1), ready=True, started=True)],
        conditions={"Initialized": "True", "Ready": "True"},
    )
    assert pod_columns(p) == PodColumns(ready="2/2", status="Running", restarts=0)


def test_native_sidecar_started_but_not_ready_is_not_counted():
    p = pod(
        sidecars=("proxy",),
        phase="Running",
        init_statuses=[cstatus("proxy", running(0), ready=False, started=True)],
        statuses=[cstatus("app", running(1), ready=True, started=True)],
        conditions={"Initialized": "True"},
    )
    assert pod_columns(p).ready == "1/2"


def test_plain_init_before_sidecar_status_shows_progress_and_total_counts_sidecar():
    # CASES.md SC-1: Init:0/2 with a plain init container followed by a sidecar.
    p = pod(
        init=("setup",),
        sidecars=("proxy",),
        phase="Pending",
        init_statuses=[cstatus("setup", running(0)), cstatus("proxy", waiting("PodInitializing"), started=False)],
        statuses=[cstatus("app", waiting("PodInitializing"))],
    )
    assert pod_columns(p) == PodColumns(ready="0/2", status="Init:0/2", restarts=0)


def test_sidecar_restarts_are_kept_once_initialized():
    p = pod(
        init=("setup",),
        sidecars=("proxy",),
        phase="Running",
        init_statuses=[
            cstatus("setup", terminated(0, "Completed"), restarts=2),  # a plain init's restarts are dropped
            cstatus("proxy", running(5), ready=True, started=True, restarts=4),
        ],
        statuses=[cstatus("app", running(6), ready=True, restarts=1)],
        conditions={"Initialized": "True", "Ready": "True"},
    )
    assert pod_columns(p) == PodColumns(ready="2/2", status="Running", restarts=5)


def test_main_container_crash_loop_back_off():
    p = pod(
        phase="Running",
        statuses=[cstatus("app", waiting("CrashLoopBackOff", "back-off 10s restarting failed container=app"), restarts=2, last=terminated(1, "Error"))],
        conditions={"Ready": "False"},
    )
    assert pod_columns(p) == PodColumns(ready="0/1", status="CrashLoopBackOff", restarts=2)


def test_completed():
    p = pod(phase="Succeeded", statuses=[cstatus("app", terminated(0, "Completed"))], conditions={"Ready": "False"})
    assert pod_columns(p) == PodColumns(ready="0/1", status="Completed", restarts=0)


def test_main_terminated_error():
    p = pod(phase="Failed", statuses=[cstatus("app", terminated(1, "Error"))])
    assert pod_columns(p).status == "Error"


def test_completed_with_another_container_running_and_ready_pod_is_running():
    p = pod(
        containers=("job", "helper"),
        phase="Running",
        statuses=[cstatus("job", terminated(0, "Completed")), cstatus("helper", running(0), ready=True)],
        conditions={"Ready": "True"},
    )
    assert pod_columns(p) == PodColumns(ready="1/2", status="Running", restarts=0)


def test_completed_with_another_container_running_and_no_ready_condition_is_not_ready():
    p = pod(
        containers=("job", "helper"),
        phase="Running",
        statuses=[cstatus("job", terminated(0, "Completed")), cstatus("helper", running(0), ready=True)],
    )
    assert pod_columns(p).status == "NotReady"


def test_completed_with_another_container_running_and_ready_false_is_not_ready():
    # CASES.md SC-4's negative control: the Job's main container completed, the helper (a plain
    # second container) keeps running; the pod's Ready condition is False (not all containers ready).
    p = pod(
        containers=("job", "helper"),
        phase="Running",
        statuses=[cstatus("job", terminated(0, "Completed")), cstatus("helper", running(0), ready=True)],
        conditions={"Ready": "False", "ContainersReady": "False"},
    )
    assert pod_columns(p).status == "NotReady"


def test_terminating_when_deletion_timestamp_set_and_running():
    p = pod(
        phase="Running",
        statuses=[cstatus("app", running(0), ready=True)],
        conditions={"Ready": "True"},
        deletion=ts(30),
    )
    assert pod_columns(p) == PodColumns(ready="1/1", status="Terminating", restarts=0)


def test_no_terminating_for_terminal_phase():
    p = pod(phase="Succeeded", statuses=[cstatus("app", terminated(0, "Completed"))], deletion=ts(30))
    assert pod_columns(p).status == "Completed"


def test_node_lost_with_deletion_is_unknown():
    p = pod(phase="Running", reason="NodeLost", statuses=[cstatus("app", running(0), ready=True)], deletion=ts(30))
    assert pod_columns(p).status == "Unknown"


def test_restart_counts_are_summed_over_main_containers():
    p = pod(
        containers=("a", "b", "c"),
        phase="Running",
        statuses=[
            cstatus("a", running(0), ready=True, restarts=3),
            cstatus("b", waiting("CrashLoopBackOff"), restarts=4),
            cstatus("c", running(0), ready=True, restarts=0),
        ],
        conditions={"Ready": "False"},
    )
    cols = pod_columns(p)
    assert cols.restarts == 7
    assert cols.ready == "2/3"
    assert cols.status == "CrashLoopBackOff"


def test_first_container_in_declaration_order_wins_status():
    # printPod walks containerStatuses backwards, so the first declared container decides.
    p = pod(
        containers=("a", "b"),
        phase="Running",
        statuses=[cstatus("a", waiting("ImagePullBackOff")), cstatus("b", waiting("CrashLoopBackOff"))],
    )
    assert pod_columns(p).status == "ImagePullBackOff"


def test_init_status_for_unknown_container_name_does_not_crash():
    # kubernetes#124906: printPod panicked on an init status with no matching spec entry.
    p = pod(init=("init",), init_statuses=[cstatus("ghost", running(0))])
    assert pod_columns(p).status == "Init:0/1"
