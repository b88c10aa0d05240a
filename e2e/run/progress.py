"""Live progress of long waits in pytest's terminal: case ID, what the test waits for,
elapsed / timeout.

Every wait of :func:`e2e.base.waiting.wait_until` reports its polls here (the plugin registers a
:class:`LiveProgress` as the waits' observer and as a pytest plugin). A wait shows up once it
has lasted :data:`SHOW_AFTER_S`; how depends on where the output goes:

- ``live`` (a terminal, ``CI`` unset): one line rewritten in place about every second,
  ``CL-1 CL-2 · waiting for 5 runs of crashloop/app · 23/93 s``, left as a record line when
  the wait ends (``… · done after 88 s of 93 s``);
- ``lines`` (no terminal, ``CI=true``, or an xdist worker): a new line every
  :data:`LINE_EVERY_S` of a wait and one at its end; a worker writes to its stderr, which
  pytest-xdist passes to the terminal, prefixed ``[gw0]``;
- ``off`` under ``-q``.
"""

from __future__ import annotations

import os
import shutil
import sys
from contextlib import nullcontext
from typing import Any

import pytest

from .selection import cases_of
from ..base.waiting import WaitState

SHOW_AFTER_S = 10.0
LIVE_EVERY_S = 1.0
LINE_EVERY_S = 10.0


def output_mode(verbosity: int, isatty: bool, ci: str | None, worker: bool) -> str:
    """``off``, ``lines`` or ``live`` (see module doc); ``ci`` is the ``CI`` variable."""
    if verbosity < 0:
        return "off"
    if worker or not isatty or (ci or "").lower() in ("1", "true", "yes"):
        return "lines"
    return "live"


def describe(cases: list[str], state: WaitState) -> str:
    """The progress text of ``state`` for a test judging ``cases``."""
    head = " ".join(cases) or "(no case)"
    elapsed = min(state.elapsed_s, state.timeout_s)  # the last poll may end a little past the timeout
    if state.absence:
        if not state.done:
            return f"{head} · watching that {state.what} does not happen · {elapsed:.0f}/{state.timeout_s:.0f} s"
        if state.ok:
            return f"{head} · {state.what} · happened after {elapsed:.0f} s"
        return f"{head} · {state.what} · did not happen in {state.timeout_s:.0f} s"
    if not state.done:
        return f"{head} · waiting for {state.what} · {elapsed:.0f}/{state.timeout_s:.0f} s"
    end = "done after" if state.ok else "gave up after"
    return f"{head} · {state.what} · {end} {elapsed:.0f} s of {state.timeout_s:.0f} s"


def terminal_width() -> int:
    """The terminal's width as pytest's terminal writer takes it (80 when unknown or narrower than 40)."""
    width = shutil.get_terminal_size(fallback=(80, 24)).columns
    return width if width >= 40 else 80


class LiveProgress:
    """The waits' observer and a pytest plugin knowing the running test's cases."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.tr: Any = None  # pytest's terminal reporter and capture manager, from the session's start
        self.capman: Any = None
        self.worker = getattr(config, "workerinput", {}).get("workerid")
        self.mode = "off"  # until the session starts
        self.cases: list[str] = []
        self._shown_at: float | None = None  # elapsed seconds of the last line shown of this wait
        self._open = False  # a progress line without its newline is on the terminal

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """The terminal reporter exists from here on (whatever order plugins configured in)."""
        config = self.config
        self.tr = config.pluginmanager.getplugin("terminalreporter")
        self.capman = config.pluginmanager.getplugin("capturemanager")
        isatty = bool(self.tr and self.tr.isatty())
        self.mode = output_mode(config.get_verbosity(), isatty, os.environ.get("CI"), self.worker is not None)
        if self.tr is None and self.worker is None:
            self.mode = "off"

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem):
        self.cases = cases_of(item) or [item.name]
        try:
            return (yield)
        finally:
            self.cases = []

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report) -> None:
        """Before pytest writes the test's result letter after our line: its file's path first,
        on a new line (the verbose output rewrites its own test line)."""
        if self._open and self.worker is None and self.tr.verbosity <= 0:
            with self.capman.global_and_fixture_disabled() if self.capman else nullcontext():
                self.tr.write_fspath_result(report.nodeid, "")
        self._open = False

    def __call__(self, state: WaitState) -> None:
        if self.mode == "off":
            return
        if state.done:
            if self._shown_at is not None:
                self._show(describe(self.cases, state))
            self._shown_at = None
            return
        if state.elapsed_s < SHOW_AFTER_S:
            return
        every = LIVE_EVERY_S if self.mode == "live" else LINE_EVERY_S
        if self._shown_at is not None and state.elapsed_s - self._shown_at < every:
            return
        self._shown_at = state.elapsed_s
        self._show(describe(self.cases, state))

    def _show(self, text: str) -> None:
        with self.capman.global_and_fixture_disabled() if self.capman else nullcontext():
            if self.worker is not None:
                sys.stderr.write(f"[{self.worker}] {text}\n")
                sys.stderr.flush()
                return
            tr = self.tr
            if tr.currentfspath:  # end pytest's line of dots (or the verbose test line)
                tr.write("\n")
            elif self._open and self.mode == "lines":
                tr.write("\n")
            # pytest starts a new line (with the file's path) for its next result
            tr.currentfspath = None
            if self.mode == "live":
                tr.rewrite(text[: terminal_width() - 1], erase=True)
            else:
                tr.write(text, flush=True)
            self._open = True
