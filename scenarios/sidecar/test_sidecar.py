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

import allure
import pytest
from kubernetes.client.exceptions import ApiException

from e2e.documented import kubelet, sidecar as doc
from e2e.podstatus import pod_columns
from e2e.scenario import Scenario
from e2e.timeline import status_sequence
from e2e.evidence.stamps import Stamp, expect_order, find, gap_ms, merge, merged_table, ms, parse, stamps_from_changes
from e2e.waiting import WAIT_SLACK_S, WaitTimeout

pytestmark = pytest.mark.min_k8s(33)

# Stamps not drawn on the picture (periodic lines; the last tick is drawn on its own).
UNMARKED = {"tick", "startup-fail", "readiness-ok", "readiness-fail"}


# -- helpers -------------------------------------------------------------------------------------


def apply(sc: Scenario, filename: str, **values: object) -> float:
    """Apply a manifest with the stamp prelude filled in; returns the epoch s just before."""
    t = time.time()
    sc.apply(filename, **values)
    return t


def log_stamps(sc: Scenario, pod: str) -> list[Stamp]:
    """Stamps in the current (and, after a restart, previous) logs of every container of
    ``pod``; none when the pod is gone."""
    obj = sc.pod(pod)
    if obj is None:
        return []
    status = obj.get("status") or {}
    found: list[Stamp] = []
    for cs in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
        for previous in (False, True) if cs.get("restartCount") else (False,):
            try:
                found.extend(parse(sc.kube.logs(sc.namespace, pod, cs["name"], previous=previous)))
            except ApiException:
                pass  # not started yet, or already gone: its termination message has the stamps
    return merge(found)


def all_stamps(sc: Scenario, pod: str) -> list[Stamp]:
    """Logs (live containers) + termination messages the recorder saw (ended containers)."""
    return merge(stamps_from_changes(sc.recorder.changes("Pod"), pod), log_stamps(sc, pod))


def show(sc: Scenario, stamps: list[Stamp], extra: tuple[tuple[float, str], ...] = (), skip: frozenset[str] = frozenset()) -> str:
    """Mark the stamps (but periodic ones and ``skip`` events) on the picture, attach the merged
    table, return it (a failure's context)."""
    for s in stamps:
        if s.event not in UNMARKED and s.event not in skip:
            sc.mark(s.at, s.key)
    for t, label in extra:
        sc.mark(t, label)
    table = merged_table(sc.recorder.changes(), stamps, sc.t0, sc.marks, keep=lambda s: s.event != "tick")
    allure.attach(table, name="timeline-with-stamps.txt", attachment_type=allure.attachment_type.TEXT)
    return table


def columns(sc: Scenario, pod: str) -> tuple[str, str] | None:
    obj = sc.pod(pod)
    if obj is None:
        return None
    cols = pod_columns(obj)
    return cols.ready, cols.status


def statuses(obj: dict) -> dict[str, dict]:
    """Container name → its status (init and main containers) in a pod object."""
    status = obj.get("status") or {}
    return {cs["name"]: cs for cs in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or [])}


def condition(obj: dict, kind: str) -> dict:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") == kind), {})


def last_terminated(sc: Scenario, pod: str, container: str) -> dict:
    """The newest ``state.terminated`` the recorder saw for ``container`` (also in the DELETED
    object), or {}."""
    for ch in reversed(sc.recorder.changes("Pod", pod)):
        term = ((statuses(ch.obj).get(container) or {}).get("state") or {}).get("terminated")
        if term:
            return term
    return {}


def deleted(sc: Scenario, pod: str) -> bool:
    return any(ch.type == "DELETED" for ch in sc.recorder.changes("Pod", pod))


def delete_pod(sc: Scenario, pod: str) -> float:
    """Delete ``pod`` with its own grace period; returns (and marks) the epoch s just before
    the request (the test process's clock = the containers' kernel clock on kind)."""
    t = time.time()
    sc.kube.core.delete_namespaced_pod(pod, sc.namespace)
    sc.mark(t, "delete")
    return t


def wait_started(sc: Scenario, pod: str, ready: str, keys: list[str]) -> None:
    """Wait until ``pod`` shows READY ``ready``, STATUS Running and every ``keys`` stamp (so
    each container's trap is installed)."""
    sc.wait_for(f"{pod} READY {ready} Running", lambda: columns(sc, pod) == (ready, "Running"), WAIT_SLACK_S)
    sc.wait_for(f"{pod} start stamps", lambda: all(find(log_stamps(sc, pod), k) for k in keys), WAIT_SLACK_S)


def since_ms(stamp: Stamp | None, t: float) -> float | None:
    return None if stamp is None else ms(stamp.at - t)


