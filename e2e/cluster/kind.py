"""kind clusters keyed by profile, created on demand and shared by every test and worker.

A :class:`Profile` is a kind config file, patch files merged over it (the offline build's
``hack/offline/kind-offline.yaml``, then ``profiles/<name>.yaml`` of a named profile) and a
node image. Its cluster is named by a hash of the rendered config and the image, so two
profiles never share a cluster and the same profile always finds its own. Creation runs under
a file lock; the cluster's state file (``<STATE_DIR>/<cluster>.json``) records the run that
created it (only that run deletes it at the end, unless asked to keep it) and the host ports
it got.

Host ports: an ``extraPortMappings`` entry without ``hostPort`` (or ``hostPort: 0``) gets a
free port on its ``listenAddress`` (``127.0.0.1`` when none is given), chosen by kind at
creation (``common.PortOrGetFreePort``, kind v0.33.0 pkg/cluster/internal/providers/docker/
provision.go); :meth:`Kind.host_port` tells tests which one. Several clusters can therefore
live side by side.

More than one node with the offline image's static CNI (``networking.disableDefaultCNI``):
each node gets its own /24 of the pod subnet in a ptp conflist mounted over the baked one
(``extraMounts``), routes to the other nodes' /24 via their address on the Docker network,
and one MASQUERADE rule for pod traffic leaving the pod subnet (CASES-faults.md §3a).

Egress (:mod:`e2e.cluster.egress`): every node of every profile mounts the node guard (the pod subnet's
``unreachable`` route and the Service-subnet reject, run before every kubelet start), and every
cluster lives on the suite's own Docker network, created — with the host guard, as root —
before the first cluster.

Errors are :class:`PreflightError` with a message a person can act on: Docker missing or not
answering, kind missing, a kind command failing (with its output), an unknown profile.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import logging
import os
import shutil
import subprocess
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import yaml
from filelock import FileLock

from . import egress
from ..base.locks import EXCLUSIVE, SHARED, first_free, hold_shared, let_go, remove_unused, take, try_take, unused

log = logging.getLogger(__name__)

STATE_DIR = Path(os.environ.get("E2E_STATE_DIR", Path(tempfile.gettempdir()) / "pod-lifecycle-e2e"))
# Seconds: a Docker engine that has not answered `docker info` by then is treated as down.
DOCKER_TIMEOUT_S = 10
# kind's label on the node containers of a cluster: its name
KIND_CLUSTER_LABEL = "io.x-k8s.kind.cluster"
# A half-created cluster is deleted until none of its containers shows up for this many seconds
# (Docker creates a container kind asked for even after kind was stopped), at most the limit.
HALF_CREATED_QUIET_S = 3.0
HALF_CREATED_LIMIT_S = 60.0
# kind create --wait: how long kind waits for the control plane to be Ready.
KIND_WAIT = "180s"
# Seconds a new or reused cluster gets for all nodes Ready and CoreDNS available.
READY_TIMEOUT_S = 180
# Every cluster of the suite is named ple2e-<profile key>.
CLUSTER_PREFIX = "ple2e-"
DEFAULT_PROFILE = "default"
# The offline image's CNI config (hack/offline): ptp + host-local on 10.244.0.0/24, baked into
# every node; a multi-node cluster mounts a per-node copy over it.
OFFLINE_CONFLIST = Path(__file__).resolve().parents[2] / "hack" / "offline" / "10-offline-ptp.conflist"
CONFLIST_IN_NODE = "/etc/cni/net.d/10-offline-ptp.conflist"
# kind's default pod subnet (kind v0.33.0 pkg/apis/config/v1alpha4/default.go).
KIND_POD_SUBNET = "10.244.0.0/16"
# Prefix length of each node's share of the pod subnet (as kube-controller-manager's
# --node-cidr-mask-size default for IPv4: 24).
NODE_POD_PREFIX = 24


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


def profile_patches(profiles_dir: Path, name: str) -> tuple[Path, ...]:
    """The patch files of profile ``name``: none for ``default``, else ``profiles_dir/<name>.yaml``.

    Raises ``PreflightError`` naming the known profiles when the file does not exist.
    """
    if name == DEFAULT_PROFILE:
        return ()
    path = Path(profiles_dir) / f"{name}.yaml"
    if not path.is_file():
        known = sorted([DEFAULT_PROFILE, *(p.stem for p in Path(profiles_dir).glob("*.yaml"))])
        raise PreflightError(f"unknown cluster profile {name!r}: no {path} (known: {', '.join(known)})")
    return (path,)


def pod_subnet(cfg: dict) -> str:
    """The cluster's IPv4 pod subnet (``networking.podSubnet``, kind's default otherwise)."""
    subnets = (cfg.get("networking") or {}).get("podSubnet", KIND_POD_SUBNET)
    v4 = [c.strip() for c in subnets.split(",") if ":" not in c]
    if not v4:
        raise PreflightError(f"podSubnet {subnets!r} has no IPv4 range (the suite's profiles are IPv4)")
    return v4[0]


def node_pod_subnets(cfg: dict) -> list[str]:
    """One /24 of the pod subnet per node of ``cfg``, in the order of ``nodes``."""
    nodes = cfg.get("nodes") or [{"role": "control-plane"}]
    subnets = ipaddress.ip_network(pod_subnet(cfg)).subnets(new_prefix=NODE_POD_PREFIX)
    return [str(next(subnets)) for _ in nodes]


def static_ptp_conflist(subnet: str) -> str:
    """The offline conflist for one node's ``subnet``: gateway = its first address, and no
    per-pod masquerading (``ipMasq: false``: pod-to-pod traffic across nodes keeps its source;
    one node-wide rule masquerades traffic leaving the pod subnet, see :meth:`Kind.ensure`)."""
    conf = json.loads(OFFLINE_CONFLIST.read_text())
    net = ipaddress.ip_network(subnet)
    for plugin in conf["plugins"]:
        if plugin.get("type") == "ptp":
            plugin["ipMasq"] = False
            plugin["ipam"]["ranges"] = [[{"subnet": str(net), "gateway": str(net.network_address + 1)}]]
    return json.dumps(conf, indent=2, sort_keys=True) + "\n"


def uses_static_cni(cfg: dict) -> bool:
    """Whether nodes of ``cfg`` need the per-node static CNI: the default CNI is off (the
    offline image's ptp conflist stands in for kindnetd) and there is more than one node."""
    return bool((cfg.get("networking") or {}).get("disableDefaultCNI")) and len(cfg.get("nodes") or []) > 1


@dataclass(frozen=True)
class Profile:
    """kind config + patches + node image; see module doc. ``name`` is what scenarios ask for
    (``@pytest.mark.profile("name")``); the cluster follows the content, not the name."""

    kind_config: Path
    node_image: str
    patches: tuple[Path, ...] = field(default_factory=tuple)
    name: str = DEFAULT_PROFILE
    # which copy of the profile's cluster (0: the one every run has; 1, 2, …: the replicas that
    # let serial tests of one profile run side by side, e2e.run.plan)
    replica: int = 0

    def _merged(self) -> dict:
        merged: object = {}
        for path in (self.kind_config, *self.patches):
            try:
                with open(path) as f:  # a file, not its text: a YAML error names the file, not <unicode string>
                    merged = _merge(merged, yaml.safe_load(f) or {})
            except (OSError, yaml.YAMLError) as e:
                raise PreflightError(f"kind config {path}: {e}") from e
        if not isinstance(merged, dict):
            raise PreflightError(f"kind config {self.kind_config}: not a mapping")
        return merged

    def config(self) -> dict:
        """The kind config with every patch merged in, host ports defaulted to 127.0.0.1 and,
        for several nodes on the static CNI, each node's conflist mount (:meth:`files`).
        Raises ``PreflightError`` on bad YAML."""
        cfg = self._merged()
        for node in cfg.get("nodes") or []:
            for pm in node.get("extraPortMappings") or []:
                pm.setdefault("listenAddress", "127.0.0.1")
        if uses_static_cni(cfg):
            for node, (path, _) in zip(cfg["nodes"], self._conflists(cfg), strict=False):
                node["extraMounts"] = [*(node.get("extraMounts") or []),
                                       {"hostPath": str(path), "containerPath": CONFLIST_IN_NODE, "readOnly": True}]
        cfg.setdefault("nodes", [{"role": "control-plane"}])
        for node in cfg["nodes"]:
            node["extraMounts"] = [*(node.get("extraMounts") or []),
                                   *({"hostPath": str(path), "containerPath": in_node, "readOnly": True}
                                     for path, (in_node, _) in self._guard(cfg).items())]
        return cfg

    def _guard(self, cfg: dict) -> dict[Path, tuple[str, str]]:
        return egress.node_guard_files(STATE_DIR, [pod_subnet(cfg)], egress.service_subnets(cfg))

    def _conflists(self, cfg: dict) -> list[tuple[Path, str]]:
        out = []
        for subnet in node_pod_subnets(cfg):
            text = static_ptp_conflist(subnet)
            digest = hashlib.sha256(text.encode()).hexdigest()[:12]
            out.append((STATE_DIR / "cni" / f"{digest}.conflist", text))
        return out

    def files(self) -> dict[Path, str]:
        """Host files the config mounts into nodes (content-addressed, so the key covers them)."""
        cfg = self._merged()
        files = dict(self._conflists(cfg)) if uses_static_cni(cfg) else {}
        return {**files, **{path: text for path, (_, text) in self._guard(cfg).items()}}

    def rendered(self) -> str:
        return yaml.safe_dump(self.config(), sort_keys=True)

    @property
    def key(self) -> str:
        digest = hashlib.sha256((self.rendered() + "\n" + self.node_image).encode()).hexdigest()
        return digest[:10]

    @property
    def cluster_name(self) -> str:
        """``ple2e-<key>``, a replica ``ple2e-<key>-<replica>``."""
        return f"{CLUSTER_PREFIX}{self.key}" + (f"-{self.replica}" if self.replica else "")


def _run(cmd: list[str], timeout: float | None = None, input: str | None = None,
         env: dict[str, str] | None = None, detached: bool = False) -> subprocess.CompletedProcess:
    """``detached``: in a session of its own, out of reach of a Ctrl-C (or SIGTERM) sent to the
    run's process group — for the clean-up commands the suite lets finish while it ignores them
    (e2e.plugin.signals): cut half-way, a ``kind delete`` leaves the cluster's state files."""
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, input=input, env=env,
                          start_new_session=detached)


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


