"""NF — faults of a whole worker node on the two-node profiles (CASES-faults.md §2.1, §2.2, §2.6,
§3b, §3c, §4 NF-4, NF-8, NF-9); the single-node NF cases are in ``faults.py``.

- **NF-4 worker lost** (``docker pause``): the Lease stops; kube-controller-manager marks the node
  ``Ready=Unknown`` after ``node-monitor-grace-period``, taints it ``unreachable`` NoSchedule and —
  one node out of two is a "normal" zone, so unlike one node — NoExecute, and marks its pods not
  Ready in the same pass; the endpoints go; the taint-eviction controller deletes each pod at
  ``timeAdded`` + its ``tolerationSeconds``; the frozen kubelet never confirms, so the pod stays
  Terminating. A Deployment replaces it at once (terminating pods do not count); a StatefulSet
  does not while the old pod exists (one pod per ordinal). Clients see timeouts (the frozen
  backend swallows packets) until the endpoint goes.
- **NF-8 partition** (iptables in the worker, REJECT or DROP of its connections to the API
  server): the same controller chain, but the pods keep running and serving; after healing the
  Lease is renewed within seconds, yet ``Ready=True`` waits until the kubelet's own Node informer
  has re-listed and seen the controller's Unknown (up to a minute: reflector back-off).
- **NF-9 graceful node shutdown** (logind ``PrepareForShutdown`` spoofed on the worker's bus):
  the kubelet kills pods by priority group (ordinary: shutdownGracePeriod − critical = 20 s,
  critical: 10 s), marks them Failed, rejects new ones, reports ``Ready=False``; a cancel brings
  it back.

Open points of CASES-faults.md §6 settled on this host (v1.37.2, cgroup v1, 2 cores):

2. systemd-logind runs in the offline node container (privileged, ``--cgroupns=private``) once
   ``dbus`` is installed: bus-activated on the kubelet's first call; the kubelet holds its delay
   lock and acts on the spoofed signal (hack/offline/build-rootfs.sh EXTRA_PACKAGES).
3. The runc wrapper of hack/offline passes ``pause``/``resume`` through untouched: ``docker
   pause`` freezes the node's freezer cgroup (``FROZEN``, with the kubelet's ``kubelet.slice``
   and the pods inside it) and ``unpause`` thaws it.
4. With the per-node conflists mounted at creation, the first CoreDNS pods (scheduled before the
   worker joins) take 10.244.0.x on the control plane, and the worker's first pods 10.244.1.x.

Sources read in v1.34.4, v1.35.4, v1.36.3 and v1.37.2 (client-go v0.34.4–v0.37.2): the node
lifecycle and taint eviction passes, the kubelet's node-lister compare, the reflector back-off
(800 ms × 2 to 30 s, jitter 1.0, reset after 2 min; 1.36 rewrote it as a wait.Backoff with the same
constants), the shutdown manager's groups, messages and lock handling are the same in all four, so
the values apply to every version; 1.37's lease circuit breaker changes none of them.

Times are host seconds unless a name says API time (1 s resolution: ``lastTransitionTime``,
``timeAdded``, ``deletionTimestamp``, ``finishedAt``); Lease ``renewTime`` has µs resolution.
Values that follow from the node-lifecycle settings are keyed by profile in the name
(``unknown_after_last_renew_s[multi-node-fast-lifecycle]``).
"""

from __future__ import annotations

from dataclasses import replace

from ..cluster.facts import Lifecycle
from ..judge.expectations import Band, Expectation, equal, exact, register, within
from . import faults as single

# Read in the four releases of the upgrade path (the module doc; faults.py VERIFIED_IN says how).
VERIFIED_IN = single.VERIFIED_IN

