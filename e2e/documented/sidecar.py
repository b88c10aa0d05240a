"""SC — native sidecars (CASES.md SC-1 … SC-7): init containers with ``restartPolicy: Always``.

Native sidecars are GA in Kubernetes 1.33 (CASES.md SC heading; [S1] "GA с 1.33"), so every
entry here applies from 1.33 on; the scenarios are marked ``min_k8s(33)`` and skip on older
clusters.

Order and sub-second timings are judged on timestamps the containers write themselves
(:mod:`e2e.evidence.stamps`, µs resolution, the node's kernel clock = the test process's clock); STATUS
and READY are kubectl's columns (:mod:`e2e.record.podstatus`). Times named ``*_ms`` are milliseconds,
``*_s`` seconds.

The mechanism, read in the kubelet of v1.34.4, v1.35.4, v1.36.3 and v1.37.2 (identical here):

- start: ``computeInitContainerActions`` (pkg/kubelet/kuberuntime/kuberuntime_container.go)
  starts the next init container only in a sync after the previous one exited 0 or, for a
  sidecar, is running and (if it has a startupProbe) its startup result is Success; main
  containers start in the sync after the last init container is done, one after another in
  ``SyncPod`` (pkg/kubelet/kuberuntime/kuberuntime_manager.go, ``ContainersToStart`` loop).
- stop: ``killContainersWithSyncResult`` kills every container in parallel with a
  ``terminationOrdering`` (pkg/kubelet/kuberuntime/kuberuntime_termination_order.go): a sidecar's
  ``waitForTurn`` waits for every main container and for the sidecars declared after it
  (reverse order), at most the remaining grace period; ``killContainer`` then subtracts the
  wait (``gracePeriod -= int64(waitForTurn(...))``, truncated) and raises what is left to
  ``minimumGracePeriodInSeconds = 2`` (kuberuntime_manager.go). containerd's CRI
  ``stopContainer`` (containerd v2.3.4 internal/cri/server/container_stop.go) sends the stop
  signal, waits that many seconds, then SIGKILL.
- readiness: ``GenerateContainersReadyCondition`` (pkg/kubelet/status/generate.go) counts
  restartable init containers like main containers ("containers with unready status: [...]").
"""

from __future__ import annotations

from ..judge.expectations import Band, Expectation, equal, register
from .crashloop import SINCE_MIN_BACKOFF_EXPIRATION, first_backoff, resync_late_s, resync_why
from .kubelet import CONTAINER_START_S, KUBELET_HANDOFF_S, MINIMUM_GRACE_PERIOD_S, PLEG_RELIST_S, SANDBOX_START_S, UPGRADE_PATH_READ

# Read in the kubelet of v1.34.4, v1.35.4, v1.36.3, v1.37.2 (module doc; fb61d9e, 975f36d: SC-5's back-off).
VERIFIED_IN = UPGRADE_PATH_READ

SINCE = (33, None)  # native sidecars GA in 1.33

S1_SIDECARS = "[S1] «Sidecar-контейнеры» (поведение) and the hello-pod walk-through"
S1_STOP = "[S1] «Жизненный цикл завершения», «Завершение по шагам»"
S0_STOP = "[S0] «Остановка пода по шагам» step 5"
UP_START = "[UP] pkg/kubelet/kuberuntime/kuberuntime_container.go computeInitContainerActions"
UP_MAIN_START = "[UP] pkg/kubelet/kuberuntime/kuberuntime_manager.go SyncPod (ContainersToStart loop)"
UP_ORDER = (
    "[UP] pkg/kubelet/kuberuntime/kuberuntime_container.go killContainersWithSyncResult + killContainer; "
    "kuberuntime_termination_order.go newTerminationOrdering/waitForTurn; test/e2e_node/container_lifecycle_test.go"
)
UP_MIN_GRACE = (
    "[UP] pkg/kubelet/kuberuntime/kuberuntime_manager.go minimumGracePeriodInSeconds = 2; "
    "kuberuntime_container.go killContainer (gracePeriod -= int64(waitForTurn); raised to the minimum); "
    "containerd v2.3.4 internal/cri/server/container_stop.go stopContainer (signal, wait timeout, SIGKILL)"
)
UP_READY = "[UP] pkg/kubelet/status/generate.go GenerateContainersReadyCondition"
UP_JOB = "[UP] pkg/kubelet/kuberuntime/kuberuntime_manager.go computePodActions (KillPod when no main container runs); pkg/controller/job/job_controller.go"

