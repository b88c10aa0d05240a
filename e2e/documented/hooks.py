"""HK — lifecycle hooks beyond PS (CASES-workloads.md §4 HK-1 … HK-4).

How the kubelet runs hooks (pkg/kubelet/kuberuntime/kuberuntime_container.go):

- postStart: ``startContainer`` starts the container (CRI ``StartContainer``, event ``Started``),
  then runs the hook **synchronously** (``m.runner.Run``, pkg/kubelet/lifecycle/handlers.go): the
  pod worker waits for it. When it fails: a Warning event ``FailedPostStartHook`` with the fixed
  message "PostStartHook failed" (the hook's own output is not put into the event), then
  ``killContainer(…, "FailedPostStartHook", …)`` — whose ``Killing`` event carries that literal as
  its message — and ``startContainer`` returns ``ErrPostStartHook`` ("PostStartHookError") with the
  handler's message ("Exec lifecycle hook ([cmd]) for Container "c" in Pod "p_ns(uid)" failed -
  error: command 'cmd' exited with N: <stderr>, message: "<output>"", or "HTTP lifecycle hook
  (<path>) … failed - error: <client error>"). SyncPod puts that pair into the reason cache, so a
  container that will be restarted shows ``waiting`` with reason ``PostStartHookError`` and that
  message (kubelet_pods.go ``convertToAPIContainerStatuses``: only when
  ``ShouldContainerBeRestarted``) until the next start attempt replaces it (``CrashLoopBackOff``).
- preStop: ``killContainer`` → ``executePreStopHook`` runs the hook in a goroutine and waits for
  it or for the grace period; a failure only records a Warning ``FailedPreStopHook`` "PreStopHook
  failed" ("do not record the message in the event so that secrets won't leak") and the stop goes
  on: the signal comes with the rest of the grace period (the hook's time truncated to whole
  seconds), at least 2 s.

Versions: ``startContainer`` (postStart part), ``killContainer``, ``executePreStopHook`` and
``handlerRunner.Run`` read in v1.34.4, v1.35.4, v1.36.3 and v1.37.2. Differences that do not touch
what is judged here: ``startContainer``'s Created/Started event texts ("Started container app" in
1.34, "Container started" from 1.35), ``HandleCrash`` → ``HandleCrashWithContext`` in
``executePreStopHook`` (1.36), ``runHTTPHandler`` (1.36: the same requests and errors). The CRI
exec error "command '%s' exited with %d: %s" is k8s.io/cri-client remote_runtime.go ``ExecSync``
(v0.34.4, v0.36.0, v0.37.2 and v1.35.4's staging copy).
"""

from __future__ import annotations

from ..judge.expectations import Band, Expectation, KnownBug, equal, register, within
from .kubelet import KUBELET_HANDOFF_S, MINIMUM_GRACE_PERIOD_S, PLEG_RELIST_S, UPGRADE_PATH_READ
from .termination import DELETE_REQUEST_S, EXEC_START_S, HEARTBEAT_S, HOOK_TRUNCATION_S, SIGNAL_DELIVERY_S

VERIFIED_IN = UPGRADE_PATH_READ

# -- sources -----------------------------------------------------------------------------
S1_POSTSTART = "[S1] L310 (postStart runs beside the entrypoint; a failing hook kills the container)"
S1_HANDLERS = "[S1] L301 (exec, httpGet, sleep handlers; a failing preStop only warns)"
UP_START = ("[UP] pkg/kubelet/kuberuntime/kuberuntime_container.go startContainer (Lifecycle.PostStart: runner.Run, "
            "FailedPostStartHook event, killContainer, ErrPostStartHook)")
UP_RUN = "[UP] pkg/kubelet/lifecycle/handlers.go handlerRunner.Run, runHTTPHandler"
UP_EXEC_ERR = "[UP] k8s.io/cri-client pkg/remote_runtime.go ExecSync («command '%s' exited with %d: %s»)"
UP_WAITING = "[UP] pkg/kubelet/kubelet_pods.go convertToAPIContainerStatuses (reasonCache → waiting, if it will restart)"
UP_KILL = "[UP] pkg/kubelet/kuberuntime/kuberuntime_container.go killContainer, executePreStopHook"

# -- HK-2 postStart failure: scenario settings ------------------------------------------------
HK2_GRACE_S = 5
# the variants: pod name → (restartPolicy, hook kind)
HK2_VARIANTS = {"exec-always": ("Always", "exec"), "exec-never": ("Never", "exec"), "http-always": ("Always", "http")}
HK2_HTTP_PATH = "/hook"
HK2_HTTP_PORT = 1

