"""ST-1 … ST-5 — StatefulSet ordering, rolling updates with a partition or maxUnavailable, identity
(docs/cases/CASES-workloads.md §4 ST). Documented values: :mod:`e2e.documented.statefulset`.

Every time is a receive time of the recorder's watch (host clock), per pod *object* (its uid: a
replaced ordinal keeps its name)."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

import pytest

from e2e.cluster import gates
from e2e.documented import statefulset as doc
from e2e.record import pods
from e2e.run.scenario import Scenario
from e2e.base.waiting import PODS_SLACK_S, WAIT_SLACK_S
from scenarios.gate_profiles import GATES_1_34

# a workload family (CASES-workloads.md): `make e2e-workloads`, not in the default `make e2e`
pytestmark = pytest.mark.workloads

RECORD = ("Pod", "Event", "StatefulSet")


@dataclass
class Life:
    """One pod object as the watch saw it (host epoch s; None: not seen)."""

    name: str
    uid: str
    added: float
    ready: float | None = None
    deleting: float | None = None
    gone: float | None = None


def lives(sc: Scenario, prefix: str, since: float = 0.0) -> list[Life]:
    """Every pod object named ``<prefix>-<n>`` first seen after ``since``, in order of appearance."""
    out: dict[str, Life] = {}
    for ch in sc.recorder.changes("Pod"):
        meta = ch.obj.get("metadata") or {}
        name, uid = meta.get("name", ""), meta.get("uid", "")
        if not name.startswith(f"{prefix}-") or not name[len(prefix) + 1:].isdigit():
            continue
        life = out.get(uid)
        if life is None:
            if ch.received_at < since:
                continue
            life = out[uid] = Life(name, uid, ch.received_at)
        if life.ready is None and (pods.condition(ch.obj, "Ready") or {}).get("status") == "True":
            life.ready = ch.received_at
        if life.deleting is None and meta.get("deletionTimestamp"):
            life.deleting = ch.received_at
        if ch.type == "DELETED":
            life.gone = ch.received_at
            life.deleting = life.deleting or ch.received_at
    return list(out.values())


def ordinal(life: Life) -> int:
    return int(life.name.rsplit("-", 1)[1])


def ready_count(sc: Scenario, name: str, n: int):
    return pods.until(f"{name}: {n} ready replicas", lambda s: (s.get("StatefulSet", name) or {}).get("status", {}).get("readyReplicas", 0) == n or None)


def most_at_once(spans: Iterable[tuple[float, float]]) -> int:
    """The most of ``spans`` (``(start, end)``, seconds on one clock; ``end`` may be ``inf``) open
    at one instant; one that ends when another starts is not counted twice."""
    edges = sorted(e for start, end in spans for e in ((start, 1), (end, -1)))
    most = now = 0
    for _, step in edges:
        now += step
        most = max(most, now)
    return most


def max_not_ready_at_once(items: list[Life]) -> int:
    """The most pods that existed, not yet Ready, at one instant (by receive times)."""
    return most_at_once((x.added, x.ready if x.ready is not None else x.gone or float("inf")) for x in items)


def scale(sc: Scenario, name: str, replicas: int) -> float:
    at = time.time()
    sc.patch("StatefulSet", name, {"spec": {"replicas": replicas}})
    return at


def sts_values(**kw: object) -> dict[str, object]:
    return {"ready_after_s": doc.READY_AFTER_S, "term_exit_s": doc.TERM_EXIT_S, "partition": 0, **kw}


# -- ST-1 ------------------------------------------------------------------------------------


@pytest.mark.case("ST-1")
@pytest.mark.record(*RECORD)
def test_ordered_ready_and_parallel(scenario: Scenario):
    """ST-1: the API's defaults (dry run, maxUnavailable keyed by the live gate); OrderedReady:
    k+1 created at Ready(k) + [0, 2] s, scale-down 2, 1, 0 each after the previous is gone;
    Parallel: 3 created and 3 deleted within 2 s."""
    sc = scenario
    gate = gates.api_server(sc.kube)
    sc.note("MaxUnavailableStatefulSet", gate.describe("MaxUnavailableStatefulSet"))
    sc.expect("ST-1", "max_unavailable_gate", gate.enabled("MaxUnavailableStatefulSet"))
    # the controller manager runs the rolling update (ST-3): its own gate, for the record
    sc.note("MaxUnavailableStatefulSet (controller manager)",
            sc.controller_manager_gates().describe("MaxUnavailableStatefulSet"))
    spec = sc.apply("defaults.yaml", dry_run=True, name="seed")[-1]["spec"]
    rolling = (spec.get("updateStrategy") or {}).get("rollingUpdate") or {}
    retention = spec.get("persistentVolumeClaimRetentionPolicy") or {}
    defaults = {"podManagementPolicy": spec.get("podManagementPolicy"), "updateStrategy.type": (spec.get("updateStrategy") or {}).get("type"),
                "partition": rolling.get("partition"), "whenDeleted": retention.get("whenDeleted"),
                "whenScaled": retention.get("whenScaled"), "replicas": spec.get("replicas"),
                "revisionHistoryLimit": spec.get("revisionHistoryLimit"), "maxUnavailable": rolling.get("maxUnavailable", "absent")}
    for key, value in defaults.items():
        sc.expect("ST-1", f"default[{key}]", str(value), details={"spec": spec} if key == "maxUnavailable" else None)

    budget = 3 * (doc.READY_AFTER_S + doc.CONTROLLER_S) + PODS_SLACK_S
    for policy, name in (("OrderedReady", "o"), ("Parallel", "p")):
        sc.apply("sts.yaml", name=name, replicas=3, policy=policy, **sts_values())
    for name in ("o", "p"):
        sc.wait(ready_count(sc, name, 3), budget)
    ordered = sorted(lives(sc, "o"), key=ordinal)
    for prev, nxt in zip(ordered, ordered[1:], strict=False):
        sc.expect("ST-1", "next_created_after_ready_s[OrderedReady]", nxt.added - (prev.ready or float("nan")), around=nxt.added,
                  details={"previous": prev.name, "next": nxt.name})
    sc.expect("ST-1", "not_ready_at_once_max[OrderedReady]", max_not_ready_at_once(ordered))
    parallel = lives(sc, "p")
    sc.expect("ST-1", "created_spread_s[Parallel]", max(x.added for x in parallel) - min(x.added for x in parallel))

    started = time.time()
    for name in ("o", "p"):
        scale(sc, name, 0)
    for i in range(3):
        sc.wait(pods.pod_gone(f"o-{i}"), 3 * (doc.TERM_EXIT_S + doc.CONTROLLER_S) + PODS_SLACK_S)
        sc.wait(pods.pod_gone(f"p-{i}"), WAIT_SLACK_S)
    down = sorted((x for x in lives(sc, "o") if x.deleting and x.deleting >= started), key=lambda x: x.deleting or 0)
    sc.expect("ST-1", "scale_down_order[OrderedReady]", ",".join(str(ordinal(x)) for x in down))
    for prev, nxt in zip(down, down[1:], strict=False):
        sc.expect("ST-1", "next_deleted_after_gone_s[OrderedReady]", (nxt.deleting or 0) - (prev.gone or float("nan")),
                  around=nxt.deleting, details={"previous": prev.name, "next": nxt.name})
    deleted = [x.deleting for x in lives(sc, "p") if x.deleting]
    sc.expect("ST-1", "deleted_spread_s[Parallel]", max(deleted) - min(deleted), details={"deleted": len(deleted)})


# -- ST-2 ------------------------------------------------------------------------------------


def _revisions(sc: Scenario, name: str) -> dict:
    return (sc.get("StatefulSet", name) or {}).get("status") or {}


def _rolled(sc: Scenario, name: str, updated: int):
    def check(s) -> dict | None:
        st = _revisions(s, name)
        return st if st.get("updatedReplicas") == updated and st.get("readyReplicas") == 4 else None
    return pods.until(f"{name}: {updated} updated, 4 ready", check)


def _revisions_met(sc: Scenario, name: str) -> bool | None:
    st = _revisions(sc, name)
    return st.get("currentRevision") == st.get("updateRevision") or None


def _replaced(sc: Scenario, since: float) -> list[Life]:
    return sorted((x for x in lives(sc, "r") if x.deleting and x.deleting >= since and x.added < since), key=lambda x: x.deleting or 0)


@pytest.mark.case("ST-2")
@pytest.mark.record(*RECORD)
def test_rolling_update_with_partition(scenario: Scenario):
    """ST-2: 4 replicas, partition 2, an env change: ordinals 3 then 2 replaced, each deletion at
    the previous new pod's Ready + [0, 2] s, updatedReplicas 2, revisions differ; partition 0:
    1 then 0, revisions equal."""
    sc = scenario
    sc.apply("sts.yaml", name="r", replicas=4, policy="OrderedReady", **sts_values(partition=2))
    sc.wait(ready_count(sc, "r", 4), 4 * (doc.READY_AFTER_S + doc.CONTROLLER_S) + PODS_SLACK_S)
    step_budget = 2 * (doc.TERM_EXIT_S + doc.READY_AFTER_S + 2 * doc.CONTROLLER_S) + PODS_SLACK_S
    rollout = [("partition-2", {"spec": {"template": {"spec": {"containers": [{"name": "app", "env": [{"name": "VERSION", "value": "2"}]}]}}}}, 2),
               ("partition-0", {"spec": {"updateStrategy": {"rollingUpdate": {"partition": 0}}}}, 4)]
    for label, body, updated in rollout:
        since = time.time()
        sc.patch("StatefulSet", "r", body)
        status = sc.wait(_rolled(sc, "r", updated), step_budget)
        replaced = _replaced(sc, since)
        sc.expect("ST-2", f"replaced_order[{label}]", ",".join(str(ordinal(x)) for x in replaced))
        if label == "partition-2":
            sc.expect("ST-2", f"updated_replicas[{label}]", status.get("updatedReplicas"))
        if label == "partition-0":
            sc.wait_for("currentRevision = updateRevision", lambda: _revisions_met(sc, "r"), WAIT_SLACK_S)
        st = _revisions(sc, "r")
        sc.expect("ST-2", f"revisions_differ[{label}]", st.get("currentRevision") != st.get("updateRevision"),
                  details={"currentRevision": st.get("currentRevision"), "updateRevision": st.get("updateRevision")})
        news = {x.name: x for x in lives(sc, "r", since)}
        for prev, nxt in zip(replaced, replaced[1:], strict=False):
            new = news.get(prev.name)
            sc.expect("ST-2", f"next_deleted_after_ready_s[{label}]", (nxt.deleting or 0) - (new.ready if new and new.ready else float("nan")),
                      around=nxt.deleting, details={"new": prev.name, "next": nxt.name})


# -- ST-5 ------------------------------------------------------------------------------------


@pytest.mark.case("ST-5")
@pytest.mark.record(*RECORD)
def test_identity_and_min_ready_seconds(scenario: Scenario):
    """ST-5: (a) ordinals from 5, hostname and subdomain; a deleted ordinal is recreated only once
    the old pod is gone (grace 10 s, TERM ignored), a Deployment's pod at once; (b) minReadySeconds
    10: availableReplicas 1 at Ready + 10 s."""
    sc = scenario
    sc.apply("identity.yaml", grace_s=doc.ST5_GRACE_S, min_ready_s=doc.MIN_READY_S)
    for pod in ("s-5", "s-6", "m-0"):
        sc.wait(pods.pod_ready(pod), PODS_SLACK_S)
    deployment_pod = sc.wait_for("the Deployment's pod Ready", lambda: next(
        (p["metadata"]["name"] for p in sc.kube.pods(sc.namespace) if p["metadata"]["name"].startswith("d-")
         and (pods.condition(p, "Ready") or {}).get("status") == "True"), None), PODS_SLACK_S)
    names = sorted(x.name for x in lives(sc, "s"))
    sc.expect("ST-5", "pod_names", ",".join(names))
    specs = [sc.pod(n)["spec"] for n in names]
    sc.expect("ST-5", "hostname_is_pod_name", all(s.get("hostname") == n for s, n in zip(specs, names, strict=True)),
              details={n: (s.get("hostname"), s.get("subdomain")) for s, n in zip(specs, names, strict=True)})
    sc.expect("ST-5", "subdomain_is_service", all(s.get("subdomain") == "s" for s in specs))

    # (b) minReadySeconds: the StatefulSet's availableReplicas after the pod's Ready
    ready_at = next(x.ready for x in lives(sc, "m") if x.ready)
    available = sc.wait_for("m: availableReplicas 1", lambda: next(
        (ch.received_at for ch in sc.recorder.changes("StatefulSet", "m")
         if ((ch.obj.get("status") or {}).get("availableReplicas") or 0) >= 1), None),
        doc.MIN_READY_S + 1 + doc.CONTROLLER_S + WAIT_SLACK_S)
    sc.expect("ST-5", "available_after_ready_s", available - (ready_at or float("nan")), around=available)

    # (a) the same delete to the StatefulSet's and the Deployment's pod
    old = {x.name: x.uid for x in lives(sc, "s")}
    deleted_at = {"statefulset": sc.delete_pod("s-5"), "deployment": sc.delete_pod(deployment_pod)}
    budget = doc.RECREATE_AFTER_DELETE_S + 2 * doc.CONTROLLER_S + PODS_SLACK_S

    def new_sts_pod():
        return next((x.added for x in lives(sc, "s") if x.name == "s-5" and x.uid != old["s-5"]), None)

    def new_deployment_pod():
        return next((ch.received_at for ch in sc.recorder.changes("Pod") if ch.type == "ADDED" and ch.received_at > deleted_at["deployment"]
                     and ch.obj["metadata"]["name"].startswith("d-")), None)
    created = {"deployment": sc.wait_for("the Deployment's replacement", new_deployment_pod, WAIT_SLACK_S),
               "statefulset": sc.wait_for("s-5 recreated", new_sts_pod, budget)}
    for kind, at in created.items():
        sc.expect("ST-5", f"recreated_after_delete_s[{kind}]", at - deleted_at[kind], around=at)


# -- ST-3 ------------------------------------------------------------------------------------


def max_unavailable(sc: Scenario, prefix: str, replicas: int, since: float, until: float) -> int:
    """The most ordinals of ``prefix`` not Ready (missing, not Ready or terminating) at one
    instant of the recording between ``since`` and ``until``."""
    latest: dict[str, dict | None] = {}
    most = 0
    for ch in sc.recorder.changes("Pod"):
        name = ch.name or ""
        if not name.startswith(f"{prefix}-"):
            continue
        latest[name] = None if ch.type == "DELETED" else ch.obj
        if since <= ch.received_at <= until:
            available = sum(1 for i in range(replicas) if (o := latest.get(f"{prefix}-{i}")) is not None
                            and not o["metadata"].get("deletionTimestamp")
                            and (pods.condition(o, "Ready") or {}).get("status") == "True")
            most = max(most, replicas - available)
    return most


@pytest.mark.case("ST-3")
@pytest.mark.record(*RECORD)
@pytest.mark.parametrize("profile", ["default", GATES_1_34])
def test_max_unavailable_rolling_update(scenario: Scenario, profile: str):
    """ST-3: 5 replicas, ``maxUnavailable: 2``, (a) Parallel and (b) OrderedReady, an env change
    rolled: the field as stored, the most replicas unavailable at once, the first deletions
    (from the top) — keyed by the MaxUnavailableStatefulSet gate the cluster runs (read live: the
    API server's for the field, the controller manager's for the update). On the gates as shipped,
    and on 1.34 once more with the gate on (profile ``gates-1.34``)."""
    sc = scenario
    api = gates.api_server(sc.kube)
    controller = sc.controller_manager_gates()
    sc.note("MaxUnavailableStatefulSet", f"{api.describe('MaxUnavailableStatefulSet')}; "
            f"{controller.describe('MaxUnavailableStatefulSet')}")
    stored_key = gates.gate_key(api.enabled("MaxUnavailableStatefulSet"))
    update_key = gates.gate_key(controller.enabled("MaxUnavailableStatefulSet"))
    for policy, name in (("Parallel", "pa"), ("OrderedReady", "or")):
        stored = sc.apply("rolling.yaml", name=name, policy=policy, ready_after_s=doc.READY_AFTER_S)[-1]
        field = ((stored["spec"].get("updateStrategy") or {}).get("rollingUpdate") or {}).get("maxUnavailable")
        sc.expect("ST-3", f"max_unavailable_field[{stored_key}][{policy}]", "absent" if field is None else str(field))
    for name in ("pa", "or"):
        sc.wait(ready_count(sc, name, 5), 5 * (doc.READY_AFTER_S + doc.CONTROLLER_S) + PODS_SLACK_S)
    since = time.time()
    generation = {}
    for name in ("pa", "or"):
        answer = sc.patch("StatefulSet", name, {"spec": {"template": {"spec": {"containers": [{"name": "app", "env": [{"name": "VERSION", "value": "2"}]}]}}}})
        generation[name] = answer["metadata"]["generation"]
    budget = 5 * (doc.TERM_EXIT_S + doc.READY_AFTER_S + 2 * doc.CONTROLLER_S) + PODS_SLACK_S

    def rolled(s, name: str) -> bool | None:
        # the status right after the patch still describes the old template: wait for the
        # controller to have seen the new generation and for both revisions to meet
        st = (s.get("StatefulSet", name) or {}).get("status") or {}
        return (st.get("observedGeneration", 0) >= generation[name] and st.get("updatedReplicas") == 5
                and st.get("readyReplicas") == 5 and st.get("currentRevision") == st.get("updateRevision")) or None
    for name in ("pa", "or"):
        sc.wait(pods.until(f"{name}: 5 updated and ready", lambda s, n=name: rolled(s, n)), budget)
    until = time.time()
    for policy, name in (("Parallel", "pa"), ("OrderedReady", "or")):
        deleted = sorted((x for x in lives(sc, name) if x.deleting and x.deleting >= since and x.added < since), key=lambda x: x.deleting or 0)
        first_two = [x for x in deleted if (x.deleting or 0) - (deleted[0].deleting or 0) <= doc.CONTROLLER_S]
        sc.expect("ST-3", f"max_unavailable_seen[{update_key}][{policy}]", max_unavailable(sc, name, 5, since, until),
                  details={"deletion_order": [x.name for x in deleted]})
        sc.expect("ST-3", f"deleted_first[{update_key}][{policy}]", ",".join(str(ordinal(x)) for x in first_two))


# -- ST-4 ------------------------------------------------------------------------------------


def _claims(sc: Scenario, prefix: str) -> str:
    items = sc.kube.core.list_namespaced_persistent_volume_claim(sc.namespace).items
    return ",".join(sorted(c.metadata.name for c in items if c.metadata.name.startswith(prefix)
                           and not c.metadata.deletion_timestamp))


@pytest.mark.case("ST-4")
@pytest.mark.record(*RECORD)
def test_pvc_retention_policy(scenario: Scenario):
    """ST-4: 3 replicas with a claim template (static hostPath volumes: no provisioner offline):
    (a) Retain/Retain, (b) whenScaled Delete, (c) whenDeleted Delete; scale 3 → 1, then delete
    the set: which claims stay; (b) a condemned pod's claim goes after the pod."""
    sc = scenario
    variants = {"retain": ("a", "Retain", "Retain"), "when-scaled-delete": ("b", "Retain", "Delete"),
                "when-deleted-delete": ("c", "Delete", "Retain")}
    for name, when_deleted, when_scaled in variants.values():
        sc.apply("pvc.yaml", name=name, cls=f"{sc.namespace}-{name}", when_deleted=when_deleted, when_scaled=when_scaled)
    for name, *_ in variants.values():
        sc.wait(ready_count(sc, name, 3), PODS_SLACK_S)
    for name, *_ in variants.values():
        scale(sc, name, 1)
    for name, *_ in variants.values():
        for i in (1, 2):
            sc.wait(pods.pod_gone(f"{name}-{i}"), PODS_SLACK_S)
    for i in (1, 2):
        gone_at = sc.recorder.changes("Pod", f"b-{i}")[-1].received_at
        claim_gone = sc.wait_for(f"data-b-{i} gone", lambda i=i: time.time() if f"data-b-{i}" not in _claims(sc, "data-b-").split(",") else None,
                                 doc.PVC_GONE_S + WAIT_SLACK_S)
        sc.expect("ST-4", "claim_gone_after_pod_gone_s", claim_gone - gone_at, around=claim_gone)
    for label, (name, *_) in variants.items():
        sc.expect("ST-4", f"claims_after_scale_down[{label}]", _claims(sc, f"data-{name}-"))
    for name, *_ in variants.values():
        sc.delete("StatefulSet", name, propagation="Background")
    for name, *_ in variants.values():
        sc.wait(pods.pod_gone(f"{name}-0"), PODS_SLACK_S)
    sc.wait_for("data-c-* gone", lambda: _claims(sc, "data-c-") == "" or None, doc.PVC_GONE_S + WAIT_SLACK_S)
    time.sleep(doc.PVC_GONE_S)  # what should stay has had the time to go
    for label, (name, *_) in variants.items():
        sc.expect("ST-4", f"claims_after_delete[{label}]", _claims(sc, f"data-{name}-"))