def high_s(sc: Scenario, case: str, name: str) -> float:
    """The upper end of a registry band, in seconds (a wait's budget; see Judge.wait_budget_s)."""
    return sc.judge.wait_budget_s(case, name)


# -- SC-1 / SC-2: start ------------------------------------------------------------------------


@pytest.mark.case("SC-1")
def test_start_order(scenario: Scenario):
    """SC-1: init → sidecar (started once its startupProbe succeeded, STARTUP_DELAY_S s after
    its start) → main; STATUS Init:0/2 → Init:1/2 → PodInitializing → Running; READY 2/2."""
    sc = scenario
    pod = "start-order"
    apply(sc, "start-order.yaml", name=pod, init_run_s=doc.INIT_RUN_S, startup_delay_s=doc.STARTUP_DELAY_S)
    timeout = doc.INIT_RUN_S + high_s(sc, "SC-1", "app_start_after_sidecar_start_ms") + WAIT_SLACK_S
    sc.wait_for(f"{pod} READY 2/2 Running", lambda: columns(sc, pod) == ("2/2", "Running"), timeout)
    sc.wait_for("the app start stamp", lambda: find(log_stamps(sc, pod), "app start"), WAIT_SLACK_S)
    stamps = all_stamps(sc, pod)
    ctx = show(sc, stamps)

    expect_order(sc.judge, "SC-1", "start_order", stamps, context=ctx, t_ref=sc.t0)
    sc.expect("SC-1", "sidecar_start_after_init_exit_ms", gap_ms(stamps, "init exit", "sidecar start"), context=ctx)
    sc.expect("SC-1", "app_start_after_startup_ok_ms", gap_ms(stamps, "sidecar startup-ok", "app start"), context=ctx)
    sc.expect("SC-1", "app_start_after_sidecar_start_ms", gap_ms(stamps, "sidecar start", "app start"), context=ctx,
                    details={"startup_ok_after_file_ms": gap_ms(stamps, "sidecar started-file", "sidecar startup-ok")})

    # API view: never a recorded status with app running while the sidecar is not started
    early = []
    for ch in sc.recorder.changes("Pod", pod):
        st = statuses(ch.obj)
        if "running" in ((st.get("app") or {}).get("state") or {}) and not (st.get("sidecar") or {}).get("started"):
            early.append(round(ch.received_at - sc.t0, 3))
    sc.expect("SC-1", "main_running_only_after_sidecar_started", not early, context=ctx,
                    details={"app_running_before_sidecar_started_at_s": early})
    sc.expect("SC-1", "status_sequence", " → ".join(status_sequence(sc.recorder.changes("Pod"), pod)))
    sc.expect("SC-1", "ready_column_running", columns(sc, pod)[0])


@pytest.mark.case("SC-2")
def test_main_containers_start_together(scenario: Scenario):
    """SC-2: both main containers start in one go, after the init container and the sidecar."""
    sc = scenario
    pod = "start-together"
    apply(sc, "start-together.yaml", name=pod)
    timeout = high_s(sc, "SC-2", "main_start_after_sidecar_start_ms") + WAIT_SLACK_S
    sc.wait_for(f"{pod} READY 3/3 Running", lambda: columns(sc, pod) == ("3/3", "Running"), timeout)
    sc.wait_for("both app start stamps",
                lambda: find(log_stamps(sc, pod), "app-1 start") and find(log_stamps(sc, pod), "app-2 start"), WAIT_SLACK_S)
    stamps = all_stamps(sc, pod)
    ctx = show(sc, stamps)

    mains = [find(stamps, f"{c} start") for c in ("app-1", "app-2")]
    for c in ("app-1", "app-2"):
        expect_order(sc.judge, "SC-2", f"start_order[{c}]", stamps, context=ctx, t_ref=sc.t0, container=c)
    spread = ms(max(s.at for s in mains) - min(s.at for s in mains))
    sc.expect("SC-2", "main_start_spread_ms", spread, context=ctx,
                    details={"first": min(mains).container, "second": max(mains).container})
    sidecar = find(stamps, "sidecar start")
    sc.expect("SC-2", "main_start_after_sidecar_start_ms", since_ms(min(mains), sidecar.at) if sidecar else None, context=ctx)


# -- SC-3: stop ----------------------------------------------------------------------------------


