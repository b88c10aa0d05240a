"""What a scenario test works with: its namespace, recorder, manifests, waits and judge.

A :class:`Scenario` is made per test by the ``scenario`` fixture of :mod:`e2e.plugin`:
the namespace exists and the recorder watches it before the test applies anything.

Arguments its methods share:

- ``pod``: a pod's name in the test's namespace; ``container``: a container's name in it;
- ``kind``: an API kind (``Pod``, ``Job``, ``Deployment``...); ``name``: an object's name (namespaced
  kinds: in the test's namespace);
- ``api_version``: the ``apiVersion`` of ``kind``, only where the kind is in several groups (``Event``);
- ``what``: what a wait waits for, in words (its progress line, its timeout's message);
- ``timeout_s``: how long a wait (or a command) may take, in seconds;
- ``interval_s``: how often a wait polls, in seconds (default 0.25);
- ``case``: a case ID (``CL-1``); ``measurement``: a measurement name it documents (see :meth:`Scenario.expect`);
- ``grace_period_s``: a delete's grace period in seconds (``None``: the pod's own);
- ``dry_run``: the server only checks the request (server-side dry run) and changes nothing.

Times called "epoch s" are host time (``time.time()``); on kind the nodes share the host's clock.
"""

from __future__ import annotations

import functools
import logging
import socket
import time
import warnings

import pytest
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, TypeVar

from kubernetes.client.exceptions import ApiException

from ..cluster import facts as cluster_facts
from ..cluster import gates
from ..cluster.images import workload_images
from ..cluster.kind import Kind
from ..cluster.nodeaccess import AgentAccess, NodeAccess, NodeRefused, run, shown_selector
from ..cluster.kube import ApiAnswer, ApiRefused, ExecResult, Kube, load_manifests, refusal_as
from ..cluster.stamp_sh import STAMP_SH
from ..judge.expectations import Expectation
from ..judge.measurements import Judge
from ..record.pods import Until, condition, events_of
from ..record.recorder import Change, Recorder
from ..record.timeline import Attempt, attempts, excerpt, mark_rows, rows
from ..base.waiting import WaitTimeout, wait_until

T = TypeVar("T")

# The NodePort every cluster profile publishes on a free port of 127.0.0.1 (kind-config.yaml and
# profiles/*.yaml ``extraPortMappings``): a test's Service that takes load from the host uses it.
NODE_PORT = 30080
# How long apply_node_port waits for an earlier test's Service to give NODE_PORT back (its
# namespace is deleted asynchronously, the Service last of all on a slow API server).
NODE_PORT_WAIT_S = 120
log = logging.getLogger(__name__)


class CleanupWarning(UserWarning):
    """The test left something that cleanup had to force (a finalizer of its own)."""


class PreconditionFailed(AssertionError):
    """What a test needs before it can measure anything did not hold (:meth:`Scenario.require`):
    not a verdict on a documented value."""


HOSTNAME_LABEL = "kubernetes.io/hostname"


