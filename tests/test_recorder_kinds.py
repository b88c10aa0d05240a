"""e2e.record.recorder records the kinds a test asks for with ``@pytest.mark.record(...)``: namespaced
Jobs, Deployments, ReplicaSets, StatefulSets, HorizontalPodAutoscalers, PodDisruptionBudgets, the cluster-scoped Nodes and the node
Leases of kube-node-lease (fake API)."""

from __future__ import annotations

import json
import time
from types import SimpleNamespace

import pytest
from kubernetes import client, watch

from e2e.record.recorder import Recorder

KINDS = {
    "Job": (client.BatchV1Api, "list_namespaced_job"),
    "Deployment": (client.AppsV1Api, "list_namespaced_deployment"),
    "ReplicaSet": (client.AppsV1Api, "list_namespaced_replica_set"),
    "StatefulSet": (client.AppsV1Api, "list_namespaced_stateful_set"),
    "HorizontalPodAutoscaler": (client.AutoscalingV2Api, "list_namespaced_horizontal_pod_autoscaler"),
    "PodDisruptionBudget": (client.PolicyV1Api, "list_namespaced_pod_disruption_budget"),
    "Node": (client.CoreV1Api, "list_node"),
    "Lease": (client.CoordinationV1Api, "list_namespaced_lease"),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_records_the_kind_listed_then_watched(kind, monkeypatch):
    api, method = KINDS[kind]
    calls = []

    def fake_list(self, *args, **kwargs):
        calls.append((args, kwargs))
        item = {"metadata": {"name": "x", "resourceVersion": "7"}}
        return SimpleNamespace(data=json.dumps({"metadata": {"resourceVersion": "7"}, "items": [item]}).encode())

    def fake_stream(self, func, *args, **kwargs):
        func(*args, **kwargs)  # the list function, called as for a watch
        yield {"type": "MODIFIED", "raw_object": {"metadata": {"name": "x", "resourceVersion": "8"}, "status": {}}}
        time.sleep(0.05)

    monkeypatch.setattr(api, method, fake_list)
    monkeypatch.setattr(watch.Watch, "stream", fake_stream)
    rec = Recorder(client.ApiClient(), "ns", [kind]).start()
    deadline = time.time() + 5
    while len(rec.changes(kind)) < 2 and time.time() < deadline:
        time.sleep(0.01)
    rec.stop()
    listed, modified = rec.changes(kind)[:2]
    assert (listed.type, listed.kind, listed.name, listed.obj["kind"]) == ("LISTED", kind, "x", kind)
    assert (modified.type, modified.kind) == ("MODIFIED", kind)
    if kind == "Node":  # cluster-scoped: listed cluster-wide, no namespace argument
        assert all(args == () for args, _ in calls)
    elif kind == "Lease":  # the nodes' heartbeats, whatever the test's namespace
        assert all(args == ("kube-node-lease",) for args, _ in calls)
    else:
        assert all(args == ("ns",) for args, _ in calls)
    assert rec.errors == []


def test_an_unknown_kind_is_a_clear_error():
    with pytest.raises(ValueError, match=r"cannot record \['Secret'\]; known kinds: .*'Lease'.*'Node'.*'PodDisruptionBudget'"):
        Recorder(client.ApiClient(), "ns", ["Pod", "Secret"])
