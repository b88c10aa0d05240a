"""The set-up before pytest (`make e2e`): the profile hack/prepare.sh writes into
reports/profile.env, and what a failed set-up leaves. Fakes only: no Docker, kind or registry."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _e2e_setup_line(reports: Path, k8s_version: str = "") -> str:
    """The recipe line of `make e2e K8S_VERSION=...` that runs hack/prepare.sh (`make -n`: printed,
    not run); the version is given, so the caller's own K8S_VERSION does not leak in."""
    recipe = subprocess.run(["make", "-n", "-s", "e2e", f"REPORTS={reports}", f"K8S_VERSION={k8s_version}"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout
    (line,) = [line for line in recipe.splitlines() if "hack/prepare.sh" in line]
    return line


def _fake(path: Path, body: str) -> str:
    path.write_text("#!/usr/bin/env bash\n" + body)
    path.chmod(0o755)
    return str(path)


def test_a_failed_setup_leaves_the_profile_as_it_was(tmp_path):
    """issue 30 (5): `make e2e` redirected hack/prepare.sh into reports/profile.env, which a failed
    or interrupted set-up left empty (then `make clean` could not find kind)."""
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "profile.env").write_text("E2E_KIND=/old/kind\n")
    failing = _fake(tmp_path / "prepare.sh", "echo E2E_KIND=/half/written\necho 'no Docker engine answers' >&2\nexit 1\n")
    line = _e2e_setup_line(reports).replace("hack/prepare.sh", failing)
    run = subprocess.run(["bash", "-c", line], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 1
    assert (reports / "profile.env").read_text() == "E2E_KIND=/old/kind\n"
    assert f"{reports / 'profile.env'} left as it was" in run.stderr
    assert sorted(p.name for p in reports.iterdir()) == ["profile.env"]  # no temporary file left


def test_a_setup_that_succeeds_replaces_the_profile(tmp_path, monkeypatch):
    """Also with the caller's K8S_VERSION in the environment (trial 8: `make test K8S_VERSION=1.35`
    made this read 'K8S=1.371.35')."""
    monkeypatch.setenv("K8S_VERSION", "1.35")
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "profile.env").write_text("E2E_KIND=/old/kind\n")
    passing = _fake(tmp_path / "prepare.sh", 'echo "E2E_KIND=/new/kind K8S=$K8S_VERSION"\n')
    line = _e2e_setup_line(reports, "1.37").replace("hack/prepare.sh", passing)
    subprocess.run(["bash", "-c", line], cwd=ROOT, check=True)
    assert (reports / "profile.env").read_text() == "E2E_KIND=/new/kind K8S=1.37\n"
    assert sorted(p.name for p in reports.iterdir()) == ["profile.env"]


def test_an_interrupted_setup_leaves_the_profile_as_it_was(tmp_path):
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "profile.env").write_text("E2E_KIND=/old/kind\n")
    # Ctrl-C: SIGINT to the whole process group (a session of its own here, not pytest's)
    interrupted = _fake(tmp_path / "prepare.sh", "echo E2E_KIND=/half/written\nkill -INT 0\nsleep 5\n")
    run = subprocess.run([str(ROOT / "hack" / "write-if-ok.sh"), str(reports / "profile.env"), interrupted],
                         capture_output=True, text=True, timeout=30, start_new_session=True)
    assert run.returncode == 130
    assert (reports / "profile.env").read_text() == "E2E_KIND=/old/kind\n"
    assert sorted(p.name for p in reports.iterdir()) == ["profile.env"]
    # the bad-input table: Ctrl-C 0.3 s into make e2e said only make's "Error 130"
    assert run.stderr.strip() == f"pod-lifecycle-e2e: {interrupted} stopped by SIGINT: {reports / 'profile.env'} left as it was"


