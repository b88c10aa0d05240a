"""CL — crash loop back-off (CASES.md CL-1 … CL-8), on a real cluster.

Every pod runs busybox from the preloaded image; a run of the ``app`` container lasts about
``run_s`` seconds and exits with ``exit_code`` (manifests next to this file).
"""

from __future__ import annotations

import pytest
from kubernetes.client.exceptions import ApiException

from e2e.record import pods
from e2e.documented import crashloop as cl
from e2e.documented.crashloop import BACKOFF_TEXT, DOCUMENTED_GAPS_S
from e2e.evidence.ephemeral import kubelet_config
from e2e.measure.crashloop import restart_gap_values
from e2e.measure.values import expect_all
from e2e.cluster.kube import api_status
from e2e.record.podstatus import pod_columns
from e2e.run.scenario import Scenario
from e2e.record.timeline import container_history, container_samples, restart_gaps, status_sequence
from e2e.base.waiting import WAIT_SLACK_S

# Seconds one run of the crashing container lasts (its `sleep`), plus a start budget.
RUN_S = 1
RUN_BUDGET_S = RUN_S + 2

def crash_pod(sc: Scenario, name: str, restart_policy: str, exit_code: int, run_s: int = RUN_S) -> None:
    sc.apply("pod.yaml", name=name, restart_policy=restart_policy, exit_code=exit_code, run_s=run_s)


def wait_for_runs(sc: Scenario, case: str, pod: str, runs: int) -> list:
    """Wait until ``runs`` runs of ``app`` started; the timeout is the sum of the upper ends of
    the documented gap bands before them, plus run time and slack."""
    budget = sum(sc.judge.wait_budget_s(case, f"restart_gap[{i}]") for i in range(runs - 1))
    timeout = budget + runs * RUN_BUDGET_S + WAIT_SLACK_S
    return sc.wait_for(f"{runs} runs of {pod}/app", lambda: len(sc.attempts(pod, "app")) >= runs or None, timeout)


def judge_gaps(sc: Scenario, case: str, pod: str, count: int) -> None:
    gaps = restart_gap_values(case, sc.recorder.changes("Pod"), pod, "app", count)
    sc.require(len(gaps) >= count, f"{case}: {count} restart gaps seen (only {len(gaps)})")
    expect_all(sc.expect, gaps)


def judge_waiting(sc: Scenario, case: str, pod: str, exit_code: int) -> None:
    """CL-2 facts of every back-off wait the recorder saw."""
    obj = sc.pod(pod)
    uid, ns = obj["metadata"]["uid"], obj["metadata"]["namespace"]
    waits = [s for s in container_samples(sc.recorder.changes("Pod"), pod)
             if s.container == "app" and s.state == "waiting" and s.reason == "CrashLoopBackOff"]
    sc.require(waits, f"{case}: the container seen waiting in CrashLoopBackOff")
    seen_counts = set()
    for s in waits:
        if s.restart_count in seen_counts:
            continue
        seen_counts.add(s.restart_count)
        delay = min(10 * 2 ** (s.restart_count - 1), 300)
        sc.expect(case, f"waiting_message[restartCount={s.restart_count}]", s.message, around=s.received_at,
                  delay=BACKOFF_TEXT[delay], container="app", pod=pod, namespace=ns, uid=uid)
    history = container_history(sc.recorder.changes("Pod"), pod, "app")
    for i, s in enumerate(history[:-1]):
        if s.reason == "CrashLoopBackOff" and (i == 0 or history[i - 1].reason != "CrashLoopBackOff"):
            sc.expect(case, f"crashloopbackoff_visible_s[restartCount={s.restart_count}]",
                      round(history[i + 1].received_at - s.received_at, 3), around=s.received_at)
    change = next(ch for ch in sc.recorder.changes("Pod", pod)
                  if (pods.container_status(ch.obj, "app").get("state") or {}).get("waiting", {}).get("reason") == "CrashLoopBackOff")
    last = pods.last_termination(change.obj, "app")
    sc.expect(case, "phase_while_waiting", pods.phase(change.obj), around=change.received_at)
    sc.expect(case, "last_terminated_reason", last.get("reason"), around=change.received_at)
    sc.expect(case, "last_exit_code", last.get("exitCode"), around=change.received_at)


