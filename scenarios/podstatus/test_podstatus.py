"""PC-1…PC-6 — pod conditions and what the kubelet reports back
(docs/cases/CASES-workloads.md §4 PC). Documented values: :mod:`e2e.documented.podstatus`."""

from __future__ import annotations

import time

import pytest

from e2e.cluster import gates
from e2e.cluster.kube import ApiRefused
from e2e.documented import podstatus as doc
from e2e.evidence.kubectl import server_columns
from e2e.evidence import endpoints
from e2e.evidence.stamps import first, parse, stamps_from_pod
from e2e.faults.node import node_shutdown, shutdown_capability
from e2e.measure.podstatus import LATENCIES, status_latency
from e2e.measure.values import expect_all
from e2e.record import pods
from e2e.record.timeline import parse_time
from e2e.run.scenario import Scenario
from e2e.base.waiting import WAIT_SLACK_S

# a workload family (CASES-workloads.md): `make e2e-workloads`, not in the default `make e2e`
pytestmark = pytest.mark.workloads

RECORD = ("Pod", "Event")
CHAIN = ("PodScheduled", "PodReadyToStartContainers", "Initialized", "ContainersReady", "Ready")


def _first(sc: Scenario, pod: str, check) -> dict | None:
    """The first recorded state of ``pod`` for which ``check(obj)`` holds."""
    return next((ch.obj for ch in sc.recorder.changes("Pod", pod) if check(ch.obj)), None)


def _cond(obj: dict | None, type_: str) -> dict:
    return pods.condition(obj, type_) or {}


# -- PC-1 ------------------------------------------------------------------------------------


@pytest.mark.case("PC-1")
@pytest.mark.record(*RECORD)
def test_condition_chain_and_texts(scenario: Scenario):
    """PC-1: (a) init 3 s, a sidecar, main ready after 5 s: the reasons and messages of
    Initialized, ContainersReady and Ready on the way, the True conditions in order; (b) no
    readiness probe: Ready with the start; (c) a readiness gate: ReadinessGatesNotReady until
    its condition is patched True."""
    sc = scenario
    sc.apply("chain.yaml", name="chain", init_s=doc.INIT_S, ready_after_s=doc.READY_AFTER_S)
    sc.apply("plain.yaml", name="noprobe")
    sc.apply("gated.yaml", name="gated", gate=doc.READINESS_GATE)
    sc.wait(pods.pod_ready("chain"), doc.INIT_S + doc.READY_AFTER_S + WAIT_SLACK_S)
    sc.wait(pods.pod_ready("noprobe"), WAIT_SLACK_S)

    # (a) while init runs
    init_running = sc.require(_first(sc, "chain", lambda o: pods.state(o, "init") == "running"
                                     and _cond(o, "Initialized").get("status") == "False"),
                              "a recorded state with init running and Initialized False")
    initialized = _cond(init_running, "Initialized")
    sc.expect("PC-1", "initialized_reason_while_init_runs", initialized.get("reason"), details={"condition": initialized})
    sc.expect("PC-1", "initialized_message_while_init_runs", initialized.get("message"))
    # (a) while main runs unready
    unready = sc.require(_first(sc, "chain", lambda o: pods.state(o, "main") == "running"
                                and _cond(o, "ContainersReady").get("status") == "False"),
                         "a recorded state with main running and ContainersReady False")
    for name, type_ in (("containers_ready", "ContainersReady"), ("ready", "Ready")):
        c = _cond(unready, type_)
        sc.expect("PC-1", f"{name}_reason_while_unready", c.get("reason"), details={"condition": c})
        sc.expect("PC-1", f"{name}_message_while_unready", c.get("message"))
    final = sc.pod("chain")
    times = [parse_time(_cond(final, t).get("lastTransitionTime")) for t in CHAIN]
    sc.expect("PC-1", "conditions_in_order", all(a is not None and b is not None and a <= b for a, b in zip(times, times[1:], strict=False)),
              details={t: _cond(final, t) for t in CHAIN})

    # (b) no readiness probe
    plain = sc.pod("noprobe")
    started = parse_time(pods.container_status(plain, "main")["state"]["running"]["startedAt"])
    ready_at = parse_time(_cond(plain, "Ready").get("lastTransitionTime"))
    sc.expect("PC-1", "ready_after_started_no_probe_s", ready_at - started,
              details={"startedAt": started, "ready": _cond(plain, "Ready")})

    # (c) readiness gate
    sc.wait_for("gated: ContainersReady True", lambda: _cond(sc.pod("gated"), "ContainersReady").get("status") == "True" or None,
                WAIT_SLACK_S)
    gated = sc.pod("gated")
    sc.expect("PC-1", "containers_ready_with_gate_missing", _cond(gated, "ContainersReady").get("status"))
    ready = _cond(gated, "Ready")
    sc.expect("PC-1", "ready_reason_gate_missing", ready.get("reason"), details={"condition": ready})
    sc.expect("PC-1", "ready_message_gate_missing", ready.get("message"))
    patched_at = time.time()
    sc.patch("Pod", "gated", {"status": {"conditions": [{"type": doc.READINESS_GATE, "status": "True"}]}},
             subresource="status")
    sc.wait(pods.pod_ready("gated"), doc.GATE_TO_READY_S + WAIT_SLACK_S)
    seen = next(ch.received_at for ch in sc.recorder.changes("Pod", "gated")
                if ch.received_at >= patched_at and _cond(ch.obj, "Ready").get("status") == "True")
    sc.expect("PC-1", "ready_after_gate_patch_s", seen - patched_at, around=seen)


