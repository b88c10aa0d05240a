"""e2e.cluster.registry and e2e.faults.registry: the parts that need no Docker and no cluster."""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import os
import subprocess
import tarfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from e2e.cluster import registry as reg
from e2e.cluster.images import normalize
from e2e.documented import images as doc
from e2e.faults import registry as faults
from e2e.faults.registry import tc_command
from helpers import FaultSite

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
        return f"{len(archive)} " + base64.b64encode(gzip.compress(archive)).decode() + "\n"

    layout = reg.node_layout(node_exec, "pod-lifecycle-e2e/busybox:1")
    assert layout.manifest == blobs["manifest"]
    assert calls[0][:2] == ("sh", "-c") and "ctr -n k8s.io images export" in calls[0][2]
    assert calls[0][-1] == "docker.io/pod-lifecycle-e2e/busybox:1"
    with pytest.raises(reg.RegistryError, match="not a gzipped archive"):
        reg.node_layout(lambda *c, **k: "no such image", "x")


def _fake_ctr(bin_dir, archives, local=True):
    """A ``ctr`` in ``bin_dir`` (put first on PATH) whose export writes the next of ``archives``
    to its output argument (the one before the image); ``local``: its ``images export --help``
    offers ``--local``. Gives the node_exec that runs a command with it, and the file of its calls."""
    bin_dir.mkdir(exist_ok=True)
    calls = bin_dir / "calls"
    offer = 'echo "   --local   run the export in this process"' if local else "echo usage"
    (bin_dir / "ctr").write_text(
        "#!/bin/sh\n"
        f'case "$*" in *--help*) {offer}; exit 0;; esac\n'
        f'echo "$*" >>{calls}\n'
        'eval out=\\${$(($# - 1))}\n'
        f'cp {bin_dir}/archive-$(wc -l <{calls}) "$out"\n')
    (bin_dir / "ctr").chmod(0o755)
    for i, a in enumerate(archives, 1):
        (bin_dir / f"archive-{i}").write_bytes(a)

    def node_exec(*cmd, timeout=30, node=None):
        env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
        return subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    return node_exec, calls


def test_node_layout_runs_the_export_in_ctrs_own_process_where_it_can(tmp_path):
    archive, blobs = oci_archive()
    node_exec, calls = _fake_ctr(tmp_path / "v2", [archive])
    assert reg.node_layout(node_exec, "busybox:1").manifest == blobs["manifest"]
    assert calls.read_text().split()[:5] == ["-n", "k8s.io", "images", "export", "--local"]
    node_exec, calls = _fake_ctr(tmp_path / "v1", [archive], local=False)
    assert reg.node_layout(node_exec, "busybox:1").manifest == blobs["manifest"]
    assert "--local" not in calls.read_text()


def test_node_layout_refuses_a_short_archive_with_its_tar_error(tmp_path):
    archive, _ = oci_archive()
    node_exec, calls = _fake_ctr(tmp_path / "short", [archive[:700]])  # ctr's transfer race: a short file, exit 0
    with pytest.raises(reg.RegistryError, match="not an image archive"):
        reg.node_layout(node_exec, "busybox:1")
    assert len(calls.read_text().splitlines()) == 1


def test_node_layout_tells_a_channel_that_lost_bytes_from_a_short_file():
    archive, _ = oci_archive()
    sent = f"{len(archive) + 5} " + base64.b64encode(gzip.compress(archive)).decode()
    with pytest.raises(reg.RegistryError, match=f"node wrote {len(archive) + 5} bytes, the exec channel carried {len(archive)}"):
        reg.node_layout(lambda *c, **k: sent, "x")


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


# -- the registry as a pod: its process, an image made on the host, its faults through the node --


INSPECT = json.dumps({"status": {"id": "c1"}, "info": {"pid": 4242, "runtimeSpec": {}}})


