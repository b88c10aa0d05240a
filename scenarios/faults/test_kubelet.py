"""NF-2 and NF-5 — the kubelet stopped, restarted, SIGKILLed (CASES-faults.md §2.1, §2.3, §4).

NF-2: the kubelet stopped on the only node: the chain last renewal → ``Ready=Unknown`` →
``unreachable:NoSchedule`` → pods not Ready → endpoints not ready → refused requests, while the
containers run on; no NoExecute taint and no eviction on one node (full disruption); recovery
after the kubelet starts again.

NF-5: a kubelet restart (and a SIGKILL, restarted by systemd) keeps every container; on 1.35+
nothing flips, on 1.34 every readiness probe restarts at Failure, so Ready flips
False→True (and a startup probe's ``started``).

Both run on a cluster of their own profile (fast-lifecycle; the upstream defaults under
``slow``), ``serial``; the fault is always undone and the cluster checked healthy afterwards
(e2e.faults).
"""

from __future__ import annotations

import time
from contextlib import ExitStack
from dataclasses import dataclass
from typing import cast

import pytest

from e2e.documented import faults as doc
from e2e.evidence import endpoints
from e2e.evidence.load import LoadResult, outcomes
from e2e.faults import FaultWindow, kubelet_killed, kubelet_restarted, kubelet_stopped
from e2e.measure.nodelost import UNREACHABLE, after_unknown_s, node_lost
from e2e.measure.values import expect_all
from e2e.record.pods import condition
from e2e.run.scenario import Scenario
from e2e.record.timeline import parse_time
from e2e.base.waiting import FAULT_SLACK_S
from e2e.cluster.facts import Lifecycle
from e2e.record.nodes import Seen, condition_changes, first_condition, flips, taint_gone
from e2e.record.pods import deletion_requested_at

from .fault_helpers import (
    apply_web,
    attach_traffic,
    containers,
    load,
    node_labelled,
    states,
    wait_pods_ready,
    wait_until_time,
    web_serving,
)
RECORD = ("Pod", "Event", "EndpointSlice", "Node", "Lease")
# (profile, exclude-disruption label on the node: CASES-faults.md §6 point 1)
NF2_VARIANTS = [pytest.param(doc.FAST, False, marks=pytest.mark.profile(doc.FAST), id=doc.FAST),
                pytest.param(doc.FAST, True, marks=pytest.mark.profile(doc.FAST), id=f"{doc.FAST}-{doc.EXCLUDED}"),
                pytest.param(doc.DEFAULT, False, marks=[pytest.mark.profile(doc.DEFAULT), pytest.mark.slow], id=doc.DEFAULT)]
# NF-2 default variant: the kubelet stays stopped 420 s (past the 300 s default tolerations).
NF2_STOP_S = {doc.FAST: doc.NF2_STOP_S, doc.DEFAULT: 420}


def node_name(sc: Scenario) -> str:
    """The node the fault hits: the kind cluster's only node, or the node a ``--kubeconfig``
    cluster's facts chose (Scenario.default_node)."""
    return sc.default_node()


def nf2_settings(sc: Scenario, node: str, profile: str, excluded: bool) -> Lifecycle:
    """The node-lifecycle settings NF-2 is judged by (the cluster's facts); skips the test, naming
    the fact, where its contract does not hold: the plain variant's "full disruption" needs the
    node to be the cluster's only one, and the stop must outlast Unknown plus the 20 s toleration."""
    settings = sc.lifecycle(node)
    # Unknown at the end of its band, the NoExecute taint one token late (≤ 12 s, doc.noexecute_token_race),
    # the tolerant pod deleted ≤ 22 s after it: all inside the stop. Checked first: it holds for both
    # variants alike (the controller manager's flags), so the plain variant's skip below may say the other runs
    unknown, token = doc.nf2_from(settings).band, doc.noexecute_token_race().band
    assert unknown is not None and token is not None  # both documented with a band
    needed = unknown.high + token.high + doc.NF2_TOLERATION_S + 2 * doc.API_RESOLUTION_S
    if needed > NF2_STOP_S[profile]:
        pytest.skip(f"NF-2 {profile} stops the kubelet {NF2_STOP_S[profile]} s: needs node-monitor-grace-period ≤ "
                    f"{settings.grace_s - (needed - NF2_STOP_S[profile]):g} s; {settings.source}")
    others = sorted(n for n in (sc.facts or {}).get("nodes") or {} if n != node)
    if not excluded and others:
        pytest.skip(f"NF-2 plain needs {node} to be the cluster's only node (full disruption: no Ready node in any zone, "
                    f"CASES-faults.md NF-2); the cluster also has {', '.join(others)} (the exclude-disruption variant "
                    f"measures a cluster of several nodes, and its stop outlasts this grace)")
    return settings


