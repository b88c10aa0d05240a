"""e2e.cluster.facts on API answers recorded from the foreign cluster (make foreign-cluster, v1.37.2:
a tainted control plane, workers in zone-a and zone-b, zone-b's kubelet capped at 20 s):
tests/data/facts/ holds ``GET /version``, ``/api/v1/nodes`` (images dropped), each node's
``proxy/configz`` and the ``kubernetes_feature_enabled`` lines of each ``/metrics``."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from e2e.cli.compare import facts_diff
from e2e.base import facts as base_facts
from e2e.cluster import facts
from e2e.plugin.clusters import ClusterInfo, default_needs, prefer_selected
from e2e.run.scenario import pin_to_nodes

DATA = Path(__file__).parent / "data" / "facts"
ROOT = Path(__file__).resolve().parents[1]
CP, W1, W2 = "pod-lifecycle-foreign-control-plane", "pod-lifecycle-foreign-worker", "pod-lifecycle-foreign-worker2"


def recorded_get(path: str) -> str:
    """The API server as recorded: configz and metrics by node, the API server's metrics."""
    if path == "/metrics":
        return (DATA / "apiserver-metrics.txt").read_text()
    node, what = path.removeprefix("/api/v1/nodes/").split("/proxy/")
    return (DATA / f"{node}.{what}{'.json' if what == 'configz' else '.txt'}").read_text()


@pytest.fixture
def recorded() -> dict:
    server = json.loads((DATA / "version.json").read_text())["git_version"]
    return facts.facts_from(server, json.loads((DATA / "nodes.json").read_text()), recorded_get)


def test_node_facts_from_the_recorded_answers(recorded):
    assert recorded["server"] == "v1.37.2"
    assert sorted(recorded["nodes"]) == [CP, W1, W2]
    cp, w1, w2 = (recorded["nodes"][n] for n in (CP, W1, W2))
    assert [n["kubelet"] for n in (cp, w1, w2)] == ["v1.37.2"] * 3
    assert all(n["runtime"].startswith("containerd://") for n in (cp, w1, w2))
    assert (cp["zone"], w1["zone"], w2["zone"]) == (None, "zone-a", "zone-b")
    assert cp["control_plane"] and not w1["control_plane"]
    assert cp["taints"] == ["node-role.kubernetes.io/control-plane:NoSchedule"] and w1["taints"] == []
    assert w2["kubelet_config"]["crashLoopBackOff"]["maxContainerRestartPeriod"] == "20s"
    # configz shows the kubelet's defaulted configuration: the 300 s cap of CL-1 where nothing set it
    assert w1["kubelet_config"]["crashLoopBackOff"]["maxContainerRestartPeriod"] == "5m0s"
    assert w1["kubelet_config"]["evictionHard"]["memory.available"] == "150Mi"
    assert "KubeletCrashLoopBackOffMax" in w2["gates_on"]  # beta, on by default from 1.35
    assert "KubeletCrashLoopBackOffMax" in recorded["api_server_gates_on"]
    assert w1["cgroup"] == {"version": None, "reason": facts.CGROUP_NEEDS_NODE}


def test_an_unreadable_piece_is_recorded_as_unknown():
    node = json.loads((DATA / "nodes.json").read_text())[1]

    def refused(path: str) -> str:
        raise RuntimeError("HTTP 403")

    got = facts.node_facts(node, refused, cgroup=2)
    assert got["kubelet_config"] == {"unknown": f"GET /api/v1/nodes/{W1}/proxy/configz: RuntimeError: HTTP 403"}
    assert got["gates_on"] == {"unknown": f"GET /api/v1/nodes/{W1}/proxy/metrics: RuntimeError: HTTP 403"}
    assert got["cgroup"] == {"version": 2}
    assert got["zone"] == "zone-a"


