"""The node's view of a container, read inside the kind node (``docker exec``) with ``crictl``,
``/proc`` and ``/sys/fs/cgroup`` (CASES.md OM-5).

- ``crictl inspect <id>`` gives the container's PID, its sandbox, the CRI ``ContainerConfig``
  the kubelet sent (``info.config``: ``linux.resources.oom_score_adj`` is what the kubelet asked
  for, pkg/kubelet/kuberuntime/kuberuntime_container_linux.go generateLinuxContainerResources →
  pkg/kubelet/qos/policy.go GetContainerOOMScoreAdjust) and the OCI spec the runtime wrote
  (``info.runtimeSpec.process.oomScoreAdj``: after containerd's own restriction).
- ``/proc/<pid>/cgroup`` names the container's cgroup (relative to the node's cgroup namespace,
  so ``/sys/fs/cgroup/<controller>/<path>`` inside the node container); there the limit files:
  cgroup v1 ``memory.limit_in_bytes``, ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``; cgroup v2
  ``memory.max``, ``cpu.max``.
- The pod's cgroup is the parent of each of its containers' (``…/kubepods-burstable-pod<uid>.slice``
  with the systemd driver, ``…/kubepods/burstable/pod<uid>`` with cgroupfs): the kubelet's pod-level
  limits (the sum of the containers' limits, or ``spec.resources`` of a pod with pod-level resources)
  are there, read by :func:`pod_cgroup_dir`, :func:`pod_memory_limit_bytes`, :func:`pod_cpu_quota_period`.
- ``/proc/<pid>/oom_score_adj`` is what the kernel applies.

containerd with ``restrict_oom_score_adj = true`` (rootless nodes, or a host whose node container
lacks CAP_SYS_RESOURCE) never sets a value below its own ``oom_score_adj``
(internal/cri/opts/spec_linux_opts.go restrictOOMScoreAdj): negative scores are clamped.
:func:`oom_score_floor` reads that setting and containerd's own score.
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass
from typing import Callable

NodeExec = Callable[..., str]


@dataclass(frozen=True)
class ContainerView:
    """A running container as the node sees it: ``container_id`` (without ``containerd://``),
    its ``pid`` on the node, its pod's ``sandbox_id``; ``requested_oom_score_adj``: the kubelet's
    CRI request (None if the runtime does not show it); ``spec_oom_score_adj``: the runtime's OCI
    spec value (scores −1000…1000); ``cgroups``: controller → cgroup path (``""`` is the cgroup
    v2 unified hierarchy)."""

    container_id: str
    pid: int
    sandbox_id: str
    requested_oom_score_adj: int | None
    spec_oom_score_adj: int | None
    cgroups: dict[str, str]


@dataclass(frozen=True)
class SandboxView:
    """The pod sandbox (pause) ``sandbox_id``: its ``pid`` (PID on the node) and the OCI spec's
    ``oomScoreAdj`` (``spec_oom_score_adj``, a score)."""

    sandbox_id: str
    pid: int
    spec_oom_score_adj: int | None


@dataclass(frozen=True)
class OomScoreFloor:
    """containerd's ``restrict_oom_score_adj`` (``restricted``), its own ``oom_score_adj`` score
    (``runtime_oom_score_adj``: the lowest value it will set when restricted) and whether it holds
    CAP_SYS_RESOURCE (``cap_sys_resource``; None if unknown)."""

    restricted: bool
    runtime_oom_score_adj: int
    # whether containerd holds CAP_SYS_RESOURCE (needed to lower a score below its own); None if unknown
    cap_sys_resource: bool | None = None

    def applied(self, requested: int) -> int:
        """The score the runtime sets for the ``requested`` ``oom_score_adj``: raised to the floor when restricted."""
        return max(requested, self.runtime_oom_score_adj) if self.restricted else requested


def parse_proc_cgroup(text: str) -> dict[str, str]:
    """``/proc/<pid>/cgroup`` (its ``text``) as ``{controller: path}``; each controller of a co-mounted v1
    hierarchy (``cpu,cpuacct``) gets its own key; the v2 entry ``0::/path`` is key ``""``.
    Named hierarchies (``name=systemd``) are kept under their name."""
    out: dict[str, str] = {}
    for line in text.strip().splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if not controllers:
            out[""] = path
            continue
        out[controllers] = path
        for c in controllers.split(","):
            out.setdefault(c, path)
    return out


def cgroup_dir(cgroups: dict[str, str], controller: str, version: int) -> str:
    """The directory of ``controller`` (``memory``, ``cpu``) for a container whose cgroups are
    ``cgroups`` (:attr:`ContainerView.cgroups`), inside the node."""
    if version == 2:
        return "/sys/fs/cgroup" + cgroups[""]
    return f"/sys/fs/cgroup/{controller}" + cgroups[controller]


def parse_cpu_limit(version: int, quota: str, period: str | None = None) -> str:
    """``"<quota> <period>"`` in microseconds as cgroup v2 ``cpu.max`` writes it; cgroup v1
    ``cpu.cfs_quota_us`` -1 (no limit) becomes ``max``. For v2 pass ``cpu.max`` as ``quota``."""
    if version == 2:
        return " ".join(quota.split())
    q = quota.strip()
    return f"{'max' if q == '-1' else q} {str(period).strip()}"


def parse_memory_limit(text: str) -> int | None:
    """The ``text`` of ``memory.limit_in_bytes`` / ``memory.max`` in bytes; None for v2 ``max``."""
    t = text.strip()
    return None if t == "max" else int(t)


def inspect_container(node_exec: NodeExec, container_id: str) -> ContainerView:
    """``crictl inspect`` + ``/proc/<pid>/cgroup`` of the running container ``container_id``
    (``containerd://`` prefix ok, as ``containerStatuses[].containerID`` has it)."""
    cid = container_id.split("://", 1)[-1]
    info = json.loads(node_exec("crictl", "inspect", cid))["info"]
    pid = int(info["pid"])
    resources = ((info.get("config") or {}).get("linux") or {}).get("resources") or {}
    requested = resources.get("oom_score_adj")
    spec = ((info.get("runtimeSpec") or {}).get("process") or {}).get("oomScoreAdj")
    cgroups = parse_proc_cgroup(node_exec("cat", f"/proc/{pid}/cgroup"))
    return ContainerView(cid, pid, info.get("sandboxID", ""), None if requested is None else int(requested),
                         None if spec is None else int(spec), cgroups)


def inspect_sandbox(node_exec: NodeExec, sandbox_id: str) -> SandboxView:
    """``crictl inspectp`` of the pod sandbox ``sandbox_id`` (:attr:`ContainerView.sandbox_id`)."""
    info = json.loads(node_exec("crictl", "inspectp", sandbox_id))["info"]
    spec = ((info.get("runtimeSpec") or {}).get("process") or {}).get("oomScoreAdj")
    return SandboxView(sandbox_id, int(info["pid"]), None if spec is None else int(spec))


def oom_score_adj(node_exec: NodeExec, pid: int) -> int:
    """The OOM score adjustment (−1000…1000) the kernel applies to process ``pid`` (``/proc/<pid>/oom_score_adj``)."""
    return int(node_exec("cat", f"/proc/{pid}/oom_score_adj").strip())


def memory_limit_bytes(node_exec: NodeExec, view: ContainerView, version: int) -> int | None:
    """The memory limit of ``view``'s container cgroup in bytes (``memory.limit_in_bytes`` /
    ``memory.max``; None for v2 ``max``)."""
    return _memory_limit_in(node_exec, cgroup_dir(view.cgroups, "memory", version), version)


def cpu_quota_period(node_exec: NodeExec, view: ContainerView, version: int) -> str:
    """``"<quota> <period>"`` (µs) of ``view``'s container CPU cgroup (see :func:`parse_cpu_limit`)."""
    return _cpu_quota_period_in(node_exec, cgroup_dir(view.cgroups, "cpu", version), version)


def pod_cgroup_dir(cgroups: dict[str, str], controller: str, version: int) -> str:
    """The directory of ``controller`` (``memory``, ``cpu``) for the pod of a container whose
    cgroups are ``cgroups`` (:attr:`ContainerView.cgroups`), inside the node: the parent of the
    container's own (:func:`cgroup_dir`). Raises ``ValueError`` when that parent is no pod's
    cgroup (its name lacks ``pod``)."""
    d = posixpath.dirname(cgroup_dir(cgroups, controller, version))
    if "pod" not in posixpath.basename(d):
        raise ValueError(f"{d} is not a pod's cgroup (the container's cgroup is not inside one)")
    return d


def pod_memory_limit_bytes(node_exec: NodeExec, view: ContainerView, version: int) -> int | None:
    """The memory limit of ``view``'s pod cgroup in bytes (``memory.limit_in_bytes`` / ``memory.max``;
    None for v2 ``max``): the pod-level limit the kubelet set. ``ValueError`` as :func:`pod_cgroup_dir`."""
    return _memory_limit_in(node_exec, pod_cgroup_dir(view.cgroups, "memory", version), version)


def pod_cpu_quota_period(node_exec: NodeExec, view: ContainerView, version: int) -> str:
    """``"<quota> <period>"`` (µs) of ``view``'s pod CPU cgroup (see :func:`parse_cpu_limit`).
    ``ValueError`` as :func:`pod_cgroup_dir`."""
    return _cpu_quota_period_in(node_exec, pod_cgroup_dir(view.cgroups, "cpu", version), version)


def _memory_limit_in(node_exec: NodeExec, d: str, version: int) -> int | None:
    return parse_memory_limit(node_exec("cat", f"{d}/{'memory.max' if version == 2 else 'memory.limit_in_bytes'}"))


def _cpu_quota_period_in(node_exec: NodeExec, d: str, version: int) -> str:
    if version == 2:
        return parse_cpu_limit(2, node_exec("cat", f"{d}/cpu.max"))
    quota = node_exec("cat", f"{d}/cpu.cfs_quota_us")
    period = node_exec("cat", f"{d}/cpu.cfs_period_us")
    return parse_cpu_limit(1, quota, period)


CAP_SYS_RESOURCE = 24  # linux/capability.h


def has_capability(proc_status: str, cap: int, field: str = "CapEff") -> bool | None:
    """Whether ``proc_status`` (a ``/proc/<pid>/status`` text) shows capability bit ``cap`` in ``field`` (None if absent)."""
    for line in proc_status.splitlines():
        if line.startswith(field + ":"):
            return bool(int(line.split(":", 1)[1].strip(), 16) >> cap & 1)
    return None


def oom_score_floor(node_exec: NodeExec) -> OomScoreFloor:
    """The :class:`OomScoreFloor`: containerd's ``restrictOOMScoreAdj`` (``crictl info``), its own
    ``oom_score_adj`` and whether it holds CAP_SYS_RESOURCE."""
    config = json.loads(node_exec("crictl", "info")).get("config") or {}
    pid = int(node_exec("pgrep", "-o", "-x", "containerd").split()[0])
    cap = has_capability(node_exec("cat", f"/proc/{pid}/status"), CAP_SYS_RESOURCE)
    return OomScoreFloor(bool(config.get("restrictOOMScoreAdj")), oom_score_adj(node_exec, pid), cap)
