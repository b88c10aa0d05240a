"""hack/interrupt_check.py (`make interrupt-check`) without a cluster: its variants and how runs
cycle through them, what it counts as left by a run (state files, reports), the row's verdict and
the table — and whole checks against a fake host whose pytest runs create and delete clusters,
namespaces and files on a timetable, and leak them when told to."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from e2e.cluster import freezer
from e2e.faults import registry as registry_faults
from helpers import ROOT, hack_module

ic = hack_module("interrupt_check")

OWNED, KEPT = "ple2e-0wned00001", "ple2e-k3pt000001"


# -- the variants ---------------------------------------------------------------------------------


def test_twenty_runs_stop_every_variant_twice():
    assert len(ic.VARIANTS) <= 10 and len({v.id for v in ic.VARIANTS}) == len(ic.VARIANTS)
    assert set(ic.planned(20).values()) == {2} and len(ic.planned(20)) == len(ic.VARIANTS)
    assert [ic.variant_of(k).id for k in (0, 9, 10, 19)] == ["v1", "v10", "v1", "v10"]
    assert sorted(ic.planned(25).values()) == [2] * 5 + [3] * 5


def test_the_variants_cover_every_ending_the_issue_names():
    """issue 30, "Must show": double Ctrl-C, SIGTERM, with and without xdist, owned / kept /
    --kubeconfig clusters, Ctrl-C in kind create and before the namespace's cleanup is armed."""
    vs = ic.VARIANTS
    for signals in (("SIGINT",), ("SIGINT", "SIGINT"), ("SIGTERM",)):
        assert {v.workers for v in vs if v.signals == signals} == {0, 2}, signals
    assert {v.cluster for v in vs} == {ic.OWNED, ic.KEPT, ic.KUBECONFIG}
    for cluster in (ic.OWNED, ic.KEPT, ic.KUBECONFIG):
        assert len({v.signals for v in vs if v.cluster == cluster}) >= 2, cluster
    assert {v.cluster for v in vs if v.moment == ic.KIND_CREATE} == {ic.OWNED}
    assert {v.cluster for v in vs if v.moment == ic.NAMESPACE} == {ic.KEPT, ic.KUBECONFIG}  # where a namespace outlives the run
    assert {v.target for v in vs if v.signals == ("SIGTERM",)} == {ic.GROUP, ic.PYTEST}
    assert {v.cluster for v in vs if v.moment == ic.FINISH} == {ic.OWNED}


def test_a_run_gets_the_pytest_command_of_its_cluster(tmp_path):
    check = ic.Check(FakeHost(), tmp_path, {"E2E_STATE_DIR": str(tmp_path / "state")},
                     {ic.OWNED: tmp_path / "owned.yaml", ic.KEPT: tmp_path / "kept.yaml"}, {ic.OWNED: OWNED, ic.KEPT: KEPT},
                     random.Random(0))
    by = {v.cluster: ic.command(v, check, tmp_path / "R") for v in ic.VARIANTS if v.workers == 2}
    for cmd in by.values():
        assert cmd[1:6] == ["-m", "pytest", str(ROOT / "scenarios"), "-m", "smoke"]
        assert cmd[cmd.index("-n") + 1] == "2" and cmd[cmd.index("--reports-dir") + 1] == str(tmp_path / "R")
    assert by[ic.OWNED][-2:] == ["--kind-config", str(tmp_path / "owned.yaml")]
    assert by[ic.KEPT][-3:] == ["--kind-config", str(tmp_path / "kept.yaml"), "--keep-cluster"]
    assert by[ic.KUBECONFIG][-2:] == ["--kubeconfig", str(tmp_path / "kept.kubeconfig")]


# -- what a run left --------------------------------------------------------------------------------


def test_leftovers_are_every_file_the_run_made_lock_files_included(tmp_path):
    """issue 41 (6): the check counted clean only because lock files were counted apart; now every
    file a run made and left is a leftover, but for what may stay by design (STAYS)."""
    state = tmp_path / "state"

    def make(*names):
        for name in names:
            (state / name).parent.mkdir(parents=True, exist_ok=True)
            (state / name).write_text("")

    make(f"{KEPT}.json", f"{KEPT}.use", f"{KEPT}.node.turn", "guard/old.sh")  # the kept cluster's, there before
    before = ic.files(state)
    make("runs/run-1.lock", "runs/run-1.left.json", "run-1.node.lock", "run-1.node.turn", f"{OWNED}.use", f"{OWNED}.lock",
         "creating.lock", "create.0.lock", "guard/abc.sh", "cni/def.conflist")
    left, stays = ic.leftovers(state, before)
    assert left == ["create.0.lock", "creating.lock", f"{OWNED}.lock", f"{OWNED}.use", "run-1.node.lock", "run-1.node.turn",
                    "runs/run-1.left.json", "runs/run-1.lock"]
    assert stays == ["cni/def.conflist", "guard/abc.sh"]
    assert ic.leftovers(tmp_path / "none", set()) == ([], [])
    locks = tmp_path / "locks"
    for name in ("egress.lock", "network.use", "network.lock", "other.lock"):
        make(f"../locks/{name}")
    assert ic.host_locks(locks) == ["other.lock"]  # the host's three are the host's


JUNIT = ('<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" errors="{errors}" '
         'failures="{failures}" skipped="{skipped}" tests="{tests}">{cases}</testsuite></testsuites>')


def write_reports(reports: Path, tests: int, cases: int, summary: str | None, failures: int = 0, errors: int = 0,
                  skipped: int = 0) -> None:
    reports.mkdir(parents=True, exist_ok=True)
    (reports / "junit.xml").write_text(JUNIT.format(errors=errors, failures=failures, skipped=skipped, tests=tests,
                                                    cases='<testcase classname="t" name="x"/>' * cases))
    if summary is not None:
        (reports / "summary.md").write_text(f"# Run r\n\n| case | verdict |\n\nTests: {summary}\n\n## AD-1: pass\n")


def test_reports_agree_when_junit_counts_what_the_summary_says(tmp_path):
    # an interrupted test: a testcase that pytest counts in no outcome (issue 30, 1: it was "passed")
    write_reports(tmp_path, tests=3, cases=4, summary="1 failed, 1 interrupted, 1 passed, 1 undocumented", failures=1, skipped=1)
    assert ic.reports_verdict(tmp_path, "", "r") == "ok: 4 tests (1 failed, 1 interrupted, 1 passed, 1 undocumented)"
    write_reports(tmp_path, tests=2, cases=3, summary="3 passed")
    assert ic.reports_verdict(tmp_path, "", "r") == "junit.xml disagrees with summary.md (tests 2 vs 3)"
    (tmp_path / "summary.md").unlink()
    assert ic.reports_verdict(tmp_path, "", "r") == "no summary.md"
    (tmp_path / "junit.xml").write_text("<testsuites><testsuite")
    assert ic.reports_verdict(tmp_path, "", "r").startswith("junit.xml unreadable: ")


def test_no_reports_are_right_only_for_a_run_that_says_no_test_ran(tmp_path):
    assert ic.reports_verdict(tmp_path, "pod-lifecycle-e2e: no test ran: the last run's reports …", "r") == "ok (no test ran)"
    assert ic.reports_verdict(tmp_path, "", "r") == "no junit.xml"
    (tmp_path / ".incoming-r").mkdir()
    assert ic.reports_verdict(tmp_path, "pod-lifecycle-e2e: no test ran", "r") == f"staged reports left in {tmp_path.name}/.incoming-r"


def test_summary_counts_read_the_tests_line():
    assert ic.summary_counts("x\n\nTests: 2 passed, 1 interrupted\n") == {"passed": 2, "interrupted": 1}
    assert ic.summary_counts("Tests: none\n") == {}
    assert ic.summary_counts("no such line") is None


def row(**kw) -> ic.Row:
    return ic.Row(**{"run": 1, "variant": ic.VARIANTS[0], "run_id": "r", "log": "r.log", "hit": True, "signalled": True,
                     "exit": 2, "reports": "ok: 1 tests (1 interrupted)", **kw})


