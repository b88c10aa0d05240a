"""Faults of the suite's registry container (:mod:`e2e.cluster.registry`), each a
:func:`e2e.faults.core.fault` (inject, window, always undo, health check):

=========================  ==========================================================  ==========================
fault (window name)        inject                                                      undo
=========================  ==========================================================  ==========================
``registry-stop``          ``docker stop -t 1`` of the registry container (its         ``docker start``, then the
                           process ends: open connections are closed, new ones         registry answers ``/v2/``
                           refused)                                                    again
``registry-pause``         ``docker pause`` (the cgroup freezer: connections stay      ``docker unpause``
                           open, nothing is answered — a stalled registry)
``registry-throttle``      a token-bucket qdisc on the registry's own ``eth0``         ``tc qdisc del`` of it
                           (its netns, entered from the host with ``nsenter``):
                           what it sends to the nodes leaves at ``rate``
=========================  ==========================================================  ==========================

They touch the registry container only, never a node: they may run on the shared default
cluster (``shared_ok``), and the health check is the cluster's plus the registry's own answer.
"""

from __future__ import annotations

import subprocess
from contextlib import contextmanager
from typing import Iterator

from ..cluster.registry import Registry, RegistryError
from .core import RECOVERY_TIMEOUT_S, FaultSite, FaultWindow, fault, health

# The registry's interface on the suite's network, inside its container.
IFACE = "eth0"
# tbf: bucket size and queue latency of the throttle (a few full-size frames; a queue long
# enough that nothing is dropped at the rate asked for: the transfer is slowed, not cut).
BURST = "32kbit"
LATENCY = "2s"


def _run(*cmd: str, timeout: float = 60) -> subprocess.CompletedProcess:
    r = subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise RegistryError(f"{' '.join(cmd)}: {r.stderr.strip() or r.stdout.strip()}")
    return r


def _probe(reg: Registry):
    def probe(kube) -> tuple[list[str], list[str]]:
        checks, problems = health(kube)
        status = reg.ping()
        (checks if status in (200, 401) else problems).append(f"registry {reg.name} GET /v2/ -> {status}")
        return checks, problems
    return probe


@contextmanager
def registry_stopped(site: FaultSite, reg: Registry, recovery_timeout_s: float = RECOVERY_TIMEOUT_S) -> Iterator[FaultWindow]:
    def undo() -> None:
        _run("docker", "start", reg.name)
        reg.wait_ready()  # the published port is read again: Docker may give a new one

    with fault(site, "registry-stop", reg.name, lambda: _run("docker", "stop", "-t", "1", reg.name), undo,
               recovery_timeout_s, shared_ok=True, probe=_probe(reg)) as window:
        yield window


@contextmanager
def registry_paused(site: FaultSite, reg: Registry, recovery_timeout_s: float = RECOVERY_TIMEOUT_S) -> Iterator[FaultWindow]:
    with fault(site, "registry-pause", reg.name, lambda: _run("docker", "pause", reg.name),
               lambda: _run("docker", "unpause", reg.name), recovery_timeout_s, shared_ok=True, probe=_probe(reg)) as window:
        yield window


def tc_command(pid: int, *args: str) -> list[str]:
    """``tc`` run in the network namespace of process ``pid`` (the registry's)."""
    return ["nsenter", "-t", str(pid), "-n", "tc", *args]


@contextmanager
def registry_throttled(site: FaultSite, reg: Registry, rate: str,
                       recovery_timeout_s: float = RECOVERY_TIMEOUT_S) -> Iterator[FaultWindow]:
    """What the registry sends leaves at ``rate`` (tc's units: ``4mbit``…) for the window. The
    process is looked up at each step: a registry stopped and started inside the window has a new
    network namespace, without the qdisc (the undo then has nothing to remove)."""
    def inject() -> None:
        _run(*tc_command(reg.pid(), "qdisc", "replace", "dev", IFACE, "root", "tbf", "rate", rate, "burst", BURST,
                         "latency", LATENCY))

    def undo() -> None:
        pid = reg.pid()
        if pid and "tbf" in _run(*tc_command(pid, "qdisc", "show", "dev", IFACE)).stdout:
            _run(*tc_command(pid, "qdisc", "del", "dev", IFACE, "root"))

    with fault(site, "registry-throttle", reg.name, inject, undo, recovery_timeout_s, shared_ok=True,
               probe=_probe(reg)) as window:
        yield window
