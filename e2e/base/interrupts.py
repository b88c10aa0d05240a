"""Holding Ctrl-C (SIGINT) and SIGTERM back around what must not be cut half-way: a fault's undo
and health check (e2e.faults.core), a namespace's create request (e2e.cluster.kube) — a request
cut after it was sent may still create the object after the cleanup looked for it. And a Ctrl-C
while pytest starts, before it handles one: one line, not a traceback."""

from __future__ import annotations

import signal
import sys
import threading
from contextlib import contextmanager
from typing import Iterator

HELD = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def signals_deferred() -> Iterator[None]:
    """A context manager (yields nothing) that holds SIGINT and SIGTERM back for the duration and
    then delivers the first one caught to the handler it had before (the suite's: a
    ``KeyboardInterrupt``, e2e.plugin.signals). Main thread only (elsewhere a no-op: Python
    delivers signals to the main thread anyway); a signal the process ignores (a shell's
    background job ignores SIGINT) stays ignored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = {s: signal.getsignal(s) for s in HELD if signal.getsignal(s) is not signal.SIG_IGN}
    for s in previous:
        signal.signal(s, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        if caught:
            signal.raise_signal(caught[0])


def _stopped_while_starting(signum: int, frame: object) -> None:
    sys.stderr.write("\npod-lifecycle-e2e: Ctrl-C while pytest started (imports, options): stopped before "
                     "anything was created or run; nothing to clean up\n")
    raise SystemExit(130)  # 128 + SIGINT, as a shell reports it; SystemExit prints no traceback


def quiet_while_starting() -> None:
    """From the plugin's import until :func:`started`: a Ctrl-C ends the process with one line
    and exit code 130. pytest handles a ``KeyboardInterrupt`` only from ``pytest_cmdline_main``
    on; before it (loading plugins: importing the kubernetes client takes a second or more) the
    interpreter printed a 60-line traceback (issue 30, item 10). Main thread, and only when
    SIGINT still has Python's default handler (a background job's ignored SIGINT stays ignored)."""
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _stopped_while_starting)


def started() -> None:
    """pytest handles Ctrl-C from here (``pytest_cmdline_main``): Python's default handler back."""
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) is _stopped_while_starting:
        signal.signal(signal.SIGINT, signal.default_int_handler)
