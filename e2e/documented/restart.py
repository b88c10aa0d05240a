"""RR — restart rules and policies beyond CL (CASES-workloads.md §4 RR-1 … RR-5, §1.3).

Whether a killed or exited container starts again is decided in the kubelet's
``computePodActions`` (pkg/kubelet/kuberuntime/kuberuntime_manager.go): a running container whose
liveness probe failed, or whose spec hash changed (an image update), is killed; the Killing event's
text is "Container <c> failed liveness probe" / "Container <c> definition changed", with ", will be
restarted" appended when it is to be started again — for a probe kill when the pod's policy is not
``Never`` (``shouldRestartOnFailure``; with ``ContainerRestartRules`` on, a container-level
``restartPolicy`` decides), for a changed definition always. Read in v1.34.4, v1.35.4, v1.36.3 and
v1.37.2 (identical logic; line numbers move).

Feature gates (pkg/features/kube_features.go of each version): ``ContainerRestartRules`` alpha/off in
1.34, beta/on from 1.35 (still beta in 1.37.2); ``RestartAllContainersOnContainerExits`` absent in
1.34, alpha/off in 1.35, beta/on from 1.36 — and it depends on ``ContainerRestartRules`` **and**
``NodeDeclaredFeatures`` (alpha/off 1.35, beta/on 1.36, GA 1.37: defaultKubernetesFeatureGateDependencies),
so 1.35 needs both gates on, not only the one the catalogue's ``gates-1.35`` names (profiles/gates-1.35.yaml
turns on all three).

RR-1 and RR-2 run on the gates as shipped and, where a minor ships the gate off, once more on a profile
that turns it on (``gates-1.34``: RR-1 on 1.34; ``gates-1.35``: RR-2 on 1.35). What depends on the gate is
keyed by the gate the cluster runs (read live, e2e.cluster.gates) in the measurement's first qualifier:
``stored_rules[gate on]``, ``creation[gate off]``, ``last_exit_code[gate on][main]`` (:func:`e2e.cluster.gates.gate_key`).
"""

from __future__ import annotations

from ..cluster.gates import gate_key
from ..judge.expectations import Band, equal, exact, register, within
from .crashloop import gap_expectations
from .kubelet import (
    API_TIMESTAMP_RESOLUTION_S,
    CONTAINER_START_S,
    KUBELET_HANDOFF_S,
    PLEG_RELIST_S,
    PROBE_DELAY_FROM_WHOLE_SECOND_S,
    STATUS_UPDATE_S,
    UPGRADE_PATH_READ,
)

VERIFIED_IN = UPGRADE_PATH_READ
CATALOGUE = "CASES-workloads.md"


UP_ACTIONS = ("[UP] pkg/kubelet/kuberuntime/kuberuntime_manager.go computePodActions (containerChanged → "
              "'Container %s definition changed', restart = true; liveness failure → 'Container %s failed liveness "
              "probe'; ', will be restarted' when restart)")
UP_RESTART_ON_FAILURE = "[UP] pkg/kubelet/kuberuntime/kuberuntime_manager.go shouldRestartOnFailure (pod restartPolicy != Never)"
UP_SHOULD_RESTART = ("[UP] pkg/kubelet/container/helpers.go ShouldContainerBeRestarted (OnFailure: only a non-zero exit; "
                     "Never: never)")
UP_WORKER = "[UP] pkg/kubelet/prober/worker.go run, doProbe (initialDelaySeconds, failureThreshold × periodSeconds)"
UP_BACKOFF = "[UP] pkg/kubelet/kuberuntime/kuberuntime_container.go doBackOff (CrashLoopBackOff while the window is open)"
UP_PHASE = "[UP] pkg/kubelet/kubelet_pods.go getPhase (every container terminated: Succeeded if all exited 0 and none restarts)"
UP_MUTABLE = "[UP] pkg/apis/core/validation/validation.go ValidatePodUpdate (image mutable, command not)"