# -- sources -----------------------------------------------------------------------------
S0_TAINTS = "[S0] L86, L88, L96–109 (NoExecute, unreachable, five minutes)"
S3_PARTITION = "[S3] L59 (the kubelet cannot reach the API)"
S2_CONTROLLERS = "[S2] L533, L674–678 (terminating pods, StatefulSet ordinals)"
UP_NLC = ("[UP] pkg/controller/nodelifecycle/node_lifecycle_controller.go monitorNodeHealth, tryUpdateNodeHealth "
          "(probeTimestamp = the pass that saw the renewal; Unknown after the grace), processTaintBaseEviction, "
          "doNoExecuteTaintingPass (every 100 ms, zone token bucket burst 1), handleDisruption (ComputeZoneState: 1 of 2 = normal)")
UP_MARK = ("[UP] pkg/controller/util/node/controller_utils.go MarkPodsNotReady; node_lifecycle_controller.go monitorNodeHealth "
           "(same pass as the status write)")
UP_TAINT_EVICTION = ("[UP] pkg/controller/tainteviction/taint_eviction.go processPodOnNode (seen + min tolerationSeconds), "
                     "addConditionAndDeletePod (DisruptionTarget DeletionByTaintManager)")
UP_REPLICASET = "[UP] pkg/controller/replicaset/replica_set.go syncReplicaSet, controller_utils.go FilterActivePods"
UP_STATEFULSET = "[UP] pkg/controller/statefulset/stateful_set_control.go updateStatefulSet (isTerminating: wait for the ordinal)"
UP_KUBELET_STATUS = ("[UP] pkg/kubelet/kubelet.go (syncNodeStatus every nodeStatusUpdateFrequency 10 s, jitter 4 %), "
                     "kubelet_node_status.go tryUpdateNodeStatus (posts when changed: Unknown → True)")
UP_NODE_LISTER = ("[UP] pkg/kubelet/kubelet_node_status.go tryUpdateNodeStatus (try 0 reads kl.nodeLister, posts only when "
                  "changed or isUpdateStatusPeriodExpired)")
UP_REFLECTOR = ("[UP] k8s.io/client-go v0.34.4–v0.37.2 tools/cache/reflector.go NewReflectorWithOptions (back-off "
                "800 ms × 2 up to 30 s, jitter 1.0, reset after 2 min)")
UP_HTTP2 = ("[UP] k8s.io/client-go transport (HTTP/2 ReadIdleTimeout 30 s + PingTimeout 15 s, #121793, PR #126287); "
            "cmd/kubelet/app/server.go onHeartbeatFailure = closeAllConns")
UP_SHUTDOWN = ("[UP] pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go start (event loop: Shutdown event, go syncNodeStatus, "
               "processShutdownEvent; a cancel re-takes the inhibitor lock), nodeshutdown_manager.go killPods "
               "(groups by priority, grace = min(own, group), next group after the group's period), migrateConfig")
UP_SHUTDOWN_STATUS = ("[UP] pkg/kubelet/nodeshutdown/nodeshutdown_manager.go killPods status func (Failed, Terminated, "
                      "nodeShutdownMessage, DisruptionTarget TerminationByKubelet)")
UP_SHUTDOWN_ADMIT = "[UP] pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go Admit (NodeShutdown, nodeShutdownNotAdmittedMessage)"
UP_SHUTDOWN_READY = ("[UP] pkg/kubelet/nodestatus/setters.go ReadyCondition (errors of ShutdownStatus: \"node is shutting down\"), "
                     "nodeshutdown_manager_linux.go ShutdownStatus")
UP_E2E_SHUTDOWN = "[UP] test/e2e_node/node_shutdown_linux_test.go (ready again within 30 s; all pods shut down within 30 + 10 s)"
CASES_NF = "CASES-faults.md §4"

