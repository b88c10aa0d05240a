"""make clean (e2e.cli.clean) and the liveness locks it trusts (e2e.cluster.kind): a fake kind CLI, a
temporary state directory, real processes holding and dropping locks."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from e2e.cli import clean
from e2e.cluster import cordon, kind as cluster, egress, freezer
from e2e.cluster.nodeaccess import NSENTER
from e2e.faults import registry as registry_faults


class FakeNetwork:
    """The suite's Docker network as e2e.cli.clean sees it (no docker, no iptables)."""

    def __init__(self, monkeypatch, exists: bool = False, nodes: tuple[str, ...] = (), root: bool = False):
        self.exists, self.nodes, self.released, self.guarded = exists, list(nodes), 0, exists and root
        monkeypatch.setattr(egress, "network_exists", lambda: self.exists)
        monkeypatch.setattr(egress, "nodes_on_network", lambda: self.nodes)
        monkeypatch.setattr(egress, "can_guard_host", lambda: root)
        monkeypatch.setattr(egress, "host_guard_installed", lambda: self.guarded)
        monkeypatch.setattr(egress, "release", self.release)

    def release(self) -> bool:
        self.released += 1
        self.exists = self.guarded = False
        return True


@pytest.fixture
def state(tmp_path, monkeypatch) -> Path:
    d = tmp_path / "state"
    d.mkdir()
    monkeypatch.setattr(cluster, "STATE_DIR", d)
    FakeNetwork(monkeypatch)
    return d


def test_clean_removes_the_network_and_guard_once_no_node_is_on_it(state, monkeypatch, capsys):
    net = FakeNetwork(monkeypatch, exists=True, nodes=("ple2e-x-control-plane",), root=True)
    assert clean._clean_egress(dry_run=False) == 0 and net.released == 0  # a node: kept, guarded
    net.nodes = []
    assert clean._clean_egress(dry_run=True) == 0 and net.released == 0
    assert f"would remove Docker network {egress.NETWORK}" in capsys.readouterr().out
    assert clean._clean_egress(dry_run=False) == 0 and net.released == 1
    assert f"removing Docker network {egress.NETWORK} and the host egress guard" in capsys.readouterr().out
    # nothing left: a second clean (or its dry run) says nothing of them (trial 9: it said so each time)
    assert clean._clean_egress(dry_run=True) == 0 and clean._clean_egress(dry_run=False) == 0 and net.released == 1
    assert capsys.readouterr().out == ""


