"""Mutation proof of the real registry: recorded real timelines (tests/data), and synthetic
mutations of them that a broken kubelet or a wrong case would produce, are measured with the
scenarios' own functions and judged against the **real** ``REGISTRY``. Every real recording
holds; every mutation FAILS, with a message naming its case, value and band — or, where it shows
a known upstream bug's correct behaviour, reads "bug fixed?" (never a pass).

NF, DR and KB have no recording in tests/data: their real data are the records of a real run's
measurements.json, with the evidence the scenarios kept in ``details`` (tests/data/ci-s5/README.md).

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
from typing import Callable

import pytest

from e2e import documented  # noqa: F401  (registers every family)
from e2e.documented import known_bugs as kb_doc
from e2e.evidence.ephemeral import eviction
from e2e.evidence.kubectl import Line
from e2e.judge.measurements import BUG_FIXED, BUG_FIXED_PREFIX, ExpectationFailed, Judge, MeasurementLog
from e2e.record.recorder import Change, load_changes
from e2e.evidence.stamps import Stamp, event_times, find, first, gap_ms, labelled, parse
from e2e.evidence.stamp_order import expect_order
from e2e.record.timeline import attempts, parse_time, restart_gaps

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
    gaps = restart_gaps(attempts(changes, "crashloop", "app"))
    return values(*(("CL-1", f"restart_gap[{i}]", g) for i, g in enumerate(gaps[:4])))


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
    """SC-1's order and gaps, as test_start_order judges them."""
    def run(j: Judge) -> None:
        expect_order(j, "SC-1", "start_order", stamps, t_ref=stamps[0].at)
        j.expect("SC-1", "sidecar_start_after_init_exit_ms", gap_ms(stamps, "init exit", "sidecar start"))
        j.expect("SC-1", "app_start_after_startup_ok_ms", gap_ms(stamps, "sidecar startup-ok", "app start"))
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
    sig = first(parse(log), "SIGTERM")
    return values(("PS-2", "sigterm_after_delete_s", round(sig.at - t_delete, 3)))


def sigterm_at_delete(log: str) -> str:
    """SIGTERM at the delete itself, as if preStop sleep 5 had not run."""
    sig = first(parse(log), "SIGTERM")
    return log.replace(f"{sig.at:.6f} SIGTERM", f"{PS2_DELETE:.6f} SIGTERM")


# -- ES: ES-1 [single]'s recording and the writer's crossing mark (v1.37.2) -----------------------

ES1 = load_changes(REAL / "es1-single-recording.json")
ES1_CROSSED = event_times(parse((REAL / "es1-single-writer.app.log").read_text()))["crossed"]


def es1(changes: list[Change]) -> Judging:
    ev = eviction(changes, "writer")
    return values(("ES-1", "crossing_to_evicted_event_s", round(ev.event_received_at - ES1_CROSSED, 3)),
                  ("ES-1", "evicted_event_to_failed_s", round(ev.terminal_received_at - ev.event_received_at, 3)))


# -- OM: OM-1's recording (v1.37.2, cgroup v1) ----------------------------------------------------

OM1 = load_changes(REAL / "om1-recording.json")


def om1(changes: list[Change]) -> Judging:
    """Exit code of every ended run (OM-1 exit_code[run=i]) under Always, and the restarts."""
    runs = [r for r in attempts(changes, "oom", "app") if r.finished_at is not None]
    return values(*(("OM-1", f"exit_code[run={i}]", r.exit_code) for i, r in enumerate(runs, start=1)),
                  *(("OM-1", f"restart_gap[{i}]", g) for i, g in enumerate(restart_gaps(attempts(changes, "oom", "app"))[:2])))


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
    start, sigterm = first(stamps, "start"), first(stamps, "sigterm")
    startup = labelled(stamps, "probe:startup")
    return values(("PR-1", "startup_kill_after_start_s[Never]", round(sigterm.at - start.at, 3)),
                  ("PR-1", "startup_probe_failures_before_kill[Never]",
                   len([s for s in startup if s.event == "probe:startup:failure" and s.at <= sigterm.at])))


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
    """Unknown's lastTransitionTime after the last renewTime, as test_kubelet_stopped measures it."""
    return values(("NF-2", "unknown_after_last_renew_s[fast-lifecycle]",
                   round(parse_time(unknown["lastTransitionTime"]) - last_renew, 3)))


def unknown_after(last_renew: float, unknown: dict, after_s: float) -> dict:
    """The controller's Ready=Unknown written ``after_s`` after the last renewal instead of after the
    grace (20 s on fast-lifecycle); the API keeps whole seconds."""
    at = parse_time(unknown["lastTransitionTime"])
    return _shift_obj(unknown, at, int(last_renew + after_s) - at)


# -- DR: DR-2's kubectl drain transcript (max-unavailable-1: one pod retried until the timeout) ----

DR2 = CI_S5[("DR-2", "first_stdout_line[max-unavailable-1]")]["details"]["transcript"]
_TRANSCRIPT_LINE = re.compile(r"^\s*([+-]\d+\.\d{3}) (stdout|stderr) (.*)$")
_RETRY = re.compile(r'^error when evicting pods/"(?P<pod>[^"]+)" -n "[^"]+" \(will retry after 5s\): ')
_EVICTING = re.compile(r"^evicting pod [^/]+/(?P<pod>\S+)$")


