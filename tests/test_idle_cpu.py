"""hack/idle_cpu.py (``make idle-cpu``, issue 45 step 1): the pure parts, on inputs in the formats
this host's kernel and Docker give (cgroup v1 with a v2 hierarchy beside it, a kind node whose
systemd moved its processes below Docker's cgroup) and the v2 formats of the kernel's docs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from e2e.base.locks import hold_shared, let_go
from helpers import ROOT, hack_module

ic = hack_module("idle_cpu")

CID = "7e50f6b211b51cef5cadd04d8239f8dda032f7e57b527b6784d769d330e88003"

# /proc/<pid>/cgroup of a kind node's systemd (pid 1 of the container), read on this host
V1_CGROUP = f"""9:name=systemd:/docker/{CID}/init.scope
8:pids:/docker/{CID}/init.scope
7:blkio:/docker/{CID}/init.scope
6:freezer:/docker/{CID}
5:devices:/docker/{CID}/init.scope
4:memory:/docker/{CID}/init.scope
3:cpuset:/docker/{CID}
2:cpuacct:/docker/{CID}
1:cpu:/docker/{CID}/init.scope
0::/docker/{CID}/init.scope
"""
# /proc/self/mountinfo of this host, its cgroup lines (and one that is not)
V1_MOUNTINFO = """23 1 0:22 / / rw,relatime - overlay overlay rw,lowerdir=/l,upperdir=/u,workdir=/w
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""
# the usual Debian layout: cpu and cpuacct on one hierarchy
V1_JOINT_MOUNTINFO = "30 24 0:26 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct\n" \
                     "33 24 0:29 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:12 - cgroup cgroup rw,memory\n"
# cgroup v2, systemd driver (Docker's docker-<id>.scope), a node's systemd below it
V2_CGROUP = f"0::/system.slice/docker-{CID}.scope/init.scope\n"
V2_MOUNTINFO = "29 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n"


def test_v1_cgroup_is_dockers_cgroup_of_the_container_not_the_nodes_init_scope():
    cg = ic.node_cgroup(V1_CGROUP, V1_MOUNTINFO, CID)
    assert cg == ic.NodeCgroup(1, f"/sys/fs/cgroup/cpuacct/docker/{CID}/cpuacct.usage",
                               f"/sys/fs/cgroup/memory/docker/{CID}/memory.usage_in_bytes",
                               f"/sys/fs/cgroup/memory/docker/{CID}/memory.stat")


def test_v1_joint_cpu_cpuacct_hierarchy():
    text = f"4:memory:/docker/{CID}/init.scope\n3:cpu,cpuacct:/docker/{CID}/kubelet.slice\n0::/\n"
    cg = ic.node_cgroup(text, V1_JOINT_MOUNTINFO, CID)
    assert cg.cpu == f"/sys/fs/cgroup/cpu,cpuacct/docker/{CID}/cpuacct.usage"
    assert cg.memory == f"/sys/fs/cgroup/memory/docker/{CID}/memory.usage_in_bytes"


def test_v2_cgroup_systemd_driver():
    cg = ic.node_cgroup(V2_CGROUP, V2_MOUNTINFO, CID)
    base = f"/sys/fs/cgroup/system.slice/docker-{CID}.scope"
    assert cg == ic.NodeCgroup(2, f"{base}/cpu.stat", f"{base}/memory.current", f"{base}/memory.stat")


def test_a_mount_whose_root_is_not_slash_is_stripped():
    mountinfo = "41 31 0:38 /docker /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
    assert ic.node_cgroup(f"0::/docker/{CID}\n", mountinfo, CID).cpu == f"/sys/fs/cgroup/{CID}/cpu.stat"


def test_a_path_that_does_not_name_the_container_is_refused():
    # read from inside a private cgroup namespace: "0::/" names nothing
    with pytest.raises(ValueError, match="v2 cgroup of container 7e50f6b211b5 does not name it"):
        ic.node_cgroup("0::/\n", V2_MOUNTINFO, CID)
    with pytest.raises(ValueError, match="no memory hierarchy mounted"):
        ic.node_cgroup(V1_CGROUP, V1_MOUNTINFO.replace("rw,memory", "rw,hugetlb"), CID)


def _tree(tmp_path: Path, cg_text: str, mountinfo: str, files: dict[str, str]) -> ic.NodeCgroup:
    mountinfo = mountinfo.replace(" /sys/fs/cgroup", f" {tmp_path}")
    cg = ic.node_cgroup(cg_text, mountinfo, CID)
    for name, text in files.items():
        path = Path(getattr(cg, name))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return cg


