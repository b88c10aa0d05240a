"""OM: what one OOM-killed run shows, from its :class:`~e2e.evidence.oomkill.Termination` (the
API's terminated state, the reasons it showed in order, the pod's events, the kernel's report)."""

from __future__ import annotations

from e2e.documented.memory import NO_EVICTION
from e2e.evidence.oomkill import Termination
from e2e.measure.values import Value


def reason_raced(t: Termination) -> bool:
    """Exit 137 without ``OOMKilled``: the runtime race upstream tolerates (kubernetes#119600,
    containerd#8893); its reason is set aside as a flake, not judged."""
    return t.exit_code == 137 and t.reason != "OOMKilled"


def oom_run_values(case: str, prefix: str, index: int, t: Termination, kernel_read: bool,
                   details: dict | None = None) -> list[Value]:
    """``<prefix>exit_code[run=<index>]`` (137: SIGKILL), ``<prefix>terminated_reason[run=…]``
    (``OOMKilled``; left out when :func:`reason_raced`), ``<prefix>kernel_oom_kill[run=…]`` (a kernel
    report names the container; only when the kernel log was read) and
    ``<prefix>eviction_signals[run=…]`` (``none``: no kubelet eviction sign). Source: CASES.md OM-1."""
    q = f"[run={index}]"
    out = [Value(case, f"{prefix}exit_code{q}", t.exit_code, details=details or {})]
    if not reason_raced(t):
        out.append(Value(case, f"{prefix}terminated_reason{q}", t.reason or None, details=details or {}))
    if kernel_read:
        out.append(Value(case, f"{prefix}kernel_oom_kill{q}", t.kernel is not None, details=details or {}))
    out.append(Value(case, f"{prefix}eviction_signals{q}", ", ".join(t.eviction_signals()) or NO_EVICTION, details=details or {}))
    return out
