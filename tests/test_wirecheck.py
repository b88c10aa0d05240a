"""The wire check (e2e.cli.wirecheck): what each capture counts, which interfaces it watches, a
capture that dies, the host guard's counters, the clusters' own ranges, the report, bad input."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import types

import pytest

from e2e.cluster import egress
from e2e.cli import wirecheck
from e2e.cli.wirecheck import Capture


def test_uplink_filter_offline_counts_forwarded_packets_and_non_public_destinations():
    bpf = wirecheck.uplink_filter(["10.255.255.53"], egress.EGRESS_NONE, (64, 64))
    assert bpf.startswith("(ip or ip6) and not ((icmp6 and ip6[40] >= 133")
    assert "dst net ff02::/16" in bpf  # MLD reports: link scope, never routed
    assert "not (dst host 10.255.255.53 and port 53 and not ((ip and ip[8] < 64) or (ip6 and ip6[7] < 64)))" in bpf
    # forwarded (TTL decremented below the host's own): a node's or pod's packet, whatever its address after masquerade
    assert "((ip and ip[8] < 64) or (ip6 and ip6[7] < 64)) or (dst net 0.0.0.0/8 or dst net 10.0.0.0/8" in bpf


def test_uplink_filter_online_counts_non_public_destinations_only():
    bpf = wirecheck.uplink_filter([], egress.EGRESS_PUBLIC, (64, 64))
    for r in (*egress.NON_PUBLIC[4], *egress.NON_PUBLIC[6]):
        assert f"dst net {r.network}" in bpf
    assert "ip[8]" not in bpf  # an online node may pull from a public registry


def test_the_host_own_hop_limits_are_read():
    ttl, hops = wirecheck.host_hop_limits()
    assert 1 <= ttl <= 255 and 1 <= hops <= 255


def test_bridge_capture_sees_only_what_the_nodes_hand_to_the_host():
    capture = Capture("bridge", egress.BRIDGE, wirecheck.bridge_filter(["172.18.0.1"], ["10.255.255.53"]), "in", promiscuous=False)
    args = capture.args("x.pcap")
    assert args[:3] == ["tcpdump", "-i", egress.BRIDGE] and args[-1].startswith("inbound and (")
    assert "-p" in args  # frames for the bridge's own MAC: routed by the host, not node to node
    assert "not dst host 172.18.0.1" in args[-1] and "not (dst host 10.255.255.53 and port 53)" in args[-1]
    assert args[-1].endswith(wirecheck.non_public_filter() + ")")


def test_report_counts_every_packet_and_fails_on_any():
    leak = "2026-12-01 15:00:00.000000 IP 192.0.2.2.59620 > 10.96.0.1.443: Flags [S]"
    caps = [Capture("uplink", "eth0", "f", "out", packets=[leak] * 85, status=0, dropped=0, received=85),
            Capture("bridge", egress.BRIDGE, "g", "in", status=0, dropped=0, received=0)]
    data, text = wirecheck.report(caps, ["pytest"], 0, 12.0)
    assert data["packets"] == 85 and data["captures"][0]["count"] == 85 and data["captures"][1]["count"] == 0
    assert len(data["captures"][0]["packets"]) == wirecheck.SHOWN
    assert "FAIL: 85 packet(s)" in text and leak in text and "| uplink | eth0 | 85 | 85 | 0 | exit status 0 | `outbound and (f)` |" in text
    json.dumps(data)
    clean = [Capture("uplink", "eth0", "f", "out", status=0, dropped=0, received=0)]
    data, text = wirecheck.report(clean, ["pytest"], 0, 1.0)
    assert "PASS: no packet left the machine" in text and data["problems"] == []


def test_a_capture_that_lost_packets_or_gave_no_figure_fails_the_check():
    """Issue 41: a capture that died, failed or lost packets counted 0 packets and passed."""
    cases = {
        "tcpdump on eth0 (uplink): 3 packet(s) dropped by kernel, not seen":
            Capture("uplink", "eth0", "f", "out", status=0, dropped=3, received=0),
        "tcpdump on eth0 (uplink) printed no 'dropped by kernel' figure: what it lost is unknown (no message)":
            Capture("uplink", "eth0", "f", "out", status=0, received=0),
        "tcpdump on eth0 (uplink) printed no 'received by filter' figure: what its filter passed is unknown (no message)":
            Capture("uplink", "eth0", "f", "out", status=0, dropped=0),
        "tcpdump on eth0 (uplink): 2 packet(s) passed its kernel filter (each one counts) but are not in its capture":
            Capture("uplink", "eth0", "f", "out", status=0, dropped=0, received=2),
        "tcpdump on eth0 (uplink) exited with status 1 when stopped: tcpdump: pcap_loop: error":
            Capture("uplink", "eth0", "f", "out", status=1, dropped=0, received=0, stderr="tcpdump: pcap_loop: error"),
        "tcpdump on eth0 (uplink) ended before the command did: killed by SIGKILL, 3 s into the run (no message)":
            Capture("uplink", "eth0", "f", "out", status=-9, dropped=0, died="killed by SIGKILL, 3 s into the run (no message)"),
    }
    for message, capture in cases.items():
        data, text = wirecheck.report([capture], ["pytest"], 0, 1.0)
        assert data["problems"] == [message] and text.startswith("## Wire check\n\nFAIL: 0 packet(s)") and message in text


def test_bad_input_is_a_usage_error(monkeypatch, capsys):
    monkeypatch.setattr(wirecheck.os, "geteuid", lambda: 1000)
    assert wirecheck.main(["--", "true"]) == wirecheck.EXIT_USAGE
    assert "needs root" in capsys.readouterr().err
    monkeypatch.setattr(wirecheck.os, "geteuid", lambda: 0)
    monkeypatch.setattr(wirecheck.shutil, "which", lambda _: None)
    assert wirecheck.main(["--", "true"]) == wirecheck.EXIT_USAGE
    assert "tcpdump is not installed" in capsys.readouterr().err


def _pcap(path, packets: list[bytes]) -> None:
    """A pcap file (LINKTYPE_RAW: each packet an IP header and payload)."""
    import struct
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 101))
        for i, pkt in enumerate(packets):
            f.write(struct.pack("<IIII", 1_700_000_000 + i, 0, len(pkt), len(pkt)) + pkt)


def _ip_tcp(src: str, dst: str, ttl: int, dport: int = 443) -> bytes:
    """A TCP SYN in an IPv4 or IPv6 header (``ttl``: its TTL or hop limit)."""
    import ipaddress
    import struct
    tcp = struct.pack("!HHIIBBHHH", 40000, dport, 0, 0, 5 << 4, 0x02, 64240, 0, 0)
    s, d = ipaddress.ip_address(src), ipaddress.ip_address(dst)
    if d.version == 6:
        return struct.pack("!IHBB16s16s", 6 << 28, len(tcp), 6, ttl, s.packed, d.packed) + tcp
    return struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 0, 0, ttl, 6, 0, s.packed, d.packed) + tcp


def _seen(pcap, bpf: str, count: int) -> list[bool]:
    """Which of the ``count`` packets of ``pcap`` tcpdump's ``bpf`` matches."""
    out = subprocess.run(["tcpdump", "-r", str(pcap), "-n", "-tt", bpf], capture_output=True, text=True, check=True).stdout
    seen = {int(float(line.split()[0])) - 1_700_000_000 for line in out.splitlines() if line.strip()}
    return [i in seen for i in range(count)]