@pytest.mark.serial
@pytest.mark.record(*RECORD)
@pytest.mark.case("NF-2")
@pytest.mark.traffic
@pytest.mark.parametrize("profile, excluded", NF2_VARIANTS)
@pytest.mark.node_faults("kubelet_stopped", case="NF-2", window_s=NF2_STOP_S, node="first")
def test_kubelet_stopped(scenario: Scenario, profile: str, excluded: bool):
    """NF-2: kubelet stopped 120 s (fast-lifecycle): Unknown at the last renewal + grace,
    NoSchedule taint and pods not Ready at once, endpoints not ready, then refused requests;
    containers untouched, no NoExecute taint, no pod deleted, a new pod Pending; all back after
    the kubelet starts. With the node labelled node.kubernetes.io/exclude-disruption (§6 point 1)
    the zone is not "fully disrupted": the NoExecute taint comes and the 20 s-tolerating pod is
    deleted at timeAdded + 20 s."""
    sc = scenario
    node = node_name(sc)
    settings = nf2_settings(sc, node, profile, excluded)
    variant = doc.EXCLUDED if excluded else "plain"
    apply_web(sc)
    with ExitStack() as stack:
        if excluded:
            stack.enter_context(node_labelled(sc, node, doc.EXCLUDE_DISRUPTION))
        _kubelet_stopped(sc, node, profile, variant, settings)


@dataclass
class Outage:
    """What the kubelet stop left to judge: the fault's ``window``, the node's ``unknown`` and
    ``ready`` conditions as first recorded, the ``web`` pods and the ``tolerant`` one, their
    containers ``before``/``after`` (:func:`containers`), the host load's ``result`` and when the
    endpoints were back (``recovered_at``, epoch s)."""

    window: FaultWindow
    unknown: Seen
    ready: Seen
    web: list[str]
    tolerant: str
    before: dict[str, tuple[str, int]]
    after: dict[str, tuple[str, int]]
    result: LoadResult
    recovered_at: float


def _kubelet_stopped(sc: Scenario, node: str, profile: str, variant: str, settings: Lifecycle) -> None:
    """The NF-2 chain (CASES-faults.md §2.1), link by link."""
    outage = _stop_the_kubelet(sc, node, profile, settings)
    attach_traffic(sc, outage.result, [outage.window], f"NF-2 kubelet stopped ({profile})")
    _judge_node_lost(sc, node, variant, outage, settings)
    for pod in outage.web:
        _judge_pod_not_ready_then_ready(sc, pod, outage)
    _judge_node_event(sc, node, outage)
    _judge_requests(sc, outage)
    _judge_workload_kept(sc, variant, outage)
    _judge_recovery(sc, node, outage, settings)


def _stop_the_kubelet(sc: Scenario, node: str, profile: str, settings: Lifecycle) -> Outage:
    """Web pods serving under load, a pod tolerating unreachable 20 s; the kubelet stopped for
    NF2_STOP_S (a new pod applied meanwhile), started again, and load kept until the endpoints
    are back."""
    try:
        sc.apply("tolerant.yaml", toleration_s=doc.NF2_TOLERATION_S)
        web = web_serving(sc)
        tolerant = sc.wait_for("the tolerant pod running", lambda: next(
            (c.name for c in sc.recorder.changes("Pod") if c.name.startswith("tolerant-")), None), FAULT_SLACK_S)
        before = containers(sc, web)
        gen = load(sc, duration_s=NF2_STOP_S[profile] + 2 * FAULT_SLACK_S)
        with kubelet_stopped(sc, node, window_s=NF2_STOP_S[profile]) as window:
            unknown = sc.wait_for("node Ready=Unknown", lambda: _node_condition(sc, node, "Unknown", window.injected_at),
                                  settings.grace_s + 3 * settings.period_s + 10)
            sc.apply("late.yaml", name="late")
            wait_until_time(sc, window.injected_at + NF2_STOP_S[profile], "the end of the kubelet stop")
        ready = sc.wait_for("node Ready=True again", lambda: _node_condition(sc, node, "True", window.undone_at), FAULT_SLACK_S)
        sc.wait_for("both web pods ready endpoints again",
                    lambda: set(web) <= endpoints.ready_pods(states(sc)), FAULT_SLACK_S)
        recovered_at = time.time()
        wait_until_time(sc, recovered_at + 5, "a few seconds of load after the recovery")
        gen.stop()
        return Outage(window, unknown, ready, web, tolerant, before, containers(sc, web), gen.result(), recovered_at)
    finally:
        sc.release_node_port()


