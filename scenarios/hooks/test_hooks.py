"""HK — lifecycle hooks beyond PS (CASES-workloads.md §4 HK-1 … HK-4), on a real cluster.

Busybox containers stamp their own start and SIGTERM (:mod:`e2e.evidence.stamps`); the
lifecycle-app logs SIGTERM, heartbeats and its hook subcommand's runs (followed with the PS
family's ``follow`` fixture). Documented values, bands and their reasons are in
:mod:`e2e.documented.hooks`; manifests are next to this file.
"""

from __future__ import annotations

import json
import time

import pytest
from kubernetes.client.exceptions import ApiException

from e2e.cluster.kube import ApiRefused, ExecError
from e2e.documented import hooks as doc
from e2e.evidence import stamps
from e2e.evidence.stamp_logs import stamps_from_logs
from e2e.measure.hooks import deletion_behind_a_running_hook
from e2e.measure.values import expect_all
from e2e.record import pods
from e2e.record.timeline import parse_time
from e2e.run.scenario import Scenario
from e2e.base.waiting import WAIT_SLACK_S
from scenarios.termination.test_termination import app_stamp, follow, settle, since  # noqa: F401 (follow: a fixture)

# a workload family (CASES-workloads.md): `make e2e-workloads`, not in the default `make e2e`
pytestmark = pytest.mark.workloads


def _event(sc: Scenario, reason: str, pod: str) -> dict:
    """The first recorded Event of ``reason`` about ``pod`` (its object), or {}."""
    return next((ch.obj for ch in sc.events(reason, pod)), {})


def _waiting(sc: Scenario, pod: str) -> list[dict]:
    """Every waiting state of ``pod``'s ``app`` the recorder saw, oldest first."""
    out = []
    for ch in sc.recorder.changes("Pod", pod):
        w = (pods.container_status(ch.obj, "app").get("state") or {}).get("waiting")
        if w and (not out or out[-1] != w):
            out.append(w)
    return out


# -- HK-2 -------------------------------------------------------------------------------------


def _first_end(sc: Scenario, pod: str) -> tuple[object, dict] | None:
    """The first recorded change showing ``pod``'s ``app`` terminated, in ``state`` or (a container
    the kubelet restarts goes straight to ``waiting``) in ``lastState``; with that terminated state."""
    for ch in sc.recorder.changes("Pod", pod):
        cs = pods.container_status(ch.obj, "app")
        for holder in (cs.get("state") or {}, cs.get("lastState") or {}):
            if holder.get("terminated"):
                return ch, holder["terminated"]
    return None


def _sigterm_after_start(term: dict) -> tuple[float, float, str]:
    """``(seconds, around, how)``: from the killed run's start to its SIGTERM, read from the
    container's own stamps in ``term``'s termination message (µs). When the SIGTERM came before
    the script's first line (an httpGet to a closed port fails within milliseconds; then sh ends
    at once with 143 and writes no stamp: poststart-fails.yaml), from ``term``'s ``startedAt`` to
    ``finishedAt`` instead (a hook runs only in a started container): whole seconds, so a delay
    under 1 s reads 0 or 1. ``around`` is the SIGTERM's time (epoch s)."""
    run = stamps.parse(term.get("message") or "")
    start, sig = stamps.first(run, "start"), stamps.first(run, "sigterm")
    if start and sig:
        return since(start.at, sig.at), sig.at, "the container's stamps (start, sigterm)"
    finished = parse_time(term["finishedAt"])
    return (since(parse_time(term["startedAt"]), finished), finished,
            "API startedAt → finishedAt (1 s resolution): no stamp, the run ended before the script's first line")


def _poststart_hook(kind: str) -> str:
    if kind == "exec":
        return json.dumps({"exec": {"command": ["false"]}})
    return json.dumps({"httpGet": {"path": doc.HK2_HTTP_PATH, "port": doc.HK2_HTTP_PORT}})