def ptp_subnet(conflist: str) -> str:
    """The pod subnet share (``10.244.1.0/24``) of a node's static CNI conflist (the JSON text of
    :data:`CONFLIST_IN_NODE`: its ``ptp`` plugin's first IPAM range). ``ValueError`` (a JSON error)
    for text that is not JSON, ``StopIteration`` or ``KeyError`` for a conflist without that range."""
    ptp = next(p for p in json.loads(conflist)["plugins"] if p.get("type") == "ptp")
    return ptp["ipam"]["ranges"][0][0]["subnet"]


class Kind:
    """The kind CLI for one cluster (by name) and the suite's state of it in ``STATE_DIR``:
    ``<name>.json`` (owner run, profile, node image, host ports), ``<name>.kubeconfig``,
    ``<name>.lock`` (creation), ``<name>.use`` (held shared by every process using it): the two
    lock files go with the cluster (:meth:`delete_unless_used`), or when its creation failed."""

    def __init__(self, name: str, kind: str | None = None):
        self.kind = kind or kind_binary()
        self.name = name
        STATE_DIR.mkdir(parents=True, exist_ok=True)
        self.kubeconfig = STATE_DIR / f"{self.name}.kubeconfig"
        self.state_file = STATE_DIR / f"{self.name}.json"
        self._lock = FileLock(str(STATE_DIR / f"{self.name}.lock"))

    @classmethod
    def of(cls, profile: Profile, kind: str | None = None) -> "Kind":
        return cls(profile.cluster_name, kind)

    def _kind(self, *args: str, timeout: float | None = None, detached: bool = False) -> str:
        # every cluster on the suite's network (e2e.cluster.egress); kind warns that the variable is set
        r = _run([self.kind, *args], timeout=timeout, env={**os.environ, "KIND_EXPERIMENTAL_DOCKER_NETWORK": egress.NETWORK},
                 detached=detached)
        if r.returncode != 0:
            raise PreflightError(f"`kind {' '.join(args)}` failed ({r.returncode}):\n{(r.stderr or r.stdout).strip()[-3000:]}")
        return r.stdout

    def exists(self) -> bool:
        return self.name in self._kind("get", "clusters").split()

    def nodes(self) -> list[str]:
        """The node containers, control plane first (``kind get nodes``)."""
        names = self._kind("get", "nodes", "--name", self.name).split()
        return sorted(names, key=lambda n: ("control-plane" not in n, n))

    @property
    def control_plane(self) -> str:
        return f"{self.name}-control-plane"

    def ensure(self, profile: Profile, run_id: str, images: Iterable[str] = ()) -> Path:
        """Create the cluster of ``profile`` unless it exists (under the lock), wire its nodes,
        load ``images``, return the kubeconfig path. The creating run is recorded as the owner.
        The calling process holds the cluster's use lock from then on (see :func:`cluster_in_use`)."""
        if profile.cluster_name != self.name:
            raise ValueError(f"profile {profile.name} is cluster {profile.cluster_name}, not {self.name}")
        self._hold_use()
        try:
            self._ensure(profile, run_id, images)
        except BaseException:
            if not self.state_file.exists():  # not created (failed, or stopped): this process no longer uses it
                self._let_go()
            raise
        return self.kubeconfig

    def _ensure(self, profile: Profile, run_id: str, images: Iterable[str]) -> None:
        with self._lock:
            if self.exists() and not self._nodes_running():
                # e.g. after a reboot or a Docker restart: kind does not restart its nodes
                log.warning("kind cluster %s exists but a node is not running: recreating it", self.name)
                self._kind("delete", "cluster", "--name", self.name, timeout=300)
            if self.exists() and self.state().get("broken"):
                # a fault left it unhealthy (e2e.faults): never reused
                log.warning("kind cluster %s is marked broken (%s): recreating it", self.name, self.state()["broken"])
                self._kind("delete", "cluster", "--name", self.name, timeout=300)
            if self.exists():
                log.info("reusing kind cluster %s (profile %s)", self.name, profile.name)
                self._set_up(profile, images)
            else:
                with creating():
                    self._create(profile, run_id)
                    self._set_up(profile, images)

    def _set_up(self, profile: Profile, images: Iterable[str]) -> None:
        self.write_kubeconfig()
        self.wire_nodes(profile.config())
        self._wait_ready()
        self.load_images(images)

    def load_images(self, images: Iterable[str]) -> None:
        """Load the local Docker engine's ``images`` into every node (``kind load docker-image``):
        pods with ``imagePullPolicy: Never`` then find them; nothing is pulled. ``PreflightError``
        when kind fails (e.g. an image the engine does not have)."""
        for image in images:
            self._kind("load", "docker-image", image, "--name", self.name)

    def write_kubeconfig(self) -> Path:
        """Write the cluster's kubeconfig (``kind get kubeconfig``) to :attr:`kubeconfig`."""
        self.kubeconfig.write_text(self._kind("get", "kubeconfig", "--name", self.name))
        return self.kubeconfig

    def _create(self, profile: Profile, run_id: str) -> None:
        log.info("creating kind cluster %s (profile %s, image %s)", self.name, profile.name, profile.node_image)
        for path, text in profile.files().items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        cfg = STATE_DIR / f"{self.name}.kind-config.yaml"
        cfg.write_text(profile.rendered())
        try:
            log.info("%s", egress.prepare())
            self._kind("create", "cluster", "--name", self.name, "--image", profile.node_image,
                       "--config", str(cfg), "--kubeconfig", str(self.kubeconfig), "--wait", KIND_WAIT)
            state = {"owner": run_id, "profile": profile.name, "node_image": profile.node_image,
                     "created": time.time(), "host_ports": self._published_ports()}
            self.state_file.write_text(json.dumps(state, indent=2, sort_keys=True))
        except BaseException:
            # a half-created cluster (or Ctrl-C during creation) must not be left behind, nor its files
            self._remove_half_created()
            for path in (self.state_file, self.kubeconfig, cfg):
                path.unlink(missing_ok=True)
            raise

    def _containers(self) -> list[str]:
        """The node containers of this cluster Docker has, running or not (kind's label)."""
        r = _run(["docker", "ps", "-a", "-q", "--filter", f"label={KIND_CLUSTER_LABEL}={self.name}"], timeout=DOCKER_TIMEOUT_S)
        return r.stdout.split()

    def _remove_half_created(self, quiet_s: float = HALF_CREATED_QUIET_S, limit_s: float = HALF_CREATED_LIMIT_S) -> None:
        """``kind delete`` until no node container of the cluster shows up for ``quiet_s`` seconds
        (at most ``limit_s``): a kind create stopped in its first seconds may have asked Docker
        for a node that appears only after the first delete (make interrupt-check: SIGINT 1.4 s
        into the creation left the control-plane container)."""
        deadline = time.monotonic() + limit_s
        while True:
            _run([self.kind, "delete", "cluster", "--name", self.name], timeout=300, detached=True)
            quiet_until, found = time.monotonic() + quiet_s, False
            while not found and time.monotonic() < quiet_until:
                found = bool(self._containers())
                time.sleep(0.5)
            if not found or time.monotonic() > deadline:
                return

    def _published_ports(self) -> dict[str, int]:
        """``{"<containerPort>/<proto>": hostPort}`` of the control-plane container, as Docker
        published them (``docker port``; kind's API server port included)."""
        r = _run(["docker", "port", self.control_plane], timeout=DOCKER_TIMEOUT_S)
        if r.returncode != 0:
            raise PreflightError(f"docker port {self.control_plane}: {r.stderr.strip()}")
        return parse_docker_port(r.stdout)

    def state(self) -> dict:
        """The state file's content (``{}`` for a cluster made before state files existed)."""
        try:
            return json.loads(self.state_file.read_text())
        except (OSError, ValueError):
            return {}

    def host_port(self, container_port: int, protocol: str = "tcp") -> int:
        """The port on 127.0.0.1 that the control-plane node's ``container_port`` is published
        on (kind config ``extraPortMappings``); ``PreflightError`` if it is not published."""
        key = f"{container_port}/{protocol}"
        ports = self.state().get("host_ports") or self._published_ports()
        if key not in ports:
            raise PreflightError(f"cluster {self.name} publishes no {key} (extraPortMappings of its kind config); published: {sorted(ports)}")
        return int(ports[key])

    def saved_config(self) -> dict:
        """The kind config the cluster was made from (``<STATE_DIR>/<name>.kind-config.yaml``,
        every patch merged in); ``PreflightError`` when that file is missing or not YAML."""
        path = STATE_DIR / f"{self.name}.kind-config.yaml"
        try:
            return yaml.safe_load(path.read_text()) or {}
        except (OSError, yaml.YAMLError) as e:
            raise PreflightError(f"kind config of cluster {self.name}: {e}") from e

    def wire_nodes(self, cfg: dict | None = None) -> None:
        """Per node (static CNI, several nodes): routes to the other nodes' pod subnets via their
        address now and the masquerade rule, idempotent. Made with the cluster, again when it is
        reused, and after a node's reboot (a new network namespace: e2e.faults.node.node_rebooted).
        ``cfg`` the cluster's kind config (default: :meth:`saved_config`). (The pod subnet's
        ``unreachable`` route is the node guard's, set before the kubelet starts: :mod:`e2e.cluster.egress`.)"""
        cfg = self.saved_config() if cfg is None else cfg
        nodes = self.nodes()
        if uses_static_cni(cfg):
            subnets = {n: self.pod_subnet_of(n) for n in nodes}
            addresses = {n: self._node_address(n) for n in nodes}
            for n in nodes:
                for other in nodes:
                    if other != n:
                        self.node_exec("ip", "route", "replace", subnets[other], "via", addresses[other], node=n)
                self._ensure_masquerade(n, pod_subnet(cfg))

    def _wait_ready(self) -> None:
        """Every node Ready and the cluster DNS available: ``kind create --wait`` waits for the
        control plane only, and a fresh cluster's first tests must not race CoreDNS or a worker."""
        kubectl = ["kubectl", "--kubeconfig", "/etc/kubernetes/admin.conf"]
        timeout = f"{READY_TIMEOUT_S}s"
        self.node_exec(*kubectl, "wait", "--for=condition=Ready", "nodes", "--all", f"--timeout={timeout}", timeout=READY_TIMEOUT_S + 10)
        self.node_exec(*kubectl, "-n", "kube-system", "rollout", "status", "deployment/coredns", f"--timeout={timeout}",
                       timeout=READY_TIMEOUT_S + 10)

    def pod_subnet_of(self, node: str) -> str:
        """The pod subnet share of ``node`` in its static CNI conflist (offline image);
        ``RuntimeError`` where the node has none (kindnetd)."""
        return ptp_subnet(self.node_exec("cat", CONFLIST_IN_NODE, node=node))

    def _node_address(self, node: str) -> str:
        r = _run(["docker", "inspect", "-f", f"{{{{(index .NetworkSettings.Networks \"{egress.NETWORK}\").IPAddress}}}}", node], timeout=DOCKER_TIMEOUT_S)
        if r.returncode != 0 or not r.stdout.strip():
            raise PreflightError(f"no address of node {node} on the kind network: {r.stderr.strip()}")
        return r.stdout.strip()

    def _ensure_masquerade(self, node: str, subnet: str) -> None:
        """Pod traffic leaving the pod subnet gets the node's address (as kindnetd does);
        traffic between pods keeps its source."""
        rule = ["POSTROUTING", "-s", subnet, "!", "-d", subnet, "-j", "MASQUERADE"]
        try:
            self.node_exec("iptables", "-t", "nat", "-C", *rule, node=node)
        except RuntimeError:
            self.node_exec("iptables", "-t", "nat", "-A", *rule, node=node)

    def _nodes_running(self) -> bool:
        for node in self.nodes() or [self.control_plane]:
            r = _run(["docker", "inspect", "-f", "{{.State.Running}}", node], timeout=DOCKER_TIMEOUT_S)
            if r.returncode != 0 or r.stdout.strip() != "true":
                return False
        return True

    def _hold_use(self) -> None:
        """Hold a shared lock on ``<name>.use`` for the life of this process (or until
        :meth:`delete_unless_used`): ``make clean`` and the end of a run delete only clusters
        nobody else holds it on (a dead process holds nothing)."""
        hold_shared(STATE_DIR / f"{self.name}.use")

    def _let_go(self) -> None:
        """This process stops using the cluster, which does not exist: its lock files go unless
        another process holds them (e2e.base.locks.remove_unused)."""
        let_go(STATE_DIR / f"{self.name}.use")
        for suffix in (".use", ".lock"):
            remove_unused(STATE_DIR / f"{self.name}{suffix}")

    def delete_unless_used(self, export_logs_to: Path | None = None) -> bool:
        """Delete the cluster unless another process uses it (another worker of this run, or a
        second run of the same profile) — after exporting its kind logs to ``export_logs_to``
        when given; True when deleted. This process stops using it either way."""
        use = STATE_DIR / f"{self.name}.use"
        let_go(use)
        fd = try_take(use, EXCLUSIVE)
        if fd is None:
            log.info("kind cluster %s is in use by another process: leaving it to the last user "
                     "(or `make clean` once unused)", self.name)
            return False
        try:
            if export_logs_to is not None:
                try:
                    self.export_logs(export_logs_to)
                except PreflightError as e:
                    log.warning("kind export logs of %s failed: %s", self.name, e)
            self.delete()  # a process about to use it waits in _hold_use meanwhile
            use.unlink()  # held exclusively: one waiting in _hold_use locks the path again (e2e.base.locks)
            return True
        finally:
            os.close(fd)

    def mark_broken(self, reason: str) -> None:
        """Record in the state file that the cluster is broken (``reason``): :meth:`ensure`
        recreates it instead of reusing it, in this process and any other."""
        state = self.state()
        state["broken"] = reason
        self.state_file.write_text(json.dumps(state, indent=2, sort_keys=True))

    def owned_by(self, run_id: str) -> bool:
        return self.state().get("owner") == run_id

    def export_logs(self, dest: Path) -> None:
        dest.mkdir(parents=True, exist_ok=True)
        self._kind("export", "logs", str(dest), "--name", self.name, timeout=300, detached=True)

    def delete(self) -> None:
        """Delete the cluster and its state files (kubeconfig, state, kind config, its node's lock
        files, and its creation lock while this process holds it: e2e.base.locks).
        ``kind delete`` runs in a session of its own: a Ctrl-C to the run's process group does not
        cut it. Its use lock goes in :meth:`delete_unless_used`, which holds it exclusively."""
        with self._lock:
            self._kind("delete", "cluster", "--name", self.name, timeout=300, detached=True)
            for suffix in (".json", ".kubeconfig", ".kind-config.yaml", ".node.lock", ".node.turn", ".lock"):
                (STATE_DIR / f"{self.name}{suffix}").unlink(missing_ok=True)

    def copy_from_node(self, src: str, dest: Path) -> None:
        """Copy file ``src`` out of the control-plane node container to ``dest`` (``docker cp``)."""
        r = _run(["docker", "cp", f"{self.control_plane}:{src}", str(dest)], timeout=120)
        if r.returncode != 0:
            raise PreflightError(f"docker cp {self.control_plane}:{src}: {r.stderr.strip()}")

    def node_exec(self, *cmd: str, timeout: float = 30, node: str | None = None) -> str:
        """Run ``cmd`` inside a node container (``docker exec``; default: the control plane)."""
        node = node or self.control_plane
        r = _run(["docker", "exec", node, *cmd], timeout=timeout)
        if r.returncode != 0:
            raise RuntimeError(f"docker exec {node} {' '.join(cmd)}: {r.stderr.strip()}")
        return r.stdout


