"""Profile (e2e.cluster.kind): patch merging, named profiles, host ports, per-node CNI, the cluster
key, config errors, cluster state; Docker preflight."""

from __future__ import annotations

import ipaddress
import json
import textwrap
import time
from pathlib import Path

import pytest
import yaml

from e2e.cluster import kind as cluster, egress
from e2e.cluster.kind import (
    CONFLIST_IN_NODE,
    PreflightError,
    Profile,
    check_docker,
    kind_binary,
    node_pod_subnets,
    owned_clusters,
    parse_docker_port,
    profile_patches,
)

ROOT = Path(__file__).resolve().parents[1]
IMAGE = "kindest/node:v1.37.2"

BASE = """\
    kind: Cluster
    apiVersion: kind.x-k8s.io/v1alpha4
    networking:
      podSubnet: 10.244.0.0/16
    nodes:
      - role: control-plane
    kubeadmConfigPatches:
      - |
        kind: ClusterConfiguration
        apiServer: {}
"""

PATCH = """\
    networking:
      disableDefaultCNI: true
    kubeadmConfigPatches:
      - |
        kind: KubeletConfiguration
        failCgroupV1: false
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture
def base(tmp_path) -> Path:
    return write(tmp_path, "kind.yaml", BASE)


@pytest.fixture
def patch(tmp_path) -> Path:
    return write(tmp_path, "patch.yaml", PATCH)


GUARD_PATHS = {egress.NODE_SCRIPT, egress.NODE_DROPIN}


def without_guard(cfg: dict) -> dict:
    """``cfg`` without the node guard's mounts, which every node of every profile has (checked)."""
    for node in cfg["nodes"]:
        mounts = node.pop("extraMounts")
        assert {m["containerPath"] for m in mounts} >= GUARD_PATHS
        rest = [m for m in mounts if m["containerPath"] not in GUARD_PATHS]
        if rest:
            node["extraMounts"] = rest
    return cfg


def test_config_without_patches_is_the_file_plus_the_node_guard(base):
    assert without_guard(Profile(base, IMAGE).config()) == yaml.safe_load(base.read_text())


def test_every_node_mounts_the_node_guard_read_only(tmp_path, monkeypatch):
    monkeypatch.setattr(cluster, "STATE_DIR", tmp_path / "state")
    prof = multi_node(tmp_path)
    files = prof.files()
    for node in prof.config()["nodes"]:
        guard = {m["containerPath"]: m for m in node["extraMounts"] if m["containerPath"] in GUARD_PATHS}
        assert set(guard) == GUARD_PATHS and all(m["readOnly"] for m in guard.values())
        script = files[Path(guard[egress.NODE_SCRIPT]["hostPath"])]
        assert "ip -4 route replace unreachable 10.244.0.0/16" in script
        assert f"-A {egress.NODE_CHAIN} -d 10.96.0.0/16 -j REJECT" in script  # kind's default Service subnet
        assert egress.NODE_SCRIPT in files[Path(guard[egress.NODE_DROPIN]["hostPath"])]


def test_the_node_guard_follows_the_profile_s_own_service_and_pod_ranges(tmp_path, monkeypatch):
    """Issue 41 read the node rule as fixed to 10.96.0.0/16: it is made from the profile's own
    ``networking`` (kind's defaults only where it gives none); the wire check compares it with
    what kubeadm ran with in each node (e2e.cli.wirecheck.check_ranges)."""
    monkeypatch.setattr(cluster, "STATE_DIR", tmp_path / "state")
    own = write(tmp_path, "own.yaml", "networking:\n  podSubnet: 10.245.0.0/16\n  serviceSubnet: 10.97.0.0/16\n")
    prof = Profile(write(tmp_path, "kind.yaml", "kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\n"), IMAGE, (own,))
    script = next(text for path, text in prof.files().items() if path.suffix == ".sh")
    assert script == egress.node_guard_script(["10.245.0.0/16"], ["10.97.0.0/16"])
    assert "10.96." not in script and "10.244." not in script


def test_patch_deep_merges_maps_and_appends_lists(base, patch):
    cfg = Profile(base, IMAGE, (patch,)).config()
    assert cfg["kind"] == "Cluster" and cfg["apiVersion"] == "kind.x-k8s.io/v1alpha4"
    assert cfg["networking"] == {"podSubnet": "10.244.0.0/16", "disableDefaultCNI": True}
    patches = cfg["kubeadmConfigPatches"]
    assert len(patches) == 2
    assert "ClusterConfiguration" in patches[0] and "KubeletConfiguration" in patches[1]
    assert without_guard(cfg)["nodes"] == [{"role": "control-plane"}]