@pytest.mark.case("HK-2")
def test_poststart_failure_kills_the_container(scenario: Scenario):
    """HK-2: a postStart hook that fails (exec ``false``; httpGet to a closed port) gets a Warning
    FailedPostStartHook, the container is killed (Killing "FailedPostStartHook", SIGTERM at once)
    and then restarted under Always — waiting ``PostStartHookError`` with the handler's message in
    between — while under Never the pod ends Failed."""
    sc = scenario
    for pod, (policy, kind) in doc.HK2_VARIANTS.items():
        sc.apply("poststart-fails.yaml", name=pod, restart_policy=policy, grace_s=doc.HK2_GRACE_S, hook=_poststart_hook(kind))

    for pod in doc.HK2_VARIANTS:
        ch, term = sc.wait_for(f"{pod}'s first run terminated (state or lastState)", lambda: _first_end(sc, pod),  # noqa: B023
                               WAIT_SLACK_S + doc.HK2_GRACE_S)
        sc.expect("HK-2", f"exit_code[{pod}]", term.get("exitCode"), around=ch.received_at)
        seconds, around, how = _sigterm_after_start(term)
        sc.expect("HK-2", f"sigterm_after_start_s[{pod}]", seconds, around=around, details={"measured": how, "terminated": term})
        sc.expect("HK-2", f"failed_hook_event_message[{pod}]", _event(sc, "FailedPostStartHook", pod).get("message"),
                  details={"event": _event(sc, "FailedPostStartHook", pod)})
        sc.expect("HK-2", f"killing_event_message[{pod}]", _event(sc, "Killing", pod).get("message"))

    for pod, (policy, _) in doc.HK2_VARIANTS.items():
        if policy != "Always":
            continue
        sc.wait_for(f"{pod} restarted", lambda: pods.container_status(sc.pod(pod), "app").get("restartCount", 0) >= 1,  # noqa: B023
                    WAIT_SLACK_S)
        waiting = _waiting(sc, pod)
        hook = next((w for w in waiting if w.get("reason") == "PostStartHookError"), None)
        sc.expect("HK-2", f"waiting_reason_seen[{pod}]", hook is not None, details={"waiting": waiting})
        sc.expect("HK-2", f"waiting_message[{pod}]", (hook or {}).get("message"), pod=pod)
        sc.expect("HK-2", f"restart_count[{pod}]", pods.container_status(sc.pod(pod), "app").get("restartCount"))

    phase = sc.wait(pods.pod_phase("exec-never", "Failed"), WAIT_SLACK_S)
    sc.expect("HK-2", "phase[exec-never]", phase)
    sc.expect("HK-2", "restart_count[exec-never]", pods.container_status(sc.pod("exec-never"), "app").get("restartCount"))


# -- HK-3 -------------------------------------------------------------------------------------


def _prestop_hook(kind: str) -> str:
    if kind == "exec":
        return json.dumps({"exec": {"command": [doc.HK3_MISSING_BINARY]}})
    return json.dumps({"httpGet": {"path": "/prestop", "port": 1}})


@pytest.mark.case("HK-3")
def test_failing_prestop_does_not_stop_the_stop(scenario: Scenario, follow):  # noqa: F811 (the fixture)
    """HK-3: a preStop hook that fails (exec of a missing binary; httpGet to a closed port) only
    warns (FailedPreStopHook "PreStopHook failed"): SIGTERM follows the delete at once, and the
    app that ignores it is killed at the end of the whole grace period. The overrunning hook of
    the catalogue's (c) is PS-6's hook-overrun."""
    sc = scenario
    for pod, kind in doc.HK3_VARIANTS.items():
        sc.apply("prestop-fails.yaml", name=pod, grace_s=doc.HK3_GRACE_S, hook=_prestop_hook(kind),
                 heartbeat=f"{int(doc.HEARTBEAT_S * 1000)}ms")
    logs = {pod: follow(pod) for pod in doc.HK3_VARIANTS}
    sc.wait_for("both apps ticking", lambda: all(stamps.first(f.events(), "TICK") for f in logs.values()), WAIT_SLACK_S)
    settle()
    deleted = {pod: sc.delete_pod(pod) for pod in doc.HK3_VARIANTS}
    for pod, log in logs.items():
        ch, term = sc.wait(pods.container_terminated(pod), sc.judge.wait_budget_s("HK-3", f"killed_after_delete_s[{pod}]") + WAIT_SLACK_S)
        log.stop()
        t_delete, sig, tick = deleted[pod], app_stamp(sc, log, "SIGTERM"), app_stamp(sc, log, "TICK", last=True)
        event = _event(sc, "FailedPreStopHook", pod)
        sc.expect("HK-3", f"failed_hook_event_message[{pod}]", event.get("message"), details={"event": event})
        sc.expect("HK-3", f"failed_hook_event_type[{pod}]", event.get("type"))
        sc.expect("HK-3", f"sigterm_after_delete_s[{pod}]", since(t_delete, sig.at), around=sig.at)
        sc.expect("HK-3", f"killed_after_delete_s[{pod}]", since(t_delete, tick.at), around=tick.at)
        sc.expect("HK-3", f"exit_code[{pod}]", term.get("exitCode"), around=ch.received_at)




