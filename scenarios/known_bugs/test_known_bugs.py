"""KB — known upstream bugs, tracked per version (CASES.md KB-1 … KB-3), on a real cluster.

Each test applies the bug's small input and measures what the cluster does; the registry
(:mod:`e2e.documented.known_bugs`) documents today's buggy behaviour with the upstream issue, the
correct value and the mechanism. A run where the bug shows passes, marked "known bug present";
a run where the correct behaviour shows ends "bug no longer present — fixed on this version?"
(``BUG FIXED?``, not a failure); anything else fails.
"""

from __future__ import annotations

import time
from functools import partial
from collections import Counter

import pytest

from e2e.documented import known_bugs as doc
from e2e.documented.kubelet import KUBELET_HANDOFF_S, MINIMUM_GRACE_PERIOD_S, STATUS_UPDATE_S
from e2e.documented.storage import EVICTION_MONITORING_PERIOD_S, WRITABLE_LAYER_LAG_S, crossing_to_event_high
from e2e.evidence.ephemeral import TERMINAL_PHASES, eviction
from e2e.evidence.oomkill import parse_dmesg, reports_for_container
from e2e.evidence.stamps import find, merge, stamps_from_changes
from e2e.evidence.stamp_logs import stamps_from_logs
from e2e.evidence.stamp_table import merged_table
from e2e.measure.known_bugs import prestop_outlives
from e2e.measure.values import expect_all
from e2e.record.pods import condition, container_status, phase
from e2e.run.scenario import Scenario
from e2e.base.waiting import WAIT_SLACK_S


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
