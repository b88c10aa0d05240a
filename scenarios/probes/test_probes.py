"""PB — probes beyond PR-1/PR-2 (CASES-workloads.md §4 PB-1 … PB-4), on a real cluster.

PB-1 is a server dry-run (no pod runs). Documented values, bands and their reasons are in
:mod:`e2e.documented.probes`; manifests are next to this file.
"""

from __future__ import annotations

import json
import time

import pytest

from e2e.cluster.kube import ApiRefused
from e2e.cluster.stamp_sh import STAMP_SH
from e2e.documented import probes as doc
from e2e.evidence import stamps
from e2e.measure.probes import liveness_kill
from e2e.measure.values import expect_all
from e2e.record import pods
from e2e.record.timeline import parse_time
from e2e.run.scenario import Scenario
from e2e.base.waiting import WAIT_SLACK_S
from scenarios.termination.test_termination import since

# a workload family (CASES-workloads.md): `make e2e-workloads`, not in the default `make e2e`
pytestmark = pytest.mark.workloads

BARE = {"exec": {"command": ["true"]}}


def _dry_run(sc: Scenario, name: str, **overrides: dict) -> tuple[dict | None, ApiRefused | None]:
    """Server dry-run of probes.yaml with three bare exec probes, each updated by ``overrides``
    (``liveness={"successThreshold": 2}``); (the stored pod, None) or (None, the refusal)."""
    values = {p: json.dumps({**BARE, **overrides.get(p, {})}) for p in doc.PROBES}
    try:
        return sc.apply("probes.yaml", dry_run=True, name=name, **values)[0], None
    except ApiRefused as e:
        return None, e


def _probe(pod: dict, probe: str) -> dict:
    return pod["spec"]["containers"][0].get(f"{probe}Probe") or {}


@pytest.mark.smoke
@pytest.mark.case("PB-1")
def test_probe_defaults_and_validation(scenario: Scenario):
    """PB-1: bare exec probes are stored with periodSeconds 10, timeoutSeconds 1,
    successThreshold 1, failureThreshold 3 and no initialDelaySeconds; successThreshold 2 is
    refused on liveness and startup ("must be 1"), accepted on readiness; timeoutSeconds 0 is
    defaulted to 1. Server dry-run."""
    sc = scenario
    pod, err = _dry_run(sc, "bare")
    pod = sc.require(pod, f"the bare probes accepted: {err}")
    for probe in doc.PROBES:
        stored = _probe(pod, probe)
        for field in doc.PB1_DEFAULTS:
            sc.expect("PB-1", f"default_{field}[{probe}]", stored.get(field), details={"probe": stored})
        sc.expect("PB-1", f"initial_delay_stored[{probe}]", str(stored["initialDelaySeconds"]) if "initialDelaySeconds" in stored else "absent")

    for probe in doc.PROBES:
        name = f"success-two-{probe}"
        stored, err = _dry_run(sc, name, **{probe: {"successThreshold": doc.PB1_SUCCESS_TWO}})
        sc.expect("PB-1", f"success_threshold_2_accepted[{probe}]", err is None,
                  details={"error": err.body if err else None, "stored": _probe(stored, probe) if stored else None})
        if probe in doc.PB1_SUCCESS_ONE and err is not None:
            sc.expect("PB-1", "rejected_status", err.status, details={"body": err.body})
            sc.expect("PB-1", "rejected_reason", err.body.get("reason"))
            sc.expect("PB-1", f"rejected_message[{probe}]", err.message, pod=name)

    stored, err = _dry_run(sc, "timeout-zero", **{p: {"timeoutSeconds": 0} for p in doc.PROBES})
    stored = sc.require(stored, f"timeoutSeconds 0 accepted (defaulted, §5 point 7): {err}")
    for probe in doc.PROBES:
        sc.expect("PB-1", f"timeout_zero_stored[{probe}]", _probe(stored, probe).get("timeoutSeconds"), details={"probe": _probe(stored, probe)})


# -- PB-2 -------------------------------------------------------------------------------------


def _file(sc: Scenario, pod: str, action: str) -> stamps.Stamp:
    """Remove (``rm``) or recreate (``touch``) /tmp/ok in ``pod`` through exec; the container-side
    stamp of the moment (also in the container log)."""
    cmd = "rm -f /tmp/ok" if action == "rm" else "touch /tmp/ok"
    res = sc.exec(pod, "app", "sh", "-c", f"{STAMP_SH}; {cmd}; stamp file-{action} > /proc/1/fd/1; stamp file-{action}")
    at = sc.require(stamps.first(stamps.parse(res.stdout), f"file-{action}"), f"{pod}: the exec's stamp: {res}")
    sc.mark(at.at, f"{pod}: /tmp/ok {action}")
    return at


