"""NR-1 — a pod on a worker that reboots (a case outside the catalogues: docs/writing-a-case.md, "A fault in your
own case", points here; issue 41, item 7). The fault is :func:`e2e.faults.node.node_rebooted`: the
worker's container stopped (its systemd halts) and started again, with a new boot ID; the block
keeps it off until the node lifecycle controller has seen it down, as a machine's reboot
(firmware, kernel, services) outlasts the node monitor's grace.

Documented (read in v1.34.4, v1.35.4, v1.36.3 and v1.37.2; cadvisor v0.52.1, v0.53.0, v0.56.2 and
lib v0.60.5, as each release vendors it):

- down: the controller marks the node's Ready ``Unknown``, ``NodeStatusUnknown``, "Kubelet stopped
  posting node status.", the grace period after the pass that saw the last Lease renewal
  (e2e/documented/faults_node.py NF-4, the same values on the same profile);
- up: the kubelet posts Ready ``True``, ``KubeletReady`` (pkg/kubelet/nodestatus/setters.go
  ``ReadyCondition``), and reports the boot ID cadvisor read at its start (``machine.Info``:
  ``/proc/sys/kernel/random/boot_id``) as ``status.nodeInfo.bootID``; as it differs from the node's
  recorded one, it emits one Warning event ``Rebooted``, "Node <node> has been rebooted, boot id:
  <id>" (setters.go ``MachineInfo``, events.NodeRebooted) — the node's event, in ``default``;
- the pod's sandbox did not survive the boot: containerd keeps its record in ``/var`` but has no
  task for it (``/run`` is new), so it is NOTREADY (containerd v2.3.4 internal/cri/server/restart.go);
  the kubelet makes a new one and says so in a Normal event ``SandboxChanged``, "Pod sandbox
  changed, it will be killed and re-created." (pkg/kubelet/kuberuntime/kuberuntime_manager.go
  ``SyncPod``, util/util.go ``PodSandboxChanged``), then starts the container again with the old
  one's restart count + 1 (kuberuntime_container.go ``startContainer``): 1, a new container ID;
- the pod is the same object (its UID): the NoExecute unreachable taint evicts only after the
  tolerationSeconds the API server adds (300 s: plugin/pkg/admission/defaulttolerationseconds,
  pkg/controller/tainteviction), far beyond the reboot.

Kept in the details, not judged (they depend on the node and the host): how long the halt and the
boot took, the Lease's renewals, the old run's end as the kubelet reports it (exit code 255
``Unknown`` when containerd was gone before the container's process: restart.go; its own exit code
when containerd saw it end — the halt stops both at once).
"""

from __future__ import annotations

import time

import pytest

from e2e.documented import faults_node as nf
from e2e.faults.node import node_rebooted
from e2e.judge.expectations import equal, exact, register, within
from e2e.record.nodes import condition_changes, first_condition, last_renew_before, renewals
from e2e.record.pods import container_status, pod_ready
from e2e.record.timeline import parse_time
from e2e.run.scenario import Scenario
from e2e.base.waiting import FAULT_SLACK_S, WAIT_SLACK_S

READ_IN = ("1.34.4", "1.35.4", "1.36.3", "1.37.2")
PROFILE = nf.FAST  # two nodes: the worker reboots, the API server stays; node-monitor grace 20 s
GRACE_S, PERIOD_S = nf.GRACE_S[PROFILE], nf.MONITOR_PERIOD_S[PROFILE]
BOOT_ID = ("[UP] pkg/kubelet/nodestatus/setters.go MachineInfo (BootID, events.NodeRebooted); cadvisor machine/info.go "
           "Info (/proc/sys/kernel/random/boot_id); e2e/faults/node.py node_rebooted (a new boot ID per boot)")
READY = "[UP] pkg/kubelet/nodestatus/setters.go ReadyCondition"
SANDBOX = ("[UP] pkg/kubelet/kuberuntime/kuberuntime_manager.go SyncPod, util/util.go PodSandboxChanged; containerd v2.3.4 "
           "internal/cri/server/restart.go (a sandbox without its task: NOTREADY)")
RESTART = f"[UP] pkg/kubelet/kuberuntime/kuberuntime_container.go startContainer (restartCount + 1); {SANDBOX}"
KEPT = ("[UP] pkg/controller/tainteviction/taint_eviction.go (evicts after tolerationSeconds); "
        "plugin/pkg/admission/defaulttolerationseconds (300 s)")

