"""KB — known upstream bugs, tracked per version (CASES.md KB-1 … KB-8), on a real cluster.

Each test applies the bug's small input and measures what the cluster does; the registry
(:mod:`e2e.documented.known_bugs`) documents today's buggy behaviour with the upstream issue, the
correct value and the mechanism, and where known the fix and the patches it reaches. A run where
the bug shows on a patch without the fix passes, marked "known bug present"; the correct behaviour
there ends "bug no longer present — fixed on this version?" (``BUG FIXED?``, not a failure); on a
patch the fix reaches the correct behaviour is "fixed as expected" (a pass) and the bug fails the
test (``bug-present-despite-fix``); anything else fails.
"""

from __future__ import annotations

import time
from functools import partial
from collections import Counter

import pytest
from kubernetes.client.exceptions import ApiException

from e2e.documented import known_bugs as doc
from e2e.cluster.gates import GatesUnreadable
from e2e.documented.kubelet import (CONTAINER_START_S, KUBELET_HANDOFF_S, MINIMUM_GRACE_PERIOD_S, PLEG_RELIST_S, SANDBOX_START_S,
                                    STATUS_UPDATE_S)
from e2e.documented.storage import EVICTION_MONITORING_PERIOD_S, WRITABLE_LAYER_LAG_S, crossing_to_event_high
from e2e.evidence.ephemeral import TERMINAL_PHASES, eviction
from e2e.evidence.kubelet_heap import HeapSample, read_sample, table
from e2e.evidence.oomkill import parse_dmesg, reports_for_container
from e2e.evidence.stamps import find, first, labelled, merge, parse, stamps_from_changes
from e2e.evidence.stamp_logs import stamps_from_logs
from e2e.evidence.stamp_table import merged_table
from e2e.faults.node import node_partitioned_kubelet_restarted
from e2e.measure.known_bugs import (api_status_before, first_probe_after_start, kubelet_leak, prestop_outlives, probes_before_started,
                                    readiness_during_termination, ready_before_first_probe, started_when_first_running)
from e2e.measure.values import expect_all
from e2e.record.pods import condition, container_status, phase, pod_ready
from e2e.record.timeline import container_samples
from e2e.run.scenario import Scenario
from e2e.base.waiting import WAIT_SLACK_S
from scenarios.faults.fault_helpers import two_node_worker, wait_until_time


# -- KB-1 -------------------------------------------------------------------------------------


def first_not_running(sc: Scenario, pod: str, container: str) -> tuple[float, dict] | None:
    """``(receive time, object)`` of the first recorded change in which ``container`` of ``pod``
    is no longer running, or the pod object is gone — when the API first showed the exit."""
    was_running = False
    for ch in sc.recorder.changes("Pod", pod):
        state = container_status(ch.obj, container).get("state") or {}
        if state.get("running"):
            was_running = True
        elif was_running and (state.get("terminated") or ch.type == "DELETED"):
            return ch.received_at, ch.obj
    return None


def deleted_at(sc: Scenario, pod: str) -> float | None:
    return next((ch.received_at for ch in sc.recorder.changes("Pod", pod) if ch.type == "DELETED"), None)