# -- scenario parameters (the manifests get them as placeholders) -------------------------
# SC-1: the plain init container runs this long; the sidecar's startupProbe succeeds only after
# the sidecar created its file this long after its start.
INIT_RUN_S = 1
STARTUP_DELAY_S = 3
# Every exec probe of the scenarios: periodSeconds 1, timeoutSeconds 1 (the default).
PROBE_PERIOD_S = 1.0
PROBE_TIMEOUT_S = 1.0
# SC-3: each container takes this long to exit after SIGTERM ("draining").
DRAIN_S = 1
# SC-3 pod's terminationGracePeriodSeconds: far above 3 × DRAIN_S, so no budget runs out.
SC3_GRACE_S = 10
# SC-4: the Job's main container works this long, then exits 0.
JOB_RUN_S = 2
# SC-6: the sidecar's readiness file exists from READY_AFTER_S to READY_AFTER_S + READY_FOR_S
# after its start.
READY_AFTER_S = 4
READY_FOR_S = 3
# SC-7: terminationGracePeriodSeconds; the main container ignores SIGTERM and spends it all.
SC7_GRACE_S = 4
# SC-5/SC-7: a container that logs "tick" lines does so every TICK_S seconds (busybox sleep 0.1).
TICK_S = 0.1

# -- how wide a band is, and why -----------------------------------------------------------
# How late a container-written stamp can be after the moment it marks: the CRI call → the
# signal → the shell's trap runs between commands (the scenarios wait on `sleep & wait`) →
# `now` forks adjtimex + awk (measured 2.4 ms per stamp on this node, idle). Budget 0.1 s.
STAMP_LAG_S = 0.1
# The Job controller batches syncs caused by pod updates (pkg/controller/job/job_controller.go
# SyncJobBatchPeriod = 1 s); one sync counts the Succeeded pod and writes Complete.
SYNC_JOB_BATCH_PERIOD_S = 1.0
# The test polls the Job every 0.25 s.
JOB_POLL_S = 0.25
# The pod worker's first terminating sync waits for a PLEG cache refresh newer than its last sync
# (pkg/kubelet/pod_workers.go podWorkerLoop: podCache.GetNewerThan(uid, lastSyncTime), "adds ~1s
# of latency on all transitions from sync to terminating"): up to one PLEG relist period when the
# pod synced shortly before the delete (measured on v1.37.2: 0.4–1.3 s when deleted 0.3 s after
# Running, 20–120 ms when deleted ≥ 3 s after).
TERMINATING_PLEG_WAIT_S = PLEG_RELIST_S


def ms(seconds: float) -> float:
    return round(seconds * 1000.0, 1)


def _ms(case: str, name: str, documented_s: float, low_s: float, high_s: float, why: str, source: str, minors=SINCE) -> Expectation:
    return Expectation(
        case=case, name=name, documented=ms(documented_s), unit="ms", band=Band(ms(low_s), ms(high_s)),
        why=why, source=source, minors=minors,
    )


def _s(case: str, name: str, documented_s: float, low_s: float, high_s: float, why: str, source: str, minors=SINCE) -> Expectation:
    return Expectation(
        case=case, name=name, documented=float(documented_s), unit="s", band=Band(round(low_s, 3), round(high_s, 3)),
        why=why, source=source, minors=minors,
    )


