"""RR — restart rules and policies beyond CL (CASES-workloads.md RR-1 … RR-5), on a real cluster.

Documented values: ``e2e/documented/restart.py``.
"""

from __future__ import annotations

import time

import pytest

from e2e.cluster.kube import ApiRefused
from e2e.cluster.images import workload_images
from e2e.record import pods
from e2e.record.timeline import parse_time
from e2e.run.scenario import Scenario
from e2e.base.waiting import WAIT_SLACK_S
from scenarios.gate_profiles import GATES_1_34, GATES_1_35

# a workload family (CASES-workloads.md): `make e2e-workloads`, not in the default `make e2e`
pytestmark = pytest.mark.workloads


def _running_id(sc: Scenario, pod: str, container: str) -> str | None:
    cs = pods.container_status(sc.pod(pod), container)
    return cs.get("containerID") if (cs.get("state") or {}).get("running") else None


def _killing(sc: Scenario, pod: str) -> list:
    return [e for e in sc.events("Killing", pod)]


# -- RR-3 ------------------------------------------------------------------------------------------

VARIANTS = {  # name → (pod restartPolicy, exit code on TERM)
    "onfailure-exit0": ("OnFailure", 0),
    "onfailure-exit1": ("OnFailure", 1),
    "always-exit0": ("Always", 0),
    "never-exit0": ("Never", 0),
}
# R27: (a) ends Succeeded "within ≈ 3 min"; four kills at most (first kill ≤ 22 s after each start,
# back-off windows 10 + 20 + 40 s between them) fit in 180 s
FINAL_WAIT_S = 180


@pytest.mark.case("RR-3")
def test_liveness_kills_under_each_restart_policy(scenario: Scenario):
    """RR-3 (R27): a liveness probe that always fails, four pods side by side. The Killing event says
    "Container app failed liveness probe, will be restarted" under OnFailure and Always, without
    ", will be restarted" under Never; the first kill comes initialDelay + (F−1)·P + [0, P] after the
    start. OnFailure + exit 0 on TERM ends Succeeded after 1–4 restarts (once a back-off window blocks
    the immediate restart the exit 0 is final); OnFailure + exit 1 and Always + exit 0 keep
    restarting (Running); Never + exit 0 ends Succeeded after the first kill, no restart."""
    sc = scenario
    for name, (policy, code) in VARIANTS.items():
        sc.apply("liveness.yaml", name=name, restart_policy=policy, exit_code=code)
    budget = sc.judge.wait_budget_s("RR-3", "first_kill_after_start_s") + WAIT_SLACK_S
    sc.wait_for("a Killing event of every pod", lambda: all(_killing(sc, n) for n in VARIANTS) or None, budget)
    for name in VARIANTS:
        first = min(_killing(sc, name), key=lambda e: e.received_at)
        sc.expect("RR-3", f"killing_message[{name}]", first.obj.get("message"), around=first.received_at)
    never = min(_killing(sc, "never-exit0"), key=lambda e: e.received_at)
    sc.wait_for("never-exit0 Succeeded", lambda: pods.phase(sc.pod("never-exit0")) in ("Succeeded", "Failed") or None,
                WAIT_SLACK_S)
    started = pods.terminated_runs(sc.recorder.changes("Pod", "never-exit0"), "app")
    sc.expect("RR-3", "first_kill_after_start_s", never.received_at - parse_time(started[0][1]["startedAt"]),
              around=never.received_at)
    sc.expect("RR-3", "final_phase[never-exit0]", pods.phase(sc.pod("never-exit0")))
    sc.expect("RR-3", "restarts[never-exit0]", pods.container_status(sc.pod("never-exit0"), "app").get("restartCount"))

    done = sc.first_within(FINAL_WAIT_S, "onfailure-exit0 terminal",
                           lambda: pods.phase(sc.pod("onfailure-exit0")) in ("Succeeded", "Failed") or None)
    a = sc.pod("onfailure-exit0")
    sc.expect("RR-3", "final_phase[onfailure-exit0]", pods.phase(a) if done else f"{pods.phase(a)} after {FINAL_WAIT_S} s")
    sc.expect("RR-3", "restarts_before_final[onfailure-exit0]", pods.container_status(a, "app").get("restartCount"))
    for name in ("onfailure-exit1", "always-exit0"):
        p = sc.pod(name)
        sc.expect("RR-3", f"phase[{name}]", pods.phase(p))
        sc.expect("RR-3", f"restarted[{name}]", (pods.container_status(p, "app").get("restartCount") or 0) >= 1,
                  details={"restartCount": pods.container_status(p, "app").get("restartCount")})


