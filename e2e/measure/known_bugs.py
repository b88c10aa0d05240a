"""KB-1: how long a preStop sleep keeps a pod whose only container exited by itself during it
(kubernetes#134338), from the container's own exit stamp and the recorder's receive times."""

from __future__ import annotations

from e2e.measure.values import Value


def prestop_outlives(t_delete: float, exited_at: float, shown_at: float | None, gone_at: float | None,
                     details: dict | None = None) -> list[Value]:
    """``KB-1 container_exit_after_delete_s`` (the container's ``app exit`` stamp − ``t_delete``),
    ``api_shows_exit_after_delete_s`` (the first recorded change without it running) and
    ``pod_gone_after_delete_s`` (the pod's DELETED), s after the delete (epoch s in; None: not seen).
    Source: CASES.md KB-1 (preStop sleep 20 s, the container exits ~6 s after the delete)."""
    return [Value("KB-1", "container_exit_after_delete_s", exited_at - t_delete, details=details or {}),
            Value("KB-1", "api_shows_exit_after_delete_s", None if shown_at is None else shown_at - t_delete, details=details or {}),
            Value("KB-1", "pod_gone_after_delete_s", None if gone_at is None else gone_at - t_delete, details=details or {})]
