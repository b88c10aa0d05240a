"""The scenario's vocabulary for common actions (e2e.run.scenario.Scenario, e2e.cluster.kube.Kube):
patch, resize, evict, exec, delete with options, waits on any kind's condition — against
fakes of the API client (no cluster)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from kubernetes.client.exceptions import ApiException

from e2e.cluster import kube as kube_module
from e2e.cluster.kube import ApiAnswer, ExecError, ExecResult, Kube
from e2e.record.pods import condition
from e2e.run.scenario import Scenario
from e2e.run.waiting import WaitTimeout

KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""


class FakeResource:
    """A dynamic-client resource that keeps its calls."""

    def __init__(self, namespaced=True, subresources=()):
        self.namespaced = namespaced
        self.calls: list[tuple[str, dict]] = []
        self.subresources = {name: FakeResource(namespaced) for name in subresources}

    def _answer(self, verb, kwargs):
        self.calls.append((verb, kwargs))
        return SimpleNamespace(to_dict=lambda: {"verb": verb})

    def patch(self, **kwargs):
        return self._answer("patch", kwargs)

    def delete(self, **kwargs):
        return self._answer("delete", kwargs)


@pytest.fixture
def kube(tmp_path):
    path = tmp_path / "kubeconfig"
    path.write_text(KUBECONFIG)
    k = Kube(str(path))
    k.resources = {"Pod": FakeResource(subresources=("resize", "status")), "Node": FakeResource(namespaced=False),
                   "Job": FakeResource()}
    k._dynamic = SimpleNamespace(resources=SimpleNamespace(get=lambda kind, **kw: k.resources[kind]))
    return k


class FakeRecorder:
    def __init__(self, kinds=("Pod", "Event"), objects=None):
        self.kinds = tuple(kinds)
        self.objects = objects or {}

    def latest(self, kind, name):
        found = self.objects.get((kind, name))
        return found() if callable(found) else found

    def changes(self, *a, **kw):
        return []

    def check(self, since=None):
        pass  # alive

    started_at = 0.0


def scenario(kube, recorder=None) -> Scenario:
    return Scenario(kube, "ns", recorder or FakeRecorder(), judge=None, manifest_dir=Path("."), kubernetes_minor=37, cgroup=2)


def test_patch_sends_the_patch_type_and_subresource(kube):
    sc = scenario(kube)
    sc.patch("Pod", "web", [{"op": "add", "path": "/metadata/labels/x", "value": "y"}], patch_type="json")
    ((verb, kw),) = kube.resources["Pod"].calls
    assert verb == "patch" and kw["name"] == "web" and kw["namespace"] == "ns"
    assert kw["content_type"] == "application/json-patch+json"
    sc.patch("Node", "n1", {"spec": {"unschedulable": True}}, patch_type="merge")
    assert kube.resources["Node"].calls[0][1]["namespace"] is None  # cluster-scoped
    with pytest.raises(ValueError, match="patch_type 'apply'"):
        sc.patch("Pod", "web", {}, patch_type="apply")
    assert [label for _, label in sc.marks] == ["patch pod/web", "patch node/n1", "patch pod/web"]


def test_resize_patches_the_resize_subresource(kube):
    scenario(kube).resize("web", "app", requests={"cpu": "200m"}, limits={"memory": "64Mi"})
    assert kube.resources["Pod"].calls == []
    ((verb, kw),) = kube.resources["Pod"].subresources["resize"].calls
    assert kw["body"] == {"spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "200m"}, "limits": {"memory": "64Mi"}}}]}}
    assert kw["content_type"] == "application/strategic-merge-patch+json"
    with pytest.raises(ValueError, match="requests or limits"):
        scenario(kube).resize("web", "app")


def test_delete_sends_delete_options(kube):
    sc = scenario(kube)
    sc.delete("Job", "once", grace_period_s=0, propagation="Foreground")
    sc.delete("Job", "once", dry_run=True)
    bodies = [kw["body"] for _, kw in kube.resources["Job"].calls]
    assert bodies == [
        {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0, "propagationPolicy": "Foreground"},
        {"apiVersion": "v1", "kind": "DeleteOptions", "dryRun": ["All"]},
    ]
    assert [label for _, label in sc.marks] == ["delete job/once"]  # a dry run changes nothing
    with pytest.raises(ValueError, match="propagation 'Cascade'"):
        sc.delete("Job", "once", propagation="Cascade")


def test_evict_returns_the_answer_also_when_refused(kube, monkeypatch):
    calls = []

    def created(name, namespace, body, **kw):
        calls.append((name, namespace, body, kw))
        return SimpleNamespace(status=201, data=b'{"kind": "Status", "status": "Success"}')

    monkeypatch.setattr(kube.core, "create_namespaced_pod_eviction", created)
    sc = scenario(kube)
    assert sc.evict("web", dry_run=True) == ApiAnswer(201, {"kind": "Status", "status": "Success"})
    name, namespace, body, kw = calls[0]
    assert (name, namespace, body["kind"], body["apiVersion"], kw["dry_run"]) == ("web", "ns", "Eviction", "policy/v1", "All")

    refusal = {"kind": "Status", "code": 429, "message": "Cannot evict pod as it would violate the pod's disruption budget."}

    def refused(*a, **kw):
        raise ApiException(http_resp=SimpleNamespace(status=429, reason="Too Many Requests", data=json.dumps(refusal).encode(),
                                                     headers={}))

    monkeypatch.setattr(kube.core, "create_namespaced_pod_eviction", refused)
    assert sc.evict("web", grace_period_s=5) == ApiAnswer(429, refusal)
    assert [label for _, label in sc.marks] == ["evict pod/web (dry run)", "evict pod/web"]


class FakeWebSocket:
    def __init__(self, status: dict | None, open_after_run: bool = False):
        self.status, self.open_after_run, self.closed = status, open_after_run, False

    def run_forever(self, timeout):
        self.timeout = timeout

    def is_open(self):
        return self.open_after_run

    def read_stdout(self):
        return "out\n"

    def read_stderr(self):
        return "err\n"

    def read_channel(self, channel):
        assert channel == 3  # the error channel carries the exit status
        return json.dumps(self.status) if self.status is not None else ""

    def close(self):
        self.closed = True


@pytest.mark.parametrize("status, expected", [
    ({"status": "Success"}, ExecResult(0, "out\n", "err\n")),
    ({"status": "Failure", "reason": "NonZeroExitCode", "details": {"causes": [{"reason": "ExitCode", "message": "3"}]}},
     ExecResult(3, "out\n", "err\n")),
])
def test_exec_returns_exit_code_and_output(kube, monkeypatch, status, expected):
    seen = {}

    def fake_stream(fn, pod, namespace, **kw):
        seen.update(kw, pod=pod, namespace=namespace, client=fn.__self__.api_client)
        return FakeWebSocket(status)

    monkeypatch.setattr(kube_module, "stream", fake_stream)
    assert scenario(kube).exec("web", "app", "sh", "-c", "exit 3") == expected
    assert seen["command"] == ["sh", "-c", "exit 3"] and seen["container"] == "app" and not seen["tty"]
    assert seen["client"] is not kube.api_client  # stream() patches its client: never the recorder's


def test_exec_that_cannot_run_or_hangs_is_an_error(kube, monkeypatch):
    no_container = {"status": "Failure", "message": 'container "nope" not found in pod "web"'}
    monkeypatch.setattr(kube_module, "stream", lambda *a, **kw: FakeWebSocket(no_container))
    with pytest.raises(ExecError, match='container "nope" not found'):
        kube.exec("ns", "web", "nope", ["true"])
    hanging = FakeWebSocket(None, open_after_run=True)
    monkeypatch.setattr(kube_module, "stream", lambda *a, **kw: hanging)
    with pytest.raises(ExecError, match="still running after 2 s"):
        kube.exec("ns", "web", "app", ["sleep", "60"], timeout_s=2)
    assert hanging.closed


def test_wait_for_condition_of_any_kind(kube):
    states = iter([{"status": {}},
                   {"status": {"conditions": [{"type": "Complete", "status": "False"}]}},
                   {"status": {"conditions": [{"type": "Complete", "status": "True", "reason": "CompletionsReached"}]}}])
    sc = scenario(kube, FakeRecorder(kinds=("Pod", "Job"), objects={("Job", "once"): lambda: next(states)}))
    got = sc.wait_for_condition("Job", "once", "Complete", timeout_s=5, interval_s=0.01)
    assert got == {"type": "Complete", "status": "True", "reason": "CompletionsReached"}
    with pytest.raises(WaitTimeout, match="Job/gone condition Complete=True"):
        sc.wait_for_condition("Job", "gone", "Complete", timeout_s=0.05, interval_s=0.01)


def test_condition_lookup():
    obj = {"status": {"conditions": [{"type": "Available", "status": "True"}]}}
    assert condition(obj, "Available") == {"type": "Available", "status": "True"}
    assert condition(obj, "Progressing") is None
    assert condition(None, "Available") is None


def test_exec_refused_by_the_api_is_an_exec_error(kube, monkeypatch):
    def refused(*a, **kw):
        raise ApiException(status=404, reason="Not Found")

    monkeypatch.setattr(kube_module, "stream", refused)
    with pytest.raises(ExecError, match="404 Not Found"):
        kube.exec("ns", "gone", "app", ["true"])