# -- RR-4 ------------------------------------------------------------------------------------------


@pytest.mark.case("RR-4")
def test_image_update_restarts_only_that_container(scenario: Scenario):
    """RR-4: `a`'s image changed from busybox to the lifecycle-app image (both on the node): Killing
    "Container a definition changed, will be restarted", `a` restarts once in a new container running the
    new image within one sync of the patch; `b` untouched; same pod UID and IP. A change of `command` is
    refused by the API (422)."""
    sc = scenario
    sc.apply("two-containers.yaml", name="img")
    sc.wait_for("img running", lambda: (_running_id(sc, "img", "a") and _running_id(sc, "img", "b")) or None, 2 * WAIT_SLACK_S)
    before = sc.pod("img")
    a_id, b_id = _running_id(sc, "img", "a"), _running_id(sc, "img", "b")
    app_image = workload_images()["app_image"]
    sent = time.time()
    sc.patch("Pod", "img", {"spec": {"containers": [{"name": "a", "image": app_image}]}})
    budget = sc.judge.wait_budget_s("RR-4", "running_after_patch_s") + WAIT_SLACK_S
    sc.wait_for("a running in a new container", lambda: _running_id(sc, "img", "a") not in (None, a_id) or None,
                budget, case="RR-4", measurement="running_after_patch_s")
    seen = next(c for c in sc.recorder.changes("Pod", "img") if c.received_at >= sent
                and (pods.container_status(c.obj, "a").get("state") or {}).get("running")
                and pods.container_status(c.obj, "a").get("containerID") != a_id)
    sc.expect("RR-4", "running_after_patch_s", seen.received_at - sent, around=seen.received_at)
    killing = [e for e in _killing(sc, "img") if e.received_at >= sent]
    sc.expect("RR-4", "killing_message", killing[0].obj.get("message") if killing else None)
    after = sc.pod("img")
    a, b = pods.container_status(after, "a"), pods.container_status(after, "b")
    sc.expect("RR-4", "restarts[a]", a.get("restartCount"))
    sc.expect("RR-4", "new_container[a]", a.get("containerID") not in (None, a_id))
    sc.expect("RR-4", "image_updated[a]", (a.get("image") or "").endswith(app_image.split("/", 1)[-1]),
              details={"status_image": a.get("image"), "patched": app_image})
    sc.expect("RR-4", "restarts[b]", b.get("restartCount"))
    sc.expect("RR-4", "same_container[b]", b.get("containerID") == b_id)
    sc.expect("RR-4", "same_pod_uid", after["metadata"]["uid"] == before["metadata"]["uid"])
    sc.expect("RR-4", "same_pod_ip", after["status"].get("podIP") == before["status"].get("podIP"))
    try:
        sc.patch("Pod", "img", {"spec": {"containers": [{"name": "b", "command": ["sleep", "1"]}]}}, dry_run=True)
        status = 200
    except ApiRefused as e:
        status = e.status
    sc.expect("RR-4", "command_change_status", status)


# -- RR-1, RR-2: gated rules -------------------------------------------------------------------------


def _gate(sc: Scenario, gate: str) -> str:
    """The gate as the API server and the pod's kubelet run it (noted on the test), as the
    qualifier of the values keyed by it (:func:`e2e.cluster.gates.gate_key`: a gate the version
    does not know is off); skips the test (``environment: …``) when it cannot be read."""
    from e2e.cluster import gates

    try:
        api = gates.api_server(sc.kube)
        node = sc.default_node() if sc.kind else None  # the kubelet of its pods (a room: a worker)
        kubelet = gates.kubelet(sc.kube, node) if node else None
    except gates.GatesUnreadable as e:
        sc.note(f"gate {gate}", f"unreadable: {e}")
        pytest.skip(f"environment: the feature gate {gate} cannot be read on this cluster, and the values are keyed by it: {e}")
    sc.note(f"gate {gate}", "; ".join(g.describe(gate) for g in (api, kubelet) if g is not None))
    on = gate in api and api.enabled(gate) and (kubelet is None or (gate in kubelet and kubelet.enabled(gate)))
    return gates.gate_key(on)


