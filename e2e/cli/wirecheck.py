"""``make wire-check``: run a command (``make e2e``'s pytest) while tcpdump watches the wire, and
fail on any packet that leaves the machine or tried to (issues 31 and 41; :mod:`e2e.cluster.egress`
is what prevents them).

``python -m e2e.cli.wirecheck --reports DIR [--egress none|public] -- COMMAND...`` (root, tcpdump):

1. Puts the egress guard in place as a run would (:func:`e2e.cluster.egress.prepare`: the suite's
   network and the host layer) and holds it for the whole command, so the bridge exists to be
   watched before the first node does.
2. Captures, until the command ends:

   - **uplink**: every interface of the host that can carry a packet off the machine
     (:func:`watched_interfaces`: every interface that is up, not only those with a default
     route — a second NIC, a VPN's tun or a policy route carries packets too), outgoing packets
     only (``-Q out``): every packet the host **forwarded** (its TTL/hop limit below the host's
     own: it came from a node, a pod or a container, whatever its address after masquerading)
     and every packet for a **non-public** range (:data:`e2e.cluster.egress.NON_PUBLIC`, the
     host's own too), except the host's own DNS to the configured resolvers
     (``/etc/resolv.conf``; a node's query forwarded there counts offline) and the host's link
     housekeeping (:data:`LINK_FILTER`). With ``--egress public`` (an online node image may pull
     from public registries) only the non-public part counts. The host's own traffic to public
     addresses (a package registry, a browser) is not the suite's: a first version that counted
     it failed on a helper's ``pip install`` during the run.
   - **bridge**: the packets the nodes hand to the host (``-p``: frames for the bridge's own
     MAC, ``-Q in``) for a **non-public** destination that is not the host itself (its own
     addresses: published ports answer to the bridge's gateway) and not DNS to the resolvers —
     what the host would forward to a non-public address; the pod and Service subnets of kind
     clusters lie in that space (checked, below). Counted whether or not the guard then
     refuses it: it is a packet that tried to leave, seen before any rule of the host, so a
     guard that is missing or misplaced cannot hide it.

3. Reads the host guard's counters (:meth:`e2e.cluster.egress.HostGuard.counts`) before and after
   the command: a packet the guard refused for a non-public destination (offline: for any
   destination) tried to leave — it fails the check, though it never reached the wire. DNS a
   node sent to the host's resolvers offline is refused and reported, not failed: Docker's
   embedded DNS forwards the node's own queries from the node's namespace.
4. Learns the Service and pod ranges of every kind cluster on the suite's network while the
   command runs, from the cluster's own configuration (``/kind/kubeadm.conf`` in each node, what
   kubeadm ran with, patches included), and checks that they are non-public (the captures and the
   guard count non-public destinations) and that the node's guard
   (:func:`e2e.cluster.egress.node_guard_script`) is the one for exactly these ranges.
5. Writes ``DIR/wire-check.json`` and ``DIR/wire-check.md`` (the counts, the filters, the first
   packets, every reason to fail), keeps each capture as ``DIR/wire-<capture>-<interface>.pcap``
   and appends the report to ``DIR/summary.md``.

The check passes only when it saw the whole command: every tcpdump ran until it was stopped
(polled every :data:`POLL_S`; one that exits early, or not with status 0 after SIGINT, fails it
with its interface, status and stderr), reported its statistics with 0 packets "dropped by
kernel" and no more "received by filter" than its capture file holds (its kernel filter passes
only packets that count, direction included, :attr:`Capture.kernel_filter`; no such figure counts
as unknown, not as 0), no interface that can carry a packet off came up unwatched during the run,
and the guard's counters were not rewritten meanwhile.

Exit status: the command's when it failed; else 3 when a packet left or tried to leave, or the
check could not see the whole command; 2 on bad input (not root, no tcpdump, no command, nothing
to watch). The counts are printed either way.
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
from typing import Callable, Sequence

import yaml

from ..cluster import kind as cluster, egress

# Exit status when the command passed but packets left, tried to, or the check could not see it all.
EXIT_LEAK = 3
EXIT_USAGE = 2
# Seconds tcpdump gets to start listening, and to flush and exit after SIGINT.
TCPDUMP_START_S = 20
TCPDUMP_STOP_S = 20
# Seconds between two looks at the captures, the interfaces and the clusters while the command runs.
POLL_S = 1.0
# Packets listed per capture in the report (the count is always whole).
SHOWN = 40
# The host's own link housekeeping, which never leaves the link: ICMPv6 neighbour discovery
# (RFC 4861 types 133-137, unicast to a gateway too), link-scope destinations — IPv6
# link-local and link-local multicast (MLD reports to ff02::16, seen when tcpdump turns on
# promiscuous mode), IPv4 local network control multicast (224.0.0.0/24, RFC 5771) — and the
# host's DHCP client (UDP 68 → 67, RFC 2131: to its server or to 255.255.255.255).
LINK_FILTER = ("(icmp6 and ip6[40] >= 133 and ip6[40] <= 137) or dst net fe80::/10 or dst net ff02::/16"
               " or dst net 224.0.0.0/24 or (udp and src port 68 and dst port 67)")
# Where kind keeps the kubeadm configuration a node was set up with (kind v0.33.0
# pkg/cluster/internal/create/actions/config/config.go: the rendered config, patches applied).
KUBEADM_CONF = "/kind/kubeadm.conf"


@dataclass
class Capture:
    """One tcpdump: its interface, direction, filter; once stopped, the packets seen (tcpdump's
    one-line text each), tcpdump's exit status, its stderr, its "dropped by kernel" and "received
    by filter" figures (None: tcpdump printed none), ``died``: how it ended before it was stopped
    ("" when it ran for the whole command), and ``unread``: why its capture file could not be read
    whole."""

    name: str
    interface: str
    bpf: str
    direction: str
    promiscuous: bool = True
    packets: list[str] = field(default_factory=list)
    dropped: int | None = None
    received: int | None = None
    status: int | None = None
    died: str = ""
    stderr: str = ""
    unread: str = ""

    @property
    def kernel_filter(self) -> str:
        """:attr:`bpf` behind the direction, both run by the kernel (``inbound``/``outbound``:
        the packet type, Linux's ``SKF_AD_PKTTYPE``). tcpdump's ``-Q`` drops the other direction
        only in libpcap, after the kernel queued it: on the bridge that was every packet the host
        sends its nodes (≈ 120,000 a run, all "received by filter", none captured), and a
        busy host's queue overflowed with them — "dropped by kernel", so the check could not
        tell whether a packet it had to count was lost among them (session 26: 5 on a foreign run)."""
        return f"{'inbound' if self.direction == 'in' else 'outbound'} and ({self.bpf})"

    def args(self, pcap: Path) -> list[str]:
        # --immediate-mode: each packet as it comes; TPACKET_V3 otherwise holds a block up to tcpdump's
        # 1 s timeout, and the block open at SIGINT never reaches the file ("received by filter" only)
        return ["tcpdump", "-i", self.interface, "--immediate-mode", "-n", "-U", "-w", str(pcap),
                *([] if self.promiscuous else ["-p"]), self.kernel_filter]

    def problems(self) -> list[str]:
        """Why this capture does not show the whole command (empty when it does)."""
        where = f"tcpdump on {self.interface} ({self.name})"
        if self.died:
            return [f"{where} ended before the command did: {self.died}"]
        out = []
        if self.status != 0:
            out.append(f"{where} exited with status {self.status} when stopped: {self.stderr or 'no message'}")
        if self.dropped is None:
            out.append(f"{where} printed no 'dropped by kernel' figure: what it lost is unknown ({self.stderr or 'no message'})")
        elif self.dropped:
            out.append(f"{where}: {self.dropped} packet(s) dropped by kernel, not seen")
        if self.received is None:
            out.append(f"{where} printed no 'received by filter' figure: what its filter passed is unknown "
                       f"({self.stderr or 'no message'})")
        elif self.received > len(self.packets):
            out.append(f"{where}: {self.received - len(self.packets)} packet(s) passed its kernel filter (each one counts) "
                       "but are not in its capture")
        if self.unread:
            out.append(f"{where}: its capture file could not be read whole: {self.unread}")
        return out


def watched_interfaces(links: list[dict]) -> tuple[list[str], dict[str, str]]:
    """``(watched, {skipped: why})`` from ``ip -j -d link show``'s list. Watched: every interface
    of the host's network namespace that is up (``IFF_UP``), whatever its routes — a packet may
    leave by a second NIC, a VPN's tun or a policy route, not only by the default route. Skipped,
    as none can carry a packet off the machine: loopback; the suite's bridge :data:`BRIDGE`
    (its own capture); a veth (its other end is a local container's namespace: what that
    container forwards leaves through one of the host's watched interfaces); a bridge whose every
    port is a veth, or that has none (Docker's ``docker0`` and other networks: local containers
    only; a bridge with a physical port is watched); an interface that is down (one that comes
    up during the run fails the check, :func:`main`)."""
    ports: dict[str, list[str]] = {}
    for link in links:
        if link.get("master"):
            ports.setdefault(link["master"], []).append(_link_kind(link))
    watched, skipped = [], {}
    for link in links:
        name, kind = link["ifname"], _link_kind(link)
        if "UP" not in link.get("flags", []):
            skipped[name] = "down"
        elif "LOOPBACK" in link.get("flags", []):
            skipped[name] = "loopback: never leaves the machine"
        elif name == egress.BRIDGE:
            skipped[name] = "the suite's bridge: its own capture"
        elif kind == "veth":
            skipped[name] = "veth: its other end is a local container"
        elif kind == "bridge" and all(k == "veth" for k in ports.get(name, [])):
            skipped[name] = "bridge of local containers only (no port but veths)"
        else:
            watched.append(name)
    return sorted(watched), skipped


def _link_kind(link: dict) -> str:
    return (link.get("linkinfo") or {}).get("info_kind", "")


def ip_json(*args: str) -> list[dict]:
    """``ip -j ARGS`` parsed; ``RuntimeError`` when ip fails."""
    r = subprocess.run(["ip", "-j", *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"`ip -j {' '.join(args)}` failed: {r.stderr.strip()}")
    return json.loads(r.stdout or "[]")


def host_addresses(addrs: list[dict]) -> list[str]:
    """The host's own addresses and IPv4 broadcast addresses, from ``ip -j addr show``."""
    out = set()
    for link in addrs:
        for a in link.get("addr_info", []):
            out |= {a[k] for k in ("local", "broadcast") if a.get(k)}
    return sorted(out)


def host_hop_limits() -> tuple[int, int]:
    """The TTL (IPv4) and hop limit (IPv6) the host's own packets leave with
    (``net.ipv4.ip_default_ttl``, ``net.ipv6.conf.all.hop_limit``; 64 and 64 where unreadable)."""
    def read(path: str) -> int:
        try:
            return int(Path(path).read_text().strip())
        except (OSError, ValueError):
            return 64
    return read("/proc/sys/net/ipv4/ip_default_ttl"), read("/proc/sys/net/ipv6/conf/all/hop_limit")


def non_public_filter() -> str:
    """BPF: the destination is in a range of :data:`e2e.cluster.egress.NON_PUBLIC`."""
    return "(" + " or ".join(f"dst net {r.network}" for family in (4, 6) for r in egress.NON_PUBLIC[family]) + ")"


def uplink_filter(dns: list[str], mode: str, hop_limits: tuple[int, int] = (64, 64)) -> str:
    """The BPF filter of the uplink capture (module doc): a packet counts when it is **forwarded**
    (the kernel decremented its TTL/hop limit below the host's own ``hop_limits``: it came from a
    container, a node or a pod, whatever its address after masquerading) or addressed to a
    **non-public** range (also from the host itself: the suite sends nothing there); with
    :data:`e2e.cluster.egress.EGRESS_PUBLIC` only the non-public part. Never: the host's link
    housekeeping, the host's own DNS to ``dns`` (offline, a node's query that Docker's embedded
    DNS forwards to them counts: it is forwarded; online, nodes may resolve through them). The
    host's own traffic to public addresses (a package registry, a person's browser) is not the
    suite's and does not count."""
    ttl, hops = hop_limits
    forwarded = f"((ip and ip[8] < {ttl}) or (ip6 and ip6[7] < {hops}))"
    parts = ["(ip or ip6)", f"not ({LINK_FILTER})"]
    if mode == egress.EGRESS_PUBLIC:
        parts += [f"not (dst host {a} and port 53)" for a in dns]
        parts.append(non_public_filter())
    else:  # offline: a node's query forwarded to the resolver counts; only the host's own is exempt
        parts += [f"not (dst host {a} and port 53 and not {forwarded})" for a in dns]
        parts.append(f"({forwarded} or {non_public_filter()})")
    return " and ".join(parts)


def bridge_filter(host: list[str], dns: list[str]) -> str:
    """The BPF filter of the bridge capture (module doc): a non-public destination, neither one
    of the ``host``'s own addresses (delivered to the host, never forwarded) nor DNS to ``dns``,
    and not link housekeeping."""
    parts = ["(ip or ip6)", f"not ({LINK_FILTER})"]
    parts += [f"not dst host {a}" for a in host]
    parts += [f"not (dst host {a} and port 53)" for a in dns]
    parts.append(non_public_filter())
    return " and ".join(parts)


@dataclass
class ClusterSeen:
    """A kind cluster seen on the suite's network: its nodes, the ranges read from its own
    kubeadm configuration (None until read), and what is wrong with them or its node guard."""

    name: str
    nodes: dict[str, str] = field(default_factory=dict)  # node → "checked" or why not yet
    pod_subnets: list[str] | None = None
    service_subnets: list[str] | None = None
    problems: list[str] = field(default_factory=list)


def kubeadm_ranges(text: str) -> tuple[list[str], list[str]]:
    """``(pod subnets, Service subnets)`` of the ``ClusterConfiguration`` in a kubeadm config
    (``networking.podSubnet``, ``networking.serviceSubnet``, comma-separated); ``ValueError``
    when there is none, or no range."""
    for doc in yaml.safe_load_all(text):
        if isinstance(doc, dict) and doc.get("kind") == "ClusterConfiguration":
            net = doc.get("networking") or {}
            pods, services = net.get("podSubnet"), net.get("serviceSubnet")
            if not pods or not services:
                raise ValueError(f"networking has no podSubnet or serviceSubnet: {net}")
            return egress.subnets(pods), egress.subnets(services)
    raise ValueError("no ClusterConfiguration")


def check_ranges(seen: ClusterSeen, node: str, kubeadm: str, guard_script: str | None) -> list[str]:
    """What is wrong with a node of ``seen``, given its kubeadm config and its node guard script
    (None: the node has none): a range that is public address space (the captures and the host
    guard count non-public destinations only), a guard made for other ranges, or none."""
    try:
        pods, services = kubeadm_ranges(kubeadm)
    except (ValueError, yaml.YAMLError, egress.EgressError) as e:
        return [f"cluster {seen.name}: cannot read the ranges of {node}'s {KUBEADM_CONF}: {e}"]
    seen.pod_subnets, seen.service_subnets = pods, services
    out = [f"cluster {seen.name}: its {what} range {net} is public address space, which the host guard lets through online "
           "and the captures do not count: give the cluster a non-public range"
           for what, nets in (("pod", pods), ("Service", services)) for net in nets if egress.reserved(net) is None]
    if guard_script is None:
        out.append(f"cluster {seen.name}: node {node} has no node guard ({egress.NODE_SCRIPT})")
        return out
    v4 = [n for n in pods if ":" not in n][:1]
    expected = egress.node_guard_script(v4, services)
    if guard_script != expected:
        rejects = [line.split(" -d ")[1].split()[0] for line in guard_script.splitlines() if " -j REJECT" in line and " -d " in line]
        routes = [line.split()[-1] for line in guard_script.splitlines() if "route replace unreachable" in line]
        out.append(f"cluster {seen.name}: node {node}'s guard rejects {rejects or 'nothing'} and routes {routes or 'nothing'} "
                   f"unreachable, but the cluster's Service range is {services} and its pod range {v4}")
    return out


def _docker(cmd: list[str]) -> subprocess.CompletedProcess:
    """Run a docker command; a hang (30 s) or a missing docker comes back as a failed run."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except (subprocess.TimeoutExpired, OSError) as e:
        return subprocess.CompletedProcess(cmd, 1, "", str(e))


class Watch:
    """What :func:`run_command` looks at every :data:`POLL_S` while the command runs: the
    captures (a tcpdump that exited is noted at once, with its status and stderr), the
    interfaces (one that can carry a packet off and was not watched from the start) and the kind
    clusters on the suite's network (their ranges, :func:`check_ranges`). ``runner(cmd)``
    returns a CompletedProcess (tests pass a fake); ``links()`` returns ``ip -j -d link show``."""

    def __init__(self, captures: list[Capture], procs: list[subprocess.Popen], watched: list[str],
                 runner: Callable[[list[str]], subprocess.CompletedProcess] | None = None,
                 links: Callable[[], list[dict]] | None = None):
        self.captures, self.procs, self.watched = captures, procs, set(watched)
        self.started = time.monotonic()
        self.unwatched: dict[str, str] = {}
        self.clusters: dict[str, ClusterSeen] = {}
        self._run = runner or _docker
        self._links = links or (lambda: ip_json("-d", "link", "show"))

    def __call__(self) -> None:
        for capture, proc in zip(self.captures, self.procs, strict=True):
            if not capture.died and proc.poll() is not None:
                note_death(capture, proc, time.monotonic() - self.started)
                print(f"wire check: FAIL ahead: {capture.problems()[0]}", file=sys.stderr)
        try:
            now, _ = watched_interfaces(self._links())
        except (RuntimeError, ValueError) as e:
            self.unwatched.setdefault("?", f"the interfaces could not be listed: {e}")
            now = []
        for name in set(now) - self.watched:
            self.unwatched.setdefault(name, f"came up {time.monotonic() - self.started:.0f} s into the run")
        self.look_at_clusters()

    def look_at_clusters(self) -> None:
        r = self._run(["docker", "ps", "--filter", f"network={egress.NETWORK}", "--filter", f"label={cluster.KIND_CLUSTER_LABEL}",
                       "--format", f'{{{{.Names}}}}\t{{{{.Label "{cluster.KIND_CLUSTER_LABEL}"}}}}'])
        for line in (r.stdout or "").splitlines() if r.returncode == 0 else []:
            node, _, name = line.partition("\t")
            seen = self.clusters.setdefault(name, ClusterSeen(name))
            if seen.nodes.get(node) == "checked":
                continue
            conf = self._run(["docker", "exec", node, "cat", KUBEADM_CONF])
            if conf.returncode != 0:  # kind writes it some seconds after the container starts
                seen.nodes[node] = f"{KUBEADM_CONF} not readable: {(conf.stderr or '').strip()}"
                continue
            script = self._run(["docker", "exec", node, "cat", egress.NODE_SCRIPT])
            seen.problems += check_ranges(seen, node, conf.stdout, script.stdout if script.returncode == 0 else None)
            seen.nodes[node] = "checked"

    def problems(self) -> list[str]:
        out = [f"interface {name} can carry a packet off the machine and was not watched: {why}" for name, why in self.unwatched.items()]
        for seen in self.clusters.values():
            out += seen.problems
            out += [f"cluster {seen.name}: node {node} was gone before its ranges were read ({why})"
                    for node, why in seen.nodes.items() if why != "checked"]
        return out


def run_command(command: list[str], poll: Callable[[], None] | None = None) -> int:
    """Run ``command`` to its end and return its exit status, calling ``poll()`` every
    :data:`POLL_S` meanwhile and once at the end. A Ctrl-C reaches it with this process (same
    process group); a SIGTERM sent to this process alone is passed on to it (the suite stops on
    SIGTERM as on Ctrl-C, with its cleanup and reports): either way the check outlives the
    command, stops its captures and writes its report — killed outright, it left tcpdump running
    and no report (session 9). A Ctrl-C that lands while ``poll()`` runs (its docker calls take
    most of the loop's time) cuts that look short and the loop goes on: it once ended the check
    with the command still running, its guard released and no report written."""
    proc = subprocess.Popen(command)
    previous = signal.signal(signal.SIGTERM, lambda *_: proc.send_signal(signal.SIGTERM))
    try:
        while True:
            try:
                status = proc.wait(timeout=POLL_S)
                break
            except subprocess.TimeoutExpired:
                _poll_through_ctrl_c(poll)
            except KeyboardInterrupt:
                continue  # the command got the same Ctrl-C: let it clean up and write its reports
    finally:
        signal.signal(signal.SIGTERM, previous)
    _poll_through_ctrl_c(poll)
    return status


def _poll_through_ctrl_c(poll: Callable[[], None] | None) -> None:
    """``poll()``; a Ctrl-C during it ends this look only (the command got the same Ctrl-C)."""
    if poll:
        try:
            poll()
        except KeyboardInterrupt:
            pass


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


def _status(code: int | None) -> str:
    if code is not None and code < 0:
        return f"killed by {signal.Signals(-code).name}"
    return f"exit status {code}"


def note_death(capture: Capture, proc: subprocess.Popen, after_s: float) -> None:
    """Record that ``proc`` (``capture``'s tcpdump) exited before it was stopped."""
    _, err = proc.communicate()
    capture.status = proc.returncode
    capture.stderr = _tail(err)
    capture.died = f"{_status(proc.returncode)}, {after_s:.0f} s into the run ({capture.stderr or 'no message'})"


def _tail(err: str | None) -> str:
    return " / ".join(line.strip() for line in (err or "").splitlines() if line.strip())[-600:]


def _stop(capture: Capture, proc: subprocess.Popen, pcap: Path, started: float) -> None:
    """SIGINT the capture (already exited: noted as died), read its status, its statistics and
    the packets it wrote."""
    if capture.died:
        pass
    elif proc.poll() is not None:
        note_death(capture, proc, time.monotonic() - started)
    else:
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=TCPDUMP_STOP_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
            err = f"{err or ''}\nno exit within {TCPDUMP_STOP_S} s of SIGINT: killed"
        capture.status, capture.stderr = proc.returncode, _tail(err)
        for line in (err or "").splitlines():
            words = line.split()
            if words and words[0].isdigit():
                if "dropped by kernel" in line:
                    capture.dropped = int(words[0])
                elif "received by filter" in line:
                    capture.received = int(words[0])
    r = subprocess.run(["tcpdump", "-r", str(pcap), "-n", "-tttt"], capture_output=True, text=True)
    capture.packets = [line for line in r.stdout.splitlines() if line.strip()]
    if r.returncode != 0:
        capture.unread = _tail(r.stderr) or f"tcpdump -r: {_status(r.returncode)}"


def guard_problems(rules: dict[int, list[egress.Rule]], before: dict, after: dict) -> tuple[list[dict], list[str]]:
    """``(rows, problems)`` from the host guard's counters ``before`` and ``after`` the command
    (:meth:`e2e.cluster.egress.HostGuard.counts`): one row per rule that counted a packet; a
    problem for each rule that refused a leak, and, per family, for the rules that were not in
    place at the start, or whose counter is gone or went back at the end (the chain was
    rewritten meanwhile, by a run in another mode): what those refused is unknown, not 0."""
    rows, problems = [], []
    for family, family_rules in rules.items():
        absent, rewritten = [], []
        for rule in family_rules:
            key = (family, rule.label)
            if key not in before:
                absent.append(rule.label)
                continue
            if key not in after or after[key] < before[key]:
                rewritten.append(rule.label)
                continue
            n = after[key] - before[key]
            if n:
                rows.append({"family": family, "rule": rule.label, "packets": n, "denied": rule.denied})
            if n and rule.denied:
                problems.append(f"host guard refused {n} packet(s) from {egress.BRIDGE} to {rule.label}: "
                                "something on the suite's network tried to leave the machine")
        for labels, what in ((absent, "not in place when the command started"), (rewritten, "rewritten or removed during the run")):
            if labels:
                problems.append(f"host guard (IPv{family}): {len(labels)} rule(s) {what}, so what they refused is unknown: "
                                + "; ".join(f"'{x}'" for x in labels[:3]) + (f" and {len(labels) - 3} more" if len(labels) > 3 else ""))
    return rows, problems


def report(captures: list[Capture], command: list[str], status: int, wall_s: float,
           problems: Sequence[str] = (), guard: Sequence[dict] = (), clusters: Sequence[ClusterSeen] = (),
           skipped: dict[str, str] | None = None) -> tuple[dict, str]:
    """The JSON and markdown of a finished check: PASS only with no packet and no problem
    (the captures' own, :meth:`Capture.problems`, and ``problems``)."""
    leaks = sum(len(c.packets) for c in captures)
    problems = [p for c in captures for p in c.problems()] + list(problems)
    data = {
        "command": command, "command_status": status, "wall_s": round(wall_s, 1),
        "packets": leaks, "problems": problems,
        "captures": [{**asdict(c), "packets": c.packets[:SHOWN], "count": len(c.packets)} for c in captures],
        "guard": list(guard), "skipped_interfaces": skipped or {},
        "clusters": [asdict(c) for c in clusters],
    }
    if not leaks and not problems:
        verdict = "PASS: no packet left the machine or tried to, and every capture saw the whole command"
    else:
        verdict = f"FAIL: {leaks} packet(s) left or would have left the machine" + "".join(f"\n- {p}" for p in problems)
    lines = ["## Wire check", "", verdict, "", "| capture | interface | packets | received by filter | dropped by kernel | tcpdump | kernel filter |",
             "|---|---|---|---|---|---|---|"]
    lines += [f"| {c.name} | {c.interface} | {len(c.packets)} | {'unknown' if c.received is None else c.received} | "
              f"{'unknown' if c.dropped is None else c.dropped} | "
              f"{'died: ' + c.died if c.died else _status(c.status)} | `{c.kernel_filter}` |" for c in captures]
    if guard:
        lines += ["", "| host guard rule | IPv | packets | fails the check |", "|---|---|---|---|"]
        lines += [f"| {g['rule']} | {g['family']} | {g['packets']} | {'yes' if g['denied'] else 'no'} |" for g in guard]
    for seen in clusters:
        lines += ["", f"cluster {seen.name}: Service {seen.service_subnets}, pods {seen.pod_subnets} (its {KUBEADM_CONF}), "
                  f"nodes {sorted(seen.nodes)}"]
    if skipped:
        lines += ["", "not watched: " + ", ".join(f"{k} ({v})" for k, v in sorted(skipped.items()))]
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
    print(egress.prepare(), file=sys.stderr)
    devs, skipped = watched_interfaces(ip_json("-d", "link", "show"))
    if not devs:
        egress.release()
        print(f"wire check: no interface but loopback and local container links is up: nothing to watch ({skipped})", file=sys.stderr)
        return EXIT_USAGE
    dns = egress.resolvers()
    captures = [Capture("uplink", dev, uplink_filter(dns, mode, host_hop_limits()), "out") for dev in devs]
    captures.append(Capture("bridge", egress.BRIDGE, bridge_filter(host_addresses(ip_json("addr", "show")), dns), "in", promiscuous=False))
    guard = egress.HostGuard(mode, dns)
    rules = {family: guard.rules(family) for family in egress.IPTABLES}
    args.reports.mkdir(parents=True, exist_ok=True)
    status, started = 1, time.monotonic()
    guard_rows: list[dict] = []
    problems: list[str] = []
    watch = None
    with tempfile.TemporaryDirectory(prefix="wirecheck-") as tmp:
        pcaps = [Path(tmp) / f"{i}.pcap" for i in range(len(captures))]
        procs: list[subprocess.Popen] = []
        try:
            for capture, pcap in zip(captures, pcaps, strict=True):
                procs.append(_start(capture, pcap))
                print(f"wire check: watching {capture.name} {capture.interface}: {capture.kernel_filter}", file=sys.stderr)
            watch = Watch(captures, procs, devs)
            before = guard.counts()
            status = run_command(command, watch)
            guard_rows, problems = guard_problems(rules, before, guard.counts())
        finally:
            for capture, proc, pcap in zip(captures, procs, pcaps, strict=False):
                _stop(capture, proc, pcap, started)
                shutil.copyfile(pcap, args.reports / f"wire-{capture.name}-{capture.interface}.pcap")
            egress.release()
    if watch:
        problems = watch.problems() + problems
    data, text = report(captures, command, status, time.monotonic() - started, problems, guard_rows,
                        list(watch.clusters.values()) if watch else [], skipped)
    (args.reports / "wire-check.json").write_text(json.dumps(data, indent=2) + "\n")
    (args.reports / "wire-check.md").write_text(text)
    with open(args.reports / "summary.md", "a") as f:
        f.write("\n" + text)
    print(text)
    if status != 0:
        return status
    return EXIT_LEAK if data["packets"] or data["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
