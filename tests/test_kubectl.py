"""e2e.evidence.kubectl: a command's lines kept with host times as they come, its exit code and
timeout; finding the cluster's kubectl (E2E_KUBECTL, a copy out of the kind node) and
refusing one of another version — with fake kubectl scripts, no cluster."""

from __future__ import annotations

import re
import stat
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from e2e.evidence import kubectl as kubectl_module
from e2e.evidence.kubectl import (TABLE_ACCEPT, KubectlNotFound, Line, Transcript, background, kubectl_background, kubectl_flags,
                                  kubectl_for, run, server_columns, table_rows)
from e2e.base.waiting import WaitTimeout


def fake_kubectl(path: Path, version: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n"
                    f"echo '{{\"clientVersion\": {{\"gitVersion\": \"{version}\"}}}}'\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_lines_are_kept_per_stream_with_the_time_they_came():
    # lines of two streams 0.2 s apart: their order is the order they came (closer, two reader
    # threads may see them either way)
    t = run(["sh", "-c", "echo first; sleep 0.2; echo oops >&2; sleep 0.5; echo second; exit 3"], timeout_s=10)
    assert [(ln.stream, ln.text) for ln in t.lines] == [("stdout", "first"), ("stderr", "oops"), ("stdout", "second")]
    assert t.exit_code == 3
    gap = t.stdout()[1].at - t.stdout()[0].at
    assert 0.6 <= gap < 2.5, gap
    assert t.started_at <= t.lines[0].at <= t.ended_at


def test_a_command_past_its_timeout_is_killed_and_has_no_exit_code():
    started = time.monotonic()
    t = run(["sh", "-c", "echo started; sleep 30"], timeout_s=0.5)
    assert time.monotonic() - started < 10
    assert t.exit_code is None
    assert [ln.text for ln in t.lines] == ["started"]


def test_matching_and_the_report_text():
    t = Transcript(["kubectl", "drain", "n"], started_at=100.0, exit_code=1,
                   lines=[Line(100.5, "stdout", "node/n cordoned"), Line(105.75, "stderr", "error when evicting pods/x")])
    assert [ln.text for ln in t.matching("error when", stream="stderr")] == ["error when evicting pods/x"]
    assert t.matching("error when", stream="stdout") == []
    text = t.to_text()
    assert "$ kubectl drain n" in text and "exit code 1" in text
    assert "   +5.750 stderr error when evicting pods/x" in text


def test_e2e_kubectl_of_the_clusters_version_is_used(tmp_path, monkeypatch):
    monkeypatch.setenv("E2E_KUBECTL", str(fake_kubectl(tmp_path / "kubectl", "v1.37.2")))
    assert kubectl_for("v1.37.2", kind=None, cache_dir=tmp_path / "cache") == tmp_path / "kubectl"


def test_a_kubectl_of_another_version_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("E2E_KUBECTL", str(fake_kubectl(tmp_path / "kubectl", "v1.34.4")))
    with pytest.raises(KubectlNotFound, match="kubectl v1.34.4, the cluster is v1.37.2"):
        kubectl_for("v1.37.2", kind=None, cache_dir=tmp_path / "cache")


def test_without_a_kind_node_or_e2e_kubectl_it_says_what_to_set(tmp_path, monkeypatch):
    monkeypatch.delenv("E2E_KUBECTL", raising=False)
    with pytest.raises(KubectlNotFound, match="set E2E_KUBECTL .*no kubectl on PATH or in the offline cache"):
        kubectl_for("v1.37.2", kind=None, cache_dir=tmp_path / "cache", candidates=[])


def test_a_kubeconfig_run_takes_the_first_kubectl_of_the_clusters_version_it_finds(tmp_path, monkeypatch):
    """A foreign run without E2E_KUBECTL skipped DR-2 and DR-4 although this machine's offline
    build had kubectl v1.37.2 (PATH's was v1.32.4)."""
    monkeypatch.delenv("E2E_KUBECTL", raising=False)
    old, right = fake_kubectl(tmp_path / "path" / "kubectl", "v1.32.4"), fake_kubectl(tmp_path / "offline" / "kubectl", "v1.37.2")
    assert kubectl_for("v1.37.2", kind=None, cache_dir=tmp_path / "cache", candidates=[old, right]) == right
    with pytest.raises(KubectlNotFound, match=re.escape(f"tried: {old} is v1.32.4)")):
        kubectl_for("v1.37.2", kind=None, cache_dir=tmp_path / "cache", candidates=[old])


def test_the_candidates_are_path_then_the_offline_cache_of_that_version(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    fake_kubectl(bin_dir / "kubectl", "v1.32.4")
    built = fake_kubectl(tmp_path / "cache" / "offline" / "kubernetes-v1.37.2-7b64cd1a3a" / "kubectl", "v1.37.2")
    fake_kubectl(tmp_path / "cache" / "offline" / "kubernetes-v1.36.3-0123456789" / "kubectl", "v1.36.3")
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("E2E_CACHE", str(tmp_path / "cache"))
    assert kubectl_module.kubectl_candidates("v1.37.2") == [bin_dir / "kubectl", built]


def test_the_nodes_kubectl_is_copied_once_and_cached_per_version(tmp_path, monkeypatch):
    monkeypatch.delenv("E2E_KUBECTL", raising=False)
    copies = []

    class FakeKind:
        def copy_from_node(self, src: str, dest: Path) -> None:
            copies.append(src)
            fake_kubectl(dest, "v1.37.2")

    first = kubectl_for("v1.37.2", kind=FakeKind(), cache_dir=tmp_path)
    second = kubectl_for("v1.37.2", kind=FakeKind(), cache_dir=tmp_path)
    assert first == second == tmp_path / "v1.37.2" / "kubectl"
    assert copies == [kubectl_module.NODE_KUBECTL]


# a pod's Table as the API server answers kubectl (v1.37.2, server-side printing of printPod)
POD_TABLE = {
    "kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": "1234"},
    "columnDefinitions": [
        {"name": n, "type": t, "format": f, "description": "", "priority": p} for n, t, f, p in [
            ("Name", "string", "name", 0), ("Ready", "string", "", 0), ("Status", "string", "", 0),
            ("Restarts", "string", "", 0), ("Age", "string", "", 0), ("IP", "string", "", 1),
            ("Node", "string", "", 1), ("Nominated Node", "string", "", 1), ("Readiness Gates", "string", "", 1)]],
    "rows": [{"cells": ["web", "0/1", "Init:CrashLoopBackOff", "3 (12s ago)", "61s", "10.244.0.7", "kind-control-plane",
                        "<none>", "<none>"],
              "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": {"name": "web"}}}],
}


