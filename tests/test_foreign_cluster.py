"""hack/foreign_cluster.py (``make foreign-cluster`` / ``make foreign-cluster-delete``, issue 42 item 6):
a missing kind or Docker is said in one line with exit 2, not a traceback (seen: ``make
foreign-cluster-delete`` in a fresh worktree, no kind on PATH and no REPORTS/profile.env)."""

from __future__ import annotations

from helpers import hack_module

fc = hack_module("foreign_cluster")


def test_no_kind_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("E2E_STATE_DIR", str(tmp_path))
    monkeypatch.delenv("E2E_KIND", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no kind, no docker
    assert fc.main(["delete", "--dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("foreign-cluster delete: ") and "kind not found" in err and "Traceback" not in err
