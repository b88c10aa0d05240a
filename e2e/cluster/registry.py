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

On a ``--kubeconfig`` cluster (no kind network, no Docker for the suite) the same image runs as a
**pod** with a ``NodePort`` Service instead (:class:`PodRegistry`, :func:`start_pod`):

- the registry image must already be on the node (``imagePullPolicy: Never``; ``make
  foreign-cluster`` loads it with the workload images; :func:`image_tag` names it without Docker);
- **the nodes** pull it as ``127.0.0.1:<nodePort>``: kube-proxy forwards a node's loopback
  NodePorts (iptables mode, ``localhostNodePorts`` true by default) and containerd 2.x speaks plain
  HTTP to a loopback host with a port other than 443 and no ``hosts.toml``
  (core/remotes/docker/config/hosts.go ``ConfigureHosts``: a host ``docker.IsLocalhost``
  (resolver.go) gets scheme ``http``, skipVerify and the ``docker.NewHTTPFallback`` round
  tripper) — no node configuration at all;
- **the host** talks to it through the API server's ``pods/portforward`` (the kubernetes client's
  ``portforward``) behind a listener on 127.0.0.1 (:class:`LocalForward`): never to a pod's or a
  Service's address; images are pushed with the OCI distribution API from an OCI layout the node
  itself exports (``ctr images export``: :func:`parse_layout`, :meth:`Registry.push_layout`), so
  the pushed image has the preloaded image's manifest, config and layers byte for byte;
- its access log is the pod's log (``timestamps=True``: the runtime's receive time of each line,
  the same RFC 3339 prefix as ``docker logs --timestamps``).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import re
import secrets
import select
import socket
import subprocess
import tarfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Iterable

from kubernetes import client
from kubernetes.client.exceptions import ApiException
from kubernetes.stream import portforward

from . import egress
from .images import normalize

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
# The registry pod's label (its Service selects it by its name).
POD_LABEL = "pod-lifecycle-e2e/registry"
# The label the pod registry's copies of an image carry in their config (value: the source image).
COPY_LABEL = "pod-lifecycle-e2e.registry-copy"
# Seconds an image's export from a node may take (``ctr images export``, gzip, base64 through exec).
EXPORT_S = 180.0
# OCI / Docker media types of an image index (a list of per-platform manifests).
INDEX_TYPES = ("application/vnd.oci.image.index.v1+json", "application/vnd.docker.distribution.manifest.list.v2+json")


def http_opener() -> urllib.request.OpenerDirector:
    """The host's HTTP client of the registry (always ``127.0.0.1``): no proxy, whatever
    ``http_proxy``/``HTTP_PROXY`` say — urllib would send even a loopback request to one, off the
    machine, unless ``no_proxy`` names it."""
    return urllib.request.build_opener(urllib.request.ProxyHandler({}))


_HTTP = http_opener()


class RegistryError(RuntimeError):
    """The registry could not be built, started or reached."""


def _docker(*args: str, timeout: float = DOCKER_S, check: bool = True, input: str | None = None) -> subprocess.CompletedProcess:
    r = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout, input=input)
    if check and r.returncode != 0:
        raise RegistryError(f"docker {' '.join(args[:3])}…: {r.stderr.strip() or r.stdout.strip()}")
    return r