@pytest.mark.case("SC-3")
def test_stop_order(scenario: Scenario):
    """SC-3: on deletion app gets SIGTERM first; sidecar-2 only after app exited; sidecar-1 only
    after sidecar-2 exited (reverse declaration order). Each container drains DRAIN_S s."""
    sc = scenario
    pod = "stop-order"
    apply(sc, "stop-order.yaml", name=pod, drain_s=doc.DRAIN_S, grace_s=doc.SC3_GRACE_S)
    wait_started(sc, pod, "3/3", ["app start", "sidecar-1 start", "sidecar-2 start"])

    t_delete = delete_pod(sc, pod)
    sc.wait_for(f"{pod} deleted", lambda: deleted(sc, pod), doc.SC3_GRACE_S + WAIT_SLACK_S)
    stamps = stamps_from_changes(sc.recorder.changes("Pod"), pod)
    ctx = show(sc, stamps, skip=frozenset({"start"}))

    expect_order(sc.judge, "SC-3", "stop_order", stamps, context=ctx, t_ref=t_delete)
    for c in ("app", "sidecar-2", "sidecar-1"):
        sc.expect("SC-3", f"sigterm_after_delete_ms[{c}]", since_ms(find(stamps, f"{c} sigterm"), t_delete), context=ctx)
    sc.expect("SC-3", "sigterm_after_previous_exit_ms[sidecar-2]", gap_ms(stamps, "app exit", "sidecar-2 sigterm"), context=ctx)
    sc.expect("SC-3", "sigterm_after_previous_exit_ms[sidecar-1]", gap_ms(stamps, "sidecar-2 exit", "sidecar-1 sigterm"), context=ctx)


# -- SC-4: Job -------------------------------------------------------------------------------------


def job_finished(sc: Scenario, name: str) -> str | None:
    """``"Complete"`` or ``"Failed"`` once the Job has that condition True, else None."""
    job = sc.kube.batch.read_namespaced_job_status(name, sc.namespace)
    for cond in job.status.conditions or []:
        if cond.type in ("Complete", "Failed") and cond.status == "True":
            return cond.type
    return None


def job_pod(sc: Scenario, job: str) -> str | None:
    for ch in sc.recorder.changes("Pod"):
        labels = (ch.obj.get("metadata") or {}).get("labels") or {}
        if labels.get("batch.kubernetes.io/job-name", labels.get("job-name")) == job:
            return ch.name
    return None


@pytest.mark.case("SC-4")
def test_job_with_native_sidecar_completes(scenario: Scenario):
    """SC-4: the Job whose helper is a native sidecar completes once its main container exited 0
    (the helper exits 143 on SIGTERM); the same helper as a plain second container keeps the
    pod Running and the Job incomplete for CONTROL_WATCH_S s."""
    sc = scenario
    t_native = apply(sc, "job-native-sidecar.yaml", name="native", run_s=doc.JOB_RUN_S)
    t_plain = apply(sc, "job-plain-container.yaml", name="plain", run_s=doc.JOB_RUN_S)

    timeout = high_s(sc, "SC-4", "job_duration_s[native-sidecar]") + WAIT_SLACK_S
    try:
        outcome = sc.wait_for("Job native finished", lambda: job_finished(sc, "native"), timeout, interval_s=doc.JOB_POLL_S)
        done_at = time.time()
    except WaitTimeout:
        outcome, done_at = None, None
    if done_at:
        sc.mark(done_at, f"Job native {outcome}")
    remaining = t_plain + doc.CONTROL_WATCH_S - time.time()
    never = sc.never_within(max(remaining, 0), "Job plain finished", lambda: job_finished(sc, "plain"), interval_s=doc.JOB_POLL_S)
    watched_s = round(time.time() - t_plain, 1)
    sc.mark(time.time(), f"Job plain not finished after {watched_s:g} s" if never else "Job plain finished")

    native_pod, plain_pod = job_pod(sc, "native"), job_pod(sc, "plain")
    stamps = merge(all_stamps(sc, native_pod) if native_pod else [], all_stamps(sc, plain_pod) if plain_pod else [])
    ctx = show(sc, [s for s in stamps if s.container in ("main", "helper")])

    native = sc.pod(native_pod) if native_pod else None
    sc.expect("SC-4", "job_complete[native-sidecar]", outcome == "Complete", context=ctx, details={"outcome": outcome})
    sc.expect("SC-4", "pod_phase[native-sidecar]", ((native or {}).get("status") or {}).get("phase"), context=ctx)
    sc.expect("SC-4", "sidecar_exit_code[native-sidecar]", last_terminated(sc, native_pod, "helper").get("exitCode") if native_pod else None,
                    context=ctx)
    main_exit = next((s for s in stamps_from_changes(sc.recorder.changes("Pod"), native_pod) if s.key == "main exit"), None) if native_pod else None
    sc.expect("SC-4", "job_complete_after_main_exit_s[native-sidecar]",
                    round(done_at - main_exit.at, 3) if done_at and main_exit else None, context=ctx)
    job = sc.kube.batch.read_namespaced_job_status("native", sc.namespace).status
    sc.expect("SC-4", "job_duration_s[native-sidecar]", round(done_at - t_native, 3) if done_at else None, context=ctx,
                    details={"api_startTime": str(job.start_time), "api_completionTime": str(job.completion_time)})

    plain = sc.pod(plain_pod) if plain_pod else None
    sc.expect("SC-4", "job_complete[plain-container]", not never, context=ctx, details={"watched_s": watched_s})
    sc.expect("SC-4", "pod_phase[plain-container]", ((plain or {}).get("status") or {}).get("phase"), context=ctx,
                    details={"watched_s": watched_s, "status_column": pod_columns(plain).status if plain else None})


