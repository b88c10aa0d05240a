"""A test's outcome: the one outcome policy (:func:`settle`) from the judged values, the record
attached to the test, and the UNDOCUMENTED / BUG FIXED? / INCONCLUSIVE / known-bug / UNVERIFIED lines of the
terminal."""

from __future__ import annotations

import os
from collections.abc import Generator
from pathlib import Path

import allure
import pytest

from ..base.verdicts import FLAKY, PASS_MARKED, PASSED, SKIP, TERMINAL, XFAIL, outcome, verdict as verdict_row
from ..faults.core import ClusterBroken
from ..judge.measurements import ExpectationFailed
from ..record.recorder import RecorderDied
from ..report.artifacts import gather, publish, slug
from ..report.junit import fold_attempts
from ..report.summary import ALLURE_OUTCOME, OUTCOME_PROPERTY, OUTCOME_REASON, settled
from ..run.scenario import Scenario
from .options import _reports, run_id


SCENARIO = pytest.StashKey[Scenario]()
CALL_REPORT = pytest.StashKey[pytest.TestReport]()
FILES = pytest.StashKey[dict]()
# (outcome, reason) settled from the judged values, when they end the test (see :func:`settle`)
SETTLED = pytest.StashKey[tuple[str, str]]()
# Reruns (pytest-rerunfailures ``--reruns N``, opt-in): what a failed test is rerun for, unless
# --only-rerun/--rerun-except say otherwise — a value outside its documented band, or a wait for
# something that never came. Never an infrastructure failure (ClusterBroken, RecorderDied,
# ClusterUnreachable, EgressError, Docker gone, the preflight), an API refusal or a code error.
RERUN_ONLY = [r"^ExpectationFailed: ", r"^WaitTimeout: "]
# a test that failed and then passed on a rerun ends e2e.base.verdicts.FLAKY (never a plain pass)
# the name of the controller's RerunAttempts plugin (config.pluginmanager.get_plugin)
RERUN_ATTEMPTS = "e2e-rerun-attempts"
# the user properties a test had before its first attempt (its case IDs): what each rerun starts with
BASE_PROPERTIES = pytest.StashKey[list[tuple[str, object]]]()
# the first line of the last failed attempt (what a flaky test's reason quotes)
FAILED_ATTEMPT = pytest.StashKey[str]()
# the user property (and allure tag) of a test with values judged against expectations not read in
# the cluster's version (e2e.judge.measurements.UNVERIFIED), whatever its outcome
UNVERIFIED_PROPERTY = "unverified"


def test_folder(item: pytest.Item) -> Path:
    """The folder of the test's files: ``<reports>/<run id>/<node ID as a file name>/``."""
    return _reports(item.config) / run_id() / slug(item.nodeid)


def published(item: pytest.Item, files: dict[str, str | bytes]) -> None:
    """Show the test's record in its allure result (e2e.report.artifacts.publish)."""
    folder = test_folder(item)
    publish(item.stash[SCENARIO].judge, files, item.obj.__doc__,  # type: ignore[attr-defined]
            f"{folder.parent.name}/{folder.name}/")


def attempt(item: pytest.Item) -> int:
    """Which run of ``item`` this is: 1, or 2 and on for a rerun (pytest-rerunfailures)."""
    return getattr(item, "execution_count", 1)


def pytest_configure(config: pytest.Config) -> None:
    if getattr(config.option, "reruns", None) and not (config.option.only_rerun or config.option.rerun_except):
        config.option.only_rerun = list(RERUN_ONLY)
    if getattr(config.option, "reruns", None) and not hasattr(config, "workerinput"):
        config.pluginmanager.register(RerunAttempts(config), RERUN_ATTEMPTS)


class RerunAttempts:
    """junit.xml of a run with ``--reruns``: one testcase per test, its failed attempts inside it.

    pytest's junitxml writes a rerun attempt as a testcase of its own with no failure in it —
    read by any junit consumer as one more pass. Once junit.xml is written (:meth:`fold`, a step
    of the run's end, e2e.plugin.runend; the reports are published after it), each test's
    earlier testcases become children of its last one, in Maven Surefire's vocabulary:
    ``<flakyFailure message=…>`` when the last attempt passed (the ``outcome`` property says
    ``flaky``), ``<rerunFailure message=…>`` when it failed too — ``message`` the first line of
    what that attempt failed with. Controller only (the xdist workers' reports reach it)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.failed: dict[str, list[str]] = {}  # node id -> the first line of each failed attempt

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.outcome == "rerun":  # pytest-rerunfailures
            self.failed.setdefault(report.nodeid, []).append(_first_line(report))

    def fold(self) -> None:
        """Fold each rerun test's earlier attempts into its last testcase of junit.xml (class doc)."""
        path = self.config.option.xmlpath
        if path and self.failed and Path(path).is_file():
            fold_attempts(Path(path), self.failed)


def _first_line(report: pytest.TestReport) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr or "")
    return (text.strip().splitlines() or ["failed"])[0]




