"""e2e.documented.faults: NF-1's and NF-2's node-lifecycle values built from a cluster's own
settings (issue 42 item 3): on the settings of a suite profile the same names and bands as the
registry's entries, on others their own, every source naming the settings and where they came from."""

from __future__ import annotations

import pytest

from e2e.cluster.facts import Lifecycle
from e2e.documented import faults as doc
from e2e.judge.expectations import REGISTRY, UnknownMeasurement
from e2e.judge.measurements import FAIL, PASS, Judge, MeasurementLog

LIVE = "kubelet configz nodeLeaseDurationSeconds=20 on node n; controller-manager node-monitor-grace-period 20s (profiles/x)"


@pytest.mark.parametrize("profile", [doc.FAST, doc.DEFAULT])
def test_a_profiles_settings_give_the_registrys_names_and_bands(profile):
    lc = Lifecycle(doc.LEASE_DURATION_S[profile], doc.GRACE_S[profile], doc.MONITOR_PERIOD_S[profile], LIVE)
    for built in [*doc.nf1_from(lc), doc.nf2_from(lc), doc.nf2_recovery_from(lc)]:
        entry = REGISTRY.lookup(built.case, built.name, 37)
        assert built.name.endswith(f"[{profile}]")
        assert (built.documented, built.band, built.unit) == (entry.documented, entry.band, entry.unit)
        assert built.verified_in == entry.verified_in
        assert "kubelet configz nodeLeaseDurationSeconds=20 on node n" in built.source


def test_other_settings_give_their_own_names_and_bands():
    lc = Lifecycle(30, 30, 2, LIVE)
    lease, median, gap_max = doc.nf1_from(lc)
    assert (lease.name, lease.documented) == ("lease_duration_s[lease=30s]", 30)
    assert (median.documented, median.band.low, median.band.high) == (7.5, 7.5, 8.0)
    assert (gap_max.band.low, gap_max.band.high) == (7.5, 14.999)
    unknown = doc.nf2_from(lc)
    assert unknown.name == "unknown_after_last_renew_s[grace=30s,period=2s]"
    assert (unknown.band.low, unknown.band.high) == (29, 30 + 2 * 2 + 1 + 1)
    assert unknown.source.endswith(LIVE)


def test_a_value_is_judged_against_the_band_of_the_live_settings(tmp_path):
    """A fast-lifecycle test on a cluster of default settings is judged by the default band, not
    the fast one: 55 s after the last renewal passes with grace 50 s and fails with grace 20 s."""
    judge = Judge(MeasurementLog(tmp_path / "m.json"), test="t", run_id="r", kubernetes="v1.37.2", minor=37, registry=REGISTRY)
    default = doc.nf2_from(Lifecycle(40, 50, 5, LIVE))
    assert judge.expect_against(default, 55.0) is True
    fast = doc.nf2_from(Lifecycle(20, 20, 1, LIVE))
    assert judge.expect_against(fast, 55.0) is False
    assert [(m["name"], m["verdict"], m["band"], m["source"]) for m in judge.log.read()["measurements"]] == [
        (default.name, PASS, [49.0, 62.0], default.source), (fast.name, FAIL, [19.0, 24.0], fast.source)]


def test_the_unreachable_taints_go_within_a_monitor_period_of_the_live_settings(tmp_path):
    """Seen on the foreign cluster (v1.37.2, upstream defaults: period 5 s, 2026-12-07 05:16): NF-2's
    excluded node lost its unreachable taints 2.559 s after its Ready update, beyond the [0, 2] s
    the fast profile's 1 s period gives: the NoExecute one goes in the next monitor pass
    (markNodeAsReachable), not on the update. Judged by the live period it holds; the fast band stays."""
    judge = Judge(MeasurementLog(tmp_path / "m.json"), test="t", run_id="r", kubernetes="v1.37.2", minor=37, registry=REGISTRY)
    default = doc.nf2_recovery_from(Lifecycle(40, 50, 5, LIVE))
    fast = doc.nf2_recovery_from(Lifecycle(20, 20, 1, LIVE))
    assert (default.name, fast.name) == ("taint_removed_after_ready_s[default-lifecycle]", "taint_removed_after_ready_s[fast-lifecycle]")
    assert judge.expect_against(default, 2.559) is True
    assert judge.expect_against(fast, 2.559) is False
    assert [(m["verdict"], m["band"]) for m in judge.log.read()["measurements"]] == [(PASS, [0.0, 6.0]), (FAIL, [0.0, 2.0])]
    assert "markNodeAsReachable" in default.source and "≤ 1 period 5 s" in default.why


# -- NF-3's FailedScheduling text from the nodes and the pod (issue 42: placement) ----------------