# -- SC-1 start order --------------------------------------------------------------------------
register(
    [
        equal("SC-1", "start_order", "init start → init exit → sidecar start → sidecar startup-ok → app start",
               f"{S1_SIDECARS}; {UP_START}", minors=SINCE),
        equal(
            "SC-1", "status_sequence",
            r"(.* → )?Init:0/2 → (.* → )?Init:1/2 → (.* → )?PodInitializing → (.* → )?Running( → .*)?",
            f"{S1_SIDECARS} (kubectl get -w: Init:0/2, Init:1/2, PodInitializing, Running); [UP] pkg/printers/internalversion/printers.go printPod",
            pattern=True, minors=SINCE,
        ),
        _ms("SC-1", "sidecar_start_after_init_exit_ms", 0, 0, PLEG_RELIST_S + CONTAINER_START_S,
            f"0: the next init container starts only after the previous exited; "
            f"+{PLEG_RELIST_S:g} s PLEG relist to see the exit +{CONTAINER_START_S:g} s container start",
            f"{S1_SIDECARS}; {UP_START}"),
        _ms("SC-1", "app_start_after_startup_ok_ms", 0, 0, KUBELET_HANDOFF_S + CONTAINER_START_S,
            f"0: the main container starts only after the sidecar's startupProbe succeeded; "
            f"+{KUBELET_HANDOFF_S:g} s probe result → pod sync hand-off +{CONTAINER_START_S:g} s container start",
            f"{S1_SIDECARS}; {UP_START} (startupManager result Success)"),
        _ms("SC-1", "app_start_after_sidecar_start_ms", STARTUP_DELAY_S, STARTUP_DELAY_S,
            STARTUP_DELAY_S + PROBE_PERIOD_S + PROBE_TIMEOUT_S + KUBELET_HANDOFF_S + CONTAINER_START_S,
            f"the sidecar's file appears {STARTUP_DELAY_S} s after its start (scenario); +{PROBE_PERIOD_S:g} s probe period "
            f"+{PROBE_TIMEOUT_S:g} s one exec probe (timeoutSeconds) +{KUBELET_HANDOFF_S:g} s hand-off +{CONTAINER_START_S:g} s container start",
            f"{S1_SIDECARS}; {UP_START}"),
        equal("SC-1", "main_running_only_after_sidecar_started", True,
               f"{S1_SIDECARS} (API view: no recorded pod status shows app running while the sidecar is not started); {UP_START}", minors=SINCE),
        equal("SC-1", "ready_column_running", "2/2",
               f"{S1_SIDECARS} (READY 2/2: the sidecar and the main container, not the finished init container); "
               "[UP] pkg/printers/internalversion/printers.go printPod", minors=SINCE),
    ],
    VERIFIED_IN,
)

# -- SC-2 main containers start together -----------------------------------------------------
register(
    [
        equal("SC-2", "start_order", "init exit → sidecar start → {container} start",
              f"[S1] «Под изнутри» steps 5–7; {UP_START}", minors=SINCE),
        _ms("SC-2", "main_start_spread_ms", 0, 0, CONTAINER_START_S,
            f"0: together, in one sync; SyncPod starts them one after another: +{CONTAINER_START_S:g} s container start "
            "per further container (2 main containers)",
            f"[S1] «Под изнутри» step 7 «основные контейнеры — все сразу»; {UP_MAIN_START}"),
        _ms("SC-2", "main_start_after_sidecar_start_ms", 0, 0, PLEG_RELIST_S + KUBELET_HANDOFF_S + CONTAINER_START_S,
            f"0: after the sidecar is running (no startupProbe); +{PLEG_RELIST_S:g} s PLEG relist to see it running "
            f"+{KUBELET_HANDOFF_S:g} s pod sync +{CONTAINER_START_S:g} s container start",
            f"[S1] «Под изнутри» steps 6–7; {UP_START}"),
    ],
    VERIFIED_IN,
)

# -- SC-3 stop order -----------------------------------------------------------------------------
UP_TERMINATING = "[UP] pkg/kubelet/pod_workers.go podWorkerLoop (podCache.GetNewerThan before the terminating sync)"
_SIGNAL_AFTER_DELETE_S = TERMINATING_PLEG_WAIT_S + KUBELET_HANDOFF_S
_SIGNAL_AFTER_DELETE_WHY = (
    f"+{TERMINATING_PLEG_WAIT_S:g} s the terminating sync waits for a PLEG refresh after a recent sync "
    f"+{KUBELET_HANDOFF_S:g} s delete → kubelet watch → pod worker → CRI StopContainer → signal → stamp"
)
_STOP_WHY_GAP = (
    f"0: a sidecar gets its signal only after the containers it waits for exited; +{KUBELET_HANDOFF_S:g} s: "
    "StopContainer returns on the exit → waitForTurn → a new CRI StopContainer → signal → stamp"
)
register(
    [
        equal("SC-3", "stop_order",
               "app sigterm → app exit → sidecar-2 sigterm → sidecar-2 exit → sidecar-1 sigterm → sidecar-1 exit",
               f"{S1_SIDECARS}; {S0_STOP}; {UP_ORDER}", minors=SINCE),
        _ms("SC-3", "sigterm_after_delete_ms[app]", 0, 0, _SIGNAL_AFTER_DELETE_S, "0: main containers are signalled at once (no preStop); " + _SIGNAL_AFTER_DELETE_WHY,
            f"{S1_STOP}; {UP_ORDER}; {UP_TERMINATING}"),
        _ms("SC-3", "sigterm_after_delete_ms[sidecar-2]", DRAIN_S, DRAIN_S, DRAIN_S + _SIGNAL_AFTER_DELETE_S + KUBELET_HANDOFF_S,
            f"after app drained {DRAIN_S} s (scenario); app's signal: " + _SIGNAL_AFTER_DELETE_WHY + f"; +{KUBELET_HANDOFF_S:g} s hand-off after app's exit",
            f"{S1_STOP}; {UP_ORDER}; {UP_TERMINATING}"),
        _ms("SC-3", "sigterm_after_delete_ms[sidecar-1]", 2 * DRAIN_S, 2 * DRAIN_S, 2 * DRAIN_S + _SIGNAL_AFTER_DELETE_S + 2 * KUBELET_HANDOFF_S,
            f"after app and sidecar-2 drained {DRAIN_S} s each (scenario); app's signal: " + _SIGNAL_AFTER_DELETE_WHY
            + f"; +{KUBELET_HANDOFF_S:g} s hand-off after each exit (2)",
            f"{S1_STOP}; {UP_ORDER}; {UP_TERMINATING}"),
        _ms("SC-3", "sigterm_after_previous_exit_ms[sidecar-2]", 0, 0, KUBELET_HANDOFF_S, _STOP_WHY_GAP + " (after app)",
            f"{S1_SIDECARS}; {UP_ORDER}"),
        _ms("SC-3", "sigterm_after_previous_exit_ms[sidecar-1]", 0, 0, KUBELET_HANDOFF_S, _STOP_WHY_GAP + " (after sidecar-2)",
            f"{S1_SIDECARS}; {UP_ORDER}"),
    ],
    VERIFIED_IN,
)

