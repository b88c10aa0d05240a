"""PS — preStop, SIGTERM, grace period, traffic (CASES.md PS-1 … PS-6, PS-8), on a real cluster.

The workload is the suite's lifecycle-app (``${app_image}``, hack/images/lifecycle-app): an
HTTP server with probe endpoints whose reaction to SIGTERM is chosen per pod (drain, exit,
ignore, default) and which logs SIGTERM, probe hits, heartbeats and its exit with its own
microsecond stamps (``e2e.evidence.stamps``, read with ``e2e.evidence.applog``). Every documented value and band is in
``e2e/documented/termination.py``; the settings of the manifests come from there too.

Delete times are read from the test's clock just before the delete request; the kind node
shares that clock, so the app's timestamps compare with it directly.
"""

from __future__ import annotations

import datetime as dt
import json
import time

import allure
import pytest
from kubernetes.client.exceptions import ApiException
from kubernetes.dynamic.exceptions import DynamicApiError

from e2e.evidence import applog, endpoints, stamps
from e2e.pictures import traffic as traffic_picture
from e2e.evidence.applog import LogFollower
from e2e.documented import kubelet, termination as doc
from e2e.evidence.load import LoadGenerator, answering_pods, failure_windows
from e2e.podstatus import pod_columns
from e2e.recorder import Change
from e2e.scenario import Scenario
from e2e.waiting import WAIT_SLACK_S
from e2e.timeline import parse_time

# The Service's NodePort (traffic.yaml); kind-config.yaml publishes it on a free port of
# 127.0.0.1 per cluster (Scenario.node_port_url), the only address host traffic goes to.
NODE_PORT = 30080


# -- helpers ---------------------------------------------------------------------------------
@pytest.fixture
def follow(scenario: Scenario):
    """``follow(pod, container="app")``: a started :class:`LogFollower` once the container
    runs; every follower is stopped (and its log attached to the report) at the end."""
    started: list[LogFollower] = []

    def _follow(pod: str, container: str = "app") -> LogFollower:
        scenario.wait_for(f"{pod}/{container} running", lambda: _state(scenario, pod, container) == "running", WAIT_SLACK_S)
        f = LogFollower(scenario.kube.api_client, scenario.namespace, pod, container).start()
        started.append(f)
        return f

    yield _follow
    for f in started:
        f.stop(wait_s=0)
        allure.attach(f.text() + ("\n\n# follower errors:\n" + "\n".join(f.errors) if f.errors else ""),
                      name=f"app-log {f.pod}.{f.container}", attachment_type=allure.attachment_type.TEXT)


def _status(obj: dict | None, container: str) -> dict | None:
    for cs in ((obj or {}).get("status") or {}).get("containerStatuses") or []:
        if cs.get("name") == container:
            return cs
    return None


def _state(sc: Scenario, pod: str, container: str = "app") -> str | None:
    cs = _status(sc.pod(pod), container)
    return next(iter((cs or {}).get("state") or {}), None)


def _ready(sc: Scenario, pod: str) -> bool:
    conds = ((sc.pod(pod) or {}).get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conds)


def delete_pod(sc: Scenario, pod: str, grace_s: int | None = None) -> float:
    """Delete ``pod`` (with ``grace_s`` in the request when given); the epoch time read just
    before the request."""
    kwargs = {} if grace_s is None else {"grace_period_seconds": grace_s}
    when = time.time()
    sc.kube.core.delete_namespaced_pod(pod, sc.namespace, **kwargs)
    sc.mark(when, f"delete {pod}" + (f" (grace {grace_s} s)" if grace_s is not None else ""))
    return when


def deletion_seen(sc: Scenario, pod: str) -> Change | None:
    """The first recorded change of ``pod`` that carries a deletionTimestamp."""
    return next((ch for ch in sc.recorder.changes("Pod", pod) if (ch.obj.get("metadata") or {}).get("deletionTimestamp")), None)


def terminated(sc: Scenario, pod: str, container: str = "app") -> tuple[Change, dict] | None:
    """The first recorded change in which ``container`` is terminated, with its ``terminated`` state."""
    for ch in sc.recorder.changes("Pod", pod):
        term = ((_status(ch.obj, container) or {}).get("state") or {}).get("terminated")
        if term:
            return ch, term
    return None