def test_patches_apply_in_order_and_scalars_are_replaced(base, patch, tmp_path):
    second = write(tmp_path, "second.yaml", "networking:\n  disableDefaultCNI: false\nkubeadmConfigPatches: ['kind: InitConfiguration']\n")
    cfg = Profile(base, IMAGE, (patch, second)).config()
    assert cfg["networking"]["disableDefaultCNI"] is False
    assert len(cfg["kubeadmConfigPatches"]) == 3
    assert cfg["kubeadmConfigPatches"][-1] == "kind: InitConfiguration"


def test_merging_does_not_change_the_files(base, patch):
    before = base.read_text(), patch.read_text()
    Profile(base, IMAGE, (patch,)).config()
    assert (base.read_text(), patch.read_text()) == before


def test_real_offline_profile_merges_over_the_default_config():
    cfg = Profile(ROOT / "kind-config.yaml", IMAGE, (ROOT / "hack/offline/kind-offline.yaml",)).config()
    assert cfg["kind"] == "Cluster"
    assert cfg["networking"]["disableDefaultCNI"] is True
    assert len(cfg["nodes"]) == 1
    mapping = cfg["nodes"][0]["extraPortMappings"][0]
    assert mapping["listenAddress"] == "127.0.0.1"
    assert mapping.get("hostPort", 0) == 0  # a free host port per cluster, never a fixed one
    assert any("failCgroupV1: false" in p for p in cfg["kubeadmConfigPatches"])
    assert "extraMounts" not in without_guard(cfg)["nodes"][0]  # one node: the baked conflist serves


def test_port_mappings_listen_on_loopback_unless_told(tmp_path):
    cfg_file = write(tmp_path, "kind.yaml", """\
        kind: Cluster
        nodes:
          - role: control-plane
            extraPortMappings:
              - containerPort: 30080
              - containerPort: 30081
                listenAddress: "::1"
    """)
    mappings = Profile(cfg_file, IMAGE).config()["nodes"][0]["extraPortMappings"]
    assert [m["listenAddress"] for m in mappings] == ["127.0.0.1", "::1"]


# -- named profiles ------------------------------------------------------------------------


def test_default_profile_has_no_patch_file(tmp_path):
    assert profile_patches(tmp_path, "default") == ()


def test_named_profile_is_its_file(tmp_path):
    f = write(tmp_path, "fast.yaml", "kubeadmConfigPatches: []\n")
    assert profile_patches(tmp_path, "fast") == (f,)


def test_unknown_profile_names_the_known_ones(tmp_path):
    write(tmp_path, "multi-node.yaml", "nodes: []\n")
    with pytest.raises(PreflightError, match=r"unknown cluster profile 'nope'.*known: default, multi-node"):
        profile_patches(tmp_path, "nope")


def test_repo_profiles_render_and_differ_from_default():
    offline = (ROOT / "hack/offline/kind-offline.yaml",)
    default = Profile(ROOT / "kind-config.yaml", IMAGE, offline)
    names = sorted(p.stem for p in (ROOT / "profiles").glob("*.yaml"))
    assert "multi-node" in names
    keys = {default.key}
    for name in names:
        prof = Profile(ROOT / "kind-config.yaml", IMAGE, offline + profile_patches(ROOT / "profiles", name), name)
        assert prof.config()["kind"] == "Cluster"
        keys.add(prof.key)
    assert len(keys) == len(names) + 1  # every profile has its own cluster


# -- several nodes on the offline (static ptp) CNI ------------------------------------------


def multi_node(tmp_path, cni_off: bool = True) -> Profile:
    base = write(tmp_path, "kind.yaml", """\
        kind: Cluster
        nodes:
          - role: control-plane
    """)
    extra = write(tmp_path, "two.yaml", ("networking: {disableDefaultCNI: true}\n" if cni_off else "") + "nodes: [{role: worker}]\n")
    return Profile(base, IMAGE, (extra,), "two")


def test_node_pod_subnets_split_the_pod_subnet():
    assert node_pod_subnets({"nodes": [{}, {}, {}]}) == ["10.244.0.0/24", "10.244.1.0/24", "10.244.2.0/24"]
    assert node_pod_subnets({"networking": {"podSubnet": "10.10.0.0/16,fd00::/56"}, "nodes": [{}]}) == ["10.10.0.0/24"]