def holder(code: str) -> subprocess.Popen:
    """A child process that runs ``code`` (with e2e.cluster.kind's STATE_DIR set), prints 'held', waits."""
    script = textwrap.dedent(f"""\
        import sys, e2e.cluster.kind as c
        from pathlib import Path
        c.STATE_DIR = Path(sys.argv[1])
        {code}
        print("held", flush=True)
        sys.stdin.read()
    """)
    p = subprocess.Popen([sys.executable, "-c", script, str(cluster.STATE_DIR)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "held"
    return p


def stop(p: subprocess.Popen) -> None:
    p.kill()
    p.wait()


def test_a_run_is_alive_while_a_process_of_it_lives(state):
    assert not cluster.run_alive("r1")  # never seen
    p = holder("c.hold_run('r1')")
    try:
        assert cluster.run_alive("r1")
        assert not cluster.run_alive("r2")
    finally:
        stop(p)  # SIGKILL: the kernel drops the lock
    assert not cluster.run_alive("r1")


def test_holding_a_run_twice_in_one_process_is_one_lock(state):
    cluster.hold_run("r3")
    cluster.hold_run("r3")
    assert cluster.run_alive("r3")


def test_cluster_in_use_follows_the_use_file(state):
    name = "ple2e-0000000000"
    assert not cluster.cluster_in_use(name)
    p = holder(f"import fcntl, os; fd = os.open(c.STATE_DIR / '{name}.use', os.O_RDWR | os.O_CREAT); fcntl.flock(fd, fcntl.LOCK_SH)")
    try:
        assert cluster.cluster_in_use(name)
    finally:
        stop(p)
    assert not cluster.cluster_in_use(name)


@pytest.fixture
def fake_kind(tmp_path, monkeypatch) -> Path:
    """A kind CLI that lists ple2e-live, ple2e-kept and ple2e-stateless and logs deletions."""
    log = tmp_path / "kind.log"
    script = tmp_path / "kind"
    script.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        echo "$@" >> {log}
        case "$1 $2" in
          "get clusters") printf 'kind\\nple2e-kept\\nple2e-live\\nple2e-stateless\\n' ;;
          "delete cluster") ;;
          *) echo "unexpected: $@" >&2; exit 1 ;;
        esac
    """))
    script.chmod(0o755)
    monkeypatch.setenv("E2E_KIND", str(script))
    return log


def test_clean_deletes_unused_clusters_and_dead_files_only(state, fake_kind, capsys):
    for name in ("ple2e-kept", "ple2e-live", "ple2e-gone"):
        (state / f"{name}.json").write_text(json.dumps({"owner": "old-run"}))
        (state / f"{name}.lock").write_text("")
        (state / f"{name}.node.lock").write_text("")
    (state / "cni").mkdir()
    (state / "cni" / "abc.conflist").write_text("{}")
    (state / "guard").mkdir()
    (state / "guard" / "abc.sh").write_text("#!/bin/sh\n")
    (state / "rooms" / "abc").mkdir(parents=True)
    (state / "rooms" / "abc" / "kubeletconfiguration.yaml").write_text("kind: KubeletConfiguration\n")
    (state / "rooms" / "rooms-abc.yaml").write_text("nodes: []\n")
    (state / "rooms" / "live").mkdir()
    (state / "rooms" / "live" / "kubeletconfiguration.yaml").write_text("kind: KubeletConfiguration\n")
    (state / "ple2e-live.kind-config.yaml").write_text(f"hostPath: {state / 'rooms' / 'live'}\n")
    runs = state / "runs"
    runs.mkdir()
    (runs / "dead-run.lock").write_text("")
    live_cluster = holder("import fcntl, os; fd = os.open(c.STATE_DIR / 'ple2e-live.use', os.O_RDWR | os.O_CREAT); fcntl.flock(fd, fcntl.LOCK_SH)")
    live_run = holder("c.hold_run('live-run')")
    try:
        # the live cluster's namespaces cannot be listed with a fake kind: reported, not fatal
        failures = clean.clean(dry_run=False)
        out = capsys.readouterr().out
    finally:
        stop(live_cluster)
        stop(live_run)
    deleted = [line for line in fake_kind.read_text().splitlines() if line.startswith("delete")]
    assert deleted == ["delete cluster --name ple2e-kept"]  # not the live one, not the stateless one
    assert "leaving kind cluster ple2e-stateless" in out
    assert not (state / "ple2e-kept.json").exists() and not (state / "ple2e-gone.json").exists()
    assert not (state / "ple2e-kept.lock").exists()  # the deleted cluster's lock file too
    assert not (state / "ple2e-gone.lock").exists()
    assert (state / "ple2e-live.json").exists() and (state / "ple2e-live.node.lock").exists()  # in use: stays
    assert not (state / "ple2e-gone.node.lock").exists()
    assert not (runs / "dead-run.lock").exists()
    assert (runs / "live-run.lock").exists()
    assert not (state / "cni" / "abc.conflist").exists()
    assert not (state / "guard" / "abc.sh").exists()
    assert not (state / "rooms" / "abc").exists()  # a room's patches no remaining cluster mounts
    assert (state / "rooms" / "live" / "kubeletconfiguration.yaml").exists()  # mounted by the live cluster's node
    assert (state / "rooms" / "rooms-abc.yaml").exists()  # a run is alive: it may read the rooms' patch
    assert failures == 1  # the live cluster's namespaces (fake kind has no kubeconfig)


def test_the_rooms_config_patch_goes_once_no_run_is_alive(state, fake_kind, capsys):
    (state / "rooms").mkdir()
    (state / "rooms" / "rooms-abc.yaml").write_text("nodes: []\n")
    clean.clean(dry_run=False)
    assert f"rooms config patch {state / 'rooms' / 'rooms-abc.yaml'} (no run alive)" in capsys.readouterr().out
    assert not (state / "rooms" / "rooms-abc.yaml").exists()


def test_dry_run_removes_nothing(state, fake_kind, capsys):
    (state / "ple2e-kept.json").write_text(json.dumps({"owner": "old-run"}))
    assert clean.clean(dry_run=True) == 0
    assert "would remove kind cluster ple2e-kept" in capsys.readouterr().out
    assert (state / "ple2e-kept.json").exists()
    assert not [line for line in fake_kind.read_text().splitlines() if line.startswith("delete")]


def test_a_run_deletes_its_cluster_only_when_no_other_process_uses_it(state, fake_kind):
    kind = cluster.Kind("ple2e-shared")
    kind._hold_use()  # this process uses it: that alone does not keep it
    other = holder("import fcntl, os; fd = os.open(c.STATE_DIR / 'ple2e-shared.use', os.O_RDWR | os.O_CREAT); fcntl.flock(fd, fcntl.LOCK_SH)")
    try:
        assert kind.delete_unless_used() is False  # another run uses it
    finally:
        stop(other)
    assert deletions(fake_kind) == []
    assert (state / "ple2e-shared.use").exists()  # in use: its use lock stays with it
    kind._hold_use()
    assert kind.delete_unless_used() is True
    assert deletions(fake_kind) == ["delete cluster --name ple2e-shared"]
    # issue 41 (6): its lock files went with it, removed while held (e2e.base.locks)
    assert sorted(p.name for p in state.iterdir() if p.is_file()) == []


def test_a_cluster_whose_creation_failed_leaves_no_lock_file_nobody_holds(state, fake_kind, monkeypatch):
    profile = cluster.Profile(Path(__file__).resolve().parent.parent / "kind-config.yaml", "kindest/node:v1.37.2")
    kind = cluster.Kind.of(profile)

    def create_fails(*args, timeout=None, detached=False):
        if args[0] == "create":
            raise cluster.PreflightError("`kind create cluster` failed (1): no space left")
        return ""

    monkeypatch.setattr(kind, "_kind", create_fails)
    monkeypatch.setattr(egress, "prepare", lambda: "egress guard: none here")
    other = holder(f"import fcntl; fd = c.take(c.STATE_DIR / '{kind.name}.use', fcntl.LOCK_SH)")
    try:  # another run about to use it: its use lock stays
        with pytest.raises(cluster.PreflightError, match="no space left"):
            kind.ensure(profile, "run-1")
        assert sorted(p.name for p in state.glob(f"{kind.name}.*")) == [f"{kind.name}.use"]
    finally:
        stop(other)
    with pytest.raises(cluster.PreflightError, match="no space left"):
        kind.ensure(profile, "run-1")
    assert sorted(p.name for p in state.glob(f"{kind.name}.*")) == []


def test_a_run_removes_its_liveness_lock_at_its_end_once_its_other_processes_let_go(state):
    cluster.hold_run("r5")
    worker = holder("c.hold_run('r5')")  # an xdist worker of the same run, still exiting
    try:
        assert cluster.release_run("r5") is False and cluster.run_alive("r5")
    finally:
        stop(worker)
    assert cluster.release_run("r5") is True
    assert not (state / "runs" / "r5.lock").exists() and not cluster.run_alive("r5")


def deletions(log: Path) -> list[str]:
    return [line for line in log.read_text().splitlines() if line.startswith("delete")] if log.exists() else []


def test_dry_run_lists_exactly_what_clean_removes(state, fake_kind, capsys):
    """issue 30 (7): a dry run did not list the files of the clusters it would delete (a real clean
    removes them with the cluster), and neither ever touched a --kubeconfig run's node lock."""
    for suffix in (".json", ".kubeconfig", ".kind-config.yaml", ".node.lock", ".lock", ".use"):
        (state / f"ple2e-kept{suffix}").write_text(json.dumps({"owner": "old-run"}) if suffix == ".json" else "")
    (state / "ple2e-gone.kind-config.yaml").write_text("")  # Ctrl-C during `kind create`
    (state / "dead-run.node.lock").write_text("")  # a --kubeconfig run's
    (state / "live-run.node.lock").write_text("")
    live_run = holder("c.hold_run('live-run')")
    try:
        before = {p.name for p in state.iterdir()}
        assert clean.clean(dry_run=True) == 0
        listed = capsys.readouterr().out.replace("would remove ", "").splitlines()
        assert {p.name for p in state.iterdir()} == before
        assert clean.clean(dry_run=False) == 0
        removed = capsys.readouterr().out.replace("removing ", "").splitlines()
        left = {p.name for p in state.iterdir()}
    finally:
        stop(live_run)
    assert listed == removed
    assert sorted(before - left) == sorted(
        [f"ple2e-kept{s}" for s in (".json", ".kubeconfig", ".kind-config.yaml", ".node.lock", ".lock", ".use")]
        + ["ple2e-gone.kind-config.yaml", "dead-run.node.lock"])
    files = [line.split()[-1] for line in removed if line.startswith(("file ", "node lock of dead run "))]
    assert sorted(files) == sorted(str(state / n) for n in before - left)
    assert "live-run.node.lock" in left


