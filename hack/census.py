"""Which selected tests would run on a ``--kubeconfig`` cluster, and why the others would skip — no
test body run, nothing sent but API reads: placement and each test's needs against the facts, so a
skip inside a test's body (a node-reboot needs a kind node container; a node the freezer cannot freeze) is counted as a run.

    .venv/bin/python hack/census.py --kubeconfig PATH [--context NAME] [--node-agent [--node-selector L=V]] [-m "not slow"] [paths…]
    .venv/bin/python hack/census.py --facts REPORTS/facts.json [--node-agent] [-m …] [paths…]

It collects the selection (``pytest --collect-only`` with the suite's plugin; default ``-m "not
slow"`` over ``scenarios``: the default selection and the workload families) and decides each test
with the functions a run uses: its profile's needs (:func:`e2e.plugin.clusters.profile_needs_of`,
narrowed by the test's ``needs``) against the cluster's facts
(:func:`e2e.cluster.facts.choose_node`; read live from ``--kubeconfig`` through its API server on
127.0.0.1, or a run's ``facts.json``, its ``default`` entry), the ``k8s_minors`` and ``min_k8s``
markers against the server version, and the ``skip`` markers. Without ``--node-agent``, a test whose
module reaches into a node (``node_exec``, ``e2e.faults``) is counted "may skip: needs node access"
— decided in its body, so the census names the module, not the outcome. With ``--node-selector``
(as the run's: the workers the node agent may enter; read live, so with ``--kubeconfig`` only) the
tests are placed as a run places them (:func:`e2e.plugin.clusters.prefer_selected`), and a test
whose module enters a node while none of its nodes is selected "may skip". Prints one row per test
and the counts per outcome and reason (``--json FILE`` writes both, and with ``--plan`` the totals per node). Exit 0; 4 on bad input.

``--plan`` (the dry run of issue 42 item 5) adds what each test that is not skipped would do to a
node: each action its ``node_faults`` markers declare (:data:`e2e.faults.actions.ACTIONS`, kept
true by tests/test_actions.py), its case and planned window (s), its undo, and per placed node
whether it ``would act`` (the test acts on one of its nodes) or ``would skip`` and why (no
``--node-agent`` for an action run in the node or a cordon; a node outside ``--node-selector``; a
control plane: never; an action its declaration puts on the control plane or a kind node
container, NF-7's, PC-6's, NR-1's); then the totals per node.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from e2e.cluster import facts as cluster_facts  # noqa: E402
from e2e.cluster.kind import DEFAULT_PROFILE  # noqa: E402
from e2e.faults.actions import ACTIONS, NODES, declared_marks, window_of  # noqa: E402
from e2e.cluster.nodeaccess import is_control_plane, matches, parse_node_selector, shown_selector  # noqa: E402
from e2e.plugin.clusters import prefer_selected, profile_name, profile_needs_of, profile_settings  # noqa: E402
from e2e.run.minors import off_minor  # noqa: E402

NODE_ACCESS = "may skip: needs node access (its module enters a node; run with --node-agent)"
# what in a module's source means a test of it may enter a node (Scenario.node_exec, a fault)
_NODE_WORDS = ("node_exec", "e2e.faults", "fault_helpers")


def _minor(server: str) -> int | None:
    parts = server.lstrip("v").split(".")
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None


class Census:
    """A pytest plugin: decides each collected item (:meth:`decide`) once collection is done."""

    def __init__(self, facts: dict, node_agent: bool, selected: tuple[str, ...] | None = None, selector: str = "",
                 plan: bool = False, control_planes: frozenset[str] = frozenset()):
        """``selected``: the workers ``--node-selector`` (``selector``) names; ``None``: no selector.
        ``plan``: add each row's ``actions`` (:meth:`actions`); ``control_planes``: nodes no action may touch."""
        self.facts, self.node_agent, self.selected, self.selector = facts, node_agent, selected, selector
        self.plan, self.control_planes = plan, control_planes
        self.rows: list[dict] = []
        self._needs: dict[tuple[str, tuple[str, ...] | None], tuple[tuple[str, ...], str]] = {}
        self._sources: dict[Path, str] = {}

    def _placement(self, config: pytest.Config, name: str, only: tuple[str, ...] | None) -> tuple[tuple[str, ...], str]:
        key = (name, only)
        if key not in self._needs:
            try:
                needs = profile_needs_of(config, name, only)
            except ValueError as e:
                self._needs[key] = ((), str(e))
                return self._needs[key]
            nodes, why = cluster_facts.choose_node(needs, self.facts)
            self._needs[key] = (prefer_selected(nodes, needs.nodes, self.selected) if nodes else nodes), why
        return self._needs[key]

    def _enters_node(self, item: pytest.Item) -> bool:
        path = Path(item.path)
        if path not in self._sources:
            self._sources[path] = path.read_text(errors="replace")
        return any(w in self._sources[path] for w in _NODE_WORDS)

    def decide(self, item: pytest.Item) -> dict:
        """``{"test", "profile", "outcome", "reason", "nodes"}``: outcome ``runs``, ``skips`` or ``may skip``."""
        name = profile_name(item)
        row: dict[str, object] = {"test": item.nodeid, "profile": name, "outcome": "runs", "reason": "", "nodes": []}
        server = str(self.facts.get("server") or "")
        minor = _minor(server)
        skip = item.get_closest_marker("skip")
        off = off_minor(item, minor, server) if minor is not None else None
        too_old = next((f"needs Kubernetes 1.{m.args[0]}+, cluster is {server}" for m in item.iter_markers("min_k8s")
                        if minor is not None and minor < m.args[0]), None)
        nodes, why = self._placement(item.config, name, profile_settings(item))
        if skip is not None:
            row.update(outcome="skips", reason=str(skip.kwargs.get("reason", skip.args[0] if skip.args else "skip")))
        elif too_old or off:
            row.update(outcome="skips", reason=too_old or off)
        elif not nodes:
            row.update(outcome="skips", reason=why)
        elif not self.node_agent and self._enters_node(item):
            row.update(outcome="may skip", reason=NODE_ACCESS, nodes=list(nodes))
        elif self.selected is not None and not set(nodes) & set(self.selected) and self._enters_node(item):
            row.update(outcome="may skip", nodes=list(nodes),
                       reason=f"may skip: its module enters a node and its nodes are outside --node-selector {self.selector}")
        else:
            row["nodes"] = list(nodes)
        return row

    def on_node(self, action: str, node: str) -> str:
        """``would act`` or ``would skip: <why>`` for ``action`` (an :data:`ACTIONS` name) on ``node``."""
        a = ACTIONS[action]
        if node in self.control_planes:
            return "would skip: a control-plane node"
        if (a.enters or action == "cordon") and not self.node_agent:
            return "would skip: needs --node-agent"
        if self.selected is not None and node not in self.selected:
            return f"would skip: outside --node-selector {self.selector}"
        return "would act"

    def actions(self, item: pytest.Item, row: dict) -> list[dict]:
        """``[{"action", "case", "window_s", "does", "undo", "nodes": {node: on_node}}]`` of the test's
        ``node_faults`` markers (none when it skips): ``nodes`` the placed nodes the declaration's
        ``node`` names (the first, the last, or all: the test acts on one of them)."""
        if row["outcome"] == "skips":
            return []
        out = []
        for action, case, window, which in declared_marks(item.iter_markers()):
            a = ACTIONS[action]
            placed = list(row["nodes"])
            nodes = {n: self.on_node(action, n) for n in (placed[:1] if which == "first" else placed[-1:]
                                                          if which == "last" else placed)}
            if which in ("control-plane", "kind"):  # a --kubeconfig run has neither: the test skips there
                nodes = {n: f"would skip: acts on {NODES[which]}" for n in placed[:1]}
            out.append({"action": action, "case": case, "window_s": window_of(window, str(row["profile"])),
                        "does": a.does, "undo": a.undo, "nodes": nodes})
        return out

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.rows = [self.decide(item) for item in session.items]
        if self.plan:
            for item, row in zip(session.items, self.rows, strict=True):
                row["actions"] = self.actions(item, row)