@pytest.mark.case("KB-1")
@pytest.mark.min_k8s(34)  # the sleep action: on by default since 1.30, GA in 1.34; read in 1.34–1.37
def test_prestop_sleep_outlives_its_container(scenario: Scenario):
    """KB-1: a preStop sleep action of 20 s keeps the pod (and the API's ``running``) for the full
    20 s after its only container exited by itself ~6 s after the delete (kubernetes#134338).
    The exit time is the container's own stamp; API and deletion times are the recorder's."""
    sc = scenario
    pod = "prestop-outlives"
    sc.apply("prestop-sleep-outlives.yaml", name=pod, grace_s=doc.KB1_GRACE_S,
             prestop_sleep_s=doc.KB1_PRESTOP_SLEEP_S, run_s=doc.KB1_RUN_S)
    start = sc.wait_for(f"{pod} start stamp", lambda: find(stamps_from_logs(sc, pod), "app start"), WAIT_SLACK_S)
    # the documented input: delete KB1_DELETE_AT_S after the container's start (at once if later)
    time.sleep(max(0.0, start.at + doc.KB1_DELETE_AT_S - time.time()))
    t_delete = sc.delete_pod(pod)

    exited = sc.wait_for(f"{pod} exit stamp", lambda: find(stamps_from_logs(sc, pod), "app exit"), doc.KB1_RUN_S + WAIT_SLACK_S)
    api_at_exit = container_status(sc.pod(pod), "app").get("state") or {}
    sc.wait_for(f"{pod} deleted", lambda: deleted_at(sc, pod),
                sc.judge.wait_budget_s("KB-1", "pod_gone_after_delete_s") + WAIT_SLACK_S)

    stamps = merge(stamps_from_changes(sc.recorder.changes("Pod"), pod), [start, exited])
    shown_at, shown_obj = first_not_running(sc, pod, "app") or (None, None)
    gone = deleted_at(sc, pod)
    terminated = (container_status(shown_obj, "app").get("state") or {}).get("terminated") or {}
    for t, label in ((start.at, "app start (stamp)"), (exited.at, "app exit (stamp)")):
        sc.mark(t, label)
    if shown_at:
        sc.mark(shown_at, "API shows the exit")
    ctx = merged_table(sc.recorder.changes(), stamps, sc.t0, sc.marks)
    sc.add_file("timeline-with-stamps.txt", ctx)
    details = {
        "delete_after_start_s": round(t_delete - start.at, 3),
        "api_state_when_exit_stamped": sorted(api_at_exit),
        "exit_stamp_after_delete_s": round(exited.at - t_delete, 3),
        "api_shows_exit_after_delete_s": None if shown_at is None else round(shown_at - t_delete, 3),
        "pod_gone_after_delete_s": None if gone is None else round(gone - t_delete, 3),
        "finished_at": terminated.get("finishedAt"),
    }
    sc.expect("KB-1", "exit_code", terminated.get("exitCode"), context=ctx, details=details)
    expect_all(partial(sc.expect, context=ctx), prestop_outlives(t_delete, exited.at, shown_at, gone, details))


# -- KB-2 -------------------------------------------------------------------------------------

# Budget for all pods to end (a wait, not a verdict): the ES-3 path from the crossing to the
# terminal status, plus one kill per pod (evictPod blocks until each pod's containers are killed:
# the pods of one synchronize pass are evicted one after the other), plus pod starts.
KB2_WAIT_S = (crossing_to_event_high(WRITABLE_LAYER_LAG_S) + EVICTION_MONITORING_PERIOD_S + KUBELET_HANDOFF_S
              + doc.KB2_RUNS * MINIMUM_GRACE_PERIOD_S + STATUS_UPDATE_S + 2 * WAIT_SLACK_S)


def kb2_outcome(sc: Scenario, pod: str) -> str:
    """``"<phase>/<reason or –>/<exit code> <container reason>"`` of an ended pod from its container's
    ``state`` (or, where only the placeholder was published, ``lastState``), e.g.
    ``Succeeded/–/0 Completed`` or ``Failed/Evicted/137 ContainerStatusUnknown (lastState)``."""
    obj = sc.pod(pod) or {}
    status = obj.get("status") or {}
    cs = container_status(obj, "app")
    term = (cs.get("state") or {}).get("terminated")
    where = ""
    if not term:
        term, where = (cs.get("lastState") or {}).get("terminated") or {}, " (lastState)"
    return f"{status.get('phase')}/{status.get('reason') or '–'}/{term.get('exitCode')} {term.get('reason') or '–'}{where}"


