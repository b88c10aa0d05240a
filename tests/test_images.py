"""e2e.cluster.images: which workload images a cluster's nodes lack (the --kubeconfig preflight)."""

from __future__ import annotations

import pytest

from e2e.cluster.images import missing_on_nodes, normalize


def node(name: str, images: list[list[str]], unschedulable: bool = False, taints: list[dict] | None = None) -> dict:
    return {"metadata": {"name": name}, "spec": {"unschedulable": unschedulable, "taints": taints or []},
            "status": {"images": [{"names": names, "sizeBytes": 1} for names in images]}}


@pytest.mark.parametrize("ref, full", [
    ("busybox", "docker.io/library/busybox:latest"),
    ("busybox:1.36.1", "docker.io/library/busybox:1.36.1"),
    ("docker.io/library/busybox:1.36.1", "docker.io/library/busybox:1.36.1"),
    ("pod-lifecycle-e2e/lifecycle-app:abc", "docker.io/pod-lifecycle-e2e/lifecycle-app:abc"),
    ("localhost:5000/app", "localhost:5000/app:latest"),
    ("registry.k8s.io/pause:3.10", "registry.k8s.io/pause:3.10"),
    ("busybox@sha256:abc", "docker.io/library/busybox@sha256:abc"),
])
def test_normalize_like_the_container_runtime(ref, full):
    assert normalize(ref) == full


def test_missing_images_per_schedulable_node():
    # issue 20 (11): with --kubeconfig and no workload images, each test timed out on ErrImageNeverPull
    images = {"busybox_image": "busybox:1.36.1", "app_image": "pod-lifecycle-e2e/lifecycle-app:abc"}
    nodes = [
        node("worker-1", [["docker.io/library/busybox:1.36.1", "docker.io/library/busybox@sha256:1"]]),
        node("worker-2", [["docker.io/library/busybox:1.36.1"], ["docker.io/pod-lifecycle-e2e/lifecycle-app:abc"]]),
        node("cordoned", [], unschedulable=True),
        node("control-plane", [], taints=[{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]),
    ]
    assert missing_on_nodes(nodes, images) == {"pod-lifecycle-e2e/lifecycle-app:abc": ["worker-1"]}
    assert missing_on_nodes(nodes[1:2], images) == {}
    # a cluster where no node takes pods: every image is missing "everywhere"
    assert missing_on_nodes(nodes[2:], images) == {"busybox:1.36.1": ["(no schedulable node)"],
                                                    "pod-lifecycle-e2e/lifecycle-app:abc": ["(no schedulable node)"]}