def _ready_changes(sc: Scenario, pod: str) -> list[tuple[float, str]]:
    """(receive time, status) of each change of ``pod``'s Ready condition, oldest first."""
    out: list[tuple[float, str]] = []
    for ch in sc.recorder.changes("Pod", pod):
        status = (pods.condition(ch.obj, "Ready") or {}).get("status")
        if status and (not out or out[-1][1] != status):
            out.append((ch.received_at, status))
    return out


def _killed_run(sc: Scenario, pod: str, timeout_s: float) -> tuple[dict, list[stamps.Stamp]]:
    """``pod``'s first killed run once restarted: its ``lastState.terminated`` and the stamps of its
    termination message."""
    sc.wait_for(f"{pod} restarted", lambda: pods.container_status(sc.pod(pod), "app").get("restartCount", 0) >= 1, timeout_s)
    term = (pods.container_status(sc.pod(pod), "app").get("lastState") or {}).get("terminated") or {}
    return term, stamps.parse(term.get("message") or "")


@pytest.mark.case("PB-2")
def test_probe_arithmetic_kill_and_probe_grace(scenario: Scenario):
    """PB-2: after /tmp/ok is removed, liveness P 5 × F 3 kills at [(F−1)·P, F·P] + the kill
    (message "…failed liveness probe, will be restarted", the preStop runs first, exit 0); P 2,
    F 1 kills within one period; readiness P 5, F 2 drops Ready after [5, 10] s and, once the file
    is back, S 2 brings it back after [5, 10] s, with no restart; a failing startupProbe with its
    own grace 1 s kills with the 2 s floor, not the pod's 300 s (R16)."""
    sc = scenario
    sc.apply("arithmetic.yaml", slow_period_s=doc.PB2_SLOW_PERIOD_S, slow_failure_threshold=doc.PB2_SLOW_FAILURE_THRESHOLD,
             fast_period_s=doc.PB2_FAST_PERIOD_S, ready_period_s=doc.PB2_READY_PERIOD_S,
             ready_failure_threshold=doc.PB2_READY_FAILURE_THRESHOLD, ready_success_threshold=doc.PB2_READY_SUCCESS_THRESHOLD)
    sc.apply("startup-grace.yaml", name="startup", period_s=doc.PB2_STARTUP_PERIOD_S)
    for pod in ("live-slow", "live-fast"):
        sc.wait(pods.container_running(pod), WAIT_SLACK_S)
    sc.wait(pods.pod_ready("ready"), WAIT_SLACK_S + doc.PB2_READY_SUCCESS_THRESHOLD * doc.PB2_READY_PERIOD_S)
    removed = {pod: _file(sc, pod, "rm") for pod in ("live-slow", "live-fast", "ready")}

    not_ready = sc.wait_for("ready not Ready after the removal",
                            lambda: next((t for t, s in _ready_changes(sc, "ready") if t > removed["ready"].at and s == "False"), None),
                            sc.judge.wait_budget_s("PB-2", "not_ready_after_removal_s") + WAIT_SLACK_S)
    sc.expect("PB-2", "not_ready_after_removal_s", since(removed["ready"].at, not_ready), around=not_ready)
    restored = _file(sc, "ready", "touch")
    ready = sc.wait_for("ready Ready again after the file came back",
                        lambda: next((t for t, s in _ready_changes(sc, "ready") if t > restored.at and s == "True"), None),
                        sc.judge.wait_budget_s("PB-2", "ready_after_restore_s") + WAIT_SLACK_S)
    sc.expect("PB-2", "ready_after_restore_s", since(restored.at, ready), around=ready, details={"ready_changes": _ready_changes(sc, "ready")})
    sc.expect("PB-2", "restart_count[ready]", pods.container_status(sc.pod("ready"), "app").get("restartCount"))

    for pod, key in (("live-slow", "slow"), ("live-fast", "fast")):
        term, run = _killed_run(sc, pod, sc.judge.wait_budget_s("PB-2", f"sigterm_after_removal_s[{key}]") + WAIT_SLACK_S)
        sig = sc.require(stamps.first(run, "sigterm"), f"{pod}: the killed run's sigterm stamp: {term}")
        sc.mark(sig.at, f"{pod}: SIGTERM")
        kill = liveness_kill(key, removed[pod].at, run)
        expect_all(sc.expect, kill[:1])
        sc.expect("PB-2", f"killing_event_message[{key}]", next((ch.obj.get("message") for ch in sc.events("Killing", pod)), None))
        expect_all(sc.expect, kill[1:])
        if key == "slow":
            sc.expect("PB-2", "last_state_exit_code[slow]", term.get("exitCode"))
            sc.expect("PB-2", "last_state_reason[slow]", term.get("reason"))

    pod = "startup"
    sc.expect("PB-2", "probe_grace_stored[startup]", ((sc.pod(pod) or {}).get("spec", {}).get("containers", [{}])[0]
                                                      .get("startupProbe") or {}).get("terminationGracePeriodSeconds"))
    _killed_run(sc, pod, WAIT_SLACK_S + 2 * doc.PB2_STARTUP_PERIOD_S)
    # the first run and the first Killing event (a repeated Event keeps its firstTimestamp, and
    # the restarts go on meanwhile: lastState may already be a later run's)
    runs = pods.terminated_runs(sc.recorder.changes("Pod", pod), "app")
    term = sc.require(runs[0][1] if runs else None, f"{pod}: its first killed run in the recording")
    killing = sc.require(next((ch.obj for ch in sc.events("Killing", pod)), None), f"{pod}: a Killing event")
    sc.expect("PB-2", "killing_event_message[startup]", killing.get("message"))
    sc.expect("PB-2", "startup_kill_to_finish_s",
              round(parse_time(term["finishedAt"]) - parse_time(killing.get("firstTimestamp") or killing["lastTimestamp"]), 3),
              details={"killing": killing, "terminated": term})
    sc.expect("PB-2", "startup_exit_code", term.get("exitCode"))


