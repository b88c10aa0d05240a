"""PB: a liveness kill read from the killed run's own stamps (CASES-workloads.md §4 PB-2) — the values
:mod:`scenarios.probes.test_probes` judges and tests/test_mutations.py feeds with mutated runs."""

from __future__ import annotations

from e2e.evidence.stamps import Stamp, first

from .values import Value


def liveness_kill(key: str, removed_at: float, run: list[Stamp]) -> list[Value]:
    """PB-2's kill of the pod ``key`` (``slow``, ``fast``) after /tmp/ok was removed at ``removed_at``
    (the exec's own stamp, epoch s), from the killed run's stamps (its termination message):
    ``sigterm_after_removal_s[key]`` (s, to the ms) and, for ``slow`` (which has a preStop hook),
    ``prestop_before_sigterm[slow]``. Raises ``ValueError`` when the run has no ``sigterm`` stamp."""
    sig = first(run, "sigterm")
    if sig is None:
        raise ValueError(f"PB-2 {key}: the killed run has no sigterm stamp: {run}")
    out = [Value("PB-2", f"sigterm_after_removal_s[{key}]", round(sig.at - removed_at, 3),
                 {"run": [(s.event, s.at) for s in run]}, at=sig.at)]
    if key == "slow":
        prestop = first(run, "prestop")
        out.append(Value("PB-2", "prestop_before_sigterm[slow]", prestop is not None and prestop.at <= sig.at,
                         {"prestop": prestop.at if prestop else None, "sigterm": sig.at}))
    return out
