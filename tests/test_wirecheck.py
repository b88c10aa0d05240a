"""The wire check (e2e.cli.wirecheck): what each capture counts, the resolvers, the report, bad input."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time

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
    capture = Capture("bridge", egress.BRIDGE, wirecheck.bridge_filter(["10.244.0.0/16", "10.96.0.0/16"]), "in", promiscuous=False)
    args = capture.args("x.pcap")
    assert args[:5] == ["tcpdump", "-i", egress.BRIDGE, "-Q", "in"]
    assert "-p" in args  # frames for the bridge's own MAC: routed by the host, not node to node
    assert args[-1] == "dst net 10.244.0.0/16 or dst net 10.96.0.0/16"


def test_report_counts_every_packet_and_fails_on_any():
    leak = "2026-12-01 15:00:00.000000 IP 192.0.2.2.59620 > 10.96.0.1.443: Flags [S]"
    caps = [Capture("uplink", "eth0", "f", "out", packets=[leak] * 85), Capture("bridge", egress.BRIDGE, "g", "in")]
    data, text = wirecheck.report(caps, ["pytest"], 0, 12.0)
    assert data["packets"] == 85 and data["captures"][0]["count"] == 85 and data["captures"][1]["count"] == 0
    assert len(data["captures"][0]["packets"]) == wirecheck.SHOWN
    assert "FAIL: 85 packet(s)" in text and leak in text and "| uplink | eth0 | out | 85 |" in text
    json.dumps(data)
    clean = [Capture("uplink", "eth0", "f", "out")]
    _, text = wirecheck.report(clean, ["pytest"], 0, 1.0)
    assert "PASS: no packet left the machine" in text


def test_dropped_packets_fail_the_check():
    data, text = wirecheck.report([Capture("uplink", "eth0", "f", "out", dropped=3)], ["pytest"], 0, 1.0)
    assert data["dropped"] == 3 and "tcpdump dropped 3" in text


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


def _ipv4_tcp(src: str, dst: str, ttl: int, dport: int = 443) -> bytes:
    import ipaddress
    import struct
    tcp = struct.pack("!HHIIBBHHH", 40000, dport, 0, 0, 5 << 4, 0x02, 64240, 0, 0)
    head = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 0, 0, ttl, 6, 0,
                       ipaddress.IPv4Address(src).packed, ipaddress.IPv4Address(dst).packed)
    return head + tcp


@pytest.mark.skipif(not shutil.which("tcpdump"), reason="tcpdump not installed (apt-get install tcpdump; .ci/run does)")
def test_the_uplink_filter_counts_forwarded_and_non_public_packets_only(tmp_path):
    """tcpdump itself applies the filter to packets as they would leave the uplink."""
    packets = {
        "a node's SYN to the Service address, masqueraded (TTL 63)": (_ipv4_tcp("192.0.2.2", "10.96.0.1", 63), True),
        "a pod's packet to a public address, forwarded twice (TTL 62)": (_ipv4_tcp("192.0.2.2", "151.101.0.223", 62), True),
        "the host itself to a pod address (TTL 64)": (_ipv4_tcp("192.0.2.2", "10.244.0.7", 64), True),
        "the host's own pip install (TTL 64, public)": (_ipv4_tcp("192.0.2.2", "151.101.0.223", 64), False),
        "the host's DNS to its resolver": (_ipv4_tcp("192.0.2.2", "10.255.255.53", 64, dport=53), False),
        "a node's DNS query forwarded to the resolver (TTL 63)": (_ipv4_tcp("192.0.2.2", "10.255.255.53", 63, dport=53), True),
    }
    pcap = tmp_path / "uplink.pcap"
    _pcap(pcap, [p for p, _ in packets.values()])
    for mode, expected in ((egress.EGRESS_NONE, [w for _, w in packets.values()]),
                           (egress.EGRESS_PUBLIC, [True, False, True, False, False, False])):
        bpf = wirecheck.uplink_filter(["10.255.255.53"], mode, (64, 64))
        out = subprocess.run(["tcpdump", "-r", str(pcap), "-n", "-tt", bpf], capture_output=True, text=True, check=True).stdout
        seen = {int(float(line.split()[0])) - 1_700_000_000 for line in out.splitlines() if line.strip()}
        assert [i in seen for i in range(len(packets))] == expected, (mode, list(packets), out)


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
