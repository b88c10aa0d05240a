"""Replay a timeline recorded on a real v1.37.2 kind cluster (CL-1, the first run of this
suite, tests/data/cl1-v1.37.2-recording.json) through the same code a scenario uses.

It proves that a verdict can fail and says why: against a band that does not hold (the first,
too narrow, 1.37 model of the back-off re-sync, [39, 43] s for the 40 s gap, which this very
recording disproved with 57 s) the judge fails with measured, expected, band, case ID, source
and the timeline around the restart.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from e2e.judge.expectations import Band, Expectation, Registry, REGISTRY
from e2e.judge.measurements import ExpectationFailed, Judge, MeasurementLog
from e2e.record.recorder import load_changes
from e2e.record.timeline import attempts, excerpt, restart_gaps, rows

RECORDING = Path(__file__).parent / "data" / "cl1-v1.37.2-recording.json"


@pytest.fixture(scope="module")
def changes():
    return load_changes(RECORDING)


def test_recorded_runs_and_gaps(changes):
    runs = attempts(changes, "crashloop", "app")
    assert len(runs) == 5
    assert [r.exit_code for r in runs[:4]] == [1, 1, 1, 1]
    assert restart_gaps(runs) == [1.0, 13.0, 22.0, 57.0]


def test_recorded_gaps_hold_in_the_registry_bands(changes, tmp_path):
    judge = Judge(MeasurementLog(tmp_path / "m.json"), "replay", "r", "v1.37.2", minor=37, registry=REGISTRY)
    for i, gap in enumerate(restart_gaps(attempts(changes, "crashloop", "app"))):
        judge.expect("CL-1", f"restart_gap[{i}]", gap)
    judge.verify()


def test_a_band_that_does_not_hold_fails_with_an_explanation(changes, tmp_path):
    narrow = Registry()
    narrow.add(
        Expectation(
            case="CL-1",
            name="restart_gap[3]",
            documented=40.0,
            unit="s",
            band=Band(39, 43),
            why="re-sync exactly at the back-off's expiry (too narrow: ignores the 0.5 jitter)",
            source="[S0]; [UP] pod_workers.go",
            minors=(37, None),
        )
    )
    runs = attempts(changes, "crashloop", "app")
    t0 = min(c.received_at for c in changes)
    table = rows(changes, t0)
    judge = Judge(MeasurementLog(tmp_path / "m.json"), "replay", "r", "v1.37.2", minor=37, registry=narrow)
    context = excerpt(table, around=runs[4].started_at - t0, width_s=5)
    assert judge.expect("CL-1", "restart_gap[3]", restart_gaps(runs)[3], context=context) is False
    with pytest.raises(ExpectationFailed) as err:
        judge.verify()
    text = str(err.value)
    assert "CL-1 restart_gap[3]: measured 57 s, expected 40 s within [39, 43] s" in text
    assert "cluster: v1.37.2" in text
    assert "band: re-sync exactly" in text
    assert "source: [S0]; [UP] pod_workers.go" in text
    # the timeline around the restart: the brief CrashLoopBackOff and the 5th run starting
    assert "waiting(CrashLoopBackOff)" in text and "restarts=4" in text
    (m,) = MeasurementLog(tmp_path / "m.json").read()["measurements"]
    assert (m["verdict"], m["value"], m["band"]) == ("fail", 57.0, [39, 43])
