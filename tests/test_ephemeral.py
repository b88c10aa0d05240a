"""Ephemeral-storage helpers (e2e.evidence.ephemeral): configz/summary extraction,
Go durations, containerd's stats period, and eviction facts from a recording (CASES.md ES)."""

from __future__ import annotations

import pytest
from helpers import change, cstatus, epoch, event, pod, running, terminated

from e2e.evidence.ephemeral import (
    container_ends,
    containerd_stats_collect_period_s,
    disk_signals,
    eviction,
    eviction_settings,
    first_terminal,
    parse_duration_s,
    pod_storage,
)

MSG = 'Container app exceeded its local ephemeral storage limit "8Mi". '


@pytest.mark.parametrize("text, seconds", [("1m0s", 60.0), ("10s", 10.0), ("5m0s", 300.0), ("1h2m3.5s", 3723.5), ("0s", 0.0), ("250ms", 0.25)])
def test_parse_duration(text, seconds):
    assert parse_duration_s(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "1 m", "10", "abc"])
def test_parse_duration_rejects(text):
    with pytest.raises(ValueError):
        parse_duration_s(text)


def test_eviction_settings_keeps_only_what_is_set():
    cfg = {"evictionHard": {"nodefs.available": "0%"}, "volumeStatsAggPeriod": "1m0s", "syncFrequency": "1m0s",
           "localStorageCapacityIsolation": True}
    assert eviction_settings(cfg) == {"localStorageCapacityIsolation": True, "evictionHard": {"nodefs.available": "0%"},
                                      "volumeStatsAggPeriod": "1m0s"}


DUMP = """version = 3
[plugins]
  [plugins.'io.containerd.cri.v1.images']
    snapshotter = 'overlayfs'
    stats_collect_period = 10
    use_local_image_pull = false

    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = 'registry.k8s.io/pause:3.10'

  [plugins.'io.containerd.cri.v1.runtime']
    stats_collect_period = ''
"""


def test_containerd_stats_collect_period():
    assert containerd_stats_collect_period_s(DUMP) == 10.0
    assert containerd_stats_collect_period_s(DUMP.replace("    stats_collect_period = 10\n", "")) is None
    assert containerd_stats_collect_period_s("version = 3\n") is None


SUMMARY = {
    "pods": [
        {"podRef": {"name": "other", "namespace": "ns"}, "containers": []},
        {
            "podRef": {"name": "writer", "namespace": "ns", "uid": "u"},
            "containers": [
                {"name": "app", "rootfs": {"usedBytes": 9437184, "time": "2026-11-29T08:17:51Z"}, "logs": {"usedBytes": 8192}},
                {"name": "idle", "rootfs": {"usedBytes": 4096}},
            ],
            "volume": [{"name": "scratch", "usedBytes": 8392704, "time": "2026-11-29T08:18:00Z"}],
            "ephemeral-storage": {"usedBytes": 17850368},
        },
    ]
}


def test_pod_storage():
    s = pod_storage(SUMMARY, "ns", "writer")
    assert s.ephemeral_bytes == 17850368
    assert s.containers["app"].used_bytes == 9437184 + 8192
    assert s.containers["app"].rootfs_time == "2026-11-29T08:17:51Z"
    assert s.containers["idle"].used_bytes == 4096
    assert s.volumes == {"scratch": 8392704}
    assert s.as_dict()["volume_times"] == {"scratch": "2026-11-29T08:18:00Z"}
    assert pod_storage(SUMMARY, "ns", "nope") is None
    assert pod_storage(SUMMARY, "ns", "other").ephemeral_bytes is None


def _evicted_pod(phase: str, state: dict, conditions: dict | None = None) -> dict:
    p = pod("writer", phase=phase, statuses=[cstatus("app", state)], conditions=conditions or {"Ready": "False"})
    if phase == "Failed":
        p["status"]["reason"] = "Evicted"
        p["status"]["message"] = MSG
    return p


def _evicted_event(name: str = "writer.1") -> dict:
    return event(name, "Evicted", MSG, involved="writer", type_="Warning")


def test_eviction_from_recording():
    changes = [
        change(1.0, _evicted_pod("Running", running(1)), "ADDED"),
        change(3.0, event("other.1", "Evicted", "x", involved="other", type_="Warning")),
        change(12.4, _evicted_event()),
        change(14.6, _evicted_pod("Failed", terminated(137, "Error", 1, 14))),
        change(15.0, _evicted_pod("Failed", terminated(137, "Error", 1, 14))),
    ]
    assert eviction(changes[:3], "writer").terminal_phase is None
    ev = eviction(changes, "writer")
    assert ev.event_received_at == pytest.approx(epoch(0) + 12.4)
    assert ev.event_type == "Warning" and ev.event_message == MSG
    assert ev.terminal_received_at == pytest.approx(epoch(0) + 14.6) and ev.terminal_phase == "Failed"
    assert ev.terminal_reason == "Evicted" and ev.terminal_message == MSG
    assert ev.disruption_target is False
    end = ev.ends["app"]
    assert (end.exit_code, end.reason, end.source, end.from_runtime) == (137, "Error", "state", True)
    assert first_terminal(changes, "writer").received_at == pytest.approx(epoch(0) + 14.6)
    assert eviction(changes[:2], "writer") is None


def test_eviction_sees_a_disruption_target_condition():
    changes = [
        change(12.4, _evicted_event()),
        change(14.6, _evicted_pod("Failed", terminated(137, "Error", 1, 14), {"Ready": "False", "DisruptionTarget": "True"})),
    ]
    assert eviction(changes, "writer").disruption_target is True


def test_container_removed_before_its_status_was_published():
    """The kubelet removed the evicted pod's container first: the API only ever sees
    lastState ContainerStatusUnknown (137 as a placeholder) and state waiting ContainerCreating."""
    lost = cstatus("app", {"waiting": {"reason": "ContainerCreating"}}, restarts=1,
                   last={"terminated": {"exitCode": 137, "reason": "ContainerStatusUnknown",
                                        "message": "The container could not be located when the pod was deleted.  The container used to be Running"}})
    failed = pod("writer", phase="Failed", statuses=[lost])
    changes = [change(1.0, _evicted_pod("Running", running(1)), "ADDED"), change(12.4, _evicted_event()), change(14.6, failed)]
    end = eviction(changes, "writer").ends["app"]
    assert (end.exit_code, end.reason, end.source, end.from_runtime) == (137, "ContainerStatusUnknown", "lastState", False)
    assert container_ends(changes[:1], "writer") == {}


def test_disk_signals_are_read_as_the_eviction_manager_observes_them():
    summary = {"node": {"fs": {"availableBytes": 70, "capacityBytes": 100, "inodesFree": 900, "inodes": 1000},
                        "runtime": {"imageFs": {"availableBytes": 60, "capacityBytes": 100}}}}
    assert disk_signals(summary) == {"nodefs.available": (70, 100), "nodefs.inodesFree": (900, 1000),
                                     "imagefs.available": (60, 100)}
    assert disk_signals({"node": {}}) == {}
