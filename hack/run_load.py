"""The host's load over one command — a run of the suite — for the table of issue 45 (sequential
against concurrent runs): ``python hack/run_load.py --out FILE -- COMMAND …`` runs the command and
samples, every ``--interval`` seconds (10) until it ends:

- the host's ``/proc/pressure/cpu`` ``some avg10`` (%): its median and highest over the samples;
- its CPU ticks (``/proc/stat``): the CPU idle (%) from the first sample to the last, as vmstat's
  ``id`` (:func:`idle_cpu.idle_percent`);
- the kind node containers running (``docker ps`` with kind's label ``io.x-k8s.kind.cluster``):
  the most clusters and the most nodes alive at once.

At the end it writes the samples and their summary as JSON to ``--out`` and prints one line::

    wall 1432 s, exit 0; CPU idle 41.3 %; CPU pressure (some avg10) median 22.1 %, highest 58.0 % (143 samples); kind clusters alive at most 3, nodes 8

Its exit status is the command's. A Ctrl-C reaches the command with this process (one process
group) and a SIGTERM sent to this process is passed on (:func:`e2e.cli.wirecheck.run_command`):
either way the summary is still written once the command has ended (a sample the Ctrl-C
cut short left out). As ``E2E_WRAP`` of ``make
e2e`` it wraps the scenarios' pytest alone (the set-up and builds before it are not counted)::

    make e2e E2E_WRAP=".venv/bin/python hack/run_load.py --out load-seq.json --"

A sample whose ``docker ps`` fails counts no node (said in its ``docker`` field); one whose pressure
file cannot be read has no pressure (the summary's count says how many had one).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

from e2e.cli.wirecheck import run_command
from e2e.record.hostload import PSI_CPU, Reader, read_text

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("idle_cpu", ROOT / "hack" / "idle_cpu.py")
idle_cpu = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
sys.modules["idle_cpu"] = idle_cpu
_spec.loader.exec_module(idle_cpu)  # type: ignore[union-attr]

# Seconds between two samples (avg10 is itself a 10 s average)
INTERVAL_S = 10.0


@dataclass
class Sample:
    """One sample: ``t`` (epoch s), ``pressure`` the host's ``some avg10`` (%; None: unread),
    ``stat`` the ``cpu`` line of ``/proc/stat``, ``nodes`` the kind cluster of each running node
    container, ``docker`` why ``docker ps`` failed (``""``: it did not)."""

    t: float
    pressure: float | None
    stat: str
    nodes: list[str]
    docker: str = ""


def kind_nodes() -> tuple[list[str], str]:
    """The kind cluster of each running node container (kind's label, as ``hack/idle_cpu.py``
    reads it), and ``""``; or ``[]`` and why ``docker ps`` failed."""
    try:
        return idle_cpu.running_nodes(), ""
    except (OSError, RuntimeError, subprocess.TimeoutExpired) as e:
        return [], f"{type(e).__name__}: {e}"[:200]


def take(read: Reader = read_text, nodes: Callable[[], tuple[list[str], str]] | None = None,
         clock: Callable[[], float] = time.time) -> Sample:
    """A :class:`Sample` now (``nodes``: :func:`kind_nodes`)."""
    try:
        pressure: float | None = idle_cpu.psi_some_avg10(read(PSI_CPU))
    except (OSError, ValueError):
        pressure = None
    stat = next(line for line in read(idle_cpu.PROC_STAT).splitlines() if line.startswith("cpu "))
    found, why = (nodes or kind_nodes)()
    return Sample(clock(), pressure, stat, found, why)


def summary(samples: list[Sample], wall_s: float, status: int) -> dict:
    """What the table of issue 45 takes from the samples (at least two): ``wall_s``, ``exit``
    (the command's status), ``cpu_idle_percent`` from the first sample to the last, ``pressure``
    (:func:`idle_cpu.spread` of the samples' pressure), ``clusters_max`` and ``nodes_max`` (alive
    at once), ``samples``."""
    pressures = [s.pressure for s in samples if s.pressure is not None]
    return {"wall_s": round(wall_s, 1), "exit": status,
            "cpu_idle_percent": round(idle_cpu.idle_percent(samples[0].stat, samples[-1].stat), 1),
            "pressure": idle_cpu.spread(pressures),
            "clusters_max": max(len(set(s.nodes)) for s in samples), "nodes_max": max(len(s.nodes) for s in samples),
            "samples": len(samples)}


def line(figures: dict) -> str:
    """The one line printed at the end (module doc)."""
    p = figures["pressure"]
    pressure = (f"median {p['median']:.1f} %, highest {p['max']:.1f} % ({p['samples']} samples)" if p["samples"]
                else "not read")
    return (f"wall {figures['wall_s']:.0f} s, exit {figures['exit']}; CPU idle {figures['cpu_idle_percent']:.1f} %; "
            f"CPU pressure (some avg10) {pressure}; kind clusters alive at most {figures['clusters_max']}, "
            f"nodes {figures['nodes_max']}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True, help="the JSON file written at the end")
    p.add_argument("--interval", type=float, default=INTERVAL_S, help="seconds between two samples (10)")
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND …: what to run")
    a = p.parse_args(argv)
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not command:
        p.error("give the command after --")
    samples = [take()]
    started = time.monotonic()

    def poll() -> None:
        if time.time() - samples[-1].t >= a.interval:
            try:
                samples.append(take())
            except KeyboardInterrupt:  # the command got the same Ctrl-C: wait for its end, that sample left out
                pass

    status = run_command(command, poll)
    wall_s = time.monotonic() - started
    samples.append(take())
    figures = summary(samples, wall_s, status)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps({"command": command, **figures, "series": [asdict(s) for s in samples]}, indent=1) + "\n")
    print(f"run-load: {line(figures)} ({a.out})", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
