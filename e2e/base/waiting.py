"""The one polling helper for every wait (tenacity): explicit timeout, interval, what it
waits for, and progress logged and shown.

Progress: every poll of :func:`wait_until` (and its end) is passed as a :class:`WaitState`
to the observer set with :func:`set_observer` (the plugin's live terminal line,
:mod:`e2e.run.progress`); without one, only the log gets a line about every 10 s.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Callable, TypeVar, cast

from tenacity import RetryError, Retrying, retry_if_result, stop_after_delay, wait_fixed

log = logging.getLogger(__name__)
T = TypeVar("T")

# Slack a scenario adds to a wait (never to a verdict), one policy named by what the wait holds
# besides the documented moment, on a busy 2-core kind host. A wait for a documented moment is the
# band's upper end (Judge.wait_budget_s) + the slack of what else it waits for.
# One pod: namespace, scheduling, sandbox and container start.
WAIT_SLACK_S = 30
# A controller's pods (a Deployment's rollout, a Job's pods, a PDB's status) or pods on several nodes.
PODS_SLACK_S = 60
# After a node-level fault is undone: the kubelet, containerd or the node back and Ready, then its pods.
FAULT_SLACK_S = 90


@dataclass(frozen=True)
class WaitState:
    """One poll of a wait: ``what`` it waits for, seconds ``elapsed_s`` of ``timeout_s``;
    ``done`` on the last call, with ``ok`` True when it happened, False when it timed out
    (or ``check`` raised). ``absence``: the wait watches that ``what`` does *not* happen
    (:meth:`e2e.run.scenario.Scenario.never_within`), so its timing out is the good end."""

    what: str
    elapsed_s: float
    timeout_s: float
    done: bool = False
    ok: bool = False
    absence: bool = False


Observer = Callable[[WaitState], None]
_observer: Observer | None = None


def set_observer(observer: Observer | None) -> Observer | None:
    """Make ``observer`` receive every :class:`WaitState` of this process; returns the previous one."""
    global _observer
    previous, _observer = _observer, observer
    return previous


def _notify(state: WaitState) -> None:
    if _observer is not None:
        _observer(state)


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
    absence: bool = False,
) -> T:
    """Call ``check`` every ``interval_s`` seconds until it returns a truthy value; return it.

    Raises :class:`WaitTimeout` after ``timeout_s`` seconds, with ``describe()`` (what was
    last observed) in its message. Progress is logged about every 10 s and every poll goes
    to the observer (see module doc); ``absence`` tells it the wait watches that ``what`` does not
    happen (:class:`WaitState`).
    """
    started = time.monotonic()
    last_log = [started]

    def progress(state) -> None:
        now = time.monotonic()
        _notify(WaitState(what, now - started, timeout_s, absence=absence))
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
    ok = False
    try:
        result = retrying(check)
        ok = True
    except RetryError as e:
        raise WaitTimeout(what, timeout_s, e.last_attempt.result(), describe() if describe else "") from None
    finally:
        _notify(WaitState(what, time.monotonic() - started, timeout_s, done=True, ok=ok, absence=absence))
    return cast(T, result)  # truthy: never None
