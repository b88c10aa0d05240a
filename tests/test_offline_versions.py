"""The offline build of any released patch (issue 44 item 1): the release hack/offline/k8s-version.sh
resolves K8S_VERSION to (a pinned one of versions.env, or another patch of a pinned minor that the
Go module proxy serves), its refusals, hack/offline/build.sh refusing before it writes anything,
and hack/offline/into-cache.sh, which writes a cache entry whole or not at all. Fakes only: a
``go`` that answers from a list, a ``docker`` that logs; no module proxy, Docker or build."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OFFLINE = ROOT / "hack" / "offline"
PINNED = re.search(r'^K8S_VERSIONS="([^"]+)"', (OFFLINE / "versions.env").read_text(), re.M).group(1).split()
"""versions.env K8S_VERSIONS, newest first: ``["v1.37.2", "v1.36.3", …]``."""
MINORS = [v.removeprefix("v").rsplit(".", 1)[0] for v in PINNED]
"""Their minors, as K8S_VERSION spells them: ``["1.37", "1.36", …]``."""
PROXY = "https://proxy.example"


def _unpinned(minor: str) -> str:
    """A patch of ``minor`` that versions.env does not pin: the pinned one's predecessor (v1.36.2),
    or its successor when the pinned one is .0."""
    (pinned,) = [v for v in PINNED if v.startswith(f"v{minor}.")]
    patch = int(pinned.rsplit(".", 1)[1])
    return f"v{minor}.{patch - 1 if patch else patch + 1}"


SERVED = _unpinned(MINORS[1])
"""The one unpinned patch the fake module proxy serves (v1.36.2)."""


def _fake(path: Path, body: str) -> None:
    path.write_text("#!/usr/bin/env bash\n" + body)
    path.chmod(0o755)


def _fakes(tmp_path: Path, goproxy: str = f"{PROXY},direct") -> tuple[Path, Path]:
    """A bin directory with a ``go`` whose module proxy serves :data:`SERVED` and the pinned
    releases only (403 "not available", as proxy.golang.org answers, for the rest) and a ``docker``
    that fails; both log their calls (go's with the GOPROXY it was given) into the log returned."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.log"
    _fake(bin_dir / "go", f"""echo "go $* GOPROXY=$GOPROXY" >> {log}
case "$1 $2" in
  "env GOPROXY") echo '{goproxy}' ;;
  "list -m")
    mv=${{@: -1}}; v=${{mv#k8s.io/kubernetes@}}
    case " {SERVED} {' '.join(PINNED)} " in
      *" $v "*) echo "$v" ;;
      *) printf 'go: %s: reading %s/k8s.io/kubernetes/@v/%s.info: 403 Forbidden\\n\\tserver response: This module version is not available.\\n' "$mv" "$GOPROXY" "$v" >&2; exit 1 ;;
    esac ;;
  *) echo "fake go: $*" >&2; exit 2 ;;
esac
""")
    _fake(bin_dir / "docker", f'echo "docker $*" >> {log}\nexit 1\n')
    return bin_dir, log


def _env(tmp_path: Path, bin_dir: Path) -> dict[str, str]:
    return {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path), "E2E_CACHE": str(tmp_path / "cache")}


