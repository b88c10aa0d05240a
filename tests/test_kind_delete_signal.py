"""A Ctrl-C to the run's process group during its clean-up does not cut ``kind delete`` short
(e2e.cluster.kind.Kind.delete): the suite ignores that signal while it cleans up
(e2e.plugin.signals), and kind must not die of it half-way, leaving the cluster's state files
(seen in make interrupt-check: SIGINT 0.9 s after the last test, exit 0, the cluster's
``.json``, ``.kind-config.yaml`` and ``.kubeconfig`` left)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_kind_delete_outlives_a_ctrl_c_to_the_process_group(tmp_path):
    fake_kind = tmp_path / "kind"
    done = tmp_path / "deleted"
    # a kind that takes 1.5 s to delete; killed by SIGINT (its default action) it never writes `done`
    fake_kind.write_text(f"#!/bin/sh\nsleep 1.5\necho ok > {done}\n")
    fake_kind.chmod(0o755)
    state = tmp_path / "state"
    script = textwrap.dedent(f"""
        import signal, sys
        sys.path.insert(0, {str(ROOT)!r})
        from e2e.cluster import kind
        # the suite, cleaning up: a handler that reports and ignores (e2e.plugin.signals), which a
        # child's exec resets to the default action (SIG_IGN would be inherited instead)
        signal.signal(signal.SIGINT, lambda *a: None)
        k = kind.Kind("ple2e-x", {str(fake_kind)!r})
        for suffix in (".json", ".kubeconfig", ".kind-config.yaml"):
            (kind.STATE_DIR / f"ple2e-x{{suffix}}").write_text("x")
        print("deleting", flush=True)
        k.delete()
        print("deleted", flush=True)
    """)
    env = {**os.environ, "E2E_STATE_DIR": str(state)}
    # a group of its own, as a terminal's foreground job: SIGINT goes to every process in it
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, text=True,
                            start_new_session=True)
    assert proc.stdout.readline().strip() == "deleting"
    time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGINT)
    out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 0, out
    assert done.exists(), "kind delete was cut by the group's SIGINT"
    assert not any(state.glob("ple2e-x.json")) and not any(state.glob("ple2e-x.kube*"))


def test_a_half_created_cluster_is_deleted_until_no_node_shows_up(monkeypatch, tmp_path):
    """make interrupt-check: SIGINT 1.4 s into `kind create` left the control-plane container —
    Docker created it after the one `kind delete`, which had found nothing."""
    from e2e.cluster import kind

    calls: list[str] = []
    containers: list[list[str]] = [[], ["c1"], [], [], [], [], [], [], [], []]  # appears after the first delete

    def run(cmd, timeout=None, input=None, env=None, detached=False):
        if cmd[:2] == ["docker", "ps"]:
            out = containers.pop(0) if containers else []
            return subprocess.CompletedProcess(cmd, 0, "\n".join(out), "")
        calls.append(" ".join(cmd[1:3]) + (" detached" if detached else ""))
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(kind, "STATE_DIR", tmp_path)
    monkeypatch.setattr(kind, "_run", run)
    monkeypatch.setattr(kind.time, "sleep", lambda s: None)
    k = kind.Kind("ple2e-half", kind="kind")
    k._remove_half_created(quiet_s=0.05, limit_s=5)
    assert calls == ["delete cluster detached", "delete cluster detached"]
