"""DR-5 and DR-6 — Job failure policy and back-off (CASES-faults.md §1.3 C31–C33, §1.4, §4 DR-5, DR-6).

DR-5: a Job (backoffLimit 0, restartPolicy Never) whose pod is disrupted — by the Eviction API,
by a NoExecute taint (the taint-eviction controller), by a plain DELETE — with and without a
``podFailurePolicy`` rule ``Ignore onPodConditions DisruptionTarget``. With the rule a disruption
is not counted: ``status.failed`` stays 0, the replacement comes only once the old pod is Failed
(``podReplacementPolicy`` Failed) and the Job completes. A DELETE, or no rule, fails the Job.

DR-6: a Job whose pods exit 1: the next pod comes 10, 20, 40 s after the previous one finished,
then ``BackoffLimitExceeded``.

The taint variant taints the shared node (e2e.faults.node_tainted, the NF-3 test taint): it is
``serial``, first gives CoreDNS and local-path-provisioner a toleration for the test key (they
would be evicted too), and always removes the taint (then the health check) and restores them.
"""

from __future__ import annotations

import json

import pytest

from e2e.documented import disruption as doc
from e2e.faults import addons_tolerate, node_tainted
from e2e.record.pods import condition
from e2e.run.scenario import Scenario
from e2e.record.timeline import parse_time
from e2e.base.waiting import PODS_SLACK_S
from scenarios.jobs.job_helpers import finished_at, job, job_finished, terminated

from .disruption_helpers import name_of, pods, running

RECORD = ("Pod", "Event", "Job")
IGNORE_DISRUPTIONS = {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}


def phase_seen(sc: Scenario, pod: str, phase: str):
    """The first recorded change in which ``pod`` has ``phase``."""
    return next((ch for ch in sc.recorder.changes("Pod", pod) if (ch.obj.get("status") or {}).get("phase") == phase), None)


def disrupt(sc: Scenario, variant: str, pod: str, node: str) -> None:
    """Disrupt ``pod`` as ``variant`` says and wait until it is Failed (the taint, if any, is
    removed then: the replacement could not schedule on the tainted only node)."""
    failed = lambda: phase_seen(sc, pod, "Failed")  # noqa: E731
    if variant == "taint":
        with addons_tolerate(sc), node_tainted(sc, node):
            sc.wait_for(f"{pod} Failed", failed, PODS_SLACK_S)
        return
    if variant in ("evict", "no-policy"):
        answer = sc.evict(pod)
        sc.require(answer.status == 201, f"the eviction of {pod} is accepted: {answer}")
    else:
        sc.delete("Pod", pod)
    sc.wait_for(f"{pod} Failed", failed, PODS_SLACK_S)


VARIANTS = ["evict", pytest.param("taint", marks=[pytest.mark.serial, pytest.mark.node_faults("node_tainted", case="DR-5")]), "delete", "no-policy"]


@pytest.mark.record(*RECORD)
@pytest.mark.case("DR-5")
@pytest.mark.parametrize("variant", VARIANTS)
def test_pod_failure_policy(scenario: Scenario, variant: str):
    """DR-5 (a) evict / (b) taint with the Ignore rule: not counted, the replacement after the
    old pod is Failed, the Job completes. (c) plain DELETE with the rule / (d) eviction without
    it: failed 1, BackoffLimitExceeded."""
    sc = scenario
    marker = f"/tmp/e2e-dr5/{sc.namespace}"
    policy = "null" if variant == "no-policy" else json.dumps(IGNORE_DISRUPTIONS)
    sc.apply("job.yaml", policy=policy, grace=doc.DR5_GRACE_S, term_delay_s=doc.DR5_TERM_DELAY_S, marker_dir=marker)
    try:
        first = sc.wait_for("the Job's pod running", lambda: next((name_of(p) for p in pods(sc, **{"job-name": "job"}) if running(p)), None),
                            PODS_SLACK_S)
        disrupt(sc, variant, first, sc.pod(first)["spec"]["nodeName"])
        finished = sc.wait_for("the Job Complete or Failed", lambda: job_finished(sc), 2 * PODS_SLACK_S)
    finally:
        sc.node_exec("rm", "-rf", marker)

    status = job(sc).get("status") or {}
    details = {"job_status": status}
    sc.expect("DR-5", f"failed[{variant}]", status.get("failed", 0), details=details)
    sc.expect("DR-5", f"job_condition[{variant}]", finished.get("type"), details=details)
    if variant in ("delete", "no-policy"):
        sc.expect("DR-5", f"job_failed_reason[{variant}]", finished.get("reason"), details=details)
        sc.expect("DR-5", f"job_failed_message[{variant}]", finished.get("message"), details=details)
        return

    old = phase_seen(sc, first, "Failed")
    target = condition(old.obj, "DisruptionTarget") or {}
    sc.expect("DR-5", f"disruption_target_reason[{variant}]", target.get("reason"), details={"condition": target})
    sc.expect("DR-5", f"disruption_target_message[{variant}]", target.get("message"), details={"condition": target})
    sc.expect("DR-5", f"old_pod_exit_code[{variant}]", (terminated(sc, first) or {}).get("exitCode"))
    sc.expect("DR-5", f"succeeded[{variant}]", status.get("succeeded", 0), details=details)
    history = [ch.obj.get("status") or {} for ch in sc.recorder.changes("Job", "job")]
    sc.expect("DR-5", f"max_terminating[{variant}]", max(s.get("terminating", 0) for s in history),
              details={"job_status_history": history})
    sc.expect("DR-5", f"max_active_while_terminating[{variant}]",
              max((s.get("active", 0) for s in history if s.get("terminating", 0) > 0), default=0),
              details={"job_status_history": history})
    replacement = next(ch for ch in sc.recorder.changes("Pod") if ch.name != first and ch.type == "ADDED")
    sc.expect("DR-5", f"replacement_after_old_failed_s[{variant}]", round(replacement.received_at - old.received_at, 3),
              around=old.received_at, details={"replacement": replacement.name})
    finished = finished_at(sc, first)
    sc.expect("DR-5", f"replacement_gap_s[{variant}]",
              None if finished is None else round(parse_time(replacement.obj["metadata"]["creationTimestamp"]) - finished, 3),
              around=replacement.received_at, details={"replacement": replacement.name})


