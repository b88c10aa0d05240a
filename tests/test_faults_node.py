"""Worker-node faults (e2e.faults.node): each injects what CASES-faults.md §3b says, is undone
whatever the test did, and the shutdown capability check names why it says no — with fakes for
Docker, the node and the API; no cluster."""

from __future__ import annotations

import json
import shlex
import subprocess

import pytest

import e2e.faults.core as core
from e2e.cluster import egress, nodeaccess
from e2e.cluster.kube import ExecResult
import e2e.faults.node as node
from e2e.faults.node import (
    INHIBIT_WHY,
    PARTITION_COMMENT,
    SHUTDOWN_MANAGER_FAILED,
    node_partitioned,
    node_partitioned_kubelet_restarted,
    node_paused,
    node_shutdown,
    partition_rule,
    shutdown_capability,
)

from helpers import FaultSite

WORKER = "c-worker"


def Site(answers: dict[str, object] | None = None, failed_pods: tuple[str, ...] = ()) -> FaultSite:
    """A fault site on a fake two-node cluster (see helpers.FaultSite)."""
    return FaultSite("multi-node-fast-lifecycle", answers, failed_pods)


@pytest.fixture(autouse=True)
def healthy(monkeypatch):
    monkeypatch.setattr(core, "HEALTH_POLL_S", 0.01)
    monkeypatch.setattr(core, "health", lambda kube, since=None, elsewhere=(): (["node c-worker Ready=True"], []))


@pytest.fixture
def docker(monkeypatch):
    """Fake host docker: records commands; the worker is paused between pause and unpause."""
    state = {"paused": False, "calls": []}

    def run(*args: str, timeout: float = 0) -> str:
        state["calls"].append(" ".join(args))
        if args[0] == "pause":
            state["paused"] = True
        elif args[0] == "unpause":
            if not state["paused"]:
                raise RuntimeError("container is not paused")
            state["paused"] = False
        elif args[:2] == ("inspect", "-f") and "Paused" in args[2]:
            return "true\n" if state["paused"] else "false\n"
        elif args[:2] == ("inspect", "-f") and "Networks" in args[2]:
            return json.dumps({egress.NETWORK: {"IPAddress": "172.18.0.3", "GlobalIPv6Address": "fc00:f853::3"}}) + "\n"
        return ""

    monkeypatch.setattr(node, "docker", run)
    return state


def test_pause_is_undone_when_the_test_fails(docker):
    site = Site()
    with pytest.raises(AssertionError, match="body failed"):
        with node_paused(site, WORKER) as window:
            assert docker["paused"]
            raise AssertionError("body failed")
    assert not docker["paused"]
    assert docker["calls"] == [f"pause {WORKER}", f"inspect -f {{{{.State.Paused}}}} {WORKER}", f"unpause {WORKER}"]
    assert window.recovery.healthy and "recovery-node-pause.txt" in site.files
    assert site.broken == []


def test_unpause_is_idempotent(docker):
    """A retried undo finds the node running and does not fail on it."""
    site = Site()
    with node_paused(site, WORKER):
        node.docker("unpause", WORKER)  # thawed behind the fault's back
    assert docker["calls"][-1] == f"inspect -f {{{{.State.Paused}}}} {WORKER}"
    assert site.broken == []


@pytest.mark.parametrize("mode, target", [("reject", "REJECT --reject-with tcp-reset"), ("drop", "DROP")])
def test_partition_cuts_the_api_connection_and_heals(docker, mode, target):
    site = Site()
    with node_partitioned(site, WORKER, mode) as window:
        pass
    v4 = f"OUTPUT -d 172.18.0.3 -p tcp --dport 6443 -m comment --comment {PARTITION_COMMENT} -j {target}"
    v6 = f"OUTPUT -d fc00:f853::3 -p tcp --dport 6443 -m comment --comment {PARTITION_COMMENT} -j {target}"
    # kind's network is dual-stack: the kubelet may reach the API server over either family
    assert site.calls[:2] == [f"{WORKER}: iptables -I {v4}", f"{WORKER}: ip6tables -I {v6}"]
    heal = site.calls[2]
    assert f"while iptables -D {v4} " in heal and f"while ip6tables -D {v6} " in heal
    assert heal.endswith(f"! ( ip6tables -S OUTPUT; iptables -S OUTPUT ) | grep -q -- {PARTITION_COMMENT}")
    assert window.name == f"partition-{mode}" and window.node == WORKER