# -- profiles (profiles/<name>.yaml) and their node-lifecycle settings ----------------------
FAST = "multi-node-fast-lifecycle"
DEFAULT = "multi-node"
# node-monitor-grace-period and node-monitor-period (kube-controller-manager), s: the two-node
# profiles carry the node-lifecycle settings of their one-node counterparts (multi-node those of
# default-lifecycle, i.e. the upstream defaults).
GRACE_S = {FAST: single.GRACE_S[single.FAST], DEFAULT: single.GRACE_S[single.DEFAULT]}
MONITOR_PERIOD_S = {FAST: single.MONITOR_PERIOD_S[single.FAST], DEFAULT: single.MONITOR_PERIOD_S[single.DEFAULT]}
# The pods' own unreachable/not-ready tolerationSeconds (fast) or the API server's default (300 s,
# DefaultTolerationSeconds; the default-timing variant gives the pods none).
TOLERATION_S = {FAST: 20, DEFAULT: 300}
# kubelet shutdownGracePeriod / shutdownGracePeriodCriticalPods (multi-node-fast-lifecycle only).
SHUTDOWN_GRACE_S = 30
SHUTDOWN_CRITICAL_S = 10
SHUTDOWN_ORDINARY_S = SHUTDOWN_GRACE_S - SHUTDOWN_CRITICAL_S

# -- scenario settings --------------------------------------------------------------------
# NF-4: how long the worker stays paused; NF-8: how long the partition lasts.
PAUSE_S = {FAST: 120, DEFAULT: 420}
PARTITION_S = {FAST: 90, DEFAULT: 420}
# NF-9: the pods' terminationGracePeriodSeconds (they ignore SIGTERM: they end at the kill), when
# the late pod is created and when the shutdown is cancelled (s after the signal).
NF9_GRACE_S = {"long": 120, "short": 5, "critical": 120}
NF9_LATE_POD_AT_S = 5
NF9_CANCEL_AT_S = 45
# The load: requests per second through the NodePort, each with this timeout.
LOAD_RATE_PER_S = 10
REQUEST_TIMEOUT_S = 1.0

# -- how wide a band is, and why ----------------------------------------------------------
API_RESOLUTION_S = 1.0
# The loaded host: one controller pass or status write can come a second late.
LOADED_S = 1.0
# kube-proxy syncs iptables at most every minSyncPeriod 1 s after the EndpointSlice change
# (kind's kubeadm template); the slice itself follows the pod within single.ENDPOINT_S (CASES.md PS-3).
PROXY_SYNC_S = 1.0
# kubelet nodeStatusUpdateFrequency 10 s with 4 % jitter.
NODE_STATUS_UPDATE_S = 10.4
# A client-go reflector that failed retries after a back-off of at most 30 s × (1 + jitter 1.0).
REFLECTOR_BACKOFF_S = 60
# The HTTP/2 health check of a client-go connection whose packets vanish: read idle 30 s + ping 15 s.
HTTP2_DEAD_S = 45
# NF-9: ``docker exec <node> busctl emit`` on the loaded host: the signal leaves within 1 s of the
# command's start.
EMIT_S = 1.0
# The kubelet's kill: its D-Bus watch hands the event over, the pod worker stops the container
# (CRI StopContainer): SIGTERM reaches the process within 1 s + 0.5 s (sidecar.py KUBELET_HANDOFF_S,
# termination.py SIGNAL_DELIVERY_S).
KILL_PATH_S = 1.5
# A SIGKILL after the grace and the runtime's exit record (finishedAt) within 1 s.
KILL_S = 1.0
# A replacement pod on the control plane: scheduled, sandbox (pause + CNI), container start and
# the first httpGet readiness probe (period 1 s) on the 2-core host.
POD_START_S = 10


def grace_key(grace_s: float, period_s: float) -> str:
    """The name qualifier of NF-4's and NF-8's ``unknown_after_last_renew_s`` for the controller
    manager's grace and monitor periods (s): the two-node profile that sets them (:data:`FAST`,
    :data:`DEFAULT`), else ``"grace=<n>s,period=<n>s"`` (as :func:`e2e.documented.faults.grace_key`)."""
    return single.grace_key(grace_s, period_s, GRACE_S, MONITOR_PERIOD_S)


