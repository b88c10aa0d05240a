"""Workload images the scenarios run, pinned in one place.

Each is preloaded into the cluster with ``kind load docker-image`` so that no timing ever
includes an image pull, and manifests use ``imagePullPolicy: Never`` through the
``${busybox_image}`` placeholder. Override with ``E2E_BUSYBOX_IMAGE`` (the offline build sets
it to its locally built image: see ``hack/offline``).
"""

from __future__ import annotations

import os

# busybox: a static shell + coreutils; every CL scenario's container is a busybox script.
BUSYBOX = os.environ.get("E2E_BUSYBOX_IMAGE", "docker.io/library/busybox:1.36.1")


def workload_images() -> dict[str, str]:
    """Placeholder name -> image reference, for manifests."""
    return {"busybox_image": BUSYBOX}
