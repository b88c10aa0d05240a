"""A real container registry on the suite's Docker network, reachable from the nodes only.

The reference registry (CNCF distribution, built from its Go module by
``hack/images/registry/build.sh``: no image is ever pulled) runs as a container on the suite's
network :data:`e2e.cluster.egress.NETWORK`, beside the kind nodes:

- **the nodes** reach it by its container name (``<name>:5000``): Docker's embedded DNS answers a
  container's name on a user-defined network itself, nothing is forwarded to the host's
  resolvers; containerd in each node is told that this host speaks plain HTTP by a
  ``/etc/containerd/certs.d/<name>:5000/hosts.toml`` (containerd 2.x reads that directory by
  default: internal/cri/config ``Registry.ConfigPath``, per pull, no restart) —
  :func:`configure_nodes`;
- **the host** talks to it only through a port published on 127.0.0.1 (``docker push`` of the
  images a test needs: :meth:`Registry.push`); never to the container's own address;
- its **answers** are read from its access log (``docker logs --timestamps``: the daemon's receive
  time of each line, ns resolution): :meth:`Registry.requests` — every manifest and blob request
  with its status, the registry's side of a pull.

``auth=True`` starts the htpasswd variant: the whole registry behind basic auth (distribution's
auth is per registry, not per repository); the password file is provisioned by the registry itself
(registry/auth/htpasswd ``createHtpasswdFile``: user ``docker``, a random password it logs), and
nobody logs in: the kubelet has no credentials, so every pull gets the 401.
"""

from __future__ import annotations

import json
import re
import secrets
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Callable, Iterable

from . import egress

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "hack" / "images" / "registry" / "build.sh"
# The port the registry listens on inside its container (config.yml http.addr).
PORT = 5000
# Where containerd 2.x looks for per-host registry settings (its CRI default config_path).
CERTS_D = "/etc/containerd/certs.d"
# Seconds the registry gets to answer /v2/ after its start.
READY_S = 30.0
DOCKER_S = 120.0
# htpasswd realm of the auth variant (the 401's WWW-Authenticate: Basic realm=...)
AUTH_REALM = "ple2e"


class RegistryError(RuntimeError):
    """The registry could not be built, started or reached."""


def _docker(*args: str, timeout: float = DOCKER_S, check: bool = True, input: str | None = None) -> subprocess.CompletedProcess:
    r = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout, input=input)
    if check and r.returncode != 0:
        raise RegistryError(f"docker {' '.join(args[:3])}…: {r.stderr.strip() or r.stdout.strip()}")
    return r


def build_image() -> str:
    """The registry image's tag, built by ``hack/images/registry/build.sh`` when absent (cached:
    tagged by the module version and a hash of the recipe)."""
    r = subprocess.run([str(BUILD)], capture_output=True, text=True, timeout=1800)
    if r.returncode != 0:
        raise RegistryError(f"{BUILD.relative_to(ROOT)} failed: {r.stderr.strip()[-800:]}")
    return r.stdout.strip().splitlines()[-1]


def hosts_toml(host: str) -> str:
    """containerd's ``hosts.toml`` for ``host`` (``name:port``): plain HTTP, pull and resolve."""
    return (f'# pod-lifecycle-e2e: the suite\'s registry speaks plain HTTP (e2e/cluster/registry.py)\n'
            f'server = "http://{host}"\n\n[host."http://{host}"]\n  capabilities = ["pull", "resolve"]\n')


# One line of distribution's access log (gorilla/handlers combined format) behind Docker's
# --timestamps prefix:
#   2026-12-02T09:40:00.123456789Z 172.18.0.2 - - [02/Dec/2026:09:40:00 +0000] "GET /v2/suite/x/manifests/1 HTTP/1.1" 404 96 "" "containerd/v2.3.4"
ACCESS = re.compile(r'^(?P<ts>\S+) (?P<client>\S+) - (?P<user>\S+) \[[^\]]+\] "(?P<method>[A-Z]+) (?P<path>\S+) [^"]*" '
                    r'(?P<status>\d{3}) (?P<size>\d+|-)(?: "[^"]*" "(?P<agent>[^"]*)")?')