def gone(sc: Scenario, pod: str) -> bool:
    found = sc.recorder.changes("Pod", pod)
    return bool(found) and found[-1].type == "DELETED"


def killing_event_at(sc: Scenario, pod: str) -> float | None:
    """Receive time of the kubelet's ``Killing`` event of ``pod`` (recorded by killContainer
    right before it runs the preStop hook)."""
    for ch in sc.recorder.changes("Event"):
        if ch.obj.get("reason") == "Killing" and (ch.obj.get("involvedObject") or {}).get("name") == pod:
            return ch.received_at
    return None


def settle() -> None:
    """Documented wait (``doc.SETTLE_S``): let the pod workers' syncs started by the pods' start
    and first probe results finish before a delete, so the kubelet reacts to the delete at once
    (see ``PLEG_RELIST_S`` in e2e/documented/termination.py)."""
    time.sleep(doc.SETTLE_S)


def states(sc: Scenario) -> list[endpoints.EndpointState]:
    return endpoints.endpoint_states(sc.recorder.changes("EndpointSlice"))


# -- PS-1 -----------------------------------------------------------------------------------------
@pytest.mark.case("PS-1")
def test_deletion_bookkeeping(scenario: Scenario):
    """PS-1: deletionGracePeriodSeconds = the request's grace, else the spec's, else 30 s;
    deletionTimestamp = delete time + that grace (s); STATUS Terminating."""
    sc = scenario
    sc.apply("deletion.yaml", spec_grace=doc.PS1_SPEC_GRACE_S)
    pods = ("grace-spec", "grace-request", "grace-default")
    sc.wait_for("the three pods ready", lambda: all(_ready(sc, p) for p in pods), WAIT_SLACK_S)
    sc.expect("PS-1", "termination_grace_period_default_s", sc.pod("grace-default")["spec"].get("terminationGracePeriodSeconds"))

    deleted = {
        "spec": ("grace-spec", delete_pod(sc, "grace-spec")),
        "request": ("grace-request", delete_pod(sc, "grace-request", grace_s=doc.PS1_REQUEST_GRACE_S)),
        "default": ("grace-default", delete_pod(sc, "grace-default")),
    }
    for variant, (pod, t_delete) in deleted.items():
        ch = sc.wait_for(f"{pod} with a deletionTimestamp", lambda: deletion_seen(sc, pod), WAIT_SLACK_S)
        meta = ch.obj["metadata"]
        sc.expect("PS-1", f"deletion_grace_period_s[{variant}]", meta.get("deletionGracePeriodSeconds"), around=ch.received_at)
        sc.expect("PS-1", f"deletion_timestamp_after_delete_s[{variant}]",
                  round(parse_time(meta["deletionTimestamp"]) - t_delete, 3), around=ch.received_at)
        sc.expect("PS-1", f"status_when_deleted[{variant}]", pod_columns(ch.obj).status, around=ch.received_at)


# -- PS-2 + PS-3 ------------------------------------------------------------------------------------
# After SIGTERM the app stays up (not ready) this long, so the endpoint's serving=false is seen
# while the pod still exists: ≥ one readiness period + serving_false_after_readiness_fails_s's band.
PS3_DRAIN_DELAY_S = 5