# -- PC-2 (b), (c) ------------------------------------------------------------------------------


@pytest.mark.case("PC-2")
@pytest.mark.record(*RECORD)
def test_ready_to_start_containers(scenario: Scenario):
    """PC-2 (b): PodReadyToStartContainers True, its lastTransitionTime against the container's
    start, whole seconds (1.34–1.35: the status write after the start, never before it; from 1.36
    the sandbox-ready callback's write, before the start or beside it); (c) a
    RuntimeClass whose handler containerd lacks: False, its reason and message per minor, the
    FailedCreatePodSandBox event naming the handler; control: kind's ``runc`` handler, True.
    (a), the stalled pull: :func:`test_ready_to_start_while_pull_stalls`."""
    sc = scenario
    sc.apply("plain.yaml", name="plain")
    sc.apply("runtimeclass.yaml", name="bogus", rc=f"{sc.namespace}-bogus", handler="ple2e-missing")
    sc.apply("runtimeclass.yaml", name="control", rc=f"{sc.namespace}-runc", handler="runc")
    sc.wait(pods.pod_ready("plain"), WAIT_SLACK_S)
    sc.wait(pods.pod_ready("control"), WAIT_SLACK_S)
    plain = sc.pod("plain")
    started = parse_time(pods.container_status(plain, "main")["state"]["running"]["startedAt"])
    rtsc = _cond(plain, "PodReadyToStartContainers")
    at = parse_time(rtsc.get("lastTransitionTime")) if rtsc.get("status") == "True" else None
    sc.expect("PC-2", "ready_to_start_after_started_s", None if at is None else at - started,
              details={"condition": rtsc, "startedAt": started})
    sc.expect("PC-2", "ready_to_start_status[control]", _cond(sc.pod("control"), "PodReadyToStartContainers").get("status"))

    event = sc.wait_for("FailedCreatePodSandBox of bogus", lambda: next(iter(sc.events("FailedCreatePodSandBox", "bogus")), None),
                        WAIT_SLACK_S)
    sc.wait_for("bogus: PodReadyToStartContainers written", lambda: _cond(sc.pod("bogus"), "PodReadyToStartContainers") or None,
                WAIT_SLACK_S)
    cond = _cond(sc.pod("bogus"), "PodReadyToStartContainers")
    sc.expect("PC-2", "ready_to_start_status[bogus-handler]", cond.get("status"), details={"condition": cond})
    sc.expect("PC-2", "ready_to_start_reason[bogus-handler]", cond.get("reason") or "")
    sc.expect("PC-2", "ready_to_start_has_message[bogus-handler]", bool(cond.get("message")))
    message = event.obj.get("message") or ""
    sc.expect("PC-2", "sandbox_event_names_handler", "ple2e-missing" in message, details={"message": message})


# -- PC-4 ------------------------------------------------------------------------------------


