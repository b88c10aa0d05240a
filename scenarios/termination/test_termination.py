"""PS — preStop, SIGTERM, grace period, traffic (CASES.md PS-1 … PS-6, PS-8), on a real cluster.

The workload is the suite's lifecycle-app (``${app_image}``, hack/images/lifecycle-app): an
HTTP server with probe endpoints whose reaction to SIGTERM is chosen per pod (drain, exit,
ignore, default) and which stamps SIGTERM, probe hits, heartbeats and its exit
(``e2e.evidence.stamps``, followed with ``e2e.evidence.applog``). Every documented value and band
is in ``e2e/documented/termination.py``; the settings of the manifests come from there too.

Delete times are read from the test's clock just before the delete request; the kind node
shares that clock, so the app's timestamps compare with it directly.
"""

from __future__ import annotations

import datetime as dt
import json
import time

import pytest

from e2e.record import pods
from e2e.documented import kubelet, termination as doc
from e2e.evidence import applog, endpoints, stamps
from e2e.evidence.applog import LogFollower
from e2e.evidence.load import LoadGenerator, LoadResult, answering_pods, failure_windows
from e2e.measure.termination import sigterm_after_delete
from e2e.measure.values import expect_all
from e2e.pictures import traffic as traffic_picture
from e2e.record.podstatus import pod_columns
from e2e.run.scenario import NODE_PORT, Scenario
from e2e.record.timeline import parse_time
from e2e.base.waiting import WAIT_SLACK_S

# The Service's NodePort (traffic.yaml); kind-config.yaml publishes it on a free port of
# 127.0.0.1 per cluster (Scenario.node_port_url), the only address host traffic goes to.


@pytest.fixture
def follow(scenario: Scenario):
    """``follow(pod, container="app")``: a started :class:`LogFollower` once the container
    runs, its log in the report; every follower is stopped at the end."""
    started: list[LogFollower] = []

    def _follow(pod: str, container: str = "app") -> LogFollower:
        scenario.wait(pods.container_running(pod, container), WAIT_SLACK_S)
        f = LogFollower(scenario.kube.api_client, scenario.namespace, pod, container).start()
        scenario.add_file(f"app-log {pod}.{container}",
                          lambda: f.text() + ("\n\n# follower errors:\n" + "\n".join(f.errors) if f.errors else ""))
        started.append(f)
        return f

    yield _follow
    for f in started:
        f.stop(wait_s=0)


def settle() -> None:
    """Documented wait (``doc.SETTLE_S``): let the pod workers' syncs started by the pods' start
    and first probe results finish before a delete, so the kubelet reacts to the delete at once
    (see ``SETTLE_S`` in e2e/documented/termination.py)."""
    time.sleep(doc.SETTLE_S)


def states(sc: Scenario) -> list[endpoints.EndpointState]:
    return endpoints.endpoint_states(sc.recorder.changes("EndpointSlice"))


def app_stamp(sc: Scenario, log: LogFollower, event: str, last: bool = False) -> stamps.Stamp:
    """The app's first (``last``: last) ``event`` stamp (a precondition of what is judged from it)."""
    found = (stamps.last if last else stamps.first)(log.events(), event)
    return sc.require(found, f"{log.pod}: {event} in the app's log:\n{log.text()[-2000:]}")


def since(t: float, at: float) -> float:
    return round(at - t, 3)


