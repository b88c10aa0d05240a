"""The API-level family's expectations (e2e.documented.api): version keys and derived bands."""

from __future__ import annotations

import pytest

from e2e.documented import api as doc, kubelet
from e2e.judge.expectations import REGISTRY, NotDocumented


def test_ps7_message_and_zero_sleep_are_keyed_by_version():
    new = REGISTRY.lookup("PS-7", "rejected_message", 37)
    assert new.documented.endswith("must be non-negative and less than terminationGracePeriodSeconds (30)")
    assert REGISTRY.lookup("PS-7", "rejected_message", 34).documented == new.documented
    assert "Enable AllowPodLifecycleSleepActionZeroValue" in REGISTRY.lookup("PS-7", "rejected_message", 31).documented
    assert REGISTRY.lookup("PS-7", "accepted[sleep=0]", 37).documented is True
    assert REGISTRY.lookup("PS-7", "accepted[sleep=0]", 32).documented is False
    # equal is accepted in every version that has the sleep action
    assert REGISTRY.lookup("PS-7", "accepted[sleep=grace]", 30).documented is True
    with pytest.raises(NotDocumented):
        REGISTRY.lookup("PS-7", "rejected_message", 29)


def test_ad2_ready_to_start_containers_only_from_1_29():
    assert "PodReadyToStartContainers" in REGISTRY.lookup("AD-2", "condition_types", 37).documented
    with pytest.raises(NotDocumented):
        REGISTRY.lookup("AD-2", "condition_types", 28)
    assert REGISTRY.lookup("AD-2", "condition_status[Ready]", 28).documented == "True"


def test_startup_budget_band_is_built_from_the_probe_mechanism():
    e = REGISTRY.lookup("PR-1", "startup_kill_after_start_s[Always]", 37)
    assert e.documented == doc.STARTUP_FAILURE_THRESHOLD * doc.STARTUP_PERIOD_S == 6
    # one period early at most (first probe at once), mechanism delays late
    assert (e.band.low, e.band.high) == (4, 6 + kubelet.PLEG_RELIST_S + 2 * kubelet.KUBELET_HANDOFF_S + doc.PROBE_TIMEOUT_S)
    assert e.holds_for(5.6) and not e.holds_for(3.9) and not e.holds_for(10.1)


def test_readiness_band_and_qualified_names():
    e = REGISTRY.lookup("PR-2", "not_ready_after_removal_s", 37)
    assert (e.documented, e.band.low, e.band.high) == (2.0, 1, 4.0)
    assert REGISTRY.lookup("PR-1", "startup_probe_period_s[Never,1]", 34).documented == 2.0
    assert REGISTRY.lookup("AD-1", "default_toleration_seconds[node.kubernetes.io/unreachable]", 37).documented == 300
    assert REGISTRY.lookup("PR-1", "killing_event_message[Never]", 37).documented == "Stopping container app"