def test_the_node_turnstile_files_go_with_their_cluster_or_dead_run(state, fake_kind, capsys):
    """A node's turnstile (``<cluster>.node.turn``, and a --kubeconfig run's ``<run id>.node.turn``,
    e2e.plugin.clusters.hold_node) stayed for ever: make clean knew only the node lock beside it."""
    for name in ("ple2e-gone.node.turn", "ple2e-gone.node.lock", "dead-run.node.turn", "dead-run.node.lock",
                 "live-run.node.turn"):
        (state / name).write_text("")
    live_run = holder("c.hold_run('live-run')")
    try:
        assert clean.clean(dry_run=False) == 0
    finally:
        stop(live_run)
    assert sorted(p.name for p in state.iterdir() if p.is_file()) == ["live-run.node.turn"]
    assert f"removing node lock of dead run {state / 'dead-run.node.turn'}" in capsys.readouterr().out


def test_a_creation_stopped_by_ctrl_c_leaves_none_of_the_clusters_files(state, fake_kind, monkeypatch):
    """Ctrl-C during `kind create` deleted the half-made cluster and its state file but left its
    kind config (and the kubeconfig kind had written) until a `make clean`."""
    kind = cluster.Kind("ple2e-x")

    def create_cut(*args, timeout=None):
        if args[0] == "create":
            kind.kubeconfig.write_text("written by kind before the Ctrl-C")
            raise KeyboardInterrupt
        return ""

    monkeypatch.setattr(kind, "_kind", create_cut)
    monkeypatch.setattr(egress, "prepare", lambda: "egress guard: none here")
    profile = cluster.Profile(Path(__file__).resolve().parent.parent / "kind-config.yaml", "kindest/node:v1.37.2")
    with pytest.raises(KeyboardInterrupt):
        kind._create(profile, "run-1")
    assert deletions(fake_kind) == ["delete cluster --name ple2e-x"]
    assert sorted(p.name for p in state.glob("ple2e-x.*")) == []


