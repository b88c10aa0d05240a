"""NF-6 — containerd restarted three times, and stopped for 60 s (CASES-faults.md §2.4, §4 NF-6).

The shims outlive containerd (kind's ``containerd.service``: ``KillMode=process``), so the
containers, their IDs, restart counts and the app's own 100 ms heartbeat go on, and NodePort
traffic keeps flowing (the web pods' httpGet readiness runs in the kubelet). A 60 s outage
makes the kubelet report ``Ready=False`` "container runtime is down" itself (the controller
marks no pod); exec probes error (through CRI) and the kubelet throws an errored result away, so
readiness stays as it was; ``kubectl exec`` fails, and a pod created meanwhile starts only once
containerd is back.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import cast

import pytest

from e2e.evidence import applog
from e2e.documented import faults as doc
from e2e.evidence.load import LoadResult
from e2e.faults import FaultWindow, containerd_restarted, containerd_stopped
from e2e.cluster.kube import ApiRefused, ExecError
from e2e.run.scenario import Scenario
from e2e.record.timeline import parse_time
from e2e.base.waiting import FAULT_SLACK_S
from e2e.record.nodes import Seen, condition_changes, first_condition, flips

from .fault_helpers import (
    apply_web,
    attach_traffic,
    containers,
    load,
    wait_pods_ready,
    wait_until_time,
    web_serving,
)

RECORD = ("Pod", "Event", "EndpointSlice", "Node")
TICK = f"{int(doc.TICK_S * 1000)}ms"


def running_at(sc: Scenario, pod: str) -> float | None:
    """The API ``startedAt`` of the pod's running container (epoch s)."""
    for ch in sc.recorder.changes("Pod", pod):
        for cs in (ch.obj.get("status") or {}).get("containerStatuses") or []:
            started = ((cs.get("state") or {}).get("running") or {}).get("startedAt")
            if started:
                return parse_time(started)
    return None


def tick_gap(sc: Scenario, pod: str, since: float, until: float) -> float | None:
    """The longest gap (s) between the app's TICK lines in ``[since, until]`` (its own ms stamps)."""
    ticks = [e.at for e in applog.parse(sc.kube.logs(sc.namespace, pod, "app")) if e.event == "TICK" and since <= e.at <= until]
    return applog.max_interval(ticks)


@dataclass
class Restarts:
    """containerd restarted NF6_RESTARTS times: their ``windows`` and when the late pod was
    ``created`` (epoch s)."""

    windows: list[FaultWindow]
    created: float


@dataclass
class Stop:
    """containerd stopped NF6_OUTAGE_S: its ``window``, the node's runtime-down ``down`` and
    ``ready`` conditions as first recorded, the exec into a container meanwhile (``exec_result``,
    ``exec_failed``)."""

    window: FaultWindow
    down: Seen
    ready: Seen
    exec_result: object
    exec_failed: bool


@pytest.mark.serial
@pytest.mark.profile(doc.FAST)
@pytest.mark.record(*RECORD)
@pytest.mark.case("NF-6")
@pytest.mark.traffic
@pytest.mark.parametrize("how", [
    pytest.param("restart", marks=pytest.mark.node_faults("containerd_restarted", case="NF-6", node="first",
                                                          window_s=doc.NF6_RESTARTS * doc.NF6_RESTART_INTERVAL_S)),
    pytest.param("stop", marks=pytest.mark.node_faults("containerd_stopped", case="NF-6", window_s=doc.NF6_OUTAGE_S,
                                                      node="first"))])
def test_containerd(scenario: Scenario, how: str):
    """NF-6 (a) restart ×3, 20 s apart: nothing restarts, no heartbeat gap, no failed request,
    node Ready, a new pod starts normally. (b) stop 60 s: Ready=False KubeletNotReady "container
    runtime is down" at the last runtime check + 30 s (+ status sync); the exec probe errors, and
    the errored result is thrown away (the pod stays Ready); kubectl exec fails, web keeps
    serving; all back after the start."""
    sc = scenario
    node = sc.default_node()  # a kind cluster's only node; on --kubeconfig the node its facts chose
    apply_web(sc, heartbeat=TICK)
    try:
        sc.apply("probes.yaml", readiness_period=doc.PROBE_PERIOD_S, failure_threshold=doc.PROBE_FAILURE_THRESHOLD)
        web = web_serving(sc)
        pods = ["readiness", *web]
        wait_pods_ready(sc, pods, 0)
        before = containers(sc, pods)
        outage = doc.NF6_RESTARTS * doc.NF6_RESTART_INTERVAL_S if how == "restart" else doc.NF6_OUTAGE_S
        gen = load(sc, duration_s=outage + 3 * FAULT_SLACK_S)
        started = time.time()
        fault = _restart_containerd(sc, node) if how == "restart" else _stop_containerd(sc, node)
        late_started = sc.wait_for("the late pod running", lambda: running_at(sc, "late"), FAULT_SLACK_S)
        wait_pods_ready(sc, pods, 0)
        wait_until_time(sc, time.time() + 3, "a few seconds of load after the recovery")
        gen.stop()
        result = gen.result()
        after = containers(sc, pods)
        ticks = {p: tick_gap(sc, p, started, time.time()) for p in web}
    finally:
        sc.release_node_port()
    windows = fault.windows if isinstance(fault, Restarts) else [fault.window]
    attach_traffic(sc, result, windows, f"NF-6 containerd {how}")

    since, until = started, time.time()
    _judge_the_workload_ran_on(sc, how, web, before, after, result, ticks, since, until)
    if isinstance(fault, Restarts):
        sc.expect("NF-6", "node_ready_flips[restart]", flips(condition_changes(sc.recorder.changes("Node", node)), since, until))
        sc.expect("NF-6", "new_pod_running_s[restart]", round(late_started - fault.created, 3))
    else:
        _judge_the_outage(sc, fault, late_started)