# -- PS-1 -----------------------------------------------------------------------------------------
@pytest.mark.case("PS-1")
def test_deletion_bookkeeping(scenario: Scenario):
    """PS-1: deletionGracePeriodSeconds = the request's grace, else the spec's, else 30 s;
    deletionTimestamp = delete time + that grace (s); STATUS Terminating."""
    sc = scenario
    sc.apply("deletion.yaml", spec_grace=doc.PS1_SPEC_GRACE_S)
    for p in ("grace-spec", "grace-request", "grace-default"):
        sc.wait(pods.pod_ready(p), WAIT_SLACK_S)
    sc.expect("PS-1", "termination_grace_period_default_s", sc.pod("grace-default")["spec"].get("terminationGracePeriodSeconds"))

    deleted = {"spec": ("grace-spec", sc.delete_pod("grace-spec")),
               "request": ("grace-request", sc.delete_pod("grace-request", doc.PS1_REQUEST_GRACE_S)),
               "default": ("grace-default", sc.delete_pod("grace-default"))}
    for variant, (pod, t_delete) in deleted.items():
        ch = sc.wait_for(f"{pod} with a deletionTimestamp", lambda: pods.deletion_seen(sc.recorder.changes("Pod", pod)), WAIT_SLACK_S)  # noqa: B023 - called within this iteration
        meta = ch.obj["metadata"]
        sc.expect("PS-1", f"deletion_grace_period_s[{variant}]", meta.get("deletionGracePeriodSeconds"), around=ch.received_at)
        sc.expect("PS-1", f"deletion_timestamp_after_delete_s[{variant}]", since(t_delete, parse_time(meta["deletionTimestamp"])),
                  around=ch.received_at)
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
    sc.wait(endpoints.endpoint_ready("web"), WAIT_SLACK_S)
    log = follow("web")
    settle()
    t_delete = sc.delete_pod("web")

    ep = sc.wait_for("endpoint of web terminating", lambda: endpoints.first(states(sc), "web", after=t_delete),
                     sc.judge.wait_budget_s("PS-3", "endpoint_update_after_delete_s") + WAIT_SLACK_S)
    sc.expect("PS-3", "endpoint_update_after_delete_s", since(t_delete, ep.received_at), around=ep.received_at)
    for cond in ("ready", "terminating", "serving"):
        sc.expect("PS-3", f"endpoint_{cond}_after_delete", getattr(ep, cond), around=ep.received_at)

    sig = sc.wait_for("SIGTERM in the app's log", lambda: stamps.first(log.events(), "SIGTERM"),
                      sc.judge.wait_budget_s("PS-2", "sigterm_after_delete_s") + WAIT_SLACK_S)
    expect_all(sc.expect, [sigterm_after_delete(t_delete, log.events())])

    failing = sc.wait_for("a failing readiness probe after SIGTERM",
                          lambda: stamps.first(log.events(), "PROBE", after=sig.at, path="/readyz", status="503"),
                          doc.READINESS_PERIOD_S + WAIT_SLACK_S)
    after = sc.wait_for("the endpoint's next change after readiness failed", lambda: endpoints.first(states(sc), "web", after=failing.at),
                        sc.judge.wait_budget_s("PS-3", "serving_false_after_readiness_fails_s") + WAIT_SLACK_S)
    sc.expect("PS-3", "endpoint_serving_after_readiness_fails", after.serving, around=after.received_at)
    sc.expect("PS-3", "endpoint_terminating_after_readiness_fails", after.terminating, around=after.received_at)
    sc.expect("PS-3", "serving_false_after_readiness_fails_s", since(failing.at, after.received_at), around=after.received_at)


# -- PS-4 -------------------------------------------------------------------------------------------
# Load: new connections at a constant rate (≤ 50/s on the 2-core machine), each request held by
# the app for REQUEST_DELAY so that some are in flight when a pod stops.
LOAD_RATE_PER_S = 20
LOAD_TIMEOUT_S = 2.0
REQUEST_DELAY = "500ms"
# Load before the first delete (a clean baseline) and after the last pod is gone (late failures).
BASELINE_S = max(2.0, doc.SETTLE_S)  # also lets the pods settle (see settle())
TAIL_S = 2.0
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


@pytest.mark.heavy
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
    values = dict(grace=doc.PRESTOP_GRACE_S, request_delay=REQUEST_DELAY, readiness_period=doc.READINESS_PERIOD_S,
                  readiness_failure_threshold=doc.READINESS_FAILURE_THRESHOLD, node_port=NODE_PORT, **VARIANTS[variant])
    sc.apply_node_port("traffic.yaml", **values)
    try:
        _no_lost_requests(sc, follow, variant, trigger)
    finally:
        sc.release_node_port()