@pytest.mark.parametrize("kw, problem", [
    ({}, None),
    ({"exit": 0}, "exit 0, expected 2"),
    ({"exit": "-9 (SIGKILL)"}, "exit -9 (SIGKILL), expected 2"),
    ({"exit": 0, "after_last_test": True}, None),  # ignored in the session's finish: the tests' outcome
    ({"exit": 2, "after_last_test": True}, None),  # or just before it
    ({"exit": "-2 (SIGINT)", "after_last_test": True, "ended_before_death": True}, None),  # after the session's end
    ({"exit": "-2 (SIGINT)", "ended_before_death": True}, None),  # a second one after the cleanup: died of it, work done
    ({"exit": "-2 (SIGINT)", "after_last_test": True}, "exit -2 (SIGINT), expected 0 or 1 or 2"),
    ({"exit": "-2 (SIGINT)"}, "exit -2 (SIGINT), expected 2"),
    ({"exit": 1, "signalled": False, "hit": False}, None),  # ended before its moment, a test failed
    ({"exit": 2, "signalled": False, "hit": False}, "exit 2, expected 0 or 1"),
    ({"clusters": [OWNED]}, f"leaked {OWNED}"),
    ({"kept_lost": True}, "the kept cluster was deleted"),
    ({"namespaces": [f"{KEPT}/e2e-x"]}, f"leaked namespaces {KEPT}/e2e-x"),
    ({"deleting": 2}, None),  # deleted by the run, still Terminating
    ({"state_left": ["runs/r.left.json"]}, "state files left runs/r.left.json"),
    ({"state_left": ["runs/r.lock"]}, "state files left runs/r.lock"),  # a lock file too (issue 41, 6)
    ({"stays": ["guard/abc.sh"]}, None),  # by design: said under the table
    ({"host_left": ["other.lock"]}, "files left in the host's lock directory other.lock"),
    ({"reports": "no junit.xml"}, "no junit.xml"),
])
def test_a_rows_verdict(kw, problem):
    r = row(**kw)
    assert r.problems() == ([problem] if problem else [])
    assert r.verdict().startswith(problem or "ok")


def test_a_missed_moment_is_said_in_the_verdict():
    assert row(hit=False).verdict() == "ok (moment missed: variant runs again)"


def test_the_table_has_a_row_per_run_and_fails_on_a_problem_or_a_variant_short_of_its_runs():
    variants = ic.VARIANTS[:2]
    rows = [row(run=1, variant=variants[0], exit_after_s=3.2), row(run=2, variant=variants[1], exit_after_s=5.0, deleting=1)]
    text, ok = ic.report(rows, 2, variants)
    lines = text.splitlines()
    assert lines[0].startswith("| run | variant | signals and moment | exit |") and len(lines[0].split(" | ")) == len(ic.COLUMNS)
    assert lines[2].startswith(f"| 1 | {variants[0].label} |") and "| ok |" in lines[2]
    assert "none (1 Terminating)" in lines[3]
    assert "2 runs, 2 stopped at their moment (2 planned), 0 missed it (run again); 0 with a problem" in text
    assert "exit codes: 2 ×2; exit after the first signal: median 4.1 s, max 5.0 s" in text
    assert f"| {variants[1].label} | 1 | 1 | 0 |" in text
    assert ok
    assert not ic.report(rows, 3, variants)[1]  # v1 twice planned, once stopped
    assert not ic.report([rows[0], row(run=2, variant=variants[1], state_left=["x"])], 2, variants)[1]


# -- whole checks against a fake host, on a virtual clock ------------------------------------------


class Clock:
    """The check's time made virtual (its ``time`` module): sleeping moves it on, and the fake runs
    live on it too — whole checks with the real variants' windows, in no time."""

    def __init__(self):
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds

    def strftime(self, fmt: str) -> str:
        return "20260101-000000"


def timetable(owned: bool, workers: int) -> dict[str, float]:
    """Seconds after a smoke run's start (as on a free 2-core host): its run lock; an owned
    cluster's kind config and node container, then its state file; the first namespace; the
    last test reported; the end (kind delete or the namespace sweep)."""
    namespace = 62.0 if owned else 6.0
    last = namespace + (35.0 if workers else 65.0)
    return {"began": 4.0, "node": 6.0, "created": 60.0, "namespace": namespace, "last test": last,
            "end": last + (6.0 if owned else 1.0)}


@dataclass
class Behaviour:
    """What the fake runs leak, and runs that end early (the i-th run started ends at ``ends_s[i]``)."""

    ends_s: tuple[float, ...] = ()
    leave_lock: bool = False  # the run lock stays (a run before issue 41, 6)
    leave_host_file: bool = False
    exit_s: float = 4.0  # after the first signal
    hang: bool = False  # a stopped run never ends
    leak_namespace: bool = False
    leak_cluster: bool = False
    leave_file: bool = False
    interrupted_as_passed: bool = False  # issue 30 (1)


class FakeRun:
    """A pytest run as the fake host plays it, on :func:`timetable`: stopped by a first signal
    before its last test (a later one, or one after its last test, is ignored); at its end it
    deletes what it made, writes its reports and exits."""

    def __init__(self, host: FakeHost, cmd: list[str], env: dict[str, str], log: Path):
        self.host, self.b, self.log, self.clock = host, host.b, log, host.clock
        self.run_id, self.state = env["E2E_RUN_ID"], Path(env["E2E_STATE_DIR"])
        self.reports = Path(cmd[cmd.index("--reports-dir") + 1])
        self.setup = "-k" in cmd  # the kept cluster's set-up run
        self.owned = "--kind-config" in cmd and "--keep-cluster" not in cmd
        self.cluster = OWNED if self.owned else KEPT
        self.times = timetable(self.owned, int(cmd[cmd.index("-n") + 1]))
        i = len(host.runs)
        if i < len(self.b.ends_s):
            self.times["end"] = self.b.ends_s[i]
        if self.setup:
            self.times["end"] = 20.0
        self.pid, self.returncode, self.signals = 1000 + i, None, []
        self.t0 = self.clock.now
        self.end_at: float | None = self.t0 + self.times["end"]
        self.done: set[str] = set()

    def _due(self, step: str) -> bool:
        if step in self.done or self.clock.now - self.t0 < self.times[step] or self.clock.now >= (self.end_at or 1e9):
            return False
        self.done.add(step)
        return True

    def poll(self):
        if self.returncode is not None:
            return self.returncode
        if self._due("began"):
            (self.state / "runs").mkdir(parents=True, exist_ok=True)
            (self.state / "runs" / f"{self.run_id}.lock").write_text("")
            (self.state / "runs" / f"{self.run_id}.left.json").write_text("{}")
            if self.owned:
                (self.state / f"{OWNED}.kind-config.yaml").write_text("kind: Cluster")
        if self.owned and self._due("node"):
            self.host.nodes.add(f"{OWNED}-control-plane")
            self.host.cluster_set.add(OWNED)
            for name in ("creating.lock", "create.0.lock", f"{OWNED}.use", f"{OWNED}.lock", "guard/g1.sh"):
                (self.state / name).parent.mkdir(parents=True, exist_ok=True)
                (self.state / name).write_text("")
            self.host.lock_dir.mkdir(parents=True, exist_ok=True)
            (self.host.lock_dir / "network.use").write_text("")
        if self.owned and self._due("created"):
            for suffix in (".json", ".kubeconfig"):
                (self.state / f"{OWNED}{suffix}").write_text("")
        if not self.setup and self._due("namespace"):
            self.host.ns[(self.cluster, self.run_id)] = [(f"e2e-{self.run_id}", "Active")]
        if self._due("last test"):
            self.log.write_text("..  [100%]\n")
        if self.end_at is not None and self.clock.now >= self.end_at:
            self._end()
        return self.returncode

    def _end(self):
        interrupted = bool(self.signals) and "last test" not in self.done
        if self.setup:
            self.host.cluster_set.add(KEPT)
            self.host.nodes.add(f"{KEPT}-control-plane")
        elif "namespace" in self.done:
            write_reports(self.reports, tests=1 if interrupted else 2, cases=2,
                          summary="2 passed" if self.b.interrupted_as_passed or not interrupted else "1 interrupted, 1 passed")
            if not self.b.leak_namespace:
                self.host.ns[(self.cluster, self.run_id)] = [(f"e2e-{self.run_id}", "Terminating")]
        else:
            self.log.write_text("pod-lifecycle-e2e: no test ran: the last run's reports are left as they were\n")
        if self.owned and not self.b.leak_cluster:
            self.host.cluster_set.discard(OWNED)
            self.host.nodes.discard(f"{OWNED}-control-plane")
            for suffix in (".json", ".kubeconfig", ".kind-config.yaml", ".use", ".lock"):
                (self.state / f"{OWNED}{suffix}").unlink(missing_ok=True)
        for name in ("creating.lock", "create.0.lock"):  # nobody holds them: they go (e2e.plugin.clusters)
            (self.state / name).unlink(missing_ok=True)
        if not self.b.leave_file:
            (self.state / "runs" / f"{self.run_id}.left.json").unlink(missing_ok=True)
        if not self.b.leave_lock:
            (self.state / "runs" / f"{self.run_id}.lock").unlink(missing_ok=True)
        if self.b.leave_host_file:
            (self.host.lock_dir / "network.use.stale").write_text("")
        self.returncode = ic.INTERRUPTED if interrupted else 0

    def got(self, signum: int) -> None:
        self.signals.append(signum)
        if signum == signal.SIGKILL:
            self.returncode = -signal.SIGKILL
        elif len(self.signals) == 1 and "last test" not in self.done:
            self.end_at = None if self.b.hang else self.clock.now + self.b.exit_s

    def wait(self, timeout=None):
        end = self.clock.now + (timeout if timeout is not None else 3600)
        while self.poll() is None:
            if self.clock.now > end:
                raise subprocess.TimeoutExpired("pytest", timeout)
            self.clock.sleep(0.1)
        return self.returncode