@pytest.mark.heavy
@pytest.mark.case("KB-2")
@pytest.mark.serial  # evictions are the kubelet's node-wide loop: no other scenario's pods on the node
def test_evicted_pod_exiting_0_on_sigterm(scenario: Scenario):
    """KB-2: KB2_RUNS pods (in parallel) each write 20 MiB over an 8Mi ephemeral-storage limit and
    exit 0 on SIGTERM. Invariant in every run: the ``Evicted`` event with the pod-total message, one
    run of the container (restartCount is a placeholder in the Failed outcome), a terminal phase. The known bug (kubernetes#141483): some runs end ``Succeeded`` with
    no reason; the count (and each outcome's frequency, in the details) is the judged value."""
    sc = scenario
    pods = [f"evict-exit0-{i}" for i in range(1, doc.KB2_RUNS + 1)]
    for pod in pods:
        sc.apply("evicted-exit0.yaml", name=pod, limit=doc.KB2_LIMIT, write_mi=doc.KB2_WRITE_MI)

    def ended(p: str, changes) -> bool:
        obj = sc.pod(p)
        return phase(obj) in TERMINAL_PHASES and (eviction(changes, p) is not None or _start_error(obj) is not None)

    def all_ended() -> bool:
        changes = sc.recorder.changes()
        return all(ended(p, changes) for p in pods)

    def not_ended() -> str:
        changes = sc.recorder.changes()
        return "not ended: " + "; ".join(
            f"{p} phase {phase(sc.pod(p))}, Evicted event {'seen' if eviction(changes, p) else 'not seen'}, "
            f"container {container_status(sc.pod(p) or {}, 'app').get('state')}"
            for p in pods if not ended(p, changes))

    sc.wait_for(f"{len(pods)} pods evicted and terminal", all_ended, KB2_WAIT_S, explain=not_ended)
    # a run whose container the runtime never started (StartError: runc's "unable to freeze" on this
    # cgroup v1 host under the ten parallel starts, CI of 2026-12-02) wrote nothing and was never
    # evicted: not a run of KB-2, said in a note and left out of the count
    not_started = {p: _start_error(sc.pod(p)) for p in pods if _start_error(sc.pod(p)) is not None}
    if not_started:
        sc.note("kb2_not_started_by_the_runtime", "; ".join(f"{p}: {m}" for p, m in not_started.items()))
    pods = [p for p in pods if p not in not_started]
    sc.require(pods if len(pods) * 2 >= doc.KB2_RUNS else None,
               f"at least {doc.KB2_RUNS // 2} of {doc.KB2_RUNS} runs started by the runtime (not started: {not_started})")
    changes = sc.recorder.changes()
    outcomes: dict[str, str] = {}
    for pod in pods:
        i = int(pod.rsplit("-", 1)[1])
        ev = eviction(changes, pod)
        obj = sc.pod(pod)
        outcomes[pod] = kb2_outcome(sc, pod)
        details = {"outcome": outcomes[pod], "first_terminal_phase": ev.terminal_phase,
                   "restart_count": container_status(obj, "app").get("restartCount"),
                   "ends": {c: vars(e) for c, e in ev.ends.items()}}
        sc.expect("KB-2", f"evicted_event_message[run={i}]", ev.event_message, details=details, limit=doc.KB2_LIMIT)
        sc.expect("KB-2", f"container_runs[run={i}]", len(sc.attempts(pod, "app")), details=details)
        sc.expect("KB-2", f"terminal_phase[run={i}]", phase(obj), details=details)

    frequency = Counter(outcomes.values())
    succeeded = sum(1 for pod in pods if phase(sc.pod(pod)) == "Succeeded")
    table = "\n".join(f"{n:3} of {len(pods)}  {outcome}" for outcome, n in frequency.most_common())
    sc.add_file("KB-2 outcome frequency.txt", f"KB-2 outcomes over {len(pods)} runs (pods in parallel)\n\n{table}\n\nper run:\n"
                + "\n".join(f"{p}: {o}" for p, o in outcomes.items()))
    sc.note("kb2_frequency", "; ".join(f"{o}: {n}/{len(pods)}" for o, n in frequency.most_common()))
    sc.expect("KB-2", "runs_ended_succeeded", succeeded,
              details={"runs": len(pods), "concurrent": True, "frequency": dict(frequency), "per_run": outcomes})


def _start_error(obj: dict | None) -> str | None:
    """The runtime's message when the container ``app`` of ``obj`` ended in ``StartError`` (it never
    ran: the runtime failed to create or start it), else None."""
    term = (container_status(obj or {}, "app").get("state") or {}).get("terminated") or {}
    return (term.get("message") or "StartError") if term.get("reason") == "StartError" else None


# -- KB-3 -------------------------------------------------------------------------------------