# -- RR-3: liveness kills under OnFailure, Always and Never ------------------------------------------------
RR3 = f"{CATALOGUE} RR-3; [S1] L223–225; R27 (kubernetes#109537, kubernetes/website#42360)"
INITIAL_DELAY_S, PERIOD_S, FAILURES = 5, 5, 3
# first kill: the probe ticker's first tick at or after initialDelay (the ticker runs from admission,
# so the first probe lands within one period of it), then F − 1 more periods: initialDelay + (F−1)·P +
# [0, P]; judged as the Killing event's receive time − startedAt (truncated: reads up to 1 s long)
FIRST_KILL = INITIAL_DELAY_S + (FAILURES - 1) * PERIOD_S
register(
    [
        equal("RR-3", "killing_message[onfailure-exit0]", "Container app failed liveness probe, will be restarted",
              f"{RR3}; {UP_ACTIONS}; {UP_RESTART_ON_FAILURE}"),
        equal("RR-3", "killing_message[onfailure-exit1]", "Container app failed liveness probe, will be restarted",
              f"{RR3}; {UP_ACTIONS}; {UP_RESTART_ON_FAILURE}"),
        equal("RR-3", "killing_message[always-exit0]", "Container app failed liveness probe, will be restarted",
              f"{RR3}; {UP_ACTIONS}; {UP_RESTART_ON_FAILURE}"),
        # measured on v1.37.2 (the catalogue expected the probe text without ", will be restarted"): under Never
        # the one container is to be killed and nothing started, so computePodActions sets KillPod (keepCount == 0,
        # no ContainersToStart) and SyncPod kills the pod through killPodWithSyncResult → killContainer with no
        # message: the Killing event carries the default text
        equal("RR-3", "killing_message[never-exit0]", "Stopping container app",
              f"{RR3}; {UP_ACTIONS} (keepCount == 0 && no ContainersToStart → KillPod); [UP] "
              "pkg/kubelet/kuberuntime/kuberuntime_container.go killContainer (empty message → 'Stopping container %s'); "
              "measured on v1.37.2"),
        within("RR-3", "first_kill_after_start_s", FIRST_KILL + PERIOD_S / 2, FIRST_KILL - PROBE_DELAY_FROM_WHOLE_SECOND_S,
               FIRST_KILL + PERIOD_S + API_TIMESTAMP_RESOLUTION_S + KUBELET_HANDOFF_S,
               f"initialDelay {INITIAL_DELAY_S} s + (F−1)·P {(FAILURES - 1) * PERIOD_S} s + [0, P {PERIOD_S}] s (first tick "
               "of the admission-time ticker); −1 s whole-second initialDelay check; +1 s startedAt truncation +1 s kill "
               "hand-off and event", f"{RR3}; {UP_WORKER}"),
        equal("RR-3", "final_phase[onfailure-exit0]", "Succeeded",
              f"{RR3} (once a back-off window blocks the immediate restart, the exit 0 under OnFailure is final); "
              f"{UP_SHOULD_RESTART}; {UP_BACKOFF}; {UP_PHASE}"),
        within("RR-3", "restarts_before_final[onfailure-exit0]", 2, 1, 4,
               "R27: the first kill restarts at once (no back-off yet); a later kill that meets an open back-off window "
               "leaves the exit 0 terminal — which kill that is depends on the probe ticker's phase against the "
               "back-off (10 s, doubling): 1 to 4 restarts", f"{RR3}; {UP_BACKOFF}; {UP_SHOULD_RESTART}",
               unit="restarts"),
        equal("RR-3", "final_phase[never-exit0]", "Succeeded", f"{RR3}; {UP_SHOULD_RESTART}; {UP_PHASE}"),
        exact("RR-3", "restarts[never-exit0]", 0, f"{RR3}; {UP_SHOULD_RESTART}", "a count: exact", unit="restarts"),
        equal("RR-3", "phase[onfailure-exit1]", "Running", f"{RR3}; {UP_SHOULD_RESTART} (non-zero exit restarts)"),
        equal("RR-3", "phase[always-exit0]", "Running", f"{RR3}; {UP_SHOULD_RESTART} (Always restarts)"),
        equal("RR-3", "restarted[onfailure-exit1]", True, f"{RR3}; {UP_SHOULD_RESTART}"),
        equal("RR-3", "restarted[always-exit0]", True, f"{RR3}; {UP_SHOULD_RESTART}"),
    ],
    VERIFIED_IN,
)

