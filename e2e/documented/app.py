"""AP — your own app under the lifecycle contracts (issue 28; README "Your own app").

Each contract is a scenario of ``apps/test_contracts.py`` run on the user's Deployment. Two
kinds of documented value are judged, each saying where it comes from:

- **the platform's mechanism** (the catalogue's cases, their upstream source read in v1.34.4 …
  v1.37.2): the endpoint's ``ready=false`` after a delete (PS-3/PS-4), SIGKILL when the grace
  period ends (PS-5), kube-proxy's minimum sync period, the Deployment controller's surge
  arithmetic (DR-3) — computed from the app's own manifest (its replicas, maxSurge,
  maxUnavailable, grace period, preStop);
- **the app's objectives** (``app.yaml`` ``objectives:``): max failed requests, max shutdown
  seconds, the exit code, max rollout and startup seconds — each default from the seeds'
  recommendations (``e2e.app.spec.DEFAULT_SOURCES`` names the section).

The values depend on the app, so a run judges against :func:`app_registry` (the suite's
registry with the AP entries of *that* app: :func:`app_expectations`). What is registered here at
import is the seeds' own reference Deployment ([S2] 3.1: 10 replicas, maxSurge 25 %,
maxUnavailable 0, grace 45 s, preStop sleep 10 s, startupProbe 30 × 5 s, progressDeadlineSeconds
600) — so every AP name is known to the registry (``make test`` checks the names judged).

Contracts: AP-1 delete one pod under load; AP-2 rolling update (a template annotation) under
load; AP-3 readiness before serving (scale up by one under load; startup time); AP-4 ``kubectl
drain`` of the app's node (two-node profile) with and without its PodDisruptionBudget; AP-5 a crash
(SIGKILL of the main process under load: exit code, restart gap, Ready again, the requests lost,
bounded by the platform's detection time and the app's replicas: :func:`crash_failures_max`); AP-6
memory under load against the main container's limit (peak, headroom, OOM kills).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..judge.expectations import REGISTRY, Band, Expectation, Registry, equal, exact, register, version_minor, within
from .disruption import (S2_DEADLINE, S2_DRAIN, S2_PDB, S2_ROLLOUT, UP_CMDUTIL, UP_DRAIN_CMD, UP_EVICTION, UP_FENCEPOSTS,
                         UP_ROLLING)
from .crashloop import gap_expectations
from .kubelet import PLEG_RELIST_S, UPGRADE_PATH_READ
from .memory import S0_OOM
from .termination import DELETE_REQUEST_S, ENDPOINT_PROPAGATION_S, S0_STEPS, UP_ENDPOINT, UP_KILL

# The mechanisms cited are those of PS-3/PS-4/PS-5 and DR-3, read in these releases
# (e2e/documented/termination.py, disruption.py); kube-proxy's defaults.go the same in all four.
VERIFIED_IN = UPGRADE_PATH_READ
APP_CASES = ("AP-1", "AP-2", "AP-3", "AP-4", "AP-5", "AP-6")
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
    ``unavailable`` (ResolveFenceposts' results), ``grace_s``, ``prestop_s`` (0 without a preStop); the
    load's ``rate_per_s`` and ``timeout_s`` (the requests a crashed pod gets)."""

    replicas: int
    surge: int
    unavailable: int
    grace_s: float
    prestop_s: float
    objectives: Objectives
    rate_per_s: float = 20.0
    timeout_s: float = 1.0


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
        exact("AP-2", "max_replicaset_sum", f.replicas + f.surge, f"{S2_ROLLOUT}; {UP_FENCEPOSTS}; {UP_ROLLING}",
              why=f"replicas + maxSurge = {f.replicas} + {f.surge}: the new ReplicaSet is scaled up by the surge at once "
                  "(NewRSNewReplicas), never beyond", unit="pods"),
        Expectation("AP-2", "min_available", f.replicas - f.unavailable, f"{S2_ROLLOUT}; {UP_FENCEPOSTS}; {UP_ROLLING}",
                    unit="pods", band=Band.at_least(f.replicas - f.unavailable),
                    why=f"replicas − maxUnavailable = {f.replicas} − {f.unavailable}: an old pod is scaled down only while "
                        "more are available (reconcileOldReplicaSets)"),
        _objective("AP-3", "ready_after_create_s", o.max_startup_s, "s", "pod created → Ready"),
        _objective("AP-4", "drain_s", o.max_drain_s, "s", "`kubectl drain` of the app's node → kubectl done"),
        exact("AP-4", "evictions_refused[without-pdb]", 0, f"{S2_PDB}; {UP_EVICTION}", unit="refusals",
              why="no PodDisruptionBudget selects the pods: the eviction API deletes them at once, never a 429"),
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
    ]
    return entries


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


# The seeds' reference Deployment ([S2] 3.1, L139–149 and L77–80): what is registered at import.
SEED_REFERENCE = AppFacts(
    replicas=10, surge=3, unavailable=0, grace_s=45, prestop_s=10,
    objectives=Objectives(
        max_failed_requests=(0, "[S2] 3.1 (maxUnavailable: 0, preStop sleep 10 s): no request lost"),
        max_shutdown_s=(45, "[S2] 3.1 terminationGracePeriodSeconds: 45"),
        exit_code=(0, "[S2] 3.1 (graceful shutdown of the Go service)"),
        max_rollout_s=(600, f"{S2_DEADLINE}; {UP_PROGRESS}"),
        max_startup_s=(150, f"[S2] 3.1 startupProbe 30 × 5 s; {UP_STARTUP}"),
        max_drain_s=(600, f"{S2_DEADLINE}; {UP_PROGRESS}"),
    ))
register(app_expectations(SEED_REFERENCE), VERIFIED_IN)


def app_registry(f: AppFacts, base: Registry = REGISTRY) -> Registry:
    """The registry a run of one app judges against: ``base`` without its AP entries, plus
    :func:`app_expectations` of ``f`` (read in :data:`VERIFIED_IN`)."""
    mine = [replace(e, verified_in=tuple(v for v in VERIFIED_IN if e.applies_to(version_minor(v)))) for e in app_expectations(f)]
    return Registry(entries=[e for e in base.entries if e.case not in APP_CASES] + mine)

