"""PC — pod conditions and status latency (docs/cases/CASES-workloads.md §1.5, §2 "Status
generation", "PLEG", §4 PC-1…PC-5).

What the kubelet writes into a pod's ``status.conditions`` and how fast:

- PC-1: the condition chain PodScheduled → PodReadyToStartContainers → Initialized →
  ContainersReady → Ready and its reasons and messages while an init container runs, while the
  main container is unready, and while a readiness gate's condition is missing.
- PC-2: PodReadyToStartContainers is True at or before the first container's start; while an
  image pull stalls it is False on 1.34/1.35 and True from 1.36 (OnPodSandboxReady); with a
  RuntimeClass whose handler the runtime lacks it stays False, with reason ``PodSandboxNotReady``
  from 1.37 and none before.
- PC-3: status latency (R39), medians of 20 samples: a container's start, its exit, a resize, each
  from its cause to our watch; the periodic 1 s PLEG relist against the on-demand relist of 1.36+.
- PC-4: a deleted pod held by a finalizer still reaches its terminal phase; the server's STATUS
  column then shows the container's reason, not ``Terminating``; the object goes once the
  finalizer is removed.
- PC-5: ``metadata.generation`` counts accepted spec changes, the kubelet reports it back in
  ``status.observedGeneration`` and each condition's ``observedGeneration``.
- PC-6: the readiness of pods a graceful node shutdown kills (R42; the NF-9 profile): they stay
  Ready (and ready in their EndpointSlice) until their containers have exited — their own probe
  does not run after the SIGTERM (the probe worker exits on the shutdown's phase Failed; a race: an
  exec in flight at the SIGTERM) and the node lifecycle controller does not mark the pods of a node
  that reports NotReady itself.

Source read in v1.34.4, v1.35.4, v1.36.3, v1.37.2 (``$(go env GOMODCACHE)/k8s.io/kubernetes@v…``):
``pkg/kubelet/status/generate.go`` (identical texts in the four for ContainersNotReady,
ContainersNotInitialized, ReadinessGatesNotReady; ``GeneratePodReadyToStartContainersCondition``
gains ``Reason: PodSandboxNotReady`` and ``Message: <PodSandboxChanged's reason>`` only in
v1.37.2 — v1.36.3 still returns the False condition with neither), ``pkg/features/kube_features.go``
(PodObservedGenerationTracking beta/on 1.34, GA/locked on 1.35–1.37; PodReadyToStartContainersCondition
beta/on 1.34–1.36, GA 1.37), ``pkg/printers/internalversion/printers.go`` ``printPod`` (the
"Terminating" STATUS only for a deleted pod whose phase is not terminal: the same in the four),
``pkg/apis/core/validation/validation.go`` ``ValidatePodUpdate`` (image, activeDeadlineSeconds
set or lowered, tolerations added are the mutable fields).
"""

from __future__ import annotations

from ..judge.expectations import Band, Race, equal, exact, register, within
from .faults import UP_ENDPOINTS, endpoint_after_pod
from .probes import PROBE_EXEC_S
from .faults_node import (EMIT_S, FAST, KILL_PATH_S, SIGTERM_AFTER_SIGNAL_S, UP_MARK, UP_SHUTDOWN_READY,
                          UP_SHUTDOWN_STATUS)
from .kubelet import (API_TIMESTAMP_RESOLUTION_S, CONTAINER_START_S, KUBELET_HANDOFF_S, PLEG_RELIST_S, STATUS_UPDATE_S,
                      UPGRADE_PATH_READ)

VERIFIED_IN = UPGRADE_PATH_READ

