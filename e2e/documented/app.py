"""AP — your own app under the lifecycle contracts (issue 28, issue 41 item 5; README "Your own app").

Each contract is a scenario of ``apps/test_contracts.py`` run on the user's Deployment or
StatefulSet. Two kinds of documented value are judged, each saying where it comes from:

- **the platform's mechanism** (the catalogue's cases, their upstream source read in v1.34.4 …
  v1.37.2): the endpoint's ``ready=false`` after a delete (PS-3/PS-4), SIGKILL when the grace
  period ends (PS-5), kube-proxy's minimum sync period, the Deployment controller's surge
  arithmetic (DR-3), a StatefulSet's ordered pods and kept identity (ST-1, ST-2, ST-5), the
  Eviction API's refusals under a PodDisruptionBudget (DR-1, DR-2), a lost node's controller chain
  (NF-2, NF-4) — computed from the app's own manifest (its replicas, maxSurge, maxUnavailable,
  grace period, preStop, pod management, PDB);
- **the app's objectives** (``app.yaml`` ``objectives:``): max failed requests, max shutdown
  seconds, the exit code, max rollout and startup seconds — each default from the seeds'
  recommendations (``e2e.app.spec.DEFAULT_SOURCES`` names the section).

The values depend on the app, so a run judges against :func:`app_registry` (the suite's
registry with the AP entries of *that* app: :func:`app_expectations`). What is registered here at
import is the seeds' own reference Deployment ([S2] 3.1: 10 replicas, maxSurge 25 %,
maxUnavailable 0, grace 45 s, preStop sleep 10 s, startupProbe 30 × 5 s, progressDeadlineSeconds
600, with [S2]'s PodDisruptionBudget maxUnavailable 1) and, for the names only a StatefulSet has,
the seeds' StatefulSet (``nats``, [S2] L647–676: 3 replicas, OrderedReady, serviceName nats) — so
every AP name is known to the registry (``make test`` checks the names judged).

The sources this module adds to the catalogue's (eviction.go ``EvictionREST.Create``,
``checkAndDecrement``; disruption.go ``getExpectedPodCount``, ``updatePdbStatus``,
``countHealthyPods``; stateful_set_control.go ``updateStatefulSet``, ``processReplica``;
stateful_set_utils.go ``getStatefulSetMaxUnavailable``, ``initIdentity``; node_lifecycle_controller.go
``tryUpdateNodeHealth``; k8s.io/endpointslice ``podToEndpoint``, ``ShouldSetHostname``) were read in
v1.34.4, v1.35.4, v1.36.3 and v1.37.2 (k8s.io/endpointslice v0.34.4 … v0.37.2): the same there,
but for 1.37's lease circuit breaker (a live Lease read before Unknown: no change of timing).

Contracts: AP-1 delete one pod under load (a StatefulSet: the pod's identity kept); AP-2 rolling
update (a template annotation) under load; AP-3 readiness before serving (scale up by one under
load; startup time; a StatefulSet: its ordered creation); AP-4 ``kubectl drain`` of the app's node
(two-node profile) with and without its PodDisruptionBudget (with it: the refusals the budget
causes and that it held); AP-5 a crash (SIGKILL of the main process under load: exit code, restart
gap, Ready again, the requests lost, bounded by the platform's detection time and the app's
replicas: :func:`crash_failures_max`); AP-6 memory under load against the main container's limit
(peak, headroom, OOM kills); AP-7 (opt-in, ``node_fault: kubelet-stop``) the kubelet of the app's
node stopped under load: the time until the traffic moves, the requests lost.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..judge.expectations import REGISTRY, Band, Expectation, Registry, at_least, equal, exact, register, version_minor, within
from .disruption import (S2_DEADLINE, S2_DRAIN, S2_PDB, S2_ROLLOUT, UP_CMDUTIL, UP_DRAIN_CMD, UP_EVICTION, UP_FENCEPOSTS,
                         UP_ROLLING)
from . import faults as single_node
from . import faults_node
from .crashloop import gap_expectations
from .disruption import BUDGET_MESSAGE, RETRY_LINE, UP_DRAIN, UP_PDB
from .kubelet import PLEG_RELIST_S, UPGRADE_PATH_READ
from .memory import S0_OOM
from .statefulset import CONTROLLER_S, S2_DNS, S2_STS, UP_CONTROL, UP_IDENTITY, UP_UPDATE
from .termination import DELETE_REQUEST_S, ENDPOINT_PROPAGATION_S, S0_STEPS, UP_ENDPOINT, UP_KILL

# The mechanisms cited are those of PS-3/PS-4/PS-5 and DR-3, read in these releases
# (e2e/documented/termination.py, disruption.py); kube-proxy's defaults.go the same in all four.
VERIFIED_IN = UPGRADE_PATH_READ
APP_CASES = ("AP-1", "AP-2", "AP-3", "AP-4", "AP-5", "AP-6", "AP-7")
# the container's exit code after SIGKILL: 128 + 9
SIGKILL_EXIT_CODE = 137

# kube-proxy writes a changed endpoint into its rules at most once per minSyncPeriod (default 1 s:
# pkg/proxy/apis/config/v1alpha1/defaults.go SetDefaults_KubeProxyConfiguration, IPTables and
# NFTables MinSyncPeriod): after the EndpointSlice says ready=false, the node may still route new
# connections to the pod for up to this long.
KUBE_PROXY_SYNC_S = 1.0
UP_KUBE_PROXY = ("[UP] pkg/proxy/apis/config/v1alpha1/defaults.go SetDefaults_KubeProxyConfiguration "
                 "(iptables/nftables minSyncPeriod 1 s)")
# The endpoint turns ready=false this long after the delete at most (PS-4's band).
ENDPOINT_REMOVAL_MAX_S = DELETE_REQUEST_S + ENDPOINT_PROPAGATION_S
UP_PROGRESS = "[UP] pkg/apis/apps/v1/defaults.go SetDefaults_Deployment (progressDeadlineSeconds 600)"
UP_STARTUP = "[UP] pkg/kubelet/prober/worker.go doProbe (startup failureThreshold reached → the container is killed)"
UP_STS_ONE_POD = ("[UP] pkg/controller/statefulset/stateful_set_control.go updateStatefulSet, processReplica (isTerminating: "
                  "a terminating ordinal waits until its pod is gone; one pod per ordinal)")
UP_STS_AVAILABLE = ("[UP] pkg/controller/statefulset/stateful_set_control.go updateStatefulSet (rolling update: delete the highest "
                    "non-updated ordinal only while fewer than maxUnavailable replicas are unavailable — 1 without the "
                    "MaxUnavailableStatefulSet gate), stateful_set_utils.go getStatefulSetMaxUnavailable")
UP_HOSTNAME = ("[S2] L983 «Hostname эндпоинт получает, когда у пода есть hostname и subdomain с именем Service»; [UP] "
               "k8s.io/endpointslice utils.go podToEndpoint, util/controller_utils.go ShouldSetHostname")
UP_EVICTION_REFUSAL = ("[UP] pkg/registry/core/pod/storage/eviction.go EvictionREST.Create → checkAndDecrement "
                       "(disruptionsAllowed 0: 429 TooManyRequests; else decrement and DisruptedPods, then the delete)")
# AP-7 runs on the profile of AP-4 (the two-node "multi-node": the upstream node-lifecycle defaults).
NODE_FAULT_PROFILE = faults_node.DEFAULT


@dataclass(frozen=True)
class Objectives:
    """The app's objectives, each ``(value, source)``: ``max_failed_requests`` (per contract under
    load), ``max_shutdown_s`` (delete → exit), ``exit_code`` (after SIGTERM), ``max_rollout_s``,
    ``max_startup_s`` (pod created → Ready), ``max_drain_s`` (``kubectl drain`` of the app's node)."""

    max_failed_requests: tuple[float, str]
    max_shutdown_s: tuple[float, str]
    exit_code: tuple[float, str]
    max_rollout_s: tuple[float, str]
    max_startup_s: tuple[float, str]
    max_drain_s: tuple[float, str]
    min_memory_headroom_pct: tuple[float, str] = (0, "default 0")


@dataclass(frozen=True)
class AppFacts:
    """What of the app's manifest a documented value depends on: ``replicas``, ``surge`` and
    ``unavailable`` (a Deployment: ResolveFenceposts' results; a StatefulSet: 0 and its
    maxUnavailable as the API stored it, else 1), ``grace_s``, ``prestop_s`` (0 without a preStop);
    the load's ``rate_per_s`` and ``timeout_s`` (the requests a crashed pod gets); ``kind``
    (``Deployment`` or ``StatefulSet``), a StatefulSet's ``ordinal_start``; ``budget``: the
    PodDisruptionBudget's ``(desiredHealthy, disruptionsAllowed)`` with every replica healthy (None
    without one); ``drained_pods``: the app's pods on the node AP-4 drains (a fact of the run, read
    before the drain; None before it)."""

    replicas: int
    surge: int
    unavailable: int
    grace_s: float
    prestop_s: float
    objectives: Objectives
    rate_per_s: float = 20.0
    timeout_s: float = 1.0
    kind: str = "Deployment"
    ordinal_start: int = 0
    budget: tuple[int, int] | None = None
    drained_pods: int | None = None


def _objective(case: str, name: str, goal: tuple[float, str], unit: str, what: str) -> Expectation:
    value, source = goal
    return within(case, name, value, 0, value, f"the app's objective: {what} at most {value:g}{(' ' + unit) if unit else ''}",
                  f"app objective: {source}", unit=unit)


def app_expectations(f: AppFacts) -> list[Expectation]:
    """The AP entries of one app (module doc): its objectives and the platform's values computed
    from its manifest."""
    o = f.objectives
    entries: list[Expectation] = []
    for case in APP_CASES[:4]:
        entries.append(_objective(case, "failed_requests", o.max_failed_requests, "requests", "failed requests under load"))
    entries += [
        _objective("AP-1", "exit_after_delete_s", o.max_shutdown_s, "s", "delete → the main container's exit"),
        equal("AP-1", "exit_code", int(o.exit_code[0]), f"app objective: {o.exit_code[1]}"),
        equal("AP-1", "sigkill_at_grace_end", False,
              f"{S0_STEPS} step 5 (SIGKILL when the grace period of {f.grace_s:g} s ends: exit 137); {UP_KILL}"),
        within("AP-1", "endpoint_not_ready_after_delete_s", 0, 0, ENDPOINT_REMOVAL_MAX_S,
               f"+{DELETE_REQUEST_S:g} s the delete request reaching the API server +{ENDPOINT_PROPAGATION_S:g} s the "
               "EndpointSlice controller writing the slice and the watch delivering it (PS-4)",
               f"{S0_STEPS} step 2; {UP_ENDPOINT}"),
        Expectation("AP-1", "prestop_margin_s", KUBE_PROXY_SYNC_S, f"{S0_STEPS} steps 2 and 4; [S2] 3.1 (preStop sleep "
                    f"«дать время эндпоинтам разойтись»); {UP_KUBE_PROXY}", unit="s", band=Band.at_least(KUBE_PROXY_SYNC_S),
                    why=f"preStop ({f.prestop_s:g} s) − the endpoint's removal after the delete must leave kube-proxy its "
                        f"minSyncPeriod {KUBE_PROXY_SYNC_S:g} s before SIGTERM, else new connections reach a stopping pod"),
        _objective("AP-2", "rollout_s", o.max_rollout_s, "s", "template change → rollout complete"),
        *(_statefulset(f) if f.kind == "StatefulSet" else _deployment(f)),
        _objective("AP-3", "ready_after_create_s", o.max_startup_s, "s", "pod created → Ready"),
        _objective("AP-4", "drain_s", o.max_drain_s, "s", "`kubectl drain` of the app's node → kubectl done"),
        exact("AP-4", "evictions_refused[without-pdb]", 0, f"{S2_PDB}; {UP_EVICTION}", unit="refusals",
              why="no PodDisruptionBudget selects the pods: the eviction API deletes them at once, never a 429"),
        *_budget(f),
        equal("AP-4", "drain_exit_code", 0, f"{S2_DRAIN}; {UP_DRAIN_CMD}; {UP_CMDUTIL}: 0 once every pod of the node "
              "was evicted (a PDB only delays it while disruptionsAllowed is 0: a retry every 5 s)"),
        equal("AP-5", "crash_exit_code", SIGKILL_EXIT_CODE, f"[S2] 3.1 (Exit Code 137 = 128 + 9, SIGKILL); {UP_KILL}"),
        *gap_expectations("AP-5", range(0, 1), "[S2] 3.2 «После первого падения контейнер перезапускается сразу»; "
                          "CL-1 (the first restart is immediate: doBackOff)", name="restart_gap_s"),
        _objective("AP-5", "ready_again_s", o.max_startup_s, "s", "SIGKILL → the pod Ready again"),
        _crash_failures(f),
        within("AP-6", "memory_headroom_pct", 100, o.min_memory_headroom_pct[0], 100,
               f"the app's objective: at least {o.min_memory_headroom_pct[0]:g} % of limits.memory left at the peak under load",
               f"app objective: {o.min_memory_headroom_pct[1]}", unit="%"),
        exact("AP-6", "oom_kills", 0, f"{S0_OOM} (OM-1: at limits.memory the kernel kills the container, reason OOMKilled, "
              "exit 137)", why="an OOM kill under the app's own load is a failed contract, however it restarts",
              unit="kills"),
        *_node_fault(f),
    ]
    return entries


def _deployment(f: AppFacts) -> list[Expectation]:
    """A Deployment's rolling-update arithmetic (DR-3)."""
    return [
        exact("AP-2", "max_replicaset_sum", f.replicas + f.surge, f"{S2_ROLLOUT}; {UP_FENCEPOSTS}; {UP_ROLLING}",
              why=f"replicas + maxSurge = {f.replicas} + {f.surge}: the new ReplicaSet is scaled up by the surge at once "
                  "(NewRSNewReplicas), never beyond", unit="pods"),
        Expectation("AP-2", "min_available", f.replicas - f.unavailable, f"{S2_ROLLOUT}; {UP_FENCEPOSTS}; {UP_ROLLING}",
                    unit="pods", band=Band.at_least(f.replicas - f.unavailable),
                    why=f"replicas − maxUnavailable = {f.replicas} − {f.unavailable}: an old pod is scaled down only while "
                        "more are available (reconcileOldReplicaSets)"),
    ]


def statefulset_order(f: AppFacts) -> list[int]:
    """A StatefulSet's ordinals, lowest first (ordinals.start … start + replicas − 1)."""
    return list(range(f.ordinal_start, f.ordinal_start + f.replicas))


def _statefulset(f: AppFacts) -> list[Expectation]:
    """A StatefulSet's own documented behaviour (ST-1, ST-2, ST-5) where it differs from a
    Deployment's: one pod per ordinal, updates from the highest ordinal, ordered creation, the
    identity a recreated pod keeps. Pod names are written ``{set}-<ordinal>``."""
    down = ",".join(f"{{set}}-{i}" for i in reversed(statefulset_order(f)))
    return [
        exact("AP-2", "max_pods", f.replicas, f"{S2_STS}; {UP_STS_ONE_POD}", unit="pods",
              why=f"one pod per ordinal: a replaced ordinal's new pod is created only once the old one is gone, so never more "
                  f"than the {f.replicas} replicas (no surge)"),
        Expectation("AP-2", "min_available", f.replicas - f.unavailable, f"{S2_STS}; {UP_STS_AVAILABLE}", unit="pods",
                    band=Band.at_least(f.replicas - f.unavailable),
                    why=f"replicas − maxUnavailable = {f.replicas} − {f.unavailable}: the next ordinal is deleted only while "
                        "fewer are unavailable"),
        equal("AP-2", "replaced_order", down, f"{S2_STS} («обновление идёт с наибольшего номера»); {UP_UPDATE}"),
        equal("AP-1", "replacement_name_kept", True, f"{S2_STS}; {UP_IDENTITY}; {UP_CONTROL} (a missing ordinal is "
              "recreated under its own name)"),
        within("AP-1", "recreated_after_gone_s", 0.5, 0, CONTROLLER_S,
               f"host times: the old pod's DELETED reaches the controller and its sync creates the ordinal again, the create "
               f"reaches our watch (ST-5: {CONTROLLER_S:g} s); never before it is gone",
               f"CASES-faults C34; {UP_STS_ONE_POD}"),
        equal("AP-1", "hostname_is_pod_name", True, f"{S2_DNS}; {UP_IDENTITY}"),
        equal("AP-1", "subdomain_is_service", True, f"{S2_DNS}; {UP_IDENTITY} (subdomain = spec.serviceName)"),
        equal("AP-1", "endpoint_hostname_is_pod_name", True, UP_HOSTNAME),
        equal("AP-3", "new_pod_name", f"{{set}}-{f.ordinal_start + f.replicas}", f"{S2_STS}; {UP_IDENTITY} (the next ordinal)"),
        within("AP-3", "next_created_after_ready_s[OrderedReady]", 0.5, 0, CONTROLLER_S,
               f"ST-1: Ready(k) reaches the controller and its sync creates k+1, the create reaches our watch ({CONTROLLER_S:g} s)",
               f"{S2_STS}; {UP_CONTROL}"),
        exact("AP-3", "not_ready_at_once_max[OrderedReady]", 1, f"{S2_STS}; {UP_CONTROL}", unit="pods",
              why="ST-1: monotonic: no new ordinal while a lower one is not Running and Ready"),
        within("AP-3", "created_spread_s[Parallel]", 0.5, 0, CONTROLLER_S,
               f"ST-1: one sync creates every missing ordinal (burst); the creates reach our watch within {CONTROLLER_S:g} s",
               f"{S2_STS}; {UP_CONTROL} (runForAll, monotonic false)"),
    ]


def _budget(f: AppFacts) -> list[Expectation]:
    """AP-4 with the app's PodDisruptionBudget (DR-1, DR-2): the budget before the drain, the
    evictions it refused, that it held. Only with a budget and once ``drained_pods`` is known."""
    if f.budget is None or f.drained_pods is None:
        return []
    desired, allowed = f.budget
    n = f.drained_pods
    needed = max(0, n - allowed)
    src = f"{S2_PDB}; {UP_EVICTION_REFUSAL}; {UP_DRAIN}"
    refused = (exact("AP-4", "evictions_refused[with-pdb]", 0, src, unit="refusals",
                     why=f"the budget allows {allowed} disruption(s) and the node holds {n} of the app's pods: every eviction "
                         "passes (a concurrent one conflicts on the PDB's status and retries, never a 429)")
               if needed == 0 else
               at_least("AP-4", "evictions_refused[with-pdb]", needed, src, unit="refusals",
                        why=f"kubectl evicts the node's {n} pods at once; the budget allows {allowed}: each of the other {needed} "
                            "is answered 429 at least once (disruptionsAllowed 0 until a replacement is Ready), then retried "
                            "every 5 s — how often depends on the app's start"))
    out = [
        exact("AP-4", "disruptions_allowed_before[with-pdb]", allowed, f"{S2_PDB}; {UP_PDB}", unit="disruptions",
              why=f"every one of the {f.replicas} replicas healthy − desiredHealthy {desired}"),
        refused,
        equal("AP-4", "refusal_line[with-pdb]", RETRY_LINE, f"{S2_PDB}; {UP_EVICTION_REFUSAL} ({BUDGET_MESSAGE!r}); {UP_DRAIN} "
              "(apierrors.IsTooManyRequests → «will retry after 5s»)"),
        exact("AP-4", "disruptions_allowed_min[with-pdb]", max(0, allowed - n), f"{UP_EVICTION_REFUSAL}; {UP_PDB}",
              unit="disruptions", why=f"each passed eviction decrements disruptionsAllowed in the PDB's status: {allowed} − "
                                      f"min({n} pods, {allowed}); the controller gives it back only for a healthy replacement"),
    ]
    if desired > 0:
        out.append(at_least("AP-4", "current_healthy_min[with-pdb]", desired, f"{S2_PDB}; {UP_EVICTION_REFUSAL}; {UP_PDB}",
                            unit="pods", why=f"the budget held: an eviction passes only while disruptionsAllowed > 0, so the "
                                             f"healthy pods the PDB controller counts never fall below desiredHealthy {desired}"))
    return out


def _node_fault(f: AppFacts) -> list[Expectation]:
    """AP-7 (opt-in ``node_fault: kubelet-stop``) on :data:`NODE_FAULT_PROFILE`: the controller's
    chain of a node whose kubelet stopped (NF-2, NF-4): its Lease is not renewed, it goes Unknown
    after the grace, its pods are marked not Ready, their endpoints go and the Service's traffic
    moves to the app's other pods; the containers keep running meanwhile (NF-2
    failed_requests_before_unknown), so the app's objective of failed requests applies."""
    profile = single_node.DEFAULT  # multi-node carries the node-lifecycle settings of default-lifecycle
    grace, period = single_node.GRACE_S[profile], single_node.MONITOR_PERIOD_S[profile]
    loaded, endpoint = single_node.LOADED_S, single_node.ENDPOINT_S
    return [
        _objective("AP-7", "failed_requests", f.objectives.max_failed_requests, "requests",
                   "failed requests under load while its node's kubelet is stopped"),
        within("AP-7", "traffic_moved_after_last_renew_s", grace, grace, grace + 2 * period + 2 * loaded + endpoint,
               f"host times (renewTime µs, the endpoint's receive time): node-monitor-grace-period {grace} s after the pass "
               f"that saw the last renewal (≥ the renewal itself; ≤ 1 monitor period {period} s late) to the pass that writes "
               f"Unknown (≤ 1 more period) +{loaded:g} s a late pass on the loaded host; MarkPodsNotReady in that pass "
               f"(+{loaded:g} s); the EndpointSlice after the pod (≤ {endpoint:g} s, PS-3)",
               f"{single_node.S3_HEARTBEAT}; {single_node.UP_NLC}; {single_node.UP_MARK}; profiles/{NODE_FAULT_PROFILE}.yaml "
               "(the upstream defaults: grace 50 s, period 5 s)"),
        equal("AP-7", "node_ready_reason", "NodeStatusUnknown", single_node.UP_NLC),
    ]


def crash_failures_max(f: AppFacts) -> int:
    """The requests a crashed pod of ``f`` can fail: its share of the load (rate / replicas) for as long
    as the Service still sends it new connections — until the kubelet sees the exit (a PLEG relist), the
    EndpointSlice drops it and kube-proxy syncs — plus those in flight when it died (≤ the timeout)."""
    window = PLEG_RELIST_S + ENDPOINT_PROPAGATION_S + KUBE_PROXY_SYNC_S + f.timeout_s
    return math.ceil(f.rate_per_s / f.replicas * window)


def _crash_failures(f: AppFacts) -> Expectation:
    n = crash_failures_max(f)
    return Expectation(
        "AP-5", "failed_requests", 0, f"{S0_STEPS} step 2 (endpoints follow readiness: podToEndpoint); "
        f"[UP] pkg/kubelet/pleg/generic.go Relist, kubelet.go genericPlegRelistPeriod (1 s); {UP_KUBE_PROXY}", unit="requests", band=Band(0, n),
        why=f"a crash loses what the Service sends the pod until it is out of the rules: its share {f.rate_per_s:g}/s ÷ "
            f"{f.replicas} replicas × (+{PLEG_RELIST_S:g} s PLEG relist sees the exit +{ENDPOINT_PROPAGATION_S:g} s "
            f"EndpointSlice +{KUBE_PROXY_SYNC_S:g} s kube-proxy sync +{f.timeout_s:g} s requests in flight) = {n}")


# The seeds' reference Deployment ([S2] 3.1, L139–149 and L77–80) with [S2]'s PodDisruptionBudget
# (L541–549: maxUnavailable 1 → desiredHealthy 9, disruptionsAllowed 1), its 10 pods spread over
# the two nodes AP-4 drains one of (5 on the node): what is registered at import.
SEED_REFERENCE = AppFacts(
    replicas=10, surge=3, unavailable=0, grace_s=45, prestop_s=10,
    objectives=Objectives(
        max_failed_requests=(0, "[S2] 3.1 (maxUnavailable: 0, preStop sleep 10 s): no request lost"),
        max_shutdown_s=(45, "[S2] 3.1 terminationGracePeriodSeconds: 45"),
        exit_code=(0, "[S2] 3.1 (graceful shutdown of the Go service)"),
        max_rollout_s=(600, f"{S2_DEADLINE}; {UP_PROGRESS}"),
        max_startup_s=(150, f"[S2] 3.1 startupProbe 30 × 5 s; {UP_STARTUP}"),
        max_drain_s=(600, f"{S2_DEADLINE}; {UP_PROGRESS}"),
    ), budget=(9, 1), drained_pods=5)
# The seeds' StatefulSet (nats, [S2] L647–676: 3 replicas, OrderedReady, no preStop, the default grace
# 30 s and no startupProbe: 150 s) registers the names only a StatefulSet has.
SEED_STATEFULSET = AppFacts(
    replicas=3, surge=0, unavailable=1, grace_s=30, prestop_s=0, kind="StatefulSet",
    objectives=Objectives(
        max_failed_requests=(0, "[S2] 3.1: no request lost"), max_shutdown_s=(30, "pkg/apis/core/v1/defaults.go (grace 30 s)"),
        exit_code=(0, "[S2] 3.1"), max_rollout_s=(540, "3 × (30 + 150) s"), max_startup_s=(150, f"[S2] 3.1; {UP_STARTUP}"),
        max_drain_s=(540, "3 × (30 + 150) s"),
    ))
_SEEDS = app_expectations(SEED_REFERENCE)
register(_SEEDS + [e for e in app_expectations(SEED_STATEFULSET) if (e.case, e.name) not in {(x.case, x.name) for x in _SEEDS}],
         VERIFIED_IN)


def app_registry(f: AppFacts, base: Registry = REGISTRY) -> Registry:
    """The registry a run of one app judges against: ``base`` without its AP entries, plus
    :func:`app_expectations` of ``f`` (read in :data:`VERIFIED_IN`)."""
    mine = [replace(e, verified_in=tuple(v for v in VERIFIED_IN if e.applies_to(version_minor(v)))) for e in app_expectations(f)]
    return Registry(entries=[e for e in base.entries if e.case not in APP_CASES] + mine)

