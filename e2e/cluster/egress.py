"""Nothing from a kind node or a pod leaves the machine: the suite's egress guard.

Why: a fresh cluster's pods (CoreDNS, local-path-provisioner) dial the ``kubernetes`` Service
(``10.96.0.1:443``) before kube-proxy has written its DNAT rules. With no DNAT the packet
follows the node's default route to the Docker bridge, and the host forwards and masquerades it
to its own default route: ~85 packets per cluster start left the machine for a private-range
address (issue 31, seen with tcpdump on the uplink). The same holds for a pod address no node
routes (a released pod IP) and for a Service whose rules are not yet written.

Two layers, each installed before the first packet can exist:

- **In every node** (:func:`node_guard_script`, mounted into each node with its kubelet drop-in
  :data:`NODE_DROPIN`, so ``ExecStartPre`` runs it before every kubelet start, hence before any
  pod): an ``unreachable`` route for the pod subnet (less specific than the per-pod /32 and the
  other nodes' /24 routes, so it catches only the rest), and a filter chain :data:`NODE_CHAIN`
  at the top of ``OUTPUT`` and ``FORWARD`` that rejects packets still addressed to the Service
  subnet. Filter runs after the ``nat`` table's DNAT (netfilter hook priority: NAT_DST −100 <
  FILTER 0), so kube-proxy's translated connections pass and only untranslated ones are
  refused, at once, as kube-proxy refuses a Service without endpoints. A route could not do
  this: a host-network client's route lookup happens before OUTPUT DNAT, so an ``unreachable``
  route for the Service subnet would break every host-network client of a Service.
  Works without root on the host and with any node image (the online ``kindest/node`` too).
- **On the host** (root only; :class:`HostGuard`): the suite's clusters live on their own Docker
  network :data:`NETWORK` with the fixed bridge name :data:`BRIDGE`, created by the suite before
  its first cluster (kind is pointed at it with ``KIND_EXPERIMENTAL_DOCKER_NETWORK``, kind
  v0.33.0 pkg/cluster/internal/providers/docker/provider.go), so the rule exists before any node.
  A chain :data:`HOST_CHAIN` jumped to from ``DOCKER-USER`` (Docker evaluates it before its own
  forwarding rules; ``FORWARD`` where Docker does not manage that family) rejects what the bridge
  forwards to any other interface: everything with :data:`EGRESS_NONE` (the offline image: nodes
  need nothing outside; their DNS queries that Docker's embedded DNS forwards from the node's
  namespace included); with :data:`EGRESS_PUBLIC` (an online node image may pull from public
  registries) public unicast only — every range of :data:`NON_PUBLIC` (IANA's special-purpose
  registries, multicast, IPv6 outside 2000::/3) is refused, DNS to the host's resolvers stays
  open. Each rule keeps its iptables counter under its label (:meth:`HostGuard.counts`): a
  refused packet is one that tried to leave, and the wire check (:mod:`e2e.cli.wirecheck`) fails
  on it. IPv4 and IPv6 (kind's network is dual-stack). It stays while any node is on the network
  (a kept cluster stays guarded) and is removed with the network by the last run that used it
  (:func:`release`) or ``make clean``.

Errors: :class:`EgressError` when the guard cannot be installed although it should be (root,
but iptables failing); a host without root gets the node guard only, with a warning.
"""

from __future__ import annotations

import hashlib
import ipaddress
import logging
import os
import shlex
import shutil
import struct
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from filelock import FileLock

from ..base.locks import EXCLUSIVE, hold_shared, let_go, try_take

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Reserved:
    """One range of :data:`NON_PUBLIC`: ``network`` (CIDR), its ``name`` in the IANA registry and
    the ``source`` that reserves it."""

    network: str
    name: str
    source: str

    @property
    def label(self) -> str:
        """``"198.18.0.0/15 benchmarking (RFC 2544)"``: how the guard's rule and the report name it."""
        return f"{self.network} {self.name} ({self.source})"

