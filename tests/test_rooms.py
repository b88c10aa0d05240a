"""e2e.cluster.rooms (the profiles of kubelet settings as workers of one cluster) and the rooms'
placement in e2e.plugin.clusters: which profile can be a room, the kind config of the rooms
cluster, and a test of each room placed on its node, tolerating its taint."""

from __future__ import annotations

import copy
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from e2e.cluster import facts, rooms
from e2e.cluster.kind import PreflightError, Profile
from e2e.plugin import clusters
from e2e.run.scenario import pin_to_nodes

ROOT = Path(__file__).resolve().parents[1]
PROFILES = ROOT / "profiles"


@pytest.mark.parametrize(("name", "kubelet"), [
    ("crashloop-cap-20s", {"featureGates": {"KubeletCrashLoopBackOffMax": True},
                           "crashLoopBackOff": {"maxContainerRestartPeriod": "20s"}}),
    ("image-pulls", {"serializeImagePulls": True}),
])
def test_a_profile_of_kubelet_settings_is_a_room(name, kubelet):
    assert rooms.room_patch(PROFILES / f"{name}.yaml") == rooms.Room(kubelet, 1)


def test_the_default_room_has_no_patch():
    assert rooms.room_patch(None) == rooms.Room({}, 1)


def test_multi_node_is_a_room_of_two_workers():
    """Its worker and its control plane made schedulable: two workers of the room."""
    assert rooms.room_patch(PROFILES / "multi-node.yaml") == rooms.Room({}, 2)


def test_a_worker_of_its_own_settings_is_no_room(tmp_path):
    path = tmp_path / "odd.yaml"
    path.write_text("nodes:\n  - role: worker\n    labels: {a: b}\n")
    with pytest.raises(ValueError, match="sets nodes other than plain workers, not only kubelet settings"):
        rooms.room_patch(path)


LEASE = "KubeletConfiguration nodeLeaseDurationSeconds (keyed with the controller manager's periods)"


@pytest.mark.parametrize(("name", "what"), [
    ("fast-lifecycle", f"ClusterConfiguration, {LEASE}"),
    ("default-lifecycle", f"ClusterConfiguration, {LEASE}"),
    ("multi-node-fast-lifecycle", f"ClusterConfiguration, {LEASE}"),
    ("gates-1.34", "featureGates"),
    ("gates-1.35", "featureGates"),
])
def test_a_profile_with_cluster_wide_settings_cannot_be_a_room(name, what):
    with pytest.raises(ValueError) as e:
        rooms.room_patch(PROFILES / f"{name}.yaml")
    assert str(e.value) == (f"profile {name} cannot be a room: {PROFILES / f'{name}.yaml'} sets {what}, "
                            "not only kubelet settings")


def _config(tmp_path: Path) -> tuple[dict, Path]:
    path = rooms.rooms_config({"default": rooms.Room(), "crashloop-cap-20s": rooms.room_patch(PROFILES / "crashloop-cap-20s.yaml"),
                               "image-pulls": rooms.Room({"serializeImagePulls": True}),
                               "multi-node": rooms.Room({}, 2)}, tmp_path)
    return yaml.safe_load(path.read_text()), path


def test_one_worker_per_room_with_its_label_zone_taint_and_kubelet_patch(tmp_path):
    cfg, path = _config(tmp_path)
    default, capped, pulls, multi, multi2 = cfg["nodes"]
    assert default == {"role": "worker", "labels": {rooms.ROOM_LABEL: "default", rooms.ZONE_LABEL: "room-default"}}
    assert capped["labels"] == {rooms.ROOM_LABEL: "crashloop-cap-20s", rooms.ZONE_LABEL: "room-crashloop-cap-20s"}
    (join,) = (yaml.safe_load(p) for p in capped["kubeadmConfigPatches"])
    assert join == {"kind": "JoinConfiguration", "patches": {"directory": rooms.PATCHES_IN_NODE},
                    "nodeRegistration": {"taints": [{"key": rooms.ROOM_LABEL, "value": "crashloop-cap-20s",
                                                     "effect": "NoSchedule"}]}}
    (mount,) = capped["extraMounts"]
    assert mount["containerPath"] == rooms.PATCHES_IN_NODE and mount["readOnly"] is True
    assert yaml.safe_load((Path(mount["hostPath"]) / "kubeletconfiguration.yaml").read_text()) == {
        "apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
        "featureGates": {"KubeletCrashLoopBackOffMax": True}, "crashLoopBackOff": {"maxContainerRestartPeriod": "20s"}}
    assert Path(pulls["extraMounts"][0]["hostPath"]) != Path(mount["hostPath"])
    assert path.parent == tmp_path / "rooms"
    assert multi == multi2 and multi["labels"][rooms.ROOM_LABEL] == "multi-node" and "extraMounts" not in multi
    assert "&id" not in path.read_text()  # each node its own mapping (the CNI and guard mounts are added per node)


