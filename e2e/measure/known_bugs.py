"""KB-1: how long a preStop sleep keeps a pod whose only container exited by itself during it
(kubernetes#134338), from the container's own exit stamp and the recorder's receive times; KB-4:
the probes a restarted container gets before its startup probe passed (kubernetes#141155), from the
probes' own stamps and the recorded statuses; KB-6: readiness during termination
(kubernetes#140881), from the container's stamps and the recorded Ready condition; KB-7: the Ready a
container recreated during an API cut gets after a kubelet restart, before its own readiness probe
(kubernetes#141473), from the probes' stamps and the recorded statuses; KB-8: what the kubelet keeps
per pod sync (kubernetes#139823), a least-squares slope over its samples."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Sequence

from e2e.evidence.kubelet_heap import HeapSample
from e2e.evidence.stamps import Stamp, before, first, labelled
from e2e.measure.values import Value
from e2e.record.pods import condition, container_status
from e2e.record.recorder import Change
from e2e.record.timeline import ContainerSample


def prestop_outlives(t_delete: float, exited_at: float, shown_at: float | None, gone_at: float | None,
                     details: dict | None = None) -> list[Value]:
    """``KB-1 container_exit_after_delete_s`` (the container's ``app exit`` stamp − ``t_delete``),
    ``api_shows_exit_after_delete_s`` (the first recorded change without it running) and
    ``pod_gone_after_delete_s`` (the pod's DELETED), s after the delete (epoch s in; None: not seen).
    Source: CASES.md KB-1 (preStop sleep 20 s, the container exits ~6 s after the delete)."""
    return [Value("KB-1", "container_exit_after_delete_s", exited_at - t_delete, details=details or {}),
            Value("KB-1", "api_shows_exit_after_delete_s", None if shown_at is None else shown_at - t_delete, details=details or {}),
            Value("KB-1", "pod_gone_after_delete_s", None if gone_at is None else gone_at - t_delete, details=details or {})]


def probes_before_started(key: str, stamps: Sequence[Stamp]) -> Value:
    """``KB-4 probe_runs_before_started[key]``: the liveness and readiness runs (``probe:liveness:…``,
    ``probe:readiness:…`` stamps) of one run of the container, ``stamps`` its log, written before its
    first ``probe:startup:success``; None when the startup probe never succeeded in that log (the
    details list the stamps' times). Source: CASES.md KB-4 (the startup probe gates the others)."""
    success = first(stamps, "probe:startup:success")
    others = labelled(stamps, "probe:liveness") + labelled(stamps, "probe:readiness")
    early = [] if success is None else sorted(before(others, success.at))
    details = {"startup_success_at": None if success is None else success.at,
               "before_startup_success": [(s.event, s.at) for s in early],
               "startup_runs": [(s.event, s.at) for s in labelled(stamps, "probe:startup")]}
    return Value("KB-4", f"probe_runs_before_started[{key}]", None if success is None else len(early), details=details,
                 at=None if success is None else success.at)


def started_when_first_running(key: str, samples: Sequence[ContainerSample], container: str, restart_count: int) -> Value:
    """``KB-4 started_when_first_running[key]``: ``started`` in the first recorded status of the run
    ``restart_count`` (0: the first run) of ``container`` in state ``running`` — the kubelet's first
    word on a new container, before any startup probe could pass; None when no such status was
    recorded. ``samples``: :func:`e2e.record.timeline.container_samples` of the pod, oldest first."""
    s = next((s for s in samples if s.container == container and s.restart_count == restart_count and s.state == "running"), None)
    return Value("KB-4", f"started_when_first_running[{key}]", None if s is None else bool(s.started),
                 details={} if s is None else {"received_at": s.received_at, "ready": s.ready, "restart_count": s.restart_count},
                 at=None if s is None else s.received_at)


def readiness_during_termination(sigterm_at: float, ready_false_at: float | None, stamps: Sequence[Stamp]) -> list[Value]:
    """``KB-6 ready_false_after_sigterm_s`` (the first recorded change with the pod's Ready condition
    False, ``ready_false_at``, − the container's ``sigterm`` stamp, ``sigterm_at``; None: never seen)
    and ``readiness_probe_runs_after_sigterm`` (``probe:readiness:…`` stamps after it, ``stamps`` the
    container's). Epoch s in. Source: CASES.md KB-6 (exec readiness probes go on during the grace period)."""
    runs = [s for s in labelled(stamps, "probe:readiness") if s.at > sigterm_at]
    details = {"sigterm_at": sigterm_at, "ready_false_at": ready_false_at,
               "runs_after_sigterm": [(s.event, round(s.at - sigterm_at, 3)) for s in runs]}
    return [Value("KB-6", "ready_false_after_sigterm_s", None if ready_false_at is None else round(ready_false_at - sigterm_at, 3),
                  details=details, at=ready_false_at),
            Value("KB-6", "readiness_probe_runs_after_sigterm", len(runs), details=details, at=sigterm_at)]


def api_status_before(changes: Sequence[Change], container: str, at: float) -> Value:
    """``KB-7 api_status_at_restart``: ``"Ready=<status> restartCount=<n>"`` — the pod's Ready
    condition and ``container``'s restart count in the newest of the pod's recorded ``changes``
    received before ``at`` (epoch s: the heal, when the kubelet is restarted): the status the
    restarted kubelet reads from the API server. None when nothing was recorded before. Source:
    CASES.md KB-7 (the cut leaves the old container's Ready status in the API)."""
    last = next((ch for ch in reversed(changes) if ch.received_at < at), None)
    if last is None:
        return Value("KB-7", "api_status_at_restart", None, details={"at": at})
    ready = (condition(last.obj, "Ready") or {}).get("status")
    cs = container_status(last.obj, container)
    return Value("KB-7", "api_status_at_restart", f"Ready={ready} restartCount={cs.get('restartCount')}",
                 details={"received_at": last.received_at, "containerID": cs.get("containerID")}, at=last.received_at)


def first_probe_after_start(key: str, stamps: Sequence[Stamp]) -> Value:
    """``KB-7 first_readiness_probe_after_start_s[key]``: the first ``probe:readiness:…`` stamp of
    one run of the container (``stamps``: its log) − that run's ``start`` stamp, s; None when either
    is missing. Source: CASES.md KB-7 (``initialDelaySeconds`` before the first run of the probe)."""
    start = first(stamps, "start")
    probe = min(labelled(stamps, "probe:readiness"), default=None)
    details = {"start_at": None if start is None else start.at, "first_probe": None if probe is None else (probe.event, probe.at)}
    value = None if start is None or probe is None else round(probe.at - start.at, 3)
    return Value("KB-7", f"first_readiness_probe_after_start_s[{key}]", value, details=details,
                 at=None if probe is None else probe.at)


def ready_before_first_probe(key: str, samples: Sequence[ContainerSample], container: str, restart_count: int,
                             first_probe_at: float | None) -> list[Value]:
    """``KB-7 ready_before_first_probe[key]`` (whether a recorded status of ``container``'s run
    ``restart_count``, running, said ``ready: true`` before that run's first readiness probe ran,
    ``first_probe_at``: its stamp, epoch s) and ``ready_s_before_first_probe[key]`` (how long, s:
    ``first_probe_at`` − the receive time of the first such status; 0.0 when none). Both None when
    the probe never ran (``first_probe_at`` None). ``samples``: :func:`e2e.record.timeline.container_samples`
    of the pod, oldest first. Source: CASES.md KB-7 (a container's readiness comes from its own probe)."""
    run = [s for s in samples if s.container == container and s.restart_count == restart_count and s.state == "running"]
    early = [s for s in run if s.ready and first_probe_at is not None and s.received_at < first_probe_at]
    details = {"first_probe_at": first_probe_at, "first_ready_at": early[0].received_at if early else None,
               "statuses": [(round(s.received_at, 3), s.ready) for s in run][:20]}
    if first_probe_at is None:
        return [Value("KB-7", f"ready_before_first_probe[{key}]", None, details=details),
                Value("KB-7", f"ready_s_before_first_probe[{key}]", None, details=details)]
    at = early[0].received_at if early else first_probe_at
    return [Value("KB-7", f"ready_before_first_probe[{key}]", bool(early), details=details, at=at),
            Value("KB-7", f"ready_s_before_first_probe[{key}]", round(first_probe_at - early[0].received_at, 3) if early else 0.0,
                  details=details, at=at)]
@dataclass(frozen=True)
class Fit:
    """The least-squares line ``y = intercept + slope · x`` through ``n`` points, and ``stderr``: the
    slope's standard error, √(Σ residual² / (n − 2) / Σ (x − x̄)²) (ordinary least squares), in the
    slope's unit."""

    slope: float
    intercept: float
    stderr: float
    n: int


def fit_line(xs: Sequence[float], ys: Sequence[float]) -> Fit:
    """The :class:`Fit` of ``ys`` against ``xs`` (``statistics.linear_regression``). ``ValueError``
    for fewer than 3 points, lengths that differ, or ``xs`` all equal."""
    if len(xs) != len(ys) or len(xs) < 3:
        raise ValueError(f"a fit needs 3 or more (x, y) pairs: {len(xs)} x, {len(ys)} y")
    slope, intercept = statistics.linear_regression(xs, ys)  # StatisticsError (a ValueError) when xs are all equal
    mean = statistics.fmean(xs)
    sxx = sum((x - mean) ** 2 for x in xs)
    sse = sum((y - intercept - slope * x) ** 2 for x, y in zip(xs, ys, strict=True))
    return Fit(slope, intercept, math.sqrt(sse / (len(xs) - 2) / sxx), len(xs))


def kubelet_leak(samples: Sequence[HeapSample]) -> list[Value]:
    """KB-8 over ``samples`` of one kubelet (:mod:`e2e.evidence.kubelet_heap`, oldest first, the
    sampling window's): ``heap_objects_per_pod_sync`` (the slope of its live heap objects after a
    forced collection against its pod syncs, objects/sync), ``heap_objects_fit_stderr`` (that
    slope's standard error), ``goroutines_per_pod_sync`` (goroutines/sync) and ``pod_syncs_per_s``
    (the syncs over the window). The details: the live heap's bytes per sync (and its standard
    error), the resident memory's slope per sync and per second (recorded, not judged: CASES.md
    KB-8), the kubelet's CPU in cores over the window, the forced collections seen, the window and
    the syncs. ``ValueError`` for fewer than 3 samples, no sync in the window, or a count that went
    down (the kubelet restarted: its counters began again)."""
    if len(samples) < 3:
        raise ValueError(f"KB-8 needs 3 or more samples, got {len(samples)}")
    for a, b in zip(samples, samples[1:], strict=False):
        if b.pod_syncs < a.pod_syncs or b.num_gc < a.num_gc or b.cpu_s < a.cpu_s:
            raise ValueError(f"KB-8: the kubelet's counters went down between {a.at:.3f} and {b.at:.3f} (restarted?)")
    first_, last = samples[0], samples[-1]
    syncs = last.pod_syncs - first_.pod_syncs
    if syncs <= 0:
        raise ValueError(f"KB-8: no pod sync in the window ({len(samples)} samples)")
    window_s = last.at - first_.at
    x = [s.pod_syncs for s in samples]
    objects = fit_line(x, [float(s.heap_objects) for s in samples])
    heap_bytes = fit_line(x, [float(s.heap_bytes) for s in samples])
    goroutines = fit_line(x, [s.goroutines for s in samples])
    rss = fit_line(x, [s.rss_bytes for s in samples])
    details = {
        "samples": len(samples), "window_s": round(window_s, 3), "pod_syncs": syncs,
        "heap_objects": {"slope": round(objects.slope, 4), "stderr": round(objects.stderr, 4),
                         "first": first_.heap_objects, "last": last.heap_objects},
        "heap_bytes_per_pod_sync": {"slope": round(heap_bytes.slope, 1), "stderr": round(heap_bytes.stderr, 1),
                                    "first": first_.heap_bytes, "last": last.heap_bytes},
        "goroutines": {"slope": round(goroutines.slope, 5), "stderr": round(goroutines.stderr, 5),
                       "first": first_.goroutines, "last": last.goroutines},
        "rss_bytes": {"per_pod_sync": round(rss.slope, 1), "per_s": round((last.rss_bytes - first_.rss_bytes) / window_s, 1),
                      "first": first_.rss_bytes, "last": last.rss_bytes},
        "kubelet_cpu_cores": round((last.cpu_s - first_.cpu_s) / window_s, 3),
        "forced_collections": last.num_gc - first_.num_gc,
    }
    return [Value("KB-8", "heap_objects_per_pod_sync", round(objects.slope, 4), details=details, at=last.at),
            Value("KB-8", "heap_objects_fit_stderr", round(objects.stderr, 4), details=details, at=last.at),
            Value("KB-8", "goroutines_per_pod_sync", round(goroutines.slope, 5), details=details, at=last.at),
            Value("KB-8", "pod_syncs_per_s", round(syncs / window_s, 3), details=details, at=last.at)]
