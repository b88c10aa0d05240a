"""SC — native sidecars (CASES.md SC-1 … SC-7), on a real cluster.

Every container (and exec probe) of these pods writes ``<epoch s.µs> <event> container=<name>``
stamps (:mod:`e2e.evidence.stamps`); orders and sub-second gaps are judged on those stamps, merged
with the recorder's API view (container states, ``started``, kubectl's READY/STATUS columns).
Each stamp is also drawn as a mark on the report's picture, and the merged table
(``timeline-with-stamps.txt``) is attached to the report and quoted in any failure.

Scenario parameters and bands live in :mod:`e2e.documented.sidecar`; native sidecars are GA
in 1.33, so every test is marked ``min_k8s(33)``.
"""

from __future__ import annotations

import time

import pytest

from e2e.record import pods
from e2e.documented import kubelet, sidecar as doc
from e2e.evidence.stamps import Stamp, find, gap_ms, merge, ms, since_ms, stamps_from_changes
from e2e.evidence.stamp_logs import stamps_from_logs, stamps_of
from e2e.evidence.stamp_order import expect_order
from e2e.evidence.stamp_table import merged_table
from e2e.measure.sidecar import start_gaps
from e2e.measure.values import expect_all
from e2e.record.podstatus import pod_columns, ready_status
from e2e.run.scenario import Scenario
from e2e.record.timeline import status_sequence
from e2e.base.waiting import WAIT_SLACK_S

pytestmark = pytest.mark.min_k8s(33)

# Stamps not drawn on the picture (periodic lines; the last tick is drawn on its own).
UNMARKED = {"tick", "startup-fail", "readiness-ok", "readiness-fail"}


def show(sc: Scenario, stamps: list[Stamp], extra: tuple[tuple[float, str], ...] = (), skip: frozenset[str] = frozenset()) -> None:
    """Mark the stamps (but periodic ones and ``skip`` events) on the picture, attach the merged
    table and make it the context of every failure judged from now on."""
    for s in stamps:
        if s.event not in UNMARKED and s.event not in skip:
            sc.mark(s.at, s.key)
    for t, label in extra:
        sc.mark(t, label)
    table = merged_table(sc.recorder.changes(), stamps, sc.t0, sc.marks, keep=lambda s: s.event != "tick")
    sc.add_file("timeline-with-stamps.txt", table)
    sc.explain_with(table)


def wait_started(sc: Scenario, pod: str, ready: str, keys: list[str], timeout_s: float = WAIT_SLACK_S) -> None:
    """Wait until ``pod`` shows READY ``ready``, STATUS Running and every ``keys`` stamp (so
    each container's trap is installed)."""
    sc.wait_for(f"{pod} READY {ready} Running", lambda: ready_status(sc.pod(pod)) == (ready, "Running"), timeout_s)
    sc.wait_for(f"{pod} stamps {', '.join(keys)}", lambda: all(find(stamps_from_logs(sc, pod), k) for k in keys), WAIT_SLACK_S)


def delete_and_read_stamps(sc: Scenario, pod: str, timeout_s: float) -> tuple[float, list[Stamp]]:
    """Delete ``pod``, wait until it is gone; the delete time and the stamps of its termination messages."""
    t_delete = sc.delete_pod(pod)
    sc.wait(pods.pod_gone(pod), timeout_s)
    return t_delete, stamps_from_changes(sc.recorder.changes("Pod"), pod)


# -- SC-1 / SC-2: start ------------------------------------------------------------------------


@pytest.mark.case("SC-1")
def test_start_order(scenario: Scenario):
    """SC-1: init → sidecar (started once its startupProbe succeeded, STARTUP_DELAY_S s after
    its start) → main; STATUS Init:0/2 → Init:1/2 → PodInitializing → Running; READY 2/2."""
    sc, pod = scenario, "start-order"
    sc.apply("start-order.yaml", name=pod, init_run_s=doc.INIT_RUN_S, startup_delay_s=doc.STARTUP_DELAY_S)
    wait_started(sc, pod, "2/2", ["app start"], doc.INIT_RUN_S + sc.judge.wait_budget_s("SC-1", "app_start_after_sidecar_start_ms") + WAIT_SLACK_S)
    stamps = stamps_of(sc, pod)
    show(sc, stamps)

    expect_order(sc.judge, "SC-1", "start_order", stamps, t_ref=sc.t0)
    expect_all(sc.expect, start_gaps(stamps))
    # API view: never a recorded status with app running while the sidecar is not started
    early = [round(ch.received_at - sc.t0, 3) for ch in sc.recorder.changes("Pod", pod)
             if pods.state(ch.obj, "app") == "running" and not pods.container_status(ch.obj, "sidecar").get("started")]
    sc.expect("SC-1", "main_running_only_after_sidecar_started", not early, details={"app_running_before_sidecar_started_at_s": early})
    sc.expect("SC-1", "status_sequence", " → ".join(status_sequence(sc.recorder.changes("Pod"), pod)))
    sc.expect("SC-1", "ready_column_running", ready_status(sc.pod(pod))[0])


