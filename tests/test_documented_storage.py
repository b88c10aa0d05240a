"""e2e.documented.storage: ES-7's disk signals judged against the node's own hard eviction
thresholds (issue 42 item 3): built from the node's running evictionHard (configz), the source
naming the setting and the node; the upstream defaults, said so, when it is unknown."""

from __future__ import annotations

import pytest

from e2e.documented import storage as doc
from e2e.judge.expectations import REGISTRY
from e2e.judge.measurements import FAIL, PASS, Judge, MeasurementLog

GIB = 2 ** 30
# the foreign cluster's kubelets (hack/foreign-cluster.yaml), as configz answers
FOREIGN = {"evictionHard": {"imagefs.available": "1%", "memory.available": "150Mi", "nodefs.available": "1%",
                            "nodefs.inodesFree": "1%"}}
KIND = {"evictionHard": {"imagefs.available": "0%", "nodefs.available": "0%", "nodefs.inodesFree": "0%"}}


def test_the_thresholds_are_the_nodes_own_with_the_setting_and_node_named():
    hard = doc.eviction_hard_of("w2", FOREIGN)
    assert hard.thresholds == FOREIGN["evictionHard"] and hard.assumed == ""
    assert hard.source == "kubelet evictionHard (configz of node w2)"
    built = doc.disk_signal_from("nodefs.available", hard, 100 * GIB)
    assert (built.case, built.name, built.unit, built.documented) == ("ES-7", "nodefs.available", "bytes", GIB)
    assert (built.band.low, built.band.high) == (GIB, float("inf"))
    assert built.source.startswith("kubelet evictionHard (configz of node w2): nodefs.available=1%; [UP] ")


@pytest.mark.parametrize("config, error, why", [({}, "configz: ApiException: 403", "configz: ApiException: 403"),
                                                ({"volumeStatsAggPeriod": "1m0s"}, None, "configz has no evictionHard")])
def test_unknown_thresholds_are_the_upstream_defaults_said_so(config, error, why):
    hard = doc.eviction_hard_of("w1", config, error)
    assert hard.thresholds == doc.DEFAULT_EVICTION_HARD
    assert hard.assumed.startswith(f"the running evictionHard of node w1 is unknown ({why}): upstream defaults assumed")
    assert "pkg/kubelet/eviction/defaults_linux.go DefaultEvictionHard" in hard.assumed
    built = doc.disk_signal_from("imagefs.available", hard, 100 * GIB)
    assert built.documented == 15 * GIB
    assert "assumed for node w1: imagefs.available=15%" in built.source


@pytest.mark.parametrize("statement, capacity, amount", [
    ("10%", 1000, 100), ("1%", 999, 9), ("0%", 1000, 0), ("100%", 1000, 0), (None, 1000, 0),
    ("150Mi", 10 * GIB, 150 * 2 ** 20), ("2G", 10 * GIB, 2 * 10 ** 9), ("5000", 10 ** 6, 5000)])
def test_threshold_amount(statement, capacity, amount):
    assert doc.threshold_amount(statement, capacity) == amount


@pytest.mark.parametrize("statement", ["ten%", "lots", "1.5Xi"])
def test_a_threshold_that_cannot_be_read_is_named(statement):
    with pytest.raises(ValueError, match="eviction threshold"):
        doc.threshold_amount(statement, 1000)


@pytest.mark.parametrize("signal", ["nodefs.available", "nodefs.inodesFree", "imagefs.available", "imagefs.inodesFree"])
def test_no_threshold_nothing_judged(signal):
    """kind's 0 % (ignored by the kubelet) and a signal the configuration leaves out (the foreign
    cluster's imagefs.inodesFree) document nothing to stay above: no value, not a band of [0, ∞)."""
    assert doc.disk_signal_from(signal, doc.eviction_hard_of("kind-control-plane", KIND), 10 ** 6) is None
    assert (doc.disk_signal_from(signal, doc.eviction_hard_of("w2", FOREIGN), 10 ** 6) is None) == (signal == "imagefs.inodesFree")


def test_an_unknown_signal_is_refused():
    with pytest.raises(ValueError, match="not a disk eviction signal"):
        doc.disk_signal_from("memory.available", doc.eviction_hard_of("n", FOREIGN), GIB)


def test_a_node_is_judged_by_its_own_thresholds(tmp_path):
    """5 % of the disk free passes on a node whose kubelet evicts below 1 % (the foreign cluster's
    setting) and fails on a node running the upstream 10 % (its configz unknown): the same
    measurement, two documented values, each naming where it came from."""
    judge = Judge(MeasurementLog(tmp_path / "m.json"), test="t", run_id="r", kubernetes="v1.37.2", minor=37, registry=REGISTRY)
    own = doc.disk_signal_from("nodefs.available", doc.eviction_hard_of("w2", FOREIGN), 100 * GIB)
    assumed = doc.disk_signal_from("nodefs.available", doc.eviction_hard_of("w1", {}, "configz: timeout"), 100 * GIB)
    assert judge.expect_against(own, 5 * GIB) is True
    assert judge.expect_against(assumed, 5 * GIB) is False
    assert [(m["verdict"], m["band"][0]) for m in judge.log.read()["measurements"]] == [(PASS, GIB), (FAIL, 10 * GIB)]