S1_CONDITIONS = "[S1] L246, L271 (pod conditions, readiness gates)"
S0_READY_TO_START = "[S0] L204; [S1] L271 (PodReadyToStartContainers: sandbox and network ready)"
S1_MUTABLE = "[S1] L70 (which pod fields may change)"
UP_GENERATE = "[UP] pkg/kubelet/status/generate.go"
UP_CONTAINERS_READY = f"{UP_GENERATE} GenerateContainersReadyCondition (restartable init containers counted first, then containers; message 'containers with unready status: %s')"
UP_INITIALIZED = f"{UP_GENERATE} GeneratePodInitializedCondition, isInitContainerInitialized (a sidecar is initialized once started; message 'containers with incomplete status: %s')"
UP_POD_READY = f"{UP_GENERATE} GeneratePodReadyCondition (ContainersReady's reason and message copied while it is False; then the readiness gates)"
UP_READY_TO_START = f"{UP_GENERATE} GeneratePodReadyToStartContainersCondition (True iff runtimeutil.PodSandboxChanged needs no new sandbox)"
UP_PRINTER = "[UP] pkg/printers/internalversion/printers.go printPod (Terminating only if deletionTimestamp and phase not terminal)"
UP_FINALIZER = ("[UP] staging apiserver pkg/registry/generic/registry/store.go ShouldDeleteDuringUpdate (read in "
                "apiserver v0.34.4, v0.37.2: an update emptying the finalizers of an object with deletionGracePeriodSeconds 0 deletes it)")
UP_KUBELET_PHASE = "[UP] pkg/kubelet/kubelet_pods.go getPhase (a deleted pod whose containers all stopped: Succeeded if every exit was 0, else Failed)"
UP_VALIDATION = "[UP] pkg/apis/core/validation/validation.go ValidatePodUpdate (only image, activeDeadlineSeconds set or lowered, tolerations added may change)"
UP_OBSERVED = "[UP] pkg/api/v1/pod/util.go CalculatePodConditionObservedGeneration, pkg/kubelet/kubelet_pods.go generateAPIPodStatus (status.observedGeneration = pod.Generation)"

# -- PC-1 ------------------------------------------------------------------------------------
INIT_S = 3            # the init container's run
READY_AFTER_S = 5     # the main container creates /tmp/ready this long after its start
READINESS_GATE = "ple2e.test/gate"

# Two API timestamps, both truncated to the second, of events ordered in time: their difference
# reads ≥ 0 and at most the true gap + 1 s. The true gap between the container's start and Ready
# (no readiness probe: ready as soon as the status shows it running): one PLEG relist (1 s) + the
# status write (1 s).
READY_NO_PROBE_S = PLEG_RELIST_S + STATUS_UPDATE_S
# A status-subresource patch of the gate's condition → the kubelet sees the pod update (watch) →
# pod worker sync → status with Ready True → patch → our watch.
GATE_TO_READY_S = KUBELET_HANDOFF_S + STATUS_UPDATE_S

PC1 = [
    equal("PC-1", "initialized_reason_while_init_runs", "ContainersNotInitialized", UP_INITIALIZED),
    # the catalogue wrote "[init]": the sidecar, not yet started, is incomplete too (its status
    # exists, Started false), in spec order
    equal("PC-1", "initialized_message_while_init_runs", "containers with incomplete status: [init side]",
          f"{S1_CONDITIONS}; {UP_INITIALIZED}"),
    equal("PC-1", "containers_ready_reason_while_unready", "ContainersNotReady", UP_CONTAINERS_READY),
    # the sidecar has no readiness probe: ready once started, so only main is listed
    equal("PC-1", "containers_ready_message_while_unready", "containers with unready status: [main]", UP_CONTAINERS_READY),
    equal("PC-1", "ready_reason_while_unready", "ContainersNotReady", UP_POD_READY),
    equal("PC-1", "ready_message_while_unready", "containers with unready status: [main]", UP_POD_READY),
    equal("PC-1", "conditions_in_order", True, f"{S1_CONDITIONS}; {UP_GENERATE}",
          why="lastTransitionTime of the True conditions: PodScheduled ≤ PodReadyToStartContainers ≤ Initialized ≤ "
              "ContainersReady ≤ Ready (1 s resolution, ties allowed)"),
    within("PC-1", "ready_after_started_no_probe_s", 1, 0, READY_NO_PROBE_S + API_TIMESTAMP_RESOLUTION_S,
           f"the container is ready in the first status that shows it running: PLEG relist {PLEG_RELIST_S:g} s + "
           f"status write {STATUS_UPDATE_S:g} s; two truncated API times: ≥ 0, +{API_TIMESTAMP_RESOLUTION_S:g} s",
           f"{S1_CONDITIONS}; [UP] pkg/kubelet/prober/prober_manager.go UpdatePodStatus (no readiness probe: ready = running)"),
    equal("PC-1", "containers_ready_with_gate_missing", "True", UP_POD_READY),
    equal("PC-1", "ready_reason_gate_missing", "ReadinessGatesNotReady", UP_POD_READY),
    equal("PC-1", "ready_message_gate_missing",
          f'corresponding condition of pod readiness gate "{READINESS_GATE}" does not exist.', f"{S1_CONDITIONS}; {UP_POD_READY}"),
    within("PC-1", "ready_after_gate_patch_s", 1, 0, GATE_TO_READY_S,
           f"host times: the kubelet sees the status patch and syncs ({KUBELET_HANDOFF_S:g} s), writes Ready True and "
           f"the watch delivers it ({STATUS_UPDATE_S:g} s)", UP_POD_READY),
]