def _node_condition(sc: Scenario, node: str, status: str, after: float | None) -> Seen | None:
    return first_condition(sc.recorder.changes("Node", node), status, after=cast(float, after))


def _judge_node_lost(sc: Scenario, node: str, variant: str, outage: Outage, settings: Lifecycle) -> None:
    """The chain shared with NF-4 and NF-8 (:func:`e2e.measure.nodelost.node_lost`): last Lease
    renewal → Ready=Unknown after the grace (its reason and message) → unreachable:NoSchedule;
    then the pressure conditions with Unknown, and NoExecute only on an excluded node (or the
    #111385 race), the tolerant pod deleted at timeAdded + its tolerationSeconds (NF-3). The grace's
    value has its band from the cluster's settings (doc.nf2_from), named by them (doc.grace_key)."""
    injected_at = cast(float, outage.window.injected_at)
    documented = doc.nf2_from(settings)
    # the kubelet's stop returns within the second of its last renewal
    chain = node_lost("NF-2", doc.grace_key(settings.grace_s, settings.period_s), sc.recorder.changes("Node", node),
                      sc.recorder.changes("Lease", node), injected_at, renewed_by=injected_at + 1)
    grace = [v for v in chain.values if v.name == documented.name]
    for v in grace:
        sc.expect(v.case, v.name, v.value, around=v.at, expectation=documented,
                  details={**v.details, "settings": settings.source, **({"assumed": settings.assumed} if settings.assumed else {})})
    expect_all(sc.expect, [v for v in chain.values if v not in grace])
    node_obj = next(c.obj for c in sc.recorder.changes("Node", node) if c.received_at >= chain.unknown.received_at)
    pressure = " ".join(f"{t}={(condition(node_obj, t) or {}).get('status')}" for t in ("DiskPressure", "MemoryPressure", "PIDPressure"))
    sc.expect("NF-2", "pressure_conditions", pressure)
    noexecute = chain.noexecute
    sc.expect("NF-2", f"noexecute_taint_seen[{variant}]", noexecute is not None, details={"taint": noexecute and noexecute.obj})
    added = chain.noexecute_added
    if noexecute is None or added is None:
        return
    at = deletion_requested_at(sc.recorder.changes("Pod", outage.tolerant))
    sc.expect("NF-2", "tolerant_deleted_after_taint_s", None if at is None else at - added,
              details={"pod": outage.tolerant, "taint": noexecute.obj})


def _judge_pod_not_ready_then_ready(sc: Scenario, pod: str, outage: Outage) -> None:
    """Unknown → the pod Ready=False (ContainersReady kept) → its endpoint not ready → its
    NodeNotReady event; Ready again after the node."""
    ready_changes = condition_changes(sc.recorder.changes("Pod", pod), "Ready", with_reason=False)
    injected_at = cast(float, outage.window.injected_at)
    not_ready = next((s for s in ready_changes if s.obj.get("status") == "False" and s.received_at >= injected_at), None)
    sc.expect("NF-2", "pod_not_ready_after_unknown_s",
              None if not_ready is None else after_unknown_s(not_ready.obj.get("lastTransitionTime"), outage.unknown.obj),
              details={"pod": pod, "condition": not_ready and not_ready.obj})
    if not_ready is None:
        return
    sc.expect("NF-2", "pod_not_ready_reason", not_ready.obj.get("reason") or "", details={"pod": pod})
    obj = next(c.obj for c in sc.recorder.changes("Pod", pod) if c.received_at >= not_ready.received_at)
    sc.expect("NF-2", "containers_ready", (condition(obj, "ContainersReady") or {}).get("status"), details={"pod": pod})
    ep = endpoints.first(states(sc), pod, after=injected_at, ready=False)
    sc.expect("NF-2", "endpoint_not_ready_after_pod_not_ready_s", None if ep is None else round(ep.received_at - not_ready.received_at, 3),
              around=not_ready.received_at, details={"pod": pod})
    ready = outage.ready
    back = next((s for s in ready_changes if s.obj.get("status") == "True" and s.received_at >= ready.received_at - 1), None)
    sc.expect("NF-2", "pod_ready_after_node_ready_s",
              None if back is None else parse_time(back.obj.get("lastTransitionTime")) - parse_time(ready.obj.get("lastTransitionTime")),
              details={"pod": pod, "condition": back and back.obj})
    event = next((c.obj for c in sc.recorder.changes("Event") if c.obj.get("reason") == "NodeNotReady"
                  and (c.obj.get("involvedObject") or {}).get("name") == pod), None)
    sc.expect("NF-2", "pod_event", event and f"{event.get('type')} {event.get('reason')}: {event.get('message')}", details={"pod": pod})


