"""The plan of a concurrent run: which tests start first, and how many copies of a profile's
cluster its serial tests get.

A test's cost class comes from its markers:

- ``serial`` — node-exclusive (faults, cordon, taints, node-wide eviction): never shares its
  cluster with another test. Each profile with serial tests gets *lanes*: copies (replicas) of
  its cluster, each running one serial test at a time, so a profile's serial tests run side by
  side instead of in one queue. A profile whose other tests share its copy 0 keeps its serial
  tests there, taking turns with the others (:func:`e2e.plugin.clusters.hold_node`), unless
  they sum to more than a lane: then they get copies 1, 2, ….
- ``heavy`` — HTTP load, filling a disk, allocating memory, many pods at once: at most
  ``heavy_slots`` of them at once in a run (:func:`e2e.plugin.clusters.heavy_slot`).
- otherwise *waiting*: a test that mostly waits on kubelet and controller timers; as many run at
  once as there are xdist workers.

Apart from its class, a ``traffic`` test (it judges the requests a Service served through a
fault: counts of failed requests with a 1 s request timeout) runs in the run's *second phase*:
after every other test has ended, so that only the clusters of the second phase's profiles are
still alive. Measured (conc-3, 6 workers, 8 kind nodes alive, v1.37.2): the host's CPU pressure
(PSI some, avg10) stayed at 50–90 % while 8 nodes idled and fell with each cluster deleted; NF-6
and NF-8 then counted 2 and 4 requests timed out in bursts (consecutive requests, ~0.4 s apart),
where every sequential run counts 0. Their family keeps its band and gets this lower concurrency
class instead (:func:`e2e.plugin.clusters.wait_for_phase`).

Rooms (``--rooms``, :mod:`e2e.cluster.rooms`): the profiles that are rooms of the one rooms
cluster share its control plane, but each room has its own node(s), its own node lock and its own
zone. Their waiting tests run side by side as on any cluster, also across rooms; a room's serial
tests take turns on that room's node(s) only (``lanes`` ``[0]``: never a copy, which would be a
cluster of its own, a control plane more), while the other rooms go on. A serial test whose fault
reaches beyond its node (:attr:`Cost.cluster_wide`: the API server, the cluster's add-ons) holds
every room (:attr:`Plan.every_room`) and starts after the phase's other tests. The rooms cluster is
one entry of :attr:`Plan.clusters`; a sequential run runs the rooms' tests first, the default
room's first, so that the rooms cluster goes before the other profiles' clusters are made.

The number of lanes of a profile is its serial tests' summed duration over ``lane_s``, rounded
up, between 1 and ``max_replicas``: a run's length is bounded by its longest lane (plus one
cluster creation), so ``lane_s`` is the length a lane aims at. Durations are learned
(:func:`load_durations`): the last run's per-test wall time (``reports/durations.json``) over the
committed seed (``scenarios/durations.json``, a quiet sequential run), ``UNKNOWN_S`` for a test
neither has seen.

Clusters ready ahead: a concurrent run creates every cluster it will use before its first test
(each xdist worker one of them, at most ``E2E_CREATE_SLOTS`` at once), so that no creation falls
into a judged window later; a profile's clusters go after its last test.

Order: the first phase, then the second (traffic) phase, each as follows: serial tests that
take turns on a shared copy last (then they wait for no one), those holding every room after
them; the others longest first (the longest-processing-time rule), interleaved for pytest-xdist's ``load``
scheduling with ``--maxschedchunk 1``: each worker is sent two tests at the start (the one it
runs and the one it runs next), then one at a time, so the first ``2 × workers`` positions are
arranged as (1st, (w+1)th), (2nd, (w+2)th), … longest.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..cluster.kind import DEFAULT_PROFILE

# The run's per-test durations, in its reports directory (written by e2e.record.hostload.DurationLog).
DURATIONS_FILE = "durations.json"
# Seconds assumed for a test no durations file knows.
UNKNOWN_S = 60.0
# Seconds a lane aims at (env E2E_LANE_S): the fault family's serial tests (~950 s on the
# fast-lifecycle profile, ~480 s on multi-node-fast-lifecycle, measured sequentially on v1.37.2)
# then take 2 and 1 lanes. Each copy costs the host CPU while it merely idles (a control plane,
# etcd, kubelet, containerd): on 2 cores 8 clusters (11 nodes) left the CPU 0–1 % idle with a
# run queue of 20–150 before any test load, so the lanes are few and long.
LANE_S = float(os.environ.get("E2E_LANE_S", "480"))
# At most this many copies of one profile's cluster (env E2E_MAX_REPLICAS): memory (~0.7 GiB a
# node) and the idle CPU of each control plane.
MAX_REPLICAS = int(os.environ.get("E2E_MAX_REPLICAS", "2"))
# Heavy tests at once in a run (env E2E_HEAVY_SLOTS).
HEAVY_SLOTS = int(os.environ.get("E2E_HEAVY_SLOTS", "1"))


@dataclass(frozen=True)
class Cost:
    """What the plan knows of one test: its node id, profile, class markers and expected
    duration (s)."""

    nodeid: str
    profile: str
    serial: bool = False
    heavy: bool = False
    duration_s: float = UNKNOWN_S
    traffic: bool = False
    # its faults reach beyond its own node (e2e.faults.actions.Action.cluster_wide): a serial test
    # of a room then holds every room (module doc)
    cluster_wide: bool = False

    @property
    def cost_class(self) -> str:
        """``serial``, ``heavy`` or ``waiting`` (serial wins over heavy)."""
        return "serial" if self.serial else "heavy" if self.heavy else "waiting"

    @property
    def phase(self) -> int:
        """1, or 2 for a ``traffic`` test (module doc)."""
        return 2 if self.traffic else 1


@dataclass
class Plan:
    """``order``: node ids in the order to start them; ``lanes``: per profile, the replicas its
    serial tests may use (a one-item list in a sequential run: the profile's one cluster)."""

    order: list[str] = field(default_factory=list)
    lanes: dict[str, list[int]] = field(default_factory=dict)
    # (profile, copy) of every cluster a concurrent run uses, to create before any test starts
    # (e2e.plugin.collection): the lanes' copies first, then the other profiles' copy 0
    clusters: list[tuple[str, int]] = field(default_factory=list)
    # node ids of the second (traffic) phase of a concurrent run: each waits for the first
    # phase's tests to end (empty in a sequential run: one test at a time anyway)
    second_phase: frozenset[str] = frozenset()
    # the first phase's tests' summed duration (s): how long a second-phase test waits at most
    first_phase_s: float = 0.0
    # the profiles of these tests that are rooms of the one rooms cluster (e2e.cluster.rooms; empty
    # without --rooms), and the node ids of the serial tests that hold every room of it at once
    rooms: frozenset[str] = frozenset()
    every_room: frozenset[str] = frozenset()


def load_durations(*paths: Path) -> dict[str, float]:
    """Per node id, the wall time (s) of the test's last run: later files override earlier ones
    (a missing or unreadable file counts as empty). An entry is a number or a mapping with
    ``wall_s`` (the run's durations file)."""
    out: dict[str, float] = {}
    for path in paths:
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, ValueError):
            continue
        for nodeid, entry in (data.items() if isinstance(data, dict) else ()):
            value = entry.get("wall_s") if isinstance(entry, dict) else entry
            if isinstance(value, (int, float)) and value >= 0:
                out[nodeid] = float(value)
    return out