def test_creation_locks_go_once_no_run_is_alive(state, fake_kind, capsys):
    """issue 29 (D2): make clean left ``creating.lock`` and ``create.<i>.lock`` for ever although
    the guide (docs/profiles-and-concurrency.md, "State") says it removes a run's empty lock files; while a run lives they stay (it may wait on them)."""
    with cluster.creating():
        pass
    names = sorted(p.name for p in state.iterdir() if p.name.startswith("creat"))
    assert names and "creating.lock" in names
    live_run = holder("c.hold_run('live-run')")
    try:
        assert clean.clean(dry_run=False) == 0
        assert sorted(p.name for p in state.iterdir() if p.name.startswith("creat")) == names
    finally:
        stop(live_run)
    capsys.readouterr()
    assert clean.clean(dry_run=True) == 0
    listed = capsys.readouterr().out.replace("would remove ", "").splitlines()
    assert clean.clean(dry_run=False) == 0
    assert capsys.readouterr().out.replace("removing ", "").splitlines() == listed
    assert [line for line in listed if line.startswith("cluster creation lock")] == [
        f"cluster creation lock {state / n}" for n in names]
    assert not [p for p in state.iterdir() if p.name.startswith("creat")]


# -- make clean KUBECONFIG=…: a cluster the suite did not make ----------------------------------

class FakeNodes:
    """The systemd of a cluster's nodes as the node agent's exec sees it: ``units[node]`` is
    ``{unit: ActiveState}``; a node in ``cut`` answers no exec (ExecError) for that many calls."""

    def __init__(self, units: dict[str, dict[str, str]], cut: dict[str, int] | None = None,
                 registry: dict[str, tuple[str, str]] | None = None):
        self.units, self.cut, self.ran = units, dict(cut or {}), []
        self.registry = registry or {}  # node -> (POD_STATE_SCRIPT's output, POD_FREEZE_SCRIPT state's)

    def exec(self, namespace, pod, container, command, timeout_s=30):
        from e2e.cluster.kube import ExecError, ExecResult

        node = pod.removeprefix("agent-")
        assert tuple(command[:len(NSENTER)]) == NSENTER  # the node's own programs (nodeaccess.NSENTER)
        argv = command[len(NSENTER):]
        if self.cut.get(node):
            self.cut[node] -= 1
            raise ExecError(f"exec in {pod}: error dialing backend")
        units = self.units[node]
        if argv[:2] == ["systemctl", "list-units"]:
            return ExecResult(0, "".join(f"{u} loaded {s} waiting x\n" for u, s in units.items()), "")
        if tuple(argv) == freezer.argv("state"):  # a look, as list-units: nothing frozen (test_interrupt_check has frozen nodes)
            return ExecResult(0, "", "")
        if argv[0] == "sh" and "crictl inspect" in argv[2]:  # a registry pod's process
            return ExecResult(0, json.dumps({"info": {"pid": 77}}), "")
        if argv[:3] == ["sh", "-c", registry_faults.POD_STATE_SCRIPT]:
            return ExecResult(0, self.registry[node][0], "")
        if argv[:3] == ["sh", "-c", registry_faults.POD_FREEZE_SCRIPT]:
            assert argv[4:] == ["77", "state"]  # a look only: never a thaw or freeze
            return ExecResult(0, self.registry[node][1], "")
        self.ran.append(f"{namespace}/{node}: {' '.join(argv)}")
        if argv[:2] == ["systemctl", "start"]:  # the undo's service runs (and, --collect, unloads)
            units.pop(argv[2], None)
        elif argv[:2] == ["systemctl", "stop"]:
            units.pop(argv[2], None)
        elif argv[0] == "sh" and "reset-failed" in argv[2]:
            for u in [u for u, s in units.items() if s == "failed"]:
                del units[u]
        return ExecResult(0, "", "")


