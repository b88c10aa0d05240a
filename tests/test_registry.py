"""e2e.cluster.registry and e2e.faults.registry: the parts that need no Docker and no cluster."""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import os
import tarfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from e2e.cluster import registry as reg
from e2e.cluster.images import normalize
from e2e.documented import images as doc
from e2e.faults.registry import tc_command

LOG = """\
2026-12-02T09:37:50.218218101Z time="2026-12-02T09:37:50.213969286Z" level=info msg="response completed" http.request.method=PUT
2026-12-02T09:37:50.231988108Z 172.17.0.1 - - [02/Dec/2026:09:37:50 +0000] "PUT /v2/suite/busybox/manifests/1 HTTP/1.1" 201 0 "" "docker/20.10.24+dfsg1 go/go1.19.8"
2026-12-02T09:37:50.329044537Z 172.18.0.2 - - [02/Dec/2026:09:37:50 +0000] "HEAD /v2/suite/busybox/manifests/absent HTTP/1.1" 404 100 "" "containerd/v2.3.4"
2026-12-02T09:37:51Z 172.18.0.2 - - [02/Dec/2026:09:37:51 +0000] "GET /v2/suite/busybox/blobs/sha256:ab HTTP/1.1" 200 906 "" "containerd/v2.3.4"
2026-12-02T09:37:52.5Z 172.18.0.2 - - [02/Dec/2026:09:37:52 +0000] "GET /v2/ HTTP/1.1" 401 87 "" "containerd/v2.3.4"
"""


def test_access_log_lines_become_requests_and_the_rest_is_skipped():
    reqs = reg.parse_access_log(LOG)
    assert [(r.method, r.status, r.what) for r in reqs] == [
        ("PUT", 201, "manifest"), ("HEAD", 404, "manifest"), ("GET", 200, "blob"), ("GET", 401, "ping")]
    assert reqs[1].client == "172.18.0.2" and reqs[1].agent == "containerd/v2.3.4" and reqs[2].size == 906
    assert reqs[1].at == pytest.approx(reg.parse_timestamp("2026-12-02T09:37:50Z") + 0.329044537, abs=1e-6)
    assert reqs[2].at - reqs[1].at == pytest.approx(0.670955463, abs=1e-6)


def test_docker_timestamps_parse_with_and_without_fraction():
    assert reg.parse_timestamp("1970-01-01T00:00:10Z") == 10.0
    assert reg.parse_timestamp("1970-01-01T00:00:10.25Z") == 10.25
    with pytest.raises(ValueError):
        reg.parse_timestamp("yesterday")


def test_hosts_toml_says_plain_http_for_the_host():
    text = reg.hosts_toml("ple2e-registry-abc:5000")
    assert 'server = "http://ple2e-registry-abc:5000"' in text
    assert '[host."http://ple2e-registry-abc:5000"]' in text and 'capabilities = ["pull", "resolve"]' in text


def test_refs_name_the_container_and_the_host_uses_loopback():
    r = reg.Registry("ple2e-registry-abc", "img", host_port=32768)
    assert r.ref("suite/busybox", "1") == "ple2e-registry-abc:5000/suite/busybox:1"
    assert r.url == "http://127.0.0.1:32768"


def test_configure_nodes_writes_hosts_toml_in_every_node():
    calls = []
    reg.configure_nodes(lambda *cmd, node=None: calls.append((node, cmd)) or "", ["n1", "n2"], reg.Registry("r", "img"))
    assert [n for n, _ in calls] == ["n1", "n2"]
    node, cmd = calls[0]
    assert cmd[:2] == ("sh", "-c") and "/etc/containerd/certs.d/r:5000/hosts.toml" in cmd[2] and cmd[4] == reg.hosts_toml("r:5000")


def test_tc_runs_in_the_registry_network_namespace():
    assert tc_command(42, "qdisc", "show") == ["nsenter", "-t", "42", "-n", "tc", "qdisc", "show"]


def test_image_backoff_doubles_from_10_s_to_the_300_s_cap():
    assert doc.backoff_delays(8) == [10, 20, 40, 80, 160, 300, 300, 300]