# The suite's Docker network (every cluster of every profile) and its bridge's fixed name.
NETWORK = "ple2e"
BRIDGE = "ple2e0"
# kind's default Service subnet (kind v0.33.0 pkg/apis/config/v1alpha4/default.go SetDefaultsCluster).
KIND_SERVICE_SUBNET = "10.96.0.0/16"
# Filter chains of the guard: in each node, and on the host.
NODE_CHAIN = "PLE2E-GUARD"
HOST_CHAIN = "PLE2E-EGRESS"
# Where the node guard is mounted in each node; the drop-in sorts before kind's 10-kubeadm.conf.
NODE_SCRIPT = "/usr/local/sbin/ple2e-node-guard"
NODE_DROPIN = "/etc/systemd/system/kubelet.service.d/05-ple2e-node-guard.conf"
# E2E_EGRESS: what the host lets the suite's bridge forward elsewhere.
EGRESS_NONE = "none"      # nothing (offline image: hack/prepare.sh writes it into profile.env)
EGRESS_PUBLIC = "public"  # public addresses only (default: an online image may pull)
EGRESS_MODES = (EGRESS_NONE, EGRESS_PUBLIC)
# Never reached from the bridge (E2E_EGRESS=public allows public unicast only), and counted by
# the wire check on the uplink and the bridge: every special-purpose range of IANA's IPv4 and IPv6
# Special-Purpose Address Registries (RFC 6890; iana.org/assignments/iana-ipv4-special-registry,
# iana-ipv6-special-registry, read 2026-12) whose "Globally Reachable" is False or N/A, IPv4 and
# IPv6 multicast, and on IPv6 everything outside global unicast 2000::/3 (RFC 4291 §2.4; IANA's
# IPv6 Address Space registry: "Reserved by IETF"). Stricter than the registries, where an entry
# holds a globally reachable anycast or prefix a node never needs: all of 192.0.0.0/24 (192.0.0.9
# PCP and 192.0.0.10 TURN anycast), all of 2001::/23 (AMT, AS112-v6, ORCHIDv2, DNS-SD anycast) and
# NAT64's 64:ff9b::/96 (RFC 6052: it carries an IPv4 address, which may be private — a node
# reaches public IPv4 over the bridge's own IPv4). Order: the more specific first (the counts
# name the first match). tests/test_egress.py checks the table against ipaddress.is_global.
NON_PUBLIC: dict[int, tuple[Reserved, ...]] = {
    4: (
        Reserved("0.0.0.0/8", "this network", "RFC 791, RFC 1122 sec. 3.2.1.3"),
        Reserved("10.0.0.0/8", "private-use", "RFC 1918"),
        Reserved("100.64.0.0/10", "shared address space (CGNAT)", "RFC 6598"),
        Reserved("127.0.0.0/8", "loopback", "RFC 1122 sec. 3.2.1.3"),
        Reserved("169.254.0.0/16", "link local", "RFC 3927"),
        Reserved("172.16.0.0/12", "private-use", "RFC 1918"),
        Reserved("192.0.0.0/24", "IETF protocol assignments", "RFC 6890 sec. 2.1"),
        Reserved("192.0.2.0/24", "documentation (TEST-NET-1)", "RFC 5737"),
        Reserved("192.88.99.0/24", "deprecated 6to4 relay anycast", "RFC 7526"),
        Reserved("192.168.0.0/16", "private-use", "RFC 1918"),
        Reserved("198.18.0.0/15", "benchmarking", "RFC 2544"),
        Reserved("198.51.100.0/24", "documentation (TEST-NET-2)", "RFC 5737"),
        Reserved("203.0.113.0/24", "documentation (TEST-NET-3)", "RFC 5737"),
        Reserved("224.0.0.0/4", "multicast", "RFC 5771"),
        Reserved("255.255.255.255/32", "limited broadcast", "RFC 8190, RFC 919"),
        Reserved("240.0.0.0/4", "reserved", "RFC 1112 sec. 4"),
    ),
    6: (
        Reserved("::/128", "unspecified", "RFC 4291"),
        Reserved("::1/128", "loopback", "RFC 4291"),
        Reserved("::ffff:0:0/96", "IPv4-mapped", "RFC 4291"),
        Reserved("64:ff9b::/96", "IPv4-IPv6 translation (NAT64)", "RFC 6052"),
        Reserved("64:ff9b:1::/48", "local-use IPv4/IPv6 translation", "RFC 8215"),
        Reserved("100::/64", "discard-only", "RFC 6666"),
        Reserved("100:0:0:1::/64", "dummy prefix", "RFC 9780"),
        Reserved("2001:db8::/32", "documentation", "RFC 3849"),
        Reserved("2001::/23", "IETF protocol assignments (Teredo, benchmarking, ORCHIDv2 and more)", "RFC 2928"),
        Reserved("2002::/16", "6to4", "RFC 3056, RFC 7526"),
        Reserved("3fff::/20", "documentation", "RFC 9637"),
        Reserved("5f00::/16", "segment routing SIDs", "RFC 9602"),
        Reserved("fc00::/7", "unique-local", "RFC 4193"),
        Reserved("fe80::/10", "link-local unicast", "RFC 4291"),
        Reserved("ff00::/8", "multicast", "RFC 4291"),
        Reserved("::/3", "reserved by the IETF (outside global unicast 2000::/3)", "RFC 4291 sec. 2.4"),
        Reserved("4000::/2", "reserved by the IETF (outside global unicast 2000::/3)", "RFC 4291 sec. 2.4"),
        Reserved("8000::/1", "reserved by the IETF (outside global unicast 2000::/3)", "RFC 4291 sec. 2.4"),
    ),
}
_NON_PUBLIC_NETWORKS = {f: [(r, ipaddress.ip_network(r.network)) for r in rs] for f, rs in NON_PUBLIC.items()}
IPTABLES = {4: "iptables", 6: "ip6tables"}
REJECT_WITH = {4: "icmp-admin-prohibited", 6: "icmp6-adm-prohibited"}
# Seconds the end of a run waits for its exiting xdist workers to let go of the network.
RELEASE_WAIT_S = 10
# Seconds a docker or iptables command may take.
COMMAND_TIMEOUT_S = 60
# The locks of what is the host's, not a state dir's: the network ``ple2e``, its bridge and the
# host chain, shared by every run on the host whatever its E2E_STATE_DIR (runs with their own state
# dirs once removed the network under each other while one was starting). HOST_LOCK: one host
# guard change at a time; network.lock / network.use: see :func:`prepare`.
HOST_LOCK_DIR = Path("/run/lock" if os.access("/run/lock", os.W_OK) else tempfile.gettempdir()) / "pod-lifecycle-e2e"
HOST_LOCK = HOST_LOCK_DIR / "egress.lock"
_DROPIN_TEXT = f"""# Written by pod-lifecycle-e2e (e2e/cluster/egress.py): the node's egress guard, before every kubelet start.
[Service]
ExecStartPre=/bin/sh {NODE_SCRIPT}
"""


