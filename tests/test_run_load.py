"""hack/run_load.py (issue 45's table: the host's load over a run): samples, their summary, the
printed line, and a real command wrapped (its exit status passed on, the JSON written)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from helpers import hack_module

rl = hack_module("run_load")

PSI = "some avg10={} avg60=3.10 avg300=1.05 total=123456\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
# /proc/stat: user nice system idle iowait irq softirq steal guest guest_nice
STAT = "cpu  {} 0 100 {} 10 0 5 0 0 0\ncpu0 1 0 1 1 0 0 0 0 0 0\nintr 1\n"


def _read(pressure: str, user: int, idle: int):
    files = {rl.PSI_CPU: PSI.format(pressure), rl.idle_cpu.PROC_STAT: STAT.format(user, idle)}

    def read(path: str) -> str:
        if path not in files:
            raise FileNotFoundError(path)
        return files[path]
    return read


def test_a_sample_reads_pressure_ticks_and_the_kind_nodes():
    s = rl.take(_read("12.50", 1000, 5000), lambda: (["ple2e-a", "ple2e-a", "ple2e-b"], ""), clock=lambda: 7.0)
    assert (s.t, s.pressure, s.nodes, s.docker) == (7.0, 12.5, ["ple2e-a", "ple2e-a", "ple2e-b"], "")
    assert s.stat == "cpu  1000 0 100 5000 10 0 5 0 0 0"
    no_psi = rl.take(lambda path: STAT.format(1, 2) if path == rl.idle_cpu.PROC_STAT else (_ for _ in ()).throw(OSError(path)),
                     lambda: ([], "RuntimeError: docker ps: no daemon"))
    assert (no_psi.pressure, no_psi.nodes, no_psi.docker) == (None, [], "RuntimeError: docker ps: no daemon")


def test_the_summary_gives_the_tables_columns():
    samples = [rl.take(_read(p, user, idle), lambda n=n: (n, ""), clock=lambda: 0.0) for p, user, idle, n in [
        ("5.00", 1000, 5000, ["a", "a"]),
        ("40.00", 1600, 5300, ["a", "a", "b", "c", "c", "c"]),
        ("20.00", 2000, 6000, ["c", "c", "c"]),
    ]]
    samples[1].pressure = None  # an unread pressure file: left out of the spread
    figures = rl.summary(samples, 1432.04, 1)
    # idle 1000 of 1000 + 1000 ticks (user 1000, idle 1000; system, iowait, softirq unchanged)
    assert figures == {"wall_s": 1432.0, "exit": 1, "cpu_idle_percent": 50.0,
                       "pressure": {"median": 12.5, "max": 20.0, "samples": 2},
                       "clusters_max": 3, "nodes_max": 6, "samples": 3}
    assert rl.line(figures) == ("wall 1432 s, exit 1; CPU idle 50.0 %; CPU pressure (some avg10) median 12.5 %, "
                                "highest 20.0 % (2 samples); kind clusters alive at most 3, nodes 6")


def test_a_wrapped_command_keeps_its_exit_status_and_the_figures_are_written(tmp_path, monkeypatch, capsys):
    if not Path(rl.PSI_CPU).exists():
        pytest.skip(f"no {rl.PSI_CPU} on this host")
    monkeypatch.setattr(rl, "kind_nodes", lambda: (["ple2e-x"], ""))  # no docker in the framework's tests
    out = tmp_path / "load.json"
    status = rl.main(["--out", str(out), "--interval", "0.2", "--", sys.executable, "-c",
                      "import time, sys; time.sleep(0.7); sys.exit(3)"])
    assert status == 3
    data = json.loads(out.read_text())
    assert data["exit"] == 3 and data["wall_s"] >= 0.7 and data["command"][-1].endswith("sys.exit(3)")
    assert data["samples"] == len(data["series"]) >= 3 and (data["clusters_max"], data["nodes_max"]) == (1, 1)
    printed = capsys.readouterr().out
    assert printed.startswith("run-load: wall ") and ", exit 3; CPU idle " in printed and printed.rstrip().endswith(f"({out})")


def test_no_command_is_a_usage_error(tmp_path):
    with pytest.raises(SystemExit) as e:
        rl.main(["--out", str(tmp_path / "x.json"), "--"])
    assert e.value.code == 2


def test_a_ctrl_c_while_a_sample_is_taken_still_writes_the_figures(tmp_path, monkeypatch):
    """A Ctrl-C reaches this process and the command at once; one arriving during a sample's
    ``docker ps`` (not during the wait for the command) must not end this process before the
    command has ended and the summary is written (module doc)."""
    calls = []

    def nodes():
        calls.append(1)
        if len(calls) == 2:  # the first sample during the command
            raise KeyboardInterrupt
        return ["ple2e-x"], ""
    monkeypatch.setattr(rl, "kind_nodes", nodes)
    out = tmp_path / "load.json"
    status = rl.main(["--out", str(out), "--interval", "0.2", "--", sys.executable, "-c",
                      "import time, sys; time.sleep(1.5); sys.exit(3)"])
    assert status == 3 and len(calls) >= 3  # sampled on after the interrupted one
    data = json.loads(out.read_text())
    assert data["exit"] == 3 and data["samples"] == len(calls) - 1  # the interrupted sample left out