register([
    within("NR-1", "unknown_after_last_renew_s", GRACE_S, GRACE_S - nf.API_RESOLUTION_S,
           GRACE_S + 2 * PERIOD_S + nf.API_RESOLUTION_S + nf.LOADED_S,
           f"as NF-4 on {PROFILE}: grace {GRACE_S} s from the pass that saw the last renewal (≤ 1 monitor period "
           f"{PERIOD_S} s late) to the pass that acts (≤ 1 more); lastTransitionTime truncated (±{nf.API_RESOLUTION_S:g} s); "
           f"+{nf.LOADED_S:g} s for a late pass on the loaded host", f"{nf.UP_NLC}; profiles/{PROFILE}.yaml"),
    equal("NR-1", "ready_unknown_reason", "NodeStatusUnknown", nf.UP_NLC),
    equal("NR-1", "ready_unknown_message", "Kubelet stopped posting node status.", nf.UP_NLC),
    equal("NR-1", "ready_reason_after_boot", "KubeletReady", READY),
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
@pytest.mark.profile(PROFILE)
@pytest.mark.serial  # the fault acts on a node other tests would share
@pytest.mark.record("Pod", "Event", "Node", "Lease")
@pytest.mark.node_faults("node_rebooted", case="NR-1", node="kind")
def test_a_pod_on_a_rebooted_node(scenario: Scenario):
    sc = scenario
    worker = _worker(sc)
    sc.apply("pod.yaml", name="web", node=worker)
    sc.wait(pod_ready("web"), WAIT_SLACK_S)
    before = sc.pod("web")
    boot_before = sc.kube.core.read_node(worker).status.node_info.boot_id

    halting = time.time()
    with node_rebooted(sc, worker) as window:
        # off until the controller has seen the node down (its last renewal + the grace)
        unknown = sc.wait_for(f"{worker} Ready=Unknown", lambda: first_condition(sc.recorder.changes("Node", worker), "Unknown",
                                                                                  after=halting),
                              sc.judge.wait_budget_s("NR-1", "unknown_after_last_renew_s") + FAULT_SLACK_S,
                              case="NR-1", measurement="unknown_after_last_renew_s")
    up = sc.wait_for(f"{worker} Ready=True after the boot",
                     lambda: first_condition(sc.recorder.changes("Node", worker), "True", after=unknown.received_at),
                     FAULT_SLACK_S, case="NR-1", measurement="ready_reason_after_boot")
    sc.wait_for("web Ready again in a new container",
                lambda: container_status(sc.pod("web"), "app").get("restartCount", 0) > 0 and pod_ready("web").check(sc),
                FAULT_SLACK_S, case="NR-1", measurement="restart_count")
    after = sc.pod("web")
    boot_id = sc.kube.core.read_node(worker).status.node_info.boot_id
    lease = renewals(sc.recorder.changes("Lease", worker))
    last_renew = last_renew_before(sc.recorder.changes("Lease", worker), unknown.received_at)
    details = {"halt_s": round(window.injected_at - halting, 3), "off_s": round(window.undone_at - window.injected_at, 3),
               "boot_id_before": boot_before, "boot_id_after": boot_id,
               "ready_from_the_halt_s": [{"at": round(s.received_at - halting, 3), "status": s.obj.get("status"),
                                          "reason": s.obj.get("reason")} for s in condition_changes(sc.recorder.changes("Node", worker))],
               "renewals_from_the_halt_s": [round(r - halting, 3) for r in lease if r >= halting - 20],
               "old_run": container_status(after, "app").get("lastState")}
    sc.note("node_off_s", details["off_s"])
    sc.expect("NR-1", "unknown_after_last_renew_s",
              round(parse_time(unknown.obj["lastTransitionTime"]) - last_renew, 3) if last_renew else None,
              around=unknown.received_at, details=details)
    sc.expect("NR-1", "ready_unknown_reason", unknown.obj.get("reason"))
    sc.expect("NR-1", "ready_unknown_message", unknown.obj.get("message"))
    sc.expect("NR-1", "ready_reason_after_boot", up.obj.get("reason"), around=up.received_at)
    sc.expect("NR-1", "boot_id_changed", boot_id != boot_before, details=details)
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
