"""hack/census.py: the selection decided by the placement functions on the recorded foreign facts
(tests/data/facts: zone-a worker default, zone-b worker capped at 20 s, tainted control plane)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from test_facts import CP, DATA, W1, W2, recorded_get

from e2e.cluster import facts

ROOT = Path(__file__).resolve().parents[1]


def census(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    server = json.loads((DATA / "version.json").read_text())["git_version"]
    known = facts.facts_from(server, json.loads((DATA / "nodes.json").read_text()), recorded_get)
    (tmp_path / "facts.json").write_text(json.dumps({"default": known}))
    r = subprocess.run([sys.executable, str(ROOT / "hack" / "census.py"), "--facts", str(tmp_path / "facts.json"),
                        "--json", str(tmp_path / "census.json"), *args], capture_output=True, text=True, cwd=ROOT)
    return r, (json.loads((tmp_path / "census.json").read_text()) if r.returncode == 0 else {})


def test_census_places_each_test_as_a_run_would(tmp_path):
    r, got = census(tmp_path, "--node-agent", "scenarios/crashloop", "scenarios/profiles", "scenarios/faults/test_multi_node_faults.py")
    assert r.returncode == 0, r.stderr
    rows = {row["test"].split("::", 1)[1]: row for row in got["rows"]}
    # CL-3 (the default 5 min cap) on the zone-a worker only; CL-6 on the 20 s-capped one
    assert rows["test_exit_zero_loops_too"] == {"test": "scenarios/crashloop/test_crashloop.py::test_exit_zero_loops_too",
                                                "profile": "default", "outcome": "runs", "reason": "", "nodes": [W1]}
    assert rows["test_configured_backoff_cap"]["nodes"] == [W2]
    assert rows["test_pods_services_and_dns_across_nodes"]["nodes"] == [W1, W2]
    # NF-4 and NF-8 ask for two schedulable nodes, not for NF-9's shutdown grace periods
    for test in ("test_worker_lost[fast-lifecycle]", "test_worker_partitioned[fast-lifecycle-reject]",
                 "test_worker_partitioned[fast-lifecycle-drop]"):
        assert (rows[test]["outcome"], rows[test]["nodes"]) == ("runs", [W1, W2])
    shutdown = rows["test_graceful_node_shutdown"]
    assert shutdown["outcome"] == "skips" and shutdown["reason"].startswith(
        "needs 2 schedulable nodes with shutdownGracePeriod 30s, shutdownGracePeriodCriticalPods 10s; ")
    assert sum(n for _, _, n in got["counts"]) == len(rows)
    assert "| outcome | reason | tests |" in r.stdout and "test_crashloop.py::test_previous_logs | default | runs |" in r.stdout


def test_without_the_agent_a_module_that_enters_a_node_may_skip(tmp_path):
    r, got = census(tmp_path, "scenarios/probes")
    assert r.returncode == 0, r.stderr
    outcomes = {row["outcome"] for row in got["rows"]}
    assert outcomes == {"may skip"}  # test_probes.py reads containerd's configuration in a node


def test_a_facts_file_without_default_is_refused(tmp_path):
    bad = tmp_path / "facts.json"
    bad.write_text(json.dumps({"multi-node": {}}))
    r = subprocess.run([sys.executable, str(ROOT / "hack" / "census.py"), "--facts", str(bad)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 4 and f"{bad}: no 'default' entry" in r.stderr


def _census_live(tmp_path: Path, *args: str) -> tuple[int, dict]:
    """hack/census.py's main on the recorded foreign cluster as if read live (--kubeconfig: the facts
    and the nodes' labels from tests/data/facts), in a process of its own (its pytest.main must not
    import the suite's modules into this one)."""
    script = f"""
import json, sys
sys.path[:0] = [{str(ROOT)!r}, {str(Path(__file__).parent)!r}]
from e2e.cluster import facts, kube
from test_facts import DATA, recorded_get
nodes = json.loads((DATA / "nodes.json").read_text())
server = json.loads((DATA / "version.json").read_text())["git_version"]
facts.collect = lambda k: facts.facts_from(server, nodes, recorded_get)
kube.Kube = lambda *a: type("K", (), {{"nodes": lambda self: nodes}})()
import runpy
sys.argv = ["census.py", *sys.argv[1:]]
runpy.run_path({str(ROOT / "hack" / "census.py")!r}, run_name="__main__")
"""
    r = subprocess.run([sys.executable, "-c", script, "--kubeconfig", "recorded", "--json", str(tmp_path / "c.json"), *args],
                       capture_output=True, text=True, cwd=ROOT)
    return r.returncode, (json.loads((tmp_path / "c.json").read_text()) if r.returncode == 0 else {"stderr": r.stderr})