# A public address (a package registry's CDN) and the host's own, for packets in capture files only.
PUBLIC, PUBLIC6, HOST, HOST6 = "151.101.0.223", "2a04:4e42::223", "192.0.2.2", "fd00::2"


@pytest.mark.skipif(not shutil.which("tcpdump"), reason="tcpdump not installed (apt-get install tcpdump; .ci/run does)")
def test_the_uplink_filter_counts_forwarded_and_non_public_packets_only(tmp_path):
    """tcpdump itself applies the filter to packets as they would leave the uplink. Issue 41:
    online, a forwarded packet to a special-purpose range (198.18.0.0/15, the TEST-NETs, 240/4,
    multicast beyond 224.0.0.0/24, NAT64 of a private address, 6to4) was not counted."""
    packets = {  # what: (packet, counted offline, counted online)
        "a node's SYN to the Service address, masqueraded (TTL 63)": (_ip_tcp(HOST, "10.96.0.1", 63), True, True),
        "a pod's packet to a public address, forwarded twice (TTL 62)": (_ip_tcp(HOST, PUBLIC, 62), True, False),
        "the host itself to a pod address (TTL 64)": (_ip_tcp(HOST, "10.244.0.7", 64), True, True),
        "the host's own pip install (TTL 64, public)": (_ip_tcp(HOST, PUBLIC, 64), False, False),
        "the host's DNS to its resolver": (_ip_tcp(HOST, "10.255.255.53", 64, dport=53), False, False),
        "a node's DNS query forwarded to the resolver (TTL 63)": (_ip_tcp(HOST, "10.255.255.53", 63, dport=53), True, False),
        "a node's packet to 198.18.0.1 (benchmarking), forwarded": (_ip_tcp(HOST, "198.18.0.1", 63), True, True),
        "forwarded to TEST-NET-2": (_ip_tcp(HOST, "198.51.100.7", 63), True, True),
        "forwarded to 240.0.0.1 (reserved)": (_ip_tcp(HOST, "240.0.0.1", 63), True, True),
        "forwarded to 239.1.2.3 (multicast beyond 224.0.0.0/24)": (_ip_tcp(HOST, "239.1.2.3", 63), True, True),
        "forwarded to 64:ff9b::a00:1 (NAT64 of 10.0.0.1)": (_ip_tcp(HOST6, "64:ff9b::a00:1", 63), True, True),
        "forwarded to 2002:a00:1::1 (6to4 of 10.0.0.1)": (_ip_tcp(HOST6, "2002:a00:1::1", 63), True, True),
        "forwarded to 2001:db8::1 (documentation)": (_ip_tcp(HOST6, "2001:db8::1", 63), True, True),
        "forwarded to 4000::1 (outside global unicast)": (_ip_tcp(HOST6, "4000::1", 63), True, True),
        "the host's own IPv6 to a public address": (_ip_tcp(HOST6, PUBLIC6, 64), False, False),
        "a node's IPv6 to a public address, forwarded": (_ip_tcp(HOST6, PUBLIC6, 63), True, False),
    }
    pcap = tmp_path / "uplink.pcap"
    _pcap(pcap, [p for p, _, _ in packets.values()])
    for mode, column in ((egress.EGRESS_NONE, 1), (egress.EGRESS_PUBLIC, 2)):
        expected = [v[column] for v in packets.values()]
        assert _seen(pcap, wirecheck.uplink_filter(["10.255.255.53"], mode, (64, 64)), len(packets)) == expected, (mode, list(packets))


