"""Watch a namespace's pods and events (and, when a test asks, EndpointSlices, Jobs,
Deployments, ReplicaSets, PodDisruptionBudgets, the cluster's Nodes and the node Leases of
``kube-node-lease``) and keep every change.

The recorder starts *before* a scenario applies its manifests: it lists each kind to get a
resourceVersion, then watches from there, so no change after the list is missed. Each change
is kept with the time this process received it (``time.time()``, seconds since the epoch):
the client's clock, which on kind is the node's kernel clock too (see CASES.md "Measuring
timings honestly"). API timestamps inside the objects keep their own 1 s resolution.

A watch that drops (API server restarting, connection reset) is reconnected from the last
resourceVersion it saw (re-listed when that is too old, 410), retrying with a back-off of 1, 2,
4 s (at most :data:`RETRY_MAX_S`) for as long as the API is away; the time without a watch is
kept as a ``GAP`` change (kind ``Recorder``) — a gap is reported, never filled in. A fault that
takes the API away (e2e.faults) declares its window (:meth:`Recorder.declare_fault`, a ``FAULT``
change of kind ``Fault``): a gap inside it is expected and shown as such, not a failure; an
absence check over it still raises (nothing inside a gap may be judged). A watch thread
that ends for any other reason makes the recorder *dead*: :meth:`Recorder.check` raises
:class:`RecorderDied`, so no absence check can pass on a recording that stopped.
"""

from __future__ import annotations

import gzip
import json
import logging
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Iterable

from kubernetes import client, watch
from kubernetes.client.exceptions import ApiException
from urllib3.exceptions import HTTPError as urllib3_errors

log = logging.getLogger(__name__)

# Server-side watch timeout (s): how long a stopped recorder may take to notice it was stopped.
WATCH_CHUNK_S = 2
# Seconds between reconnect attempts of a dropped watch: 1, 2, 4, then this at most.
RETRY_MAX_S = 4.0
# The namespace of the nodes' heartbeat Leases (kubelet: component-helpers apimachinery/lease).
NODE_LEASE_NAMESPACE = "kube-node-lease"


@dataclass(frozen=True)
class Change:
    """One observed change: ``type`` is LISTED, ADDED, MODIFIED or DELETED; ``obj`` the
    object as the API's JSON (camelCase dict); ``received_at`` epoch seconds."""

    received_at: float
    kind: str
    type: str
    name: str
    obj: dict


def _revision(change: Change) -> int:
    rv = (change.obj.get("metadata") or {}).get("resourceVersion")
    try:
        return int(str(rv))
    except ValueError:
        raise ValueError(f"{change.kind}/{change.name} received at {change.received_at} has no numeric resourceVersion "
                         f"({rv!r}): the write order is read from etcd3's revisions") from None


def written_before(a: Change, b: Change) -> bool:
    """Whether the write that change ``a`` shows came before the one ``b`` shows, in the API's one
    order of writes: etcd3's revision, each object's ``metadata.resourceVersion`` (a DELETED: the
    revision of the delete), global across keys and kinds. Each kind is watched on a thread of its
    own, so two kinds' changes are received in no common order (a Job's change, caused by a pod's,
    can arrive first: ``e2e.documented.faults.WATCH_ORDER_S``); an order across kinds is read here,
    not from ``received_at``. ``ValueError`` when either has no numeric resourceVersion."""
    return _revision(a) < _revision(b)


class RecorderDied(RuntimeError):
    """The recording is incomplete: a watch thread ended, or (for a checked window) the watch
    was down for part of it. The message carries the watch errors."""


# the recorder's own entries in a recording: a GAP (kind Recorder, name = the watched kind,
# obj = {"from": epoch s, "to": epoch s, "error": text}); after a gap the watch resumes from
# its last resourceVersion, or re-lists (LISTED changes) when the API answers 410
GAP_KIND = "Recorder"
# a fault window declared by e2e.faults: kind Fault, type FAULT, name = the fault, obj =
# {"from": epoch s, "to": epoch s, "node": node container}
FAULT_KIND = "Fault"