@pytest.mark.case("CL-1", "CL-2")
def test_backoff_gaps_and_waiting_state(scenario: Scenario):
    """CL-1 gaps 0, 10, 20, 40 s; CL-2 waiting reason, message, phase and lastState on the way."""
    sc = scenario
    crash_pod(sc, "crashloop", "Always", exit_code=1)
    wait_for_runs(sc, "CL-1", "crashloop", runs=5)
    judge_gaps(sc, "CL-1", "crashloop", count=4)
    judge_waiting(sc, "CL-2", "crashloop", exit_code=1)
    runs = sc.attempts("crashloop", "app")
    # restartCount counts restarts: the newest run seen is run number restartCount + 1
    sc.expect("CL-2", "restart_count_vs_runs", pods.container_status(sc.pod("crashloop"), "app")["restartCount"] - (len(runs) - 1))


@pytest.mark.slow
@pytest.mark.case("CL-1")
def test_backoff_tail_to_cap(scenario: Scenario):
    """CL-1 gaps 80, 160 s and the 300 s cap (about 11 minutes)."""
    sc = scenario
    crash_pod(sc, "crashloop-tail", "Always", exit_code=1)
    wait_for_runs(sc, "CL-1", "crashloop-tail", runs=len(DOCUMENTED_GAPS_S) + 1)
    judge_gaps(sc, "CL-1", "crashloop-tail", count=len(DOCUMENTED_GAPS_S))


@pytest.mark.case("CL-3")
def test_exit_zero_loops_too(scenario: Scenario):
    """CL-3: under Always a container exiting 0 is restarted with the same back-off."""
    sc = scenario
    crash_pod(sc, "exit-zero", "Always", exit_code=0)
    wait_for_runs(sc, "CL-3", "exit-zero", runs=3)
    judge_gaps(sc, "CL-3", "exit-zero", count=2)
    sc.expect("CL-3", "waiting_reason", _backoff_reason(sc, "exit-zero"))
    runs = sc.attempts("exit-zero", "app")
    sc.expect("CL-3", "last_terminated_reason", runs[0].reason)
    sc.expect("CL-3", "last_exit_code", runs[0].exit_code)


def _backoff_reason(sc: Scenario, pod: str) -> str | None:
    """The reason of the first waiting state recorded after a restart (the back-off's), or
    None. Read from the recording: from 1.35 it shows only briefly (CL-2 crashloopbackoff_visible_s)."""
    for s in container_samples(sc.recorder.changes("Pod"), pod):
        if s.container == "app" and s.state == "waiting" and s.restart_count >= 1:
            return s.reason
    return None


def _max_restarts(sc: Scenario, pod: str) -> int:
    return max((s.restart_count for s in container_samples(sc.recorder.changes("Pod"), pod)), default=0)


# How long a pod that must not restart is watched after it ended (s): longer than the upper
# end of the first restart gap band (CL-1 restart_gap[0]), so an immediate restart would be seen.
NO_RESTART_WATCH_S = 6


@pytest.mark.case("CL-4")
@pytest.mark.parametrize(
    "policy, exit_code",
    [("OnFailure", 0), ("OnFailure", 1), ("Never", 1)],
    ids=["OnFailure-exit0", "OnFailure-exit1", "Never-exit1"],
)
def test_restart_policies(scenario: Scenario, policy: str, exit_code: int):
    """CL-4: OnFailure + exit 0 → Succeeded, no restart; OnFailure + exit 1 → back-off;
    Never + exit 1 → Failed, no restart."""
    sc = scenario
    key = f"[{policy},exit{exit_code}]"
    crash_pod(sc, "policy", policy, exit_code=exit_code)
    if policy == "OnFailure" and exit_code == 1:
        sc.wait_for("policy waiting after a restart", lambda: _backoff_reason(sc, "policy"),
                    sc.judge.wait_budget_s("CL-1", "restart_gap[1]") + 2 * RUN_BUDGET_S + WAIT_SLACK_S)
        sc.expect("CL-4", f"waiting_reason{key}", _backoff_reason(sc, "policy"))
        sc.expect("CL-4", f"restart_count{key}", _max_restarts(sc, "policy"))
        return
    phase = "Succeeded" if exit_code == 0 else "Failed"
    sc.wait_for(f"policy phase {phase} or a restart",
                lambda: pods.phase(sc.pod("policy")) in ("Succeeded", "Failed") or _max_restarts(sc, "policy") > 0,
                RUN_BUDGET_S + WAIT_SLACK_S)
    # a restart would come within restart_gap[0]'s band: watch a window longer than that (ends early at a restart)
    sc.first_within(NO_RESTART_WATCH_S, "a restart", lambda: _max_restarts(sc, "policy") > 0)
    sc.expect("CL-4", f"phase{key}", pods.phase(sc.pod("policy")))
    sc.expect("CL-4", f"restart_count{key}", _max_restarts(sc, "policy"))


