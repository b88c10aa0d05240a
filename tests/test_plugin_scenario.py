"""The plugin's real ``scenario`` fixture (namespace, recorder, judge, reports, artifacts) in real
pytest sessions (``pytester``), on a cluster that answers without being there: what a test body
reports — judged values, preconditions, notes, files — ends up where the plugin says."""

from __future__ import annotations

import base64
import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PIL import Image

from e2e.judge.pressure import LIMIT_ENV
from e2e.plugin import clusters, fixtures
from e2e.record.recorder import load_changes

CONFTEST = '''
import pytest
from e2e.plugin import clusters, fixtures


class FakeRecorder:
    """Records nothing and never dies (the plugin builds it with the API client, namespace, kinds);
    ``ctrl_c_on_start``: its start is interrupted."""

    ctrl_c_on_start = False

    def __init__(self, api_client, namespace, kinds):
        self.kinds, self.started_at, self.errors = tuple(kinds), 0.0, []

    def start(self):
        if self.ctrl_c_on_start:
            raise KeyboardInterrupt

    def stop(self):
        pass

    def changes(self, kind=None, name=None):
        return []

    def latest(self, kind, name):
        return None

    def check(self, since=None):
        pass


class FakeKube:
    """Namespaces that are created and deleted; nothing in them. ``ctrl_c_after_create``: Ctrl-C
    lands while the created namespace's default ServiceAccount is awaited."""

    api_client = None
    namespaces = []
    ctrl_c_after_create = False

    def create_namespace(self, name, labels):
        self.namespaces.append(name)
        if self.ctrl_c_after_create:
            raise KeyboardInterrupt

    def pods(self, namespace):
        return []

    events = pods

    def release_finalizers(self, namespace, kinds):
        return []

    def delete_namespace(self, namespace):
        if namespace in self.namespaces:  # as the real one: a namespace that is not there is no error
            self.namespaces.remove(namespace)


def pytest_unconfigure():
    print(f"namespaces left: {FakeKube.namespaces}")


fixtures.Recorder = FakeRecorder


@pytest.fixture
def cluster(tmp_path_factory, monkeypatch):
    monkeypatch.setattr(clusters, "STATE_DIR", tmp_path_factory.mktemp("state"))
    return clusters.ClusterInfo(FakeKube(), "v1.37.2", 37, 1, None)
'''


@pytest.fixture
def run(pytester, tmp_path, monkeypatch):
    monkeypatch.setattr(clusters, "_preflight", lambda config: None)  # the cluster below is never dialled
    monkeypatch.setattr(fixtures, "Recorder", fixtures.Recorder)  # the conftest replaces it for the run
    monkeypatch.setenv(LIMIT_ENV, "1")  # the real host's load never sets a value aside here
    pytester.makeconftest(CONFTEST)
    reports, kubeconfig = tmp_path / "reports", tmp_path / "kubeconfig"
    kubeconfig.write_text("")

    def go(body: str, **kwargs):
        pytester.makepyfile(test_case="import pytest\n\n" + body)
        result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-rA", "--kubeconfig", str(kubeconfig),
                                              "--reports-dir", str(reports), **kwargs)
        return result, reports

    return go


def _artifacts(reports) -> list:
    return sorted(p for p in reports.glob("*/*/") if p.is_dir() and p.name != "allure-results")


def test_a_failed_value_leaves_artifacts_that_explain_it(run):
    result, reports = run('''
@pytest.mark.case("CL-1")
def test_gap(scenario):
    scenario.add_file("note.txt", lambda: "read at the end")
    scenario.expect("CL-1", "restart_gap[1]", 25.0)
''')
    result.assert_outcomes(failed=1)
    (folder,) = _artifacts(reports)
    files = {p.name for p in folder.iterdir()}
    assert {"failure.txt", "measurements.txt", "timeline.txt", "recording.json.gz", "note.txt"} <= files
    assert "CL-1 restart_gap[1]: measured 25 s" in (folder / "failure.txt").read_text()
    assert (folder / "note.txt").read_text() == "read at the end"  # a callable, read when gathered
    (m,) = json.loads((reports / "measurements.json").read_text())["measurements"]
    assert (m["case"], m["name"], m["value"], m["verdict"]) == ("CL-1", "restart_gap[1]", 25.0, "fail")


def test_a_passing_test_leaves_its_files_and_measurements(run):
    result, reports = run('''
def test_gap(scenario):
    scenario.expect("CL-1", "restart_gap[1]", 12.0)
''')
    result.assert_outcomes(passed=1)
    (folder,) = _artifacts(reports)
    assert {"timeline.txt", "measurements.txt", "recording.json.gz"} <= {p.name for p in folder.iterdir()}
    assert not (folder / "failure.txt").exists()
    (m,) = json.loads((reports / "measurements.json").read_text())["measurements"]
    assert m["verdict"] == "pass"