@pytest.mark.record("Pod", "Event", "EndpointSlice")
@pytest.mark.case("PS-2", "PS-3")
def test_prestop_delays_sigterm_and_endpoint_conditions(scenario: Scenario, follow):
    """PS-2: SIGTERM ≈ N s after the delete with preStop sleep N (the app's logged time).
    PS-3: the endpoint turns ready=false, terminating=true, serving=true at once, and serving
    follows readiness: false once the app fails its readiness probe after SIGTERM."""
    sc = scenario
    sc.apply("prestop-service.yaml", grace=doc.PRESTOP_GRACE_S, prestop_s=doc.PRESTOP_SLEEP_S,
             drain_delay=f"{PS3_DRAIN_DELAY_S}s", readiness_period=doc.READINESS_PERIOD_S,
             readiness_failure_threshold=doc.READINESS_FAILURE_THRESHOLD)
    sc.wait_for("endpoint of web ready", lambda: endpoints.first(states(sc), "web", ready=True), WAIT_SLACK_S)
    log = follow("web")
    settle()
    t_delete = delete_pod(sc, "web")

    update_band_high = sc.judge.wait_budget_s("PS-3", "endpoint_update_after_delete_s")
    ep = sc.wait_for("endpoint of web terminating",
                     lambda: endpoints.first(states(sc), "web", after=t_delete), update_band_high + WAIT_SLACK_S)
    sc.expect("PS-3", "endpoint_update_after_delete_s", round(ep.received_at - t_delete, 3), around=ep.received_at)
    sc.expect("PS-3", "endpoint_ready_after_delete", ep.ready, around=ep.received_at)
    sc.expect("PS-3", "endpoint_terminating_after_delete", ep.terminating, around=ep.received_at)
    sc.expect("PS-3", "endpoint_serving_after_delete", ep.serving, around=ep.received_at)

    sigterm_band_high = sc.judge.wait_budget_s("PS-2", "sigterm_after_delete_s")
    sig = sc.wait_for("SIGTERM in the app's log", lambda: stamps.first(log.events(), "SIGTERM"), sigterm_band_high + WAIT_SLACK_S)
    sc.expect("PS-2", "sigterm_after_delete_s", round(sig.at - t_delete, 3), around=sig.at)

    failing = sc.wait_for("a failing readiness probe after SIGTERM",
                          lambda: stamps.first(log.events(), "PROBE", after=sig.at, path="/readyz", status="503"),
                          doc.READINESS_PERIOD_S + WAIT_SLACK_S)
    serving_band_high = sc.judge.wait_budget_s("PS-3", "serving_false_after_readiness_fails_s")
    after = sc.wait_for("the endpoint's next change after readiness failed",
                        lambda: endpoints.first(states(sc), "web", after=failing.at), serving_band_high + WAIT_SLACK_S)
    sc.expect("PS-3", "endpoint_serving_after_readiness_fails", after.serving, around=after.received_at)
    sc.expect("PS-3", "endpoint_terminating_after_readiness_fails", after.terminating, around=after.received_at)
    sc.expect("PS-3", "serving_false_after_readiness_fails_s", round(after.received_at - failing.at, 3), around=after.received_at)


# -- PS-4 -------------------------------------------------------------------------------------------
# Load: new connections at a constant rate (≤ 50/s on the 2-core machine), each request held by
# the app for REQUEST_DELAY so that some are in flight when a pod stops.
LOAD_RATE_PER_S = 20
LOAD_TIMEOUT_S = 2.0
REQUEST_DELAY = "500ms"
# Load before the first delete (a clean baseline) and after the last pod is gone (late failures).
BASELINE_S = max(2.0, doc.SETTLE_S)  # also lets the pods settle (see settle())
TAIL_S = 2.0
# How long a test waits for NodePort NODE_PORT to be released by a Service of an earlier test.
NODE_PORT_WAIT_S = 60
# The negative control's app exits at once; its pod's netns-holder keeps the pod's IP this long
# after SIGTERM, longer than kube-proxy needs to drop the endpoint (EndpointSlice update ≤ 1.5 s,
# PS-3, + iptables minSyncPeriod 1 s), so that no request is routed to a released pod IP, which
# would leave the node by its default route. The graceful variant's pod outlives the endpoint by
# the preStop sleep anyway.
NETNS_HOLD_S = 5
VARIANTS = {
    "prestop-drain": {"sigterm": "drain", "lifecycle": json.dumps({"preStop": {"sleep": {"seconds": doc.PRESTOP_SLEEP_S}}}),
                      "netns_hold_s": 0},
    "no-prestop-exit": {"sigterm": "exit", "lifecycle": "{}", "netns_hold_s": NETNS_HOLD_S},
}


