"""The egress guard (e2e.cluster.egress): the node script, the host rules, kind's network subnet, the mode."""

from __future__ import annotations

import fcntl
import ipaddress
import os
import random
import shutil
import subprocess

import pytest

from e2e.cluster import egress
from e2e.cluster.egress import BRIDGE, HOST_CHAIN, NODE_CHAIN, EgressError, HostGuard


def test_ula_subnet_is_the_one_kind_gives_its_own_network():
    # kind's "kind" network is fc00:f853:ccd:e793::/64 on every Docker host (docker network inspect kind)
    assert egress.ula_subnet("kind") == "fc00:f853:ccd:e793::/64"
    assert egress.ula_subnet("kind", 1) != egress.ula_subnet("kind")
    assert egress.ula_subnet(egress.NETWORK).startswith("fc00:")


def test_service_subnets_default_to_kinds_and_read_dual_stack():
    assert egress.service_subnets({}) == ["10.96.0.0/16"]
    assert egress.service_subnets({"networking": {"serviceSubnet": "10.96.0.0/16, fd00:10:96::/112"}}) == [
        "10.96.0.0/16", "fd00:10:96::/112"]
    with pytest.raises(EgressError, match="not a subnet: '10.96.0.0/40'"):
        egress.subnets("10.96.0.0/40")


def test_node_script_routes_pods_unreachable_and_rejects_untranslated_service_traffic():
    script = egress.node_guard_script(["10.244.0.0/16"], ["10.96.0.0/16", "fd00:10:96::/112"])
    lines = script.splitlines()
    assert lines[0] == "#!/bin/sh" and "set -eu" in lines
    assert "ip -4 route replace unreachable 10.244.0.0/16" in lines
    # filter, not a route: a host-network client's route lookup comes before OUTPUT DNAT
    assert "route" not in " ".join(line for line in lines if "10.96." in line)
    assert f"iptables -w -A {NODE_CHAIN} -d 10.96.0.0/16 -j REJECT --reject-with icmp-admin-prohibited" in lines
    assert f"ip6tables -w -A {NODE_CHAIN} -d fd00:10:96::/112 -j REJECT --reject-with icmp6-adm-prohibited" in lines
    # idempotent: a chain that exists is flushed, a jump that exists is not added twice
    assert f"iptables -w -N {NODE_CHAIN} 2>/dev/null || iptables -w -F {NODE_CHAIN}" in lines
    assert any(line.startswith("for chain in OUTPUT FORWARD; do iptables -w -C $chain") for line in lines)


