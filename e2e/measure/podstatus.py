"""PC: status latencies read from their samples (CASES-workloads.md §4 PC-3) — the values
:mod:`scenarios.podstatus.test_podstatus` judges and tests/test_mutations.py feeds with mutated samples."""

from __future__ import annotations

import math

from .values import Value

#: PC-3's sample series, in the order they are taken: the container's start, its exit, a CPU resize → the watch.
LATENCIES = ("start_to_watch_median_s", "exit_to_watch_median_s", "resize_to_watch_median_s")


def median_p95(samples: list[float]) -> tuple[float, float]:
    """(the median, the 95th percentile by nearest rank) of ``samples``. Raises ``ValueError`` on none."""
    if not samples:
        raise ValueError("no samples")
    ordered, n = sorted(samples), len(samples)
    median = ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2
    return median, ordered[min(n - 1, math.ceil(0.95 * n) - 1)]


def status_latency(name: str, samples: list[float]) -> Value:
    """PC-3 ``name`` (one of :data:`LATENCIES`): the median of ``samples`` (s), judged; the p95 and
    the samples (to the ms) in the details."""
    median, p95 = median_p95(samples)
    return Value("PC-3", name, median, {"p95_s": round(p95, 3), "samples_s": [round(v, 3) for v in samples]})