@pytest.mark.heavy
@pytest.mark.case("KB-3")
def test_init_container_with_oom_killed_child_exiting_0(scenario: Scenario):
    """KB-3 (cgroup v1): the init container's child is OOM-killed, the init container exits 0 with
    reason ``OOMKilled``; the kubelet stops the sandbox, the main container never starts, and the
    pod stays ``Pending`` through a full pod-worker re-sync (kubernetes#116676) where it should be
    ``Failed``. cgroup v2: memory.oom.group kills the whole init container (137, as OM-3), so the
    input does not arise: judged as documented (``Failed``, no bug)."""
    sc = scenario
    sc.note("cgroup", f"v{sc.cgroup}" if sc.cgroup else "unknown")
    pod = "init-child-oom"
    sc.apply("init-child-oom.yaml", name=pod, limit_mi=doc.KB3_LIMIT_MI, alloc_mi=doc.KB3_ALLOC_MI)

    def sandbox_stopped() -> dict | None:
        obj = sc.pod(pod)
        init = container_status(obj, "init").get("state") or {}
        return obj if init.get("terminated") and (condition(obj, "PodReadyToStartContainers") or {}).get("status") == "False" else None

    sc.wait_for(f"{pod} init terminated and sandbox stopped", sandbox_stopped, WAIT_SLACK_S)
    t_stopped = time.time()
    sc.mark(t_stopped, "sandbox stopped")
    stayed = sc.never_within(doc.KB3_WINDOW_S, f"{pod} leaves Pending", lambda: phase(sc.pod(pod)) != "Pending")
    obj = sc.pod(pod)
    init = container_status(obj, "init")
    term = (init.get("state") or {}).get("terminated") or {}
    main_started = any(container_status(ch.obj, "app").get("state", {}).get("running")
                       or container_status(ch.obj, "app").get("state", {}).get("terminated")
                       for ch in sc.recorder.changes("Pod", pod))
    details = {"window_s": doc.KB3_WINDOW_S, "pending_throughout": stayed, "init_state": term,
               "conditions": {c["type"]: c.get("status") for c in (obj.get("status") or {}).get("conditions") or []},
               "app_waiting": (container_status(obj, "app").get("state") or {}).get("waiting")}
    sc.expect("KB-3", "init_terminated_reason", term.get("reason"), details=details)
    sc.expect("KB-3", "init_exit_code", term.get("exitCode"), details=details)
    if sc.access is not None and term.get("containerID"):
        kernel = parse_dmesg(sc.node_exec("dmesg", timeout=30, node=sc.node_of(pod)))
        killed = sorted({k.name for r in reports_for_container(kernel, term["containerID"]) for k in r.killed})
        sc.expect("KB-3", "kernel_killed_tasks", " ".join(killed) or None, details=details)
    sc.expect("KB-3", "main_started", main_started, details=details)
    sc.expect("KB-3", "ready_to_start_containers", (condition(obj, "PodReadyToStartContainers") or {}).get("status"), details=details)
    sc.expect("KB-3", "phase", phase(obj), details=details)


# -- KB-4 -------------------------------------------------------------------------------------


def _app_log(sc: Scenario, pod: str, previous: bool = False):
    return parse(sc.kube.logs(sc.namespace, pod, "app", previous=previous))


@pytest.mark.case("KB-4")
def test_restarted_container_inherits_started(scenario: Scenario):
    """KB-4: a container restarted after its liveness probe failed gets liveness and readiness
    probes before its own startup probe passed (kubernetes#141155): its first status says
    ``started: true``, copied from the killed run. The first run, with no status to copy, is the
    control: its startup probe gates the others. Counted from the probes' own stamps in each run's
    log, and from the recorded statuses."""
    sc = scenario
    pod = "restart-started"
    sc.apply("restart-started.yaml", name=pod, starts_after_s=doc.KB4_STARTS_AFTER_S, unhealthy_after_s=doc.KB4_UNHEALTHY_AFTER_S,
             startup_period_s=doc.KB4_STARTUP_PERIOD_S, startup_failure_threshold=doc.KB4_STARTUP_FAILURE_THRESHOLD,
             other_period_s=doc.KB4_OTHER_PERIOD_S)

    def restarts() -> int:
        return container_status(sc.pod(pod), "app").get("restartCount") or 0

    def started_run() -> list | None:
        """The second run's log once its startup probe succeeded (no log yet while it waits)."""
        try:
            stamps = _app_log(sc, pod)
        except ApiException:
            return None
        return stamps if first(stamps, "start", run="2") and first(stamps, "probe:startup:success") else None

    # the first run's startup probe passes within a period of its file, its liveness probe fails at
    # the next run after /tmp/unhealthy, the kill (TERM trapped: at once) and the restart
    sc.wait_for(f"{pod} restarted after its liveness probe failed", lambda: restarts() >= 1,
                max(doc.KB4_STARTS_AFTER_S + doc.KB4_STARTUP_PERIOD_S, doc.KB4_UNHEALTHY_AFTER_S) + doc.KB4_OTHER_PERIOD_S
                + MINIMUM_GRACE_PERIOD_S + 2 * WAIT_SLACK_S)
    # the second run: its startup probe passes within two startup periods (the first tick may only
    # record Unknown for the new container, worker.go doProbe)
    current = sc.wait_for(f"{pod}'s second run: a startup probe success in its log", started_run,
                          2 * doc.KB4_STARTUP_PERIOD_S + doc.KB4_STARTS_AFTER_S + WAIT_SLACK_S)
    previous = _app_log(sc, pod, previous=True)
    for stamps, run in ((previous, "first run"), (current, "second run")):
        for label, event in (("start", "start"), ("startup probe success", "probe:startup:success")):
            found = first(stamps, event)
            if found:
                sc.mark(found.at, f"{run}: {label}")
    sc.add_file("KB-4 probe stamps.txt", "first run:\n" + "\n".join(f"{s.at:.6f} {s.event}" for s in previous)
                + "\n\nsecond run:\n" + "\n".join(f"{s.at:.6f} {s.event}" for s in current))
    samples = container_samples(sc.recorder.changes("Pod"), pod)
    expect_all(sc.expect, [probes_before_started("first run", previous), probes_before_started("restarted", current),
                           started_when_first_running("first run", samples, "app", 0),
                           started_when_first_running("restarted", samples, "app", 1)])
    sc.expect("KB-4", "restart_count", restarts(), details={"killing": [ch.obj.get("message") for ch in sc.events("Killing", pod)]})