# -- the registry as a pod (--kubeconfig) ------------------------------------------------------------

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def oci_archive(through_index: bool = False, corrupt: str | None = None, drop: str | None = None) -> tuple[bytes, dict]:
    """An OCI image layout tar as ``ctr images export`` writes it: (archive, {name: bytes})."""
    layer = b"layer-bytes" * 100
    config = json.dumps({"architecture": "amd64", "os": "linux", "config": {"Cmd": ["sh"]},
                         "rootfs": {"type": "layers", "diff_ids": [_digest(layer)]}}).encode()
    manifest = json.dumps({"schemaVersion": 2, "mediaType": OCI_MANIFEST,
                           "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": _digest(config), "size": len(config)},
                           "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": _digest(layer), "size": len(layer)}]}).encode()
    blobs = {"layer": layer, "config": config, "manifest": manifest}
    top = {"mediaType": OCI_MANIFEST, "digest": _digest(manifest), "size": len(manifest)}
    if through_index:
        index = json.dumps({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": [
            {"mediaType": OCI_MANIFEST, "digest": _digest(b"other platform"), "size": 14, "platform": {"os": "linux", "architecture": "arm64"}},
            {**top, "platform": {"os": "linux", "architecture": "amd64"}}]}).encode()
        blobs["index"] = index
        top = {"mediaType": OCI_INDEX, "digest": _digest(index), "size": len(index)}
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        def add(name: str, data: bytes) -> None:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        add("oci-layout", b'{"imageLayoutVersion":"1.0.0"}')
        add("index.json", json.dumps({"schemaVersion": 2, "manifests": [top]}).encode())
        for name, data in blobs.items():
            if name != drop:
                add(f"blobs/sha256/{_digest(data)[7:]}", b"tampered" if name == corrupt else data)
    return buf.getvalue(), blobs


@pytest.mark.parametrize("through_index", [False, True])
def test_parse_layout_finds_the_manifest_and_its_blobs(through_index):
    archive, blobs = oci_archive(through_index)
    layout = reg.parse_layout(archive)
    assert layout.manifest == blobs["manifest"] and layout.media_type == OCI_MANIFEST
    assert layout.blobs == {_digest(blobs["config"]): blobs["config"], _digest(blobs["layer"]): blobs["layer"]}


@pytest.mark.parametrize("bad, message", [({"corrupt": "layer"}, "does not match its digest"),
                                          ({"drop": "config"}, "lacks blob"),
                                          ({"drop": "manifest", "through_index": True}, "names no manifest")])
def test_parse_layout_refuses_a_broken_archive(bad, message):
    with pytest.raises(reg.RegistryError, match=message):
        reg.parse_layout(oci_archive(**bad)[0])
    with pytest.raises(reg.RegistryError, match="not an"):
        reg.parse_layout(b"not a tar at all" * 64)


def test_relabelled_is_another_image_id_with_the_same_layers():
    layout = reg.parse_layout(oci_archive()[0])
    copy = reg.relabelled(layout, reg.COPY_LABEL, "busybox:1")
    old_m, new_m = json.loads(layout.manifest), json.loads(copy.manifest)
    assert new_m["config"]["digest"] != old_m["config"]["digest"] and new_m["layers"] == old_m["layers"]
    config = json.loads(copy.blobs[new_m["config"]["digest"]])
    assert config["config"] == {"Cmd": ["sh"], "Labels": {reg.COPY_LABEL: "busybox:1"}}
    assert new_m["config"]["size"] == len(copy.blobs[new_m["config"]["digest"]])
    assert _digest(copy.blobs[new_m["config"]["digest"]]) == new_m["config"]["digest"]
    assert set(copy.blobs) == {new_m["config"]["digest"], old_m["layers"][0]["digest"]}


def test_node_layout_reads_the_nodes_export_through_exec():
    archive, blobs = oci_archive()
    calls = []

    def node_exec(*cmd, timeout=30, node=None):
        calls.append(cmd)
        return base64.b64encode(gzip.compress(archive)).decode() + "\n"

    layout = reg.node_layout(node_exec, "pod-lifecycle-e2e/busybox:1")
    assert layout.manifest == blobs["manifest"]
    assert calls[0][:2] == ("sh", "-c") and "ctr -n k8s.io images export" in calls[0][2]
    assert calls[0][-1] == "docker.io/pod-lifecycle-e2e/busybox:1"
    with pytest.raises(reg.RegistryError, match="not a gzipped archive"):
        reg.node_layout(lambda *c, **k: "no such image", "x")