def test_partition_healed_through_a_kubelet_restart_restarts_it_while_still_cut(docker):
    """KB-7: the heal restarts the kubelet before the rules go, and only while one is still there
    (a heal retried after the node's armed one must not restart it again)."""
    site = Site()
    with node_partitioned_kubelet_restarted(site, WORKER, "drop") as window:
        pass
    v4 = f"OUTPUT -d 172.18.0.3 -p tcp --dport 6443 -m comment --comment {PARTITION_COMMENT} -j DROP"
    v6 = f"OUTPUT -d fc00:f853::3 -p tcp --dport 6443 -m comment --comment {PARTITION_COMMENT} -j DROP"
    assert site.calls[:2] == [f"{WORKER}: iptables -I {v4}", f"{WORKER}: ip6tables -I {v6}"]
    heal = site.calls[2]
    restart = heal.index("then systemctl restart kubelet; fi;")
    assert heal.startswith(f"{WORKER}: sh -c if iptables -C {v4} 2>/dev/null || ip6tables -C {v6} 2>/dev/null; ")
    assert restart < heal.index(f"while iptables -D {v4} ") < heal.index(f"while ip6tables -D {v6} ")
    assert window.name == "partition-drop-restart"


def test_a_retried_heal_finds_no_rule_and_restarts_no_kubelet(docker):
    """The heal's shell line run twice in a fake node: the restart only the first time."""
    site = Site()
    with node_partitioned_kubelet_restarted(site, WORKER, "reject"):
        pass
    script = site.calls[2].split(": ", 1)[1].removeprefix("sh -c ")
    fake = ("rules=1; iptables() { case $1 in -C) [ $rules = 1 ];; -D) [ $rules = 1 ] && rules=0 && return 0; return 1;; "
            "*) [ $rules = 1 ] && echo " + PARTITION_COMMENT + ";; esac; }; ip6tables() { iptables \"$@\"; }; "
            "systemctl() { echo restarted >&2; }; ")
    run = subprocess.run(["sh", "-c", fake + script + "; " + script], capture_output=True, text=True, timeout=10)
    assert run.returncode == 0 and run.stderr.count("restarted") == 1


KUBELET_CONF = """apiVersion: v1
clusters:
- cluster: {server: "https://foreign-control-plane:6443"}
  name: foreign
contexts:
- context: {cluster: foreign, user: kubelet}
  name: kubelet
current-context: kubelet
"""


class ArmingSite(FaultSite):
    """A fault site whose node commands go through an access named ``backend`` (``agent`` or
    ``docker``), answered as ``FaultSite`` answers: the kubelet's kubeconfig, its resolver, an undo
    still armed when the suite's own heal came."""

    def __init__(self, backend: str):
        super().__init__("multi-node-fast-lifecycle", {"cat /etc/kubernetes/kubelet.conf": KUBELET_CONF,
                                                       "getent": "172.18.0.2 STREAM foreign-control-plane\n",
                                                       "ActiveState": "active\n"})
        site = self

        class Access:
            name = backend

            def exec(self, node, argv, timeout=30):
                return ExecResult(0, site.node_exec(*argv, node=node), "")

        self.access = Access()


@pytest.mark.parametrize("backend, after_s", [
    ("agent", 90),  # the cut cuts the agent's exec: the node heals at the planned end, 90 s after the rules went in
    ("docker", 90 + nodeaccess.UNDO_MARGIN_S),  # docker exec still reaches the node: the suite heals, the undo guards
])
def test_a_partition_through_the_agent_is_healed_by_the_node_at_the_planned_end(docker, backend, after_s):
    """Before, the partition's undo was armed with the 30 s margin on both backends: through the
    agent the node stayed cut off 30 s past the window while the suite could not reach it. Then
    with DETACH_S more, as if its inject were detached: KB-7's heal through the agent came 1.3 s
    after its planned time (replacement_start_before_restart_s 16.1 s against [10, 15.5])."""
    site = ArmingSite(backend)
    with node_partitioned(site, WORKER, "reject", recovery_timeout_s=1, window_s=90) as window:
        pass
    assert window.armed is not None and window.armed.after_s == after_s
    assert site.calls[0 if backend == "docker" else 2].startswith(f"{WORKER}: systemd-run --on-active={int(after_s * 1000)}ms ")
    address = "172.18.0.2" if backend == "agent" else "172.18.0.3"  # read in the node, or the control plane's container
    assert any(c.startswith(f"{WORKER}: iptables -I OUTPUT -d {address} ") for c in site.calls)


