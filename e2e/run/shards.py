"""Shards: one selection split across ``n`` runners (``--shard i/n``), each a complete run.

A shard pays for every cluster it creates, so a profile's tests stay on one shard unless the
shards balance better by paying for another copy. The split is the longest-processing-time rule
on the tests (by their learned durations, :func:`e2e.run.plan.load_durations`), each placed on
the shard whose expected wall time grows the least — a shard without the test's profile yet adds
``create_s`` for its cluster. With ``--rooms`` the room profiles (e2e.cluster.rooms) count as
one: their tests share the rooms cluster, one creation for all of them. Tests of equal duration go
by node id, so every runner of the same selection and durations computes the same split without
talking to the others.

Each shard's reports directory holds :data:`SHARD_FILE`, written at collection — before any test
runs, so a shard whose pytest stops before its first test still says what it was given
(:func:`write_record`)::

    {"shard": "2/3", "run_id": "20261206-021700-beef",
     "inputs": {"commit": "eb322d2…", "kubernetes": "v1.37.2", "durations": "3f2a…",
                "selection": "9b1c…", "count": 3, "rooms": false},
     "selection": [every node id selected before the split],
     "tests": [the node ids of this shard's part]}

``inputs`` (:class:`SplitInputs`) are what the split is computed from: the suite's git commit,
the node image's Kubernetes version, a digest of the durations the split read for the selected
tests, a digest of the selection, the shard count and whether the rooms were on (a record
without it: off). Shards of the same inputs computed the same
split; the merge of their reports (:mod:`e2e.cli.merge`) refuses shards of different inputs, and
tells a test that never reported from one that was not there.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from collections.abc import Iterable
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from ..cluster.rooms import ROOMS_PROFILE
from .plan import Cost

# A shard's record in its reports directory (module doc).
SHARD_FILE = "shard.json"

# One kind cluster's creation on the 2-core host (s): 60–90 s measured (v1.37.2, cached node image).
CLUSTER_CREATE_S = 90.0

_SHARD = re.compile(r"([1-9][0-9]*)/([1-9][0-9]*)")


def parse_shard(text: str) -> tuple[int, int]:
    """``"2/3"`` → ``(2, 3)``: shard ``i`` of ``n``, 1 ≤ i ≤ n. ``ValueError`` naming the form
    otherwise."""
    m = _SHARD.fullmatch(text.strip())
    if m is None or int(m.group(1)) > int(m.group(2)):
        raise ValueError(f"--shard {text!r}: expected I/N with 1 ≤ I ≤ N (e.g. 2/3)")
    return int(m.group(1)), int(m.group(2))


def split(costs: Iterable[Cost], count: int, create_s: float = CLUSTER_CREATE_S,
          rooms: Iterable[str] = ()) -> list[list[str]]:
    """Returns ``count`` lists of node ids (some may be empty) covering ``costs`` once each,
    balanced by expected wall time: each test's ``duration_s`` plus ``create_s`` seconds for each
    cluster a shard makes: one per profile, one for all the profiles of ``rooms`` (module doc)."""
    rooms = frozenset(rooms)
    loads = [0.0] * count
    made: list[set[str]] = [set() for _ in range(count)]
    shards: list[list[str]] = [[] for _ in range(count)]
    for cost in sorted(costs, key=lambda c: (-c.duration_s, c.nodeid)):
        cluster = _cluster(cost, rooms)
        grown = [loads[i] + cost.duration_s + (0.0 if cluster in made[i] else create_s) for i in range(count)]
        best = min(range(count), key=lambda i: (grown[i], i))
        loads[best] = grown[best]
        made[best].add(cluster)
        shards[best].append(cost.nodeid)
    return shards


def _cluster(cost: Cost, rooms: frozenset[str]) -> str:
    """The cluster a test needs: the rooms cluster for a room's test, else its profile's."""
    return ROOMS_PROFILE if cost.profile in rooms else cost.profile


def expected_s(costs: Iterable[Cost], nodeids: Iterable[str], create_s: float = CLUSTER_CREATE_S,
               rooms: Iterable[str] = ()) -> float:
    """The expected wall time (s) of the shard running ``nodeids``: their durations plus one
    cluster creation per profile (one for all the profiles of ``rooms``)."""
    chosen = set(nodeids)
    mine = [c for c in costs if c.nodeid in chosen]
    return sum(c.duration_s for c in mine) + create_s * len({_cluster(c, frozenset(rooms)) for c in mine})


@dataclass(frozen=True)
class SplitInputs:
    """What a split is computed from (module doc): runners of equal inputs compute the same parts.

    ``commit``: the suite's git commit (None outside a git checkout); ``kubernetes``: the node
    image's version, ``v1.37.2`` (None with ``--kubeconfig`` or a tag naming none); ``durations``:
    :func:`digest` of ``{node id: seconds}`` the split read for the selected tests with a cluster;
    ``selection``: :func:`digest` of the selected node ids, sorted; ``count``: N of ``I/N``;
    ``rooms``: whether the room profiles counted as one cluster (``--rooms``)."""

    commit: str | None
    kubernetes: str | None
    durations: str
    selection: str
    count: int
    rooms: bool = False

    # how a field is named in a message
    LABELS = {"commit": "commit", "kubernetes": "Kubernetes version", "durations": "durations digest",
              "selection": "selection digest", "count": "shard count", "rooms": "--rooms"}

    def differences(self, other: SplitInputs) -> list[str]:
        """The fields (their :data:`LABELS`) in which ``other`` differs, in field order."""
        return [self.LABELS[f.name] for f in fields(self) if getattr(self, f.name) != getattr(other, f.name)]


def digest(document: object) -> str:
    """The first 16 hex digits of the SHA-256 of ``document`` as canonical JSON (sorted keys)."""
    return hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()[:16]


def commit_of(root: Path) -> str | None:
    """``git rev-parse HEAD`` in ``root``; None when it is no git checkout (or git is missing)."""
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    commit = out.stdout.strip()
    return commit if out.returncode == 0 and commit else None


def split_inputs(commit: str | None, kubernetes: str | None, costs: Iterable[Cost], selection: Iterable[str],
                 count: int, rooms: bool = False) -> SplitInputs:
    """The :class:`SplitInputs` of a split of ``selection`` (node ids) whose tests with a cluster
    have these ``costs``, into ``count`` shards (``rooms``: with ``--rooms``)."""
    return SplitInputs(commit, kubernetes, digest({c.nodeid: c.duration_s for c in costs}), digest(sorted(selection)), count,
                       rooms)


@dataclass
class ShardRecord:
    """A shard's record (module doc): shard ``index`` of ``inputs.count``, its ``run_id``, the
    whole ``selection`` and its part, ``tests`` (node ids, sorted)."""

    index: int
    run_id: str
    inputs: SplitInputs
    selection: list[str]
    tests: list[str]

    @property
    def shard(self) -> str:
        """``"2/3"``."""
        return f"{self.index}/{self.inputs.count}"


def write_record(path: Path, record: ShardRecord) -> None:
    """Write ``record`` (module doc) to ``path`` atomically; every process of a concurrent run
    computes the same one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(json.dumps({"shard": record.shard, "run_id": record.run_id, "inputs": asdict(record.inputs),
                               "selection": sorted(record.selection), "tests": sorted(record.tests)}, indent=1) + "\n")
    os.replace(tmp, path)