def test_the_rooms_files_are_named_by_their_content(tmp_path):
    _, one = _config(tmp_path)
    _, again = _config(tmp_path)
    other = rooms.rooms_config({"default": rooms.Room(), "image-pulls": rooms.Room({"serializeImagePulls": False})}, tmp_path)
    assert one == again and other != one


def test_the_rooms_cluster_merges_the_rooms_over_the_default_config(tmp_path, monkeypatch):
    """One control plane (kind-config.yaml's, its NodePort published), a worker per room, each
    node with the egress guard's mounts; the offline patch's per-node CNI covers the six nodes."""
    monkeypatch.setattr("e2e.cluster.kind.STATE_DIR", tmp_path)
    _, patch = _config(tmp_path)
    offline = ROOT / "hack" / "offline" / "kind-offline.yaml"
    cfg = Profile(ROOT / "kind-config.yaml", "kindest/node:v1.37.2", (offline, patch), rooms.ROOMS_PROFILE).config()
    roles = [n["role"] for n in cfg["nodes"]]
    assert roles == ["control-plane", "worker", "worker", "worker", "worker", "worker"]
    conflists = [m["hostPath"] for n in cfg["nodes"] for m in n["extraMounts"] if m["containerPath"].endswith(".conflist")]
    assert len(set(conflists)) == len(conflists) == 6  # one pod share per node
    assert cfg["nodes"][0]["extraPortMappings"][0]["containerPort"] == 30080
    assert all(any(m["containerPath"] == "/etc/cni/net.d/10-offline-ptp.conflist" for m in n["extraMounts"])
               for n in cfg["nodes"])


# the rooms cluster's facts as e2e.cluster.facts.collect records them (the parts placement reads)
CP, W1, W2, W3 = "ple2e-r-control-plane", "ple2e-r-worker", "ple2e-r-worker2", "ple2e-r-worker3"
W4, W5 = "ple2e-r-worker4", "ple2e-r-worker5"
CAPPED = {"crashLoopBackOff": {"maxContainerRestartPeriod": "20s"}, "serializeImagePulls": True}
UPSTREAM = {"crashLoopBackOff": {"maxContainerRestartPeriod": "5m0s"}, "serializeImagePulls": True,
            "syncFrequency": "1m0s", "volumeStatsAggPeriod": "1m0s"}
FACTS = {"nodes": {
    CP: {"taints": ["node-role.kubernetes.io/control-plane:NoSchedule"], "kubelet_config": UPSTREAM,
         "gates_on": ["KubeletCrashLoopBackOffMax"]},
    W1: {"taints": [], "kubelet_config": UPSTREAM, "gates_on": ["KubeletCrashLoopBackOffMax"]},
    W2: {"taints": [rooms.taint("crashloop-cap-20s")], "kubelet_config": {**UPSTREAM, **CAPPED},
         "gates_on": ["KubeletCrashLoopBackOffMax"]},
    W3: {"taints": [rooms.taint("image-pulls")], "kubelet_config": UPSTREAM, "gates_on": ["KubeletCrashLoopBackOffMax"]},
    **{w: {"taints": [rooms.taint("multi-node")], "kubelet_config": UPSTREAM, "gates_on": []} for w in (W4, W5)},
}}
LABELS = {CP: {}, W1: {rooms.ROOM_LABEL: "default"}, W2: {rooms.ROOM_LABEL: "crashloop-cap-20s"},
          W3: {rooms.ROOM_LABEL: "image-pulls"}, W4: {rooms.ROOM_LABEL: "multi-node"}, W5: {rooms.ROOM_LABEL: "multi-node"}}


def test_a_tolerated_taint_does_not_keep_a_node_out():
    needs = facts.profile_needs(PROFILES / "crashloop-cap-20s.yaml")
    assert facts.differences(needs, W2, FACTS["nodes"][W2]) == [f"tainted {rooms.taint('crashloop-cap-20s')}"]
    tolerating = facts.Needs(needs.profile, needs.kubelet, tolerates=(rooms.taint("crashloop-cap-20s"),))
    assert facts.differences(tolerating, W2, FACTS["nodes"][W2]) == []
    assert facts.differences(tolerating, W3, FACTS["nodes"][W3])[0] == f"tainted {rooms.taint('image-pulls')}"


