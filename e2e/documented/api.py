"""AD, PR, PS-7 — the fast API-level cases (CASES.md AD-1, AD-2, PR-1, PR-2, PS-7).

What the API server and the kubelet do to one pod in seconds:

- AD-1: the ``DefaultTolerationSeconds`` admission plugin adds NoExecute tolerations for
  ``node.kubernetes.io/not-ready`` and ``node.kubernetes.io/unreachable`` with
  ``tolerationSeconds: 300`` to every pod that lacks them (server dry-run).
- AD-2: a running pod carries the conditions PodReadyToStartContainers, Initialized,
  ContainersReady, Ready and PodScheduled, all ``True``.
- PR-1: a startupProbe gives a container ``failureThreshold × periodSeconds`` to start;
  liveness and readiness probes do not run before it succeeded; a container that does not
  start in time is killed and restarted per ``restartPolicy``.
- PR-2: a failing readinessProbe marks the pod's endpoint ``ready=false`` in the EndpointSlice
  and does not restart the container.
- PS-7: ``preStop.sleep.seconds`` above ``terminationGracePeriodSeconds`` is rejected with
  "must be non-negative and less than terminationGracePeriodSeconds (N)"; equal and 0 pass.

Probe timings (PR-1, PR-2) are measured on timestamps written by the container and by its exec
probes (:mod:`e2e.evidence.stamps`, µs resolution, the host's clock) and on the recorder's receive times.
Their bands come from the prober worker (pkg/kubelet/prober/worker.go, the same in v1.34.4,
v1.35.4, v1.36.3 and v1.37.2 for containers started after the kubelet: from 1.35, with
ChangeContainerStatusOnKubeletRestart deprecated and off, only a container started ≥ 10 s before
a kubelet restart keeps its readiness and startup results — no scenario here restarts the
kubelet): each probe of a container has its own worker with a ``time.Ticker`` of
``periodSeconds`` started when the pod is added — so its phase against the container's start
is arbitrary within one period (the random initial sleep of ``run`` applies only within one
period of a kubelet restart: not here) — and a worker probes only once the status manager
shows the container running, which the PLEG relist reports. A readiness worker is also run at
once (and its ticker reset) whenever the kubelet generates the status of a running container
that has no readiness success yet (prober_manager.go UpdatePodStatus, ``manualTriggerCh``).

Under ``restartPolicy: Never`` a startup-probe kill of the only container kills the pod
(computePodActions sets ``KillPod`` when nothing is kept): its Killing event reads the generic
"Stopping container app", not "… failed startup probe" (the same in v1.34.4 … v1.37.2).
"""

from __future__ import annotations

from ..judge.expectations import Band, Expectation, equal, exact, register
from .kubelet import KUBELET_HANDOFF_S, PLEG_RELIST_S, UPGRADE_PATH_READ

# Read in v1.34.4, v1.35.4, v1.36.3, v1.37.2 (module doc; 5d96d18 "ES, PR, PS, AD: sources read in
# v1.34.4, v1.35.4, v1.36.3, v1.37.2").
VERIFIED_IN = UPGRADE_PATH_READ

# -- sources ---------------------------------------------------------------------------------
S0_TAINTS = "[S0] «Taints и tolerations» (kubectl apply --dry-run=server output)"
S0_PHASES = "[S0] «Фазы, состояния…» (coredns conditions)"
S0_STOP = "[S0] «Остановка пода по шагам» (sleep-too-long.yaml)"
S1_PROBES = "[S1] «Проверки: startup, liveness, readiness» (probe table)"
S1_CONDITIONS = "[S1] «restartPolicy, фазы и состояния» (status.conditions)"
UP_DTS = "[UP] plugin/pkg/admission/defaulttolerationseconds/admission.go (defaultNotReadyTolerationSeconds, defaultUnreachableTolerationSeconds = 300; Admit)"
UP_WORKER = "[UP] pkg/kubelet/prober/worker.go (worker.run, worker.doProbe)"
UP_KILL = "[UP] pkg/kubelet/kuberuntime/kuberuntime_manager.go computePodActions (startup probe failure → kill, restart if restartPolicy allows)"
UP_SLEEP = "[UP] pkg/apis/core/validation/validation.go validateSleepAction"
UP_PODTOENDPOINT = "[UP] staging endpointslice utils.go podToEndpoint (ready = serving && !terminating; serving = pod Ready); util/controller_utils.go ShouldPodBeInEndpoints (not-ready pods stay listed)"