@pytest.mark.case("CL-5")
def test_previous_logs(scenario: Scenario):
    """CL-5: previous=true answers 400 before the first restart and the previous run's log after."""
    sc = scenario
    # a longer first run gives a window to ask before the first restart
    crash_pod(sc, "logs", "Always", exit_code=1, run_s=5)
    sc.wait(pods.container_running("logs"), WAIT_SLACK_S)
    try:
        status, message = 200, sc.kube.logs(sc.namespace, "logs", "app", previous=True)
    except ApiException as e:
        status, message = e.status, api_status(e).get("message", e.body)
    sc.require(_max_restarts(sc, "logs") == 0, "the container had not restarted when the previous log was asked for")
    sc.expect("CL-5", "previous_log_status_before_restart", status)
    sc.expect("CL-5", "previous_log_message_before_restart", message, container="app", pod="logs")

    sc.wait_for("logs/app restarted", lambda: _max_restarts(sc, "logs") >= 1, 5 + RUN_BUDGET_S + WAIT_SLACK_S)

    def previous_log() -> tuple[str, int] | None:
        """The previous run's log and restartCount, when no restart came while reading it."""
        before = pods.container_status(sc.kube.pod(sc.namespace, "logs"), "app")["restartCount"]
        text = sc.kube.logs(sc.namespace, "logs", "app", previous=True).strip()
        after = pods.container_status(sc.kube.pod(sc.namespace, "logs"), "app")["restartCount"]
        return (text, after) if before == after else None

    text, after = sc.wait_for("a previous log read between two restarts", previous_log, WAIT_SLACK_S)
    # run n prints "attempt n"; after restartCount restarts the previous run is run restartCount
    sc.expect("CL-5", "previous_log_after_restart", text, attempt=after)


def _main_started(sc: Scenario, pod: str) -> bool:
    return any(s.container == "app" and (s.state != "waiting" or s.started)
               for s in container_samples(sc.recorder.changes("Pod"), pod))


@pytest.mark.case("CL-8")
def test_failing_init_container_always(scenario: Scenario):
    """CL-8: STATUS Init:Error then Init:CrashLoopBackOff; the main container never starts."""
    sc = scenario
    sc.apply("init-fails.yaml", name="init", restart_policy="Always")
    budget = sc.judge.wait_budget_s("CL-1", "restart_gap[1]") + 3 * RUN_BUDGET_S + WAIT_SLACK_S
    sc.wait_for("STATUS Init:CrashLoopBackOff", lambda: "Init:CrashLoopBackOff" in status_sequence(sc.recorder.changes("Pod"), "init"), budget)
    sc.expect("CL-8", "status_sequence[Always]", " → ".join(status_sequence(sc.recorder.changes("Pod"), "init")))
    sc.expect("CL-8", "main_started[Always]", _main_started(sc, "init"))


@pytest.mark.case("CL-8")
def test_failing_init_container_never(scenario: Scenario):
    """CL-8: with restartPolicy Never the pod goes Failed; the main container never starts."""
    sc = scenario
    sc.apply("init-fails.yaml", name="init", restart_policy="Never")
    sc.expect("CL-8", "phase[Never]", sc.wait(pods.pod_phase("init", "Failed"), RUN_BUDGET_S + WAIT_SLACK_S))
    sc.expect("CL-8", "status[Never]", pod_columns(sc.pod("init")).status)
    sc.expect("CL-8", "main_started[Never]", _main_started(sc, "init"))


# -- CL-6, CL-7: profile crashloop-cap-20s (the kubelet's back-off cap is 20 s) ----------------
CAP_PROFILE = "crashloop-cap-20s"