# -- KB-5 -------------------------------------------------------------------------------------


def _child_exit(sc: Scenario, pod: str) -> tuple[str, int | None] | None:
    """``("child", N)`` once PID 1 printed its child's exit status ("child exit N"), ``("ended",
    None)`` once the container ended without (cgroup v2: the child's OOM kill took it), else None."""
    try:
        text = sc.kube.logs(sc.namespace, pod, "app") or ""  # None while the log is empty
    except ApiException:
        text = ""
    code = next((int(line.split()[-1]) for line in text.splitlines() if line.startswith("child exit ")), None)
    if code is not None:
        return "child", code
    return ("ended", None) if _terminated(sc, pod) else None


def _terminated(sc: Scenario, pod: str) -> dict | None:
    """The ``terminated`` state of ``app`` in the newest recorded change of ``pod`` (also its DELETED)."""
    changes = sc.recorder.changes("Pod", pod)
    return ((container_status(changes[-1].obj, "app").get("state") or {}).get("terminated")) if changes else None


@pytest.mark.case("KB-5")
def test_sigterm_exit_after_a_child_oom_reads_oomkilled(scenario: Scenario):
    """KB-5 (cgroup v1): a child of the container is OOM-killed, the container lives on; deleted, it
    exits 143 on the SIGTERM — and its reason reads ``OOMKilled`` (kubernetes#140716), where the
    correct one is ``Error``. cgroup v2: memory.oom.group takes the whole container at the child's
    OOM kill (137, ``OOMKilled``), so the input does not arise: judged as documented (no bug)."""
    sc = scenario
    sc.note("cgroup", f"v{sc.cgroup}" if sc.cgroup else "unknown")
    pod = "oom-child-sigterm"
    sc.apply("oom-child-sigterm.yaml", name=pod, limit_mi=doc.KB5_LIMIT_MI, alloc_mi=doc.KB5_ALLOC_MI, exit_code=doc.KB5_EXIT_CODE)
    what, child = sc.wait_for(f"{pod}: the child's exit printed, or the container ended", lambda: _child_exit(sc, pod), 2 * WAIT_SLACK_S)
    container_id = container_status(sc.pod(pod), "app").get("containerID")
    node = sc.node_of(pod)
    t_delete = None
    if what == "child":
        sc.mark(time.time(), f"child exit {child} seen")
        t_delete = sc.delete_pod(pod)
    # the trap exits at once: the kubelet's hand-off, the PLEG relist and the status write
    term = sc.wait_for(f"{pod}: app terminated", lambda: _terminated(sc, pod),
                       KUBELET_HANDOFF_S + PLEG_RELIST_S + STATUS_UPDATE_S + WAIT_SLACK_S)
    details = {"child_exit": child, "deleted": t_delete is not None,
               "terminated": {k: term.get(k) for k in ("exitCode", "reason", "signal", "startedAt", "finishedAt")}}
    sc.expect("KB-5", "child_exit_code", "absent" if child == "ended" else child, details=details)
    if sc.access is not None and container_id:
        kernel = parse_dmesg(sc.node_exec("dmesg", timeout=30, node=node))
        killed = sorted({k.name for r in reports_for_container(kernel, container_id) for k in r.killed})
        sc.expect("KB-5", "kernel_killed_tasks", " ".join(killed) or None, details=details)
    sc.expect("KB-5", "exit_code", term.get("exitCode"), details=details)
    sc.expect("KB-5", "terminated_reason", term.get("reason"), details=details)