def lane_count(serial_s: float, lane_s: float = LANE_S, max_replicas: int = MAX_REPLICAS) -> int:
    """Lanes for serial tests summing ``serial_s`` seconds: ⌈serial_s / lane_s⌉ within [1, max_replicas]."""
    return max(1, min(max_replicas, math.ceil(serial_s / lane_s)))


def make_plan(costs: Iterable[Cost], workers: int, lane_s: float = LANE_S, max_replicas: int = MAX_REPLICAS,
              rooms: Iterable[str] = ()) -> Plan:
    """The plan for these tests on ``workers`` xdist workers (0: sequential — every profile's
    tests together, the default's first, one cluster per profile). ``rooms``: the profiles that
    are rooms of the one rooms cluster (module doc; ``()``: none)."""
    costs = list(costs)
    profiles = sorted({c.profile for c in costs})
    used = frozenset(rooms) & set(profiles)
    every_room = frozenset(c.nodeid for c in costs if c.profile in used and c.serial and c.cluster_wide)
    if workers <= 0:
        order = sorted(costs, key=lambda c: (c.profile not in used, c.profile != DEFAULT_PROFILE, c.profile))
        return Plan([c.nodeid for c in order], {p: [0] for p in profiles if any(c.serial for c in costs if c.profile == p)},
                    rooms=used, every_room=every_room)
    lanes: dict[str, list[int]] = {}
    for p in profiles:
        serial = [c for c in costs if c.profile == p and c.serial]
        if not serial:
            continue
        total = sum(c.duration_s for c in serial)
        if p in used:
            lanes[p] = [0]  # its room's node(s): a copy would be a cluster of its own
        elif any(not c.serial for c in costs if c.profile == p):
            # copy 0 is shared: its serial tests take turns there unless they fill a lane
            lanes[p] = [0] if total <= lane_s else list(range(1, 1 + lane_count(total, lane_s, max_replicas)))
        else:
            lanes[p] = list(range(lane_count(total, lane_s, max_replicas)))
    # the rooms cluster is made once, through its first room (the default's when it has one)
    home = min(used, key=lambda p: (p != DEFAULT_PROFILE, p)) if used else ""
    clusters = [(p, r) for p in sorted(lanes, key=lambda p: -len(lanes[p])) if p not in used for r in lanes[p]]
    clusters += list(dict.fromkeys((home if p in used else p, 0) for p in profiles if (p, 0) not in clusters))
    first = [c for c in costs if c.phase == 1]
    second = [c for c in costs if c.phase == 2]
    nodeids = _phase_order(first, lanes, costs, workers, every_room)
    # the second phase starts on workers freed one by one: longest first, no interleaving
    nodeids += _phase_order(second, lanes, costs, workers if not first else 1, every_room)
    return Plan(nodeids, lanes, clusters, frozenset(c.nodeid for c in second) if first else frozenset(),
                sum(c.duration_s for c in first), used, every_room)


def _phase_order(phase: list[Cost], lanes: dict[str, list[int]], costs: list[Cost], workers: int,
                 every_room: frozenset[str]) -> list[str]:
    # serial tests taking turns on a shared copy go last: by then no shared test is left to wait
    # for; those that hold every room after them
    last = [c for c in phase if c.serial and lanes[c.profile] == [0]
            and (c.nodeid in every_room or any(not o.serial for o in costs if o.profile == c.profile))]
    last.sort(key=lambda c: c.nodeid in every_room)
    longest = [c.nodeid for c in sorted((c for c in phase if c not in last), key=lambda c: (-c.duration_s, c.nodeid))]
    return _interleave(longest, workers) + [c.nodeid for c in last]


def _interleave(longest: list[str], workers: int) -> list[str]:
    """(1st, (w+1)th), (2nd, (w+2)th), … for the first 2w, then the rest in order (module doc)."""
    head, tail = longest[: 2 * workers], longest[2 * workers:]
    first, second = head[:workers], head[workers:]
    out = []
    for i, nodeid in enumerate(first):
        out.append(nodeid)
        if i < len(second):
            out.append(second[i])
    return out + tail