def test_v1_cpu_and_working_set_from_the_files(tmp_path):
    stat = "cache 541065216\nrss 380000000\ninactive_file 589824\nactive_file 12906496\n" \
           "total_cache 541065216\ntotal_rss 380000000\ntotal_inactive_file 528109568\ntotal_active_file 12906496\n"
    cg = _tree(tmp_path, V1_CGROUP, V1_MOUNTINFO,
               {"cpu": "29974814293\n", "memory": "1082355712\n", "memory_stat": stat})
    assert ic.cpu_ns(cg) == 29974814293
    # the hierarchy's inactive file cache (total_), not the cgroup's own tasks' (inactive_file)
    assert ic.working_set_bytes(cg) == 1082355712 - 528109568


def test_v2_cpu_and_working_set_from_the_files(tmp_path):
    cg = _tree(tmp_path, V2_CGROUP, V2_MOUNTINFO, {
        "cpu": "usage_usec 29974814\nuser_usec 20000000\nsystem_usec 9974814\nnr_periods 0\n",
        "memory": "502000000\n", "memory_stat": "anon 300000000\nfile 200000000\nactive_file 80000000\ninactive_file 120000000\n"})
    assert ic.cpu_ns(cg) == 29974814000
    assert ic.working_set_bytes(cg) == 502000000 - 120000000


def test_sample_reads_every_node_each_interval_and_the_host(tmp_path):
    cg = _tree(tmp_path, V1_CGROUP, V1_MOUNTINFO, {"cpu": "29974814293\n", "memory": "1082355712\n",
                                                    "memory_stat": "total_inactive_file 528109568\n"})
    node = ic.Node("ple2e-ab", "ple2e-ab-control-plane", "control-plane", "default", CID, 1)
    lines = []
    rows, host = ic.sample([node], {node.name: cg}, 0.05, 0.01, lines.append)
    assert [(r.node, r.cpu_percent, r.cpu_percent_max) for r in rows] == [(node, 0.0, 0.0)]  # the counter stood still
    assert rows[0].memory_mib == pytest.approx((1082355712 - 528109568) / ic.MIB)
    assert host["seconds"] >= 0.05 and host["interval_s"] == 0.01
    assert 0 <= host["cpu_idle_percent"] <= 100
    if Path(ic.PSI_CPU).exists():  # one avg10 after each interval
        assert host["psi_some_avg10"]["samples"] == 5 == len(host["psi_some_avg10"]["values"])


def test_cpu_percent_of_one_core():
    assert ic.cpu_percent(0, 1_080_000_000, 100.0, 110.0) == pytest.approx(10.8)
    assert ic.cpu_percent(5, 5, 0.0, 10.0) == 0.0
    with pytest.raises(ValueError, match="went back"):
        ic.cpu_percent(10, 5, 0.0, 10.0)
    with pytest.raises(ValueError, match="empty window"):
        ic.cpu_percent(0, 5, 10.0, 10.0)


PSI = "some avg10=2.80 avg60=2.72 avg300=3.02 total=10294891099\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"


def test_psi_some_avg10():
    assert ic.psi_some_avg10(PSI) == 2.80
    assert ic.psi_some_avg10(PSI.replace("some avg10=2.80", "some avg10=61.25")) == 61.25
    with pytest.raises(ValueError, match="no 'some avg10='"):
        ic.psi_some_avg10("full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")


def test_spread_median_and_highest():
    assert ic.spread([12.0, 60.5, 14.0, 9.5]) == {"median": 13.0, "max": 60.5, "samples": 4}
    assert ic.spread([]) == {"median": None, "max": None, "samples": 0}


STAT0 = "cpu  3900435 73344 584738 10553359 44224 0 95036 5338 0 0\ncpu0 1962817 38764 294131 5259405 24694 0 45652 2748 0 0\n"
STAT1 = "cpu  3900535 73344 584788 10553659 44274 0 95036 5338 0 0\ncpu0 1962867 38764 294156 5259555 24719 0 45652 2748 0 0\n"


def test_host_idle_from_proc_stat_as_vmstat():
    # 100 user + 50 system + 300 idle + 50 iowait = 500 ticks; idle alone: 60 %
    assert ic.idle_percent(STAT0, STAT1) == pytest.approx(60.0)
    with pytest.raises(ValueError, match="no CPU ticks"):
        ic.idle_percent(STAT0, STAT0)
    with pytest.raises(ValueError, match="no 'cpu ' line"):
        ic.cpu_ticks("intr 1 2 3\n")


