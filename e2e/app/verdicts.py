"""What to change in the manifest when a contract's value fails, and the app's verdict table.

:func:`hint` says, for one judged AP value and what the run saw around it (:class:`Seen`), what
the measured value means for this app's manifest and what to change — e.g. ``preStop sleep 0 s <
endpoint removal 0.4 s + kube-proxy sync 1 s: new connections reached a stopping pod``. The test
passes it as the value's context, so a failure's explanation carries it (the judge shows a
context only for a failed value), and :func:`table` lists every value of the app with it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..base.verdicts import FAIL
from ..judge.measurements import Measurement, shown
from .spec import AppSpec

CONTRACT_NAMES = {
    "AP-1": "delete one pod under load",
    "AP-2": "rolling update under load",
    "AP-3": "readiness before serving",
    "AP-4": "kubectl drain of the app's node",
    "AP-5": "a crash (SIGKILL of the main process)",
    "AP-6": "memory under load vs its limit",
    "AP-7": "the kubelet of the app's node stopped",
}
# the platform's own values: a failure is a finding about the cluster, not about the manifest
PLATFORM = {("AP-1", "endpoint_not_ready_after_delete_s"), ("AP-2", "max_replicaset_sum"), ("AP-2", "min_available"),
            ("AP-4", "evictions_refused"), ("AP-5", "crash_exit_code"), ("AP-5", "restart_gap_s"),
            # a StatefulSet's own (ST-1, ST-2, ST-5)
            ("AP-1", "replacement_name_kept"), ("AP-1", "recreated_after_gone_s"), ("AP-1", "hostname_is_pod_name"),
            ("AP-1", "subdomain_is_service"), ("AP-2", "max_pods"), ("AP-2", "replaced_order"), ("AP-3", "new_pod_name"),
            ("AP-3", "next_created_after_ready_s"), ("AP-3", "not_ready_at_once_max"), ("AP-3", "created_spread_s"),
            # the Eviction API under the app's budget (DR-1, DR-2), a node's lost heartbeat (NF-2, NF-4)
            ("AP-4", "disruptions_allowed_before"), ("AP-4", "refusal_line"), ("AP-4", "disruptions_allowed_min"),
            ("AP-7", "traffic_moved_after_last_renew_s"), ("AP-7", "node_ready_reason")}

# the hints that quote nothing the run saw
FIXED_HINTS = {
    ("AP-2", "rollout_s"): (
        "the rollout took longer than the objective: new pods start slowly, or maxSurge is small — raise maxSurge, "
        "shorten the start (startupProbe, image), or raise objectives.max_rollout_s"),
    ("AP-4", "drain_s"): (
        "kubectl drain took longer than the objective (or did not finish: measured nothing): with a "
        "PodDisruptionBudget each eviction waits until a replacement is Ready elsewhere — shorten the start, allow "
        "more disruptions (PDB maxUnavailable), or raise objectives.max_drain_s"),
    ("AP-4", "drain_exit_code"): (
        "kubectl drain did not evict every pod of the node: a PodDisruptionBudget that never allows a disruption "
        "(maxUnavailable 0, or minAvailable = replicas) blocks it — allow at least one"),
    ("AP-5", "ready_again_s"): (
        "the pod took longer than the objective to be Ready again after the crash: shorten the start (the restart "
        "itself is immediate), or raise objectives.max_startup_s"),
    ("AP-6", "memory_headroom_pct"): (
        "the peak under load left less of limits.memory than the objective: raise resources.limits.memory (and "
        "requests), or bound the app's caches and buffers"),
    ("AP-6", "oom_kills"): (
        "the kernel OOM-killed the app under its own load (reason OOMKilled, exit 137): raise resources.limits.memory, "
        "or bound the app's memory (Go: GOMEMLIMIT below the limit)"),
    ("AP-1", "endpoint_hostname_is_pod_name"): (
        "the governing Service (spec.serviceName) listed no endpoint with the pod's hostname: it must select the "
        "StatefulSet's pods (its selector), so that each gets its DNS name <pod>.<service> — fix its selector"),
    ("AP-4", "current_healthy_min"): (
        "fewer pods were healthy during the drain than the budget's desiredHealthy: a pod went unready for another "
        "reason than its eviction (a readinessProbe failing under load, a crash), which no budget prevents — check "
        "the pods' events and the probe's timeouts"),
    ("AP-3", "ready_after_create_s"): (
        "the pod became Ready later than the objective: shorten the start, or give the startupProbe more budget "
        "(failureThreshold × periodSeconds) and raise objectives.max_startup_s"),
}


@dataclass
class Seen:
    """What a contract's run saw that a hint quotes (None: not seen): ``endpoint_removal_s`` (the
    deleted pod's endpoint ready=false after the delete), ``exit_code``, ``exit_after_delete_s``,
    ``failures_by_class`` (the load's failed requests by class), ``evicted_at_once`` (AP-4 without a
    PodDisruptionBudget: the app's pods on the drained node), ``pods_on_node`` (AP-7: the app's
    pods on the node whose kubelet stopped)."""

    endpoint_removal_s: float | None = None
    exit_code: int | None = None
    exit_after_delete_s: float | None = None
    failures_by_class: dict[str, int] | None = None
    evicted_at_once: int | None = None
    pods_on_node: int | None = None


def _s(x: float | None) -> str:
    return "?" if x is None else f"{x:.2f}".rstrip("0").rstrip(".") + " s"


def _failures(seen: Seen) -> str:
    if not seen.failures_by_class:
        return ""
    return " (" + ", ".join(f"{v} {k}" for k, v in sorted(seen.failures_by_class.items())) + ")"


def hint(case: str, name: str, app: AppSpec, seen: Seen, kube_proxy_sync_s: float = 1.0) -> str:
    """What the value ``case``/``name`` of ``app`` says about its manifest and what to change
    when it fails (one or two sentences); the platform's own values say that nothing in the
    manifest moves them."""
    name = name.split("[")[0]
    if (case, name) in PLATFORM:
        return ("the platform's own value (computed from the manifest, documented from the source): nothing in the manifest "
                "moves it; a failure is a finding about the cluster (see the host pressure in details.host)")
    prestop = app.prestop_s
    grace = app.grace_s
    if (case, name) == ("AP-1", "prestop_margin_s"):
        if prestop is None:
            return (f"no preStop hook < endpoint removal {_s(seen.endpoint_removal_s)} + kube-proxy sync {kube_proxy_sync_s:g} s: "
                    "SIGTERM came while new connections still reached the pod — add lifecycle.preStop.sleep.seconds "
                    f"≥ {math.ceil((seen.endpoint_removal_s or 0) + kube_proxy_sync_s) + 1} (and keep "
                    "terminationGracePeriodSeconds ≥ preStop + the longest request + shutdown)")
        if prestop < 0:
            return "the preStop hook's length cannot be read from the manifest (not a sleep): the margin is not judged"
        return (f"preStop sleep {prestop:g} s < endpoint removal {_s(seen.endpoint_removal_s)} + kube-proxy sync "
                f"{kube_proxy_sync_s:g} s: requests reached a terminating pod — raise lifecycle.preStop.sleep.seconds to "
                f"≥ {math.ceil((seen.endpoint_removal_s or 0) + kube_proxy_sync_s) + 1}")
    if (case, name) == ("AP-5", "failed_requests"):
        return (f"more requests failed{_failures(seen)} than the platform needs to take a crashed pod out of the Service: "
                "a readinessProbe that keeps failing after the restart, or a slow restart — check the pod's events; more "
                f"replicas than {app.replicas} spread the loss")
    if (case, name) == ("AP-7", "failed_requests"):
        if seen.pods_on_node is not None and seen.pods_on_node >= app.replicas:
            return (f"requests failed{_failures(seen)}: all {app.replicas} replicas ran on the node whose kubelet stopped, so "
                    "once their endpoints were marked not ready no pod was left to serve — spread the replicas over the "
                    "nodes (topologySpreadConstraints on kubernetes.io/hostname, or a podAntiAffinity)")
        return (f"requests failed{_failures(seen)} while the node's kubelet was stopped (its containers keep running): the "
                "app's pods on the other nodes did not take the load when the traffic moved — check their readiness "
                "and their capacity for the whole load")
    if name == "failed_requests":
        causes = []
        if case in ("AP-1", "AP-2", "AP-4"):
            if prestop is None:
                causes.append("no preStop hook: the pod got SIGTERM while its endpoint was still being removed — add "
                              "lifecycle.preStop.sleep (≥ 5 s)")
            if seen.exit_code not in (None, 0):
                causes.append(f"the app exited {seen.exit_code} on SIGTERM at once"
                              f"{' after ' + _s(seen.exit_after_delete_s) if seen.exit_after_delete_s is not None else ''}: "
                              "requests in flight were cut — finish in-flight requests (graceful shutdown) before exiting")
        if case == "AP-4" and (seen.evicted_at_once or 0) > 1:
            causes.append(f"without a PodDisruptionBudget kubectl evicted all {seen.evicted_at_once} of the app's pods on the "
                          f"node at once ({app.replicas} replicas): add a PodDisruptionBudget (maxUnavailable: 1)")
        if case in ("AP-2", "AP-3", "AP-4") and not app.readiness:
            causes.append("no readinessProbe: a new pod is Ready (and gets traffic) as soon as its container starts — add a "
                          "readinessProbe on a path that answers only when the app can serve")
        if case == "AP-2" and app.max_unavailable > 0:
            causes.append(f"maxUnavailable {app.max_unavailable}: fewer pods serve during the rollout — set maxUnavailable: 0")
        if not causes:
            causes.append("the app failed requests while its pods changed: check its graceful shutdown and its readinessProbe")
        return f"requests failed{_failures(seen)}: " + "; ".join(causes)
    if (case, name) == ("AP-1", "exit_after_delete_s"):
        return (f"the container exited {_s(seen.exit_after_delete_s)} after the delete, over the objective: shorten the "
                "drain (preStop sleep, the app's shutdown timeout), or raise objectives.max_shutdown_s if that is fine")
    if (case, name) == ("AP-1", "exit_code"):
        if seen.exit_code == 143:
            return ("exit code 143 = killed by SIGTERM (or exits at once as 128+15): the app does not handle SIGTERM — stop "
                    "accepting, finish in-flight requests, exit 0")
        if seen.exit_code == 137:
            return (f"exit code 137 = SIGKILL: the app was still running when the grace period ({grace} s) ended — exit on "
                    "SIGTERM sooner, or raise terminationGracePeriodSeconds")
        return f"exit code {seen.exit_code}: the app's shutdown path ends with an error — make it exit 0 after a clean shutdown"
    if (case, name) == ("AP-1", "sigkill_at_grace_end"):
        return (f"SIGKILL at the end of the grace period ({grace} s): the app ignores SIGTERM or drains longer than "
                f"grace − preStop ({grace - max(prestop or 0, 0):g} s) — exit sooner, or raise terminationGracePeriodSeconds")
    return FIXED_HINTS.get((case, name), "")


def line(m: Measurement, hint_text: str) -> str:
    """One row of the app's verdict table: contract, value, measured, objective, verdict, what to change."""
    band = m.band
    if band is not None and band[1] is None:
        objective = f"≥ {shown(band[0], m.unit)}"
    elif band is not None and band[0] == band[1]:
        objective = f"= {shown(band[0], m.unit)}"
    elif band is not None and band[0] == 0 and m.documented == band[1]:
        objective = f"≤ {shown(band[1], m.unit)}"
    elif band is not None:
        objective = f"{shown(m.documented, m.unit)} within [{shown(band[0])}, {shown(band[1])}]{(' ' + m.unit) if m.unit else ''}"
    else:
        objective = f"= {shown(m.documented, m.unit)}"
    todo = hint_text if m.verdict == FAIL else ""
    measured = shown(m.value, m.unit, m.documented, m.band) if m.value is not None else "nothing"
    return f"| {m.case} {CONTRACT_NAMES.get(m.case, '')} | {m.name} | {measured} | {objective} | {m.verdict} | {todo} |"


def table(rows: list[tuple[Measurement, str]]) -> str:
    """The verdict table (markdown) of ``rows`` (each value with its hint), plus each value's source."""
    out = ["| contract | value | measured | objective | verdict | what to change |", "| --- | --- | --- | --- | --- | --- |"]
    out += [line(m, h) for m, h in rows]
    out += ["", "Sources:"] + [f"- {m.case} {m.name}: {m.source}" for m, _ in rows]
    return "\n".join(out) + "\n"