# -- SC-5: restarts under Never --------------------------------------------------------------------

SC5_RUNS = 3
SC5_RUN_S = 1


@pytest.mark.case("SC-5")
def test_sidecar_restarts_under_never(scenario: Scenario):
    """SC-5: under restartPolicy Never the sidecar (exit 1 after SC5_RUN_S s) restarts anyway
    (immediately, then after the 10 s back-off); restartCount grows; the main container runs on."""
    sc = scenario
    pod = "sidecar-restarts"
    apply(sc, "sidecar-restarts.yaml", name=pod, run_s=SC5_RUN_S)
    budget = sum(high_s(sc, "SC-5", f"restart_gap_s[{i}]") for i in range(SC5_RUNS - 1))
    timeout = budget + SC5_RUNS * (SC5_RUN_S + doc.CONTAINER_START_S) + WAIT_SLACK_S

    def runs() -> list[Stamp]:
        return [s for s in all_stamps(sc, pod) if s.key == "sidecar start"]

    sc.wait_for(f"{SC5_RUNS} runs of the sidecar", lambda: len(runs()) >= SC5_RUNS, timeout, interval_s=0.5)
    obj = sc.kube.pod(sc.namespace, pod)
    stamps = all_stamps(sc, pod)
    ctx = show(sc, stamps)

    starts = [s for s in stamps if s.key == "sidecar start"]
    exits = [s for s in stamps if s.key == "sidecar exit"]
    for i in range(SC5_RUNS - 1):
        nxt = starts[i + 1] if i + 1 < len(starts) else None
        sc.expect("SC-5", f"restart_gap_s[{i}]", round(nxt.at - exits[i].at, 3) if nxt and i < len(exits) else None, context=ctx)
    st = statuses(obj)
    sidecar_restarts = st["sidecar"]["restartCount"]
    sc.expect("SC-5", "restart_count", sidecar_restarts, context=ctx)
    sc.expect("SC-5", "restart_count_vs_runs", sidecar_restarts - (len(starts) - 1), context=ctx,
                    details={"runs_stamped": len(starts)})
    sc.expect("SC-5", "pod_phase", obj["status"]["phase"], context=ctx)
    sc.expect("SC-5", "main_restart_count", st["app"]["restartCount"], context=ctx)


# -- SC-6: readiness ---------------------------------------------------------------------------------