def test_durations_compare_as_durations():
    assert facts.duration_s("5m0s") == 300 and facts.duration_s("20s") == 20 and facts.duration_s("1h2m3.5s") == 3723.5
    assert facts.duration_s("20") is None and facts.duration_s("5 m") is None and facts.duration_s(20) is None


def test_profile_needs_of_the_suites_profiles():
    cap = facts.profile_needs(ROOT / "profiles" / "crashloop-cap-20s.yaml")
    assert cap.kubelet == {"featureGates.KubeletCrashLoopBackOffMax": True, "crashLoopBackOff.maxContainerRestartPeriod": "20s"}
    assert cap.unreadable == ()
    assert facts.profile_needs(ROOT / "profiles" / "image-pulls.yaml").kubelet == {"serializeImagePulls": True}
    two = facts.profile_needs(ROOT / "profiles" / "multi-node.yaml")
    assert (two.nodes, two.unreadable, two.kubelet) == (2, (), {})  # a worker + the untainted control plane
    # the node-lifecycle settings set bands, they ask for no node (issue 42 item 3)
    fast = facts.profile_needs(ROOT / "profiles" / "fast-lifecycle.yaml")
    assert (fast.kubelet, fast.unreadable) == ({}, ())
    assert fast.from_facts == {"nodeLeaseDurationSeconds": 20, "node-monitor-grace-period": "20s", "node-monitor-period": "1s"}
    both = facts.profile_needs(ROOT / "profiles" / "multi-node-fast-lifecycle.yaml")
    assert (both.nodes, both.unreadable) == (2, ())
    assert both.kubelet == {"shutdownGracePeriod": "30s", "shutdownGracePeriodCriticalPods": "10s"} and cap.nodes == 1


def test_other_controller_manager_flags_stay_unreadable(tmp_path):
    other = tmp_path / "other.yaml"
    other.write_text("kubeadmConfigPatches:\n- |\n  kind: ClusterConfiguration\n  controllerManager:\n    extraArgs:\n"
                     "      node-monitor-period: 1s\n      node-eviction-rate: '0.5'\n")
    assert facts.profile_needs(other).unreadable == ("ClusterConfiguration",)


def test_a_lifecycle_profile_runs_on_the_first_schedulable_node(recorded):
    """Before: "needs a kind cluster of profile fast-lifecycle: it sets ClusterConfiguration"."""
    for name in ("fast-lifecycle", "default-lifecycle"):
        nodes, why = facts.choose_node(facts.profile_needs(ROOT / "profiles" / f"{name}.yaml"), recorded)
        assert W1 in nodes and why == ""


# -- the facts file and the node-lifecycle settings ---------------------------------------------

def test_the_facts_file_is_read(tmp_path):
    f = tmp_path / "facts.yaml"
    f.write_text("controllerManager: {node-monitor-grace-period: 40s, node-monitor-period: 2s}\n")
    assert facts.read_cluster_facts(f) == {"controllerManager": {"node-monitor-grace-period": "40s", "node-monitor-period": "2s"}}


@pytest.mark.parametrize("text, problem", [
    ("controllerManagr: {node-monitor-period: 5s}\n", "unknown key 'controllerManagr' (known: controllerManager)"),
    ("controllerManager: {node-monitor-grace: 5s}\n", "unknown key controllerManager.node-monitor-grace (known: "),
    ("controllerManager: {node-monitor-period: 5}\n", "controllerManager.node-monitor-period 5 is not a duration"),
    ("controllerManager: {node-monitor-period: fast}\n", "controllerManager.node-monitor-period 'fast' is not a duration"),
    ("controllerManager: [1]\n", "controllerManager is not a mapping"),
    ("- 1\n", "not a mapping"),
    ("a: [\n", "while parsing"),
    ("controllerManager: {feature-gates: MaxUnavailableStatefulSet}\n",
     "controllerManager.feature-gates: 'MaxUnavailableStatefulSet' is not Name=true or Name=false"),
])
def test_a_bad_facts_file_names_the_file_and_key(tmp_path, text, problem):
    f = tmp_path / "facts.yaml"
    f.write_text(text)
    with pytest.raises(facts.ClusterFactsError) as refused:
        facts.read_cluster_facts(f)
    assert str(refused.value).startswith(f"--cluster-facts {f}: ") and problem in str(refused.value)