@pytest.mark.skipif(not shutil.which("tcpdump"), reason="tcpdump not installed (apt-get install tcpdump; .ci/run does)")
def test_the_bridge_filter_counts_what_nodes_hand_the_host_for_a_non_public_destination(tmp_path):
    """What a node hands to the host (frames for the bridge's MAC) counts when the host would
    forward it to a non-public address: 198.18.0.1 (issue 41), a Service address; not the host's
    own addresses (published ports answer to the gateway), DNS to the resolvers, or a public one."""
    node = "172.18.0.2"
    packets = {
        "a node's packet to 198.18.0.1": (_ip_tcp(node, "198.18.0.1", 64), True),
        "an untranslated Service packet": (_ip_tcp(node, "10.96.0.1", 64), True),
        "to another Docker network": (_ip_tcp(node, "172.17.0.5", 64), True),
        "to 203.0.113.9 (TEST-NET-3)": (_ip_tcp(node, "203.0.113.9", 64), True),
        "an answer to a published port (the bridge's gateway)": (_ip_tcp(node, "172.18.0.1", 64), False),
        "to the host's own uplink address": (_ip_tcp(node, HOST, 64), False),
        "DNS to the host's resolver (Docker's embedded DNS forwarding)": (_ip_tcp(node, "10.255.255.53", 64, dport=53), False),
        "an online pull from a public registry": (_ip_tcp(node, PUBLIC, 64), False),
        "IPv6 to the bridge's ULA gateway": (_ip_tcp("fc00:f853:ccd:e793::2", "fc00:f853:ccd:e793::1", 64), False),
        "IPv6 to 2002::1": (_ip_tcp("fc00:f853:ccd:e793::2", "2002::1", 64), True),
    }
    pcap = tmp_path / "bridge.pcap"
    _pcap(pcap, [p for p, _ in packets.values()])
    bpf = wirecheck.bridge_filter(["172.18.0.1", "172.18.255.255", HOST, "fc00:f853:ccd:e793::1"], ["10.255.255.53"])
    assert _seen(pcap, bpf, len(packets)) == [w for _, w in packets.values()], list(packets)


