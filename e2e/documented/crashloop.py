"""CL — crash loop back-off (CASES.md CL-1 … CL-8).

The kubelet's back-off for a crashing container starts at 10 s and doubles to a 300 s cap;
the first restart is immediate (``doBackOff`` in pkg/kubelet/kuberuntime/kuberuntime_manager.go:
no back-off entry on the first exit, ``flowcontrol.Backoff.Next`` sets 10 s). A restart gap is
``startedAt`` of the next run − ``finishedAt`` of the previous one, both API timestamps.
"""

from __future__ import annotations

from ..expectations import Band, Expectation, register

S0_PHASES = "[S0] «Фазы, состояния…» (flowcontrol.Backoff keyed by pod+container)"
S1_CRASHLOOP = "[S1] «CrashLoopBackOff своими глазами»"
S1_POLICY = "[S1] restartPolicy table"
UP_DOBACKOFF = "[UP] pkg/kubelet/kuberuntime/kuberuntime_manager.go doBackOff"

# Documented back-off before restart i (s): immediate, then 10 s doubling to the 300 s cap (CL-1).
DOCUMENTED_GAPS_S = (0, 10, 20, 40, 80, 160, 300)
# Go's time.Duration spelling of each back-off in the waiting message (CL-2).
BACKOFF_TEXT = {10: "10s", 20: "20s", 40: "40s", 80: "1m20s", 160: "2m40s", 300: "5m0s"}

# -- how wide a gap band is, and why -----------------------------------------------------
# startedAt and finishedAt are truncated to whole seconds: their difference is off by up to
# 1 s either way (CASES.md "Measuring timings honestly").
API_TIMESTAMP_RESOLUTION_S = 1.0
# The generic PLEG relists containers every 1 s (pkg/kubelet/kubelet.go genericPlegRelistPeriod),
# so the kubelet notices an exit up to 1 s late.
PLEG_RELIST_S = 1.0
# Creating and starting a container from a preloaded image (containerd + runc on the node):
# budget 1 s between the kubelet's decision and the process start that startedAt records.
CONTAINER_START_S = 1.0
# The pod worker re-syncs a pod whose sync failed with jitter factor 0.5
# (pkg/kubelet/pod_workers.go completeWork, workerBackOffPeriodJitterFactor = 0.5).
# Up to 1.34 it re-syncs after backOffPeriod = 10 s (jittered to [10, 15) s) whatever the
# back-off, so the restart happens at the first re-sync after the back-off expired: up to 15 s late.
# From 1.37 (read in v1.37.2) it re-syncs after the back-off's *remaining* time
# (kubecontainer.MinBackoffExpiration), capped at the kubelet's syncFrequency (default 1 m,
# pkg/kubelet/apis/config/v1beta1/defaults.go) and jittered the same way: up to 0.5 × min(d, 60 s) late.
POD_WORKER_BACKOFF_PERIOD_S = 10.0
POD_WORKER_JITTER = 0.5
KUBELET_SYNC_FREQUENCY_S = 60.0

_OVERHEAD_S = API_TIMESTAMP_RESOLUTION_S + PLEG_RELIST_S + CONTAINER_START_S


def _resync_late_1_34(d: float) -> float:
    return POD_WORKER_BACKOFF_PERIOD_S * (1 + POD_WORKER_JITTER) if d else 0.0


def _resync_late_1_37(d: float) -> float:
    return POD_WORKER_JITTER * min(d, KUBELET_SYNC_FREQUENCY_S)


def _gap(case: str, i: int, minors: tuple[int | None, int | None], late_fn, late_why: str, source: str) -> Expectation:
    d = DOCUMENTED_GAPS_S[i]
    resync = late_fn(d)
    why = (
        f"−{API_TIMESTAMP_RESOLUTION_S:g} s timestamp truncation; +{API_TIMESTAMP_RESOLUTION_S:g} s truncation "
        f"+{PLEG_RELIST_S:g} s PLEG relist +{CONTAINER_START_S:g} s container start"
        + (f" +{resync:g} s {late_why}" if resync else "")
    )
    return Expectation(
        case=case,
        name=f"restart_gap[{i}]",
        documented=float(d),
        unit="s",
        band=Band(max(0.0, d - API_TIMESTAMP_RESOLUTION_S), d + _OVERHEAD_S + resync),
        why=why,
        source=source,
        minors=minors,
    )


def gap_expectations(case: str, indices: range, source: str) -> list[Expectation]:
    """The version-keyed restart_gap[i] expectations of CL-1 for ``case`` (any family whose
    containers restart with the crash-loop back-off)."""
    out = []
    for i in indices:
        out.append(_gap(case, i, (None, 34), _resync_late_1_34, "pod-worker re-sync every 10 s × [1, 1.5) jitter",
                        source + "; [UP] pkg/kubelet/pod_workers.go completeWork (1.34)"))
        out.append(_gap(case, i, (37, None), _resync_late_1_37, "re-sync at the remaining back-off × [1, 1.5) jitter (remaining capped at syncFrequency 60 s)",
                        source + "; [UP] pkg/kubelet/pod_workers.go completeWork (1.37: MinBackoffExpiration)"))
    return out


