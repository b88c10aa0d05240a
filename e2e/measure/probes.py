"""PB and PR: a liveness kill read from the killed run's own stamps (CASES-workloads.md §4 PB-2), and
a run that never passed its startup probe, from its own log (the app's ``start`` and ``sigterm``
stamps and one ``probe:<kind>:<result>`` stamp per probe the kubelet ran; CASES.md PR-1) — the values
:mod:`scenarios.probes.test_probes` and :mod:`scenarios.api.test_api` judge and tests/test_mutations.py
feeds with mutated runs."""

from __future__ import annotations

from collections.abc import Sequence

from e2e.evidence.stamps import Stamp, first, intervals, labelled

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


def killed_run(key: str, start: Stamp, sigterm: Stamp, stamps: Sequence[Stamp]) -> list[Value]:
    """PR-1's values of the run that ``start`` ed and got ``sigterm`` (its stamps in ``stamps``),
    ``key`` the pod's restart policy: ``startup_kill_after_start_s[<key>]`` (s, to the ms; 3 × 2 s =
    6 s documented), ``startup_probe_failures_before_kill[<key>]`` (3), ``startup_probe_period_s[<key>,i]``
    (2 s), ``kill_after_last_startup_failure_s[<key>]`` and ``liveness_/readiness_probe_runs_before_started[<key>]``
    (0: they wait for the startup probe). Source: CASES.md PR-1."""
    startup = labelled(stamps, "probe:startup")
    details = {"start": start.at, "sigterm": sigterm.at, "startup_probes": [(s.event, s.at) for s in startup]}
    out = [Value("PR-1", f"startup_kill_after_start_s[{key}]", round(sigterm.at - start.at, 3), at=sigterm.at, details=details or {}),
           Value("PR-1", f"startup_probe_failures_before_kill[{key}]",
                 len([s for s in startup if s.event == "probe:startup:failure" and s.at <= sigterm.at]), at=sigterm.at,
                 details=details or {})]
    out += [Value("PR-1", f"startup_probe_period_s[{key},{i}]", gap, at=startup[i + 1].at) for i, gap in enumerate(intervals(startup))]
    if startup:
        out.append(Value("PR-1", f"kill_after_last_startup_failure_s[{key}]", round(sigterm.at - startup[-1].at, 3), at=sigterm.at))
    out += [Value("PR-1", f"{probe}_probe_runs_before_started[{key}]", len(labelled(stamps, f"probe:{probe}")))
            for probe in ("liveness", "readiness")]
    return out


def start_and_sigterm(stamps: Sequence[Stamp]) -> tuple[Stamp | None, Stamp | None]:
    """The run's first ``start`` and ``sigterm`` stamps (None: not in its log)."""
    return first(stamps, "start"), first(stamps, "sigterm")
