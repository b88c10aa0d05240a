"""The multi-node profile works: pod traffic across nodes, a Service with endpoints on both
nodes, cluster DNS from both, and the pod-subnet safety route on each node.

Not a documented case (no CASES.md ID, nothing judged against a band): a check that the
cluster profile ``multi-node`` (profiles/multi-node.yaml; offline: e2e.cluster.kind's per-node
ptp subnets, routes and masquerade rule, CASES-faults.md §3a) gives the NF/DR cases the
network they assume. All traffic comes from pods; the host only reads the API and asks the
nodes' routing tables (``ip route get`` sends nothing), through ``docker exec`` or the node agent.
"""

from __future__ import annotations

import ipaddress
import re

import pytest
from kubernetes import client

from e2e.cluster.egress import NODE_SCRIPT
from e2e.cluster.kind import CONFLIST_IN_NODE, ptp_subnet
from e2e.run.scenario import Scenario
from e2e.base.waiting import PODS_SLACK_S, WaitTimeout
from e2e.documented.termination import ENDPOINT_PROPAGATION_S

# Slack for waits: scheduling, container start, the client's requests (3 s timeout each).
# Service requests per client: one every SERVICE_INTERVAL_S s until both web pods have answered,
# at most SERVICE_REQUESTS. kube-proxy picks one of two endpoints at random for each connection
# (20 requests miss one with probability 2 × 0.5^20 = 2e-6), but it programs a node's rules
# asynchronously, after the EndpointSlice changes: a client started just after the API shows both
# endpoints ready may find only one in its node's rules for a while (CI of stop 36: 20 requests
# back to back from the worker, all answered by the worker's own pod, none failed). Up to 60
# requests over ~30 s outlast that lag; a failure quotes the node's kube-proxy rules.
SERVICE_REQUESTS = 60
SERVICE_INTERVAL_S = 0.5
APP_PORT = 8080
# A line of the node guard's script that routes a pod subnet unreachable (e2e.cluster.egress.node_guard_script).
UNREACHABLE_ROUTE = re.compile(r"^ip -[46] route replace unreachable (\S+)$", re.M)


def _pods_on_nodes(sc: Scenario, manifest: str, prefix: str, nodes: list[str], **values) -> dict[str, str]:
    """``{node: pod name}`` after applying ``manifest`` once per node."""
    out = {}
    for i, node in enumerate(nodes):
        name = f"{prefix}-{i}"
        sc.apply(manifest, name=name, node=node, **values)
        out[node] = name
    return out


def _ready(sc: Scenario, pod: str) -> bool:
    obj = sc.pod(pod) or {}
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in (obj.get("status") or {}).get("conditions") or [])


def _phase(sc: Scenario, pod: str) -> str | None:
    return ((sc.pod(pod) or {}).get("status") or {}).get("phase")


def _lines(text: str, kind: str) -> list[str]:
    return [line.split(" ", 1)[1] for line in text.splitlines() if line.startswith(kind + " ")]


def _proxy_rules(sc: Scenario, node: str) -> list[str]:
    """kube-proxy's rules on ``node`` that name the Service web (iptables' nat table or the nftables
    kube-proxy table, whichever mode runs), to show which endpoints the node knew; read inside the
    node container, nothing sent."""
    if sc.kind is None:
        return ["(not readable with --kubeconfig)"]
    key = f"{sc.namespace}/web"
    rules = sc.node_exec("sh", "-c", "iptables-save -t nat 2>/dev/null; nft list table ip kube-proxy 2>/dev/null; true", node=node)
    return [line.strip() for line in rules.splitlines() if key in line][:12]