@pytest.mark.case("PC-4")
@pytest.mark.record(*RECORD)
def test_deleted_pod_held_by_finalizer(scenario: Scenario):
    """PC-4 (R24): deleted pods held by a finalizer, container exiting 0 / 1 on SIGTERM:
    terminal phase Succeeded / Failed, STATUS Completed / Error (not Terminating), no restart;
    gone once the finalizer is removed."""
    sc = scenario
    variants = {"exit-0": 0, "exit-1": 1}
    for variant, code in variants.items():
        sc.apply("held.yaml", name=variant, code=code)
    for variant in variants:
        sc.wait(pods.container_running(variant, "main"), WAIT_SLACK_S)
    for variant in variants:
        sc.delete_pod(variant)
    for variant in variants:
        phase = sc.wait(pods.pod_phase(variant, "Succeeded", "Failed"), WAIT_SLACK_S)
        sc.expect("PC-4", f"phase[{variant}]", phase)
        sc.expect("PC-4", f"status_column[{variant}]", server_columns(sc, "Pod", variant).get("Status"))
        sc.expect("PC-4", "restarts", pods.container_status(sc.pod(variant), "main").get("restartCount", 0))
    for variant in variants:
        removed_at = time.time()
        sc.patch("Pod", variant, [{"op": "remove", "path": "/metadata/finalizers"}], patch_type="json")
        sc.wait(pods.pod_gone(variant), doc.GONE_AFTER_FINALIZER_S + WAIT_SLACK_S)
        gone_at = sc.recorder.changes("Pod", variant)[-1].received_at
        sc.expect("PC-4", "gone_after_finalizer_removed_s", gone_at - removed_at, around=gone_at)


# -- PC-5 ------------------------------------------------------------------------------------

# (what, patch, accepted) in the catalogue's order; a resize last
STEPS = [
    ("image", lambda img: {"spec": {"containers": [{"name": "main", "image": f"docker.io/{img}"}]}}, True),
    ("deadline-set", lambda img: {"spec": {"activeDeadlineSeconds": 3600}}, True),
    ("deadline-lowered", lambda img: {"spec": {"activeDeadlineSeconds": 1800}}, True),
    ("deadline-raised", lambda img: {"spec": {"activeDeadlineSeconds": 7200}}, False),
    ("toleration-added", lambda img: {"spec": {"tolerations": [{"key": "ple2e.test/pc5", "operator": "Exists", "effect": "NoSchedule"}]}}, True),
    ("toleration-removed", lambda img: [{"op": "remove", "path": "/spec/tolerations/0"}], False),
    ("command", lambda img: {"spec": {"containers": [{"name": "main", "command": ["sh", "-c", "sleep 3600"]}]}}, False),
]


@pytest.mark.case("PC-5")
@pytest.mark.record(*RECORD)
def test_generation_and_observed_generation(scenario: Scenario):
    """PC-5: image, activeDeadlineSeconds set and lowered, a toleration added, a resize are
    accepted (generation +1 each, observedGeneration on the status and every condition within
    [0, 2] s); raising the deadline, removing the toleration, changing the command: 422."""
    sc = scenario
    sc.apply("resizable.yaml", name="pc5")
    sc.wait(pods.pod_ready("pc5"), WAIT_SLACK_S)
    node = sc.pod("pc5")["spec"]["nodeName"]
    gate = gates.kubelet(sc.kube, node)
    sc.note("PodObservedGenerationTracking", gate.describe("PodObservedGenerationTracking"))
    sc.expect("PC-5", "observed_generation_gate", gate.enabled("PodObservedGenerationTracking"))
    spec_image = sc.pod("pc5")["spec"]["containers"][0]["image"]
    generation = int(sc.pod("pc5")["metadata"]["generation"])
    for what, body, accepted in [*STEPS, ("resize", None, True)]:
        sent = time.time()
        try:
            if body is None:
                answer = sc.resize("pc5", "main", requests={"cpu": "150m"})
            else:
                patch = body(spec_image)
                answer = sc.patch("Pod", "pc5", patch, patch_type="json" if isinstance(patch, list) else "strategic")
        except ApiRefused as e:
            if accepted:
                sc.expect("PC-5", f"accepted[{what}]", False, details={"refusal": str(e)})
            else:
                sc.expect("PC-5", f"refused_status[{what}]", e.status, details={"message": e.message})
            continue
        if not accepted:  # a forbidden change went through: judged as a status 200 against 422
            sc.expect("PC-5", f"refused_status[{what}]", 200, details={"answer": answer.get("spec")})
            continue
        sc.expect("PC-5", f"accepted[{what}]", True)
        new = int(answer["metadata"]["generation"])
        sc.expect("PC-5", f"generation_step[{what}]", new - generation)
        generation = new

        def observed(new: int = new, sent: float = sent):
            return next((ch for ch in sc.recorder.changes("Pod", "pc5") if ch.received_at >= sent
                         and ((ch.obj.get("status") or {}).get("observedGeneration") or 0) >= new), None)
        seen = sc.wait_for(f"status.observedGeneration {new}", observed, doc.OBSERVED_S + WAIT_SLACK_S)
        sc.expect("PC-5", f"observed_generation_after_patch_s[{what}]", seen.received_at - sent, around=seen.received_at)
        conds = (seen.obj.get("status") or {}).get("conditions") or []
        sc.expect("PC-5", f"conditions_observed_generation_current[{what}]",
                  all(c.get("observedGeneration") == new for c in conds),
                  details={"conditions": [(c["type"], c.get("observedGeneration")) for c in conds]})