@pytest.mark.case("SC-2")
def test_main_containers_start_together(scenario: Scenario):
    """SC-2: both main containers start in one go, after the init container and the sidecar."""
    sc, pod = scenario, "start-together"
    sc.apply("start-together.yaml", name=pod)
    wait_started(sc, pod, "3/3", ["app-1 start", "app-2 start"], sc.judge.wait_budget_s("SC-2", "main_start_after_sidecar_start_ms") + WAIT_SLACK_S)
    stamps = stamps_of(sc, pod)
    show(sc, stamps)

    for c in ("app-1", "app-2"):
        expect_order(sc.judge, "SC-2", f"start_order[{c}]", stamps, t_ref=sc.t0, container=c)
    first, second = sorted(find(stamps, f"{c} start") for c in ("app-1", "app-2"))
    sc.expect("SC-2", "main_start_spread_ms", ms(second.at - first.at), details={"first": first.container, "second": second.container})
    sc.expect("SC-2", "main_start_after_sidecar_start_ms", since_ms(first, find(stamps, "sidecar start")))


# -- SC-3: stop ----------------------------------------------------------------------------------


@pytest.mark.case("SC-3")
def test_stop_order(scenario: Scenario):
    """SC-3: on deletion app gets SIGTERM first; sidecar-2 only after app exited; sidecar-1 only
    after sidecar-2 exited (reverse declaration order). Each container drains DRAIN_S s."""
    sc, pod = scenario, "stop-order"
    sc.apply("stop-order.yaml", name=pod, drain_s=doc.DRAIN_S, grace_s=doc.SC3_GRACE_S)
    wait_started(sc, pod, "3/3", ["app start", "sidecar-1 start", "sidecar-2 start"])
    t_delete, stamps = delete_and_read_stamps(sc, pod, doc.SC3_GRACE_S + WAIT_SLACK_S)
    show(sc, stamps, skip=frozenset({"start"}))

    expect_order(sc.judge, "SC-3", "stop_order", stamps, t_ref=t_delete)
    for c in ("app", "sidecar-2", "sidecar-1"):
        sc.expect("SC-3", f"sigterm_after_delete_ms[{c}]", since_ms(find(stamps, f"{c} sigterm"), t_delete))
    sc.expect("SC-3", "sigterm_after_previous_exit_ms[sidecar-2]", gap_ms(stamps, "app exit", "sidecar-2 sigterm"))
    sc.expect("SC-3", "sigterm_after_previous_exit_ms[sidecar-1]", gap_ms(stamps, "sidecar-2 exit", "sidecar-1 sigterm"))


# -- SC-4: Job -------------------------------------------------------------------------------------


def job_finished(sc: Scenario, name: str) -> str | None:
    """``"Complete"`` or ``"Failed"`` once the Job has that condition True, else None."""
    job = sc.get("Job", name)
    return next((t for t in ("Complete", "Failed") if (pods.condition(job, t) or {}).get("status") == "True"), None)


def job_pod(sc: Scenario, job: str) -> str:
    """The name of the Job's pod (a precondition: the Job made one)."""
    return sc.require(next((ch.name for ch in sc.recorder.changes("Pod")
                            if ((ch.obj.get("metadata") or {}).get("labels") or {}).get("batch.kubernetes.io/job-name") == job), None),
                      f"the Job {job} created a pod")