# -- AD-1 ------------------------------------------------------------------------------------
DEFAULT_TOLERATION_KEYS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
# kube-apiserver --default-not-ready-toleration-seconds / --default-unreachable-toleration-seconds
DEFAULT_TOLERATION_SECONDS = 300
# the manifest's own, shorter not-ready toleration ([S0]: "своя toleration … сохранится")
OWN_NOT_READY_TOLERATION_SECONDS = 30

# -- probe mechanism -------------------------------------------------------------------------
# timeoutSeconds defaults to 1 (pkg/apis/core/v1/defaults.go SetDefaults_Probe) and the
# manifests keep the default: an exec probe's result comes at most this long after its tick,
# and a stamp written inside the probe lags its tick by the exec set-up, at most this long.
PROBE_TIMEOUT_S = 1.0
# Kubelet status → API (status manager syncs at once: pkg/kubelet/status/status_manager.go
# updateStatusInternal → podStatusChannel) → EndpointSlice controller (endpointUpdatesBatchPeriod
# defaults to 0: pkg/controller/endpointslice/endpointslice_controller.go syncPod) → slice
# write → our watch: two API writes and two watch deliveries, budget 1 s.
API_PROPAGATION_S = 1.0

# -- PR-1: the scenario's startupProbe (its manifest takes these values) ---------------------
STARTUP_PERIOD_S = 2
STARTUP_FAILURE_THRESHOLD = 3
STARTUP_BUDGET_S = STARTUP_FAILURE_THRESHOLD * STARTUP_PERIOD_S  # [S1]: failureThreshold × periodSeconds
# the liveness and readiness probes next to it
PR1_OTHER_PROBE_PERIOD_S = 1
# the pod that does start creates its file this long after its start: before the last
# (F-th) startup probe, which comes at least (F − 1) × period after the start
STARTS_AFTER_S = 3
assert STARTS_AFTER_S < (STARTUP_FAILURE_THRESHOLD - 1) * STARTUP_PERIOD_S

# -- PR-2: the scenario's readinessProbe ---------------------------------------------------
READINESS_PERIOD_S = 1
READINESS_FAILURE_THRESHOLD = 2
READINESS_FAIL_AFTER_S = READINESS_FAILURE_THRESHOLD * READINESS_PERIOD_S
# the container removes its readiness file this long after its start: after the pod became
# ready (first readiness probe ≤ PLEG relist + one period after the start, + propagation)
READY_FOR_S = 5
assert READY_FOR_S > PLEG_RELIST_S + READINESS_PERIOD_S + PROBE_TIMEOUT_S + API_PROPAGATION_S


# -- AD-1 DefaultTolerationSeconds ---------------------------------------------------------
register(
    [
        equal("AD-1", "default_toleration_keys", ",".join(DEFAULT_TOLERATION_KEYS), f"{S0_TAINTS}; {UP_DTS}"),
        Expectation(
            case="AD-1", name="default_toleration_seconds", documented=DEFAULT_TOLERATION_SECONDS, unit="s",
            band=Band(DEFAULT_TOLERATION_SECONDS, DEFAULT_TOLERATION_SECONDS),
            why="a configured constant, copied as is", source=f"{S0_TAINTS}; {UP_DTS}",
        ),
        equal("AD-1", "default_toleration_effect", "NoExecute", f"{S0_TAINTS}; {UP_DTS}"),
        equal("AD-1", "default_toleration_operator", "Exists", f"{S0_TAINTS}; {UP_DTS}"),
        Expectation(
            case="AD-1", name="own_toleration_seconds_kept", documented=OWN_NOT_READY_TOLERATION_SECONDS, unit="s",
            band=Band(OWN_NOT_READY_TOLERATION_SECONDS, OWN_NOT_READY_TOLERATION_SECONDS),
            why="the pod's own value, untouched", source=f"{S0_TAINTS} («своя toleration … сохранится»); {UP_DTS} (only when no toleration matches)",
        ),
        Expectation(
            case="AD-1", name="missing_toleration_added_seconds", documented=DEFAULT_TOLERATION_SECONDS, unit="s",
            band=Band(DEFAULT_TOLERATION_SECONDS, DEFAULT_TOLERATION_SECONDS),
            why="a configured constant, copied as is", source=f"{S0_TAINTS} («недостающую плагин допишет»); {UP_DTS}",
        ),
        exact("AD-1", "toleration_count[own not-ready]", 2,
              f"{S0_TAINTS}; {UP_DTS}", "the own not-ready one + the added unreachable one, nothing else", unit="tolerations"),
    ],
    VERIFIED_IN,
)