class FakeHost:
    """kind, Docker and the API as the check sees them: another user's cluster is there from the start."""

    def __init__(self, b: Behaviour | None = None, clock: Clock | None = None):
        self.b, self.clock = b or Behaviour(), clock or Clock()
        self.lock_dir = ic.HOST_LOCK_DIR  # the host's lock files: the clock fixture's directory
        self.cluster_set = {"ple2e-someone"}
        self.nodes = {"ple2e-someone-control-plane", "registry"}
        self.ns: dict[tuple[str, str], list[tuple[str, str]]] = {}
        self.runs: list[FakeRun] = []
        self.sent: list[tuple[str, str, bool]] = []  # (run id, signal, to the group)
        self.deleted: list[str] = []

    def cluster_name(self, kind_config: Path, env: dict[str, str]) -> str:
        assert kind_config.is_file() and env["E2E_STATE_DIR"]
        return OWNED if "owned" in kind_config.name else KEPT

    def clusters(self):
        return sorted(self.cluster_set)

    def containers(self):
        return sorted(self.nodes)

    def kubeconfig(self, cluster):
        return f"kubeconfig of {cluster}"

    def delete_cluster(self, cluster):
        self.deleted.append(cluster)
        self.cluster_set.discard(cluster)
        self.nodes = {n for n in self.nodes if not n.startswith(cluster + "-")}

    def namespaces(self, kubeconfig, run_id):
        return list(self.ns.get((Path(kubeconfig).read_text().removeprefix("kubeconfig of "), run_id), []))

    def start(self, cmd, env, log):
        log.write_text("")
        self.runs.append(FakeRun(self, cmd, env, log))
        return self.runs[-1]

    def signal(self, proc, signum, group):
        if proc.returncode is not None:
            return False
        self.sent.append((proc.run_id, signal.Signals(signum).name, group))
        proc.got(signum)
        return True


@pytest.fixture
def clock(monkeypatch, tmp_path) -> Clock:
    clock = Clock()
    monkeypatch.setattr(ic, "time", clock)
    monkeypatch.setattr(ic, "HOST_LOCK_DIR", tmp_path / "host-locks")  # never the host's own
    monkeypatch.setenv("E2E_NODE_IMAGE", "kindest/node:v1.37.2")
    return clock


def sent_to(host: FakeHost, run: ic.Row) -> list[tuple[str, bool]]:
    return [(name, group) for run_id, name, group in host.sent if run_id == run.run_id]


def test_twenty_runs_stopped_at_every_moment_leave_nothing(clock, tmp_path):
    host = FakeHost(clock=clock)
    check = ic.prepare(tmp_path, host, random.Random(1))
    assert check.state == tmp_path / "state" and check.names == {ic.OWNED: OWNED, ic.KEPT: KEPT}
    said = []
    rows = ic.run_all(check, 20, ic.VARIANTS, said.append)
    # the real windows on the timetable of smoke runs: every moment comes before the run ends
    assert [r.variant.id for r in rows] == [v.id for v in ic.VARIANTS] * 2
    assert all(r.hit for r in rows), [r.moment for r in rows if not r.hit]
    assert [r.problems() for r in rows] == [[]] * 20
    assert len(said) == 21  # the header, then each row as it is made
    text, ok = ic.report(rows, 20)
    assert ok, text
    by = {r.variant.id: r for r in rows}
    assert "in kind create (ple2e-0wned00001-control-plane up, no state file yet)" in by["v4"].moment
    assert by["v4"].reports == "ok (no test ran)" and by["v4"].exit == 2
    assert by["v5"].after_last_test and by["v5"].exit == 0 and "kind delete under way" in by["v5"].moment
    assert f"as namespace e2e-{by['v7'].run_id} appeared" in by["v7"].moment
    assert "; SIGINT again +" in by["v2"].moment and "during the cleanup" in by["v8"].moment
    assert by["v1"].reports == "ok: 2 tests (1 interrupted, 1 passed)" and by["v1"].exit_after_s == 4.0
    # the first run's node guard stays (every later run finds it there): said why, under the table
    assert rows[0].state_left == [] and rows[0].stays == ["guard/g1.sh"] and by["v1"].stays == []
    assert "| `guard/*` in the state directory | 1 file(s): guard/g1.sh | the node guard" in text
    assert "`network.use` (held shared by every run with a cluster on the network)" in text
    assert sent_to(host, by["v9"]) == [("SIGTERM", False)] and sent_to(host, by["v3"]) == [("SIGTERM", True)]
    assert sent_to(host, by["v8"]) == [("SIGINT", True), ("SIGINT", True)]
    assert sum(r.setup for r in host.runs) == 1  # one kept cluster for every kept and kubeconfig run
    assert (tmp_path / "kept.kubeconfig").read_text() == f"kubeconfig of {KEPT}"
    assert ic.remove_clusters(check) == [KEPT]
    assert host.deleted == [KEPT] and "ple2e-someone" in host.cluster_set


@pytest.mark.parametrize("behaviour, variant, problem", [
    (Behaviour(leak_namespace=True), "v6", f"leaked namespaces {KEPT}/e2e-"),
    (Behaviour(leak_namespace=True), "v10", f"leaked namespaces {KEPT}/e2e-"),
    (Behaviour(leak_cluster=True), "v1", f"leaked {OWNED}; state files left {OWNED}.kind-config.yaml"),
    (Behaviour(leave_file=True), "v9", "state files left runs/"),
    # issue 41 (6): a lock file left behind fails the check (it was counted apart, as make clean's)
    (Behaviour(leave_lock=True), "v1", "state files left runs/interrupt-check-20260101-000000-001.lock"),
    (Behaviour(leave_lock=True), "v10", "state files left runs/interrupt-check-20260101-000000-"),
    (Behaviour(leave_host_file=True), "v4", "files left in the host's lock directory network.use.stale"),
    (Behaviour(interrupted_as_passed=True), "v7", "junit.xml disagrees with summary.md (tests 1 vs 2)"),
    (Behaviour(hang=True), "v2", "exit -9 (SIGKILL), expected"),
])
def test_what_a_run_leaks_is_a_problem_of_its_row(clock, tmp_path, behaviour, variant, problem):
    host = FakeHost(behaviour, clock)
    check = ic.prepare(tmp_path, host, random.Random(1))
    variants = tuple(v for v in ic.VARIANTS if v.id == variant)
    rows = ic.run_all(check, 1, variants, lambda line: None)
    assert len(rows) == 1 and problem in rows[0].verdict()
    assert not ic.report(rows, 1, variants)[1]
    if behaviour.leak_cluster:  # the check's own leaked cluster: deleted before the next run
        assert host.deleted == [OWNED] and OWNED not in host.cluster_set
    if behaviour.hang:
        assert host.sent[-1] == (rows[0].run_id, "SIGKILL", True) and rows[0].exit_after_s > ic.EXIT_TIMEOUT_S


