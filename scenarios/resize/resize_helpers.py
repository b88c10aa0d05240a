"""What the RS tests read: a container's own cgroup limits (through exec in it) and the pod's
recording (status resources, resize conditions)."""

from __future__ import annotations

from typing import Callable

from e2e.measure.resize import CGROUP_FILES, cgroup_read, cgroup_values
from e2e.measure.values import expect_all
from e2e.record import pods
from e2e.record.recorder import Change
from e2e.run.scenario import Scenario

RESIZE_CONDITIONS = ("PodResizePending", "PodResizeInProgress")


def cgroup_limits(sc: Scenario, pod: str, container: str) -> dict[str, int | str]:
    """``container``'s limits as it sees its own cgroup (:func:`e2e.measure.resize.cgroup_read`), through exec."""
    version = 2 if sc.cgroup == 2 else 1
    return cgroup_read(sc.exec(pod, container, "cat", *CGROUP_FILES[version]).stdout, version)


def judge_cgroup(sc: Scenario, case: str, prefix: str, values: dict, memory: bool = True, cpu: bool = True) -> None:
    """Judge ``values`` (:func:`cgroup_limits`) as ``<prefix>cpu_quota_us`` … with the read attached
    (:func:`e2e.measure.resize.cgroup_values`)."""
    expect_all(sc.expect, cgroup_values(case, prefix, values, memory=memory, cpu=cpu))


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


def pod_cgroup_memory_limit(sc: Scenario, uid: str, node: str | None) -> int | None:
    """The pod-level cgroup's memory limit in the pod's ``node`` (``spec.nodeName``): the directory whose name
    holds ``pod<uid>`` (systemd driver: dashes as underscores) under the memory hierarchy (v1) or the
    unified one (v2: ``memory.max``); None when not found."""
    root, name = ("/sys/fs/cgroup", "memory.max") if sc.cgroup == 2 else ("/sys/fs/cgroup/memory", "memory.limit_in_bytes")
    found = sc.node_exec("sh", "-c", f"find {root} -maxdepth 5 -type d \\( -name '*pod{uid.replace('-', '_')}*' "
                                     f"-o -name 'pod{uid}' \\) | head -1", node=node).strip()
    if not found:
        return None
    text = sc.node_exec("cat", f"{found}/{name}", node=node).strip()
    return None if text == "max" else int(text)