def _rooms_clusters(node_facts: dict = FACTS) -> clusters.Clusters:
    """Clusters of a run with --rooms whose rooms cluster is connected already (no kind, no API)."""
    opts = {"--rooms": True, "--kubeconfig": None}
    config = SimpleNamespace(getoption=lambda name: opts[name], rootpath=ROOT)
    kube = SimpleNamespace(nodes=lambda: [{"metadata": {"name": n, "labels": LABELS[n]}} for n in LABELS])
    kind = SimpleNamespace(name="ple2e-r", control_plane=CP)
    c = clusters.Clusters(config)
    key = (rooms.ROOMS_PROFILE, 0)
    c._ready[key] = clusters.ClusterInfo(kube, "v1.37.2", 37, 2, kind, rooms.ROOMS_PROFILE, facts=node_facts)
    c._facts[key] = node_facts
    return c


@pytest.mark.parametrize(("name", "node", "tolerations"), [
    ("default", W1, ()),
    ("crashloop-cap-20s", W2, (rooms.toleration("crashloop-cap-20s"),)),
    ("image-pulls", W3, (rooms.toleration("image-pulls"),)),
])
def test_each_rooms_test_is_placed_on_its_room_tolerating_its_taint(name, node, tolerations):
    c = _rooms_clusters()
    info = c._room(name)
    assert (info.profile, info.nodes, info.placement("t::x"), info.tolerations) == (name, (node,), (node,), tolerations)
    assert info.kind.name == "ple2e-r" and info.replica == 0
    assert info.elsewhere == tuple(sorted({W1, W2, W3, W4, W5} - {node}))  # left out of its faults' health checks
    pod = pin_to_nodes({"kind": "Pod", "spec": {"containers": []}}, info.placement("t::x"), info.tolerations)
    assert pod["spec"]["nodeSelector"] == {"kubernetes.io/hostname": node}
    assert pod["spec"].get("tolerations", []) == list(tolerations)


def test_a_multi_node_test_gets_both_workers_of_its_room():
    info = _rooms_clusters()._room("multi-node")
    assert (info.nodes, info.needed, info.placement("t::x")) == ((W4, W5), 2, (W4, W5))
    assert info.elsewhere == (W1, W2, W3)  # the control plane is every room's: checked
    pod = pin_to_nodes({"kind": "Pod", "spec": {}}, info.placement("t::x"), info.tolerations)
    assert pod["spec"]["tolerations"] == [rooms.toleration("multi-node")]
    assert pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"] == [{"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [W4, W5]}]}]


def test_a_room_without_its_settings_is_an_error_naming_the_difference():
    broken = copy.deepcopy(FACTS)
    broken["nodes"][W2]["kubelet_config"]["crashLoopBackOff"]["maxContainerRestartPeriod"] = "5m0s"
    with pytest.raises(PreflightError) as e:
        _rooms_clusters(broken)._room("crashloop-cap-20s")
    assert str(e.value) == (
        f"room crashloop-cap-20s of cluster ple2e-r (nodes labelled {rooms.ROOM_LABEL}=crashloop-cap-20s: {W2}): "
        "needs featureGates.KubeletCrashLoopBackOffMax true, crashLoopBackOff.maxContainerRestartPeriod 20s; "
        f"node {W2} has crashLoopBackOff.maxContainerRestartPeriod 5m0s")


def _finishing(monkeypatch, tmp_path, selected: dict, keep: bool = False) -> tuple[clusters.Clusters, list]:
    """The rooms clusters of a run with these tests ``selected`` per profile (a room placed for
    each of its rooms) and a cluster of its own for fast-lifecycle; what gets released, in order."""
    from collections import Counter

    c = _rooms_clusters()
    opts = {"--rooms": True, "--kubeconfig": None, "--keep-cluster": keep}
    c._config = SimpleNamespace(getoption=lambda name: opts[name], rootpath=ROOT, stash=pytest.Stash())
    c._config.stash[clusters._TESTS_LEFT] = Counter(selected)
    c._config.stash[clusters._CLUSTERS] = c
    for name in selected:
        c._ready[(name, 0)] = c._room(name) if name in rooms.ROOM_PROFILES else \
            clusters.ClusterInfo(None, "v1.37.2", 37, 2, SimpleNamespace(name="ple2e-fast"), name)
    released: list = []
    monkeypatch.setattr(c, "_release", lambda info, logs: released.append(info.profile))
    monkeypatch.setattr(clusters, "STATE_DIR", tmp_path)
    monkeypatch.setattr(clusters, "run_id", lambda: "run-1")
    return c, released