# -- cluster creation: a few at a time, and tests kept out of it ---------------------------------
# Creating a cluster (kubeadm init, the control plane's first start, image loads) keeps about one
# core busy for ~40 s (measured on a 2-core host: a one-node cluster Ready in 40–45 s with nothing
# else running). At most CREATE_SLOTS creations run at once, machine-wide (every run shares
# STATE_DIR), and a test waits for every creation in progress before it starts
# (:func:`wait_for_creations`), so that no judged timing window begins during one.
CREATE_SLOTS = int(os.environ.get("E2E_CREATE_SLOTS", "2"))
# Seconds a test waits for creations in progress before it starts anyway (the host-pressure
# record then shows what it met).
CREATION_WAIT_S = 600.0


@contextmanager
def creating():
    """Mark a creation in progress (a shared lock on ``creating.lock``; also while waiting for a
    slot, so that no test starts between two creations) and hold one of the CREATE_SLOTS
    creation slots (waiting for one) until the block ends."""
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    marker = take(STATE_DIR / "creating.lock", SHARED)
    try:
        _, slot = first_free(creation_locks()[1:], EXCLUSIVE)
        try:
            yield
        finally:
            os.close(slot)  # closing drops this process's lock on it
    finally:
        os.close(marker)


def creation_locks() -> list[Path]:
    """The creations' marker ``creating.lock`` and their slots ``create.<i>.lock`` (:func:`creating`):
    files of the state directory, which every run of it shares; a run removes those nobody holds
    at its end (e2e.plugin.clusters)."""
    return [STATE_DIR / "creating.lock", *(STATE_DIR / f"create.{i}.lock" for i in range(max(1, CREATE_SLOTS)))]


