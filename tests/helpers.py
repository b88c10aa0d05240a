"""Builders for the framework's unit tests: pods and container statuses as the API's JSON
(camelCase dicts, as the recorder keeps them), recorder ``Change`` objects, a fake fault
site for e2e.faults, and the scripts of ``hack/`` as modules."""

from __future__ import annotations

import datetime as dt
import importlib.util
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace

from e2e.record.recorder import Change

# The checkout these tests belong to.
ROOT = Path(__file__).resolve().parent.parent


def hack_module(name: str) -> ModuleType:
    """The script ``hack/<name>.py`` (not a package: run as ``python hack/<name>.py``) imported as
    module ``name``, put in ``sys.modules`` before it runs (dataclasses look their module up there)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "hack" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


# A fixed origin for synthetic timelines: 2026-11-29T07:45:00Z.
T0 = dt.datetime(2026, 11, 29, 7, 45, 0, tzinfo=dt.timezone.utc)


def ts(seconds: float) -> str:
    """RFC 3339 API timestamp ``seconds`` after ``T0``, whole seconds, ``Z`` suffix (as the API writes it)."""
    return (T0 + dt.timedelta(seconds=int(seconds))).strftime("%Y-%m-%dT%H:%M:%SZ")


def epoch(seconds: float) -> float:
    """Epoch seconds of ``ts(seconds)``."""
    return (T0 + dt.timedelta(seconds=int(seconds))).timestamp()


# -- container states --------------------------------------------------------------------


def running(started: float = 0) -> dict:
    return {"running": {"startedAt": ts(started)}}


def waiting(reason: str, message: str = "") -> dict:
    body = {"reason": reason}
    if message:
        body["message"] = message
    return {"waiting": body}


def terminated(
    exit_code: int, reason: str | None = None, started: float = 0, finished: float = 1, signal: int | None = None, cid: str | None = None
) -> dict:
    """A terminated state; ``cid`` is its runtime containerID (the API always sets one)."""
    body: dict = {"exitCode": exit_code, "startedAt": ts(started), "finishedAt": ts(finished)}
    if cid:
        body["containerID"] = cid
    if reason:
        body["reason"] = reason
    if signal is not None:
        body["signal"] = signal
    return {"terminated": body}


def cstatus(
    name: str, state: dict, *, ready: bool = False, restarts: int = 0, last: dict | None = None, started: bool | None = None, cid: str | None = None
) -> dict:
    """One entry of ``containerStatuses`` / ``initContainerStatuses``; ``cid``: the current run's containerID."""
    out = {"name": name, "state": state, "lastState": last or {}, "ready": ready, "restartCount": restarts, "image": "busybox"}
    if cid:
        out["containerID"] = cid
    if started is not None:
        out["started"] = started
    return out


def pod(
    name: str = "p",
    *,
    containers: tuple[str, ...] = ("app",),
    init: tuple[str, ...] = (),
    sidecars: tuple[str, ...] = (),
    phase: str = "Pending",
    statuses: list[dict] | None = None,
    init_statuses: list[dict] | None = None,
    conditions: dict[str, str] | None = None,
    deletion: str | None = None,
    reason: str | None = None,
) -> dict:
    """A pod dict. ``init`` are plain init containers, ``sidecars`` init containers with
    ``restartPolicy: Always``; both in declaration order (sidecars after plain ones unless
    listed in ``init`` too). ``conditions`` maps condition type -> status."""
    init_specs = [{"name": n, "image": "busybox"} for n in init]
    init_specs += [{"name": n, "image": "busybox", "restartPolicy": "Always"} for n in sidecars]
    spec = {"containers": [{"name": n, "image": "busybox"} for n in containers]}
    if init_specs:
        spec["initContainers"] = init_specs
    status: dict = {"phase": phase}
    if statuses is not None:
        status["containerStatuses"] = statuses
    if init_statuses is not None:
        status["initContainerStatuses"] = init_statuses
    if conditions:
        status["conditions"] = [{"type": k, "status": v} for k, v in conditions.items()]
    if reason:
        status["reason"] = reason
    meta = {"name": name, "namespace": "ns", "uid": "uid-1"}
    if deletion:
        meta["deletionTimestamp"] = deletion
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def change(at: float, obj: dict, type_: str = "MODIFIED") -> Change:
    """A recorder change of ``obj`` received ``at`` seconds after ``T0``."""
    kind = obj.get("kind", "Pod")
    return Change(epoch(0) + at, kind, type_, obj["metadata"]["name"], obj)


def api_answering(answers: dict[str, object], host: str = "https://127.0.0.1:40000"):
    """A :class:`e2e.cluster.kube.Kube` stand-in for readers of the API server's raw paths
    (:func:`e2e.cluster.gates.read`): its client's ``call_api`` answers ``answers[path]``: text (HTTP
    200), an int (that status) or an exception; ``asked`` keeps the URLs."""
    asked: list[str] = []

    def call_api(method, url, **kw):
        asked.append(url)
        answer = answers[url.removeprefix(host)]
        if isinstance(answer, Exception):
            raise answer
        if isinstance(answer, int):
            return SimpleNamespace(read=lambda: None, data=b"", status=answer)
        return SimpleNamespace(read=lambda: None, data=answer.encode(), status=200)
    def param_serialize(method, path, auth_settings=None):
        return method, f"{host}{path}", {}, None, []
    return SimpleNamespace(asked=asked, api_client=SimpleNamespace(configuration=SimpleNamespace(host=host), call_api=call_api,
                                                                   param_serialize=param_serialize))