# -- KB-6 -------------------------------------------------------------------------------------


def ready_false_after(sc: Scenario, pod: str, after: float) -> float | None:
    """Receive time of the first recorded change of ``pod`` after ``after`` whose Ready condition is
    not True (also its DELETED object, or the DELETED itself)."""
    for ch in sc.recorder.changes("Pod", pod):
        if ch.received_at > after and ((condition(ch.obj, "Ready") or {}).get("status") != "True" or ch.type == "DELETED"):
            return ch.received_at
    return None


@pytest.mark.case("KB-6")
def test_exec_readiness_probe_runs_during_termination(scenario: Scenario):
    """KB-6: a deleted pod's exec readiness probe goes on through the grace period, so Ready turns
    False within a period of the SIGTERM that made it fail — not only when the container is
    SIGKILLed at the grace end (kubernetes#140881, the 1.35 regression; fixed in 1.37.0 by #140882).
    Judged from the container's and the probes' own stamps (kept in the termination message) and
    the recorded Ready condition."""
    sc = scenario
    pod = "readiness-terminating"
    sc.apply("readiness-terminating.yaml", name=pod, grace_s=doc.KB6_GRACE_S, period_s=doc.KB6_READINESS_PERIOD_S)
    sc.wait(pod_ready(pod), WAIT_SLACK_S)
    t_delete = sc.delete_pod(pod)
    # the logs while the container lives (its log goes with the pod), then the pod's removal
    sc.first_within(doc.KB6_GRACE_S - 2 * doc.KB6_READINESS_PERIOD_S, f"{pod} Ready False", lambda: ready_false_after(sc, pod, t_delete))
    live = stamps_from_logs(sc, pod)
    sc.wait_for(f"{pod} deleted", lambda: deleted_at(sc, pod), doc.KB6_BUGGY_BAND.high + WAIT_SLACK_S)
    stamps = merge(live, stamps_from_changes(sc.recorder.changes("Pod"), pod))
    sigterm = sc.require(first(stamps, "sigterm"), f"{pod}: the container's sigterm stamp: {stamps}")
    sc.mark(sigterm.at, "sigterm (stamp)")
    ready_false = ready_false_after(sc, pod, t_delete)
    if ready_false:
        sc.mark(ready_false, "Ready not True")
    errored = [ch.obj.get("message") for ch in sc.events("Unhealthy", pod) if "errored" in (ch.obj.get("message") or "")]
    expect_all(sc.expect, readiness_during_termination(sigterm.at, ready_false, stamps),
               sigterm_after_delete_s=round(sigterm.at - t_delete, 3), probe_errored_events=errored[:5])


# -- KB-7 -------------------------------------------------------------------------------------


