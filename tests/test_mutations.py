"""Mutation proof of the real registry: recorded real timelines (tests/data), and synthetic
mutations of them that a broken kubelet or a wrong case would produce, are measured with the
scenarios' own functions and judged against the **real** ``REGISTRY``. Every real recording
holds; every mutation FAILS, with a message naming its case, value and band — or, where it shows
a known upstream bug's correct behaviour, reads "bug fixed?" (never a pass).

NF, DR and KB have no recording in tests/data: their real data are the records of a real run's
measurements.json, with the evidence the scenarios kept in ``details`` (tests/data/ci-s5/README.md,
tests/data/ci17/README.md).
So have the workload families RS, RR, PB, HK, IM, JB, CJ, PC, ST and HP: records of three quiet
runs on v1.37.2 (tests/data/real-workloads-v1.37.2/README.md). Where a record keeps the evidence
(JB-8, JB-2, JB-3, PB-2, PC-3, RS-1, CJ-4, HK-4, IM-4), the mutation edits the evidence and the
value is measured again as the scenario measures it; elsewhere (RR-1, ST-1, ST-5, HK-1, HP-1,
IM-1) the mutation changes the measured value as the regression it names would.

The table of mutations and what caught them is printed by ``test_mutation_table``
(``make test`` shows it with ``-rA``); all must be caught.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, cast

import pytest

from e2e import documented  # noqa: F401  (registers every family)
from e2e.documented import cronjobs as cj_doc
from e2e.documented import hooks as hooks_doc
from e2e.documented import hpa as hpa_doc
from e2e.documented import jobs as jobs_doc
from e2e.documented import known_bugs as kb_doc
from e2e.documented import probes as probes_doc
from e2e.documented import statefulset as sts_doc
from e2e.evidence.ephemeral import eviction
from e2e.evidence.oomkill import termination
from e2e.evidence.kubectl import Line
from e2e.measure import cronjobs, hooks, images, jobs, podstatus, probes, resize
from e2e.measure.values import Value, expect_all
from e2e.judge.measurements import BUG_FIXED, BUG_FIXED_PREFIX, ExpectationFailed, Judge, MeasurementLog
from e2e.measure.crashloop import restart_gap_values
from e2e.measure.drain import RETRY, lines_from_text, retry_interval_values, retry_intervals
from e2e.measure.known_bugs import prestop_outlives
from e2e.measure.memory import oom_run_values
from e2e.measure.nodelost import taint_values, unknown_values
from e2e.measure.sidecar import start_gaps
from e2e.measure.storage import eviction_delays
from e2e.measure.termination import sigterm_after_delete
from e2e.record.nodes import Seen
from e2e.record.pods import terminated_runs
from e2e.record.recorder import Change, load_changes
from e2e.evidence.stamps import Stamp, event_times, find, first, parse
from e2e.evidence.stamp_order import expect_order
from e2e.record.timeline import attempts, parse_time

DATA = Path(__file__).parent / "data"
REAL = DATA / "real-v1.37.2"  # taken from one `make e2e` run on v1.37.2, cgroup v1 (issue 12)
_API_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


# -- mutating a recording ---------------------------------------------------------------------


def _shift_obj(obj, at: float, delta: float):
    if isinstance(obj, dict):
        return {k: _shift_obj(v, at, delta) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_shift_obj(v, at, delta) for v in obj]
    if isinstance(obj, str) and _API_TIME.match(obj):
        t = parse_time(obj)
        if t is not None and t >= at:
            return dt.datetime.fromtimestamp(t + delta, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return obj


def shift_after(changes: list[Change], at: float, delta: float) -> list[Change]:
    """The recording with everything from epoch ``at`` on — receive times and API timestamps —
    ``delta`` seconds later: the cluster doing the same thing, later."""
    out = []
    for c in changes:
        received = c.received_at + delta if c.received_at >= at else c.received_at
        out.append(Change(received, c.kind, c.type, c.name, _shift_obj(copy.deepcopy(c.obj), at, delta)))
    return out


# -- judging ------------------------------------------------------------------------------------


@dataclass
class Outcome:
    failed: list[str]  # "case name: measured …, expected …" of each failed value
    message: str
    fixed: list[str]  # "case name" of each known bug's value that holds the correct behaviour
    settled: tuple[str, str] | None  # what the values make of the test (Judge.outcome)


Judging = Callable[[Judge], None]


def values(*triples: tuple[str, str, object]) -> Judging:
    """A judging step of plain ``(case, name, value)`` values."""
    def run(j: Judge) -> None:
        for case, name, value in triples:
            j.expect(case, name, value)
    return run


def measured(*measured_values: Value) -> Judging:
    """A judging step of the values a scenario's own measuring function (:mod:`e2e.measure`) returned."""
    def run(j: Judge) -> None:
        expect_all(lambda case, name, value, around=None, **kw: j.expect(case, name, value, **kw), measured_values)
    return run


def judge(minor: int, judging: Judging, tmp: Path, cgroup: int | None = 1) -> Outcome:
    """Run ``judging`` with a judge of the real registry on ``1.<minor>`` (cgroup v1, this host's)."""
    j = Judge(MeasurementLog(tmp / f"m-{minor}.json"), "mutation", "r", f"v1.{minor}.0", minor=minor, cgroup=cgroup)
    judging(j)
    fixed = [f"{m.case} {m.name}" for m in j.set_aside_values(BUG_FIXED)]
    try:
        j.verify()
    except ExpectationFailed as e:
        return Outcome([v.explain().splitlines()[0] for v in j.failures], str(e), fixed, None)
    return Outcome([], "", fixed, j.outcome())


# -- CL: the first real CL-1 recording (v1.37.2) ---------------------------------------------------

CL1 = load_changes(DATA / "cl1-v1.37.2-recording.json")


def cl1_gaps(changes: list[Change]) -> Judging:
    return measured(*restart_gap_values("CL-1", changes, "crashloop", "app", 4))


def doubled_backoff(changes: list[Change]) -> list[Change]:
    """Each back-off twice as long: 0, 20, 40, 80 s instead of 0, 10, 20, 40 s."""
    runs = attempts(changes, "crashloop", "app")
    extra = 0.0
    for k, documented_gap in zip(range(2, len(runs)), (10, 20, 40), strict=False):
        changes = shift_after(changes, runs[k].started_at + extra, documented_gap)
        extra += documented_gap
    return changes