def test_a_run_that_ends_before_its_moment_is_shown_and_its_variant_runs_again(clock, tmp_path):
    host = FakeHost(Behaviour(ends_s=(2.0,)), clock)  # the first run ends before its first test's set-up
    check = ic.prepare(tmp_path, host, random.Random(1))
    variants = tuple(v for v in ic.VARIANTS if v.id in ("v1", "v6"))
    rows = ic.run_all(check, 2, variants, lambda line: None)
    assert [(r.variant.id, r.hit, r.signalled) for r in rows] == [("v1", False, False), ("v1", True, True), ("v6", True, True)]
    assert rows[0].moment == "no signal: ended before its first test's set-up"
    assert rows[0].exit == 0 and rows[0].verdict() == "ok (moment missed: variant runs again)"
    text, ok = ic.report(rows, 2, variants)
    assert ok and "3 runs, 2 stopped at their moment (2 planned), 1 missed it (run again)" in text


def test_a_second_ctrl_c_that_comes_too_late_misses_the_moment(clock, tmp_path):
    host = FakeHost(Behaviour(exit_s=0.5), clock)  # gone before the second Ctrl-C (1-3 s)
    check = ic.prepare(tmp_path, host, random.Random(1))
    rows = ic.run_all(check, 1, tuple(v for v in ic.VARIANTS if v.id == "v2"), lambda line: None)
    assert [r.hit for r in rows] == [False, False] and rows[0].problems() == []
    assert "; no second SIGINT: exited within " in rows[0].moment


def test_the_check_refuses_clusters_of_its_names_that_are_already_there(clock, tmp_path):
    host = FakeHost(clock=clock)
    host.cluster_set.add(f"{KEPT}-1")  # a copy of its kept cluster (e2e.run.plan)
    with pytest.raises(ic.SetupError, match=f"{KEPT}-1 already exist"):
        ic.prepare(tmp_path, host, random.Random(1))