def _inspect(name: str, cluster: str, role: str, pid: int) -> dict:
    return {"Id": f"{name}-id", "Name": f"/{name}", "State": {"Status": "running", "Running": True, "Pid": pid},
            "Config": {"Hostname": name, "Labels": {"io.x-k8s.kind.cluster": cluster, "io.x-k8s.kind.role": role}}}


def test_nodes_of_docker_inspect():
    text = json.dumps([_inspect("ple2e-ab-worker", "ple2e-ab", "worker", 200),
                       _inspect("foreign-control-plane", "foreign", "control-plane", 300),
                       _inspect("ple2e-ab-control-plane", "ple2e-ab", "control-plane", 100)])
    nodes = ic.nodes_of(text, {"ple2e-ab": "multi-node"})
    assert [(n.cluster, n.name, n.role, n.profile, n.pid) for n in nodes] == [
        ("foreign", "foreign-control-plane", "control-plane", "-", 300),
        ("ple2e-ab", "ple2e-ab-control-plane", "control-plane", "multi-node", 100),
        ("ple2e-ab", "ple2e-ab-worker", "worker", "multi-node", 200)]
    stopped = _inspect("ple2e-ab-worker", "ple2e-ab", "worker", 0)
    with pytest.raises(ValueError, match="ple2e-ab-worker is not running"):
        ic.nodes_of(json.dumps([stopped]), {})


def _rows() -> list:
    cp = ic.Node("ple2e-ab", "ple2e-ab-control-plane", "control-plane", "multi-node", "a", 1)
    w = ic.Node("ple2e-ab", "ple2e-ab-worker", "worker", "multi-node", "b", 2)
    cp2 = ic.Node("ple2e-cd", "ple2e-cd-control-plane", "control-plane", "default", "c", 3)
    times = [0.0, 10.0, 20.0]
    return [ic.figures(cp, times, [0, 1_500_000_000, 2_000_000_000], [479 * ic.MIB, 481 * ic.MIB, 480 * ic.MIB]),
            ic.figures(w, times, [0, 100_000_000, 280_000_000], [86 * ic.MIB] * 3),
            ic.figures(cp2, times, [0, 1_000_000_000, 2_400_000_000], [500 * ic.MIB] * 3)]


def test_figures_mean_and_highest_interval():
    cp, w, _ = _rows()
    assert (cp.cpu_percent, cp.cpu_percent_max, cp.memory_mib) == (pytest.approx(10.0), pytest.approx(15.0), pytest.approx(480.0))
    assert (w.cpu_percent, w.cpu_percent_max) == (pytest.approx(1.4), pytest.approx(1.8))
    with pytest.raises(ValueError, match="two at least"):
        ic.figures(cp.node, [0.0], [0], [0])


def test_by_role_and_the_table():
    rows = _rows()
    roles = ic.by_role(rows)
    assert roles["control-plane"] == {"nodes": 2, "cpu_percent": pytest.approx(11.0), "memory_mib": pytest.approx(490.0)}
    assert roles["worker"] == {"nodes": 1, "cpu_percent": pytest.approx(1.4), "memory_mib": pytest.approx(86.0)}
    host = {"cpus": 2, "seconds": 180.0, "psi_some_avg10": ic.spread([12.0, 14.0, 60.5]), "cpu_idle_percent": 71.26}
    text = ic.markdown(rows, host)
    assert "| ple2e-ab | ple2e-ab-control-plane | control-plane | multi-node | 10.0 (15.0) | 480 |" in text
    assert "| ple2e-ab | ple2e-ab-worker | worker | multi-node | 1.4 (1.8) | 86 |" in text
    assert "| control-plane | 2 | 11.0 | 490 |" in text
    assert "| worker | 1 | 1.4 | 86 |" in text
    assert "CPU pressure some avg10 median 14.0 %, highest 60.5 % (3 samples); CPU idle 71.3 %." in text
    unknown = ic.markdown(rows, {**host, "psi_some_avg10": ic.spread([])})
    assert "some avg10 unknown (no /proc/pressure/cpu)" in unknown


def test_a_live_run_of_the_suite_is_found_and_a_dead_one_is_not(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "20261207-040000-dead.lock").touch()  # its process died: nobody holds it
    (runs / "20261207-041500-beef.used.json.lock").touch()  # the run's list of used clusters: not a run
    alive = runs / "20261207-042000-a1b2.lock"
    hold_shared(alive)
    try:
        assert ic.live_runs(tmp_path) == ["20261207-042000-a1b2"]
    finally:
        let_go(alive)
    assert ic.live_runs(tmp_path) == []
    assert ic.live_runs(tmp_path / "nothing") == []


