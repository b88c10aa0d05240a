"""The one container-written stamp line (e2e.evidence.stamps): its parser, the shell functions
that write it, and the lookups every family uses (first/last of an event, labelled probe runs,
intervals, event times)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from e2e.evidence.stamps import (
    LINE,
    STAMP_SH,
    Stamp,
    before,
    event_times,
    first,
    intervals,
    labelled,
    last,
    parse,
    parse_line,
)

# A container log as read back through the API: a busybox container's stamps (start, exec
# probes through PID 1's stdout, its SIGTERM), other output mixed in, and a \r.
LOG = """1795939931.839358 start
    mode:         0
    time.tv_sec:  1795939931
1795939933.582386 probe:startup:failure
1795939935.578872 probe:startup:failure
1795939937.589039 probe:startup:failure\r
1795939937.598951 sigterm container=app
"""

# the lifecycle-app writes the same shape (hack/images/lifecycle-app logf)
APP = """1795940099.305000 START pid=1 mode=drain listen=:8080 drain_delay=0s host=web
1795940099.619000 PROBE path=/readyz status=200 agent="kube-probe/1.37"
1795940100.725000 SIGTERM mode=drain pid=1 inflight=1
1795940101.619000 PROBE path=/readyz status=503 agent="kube-probe/1.37"
1795940103.227000 EXIT code=0
"""


def test_parse_keeps_only_stamp_lines_in_order():
    stamps = parse(LOG)
    assert [s.event for s in stamps] == ["start"] + ["probe:startup:failure"] * 3 + ["sigterm"]
    assert stamps[0].at == pytest.approx(1795939931.839358, abs=1e-6)
    assert stamps[-1] == Stamp(1795939937.598951, "sigterm", (("container", "app"),))
    assert stamps[-1].key == "app sigterm" and stamps[0].key == "start"
    assert parse(None) == [] and parse("") == [] and parse(LOG.splitlines()) == stamps


def test_fields_are_key_value_with_quotes_removed():
    (start, probe, *_) = parse(APP)
    assert probe.get("agent") == "kube-probe/1.37" and probe.get("status") == "200" and probe.get("x") == ""
    assert start.has(mode="drain", pid="1") and not start.has(mode="exit")
    assert dict(start.fields) == {"pid": "1", "mode": "drain", "listen": ":8080", "drain_delay": "0s", "host": "web"}


@pytest.mark.parametrize(
    "line",
    [
        "1795939931.83935 start",          # 5 digits: not µs
        "1795939931.839358000 start",      # ns
        "1795939931 start",
        "start 1795939931.839358",         # the old probe shape
        "@mark crossed 1795939931.839358",  # the old ES shape
        "1795939931.839358 app start",      # a word that is not key=value (the old SC shape)
        "1795939931.839 START pid=1",       # the old lifecycle-app shape (ms)
        '1795939931.839358 PROBE agent="unclosed',
        "",
    ],
)
def test_other_shapes_are_not_stamps(line):
    assert parse_line(line) is None


def test_first_last_labelled_before_intervals_and_event_times():
    stamps = parse(LOG)
    assert first(stamps, "sigterm").at == pytest.approx(1795939937.598951)
    assert first(stamps, "sigterm", container="other") is None and first(stamps, "started") is None
    probes = labelled(stamps, "probe:startup")
    assert intervals(probes) == [1.996, 2.01] and intervals(probes[:1]) == []
    assert len(before(probes, 1795939937.0)) == 2
    assert last(stamps, "probe:startup:failure").at == pytest.approx(1795939937.589039)
    assert first(stamps, "probe:startup:failure", after=1795939934.0).at == pytest.approx(1795939935.578872)
    assert event_times(stamps) == {"start": 1795939931.839358, "probe:startup:failure": 1795939933.582386,
                                   "sigterm": 1795939937.598951}
    app = parse(APP)
    assert first(app, "PROBE", path="/readyz", status="503").at == 1795940101.619


def test_labelled_matches_prefix_at_a_colon_boundary():
    stamps = [Stamp(1.0, "probe:startup:failure"), Stamp(2.0, "probe:startup:success"),
              Stamp(3.0, "probe:startupx"), Stamp(4.0, "probe:readiness:success")]
    assert [s.at for s in labelled(stamps, "probe:startup")] == [1.0, 2.0]
    assert [s.at for s in labelled(stamps, "probe:startup:success")] == [2.0]
    assert labelled(stamps, "probe:liveness") == []


@pytest.mark.skipif(shutil.which("busybox") is None and shutil.which("adjtimex") is None,
                    reason="no busybox adjtimex on this machine")
def test_the_shell_functions_write_the_parsed_shape(tmp_path):
    """``stamp`` (STAMP_SH) run by a real shell with busybox adjtimex: one parsable line on
    stdout and the same line appended to the termination log."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if shutil.which("adjtimex") is None:
        (bin_dir / "adjtimex").symlink_to(shutil.which("busybox"))
    script = STAMP_SH.replace("/dev/termination-log", str(tmp_path / "termination-log"))
    out = subprocess.run(["sh", "-c", f"{script}; stamp sigterm container=app"], capture_output=True, text=True,
                         check=True, env={"PATH": f"{bin_dir}:/usr/bin:/bin"}).stdout
    assert LINE.match(out.strip()), out
    (s,) = parse(out)
    assert s.key == "app sigterm"
    assert parse((tmp_path / "termination-log").read_text()) == [s]
    assert re.fullmatch(r"\d{10}\.\d{6}", f"{s.at:.6f}")


@pytest.mark.parametrize("status, usec, expected", [
    ("64 (UNSYNC)", "109179", "1796192395.109179"),
    ("8256 (UNSYNC)", "109179895", "1796192395.109179"),  # STA_NANO: tv_usec in ns
    ("8192", "000999999", "1796192395.000999"),  # ns below 1 ms: not read as 0.999999 s
])
def test_now_reads_the_clock_in_microseconds_whatever_the_kernels_unit(tmp_path, status, usec, expected):
    """A shard run here wrote "1796192395.109179895 start": the host clock's status had STA_NANO
    (busybox adjtimex then prints time.tv_usec in nanoseconds), no line parsed as a stamp, and
    every family reading stamps failed (SC, ES, AD, …)."""
    if shutil.which("awk") is None:
        pytest.skip("no awk on this machine")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "adjtimex"
    fake.write_text("#!/bin/sh\ncat <<'OUT'\n    mode:         0\n-o  offset:       0 us\n"
                    f"    status:       {status}\n    time.tv_sec:  1796192395\n    time.tv_usec: {usec}\n"
                    "    return value: 5 (clock not synchronized)\nOUT\n")
    fake.chmod(0o755)
    script = STAMP_SH.replace("/dev/termination-log", str(tmp_path / "termination-log"))
    out = subprocess.run(["sh", "-c", f"{script}; stamp start"], capture_output=True, text=True, check=True,
                         env={"PATH": f"{bin_dir}:/usr/bin:/bin"}).stdout
    assert out == f"{expected} start\n"
    assert parse(out)[0].event == "start"