# -- PC-2 ------------------------------------------------------------------------------------
PC2 = [
    # the catalogue expected True "at or before" the first container's start (the sandbox exists
    # first); v1.34.4 read 1 s after it (13:18:04 against 13:18:03, 2026-12-02): on 1.34–1.35 the
    # condition's time is the status write that first sees the sandbox, which comes after the start
    within("PC-2", "ready_to_start_after_started_s", 0, 0, READY_NO_PROBE_S + API_TIMESTAMP_RESOLUTION_S,
           f"SyncPod writes the pod's status before it creates the sandbox and starts the containers, so True is "
           f"first written by the next sync, after the relist that sees the container running (periodic "
           f"{PLEG_RELIST_S:g} s) + the status write {STATUS_UPDATE_S:g} s — never before the start; two truncated "
           f"API times: ≥ 0 (equal within one second), +{API_TIMESTAMP_RESOLUTION_S:g} s",
           f"{S0_READY_TO_START}; {UP_READY_TO_START}; [UP] pkg/kubelet/kubelet.go SyncPod (generateAPIPodStatus and "
           f"SetPodStatus before containerRuntime.SyncPod); pkg/kubelet/status/status_manager.go updateStatusInternal, "
           f"updateLastTransitionTime (lastTransitionTime = the write's time when the status changes)",
           minors=(34, 35)),
    # from 1.36 the runtime calls back as soon as the sandbox is ready, before the image check and
    # the container's create and start: v1.36.3 read −1 s (11:00:50 against 11:00:51, 2026-12-03;
    # the condition reached the watch 0.03 s before the Created event, 0.17 s before Started), 0 in
    # the runs before; v1.37.2 0
    within("PC-2", "ready_to_start_after_started_s", 0, -(CONTAINER_START_S + API_TIMESTAMP_RESOLUTION_S),
           API_TIMESTAMP_RESOLUTION_S,
           f"OnPodSandboxReady writes True in its own goroutine once the sandbox and network are ready, while the pod "
           f"worker goes on to create and start the container (≤ {CONTAINER_START_S:g} s): the write comes before the "
           f"start or beside it; two truncated API times: −{CONTAINER_START_S:g} s create and start "
           f"−{API_TIMESTAMP_RESOLUTION_S:g} s truncation; +{API_TIMESTAMP_RESOLUTION_S:g} s truncation when the "
           f"goroutine's write lands just after the start",
           f"{S0_READY_TO_START}; CASES-workloads.md W18, open point 9 (R43); [UP] pkg/kubelet/kuberuntime/"
           f"kuberuntime_manager.go SyncPod (step 5: runtimeHelper.OnPodSandboxReady after createPodSandbox, before the "
           f"image pull and the containers); pkg/kubelet/kubelet.go OnPodSandboxReady (SetPodStatus with the condition "
           f"True in a goroutine, kubernetes#134460); pkg/kubelet/status/status_manager.go updateLastTransitionTime",
           minors=(36, None)),
    equal("PC-2", "ready_to_start_status[bogus-handler]", "False", f"{S0_READY_TO_START}; {UP_READY_TO_START}"),
    equal("PC-2", "ready_to_start_status[control]", "True", UP_READY_TO_START),
    equal("PC-2", "ready_to_start_reason[bogus-handler]", "", f"{UP_READY_TO_START}: v1.34.4–v1.36.3 set no reason",
          minors=(34, 36)),
    equal("PC-2", "ready_to_start_reason[bogus-handler]", "PodSandboxNotReady",
          f"{UP_READY_TO_START}: v1.37.2 Reason kubetypes.PodSandboxNotReadyReason", minors=(37, None)),
    equal("PC-2", "ready_to_start_has_message[bogus-handler]", False, f"{UP_READY_TO_START}: no message before v1.37.2",
          minors=(34, 36)),
    equal("PC-2", "ready_to_start_has_message[bogus-handler]", True,
          f"{UP_READY_TO_START}: v1.37.2 Message = PodSandboxChanged's reason", minors=(37, None)),
    equal("PC-2", "ready_to_start_while_pull_stalls", "False",
          f"R43; {UP_READY_TO_START}: before v1.36.3 the condition is generated in the sync that runs after the pull returns",
          minors=(34, 35)),
    equal("PC-2", "ready_to_start_while_pull_stalls", "True",
          "R43; [UP] pkg/kubelet/kubelet.go OnPodSandboxReady (v1.36.3, v1.37.2), called by kuberuntime_manager.go "
          "SyncPod right after the sandbox is created: True while the pull stalls", minors=(36, None)),
    equal("PC-2", "stalled_container_waiting_reason", "ContainerCreating",
          "[UP] pkg/kubelet/kubelet_pods.go convertToAPIContainerStatuses (a container never created waits with ContainerCreating)"),
    equal("PC-2", "sandbox_event_names_handler", True,
          "[UP] pkg/kubelet/kuberuntime/kuberuntime_manager.go SyncPod (FailedCreatePodSandBox with the runtime's error, "
          "which names the missing handler)"),
]