def unknown_from(case: str, lc: Lifecycle) -> Expectation:
    """NF-4's or NF-8's (``case``) ``unknown_after_last_renew_s[<key>]`` (:func:`grace_key`) with its
    band from the cluster's live settings (:class:`e2e.cluster.facts.Lifecycle`), the source naming
    them; on a cluster of :data:`FAST` or :data:`DEFAULT` the registry's name and band."""
    return replace(single.unknown_after_last_renew(case, grace_key(lc.grace_s, lc.period_s), lc.grace_s, lc.period_s, lc.source, UP_NLC),
                   verified_in=VERIFIED_IN)


def fault_window_s(planned_s: float, profile: str, lc: Lifecycle) -> float:
    """How long NF-4's pause or NF-8's partition lasts (s) on a cluster of the live settings ``lc``:
    the profile's ``planned_s`` (:data:`PAUSE_S`, :data:`PARTITION_S`), longer by as much as the
    end of the live Unknown band (grace + 2 monitor periods) lies beyond the profile's, so that the
    chain (Unknown, the NoExecute taint, the eviction after the pods' own tolerationSeconds)
    happens inside the fault as on the profile; ``planned_s`` itself on the profile's settings."""
    late = (lc.grace_s + 2 * lc.period_s) - (GRACE_S[profile] + 2 * MONITOR_PERIOD_S[profile])
    return planned_s + max(0.0, late)


def _lost_chain(case: str, profile: str) -> list[Expectation]:
    """The controller's chain of a worker that stopped renewing its Lease (NF-4, NF-8)."""
    grace, period, tol = GRACE_S[profile], MONITOR_PERIOD_S[profile], TOLERATION_S[profile]
    q = f"[{profile}]"
    return [
        single.unknown_after_last_renew(case, profile, grace, period, f"profiles/{profile}.yaml", UP_NLC),
        within(case, f"eviction_after_taint_s{q}", tol, tol - API_RESOLUTION_S, tol + API_RESOLUTION_S + LOADED_S,
           f"the pod's tolerationSeconds {tol} from when the taint manager saw the taint; delete request time "
           f"(deletionTimestamp − grace) and timeAdded both truncated (±{API_RESOLUTION_S:g} s); +{LOADED_S:g} s to see it",
           f"{S0_TAINTS}; {UP_TAINT_EVICTION}; CASES-faults.md §2.2"),
    ]


def _chain_common(case: str) -> list[Expectation]:
    return [
        equal(case, "ready_unknown_reason", "NodeStatusUnknown", UP_NLC),
        equal(case, "ready_unknown_message", "Kubelet stopped posting node status.", UP_NLC),
        within(case, "noexecute_taint_after_unknown_s", 0, 0, API_RESOLUTION_S + LOADED_S,
           "the Unknown pass queues the node for the NoExecute taint; the 100 ms tainting pass takes the zone's first token "
           f"(burst 1) at once; timeAdded and lastTransitionTime both truncated; +{LOADED_S:g} s on the loaded host",
           f"{S0_TAINTS}; {UP_NLC}", race=single.noexecute_token_race()),
        within(case, "noschedule_taint_after_unknown_s", 0, 0, API_RESOLUTION_S + LOADED_S,
           "doNoScheduleTaintingPass on the node update after the Unknown write (informer → nodeUpdateQueue → taint write); "
           "timeAdded (SwapNodeControllerTaint stamps every taint it adds) and lastTransitionTime both truncated: "
           f"{API_RESOLUTION_S:g} s for the pass and the write, +{LOADED_S:g} s on the loaded host", f"{UP_NLC}; {single.UP_TAINT_TIME}"),
        within(case, "pod_not_ready_after_unknown_s", 0, 0, API_RESOLUTION_S + LOADED_S,
           "MarkPodsNotReady runs in the pass that wrote Unknown, right after the write; both API times truncated; "
           f"+{LOADED_S:g} s on the loaded host", UP_MARK),
        equal(case, "pod_not_ready_reason", "", UP_MARK),
        single.endpoint_after_pod(case, "endpoint_not_ready_after_pod_not_ready_s"),
        equal(case, "disruption_target_reason", "DeletionByTaintManager", UP_TAINT_EVICTION),
        equal(case, "disruption_target_message", "Taint manager: deleting due to NoExecute taint", UP_TAINT_EVICTION),
        within(case, "replacement_created_after_eviction_s", 0, 0, API_RESOLUTION_S + LOADED_S,
           "the ReplicaSet drops the terminating pod (FilterActivePods) and creates one at the next sync; both API times "
           f"truncated; +{LOADED_S:g} s on the loaded host", f"{S2_CONTROLLERS}; {UP_REPLICASET}"),
        within(case, "replacement_ready_after_eviction_s", 0, 0, API_RESOLUTION_S + LOADED_S + POD_START_S,
           f"created (≤ {API_RESOLUTION_S + LOADED_S:g} s) + scheduled on the control plane, started and first readiness probe "
           f"passed (≤ {POD_START_S} s on the 2-core host)", f"{S2_CONTROLLERS}; {UP_REPLICASET}"),
    ]


