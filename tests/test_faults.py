"""The fault protocol (e2e.faults): every fault is undone whatever the test did (failure,
timeout, Ctrl-C), the health check runs after the undo, and a cluster that does not recover is
handed over as broken — with fakes for the node, the API and the cluster; no Docker."""

from __future__ import annotations

import json
import os
import signal
from types import SimpleNamespace

import pytest

import e2e.faults.core as core
from e2e.cluster.kind import Kind
from e2e.faults import (
    TEST_TAINT,
    ClusterBroken,
    FaultRefused,
    apiserver_down,
    check_health,
    containerd_stopped,
    fault,
    health,
    kubelet_killed,
    kubelet_stopped,
    node_tainted,
)
from e2e.record.recorder import FAULT_KIND, Change
from e2e.record.timeline import rows
from helpers import FaultSite

HEALTHY = (["node n Ready=True"], [])
SICK = (["/readyz 'ok'"], ["node n Ready=Unknown"])


def Site(profile: str = "fast-lifecycle", fail_exec: set[str] = frozenset()) -> FaultSite:
    """A fault site whose node commands containing any of ``fail_exec`` fail."""
    return FaultSite(profile, {f: RuntimeError(f"docker exec: {f} failed") for f in fail_exec})


@pytest.fixture(autouse=True)
def fast_polls(monkeypatch):
    monkeypatch.setattr(core, "HEALTH_POLL_S", 0.01)


def probe_of(*answers):
    """A health probe answering ``answers`` in turn (the last one for ever)."""
    seq = list(answers)
    return lambda kube: seq.pop(0) if len(seq) > 1 else seq[0]


def run(site: Site, body, probe=None, timeout_s: float = 1.0, **kw):
    probe = probe_of(HEALTHY) if probe is None else probe
    with fault(site, "kubelet-stop", "n", lambda: site.node_exec("systemctl", "stop", "kubelet", node="n"),
               lambda: site.node_exec("systemctl", "start", "kubelet", node="n"), timeout_s, probe=probe, **kw) as window:
        body(window)
    return window


def test_a_fault_is_injected_undone_and_checked_in_that_order():
    site = Site()
    seen = []
    window = run(site, lambda w: seen.append((w.injected_at is not None, w.undone_at)))
    assert site.calls == ["n: systemctl stop kubelet", "n: systemctl start kubelet"]
    assert seen == [(True, None)]  # inside the block: injected, not yet undone
    assert window.injected_at <= window.undone_at
    assert window.recovery.healthy and window.recovery.polls == 1
    assert "HEALTHY" in site.files["recovery-kubelet-stop.txt"]
    assert site.marks == ["fault kubelet-stop on n", "undo kubelet-stop"]
    assert site.declared == [("kubelet-stop", "n", window.injected_at, window.undone_at)]


@pytest.mark.parametrize("error", [AssertionError("a value failed"), TimeoutError("a wait timed out"), KeyboardInterrupt()])
def test_the_undo_runs_whatever_ends_the_body(error):
    site = Site()

    def body(_):
        raise error

    with pytest.raises(type(error)):
        run(site, body)
    assert site.calls[-1] == "n: systemctl start kubelet"
    assert "recovery-kubelet-stop.txt" in site.files
    assert not site.broken


def test_a_failed_inject_is_undone_too():
    site = Site(fail_exec={"stop"})
    with pytest.raises(RuntimeError, match="stop failed"):
        run(site, lambda w: None)
    assert site.calls[-1] == "n: systemctl start kubelet"


@pytest.fixture
def sigint(request):
    """SIGINT handled as ``request.param`` says during the test (pytest may run in the background,
    where a shell leaves SIGINT ignored), the process's own handler restored after."""
    previous = signal.signal(signal.SIGINT, request.param)
    yield request.param
    signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("sigint", [signal.default_int_handler], indirect=True)
def test_ctrl_c_during_the_undo_waits_for_the_undo_and_the_check(sigint):
    site = Site()
    undone = []

    def undo():
        os.kill(os.getpid(), signal.SIGINT)  # a second Ctrl-C while the kubelet is being started
        undone.append("started")

    with pytest.raises(KeyboardInterrupt):
        with fault(site, "kubelet-stop", "n", lambda: None, undo, 1.0, probe=probe_of(HEALTHY)):
            pass
    assert undone == ["started"]
    assert "recovery-kubelet-stop.txt" in site.files
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@pytest.mark.parametrize("sigint", [signal.SIG_IGN], indirect=True)
def test_a_process_that_ignores_ctrl_c_keeps_ignoring_it_during_the_undo(sigint):
    site = Site()
    undone = []

    def undo():
        os.kill(os.getpid(), signal.SIGINT)
        undone.append("started")

    with fault(site, "kubelet-stop", "n", lambda: None, undo, 1.0, probe=probe_of(HEALTHY)):
        pass
    assert undone == ["started"]
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN


def test_health_is_polled_until_the_cluster_recovered():
    site = Site()
    window = run(site, lambda w: None, probe=probe_of(SICK, SICK, HEALTHY))
    assert window.recovery.healthy and window.recovery.polls == 3
    assert not site.broken


def test_a_cluster_that_does_not_recover_is_broken_and_the_test_fails():
    site = Site()
    with pytest.raises(ClusterBroken, match="did not recover from kubelet-stop on n within 0.2 s: node n Ready=Unknown"):
        run(site, lambda w: None, probe=probe_of(SICK), timeout_s=0.2)
    assert len(site.broken) == 1 and "Ready=Unknown" in site.broken[0]
    assert "NOT RECOVERED" in site.files["recovery-kubelet-stop.txt"]


def test_a_broken_cluster_does_not_hide_the_bodys_own_failure():
    site = Site()

    def body(_):
        raise AssertionError("the measured value")

    with pytest.raises(AssertionError, match="the measured value"):
        run(site, body, probe=probe_of(SICK), timeout_s=0.2)
    assert site.broken  # still replaced


def test_an_undo_that_fails_twice_breaks_the_cluster():
    site = Site(fail_exec={"start"})
    with pytest.raises(ClusterBroken, match="undo of kubelet-stop failed"):
        run(site, lambda w: None)
    assert site.calls.count("n: systemctl start kubelet") == 2
    assert site.broken


def test_node_faults_refuse_the_shared_default_cluster():
    site = Site(profile="default")
    with pytest.raises(FaultRefused, match="never on the shared 'default' cluster"):
        with kubelet_stopped(site):
            pass
    assert site.calls == []


def test_health_talks_to_the_api_on_loopback_only():
    kube = SimpleNamespace(api_client=SimpleNamespace(configuration=SimpleNamespace(host="https://172.18.0.2:6443")))
    with pytest.raises(FaultRefused, match="127.0.0.1 only"):
        health(kube)


def _api(readyz: str, node_ready: str, pod_ready: bool, renewed: float | None = 1000.0):
    cond = SimpleNamespace(type="Ready", status=node_ready)
    node = SimpleNamespace(metadata=SimpleNamespace(name="n"), status=SimpleNamespace(conditions=[cond]))
    pod = SimpleNamespace(metadata=SimpleNamespace(name="etcd-n", deletion_timestamp=None), spec=SimpleNamespace(node_name="n"),
                          status=SimpleNamespace(phase="Running", container_statuses=[SimpleNamespace(ready=pod_ready)]))
    return SimpleNamespace(
        lease_renewed_at=lambda node: renewed,
        api_client=SimpleNamespace(configuration=SimpleNamespace(host="https://127.0.0.1:6443"),
                                   call_api=lambda method, url, **k: SimpleNamespace(read=lambda: None, data=readyz.encode())),
        core=SimpleNamespace(list_node=lambda **k: SimpleNamespace(items=[node]),
                             list_namespaced_pod=lambda ns, **k: SimpleNamespace(items=[pod])))


def test_health_checks_readyz_nodes_and_kube_system_pods():
    assert health(_api("ok", "True", True)) == (["/readyz 'ok'", "node n Ready=True", "kube-system/etcd-n Running 1/1"], [])
    checks, problems = health(_api("ok", "Unknown", False))
    assert problems == ["node n Ready=Unknown", "kube-system/etcd-n Running 0/1"]
    report = check_health("x", _api("ok", "True", True), timeout_s=1)
    assert report.healthy and "kube-system/etcd-n Running 1/1" in report.text()


