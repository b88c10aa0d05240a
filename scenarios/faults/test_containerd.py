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

import pytest

from e2e.evidence import applog
from e2e.documented import faults as doc
from e2e.faults import containerd_restarted, containerd_stopped
from e2e.cluster.kube import ApiRefused, ExecError
from e2e.run.scenario import Scenario
from e2e.record.timeline import parse_time
from e2e.run.waiting import FAULT_SLACK_S
from e2e.record.nodes import condition_changes, first_condition, flips

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


@pytest.mark.serial
@pytest.mark.profile(doc.FAST)
@pytest.mark.record(*RECORD)
@pytest.mark.case("NF-6")
@pytest.mark.traffic
@pytest.mark.parametrize("how", ["restart", "stop"])
def test_containerd(scenario: Scenario, how: str):
    """NF-6 (a) restart ×3, 20 s apart: nothing restarts, no heartbeat gap, no failed request,
    node Ready, a new pod starts normally. (b) stop 60 s: Ready=False KubeletNotReady "container
    runtime is down" at the last runtime check + 30 s (+ status sync); the exec probe errors, and
    the errored result is thrown away (the pod stays Ready); kubectl exec fails, web keeps
    serving; all back after the start."""
    sc = scenario
    node = sc.kind.control_plane
    apply_web(sc, heartbeat=TICK)
    windows = []
    try:
        sc.apply("probes.yaml", readiness_period=doc.PROBE_PERIOD_S, failure_threshold=doc.PROBE_FAILURE_THRESHOLD)
        web = web_serving(sc)
        pods = ["readiness", *web]
        wait_pods_ready(sc, pods, 0)
        before = containers(sc, pods)
        outage = doc.NF6_RESTARTS * doc.NF6_RESTART_INTERVAL_S if how == "restart" else doc.NF6_OUTAGE_S
        gen = load(sc, duration_s=outage + 3 * FAULT_SLACK_S)
        started = time.time()
        if how == "restart":
            for i in range(doc.NF6_RESTARTS):
                with containerd_restarted(sc, node) as window:
                    windows.append(window)
                wait_until_time(sc, window.injected_at + doc.NF6_RESTART_INTERVAL_S, f"{doc.NF6_RESTART_INTERVAL_S} s after restart {i + 1}")
            created = time.time()
            sc.apply("late.yaml", name="late")
        else:
            with containerd_stopped(sc, node) as window:
                windows.append(window)
                wait_until_time(sc, window.injected_at + 5, "the first seconds of the outage")
                try:
                    exec_result = sc.exec("readiness", "app", "true", timeout_s=15)
                    exec_failed = exec_result.exit_code != 0
                except (ApiRefused, ExecError) as e:
                    exec_result, exec_failed = str(e), True
                sc.apply("late.yaml", name="late")
                down = sc.wait_for("node Ready=False (runtime down)", lambda: first_condition(sc.recorder.changes("Node", node), "False", after=window.injected_at),
                                   doc.RUNTIME_DOWN_S + doc.NODE_STATUS_UPDATE_S + 20)
                wait_until_time(sc, window.injected_at + doc.NF6_OUTAGE_S, "the rest of the outage")
            ready = sc.wait_for("node Ready=True again", lambda: first_condition(sc.recorder.changes("Node", node), "True", after=window.undone_at), FAULT_SLACK_S)
        late_started = sc.wait_for("the late pod running", lambda: running_at(sc, "late"), FAULT_SLACK_S)
        wait_pods_ready(sc, pods, 0)
        wait_until_time(sc, time.time() + 3, "a few seconds of load after the recovery")
        gen.stop()
        result = gen.result()
        after = containers(sc, pods)
        ticks = {p: tick_gap(sc, p, started, time.time()) for p in web}
    finally:
        sc.release_node_port()
    attach_traffic(sc, result, windows, f"NF-6 containerd {how}")

    since, until = started, time.time()
    sc.expect("NF-6", f"container_restarts[{how}]", sum(n for _, n in after.values()) - sum(n for _, n in before.values()),
              details={"before": before, "after": after})
    sc.expect("NF-6", f"containers_replaced[{how}]", {k: v[0] for k, v in before.items()} != {k: v[0] for k, v in after.items()},
              details={"before": before, "after": after})
    sc.expect("NF-6", f"failed_requests[{how}]", len(result.failures), details={"by_outcome": result.by_outcome()})
    for pod in web:
        sc.expect("NF-6", f"web_ready_flips[{how}]", flips(condition_changes(sc.recorder.changes("Pod", pod), "Ready", with_reason=False), since, until), details={"pod": pod})
        sc.expect("NF-6", f"tick_max_gap_s[{how}]", ticks[pod], details={"pod": pod})
    if how == "restart":
        sc.expect("NF-6", "node_ready_flips[restart]", flips(condition_changes(sc.recorder.changes("Node", node)), since, until))
        sc.expect("NF-6", "new_pod_running_s[restart]", round(late_started - created, 3))
        return
    sc.expect("NF-6", "runtime_down_after_stop_s", parse_time(down.obj.get("lastTransitionTime")) - window.injected_at,
              around=down.received_at, details={"condition": down.obj, "stopped_at": window.injected_at})
    sc.expect("NF-6", "runtime_down_reason", down.obj.get("reason"))
    sc.expect("NF-6", "runtime_down_message", down.obj.get("message"))
    exec_ready = condition_changes(sc.recorder.changes("Pod", "readiness"), "Ready", with_reason=False)
    sc.expect("NF-6", "exec_probe_ready_flips", flips(exec_ready, window.injected_at, window.undone_at),
              details={"ready": [(s.received_at, s.obj) for s in exec_ready]})
    event = next((c.obj for c in sc.recorder.changes("Event") if c.obj.get("reason") == "Unhealthy"
                  and (c.obj.get("involvedObject") or {}).get("name") == "readiness" and c.received_at >= window.injected_at), None)
    sc.expect("NF-6", "exec_probe_event", event and event.get("message"), details={"event": event})
    sc.expect("NF-6", "exec_during_outage_fails", exec_failed, details={"exec": str(exec_result)})
    sc.expect("NF-6", "node_ready_after_start_s", parse_time(ready.obj.get("lastTransitionTime")) - window.undone_at,
              around=ready.received_at, details={"condition": ready.obj})
    sc.expect("NF-6", "late_pod_running_after_start_s", round(late_started - window.undone_at, 3))