# -- PC-4 ------------------------------------------------------------------------------------
R24 = "R24 (kubernetes/kubernetes#116410, #115331)"
# after the finalizer's removal: the update that empties the finalizers deletes the object
# (deletionGracePeriodSeconds is already 0: the kubelet's final delete), then our watch.
GONE_AFTER_FINALIZER_S = STATUS_UPDATE_S

PC4 = [
    equal("PC-4", "phase[exit-0]", "Succeeded", f"{R24}; {UP_KUBELET_PHASE}"),
    equal("PC-4", "phase[exit-1]", "Failed", f"{R24}; {UP_KUBELET_PHASE}"),
    equal("PC-4", "status_column[exit-0]", "Completed", f"{R24}; {UP_PRINTER}"),
    equal("PC-4", "status_column[exit-1]", "Error", f"{R24}; {UP_PRINTER}"),
    exact("PC-4", "restarts", 0, f"{R24}; {UP_KUBELET_PHASE}",
          "a deleted pod's containers are never restarted (the pod worker is terminating)"),
    within("PC-4", "gone_after_finalizer_removed_s", 0.5, 0, GONE_AFTER_FINALIZER_S,
           f"host times: the patch that empties the finalizers deletes the object in the same update; the watch "
           f"delivers the DELETED within {STATUS_UPDATE_S:g} s (the catalogue's ≈ 5 s has no mechanism)",
           f"{R24}; {UP_FINALIZER}"),
]

# -- PC-5 ------------------------------------------------------------------------------------
# After an accepted spec change: the kubelet's pod config gets the update (watch), the pod worker
# syncs and generates a status with the new generation, the status manager patches it, our watch.
OBSERVED_S = KUBELET_HANDOFF_S + STATUS_UPDATE_S

