"""Ephemeral-storage facts (CASES.md ES-1 … ES-7): the kubelet's own
view through the API server's node proxy, and eviction facts from a recording.

Stamps
------
The ES workloads write fixed-size blocks and stamp (:mod:`e2e.evidence.stamps`) ``start``,
``crossed`` right after the block that brings the written bytes to the limit, and ``written``
after the last block; :func:`e2e.evidence.stamps.event_times` gives ``{event: epoch s}``.

The kubelet's view
------------------
``GET /api/v1/nodes/<node>/proxy/configz`` (the kubelet's running configuration, under
``kubeletconfig``) and ``GET /api/v1/nodes/<node>/proxy/stats/summary`` (the Summary API the
eviction manager reads: pkg/kubelet/server/stats/summary.go), both through the API server with
the ``kubernetes`` client. :func:`pod_storage` picks one pod's ephemeral-storage numbers
(bytes) out of a summary: per container ``rootfs`` (the writable layer, from the CRI) and
``logs`` (``du`` of the container's log files), per volume ``usedBytes``, and the pod's
``ephemeral-storage`` total (pkg/kubelet/stats/helper.go calcEphemeralStorage).

Eviction facts
--------------
:func:`eviction` reads from the recorded pod and event changes: the kubelet's ``Evicted``
event (reason, type, message, receive time), the first terminal phase the pod reached with
its ``reason``/``message`` and receive time, how each container ended, and whether any
recorded status carried a ``DisruptionTarget`` condition.

The kubelet removes an evicted pod's containers as soon as the pod is terminal (pkg/kubelet
kubelet.go ``cleanUpContainersInPod``: ``ShouldPodContentBeRemoved``), and with them their
logs; a status generated after that no longer finds the container and reports it as
``lastState.terminated`` ``ContainerStatusUnknown`` (exit code 137, "The container could not be
located when the pod was deleted…") with ``state.waiting ContainerCreating``
(kubelet_pods.go ``convertToAPIContainerStatuses``). Whether the API ever sees the runtime's
real terminated state is a race: :class:`ContainerEnd` says which record was seen.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable

from kubernetes import client
from kubernetes.utils import parse_quantity

from ..record.recorder import Change

if TYPE_CHECKING:
    from ..cluster.kube import Kube
    from ..run.scenario import Scenario

TERMINAL_PHASES = ("Succeeded", "Failed")


# -- the kubelet through the API server's node proxy -------------------------------------


def node_proxy_json(api_client: client.ApiClient, node: str, path: str, timeout_s: float = 15) -> dict:
    """The JSON the kubelet of ``node`` answers on ``path`` (``configz``, ``stats/summary``),
    proxied by the API server through ``api_client`` within ``timeout_s``. ``ApiException`` propagates."""
    resp: Any = client.CoreV1Api(api_client).connect_get_node_proxy_with_path(  # _preload_content=False: urllib3's response
        node, path, _preload_content=False, _request_timeout=timeout_s
    )
    return json.loads(resp.data)


def kubelet_config(api_client: client.ApiClient, node: str) -> dict:
    """The running KubeletConfiguration of the kubelet of ``node`` (``configz`` → ``kubeletconfig``),
    through ``api_client``; ``ApiException`` propagates."""
    return node_proxy_json(api_client, node, "configz").get("kubeletconfig") or {}


def stats_summary(api_client: client.ApiClient, node: str) -> dict:
    """The Summary API answer of the kubelet of ``node`` (``stats/summary``: what the eviction
    manager reads; sizes in bytes), through ``api_client``; ``ApiException`` propagates."""
    return node_proxy_json(api_client, node, "stats/summary")


# The disk eviction signals as the eviction manager observes them (pkg/kubelet/eviction/helpers.go
# makeSignalObservations): the Summary API's filesystem and its (available, capacity) fields.
_DISK_OBSERVATIONS = {"nodefs.available": ("fs", "availableBytes", "capacityBytes"),
                      "nodefs.inodesFree": ("fs", "inodesFree", "inodes"),
                      "imagefs.available": ("imageFs", "availableBytes", "capacityBytes"),
                      "imagefs.inodesFree": ("imageFs", "inodesFree", "inodes")}


def disk_signals(summary: dict) -> dict[str, tuple[int, int]]:
    """The disk eviction signals of a node's Summary API answer ``summary`` (:func:`stats_summary`):
    ``{"nodefs.available": (available, capacity), …}`` in bytes (``*.available``) or inodes
    (``*.inodesFree``), from ``node.fs`` and ``node.runtime.imageFs`` as the eviction manager
    observes them; a signal whose numbers the summary lacks is left out."""
    node = summary.get("node") or {}
    filesystems = {"fs": node.get("fs") or {}, "imageFs": (node.get("runtime") or {}).get("imageFs") or {}}
    out = {}
    for signal, (fs, available, capacity) in _DISK_OBSERVATIONS.items():
        a, c = filesystems[fs].get(available), filesystems[fs].get(capacity)
        if isinstance(a, int) and isinstance(c, int):
            out[signal] = (a, c)
    return out


# KubeletConfiguration fields that decide ephemeral-storage enforcement and its timing.
EVICTION_SETTING_KEYS = (
    "localStorageCapacityIsolation",
    "evictionHard",
    "evictionSoft",
    "evictionSoftGracePeriod",
    "evictionMaxPodGracePeriod",
    "evictionMinimumReclaim",
    "evictionPressureTransitionPeriod",
    "mergeDefaultEvictionSettings",
    "volumeStatsAggPeriod",
    "containerLogMaxSize",
    "containerLogMaxFiles",
    "containerLogMonitorInterval",
)


def eviction_settings(kubeletconfig: dict) -> dict:
    """The subset of ``kubeletconfig`` named in :data:`EVICTION_SETTING_KEYS` that is set."""
    return {k: kubeletconfig[k] for k in EVICTION_SETTING_KEYS if k in kubeletconfig}


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)")
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


def parse_duration_s(text: str) -> float:
    """The Go ``time.Duration`` string ``text`` (``1m0s``, ``10s``, ``1h2m3.5s``, ``0s``) in seconds;
    ``ValueError`` on anything else."""
    if not text or _DURATION.sub("", text) != "":
        raise ValueError(f"not a Go duration: {text!r}")
    return sum(float(n) * _UNIT_S[u] for n, u in _DURATION.findall(text))


# containerd's CRI image service section of `containerd config dump` (config version 3) and its
# stats_collect_period: how often the writable-layer usage the kubelet reads is refreshed.
_CONTAINERD_IMAGES_SECTION = re.compile(r"^\s*\[plugins\.'io\.containerd\.cri\.v1\.images'\]\s*$", re.MULTILINE)
_TABLE = re.compile(r"^\s*\[", re.MULTILINE)
_STATS_PERIOD = re.compile(r"^\s*stats_collect_period\s*=\s*(\d+)\s*$", re.MULTILINE)


def containerd_stats_collect_period_s(dump: str) -> float | None:
    """``stats_collect_period`` (s) of the ``[plugins.'io.containerd.cri.v1.images']`` table of
    a ``containerd config dump``, or None when absent."""
    head = _CONTAINERD_IMAGES_SECTION.search(dump)
    if head is None:
        return None
    nxt = _TABLE.search(dump, head.end())
    m = _STATS_PERIOD.search(dump[head.end(): nxt.start() if nxt else len(dump)])
    return float(m.group(1)) if m else None


# -- one pod's ephemeral storage in a stats summary -------------------------------------


@dataclass(frozen=True)
class ContainerStorage:
    """A container's writable layer (``rootfs_bytes``) and log files (``logs_bytes``), bytes; ``rootfs_time``
    is when the runtime measured the writable layer (RFC 3339; containerd refreshes it every
    ``stats_collect_period``)."""

    rootfs_bytes: int
    logs_bytes: int
    rootfs_time: str = ""

    @property
    def used_bytes(self) -> int:
        """What the eviction manager compares with the container's limit when the image
        filesystem is not dedicated (pkg/kubelet/eviction/eviction_manager.go
        containerEphemeralStorageLimitEviction: logs + rootfs)."""
        return self.rootfs_bytes + self.logs_bytes


@dataclass(frozen=True)
class PodStorage:
    """One pod in a stats summary: ``ephemeral_bytes`` is the pod total the kubelet compares
    with the sum of container limits; ``containers`` maps container name → its
    :class:`ContainerStorage`; ``volumes`` maps volume name → used bytes (every volume
    the kubelet measured, also those not counted as ephemeral storage); ``volume_times`` their
    sample times (RFC 3339)."""

    ephemeral_bytes: int | None
    containers: dict[str, ContainerStorage] = field(default_factory=dict)
    volumes: dict[str, int] = field(default_factory=dict)
    volume_times: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict:
        """The numbers as plain JSON (bytes, RFC 3339 times), for ``details`` of a judged value."""
        return {
            "ephemeral_bytes": self.ephemeral_bytes,
            "containers": {
                n: {"rootfs_bytes": c.rootfs_bytes, "logs_bytes": c.logs_bytes, "rootfs_time": c.rootfs_time}
                for n, c in self.containers.items()
            },
            "volumes": dict(self.volumes),
            "volume_times": dict(self.volume_times),
        }


def _used(fs: dict | None) -> int:
    return int((fs or {}).get("usedBytes") or 0)


def pod_storage(summary: dict, namespace: str, pod: str) -> PodStorage | None:
    """The storage numbers (bytes) of ``pod`` in ``namespace`` in ``summary`` (a Summary API
    answer, :func:`stats_summary`), or None if absent."""
    for p in summary.get("pods") or []:
        ref = p.get("podRef") or {}
        if ref.get("namespace") != namespace or ref.get("name") != pod:
            continue
        eph = p.get("ephemeral-storage")
        containers = {
            c["name"]: ContainerStorage(_used(c.get("rootfs")), _used(c.get("logs")), (c.get("rootfs") or {}).get("time", ""))
            for c in p.get("containers") or []
        }
        volumes = {v["name"]: int(v.get("usedBytes") or 0) for v in p.get("volume") or []}
        times = {v["name"]: v.get("time", "") for v in p.get("volume") or []}
        return PodStorage(_used(eph) if eph is not None else None, containers, volumes, times)
    return None


# -- eviction facts from a recording ----------------------------------------------------


# The reason the kubelet gives a container it could no longer find (pkg/kubelet/container
# ContainerReasonStatusUnknown): its exit code 137 is a placeholder, not the process's.
STATUS_UNKNOWN = "ContainerStatusUnknown"


@dataclass(frozen=True)
class ContainerEnd:
    """The first terminated record of a container the recorder saw — ``exit_code``, ``reason``,
    ``message`` — and its ``source``: ``"state"`` (the runtime's) or, if only that was published,
    ``"lastState"``."""

    exit_code: int | None
    reason: str
    message: str
    source: str  # "state" or "lastState"

    @property
    def from_runtime(self) -> bool:
        """True when this is the runtime's record (not the kubelet's "could not be located")."""
        return self.reason != STATUS_UNKNOWN


def container_ends(changes: Iterable[Change], pod: str) -> dict[str, ContainerEnd]:
    """Returns per container of ``pod``, the first terminated record seen in ``changes``
    (``state`` before ``lastState`` within one change)."""
    out: dict[str, ContainerEnd] = {}
    for ch in changes:
        if ch.kind != "Pod" or ch.name != pod:
            continue
        for cs in (ch.obj.get("status") or {}).get("containerStatuses") or []:
            if cs["name"] in out:
                continue
            for source in ("state", "lastState"):
                term = (cs.get(source) or {}).get("terminated")
                if term:
                    out[cs["name"]] = ContainerEnd(term.get("exitCode"), term.get("reason") or "", term.get("message") or "", source)
                    break
    return out


@dataclass(frozen=True)
class Eviction:
    """What the recorder saw of one pod's eviction (times: receive times, epoch s).

    ``event_received_at``, ``event_type``, ``event_message``: the kubelet's ``Evicted`` event;
    ``terminal_received_at``, ``terminal_phase``, ``terminal_reason``, ``terminal_message``
    describe the first recorded pod status with a terminal phase (None until one was seen); ``disruption_target`` is True if any recorded status of the pod had a
    ``DisruptionTarget`` condition; ``ends`` how each container ended (see :func:`container_ends`).
    """

    event_received_at: float
    event_type: str
    event_message: str
    terminal_received_at: float | None
    terminal_phase: str | None
    terminal_reason: str | None
    terminal_message: str | None
    disruption_target: bool
    ends: dict[str, ContainerEnd]


def evicted_event(changes: Iterable[Change], pod: str) -> Change | None:
    """The first ``Evicted`` event about ``pod`` in ``changes``, or None."""
    for ch in changes:
        if ch.kind != "Event" or ch.type not in ("ADDED", "LISTED", "MODIFIED"):
            continue
        inv = ch.obj.get("involvedObject") or {}
        if ch.obj.get("reason") == "Evicted" and inv.get("kind") == "Pod" and inv.get("name") == pod:
            return ch
    return None


def first_terminal(changes: Iterable[Change], pod: str) -> Change | None:
    """The first change of ``pod`` in ``changes`` whose phase is terminal (Succeeded or Failed), or None."""
    for ch in changes:
        if ch.kind == "Pod" and ch.name == pod and (ch.obj.get("status") or {}).get("phase") in TERMINAL_PHASES:
            return ch
    return None


def eviction(changes: list[Change], pod: str) -> Eviction | None:
    """The eviction of ``pod`` as recorded in ``changes`` (its Pod and Event changes), or None
    before its ``Evicted`` event was seen."""
    ev = evicted_event(changes, pod)
    if ev is None:
        return None
    term = first_terminal(changes, pod)
    status = (term.obj.get("status") or {}) if term else {}
    disruption = any(
        c.get("type") == "DisruptionTarget"
        for ch in changes
        if ch.kind == "Pod" and ch.name == pod
        for c in (ch.obj.get("status") or {}).get("conditions") or []
    )
    return Eviction(
        event_received_at=ev.received_at,
        event_type=ev.obj.get("type") or "",
        event_message=ev.obj.get("message") or "",
        terminal_received_at=term.received_at if term else None,
        terminal_phase=status.get("phase") if term else None,
        terminal_reason=status.get("reason") if term else None,
        terminal_message=status.get("message") if term else None,
        disruption_target=disruption,
        ends=container_ends(changes, pod),
    )


# -- what a scenario reads while it waits (evidence, not judged) -----------------------------

# How often the Summary API is asked while waiting (s).
SUMMARY_POLL_S = 1.0


@dataclass
class NodeStorage:
    """Per node name: ``allocatable`` ephemeral-storage (bytes; None when not reported) and the
    ``kubelet``'s running configuration (``configz``; empty when it could not be read, see ``errors``)."""

    allocatable: dict[str, int | None] = field(default_factory=dict)
    kubelet: dict[str, dict] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)

    def problem(self) -> str | None:
        """Returns why the kubelet cannot enforce ephemeral-storage limits here, or None."""
        for node, alloc in self.allocatable.items():
            if not alloc:
                return (f"node {node} reports no allocatable ephemeral-storage (rootless kind or "
                        "LocalStorageCapacityIsolation off): the kubelet cannot enforce ephemeral-storage limits")
        for node, cfg in self.kubelet.items():
            if cfg.get("localStorageCapacityIsolation") is False:
                return f"kubelet of node {node} runs with localStorageCapacityIsolation: false (configz): no ephemeral-storage eviction"
        return None


