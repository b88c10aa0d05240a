"""What the RS tests read: a container's own cgroup limits (through exec in it) and the pod's
recording (status resources, resize conditions)."""

from __future__ import annotations

from typing import Callable

from e2e.record import pods
from e2e.record.recorder import Change
from e2e.run.scenario import Scenario

RESIZE_CONDITIONS = ("PodResizePending", "PodResizeInProgress")


def cgroup_limits(sc: Scenario, pod: str, container: str) -> dict[str, int | str]:
    """``cpu_quota_us``, ``cpu_shares`` and ``memory_limit_bytes`` of ``container`` as it sees its own
    cgroup. cgroup v1: runc mounts the container's cgroup at ``/sys/fs/cgroup/<controller>``; cgroup
    v2: ``cpu.max`` (quota, period) and ``memory.max``, no ``cpu.shares`` (``absent``)."""
    if sc.cgroup == 2:
        out = sc.exec(pod, container, "cat", "/sys/fs/cgroup/cpu.max", "/sys/fs/cgroup/memory.max").stdout.split()
        return {"cpu_quota_us": int(out[0]) if out[0] != "max" else -1, "cpu_shares": "absent",
                "memory_limit_bytes": int(out[2]) if out[2] != "max" else -1}
    out = sc.exec(pod, container, "cat", "/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "/sys/fs/cgroup/cpu/cpu.shares",
                  "/sys/fs/cgroup/memory/memory.limit_in_bytes").stdout.split()
    return {"cpu_quota_us": int(out[0]), "cpu_shares": int(out[1]), "memory_limit_bytes": int(out[2])}


def judge_cgroup(sc: Scenario, case: str, prefix: str, values: dict, memory: bool = True, cpu: bool = True) -> None:
    """Judge ``values`` (:func:`cgroup_limits`) as ``<prefix>cpu_quota_us`` … with the read attached."""
    if cpu:
        sc.expect(case, f"{prefix}cpu_quota_us", values["cpu_quota_us"], details=values)
        sc.expect(case, f"{prefix}cpu_shares", values["cpu_shares"], details=values)
    if memory:
        sc.expect(case, f"{prefix}memory_limit_bytes", values["memory_limit_bytes"], details=values)


def status_limit(pod: dict | None, container: str, resource: str) -> str | None:
    """``status.containerStatuses[container].resources.limits[resource]`` (None when absent)."""
    return ((pods.container_status(pod, container).get("resources") or {}).get("limits") or {}).get(resource)


def first_change(sc: Scenario, pod: str, check: Callable[[dict], object], after: float) -> Change | None:
    """The first recorded change of ``pod`` received after ``after`` (epoch s) for which ``check(obj)`` holds."""
    for c in sc.recorder.changes("Pod", pod):
        if c.received_at >= after and c.obj and check(c.obj):
            return c
    return None


def resize_conditions(pod: dict | None) -> str:
    """The pod's resize conditions as ``type=reason`` (``none`` without any)."""
    found = [f"{t}={(pods.condition(pod, t) or {}).get('reason') or '-'}" for t in RESIZE_CONDITIONS
             if pods.condition(pod, t)]
    return ", ".join(found) or "none"


def pod_cgroup_memory_limit(sc: Scenario, uid: str) -> int | None:
    """The pod-level cgroup's memory limit in the kind node (``docker exec``): the directory whose name
    holds ``pod<uid>`` (systemd driver: dashes as underscores) under the memory hierarchy (v1) or the
    unified one (v2: ``memory.max``); None when not found."""
    root, name = ("/sys/fs/cgroup", "memory.max") if sc.cgroup == 2 else ("/sys/fs/cgroup/memory", "memory.limit_in_bytes")
    found = sc.node_exec("sh", "-c", f"find {root} -maxdepth 5 -type d \\( -name '*pod{uid.replace('-', '_')}*' "
                                     f"-o -name 'pod{uid}' \\) | head -1").strip()
    if not found:
        return None
    text = sc.node_exec("cat", f"{found}/{name}").strip()
    return None if text == "max" else int(text)