@dataclass(frozen=True)
class Request:
    """One request the registry answered: ``at`` the epoch time Docker received its log line (the
    request's end), the client's address, method, path, HTTP status, response size, user agent."""

    at: float
    client: str
    method: str
    path: str
    status: int
    size: int
    agent: str = ""

    @property
    def what(self) -> str:
        """``manifest``, ``blob``, ``ping`` (``/v2/``), ``upload`` or ``other`` (from the path)."""
        if "/manifests/" in self.path:
            return "manifest"
        if "/blobs/uploads" in self.path:
            return "upload"
        if "/blobs/" in self.path:
            return "blob"
        return "ping" if self.path.rstrip("/") == "/v2" else "other"

    def line(self, t0: float = 0.0) -> str:
        return f"{self.at - t0:9.3f} s  {self.client:<15} {self.method:<4} {self.status} {self.size:>9}  {self.path}"


def parse_timestamp(ts: str) -> float:
    """Docker's RFC 3339 ``--timestamps`` prefix (nanoseconds, ``Z``) as epoch seconds."""
    m = re.match(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$", ts)
    if not m:
        raise ValueError(f"not a Docker timestamp: {ts!r}")
    zone = "+00:00" if m.group(3) == "Z" else m.group(3)
    base = datetime.fromisoformat(m.group(1) + zone).timestamp()
    return base + (float("0." + m.group(2)) if m.group(2) else 0.0)


def parse_access_log(text: str) -> list[Request]:
    """The requests of a ``docker logs --timestamps`` text (other lines are the registry's own log)."""
    out = []
    for line in text.splitlines():
        m = ACCESS.match(line.strip())
        if not m:
            continue
        size = m.group("size")
        out.append(Request(parse_timestamp(m.group("ts")), m.group("client"), m.group("method"), m.group("path"),
                           int(m.group("status")), 0 if size == "-" else int(size), m.group("agent") or ""))
    return out


@dataclass
class Registry:
    """A running registry container: ``name`` (its DNS name on the network), ``image``, ``auth``,
    ``host_port`` (published on 127.0.0.1), ``pid`` of its process (for faults on its network
    namespace, refreshed by :meth:`refresh`)."""

    name: str
    image: str
    auth: bool = False
    host_port: int = 0
    pushed: dict[str, str] = field(default_factory=dict)

    @property
    def host(self) -> str:
        """How the nodes name it: ``<container name>:5000``."""
        return f"{self.name}:{PORT}"

    def ref(self, repo: str, tag: str) -> str:
        """An image reference on this registry as the nodes pull it."""
        return f"{self.host}/{repo}:{tag}"

    @property
    def url(self) -> str:
        """The host's way in: ``http://127.0.0.1:<published port>``."""
        return f"http://127.0.0.1:{self.host_port}"

    def pid(self) -> int:
        return int(_docker("inspect", "-f", "{{.State.Pid}}", self.name).stdout.strip())

    def refresh(self) -> None:
        """Read the published port again (it changes when the container is started again)."""
        out = _docker("port", self.name, f"{PORT}/tcp").stdout
        ports = [int(m) for m in re.findall(r"127\.0\.0\.1:(\d+)", out)]
        if not ports:
            raise RegistryError(f"{self.name}: no port published on 127.0.0.1 ({out.strip()!r})")
        self.host_port = ports[0]

    def ping(self, timeout: float = 2.0) -> int | None:
        """The HTTP status of ``GET /v2/`` through the published port (200; 401 for the auth
        variant), None when nothing answers."""
        try:
            with urllib.request.urlopen(f"{self.url}/v2/", timeout=timeout) as r:
                return r.status
        except urllib.error.HTTPError as e:
            return e.code
        except (OSError, urllib.error.URLError):
            return None

    def wait_ready(self, timeout_s: float = READY_S) -> None:
        self.refresh()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.ping() in (200, 401):
                return
            time.sleep(0.2)
        raise RegistryError(f"{self.name} did not answer {self.url}/v2/ within {timeout_s:g} s: "
                            f"{_docker('logs', '--tail', '20', self.name, check=False).stderr[-800:]}")

    def answer(self, method: str, path: str, timeout: float = 5.0) -> tuple[int, dict[str, str], str]:
        """One request from the host through the published port: ``(status, headers, body)``."""
        req = urllib.request.Request(f"{self.url}{path}", method=method)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, dict(r.headers), r.read().decode(errors="replace")
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read().decode(errors="replace")

    def push(self, local_image: str, repo: str, tag: str) -> str:
        """Push the local Docker image ``local_image`` as ``repo:tag`` through 127.0.0.1 (Docker
        treats 127.0.0.0/8 as a plain-HTTP registry); returns the reference the nodes pull."""
        if self.auth:
            raise RegistryError("pushing to the auth variant needs a login; push to the open registry")
        host_ref = f"127.0.0.1:{self.host_port}/{repo}:{tag}"
        _docker("tag", local_image, host_ref)
        try:
            _docker("push", "-q", host_ref, timeout=600)
        finally:
            _docker("rmi", host_ref, check=False)
        self.pushed[f"{repo}:{tag}"] = local_image
        return self.ref(repo, tag)

    def delete_tag(self, repo: str, tag: str) -> None:
        """Remove ``repo:tag`` (DELETE of the manifest by digest; storage.delete is enabled)."""
        req = urllib.request.Request(f"{self.url}/v2/{repo}/manifests/{tag}", method="HEAD", headers={
            "Accept": "application/vnd.docker.distribution.manifest.v2+json, application/vnd.oci.image.manifest.v1+json"})
        with urllib.request.urlopen(req, timeout=5) as r:
            digest = r.headers["Docker-Content-Digest"]
        urllib.request.urlopen(urllib.request.Request(f"{self.url}/v2/{repo}/manifests/{digest}", method="DELETE"), timeout=5).close()
        self.pushed.pop(f"{repo}:{tag}", None)

    def log(self) -> str:
        r = _docker("logs", "--timestamps", self.name, check=False)
        return r.stdout + r.stderr

    def requests(self, path_contains: str = "", since: float = 0.0) -> list[Request]:
        """The requests answered since ``since`` (epoch s) whose path contains ``path_contains``,
        by time; the host's own (pushes, pings through 127.0.0.1) included — filter by client."""
        return sorted((r for r in parse_access_log(self.log()) if path_contains in r.path and r.at >= since),
                      key=lambda r: r.at)

    def address(self) -> str:
        """The container's IPv4 address on the suite's network (for reports; the host never dials it)."""
        return _docker("inspect", "-f", f'{{{{(index .NetworkSettings.Networks "{egress.NETWORK}").IPAddress}}}}',
                       self.name).stdout.strip()


def start(image: str, auth: bool = False, name: str | None = None) -> Registry:
    """Run the registry container on the suite's network (which must exist: a cluster is up),
    its port published on 127.0.0.1 only; wait until it answers."""
    if not egress.network_exists():
        raise RegistryError(f"the suite's network {egress.NETWORK} does not exist: start the cluster first")
    name = name or f"ple2e-registry-{secrets.token_hex(3)}{'-auth' if auth else ''}"
    env = []
    if auth:
        env = ["-e", f"REGISTRY_AUTH_HTPASSWD_REALM={AUTH_REALM}",
               "-e", "REGISTRY_AUTH_HTPASSWD_PATH=/etc/distribution/htpasswd"]
    _docker("run", "-d", "--name", name, "--hostname", name, "--network", egress.NETWORK,
            "--label", "pod-lifecycle-e2e=1", "--label", "pod-lifecycle-e2e.registry=1",
            "-p", f"127.0.0.1::{PORT}", *env, image)
    reg = Registry(name, image, auth)
    try:
        reg.wait_ready()
    except Exception:
        remove(reg)
        raise
    return reg


def remove(reg: Registry) -> None:
    _docker("rm", "-f", reg.name, check=False)


def configure_nodes(node_exec: Callable[..., str], nodes: Iterable[str], reg: Registry) -> None:
    """Tell containerd in each node that ``reg`` speaks plain HTTP (``hosts.toml``, read per pull)."""
    d = f"{CERTS_D}/{reg.host}"
    for node in nodes:
        node_exec("sh", "-c", f"mkdir -p '{d}' && printf '%s' \"$1\" > '{d}/hosts.toml.tmp' && mv '{d}/hosts.toml.tmp' '{d}/hosts.toml'",
                  "sh", hosts_toml(reg.host), node=node)


def unconfigure_nodes(node_exec: Callable[..., str], nodes: Iterable[str], reg: Registry) -> None:
    for node in nodes:
        node_exec("rm", "-rf", f"{CERTS_D}/{reg.host}", node=node)


def summary(reqs: list[Request], t0: float = 0.0) -> str:
    """The requests as a table, one line each (for a test's report)."""
    return "\n".join(r.line(t0) for r in reqs) or "(no request)"


def as_json(reqs: list[Request]) -> str:
    return json.dumps([vars(r) for r in reqs], indent=1)