# -- RR-4: an image update restarts only that container ---------------------------------------------------
RR4 = f"{CATALOGUE} RR-4; [S1] L70 (image is mutable)"
RESTART_BAND = Band(0, KUBELET_HANDOFF_S + 1.0 + CONTAINER_START_S + PLEG_RELIST_S + STATUS_UPDATE_S)
register(
    [
        equal("RR-4", "killing_message", "Container a definition changed, will be restarted", f"{RR4}; {UP_ACTIONS}"),
        exact("RR-4", "restarts[a]", 1, f"{RR4}; {UP_ACTIONS}", "a count: exact", unit="restarts"),
        equal("RR-4", "new_container[a]", True, f"{RR4}; {UP_ACTIONS}"),
        equal("RR-4", "image_updated[a]", True, f"{RR4}; {UP_ACTIONS}"),
        within("RR-4", "running_after_patch_s", 2.5, RESTART_BAND.low, RESTART_BAND.high,
               "host time of the patch → receive time of `a` running in a new container: +1 s hand-off (watch → pod "
               "worker) +1 s stop (its TERM trap ends the ≤ 1 s sleep) +1 s container start (the image is on the node: "
               "no pull, no back-off on a first restart) +1 s relist +1 s status write",
               f"{RR4}; {UP_ACTIONS}; [UP] kuberuntime_container.go doBackOff (no back-off entry yet)"),
        exact("RR-4", "restarts[b]", 0, f"{RR4} (only `a`'s hash changed)", "a count: exact", unit="restarts"),
        equal("RR-4", "same_container[b]", True, f"{RR4}; {UP_ACTIONS}"),
        equal("RR-4", "same_pod_uid", True, f"{RR4} (in place)"),
        equal("RR-4", "same_pod_ip", True, f"{RR4} (same sandbox)"),
        exact("RR-4", "command_change_status", 422, f"{RR4}; PC-5; {UP_MUTABLE}", "an HTTP status: exact", unit="HTTP"),
    ],
    VERIFIED_IN,
)

# -- RR-1: exit-code rules, and probes after a final exit -------------------------------------------------
RR1 = f"{CATALOGUE} RR-1; [S0] L121; [S1] L258; R28 (kubernetes#132642, kubernetes/website#51467)"
UP_RULES_GATE = ("[UP] pkg/features/kube_features.go ContainerRestartRules (1.34 alpha/off; 1.35–1.37 beta/on); "
                 "pkg/api/pod/util.go dropContainerRestartRules (gate off: a regular container's restartPolicy and "
                 "restartPolicyRules are dropped, the pod is created without them)")
UP_RULES = ("[UP] pkg/kubelet/container/helpers.go ShouldContainerBeRestarted (container restartPolicyRules: the first "
            "matching rule decides, else the container's restartPolicy)")
UP_PROBE_STOP = "[UP] pkg/kubelet/prober/worker.go doProbe (a terminated container that will not restart stops its worker)"
register(
    [
        # keyed by the live ContainerRestartRules of the API server (and the kubelet): off on 1.34 as shipped, on
        # with gates-1.34 and from 1.35; pkg/api/pod/util.go dropDisabledPodFields drops the fields whenever the gate
        # is off (and no old pod uses them), in v1.34.4 to v1.37.2 alike
        equal("RR-1", "stored_rules[gate off]", "dropped", f"{RR1}; {UP_RULES_GATE}"),
        equal("RR-1", "stored_rules[gate on]", "kept", f"{RR1}; {UP_RULES_GATE}"),
        *gap_expectations("RR-1", range(2), f"{RR1} (the restarts a rule asks for follow the crash-loop back-off, CL-1)"),
        exact("RR-1", "restarts[rules]", 2, f"{RR1}; {UP_RULES} (exit 42 matches Restart twice; exit 0 is final under Never)",
              "a count: exact", unit="restarts"),
        equal("RR-1", "final_phase[rules]", "Succeeded", f"{RR1}; {UP_PHASE}"),
        equal("RR-1", "last_exit_code[once]", 7, f"{RR1} (container restartPolicy Never: its exit is final)"),
        equal("RR-1", "terminated_reason[once]", "Error", f"{RR1}; [UP] kuberuntime (non-zero exit: reason Error)"),
        exact("RR-1", "restarts[once]", 0, f"{RR1}; {UP_RULES}", "a count: exact", unit="restarts"),
        equal("RR-1", "phase[once]", "Running", f"{RR1} (pod Always: the other container runs on)"),
        within("RR-1", "probe_events_after_exit[once]", 0, 0, 1,
               "no probe after the final exit; one probe already in flight at the exit may still report", f"{RR1}; {UP_PROBE_STOP}",
               unit="events", minors=(35, None)),
        within("RR-1", "probe_events_after_exit[once]", 0, 0, 10_000,
               "1.34 alpha (gate on only with gates-1.34): probe errors may repeat after the final exit (R28 b, fixed in "
               "1.35's worker): not bounded", f"{RR1}; {UP_PROBE_STOP}", unit="events", minors=(34, 34)),
    ],
    VERIFIED_IN,
)
REASON_GATE_OFF = ("environment: ContainerRestartRules is off on this cluster (alpha/off as shipped on 1.34: the "
                   "test's gates-1.34 variant runs it with the gate on)")

