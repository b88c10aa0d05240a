"""AD-1, AD-2, PR-1, PR-2, PS-7 — the fast API-level cases (CASES.md), on a real cluster.

Each runs in seconds (``-m smoke``): server dry-runs (AD-1, PS-7), one short-lived pod (AD-2),
and probe timings (PR-1, PR-2) measured on timestamps the containers and their exec probes
write into the container log (:mod:`e2e.evidence.stamps`). Documented values, bands and their reasons
are in :mod:`e2e.documented.api`; manifests are next to this file.
"""

from __future__ import annotations

import logging
import time

import pytest
from kubernetes.client.exceptions import ApiException

from e2e.record import pods
from e2e.documented import api as doc, kubelet
from e2e.evidence import endpoints
from e2e.evidence.stamps import Stamp, before, first, labelled, parse
from e2e.cluster.kube import ApiRefused
from e2e.measure.probes import killed_run, start_and_sigterm
from e2e.measure.values import expect_all
from e2e.run.scenario import Scenario
from e2e.record.timeline import container_samples
from e2e.base.waiting import WAIT_SLACK_S

log = logging.getLogger(__name__)


def _stamps(sc: Scenario, pod: str, previous: bool = False) -> list[Stamp]:
    return parse(sc.kube.logs(sc.namespace, pod, "app", previous=previous))


def _ready_before_started(sc: Scenario, pod: str) -> bool:
    """True when any recorded status showed ``app`` ready while not (yet) started."""
    return any(s.container == "app" and s.ready and not s.started for s in container_samples(sc.recorder.changes("Pod"), pod))


def _killing_message(sc: Scenario, pod: str) -> str | None:
    return next((ch.obj.get("message") for ch in sc.events("Killing", pod)), None)


def _restarts(sc: Scenario, pod: str) -> int:
    return pods.container_status(sc.pod(pod), "app").get("restartCount", 0)


# -- AD-1 --------------------------------------------------------------------------------------


@pytest.mark.smoke
@pytest.mark.case("AD-1")
def test_default_toleration_seconds(scenario: Scenario):
    """AD-1: every pod gets NoExecute tolerations not-ready and unreachable with
    tolerationSeconds 300 (s); a pod's own not-ready toleration (30 s) is kept and only the
    missing one is added. Server dry-run."""
    sc = scenario
    pod = sc.apply("default-tolerations.yaml", dry_run=True, name="plain")[0]
    tolerations = pod["spec"].get("tolerations") or []
    sc.expect("AD-1", "default_toleration_keys", ",".join(sorted(t.get("key", "") for t in tolerations)),
              details={"tolerations": tolerations})
    for key in doc.DEFAULT_TOLERATION_KEYS:
        t = next((t for t in tolerations if t.get("key") == key), {})
        sc.expect("AD-1", f"default_toleration_seconds[{key}]", t.get("tolerationSeconds"))
        sc.expect("AD-1", f"default_toleration_effect[{key}]", t.get("effect"))
        sc.expect("AD-1", f"default_toleration_operator[{key}]", t.get("operator"))

    own = sc.apply("own-toleration.yaml", dry_run=True, name="own", own_seconds=doc.OWN_NOT_READY_TOLERATION_SECONDS)[0]
    tolerations = own["spec"].get("tolerations") or []
    by_key = {t.get("key"): t for t in tolerations}
    sc.expect("AD-1", "own_toleration_seconds_kept", by_key.get("node.kubernetes.io/not-ready", {}).get("tolerationSeconds"),
              details={"tolerations": tolerations})
    sc.expect("AD-1", "missing_toleration_added_seconds", by_key.get("node.kubernetes.io/unreachable", {}).get("tolerationSeconds"))
    sc.expect("AD-1", "toleration_count[own not-ready]", len(tolerations))


# -- AD-2 --------------------------------------------------------------------------------------


