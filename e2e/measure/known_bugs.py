"""KB-1: how long a preStop sleep keeps a pod whose only container exited by itself during it
(kubernetes#134338), from the container's own exit stamp and the recorder's receive times; KB-4:
the probes a restarted container gets before its startup probe passed (kubernetes#141155), from the
probes' own stamps and the recorded statuses; KB-6: readiness during termination
(kubernetes#140881), from the container's stamps and the recorded Ready condition."""

from __future__ import annotations

from typing import Sequence

from e2e.evidence.stamps import Stamp, before, first, labelled
from e2e.measure.values import Value
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
