"""What ``kubectl get pod`` prints in its READY and STATUS columns, computed from a pod.

A port of ``printPod`` in kubernetes ``pkg/printers/internalversion/printers.go`` (1.37),
so that reports and assertions use the exact strings users see (``Init:1/2``,
``Init:CrashLoopBackOff``, ``PodInitializing``, ``Terminating``...).

Pods are plain dicts in the API's JSON shape (camelCase keys), as the recorder keeps them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PodColumns:
    """``ready`` like ``"1/2"``, ``status`` like ``"Init:0/2"``, ``restarts`` a count."""

    ready: str
    status: str
    restarts: int


def _is_sidecar(container: dict | None) -> bool:
    return bool(container and container.get("restartPolicy") == "Always")


def _condition_true(status: dict, kind: str) -> bool:
    return any(c.get("type") == kind and c.get("status") == "True" for c in status.get("conditions") or [])


def _terminated_reason(term: dict, prefix: str = "") -> str:
    if term.get("reason"):
        return prefix + term["reason"]
    if term.get("signal"):
        return f"{prefix}Signal:{term['signal']}"
    return f"{prefix}ExitCode:{term.get('exitCode', 0)}"


def ready_status(pod: dict | None) -> tuple[str, str] | None:
    """``(READY, STATUS)`` of ``pod`` as ``kubectl get pod`` shows them (``("2/2", "Running")``),
    or None for no pod."""
    if pod is None:
        return None
    cols = pod_columns(pod)
    return cols.ready, cols.status


def pod_columns(pod: dict) -> PodColumns:
    """The READY, STATUS and RESTARTS columns of ``pod`` as ``kubectl get pod`` shows them."""
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    meta = pod.get("metadata") or {}
    init_specs = {c["name"]: c for c in spec.get("initContainers") or []}
    total = len(spec.get("containers") or []) + sum(1 for c in init_specs.values() if _is_sidecar(c))
    ready = 0
    restarts = 0
    sidecar_restarts = 0
    phase = status.get("phase") or ""
    reason = status.get("reason") or phase
    for cond in status.get("conditions") or []:
        if cond.get("type") == "PodScheduled" and cond.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"

    initializing = False
    init_statuses = status.get("initContainerStatuses") or []
    for i, cs in enumerate(init_statuses):
        restarts += cs.get("restartCount", 0)
        sidecar = _is_sidecar(init_specs.get(cs.get("name")))
        if sidecar:
            sidecar_restarts += cs.get("restartCount", 0)
        state = cs.get("state") or {}
        term = state.get("terminated")
        waiting = state.get("waiting")
        if term is not None and term.get("exitCode", 0) == 0:
            continue
        if sidecar and cs.get("started"):
            if cs.get("ready"):
                ready += 1
            continue
        if term is not None:
            reason = _terminated_reason(term, "Init:")
        elif waiting is not None and waiting.get("reason") and waiting["reason"] != "PodInitializing":
            reason = "Init:" + waiting["reason"]
        else:
            reason = f"Init:{i}/{len(spec.get('initContainers') or [])}"
        initializing = True
        break

    if not initializing or _condition_true(status, "Initialized"):
        restarts = sidecar_restarts
        has_running = False
        error_reason = ""
        for cs in reversed(status.get("containerStatuses") or []):
            restarts += cs.get("restartCount", 0)
            state = cs.get("state") or {}
            waiting, term = state.get("waiting"), state.get("terminated")
            if waiting is not None and waiting.get("reason"):
                reason = waiting["reason"]
            elif term is not None:
                reason = _terminated_reason(term)
                if term.get("exitCode", 0) != 0:
                    error_reason = reason
            elif cs.get("ready") and state.get("running") is not None:
                has_running = True
                ready += 1
        if reason == "Completed":
            if has_running and _condition_true(status, "Ready"):
                reason = "Running"
            elif error_reason:
                reason = error_reason
            elif has_running:
                reason = "NotReady"

    if meta.get("deletionTimestamp") and status.get("reason") == "NodeLost":
        reason = "Unknown"
    elif meta.get("deletionTimestamp") and phase not in ("Succeeded", "Failed"):
        reason = "Terminating"
    return PodColumns(ready=f"{ready}/{total}", status=reason, restarts=restarts)
