"""EV-1 — the Eviction API's delete options; EV-2 — ``kubectl drain`` racing the test's own eviction
(cases outside the catalogues: docs/writing-a-case.md, "Write your own case" and "Reading what the cluster did"
point here; issue 41, item 7).

Documented (read in v1.34.4, v1.35.4, v1.36.3 and v1.37.2, k8s.io/apiserver and k8s.io/apimachinery
v0.34.4–v0.37.2, k8s.io/kubectl v0.34.4–v0.37.2):

- EV-1: ``pkg/registry/core/pod/storage/eviction.go`` ``EvictionREST.Create`` takes the request's
  ``dryRun`` into the eviction's delete options (``propagateDryRun``); with no PodDisruptionBudget and
  a Running pod it goes to ``addConditionAndDeletePod``, which in a dry run neither writes the
  ``DisruptionTarget`` condition nor deletes (the store's ``Delete`` returns the object unchanged),
  and otherwise reads the newest pod and refuses a precondition that does not hold with
  ``errors.NewConflict(Pod, name, "the UID in the precondition (…) does not match the UID in record
  (…). The object might have been deleted and then recreated")`` — HTTP 409, reason ``Conflict``,
  message "Operation cannot be fulfilled on Pod "…": …" (k8s.io/apimachinery pkg/api/errors
  ``NewConflict``); likewise a ``resourceVersion`` precondition ("… The object might have been
  modified"). Preconditions that hold: the condition ``DisruptionTarget``
  (``EvictionByEvictionAPI``) is written, the resourceVersion precondition moved to that write, the
  pod deleted; a create's answer is 201 (``createHandler``). The same code in all four releases.
- EV-2: ``kubectl drain`` evicts each pod in its own goroutine, prints ``evicting pod <ns>/<name>``
  before the request, then polls the pod every 1 s until it is gone or has another UID and prints
  ``pod/<name> evicted`` (k8s.io/kubectl pkg/drain/drain.go ``evictPods``, ``waitForDelete``;
  pkg/cmd/drain/drain.go ``onPodDeletionOrEvictionFinished``), exit code 0. Evicted, the pod is
  terminating; the test's own eviction of it then skips every PodDisruptionBudget (``canIgnorePDB``:
  a deletion timestamp) and deletes it again with ``gracePeriodSeconds: 1``, which may only shorten
  the grace (k8s.io/apiserver pkg/registry/rest/delete.go ``BeforeDelete``: the new period, 1 s)
  — so the drain ends long before the pod's own 60 s grace would have let it.
"""

from __future__ import annotations

import pytest

from e2e.evidence.kubectl import kubectl_background
from e2e.judge.expectations import equal, exact, register
from e2e.record.pods import condition, pod_gone, pod_ready
from e2e.run.scenario import Scenario
from e2e.base.waiting import PODS_SLACK_S, WAIT_SLACK_S

READ_IN = ("1.34.4", "1.35.4", "1.36.3", "1.37.2")
CREATE = ("[UP] k8s.io/apiserver pkg/endpoints/handlers/create.go createHandler (http.StatusCreated, also for a "
          "returned Status)")
EVICTION = "[UP] pkg/registry/core/pod/storage/eviction.go EvictionREST.Create, propagateDryRun, addConditionAndDeletePod"
CONFLICT = f"{EVICTION} (getLatestPod); [UP] k8s.io/apimachinery pkg/api/errors/errors.go NewConflict"
DRY_DELETE = f"{EVICTION} (no update in a dry run); [UP] k8s.io/apiserver pkg/registry/generic/registry/store.go Store.Delete"
DRAIN = ("[UP] k8s.io/kubectl pkg/drain/drain.go Helper.evictPods, waitForDelete (1 s poll); pkg/cmd/drain/drain.go "
         "onPodDeletionOrEvictionFinished, RunDrain")
SHORTEN = ("[UP] pkg/registry/core/pod/storage/eviction.go canIgnorePDB (a deletion timestamp); k8s.io/apiserver "
           "pkg/registry/rest/delete.go BeforeDelete (only a shorter grace)")
# EV-2: the pod's own grace (SIGTERM ignored: it goes only when a grace ends) and the test's shorter one.
GRACE_S = 60
SHORTER_GRACE_S = 1
# EV-2: kubectl drain --timeout (longer than the pod's grace: a drain that was not hurried ends
# after GRACE_S, not at its timeout), and how long kubectl gets beyond it to exit.
DRAIN_TIMEOUT_S = 120
KUBECTL_EXIT_S = 30
WRONG_UID = "00000000-0000-0000-0000-000000000000"