def test_a_table_row_reads_by_column_name():
    (row,) = table_rows(POD_TABLE)
    assert (row["Ready"], row["Status"], row["Restarts"], row["Node"]) == ("0/1", "Init:CrashLoopBackOff", "3 (12s ago)",
                                                                          "kind-control-plane")
    assert table_rows({"kind": "Table", "columnDefinitions": [], "rows": []}) == []


def test_server_columns_asks_the_api_server_for_kubectls_table():
    asked = []

    def get(**kwargs):
        asked.append(kwargs)
        return SimpleNamespace(to_dict=lambda: POD_TABLE)

    kube = SimpleNamespace(resource=lambda kind, api_version=None: SimpleNamespace(namespaced=True, get=get))
    row = server_columns(SimpleNamespace(kube=kube, namespace="ns-1"), "Pod", "web")
    assert row["Status"] == "Init:CrashLoopBackOff"
    assert asked == [{"name": "web", "namespace": "ns-1", "header_params": {"Accept": TABLE_ACCEPT}}]
    assert TABLE_ACCEPT == "application/json;as=Table;v=v1;g=meta.k8s.io"


# -- a command beside the test (issue 41: kubectl drain racing an eviction needed a hand-written
# Popen and reader thread) -------------------------------------------------------------------


def test_a_background_commands_lines_come_while_the_block_acts():
    with background(["sh", "-c", "echo ready; sleep 1; echo done; exit 4"], timeout_s=10) as bg:
        ready = bg.wait_for_line(r"^ready$", timeout_s=5)
        assert bg.running()  # the test acts here while it runs
        acted_at = time.time()
        assert [ln.text for ln in bg.lines()] == ["ready"]
    t = bg.transcript
    assert t.exit_code == 4
    assert [ln.text for ln in t.stdout()] == ["ready", "done"]
    assert ready.at <= acted_at <= t.stdout()[1].at <= t.ended_at  # the receive times place each line


def test_a_background_command_past_its_timeout_is_killed_with_what_it_started():
    started = time.monotonic()
    with background(["sh", "-c", "sleep 60 & echo $!; wait"], timeout_s=1) as bg:
        child = int(bg.wait_for_line(r"^\d+$", timeout_s=5).text)
    assert time.monotonic() - started < 10
    assert bg.transcript.exit_code is None and not bg.running()
    assert gone(child)


