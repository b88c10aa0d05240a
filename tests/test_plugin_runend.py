"""e2e.plugin.runend: the run's end is one pytest_sessionfinish that runs its named steps in their
listed order, in the controller (the workers stop taking signals and finish), and a failing step
skips only the steps that need it (pytester runs in a process of their own: the steps' real
functions are watched there, in the order they are called)."""

from __future__ import annotations

import pytest

from e2e.plugin.runend import PYTEST_FINISH, STEPS

# Watches each step's real function (e2e.plugin.clusters, RunSummary, RerunAttempts,
# StagedReports): one line per call, "<process>:<step>", into $CALLS; the step named $FAIL raises
# once called. The conftest's own pytest_sessionfinish is part of pytest_finish.
CONFTEST = '''
import os

import pytest

from e2e.cli import htmlreport
from e2e.plugin import clusters
from e2e.plugin.options import StagedReports
from e2e.plugin.outcomes import RerunAttempts
from e2e.report.summary import RunSummary

clusters._preflight = lambda config: None  # the --kubeconfig below names no cluster
htmlreport.have_node = lambda: False  # the plain HTML page: fast and offline


def _process():
    return os.environ.get("PYTEST_XDIST_WORKER", "controller")


def _called(name):
    with open(os.environ["CALLS"], "a") as f:
        f.write(f"{_process()}:{name}\\n")
    if os.environ.get("FAIL") == name:
        raise RuntimeError(f"{name} failed here")


def _watch(name, real):
    def watched(*args, **kwargs):
        _called(name)
        return real(*args, **kwargs)
    return watched


for _name in ("export_logs", "release_clusters", "remove_lock_files"):
    setattr(clusters, _name, _watch(_name, getattr(clusters, _name)))
RunSummary.stamp_junit = _watch("stamp_junit", RunSummary.stamp_junit)
RerunAttempts.fold = _watch("fold_reruns", RerunAttempts.fold)
StagedReports.publish = _watch("publish_reports", StagedReports.publish)
StagedReports.build_html = _watch("build_html", StagedReports.build_html)


def pytest_sessionfinish(session):
    stop = session.config.pluginmanager.get_plugin("e2e-signals")
    _called("signals_stopped" if stop.stopping else "signals_taken")
    _called("pytest_finish")


class Said:
    """The outermost finish: what RunEnd did, also when the finish raised (then pytest skips its unconfigure)."""

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_sessionfinish(self, session):
        try:
            return (yield)
        finally:
            config = session.config
            end = config.pluginmanager.get_plugin("e2e-run-end")
            hooks = [i.plugin_name for i in config.hook.pytest_sessionfinish.get_hookimpls()
                     if (getattr(i.plugin, "__module__", None) or i.plugin.__name__).startswith("e2e.")]
            with open(os.environ["CALLS"], "a") as f:
                f.write(f"{_process()}:ran {' '.join(end.ran)}\\n")
                f.write(f"{_process()}:skipped {' '.join(end.skipped)}\\n")
                f.write(f"{_process()}:hooks {' '.join(hooks)}\\n")


def pytest_configure(config):
    config.pluginmanager.register(Said(), "said")
'''

# the steps of the controller, as each is called (signals stopped before pytest's own finish)
CONTROLLER = ["signals_stopped", "pytest_finish", "export_logs", "release_clusters", "remove_lock_files",
              "stamp_junit", "fold_reruns", "publish_reports", "build_html"]


def _end(pytester, tmp_path, monkeypatch, *args, fail=None):
    """Run one passing test with a (never dialled) cluster and --reruns; the lines of $CALLS by
    process, and the run's result."""
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_one="def test_ok():\n    assert True\n")
    calls, kubeconfig = tmp_path / "calls", tmp_path / "kubeconfig"
    kubeconfig.write_text("")
    monkeypatch.setenv("CALLS", str(calls))
    monkeypatch.setenv("E2E_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("E2E_RUN_ID", raising=False)
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # when make test runs this under xdist
    if fail:
        monkeypatch.setenv("FAIL", fail)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--kubeconfig", str(kubeconfig), "--keep-cluster",
                                           "--reports-dir", str(tmp_path / "R"), "--reruns", "1", *args, timeout=180)
    by: dict[str, list[str]] = {}
    for line in calls.read_text().splitlines():
        process, step = line.split(":", 1)
        by.setdefault(process, []).append(step)
    return by, result


def test_the_steps_run_in_their_listed_order_in_the_controller_and_workers_only_stop_signals(pytester, tmp_path, monkeypatch):
    by, result = _end(pytester, tmp_path, monkeypatch, "-n", "1")
    result.assert_outcomes(passed=1)
    # the controller: every step, in the order of STEPS; the plugin's only pytest_sessionfinish is RunEnd's
    assert by["controller"] == [*CONTROLLER, f"ran {' '.join(s.name for s in STEPS)}", "skipped ", "hooks e2e-run-end"]
    # an xdist worker stops taking signals before pytest's own finish, and does nothing else of the end
    assert by["gw0"] == ["signals_stopped", "pytest_finish", f"ran stop_signals {PYTEST_FINISH}", "skipped ",
                         "hooks e2e-run-end"]
    assert (tmp_path / "R" / "junit.xml").is_file()  # published


@pytest.mark.parametrize(("fail", "skipped"), [
    # pytest's or another plugin's finish failed: no cluster step, no junit step; the reports are published
    ("pytest_finish", ["export_logs", "release_clusters", "remove_lock_files", "stamp_junit", "fold_reruns"]),
    # a failed export (a Ctrl-C while exporting) still releases the clusters and removes the lock files
    ("export_logs", ["stamp_junit", "fold_reruns"]),
    ("remove_lock_files", ["stamp_junit", "fold_reruns"]),
    ("stamp_junit", ["fold_reruns"]),
    # the HTML report is built from the published results only
    ("publish_reports", ["build_html"]),
])
def test_a_failing_step_skips_only_the_steps_that_need_it(pytester, tmp_path, monkeypatch, fail, skipped):
    by, result = _end(pytester, tmp_path, monkeypatch, fail=fail)
    called = [s for s in CONTROLLER if s not in skipped]
    assert by["controller"][:len(called)] == called
    assert by["controller"][len(called) + 1] == f"skipped {' '.join(skipped)}"
    # the failure is not swallowed: the run says it and does not pass
    assert f"RuntimeError: {fail} failed here" in result.stderr.str() + result.stdout.str()
    assert result.ret != 0