@pytest.mark.smoke
@pytest.mark.case("AD-2")
def test_running_pod_conditions(scenario: Scenario):
    """AD-2: a running, ready pod carries PodReadyToStartContainers, Initialized,
    ContainersReady, Ready and PodScheduled, all True."""
    sc = scenario
    sc.apply("conditions.yaml", name="conditions")
    sc.wait(pods.pod_ready("conditions"), WAIT_SLACK_S)
    conditions = sc.pod("conditions")["status"]["conditions"]
    sc.expect("AD-2", "condition_types", ",".join(sorted(c["type"] for c in conditions)), details={"conditions": conditions})
    by_type = {c["type"]: c.get("status") for c in conditions}
    for kind in doc.AD2_CONDITIONS:
        sc.expect("AD-2", f"condition_status[{kind}]", by_type.get(kind))


# -- PR-1 --------------------------------------------------------------------------------------

# the three pods: (name, restartPolicy, seconds until the container creates /tmp/started or -1)
NEVER_ALWAYS = ("unstarted-always", "Always", -1)
NEVER_NEVER = ("unstarted-never", "Never", -1)
IN_TIME = ("starts-in-time", "Always", doc.STARTS_AFTER_S)


def _startup_pod(sc: Scenario, name: str, policy: str, starts_after_s: int) -> None:
    sc.apply("startup.yaml", name=name, restart_policy=policy, starts_after_s=starts_after_s,
             startup_period_s=doc.STARTUP_PERIOD_S, startup_failure_threshold=doc.STARTUP_FAILURE_THRESHOLD,
             other_period_s=doc.PR1_OTHER_PROBE_PERIOD_S)


def _previous_run_stamps(sc: Scenario, pod: str, first_timeout_s: float, next_timeout_s: float) -> list[Stamp]:
    """The stamps of the run before the current one, read once ``app`` restarted.

    The kubelet's minute container GC (pkg/kubelet/kuberuntime/kuberuntime_gc.go
    evictableContainers: every non-running container counts, MaxPerPodContainer 1) can remove
    the dead run while its successor is still only *created*: the API then answers "unable to
    retrieve container logs" (seen once on v1.37.2). Then the next run, which never starts
    either, is waited for and read instead (once).
    """
    restarts = 1
    sc.wait_for(f"{pod} restarted after the startup probe failed", lambda: _restarts(sc, pod) >= restarts, first_timeout_s)
    try:
        return _stamps(sc, pod, previous=True)
    except ApiException as e:
        # the run's container removed: the kubelet's log reader cannot find it (kuberuntime), or the
        # status no longer names it (kubelet_pods.go validateContainerLogStatus: "previous terminated
        # container %q in pod %q not found", seen once on v1.37.2 under a concurrent run)
        if not any(text in str(e.body) for text in ("unable to retrieve container logs", "previous terminated container")):
            raise
        log.warning("%s: the previous run's log is gone (container GC race): %s; reading the next killed run", pod, e.body)
        sc.mark(time.time(), f"{pod}: previous log garbage-collected")
    restarts = _restarts(sc, pod) + 1
    sc.wait_for(f"{pod} restarted again", lambda: _restarts(sc, pod) >= restarts, next_timeout_s)
    return _stamps(sc, pod, previous=True)


def _judge_killed_run(sc: Scenario, key: str, pod: str, stamps: list[Stamp]) -> None:
    """PR-1 facts of one run that never started, from its own log (``key``: the restart policy)."""
    start, sigterm = (sc.require(found, f"{pod}: the killed run's {e} stamp in its log: {stamps}")
                      for e, found in zip(("start", "sigterm"), start_and_sigterm(stamps), strict=True))
    sc.mark(sigterm.at, f"SIGTERM {pod}")
    expect_all(sc.expect, killed_run(key, start, sigterm, stamps))