@pytest.mark.case("SC-6")
def test_sidecar_readiness_counts(scenario: Scenario):
    """SC-6: while only the sidecar is unready the pod is not Ready (READY 1/2); it becomes Ready
    when the sidecar's readinessProbe passes and unready again when it fails."""
    sc = scenario
    pod = "sidecar-readiness"
    apply(sc, "sidecar-readiness.yaml", name=pod, ready_after_s=doc.READY_AFTER_S, ready_for_s=doc.READY_FOR_S)
    lag = high_s(sc, "SC-6", "pod_unready_after_sidecar_unready_ms")

    def pod_ready_flips() -> tuple | None:
        """(first change with Ready True, first later change with Ready False) once both seen."""
        changes = sc.recorder.changes("Pod", pod)
        on = next((c for c in changes if condition(c.obj, "Ready").get("status") == "True"), None)
        if on is None:
            return None
        off = next((c for c in changes if c.received_at > on.received_at and condition(c.obj, "Ready").get("status") == "False"), None)
        return (on, off) if off else None

    flips = sc.wait_for("pod Ready True, then False again", pod_ready_flips,
                        doc.READY_AFTER_S + doc.READY_FOR_S + 2 * lag + WAIT_SLACK_S)
    on, off = flips
    stamps = all_stamps(sc, pod)
    ctx = show(sc, stamps, ((on.received_at, "pod Ready"), (off.received_at, "pod not Ready")))
    ready_on, ready_off = find(stamps, "sidecar ready-on"), find(stamps, "sidecar ready-off")

    # the last recorded state before the pod became Ready in which only the sidecar is unready
    only_sidecar = None
    for ch in sc.recorder.changes("Pod", pod):
        if ch.received_at >= on.received_at:
            break
        st = statuses(ch.obj)
        if (st.get("app") or {}).get("ready") and not (st.get("sidecar") or {}).get("ready"):
            only_sidecar = ch.obj
    sc.expect("SC-6", "ready_condition_while_sidecar_unready",
                    condition(only_sidecar, "Ready").get("status") if only_sidecar else None, context=ctx)
    sc.expect("SC-6", "containers_ready_message_while_sidecar_unready",
                    condition(only_sidecar, "ContainersReady").get("message") if only_sidecar else None, context=ctx)
    sc.expect("SC-6", "ready_column_while_sidecar_unready", pod_columns(only_sidecar).ready if only_sidecar else None, context=ctx)
    sc.expect("SC-6", "ready_column_while_sidecar_ready", pod_columns(on.obj).ready, context=ctx)
    sc.expect("SC-6", "ready_column_after_sidecar_unready", pod_columns(off.obj).ready, context=ctx)
    sc.expect("SC-6", "main_ready_after_sidecar_unready", bool(statuses(off.obj).get("app", {}).get("ready")), context=ctx)
    sc.expect("SC-6", "sidecar_restarts", statuses(off.obj).get("sidecar", {}).get("restartCount"), context=ctx)
    # the probe runs that saw the change (their own stamps), for the record
    probe_ok = next((s for s in stamps if s.key == "sidecar readiness-ok" and ready_on and s.at >= ready_on.at), None)
    probe_fail = next((s for s in stamps if s.key == "sidecar readiness-fail" and ready_off and s.at >= ready_off.at), None)
    sc.expect("SC-6", "pod_ready_after_sidecar_ready_ms", ms(on.received_at - ready_on.at) if ready_on else None, context=ctx,
                    details={"probe_ok_after_file_ms": since_ms(probe_ok, ready_on.at) if ready_on else None})
    sc.expect("SC-6", "pod_unready_after_sidecar_unready_ms", ms(off.received_at - ready_off.at) if ready_off else None, context=ctx,
                    details={"probe_fail_after_file_removed_ms": since_ms(probe_fail, ready_off.at) if ready_off else None})


# -- SC-7: shared budget ----------------------------------------------------------------------------


@pytest.mark.case("SC-7")
def test_shared_grace_budget(scenario: Scenario):
    """SC-7: app ignores SIGTERM and spends the whole grace period (SC7_GRACE_S s); the sidecar
    gets its signal when the budget is gone and SIGKILL 2 s later (minimumGracePeriodInSeconds);
    both exit 137."""
    sc = scenario
    pod = "shared-budget"
    apply(sc, "shared-budget.yaml", name=pod, grace_s=doc.SC7_GRACE_S, tick_s=doc.TICK_S)
    wait_started(sc, pod, "2/2", ["app start", "sidecar start"])

    t_delete = delete_pod(sc, pod)
    sc.wait_for(f"{pod} deleted", lambda: deleted(sc, pod), doc.SC7_GRACE_S + kubelet.MINIMUM_GRACE_PERIOD_S + WAIT_SLACK_S)
    stamps = stamps_from_changes(sc.recorder.changes("Pod"), pod)
    app_term, side_term = find(stamps, "app sigterm"), find(stamps, "sidecar sigterm")
    app_tick, side_tick = find(stamps, "app tick", -1), find(stamps, "sidecar tick", -1)
    ctx = show(sc, stamps, tuple((s.at, f"{s.container} last tick") for s in (app_tick, side_tick) if s), skip=frozenset({"start"}))

    sc.expect("SC-7", "sigterm_after_delete_ms[app]", since_ms(app_term, t_delete), context=ctx)
    sc.expect("SC-7", "app_killed_after_sigterm_ms", since_ms(app_tick, app_term.at) if app_term else None, context=ctx)
    sc.expect("SC-7", "sidecar_sigterm_after_app_sigterm_ms", since_ms(side_term, app_term.at) if app_term else None, context=ctx)
    sc.expect("SC-7", "sidecar_killed_after_sigterm_ms", since_ms(side_tick, side_term.at) if side_term else None, context=ctx)
    sc.expect("SC-7", "app_exit_code", last_terminated(sc, pod, "app").get("exitCode"), context=ctx)
    sc.expect("SC-7", "sidecar_exit_code", last_terminated(sc, pod, "sidecar").get("exitCode"), context=ctx)