# -- AD-2 pod conditions ---------------------------------------------------------------------
# PodReadyToStartContainers: feature gate PodReadyToStartContainersCondition beta and on from
# 1.29, GA 1.37 (pkg/features/kube_features.go, v1.34.4 and v1.37.2); the kubelet adds it in
# generateAPIPodStatus (pkg/kubelet/kubelet_pods.go). Before 1.29 it is not there: undocumented.
AD2_CONDITIONS = ("ContainersReady", "Initialized", "PodReadyToStartContainers", "PodScheduled", "Ready")
_AD2_SOURCE = f"{S0_PHASES}; {S1_CONDITIONS}"
register(
    [
        equal("AD-2", "condition_types", ",".join(AD2_CONDITIONS),
               _AD2_SOURCE + "; [UP] pkg/features/kube_features.go PodReadyToStartContainersCondition (on from 1.29)",
               minors=(29, None)),
        equal("AD-2", "condition_status[PodReadyToStartContainers]", "True",
               _AD2_SOURCE + "; [UP] pkg/kubelet/status/generate.go GeneratePodReadyToStartContainersCondition", minors=(29, None)),
        *[equal("AD-2", f"condition_status[{t}]", "True", _AD2_SOURCE + "; [UP] pkg/kubelet/status/generate.go")
          for t in AD2_CONDITIONS if t != "PodReadyToStartContainers"],
    ],
    VERIFIED_IN,
)