NF4 = [
    *_lost_chain("NF-4", FAST),
    *_lost_chain("NF-4", DEFAULT),
    *_chain_common("NF-4"),
    equal("NF-4", "failures_while_frozen", "timeout", f"{CASES_NF} NF-4 (the frozen backend answers nothing)"),
    Expectation("NF-4", "failed_requests_while_frozen", 1, f"{CASES_NF} NF-4", band=Band.at_least(1),
                why="kube-proxy sends about half the requests to the frozen backend until its endpoint goes"),
    exact("NF-4", "failed_requests_after_endpoint_removed", 0, f"{CASES_NF} NF-4; {single.UP_ENDPOINTS}",
           why=f"requests sent {PROXY_SYNC_S + LOADED_S:g} s after the endpoint went (kube-proxy minSyncPeriod "
               f"{PROXY_SYNC_S:g} s + {LOADED_S:g} s for iptables-restore on the loaded host) all go to the live backend"),
    equal("NF-4", "statefulset_replaced_while_terminating", False, f"{S2_CONTROLLERS}; {UP_STATEFULSET}"),
    equal("NF-4", "web_pod_terminating_while_frozen", True,
          f"{CASES_NF} NF-4; CASES-faults.md §2.2 (nobody confirms the kill while the kubelet is frozen)"),
    equal("NF-4", "statefulset_recreated_after_unpause", True,
          f"{S2_CONTROLLERS}; {UP_STATEFULSET} (the thawed kubelet kills the deleted pod, then the ordinal is free)"),
]

