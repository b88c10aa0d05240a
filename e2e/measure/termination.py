"""PS-2: when SIGTERM reached the app after the pod's delete, from the app's own log stamps."""

from __future__ import annotations

from collections.abc import Sequence

from e2e.evidence.stamps import Stamp, first
from e2e.measure.values import Value


def sigterm_after_delete(t_delete: float, stamps: Sequence[Stamp]) -> Value:
    """``PS-2 sigterm_after_delete_s``: the app's first ``SIGTERM`` stamp (epoch s, its own clock)
    − ``t_delete`` (epoch s, when the delete request returned), s to the ms, ``around`` the SIGTERM;
    None when the log has no SIGTERM. Source: CASES.md PS-2 (preStop sleep N: ≈ N s)."""
    sig = first(stamps, "SIGTERM")
    return Value("PS-2", "sigterm_after_delete_s", None if sig is None else round(sig.at - t_delete, 3),
                 at=None if sig is None else sig.at)