# -- PC-3 ------------------------------------------------------------------------------------


def _first_seen(sc: Scenario, pod: str, check, after: float = 0.0) -> float | None:
    return next((ch.received_at for ch in sc.recorder.changes("Pod", pod) if ch.received_at >= after and check(ch.obj)), None)


@pytest.mark.case("PC-3")
@pytest.mark.record(*RECORD)
def test_status_latency(scenario: Scenario):
    """PC-3 (R39), 20 samples each, medians judged, p95 recorded: (a) a container's own start
    stamp → the watch sees it running; (b) its own stamp just before ``exit 1`` → the watch sees
    it terminated (restartPolicy Never: no back-off, one pod per sample); (c) a CPU resize → the
    watch sees the new requests in the container's status. The PLEGOnDemandRelist gate is read
    from the kubelet."""
    sc = scenario
    node = sc.kube.nodes()[0]["metadata"]["name"]
    kubelet = gates.kubelet(sc.kube, node)
    on_demand = str(kubelet.enabled("PLEGOnDemandRelist")).lower() if "PLEGOnDemandRelist" in kubelet else "absent"
    sc.note("PLEGOnDemandRelist", kubelet.describe("PLEGOnDemandRelist"))
    sc.expect("PC-3", "on_demand_relist_gate", on_demand)

    starts: list[float] = []
    exits: list[float] = []
    for i in range(doc.SAMPLES):
        sc.apply("latency.yaml", name=f"start-{i}", policy="Always", then="sleep 3600")
        sc.wait(pods.container_running(f"start-{i}", "main"), WAIT_SLACK_S)
        seen = _first_seen(sc, f"start-{i}", lambda o: pods.state(o, "main") == "running")
        # the container is running before its shell has written the stamp: read until it is there
        stamp = sc.first_within(WAIT_SLACK_S, f"start-{i}'s start stamp",
                                lambda i=i: first(parse(sc.kube.logs(sc.namespace, f"start-{i}", "main")), "start"))
        if seen is not None and stamp is not None:
            starts.append(seen - stamp.at)
        sc.delete("Pod", f"start-{i}", grace_period_s=1)
    for i in range(doc.SAMPLES):
        sc.apply("latency.yaml", name=f"exit-{i}", policy="Never", then="sleep 1; stamp exit; exit 1")
        sc.wait(pods.pod_phase(f"exit-{i}", "Failed"), WAIT_SLACK_S)
        seen = _first_seen(sc, f"exit-{i}", lambda o: pods.state(o, "main") == "terminated")
        stamp = first(stamps_from_pod(sc.pod(f"exit-{i}") or {}), "exit")
        if seen is not None and stamp is not None:
            exits.append(seen - stamp.at)
        sc.delete("Pod", f"exit-{i}", grace_period_s=1)
    resizes: list[float] = []
    sc.apply("latency.yaml", name="resize", policy="Always", then="sleep 3600")
    sc.wait(pods.container_running("resize", "main"), WAIT_SLACK_S)
    for i in range(doc.SAMPLES):
        cpu = "150m" if i % 2 == 0 else "100m"
        sent = time.time()
        sc.resize("resize", "main", requests={"cpu": cpu})

        def applied(cpu: str = cpu, sent: float = sent) -> float | None:
            return _first_seen(sc, "resize", lambda o: ((pods.container_status(o, "main").get("resources") or {})
                                                        .get("requests") or {}).get("cpu") == cpu, after=sent)
        resizes.append(sc.wait_for(f"status requests cpu {cpu}", applied, WAIT_SLACK_S) - sent)
    for name, values in zip(LATENCIES, (starts, exits, resizes), strict=True):
        sc.require(len(values) == doc.SAMPLES or None, f"{doc.SAMPLES} samples of {name} (got {len(values)})")
        expect_all(sc.expect, [status_latency(name, values)])


