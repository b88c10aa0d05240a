"""Every way a stopped run ends leaks nothing and still writes reports that agree (`make interrupt-check`).

Runs ``pytest scenarios -m smoke`` again and again and stops each run with a signal at a chosen
moment, cycling through :data:`VARIANTS` (run ``k`` that reached its moment had variant
``k mod 10``: ``--runs 20`` stops every variant twice). The variants cross:

- the ending: Ctrl-C (SIGINT to the run's process group, as a terminal sends it), Ctrl-C twice (a
  second one 1-3 s after the first, while the run cleans up), SIGTERM to the process group (as
  ``timeout`` and systemd send it) or to pytest alone (as ``docker stop`` does);
- the workers: ``-n 0`` and ``-n 2`` (pytest-xdist);
- the cluster: **owned** (the run creates it and must delete it), **kept** (``--keep-cluster`` on a
  cluster this check keeps for them; the run must delete its namespaces) and **kubeconfig**
  (``--kubeconfig`` with that kept cluster's kubeconfig, from ``kind get kubeconfig``);
- the moment: a random one (after the run's first test began its set-up: its run lock appeared in
  the state directory), **in kind create** (an owned run's cluster is being created: its kind config
  is written, a node container is up, its state file is not there yet), **as the namespace
  appears** (the first namespace labelled with the run id, polled on the kept cluster: Ctrl-C before
  the namespace's cleanup could be armed) or **in the run's finish** (its last test reported,
  ``[100%]`` in its log, and its cluster still there: the run is deleting it).

A run that ends before its moment (or whose second Ctrl-C came too late, or whose cluster was no
longer being created when the signal came) is shown and its variant runs again, at most ``2 * runs``
runs in all. After each run, from outside the suite:

- **exit**: 2 (pytest's "interrupted") after a signal — SIGTERM too (:mod:`e2e.plugin.signals` stops
  the run as after Ctrl-C) —; 0 or 1 (its tests' outcome) for a run that ended before its moment;
  after its last test was reported either (a signal in the session's finish is ignored there);
- **leaked clusters/containers**: of this check's clusters, any but the kept one (and the kept one
  must still be there); the check deletes a leaked one before the next run;
- **leaked namespaces**: labelled with the run id and not being deleted, on every cluster of the
  check still there (the kept one, which the kubeconfig runs use too, and any leaked one);
- **state files left** in the check's own ``E2E_STATE_DIR``: every file there that the run made and
  left — any file that was not there before it, its lock files (``*.lock``, ``*.use``, ``*.turn``)
  included: a run removes those it made once nobody holds them (e2e.base.locks). Only what
  :data:`STAYS` names may stay, each with why that is safe (said under the table, with the
  host's own lock files outside the state directory, :data:`HOST_LOCKS`);
- **reports**: ``junit.xml`` readable and agreeing with ``summary.md`` (testcases, tests, failures,
  errors, skipped; an interrupted test is a testcase that pytest counts in no outcome), no staged
  ``.incoming-<run id>/`` left; or, for a run that says no test ran, neither file.

**On a cluster the suite did not make** (``--kubeconfig PATH``: ``make interrupt-check KUBECONFIG=PATH``)
the runs use that cluster with ``--node-agent`` (``--select`` picks their tests, default ``-m smoke``;
``--agent-args`` adds e.g. ``--node-selector``), cycling through :data:`FOREIGN_VARIANTS`: a clean
end, Ctrl-C once and twice, SIGTERM, and SIGKILL followed by ``python -m e2e.cli.clean --kubeconfig
PATH`` (``make clean KUBECONFIG=PATH``), at a random moment of a smoke run and (f6) **while a
node fault's undo is armed** (NF-5's kubelet restart: killed once a ``ple2e-undo-*.timer`` is seen
active on a worker; a kill after the run's own undo disarmed it misses the moment), (f7, f9:
SIGKILL, Ctrl-C) **while a worker is frozen** by NF-4's node pause (fast-lifecycle: the node's
agent answering no exec within :data:`FROZEN_PROBE_S` twice; its armed thaw fires by itself at
the pause's end, the clean's exec into the node waits for it)
and (f8, f10) **while a worker is cordoned** by DR-2's drain (unschedulable with the run's
:data:`~e2e.cluster.cordon.CORDONED_BY` mark; after SIGKILL a clean that uncordons nothing: the
run's own uncordon came first, the moment missed). ``--variants f7,f8`` runs only those. No kind
cluster is made or looked at (no Docker). Besides the namespaces, state files and reports above,
each row checks every worker the node agent may enter, through the check's own agent (made for
the look, deleted after it; :func:`left_on_workers`): no ``ple2e-*`` unit (an armed undo or pending
inject; a failed one), no freeze of a node pause left (:func:`e2e.cluster.nodeaccess.frozen_on`: the
``ple2e-freeze`` cgroup, a frozen kubepods tree), no iptables or ip6tables rule of the suite's partition
(:data:`e2e.faults.node.PARTITION_COMMENT`), no IM registry fault left in a registry pod (its
``DROP``, qdisc or freeze: :func:`e2e.faults.registry.left_in_pod`), kubelet and containerd
active, the node Ready; no agent namespace or agent pod but those being deleted
(:func:`stray_agents`); and no node carrying a run's cordon mark, no worker left cordoned
(DR-2's ``kubectl drain``: :func:`cordons_left`). After SIGKILL the
reports are not judged (the run had no finish), the clean's exit must be 0, and every armed undo
the clean fired must show in its node's journal, with the node's time (:func:`undo_ran`).

The check runs in a state directory of its own (a temporary one): its clusters' names hash it (the
node guard files they mount live there), so it never meets another run's cluster, and it deletes
only clusters of those names. Its work directory keeps every run's log and reports.

Usage (after ``make e2e`` wrote ``reports/profile.env``; Docker and kind as for the suite):

    set -a; . reports/profile.env; set +a
    .venv/bin/python hack/interrupt_check.py --runs 20 [--seed 1] [--out reports/interrupts.md]
    .venv/bin/python hack/interrupt_check.py --kubeconfig PATH --runs 10 [--select "-m smoke"]

Exit 0 when no run leaked or disagreed and every variant was stopped at its moment as often as
planned, 1 otherwise, 2 when the check could not start (no node image, the kept cluster could not
be made).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from concurrent.futures import ThreadPoolExecutor, TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import yaml

from e2e.cluster.cordon import CORDONED_BY
from e2e.cluster.egress import HOST_LOCK_DIR
from e2e.cluster.images import workload_images
from e2e.cluster.kube import RUN_LABEL, Kube
from e2e.cluster.nodeaccess import (AGENT_LABEL, PREFIX, AgentAccess, NodeUnreachable, agent_namespace, frozen_on,
                                    parse_node_selector, run as node_run, units_on)
from e2e.cluster.registry import POD_LABEL as REGISTRY_LABEL
from e2e.faults.node import PARTITION_COMMENT
from e2e.faults.registry import left_in_pod

ROOT = Path(__file__).resolve().parent.parent

OWNED, KEPT, KUBECONFIG, FOREIGN = "owned", "kept", "kubeconfig", "foreign"
GROUP, PYTEST = "group", "pytest"  # whom a signal goes to: the run's process group, or pytest alone
RANDOM, KIND_CREATE, NAMESPACE, FINISH, END = "random", "kind-create", "namespace", "finish", "end"
ARMED = "armed"  # a node fault's undo armed on a worker (a ple2e-undo-*.timer active): --kubeconfig runs
FROZEN = "frozen"  # a worker frozen by NF-4's node pause (its agent no longer answering): --kubeconfig runs
CORDONED = "cordoned"  # a worker cordoned by DR-2's kubectl drain (marked with the run's id): --kubeconfig runs
FROZEN_PROBE_S = 5.0  # a worker whose agent answers no exec within this twice in a row is frozen


@dataclass(frozen=True)
class Variant:
    """One way of stopping a run (see module doc). ``window_s``: the moment is drawn from it —
    seconds after the run's first set-up began (random), after its cluster's creation began
    (kind-create), after its last test was reported (finish) or after a node fault's undo was seen
    armed on a worker (armed); a namespace moment is the namespace's appearance. ``select``: the
    run's pytest selection instead of the check's (``--select``): for an armed moment, tests that
    arm a node fault."""

    id: str
    cluster: str
    workers: int
    signals: tuple[str, ...]
    target: str
    moment: str
    window_s: tuple[float, float] = (0.0, 0.0)
    select: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        to = "to its process group" if self.target == GROUP else "to pytest only"
        when = {RANDOM: "at a random moment", KIND_CREATE: "during kind create", NAMESPACE: "as its namespace appears",
                FINISH: "in the run's finish", ARMED: "while a node fault's undo is armed on a worker",
                FROZEN: "while a worker is frozen (NF-4's node pause)", CORDONED: "while a worker is cordoned (DR-2's drain)"}
        if self.moment == END:
            return f"{self.id} {self.cluster} · -n {self.workers} · no signal: a clean end"
        then = ", then make clean KUBECONFIG=…" if "SIGKILL" in self.signals else ""
        tests = f" ({' '.join(self.select)})" if self.select else ""
        return f"{self.id} {self.cluster}{tests} · -n {self.workers} · {' + '.join(self.signals)} {to} {when[self.moment]}{then}"


# Smoke runs on a free 2-core host: an owned cluster Ready with images loaded in ~60 s, the six
# smoke tests ~65 s one after another, ~35 s on two workers; the random windows end before the
# runs do, kind create takes 30 s and more, kind delete a few seconds.
VARIANTS = (
    Variant("v1", OWNED, 0, ("SIGINT",), GROUP, RANDOM, (0, 100)),
    Variant("v2", OWNED, 2, ("SIGINT", "SIGINT"), GROUP, RANDOM, (0, 80)),
    Variant("v3", OWNED, 2, ("SIGTERM",), GROUP, RANDOM, (0, 80)),
    Variant("v4", OWNED, 0, ("SIGINT",), GROUP, KIND_CREATE, (3, 12)),
    Variant("v5", OWNED, 0, ("SIGINT",), GROUP, FINISH, (0, 1.5)),
    Variant("v6", KEPT, 0, ("SIGTERM",), PYTEST, RANDOM, (0, 55)),
    Variant("v7", KEPT, 2, ("SIGINT",), GROUP, NAMESPACE),
    Variant("v8", KUBECONFIG, 0, ("SIGINT", "SIGINT"), GROUP, RANDOM, (0, 55)),
    Variant("v9", KUBECONFIG, 2, ("SIGTERM",), PYTEST, RANDOM, (0, 28)),
    Variant("v10", KUBECONFIG, 0, ("SIGINT",), GROUP, NAMESPACE),
)

# --kubeconfig PATH: a cluster the suite did not make, its runs with --node-agent (module doc)
FOREIGN_VARIANTS = (
    Variant("f1", FOREIGN, 0, (), GROUP, END),
    Variant("f2", FOREIGN, 0, ("SIGINT",), GROUP, RANDOM, (0, 40)),
    Variant("f3", FOREIGN, 2, ("SIGINT", "SIGINT"), GROUP, RANDOM, (0, 30)),
    Variant("f4", FOREIGN, 0, ("SIGTERM",), PYTEST, RANDOM, (0, 40)),
    Variant("f5", FOREIGN, 0, ("SIGKILL",), GROUP, RANDOM, (0, 40)),
    # NF-5's kubelet restart arms "systemctl start kubelet" for 630 s: killed with it armed, the
    # node keeps its timer until make clean fires it (the kubelet is back by then: clean needs no wait)
    Variant("f6", FOREIGN, 0, ("SIGKILL",), GROUP, ARMED, (0, 2), select=("-k", "test_kubelet_restart and not sigkill")),
    # NF-4's node pause (fast-lifecycle: the pause lasts the cluster's grace + monitor periods): killed with
    # the worker frozen, the armed thaw fires by itself at the pause's end, make clean waits for the node,
    # then finds nothing frozen; Ctrl-C there: the run's own undo waits for the same thaw
    Variant("f7", FOREIGN, 0, ("SIGKILL",), GROUP, FROZEN, (0, 3), select=("-k", "test_worker_lost and fast")),
    # DR-2's drain with maxUnavailable 0 stays blocked (cordoned) for its --timeout=30s: killed then, the
    # node keeps its cordon and mark until make clean uncordons it; Ctrl-C there: the run's finally uncordons
    Variant("f8", FOREIGN, 0, ("SIGKILL",), GROUP, CORDONED, (0, 2), select=("-k", "test_drain_against_pdb")),
    Variant("f9", FOREIGN, 0, ("SIGINT",), GROUP, FROZEN, (0, 3), select=("-k", "test_worker_lost and fast")),
    Variant("f10", FOREIGN, 0, ("SIGINT",), GROUP, CORDONED, (0, 2), select=("-k", "test_drain_against_pdb")),
)

POLL_S = 0.2  # how often the moment's condition and the run are looked at
SECOND_SIGNAL_AFTER_S = (1.0, 3.0)  # the second Ctrl-C: this many seconds after the first
EXIT_TIMEOUT_S = 240  # a stopped run must be gone (cleanup included) within this; then SIGKILL
KEPT_SETUP_TIMEOUT_S = 900  # the run that makes the kept cluster
INTERRUPTED = 2  # pytest.ExitCode.INTERRUPTED, after Ctrl-C and SIGTERM alike
# What a run may leave in the state directory (a path's first part), and why that is safe
STAYS = {
    "guard/": "the node guard every node of a cluster mounts (e2e.cluster.egress), one file per guard text, shared by "
              "every cluster of the state directory: a run that deletes its cluster cannot know whether another run "
              "is about to mount the same file (Docker mounts an empty directory in place of a missing one); "
              "`make clean` removes those no remaining cluster mounts",
    "cni/": "a multi-node cluster's static CNI config per node, mounted like the node guard and kept for the same reason",
}
# Outside the state directory: the host's lock files of the suite's network and host guard (e2e.cluster.egress)
HOST_LOCKS = {
    "egress.lock": "one host guard change at a time",
    "network.lock": "one network creation or removal at a time",
    "network.use": "held shared by every run with a cluster on the network",
}
HOST_LOCKS_WHY = ("a fixed set of three empty files in {dir}, shared by every run on the host whatever its state directory "
                  "(runs of other checkouts too, which do not lock a removed file again): never more of them, and "
                  "/run/lock is emptied at boot")
SKIPPED_LIKE = ("skipped", "undocumented", "inconclusive", "xfailed")  # summary.md outcomes junit.xml counts as skipped
# pytest's last line (-q): "2 passed, 93 deselected in 6.13s", "no tests ran in 0.01s (0:00:00)"
PYTEST_LAST_LINE = re.compile(r" in \d+(\.\d+)?s( \(\d+:\d\d:\d\d\))?$")
LAST_TEST_REPORTED = "[100%]"  # in a run's log (pytest -q): its last test reported, the session's finish next
NODE_CONTAINER = re.compile(r"(?P<cluster>.+)-(control-plane\d*|worker\d*|external-load-balancer)")  # kind's node names


def variant_of(hits: int, variants: tuple[Variant, ...] = VARIANTS) -> Variant:
    """The variant of the run after ``hits`` runs reached their moment."""
    return variants[hits % len(variants)]


def picked(variants: tuple[Variant, ...], ids: str | None) -> tuple[Variant, ...]:
    """The variants named in ``ids`` (``--variants``: ids separated by commas, e.g. ``f7,f8``), in
    the catalogue's order; all of ``variants`` without it. ``ValueError`` naming an id that is none of theirs."""
    if not ids:
        return variants
    wanted = {i.strip() for i in ids.split(",") if i.strip()}
    unknown = sorted(wanted - {v.id for v in variants})
    if unknown or not wanted:
        raise ValueError(f"--variants {ids!r}: no variant {', '.join(unknown) or '(none named)'} among "
                         f"{', '.join(v.id for v in variants)}")
    return tuple(v for v in variants if v.id in wanted)


