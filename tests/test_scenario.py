"""e2e.run.scenario: a ``--kubeconfig`` cluster's NodePort is used only when something listens on
127.0.0.1 there; else the test is skipped saying so (the foreign cluster publishes none, and a
traffic test there timed out after 90 s instead)."""

from __future__ import annotations

import socket

import pytest

from e2e.run.scenario import Scenario, published_on_loopback


def test_a_listening_port_is_published_and_a_closed_one_is_not():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        assert published_on_loopback(port)
    assert not published_on_loopback(port)


def test_a_kubeconfig_cluster_without_the_node_port_skips_naming_it():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nothing listens there
    sc = Scenario.__new__(Scenario)
    sc.kind = None
    with pytest.raises(pytest.skip.Exception, match=f"needs the NodePort {port} published on 127.0.0.1.*nothing listens there"):
        sc.node_port_url(port)