# -- PB-3 -------------------------------------------------------------------------------------


def _container_events(sc: Scenario, reason: str, pod: str) -> dict[str, list[str]]:
    """The messages of ``pod``'s recorded Events of ``reason``, by container (the Event's fieldPath
    ``spec.containers{name}``), one per distinct message."""
    out: dict[str, list[str]] = {}
    for ch in sc.events(reason, pod):
        path = (ch.obj.get("involvedObject") or {}).get("fieldPath") or ""
        name = path.removeprefix("spec.containers{").removesuffix("}")
        msgs = out.setdefault(name, [])
        if ch.obj.get("message") not in msgs:
            msgs.append(ch.obj.get("message"))
    return out


@pytest.mark.case("PB-3")
@pytest.mark.record("Pod", "Event")
def test_http_and_tcp_handler_semantics(scenario: Scenario):
    """PB-3: readiness probes (P 2 s, F 1) on 200, a same-host 302 → 200, 399, 400, 500, 503, a 302
    to another host, an open and a closed TCP port: 2xx and a followed redirect succeed, 4xx/5xx fail
    with "HTTP probe failed with statuscode: N", a 3xx that is not followed succeeds with a
    ProbeWarning; a closed port fails with the dial error; the kubelet sends User-Agent
    kube-probe/<its minor> and Accept */*."""
    sc = scenario
    pod = "handlers"
    sc.apply("handlers.yaml", name=pod, period_s=doc.PB3_PERIOD_S)
    sc.wait_for("every succeeding variant ready",
                lambda: all(pods.container_status(sc.pod(pod), c).get("ready") for c in doc.PB3_SUCCEEDS),
                WAIT_SLACK_S + 2 * doc.PB3_PERIOD_S)
    time.sleep(2 * doc.PB3_PERIOD_S + 1)  # documented wait: two more periods, every failing variant has failed (F 1)
    status = sc.pod(pod)
    unhealthy, warnings = _container_events(sc, "Unhealthy", pod), _container_events(sc, "ProbeWarning", pod)
    for c in (*doc.PB3_SUCCEEDS, *doc.PB3_FAILS, "tcp-closed"):
        sc.expect("PB-3", f"ready[{c}]", pods.container_status(status, c).get("ready"),
                  details={"unhealthy": unhealthy.get(c), "warnings": warnings.get(c)})
    for c in (*doc.PB3_FAILS, "tcp-closed"):
        sc.expect("PB-3", f"unhealthy_message[{c}]", (unhealthy.get(c) or [None])[0], details={"all": unhealthy.get(c)})
    for c in doc.PB3_WARNS:
        sc.expect("PB-3", f"warning_message[{c}]", (warnings.get(c) or [None])[0], details={"all": warnings.get(c)})
    sc.expect("PB-3", "warning_events[redirect-same]", len(warnings.get("redirect-same") or []))
    same = [s for s in stamps.parse(sc.kube.logs(sc.namespace, pod, "redirect-same")) if s.event == "PROBE"]
    sc.expect("PB-3", "redirect_followed[redirect-same]", any(s.get("path") == "/code/200" for s in same),
              details={"hits": [dict(s.fields) for s in same[:4]]})
    hits = [s for s in stamps.parse(sc.kube.logs(sc.namespace, pod, "code-200")) if s.event == "PROBE"]
    first = sc.require(hits[0] if hits else None, "code-200: a probe hit in its log")
    sc.expect("PB-3", "user_agent", first.get("agent"), details={"agents": sorted({s.get("agent") for s in hits})})
    sc.expect("PB-3", "accept_header", first.get("accept"))


