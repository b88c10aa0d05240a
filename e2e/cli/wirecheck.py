"""``make wire-check``: run a command (``make e2e``'s pytest) while tcpdump watches the wire, and
fail on any packet that leaves the machine (issue 31; :mod:`e2e.cluster.egress` is what prevents them).

``python -m e2e.cli.wirecheck --reports DIR [--egress none|public] -- COMMAND...`` (root, tcpdump):

1. Puts the egress guard in place as a run would (:func:`e2e.cluster.egress.prepare`: the suite's
   network and the host layer) and holds it for the whole command, so the bridge exists to be
   watched before the first node does.
2. Captures, until the command ends:

   - **uplink**: every interface that carries a default route (IPv4 or IPv6), outgoing packets
     only (``-Q out``): every packet the host **forwarded** (its TTL/hop limit below the host's
     own: it came from a node, a pod or a container, whatever its address after masquerading)
     and every packet for a **non-public** range (:data:`e2e.cluster.egress.NON_PUBLIC`, the host's
     own too), except the host's own DNS to the configured resolvers (``/etc/resolv.conf``; a
     node's query forwarded there counts offline) and the host's link
     housekeeping (:data:`LINK_FILTER`). With ``--egress public`` (an online node image may pull
     from public registries) only the non-public part counts. The host's own traffic to public
     addresses (a package registry, a browser) is not the suite's: a first version that counted
     it failed on a helper's ``pip install`` during the run.
   - **bridge**: packets the nodes hand to the host (``-p``: frames for the bridge's own MAC,
     ``-Q in``) addressed to the pod or Service subnets: what the host would forward elsewhere.
     The node guard keeps this at 0 by itself.
3. Writes ``DIR/wire-check.json`` and ``DIR/wire-check.md`` (the counts, the filters, the first
   packets), keeps each capture as ``DIR/wire-<capture>-<interface>.pcap`` and appends the
   counts to ``DIR/summary.md``.

Exit status: the command's when it failed; else 3 when any packet was captured or tcpdump lost
packets; 2 on bad input (not root, no tcpdump, no command). The counts are printed either way.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..cluster import kind as cluster, egress

# Exit status when the command passed but packets left (or may have: tcpdump dropped some).
EXIT_LEAK = 3
EXIT_USAGE = 2
# Seconds tcpdump gets to start listening, and to flush and exit after SIGINT.
TCPDUMP_START_S = 20
TCPDUMP_STOP_S = 20
# Packets listed per capture in the report (the count is always whole).
SHOWN = 40
# The host's own link housekeeping, which never leaves the link: ICMPv6 neighbour discovery
# (RFC 4861 types 133-137, unicast to a gateway too) and link-scope destinations — IPv6
# link-local and link-local multicast (MLD reports to ff02::16, seen when tcpdump turns on
# promiscuous mode), IPv4 local network control multicast (224.0.0.0/24, RFC 5771).
LINK_FILTER = "(icmp6 and ip6[40] >= 133 and ip6[40] <= 137) or dst net fe80::/10 or dst net ff02::/16 or dst net 224.0.0.0/24"


@dataclass
class Capture:
    """One tcpdump: its interface, direction, filter; after :meth:`stop` the packets seen
    (tcpdump's one-line text each), and the kernel's drop count."""

    name: str
    interface: str
    bpf: str
    direction: str
    promiscuous: bool = True
    packets: list[str] = field(default_factory=list)
    dropped: int = 0

    def args(self, pcap: Path) -> list[str]:
        return ["tcpdump", "-i", self.interface, "-Q", self.direction, "-n", "-U", "-w", str(pcap),
                *([] if self.promiscuous else ["-p"]), self.bpf]


def uplinks() -> list[str]:
    """Interfaces that carry a default route (``ip -j route show default``, IPv4 and IPv6)."""
    devs: set[str] = set()
    for family in ("-4", "-6"):
        r = subprocess.run(["ip", "-j", family, "route", "show", "default"], capture_output=True, text=True)
        if r.returncode == 0 and r.stdout.strip():
            devs |= {route["dev"] for route in json.loads(r.stdout) if route.get("dev")}
    return sorted(devs - {egress.BRIDGE})


def host_hop_limits() -> tuple[int, int]:
    """The TTL (IPv4) and hop limit (IPv6) the host's own packets leave with
    (``net.ipv4.ip_default_ttl``, ``net.ipv6.conf.all.hop_limit``; 64 and 64 where unreadable)."""
    def read(path: str) -> int:
        try:
            return int(Path(path).read_text().strip())
        except (OSError, ValueError):
            return 64
    return read("/proc/sys/net/ipv4/ip_default_ttl"), read("/proc/sys/net/ipv6/conf/all/hop_limit")


def uplink_filter(dns: list[str], mode: str, hop_limits: tuple[int, int] = (64, 64)) -> str:
    """The BPF filter of the uplink capture (module doc): a packet counts when it is **forwarded**
    (the kernel decremented its TTL/hop limit below the host's own ``hop_limits``: it came from a
    container, a node or a pod, whatever its address after masquerading) or addressed to a
    **non-public** range (also from the host itself: the suite sends nothing there); with
    :data:`e2e.cluster.egress.EGRESS_PUBLIC` only the non-public part. Never: the host's link
    housekeeping, the host's own DNS to ``dns`` (offline, a node's query that Docker's embedded
    DNS forwards to them counts: it is forwarded; online, nodes may resolve through them). The host's own traffic to public addresses (a package
    registry, a person's browser) is not the suite's and does not count."""
    non_public = "(" + " or ".join(f"dst net {r.network}" for family in (4, 6) for r in egress.NON_PUBLIC[family]) + ")"
    ttl, hops = hop_limits
    forwarded = f"((ip and ip[8] < {ttl}) or (ip6 and ip6[7] < {hops}))"
    parts = ["(ip or ip6)", f"not ({LINK_FILTER})"]
    if mode == egress.EGRESS_PUBLIC:
        parts += [f"not (dst host {a} and port 53)" for a in dns]
        parts.append(non_public)
    else:  # offline: a node's query forwarded to the resolver counts; only the host's own is exempt
        parts += [f"not (dst host {a} and port 53 and not {forwarded})" for a in dns]
        parts.append(f"({forwarded} or {non_public})")
    return " and ".join(parts)


def bridge_filter(subnets: list[str]) -> str:
    """The BPF filter of the bridge capture: destinations in ``subnets``."""
    return " or ".join(f"dst net {s}" for s in subnets)


def run_command(command: list[str]) -> int:
    """Run ``command`` to its end and return its exit status. A Ctrl-C reaches it with this
    process (same process group); a SIGTERM sent to this process alone is passed on to it (the
    suite stops on SIGTERM as on Ctrl-C, with its cleanup and reports): either way the check
    outlives the command, stops its captures and writes its report — killed outright, it left
    tcpdump running and no report (session 9)."""
    proc = subprocess.Popen(command)
    previous = signal.signal(signal.SIGTERM, lambda *_: proc.send_signal(signal.SIGTERM))
    try:
        while True:
            try:
                return proc.wait()
            except KeyboardInterrupt:
                continue  # the command got the same Ctrl-C: let it clean up and write its reports
    finally:
        signal.signal(signal.SIGTERM, previous)


def _start(capture: Capture, pcap: Path) -> subprocess.Popen:
    proc = subprocess.Popen(capture.args(pcap), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + TCPDUMP_START_S
    assert proc.stderr is not None
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if "listening on" in line:
            return proc
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise RuntimeError(f"tcpdump on {capture.interface} did not start: {proc.stderr.read().strip() or 'no answer'}")


def _stop(capture: Capture, proc: subprocess.Popen, pcap: Path) -> None:
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=TCPDUMP_STOP_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    for line in (err or "").splitlines():
        words = line.split()
        if "dropped by kernel" in line and words and words[0].isdigit():
            capture.dropped = int(words[0])
    r = subprocess.run(["tcpdump", "-r", str(pcap), "-n", "-tttt"], capture_output=True, text=True)
    capture.packets = [line for line in r.stdout.splitlines() if line.strip()]


def report(captures: list[Capture], command: list[str], status: int, wall_s: float) -> tuple[dict, str]:
    """The JSON and markdown of a finished check."""
    leaks = sum(len(c.packets) for c in captures)
    data = {
        "command": command, "command_status": status, "wall_s": round(wall_s, 1),
        "packets": leaks, "dropped": sum(c.dropped for c in captures),
        "captures": [{**asdict(c), "packets": c.packets[:SHOWN], "count": len(c.packets)} for c in captures],
    }
    verdict = "PASS: no packet left the machine" if not leaks and not data["dropped"] else \
        f"FAIL: {leaks} packet(s) left or would have left the machine" + (f", tcpdump dropped {data['dropped']}" if data["dropped"] else "")
    lines = ["## Wire check", "", verdict, "", "| capture | interface | direction | packets | filter |", "|---|---|---|---|---|"]
    lines += [f"| {c.name} | {c.interface} | {c.direction} | {len(c.packets)} | `{c.bpf}` |" for c in captures]
    lines += ["", f"command: `{' '.join(command)}` (exit {status}, {wall_s:.0f} s)"]
    for c in captures:
        if c.packets:
            lines += ["", f"### {c.name} on {c.interface}: first {min(SHOWN, len(c.packets))} of {len(c.packets)}", "", "```",
                      *c.packets[:SHOWN], "```"]
    return data, "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m e2e.cli.wirecheck", description=__doc__.split("\n\n")[0])
    parser.add_argument("--reports", type=Path, default=Path("reports"), help="reports directory (default: reports)")
    parser.add_argument("--egress", choices=egress.EGRESS_MODES, default=None,
                        help="what may leave: none (offline image) or public; default $E2E_EGRESS or public")
    parser.add_argument("--pod-subnet", default=cluster.KIND_POD_SUBNET, help=f"(default {cluster.KIND_POD_SUBNET})")
    parser.add_argument("--service-subnet", default=egress.KIND_SERVICE_SUBNET, help=f"(default {egress.KIND_SERVICE_SUBNET})")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND...: what runs while the wire is watched")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to watch after --")
    if os.geteuid() != 0:
        print("wire check: needs root (tcpdump and the host guard)", file=sys.stderr)
        return EXIT_USAGE
    if not shutil.which("tcpdump"):
        print("wire check: tcpdump is not installed (Debian: apt-get install tcpdump)", file=sys.stderr)
        return EXIT_USAGE
    if args.egress:
        os.environ["E2E_EGRESS"] = args.egress
    mode = egress.egress_mode()
    devs = uplinks()
    if not devs:
        print("wire check: no interface carries a default route: nothing to watch", file=sys.stderr)
        return EXIT_USAGE
    print(egress.prepare(), file=sys.stderr)
    captures = [Capture("uplink", dev, uplink_filter(egress.resolvers(), mode, host_hop_limits()), "out") for dev in devs]
    captures.append(Capture("bridge", egress.BRIDGE, bridge_filter(egress.subnets(f"{args.pod_subnet},{args.service_subnet}")),
                            "in", promiscuous=False))
    args.reports.mkdir(parents=True, exist_ok=True)
    status, started = 1, time.monotonic()
    with tempfile.TemporaryDirectory(prefix="wirecheck-") as tmp:
        pcaps = [Path(tmp) / f"{i}.pcap" for i in range(len(captures))]
        procs = []
        try:
            for capture, pcap in zip(captures, pcaps, strict=True):
                procs.append(_start(capture, pcap))
                print(f"wire check: watching {capture.name} {capture.interface} ({capture.direction}): {capture.bpf}", file=sys.stderr)
            status = run_command(command)
        finally:
            for capture, proc, pcap in zip(captures, procs, pcaps, strict=False):
                _stop(capture, proc, pcap)
                shutil.copyfile(pcap, args.reports / f"wire-{capture.name}-{capture.interface}.pcap")
            egress.release()
    data, text = report(captures, command, status, time.monotonic() - started)
    (args.reports / "wire-check.json").write_text(json.dumps(data, indent=2) + "\n")
    (args.reports / "wire-check.md").write_text(text)
    with open(args.reports / "summary.md", "a") as f:
        f.write("\n" + text)
    print(text)
    if status != 0:
        return status
    return EXIT_LEAK if data["packets"] or data["dropped"] else 0


if __name__ == "__main__":
    sys.exit(main())
