"""A test's outcome: the one outcome policy (:func:`settle`) from the judged values, the record
attached to the test, and the UNDOCUMENTED / BUG FIXED? / known-bug lines of the terminal."""

from __future__ import annotations

import allure
import pytest

from ..faults.core import ClusterBroken
from ..judge.measurements import BUG_FIXED_PREFIX, BUG_PRESENT, ExpectationFailed
from ..record.recorder import RecorderDied
from ..report.artifacts import gather, publish
from ..report.summary import UNDOCUMENTED_PREFIX
from ..run.scenario import Scenario


SCENARIO = pytest.StashKey[Scenario]()
CALL_REPORT = pytest.StashKey[pytest.TestReport]()
FILES = pytest.StashKey[dict]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call):
    outcome = yield
    rep = outcome.get_result()
    if call.excinfo is not None and rep.failed and isinstance(call.excinfo.value, (ExpectationFailed, RecorderDied, ClusterBroken)):
        # the explanation names the test's own lines ("judged at"): no framework traceback
        rep.longrepr = f"{call.excinfo.typename}: {call.excinfo.value}"
    if rep.when == "call":
        item.stash[CALL_REPORT] = rep


def settle(outcome, sc: Scenario, item: pytest.Item) -> None:
    """The one outcome policy, applied to every scenario whatever its body did.

    A body that failed keeps its failure. Otherwise — also when the body called
    ``pytest.skip``/``pytest.xfail`` after judging values — in this order:
    a dead recorder fails the test (``RecorderDied``); any failed value fails it
    (``ExpectationFailed``, every value explained); a value with nothing documented for this
    cluster ends it **skipped**, reason ``undocumented: …`` (shown as UNDOCUMENTED); a known
    bug's correct value ends it skipped, reason ``bug no longer present — fixed on this
    version? …`` (shown as BUG FIXED?); a value set aside for the environment ends it skipped
    (``environment: …``); a flake ends it xfailed (``flake: …``); else the body's own
    skip/xfail or pass stands — a pass with known bugs present marked so (``known_bug``
    property, allure label, terminal section).
    """
    excinfo = outcome.excinfo
    body_exc = excinfo[1] if excinfo else None
    if body_exc is not None and not isinstance(body_exc, (pytest.skip.Exception, pytest.xfail.Exception)):
        return
    try:
        sc.recorder.check()
        sc.judge.verify()
    except (AssertionError, RecorderDied) as e:
        outcome.force_exception(e)
        return
    verdict = sc.judge.outcome()
    if verdict is None:
        return
    kind, reason = verdict
    if kind == BUG_PRESENT:
        item.user_properties.append(("known_bug", reason))
        allure.dynamic.label("known_bug", "present")
        allure.dynamic.tag("known bug present")
        return
    if body_exc is not None:
        reason += f" (the test also said: {body_exc})"
    item.user_properties.append(("outcome", kind))
    if kind == "flake":
        outcome.force_exception(pytest.xfail.Exception(reason))
    else:
        outcome.force_exception(pytest.skip.Exception(reason, _use_item_location=True))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item):
    """Settle the outcome from the judged values (:func:`settle`), then attach the record to
    the test's allure result (also when the body failed)."""
    outcome = yield
    sc = item.stash.get(SCENARIO, None)
    if sc is None:
        return
    settle(outcome, sc, item)
    for name, value in sc.properties:
        item.user_properties.append((name, value))
        allure.dynamic.parameter(name, value)
    item.stash[FILES] = gather(sc, item.nodeid)
    publish(sc.judge, item.stash[FILES], item.obj.__doc__)  # type: ignore[attr-defined]


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return ""


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config):
    """A test skipped for undocumented values counts as ``undocumented`` (letter U) in the
    progress and the final line, apart from environment skips; one that measured a known bug's
    correct value as ``bug fixed?`` (letter B)."""
    if report.when == "call" and report.skipped and not hasattr(report, "wasxfail"):
        if _skip_reason(report).startswith(UNDOCUMENTED_PREFIX):
            return "undocumented", "U", "UNDOCUMENTED"
        if _skip_reason(report).startswith(BUG_FIXED_PREFIX):
            return "bug fixed?", "B", "BUG FIXED?"
    return None


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    reports = terminalreporter.stats.get("undocumented", [])
    if reports:
        terminalreporter.section("undocumented values (measured, nothing documented for this cluster: not a pass)")
        for rep in reports:
            terminalreporter.line(f"UNDOCUMENTED {rep.nodeid}: {_skip_reason(rep)}")
    fixed = terminalreporter.stats.get("bug fixed?", [])
    if fixed:
        terminalreporter.section("known upstream bugs no longer present (the correct behaviour was measured: check the fix)")
        for rep in fixed:
            terminalreporter.line(f"BUG FIXED? {rep.nodeid}: {_skip_reason(rep)}")
    present = [(rep.nodeid, value) for rep in terminalreporter.stats.get("passed", []) if rep.when == "call"
               for name, value in rep.user_properties if name == "known_bug"]
    if present:
        terminalreporter.section("known upstream bugs present (today's documented behaviour: passed)")
        for nodeid, reason in present:
            terminalreporter.line(f"KNOWN BUG {nodeid}: {reason}")
