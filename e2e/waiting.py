"""The one polling helper for every wait (tenacity): explicit timeout, interval, what it
waits for, and progress logged."""

from __future__ import annotations

import logging
import time
from typing import Callable, TypeVar

from tenacity import RetryError, Retrying, retry_if_result, stop_after_delay, wait_fixed

log = logging.getLogger(__name__)
T = TypeVar("T")


class WaitTimeout(AssertionError):
    """``what`` did not happen within ``timeout_s``; ``last`` is the last observed value."""

    def __init__(self, what: str, timeout_s: float, last: object = None, observed: str = ""):
        self.what, self.timeout_s, self.last = what, timeout_s, last
        msg = f"timed out after {timeout_s:g} s waiting for {what}"
        if observed:
            msg += f"; last observed: {observed}"
        super().__init__(msg)


def wait_until(
    what: str,
    check: Callable[[], T | None],
    timeout_s: float,
    interval_s: float = 0.5,
    describe: Callable[[], str] | None = None,
) -> T:
    """Call ``check`` every ``interval_s`` seconds until it returns a truthy value; return it.

    Raises :class:`WaitTimeout` after ``timeout_s`` seconds, with ``describe()`` (what was
    last observed) in its message. Progress is logged about every 10 s.
    """
    started = time.monotonic()
    last_log = [started]

    def progress(state) -> None:
        now = time.monotonic()
        if now - last_log[0] >= 10:
            last_log[0] = now
            log.info("still waiting for %s (%.0f/%.0f s)%s", what, now - started, timeout_s,
                     f": {describe()}" if describe else "")

    retrying = Retrying(
        stop=stop_after_delay(timeout_s),
        wait=wait_fixed(interval_s),
        retry=retry_if_result(lambda r: not r),
        after=progress,
        reraise=True,
    )
    try:
        result = retrying(check)
    except RetryError as e:
        raise WaitTimeout(what, timeout_s, e.last_attempt.result(), describe() if describe else "") from None
    return result