def ten_second_first_gap(changes: list[Change]) -> list[Change]:
    """The first restart after a 10 s back-off instead of at once."""
    runs = attempts(changes, "crashloop", "app")
    return shift_after(changes, runs[1].started_at, 9)


# -- SC: SC-1's container-written stamps (v1.37.2) --------------------------------------------

SC1 = parse((REAL / "sc1-start-order.stamps.log").read_text())


def sc1(stamps: list[Stamp]) -> Judging:
    """SC-1's order (expect_order, as test_start_order judges it) and its start gaps."""
    def run(j: Judge) -> None:
        expect_order(j, "SC-1", "start_order", stamps, t_ref=stamps[0].at)
        measured(*start_gaps(stamps))(j)
    return run


def main_before_startup_probe(stamps: list[Stamp]) -> list[Stamp]:
    """The main container started 0.5 s before the sidecar's startup probe succeeded."""
    ok = find(stamps, "sidecar startup-ok")
    return sorted(replace(s, at=ok.at - 0.5) if s.key == "app start" else s for s in stamps)


# -- PS: PS-2's app log (SIGTERM stamp) and the delete time (v1.37.2) ---------------------------

PS2_LOG = (REAL / "ps2-web.app.log").read_text()
_marks = (REAL / "ps2-timeline-marks.txt").read_text()
PS2_DELETE = float(re.search(r"t0 = ([\d.]+)", _marks).group(1)) + float(re.search(r"\+([\d.]+)\s+mark\s+delete web", _marks).group(1))


def ps2(log: str, t_delete: float = PS2_DELETE) -> Judging:
    return measured(sigterm_after_delete(t_delete, parse(log)))


def sigterm_at_delete(log: str) -> str:
    """SIGTERM at the delete itself, as if preStop sleep 5 had not run."""
    sig = first(parse(log), "SIGTERM")
    return log.replace(f"{sig.at:.6f} SIGTERM", f"{PS2_DELETE:.6f} SIGTERM")


# -- ES: ES-1 [single]'s recording and the writer's crossing mark (v1.37.2) -----------------------

ES1 = load_changes(REAL / "es1-single-recording.json")
ES1_CROSSED = event_times(parse((REAL / "es1-single-writer.app.log").read_text()))["crossed"]


def terminal_later(changes: list[Change], late_s: float) -> list[Change]:
    """The pod's terminal status ``late_s`` after the Evicted event instead of at the end of the kill
    (the status manager's write held back)."""
    ev = eviction(changes, "writer")
    assert ev is not None and ev.terminal_received_at is not None
    return shift_after(changes, ev.terminal_received_at, late_s)


def es1(changes: list[Change]) -> Judging:
    ev = eviction(changes, "writer")
    assert ev is not None, "the recording holds the writer's eviction"
    return measured(*eviction_delays("ES-1", ev, ES1_CROSSED))


# -- OM: OM-1's recording (v1.37.2, cgroup v1) ----------------------------------------------------

OM1 = load_changes(REAL / "om1-recording.json")


def om1(changes: list[Change]) -> Judging:
    """Every ended run (OM-1 exit_code, terminated_reason, eviction_signals [run=i]; the kernel log is
    not in the recording) under Always, and the restarts, as test_limit_exceeded_always measures them."""
    pod = [c for c in changes if c.kind == "Pod" and c.name == "oom"]
    events = [c.obj for c in changes if c.kind == "Event"]
    ended = [termination(pod[-1].obj, "app", cid, term, reasons, events, None)
             for cid, term, reasons in terminated_runs(pod, "app")]
    return measured(*(v for i, t in enumerate(ended, start=1) for v in oom_run_values("OM-1", "", i, t, kernel_read=False)),
                    *restart_gap_values("OM-1", changes, "oom", "app", 2))


def disruption_target_added(changes: list[Change]) -> list[Change]:
    """The OOM-killed pod marked as the kubelet marks a pod it evicts or kills (a DisruptionTarget
    condition), as if the kernel's kill were taken for the kubelet's."""
    out = []
    for c in changes:
        obj = c.obj
        if c.kind == "Pod":
            status = obj.get("status") or {}
            target = {"type": "DisruptionTarget", "status": "True", "reason": "TerminationByKubelet"}
            obj = {**obj, "status": {**status, "conditions": [*(status.get("conditions") or []), target]}}
        out.append(Change(c.received_at, c.kind, c.type, c.name, obj))
    return out


def exit_zero(changes: list[Change]) -> list[Change]:
    """Every OOM-killed run ends with exit code 0 (reason OOMKilled kept), under Always."""
    def fix(obj):
        if isinstance(obj, dict):
            out = {k: fix(v) for k, v in obj.items()}
            if out.get("exitCode") == 137:
                out["exitCode"] = 0
            return out
        if isinstance(obj, list):
            return [fix(v) for v in obj]
        return obj
    return [Change(c.received_at, c.kind, c.type, c.name, fix(c.obj)) for c in changes]


# -- PR: PR-1's killed run under Never (probe stamps, v1.37.2) ------------------------------------

PR1 = parse((REAL / "pr1-unstarted-never.app.log").read_text())


def pr1(stamps: list) -> Judging:
    """The killed run's values under Never, as test_startup_probe_budget measures them."""
    start, sigterm = probes.start_and_sigterm(stamps)
    assert start is not None and sigterm is not None, "the recording holds the run's start and SIGTERM"
    return measured(*probes.killed_run("Never", start, sigterm, stamps))


def killed_before_budget(stamps: list) -> list:
    """SIGTERM 2 s after the start: before the 3 × 2 s startup budget ran out."""
    start = first(stamps, "start")
    return sorted((replace(s, at=start.at + 2.0) if s.event == "sigterm" else s for s in stamps), key=lambda s: s.at)


# -- NF, DR, KB: records of a real run's measurements.json (v1.37.2, cgroup v1; tests/data/ci-s5) ---

