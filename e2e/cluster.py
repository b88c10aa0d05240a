"""kind clusters keyed by profile, created once per run and shared by every test and worker.

A :class:`Profile` is a kind config file, optional patch files merged over it (the offline
profile adds ``hack/offline/kind-offline.yaml``) and a node image. Its cluster is named by a
hash of the rendered config and the image, so two profiles never share a cluster and the same
profile always finds its own. Creation runs under a file lock; the process that created a
cluster records it, and only that run deletes it at the end (unless asked to keep it).

Errors are :class:`PreflightError` with a message a person can act on: Docker missing or not
answering, kind missing, a kind command failing (with its output).
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from filelock import FileLock

log = logging.getLogger(__name__)

STATE_DIR = Path(os.environ.get("E2E_STATE_DIR", Path(tempfile.gettempdir()) / "pod-lifecycle-e2e"))
# Seconds: a Docker engine that has not answered `docker info` by then is treated as down.
DOCKER_TIMEOUT_S = 10
# kind create --wait: how long kind waits for the control plane to be Ready.
KIND_WAIT = "180s"


class PreflightError(RuntimeError):
    """Something the suite needs is missing or not answering; the message says what to do."""


def _merge(base: object, patch: object) -> object:
    """Deep merge for kind configs: maps merge key by key, lists are appended to."""
    if isinstance(base, dict) and isinstance(patch, dict):
        out = dict(base)
        for k, v in patch.items():
            out[k] = _merge(base[k], v) if k in base else v
        return out
    if isinstance(base, list) and isinstance(patch, list):
        return base + patch
    return patch


@dataclass(frozen=True)
class Profile:
    """kind config + patches + node image; see module doc."""

    kind_config: Path
    node_image: str
    patches: tuple[Path, ...] = field(default_factory=tuple)

    def config(self) -> dict:
        """The kind config with every patch merged in. Raises ``PreflightError`` on bad YAML."""
        merged: object = {}
        for path in (self.kind_config, *self.patches):
            try:
                merged = _merge(merged, yaml.safe_load(Path(path).read_text()) or {})
            except (OSError, yaml.YAMLError) as e:
                raise PreflightError(f"kind config {path}: {e}") from e
        return merged  # type: ignore[return-value]

    def rendered(self) -> str:
        return yaml.safe_dump(self.config(), sort_keys=True)

    @property
    def key(self) -> str:
        digest = hashlib.sha256((self.rendered() + "\n" + self.node_image).encode()).hexdigest()
        return digest[:10]

    @property
    def cluster_name(self) -> str:
        return f"ple2e-{self.key}"


def _run(cmd: list[str], timeout: float | None = None, input: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, input=input)


def check_docker() -> str:
    """The Docker engine's version; ``PreflightError`` within ``DOCKER_TIMEOUT_S`` if none answers."""
    if not shutil.which("docker"):
        raise PreflightError("docker CLI not found on PATH: install Docker (kind runs its nodes as Docker containers)")
    try:
        r = _run(["docker", "info", "--format", "{{.ServerVersion}}"], timeout=DOCKER_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise PreflightError(f"the Docker engine did not answer `docker info` within {DOCKER_TIMEOUT_S} s: is it running?") from None
    if r.returncode != 0 or not r.stdout.strip():
        raise PreflightError(f"the Docker engine is not reachable (`docker info`: {r.stderr.strip() or r.stdout.strip()}): start Docker and try again")
    return r.stdout.strip()


def kind_binary() -> str:
    """Path of the kind CLI (``$E2E_KIND`` or ``kind`` on PATH); ``PreflightError`` if missing."""
    given = os.environ.get("E2E_KIND")
    if given:
        if not (Path(given).is_file() and os.access(given, os.X_OK)):
            raise PreflightError(f"E2E_KIND={given} is not an executable file (`make e2e` installs the pinned kind)")
        return given
    path = shutil.which("kind")
    if not path:
        raise PreflightError("kind not found (set E2E_KIND or put kind on PATH; `make e2e` installs the pinned version)")
    return path


class Kind:
    """The kind CLI for one profile's cluster."""

    def __init__(self, profile: Profile, kind: str | None = None):
        self.profile = profile
        self.kind = kind or kind_binary()
        self.name = profile.cluster_name
        STATE_DIR.mkdir(parents=True, exist_ok=True)
        self.kubeconfig = STATE_DIR / f"{self.name}.kubeconfig"
        self._owner_file = STATE_DIR / f"{self.name}.owner"
        self._lock = FileLock(str(STATE_DIR / f"{self.name}.lock"))

    def _kind(self, *args: str, timeout: float | None = None) -> str:
        r = _run([self.kind, *args], timeout=timeout)
        if r.returncode != 0:
            raise PreflightError(f"`kind {' '.join(args)}` failed ({r.returncode}):\n{(r.stderr or r.stdout).strip()[-3000:]}")
        return r.stdout

    def exists(self) -> bool:
        return self.name in self._kind("get", "clusters").split()

    def ensure(self, run_id: str, images: list[str] = ()) -> Path:
        """Create the cluster unless it exists (under the lock), load ``images``, return the
        kubeconfig path. The creating run is recorded as the owner."""
        with self._lock:
            if self.exists() and not self._nodes_running():
                # e.g. after a reboot or a Docker restart: kind does not restart its nodes
                log.warning("kind cluster %s exists but its node is not running: recreating it", self.name)
                self._kind("delete", "cluster", "--name", self.name, timeout=300)
            if self.exists():
                log.info("reusing kind cluster %s", self.name)
            else:
                log.info("creating kind cluster %s (image %s)", self.name, self.profile.node_image)
                cfg = STATE_DIR / f"{self.name}.kind-config.yaml"
                cfg.write_text(self.profile.rendered())
                try:
                    self._kind("create", "cluster", "--name", self.name, "--image", self.profile.node_image,
                               "--config", str(cfg), "--kubeconfig", str(self.kubeconfig), "--wait", KIND_WAIT)
                except BaseException:
                    # a half-created cluster (or Ctrl-C during creation) must not be left behind
                    _run([self.kind, "delete", "cluster", "--name", self.name])
                    raise
                self._owner_file.write_text(run_id)
            self.kubeconfig.write_text(self._kind("get", "kubeconfig", "--name", self.name))
            self._confine_pod_subnet()
            for image in images:
                self._kind("load", "docker-image", image, "--name", self.name)
        return self.kubeconfig

    def _confine_pod_subnet(self) -> None:
        """Never let a packet for a pod address leave the node.

        The node routes its pod subnet only per live pod (a /32 per veth); a packet for a
        released pod IP (kube-proxy still holding a stale endpoint, seen in PS-4) would
        otherwise follow the node's default route off the machine. An ``unreachable`` route for
        the whole subnet is less specific than every per-pod route, so it only catches those.
        (Not for the Service range: host-network clients need the default route there until
        kube-proxy's NAT rewrites the destination.)
        """
        subnet = (self.profile.config().get("networking") or {}).get("podSubnet", "10.244.0.0/16")
        for cidr in subnet.split(","):
            if ":" not in cidr:  # IPv4 only: the default profiles are single-stack IPv4
                self.node_exec("ip", "route", "replace", "unreachable", cidr.strip())

    def _nodes_running(self) -> bool:
        r = _run(["docker", "inspect", "-f", "{{.State.Running}}", f"{self.name}-control-plane"], timeout=DOCKER_TIMEOUT_S)
        return r.returncode == 0 and r.stdout.strip() == "true"

    def owned_by(self, run_id: str) -> bool:
        return self._owner_file.exists() and self._owner_file.read_text().strip() == run_id

    def export_logs(self, dest: Path) -> None:
        dest.mkdir(parents=True, exist_ok=True)
        self._kind("export", "logs", str(dest), "--name", self.name, timeout=300)

    def delete(self) -> None:
        with self._lock:
            self._kind("delete", "cluster", "--name", self.name, timeout=300)
            self._owner_file.unlink(missing_ok=True)
            self.kubeconfig.unlink(missing_ok=True)

    def copy_from_node(self, src: str, dest: Path) -> None:
        """Copy file ``src`` out of the control-plane node container to ``dest`` (``docker cp``)."""
        r = _run(["docker", "cp", f"{self.name}-control-plane:{src}", str(dest)], timeout=120)
        if r.returncode != 0:
            raise PreflightError(f"docker cp {self.name}-control-plane:{src}: {r.stderr.strip()}")

    def node_exec(self, *cmd: str, timeout: float = 30) -> str:
        """Run ``cmd`` inside the control-plane node container (``docker exec``)."""
        r = _run(["docker", "exec", f"{self.name}-control-plane", *cmd], timeout=timeout)
        if r.returncode != 0:
            raise RuntimeError(f"docker exec {' '.join(cmd)}: {r.stderr.strip()}")
        return r.stdout