def _pod_events(sc: Scenario, pod: str, delete_at: float, log: LogFollower, with_prestop: bool) -> traffic_picture.PodEvents:
    ev = log.events()
    sig = stamps.first(ev, "SIGTERM")
    exit_ev = stamps.last(ev, "EXIT")
    term = terminated(sc, pod)
    exit_at, label = None, "exit"
    if exit_ev is not None:
        exit_at, label = exit_ev.at, f"exit {exit_ev.get('code')} (app log)"
    elif term is not None:
        exit_at, label = term[0].received_at, f"exit {term[1].get('exitCode')} (seen by the recorder)"
    killing = killing_event_at(sc, pod)
    prestop = (killing, sig.at) if with_prestop and killing is not None and sig is not None else None
    return traffic_picture.PodEvents(pod, delete_at, prestop, sig.at if sig else None, exit_at, label)


@pytest.mark.record("Pod", "Event", "EndpointSlice")
@pytest.mark.case("PS-4")
@pytest.mark.parametrize("trigger", ["delete", "rollout"])
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_no_lost_requests(scenario: Scenario, follow, variant: str, trigger: str):
    """PS-4: constant load on new connections through the NodePort while a pod is deleted
    (``delete``) or the Deployment is restarted (``rollout``): no failed request with preStop
    sleep + a draining app; failures without preStop and with an app that exits at once.
    The picture (traffic.png) puts every request on the time axis of the endpoint changes,
    preStop, SIGTERM and exits."""
    sc = scenario
    settings = VARIANTS[variant]
    values = dict(grace=doc.PRESTOP_GRACE_S, request_delay=REQUEST_DELAY, readiness_period=doc.READINESS_PERIOD_S,
                  readiness_failure_threshold=doc.READINESS_FAILURE_THRESHOLD, node_port=NODE_PORT, **settings)
    sc.wait_for(f"NodePort {NODE_PORT} free (a previous test's Service may still be going away)",
                lambda: _apply_node_port(sc, "traffic.yaml", values), NODE_PORT_WAIT_S, interval_s=1)
    try:
        _no_lost_requests(sc, follow, variant, trigger)
    finally:
        _release_node_port(sc)


def _apply_node_port(sc: Scenario, filename: str, values: dict) -> bool:
    """Apply a manifest whose first object is the NodePort Service; False while the port is
    still allocated to another Service (nothing was created then)."""
    try:
        sc.apply(filename, **values)
        return True
    except DynamicApiError as e:
        if e.status == 422 and "already allocated" in str(e.body):
            return False
        raise


def _release_node_port(sc: Scenario) -> None:
    """Delete the Service now (namespace deletion is asynchronous: the next test needs the port)."""
    try:
        sc.kube.core.delete_namespaced_service("web", sc.namespace)
    except ApiException as e:
        if e.status != 404:
            raise