@pytest.mark.profile("multi-node")
@pytest.mark.record("Pod", "Event", "EndpointSlice")
def test_pods_services_and_dns_across_nodes(scenario: Scenario):
    """A web pod and a client pod on each node: each client reaches both web pods by pod IP
    (the web pod sees the client's own address), resolves the Service and is answered by both
    of its endpoints, one per node."""
    sc = scenario
    # a --kubeconfig cluster: two of the schedulable nodes its facts offer (e2e.cluster.facts.choose_node)
    nodes = list(sc.nodes)[:2] or sorted(n.metadata.name for n in sc.kube.core.list_node().items)
    assert len(nodes) == 2, f"profile multi-node has 2 nodes, the cluster has {nodes}"

    sc.apply("web-service.yaml")
    web = _pods_on_nodes(sc, "web-on-node.yaml", "web", nodes)
    sc.wait_for("a ready web pod on each node", lambda: all(_ready(sc, p) for p in web.values()), PODS_SLACK_S)
    ips = {node: sc.pod(p)["status"]["podIP"] for node, p in web.items()}
    for node in ips:
        assert sc.pod(web[node])["spec"]["nodeName"] == node

    # the Service's endpoints: one per node, once the EndpointSlice controller has written the pods'
    # Ready (it follows the pod's status update, ENDPOINT_PROPAGATION_S; read once at the pods' Ready,
    # the slice may still lack the later one: seen on the foreign cluster, 2026-12-07)
    def endpoint_nodes() -> list[str]:
        slices = client.DiscoveryV1Api(sc.kube.api_client).list_namespaced_endpoint_slice(
            sc.namespace, label_selector="kubernetes.io/service-name=web").items
        return sorted(ep.node_name for s in slices for ep in s.endpoints or [] if ep.conditions.ready)

    try:
        sc.wait_for("a ready endpoint of Service web on each node", lambda: endpoint_nodes() == nodes, ENDPOINT_PROPAGATION_S)
    except WaitTimeout:
        pytest.fail(f"Service web should have a ready endpoint on each node within {ENDPOINT_PROPAGATION_S:g} s of "
                    f"its pods' Ready, has {endpoint_nodes()}")

    targets = " ".join(f"{ip}:{APP_PORT}" for ip in ips.values())
    clients = _pods_on_nodes(sc, "client-on-node.yaml", "client", nodes, pod_targets=targets, web_pods=" ".join(web.values()),
                             service_requests=SERVICE_REQUESTS, service_interval_s=SERVICE_INTERVAL_S)
    sc.wait_for("both clients done", lambda: all(_phase(sc, p) in ("Succeeded", "Failed") for p in clients.values()),
                PODS_SLACK_S + (3 + SERVICE_INTERVAL_S) * (len(nodes) + SERVICE_REQUESTS + 1))

    cluster_ip = sc.kube.core.read_namespaced_service("web", sc.namespace).spec.cluster_ip
    problems = []
    for node, pod in clients.items():
        log = sc.kube.logs(sc.namespace, pod, "client")
        client_ip = sc.pod(pod)["status"]["podIP"]
        # pod to pod, on the same node and across nodes
        pod_lines = _lines(log, "POD")
        if len(pod_lines) != len(ips):
            problems.append(f"client on {node}: {len(pod_lines)} pod requests logged, expected {len(ips)}: {log[-500:]!r}")
        for line in pod_lines:
            address, verdict, *rest = line.split(" ", 2)
            target = next(n for n, ip in ips.items() if address == f"{ip}:{APP_PORT}")
            if verdict != "OK" or not (rest and rest[0].startswith(web[target])):
                problems.append(f"client on {node} → pod {web[target]} on {target} ({address}): {line}")
        # cluster DNS and the Service by name, from this node
        dns = _lines(log, "DNS")
        if dns != [f"OK {cluster_ip}"]:
            problems.append(f"client on {node}: the Service name web should resolve to its ClusterIP {cluster_ip}: {dns}")
        svc = _lines(log, "SVC")
        answered = {body.split()[1] for body in svc if body.startswith("OK ")}
        if answered != set(web.values()):
            problems.append(f"client on {node}: the Service web was answered by {sorted(answered)}, expected {sorted(web.values())}"
                            f" ({len(svc)} requests {SERVICE_INTERVAL_S} s apart; failures: {[b for b in svc if not b.startswith('OK')][:3]});"
                            f" kube-proxy's rules for it on {node}: {_proxy_rules(sc, node)}")
        else:
            sc.note(f"service_requests_until_both_answered[{node}]", len(svc))
        # pod traffic keeps its source address across nodes (no masquerading inside the pod subnet)
        for target, web_pod in web.items():
            remotes = {w.split("remote=")[1].rsplit(":", 1)[0] for w in sc.kube.logs(sc.namespace, web_pod, "app").splitlines()
                       if "remote=" in w}
            if client_ip not in remotes:
                problems.append(f"web pod on {target} never saw client {pod}'s address {client_ip} (saw {sorted(remotes)})")
    assert not problems, "multi-node networking:\n  " + "\n  ".join(problems)