def fake_crictl(tmp_path, ids: str) -> dict[str, str]:
    """A PATH with a ``crictl`` that answers ``ps`` with ``ids`` (logging its arguments) and
    ``inspect`` with :data:`INSPECT`."""
    (tmp_path / "crictl").write_text(f"""#!/bin/sh
echo "$@" >> {tmp_path}/crictl.log
case $1 in ps) printf '%s' '{ids}' ;; inspect) echo '{INSPECT}' ;; esac
""")
    (tmp_path / "crictl").chmod(0o755)
    return {**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"}


def test_the_pod_registrys_pid_is_its_running_containers_as_crictl_finds_it_by_the_kubelets_labels(tmp_path):
    import subprocess

    calls = []
    env = {"ps": fake_crictl(tmp_path, "c1\n")}

    def node_exec(*cmd, node=None, timeout=30):
        calls.append(node)
        r = subprocess.run(cmd, capture_output=True, text=True, env=env["ps"])
        if r.returncode:
            raise RuntimeError(r.stderr)
        return r.stdout

    r = reg.PodRegistry("ple2e-registry-abc", "img", namespace="im-1", node="w1", node_exec=node_exec)
    assert r.pid() == 4242 and calls == ["w1"]
    ps = (tmp_path / "crictl.log").read_text().splitlines()[0]
    assert ps == ("ps -q --state running --name ^registry$ --label io.kubernetes.pod.namespace=im-1 "
                  "--label io.kubernetes.pod.name=ple2e-registry-abc")
    (tmp_path / "crictl.log").unlink()
    fake_crictl(tmp_path, "")
    with pytest.raises(RuntimeError, match="no running registry container of pod im-1/ple2e-registry-abc"):
        r.pid()
    with pytest.raises(reg.RegistryError, match="no node access"):
        reg.PodRegistry("r", "img").pid()


@pytest.mark.parametrize("text, message", [("not json", "gives no info.pid"), ('{"info": {}}', "gives no info.pid"),
                                           ('{"info": {"pid": 0}}', "info.pid is 0")])
def test_an_inspect_without_a_pid_is_a_clear_error(text, message):
    assert reg.inspected_pid(INSPECT, "x") == 4242
    with pytest.raises(reg.RegistryError, match=f"container ns/r on w1.*{message}"):
        reg.inspected_pid(text, "ns/r on w1")


@pytest.mark.parametrize("docker_manifest", [False, True])
def test_a_file_layer_goes_on_top_with_its_digests_in_manifest_and_config(docker_manifest):
    base = reg.parse_layout(oci_archive()[0])
    if docker_manifest:
        base = reg.Layout(base.manifest, "application/vnd.docker.distribution.manifest.v2+json", base.blobs)
    data = os.urandom(4096)
    made = reg.with_file_layer(base, "payload", data)
    assert made == reg.with_file_layer(base, "payload", data)  # deterministic: the same image for the same bytes
    manifest, old = json.loads(made.manifest), json.loads(base.manifest)
    assert manifest["layers"][:-1] == old["layers"]
    top = manifest["layers"][-1]
    assert top["mediaType"] == ("application/vnd.docker.image.rootfs.diff.tar.gzip" if docker_manifest
                                else "application/vnd.oci.image.layer.v1.tar+gzip")
    blob = made.blobs[top["digest"]]
    assert _digest(blob) == top["digest"] and len(blob) == top["size"]
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(blob))) as tf:
        assert tf.getnames() == ["payload"] and tf.extractfile("payload").read() == data
        assert tf.getmember("payload").mode == 0o644
    config = made.blobs[manifest["config"]["digest"]]
    assert _digest(config) == manifest["config"]["digest"] and len(config) == manifest["config"]["size"]
    rootfs = json.loads(config)["rootfs"]["diff_ids"]
    assert rootfs == [*json.loads(base.blobs[old["config"]["digest"]])["rootfs"]["diff_ids"], _digest(gzip.decompress(blob))]
    assert old["config"]["digest"] not in made.blobs and set(made.blobs) == {manifest["config"]["digest"], *(d["digest"] for d in manifest["layers"])}
    assert reg.with_file_layer(base, "payload", os.urandom(4096)).manifest != made.manifest


def test_a_pod_registry_pushes_an_image_made_on_the_host_before_asking_the_node():
    archive = oci_archive()[0]
    made = {"pod-lifecycle-e2e/im-payload:1": reg.parse_layout(archive)}
    exported = []

    def node_exec(*cmd, timeout=30, node=None):
        exported.append(cmd[-1])
        return f"{len(archive)} " + base64.b64encode(gzip.compress(archive)).decode()

    source = reg.image_source(made, node_exec)
    assert source("pod-lifecycle-e2e/im-payload:1") is made["pod-lifecycle-e2e/im-payload:1"] and exported == []
    assert source("pod-lifecycle-e2e/busybox:1").manifest == made["pod-lifecycle-e2e/im-payload:1"].manifest
    assert exported == ["docker.io/pod-lifecycle-e2e/busybox:1"]


class LitPodRegistry(reg.PodRegistry):
    """A pod registry that answers ``/v2/`` (no forward: the fault's health probe and ready wait)."""

    def ping(self, timeout: float = 2.0):
        return 200

    def wait_ready(self, timeout_s: float = reg.READY_S) -> None:
        pass


