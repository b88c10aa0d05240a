"""Cleanup after a scenario leaks nothing (e2e.run.scenario.Scenario.clean_up, e2e.cluster.kube): a
finalizer of the test's own no longer keeps the namespace Terminating (removed, with a warning
naming the objects), and cluster-scoped objects made by ``apply`` are deleted (no cluster)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from kubernetes.dynamic.exceptions import NotFoundError

from e2e.cluster.kube import Kube, foreign_finalizer
from e2e.run.scenario import CleanupWarning, Scenario


def pod_obj(name: str, finalizers: list[str]) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns", "resourceVersion": "9",
                                                           "finalizers": finalizers}}


class ListedResource:
    """A dynamic resource listing ``items`` and keeping patches."""

    def __init__(self, items):
        self.items, self.patches = items, []

    def get(self, namespace):
        return SimpleNamespace(to_dict=lambda: {"items": self.items})

    def patch(self, **kw):
        self.patches.append(kw)


class FakeKube:
    """What clean_up and apply use of :class:`e2e.cluster.kube.Kube`, keeping the calls in order."""

    def __init__(self, fail_on: str | None = None):
        self.calls: list[tuple] = []
        self.fail_on = fail_on

    def apply(self, objs, namespace, dry_run=False):
        (obj,) = objs
        if obj["metadata"]["name"] == self.fail_on:
            raise RuntimeError(f"refused {self.fail_on}")
        meta = dict(obj["metadata"])
        if obj["kind"] not in ("RuntimeClass", "PriorityClass"):
            meta["namespace"] = namespace
        self.calls.append(("apply", obj["kind"], obj["metadata"]["name"], dry_run))
        return [{**obj, "metadata": meta}]

    def release_finalizers(self, namespace, kinds):
        self.calls.append(("release", namespace, tuple(kinds)))
        return ["pod/held (example.com/hold)"]

    def delete_namespace(self, name):
        self.calls.append(("delete namespace", name))

    def delete_if_exists(self, kind, name, api_version=None):
        self.calls.append(("delete", api_version, kind, name))
        return True


MANIFEST = """apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: e2e-runc}
handler: runc
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: e2e-high}
value: 1000
---
apiVersion: v1
kind: Pod
metadata: {name: held, finalizers: [example.com/hold]}
spec: {containers: [{name: app, image: busybox}]}
"""


def scenario(tmp_path: Path, kube) -> Scenario:
    (tmp_path / "m.yaml").write_text(MANIFEST)
    return Scenario(kube, "ns", recorder=None, judge=None, manifest_dir=tmp_path, kubernetes_minor=37, cgroup=2)


def test_foreign_finalizers():
    assert foreign_finalizer("example.com/hold")
    assert foreign_finalizer("test/block")
    for builtin in ("kubernetes.io/pvc-protection", "batch.kubernetes.io/job-tracking", "kubernetes",
                    "foregroundDeletion", "orphan", "resize.k8s.io/x"):
        assert not foreign_finalizer(builtin), builtin


def test_release_finalizers_keeps_kubernetes_own(tmp_path):
    (tmp_path / "kc").write_text("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
                                 "users: [{name: u, user: {}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n")
    kube = Kube(str(tmp_path / "kc"))
    pods = ListedResource([pod_obj("held", ["example.com/hold", "batch.kubernetes.io/job-tracking"]),
                           pod_obj("plain", ["batch.kubernetes.io/job-tracking"]), pod_obj("none", [])])
    kube._dynamic = SimpleNamespace(resources=SimpleNamespace(get=lambda kind, **kw: pods))
    assert kube.release_finalizers("ns", [("v1", "Pod")]) == ["pod/held (example.com/hold)"]
    (patch,) = pods.patches
    assert patch["name"] == "held" and patch["namespace"] == "ns"
    assert patch["body"] == {"metadata": {"finalizers": ["batch.kubernetes.io/job-tracking"], "resourceVersion": "9"}}
    assert patch["content_type"] == "application/merge-patch+json"

    def gone(**kw):
        raise NotFoundError(SimpleNamespace(status=404, reason="NotFound", body="{}", headers={}))

    pods.patch = gone  # deleted meanwhile: nothing to release
    assert kube.release_finalizers("ns", [("v1", "Pod")]) == []


def test_clean_up_releases_finalizers_with_a_warning_then_deletes_namespace_and_cluster_objects(tmp_path):
    # issue 20 (6): a pod with a finalizer left the namespace Terminating with no warning, and
    # cluster-scoped objects made by apply (RuntimeClass, PriorityClass) were never deleted
    kube = FakeKube()
    sc = scenario(tmp_path, kube)
    sc.apply("m.yaml")
    assert sc.cluster_objects == [("node.k8s.io/v1", "RuntimeClass", "e2e-runc"), ("scheduling.k8s.io/v1", "PriorityClass", "e2e-high")]
    with pytest.warns(CleanupWarning, match=r"namespace ns: removed finalizers .*pod/held \(example.com/hold\)"):
        sc.clean_up()
    assert kube.calls[3:] == [
        ("release", "ns", (("v1", "Pod"),)),
        ("delete namespace", "ns"),
        ("delete", "scheduling.k8s.io/v1", "PriorityClass", "e2e-high"),
        ("delete", "node.k8s.io/v1", "RuntimeClass", "e2e-runc"),
    ]


def test_objects_created_before_a_refused_one_are_still_cleaned_up(tmp_path):
    kube = FakeKube(fail_on="e2e-high")
    sc = scenario(tmp_path, kube)
    with pytest.raises(RuntimeError, match="refused e2e-high"):
        sc.apply("m.yaml")
    assert sc.cluster_objects == [("node.k8s.io/v1", "RuntimeClass", "e2e-runc")]
    assert sc.t0 and sc.marks  # something was applied: the clock started
    with pytest.warns(CleanupWarning):
        sc.clean_up()
    assert kube.calls[-1] == ("delete", "node.k8s.io/v1", "RuntimeClass", "e2e-runc")


def test_a_kept_namespace_keeps_its_cluster_objects(tmp_path, caplog):
    kube = FakeKube()
    sc = scenario(tmp_path, kube)
    sc.apply("m.yaml")
    sc.apply("m.yaml", dry_run=True)
    sc.clean_up(keep_namespace=True)
    assert [c[0] for c in kube.calls] == ["apply"] * 6
    assert "keeping namespace ns and cluster-scoped runtimeclass/e2e-runc, priorityclass/e2e-high" in caplog.text
