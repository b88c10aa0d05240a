"""scenarios/faults: NF-2's skips say only what holds (test_kubelet.nf2_settings)."""

from __future__ import annotations

import sys

import pytest
from case_dirs import ROOT, import_case

from e2e.cluster.facts import Lifecycle
from e2e.documented import faults as doc
from e2e.run.scenario import Scenario

assert import_case(ROOT / "scenarios" / "faults" / "test_kubelet.py") is None
kubelet = sys.modules["scenarios.faults.test_kubelet"]


def _scenario(tmp_path, grace_s: float) -> Scenario:
    sc = Scenario(None, "ns", None, None, tmp_path, 37, None, None, nodes=("w1",),
                  facts={"nodes": {"cp": {}, "w1": {}, "w2": {}}})
    sc.lifecycle = lambda node: Lifecycle(40, grace_s, 5, f"node-monitor-grace-period {grace_s:g}s")  # type: ignore[method-assign]
    return sc


def test_on_several_nodes_the_plain_variant_names_the_exclude_disruption_variant_that_runs(tmp_path):
    sc = _scenario(tmp_path, 50)
    assert kubelet.nf2_settings(sc, "w1", doc.FAST, True).grace_s == 50  # the exclude-disruption variant goes on
    with pytest.raises(pytest.skip.Exception, match=r"only node .*also has cp, w2 \(the exclude-disruption variant measures"):
        kubelet.nf2_settings(sc, "w1", doc.FAST, False)


def test_a_grace_too_long_for_the_stop_skips_both_variants_naming_the_grace(tmp_path):
    """Before, the plain variant said 'the exclude-disruption variant runs' while that one skipped
    for the grace."""
    sc = _scenario(tmp_path, 120)
    for excluded in (True, False):
        with pytest.raises(pytest.skip.Exception, match=r"stops the kubelet 120 s: needs node-monitor-grace-period ≤"):
            kubelet.nf2_settings(sc, "w1", doc.FAST, excluded)