def image_tag() -> str:
    """The registry image's tag as :func:`build_image` names it (``build.sh --tag``: no Docker
    call), for a cluster whose nodes must already hold it."""
    r = subprocess.run([str(BUILD), "--tag"], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise RegistryError(f"{BUILD.relative_to(ROOT)} --tag failed: {r.stderr.strip()[-800:]}")
    return r.stdout.strip().splitlines()[-1]


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
            with _HTTP.open(f"{self.url}/v2/", timeout=timeout) as r:
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
        raise RegistryError(f"{self.name} did not answer {self.url}/v2/ within {timeout_s:g} s: {self.log()[-800:]}")

    def answer(self, method: str, path: str, timeout: float = 5.0, data: bytes | None = None,
               headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
        """One request from the host through :attr:`url` (127.0.0.1 only): ``(status, headers, body)``."""
        req = urllib.request.Request(f"{self.url}{path}", method=method, data=data, headers=headers or {})
        try:
            with _HTTP.open(req, timeout=timeout) as r:
                return r.status, dict(r.headers), r.read().decode(errors="replace")
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read().decode(errors="replace")

    def push_layout(self, layout: "Layout", repo: str, tag: str, timeout: float = 120.0) -> str:
        """Push ``layout`` as ``repo:tag`` with the OCI distribution API (each blob the registry lacks:
        ``POST …/blobs/uploads/`` then ``PUT <Location>&digest=…``; then ``PUT …/manifests/<tag>``),
        through :attr:`url` only (a ``Location`` keeps its path and query, never its host);
        returns the reference the nodes pull. :class:`RegistryError` on any refusal."""
        if self.auth:
            raise RegistryError("pushing to the auth variant needs a login; push to the open registry")
        for digest, data in layout.blobs.items():
            if self.answer("HEAD", f"/v2/{repo}/blobs/{digest}")[0] == 200:
                continue
            status, headers, body = self.answer("POST", f"/v2/{repo}/blobs/uploads/", data=b"")
            location = headers.get("Location") or headers.get("location") or ""
            if status != 202 or not location:
                raise RegistryError(f"upload of {digest} to {repo}: POST -> {status} {body[:200]}")
            parts = urllib.parse.urlsplit(location)
            target = parts.path + "?" + "&".join(q for q in (parts.query, f"digest={digest}") if q)
            status, _, body = self.answer("PUT", target, timeout=timeout, data=data,
                                          headers={"Content-Type": "application/octet-stream"})
            if status != 201:
                raise RegistryError(f"upload of {digest} to {repo}: PUT -> {status} {body[:200]}")
        status, _, body = self.answer("PUT", f"/v2/{repo}/manifests/{tag}", timeout=timeout, data=layout.manifest,
                                      headers={"Content-Type": layout.media_type})
        if status != 201:
            raise RegistryError(f"manifest {repo}:{tag}: PUT -> {status} {body[:200]}")
        return self.ref(repo, tag)

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
        with _HTTP.open(req, timeout=5) as r:
            digest = r.headers["Docker-Content-Digest"]
        _HTTP.open(urllib.request.Request(f"{self.url}/v2/{repo}/manifests/{digest}", method="DELETE"), timeout=5).close()
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


def auth_env(auth: bool) -> dict[str, str]:
    """The registry's environment for the htpasswd variant (empty for the open one)."""
    if not auth:
        return {}
    return {"REGISTRY_AUTH_HTPASSWD_REALM": AUTH_REALM, "REGISTRY_AUTH_HTPASSWD_PATH": "/etc/distribution/htpasswd"}


def start(image: str, auth: bool = False, name: str | None = None) -> Registry:
    """Run the registry container on the suite's network (which must exist: a cluster is up),
    its port published on 127.0.0.1 only; wait until it answers."""
    if not egress.network_exists():
        raise RegistryError(f"the suite's network {egress.NETWORK} does not exist: start the cluster first")
    name = name or f"ple2e-registry-{secrets.token_hex(3)}{'-auth' if auth else ''}"
    env = [arg for k, v in auth_env(auth).items() for arg in ("-e", f"{k}={v}")]
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


# -- the registry as a pod (a --kubeconfig cluster) -----------------------------------------------


@dataclass(frozen=True)
class Layout:
    """One image as the registry stores it: its ``manifest`` (bytes as pushed), the manifest's
    ``media_type``, and ``blobs`` (digest -> bytes: the config and every layer)."""

    manifest: bytes
    media_type: str
    blobs: dict[str, bytes]


def parse_layout(archive: bytes) -> Layout:
    """The image of an OCI image-layout tar (``ctr images export``; ``docker save`` of Docker 25+):
    ``index.json``'s first manifest, through an index to its first manifest whose blob the archive
    holds. Every blob is checked against its sha256 digest. :class:`RegistryError` for an archive
    that is not one, or lacks a blob."""
    try:
        with tarfile.open(fileobj=io.BytesIO(archive)) as tf:
            names = set(tf.getnames())

            def blob(digest: str) -> bytes:
                algo, _, hexd = digest.partition(":")
                f = tf.extractfile(f"blobs/{algo}/{hexd}") if f"blobs/{algo}/{hexd}" in names else None
                if f is None:
                    raise RegistryError(f"the image archive lacks blob {digest}")
                data = f.read()
                if algo != "sha256" or hashlib.sha256(data).hexdigest() != hexd:
                    raise RegistryError(f"blob {digest} of the image archive does not match its digest")
                return data

            if "index.json" not in names:
                raise RegistryError(f"not an OCI image layout (no index.json; members {sorted(names)[:5]})")
            desc = (json.loads(tf.extractfile("index.json").read()).get("manifests") or [None])[0]  # type: ignore[union-attr]
            while desc and desc.get("mediaType") in INDEX_TYPES:
                subs = json.loads(blob(desc["digest"])).get("manifests") or []
                desc = next((m for m in subs if f"blobs/{m['digest'].replace(':', '/')}" in names), None)
            if not desc:
                raise RegistryError("the image archive's index names no manifest it holds")
            manifest = blob(desc["digest"])
            m = json.loads(manifest)
            blobs = {d["digest"]: blob(d["digest"]) for d in [m["config"], *m["layers"]]}
            return Layout(manifest, m.get("mediaType") or desc["mediaType"], blobs)
    except tarfile.TarError as e:
        raise RegistryError(f"not an image archive: {e}") from e


def relabelled(layout: Layout, label: str, value: str) -> Layout:
    """``layout`` with ``label=value`` added to its image config (``config.Labels``): the same layers,
    a new config digest — another image ID — and a new manifest."""
    manifest = json.loads(layout.manifest)
    old = manifest["config"]["digest"]
    config = json.loads(layout.blobs[old])
    runtime = config.get("config") or {}
    config["config"] = {**runtime, "Labels": {**(runtime.get("Labels") or {}), label: value}}
    data = json.dumps(config, separators=(",", ":")).encode()
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    manifest["config"] = {**manifest["config"], "digest": digest, "size": len(data)}
    blobs = {d: b for d, b in layout.blobs.items() if d != old}
    return Layout(json.dumps(manifest, separators=(",", ":")).encode(), layout.media_type, {digest: data, **blobs})


def node_layout(node_exec: Callable[..., str], image: str) -> Layout:
    """``image`` as the node's containerd holds it (``ctr -n k8s.io images export`` in the node,
    gzip, base64 through the exec channel: text only), as a :class:`Layout`.

    The export runs in ctr's own process (``--local``, where this ctr has it): containerd 2.x's
    default path streams the archive through the transfer service, and its client copies that
    stream into the file in a goroutine which ``ctr`` does not wait for (v2.3.4,
    core/transfer/archive/exporter.go ``ImageExportStream.MarshalAny``; cmd/ctr/commands/images/
    export.go), so a short archive with exit status 0 is possible — seen on a foreign run. The
    node also sends the archive's size. :class:`RegistryError` when the output is no gzipped
    base64, the size differs from what the channel carried, or the archive is not an image
    (:func:`parse_layout`)."""
    script = ('f=/tmp/ple2e-export-$$.tar; l=; ctr images export --help 2>/dev/null | grep -q -e --local && l=--local; '
              'ctr -n k8s.io images export $l "$f" "$1" >/dev/null && { printf "%s " "$(wc -c <"$f")"; gzip -c "$f" | base64 -w0; }; '
              'rc=$?; rm -f "$f"; exit $rc')
    out = node_exec("sh", "-c", script, "sh", normalize(image), timeout=EXPORT_S)
    size, _, text = out.strip().partition(" ")
    try:
        archive = gzip.decompress(base64.b64decode(text, validate=True))
    except (ValueError, OSError, EOFError) as e:
        raise RegistryError(f"the node's export of {image} is not a gzipped archive: {e}") from e
    if not size.isdigit():
        raise RegistryError(f"the node's export of {image} gave no size: {out[:200]!r}")
    if len(archive) != int(size):
        raise RegistryError(f"the node's export of {image}: the node wrote {size} bytes, the exec channel carried {len(archive)}")
    return parse_layout(archive)


class LocalForward:
    """A listener on ``127.0.0.1:<port>`` (:attr:`port`, chosen by the kernel) whose every
    connection is carried to ``remote_port`` of pod ``namespace/pod`` through the API server's
    ``pods/portforward`` (the kubernetes client's ``portforward``: one websocket per connection,
    on a client of its own as :meth:`e2e.cluster.kube.Kube.exec` does). The host reaches the pod
    only through the API server; :meth:`close` stops listening."""

    def __init__(self, kube: Any, namespace: str, pod: str, remote_port: int) -> None:
        self.kube, self.namespace, self.pod, self.remote_port = kube, namespace, pod, remote_port
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._server.getsockname()[1]
        threading.Thread(target=self._serve, name=f"registry forward {pod}", daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:  # closed
                return
            threading.Thread(target=self._carry, args=(conn,), daemon=True).start()

    def _carry(self, conn: socket.socket) -> None:
        try:
            api = client.CoreV1Api(client.ApiClient(self.kube.api_client.configuration))
            pf = portforward(api.connect_get_namespaced_pod_portforward, self.pod, self.namespace,
                             ports=str(self.remote_port))
            remote = pf.socket(self.remote_port)
        except Exception:  # noqa: BLE001 - the pod is gone: the client sees its connection closed
            conn.close()
            return
        try:
            while True:
                ready, _, _ = select.select([conn, remote], [], [], 60.0)
                for s in ready:
                    data = s.recv(65536)
                    if not data:
                        return
                    (remote if s is conn else conn).sendall(data)
        except OSError:
            return
        finally:
            conn.close()
            pf.close()

    def close(self) -> None:
        self._server.close()


@dataclass
class PodRegistry(Registry):
    """The registry as pod ``name`` in ``namespace`` on ``node`` with a NodePort Service of the same
    name: the nodes pull ``127.0.0.1:<node_port>``, the host talks to it through
    :class:`LocalForward` (``host_port`` is its local port); ``source`` gives an image's
    :class:`Layout` for :meth:`push` (the node's export)."""

    kube: Any = None
    namespace: str = ""
    node: str = ""
    node_port: int = 0
    forward: LocalForward | None = None
    source: Callable[[str], Layout] | None = None
    node_exec: Callable[..., str] | None = None

    @property
    def host(self) -> str:
        """How the nodes name it: ``127.0.0.1:<nodePort>`` (each node's own loopback NodePort)."""
        return f"127.0.0.1:{self.node_port}"

    def pid(self) -> int:
        """The registry process's PID in its node's PID namespace (``crictl inspect``'s ``info.pid``
        of the pod's running ``registry`` container, through :attr:`node_exec`): the way into its
        network namespace and cgroup for the registry faults. :class:`RegistryError` when the
        container is not running or its PID cannot be read."""
        if self.node_exec is None:
            raise RegistryError(f"{self.name}: no node access to find its process")
        out = self.node_exec("sh", "-c", container_inspect_script(self.namespace, self.name), node=self.node)
        return inspected_pid(out, f"{self.namespace}/{self.name} on {self.node}")

    def refresh(self) -> None:
        """Nothing to read again: the local port stays while the forward lives."""

    def push(self, local_image: str, repo: str, tag: str) -> str:
        """Push the node's copy of ``local_image`` (the :attr:`source`) as ``repo:tag``, its config
        labelled :data:`COPY_LABEL` (:func:`relabelled`): another image ID than the preloaded one,
        so that a pull by the kubelet leaves no pulled record on the preloaded ID — with
        KubeletEnsureSecretPulledImages (beta, on from 1.35) such a record makes every later pod
        running the preloaded image under ``imagePullPolicy: Never`` on that node fail with
        ``ErrImageNeverPull`` (profiles/image-pulls.yaml), and the node is not the suite's."""
        if self.source is None:
            raise RegistryError(f"{self.name}: no image source to push {local_image} from")
        ref = self.push_layout(relabelled(self.source(local_image), COPY_LABEL, local_image), repo, tag)
        self.pushed[f"{repo}:{tag}"] = local_image
        return ref

    def log(self) -> str:
        """The pod's log with the runtime's RFC 3339 timestamps ('' when the pod is gone)."""
        try:
            return self.kube.core.read_namespaced_pod_log(self.name, self.namespace, timestamps=True,
                                                          _request_timeout=30)
        except ApiException as e:
            if e.status == 404:
                return ""
            raise

    def address(self) -> str:
        """The pod's IP (for reports; the host never dials it)."""
        return self.kube.pod(self.namespace, self.name).get("status", {}).get("podIP") or ""


# The registry pod's one container (pod_manifests).
CONTAINER = "registry"


def container_inspect_script(namespace: str, pod: str) -> str:
    """A node shell script printing ``crictl inspect`` (JSON) of pod ``namespace/pod``'s running
    :data:`CONTAINER` (found by the CRI labels the kubelet sets: ``io.kubernetes.pod.namespace``,
    ``io.kubernetes.pod.name``); exits 1 with a message when there is none."""
    return (f"cid=$(crictl ps -q --state running --name '^{CONTAINER}$' --label io.kubernetes.pod.namespace={namespace} "
            f"--label io.kubernetes.pod.name={pod} | head -n 1); "
            f"[ -n \"$cid\" ] || {{ echo 'no running {CONTAINER} container of pod {namespace}/{pod}' >&2; exit 1; }}; "
            f"crictl inspect \"$cid\"")


def inspected_pid(text: str, what: str) -> int:
    """``info.pid`` of a ``crictl inspect`` JSON ``text`` (containerd's verbose info); a
    :class:`RegistryError` naming ``what`` when it is not there or not a positive number."""
    try:
        pid = json.loads(text)["info"]["pid"]
    except (ValueError, KeyError, TypeError) as e:
        raise RegistryError(f"crictl inspect of the registry container {what} gives no info.pid: {e}") from e
    if not isinstance(pid, int) or pid <= 0:
        raise RegistryError(f"crictl inspect of the registry container {what}: info.pid is {pid!r}")
    return pid


def with_file_layer(layout: Layout, path: str, data: bytes) -> Layout:
    """``layout`` with one more layer on top: a gzipped tar holding the file ``path`` (mode 0644,
    mtime 0) with ``data`` — what ``COPY`` of one file adds to an image. The layer's media type
    follows the manifest's (OCI or Docker schema 2); the config's ``rootfs.diff_ids`` gets the
    uncompressed tar's digest and its ``history`` one entry. Deterministic for the same input."""
    tar_io = io.BytesIO()
    with tarfile.open(fileobj=tar_io, mode="w", format=tarfile.PAX_FORMAT) as tf:
        info = tarfile.TarInfo(path.lstrip("/"))
        info.size, info.mode, info.mtime = len(data), 0o644, 0
        tf.addfile(info, io.BytesIO(data))
    tar = tar_io.getvalue()
    layer = gzip.compress(tar, mtime=0)
    digest = "sha256:" + hashlib.sha256(layer).hexdigest()
    oci = "oci" in layout.media_type
    kind = "application/vnd.oci.image.layer.v1.tar+gzip" if oci else "application/vnd.docker.image.rootfs.diff.tar.gzip"
    manifest = json.loads(layout.manifest)
    old = manifest["config"]["digest"]
    config = json.loads(layout.blobs[old])
    rootfs = config.get("rootfs") or {"type": "layers", "diff_ids": []}
    config["rootfs"] = {**rootfs, "diff_ids": [*rootfs.get("diff_ids", []), "sha256:" + hashlib.sha256(tar).hexdigest()]}
    config["history"] = [*(config.get("history") or []), {"created_by": f"COPY {path.lstrip('/')} /{path.lstrip('/')}"}]
    cdata = json.dumps(config, separators=(",", ":")).encode()
    cdigest = "sha256:" + hashlib.sha256(cdata).hexdigest()
    manifest["config"] = {**manifest["config"], "digest": cdigest, "size": len(cdata)}
    manifest["layers"] = [*manifest["layers"], {"mediaType": kind, "digest": digest, "size": len(layer)}]
    blobs = {d: b for d, b in layout.blobs.items() if d != old}
    return Layout(json.dumps(manifest, separators=(",", ":")).encode(), layout.media_type, {cdigest: cdata, **blobs, digest: layer})


def pod_manifests(name: str, image: str, node: str, auth: bool) -> tuple[dict, dict]:
    """The registry's Pod (on ``node``, ``imagePullPolicy: Never``, ready once it accepts on
    :data:`PORT`) and its NodePort Service (the port chosen by the API server)."""
    labels = {POD_LABEL: name}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels},
           "spec": {"nodeSelector": {"kubernetes.io/hostname": node}, "terminationGracePeriodSeconds": 1,
                    "automountServiceAccountToken": False, "restartPolicy": "Always",
                    "containers": [{"name": CONTAINER, "image": image, "imagePullPolicy": "Never",
                                    "env": [{"name": k, "value": v} for k, v in auth_env(auth).items()],
                                    "ports": [{"containerPort": PORT}],
                                    "readinessProbe": {"tcpSocket": {"port": PORT}, "periodSeconds": 1}}]}}
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "labels": labels},
               "spec": {"type": "NodePort", "selector": labels, "ports": [{"port": PORT, "targetPort": PORT}]}}
    return pod, service