@pytest.mark.smoke
@pytest.mark.case("PR-1")
def test_startup_probe_budget(scenario: Scenario):
    """PR-1: a startupProbe of failureThreshold 3 × periodSeconds 2 = 6 s. A container that
    never starts is killed about 6 s after its start (after exactly 3 failures) and restarted
    under Always, not under Never (pod Failed); liveness and readiness never run before the
    startup probe succeeded — in the pod that starts in time they begin right after it."""
    sc = scenario
    for name, policy, after in (NEVER_ALWAYS, NEVER_NEVER, IN_TIME):
        _startup_pod(sc, name, policy, after)
    kill_high = sc.judge.wait_budget_s("PR-1", "startup_kill_after_start_s")

    name = NEVER_ALWAYS[0]
    killed = _previous_run_stamps(sc, name, WAIT_SLACK_S + kill_high, WAIT_SLACK_S + kill_high)
    _judge_killed_run(sc, "Always", name, killed)
    sc.expect("PR-1", "killing_event_message[Always]", _killing_message(sc, name))
    sc.expect("PR-1", "restart_count[Always]", pods.container_status(sc.pod(name), "app").get("restartCount"))

    name = NEVER_NEVER[0]
    phase = sc.wait(pods.pod_phase(name, "Failed"), WAIT_SLACK_S + kill_high)
    _judge_killed_run(sc, "Never", name, _stamps(sc, name))
    sc.expect("PR-1", "killing_event_message[Never]", _killing_message(sc, name))
    sc.expect("PR-1", "phase[Never]", phase)
    sc.expect("PR-1", "restart_count[Never]", pods.container_status(sc.pod(name), "app").get("restartCount"))

    name = IN_TIME[0]
    sc.wait_for(f"{name} ready", lambda: pods.container_status(sc.pod(name), "app").get("ready") is True, WAIT_SLACK_S + kill_high)
    # readiness has run (the pod is ready); give liveness the upper end of its band to show up
    # in the log (returns as soon as it does; a run that never came is judged below as None)
    wait_high = sc.judge.wait_budget_s("PR-1", "liveness_wait_after_startup_s")
    sc.first_within(wait_high, f"a liveness probe run in {name}'s log", lambda: labelled(_stamps(sc, name), "probe:liveness"), interval_s=0.5)
    stamps = _stamps(sc, name)
    success = sc.require(first(stamps, "probe:startup:success"), f"{name}: ready, with a successful startup probe in its log: {stamps}")
    sc.mark(success.at, f"startup probe success {name}")
    for probe in ("liveness", "readiness"):
        runs = labelled(stamps, f"probe:{probe}")
        sc.expect("PR-1", f"{probe}_probe_runs_before_started[starts in time]", len(before(runs, success.at)),
                  around=success.at)
        sc.expect("PR-1", f"{probe}_wait_after_startup_s", round(runs[0].at - success.at, 3) if runs else None, around=success.at,
                  details={"startup": [(s.event, s.at) for s in labelled(stamps, "probe:startup")], probe: [s.at for s in runs[:3]]})
    sc.expect("PR-1", "restart_count[starts in time]", pods.container_status(sc.pod(name), "app").get("restartCount"))

    for name, _, _ in (NEVER_ALWAYS, NEVER_NEVER, IN_TIME):
        sc.expect("PR-1", f"ready_before_started[{name}]", _ready_before_started(sc, name))


# -- PR-2 --------------------------------------------------------------------------------------


def _endpoint_history(sc: Scenario, pod: str) -> list[endpoints.EndpointState]:
    """Every recorded change of ``pod``'s endpoint conditions, oldest first."""
    return [st for st in endpoints.endpoint_states(sc.recorder.changes("EndpointSlice")) if st.pod == pod]


# How long the not-ready container is watched for a restart (s): two more failure thresholds
# of the readiness probe (a kill would follow a threshold within one pod sync, as a liveness or
# startup kill does: PR-1 kill_after_last_startup_failure_s) plus the PLEG relist that reports it.
NO_RESTART_WATCH_S = 2 * doc.READINESS_FAIL_AFTER_S + kubelet.KUBELET_HANDOFF_S + kubelet.PLEG_RELIST_S