@pytest.mark.profile("multi-node")
def test_pod_subnet_routes_on_each_node(scenario: Scenario):
    """Each node routes the other node's pod share via that node and keeps every other
    address of the pod subnet ``unreachable`` (never the default route off the machine).

    Both are the suite's own wiring, not a contract of Kubernetes: the ``unreachable`` route is its
    node guard's (e2e.cluster.egress ``NODE_SCRIPT``, run before every kubelet start), the routes
    between the nodes its static CNI's (e2e.cluster.kind ``wire_nodes``) or kindnet's. The suite's
    clusters have both, and so has ``make foreign-cluster``'s. So it runs wherever the nodes carry
    the node guard — on a ``--kubeconfig`` cluster through the node agent (``--node-agent``; without
    node access it is skipped saying so) — reading the guard's pod subnets and each node's share in
    the node; a ``--kubeconfig`` cluster whose nodes have no node guard is skipped naming them (its
    CNI routes pods its own way: there the check has no subject). On the suite's own clusters a
    node without the guard fails the test."""
    sc = scenario
    if sc.kind is not None:  # the profile's two nodes; in the rooms cluster the two workers of its room
        nodes = list(sc.nodes) or sc.kind.nodes()
        assert len(nodes) == 2
    else:  # the nodes placed for the profile (at least two schedulable ones: e2e.plugin.clusters)
        nodes = list(sc.nodes)
    guards = {node: guard_subnets(sc.node_exec("sh", "-c", f"cat {NODE_SCRIPT} 2>/dev/null || true", node=node))
              for node in nodes}
    unguarded = [node for node in nodes if not guards[node]]
    if unguarded and sc.kind is None:
        pytest.skip(f"checks the suite's own node guard, not a contract of Kubernetes: node {', '.join(unguarded)} has no "
                    f"{NODE_SCRIPT} with an unreachable route for the pod subnet (e2e.cluster.egress; the suite puts it "
                    "in the nodes of the clusters it makes and of make foreign-cluster)")
    k8s_nodes = {n.metadata.name: n for n in sc.kube.core.list_node().items}
    shares = {node: _pod_share(sc, node, k8s_nodes[node]) for node in nodes}
    problems = [f"{node}: no node guard ({NODE_SCRIPT} routes no pod subnet unreachable)" for node in unguarded]
    subnets = sorted({s for found in guards.values() for s in found}, key=lambda s: ipaddress.ip_network(s).version)
    known = [*shares.values(), *(n.spec.pod_cidr for n in k8s_nodes.values() if n.spec.pod_cidr)]
    unused = unused_address(subnets, known)
    if unused is None:
        problems.append(f"no address of the node guard's pod subnets {subnets} outside every node's share {sorted(set(known))}")
    for node in nodes:
        if unused is not None:
            # `ip route get` of an address behind an unreachable route fails with EHOSTUNREACH
            got = sc.node_exec("sh", "-c", f"ip route get {unused} 2>&1 || true", node=node).strip()
            if "No route to host" not in got:
                problems.append(f"{node}: {unused} (unused part of the pod subnet) routes as {got!r}, not unreachable")
        for other in nodes:
            if other == node:
                continue
            other_ip = next(a.address for a in k8s_nodes[other].status.addresses if a.type == "InternalIP")
            probe = str(ipaddress.ip_network(shares[other]).network_address + 200)  # in the other node's share, not its gateway
            route = sc.node_exec("ip", "route", "get", probe, node=node).strip()
            if f"via {other_ip} " not in route + " ":
                problems.append(f"{node}: {probe} (pod share of {other}) routes as {route!r}, not via {other_ip}")
    assert not problems, "pod subnet routes:\n  " + "\n  ".join(problems)


def guard_subnets(script: str) -> list[str]:
    """The pod subnets the node guard's script (the text of e2e.cluster.egress ``NODE_SCRIPT``, made
    by ``node_guard_script``; empty: no guard) routes ``unreachable``, in its order."""
    return UNREACHABLE_ROUTE.findall(script)


def unused_address(subnets: list[str], shares: list[str]) -> str | None:
    """An address of the first of ``subnets`` (the node guard's pod subnets, IPv4 first) that none of
    the nodes' ``shares`` covers: the subnet's last address but one (kind's node shares are taken from
    its start); None when every subnet's is covered or there is none."""
    for subnet in subnets:
        net = ipaddress.ip_network(subnet)
        candidate = net.broadcast_address - 1
        if not any(candidate in ipaddress.ip_network(s) for s in shares if ipaddress.ip_network(s).version == net.version):
            return str(candidate)
    return None


def _pod_share(sc: Scenario, node: str, k8s_node) -> str:
    """The node's share of the pod subnet: its static CNI conflist (the offline image's, read in
    the node: ``docker exec`` or the node agent), else (kindnetd) the ``spec.podCIDR``
    kube-controller-manager gave it."""
    conflist = sc.node_exec("sh", "-c", f"cat {CONFLIST_IN_NODE} 2>/dev/null || true", node=node)
    return ptp_subnet(conflist) if conflist.strip() else k8s_node.spec.pod_cidr

