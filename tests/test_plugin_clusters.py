"""When the plugin lets go of a profile's cluster (e2e.plugin.clusters), through real pytest runs
(``pytester``) of the plugin with pytest-rerunfailures: a ``cluster`` fixture that records each
attempt in place of a real cluster, and a stand-in for the run's :class:`~e2e.plugin.clusters.Clusters`
that records each release."""

from __future__ import annotations

import pytest

from e2e.plugin import clusters

CONFTEST = '''
from pathlib import Path

import pytest

from e2e.plugin import clusters

EVENTS = Path(__file__).parent / "events.txt"


def record(event):
    with EVENTS.open("a") as f:
        f.write(event + "\\n")


class Released:
    """The run's Clusters as far as a profile's release goes."""

    def release(self, name, logs=None):
        record(f"release {name}")

    def release_rooms(self, logs=None):
        record("release rooms")


def pytest_configure(config):
    config.stash[clusters._CLUSTERS] = Released()


@pytest.fixture
def cluster(request):
    record(f"{request.node.name} attempt {getattr(request.node, 'execution_count', 1)}")
    yield
'''

TESTS = '''
import pytest

from e2e.base.waiting import WaitTimeout

FAILS = {fails}  # the first attempts of each test that fail
ATTEMPTS = {{}}


def fail_first(name):
    ATTEMPTS[name] = ATTEMPTS.get(name, 0) + 1
    if ATTEMPTS[name] <= FAILS:
        raise WaitTimeout("the pod to be Ready", 1.0)


@pytest.mark.profile("capped")
def test_a(cluster):
    fail_first("a")


@pytest.mark.profile("capped")
def test_b(cluster):
    fail_first("b")
'''


def _run(pytester, monkeypatch, tmp_path, tests: str, *args: str) -> pytest.RunResult:
    """A run of ``tests`` with a kind node image (no cluster is made: see module doc)."""
    monkeypatch.setattr(clusters, "_preflight", lambda config: None)
    monkeypatch.setattr(clusters, "STATE_DIR", tmp_path)  # the run-wide count of tests left
    monkeypatch.setattr(clusters, "owned_clusters", lambda run_id: [])
    monkeypatch.setattr(clusters.egress, "prepared", lambda: False)
    monkeypatch.setenv("E2E_RUN_ID", "run-released")
    (tmp_path / "runs").mkdir()
    pytester.mkdir("profiles").joinpath("capped.yaml").write_text("nodes: [{role: worker}]\n")
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_profile=tests)
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", "--node-image", "kindest/node:v1.37.2",
                                        "--reports-dir", str(tmp_path / "R"), *args)


def test_a_profile_s_cluster_lives_until_the_last_attempt_of_its_last_test(pytester, monkeypatch, tmp_path):
    """pytest-rerunfailures runs a failed test's setup, call and teardown again (its
    pytest_runtest_protocol, one ``runtestprotocol`` per attempt): each test of the profile counts
    once, after its last attempt, so that neither its rerun nor the profile's next test finds the
    cluster deleted."""
    result = _run(pytester, monkeypatch, tmp_path, TESTS.format(fails=1), "--reruns", "1")
    assert result.parseoutcomes() == {"flaky": 2, "rerun": 2}
    events = (pytester.path / "events.txt").read_text().splitlines()
    assert sorted(e for e in events if "attempt" in e) == ["test_a attempt 1", "test_a attempt 2",
                                                          "test_b attempt 1", "test_b attempt 2"]
    assert events == [*events[:4], "release capped"]  # once, after every attempt of both


def test_without_reruns_the_cluster_goes_right_after_its_profile_s_last_test(pytester, monkeypatch, tmp_path):
    result = _run(pytester, monkeypatch, tmp_path, TESTS.format(fails=0))
    assert result.parseoutcomes() == {"passed": 2}
    events = (pytester.path / "events.txt").read_text().splitlines()
    assert sorted(e for e in events if "attempt" in e) == ["test_a attempt 1", "test_b attempt 1"]
    assert events == [*events[:2], "release capped"]
