"""The kubelet's live heap, goroutines and pod syncs, read through the API server's node proxy
(CASES.md KB-8).

One :class:`HeapSample` is two GETs on ``/api/v1/nodes/<node>/proxy/…`` through the suite's client
(:func:`e2e.cluster.gates.read`: the API server on 127.0.0.1 proxies to the kubelet from inside the
cluster's network; the rights are ``nodes/proxy``, which the suite's admin kubeconfig has; no node
access is needed):

- ``metrics``, the kubelet's Prometheus text. ``kubelet_pod_worker_duration_seconds_count``, summed
  over ``operation_type``, counts the pod syncs that ended: ``podWorkerLoop``
  (pkg/kubelet/pod_workers.go) observes ``PodWorkerDuration`` once per sync of an update that
  carries a start time, and every update of a running pod does (pkg/kubelet/kubelet.go
  ``HandlePodSyncs``: probe results, PLEG events, the periodic re-sync; ``HandlePodUpdates``,
  ``HandlePodReconcile``); updates the kubelet merges while a sync runs make one sync
  (``UpdatePod``). ``go_goroutines`` (client_golang's Go collector) and
  ``process_resident_memory_bytes``, ``process_cpu_seconds_total`` (its process collector), both
  registered by component-base ``metrics/legacyregistry``.
- ``debug/pprof/heap?gc=1&debug=1``, the kubelet's profiling handler (``enableProfilingHandler``,
  default true: pkg/kubelet/apis/config/v1beta1/defaults.go; pkg/kubelet/server/server.go
  ``InstallProfilingHandler`` → net/http/pprof). ``gc=1`` runs a full garbage collection first
  (net/http/pprof ``handler.serveHTTP`` → ``runtime.GC``); the text form (``debug=1``) ends with
  the runtime's MemStats read after it (runtime/pprof ``writeHeapInternal``). ``HeapObjects`` and
  ``HeapAlloc`` are then the live heap plus what was allocated since (the profile's own writing,
  much the same each time) — without the garbage not yet collected that ``go_memstats_heap_*`` of
  ``/metrics`` carry (a sawtooth up to the heap goal, twice the live heap at GOGC=100), which would
  bury a leak of a few MB. Each sample forces one collection in the kubelet (tens of ms of its CPU).

``GatesUnreadable`` (:mod:`e2e.cluster.gates`) when a read fails, or when the client's API server is
not on the loopback; ``ValueError`` when an answer lacks a number the sample needs.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from urllib.parse import quote

from ..cluster.gates import read

SYNCS = "kubelet_pod_worker_duration_seconds_count"
GOROUTINES = "go_goroutines"
RSS = "process_resident_memory_bytes"
CPU = "process_cpu_seconds_total"
HEAP_PATH = "debug/pprof/heap?gc=1&debug=1"
"""The heap profile after a forced collection, as text with the runtime's MemStats at its end."""

_SAMPLE = re.compile(r"^(?P<name>[A-Za-z_:][A-Za-z0-9_:]*)(?:\{[^}]*\})?\s+(?P<value>\S+)")
_MEMSTAT = re.compile(r"^# (?P<name>[A-Za-z]+) = (?P<value>\d+)\s*$")


def metric_total(text: str, name: str) -> float | None:
    """The sum of every sample of the metric ``name`` (all its label sets) in Prometheus text
    ``text``, in the metric's own unit (a count, bytes, seconds: its name says); None when it has
    none. ``ValueError`` for a sample whose value is no number."""
    values = []
    for line in text.splitlines():
        m = _SAMPLE.match(line)
        if m and m.group("name") == name:
            values.append(float(m.group("value")))
    return sum(values) if values else None


def memstats(text: str) -> dict[str, int]:
    """The ``# Name = N`` lines of a heap profile's text form ``text`` (``debug=1``: ``# runtime.MemStats``
    at its end, runtime/pprof ``writeHeapInternal``): ``{"HeapObjects": 512000, "HeapAlloc": …,
    "NumGC": …}``; the integers only (the arrays of ``BySize``/``PauseNs`` lines are left out)."""
    out = {}
    for line in text.splitlines():
        m = _MEMSTAT.match(line)
        if m:
            out[m.group("name")] = int(m.group("value"))
    return out


@dataclass(frozen=True)
class HeapSample:
    """One reading of a kubelet: ``at`` (epoch s, the test process's clock: before the reads),
    ``pod_syncs`` (syncs ended since the kubelet started), ``heap_objects`` and ``heap_bytes`` (live
    heap objects and bytes right after a forced collection), ``goroutines``, ``rss_bytes`` (its
    resident memory), ``cpu_s`` (its CPU time, s) and ``num_gc`` (its collections so far)."""

    at: float
    pod_syncs: float
    heap_objects: int
    heap_bytes: int
    goroutines: float
    rss_bytes: float
    cpu_s: float
    num_gc: int

    def row(self) -> str:
        """The sample as one line of the evidence table (:func:`table`)."""
        return (f"{self.at:.3f} {self.pod_syncs:9.0f} {self.heap_objects:12d} {self.heap_bytes:12d} "
                f"{self.goroutines:6.0f} {self.rss_bytes:12.0f} {self.cpu_s:9.2f} {self.num_gc:6d}")


TABLE_HEADER = "# at (epoch s)  pod_syncs  heap_objects  heap_bytes  goroutines  rss_bytes  cpu_s  num_gc"


def table(samples: list[HeapSample]) -> str:
    """``samples`` as a text table, one line each under :data:`TABLE_HEADER`."""
    return "\n".join([TABLE_HEADER, *(s.row() for s in samples)]) + "\n"


def sample_of(metrics_text: str, heap_text: str, at: float) -> HeapSample:
    """The :class:`HeapSample` read at ``at`` (epoch s) from a kubelet's ``/metrics`` text
    ``metrics_text`` and its heap profile's text ``heap_text`` (``debug=1``); ``ValueError`` naming
    each number either lacks."""
    numbers = {name: metric_total(metrics_text, name) for name in (SYNCS, GOROUTINES, RSS, CPU)}
    stats = memstats(heap_text)
    missing = [name for name, v in numbers.items() if v is None]
    missing += [f"MemStats {name}" for name in ("HeapObjects", "HeapAlloc", "NumGC") if name not in stats]
    if missing:
        raise ValueError(f"kubelet sample at {at:.3f}: no {', '.join(missing)}")
    return HeapSample(at, numbers[SYNCS] or 0.0, stats["HeapObjects"], stats["HeapAlloc"], numbers[GOROUTINES] or 0.0,
                      numbers[RSS] or 0.0, numbers[CPU] or 0.0, stats["NumGC"])


def read_sample(kube, node: str) -> HeapSample:
    """A :class:`HeapSample` of the kubelet of ``node`` through the API server of ``kube``
    (:class:`e2e.cluster.kube.Kube`): its ``/metrics``, then its heap after a forced collection.
    ``GatesUnreadable`` when a read fails; ``ValueError`` when a number is missing."""
    proxy = f"/api/v1/nodes/{quote(node, safe='')}/proxy"
    at = time.time()
    metrics_text = read(kube, f"{proxy}/metrics", f"kubelet of {node} (node proxy /metrics)")
    heap_text = read(kube, f"{proxy}/{HEAP_PATH}", f"kubelet of {node} (node proxy /{HEAP_PATH})")
    return sample_of(metrics_text, heap_text, at)
