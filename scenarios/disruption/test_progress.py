"""DR-4 — the progress deadline (CASES-faults.md §1.3 C22, §4 DR-4).

``progressDeadlineSeconds: 30``; the new pods become Ready only when the test writes their
readiness file (web.yaml). (a) never: the Deployment's Progressing condition turns False,
``ProgressDeadlineExceeded``, 30–33 s after its last ``lastUpdateTime``, and nothing more
happens (no rollback, old pods untouched). (b) one pod every 20 s: the rollout takes longer
than the deadline but never times out, because the deadline counts from the last progress.
The real ``kubectl rollout status`` runs alongside each (e2e.evidence.kubectl) and its verdict is judged.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from e2e.documented import disruption as doc
from e2e.evidence.kubectl import Transcript, kubectl_flags, run
from e2e.record.pods import condition
from e2e.run.scenario import Scenario
from e2e.record.timeline import parse_time
from e2e.base.waiting import PODS_SLACK_S

from .disruption_helpers import (attach_transcript, is_ready, make_ready, name_of, pods,
                                rollout_complete, running, start_rollout, terminating, wait_ready, web_values)

RECORD = ("Pod", "Event", "ReplicaSet", "Deployment")
# kubectl rollout status gives up after this (longer than every wait of these tests).
ROLLOUT_STATUS_TIMEOUT_S = 180


def rollout_status(kubectl: str, flags: list[str], namespace: str) -> Transcript:
    """``kubectl rollout status deployment/web`` (it only reads: any cluster), pointed at the test's
    cluster by ``flags`` (:func:`e2e.evidence.kubectl.kubectl_flags`)."""
    return run([kubectl, *flags, "rollout", "status", "deployment/web", "-n", namespace,
                f"--timeout={ROLLOUT_STATUS_TIMEOUT_S}s"], timeout_s=ROLLOUT_STATUS_TIMEOUT_S + 30)


def progressing(obj: dict | None) -> dict:
    return condition(obj, "Progressing") or {}


def apply_and_settle(sc: Scenario) -> None:
    sc.apply("web.yaml", **web_values(doc.DR4_REPLICAS, 1, 0, progress_deadline=doc.PROGRESS_DEADLINE_S))
    wait_ready(sc, doc.DR4_REPLICAS, app="web")
    sc.wait_for("the first rollout complete", lambda: rollout_complete(sc.get("Deployment", "web")), PODS_SLACK_S)


@pytest.mark.record(*RECORD)
@pytest.mark.case("DR-4")
def test_deadline_exceeded(scenario: Scenario, kubectl: str):
    """DR-4 (a): a template that never becomes Ready: ProgressDeadlineExceeded at the last
    lastUpdateTime + [30, 33] s, "ReplicaSet … has timed out progressing.", no rollback;
    ``kubectl rollout status`` fails with "exceeded its progress deadline"."""
    sc = scenario
    apply_and_settle(sc)
    with ThreadPoolExecutor(1) as pool:
        start_rollout(sc, stepped=True)
        status_run = pool.submit(rollout_status, kubectl, kubectl_flags(sc.kube), sc.namespace)
        sc.wait_for("Progressing=False ProgressDeadlineExceeded",
                    lambda: progressing(sc.get("Deployment", "web")).get("reason") == "ProgressDeadlineExceeded",
                    sc.judge.wait_budget_s("DR-4", "timed_out_after_s[never-ready]") + PODS_SLACK_S)
        transcript = status_run.result()
    attach_transcript(sc, transcript, "kubectl rollout status")

    changes = sc.recorder.changes("Deployment", "web")
    i = next(i for i, ch in enumerate(changes) if progressing(ch.obj).get("reason") == "ProgressDeadlineExceeded")
    timed_out, before = changes[i], changes[i - 1]
    last_update = progressing(before.obj).get("lastUpdateTime")
    cond = progressing(timed_out.obj)
    details = {"previous_condition": progressing(before.obj), "condition": cond}
    sc.expect("DR-4", "timed_out_after_s[never-ready]", round(timed_out.received_at - parse_time(last_update), 3),
              around=timed_out.received_at, details=details)
    sc.expect("DR-4", "progressing_status[never-ready]", cond.get("status"), details=details)
    sc.expect("DR-4", "progressing_reason[never-ready]", cond.get("reason"), details=details)
    new_rs = next(name_of(rs) for rs in (sc.recorder.latest("ReplicaSet", n) for n in {c.name for c in sc.recorder.changes("ReplicaSet")})
                  if rs and rs["spec"]["template"]["metadata"]["labels"].get("rev") == "2")
    sc.expect("DR-4", "progressing_message[never-ready]", cond.get("message"), details=details, rs=new_rs)
    old_rs = [rs for rs in (sc.recorder.latest("ReplicaSet", n) for n in {c.name for c in sc.recorder.changes("ReplicaSet")})
              if rs and rs["spec"]["template"]["metadata"]["labels"].get("rev") == "1"]
    sc.expect("DR-4", "old_replicaset_replicas[never-ready]", sum(rs["spec"]["replicas"] for rs in old_rs))
    template_rev = sc.get("Deployment", "web")["spec"]["template"]["metadata"]["labels"].get("rev")
    sc.expect("DR-4", "rolled_back[never-ready]", template_rev != "2", details={"template_rev": template_rev})
    sc.expect("DR-4", "rollout_status_exit_code[never-ready]", transcript.exit_code, details={"transcript": transcript.to_text()})
    errors = [ln.text for ln in transcript.stderr()]
    sc.expect("DR-4", "rollout_status_error[never-ready]", errors[-1] if errors else None,
              details={"transcript": transcript.to_text()}, deployment="web")


@pytest.mark.record(*RECORD)
@pytest.mark.case("DR-4")
def test_slow_progress_never_times_out(scenario: Scenario, kubectl: str):
    """DR-4 (b): each new pod becomes Ready 20 s after the previous one: the rollout takes
    longer than the 30 s deadline but never times out; it ends NewReplicaSetAvailable and
    ``kubectl rollout status`` succeeds."""
    sc = scenario
    apply_and_settle(sc)
    with ThreadPoolExecutor(1) as pool:
        since = time.time()
        generation = start_rollout(sc, stepped=True)
        status_run = pool.submit(rollout_status, kubectl, kubectl_flags(sc.kube), sc.namespace)
        last_step = since
        for step in range(doc.DR4_REPLICAS):
            new = sc.wait_for(f"new pod {step + 1} running, not Ready",
                              lambda: next((name_of(p) for p in pods(sc, app="web", rev="2")
                                            if running(p) and not is_ready(p) and not terminating(p)), None), PODS_SLACK_S)
            # documented wait: the scenario's pace, one new pod Ready every DR4_STEP_S
            time.sleep(max(0.0, last_step + doc.DR4_STEP_S - time.time()))
            last_step = time.time()
            make_ready(sc, new)
            sc.wait_for(f"{new} Ready", lambda: is_ready(sc.pod(new)), PODS_SLACK_S)  # noqa: B023 - called within this iteration
        sc.wait_for("the rollout complete", lambda: rollout_complete(sc.get("Deployment", "web"), generation), PODS_SLACK_S)
        done = time.time()
        transcript = status_run.result()
    attach_transcript(sc, transcript, "kubectl rollout status")

    reasons = [progressing(ch.obj).get("reason") for ch in sc.recorder.changes("Deployment", "web")]
    sc.expect("DR-4", "rollout_s[steady]", round(done - since, 3))
    sc.expect("DR-4", "timed_out[steady]", "ProgressDeadlineExceeded" in reasons, details={"reasons_seen": sorted(set(filter(None, reasons)))})
    sc.expect("DR-4", "progressing_reason[steady]", progressing(sc.get("Deployment", "web")).get("reason"))
    sc.expect("DR-4", "rollout_status_exit_code[steady]", transcript.exit_code, details={"transcript": transcript.to_text()})
    out = [ln.text for ln in transcript.stdout()]
    sc.expect("DR-4", "rollout_status_last_line[steady]", out[-1] if out else None,
              details={"transcript": transcript.to_text()}, deployment="web")