@pytest.mark.case("KB-7")
@pytest.mark.serial  # the worker's kubelet cut off and restarted: no other scenario's pods on it
@pytest.mark.profile("multi-node")  # a worker to cut (the API server stays on the control plane); grace 50 s
@pytest.mark.record("Pod", "Event", "Node")
@pytest.mark.node_faults("node_partitioned_kubelet_restarted", case="KB-7", window_s=doc.KB7_CUT_S, node="last")
def test_container_recreated_during_an_api_cut_is_ready_before_its_probe(scenario: Scenario):
    """KB-7: a container that exits while its worker is cut off from the API server is recreated
    there; the kubelet, restarted ≥ 10 s later and before the heal, reports the new container Ready
    — from the Ready status the cut left in the API — until its own readiness probe runs,
    initialDelaySeconds after its start (kubernetes#141473). Judged from the runs' and the probes'
    own stamps (the logs of both runs, read after the heal) and the recorded statuses; the cut
    never reaches the node's Ready=Unknown (that would mark the pod not Ready: no bug to see)."""
    sc = scenario
    worker = two_node_worker(sc)
    settings = sc.lifecycle(worker)
    limit_s = doc.kb7_cut_limit_s(settings.lease_s, settings.grace_s)
    if doc.KB7_CUT_S > limit_s:
        pytest.skip(f"the cut lasts up to {doc.KB7_CUT_S} s; the node would go Ready=Unknown (its pods marked not Ready) "
                    f"after {limit_s:g} s: needs a longer node-monitor-grace-period; {settings.source}")
    pod = "stale-ready"
    sc.apply("stale-ready-replacement.yaml", name=pod, worker=worker, initial_delay_s=doc.KB7_INITIAL_DELAY_S,
             period_s=doc.KB7_PERIOD_S, run_s=doc.KB7_RUN_S)
    start = sc.wait_for(f"{pod}: the first run's start stamp", lambda: first(stamps_from_logs(sc, pod), "start"), 2 * WAIT_SLACK_S)
    sc.mark(start.at, "first run: start (stamp)")
    # Ready once its probe passed, initialDelaySeconds after its start; the cut must come before its exit
    sc.wait(pod_ready(pod), doc.KB7_INITIAL_DELAY_S + doc.KB7_PERIOD_S + WAIT_SLACK_S)
    exit_at = start.at + doc.KB7_RUN_S
    heal_at = exit_at + doc.KB7_HEAL_AFTER_EXIT_S
    sc.require(time.time() < exit_at - KUBELET_HANDOFF_S, f"{pod} Ready before its first run's exit at +{doc.KB7_RUN_S} s")
    with node_partitioned_kubelet_restarted(sc, worker, "reject", window_s=heal_at - time.time()) as window:
        wait_until_time(sc, heal_at, "the first run's exit and its replacement's start on the cut-off worker")
        heal_began = time.time()
    restart_at = window.node_undo_at or heal_began  # through the agent the node's armed heal restarted the kubelet
    sc.mark(restart_at, "kubelet restart, then the cut healed")

    def replacement_probed() -> list | None:
        try:
            stamps = _app_log(sc, pod)
        except ApiException:
            return None
        return stamps if first(stamps, "start", run="2") and min(labelled(stamps, "probe:readiness"), default=None) else None

    # the replacement starts right after the first run's exit; its first probe initialDelaySeconds later
    current = sc.wait_for(f"{pod}: the replacement's first readiness probe in its log", replacement_probed,
                          max(0.0, exit_at + doc.KB7_INITIAL_DELAY_S - time.time()) + doc.KB7_PERIOD_S + 2 * WAIT_SLACK_S)
    replacement_start = first(current, "start", run="2")
    previous = _app_log(sc, pod, previous=True)
    probe = min(labelled(current, "probe:readiness"))
    for label, at in (("replacement: start (stamp)", replacement_start.at), ("replacement: first readiness probe", probe.at)):
        sc.mark(at, label)
    not_ready = sc.first_within(KUBELET_HANDOFF_S + STATUS_UPDATE_S + WAIT_SLACK_S, f"{pod} Ready not True after the probe",
                                lambda: ready_false_after(sc, pod, probe.at))
    if not_ready:
        sc.mark(not_ready, "Ready not True")
    sc.add_file("KB-7 stamps.txt", "first run:\n" + "\n".join(f"{s.at:.6f} {s.event}" for s in previous)
                + "\n\nreplacement:\n" + "\n".join(f"{s.at:.6f} {s.event}" for s in current))
    changes = sc.recorder.changes("Pod", pod)
    samples = container_samples(changes, pod)
    expect_all(sc.expect, [api_status_before(changes, "app", restart_at),
                           first_probe_after_start("first run", previous), first_probe_after_start("replacement", current),
                           *ready_before_first_probe("replacement", samples, "app", 1, probe.at)],
               cut_limit_s=round(limit_s, 1), restart_at=round(restart_at, 3))
    sc.expect("KB-7", "replacement_start_before_restart_s", round(restart_at - replacement_start.at, 3),
              details={"first_run_exit": [(s.event, s.at) for s in previous if s.event == "exit"], "restart_at": restart_at})
    sc.expect("KB-7", "restart_count", container_status(sc.pod(pod), "app").get("restartCount"))
# -- KB-8 -------------------------------------------------------------------------------------

# The load's pods are created a few at a time, each step once the one before runs: on cgroup v1, runc
# freezes a new container's cgroup to set its limits (opencontainers/cgroups v0.0.6 systemd/v1.go
# LegacyManager.Set, freezeBeforeSet) and gives up after 1000 tries on a cgroup still FREEZING
# (fs/freezer.go FreezerGroup.Set: "unable to freeze" — "can't reliably freeze a cgroup v1 while new
# processes keep appearing"); 30 at once on 2 cores left one pod in StartError (1.36.2, 2026-12-07).
KB8_START_STEP = 5
# Budget for one step's pods to run (a wait, not a verdict): one kubelet starts them, each a sandbox
# and a container, on a 2-core machine taken one after the other.
KB8_STEP_START_S = KB8_START_STEP * (KUBELET_HANDOFF_S + SANDBOX_START_S + CONTAINER_START_S) + WAIT_SLACK_S


