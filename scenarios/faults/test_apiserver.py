"""NF-7 — the API server away for 60 s (CASES-faults.md §2.5, §4 NF-7).

The API server's static pod manifest is moved out of the kubelet's directory for 60 s
(e2e.faults.apiserver_down). The node keeps running what it has: NodePort traffic flows
(kube-proxy's rules stay in the kernel), a crash loop goes on with its back-off, a liveness
probe that starts failing 20 s into the outage still kills its container; kube-controller-
manager and kube-scheduler lose their leader lease and exit (restarted by the kubelet). The
recorder's watches drop meanwhile: the gap is shown inside the declared fault window, and
nothing that happened inside it is judged from the recording — the counts are read after the
recovery (restartCount, the containers' own start times).
"""

from __future__ import annotations

import time

import pytest

from e2e.documented import faults as doc
from e2e.faults import apiserver_down
from e2e.run.scenario import Scenario
from e2e.base.waiting import FAULT_SLACK_S
from e2e.record.nodes import condition_changes, flips

from .fault_helpers import (
    apply_web,
    attach_traffic,
    load,
    wait_until_time,
    web_serving,
)

RECORD = ("Pod", "Event", "EndpointSlice", "Node")


def restart_counts(sc: Scenario, namespace: str, prefix: str) -> int:
    """The summed restartCount of the pods in ``namespace`` whose name starts with ``prefix``."""
    pods = sc.kube.pods(namespace)
    return sum(cs.get("restartCount", 0) for p in pods if p["metadata"]["name"].startswith(prefix)
               for cs in (p.get("status") or {}).get("containerStatuses") or [])


def restarts(sc: Scenario, pod: str) -> int:
    return sum(cs.get("restartCount", 0) for cs in (sc.kube.pod(sc.namespace, pod).get("status") or {}).get("containerStatuses") or [])


@pytest.mark.serial
@pytest.mark.profile(doc.FAST)
@pytest.mark.record(*RECORD)
@pytest.mark.case("NF-7")
@pytest.mark.traffic
@pytest.mark.node_faults("apiserver_down", case="NF-7", window_s=doc.NF7_OUTAGE_S, node="control-plane")
def test_apiserver_outage(scenario: Scenario):
    """NF-7: 60 s without the API server: zero failed requests, the crash loop runs on, the
    liveness kill happens (restart +1), kcm and scheduler restart (lost lease), the node has no
    Ready transition."""
    sc = scenario
    if sc.kind is None:
        pytest.skip("NF-7 moves the API server's static pod out of the control-plane node's manifests: the node agent "
                    "never enters a control-plane node (--kubeconfig); it runs on the suite's own kind clusters")
    node = sc.kind.control_plane
    flag_dir = f"/tmp/e2e-nf7/{sc.namespace}"
    apply_web(sc)
    try:
        web_serving(sc)
        kcm_before = restart_counts(sc, "kube-system", "kube-controller-manager-")
        scheduler_before = restart_counts(sc, "kube-system", "kube-scheduler-")
        sc.apply("outage-pods.yaml", flag_dir=flag_dir, liveness_period=doc.NF7_LIVENESS_PERIOD_S)
        sc.wait_for("the liveness pod running and the crash loop started", lambda: (sc.pod("liveness") or {}).get("status", {}).get(
            "phase") == "Running" and any(a.finished_at for a in sc.attempts("crashloop", "app")), FAULT_SLACK_S)
        gen = load(sc, duration_s=doc.NF7_OUTAGE_S + 3 * FAULT_SLACK_S)
        with apiserver_down(sc, node) as window:
            wait_until_time(sc, window.injected_at + doc.NF7_FLAG_AT_S, "20 s into the outage")
            sc.node_exec("touch", f"{flag_dir}/fail", node=node)  # docker exec: no API needed
            sc.mark(time.time(), "liveness flag set")
            wait_until_time(sc, window.injected_at + doc.NF7_OUTAGE_S, "the rest of the outage")
        sc.wait_for("the liveness restart reported", lambda: restarts(sc, "liveness") >= 1, FAULT_SLACK_S,
                    case="NF-7", measurement="liveness_restarts")
        wait_until_time(sc, time.time() + 5, "a few seconds of load after the recovery")
        gen.stop()
        result = gen.result()
        liveness = restarts(sc, "liveness")
        kcm_after = restart_counts(sc, "kube-system", "kube-controller-manager-")
        scheduler_after = restart_counts(sc, "kube-system", "kube-scheduler-")
    finally:
        sc.release_node_port()
        sc.node_exec("rm", "-rf", flag_dir, node=node)
    attach_traffic(sc, result, [window], "NF-7 API server away 60 s")

    recovery = window.recovery.text() if window.recovery else ""
    sc.expect("NF-7", "failed_requests", len(result.failures), details={"by_outcome": result.by_outcome()})
    runs = sc.attempts("crashloop", "app")
    inside = [a for a in runs if window.injected_at - doc.API_RESOLUTION_S <= a.started_at <= window.undone_at]
    sc.expect("NF-7", "crashloop_runs_in_outage", len(inside),
              details={"runs": [a.__dict__ for a in runs], "window": [window.injected_at, window.undone_at]})
    sc.expect("NF-7", "liveness_restarts", liveness)
    sc.expect("NF-7", "kcm_restarts", kcm_after - kcm_before, details={"before": kcm_before, "after": kcm_after, "recovery": recovery})
    sc.expect("NF-7", "scheduler_restarts", scheduler_after - scheduler_before,
              details={"before": scheduler_before, "after": scheduler_after})
    sc.expect("NF-7", "node_ready_flips", flips(condition_changes(sc.recorder.changes("Node", node)), window.injected_at - 1, time.time()),
              details={"ready": [(s.received_at, s.obj) for s in condition_changes(sc.recorder.changes("Node", node))], "gaps": [g.obj for g in sc.recorder.gaps()]})