@pytest.fixture
def pod_site(monkeypatch):
    from e2e.faults import core

    monkeypatch.setattr(core, "HEALTH_POLL_S", 0.01)
    monkeypatch.setattr(faults, "health", lambda kube, elsewhere=(): (["cluster fine"], []))
    site = FaultSite("fast-lifecycle", {"crictl inspect": INSPECT})
    registry = LitPodRegistry("ple2e-registry-abc", "img", namespace="im-1", node="w2", node_exec=site.node_exec)
    return site, registry


def test_a_pod_registrys_throttle_is_tc_in_its_network_namespace_run_in_its_node(pod_site):
    site, r = pod_site
    site.answers["qdisc show"] = "qdisc tbf 8001: root refcnt 2 rate 4Mbit"
    with faults.registry_throttled(site, r, "4mbit"):
        pass
    tcs = [c for c in site.calls if "crictl" not in c]
    tc = "w2: nsenter -t 4242 -n tc"  # the node's own tc: the agent's nsenter runs argv by the node's /bin/sh
    assert tcs == [f"{tc} qdisc replace dev eth0 root tbf rate 4mbit burst 32kbit latency 2s",
                   f"{tc} qdisc show dev eth0", f"{tc} qdisc del dev eth0 root"]
    site.calls.clear()
    site.answers["qdisc show"] = "qdisc noqueue 0: root refcnt 2"  # stopped and started inside: nothing to remove
    with faults.registry_throttled(site, r, "4mbit"):
        pass
    assert [c for c in site.calls if "crictl" not in c][-1] == f"{tc} qdisc show dev eth0"


def test_a_pod_registrys_stop_and_pause_run_their_scripts_in_its_node_and_are_undone(pod_site):
    site, r = pod_site
    with faults.registry_stopped(site, r) as window:
        assert window.injected_at and site.calls[-1] == f"w2: sh -c {faults.POD_STOP_SCRIPT} sh 4242"
    assert site.calls[-1] == f"w2: sh -c {faults.POD_START_SCRIPT} sh 4242" and window.recovery.healthy
    site.calls.clear()
    with faults.registry_paused(site, r):
        assert site.calls[-1] == f"w2: sh -c {faults.POD_FREEZE_SCRIPT} sh 4242 freeze"
    assert site.calls[-1] == f"w2: sh -c {faults.POD_FREEZE_SCRIPT} sh 4242 thaw"
    assert sum("crictl" in c for c in site.calls) == 1  # the frozen process keeps its PID: thawed by it
    with pytest.raises(ValueError, match="freeze mode"):
        faults.pod_freeze_argv(1, "kill")


def test_a_pod_registry_whose_process_is_gone_is_not_frozen_and_nothing_is_thawed(pod_site):
    site, r = pod_site
    site.answers["crictl inspect"] = RuntimeError("no running registry container of pod im-1/ple2e-registry-abc")
    with pytest.raises(RuntimeError, match="no running registry container"):
        with faults.registry_paused(site, r):
            pass
    assert site.calls and all("crictl inspect" in c for c in site.calls)  # the lookup only: no freeze, no thaw


