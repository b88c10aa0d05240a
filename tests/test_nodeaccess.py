"""One way into a node (e2e.cluster.nodeaccess): the docker and agent backends build the right
commands and pods, the agent refuses a control-plane node, and a fault arms its undo on the node
before the inject, disarms it after, and waits for it when the node is out of reach — with fakes
for Docker, the API and the node; no cluster."""

from __future__ import annotations

import os
import shutil
import subprocess
from types import SimpleNamespace

import pytest

import e2e.faults.components as components
import e2e.faults.core as core
from e2e.cluster import nodeaccess
from e2e.cluster.kube import ExecError, ExecResult
from e2e.cluster.nodeaccess import (
    NSENTER,
    AgentAccess,
    ArmedUndo,
    DockerAccess,
    FireTimeUnknown,
    NodeRefused,
    NodeUnreachable,
    agent_namespace,
    agent_pod,
    arm,
    cut_by_stop,
    disarm,
    fired_at,
    run,
    undo_unit,
)
from e2e.faults import containerd_restarted, containerd_stopped, kubelet_stopped
from helpers import FaultSite

HEALTHY = (["node n Ready=True"], [])
# The node's journal about a fired undo's service (journalctl -u <unit>.service -o json, systemd 252
# in a kind node, trimmed): systemd's "Started", then the service's end.
STARTED_AT = 1796579600.123456
JOURNAL = (
    '{"__REALTIME_TIMESTAMP":"1796579600124001","_SOURCE_REALTIME_TIMESTAMP":"1796579600123456","_PID":"1",'
    '"JOB_TYPE":"start","UNIT":"ple2e-undo-kubelet-stop-0123abcd.service",'
    '"MESSAGE":"Started ple2e-undo-kubelet-stop-0123abcd.service - /usr/bin/systemctl start kubelet."}\n'
    '{"__REALTIME_TIMESTAMP":"1796579600361002","_PID":"1","UNIT":"ple2e-undo-kubelet-stop-0123abcd.service",'
    '"MESSAGE":"ple2e-undo-kubelet-stop-0123abcd.service: Deactivated successfully."}\n')


class FakeAccess:
    """Records ``"<node>: <argv>"``; ``answers``: first matching substring wins (an Exception is
    raised, an int is the exit code, anything else the stdout)."""

    name = "agent"

    def __init__(self, answers: dict[str, object] | None = None):
        self.answers = answers or {}
        self.calls: list[str] = []

    def exec(self, node, argv, timeout=30):
        line = f"{node}: {' '.join(argv)}"
        self.calls.append(line)
        for key, answer in self.answers.items():
            if key in line:
                if isinstance(answer, Exception):
                    raise answer
                if isinstance(answer, int):
                    return ExecResult(answer, "", "failed")
                return ExecResult(0, str(answer), "")
        return ExecResult(0, "", "")

    def close(self):
        pass


def test_run_returns_stdout_and_raises_on_a_non_zero_exit():
    access = FakeAccess({"cat /etc/x": "text", "false": 3})
    assert run(access, "w1", ["cat", "/etc/x"]) == "text"
    with pytest.raises(RuntimeError, match=r"agent exec w1 false: exit 3: failed"):
        run(access, "w1", ["false"])


def test_docker_access_runs_docker_exec_and_tells_an_unreachable_container(monkeypatch):
    seen = []

    def fake_run(argv, **kw):
        seen.append(argv)
        if argv[2] == "gone":
            return subprocess.CompletedProcess(argv, 1, "", "Error response from daemon: No such container: gone")
        return subprocess.CompletedProcess(argv, 2, "out", "err")

    monkeypatch.setattr(nodeaccess.subprocess, "run", fake_run)
    assert DockerAccess().exec("c-worker", ["systemctl", "is-active", "kubelet"]) == ExecResult(2, "out", "err")
    assert seen == [["docker", "exec", "c-worker", "systemctl", "is-active", "kubelet"]]
    monkeypatch.setattr(nodeaccess.subprocess, "run",
                        lambda argv, **kw: subprocess.CompletedProcess(argv, 1, "", "Error response from daemon: No such container: gone"))
    # exit 1 with a daemon error is the command's own status in docker exec only for 125-127
    assert DockerAccess().exec("gone", ["true"]).exit_code == 1
    monkeypatch.setattr(nodeaccess.subprocess, "run",
                        lambda argv, **kw: subprocess.CompletedProcess(argv, 125, "", "Error response from daemon: No such container: gone"))
    with pytest.raises(NodeUnreachable, match="No such container"):
        DockerAccess().exec("gone", ["true"])


def test_the_agent_namespace_is_a_dns_label_of_the_run():
    assert agent_namespace("20261206-104512-ab12") == "ple2e-agent-20261206-104512-ab12"
    assert agent_namespace("Run_ID.x") == "ple2e-agent-run-id-x"
    long = agent_namespace("x" * 100)
    assert len(long) <= 63 and long.startswith("ple2e-agent-x") and long != agent_namespace("x" * 99)


def test_the_agent_pod_is_pinned_privileged_in_the_hosts_namespaces_and_never_pulls():
    pod = agent_pod("worker-1", "busybox:local", "run-1")
    spec = pod["spec"]
    assert pod["metadata"]["name"] == "agent-worker-1"
    assert pod["metadata"]["labels"]["pod-lifecycle-e2e/run-id"] == "run-1"
    assert spec["nodeName"] == "worker-1"
    assert (spec["hostPID"], spec["hostNetwork"], spec["hostIPC"]) == (True, True, True)
    assert spec["tolerations"] == [{"operator": "Exists"}]
    (c,) = spec["containers"]
    assert c["securityContext"] == {"privileged": True}
    assert (c["image"], c["imagePullPolicy"]) == ("busybox:local", "Never")
    assert c["env"] == [{"name": "PATH", "value": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}]
    assert spec["automountServiceAccountToken"] is False
    assert agent_pod("n" * 80, "i", "r")["metadata"]["name"].startswith("agent-") and \
        len(agent_pod("n" * 80, "i", "r")["metadata"]["name"]) <= 63


