"""e2e.plugin.signals: SIGTERM stops a run as Ctrl-C does, and a second Ctrl-C or SIGTERM cannot cut
the cleanup short (pytester runs in a process of their own: the signals are real)."""

from __future__ import annotations

import signal
import subprocess
import sys

from pathlib import Path

import pytest

CONFTEST = '''
import os
import signal
import time

import subprocess
import sys

import pytest


@pytest.fixture
def cleanup(tmp_path_factory):
    yield
    if os.environ.get("SECOND_SIGNAL"):  # a second one while the cleanup runs
        os.kill(os.getpid(), getattr(signal, os.environ["SECOND_SIGNAL"]))
        time.sleep(0.5)
    with open(os.environ["CLEANED"], "w") as f:
        f.write("cleaned up")
'''

TEST = '''
import os
import signal
import time


def test_stopped(cleanup):
    if os.environ["FIRST_SIGNAL"] == "KeyboardInterrupt":  # a Ctrl-C held back, then raised
        raise KeyboardInterrupt
    os.kill(os.getpid(), getattr(signal, os.environ["FIRST_SIGNAL"]))
    time.sleep(30)
'''


@pytest.fixture
def run(pytester, tmp_path, monkeypatch):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_stop=TEST)
    cleaned = tmp_path / "cleaned"
    monkeypatch.setenv("CLEANED", str(cleaned))

    def go(first: str, second: str | None = None):
        monkeypatch.setenv("FIRST_SIGNAL", first)
        if second:
            monkeypatch.setenv("SECOND_SIGNAL", second)
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=120)
        return result, cleaned.read_text() if cleaned.exists() else None

    return go


def test_sigterm_stops_the_run_with_its_cleanup(run):
    """issue 30 (4): SIGTERM killed the run without any cleanup (clusters, namespaces, junit left)."""
    result, cleaned = run("SIGTERM")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert cleaned == "cleaned up"
    result.stderr.fnmatch_lines(["pod-lifecycle-e2e: SIGTERM: stopping as after Ctrl-C, with the cleanup"])


@pytest.mark.parametrize("first, second", [("SIGINT", "SIGINT"), ("SIGINT", "SIGTERM"), ("SIGTERM", "SIGINT"),
                                           ("KeyboardInterrupt", "SIGINT")])
def test_a_second_signal_does_not_cut_the_cleanup_short(run, first, second):
    """issue 30 (3): a second Ctrl-C during the cleanup interrupted it (a cluster, namespaces and
    state files left, no junit.xml)."""
    result, cleaned = run(first, second)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert cleaned == "cleaned up"
    result.stderr.fnmatch_lines([f"pod-lifecycle-e2e: {second} ignored while cleaning up *"])


def test_with_xdist_a_second_ctrl_c_does_not_skip_the_controllers_finish(pytester, tmp_path):
    """issue 30 (3): with xdist a second Ctrl-C escaped the workers' teardown in the controller,
    whose session finish (the run's clusters and state files) then never ran. Ctrl-C as a terminal
    sends it: to every process of the run (a session of its own here, not pytest's)."""
    pytester.makeconftest(f'''
import os
import signal
import time

import subprocess
import sys

import pytest


@pytest.fixture
def cleanup():
    yield
    os.killpg(0, signal.SIGINT)  # the second Ctrl-C
    time.sleep(1)
    with open({str(tmp_path / "worker")!r}, "w") as f:
        f.write("cleaned up")


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    if not hasattr(session.config, "workerinput"):
        with open({str(tmp_path / "controller")!r}, "w") as f:
            f.write("finished")
''')
    pytester.makepyfile(test_stop='''
import os
import signal
import time


def test_stopped(cleanup):
    os.killpg(0, signal.SIGINT)  # the first Ctrl-C
    time.sleep(30)
''')
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "1"], cwd=pytester.path,
                         capture_output=True, text=True, timeout=120, start_new_session=True)
    assert run.returncode == pytest.ExitCode.INTERRUPTED, run.stdout + run.stderr
    assert (tmp_path / "worker").read_text() == "cleaned up"
    assert (tmp_path / "controller").read_text() == "finished"


def test_the_runs_namespaces_left_on_a_kept_cluster_it_used_are_swept_at_the_end(pytester, monkeypatch, tmp_path):
    """make interrupt-check (SIGINT to the group of a `-n 2` run on a kept cluster of an earlier
    run, as its namespace appeared): xdist ended the worker before its teardown and the namespace
    stayed — the run's end swept only the clusters it had created. Now every cluster it used."""
    from e2e.plugin import clusters

    deleted = []

    class LeftBehind:
        """The kept cluster, with a namespace of this run a stopped worker left."""

        def __init__(self, kubeconfig, context=None):
            self.kubeconfig = kubeconfig

        def namespaces_of_run(self, run_id):
            return [f"e2e-left-{run_id}"]

        def delete_namespace(self, name):
            deleted.append((Path(self.kubeconfig).name, name))

    monkeypatch.setattr(clusters, "_preflight", lambda config: None)
    monkeypatch.setattr(clusters, "STATE_DIR", tmp_path)
    monkeypatch.setattr(clusters, "owned_clusters", lambda run_id: [])
    monkeypatch.setattr(clusters, "Kube", LeftBehind)
    monkeypatch.setattr(clusters.egress, "prepared", lambda: False)
    monkeypatch.setenv("E2E_RUN_ID", "run-kept")
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "run-kept.used.json").write_text('["ple2e-kept", "ple2e-gone"]')  # written by the workers
    (tmp_path / "ple2e-kept.kubeconfig").write_text("")
    pytester.makepyfile(test_one="def test_ok():\n    pass\n")
    result = pytester.runpytest_inprocess("--node-image", "kindest/node:v1.37.2", "--reports-dir", str(tmp_path / "R"))
    result.assert_outcomes(passed=1)
    assert deleted == [("ple2e-kept.kubeconfig", "e2e-left-run-kept")]  # not the one whose kubeconfig is gone
    assert not (tmp_path / "runs" / "run-kept.used.json").exists()


