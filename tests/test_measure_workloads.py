"""e2e.measure's workload families (values, jobs, probes, podstatus, resize): the reading on
hand-made evidence. The same functions measured on real and mutated records: tests/test_mutations.py."""

from __future__ import annotations

import pytest

from e2e.evidence.stamps import Stamp
from e2e.measure import cronjobs, hooks, images, jobs, podstatus, probes, resize
from e2e.measure.values import Value, expect_all
from e2e.record.recorder import Change


def _pod(restarts: int, deleting: bool = False, rv: int = 0) -> dict:
    meta = {"name": "p", "resourceVersion": str(rv), **({"deletionTimestamp": "2026-01-01T00:00:09Z"} if deleting else {})}
    return {"metadata": meta, "status": {"containerStatuses": [{"restartCount": restarts}]}}


def _job(target: str | None, rv: int = 0) -> dict:
    return {"metadata": {"name": "job", "resourceVersion": str(rv)},
            "status": {"conditions": [{"type": "FailureTarget", "status": target}] if target else []}}


def test_expect_all_hands_details_params_and_the_moment_over():
    calls = []
    expect_all(lambda *a, **kw: calls.append((a, kw)) or True,
               [Value("X-1", "a", 1, {"e": 1}, {"pod": "p"}, at=5.0), Value("X-1", "b", "s")], run=7)
    assert calls == [(("X-1", "a", 1), {"details": {"e": 1, "run": 7}, "around": 5.0, "pod": "p"}),
                     (("X-1", "b", "s"), {"details": {"run": 7}})]


def test_restarts_up_to_the_failure_target_leave_out_the_later_ones():
    pod = [Change(1.0, "Pod", "MODIFIED", "p", _pod(1, rv=10)), Change(2.0, "Pod", "MODIFIED", "p", _pod(2, rv=20)),
           Change(4.0, "Pod", "MODIFIED", "p", _pod(3, deleting=True, rv=40))]
    job = [Change(1.5, "Job", "MODIFIED", "job", _job("False", rv=15)), Change(3.0, "Job", "MODIFIED", "job", _job("True", rv=30))]
    counts, before = jobs.restarts_up_to_failure_target(pod, job)
    assert (counts, before) == ([1, 2], [1, 2])
    # the restart that reached the limit, received 2 ms after the FailureTarget it caused (two watch
    # streams): written before it, so counted
    late = [*pod[:2], Change(3.002, "Pod", "MODIFIED", "p", _pod(3, rv=25)), pod[2]]
    assert jobs.restarts_up_to_failure_target(late, job) == ([1, 2, 3], [1, 2, 3])
    assert jobs.restarts_up_to_failure_target(pod, job[:1])[1] == [1, 2, 3]  # no FailureTarget: every change
    value = jobs.restart_count_at_failure(counts, before, {"type": "Failed"})
    assert (value.case, value.name, value.value) == ("JB-8", "restart_count_at_failure", 2)
    assert jobs.restart_count_at_failure([], [], {}).value == 0


def test_end_reason_is_a_failed_conditions_reason_else_its_type():
    assert jobs.end_reason({"type": "Failed", "reason": "DeadlineExceeded"}) == "DeadlineExceeded"
    assert jobs.end_reason({"type": "Complete", "reason": "CompletionsReached"}) == "Complete"


def test_active_deadline_without_a_failure_target_measures_none():
    pods = [{"name": "a", "created": "", "deletionTimestamp": "2026-01-01T00:00:21Z", "terminated": {"exitCode": 1}}]
    after, total, deleted = jobs.active_deadline(pods, {"startTime": "2026-01-01T00:00:00Z"})
    assert (after.value, total.value, deleted.value) == (None, 1, False)  # deleted, but not running (exit 1)


def test_only_a_non_standard_condition_naming_a_deadline_counts():
    status = {"phase": "Failed", "reason": "DeadlineExceeded",
              "conditions": [{"type": "Ready", "reason": "PodFailed"}, {"type": "DisruptionTarget", "reason": "Other"}]}
    by_name = {v.name: v.value for v in jobs.deadline_failure(status)}
    assert by_name == {"pod_phase": "Failed", "pod_reason": "DeadlineExceeded", "disruption_target": True, "deadline_condition": False}
    status["conditions"].append({"type": "ActiveDeadlineExceeded", "reason": "x"})
    assert {v.name: v.value for v in jobs.deadline_failure(status)}["deadline_condition"] is True


def test_liveness_kill_measures_from_the_removal_and_needs_a_sigterm():
    run = [Stamp(100.0, "file-rm"), Stamp(110.2, "prestop"), Stamp(113.8456, "sigterm")]
    sig, prestop = probes.liveness_kill("slow", 100.0, run)
    assert (sig.name, sig.value, sig.at) == ("sigterm_after_removal_s[slow]", 13.846, 113.8456)
    assert (prestop.name, prestop.value) == ("prestop_before_sigterm[slow]", True)
    assert [v.name for v in probes.liveness_kill("fast", 100.0, run)] == ["sigterm_after_removal_s[fast]"]
    with pytest.raises(ValueError, match="no sigterm stamp"):
        probes.liveness_kill("slow", 100.0, run[:2])