def test_main_runs_in_a_state_directory_of_its_own_and_writes_the_table(clock, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("E2E_STATE_DIR", str(tmp_path / "someone-elses"))
    monkeypatch.setattr(ic.tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(ic, "VARIANTS", tuple(v for v in ic.VARIANTS if v.id in ("v4", "v8")))
    host = FakeHost(clock=clock)
    out = tmp_path / "interrupts.md"
    assert ic.main(["--runs", "2", "--seed", "3", "--out", str(out)], host=host) == 0
    states = {r.state for r in host.runs}
    assert len(states) == 1 and states.pop().parent.name.startswith("interrupt-check-")
    assert not (tmp_path / "someone-elses").exists()
    table = out.read_text()
    assert table == capsys.readouterr().out
    assert "2 runs, 2 stopped at their moment (2 planned)" in table and "work directory" in table
    assert host.deleted == [KEPT]  # its own kept cluster, at the end


def test_main_needs_the_node_image(monkeypatch, capsys):
    monkeypatch.delenv("E2E_NODE_IMAGE", raising=False)
    assert ic.main(["--runs", "1"], host=FakeHost()) == 2
    assert "E2E_NODE_IMAGE is not set" in capsys.readouterr().err


def test_help_names_the_variants():
    out = subprocess.run([sys.executable, str(ROOT / "hack" / "interrupt_check.py"), "--help"], capture_output=True, text=True,
                         check=True).stdout
    assert "--runs RUNS" in out and "v10 kubeconfig · -n 0 · SIGINT to its process group as its namespace appears" in out
    assert "--variants VARIANTS" in out and "f8 foreign (-k test_drain_against_pdb) · -n 0 · SIGKILL" in out


def test_the_clusters_are_named_by_the_suites_own_code_one_pair_per_state_directory(tmp_path, monkeypatch):
    """The check's owned and kept clusters differ, and a check in another state directory has
    other ones (the node guard files live there): it never meets another run's cluster."""
    monkeypatch.setenv("E2E_NODE_IMAGE", "kindest/node:v1.37.2")
    monkeypatch.delenv("E2E_PROFILE_PATCH", raising=False)

    class NoClusters(ic.Host):
        def clusters(self):
            return []

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    one = ic.prepare(tmp_path / "a", NoClusters("kind"), random.Random(0)).names
    two = ic.prepare(tmp_path / "b", NoClusters("kind"), random.Random(0)).names
    assert all(n.startswith("ple2e-") for n in [*one.values(), *two.values()])
    assert len({*one.values(), *two.values()}) == 4


# -- --kubeconfig: a cluster the suite did not make (issue 42 item 5) -------------------------------

def foreign(variant_id: str) -> ic.Variant:
    return next(v for v in ic.FOREIGN_VARIANTS if v.id == variant_id)


def test_the_foreign_variants_cover_every_ending_issue_42_names():
    """A clean end, Ctrl-C once and twice, SIGTERM, SIGKILL followed by make clean KUBECONFIG=…."""
    vs = ic.FOREIGN_VARIANTS
    assert {v.cluster for v in vs} == {ic.FOREIGN}
    assert {v.signals for v in vs} == {(), ("SIGINT",), ("SIGINT", "SIGINT"), ("SIGTERM",), ("SIGKILL",)}
    assert [v.moment for v in vs if not v.signals] == [ic.END]
    assert "then make clean KUBECONFIG=…" in next(v.label for v in vs if v.signals == ("SIGKILL",))
    assert "no signal: a clean end" in vs[0].label


def test_a_foreign_variant_kills_a_run_while_its_node_fault_is_armed(tmp_path):
    """issue 42 item 5: SIGKILL while a node fault is armed, then make clean KUBECONFIG=…, on the
    tests that arm one (NF-5's kubelet restart), whatever the check's own --select."""
    armed = [v for v in ic.FOREIGN_VARIANTS if v.moment == ic.ARMED]
    assert [v.signals for v in armed] == [("SIGKILL",)] and armed[0].select == ("-k", "test_kubelet_restart and not sigkill")
    assert "while a node fault's undo is armed on a worker, then make clean KUBECONFIG=…" in armed[0].label
    check = ic.Check(FakeHost(), tmp_path, {"E2E_STATE_DIR": str(tmp_path / "state")}, {}, {}, random.Random(0),
                     kubeconfig=tmp_path / "k", select=("-m", "smoke"))
    cmd = ic.command(armed[0], check, tmp_path / "R")
    assert cmd[3:7] == [str(ROOT / "scenarios"), "-k", "test_kubelet_restart and not sigkill", "-q"] and "smoke" not in cmd


def test_a_foreign_run_uses_the_kubeconfig_the_node_agent_and_its_selection(tmp_path):
    check = ic.Check(FakeHost(), tmp_path, {"E2E_STATE_DIR": str(tmp_path / "state")}, {}, {}, random.Random(0),
                     kubeconfig=tmp_path / "k", select=("-k", "qos"), agent_args=("--node-selector", "zone=a"))
    cmd = ic.command(ic.FOREIGN_VARIANTS[2], check, tmp_path / "R")
    assert cmd[1:6] == ["-m", "pytest", str(ROOT / "scenarios"), "-k", "qos"] and "smoke" not in cmd
    assert cmd[-5:] == ["--kubeconfig", str(tmp_path / "k"), "--node-agent", "--node-selector", "zone=a"]
    assert cmd[cmd.index("-n") + 1] == "2"


@pytest.mark.parametrize("kw, problem", [
    ({"exit": "-9 (SIGKILL)", "clean": "exit 0 (3 s; 1 armed undo(s) fired)"}, None),
    ({"exit": 2, "clean": "exit 0 (3 s; 0 armed undo(s) fired)"}, "exit 2, expected -9"),
    ({"exit": "-9 (SIGKILL)", "clean": "exit 1 (630 s; 0 armed undo(s) fired)"},
     "make clean KUBECONFIG=…: exit 1 (630 s; 0 armed undo(s) fired)"),
    ({"exit": "-9 (SIGKILL)", "clean": "exit 0 (1 s)", "on_nodes": ["w1: ple2e-undo-kubelet-stop-1.timer active"]},
     "left on the nodes: w1: ple2e-undo-kubelet-stop-1.timer active"),
])
def test_a_foreign_rows_verdict(kw, problem):
    r = row(variant=ic.FOREIGN_VARIANTS[4], **kw)
    assert r.problems() == ([problem] if problem else [])


def test_the_foreign_table_shows_the_clean_and_what_is_left_on_the_workers():
    vs = ic.FOREIGN_VARIANTS
    rows = [row(run=1, variant=vs[0], signalled=False, exit=0, moment="no signal: ended after 30.0 s"),
            row(run=2, variant=vs[4], exit="-9 (SIGKILL)", clean="exit 0 (2 s; 1 armed undo(s) fired)",
                reports="ok: not judged (SIGKILL: the run had no finish)", exit_after_s=0.1),
            row(run=3, variant=vs[1], on_nodes=["w1: 2 iptables rules pod-lifecycle-e2e-partition"])]
    text, ok = ic.report(rows, 2, vs[:2] + vs[4:])
    lines = text.splitlines()
    assert lines[0] == ic.table_line(list(ic.FOREIGN_COLUMNS))
    assert "| exit 0 (2 s; 1 armed undo(s) fired) | none | none |" in lines[3]
    assert "left on the nodes: w1: 2 iptables rules pod-lifecycle-e2e-partition" in lines[4]
    assert "; 1 things left on the workers or agents" in text and not ok


def test_a_foreign_check_runs_every_ending_and_cleans_after_sigkill(clock, tmp_path, monkeypatch):
    host = FakeHost(clock=clock)
    kubeconfig = tmp_path / "foreign.kubeconfig"
    kubeconfig.write_text(f"kubeconfig of {KEPT}")  # the fake runs' namespaces are the "kept" cluster's
    check = ic.Check(host, tmp_path, {**os.environ, "E2E_STATE_DIR": str(tmp_path / "state")}, {}, {},
                     random.Random(1), kubeconfig=kubeconfig)
    cleaned, looked, unit = [], [], "ple2e-undo-kubelet-restart-1a2b3c4d"
    watch = FakeNodes(nodes=("w1",))  # NF-5 arms its undo 5 s into the run; it stays armed once the run is killed
    watch.units_of = lambda node: ({f"{unit}.timer": "active"} if host.runs[-1].returncode == -signal.SIGKILL
                                   or clock.now - host.runs[-1].t0 >= 5 else {})
    host.agent = lambda check, name: watch

    def clean_after_kill(check, i):  # as make clean KUBECONFIG=… does: the dead run's namespace and files go
        run = host.runs[-1]
        cleaned.append(run.run_id)
        host.ns[(KEPT, run.run_id)] = [(name, "Terminating") for name, _ in host.ns.get((KEPT, run.run_id), [])]
        for path in (check.state / "runs").glob(f"{run.run_id}.*"):
            path.unlink()
        fired = [("w1", unit)] if run.run_id.endswith("-006") else []
        return f"exit 0 (2 s; {len(fired)} armed undo(s) fired)", fired

    monkeypatch.setattr(ic, "clean_after_kill", clean_after_kill)
    monkeypatch.setattr(ic, "on_workers", lambda check, i, fired=(): looked.append(i) or
                        ([], [f"{n}: {u} ran 2026-12-06T18:31:02 Started {u}.service" for n, u in fired]))
    rows = ic.run_all(check, 6, ic.FOREIGN_VARIANTS, lambda line: None)
    assert [r.variant.id for r in rows] == ["f1", "f2", "f3", "f4", "f5", "f6"]
    assert [r.problems() for r in rows] == [[]] * 6, [r.verdict() for r in rows]
    by = {r.variant.id: r for r in rows}
    assert by["f1"].moment.startswith("no signal: ended after") and by["f1"].exit == 0 and not by["f1"].signalled
    assert sent_to(host, by["f5"]) == [("SIGKILL", True)] and by["f5"].exit == "-9 (SIGKILL)"
    assert cleaned == [by["f5"].run_id, by["f6"].run_id] and by["f5"].clean.startswith("exit 0")
    assert by["f5"].reports == "ok: not judged (SIGKILL: the run had no finish)"
    assert sent_to(host, by["f6"]) == [("SIGKILL", True)] and by["f6"].hit and watch.closed
    assert f"after w1: {unit}.timer was seen armed" in by["f6"].moment and by["f6"].fired == [("w1", unit)]
    assert f"1 armed undo(s) fired): w1: {unit} ran 2026-12-06T18:31:02" in by["f6"].foreign_cells()[5]
    assert looked == [1, 2, 3, 4, 5, 6] and host.deleted == []  # no kind cluster touched
    text, ok = ic.report(rows, 6, ic.FOREIGN_VARIANTS)
    assert ok, text


def test_a_kill_after_the_run_disarmed_its_undo_misses_the_armed_moment(clock, tmp_path, monkeypatch):
    host = FakeHost(clock=clock)
    kubeconfig = tmp_path / "foreign.kubeconfig"
    kubeconfig.write_text(f"kubeconfig of {KEPT}")
    check = ic.Check(host, tmp_path, {**os.environ, "E2E_STATE_DIR": str(tmp_path / "state")}, {}, {},
                     random.Random(1), kubeconfig=kubeconfig)
    host.agent = lambda check, name: FakeNodes(units={"w1": {"ple2e-undo-x-1.timer": "active"}})
    monkeypatch.setattr(ic, "clean_after_kill", lambda check, i: ("exit 0 (2 s; 0 armed undo(s) fired)", []))
    monkeypatch.setattr(ic, "on_workers", lambda check, i, fired=(): ([], []))
    r = ic.one_run(check, 1, foreign('f6'))
    assert r.signalled and not r.hit and r.problems() == []
    assert r.moment.endswith("; no armed undo left to fire: it was no longer armed at the kill")


# -- what the look sees on the workers, through a fake agent ----------------------------------------


class FakeNodes:
    """The check's agent on fake workers: ``units`` ({node: {unit: state}}), partition rules per
    family, services' states, nodes out of reach, the journal's lines per unit, Ready per node."""

    name = "agent"

    def __init__(self, nodes=("w1", "w2"), units=None, rules=None, services=None, unreachable=(), journal=None, ready=None,
                 frozen=None, registries=()):
        self.nodes, self.units, self.rules = list(nodes), units or {}, rules or {}
        # IM registry pods: (namespace, name, node, deleting, POD_STATE_SCRIPT's output, POD_FREEZE_SCRIPT state's)
        self.registries = list(registries)
        self.frozen = frozen or {}  # {node: [e2e.cluster.freezer state lines]}; its thaw clears them
        self.services, self.unreachable, self.journal = services or {}, set(unreachable), journal or {}
        self.ready = ready or {}
        self.namespace = "ple2e-agent-interrupt-check-20260101-000000-look-1"
        self.kube = self
        self.core = self
        self.closed = False

    def workers(self):
        return self.nodes

    def units_of(self, node):
        return self.units.get(node, {})

    def exec(self, node, argv, timeout=30):
        from e2e.cluster.kube import ExecResult
        from e2e.cluster.nodeaccess import LIST_UNITS

        if node in self.unreachable:
            raise ic.NodeUnreachable(f"agent exec {node}: ApiRefused: kubelet down")
        argv = list(argv)
        if argv == list(LIST_UNITS):
            out = "".join(f"{u} loaded {s} x\n" for u, s in self.units_of(node).items())
        elif argv[:2] == ["sh", "-c"] and "iptables-save" in argv[2]:
            assert ic.PARTITION_COMMENT in argv[2] and "ip6tables-save" in argv[2]
            out = "".join(f"{f} {self.rules.get((node, f), 0)}\n" for f in ("iptables", "ip6tables"))
        elif argv[:2] == ["sh", "-c"] and "systemctl is-active" in argv[2]:
            out = "".join(self.services.get((node, s), "active") + "\n" for s in ic.NODE_SERVICES)
        elif argv[0] == "journalctl":
            out = self.journal.get(argv[-1], "")
        elif argv[:2] == ["sh", "-c"] and "reset-failed" in argv[2]:  # a clean's sweep (sweep_units)
            out = ""
        elif tuple(argv) == freezer.argv("state"):
            out = "".join(f"{line}\n" for line in self.frozen.get(node, []))
        elif tuple(argv) == freezer.argv("thaw"):
            self.frozen.pop(node, None)
            out = "thawed\n"
        elif argv[:2] == ["sh", "-c"] and "crictl inspect" in argv[2]:
            pid = next(i for i, r in enumerate(self.registries, 100) if r[2] == node and f"pod.name={r[1]} " in argv[2])
            out = json.dumps({"info": {"pid": pid}})
        elif argv[:3] == ["sh", "-c", registry_faults.POD_STATE_SCRIPT]:
            out = self.registries[int(argv[4]) - 100][4]
        elif argv[:3] == ["sh", "-c", registry_faults.POD_FREEZE_SCRIPT] and argv[5] == "state":
            out = self.registries[int(argv[4]) - 100][5]
        else:
            raise AssertionError(argv)
        return ExecResult(0, out, "")

    def list_pod_for_all_namespaces(self, label_selector, _request_timeout=None):
        from types import SimpleNamespace as NS

        assert label_selector == "pod-lifecycle-e2e/registry"
        return NS(items=[NS(metadata=NS(namespace=ns, name=n, deletion_timestamp="2026-12-06T22:00:00Z" if deleting else None),
                            spec=NS(node_name=node)) for ns, n, node, deleting, _, _ in self.registries])

    def close(self):
        self.closed = True

    def read_node(self, node, _request_timeout=None):
        from types import SimpleNamespace as NS

        status, reason = self.ready.get(node, ("True", "KubeletReady"))
        return NS(status=NS(conditions=[NS(type="MemoryPressure", status="False", reason="x"),
                                        NS(type="Ready", status=status, reason=reason)]))


def test_a_clean_worker_leaves_nothing_to_see():
    assert ic.left_on_workers(FakeNodes(), FakeNodes()) == ([], [])


@pytest.mark.parametrize("nodes, left", [
    (FakeNodes(units={"w1": {"ple2e-undo-kubelet-restart-1a2b3c4d.timer": "active"}}),
     ["w1: ple2e-undo-kubelet-restart-1a2b3c4d.timer active"]),
    # the partition cuts IPv6 too (e2e.faults.node): a rule of that family alone is a leftover
    (FakeNodes(rules={("w2", "ip6tables"): 2}), [f"w2: 2 ip6tables rules {ic.PARTITION_COMMENT}"]),
    (FakeNodes(rules={("w1", "iptables"): 1}), [f"w1: 1 iptables rules {ic.PARTITION_COMMENT}"]),
    (FakeNodes(services={("w2", "containerd"): "inactive"}), ["w2: containerd inactive"]),
    (FakeNodes(ready={"w1": ("False", "KubeletNotReady")}), ["w1: Ready=False (KubeletNotReady)"]),
    # a stopped kubelet cuts the agent's exec: the node is not looked at, which is a leftover too
    (FakeNodes(unreachable={"w2"}, ready={"w2": ("Unknown", "NodeStatusUnknown")}),
     ["w2: not looked at (agent exec w2: ApiRefused: kubelet down)", "w2: Ready=Unknown (NodeStatusUnknown)"]),
])
def test_every_class_a_run_can_leave_on_a_worker_is_seen(nodes, left):
    assert ic.left_on_workers(nodes, nodes) == (left, [])


FROZEN = ["/sys/fs/cgroup/freezer/ple2e-freeze FROZEN (5 processes)",
          "/sys/fs/cgroup/freezer/kubelet.slice/kubelet-kubepods.slice FROZEN"]


def test_a_registry_fault_left_in_a_registry_pod_is_seen_unless_the_pod_is_being_deleted():
    """A run killed in an IM registry fault on a --kubeconfig cluster leaves it inside its registry
    pod: the stop's DROP, a throttle's qdisc, a freeze; a pod being deleted takes it with it."""
    thawed, frozen = "/sys/fs/cgroup/freezer/kubepods/p1/c1 THAWED", "/sys/fs/cgroup/freezer/kubepods/p2/c2 FROZEN"
    nodes = FakeNodes(registries=[
        ("ple2e-im-1", "ple2e-registry-a1", "w1", False, "network dark (iptables DROP ple2e-registry-stop)\n", thawed),
        ("ple2e-im-1", "ple2e-registry-b2", "w2", False, "throttled (tbf qdisc on eth0)\n", frozen),
        ("ple2e-im-2", "ple2e-registry-c3", "w2", True, "network dark (iptables DROP ple2e-registry-stop)\n", frozen),
        ("ple2e-im-3", "ple2e-registry-d4", "w1", False, "", thawed)])
    assert ic.left_on_workers(nodes, nodes) == ([
        "w1: registry pod ple2e-im-1/ple2e-registry-a1: network dark (iptables DROP ple2e-registry-stop)",
        "w2: registry pod ple2e-im-1/ple2e-registry-b2: throttled (tbf qdisc on eth0)",
        f"w2: registry pod ple2e-im-1/ple2e-registry-b2: frozen ({frozen})"], [])


def test_a_node_pause_left_frozen_is_seen_and_a_clean_thaws_it():
    from e2e.cluster.nodeaccess import sweep_units

    nodes = FakeNodes(frozen={"w2": list(FROZEN)})
    assert ic.left_on_workers(nodes, nodes) == ([f"w2: {line}" for line in FROZEN], [])
    done, left = sweep_units(nodes, "w2")
    assert done == [f"w2: {line} thawed (a node pause of a dead run)" for line in FROZEN] and left == []
    assert ic.left_on_workers(nodes, nodes) == ([], [])


def test_a_freeze_the_thaw_cannot_undo_is_left():
    from e2e.cluster.nodeaccess import sweep_units

    nodes = FakeNodes(frozen={"w1": FROZEN[:1]})
    plain = nodes.exec
    nodes.exec = lambda node, argv, timeout=30: plain(node, argv) if tuple(argv) != freezer.argv("thaw") else \
        __import__("e2e.cluster.kube", fromlist=["ExecResult"]).ExecResult(1, "", f"still frozen: {FROZEN[0]}")
    done, left = sweep_units(nodes, "w1")
    assert done == [] and left == [f"w1: {FROZEN[0]}"]


def test_the_undos_a_clean_fired_show_with_their_node_time():
    from e2e.cluster.nodeaccess import sweep_units

    unit = "ple2e-undo-kubelet-restart-1a2b3c4d"
    swept = FakeNodes(units={"w1": {f"{unit}.timer": "active"}})
    swept.exec = lambda node, argv, timeout=30: FakeNodes.exec(swept, node, argv) if argv[0] == "systemctl" and \
        argv[1] == "list-units" else __import__("e2e.cluster.kube", fromlist=["ExecResult"]).ExecResult(0, "", "")
    done, _ = sweep_units(swept, "w1")
    out = "\n".join(f"removing {line}" for line in done) + "\nnode w1: Ready=True (KubeletReady)\n"  # as e2e.cli.clean prints
    fired = ic.fired_by_clean(out)
    assert fired == [("w1", unit)]
    line = "2026-12-06T18:31:02.123456+00:00 pod-lifecycle-foreign-worker systemd[1]: Started ple2e-undo-kubelet-restart-1a2b3c4d.service."
    nodes = FakeNodes(journal={f"{unit}.service": line + "\nmore\n"})
    assert ic.left_on_workers(nodes, nodes, fired) == ([], [f"w1: {unit} ran {line}"])
    nodes = FakeNodes()
    assert ic.left_on_workers(nodes, nodes, fired) == ([], [f"w1: {unit} not in the journal"])


def test_an_undo_fired_but_not_seen_running_is_a_problem_of_its_row():
    fired = [("w1", "ple2e-undo-kubelet-restart-1a2b3c4d")]
    kw = {"variant": foreign('f6'), "exit": "-9 (SIGKILL)", "clean": "exit 0 (3 s; 1 armed undo(s) fired)", "fired": fired}
    assert row(**kw, undo_ran=["w1: ple2e-undo-kubelet-restart-1a2b3c4d ran 2026-12-06T18:31:02 … Started"]).problems() == []
    assert row(**kw, undo_ran=["w1: ple2e-undo-kubelet-restart-1a2b3c4d not in the journal"]).problems() == [
        "fired undo not seen running on its node: w1: ple2e-undo-kubelet-restart-1a2b3c4d not in the journal"]
    assert row(**kw).problems() == ["fired undo not seen running on its node: not looked at"]


def test_armed_undos_are_the_active_undo_timers_of_the_workers_that_answer():
    nodes = FakeNodes(units={"w1": {"ple2e-undo-a-1.timer": "active", "ple2e-undo-a-1.service": "inactive",
                                    "ple2e-inject-a-2.timer": "active", "ple2e-undo-b-3.timer": "failed"}},
                      unreachable={"w2"})
    assert ic.armed_undos(nodes) == ["w1: ple2e-undo-a-1.timer"]


class AgentsApi:
    """list_namespace / list_pod_for_all_namespaces of a fake API: ``namespaces`` {name: (phase, labels)},
    ``pods`` [(namespace, name, deleting)]."""

    def __init__(self, namespaces, pods):
        from types import SimpleNamespace as NS

        self.core = self
        self._ns = [NS(metadata=NS(name=n, labels=labels), status=NS(phase=phase)) for n, (phase, labels) in namespaces.items()]
        self._pods = [NS(metadata=NS(namespace=ns, name=name, deletion_timestamp="t" if deleting else None))
                      for ns, name, deleting in pods]

    def list_namespace(self, _request_timeout=None):
        return type("L", (), {"items": self._ns})

    def list_pod_for_all_namespaces(self, label_selector, _request_timeout=None):
        assert label_selector == ic.AGENT_LABEL
        return type("L", (), {"items": self._pods})


def test_agent_namespaces_and_pods_left_by_anyone_are_seen_but_those_of_the_run_and_the_look():
    own = ("ple2e-agent-look-1", "ple2e-agent-run-1")
    api = AgentsApi({"ple2e-agent-look-1": ("Terminating", {}), "ple2e-agent-run-1": ("Active", {}),
                     "ple2e-agent-old-look-7": ("Active", {}), "ple2e-agent-gone": ("Terminating", {}),
                     "renamed": ("Active", {ic.AGENT_LABEL: "1"}), "default": ("Active", {}), "e2e-x": ("Active", {})},
                    [("ple2e-agent-old-look-7", "agent-w1", False), ("ple2e-agent-gone", "agent-w1", False),
                     ("ple2e-agent-run-1", "agent-w1", False), ("e2e-x", "agent-w2", False), ("e2e-x", "agent-w3", True)])
    assert ic.stray_agents(api, own) == ["namespace ple2e-agent-old-look-7 Active", "namespace renamed Active",
                                         "pod ple2e-agent-old-look-7/agent-w1", "pod e2e-x/agent-w2"]


def test_the_look_closes_its_agent_and_adds_the_stray_agents(tmp_path, monkeypatch):
    nodes = FakeNodes(rules={("w1", "ip6tables"): 1})
    host = FakeHost()
    host.agent = lambda check, name: nodes
    check = ic.Check(host, tmp_path, {"E2E_STATE_DIR": str(tmp_path / "state")}, {}, {}, random.Random(0), stamp="S",
                     kubeconfig=tmp_path / "k")
    seen = []
    monkeypatch.setattr(ic, "stray_agents", lambda kube, own: seen.append(own) or ["namespace ple2e-agent-x Active"])
    monkeypatch.setattr(ic, "cordons_left", lambda kube, workers: [f"node {workers[0]}: cordoned (spec.unschedulable)"])
    left, ran = ic.on_workers(check, 3)
    assert left == [f"w1: 1 ip6tables rules {ic.PARTITION_COMMENT}", "namespace ple2e-agent-x Active",
                    "node w1: cordoned (spec.unschedulable)"] and ran == []
    assert nodes.closed and seen == [(nodes.namespace, "ple2e-agent-interrupt-check-s-003")]


class NodesApi:
    """list_node of a fake API: ``nodes`` [(name, unschedulable, annotations)]."""

    def __init__(self, nodes):
        from types import SimpleNamespace as NS

        self.core = self
        self._nodes = [NS(metadata=NS(name=n, annotations=a), spec=NS(unschedulable=u)) for n, u, a in nodes]

    def list_node(self, _request_timeout=None):
        return type("L", (), {"items": self._nodes})


def test_a_node_a_killed_runs_drain_left_cordoned_or_marked_is_seen():
    """DR-2's kubectl drain cordons a worker; the run's mark names it (e2e.cluster.cordon)."""
    from e2e.cluster.cordon import CORDONED_BY

    api = NodesApi([("cp", None, None), ("w1", True, {CORDONED_BY: "run-7"}), ("w2", None, {CORDONED_BY: "run-8"}),
                    ("w3", True, {}), ("w4", False, {"other": "x"}), ("cp2", True, None)])
    assert ic.cordons_left(api, ["w1", "w2", "w3", "w4"]) == [
        f"node w1: cordon mark {CORDONED_BY}=run-7 (cordoned)", f"node w2: cordon mark {CORDONED_BY}=run-8",
        "node w3: cordoned (spec.unschedulable)"]  # cp2: not a node a run may cordon (no agent there)
    assert ic.cordons_left(NodesApi([("w1", False, None)]), ["w1"]) == []


# -- f7-f10: killed or stopped while a worker is frozen (NF-4) or cordoned (DR-2) -------------------

def test_the_frozen_and_cordoned_variants_run_the_tests_that_make_that_moment(tmp_path):
    check = ic.Check(FakeHost(), tmp_path, {"E2E_STATE_DIR": str(tmp_path / "state")}, {}, {}, random.Random(0),
                     kubeconfig=tmp_path / "k", select=("-m", "smoke"))
    assert [(v.id, v.signals, v.moment) for v in ic.FOREIGN_VARIANTS[6:]] == [
        ("f7", ("SIGKILL",), ic.FROZEN), ("f8", ("SIGKILL",), ic.CORDONED),
        ("f9", ("SIGINT",), ic.FROZEN), ("f10", ("SIGINT",), ic.CORDONED)]
    assert ic.command(foreign("f7"), check, tmp_path / "R")[3:6] == [str(ROOT / "scenarios"), "-k", "test_worker_lost and fast"]
    assert ic.command(foreign("f8"), check, tmp_path / "R")[3:6] == [str(ROOT / "scenarios"), "-k", "test_drain_against_pdb"]
    assert "while a worker is frozen (NF-4's node pause), then make clean KUBECONFIG=…" in foreign("f7").label
    assert foreign("f10").label.endswith("SIGINT to its process group while a worker is cordoned (DR-2's drain)")


def test_variants_are_picked_by_id_and_an_unknown_one_is_refused_before_anything_runs(capsys):
    assert [v.id for v in ic.picked(ic.FOREIGN_VARIANTS, "f8, f7")] == ["f7", "f8"]
    assert ic.picked(ic.VARIANTS, None) == ic.VARIANTS
    with pytest.raises(ValueError, match="no variant f11, v1 among f1, f2"):
        ic.picked(ic.FOREIGN_VARIANTS, "f7,f11,v1")
    with pytest.raises(SystemExit) as e:
        ic.main(["--kubeconfig", "/nonexistent", "--variants", "f77"], host=FakeHost())
    assert e.value.code == 2 and "--variants 'f77': no variant f77 among f1" in capsys.readouterr().err


def test_planned_runs_cycle_through_the_picked_variants_only():
    vs = ic.picked(ic.FOREIGN_VARIANTS, "f7,f8")
    assert ic.planned(4, vs) == {"f7": 2, "f8": 2}


def foreign_check(tmp_path, clock):
    host = FakeHost(clock=clock)
    kubeconfig = tmp_path / "foreign.kubeconfig"
    kubeconfig.write_text(f"kubeconfig of {KEPT}")
    return host, ic.Check(host, tmp_path, {**os.environ, "E2E_STATE_DIR": str(tmp_path / "state")}, {}, {},
                          random.Random(1), kubeconfig=kubeconfig)


def cleaned(check, text: str) -> tuple[str, list]:
    """A clean after a kill, as far as the state directory goes: the dead run's files go."""
    for path in (check.state / "runs").glob("*"):
        path.unlink()
    return text, []


@pytest.mark.parametrize("frozen, clean", [
    (True, "exit 0 (70 s; 0 armed undo(s) fired; waited for w2 (out of reach))"),
    (True, "exit 0 (41 s; 0 armed undo(s) fired)"),  # its exec into w2 hung until the thaw fired (foreign run 2)
    (False, None),
])
def test_a_kill_while_a_worker_is_frozen(clock, tmp_path, monkeypatch, frozen, clean):
    """f7: NF-4 freezes w2 2 s into the run (after arming its thaw: the frozen node lists no units,
    its agent answers no exec); the check kills once w2 did not answer twice, then the clean waits for w2."""
    host, check = foreign_check(tmp_path, clock)
    watch = FakeNodes(nodes=("w1", "w2"))
    probes = []

    def exec_(node, argv, timeout=30):
        assert list(argv) == ["true"] and timeout == ic.FROZEN_PROBE_S
        probes.append((node, clock.now - host.runs[-1].t0))
        if node == "w2" and frozen and clock.now - host.runs[-1].t0 >= 2:
            clock.sleep(timeout)
            raise ic.NodeUnreachable(f"agent exec {node}: ExecError: still running after {timeout:g} s")
        from e2e.cluster.kube import ExecResult
        return ExecResult(0, "", "")

    watch.exec = exec_
    host.agent = lambda check, name: watch
    monkeypatch.setattr(ic, "clean_after_kill", lambda check, i: cleaned(check, clean))
    monkeypatch.setattr(ic, "on_workers", lambda check, i, fired=(): ([], []))
    r = ic.one_run(check, 1, foreign("f7"))
    assert watch.closed
    if not frozen:
        assert not r.signalled and not r.hit and r.moment == "no signal: ended before a worker froze"
        return
    assert r.signalled and sent_to(host, r) == [("SIGKILL", True)] and r.problems() == []
    assert "after w2 answered no exec within 5 s twice: frozen" in r.moment
    assert [n for n, t in probes if n == "w2" and t >= 2] == ["w2", "w2"]  # one unanswered probe is not enough
    assert r.hit and r.clean == clean


def test_a_probe_that_hangs_past_its_time_is_no_answer():
    """On a frozen node the exec's websocket connect can hang until the thaw (no timeout of its own):
    the probe gives up after its time whatever the exec does."""
    import threading

    release = threading.Event()
    nodes = FakeNodes(nodes=("w1",))
    nodes.exec = lambda node, argv, timeout=30: release.wait(30) and __import__(
        "e2e.cluster.kube", fromlist=["ExecResult"]).ExecResult(0, "", "")
    try:
        assert ic.answers(nodes, "w1", 0.2) is False
    finally:
        release.set()
    nodes.exec = lambda node, argv, timeout=30: __import__("e2e.cluster.kube", fromlist=["ExecResult"]).ExecResult(0, "", "")
    assert ic.answers(nodes, "w1", 5) is True


class CordonApi(FakeNodes):
    """A fake agent whose API has nodes: ``cordons`` {node: run id} (cordoned and marked)."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.cordons: dict[str, str] = {}

    def list_node(self, _request_timeout=None):
        from types import SimpleNamespace as NS

        return type("L", (), {"items": [NS(metadata=NS(name=n, annotations={ic.CORDONED_BY: self.cordons[n]}
                                                        if n in self.cordons else {}),
                                           spec=NS(unschedulable=n in self.cordons)) for n in self.nodes]})


@pytest.mark.parametrize("clean_uncordons", [True, False])
def test_a_kill_while_a_worker_is_cordoned_then_the_clean_and_the_look(clock, tmp_path, monkeypatch, clean_uncordons):
    """f8: DR-2 cordons w1 5 s into the run and would uncordon it 10 s later; killed in between,
    w1 stays cordoned until the clean uncordons it. A clean that does not is seen by the look."""
    host, check = foreign_check(tmp_path, clock)
    api = CordonApi(nodes=("w1", "w2"))
    host.agent = lambda check, name: api
    host.cordoned_by = lambda kubeconfig, run_id: [n for n, run in api.cordons.items() if run == run_id]

    plain = FakeRun.poll

    def poll(run):  # DR-2's drain: cordoned from 5 s to 15 s into the run (a -k run ends at 20 s), unless killed first
        if run.returncode is None and 5 <= clock.now - run.t0 < 15:
            api.cordons["w1"] = run.run_id
        elif run.returncode is None:
            api.cordons.pop("w1", None)
        return plain(run)

    monkeypatch.setattr(FakeRun, "poll", poll)

    def clean_after_kill(check, i):
        if not clean_uncordons:
            return cleaned(check, "exit 0 (2 s; 0 armed undo(s) fired)")
        run = api.cordons.pop("w1")
        return cleaned(check, f"exit 0 (2 s; 0 armed undo(s) fired; uncordoned w1 (run {run}))")

    monkeypatch.setattr(ic, "clean_after_kill", clean_after_kill)
    monkeypatch.setattr(ic, "stray_agents", lambda kube, own: [])
    r = ic.one_run(check, 1, foreign("f8"))
    assert r.signalled and sent_to(host, r) == [("SIGKILL", True)] and "w1 still cordoned" in r.moment, r.moment
    if clean_uncordons:
        assert r.hit and r.problems() == [] and r.on_nodes == []
    else:  # the look counts the cordon the clean left (and the moment counts as missed: no uncordon seen)
        assert not r.hit and r.moment.endswith("no cordon left to undo: the run had uncordoned the node before the kill")
        assert r.problems() == [f"left on the nodes: node w1: cordon mark {ic.CORDONED_BY}={r.run_id} (cordoned)"]


def test_a_freeze_left_after_the_kill_is_a_problem_of_its_row(clock, tmp_path, monkeypatch):
    """The look after f7 when nothing thawed the node (its thaw timer gone, no clean): counted."""
    host, check = foreign_check(tmp_path, clock)
    look = FakeNodes(nodes=("w1", "w2"), frozen={"w2": list(FROZEN)})
    host.agent = lambda check, name: look
    monkeypatch.setattr(ic, "stray_agents", lambda kube, own: [])
    monkeypatch.setattr(ic, "cordons_left", lambda kube, workers: [])
    r = row(variant=foreign("f7"), exit="-9 (SIGKILL)", clean="exit 0 (1 s; 0 armed undo(s) fired)",
            reports="ok: not judged (SIGKILL: the run had no finish)")
    r.on_nodes, _ = ic.on_workers(check, 1)
    assert r.problems() == [f"left on the nodes: w2: {FROZEN[0]}, w2: {FROZEN[1]}"]


def test_what_else_a_clean_undid_is_read_from_its_output():
    from e2e.cluster.nodeaccess import sweep_units

    nodes = FakeNodes(frozen={"w2": list(FROZEN)})
    done, _ = sweep_units(nodes, "w2")
    out = ("waiting up to 630 s for node w2 (its agent does not answer: a fault cut it off; its armed undo fires by itself)\n"
           + "".join(f"removing {line}\n" for line in done)
           + "removing cordon of node w1 by dead run interrupt-check-x-001 in cluster foreign (DR-2's kubectl drain: "
             "the node is uncordoned, its mark pod-lifecycle-e2e/cordoned-by removed)\n")
    assert ic.undone_by_clean(out) == ["waited for w2 (out of reach)", "thawed w2 (2 cgroups)",
                                       "uncordoned w1 (run interrupt-check-x-001)"]
    assert ic.undone_by_clean("nothing to clean\n") == []