@pytest.mark.case("RR-1")
@pytest.mark.parametrize("profile", ["default", GATES_1_34])
def test_exit_code_rules_and_probes_after_a_final_exit(scenario: Scenario, profile: str):
    """RR-1 (R28): (a) pod Never, container Never with a rule Restart on exit 42: it exits 42, 42, 0 —
    two restarts with the CL-1 gaps (0, then 10 s), then Succeeded. (b) pod Always, container `once`
    with its own restartPolicy Never exits 7 under a readiness probe: terminated exit 7 ``Error``, no
    restart, the pod Running, no probe event after the exit (one in flight allowed). (c) with
    ContainerRestartRules off (1.34 as shipped) the API drops the fields: recorded, then skipped; on
    1.34 the profile ``gates-1.34`` runs it once more with the gate on."""
    from e2e.documented.restart import REASON_GATE_OFF
    from e2e.record.timeline import restart_gaps

    sc = scenario
    gate = _gate(sc, "ContainerRestartRules")
    stored = sc.apply("rules.yaml", name="rules")[0]
    app = stored["spec"]["containers"][0]
    sc.expect("RR-1", f"stored_rules[{gate}]", "kept" if app.get("restartPolicyRules") else "dropped",
              details={"restartPolicy": app.get("restartPolicy")})
    if not app.get("restartPolicyRules"):
        pytest.skip(REASON_GATE_OFF)
    sc.apply("once.yaml", name="once")
    budget = sum(sc.judge.wait_budget_s("RR-1", f"restart_gap[{i}]") for i in range(2)) + 2 * WAIT_SLACK_S
    sc.wait_for("rules terminal", lambda: pods.phase(sc.pod("rules")) in ("Succeeded", "Failed") or None, budget)
    runs = sc.attempts("rules", "app")
    gaps = restart_gaps(runs)
    for i in range(min(2, len(gaps))):
        sc.expect("RR-1", f"restart_gap[{i}]", gaps[i], around=runs[i + 1].started_at)
    sc.expect("RR-1", "restarts[rules]", pods.container_status(sc.pod("rules"), "app").get("restartCount"))
    sc.expect("RR-1", "final_phase[rules]", pods.phase(sc.pod("rules")))

    ended = sc.wait_for("once terminated", lambda: pods.terminated_runs(sc.recorder.changes("Pod", "once"), "once") or None,
                        WAIT_SLACK_S)
    exit_seen = min(c.received_at for c in sc.recorder.changes("Pod", "once")
                    if (pods.container_status(c.obj, "once").get("state") or {}).get("terminated"))
    time.sleep(10)  # five probe periods after the exit
    once = sc.pod("once")
    term = ended[0][1]
    sc.expect("RR-1", "last_exit_code[once]", term.get("exitCode"))
    sc.expect("RR-1", "terminated_reason[once]", term.get("reason"))
    sc.expect("RR-1", "restarts[once]", pods.container_status(once, "once").get("restartCount"))
    sc.expect("RR-1", "phase[once]", pods.phase(once))
    probe_events = [e for e in sc.recorder.changes("Event") if e.received_at > exit_seen
                    and (e.obj.get("involvedObject") or {}).get("name") == "once"
                    and "spec.containers{once}" in ((e.obj.get("involvedObject") or {}).get("fieldPath") or "")
                    and e.obj.get("reason") in ("Unhealthy", "ProbeWarning")]
    sc.expect("RR-1", "probe_events_after_exit[once]", len(probe_events),
              details={"events": [f"{e.obj.get('reason')}: {e.obj.get('message')}" for e in probe_events]})