class EgressError(RuntimeError):
    """The egress guard could not be installed or checked; the message says why."""


def subnets(value: str) -> list[str]:
    """``"10.96.0.0/16,fd00:10:96::/112"`` → both, normalised; ``EgressError`` on a bad one."""
    out = []
    for part in (p.strip() for p in value.split(",") if p.strip()):
        try:
            out.append(str(ipaddress.ip_network(part, strict=False)))
        except ValueError as e:
            raise EgressError(f"not a subnet: {part!r} ({e})") from None
    return out


def service_subnets(cfg: dict) -> list[str]:
    """The kind config's Service subnet(s) (``networking.serviceSubnet``, kind's default otherwise)."""
    return subnets((cfg.get("networking") or {}).get("serviceSubnet") or KIND_SERVICE_SUBNET)


def reserved(address: str) -> Reserved | None:
    """The first range of :data:`NON_PUBLIC` that holds ``address`` (an IP address, or a network:
    then the range must hold all of it); None for a public unicast address. ``ValueError`` on a
    malformed one."""
    net = ipaddress.ip_network(address, strict=False)
    for r, reserved_net in _NON_PUBLIC_NETWORKS[net.version]:
        if net.subnet_of(reserved_net):  # type: ignore[arg-type]
            return r
    return None


def _family(subnet: str) -> int:
    return ipaddress.ip_network(subnet).version