def _no_lost_requests(sc: Scenario, follow, variant: str, trigger: str) -> None:
    old = sc.wait_for("two ready endpoints", lambda: sorted(endpoints.ready_pods(states(sc))) if len(endpoints.ready_pods(states(sc))) == 2 else None,
                      2 * WAIT_SLACK_S)
    seen: set[str] = set()
    url = sc.node_port_url(NODE_PORT)
    sc.wait_for(f"both pods answering on {url}", lambda: set(old) <= answering_pods(url, seen), WAIT_SLACK_S, interval_s=0.1)
    logs = {p: follow(p) for p in old}

    gen = LoadGenerator(url, LOAD_RATE_PER_S, duration_s=BASELINE_S + 2 * doc.PRESTOP_GRACE_S + 2 * WAIT_SLACK_S,
                        mode="new", timeout_s=LOAD_TIMEOUT_S).start()
    try:
        clean = sc.never_within(BASELINE_S, "a failed request before the delete",
                                lambda: any(r.failed for r in gen.snapshot()), interval_s=0.1)
        assert clean, f"requests failed before anything was deleted: {[r for r in gen.snapshot() if r.failed][:5]}"
        if trigger == "delete":
            deleted = {old[0]: delete_pod(sc, old[0])}
            sc.wait_for(f"{old[0]} gone and two ready endpoints again",
                        lambda: gone(sc, old[0]) and len(endpoints.ready_pods(states(sc))) == 2,
                        doc.PRESTOP_GRACE_S + WAIT_SLACK_S)
        else:
            when = time.time()
            stamp = dt.datetime.now(dt.timezone.utc).isoformat()
            sc.kube.apps.patch_namespaced_deployment("web", sc.namespace, {"spec": {"template": {"metadata": {
                "annotations": {"kubectl.kubernetes.io/restartedAt": stamp}}}}})
            sc.mark(when, "rollout restart")
            sc.wait_for("the old pods gone and two new ready endpoints",
                        lambda: all(gone(sc, p) for p in old) and len(endpoints.ready_pods(states(sc)) - set(old)) == 2,
                        2 * doc.PRESTOP_GRACE_S + 2 * WAIT_SLACK_S)
            deleted = {p: deletion_seen(sc, p).received_at for p in old}
        # documented wait: keep the load TAIL_S longer, so failures that come late are counted
        time.sleep(TAIL_S)
    finally:
        gen.stop()
        result = gen.result()
    for f in logs.values():
        f.stop()

    all_states = states(sc)
    t0 = result.started_at
    failures = result.failures
    windows = [(round(a - t0, 3), round(b - t0, 3), n) for a, b, n in failure_windows(failures)]
    details = {"total": result.total, "mode": result.mode, "rate_per_s": result.rate_per_s,
               "by_outcome": result.by_outcome(), "failures_by_class": result.failures_by_class(),
               "failure_windows_s_since_load_start": windows}
    # Which failures were cut in flight by a SIGTERM, and which were sent after one (routed to a
    # pod whose app had exited before kube-proxy dropped its endpoint)?
    sigterms = [e.at for f in logs.values() for e in f.events() if e.event == "SIGTERM"]
    cut = [r for r in failures if any(r.sent_at <= s <= r.done_at for s in sigterms)]
    details["failures_in_flight_at_sigterm"] = len(cut)
    details["failures_sent_after_sigterm"] = sum(1 for r in failures if r not in cut and any(r.sent_at > s for s in sigterms))
    ordered = sorted(deleted.items(), key=lambda kv: kv[1])
    # the picture first: it is most useful when something below fails
    pod_events = [_pod_events(sc, pod, t_delete, logs[pod], variant == "prestop-drain") for pod, t_delete in ordered]
    title = (f"PS-4 {variant}, {trigger}: HTTP load on new connections through NodePort {NODE_PORT} "
             f"({LOAD_RATE_PER_S}/s, each request held {REQUEST_DELAY})")
    sc.add_file("traffic.png", traffic_picture.render(result.requests, all_states, pod_events, t0, title))
    allure.attach(result.to_text(t0), name="requests.txt", attachment_type=allure.attachment_type.TEXT)

    per_pod = {}
    for i, (pod, t_delete) in enumerate(ordered, 1):
        sig = stamps.first(logs[pod].events(), "SIGTERM")
        assert sig is not None, f"{pod}: no SIGTERM in the app's log:\n{logs[pod].text()[-2000:]}"
        not_ready = endpoints.first(all_states, pod, after=t_delete - 1, ready=False)
        assert not_ready is not None, f"{pod}: its endpoint never turned not ready"
        per_pod[pod] = {"delete_s_since_load_start": round(t_delete - t0, 3),
                        "sigterm_after_delete_s": round(sig.at - t_delete, 3),
                        "endpoint_not_ready_after_delete_s": round(not_ready.received_at - t_delete, 3)}
        if trigger == "delete":
            # judged only against the test's own delete time: in a rollout the delete time is the
            # recorder's first sight of the deletionTimestamp, a watch event like the kubelet's own
            sc.expect("PS-4", f"sigterm_after_delete_s[{variant}][{i}]", round(sig.at - t_delete, 3), around=sig.at)
            sc.expect("PS-4", f"endpoint_not_ready_after_delete_s[{variant}][{i}]",
                      round(not_ready.received_at - t_delete, 3), around=not_ready.received_at)
    details["terminated_pods"] = per_pod
    sc.judge.expect("PS-4", f"failed_requests[{variant}]", len(failures), details=details,
                    context=result.summary() + "\n" + sc.timeline_excerpt(min(deleted.values())))