@pytest.mark.parametrize("failure", [AssertionError("a value failed"), KeyboardInterrupt()])
def test_a_failing_block_kills_the_command_at_once(failure):
    started = time.monotonic()
    with pytest.raises(type(failure)):
        with background(["sh", "-c", "echo up; sleep 60"], timeout_s=60) as bg:
            bg.wait_for_line("up", timeout_s=5)
            raise failure
    assert time.monotonic() - started < 10  # not its 60 s
    assert bg.transcript.exit_code is None and gone(bg.pid)
    assert [ln.text for ln in bg.transcript.lines] == ["up"]


def test_stop_ends_it_with_sigterm_then_sigkill():
    with background(["sh", "-c", "echo up; sleep 60"], timeout_s=60) as bg:
        bg.wait_for_line("up", timeout_s=5)
        assert bg.stop().exit_code == -15
    assert bg.transcript.exit_code == -15  # the block's end keeps what stop found
    with background(["sh", "-c", "trap '' TERM; echo up; while :; do sleep 0.1; done"], timeout_s=60) as stubborn:
        stubborn.wait_for_line("up", timeout_s=5)
        assert stubborn.stop(grace_s=0.5).exit_code == -9


def test_waiting_for_a_line_that_never_comes_says_why():
    with background(["sh", "-c", "echo one; exit 2"], timeout_s=10) as bg:
        with pytest.raises(WaitTimeout, match=r"(?s)ended \(exit code 2\) without one.*stdout one"):
            bg.wait_for_line("two", timeout_s=5)
    with background(["sh", "-c", "echo one; sleep 60"], timeout_s=60) as bg:
        with pytest.raises(WaitTimeout, match="timed out after 0.3 s .* still running"):
            bg.wait_for_line("two", timeout_s=0.3)
        bg.stop()


class FakeKube:
    kubeconfig, context = "/tmp/c.kubeconfig", "kind-c"


def test_kubectl_background_uses_the_clusters_kubeconfig_and_marks_the_timeline(tmp_path):
    kubectl = tmp_path / "kubectl"
    kubectl.write_text('#!/bin/sh\necho "args: $*"\necho "evicting pod ns/web"\nsleep 1\necho "pod/web evicted"\n')
    kubectl.chmod(0o755)
    sc = SimpleNamespace(kube=FakeKube(), t0=time.time() - 10, marks=[], files={})
    sc.mark = lambda when, label: sc.marks.append((when, label))
    sc.add_file = lambda name, content: sc.files.__setitem__(name, content)
    with kubectl_background(sc, str(kubectl), "drain", "n1", "--timeout=5s", timeout_s=10, mark=r"^evicting pod|evicted$") as drain:
        assert drain.wait_for_line("evicting", 5).text == "evicting pod ns/web"
        assert sc.files["kubectl drain"]().endswith("# (still running)")  # a failure's report shows it so far
    t = drain.transcript
    assert t.stdout()[0].text == "args: --kubeconfig /tmp/c.kubeconfig --context kind-c drain n1 --timeout=5s"
    sc.marks.sort()  # the timeline orders them by time (the reader thread marks a line as it comes)
    assert [label for _, label in sc.marks] == ["kubectl drain started", "kubectl drain: evicting pod ns/web",
                                                 "kubectl drain: pod/web evicted", "kubectl drain ended (exit code 0)"]
    assert [at for at, _ in sc.marks] == [t.started_at, t.stdout()[1].at, t.stdout()[2].at, t.ended_at]
    report = sc.files["kubectl drain"]()  # read when the report is written: times on the test's timeline
    assert f"times: s after {sc.t0:.3f}" in report and f"{t.stdout()[1].at - sc.t0:+9.3f} stdout evicting pod ns/web" in report
    with pytest.raises(ValueError, match="needs kubectl's arguments"):
        with kubectl_background(sc, str(kubectl), timeout_s=10):
            pass


def gone(pid: int) -> bool:
    """No such process, or a zombie (killed, waiting for init to reap it)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_kubectl_flags_name_the_clients_own_kubeconfig_and_context():
    # a --kubeconfig run's own file and context, not a kind cluster's (DR-2, DR-4 run kubectl with them)
    assert kubectl_flags(FakeKube()) == ["--kubeconfig", "/tmp/c.kubeconfig", "--context", "kind-c"]
    assert kubectl_flags(SimpleNamespace(kubeconfig=Path("/k/kind.kubeconfig"), context=None)) == ["--kubeconfig", "/k/kind.kubeconfig"]
    assert kubectl_flags(SimpleNamespace(kubeconfig=None, context=None)) == []  # the client's default: kubectl's too