def _agent(labels: dict[str, str], exec_answer=None):
    execs = []

    def kube_exec(namespace, pod, container, command, timeout_s=30):
        execs.append((namespace, pod, container, command))
        if isinstance(exec_answer, Exception):
            raise exec_answer
        return ExecResult(0, "ok", "")

    created = []
    running = SimpleNamespace(status=SimpleNamespace(phase="Running", container_statuses=[SimpleNamespace(ready=True)]))
    core_api = SimpleNamespace(
        read_node=lambda name: {"metadata": {"name": name, "labels": labels}},
        create_namespace=lambda body: created.append(("ns", body["metadata"]["name"],
                                                      body["metadata"]["labels"]["pod-security.kubernetes.io/enforce"])),
        create_namespaced_pod=lambda ns, body: created.append(("pod", ns, body["metadata"]["name"], body["spec"]["nodeName"])),
        read_namespaced_pod=lambda name, ns: running)
    kube = SimpleNamespace(core=core_api, exec=kube_exec,
                           api_client=SimpleNamespace(sanitize_for_serialization=lambda o: o))
    return AgentAccess(kube, "run-1", "busybox:local"), execs, created


def test_the_agent_enters_pid_1s_namespaces_through_its_pod():
    agent, execs, created = _agent({"kubernetes.io/hostname": "w1"})
    assert agent.exec("w1", ["systemctl", "is-active", "kubelet"]) == ExecResult(0, "ok", "")
    agent.exec("w1", ["true"])
    assert created == [("ns", "ple2e-agent-run-1", "privileged"), ("pod", "ple2e-agent-run-1", "agent-w1", "w1")]  # once
    assert execs[0] == ("ple2e-agent-run-1", "agent-w1", "agent",
                        ["nsenter", "-t", "1", "-m", "-u", "-i", "-n", "-p", "--", "/bin/sh", "-c", 'exec "$0" "$@"',
                         "systemctl", "is-active", "kubelet"])


@pytest.mark.skipif(not shutil.which("busybox"), reason="needs a busybox binary (Debian: apt install busybox)")
def test_the_agent_runs_the_nodes_own_programs_not_busybox_applets(tmp_path):
    """Busybox's exec prefers its own applet to PATH (seen on the foreign cluster: the agent's
    ``tc`` was busybox's, "tc: invalid argument 'root' to 'command'"). NSENTER's namespace flags
    dropped (they need root and a PID 1 to enter), the agent's own busybox nsenter runs
    ``tc`` by the node's /bin/sh, which finds the node's tc on PATH."""
    (tmp_path / "tc").write_text('#!/bin/sh\necho "node tc $*"\n')
    (tmp_path / "tc").chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"}
    nsenter = ["busybox", "nsenter", *NSENTER[NSENTER.index("--"):]]
    node = subprocess.run([*nsenter, "tc", "qdisc", "show"], capture_output=True, text=True, env=env)
    assert (node.returncode, node.stdout) == (0, "node tc qdisc show\n")
    applet = subprocess.run(["busybox", "nsenter", "--", "tc", "qdisc", "show"], capture_output=True, text=True, env=env)
    assert "node tc" not in applet.stdout  # without the node's shell: busybox's own tc applet
    missing = subprocess.run([*nsenter, "no-such-program"], capture_output=True, text=True, env=env)
    assert missing.returncode == 127


def test_the_agent_never_enters_a_control_plane_node():
    agent, execs, created = _agent({"node-role.kubernetes.io/control-plane": ""})
    with pytest.raises(NodeRefused, match="control-plane"):
        agent.exec("cp", ["true"])
    assert (execs, created) == ([], [])


def test_a_cut_exec_channel_is_unreachable_not_a_failed_command():
    agent, _, _ = _agent({}, ExecError("exec in agent-w1: error dialing backend"))
    with pytest.raises(NodeUnreachable, match="error dialing backend"):
        agent.exec("w1", ["systemctl", "start", "kubelet"])


def test_a_cut_exec_channel_keeps_the_whole_error():
    # the end of a long message is where the error is (a stream's last lines, the server's reason)
    message = "exec in agent-w1: " + "stderr line\n" * 60 + "error dialing backend: dial tcp: connection refused"
    agent, _, _ = _agent({}, ExecError(message))
    with pytest.raises(NodeUnreachable) as raised:
        agent.exec("w1", ["systemctl", "start", "kubelet"])
    assert str(raised.value) == f"agent exec w1 systemctl start kubelet: ExecError: {message}"


def test_an_agent_pod_the_node_killed_is_made_again_once_the_node_admits_pods():
    """A graceful node shutdown kills the agent's pod (Failed, never restarted) and the kubelet
    rejects a new one until the shutdown is cancelled (NF-9 on the foreign cluster): each call
    while it is terminal is unreachable and deletes it; the first call after makes it again."""
    agent, execs, created = _agent({})
    failed = SimpleNamespace(status=SimpleNamespace(phase="Failed", reason="NodeShutdown", container_statuses=[],
                                                    message="Pod was rejected as the node is shutting down."))
    running = SimpleNamespace(status=SimpleNamespace(phase="Running", container_statuses=[SimpleNamespace(ready=True)]))
    pods, deleted = {"agent-w1": running}, []
    agent.kube.core.read_namespaced_pod = lambda name, ns: pods[name]
    agent.kube.core.delete_namespaced_pod = lambda name, ns, grace_period_seconds: deleted.append((ns, name, grace_period_seconds))
    plain = agent.kube.exec
    agent.exec("w1", ["true"])
    pods["agent-w1"] = failed  # the node shut down: the pod's exec fails from now on

    def cut(namespace, pod, container, command, timeout_s=30):
        if pods[pod] is failed:
            raise ExecError(f"exec in {pod}: container not found")
        return plain(namespace, pod, container, command, timeout_s)

    agent.kube.exec = cut
    with pytest.raises(NodeUnreachable, match="container not found"):
        agent.exec("w1", ["busctl", "emit"])
    with pytest.raises(NodeUnreachable, match="is Failed .NodeShutdown: Pod was rejected"):
        agent.exec("w1", ["busctl", "emit"])
    assert deleted == [("ple2e-agent-run-1", "agent-w1", 0)]
    pods["agent-w1"] = running  # the shutdown cancelled: the node runs the pod made again
    assert agent.exec("w1", ["busctl", "emit"]) == ExecResult(0, "ok", "")
    assert [c for c in created if c[0] == "pod"] == [("pod", "ple2e-agent-run-1", "agent-w1", "w1")] * 3