# -- SC-4 Job with a sidecar completes -------------------------------------------------------------
_COMPLETE_AFTER_EXIT_S = (
    PLEG_RELIST_S + KUBELET_HANDOFF_S + PLEG_RELIST_S + KUBELET_HANDOFF_S + SYNC_JOB_BATCH_PERIOD_S + KUBELET_HANDOFF_S + JOB_POLL_S
)
_COMPLETE_AFTER_EXIT_WHY = (
    f"+{PLEG_RELIST_S:g} s PLEG sees the main exit +{KUBELET_HANDOFF_S:g} s sync kills the sidecar (it exits on SIGTERM) "
    f"+{PLEG_RELIST_S:g} s PLEG sees it +{KUBELET_HANDOFF_S:g} s status Succeeded written "
    f"+{SYNC_JOB_BATCH_PERIOD_S:g} s SyncJobBatchPeriod +{KUBELET_HANDOFF_S:g} s Job status write "
    f"+{JOB_POLL_S:g} s test poll"
)
_POD_START_S = KUBELET_HANDOFF_S + KUBELET_HANDOFF_S + SANDBOX_START_S + CONTAINER_START_S + PLEG_RELIST_S + CONTAINER_START_S
register(
    [
        equal("SC-4", "job_complete[native-sidecar]", True,
              f"[S0]; {S1_SIDECARS} «в поде Job завершение основных контейнеров завершает под»; {UP_JOB}", minors=SINCE),
        equal("SC-4", "pod_phase[native-sidecar]", "Succeeded", f"[S0]; {S1_SIDECARS}; {UP_JOB}", minors=SINCE),
        equal("SC-4", "sidecar_exit_code[native-sidecar]", 143,
               "CASES.md SC-4 («even if sidecars exit 143/137»): the helper exits 143 on SIGTERM, like a process killed by it; "
               f"[S0] «Ненулевые коды выхода sidecars при остановке пода документация считает нормой»; {UP_JOB}", minors=SINCE),
        _s("SC-4", "job_complete_after_main_exit_s[native-sidecar]", 0, 0, _COMPLETE_AFTER_EXIT_S,
           "0: the Job completes as soon as its only main container exited 0; " + _COMPLETE_AFTER_EXIT_WHY,
           f"{S1_SIDECARS}; {UP_JOB} (SyncJobBatchPeriod)"),
        _s("SC-4", "job_duration_s[native-sidecar]", JOB_RUN_S, JOB_RUN_S, JOB_RUN_S + _POD_START_S + _COMPLETE_AFTER_EXIT_S,
           f"the main container works {JOB_RUN_S} s (scenario); pod start +{KUBELET_HANDOFF_S:g} s Job → pod "
           f"+{KUBELET_HANDOFF_S:g} s scheduling and kubelet +{SANDBOX_START_S:g} s sandbox +{CONTAINER_START_S:g} s sidecar start "
           f"+{PLEG_RELIST_S:g} s PLEG +{CONTAINER_START_S:g} s main start; then " + _COMPLETE_AFTER_EXIT_WHY,
           f"{S1_SIDECARS}; {UP_JOB}"),
        equal("SC-4", "job_complete[plain-container]", False,
               f"[S0] «Job не завершался, потому что агент не выходит»; {S1_SIDECARS} (the negative control: the helper as a second entry in containers)", minors=SINCE),
        equal("SC-4", "pod_phase[plain-container]", "Running",
              "CASES.md SC-4 negative control «keeps the pod running»; [S0]", minors=SINCE),
    ],
    VERIFIED_IN,
)