@pytest.mark.case("SC-4")
def test_job_with_native_sidecar_completes(scenario: Scenario):
    """SC-4: the Job whose helper is a native sidecar completes once its main container exited 0
    (the helper exits 143 on SIGTERM); the same helper as a plain second container keeps the
    pod Running and the Job incomplete for CONTROL_WATCH_S s."""
    sc = scenario
    sc.apply("job-native-sidecar.yaml", name="native", run_s=doc.JOB_RUN_S)
    t_plain = time.time()
    sc.apply("job-plain-container.yaml", name="plain", run_s=doc.JOB_RUN_S)

    outcome = sc.first_within(sc.judge.wait_budget_s("SC-4", "job_duration_s[native-sidecar]") + WAIT_SLACK_S, "Job native finished",
                              lambda: job_finished(sc, "native"), interval_s=doc.JOB_POLL_S)
    done_at = time.time() if outcome else None
    sc.mark(done_at or time.time(), f"Job native {outcome or 'not finished'}")
    never = sc.never_within(max(t_plain + doc.CONTROL_WATCH_S - time.time(), 0), "Job plain finished",
                            lambda: job_finished(sc, "plain"), interval_s=doc.JOB_POLL_S)
    watched_s = round(time.time() - t_plain, 1)
    sc.mark(time.time(), f"Job plain not finished after {watched_s:g} s" if never else "Job plain finished")
    native_pod, plain_pod = job_pod(sc, "native"), job_pod(sc, "plain")
    show(sc, [s for s in merge(stamps_of(sc, native_pod), stamps_of(sc, plain_pod)) if s.container in ("main", "helper")])

    main_exit = find(stamps_from_changes(sc.recorder.changes("Pod"), native_pod), "main exit")
    job = sc.get("Job", "native").get("status") or {}
    sc.expect("SC-4", "job_complete[native-sidecar]", outcome == "Complete", details={"outcome": outcome})
    sc.expect("SC-4", "pod_phase[native-sidecar]", pods.phase(sc.pod(native_pod)))
    sc.expect("SC-4", "sidecar_exit_code[native-sidecar]", pods.last_terminated(sc.recorder.changes("Pod", native_pod), "helper").get("exitCode"))
    sc.expect("SC-4", "job_complete_after_main_exit_s[native-sidecar]", round(done_at - main_exit.at, 3) if done_at and main_exit else None)
    sc.expect("SC-4", "job_duration_s[native-sidecar]", round(done_at - sc.t0, 3) if done_at else None,
              details={"api_startTime": str(job.get("startTime")), "api_completionTime": str(job.get("completionTime"))})
    sc.expect("SC-4", "job_complete[plain-container]", not never, details={"watched_s": watched_s})
    sc.expect("SC-4", "pod_phase[plain-container]", pods.phase(sc.pod(plain_pod)),
              details={"watched_s": watched_s, "status_column": (ready_status(sc.pod(plain_pod)) or (None, None))[1]})


# -- SC-5: restarts under Never --------------------------------------------------------------------

SC5_RUNS = 3
SC5_RUN_S = 1


@pytest.mark.case("SC-5")
def test_sidecar_restarts_under_never(scenario: Scenario):
    """SC-5: under restartPolicy Never the sidecar (exit 1 after SC5_RUN_S s) restarts anyway
    (immediately, then after the 10 s back-off); restartCount grows; the main container runs on."""
    sc, pod = scenario, "sidecar-restarts"
    sc.apply("sidecar-restarts.yaml", name=pod, run_s=SC5_RUN_S)
    budget = sum(sc.judge.wait_budget_s("SC-5", f"restart_gap_s[{i}]") for i in range(SC5_RUNS - 1))
    sc.wait_for(f"{SC5_RUNS} runs of the sidecar", lambda: len([s for s in stamps_of(sc, pod) if s.key == "sidecar start"]) >= SC5_RUNS,
                budget + SC5_RUNS * (SC5_RUN_S + kubelet.CONTAINER_START_S) + WAIT_SLACK_S, interval_s=0.5)
    obj = sc.kube.pod(sc.namespace, pod)
    stamps = stamps_of(sc, pod)
    show(sc, stamps)

    starts, exits = [s for s in stamps if s.key == "sidecar start"], [s for s in stamps if s.key == "sidecar exit"]
    for i in range(SC5_RUNS - 1):
        sc.expect("SC-5", f"restart_gap_s[{i}]", round(starts[i + 1].at - exits[i].at, 3) if i < len(exits) else None)
    restarts = pods.container_status(obj, "sidecar")["restartCount"]
    sc.expect("SC-5", "restart_count", restarts)
    sc.expect("SC-5", "restart_count_vs_runs", restarts - (len(starts) - 1), details={"runs_stamped": len(starts)})
    sc.expect("SC-5", "pod_phase", pods.phase(obj))
    sc.expect("SC-5", "main_restart_count", pods.container_status(obj, "app")["restartCount"])


# -- SC-6: readiness ---------------------------------------------------------------------------------