def read_record(path: Path) -> ShardRecord:
    """The record at ``path``. ``FileNotFoundError`` when there is none; ``ValueError`` naming what
    is wrong for a file that is not a record of this shape (module doc) — also one whose selection
    does not match its own digest, or whose part is not in its selection."""
    text = path.read_text()
    try:
        data = json.loads(text)
        index, count = parse_shard(data["shard"])
        inputs = SplitInputs(**data["inputs"])
        selection, tests, run_id = list(data["selection"]), list(data["tests"]), data["run_id"]
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError(f"not a shard record with shard, run_id, inputs, selection and tests ({type(e).__name__}: {e})") from None
    if not isinstance(run_id, str) or not all(isinstance(t, str) for t in selection + tests):
        raise ValueError("run_id, selection and tests must be strings")
    if inputs.count != count:
        raise ValueError(f"shard {data['shard']} but inputs.count {inputs.count}")
    if digest(sorted(selection)) != inputs.selection:
        raise ValueError(f"its selection (digest {digest(sorted(selection))}) is not the one its inputs name ({inputs.selection})")
    foreign = sorted(set(tests) - set(selection))
    if foreign:
        raise ValueError(f"its part holds {len(foreign)} test(s) not in its selection: {', '.join(foreign)}")
    return ShardRecord(index, run_id, inputs, selection, tests)