PC5 = [
    exact("PC-5", "generation_step", 1, f"{S1_MUTABLE}; [UP] pkg/registry/core/pod/strategy.go updatePodGeneration (generation +1 on a spec change)",
          "each accepted spec change increments metadata.generation by one"),
    exact("PC-5", "refused_status", 422, f"{S1_MUTABLE}; {UP_VALIDATION}",
          "a forbidden pod update is Invalid (422)"),
    equal("PC-5", "accepted", True, f"{S1_MUTABLE}; {UP_VALIDATION}"),
    within("PC-5", "observed_generation_after_patch_s", 1, 0, OBSERVED_S,
           f"host times: kubelet hand-off and sync ({KUBELET_HANDOFF_S:g} s) + status write and watch ({STATUS_UPDATE_S:g} s); "
           "PodObservedGenerationTracking beta/on 1.34, GA 1.35+ (read live)", f"{UP_OBSERVED}; [UP] pkg/features/kube_features.go"),
    equal("PC-5", "conditions_observed_generation_current", True, UP_OBSERVED,
          why="every condition the kubelet owns carries the pod's generation once the status is written"),
    equal("PC-5", "observed_generation_gate", True,
          "[UP] pkg/features/kube_features.go PodObservedGenerationTracking (1.34 beta default true; 1.35+ GA locked)"),
]

# -- PC-3 ------------------------------------------------------------------------------------
# R39: the kubelet's status latency. v1.34.4 and v1.35.4: the generic PLEG relists every 1 s
# (pkg/kubelet/pleg/generic.go Relist; genericPlegRelistPeriod), so a change the kubelet made or
# saw waits up to 1 s for the relist, then the status write. v1.36.3 and v1.37.2: gate
# PLEGOnDemandRelist (beta/on 1.36, GA 1.37; pkg/features/kube_features.go): after a SyncPod that
# did something (kubelet.go SyncPod: postSync → RequestPodRelist → GenericPLEG.RequestRelist) the
# pod is relisted at once — a container start and a resize; a container's own exit is no kubelet
# action and still waits for the periodic 1 s relist (every version).
SAMPLES = 20
R39 = "R39"
UP_PLEG = "[UP] pkg/kubelet/pleg/generic.go Relist, RequestRelist; pkg/kubelet/kubelet.go SyncPod (postSync RequestPodRelist, v1.36.3+)"
PERIODIC_MEDIAN_S = PLEG_RELIST_S + 0.5   # half a relist on average, plus the status write (≤ 0.5 s, §3.3 "+w") with room
ON_DEMAND_MEDIAN_S = 0.5                   # relist at once + status write
RESIZE_PERIODIC_MEDIAN_S = 2.5             # kubelet hand-off of the resize + CRI update + the next relist + write (catalogue)

PC3 = [
    within("PC-3", "start_to_watch_median_s", 0.75, 0, PERIODIC_MEDIAN_S,
           f"the start waits for the periodic relist ({PLEG_RELIST_S:g} s, uniform: median ½) + status write; median of {SAMPLES}",
           f"{R39}; {UP_PLEG}", minors=(34, 35)),
    within("PC-3", "start_to_watch_median_s", 0.25, 0, ON_DEMAND_MEDIAN_S,
           f"PLEGOnDemandRelist: relisted right after the SyncPod that started it, + status write; median of {SAMPLES}",
           f"{R39}; {UP_PLEG}", minors=(36, None)),
    within("PC-3", "exit_to_watch_median_s", 0.75, 0, PERIODIC_MEDIAN_S,
           f"an exit is no kubelet action: the periodic relist ({PLEG_RELIST_S:g} s, median ½) + status write, every "
           f"version; median of {SAMPLES}", f"{R39}; {UP_PLEG}"),
    within("PC-3", "resize_to_watch_median_s", 1.25, 0, RESIZE_PERIODIC_MEDIAN_S,
           f"the resize's SyncPod, then the periodic relist ({PLEG_RELIST_S:g} s) + status write; median of {SAMPLES}",
           f"{R39}; {UP_PLEG}", minors=(34, 35)),
    within("PC-3", "resize_to_watch_median_s", 0.25, 0, ON_DEMAND_MEDIAN_S,
           f"PLEGOnDemandRelist: the resize's SyncPod requests a relist at once, + status write; median of {SAMPLES}",
           f"{R39}; {UP_PLEG}", minors=(36, None)),
    equal("PC-3", "on_demand_relist_gate", "absent", f"{UP_PLEG}; [UP] pkg/features/kube_features.go (no PLEGOnDemandRelist before 1.36)",
          minors=(34, 35)),
    equal("PC-3", "on_demand_relist_gate", "true", "[UP] pkg/features/kube_features.go PLEGOnDemandRelist (beta/on 1.36, GA 1.37)",
          minors=(36, None)),
]