def event(name: str, reason: str, message: str, involved: str = "p", type_: str = "Normal", count: int = 1) -> dict:
    return {
        "kind": "Event",
        "metadata": {"name": name, "namespace": "ns"},
        "involvedObject": {"kind": "Pod", "name": involved},
        "reason": reason,
        "message": message,
        "type": type_,
        "count": count,
    }


def fake_scenario_conftest(registry_entries: str) -> str:
    """A ``pytester`` conftest whose ``scenario`` fixture is a real :class:`e2e.run.scenario.Scenario`
    and :class:`e2e.judge.measurements.Judge` (v1.37.2, cgroup v1) on a registry of
    ``registry_entries`` (Python source: ``Expectation(...)`` items, names from e2e.judge.expectations),
    with no cluster: a recorder that records nothing (``dead = True`` makes it raise like a dead
    watch) and a namespace that cannot be read. The plugin's hooks run as in a real session."""
    return f'''
import pytest
from e2e.judge.expectations import Band, Expectation, KnownBug, Registry
from e2e.judge.measurements import Judge, MeasurementLog
from e2e.plugin.outcomes import SCENARIO
from e2e.record.recorder import RecorderDied
from e2e.run.scenario import Scenario


class FakeRecorder:
    started_at = 0.0
    errors = []
    dead = False

    def changes(self, kind=None, name=None):
        return []

    def check(self, since=None):
        if self.dead:
            raise RecorderDied("the recorder died, the recording is incomplete: Pod watch ended: RuntimeError: killed by a test")


class NoCluster:
    def pods(self, namespace):
        raise ConnectionError("no cluster in this test")

    events = pods


REGISTRY = Registry()
REGISTRY.add({registry_entries})


@pytest.fixture
def scenario(request, tmp_path):
    judge = Judge(MeasurementLog(tmp_path / "m.json"), request.node.nodeid, "run", "v1.37.2", minor=37, cgroup=1,
                  registry=REGISTRY)
    sc = Scenario(NoCluster(), "ns", FakeRecorder(), judge, tmp_path, 37, 1)
    request.node.stash[SCENARIO] = sc
    return sc
'''


# -- a fault site (e2e.faults.core.FaultSite) --------------------------------------------


class FaultSite:
    """A fake fault site: node commands recorded in ``calls`` (``"<node>: <cmd>"``) and answered by
    ``answers`` (first matching substring wins; an Exception value is raised, anything else is the
    output), marks, attached files, declared fault windows, a broken cluster; pods listed by field
    selector answer ``failed_pods``, deletions recorded."""

    def __init__(self, profile: str = "fast-lifecycle", answers: dict[str, object] | None = None,
                 failed_pods: tuple[str, ...] = ()):
        self.profile = profile
        self.answers = answers or {}
        self.calls: list[str] = []
        self.marks: list[str] = []
        self.files: dict[str, str] = {}
        self.broken: list[str] = []
        self.declared: list[tuple] = []
        self.deleted: list[tuple[str, str]] = []
        self.listed: list[str] = []
        self.kind = SimpleNamespace(control_plane="c-control-plane")
        pods = [SimpleNamespace(metadata=SimpleNamespace(name=n)) for n in failed_pods]

        def list_pods(namespace, field_selector=""):
            self.listed.append(f"{namespace}?{field_selector}")
            return SimpleNamespace(items=pods)

        self.kube = SimpleNamespace(
            api_client=SimpleNamespace(configuration=SimpleNamespace(host="https://127.0.0.1:6443")),
            core=SimpleNamespace(list_namespaced_pod=list_pods,
                                 delete_namespaced_pod=lambda name, ns: self.deleted.append((ns, name))))
        self.recorder = SimpleNamespace(declare_fault=lambda *a: self.declared.append(a))

    def node_exec(self, *cmd: str, timeout: float = 30, node: str | None = None) -> str:
        line = f"{node}: {' '.join(cmd)}"
        self.calls.append(line)
        for key, answer in self.answers.items():
            if key in line:
                if isinstance(answer, Exception):
                    raise answer
                return str(answer)
        return ""

    def mark(self, when: float, label: str) -> None:
        self.marks.append(label)

    def add_file(self, name: str, content) -> None:
        self.files[name] = content

    def cluster_broken(self, reason: str) -> None:
        self.broken.append(reason)


def nodes_holding(*names: str) -> type:
    """A stand-in for :class:`e2e.cluster.kube.Kube` in the preflight: a cluster that answers,
    whose one node ``worker`` lists one image known by ``names`` in its ``status.images``."""

    class Nodes:
        def __init__(self, kubeconfig, context=None):
            pass

        def version(self, timeout_s=10):
            return None

        def nodes(self):
            return [{"metadata": {"name": "worker"}, "spec": {}, "status": {"images": [{"names": list(names)}]}}]

    return Nodes
