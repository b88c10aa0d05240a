"""hack/census.py: the selection decided by the placement functions on the recorded foreign facts
(tests/data/facts: zone-a worker default, zone-b worker capped at 20 s, tainted control plane)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from test_facts import DATA, W1, W2, recorded_get

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