def test_the_controller_managers_feature_gates_are_read_and_recorded(tmp_path):
    """The ST cases key values by the controller manager's gates, which a --kubeconfig run cannot
    read (its /metrics is on the control-plane node): the facts file may give them."""
    f = tmp_path / "facts.yaml"
    f.write_text("controllerManager: {feature-gates: 'MaxUnavailableStatefulSet=false, Foo=true'}\n")
    given = facts.read_cluster_facts(f)["controllerManager"]
    recorded = facts.controller_manager(given, f"--cluster-facts {f}")
    assert recorded["feature_gates"] == {"gates": {"MaxUnavailableStatefulSet": False, "Foo": True}, "from": f"--cluster-facts {f}"}
    assert "feature_gates" not in facts.controller_manager({}, None)


def test_a_missing_facts_file_is_an_error(tmp_path):
    with pytest.raises(facts.ClusterFactsError, match="--cluster-facts .*nothere.yaml: .*No such file"):
        facts.read_cluster_facts(tmp_path / "nothere.yaml")


def test_without_a_facts_file_the_upstream_defaults_are_assumed_and_said(recorded):
    recorded["controller_manager"] = facts.controller_manager({}, None)
    lc = facts.lifecycle(recorded, W1)
    assert (lc.lease_s, lc.grace_s, lc.period_s) == (40, 50, 5)
    assert lc.source.startswith(f"kubelet configz nodeLeaseDurationSeconds=40 on node {W1}; "
                                "controller-manager node-monitor-grace-period 50s (upstream default (pkg/controller/")
    assert lc.assumed == ("controller-manager flags not given (--cluster-facts): upstream defaults assumed: "
                          "node-monitor-grace-period 50s, node-monitor-period 5s (" + facts.CM_DEFAULTS_SOURCE + ")")


def test_given_flags_are_used_and_named(recorded):
    recorded["controller_manager"] = facts.controller_manager({"node-monitor-grace-period": "1m0s"}, "--cluster-facts f.yaml")
    lc = facts.lifecycle(recorded, W2)
    assert (lc.grace_s, lc.period_s) == (60, 5)
    assert "controller-manager node-monitor-grace-period 1m0s (--cluster-facts f.yaml)" in lc.source
    assert lc.assumed.endswith("upstream defaults assumed: node-monitor-period 5s (" + facts.CM_DEFAULTS_SOURCE + ")")
    recorded["controller_manager"] = facts.controller_manager({"node-monitor-grace-period": "20s", "node-monitor-period": "1s"},
                                                              "profiles/fast-lifecycle.yaml")
    assert facts.lifecycle(recorded, W2).assumed == ""


def test_an_unknown_configuration_is_an_error_naming_why(recorded):
    recorded["nodes"][W1]["kubelet_config"] = {"unknown": "GET …/configz: 403"}
    with pytest.raises(ValueError, match="nodeLeaseDurationSeconds unknown \\(GET …/configz: 403\\)"):
        facts.lifecycle(recorded, W1)


def test_the_controller_managers_flags_show_in_the_diff_and_the_section(recorded):
    a = {"default": {**recorded, "controller_manager": facts.controller_manager({}, None)}}
    b = {"default": {**recorded, "controller_manager": facts.controller_manager({"node-monitor-grace-period": "40s"}, "--cluster-facts f")}}
    assert base_facts.diff(a, b) == [
        f"default: controller-manager node-monitor-grace-period 50s (upstream default ({facts.CM_DEFAULTS_SOURCE})) → "
        "40s (--cluster-facts f)"]
    assert "controller manager: node-monitor-grace-period 40s (--cluster-facts f); node-monitor-period 5s" in base_facts.markdown(b)