# -- PR-1 startupProbe -----------------------------------------------------------------------
# The F-th failure comes (F − 1) periods after the first probe, which runs at the worker's first
# tick after the status manager shows the container running: no earlier than the start, no
# later than PLEG relist + one pod sync + one period after it. The kill follows the F-th result.
_KILL_LOW = (STARTUP_FAILURE_THRESHOLD - 1) * STARTUP_PERIOD_S
_KILL_HIGH = STARTUP_BUDGET_S + PLEG_RELIST_S + KUBELET_HANDOFF_S + PROBE_TIMEOUT_S + KUBELET_HANDOFF_S
register(
    [
        Expectation(
            case="PR-1", name="startup_kill_after_start_s", documented=float(STARTUP_BUDGET_S), unit="s",
            band=Band(_KILL_LOW, _KILL_HIGH),
            why=(f"budget {STARTUP_FAILURE_THRESHOLD} × {STARTUP_PERIOD_S} s; −{STARTUP_PERIOD_S} s: the first probe may "
                 f"come at once (ticker phase arbitrary, worker.run); +{PLEG_RELIST_S:g} s PLEG relist +{KUBELET_HANDOFF_S:g} s "
                 f"status sync before the first probe can run, +{PROBE_TIMEOUT_S:g} s probe timeout +{KUBELET_HANDOFF_S:g} s "
                 "kill sync after the last failure"),
            source=f"{S1_PROBES}; {UP_WORKER}; {UP_KILL}",
        ),
        exact("PR-1", "startup_probe_failures_before_kill", STARTUP_FAILURE_THRESHOLD,
              f"{S1_PROBES}; {UP_WORKER} doProbe (resultRun < FailureThreshold; onHold)",
              "failureThreshold consecutive failures, then the worker holds until a new container (onHold)", unit="probes"),
        Expectation(
            case="PR-1", name="startup_probe_period_s", documented=float(STARTUP_PERIOD_S), unit="s",
            band=Band(STARTUP_PERIOD_S - PROBE_TIMEOUT_S, STARTUP_PERIOD_S + PROBE_TIMEOUT_S),
            why=f"exact ticks (time.Ticker); ±{PROBE_TIMEOUT_S:g} s: each stamp lags its tick by the exec set-up, bounded by timeoutSeconds",
            source=f"{S1_PROBES}; {UP_WORKER} run (probeTicker)",
        ),
        Expectation(
            case="PR-1", name="kill_after_last_startup_failure_s", documented=0.0, unit="s",
            band=Band(0.0, PROBE_TIMEOUT_S + KUBELET_HANDOFF_S),
            why=f"+{PROBE_TIMEOUT_S:g} s rest of the probe's exec (timeoutSeconds) +{KUBELET_HANDOFF_S:g} s the sync that kills "
                "(syncLoopIteration startupManager.Updates → handleProbeSync → killContainer)",
            source=f"{S1_PROBES}; [UP] pkg/kubelet/kubelet.go syncLoopIteration; {UP_KILL}",
        ),
        exact("PR-1", "liveness_probe_runs_before_started", 0,
              f"{S1_PROBES} («пока не прошла — не запускает liveness и readiness»); {UP_WORKER} doProbe (c.Started)",
              "none at all", unit="probes"),
        exact("PR-1", "readiness_probe_runs_before_started", 0,
              f"{S1_PROBES} («пока не прошла — не запускает liveness и readiness»); {UP_WORKER} doProbe (c.Started)",
              "none at all", unit="probes"),
        equal("PR-1", "ready_before_started", False, f"{S1_PROBES}; {UP_WORKER} (readiness initial value Failure)"),
        equal("PR-1", "killing_event_message[Always]", "Container app failed startup probe, will be restarted",
               f"{S1_PROBES}; {UP_KILL}"),
        # Under Never the only container is not restarted, so nothing is kept: computePodActions
        # sets KillPod and SyncPod kills the pod (killPodWithSyncResult), whose per-container kill
        # carries no message — the event reads "Stopping container app" (same in v1.34.4).
        equal("PR-1", "killing_event_message[Never]", "Stopping container app",
               f"{S1_PROBES}; {UP_KILL} (keepCount == 0 → KillPod); [UP] pkg/kubelet/kuberuntime/kuberuntime_container.go "
               "killContainer (empty message → \"Stopping container %s\")"),
        Expectation(case="PR-1", name="restart_count[Always]", documented=1, unit="restarts", band=Band.at_least(1),
                    why="restarted (at least once by now; the first restart is immediate, CL-1)",
                    source=f"{S1_PROBES} («дальше по restartPolicy»); {UP_KILL}"),
        equal("PR-1", "phase[Never]", "Failed", f"{S1_PROBES} («дальше по restartPolicy»); {UP_KILL} (KillPod)"),
        exact("PR-1", "restart_count[Never]", 0, f"{S1_PROBES}; {UP_KILL}", "never restarted", unit="restarts"),
        exact("PR-1", "restart_count[starts in time]", 0, f"{S1_PROBES}", "never killed", unit="restarts"),
    ],
    VERIFIED_IN,
)
# After the startup probe succeeds the other probes start at their next tick: the success
# reaches the status manager (SetContainerStartup) once the probe's exec ended, and the
# worker's stamp lags its tick by the exec set-up. Readiness often runs sooner: while a
# running container has no readiness success, every status generation triggers an immediate
# readiness run and restarts its ticker (pkg/kubelet/prober/prober_manager.go UpdatePodStatus →
# worker.manualTriggerCh); that only moves it earlier within the same band, never before the
# startup success (doProbe checks c.Started).
for _probe in ("liveness", "readiness"):
    register(
        [
            Expectation(
                case="PR-1", name=f"{_probe}_wait_after_startup_s", documented=0.0, unit="s",
                band=Band(0.0, PROBE_TIMEOUT_S + PR1_OTHER_PROBE_PERIOD_S + PROBE_TIMEOUT_S),
                why=(f"never before the startup success; +{PROBE_TIMEOUT_S:g} s end of the startup probe's exec "
                     f"+{PR1_OTHER_PROBE_PERIOD_S} s the {_probe} worker's next tick +{PROBE_TIMEOUT_S:g} s its exec set-up"),
                source=f"{S1_PROBES}; {UP_WORKER} doProbe (c.Started); [UP] pkg/kubelet/kubelet.go syncLoopIteration (SetContainerStartup)",
            )
        ],
        VERIFIED_IN,
    )