def test_the_undo_is_armed_as_a_transient_systemd_timer():
    undo = ArmedUndo("ple2e-undo-kubelet-stop-0123abcd", ("systemctl", "start", "kubelet"), 630, 1000.0)
    assert undo.arm_argv() == ["systemd-run", "--on-active=630000ms", "--unit=ple2e-undo-kubelet-stop-0123abcd",
                               "--timer-property=AccuracySec=100ms", "--timer-property=RemainAfterElapse=no", "--collect",
                               "--", "systemctl", "start", "kubelet"]
    assert undo.state_argv() == ["systemctl", "show", "-p", "ActiveState", "--value", "ple2e-undo-kubelet-stop-0123abcd.timer"]
    assert "systemctl stop ple2e-undo-kubelet-stop-0123abcd.timer" in undo.disarm_argv()[2]


def test_undo_units_are_named_per_fault_and_never_shared():
    a, b = undo_unit("kubelet-stop", "w1", 1.0), undo_unit("kubelet-stop", "w1", 2.0)
    assert a.startswith("ple2e-undo-kubelet-stop-") and len(a) == len("ple2e-undo-kubelet-stop-") + 8
    assert a != b != undo_unit("kubelet-stop", "w2", 2.0)
    assert undo_unit("partition-reject", "w1", 1.0).startswith("ple2e-undo-partition-reject-")


def test_disarm_tells_whether_the_node_undid_the_fault_itself_and_when_from_its_journal():
    access = FakeAccess({"ActiveState": "active\n"})
    undo = arm(access, "w1", "kubelet-stop", ["systemctl", "start", "kubelet"], 60)
    assert access.calls[0].startswith(f"w1: systemd-run --on-active=60000ms --unit={undo.unit} ")
    assert disarm(access, "w1", undo) is None  # still armed: the suite's undo came first
    assert access.calls[-1].startswith(f"w1: sh -c systemctl stop {undo.unit}.timer")
    assert not any("journalctl" in c for c in access.calls)
    fired = FakeAccess({"ActiveState": "inactive\n", "journalctl": JOURNAL})
    # when its service started as the node logged it, not when the suite expected it (armed_at + 60)
    assert disarm(fired, "w1", undo) == pytest.approx(STARTED_AT, abs=1e-6)
    assert f"w1: journalctl -u {undo.unit}.service -o json --no-pager" in fired.calls
    assert fired.calls[-1].startswith(f"w1: sh -c systemctl stop {undo.unit}.timer")


def test_an_undo_that_fired_with_nothing_in_the_journal_has_no_time_but_is_disarmed():
    undo = ArmedUndo("ple2e-undo-kubelet-stop-0123abcd", ("systemctl", "start", "kubelet"), 60, 1000.0)
    fired = FakeAccess({"ActiveState": "inactive\n", "journalctl": "-- No entries --\n"})
    with pytest.raises(FireTimeUnknown, match="ple2e-undo-kubelet-stop-0123abcd on w1 fired .*shows no entry"):
        disarm(fired, "w1", undo)
    assert fired.calls[-1].startswith("w1: sh -c systemctl stop ple2e-undo-kubelet-stop-0123abcd.timer")


def test_the_fire_time_is_the_journals_earliest_entry():
    assert fired_at(JOURNAL) == pytest.approx(STARTED_AT, abs=1e-6)
    # received time when the source time is missing; lines that are no JSON object are skipped
    assert fired_at('-- No entries --\n[1]\n{"__REALTIME_TIMESTAMP":"1796579601500000"}\n'
                    '{"__REALTIME_TIMESTAMP":"1796579602000000"}\n') == pytest.approx(1796579601.5)
    assert fired_at("") is None and fired_at('{"MESSAGE":"x"}') is None


def test_only_a_stop_of_the_kubelet_or_containerd_through_the_agent_cuts_the_channel():
    agent, docker = FakeAccess(), FakeAccess()
    docker.name = "docker"
    assert cut_by_stop(agent, "kubelet") and cut_by_stop(agent, "containerd")
    assert not cut_by_stop(agent, "systemd-logind") and not cut_by_stop(docker, "kubelet") and not cut_by_stop(None, "kubelet")


def test_a_fault_that_cuts_the_channel_is_undone_by_the_node_at_its_planned_end():
    assert core.undo_after_s(120, cuts_channel=True) == 120 + nodeaccess.DETACH_S
    assert core.undo_after_s(120, cuts_channel=True, detached=False) == 120  # the API-server cut: not detached
    assert core.undo_after_s(120, cuts_channel=False) == 120 + nodeaccess.UNDO_MARGIN_S


def test_a_refused_arm_injects_nothing():
    access = FakeAccess({"systemd-run": 1})
    with pytest.raises(RuntimeError, match="systemd-run"):
        arm(access, "w1", "kubelet-stop", ["systemctl", "start", "kubelet"], 60)


# -- the fault protocol with an armed undo -------------------------------------------------------

class AgentSite(FaultSite):
    """A fault site whose node commands go through a :class:`FakeAccess` (``answers`` there)."""

    def __init__(self, answers: dict[str, object] | None = None):
        super().__init__("fast-lifecycle")
        self.kind = None
        self.access = FakeAccess(answers)

    def node_exec(self, *cmd, timeout=30, node=None):
        return run(self.access, node, cmd, timeout)