_POD = r'"{pod}_[a-z0-9-]+\([0-9a-f-]+\)"'
HK2_MESSAGE = {
    "exec": (r'Exec lifecycle hook \(\[false\]\) for Container "app" in Pod ' + _POD
             + r""" failed - error: command 'false' exited with 1: , message: \"\""""),
    "http": (rf'HTTP lifecycle hook \({HK2_HTTP_PATH}\) for Container "app" in Pod ' + _POD
             + rf' failed - error: Get "http://[0-9.]+:{HK2_HTTP_PORT}{HK2_HTTP_PATH}": dial tcp [0-9.]+:{HK2_HTTP_PORT}: connect: connection refused'),
}
# The hook fails at once (`false`; a refused connection): its start + the exec or request, the
# kill's hand-off, the signal.
_HK2_KILL_HIGH = EXEC_START_S + KUBELET_HANDOFF_S + SIGNAL_DELIVERY_S

register(
    [
        *[equal("HK-2", f"failed_hook_event_message[{pod}]", "PostStartHook failed",
                f"{S1_POSTSTART}; {UP_START} (a fixed text: the catalogue's «message naming the command» is the "
                "waiting message, not the event)") for pod in HK2_VARIANTS],
        *[equal("HK-2", f"killing_event_message[{pod}]", "FailedPostStartHook",
                f"{UP_START} (killContainer's message argument \"FailedPostStartHook\" is the Killing event's text)")
          for pod in HK2_VARIANTS],
        *[within("HK-2", f"sigterm_after_start_s[{pod}]", 0, 0, _HK2_KILL_HIGH,
                 f"the hook fails at once: +{EXEC_START_S:g} s its exec or request +{KUBELET_HANDOFF_S:g} s kill hand-off "
                 f"+{SIGNAL_DELIVERY_S:g} s signal delivery (the container's own stamps; when the SIGTERM comes before the "
                 "script's first line, which writes no stamp, API startedAt → finishedAt in whole seconds)",
                 f"{S1_POSTSTART}; {UP_START}")
          for pod in HK2_VARIANTS],
        *[equal("HK-2", f"exit_code[{pod}]", 143, f"{UP_START} → {UP_KILL} (the container traps TERM and exits 143; a SIGTERM "
                "before the trap ends sh, not PID 1 under shareProcessNamespace, by its default action: 143 too)")
          for pod in HK2_VARIANTS],
        *[equal("HK-2", f"waiting_reason_seen[{pod}]", True, f"CASES-workloads.md HK-2 (a); {UP_START}; {UP_WAITING}")
          for pod, (policy, _) in HK2_VARIANTS.items() if policy == "Always"],
        *[equal("HK-2", f"waiting_message[{pod}]", HK2_MESSAGE[kind], f"{UP_RUN}; {UP_EXEC_ERR}; {UP_WAITING}", pattern=True)
          for pod, (policy, kind) in HK2_VARIANTS.items() if policy == "Always"],
        *[Expectation(case="HK-2", name=f"restart_count[{pod}]", documented=1, unit="restarts", band=Band.at_least(1),
                      why="restarted after the kill (at least once by now), with the crash-loop back-off (CL-1)",
                      source=f"CASES-workloads.md HK-2 (a), (c); {UP_START}")
          for pod, (policy, _) in HK2_VARIANTS.items() if policy == "Always"],
        equal("HK-2", "phase[exec-never]", "Failed", f"CASES-workloads.md HK-2 (b); {UP_START} (exit 143 under Never)"),
        equal("HK-2", "restart_count[exec-never]", 0, "CASES-workloads.md HK-2 (b) (restartPolicy Never)"),
    ],
    VERIFIED_IN,
)

# -- HK-3 preStop that fails: scenario settings ----------------------------------------------
# (c) of the catalogue — an exec hook that overruns the grace period — is PS-6's hook-overrun
# (SIGTERM at G, SIGKILL at G + 2): not repeated here.
HK3_GRACE_S = 10
HK3_VARIANTS = {"exec-missing": "exec", "http-closed": "http"}
HK3_MISSING_BINARY = "/no-such-hook"