class FakeRegistry(BaseHTTPRequestHandler):
    """The OCI distribution API's push side, in memory; its Location names another host (the
    client must keep only the path)."""

    blobs: dict[str, bytes] = {}
    manifests: dict[str, tuple[str, bytes]] = {}
    seen: list[tuple[str, str]] = []

    def log_message(self, *args):
        pass

    def _body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def do_HEAD(self):
        self.seen.append(("HEAD", self.path))
        self.send_response(200 if self.path.rsplit("/", 1)[-1] in self.blobs else 404)
        self.end_headers()

    def do_POST(self):
        self._body()
        self.seen.append(("POST", self.path))
        self.send_response(202)
        self.send_header("Location", "http://10.9.9.9:5000/v2/suite/x/blobs/uploads/u1?_state=s")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_PUT(self):
        data = self._body()
        self.seen.append(("PUT", self.path))
        if "/blobs/uploads/" in self.path:
            digest = self.path.split("digest=")[1]
            ok = _digest(data) == digest and "_state=s" in self.path
            if ok:
                self.blobs[digest] = data
        else:
            ok = self.headers["Content-Type"] == OCI_MANIFEST
            self.manifests[self.path] = (self.headers["Content-Type"], data)
        self.send_response(201 if ok else 400)
        self.send_header("Content-Length", "0")
        self.end_headers()


def test_push_layout_uploads_missing_blobs_then_the_manifest_through_loopback_only():
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeRegistry)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        layout = reg.parse_layout(oci_archive()[0])
        layer = json.loads(layout.manifest)["layers"][0]["digest"]
        FakeRegistry.blobs[layer] = layout.blobs[layer]  # already there: not uploaded again
        r = reg.PodRegistry("ple2e-registry-abc", "img", host_port=server.server_address[1], node_port=31234)
        assert r.push_layout(layout, "suite/x", "1") == "127.0.0.1:31234/suite/x:1"
        config = json.loads(layout.manifest)["config"]["digest"]
        assert FakeRegistry.blobs[config] == layout.blobs[config]
        assert FakeRegistry.manifests["/v2/suite/x/manifests/1"] == (OCI_MANIFEST, layout.manifest)
        assert [m for m, _ in FakeRegistry.seen] == ["HEAD", "POST", "PUT", "HEAD", "PUT"]
        assert FakeRegistry.seen[2][1] == f"/v2/suite/x/blobs/uploads/u1?_state=s&digest={config}"
        with pytest.raises(reg.RegistryError, match="auth variant"):
            reg.PodRegistry("r", "img", auth=True, host_port=1).push_layout(layout, "suite/x", "1")
    finally:
        server.shutdown()


def test_pod_registry_is_pulled_on_each_nodes_loopback_node_port():
    r = reg.PodRegistry("ple2e-registry-abc", "img", host_port=40000, node_port=31234)
    assert r.ref("suite/busybox", "1") == "127.0.0.1:31234/suite/busybox:1"
    assert normalize(r.ref("suite/busybox", "1")) == "127.0.0.1:31234/suite/busybox:1"
    assert r.url == "http://127.0.0.1:40000"


@pytest.mark.parametrize("auth", [False, True])
def test_pod_manifests_pin_the_node_pull_nothing_and_publish_a_node_port(auth):
    pod, service = reg.pod_manifests("ple2e-registry-abc", "pod-lifecycle-e2e/registry:v", "w1", auth)
    c = pod["spec"]["containers"][0]
    assert c["imagePullPolicy"] == "Never" and pod["spec"]["nodeSelector"] == {"kubernetes.io/hostname": "w1"}
    assert {e["name"] for e in c["env"]} == ({"REGISTRY_AUTH_HTPASSWD_REALM", "REGISTRY_AUTH_HTPASSWD_PATH"} if auth else set())
    assert service["spec"]["type"] == "NodePort" and service["spec"]["selector"] == pod["metadata"]["labels"]
    assert service["spec"]["ports"] == [{"port": reg.PORT, "targetPort": reg.PORT}]


def test_image_tag_names_the_image_build_sh_builds_without_docker(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    (tmp_path / "docker").write_text("#!/bin/sh\necho docker called >&2\nexit 99\n")
    (tmp_path / "docker").chmod(0o755)
    tag = reg.image_tag()
    assert tag.startswith("pod-lifecycle-e2e/registry:v")
