"""Profile (e2e.cluster): patch merging, the cluster key, config errors; Docker preflight."""

from __future__ import annotations

import textwrap
import time
from pathlib import Path

import pytest
import yaml

from e2e import cluster
from e2e.cluster import PreflightError, Profile, check_docker, kind_binary

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


def test_config_without_patches_is_the_file(base):
    assert Profile(base, IMAGE).config() == yaml.safe_load(base.read_text())


def test_patch_deep_merges_maps_and_appends_lists(base, patch):
    cfg = Profile(base, IMAGE, (patch,)).config()
    assert cfg["kind"] == "Cluster" and cfg["apiVersion"] == "kind.x-k8s.io/v1alpha4"
    assert cfg["networking"] == {"podSubnet": "10.244.0.0/16", "disableDefaultCNI": True}
    patches = cfg["kubeadmConfigPatches"]
    assert len(patches) == 2
    assert "ClusterConfiguration" in patches[0] and "KubeletConfiguration" in patches[1]
    assert cfg["nodes"] == [{"role": "control-plane"}]


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
    assert cfg["nodes"][0]["extraPortMappings"][0]["listenAddress"] == "127.0.0.1"
    assert any("failCgroupV1: false" in p for p in cfg["kubeadmConfigPatches"])


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
    with pytest.raises(PreflightError, match=r"bad-patch\.yaml"):
        Profile(bad, IMAGE).key  # noqa: B018


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