def test_the_other_rooms_nodes_and_their_pods_are_left_out_of_the_health_check():
    """issue 45: in the rooms cluster another room's node may be down on purpose (its own test's
    fault); a fault of this room must not find the cluster broken for it (and have it replaced)."""
    ready = {"cp": "True", "w-pulls": "True", "w-multi": "Unknown"}
    renewed = {"cp": 1005.0, "w-pulls": 1003.0, "w-multi": 900.0}
    nodes = [SimpleNamespace(metadata=SimpleNamespace(name=n), status=SimpleNamespace(
        conditions=[SimpleNamespace(type="Ready", status=status)])) for n, status in ready.items()]
    pods = [SimpleNamespace(metadata=SimpleNamespace(name=f"kindnet-{n}", deletion_timestamp=None), spec=SimpleNamespace(node_name=n),
                            status=SimpleNamespace(phase="Running", container_statuses=[SimpleNamespace(ready=status == "True")]))
            for n, status in ready.items()]
    kube = SimpleNamespace(
        lease_renewed_at=renewed.get,
        api_client=SimpleNamespace(configuration=SimpleNamespace(host="https://127.0.0.1:6443"),
                                   call_api=lambda method, url, **k: SimpleNamespace(read=lambda: None, data=b"ok")),
        core=SimpleNamespace(list_node=lambda **k: SimpleNamespace(items=nodes),
                             list_namespaced_pod=lambda ns, **k: SimpleNamespace(items=pods)))
    checks, problems = health(kube, since=1000.0, elsewhere=("w-multi",))
    assert problems == []
    assert checks == ["/readyz 'ok'", "not checked, the other rooms' nodes and their pods: w-multi",
                      "node cp Ready=True", "lease of cp renewed +5.0 s after the undo",
                      "node w-pulls Ready=True", "lease of w-pulls renewed +3.0 s after the undo",
                      "kube-system/kindnet-cp Running 1/1", "kube-system/kindnet-w-pulls Running 1/1"]
    assert health(kube, since=1000.0)[1] == ["node w-multi Ready=Unknown", "lease of w-multi renewed -100.0 s after the undo",
                                              "kube-system/kindnet-w-multi Running 0/1"]


def test_a_node_is_healthy_only_with_a_heartbeat_after_the_undo():
    """Right after a kubelet stop the node still reads Ready=True (the grace period): the
    Lease must have been renewed after the undo (seen on a real cluster: a fault never undone
    passed a Ready-only check)."""
    checks, problems = health(_api("ok", "True", True, renewed=990.0), since=1000.0)
    assert problems == ["lease of n renewed -10.0 s after the undo"]
    checks, problems = health(_api("ok", "True", True, renewed=1004.5), since=1000.0)
    assert "lease of n renewed +4.5 s after the undo" in checks and not problems
    assert health(_api("ok", "True", True, renewed=None), since=1000.0)[1] == ["lease of n renewed never"]


@pytest.mark.parametrize("make, inject, undo", [
    (kubelet_killed, "systemctl kill -s KILL kubelet", "systemctl start kubelet"),
    (containerd_stopped, "systemctl stop containerd", "systemctl start containerd"),
    (apiserver_down, "mv /etc/kubernetes/manifests/kube-apiserver.yaml /etc/kubernetes/kube-apiserver.yaml.parked",
     "sh -c test -f /etc/kubernetes/manifests/kube-apiserver.yaml || mv /etc/kubernetes/kube-apiserver.yaml.parked "
     "/etc/kubernetes/manifests/kube-apiserver.yaml"),
])
def test_component_faults_exec_into_the_node(monkeypatch, make, inject, undo):
    monkeypatch.setattr(core, "health", lambda kube, since=None, elsewhere=(): HEALTHY)
    site = Site()
    with make(site, recovery_timeout_s=1):
        pass
    assert site.calls == [f"c-control-plane: {inject}", f"c-control-plane: {undo}"]


def test_the_test_taint_is_added_and_always_removed(monkeypatch):
    monkeypatch.setattr(core, "health", lambda kube, since=None, elsewhere=(): HEALTHY)
    node = {"spec": {"taints": [{"key": "other", "effect": "NoSchedule"}]}}
    patches = []

    def patch(kind, name, ns, body, patch_type="strategic"):
        patches.append(body)
        node["spec"]["taints"] = body["spec"]["taints"] or []
        return node

    site = Site(profile="default")  # a test taint may run on the shared cluster
    site.kube.get = lambda kind, name, ns: json.loads(json.dumps(node))
    site.kube.patch = patch
    with pytest.raises(AssertionError):
        with node_tainted(site, "n", recovery_timeout_s=1):
            assert TEST_TAINT in node["spec"]["taints"]
            raise AssertionError("the body failed")
    assert node["spec"]["taints"] == [{"key": "other", "effect": "NoSchedule"}]
    assert len(patches) == 2


