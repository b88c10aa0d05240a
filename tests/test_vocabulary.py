"""The scenario's vocabulary for common actions (e2e.run.scenario.Scenario, e2e.cluster.kube.Kube):
patch, resize, evict, exec, delete with options, waits on any kind's condition — against
fakes of the API client (no cluster)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from kubernetes.client.exceptions import ApiException
from kubernetes.dynamic.exceptions import api_exception

from e2e.cluster import kube as kube_module
from e2e.cluster.kube import ApiAnswer, ExecError, ExecResult, Kube
from e2e.record.pods import condition
from e2e.run.scenario import Scenario
from e2e.base.waiting import WaitTimeout

KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""


class FakeResource:
    """A dynamic-client resource that keeps its calls; with ``refusal`` set, every call raises it
    as the dynamic client does (its ``DynamicApiError`` subclass of the status)."""

    def __init__(self, namespaced=True, subresources=()):
        self.namespaced = namespaced
        self.calls: list[tuple[str, dict]] = []
        self.subresources = {name: FakeResource(namespaced) for name in subresources}
        self.refusal: ApiException | None = None

    def _answer(self, verb, kwargs):
        self.calls.append((verb, kwargs))
        if self.refusal is not None:
            try:
                raise self.refusal
            except ApiException as e:
                raise api_exception(e)  # noqa: B904 - as kubernetes.dynamic.client.DynamicClient.request does
        return SimpleNamespace(to_dict=lambda: {"verb": verb})

    def patch(self, **kwargs):
        return self._answer("patch", kwargs)

    def delete(self, **kwargs):
        return self._answer("delete", kwargs)

    def create(self, **kwargs):
        return self._answer("create", kwargs)


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
    assert kw["dry_run"] is None
    with pytest.raises(ValueError, match="requests or limits"):
        scenario(kube).resize("web", "app")


def test_a_dry_run_resize_asks_dry_run_all_and_leaves_no_mark(kube):
    sc = scenario(kube)
    sc.resize("web", "app", limits={"memory": "48Mi"}, dry_run=True)
    sc.patch("Pod", "web", {"spec": {}}, dry_run=True)
    ((_, resize),) = kube.resources["Pod"].subresources["resize"].calls
    ((_, plain),) = kube.resources["Pod"].calls
    assert resize["dry_run"] == plain["dry_run"] == "All"
    assert sc.marks == []  # nothing changed on the cluster: nothing to draw


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


def test_evict_sends_the_delete_options_of_the_eviction(kube, monkeypatch):
    # issue 41 (a new user's trial): evict took no preconditions, and the user went around it to the raw client
    bodies = []

    def created(name, namespace, body, **kw):
        bodies.append((body, kw.get("dry_run")))
        return SimpleNamespace(status=201, data=b'{"kind": "Status", "status": "Success"}')

    monkeypatch.setattr(kube.core, "create_namespaced_pod_eviction", created)
    sc = scenario(kube)
    sc.evict("web", uid="0d9c-uid", resource_version="812", grace_period_s=0, propagation="Foreground", dry_run=True)
    sc.evict("web", uid="0d9c-uid")
    sc.evict("web")
    meta = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "web", "namespace": "ns"}}
    assert bodies == [
        ({**meta, "deleteOptions": {"gracePeriodSeconds": 0, "preconditions": {"uid": "0d9c-uid", "resourceVersion": "812"},
                                    "propagationPolicy": "Foreground"}}, "All"),
        ({**meta, "deleteOptions": {"preconditions": {"uid": "0d9c-uid"}}}, None),
        (meta, None),  # no option: no deleteOptions, as before
    ]
    with pytest.raises(ValueError, match="propagation 'Cascade'"):
        sc.evict("web", propagation="Cascade")
    assert len(bodies) == 3  # refused before any request


def test_a_failed_precondition_is_an_answer(kube, monkeypatch):
    conflict = {"kind": "Status", "code": 409, "reason": "Conflict",
                "message": 'Operation cannot be fulfilled on Pod "web": the UID in the precondition (x) does not match the UID '
                           "in record (y). The object might have been deleted and then recreated"}

    def refused(*a, **kw):
        raise ApiException(http_resp=SimpleNamespace(status=409, reason="Conflict", data=json.dumps(conflict).encode(), headers={}))

    monkeypatch.setattr(kube.core, "create_namespaced_pod_eviction", refused)
    assert scenario(kube).evict("web", uid="x") == ApiAnswer(409, conflict)


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
    with pytest.raises(ExecError, match='container "nope" not found') as raised:
        kube.exec("ns", "web", "nope", ["true"])
    assert str(raised.value).endswith("; stderr: err")  # what the command wrote is kept
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


def test_exec_refused_in_its_websocket_handshake_says_the_api_answer(kube, monkeypatch):
    """kubernetes.stream raises a refused exec as ApiException(status=0, reason=<websocket-client's
    WebSocketBadStatusException text>): status, reason and Status body are read back from it."""
    answer = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
              "message": "container app is not valid for pod web", "reason": "BadRequest", "code": 400}
    headers = {"audit-id": "4d1c", "content-type": "application/json", "content-length": "146"}
    handshake = f"Handshake status 400 Bad Request -+-+- {headers} -+-+- {json.dumps(answer)}"  # websocket/_handshake.py

    def refused(*a, **kw):
        raise ApiException(status=0, reason=handshake)

    monkeypatch.setattr(kube_module, "stream", refused)
    assert_refused(refusal(lambda: kube.exec("ns", "web", "app", ["true"])), "exec ['true'] in web/app", answer)
    handshake = f"Handshake status 502 Bad Gateway -+-+- {headers} -+-+- None"
    refused_502 = refusal(lambda: kube.exec("ns", "web", "app", ["true"])).value
    assert (refused_502.status, refused_502.reason, refused_502.message, refused_502.body) == (502, "Bad Gateway", "", {})
    assert str(refused_502) == "exec ['true'] in web/app: 502 Bad Gateway"


# -- an API refusal (issue 29, 4): one error of the suite's, status, reason and message first ---

# Status bodies as the API server writes them: a resize the namespace's ResourceQuota forbids
# (quota admission evaluates a resize, 1.33+) and one that fails validation
FORBIDDEN = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
             "message": 'pods "web" is forbidden: exceeded quota: mem, requested: limits.memory=64Mi, '
                        "used: limits.memory=128Mi, limited: limits.memory=160Mi",
             "reason": "Forbidden", "details": {"name": "web", "kind": "pods"}, "code": 403}
INVALID = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
           "message": 'Pod "web" is invalid: spec.containers[0].resources.requests: Invalid value: "200m": '
                      "must be less than or equal to cpu limit of 100m",
           "reason": "Invalid",
           "details": {"name": "web", "kind": "Pod", "causes": [
               {"reason": "FieldValueInvalid", "message": 'Invalid value: "200m": must be less than or equal to cpu limit of 100m',
                "field": "spec.containers[0].resources.requests"}]},
           "code": 422}
NOT_FOUND = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": 'pods "web" not found',
             "reason": "NotFound", "details": {"name": "web", "kind": "pods"}, "code": 404}
HTTP_REASONS = {403: "Forbidden", 404: "Not Found", 422: "Unprocessable Entity"}


def http_error(body: dict) -> ApiException:
    """What the client raises for the API's answer ``body`` (its ``ApiException`` subclass of the
    status, from a urllib3-like response with the API server's headers)."""
    status = body["code"]
    response = SimpleNamespace(status=status, reason=HTTP_REASONS[status], data=json.dumps(body).encode(),
                               headers={"Audit-Id": "0b9e6d3c-2f1a-4c55-9d1e-6d0b8f1c2a77", "Content-Type": "application/json"})
    try:
        ApiException.from_response(http_resp=response, body=response.data.decode(), data=None)
    except ApiException as e:
        return e
    raise AssertionError("from_response always raises")


