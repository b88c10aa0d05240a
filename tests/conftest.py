"""Unit tests of the framework itself: no cluster, Docker or network. Shared builders live in
``helpers.py``; this keeps it importable whatever pytest's import mode."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
pytest_plugins = ["pytester"]


def pytest_terminal_summary(terminalreporter) -> None:
    # at the end, not under pytest's header: `make test` runs pytest -q, which shows no header
    from case_dirs import header

    terminalreporter.write_line(header())


@pytest.fixture(autouse=True)
def _sigint_reaches_children():
    """Tests here stop real child processes with SIGINT (Ctrl-C). `make test` started in the
    background (`nohup make test &`, a non-interactive shell's `&`) ignores SIGINT, and an ignored
    signal stays ignored in every child across exec: no Ctrl-C would arrive. A handler of our own
    is reset to the default in each child, so Python's KeyboardInterrupt and bash's traps work there."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        yield
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    else:
        yield


@pytest.fixture(autouse=True)
def _html_page_of_pytester_runs(request, monkeypatch):
    """A pytester run with a cluster option ends with its HTML report (e2e.cli.htmlreport): here
    the plain page, as without Node.js — fast and offline. pytester's HOME is a temporary folder:
    a run that builds the Allure report takes the CLI cached under the real one."""
    if "pytester" not in request.fixturenames:
        return
    from e2e.cli import htmlreport

    monkeypatch.setenv("E2E_CACHE", str(htmlreport.cache_dir().parent))
    monkeypatch.setattr(htmlreport, "have_node", lambda: False)
