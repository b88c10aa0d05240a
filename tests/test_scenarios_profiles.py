"""scenarios/profiles/test_multi_node: the pod-subnet route check runs wherever the nodes carry the
suite's node guard — the suite's clusters, make foreign-cluster's through the node agent — reading
the guard's subnets and each node's share in the node, and skips a --kubeconfig cluster whose nodes
have none, naming them (a fake node access and API, no cluster)."""

from __future__ import annotations

import json
import re
import sys
from types import SimpleNamespace as NS

import pytest
from case_dirs import ROOT, import_case

from e2e.cluster import egress
from e2e.cluster.kind import CONFLIST_IN_NODE
from e2e.cluster.kube import ExecResult
from e2e.run.scenario import Scenario

assert import_case(ROOT / "scenarios" / "profiles" / "test_multi_node.py") is None
multi = sys.modules["scenarios.profiles.test_multi_node"]

GUARD = egress.node_guard_script(["10.244.0.0/16", "fd00:10:244::/56"], ["10.96.0.0/16"])
IPS = {"w1": "172.18.0.3", "w2": "172.18.0.4"}
SHARES = {"w1": "10.244.1.0/24", "w2": "10.244.2.0/24"}


def conflist(subnet: str) -> str:
    return json.dumps({"plugins": [{"type": "ptp", "ipam": {"ranges": [[{"subnet": subnet}]]}}, {"type": "portmap"}]})


class Nodes:
    """The node agent on workers w1, w2: the guard script (``guard``: node → text), the static CNI's
    conflist, and routes as ``ip route get`` prints them (``via``: node → the address it routes the
    other's share by; ``unreachable``: whether the unused address is)."""

    name = "agent"

    def __init__(self, guard=None, via=None, unreachable=True):
        self.guard = {"w1": GUARD, "w2": GUARD} if guard is None else guard
        self.via = via or {"w1": IPS["w2"], "w2": IPS["w1"]}
        self.unreachable, self.asked = unreachable, []

    def exec(self, node, argv, timeout=30):
        argv = list(argv)
        self.asked.append((node, " ".join(argv)))
        if argv == ["sh", "-c", f"cat {egress.NODE_SCRIPT} 2>/dev/null || true"]:
            return ExecResult(0, self.guard.get(node, ""), "")
        if argv == ["sh", "-c", f"cat {CONFLIST_IN_NODE} 2>/dev/null || true"]:
            return ExecResult(0, conflist(SHARES[node]), "")
        if argv[:2] == ["sh", "-c"] and argv[2].startswith("ip route get "):
            address = argv[2].split()[3]
            return ExecResult(0, "RTNETLINK answers: No route to host\n" if self.unreachable else
                              f"{address} via 172.18.0.1 dev eth0 src {IPS[node]}\n", "")
        if argv[:3] == ["ip", "route", "get"]:
            return ExecResult(0, f"{argv[3]} via {self.via[node]} dev eth0 src {IPS[node]} uid 0\n", "")
        raise AssertionError(argv)


def _sc(tmp_path, access) -> Scenario:
    nodes = [NS(metadata=NS(name=n), spec=NS(pod_cidr=f"10.244.{i}.0/24"),
                status=NS(addresses=[NS(type="Hostname", address=n), NS(type="InternalIP", address=IPS[n])]))
             for i, n in enumerate(IPS)]
    kube = NS(core=NS(list_node=lambda: NS(items=nodes)))
    return Scenario(kube, "ns", None, None, tmp_path, 37, None, None, access=access, nodes=("w1", "w2"))


def test_the_guards_subnets_are_read_from_its_script():
    assert multi.guard_subnets(GUARD) == ["10.244.0.0/16", "fd00:10:244::/56"]
    assert multi.guard_subnets("") == []


def test_the_unused_address_is_outside_every_nodes_share():
    assert multi.unused_address(["10.244.0.0/16"], ["10.244.0.0/24", "10.244.1.0/24"]) == "10.244.255.254"
    assert multi.unused_address(["10.244.0.0/24"], ["10.244.0.0/24"]) is None
    assert multi.unused_address(["10.244.0.0/24", "fd00:10:244::/56"], ["10.244.0.0/24", "fd00:10:244::/64"]) == \
        "fd00:10:244:ff:ffff:ffff:ffff:fffe"
    assert multi.unused_address([], ["10.244.0.0/24"]) is None


def test_through_the_agent_the_guarded_nodes_routes_are_checked(tmp_path):
    nodes = Nodes()
    multi.test_pod_subnet_routes_on_each_node(_sc(tmp_path, nodes))
    assert ("w1", "ip route get 10.244.2.200") in nodes.asked and ("w2", "ip route get 10.244.1.200") in nodes.asked
    assert ("w1", "sh -c ip route get 10.244.255.254 2>&1 || true") in nodes.asked


@pytest.mark.parametrize("nodes, problem", [
    (Nodes(unreachable=False), "w1: 10.244.255.254 (unused part of the pod subnet) routes as '10.244.255.254 via 172.18.0.1"),
    (Nodes(via={"w1": "172.18.0.1", "w2": IPS["w1"]}), "w1: 10.244.2.200 (pod share of w2) routes as"),
])
def test_a_wrong_route_fails_naming_the_node(tmp_path, nodes, problem):
    with pytest.raises(AssertionError, match=r"pod subnet routes:\n\s+" + re.escape(problem)):
        multi.test_pod_subnet_routes_on_each_node(_sc(tmp_path, nodes))


def test_a_kubeconfig_cluster_without_the_node_guard_is_skipped_naming_its_nodes(tmp_path):
    with pytest.raises(pytest.skip.Exception, match=r"checks the suite's own node guard, not a contract of Kubernetes: "
                                                    r"node w2 has no /usr/local/sbin/ple2e-node-guard"):
        multi.test_pod_subnet_routes_on_each_node(_sc(tmp_path, Nodes(guard={"w1": GUARD})))
    with pytest.raises(pytest.skip.Exception, match=r"needs node access .*--node-agent"):
        multi.test_pod_subnet_routes_on_each_node(_sc(tmp_path, None))


def test_on_the_suites_own_cluster_a_node_without_the_guard_fails(tmp_path):
    sc = _sc(tmp_path, Nodes(guard={"w1": GUARD}))
    sc.kind = NS(nodes=lambda: ["w1", "w2"])
    with pytest.raises(AssertionError, match=r"w2: no node guard \(/usr/local/sbin/ple2e-node-guard routes no pod subnet unreachable\)"):
        multi.test_pod_subnet_routes_on_each_node(sc)