def node_guard_script(pod_subnets: list[str], service_subnets: list[str]) -> str:
    """The shell script each node runs before every kubelet start (module doc, first layer):
    ``unreachable`` routes for ``pod_subnets``, and :data:`NODE_CHAIN` rejecting untranslated
    packets to ``service_subnets`` at the top of ``OUTPUT`` and ``FORWARD``. Idempotent (a
    restarted kubelet runs it again)."""
    lines = [
        "#!/bin/sh",
        "# Written by pod-lifecycle-e2e (e2e/cluster/egress.py): no packet for a pod or Service address leaves the node.",
        "set -eu",
    ]
    for subnet in pod_subnets:
        lines.append(f"ip -{_family(subnet)} route replace unreachable {subnet}")
    for family in (4, 6):
        mine = [s for s in service_subnets if _family(s) == family]
        if not mine:
            continue
        ipt = f"{IPTABLES[family]} -w"
        lines.append(f"{ipt} -N {NODE_CHAIN} 2>/dev/null || {ipt} -F {NODE_CHAIN}")
        lines += [f"{ipt} -A {NODE_CHAIN} -d {s} -j REJECT --reject-with {REJECT_WITH[family]}" for s in mine]
        lines.append(f"for chain in OUTPUT FORWARD; do {ipt} -C $chain -j {NODE_CHAIN} 2>/dev/null || {ipt} -I $chain 1 -j {NODE_CHAIN}; done")
    return "\n".join(lines) + "\n"


def node_guard_files(state_dir: Path, pod_subnets: list[str], service_subnets: list[str]) -> dict[Path, tuple[str, str]]:
    """``{host path: (node path, content)}`` of the node guard: the script and its kubelet
    drop-in, content-addressed under ``state_dir/guard`` (the cluster's key covers them)."""
    out = {}
    for node_path, text, suffix in ((NODE_SCRIPT, node_guard_script(pod_subnets, service_subnets), ".sh"),
                                    (NODE_DROPIN, _DROPIN_TEXT, ".conf")):
        digest = hashlib.sha256(text.encode()).hexdigest()[:12]
        out[Path(state_dir) / "guard" / f"{digest}{suffix}"] = (node_path, text)
    return out


def egress_mode() -> str:
    """``$E2E_EGRESS`` (default :data:`EGRESS_PUBLIC`); ``EgressError`` for another value."""
    mode = os.environ.get("E2E_EGRESS") or EGRESS_PUBLIC
    if mode not in EGRESS_MODES:
        raise EgressError(f"E2E_EGRESS={mode!r}: give one of {', '.join(EGRESS_MODES)}")
    return mode


def _run(cmd: list[str], check: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S)
    if check and r.returncode != 0:
        raise EgressError(f"`{' '.join(cmd)}` failed ({r.returncode}): {(r.stderr or r.stdout).strip()}")
    return r


def ula_subnet(name: str, attempt: int = 0) -> str:
    """The IPv6 /64 kind gives a network called ``name`` (kind v0.33.0
    pkg/cluster/internal/providers/docker/network.go generateULASubnetFromName): fc00::/8 with
    bytes 2..7 of sha1(name + attempt as little-endian int32)."""
    digest = hashlib.sha1(name.encode() + struct.pack("<i", attempt)).digest()
    return str(ipaddress.IPv6Network((bytes([0xFC, 0x00]) + digest[2:8] + bytes(8), 64)))


def network_exists() -> bool:
    return _run(["docker", "network", "inspect", NETWORK], check=False).returncode == 0