TEST_TAINT = {"key": "chaos.e2e/evict", "value": "1", "effect": "NoExecute"}
CONTROL_PLANE_TAINT = {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}
# what the API server's DefaultTolerationSeconds adds to a pod created with tolerations: []
DEFAULT_TOLERATIONS = [{"key": k, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
                       for k in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")]
# seen on the foreign cluster (v1.37.2, 2026-12-06): the pod pinned to zone-a's worker, which has the test taint
FOREIGN_MESSAGE = ("0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 2 node(s) had "
                   "untolerated taint(s). preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.")


def _node(name: str, *taints: dict, unschedulable: bool = False) -> dict:
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "spec": {"taints": list(taints), **({"unschedulable": True} if unschedulable else {})}}


@pytest.mark.parametrize("minor", [34, 36, 37])
def test_the_one_node_kind_cluster_gives_the_registrys_scheduling_message(minor):
    """The owned cluster's verdict is unchanged: its one node under the test taint, the pod unpinned."""
    built = doc.nf3_scheduling_from([_node("kind-control-plane", TEST_TAINT)], {"tolerations": DEFAULT_TOLERATIONS}, minor)
    entry = REGISTRY.lookup("NF-3", "scheduling_message", minor)
    assert (built.documented, built.pattern, built.minors) == (entry.documented, entry.pattern, entry.minors)
    assert built.verified_in == entry.verified_in


def test_the_foreign_clusters_nodes_and_the_pin_give_the_measured_message():
    nodes = [_node("cp", CONTROL_PLANE_TAINT), _node("zone-a", TEST_TAINT), _node("zone-b")]
    spec = {"tolerations": DEFAULT_TOLERATIONS, "nodeSelector": {"kubernetes.io/hostname": "zone-a"}}
    built = doc.nf3_scheduling_from(nodes, spec, 37)
    assert built.holds_for(FOREIGN_MESSAGE)
    assert not REGISTRY.lookup("NF-3", "scheduling_message", 37).holds_for(FOREIGN_MESSAGE)  # the fixed one-node text
    assert "node_affinity.go" in built.source and "FitError.Error" in built.source
    # pinned by a required node affinity (several nodes) instead: the same reasons
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["zone-a"]}]}]}}}
    assert doc.nf3_scheduling_from(nodes, {"tolerations": DEFAULT_TOLERATIONS, "affinity": affinity}, 37).holds_for(FOREIGN_MESSAGE)
    # 1.34-1.36: the DRA PostFilter's text before the preemption's
    old = FOREIGN_MESSAGE.replace("preemption:", "no new claims to deallocate, preemption:")
    assert doc.nf3_scheduling_from(nodes, spec, 36).holds_for(old)
    assert not doc.nf3_scheduling_from(nodes, spec, 37).holds_for(old)


def test_the_first_filter_that_rejects_a_node_names_it():
    spec = {"tolerations": [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]}
    assert doc.scheduling_reason(_node("a", TEST_TAINT, unschedulable=True), spec) == doc.SCHED_UNSCHEDULABLE
    assert doc.scheduling_reason(_node("a", {"key": "dedicated", "value": "db", "effect": "NoSchedule"}), spec) == doc.SCHED_TAINT
    assert doc.scheduling_reason(_node("a", {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}), spec) is None
    assert doc.scheduling_reason(_node("a", {"key": "soft", "effect": "PreferNoSchedule"}), spec) is None
    everything = {"tolerations": [{"operator": "Exists"}], "nodeSelector": {"kubernetes.io/hostname": "b"}}
    assert doc.scheduling_reason(_node("a", TEST_TAINT, CONTROL_PLANE_TAINT), everything) == doc.SCHED_AFFINITY
    message = doc.nf3_scheduling_from([_node("a", unschedulable=True), _node("b", TEST_TAINT), _node("c", TEST_TAINT)], spec, 37)
    assert message.holds_for("0/3 nodes are available: 1 node(s) were unschedulable, 2 node(s) had untolerated taint(s). "
                             "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.")


def test_what_cannot_be_predicted_is_a_clear_error():
    with pytest.raises(ValueError, match="node free passes the scheduler's filters"):
        doc.nf3_scheduling_from([_node("t", TEST_TAINT), _node("free")], {}, 37)
    fields = {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]}]}]}}}}
    with pytest.raises(ValueError, match="matchFields"):
        doc.scheduling_reason(_node("a"), fields)


@pytest.mark.parametrize("minor", [34, 37])
def test_nf5_documents_one_ready_flips_name_per_pod(minor):
    """A new user's trial: NF-5 recorded ``ready_flips[web]`` twice, once per web replica, and the
    reports (make compare, drift) keep only the last value of a name: each pod has its own name."""
    pods = ("no-probe", "readiness", "startup-readiness", *doc.NF5_WEB)
    assert doc.NF5_WEB == ("web-1", "web-2")
    names = [e.name for e in doc.NF5 if e.name.startswith("ready_flips[") and e.applies_to(minor, None)]
    assert sorted(names) == sorted(f"ready_flips[{p}]" for p in pods)
    assert REGISTRY.lookup("NF-5", "ready_flips[web-1]", minor) is not REGISTRY.lookup("NF-5", "ready_flips[web-2]", minor)
    with pytest.raises(UnknownMeasurement, match="not a measurement the registry knows"):
        REGISTRY.lookup("NF-5", "ready_flips[web]", minor)
    # not_ready_s[<pod>] (one per flipping pod) falls back to the documented not_ready_s
    assert REGISTRY.lookup("NF-5", "not_ready_s[web-2]", minor) is REGISTRY.lookup("NF-5", "not_ready_s", minor)