def published_on_loopback(port: int, timeout_s: float = 2.0) -> bool:
    """Whether something accepts a TCP connection on ``127.0.0.1:<port>`` (a published NodePort:
    docker's proxy or a tunnel listens whether or not a Service holds the port); only loopback is
    ever asked."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout_s):
            return True
    except OSError:
        return False



def pin_to_nodes(obj: dict, nodes: Sequence[str], tolerations: Sequence[Mapping] = ()) -> dict:
    """Keep the pods of ``obj`` on ``nodes``: its pod spec (a Pod's ``spec``; a workload's
    ``spec.template.spec``; a CronJob's ``spec.jobTemplate.spec.template.spec``) gets
    ``nodeSelector: {kubernetes.io/hostname: <node>}`` for one node, for several a required
    nodeAffinity ``kubernetes.io/hostname In [nodes]`` (added to each of its own terms, which
    stay), and each of ``tolerations`` it does not carry yet (the taint of a room,
    e2e.cluster.rooms); other objects are left as they are. Returns ``obj``."""
    spec = obj.get("spec")
    kind = obj.get("kind")
    if not isinstance(spec, dict) or not nodes:
        return obj
    if kind == "CronJob":
        spec = ((spec.get("jobTemplate") or {}).get("spec") or {}).get("template", {}).get("spec")
    elif kind != "Pod":
        spec = (spec.get("template") or {}).get("spec") if isinstance(spec.get("template"), dict) else None
    if not isinstance(spec, dict):
        return obj
    own = spec.get("tolerations") or []
    if any(t not in own for t in tolerations):
        spec["tolerations"] = [*own, *(dict(t) for t in tolerations if t not in own)]
    if len(nodes) == 1:
        spec["nodeSelector"] = {**(spec.get("nodeSelector") or {}), HOSTNAME_LABEL: nodes[0]}
        return obj
    on = {"key": HOSTNAME_LABEL, "operator": "In", "values": sorted(nodes)}
    required = (spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})
                .setdefault("requiredDuringSchedulingIgnoredDuringExecution", {}))
    terms = required.setdefault("nodeSelectorTerms", [])
    if not terms:
        terms.append({})
    for term in terms:
        term["matchExpressions"] = [*(term.get("matchExpressions") or []), on]
    return obj


@dataclass
class Scenario:
    """One test's view of the cluster, made by the ``scenario`` fixture (a test never builds one).

    What a test reads of it: ``kube`` (:class:`e2e.cluster.kube.Kube`: the API clients),
    ``namespace`` (the test's own, fresh), ``recorder`` (:class:`e2e.record.recorder.Recorder`:
    ``recorder.changes("Pod", "web")`` is a pod's recording), ``judge``
    (:class:`e2e.judge.measurements.Judge`), ``manifest_dir`` (the test file's folder, where
    :meth:`apply` reads), ``kubernetes_minor`` (the cluster's ``1.<minor>``), ``cgroup`` the node's
    cgroup version (1 or 2; None on a ``--kubeconfig`` cluster), ``kind`` (the kind cluster; None
    on a ``--kubeconfig`` one), ``access`` (the way into its nodes, :mod:`e2e.cluster.nodeaccess`:
    ``docker exec`` on kind, the node agent with ``--node-agent``, else None), ``profile`` (the
    cluster profile, ``@pytest.mark.profile``), ``nodes`` the nodes the test's pods are kept on (on a
    ``--kubeconfig`` cluster, the nodes whose facts satisfy the profile, :mod:`e2e.cluster.facts`;
    in the rooms cluster its profile's room, :mod:`e2e.cluster.rooms`; else ``()``: anywhere),
    ``tolerations`` what those pods tolerate there (a room's taint), ``elsewhere`` the nodes of
    the other rooms (a fault's health check leaves them out),
    ``facts`` the cluster's facts read at the start (:meth:`lifecycle` reads them).
    ``t0`` (epoch s) is when the first manifest was applied (the recorder's start before
    that); ``marks`` are ``(epoch s, label)`` moments drawn on the report's picture;
    ``files`` are the test's own report files (:meth:`add_file`), ``properties`` its
    :meth:`note` facts. The framework's own: ``on_broken`` and ``broken`` (a fault left the
    cluster broken: :meth:`cluster_broken`), ``applied_kinds`` and ``cluster_objects`` (what
    :meth:`apply` created, for :meth:`clean_up`).
    """

    kube: Kube
    namespace: str
    recorder: Recorder
    judge: Judge
    manifest_dir: Path
    kubernetes_minor: int
    cgroup: int | None
    kind: Kind | None = None
    # the way into the nodes (e2e.cluster.nodeaccess): docker exec on a kind cluster, the node
    # agent on a --kubeconfig one (None: no node access)
    access: NodeAccess | None = None
    # the cluster profile (@pytest.mark.profile) and what replaces its cluster when a fault
    # left it broken (e2e.faults.core; the plugin's Clusters.replace_broken)
    profile: str = "default"
    # the nodes this test's pods are kept on (:func:`pin_to_nodes`, :meth:`manifests`): on a
    # --kubeconfig cluster, the nodes whose facts satisfy the profile (e2e.cluster.facts); else () (anywhere)
    nodes: tuple[str, ...] = ()
    # the cluster's facts read at the start (e2e.cluster.facts.collect, with "controller_manager")
    facts: dict | None = None
    # the tolerations every pod kept on :attr:`nodes` gets (a room's taint, e2e.cluster.rooms)
    tolerations: tuple[dict, ...] = ()
    # the nodes of the rooms cluster's other rooms, which a fault's health check leaves out (e2e.faults.core)
    elsewhere: tuple[str, ...] = ()
    on_broken: Callable[[str], None] | None = None
    broken: str | None = None
    t0: float = 0.0
    marks: list[tuple[float, str]] = field(default_factory=list)
    # what apply created: (apiVersion, kind) of namespaced objects; (apiVersion, kind, name) of
    # cluster-scoped ones (deleted by clean_up)
    applied_kinds: set[tuple[str, str]] = field(default_factory=set)
    cluster_objects: list[tuple[str, str, str]] = field(default_factory=list)
    files: dict[str, str | bytes | Callable[[], str | bytes]] = field(default_factory=dict)
    properties: list[tuple[str, str]] = field(default_factory=list)

    def manifests(self, filename: str, **values: object) -> list[dict]:
        """The objects (the API's JSON) of ``manifest_dir/filename`` with ``${placeholders}`` filled from ``values``,
        the pinned workload images and ``${stamp_sh}`` (the stamp shell functions,
        :data:`e2e.cluster.stamp_sh.STAMP_SH`); ``ManifestError`` on a bad file. With :attr:`nodes`
        set, every pod and pod template is kept on them (:func:`pin_to_nodes`)."""
        objs = load_manifests(self.manifest_dir / filename, {**workload_images(), "stamp_sh": STAMP_SH, **values})
        for obj in objs:
            pin_to_nodes(obj, self.nodes, self.tolerations)
        return objs

    def apply(self, filename: str, dry_run: bool = False, **values: object) -> list[dict]:
        """Create the objects of the manifest file ``filename`` (``${placeholders}`` filled from
        ``values``, as :meth:`manifests`) in the namespace, or only check them (``dry_run``);
        returns them as the server answered. The first (real) apply sets ``t0``.

        Cluster-scoped objects (RuntimeClass, PriorityClass...) are created too and deleted by
        :meth:`clean_up` after the test, like the namespace. A refusal of the API (a dry run's
        validation error too) is :class:`e2e.cluster.kube.ApiRefused`."""
        objs = self.manifests(filename, **values)
        when = time.time()
        created = []
        try:
            for obj in objs:  # one by one: what was created before a refusal is still cleaned up
                (answer,) = self.kube.apply([obj], self.namespace, dry_run=dry_run)
                created.append(answer)
                if dry_run:
                    continue
                meta = answer.get("metadata") or {}
                key = (answer.get("apiVersion") or obj["apiVersion"], answer.get("kind") or obj["kind"])
                if meta.get("namespace"):
                    self.applied_kinds.add(key)
                else:
                    self.cluster_objects.append((*key, meta.get("name") or obj["metadata"]["name"]))
        finally:
            if not dry_run and created:
                if not self.t0:
                    self.t0 = when
                self.mark(when, f"apply {filename}")
        return created

    def node_exec(self, *cmd: str, timeout: float = 30, node: str | None = None) -> str:
        """Run ``cmd`` in ``node``'s namespaces through :attr:`access` (``docker exec`` into a kind
        node, or the node agent on a ``--kubeconfig`` cluster: e2e.cluster.nodeaccess), for at most
        ``timeout`` seconds; returns its stdout, ``RuntimeError`` with its stderr when it exits non-zero.
        The default node: the first of the nodes the test's pods are kept on (:attr:`nodes`), else the control
        plane of a kind cluster (every pod of a one-node cluster runs there), else through the agent
        the first worker by name (a test reading a pod's own node names it: :meth:`node_of`). Skips the test without node access, and for a node the agent must not enter
        (a control-plane node)."""
        if self.access is None:
            pytest.skip("needs node access (docker exec into a kind node, or the node agent: --node-agent)")
        if node is None:
            node = self.default_node()
        try:
            return run(self.access, node, cmd, timeout)
        except NodeRefused as e:
            pytest.skip(str(e))

    def lifecycle(self, node: str) -> cluster_facts.Lifecycle:
        """The node-lifecycle settings of ``node`` from the cluster's facts (:func:`e2e.cluster.facts.lifecycle`:
        its kubelet's lease duration, the controller manager's grace and monitor periods, each with
        where it came from); skips the test naming the fact when they are unknown."""
        try:
            return cluster_facts.lifecycle(self.facts or {}, node)
        except ValueError as e:
            pytest.skip(f"needs the node-lifecycle settings: {e}")

    def controller_manager_gates(self) -> gates.Gates:
        """The controller manager's feature gates: on a kind cluster the suite made, read live in its
        control-plane node (:func:`e2e.cluster.gates.controller_manager`); on a ``--kubeconfig``
        cluster, whose control-plane node the suite does not enter, ``--cluster-facts``
        ``controllerManager.feature-gates`` over the API server's live gates, the source saying so
        (:func:`e2e.cluster.gates.controller_manager_assumed`). :class:`e2e.cluster.gates.GatesUnreadable`
        when neither can be read."""
        if self.kind is not None:  # its control plane, wherever the test's pods are kept (a room)
            return gates.controller_manager(functools.partial(self.node_exec, node=self.kind.control_plane))
        given = ((self.facts or {}).get("controller_manager") or {}).get("feature_gates") or {}
        return gates.controller_manager_assumed(gates.api_server(self.kube), given.get("gates") or {}, given.get("from"))

    def default_node(self) -> str:
        """The node :meth:`node_exec` enters when none is named (see there); skips the test when the
        agent has no worker to enter."""
        if self.nodes:
            return self.nodes[0]
        if self.kind is not None:
            return self.kind.control_plane
        workers = self.access.workers() if isinstance(self.access, AgentAccess) else []  # docker: kind only
        if not workers:
            if isinstance(self.access, AgentAccess) and self.access.selector:
                pytest.skip("needs a worker node for the node agent: no worker matches --node-selector "
                            f"{shown_selector(self.access.selector)} (it never enters a control-plane node)")
            pytest.skip("needs a worker node for the node agent (it never enters a control-plane node); the cluster has none")
        return workers[0]

    def apply_node_port(self, filename: str, **values: Any) -> list[dict]:
        """:meth:`apply` the manifest ``filename`` (``${placeholders}`` filled from ``values``) whose
        first object is a Service on :data:`NODE_PORT`, retried
        every second while the port is still allocated to an earlier test's Service (the API
        answers 422 "already allocated" and creates nothing), for at most
        :data:`NODE_PORT_WAIT_S` s; returns the created objects. :class:`WaitTimeout` when the
        port stays taken; any other refusal raises :class:`e2e.cluster.kube.ApiRefused` at once.
        Pair it with :meth:`release_node_port` in a ``finally``."""
        def apply() -> list[dict] | None:
            try:
                return self.apply(filename, **values)
            except ApiRefused as e:
                if e.status == 422 and "already allocated" in e.message:
                    return None
                raise
        return self.wait_for(f"NodePort {NODE_PORT} free (an earlier test's Service may still hold it)", apply,
                             NODE_PORT_WAIT_S, interval_s=1)

    def release_node_port(self, service: str = "web") -> None:
        """Delete the Service ``service`` now, not with the namespace later, so that the next test
        gets :data:`NODE_PORT` at once; an already deleted Service is fine."""
        try:
            self.kube.core.delete_namespaced_service(service, self.namespace)
        except ApiException as e:
            if e.status != 404:
                raise

    def node_port_url(self, node_port: int = NODE_PORT, path: str = "/") -> str:
        """``http://127.0.0.1:<host port><path>`` where the cluster's ``node_port`` is published
        (kind config ``extraPortMappings``, a free host port per cluster); on a ``--kubeconfig``
        cluster the NodePort itself (it must be published 1:1 on 127.0.0.1): when nothing listens
        there, the test is skipped saying so (:func:`published_on_loopback`)."""
        port = self.kind.host_port(node_port) if self.kind else node_port
        if self.kind is None and not published_on_loopback(port):
            pytest.skip(f"needs the NodePort {port} published on 127.0.0.1 (a kind cluster: extraPortMappings "
                        f"containerPort {port} hostPort {port} listenAddress 127.0.0.1; else a tunnel); nothing listens there")
        return f"http://127.0.0.1:{port}{path}"

    def cluster_broken(self, reason: str) -> None:
        """The cluster did not recover from a fault (``reason``): a kind cluster of the run is
        replaced (its logs exported, the next test of this profile gets a new one); a
        ``--kubeconfig`` cluster is never replaced: the run stops (e2e.faults.core, e2e.plugin.fixtures)."""
        log.error("cluster of profile %s is broken: %s", self.profile, reason)
        self.broken = reason
        if self.on_broken is not None:
            self.on_broken(reason)

    def add_file(self, name: str, content: str | bytes | Callable[[], str | bytes]) -> None:
        """Add the file ``name`` with ``content`` to the test's files (its folder ``reports/<run-id>/<test>/``, named on the
        report's test page); a ``.png`` is also shown inline on that page. Kept however the test
        ends. A callable is read when the files are gathered (a log still being followed)."""
        self.files[name] = content

    def note(self, name: str, value: object) -> None:
        """An environment fact ``name`` = ``value`` of this test, not a judged value (the node's cgroup version, a
        clamped OOM score): a JUnit property and an allure parameter."""
        self.properties.append((name, str(value)))

    def explain_with(self, context: str) -> None:
        """Failures judged from now on quote ``context`` (e.g. the timeline merged with the
        containers' stamps) instead of the recorded timeline's end."""
        self.judge.context = lambda: context

    def require(self, value: T, what: str) -> T:
        """``value`` when truthy; else :class:`PreconditionFailed` saying ``what`` the test needed
        (a precondition of the measurement, never a documented value: those are judged)."""
        if not value:
            raise PreconditionFailed(f"precondition failed: {what}")
        return value

    def mark(self, when: float, label: str) -> None:
        """Draw the moment ``when`` (epoch s) with ``label`` on the report's picture and timeline."""
        self.marks.append((when, label))

    def pod(self, name: str) -> dict | None:
        """The newest recorded state of pod ``name``."""
        return self.recorder.latest("Pod", name)

    def node_of(self, pod: str) -> str | None:
        """The node pod ``pod`` of the test's namespace runs on: its recorded ``spec.nodeName``;
        ``None`` before it was scheduled. A reading of that pod in its node (its cgroup, the kernel
        log of its OOM kill) names it: ``node_exec(…, node=sc.node_of(pod))``."""
        return ((self.pod(pod) or {}).get("spec") or {}).get("nodeName")

    def wait_for(self, what: str, check: Callable[[], T | None], timeout_s: float, interval_s: float = 0.25,
                 case: str | None = None, measurement: str | None = None, explain: Callable[[], str] | None = None) -> T:
        """Poll ``check`` until truthy (see :func:`e2e.base.waiting.wait_until`) and return its
        result; raises ``WaitTimeout`` after ``timeout_s``, the error carrying the end of the timeline. With ``case``/``measurement`` a timeout is also a
        judged value: ``measurement`` is recorded as measured ``None`` (it never happened within
        ``timeout_s``) against its documented expectation, and ``ExpectationFailed`` is raised
        explaining it (case, documented value, band, source, the wait) like any failed value.
        Raises ``RecorderDied`` instead when the recording stopped meanwhile. ``explain`` adds
        what the scenario knows of the missing part (e.g. which pods have not ended) to the error."""
        def describe() -> str:
            return ("\n" + explain() if explain else "") + "\n" + self.timeline_excerpt()

        try:
            return wait_until(what, check, timeout_s, interval_s, describe=describe)
        except WaitTimeout as e:
            self.recorder.check()
            if case and measurement:
                self.judge.expect(case, measurement, None, context=str(e), details={"timed_out_after_s": timeout_s, "waited_for": what})
                self.judge.verify()
            raise

    def wait(self, until: Until[T], timeout_s: float, interval_s: float = 0.25,
             case: str | None = None, measurement: str | None = None) -> T:
        """Wait for the named condition ``until`` (:mod:`e2e.record.pods`: ``pod_phase``, ``container_running``,
        ``endpoint_ready``...) as :meth:`wait_for` does; returns what its check found."""
        return self.wait_for(until.what, lambda: until.check(self), timeout_s, interval_s, case=case, measurement=measurement)

    def never_within(self, duration_s: float, what: str, check: Callable[[], object], interval_s: float = 0.25) -> bool:
        """Watch for ``duration_s`` seconds that ``check`` stays falsy (``what`` does not happen).

        Returns True when it never happened, False as soon as it did (the caller judges it).
        Raises ``RecorderDied`` when the recording died or had a gap during the window: an
        absence is only true on a complete recording.
        """
        since = time.time()
        try:
            wait_until(what, check, duration_s, interval_s, absence=True)
        except WaitTimeout:
            self.recorder.check(since=since)
            return True
        return False

    def first_within(self, duration_s: float, what: str, check: Callable[[], T | None], interval_s: float = 0.25) -> T | None:
        """Poll ``check`` for at most ``duration_s`` seconds: returns its first truthy result, or None.
        Never fails: a wait that ends early when something happens (a restart, a probe run), for a
        test that judges what it then sees. An absence to be judged is :meth:`never_within`."""
        try:
            return wait_until(what, check, duration_s, interval_s)
        except WaitTimeout:
            return None

    def clean_up(self, keep_namespace: bool = False) -> None:
        """After the test: release objects held by foreign finalizers, delete the namespace,
        delete the cluster-scoped objects :meth:`apply` created (newest first).

        A finalizer of the test's own (not ``*kubernetes.io/``, ``*k8s.io/`` or a garbage
        collector one) on a pod or on an object of a kind the test applied would leave the
        namespace stuck in ``Terminating``: it is removed with a :class:`CleanupWarning` naming
        the objects. ``keep_namespace`` (``--keep-namespaces`` of a failed test) keeps the
        namespace and the cluster-scoped objects its pods may need, and says so. After
        :meth:`cluster_broken` nothing is cleaned: a kind cluster of the run is being replaced, its
        namespaces go with it; a ``--kubeconfig`` cluster stays, the run stops and its end deletes
        the run's namespaces.
        """
        if self.broken:
            fate = ("replaced" if self.kind is not None
                    else "kept with its node for you; the run stops and its end deletes this run's namespaces")
            log.warning("not cleaning namespace %s: its cluster is broken and %s (%s)", self.namespace, fate, self.broken)
            return
        if keep_namespace:
            kept = ", ".join(f"{kind.lower()}/{name}" for _, kind, name in self.cluster_objects)
            log.warning("keeping namespace %s%s", self.namespace, f" and cluster-scoped {kept}" if kept else "")
            return
        try:
            released = self.kube.release_finalizers(self.namespace, sorted({("v1", "Pod"), *self.applied_kinds}))
            if released:
                msg = (f"namespace {self.namespace}: removed finalizers that would keep it Terminating: "
                       + "; ".join(released))
                log.warning("%s", msg)
                warnings.warn(CleanupWarning(msg), stacklevel=2)
        finally:
            try:
                self.kube.delete_namespace(self.namespace)
            finally:
                for api_version, kind, name in reversed(self.cluster_objects):
                    self.kube.delete_if_exists(kind, name, api_version)

    # -- acting on objects (each action is a mark on the picture; a refusal of the API, whatever
    # the helper, is e2e.cluster.kube.ApiRefused: status, reason and message on its first line) --
    def get(self, kind: str, name: str, api_version: str | None = None) -> dict | None:
        """``kind``/``name`` as the API's JSON (namespaced kinds: in this namespace): the
        recorder's newest copy when it records ``kind``, else read from the API; ``None`` if
        it does not exist."""
        if kind in self.recorder.kinds:
            return self.recorder.latest(kind, name)
        return self.kube.get(kind, name, self.namespace, api_version)

    def patch(self, kind: str, name: str, body: dict | list, patch_type: str = "strategic",
              subresource: str | None = None, api_version: str | None = None, dry_run: bool = False) -> dict:
        """Patch ``kind``/``name`` with ``body`` (``patch_type``: ``strategic``, ``merge`` or ``json``; a
        ``subresource`` such as ``status``; ``dry_run``: only validated and admitted, nothing changes);
        returns the patched object; :class:`e2e.cluster.kube.ApiRefused` on a refusal. See
        :meth:`e2e.cluster.kube.Kube.patch`.

        A namespaced kind is patched in the test's namespace; a cluster-scoped one (``Node``,
        ``PersistentVolume``…) by its name alone, e.g. ``sc.patch("Node", sc.kind.control_plane,
        {"metadata": {"labels": {"disk": "ssd"}}})``. Such a change outlives the test's namespace
        and every test on the cluster sees it: undo it in a ``finally`` (a label: patch it to
        ``None``) and mark the test ``serial``."""
        if not dry_run:
            self.mark(time.time(), f"patch {kind.lower()}/{name}" + (f"/{subresource}" if subresource else ""))
        return self.kube.patch(kind, name, self.namespace, body, patch_type, subresource, api_version, dry_run)

    def resize(self, pod: str, container: str, requests: dict[str, str] | None = None,
               limits: dict[str, str] | None = None, dry_run: bool = False) -> dict:
        """In-place resize of ``container``'s resources (``requests``, ``limits``) through ``pod``'s ``resize``
        subresource (Kubernetes 1.33+), e.g. ``resize("app", "app", limits={"memory": "64Mi"})``;
        returns the pod; ``ValueError`` for neither; :class:`e2e.cluster.kube.ApiRefused` when the API
        refuses the resize (e.g. 403 Forbidden by a ResourceQuota, 422 Invalid). Whether the kubelet
        applied it shows in ``status.containerStatuses[].resources`` and the
        ``PodResizePending``/``PodResizeInProgress`` conditions. ``dry_run``: the API validates and
        admits the resize (the same refusals) and changes nothing."""
        if not (requests or limits):
            raise ValueError("resize needs requests or limits")
        resources = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
        body = {"spec": {"containers": [{"name": container, "resources": resources}]}}
        return self.patch("Pod", pod, body, subresource="resize", dry_run=dry_run)

    def evict(self, pod: str, dry_run: bool = False, grace_period_s: int | None = None, uid: str | None = None,
              resource_version: str | None = None, propagation: str | None = None) -> ApiAnswer:
        """Ask the Eviction API to evict ``pod`` with the eviction's delete options: ``grace_period_s``,
        the preconditions ``uid`` and ``resource_version`` (evict only the pod of that UID, only
        while it has that resourceVersion: 409 Conflict otherwise, the pod untouched),
        ``propagation`` (``Foreground``/``Background``/``Orphan``) and ``dry_run`` (the server
        checks all, the PodDisruptionBudgets too, and changes nothing). Returns the answer's
        status code and body (a ``Status``): 201 evicted (or, dry run, would be), 429 refused by a
        PodDisruptionBudget (its message says which), 409 a precondition failed, 404 no such pod —
        a refusal is an answer here, never an error. ``ValueError`` for another ``propagation``.
        See :meth:`e2e.cluster.kube.Kube.evict`. E.g. ``sc.evict("web", uid=sc.pod("web")["metadata"]["uid"])``."""
        self.mark(time.time(), f"evict pod/{pod}" + (" (dry run)" if dry_run else ""))
        return self.kube.evict(self.namespace, pod, dry_run, grace_period_s, uid, resource_version, propagation)

    def exec(self, pod: str, container: str, *command: str, timeout_s: float = 30) -> ExecResult:
        """Run ``command`` in ``pod``'s running ``container`` through the API (as ``kubectl exec``;
        works on any cluster). Returns exit code, stdout and stderr; :class:`e2e.cluster.kube.ApiRefused`
        when the API refuses it (no such pod or container, not running), :class:`e2e.cluster.kube.ExecError`
        when it cannot run otherwise (command not found, timeout)."""
        self.mark(time.time(), f"exec {pod}/{container}: {' '.join(command)}"[:60])
        return self.kube.exec(self.namespace, pod, container, list(command), timeout_s)

    def delete(self, kind: str, name: str, grace_period_s: int | None = None, propagation: str | None = None,
               dry_run: bool = False, api_version: str | None = None) -> dict:
        """Delete ``kind``/``name`` with options (``grace_period_s``, ``propagation`` ``Foreground``/``Background``/
        ``Orphan``, ``dry_run``); returns the server's answer; :class:`e2e.cluster.kube.ApiRefused` on a
        refusal (404 when it does not exist)."""
        if not dry_run:
            self.mark(time.time(), f"delete {kind.lower()}/{name}")
        return self.kube.delete(kind, name, self.namespace, grace_period_s, propagation, dry_run, api_version)

    def delete_pod(self, pod: str, grace_period_s: int | None = None) -> float:
        """Delete ``pod`` (with ``grace_period_s`` in the request when given; else the pod's own);
        returns the epoch s read just before the request (the containers' clock on kind) and marks it;
        :class:`e2e.cluster.kube.ApiRefused` on a refusal (404 when it does not exist)."""
        when = time.time()
        opts: dict[str, Any] = {} if grace_period_s is None else {"grace_period_seconds": grace_period_s}
        with refusal_as(f"delete pod/{pod}"):
            self.kube.core.delete_namespaced_pod(pod, self.namespace, **opts)
        self.mark(when, f"delete {pod}" + (f" (grace {grace_period_s} s)" if grace_period_s is not None else ""))
        return when

    def events(self, reason: str, involved: str | None = None) -> list[Change]:
        """The recorded Events of ``reason`` (about the object named ``involved``), oldest first:
        :class:`~e2e.record.recorder.Change` rows whose ``obj`` is the core/v1 Event (``obj["message"]``,
        ``obj["count"]``, ``obj["lastTimestamp"]``) and ``received_at`` the host epoch s it arrived; a
        repeated Event is one row per new ``count``."""
        return events_of(self.recorder.changes("Event"), reason, involved)

    def wait_for_condition(self, kind: str, name: str, type_: str, status: str = "True", timeout_s: float = 60,
                           api_version: str | None = None, interval_s: float = 0.25,
                           case: str | None = None, measurement: str | None = None) -> dict:
        """Wait until ``kind``/``name`` has condition ``type_`` with ``status`` (Job ``Complete``,
        Deployment ``Available``, PodDisruptionBudget ``DisruptionAllowed``, Pod ``Ready``...);
        returns the condition (``reason``, ``message``, ``lastTransitionTime``). ``WaitTimeout``
        after ``timeout_s`` seconds, with the end of the timeline; with ``case``/``measurement``
        the timeout is judged as that value never happening (see :meth:`wait_for`)."""
        def check() -> dict | None:
            found = condition(self.get(kind, name, api_version), type_)
            return found if found and found.get("status") == status else None

        return self.wait_for(f"{kind}/{name} condition {type_}={status}", check, timeout_s, interval_s,
                             case=case, measurement=measurement)

    def attempts(self, pod: str, container: str) -> list[Attempt]:
        """Every run of ``container`` in ``pod`` recorded so far, oldest first: its API start and
        finish times (epoch s, whole seconds), exit code and reason (:class:`e2e.record.timeline.Attempt`)."""
        return attempts(self.recorder.changes("Pod"), pod, container)

    def timeline_excerpt(self, around: float | None = None, width_s: float = 30.0) -> str:
        """The recorded table with the test's own actions (:attr:`marks`) put in: the actions that
        led to ``around`` (epoch s) and the rows nearest it within ``width_s`` seconds, or those
        that led to the end and the last rows — 25 rows in time order (see
        :func:`e2e.record.timeline.excerpt`)."""
        t0 = self.t0 or self.recorder.started_at or 0.0
        table = sorted(rows(self.recorder.changes(), t0) + mark_rows(self.marks, t0), key=lambda r: r.t)
        return excerpt(table, None if around is None else around - t0, width_s)

    def expect(self, case: str, name: str, value: float | int | str | None, around: float | None = None, context: str | None = None,
               details: dict | None = None, expectation: Expectation | None = None, **params: object) -> bool:
        """Judge ``value`` as the measurement ``name`` of ``case`` (see :meth:`e2e.judge.measurements.Judge.expect`:
        ``details`` go into ``measurements.json``, ``params`` fill the documented string's
        ``{placeholders}``); returns True when it holds. Raises ``UnknownMeasurement`` for a name
        never documented. A failure's context is
        ``context`` if given, else the timeline around ``around`` (epoch s), else its end. ``expectation``:
        the documented value built from the cluster's own settings, judged instead of the registry's
        (:meth:`e2e.judge.measurements.Judge.expect_against`; ``ValueError`` when its case or name
        is not ``case``/``name``)."""
        if context is None and around:
            context = self.timeline_excerpt(around)
        if expectation is not None:
            if (expectation.case, expectation.name) != (case, name) or params:
                raise ValueError(f"{case} {name}: judged against {expectation.case} {expectation.name}"
                                 + (f" with placeholders {sorted(params)}" if params else ""))
            return self.judge.expect_against(expectation, value, context=context, details=details)
        return self.judge.expect(case, name, value, context=context, details=details, **params)
