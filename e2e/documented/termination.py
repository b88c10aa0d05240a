"""PS — preStop, SIGTERM, grace period, traffic (CASES.md PS-1 … PS-8; PS-7 lives with the
API-level cases).

How a pod stops ([S0] «Остановка пода по шагам», [S1] «Жизненный цикл завершения»):

1. The API server sets ``deletionTimestamp`` = now + grace and ``deletionGracePeriodSeconds``
   = grace (the request's, else ``terminationGracePeriodSeconds``, default 30) — PS-1.
2. The EndpointSlice controller marks the pod's endpoint ``ready=false, terminating=true``,
   ``serving`` = the pod's readiness (``podToEndpoint``) — PS-3.
3. The kubelet stops liveness and startup probes (readiness goes on) — PS-8 — and kills the
   containers: the preStop hook first, then the stop signal with what is left of the grace
   period, at least 2 s (``killContainer``) — PS-2, PS-5, PS-6.

Without preStop the signal and the endpoint update race; with a preStop sleep the signal
waits until the endpoint left the load balancing, so no request is lost — PS-4.

Times are seconds on the host clock (kind nodes share it): the delete time is read by the
test just before its delete request; SIGTERM, probe hits, heartbeats and hook runs are the
lifecycle-app's own millisecond timestamps (``e2e.evidence.applog``); endpoint changes are the
recorder's receive times; ``finishedAt`` and ``deletionTimestamp`` are API timestamps with
1 s resolution.

Versions: every [UP] source here was read in v1.34.4, v1.35.4, v1.36.3 and v1.37.2 (the same
in all four: killContainer, executePreStopHook, podToEndpoint, SyncTerminatingPod, the prober's
worker), so no entry is keyed by version.

The scenario settings (grace periods, preStop sleeps) are constants here, used by the
scenarios, because the documented value of each measurement is a function of them.
"""

from __future__ import annotations

import math

from ..judge.expectations import Expectation, equal, register, within
from .kubelet import API_TIMESTAMP_RESOLUTION_S, KUBELET_HANDOFF_S, MINIMUM_GRACE_PERIOD_S, PLEG_RELIST_S, STATUS_UPDATE_S, UPGRADE_PATH_READ

# Read in v1.34.4, v1.35.4, v1.36.3, v1.37.2 (module doc "Versions"; 5d96d18 of issue 15).
VERIFIED_IN = UPGRADE_PATH_READ

# -- sources -----------------------------------------------------------------------------
S0_STEPS = "[S0] «Остановка пода по шагам»"
S1_TERMINATION = "[S1] «Жизненный цикл завершения»"
S1_WALKTHROUGH = "[S1] «Завершение по шагам» (delete 02:23:04,6 → SIGTERM 02:23:09,7)"
S2_ROLLOUT = "[S2] 3.1 rollout settings (maxUnavailable: 0, preStop, graceful shutdown)"
UP_DELETE = "[UP] staging/src/k8s.io/apiserver/pkg/registry/rest/delete.go BeforeDelete; pkg/registry/core/pod/strategy.go CheckGracefulDelete"
UP_KILL = "[UP] pkg/kubelet/kuberuntime/kuberuntime_container.go killContainer, executePreStopHook"
UP_MIN_GRACE = "[UP] pkg/kubelet/kuberuntime/kuberuntime_manager.go minimumGracePeriodInSeconds = 2"
UP_ENDPOINT = "[UP] k8s.io/endpointslice utils.go podToEndpoint; test/e2e/network endpointslice terminating test"
UP_PROBES = ("[UP] pkg/kubelet/kubelet.go SyncTerminatingPod (probeManager.StopLivenessAndStartup before killPod, "
             "RemovePod after); pkg/kubelet/prober/worker.go doProbe (liveness/startup skipped once deletionTimestamp is set)")
UP_ROLLING = "[UP] test/e2e/apps rolling-update tests (accept ≥ 95 % successful requests)"