def planned(runs: int, variants: tuple[Variant, ...] = VARIANTS) -> Counter:
    """How often each variant (by id) is to be stopped at its moment in ``runs`` runs."""
    return Counter(variant_of(k, variants).id for k in range(runs))


# -- what is left of a run -------------------------------------------------------------------


def files(directory: Path) -> set[str]:
    """Every file under ``directory``, relative to it (none when it does not exist)."""
    return {str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file()} if directory.is_dir() else set()


def leftovers(state_dir: Path, before: set[str]) -> tuple[list[str], list[str]]:
    """The files of ``state_dir`` that were not there ``before`` the run (:func:`files`), as
    ``(left, stays)``: those a run may leave (:data:`STAYS`) apart, sorted."""
    new = sorted(files(state_dir) - before)
    stays = [f for f in new if f.startswith(tuple(STAYS))]
    return [f for f in new if f not in stays], stays


def host_locks(lock_dir: Path) -> list[str]:
    """The files of the host's lock directory (e2e.cluster.egress ``HOST_LOCK_DIR``) that are not
    its :data:`HOST_LOCKS`: what a run left there."""
    return sorted(files(lock_dir) - set(HOST_LOCKS))


def junit_counts(path: Path) -> dict[str, int]:
    """``junit.xml``'s testcases and its suites' tests, failures, errors and skipped (summed);
    ``ET.ParseError`` when it is not XML."""
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    counts = dict.fromkeys(("testcases", "tests", "failures", "errors", "skipped"), 0)
    for suite in suites:
        counts["testcases"] += len(suite.findall("testcase"))
        for key in ("tests", "failures", "errors", "skipped"):
            counts[key] += int(suite.get(key, 0))
    return counts