def _ns(name: str, run: str, agent: bool = False, phase: str = "Active"):
    from types import SimpleNamespace as NS

    labels = {"pod-lifecycle-e2e/run-id": run, **({"pod-lifecycle-e2e/node-agent": "1"} if agent else {})}
    return NS(metadata=NS(name=name, labels=labels), status=NS(phase=phase))


def _foreign(nodes: FakeNodes, namespaces: list, pods: dict[str, list[str]], node_objs: list[dict] | None = None,
             registries: tuple = ()):
    """A fake Kube of a cluster the suite did not make: ``namespaces`` (:func:`_ns`), the agent
    pods of each namespace by node, ``nodes`` the nodes' systemd, ``node_objs`` its Nodes (the API's
    JSON; a merge patch applies to them, ``kube.patches`` records it), ``registries`` the IM registry
    pods as ``(namespace, name, node)``; ``deleted`` records deletions."""
    from types import SimpleNamespace as NS

    deleted: list[str] = []
    node_objs = node_objs or []
    patches: list[tuple[str, dict]] = []

    def patch(kind, name, namespace, body, patch_type="strategic"):
        assert (kind, namespace, patch_type) == ("Node", None, "merge")
        patches.append((name, body))
        obj = next(n for n in node_objs if n["metadata"]["name"] == name)
        for key, value in body["metadata"]["annotations"].items():
            obj["metadata"]["annotations"].pop(key) if value is None else obj["metadata"]["annotations"].update({key: value})
        obj["spec"].update(body.get("spec", {}))
        return obj

    def list_registries(label_selector=""):
        assert label_selector == "pod-lifecycle-e2e/registry"
        return NS(items=[NS(metadata=NS(namespace=ns, name=n), spec=NS(node_name=node)) for ns, n, node in registries])

    def list_namespace(label_selector=""):
        return NS(items=[ns for ns in namespaces if label_selector in ns.metadata.labels])

    def list_pods(namespace):
        return NS(items=[NS(metadata=NS(name=f"agent-{n}"), spec=NS(node_name=n)) for n in pods.get(namespace, [])])

    ready = NS(status=NS(conditions=[NS(type="Ready", status="True", reason="KubeletReady")]))
    core = NS(list_namespace=list_namespace, list_namespaced_pod=list_pods, read_node=lambda name: ready,
              read_namespace=lambda name: NS(status=NS(phase="Active")), list_pod_for_all_namespaces=list_registries)
    kube = NS(kubeconfig="/k/config", core=core, exec=nodes.exec, delete_namespace=deleted.append,
              nodes=lambda: node_objs, patch=patch, patches=patches)
    return kube, deleted


UNDO = "ple2e-undo-kubelet-stop-0123abcd"
INJECT = "ple2e-inject-containerd-stop-89abcdef"


def test_clean_fires_a_dead_runs_armed_undo_and_deletes_its_namespaces(monkeypatch, capsys):
    monkeypatch.setattr(clean, "run_alive", lambda run: run == "live")
    nodes = FakeNodes({"w1": {f"{UNDO}.timer": "active", f"{UNDO}.service": "inactive"},
                       "w2": {f"{INJECT}.timer": "active", "ple2e-undo-x-1.service": "failed"},
                       "w3": {"ple2e-undo-live-2.timer": "active"}})
    kube, deleted = _foreign(nodes, [_ns("ple2e-agent-dead", "dead", agent=True), _ns("ple2e-cl-1-abc", "dead"),
                                     _ns("ple2e-agent-live", "live", agent=True), _ns("ple2e-x-live", "live")],
                             {"ple2e-agent-dead": ["w1", "w2"], "ple2e-agent-live": ["w3"]})
    assert clean.clean_cluster(kube, wait_s=1, poll_s=0, sleep=lambda s: None) == 0
    assert nodes.ran == [f"ple2e-agent-dead/w1: systemctl start {UNDO}.service",  # the undo runs now
                         f"ple2e-agent-dead/w1: systemctl stop {UNDO}.timer",
                         "ple2e-agent-dead/w1: sh -c systemctl reset-failed 'ple2e-*' 2>/dev/null; true",
                         f"ple2e-agent-dead/w2: systemctl stop {INJECT}.timer",  # the inject never runs
                         "ple2e-agent-dead/w2: sh -c systemctl reset-failed 'ple2e-*' 2>/dev/null; true"]
    assert nodes.units == {"w1": {}, "w2": {}, "w3": {"ple2e-undo-live-2.timer": "active"}}  # a live run's: untouched
    assert deleted == ["ple2e-agent-dead", "ple2e-cl-1-abc"]
    out = capsys.readouterr().out
    assert f"removing w1: {UNDO}.timer fired now (armed by a dead run)" in out
    assert f"removing w2: {INJECT}.timer stopped (a pending inject of a dead run: never run)" in out
    assert "node w1: Ready=True (KubeletReady)" in out