def _prepare(tmp_path, k8s_version: str, **env: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    """hack/prepare.sh with K8S_VERSION (and ``env``) and a docker CLI that logs its calls and
    fails them all (no engine), and a go whose module proxy serves nothing (403): its exit, and
    what it asked docker and go."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "docker.log"
    _fake(bin_dir / "docker", f'echo "docker $*" >> {log}\nexit 1\n')
    _fake(bin_dir / "go", f'echo "go $*" >> {log}\n[ "$1" = env ] && echo https://proxy.example,direct && exit 0\n'
                          'echo "go: $4: reading https://proxy.example: 403 Forbidden" >&2\nexit 1\n')
    run = subprocess.run([str(ROOT / "hack" / "prepare.sh")], capture_output=True, text=True, timeout=60,
                         env={"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path), "E2E_START_DOCKER": "0",
                              "E2E_CACHE": str(tmp_path / "cache"), "K8S_VERSION": k8s_version, **env})
    return run, log.read_text().splitlines() if log.exists() else []


def test_an_unsupported_kubernetes_version_is_refused_before_anything_else(tmp_path):
    """issue 30 (10): K8S_VERSION=1.99 tried a registry pull and an offline build first."""
    run, docker = _prepare(tmp_path, "1.99")
    assert run.returncode == 1
    assert "K8S_VERSION=1.99 is not supported: the suite documents and builds Kubernetes 1." in run.stderr
    assert "(hack/offline/versions.env K8S_VERSIONS)" in run.stderr
    assert docker == [] and run.stdout == ""


def test_a_patch_of_a_supported_minor_goes_on_to_the_setup(tmp_path):
    run, docker = _prepare(tmp_path, "v1.34.1")
    assert run.returncode == 1 and "no Docker engine answers" in run.stderr  # past the version check
    assert docker == ["docker info"]  # (a node image may be pulled: the module proxy is not asked)


def test_offline_a_patch_the_module_proxy_does_not_serve_is_refused_before_docker(tmp_path):
    """issue 44 item 1: OFFLINE=1 builds the patch; one the Go module proxy does not have is refused
    by hack/offline/k8s-version.sh (tests/test_offline_versions.py) before Docker is started."""
    run, calls = _prepare(tmp_path, "1.36.99", OFFLINE="1")
    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr.startswith("pod-lifecycle-e2e: error: k8s.io/kubernetes v1.36.99 cannot be had from the Go module proxy "
                                 "(https://proxy.example)")
    assert calls == ["go env GOPROXY", "go list -m -f {{.Version}} k8s.io/kubernetes@v1.36.99"]
    assert not (tmp_path / "cache").exists()


def _e2e_prepare_env(pytest_args: str) -> str:
    """What `make e2e PYTEST_ARGS=...` hands hack/prepare.sh as E2E_PREPARE_FOR (`make -n`)."""
    recipe = subprocess.run(["make", "-n", "-s", "e2e", "REPORTS=/nonexistent", "K8S_VERSION=", f"PYTEST_ARGS={pytest_args}"],
                            cwd=ROOT, check=True, capture_output=True, text=True).stdout
    (line,) = [line for line in recipe.splitlines() if "hack/prepare.sh" in line]
    return line.split("E2E_PREPARE_FOR=", 1)[1].split(" ", 1)[0]


def test_make_e2e_prepares_for_a_kubeconfig_run_only_when_pytest_args_name_one():
    assert _e2e_prepare_env("--kubeconfig /tmp/k --node-agent") == "kubeconfig"
    assert _e2e_prepare_env("--kubeconfig=/tmp/k") == "kubeconfig"
    assert _e2e_prepare_env("-k NF-5") == ""


def _prepare_for_kubeconfig(tmp_path, busybox: str = "") -> tuple[subprocess.CompletedProcess, list[str]]:
    """hack/prepare.sh with E2E_PREPARE_FOR=kubeconfig in a copy of hack/ whose offline/docker.sh
    does nothing (as root the real one may configure the host's engine), and a docker CLI that
    answers and has every image: its exit, and what it asked docker."""
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "hack", tree / "hack")
    (tree / "e2e").symlink_to(ROOT / "e2e")
    _fake(tree / "hack" / "offline" / "docker.sh", "exit 0\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "docker.log"
    _fake(bin_dir / "docker", f'echo "docker $*" >> {log}\n')
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path), "E2E_START_DOCKER": "0",
           "E2E_CACHE": str(tmp_path / "cache"), "K8S_VERSION": "1.37", "E2E_PREPARE_FOR": "kubeconfig"}
    if busybox:
        env["E2E_BUSYBOX_IMAGE"] = busybox
    run = subprocess.run([str(tree / "hack" / "prepare.sh")], capture_output=True, text=True, timeout=60, env=env)
    return run, log.read_text().splitlines() if log.exists() else []


def test_a_kubeconfig_run_prepares_no_kind_and_no_node_image(tmp_path):
    """A new user's trial: `make e2e PYTEST_ARGS="--kubeconfig ..."` pulled kindest/node (refused
    offline), then reused or built the node image offline (22 min) for a cluster it does not make."""
    run, docker = _prepare_for_kubeconfig(tmp_path)
    assert run.returncode == 0, run.stderr
    assert [line.split("=", 1)[0] for line in run.stdout.splitlines()] == ["E2E_BUSYBOX_IMAGE", "E2E_APP_IMAGE", "E2E_EGRESS"]
    # not the public default: make wire-check on the foreign cluster re-armed its bridge for public unicast
    assert "E2E_EGRESS=none" in run.stdout.splitlines()
    assert "E2E_BUSYBOX_IMAGE=docker.io/library/busybox:1.36.1" in run.stdout.splitlines()
    assert not [c for c in docker if "node" in c or "pull" in c or c.startswith("docker create")], docker
    assert "no kind, no node image" in run.stderr
    assert "kind" not in run.stdout and not (tmp_path / "cache").exists()


def test_a_kubeconfig_run_names_the_busybox_it_is_given(tmp_path):
    run, docker = _prepare_for_kubeconfig(tmp_path, busybox="my/busybox:1")
    assert run.returncode == 0, run.stderr
    assert "E2E_BUSYBOX_IMAGE=my/busybox:1" in run.stdout.splitlines()
    assert not [c for c in docker if "busybox" in c], docker


def test_an_unknown_prepare_mode_is_refused(tmp_path):
    run = subprocess.run([str(ROOT / "hack" / "prepare.sh")], capture_output=True, text=True, timeout=60,
                         env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "E2E_PREPARE_FOR": "kubeconfg"})
    assert run.returncode == 1
    assert "E2E_PREPARE_FOR=kubeconfg: give kubeconfig or nothing" in run.stderr
