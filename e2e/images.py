"""Workload images the scenarios run, pinned in one place.

Each is preloaded into the cluster with ``kind load docker-image`` so that no timing ever
includes an image pull, and manifests use ``imagePullPolicy: Never`` through the
``${busybox_image}`` placeholder. Override with ``E2E_BUSYBOX_IMAGE`` (the offline build sets
it to its locally built image: see ``hack/offline``).

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


def workload_images() -> dict[str, str]:
    """Placeholder name -> image reference, for manifests."""
    return {"busybox_image": BUSYBOX, "app_image": APP}