@pytest.fixture(autouse=True)
def fast(monkeypatch):
    monkeypatch.setattr(core, "HEALTH_POLL_S", 0.01)
    monkeypatch.setattr(core, "REACH_POLL_S", 0.01)
    monkeypatch.setattr(core, "health", lambda kube, since=None, elsewhere=(): HEALTHY)
    monkeypatch.setattr(components, "DETACH_S", 0.0)


def test_a_fault_arms_its_undo_before_the_inject_and_disarms_it_after_the_undo():
    site = AgentSite({"ActiveState": "active"})
    with kubelet_stopped(site, "w1", recovery_timeout_s=1, window_s=120) as window:
        # through the agent the stop cuts the exec: the node starts the kubelet at the planned end
        assert window.armed is not None and window.armed.after_s == 120 + nodeaccess.DETACH_S
    unit = window.armed.unit
    calls = site.access.calls
    assert calls[0].startswith(f"w1: systemd-run --on-active=121000ms --unit={unit} ")
    assert calls[0].endswith(" -- systemctl start kubelet")
    # the inject detached: the kubelet carries the agent's exec, which it would cut before the answer
    assert calls[1].startswith("w1: systemd-run --on-active=0ms --unit=ple2e-inject-kubelet-stop-")
    assert calls[1].endswith(" -- systemctl stop kubelet")
    assert calls[2:] == [
        "w1: systemctl start kubelet",
        f"w1: systemctl show -p ActiveState --value {unit}.timer",
        f"w1: sh -c systemctl stop {unit}.timer 2>/dev/null; systemctl reset-failed {unit}.timer {unit}.service 2>/dev/null; true",
    ]
    assert window.node_undo_at is None and window.recovery.healthy


@pytest.mark.parametrize("backend, fault, after_s", [
    ("agent", containerd_stopped, 60 + nodeaccess.DETACH_S),
    ("agent", containerd_restarted, 60 + nodeaccess.UNDO_MARGIN_S),  # the channel is back once it restarted
    ("docker", containerd_stopped, 60 + nodeaccess.UNDO_MARGIN_S),  # docker exec does not go through containerd
    ("docker", kubelet_stopped, 60 + nodeaccess.UNDO_MARGIN_S),
])
def test_only_a_fault_that_cuts_the_channel_is_armed_without_margin(backend, fault, after_s):
    site = AgentSite({"ActiveState": "active"})
    site.access.name = backend
    with fault(site, "w1", recovery_timeout_s=1, window_s=60) as window:
        pass
    assert window.armed is not None and window.armed.after_s == after_s
    assert site.access.calls[0].startswith(f"w1: systemd-run --on-active={int(after_s * 1000)}ms ")


def test_a_node_out_of_reach_is_waited_for_until_its_armed_undo_brought_it_back(monkeypatch):
    """The kubelet stopped cuts the agent's exec: the suite's undo fails until the node's timer
    started the kubelet again; then it is disarmed (already fired) and the node checked."""
    tries = {"n": 0}
    site = AgentSite({"ActiveState": "inactive", "journalctl": JOURNAL})
    plain = site.access.exec

    def exec_(node, argv, timeout=30):
        if list(argv) == ["systemctl", "start", "containerd"]:
            tries["n"] += 1
            if tries["n"] <= 3:
                site.access.calls.append("unreachable")
                raise NodeUnreachable("agent exec w1: error dialing backend")
        return plain(node, argv, timeout)

    site.access.exec = exec_
    with containerd_stopped(site, "w1", recovery_timeout_s=5, window_s=0.05) as window:
        pass
    assert tries["n"] == 4  # two attempts of the plain undo, then one per poll until it answered
    # the containerd start is the node's, read back from its journal: what recovery timings count from
    assert window.node_undo_at == window.undone_at == pytest.approx(STARTED_AT, abs=1e-6)
    assert window.recovery.healthy


def test_a_node_undo_whose_time_cannot_be_read_fails_the_test_after_the_health_check():
    site = AgentSite({"ActiveState": "inactive"})  # fired, and the journal has nothing of it
    with pytest.raises(FireTimeUnknown, match="when the node undid the fault is unknown"):
        with kubelet_stopped(site, "w1", recovery_timeout_s=1, window_s=0.01) as window:
            pass
    assert window.node_undo_at is None and window.recovery is not None and window.recovery.healthy
    assert not site.broken


def test_the_disarm_is_tried_again_while_the_channel_comes_back():
    """A containerd restart through the agent: the undo answered, the next exec (the disarm) is cut
    once more; the timer must be stopped all the same, or it fires up to window + 30 s later on a node
    that may be in another fault by then."""
    site = AgentSite({"ActiveState": "active"})
    plain, cut = site.access.exec, {"n": 0}

    def exec_(node, argv, timeout=30):
        if "ActiveState" in argv and cut["n"] < 2:
            cut["n"] += 1
            raise NodeUnreachable("agent exec w1: 500 Internal Server Error: connection error")
        return plain(node, argv, timeout)

    site.access.exec = exec_
    with containerd_restarted(site, "w1", recovery_timeout_s=1, window_s=60) as window:
        pass
    assert cut["n"] == 2 and site.access.calls[-1].startswith(f"w1: sh -c systemctl stop {window.armed.unit}.timer")
    assert window.node_undo_at is None and window.recovery.healthy


def test_a_node_that_never_comes_back_breaks_the_cluster(monkeypatch):
    monkeypatch.setattr(nodeaccess, "UNDO_MARGIN_S", 0.0)
    monkeypatch.setattr(core, "UNDO_MARGIN_S", 0.0)
    site = AgentSite({"w1: systemctl start kubelet": NodeUnreachable("error dialing backend"),
                      "ActiveState": NodeUnreachable("error dialing backend")})
    with pytest.raises(core.ClusterBroken, match="armed undo did not bring it back"):
        with kubelet_stopped(site, "w1", recovery_timeout_s=0.05, window_s=0.01):
            pass
    assert site.broken


