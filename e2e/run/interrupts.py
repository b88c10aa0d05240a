"""Holding Ctrl-C (SIGINT) and SIGTERM back around what must not be cut half-way: a fault's undo
and health check (e2e.faults.core), a namespace's create request (e2e.cluster.kube) — a request
cut after it was sent may still create the object after the cleanup looked for it."""

from __future__ import annotations

import signal
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
