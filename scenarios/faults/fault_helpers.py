"""Shared by the NF scenarios: the node's recorded heartbeats, conditions and taints, the web
workload behind the NodePort and its HTTP load, and what a fault must not change (containers).

Times: ``received_at`` is the recorder's host clock; API timestamps (``lastTransitionTime``,
``timeAdded``) have 1 s resolution; Lease ``renewTime`` has µs resolution. On kind all of them
come from the host's kernel clock and subtract directly (CASES-faults.md §5 "Clocks").
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from kubernetes.client.exceptions import ApiException

from e2e.cluster.kube import ApiRefused
from e2e.evidence import endpoints
from e2e.pictures import traffic as traffic_picture
from e2e.documented import faults as doc
from e2e.faults import FaultWindow
from e2e.evidence.load import LoadGenerator, LoadResult, answering_pods
from e2e.record.pods import condition
from e2e.run.scenario import Scenario
from e2e.record.timeline import parse_time

NODE_PORT = 30080  # web.yaml's Service; published on a free host port of 127.0.0.1
# Slack for waits (not for verdicts): pod creation, scheduling, container start on 2 busy cores.
WAIT_SLACK_S = 90
# Host HTTP load: rate (requests per second, new connection each) and per-request timeout.
LOAD_RATE_PER_S = 10.0
LOAD_TIMEOUT_S = 1.0
NODE_PORT_WAIT_S = 120


def renewals(sc: Scenario, node: str) -> list[float]:
    """The distinct ``spec.renewTime`` values (epoch s, µs) of ``node``'s Lease, in order."""
    out: list[float] = []
    for ch in sc.recorder.changes("Lease", node):
        t = parse_time((ch.obj.get("spec") or {}).get("renewTime"))
        if t is not None and (not out or t > out[-1]):
            out.append(t)
    return out


def lease_duration(sc: Scenario, node: str) -> int | None:
    found = sc.recorder.latest("Lease", node)
    return ((found or {}).get("spec") or {}).get("leaseDurationSeconds")


def last_renew_before(sc: Scenario, node: str, t: float) -> float | None:
    """The last renewTime at or before epoch second ``t``."""
    before = [r for r in renewals(sc, node) if r <= t]
    return before[-1] if before else None


@dataclass(frozen=True)
class Seen:
    """A recorded condition (or taint) as first seen: host ``received_at`` and the object."""

    received_at: float
    obj: dict


def node_condition_changes(sc: Scenario, node: str, type_: str = "Ready") -> list[Seen]:
    """Each distinct (status, reason, lastTransitionTime) of the node's ``type_`` condition, in order."""
    out: list[Seen] = []
    for ch in sc.recorder.changes("Node", node):
        cond = condition(ch.obj, type_)
        if not cond:
            continue
        key = (cond.get("status"), cond.get("reason"), cond.get("lastTransitionTime"))
        if not out or (out[-1].obj.get("status"), out[-1].obj.get("reason"), out[-1].obj.get("lastTransitionTime")) != key:
            out.append(Seen(ch.received_at, cond))
    return out


def first_condition(sc: Scenario, node: str, status: str, type_: str = "Ready", after: float = 0.0) -> Seen | None:
    return next((s for s in node_condition_changes(sc, node, type_) if s.obj.get("status") == status and s.received_at >= after), None)


def taint_seen(sc: Scenario, node: str, key: str, effect: str, after: float = 0.0) -> Seen | None:
    """The first recorded taint ``key:effect`` on ``node`` (the taint with its ``timeAdded``)."""
    for ch in sc.recorder.changes("Node", node):
        if ch.received_at < after:
            continue
        for t in (ch.obj.get("spec") or {}).get("taints") or []:
            if t.get("key") == key and t.get("effect") == effect:
                return Seen(ch.received_at, t)
    return None


def delete_requested_at(sc: Scenario, pod: str) -> float | None:
    """When the pod's deletion was requested: ``deletionTimestamp − deletionGracePeriodSeconds``
    (API time, 1 s resolution), from the first recorded change that has it."""
    for ch in sc.recorder.changes("Pod", pod):
        meta = ch.obj.get("metadata") or {}
        if meta.get("deletionTimestamp"):
            return parse_time(meta["deletionTimestamp"]) - (meta.get("deletionGracePeriodSeconds") or 0)
    return None


def taint_gone(sc: Scenario, node: str, key: str, after: float) -> float | None:
    """The first receive time after ``after`` at which ``node`` has no taint ``key``."""
    for ch in sc.recorder.changes("Node", node):
        if ch.received_at >= after and not any(t.get("key") == key for t in (ch.obj.get("spec") or {}).get("taints") or []):
            return ch.received_at
    return None


def pod_condition_changes(sc: Scenario, pod: str, type_: str) -> list[Seen]:
    """Each distinct (status, lastTransitionTime) of the pod's ``type_`` condition, in order."""
    out: list[Seen] = []
    for ch in sc.recorder.changes("Pod", pod):
        cond = condition(ch.obj, type_)
        if not cond:
            continue
        key = (cond.get("status"), cond.get("lastTransitionTime"))
        if not out or (out[-1].obj.get("status"), out[-1].obj.get("lastTransitionTime")) != key:
            out.append(Seen(ch.received_at, cond))
    return out


def flips(changes: list[Seen], since: float, until: float) -> int:
    """How many True→False transitions ``changes`` shows with a receive time in ``[since, until]``."""
    n = 0
    for prev, cur in zip(changes, changes[1:], strict=False):
        if since <= cur.received_at <= until and prev.obj.get("status") == "True" and cur.obj.get("status") != "True":
            n += 1
    return n


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
    """web.yaml (its NodePort Service first), retried while the NodePort is still allocated to
    a previous test's Service (namespace deletion is asynchronous)."""
    def apply() -> bool:
        try:
            sc.apply("web.yaml", readiness_period=doc.WEB_READINESS_PERIOD_S, heartbeat=values.get("heartbeat", "0s"))
            return True
        except ApiRefused as e:
            if e.status == 422 and "already allocated" in e.message:
                return False
            raise
    sc.wait_for(f"NodePort {NODE_PORT} free", apply, NODE_PORT_WAIT_S, interval_s=1)


def release_node_port(sc: Scenario) -> None:
    """Delete the Service now: the next test needs the NodePort."""
    try:
        sc.kube.core.delete_namespaced_service("web", sc.namespace)
    except ApiException as e:
        if e.status != 404:
            raise


def web_serving(sc: Scenario) -> list[str]:
    """Wait until both web pods are ready endpoints and answer through the NodePort; their names."""
    ready = sc.wait_for("two ready web endpoints",
                        lambda: (lambda r: sorted(r) if len(r) == 2 else None)(endpoints.ready_pods(states(sc))), WAIT_SLACK_S)
    seen: set[str] = set()
    url = sc.node_port_url(NODE_PORT)
    sc.wait_for(f"both web pods answering on {url}", lambda: set(ready) <= answering_pods(url, seen), WAIT_SLACK_S, interval_s=0.2)
    return ready


def load(sc: Scenario, duration_s: float) -> LoadGenerator:
    """Constant HTTP load (new connections) through the NodePort on 127.0.0.1."""
    return LoadGenerator(sc.node_port_url(NODE_PORT), LOAD_RATE_PER_S, duration_s=duration_s, mode="new",
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
    sc.wait_for(f"{', '.join(pods)} Ready for more than {steady_s:g} s", check, WAIT_SLACK_S + steady_s, interval_s=0.5)


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