# -- HK-1 -------------------------------------------------------------------------------------


def _state(pod: dict | None, container: str) -> str:
    """``running``, ``terminated:<reason>`` or ``waiting:<reason>`` of ``container`` in ``pod``."""
    state = pods.container_status(pod, container).get("state") or {}
    kind = next(iter(state), "none")
    reason = (state.get(kind) or {}).get("reason")
    return f"{kind}:{reason}" if reason else kind


def _latest_before(sc: Scenario, pod: str, at: float) -> dict | None:
    """The newest recorded object of ``pod`` received before ``at``."""
    seen = [ch.obj for ch in sc.recorder.changes("Pod", pod) if ch.received_at < at]
    return seen[-1] if seen else None


def _current_log(sc: Scenario, pod: str, container: str, event: str) -> list[stamps.Stamp] | None:
    """The stamps of ``container``'s current log once it shows ``event`` (None before; the API
    refuses the log of a container it shows waiting)."""
    try:
        found = stamps.parse(sc.kube.logs(sc.namespace, pod, container))
    except ApiException:
        return None
    return found if stamps.first(found, event) else None


@pytest.mark.case("HK-1")
def test_poststart_blocks_the_next_container(scenario: Scenario):
    """HK-1: a's postStart hook starts beside its entrypoint (within 1 s, either order); b is
    started only after the hook ended; while the hook runs the API shows a (and b) waiting
    ContainerCreating and the pod not Ready; every restart of a runs the hook again."""
    sc = scenario
    pod = "order"
    sc.apply("poststart-order.yaml", name=pod, hook_s=doc.HK1_HOOK_S, run_s=doc.HK1_RUN_S)
    # a container's log is refused while the API shows it waiting: none until its status is written
    b = sc.wait_for("b's start stamp", lambda: stamps.first(stamps_from_logs(sc, pod, ["b"]), "start"), WAIT_SLACK_S + doc.HK1_HOOK_S)
    a_log = sc.wait_for("a's hook-end stamp", lambda: stamps.first(stamps_from_logs(sc, pod, ["a"]), "hook-end") and stamps_from_logs(sc, pod, ["a"]),
                        WAIT_SLACK_S)
    a_start, hook_start, hook_end = (sc.require(stamps.first(a_log, e), f"a's {e} stamp in its log: {a_log}")
                                     for e in ("start", "hook-start", "hook-end"))
    for s, label in ((a_start, "a start"), (hook_start, "hook start"), (hook_end, "hook end"), (b, "b start")):
        sc.mark(s.at, label)
    sc.expect("HK-1", "hook_start_after_entrypoint_s", since(a_start.at, hook_start.at), around=hook_start.at)
    sc.expect("HK-1", "b_start_after_hook_end_s", since(hook_end.at, b.at), around=b.at)
    during = _latest_before(sc, pod, hook_end.at)
    sc.expect("HK-1", "a_state_during_hook", _state(during, "a"), around=hook_end.at, details={"pod_status": (during or {}).get("status")})
    sc.expect("HK-1", "b_state_during_hook", _state(during, "b"), around=hook_end.at)
    sc.expect("HK-1", "pod_ready_during_hook", (pods.condition(during, "Ready") or {}).get("status"), around=hook_end.at)

    # a exits 1 after HK1_RUN_S and starts again (Always): its second hook run
    sc.wait_for("a restarted", lambda: pods.container_status(sc.pod(pod), "a").get("restartCount", 0) >= 1,
                WAIT_SLACK_S + doc.HK1_RUN_S)
    current = sc.wait_for("the hook's run in a's second start", lambda: _current_log(sc, pod, "a", "hook-start"), WAIT_SLACK_S)
    status = pods.container_status(sc.pod(pod), "a")
    first_run = stamps.parse(((status.get("lastState") or {}).get("terminated") or {}).get("message") or "")
    runs = [first_run, current]
    starts = [len([s for s in r if s.event == "start"]) for r in runs]
    hooks = [len([s for s in r if s.event == "hook-start"]) for r in runs]
    sc.expect("HK-1", "hook_ran_on_every_start", starts == hooks == [1, 1],
              details={"starts_per_run": starts, "hook_starts_per_run": hooks, "restartCount": status.get("restartCount")})
    sc.expect("HK-1", "b_restarted_with_a", pods.container_status(sc.pod(pod), "b").get("restartCount", 0) > 0)


