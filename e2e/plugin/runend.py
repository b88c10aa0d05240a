"""The end of a run: one object, :class:`RunEnd`, owns it. Registered in ``pytest_configure`` of
every process (as pytest-xdist registers its ``DSession``), it has the plugin's only
``pytest_sessionfinish``, which runs the named steps of :data:`STEPS` in their listed order:

1. ``stop_signals`` (every process): a Ctrl-C or SIGTERM from now on is said and ignored
   (:class:`e2e.plugin.signals.Stop`).
2. ``pytest_finish`` (every process): pytest's and the other plugins' own ``pytest_sessionfinish``
   — the session's fixtures torn down, junit.xml written, xdist's workers ended.
3. ``export_logs``: the kind logs of the run's clusters when something failed
   (:func:`e2e.plugin.clusters.export_logs`).
4. ``release_clusters``: the run's clusters deleted, its namespaces swept, the egress guard removed
   with the last cluster (:func:`e2e.plugin.clusters.release_clusters`).
5. ``remove_lock_files``: the lock files the run made, once nobody holds them
   (:func:`e2e.plugin.clusters.remove_lock_files`).
6. ``stamp_junit``: junit.xml's tests stopped before any report marked interrupted, the run id
   stamped (:meth:`e2e.report.summary.RunSummary.stamp_junit`).
7. ``fold_reruns``: with ``--reruns``, junit.xml's rerun attempts folded into their test
   (:meth:`e2e.plugin.outcomes.RerunAttempts.fold`).
8. ``publish_reports``: the staged reports replace the last run's
   (:meth:`e2e.plugin.options.StagedReports.publish`).
9. ``build_html``: the run's HTML report (:meth:`e2e.plugin.options.StagedReports.build_html`).

Steps 3-9 run in the controller only (an xdist worker has steps 1-2; a run without xdist is its
own controller); a step whose part is not in the run (no ``--reruns``, no cluster) has nothing to
do. The terminal summary (summary.md) follows, in pytest's terminal reporter.

A step that raises does not stop the others, except those that :attr:`Step.needs` it: a step is
skipped when a step it needs failed or was skipped. This is the run's end as its five hooks had it
before (issue 43; measured on main at c20f2d4, each step made to fail): a failed ``pytest_finish``
skips steps 3-7; a failed export still releases the clusters (a Ctrl-C while exporting, say), a
failed release still removes the lock files; a failure in 3-5 skips the junit steps; the reports are published whatever failed before, and the HTML
report needs them published. The last failure is raised once every step had its turn.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass

import pytest

from . import clusters
from .options import RUN_SUMMARY, STAGED_REPORTS, StagedReports, _is_controller
from .outcomes import RERUN_ATTEMPTS, RerunAttempts
from .signals import SIGNALS, Stop
from ..report.summary import RunSummary

# the name of the :class:`RunEnd` plugin (``config.pluginmanager.get_plugin``)
RUN_END = "e2e-run-end"
# the step that is pytest's and the other plugins' own pytest_sessionfinish (RunEnd's hook wraps them)
PYTEST_FINISH = "pytest_finish"


@dataclass(frozen=True)
class Step:
    """One step of the run's end: its ``name``, what it does (``run``, given the :class:`RunEnd`
    and the session; None for :data:`PYTEST_FINISH`), whether it runs in xdist workers too, and
    the earlier steps it ``needs`` (one of them failed or skipped: this one is skipped)."""

    name: str
    run: Callable[[RunEnd, pytest.Session], None] | None
    every_process: bool = False
    needs: tuple[str, ...] = ()


def _stop_signals(end: RunEnd, session: pytest.Session) -> None:
    stop = session.config.pluginmanager.get_plugin(SIGNALS)  # none outside the main thread
    if isinstance(stop, Stop):
        stop.stopping = True


def _export_logs(end: RunEnd, session: pytest.Session) -> None:
    clusters.export_logs(session, end.exitstatus)


def _release_clusters(end: RunEnd, session: pytest.Session) -> None:
    clusters.release_clusters(session)


def _remove_lock_files(end: RunEnd, session: pytest.Session) -> None:
    clusters.remove_lock_files(session.config)


def _stamp_junit(end: RunEnd, session: pytest.Session) -> None:
    summary = session.config.pluginmanager.get_plugin(RUN_SUMMARY)  # none with --collect-only
    if isinstance(summary, RunSummary):
        summary.stamp_junit(session)


def _fold_reruns(end: RunEnd, session: pytest.Session) -> None:
    attempts = session.config.pluginmanager.get_plugin(RERUN_ATTEMPTS)  # with --reruns only
    if isinstance(attempts, RerunAttempts):
        attempts.fold()


def _publish_reports(end: RunEnd, session: pytest.Session) -> None:
    staged = session.config.pluginmanager.get_plugin(STAGED_REPORTS)  # a run with a cluster only
    if isinstance(staged, StagedReports):
        staged.publish()


def _build_html(end: RunEnd, session: pytest.Session) -> None:
    staged = session.config.pluginmanager.get_plugin(STAGED_REPORTS)
    if isinstance(staged, StagedReports):
        staged.build_html(session)


_CLUSTERS = ("export_logs", "release_clusters", "remove_lock_files")

# the steps of the run's end, in their order (module doc)
STEPS: tuple[Step, ...] = (
    Step("stop_signals", _stop_signals, every_process=True),
    Step(PYTEST_FINISH, None, every_process=True),
    Step("export_logs", _export_logs, needs=(PYTEST_FINISH,)),
    Step("release_clusters", _release_clusters, needs=(PYTEST_FINISH,)),
    Step("remove_lock_files", _remove_lock_files, needs=(PYTEST_FINISH,)),
    Step("stamp_junit", _stamp_junit, needs=(PYTEST_FINISH, *_CLUSTERS)),
    Step("fold_reruns", _fold_reruns, needs=(PYTEST_FINISH, *_CLUSTERS, "stamp_junit")),
    Step("publish_reports", _publish_reports),
    Step("build_html", _build_html, needs=("publish_reports",)),
)


class RunEnd:
    """The plugin part that ends the run (module doc). After the finish, :attr:`ran`,
    :attr:`skipped` and :attr:`failed` say what each step of this process did."""

    def __init__(self, config: pytest.Config, steps: tuple[Step, ...] = STEPS) -> None:
        self.steps = tuple(s for s in steps if s.every_process or _is_controller(config))
        self.exitstatus: int = 0  # the session's exit status as the finish began
        self.ran: list[str] = []
        self.skipped: list[str] = []
        self.failed: dict[str, BaseException] = {}

    # the innermost wrapper: its part before the yield runs before every plugin's plain
    # pytest_sessionfinish, its part after once they are all done (junit.xml written, xdist's
    # workers ended), before the outer wrappers' (the terminal summary, xdist's "worker finished")
    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> Generator[None, None, None]:
        self.exitstatus = session.exitstatus
        for step in self.steps:
            if any(n in self.failed or n in self.skipped for n in step.needs):
                self.skipped.append(step.name)
                continue
            try:
                if step.run is None:
                    yield
                else:
                    step.run(self, session)
            except BaseException as e:  # noqa: BLE001 - raised once every step had its turn
                self.failed[step.name] = e
            else:
                self.ran.append(step.name)
        if self.failed:
            raise list(self.failed.values())[-1]


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(RunEnd(config), RUN_END)