def test_each_node_mounts_its_own_conflist(tmp_path, monkeypatch):
    monkeypatch.setattr(cluster, "STATE_DIR", tmp_path / "state")
    prof = multi_node(tmp_path)
    cfg = prof.config()
    files = prof.files()
    assert [n["role"] for n in cfg["nodes"]] == ["control-plane", "worker"]
    seen = []
    for node, subnet in zip(without_guard(cfg)["nodes"], ["10.244.0.0/24", "10.244.1.0/24"], strict=True):
        (mount,) = node["extraMounts"]
        assert mount["containerPath"] == CONFLIST_IN_NODE and mount["readOnly"] is True
        conf = json.loads(files[Path(mount["hostPath"])])
        ptp = next(p for p in conf["plugins"] if p["type"] == "ptp")
        assert ptp["ipMasq"] is False  # a node-wide rule masquerades only traffic leaving the pod subnet
        (rng,) = ptp["ipam"]["ranges"][0]
        assert rng["subnet"] == subnet
        assert ipaddress.ip_address(rng["gateway"]) in ipaddress.ip_network(subnet)
        assert any(p["type"] == "portmap" for p in conf["plugins"])  # the rest of the baked conflist stays
        seen.append(mount["hostPath"])
    assert len(set(seen)) == 2


def test_wiring_again_after_a_reboot_reads_the_config_the_cluster_was_made_from(tmp_path, monkeypatch):
    # e2e.faults.node.node_rebooted: a rebooted node's network namespace is new; its routes and
    # masquerade rule are set again from the saved kind config, every node's route to it by its address now
    monkeypatch.setattr(cluster, "STATE_DIR", tmp_path)
    kind = cluster.Kind("ple2e-x", kind="/bin/true")
    with pytest.raises(PreflightError, match="kind config of cluster ple2e-x"):
        kind.wire_nodes()
    (tmp_path / "ple2e-x.kind-config.yaml").write_text(multi_node(tmp_path).rendered())
    calls = []
    monkeypatch.setattr(kind, "nodes", lambda: ["x-control-plane", "x-worker"])
    monkeypatch.setattr(kind, "pod_subnet_of", lambda n: {"x-control-plane": "10.244.0.0/24", "x-worker": "10.244.1.0/24"}[n])
    monkeypatch.setattr(kind, "_node_address", lambda n: {"x-control-plane": "172.18.0.2", "x-worker": "172.18.0.7"}[n])

    def node_exec(*cmd, node=None, timeout=30):
        calls.append(f"{node}: {' '.join(cmd)}")
        if "-C" in cmd:
            raise RuntimeError("iptables: Bad rule (does a matching rule exist in that chain?)")
        return ""

    monkeypatch.setattr(kind, "node_exec", node_exec)
    kind.wire_nodes()
    masquerade = "POSTROUTING -s 10.244.0.0/16 ! -d 10.244.0.0/16 -j MASQUERADE"
    assert calls == [
        "x-control-plane: ip route replace 10.244.1.0/24 via 172.18.0.7",
        f"x-control-plane: iptables -t nat -C {masquerade}", f"x-control-plane: iptables -t nat -A {masquerade}",
        "x-worker: ip route replace 10.244.0.0/24 via 172.18.0.2",
        f"x-worker: iptables -t nat -C {masquerade}", f"x-worker: iptables -t nat -A {masquerade}",
    ]


def test_one_node_or_kindnetd_mounts_no_conflist(tmp_path):
    def conflists(prof: Profile) -> dict:
        return {p: t for p, t in prof.files().items() if p.suffix == ".conflist"}

    assert conflists(Profile(write(tmp_path, "one.yaml", "kind: Cluster\nnetworking: {disableDefaultCNI: true}\nnodes: [{role: control-plane}]\n"), IMAGE)) == {}
    online = multi_node(tmp_path, cni_off=False)
    assert conflists(online) == {}
    assert all("extraMounts" not in n for n in without_guard(online.config())["nodes"])


# -- cluster state --------------------------------------------------------------------------


def test_parse_docker_port():
    text = "30080/tcp -> 127.0.0.1:41234\n6443/tcp -> 127.0.0.1:39999\n30080/tcp -> [::1]:41235\n"
    assert parse_docker_port(text) == {"30080/tcp": 41234, "6443/tcp": 39999}
    assert parse_docker_port("") == {}


def test_owned_clusters_reads_state_files(tmp_path, monkeypatch):
    monkeypatch.setattr(cluster, "STATE_DIR", tmp_path)
    (tmp_path / "ple2e-aaaa.json").write_text(json.dumps({"owner": "run-1"}))
    (tmp_path / "ple2e-bbbb.json").write_text(json.dumps({"owner": "run-2"}))
    (tmp_path / "ple2e-cccc.json").write_text("not json")
    (tmp_path / "other.json").write_text(json.dumps({"owner": "run-1"}))
    assert owned_clusters("run-1") == ["ple2e-aaaa"]
    assert owned_clusters("run-3") == []