def _list_functions(api_client: client.ApiClient) -> dict[str, Callable]:
    """Kind -> its list function, called ``f(namespace, **kwargs)``; cluster-scoped kinds
    (Node) and the node Leases (always of ``kube-node-lease``) take the namespace and ignore it:
    they are recorded cluster-wide."""
    core = client.CoreV1Api(api_client)
    discovery = client.DiscoveryV1Api(api_client)
    batch = client.BatchV1Api(api_client)
    apps = client.AppsV1Api(api_client)
    policy = client.PolicyV1Api(api_client)
    autoscaling = client.AutoscalingV2Api(api_client)
    coordination = client.CoordinationV1Api(api_client)

    def list_node(_namespace: str, **kwargs):
        return core.list_node(**kwargs)

    def list_node_lease(_namespace: str, **kwargs):
        return coordination.list_namespaced_lease(NODE_LEASE_NAMESPACE, **kwargs)

    return {
        "Pod": core.list_namespaced_pod,
        "Event": core.list_namespaced_event,
        "EndpointSlice": discovery.list_namespaced_endpoint_slice,
        "Job": batch.list_namespaced_job,
        "Deployment": apps.list_namespaced_deployment,
        "ReplicaSet": apps.list_namespaced_replica_set,
        "StatefulSet": apps.list_namespaced_stateful_set,
        "HorizontalPodAutoscaler": autoscaling.list_namespaced_horizontal_pod_autoscaler,
        "PodDisruptionBudget": policy.list_namespaced_pod_disruption_budget,
        "Node": list_node,
        "Lease": list_node_lease,
    }


