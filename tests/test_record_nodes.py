"""e2e.record.nodes (a node's Lease renewals, conditions and taints from its recording) and
e2e.record.pods.deletion_requested_at — on recordings shaped as the recorder keeps them."""

from __future__ import annotations

from e2e.record.nodes import (
    condition_changes,
    first_condition,
    flips,
    last_renew_before,
    lease_duration,
    ready_seen,
    renewals,
    taint_gone,
    taint_seen,
)
from e2e.record.pods import deletion_requested_at
from e2e.record.recorder import Change
from e2e.record.timeline import parse_time

T0 = parse_time("2026-12-02T01:33:20Z")


def lease(at: float, renew: str, duration: int = 20) -> Change:
    return Change(at, "Lease", "MODIFIED", "n1", {"spec": {"renewTime": renew, "leaseDurationSeconds": duration}})


def node(at: float, ready: str, transition: str, reason: str = "KubeletReady", taints=()) -> Change:
    cond = {"type": "Ready", "status": ready, "reason": reason, "lastTransitionTime": transition}
    return Change(at, "Node", "MODIFIED", "n1", {"status": {"conditions": [cond]}, "spec": {"taints": list(taints)}})


UNREACHABLE_NS = {"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"}
UNREACHABLE_NE = {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute", "timeAdded": "2026-12-02T01:33:52Z"}
# NF-8 on CI, 2026-12-02: renewals every 5 s, Unknown at +19, NoSchedule at once, NoExecute 10 s later, Ready again
RECORDING = [
    node(T0 + 0.5, "True", "2026-12-02T01:30:00Z"),
    node(T0 + 10.0, "True", "2026-12-02T01:30:00Z"),  # a status update, same state
    node(T0 + 19.365, "Unknown", "2026-12-02T01:33:42Z", "NodeStatusUnknown"),
    node(T0 + 19.406, "Unknown", "2026-12-02T01:33:42Z", "NodeStatusUnknown", [UNREACHABLE_NS]),
    node(T0 + 29.462, "Unknown", "2026-12-02T01:33:42Z", "NodeStatusUnknown", [UNREACHABLE_NS, UNREACHABLE_NE]),
    node(T0 + 60.2, "True", "2026-12-02T01:34:40Z", "KubeletReady", [UNREACHABLE_NS, UNREACHABLE_NE]),
    node(T0 + 60.3, "True", "2026-12-02T01:34:40Z"),
]


def test_renewals_are_distinct_and_rising_and_the_last_one_before_a_moment_is_found():
    recording = [lease(T0 + 3.2, "2026-12-02T01:33:26.161217Z"), lease(T0 + 3.3, "2026-12-02T01:33:26.161217Z"),
                 lease(T0 + 8.2, "2026-12-02T01:33:31.177065Z", 40)]
    assert renewals(recording) == [parse_time("2026-12-02T01:33:26.161217Z"), parse_time("2026-12-02T01:33:31.177065Z")]
    assert last_renew_before(recording, parse_time("2026-12-02T01:33:30Z")) == parse_time("2026-12-02T01:33:26.161217Z")
    assert last_renew_before(recording, T0) is None
    assert lease_duration(recording) == 40 and lease_duration([]) is None


def test_condition_changes_keep_each_distinct_state_once():
    states = condition_changes(RECORDING)
    assert [(round(s.received_at - T0, 3), s.obj["status"]) for s in states] == [(0.5, "True"), (19.365, "Unknown"), (60.2, "True")]
    assert first_condition(RECORDING, "Unknown", after=T0 + 5).received_at == T0 + 19.365
    assert first_condition(RECORDING, "False") is None
    assert flips(states, T0, T0 + 100) == 1 and flips(states, T0 + 20, T0 + 100) == 0


def test_a_pod_condition_is_compared_without_its_reason():
    pod = [Change(T0 + i, "Pod", "MODIFIED", "web", {"status": {"conditions": [
        {"type": "Ready", "status": "False", "reason": reason, "lastTransitionTime": "2026-12-02T01:33:42Z"}]}})
        for i, reason in enumerate(["ContainersNotReady", ""])]
    assert len(condition_changes(pod, "Ready")) == 2
    assert len(condition_changes(pod, "Ready", with_reason=False)) == 1


def test_taints_seen_and_gone():
    ne = taint_seen(RECORDING, "node.kubernetes.io/unreachable", "NoExecute")
    assert ne.received_at == T0 + 29.462 and ne.obj["timeAdded"] == "2026-12-02T01:33:52Z"
    assert taint_seen(RECORDING, "node.kubernetes.io/unreachable", "NoSchedule", after=T0 + 20).received_at == T0 + 29.462
    assert taint_seen(RECORDING, "node.kubernetes.io/not-ready", "NoExecute") is None
    assert taint_gone(RECORDING, "node.kubernetes.io/unreachable", after=T0 + 20) == T0 + 60.3


def test_ready_seen_takes_any_change_showing_ready_not_only_a_new_state():
    assert ready_seen(RECORDING, after=T0 + 30) == T0 + 60.2
    # a node that never left Ready (a cancelled shutdown): the next status update counts
    assert ready_seen(RECORDING[:2], after=T0 + 5) == T0 + 10.0
    assert first_condition(RECORDING[:2], "True", after=T0 + 5) is None


def test_deletion_requested_at_is_the_timestamp_minus_the_grace():
    meta = {"name": "web", "deletionTimestamp": "2026-12-02T01:34:32Z", "deletionGracePeriodSeconds": 30}
    pod = [Change(T0, "Pod", "MODIFIED", "web", {"metadata": {"name": "web"}}),
           Change(T0 + 1, "Pod", "MODIFIED", "web", {"metadata": meta})]
    assert deletion_requested_at(pod) == parse_time("2026-12-02T01:34:02Z")
    assert deletion_requested_at(pod[:1]) is None
