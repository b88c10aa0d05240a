"""Fixtures of the DR scenarios."""

from __future__ import annotations

import pytest

from e2e.evidence.kubectl import KubectlNotFound, kubectl_for


@pytest.fixture
def kubectl(cluster) -> str:
    """Path of the real kubectl of the test's cluster's version (e2e.evidence.kubectl.kubectl_for, cached
    per version; per test because each test's cluster is its profile's)."""
    try:
        return str(kubectl_for(cluster.kubernetes, cluster.kind))
    except KubectlNotFound as e:
        pytest.skip(f"environment: {e}")
