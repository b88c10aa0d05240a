"""Shared by the NF scenarios (and KB-7's cut): the web workload behind the NodePort and its HTTP
load, what a fault must not change (containers), the worker the two-node faults hit. The node's
recorded heartbeats, conditions and taints are the shared vocabulary of :mod:`e2e.record.nodes`
(its times and clocks, CASES-faults.md §5).
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Iterator

import pytest

from e2e.evidence import endpoints
from e2e.pictures import traffic as traffic_picture
from e2e.documented import faults as doc
from e2e.faults import FaultWindow
from e2e.evidence.load import LoadGenerator, LoadResult, answering_pods
from e2e.record.pods import condition
from e2e.run.scenario import Scenario
from e2e.record.timeline import parse_time
from e2e.base.waiting import FAULT_SLACK_S

# Host HTTP load: rate (requests per second, new connection each) and per-request timeout.
LOAD_RATE_PER_S = 10.0
LOAD_TIMEOUT_S = 1.0


def containers(sc: Scenario, pods: list[str]) -> dict[str, tuple[str, int]]:
    """``{pod/container: (containerID, restartCount)}`` now (read from the API)."""
    out = {}
    for p in pods:
        for cs in (sc.kube.pod(sc.namespace, p).get("status") or {}).get("containerStatuses") or []:
            out[f"{p}/{cs['name']}"] = (cs.get("containerID"), cs.get("restartCount", 0))
    return out


def states(sc: Scenario) -> list[endpoints.EndpointState]:
    return endpoints.endpoint_states(sc.recorder.changes("EndpointSlice"))


def apply_web(sc: Scenario, **values: object) -> None:
    """web.yaml (its NodePort Service first) once the NodePort is free (Scenario.apply_node_port)."""
    sc.apply_node_port("web.yaml", readiness_period=doc.WEB_READINESS_PERIOD_S, heartbeat=values.get("heartbeat", "0s"))


def web_serving(sc: Scenario) -> list[str]:
    """Wait until both web pods are ready endpoints and answer through the NodePort; their names."""
    ready = sc.wait_for("two ready web endpoints",
                        lambda: (lambda r: sorted(r) if len(r) == 2 else None)(endpoints.ready_pods(states(sc))), FAULT_SLACK_S)
    seen: set[str] = set()
    url = sc.node_port_url()
    sc.wait_for(f"both web pods answering on {url}", lambda: set(ready) <= answering_pods(url, seen), FAULT_SLACK_S, interval_s=0.2)
    return ready


def load(sc: Scenario, duration_s: float) -> LoadGenerator:
    """Constant HTTP load (new connections) through the NodePort on 127.0.0.1."""
    return LoadGenerator(sc.node_port_url(), LOAD_RATE_PER_S, duration_s=duration_s, mode="new",
                         timeout_s=LOAD_TIMEOUT_S).start()


def attach_traffic(sc: Scenario, result: LoadResult, windows: list[FaultWindow], title: str) -> None:
    """The load's requests as text and the traffic picture with each fault window shaded."""
    t0 = result.started_at
    sc.add_file("load.txt", result.to_text(t0))
    spans = [(w.injected_at, w.undone_at or time.time(), w.name) for w in windows if w.injected_at]
    sc.add_file("traffic.png", traffic_picture.render(result.requests, states(sc), [], t0, title, windows=spans))


def wait_pods_ready(sc: Scenario, pods: list[str], steady_s: float) -> None:
    """Wait until every pod of ``pods`` is Ready and each container started more than
    ``steady_s`` seconds ago (NF-5: beyond the kubelet's 10 s restart grace)."""
    def check() -> bool:
        now = time.time()
        for p in pods:
            obj = sc.pod(p)
            if (condition(obj, "Ready") or {}).get("status") != "True":
                return False
            for cs in (obj.get("status") or {}).get("containerStatuses") or []:
                started = parse_time(((cs.get("state") or {}).get("running") or {}).get("startedAt"))
                if started is None or now - started < steady_s:
                    return False
        return True
    sc.wait_for(f"{', '.join(pods)} Ready for more than {steady_s:g} s", check, FAULT_SLACK_S + steady_s, interval_s=0.5)


def wait_until_time(sc: Scenario, t: float, what: str) -> None:
    """A documented wait: until epoch second ``t`` (a fault's planned length), polling the
    recorder's health meanwhile — not a check on the recording (it may have a gap in a fault)."""
    sc.wait_for(what, lambda: time.time() >= t, max(0.0, t - time.time()) + 5, interval_s=0.5)


@contextmanager
def node_labelled(sc: Scenario, node: str, label: str, value: str = "") -> Iterator[None]:
    """``label`` on ``node`` for the block; always removed afterwards."""
    sc.mark(time.time(), f"label node/{node} {label}")
    sc.kube.patch("Node", node, None, {"metadata": {"labels": {label: value}}}, patch_type="merge")
    try:
        yield
    finally:
        sc.kube.patch("Node", node, None, {"metadata": {"labels": {label: None}}}, patch_type="merge")
        sc.mark(time.time(), f"unlabel node/{node}")


def two_node_worker(sc: Scenario) -> str:
    """The node a two-node fault hits (NF-4, NF-8, NF-9, KB-7): where the placement gave the test
    nodes (:attr:`Scenario.nodes`: a ``--kubeconfig`` cluster, the ``multi-node`` room of
    ``E2E_ROOMS=1``; never a control plane) the last of them by name, the first keeping NF-4's and
    NF-8's second web pod; else the profile's only worker on the suite's kind cluster. The host's
    NodePort traffic must enter through another node than the faulted one (on the suite's
    clusters the control plane): a cut or frozen kube-proxy there would keep the evicted pod's
    endpoint (the foreign cluster publishes it on its first worker, zone-a). Skips the test when
    one node was placed."""
    if sc.nodes or sc.kind is None:
        if len(sc.nodes) < 2:
            pytest.skip(f"needs two schedulable nodes placed for the test, has {list(sc.nodes)}")
        return sc.nodes[-1]
    workers = [n for n in sc.kind.nodes() if n != sc.kind.control_plane]
    assert len(workers) == 1, f"the two-node profile has one worker, the cluster has {workers}"
    return workers[0]
