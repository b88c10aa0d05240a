"""Workload images the scenarios run, pinned in one place.

Each is preloaded into the cluster with ``kind load docker-image`` so that no timing ever
includes an image pull, and manifests use ``imagePullPolicy: Never`` through the
``${busybox_image}`` placeholder. Override with ``E2E_BUSYBOX_IMAGE`` (the offline build sets
it to its locally built image: see ``hack/offline``).

On a ``--kubeconfig`` cluster nothing loads them: the plugin's preflight stops the run with
one error when a schedulable node's ``status.images`` lacks one (:func:`missing_on_nodes`).

``${app_image}`` is the suite's own HTTP workload (``hack/images/lifecycle-app``: probes, a
configurable SIGTERM reaction, millisecond-stamped log lines), built locally by
``hack/images/lifecycle-app/build.sh TAG`` (there is no registry copy); ``make e2e``
(hack/prepare.sh) builds it tagged by a hash of its source and sets ``E2E_APP_IMAGE``.
"""

from __future__ import annotations

import os

# busybox: a static shell + coreutils; every CL scenario's container is a busybox script.
BUSYBOX = os.environ.get("E2E_BUSYBOX_IMAGE", "docker.io/library/busybox:1.36.1")
# lifecycle-app: the PS scenarios' HTTP server (hack/images/lifecycle-app, built locally).
APP = os.environ.get("E2E_APP_IMAGE", "pod-lifecycle-e2e/lifecycle-app:latest")


# placeholder -> the environment variable that overrides its image
ENV_VARS = {"busybox_image": "E2E_BUSYBOX_IMAGE", "app_image": "E2E_APP_IMAGE"}

# The kubelet lists at most this many images in node.status.images (nodeStatusMaxImages,
# default 50: pkg/kubelet/apis/config/v1beta1/defaults.go; the largest first): on a node
# with a full list an image that is not listed may still be there.
NODE_STATUS_MAX_IMAGES = 50


def workload_images() -> dict[str, str]:
    """Placeholder name -> image reference, for manifests."""
    return {"busybox_image": BUSYBOX, "app_image": APP}


def normalize(ref: str) -> str:
    """An image reference as the container runtime names it: ``busybox:1.36.1`` ->
    ``docker.io/library/busybox:1.36.1``, ``my/app`` -> ``docker.io/my/app:latest``; a
    reference with a registry host (a ``.`` or ``:`` in its first part, or ``localhost``)
    keeps it; ``name@digest`` keeps the digest."""
    name, _, digest = ref.partition("@")
    tag = None
    if name.rfind(":") > name.rfind("/"):
        name, tag = name.rsplit(":", 1)
    first, _, rest = name.partition("/")
    if not rest:
        name = f"docker.io/library/{name}"
    elif not ("." in first or ":" in first or first == "localhost"):
        name = f"docker.io/{name}"
    if digest:
        return f"{name}@{digest}"
    return f"{name}:{tag or 'latest'}"


def _schedulable(node: dict) -> bool:
    spec = node.get("spec") or {}
    hard = [t for t in spec.get("taints") or [] if t.get("effect") in ("NoSchedule", "NoExecute")]
    return not spec.get("unschedulable") and not hard


def missing_on_nodes(nodes: list[dict], images: dict[str, str]) -> dict[str, list[str]]:
    """``{image: [node names]}`` of the ``images`` (placeholder -> reference) that schedulable
    ``nodes`` (API JSON: not cordoned, no NoSchedule/NoExecute taint) do not list in
    ``status.images``; ``["(no schedulable node)"]`` when no node takes pods. A node whose
    list is full (:data:`NODE_STATUS_MAX_IMAGES`) cannot tell and is not counted."""
    targets = [n for n in nodes if _schedulable(n)]
    missing: dict[str, list[str]] = {}
    for ref in images.values():
        if not targets:
            missing[ref] = ["(no schedulable node)"]
            continue
        for n in targets:
            listed = (n.get("status") or {}).get("images") or []
            names = {normalize(name) for img in listed for name in img.get("names") or []}
            if normalize(ref) not in names and len(listed) < NODE_STATUS_MAX_IMAGES:
                missing.setdefault(ref, []).append(n["metadata"]["name"])
    return missing