def ensure_network() -> None:
    """Create the suite's Docker network unless it exists, as kind creates its own (bridge,
    masquerade on, the default bridge's MTU, an IPv6 ULA /64 where the engine allows IPv6 —
    network.go createNetwork), with the bridge named :data:`BRIDGE`."""
    if network_exists():
        return
    mtu = _run(["docker", "network", "inspect", "bridge", "-f", '{{ index .Options "com.docker.network.driver.mtu" }}'],
               check=False).stdout.strip()
    base = ["docker", "network", "create", "-d=bridge", "-o", "com.docker.network.bridge.enable_ip_masquerade=true",
            "-o", f"com.docker.network.bridge.name={BRIDGE}", "--label", "pod-lifecycle-e2e=1"]
    if mtu.isdigit():
        base += ["-o", f"com.docker.network.driver.mtu={mtu}"]
    errors = []
    for extra in (["--ipv6", "--subnet", ula_subnet(NETWORK, a)] for a in range(5)):
        r = _run([*base, *extra, NETWORK], check=False)
        if r.returncode == 0 or network_exists():
            return
        errors.append(r.stderr.strip())
        if "overlap" not in r.stderr:
            break  # IPv6 unavailable (or another error): one IPv4-only try, as kind does
    r = _run([*base, NETWORK], check=False)
    if r.returncode != 0 and not network_exists():
        raise EgressError(f"cannot create Docker network {NETWORK}: {r.stderr.strip()} (before: {'; '.join(errors)})")


def nodes_on_network() -> list[str]:
    """Names of the containers on the suite's network (none when it does not exist)."""
    r = _run(["docker", "network", "inspect", NETWORK, "-f", "{{range .Containers}}{{.Name}} {{end}}"], check=False)
    return r.stdout.split() if r.returncode == 0 else []


def resolvers(resolv_conf: Path = Path("/etc/resolv.conf")) -> list[str]:
    """The host's DNS servers: the ``nameserver`` addresses of ``resolv_conf`` (systemd-resolved's
    upstream ones when its stub 127.0.0.53 is configured), loopback left out."""
    def read(path: Path) -> list[str]:
        try:
            lines = path.read_text().splitlines()
        except OSError:
            return []
        return [parts[1] for parts in (line.split() for line in lines) if len(parts) >= 2 and parts[0] == "nameserver"]

    found = read(resolv_conf)
    if any(a.startswith("127.") for a in found):
        found += read(Path("/run/systemd/resolve/resolv.conf"))
    return sorted({a for a in found if not a.startswith("127.") and a != "::1"})


@dataclass(frozen=True)
class Rule:
    """One rule of :data:`HOST_CHAIN`: ``words`` (its match and target for ``iptables -A``, the
    comment ``label`` included: it names the rule's counter), and whether a packet it counts is
    one that tried to leave (``denied``: the wire check fails on it)."""

    words: tuple[str, ...]
    label: str
    denied: bool


