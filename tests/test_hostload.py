"""The host's CPU pressure (e2e.record.hostload) from fake ``/proc`` readings: the pressure of a
window, its peak 10 s, the fallback without PSI, the sampler thread, and ``durations.json``
written by two processes at once."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from e2e.record.hostload import (
    LOADAVG,
    PSI_CPU,
    STAT,
    Cost,
    DurationLog,
    HostLoad,
    LoadStealCounter,
    PsiCounter,
    Stopwatch,
    stall_counter,
)


def psi_text(total_us: float) -> str:
    """``/proc/pressure/cpu`` as the kernel writes it, with ``some total`` (µs)."""
    return (f"some avg10=1.66 avg60=25.97 avg300=27.42 total={round(total_us)}\n"
            "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")


class FakeHost:
    """A clock (epoch s) and a PSI ``some`` counter that grows by ``rate`` (stalled s per s)."""

    def __init__(self, start: float = 1_000.0):
        self.now = start
        self.total_s = 0.0

    def clock(self) -> float:
        return self.now

    def read(self, path: str) -> str:
        assert path == PSI_CPU
        return psi_text(self.total_s * 1e6)

    def run(self, seconds: int, rate: float, host: HostLoad) -> None:
        """``seconds`` of 1 s samples while some task is stalled ``rate`` of the time."""
        for _ in range(seconds):
            self.now += 1
            self.total_s += rate
            host.sample()


def test_the_pressure_of_a_window_is_the_growth_of_psi_some_over_its_wall_time():
    fake = FakeHost()
    host = HostLoad(PsiCounter(fake.read), clock=fake.clock)
    host.sample()
    fake.run(20, 0.05, host)  # t 1000..1020: 5 %
    fake.run(10, 0.5, host)  # t 1020..1030: 50 % (a burst)
    fake.run(30, 0.05, host)  # t 1030..1060: 5 %
    whole = host.window(1_000, 1_060)
    assert whole is not None and whole.source == "psi" and whole.samples == 61
    assert whole.fraction == pytest.approx((50 * 0.05 + 10 * 0.5) / 60)  # 12.5 %
    assert whole.peak_10s == pytest.approx(0.5)  # the burst's 10 s
    quiet = host.window(1_000.5, 1_010.9)  # from the sample before t0 to the last one before t1
    assert (quiet.start, quiet.end) == (1_000, 1_010)
    assert quiet.fraction == pytest.approx(0.05) and quiet.peak_10s == quiet.fraction  # not longer than 10 s
    assert whole.as_dict() == {"pressure": 0.125, "peak_10s": 0.5, "source": "psi", "window_s": [1000.0, 1060.0],
                               "samples": 61}


def test_the_peak_10_s_is_never_below_the_windows_own_pressure():
    """A new user's fourth trial: an 11 s window read pressure 82 %, "the worst 10 s" 81 % — spikes
    at both ends raise the whole window's average above every 10 s inside it."""
    fake = FakeHost()
    host = HostLoad(PsiCounter(fake.read), clock=fake.clock)
    host.sample()
    fake.run(1, 1.0, host)
    fake.run(9, 0.7, host)
    fake.run(1, 1.0, host)
    window = host.window(1_000, 1_011)
    assert window.fraction == pytest.approx((2 * 1.0 + 9 * 0.7) / 11)
    assert window.peak_10s == window.fraction  # each 10 s inside: (1.0 + 9 * 0.7) / 10 = 73 %


def test_a_window_up_to_now_takes_a_fresh_sample():
    fake = FakeHost()
    host = HostLoad(PsiCounter(fake.read), clock=fake.clock)
    host.sample()
    fake.now += 4
    fake.total_s += 1.0  # no sample yet: window() takes one
    p = host.window(1_000)
    assert p is not None and p.end == 1_004 and p.fraction == pytest.approx(0.25)


def test_no_counter_or_one_sample_is_an_unknown_pressure():
    assert HostLoad(None).start().window(0) is None
    fake = FakeHost()
    host = HostLoad(PsiCounter(fake.read), clock=fake.clock)
    host.sample()
    assert host.window(1_000, 1_000) is None