CI_S5 = {(m["case"], m["name"]): m for m in
         json.loads((DATA / "ci-s5" / "measurements-nf2-dr2-kb1.json").read_text())["measurements"]}


# -- NF: NF-2's last Lease renewal and the node's Ready=Unknown condition (fast-lifecycle) ----------

NF2 = CI_S5[("NF-2", "unknown_after_last_renew_s[fast-lifecycle]")]["details"]


def nf2(last_renew: float, unknown: dict) -> Judging:
    """Unknown's lastTransitionTime after the last renewTime, its reason and message, as the node-lost
    chain of test_kubelet_stopped (and NF-4, NF-8) measures them."""
    return measured(*unknown_values("NF-2", "fast-lifecycle", last_renew, Seen(0.0, unknown), NF2["fault"]))


def unknown_after(last_renew: float, unknown: dict, after_s: float) -> dict:
    """The controller's Ready=Unknown written ``after_s`` after the last renewal instead of after the
    grace (20 s on fast-lifecycle); the API keeps whole seconds."""
    at = parse_time(unknown["lastTransitionTime"])
    return _shift_obj(unknown, at, int(last_renew + after_s) - at)


# NF: the node-lost chain's taints (NF-2 [fast-lifecycle] of the v1.37.2 CI run of 5efbf0a; tests/data/ci17)

CI17_NF2 = {m["name"]: m["details"] for m in json.loads((DATA / "ci17" / "measurements-nf2-taints.json").read_text())["measurements"]}
NF2_TAINTS = {"unknown": CI17_NF2["unknown_after_last_renew_s[fast-lifecycle]"]["unknown"],
              "noschedule": CI17_NF2["noschedule_taint_after_unknown_s"]["taint"],
              "noexecute": CI17_NF2["noexecute_taint_after_unknown_s"]["taint"]}


def nf_taints(chain: dict) -> Judging:
    """Both unreachable taints after Unknown on the chain's one clock (timeAdded − lastTransitionTime),
    as node_lost measures them for NF-2, NF-4 and NF-8 (receive times play no part)."""
    return measured(*taint_values("NF-2", Seen(0.0, chain["unknown"]), Seen(0.0, chain["noschedule"]), Seen(0.0, chain["noexecute"])))


def noschedule_taint_late(chain: dict, late_s: int) -> dict:
    """doNoScheduleTaintingPass tainting the node ``late_s`` after the Unknown write (the node update
    lost; the taint left to the next resync) instead of on that update."""
    taint = chain["noschedule"]
    return {**chain, "noschedule": _shift_obj(taint, cast(float, parse_time(taint["timeAdded"])), late_s)}


# -- DR: DR-2's kubectl drain transcript (max-unavailable-1: one pod retried until the timeout) ----

DR2 = CI_S5[("DR-2", "first_stdout_line[max-unavailable-1]")]["details"]["transcript"]
_EVICTING = re.compile(r"^evicting pod [^/]+/(?P<pod>\S+)$")


def dr2(lines: list[Line]) -> Judging:
    """The seconds between consecutive "will retry after 5s" lines per pod, as test_drain_against_pdb
    measures them."""
    return measured(*retry_interval_values("max-unavailable-1", retry_intervals(lines)))


def retry_every(lines: list[Line], every_s: float) -> list[Line]:
    """kubectl retrying a refused eviction ``every_s`` after the refusal instead of 5 s: each later
    attempt of the pod (its "evicting pod" and "will retry" lines) earlier by the sleeps it saved."""
    out, refusals = [], 0
    for ln in lines:
        retry, evicting = RETRY.match(ln.text), _EVICTING.match(ln.text)
        pod = (retry or evicting).group("pod") if (retry or evicting) else None
        shifted = pod is not None and refusals > 0
        out.append(Line(ln.at - refusals * (5 - every_s), ln.stream, ln.text) if shifted else ln)
        refusals += retry is not None
    return sorted(out, key=lambda ln: ln.at)


# -- KB: KB-1's times after the delete (preStop sleep 20 s, the container exits by itself at ~6 s) --

KB1 = {name: CI_S5[("KB-1", name)]["value"]
       for name in ("container_exit_after_delete_s", "api_shows_exit_after_delete_s", "pod_gone_after_delete_s")}


def kb1(times: dict[str, float]) -> Judging:
    """The three times after the delete (the delete at 0), as test_prestop_sleep_outlives_its_container measures them."""
    return measured(*prestop_outlives(0.0, times["container_exit_after_delete_s"], times["api_shows_exit_after_delete_s"],
                                     times["pod_gone_after_delete_s"]))


def hook_ends_at_exit(times: dict[str, float]) -> dict[str, float]:
    """The preStop sleep ending when the container exits (kubernetes#134338 fixed): the API's exit
    and the pod's removal as much earlier as the 20 s sleep outlived the container."""
    saved = kb_doc.KB1_PRESTOP_SLEEP_S - times["container_exit_after_delete_s"]
    return {name: t - saved if name != "container_exit_after_delete_s" else t for name, t in times.items()}


# -- the workload families: records of three real runs' measurements.json (v1.37.2, cgroup v1;
#    tests/data/real-workloads-v1.37.2) ----------------------------------------------------------

WORKLOADS: dict[tuple[str, str], list[dict]] = {}
for _path in sorted((DATA / "real-workloads-v1.37.2").glob("measurements-*.json")):
    for _m in json.loads(_path.read_text())["measurements"]:
        WORKLOADS.setdefault((_m["case"], _m["name"]), []).append(_m)


def real(case: str, name: str) -> dict:
    """The one real record of ``case``/``name`` (tests/data/real-workloads-v1.37.2)."""
    (record,) = WORKLOADS[(case, name)]
    return record


def real_values(case: str, *names: str) -> dict[str, object]:
    return {name: real(case, name)["value"] for name in names}


def named(case: str, measured: list[tuple[str, object]] | dict[str, object]) -> Judging:
    """A judging step of ``case``'s ``(name, value)`` pairs (or ``{name: value}``)."""
    return values(*((case, name, value) for name, value in (measured.items() if isinstance(measured, dict) else measured)))


# -- JB-8: the pod's restartCounts up to the Job's FailureTarget (OnFailure, backoffLimit 2) ------

