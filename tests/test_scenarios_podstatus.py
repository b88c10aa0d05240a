"""scenarios/podstatus: PC-6's worker on a --kubeconfig cluster (test_podstatus)."""

from __future__ import annotations

import sys

import pytest
from case_dirs import ROOT, import_case

from e2e.run.scenario import Scenario

assert import_case(ROOT / "scenarios" / "podstatus" / "test_podstatus.py") is None
podstatus = sys.modules["scenarios.podstatus.test_podstatus"]


def test_through_the_agent_pc6_shuts_down_the_last_placed_node(tmp_path):
    """Before, PC-6 skipped on every --kubeconfig cluster ('needs the kind node containers')."""
    sc = Scenario(None, "ns", None, None, tmp_path, 37, None, None, nodes=("w1", "w2"))
    assert podstatus._shutdown_worker(sc) == "w2"
    with pytest.raises(pytest.skip.Exception, match="needs a schedulable node placed for the test, has none"):
        podstatus._shutdown_worker(Scenario(None, "ns", None, None, tmp_path, 37, None, None, nodes=()))