# How long the negative control is watched (s): as long as the native-sidecar Job may take to
# complete (the upper end of job_duration_s) — had the plain container behaved like a sidecar,
# its Job would have completed within that.
CONTROL_WATCH_S = JOB_RUN_S + _POD_START_S + _COMPLETE_AFTER_EXIT_S

# -- SC-5 sidecars always restart ------------------------------------------------------------------
# Gaps between a sidecar run's "exit" stamp and the next run's "start" stamp (container clock,
# µs): the same crash-loop back-off as main containers (doBackOff in kuberuntime_manager.go,
# called by SyncPod for init containers too): immediate, then 10 s. The re-sync lateness is
# crashloop's model (pkg/kubelet/pod_workers.go completeWork): up to 1.34 the pod worker
# re-syncs every 10 s × [1, 1.5); from 1.35 at the remaining back-off × [1, 1.5) (SyncPod's
# start() is shared by init and main containers: doBackOff's BackoffError reaches completeWork
# for a sidecar too; read in v1.34.4, v1.35.4, v1.36.3, v1.37.2).
SIDECAR_BACKOFF_S = (0.0, 10.0)


def _restart_gap(i: int, minors, minor_key: int) -> Expectation:
    d = SIDECAR_BACKOFF_S[i]
    return _s(
        "SC-5", f"restart_gap_s[{i}]", d, max(0.0, d - STAMP_LAG_S),
        d + CONTAINER_START_S + resync_late_s(minor_key, d, first_backoff(SIDECAR_BACKOFF_S, i)),
        f"−{STAMP_LAG_S:g} s stamp lag; +{CONTAINER_START_S:g} s container start "
        f"{resync_why(minor_key, d, first_backoff(SIDECAR_BACKOFF_S, i))}",
        f"{S1_SIDECARS} «перезапускается при падении, независимо от restartPolicy пода»; "
        "[UP] pkg/kubelet/kuberuntime/kuberuntime_manager.go doBackOff; pkg/kubelet/pod_workers.go completeWork "
        f"({'up to 1.34: backOffPeriod 10 s' if minor_key <= 34 else SINCE_MIN_BACKOFF_EXPIRATION}); kubelet.go syncLoop",
        minors=minors,
    )


register(
    [
        equal("SC-5", "restart_count_vs_runs", 0,
              f"{S1_SIDECARS} (restartCount counts the sidecar's restarts: runs seen − 1)", minors=SINCE),
        Expectation("SC-5", "restart_count", 2, source=f"{S1_SIDECARS} «перезапускается … независимо от restartPolicy пода»",
                    unit="restarts", band=Band.at_least(2), why="3 runs were waited for: at least 2 restarts under restartPolicy Never",
                    minors=SINCE),
        equal("SC-5", "pod_phase", "Running", f"{S1_SIDECARS} (the pod keeps running while its sidecar restarts)", minors=SINCE),
        equal("SC-5", "main_restart_count", 0,
              "[S1] restartPolicy table (Never: the main container is never restarted)", minors=SINCE),
        _restart_gap(0, (33, 34), 34),
        _restart_gap(0, (35, None), 35),
        _restart_gap(1, (33, 34), 34),
        _restart_gap(1, (35, None), 35),
    ],
    VERIFIED_IN,
)