def test_partition_rule_refuses_an_unknown_mode():
    with pytest.raises(ValueError, match="reject"):
        partition_rule("10.0.0.1", "blackhole")


LOCK = (f"WHO     UID USER PID COMM    WHAT     WHY                                        MODE\n"
        f"kubelet 0   root 251 kubelet shutdown {INHIBIT_WHY} delay\n\n1 inhibitors listed.\n")


def test_shutdown_is_cancelled_and_failed_system_pods_cleared(docker):
    site = Site(failed_pods=("coredns-1", "kube-proxy-x"))
    with pytest.raises(KeyboardInterrupt):
        with node_shutdown(site, WORKER):
            raise KeyboardInterrupt
    emits = [c for c in site.calls if "PrepareForShutdown" in c]
    assert emits == [f"{WORKER}: busctl emit /org/freedesktop/login1 org.freedesktop.login1.Manager PrepareForShutdown b true",
                     f"{WORKER}: busctl emit /org/freedesktop/login1 org.freedesktop.login1.Manager PrepareForShutdown b false"]
    assert site.listed == [f"kube-system?spec.nodeName={WORKER},status.phase=Failed"]
    assert site.deleted == [("kube-system", "coredns-1"), ("kube-system", "kube-proxy-x")]
    # the cancel left the kubelet without its inhibitor lock (the fake lists none): restarted
    assert site.calls[-1] == f"{WORKER}: systemctl restart kubelet"


def test_shutdown_undo_keeps_a_kubelet_that_still_holds_its_lock(docker):
    site = Site({"systemd-inhibit": LOCK})
    with node_shutdown(site, WORKER):
        pass
    assert not any("restart" in c for c in site.calls)


# the node's journal of the armed cancel's service: its start (systemd's entry first)
CANCELLED_AT = 1796579600.123456
CANCEL_JOURNAL = ('{"_SOURCE_REALTIME_TIMESTAMP":"1796579600123456","MESSAGE":"Started ple2e-undo-node-shutdown.service"}\n')


class ShutdownAgent:
    """The node agent on a worker under a graceful shutdown: every exec after the signal fails
    (the kubelet killed the agent's pod and admits no new one) until ``cut`` calls failed (the
    node's armed cancel fired, the agent's pod runs again); records ``"<node>: <argv>"``."""

    name = "agent"

    def __init__(self, cut: int):
        self.cut, self.down, self.calls = cut, False, []

    def exec(self, node, argv, timeout=30):
        line = f"{node}: {' '.join(argv)}"
        if self.down and self.cut > 0:
            self.cut -= 1
            self.calls.append("unreachable")
            raise nodeaccess.NodeUnreachable(f"agent pod on {node} is Failed (NodeShutdown)")
        self.calls.append(line)
        self.down = self.down or line.endswith("PrepareForShutdown b true")
        answers = {"ActiveState": "inactive\n", "journalctl": CANCEL_JOURNAL, "systemd-inhibit": LOCK}
        return ExecResult(0, next((a for k, a in answers.items() if k in line), ""), "")