@pytest.mark.case("DR-5")
def test_indexed_job_defaults(scenario: Scenario):
    """DR-5: the seed's Indexed Job, server dry run: backoffLimit 2147483647 (backoffLimitPerIndex),
    podReplacementPolicy Failed (podFailurePolicy), completionMode Indexed."""
    sc = scenario
    (obj,) = sc.apply("job-indexed.yaml", dry_run=True)
    spec = obj["spec"]
    sc.expect("DR-5", "indexed_defaults", f"{spec.get('backoffLimit')} {spec.get('podReplacementPolicy')} {spec.get('completionMode')}",
              details={"spec": {k: spec.get(k) for k in ("backoffLimit", "backoffLimitPerIndex", "podReplacementPolicy", "completionMode")}})


@pytest.mark.slow
@pytest.mark.record(*RECORD)
@pytest.mark.case("DR-6")
def test_backoff(scenario: Scenario):
    """DR-6: backoffLimit 3, pods exiting 1: four pods, the next created 10, 20, 40 s after the
    previous one finished, then Failed BackoffLimitExceeded; backoffLimit defaults to 6."""
    sc = scenario
    (dry,) = sc.apply("job-backoff.yaml", dry_run=True, backoff_limit="null")
    sc.expect("DR-6", "default_backoff_limit", dry["spec"].get("backoffLimit"))
    sc.apply("job-backoff.yaml", backoff_limit=doc.DR6_BACKOFF_LIMIT)
    budget = sum(sc.judge.wait_budget_s("DR-6", f"backoff_gap_s[{i}]") for i in (1, 2, 3)) + 2 * PODS_SLACK_S
    finished = sc.wait_for("the Job Complete or Failed", lambda: job_finished(sc), budget)

    last = {}
    for ch in sc.recorder.changes("Pod"):
        if ch.type != "DELETED":
            last[ch.name] = ch.obj
    ordered = sorted(last.values(), key=lambda p: parse_time(p["metadata"]["creationTimestamp"]))
    finished_at = [parse_time(((cs.get("state") or {}).get("terminated") or {}).get("finishedAt"))
                   for p in ordered for cs in (p.get("status") or {}).get("containerStatuses") or []]
    created = [parse_time(p["metadata"]["creationTimestamp"]) for p in ordered]
    details = {"pods": [{"name": name_of(p), "created": p["metadata"]["creationTimestamp"],
                         "finishedAt": [((cs.get("state") or {}).get("terminated") or {}).get("finishedAt")
                                        for cs in (p.get("status") or {}).get("containerStatuses") or []]} for p in ordered]}
    sc.expect("DR-6", "pods_total", len(ordered), details=details)
    for i in range(1, min(len(ordered), len(finished_at) + 1, doc.DR6_BACKOFF_LIMIT + 1)):
        prev_done = finished_at[i - 1]
        sc.expect("DR-6", f"backoff_gap_s[{i}]", None if prev_done is None else round(created[i] - prev_done, 3), details=details)
    sc.expect("DR-6", "job_condition", finished.get("type"), details=details)
    sc.expect("DR-6", "job_failed_reason", finished.get("reason"), details=details)
    sc.expect("DR-6", "job_failed_message", finished.get("message"), details=details)