# -- PC-2 (a) --------------------------------------------------------------------------------

STALL_PORT = 5998
STALL_S = 10  # how long the pull is left stalled before the condition is read
# accepts on the node's loopback and never answers; ends by itself after 300 s at the latest
LISTENER = ("import socket, time\n"
            "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
            f"s.bind(('127.0.0.1', {STALL_PORT})); s.listen(16); s.settimeout(1); held = []; end = time.time() + 300\n"
            "while time.time() < end:\n"
            "    try: held.append(s.accept()[0])\n"
            "    except OSError: pass\n")


@pytest.mark.case("PC-2")
@pytest.mark.record(*RECORD)
def test_ready_to_start_while_pull_stalls(scenario: Scenario):
    """PC-2 (a) (R43): a pull from a listener on the node's own loopback that accepts and never
    answers (python3 of the node image, started by ``docker exec``, killed by its PID in a
    ``finally``): after 10 s the container still waits in ContainerCreating and
    PodReadyToStartContainers reads False (1.34, 1.35) or True (1.36+)."""
    sc = scenario
    pid = sc.node_exec("sh", "-c", f"timeout 300 python3 -c \"{LISTENER}\" >/dev/null 2>&1 & echo $!").strip()
    try:
        sc.require(pid.isdigit() or None, f"the loopback listener's PID (got {pid!r})")
        sc.wait_for(f"the listener on 127.0.0.1:{STALL_PORT}", lambda: f":{STALL_PORT} " in sc.node_exec("ss", "-ltn") or None, WAIT_SLACK_S)
        listening = sc.node_exec("ss", "-ltnH", f"sport = :{STALL_PORT}")
        sc.require(listening.strip() and all("127.0.0.1:" in line for line in listening.strip().splitlines()) or None,
                   f"the listener bound to the loopback only ({listening.strip()!r})")
        sc.apply("stalled.yaml", name="stalled", port=STALL_PORT)
        sc.wait_for("stalled scheduled", lambda: (_cond(sc.pod("stalled"), "PodScheduled").get("status") == "True") or None, WAIT_SLACK_S)
        time.sleep(STALL_S)
        pod = sc.pod("stalled")
        waiting = (pods.container_status(pod, "main").get("state") or {}).get("waiting") or {}
        sc.expect("PC-2", "stalled_container_waiting_reason", waiting.get("reason"), details={"state": waiting})
        cond = _cond(pod, "PodReadyToStartContainers")
        sc.expect("PC-2", "ready_to_start_while_pull_stalls", cond.get("status"), details={"condition": cond})
        sc.delete("Pod", "stalled", grace_period_s=0)
    finally:
        if pid.isdigit():
            sc.node_exec("sh", "-c", f"kill {pid} 2>/dev/null; true")


# -- PC-6 ------------------------------------------------------------------------------------

PC6_VARIANTS = {"probe": "rm -f /tmp/ready", "control": ":"}