class HostGuard:
    """The host layer (module doc): :meth:`install` and :meth:`remove` the :data:`HOST_CHAIN`
    rules of ``mode`` for both families; :meth:`counts` reads their counters. With
    :data:`EGRESS_PUBLIC`, DNS to ``dns`` (the host's resolvers, often a private address) stays
    open: Docker's embedded DNS (20.10) forwards a node's queries from the node's own namespace,
    through the bridge, and an online node resolves its registries that way. ``runner(cmd,
    check=True)`` runs a command list and returns a CompletedProcess (tests pass a fake)."""

    def __init__(self, mode: str = EGRESS_PUBLIC, dns: Iterable[str] = (), runner=None):
        if mode not in EGRESS_MODES:
            raise EgressError(f"egress mode {mode!r}: give one of {', '.join(EGRESS_MODES)}")
        self.mode = mode
        self.dns = list(dns)
        self._run = runner or _run

    def rules(self, family: int) -> list[Rule]:
        """The rules of :data:`HOST_CHAIN` for ``family`` (4 or 6), in order; the first match
        decides, and a packet no rule matches returns to Docker's forwarding (allowed).

        - to the bridge itself (``-o`` :data:`BRIDGE`): between the suite's containers, allowed;
        - DNS to each resolver of ``dns``: allowed with :data:`EGRESS_PUBLIC`; refused offline,
          but not counted as a leak (the embedded DNS forwarding a node's query, above);
        - every range of :data:`NON_PUBLIC`: refused and counted as a leak, in both modes;
        - offline, any other destination: refused and counted as a leak.

        Each rule carries its label as an iptables comment (``-m comment``; ASCII without quotes,
        which iptables would escape), which keys its counter (:meth:`counts`)."""
        reject = ("-j", "REJECT", "--reject-with", REJECT_WITH[family])
        online = self.mode == EGRESS_PUBLIC

        def rule(match: tuple[str, ...], label: str, target: tuple[str, ...], denied: bool) -> Rule:
            return Rule((*match, "-m", "comment", "--comment", label, *target), label, denied)

        out = [rule(("-o", BRIDGE), f"to {BRIDGE}: between the suite containers", ("-j", "RETURN"), False)]
        out += [rule(("-d", a, "-p", proto, "--dport", "53"),
                     f"DNS ({proto}) to the host resolver {a}" + ("" if online else ", refused offline"),
                     ("-j", "RETURN") if online else reject, False)
                for a in self.dns if ipaddress.ip_address(a).version == family for proto in ("udp", "tcp")]
        out += [rule(("-d", r.network), r.label, reject, True) for r in NON_PUBLIC[family]]
        if not online:
            out.append(rule((), "any other destination, refused offline", reject, True))
        return out

    def _parent(self, ipt: str) -> str:
        return "DOCKER-USER" if self._run([ipt, "-w", "-S", "DOCKER-USER"], check=False).returncode == 0 else "FORWARD"

    def install(self) -> None:
        """Write the chain for IPv4 and IPv6 and jump to it from the bridge's forwarded traffic
        first thing (idempotent; a mode change rewrites the chain). ``EgressError`` on failure.

        A chain that holds these rules already is left alone, counters and all: every cluster a
        run makes calls this, and a rewrite would zero the counts the wire check reads at the end.
        Another run's nodes may be live on the bridge (another state dir, a kept cluster): the
        chain is never empty meanwhile. The new rules go in above the old ones, then the old ones
        are deleted — the first match decides, so a packet meets the new rules, or the new over the
        old, never neither (a flush-then-append let a node's DNS query out in that gap). Holds
        :data:`HOST_LOCK` (one install or removal on the host at a time, whatever the state dir)."""
        with FileLock(str(_lock_dir() / HOST_LOCK.name), mode=0o666):
            for family in (4, 6):
                ipt = IPTABLES[family]
                created = self._run([ipt, "-w", "-N", HOST_CHAIN], check=False).returncode == 0
                old = 0 if created else self._count(ipt)
                rules = self.rules(family)
                if old != len(rules) or not all(self._run([ipt, "-w", "-C", HOST_CHAIN, *r.words], check=False).returncode == 0
                                                for r in rules):
                    for position, r in enumerate(rules, 1):
                        self._run([ipt, "-w", "-I", HOST_CHAIN, str(position), *r.words])
                    for _ in range(old):
                        self._run([ipt, "-w", "-D", HOST_CHAIN, str(len(rules) + 1)])
                parent = self._parent(ipt)
                jump = ["-i", BRIDGE, "-j", HOST_CHAIN]
                if self._run([ipt, "-w", "-C", parent, *jump], check=False).returncode != 0:
                    self._run([ipt, "-w", "-I", parent, "1", *jump])

    def _count(self, ipt: str) -> int:
        """How many rules :data:`HOST_CHAIN` holds (``-S`` lists the chain's ``-N`` line, then one
        ``-A`` line per rule)."""
        listing = self._run([ipt, "-w", "-S", HOST_CHAIN]).stdout or ""
        return sum(1 for line in listing.splitlines() if line.startswith("-A "))

    def counts(self) -> dict[tuple[int, str], int]:
        """``{(family, label): packets}``: the packet counter of every labelled rule of
        :data:`HOST_CHAIN` now (``iptables -v -S``, which prints ``-c packets bytes``); a family
        whose chain does not exist gives none."""
        out = {}
        for family, ipt in IPTABLES.items():
            r = self._run([ipt, "-w", "-v", "-S", HOST_CHAIN], check=False)
            out.update({(family, label): packets for label, packets in parse_counts(r.stdout or "") if r.returncode == 0})
        return out

    def remove(self) -> None:
        """Remove the jumps (from DOCKER-USER and FORWARD) and the chain, both families (under
        :data:`HOST_LOCK`)."""
        with FileLock(str(_lock_dir() / HOST_LOCK.name), mode=0o666):
            self._remove()

    def _remove(self) -> None:
        for ipt in IPTABLES.values():
            for parent in ("DOCKER-USER", "FORWARD"):
                while self._run([ipt, "-w", "-D", parent, "-i", BRIDGE, "-j", HOST_CHAIN], check=False).returncode == 0:
                    pass
            self._run([ipt, "-w", "-F", HOST_CHAIN], check=False)
            self._run([ipt, "-w", "-X", HOST_CHAIN], check=False)