def refusal(act) -> pytest.ExceptionInfo:
    with pytest.raises(Exception) as refused:
        act()
    return refused


def assert_refused(refused: pytest.ExceptionInfo, asked: str, body: dict) -> None:
    """The error says on its first line — what pytest's short summary shows — what was asked, the
    status, the API's reason and message, and carries them; no client traceback is chained."""
    first = refused.exconly().splitlines()[0]
    assert first == f"e2e.cluster.kube.ApiRefused: {asked}: {body['code']} {body['reason']}: {body['message']}"
    e = refused.value
    assert (e.status, e.reason, e.message, e.body) == (body["code"], body["reason"], body["message"], body)
    assert e.__cause__ is None and e.__suppress_context__


@pytest.mark.parametrize("body", [FORBIDDEN, INVALID])
def test_a_refused_resize_says_status_reason_and_message_on_its_first_line(kube, body):
    kube.resources["Pod"].subresources["resize"].refusal = http_error(body)
    sc = scenario(kube)
    assert_refused(refusal(lambda: sc.resize("web", "app", limits={"memory": "64Mi"})), "patch pod/web/resize", body)
    assert [label for _, label in sc.marks] == ["patch pod/web/resize"]


def test_every_act_helper_that_calls_the_api_raises_the_same_refusal(kube, monkeypatch, tmp_path):
    (tmp_path / "pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: app, image: x}]}\n")
    sc = Scenario(kube, "ns", FakeRecorder(), judge=None, manifest_dir=tmp_path, kubernetes_minor=37, cgroup=2)
    kube.resources["Pod"].refusal = http_error(FORBIDDEN)
    assert_refused(refusal(lambda: sc.patch("Pod", "web", {"metadata": {"labels": {"x": "y"}}})), "patch pod/web", FORBIDDEN)
    assert_refused(refusal(lambda: sc.apply("pod.yaml")), "create pod/web", FORBIDDEN)
    assert_refused(refusal(lambda: sc.apply("pod.yaml", dry_run=True)), "create pod/web (dry run)", FORBIDDEN)
    assert_refused(refusal(lambda: sc.delete("Pod", "web", grace_period_s=0)), "delete pod/web", FORBIDDEN)

    def not_found(*a, **kw):
        raise http_error(NOT_FOUND)

    monkeypatch.setattr(kube.core, "delete_namespaced_pod", not_found)
    assert_refused(refusal(lambda: sc.delete_pod("web")), "delete pod/web", NOT_FOUND)
    monkeypatch.setattr(kube_module, "stream", not_found)
    assert_refused(refusal(lambda: sc.exec("web", "app", "true")), "exec ['true'] in web/app", NOT_FOUND)