def test_a_fault_on_a_control_plane_node_through_the_agent_is_skipped():
    site = AgentSite({"systemd-run": NodeRefused("node cp is a control-plane node")})
    with pytest.raises(pytest.skip.Exception, match="control-plane"):
        with kubelet_stopped(site, "cp"):
            pass
    assert site.access.calls == [site.access.calls[0]] and "systemctl stop" not in site.access.calls[0]


def test_a_fault_of_the_node_container_says_so_through_the_agent():
    from e2e.faults.node import node_rebooted

    site = AgentSite()
    with pytest.raises(pytest.skip.Exception, match="docker stop and start of the whole node container.*no node-side equivalent"):
        with node_rebooted(site, "w1"):
            pass
    assert site.access.calls == []


def test_a_node_pause_through_the_agent_freezes_inside_the_node_and_the_node_thaws_it_at_the_planned_end(monkeypatch):
    """NF-4 through the agent: the check, the thaw armed first (window + DETACH_S: the freeze cuts
    the exec, the agent's own pod is frozen too), the freeze detached; the suite's thaw fails until
    the node's timer fired; the undo's time is the timer's, from the node's journal."""
    import e2e.faults.node as node
    from e2e.cluster import freezer

    monkeypatch.setattr(node, "DETACH_S", 0.0)
    site = AgentSite({"ActiveState": "inactive", "journalctl": JOURNAL})
    plain, tries = site.access.exec, {"n": 0}

    def exec_(n, argv, timeout=30):
        if tuple(argv) == freezer.argv("thaw"):
            tries["n"] += 1
            if tries["n"] <= 3:
                raise NodeUnreachable("agent exec w1: error dialing backend")
        return plain(n, argv, timeout)

    site.access.exec = exec_
    with node.node_paused(site, "w1", recovery_timeout_s=5, window_s=90) as window:
        assert window.armed is not None and window.armed.after_s == 90 + nodeaccess.DETACH_S
        assert window.armed.argv == freezer.argv("thaw")
    calls = site.access.calls
    script = " ".join(freezer.argv("check")[:3])
    assert calls[0] == f"w1: {script} sh check"
    assert calls[1].startswith(f"w1: systemd-run --on-active=91000ms --unit={window.armed.unit} ")
    assert calls[1].endswith(f" -- {script} sh thaw")
    assert calls[2].startswith("w1: systemd-run --on-active=0ms --unit=ple2e-inject-node-pause-")
    assert calls[2].endswith(f" -- {script} sh freeze")
    assert calls[3] == f"w1: {script} sh thaw" and tries["n"] == 4  # two plain attempts, then polled until it answered
    assert window.node_undo_at == window.undone_at == pytest.approx(STARTED_AT, abs=1e-6)
    assert window.recovery.healthy


@pytest.mark.parametrize("answer, says", [
    (2, r"cannot be frozen from inside \(e2e.cluster.freezer check, exit 2\): failed"),
    (NodeRefused("node cp is a control-plane node"), "node-pause: node cp is a control-plane node"),
])
def test_a_node_that_cannot_be_frozen_from_inside_skips_naming_why_and_is_not_touched(answer, says):
    from e2e.faults.node import node_paused

    site = AgentSite({" sh check": answer})
    with pytest.raises(pytest.skip.Exception, match=says):
        with node_paused(site, "cp"):
            pass
    assert len(site.access.calls) == 1 and site.access.calls[0].endswith(" sh check")


def test_a_node_pause_on_the_shared_cluster_is_refused_before_the_node_is_entered():
    from e2e.faults.node import node_paused

    site = AgentSite()
    site.profile = "default"
    with pytest.raises(core.FaultRefused):
        with node_paused(site, "w1"):
            pass
    assert site.access.calls == []


def test_without_a_kind_cluster_a_fault_names_its_node():
    site = AgentSite()
    with pytest.raises(core.FaultRefused, match="name the node"):
        with kubelet_stopped(site):
            pass


# -- Scenario.node_exec and the backend of a run ---------------------------------------------------

def _scenario(access, kind=None):
    from pathlib import Path

    from e2e.run.scenario import Scenario

    return Scenario(None, "ns", None, judge=None, manifest_dir=Path("."), kubernetes_minor=37, cgroup=2, kind=kind,
                    access=access)


def test_node_exec_goes_through_the_runs_node_access():
    access = FakeAccess({"containerd config dump": "version = 3\n"})
    kind = SimpleNamespace(control_plane="c-control-plane")
    assert _scenario(access, kind).node_exec("containerd", "config", "dump") == "version = 3\n"
    _scenario(access, kind).node_exec("dmesg", node="c-worker")
    assert access.calls == ["c-control-plane: containerd config dump", "c-worker: dmesg"]


def test_node_exec_through_the_agent_enters_the_first_worker_unless_told():
    agent, execs, _ = _agent({})
    agent.kube.nodes = lambda: [{"metadata": {"name": "w2", "labels": {}}}, {"metadata": {"name": "w1", "labels": {}}},
                                {"metadata": {"name": "cp", "labels": {"node-role.kubernetes.io/control-plane": ""}}}]
    _scenario(agent).node_exec("cat", "/etc/os-release")
    assert [e[1] for e in execs] == ["agent-w1"]
    agent.kube.nodes = lambda: [{"metadata": {"name": "cp", "labels": {"node-role.kubernetes.io/control-plane": ""}}}]
    with pytest.raises(pytest.skip.Exception, match="needs a worker node"):
        _scenario(agent).node_exec("true")


def test_node_exec_skips_without_node_access_or_on_a_refused_node():
    with pytest.raises(pytest.skip.Exception, match="needs node access.*--node-agent"):
        _scenario(None).node_exec("dmesg")
    refused = FakeAccess({"dmesg": NodeRefused("node cp is a control-plane node: the node agent never runs there")})
    with pytest.raises(pytest.skip.Exception, match="never runs there"):
        _scenario(refused).node_exec("dmesg", node="cp")