def test_node_selector_places_the_tests_on_the_selected_workers(tmp_path):
    """A new user's trial: with --node-selector topology.kubernetes.io/zone=zone-a, NF-5 was placed on
    the zone-b worker (outside the selector) and skipped there."""
    rc, got = _census_live(tmp_path, "--node-agent", "--node-selector", "topology.kubernetes.io/zone=zone-a",
                           "scenarios/faults/test_kubelet.py", "scenarios/profiles", "scenarios/crashloop")
    assert rc == 0
    rows = {row["test"].split("::", 1)[1]: row for row in got["rows"]}
    assert rows["test_kubelet_restart[restart]"]["nodes"] == [W1]  # any schedulable node: the selected one
    capped = rows["test_configured_backoff_cap"]  # only the zone-b worker has the 20 s cap: it stays there
    assert (capped["nodes"], capped["outcome"]) == ([W2], "runs")  # its module enters no node
    rc, got = _census_live(tmp_path, "--node-agent", "--node-selector", "topology.kubernetes.io/zone=zone-b",
                           "scenarios/faults/test_kubelet.py", "scenarios/probes")
    assert rc == 0
    rows = {row["test"].split("::", 1)[1]: row for row in got["rows"]}
    assert rows["test_kubelet_restart[restart]"]["nodes"] == [W2]
    # the default profile's tests run on the zone-a worker only; test_probes.py enters that node
    probes = [row for test, row in rows.items() if row["test"].startswith("scenarios/probes/")]
    assert probes and {(r["outcome"], tuple(r["nodes"])) for r in probes} == {("may skip", (W1,))}
    assert probes[0]["reason"] == ("may skip: its module enters a node and its nodes are outside --node-selector "
                                   "topology.kubernetes.io/zone=zone-b")


def test_node_selector_without_a_live_cluster_is_refused(tmp_path):
    r, _ = census(tmp_path, "--node-agent", "--node-selector", "zone=a")
    assert r.returncode == 4 and "--node-selector needs --node-agent (as a run's) and --kubeconfig" in r.stderr


def test_plan_lists_each_action_per_node_and_what_would_skip(tmp_path):
    """--plan: each declared action of a test that is not skipped, with its case, window and undo,
    and per placed node whether it would act; never the control plane; totals per node."""
    rc, got = _census_live(tmp_path, "--plan", "--node-agent", "--node-selector", "topology.kubernetes.io/zone=zone-a",
                           "scenarios/faults/test_kubelet.py", "scenarios/faults/test_taint_manager.py",
                           "scenarios/disruption/test_drain.py", "scenarios/crashloop")
    assert rc == 0, got
    rows = {row["test"].split("::", 1)[1]: row for row in got["rows"]}
    (stop,) = rows["test_kubelet_stopped[fast-lifecycle]"]["actions"]
    assert (stop["action"], stop["case"], stop["window_s"]) == ("kubelet_stopped", "NF-2", 120)
    assert stop["undo"].startswith("systemctl start kubelet; armed on the node first")
    assert stop["nodes"] == {W1: "would act"}  # placed on the selected worker
    assert [a["action"] for a in rows["test_kubelet_restart[sigkill]"]["actions"]] == ["kubelet_killed"]
    assert rows["test_previous_logs"]["actions"] == []
    for row in got["rows"]:
        assert all(CP not in a["nodes"] for a in row["actions"])
    # NF-4 needs both workers: the zone-b one is outside the selector
    rc, got = _census_live(tmp_path, "--plan", "--node-agent", "--node-selector", "topology.kubernetes.io/zone=zone-a",
                           "scenarios/faults/test_multi_node_faults.py")
    assert rc == 0
    rows = {row["test"].split("::", 1)[1]: row for row in got["rows"]}
    (pause,) = rows["test_worker_lost[fast-lifecycle]"]["actions"]
    assert (pause["action"], pause["case"], pause["window_s"]) == ("node_paused", "NF-4", 120)
    # the last placed node by name: the zone-b worker, outside the selector (the test skips there)
    assert pause["nodes"] == {W2: "would skip: outside --node-selector topology.kubernetes.io/zone=zone-a"}
    assert rows["test_graceful_node_shutdown"]["outcome"] == "skips" and rows["test_graceful_node_shutdown"]["actions"] == []
    # (node, would act, tests, windows summed, would skip): the fast-lifecycle NF-4 and NF-8 ×2 on zone-b's worker
    assert got["totals"] == [[W2, 0, 0, 0.0, 3]]
    rc, got = _census_live(tmp_path, "--plan", "--node-agent", "scenarios/faults/test_multi_node_faults.py",
                           "scenarios/faults/test_apiserver.py")
    assert rc == 0
    rows = {row["test"].split("::", 1)[1]: row for row in got["rows"]}
    assert rows["test_worker_partitioned[fast-lifecycle-drop]"]["actions"][0]["nodes"] == {W2: "would act"}
    assert rows["test_apiserver_outage"]["actions"][0]["nodes"] == {
        W1: "would skip: acts on the control plane: the suite's kind clusters only (the node agent never enters one)"}
    # NF-4 120 s + NF-8 90 s ×2 on zone-b's worker; NF-7's skip counted on the node it is placed on
    assert got["totals"] == [[W1, 0, 0, 0.0, 1], [W2, 3, 3, 300.0, 0]]
    # without the agent an action in the node would skip, a taint (API) would not
    rc, got = _census_live(tmp_path, "--plan", "scenarios/faults/test_kubelet.py", "scenarios/faults/test_taint_manager.py")
    assert rc == 0
    rows = {row["test"].split("::", 1)[1]: row for row in got["rows"]}
    assert set(rows["test_kubelet_restart[restart]"]["actions"][0]["nodes"].values()) == {"would skip: needs --node-agent"}
    assert set(rows["test_taint_manager"]["actions"][0]["nodes"].values()) == {"would act"}