def wait_for_creations(timeout_s: float = CREATION_WAIT_S) -> float:
    """Wait until no cluster creation is in progress (see :func:`creating`), at most
    ``timeout_s``; return the seconds waited."""
    started = time.monotonic()
    # a probe: it makes no lock file (a --kubeconfig run left creating.lock behind, make interrupt-check)
    while time.monotonic() - started < timeout_s and not unused(STATE_DIR / "creating.lock"):
        time.sleep(0.5)
    return time.monotonic() - started


def kind_clusters(kind: str | None = None) -> list[str]:
    """The suite's kind clusters (``ple2e-*``) that exist (``kind get clusters``)."""
    r = _run([kind or kind_binary(), "get", "clusters"])
    if r.returncode != 0:
        raise PreflightError(f"`kind get clusters` failed ({r.returncode}): {(r.stderr or r.stdout).strip()}")
    return sorted(n for n in r.stdout.split() if n.startswith(CLUSTER_PREFIX))


def parse_docker_port(text: str) -> dict[str, int]:
    """``docker port`` output (``30080/tcp -> 127.0.0.1:41234`` per line; IPv6 lines too) as
    ``{"30080/tcp": 41234}``; the first binding of each container port wins."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        if "->" not in line:
            continue
        inner, outer = (s.strip() for s in line.split("->", 1))
        out.setdefault(inner, int(outer.rsplit(":", 1)[1]))
    return out


def owned_clusters(run_id: str) -> list[str]:
    """Names of the clusters whose state file says ``run_id`` created them."""
    out = []
    for path in sorted(STATE_DIR.glob(f"{CLUSTER_PREFIX}*.json")):
        try:
            if json.loads(path.read_text()).get("owner") == run_id:
                out.append(path.name[: -len(".json")])
        except (OSError, ValueError):
            continue
    return out


# -- liveness of runs and clusters (make clean) ----------------------------------------------
# A process that runs tests holds a shared flock on its run's lock file, and one on the use
# file of every cluster it uses, for as long as it lives; the kernel drops them when it dies
# (SIGKILL included). Whoever gets an exclusive lock knows that nobody holds them.


def _runs_dir() -> Path:
    return STATE_DIR / "runs"


def hold_run(run_id: str) -> None:
    """Mark run ``run_id`` alive for the life of this process (every worker of it calls this)."""
    _runs_dir().mkdir(parents=True, exist_ok=True)
    hold_shared(_runs_dir() / f"{run_id}.lock")


def release_run(run_id: str, wait_s: float = 0.0) -> bool:
    """At the end of run ``run_id``: this process lets go of its liveness lock (:func:`hold_run`),
    and the run's lock file goes once no other process of the run holds it, waiting at most
    ``wait_s`` seconds for them (exiting xdist workers); True when it is gone."""
    let_go(_runs_dir() / f"{run_id}.lock")
    return remove_unused(_runs_dir() / f"{run_id}.lock", wait_s)


def run_alive(run_id: str) -> bool:
    """Whether a process of run ``run_id`` is still running (see :func:`hold_run`)."""
    return not unused(_runs_dir() / f"{run_id}.lock")


def cluster_in_use(name: str) -> bool:
    """Whether a live process uses cluster ``name`` (see :meth:`Kind.ensure`)."""
    return not unused(STATE_DIR / f"{name}.use")