def test_a_kind_cluster_gets_docker_a_kubeconfig_one_the_agent_only_when_asked(monkeypatch):
    from e2e.plugin import clusters

    monkeypatch.setenv("E2E_RUN_ID", "run-1")
    opts = {"--node-agent": False, "--agent-image": None, "--node-selector": None}
    config = SimpleNamespace(getoption=lambda name: opts[name])
    assert isinstance(clusters.node_access(config, SimpleNamespace(), None), DockerAccess)
    assert clusters.node_access(config, None, SimpleNamespace()) is None
    opts.update({"--node-agent": True, "--agent-image": "my/nsenter:1"})
    agent = clusters.node_access(config, None, SimpleNamespace())
    assert isinstance(agent, AgentAccess) and agent.image == "my/nsenter:1" and agent.namespace == "ple2e-agent-run-1"
    opts["--agent-image"] = None
    assert clusters.node_access(config, None, SimpleNamespace()).image == clusters.workload_images()["busybox_image"]


# -- the cgroup version, read in the node ------------------------------------------------------------

@pytest.mark.parametrize("fs, version", [("cgroup2fs\n", 2), ("tmpfs\n", 1)])
def test_the_cgroup_version_is_read_in_the_node(fs, version):
    access = FakeAccess({"stat -fc %T /sys/fs/cgroup": fs})
    assert nodeaccess.cgroup_version(access, "w1") == version
    assert access.calls == ["w1: stat -fc %T /sys/fs/cgroup"]


def test_a_kubeconfig_clusters_cgroup_version_is_read_on_each_worker_through_the_agent(monkeypatch):
    from e2e.plugin import clusters

    agent, _, _ = _agent({})
    agent.kube.nodes = lambda: [{"metadata": {"name": "w2", "labels": {}}}, {"metadata": {"name": "w1", "labels": {}}},
                                {"metadata": {"name": "cp", "labels": {"node-role.kubernetes.io/control-plane": ""}}}]
    read = {"w1": 2, "w2": 2}

    def version(access, node):
        if isinstance(read[node], Exception):
            raise read[node]
        return read[node]

    monkeypatch.setattr(clusters, "cgroup_version", version)
    assert clusters.cgroup_versions(None, agent) == (2, {"w1": 2, "w2": 2})
    read["w2"] = 1  # workers that differ: no one version for the cluster's bands
    assert clusters.cgroup_versions(None, agent) == (None, {"w1": 2, "w2": 1})
    read["w2"] = NodeUnreachable("agent pod not running")
    whole, per_node = clusters.cgroup_versions(None, agent)
    assert whole is None and per_node["w1"] == 2 and "NodeUnreachable: agent pod not running" in per_node["w2"]
    from kubernetes.client.exceptions import ApiException

    read["w2"] = ApiException(403, "Forbidden")  # the agent's namespace or pod refused
    whole, per_node = clusters.cgroup_versions(None, agent)
    assert whole is None and per_node["w1"] == 2 and "Forbidden" in per_node["w2"]

    def forbidden():
        raise ApiException(403, "Forbidden")

    agent.kube.nodes = forbidden
    assert clusters.cgroup_versions(None, agent) == (None, "not read: list nodes: 403 Forbidden")
    # without node access nothing is read; a kind cluster: its control plane, through docker exec
    assert clusters.cgroup_versions(None, None) == (None, None)
    monkeypatch.undo()  # the real read, through the kind cluster's access
    kind = SimpleNamespace(control_plane="cp")
    docker = FakeAccess({"stat -fc %T /sys/fs/cgroup": "cgroup2fs\n"})
    assert clusters.cgroup_versions(kind, docker) == (2, 2)
    assert docker.calls == ["cp: stat -fc %T /sys/fs/cgroup"]


# -- the partition through the agent ---------------------------------------------------------------

KUBELET_CONF = """apiVersion: v1
kind: Config
clusters:
- cluster:
    certificate-authority-data: AAAA
    server: https://foreign-control-plane:6443
  name: default-cluster
contexts:
- context:
    cluster: default-cluster
    user: default-auth
  name: default-context
current-context: default-context
"""
GETENT = ("172.18.0.4      STREAM foreign-control-plane\n172.18.0.4      DGRAM  \n172.18.0.4      RAW    \n"
          "fc00:f853::4    STREAM \nfc00:f853::4    DGRAM  \n")


@pytest.mark.parametrize("mode", ["reject", "drop"])
def test_the_partition_through_the_agent_reads_the_api_server_in_the_node_and_arms_its_removal(mode):
    from e2e.faults.node import PARTITION_COMMENT, node_partitioned

    site = AgentSite({"cat /etc/kubernetes/kubelet.conf": KUBELET_CONF, "getent ahosts": GETENT,
                      "ActiveState": "active"})
    with node_partitioned(site, "w1", mode, recovery_timeout_s=1, window_s=60) as window:
        pass
    target = "REJECT --reject-with tcp-reset" if mode == "reject" else "DROP"
    v4 = f"OUTPUT -d 172.18.0.4 -p tcp --dport 6443 -m comment --comment {PARTITION_COMMENT} -j {target}"
    v6 = f"OUTPUT -d fc00:f853::4 -p tcp --dport 6443 -m comment --comment {PARTITION_COMMENT} -j {target}"
    calls = site.access.calls
    assert calls[0] == "w1: cat /etc/kubernetes/kubelet.conf"
    assert calls[1] == 'w1: sh -c getent ahosts "$1" || true sh foreign-control-plane'
    removes = f"while iptables -D {v4} 2>/dev/null; do :; done; while ip6tables -D {v6} 2>/dev/null; do :; done"
    # the removal armed on the node before the first rule goes in, firing at the planned end (the cut cuts the exec)
    assert calls[2] == (f"w1: systemd-run --on-active=60000ms --unit={window.armed.unit} --timer-property=AccuracySec=100ms "
                        f"--timer-property=RemainAfterElapse=no --collect -- sh -c {removes}")
    assert calls[3:5] == [f"w1: iptables -I {v4}", f"w1: ip6tables -I {v6}"]
    assert calls[5].startswith(f"w1: sh -c {removes}; ! ( ip6tables -S OUTPUT; iptables -S OUTPUT ) | grep -q")
    assert calls[6] == f"w1: systemctl show -p ActiveState --value {window.armed.unit}.timer"
    assert window.node_undo_at is None and window.recovery.healthy