JB8 = real("JB-8", "restart_count_at_failure")["details"]


def jb8(details: dict) -> Judging:
    return measured(jobs.restart_count_at_failure(details["restart_counts"], details["before_failure_target"], details["condition"]))


def one_restart_more(details: dict) -> dict:
    """The Job controller comparing the restarts with ``>`` instead of ``>=`` (pastBackoffLimitOnFailure):
    the pod restarts once more before the FailureTarget."""
    before = details["before_failure_target"]
    return {**details, "before_failure_target": [*before, before[-1] + 1]}


# -- JB-2: the Job's pods and status at its deadline (activeDeadlineSeconds 20, pods failing after 5 s)

JB2 = real("JB-2", "pods_total")["details"]


def jb2(details: dict) -> Judging:
    return measured(*jobs.active_deadline(details["pods"], details["job_status"]))


def job_backoff_doubled(details: dict) -> dict:
    """The Job controller's pod-failure back-off doubled (20 s for the first failure instead of
    DefaultJobPodFailureBackOff 10 s): the second pod is due 20 s after the first one's finishedAt,
    past the deadline's FailureTarget, after which the controller creates no pod — the Job ends
    with the first pod alone, and no running pod to delete."""
    pods = details["pods"]
    target = parse_time(jobs.failure_target(details["job_status"])["lastTransitionTime"])
    second_due = parse_time(pods[0]["terminated"]["finishedAt"]) + 2 * jobs_doc.JOB_BACKOFF_S
    assert second_due > target, "the doubled back-off would still bring the second pod before the deadline"
    return {**details, "pods": pods[:1]}


def deadline_from_first_failure(details: dict) -> dict:
    """The Job controller counting activeDeadlineSeconds from its first pod's failure instead of the
    Job's startTime: FailureTarget JB2_DEADLINE_S after the first pod's finishedAt."""
    status, first_failed = details["job_status"], parse_time(details["pods"][0]["terminated"]["finishedAt"])
    late = cronjobs.rfc3339(first_failed + jobs_doc.JB2_DEADLINE_S)
    conditions = [{**c, "lastTransitionTime": late} if c.get("type") == "FailureTarget" else c for c in status["conditions"]]
    return {**details, "job_status": {**status, "conditions": conditions}}


# -- JB-3: the pod the kubelet failed at its own deadline (known bug kubernetes#115688) ------------

JB3 = real("JB-3", "deadline_condition")["details"]["pod_status"]


def jb3(status: dict) -> Judging:
    return measured(*jobs.deadline_failure(status))


def deadline_condition_added(status: dict) -> dict:
    """kubernetes#115688 fixed as PR #117973 proposed: the kubelet adds a pod condition
    ``ActiveDeadlineExceeded`` to the pod it fails at its deadline — a podFailurePolicy rule could match it."""
    condition = {"type": "ActiveDeadlineExceeded", "status": "True", "reason": status["reason"], "message": status["message"]}
    return {**status, "conditions": [*status["conditions"], condition]}


# -- PB-2: the killed run's own stamps (liveness period 5 s, failureThreshold 3; /tmp/ok removed) ---

PB2 = [(event, at) for event, at in real("PB-2", "sigterm_after_removal_s[slow]")["details"]["run"]]


def pb2(run: list[tuple[str, float]]) -> Judging:
    """The killed run's values: the removal the scenario measures from is the exec's own stamp, which
    the record keeps as the run's second ``file-rm`` line (the first went to the container's stdout)."""
    removed = [at for event, at in run if event == "file-rm"][-1]
    return measured(*probes.liveness_kill("slow", removed, [Stamp(at, event) for event, at in run]))