@pytest.mark.smoke
@pytest.mark.case("PR-2")
@pytest.mark.record("Pod", "Event", "EndpointSlice")
def test_failing_readiness_leaves_endpointslice(scenario: Scenario):
    """PR-2: the readiness file disappears 5 s after the start; after failureThreshold 2 ×
    periodSeconds 1 = 2 s the pod's endpoint turns ready=false (serving=false, still listed) and
    the container keeps running, never restarted."""
    sc = scenario
    name = "ready"
    sc.apply("readiness.yaml", name=name, period_s=doc.READINESS_PERIOD_S, failure_threshold=doc.READINESS_FAILURE_THRESHOLD,
             ready_for_s=doc.READY_FOR_S)
    band_high = sc.judge.wait_budget_s("PR-2", "not_ready_after_removal_s")
    # ready first, then not ready: the file goes READY_FOR_S after the start
    sc.wait(endpoints.endpoint_ready(name), WAIT_SLACK_S)
    sc.wait_for("endpoint ready=false after ready=true",
                lambda: _endpoint_history(sc, name)[-1].ready is False, doc.READY_FOR_S + band_high + WAIT_SLACK_S)
    stamps = _stamps(sc, name)
    removed = sc.require(first(stamps, "readiness-file-removed"), f"{name}: the container's stamp of the removal: {stamps}")
    sc.mark(removed.at, "readiness file removed")

    states = _endpoint_history(sc, name)
    earlier = [st for st in states if st.received_at < removed.at]
    sc.expect("PR-2", "endpoint_ready[before removal]", earlier[-1].ready if earlier else None, around=removed.at)
    after = sc.require(endpoints.first(states, name, after=removed.at, ready=False), f"{name}: a ready=false endpoint after the removal")
    at = after.received_at
    probes = labelled(stamps, "probe:readiness")
    sc.expect("PR-2", "not_ready_after_removal_s", round(at - removed.at, 3), around=at,
              details={"removed": removed.at, "endpoint_not_ready_received": at,
                       "probes_after_removal": [(s.event, s.at) for s in probes if s.at >= removed.at - doc.READINESS_PERIOD_S]})
    sc.expect("PR-2", "endpoint_ready[not ready]", after.ready, around=at, details={"endpoint": vars(after)})
    sc.expect("PR-2", "endpoint_serving[not ready]", after.serving, around=at)
    sc.expect("PR-2", "endpoint_terminating[not ready]", after.terminating, around=at)

    sc.first_within(NO_RESTART_WATCH_S, f"{name}/app restarted or stopped while not ready",
                    lambda: _restarts(sc, name) > 0 or pods.state(sc.pod(name), "app") != "running")
    pod = sc.pod(name)
    sc.expect("PR-2", "endpoint_listed[not ready]", _endpoint_history(sc, name)[-1].present)
    sc.expect("PR-2", "pod_ready_condition[not ready]", (pods.condition(pod, "Ready") or {}).get("status"))
    sc.expect("PR-2", "restart_count[not ready]", pods.container_status(pod, "app").get("restartCount"))
    sc.expect("PR-2", "container_state[not ready]", pods.state(pod, "app"))


# -- PS-7 --------------------------------------------------------------------------------------


def _dry_run_prestop(sc: Scenario, name: str, sleep_s: int) -> ApiRefused | None:
    """Server dry-run of a pod with ``preStop.sleep.seconds = sleep_s`` and grace PS7_GRACE_S;
    the API's refusal, or None when accepted."""
    try:
        sc.apply("prestop-sleep.yaml", dry_run=True, name=name, sleep_s=sleep_s, grace_s=doc.PS7_GRACE_S)
    except ApiRefused as e:
        return e
    return None


@pytest.mark.smoke
@pytest.mark.case("PS-7")
def test_prestop_sleep_validation(scenario: Scenario):
    """PS-7: preStop.sleep.seconds 40 > terminationGracePeriodSeconds 30 is rejected (422, the
    documented message); 30 (equal) and 0 are accepted; −1 is rejected. Server dry-run."""
    sc = scenario
    over = _dry_run_prestop(sc, "sleep-over", doc.PS7_OVER_S)
    body = over.body if over else {}
    causes = (body.get("details") or {}).get("causes") or [{}]
    sc.expect("PS-7", "rejected_status", over.status if over else 201, details={"body": body})
    sc.expect("PS-7", "rejected_reason", body.get("reason"))
    sc.expect("PS-7", "rejected_field", causes[0].get("field"))
    sc.expect("PS-7", "rejected_message", body.get("message"), pod="sleep-over")
    for key, name, seconds in (("sleep=grace", "sleep-equal", doc.PS7_GRACE_S), ("sleep=0", "sleep-zero", 0),
                               ("sleep=-1", "sleep-negative", -1)):
        err = _dry_run_prestop(sc, name, seconds)
        sc.expect("PS-7", f"accepted[{key}]", err is None, details={"error": err.body if err else None})