def test_median_and_p95_by_nearest_rank():
    assert podstatus.median_p95([3.0, 1.0, 2.0]) == (2.0, 3.0)
    assert podstatus.median_p95([float(i) for i in range(1, 21)]) == (10.5, 19.0)
    v = podstatus.status_latency("exit_to_watch_median_s", [0.12345, 0.5])
    assert (v.value, v.details) == (pytest.approx(0.311725), {"p95_s": 0.5, "samples_s": [0.123, 0.5]})
    with pytest.raises(ValueError):
        podstatus.median_p95([])


def test_cgroup_reads_of_both_versions_and_a_bad_one():
    assert resize.cgroup_read("20000\n204\n67108864\n", 1) == {"cpu_quota_us": 20000, "cpu_shares": 204, "memory_limit_bytes": 67108864}
    assert resize.cgroup_read("max 100000\nmax\n", 2) == {"cpu_quota_us": -1, "cpu_shares": "absent", "memory_limit_bytes": -1}
    with pytest.raises(ValueError, match="3 fields"):
        resize.cgroup_read("20000\n204\n", 1)  # a file missing
    with pytest.raises(ValueError):
        resize.cgroup_read("cat: can't open\n", 1)
    read = resize.cgroup_read("40000 100000\n100663296\n", 2)
    assert [(v.name, v.value) for v in resize.cgroup_values("RS-1", "cpu-resized:", read, memory=False)] == [
        ("cpu-resized:cpu_quota_us", 40000), ("cpu-resized:cpu_shares", "absent")]
    assert [v.name for v in resize.cgroup_values("RS-4", "x:", read, cpu=False)] == ["x:memory_limit_bytes"]


def test_jobs_at_resume_names_the_slot_and_judges_a_job_only_when_there_is_one():
    slot = 1_796_209_320.0  # 2026-12-02T11:02:00Z
    job = {"created": "2026-12-02T11:02:19Z", "annotations": {cronjobs.SCHEDULED: "2026-12-02T11:02:00Z"}}
    values = cronjobs.jobs_at_resume("missed", "cj", {cronjobs.slot_job("cj", slot): job}, slot, slot + 20.0)
    assert [(v.name, v.value) for v in values] == [("jobs_at_resume[missed]", 1), ("job_slot[missed]", "newest"),
                                                   ("scheduled_annotation[missed]", "2026-12-02T11:02:00Z"),
                                                   ("job_after_resume_s[missed]", -1.0)]
    assert values[2].params == {"slot": "2026-12-02T11:02:00Z"}
    other = cronjobs.jobs_at_resume("missed", "cj", {cronjobs.slot_job("cj", slot - 60): job}, slot, slot + 20.0)
    assert other[1].value == "another" and other[3].value == -1.0  # the only Job judged, though not the newest slot's
    assert [(v.name, v.value) for v in cronjobs.jobs_at_resume("deadline", "cj", {}, slot, slot)] == [
        ("jobs_at_resume[deadline]", 0), ("job_slot[deadline]", "another")]


def test_waited_is_the_pulled_messages_wait_less_its_pull_time():
    assert images.waited_s('Successfully pulled image "x" in 512ms (33.1s including waiting). Image size: 1 bytes.') == pytest.approx(32.588)
    assert images.waited_s('Container image "x" already present on machine') is None


def test_pull_gaps_start_to_start_with_their_backoff():
    gaps = images.pull_gaps([100.0, 115.5, 142.0], [10, 20])
    assert [(v.name, v.value, v.details, v.at) for v in gaps] == [
        ("pull_gap_s[1]", 15.5, {"backoff_s": 10, "pull": 2}, 115.5), ("pull_gap_s[2]", 26.5, {"backoff_s": 20, "pull": 3}, 142.0)]
    assert images.pull_gaps([100.0], []) == []


def test_serial_pulls_and_what_is_none_without_as_pulled_event():
    evidence = {"a_pulled_event_s": 36.0, "b_pulling_event_s": [3.1], "b_first_request_s": 36.05,
                "b_pulled": "Successfully pulled image \"b\" in 50ms (32.95s including waiting)."}
    assert [v.value for v in images.serial_pulls(evidence)] == pytest.approx([0.05, 1, 0.0])
    assert [v.value for v in images.serial_pulls({**evidence, "a_pulled_event_s": None})] == [None, 0, None]


def test_a_deletion_behind_a_running_hook_and_one_the_hook_let_through():
    t = 1_796_209_400.0  # epoch s (a stamp's time has ten digits before the point)
    term = {"exitCode": 143, "message": f"{t + 0.5:.6f} start\n{t + 40.2:.6f} sigterm\n"}
    present, sig, gone, code = hooks.deletion_behind_a_running_hook(t + 10, t + 41.5, t + 40, term, window_s=25)
    assert (present.value, present.details["gone_after_delete_s"], present.at) == (True, 31.5, t + 35)
    assert (sig.value, gone.value, gone.at, code.value) == (False, 1.5, t + 41.5, 143)  # SIGTERM only after the kill
    cancelled = hooks.deletion_behind_a_running_hook(t + 10, t + 11.2, None, {**term, "message": f"{t + 10.1:.6f} sigterm"}, window_s=25)
    assert [(v.name, v.value) for v in cancelled] == [("pod_present_after_window", False), ("sigterm_before_hook_killed", True),
                                                      ("exit_code", 143)]
    assert hooks.deletion_behind_a_running_hook(t + 10, None, None, {}, window_s=25)[1].value is False  # no stamp: no SIGTERM