def image_source(made: dict[str, Layout], node_exec: Callable[..., str]) -> Callable[[str], Layout]:
    """A pod registry's :attr:`~PodRegistry.source`: an image's :class:`Layout` from ``made``
    (images made on the host) when it is there, else the node's export (:func:`node_layout`)."""
    def source(image: str) -> Layout:
        return made[image] if image in made else node_layout(node_exec, image)
    return source


def start_pod(kube: Any, namespace: str, image: str, node: str, node_exec: Callable[..., str],
              auth: bool = False, timeout_s: float = READY_S, made: dict[str, Layout] | None = None) -> PodRegistry:
    """Run the registry as a pod on ``node`` with its NodePort Service in ``namespace``; wait until
    it answers ``/v2/`` through :class:`LocalForward` and, in ``node`` (``curl`` through
    ``node_exec``), on ``127.0.0.1:<nodePort>`` — the address containerd pulls from. Removed again
    when it does not within ``timeout_s``: :class:`RegistryError` with the pod's state. Its
    :meth:`~PodRegistry.push` takes an image from ``made`` (name -> :class:`Layout`, images made
    on the host: :func:`with_file_layer`) when it is there, else the node's export."""
    name = f"ple2e-registry-{secrets.token_hex(3)}{'-auth' if auth else ''}"
    pod, service = pod_manifests(name, image, node, auth)
    reg = PodRegistry(name, image, auth, kube=kube, namespace=namespace, node=node, node_exec=node_exec,
                      source=image_source({} if made is None else made, node_exec))
    try:
        kube.core.create_namespaced_pod(namespace, pod)
        svc = kube.core.create_namespaced_service(namespace, service)
        reg.node_port = svc.spec.ports[0].node_port
        reg.forward = LocalForward(kube, namespace, name, PORT)
        reg.host_port = reg.forward.port
        deadline = time.monotonic() + timeout_s
        status = None
        while time.monotonic() < deadline:
            if reg.ping() in (200, 401):
                # the status code, then curl's own error (connection refused, a timeout) when there is one
                probe = f"curl -sS -o /dev/null -m 2 -w '%{{http_code}}' http://{reg.host}/v2/ 2>&1 || true"
                status = " ".join(node_exec("sh", "-c", probe, node=node).split())
                if status in ("200", "401"):
                    return reg
            time.sleep(0.5)
        state = (kube.pod(namespace, name).get("status") or {}).get("containerStatuses") or []
        raise RegistryError(f"registry pod {namespace}/{name} on {node} did not answer within {timeout_s:g} s "
                            f"(through the API: {reg.ping()}; in the node on {reg.host}: {status}): {state}")
    except BaseException:
        remove_pod(reg)
        raise


