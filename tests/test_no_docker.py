"""hack/no-docker/run (make e2e NO_DOCKER=1): every way the suite reaches Docker fails loudly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT / "hack" / "no-docker" / "run"


def _under(code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_DOCKER_LOG": str(tmp_path / "calls.log"), "PYTHONPATH": str(ROOT)}
    return subprocess.run([str(RUN), sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=60)


def test_a_docker_call_fails_loudly_and_is_logged(tmp_path):
    r = _under("import subprocess, sys; r = subprocess.run(['docker', 'ps'], capture_output=True, text=True); "
               "print(r.returncode); sys.stderr.write(r.stderr)", tmp_path)
    assert r.stdout.strip() == "97"
    assert "docker is forbidden in this run (NO_DOCKER=1, hack/no-docker/run): docker ps" in r.stderr
    assert (tmp_path / "calls.log").read_text().strip().endswith("docker ps")


def test_the_engine_socket_points_at_nothing(tmp_path):
    r = _under("import os; print(os.environ['DOCKER_HOST'])", tmp_path)
    host = r.stdout.strip()
    assert host.startswith("unix:///nonexistent/")
    assert not Path(host[len("unix://"):]).exists()


def test_the_suites_docker_check_refuses(tmp_path):
    """e2e.cluster.kind.check_docker (the preflight of every owned cluster) finds the wrapper and refuses."""
    r = _under("from e2e.cluster.kind import check_docker, PreflightError\n"
               "try:\n    check_docker()\nexcept PreflightError as e:\n    print('refused:', e)\n", tmp_path)
    assert r.stdout.startswith("refused: the Docker engine is not reachable"), r.stdout + r.stderr
    assert "docker is forbidden" in r.stdout


def test_kind_reaches_docker_through_path_and_fails(tmp_path):
    """kind runs `docker` from PATH: under the wrapper it cannot list or make a cluster."""
    kinds = sorted((Path.home() / ".cache" / "pod-lifecycle-e2e" / "offline" / "bin").glob("kind-*"))
    kind = os.environ.get("E2E_KIND") or (str(kinds[-1]) if kinds else None)
    if not kind:
        import pytest
        pytest.skip("no kind binary here (E2E_KIND, or the one make prepare installs)")
    r = _under(f"import subprocess; r = subprocess.run([{kind!r}, 'get', 'clusters'], capture_output=True, text=True); "
               "print(r.returncode); print(r.stderr)", tmp_path)
    assert r.stdout.splitlines()[0] != "0"
    assert "docker ps" in (tmp_path / "calls.log").read_text()