NF8 = [
    *_lost_chain("NF-8", FAST),
    *_lost_chain("NF-8", DEFAULT),
    *_chain_common("NF-8"),
    exact("NF-8", "failed_requests", 0, f"{CASES_NF} NF-8; {S3_PARTITION}",
           why="the partition cuts only the worker's API connections: its backend keeps serving until its endpoint is removed "
               "(pod marked not Ready), and is killed only after the heal, long after"),
    equal("NF-8", "evicted_pod_running_while_partitioned", True,
          f"{CASES_NF} NF-8 (the kubelet never learns of the deletion until it reconnects)"),
    # Not the next node-status tick: tryUpdateNodeStatus compares with the kubelet's own Node
    # informer first, which missed the controller's Unknown while cut off; it posts Ready=True only
    # once that informer re-lists (client-go reflector back-off, up to 30 s × 2 jitter) and sees
    # Unknown. Found on the real cluster: REJECT healed, Lease renewed 3.7 s later, Ready 61.5 s later.
    within("NF-8", "ready_after_heal_s[reject]", 0, 0, REFLECTOR_BACKOFF_S + API_RESOLUTION_S + NODE_STATUS_UPDATE_S + LOADED_S,
       f"REJECT resets at once, but the kubelet's Node informer re-lists only after its back-off (≤ {REFLECTOR_BACKOFF_S:g} s) "
       f"+ {API_RESOLUTION_S:g} s; then the next node-status tick (every {NODE_STATUS_UPDATE_S:g} s) sees Unknown ≠ its Ready "
       f"and posts; +{LOADED_S:g} s for the write and the watch", f"{S3_PARTITION}; {UP_NODE_LISTER}; {UP_REFLECTOR}"),
    within("NF-8", "ready_after_heal_s[drop]", 0, 0,
       HTTP2_DEAD_S + REFLECTOR_BACKOFF_S + API_RESOLUTION_S + NODE_STATUS_UPDATE_S + LOADED_S,
       f"as REJECT, and a connection whose packets vanished may live until the HTTP/2 health check closes it ({HTTP2_DEAD_S} s, "
       "#121793); the kubelet closes all its connections on a failed heartbeat, so it is usually no slower — the value says which",
       f"{S3_PARTITION}; {UP_HTTP2}; {UP_NODE_LISTER}; {UP_REFLECTOR}"),
    equal("NF-8", "evicted_pod_gone_after_heal", True, f"{CASES_NF} NF-8 (then the deleted pods are killed)"),
]

_ORD = SHUTDOWN_ORDINARY_S
# The signal's moment is the host time just before ``docker exec … busctl emit`` started: the
# signal leaves within EMIT_S of it. Then the kubelet's kill: its D-Bus watch, the pod worker's
# hand-off and CRI StopContainer → the process gets SIGTERM within KILL_PATH_S.
# the signal → a killed pod's SIGTERM (also PC-6)
SIGTERM_AFTER_SIGNAL_S = EMIT_S + KILL_PATH_S + LOADED_S
_SIGTERM_WHY = (f"the emit command's start (+{EMIT_S:g} s until the signal leaves) + the kubelet's kill path "
                f"(D-Bus → pod worker → CRI stop → signal, {KILL_PATH_S:g} s) + {LOADED_S:g} s on the loaded host")