def test_a_gap_inside_a_fault_window_is_shown_as_expected():
    gap = Change(130.0, "Recorder", "GAP", "Pod", {"from": 110.0, "to": 130.0, "error": "refused"})
    window = Change(140.0, FAULT_KIND, "FAULT", "apiserver-down", {"from": 105.0, "to": 140.0, "node": "n"})
    table = rows([gap, window], t0=100.0)
    assert [(r.t, r.subject, r.what) for r in table] == [
        (5.0, "fault/apiserver-down", "injected on n"), (10.0, "recorder/Pod", "GAP 20.0 s"),
        (40.0, "fault/apiserver-down", "undone")]
    assert "expected: inside fault apiserver-down" in table[1].detail


def test_a_broken_cluster_is_marked_for_recreation(tmp_path, monkeypatch):
    monkeypatch.setattr("e2e.cluster.kind.STATE_DIR", tmp_path)
    kind = Kind("ple2e-x", kind="/bin/true")
    kind.state_file.write_text(json.dumps({"owner": "run-1"}))
    kind.mark_broken("did not recover from kubelet-stop")
    assert json.loads(kind.state_file.read_text()) == {"owner": "run-1", "broken": "did not recover from kubelet-stop"}


def test_ensure_recreates_a_broken_cluster_instead_of_reusing_it(tmp_path, monkeypatch):
    monkeypatch.setattr("e2e.cluster.kind.STATE_DIR", tmp_path)
    kind = Kind("ple2e-x", kind="/bin/true")
    kind.state_file.write_text(json.dumps({"owner": "run-1", "broken": "did not recover"}))
    done = []
    clusters = ["ple2e-x"]

    def fake_kind(*args, timeout=None):
        done.append(args[:2])
        if args[:2] == ("delete", "cluster"):
            clusters.clear()
        return " ".join(clusters) if args == ("get", "clusters") else ""

    monkeypatch.setattr(kind, "_kind", fake_kind)
    monkeypatch.setattr(kind, "_nodes_running", lambda: True)
    monkeypatch.setattr(kind, "_create", lambda profile, run_id: (done.append(("create", run_id)), clusters.append("ple2e-x")))
    for step in ("write_kubeconfig", "wire_nodes", "_wait_ready"):
        monkeypatch.setattr(kind, step, lambda *a: None)
    profile = SimpleNamespace(cluster_name="ple2e-x", name="fast-lifecycle", config=lambda: {})
    kind.ensure(profile, "run-2")
    assert ("delete", "cluster") in done and ("create", "run-2") in done


def test_replace_broken_exports_logs_marks_and_forgets_the_cluster(tmp_path):
    from e2e.plugin.clusters import Clusters

    calls = []
    kind = SimpleNamespace(name="ple2e-x", export_logs=lambda dest: calls.append(("export", dest.name)),
                           mark_broken=lambda reason: calls.append(("mark", reason)),
                           delete_unless_used=lambda: calls.append(("delete",)) or True)
    clusters = Clusters(SimpleNamespace())
    clusters._ready[("fast-lifecycle", 2)] = SimpleNamespace(kind=kind)
    clusters._ready[("fast-lifecycle", 1)] = other = SimpleNamespace(kind=None)
    clusters.replace_broken("fast-lifecycle", 2, "node NotReady", tmp_path)
    assert calls == [("export", "ple2e-x-broken"), ("mark", "node NotReady"), ("delete",)]
    assert ("fast-lifecycle", 2) not in clusters._ready  # the next test on that copy gets a new cluster
    assert clusters._ready[("fast-lifecycle", 1)] is other  # the profile's other copies stay


def test_a_broken_clusters_namespace_is_not_cleaned(monkeypatch):
    """After the cluster was handed over as broken, the test's teardown touches nothing on it."""
    from e2e.run.scenario import Scenario

    calls = []
    kube = SimpleNamespace(release_finalizers=lambda *a: calls.append("release"), delete_namespace=lambda ns: calls.append("delete"))
    sc = Scenario(kube, "ns", SimpleNamespace(), SimpleNamespace(), None, 37, 1, profile="fast-lifecycle",
                  on_broken=lambda reason: calls.append(f"replace: {reason}"))
    sc.cluster_broken("node NotReady")
    sc.clean_up()
    assert calls == ["replace: node NotReady"]