@pytest.mark.case("PB-3")
@pytest.mark.record("Pod", "Event")
def test_grpc_probe(scenario: Scenario):
    """PB-3 (e): a grpc readiness probe (P 2 s, F 1) on the lifecycle-app's standard gRPC health
    service: Ready while it answers SERVING; after it switches to NOT_SERVING, not Ready within one
    period, with the Unhealthy message naming NOT_SERVING; the kubelet's gRPC User-Agent."""
    sc = scenario
    pod = "grpc"
    sc.apply("grpc.yaml", name=pod, period_s=doc.PB3_PERIOD_S, not_serving_after_s=doc.PB3_GRPC_NOT_SERVING_AFTER_S)

    def log() -> list[stamps.Stamp]:
        return stamps.parse(sc.kube.logs(sc.namespace, pod, "app"))

    sc.wait(pods.container_running(pod, "app"), WAIT_SLACK_S)
    switched = sc.wait_for("grpc: the app's NOT_SERVING stamp", lambda: stamps.first(log(), "GRPC", status="NOT_SERVING"),
                           doc.PB3_GRPC_NOT_SERVING_AFTER_S + WAIT_SLACK_S, interval_s=1)
    sc.mark(switched.at, "health: NOT_SERVING")
    ready = _ever_ready(sc, pod, "app")
    sc.expect("PB-3", "ready_while_serving[grpc]", ready is not None and ready < switched.at,
              details={"ready_at": ready, "not_serving_at": switched.at})
    not_ready = sc.wait_for("grpc: not ready after NOT_SERVING",
                            lambda: next((ch.received_at for ch in sc.recorder.changes("Pod", pod)
                                          if ch.received_at > switched.at and not pods.container_status(ch.obj, "app").get("ready")), None),
                            sc.judge.wait_budget_s("PB-3", "not_ready_after_not_serving_s[grpc]") + WAIT_SLACK_S,
                            case="PB-3", measurement="not_ready_after_not_serving_s[grpc]")
    sc.expect("PB-3", "not_ready_after_not_serving_s[grpc]", since(switched.at, not_ready), around=not_ready)
    unhealthy = sc.first_within(WAIT_SLACK_S, "grpc: an Unhealthy event after NOT_SERVING",
                                lambda: [ch.obj.get("message") for ch in sc.events("Unhealthy", pod) if ch.received_at > switched.at])
    sc.expect("PB-3", "unhealthy_message[grpc]", (unhealthy or [None])[0],
              details={"after_the_switch": unhealthy, "all": _container_events(sc, "Unhealthy", pod).get("app")})
    checks = [s for s in log() if s.event == "PROBE" and s.get("kind") == "grpc"]
    first = sc.require(checks[0] if checks else None, "grpc: a Check in the app's log")
    sc.expect("PB-3", "user_agent[grpc]", first.get("agent"), details={"agents": sorted({s.get("agent") for s in checks})})


# -- PB-4 -------------------------------------------------------------------------------------


def _ever_ready(sc: Scenario, pod: str, container: str) -> float | None:
    """The receive time of the first recorded change showing ``container`` ready, or None."""
    return next((ch.received_at for ch in sc.recorder.changes("Pod", pod) if pods.container_status(ch.obj, container).get("ready")), None)


