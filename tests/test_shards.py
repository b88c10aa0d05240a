"""e2e.run.shards and ``--shard I/N``: one selection split across runners, each shard a
complete run — every test in exactly one shard, balanced by learned durations, a profile kept
together where another cluster would cost more than it saves."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from e2e.run.plan import Cost
from e2e.run.shards import CLUSTER_CREATE_S, expected_s, parse_shard, split

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("text, parsed", [("1/1", (1, 1)), ("2/3", (2, 3)), (" 3/3 ", (3, 3))])
def test_parse_shard(text, parsed):
    assert parse_shard(text) == parsed


@pytest.mark.parametrize("text", ["0/3", "4/3", "1/0", "2-3", "a/b", ""])
def test_a_bad_shard_names_the_form(text):
    with pytest.raises(ValueError, match=r"expected I/N with 1 ≤ I ≤ N"):
        parse_shard(text)


def test_every_test_lands_in_exactly_one_shard_and_the_shards_balance():
    costs = [Cost(f"t{i}", "default" if i % 3 else "fast", duration_s=10.0 + i) for i in range(30)]
    shards = split(costs, 3)
    assert sorted(n for s in shards for n in s) == sorted(c.nodeid for c in costs)
    walls = [expected_s(costs, s) for s in shards]
    assert max(walls) - min(walls) <= max(c.duration_s for c in costs) + CLUSTER_CREATE_S
    assert split(list(reversed(costs)), 3) == shards  # the same split on every runner


def test_a_profile_stays_on_one_shard_unless_another_copy_shortens_the_longest_shard():
    # a short profile joins the shard that has it rather than pay a second creation elsewhere
    costs = [Cost("d1", "default", duration_s=200), Cost("d2", "default", duration_s=100),
             Cost("m1", "multi-node", duration_s=20), Cost("m2", "multi-node", duration_s=20)]
    shards = split(costs, 2)
    assert ["m1", "m2"] in [[n for n in s if n.startswith("m")] for s in shards]
    # long enough tests are worth a second copy: the longest shard is shorter that way
    costs = [Cost("d1", "default", duration_s=200), Cost("d2", "default", duration_s=200),
             Cost("a1", "multi-node", duration_s=100), Cost("a2", "multi-node", duration_s=100)]
    shards = split(costs, 2)
    assert sorted(map(sorted, shards)) == [["a1", "d1"], ["a2", "d2"]]
    assert max(expected_s(costs, s) for s in shards) < expected_s(costs, ["d1", "a1", "a2"])


def test_more_shards_than_tests_leaves_some_empty():
    assert sorted(map(len, split([Cost("t", "default", duration_s=5)], 3))) == [0, 0, 1]


def collect(*args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "pytest", "scenarios", "-m", "not slow", "--collect-only", "-q",
                          "-p", "no:cacheprovider", *args], cwd=ROOT, capture_output=True, text=True, timeout=120)
    return out.stdout + out.stderr


def test_the_shards_of_the_default_selection_cover_it_once():
    every = {line for line in collect().splitlines() if "::" in line}
    parts = [{line for line in collect("--shard", f"{i}/3").splitlines() if "::" in line} for i in (1, 2, 3)]
    assert set().union(*parts) == every and sum(map(len, parts)) == len(every)
    assert all(parts)
    assert "shard 2/3:" in collect("--shard", "2/3")


def test_a_malformed_shard_is_a_usage_error():
    text = collect("--shard", "4/3")
    assert "--shard '4/3': expected I/N with 1 ≤ I ≤ N (e.g. 2/3)" in text and "Traceback" not in text
