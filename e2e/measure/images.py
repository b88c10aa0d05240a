"""IM: image pulls read from the registry's requests and the pods' events (CASES-workloads.md §4
IM-1, IM-4) — the values :mod:`scenarios.images.test_images` judges and tests/test_mutations.py feeds
with mutated records."""

from __future__ import annotations

import re

from .values import Value

#: The kubelet's Pulled message: "… in 1.234s (5.678s including waiting) …" (ms below a second).
INCLUDING_WAITING = re.compile(r" in ([0-9.]+)(m?s) \(([0-9.]+)(m?s) including waiting\)")


def _seconds(v: str, unit: str) -> float:
    return float(v) / (1000.0 if unit == "ms" else 1.0)


def waited_s(pulled_message: str) -> float | None:
    """How long a pull waited before it started (s): the Pulled message's "(… including waiting)"
    less its pull time; None when the message has neither."""
    m = INCLUDING_WAITING.search(pulled_message)
    return None if m is None else _seconds(m.group(3), m.group(4)) - _seconds(m.group(1), m.group(2))


def pull_gaps(starts: list[float], backoffs: list[float]) -> list[Value]:
    """IM-1 ``pull_gap_s[k]`` for k ≥ 1: the time from pull k's first request at the registry to pull
    k+1's (``starts``, epoch s), with the back-off documented before it (``backoffs[k - 1]``, s)."""
    return [Value("IM-1", f"pull_gap_s[{k}]", starts[k] - starts[k - 1], {"backoff_s": backoffs[k - 1], "pull": k + 1}, at=starts[k])
            for k in range(1, len(starts))]


def serial_pulls(evidence: dict) -> list[Value]:
    """IM-4 from ``evidence`` (times in s from one origin): ``a_pulled_event_s`` (A's Pulled event,
    None when none came), ``b_pulling_event_s`` (B's Pulling events), ``b_first_request_s`` (B's first
    request at its registry), ``b_pulled`` (B's Pulled message). Values: ``b_first_request_after_a_pulled_s``,
    ``b_pulling_event_before_a_pulled`` (1 or 0), ``b_waited_minus_queue_time_s`` (B's wait by its
    Pulled message less the time from its Pulling to A's Pulled); None where evidence is missing."""
    a_end, b_pulling, b_first = evidence["a_pulled_event_s"], evidence["b_pulling_event_s"], evidence["b_first_request_s"]
    b_wait = waited_s(evidence["b_pulled"])
    return [Value("IM-4", "b_first_request_after_a_pulled_s", None if a_end is None else b_first - a_end, evidence),
            Value("IM-4", "b_pulling_event_before_a_pulled", int(bool(b_pulling) and a_end is not None and b_pulling[0] < a_end), evidence),
            Value("IM-4", "b_waited_minus_queue_time_s",
                  None if b_wait is None or not b_pulling or a_end is None else b_wait - (a_end - b_pulling[0]), evidence)]