# -- scenario settings (the documented values follow from them) --------------------------
# PS-1: the pod's terminationGracePeriodSeconds, a grace period given in the delete request,
# and the API's default when the pod sets none (pkg/apis/core/v1/defaults.go SetDefaults_PodSpec).
PS1_SPEC_GRACE_S = 7
PS1_REQUEST_GRACE_S = 3
DEFAULT_GRACE_S = 30
# PS-2/PS-3/PS-4/PS-8: preStop sleep N (≥ 5 s for PS-4, [S1] uses 5) and grace G of those pods.
PRESTOP_SLEEP_S = 5
PRESTOP_GRACE_S = 15
# PS-5: grace of the pods whose exit code is judged (short: the 137 case waits it out).
PS5_GRACE_S = 5
# PS-6: preStop sleep N behind an app that ignores SIGTERM, grace G (N < G, N + G clearly apart
# from G); and a grace period that an exec hook outlives.
PS6_PRESTOP_SLEEP_S = 4
PS6_GRACE_S = 8
PS6_OVERRUN_GRACE_S = 4
PS6_OVERRUN_HOOK_S = 30
# PS-3/PS-4/PS-8: readiness probe periodSeconds and failureThreshold of the scenario pods.
READINESS_PERIOD_S = 1
READINESS_FAILURE_THRESHOLD = 1
# PS-6: the app logs a TICK every HEARTBEAT_S: its last TICK is its kill time to within that.
HEARTBEAT_S = 0.1

# -- how wide a band is, and why ----------------------------------------------------------
# The delete request reaches the API server after the test read its clock (loopback to the
# API server's published port, TLS, admission): budget 0.5 s.
DELETE_REQUEST_S = 0.5
# Before each sync the pod worker waits for a PLEG relist newer than its previous sync
# (pod_workers.go podWorkerLoop → podCache.GetNewerThan, "adds ~1s of latency on all transitions
# from sync to terminating"; the generic PLEG relists every 1 s, kubelet.go
# genericPlegRelistPeriod). A sync started just before the delete (the container's start, a
# readiness result) delays SyncTerminatingPod by up to two relists: observed on v1.37.2, a pod
# deleted ~0.4 s after turning ready gets SIGTERM 1.7–1.8 s late. The scenarios delete settled
# pods, as the documented measurements did ([S1] deletes a pod that had been serving): they wait
# SETTLE_S after the pod is running/ready, two relist periods.
SETTLE_S = 2 * PLEG_RELIST_S
# killContainer → CRI StopContainer → containerd → runc kill: the signal reaches the process
# within 0.5 s.
SIGNAL_DELIVERY_S = 0.5
# executePreStopHook returns the hook's duration truncated to whole seconds (int64 of
# Seconds()): up to 1 s of hook time is not taken out of the grace period.
HOOK_TRUNCATION_S = 1.0
# A pod change reaches the EndpointSlice controller (its endpointUpdatesBatchPeriod defaults to
# 0, pkg/controller/endpointslice), which writes the slice, which the recorder's watch
# receives: budget 1 s.
ENDPOINT_PROPAGATION_S = 1.0
# An exec hook's process starts within 0.5 s of the kubelet's decision (CRI ExecSync).
EXEC_START_S = 0.5
# Probe workers tick every periodSeconds; a tick may come late on a busy node: 0.5 s.
PROBE_TICK_JITTER_S = 0.5
# The open upper end of counts documented as "more than zero" (Band.at_least).
MANY = math.inf


# -- PS-1 deletion bookkeeping --------------------------------------------------------------
def _ps1(variant: str, grace: int) -> list[Expectation]:
    return [
        within("PS-1", f"deletion_grace_period_s[{variant}]", grace, grace, grace,
           "exact: the API server copies the grace period into the object", f"{S0_STEPS} step 1; {UP_DELETE}"),
        within("PS-1", f"deletion_timestamp_after_delete_s[{variant}]", grace,
           grace - API_TIMESTAMP_RESOLUTION_S, grace + DELETE_REQUEST_S,
           f"−{API_TIMESTAMP_RESOLUTION_S:g} s deletionTimestamp truncated to whole seconds; "
           f"+{DELETE_REQUEST_S:g} s the delete request reaching the API server",
           f"{S0_STEPS} step 1; {UP_DELETE}"),
        equal("PS-1", f"status_when_deleted[{variant}]", "Terminating", f"{S0_STEPS} step 1; [S1] (kubectl STATUS column)"),
    ]


register(
    _ps1("spec", PS1_SPEC_GRACE_S)
    + _ps1("request", PS1_REQUEST_GRACE_S)
    + _ps1("default", DEFAULT_GRACE_S)
    + [within("PS-1", "termination_grace_period_default_s", DEFAULT_GRACE_S, DEFAULT_GRACE_S, DEFAULT_GRACE_S,
          "exact: API defaulting", f"{S0_STEPS} step 1; [UP] pkg/apis/core/v1/defaults.go SetDefaults_PodSpec")], VERIFIED_IN
)