# -- PR-2 readinessProbe and the EndpointSlice ---------------------------------------------
register(
    [
        equal("PR-2", "endpoint_ready[before removal]", True, f"{S1_PROBES}; {UP_PODTOENDPOINT}"),
        Expectation(
            case="PR-2", name="not_ready_after_removal_s", documented=float(READINESS_FAIL_AFTER_S), unit="s",
            band=Band((READINESS_FAILURE_THRESHOLD - 1) * READINESS_PERIOD_S,
                      READINESS_FAIL_AFTER_S + PROBE_TIMEOUT_S + API_PROPAGATION_S),
            why=(f"{READINESS_FAILURE_THRESHOLD} failures × {READINESS_PERIOD_S} s; −{READINESS_PERIOD_S} s: the first "
                 f"failing tick may come at once; +{PROBE_TIMEOUT_S:g} s probe timeout +{API_PROPAGATION_S:g} s "
                 "pod status → EndpointSlice controller → slice → watch"),
            source=(f"{S1_PROBES} (failureThreshold × periodSeconds); {UP_WORKER}; "
                    "[UP] pkg/controller/endpointslice/endpointslice_controller.go syncPod"),
        ),
        equal("PR-2", "endpoint_ready[not ready]", False, f"{S1_PROBES}; {UP_PODTOENDPOINT}"),
        equal("PR-2", "endpoint_serving[not ready]", False, UP_PODTOENDPOINT),
        equal("PR-2", "endpoint_terminating[not ready]", False, UP_PODTOENDPOINT),
        # [S1] words it "адрес пода убирается из EndpointSlice"; CASES.md PR-2 and the controller
        # keep the endpoint listed with ready=false
        equal("PR-2", "endpoint_listed[not ready]", True, UP_PODTOENDPOINT),
        equal("PR-2", "pod_ready_condition[not ready]", "False", f"{S1_PROBES} («помечает контейнер и под неготовыми»)"),
        exact("PR-2", "restart_count[not ready]", 0,
              f"{S1_PROBES} («контейнер не трогает»)", "the container is not touched", unit="restarts"),
        equal("PR-2", "container_state[not ready]", "running", f"{S1_PROBES} («контейнер не трогает»)"),
    ],
    VERIFIED_IN,
)

# -- PS-7 preStop sleep validation ---------------------------------------------------------
# The check is `sleep.Seconds < 0 || sleep.Seconds > gracePeriod` (so equal passes) in both
# v1.34.4 and v1.37.2. Zero is allowed with feature gate PodLifecycleSleepActionAllowZero: beta
# and on from 1.33, GA 1.34 (v1.34.4 pkg/features/kube_features.go); 1.37 dropped the gate and
# the other branch. Before 1.33 (sleep action beta from 1.30) zero is rejected with another text
# (v1.34.4 validateSleepAction, gate off).
PS7_GRACE_S = 30
PS7_OVER_S = 40
_SLEEP_FIELD = "spec.containers[0].lifecycle.preStop.sleep"
_SLEEP_DETAIL = f"must be non-negative and less than terminationGracePeriodSeconds ({PS7_GRACE_S})"
_SLEEP_DETAIL_OLD = (f"must be greater than 0 and less than terminationGracePeriodSeconds ({PS7_GRACE_S}). "
                     "Enable AllowPodLifecycleSleepActionZeroValue feature gate for zero sleep.")
_NEW, _OLD = (33, None), (30, 32)
_PS7 = f"{S0_STOP}; {UP_SLEEP}"
register(
    [
        equal("PS-7", "rejected_status", 422, f"{_PS7}; [UP] apimachinery pkg/api/errors NewInvalid"),
        equal("PS-7", "rejected_reason", "Invalid", f"{_PS7}; [UP] apimachinery pkg/api/errors NewInvalid"),
        equal("PS-7", "rejected_field", _SLEEP_FIELD, f"{_PS7} (validateHandler: fldPath.Child(\"sleep\"))"),
        equal("PS-7", "rejected_message", f'Pod "{{pod}}" is invalid: {_SLEEP_FIELD}: Invalid value: {PS7_OVER_S}: {_SLEEP_DETAIL}',
               f"{_PS7} (kubectl prints it with «The » in front: kubectl cmd/util/helpers.go)", minors=_NEW),
        equal("PS-7", "rejected_message", f'Pod "{{pod}}" is invalid: {_SLEEP_FIELD}: Invalid value: {PS7_OVER_S}: {_SLEEP_DETAIL_OLD}',
               f"{UP_SLEEP} (v1.34.4, PodLifecycleSleepActionAllowZero off: default before 1.33)", minors=_OLD),
        equal("PS-7", "accepted[sleep=grace]", True,
              f"{S0_STOP} («validateSleepAction пропускает и равное»); {UP_SLEEP} (Seconds > gracePeriod)"),
        equal("PS-7", "accepted[sleep=0]", True,
              f"{S0_STOP} («принимает ноль»); {UP_SLEEP}; [UP] PodLifecycleSleepActionAllowZero", minors=_NEW),
        equal("PS-7", "accepted[sleep=0]", False, f"{UP_SLEEP} (v1.34.4, gate off: Seconds <= 0 rejected)", minors=_OLD),
        equal("PS-7", "accepted[sleep=-1]", False, f"{UP_SLEEP} (Seconds < 0); the message's «non-negative»"),
    ],
    VERIFIED_IN,
)