@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """A rerun starts as the first attempt did: nothing settled, no properties of the failed one."""
    if attempt(item) <= 1:
        item.stash[BASE_PROPERTIES] = list(item.user_properties)
        return
    base: list[tuple[str, object]] = item.stash.get(BASE_PROPERTIES, [])
    item.user_properties[:] = base
    for key in (SETTLED, CALL_REPORT, FILES):
        _forget(item, key)


def _forget(item: pytest.Item, key: pytest.StashKey) -> None:
    if key in item.stash:
        del item.stash[key]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    rep = yield
    if call.excinfo is not None and rep.failed and isinstance(call.excinfo.value, (ExpectationFailed, RecorderDied, ClusterBroken)):
        # the explanation names the test's own lines ("judged at"): no framework traceback
        rep.longrepr = f"{call.excinfo.typename}: {call.excinfo.value}"
    if rep.failed and call.excinfo is not None:
        item.stash[FAILED_ATTEMPT] = (f"{call.excinfo.typename}: {call.excinfo.value}".strip().splitlines() or [""])[0]
    if rep.when == "call":
        item.stash[CALL_REPORT] = rep
        if SETTLED in item.stash:
            _carry(item, rep, *item.stash[SETTLED])
        elif rep.passed and attempt(item) > 1:
            _flaky(item, rep)
    return rep


def _flaky(item: pytest.Item, rep: pytest.TestReport) -> None:
    """A test that passed on a rerun ends flaky: the ``outcome`` user property, the reason naming
    the failed attempt, an allure tag."""
    n = attempt(item)
    reason = f"failed on attempt {n - 1} ({item.stash.get(FAILED_ATTEMPT, 'see its report')}), passed on attempt {n}"
    rep.user_properties.append((OUTCOME_PROPERTY, FLAKY))
    item.user_properties.append((OUTCOME_PROPERTY, FLAKY))
    setattr(rep, OUTCOME_REASON, reason)
    allure.dynamic.tag(FLAKY)


class SkipLocation(tuple):
    """A skipped report's ``longrepr`` — ``(path, line, "Skipped: reason")`` as pytest's terminal
    and junitxml read it — whose text (``report.longreprtext``: allure's trace) is the reason and
    the line that judged the value, not a Python tuple."""

    def __str__(self) -> str:
        return f"{self[2]}\njudged at {self[0]}:{self[1]}"


@pytest.hookimpl(wrapper=True)
def pytest_report_to_serializable(report) -> Generator[None, dict | None, dict | None]:
    """An xdist worker's report on its way to the controller: a :class:`SkipLocation` goes as the
    plain tuple pytest's skip reports carry (execnet serializes builtin types only: "can't
    serialize SkipLocation" crashed the worker); the controller's terminal and junitxml read it as
    any skip's."""
    data = yield
    if data is not None and isinstance(data.get("longrepr"), SkipLocation):
        data = {**data, "longrepr": tuple(data["longrepr"])}
    return data


def _carry(item: pytest.Item, rep: pytest.TestReport, kind: str, reason: str) -> None:
    """Put the settled outcome's reason on the call report (its kind is the ``outcome`` user
    property already) and place a skip it ended with at the line that judged the value that
    settled it (else at the test), not at this plugin."""
    setattr(rep, OUTCOME_REASON, reason)
    if rep.skipped and not hasattr(rep, "wasxfail"):
        where = item.stash[SCENARIO].judge.judged_at(kind)
        if where:
            path, line = where.rsplit(":", 1)
            rep.longrepr = SkipLocation((path, int(line), f"Skipped: {reason}"))
        else:
            test_path, test_line = item.reportinfo()[:2]
            rep.longrepr = SkipLocation((os.fspath(test_path), (test_line or 0) + 1, f"Skipped: {reason}"))