def test_a_sigterm_to_the_check_reaches_the_command_and_the_check_outlives_it(tmp_path):
    """Session 9: a SIGTERM to the wire check killed it outright — its tcpdumps kept running and
    no report was written. It now passes the signal on and returns the command's status."""
    child = ("import signal, sys, time, pathlib\n"
             f"signal.signal(signal.SIGTERM, lambda *_: (pathlib.Path({str(tmp_path / 'got')!r}).write_text('TERM'), sys.exit(143)))\n"
             f"pathlib.Path({str(tmp_path / 'ready')!r}).write_text('')\n"
             "time.sleep(30)\n")
    check = ("import sys\nfrom e2e.cli import wirecheck\n"
             f"status = wirecheck.run_command([sys.executable, '-c', {child!r}])\n"
             f"open({str(tmp_path / 'status')!r}, 'w').write(str(status))\n")
    proc = subprocess.Popen([sys.executable, "-c", check])
    deadline = time.monotonic() + 20
    while not (tmp_path / "ready").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 0
    assert (tmp_path / "got").read_text() == "TERM"
    assert (tmp_path / "status").read_text() == "143"


def test_a_ctrl_c_while_the_check_looks_around_does_not_end_it_before_the_command():
    """A Ctrl-C reaches the check and the command together; landing in ``poll()`` (its docker
    calls), it ended the check at once: the command ran on unwatched, its guard released, no report."""
    looks = []

    def poll():
        looks.append(time.monotonic())
        if len(looks) == 1:
            raise KeyboardInterrupt

    started = time.monotonic()
    status = wirecheck.run_command([sys.executable, "-c", "import time, sys; time.sleep(2.5); sys.exit(7)"], poll)
    assert status == 7 and time.monotonic() - started >= 2.5
    assert len(looks) >= 3  # looks went on after the Ctrl-C, and the last one came after the command's end


def _link(name: str, kind: str = "", up: bool = True, master: str = "", loopback: bool = False) -> dict:
    """One entry of ``ip -j -d link show``."""
    link: dict = {"ifname": name, "flags": [*(["LOOPBACK"] if loopback else []), "BROADCAST", *(["UP", "LOWER_UP"] if up else [])]}
    if kind:
        link["linkinfo"] = {"info_kind": kind}
    if master:
        link["master"] = master
    return link


HOST_LINKS = [
    _link("lo", loopback=True), _link("eth0"), _link("eth1"),  # eth1: a second NIC, no default route
    _link("tun0", "tun"), _link("wg0", "wireguard"),  # VPNs (a policy route may use them)
    _link("docker0", "bridge"), _link("br-3f2a", "bridge"), _link("veth1a", "veth", master="br-3f2a"),
    _link("br0", "bridge"), _link("eth2", master="br0"), _link("veth2b", "veth", master="br0"),  # a bridge to a physical NIC
    _link(egress.BRIDGE, "bridge"), _link("veth3c", "veth", master=egress.BRIDGE), _link("ifb0", "ifb", up=False),
]


def test_every_interface_that_can_carry_a_packet_off_is_watched():
    """Issue 41: only interfaces with a default route were captured; a second NIC, a VPN or a
    policy route was not watched."""
    watched, skipped = wirecheck.watched_interfaces(HOST_LINKS)
    assert watched == ["br0", "eth0", "eth1", "eth2", "tun0", "wg0"]
    assert set(skipped) == {"lo", "docker0", "br-3f2a", "veth1a", "veth2b", egress.BRIDGE, "veth3c", "ifb0"}
    assert skipped["ifb0"] == "down" and skipped["docker0"].startswith("bridge of local containers")


