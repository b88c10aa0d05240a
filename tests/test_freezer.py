"""The node pause's freeze from inside a node (e2e.cluster.freezer): its modes and the shell text
the node runs, directly (``sh -c``) and through a transient systemd unit (``systemd-run``). What
it does in a node is tried on a real one (docs/your-own-cluster.md, NF-4); no cluster here."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from e2e.cluster import freezer


@pytest.mark.parametrize("mode", freezer.MODES)
def test_each_mode_runs_the_one_script_with_its_mode(mode):
    assert freezer.argv(mode) == ("sh", "-c", freezer.SCRIPT, "sh", mode)


def test_an_unknown_mode_is_a_clear_error():
    with pytest.raises(ValueError, match=r"freezer mode must be one of \('check', 'freeze', 'thaw', 'state'\), not 'pause'"):
        freezer.argv("pause")


@pytest.mark.skipif(not shutil.which("sh"), reason="needs a POSIX sh")
def test_the_script_is_valid_posix_sh():
    r = subprocess.run(["sh", "-n", "-c", freezer.SCRIPT], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_the_script_survives_systemd_runs_own_expansion():
    # systemd 252 (a kind node) rewrites a transient unit's ExecStart: "$$" becomes "$" and "${NAME}"
    # its environment's value (measured: `systemd-run -- sh -c 'x=1; echo a$x b$$x'` logged "a1 b1");
    # the armed thaw runs through systemd-run, the suite's thaw through a plain exec: the same text must
    # mean the same to both
    assert "$$" not in freezer.SCRIPT and "${" not in freezer.SCRIPT


def test_the_freeze_cgroup_is_the_one_the_script_makes_and_looks_for():
    assert f'own="$root/{freezer.FREEZE_CGROUP}"' in freezer.SCRIPT and "%(name)s" not in freezer.SCRIPT