# -- PS-2 preStop delays the signal ---------------------------------------------------------
_SIGTERM_LATE_S = KUBELET_HANDOFF_S + SIGNAL_DELIVERY_S
_SIGTERM_WHY = (f"−0 s: the hook sleeps N s after the delete; +{KUBELET_HANDOFF_S:g} s the kubelet learning of the "
                f"deletion +{SIGNAL_DELIVERY_S:g} s StopContainer delivering the signal")


def _sigterm_after_prestop(case: str, name: str, source: str) -> Expectation:
    return within(case, name, PRESTOP_SLEEP_S, PRESTOP_SLEEP_S, PRESTOP_SLEEP_S + _SIGTERM_LATE_S, _SIGTERM_WHY, source)


register([_sigterm_after_prestop("PS-2", "sigterm_after_delete_s", f"{S1_WALKTHROUGH} (5.1 s for N = 5); {S0_STEPS} steps 4–5; {UP_KILL}")], VERIFIED_IN)

# -- PS-3 EndpointSlice on deletion ---------------------------------------------------------
_ENDPOINT_SOURCE = f"{S0_STEPS} step 2; {UP_ENDPOINT}"
register(
    [
        equal("PS-3", "endpoint_ready_after_delete", False, _ENDPOINT_SOURCE),
        equal("PS-3", "endpoint_terminating_after_delete", True, _ENDPOINT_SOURCE),
        equal("PS-3", "endpoint_serving_after_delete", True, _ENDPOINT_SOURCE + " (serving = readiness: still passing)"),
        within("PS-3", "endpoint_update_after_delete_s", 0, 0, DELETE_REQUEST_S + ENDPOINT_PROPAGATION_S,
           f"“at once”: +{DELETE_REQUEST_S:g} s delete request +{ENDPOINT_PROPAGATION_S:g} s EndpointSlice controller and watch",
           _ENDPOINT_SOURCE),
        equal("PS-3", "endpoint_serving_after_readiness_fails", False, _ENDPOINT_SOURCE + " (serving = readiness: now failing)"),
        equal("PS-3", "endpoint_terminating_after_readiness_fails", True, _ENDPOINT_SOURCE),
        within("PS-3", "serving_false_after_readiness_fails_s", 0, 0, STATUS_UPDATE_S + ENDPOINT_PROPAGATION_S,
           f"from the first failing readiness probe (app log, failureThreshold {READINESS_FAILURE_THRESHOLD}): "
           f"+{STATUS_UPDATE_S:g} s kubelet status update +{ENDPOINT_PROPAGATION_S:g} s EndpointSlice controller and watch",
           _ENDPOINT_SOURCE),
    ],
    VERIFIED_IN,
)

# -- PS-4 no lost requests -----------------------------------------------------------------
# Variants: prestop-drain (preStop sleep N, app finishes in-flight requests after SIGTERM) and
# the negative control no-prestop-exit (no hook, app exits at once on SIGTERM).
_PS4_SOURCE = f"{S1_TERMINATION}; {S1_WALKTHROUGH}; {S2_ROLLOUT}; {UP_ROLLING}"
register(
    [
        within("PS-4", "failed_requests[prestop-drain]", 0, 0, 0,
           "exact: none lost on new connections (the endpoint leaves the load balancing during the preStop sleep, "
           "in-flight requests are finished after SIGTERM)", _PS4_SOURCE, unit="requests"),
        within("PS-4", "failed_requests[no-prestop-exit]", 1, 1, MANY,
           "more than zero: the signal races the endpoint update through kube-proxy, the app drops what it holds",
           _PS4_SOURCE, unit="requests"),
        _sigterm_after_prestop("PS-4", "sigterm_after_delete_s[prestop-drain]", f"{S1_WALKTHROUGH}; {UP_KILL}"),
        within("PS-4", "sigterm_after_delete_s[no-prestop-exit]", 0, 0, _SIGTERM_LATE_S,
           f"no hook: the signal comes at once; +{KUBELET_HANDOFF_S:g} s the kubelet learning of the deletion "
           f"+{SIGNAL_DELIVERY_S:g} s signal delivery", f"{S0_STEPS} steps 3–5; {UP_KILL}"),
        *(
            within("PS-4", f"endpoint_not_ready_after_delete_s[{v}]", 0, 0, DELETE_REQUEST_S + ENDPOINT_PROPAGATION_S,
               f"“at once” (PS-3): +{DELETE_REQUEST_S:g} s delete request +{ENDPOINT_PROPAGATION_S:g} s EndpointSlice "
               "controller and watch (measured from "
               "the delete request, or for a rollout from the first sight of the pod's deletionTimestamp)", _ENDPOINT_SOURCE)
            for v in ("prestop-drain", "no-prestop-exit")
        ),
    ],
    VERIFIED_IN,
)

