"""NF — node and component faults (CASES-faults.md §2.1–2.5, §3c, §4 NF-1…NF-3, NF-5…NF-7).

What the node's parts do when they fail, on one node (the multi-node cases are NF-4, NF-8, NF-9):

- The kubelet renews its Lease in ``kube-node-lease`` every 0.25 × ``nodeLeaseDurationSeconds``
  (+0–4 % jitter); kube-controller-manager marks the node ``Ready=Unknown`` once no renewal
  came for ``node-monitor-grace-period``, taints it ``unreachable:NoSchedule`` and marks its
  pods not Ready in the same pass — on one node the NoExecute taint is suppressed ("full
  disruption": every node of the zone is not ready) (NF-1, NF-2).
- The taint-eviction controller deletes a pod at the taint's ``timeAdded`` + the pod's
  smallest matching ``tolerationSeconds``; removing the taint cancels (NF-3).
- A kubelet restart keeps the containers; whether readiness flips depends on the version
  (``ChangeContainerStatusOnKubeletRestart``: GA/on until 1.34, deprecated/off from 1.35) (NF-5).
- containerd restarts keep the containers (shims, ``KillMode=process``); > 30 s without the
  runtime makes the kubelet report ``Ready=False`` itself (NF-6).
- Without the API server the node keeps running what it has; kcm and scheduler exit when they
  lose their leader lease and are restarted (NF-7).

Times are host seconds unless a name says API time (1 s resolution: ``lastTransitionTime``,
``timeAdded``, ``deletionTimestamp``); Lease ``renewTime`` has µs resolution. Node-lifecycle
values depend on the cluster profile: they are keyed by it in the measurement name
(``unknown_after_last_renew_s[fast-lifecycle]``), and the report prints the profile.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

from ..cluster.facts import Lifecycle
from ..judge.expectations import Band, Expectation, KnownBug, Race, equal, register, version_minor

# First read in v1.34.4 and v1.37.2 (716097c, bc101e1); v1.35.4 and v1.36.3 read afterwards: every
# function the NF sources name (here and in faults_node.py) compared across the four releases
# (k8s.io/kubernetes; component-helpers, component-base, client-go, apimachinery v0.34.4–v0.37.2). Identical in
# 1.35/1.36 where it matters, or changed only in logging, context plumbing, shutdown of the
# controller's goroutines or features these cases do not use (list in the commit that added
# 1.35.4/1.36.3). The one difference that matters: NodeControllerLeaseCircuitBreaker exists from
# 1.37 only (kube_features.go; tryUpdateNodeHealth of v1.35.4 and v1.36.3 is v1.34.4's), so NF-7's
# node_ready_flips keeps the 1.34 allowance up to 1.36.
VERIFIED_IN = ("1.34.4", "1.35.4", "1.36.3", "1.37.2")

# -- sources -----------------------------------------------------------------------------
UP_LEASE = ("[UP] k8s.io/component-helpers v0.34.4–v0.37.2 apimachinery/lease/controller.go Run "
            "(JitterUntilWithContext(sync, renewInterval, 0.04, sliding=true)), newLease (RenewTime = now); "
            "pkg/kubelet/kubelet.go nodeLeaseRenewIntervalFraction 0.25")
UP_LEASE_DEFAULTS = "[UP] pkg/kubelet/apis/config/v1beta1/defaults.go (NodeLeaseDurationSeconds 40)"
UP_NLC = ("[UP] pkg/controller/nodelifecycle/node_lifecycle_controller.go monitorNodeHealth, tryUpdateNodeHealth "
          "(probeTimestamp, NodeStatusUnknown), doNoScheduleTaintingPass, handleDisruption (full disruption)")
UP_TAINT_TIME = ("[UP] pkg/controller/util/node/controller_utils.go SwapNodeControllerTaint (timeAdded = metav1.Now() on every "
                 "taint it adds: doNoScheduleTaintingPass's and doNoExecuteTaintingPass's)")
UP_MARK = ("[UP] pkg/controller/util/node/controller_utils.go MarkPodsNotReady (Ready=False, no reason; event NodeNotReady); "
           "node_lifecycle_controller.go monitorNodeHealth (same pass as the status write)")
UP_TAINT_EVICTION = ("[UP] pkg/controller/tainteviction/taint_eviction.go processPodOnNode (timeAdded + min tolerationSeconds), "
                     "addConditionAndDeletePod, TaintManagerEviction events")
UP_TOLERATION_PLUGIN = "[UP] plugin/pkg/admission/defaulttolerationseconds/admission.go (300 s, only for a key the pod lacks)"
UP_SCHED_TAINT = ("[UP] pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go Filter "
                  "(\"node(s) had untolerated taint(s)\": v1.35.4–v1.37.2 (#134740) and v1.34.4 (the cherry-pick #135023))")
UP_DRA_POSTFILTER = ("[UP] pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go PostFilter "
                     "(a pod without claims: \"no new claims to deallocate\")")
UP_PROBER = ("[UP] pkg/kubelet/prober/prober_manager.go isContainerStarted, setReadyStateOnKubeletRestart, "
             "kubeletRestartGracePeriod (10 s); worker.go; pkg/features/kube_features.go ChangeContainerStatusOnKubeletRestart "
             "(GA/true to 1.34, Deprecated/false from 1.35, KEP-4781, PR #134746)")
UP_PROBER_134 = ("[UP] v1.34.4 pkg/kubelet/prober/worker.go newWorker (readiness initialValue Failure, startup Unknown): "
                 "a restarted kubelet starts every readiness worker at Failure; issues #100277, #131303")
UP_RUNTIME = ("[UP] pkg/kubelet/kubelet.go maxWaitForContainerRuntime 30 s, updateRuntimeUp (every 5 s); runtime.go runtimeErrors "
              "(\"container runtime is down\"); nodestatus/setters.go ReadyCondition; kubelet_node_status.go syncNodeStatus "
              "(nodeStatusUpdateFrequency 10 s)")
UP_EXEC_PROBE = ("[UP] pkg/kubelet/prober/prober.go probe (an errored probe: event \"%s probe errored and resulted in %s state\", "
                 "returns Failure with the error); worker.go doProbe (\"Prober error, throw away the result\"): v1.34.4–v1.37.2")
UP_SHIMS = "[UP] kind v0.33.0 images/base/files/etc/systemd/system/containerd.service (KillMode=process); test/e2e_node/restart_test.go"
UP_LEADER = ("[UP] cmd/kube-controller-manager/app/controllermanager.go, cmd/kube-scheduler/app/server.go (OnStoppedLeading: "
             "klog.FlushAndExit), component-base leader election 15/10/2 s")
UP_KUBELET_OFFLINE = "[S3] L8–9 (the kubelet keeps running without the API); [UP] pkg/kubelet/pod_workers.go, prober/worker.go"
S3_HEARTBEAT = "[S3] L56 (heartbeat Lease, NotReady)"
S0_TAINTS = "[S0] L86, L88, L109 (NoExecute, unreachable, not-ready)"
CASES_NF = "CASES-faults.md §4"
BUG_111385 = "kubernetes/kubernetes#111385 (closed as rotten, not fixed)"
RACE_111385 = ("[UP] pkg/controller/nodelifecycle/node_lifecycle_controller.go: monitorNodeHealth queues the node for "
               "NoExecute tainting (processTaintBaseEviction → markNodeForTainting) and doNoExecuteTaintingPass (every 100 ms, "
               "burst 1) taints it before handleDisruption enters master disruption mode; markNodeAsReachable then works on "
               "the pass's stale Node copy, which lacks the taint, so nothing removes it (controller_utils.go RemoveTaintOffNode)")
# Whether the tainting pass wins depends on the goroutines' timing: a race, either outcome on the
# same cluster and manifest (KnownBug.race).
SEEN_111385 = ("a race between doNoExecuteTaintingPass and handleDisruption; the taint stuck in 6 of the 8 runs on record "
               "(v1.37.2, fast-lifecycle): the first real run (2026-11-30) and 5 of the 6 runs of 2026-12-01 kept on the "
               "development host — not in the concurrent run 20261201-183952-55bf — and not in issue 29's trial")
UP_EXCLUDED = ("[UP] pkg/controller/nodelifecycle/node_lifecycle_controller.go monitorNodeHealth "
               "(isNodeExcludedFromDisruptionChecks: the node's Ready condition is left out of zoneToNodeConditions), "
               "handleDisruption (no zone left: full-disruption mode is never entered, the zone's NoExecute limiter keeps its rate)")

# -- profiles (profiles/<name>.yaml) and their node-lifecycle settings ----------------------
FAST = "fast-lifecycle"
DEFAULT = "default-lifecycle"
# nodeLeaseDurationSeconds (kubelet), node-monitor-grace-period and node-monitor-period (kcm), s.
LEASE_DURATION_S = {FAST: 20, DEFAULT: 40}
GRACE_S = {FAST: 20, DEFAULT: 50}
MONITOR_PERIOD_S = {FAST: 1, DEFAULT: 5}
RENEW_FRACTION = 0.25
RENEW_JITTER = 0.04

# -- scenario settings --------------------------------------------------------------------
# NF-1: how long the Lease is recorded (3 min).
NF1_RECORD_S = 180
# NF-2: how long the kubelet stays stopped (fast-lifecycle: 120 s).
NF2_STOP_S = 120
# NF-2: the tolerant Deployment's own unreachable/not-ready tolerationSeconds.
NF2_TOLERATION_S = 20
# NF-2 variant (CASES-faults.md §6 point 1): the node label that leaves it out of the zone count.
EXCLUDE_DISRUPTION = "node.kubernetes.io/exclude-disruption"
EXCLUDED = "exclude-disruption"
# NF-3: tolerations of the test pods (None: no toleration; 0 below means infinite), and when the
# taint is removed (s after it was added).
NF3_TOLERATIONS = {"none": None, "t10": 10, "t30": 30, "infinite": -1}
NF3_REMOVE_AFTER_S = 15
# web.yaml's httpGet readiness probe period, and probes.yaml's exec probes (NF-5, NF-6).
WEB_READINESS_PERIOD_S = 5
PROBE_PERIOD_S = 5
PROBE_FAILURE_THRESHOLD = 3
# NF-5: the pods must have been running longer than the kubelet's restart grace (10 s).
KUBELET_RESTART_GRACE_S = 10
NF5_STEADY_S = 15
# NF-5: how long the watch runs after the restart (the 1.34 flip lasts ≤ 15 s).
NF5_WATCH_S = 30
# NF-6: containerd restarts (3, 20 s apart), the outage (60 s); the app's heartbeat interval.
NF6_RESTARTS = 3
NF6_RESTART_INTERVAL_S = 20
NF6_OUTAGE_S = 60
TICK_S = 0.1
# NF-7: the API-server outage, and when the liveness flag is set inside it.
NF7_OUTAGE_S = 60
# The NoExecute taint's race (NF-2, NF-4, NF-8), found on v1.37.2 (CI, 2026-12-02): the 100 ms tainting
# pass reads the node from the controller's informer cache; run between the controller's own Unknown
# write and the cache's copy of it, it reads Ready=True, drops the node ("ready now") and has spent
# the zone's one token (burst 1). The next monitor pass (every 1 or 5 s) queues the node again; it is
# tainted when the token is back, 1 / node-eviction-rate later.
NODE_EVICTION_RATE_PER_S = 0.1
UP_TAINT_RACE = ("[UP] pkg/controller/nodelifecycle/node_lifecycle_controller.go doNoExecuteTaintingPass (nodeLister.Get; "
                 "Ready=True: 'ready now. Ignoring taint request', returns true), markNodeForTainting (queued again by "
                 "every monitor pass); scheduler/rate_limited_queue.go RateLimitedTimedQueue.Try (TryAccept before the "
                 "action); cmd/kube-controller-manager/app/options/nodelifecyclecontroller.go (--node-eviction-rate 0.1)")
NF7_FLAG_AT_S = 20
NF7_LIVENESS_PERIOD_S = 5

# -- how wide a band is, and why ----------------------------------------------------------
API_RESOLUTION_S = 1.0
# One API write and the watch that sees it, on loopback to a busy 2-core API server.
API_LATENCY_S = 0.2
# The loaded host: one controller pass or status write can come a second late.
LOADED_S = 1.0


def noexecute_token_race() -> Race:
    """The NoExecute taint one token late (:data:`UP_TAINT_RACE`): ``noexecute_taint_after_unknown_s``
    10 s (1 / :data:`NODE_EVICTION_RATE_PER_S`) within [9, 12] s."""
    late = 1 / NODE_EVICTION_RATE_PER_S
    return Race(late, band=Band(late - API_RESOLUTION_S, late + API_RESOLUTION_S + LOADED_S),
                why=f"the tainting pass read the node from the informer cache before its Unknown write arrived, dropped "
                    f"it and spent the zone's token; queued again by the next monitor pass and tainted when the token "
                    f"is back, {late:g} s later ({UP_TAINT_RACE}); timeAdded and lastTransitionTime both truncated "
                    f"(±{API_RESOLUTION_S:g} s); +{LOADED_S:g} s on the loaded host",
                seen="in 2 of 48 values on v1.37.2, both NF-8 on the three-node profile")
# EndpointSlice controller: a pod's Ready change reaches its slice within 1.5 s (CASES.md PS-3),
# kube-proxy syncs iptables with minSyncPeriod 1 s (kind's kubeadm template).
ENDPOINT_S = 1.5
# How much earlier one watch stream's event can be received than the event of another stream that
# caused it: the recorder reads each kind on a thread of its own (seen −0.001 s and −0.002 s, v1.37.2).
WATCH_ORDER_S = 0.1
UP_ENDPOINTS = "[UP] pkg/controller/endpointslice (pod update → slice); kind kube-proxy iptables minSyncPeriod 1 s"


def endpoint_after_pod(case: str, name: str, source: str = UP_ENDPOINTS, what: str = "") -> Expectation:
    """The EndpointSlice change that follows a pod's Ready change, in seconds after it: documented 0 s
    within [−:data:`WATCH_ORDER_S`, :data:`ENDPOINT_S`] (CASES.md PS-3: ≤ 1.5 s). Both are the
    recorder's receive times on two watch streams (Pod, EndpointSlice), each read on a thread of its
    own, so the slice's event, caused by the pod's, can be received first by up to
    :data:`WATCH_ORDER_S`. ``what`` says what the slice does (default: not ready)."""
    return Expectation(case, name, 0.0, source, unit="s", band=Band(-WATCH_ORDER_S, ENDPOINT_S),
                       why=f"the EndpointSlice follows the pod's Ready within {ENDPOINT_S:g} s (CASES.md PS-3)"
                           f"{what or ': the endpoint turns ready=False serving=False'}. Both are receive times of two "
                           f"watch streams (Pod, EndpointSlice), each on a recorder thread of its own: the slice's event, "
                           f"caused by the pod's, can be received first by up to {WATCH_ORDER_S:g} s "
                           f"(seen −0.001 s and −0.002 s on v1.37.2)")


PROXY_SYNC_S = 1.0
# kubelet nodeStatusUpdateFrequency (10 s): a changed node status is posted at the next tick.
NODE_STATUS_UPDATE_S = 10
RUNTIME_CHECK_S = 5
RUNTIME_DOWN_S = 30
# A kubelet (re)start on the node container: process start, client, first node status (~3 s on
# the 2-core host) — the budget a recovery gets before its first status.
KUBELET_START_S = 5
# A new pod on the node: schedule, sandbox (pause), container start on the 2-core host.
POD_START_S = 15


def _nf1(key: str, lease_s: float, setting: str, why: str, live: str = "") -> list[Expectation]:
    """NF-1's values for lease ``lease_s`` (s), named ``[key]``; ``setting`` says where the lease
    is set, ``live`` (the cluster's settings, :class:`Lifecycle`) is added to every source."""
    interval = lease_s * RENEW_FRACTION
    also = f"; {live}" if live else ""
    return [
        equal("NF-1", f"lease_duration_s[{key}]", int(lease_s) if float(lease_s).is_integer() else lease_s,
              f"{setting}; {UP_LEASE_DEFAULTS}", why=why),
        Expectation("NF-1", f"renew_gap_median_s[{key}]", interval, f"{S3_HEARTBEAT}; {UP_LEASE}{also}", unit="s",
                    band=Band(interval, round(interval * (1 + RENEW_JITTER) + API_LATENCY_S, 3)),
                    why=f"0.25 × lease {lease_s:g} s; sliding jitter adds [0, 4 %) after each renewal "
                        f"returns; + {API_LATENCY_S:g} s for the Lease update on the loaded host; never below the interval"),
        Expectation("NF-1", f"renew_gap_max_s[{key}]", interval, f"{UP_LEASE}; test/e2e/common/node/node_lease.go{also}",
                    unit="s", band=Band(interval, 2 * interval - 0.001),
                    why="no single renewal missed: every gap < 2 × the interval"),
    ]


def unknown_after_last_renew(case: str, key: str, grace: float, period: float, setting: str,
                             upstream: str = UP_NLC) -> Expectation:
    """``unknown_after_last_renew_s[key]`` of ``case`` (NF-2, NF-4, NF-8: a node that stopped
    renewing its Lease) for the controller manager's grace ``grace`` and monitor period ``period``
    (s), ``setting`` saying where they are set (a profile file, or the cluster's live settings,
    :class:`Lifecycle`) and ``upstream`` the controller's source read for the case: the one home
    of that band."""
    return Expectation(case, f"unknown_after_last_renew_s[{key}]", float(grace), f"{S3_HEARTBEAT}; {upstream}; {setting}",
                       unit="s", band=Band(grace - API_RESOLUTION_S, grace + 2 * period + API_RESOLUTION_S + LOADED_S),
                       why=f"grace {grace:g} s from the pass that saw the last renewal (≤ 1 monitor period {period:g} s late) "
                           f"to the pass that acts (≤ 1 more period); lastTransitionTime truncated (−{API_RESOLUTION_S:g} s, "
                           f"+{API_RESOLUTION_S:g} s against the µs renewTime); +{LOADED_S:g} s for a late pass on the loaded host")


def lease_key(lease_s: float) -> str:
    """The name qualifier of NF-1's values for a kubelet lease duration ``lease_s`` (s): the
    profile that sets it (:data:`FAST`, :data:`DEFAULT`), else ``"lease=<n>s"``."""
    return next((p for p, v in LEASE_DURATION_S.items() if v == lease_s), f"lease={lease_s:g}s")


def grace_key(grace_s: float, period_s: float, grace: Mapping[str, float] | None = None,
              period: Mapping[str, float] | None = None) -> str:
    """The name qualifier of the values that follow from the controller manager's grace and
    monitor periods (s): the profile that sets them (by ``grace`` and ``period``, profile → s;
    default this module's :data:`GRACE_S`, :data:`MONITOR_PERIOD_S`: :data:`FAST`, :data:`DEFAULT`),
    else ``"grace=<n>s,period=<n>s"``."""
    grace, period = grace or GRACE_S, period or MONITOR_PERIOD_S
    return next((p for p in grace if (grace[p], period[p]) == (grace_s, period_s)),
                f"grace={grace_s:g}s,period={period_s:g}s")


def nf1_from(lc: Lifecycle) -> list[Expectation]:
    """NF-1's lease values with their band from a node's live settings (:class:`e2e.cluster.facts.
    Lifecycle`): named by :func:`lease_key`, the source naming the setting and where it came from.
    On a cluster of :data:`FAST` or :data:`DEFAULT` the same names and bands as the registry's."""
    return [replace(e, verified_in=VERIFIED_IN) for e in
            _nf1(lease_key(lc.lease_s), lc.lease_s, lc.source.split("; ")[0], "the node's kubelet nodeLeaseDurationSeconds (configz)",
                 lc.source.split("; ")[0])]


def taint_removed_after_ready(key: str, period_s: float, source: str) -> Expectation:
    """NF-2's ``taint_removed_after_ready_s[<key>]`` (:func:`grace_key`): the node's unreachable
    taints gone after its Ready update was received (s), for a controller manager whose monitor
    period is ``period_s`` (s; ``source`` names where that setting was read)."""
    return Expectation("NF-2", f"taint_removed_after_ready_s[{key}]", 0.0,
                       f"{UP_NLC}, processTaintBaseEviction, markNodeAsReachable; node-monitor-period: {source}", unit="s",
                       band=Band(0, period_s + LOADED_S),
                       why=f"the NoSchedule taint goes at once (doNoScheduleTaintingPass on the Ready node update); the "
                           f"NoExecute one (an excluded node, or the #111385 race) in the next monitor pass, which reads "
                           f"Ready=True and calls markNodeAsReachable: ≤ 1 period {period_s:g} s; both receive times; "
                           f"+{LOADED_S:g} s on the loaded host")


def nf2_recovery_from(lc: Lifecycle) -> Expectation:
    """NF-2's ``taint_removed_after_ready_s[<key>]`` (:func:`taint_removed_after_ready`) with its
    band from the cluster's live monitor period (:class:`e2e.cluster.facts.Lifecycle`)."""
    return replace(taint_removed_after_ready(grace_key(lc.grace_s, lc.period_s), lc.period_s, lc.source),
                   verified_in=VERIFIED_IN)


def nf2_from(lc: Lifecycle) -> Expectation:
    """NF-2's ``unknown_after_last_renew_s[<key>]`` (:func:`grace_key`) with its band from the
    cluster's live settings (:class:`e2e.cluster.facts.Lifecycle`), the source naming them."""
    return replace(unknown_after_last_renew("NF-2", grace_key(lc.grace_s, lc.period_s), lc.grace_s, lc.period_s, lc.source),
                   verified_in=VERIFIED_IN)


NF2 = [
    *(unknown_after_last_renew("NF-2", p, GRACE_S[p], MONITOR_PERIOD_S[p], f"profiles/{p}.yaml") for p in (FAST, DEFAULT)),
    equal("NF-2", "ready_unknown_reason", "NodeStatusUnknown", UP_NLC),
    equal("NF-2", "ready_unknown_message", "Kubelet stopped posting node status.", UP_NLC),
    equal("NF-2", "pressure_conditions", "DiskPressure=Unknown MemoryPressure=Unknown PIDPressure=Unknown", UP_NLC),
    Expectation("NF-2", "noschedule_taint_after_unknown_s", 0.0, f"{UP_NLC}; {UP_TAINT_TIME}", unit="s",
                band=Band(0, API_RESOLUTION_S + LOADED_S),
                why="doNoScheduleTaintingPass follows the status write (node update → nodeUpdateQueue), same second or the "
                    f"next (timeAdded and lastTransitionTime both truncated); +{LOADED_S:g} s on the loaded host"),
    Expectation("NF-2", "pod_not_ready_after_unknown_s", 0.0, UP_MARK, unit="s",
                band=Band(0, API_RESOLUTION_S + LOADED_S),
                why="MarkPodsNotReady runs in the pass that wrote Unknown, right after the write; both API times truncated; "
                    f"+{LOADED_S:g} s on the loaded host"),
    equal("NF-2", "pod_not_ready_reason", "", UP_MARK),
    equal("NF-2", "containers_ready", "True", UP_MARK),
    equal("NF-2", "pod_event", "Warning NodeNotReady: Node is not ready", UP_MARK),
    equal("NF-2", "node_event", "Normal NodeNotReady: Node {node} status is now: NodeNotReady", UP_MARK),
    endpoint_after_pod("NF-2", "endpoint_not_ready_after_pod_not_ready_s"),
    equal("NF-2", "failed_requests_before_unknown", 0, f"{CASES_NF} NF-2; {UP_KUBELET_OFFLINE}",
           why="the containers keep running and stay ready endpoints until the controller marks the pods"),
    # CASES-faults.md NF-2 said "refusals". Seen from the host (v1.37.2, 2026-11-30 16:12 UTC): 76 "reset" (docker's
    # userland proxy on the published 127.0.0.1 port accepts the connection itself and closes it when the node
    # refuses), then only timeouts until the kubelet was back — the classes are reported, not judged: what
    # clients see is that nothing succeeds.
    equal("NF-2", "ok_requests_while_not_ready", 0, "[UP] pkg/proxy/iptables/proxier.go syncProxyRules (no endpoints: REJECT)",
           why=f"sent from both endpoints not ready + {PROXY_SYNC_S:g} s kube-proxy sync (+{LOADED_S:g} s for iptables-restore "
               "on the loaded host: a request 1.04 s after was still answered on v1.34.4) and answered before the kubelet "
               "starts: no backend"),
    # Full disruption on one node should keep the NoExecute taint off (CASES-faults.md NF-2): it does not
    # always. The race of #111385 happened on the first real run (v1.37.2, fast-lifecycle, 2026-11-30
    # 16:01:33 UTC): the NoExecute taint was added in the second of Unknown, kcm logged "Entering master
    # disruption mode" 0.96 s later, the taint stayed until the kubelet was back, and the 20 s-tolerating
    # pod was deleted at timeAdded + 20 s ("Deleting pod" 16:01:53.7). Issue 29's trial run did not see it
    # (no taint, no pod deleted): either outcome is accepted, each run's recorded (details.race).
    Expectation("NF-2", "noexecute_taint_seen[plain]", True, f"{UP_NLC}; CASES-faults.md NF-2 (expected none)",
                known_bug=KnownBug(BUG_111385, correct=False, mechanism=RACE_111385, race=SEEN_111385)),
    Expectation("NF-2", "pods_deleted[plain]", 1, f"{S0_TAINTS}; {UP_NLC}; {UP_TAINT_EVICTION}",
                why="the stuck NoExecute taint evicts the 20 s-tolerating pod; the web pods tolerate the default 300 s",
                known_bug=KnownBug(BUG_111385, correct=0, mechanism=RACE_111385, race=SEEN_111385)),
    # CASES-faults.md §6 point 1, settled: the only node labelled node.kubernetes.io/exclude-disruption is
    # tainted NoExecute and evicts as on a big cluster (v1.37.2, fast-lifecycle, 2026-11-30 16:15 UTC:
    # NoExecute at Unknown + 1 s, the 20 s-tolerating pod deleted at timeAdded + 20 s, no master-disruption
    # mode), so NF-4's eviction half can run on one node too
    equal("NF-2", f"noexecute_taint_seen[{EXCLUDED}]", True, UP_EXCLUDED),
    equal("NF-2", f"pods_deleted[{EXCLUDED}]", 1, f"{UP_EXCLUDED}; {UP_TOLERATION_PLUGIN}",
           why="only the 20 s-tolerating pod: the web pods tolerate unreachable for the default 300 s, longer than the stop"),
    # whenever a NoExecute taint came (excluded node, or the race above)
    Expectation("NF-2", "noexecute_taint_after_unknown_s", 0.0, f"{UP_NLC} processTaintBaseEviction, doNoExecuteTaintingPass", unit="s",
                band=Band(0, 2 * API_RESOLUTION_S),
                why="markNodeForTainting in the pass that wrote Unknown; the zone's queue (0.1/s, burst 1) is drained every "
                    "100 ms; timeAdded and lastTransitionTime both truncated",
                race=noexecute_token_race()),
    Expectation("NF-2", "tolerant_deleted_after_taint_s", float(NF2_TOLERATION_S), UP_TAINT_EVICTION,
                unit="s", band=Band(NF2_TOLERATION_S - API_RESOLUTION_S, NF2_TOLERATION_S + 2 * API_RESOLUTION_S),
                why="timeAdded + the pod's own tolerationSeconds (as NF-3); 1 s truncation at both ends"),
    equal("NF-2", "container_restarts", 0, UP_KUBELET_OFFLINE, why="the containers run on without the kubelet"),
    equal("NF-2", "containers_replaced", False, UP_KUBELET_OFFLINE),
    equal("NF-2", "late_pod_phase", "Pending", UP_SCHED_TAINT),
    Expectation("NF-2", "node_ready_after_kubelet_start_s", 0.0, f"{UP_NLC}; pkg/kubelet/kubelet_node_status.go", unit="s",
                band=Band(-API_RESOLUTION_S, KUBELET_START_S + NODE_STATUS_UPDATE_S),
                why=f"kubelet start (≤ {KUBELET_START_S} s) + its first node status within one update period ({NODE_STATUS_UPDATE_S} s); "
                    "lastTransitionTime truncated to the second, the start a host time (−1 s)"),
    *(taint_removed_after_ready(p, MONITOR_PERIOD_S[p], f"profiles/{p}.yaml") for p in (FAST, DEFAULT)),
    Expectation("NF-2", "pod_ready_after_node_ready_s", 0.0, f"{UP_PROBER}; {UP_MARK}", unit="s",
                band=Band(0, WEB_READINESS_PERIOD_S + KUBELET_START_S),
                why=f"the first successful readiness probe (≤ 1 period {WEB_READINESS_PERIOD_S} s; a probe is triggered at once "
                    f"for a pod already not Ready) + the status write; +{KUBELET_START_S} s for the restarted kubelet's pod sync"),
    equal("NF-2", "failed_requests_after_recovery", 0, f"{CASES_NF} NF-2",
           why=f"once both endpoints are ready again (+{PROXY_SYNC_S:g} s kube-proxy sync) every request succeeds"),
]

# The scheduler's wording (k8s.io/kubernetes pkg/scheduler, read in v1.34.4 … v1.37.2, the same in each):
# framework/types.go FitError.Error ("0/<all nodes> nodes are available: " + the reasons' histogram "<n> <reason>",
# sorted as strings, joined ", ", then "." and the PostFilter's message); a node counts with the reason of
# the first filter that rejects it, in the default plugin order (apis/config/v1/default_plugins.go:
# NodeUnschedulable, TaintToleration, NodeAffinity).
UP_SCHED_FIT = "[UP] pkg/scheduler/framework/types.go FitError.Error; apis/config/v1/default_plugins.go (filter order)"
SCHED_UNSCHEDULABLE = "node(s) were unschedulable"  # plugins/nodeunschedulable ErrReasonUnschedulable
SCHED_TAINT = "node(s) had untolerated taint(s)"  # plugins/tainttoleration Filter
SCHED_AFFINITY = "node(s) didn't match Pod's node affinity/selector"  # plugins/nodeaffinity ErrReasonPod
UP_SCHED_AFFINITY = "[UP] pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go Filter (ErrReasonPod)"
UP_SCHED_UNSCHEDULABLE = "[UP] pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go Filter"


def _literal(text: str) -> str:
    """``text`` as a regex matching it (its regex characters escaped, spaces left as they are)."""
    return re.sub(r"([\\.^$*+?{}\[\]|()])", r"\\\1", text)


def _nf3_scheduling(reasons: str, nodes: int) -> list[Expectation]:
    """NF-3's ``scheduling_message`` on ``nodes`` nodes with the filter histogram ``reasons`` (a
    regex): one entry per PostFilter wording."""
    head = rf"0/{nodes} nodes are available: {reasons}\. "
    # C8 / CASES-faults.md §6 point 5, settled: v1.34.4 carries #135023 (the generic "had untolerated taint(s)"),
    # as v1.37.2 does. Up to 1.36 the DynamicResources PostFilter of a pod without claims adds its own reason
    # "no new claims to deallocate" before the preemption text (seen on v1.34.4, 2026-11-30 16:31 UTC); 1.37
    # returns Unschedulable without a message there.
    return [
        equal("NF-3", "scheduling_message", head + r"no new claims to deallocate, preemption: .*",
              f"{UP_SCHED_TAINT}; {UP_DRA_POSTFILTER} (v1.34.4–v1.36.3); {UP_SCHED_FIT}", pattern=True, minors=(None, 36)),
        equal("NF-3", "scheduling_message", head + r"preemption: .*",
              f"{UP_SCHED_TAINT}; {UP_DRA_POSTFILTER} (v1.37.2: no message); {UP_SCHED_FIT}", pattern=True, minors=(37, None)),
    ]


def _tolerates(tolerations: Sequence[Mapping], taint: Mapping) -> bool:
    """Whether one of ``tolerations`` tolerates ``taint`` (k8s.io/api core/v1 toleration.go
    ToleratesTaint). ``ValueError`` for an operator other than ``Exists``/``Equal``."""
    for t in tolerations:
        op = t.get("operator") or "Equal"
        if op not in ("Exists", "Equal"):
            raise ValueError(f"toleration {dict(t)}: operator {op} (only Exists and Equal are known here)")
        if t.get("effect") and t["effect"] != taint.get("effect"):
            continue
        if t.get("key") != taint.get("key") and not (not t.get("key") and op == "Exists"):
            continue
        if op == "Exists" or (t.get("value") or "") == (taint.get("value") or ""):
            return True
    return False


def _requirement(labels: Mapping[str, str], expr: Mapping) -> bool:
    key, op, values = str(expr.get("key") or ""), expr.get("operator"), expr.get("values") or []
    if op == "In":
        return key in labels and labels[key] in values
    if op == "NotIn":
        return key not in labels or labels[key] not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    if op in ("Gt", "Lt") and key in labels and len(values) == 1:
        have, want = int(labels[key]), int(values[0])
        return have > want if op == "Gt" else have < want
    if op in ("Gt", "Lt"):
        return False
    raise ValueError(f"node selector requirement {dict(expr)}: unknown operator {op}")


def _selected(labels: Mapping[str, str], spec: Mapping) -> bool:
    """Whether a node of ``labels`` matches the pod ``spec``'s ``nodeSelector`` and required node
    affinity (component-helpers scheduling/corev1/nodeaffinity: the terms ORed, a term's
    expressions ANDed, an empty term matches nothing). ``ValueError`` for ``matchFields``, which
    the NodeAffinity PreFilter turns into a node set and this reading does not model."""
    if any(labels.get(k) != v for k, v in (spec.get("nodeSelector") or {}).items()):
        return False
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    if not required:
        return True
    terms = required.get("nodeSelectorTerms") or []
    if any(term.get("matchFields") for term in terms):
        raise ValueError("a required node affinity with matchFields: not modelled")
    return any(term.get("matchExpressions") and all(_requirement(labels, e) for e in term["matchExpressions"])
               for term in terms)


def scheduling_reason(node: Mapping, spec: Mapping) -> str | None:
    """The reason the scheduler's filters give for a pod of ``spec`` (its API JSON ``spec``) on
    ``node`` (a Node's API JSON): the first of :data:`SCHED_UNSCHEDULABLE` (``spec.unschedulable``
    without a toleration of ``node.kubernetes.io/unschedulable:NoSchedule``), :data:`SCHED_TAINT`
    (a NoSchedule or NoExecute taint not tolerated), :data:`SCHED_AFFINITY`; ``None`` when these
    filters let it pass (:data:`UP_SCHED_FIT`). ``ValueError`` where the pod asks what is not modelled."""
    tolerations = spec.get("tolerations") or []
    node_spec = node.get("spec") or {}
    if node_spec.get("unschedulable") and not _tolerates(
            tolerations, {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}):
        return SCHED_UNSCHEDULABLE
    if any(t.get("effect") in ("NoSchedule", "NoExecute") and not _tolerates(tolerations, t)
           for t in node_spec.get("taints") or []):
        return SCHED_TAINT
    if not _selected((node.get("metadata") or {}).get("labels") or {}, spec):
        return SCHED_AFFINITY
    return None


def nf3_scheduling_from(nodes: Sequence[Mapping], spec: Mapping, minor: int) -> Expectation:
    """NF-3's ``scheduling_message`` on Kubernetes ``1.<minor>`` for a pod of ``spec`` (its API JSON
    ``spec``: tolerations, nodeSelector, node affinity) that no node of ``nodes`` (the cluster's Node
    objects as the scheduler saw them) takes: ``"0/<n> nodes are available: <count> <reason>, …"`` in
    the scheduler's wording (:func:`scheduling_reason`, :data:`UP_SCHED_FIT`), then the PostFilter's
    text of the minor. On the suite's one-node kind cluster under the test taint the registry's
    entry. ``ValueError`` when a node would take the pod (nothing to predict) or a pod's
    requirement is not modelled."""
    reasons: dict[str, int] = {}
    for node in nodes:
        reason = scheduling_reason(node, spec)
        if reason is None:
            raise ValueError(f"node {(node.get('metadata') or {}).get('name')} passes the scheduler's filters modelled here: "
                             "the pod would be scheduled, no FailedScheduling message to predict")
        reasons[reason] = reasons.get(reason, 0) + 1
    histogram = ", ".join(sorted(f"{n} {reason}" for reason, n in reasons.items()))
    source = " ".join(filter(None, (UP_SCHED_UNSCHEDULABLE if SCHED_UNSCHEDULABLE in reasons else "",
                                    UP_SCHED_AFFINITY if SCHED_AFFINITY in reasons else "")))
    entry = next(e for e in _nf3_scheduling(_literal(histogram), len(nodes)) if e.applies_to(minor))
    return replace(entry, source=f"{entry.source}; {source}" if source else entry.source,
                   verified_in=tuple(v for v in VERIFIED_IN if entry.applies_to(version_minor(v))))


NF3 = [
    # From the host time the taint patch returned: a taint added through the API has no timeAdded
    # (the node controller sets it on its own taints only; kubectl taint sets none). CASES-faults.md
    # NF-3 measured from timeAdded, which the first run (v1.37.2) showed absent on the test taint.
    Expectation("NF-3", "deleted_after_taint_s[none]", 0.0, f"{S0_TAINTS}; {UP_TAINT_EVICTION}", unit="s",
                band=Band(-API_RESOLUTION_S, 2 * API_RESOLUTION_S),
                why="no matching toleration: deleted when the taint manager sees the taint (ms after the patch); the delete "
                    "time (deletionTimestamp − grace) is truncated (−1 s); +1 s informer and queue +1 s on the loaded host"),
    Expectation("NF-3", "deleted_after_taint_s[t10]", 10.0, f"{S0_TAINTS}; {UP_TAINT_EVICTION}", unit="s",
                band=Band(10 - API_RESOLUTION_S, 10 + 2 * API_RESOLUTION_S),
                why="the taint manager's own observation + tolerationSeconds 10 on its timed queue; the delete time truncated "
                    "(−1 s); +1 s informer and queue +1 s on the loaded host"),
    equal("NF-3", "deleted[t30]", False, f"{UP_TAINT_EVICTION} (removing the taint cancels); test/e2e/node/taints.go"),
    equal("NF-3", "deleted[infinite]", False, UP_TAINT_EVICTION),
    equal("NF-3", "disruption_target_reason", "DeletionByTaintManager", UP_TAINT_EVICTION),
    equal("NF-3", "disruption_target_message", "Taint manager: deleting due to NoExecute taint", UP_TAINT_EVICTION),
    equal("NF-3", "marking_event", "Marking for deletion Pod {namespace}/{pod}", UP_TAINT_EVICTION),
    equal("NF-3", "cancelling_event", "Cancelling deletion of Pod {namespace}/{pod}", UP_TAINT_EVICTION),
    equal("NF-3", "dry_run_tolerations", "node.kubernetes.io/not-ready=300 node.kubernetes.io/unreachable=20",
          UP_TOLERATION_PLUGIN),
    *_nf3_scheduling(_literal(f"1 {SCHED_TAINT}"), 1),
]

# NF-5's pods by role: its probe pods, and the two replicas of the web Deployment (by sorted pod name),
# each value under a name of its own
NF5_WEB = ("web-1", "web-2")


def _nf5(minor_range: tuple, flips: dict[str, int], started: int, source: str) -> list[Expectation]:
    """``flips``: the probe pods' and ``web`` (each of :data:`NF5_WEB`) Ready flips."""
    per_pod = {**{k: n for k, n in flips.items() if k != "web"}, **{w: flips["web"] for w in NF5_WEB}}
    out = [equal("NF-5", f"ready_flips[{pod}]", n, source, minors=minor_range,
                  why="Ready True→False transitions in the watch after the restart") for pod, n in per_pod.items()]
    out.append(equal("NF-5", "started_flips[startup-readiness]", started, source, minors=minor_range,
                      why="started true→false transitions in the watch after the restart"))
    return out


NF5 = [
    equal("NF-5", "container_restarts", 0, f"{UP_PROBER}; test/e2e/apps/daemon_restart.go",
           why="kind's kubelet.service KillMode=process: containers outlive the kubelet"),
    equal("NF-5", "containers_replaced", False, "test/e2e/apps/daemon_restart.go"),
    equal("NF-5", "node_ready_flips", 0, UP_NLC, why="the downtime (≈ 1–3 s) is far below the grace period"),
    # 1.35+: containers started > 10 s before the kubelet keep started/ready
    *_nf5((35, None), {"no-probe": 0, "readiness": 0, "startup-readiness": 0, "web": 0}, 0,
          f"{UP_PROBER}; test/e2e_node/container_lifecycle_test.go \"Not Change Container Status\""),
    equal("NF-5", "failed_requests", 0, UP_PROBER, minors=(35, None), why="no readiness flip, no endpoint change"),
    equal("NF-5", "not_ready_s", "absent", f"{UP_PROBER} (no flip: nothing to time)", minors=(35, None)),
    # 1.34: every readiness worker starts at Failure, startup probes at Unknown
    *_nf5((None, 34), {"no-probe": 0, "readiness": 1, "startup-readiness": 1, "web": 1}, 1, UP_PROBER_134),
    Expectation("NF-5", "not_ready_s", 5.0, UP_PROBER_134, unit="s", minors=(None, 34),
                band=Band(0.001, KUBELET_START_S + PROBE_PERIOD_S + 5),
                why=f"kubelet start (≤ {KUBELET_START_S} s) + the first probe (≤ 1 period {PROBE_PERIOD_S} s, random initial "
                    "jitter) + the status write; CASES-faults.md NF-5: (0, 15] s"),
    Expectation("NF-5", "failed_requests", 0, f"{UP_PROBER_134}; {CASES_NF} NF-5", minors=(None, 34), band=Band.at_least(0),
                why="report only: requests fail only while both web endpoints are unready at once"),
]

NF6 = [
    equal("NF-6", "container_restarts", 0, UP_SHIMS, why="shims survive a containerd restart or stop"),
    equal("NF-6", "containers_replaced", False, UP_SHIMS),
    equal("NF-6", "failed_requests", 0, f"{UP_SHIMS}; {UP_EXEC_PROBE} (httpGet probes run in the kubelet)",
           why="the containers and kube-proxy's rules do not depend on containerd; the httpGet readiness keeps passing"),
    equal("NF-6", "web_ready_flips", 0, f"{UP_RUNTIME}; #125618",
           why="the kubelet reports Ready=False itself: the controller does not mark pods NotReady; httpGet readiness passes"),
    Expectation("NF-6", "tick_max_gap_s", TICK_S, UP_SHIMS, unit="s", band=Band(TICK_S, TICK_S + 0.9),
                why=f"the app's own {TICK_S:g} s ticker: the app is never paused (its FIFO buffers the lines while containerd "
                    "is away); +0.9 s scheduling delay on the loaded host"),
    equal("NF-6", "node_ready_flips[restart]", 0, UP_RUNTIME, why="each restart is far shorter than the 30 s runtime threshold"),
    Expectation("NF-6", "new_pod_running_s[restart]", 3.0, UP_SHIMS, unit="s", band=Band(-API_RESOLUTION_S, POD_START_S),
                why=f"a pod created after the restarts starts as usual: schedule, sandbox, container (budget {POD_START_S} s); "
                    "startedAt truncated to the second, the creation a host time (−1 s)"),
    Expectation("NF-6", "runtime_down_after_stop_s", float(RUNTIME_DOWN_S), UP_RUNTIME, unit="s",
                band=Band(RUNTIME_DOWN_S - RUNTIME_CHECK_S - API_RESOLUTION_S,
                          RUNTIME_DOWN_S + NODE_STATUS_UPDATE_S + API_RESOLUTION_S + LOADED_S),
                why=f"30 s from the last successful runtime check (≤ {RUNTIME_CHECK_S} s before the stop), posted at the next "
                    f"node status update (≤ {NODE_STATUS_UPDATE_S} s); 1 s truncation; +{LOADED_S:g} s on the loaded host. "
                    "(CASES-faults.md NF-6 wrote [30, 46]: it counted the 30 s from the stop, not from the last check)"),
    equal("NF-6", "runtime_down_reason", "KubeletNotReady", UP_RUNTIME),
    equal("NF-6", "runtime_down_message", ".*container runtime is down.*", UP_RUNTIME, pattern=True),
    # CASES-faults.md NF-6 expected the exec-probed pod unready after failureThreshold × period ("a probe
    # error counts as Failure"). The source and the first real run disagree: prober.probe returns
    # (Failure, err), and the worker throws an errored result away, so readiness keeps its last value.
    # Evidence (v1.37.2, fast-lifecycle, 2026-11-30 16:00 UTC): 12 "Readiness probe errored and
    # resulted in unknown state" events over the 60 s outage, no Ready transition of the pod.
    equal("NF-6", "exec_probe_ready_flips", 0, UP_EXEC_PROBE,
           why="an exec probe cannot reach the runtime: the result is an error, thrown away by the worker; "
               "readiness keeps its last value (Ready)"),
    equal("NF-6", "exec_probe_event", r"Readiness probe errored and resulted in unknown state: rpc error: code = Unavailable .*",
          UP_EXEC_PROBE, pattern=True),
    equal("NF-6", "exec_during_outage_fails", True, "[UP] pkg/kubelet/cri/streaming (exec through CRI)"),
    Expectation("NF-6", "node_ready_after_start_s", 0.0, UP_RUNTIME, unit="s",
                band=Band(-API_RESOLUTION_S, RUNTIME_CHECK_S + NODE_STATUS_UPDATE_S + API_RESOLUTION_S),
                why=f"the next runtime check (≤ {RUNTIME_CHECK_S} s) + the next node status update (≤ {NODE_STATUS_UPDATE_S} s); "
                    "lastTransitionTime truncated to the second, the start a host time (±1 s)"),
    Expectation("NF-6", "late_pod_running_after_start_s", 3.0, UP_RUNTIME, unit="s", band=Band(-API_RESOLUTION_S, POD_START_S),
                why=f"the pod created during the outage starts once containerd answers (budget {POD_START_S} s); "
                    "startedAt truncated to the second, the start a host time (−1 s)"),
]

NF7 = [
    equal("NF-7", "failed_requests", 0, "[UP] pkg/proxy (rules stay in the kernel); CASES-faults.md §2.5",
           why="running containers and kube-proxy's rules need no API server; endpoints cannot change"),
    Expectation("NF-7", "crashloop_runs_in_outage", 1, f"{UP_KUBELET_OFFLINE}; CASES.md CL-1", band=Band.at_least(1),
                why="the crash loop's back-off (10, 20, 40 s) goes on without the API: the 60 s window holds at least one run"),
    equal("NF-7", "liveness_restarts", 1, UP_KUBELET_OFFLINE, why="the probe fails once (the flag), the new container clears it"),
    Expectation("NF-7", "kcm_restarts", 1, UP_LEADER, band=Band.at_least(1),
                why="an outage > 10 s (renew deadline) loses the leader lease: the process exits"),
    Expectation("NF-7", "scheduler_restarts", 1, UP_LEADER, band=Band.at_least(1),
                why="an outage > 10 s (renew deadline) loses the leader lease: the process exits"),
    equal("NF-7", "node_ready_flips", 0, f"{UP_NLC}; NodeControllerLeaseCircuitBreaker (1.37, PR #138698)", minors=(37, None),
           why="a restarted kcm begins with probeTimestamp = now; 1.37 also re-reads the live Lease"),
    # CASES-faults.md NF-7 names 1.34 only; 1.35 and 1.36 lack the breaker too (no such gate in their
    # pkg/features/kube_features.go; tryUpdateNodeHealth and monitorNodeHealth as in v1.34.4)
    Expectation("NF-7", "node_ready_flips", 0, f"{UP_NLC}; CASES-faults.md NF-7 (1.34–1.36 lack the lease circuit breaker)",
                minors=(None, 36), band=Band(0, 1), why="accepted and reported: a transient NotReady before 1.37"),
]

NF1 = [e for p in (FAST, DEFAULT)
       for e in _nf1(p, LEASE_DURATION_S[p], f"profiles/{p}.yaml", "the profile's kubelet nodeLeaseDurationSeconds")]

register([*NF1, *NF2, *NF3, *NF5, *NF6, *NF7], VERIFIED_IN)