def test_key_is_stable(base, patch):
    a = Profile(base, IMAGE, (patch,))
    b = Profile(Path(str(base)), IMAGE, (Path(str(patch)),))
    assert a.key == b.key == a.key
    assert len(a.key) == 10
    assert a.cluster_name == f"ple2e-{a.key}"


def test_key_ignores_formatting_and_key_order(base, tmp_path):
    reordered = write(tmp_path, "reordered.yaml", """\
        # same config, other order and style
        apiVersion: kind.x-k8s.io/v1alpha4
        kubeadmConfigPatches: ["kind: ClusterConfiguration\\napiServer: {}\\n"]
        nodes: [{role: control-plane}]
        networking: {podSubnet: 10.244.0.0/16}
        kind: Cluster
    """)
    assert Profile(reordered, IMAGE).key == Profile(base, IMAGE).key


def test_key_changes_with_node_image(base):
    assert Profile(base, IMAGE).key != Profile(base, "kindest/node:v1.34.0").key


def test_key_changes_with_a_patch(base, patch, tmp_path):
    plain = Profile(base, IMAGE).key
    patched = Profile(base, IMAGE, (patch,)).key
    assert plain != patched
    patch.write_text(patch.read_text().replace("failCgroupV1: false", "failCgroupV1: true"))
    assert Profile(base, IMAGE, (patch,)).key not in (plain, patched)  # the key follows the file's content


def test_bad_yaml_names_the_file(base, tmp_path):
    bad = write(tmp_path, "bad-patch.yaml", "networking: [unclosed\n")
    with pytest.raises(PreflightError, match=r"kind config .*bad-patch\.yaml"):
        Profile(base, IMAGE, (bad,)).config()
    with pytest.raises(PreflightError, match=r"bad-patch\.yaml") as err:
        Profile(bad, IMAGE).key  # noqa: B018
    # issue 30 (10): the error's own location said in "<unicode string>", line 2
    assert f'in "{bad}", line 2' in str(err.value) and "<unicode string>" not in str(err.value)


def test_missing_file_names_the_file(tmp_path):
    with pytest.raises(PreflightError, match=r"missing\.yaml"):
        Profile(tmp_path / "missing.yaml", IMAGE).config()


# -- preflight ---------------------------------------------------------------------------


def test_check_docker_without_docker_on_path(tmp_path, monkeypatch):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    started = time.monotonic()
    with pytest.raises(PreflightError) as err:
        check_docker()
    assert time.monotonic() - started < 3
    msg = str(err.value)
    assert "docker" in msg and "PATH" in msg
    assert "install Docker" in msg


def test_check_docker_reports_an_engine_that_does_not_answer(tmp_path, monkeypatch):
    # a fake `docker` CLI whose engine is down: exits 1 with the usual complaint
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "docker"
    fake.write_text("#!/bin/sh\necho 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock.' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    with pytest.raises(PreflightError, match=r"not reachable .*Cannot connect to the Docker daemon.*start Docker"):
        check_docker()


def test_check_docker_times_out_on_a_hanging_engine(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "docker"
    fake.write_text("#!/bin/sh\nexec sleep 5\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setattr(cluster, "DOCKER_TIMEOUT_S", 0.3)
    started = time.monotonic()
    with pytest.raises(PreflightError, match=r"did not answer `docker info` within 0\.3 s"):
        check_docker()
    assert time.monotonic() - started < 3


def test_check_docker_returns_the_server_version(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "docker"
    fake.write_text("#!/bin/sh\necho 27.3.1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    assert check_docker() == "27.3.1"


def test_kind_binary_missing(tmp_path, monkeypatch):
    monkeypatch.delenv("E2E_KIND", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(PreflightError, match=r"kind not found"):
        kind_binary()
    monkeypatch.setenv("E2E_KIND", str(tmp_path / "no-such-kind"))
    with pytest.raises(PreflightError, match=r"E2E_KIND=.*no-such-kind is not an executable file"):
        kind_binary()


def test_another_state_directory_is_another_cluster(base, monkeypatch, tmp_path):
    """issue 30 (8): runs with their own E2E_STATE_DIR must not share (or delete) each other's
    clusters: the node guard files each cluster mounts live in the state directory, so its path is
    part of the rendered config and of the cluster's name."""
    monkeypatch.setattr(cluster, "STATE_DIR", tmp_path / "one")
    one = Profile(base, IMAGE).cluster_name
    monkeypatch.setattr(cluster, "STATE_DIR", tmp_path / "two")
    assert Profile(base, IMAGE).cluster_name != one
    monkeypatch.setattr(cluster, "STATE_DIR", tmp_path / "one")
    assert Profile(base, IMAGE).cluster_name == one
