"""Fixtures of the DR scenarios."""

from __future__ import annotations

import pytest

from e2e.kubectl import KubectlNotFound, kubectl_for


@pytest.fixture(scope="session")
def kubectl(cluster) -> str:
    """Path of the real kubectl of the cluster's version (e2e.kubectl.kubectl_for)."""
    try:
        return str(kubectl_for(cluster.kubernetes, cluster.kind))
    except KubectlNotFound as e:
        pytest.skip(f"environment: {e}")