def summary_counts(text: str) -> dict[str, int] | None:
    """The outcomes of ``summary.md``'s ``Tests:`` line (``{"passed": 2, "interrupted": 1}``), None without one."""
    match = re.search(r"^Tests: (.+)$", text, re.M)
    if match is None:
        return None
    if match.group(1) == "none":
        return {}
    return {outcome: int(n) for n, outcome in (part.split(" ", 1) for part in match.group(1).split(", "))}


def disagreements(junit: dict[str, int], summary: dict[str, int]) -> list[str]:
    """Where ``junit.xml``'s counts differ from what ``summary.md``'s outcomes make them: every test
    a testcase; pytest's tests all but the interrupted ones (pytest counts those in no outcome)."""
    total = sum(summary.values())
    expected = {"testcases": total, "tests": total - summary.get("interrupted", 0), "failures": summary.get("failed", 0),
                "errors": summary.get("error", 0), "skipped": sum(summary.get(k, 0) for k in SKIPPED_LIKE)}
    return [f"{key} {junit[key]} vs {n}" for key, n in expected.items() if junit[key] != n]


def reports_verdict(reports: Path, log: str, run_id: str) -> str:
    """``ok: …`` when the run's reports are there and agree (see module doc), else what is wrong."""
    problems = [f"staged reports left in {reports.name}/.incoming-{run_id}"] if (reports / f".incoming-{run_id}").exists() else []
    junit, summary = reports / "junit.xml", reports / "summary.md"
    if not junit.exists() and not summary.exists() and "pod-lifecycle-e2e: no test ran" in log:
        return "; ".join(problems) or "ok (no test ran)"
    if not junit.exists():
        return "; ".join([*problems, "no junit.xml"])
    try:
        counts = junit_counts(junit)
    except (ET.ParseError, ValueError) as e:
        return "; ".join([*problems, f"junit.xml unreadable: {e}"])
    outcomes = summary_counts(summary.read_text()) if summary.exists() else None
    if outcomes is None:
        return "; ".join([*problems, "no summary.md" if not summary.exists() else "summary.md has no Tests: line"])
    differ = disagreements(counts, outcomes)
    if differ:
        problems.append(f"junit.xml disagrees with summary.md ({', '.join(differ)})")
    tests = ", ".join(f"{n} {outcome}" for outcome, n in sorted(outcomes.items())) or "none"
    return "; ".join(problems) or f"ok: {sum(outcomes.values())} tests ({tests})"


# -- one row per run ---------------------------------------------------------------------------


def _code(exit: int | str) -> int | str:
    """The exit code of a row's ``exit`` cell (``-2 (SIGINT)`` → -2); a text that is none as it is."""
    head = str(exit).split(" ")[0]
    return int(head) if head.lstrip("-").isdigit() else exit


@dataclass
class Row:
    """One stopped run and what it left (see module doc)."""

    run: int
    variant: Variant
    run_id: str
    log: str
    moment: str = ""  # the signals sent and when
    hit: bool = False  # every signal came at the variant's moment
    signalled: bool = False
    after_last_test: bool = False  # the (first) signal came after the run's last test was reported
    ended_before_death: bool = False  # the run's log ends with pytest's last line ("… in 6.13s")
    exit: int | str = ""
    exit_after_s: float | None = None  # from the first signal
    clusters: list[str] = field(default_factory=list)  # leaked clusters and containers
    kept_lost: bool = False
    namespaces: list[str] = field(default_factory=list)  # leaked: <cluster>/<namespace>, not being deleted
    deleting: int = 0  # the run's namespaces still Terminating (deleted by the run)
    state_left: list[str] = field(default_factory=list)
    stays: list[str] = field(default_factory=list)  # made by the run, allowed to stay (STAYS)
    host_left: list[str] = field(default_factory=list)  # in the host's lock directory, not its HOST_LOCKS
    reports: str = ""
    # FOREIGN: what is left on the nodes (<node>: <unit> <state>, iptables rules) and the clean after SIGKILL
    on_nodes: list[str] = field(default_factory=list)
    clean: str = ""
    fired: list[tuple[str, str]] = field(default_factory=list)  # (node, unit): the armed undos the clean fired
    undo_ran: list[str] = field(default_factory=list)  # when each ran, from its node's journal (undo_ran)

    def expected_exit(self) -> tuple[int, ...]:
        """2 after a signal, the tests' outcome (0 or 1) without one; after the last test was reported
        either (ignored in the session's finish, or landing just before it) or death by the signal
        itself (-2 for SIGINT) once its log ends with pytest's last line: a signal landing after the
        session's end (the signals' default handlers given back, the work done) ends any process so
        — a first one after the last test, or a second one after an interrupted run's cleanup."""
        if not self.signalled:
            return (0, 1)
        if self.variant.signals == ("SIGKILL",):
            return (-signal.SIGKILL,)
        died = tuple(-getattr(signal, name) for name in dict.fromkeys(self.variant.signals)) if self.ended_before_death else ()
        if self.after_last_test:
            return (0, 1, INTERRUPTED, *died)
        return (INTERRUPTED, *died)

    def problems(self) -> list[str]:
        out = []
        expected = self.expected_exit()
        if _code(self.exit) not in expected:
            out.append(f"exit {self.exit}, expected {' or '.join(map(str, expected))}")
        if self.clusters:
            out.append(f"leaked {', '.join(self.clusters)}")
        if self.kept_lost:
            out.append("the kept cluster was deleted")
        if self.namespaces:
            out.append(f"leaked namespaces {', '.join(self.namespaces)}")
        if self.state_left:
            out.append(f"state files left {', '.join(self.state_left)}")
        if self.host_left:
            out.append(f"files left in the host's lock directory {', '.join(self.host_left)}")
        if self.on_nodes:
            out.append(f"left on the nodes: {', '.join(self.on_nodes)}")
        if self.clean and not self.clean.startswith("exit 0"):
            out.append(f"make clean KUBECONFIG=…: {self.clean}")
        if len([line for line in self.undo_ran if " ran " in line]) < len(self.fired):
            out.append(f"fired undo not seen running on its node: {', '.join(self.undo_ran) or 'not looked at'}")
        if not self.reports.startswith("ok"):
            out.append(self.reports)
        return out

    def verdict(self) -> str:
        text = "; ".join(self.problems()) or "ok"
        return text if self.hit else f"{text} (moment missed: variant runs again)"

    def cells(self) -> list[str]:
        namespaces = ", ".join(self.namespaces) or "none"
        return [str(self.run), self.variant.label, self.moment, str(self.exit),
                "-" if self.exit_after_s is None else f"{self.exit_after_s:.1f}",
                ", ".join(self.clusters) + (" · kept cluster gone" if self.kept_lost else "") or "none",
                namespaces + (f" ({self.deleting} Terminating)" if self.deleting else ""),
                (", ".join(self.state_left + self.host_left) or "none")
                + (f" (stays: {', '.join(self.stays)})" if self.stays else ""),
                self.reports, self.verdict()]

    def foreign_cells(self) -> list[str]:
        """The row of a ``--kubeconfig`` check (:data:`FOREIGN_COLUMNS`)."""
        return [str(self.run), self.variant.label, self.moment or "-", str(self.exit),
                "-" if self.exit_after_s is None else f"{self.exit_after_s:.1f}",
                (self.clean or "-") + (f": {', '.join(self.undo_ran)}" if self.undo_ran else ""),
                (", ".join(self.namespaces) or "none") + (f" ({self.deleting} Terminating)" if self.deleting else ""),
                ", ".join(self.on_nodes) or "none",
                (", ".join(self.state_left + self.host_left) or "none")
                + (f" (stays: {', '.join(self.stays)})" if self.stays else ""),
                self.reports, self.verdict()]


COLUMNS = ("run", "variant", "signals and moment", "exit", "exit after (s)", "leaked clusters/containers",
           "leaked namespaces", "state files left", "reports: junit.xml vs summary.md", "verdict")