def _no_lost_requests(sc: Scenario, follow, variant: str, trigger: str) -> None:
    """Load, a baseline without failures, the delete or rollout, a tail; the picture; the judged values."""
    old = sorted(sc.wait(endpoints.ready_count(2), 2 * WAIT_SLACK_S))
    url, seen = sc.node_port_url(), set()
    sc.wait_for(f"both pods answering on {url}", lambda: set(old) <= answering_pods(url, seen), WAIT_SLACK_S, interval_s=0.1)
    logs = {p: follow(p) for p in old}
    gen = LoadGenerator(url, LOAD_RATE_PER_S, duration_s=BASELINE_S + 2 * doc.PRESTOP_GRACE_S + 2 * WAIT_SLACK_S,
                        mode="new", timeout_s=LOAD_TIMEOUT_S).start()
    try:
        sc.require(sc.never_within(BASELINE_S, "a failed request before the delete", lambda: any(r.failed for r in gen.snapshot()),
                                   interval_s=0.1), f"no request failed before anything was deleted: {[r for r in gen.snapshot() if r.failed][:5]}")
        deleted = _delete_old_pods(sc, trigger, old)
        time.sleep(TAIL_S)  # documented wait: keep the load TAIL_S longer, so failures that come late are counted
    finally:
        gen.stop()
    for f in logs.values():
        f.stop()
    result, ordered = gen.result(), sorted(deleted.items(), key=lambda kv: kv[1])
    # the picture first: it is most useful when something below fails
    title = (f"PS-4 {variant}, {trigger}: HTTP load on new connections through NodePort {NODE_PORT} "
             f"({LOAD_RATE_PER_S}/s, each request held {REQUEST_DELAY})")
    sc.add_file("traffic.png", traffic_picture.render(result.requests, states(sc), [
        _pod_events(sc, pod, t, logs[pod], variant == "prestop-drain") for pod, t in ordered], result.started_at, title))
    sc.add_file("requests.txt", result.to_text(result.started_at))

    per_pod = {}
    for i, (pod, t_delete) in enumerate(ordered, 1):
        sig = app_stamp(sc, logs[pod], "SIGTERM")
        not_ready = sc.require(endpoints.first(states(sc), pod, after=t_delete - 1, ready=False), f"{pod}: its endpoint turned not ready")
        per_pod[pod] = {"delete_s_since_load_start": since(result.started_at, t_delete), "sigterm_after_delete_s": since(t_delete, sig.at),
                        "endpoint_not_ready_after_delete_s": since(t_delete, not_ready.received_at)}
        if trigger == "delete":
            # judged only against the test's own delete time: in a rollout the delete time is the
            # recorder's first sight of the deletionTimestamp, a watch event like the kubelet's own
            sc.expect("PS-4", f"sigterm_after_delete_s[{variant}][{i}]", since(t_delete, sig.at), around=sig.at)
            sc.expect("PS-4", f"endpoint_not_ready_after_delete_s[{variant}][{i}]", since(t_delete, not_ready.received_at),
                      around=not_ready.received_at)
    sc.expect("PS-4", f"failed_requests[{variant}]", len(result.failures), context=result.summary() + "\n" + sc.timeline_excerpt(ordered[0][1]),
              details={**_failure_details(result, [s.at for f in logs.values() for s in f.events() if s.event == "SIGTERM"]),
                       "terminated_pods": per_pod})


def _delete_old_pods(sc: Scenario, trigger: str, old: list[str]) -> dict[str, float]:
    """Delete the first pod (``delete``) or restart the Deployment (``rollout``) and wait until the
    old pod(s) are gone and two endpoints are ready again; each deleted pod's delete time (epoch s)."""
    if trigger == "delete":
        deleted = {old[0]: sc.delete_pod(old[0])}
        sc.wait_for(f"{old[0]} gone and two ready endpoints again",
                    lambda: pods.pod_gone(old[0]).check(sc) and endpoints.ready_count(2).check(sc), doc.PRESTOP_GRACE_S + WAIT_SLACK_S)
        return deleted
    sc.patch("Deployment", "web", {"spec": {"template": {"metadata": {"annotations": {
        "kubectl.kubernetes.io/restartedAt": dt.datetime.now(dt.timezone.utc).isoformat()}}}}})
    sc.wait_for("the old pods gone and two new ready endpoints",
                lambda: all(pods.pod_gone(p).check(sc) for p in old) and len(endpoints.ready_pods(states(sc)) - set(old)) == 2,
                2 * doc.PRESTOP_GRACE_S + 2 * WAIT_SLACK_S)
    return {p: pods.deletion_seen(sc.recorder.changes("Pod", p)).received_at for p in old}