@pytest.mark.case("SC-6")
def test_sidecar_readiness_counts(scenario: Scenario):
    """SC-6: while only the sidecar is unready the pod is not Ready (READY 1/2); it becomes Ready
    when the sidecar's readinessProbe passes and unready again when it fails."""
    sc, pod = scenario, "sidecar-readiness"
    sc.apply("sidecar-readiness.yaml", name=pod, ready_after_s=doc.READY_AFTER_S, ready_for_s=doc.READY_FOR_S)

    def ready(ch) -> str | None:
        return (pods.condition(ch.obj, "Ready") or {}).get("status")

    def pod_ready_flips() -> tuple | None:
        """(first change with Ready True, first later change with Ready False) once both seen."""
        changes = sc.recorder.changes("Pod", pod)
        on = next((c for c in changes if ready(c) == "True"), None)
        off = next((c for c in changes if on and c.received_at > on.received_at and ready(c) == "False"), None)
        return (on, off) if off else None

    lag = sc.judge.wait_budget_s("SC-6", "pod_unready_after_sidecar_unready_ms")
    on, off = sc.wait_for("pod Ready True, then False again", pod_ready_flips, doc.READY_AFTER_S + doc.READY_FOR_S + 2 * lag + WAIT_SLACK_S)
    stamps = stamps_of(sc, pod)
    show(sc, stamps, ((on.received_at, "pod Ready"), (off.received_at, "pod not Ready")))
    ready_on, ready_off = find(stamps, "sidecar ready-on"), find(stamps, "sidecar ready-off")

    # the last recorded state before the pod became Ready in which only the sidecar is unready
    only_sidecar = next((ch.obj for ch in reversed(sc.recorder.changes("Pod", pod)) if ch.received_at < on.received_at
                         and pods.container_status(ch.obj, "app").get("ready") and not pods.container_status(ch.obj, "sidecar").get("ready")), None)
    sc.expect("SC-6", "ready_condition_while_sidecar_unready", (pods.condition(only_sidecar, "Ready") or {}).get("status"))
    sc.expect("SC-6", "containers_ready_message_while_sidecar_unready", (pods.condition(only_sidecar, "ContainersReady") or {}).get("message"))
    sc.expect("SC-6", "ready_column_while_sidecar_unready", (ready_status(only_sidecar) or (None,))[0])
    sc.expect("SC-6", "ready_column_while_sidecar_ready", pod_columns(on.obj).ready)
    sc.expect("SC-6", "ready_column_after_sidecar_unready", pod_columns(off.obj).ready)
    sc.expect("SC-6", "main_ready_after_sidecar_unready", bool(pods.container_status(off.obj, "app").get("ready")))
    sc.expect("SC-6", "sidecar_restarts", pods.container_status(off.obj, "sidecar").get("restartCount"))
    # the probe runs that saw the change (their own stamps), for the record
    probe_ok = next((s for s in stamps if s.key == "sidecar readiness-ok" and ready_on and s.at >= ready_on.at), None)
    probe_fail = next((s for s in stamps if s.key == "sidecar readiness-fail" and ready_off and s.at >= ready_off.at), None)
    sc.expect("SC-6", "pod_ready_after_sidecar_ready_ms", ms(on.received_at - ready_on.at) if ready_on else None,
              details={"probe_ok_after_file_ms": since_ms(probe_ok, ready_on)})
    sc.expect("SC-6", "pod_unready_after_sidecar_unready_ms", ms(off.received_at - ready_off.at) if ready_off else None,
              details={"probe_fail_after_file_removed_ms": since_ms(probe_fail, ready_off)})


# -- SC-7: shared budget ----------------------------------------------------------------------------


@pytest.mark.case("SC-7")
def test_shared_grace_budget(scenario: Scenario):
    """SC-7: app ignores SIGTERM and spends the whole grace period (SC7_GRACE_S s); the sidecar
    gets its signal when the budget is gone and SIGKILL 2 s later (minimumGracePeriodInSeconds);
    both exit 137."""
    sc, pod = scenario, "shared-budget"
    sc.apply("shared-budget.yaml", name=pod, grace_s=doc.SC7_GRACE_S, tick_s=doc.TICK_S)
    wait_started(sc, pod, "2/2", ["app start", "sidecar start"])
    t_delete, stamps = delete_and_read_stamps(sc, pod, doc.SC7_GRACE_S + kubelet.MINIMUM_GRACE_PERIOD_S + WAIT_SLACK_S)
    app_term, side_term = find(stamps, "app sigterm"), find(stamps, "sidecar sigterm")
    app_tick, side_tick = find(stamps, "app tick", -1), find(stamps, "sidecar tick", -1)
    show(sc, stamps, tuple((s.at, f"{s.container} last tick") for s in (app_tick, side_tick) if s), skip=frozenset({"start"}))

    sc.expect("SC-7", "sigterm_after_delete_ms[app]", since_ms(app_term, t_delete))
    sc.expect("SC-7", "app_killed_after_sigterm_ms", since_ms(app_tick, app_term))
    sc.expect("SC-7", "sidecar_sigterm_after_app_sigterm_ms", since_ms(side_term, app_term))
    sc.expect("SC-7", "sidecar_killed_after_sigterm_ms", since_ms(side_tick, side_term))
    for c in ("app", "sidecar"):
        sc.expect("SC-7", f"{c}_exit_code", pods.last_terminated(sc.recorder.changes("Pod", pod), c).get("exitCode"))
