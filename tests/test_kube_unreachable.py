"""What the preflight says of an API server that gives no version (e2e.cluster.kube ``Kube.version``):
real sockets on 127.0.0.1, no cluster."""

from __future__ import annotations

import socket

import pytest

from e2e.cluster.kube import ClusterUnreachable, Kube

KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{{name: c, cluster: {{server: "http://127.0.0.1:{port}"}}}}]
users: [{{name: u, user: {{token: t}}}}]
contexts: [{{name: c, context: {{cluster: c, user: u}}}}]
current-context: c
"""


def _kube(tmp_path, port: int) -> Kube:
    path = tmp_path / "kubeconfig"
    path.write_text(KUBECONFIG.format(port=port))
    return Kube(str(path))


def test_a_refused_connection_is_said_so(tmp_path):
    """issue 30 (10): "did not answer within 10 s" for a connection refused at once."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    with pytest.raises(ClusterUnreachable) as err:
        _kube(tmp_path, port).version()
    assert str(err.value).startswith(f"the API server at http://127.0.0.1:{port} refused the connection (nothing listens there")
    assert "did not answer" not in str(err.value)


def test_a_server_that_does_not_answer_in_time(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()  # accepts the connection (the kernel does), never answers
        port = s.getsockname()[1]
        with pytest.raises(ClusterUnreachable, match=rf"^the API server at http://127.0.0.1:{port} did not answer within 0.3 s"):
            _kube(tmp_path, port).version(timeout_s=0.3)