_HK3_SIGTERM_HIGH = DELETE_REQUEST_S + KUBELET_HANDOFF_S + EXEC_START_S + SIGNAL_DELIVERY_S
_HK3_KILL_HIGH = DELETE_REQUEST_S + KUBELET_HANDOFF_S + EXEC_START_S + HOOK_TRUNCATION_S + SIGNAL_DELIVERY_S
register(
    [
        *[equal("HK-3", f"failed_hook_event_message[{pod}]", "PreStopHook failed",
                f"{S1_HANDLERS}; {UP_KILL} (a fixed text: «do not record the message in the event»)") for pod in HK3_VARIANTS],
        *[equal("HK-3", f"failed_hook_event_type[{pod}]", "Warning", f"{S1_HANDLERS}; {UP_KILL}") for pod in HK3_VARIANTS],
        *[within("HK-3", f"sigterm_after_delete_s[{pod}]", 0, 0, _HK3_SIGTERM_HIGH,
                 f"the hook fails at once and the stop goes on: +{DELETE_REQUEST_S:g} s delete request "
                 f"+{KUBELET_HANDOFF_S:g} s kubelet reaction +{EXEC_START_S:g} s the failing exec or request "
                 f"+{SIGNAL_DELIVERY_S:g} s signal delivery", f"CASES-workloads.md HK-3 (a), (b) ([0, 2] s); {UP_KILL}")
          for pod in HK3_VARIANTS],
        # the app ignores SIGTERM: SIGKILL at the end of what is left of G; the failed hook took
        # under 1 s, which int64(Seconds()) truncates to 0, so the whole G is left
        *[within("HK-3", f"killed_after_delete_s[{pod}]", HK3_GRACE_S, HK3_GRACE_S - HEARTBEAT_S, HK3_GRACE_S + _HK3_KILL_HIGH,
                 f"the signal's window is the whole G (the hook's < 1 s truncated to 0 s), measured by the app's last "
                 f"heartbeat: −{HEARTBEAT_S:g} s heartbeat; +{DELETE_REQUEST_S:g} s delete request +{KUBELET_HANDOFF_S:g} s "
                 f"kubelet reaction +{EXEC_START_S:g} s the hook +{HOOK_TRUNCATION_S:g} s hook truncation "
                 f"+{SIGNAL_DELIVERY_S:g} s SIGKILL delivery", f"CASES-workloads.md HK-3; {UP_KILL}")
          for pod in HK3_VARIANTS],
        *[equal("HK-3", f"exit_code[{pod}]", 137, f"{UP_KILL} (SIGTERM ignored: SIGKILL, 128 + 9)") for pod in HK3_VARIANTS],
    ],
    VERIFIED_IN,
)

# -- HK-1 postStart ordering: scenario settings -----------------------------------------------
HK1_HOOK_S = 6   # the hook's sleep
HK1_RUN_S = 10   # container a exits 1 this long after its start (after its hook ended)
assert HK1_RUN_S > HK1_HOOK_S + 2
# A container's own stamp lags the moment it stands for by the fork of adjtimex and awk: budget
# 0.5 s (as KB-1's KB1_STAMP_S).
STAMP_LAG_S = 0.5
_UP_SYNC = "[UP] pkg/kubelet/kuberuntime/kuberuntime_manager.go SyncPod (start(ctx, \"container\", …) for each container in turn)"
register(
    [
        within("HK-1", "hook_start_after_entrypoint_s", 0, -(STAMP_LAG_S + EXEC_START_S), EXEC_START_S + STAMP_LAG_S,
               f"no order between them: StartContainer returns once the process runs, the hook's exec starts within "
               f"{EXEC_START_S:g} s; each side's stamp lags by up to {STAMP_LAG_S:g} s (fork of adjtimex) — either "
               "order within 1 s", f"{S1_POSTSTART}; CASES-workloads.md HK-1 (within 1 s, either order); {UP_START}"),
        within("HK-1", "b_start_after_hook_end_s", 0, 0, EXEC_START_S + KUBELET_HANDOFF_S + STAMP_LAG_S,
               f"b is started only when a's hook returned: +{EXEC_START_S:g} s the exec's end reaching the kubelet "
               f"+{KUBELET_HANDOFF_S:g} s create and start of b +{STAMP_LAG_S:g} s b's stamp",
               f"[S0] L9; CASES-workloads.md HK-1 (+[0, 2] s); {UP_START} (the hook runs inside startContainer); {_UP_SYNC}"),
        equal("HK-1", "a_state_during_hook", "waiting:ContainerCreating",
              f"CASES-workloads.md HK-1; {UP_START} (no status is generated while the pod worker waits for the hook); "
              "[UP] pkg/kubelet/kubelet_pods.go convertToAPIContainerStatuses (a container never reported: waiting ContainerCreating)"),
        equal("HK-1", "b_state_during_hook", "waiting:ContainerCreating", f"CASES-workloads.md HK-1; {UP_START}; {_UP_SYNC}"),
        equal("HK-1", "pod_ready_during_hook", "False", f"CASES-workloads.md HK-1; {UP_START}"),
        equal("HK-1", "hook_ran_on_every_start", True,
              f"CASES-workloads.md HK-1 (hook-start lines = starts); {UP_START} (the hook is part of every startContainer)"),
        equal("HK-1", "b_restarted_with_a", False, f"{_UP_SYNC} (only a is restarted: computePodActions keeps b)"),
    ],
    VERIFIED_IN,
)

