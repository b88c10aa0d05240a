"""Container-written timestamps (e2e.evidence.probelog): parsing a container log into stamps."""

from __future__ import annotations

import pytest

from e2e.evidence.probelog import Stamp, before, first, intervals, labelled, parse

# A real log of a container whose startup probe never succeeds (PR-1), with busybox adjtimex
# output mixed in, as read back through the API.
LOG = """start 1795939931.839358
    mode:         0
    time.tv_sec:  1795939931
    time.tv_usec: 839923
probe:startup:failure 1795939933.582386
probe:startup:failure 1795939935.578872
probe:startup:failure 1795939937.589039\r
sigterm 1795939937.598951
"""


def test_parse_keeps_only_stamp_lines_in_order():
    stamps = parse(LOG)
    assert [s.label for s in stamps] == ["start"] + ["probe:startup:failure"] * 3 + ["sigterm"]
    assert stamps[0].at == pytest.approx(1795939931.839358, abs=1e-6)
    assert stamps[-1].at == pytest.approx(1795939937.598951, abs=1e-6)


@pytest.mark.parametrize(
    "line",
    ["start 1795939931.83935", "start 1795939931", "two words 1795939931.839358", "start  1795939931.839358x", ""],
)
def test_parse_rejects_other_shapes(line):
    assert parse(line) == []


def test_labelled_matches_prefix_at_a_colon_boundary():
    stamps = [Stamp("probe:startup:failure", 1.0), Stamp("probe:startup:success", 2.0),
              Stamp("probe:startupx", 3.0), Stamp("probe:readiness:success", 4.0)]
    assert [s.at for s in labelled(stamps, "probe:startup")] == [1.0, 2.0]
    assert [s.at for s in labelled(stamps, "probe:startup:success")] == [2.0]
    assert labelled(stamps, "probe:liveness") == []


def test_first_before_and_intervals():
    stamps = parse(LOG)
    assert first(stamps, "sigterm").at == pytest.approx(1795939937.598951)
    assert first(stamps, "started") is None
    probes = labelled(stamps, "probe:startup")
    assert intervals(probes) == [1.996, 2.01]
    assert intervals(probes[:1]) == []
    assert len(before(probes, 1795939937.0)) == 2