def fake_node_tools(tmp_path, left: str = "", rules: int = 1) -> dict[str, str]:
    """A PATH whose ``nsenter`` logs its arguments and runs nothing: ``iptables -C`` finds the stop
    rule ``rules`` times, ``ss -H`` lists ``left``."""
    (tmp_path / "rules").write_text(str(rules))
    (tmp_path / "nsenter").write_text(f"""#!/bin/sh
echo "$@" >> {tmp_path}/node.log
case "$*" in
*"iptables -w -C"*) n=$(cat {tmp_path}/rules); [ "$n" -gt 0 ] || exit 1 ;;
*"iptables -w -D"*) echo $(( $(cat {tmp_path}/rules) - 1 )) > {tmp_path}/rules ;;
*"ss -Htn"*) printf '%s' '{left}' ;;
esac
""")
    (tmp_path / "nsenter").chmod(0o755)
    return {**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"}


def test_the_stop_script_darkens_the_namespace_drops_the_queue_aborts_connections_and_the_start_undoes_it(tmp_path):
    import subprocess

    env = fake_node_tools(tmp_path)
    r = subprocess.run(faults.pod_stop_argv(4242), capture_output=True, text=True, env=env)
    assert r.returncode == 0 and r.stdout.strip() == "stopped"
    rule = f"OUTPUT -m comment --comment {faults.STOP_COMMENT} -j DROP"
    assert (tmp_path / "node.log").read_text().splitlines() == [
        f"-t 4242 -n -- iptables -w -I {rule}", "-t 4242 -n -- tc qdisc del dev eth0 root",
        "-t 4242 -n -- ss -K -tn state established ( sport = :5000 )", "-t 4242 -n -- ss -Htn state established ( sport = :5000 )"]
    (tmp_path / "node.log").unlink()
    env = fake_node_tools(tmp_path, rules=2)
    r = subprocess.run(faults.pod_start_argv(4242), capture_output=True, text=True, env=env)
    assert r.returncode == 0 and (tmp_path / "rules").read_text().strip() == "0"
    assert [line for line in (tmp_path / "node.log").read_text().splitlines() if " -D " in line] == [f"-t 4242 -n -- iptables -w -D {rule}"] * 2
    r = subprocess.run(faults.pod_start_argv(4242), capture_output=True, text=True, env=env)  # nothing left: idempotent
    assert r.returncode == 0


def test_the_stop_script_fails_naming_a_connection_the_kernel_did_not_abort(tmp_path):
    import subprocess

    env = fake_node_tools(tmp_path, left="ESTAB 0 0 10.244.1.5:5000 10.244.1.1:40112")
    r = subprocess.run(faults.pod_stop_argv(4242), capture_output=True, text=True, env=env)
    assert r.returncode == 1 and "left connections of the registry open" in r.stderr and "10.244.1.1:40112" in r.stderr


def test_a_pod_registry_sees_images_made_after_its_start(monkeypatch):
    """start_pod keeps the caller's ``made`` itself, also when it is still empty: the IM fixtures
    start the registry first and make the payload image after (IM-4 on a --kubeconfig cluster
    failed with the node's ``ctr images export … im-payload:…: not found``)."""
    from types import SimpleNamespace as NS

    class NoForward:
        def __init__(self, *args):
            self.port = 1

        def close(self):
            pass

    monkeypatch.setattr(reg, "LocalForward", NoForward)
    monkeypatch.setattr(reg.PodRegistry, "ping", lambda self, timeout=2.0: 200)
    core = NS(create_namespaced_pod=lambda ns, body: body,
              create_namespaced_service=lambda ns, body: NS(spec=NS(ports=[NS(node_port=31268)])))
    exported = []

    def node_exec(*cmd, timeout=30, node=None):
        if cmd[:2] == ("sh", "-c") and "curl" in cmd[2]:
            return "200"
        exported.append(cmd[-1])
        return ""

    made: dict[str, reg.Layout] = {}
    pod = reg.start_pod(NS(core=core), "im-4", "img", "w2", node_exec, made=made)
    made["pod-lifecycle-e2e/im-payload:1"] = reg.parse_layout(oci_archive()[0])
    assert pod.host == "127.0.0.1:31268"
    assert pod.source("pod-lifecycle-e2e/im-payload:1") is made["pod-lifecycle-e2e/im-payload:1"] and exported == []


def test_the_host_talks_to_the_registry_on_loopback_without_a_proxy(monkeypatch):
    """With http_proxy set (and no no_proxy), urllib sends even a 127.0.0.1 request to the proxy,
    a packet off the machine; the registry's client asks 127.0.0.1 itself."""
    import http.server
    import socket
    import threading

    class V2(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200 if self.path == "/v2/" else 404)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), V2)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with socket.create_server(("127.0.0.1", 0)) as closed:
        proxy = f"http://127.0.0.1:{closed.getsockname()[1]}"  # accepts nothing: a request sent there gets no answer
    for name in ("http_proxy", "HTTP_PROXY"):
        monkeypatch.setenv(name, proxy)
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.setattr(reg, "_HTTP", reg.http_opener())  # made under this environment
    try:
        assert reg.Registry("r", "img", host_port=server.server_address[1]).ping() == 200
    finally:
        server.shutdown()


@pytest.mark.parametrize("host", ["ple2e-registry-1a2b:5000", "127.0.0.1:32018"])
def test_the_cut_pulls_reset_is_documented_at_the_port_the_node_dials(host):
    """IM-1 stopped mid-pull: containerd's "read tcp A->B" names the address the node dialled — the
    registry container's :5000, or a registry pod's NodePort on the node's loopback (the foreign
    cluster's message ended '->127.0.0.1:32018', which a fixed :5000 failed)."""
    from e2e.judge.expectations import REGISTRY

    image = f"{host}/suite/payload:1"
    address = f"{host.partition(':')[0]}:{host.rpartition(':')[2]}" if host.startswith("127.") else f"172.18.0.5:{reg.PORT}"
    message = (f'Failed to pull image "{image}": failed to pull and unpack image "{image}": failed to copy: '
               f"read tcp 127.0.0.1:54672->{address}: read: connection reset by peer")
    expectation = REGISTRY.lookup("IM-1", "cut_failed_message", 37)
    assert expectation.fill(image=image, port=host.rpartition(":")[2]).holds_for(message)
    assert not expectation.fill(image=image, port="5001").holds_for(message)