def _restart_containerd(sc: Scenario, node: str) -> Restarts:
    """containerd restarted NF6_RESTARTS times, NF6_RESTART_INTERVAL_S apart; then a new pod."""
    windows = []
    for i in range(doc.NF6_RESTARTS):
        with containerd_restarted(sc, node) as window:
            windows.append(window)
        wait_until_time(sc, cast(float, window.injected_at) + doc.NF6_RESTART_INTERVAL_S,
                        f"{doc.NF6_RESTART_INTERVAL_S} s after restart {i + 1}")
    created = time.time()
    sc.apply("late.yaml", name="late")
    return Restarts(windows, created)


def _stop_containerd(sc: Scenario, node: str) -> Stop:
    """containerd stopped NF6_OUTAGE_S: an exec and a new pod meanwhile, the node's Ready=False
    awaited; started again and the node Ready awaited."""
    with containerd_stopped(sc, node, window_s=doc.NF6_OUTAGE_S) as window:
        injected_at = cast(float, window.injected_at)
        wait_until_time(sc, injected_at + 5, "the first seconds of the outage")
        exec_result: object
        try:
            exec_result = sc.exec("readiness", "app", "true", timeout_s=15)
            exec_failed = exec_result.exit_code != 0
        except (ApiRefused, ExecError) as e:
            exec_result, exec_failed = str(e), True
        sc.apply("late.yaml", name="late")
        down = sc.wait_for("node Ready=False (runtime down)",
                           lambda: first_condition(sc.recorder.changes("Node", node), "False", after=injected_at),
                           doc.RUNTIME_DOWN_S + doc.NODE_STATUS_UPDATE_S + 20)
        wait_until_time(sc, injected_at + doc.NF6_OUTAGE_S, "the rest of the outage")
    ready = sc.wait_for("node Ready=True again",
                        lambda: first_condition(sc.recorder.changes("Node", node), "True", after=cast(float, window.undone_at)),
                        FAULT_SLACK_S)
    return Stop(window, down, ready, exec_result, exec_failed)


def _judge_the_workload_ran_on(sc: Scenario, how: str, web: list[str], before: dict, after: dict, result: LoadResult,
                               ticks: dict[str, float | None], since: float, until: float) -> None:
    """The shims outlive containerd: no container restarted or replaced, no failed request, the
    web pods never unready, no gap in the app's own heartbeat."""
    sc.expect("NF-6", f"container_restarts[{how}]", sum(n for _, n in after.values()) - sum(n for _, n in before.values()),
              details={"before": before, "after": after})
    sc.expect("NF-6", f"containers_replaced[{how}]", {k: v[0] for k, v in before.items()} != {k: v[0] for k, v in after.items()},
              details={"before": before, "after": after})
    sc.expect("NF-6", f"failed_requests[{how}]", len(result.failures), details={"by_outcome": result.by_outcome()})
    for pod in web:
        ready = condition_changes(sc.recorder.changes("Pod", pod), "Ready", with_reason=False)
        sc.expect("NF-6", f"web_ready_flips[{how}]", flips(ready, since, until), details={"pod": pod})
        sc.expect("NF-6", f"tick_max_gap_s[{how}]", ticks[pod], details={"pod": pod})


def _judge_the_outage(sc: Scenario, stop: Stop, late_started: float) -> None:
    """The stop's chain: runtime down → the node Ready=False (its reason and message) → the exec
    probe's errors thrown away (no flip, an Unhealthy event) and kubectl exec failing → started
    again → the node Ready → the late pod running."""
    injected_at, undone_at, down, ready = cast(float, stop.window.injected_at), cast(float, stop.window.undone_at), stop.down, stop.ready
    sc.expect("NF-6", "runtime_down_after_stop_s", parse_time(down.obj.get("lastTransitionTime")) - injected_at,
              around=down.received_at, details={"condition": down.obj, "stopped_at": injected_at})
    sc.expect("NF-6", "runtime_down_reason", down.obj.get("reason"))
    sc.expect("NF-6", "runtime_down_message", down.obj.get("message"))
    exec_ready = condition_changes(sc.recorder.changes("Pod", "readiness"), "Ready", with_reason=False)
    sc.expect("NF-6", "exec_probe_ready_flips", flips(exec_ready, injected_at, undone_at),
              details={"ready": [(s.received_at, s.obj) for s in exec_ready]})
    event = next((c.obj for c in sc.recorder.changes("Event") if c.obj.get("reason") == "Unhealthy"
                  and (c.obj.get("involvedObject") or {}).get("name") == "readiness" and c.received_at >= injected_at), None)
    sc.expect("NF-6", "exec_probe_event", event and event.get("message"), details={"event": event})
    sc.expect("NF-6", "exec_during_outage_fails", stop.exec_failed, details={"exec": str(stop.exec_result)})
    sc.expect("NF-6", "node_ready_after_start_s", parse_time(ready.obj.get("lastTransitionTime")) - undone_at,
              around=ready.received_at, details={"condition": ready.obj})
    sc.expect("NF-6", "late_pod_running_after_start_s", round(late_started - undone_at, 3))