# -- PC-6 ------------------------------------------------------------------------------------
# A graceful node shutdown (NF-9's spoofed PrepareForShutdown(true) on the worker of the
# multi-node-fast-lifecycle profile) kills two Deployments' pods on the worker: "probe" (its SIGTERM
# trap removes the readiness file, as the case asks) and "control" (the file stays); both sleep
# PC6_TERM_S in the trap and exit 0. No writer makes them Ready=False before their containers end:
# - their own readiness probe never runs after the SIGTERM: SyncTerminatingPod (pkg/kubelet/kubelet.go)
#   applies the shutdown's status function (phase Failed: nodeshutdown_manager.go killPods) and hands
#   the status to the status manager *before* killPod sends SIGTERM, and the readiness worker's next
#   tick reads the cached terminal phase and exits (pkg/kubelet/prober/worker.go doProbe "Pod is
#   terminated, exiting probe worker"). The trap's removal of the file is never seen (CASES-workloads.md
#   PC-6 expects the opposite: "only through their own readiness probe");
# - the status manager holds the terminal phase back while containers may run (status_manager.go
#   mergePodStatus) and keeps the Ready=True it generated;
# - the node lifecycle controller marks a node's pods not ready (MarkPodsNotReady) only on a Ready
#   transition it sees from True (monitorNodeHealth: observedReadyCondition, the node's condition as
#   posted, must be True — its own Unknown after a silent kubelet) or on a pod update of a pod on a
#   not-ready node (processPod); the kubelet posting Ready=False "node is shutting down" itself is
#   neither, and the pods are not updated while they terminate.
# So Ready=False comes with the terminal status once the container has exited (GeneratePodReadyCondition
# for a terminal phase: reason PodCompleted for Succeeded, PodFailed for Failed), and the EndpointSlice
# keeps the pod ready=True serving=True until then (R42, the behaviour users ask about).
# The terminal phase of an exit 0: killPods' status function keeps a successful terminal phase and
# mergePodStatus holds its Failed back until the containers stopped — KB-2's race (kubernetes#141483):
# Succeeded (seen 4 of 4 on v1.37.2) or Failed.
# The race: a probe tick whose check of the cached phase came just before the shutdown's status did
# still runs its exec, which starts tens of ms later — after the SIGTERM. In a "probe" pod it then
# sees the file gone: the kubelet writes Ready=False (reason PodFailed: SetContainerReadiness
# regenerates the condition with the cached phase Failed) within a second of the SIGTERM. Seen on
# v1.34.4 in 5 of 8 pods of 2 runs (runs ~40 ms after the SIGTERM), on v1.37.2 in 1 of 16 pods of
# 4 runs (a "control", 6 ms after it: the run succeeded).
# Read in v1.34.4 … v1.37.2: MarkPodsNotReady and its two callers, doProbe's terminal-phase exit,
# SyncTerminatingPod's order, GenerateContainersReadyCondition, killPods' status function.
PC6_PROFILE = FAST
PC6_REPLICAS = 2
PC6_PERIOD_S = 2
PC6_TERM_S = 15
PC6_GRACE_S = 30
UP_PC6_PROBE = ("[UP] pkg/kubelet/kubelet.go SyncTerminatingPod (podStatusFn → statusManager.SetPodStatus, then killPod); "
                "pkg/kubelet/prober/worker.go doProbe (cached phase Failed → the worker exits) (v1.34.4 … v1.37.2)")