def _failure_details(result: LoadResult, sigterms: list[float]) -> dict:
    """The load's counts, and which failures were cut in flight by a SIGTERM or sent after one
    (routed to a pod whose app had exited before kube-proxy dropped its endpoint)."""
    t0, failures = result.started_at, result.failures
    cut = [r for r in failures if any(r.sent_at <= s <= r.done_at for s in sigterms)]
    return {"total": result.total, "mode": result.mode, "rate_per_s": result.rate_per_s,
            "by_outcome": result.by_outcome(), "failures_by_class": result.failures_by_class(),
            "failure_windows_s_since_load_start": [(round(a - t0, 3), round(b - t0, 3), n) for a, b, n in failure_windows(failures)],
            "failures_in_flight_at_sigterm": len(cut),
            "failures_sent_after_sigterm": sum(1 for r in failures if r not in cut and any(r.sent_at > s for s in sigterms))}


def _pod_events(sc: Scenario, pod: str, delete_at: float, log: LogFollower, with_prestop: bool) -> traffic_picture.PodEvents:
    """A pod's moments on the traffic picture: delete, preStop (Killing event → SIGTERM), SIGTERM, exit."""
    ev = log.events()
    sig, exit_ev = stamps.first(ev, "SIGTERM"), stamps.last(ev, "EXIT")
    term = pods.first_terminated(sc.recorder.changes("Pod", pod), "app")
    exit_at, label = None, "exit"
    if exit_ev is not None:
        exit_at, label = exit_ev.at, f"exit {exit_ev.get('code')} (app log)"
    elif term is not None:
        exit_at, label = term[0].received_at, f"exit {term[1].get('exitCode')} (seen by the recorder)"
    killing = next((ch.received_at for ch in sc.events("Killing", pod)), None)
    prestop = (killing, sig.at) if with_prestop and killing is not None and sig is not None else None
    return traffic_picture.PodEvents(pod, delete_at, prestop, sig.at if sig else None, exit_at, label)


# -- PS-5 -------------------------------------------------------------------------------------------
@pytest.mark.case("PS-5")
def test_exit_codes(scenario: Scenario):
    """PS-5: killed by SIGTERM → 143 at once; PID 1 without a handler → 137 (Error) at
    deletion + grace; a TERM trap that exits 0 → Completed / 0 at once."""
    sc = scenario
    sc.apply("exit-codes.yaml", grace=doc.PS5_GRACE_S)
    for p in ("sigterm-kills", "pid1-no-handler", "trap-exit0"):
        sc.wait(pods.container_running(p), WAIT_SLACK_S)
    settle()
    for pod, t_delete in {p: sc.delete_pod(p) for p in ("sigterm-kills", "pid1-no-handler", "trap-exit0")}.items():
        ch, term = sc.wait(pods.container_terminated(pod), sc.judge.wait_budget_s("PS-5", f"finished_after_delete_s[{pod}]") + WAIT_SLACK_S)
        sc.expect("PS-5", f"exit_code[{pod}]", term.get("exitCode"), around=ch.received_at)
        sc.expect("PS-5", f"reason[{pod}]", term.get("reason"), around=ch.received_at)
        sc.expect("PS-5", f"finished_after_delete_s[{pod}]", since(t_delete, parse_time(term["finishedAt"])), around=ch.received_at)


