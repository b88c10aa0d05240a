"""Mutation proof of the real registry: recorded real timelines (tests/data), and synthetic
mutations of them that a broken kubelet or a wrong case would produce, are measured with the
scenarios' own functions and judged against the **real** ``REGISTRY``. Every real recording
holds; every mutation FAILS, with a message naming its case, value and band.

The table of mutations and what caught them is printed by ``test_mutation_table``
(``make test`` shows it with ``-rA``); all must be caught.
"""

from __future__ import annotations

import copy
import datetime as dt
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

import pytest

from e2e import documented  # noqa: F401  (registers every family)
from e2e.evidence.ephemeral import eviction
from e2e.judge.measurements import ExpectationFailed, Judge, MeasurementLog
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
    try:
        j.verify()
    except ExpectationFailed as e:
        return Outcome([v.explain().splitlines()[0] for v in j.failures], str(e))
    return Outcome([], "")


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


@dataclass(frozen=True)
class Mutation:
    family: str
    name: str
    minor: int
    judging: Callable[[], Judging]
    expected_failures: tuple[str, ...]  # "CASE name" prefixes that must fail


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
]

REAL_RUNS = [
    ("CL", "CL-1 v1.37.2 recording (1.37)", 37, lambda: cl1_gaps(CL1)),
    ("CL", "CL-1 v1.37.2 recording against the 1.34 model", 34, lambda: cl1_gaps(CL1)),
    ("SC", "SC-1 v1.37.2 stamps", 37, lambda: sc1(SC1)),
    ("PS", "PS-2 v1.37.2 app log", 37, lambda: ps2(PS2_LOG)),
    ("ES", "ES-1 v1.37.2 recording", 37, lambda: es1(ES1)),
    ("OM", "OM-1 v1.37.2 recording", 37, lambda: om1(OM1)),
    ("PR", "PR-1 v1.37.2 probe stamps", 37, lambda: pr1(PR1)),
]


@pytest.mark.parametrize("family,name,minor,judging", REAL_RUNS, ids=[r[1] for r in REAL_RUNS])
def test_the_real_recording_holds(family, name, minor, judging, tmp_path):
    outcome = judge(minor, judging(), tmp_path)
    assert outcome.failed == [], outcome.message


@pytest.mark.parametrize("mutation", MUTATIONS, ids=[m.name for m in MUTATIONS])
def test_the_mutation_fails_naming_case_value_and_band(mutation, tmp_path):
    outcome = judge(mutation.minor, mutation.judging(), tmp_path)
    for prefix in mutation.expected_failures:
        line = next((f for f in outcome.failed if f.startswith(prefix + ":")), None)
        assert line is not None, f"{mutation.name}: {prefix} not caught; failed: {outcome.failed}"
        assert re.search(r"measured .+, expected .+ within \[.+\]|measured .+, expected .+", line), line
    assert "documented for Kubernetes" in outcome.message and "source:" in outcome.message


def test_mutation_table(tmp_path, capsys):
    rows, caught = [], 0
    for m in MUTATIONS:
        outcome = judge(m.minor, m.judging(), tmp_path)
        ok = all(any(f.startswith(p + ":") for f in outcome.failed) for p in m.expected_failures)
        caught += ok
        rows.append(f"{m.family:3} {'caught' if ok else 'MISSED':7} {m.name:45} {'; '.join(outcome.failed)[:150]}")
    families = sorted({m.family for m in MUTATIONS})
    with capsys.disabled():
        print(f"\nmutations: {len(MUTATIONS)}, caught: {caught}, families: {', '.join(families)}")
        print("\n".join(rows))
    assert caught == len(MUTATIONS)
    assert set(families) >= {"CL", "SC", "PS", "ES", "OM", "PR", "NF", "DR", "KB"}  # issue 29 defect 7