# -- PS-5 -------------------------------------------------------------------------------------------
@pytest.mark.case("PS-5")
def test_exit_codes(scenario: Scenario):
    """PS-5: killed by SIGTERM → 143 at once; PID 1 without a handler → 137 (Error) at
    deletion + grace; a TERM trap that exits 0 → Completed / 0 at once."""
    sc = scenario
    sc.apply("exit-codes.yaml", grace=doc.PS5_GRACE_S)
    pods = ("sigterm-kills", "pid1-no-handler", "trap-exit0")
    sc.wait_for("the three containers running", lambda: all(_state(sc, p) == "running" for p in pods), WAIT_SLACK_S)
    settle()
    deleted = {p: delete_pod(sc, p) for p in pods}
    _judge_exits(sc, deleted)


@pytest.mark.case("PS-5")
def test_go_binary_without_handler_as_pid1(scenario: Scenario):
    """PS-5 / [S0]: "a Go binary without a handler dies by SIGTERM at once, with code 143" —
    the lifecycle-app with no handler of its own (--sigterm=default) as PID 1: it dies at once,
    but with exit code 2 (documented with its own source: the seed's 143 needs a non-init process)."""
    sc = scenario
    sc.apply("go-pid1.yaml", grace=doc.PS5_GRACE_S)
    sc.wait_for("go-no-handler running", lambda: _state(sc, "go-no-handler") == "running", WAIT_SLACK_S)
    settle()
    t_delete = delete_pod(sc, "go-no-handler")
    band_high = sc.judge.wait_budget_s("PS-5", "finished_after_delete_s[go-no-handler-pid1]")
    ch, term = sc.wait_for("go-no-handler/app terminated", lambda: terminated(sc, "go-no-handler"), band_high + WAIT_SLACK_S)
    sc.expect("PS-5", "finished_after_delete_s[go-no-handler-pid1]", round(parse_time(term["finishedAt"]) - t_delete, 3),
              around=ch.received_at)
    code = term.get("exitCode")
    sc.expect("PS-5", "exit_code[go-no-handler-pid1]", code, around=ch.received_at)


def _judge_exits(sc: Scenario, deleted: dict[str, float]) -> None:
    """Judge exit code, reason and finishedAt − delete time of each pod."""
    for pod, t_delete in deleted.items():
        band_high = sc.judge.wait_budget_s("PS-5", f"finished_after_delete_s[{pod}]")
        ch, term = sc.wait_for(f"{pod}/app terminated", lambda: terminated(sc, pod), band_high + WAIT_SLACK_S)
        sc.expect("PS-5", f"exit_code[{pod}]", term.get("exitCode"), around=ch.received_at)
        sc.expect("PS-5", f"reason[{pod}]", term.get("reason"), around=ch.received_at)
        sc.expect("PS-5", f"finished_after_delete_s[{pod}]", round(parse_time(term["finishedAt"]) - t_delete, 3),
                  around=ch.received_at)


