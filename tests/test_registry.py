"""e2e.cluster.registry and e2e.faults.registry: the parts that need no Docker."""

from __future__ import annotations

import pytest

from e2e.cluster import registry as reg
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
