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
and the counts per outcome and reason (``--json FILE`` writes both). Exit 0; 4 on bad input.
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

    def __init__(self, facts: dict, node_agent: bool, selected: tuple[str, ...] | None = None, selector: str = ""):
        """``selected``: the workers ``--node-selector`` (``selector``) names; ``None``: no selector."""
        self.facts, self.node_agent, self.selected, self.selector = facts, node_agent, selected, selector
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

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.rows = [self.decide(item) for item in session.items]


def counts(rows: list[dict]) -> list[tuple[str, str, int]]:
    """``(outcome, reason, tests)``, most tests first."""
    by = Counter((r["outcome"], r["reason"]) for r in rows)
    return [(o, why, n) for (o, why), n in sorted(by.items(), key=lambda kv: (-kv[1], kv[0]))]


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
    ap.add_argument("paths", nargs="*", default=["scenarios"])
    args = ap.parse_args(argv)
    if args.node_selector and not (args.node_agent and args.kubeconfig):
        print("census: --node-selector needs --node-agent (as a run's) and --kubeconfig (a facts.json holds no node labels)",
              file=sys.stderr)
        return 4
    selected, selector = None, ""
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
            if args.node_selector:
                wanted = parse_node_selector(args.node_selector)
                selector = shown_selector(wanted)
                selected = tuple(sorted(n["metadata"]["name"] for n in kube.nodes()
                                        if not is_control_plane(n) and matches(n, wanted)))
    except (OSError, ValueError) as e:
        print(f"census: {e}", file=sys.stderr)
        return 4
    census = Census(facts, args.node_agent, selected, selector)
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
    if args.json:
        args.json.write_text(json.dumps({"rows": census.rows, "counts": table}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
