"""e2e.evidence.kubelet_heap: the kubelet's /metrics and its heap profile's MemStats read into one
sample, through a fake API server (no cluster)."""

from __future__ import annotations

import pytest

from e2e.cluster.gates import GatesUnreadable
from e2e.evidence import kubelet_heap
from e2e.evidence.kubelet_heap import HEAP_PATH, HeapSample, memstats, metric_total, read_sample, sample_of, table
from helpers import api_answering

# As a kubelet writes them: labelled samples of one metric, HELP/TYPE lines, a metric whose name
# starts like another's, exponent notation.
METRICS = """\
# HELP kubelet_pod_worker_duration_seconds [ALPHA] Duration in seconds to sync a single pod.
# TYPE kubelet_pod_worker_duration_seconds histogram
kubelet_pod_worker_duration_seconds_bucket{operation_type="sync",le="0.005"} 900
kubelet_pod_worker_duration_seconds_sum{operation_type="sync"} 12.5
kubelet_pod_worker_duration_seconds_count{operation_type="create"} 21
kubelet_pod_worker_duration_seconds_count{operation_type="sync"} 1234
kubelet_pod_worker_duration_seconds_count{operation_type="update"} 45
# TYPE go_goroutines gauge
go_goroutines 412
go_goroutines_total_not_this 7
process_resident_memory_bytes 8.1234944e+07
process_cpu_seconds_total 123.45
"""

# The end of a heap profile's text form (runtime/pprof writeHeapInternal, debug=1).
HEAP = """\
heap profile: 1200: 4563968 [98000: 912384000] @ heap/1048576
1: 81920 [1: 81920] @ 0x1 0x2
#\t0x1\tcontext.withCancel+0x2a\t/usr/local/go/src/context/context.go:237

# runtime.MemStats
# Alloc = 41234432
# TotalAlloc = 912384000
# HeapAlloc = 41234432
# HeapObjects = 412345
# BySize = [{0 0 0} {8 123 45}]
# NumGC = 77
# DebugGC = false
"""


def test_metric_total_sums_every_label_set_of_one_metric_only():
    assert metric_total(METRICS, "kubelet_pod_worker_duration_seconds_count") == 1300
    assert metric_total(METRICS, "go_goroutines") == 412
    assert metric_total(METRICS, "process_resident_memory_bytes") == 81234944
    assert metric_total(METRICS, "kubelet_running_pods") is None


def test_memstats_reads_the_integer_lines_of_the_profile_end():
    stats = memstats(HEAP)
    assert (stats["HeapObjects"], stats["HeapAlloc"], stats["NumGC"]) == (412345, 41234432, 77)
    assert "BySize" not in stats and "DebugGC" not in stats


def test_sample_of_reads_every_number_and_names_each_missing_one():
    s = sample_of(METRICS, HEAP, at=100.0)
    assert s == HeapSample(100.0, 1300, 412345, 41234432, 412, 81234944, 123.45, 77)
    with pytest.raises(ValueError, match=r"no go_goroutines, MemStats HeapObjects, MemStats HeapAlloc, MemStats NumGC"):
        sample_of(METRICS.replace("go_goroutines 412", ""), "heap profile: 0: 0 [0: 0] @ heap/1048576\n", at=100.0)


def test_read_sample_reads_metrics_then_the_heap_after_a_forced_collection(monkeypatch):
    monkeypatch.setattr(kubelet_heap.time, "time", lambda: 1000.0)
    proxy = "/api/v1/nodes/kind-control-plane/proxy"
    api = api_answering({f"{proxy}/metrics": METRICS, f"{proxy}/{HEAP_PATH}": HEAP})
    assert read_sample(api, "kind-control-plane") == sample_of(METRICS, HEAP, at=1000.0)
    assert [u.removeprefix("https://127.0.0.1:40000") for u in api.asked] == [
        f"{proxy}/metrics", f"{proxy}/debug/pprof/heap?gc=1&debug=1"]


def test_read_sample_fails_naming_the_path_the_kubelet_refused():
    proxy = "/api/v1/nodes/n1/proxy"
    api = api_answering({f"{proxy}/metrics": METRICS, f"{proxy}/{HEAP_PATH}": 403})
    with pytest.raises(GatesUnreadable, match=r"debug/pprof/heap\?gc=1&debug=1: HTTP 403"):
        read_sample(api, "n1")


def test_table_is_one_line_per_sample_under_its_header():
    s = sample_of(METRICS, HEAP, at=100.0)
    lines = table([s, s]).splitlines()
    assert lines[0].startswith("# at") and len(lines) == 3
    assert lines[1].split() == ["100.000", "1300", "412345", "41234432", "412", "81234944", "123.45", "77"]
