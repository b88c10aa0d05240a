"""scenarios/disruption: the kubectl scenarios talk to the run's own cluster (DR-4's ``rollout
status`` on any cluster; DR-2's ``drain`` with the run's --kubeconfig and --context), and DR-2 cordons
a node of a cluster the suite did not make only with --node-agent on a node the agent may enter
(test_drain; a fake cluster and a fake kubectl, no cluster)."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest
from case_dirs import ROOT, import_case

from e2e.cluster import cordon
from e2e.cluster.nodeaccess import AgentAccess, DockerAccess

assert import_case(ROOT / "scenarios" / "disruption" / "test_drain.py") is None
assert import_case(ROOT / "scenarios" / "disruption" / "test_progress.py") is None
drain = sys.modules["scenarios.disruption.test_drain"]
progress = sys.modules["scenarios.disruption.test_progress"]


class FakeKube:
    """A --kubeconfig cluster's client: its file and context; nodes w1 (worker) and cp (control plane)."""

    kubeconfig, context = "/home/u/.kube/foreign", "ops"

    def __init__(self):
        self.nodes = {"w1": {"metadata": {"name": "w1", "labels": {}, "annotations": {}}, "spec": {"unschedulable": True}},
                      "cp": {"metadata": {"name": "cp", "labels": {"node-role.kubernetes.io/control-plane": ""}}, "spec": {}}}
        self.patches: list[dict] = []

    def get(self, kind, name, namespace):
        assert kind == "Node"
        return self.nodes.get(name)

    def patch(self, kind, name, namespace, body, patch_type="strategic"):
        self.patches.append(body)
        self.nodes[name]["spec"].update(body.get("spec", {}))
        return self.nodes[name]


def _sc(access) -> SimpleNamespace:
    sc = SimpleNamespace(kube=FakeKube(), access=access, marks=[])
    sc.mark = lambda when, label: sc.marks.append(label)
    return sc


def test_rollout_status_reads_the_cluster_the_flags_name(tmp_path):
    kubectl = tmp_path / "kubectl"
    kubectl.write_text('#!/bin/sh\necho "$*"\n')
    kubectl.chmod(0o755)
    t = progress.rollout_status(str(kubectl), ["--kubeconfig", "/home/u/.kube/foreign", "--context", "ops"], "ns-1")
    assert [ln.text for ln in t.stdout()] == [
        f"--kubeconfig /home/u/.kube/foreign --context ops rollout status deployment/web -n ns-1 --timeout={progress.ROLLOUT_STATUS_TIMEOUT_S}s"]


def test_drain_skips_without_node_agent_naming_the_flag():
    with pytest.raises(pytest.skip.Exception, match=r"kubectl drain cordons a node of a cluster the suite did not make: .*--node-agent"):
        drain.skip_unless_cordon_allowed(_sc(None), None)
    with pytest.raises(pytest.skip.Exception, match=r"cordons node w1 of a cluster the suite did not make: .*--node-agent"):
        drain.skip_unless_cordon_allowed(_sc(None), "w1")


def test_drain_through_the_agent_skips_on_a_node_the_agent_must_not_enter():
    agent = AgentAccess(None, "run-1", "busybox:local")
    drain.skip_unless_cordon_allowed(_sc(agent), "w1")  # a worker: goes on
    drain.skip_unless_cordon_allowed(_sc(agent), None)
    with pytest.raises(pytest.skip.Exception, match=r"cordons node cp, .*control-plane node"):
        drain.skip_unless_cordon_allowed(_sc(agent), "cp")
    drain.skip_unless_cordon_allowed(_sc(DockerAccess()), "cp")  # a kind cluster the suite made: always


def test_the_uncordon_removes_the_runs_mark_and_checks_the_node_takes_pods():
    sc = _sc(DockerAccess())
    drain.uncordon_and_check(sc, "w1")
    assert sc.kube.patches == [{"metadata": {"annotations": {cordon.CORDONED_BY: None}}, "spec": {"unschedulable": False}}]
    assert sc.marks == ["uncordon node/w1"]
    stuck = _sc(DockerAccess())
    stuck.kube.patch = lambda *a, **k: None  # the API took it, the node stays cordoned
    with pytest.raises(RuntimeError, match=r"node w1 is still cordoned after uncordon: fix it by hand \(kubectl uncordon w1\)"):
        drain.uncordon_and_check(stuck, "w1")