def test_a_refusal_without_a_status_body_still_says_what_the_server_answered(kube):
    kube.resources["Pod"].refusal = ApiException(http_resp=SimpleNamespace(status=502, reason="Bad Gateway",
                                                                           data=b"<html>upstream down</html>\n", headers={}))
    refused = refusal(lambda: scenario(kube).patch("Pod", "web", {}))
    assert refused.exconly().splitlines()[0] == "e2e.cluster.kube.ApiRefused: patch pod/web: 502 Bad Gateway: <html>upstream down</html>"
    assert (refused.value.status, refused.value.reason, refused.value.body) == (502, "Bad Gateway", {"message": "<html>upstream down</html>\n"})


RESIZE_TEST = f"""
import json
from types import SimpleNamespace

from kubernetes.client.exceptions import ApiException
from kubernetes.dynamic.exceptions import api_exception

from e2e.cluster.kube import Kube
from e2e.run.scenario import Scenario

BODY = {FORBIDDEN!r}


class Refusing:
    namespaced = True

    def __init__(self):
        self.subresources = {{"resize": self}}

    def patch(self, **kwargs):
        response = SimpleNamespace(status=403, reason="Forbidden", data=json.dumps(BODY).encode(),
                                   headers={{"Content-Type": "application/json"}})
        try:
            ApiException.from_response(http_resp=response, body=response.data.decode(), data=None)
        except ApiException as e:
            raise api_exception(e)


def test_resize(tmp_path):
    (tmp_path / "kubeconfig").write_text({KUBECONFIG!r})
    kube = Kube(str(tmp_path / "kubeconfig"))
    kube._dynamic = SimpleNamespace(resources=SimpleNamespace(get=lambda **kw: Refusing()))
    sc = Scenario(kube, "ns", None, None, tmp_path, 37, 2)
    sc.resize("web", "app", limits={{"memory": "64Mi"}})
"""


