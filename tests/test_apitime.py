"""API timestamps against host time (issue 29): a whole-second API time is an interval, and an
order or a duration read against a host time says so."""

from __future__ import annotations

import pytest

from e2e.record.apitime import ApiTime, api_time
from e2e.record.timeline import parse_time
from helpers import epoch, ts


def test_a_whole_second_time_spans_its_second_and_a_micro_time_its_microsecond():
    assert api_time(ts(17)) == ApiTime(epoch(17), epoch(17) + 1)
    micro = api_time("2026-11-29T07:45:17.250000Z")
    assert micro is not None and micro.earliest == pytest.approx(epoch(17) + 0.25)
    assert micro.latest - micro.earliest == pytest.approx(1e-6, abs=1e-7)  # float epoch seconds keep ~0.2 µs
    assert api_time(None) is None and api_time("") is None
    with pytest.raises(ValueError):
        api_time("yesterday")


def test_an_event_after_a_host_time_in_the_same_second_is_not_read_as_before_it():
    # the host acted at :17.6, the kubelet started the container at :17.9 and wrote startedAt :17
    acted, started = epoch(17) + 0.6, api_time(ts(17))
    assert started is not None
    assert parse_time(ts(17)) < acted  # the naive reading: "started before we acted"
    assert not started.surely_before(acted) and not started.surely_after(acted)  # undecidable from the API
    low, high = started.seconds_after(acted)
    assert (low, high) == (pytest.approx(-0.6), pytest.approx(0.4))


def test_orders_that_hold_whatever_the_dropped_fraction():
    t = api_time(ts(17))
    assert t is not None
    assert t.surely_before(epoch(18)) and not t.surely_before(epoch(18) - 0.001)
    assert t.surely_after(epoch(17)) and not t.surely_after(epoch(17) + 0.001)
    assert t.seconds_after(epoch(12)) == (5, 6)  # a duration judged as its low end, 5 s: band "−1 s truncation"