@pytest.mark.skipif(not shutil.which("ip"), reason="no ip (iproute2)")
def test_this_host_s_interfaces_are_read():
    links = wirecheck.ip_json("-d", "link", "show")
    watched, skipped = wirecheck.watched_interfaces(links)
    assert "lo" in skipped and "lo" not in watched
    assert set(watched) | set(skipped) == {link["ifname"] for link in links}


def test_an_interface_that_comes_up_during_the_run_fails_the_check():
    lists = iter([HOST_LINKS, [*HOST_LINKS, _link("tun1", "tun")], [*HOST_LINKS, _link("veth9", "veth")]])
    watch = wirecheck.Watch([], [], wirecheck.watched_interfaces(HOST_LINKS)[0], runner=_no_docker, links=lambda: next(lists))
    for _ in range(3):
        watch()
    assert [p.split(":")[0] for p in watch.problems()] == ["interface tun1 can carry a packet off the machine and was not watched"]


def _no_docker(cmd):
    return subprocess.CompletedProcess(cmd, 0, "", "")


FAKE_TCPDUMP = """#!{python}
# A stand-in for tcpdump: -r prints nothing; a capture says it listens, writes its pid to
# $FAKE_TCPDUMP_PIDS/<interface>.pid and, on SIGINT or SIGTERM, prints the statistics of
# $FAKE_TCPDUMP_STATS (default: tcpdump's three lines, 0 dropped) and exits with $FAKE_TCPDUMP_EXIT.
import os, signal, sys, time
args = sys.argv[1:]
if "-r" in args:
    sys.exit(0)
iface = args[args.index("-i") + 1]
open(args[args.index("-w") + 1], "wb").close()
pids = os.environ["FAKE_TCPDUMP_PIDS"]
with open(os.path.join(pids, iface + ".pid"), "w") as f:
    f.write(str(os.getpid()))
def stop(*_):
    sys.stderr.write(os.environ.get("FAKE_TCPDUMP_STATS", "0 packets captured\\n0 packets received by filter\\n0 packets dropped by kernel\\n"))
    sys.exit(int(os.environ.get("FAKE_TCPDUMP_EXIT", "0")))
signal.signal(signal.SIGINT, stop)
signal.signal(signal.SIGTERM, stop)
sys.stderr.write(f"tcpdump: listening on {{iface}}, link-type EN10MB (Ethernet), snapshot length 262144 bytes\\n")
sys.stderr.flush()
while True:
    time.sleep(0.1)
"""


@pytest.fixture
def fake_wire(tmp_path, monkeypatch):
    """``main`` as root on a host with one uplink ``eth9``, a fake tcpdump on PATH, no Docker and a
    host guard whose counters the test sets: ``fake_wire.after`` (label → packets) is what the
    guard counts at the end (0 at the start); ``fake_wire.pids`` holds each capture's pid file."""
    bin_dir, pids = tmp_path / "bin", tmp_path / "pids"
    bin_dir.mkdir()
    pids.mkdir()
    tcpdump = bin_dir / "tcpdump"
    tcpdump.write_text(FAKE_TCPDUMP.format(python=sys.executable))
    tcpdump.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_TCPDUMP_PIDS", str(pids))
    monkeypatch.setattr(wirecheck, "POLL_S", 0.1, raising=False)
    monkeypatch.setattr(wirecheck.os, "geteuid", lambda: 0)
    monkeypatch.setattr(egress, "prepare", lambda: "egress guard: (test)")
    monkeypatch.setattr(egress, "release", lambda: True)
    monkeypatch.setattr(egress, "resolvers", lambda: ["10.255.255.53"])
    monkeypatch.setattr(wirecheck, "ip_json", lambda *a: [_link("lo", loopback=True), _link("eth9"), _link(egress.BRIDGE, "bridge")]
                        if a[0] == "-d" else [], raising=False)
    monkeypatch.setattr(wirecheck, "uplinks", lambda: ["eth9"], raising=False)  # what the check before issue 41 watched
    monkeypatch.setattr(wirecheck, "_docker", _no_docker, raising=False)  # no cluster on the network
    state = types.SimpleNamespace(after={}, pids=pids, reports=tmp_path / "reports", calls=0)

    def counts(guard):
        state.calls += 1
        return {(f, r.label): (state.after.get(r.label, 0) if state.calls > 1 else 0) for f in (4, 6) for r in guard.rules(f)}
    monkeypatch.setattr(egress.HostGuard, "counts", counts, raising=False)
    return state