def test_clean_says_the_registry_faults_a_dead_run_left_in_its_registry_pods(monkeypatch, capsys):
    """A run killed in an IM registry fault on a --kubeconfig cluster leaves it inside the registry
    pod (the stop's DROP, a throttle's qdisc, a freeze): clean says it, through the dead run's own
    agent, and deletes the namespace it goes with; a live run's registry is not looked at."""
    monkeypatch.setattr(clean, "run_alive", lambda run: run == "live")
    nodes = FakeNodes({"w1": {}, "w2": {}}, registry={
        "w1": ("network dark (iptables DROP ple2e-registry-stop)\nthrottled (tbf qdisc on eth0)\n",
               "/sys/fs/cgroup/freezer/kubepods/pod1/c1 THAWED"),
        "w2": ("", "/sys/fs/cgroup/freezer/kubepods/pod2/c2 FROZEN")})
    kube, deleted = _foreign(nodes, [_ns("ple2e-agent-dead", "dead", agent=True), _ns("ple2e-im-1-abc", "dead"),
                                     _ns("ple2e-im-2-live", "live")],
                             {"ple2e-agent-dead": ["w1", "w2"]},
                             registries=(("ple2e-im-1-abc", "ple2e-registry-a1", "w1"), ("ple2e-im-1-abc", "ple2e-registry-b2", "w2"),
                                         ("ple2e-im-2-live", "ple2e-registry-c3", "w2")))
    assert clean.clean_cluster(kube, wait_s=1, poll_s=0, sleep=lambda s: None) == 0
    out, err = capsys.readouterr()
    said = [line for line in out.splitlines() if line.startswith("registry pod")]
    assert said == [
        "registry pod ple2e-im-1-abc/ple2e-registry-a1 on w1: network dark (iptables DROP ple2e-registry-stop) (goes with namespace ple2e-im-1-abc)",
        "registry pod ple2e-im-1-abc/ple2e-registry-a1 on w1: throttled (tbf qdisc on eth0) (goes with namespace ple2e-im-1-abc)",
        "registry pod ple2e-im-1-abc/ple2e-registry-b2 on w2: frozen (/sys/fs/cgroup/freezer/kubepods/pod2/c2 FROZEN) (goes with namespace ple2e-im-1-abc)"]
    assert deleted == ["ple2e-agent-dead", "ple2e-im-1-abc"] and "nothing to clean" not in out and not err


def test_clean_waits_for_a_node_a_fault_cut_off_and_keeps_its_agent_while_it_stays_out(monkeypatch, capsys):
    monkeypatch.setattr(clean, "run_alive", lambda run: False)
    nodes = FakeNodes({"w1": {f"{UNDO}.timer": "active"}}, cut={"w1": 3})
    kube, deleted = _foreign(nodes, [_ns("ple2e-agent-dead", "dead", agent=True)], {"ple2e-agent-dead": ["w1"]})
    slept = []
    assert clean.clean_cluster(kube, wait_s=60, poll_s=5, sleep=slept.append) == 0  # back after 3 polls
    assert slept == [5, 5, 5] and nodes.units["w1"] == {} and deleted == ["ple2e-agent-dead"]
    assert "waiting up to 60 s for node w1" in capsys.readouterr().out

    nodes = FakeNodes({"w1": {f"{UNDO}.timer": "active"}}, cut={"w1": 10**6})
    kube, deleted = _foreign(nodes, [_ns("ple2e-agent-dead", "dead", agent=True)], {"ple2e-agent-dead": ["w1"]})
    assert clean.clean_cluster(kube, wait_s=0, poll_s=0, sleep=lambda s: None) == 1
    assert deleted == []  # its agent pods are the way back in: the next clean tries again
    assert "namespace ple2e-agent-dead kept" in capsys.readouterr().err


