"""DR-3 — rolling-update arithmetic (CASES-faults.md §1.3 C18–C23, §4 DR-3).

The new pods of a rollout become Ready only when the test writes their readiness file (exec
probe, web.yaml), one pod at a time, each only after the previous one is Ready: every
intermediate ReplicaSet size the controller chooses is visible in the recording (a watch on
ReplicaSets and the Deployment). Judged: the largest sum of the ReplicaSets' ``spec.replicas``,
the smallest ``status.availableReplicas`` of the Deployment during the rollout, and the
``max-replicas`` annotation; a 0/0 strategy is refused; old pods that ignore SIGTERM push the
pod count over replicas + maxSurge (``status.terminatingReplicas`` on 1.35+). A real rollout
of the lifecycle-app with maxUnavailable 0 under HTTP load through the NodePort loses no request.
"""

from __future__ import annotations

import datetime as dt
import logging
import time

import pytest

from e2e.cluster.kube import ApiRefused
from e2e.documented import disruption as doc
from e2e.evidence.load import LoadGenerator, answering_pods
from e2e.run.scenario import Scenario
from e2e.base.waiting import PODS_SLACK_S, WaitTimeout

from .disruption_helpers import (Over, deployment_status, is_ready, make_ready, name_of, pods, replicaset_sum,
                                rollout_complete, running, start_rollout, terminating, wait_ready, web_values)

log = logging.getLogger(__name__)

RECORD = ("Pod", "Event", "ReplicaSet", "Deployment")
# Per new pod of a stepped rollout: creation, start, one readiness period, the controller's next step.
STEP_BUDGET_S = 15
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
REVISION = "deployment.kubernetes.io/revision"
LOAD_RATE_PER_S = 20
LOAD_TIMEOUT_S = 1.0
TAIL_S = 2.0


def newest_replicaset(sc: Scenario) -> dict:
    """The ReplicaSet of the newest template (highest ``deployment.kubernetes.io/revision``)."""
    def revision(rs: dict) -> int:
        return int(((rs.get("metadata") or {}).get("annotations") or {}).get(REVISION, 0))
    current = [sc.recorder.latest("ReplicaSet", name) for name in {ch.name for ch in sc.recorder.changes("ReplicaSet")}]
    return max((rs for rs in current if rs), key=revision, default={})


def step_rollout(sc: Scenario, replicas: int, generation: int) -> None:
    """Make the rollout's new pods Ready one by one, each after the previous one is Ready,
    until the rollout is complete."""
    stepped: list[str] = []

    def step() -> bool:
        if rollout_complete(sc.get("Deployment", "web"), generation):
            return True
        if stepped and not is_ready(sc.pod(stepped[-1])):
            return False
        waiting = [p for p in pods(sc, app="web", rev="2")
                   if running(p) and not is_ready(p) and not terminating(p) and name_of(p) not in stepped]
        if waiting:
            stepped.append(name_of(waiting[0]))
            make_ready(sc, stepped[-1])
        return False

    sc.wait_for("the stepped rollout complete", step, PODS_SLACK_S + replicas * STEP_BUDGET_S)


def judge_rollout(sc: Scenario, variant: str, since: float, until: float) -> tuple[Over, Over]:
    sums = replicaset_sum(sc, since, until)
    available = deployment_status(sc, "availableReplicas", since, until)
    rs = newest_replicaset(sc)
    annotation = (rs.get("metadata") or {}).get("annotations", {}).get(MAX_REPLICAS)
    details = {"max_sum_at_s": round(sums.max_at - since, 3), "min_available_at_s": round(available.min_at - since, 3)}
    sc.expect("DR-3", f"max_replicaset_sum[{variant}]", sums.max, around=sums.max_at, details=details)
    sc.expect("DR-3", f"min_available[{variant}]", available.min, around=available.min_at, details=details)
    sc.expect("DR-3", f"max_replicas_annotation[{variant}]", annotation, details={"replicaset": (rs.get("metadata") or {}).get("name")})
    log.info("DR-3 %s: max ReplicaSet sum %s (at +%.1f s), min available %s (at +%.1f s)", variant, sums.max,
             sums.max_at - since, available.min, available.min_at - since)
    return sums, available


@pytest.mark.record(*RECORD)
@pytest.mark.case("DR-3")
@pytest.mark.parametrize("variant", ["surge-25-unavailable-0", "surge-25-unavailable-25", "one-replica-unavailable-25"])
def test_stepped_rollout(scenario: Scenario, variant: str):
    """DR-3 (a)–(c): the ReplicaSet sum never exceeds replicas + ceil(maxSurge) and reaches it;
    availability never drops below replicas − floor(maxUnavailable) and reaches it (with 1
    replica and 0 / 25 %: unavailable becomes 1, the old pod goes first)."""
    sc = scenario
    replicas, surge, unavailable = doc.DR3_VARIANTS[variant]
    sc.apply("web.yaml", **web_values(replicas, surge, unavailable))
    wait_ready(sc, replicas, app="web")
    sc.wait_for("the first rollout complete", lambda: rollout_complete(sc.get("Deployment", "web")), PODS_SLACK_S)
    since = time.time()
    generation = start_rollout(sc, stepped=True)
    step_rollout(sc, replicas, generation)
    judge_rollout(sc, variant, since, time.time())


