"""e2e.cluster.gates: the feature-gate metric parsed, each component's reader with a fake client
or node, and every way a read fails named (no cluster)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from e2e.cluster import gates
from e2e.cluster.gates import GatesUnreadable, GateUnknown
from helpers import api_answering as kube

METRICS = """\
# HELP kubernetes_feature_enabled [BETA] This metric records the data about the stage and enablement of a k8s feature.
# TYPE kubernetes_feature_enabled gauge
kubernetes_feature_enabled{name="AllAlpha",stage="ALPHA"} 0
kubernetes_feature_enabled{name="PodReadyToStartContainersCondition",stage="BETA"} 1
kubernetes_feature_enabled{name="SidecarContainers",stage=""} 1
kubernetes_feature_enabled{stage="BETA",name="LabelsSwapped"} 1
apiserver_request_total{code="200",verb="GET"} 12
"""


def test_parse_reads_name_stage_and_value_of_every_gate_and_nothing_else():
    g = gates.parse(METRICS, "x")
    assert sorted(g) == ["AllAlpha", "LabelsSwapped", "PodReadyToStartContainersCondition", "SidecarContainers"]
    assert g["PodReadyToStartContainersCondition"] == gates.Gate("PodReadyToStartContainersCondition", "BETA", True)
    assert g.enabled("AllAlpha") is False
    assert g["SidecarContainers"].stage == ""
    assert g.enabled("LabelsSwapped") is True
    assert g.describe("SidecarContainers") == "SidecarContainers=true (GA) per x"
    assert g.describe("Nope") == "Nope not exported by x"


def test_an_unknown_gate_is_an_error_naming_it_never_false():
    g = gates.parse(METRICS, "kubelet of n")
    with pytest.raises(GateUnknown, match="kubelet of n exports no feature gate 'Typo'"):
        g.enabled("Typo")
    assert isinstance(GateUnknown("x"), KeyError)


def test_metrics_without_a_gate_sample_are_unreadable():
    with pytest.raises(GatesUnreadable, match="no kubernetes_feature_enabled sample"):
        gates.parse("apiserver_request_total 1\n", "x")
    with pytest.raises(GatesUnreadable, match="has the value 'x'"):
        gates.parse('kubernetes_feature_enabled{name="A",stage=""} x\n', "x")


def test_api_server_and_kubelet_are_read_through_the_client():
    k = kube({"/metrics": METRICS, "/api/v1/nodes/n-1/proxy/metrics": METRICS})
    assert gates.api_server(k).enabled("SidecarContainers")
    g = gates.kubelet(k, "n-1")
    assert g.source == "kubelet of n-1 (node proxy /metrics)"
    assert k.asked == ["https://127.0.0.1:40000/metrics", "https://127.0.0.1:40000/api/v1/nodes/n-1/proxy/metrics"]


def test_a_failed_request_or_status_is_unreadable_with_what_was_asked():
    k = kube({"/metrics": 403, "/api/v1/nodes/n/proxy/metrics": TimeoutError("read timed out")})
    with pytest.raises(GatesUnreadable, match=r"kube-apiserver /metrics: GET /metrics: HTTP 403"):
        gates.api_server(k)
    with pytest.raises(GatesUnreadable, match=r"GET /api/v1/nodes/n/proxy/metrics: TimeoutError: read timed out"):
        gates.kubelet(k, "n")


def test_an_api_server_off_the_loopback_is_never_asked():
    k = kube({"/metrics": METRICS}, host="https://10.1.2.3:6443")
    with pytest.raises(GatesUnreadable, match="127.0.0.1 only"):
        gates.api_server(k)
    assert k.asked == []


def test_controller_manager_is_read_with_curl_in_the_node():
    seen = []

    def node_exec(*cmd, timeout=30, node=None):
        seen.append(cmd)
        return METRICS
    assert gates.controller_manager(node_exec).enabled("PodReadyToStartContainersCondition")
    assert seen[0][:2] == ("sh", "-c") and "curl" in seen[0][2] and seen[0][2].endswith(" https://127.0.0.1:10257/metrics")
    assert "/etc/kubernetes/admin.conf" in seen[0][2] and "rm -rf" in seen[0][2]

    def failing(*cmd, timeout=30, node=None):
        raise RuntimeError("docker exec n curl …: curl: (7) Failed to connect")
    with pytest.raises(GatesUnreadable, match="kube-controller-manager .*Failed to connect"):
        gates.controller_manager(failing)


def test_a_read_sends_the_kubeconfigs_bearer_token(monkeypatch):
    """A ServiceAccount's kubeconfig has a token and no client certificate: the request must carry
    it (it went anonymous, 403, on the foreign cluster with deploy/rbac.yaml)."""
    from kubernetes import client

    cfg = client.Configuration()
    cfg.host, cfg.api_key = "https://127.0.0.1:40000", {"authorization": "Bearer sa-token"}
    api = client.ApiClient(cfg)
    sent = []

    def request(method, url, headers=None, **kw):
        sent.append((method, url, dict(headers or {})))
        return SimpleNamespace(read=lambda: None, data=b"ok", status=200)

    monkeypatch.setattr(api.rest_client, "request", request)
    assert gates.read(SimpleNamespace(api_client=api), "/metrics", "kube-apiserver /metrics") == "ok"
    ((method, url, headers),) = sent
    assert (method, url, headers.get("authorization")) == ("GET", "https://127.0.0.1:40000/metrics", "Bearer sa-token")


def _api(*gates_on: tuple[str, str, bool]) -> gates.Gates:
    return gates.Gates({n: gates.Gate(n, stage, on) for n, stage, on in gates_on}, "kube-apiserver /metrics")


def test_feature_gates_flag_reads_what_the_components_take():
    assert gates.feature_gates_flag("A=true, B=False") == {"A": True, "B": False}
    for bad in ("A", "A=yes", "=true", "A=true,"):
        with pytest.raises(ValueError, match="is not Name=true or Name=false"):
            gates.feature_gates_flag(bad)


def test_the_controller_managers_gates_not_read_are_the_api_servers_and_said_so():
    """A foreign run failed ST-1 and ST-3: the controller manager's /metrics was read with curl in a
    worker (the agent never enters a control plane). Its gates are then the API server's, said so."""
    cm = gates.controller_manager_assumed(_api(("MaxUnavailableStatefulSet", "BETA", True)), {}, None)
    assert cm.enabled("MaxUnavailableStatefulSet") is True
    assert cm.describe("MaxUnavailableStatefulSet") == (
        "MaxUnavailableStatefulSet=true (BETA) per kube-apiserver /metrics, assumed for kube-controller-manager (its "
        "/metrics is on the control-plane node, which the suite does not enter; give controllerManager.feature-gates in "
        "--cluster-facts)")


def test_the_facts_files_controller_manager_gates_win_and_are_named():
    cm = gates.controller_manager_assumed(_api(("MaxUnavailableStatefulSet", "BETA", True), ("X", "ALPHA", False)),
                                          {"MaxUnavailableStatefulSet": False, "New": True}, "--cluster-facts f.yaml")
    assert (cm.enabled("MaxUnavailableStatefulSet"), cm["MaxUnavailableStatefulSet"].stage) == (False, "BETA")
    assert cm.enabled("X") is False and cm.enabled("New") is True
    assert cm.source.startswith("kube-controller-manager --feature-gates MaxUnavailableStatefulSet,New (--cluster-facts f.yaml); "
                                "the rest: kube-apiserver /metrics, assumed")