def test_the_rooms_cluster_goes_after_the_last_test_of_every_room_not_at_the_end_of_the_run(monkeypatch, tmp_path):
    """issue 45: its nodes must not idle beside the remaining tests (here fast-lifecycle's)."""
    c, released = _finishing(monkeypatch, tmp_path, {"default": 1, "crashloop-cap-20s": 1, "fast-lifecycle": 2})
    config = c._config
    clusters.release_finished(config, clusters.count_down(config.stash[clusters._TESTS_LEFT], "crashloop-cap-20s"), False)
    assert released == [] and ("crashloop-cap-20s", 0) in c._ready  # the default room has a test left
    clusters.release_finished(config, clusters.count_down(config.stash[clusters._TESTS_LEFT], "default"), False)
    assert released == [rooms.ROOMS_PROFILE]  # image-pulls and multi-node: no test of theirs selected
    assert set(c._ready) == {("fast-lifecycle", 0)}  # every room's placement forgotten with it
    clusters.release_finished(config, clusters.count_down(config.stash[clusters._TESTS_LEFT], "fast-lifecycle"), False)
    assert released == [rooms.ROOMS_PROFILE]  # one fast-lifecycle test left
    clusters.release_finished(config, clusters.count_down(config.stash[clusters._TESTS_LEFT], "fast-lifecycle"), False)
    assert released == [rooms.ROOMS_PROFILE, "fast-lifecycle"] and c._ready == {}


def test_a_worker_lets_go_of_the_rooms_another_worker_finished_before_its_next_test(monkeypatch, tmp_path):
    c, released = _finishing(monkeypatch, tmp_path, {"default": 1, "image-pulls": 1, "fast-lifecycle": 1})
    selected = c._config.stash[clusters._TESTS_LEFT]
    clusters.let_go_of_finished(c._config, False)
    assert released == []  # nothing finished yet: the run-wide file does not exist
    clusters.count_down(selected, "default")  # other workers' tests ended (their own stash, the one file)
    clusters.count_down(selected, "image-pulls")
    clusters.let_go_of_finished(c._config, False)  # this worker, about to start its fast-lifecycle test
    assert released == [rooms.ROOMS_PROFILE] and set(c._ready) == {("fast-lifecycle", 0)}


def test_a_kept_rooms_cluster_stays(monkeypatch, tmp_path):
    c, released = _finishing(monkeypatch, tmp_path, {"default": 1}, keep=True)
    clusters.release_finished(c._config, clusters.count_down(c._config.stash[clusters._TESTS_LEFT], "default"), False)
    assert released == [] and (rooms.ROOMS_PROFILE, 0) in c._ready


def test_a_broken_rooms_cluster_is_forgotten_for_every_room(tmp_path):
    c = _rooms_clusters()
    calls = []
    kind = SimpleNamespace(name="ple2e-r", export_logs=lambda dest: None, mark_broken=calls.append,
                           delete_unless_used=lambda: True)
    for name in ("default", "image-pulls"):
        c._ready[(name, 0)] = c._room(name)
    for key in c._ready:
        c._ready[key].kind = kind
    c.replace_broken("image-pulls", 0, "node NotReady", tmp_path)
    assert calls == ["node NotReady"] and c._ready == {}


def test_pods_already_tolerating_get_no_second_toleration():
    t = rooms.toleration("image-pulls")
    pod = pin_to_nodes({"kind": "Pod", "spec": {"tolerations": [dict(t)]}}, (W3,), (t,))
    assert pod["spec"]["tolerations"] == [t]
    job = pin_to_nodes({"kind": "Job", "spec": {"template": {"spec": {"tolerations": [{"operator": "Exists"}]}}}}, (W3,), (t,))
    assert job["spec"]["template"]["spec"]["tolerations"] == [{"operator": "Exists"}, t]


def test_without_rooms_no_profile_is_a_room():
    for opts in ({"--rooms": False, "--kubeconfig": None}, {"--rooms": True, "--kubeconfig": "/k"}):
        assert clusters.room_profiles(SimpleNamespace(getoption=lambda name, o=opts: o[name])) == ()