def test_profile_needs_refuses_a_bad_file(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("- a list\n")
    with pytest.raises(ValueError, match="bad.yaml: not a mapping"):
        facts.profile_needs(bad)


def test_the_capped_worker_satisfies_crashloop_cap_20s(recorded):
    needs = facts.profile_needs(ROOT / "profiles" / "crashloop-cap-20s.yaml")
    assert facts.choose_node(needs, recorded) == ((W2,), "")


def test_no_capped_node_skips_with_the_precise_difference(recorded):
    needs = facts.profile_needs(ROOT / "profiles" / "crashloop-cap-20s.yaml")
    five = copy.deepcopy(recorded)
    five["nodes"][W2]["kubelet_config"]["crashLoopBackOff"]["maxContainerRestartPeriod"] = "5m0s"
    nodes, reason = facts.choose_node(needs, five)
    assert nodes == ()
    assert reason == (
        "needs featureGates.KubeletCrashLoopBackOffMax true, crashLoopBackOff.maxContainerRestartPeriod 20s; "
        f"node {CP} has tainted node-role.kubernetes.io/control-plane:NoSchedule, "
        "crashLoopBackOff.maxContainerRestartPeriod 5m0s; "
        f"node {W1} has crashLoopBackOff.maxContainerRestartPeriod 5m0s; "
        f"node {W2} has crashLoopBackOff.maxContainerRestartPeriod 5m0s")


def test_a_gate_that_is_off_is_the_difference(recorded):
    needs = facts.profile_needs(ROOT / "profiles" / "crashloop-cap-20s.yaml")
    off = copy.deepcopy(recorded)
    off["nodes"][W2]["gates_on"].remove("KubeletCrashLoopBackOffMax")
    assert facts.differences(needs, W2, off["nodes"][W2]) == ["KubeletCrashLoopBackOffMax off"]


def test_a_profile_beyond_kubelet_settings_is_not_satisfied_by_facts(recorded):
    needs = facts.profile_needs(ROOT / "profiles" / "gates-1.35.yaml")  # cluster-wide feature gates
    assert facts.choose_node(needs, recorded) == (
        (), "needs a kind cluster of profile gates-1.35: it sets featureGates, which no node fact shows")


def test_multi_node_fast_lifecycle_names_the_kubelet_settings_no_node_has(recorded):
    """Its controller-manager flags set bands (from_facts); two nodes and its shutdown grace periods
    are asked of the nodes, and the skip names what each node has instead."""
    needs = facts.profile_needs(ROOT / "profiles" / "multi-node-fast-lifecycle.yaml")
    nodes, why = facts.choose_node(needs, recorded)
    assert nodes == ()
    assert why.startswith("needs 2 schedulable nodes with shutdownGracePeriod 30s, shutdownGracePeriodCriticalPods 10s; ")
    assert f"node {W1} has shutdownGracePeriod 0s, shutdownGracePeriodCriticalPods 0s" in why


def test_a_test_that_needs_none_of_the_kubelet_settings_asks_only_for_the_node_count(recorded):
    """NF-4 and NF-8 (``profile(FAST, needs=())``): the shutdown grace periods are NF-9's; before,
    they skipped for them on the foreign cluster."""
    needs = facts.profile_needs(ROOT / "profiles" / "multi-node-fast-lifecycle.yaml")
    assert facts.choose_node(needs.only(()), recorded) == ((W1, W2), "")
    nodes, why = facts.choose_node(needs.only(("shutdownGracePeriod",)), recorded)
    assert nodes == () and why.startswith("needs 2 schedulable nodes with shutdownGracePeriod 30s; ")
    assert "CriticalPods" not in why
    with pytest.raises(ValueError, match="profile multi-node-fast-lifecycle sets no kubelet shutdownGracePeriods "
                                         r"\(it sets: shutdownGracePeriod, shutdownGracePeriodCriticalPods\)"):
        needs.only(("shutdownGracePeriods",))


def test_two_schedulable_workers_satisfy_multi_node(recorded):
    """The foreign cluster's two workers are the multi-node profile's two schedulable nodes; the
    tainted control plane is not one."""
    needs = facts.profile_needs(ROOT / "profiles" / "multi-node.yaml")
    assert facts.choose_node(needs, recorded) == ((W1, W2), "")


def test_one_schedulable_node_is_too_few_for_multi_node(recorded):
    needs = facts.profile_needs(ROOT / "profiles" / "multi-node.yaml")
    one = copy.deepcopy(recorded)
    one["nodes"][W2]["taints"] = ["node.kubernetes.io/unschedulable:NoSchedule"]
    assert facts.choose_node(needs, one) == ((), (
        f"needs 2 schedulable nodes; only {W1} satisfies it; "
        f"node {CP} has tainted node-role.kubernetes.io/control-plane:NoSchedule; "
        f"node {W2} has tainted node.kubernetes.io/unschedulable:NoSchedule"))


def test_a_profile_with_another_node_role_is_unreadable(tmp_path):
    ha = tmp_path / "ha.yaml"
    ha.write_text("nodes:\n  - role: control-plane\n  - role: worker\n")
    needs = facts.profile_needs(ha)
    assert (needs.unreadable, needs.nodes) == (("nodes",), 2)
    ha.write_text("nodes: 3\n")
    with pytest.raises(ValueError, match="ha.yaml: nodes is not a list of mappings"):
        facts.profile_needs(ha)


def test_the_default_profile_lands_on_the_default_worker_only(recorded):
    """The default profile's bands assume the upstream 5 min crash-loop cap (CL-1 … CL-5): on the
    foreign cluster only the zone-a worker has it; zone-b's 20 s cap is the difference."""
    needs = default_needs()
    assert needs.kubelet == {"crashLoopBackOff.maxContainerRestartPeriod": "5m0s", "syncFrequency": "1m0s",
                             "volumeStatsAggPeriod": "1m0s"}
    assert facts.choose_node(needs, recorded) == ((W1,), "")
    capped = copy.deepcopy(recorded)
    capped["nodes"][W1]["kubelet_config"]["crashLoopBackOff"]["maxContainerRestartPeriod"] = "20s"
    assert facts.choose_node(needs, capped) == ((), (
        "needs crashLoopBackOff.maxContainerRestartPeriod 5m0s, syncFrequency 1m0s, volumeStatsAggPeriod 1m0s; "
        f"node {CP} has tainted node-role.kubernetes.io/control-plane:NoSchedule; "
        f"node {W1} has crashLoopBackOff.maxContainerRestartPeriod 20s; "
        f"node {W2} has crashLoopBackOff.maxContainerRestartPeriod 20s"))


def test_an_unset_default_counts_as_the_default(recorded):
    """A kubelet whose configz omits a field runs with the upstream default: it satisfies the
    default profile, not a profile that sets the field."""
    old = copy.deepcopy(recorded["nodes"][W1])
    del old["kubelet_config"]["crashLoopBackOff"], old["kubelet_config"]["syncFrequency"]
    assert facts.differences(default_needs(), W1, old) == []
    old["kubelet_config"]["syncFrequency"] = "10s"
    assert facts.differences(default_needs(), W1, old) == ["syncFrequency 10s"]


@pytest.mark.parametrize(("nodes", "needed", "spread"), [((W1,), 1, False), ((W1, W2), 1, False), ((W1, W2), 2, True)])
def test_placement_of_a_test(nodes, needed, spread):
    """A test needing one node gets one of the matching nodes, the same on every call; a multi-node
    test gets all of them."""
    info = ClusterInfo(None, "v1.37.2", 37, None, None, nodes=nodes, needed=needed)  # type: ignore[arg-type]
    if spread:
        assert info.placement("t::a") == nodes
        return
    got = {info.placement(f"t::{i}") for i in range(40)}
    assert got == {(n,) for n in nodes}  # every matching node gets tests (40 ids: 2^-39 to miss one)
    assert info.placement("t::a") == info.placement("t::a")
    assert ClusterInfo(None, "v1.37.2", 37, None, None).placement("t::a") == ()  # type: ignore[arg-type]


def test_diff_names_each_fact_that_changed(recorded):
    owned = {"default": {"server": "v1.37.2", "api_server_gates_on": recorded["api_server_gates_on"],
                         "nodes": {"ple2e-x-control-plane": {**copy.deepcopy(recorded["nodes"][W1]), "control_plane": True,
                                                              "zone": None}}},
             "crashloop-cap-20s": {"server": "v1.37.2", "nodes": {}}}
    foreign = {"default": recorded}
    lines = base_facts.diff(owned, foreign)
    assert "crashloop-cap-20s: only in A" in lines
    assert "default: nodes control-plane → control-plane, worker-1, worker-2" in lines
    assert "default/control-plane: taints [] → ['node-role.kubernetes.io/control-plane:NoSchedule']" in lines
    assert base_facts.diff(foreign, foreign) == []


def test_diff_of_a_kubelet_setting_and_a_gate(recorded):
    after = copy.deepcopy(recorded)
    after["server"] = "v1.37.3"
    after["nodes"][W1]["kubelet_config"]["crashLoopBackOff"] = {"maxContainerRestartPeriod": "20s"}
    after["nodes"][W1]["gates_on"].remove("KubeletCrashLoopBackOffMax")
    assert base_facts.diff({"default": recorded}, {"default": after}) == [
        "default: server v1.37.2 → v1.37.3",
        "default/worker-1: kubelet_config.crashLoopBackOff.maxContainerRestartPeriod 5m0s → 20s",
        "default/worker-1: kubelet gates on -KubeletCrashLoopBackOffMax",
    ]


def test_compare_reads_both_runs_facts(tmp_path, recorded):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    (a / "facts.json").write_text(json.dumps({"default": recorded}))
    assert facts_diff(a, b) == []  # B has none: nothing to explain with
    after = copy.deepcopy(recorded)
    after["nodes"][W2]["zone"] = "zone-c"
    (b / "facts.json").write_text(json.dumps({"default": after}))
    assert facts_diff(a, b) == ["default/worker-2: zone zone-b → zone-c"]


def test_markdown_section(recorded):
    text = base_facts.markdown({"default": recorded})
    assert text.startswith("## Cluster facts\n\n### default: server v1.37.2\n")
    assert (f"| {W2} | v1.37.2 | {recorded['nodes'][W2]['runtime']} | zone-b | — | unknown: {facts.CGROUP_NEEDS_NODE} | 20s | "
            in text)
    assert f"| {W1} | v1.37.2 |" in text and "| zone-a | — |" in text and "memory.available<150Mi" in text
    assert f"| {CP} |" in text and "node-role.kubernetes.io/control-plane:NoSchedule" in text


def test_a_unset_field_is_the_difference(recorded):
    """A kubelet whose configz lacks the field (an older kubelet omits what it does not know)."""
    needs = facts.profile_needs(ROOT / "profiles" / "crashloop-cap-20s.yaml")
    old = copy.deepcopy(recorded["nodes"][W2])
    del old["kubelet_config"]["crashLoopBackOff"]
    assert facts.differences(needs, W2, old) == ["crashLoopBackOff.maxContainerRestartPeriod unset"]


def test_compare_stays_standard_library_only():
    """make compare runs with the system Python: importing it (and e2e.cluster.facts) needs no PyYAML or client."""
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import e2e.cli.compare; "
            "print(sorted(m for m in ('yaml', 'kubernetes', 'pytest') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-I", "-c", code, str(ROOT)], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]"