# -- SC-6 sidecar readiness counts ------------------------------------------------------------------
_READY_LAG_S = PROBE_PERIOD_S + PROBE_TIMEOUT_S + KUBELET_HANDOFF_S
_READY_LAG_WHY = (
    f"0; +{PROBE_PERIOD_S:g} s probe period (failureThreshold = successThreshold = 1) +{PROBE_TIMEOUT_S:g} s one exec probe "
    f"+{KUBELET_HANDOFF_S:g} s probe result → status manager → API → watch"
)
register(
    [
        equal("SC-6", "ready_condition_while_sidecar_unready", "False",
              f"{S1_SIDECARS} «его readinessProbe участвует в готовности пода»; {UP_READY}", minors=SINCE),
        equal("SC-6", "containers_ready_message_while_sidecar_unready", "containers with unready status: [sidecar]",
              UP_READY, minors=SINCE),
        equal("SC-6", "ready_column_while_sidecar_unready", "1/2", f"{S1_SIDECARS}; [UP] printPod", minors=SINCE),
        equal("SC-6", "ready_column_while_sidecar_ready", "2/2", f"{S1_SIDECARS}; [UP] printPod", minors=SINCE),
        equal("SC-6", "ready_column_after_sidecar_unready", "1/2", f"{S1_SIDECARS}; [UP] printPod", minors=SINCE),
        equal("SC-6", "main_ready_after_sidecar_unready", True, f"{S1_SIDECARS} (only the sidecar's probe fails)", minors=SINCE),
        equal("SC-6", "sidecar_restarts", 0, "[S1] readinessProbe never restarts a container", minors=SINCE),
        _ms("SC-6", "pod_ready_after_sidecar_ready_ms", 0, 0, _READY_LAG_S, _READY_LAG_WHY, f"{S1_SIDECARS}; {UP_READY}"),
        _ms("SC-6", "pod_unready_after_sidecar_unready_ms", 0, 0, _READY_LAG_S, _READY_LAG_WHY, f"{S1_SIDECARS}; {UP_READY}"),
    ],
    VERIFIED_IN,
)

# -- SC-7 shared budget ---------------------------------------------------------------------------
register(
    [
        _ms("SC-7", "sigterm_after_delete_ms[app]", 0, 0, _SIGNAL_AFTER_DELETE_S, "0: signalled at once; " + _SIGNAL_AFTER_DELETE_WHY,
            f"{S1_STOP}; {UP_ORDER}; {UP_TERMINATING}"),
        _ms("SC-7", "app_killed_after_sigterm_ms", SC7_GRACE_S, SC7_GRACE_S - TICK_S - STAMP_LAG_S, SC7_GRACE_S + STAMP_LAG_S,
            f"SIGKILL when the whole grace period ({SC7_GRACE_S} s, scenario) is spent; measured to the last 'tick' stamp "
            f"(every {TICK_S:g} s): −{TICK_S:g} s tick −{STAMP_LAG_S:g} s stamp lag; +{STAMP_LAG_S:g} s",
            f"{S1_STOP}; {UP_MIN_GRACE}"),
        _ms("SC-7", "sidecar_sigterm_after_app_sigterm_ms", SC7_GRACE_S, SC7_GRACE_S - STAMP_LAG_S, SC7_GRACE_S + KUBELET_HANDOFF_S,
            f"the sidecar waits its turn for the whole remaining grace ({SC7_GRACE_S} s): −{STAMP_LAG_S:g} s app's stamp lag; "
            f"+{KUBELET_HANDOFF_S:g} s waitForTurn → CRI StopContainer → signal → stamp",
            f"{S1_STOP} «Sidecar-ы получают то, что осталось от бюджета»; {UP_ORDER}"),
        _ms("SC-7", "sidecar_killed_after_sigterm_ms", MINIMUM_GRACE_PERIOD_S, MINIMUM_GRACE_PERIOD_S - TICK_S - STAMP_LAG_S, MINIMUM_GRACE_PERIOD_S + STAMP_LAG_S,
            f"budget spent: the wait is subtracted (truncated to whole s) and raised to minimumGracePeriodInSeconds = "
            f"{MINIMUM_GRACE_PERIOD_S:g} s; measured to the last 'tick' stamp: −{TICK_S:g} s tick −{STAMP_LAG_S:g} s stamp lag; +{STAMP_LAG_S:g} s",
            f"{S1_STOP} «останавливает все оставшиеся контейнеры разом с коротким сроком»; {UP_MIN_GRACE}"),
        equal("SC-7", "app_exit_code", 137, f"{S1_STOP} (SIGKILL: 128 + 9); {UP_MIN_GRACE}", minors=SINCE),
        equal("SC-7", "sidecar_exit_code", 137,
              f"CASES.md SC-7 «SIGKILL about 2 s after their signal (exit 137)»; {UP_MIN_GRACE}", minors=SINCE),
    ],
    VERIFIED_IN,
)