def _judge_node_event(sc: Scenario, node: str, outage: Outage) -> None:
    """The node's NodeNotReady event (in the default namespace: the recorder watches the test's)."""
    node_events = sc.kube.core.list_namespaced_event("default", field_selector=f"involvedObject.name={node},reason=NodeNotReady").items
    since = cast(float, outage.window.injected_at) - 1
    node_event = next((e for e in node_events if e.last_timestamp is None or e.last_timestamp.timestamp() >= since), None)
    sc.expect("NF-2", "node_event", node_event and f"{node_event.type} {node_event.reason}: {node_event.message}", node=node)


def _judge_requests(sc: Scenario, outage: Outage) -> None:
    """The host's requests: none failed before Unknown; none succeeded from both endpoints not
    ready (+ kube-proxy's sync, + 1 s on the loaded host) until the kubelet was back (requests
    answered only after the undo — held by docker's proxy until a backend was back — do not
    count); none failed after the recovery."""
    result, injected_at, undone_at = outage.result, cast(float, outage.window.injected_at), cast(float, outage.window.undone_at)
    early = [r for r in result.requests if r.failed and r.sent_at < outage.unknown.received_at]
    sc.expect("NF-2", "failed_requests_before_unknown", len(early), details={"failures": [r.__dict__ for r in early[:10]]})
    not_ready_at = [ep.received_at for pod in outage.web for ep in [endpoints.first(states(sc), pod, after=injected_at, ready=False)]
                    if ep is not None]
    both_not_ready = max(not_ready_at, default=None)
    during = [] if both_not_ready is None else [r for r in result.between(both_not_ready + doc.PROXY_SYNC_S + doc.LOADED_S, undone_at)
                                                if r.done_at <= undone_at]
    sc.expect("NF-2", "ok_requests_while_not_ready", None if both_not_ready is None else sum(r.ok for r in during),
              details={"requests": len(during), "by_outcome": outcomes(during)})
    late = [r for r in result.requests if r.failed and r.sent_at >= outage.recovered_at + doc.PROXY_SYNC_S]
    sc.expect("NF-2", "failed_requests_after_recovery", len(late), details={"failures": [r.__dict__ for r in late[:10]]})


def _judge_workload_kept(sc: Scenario, variant: str, outage: Outage) -> None:
    """The containers ran on: no pod deleted (one node: full disruption), no restart, none
    replaced; the pod applied meanwhile stayed Pending."""
    before, after = outage.before, outage.after
    deleted = {c.name for c in sc.recorder.changes("Pod") if c.type == "DELETED" or c.obj["metadata"].get("deletionTimestamp")}
    sc.expect("NF-2", f"pods_deleted[{variant}]", len(deleted), details={"deleted": sorted(deleted)})
    sc.expect("NF-2", "container_restarts", sum(n for _, n in after.values()) - sum(n for _, n in before.values()),
              details={"before": before, "after": after})
    sc.expect("NF-2", "containers_replaced", {k: v[0] for k, v in before.items()} != {k: v[0] for k, v in after.items()},
              details={"before": before, "after": after})
    undone_at = cast(float, outage.window.undone_at)
    sc.expect("NF-2", "late_pod_phase", next(((c.obj.get("status") or {}).get("phase") for c in sc.recorder.changes("Pod", "late")
                                               if c.received_at <= undone_at), None),
              details={"late": (sc.pod("late") or {}).get("status")})


def _judge_recovery(sc: Scenario, node: str, outage: Outage, settings: Lifecycle) -> None:
    """The kubelet started → the node Ready → the unreachable taints removed (the NoExecute one
    within a monitor period of the cluster's settings: doc.nf2_recovery_from)."""
    ready, undone_at = outage.ready, cast(float, outage.window.undone_at)
    sc.expect("NF-2", "node_ready_after_kubelet_start_s", parse_time(ready.obj.get("lastTransitionTime")) - undone_at,
              around=ready.received_at, details={"ready": ready.obj})
    gone = taint_gone(sc.recorder.changes("Node", node), UNREACHABLE, after=undone_at)
    documented = doc.nf2_recovery_from(settings)
    sc.expect("NF-2", documented.name, None if gone is None else round(gone - ready.received_at, 3),
              expectation=documented, details={"node_ready": ready.obj, "settings": settings.source})


