"""The host's own CPU load, measured: how much of a window's wall time some runnable task waited
for a CPU, and what each test cost (``reports/durations.json``).

Sources, in this order (:func:`stall_counter`):

- ``psi``: ``/proc/pressure/cpu`` (Linux ≥ 4.20 with PSI enabled), line ``some … total=<µs>``:
  the kernel's cumulative time during which at least one runnable task was waiting for a CPU
  (Documentation/accounting/psi.rst). Exact; the pressure of a window is its growth over the
  window's wall time.
- ``loadavg+steal`` (no PSI): at each sample, whether more tasks were runnable
  (``/proc/loadavg`` field 4, ``running/total``, less the sampler itself) than there are CPUs
  (``os.cpu_count()``): then some task waited; or the share of CPU time the hypervisor stole
  (``/proc/stat`` ``cpu`` line, field ``steal`` over all fields up to it) since the sample
  before, whichever is larger, counted for the interval since the sample before. An estimate:
  a 1 s sample sees the run queue at one instant.

Both give a cumulative count of stalled seconds, sampled about once a second by a daemon thread
of each pytest process (:class:`HostLoad`; the ``host_load`` fixture of :mod:`e2e.plugin`).
:meth:`HostLoad.window` makes a :class:`Pressure` of any window ``[t0, t1]`` (epoch s): the
fraction of the window some task was stalled (0..1) and the highest such fraction over any
:data:`PEAK_WINDOW_S` of it (the kernel's ``avg10``, as a plain rather than exponential average).

:class:`DurationLog` keeps ``durations.json``, ``{nodeid: {"wall_s", "cpu_s", "pressure",
"run_id"}}`` (the newest run of each test), rewritten atomically under a file lock like
``measurements.json``, so parallel xdist workers write it safely. What judges a value by the
pressure is :mod:`e2e.judge.pressure`.
"""

from __future__ import annotations

import bisect
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Protocol

from ..base.jsonfile import read_json, update_json

PSI_CPU = "/proc/pressure/cpu"
LOADAVG = "/proc/loadavg"
STAT = "/proc/stat"
# sampling period of the background thread (s): fine enough for a 10 s peak, light (three
# small /proc reads a second at most)
SAMPLE_S = 1.0
# the peak's window (s): the kernel's shortest PSI average (avg10) and the shortest period of the
# timers most judged values run on (back-off base, probe and sync periods, node status update)
PEAK_WINDOW_S = 10.0
# samples kept (one a second): a day, far longer than any test's window
KEEP_SAMPLES = 86_400

Reader = Callable[[str], str]


def read_text(path: str) -> str:
    """The text of a ``/proc`` file; ``OSError`` when it is missing or unreadable (PSI disabled
    at boot: ``EOPNOTSUPP``)."""
    with open(path) as f:
        return f.read()


class StallCounter(Protocol):
    """Cumulative seconds during which some runnable task waited for a CPU, read at ``now``
    (epoch s); ``name`` says the source. ``OSError``/``ValueError`` when it cannot be read."""

    name: str

    def __call__(self, now: float) -> float: ...


def psi_some(text: str) -> dict[str, str]:
    """The fields of the ``some`` line of a ``/proc/pressure/*`` text (``{"avg10": "1.08", …,
    "total": "10290970402"}``); ``{}`` without one."""
    line = next((ln for ln in text.splitlines() if ln.startswith("some ")), "")
    return dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)


class PsiCounter:
    """``/proc/pressure/cpu`` ``some total`` (µs) in seconds."""

    name = "psi"

    def __init__(self, read: Reader = read_text):
        self.read = read

    def __call__(self, now: float) -> float:
        fields = psi_some(self.read(PSI_CPU))
        if "total" not in fields:
            raise ValueError(f"{PSI_CPU}: no 'some … total=' line")
        return int(fields["total"]) / 1e6


class LoadStealCounter:
    """The estimate without PSI (module doc): stalled seconds accumulated from one sample to the
    next; ``cpus`` the host's CPU count."""

    name = "loadavg+steal"

    def __init__(self, read: Reader = read_text, cpus: int | None = None):
        self.read = read
        self.cpus = cpus or os.cpu_count() or 1
        self._last: tuple[float, int, int] | None = None  # (time, steal ticks, total ticks)
        self._stalled = 0.0

    def __call__(self, now: float) -> float:
        runnable = int(self.read(LOADAVG).split()[3].split("/")[0]) - 1  # less the sampler itself
        cpu = next(line for line in self.read(STAT).splitlines() if line.startswith("cpu "))
        ticks = [int(x) for x in cpu.split()[1:9]]  # user nice system idle iowait irq softirq steal
        steal, total = ticks[7], sum(ticks)
        if self._last is not None:
            then, steal0, total0 = self._last
            stolen = (steal - steal0) / (total - total0) if total > total0 else 0.0
            self._stalled += max(now - then, 0.0) * max(1.0 if runnable > self.cpus else 0.0, stolen)
        self._last = (now, steal, total)
        return self._stalled


def stall_counter(read: Reader = read_text, cpus: int | None = None) -> StallCounter | None:
    """PSI where it can be read, else the load and steal estimate, else None (no ``/proc``:
    the pressure stays unknown)."""
    for counter in (PsiCounter(read), LoadStealCounter(read, cpus)):
        try:
            counter(time.time())
        except (OSError, ValueError, IndexError, StopIteration):
            continue
        return counter
    return None