def require_kubelet_cap(sc: Scenario) -> None:
    """The running kubelet has the cap the documented values assume (configz), or the test fails:
    the kubelet of the node the test's pods are pinned to (a --kubeconfig cluster, e2e.cluster.facts),
    else of the cluster's first node."""
    node = sc.nodes[0] if sc.nodes else sc.kube.core.list_node().items[0].metadata.name
    cfg = kubelet_config(sc.kube.api_client, node)
    cap = (cfg.get("crashLoopBackOff") or {}).get("maxContainerRestartPeriod")
    want = f"{cl.CL6_MAX_RESTART_PERIOD_S}s"
    sc.require(cap == want, f"profile {CAP_PROFILE}: kubelet of {node} runs with crashLoopBackOff.maxContainerRestartPeriod "
                            f"{want!r} as the documented values assume (profiles/{CAP_PROFILE}.yaml), not {cap!r}")


@pytest.mark.profile(CAP_PROFILE)
@pytest.mark.case("CL-6")
def test_configured_backoff_cap(scenario: Scenario):
    """CL-6: with maxContainerRestartPeriod 20 s the gaps are 0, 10, 20, 20, 20 s."""
    sc = scenario
    require_kubelet_cap(sc)
    crash_pod(sc, "capped", "Always", exit_code=1)
    wait_for_runs(sc, "CL-6", "capped", runs=len(cl.CL6_GAPS_S) + 1)
    judge_gaps(sc, "CL-6", "capped", count=len(cl.CL6_GAPS_S))


def _judge_after_long_run(sc: Scenario, pod: str, long_s: int, after_reset: bool) -> None:
    """Crash, crash, crash (the back-off reaches the cap), one run of ``long_s`` s, then judge
    the gap after it (and, ``after_reset``, the gap after that)."""
    long_attempt = 4  # runs 1–3 take the back-off to the cap: gaps 0, 10, 20 (CL-6)
    sc.apply("long-run.yaml", name=pod, long_attempt=long_attempt, long_s=long_s, run_s=RUN_S)
    runs_needed = long_attempt + 1 + (1 if after_reset else 0)
    budget = sum(sc.judge.wait_budget_s("CL-6", f"restart_gap[{i}]") for i in range(long_attempt - 1))
    for name in [f"restart_gap_after_run[{long_s}s]"] + (["restart_gap_after_reset"] if after_reset else []):
        budget += sc.judge.wait_budget_s("CL-7", name)
    timeout = budget + long_s + runs_needed * RUN_BUDGET_S + WAIT_SLACK_S
    sc.wait_for(f"{runs_needed} runs of {pod}/app", lambda: len(sc.attempts(pod, "app")) >= runs_needed or None, timeout)
    runs = sc.attempts(pod, "app")
    gaps = restart_gaps(runs)
    i = long_attempt - 1  # gap after the long run
    sc.expect("CL-7", f"restart_gap_after_run[{long_s}s]", gaps[i], around=runs[i + 1].started_at,
              details={"long_run_s": runs[i].finished_at - runs[i].started_at if runs[i].finished_at else None})
    if after_reset:
        sc.expect("CL-7", "restart_gap_after_reset", gaps[i + 1], around=runs[i + 2].started_at)


@pytest.mark.profile(CAP_PROFILE)
@pytest.mark.case("CL-7")
def test_backoff_kept_after_twice_the_cap(scenario: Scenario):
    """CL-7: a run longer than 2 × cap (45 s at a 20 s cap) does not reset the back-off: the
    next restart still waits the cap (the kubelet's reset threshold is a flat 600 s)."""
    sc = scenario
    require_kubelet_cap(sc)
    _judge_after_long_run(sc, "over-2x-cap", cl.CL7_RUN_OVER_2X_CAP_S, after_reset=False)


@pytest.mark.slow
@pytest.mark.profile(CAP_PROFILE)
@pytest.mark.case("CL-7")
def test_backoff_reset_after_threshold(scenario: Scenario):
    """CL-7: after a run longer than the reset threshold (600 s) the next restart is immediate
    and the one after waits the initial 10 s again (about 11 minutes)."""
    sc = scenario
    require_kubelet_cap(sc)
    _judge_after_long_run(sc, "over-reset", cl.CL7_RUN_OVER_RESET_S, after_reset=True)