def read_node_storage(kube: "Kube") -> NodeStorage:
    """Every node's allocatable ephemeral-storage and its kubelet's configz, read through
    ``kube``; a configz that cannot be read is kept in ``errors``."""
    out = NodeStorage()
    nodes: list[Any] = kube.core.list_node().items  # the API sets metadata.name, status
    for node in nodes:
        name = node.metadata.name
        alloc = (node.status.allocatable or {}).get("ephemeral-storage")
        out.allocatable[name] = int(parse_quantity(alloc)) if alloc else None
        try:
            out.kubelet[name] = kubelet_config(kube.api_client, name)
        except Exception as e:  # noqa: BLE001 - configz is evidence; its absence is reported
            out.errors[name] = f"configz: {type(e).__name__}: {e}"
    return out


class UsageWatch:
    """Polls the kubelet's Summary API (at most every ``SUMMARY_POLL_S``) for ``pod`` of the
    test ``sc`` and keeps the first sample in which ``used(storage)`` (bytes, e.g.
    :func:`container_used`) exceeded ``threshold`` (bytes): ``first_over`` and ``last`` are
    ``(epoch s, PodStorage)``; call :meth:`poll` from a wait's check."""

    def __init__(self, sc: Scenario, pod: str, used: Callable[[PodStorage], int | None], threshold: int):
        self.sc, self.pod, self.used, self.threshold = sc, pod, used, threshold
        self.first_over: tuple[float, PodStorage] | None = None
        self.last: tuple[float, PodStorage] | None = None
        self.errors: list[str] = []
        self._asked = 0.0

    def poll(self) -> None:
        """Ask the Summary API once, unless it was asked less than ``SUMMARY_POLL_S`` ago; errors
        are kept in ``errors`` (the first 5), never raised."""
        now = time.time()
        if now - self._asked < SUMMARY_POLL_S:
            return
        self._asked = now
        node = ((self.sc.pod(self.pod) or {}).get("spec") or {}).get("nodeName")
        if not node:
            return
        try:
            storage = pod_storage(stats_summary(self.sc.kube.api_client, node), self.sc.namespace, self.pod)
        except Exception as e:  # noqa: BLE001 - evidence only; keep waiting
            if len(self.errors) < 5:
                self.errors.append(f"{type(e).__name__}: {e}")
            return
        if storage is None:
            return
        self.last = (now, storage)
        used = self.used(storage)
        if self.first_over is None and used is not None and used > self.threshold:
            self.first_over = (now, storage)

    def details(self, since: float | None = None, event: str = "crossed") -> dict:
        """Returns the evidence for the report: the first sample over the threshold (and how many
        seconds after the container's ``event`` stamp at ``since``, epoch s, it was seen), else the
        last sample."""
        out: dict = {"summary_threshold_bytes": self.threshold}
        if self.first_over:
            t, storage = self.first_over
            out["summary_first_over_at"] = round(t, 3)
            if since is not None:
                out[f"summary_first_over_s_after_{event}"] = round(t - since, 3)
            out["summary_first_over"] = storage.as_dict()
        elif self.last:
            out["summary_last"] = storage_dict(self.last)
        if self.errors:
            out["summary_errors"] = self.errors
        return out


def storage_dict(sample: tuple[float, PodStorage]) -> dict:
    """A ``sample`` ``(epoch s, PodStorage)`` as plain JSON: ``at`` and :meth:`PodStorage.as_dict`."""
    return {"at": round(sample[0], 3), **sample[1].as_dict()}


def container_used(name: str) -> Callable[[PodStorage], int | None]:
    """A ``used`` function for :class:`UsageWatch`: the bytes container ``name`` uses (writable
    layer + logs, :attr:`ContainerStorage.used_bytes`), None when the sample lacks it."""
    return lambda s: s.containers[name].used_bytes if name in s.containers else None