RECORDING = Path(__file__).resolve().parent / "data" / "cl1-v1.37.2-recording.json"


def test_a_test_weighs_little_in_the_html_report_its_files_lie_beside_it(run):
    """issue 29 (6): the single-file HTML report of one default run (91 tests) weighed 57 MB — every
    test's recording (23 MB in all), its picture twice (attached, and inline in the description),
    pod YAML with managedFields, logs, all inlined (base64). It is to open on a laptop and travel as
    a CI artifact: <= 10 MB. The Allure app takes 3.7 MB of it, so ~70 KB per test are left, of which
    base64 and Allure's own fields take a third: a test's allure results stay within 40 KiB. What a
    reader reads is in the report (docstring, picture, every judged value); the test's files —
    the recording compressed — are in its folder beside the report, which the description names."""
    result, reports = run(f'''
from e2e.record.recorder import load_changes

CHANGES = load_changes("{RECORDING}")
POD = [c.obj for c in CHANGES if c.kind == "Pod"][-1]


@pytest.mark.case("CL-1")
def test_backoff(scenario):
    """CL-1: the back-off between restarts doubles."""
    scenario.recorder.changes = lambda kind=None, name=None: CHANGES
    scenario.t0 = CHANGES[0].received_at
    # as the API returns a pod: with managedFields
    pod = {{**POD, "metadata": {{**POD["metadata"], "managedFields": [{{"manager": "kubelet", "fieldsV1": {{"f:status": {{}}}}}}] * 20}}}}
    scenario.kube.pods = lambda namespace: [pod]
    scenario.kube.logs = lambda namespace, name, container, previous=False: "exit 1\\n" * 50
    for i, gap in enumerate((0.0, 11.0, 21.0, 41.0)):
        scenario.expect("CL-1", f"restart_gap[{{i}}]", gap)
''')
    result.assert_outcomes(passed=1)
    (res,) = [json.loads(p.read_text()) for p in (reports / "allure-results").glob("*-result.json")]
    in_report = sum(p.stat().st_size for p in (reports / "allure-results").iterdir())
    assert in_report <= 40 * 1024, f"{in_report} bytes of allure results for one test"
    # the picture: inline in the description, 256 colours, a laptop column wide
    (data,) = re.findall(r'<img alt="timeline.png"[^>]*src="data:image/png;base64,([^"]+)"', res["descriptionHtml"])
    picture = Image.open(io.BytesIO(base64.b64decode(data)))
    assert picture.mode == "P" and picture.width <= 1000
    # every file in the test's folder, named in the description; the recording compressed
    (folder,) = _artifacts(reports)
    assert f"{folder.parent.name}/{folder.name}/" in res["descriptionHtml"]
    assert len(load_changes(folder / "recording.json.gz")) == len(load_changes(RECORDING))
    assert "managedFields" not in (folder / "pods.yaml").read_text()  # as kubectl get -o yaml shows a pod
    assert {"timeline.txt", "timeline.png", "events.txt", "measurements.txt"} <= {p.name for p in folder.iterdir()}
    # the plain page (no Node.js) shows the picture too
    assert 'alt="timeline.png" src="data:image/png;base64,' in (reports / "summary.html").read_text()


def test_a_precondition_failure_says_so_and_is_not_a_verdict(run):
    result, reports = run('''
def test_needs_a_pod(scenario):
    scenario.require([], "the Job created a pod")
''')
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*PreconditionFailed: precondition failed: the Job created a pod*"])
    assert not (reports / "measurements.json").exists() or not json.loads((reports / "measurements.json").read_text())["measurements"]


def test_notes_are_junit_properties_of_the_test(run):
    result, reports = run('''
def test_env(scenario):
    scenario.note("cgroup", "v1")
    pytest.skip("environment: not on this node")
''')
    result.assert_outcomes(skipped=1)
    (case,) = ET.parse(reports / "junit.xml").getroot().iter("testcase")
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert props["cgroup"] == "v1" and props["kubernetes"] == "v1.37.2"


def test_the_bodys_own_skip_and_xfail_stand_when_the_values_hold(run):
    result, _ = run('''
def test_skips(scenario):
    scenario.expect("CL-1", "restart_gap[1]", 12.0)
    pytest.skip("nothing more to see")


def test_xfails(scenario):
    scenario.expect("CL-1", "restart_gap[1]", 12.0)
    pytest.xfail("known to race")
''')
    result.assert_outcomes(skipped=1, xfailed=1)


def test_the_namespace_is_deleted_after_a_failure(run, pytester):
    result, _ = run('''
from conftest import FakeKube


def test_fails(scenario):
    assert scenario.namespace in FakeKube.namespaces
    raise RuntimeError("the body broke")


def test_after(scenario):
    assert FakeKube.namespaces == [scenario.namespace]  # the failed test's namespace is gone
''')
    result.assert_outcomes(failed=1, passed=1)


