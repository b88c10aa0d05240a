"""Access to one cluster through the ``kubernetes`` client: version, manifests, namespaces, logs.

Manifests are YAML files next to the scenario. ``${name}`` placeholders (a lower-case
identifier in braces; ``$${`` for a literal ``${``) are filled from the caller's values (the
pinned workload images of ``e2e.cluster.images`` and ``${stamp_sh}`` are added by
:meth:`e2e.run.scenario.Scenario.manifests`, not here); any other ``$`` is left alone, so shell scripts in
manifests keep ``$var`` and ``$(cmd)``. A missing value or a YAML error is a
:class:`ManifestError` that names the file.
"""

from __future__ import annotations

import json
import logging
import re
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, cast

import yaml
from kubernetes import client, config, dynamic
from kubernetes.client.exceptions import ApiException
from kubernetes.dynamic.exceptions import NotFoundError
from kubernetes.stream import stream
from kubernetes.stream.ws_client import ERROR_CHANNEL

from ..base.interrupts import signals_deferred
from ..base.waiting import wait_until

log = logging.getLogger(__name__)

RUN_LABEL = "pod-lifecycle-e2e/run-id"
CASE_LABEL = "pod-lifecycle-e2e/case"


PLACEHOLDER = re.compile(r"(?<!\$)\$\{([a-z_][a-z0-9_]*)\}")


class ManifestError(ValueError):
    """A manifest file cannot be read, filled in or parsed."""


class ClusterUnreachable(RuntimeError):
    """The API server did not answer."""


class ExecError(RuntimeError):
    """An exec could not run the command (command not found, timeout); a refusal of the API is
    :class:`ApiRefused`."""


class ApiRefused(RuntimeError):
    """The API server refused a request (``kubectl`` would print ``Error from server``): what was
    ``asked`` (``patch pod/web/resize``), the HTTP ``status`` (403, 404, 422...), the ``reason``
    of its ``Status`` answer (``Forbidden``, ``NotFound``, ``Invalid``...; else the HTTP reason
    phrase), its ``message``, and the whole answer as ``body`` (:func:`api_status`: ``details``,
    ``causes``...). The first line of the error says all of it — what pytest's short summary
    shows; the rest of a message of several lines follows."""

    def __init__(self, asked: str, status: int, reason: str, message: str, body: dict):
        self.asked, self.status, self.reason, self.message, self.body = asked, status, reason, message, body
        super().__init__(f"{asked}: {status} {reason}" + (f": {message}" if message else ""))

    @classmethod
    def of(cls, e: ApiException, asked: str) -> ApiRefused:
        """The refusal the client raised as ``e`` (the dynamic client's ``DynamicApiError`` is
        one; a refused exec comes as status 0 with the websocket handshake's answer as reason)."""
        status, reason, answer = e.status or 0, e.reason or "", e
        handshake = _HANDSHAKE.fullmatch(reason) if not status else None
        if handshake:
            status, reason = int(handshake["status"]), handshake["reason"]
            answer = ApiException(status=status, reason=reason, body=None if handshake["body"] == "None" else handshake["body"])
        body = api_status(answer)
        return cls(asked, status, str(body.get("reason") or reason), str(body.get("message") or "").strip(), body)


# websocket-client's refused handshake, as kubernetes.stream passes it on (ApiException(status=0, reason=str(e)))
_HANDSHAKE = re.compile(r"Handshake status (?P<status>\d+) (?P<reason>.*?) -\+-\+- .* -\+-\+- (?P<body>.*)", re.S)


@contextmanager
def refusal_as(asked: str) -> Iterator[None]:
    """Raise the client's refusal (``ApiException``) inside as :class:`ApiRefused` saying what
    was ``asked``, without the client's own traceback."""
    try:
        yield
    except ApiException as e:
        raise ApiRefused.of(e, asked) from None