@pytest.mark.case("PS-5")
def test_go_binary_without_handler_as_pid1(scenario: Scenario):
    """PS-5 / [S0]: "a Go binary without a handler dies by SIGTERM at once, with code 143" —
    the lifecycle-app with no handler of its own (--sigterm=default) as PID 1: it dies at once,
    but with exit code 2 (documented with its own source: the seed's 143 needs a non-init process)."""
    sc = scenario
    sc.apply("go-pid1.yaml", grace=doc.PS5_GRACE_S)
    sc.wait(pods.container_running("go-no-handler"), WAIT_SLACK_S)
    settle()
    t_delete = sc.delete_pod("go-no-handler")
    ch, term = sc.wait(pods.container_terminated("go-no-handler"),
                       sc.judge.wait_budget_s("PS-5", "finished_after_delete_s[go-no-handler-pid1]") + WAIT_SLACK_S)
    sc.expect("PS-5", "finished_after_delete_s[go-no-handler-pid1]", since(t_delete, parse_time(term["finishedAt"])), around=ch.received_at)
    sc.expect("PS-5", "exit_code[go-no-handler-pid1]", term.get("exitCode"), around=ch.received_at)


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
    deleted = {p: sc.delete_pod(p) for p in logs}
    for pod, log in logs.items():  # each pod's name is its variant
        ch, term = sc.wait(pods.container_terminated(pod), sc.judge.wait_budget_s("PS-6", f"killed_after_delete_s[{pod}]") + WAIT_SLACK_S)
        log.stop()
        t_delete, sig, tick = deleted[pod], app_stamp(sc, log, "SIGTERM"), app_stamp(sc, log, "TICK", last=True)
        sc.expect("PS-6", f"sigterm_after_delete_s[{pod}]", since(t_delete, sig.at), around=sig.at)
        sc.expect("PS-6", f"killed_after_delete_s[{pod}]", since(t_delete, tick.at), around=tick.at)
        sc.expect("PS-6", f"exit_code[{pod}]", term.get("exitCode"), around=ch.received_at)
        if pod == "prestop-sleep":
            sc.expect("PS-6", "finished_after_delete_s[prestop-sleep]", since(t_delete, parse_time(term["finishedAt"])), around=ch.received_at)
        else:
            hook = sc.require(stamps.first(log.events(), "HOOK", phase="start"), f"{pod}: the exec hook's start line:\n{log.text()[-2000:]}")
            sc.require(not stamps.first(log.events(), "HOOK", phase="end"), f"the {doc.PS6_OVERRUN_HOOK_S} s hook outlives the grace period")
            sc.expect("PS-6", "prestop_started_after_delete_s[hook-overrun]", since(t_delete, hook.at), around=hook.at)


# -- PS-8 -------------------------------------------------------------------------------------------
@pytest.mark.case("PS-8")
def test_probes_during_termination(scenario: Scenario, follow):
    """PS-8: after the delete the kubelet stops liveness and startup probes; readiness probes
    go on (counted from the app's own log of probe hits, each with its time)."""
    sc = scenario
    sc.apply("probes.yaml", grace=doc.PRESTOP_GRACE_S, prestop_s=doc.PRESTOP_SLEEP_S, period=doc.READINESS_PERIOD_S)
    live, starting = follow("probed", "live"), follow("probed", "starting")
    sc.wait_for("liveness, readiness and startup probes hitting the apps",
                lambda: all(len(applog.probe_hits(f.events(), path)) >= 2
                            for f, path in ((live, "/healthz"), (live, "/readyz"), (starting, "/startupz"))), WAIT_SLACK_S)
    settle()
    t_delete = sc.delete_pod("probed")
    sig = sc.wait_for("SIGTERM in live's log", lambda: stamps.first(live.events(), "SIGTERM"),
                      sc.judge.wait_budget_s("PS-2", "sigterm_after_delete_s") + WAIT_SLACK_S)
    sc.wait_for("SIGTERM in starting's log", lambda: stamps.first(starting.events(), "SIGTERM"), WAIT_SLACK_S)
    stop_at = t_delete + kubelet.KUBELET_HANDOFF_S

    for probe, hits in (("liveness", applog.probe_hits(live.events(), "/healthz")), ("startup", applog.probe_hits(starting.events(), "/startupz"))):
        sc.expect("PS-8", f"{probe}_probes_after_stop", sum(1 for t in hits if t > stop_at),
                  details={"last_before_s": round(max((t for t in hits if t <= stop_at), default=0) - t_delete, 3)})
    readiness = applog.probe_hits(live.events(), "/readyz")
    sc.expect("PS-8", "readiness_probes_during_termination", len([t for t in readiness if stop_at < t < sig.at]), around=sig.at)
    interval = applog.max_interval([t for t in readiness if t_delete <= t < sig.at])
    sc.expect("PS-8", "readiness_probe_max_interval_during_termination_s", None if interval is None else round(interval, 3), around=sig.at)