def test_a_partition_whose_api_server_does_not_resolve_in_the_node_injects_nothing():
    from e2e.faults.node import node_partitioned

    site = AgentSite({"cat /etc/kubernetes/kubelet.conf": KUBELET_CONF, "getent ahosts": ""})
    with pytest.raises(RuntimeError, match="foreign-control-plane .*resolves to no address"):
        with node_partitioned(site, "w1", "reject"):
            pass
    assert not any("iptables" in c or "systemd-run" in c for c in site.access.calls)


@pytest.mark.parametrize("text, says", [
    ("clusters: []\n", "names no API server"),
    ("clusters:\n- {name: a, cluster: {server: 'https://a:6443'}}\n- {name: b, cluster: {server: 'https://b:6443'}}\n",
     "names no API server"),
    ("{", "not YAML"),
])
def test_a_kubelet_kubeconfig_without_one_server_is_a_clear_error(text, says):
    from e2e.faults.node import kubelet_server

    with pytest.raises(ValueError, match=says):
        kubelet_server(text)


def test_the_kubelet_server_of_its_current_context_and_the_default_port():
    from e2e.faults.node import kubelet_server

    assert kubelet_server(KUBELET_CONF) == ("foreign-control-plane", 6443)
    two = ("clusters:\n- {name: a, cluster: {server: 'https://10.0.0.1'}}\n- {name: b, cluster: {server: 'https://[fd00::1]:8443'}}\n"
           "contexts:\n- {name: c, context: {cluster: b}}\ncurrent-context: c\n")
    assert kubelet_server(two) == ("fd00::1", 8443)
    assert kubelet_server("clusters:\n- {name: a, cluster: {server: 'https://10.0.0.1'}}\n") == ("10.0.0.1", 443)


def test_a_pods_own_node_is_the_one_it_was_scheduled_to():
    """A reading of a pod in its node enters the pod's node (spec.nodeName), not the first worker."""
    access = FakeAccess({"dmesg": "kernel log"})
    sc = _scenario(access)
    recorded = {"oom": {"metadata": {"name": "oom"}, "spec": {"nodeName": "w2"}}, "pending": {"spec": {}}}
    sc.recorder = SimpleNamespace(latest=lambda kind, name: recorded.get(name))
    assert (sc.node_of("oom"), sc.node_of("pending"), sc.node_of("never-seen")) == ("w2", None, None)
    assert sc.node_exec("dmesg", node=sc.node_of("oom")) == "kernel log"
    assert access.calls == ["w2: dmesg"]
# -- --node-selector: the agent only on the nodes it names ----------------------------------------

NODES = {"w-a": {"topology.kubernetes.io/zone": "zone-a", "disk": "ssd"},
         "w-b": {"topology.kubernetes.io/zone": "zone-b"},
         "cp": {"topology.kubernetes.io/zone": "zone-a", "node-role.kubernetes.io/control-plane": ""}}


def _selected_agent(selector: str):
    agent, execs, created = _agent({})
    agent.selector = nodeaccess.parse_node_selector(selector)
    agent.kube.core.read_node = lambda name: {"metadata": {"name": name, "labels": NODES[name]}}
    agent.kube.nodes = lambda: [{"metadata": {"name": n, "labels": labels}} for n, labels in NODES.items()]
    return agent, execs, created


def test_the_node_selector_is_read_as_label_value_pairs():
    assert nodeaccess.parse_node_selector("topology.kubernetes.io/zone=zone-a, disk=ssd") == \
        {"topology.kubernetes.io/zone": "zone-a", "disk": "ssd"}
    assert nodeaccess.parse_node_selector("example.com/empty=") == {"example.com/empty": ""}
    for bad in ("", "zone", "zone=a,", "=a", "zone=a b", "Bad_Prefix/x=1", "zone=a,zone=b", f"k={'v' * 64}"):
        with pytest.raises(ValueError, match="--node-selector"):
            nodeaccess.parse_node_selector(bad)


def test_the_agent_enters_only_the_workers_the_selector_names():
    agent, execs, created = _selected_agent("topology.kubernetes.io/zone=zone-a")
    assert agent.workers() == ["w-a"]  # w-b has zone-b, cp is the control plane (zone-a too)
    agent.exec("w-a", ["true"])
    with pytest.raises(NodeRefused, match=r"node w-b is not selected by --node-selector "
                                          r"topology.kubernetes.io/zone=zone-a \(it has topology.kubernetes.io/zone=zone-b\)"):
        agent.exec("w-b", ["true"])
    with pytest.raises(NodeRefused, match="control-plane"):
        agent.exec("cp", ["true"])
    assert [c[2] for c in created if c[0] == "pod"] == ["agent-w-a"] and [e[1] for e in execs] == ["agent-w-a"]
    both, _, _ = _selected_agent("topology.kubernetes.io/zone=zone-a,disk=hdd")
    with pytest.raises(NodeRefused, match=r"\(it has topology.kubernetes.io/zone=zone-a, disk=ssd\)"):
        both.exec("w-a", ["true"])
    assert both.workers() == []


def test_a_fault_on_a_node_outside_the_selector_skips_and_touches_no_node():
    agent, execs, created = _selected_agent("topology.kubernetes.io/zone=zone-a")
    site = AgentSite()
    site.access = agent
    with pytest.raises(pytest.skip.Exception, match="fault kubelet-stop: node w-b is not selected by --node-selector"):
        with kubelet_stopped(site, "w-b", recovery_timeout_s=1, window_s=60):
            pytest.fail("injected on a node outside the selector")
    assert (execs, created) == ([], [])