def _load_node(sc: Scenario, pods: list[str]) -> str | None:
    """The node of ``pods`` once each one's container runs (read from the API: KB-8 records no
    pods), else None; fails when they run on more than one node (the podAffinity keeps them on one)."""
    objs = {p["metadata"]["name"]: p for p in sc.kube.pods(sc.namespace)}
    if not all((container_status(objs.get(p), "app").get("state") or {}).get("running") for p in pods):
        return None
    nodes = {(objs[p].get("spec") or {}).get("nodeName") for p in pods}
    (node,) = sc.require(nodes if len(nodes) == 1 else None, f"the {len(pods)} pods on one node (podAffinity): {sorted(nodes)}")
    return node


def _wait_running(sc: Scenario, pods: list[str], of: int) -> str:
    """Wait up to KB8_STEP_START_S for ``pods`` to run; return their node (see _load_node)."""
    return sc.wait_for(f"{len(pods)} of {of} pods running", lambda: _load_node(sc, pods), KB8_STEP_START_S,
                       interval_s=1.0, explain=lambda: _not_running(sc, pods))


def _not_running(sc: Scenario, pods: list[str]) -> str:
    objs = {p["metadata"]["name"]: p for p in sc.kube.pods(sc.namespace)}
    return "not running: " + "; ".join(f"{p}: phase {phase(objs.get(p))}, {container_status(objs.get(p), 'app').get('state')}"
                                       for p in pods if not (container_status(objs.get(p), "app").get("state") or {}).get("running"))


@pytest.mark.slow
@pytest.mark.heavy
@pytest.mark.serial  # the kubelet's heap is node-wide: no other scenario's pods on its node
@pytest.mark.record("Event")  # KB8_PODS pods change status every second: their recording is not needed, and large
@pytest.mark.case("KB-8")
def test_kubelet_keeps_nothing_per_pod_sync(scenario: Scenario):
    """KB-8: under KB8_PODS pods whose readiness changes every second (one pod sync each), the
    kubelet's live heap after a forced collection grows with its pod syncs on 1.36.0–1.36.2 — a
    context kept per sync (kubernetes#139823) — and not at all elsewhere (fixed in 1.36.3 by #140066,
    in 1.37.0 by #139850; 1.34 and 1.35 never had it). Sampled through the API server's node proxy
    every KB8_SAMPLE_EVERY_S s for KB8_WINDOW_S s after a KB8_WARMUP_S s warm-up; judged as the
    least-squares slope against the kubelet's own count of pod syncs (objects and goroutines per
    sync), with the fit's standard error and the sync rate the load reached. The pods are created
    KB8_START_STEP at a time, each step once the one before runs (cgroup v1's freezer, above)."""
    sc = scenario
    pods = [f"sync-load-{i}" for i in range(1, doc.KB8_PODS + 1)]
    for start in range(0, len(pods), KB8_START_STEP):
        for pod in pods[start:start + KB8_START_STEP]:
            sc.apply("kubelet-sync-load.yaml", name=pod, toggle_s=doc.KB8_TOGGLE_S, period_s=doc.KB8_PROBE_PERIOD_S)
        node = _wait_running(sc, pods[:start + KB8_START_STEP], len(pods))
    sc.mark(time.time(), "all pods running: warm-up")
    try:
        read_sample(sc.kube, node)  # readable at all (the warm-up is long): else nothing to measure here
    except GatesUnreadable as e:
        pytest.skip(f"environment: the kubelet of {node} cannot be read through the API server's node proxy: {e}")
    time.sleep(doc.KB8_WARMUP_S)
    samples: list[HeapSample] = []
    opened = time.time()
    sc.mark(opened, "KB-8 window opens")
    for i in range(int(doc.KB8_WINDOW_S // doc.KB8_SAMPLE_EVERY_S) + 1):
        time.sleep(max(0.0, opened + i * doc.KB8_SAMPLE_EVERY_S - time.time()))
        samples.append(read_sample(sc.kube, node))
    sc.mark(samples[-1].at, "KB-8 window closes")
    sc.add_file("KB-8 kubelet samples.txt", f"kubelet of {node}, {len(pods)} pods, a sample every {doc.KB8_SAMPLE_EVERY_S} s "
                f"after a {doc.KB8_WARMUP_S} s warm-up\n\n{table(samples)}")
    expect_all(sc.expect, kubelet_leak(samples), node=node, pods=len(pods))