# -- RR-2: RestartAllContainers ---------------------------------------------------------------------------
RR2 = f"{CATALOGUE} RR-2; R28 (kubernetes#133216, #133240, #133243, #134631); KEP-5532"
UP_ALL_GATE = ("[UP] pkg/features/kube_features.go RestartAllContainersOnContainerExits (absent 1.34; 1.35 alpha/off; "
               "1.36–1.37 beta/on; depends on ContainerRestartRules and NodeDeclaredFeatures); "
               "pkg/apis/core/validation/validation.go validateContainerRestartPolicyRules (AllowRestartAllContainers)")
UP_ALL = ("[UP] pkg/kubelet/kubelet.go SyncPod / kubelet_pods.go (RestartAllContainers: every container removed and the "
          "pod's init containers run again in the same sandbox)")
UP_LAST_STATE = ("[UP] pkg/kubelet/kubelet_pods.go convertToAPIContainerStatuses (RestartAllContainers in place: "
                 "state waiting RestartingAllContainers, lastState terminated ExitCode 137 reason RestartingAllContainers "
                 "'The container is removed because RestartAllContainers in place'; 1.36.3 and 1.37.2)")
# Keyed by the live RestartAllContainersOnContainerExits (gate_key; unknown to 1.34: off). Gate off: 1.34 drops
# the rules (ContainerRestartRules off as shipped), from 1.35 the action is refused. Gate on (1.35 with
# gates-1.35, 1.36+ as shipped): the reset; what it leaves cannot be measured where the gate cannot be on (1.34:
# documented absent).
ON, ABSENT_34 = gate_key(True), "absent"
UP_ALL_35 = ("[UP] pkg/kubelet/kubelet_pods.go convertToAPIContainerStatuses (v1.35.4: the running container's status is "
             "built from the runtime's containers alone, and RestartAllContainers removed the old one: lastState empty; "
             "v1.36.3 and v1.37.2 carry the old status's lastState over when the container ID changes)")