def _kill_uplink_capture(pids, sig: str = "SIGKILL") -> list[str]:
    """A command that kills the uplink's capture mid-run, then runs on for a while."""
    code = (f"import os, signal, time, pathlib\ntime.sleep(0.5)\n"
            f"os.kill(int(pathlib.Path({str(pids / 'eth9.pid')!r}).read_text()), signal.{sig})\ntime.sleep(1.0)\n")
    return [sys.executable, "-c", code]


def test_the_check_passes_when_every_capture_ran_and_nothing_was_seen(fake_wire, capsys):
    """The control for the tests below: the same fake wire, nothing killed, nothing refused."""
    assert wirecheck.main(["--reports", str(fake_wire.reports), "--egress", "public", "--", sys.executable, "-c", "pass"]) == 0
    assert "PASS: no packet left the machine" in capsys.readouterr().out
    assert json.loads((fake_wire.reports / "wire-check.json").read_text())["problems"] == []


@pytest.mark.parametrize("sig", ["SIGKILL", "SIGINT"])
def test_a_capture_killed_mid_run_fails_the_check(fake_wire, capsys, sig):
    """Issue 41: a tcpdump that died during the command counted 0 packets and printed PASS. One
    killed by SIGINT even exits 0 with its statistics, as at a normal stop: only that it ended
    before it was stopped shows it."""
    status = wirecheck.main(["--reports", str(fake_wire.reports), "--egress", "public", "--", *_kill_uplink_capture(fake_wire.pids, sig)])
    out = capsys.readouterr().out
    assert status == wirecheck.EXIT_LEAK, out
    assert "FAIL: 0 packet(s)" in out and "tcpdump on eth9 (uplink) ended before the command did: " in out, out
    problems = json.loads((fake_wire.reports / "wire-check.json").read_text())["problems"]
    assert len(problems) == 1 and ("killed by SIGKILL" if sig == "SIGKILL" else "exit status 0") in problems[0]


def test_a_capture_without_statistics_or_failing_at_its_stop_fails_the_check(fake_wire, monkeypatch, capsys):
    monkeypatch.setenv("FAKE_TCPDUMP_STATS", "tcpdump: pcap_loop: The interface disappeared\n")
    monkeypatch.setenv("FAKE_TCPDUMP_EXIT", "1")
    assert wirecheck.main(["--reports", str(fake_wire.reports), "--", sys.executable, "-c", "pass"]) == wirecheck.EXIT_LEAK
    problems = json.loads((fake_wire.reports / "wire-check.json").read_text())["problems"]
    assert "tcpdump on eth9 (uplink) exited with status 1 when stopped: tcpdump: pcap_loop: The interface disappeared" in problems
    assert any(p.startswith("tcpdump on eth9 (uplink) printed no 'dropped by kernel' figure") for p in problems)


def test_a_packet_a_node_sent_to_198_18_0_1_online_fails_the_check(fake_wire, capsys):
    """Issue 41: online, the host guard let 198.18.0.0/15 through and nothing counted it. Now
    the guard refuses it, and the check reads the guard's counter: one refused packet fails it."""
    fake_wire.after = {"198.18.0.0/15 benchmarking (RFC 2544)": 1}
    status = wirecheck.main(["--reports", str(fake_wire.reports), "--egress", "public", "--", sys.executable, "-c", "pass"])
    out = capsys.readouterr().out
    assert status == wirecheck.EXIT_LEAK, out
    assert (f"host guard refused 1 packet(s) from {egress.BRIDGE} to 198.18.0.0/15 benchmarking (RFC 2544): "
            "something on the suite's network tried to leave the machine") in out
    assert "| 198.18.0.0/15 benchmarking (RFC 2544) | 4 | 1 | yes |" in out