@pytest.mark.case("RR-2")
@pytest.mark.parametrize("profile", ["default", GATES_1_35])
def test_restart_all_containers_on_an_exit_code(scenario: Scenario, profile: str):
    """RR-2 (R28 c, KEP-5532): `main` exits 88 once and its rule restarts every container of the pod in
    place: `init` runs again (a second line in /data/log), the sidecar and `main` restart once, same pod
    UID and IP, the emptyDir kept; every lastState is the reset's own (exit 137, ``RestartingAllContainers``),
    not `main`'s 88 — on 1.35 (alpha, profile ``gates-1.35``) none at all. Gate off: 1.34 drops the rules
    (ContainerRestartRules off), 1.35 refuses them (422, the action NotSupported)."""
    from e2e.documented.restart import REASON_ALL_OFF

    sc = scenario
    gate = _gate(sc, "RestartAllContainersOnContainerExits")
    try:
        stored = sc.apply("restart-all.yaml", name="all")[0]
        creation = "created" if stored["spec"]["containers"][0].get("restartPolicyRules") else "dropped"
    except ApiRefused as e:
        creation = str(e.status)
        sc.note("refusal", e.message)
    sc.expect("RR-2", f"creation[{gate}]", creation)
    if creation != "created":
        pytest.skip(REASON_ALL_OFF)
    sc.wait_for("all/main running", lambda: _running_id(sc, "all", "main") or None, 2 * WAIT_SLACK_S)
    before = sc.pod("all")
    sc.wait_for("main restarted and running",
                lambda: (pods.container_status(sc.pod("all"), "main").get("restartCount") or 0) >= 1
                and _running_id(sc, "all", "main") or None, 3 * WAIT_SLACK_S)
    sc.wait_for("side running", lambda: _running_id(sc, "all", "side") or None, WAIT_SLACK_S)
    after = sc.pod("all")
    log = sc.exec("all", "main", "cat", "/data/log").stdout
    sc.expect("RR-2", f"init_lines[{gate}]", len(log.split()), details={"log": log})
    sc.expect("RR-2", f"data_kept[{gate}]", sc.exec("all", "main", "ls", "/data/marker").exit_code == 0)
    sc.expect("RR-2", f"same_pod_uid[{gate}]", after["metadata"]["uid"] == before["metadata"]["uid"])
    sc.expect("RR-2", f"same_pod_ip[{gate}]", after["status"].get("podIP") == before["status"].get("podIP"))
    last = pods.last_termination(after, "main")  # {} without a lastState: "empty"
    sc.expect("RR-2", f"last_exit_code[{gate}][main]", last.get("exitCode", "empty"),
              details={"lastState": pods.container_status(after, "main").get("lastState")})
    sc.expect("RR-2", f"last_reason[{gate}][main]", last.get("reason", "empty"))
    sc.expect("RR-2", f"restarts[{gate}][main]", pods.container_status(after, "main").get("restartCount"))
    sc.expect("RR-2", f"restarts[{gate}][side]", pods.container_status(after, "side").get("restartCount"),
              details={"init": pods.container_status(after, "init")})


# -- RR-5 ------------------------------------------------------------------------------------------

# after the kubelet is back (the fault's health check: node Ready): CASES RR-5's "+ 20 s", so the
# probe workers of the restarted kubelet have run several periods
SETTLE_AFTER_RESTART_S = 20


@pytest.mark.case("RR-5")
@pytest.mark.profile("fast-lifecycle")
@pytest.mark.serial
@pytest.mark.record("Pod", "Event", "Node")
@pytest.mark.node_faults("kubelet_restarted", case="RR-5")
def test_crash_beside_a_probed_sidecar_after_a_kubelet_restart(scenario: Scenario):
    """RR-5 (R23): after a kubelet restart, `main` (beside a sidecar with a startupProbe) exits 2 and is
    restarted at once: restartCount 1, lastState exit 2 ``Error``, Ready again. 1.35.0 up to the patch
    carrying #137885 never restarted it (the sidecar's startup result was not seeded); 1.35.4, 1.36.3
    and 1.37.2 carry the fix in their prober worker."""
    from e2e.faults import kubelet_restarted

    sc = scenario
    sc.apply("sidecar-probed.yaml", name="pair")
    sc.wait_for("pair ready", lambda: (pods.condition(sc.pod("pair"), "Ready") or {}).get("status") == "True" or None,
                2 * WAIT_SLACK_S)
    # the kubelet of pair's node (on a --kubeconfig cluster a fault names its node: no default there)
    with kubelet_restarted(sc, sc.pod("pair")["spec"]["nodeName"]):
        pass
    time.sleep(SETTLE_AFTER_RESTART_S)
    marked = time.time()
    sc.exec("pair", "main", "touch", "/work/crash")
    budget = sc.judge.wait_budget_s("RR-5", "running_again_after_marker_s") + WAIT_SLACK_S
    sc.wait_for("main restarted and running",
                lambda: pods.container_status(sc.pod("pair"), "main").get("restartCount") == 1
                and _running_id(sc, "pair", "main") or None, budget, case="RR-5", measurement="running_again_after_marker_s")
    seen = next(c for c in sc.recorder.changes("Pod", "pair") if c.received_at >= marked
                and pods.container_status(c.obj, "main").get("restartCount") == 1
                and (pods.container_status(c.obj, "main").get("state") or {}).get("running"))
    sc.expect("RR-5", "running_again_after_marker_s", seen.received_at - marked, around=seen.received_at)
    ready = sc.first_within(WAIT_SLACK_S, "pair Ready again",
                            lambda: (pods.condition(sc.pod("pair"), "Ready") or {}).get("status") == "True" or None)
    pod = sc.pod("pair")
    last = pods.last_termination(pod, "main")
    sc.expect("RR-5", "restarts[main]", pods.container_status(pod, "main").get("restartCount"))
    sc.expect("RR-5", "last_exit_code[main]", last.get("exitCode"))
    sc.expect("RR-5", "last_reason[main]", last.get("reason"))
    sc.expect("RR-5", "ready_again", bool(ready))
