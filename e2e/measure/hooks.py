"""HK: a pod deleted while its postStart hook runs, read from its recording and its container's
stamps (CASES-workloads.md §4 HK-4, known bug kubernetes#116032) — the values
:mod:`scenarios.hooks.test_hooks` judges and tests/test_mutations.py feeds with mutated records."""

from __future__ import annotations

from e2e.evidence.stamps import first, parse

from .values import Value


def deletion_behind_a_running_hook(delete: float, gone: float | None, hook_killed: float | None, terminated: dict,
                                   window_s: float) -> list[Value]:
    """HK-4 from the delete (epoch s), the pod's removal as recorded (its DELETED's receive time; None:
    not gone), the moment the hook's process was killed (None: no kill was needed), the container's
    ``terminated`` state (its message holds the container's stamps) and the window the pod is
    watched for after the delete (s): ``pod_present_after_window`` (not gone within ``window_s``),
    ``sigterm_before_hook_killed`` (a ``sigterm`` stamp, before the kill if there was one),
    ``gone_after_hook_killed_s`` (with a kill and a removal; s, to the ms) and ``exit_code``."""
    sig = first(parse(terminated.get("message") or ""), "sigterm")
    gone_after_delete = None if gone is None else round(gone - delete, 3)
    evidence = {"delete": delete, "hook_killed": hook_killed, "sigterm": sig.at if sig else None, "terminated": terminated}
    out = [Value("HK-4", "pod_present_after_window", gone_after_delete is None or gone_after_delete > window_s,
                 {"window_s": window_s, "gone_after_delete_s": gone_after_delete}, at=delete + window_s),
           Value("HK-4", "sigterm_before_hook_killed", sig is not None and (hook_killed is None or sig.at < hook_killed), evidence)]
    if hook_killed is not None and gone is not None:
        out.append(Value("HK-4", "gone_after_hook_killed_s", round(gone - hook_killed, 3), evidence, at=gone))
    return [*out, Value("HK-4", "exit_code", terminated.get("exitCode"), evidence)]