def test_the_guard_counters_fail_on_a_refused_leak_only():
    guard = egress.HostGuard(egress.EGRESS_NONE, dns=["10.255.255.53"])
    rules = {f: guard.rules(f) for f in (4, 6)}
    before = {(f, r.label): 7 for f in (4, 6) for r in rules[f]}
    dns = "DNS (udp) to the host resolver 10.255.255.53, refused offline"
    after = {**before, (4, dns): 12, (6, "2002::/16 6to4 (RFC 3056, RFC 7526)"): 9}
    rows, problems = wirecheck.guard_problems(rules, before, after)
    assert rows == [{"family": 4, "rule": dns, "packets": 5, "denied": False},
                    {"family": 6, "rule": "2002::/16 6to4 (RFC 3056, RFC 7526)", "packets": 2, "denied": True}]
    assert problems == [f"host guard refused 2 packet(s) from {egress.BRIDGE} to 2002::/16 6to4 (RFC 3056, RFC 7526): "
                        "something on the suite's network tried to leave the machine"]
    # a chain another run rewrote (its counters start again) hides what it refused: unknown, not 0
    rewritten = {**before, (4, "198.18.0.0/15 benchmarking (RFC 2544)"): 0}
    del rewritten[(6, "ff00::/8 multicast (RFC 4291)")]
    _, problems = wirecheck.guard_problems(rules, before, rewritten)
    assert problems == [
        "host guard (IPv4): 1 rule(s) rewritten or removed during the run, so what they refused is unknown: "
        "'198.18.0.0/15 benchmarking (RFC 2544)'",
        "host guard (IPv6): 1 rule(s) rewritten or removed during the run, so what they refused is unknown: 'ff00::/8 multicast (RFC 4291)'"]
    # no guard at all (not root, iptables failing): nothing shows what was refused
    _, problems = wirecheck.guard_problems(rules, {}, {})
    assert [p.split(":")[0] for p in problems] == ["host guard (IPv4)", "host guard (IPv6)"]
    assert "20 rule(s) not in place when the command started" in problems[0] and problems[0].endswith("and 17 more")


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("tcpdump"), reason="needs root and tcpdump")
def test_a_real_tcpdump_killed_mid_run_is_noticed(tmp_path):
    """The real tcpdump, on loopback (nothing leaves it; only its life matters here): stopped at
    the end it reports 0 dropped and passes; terminated during the command it exits 0 with its
    statistics all the same, and only the poll shows that it ended early."""
    for kill in (False, True):
        capture, pcap = Capture("uplink", "lo", "udp port 9 and host 127.0.0.1", "out"), tmp_path / f"{kill}.pcap"
        proc = wirecheck._start(capture, pcap)
        watch = wirecheck.Watch([capture], [proc], ["lo"], runner=_no_docker, links=lambda: [_link("lo", loopback=True)])
        command = ["sh", "-c", f"sleep 0.5; kill -TERM {proc.pid}; sleep 2" if kill else "sleep 1"]
        assert wirecheck.run_command(command, watch) == 0
        wirecheck._stop(capture, proc, pcap, watch.started)
        if kill:
            assert capture.status == 0 and capture.died.startswith("exit status 0, ")
            assert capture.problems()[0].startswith("tcpdump on lo (uplink) ended before the command did: exit status 0, ")
            assert "dropped by kernel" in capture.died  # its statistics, in the message
        else:
            assert (capture.status, capture.dropped, capture.died, capture.problems()) == (0, 0, "", [])


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("tcpdump"), reason="needs root and tcpdump")
def test_the_kernel_drops_the_other_direction_before_tcpdump_s_queue(tmp_path):
    """Loopback carries each packet twice, sent (outgoing) and received: only the received
    copies pass the bridge capture's kernel filter. With ``-Q in`` alone both were "received by
    filter" and libpcap threw half away after the queue — on the bridge, ≈ 120,000 a run, which
    overflowed it under load ("dropped by kernel": the check could not see the whole run). A
    packet the filter passed and the file lacks fails the check (here libpcap 1.10.3 in
    immediate mode writes 9 of the 10; without it, 0: the open block never reached the file)."""
    capture, pcap = Capture("bridge", "lo", "udp port 9 and host 127.0.0.1", "in"), tmp_path / "in.pcap"
    proc = wirecheck._start(capture, pcap)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for _ in range(10):
            s.sendto(b"x", ("127.0.0.1", 9))
    time.sleep(0.5)
    wirecheck._stop(capture, proc, pcap, time.monotonic())
    assert capture.received == 10 and 1 <= len(capture.packets) <= 10, capture.stderr
    lost = [p for p in capture.problems() if "passed its kernel filter" in p]
    assert lost == ([] if len(capture.packets) == 10 else [f"tcpdump on lo (bridge): {10 - len(capture.packets)} packet(s) passed "
                                                           "its kernel filter (each one counts) but are not in its capture"])


