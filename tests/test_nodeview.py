"""The node's view of a container (e2e.evidence.nodeview), with a fake ``node_exec`` answering like a kind
node does (outputs recorded on a cgroup v1 kind node, Kubernetes v1.37.2, containerd 2.3.4)."""

from __future__ import annotations

import json

import pytest

from e2e.evidence.nodeview import (
    CAP_SYS_RESOURCE,
    has_capability,
    OomScoreFloor,
    cpu_quota_period,
    inspect_container,
    inspect_sandbox,
    memory_limit_bytes,
    oom_score_adj,
    oom_score_floor,
    parse_cpu_limit,
    parse_memory_limit,
    parse_proc_cgroup,
    pod_cgroup_dir,
    pod_cpu_quota_period,
    pod_memory_limit_bytes,
)

CID = "eb9678be365aa851b66b143142d5b00b0b02da23ab90c88e087dc8fca0a4dfee"
SID = "41e25bc6f79b933dae6febf5984cf177c6e28de2fdf9343d2d34832f0bffbd38"
POD = "/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-pod66c6b07d_96a7_4885_af61_a17a6f8c7b58.slice"
SCOPE = f"{POD}/cri-containerd-{CID}.scope"
PROC_CGROUP_V1 = "\n".join(
    f"{n}:{c}:{SCOPE}" for n, c in
    [(9, "name=systemd"), (8, "pids"), (4, "memory"), (3, "cpuset"), (2, "cpuacct"), (1, "cpu")]
) + f"\n0::{SCOPE}\n"

FILES = {
    "/proc/1425/cgroup": PROC_CGROUP_V1,
    "/proc/1425/oom_score_adj": "0\n",
    "/proc/1397/oom_score_adj": "0\n",
    "/proc/187/oom_score_adj": "0\n",
    "/proc/187/status": "Name:\tcontainerd\nCapInh:\t0000000000000000\nCapEff:\t0000003ffeffffff\n",
    f"/sys/fs/cgroup/memory{SCOPE}/memory.limit_in_bytes": "67108864\n",
    f"/sys/fs/cgroup/cpu{SCOPE}/cpu.cfs_quota_us": "100000\n",
    f"/sys/fs/cgroup/cpu{SCOPE}/cpu.cfs_period_us": "100000\n",
    # the pod's cgroup: two containers of 64 MiB and 100m CPU each
    f"/sys/fs/cgroup/memory{POD}/memory.limit_in_bytes": "134217728\n",
    f"/sys/fs/cgroup/cpu{POD}/cpu.cfs_quota_us": "20000\n",
    f"/sys/fs/cgroup/cpu{POD}/cpu.cfs_period_us": "100000\n",
}


def fake_node_exec(*cmd: str, timeout: float = 30) -> str:
    if cmd[:2] == ("crictl", "inspect"):
        assert cmd[2] == CID
        return json.dumps({"info": {"pid": 1425, "sandboxID": SID,
                                    "config": {"linux": {"resources": {"memory_limit_in_bytes": 67108864, "oom_score_adj": -997}}},
                                    "runtimeSpec": {"process": {"oomScoreAdj": 0}}}})
    if cmd[:2] == ("crictl", "inspectp"):
        return json.dumps({"info": {"pid": 1397, "runtimeSpec": {"process": {"oomScoreAdj": 0}}}})
    if cmd[:2] == ("crictl", "info"):
        return json.dumps({"config": {"restrictOOMScoreAdj": True}})
    if cmd[0] == "pgrep":
        return "187\n"
    if cmd[0] == "cat":
        if cmd[1] not in FILES:
            raise RuntimeError(f"docker exec cat {cmd[1]}: No such file or directory")
        return FILES[cmd[1]]
    raise AssertionError(f"unexpected command {cmd}")


def test_parse_proc_cgroup_v1_and_v2():
    cg = parse_proc_cgroup("3:cpu,cpuacct:/a\n2:memory:/b\n1:name=systemd:/c\n0::/d\n")
    assert cg["cpu"] == "/a" and cg["cpuacct"] == "/a" and cg["cpu,cpuacct"] == "/a"
    assert cg["memory"] == "/b" and cg["name=systemd"] == "/c" and cg[""] == "/d"
    assert parse_proc_cgroup("0::/kubepods/x\n") == {"": "/kubepods/x"}