# The node's image names the IM family leaves (pulled from, or tagged for, a loopback registry).
NODE_NAMES = r"^127\.0\.0\.1:[0-9]+/suite/"


def remove_pod(reg: PodRegistry, node_exec: Callable[..., str] | None = None) -> None:
    """Stop the forward, delete the pod (grace 0) and its Service (an object already gone is
    fine); with ``node_exec``, remove the image names :data:`NODE_NAMES` from the node's
    containerd (their content goes with them when no other name holds it)."""
    if reg.forward:
        reg.forward.close()
    for delete in (lambda: reg.kube.core.delete_namespaced_pod(reg.name, reg.namespace, grace_period_seconds=0),
                   lambda: reg.kube.core.delete_namespaced_service(reg.name, reg.namespace)):
        try:
            delete()
        except ApiException as e:
            if e.status != 404:
                raise
    if node_exec is not None:
        node_exec("sh", "-c", f"ctr -n k8s.io images ls -q | grep -E '{NODE_NAMES}' | xargs -r ctr -n k8s.io images rm",
                  node=reg.node)


def summary(reqs: list[Request], t0: float = 0.0) -> str:
    """The requests as a table, one line each (for a test's report)."""
    return "\n".join(r.line(t0) for r in reqs) or "(no request)"


def as_json(reqs: list[Request]) -> str:
    return json.dumps([vars(r) for r in reqs], indent=1)
