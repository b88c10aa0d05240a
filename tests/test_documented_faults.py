"""e2e.documented.faults: NF-1's and NF-2's node-lifecycle values built from a cluster's own
settings (issue 42 item 3): on the settings of a suite profile the same names and bands as the
registry's entries, on others their own, every source naming the settings and where they came from."""

from __future__ import annotations

import pytest

from e2e.cluster.facts import Lifecycle
from e2e.documented import faults as doc
from e2e.judge.expectations import REGISTRY
from e2e.judge.measurements import FAIL, PASS, Judge, MeasurementLog

LIVE = "kubelet configz nodeLeaseDurationSeconds=20 on node n; controller-manager node-monitor-grace-period 20s (profiles/x)"


@pytest.mark.parametrize("profile", [doc.FAST, doc.DEFAULT])
def test_a_profiles_settings_give_the_registrys_names_and_bands(profile):
    lc = Lifecycle(doc.LEASE_DURATION_S[profile], doc.GRACE_S[profile], doc.MONITOR_PERIOD_S[profile], LIVE)
    for built in [*doc.nf1_from(lc), doc.nf2_from(lc)]:
        entry = REGISTRY.lookup(built.case, built.name, 37)
        assert built.name.endswith(f"[{profile}]")
        assert (built.documented, built.band, built.unit) == (entry.documented, entry.band, entry.unit)
        assert built.verified_in == entry.verified_in
        assert "kubelet configz nodeLeaseDurationSeconds=20 on node n" in built.source


def test_other_settings_give_their_own_names_and_bands():
    lc = Lifecycle(30, 30, 2, LIVE)
    lease, median, gap_max = doc.nf1_from(lc)
    assert (lease.name, lease.documented) == ("lease_duration_s[lease=30s]", 30)
    assert (median.documented, median.band.low, median.band.high) == (7.5, 7.5, 8.0)
    assert (gap_max.band.low, gap_max.band.high) == (7.5, 14.999)
    unknown = doc.nf2_from(lc)
    assert unknown.name == "unknown_after_last_renew_s[grace=30s,period=2s]"
    assert (unknown.band.low, unknown.band.high) == (29, 30 + 2 * 2 + 1 + 1)
    assert unknown.source.endswith(LIVE)


def test_a_value_is_judged_against_the_band_of_the_live_settings(tmp_path):
    """A fast-lifecycle test on a cluster of default settings is judged by the default band, not
    the fast one: 55 s after the last renewal passes with grace 50 s and fails with grace 20 s."""
    judge = Judge(MeasurementLog(tmp_path / "m.json"), test="t", run_id="r", kubernetes="v1.37.2", minor=37, registry=REGISTRY)
    default = doc.nf2_from(Lifecycle(40, 50, 5, LIVE))
    assert judge.expect_against(default, 55.0) is True
    fast = doc.nf2_from(Lifecycle(20, 20, 1, LIVE))
    assert judge.expect_against(fast, 55.0) is False
    assert [(m["name"], m["verdict"], m["band"], m["source"]) for m in judge.log.read()["measurements"]] == [
        (default.name, PASS, [49.0, 62.0], default.source), (fast.name, FAIL, [19.0, 24.0], fast.source)]