# -- PS-6 -------------------------------------------------------------------------------------------
@pytest.mark.case("PS-6")
def test_budget_includes_prestop(scenario: Scenario, follow):
    """PS-6: an app ignoring SIGTERM behind preStop sleep N is killed at ≈ G after the delete,
    not N + G; an exec hook still running when G ends is abandoned, the signal follows, and
    SIGKILL comes the one-time 2 s later (G + 2)."""
    sc = scenario
    sc.apply("budget.yaml", grace=doc.PS6_GRACE_S, prestop_s=doc.PS6_PRESTOP_SLEEP_S, overrun_grace=doc.PS6_OVERRUN_GRACE_S,
             hook_s=doc.PS6_OVERRUN_HOOK_S, heartbeat=f"{int(doc.HEARTBEAT_S * 1000)}ms")
    logs = {p: follow(p) for p in ("prestop-sleep", "hook-overrun")}
    sc.wait_for("both apps ticking", lambda: all(stamps.first(f.events(), "TICK") for f in logs.values()), WAIT_SLACK_S)
    settle()
    deleted = {p: delete_pod(sc, p) for p in logs}
    for pod, variant in (("prestop-sleep", "prestop-sleep"), ("hook-overrun", "hook-overrun")):
        band_high = sc.judge.wait_budget_s("PS-6", f"killed_after_delete_s[{variant}]")
        ch, term = sc.wait_for(f"{pod}/app terminated", lambda: terminated(sc, pod), band_high + WAIT_SLACK_S)
        logs[pod].stop()
        t_delete, ev = deleted[pod], logs[pod].events()
        sig, tick = stamps.first(ev, "SIGTERM"), stamps.last(ev, "TICK")
        assert sig is not None and tick is not None, f"{pod}: SIGTERM or TICK missing from the app log:\n{logs[pod].text()[-2000:]}"
        sc.expect("PS-6", f"sigterm_after_delete_s[{variant}]", round(sig.at - t_delete, 3), around=sig.at)
        sc.expect("PS-6", f"killed_after_delete_s[{variant}]", round(tick.at - t_delete, 3), around=tick.at)
        sc.expect("PS-6", f"exit_code[{variant}]", term.get("exitCode"), around=ch.received_at)
        if variant == "prestop-sleep":
            sc.expect("PS-6", "finished_after_delete_s[prestop-sleep]", round(parse_time(term["finishedAt"]) - t_delete, 3),
                      around=ch.received_at)
        else:
            hook = stamps.first(ev, "HOOK", phase="start")
            assert hook is not None, f"{pod}: the exec hook's start line is missing:\n{logs[pod].text()[-2000:]}"
            assert stamps.first(ev, "HOOK", phase="end") is None, f"{pod}: the {doc.PS6_OVERRUN_HOOK_S} s hook ended"
            sc.expect("PS-6", "prestop_started_after_delete_s[hook-overrun]", round(hook.at - t_delete, 3), around=hook.at)


# -- PS-8 -------------------------------------------------------------------------------------------
@pytest.mark.case("PS-8")
def test_probes_during_termination(scenario: Scenario, follow):
    """PS-8: after the delete the kubelet stops liveness and startup probes; readiness probes
    go on (counted from the app's own log of probe hits, each with its time)."""
    sc = scenario
    sc.apply("probes.yaml", grace=doc.PRESTOP_GRACE_S, prestop_s=doc.PRESTOP_SLEEP_S, period=doc.READINESS_PERIOD_S)
    live, starting = follow("probed", "live"), follow("probed", "starting")

    def probing() -> bool:
        ev_live, ev_start = live.events(), starting.events()
        return (len(applog.probe_hits(ev_live, "/healthz")) >= 2 and len(applog.probe_hits(ev_live, "/readyz")) >= 2
                and len(applog.probe_hits(ev_start, "/startupz")) >= 2)

    sc.wait_for("liveness, readiness and startup probes hitting the apps", probing, WAIT_SLACK_S)
    settle()
    t_delete = delete_pod(sc, "probed")
    sigterm_band_high = sc.judge.wait_budget_s("PS-2", "sigterm_after_delete_s")
    sig = sc.wait_for("SIGTERM in live's log", lambda: stamps.first(live.events(), "SIGTERM"), sigterm_band_high + WAIT_SLACK_S)
    sc.wait_for("SIGTERM in starting's log", lambda: stamps.first(starting.events(), "SIGTERM"), WAIT_SLACK_S)
    ev_live, ev_start = live.events(), starting.events()
    stop_at = t_delete + kubelet.KUBELET_HANDOFF_S

    liveness = applog.probe_hits(ev_live, "/healthz")
    startup = applog.probe_hits(ev_start, "/startupz")
    readiness = applog.probe_hits(ev_live, "/readyz")
    sc.judge.expect("PS-8", "liveness_probes_after_stop", sum(1 for t in liveness if t > stop_at),
                    details={"last_before_s": round(max((t for t in liveness if t <= stop_at), default=0) - t_delete, 3)})
    sc.judge.expect("PS-8", "startup_probes_after_stop", sum(1 for t in startup if t > stop_at),
                    details={"last_before_s": round(max((t for t in startup if t <= stop_at), default=0) - t_delete, 3)})
    during = [t for t in readiness if stop_at < t < sig.at]
    sc.expect("PS-8", "readiness_probes_during_termination", len(during), around=sig.at)
    interval = applog.max_interval([t for t in readiness if t_delete <= t < sig.at])
    sc.expect("PS-8", "readiness_probe_max_interval_during_termination_s", None if interval is None else round(interval, 3),
              around=sig.at)
