"""Replay a timeline recorded on a real v1.37.2 kind cluster (CL-1, the first run of this
suite, tests/data/cl1-v1.37.2-recording.json) through the same code a scenario uses.

It proves that a verdict can fail and says why: against a band that does not hold (the first,
too narrow, 1.37 model of the back-off re-sync, [39, 43] s for the 40 s gap, which this very
recording disproved with 57 s) the judge fails with measured, expected, band, case ID, source
and the timeline around the restart.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from e2e.judge.expectations import Band, Expectation, Registry, REGISTRY
from e2e.judge.measurements import ExpectationFailed, Judge, MeasurementLog
from e2e.record.recorder import Change, load_changes
from e2e.record.timeline import attempts, excerpt, restart_gaps, rows
from e2e.run.scenario import Scenario

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


# -- the test's own actions under a failed value (issue 29, 5) -----------------------------------
# NF-6 [stop] as recorded on v1.37.2 (a concurrent run's artifacts): its recording and the marks of
# its timeline.txt — the fault, an exec during the outage, an apply, the undo. Its failed value
# failed_requests[stop] was explained by 25 rows of probe events and none of those actions.

REAL = Path(__file__).parent / "data" / "real-v1.37.2"


@pytest.fixture
def nf6(tmp_path) -> Scenario:
    """A scenario over NF-6 [stop]'s recording and marks, its judge quoting the scenario's timeline
    as the plugin's ``scenario`` fixture makes it (``judge.context = sc.timeline_excerpt``)."""
    changes = [Change(**c) for c in json.loads(gzip.decompress((REAL / "nf6-stop-recording.json.gz").read_bytes()))["changes"]]
    text = (REAL / "nf6-stop-timeline-marks.txt").read_text()
    t0 = float(re.search(r"t0 = ([\d.]+)", text).group(1))
    marks = [(t0 + float(t), label) for t, label in re.findall(r"^\s*\+([\d.]+)\s+mark\s+(.+)$", text, re.M)]
    recorder = SimpleNamespace(changes=lambda kind=None, name=None: [c for c in changes if kind in (None, c.kind)],
                               started_at=changes[0].received_at, kinds=("Pod", "Event", "EndpointSlice", "Node"))
    judge = Judge(MeasurementLog(tmp_path / "m.json"), "replay", "r", "v1.37.2", minor=37, cgroup=1, registry=REGISTRY)
    sc = Scenario(None, "ns", recorder, judge, tmp_path, 37, 1, t0=t0, marks=marks)  # no cluster: nothing here calls the API
    judge.context = sc.timeline_excerpt
    return sc


def explained(sc: Scenario) -> str:
    with pytest.raises(ExpectationFailed) as failed:
        sc.judge.verify()
    return str(failed.value)


def action_row(t: float, label: str) -> str:
    return rf"\+{t:.3f}\s+mark\s+{re.escape(label)}"


def test_a_value_judged_at_the_end_shows_the_actions_that_led_to_it(nf6):
    """issue 29 (5): the excerpt held the last 25 rows — probe events — and none of the test's actions."""
    assert nf6.expect("NF-6", "failed_requests[stop]", 2) is False
    text = explained(nf6)
    for t, label in ((7.080, "fault containerd-stop on ple2e-b2fff253d5-control-plane"), (13.197, "exec readiness/app: true"),
                     (13.328, "apply late.yaml"), (69.972, "undo containerd-stop")):
        assert re.search(action_row(t, label), text), label
    assert "+86.077  endpointslice/web-4lk89" in text  # and still the recording's end


def test_a_value_judged_around_a_moment_shows_the_actions_before_it(nf6):
    moment = nf6.t0 + 35.0  # the outage: 43 rows within 30 s of it (23 probe events), the exec 22 s before
    assert nf6.expect("NF-6", "failed_requests[stop]", 2, around=moment) is False
    text = explained(nf6)
    assert re.search(action_row(13.197, "exec readiness/app: true"), text)
    assert re.search(action_row(7.080, "fault containerd-stop on ple2e-b2fff253d5-control-plane"), text)
    assert not re.search(r"mark\s+undo containerd-stop", text)  # 35 s after the moment: not what led to it


def test_several_failed_values_show_one_excerpt_and_refer_to_it(nf6):
    """issue 29 (5): four failed values repeated the same 20 rows."""
    for name, value in (("failed_requests[stop]", 2), ("web_ready_flips[stop]", 1), ("container_restarts[stop]", 1),
                        ("tick_max_gap_s[stop]", 5.0)):
        assert nf6.expect("NF-6", name, value) is False
    text = explained(nf6)
    assert text.count("t (s)  subject") == 1, text
    assert text.count("timeline: the one under NF-6 failed_requests[stop] above") == 3