class Recorder:
    """Keeps every change of ``kinds`` in ``namespace`` from :meth:`start` to :meth:`stop`.

    Thread-safe; use as a context manager. Errors of the watch threads are kept in
    :attr:`errors` (and logged) rather than lost.
    """

    def __init__(self, api_client: client.ApiClient, namespace: str, kinds: Iterable[str] = ("Pod", "Event")):
        self.namespace = namespace
        self.kinds = tuple(kinds)
        self._api_client = api_client
        self._list = _list_functions(api_client)
        unknown = set(self.kinds) - set(self._list)
        if unknown:
            raise ValueError(f"cannot record {sorted(unknown)}; known kinds: {sorted(self._list)}")
        self._changes: list[Change] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.errors: list[str] = []
        self.started_at: float | None = None
        self._dead: dict[str, str] = {}
        self._down_since: dict[str, tuple[float, str]] = {}
        self._kill: dict[str, str] = {}
        self._failures: dict[str, int] = {}

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> "Recorder":
        """List every kind (kept as LISTED changes), then watch from that resourceVersion."""
        self.started_at = time.time()
        for kind in self.kinds:
            rv = self._relist(kind)
            t = threading.Thread(target=self._watch, args=(kind, rv), name=f"recorder-{kind}", daemon=True)
            t.start()
            self._threads.append(t)
        return self

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(timeout=WATCH_CHUNK_S + 5)

    def __enter__(self) -> "Recorder":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _relist(self, kind: str) -> str:
        result = self._list[kind](self.namespace, _preload_content=False)
        body = json.loads(result.data)
        now = time.time()
        for item in body.get("items") or []:
            item.setdefault("kind", kind)
            self._add(Change(now, kind, "LISTED", item["metadata"]["name"], item))
        return body["metadata"]["resourceVersion"]

    def _watch(self, kind: str, rv: str) -> None:
        try:
            self._watch_loop(kind, rv)
        except BaseException as e:  # noqa: BLE001 - a thread that ends must be known, not silent
            msg = f"{kind} watch ended: {type(e).__name__}: {e}"
            log.error("recorder %s: %s", self.namespace, msg)
            with self._lock:
                self.errors.append(msg)
                self._dead[kind] = msg

    def _watch_loop(self, kind: str, rv: str) -> None:
        while not self._stop.is_set():
            if kind in self._kill:
                raise RuntimeError(self._kill[kind])
            w = watch.Watch()
            try:
                if kind in self._down_since:
                    try:
                        self._list[kind](self.namespace, limit=1, _request_timeout=5)  # the API answers again
                    except ApiException as e:
                        if e.status != 410:
                            raise
                    self._close_gap(kind)
                for ev in w.stream(
                    self._list[kind],
                    self.namespace,
                    resource_version=rv,
                    timeout_seconds=WATCH_CHUNK_S,
                    allow_watch_bookmarks=True,
                ):
                    now = time.time()
                    raw = ev.get("raw_object") or {}
                    etype = ev.get("type")
                    if etype == "ERROR":
                        if raw.get("code") == 410:
                            rv = self._relist(kind)
                            break
                        raise ApiException(status=raw.get("code") or 0, reason=f"watch error: {raw}")
                    rv = raw.get("metadata", {}).get("resourceVersion", rv)
                    if etype == "BOOKMARK":
                        continue
                    raw.setdefault("kind", kind)
                    self._add(Change(now, kind, etype, raw["metadata"]["name"], raw))
                    if self._stop.is_set() or kind in self._kill:
                        break
            except ApiException as e:
                if e.status == 410:
                    try:
                        rv = self._relist(kind)
                    except Exception as relist_error:  # noqa: BLE001
                        self._error(kind, relist_error)
                    continue
                self._error(kind, e)
            except (OSError, ValueError, urllib3_errors) as e:  # connection refused/reset, truncated stream
                self._error(kind, e)
            finally:
                w.stop()

    def _error(self, kind: str, err: Exception) -> None:
        """A dropped watch: note when the outage began (the gap), then retry after the back-off
        (1, 2, 4 s, then :data:`RETRY_MAX_S`)."""
        msg = f"{kind} watch: {type(err).__name__}: {err}"
        log.warning("recorder %s: %s", self.namespace, msg)
        with self._lock:
            self.errors.append(msg)
            self._down_since.setdefault(kind, (time.time(), msg))
            failures = self._failures[kind] = self._failures.get(kind, 0) + 1
        self._stop.wait(min(RETRY_MAX_S, 2.0 ** (failures - 1)))

    def _close_gap(self, kind: str) -> None:
        self._failures.pop(kind, None)
        began, msg = self._down_since.pop(kind)
        now = time.time()
        log.warning("recorder %s: %s watch back after %.1f s", self.namespace, kind, now - began)
        self._add(Change(now, GAP_KIND, "GAP", kind, {"from": began, "to": now, "error": msg}))

    def declare_fault(self, name: str, node: str, began: float | None, ended: float | None) -> None:
        """A fault window (e2e.faults): kept as a ``FAULT`` change, so the timeline shows it and
        marks a gap inside it as expected (module doc)."""
        if began is None:
            return
        ended = ended if ended is not None else time.time()
        self._add(Change(ended, FAULT_KIND, "FAULT", name, {"from": began, "to": ended, "node": node}))

    def fault_windows(self) -> list[Change]:
        """The declared fault windows so far."""
        return self.changes(FAULT_KIND)

    # -- health ------------------------------------------------------------------------------
    def kill(self, kind: str, reason: str = "killed by a test") -> None:
        """Test hook: make the ``kind`` watch thread end as if it had crashed (the recorder is
        then dead; see :meth:`check`)."""
        self._kill[kind] = reason

    def gaps(self) -> list[Change]:
        """The GAP changes so far, plus the ongoing outage of each kind (``to`` = now)."""
        now = time.time()
        done = self.changes(GAP_KIND)
        with self._lock:
            ongoing = [Change(now, GAP_KIND, "GAP", k, {"from": t, "to": now, "error": m})
                       for k, (t, m) in self._down_since.items()]
        return done + ongoing

    def check(self, since: float | None = None) -> None:
        """Raise :class:`RecorderDied` when a watch thread ended, or — with ``since`` (epoch s) —
        when a watch was down at any time from ``since`` until now (an absence check over that
        window would not be true)."""
        with self._lock:
            dead = dict(self._dead)
        for t in self._threads:
            if not t.is_alive() and not self._stop.is_set():
                dead.setdefault(t.name.removeprefix("recorder-"), f"{t.name} is not running")
        if dead:
            raise RecorderDied("the recorder died, the recording is incomplete: " + "; ".join(dead.values()))
        if since is not None:
            gaps = [g for g in self.gaps() if g.obj["to"] >= since]
            if gaps:
                spans = "; ".join(f"{g.name} watch down {g.obj['to'] - g.obj['from']:.1f} s ({g.obj['error']})" for g in gaps)
                raise RecorderDied(f"the recording has a gap in the checked window: {spans}")

    def _add(self, change: Change) -> None:
        with self._lock:
            self._changes.append(change)

    # -- queries ---------------------------------------------------------------------------
    def changes(self, kind: str | None = None, name: str | None = None) -> list[Change]:
        """A snapshot of the changes so far, oldest first, optionally of one kind/name."""
        with self._lock:
            items = list(self._changes)
        return [c for c in items if (kind is None or c.kind == kind) and (name is None or c.name == name)]

    def latest(self, kind: str, name: str) -> dict | None:
        """The newest observed object of ``kind``/``name`` (``None`` if never seen or deleted)."""
        found = self.changes(kind, name)
        if not found or found[-1].type == "DELETED":
            return None
        return found[-1].obj


def dump_changes(changes: Iterable[Change]) -> str:
    """A recording as JSON text: ``{"changes": [{received_at, kind, type, name, obj}, ...]}``."""
    return json.dumps({"changes": [asdict(c) for c in changes]}, indent=1)


def load_changes(path: Path) -> list[Change]:
    """The changes of a recording written by :func:`dump_changes` (to replay a timeline); a file
    named ``*.gz`` is read gzip-compressed (a test's ``recording.json.gz``)."""
    raw = Path(path).read_bytes()
    data = json.loads(gzip.decompress(raw) if Path(path).suffix == ".gz" else raw)
    return [Change(**c) for c in data["changes"]]