def test_the_runs_namespaces_left_on_a_kubeconfig_cluster_are_swept_at_the_end(pytester, monkeypatch, tmp_path):
    """issue 30 (3, 4): xdist ends a worker not done within seconds of a Ctrl-C or SIGTERM, before
    its tests' teardown; on a --kubeconfig cluster (a user's own) their namespaces stayed."""
    from e2e.plugin import clusters

    deleted = []

    class LeftBehind:
        """The --kubeconfig cluster, with a namespace of this run a killed worker left."""

        def __init__(self, kubeconfig, context=None):
            pass

        def namespaces_of_run(self, run_id):
            return [f"e2e-left-{run_id}"]

        def delete_namespace(self, name):
            deleted.append(name)

    monkeypatch.setattr(clusters, "_preflight", lambda config: None)
    monkeypatch.setattr(clusters, "Kube", LeftBehind)
    monkeypatch.setenv("E2E_RUN_ID", "run-swept")
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("")
    pytester.makepyfile(test_one="def test_ok():\n    pass\n")
    result = pytester.runpytest_inprocess("--kubeconfig", str(kubeconfig), "--reports-dir", str(tmp_path / "R"))
    result.assert_outcomes(passed=1)
    assert deleted == ["e2e-left-run-swept"]
    deleted.clear()
    result = pytester.runpytest_inprocess("--kubeconfig", str(kubeconfig), "--reports-dir", str(tmp_path / "R"),
                                          "--keep-namespaces")
    assert deleted == []


@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM"])
def test_a_signal_during_the_runs_finish_does_not_cut_it_short(pytester, tmp_path, monkeypatch, signame):
    """A first Ctrl-C or SIGTERM after the last test, while the session's finish deleted the run's
    clusters (e2e.plugin.clusters, trylast) and published its reports, raised KeyboardInterrupt
    there: a traceback, exit 130, the cluster, its state files and the staged junit.xml left."""
    cleaned = tmp_path / "cleaned"
    monkeypatch.setenv("CLEANED", str(cleaned))
    monkeypatch.setenv("SIGNAL", signame)
    pytester.makeconftest('''
import os
import signal
import time

import pytest


@pytest.hookimpl(trylast=True)  # where the run's own finish deletes its clusters
def pytest_sessionfinish(session):
    os.kill(os.getpid(), getattr(signal, os.environ["SIGNAL"]))
    time.sleep(0.5)
    with open(os.environ["CLEANED"], "w") as f:
        f.write("cleaned up")
''')
    pytester.makepyfile(test_one="def test_ok():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=120)
    assert result.ret == pytest.ExitCode.OK  # every test ran: its outcome stands
    assert cleaned.read_text() == "cleaned up"
    result.stderr.fnmatch_lines([f"pod-lifecycle-e2e: {signame} ignored while cleaning up *"])


def test_ctrl_c_while_pytest_starts_is_one_line_not_a_traceback(tmp_path):
    """issue 30 (10), the bad-input table's "Ctrl-C in the first second of make e2e": before
    pytest_cmdline_main (pytest loading the plugin, importing the kubernetes client) a Ctrl-C was
    a 60-line traceback. A conftest that sends itself SIGINT while pytest loads it stands for it."""
    (tmp_path / "conftest.py").write_text("import os, signal\nos.kill(os.getpid(), signal.SIGINT)\n")
    (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", str(tmp_path)], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120, preexec_fn=_sigint_default)
    assert r.returncode == 130, r.stderr
    assert "Traceback" not in r.stderr + r.stdout
    assert r.stderr.strip() == ("pod-lifecycle-e2e: Ctrl-C while pytest started (imports, options): stopped before "
                                "anything was created or run; nothing to clean up")


def _sigint_default() -> None:
    # a background shell (make test from one) starts its children with SIGINT ignored
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_a_signal_during_pytests_last_cleanups_is_ignored_too(tmp_path):
    """make interrupt-check run 11 (--kubeconfig, Ctrl-C twice): the second SIGINT came after
    pytest_unconfigure had given the handlers back, during pytest's own last cleanup (a garbage
    collection): a traceback and exit -2 for a run whose tests had passed. A cleanup of the
    conftest's (it runs before the suite's last one) sends itself SIGINT there."""
    (tmp_path / "conftest.py").write_text(
        "import os, signal, time\n"
        "def pytest_configure(config):\n"
        "    config.add_cleanup(lambda: (os.kill(os.getpid(), signal.SIGINT), time.sleep(0.5)))\n")
    (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", str(tmp_path)], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120, preexec_fn=_sigint_default)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Traceback" not in r.stderr and "KeyboardInterrupt" not in r.stderr
    assert "SIGINT ignored while cleaning up" in r.stderr