NO_GATE_34 = f"{RR2}; {UP_ALL_GATE} (no such gate in 1.34: it cannot be on)"
register(
    [
        equal("RR-2", "creation[gate off]", "dropped", f"{RR2}; {UP_RULES_GATE} (ContainerRestartRules off by default)",
              minors=(34, 34)),
        equal("RR-2", "creation[gate off]", "422", f"{RR2}; {UP_ALL_GATE} (action RestartAllContainers NotSupported)",
              minors=(35, None)),
        equal("RR-2", f"creation[{ON}]", "created", f"{RR2}; {UP_ALL_GATE}", minors=(35, None)),
        exact("RR-2", f"init_lines[{ON}]", 2, f"{RR2}; {UP_ALL} (init runs again)", "a count: exact", unit="lines",
              minors=(35, None)),
        equal("RR-2", f"data_kept[{ON}]", True, f"{RR2} (same pod, same emptyDir)", minors=(35, None)),
        equal("RR-2", f"same_pod_uid[{ON}]", True, f"{RR2}", minors=(35, None)),
        equal("RR-2", f"same_pod_ip[{ON}]", True, f"{RR2} (same sandbox)", minors=(35, None)),
        # 1.35.4 (alpha): no lastState after the reset — the catalogue's "lastState may be empty (pre-fix)"
        equal("RR-2", f"last_exit_code[{ON}]", "empty", f"{RR2}; {UP_ALL_35}", minors=(35, 35)),
        equal("RR-2", f"last_reason[{ON}]", "empty", f"{RR2}; {UP_ALL_35}", minors=(35, 35)),
        # measured on v1.37.2 (the catalogue expected main's own exit 88): the reset replaces every container's
        # lastState with a synthesized termination (exit 137, reason RestartingAllContainers) — main's 88 is not kept
        equal("RR-2", f"last_exit_code[{ON}]", 137,
              f"{RR2}; {UP_LAST_STATE}; measured on v1.37.2", minors=(36, None)),
        equal("RR-2", f"last_reason[{ON}]", "RestartingAllContainers", f"{RR2}; {UP_LAST_STATE}; measured on v1.37.2",
              minors=(36, None)),
        exact("RR-2", f"restarts[{ON}]", 1, f"{RR2}; {UP_ALL} (kubelet_pods.go convertToAPIContainerStatuses: the "
              "reset's waiting status counts + 1, and the running one keeps the higher of it and the runtime's count)", "a count: exact",
              unit="restarts", minors=(35, None)),
        equal("RR-2", f"creation[{ON}]", ABSENT_34, NO_GATE_34, minors=(34, 34)),
        *[equal("RR-2", f"{name}[{ON}]", ABSENT_34, NO_GATE_34, minors=(34, 34))
          for name in ("init_lines", "data_kept", "same_pod_uid", "same_pod_ip", "last_exit_code", "last_reason", "restarts")],
    ],
    VERIFIED_IN,
)
REASON_ALL_OFF = ("environment: RestartAllContainersOnContainerExits is off on this cluster (1.34 absent, 1.35 alpha/off by "
                  "default: the test's gates-1.35 variant runs it with the gate on, and ContainerRestartRules and "
                  "NodeDeclaredFeatures it needs)")

# -- RR-5: a crashed container beside a probed sidecar, after a kubelet restart --------------------------
RR5 = f"{CATALOGUE} RR-5 (R23: kubernetes#136910, #137146, #137885, #136969); CASES-faults NF-5"
UP_SEED = ("[UP] pkg/kubelet/prober/worker.go doProbe: 1.35.4, 1.36.3, 1.37.2 seed a sidecar's startup result from "
           "status Started after a kubelet restart (the fix #137146, cherry-picked to 1.35 as #137885); 1.34.4 has no "
           "ChangeContainerStatusOnKubeletRestart path (no regression); kuberuntime_manager.go computeInitContainerActions "
           "(podHasInitialized) → computePodActions ContainersToStart")
# marker → main's exit (its poll loop sleeps 1 s) → relist (1 s) → hand-off → a first restart with no back-off
# → container start → status write. 1.34 may wait one more startup-probe period (5 s) of the sidecar.
RR5_WHY = ("exec time of the marker → receive time of main running again: +1 s poll loop +1 s relist +1 s hand-off "
           "+1 s container start (first restart: no back-off) +1 s status write")
register(
    [
        exact("RR-5", "restarts[main]", 1, f"{RR5}; {UP_SEED}", "a count: exact", unit="restarts"),
        equal("RR-5", "last_exit_code[main]", 2, f"{RR5} (main exits 2 at the marker)"),
        equal("RR-5", "last_reason[main]", "Error", f"{RR5}"),
        within("RR-5", "running_again_after_marker_s", 2.5, 0, 5, RR5_WHY, f"{RR5}; {UP_SEED}", minors=(35, None)),
        within("RR-5", "running_again_after_marker_s", 2.5, 0, 10, RR5_WHY + " +5 s one startup period of the sidecar "
               "(catalogue: 1.34 may wait one period more)", f"{RR5}; {UP_SEED}", minors=(34, 34)),
        equal("RR-5", "ready_again", True, f"{RR5}"),
    ],
    VERIFIED_IN,
)