# -- PS-5 exit codes -----------------------------------------------------------------------
_EXIT_SOURCE = f"{S0_STEPS} step 5; {S1_TERMINATION}"
_FINISH_AT_ONCE = (-API_TIMESTAMP_RESOLUTION_S, _SIGTERM_LATE_S,
                   f"−{API_TIMESTAMP_RESOLUTION_S:g} s finishedAt truncation; +{KUBELET_HANDOFF_S:g} s kubelet "
                   f"reaction +{SIGNAL_DELIVERY_S:g} s signal delivery")
register(
    [
        equal("PS-5", "exit_code[sigterm-kills]", 143, _EXIT_SOURCE + " (128 + SIGTERM 15)"),
        equal("PS-5", "reason[sigterm-kills]", "Error", _EXIT_SOURCE),
        within("PS-5", "finished_after_delete_s[sigterm-kills]", 0, *_FINISH_AT_ONCE, _EXIT_SOURCE),
        equal("PS-5", "exit_code[pid1-no-handler]", 137, _EXIT_SOURCE + " (128 + SIGKILL 9)"),
        equal("PS-5", "reason[pid1-no-handler]", "Error", _EXIT_SOURCE),
        within("PS-5", "finished_after_delete_s[pid1-no-handler]", PS5_GRACE_S,
           PS5_GRACE_S - API_TIMESTAMP_RESOLUTION_S, PS5_GRACE_S + _SIGTERM_LATE_S,
           f"SIGKILL at deletion + grace: −{API_TIMESTAMP_RESOLUTION_S:g} s finishedAt truncation; "
           f"+{KUBELET_HANDOFF_S:g} s kubelet reaction +{SIGNAL_DELIVERY_S:g} s signal delivery", _EXIT_SOURCE),
        equal("PS-5", "exit_code[trap-exit0]", 0, _EXIT_SOURCE),
        equal("PS-5", "reason[trap-exit0]", "Completed", _EXIT_SOURCE),
        within("PS-5", "finished_after_delete_s[trap-exit0]", 0, *_FINISH_AT_ONCE, _EXIT_SOURCE),
        # [S0] «Что делать при остановке самому Go-сервису»: "a Go binary without a handler dies by
        # SIGTERM at once, with code 143" — said of the container's first process, i.e. PID 1. That
        # does not hold for PID 1, deterministically: the Go runtime's handler re-raises SIGTERM with
        # the default action (runtime/signal_unix.go dieFromSignal), the kernel never delivers a
        # default-action signal to a PID namespace's init from inside it (pid_namespaces(7)), so
        # the runtime falls back to exit(2). 143 needs a non-init process (exit_code[sigterm-kills]).
        Expectation(case="PS-5", name="exit_code[go-no-handler-pid1]", documented=2, source=
               "Go runtime/signal_unix.go dieFromSignal (raise(SIGTERM) with SIG_DFL, then exit(2)); "
               "pid_namespaces(7): signals with the default action are not delivered to the namespace's init; "
               "[S0] «…Go-бинарь без обработчика умирает по SIGTERM сразу, с кодом 143» disagrees for PID 1",
               why="[S0] documents 143 for the container's first process; as PID 1 the re-raised SIGTERM is "
                   "dropped by the kernel and the Go runtime exits 2 — the seed's 143 holds only for a non-init process"),
        within("PS-5", "finished_after_delete_s[go-no-handler-pid1]", 0, *_FINISH_AT_ONCE, "[S0] (dies «сразу», at once)"),
    ],
    VERIFIED_IN,
)

