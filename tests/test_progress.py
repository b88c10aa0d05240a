"""Live progress of long waits (e2e.run.progress through the plugin): case IDs, what, elapsed/timeout;
a line per interval without a terminal, nothing under -q."""

from __future__ import annotations

import pytest

from e2e.run import progress
from e2e.run.progress import describe, output_mode
from e2e.base.waiting import WaitState

WAITING_TEST = """
import time
import pytest
from e2e.base.waiting import wait_until

@pytest.mark.case("CL-1", "CL-2")
def test_waits():
    started = time.monotonic()
    wait_until("5 runs of crashloop/app", lambda: time.monotonic() - started > 0.5, timeout_s=93, interval_s=0.05)

def test_after():
    pass
"""


@pytest.fixture
def waiting(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A test waiting 0.5 s, shown after 0.2 s, a line every 0.2 s."""
    monkeypatch.setattr(progress, "SHOW_AFTER_S", 0.2)
    monkeypatch.setattr(progress, "LINE_EVERY_S", 0.2)
    monkeypatch.setenv("E2E_RUN_ID", "run-progress")
    pytester.makeini("[pytest]\nmarkers =\n    case(*ids): case IDs\n")
    pytester.makepyfile(test_wait=WAITING_TEST)
    return pytester


def test_a_line_per_interval_without_a_terminal(waiting, tmp_path):
    result = waiting.runpytest(f"--reports-dir={tmp_path}")
    result.assert_outcomes(passed=2)
    lines = result.outlines
    shown = [line for line in lines if line.startswith("CL-1 CL-2 · waiting for 5 runs of crashloop/app · ")]
    assert 1 <= len(shown) <= 2, lines
    assert all(line.endswith("/93 s") for line in shown)
    result.stdout.fnmatch_lines([
        "test_wait.py ",
        "CL-1 CL-2 · waiting for 5 runs of crashloop/app · 0/93 s",
        "CL-1 CL-2 · 5 runs of crashloop/app · done after * s of 93 s",
        "test_wait.py .. *",  # pytest's results go on after the progress lines, path first
    ], consecutive=False)


def test_quiet_under_q(waiting, tmp_path):
    result = waiting.runpytest("-q", f"--reports-dir={tmp_path}")
    result.assert_outcomes(passed=2)
    assert not [line for line in result.outlines if "waiting for" in line]


def test_verbose_rewrites_the_test_line(waiting, tmp_path):
    result = waiting.runpytest("-v", f"--reports-dir={tmp_path}")
    result.stdout.fnmatch_lines([
        "CL-1 CL-2 · 5 runs of crashloop/app · done after * s of 93 s",
        "test_wait.py::test_waits PASSED*",
        "test_wait.py::test_after PASSED*",
    ])


@pytest.mark.parametrize(
    "verbosity, isatty, ci, worker, mode",
    [
        (0, True, None, False, "live"),
        (1, True, "", False, "live"),
        (0, True, "true", False, "lines"),  # CI logs: a line per 10 s
        (0, False, None, False, "lines"),
        (0, True, None, True, "lines"),  # an xdist worker writes lines to its stderr
        (-1, True, None, False, "off"),
        (-1, False, "true", True, "off"),
    ],
)
def test_output_mode(verbosity, isatty, ci, worker, mode):
    assert output_mode(verbosity, isatty, ci, worker) == mode


def test_describe():
    assert describe(["CL-1"], WaitState("STATUS Init:CrashLoopBackOff", 12.4, 59)) == \
        "CL-1 · waiting for STATUS Init:CrashLoopBackOff · 12/59 s"
    assert describe(["CL-8"], WaitState("phase Failed", 33.0, 33, done=True, ok=False)) == \
        "CL-8 · phase Failed · gave up after 33 s of 33 s"


def test_describe_an_absence_check_as_watching_never_as_giving_up():
    # a new user's trial: never_within that held printed "gave up after 12 s of 11 s"
    state = WaitState("phase Failed while the kubelet is away", 12.3, 11, done=True, ok=False, absence=True)
    assert describe(["NU-3"], state) == "NU-3 · phase Failed while the kubelet is away · did not happen in 11 s"
    assert describe(["NU-3"], WaitState("phase Failed", 4.2, 11, absence=True)) == \
        "NU-3 · watching that phase Failed does not happen · 4/11 s"
    assert describe(["NU-3"], WaitState("phase Failed", 5.0, 11, done=True, ok=True, absence=True)) == \
        "NU-3 · phase Failed · happened after 5 s"
    assert describe(["CL-8"], WaitState("phase Failed", 33.4, 33, done=True, ok=False)) == \
        "CL-8 · phase Failed · gave up after 33 s of 33 s"  # never past its timeout


def test_never_within_tells_the_observer_it_watches_an_absence():
    from e2e.run.scenario import Scenario
    from e2e.base.waiting import set_observer

    seen = []
    previous = set_observer(seen.append)
    try:
        class Recorder:
            def check(self, since=None):
                pass

        sc = Scenario(None, "ns", Recorder(), None, None, 37, 1)
        assert sc.never_within(0.3, "a restart", lambda: False, interval_s=0.1) is True
    finally:
        set_observer(previous)
    assert seen and all(s.absence for s in seen) and seen[-1].done and not seen[-1].ok