def test_node_exec_skips_naming_the_selector_when_no_worker_matches():
    agent, execs, _ = _selected_agent("topology.kubernetes.io/zone=zone-c")
    with pytest.raises(pytest.skip.Exception, match="no worker matches --node-selector topology.kubernetes.io/zone=zone-c"):
        _scenario(agent).node_exec("dmesg")
    with pytest.raises(pytest.skip.Exception, match="node w-a is not selected by --node-selector"):
        _scenario(agent).node_exec("dmesg", node="w-a")
    assert execs == []


def test_the_run_gives_the_agent_the_node_selector(monkeypatch):
    from e2e.plugin import clusters

    monkeypatch.setenv("E2E_RUN_ID", "run-1")
    opts = {"--node-agent": True, "--agent-image": None, "--node-selector": "disk=ssd"}
    config = SimpleNamespace(getoption=lambda name: opts[name])
    assert clusters.node_access(config, None, SimpleNamespace()).selector == {"disk": "ssd"}
    opts["--node-selector"] = None
    assert clusters.node_access(config, None, SimpleNamespace()).selector == {}


@pytest.mark.parametrize("args, said", [
    (["--node-selector", "disk=ssd"], "needs --node-agent"),
    (["--node-agent", "--node-selector", "disk"], "'disk' is not LABEL=VALUE"),
])
def test_a_bad_node_selector_is_a_usage_error(pytester, args, said):
    pytester.makepyfile("def test_x():\n    pass\n")
    result = pytester.runpytest("--collect-only", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--node-selector*{said}*"])


# -- a broken node stays with the user's cluster -------------------------------------------------

def test_a_node_left_notready_on_a_kubeconfig_cluster_says_its_state_and_the_next_step(monkeypatch):
    monkeypatch.setattr(core, "health", lambda kube, since=None, elsewhere=(): (["/readyz 'ok'"], ["node w1 Ready=Unknown"]))
    site = AgentSite({"ActiveState": "active"})  # kind None: a --kubeconfig cluster
    ready = SimpleNamespace(type="Ready", status="Unknown", reason="NodeStatusUnknown",
                            last_transition_time="2026-12-06T14:30:00Z", message="Kubelet stopped posting node status.")
    site.kube.core.read_node = lambda name, _request_timeout=None: SimpleNamespace(status=SimpleNamespace(conditions=[ready]))
    with pytest.raises(core.ClusterBroken) as broken:
        with kubelet_stopped(site, "w1", recovery_timeout_s=0.05, window_s=60):
            pass
    (said,) = site.broken
    assert said in str(broken.value)
    assert ("Node w1: Ready=Unknown (NodeStatusUnknown) since 2026-12-06T14:30:00Z: Kubelet stopped posting node status.; "
            "its armed undo ple2e-undo-kubelet-stop-") in said
    assert "The suite never deletes or replaces a cluster it did not make: the run stops here" in said
    assert "Next: `kubectl describe node w1`" in said and "make clean KUBECONFIG=…" in said
    # the suite's own undo came first and stopped the armed one (as on the foreign cluster, session 20:
    # the kubelet stopped from outside once it had): nothing is due on the node any more
    assert "(systemctl start kubelet) was stopped after the suite's own undo ran at " in said
    assert "(epoch s): nothing of the suite acts on the node any more" in said
    assert "is due at" not in said
    assert "replaced" not in str(broken.value).replace("never deletes or replaces", "")  # the cluster stays as it is
    site.kind = SimpleNamespace(control_plane="c")  # a kind cluster of the run: replaced, nothing of this said
    site.broken.clear()
    with pytest.raises(core.ClusterBroken) as broken:
        with kubelet_stopped(site, "w1", recovery_timeout_s=0.05, window_s=60):
            pass
    assert "never deletes" not in site.broken[0]
    assert str(broken.value).endswith("(logs exported; the cluster is replaced for the next test)")


def test_a_stranded_node_whose_armed_undo_could_not_be_stopped_says_when_it_is_due():
    undo = ArmedUndo("ple2e-undo-kubelet-stop-1", ("systemctl", "start", "kubelet"), 90.0, 1000.0)
    window = core.FaultWindow("kubelet-stop", "w1", injected_at=1001.0, undone_at=1050.0, armed=undo)
    kube = SimpleNamespace(core=SimpleNamespace(read_node=lambda name, _request_timeout=None: 1 / 0))
    said = core.stranded(kube, "w1", window)
    assert "Node w1: unknown (ZeroDivisionError" in said
    assert "its armed undo ple2e-undo-kubelet-stop-1 (systemctl start kubelet) is due at 1090 (epoch s)" in said
    window.disarmed = True
    assert ("its armed undo ple2e-undo-kubelet-stop-1 (systemctl start kubelet) was stopped after the suite's own undo "
            "ran at 1050 (epoch s): nothing of the suite acts on the node any more") in core.stranded(kube, "w1", window)


def test_a_broken_kubeconfig_cluster_stops_the_run_a_kind_one_is_replaced(monkeypatch):
    from e2e.plugin import fixtures

    monkeypatch.setenv("E2E_RUN_ID", "run-1")

    replaced = []
    clusters = SimpleNamespace(replace_broken=lambda *a: replaced.append(a[:3]))
    request = SimpleNamespace(config=SimpleNamespace(getoption=lambda name: "/r"), session=SimpleNamespace(shouldstop=False))
    fixtures._broken(request, clusters, SimpleNamespace(profile="default", replica=0, kind=SimpleNamespace()), "x")
    assert request.session.shouldstop is False and replaced == [("default", 0, "x")]
    fixtures._broken(request, clusters, SimpleNamespace(profile="default", replica=0, kind=None), "node w1 …")
    assert request.session.shouldstop == "pod-lifecycle-e2e: node w1 …"