def test_shutdown_through_the_agent_is_cancelled_by_the_node_at_its_planned_end(monkeypatch):
    """Through the node agent the shutdown kills the agent's pod (NF-9 on the foreign cluster,
    v1.37.2): the cancel is armed on the node for the planned end, not 630 s later, and the
    suite's undo waits for the agent to run there again."""
    monkeypatch.setattr(core, "REACH_POLL_S", 0.01)
    site = Site()
    site.kind = None
    site.access = ShutdownAgent(cut=3)
    site.node_exec = lambda *cmd, timeout=30, node=None: nodeaccess.run(site.access, node, cmd, timeout)
    with node_shutdown(site, WORKER, recovery_timeout_s=5, window_s=45) as window:
        assert window.armed is not None and window.armed.after_s == 45 + nodeaccess.DETACH_S
    cancel = "busctl emit /org/freedesktop/login1 org.freedesktop.login1.Manager PrepareForShutdown b false"
    calls = site.access.calls
    assert calls[0].startswith(f"{WORKER}: systemd-run --on-active=46000ms --unit={window.armed.unit} ")
    assert calls[0].endswith(f" -- {cancel}")
    assert calls[1:5] == [f"{WORKER}: {cancel.replace('b false', 'b true')}", "unreachable", "unreachable", "unreachable"]
    assert calls[5:7] == [f"{WORKER}: {cancel}", f"{WORKER}: systemd-inhibit --list --no-pager"]
    assert window.node_undo_at == window.undone_at == pytest.approx(CANCELLED_AT, abs=1e-6)
    assert window.recovery.healthy and site.broken == []


def test_shutdown_capability_present():
    assert shutdown_capability(Site({"systemd-inhibit": LOCK}), WORKER) is None


@pytest.mark.parametrize("answers, says", [
    ({"journalctl": f'E1130 kubelet.go:1700] "{SHUTDOWN_MANAGER_FAILED}" err="dial unix /run/dbus/system_bus_socket"'},
     "dial unix /run/dbus"),
    ({"systemd-inhibit": RuntimeError("Failed to connect to bus: No such file or directory")}, "D-Bus or systemd-logind missing"),
    ({"systemd-inhibit": "No inhibitors.\n"}, "holds no delay inhibitor lock"),
])
def test_shutdown_capability_says_why_not(answers, says):
    reason = shutdown_capability(Site(answers), WORKER)
    assert reason and says in reason and WORKER in reason


# -- reboot (issue 41: a new user built one from fault() and this module; it is offered now) ----

GUARD = "unreachable 10.244.0.0/16\n-N PLE2E-GUARD\n-A PLE2E-GUARD -d 10.96.0.0/16 -j REJECT --reject-with icmp-admin-prohibited\n" \
        "-A OUTPUT -j PLE2E-GUARD\n-A FORWARD -j PLE2E-GUARD\n"


class Node:
    """A fake worker container for the reboot: Docker's view (running, StartedAt, published ports)
    and the node's (systemd PID 1, the kubelet, its guard), every command in ``calls``."""

    def __init__(self, monkeypatch, guard_after: str = GUARD, ports_after: str = "", stop_fails: BaseException | None = None):
        self.running, self.boots, self.calls, self.wired = True, 1, [], 0
        self.guard_after, self.ports_after, self.stop_fails = guard_after, ports_after, stop_fails
        monkeypatch.setattr(node, "docker", self.docker)
        monkeypatch.setattr(node, "BOOT_POLL_S", 0.01)
        self.site = Site()
        self.site.kind.wire_nodes = self.wire
        self.site.node_exec = self.node_exec

    def docker(self, *args: str, timeout: float = 0) -> str:
        if args[0] != "exec":
            self.calls.append(" ".join(args))
        if args[0] == "stop":
            if self.stop_fails:
                raise self.stop_fails
            self.running = False
        elif args[0] == "start":
            self.running, self.boots = True, self.boots + 1
        elif args[0] == "inspect":
            return f"{str(self.running).lower()} 2026-12-06T07:0{self.boots}:00Z\n"
        elif args[0] == "port":
            return self.ports_after if self.boots > 1 else ""
        elif args[:3] == ("exec", WORKER, "cat"):
            if not self.running:
                raise RuntimeError("container is not running")
            return "systemd\n"
        return ""

    def wire(self) -> None:
        self.calls.append("wire nodes")
        self.wired += 1

    def node_exec(self, *cmd: str, timeout: float = 30, node: str | None = None) -> str:
        assert node == WORKER and self.running
        line = " ".join(cmd)
        if "route show type unreachable" in line:
            self.calls.append("guard state")
            return self.guard_after if self.boots > 1 else GUARD
        self.calls.append(line)
        return "active\n" if "is-active kubelet" in line else ""