def test_limits_parsing():
    assert parse_cpu_limit(1, "100000\n", "100000\n") == "100000 100000"
    assert parse_cpu_limit(1, "-1", "100000") == "max 100000"
    assert parse_cpu_limit(2, "100000 100000\n") == "100000 100000"
    assert parse_memory_limit("67108864\n") == 67108864
    assert parse_memory_limit("max\n") is None


def test_inspect_and_read_a_cgroup_v1_container():
    view = inspect_container(fake_node_exec, f"containerd://{CID}")
    assert (view.pid, view.sandbox_id) == (1425, SID)
    assert view.requested_oom_score_adj == -997 and view.spec_oom_score_adj == 0
    assert memory_limit_bytes(fake_node_exec, view, 1) == 64 * 1024 * 1024
    assert cpu_quota_period(fake_node_exec, view, 1) == "100000 100000"
    assert oom_score_adj(fake_node_exec, view.pid) == 0
    sandbox = inspect_sandbox(fake_node_exec, view.sandbox_id)
    assert (sandbox.pid, sandbox.spec_oom_score_adj) == (1397, 0)


def test_cgroup_v2_paths():
    files = {f"/sys/fs/cgroup{SCOPE}/memory.max": "33554432\n", f"/sys/fs/cgroup{SCOPE}/cpu.max": "100000 100000\n"}

    def v2_exec(*cmd, timeout=30):
        if cmd[0] == "cat" and cmd[1] == "/proc/1425/cgroup":
            return f"0::{SCOPE}\n"
        if cmd[0] == "cat":
            return files[cmd[1]]
        return fake_node_exec(*cmd)

    view = inspect_container(v2_exec, CID)
    assert memory_limit_bytes(v2_exec, view, 2) == 32 * 1024 * 1024
    assert cpu_quota_period(v2_exec, view, 2) == "100000 100000"


def test_the_pod_cgroup_beside_the_containers():
    view = inspect_container(fake_node_exec, CID)
    assert pod_cgroup_dir(view.cgroups, "memory", 1) == f"/sys/fs/cgroup/memory{POD}"
    assert pod_cgroup_dir({"": SCOPE}, "memory", 2) == f"/sys/fs/cgroup{POD}"
    assert pod_memory_limit_bytes(fake_node_exec, view, 1) == 128 * 1024 * 1024
    assert pod_cpu_quota_period(fake_node_exec, view, 1) == "20000 100000"
    cgroupfs = "/kubepods/burstable/pod66c6b07d-96a7-4885-af61-a17a6f8c7b58"
    assert pod_cgroup_dir({"": f"{cgroupfs}/{CID}"}, "cpu", 2) == f"/sys/fs/cgroup{cgroupfs}"
    with pytest.raises(ValueError, match="not a pod's cgroup"):
        pod_cgroup_dir({"": "/system.slice/containerd.service"}, "memory", 2)


def test_oom_score_floor_clamps_only_below_it():
    floor = oom_score_floor(fake_node_exec)
    assert floor == OomScoreFloor(restricted=True, runtime_oom_score_adj=0, cap_sys_resource=False)
    assert [floor.applied(v) for v in (-998, -997, 0, 998, 1000)] == [0, 0, 0, 998, 1000]
    assert OomScoreFloor(False, 0).applied(-997) == -997


def test_has_capability():
    assert has_capability("CapEff:\t000001ffffffffff\n", CAP_SYS_RESOURCE) is True
    assert has_capability("CapEff:\t0000003ffeffffff\n", CAP_SYS_RESOURCE) is False  # the kind node on this host
    assert has_capability("Name: x\n", CAP_SYS_RESOURCE) is None


def test_missing_file_raises():
    view = inspect_container(fake_node_exec, CID)
    with pytest.raises(RuntimeError):
        memory_limit_bytes(fake_node_exec, view, 2)
