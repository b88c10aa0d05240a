"""e2e.cluster.cordon: a cordon (DR-2's kubectl drain) only where it may go — a kind cluster the
suite made, or through --node-agent a node the agent may enter — and the run's mark on the node
that lets make clean undo a killed run's cordon (a fake Kube, no cluster)."""

from __future__ import annotations

from e2e.cluster import cordon
from e2e.cluster.nodeaccess import AgentAccess, DockerAccess


def node(name: str, role: str | None = None, unschedulable: bool = False, **annotations: str) -> dict:
    labels = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": "zone-a" if name == "w1" else "zone-b"}
    if role:
        labels[f"node-role.kubernetes.io/{role}"] = ""
    return {"metadata": {"name": name, "labels": labels, "annotations": annotations},
            "spec": {"unschedulable": True} if unschedulable else {}}


class FakeKube:
    """The nodes of a cluster as the API answers them; ``patch`` applies a merge patch to them and records it."""

    def __init__(self, *nodes: dict):
        self.by_name = {n["metadata"]["name"]: n for n in nodes}
        self.patches: list[tuple[str, str, dict, str]] = []

    def nodes(self) -> list[dict]:
        return list(self.by_name.values())

    def patch(self, kind, name, namespace, body, patch_type="strategic"):
        assert (kind, namespace) == ("Node", None)
        self.patches.append((kind, name, body, patch_type))
        obj = self.by_name[name]
        for key, value in body.get("metadata", {}).get("annotations", {}).items():
            if value is None:
                obj["metadata"]["annotations"].pop(key, None)
            else:
                obj["metadata"]["annotations"][key] = value
        obj["spec"].update(body.get("spec", {}))
        return obj


def test_on_a_kind_cluster_the_suite_made_a_cordon_is_always_allowed():
    assert cordon.refusal(DockerAccess(), node("ple2e-control-plane", "control-plane")) is None
    assert cordon.refusal(DockerAccess()) is None


def test_without_node_agent_a_cordon_of_the_users_node_is_refused_naming_the_flag():
    refused = cordon.refusal(None, node("w1"))
    assert refused == ("kubectl drain cordons node w1 of a cluster the suite did not make: a node change, made only "
                       "with the explicit node flag --node-agent, which this run was not given")
    assert cordon.refusal(None).startswith("kubectl drain cordons a node of a cluster the suite did not make")


def test_through_the_agent_only_a_node_it_may_enter_is_cordoned():
    agent = AgentAccess(None, "run-1", "busybox:local")
    assert cordon.refusal(agent, node("w1")) is None
    assert cordon.refusal(agent) is None  # no node yet: only the flag counts
    refused = cordon.refusal(agent, node("cp", "control-plane"))
    assert refused.startswith("kubectl drain cordons node cp, a node change made only where the node agent may go: "
                              "node cp is a control-plane node (node-role.kubernetes.io/control-plane)")
    selected = AgentAccess(None, "run-1", "busybox:local", selector={"topology.kubernetes.io/zone": "zone-a"})
    assert cordon.refusal(selected, node("w1")) is None
    assert "node w2 is not selected by --node-selector topology.kubernetes.io/zone=zone-a (it has topology.kubernetes.io/zone=zone-b)" \
        in cordon.refusal(selected, node("w2"), what="DR-2")
    assert cordon.refusal(selected, node("w2"), what="DR-2").startswith("DR-2 cordons node w2")


def test_the_mark_names_the_run_and_the_uncordon_removes_it_in_the_same_patch():
    kube = FakeKube(node("w1"), node("w2"))
    cordon.mark(kube, "w1", "run-1")
    assert kube.patches == [("Node", "w1", {"metadata": {"annotations": {cordon.CORDONED_BY: "run-1"}}}, "merge")]
    assert cordon.marked(kube) == [cordon.Marked("w1", "run-1", False)]
    kube.by_name["w1"]["spec"]["unschedulable"] = True  # kubectl drain cordons it
    assert cordon.marked(kube) == [cordon.Marked("w1", "run-1", True)]
    answer = cordon.uncordon(kube, "w1")
    assert kube.patches[-1] == ("Node", "w1", {"metadata": {"annotations": {cordon.CORDONED_BY: None}},
                                               "spec": {"unschedulable": False}}, "merge")
    assert answer["spec"]["unschedulable"] is False and cordon.CORDONED_BY not in answer["metadata"]["annotations"]
    assert cordon.marked(kube) == []


def test_marked_lists_every_marked_node_by_name_and_nothing_else():
    kube = FakeKube(node("w2", unschedulable=True, **{cordon.CORDONED_BY: "run-b"}),
                    node("w1", **{cordon.CORDONED_BY: "run-a"}),
                    node("w3", unschedulable=True),  # cordoned by someone else: not the suite's
                    node("w4", **{"other/annotation": "x"}))
    assert cordon.marked(kube) == [cordon.Marked("w1", "run-a", False), cordon.Marked("w2", "run-b", True)]


def test_the_end_of_a_run_uncordons_what_its_own_drain_left_and_no_other_runs(monkeypatch, caplog):
    """e2e.plugin.clusters: a DR-2 stopped before its uncordon (a second Ctrl-C, an xdist worker
    ended) left its node cordoned; the run's end undoes it, also with --keep-namespaces; another
    (live) run's cordon is its own."""
    from types import SimpleNamespace

    from e2e.plugin import clusters

    monkeypatch.setattr(clusters, "run_id", lambda: "run-1")
    kube = FakeKube(node("w1", unschedulable=True, **{cordon.CORDONED_BY: "run-1"}),
                    node("w2", unschedulable=True, **{cordon.CORDONED_BY: "run-2"}))
    kube.namespaces_of_run = lambda run: []
    clusters._sweep_namespaces(SimpleNamespace(getoption=lambda name: name == "--keep-namespaces"), kube)
    assert cordon.marked(kube) == [cordon.Marked("w2", "run-2", True)]
    assert kube.by_name["w1"]["spec"]["unschedulable"] is False
    assert "node w1 is still cordoned by this run: uncordoning it" in caplog.text
    kube.nodes = lambda: (_ for _ in ()).throw(RuntimeError("list nodes: 403"))
    deleted = []
    kube.namespaces_of_run, kube.delete_namespace = (lambda run: ["e2e-a"]), deleted.append
    clusters._sweep_namespaces(SimpleNamespace(getoption=lambda name: False), kube)
    assert deleted == ["e2e-a"]  # the namespaces are still swept
    assert "undoing run run-1's cordon failed (`make clean` tries again): list nodes: 403" in caplog.text
