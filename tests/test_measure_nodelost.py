"""e2e.measure.nodelost: the node-lost chain of NF-2, NF-4 and NF-8 on its one clock."""

from __future__ import annotations

import pytest

from e2e.measure.nodelost import UNREACHABLE, after_unknown_s, node_lost
from e2e.record.recorder import Change
from e2e.record.timeline import parse_time

UNKNOWN = {"type": "Ready", "status": "Unknown", "lastTransitionTime": "2026-12-06T10:39:05Z",
           "reason": "NodeStatusUnknown", "message": "Kubelet stopped posting node status."}
T_UNKNOWN = parse_time(UNKNOWN["lastTransitionTime"])


def node(at: float, ready: dict, taints: list[dict] | None = None) -> Change:
    return Change(at, "Node", "MODIFIED", "n1", {"spec": {"taints": taints or []}, "status": {"conditions": [ready]}})


def lease(at: float, renew: str) -> Change:
    return Change(at, "Lease", "MODIFIED", "n1", {"spec": {"renewTime": renew}})


READY = {"type": "Ready", "status": "True", "lastTransitionTime": "2026-12-06T10:30:00Z"}
NOSCHED = {"key": UNREACHABLE, "effect": "NoSchedule", "timeAdded": "2026-12-06T10:39:06Z"}
NOEXEC = {"key": UNREACHABLE, "effect": "NoExecute", "timeAdded": "2026-12-06T10:39:05Z"}
FAULT = T_UNKNOWN - 20.5


def test_the_chain_on_the_api_clock_receive_times_play_no_part():
    """Unknown − last renewal, and both taints' timeAdded − Unknown, whatever the receive times."""
    nodes = [node(FAULT - 5, READY), node(T_UNKNOWN + 7.9, UNKNOWN), node(T_UNKNOWN + 9.3, UNKNOWN, [NOSCHED, NOEXEC])]
    leases = [lease(FAULT - 10, "2026-12-06T10:38:34.000000Z"), lease(FAULT - 1, "2026-12-06T10:38:44.250000Z"),
              lease(FAULT + 3, "2026-12-06T10:38:48.000000Z")]  # renewed after the fault: not the last before it
    chain = node_lost("NF-4", "multi-node-fast-lifecycle", nodes, leases, FAULT, renewed_by=FAULT)
    got = {v.name: v.value for v in chain.values}
    assert got == {"unknown_after_last_renew_s[multi-node-fast-lifecycle]": 20.75, "ready_unknown_reason": "NodeStatusUnknown",
                   "ready_unknown_message": "Kubelet stopped posting node status.",
                   "noschedule_taint_after_unknown_s": 1.0, "noexecute_taint_after_unknown_s": 0.0}
    assert {v.case for v in chain.values} == {"NF-4"}
    assert chain.noexecute_added == T_UNKNOWN and chain.last_renew == parse_time("2026-12-06T10:38:44.25Z")
    assert all(v.at == T_UNKNOWN + 7.9 for v in chain.values)


def test_without_a_taint_or_a_renewal_the_values_say_not_seen():
    chain = node_lost("NF-2", "fast-lifecycle", [node(T_UNKNOWN + 1, UNKNOWN)], [], FAULT, renewed_by=FAULT + 1)
    got = {v.name: v.value for v in chain.values}
    assert got["unknown_after_last_renew_s[fast-lifecycle]"] is None and got["noschedule_taint_after_unknown_s"] is None
    assert "noexecute_taint_after_unknown_s" not in got and chain.noexecute_added is None


def test_no_unknown_after_the_fault_is_a_clear_error():
    with pytest.raises(ValueError, match="no Ready=Unknown recorded after the fault"):
        node_lost("NF-8", "fast-lifecycle", [node(FAULT - 30, UNKNOWN), node(FAULT + 1, READY)], [], FAULT, renewed_by=FAULT)


def test_after_unknown_s_is_none_without_a_time():
    assert after_unknown_s(None, UNKNOWN) is None
    assert after_unknown_s("2026-12-06T10:39:07Z", UNKNOWN) == 2.0