def _exact(case: str, name: str, documented: object, source: str, **kw) -> Expectation:
    return Expectation(case=case, name=name, documented=documented, source=source, **kw)


def _zero(case: str, name: str, unit: str, why: str, source: str) -> Expectation:
    return Expectation(case=case, name=name, documented=0, unit=unit, band=Band(0, 0), why=why, source=source)


register(gap_expectations("CL-1", range(len(DOCUMENTED_GAPS_S)), f"{S0_PHASES}; {S1_CRASHLOOP}; {UP_DOBACKOFF}"))

register(
    [
        _exact("CL-2", "waiting_reason", "CrashLoopBackOff", f"{S1_CRASHLOOP}; {S0_PHASES}"),
        _exact(
            "CL-2",
            "waiting_message",
            "back-off {delay} restarting failed container={container} pod={pod}_{namespace}({uid})",
            f"{S1_CRASHLOOP}; {UP_DOBACKOFF} (format.Pod: name_namespace(uid))",
        ),
        _exact("CL-2", "phase_while_waiting", "Running", S1_CRASHLOOP),
        _exact("CL-2", "last_terminated_reason", "Error", S1_CRASHLOOP),
        _exact("CL-2", "last_exit_code", 1, S1_CRASHLOOP),
        _zero("CL-2", "restart_count_vs_runs", "restarts", "restartCount counts restarts: runs seen − 1, exactly", S1_CRASHLOOP),
    ]
)

# How long the API shows state.waiting.reason = CrashLoopBackOff before the restart (s, receive
# times). CASES.md CL-2 documents the reason "while waiting". The kubelet writes it from its
# reason cache, which the sync that hits the back-off fills only *after* that sync's status was
# generated (pkg/kubelet/kubelet.go SyncPod → kuberuntime SyncPod → reasonCache.Update): the
# reason shows from the next sync on. From 1.37 the next sync is the one at the back-off's
# expiry, which also restarts the container: the reason is visible only for that sync's
# duration. Up to 1.34 the next sync comes 10–15 s after the exit (see restart_gap).
def _visible(minors, documented: float, band: Band, why: str, source: str) -> Expectation:
    return Expectation(case="CL-2", name="crashloopbackoff_visible_s", documented=documented, unit="s",
                       band=band, why=why, source=source, minors=minors)


register(
    [
        _visible(
            (37, None), 0.0, Band(0.0, CONTAINER_START_S),
            "shown only during the sync that restarts the container: up to the container start budget",
            "[UP] pkg/kubelet/pod_workers.go completeWork (1.37: MinBackoffExpiration); pkg/kubelet/kubelet.go reasonCache "
            "(observed on v1.37.2: CrashLoopBackOff visible ~0.1–0.2 s before each restart)",
        ),
    ]
)

register(
    [
        _exact("CL-3", "last_terminated_reason", "Completed", S1_POLICY),
        _exact("CL-3", "last_exit_code", 0, S1_POLICY),
        _exact("CL-3", "waiting_reason", "CrashLoopBackOff", S1_POLICY),
        *gap_expectations("CL-3", range(2), f"{S1_POLICY} (same back-off as CL-1)"),
    ]
)

register(
    [
        _exact("CL-4", "phase[OnFailure,exit0]", "Succeeded", S1_POLICY),
        _zero("CL-4", "restart_count[OnFailure,exit0]", "restarts", "no restart at all", S1_POLICY),
        _exact("CL-4", "waiting_reason[OnFailure,exit1]", "CrashLoopBackOff", S1_POLICY),
        Expectation(
            case="CL-4",
            name="restart_count[OnFailure,exit1]",
            documented=1,
            unit="restarts",
            band=Band(1, 1e9),
            why="restarted at least once (the first restart is immediate)",
            source=S1_POLICY,
        ),
        _exact("CL-4", "phase[Never,exit1]", "Failed", S1_POLICY),
        _zero("CL-4", "restart_count[Never,exit1]", "restarts", "no restart at all", S1_POLICY),
    ]
)

register(
    [
        _exact("CL-5", "previous_log_status_before_restart", 400, "[S1]; [S2]"),
        _exact(
            "CL-5",
            "previous_log_message_before_restart",
            r'previous terminated container "{container}" in pod "{pod}" not found',
            "[S1]; [S2]",
            pattern=True,
        ),
        _exact("CL-5", "previous_log_after_restart", "attempt {attempt}", "[S1]; [S2]"),
    ]
)

register(
    [
        _exact(
            "CL-8",
            "status_sequence[Always]",
            r"(.* → )?Init:Error → (.* → )?Init:CrashLoopBackOff( → .*)?",
            f"{S0_PHASES}; [S1]",
            pattern=True,
        ),
        _exact("CL-8", "main_started[Always]", False, "[S0]; [S1]"),
        _exact("CL-8", "phase[Never]", "Failed", "[S0]; [S1]"),
        _exact("CL-8", "status[Never]", "Init:Error", "[S0]; [S1]"),
        _exact("CL-8", "main_started[Never]", False, "[S0]; [S1]"),
    ]
)
