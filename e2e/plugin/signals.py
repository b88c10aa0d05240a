"""Stopping a run: Ctrl-C (SIGINT) and SIGTERM — what ``timeout``, ``docker stop``, systemd and a
CI cancellation send — stop it once, with its cleanup.

The first of them raises ``KeyboardInterrupt`` where the process is, and pytest ends the run as
after Ctrl-C: the tests' teardown (each test's namespace), then the session's finish (the run's
clusters, state files, junit.xml). A later one, while that cleanup runs (also after a
``KeyboardInterrupt`` raised otherwise: a Ctrl-C held back, ``pytest.exit``), is said and ignored:
it cannot cut the cleanup short (Ctrl-\\ or SIGKILL still stop at once; ``make clean`` removes
what that leaves). So is a first one after the last test, while the session's finish does that
cleanup: the run ends with its tests' outcome. In every process of the run (xdist workers too),
from ``pytest_configure`` to the last of pytest's cleanups; a signal some other code already handles (or
ignores, as a shell does for a background job's SIGINT) is left to it.
"""

from __future__ import annotations

import signal
import sys
import threading
from types import FrameType

import pytest

from ..base.interrupts import started

# each signal and the handler Python starts with: only that one is replaced
_DEFAULTS = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}
# the name of the :class:`Stop` plugin (``config.pluginmanager.get_plugin``)
SIGNALS = "e2e-signals"


class Stop:
    """The handler of both signals (see module doc) and the plugin part that says so and gives
    the signals their previous handlers back."""

    def __init__(self) -> None:
        self.first: str | None = None  # the signal that stopped the run
        # from the first signal, a KeyboardInterrupt raised otherwise or the session's finish on
        # (its first step, e2e.plugin.runend: before the run's finish deletes its clusters and writes its reports)
        self.stopping = False
        self.ignored = 0  # signals ignored since (a child process in the terminal's group got them too)
        self.previous: dict[int, object] = {}

    def install(self) -> None:
        for signum, default in _DEFAULTS.items():
            if signal.getsignal(signum) is default:
                self.previous[signum] = signal.signal(signum, self)

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if self.stopping:
            self.ignored += 1
            sys.stderr.write(f"\npod-lifecycle-e2e: {name} ignored while cleaning up (clusters, namespaces, "
                             "reports); Ctrl-\\ stops at once and leaves the rest to `make clean`\n")
            return
        self.first, self.stopping = name, True
        raise KeyboardInterrupt

    def pytest_keyboard_interrupt(self) -> None:
        # also a Ctrl-C held back and raised later (e2e.base.interrupts.signals_deferred), or pytest.exit:
        # the cleanup follows, signals are ignored from now on
        self.stopping = True
        # said here: in the test, its output is captured
        if self.first not in (None, "SIGINT"):
            sys.stderr.write(f"pod-lifecycle-e2e: {self.first}: stopping as after Ctrl-C, with the cleanup\n")

    def restore(self) -> None:
        """The signals' previous handlers back: the last of pytest's cleanups (see pytest_configure)."""
        for signum, previous in self.previous.items():
            signal.signal(signum, previous)  # type: ignore[arg-type]  # what signal.signal returned


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    # pytest handles a KeyboardInterrupt from here on (e2e.base.interrupts.quiet_while_starting until now)
    started()


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if threading.current_thread() is not threading.main_thread():  # signals go to the main thread only
        return
    stop = Stop()
    stop.install()
    config.pluginmanager.register(stop, SIGNALS)
    # the first cleanup added runs last (a stack): after pytest_unconfigure and pytest's own cleanups —
    # make interrupt-check run 11: a second Ctrl-C during pytest's last garbage collection, after the
    # handlers were given back in pytest_unconfigure, was a traceback and exit -2
    config.add_cleanup(stop.restore)