# Content types of the patch kinds the API server takes (kubectl patch --type).
PATCH_TYPES = {
    "strategic": "application/strategic-merge-patch+json",
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
}


def foreign_finalizer(name: str) -> bool:
    """Whether finalizer ``name`` belongs to neither Kubernetes nor its garbage collector:
    ``example.com/hold`` is foreign; ``kubernetes.io/pvc-protection``,
    ``batch.kubernetes.io/job-tracking``, ``foregroundDeletion`` and ``orphan`` are not
    (their controllers remove them)."""
    if "/" not in name:
        return False
    domain = name.split("/", 1)[0]
    return not any(domain == d or domain.endswith("." + d) for d in ("kubernetes.io", "k8s.io"))


@dataclass(frozen=True)
class ApiAnswer:
    """What the API server answered a request: HTTP ``status`` (201, 429...) and its JSON
    ``body`` (a ``Status`` object for an eviction)."""

    status: int
    body: dict


@dataclass(frozen=True)
class ExecResult:
    """A command run in a container: its ``exit_code``, ``stdout`` and ``stderr`` text."""

    exit_code: int
    stdout: str
    stderr: str


def api_status(e: ApiException) -> dict:
    """The API's ``Status`` body of a refused request (``message``, ``reason``, ``details``...),
    ``{"message": <the raw body>}`` when the body is not a JSON object, ``{}`` without a body."""
    if not e.body:
        return {}
    try:
        answer = json.loads(e.body)
    except (TypeError, ValueError):
        answer = None
    return answer if isinstance(answer, dict) else {"message": str(e.body)}


def load_manifests(path: Path, values: dict[str, object] | None = None) -> list[dict]:
    """The objects of the YAML file ``path`` after filling ``${placeholders}`` from ``values``.

    Raises :class:`ManifestError` naming the file and the missing placeholder or YAML error.
    """
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise ManifestError(f"{path}: cannot read manifest: {e}") from e
    values = values or {}
    missing = sorted({m.group(1) for m in PLACEHOLDER.finditer(text) if m.group(1) not in values})
    if missing:
        raise ManifestError(f"{path}: no value for placeholder(s) {', '.join('${' + m + '}' for m in missing)}")
    def fill(part: str) -> str:
        return PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), part).replace("$${", "${")

    filled = fill(text)
    try:
        docs = [d for d in yaml.safe_load_all(filled) if d]
    except yaml.YAMLError as e:
        # the error's marks name the file and its line there (a value of several lines, such as
        # ${stamp_sh}, shifts the lines of the filled text), not "<unicode string>"
        lines = [fill(line).count("\n") + 1 for line in text.split("\n")]
        for mark in (getattr(e, "context_mark", None), getattr(e, "problem_mark", None)):
            if mark is not None:
                mark.name, mark.line = str(path), _source_line(lines, mark.line)
        raise ManifestError(f"{path}: invalid YAML: {e}") from None
    for d in docs:
        if not isinstance(d, dict) or "apiVersion" not in d or "kind" not in d:
            raise ManifestError(f"{path}: every document needs apiVersion and kind, got {str(d)[:80]!r}")
    return docs


def unreachable(e: BaseException, host: str, timeout_s: float) -> str:
    """Why the API server at ``host`` gave no answer, from the exception and what caused it: the
    connection refused (nothing listens there), no answer within ``timeout_s`` s, or what failed."""
    seen: list[BaseException] = []
    todo: list[object] = [e]
    while todo:
        x = todo.pop()
        if isinstance(x, BaseException) and x not in seen:
            seen.append(x)
            todo += [x.__cause__, x.__context__, getattr(x, "reason", None)]  # urllib3 keeps its cause as reason
    if any(isinstance(x, ConnectionRefusedError) for x in seen):
        return f"the API server at {host} refused the connection (nothing listens there: is the cluster running?): {e}"
    if any(isinstance(x, TimeoutError) for x in seen):
        return f"the API server at {host} did not answer within {timeout_s:g} s: {e}"
    return f"the API server at {host} cannot be reached: {e}"