def counts(rows: list[dict]) -> list[tuple[str, str, int]]:
    """``(outcome, reason, tests)``, most tests first."""
    by = Counter((r["outcome"], r["reason"]) for r in rows)
    return [(o, why, n) for (o, why), n in sorted(by.items(), key=lambda kv: (-kv[1], kv[0]))]


def node_totals(rows: list[dict]) -> list[tuple[str, int, int, float, int]]:
    """``(node, actions that would act, tests, their planned windows summed (s), actions that would skip)``
    per node, by name; an action without a window counts 0 s."""
    acts: Counter = Counter()
    skips: Counter = Counter()
    tests: dict[str, set] = {}
    window: Counter = Counter()
    for r in rows:
        for a in r.get("actions", []):
            for node, verdict in a["nodes"].items():
                if verdict == "would act":
                    acts[node] += 1
                    window[node] += a["window_s"] or 0
                    tests.setdefault(node, set()).add(r["test"])
                else:
                    skips[node] += 1
    return [(n, acts[n], len(tests.get(n, ())), float(window[n]), skips[n]) for n in sorted(set(acts) | set(skips))]


def print_plan(rows: list[dict]) -> None:
    """The plan's table (one row per action of a test) and its totals per node."""
    print("\n## Plan: what each test would do to a node (nothing sent: this census read the API only)\n")
    print("| test | action | case | window | undo | node (several: the test acts on one of them) |\n| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        for a in r.get("actions", []):
            window = f"{a['window_s']:g} s" if a["window_s"] is not None else "—"
            nodes = "; ".join(f"{n}: {v}" for n, v in a["nodes"].items()) or "—"
            print(f"| {r['test']} | {a['action']}: {a['does']} | {a['case']} | {window} | {a['undo']} | {nodes} |")
    print("\n| node | actions that would act | tests | planned windows, summed | actions that would skip |\n"
          "| --- | --- | --- | --- | --- |")
    for node, acts, tests, window, skips in node_totals(rows):
        print(f"| {node} | {acts} | {tests} | {window:g} s | {skips} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--kubeconfig", help="read the facts of this cluster (API reads only)")
    where.add_argument("--facts", type=Path, help="a run's facts.json (its 'default' entry)")
    ap.add_argument("--context")
    ap.add_argument("--node-agent", action="store_true", help="the run would have --node-agent")
    ap.add_argument("--node-selector", metavar="LABEL=VALUE[,...]",
                    help="the run would have --node-selector (with --node-agent and --kubeconfig: the nodes' labels are read live)")
    ap.add_argument("-m", dest="markers", default="not slow",
                    help='pytest -m (default: "not slow": make e2e\'s selection and the workload families)')
    ap.add_argument("--json", type=Path, help="write the rows and counts here")
    ap.add_argument("--plan", action="store_true",
                    help="also list what each test would do to which node (the dry run: node_faults markers)")
    ap.add_argument("paths", nargs="*", default=["scenarios"])
    args = ap.parse_args(argv)
    if args.node_selector and not (args.node_agent and args.kubeconfig):
        print("census: --node-selector needs --node-agent (as a run's) and --kubeconfig (a facts.json holds no node labels)",
              file=sys.stderr)
        return 4
    selected, selector, control_planes = None, "", frozenset()
    try:
        if args.facts:
            known = json.loads(args.facts.read_text())
            if not isinstance(known, dict) or not isinstance(known.get(DEFAULT_PROFILE), dict):
                raise ValueError(f"{args.facts}: no '{DEFAULT_PROFILE}' entry (a run's facts.json of a --kubeconfig run)")
            facts = known[DEFAULT_PROFILE]
        else:
            from e2e.cluster.kube import Kube

            kube = Kube(args.kubeconfig, args.context)
            facts = cluster_facts.collect(kube)
            nodes = kube.nodes()
            control_planes = frozenset(n["metadata"]["name"] for n in nodes if is_control_plane(n))
            if args.node_selector:
                wanted = parse_node_selector(args.node_selector)
                selector = shown_selector(wanted)
                selected = tuple(sorted(n["metadata"]["name"] for n in nodes
                                        if not is_control_plane(n) and matches(n, wanted)))
    except (OSError, ValueError) as e:
        print(f"census: {e}", file=sys.stderr)
        return 4
    census = Census(facts, args.node_agent, selected, selector, args.plan, control_planes)
    # --kubeconfig only tells the suite's plugin that no kind cluster is meant; collection reads nothing of it
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "-m", args.markers,
                          "--kubeconfig", args.kubeconfig or str(args.facts), *args.paths], plugins=[census])
    if rc not in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        print(f"{out.getvalue()}census: collection failed (pytest exit {int(rc)})", file=sys.stderr)
        return 4
    table = counts(census.rows)
    chosen = f", --node-selector {selector}: {', '.join(selected or ()) or 'no worker'}" if selector else ""
    print(f"\n## Census: {len(census.rows)} tests (-m {args.markers!r}, {facts.get('server')}, "
          f"node agent {'on' if args.node_agent else 'off'}{chosen})\n")
    print("| test | profile | outcome | nodes / reason |\n| --- | --- | --- | --- |")
    for r in census.rows:
        print(f"| {r['test']} | {r['profile']} | {r['outcome']} | {', '.join(r['nodes']) or r['reason']} |")
    print("\n| outcome | reason | tests |\n| --- | --- | --- |")
    for outcome, why, n in table:
        print(f"| {outcome} | {why or '—'} | {n} |")
    if args.plan:
        print_plan(census.rows)
    if args.json:
        out = {"rows": census.rows, "counts": table, **({"totals": node_totals(census.rows)} if args.plan else {})}
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