# -- HK-4 -------------------------------------------------------------------------------------


@pytest.mark.case("HK-4")
def test_running_poststart_blocks_deletion(scenario: Scenario):
    """HK-4 (known bug kubernetes#116032): a pod deleted while its postStart hook runs stays
    Terminating past its grace period, its container never gets SIGTERM and the API shows it
    waiting ContainerCreating — until the hook's process is killed (pkill through exec), then
    SIGTERM comes and the pod goes at once."""
    sc = scenario
    pod = "hook-hangs"
    sc.apply("poststart-hangs.yaml", name=pod, grace_s=doc.HK4_GRACE_S, hook_sleep_s=doc.HK4_HOOK_SLEEP_S)
    started = sc.wait_for("the container's Started event (its hook runs from then on)", lambda: sc.events("Started", pod), WAIT_SLACK_S)
    time.sleep(max(0.0, started[0].received_at + doc.HK4_DELETE_AFTER_S - time.time()))  # documented: delete while the hook runs
    sc.expect("HK-4", "container_state_during_hook", _state(sc.pod(pod), "app"), details={"status": (sc.pod(pod) or {}).get("status")})
    t_delete = sc.delete_pod(pod)
    gone = not sc.never_within(doc.HK4_WINDOW_S, f"{pod} gone", lambda: pods.pod_gone(pod).check(sc))
    state_at_window_end = _state(sc.pod(pod), "app")
    t_kill = None
    if not gone:
        t_kill = time.time()
        # busybox has no pkill: kill the hook's `sleep` by its arguments, through exec (which reaches
        # a container the API shows waiting: kubernetes#116032), else from the node
        kill = f"kill $(ps -o pid,args | awk '$2 == \"sleep\" && $3 == \"{doc.HK4_HOOK_SLEEP_S}\" {{print $1}}')"
        try:
            res = sc.exec(pod, "app", "sh", "-c", kill)
            sc.note("HK-4 hook killed", f"through exec in the container (exit {res.exit_code} {res.stderr.strip()})")
            if res.exit_code != 0:
                raise ExecError(f"{kill}: exit {res.exit_code}: {res.stderr}")
        except (ApiRefused, ExecError) as e:
            sc.note("HK-4 hook killed", f"exec in the container failed ({e}); from the node")
            sc.node_exec("pkill", "-f", f"sleep {doc.HK4_HOOK_SLEEP_S}")
        sc.mark(t_kill, "hook's sleep killed")
        sc.wait(pods.pod_gone(pod), sc.judge.wait_budget_s("HK-4", "gone_after_hook_killed_s") + WAIT_SLACK_S)
    # the removal as the watch recorded it (the poll above may see the pod gone a moment before)
    deleted = sc.wait_for(f"{pod}'s DELETED recorded", lambda: next((ch for ch in sc.recorder.changes("Pod", pod) if ch.type == "DELETED"), None),
                          WAIT_SLACK_S)
    last = sc.recorder.changes("Pod", pod)[-1]
    term = (pods.container_status(last.obj, "app").get("state") or {}).get("terminated") or {}
    present, *values = deletion_behind_a_running_hook(t_delete, deleted.received_at, t_kill, term, doc.HK4_WINDOW_S)
    expect_all(sc.expect, [present], state_at_window_end=state_at_window_end, gone_within_window_polled=gone)
    expect_all(sc.expect, values, killing_events=[ch.obj.get("message") for ch in sc.events("Killing", pod)],
               failed_hook_events=[ch.obj.get("message") for ch in sc.events("FailedPostStartHook", pod)])