register([
    exact("EV-1", "dry_run_status", 201, f"{EVICTION}; {CREATE}", why="HTTP status of an eviction that would be made: 201"),
    equal("EV-1", "deleted_by_dry_run", False, DRY_DELETE),
    equal("EV-1", "disruption_target_by_dry_run", False, DRY_DELETE),
    exact("EV-1", "wrong_uid_status", 409, CONFLICT, why="NewConflict: http.StatusConflict"),
    equal("EV-1", "wrong_uid_reason", "Conflict", CONFLICT),
    equal("EV-1", "wrong_uid_message",
          'Operation cannot be fulfilled on Pod "{pod}": the UID in the precondition ({uid}) does not match the UID in '
          "record ({real_uid}). The object might have been deleted and then recreated", CONFLICT),
    exact("EV-1", "stale_resource_version_status", 409, CONFLICT, why="NewConflict: http.StatusConflict"),
    equal("EV-1", "stale_resource_version_message",
          r'Operation cannot be fulfilled on Pod "{pod}": the ResourceVersion in the precondition \(1\) does not match the '
          r"ResourceVersion in record \(\d+\)\. The object might have been modified", CONFLICT, pattern=True),
    equal("EV-1", "deleted_by_refused_evictions", False, CONFLICT),
    exact("EV-1", "matching_preconditions_status", 201, f"{EVICTION}; {CREATE}", why="HTTP status of an eviction made: 201"),
    equal("EV-1", "disruption_target_reason", "EvictionByEvictionAPI", f"{EVICTION} (conditionAppender)"),
    exact("EV-2", "second_eviction_status", 201, f"{SHORTEN}; {CREATE}", why="HTTP status of an eviction made: 201"),
    exact("EV-2", "deletion_grace_after_second_eviction_s", SHORTER_GRACE_S, SHORTEN, unit="s",
          why="BeforeDelete sets the requested period (≥ 1 s: kept 1 even when the new deletion time is now)"),
    equal("EV-2", "drain_evicted_line", "pod/{pod} evicted", DRAIN),
    exact("EV-2", "drain_exit_code", 0, DRAIN, why="RunDrain returned no error: exit code 0"),
    equal("EV-2", "drain_ended_before_the_pods_grace", True, f"{DRAIN}; {SHORTEN}"),
], verified_in=READ_IN)


def graces(sc: Scenario, pod: str) -> list[int]:
    """The ``deletionGracePeriodSeconds`` of ``pod``'s recording, each new one once, in order (s)."""
    out: list[int] = []
    for ch in sc.recorder.changes("Pod", pod):
        grace = ch.obj["metadata"].get("deletionGracePeriodSeconds")
        if grace is not None and (not out or out[-1] != grace):
            out.append(grace)
    return out


def shortened_grace(sc: Scenario, pod: str) -> int | None:
    """The grace period (s) that replaced the pod's own :data:`GRACE_S` (the kubelet's final delete
    sets 0 later), or None while there is none."""
    return next((g for g in graces(sc, pod) if g != GRACE_S), None)


def deleted(sc: Scenario, pod: str) -> bool:
    """Whether ``pod`` has a deletion timestamp now (read from the API, not the recording)."""
    return sc.kube.core.read_namespaced_pod(pod, sc.namespace).metadata.deletion_timestamp is not None