# -- NF-5 --------------------------------------------------------------------------------------
PROBE_PODS = ("no-probe", "readiness", "startup-readiness")
FAULTS = {"restart": kubelet_restarted, "sigkill": kubelet_killed}


@pytest.mark.serial
@pytest.mark.profile(doc.FAST)
@pytest.mark.record(*RECORD)
@pytest.mark.case("NF-5")
@pytest.mark.traffic
@pytest.mark.parametrize("how", [
    pytest.param("restart", marks=pytest.mark.node_faults("kubelet_restarted", case="NF-5", window_s=doc.NF5_WATCH_S,
                                                          node="first")),
    pytest.param("sigkill", marks=pytest.mark.node_faults("kubelet_killed", case="NF-5", window_s=doc.NF5_WATCH_S,
                                                       node="first"))])
def test_kubelet_restart(scenario: Scenario, how: str):
    """NF-5: kubelet restart / SIGKILL with pods Ready > 15 s: no container restarts, node stays
    Ready; 1.35+ no Ready/started flip and no failed request; 1.34 readiness-probed pods flip
    Ready→False→True (≤ 15 s) and the startup-probed one flips started."""
    sc = scenario
    node = node_name(sc)
    apply_web(sc)
    try:
        sc.apply("probes.yaml", readiness_period=doc.PROBE_PERIOD_S, failure_threshold=doc.PROBE_FAILURE_THRESHOLD)
        web = web_serving(sc)
        pods = [*PROBE_PODS, *web]
        wait_pods_ready(sc, pods, doc.NF5_STEADY_S)
        before = containers(sc, pods)
        gen = load(sc, duration_s=doc.NF5_WATCH_S + 2 * FAULT_SLACK_S)
        with FAULTS[how](sc, node) as window:
            wait_until_time(sc, window.injected_at + doc.NF5_WATCH_S, "the watch after the kubelet restart")
        gen.stop()
        result = gen.result()
        after = containers(sc, pods)
    finally:
        sc.release_node_port()
    attach_traffic(sc, result, [window], f"NF-5 kubelet {how}")
    since, until = window.injected_at - 1, time.time()
    sc.expect("NF-5", "container_restarts", sum(n for _, n in after.values()) - sum(n for _, n in before.values()),
              details={"before": before, "after": after})
    sc.expect("NF-5", "containers_replaced", {k: v[0] for k, v in before.items()} != {k: v[0] for k, v in after.items()},
              details={"before": before, "after": after})
    sc.expect("NF-5", "node_ready_flips", flips(condition_changes(sc.recorder.changes("Node", node)), since, until))
    for pod in pods:
        ready = condition_changes(sc.recorder.changes("Pod", pod), "Ready", with_reason=False)
        kind = doc.NF5_WEB[web.index(pod)] if pod in web else pod  # one name per pod: web-1, web-2 by sorted name
        n = flips(ready, since, until)
        sc.expect("NF-5", f"ready_flips[{kind}]", n, details={"pod": pod, "ready": [(s.received_at, s.obj) for s in ready]})
        for prev, cur in zip(ready, ready[1:], strict=False):
            if since <= cur.received_at <= until and prev.obj.get("status") == "True" and cur.obj.get("status") != "True":
                back = next((s for s in ready if s.received_at > cur.received_at and s.obj.get("status") == "True"), None)
                sc.expect("NF-5", f"not_ready_s[{kind}]", None if back is None else round(back.received_at - cur.received_at, 3),
                          details={"pod": pod})
    started = [(c.received_at, cs.get("started")) for c in sc.recorder.changes("Pod", "startup-readiness")
               for cs in (c.obj.get("status") or {}).get("containerStatuses") or []]
    started_flips = sum(1 for (_, a), (t, b) in zip(started, started[1:], strict=False) if since <= t <= until and a and not b)
    sc.expect("NF-5", "started_flips[startup-readiness]", started_flips, details={"started": started})
    sc.expect("NF-5", "failed_requests", len(result.failures), details={"by_outcome": result.by_outcome()})