@pytest.mark.case("PC-6")
@pytest.mark.serial
@pytest.mark.profile(doc.PC6_PROFILE)
@pytest.mark.record("Pod", "Event", "EndpointSlice", "Node")
@pytest.mark.node_faults("node_shutdown", case="PC-6", window_s=doc.PC6_GRACE_S + WAIT_SLACK_S, node="last")
def test_readiness_of_pods_killed_by_graceful_node_shutdown(scenario: Scenario):
    """PC-6: a graceful node shutdown of the worker (NF-9's PrepareForShutdown(true)) kills two
    Deployments' pods there, each trapping SIGTERM for 15 s; the "probe" pods' trap also removes
    their readiness file, the "control" pods keep it. Per pod: its first Ready=False after the signal
    (when, and its reason: who wrote it), readiness probe runs after its SIGTERM, its EndpointSlice
    endpoint following, its terminal phase."""
    sc = scenario
    worker = _shutdown_worker(sc)
    reason = shutdown_capability(sc, worker)
    if reason:
        pytest.skip(f"environment: graceful node shutdown is not available: {reason}")
    for variant, on_term in PC6_VARIANTS.items():
        sc.apply("shutdown.yaml", name=f"pc6-{variant}", worker=worker, replicas=doc.PC6_REPLICAS, period_s=doc.PC6_PERIOD_S,
                 term_s=doc.PC6_TERM_S, grace_s=doc.PC6_GRACE_S, on_term=on_term)

    def ready_pods(variant: str) -> list[str]:
        names = {ch.name for ch in sc.recorder.changes("Pod") if ch.name.startswith(f"pc6-{variant}-")}
        return sorted(n for n in names if _cond(sc.pod(n), "Ready").get("status") == "True")

    sc.wait_for(f"{doc.PC6_REPLICAS} Ready pods of each Deployment on {worker}",
                lambda: all(len(ready_pods(v)) == doc.PC6_REPLICAS for v in PC6_VARIANTS), WAIT_SLACK_S + 60)
    originals = {v: ready_pods(v) for v in PC6_VARIANTS}
    signal_at = time.time()  # the emit command starts right after (NF-9)
    # the block's longest wait: through the node agent the shutdown kills the agent's pod, and the
    # node cancels it by itself at the end of this window (e2e.faults.node node_shutdown)
    with node_shutdown(sc, worker, window_s=doc.PC6_GRACE_S + WAIT_SLACK_S):
        sc.mark(signal_at, "PrepareForShutdown(true)")
        sc.wait_for("every shut-down pod terminal",
                    lambda: all(((sc.pod(p) or {}).get("status") or {}).get("phase") in ("Succeeded", "Failed")
                                for names in originals.values() for p in names),
                    doc.PC6_GRACE_S + WAIT_SLACK_S)
    for variant, names in originals.items():
        for pod in names:
            _judge_shutdown_readiness(sc, variant, pod, signal_at)


def _shutdown_worker(sc: Scenario) -> str:
    """The node PC-6 shuts down: the worker of the suite's two-node kind cluster; on a
    ``--kubeconfig`` cluster the last by name of the nodes placed for the test (never a control
    plane; NF-9's rule)."""
    if sc.kind is not None:
        return next(n for n in sc.kind.nodes() if n != sc.kind.control_plane)
    if not sc.nodes:
        pytest.skip("needs a schedulable node placed for the test, has none")
    return sc.nodes[-1]


def _judge_shutdown_readiness(sc: Scenario, variant: str, pod: str, signal_at: float) -> None:
    changes = [ch for ch in sc.recorder.changes("Pod", pod) if ch.received_at >= signal_at]
    first_false = next((ch for ch in changes if _cond(ch.obj, "Ready").get("status") == "False"), None)
    sc.expect("PC-6", f"not_ready_after_signal_s[{variant}]", None if first_false is None else round(first_false.received_at - signal_at, 3),
              around=first_false.received_at if first_false else None, details={"pod": pod})
    cond = _cond(first_false.obj if first_false else None, "Ready")
    sc.expect("PC-6", f"not_ready_reason[{variant}]", None if first_false is None else cond.get("reason") or "",
              details={"pod": pod, "condition": cond})
    if first_false is not None:
        # not ready, or removed from the slice (a terminal pod's endpoint goes)
        gone = next((e for e in endpoints.endpoint_states(sc.recorder.changes("EndpointSlice"))
                     if e.pod == pod and e.received_at >= signal_at and not (e.present and e.ready)), None)
        sc.expect("PC-6", f"endpoint_not_ready_after_pod_not_ready_s[{variant}]",
                  None if gone is None else round(gone.received_at - first_false.received_at, 3), details={"pod": pod})
    log = parse(sc.kube.logs(sc.namespace, pod, "app"))
    sigterm = first(log, "sigterm")
    runs = [s for s in log if s.event.startswith("probe:readiness:")]
    after = [s for s in runs if sigterm is not None and s.at > sigterm.at]
    sc.expect("PC-6", f"probe_runs_after_sigterm[{variant}]", None if sigterm is None else len(after),
              details={"pod": pod, "sigterm": sigterm.at if sigterm else None, "last_runs": [(s.event, s.at) for s in runs[-3:]],
                       "exit": getattr(first(log, "exit"), "at", None)})
    sc.expect("PC-6", "phase_after_shutdown", ((sc.pod(pod) or {}).get("status") or {}).get("phase"), details={"pod": pod})