@pytest.mark.parametrize(("obj", "where"), [
    ({"kind": "Pod", "spec": {"containers": []}}, ("spec",)),
    ({"kind": "Deployment", "spec": {"template": {"spec": {"nodeSelector": {"a": "b"}}}}}, ("spec", "template", "spec")),
    ({"kind": "CronJob", "spec": {"jobTemplate": {"spec": {"template": {"spec": {}}}}}},
     ("spec", "jobTemplate", "spec", "template", "spec")),
])
def test_pin_to_one_node(obj, where):
    spec = pin_to_nodes(obj, ("w2",))
    for key in where:
        spec = spec[key]
    assert spec["nodeSelector"]["kubernetes.io/hostname"] == "w2"
    assert spec["nodeSelector"].get("a", "b") == "b"
    assert "affinity" not in spec


def test_pin_to_several_nodes_adds_to_each_own_term():
    pod = {"kind": "Pod", "spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
                              {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["w1"]}]}]}}}}}
    terms = pin_to_nodes(pod, ("w2", "w1"))["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    on = {"key": "kubernetes.io/hostname", "operator": "In", "values": ["w1", "w2"]}
    assert terms[0]["matchExpressions"] == [{"key": "zone", "operator": "In", "values": ["a"]}, on]
    assert terms[1] == {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["w1"]}], "matchExpressions": [on]}
    bare = pin_to_nodes({"kind": "Job", "spec": {"template": {"spec": {}}}}, ("w1", "w2"))["spec"]["template"]["spec"]
    assert bare == {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [on]}]}}}}
    assert "nodeSelector" not in bare