KUBEADM_CONF = """apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: v1.37.2
networking:
  podSubnet: {pods}
  serviceSubnet: {services}
---
apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
"""


def test_the_clusters_own_ranges_are_read_and_their_node_guard_checked():
    """Issue 41: the check assumed 10.96.0.0/16 and 10.244.0.0/16. It reads each node's own
    kubeadm configuration and checks that its ranges are non-public and its guard is for them."""
    files = {
        ("ple2e-a-control-plane", wirecheck.KUBEADM_CONF): KUBEADM_CONF.format(pods="10.244.0.0/16", services="10.96.0.0/16"),
        ("ple2e-a-control-plane", egress.NODE_SCRIPT): egress.node_guard_script(["10.244.0.0/16"], ["10.96.0.0/16"]),
        ("ple2e-b-control-plane", wirecheck.KUBEADM_CONF): KUBEADM_CONF.format(pods="10.245.0.0/16", services="10.97.0.0/16"),
        ("ple2e-b-control-plane", egress.NODE_SCRIPT): egress.node_guard_script(["10.245.0.0/16"], ["10.96.0.0/16"]),
        ("ple2e-c-control-plane", wirecheck.KUBEADM_CONF): KUBEADM_CONF.format(pods="10.244.0.0/16", services="1.2.3.0/24"),
        ("ple2e-c-control-plane", egress.NODE_SCRIPT): egress.node_guard_script(["10.244.0.0/16"], ["1.2.3.0/24"]),
    }
    nodes = ["ple2e-a-control-plane\tple2e-a", "ple2e-b-control-plane\tple2e-b", "ple2e-c-control-plane\tple2e-c",
             "ple2e-d-control-plane\tple2e-d"]

    def docker(cmd):
        if cmd[1] == "ps":
            return subprocess.CompletedProcess(cmd, 0, "\n".join(nodes) + "\n", "")
        text = files.get((cmd[2], cmd[4]))
        return subprocess.CompletedProcess(cmd, 0 if text else 1, text or "", "" if text else "No such file or directory")
    watch = wirecheck.Watch([], [], [], runner=docker, links=lambda: [])
    watch()
    nodes.pop()  # d: deleted before kind wrote its kubeadm config
    watch()
    assert (watch.clusters["ple2e-a"].service_subnets, watch.clusters["ple2e-a"].pod_subnets) == (["10.96.0.0/16"], ["10.244.0.0/16"])
    assert watch.clusters["ple2e-a"].problems == []
    assert watch.clusters["ple2e-b"].problems == [
        "cluster ple2e-b: node ple2e-b-control-plane's guard rejects ['10.96.0.0/16'] and routes ['10.245.0.0/16'] unreachable, "
        "but the cluster's Service range is ['10.97.0.0/16'] and its pod range ['10.245.0.0/16']"]
    assert watch.clusters["ple2e-c"].problems[0].startswith("cluster ple2e-c: its Service range 1.2.3.0/24 is public address space")
    assert watch.problems()[-1] == ("cluster ple2e-d: node ple2e-d-control-plane was gone before its ranges were read "
                                    "(/kind/kubeadm.conf not readable: No such file or directory)")