@pytest.mark.case("DR-3")
def test_zero_zero_refused(scenario: Scenario):
    """DR-3 (d): maxSurge 0 and maxUnavailable 0 fail validation (server dry run)."""
    sc = scenario
    with pytest.raises(ApiRefused) as refused:
        sc.apply("web.yaml", dry_run=True, **web_values(1, 0, 0))
    body = refused.value.body
    sc.expect("DR-3", "rejected_status[zero-zero]", refused.value.status, details={"answer": body})
    sc.expect("DR-3", "rejected_message[zero-zero]", body.get("message"), details={"answer": body}, deployment="web")


@pytest.mark.record(*RECORD)
@pytest.mark.case("DR-3")
def test_terminating_pods_not_counted(scenario: Scenario):
    """DR-3 (e): old pods that ignore SIGTERM (grace 60 s) stay Terminating while the rollout
    goes on: more pods exist than replicas + maxSurge; ``status.terminatingReplicas`` counts
    them on 1.35+, the field is absent on 1.34."""
    sc = scenario
    replicas = doc.DR3_TERMINATING_REPLICAS
    sc.apply("web.yaml", **web_values(replicas, 1, 0, grace=doc.DR3_TERMINATING_GRACE_S, ignore_term=True))
    wait_ready(sc, replicas, app="web")
    sc.wait_for("the first rollout complete", lambda: rollout_complete(sc.get("Deployment", "web")), PODS_SLACK_S)
    since = time.time()
    generation = start_rollout(sc, stepped=False)
    sc.wait_for("the rollout complete with the old pods still Terminating",
                lambda: rollout_complete(sc.get("Deployment", "web"), generation)
                and sum(1 for p in pods(sc, app="web", rev="1") if terminating(p)) == replicas,
                PODS_SLACK_S + replicas * STEP_BUDGET_S)
    try:
        sc.wait_for("status.terminatingReplicas to count them",
                    lambda: ((sc.get("Deployment", "web") or {}).get("status") or {}).get("terminatingReplicas") == replicas,
                    STEP_BUDGET_S)
    except WaitTimeout:
        pass  # judged below from the recording (absent on 1.34)
    until = time.time()
    existing, count = Over(), set()
    for ch in sc.recorder.changes("Pod"):
        count.discard(ch.name) if ch.type == "DELETED" else count.add(ch.name)
        if since <= ch.received_at <= until:
            existing.see(len(count), ch.received_at)
    sc.expect("DR-3", "max_pods[terminating]", existing.max, around=existing.max_at)
    seen = [(ch.obj.get("status") or {})["terminatingReplicas"] for ch in sc.recorder.changes("Deployment", "web")
            if "terminatingReplicas" in (ch.obj.get("status") or {})]
    sc.expect("DR-3", "terminating_replicas[terminating]", max(seen) if seen else "absent", details={"values_seen": seen})


# -- traffic ---------------------------------------------------------------------------------
@pytest.mark.heavy
@pytest.mark.record(*RECORD, "EndpointSlice")
@pytest.mark.case("DR-3")
def test_rollout_under_load(scenario: Scenario):
    """DR-3 traffic: a real rollout (restart) of 2 lifecycle-app pods in drain mode with
    maxSurge 1, maxUnavailable 0, under constant HTTP load on new connections through
    the NodePort on 127.0.0.1: zero failed requests; sum ≤ 3 and available ≥ 2 throughout."""
    sc = scenario
    url = sc.node_port_url()
    replicas, surge, unavailable = doc.DR3_VARIANTS["traffic"]
    values = dict(replicas=replicas, max_surge=surge, max_unavailable=unavailable, drain_delay=f"{doc.DR3_DRAIN_DELAY_S}s",
                  readiness_period=doc.READINESS_PERIOD_S)
    sc.apply_node_port("traffic.yaml", **values)
    try:
        old = wait_ready(sc, replicas, app="web")
        sc.wait_for("the first rollout complete", lambda: rollout_complete(sc.get("Deployment", "web")), PODS_SLACK_S)
        seen: set[str] = set()
        sc.wait_for(f"both pods answering on {url}", lambda: set(old) <= answering_pods(url, seen), PODS_SLACK_S, interval_s=0.1)
        budget = 2 * (doc.DR3_DRAIN_DELAY_S + STEP_BUDGET_S) + PODS_SLACK_S
        gen = LoadGenerator(url, LOAD_RATE_PER_S, duration_s=budget + 2 * TAIL_S, mode="new",
                            timeout_s=LOAD_TIMEOUT_S).start()
        try:
            # documented wait: a clean baseline before the rollout
            time.sleep(TAIL_S)
            since = time.time()
            stamp = dt.datetime.now(dt.timezone.utc).isoformat()
            patched = sc.patch("Deployment", "web", {"spec": {"template": {"metadata": {"annotations": {
                "kubectl.kubernetes.io/restartedAt": stamp}}}}})
            sc.wait_for("the old pods gone and the rollout complete",
                        lambda: rollout_complete(sc.get("Deployment", "web"), patched["metadata"]["generation"])
                        and all((sc.recorder.changes("Pod", p) or [None])[-1].type == "DELETED" for p in old), budget)
            until = time.time()
            # documented wait: keep the load TAIL_S longer, so failures that come late are counted
            time.sleep(TAIL_S)
        finally:
            gen.stop()
            result = gen.result()
    finally:
        sc.release_node_port()
    sc.add_file("requests.txt", result.to_text(result.started_at))
    judge_rollout(sc, "traffic", since, until)
    sc.judge.expect("DR-3", "failed_requests[traffic]", len(result.failures),
                    details={"summary": result.summary(), "failures_by_class": result.failures_by_class()},
                    context=result.summary())