def test_without_psi_runnable_tasks_beyond_the_cpus_and_steal_count_as_stalled():
    proc = {LOADAVG: "4.12 3.57 2.20 3/127 29770\n", STAT: "cpu  100 0 100 700 0 0 0 100 0 0\ncpu0 1 1 1 1\n"}
    counter = LoadStealCounter(lambda path: proc[path], cpus=2)
    assert counter(10.0) == 0.0  # the first reading has nothing before it
    # 2 runnable besides the sampler on 2 CPUs: nobody waits; steal 10 of 100 ticks: 10 %
    proc[STAT] = "cpu  120 0 120 750 0 0 0 110 0 0\n"
    assert counter(12.0) == pytest.approx(0.2)
    # 5 runnable besides the sampler on 2 CPUs: some task waited the whole second
    proc[LOADAVG] = "6.00 3.57 2.20 6/127 29771\n"
    proc[STAT] = "cpu  170 0 170 750 0 0 0 110 0 0\n"
    assert counter(13.0) == pytest.approx(1.2)


def test_the_source_is_psi_where_the_kernel_has_it_else_load_and_steal_else_none():
    proc = {PSI_CPU: psi_text(5), LOADAVG: "0.1 0.1 0.1 1/100 1\n", STAT: "cpu  1 0 1 10 0 0 0 0 0 0\n"}

    def read(path: str) -> str:
        if path not in proc:
            raise OSError(95, "Operation not supported", path)  # PSI compiled in, disabled at boot
        return proc[path]

    assert stall_counter(read).name == "psi"
    del proc[PSI_CPU]
    assert stall_counter(read).name == "loadavg+steal"
    proc.clear()
    assert stall_counter(read) is None


def test_the_sampler_thread_samples_until_stopped():
    stalled = iter(range(1_000_000))
    counter = PsiCounter(lambda path: psi_text(next(stalled) * 1e5))
    before = set(threading.enumerate())
    host = HostLoad(counter, interval_s=0.01).start()
    (thread,) = set(threading.enumerate()) - before
    assert thread.name == "e2e-host-load" and thread.daemon
    time.sleep(0.2)
    host.stop()
    assert not thread.is_alive()
    p = host.window(0)
    assert p is not None and p.samples > 3  # a fresh sample after stop() too


def test_a_stopwatch_gives_wall_cpu_and_the_pressure_of_the_test():
    fake = FakeHost()
    host = HostLoad(PsiCounter(fake.read), clock=fake.clock)
    host.sample()
    watch = Stopwatch(clock=fake.clock)
    fake.run(10, 0.3, host)
    sum(i * i for i in range(2_000_000))  # some CPU of this process: well above os.times()' 10 ms tick
    cost = watch.stop(host)
    assert cost.wall_s == 10 and cost.pressure == pytest.approx(0.3) and cost.cpu_s > 0


def test_durations_json_is_written_by_two_processes_at_once(tmp_path):
    path = tmp_path / "reports" / "durations.json"
    writer = textwrap.dedent(f"""
        import sys
        from e2e.record.hostload import Cost, DurationLog
        log = DurationLog({str(path)!r})
        for i in range(40):
            log.record(f"scenarios/test_{{sys.argv[1]}}.py::test_{{i}}", Cost(i + 0.5, i / 10, 0.02), "run-" + sys.argv[1])
    """)
    procs = [subprocess.Popen([sys.executable, "-c", writer, name]) for name in ("a", "b")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    data = json.loads(path.read_text())
    assert len(data) == 80  # no lost update
    assert data["scenarios/test_b.py::test_3"] == {"wall_s": 3.5, "cpu_s": 0.3, "pressure": 0.02, "run_id": "run-b"}
    # a newer run replaces a test's entry; an unknown pressure is null
    DurationLog(path).record("scenarios/test_a.py::test_0", Cost(7.0, 1.0, None), "run-c")
    assert DurationLog(path).read()["scenarios/test_a.py::test_0"] == {"wall_s": 7.0, "cpu_s": 1.0, "pressure": None,
                                                                       "run_id": "run-c"}
    assert not list(path.parent.glob(".durations.*"))  # no temp file left