def test_clean_waits_for_a_swept_node_to_be_ready_again_a_bounded_time(monkeypatch, capsys):
    """A worker thawed by its armed timer while the clean swept it was still NotReady when the clean
    ended (foreign cluster, interrupt-check f7): the clean says its Ready once True, polling at most READY_WAIT_S."""
    from types import SimpleNamespace as NS

    monkeypatch.setattr(clean, "run_alive", lambda run: False)
    for not_ready_reads, said in [(3, "node w1: Ready=True (KubeletReady) (after 3 polls of 5 s)"),
                                  (10**6, "node w1: Ready=False (KubeletNotReady) (after 12 polls of 5 s)")]:
        nodes = FakeNodes({"w1": {}})
        kube, deleted = _foreign(nodes, [_ns("ple2e-agent-dead", "dead", agent=True)], {"ple2e-agent-dead": ["w1"]})
        reads: list[str] = []

        def read_node(name, reads=reads, n=not_ready_reads):
            reads.append(name)
            ok = len(reads) > n
            return NS(status=NS(conditions=[NS(type="Ready", status="True" if ok else "False",
                                               reason="KubeletReady" if ok else "KubeletNotReady")]))

        kube.core.read_node = read_node
        slept: list[float] = []
        assert clean.clean_cluster(kube, wait_s=60, poll_s=5, sleep=slept.append) == 0  # said, not a failure
        assert slept == [5] * min(not_ready_reads, int(clean.READY_WAIT_S // 5)) and deleted == ["ple2e-agent-dead"]
        assert said in capsys.readouterr().out


def _node(name: str, unschedulable: bool = False, run: str | None = None) -> dict:
    return {"metadata": {"name": name, "annotations": {cordon.CORDONED_BY: run} if run else {}},
            "spec": {"unschedulable": True} if unschedulable else {}}


def test_clean_cluster_uncordons_a_node_a_dead_run_left_cordoned_and_removes_its_mark(monkeypatch, capsys):
    """DR-2's kubectl drain cordons the node; a run killed before its uncordon left it so."""
    monkeypatch.setattr(clean, "run_alive", lambda run: run == "live")
    objs = [_node("w1", True, "dead"), _node("w2", True, "live"), _node("w3", False, "dead-2"), _node("w4", True)]
    kube, deleted = _foreign(FakeNodes({}), [], {}, objs)
    assert clean.clean_cluster(kube) == 0
    assert kube.patches == [(n, {"metadata": {"annotations": {cordon.CORDONED_BY: None}}, "spec": {"unschedulable": False}})
                            for n in ("w1", "w3")]
    assert [(o["metadata"]["annotations"], bool(o["spec"].get("unschedulable"))) for o in objs] == \
        [({}, False), ({cordon.CORDONED_BY: "live"}, True), ({}, False), ({}, True)]  # a live run's, the user's own: untouched
    out = capsys.readouterr().out
    assert (f"removing cordon of node w1 by dead run dead in cluster /k/config (DR-2's kubectl drain: the node is "
            f"uncordoned, its mark {cordon.CORDONED_BY} removed)") in out
    assert f"removing mark {cordon.CORDONED_BY} of dead run dead-2 on node w3 in cluster /k/config (not cordoned)" in out
    assert "nothing to clean" not in out


def test_clean_cluster_dry_run_lists_a_dead_runs_cordon_and_changes_no_node(monkeypatch, capsys):
    monkeypatch.setattr(clean, "run_alive", lambda run: False)
    objs = [_node("w1", True, "dead")]
    kube, _ = _foreign(FakeNodes({}), [], {}, objs)
    assert clean.clean_cluster(kube, dry_run=True) == 0
    assert kube.patches == [] and objs == [_node("w1", True, "dead")]
    assert "would remove cordon of node w1 by dead run dead" in capsys.readouterr().out


def test_a_cordon_clean_cannot_list_or_undo_is_a_failure_said(monkeypatch, capsys):
    monkeypatch.setattr(clean, "run_alive", lambda run: False)
    kube, _ = _foreign(FakeNodes({}), [], {}, [_node("w1", True, "dead")])
    kube.patch = lambda *a, **k: (_ for _ in ()).throw(RuntimeError("patch node/w1: 403 Forbidden"))
    assert clean.clean_cluster(kube) == 1
    assert "  failed: patch node/w1: 403 Forbidden" in capsys.readouterr().err
    kube.nodes = lambda: (_ for _ in ()).throw(RuntimeError("list nodes: 403 Forbidden"))
    assert clean.clean_cluster(kube) == 1
    assert "cannot list the nodes of cluster /k/config: list nodes: 403 Forbidden" in capsys.readouterr().err


def test_clean_cluster_dry_run_touches_nothing(monkeypatch, capsys):
    monkeypatch.setattr(clean, "run_alive", lambda run: False)
    nodes = FakeNodes({"w1": {f"{UNDO}.timer": "active"}})
    kube, deleted = _foreign(nodes, [_ns("ple2e-agent-dead", "dead", agent=True)], {"ple2e-agent-dead": ["w1"]})
    assert clean.clean_cluster(kube, dry_run=True) == 0
    assert (nodes.ran, deleted, nodes.units["w1"]) == ([], [], {f"{UNDO}.timer": "active"})
    out = capsys.readouterr().out
    assert "would fire the armed undos and stop the pending injects of dead run dead on node w1" in out
    assert "would remove namespace ple2e-agent-dead of dead run dead" in out


def test_make_clean_cleans_a_cluster_only_when_kubeconfig_is_given_on_the_command_line():
    root = Path(__file__).resolve().parents[1]

    def recipe(*args: str, env: dict | None = None) -> str:
        import os

        return subprocess.run(["make", "-n", "-C", str(root), "clean", *args], capture_output=True, text=True,
                              env={**os.environ, **(env or {})}, check=True).stdout

    assert "--kubeconfig '/k/c' --context 'ctx'" in recipe("KUBECONFIG=/k/c", "CONTEXT=ctx")
    assert "--kubeconfig" not in recipe(env={"KUBECONFIG": "/k/c"})  # an exported one: never by surprise


def test_clean_cluster_removes_the_dead_runs_lock_files_without_kind(state, monkeypatch, capsys):
    monkeypatch.setattr(clean, "run_alive", lambda run: run == "live")
    monkeypatch.setattr(clean, "kind_clusters", lambda: pytest.fail("a --kubeconfig clean looks at no kind cluster"))
    (state / "runs").mkdir()
    for name in ("runs/dead.lock", "runs/live.lock", "dead.node.lock", "dead.node.turn", "live.node.lock",
                 "ple2e-x.node.lock", "runs/dead.left.json", "runs/dead.phase1.json", "runs/live.used.json"):
        (state / name).touch()
    kube, _ = _foreign(FakeNodes({}), [], {})
    assert clean.clean_cluster(kube) == 0
    assert sorted(str(p.relative_to(state)) for p in state.rglob("*") if p.is_file()) == \
        ["live.node.lock", "ple2e-x.node.lock", "runs/live.lock", "runs/live.used.json"]  # a kind cluster's: plain make clean's


@pytest.mark.parametrize("dry_run", [True, False])
def test_clean_says_there_is_nothing_to_clean_and_what_it_looked_at(state, fake_kind, dry_run, capsys):
    """A new user's trial: `make clean DRY_RUN=1` printed nothing at all when nothing was left."""
    assert clean.clean(dry_run=dry_run) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == (f"nothing to clean: kind clusters with a state file in {state}: none; "
                                    "no file of a dead run or a removed cluster there; no unused egress guard")
    (state / "ple2e-kept.json").write_text(json.dumps({"owner": "old-run"}))
    assert clean.clean(dry_run=True) == 0
    assert "nothing to clean" not in capsys.readouterr().out  # something to clean: not said


@pytest.mark.parametrize("dry_run", [True, False])
def test_clean_cluster_says_there_is_nothing_to_clean_and_what_it_looked_at(state, monkeypatch, dry_run, capsys):
    monkeypatch.setattr(clean, "run_alive", lambda run: run == "live")
    kube, deleted = _foreign(FakeNodes({"w1": {}}), [_ns("ple2e-agent-live", "live", agent=True), _ns("ple2e-x-live", "live")],
                             {"ple2e-agent-live": ["w1"]})
    assert clean.clean_cluster(kube, dry_run=dry_run) == 0 and deleted == []
    assert capsys.readouterr().out == (
        "nothing to clean in cluster /k/config: no namespace labelled pod-lifecycle-e2e/run-id of a dead run "
        "(1 node agent namespaces: of live runs or already terminating), no node cordoned by a dead run, "
        f"no lock file of a dead run in {state}\n")
    kube, deleted = _foreign(FakeNodes({"w1": {}}), [_ns("ple2e-x-dead", "dead")], {})
    assert clean.clean_cluster(kube, dry_run=dry_run) == 0
    assert "nothing to clean" not in capsys.readouterr().out