def test_refused_while_a_run_is_alive_or_other_clusters_run(tmp_path, monkeypatch):
    monkeypatch.setattr(ic, "running_clusters", lambda: {"ple2e-ab", "pod-lifecycle-foreign"})
    assert ic.preflight(tmp_path, {"ple2e-ab", "pod-lifecycle-foreign"}, False) == []
    with pytest.raises(ic.Refused, match=r"other kind clusters are running \(pod-lifecycle-foreign\)"):
        ic.preflight(tmp_path, {"ple2e-ab"}, False)
    assert ic.preflight(tmp_path, {"ple2e-ab"}, True) == ["pod-lifecycle-foreign"]
    alive = tmp_path / "runs" / "20261207-042000-a1b2.lock"
    alive.parent.mkdir()
    hold_shared(alive)
    try:
        with pytest.raises(ic.Refused, match="a run of the suite is alive .20261207-042000-a1b2"):
            ic.preflight(tmp_path, {"ple2e-ab", "pod-lifecycle-foreign"}, True)
    finally:
        let_go(alive)


@pytest.fixture
def suite(tmp_path, monkeypatch):
    """The suite's kind module on a state directory of its own, Docker and kind answering nothing,
    the offline image's profile.env: what main() sees before it makes a cluster."""
    import e2e.cluster.kind as kind_mod

    monkeypatch.setattr(kind_mod, "STATE_DIR", tmp_path / "state")
    monkeypatch.setattr(kind_mod, "check_docker", lambda: "27.5.1")
    monkeypatch.setenv("E2E_KIND", "/bin/true")
    monkeypatch.setenv("E2E_NODE_IMAGE", "pod-lifecycle-e2e/kind-node:v1.37.2-dc39dc3707")
    monkeypatch.setenv("E2E_PROFILE_PATCH", str(ROOT / "hack" / "offline" / "kind-offline.yaml"))
    monkeypatch.setattr(ic, "running_clusters", lambda: set())
    return kind_mod


def test_refusal_exits_2_before_any_cluster(suite, monkeypatch, capsys):
    monkeypatch.setattr(suite.Kind, "ensure", lambda *a, **k: pytest.fail("no cluster may be made"))
    monkeypatch.setattr(ic, "running_clusters", lambda: {"pod-lifecycle-foreign"})
    assert ic.main(["--profiles", "default multi-node"]) == 2
    assert "refused: other kind clusters are running (pod-lifecycle-foreign)" in capsys.readouterr().err
    monkeypatch.delenv("E2E_NODE_IMAGE")
    assert ic.main(["--profiles", "default"]) == 2
    assert "refused: E2E_NODE_IMAGE is not set" in capsys.readouterr().err
    monkeypatch.setenv("E2E_NODE_IMAGE", "pod-lifecycle-e2e/kind-node:v1.37.2-dc39dc3707")
    assert ic.main(["--profiles", "no-such-profile"]) == 2
    assert "unknown cluster profile 'no-such-profile'" in capsys.readouterr().err
    assert not (suite.STATE_DIR / "runs").exists()  # no run was started


def test_ctrl_c_deletes_the_clusters_it_made_and_only_those(suite, monkeypatch, capsys):
    made, deleted = [], []

    def ensure(self, profile, run_id, images=()):
        if profile.name == "multi-node":  # a kept cluster of another run: reused, not this run's
            self.state_file.write_text(json.dumps({"owner": "someone-else", "profile": profile.name}))
            raise KeyboardInterrupt  # Ctrl-C while its nodes are awaited
        self.state_file.write_text(json.dumps({"owner": run_id, "profile": profile.name}))
        made.append(self.name)
        assert ic.live_runs(suite.STATE_DIR) == [run_id]  # another idle-cpu refuses meanwhile

    monkeypatch.setattr(suite.Kind, "ensure", ensure)
    monkeypatch.setattr(suite.Kind, "delete_unless_used", lambda self: deleted.append(self.name) or True)
    monkeypatch.setattr(ic, "preflight", lambda *a: [])
    import e2e.cluster.egress as egress

    monkeypatch.setattr(egress, "release", lambda: False)
    assert ic.main(["--profiles", "default multi-node", "--settle", "0"]) == 130
    assert len(made) == 1 and deleted == made
    assert "deleting the clusters it made" in capsys.readouterr().err
    assert ic.live_runs(suite.STATE_DIR) == []
    assert list((suite.STATE_DIR / "runs").glob("*.lock")) == []  # the run's lock went
