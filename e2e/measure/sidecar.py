"""SC-1: the start of a pod with an init container, a sidecar (restartable init container with a
startupProbe) and a main container, from the containers' own stamps (``<container> <event>``).
The order itself is judged by :func:`e2e.evidence.stamp_order.expect_order` against the documented
order."""

from __future__ import annotations

from collections.abc import Sequence

from e2e.evidence.stamps import Stamp, gap_ms
from e2e.measure.values import Value


def start_gaps(stamps: Sequence[Stamp]) -> list[Value]:
    """``SC-1 sidecar_start_after_init_exit_ms`` (the init container's exit → the sidecar's start),
    ``app_start_after_startup_ok_ms`` (the sidecar's startup probe succeeded → the main container's
    start) and ``app_start_after_sidecar_start_ms`` (details: ``startup_ok_after_file_ms``, the probe's
    success after the sidecar wrote its file), ms; None where a stamp is missing. Source: CASES.md SC-1."""
    return [
        Value("SC-1", "sidecar_start_after_init_exit_ms", gap_ms(stamps, "init exit", "sidecar start")),
        Value("SC-1", "app_start_after_startup_ok_ms", gap_ms(stamps, "sidecar startup-ok", "app start")),
        Value("SC-1", "app_start_after_sidecar_start_ms", gap_ms(stamps, "sidecar start", "app start"),
              details={"startup_ok_after_file_ms": gap_ms(stamps, "sidecar started-file", "sidecar startup-ok")}),
    ]