def test_a_reboot_stops_and_boots_the_worker_also_when_the_test_fails(monkeypatch):
    n = Node(monkeypatch)
    with pytest.raises(AssertionError, match="body failed"):
        with node.node_rebooted(n.site, WORKER) as window:
            assert not n.running  # off during the block
            raise AssertionError("body failed")
    assert n.running and n.boots == 2 and n.wired == 1
    write = next(c for c in n.calls if c.startswith("sh -c printf"))
    assert write.endswith(f"{node.BOOT_ID_DROPIN_TEXT} {node.BOOT_ID_DROPIN}")
    assert n.calls == [
        f"inspect -f {{{{.State.Running}}}} {{{{.State.StartedAt}}}} {WORKER}", f"port {WORKER}", "guard state", write,
        f"stop -t {node.REBOOT_HALT_S} {WORKER}",  # its systemd halts within that (30 s), then Docker kills
        f"inspect -f {{{{.State.Running}}}} {{{{.State.StartedAt}}}} {WORKER}", f"start {WORKER}",
        "wire nodes", "systemctl is-active kubelet",  # the static CNI's routes once systemd runs, then the kubelet
        f"sh -c rm -f {node.BOOT_ID_DROPIN} && systemctl daemon-reload", "guard state", f"port {WORKER}"]
    assert window.name == "node-reboot" and window.recovery.healthy and n.site.broken == []
    assert n.site.marks == [f"fault node-reboot on {WORKER}", f"{WORKER} booting (systemd runs)",
                            f"{WORKER}: pod routes set again", "undo node-reboot"]


def test_a_power_cut_gives_the_halt_no_time(monkeypatch):
    n = Node(monkeypatch)
    with node.node_rebooted(n.site, WORKER, halt_timeout_s=0):
        pass
    assert f"stop -t 0 {WORKER}" in n.calls and n.boots == 2


def test_the_boot_id_drop_in_mounts_a_new_id_once_per_boot():
    (line,) = [ln for ln in node.BOOT_ID_DROPIN_TEXT.splitlines() if ln.startswith("ExecStartPre=")]
    argv = shlex.split(line.removeprefix("ExecStartPre="))  # systemd's quoting is the shell's for this line
    assert argv[:2] == ["/bin/sh", "-c"]
    script = argv[2]
    assert script.startswith(f"test -s {node.BOOT_ID_FILE} || ")  # a kubelet restart in the same boot keeps its ID
    assert f"mount --bind {node.BOOT_ID_FILE} {node.KERNEL_BOOT_ID}" in script
    assert subprocess.run(["sh", "-n", "-c", script]).returncode == 0


def test_the_control_plane_is_not_rebooted(monkeypatch):
    n = Node(monkeypatch)
    with pytest.raises(ValueError, match="reboots a worker"):
        with node.node_rebooted(n.site, n.site.kind.control_plane):
            pass
    assert n.calls == [] and n.site.marks == []


@pytest.mark.parametrize("after, says", [
    ({"guard_after": "-A OUTPUT -j PLE2E-GUARD\n"}, "its node guard differs"),
    ({"ports_after": "30080/tcp -> 0.0.0.0:30080\n"}, "its published ports differ"),
])
def test_a_node_that_boots_without_its_guard_or_with_other_ports_is_broken(monkeypatch, after, says):
    n = Node(monkeypatch, **after)
    with pytest.raises(core.ClusterBroken, match=says):
        with node.node_rebooted(n.site, WORKER):
            pass
    assert len(n.site.broken) == 1 and says in n.site.broken[0]


def test_a_ctrl_c_before_the_stop_leaves_the_node_running_without_the_drop_in(monkeypatch):
    n = Node(monkeypatch, stop_fails=KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        with node.node_rebooted(n.site, WORKER):
            pass
    assert n.boots == 1 and n.running and f"start {WORKER}" not in n.calls
    assert n.calls[-2:] == ["systemctl is-active kubelet", f"rm -f {node.BOOT_ID_DROPIN}"]
    assert n.site.broken == []