UP_PC6_NLC = ("[UP] pkg/controller/nodelifecycle/node_lifecycle_controller.go monitorNodeHealth (MarkPodsNotReady only when "
              "the posted Ready was True), processPod (only on a pod event) (v1.34.4 … v1.37.2)")
UP_PC6_TERMINAL = "[UP] pkg/kubelet/status/generate.go generateContainersReadyConditionForTerminalPhase (PodCompleted, PodFailed)"
S_PC6 = "CASES-workloads.md PC-6 (R42: #112443, #110755, #105780)"
PC6 = [
    *[within("PC-6", f"not_ready_after_signal_s[{v}]", PC6_TERM_S + EMIT_S + KILL_PATH_S / 2, PC6_TERM_S,
             PC6_TERM_S + SIGTERM_AFTER_SIGNAL_S + PLEG_RELIST_S + STATUS_UPDATE_S,
             f"host time just before the PrepareForShutdown emit → receive time of the pod's first Ready=False: the "
             f"pod stays Ready until its container ends — SIGTERM within {SIGTERM_AFTER_SIGNAL_S:g} s of the signal (NF-9), the "
             f"trap's {PC6_TERM_S} s, +{PLEG_RELIST_S:g} s relist +{STATUS_UPDATE_S:g} s the terminal status write and "
             f"our watch",
             f"{S_PC6} (expects [0, 4] s through the probe); {UP_PC6_PROBE}; {UP_PC6_NLC}; {UP_SHUTDOWN_READY}",
             race=None if v == "control" else Race(
                 EMIT_S + KILL_PATH_S, band=Band(0, SIGTERM_AFTER_SIGNAL_S + PROBE_EXEC_S + STATUS_UPDATE_S),
                 why=f"a probe exec in flight at the SIGTERM sees the file gone (module doc, 'The race'): SIGTERM within "
                     f"{SIGTERM_AFTER_SIGNAL_S:g} s, that exec within {PROBE_EXEC_S:g} s, the kubelet's status write and our watch "
                     f"{STATUS_UPDATE_S:g} s ({UP_PC6_PROBE})",
                 seen="v1.34.4: 3 of 4 probe pods in 2 runs (1.79, 1.80, 1.93 s); v1.37.2: 0 of 8 in 4 runs (2026-12-02)"))
      for v in ("probe", "control")],
    *[equal("PC-6", f"not_ready_reason[{v}]", "PodCompleted|PodFailed",
            f"{S_PC6}; {UP_PC6_TERMINAL} (the Ready=False of the terminal status; never MarkPodsNotReady's: {UP_MARK})",
            pattern=True) for v in ("probe", "control")],
    *[exact("PC-6", f"probe_runs_after_sigterm[{v}]", 0, f"{S_PC6}; {UP_PC6_PROBE}",
            "the readiness worker exits at its first tick after the shutdown's status (phase Failed) reached the status "
            "manager, which is before the SIGTERM", unit="runs",
            race=Race(1, band=Band(1, 1),
                      why="a tick that read the cached phase just before the shutdown's status arrived runs its exec tens "
                          f"of ms later, after the SIGTERM (module doc, 'The race'); the next tick exits ({UP_PC6_PROBE})",
                      seen="v1.34.4: 5 of 8 pods in 2 runs (40 ms after the SIGTERM); v1.37.2: 1 of 16 pods in 4 runs (6 ms) (2026-12-02)"))
      for v in ("probe", "control")],
    *[endpoint_after_pod("PC-6", f"endpoint_not_ready_after_pod_not_ready_s[{v}]", f"{S_PC6}; {UP_ENDPOINTS}",
                         ": not ready, or gone with the terminal pod; until then the endpoint stays ready=True serving=True")
      for v in ("probe", "control")],
    equal("PC-6", "phase_after_shutdown", "Succeeded|Failed",
          f"{S_PC6}; {UP_SHUTDOWN_STATUS} ('unless it was already in a successful terminal phase'); KB-2's race "
          "(kubernetes#141483: mergePodStatus holds the status function's Failed back until the containers stopped)",
          pattern=True),
]

register([*PC1, *PC2, *PC3, *PC4, *PC5, *PC6], VERIFIED_IN)