@dataclass(frozen=True)
class Pressure:
    """The host's CPU pressure over a window: ``fraction`` (0..1) of its wall time some runnable
    task waited for a CPU, ``peak_10s`` the highest fraction over any :data:`PEAK_WINDOW_S` of it
    (the window's own ``fraction`` when it is shorter, or when that is higher: never below it), ``source`` (``psi`` or
    ``loadavg+steal``), ``start``/``end`` the epoch seconds of the first and last sample used
    and ``samples`` their count."""

    fraction: float
    peak_10s: float
    source: str
    start: float
    end: float
    samples: int

    def as_dict(self) -> dict:
        """The figures for JSON (fractions to 4 decimals, times to ms)."""
        return {"pressure": round(self.fraction, 4), "peak_10s": round(self.peak_10s, 4), "source": self.source,
                "window_s": [round(self.start, 3), round(self.end, 3)], "samples": self.samples}


class HostLoad:
    """Samples a :class:`StallCounter` every ``interval_s`` in a daemon thread (:meth:`start`,
    :meth:`stop`) or on demand (:meth:`sample`); ``clock`` gives epoch seconds. Without a counter
    (None) every window is unknown."""

    def __init__(self, counter: StallCounter | None, clock: Callable[[], float] = time.time,
                 interval_s: float = SAMPLE_S):
        self.counter, self.clock, self.interval_s = counter, clock, interval_s
        self._times: list[float] = []
        self._stalled: list[float] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def sample(self) -> None:
        """Read the counter once and keep the sample (a read that fails is left out)."""
        if self.counter is None:
            return
        with self._lock:
            now = self.clock()
            try:
                stalled = self.counter(now)
            except (OSError, ValueError, IndexError, StopIteration):
                return
            if self._times and now <= self._times[-1]:
                return
            self._times.append(now)
            self._stalled.append(stalled)
            if len(self._times) > KEEP_SAMPLES:
                del self._times[: -KEEP_SAMPLES], self._stalled[: -KEEP_SAMPLES]

    def start(self) -> HostLoad:
        """Take a first sample at once, then one every ``interval_s`` until :meth:`stop`."""
        self.sample()
        if self.counter is not None and self._thread is None:
            self._thread = threading.Thread(target=self._run, name="e2e-host-load", daemon=True)
            self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.sample()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def window(self, t0: float, t1: float | None = None) -> Pressure | None:
        """The :class:`Pressure` of ``[t0, t1]`` (epoch s; ``t1`` None: now, with a fresh sample):
        from the last sample at or before ``t0`` (the first after it when there is none) to the
        last at or before ``t1``. None without a counter or without two samples in that span."""
        if t1 is None:
            self.sample()
            t1 = self.clock()
        with self._lock:
            times, stalled = self._times, self._stalled
            a = max(bisect.bisect_right(times, t0) - 1, 0)
            b = bisect.bisect_right(times, t1) - 1
            if self.counter is None or b <= a:
                return None
            span = times[b] - times[a]
            fraction = _fraction(stalled[b] - stalled[a], span)
            peak = fraction
            if span > PEAK_WINDOW_S:
                peaks = []
                for j in range(a + 1, b + 1):
                    if times[j] - times[a] < PEAK_WINDOW_S:
                        continue
                    i = max(bisect.bisect_right(times, times[j] - PEAK_WINDOW_S) - 1, a)
                    peaks.append(_fraction(stalled[j] - stalled[i], times[j] - times[i]))
                # never below the window's own: spikes at both ends of an 11 s window raise its
                # average above each 10 s inside it (a new user read 82 % "worst 10 s: 81 %" as a contradiction)
                peak = max([*peaks, fraction])
            return Pressure(fraction, peak, self.counter.name, times[a], times[b], b - a + 1)


def _fraction(stalled_s: float, span_s: float) -> float:
    """Stalled seconds over a span, clamped to 0..1 (PSI counts per CPU-wait, never beyond wall time)."""
    return min(max(stalled_s / span_s, 0.0), 1.0) if span_s > 0 else 0.0


@dataclass(frozen=True)
class Cost:
    """What one test cost: ``wall_s`` (s), ``cpu_s`` (CPU seconds of this pytest process — all its
    threads, the recorder's watches included — and of the child processes it waited for, such as
    kubectl; not the cluster's own containers), ``pressure`` the host's over the test (0..1, None
    when unknown)."""

    wall_s: float
    cpu_s: float
    pressure: float | None


class Stopwatch:
    """Started at construction: ``started`` (epoch s) and this process's CPU times;
    :meth:`stop` gives the :class:`Cost` since then."""

    def __init__(self, clock: Callable[[], float] = time.time):
        self.clock = clock
        self.started = clock()
        self._cpu = _cpu_s()

    def stop(self, host: HostLoad | None = None) -> Cost:
        window = host.window(self.started) if host is not None else None
        return Cost(self.clock() - self.started, _cpu_s() - self._cpu, window.fraction if window else None)


def _cpu_s() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


class DurationLog:
    """``durations.json`` (module doc): the newest :class:`Cost` of each test, safe across processes."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def record(self, nodeid: str, cost: Cost, run_id: str) -> None:
        """Write ``cost`` as ``nodeid``'s entry (replacing an earlier run's)."""
        entry = {"wall_s": round(cost.wall_s, 3), "cpu_s": round(cost.cpu_s, 3),
                 "pressure": None if cost.pressure is None else round(cost.pressure, 4), "run_id": run_id}
        update_json(self.path, lambda data: {**data, nodeid: entry}, dict, indent=1, sort_keys=True)

    def read(self) -> dict[str, dict]:
        """``{nodeid: {"wall_s", "cpu_s", "pressure", "run_id"}}``; ``{}`` when there is no file."""
        return read_json(self.path, dict)
