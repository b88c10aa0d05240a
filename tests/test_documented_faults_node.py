"""e2e.documented.faults_node: NF-4's and NF-8's Unknown band and fault window from the cluster's
live node-lifecycle settings; on the two-node profiles the registry's names and bands."""

from __future__ import annotations

import pytest

from e2e.cluster.facts import Lifecycle
from e2e.documented import faults_node as doc


def _live(grace_s: float, period_s: float) -> Lifecycle:
    return Lifecycle(40, grace_s, period_s, f"controller-manager node-monitor-grace-period {grace_s:g}s (upstream default)")


@pytest.mark.parametrize("case, registered", [("NF-4", doc.NF4), ("NF-8", doc.NF8)])
@pytest.mark.parametrize("profile", [doc.FAST, doc.DEFAULT])
def test_on_a_profiles_settings_the_live_value_is_the_registered_one(case, registered, profile):
    live = doc.unknown_from(case, _live(doc.GRACE_S[profile], doc.MONITOR_PERIOD_S[profile]))
    (same,) = [e for e in registered if e.name == live.name]
    assert live.name == f"unknown_after_last_renew_s[{profile}]"
    assert (live.case, live.documented, live.band, live.why) == (same.case, same.documented, same.band, same.why)
    assert live.source.endswith("node-monitor-grace-period "
                                f"{doc.GRACE_S[profile]:g}s (upstream default)")  # the settings named, not the profile


def test_other_settings_are_named_by_them_with_their_own_band():
    live = doc.unknown_from("NF-8", _live(40, 2))
    assert live.name == "unknown_after_last_renew_s[grace=40s,period=2s]"
    assert (live.documented, live.band.low, live.band.high) == (40, 39, 40 + 2 * 2 + doc.API_RESOLUTION_S + doc.LOADED_S)
    assert doc.VERIFIED_IN == live.verified_in


def test_the_fault_lasts_longer_by_what_the_live_unknown_band_needs_beyond_the_profiles():
    fast = _live(doc.GRACE_S[doc.FAST], doc.MONITOR_PERIOD_S[doc.FAST])
    assert doc.fault_window_s(doc.PARTITION_S[doc.FAST], doc.FAST, fast) == doc.PARTITION_S[doc.FAST]
    # the upstream defaults (50 s, 5 s) on the fast profile's test: 60 − 22 s more
    assert doc.fault_window_s(90, doc.FAST, _live(50, 5)) == 90 + (50 + 10) - (20 + 2)
    assert doc.fault_window_s(90, doc.FAST, _live(10, 1)) == 90  # a shorter grace never shortens it