def _source_line(lines: list[int], filled: int) -> int:
    """The line (0-based) of a file whose lines became ``lines[i]`` lines each once filled, that
    line ``filled`` (0-based) of the filled text comes from."""
    end = 0
    for i, n in enumerate(lines):
        end += n
        if filled < end:
            return i
    return len(lines) - 1


@dataclass
class ServerVersion:
    """``git_version`` like ``v1.37.2``; ``minor`` like 37."""

    git_version: str
    major: int
    minor: int


class Kube:
    """One cluster: typed clients plus a dynamic client for manifests; ``kubeconfig`` and
    ``context`` are what it was made from (``None``: the default file, its current context), as
    a command run for the test needs them (:func:`e2e.evidence.kubectl.background`)."""

    def __init__(self, kubeconfig: str | None, context: str | None = None, request_timeout_s: float = 30):
        self.kubeconfig, self.context = kubeconfig, context
        if kubeconfig and not Path(kubeconfig).is_file():
            raise ClusterUnreachable(f"kubeconfig {kubeconfig} does not exist")
        cfg = client.Configuration()
        try:
            config.load_kube_config(config_file=kubeconfig, context=context, client_configuration=cfg)
        except Exception as e:  # config errors come in many types
            raise ClusterUnreachable(f"cannot load kubeconfig {kubeconfig or '(default)'} context {context or '(current)'}: {e}") from e
        # no silent urllib3 retries: a timeout means what it says
        cfg.retries = False
        self.api_client = client.ApiClient(cfg)
        self.request_timeout_s = request_timeout_s
        self.core = client.CoreV1Api(self.api_client)
        self.batch = client.BatchV1Api(self.api_client)
        self.apps = client.AppsV1Api(self.api_client)
        self._dynamic: dynamic.DynamicClient | None = None

    @property
    def dynamic(self) -> dynamic.DynamicClient:
        if self._dynamic is None:
            self._dynamic = dynamic.DynamicClient(self.api_client)
        return self._dynamic

    def version(self, timeout_s: float = 10) -> ServerVersion:
        """The API server's version; :class:`ClusterUnreachable` if it does not answer in time."""
        try:
            info = client.VersionApi(self.api_client).get_code(_request_timeout=timeout_s)
        except Exception as e:
            raise ClusterUnreachable(unreachable(e, self.api_client.configuration.host, timeout_s)) from e
        minor = int(cast(re.Match, re.match(r"\d+", info.minor)).group(0))  # "34" or "34+": digits first
        return ServerVersion(info.git_version, int(info.major), minor)

    # -- namespaces ------------------------------------------------------------------------
    def create_namespace(self, name: str, labels: dict[str, str]) -> None:
        body = client.V1Namespace(metadata=client.V1ObjectMeta(name=name, labels=labels))
        with signals_deferred():  # cut once sent, the request may still create it after the cleanup's delete
            self.core.create_namespace(body)
        # the default service account is created asynchronously; pods need it
        wait_until(
            f"service account default in namespace {name}",
            lambda: self._has_default_sa(name),
            timeout_s=30,
            interval_s=0.2,
        )

    def _has_default_sa(self, ns: str) -> bool:
        try:
            self.core.read_namespaced_service_account("default", ns)
            return True
        except ApiException as e:
            if e.status == 404:
                return False
            raise

    def delete_namespace(self, name: str, wait_s: float = 0) -> None:
        """Delete ``name`` (pods get grace period 0 first so that it goes quickly)."""
        try:
            self.core.delete_collection_namespaced_pod(name, grace_period_seconds=0)
            self.core.delete_namespace(name, grace_period_seconds=0)
        except ApiException as e:
            if e.status != 404:
                raise
        if wait_s:
            wait_until(f"namespace {name} gone", lambda: not self.namespace_exists(name), timeout_s=wait_s, interval_s=1)

    def namespace_exists(self, name: str) -> bool:
        try:
            self.core.read_namespace(name)
            return True
        except ApiException as e:
            if e.status == 404:
                return False
            raise

    def namespaces_of_run(self, run_id: str) -> list[str]:
        items: list[Any] = self.core.list_namespace(label_selector=f"{RUN_LABEL}={run_id}").items  # the API sets metadata.name
        return [ns.metadata.name for ns in items]

    # -- objects ---------------------------------------------------------------------------
    def apply(self, objs: list[dict], namespace: str, dry_run: bool = False) -> list[dict]:
        """Create every object in ``namespace`` (server-side dry run when ``dry_run``);
        returns what the server answered, as dicts. :class:`ApiRefused` on a refusal."""
        out = []
        for obj in objs:
            res = self.dynamic.resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
            kwargs = {"dry_run": "All"} if dry_run else {}
            asked = f"create {obj['kind'].lower()}/{(obj.get('metadata') or {}).get('name', '')}" + (" (dry run)" if dry_run else "")
            with refusal_as(asked):
                created = res.create(body=obj, namespace=namespace if res.namespaced else None, **kwargs)
            out.append(created.to_dict())
        return out

    def resource(self, kind: str, api_version: str | None = None):
        """The dynamic client's resource of ``kind`` (``api_version`` only where the kind
        exists in several groups, e.g. Event)."""
        return self.dynamic.resources.get(kind=kind, **({"api_version": api_version} if api_version else {}))

    def get(self, kind: str, name: str, namespace: str | None, api_version: str | None = None) -> dict | None:
        """The object ``kind``/``name`` as the API's JSON, or ``None`` if it does not exist."""
        res = self.resource(kind, api_version)
        try:
            return res.get(name=name, namespace=namespace if res.namespaced else None).to_dict()
        except NotFoundError:
            return None

    def patch(self, kind: str, name: str, namespace: str | None, body: dict | list, patch_type: str = "strategic",
              subresource: str | None = None, api_version: str | None = None, dry_run: bool = False) -> dict:
        """Patch ``kind``/``name`` (or its ``subresource``: ``status``, ``resize``...) with
        ``body``; ``patch_type`` one of :data:`PATCH_TYPES`; ``dry_run``: the server validates and
        admits the patch and changes nothing (``?dryRun=All``). Returns the object the server
        answered; :class:`ApiRefused` on a refusal."""
        if patch_type not in PATCH_TYPES:
            raise ValueError(f"patch_type {patch_type!r}: one of {', '.join(PATCH_TYPES)}")
        res = self.resource(kind, api_version)
        target = res.subresources[subresource] if subresource else res
        asked = f"patch {kind.lower()}/{name}" + (f"/{subresource}" if subresource else "") + (" (dry run)" if dry_run else "")
        with refusal_as(asked):
            return target.patch(body=body, name=name, namespace=namespace if res.namespaced else None,
                                content_type=PATCH_TYPES[patch_type], dry_run="All" if dry_run else None).to_dict()

    def delete(self, kind: str, name: str, namespace: str | None, grace_period_s: int | None = None,
               propagation: str | None = None, dry_run: bool = False, api_version: str | None = None) -> dict:
        """Delete ``kind``/``name`` with ``DeleteOptions``: ``grace_period_s`` (``None``: the
        object's own), ``propagation`` (``Foreground``, ``Background``, ``Orphan``), server-side
        ``dry_run``. Returns what the server answered (the object, or a ``Status``);
        :class:`ApiRefused` on a refusal."""
        if propagation not in (None, "Foreground", "Background", "Orphan"):
            raise ValueError(f"propagation {propagation!r}: Foreground, Background or Orphan")
        options: dict = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if grace_period_s is not None:
            options["gracePeriodSeconds"] = grace_period_s
        if propagation:
            options["propagationPolicy"] = propagation
        if dry_run:
            options["dryRun"] = ["All"]
        res = self.resource(kind, api_version)
        with refusal_as(f"delete {kind.lower()}/{name}" + (" (dry run)" if dry_run else "")):
            return res.delete(name=name, namespace=namespace if res.namespaced else None, body=options).to_dict()

    def delete_if_exists(self, kind: str, name: str, api_version: str | None = None, namespace: str | None = None) -> bool:
        """Delete ``kind``/``name`` (cluster-scoped unless ``namespace``); False if it was gone."""
        try:
            self.delete(kind, name, namespace, api_version=api_version)
            return True
        except ApiRefused as e:
            if e.status != 404:
                raise
            return False

    def release_finalizers(self, namespace: str, kinds: list[tuple[str, str]]) -> list[str]:
        """Remove foreign finalizers (:func:`foreign_finalizer`) from every object of ``kinds``
        (``(apiVersion, kind)`` pairs) in ``namespace``: they would keep the namespace
        ``Terminating`` for ever. Returns ``kind/name (finalizer, ...)`` of each released object."""
        released = []
        for api_version, kind in kinds:
            res = self.resource(kind, api_version)
            for obj in res.get(namespace=namespace).to_dict().get("items") or []:
                meta = obj.get("metadata") or {}
                finalizers = meta.get("finalizers") or []
                foreign = [f for f in finalizers if foreign_finalizer(f)]
                if not foreign:
                    continue
                kept = [f for f in finalizers if f not in foreign]
                body = {"metadata": {"finalizers": kept, "resourceVersion": meta.get("resourceVersion")}}
                try:
                    res.patch(body=body, name=meta["name"], namespace=namespace, content_type=PATCH_TYPES["merge"])
                except NotFoundError:
                    continue
                released.append(f"{kind.lower()}/{meta['name']} ({', '.join(foreign)})")
        return released

    def evict(self, namespace: str, pod: str, dry_run: bool = False, grace_period_s: int | None = None,
              uid: str | None = None, resource_version: str | None = None, propagation: str | None = None) -> ApiAnswer:
        """POST the pod's ``eviction`` subresource (policy/v1 ``Eviction``), as ``kubectl drain``
        does, with its ``DeleteOptions`` (``V1DeleteOptions`` of the client): ``grace_period_s``
        (``None``: the pod's own), the preconditions ``uid`` and ``resource_version`` (the eviction
        goes ahead only while the pod has them: 409 Conflict otherwise), ``propagation``
        (``Foreground``, ``Background``, ``Orphan``) and ``dry_run`` (``dryRun=All`` in the request:
        the server checks everything, PodDisruptionBudgets included, and changes nothing). A
        refusal is an answer, not an error: 429 when a PodDisruptionBudget forbids it, 409 for a
        precondition that does not hold, 404 for no such pod. ``ValueError`` for another
        ``propagation``; other transport errors propagate."""
        if propagation not in (None, "Foreground", "Background", "Orphan"):
            raise ValueError(f"propagation {propagation!r}: Foreground, Background or Orphan")
        preconditions = (client.V1Preconditions(uid=uid, resource_version=resource_version)
                         if uid is not None or resource_version is not None else None)
        options = (client.V1DeleteOptions(grace_period_seconds=grace_period_s, preconditions=preconditions,
                                          propagation_policy=propagation)
                   if grace_period_s is not None or preconditions or propagation else None)
        eviction = client.V1Eviction(api_version="policy/v1", kind="Eviction",
                                     metadata=client.V1ObjectMeta(name=pod, namespace=namespace), delete_options=options)
        # the API's JSON (camelCase, unset fields left out), as it goes on the wire
        body: dict = self.api_client.sanitize_for_serialization(eviction)
        kwargs: dict[str, Any] = {"dry_run": "All"} if dry_run else {}
        try:
            # _preload_content=False: urllib3's response (the answer's own status and JSON)
            resp: Any = self.core.create_namespaced_pod_eviction(pod, namespace, body, _preload_content=False,  # type: ignore[arg-type]
                                                                 _request_timeout=self.request_timeout_s, **kwargs)
            return ApiAnswer(resp.status, json.loads(resp.data or b"{}"))
        except ApiException as e:
            try:
                answer = json.loads(e.body or "{}")
            except ValueError:
                answer = {"message": str(e.body)}
            return ApiAnswer(e.status, answer)

    def exec(self, namespace: str, pod: str, container: str, command: list[str], timeout_s: float = 30) -> ExecResult:
        """Run ``command`` in a running container through the API's ``exec`` subresource
        (websocket, as ``kubectl exec``). Raises :class:`ApiRefused` when the API refuses it (no
        such pod or container, not running), :class:`ExecError` when it cannot run (the API's
        message, then the command's whole stderr) or does not end within ``timeout_s``; a non-zero
        exit is a result, not an error."""
        # stream() swaps the client's request function while it connects: a client of its own
        # keeps the recorder's watches (same configuration) untouched
        with client.ApiClient(self.api_client.configuration) as api_client:
            api = client.CoreV1Api(api_client)
            with refusal_as(f"exec {command} in {pod}/{container}"):  # no such pod, pod not running...
                ws = stream(api.connect_get_namespaced_pod_exec, pod, namespace, container=container, command=list(command),
                            stderr=True, stdin=False, stdout=True, tty=False, _preload_content=False)
            try:
                ws.run_forever(timeout=timeout_s)
                if ws.is_open():
                    raise ExecError(f"exec {command} in {pod}/{container}: still running after {timeout_s:g} s")
                stdout, stderr = ws.read_stdout(), ws.read_stderr()
                status = yaml.safe_load(ws.read_channel(ERROR_CHANNEL) or "{}") or {}
            finally:
                ws.close()
        if status.get("status") == "Success":
            return ExecResult(0, stdout, stderr)
        causes = (status.get("details") or {}).get("causes") or []
        code = next((c.get("message") for c in causes if c.get("reason") == "ExitCode"), None)
        if code is None:
            said = f"; stderr: {stderr.strip()}" if stderr.strip() else ""
            raise ExecError(f"exec {command} in {pod}/{container}: {status.get('message') or status or 'no status'}{said}")
        return ExecResult(int(code), stdout, stderr)

    def pod(self, namespace: str, name: str) -> dict:
        return self.api_client.sanitize_for_serialization(self.core.read_namespaced_pod(name, namespace))

    def logs(self, namespace: str, pod: str, container: str, previous: bool = False) -> str:
        """A container's log (``previous=True``: of its previous run). ``ApiException`` propagates."""
        return self.core.read_namespaced_pod_log(
            pod, namespace, container=container, previous=previous, _request_timeout=self.request_timeout_s
        )

    def lease_renewed_at(self, node: str) -> float | None:
        """``spec.renewTime`` (epoch s, µs) of ``node``'s heartbeat Lease in ``kube-node-lease``;
        ``None`` when it has none. ``ApiException`` propagates."""
        lease = client.CoordinationV1Api(self.api_client).read_namespaced_lease(node, "kube-node-lease",
                                                                                 _request_timeout=self.request_timeout_s)
        renewed = lease.spec.renew_time if lease.spec else None
        return renewed.timestamp() if renewed else None

    def nodes(self) -> list[dict]:
        """Every node as the API's JSON (``status.images`` lists what its runtime holds)."""
        return [self.api_client.sanitize_for_serialization(n)
                for n in self.core.list_node(_request_timeout=self.request_timeout_s).items]

    def pods(self, namespace: str) -> list[dict]:
        return [self.api_client.sanitize_for_serialization(p) for p in self.core.list_namespaced_pod(namespace).items]

    def events(self, namespace: str) -> list[dict]:
        return [self.api_client.sanitize_for_serialization(e) for e in self.core.list_namespaced_event(namespace).items]
