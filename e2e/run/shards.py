"""Shards: one selection split across ``n`` runners (``--shard i/n``), each a complete run.

A shard pays for every cluster it creates, so a profile's tests stay on one shard unless the
shards balance better by paying for another copy. The split is the longest-processing-time rule
on the tests (by their learned durations, :func:`e2e.run.plan.load_durations`), each placed on
the shard whose expected wall time grows the least — a shard without the test's profile yet adds
``create_s`` for its cluster. Tests of equal duration go by node id, so every runner of the same
selection and durations computes the same split without talking to the others.

Each shard's reports directory holds :data:`SHARD_FILE` beside its junit.xml: ``{"shard": "2/3",
"run_id": …, "tests": [node ids]}`` — the tests it was given, so that the merge of the shards'
reports (:mod:`e2e.cli.merge`) can tell a test that never reported from one that was not there.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path

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


def split(costs: Iterable[Cost], count: int, create_s: float = CLUSTER_CREATE_S) -> list[list[str]]:
    """Returns ``count`` lists of node ids (some may be empty) covering ``costs`` once each,
    balanced by expected wall time: each test's ``duration_s`` plus ``create_s`` seconds for each
    profile a shard runs (module doc)."""
    loads = [0.0] * count
    profiles: list[set[str]] = [set() for _ in range(count)]
    shards: list[list[str]] = [[] for _ in range(count)]
    for cost in sorted(costs, key=lambda c: (-c.duration_s, c.nodeid)):
        grown = [loads[i] + cost.duration_s + (0.0 if cost.profile in profiles[i] else create_s) for i in range(count)]
        best = min(range(count), key=lambda i: (grown[i], i))
        loads[best] = grown[best]
        profiles[best].add(cost.profile)
        shards[best].append(cost.nodeid)
    return shards


def expected_s(costs: Iterable[Cost], nodeids: Iterable[str], create_s: float = CLUSTER_CREATE_S) -> float:
    """The expected wall time (s) of the shard running ``nodeids``: their durations plus one
    cluster creation per profile."""
    chosen = set(nodeids)
    mine = [c for c in costs if c.nodeid in chosen]
    return sum(c.duration_s for c in mine) + create_s * len({c.profile for c in mine})


def write_record(path: Path, shard: str, run_id: str, tests: Iterable[str]) -> None:
    """Write the shard's record (module doc) to ``path`` atomically; every process of a
    concurrent run computes the same one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(json.dumps({"shard": shard, "run_id": run_id, "tests": sorted(tests)}, indent=1) + "\n")
    os.replace(tmp, path)