# -- PS-6 the budget includes preStop ---------------------------------------------------------
_BUDGET_SOURCE = f"{S0_STEPS} steps 4–5; {S1_TERMINATION}; {UP_KILL}"
_KILL_LATE_S = KUBELET_HANDOFF_S + HOOK_TRUNCATION_S + SIGNAL_DELIVERY_S
register(
    [
        within("PS-6", "sigterm_after_delete_s[prestop-sleep]", PS6_PRESTOP_SLEEP_S, PS6_PRESTOP_SLEEP_S,
           PS6_PRESTOP_SLEEP_S + _SIGTERM_LATE_S, _SIGTERM_WHY, _BUDGET_SOURCE),
        within("PS-6", "killed_after_delete_s[prestop-sleep]", PS6_GRACE_S, PS6_GRACE_S - HEARTBEAT_S, PS6_GRACE_S + _KILL_LATE_S,
           f"killed at G (not N + G = {PS6_PRESTOP_SLEEP_S + PS6_GRACE_S} s), measured by the app's last heartbeat: "
           f"−{HEARTBEAT_S:g} s heartbeat interval; +{KUBELET_HANDOFF_S:g} s kubelet reaction "
           f"+{HOOK_TRUNCATION_S:g} s hook time truncated to whole seconds +{SIGNAL_DELIVERY_S:g} s SIGKILL delivery",
           _BUDGET_SOURCE),
        within("PS-6", "finished_after_delete_s[prestop-sleep]", PS6_GRACE_S, PS6_GRACE_S - API_TIMESTAMP_RESOLUTION_S,
           PS6_GRACE_S + _KILL_LATE_S,
           f"as killed_after_delete_s, from finishedAt: −{API_TIMESTAMP_RESOLUTION_S:g} s truncation; +{_KILL_LATE_S:g} s "
           "(kubelet reaction, hook truncation, SIGKILL delivery)", _BUDGET_SOURCE),
        equal("PS-6", "exit_code[prestop-sleep]", 137, _BUDGET_SOURCE),
        within("PS-6", "prestop_started_after_delete_s[hook-overrun]", 0, 0, KUBELET_HANDOFF_S + EXEC_START_S,
           f"the hook runs first: +{KUBELET_HANDOFF_S:g} s kubelet reaction +{EXEC_START_S:g} s exec start",
           _BUDGET_SOURCE),
        within("PS-6", "sigterm_after_delete_s[hook-overrun]", PS6_OVERRUN_GRACE_S, PS6_OVERRUN_GRACE_S,
           PS6_OVERRUN_GRACE_S + _SIGTERM_LATE_S,
           f"the kubelet stops waiting for the hook when the grace period ends: +{KUBELET_HANDOFF_S:g} s kubelet "
           f"reaction +{SIGNAL_DELIVERY_S:g} s signal delivery", _BUDGET_SOURCE),
        within("PS-6", "killed_after_delete_s[hook-overrun]", PS6_OVERRUN_GRACE_S + MINIMUM_GRACE_PERIOD_S,
           PS6_OVERRUN_GRACE_S + MINIMUM_GRACE_PERIOD_S - HEARTBEAT_S,
           PS6_OVERRUN_GRACE_S + MINIMUM_GRACE_PERIOD_S + _SIGTERM_LATE_S,
           f"G + the one-time {MINIMUM_GRACE_PERIOD_S:g} s minimum: −{HEARTBEAT_S:g} s heartbeat interval; "
           f"+{KUBELET_HANDOFF_S:g} s kubelet reaction +{SIGNAL_DELIVERY_S:g} s SIGKILL delivery",
           f"{_BUDGET_SOURCE}; {UP_MIN_GRACE}; [S1] (preStop gets a one-time +2 s)"),
        equal("PS-6", "exit_code[hook-overrun]", 137, _BUDGET_SOURCE),
    ],
    VERIFIED_IN,
)

# -- PS-8 probes during termination ---------------------------------------------------------
register(
    [
        within("PS-8", "liveness_probes_after_stop", 0, 0, 0,
           f"exact: none later than {KUBELET_HANDOFF_S:g} s (kubelet reaction) after the delete", f"{S0_STEPS} step 3; {UP_PROBES}",
           unit="probes"),
        within("PS-8", "startup_probes_after_stop", 0, 0, 0,
           f"exact: none later than {KUBELET_HANDOFF_S:g} s (kubelet reaction) after the delete", f"{S0_STEPS} step 3; {UP_PROBES}",
           unit="probes"),
        within("PS-8", "readiness_probes_during_termination", 1, 1, MANY,
           f"keeps running: at least one probe between the kubelet's reaction and SIGTERM "
           f"(≈ {PRESTOP_SLEEP_S - 1} expected: {PRESTOP_SLEEP_S} s preStop, period {READINESS_PERIOD_S} s)",
           f"{S0_STEPS} step 3; {UP_PROBES}", unit="probes"),
        within("PS-8", "readiness_probe_max_interval_during_termination_s", READINESS_PERIOD_S, 0,
           READINESS_PERIOD_S + PROBE_TICK_JITTER_S,
           f"periodSeconds {READINESS_PERIOD_S} s as before the deletion: +{PROBE_TICK_JITTER_S:g} s tick jitter",
           f"{S0_STEPS} step 3; {UP_PROBES}"),
    ],
    VERIFIED_IN,
)
