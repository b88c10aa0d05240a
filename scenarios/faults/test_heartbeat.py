"""NF-1 — heartbeat cadence (CASES-faults.md §2.1, §4 NF-1): the kubelet renews its Lease in
kube-node-lease every 0.25 × nodeLeaseDurationSeconds (+0–4 % jitter), on every profile.

No fault; recorded on the fault profiles' own clusters (fast-lifecycle in the default
selection; the upstream defaults, profile default-lifecycle, under ``slow``). The band comes from
the node's own nodeLeaseDurationSeconds (its configz, e2e.cluster.facts.lifecycle), the values
named by it (``[fast-lifecycle]`` for 20 s, ``[default-lifecycle]`` for 40 s): on a
``--kubeconfig`` cluster the test runs on any node and says which lease it judged.
"""

from __future__ import annotations

import statistics

import pytest

from e2e.documented import faults as doc
from e2e.run.scenario import Scenario
from e2e.record.nodes import lease_duration, renewals

from .fault_helpers import (
    wait_until_time,
)

PROFILES = [pytest.param(doc.FAST, marks=pytest.mark.profile(doc.FAST)),
            pytest.param(doc.DEFAULT, marks=[pytest.mark.profile(doc.DEFAULT), pytest.mark.slow])]


@pytest.mark.serial
@pytest.mark.record("Lease", "Node")
@pytest.mark.case("NF-1")
@pytest.mark.parametrize("profile", PROFILES)
def test_heartbeat_cadence(scenario: Scenario, profile: str):
    """NF-1: 3 min of Lease renewals: leaseDurationSeconds as the node's kubelet runs it, the
    median gap 0.25 × that (+ jitter), no single gap of twice the interval."""
    sc = scenario
    node = sc.default_node()
    settings = sc.lifecycle(node)
    documented = {e.name: e for e in doc.nf1_from(settings)}
    key = doc.lease_key(settings.lease_s)
    since = sc.recorder.started_at
    sc.mark(since, "recording the Lease")
    wait_until_time(sc, since + doc.NF1_RECORD_S, f"{doc.NF1_RECORD_S} s of Lease renewals")
    sc.recorder.check(since=since)  # every renewal seen: no gap in the recording
    lease = sc.recorder.changes("Lease", node)
    renewed = renewals(lease)
    gaps = [round(b - a, 6) for a, b in zip(renewed, renewed[1:], strict=False)]
    details = {"renewals": len(gaps) + 1, "gaps_s": gaps, "profile": profile}
    for name, value in ((f"lease_duration_s[{key}]", lease_duration(lease)),
                        (f"renew_gap_median_s[{key}]", statistics.median(gaps) if gaps else None),
                        (f"renew_gap_max_s[{key}]", max(gaps) if gaps else None)):
        sc.expect("NF-1", name, value, details=details, expectation=documented[name])
