"""wait_until (e2e.base.waiting): returns the truthy value, or raises WaitTimeout saying what and
what was last observed."""

from __future__ import annotations

import time

import pytest

from e2e.base.waiting import WaitTimeout, wait_until


def test_returns_the_first_truthy_value():
    values = iter([None, 0, "", [], {"phase": "Running"}, "later"])
    assert wait_until("pod running", lambda: next(values), timeout_s=1, interval_s=0.01) == {"phase": "Running"}
    assert next(values) == "later"  # no call after the first truthy value


def test_immediate_success_does_not_wait():
    started = time.monotonic()
    assert wait_until("now", lambda: 42, timeout_s=1, interval_s=0.5) == 42
    assert time.monotonic() - started < 0.2


def test_timeout_names_what_and_includes_describe():
    calls = []

    def check():
        calls.append(time.monotonic())
        return None

    started = time.monotonic()
    with pytest.raises(WaitTimeout) as err:
        wait_until("3 runs of crashloop/app", check, timeout_s=0.3, interval_s=0.05, describe=lambda: "2 runs seen, STATUS CrashLoopBackOff")
    elapsed = time.monotonic() - started
    msg = str(err.value)
    assert msg == "timed out after 0.3 s waiting for 3 runs of crashloop/app; last observed: 2 runs seen, STATUS CrashLoopBackOff"
    assert err.value.what == "3 runs of crashloop/app"
    assert err.value.timeout_s == 0.3
    assert 0.3 <= elapsed < 0.8
    assert len(calls) >= 3  # it polled


def test_timeout_keeps_the_last_value_and_is_an_assertion_error():
    values = iter(range(-100, 0))
    with pytest.raises(AssertionError) as err:
        wait_until("zero", lambda: [] if next(values) else None, timeout_s=0.1, interval_s=0.02)
    assert isinstance(err.value, WaitTimeout)
    assert err.value.last == []
    assert str(err.value) == "timed out after 0.1 s waiting for zero"  # no describe, no "last observed"


def test_exceptions_from_check_propagate_at_once():
    started = time.monotonic()
    with pytest.raises(KeyError):
        wait_until("a key", lambda: {}["missing"], timeout_s=1, interval_s=0.05)
    assert time.monotonic() - started < 0.5