# -- HK-4 a hook still running at the delete (kubernetes/kubernetes#116032, open) -------------
HK4_GRACE_S = 10
HK4_HOOK_SLEEP_S = 3601
# delete this long after the container's Started event (the hook is running by then)
HK4_DELETE_AFTER_S = 3
# how long after the delete the pod is watched: well past the grace period + the 2 s minimum +
# a pod's clean-up, where a correct kubelet has long removed it
HK4_WINDOW_S = 30
assert HK4_WINDOW_S > HK4_GRACE_S + 2 * MINIMUM_GRACE_PERIOD_S + 10
UP_HK4 = ("[UP] pkg/kubelet/kubelet.go SyncPod (sctx := context.WithoutCancel(ctx), «TODO(#113606)»: the runtime's SyncPod "
          "never sees the pod worker's cancellation); pkg/kubelet/kuberuntime/kuberuntime_container.go startContainer "
          "(runner.Run of the postStart hook); pkg/kubelet/lifecycle/handlers.go handlerRunner.Run (exec with timeout 0, "
          "«TODO(tallclair): Pass a proper timeout value»); k8s.io/cri-client remote_runtime.go ExecSync (timeout 0: no "
          "deadline); pkg/kubelet/pod_workers.go UpdatePod (cancelFn on termination), one sync per pod at a time "
          "(v1.34.4 … v1.37.2: the same)")
HK4_BUG = "kubernetes/kubernetes#116032 (open, triage/accepted; R30: also #122222 eviction, open)"
HK4_MECHANISM = ("the postStart exec hook runs inside the runtime's SyncPod → startContainer with no timeout, on a context "
                 "stripped of cancellation (kubelet.go SyncPod: context.WithoutCancel, TODO #113606): the delete cancels the "
                 "pod worker's sync (pod_workers.go UpdatePod → cancelFn) but not the hook's ExecSync, and the pod worker runs "
                 "one sync at a time — SyncTerminatingPod (killContainer, SIGTERM, the grace period) waits until the hook "
                 "returns; meanwhile no status is generated (container waiting ContainerCreating) and the pod stays Terminating")
# after the hook's process is killed: the hook returns (+ exec end), killContainer sends SIGTERM
# (the app exits at once), PLEG sees the exit, SyncTerminatingPod and the pod's removal
HK4_CLEANUP_S = 1.0  # sandbox stop, volume unmount, TerminatePod, delete with grace 0 (as KB-1's SANDBOX_STOP_S + POD_CLEANUP_S / 2 each)
_HK4_GONE_HIGH = EXEC_START_S + KUBELET_HANDOFF_S + SIGNAL_DELIVERY_S + PLEG_RELIST_S + KUBELET_HANDOFF_S + 2 * HK4_CLEANUP_S
register(
    [
        equal("HK-4", "container_state_during_hook", "waiting:ContainerCreating",
              f"CASES-workloads.md HK-4 (R30); {UP_HK4}", minors=(34, None)),
        Expectation(case="HK-4", name="pod_present_after_window", documented=True, source=f"CASES-workloads.md HK-4; {UP_HK4}",
                    minors=(34, None),
                    known_bug=KnownBug(HK4_BUG, correct=False, mechanism=HK4_MECHANISM)),
        Expectation(case="HK-4", name="sigterm_before_hook_killed", documented=False, source=f"CASES-workloads.md HK-4; {UP_HK4}",
                    minors=(34, None),
                    known_bug=KnownBug(HK4_BUG, correct=True, mechanism=HK4_MECHANISM)),
        within("HK-4", "gone_after_hook_killed_s", 0, 0, _HK4_GONE_HIGH,
               f"once the hook ends everything follows at once: +{EXEC_START_S:g} s exec end +{KUBELET_HANDOFF_S:g} s kill "
               f"+{SIGNAL_DELIVERY_S:g} s SIGTERM (the app exits at once) +{PLEG_RELIST_S:g} s PLEG +{KUBELET_HANDOFF_S:g} s "
               f"terminating sync +{2 * HK4_CLEANUP_S:g} s sandbox stop and the pod's removal",
               f"CASES-workloads.md HK-4 (≤ 12 s); {UP_HK4}", minors=(34, None)),
        equal("HK-4", "exit_code", 143, f"CASES-workloads.md HK-4 (TERM trapped, exit 143); {UP_START}", minors=(34, None)),
    ],
    VERIFIED_IN,
)