NF9 = [
    equal("NF-9", "shutdown_event", "Normal Shutdown: Shutdown manager detected shutdown event", UP_SHUTDOWN),
    within("NF-9", "not_ready_after_signal_s", 0, 0, EMIT_S + API_RESOLUTION_S + LOADED_S,
       "the event loop starts syncNodeStatus at once (go m.syncNodeStatus); receive time of the node change after the "
       f"emit command's start (+{EMIT_S:g} s); {API_RESOLUTION_S:g} s for the status write and the watch, "
       f"+{LOADED_S:g} s on the loaded host", UP_SHUTDOWN),
    equal("NF-9", "not_ready_reason", "KubeletNotReady", UP_SHUTDOWN_READY),
    equal("NF-9", "not_ready_message", ".*node is shutting down.*", UP_SHUTDOWN_READY, pattern=True),
    within("NF-9", "sigterm_after_signal_s[long]", 0, 0, SIGTERM_AFTER_SIGNAL_S,
       "ordinary group first: killPods signals every pod of the group at once; " + _SIGTERM_WHY, UP_SHUTDOWN),
    within("NF-9", "sigterm_after_signal_s[short]", 0, 0, SIGTERM_AFTER_SIGNAL_S,
       "ordinary group first: killPods signals every pod of the group at once; " + _SIGTERM_WHY, UP_SHUTDOWN),
    within("NF-9", "sigterm_after_signal_s[critical]", _ORD, _ORD, _ORD + SIGTERM_AFTER_SIGNAL_S,
       f"the critical group starts when the ordinary group's {_ORD} s are up (its 120 s pod ignores SIGTERM and lives "
       f"them out): shutdownGracePeriod {SHUTDOWN_GRACE_S} − critical {SHUTDOWN_CRITICAL_S}; " + _SIGTERM_WHY, UP_SHUTDOWN),
    within("NF-9", "killed_after_signal_s[long]", _ORD, _ORD - API_RESOLUTION_S, _ORD + SIGTERM_AFTER_SIGNAL_S + KILL_S,
       f"grace min(own 120, group {_ORD}) = {_ORD} s after the SIGTERM, then SIGKILL (it ignores SIGTERM; {KILL_S:g} s "
       f"to the runtime's exit); finishedAt truncated (−{API_RESOLUTION_S:g} s); " + _SIGTERM_WHY, UP_SHUTDOWN),
    within("NF-9", "killed_after_signal_s[short]", NF9_GRACE_S["short"], NF9_GRACE_S["short"] - API_RESOLUTION_S,
       NF9_GRACE_S["short"] + SIGTERM_AFTER_SIGNAL_S + KILL_S,
       f"grace min(own {NF9_GRACE_S['short']}, group {_ORD}) = own, then SIGKILL; finishedAt truncated; " + _SIGTERM_WHY,
       UP_SHUTDOWN),
    within("NF-9", "killed_after_signal_s[critical]", SHUTDOWN_GRACE_S, SHUTDOWN_GRACE_S - API_RESOLUTION_S,
       SHUTDOWN_GRACE_S + SIGTERM_AFTER_SIGNAL_S + KILL_S,
       f"SIGTERM at {_ORD} s + grace min(own 120, critical {SHUTDOWN_CRITICAL_S}) = {SHUTDOWN_CRITICAL_S} s, then SIGKILL; "
       f"finishedAt truncated; " + _SIGTERM_WHY, f"{UP_SHUTDOWN}; {UP_E2E_SHUTDOWN}"),
    equal("NF-9", "pod_phase", "Failed", UP_SHUTDOWN_STATUS),
    equal("NF-9", "pod_reason", "Terminated", UP_SHUTDOWN_STATUS),
    equal("NF-9", "pod_message", "Pod was terminated in response to imminent node shutdown.", UP_SHUTDOWN_STATUS),
    equal("NF-9", "containers_ready", "False", f"{UP_SHUTDOWN_STATUS}; {UP_E2E_SHUTDOWN}"),
    equal("NF-9", "disruption_target_reason", "TerminationByKubelet", UP_SHUTDOWN_STATUS),
    equal("NF-9", "disruption_target_message", "Pod was terminated in response to imminent node shutdown.", UP_SHUTDOWN_STATUS),
    equal("NF-9", "late_pod_phase", "Failed", UP_SHUTDOWN_ADMIT),
    equal("NF-9", "late_pod_reason", "NodeShutdown", UP_SHUTDOWN_ADMIT),
    # Not what CASES-faults.md NF-9 quotes: the kubelet prefixes the admit message (rejectPod).
    equal("NF-9", "late_pod_message", "Pod was rejected: Pod was rejected as the node is shutting down.",
          f"{UP_SHUTDOWN_ADMIT}; pkg/kubelet/kubelet.go rejectPod (Message: \"Pod was rejected: \" + message)"),
    within("NF-9", "ready_after_cancel_s", 0, 0, NODE_STATUS_UPDATE_S + LOADED_S,
       f"the cancel only clears the shutdown flag: Ready=True is posted at the next node-status tick (every "
       f"{NODE_STATUS_UPDATE_S:g} s); upstream allows 30 s", f"{UP_SHUTDOWN}; {UP_KUBELET_STATUS}; {UP_E2E_SHUTDOWN}"),
    equal("NF-9", "killed_pods_stay_failed", True, f"{CASES_NF} NF-9; {UP_SHUTDOWN_STATUS}"),
]

register([*NF4, *NF8, *NF9], VERIFIED_IN)
