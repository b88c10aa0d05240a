"""scenarios/faults: NF-2's skips say only what holds (test_kubelet.nf2_settings); NF-4's and NF-8's
worker, fault window and after-the-heal evidence on a --kubeconfig cluster (test_multi_node_faults)."""

from __future__ import annotations

import sys
import time

import pytest
from case_dirs import ROOT, import_case

from e2e.cluster.facts import Lifecycle
from e2e.documented import faults as doc
from e2e.documented import faults_node as fnd
from e2e.record.recorder import Change
from e2e.run.scenario import Scenario

assert import_case(ROOT / "scenarios" / "faults" / "test_kubelet.py") is None
kubelet = sys.modules["scenarios.faults.test_kubelet"]


def _scenario(tmp_path, grace_s: float) -> Scenario:
    sc = Scenario(None, "ns", None, None, tmp_path, 37, None, None, nodes=("w1",),
                  facts={"nodes": {"cp": {}, "w1": {}, "w2": {}}})
    sc.lifecycle = lambda node: Lifecycle(40, grace_s, 5, f"node-monitor-grace-period {grace_s:g}s")  # type: ignore[method-assign]
    return sc


def test_on_several_nodes_the_plain_variant_names_the_exclude_disruption_variant_that_runs(tmp_path):
    sc = _scenario(tmp_path, 50)
    assert kubelet.nf2_settings(sc, "w1", doc.FAST, True).grace_s == 50  # the exclude-disruption variant goes on
    with pytest.raises(pytest.skip.Exception, match=r"only node .*also has cp, w2 \(the exclude-disruption variant measures"):
        kubelet.nf2_settings(sc, "w1", doc.FAST, False)


def test_a_grace_too_long_for_the_stop_skips_both_variants_naming_the_grace(tmp_path):
    """Before, the plain variant said 'the exclude-disruption variant runs' while that one skipped
    for the grace."""
    sc = _scenario(tmp_path, 120)
    for excluded in (True, False):
        with pytest.raises(pytest.skip.Exception, match=r"stops the kubelet 120 s: needs node-monitor-grace-period ≤"):
            kubelet.nf2_settings(sc, "w1", doc.FAST, excluded)


# -- NF-4, NF-8 on a --kubeconfig cluster (test_multi_node_faults) --------------------------------

assert import_case(ROOT / "scenarios" / "faults" / "test_multi_node_faults.py") is None
multi = sys.modules["scenarios.faults.test_multi_node_faults"]
HEALED_AT = 1_800_000_100.0


def _placed(tmp_path, nodes: tuple[str, ...], grace_s: float = 50) -> Scenario:
    sc = Scenario(None, "ns", None, None, tmp_path, 37, None, None, nodes=nodes)
    sc.lifecycle = lambda node: Lifecycle(40, grace_s, 5, f"node-monitor-grace-period {grace_s:g}s")  # type: ignore[method-assign]
    return sc


def test_through_the_agent_the_worker_is_the_last_placed_node(tmp_path):
    """Before, NF-4 and NF-8 skipped on every --kubeconfig cluster: the worker was a kind node container."""
    assert multi.two_node_worker(_placed(tmp_path, ("w1", "w2"))) == "w2"
    with pytest.raises(pytest.skip.Exception, match=r"needs two schedulable nodes placed for the test, has \['w1'\]"):
        multi.two_node_worker(_placed(tmp_path, ("w1",)))


class _Kind:
    def __init__(self, name: str, workers: int):
        self.control_plane = f"{name}-control-plane"
        self.workers = [f"{name}-worker{i or ''}" for i in range(workers)]

    def nodes(self) -> list[str]:
        return [self.control_plane, *self.workers]


def test_in_the_rooms_cluster_the_worker_is_the_multi_node_rooms_last(tmp_path):
    """Before, a kind cluster with several workers (E2E_ROOMS=1) failed the one-worker assertion;
    the suite's own multi-node cluster places nothing: its one worker."""
    rooms = _placed(tmp_path, ("rooms-worker1", "rooms-worker2"))
    rooms.kind = _Kind("rooms", 4)  # type: ignore[assignment]
    assert multi.two_node_worker(rooms) == "rooms-worker2"
    own = _placed(tmp_path, ())
    own.kind = _Kind("c", 1)  # type: ignore[assignment]
    assert multi.two_node_worker(own) == "c-worker"


def test_the_fault_window_follows_the_live_grace_or_the_test_skips_naming_it(tmp_path):
    settings, window_s = multi._settings(_placed(tmp_path, ("w1", "w2")), "w1", fnd.FAST, fnd.PARTITION_S[fnd.FAST])
    assert settings.grace_s == 50 and window_s == fnd.PARTITION_S[fnd.FAST] + (50 + 10) - (20 + 2)
    with pytest.raises(pytest.skip.Exception, match=r"needs node-monitor-grace-period \+ 2 × node-monitor-period ≤ .*"
                                                    r"node-monitor-grace-period 900s"):
        multi._settings(_placed(tmp_path, ("w1", "w2"), grace_s=900), "w1", fnd.FAST, fnd.PARTITION_S[fnd.FAST])


def _change(at: float, state: dict, cid: str = "containerd://a", kind: str = "MODIFIED") -> Change:
    pod = {"metadata": {"name": "web-1"}, "status": {"containerStatuses": [{"name": "app", "containerID": cid, "state": state}]}}
    return Change(at, "Pod", kind, "web-1", pod)


def _finished(at: float) -> dict:
    return {"terminated": {"finishedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))}}


@pytest.mark.parametrize("changes, ran", [
    ([_change(HEALED_AT - 30, {"running": {}}), _change(HEALED_AT + 3, _finished(HEALED_AT + 2), kind="DELETED")], True),
    ([_change(HEALED_AT + 2, {"running": {}})], True),  # still running after the heal
    ([_change(HEALED_AT + 3, _finished(HEALED_AT - 40))], False),  # it ended during the partition
    ([_change(HEALED_AT + 3, {"running": {}}, cid="containerd://b")], False),  # another container than before the cut
    ([_change(HEALED_AT - 30, {"running": {}})], None),  # nothing recorded after the heal: no evidence
])
def test_the_evicted_pods_container_ran_through_the_partition_from_its_status_after_the_heal(changes, ran):
    """Before, NF-8 asked crictl in the node during the cut, which through the agent cuts the exec too."""
    value, evidence = multi.ran_through(changes, {"app": "containerd://a"}, HEALED_AT)
    assert value is ran
    if ran is not None:
        assert evidence["app"]["before"] == "containerd://a"