def _resolve(tmp_path: Path, k8s_version: str, **fakes: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    """k8s-version.sh K8S_VERSION with the fakes: its exit and output, and the calls it made."""
    bin_dir, log = _fakes(tmp_path, **fakes)
    run = subprocess.run([str(OFFLINE / "k8s-version.sh"), k8s_version], capture_output=True, text=True, timeout=30,
                         env=_env(tmp_path, bin_dir))
    return run, log.read_text().splitlines() if log.exists() else []


@pytest.mark.parametrize(("k8s_version", "release"), [
    ("", PINNED[0]),                                    # the default: the newest pinned
    (MINORS[1], PINNED[1]),                             # 1.36: the pinned patch of that minor
    (f"v{MINORS[1]}", PINNED[1]),
    (PINNED[1].removeprefix("v"), PINNED[1]),           # the pinned patch itself
])
def test_a_minor_or_a_pinned_release_is_the_pinned_one_without_asking_the_proxy(tmp_path, k8s_version, release):
    run, calls = _resolve(tmp_path, k8s_version)
    assert (run.returncode, run.stdout, run.stderr) == (0, f"{release}\n", "")
    assert calls == []


@pytest.mark.parametrize("k8s_version", [SERVED, SERVED.removeprefix("v")])
def test_a_patch_not_pinned_is_the_one_the_module_proxy_serves(tmp_path, k8s_version):
    """1.36.2: asked of the proxy alone (GOPROXY's "direct" fallback dropped: it would clone
    the repository), its .info through `go list -m`."""
    run, calls = _resolve(tmp_path, k8s_version)
    assert (run.returncode, run.stdout, run.stderr) == (0, f"{SERVED}\n", "")
    assert calls == ["go env GOPROXY GOPROXY=", f"go list -m -f {{{{.Version}}}} k8s.io/kubernetes@{SERVED} GOPROXY={PROXY}"]


def test_a_patch_the_module_proxy_does_not_serve_is_refused_with_its_answer(tmp_path):
    missing = f"{MINORS[1]}.99"
    run, _ = _resolve(tmp_path, missing)
    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr.startswith(f"pod-lifecycle-e2e: error: k8s.io/kubernetes v{missing} cannot be had from the Go module "
                                 f"proxy ({PROXY}), so it cannot be built offline (is it a released patch of {MINORS[1]}? "
                                 f"K8S_VERSION={MINORS[1]} builds the pinned {PINNED[1]}):\n")
    assert "  server response: This module version is not available." in run.stderr.splitlines()


@pytest.mark.parametrize("k8s_version", ["1.33.9", "1.33", "1.38.0", "2.0"])
def test_a_minor_not_pinned_is_refused_before_the_proxy_is_asked(tmp_path, k8s_version):
    run, calls = _resolve(tmp_path, k8s_version)
    assert run.returncode == 1 and run.stdout == "" and calls == []
    assert run.stderr == (f"pod-lifecycle-e2e: error: Kubernetes version '{k8s_version}' is not one the offline build supports: "
                          f"a release of {', '.join(MINORS)} (hack/offline/versions.env K8S_VERSIONS)\n")


@pytest.mark.parametrize("k8s_version", ["latest", "1.36.2.1", "1.36.x", "1.36.2-rc.0", "v"])
def test_a_version_of_another_shape_is_refused(tmp_path, k8s_version):
    run, calls = _resolve(tmp_path, k8s_version)
    assert (run.returncode, run.stdout, calls) == (1, "", [])
    assert run.stderr == f"pod-lifecycle-e2e: error: Kubernetes version '{k8s_version}': give 1.MINOR or 1.MINOR.PATCH\n"


@pytest.mark.parametrize("goproxy", ["direct", "off", "direct|off"])
def test_a_patch_not_pinned_needs_a_module_proxy(tmp_path, goproxy):
    run, calls = _resolve(tmp_path, SERVED, goproxy=goproxy)
    assert run.returncode == 1 and run.stdout == ""
    assert f"GOPROXY={goproxy} names no module proxy" in run.stderr
    assert not [c for c in calls if c.startswith("go list")]


@pytest.mark.parametrize("k8s_version", [f"{MINORS[1]}.99", "1.33.9"])
def test_the_build_refuses_before_it_writes_or_starts_anything(tmp_path, k8s_version):
    """build.sh (make offline, make prepare OFFLINE=1): no cache directory, no docker call."""
    bin_dir, log = _fakes(tmp_path)
    run = subprocess.run([str(OFFLINE / "build.sh"), k8s_version], capture_output=True, text=True, timeout=30,
                         env=_env(tmp_path, bin_dir))
    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr.startswith("pod-lifecycle-e2e: error: ")
    assert not (tmp_path / "cache").exists()
    assert not log.exists() or "docker" not in log.read_text()


# -- into-cache.sh ---------------------------------------------------------------------------------

def _into_cache(dest: Path, body: str, **kw) -> subprocess.CompletedProcess:
    """into-cache.sh DEST with a command whose bash body gets the path to write as $1."""
    command = dest.parent / "command.sh"
    _fake(command, body)
    return subprocess.run([str(OFFLINE / "into-cache.sh"), str(dest), str(command)], capture_output=True, text=True,
                          timeout=30, **kw)


def _left(cache: Path) -> list[str]:
    return sorted(p.name for p in cache.iterdir() if p.name != "command.sh")


def test_into_cache_puts_a_whole_entry_in_place_of_a_stale_one(tmp_path):
    """A kubernetes-<version> directory without .done (an older build.sh's interrupted build) is
    replaced, not nested into."""
    dest = tmp_path / "kubernetes-v1.36.2-k"
    dest.mkdir()
    (dest / "kubelet").write_text("half")
    run = _into_cache(dest, 'mkdir "$1" && echo whole > "$1/kubelet"\n')
    assert run.returncode == 0, run.stderr
    assert _left(tmp_path) == [dest.name]
    assert sorted(p.name for p in dest.iterdir()) == ["kubelet"] and (dest / "kubelet").read_text() == "whole\n"


def test_into_cache_takes_a_file_written_through_its_own_tmp(tmp_path):
    """As build-images.sh writes its archive: OUT.tmp, then moved to OUT."""
    dest = tmp_path / "images-v1.36.2-k.tar"
    run = _into_cache(dest, 'echo tar > "$1.tmp" && mv "$1.tmp" "$1"\n')
    assert run.returncode == 0, run.stderr
    assert _left(tmp_path) == [dest.name] and dest.read_text() == "tar\n"


def test_a_failed_build_leaves_nothing_of_it(tmp_path):
    dest = tmp_path / "images-v1.36.2-k.tar"
    run = _into_cache(dest, 'echo half > "$1.tmp"; echo "go build failed" >&2; exit 3\n')
    assert run.returncode == 3
    assert _left(tmp_path) == []
    assert run.stderr.splitlines()[-1] == (f"pod-lifecycle-e2e: error: {tmp_path / 'command.sh'} failed (exit 3): "
                                           f"nothing of {dest} left")


def test_a_failed_build_leaves_an_earlier_entry_as_it_was(tmp_path):
    dest = tmp_path / "kubernetes-v1.36.2-k"
    dest.mkdir()
    (dest / "kubelet").write_text("earlier")
    run = _into_cache(dest, 'mkdir "$1"; echo half > "$1/kubelet"; exit 1\n')
    assert run.returncode == 1
    assert _left(tmp_path) == [dest.name] and (dest / "kubelet").read_text() == "earlier"


@pytest.mark.parametrize(("signal", "status"), [("INT", 130), ("TERM", 143)])
def test_an_interrupted_build_leaves_nothing_of_it(tmp_path, signal, status):
    """Ctrl-C (SIGINT to the whole process group: a session of its own here) or SIGTERM mid-build."""
    dest = tmp_path / "kubernetes-v1.36.2-k"
    run = _into_cache(dest, f'mkdir "$1"; echo half > "$1/kubelet"; echo half > "$1.tmp"; kill -{signal} 0; sleep 5\n',
                      start_new_session=True)
    assert run.returncode == status
    assert _left(tmp_path) == []
    # (bash may first say the command's "Terminated")
    assert run.stderr.splitlines()[-1] == f"pod-lifecycle-e2e: {tmp_path / 'command.sh'} stopped by SIG{signal}: nothing of {dest} left"


# -- build.sh on fakes: what it builds for a patch, and what it reuses ------------------------------

def _build_tree(tmp_path: Path, kubernetes_fails: bool = False) -> tuple[Path, dict[str, str], Path]:
    """A copy of hack/offline whose build steps (build-*.sh, docker.sh) are fakes that log their
    arguments and write what they are asked for, and a bin directory of fakes for every tool
    build.sh asks for (no apt-get: nothing is missing). Its build.sh, k8s-version.sh and
    into-cache.sh are the real ones. Returns (build.sh, env, calls log)."""
    tree = tmp_path / "offline"
    tree.mkdir()
    for name in ("build.sh", "k8s-version.sh", "into-cache.sh", "lib.sh", "versions.env", "10-offline-ptp.conflist"):
        (tree / name).write_bytes((OFFLINE / name).read_bytes())
        (tree / name).chmod((OFFLINE / name).stat().st_mode)
    bin_dir, log = _fakes(tmp_path)
    images = tmp_path / "docker-images"
    step = f'echo "$(basename "$0") $*" >> {log}\n'
    _fake(tree / "docker.sh", step)
    _fake(tree / "build-tools.sh", step + 'mkdir "$1"\n')
    _fake(tree / "build-rootfs.sh", step + 'touch "$1"\n')
    _fake(tree / "build-base.sh", step + f'echo "$3" >> {images}\n')
    _fake(tree / "build-kubernetes.sh", step + ('mkdir "$2"; echo half > "$2/kubelet"; exit 1\n' if kubernetes_fails
                                                else 'mkdir "$2" && echo "$1" > "$2/version"\n'))
    _fake(tree / "build-images.sh", step + 'echo tar > "$3.tmp" && mv "$3.tmp" "$3"\n')
    _fake(tree / "build-node.sh", step + f'echo "$4" >> {images}\n')
    _fake(tree / "build-busybox.sh", step + f'echo "$1" >> {images}\n')
    # go: as _fakes', and `go install` of kind into GOBIN
    go = (bin_dir / "go").read_text().replace('  *) echo "fake go', '  "install sigs.k8s.io/kind@"*) mkdir -p "$GOBIN" && touch "$GOBIN/kind" && chmod +x "$GOBIN/kind" ;;\n  *) echo "fake go')
    (bin_dir / "go").write_text(go)
    _fake(bin_dir / "docker", f"""echo "docker $*" >> {log}
case "$*" in
  "image inspect -f "*) echo 1000000 ;;
  "image inspect "*) grep -qxF "$3" {images} 2>/dev/null ;;
  *) exit 1 ;;
esac
""")
    for tool in ("cc", "debootstrap", "jq", "pkg-config", "dpkg"):
        _fake(bin_dir / tool, "exit 0\n")
    _fake(bin_dir / "dpkg-query", "echo 1:1.35.0-4+deb12u1\n")
    _fake(bin_dir / "df", 'echo "Filesystem 1024-blocks Used Available Capacity Mounted"; echo "fake 1 1 99999999999 1% /"\n')
    return tree / "build.sh", _env(tmp_path, bin_dir), log


def _steps(log: Path) -> list[str]:
    """The build steps a run called, in order (their first argument cut to the file name)."""
    if not log.exists():
        return []
    return [line.split(" ", 1)[0] for line in log.read_text().splitlines() if line.startswith("build-")]


def test_a_patch_not_pinned_is_built_on_its_own_and_reused_the_second_time(tmp_path):
    build, env, log = _build_tree(tmp_path)
    first = subprocess.run([str(build), SERVED.removeprefix("v")], capture_output=True, text=True, timeout=60, env=env)
    assert first.returncode == 0, first.stderr
    profile = dict(line.split("=", 1) for line in first.stdout.splitlines())
    assert re.fullmatch(rf"pod-lifecycle-e2e/kind-node:{re.escape(SERVED)}-[0-9a-f]{{10}}", profile["E2E_NODE_IMAGE"])
    assert _steps(log) == ["build-tools.sh", "build-rootfs.sh", "build-base.sh", "build-kubernetes.sh", "build-images.sh",
                           "build-node.sh", "build-busybox.sh"]
    assert f"build-kubernetes.sh {SERVED} " in log.read_text()
    cache = tmp_path / "cache" / "offline"
    entries = sorted(p.name for p in cache.iterdir() if SERVED in p.name)
    assert [re.sub(r"-[0-9a-f]{10}", "-KEY", e) for e in entries] == [f"images-{SERVED}-KEY.tar", f"kubernetes-{SERVED}-KEY"]
    assert not [p for p in cache.iterdir() if ".part" in p.name]
    # the second time: every step reused (the pinned minor's release was never asked for)
    log.unlink()
    second = subprocess.run([str(build), SERVED], capture_output=True, text=True, timeout=60, env=env)
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout and _steps(log) == []
    assert PINNED[1] not in " ".join(p.name for p in cache.iterdir())


def test_the_pinned_patch_of_the_same_minor_is_a_cache_entry_of_its_own(tmp_path):
    build, env, log = _build_tree(tmp_path)
    for k8s_version in (SERVED, MINORS[1]):
        run = subprocess.run([str(build), k8s_version], capture_output=True, text=True, timeout=60, env=env)
        assert run.returncode == 0, run.stderr
    assert [line.split(" ")[1] for line in log.read_text().splitlines() if line.startswith("build-kubernetes.sh")] == [SERVED, PINNED[1]]
    assert _steps(log).count("build-base.sh") == 1  # the base image is shared
    names = [p.name for p in (tmp_path / "cache" / "offline").iterdir()]
    assert sum(n.startswith(("kubernetes-", "images-")) for n in names) == 4


def test_a_failed_kubernetes_build_leaves_nothing_of_that_patch_in_the_cache(tmp_path):
    build, env, log = _build_tree(tmp_path, kubernetes_fails=True)
    run = subprocess.run([str(build), SERVED], capture_output=True, text=True, timeout=60, env=env)
    assert run.returncode == 1 and run.stdout == ""
    assert _steps(log)[-1] == "build-kubernetes.sh"
    assert not [p.name for p in (tmp_path / "cache" / "offline").iterdir() if SERVED in p.name]
