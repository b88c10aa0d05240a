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


def test_the_controller_managers_gates_on_a_kubeconfig_cluster_come_from_the_facts_over_the_api_servers(tmp_path, monkeypatch):
    """ST-1/ST-3 failed on the foreign cluster: the gates were read with curl in a worker, where the
    controller manager does not run. On a kind cluster they are still read in its control plane."""
    from types import SimpleNamespace

    from e2e.cluster import gates
    from e2e.run.scenario import Scenario

    api = gates.Gates({"MaxUnavailableStatefulSet": gates.Gate("MaxUnavailableStatefulSet", "BETA", True)}, "kube-apiserver /metrics")
    monkeypatch.setattr(gates, "api_server", lambda kube: api)
    facts = {"controller_manager": {"feature_gates": {"gates": {"MaxUnavailableStatefulSet": False}, "from": "--cluster-facts f"}}}
    foreign = Scenario(None, "ns", None, None, tmp_path, 37, 1, None, nodes=("w1",), facts=facts)
    assert foreign.controller_manager_gates().enabled("MaxUnavailableStatefulSet") is False
    assert "assumed" in Scenario(None, "ns", None, None, tmp_path, 37, 1, None, nodes=("w1",)).controller_manager_gates().source
    entered = []
    monkeypatch.setattr("e2e.run.scenario.run", lambda access, node, cmd, timeout: entered.append(node) or "")
    monkeypatch.setattr(gates, "controller_manager", lambda node_exec: node_exec("curl") or api)
    on_kind = Scenario(None, "ns", None, None, tmp_path, 37, 1, SimpleNamespace(control_plane="cp"), access=object())
    assert on_kind.controller_manager_gates() is api and entered == ["cp"]
    # in a room (e2e.cluster.rooms) the test's pods are kept on a worker: the gates are still the control plane's
    in_room = Scenario(None, "ns", None, None, tmp_path, 37, 1, SimpleNamespace(control_plane="cp"), access=object(),
                       nodes=("w1",))
    assert in_room.controller_manager_gates() is api and entered == ["cp", "cp"]


def test_the_default_node_is_a_kind_clusters_control_plane_else_the_first_node_its_facts_chose(tmp_path):
    """What NF-3 and NF-6 act on (scenarios/faults: ``sc.default_node()``): on a kind cluster the
    suite made its control plane, its only node; on a ``--kubeconfig`` cluster the node the facts
    chose — before, they read ``sc.kind.control_plane`` there and failed with AttributeError."""
    from types import SimpleNamespace

    from e2e.run.scenario import Scenario

    kind = SimpleNamespace(control_plane="ple2e-x-control-plane")
    on_kind = Scenario(None, "ns", None, None, tmp_path, 37, 1, kind)
    assert on_kind.default_node() == "ple2e-x-control-plane"
    foreign = Scenario(None, "ns", None, None, tmp_path, 37, 1, None, nodes=("w1", "w2"))
    assert foreign.default_node() == "w1"


def test_a_broken_cluster_leaves_the_namespace_and_says_what_becomes_of_it(tmp_path, caplog):
    """After ``cluster_broken`` nothing is cleaned: a kind cluster of the run is replaced, a
    ``--kubeconfig`` one stays with its node and the run's end deletes the namespace — before,
    the log said "broken and replaced" on a cluster the suite never replaces."""
    import logging
    from types import SimpleNamespace

    from e2e.run.scenario import Scenario

    kube = SimpleNamespace(release_finalizers=lambda *a: pytest.fail("cleaned a broken cluster's namespace"))
    for kind, fate in ((SimpleNamespace(control_plane="cp"), "broken and replaced"),
                       (None, "broken and kept with its node for you")):
        sc = Scenario(kube, "ns", None, None, tmp_path, 37, 1, kind)
        sc.broken = "node w1 not Ready"
        with caplog.at_level(logging.WARNING):
            caplog.clear()
            sc.clean_up()
        assert fate in caplog.text and "node w1 not Ready" in caplog.text
