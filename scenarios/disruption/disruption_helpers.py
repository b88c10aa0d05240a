"""Shared by the DR scenarios: the busybox Deployment whose readiness the test steps
(web.yaml), reading recorded state over time, running the real kubectl of the cluster's version."""

from __future__ import annotations

import json
from dataclasses import dataclass

from e2e.documented import disruption as doc
from e2e.evidence.kubectl import Transcript
from e2e.record.pods import condition
from e2e.run.scenario import Scenario
from e2e.base.waiting import PODS_SLACK_S

# kubectl drain's line for an eviction the API refused with 429 TooManyRequests (k8s.io/kubectl
# pkg/drain/drain.go evictPods: apierrors.IsTooManyRequests → "will retry after 5s"), e.g. a budget's refusal.

# The template of web.yaml after a rollout (rev 2): new pods wait for the test to write /tmp/ready.
STEPPED = 'trap \'exit 0\' TERM; sleep 3600 & wait $!'


def web_values(replicas: int, max_surge: object = 1, max_unavailable: object = 0, grace: int = doc.DR1_GRACE_S,
                ready_at_start: bool = True, ignore_term: bool = False, group: str = "web",
                progress_deadline: int = 600) -> dict:
    """The ``${placeholders}`` of web.yaml."""
    return dict(replicas=replicas, max_surge=max_surge, max_unavailable=max_unavailable, grace=grace,
                on_start="touch /tmp/ready;" if ready_at_start else "", on_term="" if ignore_term else "exit 0",
                group=group, progress_deadline=progress_deadline, readiness_period=doc.READINESS_PERIOD_S)


def is_ready(pod: dict | None) -> bool:
    return (condition(pod, "Ready") or {}).get("status") == "True"


def pods(sc: Scenario, **labels: str) -> list[dict]:
    """The newest recorded state of every existing pod whose labels include ``labels``."""
    out = []
    for name in {ch.name for ch in sc.recorder.changes("Pod")}:
        changes = sc.recorder.changes("Pod", name)
        if changes[-1].type == "DELETED":
            continue
        obj = changes[-1].obj
        got = (obj.get("metadata") or {}).get("labels") or {}
        if all(got.get(k) == v for k, v in labels.items()):
            out.append(obj)
    return sorted(out, key=lambda p: p["metadata"]["name"])


def name_of(obj: dict) -> str:
    return obj["metadata"]["name"]


def running(pod: dict) -> bool:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    return bool(statuses) and all("running" in (cs.get("state") or {}) for cs in statuses)


def terminating(pod: dict) -> bool:
    return bool((pod.get("metadata") or {}).get("deletionTimestamp"))


def ready_pods(sc: Scenario, **labels: str) -> list[str]:
    return [name_of(p) for p in pods(sc, **labels) if is_ready(p) and not terminating(p)]


def wait_ready(sc: Scenario, count: int, what: str = "web", **labels: str) -> list[str]:
    """Wait until ``count`` pods with ``labels`` are Ready and not terminating; their names."""
    return sc.wait_for(f"{count} ready {what} pods", lambda: (lambda r: r if len(r) == count else None)(ready_pods(sc, **labels)),
                       PODS_SLACK_S)


def rollout_complete(dep: dict | None, generation: int = 0) -> bool:
    """What ``kubectl rollout status`` waits for: the controller saw the newest generation (at
    least ``generation``, the one a patch returned: the recorder may not have seen it yet) and
    every replica is updated and available, no old one left."""
    if not dep:
        return False
    spec, status = dep.get("spec") or {}, dep.get("status") or {}
    want = spec.get("replicas", 1)
    return ((status.get("observedGeneration") or 0) >= max(dep["metadata"].get("generation", 0), generation)
            and status.get("updatedReplicas") == want and status.get("replicas") == want
            and status.get("availableReplicas") == want)


def make_ready(sc: Scenario, pod: str) -> None:
    """Write the pod's readiness file: its exec probe succeeds from the next period on."""
    result = sc.exec(pod, "app", "touch", "/tmp/ready")
    sc.require(result.exit_code == 0, f"touch /tmp/ready in {pod} exits 0: {result}")