def test_a_refused_resize_reads_in_the_short_summary_and_its_traceback_is_short(pytester, monkeypatch):
    """issue 29 (4): the summary line read ``ForbiddenError: 403`` under a ~90-line traceback."""
    monkeypatch.setenv("CI", "1")  # pytest's short summary: the message's first line in full
    pytester.makepyfile(test_resize=RESIZE_TEST)
    result = pytester.runpytest("-rf", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    result.stdout.fnmatch_lines([f"FAILED test_resize.py::test_resize - e2e.cluster.kube.ApiRefused: patch pod/web/resize: "
                                 f"403 Forbidden: {FORBIDDEN['message']}"])
    assert "Original traceback" not in out and "HTTP response headers" not in out and "During handling" not in out
    failure = out[out.index("_ test_resize _"):out.index("short test summary info")]
    assert len(failure.splitlines()) <= 40, failure


# -- the NodePort protocol: apply once the port is free, release it at the end --------------------

ALLOCATED = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
             "message": 'Service "web" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated',
             "reason": "Invalid", "details": {"name": "web", "kind": "Service"}, "code": 422}


def test_apply_node_port_retries_while_the_port_is_allocated(kube, monkeypatch):
    sc, answers = scenario(kube), [http_error(ALLOCATED), http_error(ALLOCATED), [{"kind": "Service"}]]
    applied = []

    def apply(filename, dry_run=False, **values):
        applied.append((filename, values))
        answer = answers.pop(0)
        if isinstance(answer, ApiException):
            raise kube_module.ApiRefused.of(answer, "create service/web")
        return answer

    monkeypatch.setattr(sc, "apply", apply)
    assert sc.apply_node_port("web.yaml", replicas=2) == [{"kind": "Service"}]
    assert applied == [("web.yaml", {"replicas": 2})] * 3


def test_apply_node_port_raises_any_other_refusal_at_once_and_times_out_on_a_taken_port(kube, monkeypatch):
    from e2e.run import scenario as scenario_module

    sc = scenario(kube)
    monkeypatch.setattr(sc, "apply", lambda *a, **kw: (_ for _ in ()).throw(kube_module.ApiRefused.of(http_error(FORBIDDEN), "create")))
    with pytest.raises(kube_module.ApiRefused, match="Forbidden"):
        sc.apply_node_port("web.yaml")
    monkeypatch.setattr(scenario_module, "NODE_PORT_WAIT_S", 0.5)
    monkeypatch.setattr(sc, "apply", lambda *a, **kw: (_ for _ in ()).throw(kube_module.ApiRefused.of(http_error(ALLOCATED), "create")))
    with pytest.raises(WaitTimeout, match="NodePort 30080 free"):
        sc.apply_node_port("web.yaml")


def test_release_node_port_deletes_the_service_and_accepts_it_gone(kube, monkeypatch):
    deleted = []
    monkeypatch.setattr(kube.core, "delete_namespaced_service", lambda name, ns: deleted.append((name, ns)))
    scenario(kube).release_node_port()
    assert deleted == [("web", "ns")]

    def gone(*a):
        raise http_error(NOT_FOUND)

    monkeypatch.setattr(kube.core, "delete_namespaced_service", gone)
    scenario(kube).release_node_port("db")  # no error


def test_scenario_folders_keep_only_what_is_theirs():
    """One vocabulary in e2e/ (issue 25): the NodePort, its protocol, the wait slack, the node
    vocabulary are defined once there — never again in a scenario folder."""
    import re

    root = Path(__file__).resolve().parents[1] / "scenarios"
    shared = re.compile(r"^(NODE_PORT|NODE_PORT_WAIT_S|\w*SLACK_S) = |^def (_?apply_node_port|_?release_node_port|_?node_port_taken|"
                        r"renewals|_?last_renew\w*|_?taint(_seen|_gone)?|_unknown|_ready_again|\w*condition_changes|first_condition|"
                        r"flips|delete_requested_at|_delete_time)\(", re.M)
    found = {str(p.relative_to(root)): [m.group(0) for m in shared.finditer(p.read_text())] for p in root.rglob("*.py")}
    assert {k: v for k, v in found.items() if v} == {}