FOREIGN_COLUMNS = ("run", "variant", "signals and moment", "exit", "exit after (s)",
                   "make clean KUBECONFIG=…: the armed undos it fired, when each ran (node clock)",
                   "leaked namespaces (agent ones too)",
                   "left on the workers: ple2e units, partition rules (iptables, ip6tables), kubelet/containerd not "
                   "active, not Ready; other agent namespaces/pods; nodes cordoned or marked by a run's cordon",
                   "state files left", "reports: junit.xml vs summary.md", "verdict")


def table_line(cells: list[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def report(rows: list[Row], runs: int, variants: tuple[Variant, ...] = VARIANTS,
           host_lock_dir: Path | None = None) -> tuple[str, bool]:
    """The table of ``rows`` and its summary; whether the check passed (no row with a problem,
    every variant stopped at its moment as often as planned)."""
    foreign = any(v.cluster == FOREIGN for v in variants)
    columns = FOREIGN_COLUMNS if foreign else COLUMNS
    lines = [table_line(list(columns)), "|" + "---|" * len(columns)] + \
        [table_line(r.foreign_cells() if foreign else r.cells()) for r in rows]
    want, got = planned(runs, variants), Counter(r.variant.id for r in rows if r.hit)
    bad = [r for r in rows if r.problems()]
    short = [v for v in variants if got[v.id] < want[v.id]]
    codes = Counter(str(r.exit) for r in rows)
    after = [r.exit_after_s for r in rows if r.exit_after_s is not None]
    lines += ["", f"{len(rows)} runs, {sum(got.values())} stopped at their moment ({runs} planned), "
                  f"{sum(not r.hit for r in rows)} missed it (run again); {len(bad)} with a problem",
              "leaked: " + f"{sum(len(r.clusters) for r in rows)} clusters/containers, {sum(r.kept_lost for r in rows)} kept "
              f"clusters lost, {sum(len(r.namespaces) for r in rows)} namespaces, {sum(len(r.state_left) + len(r.host_left) for r in rows)} "
              f"files (lock files included; {sum(len(r.stays) for r in rows)} that stay by design, below); "
              f"{sum(not r.reports.startswith('ok') for r in rows)} runs without agreeing reports"
              + (f"; {sum(len(r.on_nodes) for r in rows)} things left on the workers or agents" if foreign else ""),
              "exit codes: " + ", ".join(f"{code} ×{n}" for code, n in sorted(codes.items()))
              + (f"; exit after the first signal: median {statistics.median(after):.1f} s, max {max(after):.1f} s" if after else ""),
              "", "| variant | stopped at its moment | planned | with a problem |", "|---|---|---|---|"]
    lines += [f"| {v.label} | {got[v.id]} | {want[v.id]} | {sum(1 for r in bad if r.variant.id == v.id)} |" for v in variants]
    return "\n".join(lines + [""] + what_stays(rows, host_lock_dir or HOST_LOCK_DIR)), not bad and not short


def what_stays(rows: list[Row], host_lock_dir: Path) -> list[str]:
    """The section under the table: what a run made and left by design, how often, and why that is
    safe (:data:`STAYS`, :data:`HOST_LOCKS`); every other file a run left is a problem of its row."""
    lines = ["What stays after a run, and why that is safe:", "", "| what | left by runs | why it is safe |", "|---|---|---|"]
    for prefix, why in STAYS.items():
        left = sorted({f for r in rows for f in r.stays if f.startswith(prefix)})
        lines.append(f"| `{prefix}*` in the state directory | {len(left)} file(s){': ' + ', '.join(left) if left else ''} | {why} |")
    names = ", ".join(f"`{name}` ({what})" for name, what in HOST_LOCKS.items())
    lines.append(f"| {names} | the host's, not a run's | {HOST_LOCKS_WHY.format(dir=host_lock_dir)} |")
    return lines


# -- Docker, kind, the API, processes --------------------------------------------------------------


def _default_signals() -> None:
    """In the run's process, before exec: SIGINT and SIGTERM as a terminal's foreground job has them
    (a check started in the background has SIGINT ignored, and Python would then keep it so)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


class Host:
    """What the check does outside its own process: kind, Docker, the API server, the runs."""

    def __init__(self, kind: str):
        self.kind = kind

    def cluster_name(self, kind_config: Path, env: dict[str, str]) -> str:
        """The cluster a run with ``env`` (its E2E_STATE_DIR, E2E_NODE_IMAGE, E2E_PROFILE_PATCH)
        and ``--kind-config kind_config`` uses: computed by the suite's own code, in that environment."""
        code = ("import os, sys; from pathlib import Path; from e2e.cluster.kind import Profile; "
                "patches = tuple(Path(p) for p in os.environ.get('E2E_PROFILE_PATCH', '').split(':') if p); "
                "print(Profile(Path(sys.argv[1]), os.environ['E2E_NODE_IMAGE'], patches).cluster_name)")
        return subprocess.run([sys.executable, "-c", code, str(kind_config)], cwd=ROOT, env=env, capture_output=True,
                              text=True, check=True).stdout.strip()

    def clusters(self) -> list[str]:
        return subprocess.run([self.kind, "get", "clusters"], capture_output=True, text=True, check=True).stdout.split()

    def containers(self) -> list[str]:
        return subprocess.run(["docker", "ps", "-a", "--format", "{{.Names}}"], capture_output=True, text=True,
                              check=True).stdout.split()

    def kubeconfig(self, cluster: str) -> str:
        return subprocess.run([self.kind, "get", "kubeconfig", "--name", cluster], capture_output=True, text=True,
                              check=True).stdout

    def cordoned_by(self, kubeconfig: Path, run_id: str) -> list[str]:
        """The nodes cordoned (``spec.unschedulable``) carrying ``run_id``'s :data:`CORDONED_BY` mark."""
        return [n.metadata.name for n in Kube(str(kubeconfig)).core.list_node(_request_timeout=10).items
                if n.spec.unschedulable and (n.metadata.annotations or {}).get(CORDONED_BY) == run_id]

    def delete_cluster(self, cluster: str) -> None:
        subprocess.run([self.kind, "delete", "cluster", "--name", cluster], capture_output=True, check=True)

    def namespaces(self, kubeconfig: Path, run_id: str) -> list[tuple[str, str]]:
        """``(name, phase)`` of the namespaces labelled with ``run_id``."""
        items = Kube(str(kubeconfig)).core.list_namespace(label_selector=f"{RUN_LABEL}={run_id}", _request_timeout=10).items
        return [(ns.metadata.name, ns.status.phase) for ns in items]

    def start(self, cmd: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
        """``cmd`` in a session of its own (its process group gets the signals a terminal would send)."""
        with open(log, "w") as out:
            return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                                    preexec_fn=_default_signals)

    def agent(self, check: Check, name: str) -> AgentAccess:
        """The check's own node agent on its ``--kubeconfig`` cluster, named ``interrupt-check-<stamp>-<name>``
        (its pods made on first use, its namespace deleted by ``close``), on the workers the runs' ``--node-selector`` picks."""
        args = check.agent_args
        selector = next((args[k + 1] for k, a in enumerate(args[:-1]) if a == "--node-selector"), None)
        return AgentAccess(Kube(str(check.kubeconfig)), f"interrupt-check-{check.stamp}-{name}", check.agent_image,
                           selector=parse_node_selector(selector) if selector else None)

    def signal(self, proc: subprocess.Popen, signum: int, group: bool) -> bool:
        """Send ``signum`` to the run's process group or to pytest alone; False when nobody was there."""
        try:
            if group:
                os.killpg(proc.pid, signum)
            elif proc.poll() is None:
                proc.send_signal(signum)
            else:
                return False
        except ProcessLookupError:
            return False
        return True


class SetupError(RuntimeError):
    """The check cannot run (its clusters' names, the kept cluster)."""


@dataclass
class Check:
    """The check's work directory, state directory, its two profiles' clusters and the kept one's kubeconfig."""

    host: Host
    work: Path
    env: dict[str, str]  # every run's environment but its E2E_RUN_ID
    configs: dict[str, Path]  # OWNED / KEPT: the kind config of the runs that own / keep their cluster
    names: dict[str, str]  # OWNED / KEPT: their clusters' names
    rng: random.Random
    stamp: str = field(default_factory=lambda: time.strftime("%Y%m%d-%H%M%S"))
    kept_setups: int = 0
    # the host's lock files (HOST_LOCKS), outside the state directory
    host_lock_dir: Path = field(default_factory=lambda: HOST_LOCK_DIR)
    # FOREIGN (--kubeconfig): the cluster, the runs' selection and extra options, the agent's image
    kubeconfig: Path | None = None
    select: tuple[str, ...] = ("-m", "smoke")
    agent_args: tuple[str, ...] = ()
    agent_image: str = ""

    @property
    def state(self) -> Path:
        return Path(self.env["E2E_STATE_DIR"])

    @property
    def kept_kubeconfig(self) -> Path:
        return self.work / "kept.kubeconfig"

    def ours(self, cluster: str) -> bool:
        """A cluster of this check: one of its profiles' (or a copy ``<name>-<n>``, e2e.run.plan)."""
        return any(re.fullmatch(re.escape(name) + r"(-\d+)?", cluster) for name in self.names.values())

    def our_clusters(self) -> list[str]:
        return [c for c in self.host.clusters() if self.ours(c)]


def prepare(work: Path, host: Host, rng: random.Random) -> Check:
    """The check's state directory and kind configs (the suite's ``kind-config.yaml`` named
    ``interrupt-check-owned`` / ``-kept``: two profiles, two clusters); refuses clusters that exist."""
    env = {**os.environ, "E2E_STATE_DIR": str(work / "state")}
    base = yaml.safe_load((ROOT / "kind-config.yaml").read_text())
    configs, names = {}, {}
    for role in (OWNED, KEPT):
        configs[role] = work / f"kind-config-{role}.yaml"
        # kind's --name overrides a config's name: it changes the profile's hash, nothing else
        configs[role].write_text(yaml.safe_dump({**base, "name": f"interrupt-check-{role}"}, sort_keys=False))
        names[role] = host.cluster_name(configs[role], env)
    check = Check(host, work, env, configs, names, rng)
    if there := check.our_clusters():
        raise SetupError(f"cluster(s) {', '.join(there)} already exist; delete them first")
    return check


def ensure_kept(check: Check) -> None:
    """The kept cluster the kept and kubeconfig runs use, made by a short ``--keep-cluster`` run when
    it is not there, and its kubeconfig."""
    kept = check.names[KEPT]
    if kept not in check.host.clusters():
        check.kept_setups += 1
        log = check.work / f"keep-setup-{check.kept_setups}.log"
        cmd = [sys.executable, "-m", "pytest", str(ROOT / "scenarios"), "-m", "smoke", "-k", "conditions", "-q",
               "-p", "no:cacheprovider", "-n", "0", "--kind-config", str(check.configs[KEPT]), "--keep-cluster",
               "--reports-dir", str(check.work / f"keep-setup-{check.kept_setups}")]
        env = {**check.env, "E2E_RUN_ID": f"interrupt-check-{check.stamp}-keep-{check.kept_setups}"}
        proc = check.host.start(cmd, env, log)
        try:
            code = proc.wait(timeout=KEPT_SETUP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            check.host.signal(proc, signal.SIGKILL, group=True)
            code = proc.wait()
        if code != 0 or kept not in check.host.clusters():
            raise SetupError(f"the kept cluster {kept} was not made (exit {code}; log {log})")
        check.kept_kubeconfig.unlink(missing_ok=True)
    if not check.kept_kubeconfig.exists():
        check.kept_kubeconfig.write_text(check.host.kubeconfig(kept))


def command(variant: Variant, check: Check, reports: Path) -> list[str]:
    cmd = [sys.executable, "-m", "pytest", str(ROOT / "scenarios"), "-m", "smoke", "-q", "-p", "no:cacheprovider",
           "-n", str(variant.workers), "--reports-dir", str(reports)]
    if variant.cluster == KUBECONFIG:
        return cmd + ["--kubeconfig", str(check.kept_kubeconfig)]
    if variant.cluster == FOREIGN:
        i = cmd.index("smoke") - 1  # the selection "-m smoke", replaced
        return [*cmd[:i], *(variant.select or check.select), *cmd[i + 2:], "--kubeconfig", str(check.kubeconfig), "--node-agent",
                *check.agent_args]
    return cmd + ["--kind-config", str(check.configs[variant.cluster])] + (["--keep-cluster"] if variant.cluster == KEPT else [])


def _wait(proc: subprocess.Popen, until: Callable[[], bool]) -> bool:
    """Poll ``until`` while the run lives: True once it holds, False when the run ended first."""
    while proc.poll() is None:
        if until():
            return True
        time.sleep(POLL_S)
    return False


def _after(delay_s: float) -> Callable[[], bool]:
    end = time.monotonic() + delay_s
    return lambda: time.monotonic() >= end


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except FileNotFoundError:
        return None


@dataclass
class Moment:
    reached: bool  # the run still lived when it came
    hit: bool  # it is the variant's moment (kind create: the cluster was being created)
    note: str


def owned_nodes(check: Check) -> list[str]:
    """The node containers of the owned runs' cluster."""
    return [n for n in check.host.containers() if (m := NODE_CONTAINER.fullmatch(n)) and m["cluster"] == check.names[OWNED]]


def wait_for_moment(check: Check, variant: Variant, proc: subprocess.Popen, run_id: str, log: Path) -> Moment:
    """Wait for the variant's moment in run ``run_id`` (see module doc)."""
    if variant.moment == NAMESPACE:
        seen: list[str] = []

        def appeared() -> bool:
            try:
                seen[:] = [name for name, _ in check.host.namespaces(check.kept_kubeconfig, run_id)]
            except Exception:  # noqa: BLE001 - the API not answering one poll: the next one asks again
                return False
            return bool(seen)

        if not _wait(proc, appeared):
            return Moment(False, False, "ended before a namespace of it appeared")
        return Moment(True, True, f"as namespace {seen[0]} appeared")
    delay = check.rng.uniform(*variant.window_s)
    if variant.moment == ARMED:
        agent = check.host.agent(check, f"watch-{run_id.rsplit('-', 1)[-1]}")
        try:
            armed: list[str] = []
            if not _wait(proc, lambda: bool(armed.extend(armed_undos(agent)) or armed)) or not _wait(proc, _after(delay)):
                return Moment(False, False, "ended before a node fault's undo was armed")
            return Moment(True, True, f"{delay:.1f} s after {', '.join(armed)} was seen armed")
        finally:
            agent.close()
    if variant.moment == FROZEN:
        return _frozen_moment(check, proc, run_id, delay)
    if variant.moment == CORDONED:
        return _cordoned_moment(check, proc, run_id, delay)
    if variant.moment == KIND_CREATE:
        owned = check.names[OWNED]
        config, state = check.state / f"{owned}.kind-config.yaml", check.state / f"{owned}.json"
        before = _mtime(config)  # a file an earlier run left is not this run's creation
        if not _wait(proc, lambda: _mtime(config) not in (None, before)) or not _wait(proc, _after(delay)):
            return Moment(False, False, "ended before creating its cluster")
        nodes = owned_nodes(check)
        creating = bool(nodes) and not state.exists()
        what = (f"in kind create ({', '.join(nodes)} up, no state file yet)" if creating else
                "creation done (state file there)" if state.exists() else "creation begun, no node container yet")
        return Moment(True, creating, f"{delay:.1f} s after its cluster's creation began: {what}")
    if variant.moment == FINISH:
        if not _wait(proc, lambda: LAST_TEST_REPORTED in log.read_text(errors="replace")) or not _wait(proc, _after(delay)):
            return Moment(False, False, "ended before its finish")
        nodes = owned_nodes(check)
        what = f"{', '.join(nodes)} still there: kind delete under way" if nodes else "its cluster already gone"
        return Moment(True, bool(nodes), f"{delay:.1f} s after its last test was reported, {what}")
    if not _wait(proc, (check.state / "runs" / f"{run_id}.lock").exists):
        return Moment(False, False, "ended before its first test's set-up")
    if not _wait(proc, _after(delay)):
        return Moment(False, False, f"ended before its moment, {delay:.1f} s into its set-up")
    return Moment(True, True, f"{delay:.1f} s after its first set-up began")


def _frozen_moment(check: Check, proc: subprocess.Popen, run_id: str, delay: float) -> Moment:
    """A worker frozen by the run's node pause (NF-4): a worker whose agent (the check's own)
    answers no exec within :data:`FROZEN_PROBE_S` twice in a row — the freeze cuts the exec channel
    (its kubelet frozen), nothing else of NF-4's test does —, then ``delay`` s. The armed thaw is not
    what is watched: the freeze follows it within ~2 s, and a frozen node lists no units (a watch
    on it saw the thaw armed only once the node was thawed). The clean after SIGKILL need not say
    it waited: its exec into the frozen node may just hang until the thaw fires and then answer."""
    agent = check.host.agent(check, f"watch-{run_id.rsplit('-', 1)[-1]}")
    try:
        quiet: Counter = Counter()  # consecutive probes each worker did not answer
        found: list[str] = []

        def frozen() -> bool:
            for node in agent.workers():
                if answers(agent, node, FROZEN_PROBE_S):
                    quiet.pop(node, None)
                else:
                    quiet[node] += 1
            found[:] = sorted(node for node, n in quiet.items() if n >= 2)
            return bool(found)

        if not _wait(proc, frozen) or not _wait(proc, _after(delay)):
            return Moment(False, False, "ended before a worker froze")
        return Moment(True, True, f"{delay:.1f} s after {', '.join(found)} answered no exec within "
                                  f"{FROZEN_PROBE_S:g} s twice: frozen")
    finally:
        agent.close()


def answers(access, node: str, within_s: float) -> bool:
    """Whether ``node``'s agent runs ``true`` within ``within_s`` s. The exec runs in a thread of its
    own and is waited for that long only: on a frozen node its websocket connect (which has no
    timeout) may hang until the thaw, so the exec's own timeout is not enough (a run on the foreign
    cluster saw no probe fail though its worker was frozen). A hung probe's thread ends with the thaw."""
    pool = ThreadPoolExecutor(max_workers=1)
    probe = pool.submit(node_run, access, node, ["true"], within_s)
    pool.shutdown(wait=False)
    try:
        probe.result(timeout=within_s)
    except (FutureTimeout, NodeUnreachable, RuntimeError):
        return False
    return True


def _cordoned_moment(check: Check, proc: subprocess.Popen, run_id: str, delay: float) -> Moment:
    """A worker cordoned by the run's drain (DR-2): a node unschedulable with the run's
    :data:`CORDONED_BY` mark seen, then ``delay`` s, and the node still so (the hit)."""
    assert check.kubeconfig is not None
    seen: list[str] = []

    def cordoned() -> bool:
        try:
            seen[:] = check.host.cordoned_by(check.kubeconfig, run_id)
        except Exception:  # noqa: BLE001 - the API not answering one poll: the next one asks again
            return False
        return bool(seen)

    if not _wait(proc, cordoned) or not _wait(proc, _after(delay)):
        return Moment(False, False, "ended before it cordoned a node")
    first = list(seen)
    still = cordoned()
    what = f"{', '.join(first)} still cordoned" if still else f"{', '.join(first)} no longer cordoned"
    return Moment(True, still, f"{delay:.1f} s after {', '.join(first)} was seen cordoned by it: {what}")


def _stop(check: Check, proc: subprocess.Popen) -> int:
    """Wait for the run to end; SIGKILL its process group after ``EXIT_TIMEOUT_S``."""
    try:
        return proc.wait(timeout=EXIT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        check.host.signal(proc, signal.SIGKILL, group=True)
        proc.wait()
        return -signal.SIGKILL


def one_run(check: Check, i: int, variant: Variant) -> Row:
    """Run ``i``: start it, stop it at the variant's moment, and look at what it left."""
    run_id = run_id_of(check, i)
    reports, log = check.work / f"run-{i:03d}", check.work / f"run-{i:03d}.log"
    row = Row(i, variant, run_id, str(log))
    kept_before = variant.cluster != FOREIGN and check.names[KEPT] in check.host.clusters()
    before = Before(files(check.state), files(check.host_lock_dir))
    started = time.monotonic()
    proc = check.host.start(command(variant, check, reports), {**check.env, "E2E_RUN_ID": run_id}, log)
    try:
        if variant.moment == END:  # a clean end: nothing sent
            code = proc.wait(timeout=EXIT_TIMEOUT_S + KEPT_SETUP_TIMEOUT_S)
            row.hit, row.moment, row.exit = True, f"no signal: ended after {time.monotonic() - started:.1f} s", code
            look_after(check, row, reports, log, kept_before, before)
            return row
        moment = wait_for_moment(check, variant, proc, run_id, log)
        first_at = time.monotonic()
        group = variant.target == GROUP
        row.after_last_test = LAST_TEST_REPORTED in log.read_text(errors="replace")
        row.signalled = moment.reached and check.host.signal(proc, getattr(signal, variant.signals[0]), group)
        row.hit = row.signalled and moment.hit
        if not row.signalled:
            row.moment = f"no signal: {moment.note}"
        else:
            row.moment = f"{variant.signals[0]} at {first_at - started:.1f} s, {moment.note}"
            for name in variant.signals[1:]:
                gap = check.rng.uniform(*SECOND_SIGNAL_AFTER_S)
                if _wait(proc, _after(gap)) and check.host.signal(proc, getattr(signal, name), group):
                    row.moment += f"; {name} again +{time.monotonic() - first_at:.1f} s, during the cleanup"
                else:
                    row.hit = False
                    row.moment += f"; no second {name}: exited within {gap:.1f} s"
        code = _stop(check, proc)
        # a signal that raced the last test's report landed after it too when the report is there
        text = log.read_text(errors="replace")
        row.after_last_test = row.after_last_test or (row.signalled and LAST_TEST_REPORTED in text)
        row.ended_before_death = bool(PYTEST_LAST_LINE.search(text.rstrip().rpartition("\n")[2]))
    except BaseException:  # the check itself stopped: stop the run too, with its cleanup
        check.host.signal(proc, signal.SIGINT, group=True)
        _stop(check, proc)
        raise
    row.exit = code if code >= 0 else f"{code} ({signal.Signals(-code).name})"
    if row.signalled:
        row.exit_after_s = round(time.monotonic() - first_at, 1)
    if variant.cluster == FOREIGN and "SIGKILL" in variant.signals and row.signalled:
        row.clean, row.fired = clean_after_kill(check, i)
        if variant.moment == ARMED and not row.fired:  # the run's own undo came first: not killed while armed
            row.hit = False
            row.moment += "; no armed undo left to fire: it was no longer armed at the kill"
        if variant.moment == CORDONED and "uncordoned" not in row.clean:  # the run's uncordon came first
            row.hit = False
            row.moment += "; no cordon left to undo: the run had uncordoned the node before the kill"
    look_after(check, row, reports, log, kept_before, before)
    return row


def clean_after_kill(check: Check, i: int) -> tuple[str, list[tuple[str, str]]]:
    """``python -m e2e.cli.clean --kubeconfig`` (``make clean KUBECONFIG=…``) after run ``i`` was
    killed: ``(exit <code> (<s> s; <n> armed undo(s) fired[; <what else it undid>]), [(node, unit)])``,
    the undos it fired (:func:`fired_by_clean`) and the rest :func:`undone_by_clean` reads, its
    output in ``clean-<i>.log``."""
    log = check.work / f"clean-{i:03d}.log"
    started = time.monotonic()
    with open(log, "w") as out:
        code = subprocess.run([sys.executable, "-m", "e2e.cli.clean", "--kubeconfig", str(check.kubeconfig)], cwd=ROOT,
                              env=check.env, stdout=out, stderr=subprocess.STDOUT).returncode
    text = log.read_text()
    fired = fired_by_clean(text)
    more = "".join(f"; {what}" for what in undone_by_clean(text))
    return f"exit {code} ({time.monotonic() - started:.0f} s; {len(fired)} armed undo(s) fired{more})", fired


# what e2e.cli.clean prints for an armed undo it fires: "removing <node>: ple2e-undo-….timer fired now (…)"
FIRED_NOW = re.compile(rf"^removing (?P<node>\S+): (?P<unit>{PREFIX}-undo-\S+)\.timer fired now", re.M)
# the times the node's journal gives a unit's lines (node clock, ISO with microseconds)
JOURNAL_ARGV = ("journalctl", "--no-pager", "-q", "-o", "short-iso-precise", "-u")
NODE_SERVICES = ("kubelet", "containerd")  # what a node fault stops: active on every worker after a run


def fired_by_clean(text: str) -> list[tuple[str, str]]:
    """``[(node, unit)]`` of the armed undos a ``make clean KUBECONFIG=…`` output says it fired."""
    return [(m["node"], m["unit"]) for m in FIRED_NOW.finditer(text)]


# what e2e.cli.clean prints for a node it waits for, a freeze it thaws, a dead run's cordon it undoes
WAITED = re.compile(r"^waiting up to \S+ s for node (?P<node>\S+) ", re.M)
THAWED = re.compile(r"^removing (?P<node>\S+): .* thawed \(a node pause of a dead run\)$", re.M)
UNCORDONED = re.compile(r"^removing cordon of node (?P<node>\S+) by dead run (?P<run>\S+) ", re.M)


def undone_by_clean(text: str) -> list[str]:
    """What else a ``make clean KUBECONFIG=…`` output says it did for a killed run, a phrase each:
    ``waited for <node> (out of reach)`` (a frozen node, its thaw armed: it thaws by itself),
    ``thawed <node> (<n> cgroups)``, ``uncordoned <node> (run <id>)``."""
    thawed = Counter(m["node"] for m in THAWED.finditer(text))
    return ([f"waited for {m['node']} (out of reach)" for m in WAITED.finditer(text)]
            + [f"thawed {node} ({n} cgroups)" for node, n in thawed.items()]
            + [f"uncordoned {m['node']} (run {m['run']})" for m in UNCORDONED.finditer(text)])


def armed_undos(access) -> list[str]:
    """``<node>: <unit>`` of every armed undo (``ple2e-undo-….timer`` active) on the workers of
    ``access`` (an :class:`AgentAccess`); a worker that does not answer (a fault cut it) counts as none."""
    armed = []
    for node in access.workers():
        try:
            armed += [f"{node}: {unit}" for unit, state in units_on(access, node).items()
                      if unit.startswith(f"{PREFIX}-undo-") and unit.endswith(".timer") and state == "active"]
        except (NodeUnreachable, RuntimeError):
            continue
    return armed


def undo_ran(access, node: str, unit: str) -> str:
    """When the armed undo ``unit`` ran on ``node``, from the node's journal (its clock):
    ``<node>: <unit> ran <first journal line of its service>``; ``… not in the journal`` without one."""
    try:
        lines = node_run(access, node, [*JOURNAL_ARGV, f"{unit}.service"]).strip().splitlines()
    except (NodeUnreachable, RuntimeError) as e:
        return f"{node}: {unit} journal unreadable ({str(e)[:120]})"
    return f"{node}: {unit} ran {lines[0].strip()}" if lines else f"{node}: {unit} not in the journal"


def left_on_workers(access, kube, fired: list[tuple[str, str]] = ()) -> tuple[list[str], list[str]]:
    """What the suite left on the workers of ``access`` (an :class:`AgentAccess` on the cluster of
    ``kube``), and when the undos ``fired`` by a clean ran there (:func:`undo_ran`): ``(left, ran)``.
    Left, a line each: ``<node>: <unit> <state>`` (a ``ple2e-*`` unit: an armed undo, a pending
    inject, a failed one), ``<node>: <n> <iptables|ip6tables> rules <comment>`` (the partition's,
    both families), ``<node>: <service> <state>`` (kubelet or containerd not active: stopped by a
    fault), ``<node>: <cgroup> <state>`` (a node pause's freeze left: e2e.cluster.freezer ``state``),
    ``<node>: registry pod <namespace>/<name>: <fault>`` (an IM registry fault still on in a
    registry pod not being deleted: e2e.faults.registry ``left_in_pod``),
    ``<node>: Ready=<status> (<reason>)`` (not Ready), ``<node>: not looked at (…)`` (the
    node does not answer: nothing there can be seen)."""
    left, ran = [], []
    try:
        registries = [p for p in kube.core.list_pod_for_all_namespaces(label_selector=REGISTRY_LABEL, _request_timeout=10).items
                      if not p.metadata.deletion_timestamp]
    except Exception as e:  # noqa: BLE001 - said in the row
        registries = []
        left.append(f"registry pods not listed ({type(e).__name__})")
    count = "; ".join(f"printf '{ipt} '; {ipt}-save 2>/dev/null | grep -c -- '{PARTITION_COMMENT}'"
                      for ipt in ("iptables", "ip6tables"))
    for node in access.workers():
        try:
            left += [f"{node}: {unit} {state}" for unit, state in units_on(access, node).items()]
            for line in node_run(access, node, ["sh", "-c", f"{count}; true"]).splitlines():
                family, _, n = line.strip().partition(" ")
                if n not in ("", "0"):
                    left.append(f"{node}: {n} {family} rules {PARTITION_COMMENT}")
            states = node_run(access, node, ["sh", "-c", f"systemctl is-active {' '.join(NODE_SERVICES)}; true"]).split()
            left += [f"{node}: {service} {state}" for service, state in zip(NODE_SERVICES, states, strict=False) if state != "active"]
            if len(states) != len(NODE_SERVICES):
                left.append(f"{node}: systemctl is-active {' '.join(NODE_SERVICES)} said {states}")
            left += [f"{node}: {line}" for line in frozen_on(access, node)]  # a node pause's freeze left behind
            for pod in (p for p in registries if p.spec.node_name == node):
                where = f"{pod.metadata.namespace}/{pod.metadata.name}"
                left += [f"{node}: registry pod {where}: {line}"
                         for line in left_in_pod(lambda on, argv: node_run(access, on, argv), node, pod.metadata.namespace,
                                                 pod.metadata.name)]
            ran += [undo_ran(access, node, unit) for on, unit in fired if on == node]
        except (NodeUnreachable, RuntimeError) as e:
            left.append(f"{node}: not looked at ({str(e)[:120]})")
        ready = node_ready(kube, node)
        if ready != "Ready=True":
            left.append(f"{node}: {ready}")
    return left, ran


def node_ready(kube, node: str) -> str:
    """``Ready=<status> (<reason>)`` of ``node``'s Ready condition, ``Ready unknown (…)`` when it cannot be read."""
    try:
        conditions = kube.core.read_node(node, _request_timeout=10).status.conditions or []
    except Exception as e:  # noqa: BLE001 - said in the row
        return f"Ready unknown ({type(e).__name__})"
    ready = next((c for c in conditions if c.type == "Ready"), None)
    return "no Ready condition" if ready is None else "Ready=True" if ready.status == "True" else \
        f"Ready={ready.status} ({ready.reason})"


def stray_agents(kube, own: tuple[str, ...]) -> list[str]:
    """Agent namespaces (``ple2e-agent-*`` or labelled :data:`AGENT_LABEL`) and agent pods not being
    deleted, but those named in ``own`` (the run's, said with its namespaces; the look's own):
    ``namespace <name>``, ``pod <namespace>/<name>``."""
    namespaces = kube.core.list_namespace(_request_timeout=10).items
    agents = {ns.metadata.name: ns.status.phase for ns in namespaces
              if ns.metadata.name.startswith(f"{PREFIX}-agent-") or AGENT_LABEL in (ns.metadata.labels or {})}
    left = [f"namespace {name} {phase}" for name, phase in sorted(agents.items())
            if phase != "Terminating" and name not in own]
    pods = kube.core.list_pod_for_all_namespaces(label_selector=AGENT_LABEL, _request_timeout=10).items
    left += [f"pod {p.metadata.namespace}/{p.metadata.name}" for p in pods
             if p.metadata.deletion_timestamp is None and agents.get(p.metadata.namespace) != "Terminating"
             and p.metadata.namespace not in own]
    return left


def cordons_left(kube, workers: list[str]) -> list[str]:
    """What a run's cordon left on the cluster of ``kube`` (DR-2's ``kubectl drain``,
    :mod:`e2e.cluster.cordon`): ``node <name>: cordon mark <key>=<run id>`` (``… (cordoned)`` when it
    is still unschedulable) for every node carrying :data:`CORDONED_BY` — a run killed before its
    uncordon, and no clean after it —, and ``node <name>: cordoned (spec.unschedulable)`` for a node
    of ``workers`` (those the node agent may enter: where a run may cordon) left unschedulable unmarked."""
    left = []
    for node in kube.core.list_node(_request_timeout=10).items:
        name, cordoned = node.metadata.name, bool(node.spec.unschedulable)
        run = (node.metadata.annotations or {}).get(CORDONED_BY)
        if run is not None:
            left.append(f"node {name}: cordon mark {CORDONED_BY}={run}" + (" (cordoned)" if cordoned else ""))
        elif cordoned and name in workers:
            left.append(f"node {name}: cordoned (spec.unschedulable)")
    return left


def on_workers(check: Check, i: int, fired: list[tuple[str, str]] = ()) -> tuple[list[str], list[str]]:
    """What the suite left on the cluster's workers and agent namespaces after run ``i``
    (:func:`left_on_workers`, :func:`stray_agents`, :func:`cordons_left`), seen through the check's own agent (namespace
    ``ple2e-agent-interrupt-check-…-look-<i>``, deleted after the look), and when the undos
    ``fired`` by the clean after it ran: ``(left, ran)``."""
    agent = check.host.agent(check, f"look-{i}")
    try:
        left, ran = left_on_workers(agent, agent.kube, fired)
    finally:
        agent.close()
    own = (agent.namespace, agent_namespace(run_id_of(check, i)))
    try:
        left += stray_agents(agent.kube, own)
    except Exception as e:  # noqa: BLE001 - said in the row: the agents could not be looked at
        left.append(f"agent namespaces and pods not looked at ({type(e).__name__}: {str(e)[:120]})")
    try:
        left += cordons_left(agent.kube, agent.workers())
    except Exception as e:  # noqa: BLE001 - said in the row: the nodes' cordons could not be looked at
        left.append(f"cordons not looked at ({type(e).__name__}: {str(e)[:120]})")
    return left, ran


def run_id_of(check: Check, i: int) -> str:
    """The run id of the check's run ``i`` (its namespaces' label)."""
    return f"interrupt-check-{check.stamp}-{i:03d}"


@dataclass
class Before:
    """The files of the state directory and of the host's lock directory before a run (:func:`files`)."""

    state: set[str]
    host_locks: set[str]


def look_after(check: Check, row: Row, reports: Path, log: Path, kept_before: bool, before: Before) -> None:
    """Fill in what run ``row`` left: clusters, containers, namespaces, state files (any file it
    made: ``before``), reports; on a ``--kubeconfig`` check namespaces, what is on the workers,
    state files, reports (not after SIGKILL)."""
    if row.variant.cluster == FOREIGN:
        assert check.kubeconfig is not None
        namespaces = check.host.namespaces(check.kubeconfig, row.run_id)
        row.namespaces = [name for name, phase in namespaces if phase != "Terminating"]
        row.deleting = sum(phase == "Terminating" for _, phase in namespaces)
        row.on_nodes, row.undo_ran = on_workers(check, row.run, row.fired)
        row.state_left, row.stays = leftovers(check.state, before.state)
        row.host_left = sorted(set(host_locks(check.host_lock_dir)) - before.host_locks)
        row.reports = ("ok: not judged (SIGKILL: the run had no finish)" if row.clean else
                       reports_verdict(reports, log.read_text(errors="replace") if log.exists() else "", row.run_id))
        return
    kept = check.names[KEPT]
    present = check.our_clusters()
    row.kept_lost = kept_before and kept not in present
    leaked = [c for c in present if c != kept]
    stray = [n for n in check.host.containers()
             if (m := NODE_CONTAINER.fullmatch(n)) and check.ours(m["cluster"]) and m["cluster"] not in present]
    row.clusters = leaked + stray
    for cluster in present:
        kubeconfig = check.kept_kubeconfig if cluster == kept else check.work / f"{cluster}.kubeconfig"
        try:
            if cluster != kept:
                kubeconfig.write_text(check.host.kubeconfig(cluster))
            namespaces = check.host.namespaces(kubeconfig, row.run_id)
        except Exception as e:  # noqa: BLE001 - said in the row: its namespaces are unknown
            row.namespaces.append(f"{cluster}: cannot list ({str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__})")
            continue
        row.namespaces += [f"{cluster}/{name}" for name, phase in namespaces if phase != "Terminating"]
        row.deleting += sum(phase == "Terminating" for _, phase in namespaces)
    row.state_left, row.stays = leftovers(check.state, before.state)
    row.host_left = sorted(set(host_locks(check.host_lock_dir)) - before.host_locks)
    row.reports = reports_verdict(reports, log.read_text(errors="replace") if log.exists() else "", row.run_id)
    for cluster in leaked:  # the next run starts without it (a cluster of this check's own state directory)
        check.host.delete_cluster(cluster)


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def run_all(check: Check, runs: int, variants: tuple[Variant, ...] = VARIANTS,
            say: Callable[[str], None] = _say) -> list[Row]:
    """Runs until ``runs`` were stopped at their moment (at most ``2 * runs`` runs), each row said as it is made."""
    rows: list[Row] = []
    foreign = any(v.cluster == FOREIGN for v in variants)
    say(table_line(list(FOREIGN_COLUMNS if foreign else COLUMNS)))
    for i in range(1, 2 * runs + 1):
        hits = sum(r.hit for r in rows)
        if hits >= runs:
            break
        variant = variant_of(hits, variants)
        if variant.cluster in (KEPT, KUBECONFIG):
            ensure_kept(check)
        rows.append(one_run(check, i, variant))
        say(table_line(rows[-1].foreign_cells() if foreign else rows[-1].cells()))
    return rows


def remove_clusters(check: Check) -> list[str]:
    """Delete the check's clusters (only those: see :meth:`Check.ours`); their names."""
    gone = check.our_clusters()
    for cluster in gone:
        check.host.delete_cluster(cluster)
    return gone


def _why(e: Exception) -> str:
    said = (getattr(e, "stderr", None) or "").strip()
    return f"{e}: {said}" if said else str(e)


def main(argv: list[str] | None = None, host: Host | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=f"variants (the k-th run to reach its moment has variant k mod {len(VARIANTS)}):\n  "
                                       + "\n  ".join(v.label for v in VARIANTS)
                                       + f"\nwith --kubeconfig (k mod {len(FOREIGN_VARIANTS)}):\n  "
                                       + "\n  ".join(v.label for v in FOREIGN_VARIANTS))
    p.add_argument("--runs", type=int, default=20, help="how many runs to stop at their moment (20: every variant twice)")
    p.add_argument("--seed", type=int, default=None, help="seed of the random moments")
    p.add_argument("--out", default=None, help="write the table (markdown) here too")
    p.add_argument("--kubeconfig", default=None, help="check runs on this cluster (one the suite did not make) with "
                                                       "--node-agent instead (FOREIGN_VARIANTS; no kind, no Docker)")
    p.add_argument("--variants", default=None, help="run only these variants (ids separated by commas, e.g. f7,f8); "
                                                    "--runs counts their runs, cycling through them")
    p.add_argument("--select", default="-m smoke", help="with --kubeconfig: the runs' selection (pytest arguments)")
    p.add_argument("--agent-args", default="", help="with --kubeconfig: more options of the runs, e.g. "
                                                    "'--node-selector topology.kubernetes.io/zone=zone-a'")
    args = p.parse_args(argv)
    try:
        variants = picked(FOREIGN_VARIANTS if args.kubeconfig else VARIANTS, args.variants)
    except ValueError as e:
        p.error(str(e))
    if args.kubeconfig:
        return main_foreign(args, host or Host(os.environ.get("E2E_KIND", "kind")), variants)
    if not os.environ.get("E2E_NODE_IMAGE"):
        print("interrupt_check: E2E_NODE_IMAGE is not set (source reports/profile.env first)", file=sys.stderr)
        return 2
    host = host or Host(os.environ.get("E2E_KIND", "kind"))
    work = Path(tempfile.mkdtemp(prefix="interrupt-check-"))
    try:
        check = prepare(work, host, random.Random(args.seed))
    except (SetupError, OSError, subprocess.CalledProcessError) as e:
        print(f"interrupt_check: cannot start: {_why(e)}", file=sys.stderr)
        return 2
    try:
        rows = run_all(check, args.runs, variants)
    except (SetupError, OSError, subprocess.CalledProcessError) as e:
        print(f"interrupt_check: {_why(e)} (work directory {work})", file=sys.stderr)
        return 2
    finally:
        remove_clusters(check)
    return _published(report(rows, args.runs, variants, check.host_lock_dir), args.out,
                      f"work directory {work}: each run's log and reports; the state directory {check.state}")


def main_foreign(args: argparse.Namespace, host: Host, variants: tuple[Variant, ...] = FOREIGN_VARIANTS) -> int:
    """The check on the cluster of ``args.kubeconfig`` (module doc), cycling through ``variants``."""
    kubeconfig = Path(args.kubeconfig).expanduser().resolve()
    if not kubeconfig.is_file():
        print(f"interrupt_check: no kubeconfig {kubeconfig}", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="interrupt-check-"))
    check = Check(host, work, {**os.environ, "E2E_STATE_DIR": str(work / "state")}, {}, {}, random.Random(args.seed),
                  kubeconfig=kubeconfig, select=tuple(shlex.split(args.select)), agent_args=tuple(shlex.split(args.agent_args)),
                  agent_image=os.environ.get("E2E_BUSYBOX_IMAGE") or workload_images()["busybox_image"])
    try:
        rows = run_all(check, args.runs, variants)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"interrupt_check: {_why(e)} (work directory {work})", file=sys.stderr)
        return 2
    return _published(report(rows, args.runs, variants, check.host_lock_dir), args.out,
                      f"work directory {work}: each run's log and reports, each clean's log; the state directory {check.state}")


def _published(reported: tuple[str, bool], out: str | None, where: str) -> int:
    """Print the check's table (:func:`report`'s text) with ``where`` its files are, write it to
    ``out`` when given; the exit status: 0 when every run was ok, else 1."""
    text, ok = reported
    text += f"\n\n{where}"
    print(text)
    if out:
        Path(out).write_text(text + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