def make_unready(sc: Scenario, pod: str) -> None:
    result = sc.exec(pod, "app", "rm", "-f", "/tmp/ready")
    sc.require(result.exit_code == 0, f"rm /tmp/ready in {pod} exits 0: {result}")


def start_rollout(sc: Scenario, stepped: bool = True, marker: str = "2") -> int:
    """Change web's template (label rev=marker); with ``stepped`` the new pods wait for
    :func:`make_ready`. Returns the Deployment's new ``metadata.generation``."""
    command = ["sh", "-c", STEPPED if stepped else "touch /tmp/ready; " + STEPPED]
    patched = sc.patch("Deployment", "web", {"spec": {"template": {"metadata": {"labels": {"rev": marker}},
                                                                   "spec": {"containers": [{"name": "app", "command": command}]}}}})
    return patched["metadata"]["generation"]


@dataclass
class Over:
    """A value followed over the recording: its ``max`` and ``min`` and when they were seen."""

    max: float | None = None
    min: float | None = None
    max_at: float = 0.0
    min_at: float = 0.0

    def see(self, value: float, at: float) -> None:
        if self.max is None or value > self.max:
            self.max, self.max_at = value, at
        if self.min is None or value < self.min:
            self.min, self.min_at = value, at


def replicaset_sum(sc: Scenario, since: float, until: float) -> Over:
    """The sum of every ReplicaSet's ``spec.replicas`` after each recorded ReplicaSet change in
    ``[since, until]`` (the controller's decisions), starting from the state at ``since``."""
    current: dict[str, int] = {}
    over = Over()
    for ch in sc.recorder.changes("ReplicaSet"):
        if ch.received_at > until:
            break
        if ch.type == "DELETED":
            current.pop(ch.name, None)
        else:
            current[ch.name] = (ch.obj.get("spec") or {}).get("replicas") or 0
        if ch.received_at >= since:
            over.see(sum(current.values()), ch.received_at)
    return over


def deployment_status(sc: Scenario, field: str, since: float, until: float, name: str = "web", kind: str = "Deployment") -> Over:
    """``status.<field>`` of Deployment ``name`` (or of another ``kind``: a StatefulSet) over its
    recorded changes in ``[since, until]`` (absent counts as 0), starting from the state at ``since``."""
    over = Over()
    last = None
    for ch in sc.recorder.changes(kind, name):
        if ch.received_at > until:
            break
        last = ((ch.obj.get("status") or {}).get(field) or 0, ch.received_at)
        if ch.received_at >= since:
            over.see(*last)
    if over.max is None and last is not None:
        over.see(last[0], since)
    return over


def apply_pdb(sc: Scenario, name: str, app: str = "web", **budget: object) -> None:
    sc.apply("pdb.yaml", name=name, budget=json.dumps({"selector": {"matchLabels": {"app": app}}, **budget}))


def pdb_status(sc: Scenario, name: str) -> dict:
    return (sc.get("PodDisruptionBudget", name) or {}).get("status") or {}


def wait_pdb(sc: Scenario, name: str, **want: int) -> dict:
    """Wait until the PDB controller has observed the PDB's newest generation and its status
    has the ``want`` values (``currentHealthy=3``...); its status."""
    def check():
        obj = sc.get("PodDisruptionBudget", name) or {}
        status = obj.get("status") or {}
        if (status.get("observedGeneration") or 0) < (obj.get("metadata") or {}).get("generation", 1):
            return None
        return status if all(status.get(k, 0) == v for k, v in want.items()) else None
    return sc.wait_for(f"PDB {name} observed with {want}", check, PODS_SLACK_S)


def budget_cause(causes: list[dict]) -> dict:
    return next((c for c in causes if c.get("reason", c.get("type")) == "DisruptionBudget"), causes[0] if causes else {})


def attach_transcript(sc: Scenario, t: Transcript, name: str, t0: float | None = None) -> None:
    sc.add_file(name, t.to_text(t0))


def status_of(answer) -> tuple[int, str, list[dict], int]:
    """An eviction answer as (HTTP status, message, causes, details.retryAfterSeconds or 0)."""
    body = answer.body or {}
    details = body.get("details") or {}
    return answer.status, body.get("message", ""), details.get("causes") or [], details.get("retryAfterSeconds") or 0