def killed_at_first_failure(run: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """The liveness kill after the first failed probe instead of failureThreshold 3 (the prober's
    failure count ignored): the preStop and SIGTERM (F − 1) × P = 2 × 5 s earlier."""
    early = (probes_doc.PB2_SLOW_FAILURE_THRESHOLD - 1) * probes_doc.PB2_SLOW_PERIOD_S
    return [(event, at - early if event in ("prestop", "sigterm") else at) for event, at in run]


def sigterm_before_prestop(run: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """The kubelet signalling the container before it runs the preStop hook (killContainer's order
    reversed): the preStop stamp after the SIGTERM, by the hook's own run time."""
    times = dict((event, at) for event, at in reversed(run))
    took = times["sigterm"] - times["prestop"]
    return [(event, at + 2 * took if event == "prestop" else at) for event, at in run]


# -- PC-3: the 20 samples of each status latency (v1.37.2: PLEGOnDemandRelist on) ------------------

PC3 = {name: real("PC-3", name)["details"]["samples_s"]
       for name in ("start_to_watch_median_s", "exit_to_watch_median_s", "resize_to_watch_median_s")}


def pc3(samples: dict[str, list[float]]) -> Judging:
    return measured(*(podstatus.status_latency(name, s) for name, s in samples.items()))


def resize_waits_for_the_periodic_relist(samples: dict[str, list[float]]) -> dict[str, list[float]]:
    """The relist the resize's SyncPod requests lost (PLEGOnDemandRelist's postSync RequestPodRelist,
    1.36+; as on 1.35): each resize sample waits for the periodic 1 s relist as a container's exit
    does — plus what the periodic relist added to the exit sample of the same index over the start
    sample (relisted on demand; the status write in both)."""
    extra = [e - s for s, e in zip(samples["start_to_watch_median_s"], samples["exit_to_watch_median_s"], strict=True)]
    return {**samples, "resize_to_watch_median_s": [r + x for r, x in zip(samples["resize_to_watch_median_s"], extra, strict=True)]}


# -- RS-1: the container's own cgroup read before and after the CPU resize (200m → 400m) -----------

RS1 = {prefix: real("RS-1", f"{prefix}cpu_quota_us")["details"] for prefix in ("before:", "cpu-resized:")}


def rs1(reads: dict[str, dict]) -> Judging:
    return measured(*(v for prefix, read in reads.items() for v in resize.cgroup_values("RS-1", prefix, read, memory=False)))


def cgroup_not_resized(reads: dict[str, dict]) -> dict[str, dict]:
    """The CPU resize acknowledged (status 400m) but never written to the container's cgroup: the
    read after it is the read before."""
    return {**reads, "cpu-resized:": reads["before:"]}


# -- RR-1: container restart rules (pod Never, rule Restart on exit 42; container `once` Never in a pod Always)

RR1 = real_values("RR-1", "restart_gap[0]", "restart_gap[1]", "restarts[rules]", "final_phase[rules]", "restarts[once]", "phase[once]")


def rule_ignored(measured: dict[str, object]) -> dict[str, object]:
    """The rule "Restart on exit 42" ignored: the container's restartPolicy Never makes its first exit
    (42) final — no restart, no gap, the pod Failed."""
    kept = {name: value for name, value in measured.items() if not name.startswith("restart_gap[")}
    return {**kept, "restarts[rules]": 0, "final_phase[rules]": "Failed"}


def restarted_against_its_rule(measured: dict[str, object]) -> dict[str, object]:
    """Container ``once`` restarted after its exit 7 although its own restartPolicy Never says not to
    (the pod's Always applied)."""
    return {**measured, "restarts[once]": 1}


# -- ST-1, ST-5: StatefulSet ordering and a replaced ordinal -----------------------------------------

ST1 = [(m["name"], m["value"]) for name in ("next_created_after_ready_s[OrderedReady]", "not_ready_at_once_max[OrderedReady]")
       for m in WORKLOADS[("ST-1", name)]]
ST1_PARALLEL_SPREAD = real("ST-1", "created_spread_s[Parallel]")["value"]
ST1_REPLICAS = 3  # test_ordered_ready_and_parallel's StatefulSets
ST5 = real_values("ST-5", "recreated_after_delete_s[statefulset]", "recreated_after_delete_s[deployment]")


def created_in_parallel(measured: list[tuple[str, object]]) -> list[tuple[str, object]]:
    """OrderedReady pods created in parallel (one sync creating every ordinal, as under Parallel — the
    real Parallel set's spread): all three not Ready at once, and each next ordinal created at least
    the readiness delay (READY_AFTER_S) before the previous one is Ready."""
    early = ST1_PARALLEL_SPREAD - sts_doc.READY_AFTER_S
    return [(name, early if name.startswith("next_created_after_ready_s") else ST1_REPLICAS) for name, _ in measured]


def ordinal_recreated_while_terminating(measured: dict[str, object]) -> dict[str, object]:
    """The StatefulSet recreating an ordinal while its old pod still terminates (at most one pod per
    ordinal broken): as fast as the Deployment's ReplicaSet replaced its pod in the same run."""
    return {**measured, "recreated_after_delete_s[statefulset]": measured["recreated_after_delete_s[deployment]"]}


# -- CJ-4: the Jobs a CronJob created at its resume, 3 slots after its lastScheduleTime --------------

CJ4 = real("CJ-4", "jobs_at_resume[missed]")["details"]


def cj4(details: dict) -> Judging:
    return measured(*cronjobs.jobs_at_resume("missed", "cj-missed", details["jobs"], parse_time(details["slot"]), details["resumed_at"]))


def every_missed_slot_run(details: dict) -> dict:
    """The controller creating a Job for every slot missed since lastScheduleTime (3 back), instead of
    only the most recent one (utils.go mostRecentScheduleTime): three Jobs at the resume."""
    slot = parse_time(details["slot"])
    newest = details["jobs"][cronjobs.slot_job("cj-missed", slot)]
    older = {cronjobs.slot_job("cj-missed", slot - 60 * k): {"created": newest["created"], "annotations": {
        cronjobs.SCHEDULED: cronjobs.rfc3339(slot - 60 * k)}}
        for k in range(1, cj_doc.CJ4_MISSED_SLOTS)}
    return {**details, "jobs": {**older, **details["jobs"]}}


def polled_every_10_s(details: dict) -> dict:
    """The CronJob controller's 10 s polling loop (controller v1, removed in 1.21) instead of its
    requeue at the slot: the Job created up to a poll period (10 s) after the resume — 10 s here."""
    return {**details, "jobs": {name: {**job, "created": cronjobs.rfc3339(parse_time(job["created"]) + 10)}
                                for name, job in details["jobs"].items()}}


# -- HK-1, HK-4: postStart hooks ----------------------------------------------------------------------

HK1 = real_values("HK-1", "hook_start_after_entrypoint_s", "b_start_after_hook_end_s")
HK4 = real("HK-4", "sigterm_before_hook_killed")["details"]
HK4_GONE_AFTER_DELETE = HK4["hook_killed"] + real("HK-4", "gone_after_hook_killed_s")["value"] - HK4["delete"]


def b_started_beside_the_hook(measured: dict[str, object]) -> dict[str, object]:
    """Container b started while a's postStart hook still runs (the hook run beside startContainer, not
    inside it): b as long after a's start as it came after the hook's end, the hook's end HK1_HOOK_S
    after its start."""
    hook_end = float(measured["hook_start_after_entrypoint_s"]) + hooks_doc.HK1_HOOK_S
    return {**measured, "b_start_after_hook_end_s": round(float(measured["b_start_after_hook_end_s"]) - hook_end, 3)}


def hk4(details: dict, gone_after_delete_s: float) -> Judging:
    return measured(*hooks.deletion_behind_a_running_hook(details["delete"], details["delete"] + gone_after_delete_s,
                                                          details["hook_killed"], details["terminated"], hooks_doc.HK4_WINDOW_S))


def hook_cancelled_at_delete(details: dict, gone_after_delete_s: float) -> tuple[dict, float]:
    """kubernetes#116032 fixed: the delete cancels the running hook, so what followed the hook's kill
    follows the delete — SIGTERM and the pod's removal as much earlier as the hook held them — and no
    one has to kill the hook."""
    held = details["hook_killed"] - details["delete"]
    sig = first(parse(details["terminated"]["message"]), "sigterm")
    message = details["terminated"]["message"].replace(f"{sig.at:.6f} sigterm", f"{sig.at - held:.6f} sigterm")
    return ({**details, "hook_killed": None, "sigterm": sig.at - held, "terminated": {**details["terminated"], "message": message}},
            gone_after_delete_s - held)


# -- HP-1: an HPA with no metrics server ---------------------------------------------------------------

HP1 = real_values("HP-1", "scaled_to_min_after_create_s", "metrics_failure_after_rescale_s", "replicas_after_failure")


def first_sync_rate_limited(measured: dict[str, object]) -> dict[str, object]:
    """A new HPA first synced only after the fixed 15 s rate limit (enqueueHPA's AddRateLimited of
    v1.34.4–v1.36.3 back in v1.37.2 instead of queue.Add): the scale to minReplicas 15 s later."""
    return {**measured, "scaled_to_min_after_create_s": float(measured["scaled_to_min_after_create_s"]) + hpa_doc.SYNC_PERIOD_S}


# -- IM-1, IM-4: image pulls against the suite's registry ---------------------------------------------

IM1 = [(m["name"], m["value"], m["details"]["backoff_s"]) for k in (1, 2) for m in WORKLOADS[("IM-1", f"pull_gap_s[{k}]")]]
IM4 = real("IM-4", "b_first_request_after_a_pulled_s")["details"]


def im1(gaps: list[tuple[str, float, float]]) -> Judging:
    """The gaps measured again from the pulls' starts (the record keeps the gaps: the first pull at 0 s)."""
    starts = [0.0]
    for _, gap, _ in gaps:
        starts.append(starts[-1] + gap)
    return measured(*images.pull_gaps(starts, [backoff for _, _, backoff in gaps]))


def image_backoff_doubled(gaps: list[tuple[str, float, float]]) -> list[tuple[str, float, float]]:
    """The kubelet's image pull back-off doubled (20, 40 s instead of 10, 20 s): each start-to-start
    gap longer by its back-off, the retry's phase the same. Caught by the second gap only: the first
    gap's band [10, 27] s (the back-off + up to one pod-worker retry period of 15 s + 2 s) also holds
    a 20 s first back-off (25.1 s here)."""
    return [(name, gap + backoff, 2 * backoff) for name, gap, backoff in gaps]


def im4(details: dict) -> Judging:
    return measured(*images.serial_pulls(details))


def pulls_in_parallel(details: dict) -> dict:
    """Image pulls not serialized (serializeImagePulls ignored): B's pull starts at its Pulling event —
    its first registry request then — and its Pulled message shows no wait."""
    m = images.INCLUDING_WAITING.search(details["b_pulled"])
    pulled = details["b_pulled"].replace(m.group(0), f" in {m.group(1)}{m.group(2)} ({m.group(1)}{m.group(2)} including waiting)")
    return {**details, "b_first_request_s": details["b_pulling_event_s"][0], "b_pulled": pulled}


@dataclass(frozen=True)
class Mutation:
    family: str
    name: str
    minor: int
    judging: Callable[[], Judging]
    expected_failures: tuple[str, ...]  # "CASE name" prefixes that must fail
    expected_fixed: tuple[str, ...] = ()  # "CASE name" of known bugs that must read "bug fixed?"


MUTATIONS = [
    Mutation("CL", "doubled back-off (1.37)", 37, lambda: cl1_gaps(doubled_backoff(CL1)),
             ("CL-1 restart_gap[1]", "CL-1 restart_gap[2]", "CL-1 restart_gap[3]")),
    Mutation("CL", "doubled back-off (1.34)", 34, lambda: cl1_gaps(doubled_backoff(CL1)),
             ("CL-1 restart_gap[1]", "CL-1 restart_gap[2]", "CL-1 restart_gap[3]")),
    Mutation("CL", "10 s first gap (1.37)", 37, lambda: cl1_gaps(ten_second_first_gap(CL1)), ("CL-1 restart_gap[0]",)),
    Mutation("CL", "10 s first gap (1.34)", 34, lambda: cl1_gaps(ten_second_first_gap(CL1)), ("CL-1 restart_gap[0]",)),
    Mutation("SC", "main started before the sidecar's startup probe", 37, lambda: sc1(main_before_startup_probe(SC1)),
             ("SC-1 start_order", "SC-1 app_start_after_startup_ok_ms")),
    Mutation("PS", "SIGTERM 0 s after delete with preStop 5", 37, lambda: ps2(sigterm_at_delete(PS2_LOG)),
             ("PS-2 sigterm_after_delete_s",)),
    Mutation("ES", "eviction 40 s after the crossing", 37, lambda: es1(shift_after(ES1, ES1_CROSSED + 0.1, 40)),
             ("ES-1 crossing_to_evicted_event_s",)),
    Mutation("ES", "Failed 10 s after the Evicted event", 37, lambda: es1(terminal_later(ES1, 10)),
             ("ES-1 evicted_event_to_failed_s",)),
    Mutation("OM", "exit 0 with OOMKilled under Always", 37, lambda: om1(exit_zero(OM1)),
             ("OM-1 exit_code[run=1]", "OM-1 exit_code[run=2]")),
    Mutation("OM", "an OOM kill marked DisruptionTarget", 37, lambda: om1(disruption_target_added(OM1)),
             ("OM-1 eviction_signals[run=1]", "OM-1 eviction_signals[run=2]")),
    Mutation("PR", "kill before the startup budget", 37, lambda: pr1(killed_before_budget(PR1)),
             ("PR-1 startup_kill_after_start_s[Never]", "PR-1 startup_probe_failures_before_kill[Never]")),
    Mutation("NF", "Ready=Unknown 5 s after the last renewal", 37,
             lambda: nf2(NF2["last_renew"], unknown_after(NF2["last_renew"], NF2["unknown"], 5)),
             ("NF-2 unknown_after_last_renew_s[fast-lifecycle]",)),
    Mutation("NF", "unreachable:NoSchedule 5 s after Unknown", 37, lambda: nf_taints(noschedule_taint_late(NF2_TAINTS, 5)),
             ("NF-2 noschedule_taint_after_unknown_s",)),
    Mutation("DR", "a drain retry every 1 s", 37, lambda: dr2(retry_every(lines_from_text(DR2), 1)),
             tuple(f"DR-2 retry_interval_s[max-unavailable-1/1/{k}]" for k in range(1, 6))),
    Mutation("KB", "the pod gone at the container's exit", 37, lambda: kb1(hook_ends_at_exit(KB1)), (),
             ("KB-1 api_shows_exit_after_delete_s", "KB-1 pod_gone_after_delete_s")),
    Mutation("JB", "JB-8: `>` for `>=`, one restart more", 37, lambda: jb8(one_restart_more(JB8)),
             ("JB-8 restart_count_at_failure",)),
    Mutation("JB", "JB-2: pod-failure back-off doubled", 37, lambda: jb2(job_backoff_doubled(JB2)),
             ("JB-2 pods_total", "JB-2 running_pod_deleted")),
    Mutation("JB", "JB-2: the deadline counted from the first failure", 37, lambda: jb2(deadline_from_first_failure(JB2)),
             ("JB-2 failure_target_after_start_s",)),
    Mutation("JB", "JB-3: a deadline condition on the pod", 37, lambda: jb3(deadline_condition_added(JB3)), (),
             ("JB-3 deadline_condition",)),
    Mutation("PB", "PB-2: liveness kill at 1 failure, not 3", 37, lambda: pb2(killed_at_first_failure(PB2)),
             ("PB-2 sigterm_after_removal_s[slow]",)),
    Mutation("PB", "PB-2: SIGTERM before the preStop hook", 37, lambda: pb2(sigterm_before_prestop(PB2)),
             ("PB-2 prestop_before_sigterm[slow]",)),
    Mutation("PC", "PC-3: resize waits for the periodic relist", 37, lambda: pc3(resize_waits_for_the_periodic_relist(PC3)),
             ("PC-3 resize_to_watch_median_s",)),
    Mutation("RS", "RS-1: CPU resize not written to the cgroup", 37, lambda: rs1(cgroup_not_resized(RS1)),
             ("RS-1 cpu-resized:cpu_quota_us", "RS-1 cpu-resized:cpu_shares")),
    Mutation("RR", "RR-1: restarted against its restart rule", 37, lambda: named("RR-1", restarted_against_its_rule(RR1)),
             ("RR-1 restarts[once]",)),
    Mutation("RR", "RR-1: rule Restart on exit 42 ignored", 37, lambda: named("RR-1", rule_ignored(RR1)),
             ("RR-1 restarts[rules]", "RR-1 final_phase[rules]")),
    Mutation("ST", "ST-1: created in parallel under OrderedReady", 37, lambda: named("ST-1", created_in_parallel(ST1)),
             ("ST-1 next_created_after_ready_s[OrderedReady]", "ST-1 not_ready_at_once_max[OrderedReady]")),
    Mutation("ST", "ST-5: ordinal recreated while terminating", 37,
             lambda: named("ST-5", ordinal_recreated_while_terminating(ST5)), ("ST-5 recreated_after_delete_s[statefulset]",)),
    Mutation("CJ", "CJ-4: a Job for every missed slot", 37, lambda: cj4(every_missed_slot_run(CJ4)),
             ("CJ-4 jobs_at_resume[missed]",)),
    Mutation("CJ", "CJ-4: a Job at the next 10 s poll", 37, lambda: cj4(polled_every_10_s(CJ4)),
             ("CJ-4 job_after_resume_s[missed]",)),
    Mutation("HK", "HK-1: b started beside a's postStart hook", 37, lambda: named("HK-1", b_started_beside_the_hook(HK1)),
             ("HK-1 b_start_after_hook_end_s",)),
    Mutation("HK", "HK-4: the hook cancelled at the delete", 37, lambda: hk4(*hook_cancelled_at_delete(HK4, HK4_GONE_AFTER_DELETE)),
             (), ("HK-4 pod_present_after_window", "HK-4 sigterm_before_hook_killed")),
    Mutation("HP", "HP-1: first sync after the 15 s rate limit", 37, lambda: named("HP-1", first_sync_rate_limited(HP1)),
             ("HP-1 scaled_to_min_after_create_s",)),
    Mutation("IM", "IM-4: image pulls not serialized", 37, lambda: im4(pulls_in_parallel(IM4)),
             ("IM-4 b_first_request_after_a_pulled_s", "IM-4 b_waited_minus_queue_time_s")),
    Mutation("IM", "IM-1: image pull back-off doubled", 37, lambda: im1(image_backoff_doubled(IM1)),
             ("IM-1 pull_gap_s[2]",)),
]

REAL_RUNS = [
    ("CL", "CL-1 v1.37.2 recording (1.37)", 37, lambda: cl1_gaps(CL1)),
    ("CL", "CL-1 v1.37.2 recording against the 1.34 model", 34, lambda: cl1_gaps(CL1)),
    ("SC", "SC-1 v1.37.2 stamps", 37, lambda: sc1(SC1)),
    ("PS", "PS-2 v1.37.2 app log", 37, lambda: ps2(PS2_LOG)),
    ("ES", "ES-1 v1.37.2 recording", 37, lambda: es1(ES1)),
    ("OM", "OM-1 v1.37.2 recording", 37, lambda: om1(OM1)),
    ("PR", "PR-1 v1.37.2 probe stamps", 37, lambda: pr1(PR1)),
    ("NF", "NF-2 v1.37.2 renewal and Unknown (ci-s5)", 37, lambda: nf2(NF2["last_renew"], NF2["unknown"])),
    ("NF", "NF-2 v1.37.2 Unknown and both unreachable taints (ci17)", 37, lambda: nf_taints(NF2_TAINTS)),
    ("DR", "DR-2 v1.37.2 kubectl drain transcript (ci-s5)", 37, lambda: dr2(lines_from_text(DR2))),
    ("KB", "KB-1 v1.37.2 times after the delete (ci-s5)", 37, lambda: kb1(KB1)),
    ("JB", "JB-8 v1.37.2 restart counts", 37, lambda: jb8(JB8)),
    ("JB", "JB-2 v1.37.2 pods and status at the deadline", 37, lambda: jb2(JB2)),
    ("JB", "JB-3 v1.37.2 pod failed at its own deadline", 37, lambda: jb3(JB3)),
    ("PB", "PB-2 v1.37.2 killed run's stamps", 37, lambda: pb2(PB2)),
    ("PC", "PC-3 v1.37.2 latency samples", 37, lambda: pc3(PC3)),
    ("RS", "RS-1 v1.37.2 cgroup reads", 37, lambda: rs1(RS1)),
    ("RR", "RR-1 v1.37.2 restart rules", 37, lambda: named("RR-1", RR1)),
    ("ST", "ST-1 v1.37.2 OrderedReady creation", 37, lambda: named("ST-1", ST1)),
    ("ST", "ST-5 v1.37.2 replaced ordinals", 37, lambda: named("ST-5", ST5)),
    ("CJ", "CJ-4 v1.37.2 Jobs at the resume", 37, lambda: cj4(CJ4)),
    ("HK", "HK-1 v1.37.2 hook and b's start", 37, lambda: named("HK-1", HK1)),
    ("HK", "HK-4 v1.37.2 hook running at the delete", 37, lambda: hk4(HK4, HK4_GONE_AFTER_DELETE)),
    ("HP", "HP-1 v1.37.2 HPA without metrics", 37, lambda: named("HP-1", HP1)),
    ("IM", "IM-1 v1.37.2 pull gaps", 37, lambda: im1(IM1)),
    ("IM", "IM-4 v1.37.2 serial pulls", 37, lambda: im4(IM4)),
]
WORKLOAD_FAMILIES = {"RS", "RR", "PB", "HK", "IM", "JB", "CJ", "PC", "ST", "HP"}


@pytest.mark.parametrize("family,name,minor,judging", REAL_RUNS, ids=[r[1] for r in REAL_RUNS])
def test_the_real_recording_holds(family, name, minor, judging, tmp_path):
    outcome = judge(minor, judging(), tmp_path)
    assert outcome.failed == [], outcome.message
    assert outcome.fixed == []  # a known bug of the real run is present (KB-1), not read as fixed


def test_the_transcript_read_back_gives_the_run_its_own_intervals(tmp_path):
    """DR-2's transcript parsed from the report's text (ms) gives the intervals the run judged."""
    j = Judge(MeasurementLog(tmp_path / "m.json"), "t", "r", "v1.37.2", minor=37, cgroup=1)
    dr2(lines_from_text(DR2))(j)
    judged = {k[1]: m["value"] for k, m in CI_S5.items() if k[1].startswith("retry_interval_s[")}
    assert {v.measurement.name: v.measurement.value for v in j.verdicts} == pytest.approx(judged, abs=0.002)


WORKLOAD_RUNS = [r for r in REAL_RUNS if r[0] in WORKLOAD_FAMILIES]


def _same(value: object, recorded: object) -> bool:
    if isinstance(recorded, float) and isinstance(value, (int, float)):
        return abs(value - recorded) <= 0.002  # the details keep times to the ms
    return value == recorded


@pytest.mark.parametrize("family,name,minor,judging", WORKLOAD_RUNS, ids=[r[1] for r in WORKLOAD_RUNS])
def test_the_records_judged_again_give_the_run_its_own_values(family, name, minor, judging, tmp_path):
    """What the workload mutations start from is what the run measured: each value judged again from
    the records (their evidence in ``details``, measured as the scenario does) is the value the run recorded."""
    j = Judge(MeasurementLog(tmp_path / "m.json"), "t", "r", "v1.37.2", minor=minor, cgroup=1)
    judging()(j)
    for v in j.verdicts:
        recorded = [m["value"] for m in WORKLOADS[(v.measurement.case, v.measurement.name)]]
        assert any(_same(v.measurement.value, r) for r in recorded), (v.measurement.case, v.measurement.name, v.measurement.value, recorded)
    assert {(v.measurement.case, v.measurement.name) for v in j.verdicts} <= set(WORKLOADS)


FAILING = [m for m in MUTATIONS if m.expected_failures]
FIXING = [m for m in MUTATIONS if m.expected_fixed]


@pytest.mark.parametrize("mutation", FAILING, ids=[m.name for m in FAILING])
def test_the_mutation_fails_naming_case_value_and_band(mutation, tmp_path):
    outcome = judge(mutation.minor, mutation.judging(), tmp_path)
    for prefix in mutation.expected_failures:
        line = next((f for f in outcome.failed if f.startswith(prefix + ":")), None)
        assert line is not None, f"{mutation.name}: {prefix} not caught; failed: {outcome.failed}"
        assert re.search(r"measured .+, expected .+ within \[.+\]|measured .+, expected .+", line), line
    assert "documented for Kubernetes" in outcome.message and "source:" in outcome.message


@pytest.mark.parametrize("mutation", FIXING, ids=[m.name for m in FIXING])
def test_a_known_bugs_correct_behaviour_reads_bug_fixed_never_a_pass(mutation, tmp_path):
    outcome = judge(mutation.minor, mutation.judging(), tmp_path)
    assert outcome.failed == [], outcome.message
    assert sorted(outcome.fixed) == sorted(mutation.expected_fixed)
    assert outcome.settled is not None and outcome.settled[0] == BUG_FIXED
    assert outcome.settled[1].startswith(BUG_FIXED_PREFIX) and all(n in outcome.settled[1] for n in mutation.expected_fixed)


def _caught(m: Mutation, outcome: Outcome) -> bool:
    return (all(any(f.startswith(p + ":") for f in outcome.failed) for p in m.expected_failures)
            and all(n in outcome.fixed for n in m.expected_fixed))


def test_mutation_table(tmp_path, capsys):
    rows, caught = [], 0
    for m in MUTATIONS:
        outcome = judge(m.minor, m.judging(), tmp_path)
        ok = _caught(m, outcome)
        caught += ok
        seen = outcome.failed + [f"{n}: bug fixed?" for n in outcome.fixed]
        rows.append(f"{m.family:3} {'caught' if ok else 'MISSED':7} {m.name:45} {'; '.join(seen)[:150]}")
    families = sorted({m.family for m in MUTATIONS})
    with capsys.disabled():
        print(f"\nmutations: {len(MUTATIONS)}, caught: {caught}, families: {', '.join(families)}")
        print("\n".join(rows))
    assert caught == len(MUTATIONS)
    assert set(families) >= {"CL", "SC", "PS", "ES", "OM", "PR", "NF", "DR", "KB"}  # issue 29 defect 7
    assert set(families) >= WORKLOAD_FAMILIES  # issue 26: at least one mutation per workload family