def test_pin_leaves_other_objects_alone():
    svc = {"kind": "Service", "spec": {"selector": {"app": "web"}}}
    assert pin_to_nodes(copy.deepcopy(svc), ("w2",)) == svc
    pod = {"kind": "Pod", "spec": {"containers": []}}
    assert pin_to_nodes(copy.deepcopy(pod), ()) == pod


def test_the_cgroup_version_read_per_node_through_the_agent():
    nodes = json.loads((DATA / "nodes.json").read_text())
    got = facts.facts_from("v1.37.2", nodes, recorded_get, {W1: 2, W2: "read through the node agent failed: boom"})
    assert got["nodes"][W1]["cgroup"] == {"version": 2}
    assert got["nodes"][W2]["cgroup"] == {"version": None, "reason": "read through the node agent failed: boom"}
    assert got["nodes"][CP]["cgroup"] == {"version": None, "reason": facts.CGROUP_NOT_ENTERED}
    # one version for every node (a kind cluster the suite made: read in its control plane)
    assert {n["cgroup"]["version"] for n in facts.facts_from("v1.37.2", nodes, recorded_get, 1)["nodes"].values()} == {1}


def test_placement_prefers_the_workers_the_node_selector_names():
    """A new user's trial: with --node-agent --node-selector zone=zone-a, NF-5 (any schedulable node)
    was pinned to the zone-b worker, which the agent may not enter, and skipped."""
    assert prefer_selected((W1, W2), 1, (W1,)) == (W1,)
    assert prefer_selected((W1, W2), 1, None) == (W1, W2)  # no selector: as the facts chose
    assert prefer_selected((W2,), 1, (W1,)) == (W2,)  # none selected: the test goes there and says why it skips
    assert prefer_selected((W1, W2), 2, (W1,)) == (W1, W2)  # too few selected for a multi-node test
    assert prefer_selected((W1, W2), 2, (W1, W2)) == (W1, W2)
    info = ClusterInfo(None, "v1.37.2", 37, None, None, nodes=prefer_selected((W1, W2), 1, (W2,)))  # type: ignore[arg-type]
    assert {info.placement(f"t::{i}") for i in range(40)} == {(W2,)}