def test_node_script_runs_in_a_shell(tmp_path):
    """The script is valid sh and calls ip/iptables as written (fakes on PATH log each call)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls"
    for tool in ("ip", "iptables", "ip6tables"):
        fake = bin_dir / tool
        # -N of an existing chain and -C of a missing jump fail, as iptables does
        fake.write_text(f'#!/bin/sh\necho "{tool} $*" >> {log}\ncase "$*" in *" -N "*|*" -C "*) exit 1;; esac\n')
        fake.chmod(0o755)
    script = tmp_path / "guard.sh"
    script.write_text(egress.node_guard_script(["10.244.0.0/16"], ["10.96.0.0/16"]))
    subprocess.run(["sh", str(script)], check=True, env={"PATH": f"{bin_dir}:/usr/bin:/bin"})
    calls = log.read_text().splitlines()
    assert calls == [
        "ip -4 route replace unreachable 10.244.0.0/16",
        f"iptables -w -N {NODE_CHAIN}",
        f"iptables -w -F {NODE_CHAIN}",
        f"iptables -w -A {NODE_CHAIN} -d 10.96.0.0/16 -j REJECT --reject-with icmp-admin-prohibited",
        f"iptables -w -C OUTPUT -j {NODE_CHAIN}",
        f"iptables -w -I OUTPUT 1 -j {NODE_CHAIN}",
        f"iptables -w -C FORWARD -j {NODE_CHAIN}",
        f"iptables -w -I FORWARD 1 -j {NODE_CHAIN}",
    ]


def test_node_guard_files_are_content_addressed(tmp_path):
    a = egress.node_guard_files(tmp_path, ["10.244.0.0/16"], ["10.96.0.0/16"])
    b = egress.node_guard_files(tmp_path, ["10.245.0.0/16"], ["10.96.0.0/16"])
    assert {node for node, _ in a.values()} == {egress.NODE_SCRIPT, egress.NODE_DROPIN}
    assert set(a) != set(b)  # another pod subnet, another script file (and cluster key)
    dropin = next(text for node, text in a.values() if node == egress.NODE_DROPIN)
    assert f"ExecStartPre=/bin/sh {egress.NODE_SCRIPT}" in dropin and dropin.startswith("#") and "[Service]" in dropin


class FakeIptables:
    """An ordered iptables: records commands; ``-N`` of an existing chain and ``-C``/``-D`` of a
    missing rule fail; ``-I chain N rule`` inserts at position N (1 when absent), ``-D chain N``
    deletes the N-th rule, ``-S chain`` lists it as iptables does. ``states`` holds the host
    chain of each family after every command."""

    def __init__(self, docker_user: bool = True):
        self.calls: list[list[str]] = []
        self.chains: dict[tuple[str, str], list[tuple[str, ...]]] = {
            (ipt, c): [] for ipt in ("iptables", "ip6tables") for c in ("FORWARD", *(("DOCKER-USER",) if docker_user else ()))}
        self.states: list[dict[str, list[tuple[str, ...]]]] = []

    @property
    def rules(self) -> set[tuple[str, ...]]:
        return {(ipt, chain, *rule) for (ipt, chain), rules in self.chains.items() for rule in rules}

    def __call__(self, cmd: list[str], check: bool = True) -> subprocess.CompletedProcess:
        self.calls.append(cmd)
        ipt, _, op, chain, *rule = cmd
        rules = self.chains.get((ipt, chain))
        ok, out = rules is not None, ""
        if op == "-N":
            ok = not ok
            self.chains.setdefault((ipt, chain), [])
        elif not ok:
            pass
        elif op == "-S":
            out = "".join(f"-N {chain}\n" if i < 0 else f"-A {chain} {' '.join(rules[i])}\n" for i in range(-1, len(rules)))
        elif op == "-C":
            ok = tuple(rule) in rules
        elif op == "-D" and len(rule) == 1 and rule[0].isdigit():
            ok = int(rule[0]) <= len(rules)
            if ok:
                del rules[int(rule[0]) - 1]
        elif op == "-D":
            ok = tuple(rule) in rules
            if ok:
                rules.remove(tuple(rule))
        elif op == "-F":
            rules.clear()
        elif op == "-X":
            del self.chains[(ipt, chain)]
        elif op == "-A":
            rules.append(tuple(rule))
        elif op == "-I":
            at, rule = (int(rule[0]), rule[1:]) if rule and rule[0].isdigit() else (1, rule)
            rules.insert(at - 1, tuple(rule))
        self.states.append({i: list(self.chains.get((i, HOST_CHAIN), [])) for i in ("iptables", "ip6tables")})
        if check and not ok:
            raise EgressError(f"`{' '.join(cmd)}` failed")
        return subprocess.CompletedProcess(cmd, 0 if ok else 1, out, "")


def test_host_guard_offline_rejects_everything_the_bridge_forwards_elsewhere():
    fake = FakeIptables()
    HostGuard(egress.EGRESS_NONE, runner=fake).install()
    for ipt, family in (("iptables", 4), ("ip6tables", 6)):
        assert (ipt, "DOCKER-USER", "-i", BRIDGE, "-j", HOST_CHAIN) in fake.rules
        chain = fake.chains[(ipt, HOST_CHAIN)]
        assert chain[0][:2] == ("-o", BRIDGE) and chain[0][-2:] == ("-j", "RETURN")
        # the last rule refuses whatever is left; every rule before it but the first refuses a non-public range
        assert chain[-1] == ("-m", "comment", "--comment", "any other destination, refused offline",
                             "-j", "REJECT", "--reject-with", egress.REJECT_WITH[family])
        assert [r[1] for r in chain[1:-1]] == [r.network for r in egress.NON_PUBLIC[family]]
        assert all(r[-4:] == ("-j", "REJECT", "--reject-with", egress.REJECT_WITH[family]) for r in chain[1:])
    assert all(r.denied for r in HostGuard(egress.EGRESS_NONE).rules(4)[1:])  # every refusal counts as a leak
    jumps = [c for c in fake.calls if c[2] == "-I" and c[3] != HOST_CHAIN]
    assert jumps and all(c[3:5] == ["DOCKER-USER", "1"] for c in jumps)  # first thing Docker evaluates


def test_resolvers_read_resolv_conf_without_loopback(tmp_path):
    conf = tmp_path / "resolv.conf"
    conf.write_text("# comment\nnameserver 10.255.255.53\nnameserver 127.0.0.11\nsearch example\nnameserver fd00::53\n")
    assert egress.resolvers(conf) == ["10.255.255.53", "fd00::53"]
    assert egress.resolvers(tmp_path / "missing") == []


def test_host_guard_online_rejects_only_non_public_destinations_but_dns_to_the_resolvers():
    guard = HostGuard(egress.EGRESS_PUBLIC, dns=["10.255.255.53", "fd00::53"])
    rules = guard.rules(4)
    assert rules[0].words == ("-o", BRIDGE, "-m", "comment", "--comment", f"to {BRIDGE}: between the suite containers", "-j", "RETURN")
    assert [r.words for r in rules[1:3]] == [
        ("-d", "10.255.255.53", "-p", p, "--dport", "53", "-m", "comment", "--comment", f"DNS ({p}) to the host resolver 10.255.255.53",
         "-j", "RETURN") for p in ("udp", "tcp")]
    assert [r.words[1] for r in rules[3:]] == [r.network for r in egress.NON_PUBLIC[4]]
    assert [r.denied for r in rules] == [False] * 3 + [True] * len(egress.NON_PUBLIC[4])
    assert ("-d", "fd00::53", "-p", "udp", "--dport", "53") == guard.rules(6)[1].words[:6]
    offline = HostGuard(egress.EGRESS_NONE, dns=["10.255.255.53"]).rules(4)
    assert all("RETURN" not in r.words for r in offline[1:]) and not any(r.denied for r in offline[1:3])  # DNS refused, not a leak
    assert rules[-1].words[:2] == ("-d", "240.0.0.0/4")  # online: no catch-all


def test_online_the_special_purpose_ranges_are_refused_too():
    """Issue 41: online, forwarded packets to 198.18.0.0/15, the TEST-NETs, 192.0.0.0/24,
    240.0.0.0/4, multicast, 255.255.255.255, NAT64, 6to4, documentation and the rest of the IANA
    special-purpose registries passed the host guard (it refused RFC 1918, CGNAT, link-local, 0/8,
    127/8 and ULA only)."""
    guard = HostGuard(egress.EGRESS_PUBLIC, dns=["10.255.255.53"])
    refused = {family: [ipaddress.ip_network(r.words[1]) for r in guard.rules(family) if r.denied] for family in (4, 6)}
    for address in ("198.18.0.1", "198.19.255.254", "192.0.2.1", "198.51.100.1", "203.0.113.1", "192.0.0.1", "240.0.0.1",
                    "239.255.255.250", "224.0.1.1", "255.255.255.255", "192.88.99.1", "64:ff9b::a00:1", "64:ff9b:1::1", "2002::1",
                    "2001:db8::1", "2001::1", "ff0e::1", "::", "::1", "::ffff:10.0.0.1", "3fff::1", "100::1", "4000::1", "fec0::1"):
        a = ipaddress.ip_address(address)
        assert any(a in n for n in refused[a.version]), address
    for address in ("151.101.0.223", "8.8.8.8", "192.31.196.1", "2a04:4e42::223", "2620:4f:8000::1"):  # public unicast passes
        a = ipaddress.ip_address(address)
        assert not any(a in n for n in refused[a.version]), address


# Where the table refuses an address that Python's ipaddress calls global, and why: it is stricter
# than IANA's "Globally Reachable" on purpose, or newer than the Python that runs the test.
STRICTER = {
    "224.0.0.0/4": "multicast: not unicast",
    "ff00::/8": "multicast: not unicast",
    "192.0.0.0/24": "192.0.0.9 PCP and 192.0.0.10 TURN anycast are globally reachable; a node needs neither",
    "192.88.99.0/24": "deprecated 6to4 relay anycast (RFC 7526): N/A in the registry",
    "64:ff9b::/96": "NAT64 carries an IPv4 address, which may be private; a node reaches public IPv4 over IPv4",
    "2001::/23": "its globally reachable entries (AMT, AS112-v6, ORCHIDv2, anycasts) are none a node needs",
    "2002::/16": "6to4: N/A in the registry; carries an IPv4 address, which may be private",
    "64:ff9b:1::/48": "RFC 8215 (2017): newer than Python 3.11's table",
    "::ffff:0:0/96": "IPv4-mapped: Python before 3.13 judges by the mapped address",
    "100:0:0:1::/64": "RFC 9780 (2025): newer than Python's table",
    "3fff::/20": "RFC 9637 (2024): newer than Python's table",
    "5f00::/16": "RFC 9602 (2024): newer than Python's table",
    "::/3": "outside 2000::/3: reserved by the IETF, not global unicast",
    "4000::/2": "outside 2000::/3: reserved by the IETF, not global unicast",
    "8000::/1": "outside 2000::/3: reserved by the IETF, not global unicast",
}


def _samples() -> list:
    """Addresses to judge: both ends of every range of the table and their neighbours, and 10000
    pseudo-random ones of each family (seeded), half of IPv6 in global unicast 2000::/3."""
    rng = random.Random(41)
    out = []
    for family in (4, 6):
        for r in egress.NON_PUBLIC[family]:
            n = ipaddress.ip_network(r.network)
            top = 2 ** n.max_prefixlen - 1
            out += [ipaddress.ip_address(max(0, min(top, int(a) + d))) if family == 4 else
                    ipaddress.IPv6Address(max(0, min(top, int(a) + d))) for a in (n.network_address, n.broadcast_address) for d in (-1, 0, 1)]
    out += [ipaddress.IPv4Address(rng.getrandbits(32)) for _ in range(10000)]
    out += [ipaddress.IPv6Address(rng.getrandbits(128)) for _ in range(5000)]
    out += [ipaddress.IPv6Address((1 << 125) | rng.getrandbits(125)) for _ in range(5000)]
    return out


def test_the_non_public_table_holds_everything_ipaddress_calls_non_global():
    """The table is transcribed from IANA's special-purpose registries; Python's ipaddress
    (``is_global``) is a second reading of them: every address it calls non-global is refused,
    and every refused address it calls global is in a range refused on purpose (STRICTER)."""
    for r in (*egress.NON_PUBLIC[4], *egress.NON_PUBLIC[6]):
        assert str(ipaddress.ip_network(r.network)) == r.network and r.label.isascii()
    for a in _samples():
        found = egress.reserved(str(a))
        if not a.is_global:
            assert found is not None, f"{a}: ipaddress calls it non-global, the table lets it through"
        elif found is not None:
            assert found.network in STRICTER, f"{a}: ipaddress calls it global, the table refuses it ({found.label})"
    assert egress.reserved("10.96.0.0/16").network == "10.0.0.0/8" and egress.reserved("0.0.0.0/0") is None
    assert egress.reserved("8.8.8.8") is None and egress.reserved("2a04:4e42::223") is None


def test_host_guard_is_idempotent_and_removed_whole():
    fake = FakeIptables(docker_user=False)  # Docker manages no such chain: FORWARD itself
    guard = HostGuard(egress.EGRESS_NONE, runner=fake)
    guard.install()
    guard.install()
    jumps = [r for r in fake.rules if r[1] == "FORWARD"]
    assert sorted(jumps) == [("ip6tables", "FORWARD", "-i", BRIDGE, "-j", HOST_CHAIN), ("iptables", "FORWARD", "-i", BRIDGE, "-j", HOST_CHAIN)]
    guard.remove()
    assert not [r for r in fake.rules if r[1] in ("FORWARD", "DOCKER-USER")]
    assert ["iptables", "-w", "-X", HOST_CHAIN] in fake.calls and ["ip6tables", "-w", "-X", HOST_CHAIN] in fake.calls


def test_a_reinstall_never_leaves_the_chain_open_while_nodes_may_be_live():
    """Another run's nodes may be on the bridge while a run (re)installs the guard: a flush
    then append left the chain empty for a moment, and a node's DNS query left the machine
    (helper-23, 10:16:15, TTL 63 on the uplink). Offline over offline: the catch-all REJECT is
    there after every command; online to offline: the chain is never empty."""
    fake = FakeIptables()
    HostGuard(egress.EGRESS_NONE, runner=fake).install()
    before = len(fake.states)
    HostGuard(egress.EGRESS_NONE, runner=fake).install()
    reject = HostGuard(egress.EGRESS_NONE).rules(4)[-1].words
    assert all(reject in state["iptables"] for state in fake.states[before:])
    assert fake.chains[("iptables", HOST_CHAIN)] == [r.words for r in HostGuard(egress.EGRESS_NONE).rules(4)]

    fake = FakeIptables()
    online = HostGuard(egress.EGRESS_PUBLIC, dns=["10.255.255.53"], runner=fake)
    online.install()
    before = len(fake.states)
    HostGuard(egress.EGRESS_NONE, runner=fake).install()
    assert all(state["iptables"] and state["ip6tables"] for state in fake.states[before:])
    assert fake.chains[("iptables", HOST_CHAIN)] == [r.words for r in HostGuard(egress.EGRESS_NONE).rules(4)]
    assert fake.chains[("ip6tables", HOST_CHAIN)] == [r.words for r in HostGuard(egress.EGRESS_NONE).rules(6)]


def test_an_install_over_the_same_rules_leaves_the_chain_and_its_counters_alone():
    """Every cluster a run makes installs the guard again; a rewrite zeroed the counters the
    wire check reads at the end of the run."""
    fake = FakeIptables()
    HostGuard(egress.EGRESS_PUBLIC, dns=["10.255.255.53"], runner=fake).install()
    before = len(fake.calls)
    HostGuard(egress.EGRESS_PUBLIC, dns=["10.255.255.53"], runner=fake).install()
    assert not [c for c in fake.calls[before:] if c[2] in ("-I", "-D", "-A", "-F")]
    HostGuard(egress.EGRESS_PUBLIC, dns=["10.255.255.54"], runner=fake).install()  # another resolver: rewritten
    assert fake.chains[("iptables", HOST_CHAIN)] == [r.words for r in HostGuard(egress.EGRESS_PUBLIC, dns=["10.255.255.54"]).rules(4)]


def test_the_counters_are_read_by_rule_label():
    listing = (f"-N {HOST_CHAIN}\n"
               f"-A {HOST_CHAIN} -o ple2e0 -m comment --comment \"to ple2e0: between the suite containers\" -c 0 0 -j RETURN\n"
               f"-A {HOST_CHAIN} -d 198.18.0.0/15 -m comment --comment \"198.18.0.0/15 benchmarking (RFC 2544)\" -c 3 252 "
               "-j REJECT --reject-with icmp-admin-prohibited\n"
               f"-A {HOST_CHAIN} -d 10.0.0.0/8 -c 5 300 -j REJECT\n")  # no comment: not the guard's
    assert egress.parse_counts(listing) == [("to ple2e0: between the suite containers", 0), ("198.18.0.0/15 benchmarking (RFC 2544)", 3)]
    with pytest.raises(EgressError, match="no counter"):
        egress.parse_counts(f"-A {HOST_CHAIN} -d 10.0.0.0/8 -j REJECT\n")


@pytest.mark.skipif(os.geteuid() != 0 or not all(shutil.which(c) for c in egress.IPTABLES.values()), reason="needs root and iptables")
def test_the_rules_and_their_counters_round_trip_through_the_real_iptables():
    """In a chain of its own that nothing jumps to (so no packet meets it): every rule is
    accepted, found again by ``-C`` (the idempotent install) and its counter read by label."""
    chain = f"PLE2E-T{os.getpid()}"
    for mode in egress.EGRESS_MODES:
        guard = HostGuard(mode, dns=["10.255.255.53", "fd00::53"])
        for family, ipt in egress.IPTABLES.items():
            subprocess.run([ipt, "-w", "-N", chain], check=True)
            try:
                for r in guard.rules(family):
                    subprocess.run([ipt, "-w", "-A", chain, *r.words], check=True)
                assert all(subprocess.run([ipt, "-w", "-C", chain, *r.words]).returncode == 0 for r in guard.rules(family))
                listing = subprocess.run([ipt, "-w", "-v", "-S", chain], capture_output=True, text=True, check=True).stdout
                assert egress.parse_counts(listing) == [(r.label, 0) for r in guard.rules(family)]
            finally:
                subprocess.run([ipt, "-w", "-F", chain])
                subprocess.run([ipt, "-w", "-X", chain])


def test_egress_mode_from_the_environment(monkeypatch):
    monkeypatch.delenv("E2E_EGRESS", raising=False)
    assert egress.egress_mode() == egress.EGRESS_PUBLIC
    monkeypatch.setenv("E2E_EGRESS", "none")
    assert egress.egress_mode() == egress.EGRESS_NONE
    monkeypatch.setenv("E2E_EGRESS", "all")
    with pytest.raises(EgressError, match="E2E_EGRESS='all': give one of none, public"):
        egress.egress_mode()


def test_a_run_with_another_state_dir_never_removes_the_network_another_run_is_starting_on(tmp_path, monkeypatch):
    """The network and the host guard are the host's: a run ending (release) while another run,
    with its own E2E_STATE_DIR, has prepared the network but made no node yet must leave both
    (helper-19: "network ple2e not found" at cluster creation when the lock was per state dir)."""
    monkeypatch.setattr(egress, "HOST_LOCK_DIR", tmp_path / "locks")
    monkeypatch.setattr(egress, "RELEASE_WAIT_S", 0.2)
    monkeypatch.setattr(egress, "nodes_on_network", lambda: [])  # the other run has no node yet
    monkeypatch.setattr(egress, "network_exists", lambda: True)
    ran: list[list[str]] = []
    monkeypatch.setattr(egress, "_run", lambda cmd, check=True: ran.append(cmd) or subprocess.CompletedProcess(cmd, int("-D" in cmd), "", ""))
    starting = os.open(egress._lock_dir() / "network.use", os.O_RDONLY | os.O_CREAT)  # the other run's prepare()
    fcntl.flock(starting, fcntl.LOCK_SH)
    try:
        assert egress.release() is False
        assert not [c for c in ran if c[:3] == ["docker", "network", "rm"]]
    finally:
        os.close(starting)
    assert egress.release() is True  # once nobody holds it: removed
    assert ["docker", "network", "rm", egress.NETWORK] in ran