@pytest.mark.case("EV-1")
@pytest.mark.record("Pod", "Event")
def test_eviction_options(scenario: Scenario):
    """EV-1: a dry run changes nothing; a wrong UID or a stale resourceVersion is 409 Conflict and
    the pod stays; the pod's own UID and resourceVersion evict it."""
    sc = scenario
    sc.apply("pod.yaml", name="web", group=sc.namespace, grace_s=1)
    sc.wait(pod_ready("web"), WAIT_SLACK_S)

    dry = sc.evict("web", dry_run=True)
    sc.expect("EV-1", "dry_run_status", dry.status, details={"answer": dry.body})
    sc.expect("EV-1", "deleted_by_dry_run", deleted(sc, "web"))
    live = sc.kube.core.read_namespaced_pod("web", sc.namespace).to_dict()
    sc.expect("EV-1", "disruption_target_by_dry_run",
              any(c["type"] == "DisruptionTarget" for c in live["status"]["conditions"] or []))

    real_uid = live["metadata"]["uid"]
    wrong = sc.evict("web", uid=WRONG_UID)
    sc.expect("EV-1", "wrong_uid_status", wrong.status, details={"answer": wrong.body})
    sc.expect("EV-1", "wrong_uid_reason", wrong.body.get("reason"))
    sc.expect("EV-1", "wrong_uid_message", wrong.body.get("message"), pod="web", uid=WRONG_UID, real_uid=real_uid)
    stale = sc.evict("web", resource_version="1")
    sc.expect("EV-1", "stale_resource_version_status", stale.status, details={"answer": stale.body})
    sc.expect("EV-1", "stale_resource_version_message", stale.body.get("message"), pod="web")
    sc.expect("EV-1", "deleted_by_refused_evictions", deleted(sc, "web"))

    now = sc.kube.core.read_namespaced_pod("web", sc.namespace).metadata
    matching = sc.evict("web", uid=now.uid, resource_version=now.resource_version)
    sc.expect("EV-1", "matching_preconditions_status", matching.status, details={"answer": matching.body})
    target = sc.wait_for("web's DisruptionTarget condition (recorded: the pod may be gone already)",
                         lambda: next(filter(None, (condition(ch.obj, "DisruptionTarget") for ch in sc.recorder.changes("Pod", "web"))),
                                      None), WAIT_SLACK_S)
    sc.expect("EV-1", "disruption_target_reason", target.get("reason"))


@pytest.mark.case("EV-2")
@pytest.mark.serial  # kubectl drain cordons the node: no other test's pod is scheduled meanwhile
@pytest.mark.record("Pod", "Event")
def test_drain_racing_an_eviction(scenario: Scenario, kubectl: str):
    """EV-2: ``kubectl drain`` evicts the pod and waits for it; the test evicts the same pod with a
    1 s grace meanwhile: 201, the grace shortened, the drain done long before the pod's 60 s."""
    sc = scenario
    sc.apply("pod.yaml", name="slow", group=sc.namespace, grace_s=GRACE_S)
    sc.wait(pod_ready("slow"), WAIT_SLACK_S)
    node = sc.pod("slow")["spec"]["nodeName"]
    try:
        with kubectl_background(sc, kubectl, "drain", node, "--pod-selector", f"e2e.example/group={sc.namespace}", "--force",
                                "--ignore-daemonsets", f"--timeout={DRAIN_TIMEOUT_S}s", timeout_s=DRAIN_TIMEOUT_S + KUBECTL_EXIT_S,
                                mark=r"^evicting pod |evicted$") as drain:
            evicting = drain.wait_for_line(r"^evicting pod ", PODS_SLACK_S, stream="stdout")
            sc.wait_for("slow terminating (the drain's eviction made)",
                        lambda: (sc.pod("slow") or {}).get("metadata", {}).get("deletionTimestamp"), WAIT_SLACK_S)
            second = sc.evict("slow", grace_period_s=SHORTER_GRACE_S)
            sc.expect("EV-2", "second_eviction_status", second.status, details={"answer": second.body})
            sc.wait_for("slow's grace shortened (or slow gone)",
                        lambda: shortened_grace(sc, "slow") is not None or sc.pod("slow") is None, WAIT_SLACK_S)
            sc.wait(pod_gone("slow"), GRACE_S + WAIT_SLACK_S)
    finally:  # the drain cordoned the node: every other test needs it back
        sc.patch("Node", node, {"spec": {"unschedulable": None}}, patch_type="merge")
    t = drain.transcript
    assert t is not None
    details = {"transcript": t.to_text(sc.t0), "evicting_at": evicting.at}
    sc.expect("EV-2", "deletion_grace_after_second_eviction_s", shortened_grace(sc, "slow"),
              details={"deletionGracePeriodSeconds_seen": graces(sc, "slow")})
    evicted = [ln.text for ln in t.stdout() if ln.text.endswith(" evicted")]
    sc.expect("EV-2", "drain_evicted_line", evicted[0] if evicted else None, details=details, pod="slow")
    sc.expect("EV-2", "drain_exit_code", t.exit_code, details=details)
    sc.expect("EV-2", "drain_ended_before_the_pods_grace", t.ended_at < evicting.at + GRACE_S,
              details={**details, "drain_ended_after_its_eviction_s": round(t.ended_at - evicting.at, 3)})