def settle(body: BaseException | None, sc: Scenario, item: pytest.Item) -> BaseException | None:
    """The one outcome policy, applied to every scenario whatever its body did: the exception
    the test ends with (None: it passes), given the one its body ended with (``body``).

    A body that failed keeps its failure. Otherwise — also when the body called
    ``pytest.skip``/``pytest.xfail`` after judging values — in this order:
    a dead recorder fails the test (``RecorderDied``); any failed value fails it, a known bug
    present although its fix should be in the cluster's patch too (``ExpectationFailed``, every
    value explained); a timing value that failed while the host was
    overloaded (:mod:`e2e.judge.pressure`) ends it **skipped**, reason ``inconclusive: host
    overloaded: …`` (shown as INCONCLUSIVE: an environment skip of its own, as a failure can no
    longer be told from starvation, not an expected failure); a value with nothing documented for this
    cluster ends it **skipped**, reason ``undocumented: …`` (shown as UNDOCUMENTED); a known
    bug's correct value on a patch no fix is known to reach ends it skipped, reason ``bug no longer present — fixed on this
    version? …`` (shown as BUG FIXED?); a value set aside for the environment ends it skipped
    (``environment: …``); a flake ends it xfailed (``flake: …``); else the body's own
    skip/xfail or pass stands — a pass with known bugs present marked so (``known_bug``
    property, allure label, terminal section). The outcome is the ``outcome`` user property
    (junit.xml, the reports) and the hidden allure label ``_outcome`` (``none`` when nothing was
    settled); its reason rides on the call report (:func:`e2e.report.summary.settled`).

    Whatever the outcome, a test with values that held an expectation not read in the cluster's
    version (``unverified-carried-forward``) carries the ``unverified`` user property (their list,
    :meth:`e2e.judge.measurements.Judge.carried_forward`) and the allure tag "unverified, carried
    forward", and is listed in a terminal section of its own.
    """
    carried = sc.judge.carried_forward()
    if carried is not None:
        item.user_properties.append((UNVERIFIED_PROPERTY, carried))
        allure.dynamic.tag("unverified, carried forward")
    if body is not None and not isinstance(body, (pytest.skip.Exception, pytest.xfail.Exception)):
        return body
    try:
        sc.recorder.check()
        sc.judge.verify()
    except (AssertionError, RecorderDied) as e:
        return e
    verdict = sc.judge.outcome()
    if verdict is None:
        return body
    kind, reason = verdict
    if verdict_row(kind).outcome == PASSED:  # a known bug present: a pass, marked so
        item.user_properties.append(("known_bug", reason))
        allure.dynamic.label("known_bug", "present")
        allure.dynamic.tag("known bug present")
        return body
    if body is not None:
        reason += f" (the test also said: {body})"
    item.user_properties.append((OUTCOME_PROPERTY, kind))
    item.stash[SETTLED] = (kind, reason)
    ends = outcome(verdict_row(kind).outcome).ends
    if ends == XFAIL:
        return pytest.xfail.Exception(reason)
    assert ends == SKIP, f"{kind}: the table ends it {ends!r}"  # a settling verdict ends its test skipped or xfailed
    return pytest.skip.Exception(reason)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    """Settle the outcome from the judged values (:func:`settle`), then show the record in the
    test's allure result (also when the body failed)."""
    sc = item.stash.get(SCENARIO, None)
    if sc is None:
        return (yield)
    body = None
    try:
        yield
    except BaseException as e:  # noqa: BLE001 - also Ctrl-C: the record is attached, the exception goes on (settle)
        body = e
    ending = settle(body, sc, item)
    # every scenario's allure result says whether an outcome was settled ("none": the body's own stands)
    allure.dynamic.label(ALLURE_OUTCOME, item.stash[SETTLED][0] if SETTLED in item.stash else "none")
    for name, value in sc.properties:
        item.user_properties.append((name, value))
        allure.dynamic.parameter(name, value)
    item.stash[FILES] = gather(sc, item.nodeid)
    published(item, item.stash[FILES])
    if ending is not None:
        raise ending


def _settled_as(report: pytest.TestReport, kind: str) -> bool:
    done = settled(report)
    return done is not None and done[0] == kind and report.skipped and not hasattr(report, "wasxfail")


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config):
    """A test skipped for undocumented values counts as ``undocumented`` (letter U) in the
    progress and the final line, apart from environment skips; one that measured a known bug's
    correct value as ``bug fixed?`` (letter B); one whose timing value failed under host overload
    as ``inconclusive`` (letter I); one that passed on a rerun after failing as ``flaky`` (letter
    F), never as passed."""
    done = settled(report)
    if done is None:
        return None
    for row in TERMINAL:  # the table's own statuses: the outcome property names its row
        if done[0] == row.prop and (report.passed if row.ends == PASS_MARKED else _settled_as(report, row.prop)):
            return row.name, row.letter, row.word
    return None


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    for row in TERMINAL:  # a section per own status, in the table's order
        reports = terminalreporter.stats.get(row.name, [])
        if reports:
            terminalreporter.section(row.section)
            for rep in reports:
                terminalreporter.line(f"{row.word} {rep.nodeid}: {(settled(rep) or ('', ''))[1]}")
    present = [(rep.nodeid, value) for rep in terminalreporter.stats.get(PASSED, []) if rep.when == "call"
               for name, value in rep.user_properties if name == "known_bug"]
    if present:
        terminalreporter.section("known upstream bugs present (today's documented behaviour: passed)")
        for nodeid, reason in present:
            terminalreporter.line(f"KNOWN BUG {nodeid}: {reason}")
    carried = [(rep.nodeid, value) for reports in terminalreporter.stats.values() for rep in reports
               if getattr(rep, "when", None) == "call"
               for name, value in getattr(rep, "user_properties", ()) if name == UNVERIFIED_PROPERTY]
    if carried:
        terminalreporter.section("values judged against expectations not read in this version's source "
                                 "(unverified-carried-forward: the newest documented value, not verified here)")
        for nodeid, reason in carried:
            terminalreporter.line(f"UNVERIFIED {nodeid}: {reason}")