def parse_counts(listing: str) -> list[tuple[str, int]]:
    """``[(comment, packets)]`` of each rule of an ``iptables -v -S CHAIN`` listing, in order:
    ``-A CHAIN -d 198.18.0.0/15 -m comment --comment "…" -c 3 180 -j REJECT …`` → ``("…", 3)``.
    Rules without a comment are left out; ``EgressError`` on a rule line without its counter."""
    out = []
    for line in listing.splitlines():
        if not line.startswith("-A "):
            continue
        words = shlex.split(line)
        if "-c" not in words:
            raise EgressError(f"no counter in iptables rule: {line}")
        packets = int(words[words.index("-c") + 1])
        if "--comment" in words:
            out.append((words[words.index("--comment") + 1], packets))
    return out


def can_guard_host() -> bool:
    """Root with iptables and ip6tables on PATH (the host layer needs both)."""
    return os.geteuid() == 0 and all(shutil.which(c) for c in IPTABLES.values())


def host_guard_installed() -> bool:
    """Whether the host layer's :data:`HOST_CHAIN` exists (either family); False where this
    process cannot guard the host (:func:`can_guard_host`), as it could not remove it either."""
    if not can_guard_host():
        return False
    return any(_run([ipt, "-w", "-S", HOST_CHAIN], check=False).returncode == 0 for ipt in IPTABLES.values())


_prepared: list[bool] = []


def prepared() -> bool:
    """Whether this process has called :func:`prepare` (it made a cluster on the network)."""
    return bool(_prepared)


def _lock_dir() -> Path:
    """:data:`HOST_LOCK_DIR`, made (sticky and writable by all, as /run/lock itself: runs as other
    users share it)."""
    if not HOST_LOCK_DIR.is_dir():
        HOST_LOCK_DIR.mkdir(parents=True, exist_ok=True)
        try:
            HOST_LOCK_DIR.chmod(0o1777)
        except OSError:
            pass
    return HOST_LOCK_DIR


def prepare() -> str:
    """Before a cluster is created: the suite's network, and the host layer where this process
    may install it (else a warning: the node layer alone). This process holds a shared lock on
    ``network.use`` (:data:`HOST_LOCK_DIR`: the host's, whatever the state dir) for its life, so
    no other run removes the network or the guard under it, not even between the network's
    creation and this run's first node. Returns a line saying what guards the run."""
    mode = egress_mode()
    _prepared.append(True)
    locks = _lock_dir()
    hold_shared(locks / "network.use", perm=0o666)
    with FileLock(str(locks / "network.lock"), mode=0o666):
        if not can_guard_host():
            ensure_network()
            msg = (f"egress guard: node layer only (not root, or no iptables/ip6tables on the host): pod and Service "
                   f"addresses stay in the nodes; the host's forwarding of bridge {BRIDGE} is not restricted")
            log.warning(msg)
            return msg
        HostGuard(mode, resolvers()).install()  # before the network exists: no bridge, no packet
        ensure_network()
    return f"egress guard: node layer + host layer on bridge {BRIDGE} (E2E_EGRESS={mode})"


def release() -> bool:
    """After this process's clusters are gone: when no other process holds the guard and no
    container is left on the network (a kept cluster keeps both), remove the host layer and
    the network. True when removed."""
    locks = _lock_dir()
    let_go(locks / "network.use")
    with FileLock(str(locks / "network.lock"), mode=0o666):
        fd = try_take(locks / "network.use", EXCLUSIVE, RELEASE_WAIT_S, perm=0o666)
        if fd is None:
            return False  # another run still uses the network
        try:
            if nodes_on_network():
                return False
            if network_exists():
                _run(["docker", "network", "rm", NETWORK], check=False)
            if can_guard_host():
                HostGuard().remove()
            return True
        finally:
            os.close(fd)
