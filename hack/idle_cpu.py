"""Idle CPU and memory of kind nodes, and the host's CPU pressure, with no test running:
``make idle-cpu`` (issue 45, step 1 "measure first").

It creates the suite's own clusters of ``--profiles`` (:class:`e2e.cluster.kind.Kind`, the node
image and patches of ``REPORTS/profile.env`` as ``make e2e`` uses them), or takes clusters that
exist (``--clusters``: never deleted), waits until every node is Ready, then ``--settle`` seconds
(start-up work over), then samples for ``--seconds``, every ``--interval`` (10 s):

- each node container's CPU from its cgroup's accounting — cgroup v1 ``cpuacct.usage`` (ns),
  v2 ``cpu.stat`` ``usage_usec`` — as % of one core over the whole window (and the highest
  interval); the cgroup is Docker's cgroup of the container: the entry of ``/proc/<pid>/cgroup``
  of its first process (``docker inspect`` ``.State.Pid``) cut after the component naming the
  container's ID (kind's systemd moves its own processes into ``init.scope`` and other units
  below it), under the mount point of that hierarchy in ``/proc/self/mountinfo``;
- its memory working set (MiB): usage (v1 ``memory.usage_in_bytes``, v2 ``memory.current``) less
  the inactive page cache (v1 ``total_inactive_file``, v2 ``inactive_file`` of ``memory.stat``),
  as ``docker stats`` and the kubelet count it; the mean of the samples;
- the host's ``/proc/pressure/cpu`` ``some avg10`` at every interval (median and highest), and its
  CPU idle over the window from ``/proc/stat`` (idle ticks over all ticks, as vmstat's ``id``).

It prints a markdown table (one row per node, then the mean per role) and writes JSON
(``--out``). It refuses (exit 2, no cluster made) while a run of the suite is alive in
``E2E_STATE_DIR`` (:func:`e2e.cluster.kind.run_alive`), or while node containers of other kind
clusters run (they would count in the host's figures; ``--allow-others`` measures anyway and
names them in the JSON). The clusters it made are deleted on every ending: Ctrl-C and SIGTERM
stop the sampling and the deletion still runs (:class:`e2e.plugin.signals.Stop`: a second
signal is ignored meanwhile).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import secrets
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

from e2e.record.hostload import PSI_CPU, Reader, psi_some, read_text

ROOT = Path(__file__).resolve().parents[1]
PROC_STAT = "/proc/stat"
MOUNTINFO = "/proc/self/mountinfo"
# kind's labels on its node containers (kind v0.33.0 pkg/cluster/internal/providers/docker/constants.go)
CLUSTER_LABEL = "io.x-k8s.kind.cluster"
ROLE_LABEL = "io.x-k8s.kind.role"
MIB = 1024 * 1024



# -- cgroups ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeCgroup:
    """Where one container's accounting is: cgroup ``version`` (1 or 2), ``cpu`` the file of its
    CPU time (v1 ``cpuacct.usage`` in ns, v2 ``cpu.stat``), ``memory`` its usage in bytes (v1
    ``memory.usage_in_bytes``, v2 ``memory.current``), ``memory_stat`` its ``memory.stat``."""

    version: int
    cpu: str
    memory: str
    memory_stat: str


def cgroup_mounts(mountinfo: str) -> dict[str, tuple[str, str]]:
    """``{controller: (root, mount point)}`` of the cgroup file systems in a ``/proc/<pid>/mountinfo``
    text: v1 hierarchies under each controller of their super options (``cpuacct``, ``memory``,
    ``name=systemd`` …), the v2 one under ``""``. The first mount of each wins."""
    out: dict[str, tuple[str, str]] = {}
    for line in mountinfo.splitlines():
        pre, sep, post = line.partition(" - ")
        if not sep:
            continue
        fields, (fstype, _source, super_opts) = pre.split(), (post.split() + ["", ""])[:3]
        root, mount_point = fields[3], fields[4]
        if fstype == "cgroup2":
            out.setdefault("", (root, mount_point))
        elif fstype == "cgroup":
            for opt in super_opts.split(","):
                if opt not in ("rw", "ro") and "=" not in opt or opt.startswith("name="):
                    out.setdefault(opt, (root, mount_point))
    return out


def container_cgroups(proc_cgroup: str, container_id: str) -> dict[str, str | None]:
    """``{controller: path}`` of a container from the ``/proc/<pid>/cgroup`` text of one of its
    processes (``hierarchy:controllers:path`` lines; v2's controllers are ``""``), each path cut
    after the component that names ``container_id`` (Docker's cgroup of the container:
    ``/docker/<id>`` or ``/system.slice/docker-<id>.scope``; below it, the container's own units);
    None for a path that does not name it (read in another cgroup namespace than the host's, or a
    hybrid host's unused v2 hierarchy)."""
    out: dict[str, str | None] = {}
    for line in proc_cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        controllers, path = parts[1], parts[2]
        components = path.split("/")
        at = next((i for i, c in enumerate(components) if container_id in c), None)
        for controller in controllers.split(",") if controllers else [""]:
            out[controller] = "/".join(components[: at + 1]) if at is not None else None
    return out


def node_cgroup(proc_cgroup: str, mountinfo: str, container_id: str) -> NodeCgroup:
    """The accounting files of a container (see :class:`NodeCgroup`): v1 where its process has a
    ``cpuacct`` hierarchy (a hybrid host's empty v2 hierarchy aside), else v2. ``ValueError``
    when the hierarchy is not mounted here or the paths do not name the container."""
    paths = container_cgroups(proc_cgroup, container_id)
    mounts = cgroup_mounts(mountinfo)

    def where(controller: str) -> str:
        if controller not in paths:
            raise ValueError(f"container {container_id[:12]} has no {controller or 'v2'} cgroup")
        path = paths[controller]
        if path is None:
            raise ValueError(f"the {controller or 'v2'} cgroup of container {container_id[:12]} does not name it: "
                             "read from another cgroup namespace than the host's?")
        if controller not in mounts:
            raise ValueError(f"no {controller or 'cgroup2'} hierarchy mounted (mountinfo)")
        root, mount_point = mounts[controller]
        if root != "/" and (path == root or path.startswith(root + "/")):
            path = path[len(root):]
        return mount_point.rstrip("/") + "/" + path.strip("/")

    if "cpuacct" in paths:
        cpu, memory = where("cpuacct"), where("memory")
        return NodeCgroup(1, f"{cpu}/cpuacct.usage", f"{memory}/memory.usage_in_bytes", f"{memory}/memory.stat")
    unified = where("")
    return NodeCgroup(2, f"{unified}/cpu.stat", f"{unified}/memory.current", f"{unified}/memory.stat")


def _stat_value(text: str, key: str) -> int:
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name == key:
            return int(value)
    raise ValueError(f"no {key!r} line")


def cpu_ns(cg: NodeCgroup, read: Reader = read_text) -> int:
    """The container's CPU time so far (ns): v1 ``cpuacct.usage``, v2 ``cpu.stat`` ``usage_usec`` × 1000."""
    text = read(cg.cpu)
    return int(text.strip()) if cg.version == 1 else _stat_value(text, "usage_usec") * 1000


def working_set_bytes(cg: NodeCgroup, read: Reader = read_text) -> int:
    """The container's memory working set (bytes): usage less the inactive page cache (v1
    ``total_inactive_file``: the hierarchy's; v2 ``inactive_file``), never below 0."""
    usage = int(read(cg.memory).strip())
    inactive = _stat_value(read(cg.memory_stat), "total_inactive_file" if cg.version == 1 else "inactive_file")
    return max(usage - inactive, 0)


def cpu_percent(ns0: int, ns1: int, t0: float, t1: float) -> float:
    """CPU time ``ns1 - ns0`` (ns) over the wall time ``t1 - t0`` (s), as % of one core.
    ``ValueError`` for an empty window or a counter that went back (another cgroup)."""
    if t1 <= t0:
        raise ValueError(f"empty window [{t0}, {t1}]")
    if ns1 < ns0:
        raise ValueError(f"CPU counter went back ({ns0} → {ns1} ns): the cgroup was replaced")
    return (ns1 - ns0) / 1e9 / (t1 - t0) * 100


# -- the host --------------------------------------------------------------------------------------


def psi_some_avg10(text: str) -> float:
    """``some avg10`` (%) of a ``/proc/pressure/cpu`` text; ``ValueError`` without it."""
    avg10 = psi_some(text).get("avg10")
    if avg10 is None:
        raise ValueError(f"{PSI_CPU}: no 'some avg10=' line")
    return float(avg10)


def cpu_ticks(stat: str) -> tuple[int, int]:
    """``(idle, total)`` ticks of the ``cpu`` line of a ``/proc/stat`` text: idle alone (iowait
    apart, as vmstat's ``id``), total = user nice system idle iowait irq softirq steal (guest time
    is in user already)."""
    line = next((ln for ln in stat.splitlines() if ln.startswith("cpu ")), None)
    if line is None:
        raise ValueError(f"{PROC_STAT}: no 'cpu ' line")
    ticks = [int(x) for x in line.split()[1:9]]
    return ticks[3], sum(ticks)


def idle_percent(stat0: str, stat1: str) -> float:
    """The host's CPU idle (%) between two ``/proc/stat`` texts."""
    (idle0, total0), (idle1, total1) = cpu_ticks(stat0), cpu_ticks(stat1)
    if total1 <= total0:
        raise ValueError("no CPU ticks between the two /proc/stat reads")
    return (idle1 - idle0) / (total1 - total0) * 100


def spread(values: list[float]) -> dict[str, float | int | None]:
    """``{"median", "max", "samples"}`` of ``values`` (None for an empty list)."""
    return {"median": statistics.median(values) if values else None, "max": max(values) if values else None,
            "samples": len(values)}


# -- the nodes -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Node:
    """One node container: ``cluster``, ``name``, ``role`` (kind's label: ``control-plane`` or
    ``worker``), ``profile`` (the suite's state file; ``-`` for a cluster it did not make), the
    container's ``id`` and its first process's ``pid`` (on the host)."""

    cluster: str
    name: str
    role: str
    profile: str
    id: str
    pid: int


def nodes_of(inspect: str, profiles: dict[str, str]) -> list[Node]:
    """The :class:`Node` of each running container of a ``docker inspect`` JSON text, control
    planes first; ``profiles`` maps a cluster to its profile. ``ValueError`` for one not running."""
    out = []
    for c in json.loads(inspect):
        labels = c.get("Config", {}).get("Labels") or {}
        name = c["Name"].lstrip("/")
        pid = int(c.get("State", {}).get("Pid") or 0)
        if not pid:
            raise ValueError(f"node container {name} is not running")
        cluster = labels.get(CLUSTER_LABEL, "")
        out.append(Node(cluster, name, labels.get(ROLE_LABEL, "?"), profiles.get(cluster, "-"), c["Id"], pid))
    return sorted(out, key=lambda n: (n.cluster, n.role != "control-plane", n.name))


@dataclass(frozen=True)
class NodeFigures:
    """What one node used over the window: ``cpu_percent`` of one core (mean), ``cpu_percent_max``
    (the highest interval), ``memory_mib`` the mean working set."""

    node: Node
    cpu_percent: float
    cpu_percent_max: float
    memory_mib: float


def figures(node: Node, times: list[float], cpu: list[int], memory: list[int]) -> NodeFigures:
    """A node's :class:`NodeFigures` from its samples (``times`` in s, ``cpu`` in ns, ``memory``
    in bytes, one each per sample; at least two)."""
    if len(times) < 2:
        raise ValueError(f"{node.name}: {len(times)} sample(s), two at least")
    steps = [cpu_percent(cpu[i - 1], cpu[i], times[i - 1], times[i]) for i in range(1, len(times))]
    return NodeFigures(node, cpu_percent(cpu[0], cpu[-1], times[0], times[-1]), max(steps),
                       statistics.fmean(memory) / MIB)


def by_role(rows: list[NodeFigures]) -> dict[str, dict[str, float | int]]:
    """``{role: {"nodes", "cpu_percent", "memory_mib"}}``: the mean per node of each role."""
    out: dict[str, dict[str, float | int]] = {}
    for role in sorted({r.node.role for r in rows}):
        mine = [r for r in rows if r.node.role == role]
        out[role] = {"nodes": len(mine), "cpu_percent": statistics.fmean(r.cpu_percent for r in mine),
                     "memory_mib": statistics.fmean(r.memory_mib for r in mine)}
    return out


def markdown(rows: list[NodeFigures], host: dict) -> str:
    """The nodes' table, the mean per role and the host's line, as markdown."""
    lines = ["| cluster | node | role | profile | CPU % of a core (highest interval) | MiB |",
             "| --- | --- | --- | --- | ---: | ---: |"]
    for r in rows:
        n = r.node
        lines.append(f"| {n.cluster} | {n.name} | {n.role} | {n.profile} | {r.cpu_percent:.1f} ({r.cpu_percent_max:.1f}) "
                     f"| {r.memory_mib:.0f} |")
    lines += ["", "| role | nodes | mean CPU % of a core | mean MiB |", "| --- | ---: | ---: | ---: |"]
    for role, f in by_role(rows).items():
        lines.append(f"| {role} | {f['nodes']} | {f['cpu_percent']:.1f} | {f['memory_mib']:.0f} |")
    psi = host["psi_some_avg10"]
    psi_text = (f"median {psi['median']:.1f} %, highest {psi['max']:.1f} % ({psi['samples']} samples)"
                if psi["samples"] else "unknown (no /proc/pressure/cpu)")
    lines += ["", f"Host ({host['cpus']} CPUs, {host['seconds']:.0f} s): CPU pressure some avg10 {psi_text}; "
              f"CPU idle {host['cpu_idle_percent']:.1f} %."]
    return "\n".join(lines) + "\n"


# -- the run ---------------------------------------------------------------------------------------


class Refused(Exception):
    """The machine is not quiet, or a cluster asked for does not exist: exit 2, no cluster made."""


def _docker(*args: str) -> str:
    r = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError(f"docker {' '.join(args)}: {r.stderr.strip()}")
    return r.stdout


def live_runs(state_dir: Path) -> list[str]:
    """The suite's runs alive in ``state_dir``: a process of each holds its ``runs/<id>.lock``
    (:func:`e2e.cluster.kind.hold_run`, probed as :func:`e2e.cluster.kind.run_alive` does)."""
    from e2e.base.locks import unused

    locks = [p for p in sorted((state_dir / "runs").glob("*.lock")) if not p.name.endswith(".json.lock")]
    return [p.name[: -len(".lock")] for p in locks if not unused(p)]


def running_nodes() -> list[str]:
    """The kind cluster of each running node container (kind's label), one entry per node."""
    return _docker("ps", "--filter", f"label={CLUSTER_LABEL}", "--format", f'{{{{.Label "{CLUSTER_LABEL}"}}}}').split()


def running_clusters() -> set[str]:
    """The kind clusters with a running node container (kind's label)."""
    return set(running_nodes())


def preflight(state_dir: Path, measured: set[str], allow_others: bool) -> list[str]:
    """Refuse while a run of the suite is alive, or (unless ``allow_others``) while clusters other
    than ``measured`` run; the others that run (allowed)."""
    alive = live_runs(state_dir)
    if alive:
        raise Refused(f"a run of the suite is alive ({', '.join(alive)}, {state_dir}/runs): "
                      "measure when the machine is quiet")
    others = sorted(running_clusters() - measured)
    if others and not allow_others:
        raise Refused(f"other kind clusters are running ({', '.join(others)}): their nodes would count in the "
                      "host's pressure and idle. Measure them too (CLUSTERS=…), stop them, or ALLOW_OTHERS=1")
    return others


def wait_ready(kind, timeout_s: int) -> None:
    """Every node of the cluster Ready (kubectl in its control-plane node)."""
    kind.node_exec("kubectl", "--kubeconfig", "/etc/kubernetes/admin.conf", "wait", "--for=condition=Ready", "nodes",
                   "--all", f"--timeout={timeout_s}s", timeout=timeout_s + 10)


def sample(nodes: list[Node], cgroups: dict[str, NodeCgroup], seconds: float, interval: float,
           say: Callable[[str], None]) -> tuple[list[NodeFigures], dict]:
    """Sample every ``interval`` for ``seconds`` (see module doc); the nodes' figures and the host's."""
    ticks = max(1, math.ceil(seconds / interval))
    times: list[float] = []
    cpu: dict[str, list[int]] = {n.name: [] for n in nodes}
    memory: dict[str, list[int]] = {n.name: [] for n in nodes}
    psi: list[float] = []
    stat0 = read_text(PROC_STAT)
    start = time.monotonic()
    for i in range(ticks + 1):
        if i:
            time.sleep(max(start + i * interval - time.monotonic(), 0))
            try:
                psi.append(psi_some_avg10(read_text(PSI_CPU)))
            except (OSError, ValueError):
                pass
            if i % 6 == 0:
                say(f"  {i * interval:.0f}/{ticks * interval:.0f} s")
        times.append(time.monotonic())
        for n in nodes:
            cpu[n.name].append(cpu_ns(cgroups[n.name]))
            memory[n.name].append(working_set_bytes(cgroups[n.name]))
    stat1 = read_text(PROC_STAT)
    rows = [figures(n, times, cpu[n.name], memory[n.name]) for n in nodes]
    host = {"cpus": os.cpu_count(), "seconds": times[-1] - times[0], "interval_s": interval,
            "psi_some_avg10": {**spread(psi), "values": psi}, "cpu_idle_percent": idle_percent(stat0, stat1)}
    return rows, host


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--profiles", default="default multi-node", help="the suite's profiles whose clusters it makes (space-separated)")
    p.add_argument("--clusters", default="", help="clusters that exist, comma-separated: measured instead, never deleted")
    p.add_argument("--seconds", type=float, default=180, help="how long it samples (s)")
    p.add_argument("--settle", type=float, default=60, help="seconds after every node is Ready before sampling")
    p.add_argument("--interval", type=float, default=10, help="seconds between samples (the pressure's avg10)")
    p.add_argument("--out", type=Path, default=Path("reports/idle-cpu.json"), help="the JSON written")
    p.add_argument("--allow-others", action="store_true", help="measure although other kind clusters run")
    a = p.parse_args(argv)
    if a.seconds <= 0 or a.interval <= 0 or a.settle < 0:
        p.error("--seconds and --interval must be > 0, --settle ≥ 0")

    from e2e.cluster import egress
    from e2e.cluster.kind import (READY_TIMEOUT_S, STATE_DIR, Kind, PreflightError, Profile, check_docker, hold_run,
                                  profile_patches, release_run)
    from e2e.plugin.signals import Stop

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    given = [c for c in a.clusters.replace(",", " ").split() if c]
    try:
        check_docker()
        if given:
            profiles = []
            missing = [c for c in given if not Kind(c).exists()]
            if missing:
                raise Refused(f"no kind cluster {', '.join(missing)}")
        else:
            image = os.environ.get("E2E_NODE_IMAGE")
            if not image:
                raise Refused("E2E_NODE_IMAGE is not set (make idle-cpu reads it from REPORTS/profile.env)")
            extra = tuple(Path(x) for x in os.environ.get("E2E_PROFILE_PATCH", "").split(":") if x)
            profiles = [Profile(ROOT / "kind-config.yaml", image, extra + profile_patches(ROOT / "profiles", name), name)
                        for name in a.profiles.split()]
            given = [pr.cluster_name for pr in profiles]
        others = preflight(STATE_DIR, set(given), a.allow_others)
    except (Refused, PreflightError) as e:
        say(f"idle-cpu: refused: {e}")
        return 2

    run_id = f"idle-cpu-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"
    stop = Stop()
    stop.install()
    ours = [Kind.of(profile) for profile in profiles]  # deleted at the end where this run made them
    hold_run(run_id)  # make clean leaves this run's clusters alone; another idle-cpu refuses meanwhile
    try:
        for kind, profile in zip(ours, profiles, strict=True):
            say(f"idle-cpu: cluster {kind.name} (profile {profile.name}) …")
            kind.ensure(profile, run_id)  # every node Ready, CoreDNS available
        kinds = ours + [Kind(name) for name in given[len(ours):]]
        for kind in kinds:
            wait_ready(kind, READY_TIMEOUT_S)
        say(f"idle-cpu: every node Ready; settling {a.settle:.0f} s")
        time.sleep(a.settle)
        names = [n for kind in kinds for n in kind.nodes()]
        cluster_profiles = {k.name: k.state().get("profile", "-") for k in kinds}
        nodes = nodes_of(_docker("inspect", *names), cluster_profiles)
        mountinfo = read_text(MOUNTINFO)
        cgroups = {n.name: node_cgroup(read_text(f"/proc/{n.pid}/cgroup"), mountinfo, n.id) for n in nodes}
        say(f"idle-cpu: sampling {len(nodes)} nodes for {a.seconds:.0f} s (cgroup v{cgroups[nodes[0].name].version})")
        rows, host = sample(nodes, cgroups, a.seconds, a.interval, say)
        text = markdown(rows, host)
        print(text)
        report = {"run_id": run_id, "node_image": os.environ.get("E2E_NODE_IMAGE"), "settle_s": a.settle,
                  "cgroup_version": cgroups[nodes[0].name].version, "other_clusters": others, "host": host,
                  "nodes": [{**asdict(r.node), "cpu_percent": round(r.cpu_percent, 2),
                             "cpu_percent_max": round(r.cpu_percent_max, 2), "memory_mib": round(r.memory_mib, 1)}
                            for r in rows],
                  "by_role": by_role(rows)}
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
        say(f"idle-cpu: {a.out}")
        return 0
    except KeyboardInterrupt:
        say(f"idle-cpu: stopped ({stop.first or 'KeyboardInterrupt'}); deleting the clusters it made")
        return 130
    except (PreflightError, RuntimeError, ValueError, OSError) as e:
        say(f"idle-cpu: failed: {e}")
        return 1
    finally:
        stop.stopping = True  # a further Ctrl-C or SIGTERM is said and ignored: the deletion runs to its end
        made = [kind for kind in ours if kind.owned_by(run_id)]
        for kind in made:
            say(f"idle-cpu: deleting {kind.name}")
            try:
                kind.delete_unless_used()
            except PreflightError as e:
                say(f"idle-cpu: deleting {kind.name} failed (`make clean` removes it): {e}")
        release_run(run_id)
        try:
            if made and egress.release():
                say(f"idle-cpu: egress guard and network {egress.NETWORK} removed (no cluster left on it)")
        except Exception as e:  # noqa: BLE001 - as the suite's end of run: make clean removes them later
            say(f"idle-cpu: removing the egress guard failed (`make clean` tries again): {e}")
        stop.restore()


if __name__ == "__main__":
    sys.exit(main())