def transcript_lines(text: str) -> list[Line]:
    """The lines of a transcript as ``Transcript.to_text`` wrote them (``+s.mmm stream text``, after
    the ``$`` command and ``# started <epoch>`` lines), with their read times (epoch s, ms)."""
    started = float(re.search(r"^# started ([\d.]+)", text, re.M).group(1))
    found = (_TRANSCRIPT_LINE.match(ln) for ln in text.splitlines()[2:])
    return [Line(started + float(m.group(1)), m.group(2), m.group(3)) for m in found if m]


def dr2(lines: list[Line]) -> Judging:
    """The seconds between consecutive "will retry after 5s" lines per pod, as test_drain_against_pdb
    judges them."""
    times: dict[str, list[float]] = {}
    for ln in lines:
        m = _RETRY.match(ln.text) if ln.stream == "stderr" else None
        if m:
            times.setdefault(m.group("pod"), []).append(ln.at)
    return values(*(("DR-2", f"retry_interval_s[max-unavailable-1/{i}/{k}]", round(b - a, 3))
                    for i, pod in enumerate(sorted(times), 1)
                    for k, (a, b) in enumerate(zip(times[pod], times[pod][1:], strict=False), 1)))


def retry_every(lines: list[Line], every_s: float) -> list[Line]:
    """kubectl retrying a refused eviction ``every_s`` after the refusal instead of 5 s: each later
    attempt of the pod (its "evicting pod" and "will retry" lines) earlier by the sleeps it saved."""
    out, refusals = [], 0
    for ln in lines:
        retry, evicting = _RETRY.match(ln.text), _EVICTING.match(ln.text)
        pod = (retry or evicting).group("pod") if (retry or evicting) else None
        shifted = pod is not None and refusals > 0
        out.append(Line(ln.at - refusals * (5 - every_s), ln.stream, ln.text) if shifted else ln)
        refusals += retry is not None
    return sorted(out, key=lambda ln: ln.at)


# -- KB: KB-1's times after the delete (preStop sleep 20 s, the container exits by itself at ~6 s) --

KB1 = {name: CI_S5[("KB-1", name)]["value"]
       for name in ("container_exit_after_delete_s", "api_shows_exit_after_delete_s", "pod_gone_after_delete_s")}


def kb1(times: dict[str, float]) -> Judging:
    return values(*(("KB-1", name, t) for name, t in times.items()))


def hook_ends_at_exit(times: dict[str, float]) -> dict[str, float]:
    """The preStop sleep ending when the container exits (kubernetes#134338 fixed): the API's exit
    and the pod's removal as much earlier as the 20 s sleep outlived the container."""
    saved = kb_doc.KB1_PRESTOP_SLEEP_S - times["container_exit_after_delete_s"]
    return {name: t - saved if name != "container_exit_after_delete_s" else t for name, t in times.items()}


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
    Mutation("OM", "exit 0 with OOMKilled under Always", 37, lambda: om1(exit_zero(OM1)),
             ("OM-1 exit_code[run=1]", "OM-1 exit_code[run=2]")),
    Mutation("PR", "kill before the startup budget", 37, lambda: pr1(killed_before_budget(PR1)),
             ("PR-1 startup_kill_after_start_s[Never]", "PR-1 startup_probe_failures_before_kill[Never]")),
    Mutation("NF", "Ready=Unknown 5 s after the last renewal", 37,
             lambda: nf2(NF2["last_renew"], unknown_after(NF2["last_renew"], NF2["unknown"], 5)),
             ("NF-2 unknown_after_last_renew_s[fast-lifecycle]",)),
    Mutation("DR", "a drain retry every 1 s", 37, lambda: dr2(retry_every(transcript_lines(DR2), 1)),
             tuple(f"DR-2 retry_interval_s[max-unavailable-1/1/{k}]" for k in range(1, 6))),
    Mutation("KB", "the pod gone at the container's exit", 37, lambda: kb1(hook_ends_at_exit(KB1)), (),
             ("KB-1 api_shows_exit_after_delete_s", "KB-1 pod_gone_after_delete_s")),
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
    ("DR", "DR-2 v1.37.2 kubectl drain transcript (ci-s5)", 37, lambda: dr2(transcript_lines(DR2))),
    ("KB", "KB-1 v1.37.2 times after the delete (ci-s5)", 37, lambda: kb1(KB1)),
]


@pytest.mark.parametrize("family,name,minor,judging", REAL_RUNS, ids=[r[1] for r in REAL_RUNS])
def test_the_real_recording_holds(family, name, minor, judging, tmp_path):
    outcome = judge(minor, judging(), tmp_path)
    assert outcome.failed == [], outcome.message
    assert outcome.fixed == []  # a known bug of the real run is present (KB-1), not read as fixed


def test_the_transcript_read_back_gives_the_run_its_own_intervals(tmp_path):
    """DR-2's transcript parsed from the report's text (ms) gives the intervals the run judged."""
    j = Judge(MeasurementLog(tmp_path / "m.json"), "t", "r", "v1.37.2", minor=37, cgroup=1)
    dr2(transcript_lines(DR2))(j)
    judged = {k[1]: m["value"] for k, m in CI_S5.items() if k[1].startswith("retry_interval_s[")}
    assert {v.measurement.name: v.measurement.value for v in j.verdicts} == pytest.approx(judged, abs=0.002)


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
