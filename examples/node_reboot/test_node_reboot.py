"""NR-1 — a pod on a node that reboots (a case outside the catalogues: README's "A fault in your
own case" points here; issue 41, item 7). The fault is :func:`e2e.faults.node.node_rebooted`: the
worker's container stopped (its systemd halts) and started again, a new boot ID for the boot.

Documented (read in v1.34.4, v1.35.4, v1.36.3 and v1.37.2; cadvisor v0.52.1, v0.53.0, v0.56.2 and
lib v0.60.5 as each vendors it; containerd v2.3.4, every node image's):

- the kubelet reports the boot ID cadvisor reads at its start (``machine.Info``:
  ``/proc/sys/kernel/random/boot_id``) as ``status.nodeInfo.bootID``, and when it differs from the
  node's recorded one emits one Warning event ``Rebooted``, "Node <node> has been rebooted, boot id:
  <id>" (pkg/kubelet/nodestatus/setters.go ``MachineInfo``, events.NodeRebooted) — the node's event,
  in the ``default`` namespace;
- the pod's sandbox did not survive the boot: containerd finds its record in ``/var`` (kept) but no
  task (``/run`` is new), so the sandbox is NOTREADY (internal/cri/server/restart.go); the kubelet
  makes a new one and says so in a Normal event ``SandboxChanged``, "Pod sandbox changed, it will be
  killed and re-created." (pkg/kubelet/kuberuntime/kuberuntime_manager.go ``SyncPod``, util.go
  ``PodSandboxChanged``), then starts the container again with the old one's restart count + 1
  (kuberuntime_container.go ``startContainer``): 1;
- the pod itself is the same object (its UID): a reboot within the node's toleration deletes
  nothing (pkg/controller/tainteviction: the not-ready/unreachable taints' 300 s default
  tolerations, plugin/pkg/admission/defaulttolerationseconds).

Measured and kept in the details (not judged: they depend on how long the node was down and on the
host): the node's Ready condition over the window, its Lease's last renewal before and first after,
the old run's end as the kubelet reports it.
"""

from __future__ import annotations

import pytest

from e2e.faults.node import node_rebooted
from e2e.judge.expectations import equal, exact, register
from e2e.record.nodes import condition_changes, renewals
from e2e.record.pods import container_status, pod_ready
from e2e.run.scenario import Scenario
from e2e.run.waiting import FAULT_SLACK_S, WAIT_SLACK_S

READ_IN = ("1.34.4", "1.35.4", "1.36.3", "1.37.2")
BOOT_ID = ("[UP] pkg/kubelet/nodestatus/setters.go MachineInfo (BootID, events.NodeRebooted); cadvisor machine/info.go "
           "Info (/proc/sys/kernel/random/boot_id); e2e/faults/node.py node_rebooted (a new boot ID per boot)")
SANDBOX = ("[UP] pkg/kubelet/kuberuntime/kuberuntime_manager.go SyncPod, util/util.go PodSandboxChanged; containerd v2.3.4 "
           "internal/cri/server/restart.go (a sandbox without its task: NOTREADY)")
RESTART = f"[UP] pkg/kubelet/kuberuntime/kuberuntime_container.go startContainer (restartCount + 1); {SANDBOX}"
KEPT = ("[UP] pkg/controller/tainteviction/taint_eviction.go (evicts after tolerationSeconds); "
        "plugin/pkg/admission/defaulttolerationseconds (300 s)")

register([
    equal("NR-1", "boot_id_changed", True, BOOT_ID),
    equal("NR-1", "rebooted_event_type", "Warning", BOOT_ID),
    equal("NR-1", "rebooted_event_message", "Node {node} has been rebooted, boot id: {boot_id}", BOOT_ID),
    equal("NR-1", "sandbox_changed_message", "Pod sandbox changed, it will be killed and re-created.", SANDBOX),
    exact("NR-1", "restart_count", 1, RESTART, why="one reboot: the old run's restart count 0, + 1"),
    equal("NR-1", "container_id_changed", True, RESTART),
    equal("NR-1", "same_pod", True, KEPT),
], verified_in=READ_IN)


def _worker(sc: Scenario) -> str:
    if sc.kind is None:
        pytest.skip("a node reboot needs the kind node containers (not available with --kubeconfig)")
    return next(n for n in sc.kind.nodes() if n != sc.kind.control_plane)


@pytest.mark.case("NR-1")
@pytest.mark.profile("multi-node-fast-lifecycle")   # two nodes: the worker reboots, the API server stays
@pytest.mark.serial                                  # the fault acts on a node other tests would share
@pytest.mark.record("Pod", "Event", "Node", "Lease")
def test_a_pod_on_a_rebooted_node(scenario: Scenario):
    sc = scenario
    worker = _worker(sc)
    sc.apply("pod.yaml", name="web", node=worker)
    sc.wait(pod_ready("web"), WAIT_SLACK_S)
    before = sc.pod("web")
    node_before = sc.kube.core.read_node(worker).status.node_info.boot_id

    with node_rebooted(sc, worker) as window:
        pass  # an empty block: a reboot (a block that waits: a node that stays off that long)

    sc.wait_for("web Ready again in a new container",
                lambda: container_status(sc.pod("web"), "app").get("restartCount", 0) > 0 and pod_ready("web").check(sc),
                FAULT_SLACK_S, case="NR-1", measurement="restart_count")
    after = sc.pod("web")
    boot_id = sc.kube.core.read_node(worker).status.node_info.boot_id
    ready = [{"at": round(s.received_at - window.injected_at, 3), "status": s.condition.get("status"),
              "reason": s.condition.get("reason")} for s in condition_changes(sc.recorder.changes("Node", worker))]
    lease = renewals(sc.recorder.changes("Lease", worker))
    details = {"window_s": round(window.undone_at - window.injected_at, 3), "boot_id_before": node_before, "boot_id_after": boot_id,
               "ready_from_the_stop_s": ready,
               "lease_gap_s": max((b - a for a, b in zip(lease, lease[1:], strict=False)), default=None),
               "old_run": container_status(after, "app").get("lastState")}
    sc.note("node_down_s", details["window_s"])
    sc.expect("NR-1", "boot_id_changed", boot_id != node_before, details=details)

    rebooted = [e for e in sc.kube.core.list_namespaced_event("default", field_selector=f"involvedObject.name={worker}").items
                if e.reason == "Rebooted"]
    sc.expect("NR-1", "rebooted_event_type", rebooted[-1].type if rebooted else None, details=details)
    sc.expect("NR-1", "rebooted_event_message", rebooted[-1].message if rebooted else None, node=worker, boot_id=boot_id)
    changed = sc.events("SandboxChanged", "web")
    sc.expect("NR-1", "sandbox_changed_message", changed[-1].obj.get("message") if changed else None)
    sc.expect("NR-1", "restart_count", container_status(after, "app").get("restartCount"), details=details)
    sc.expect("NR-1", "container_id_changed",
              container_status(after, "app").get("containerID") != container_status(before, "app").get("containerID"))
    sc.expect("NR-1", "same_pod", after["metadata"]["uid"] == before["metadata"]["uid"])