def _first_probe(sc: Scenario, pod: str, container: str) -> stamps.Stamp:
    log = stamps.parse(sc.kube.logs(sc.namespace, pod, container))
    return sc.require(stamps.first(log, "probe"), f"{pod}/{container}: the first probe's stamp: {log}")


def _drain_timeout(sc: Scenario) -> str | None:
    """containerd's drain_exec_sync_io_timeout in the node (``containerd config dump``)."""
    for line in sc.node_exec("containerd", "config", "dump").splitlines():
        if "drain_exec_sync_io_timeout" in line:
            return line.split("=", 1)[1].strip().strip("'\"")
    return None


@pytest.mark.case("PB-4")
@pytest.mark.record("Pod", "Event")
def test_probe_timeouts_and_the_child_holding_the_pipe(scenario: Scenario):
    """PB-4 (a), (b), (d), (e): readiness P 5 s, timeoutSeconds 2: an HTTP handler sleeping 3 s and
    an exec `sleep 3` never make the container ready (client timeout; "command timed out"); an exec
    whose background child keeps stdout open for 60 s is ready only when the child exits (R17); its
    control, whose child holds nothing, at once."""
    sc = scenario
    sc.expect("PB-4", "drain_exec_sync_io_timeout", _drain_timeout(sc))
    pod = "timeouts"
    sc.apply("timeouts.yaml", name=pod, period_s=doc.PB4_PERIOD_S, timeout_s=doc.PB4_TIMEOUT_S)
    quiet = sc.wait_for("child-quiet ready", lambda: _ever_ready(sc, pod, "child-quiet"), WAIT_SLACK_S + doc.PB4_PERIOD_S)
    first = _first_probe(sc, pod, "child-quiet")
    sc.expect("PB-4", "ready_after_first_probe_s[child-quiet]", since(first.at, quiet), around=quiet)

    first = _first_probe(sc, pod, "child-60")
    ready = sc.wait_for("child-60 ready", lambda: _ever_ready(sc, pod, "child-60"),
                        sc.judge.wait_budget_s("PB-4", "ready_after_first_probe_s[child-60]") + WAIT_SLACK_S)
    sc.expect("PB-4", "ready_after_first_probe_s[child-60]", since(first.at, ready), around=ready)
    unhealthy = _container_events(sc, "Unhealthy", pod)
    sc.expect("PB-4", "unhealthy_before_ready[child-60]", bool(unhealthy.get("child-60")), details={"events": unhealthy.get("child-60")})
    # by now (> 60 s) the slow HTTP handler and `sleep 3` have failed a dozen times
    for c in ("http-slow", "exec-sleep"):
        sc.expect("PB-4", f"ever_ready[{c}]", _ever_ready(sc, pod, c) is not None)
        sc.expect("PB-4", f"unhealthy_message[{c}]", (unhealthy.get(c) or [None])[0], details={"all": unhealthy.get(c)})


@pytest.mark.case("PB-4")
@pytest.mark.record("Pod", "Event")
def test_exec_probe_held_until_the_runtime_deadline(scenario: Scenario):
    """PB-4 (c), R17: an exec readiness probe whose background child `sleep 300` keeps stdout open
    fails first only at the kubelet's CRI deadline, runtimeRequestTimeout 2 min + timeoutSeconds
    2 s after its start, with "command timed out", and the container is never ready (≈ 2 min)."""
    sc = scenario
    pod = "child-300"
    sc.apply("child-300.yaml", name=pod, period_s=doc.PB4_PERIOD_S, timeout_s=doc.PB4_TIMEOUT_S)
    sc.wait(pods.container_running(pod, "child-300"), WAIT_SLACK_S)
    first = sc.wait_for("the first probe's stamp", lambda: stamps.first(stamps.parse(sc.kube.logs(sc.namespace, pod, "child-300")), "probe"),
                        WAIT_SLACK_S)
    ev = sc.wait_for("the first Unhealthy event", lambda: next(iter(sc.events("Unhealthy", pod)), None),
                     sc.judge.wait_budget_s("PB-4", "first_failure_after_first_probe_s[child-300]") + WAIT_SLACK_S)
    sc.expect("PB-4", "first_failure_after_first_probe_s[child-300]", since(first.at, ev.received_at), around=ev.received_at)
    sc.expect("PB-4", "unhealthy_message[child-300]", ev.obj.get("message"))
    sc.expect("PB-4", "ever_ready[child-300]", _ever_ready(sc, pod, "child-300") is not None)