def test_the_host_pressure_of_each_value_and_the_tests_cost_are_recorded(run):
    """The ``host_load`` fixture samples this host's real /proc (PSI here, or load and steal):
    every judged value carries its window's pressure and the limit (``E2E_PRESSURE_LIMIT=1`` here:
    never beyond it), and the test's cost goes to durations.json."""
    result, reports = run('''
def test_gap(scenario):
    scenario.expect("CL-1", "restart_gap[1]", 25.0)
''')
    result.assert_outcomes(failed=1)
    (m,) = json.loads((reports / "measurements.json").read_text())["measurements"]
    host = m["details"]["host"]
    assert m["verdict"] == "fail" and host["limit"] == 1 and (host["pressure"] is None or 0 <= host["pressure"] <= 1)
    (nodeid, cost), = json.loads((reports / "durations.json").read_text()).items()
    assert nodeid.endswith("test_case.py::test_gap") and set(cost) == {"wall_s", "cpu_s", "pressure", "run_id"}
    assert cost["wall_s"] >= 0 and cost["cpu_s"] >= 0


def test_a_cpu_hog_makes_a_failed_timing_value_inconclusive(run, pytester, monkeypatch):
    """The whole chain with a fake /proc/pressure/cpu that a CPU hog keeps at 95 %, each reading
    5 s after the one before: the scenario's judge reads it from the start of the test, the test
    ends INCONCLUSIVE, durations.json has the pressure."""
    pytester.makeconftest(CONFTEST + '''

import time

from e2e.record.hostload import HostLoad, PsiCounter

SHIFT = [0.0]
BASE = time.time()


def clock():
    return time.time() + SHIFT[0]


def read(path):
    SHIFT[0] += 5
    return f"some avg10=95.00 avg60=95.00 avg300=95.00 total={round((clock() - BASE) * 0.95 * 1e6)}\\n"


@pytest.fixture(scope="session")
def host_load():
    host = HostLoad(PsiCounter(read), clock=clock).start()
    yield host
    host.stop()
''')
    monkeypatch.delenv(LIMIT_ENV)  # the documented limit
    result, reports = run('''
def test_gap(scenario):
    scenario.expect("CL-1", "restart_gap[1]", 25.0)
''')
    result.assert_outcomes(passed=0, failed=0, skipped=0)
    result.stdout.fnmatch_lines(["INCONCLUSIVE *test_case.py::test_gap: inconclusive: host overloaded: *CPU pressure 95 %*",
                                 "*= 1 inconclusive in *"])
    (m,) = json.loads((reports / "measurements.json").read_text())["measurements"]
    assert m["verdict"] == "inconclusive" and m["details"]["host"]["pressure"] == 0.95
    ((nodeid, cost),) = json.loads((reports / "durations.json").read_text()).items()
    assert nodeid.endswith("test_case.py::test_gap") and cost["pressure"] == 0.95


@pytest.mark.parametrize("fake", ["FakeKube.ctrl_c_after_create", "FakeRecorder.ctrl_c_on_start"])
def test_ctrl_c_while_the_namespace_is_set_up_deletes_it(run, fake):
    """issue 30 (2): Ctrl-C while the namespace's default ServiceAccount was awaited or the recorder
    started landed before the cleanup was armed: the namespace stayed (on a kept or --kubeconfig
    cluster, for good)."""
    result, _ = run(f'''
from conftest import FakeKube, FakeRecorder

{fake} = True


def test_never_starts(scenario):
    pass
''', no_reraise_ctrlc=True)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["namespaces left: []"])


def test_pods_deleted_before_the_end_leave_their_last_recorded_state(run):
    """Trial 5: a test whose pods were deleted before its end left an empty pods.yaml (0 B). Each
    gone pod's YAML is the last state the recorder saw, a comment at the top says so; a test with no
    pod at all leaves no pods.yaml."""
    import yaml

    result, reports = run(f'''
from e2e.record.recorder import load_changes

CHANGES = load_changes("{RECORDING}")


def test_deleted(scenario):
    scenario.recorder.changes = lambda kind=None, name=None: CHANGES
    scenario.t0 = CHANGES[0].received_at
    scenario.kube.pods = lambda namespace: []


def test_no_pod(scenario):
    scenario.kube.pods = lambda namespace: []
''')
    result.assert_outcomes(passed=2)
    deleted, no_pod = _artifacts(reports)
    last = [c.obj for c in load_changes(RECORDING) if c.kind == "Pod"][-1]
    text = (deleted / "pods.yaml").read_text()
    assert text.startswith("# "), text[:200]
    assert "last state the recorder saw" in text.splitlines()[0]
    (pod,) = list(yaml.safe_load_all(text))
    assert pod["metadata"]["resourceVersion"] == last["metadata"]["resourceVersion"]
    assert "managedFields" not in pod["metadata"]
    assert not (no_pod / "pods.yaml").exists()
