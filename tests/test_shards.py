"""e2e.run.shards and ``--shard I/N``: one selection split across runners, each shard a
complete run — every test in exactly one shard, balanced by learned durations, a profile kept
together where another cluster would cost more than it saves."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from e2e.run.plan import Cost
from e2e.run.shards import (CLUSTER_CREATE_S, SHARD_FILE, ShardRecord, commit_of, digest, expected_s, parse_shard,
                            read_record, split, split_inputs, write_record)

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


def test_with_rooms_the_rooms_tests_pay_one_creation_and_stay_together():
    """--rooms (e2e.cluster.rooms): the default, cap and pulls tests share the rooms cluster."""
    costs = [Cost("d1", "default", duration_s=200), Cost("f1", "fast", duration_s=200),
             Cost("c1", "cap", duration_s=30), Cost("p1", "pulls", duration_s=30)]
    assert split(costs, 2) == [["d1", "c1"], ["f1", "p1"]]  # a cluster each: cap and pulls anywhere
    rooms = ("default", "cap", "pulls")
    assert split(costs, 2, rooms=rooms) == [["d1", "c1", "p1"], ["f1"]]
    assert expected_s(costs, ["d1", "c1", "p1"], rooms=rooms) == 260 + CLUSTER_CREATE_S
    assert expected_s(costs, ["d1", "c1", "p1"]) == 260 + 3 * CLUSTER_CREATE_S


def test_a_record_says_whether_the_rooms_were_on_and_one_without_it_reads_as_off(tmp_path):
    written = record_of(["t1", "t2"], ["t1"])
    on = ShardRecord(2, written.run_id, split_inputs("eb322d2", "v1.37.2", [], ["t1", "t2"], 2, rooms=True),
                     ["t1", "t2"], ["t2"])
    assert written.inputs.differences(on.inputs) == ["durations digest", "--rooms"]
    write_record(tmp_path / "shard.json", written)
    data = json.loads((tmp_path / "shard.json").read_text())
    del data["inputs"]["rooms"]  # a record written before --rooms counted
    (tmp_path / "shard.json").write_text(json.dumps(data))
    assert read_record(tmp_path / "shard.json") == written


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


def record_of(selection: list[str], part: list[str], count: int = 2, durations_s: float = 60.0) -> ShardRecord:
    costs = [Cost(t, "default", duration_s=durations_s) for t in selection]
    return ShardRecord(1, "20261206-021700-beef", split_inputs("eb322d2", "v1.37.2", costs, selection, count), selection, part)


def test_a_record_reads_back_as_written_and_its_inputs_name_what_differs(tmp_path):
    written = record_of(["t1", "t2", "t3"], ["t1", "t3"])
    write_record(tmp_path / "shard.json", written)
    assert read_record(tmp_path / "shard.json") == written
    assert json.loads((tmp_path / "shard.json").read_text())["inputs"] == {
        "commit": "eb322d2", "kubernetes": "v1.37.2", "durations": written.inputs.durations,
        "selection": written.inputs.selection, "count": 2, "rooms": False}
    other = record_of(["t1", "t2", "t3"], ["t2"], durations_s=30.0).inputs
    assert written.inputs.differences(other) == ["durations digest"]
    assert written.inputs.differences(record_of(["t1"], ["t1"], count=3).inputs) == [
        "durations digest", "selection digest", "shard count"]
    assert written.inputs.differences(written.inputs) == []


@pytest.mark.parametrize("change, expected", [
    (lambda d: {**d, "tests": ["t1", "t9"]}, "its part holds 1 test(s) not in its selection: t9"),
    (lambda d: {**d, "selection": ["t1"], "tests": ["t1"]}, "is not the one its inputs name"),
    (lambda d: {**d, "shard": "1/3"}, "shard 1/3 but inputs.count 2"),
    (lambda d: {k: v for k, v in d.items() if k != "inputs"}, "not a shard record with shard, run_id, inputs"),
    (lambda d: {**d, "inputs": {**d["inputs"], "extra": 1}}, "not a shard record"),
])
def test_a_record_that_is_not_what_its_inputs_say_is_refused(tmp_path, change, expected):
    write_record(tmp_path / "shard.json", record_of(["t1", "t2", "t3"], ["t1"]))
    data = json.loads((tmp_path / "shard.json").read_text())
    (tmp_path / "shard.json").write_text(json.dumps(change(data)))
    with pytest.raises(ValueError, match=re.escape(expected)):
        read_record(tmp_path / "shard.json")


def test_the_commit_is_the_checkouts_and_none_outside_one(tmp_path):
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert commit_of(ROOT) == head and len(head) == 40
    assert commit_of(tmp_path) is None


TWO = """
import pytest

@pytest.fixture
def cluster():  # the split counts the tests with a cluster; these need none
    return None

@pytest.mark.parametrize("name", ["a", "b", "c"])
def test_t(cluster, name):
    pass

def test_without_a_cluster():
    pass
"""


def test_the_record_is_written_at_collection_with_the_selection_before_the_split(pytester, tmp_path, monkeypatch):
    from e2e.plugin import clusters

    monkeypatch.setattr(clusters, "_preflight", lambda config: None)  # the kubeconfig is never dialled
    monkeypatch.delenv("PYTEST_XDIST_WORKER_COUNT", raising=False)  # these tests under xdist: the run is sequential
    pytester.makepyfile(test_two=TWO)
    pytester.makeconftest("def pytest_collection_finish(session):\n    raise KeyboardInterrupt  # Ctrl-C\n")
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("")
    reports = tmp_path / "R"
    result = pytester.runpytest(f"--kubeconfig={kubeconfig}", f"--reports-dir={reports}", "--shard=1/2", "-k", "not t[c]",
                                "-p", "no:cacheprovider", no_reraise_ctrlc=True)
    assert result.ret == pytest.ExitCode.INTERRUPTED and not (reports / "junit.xml").exists()  # no test ran
    got = read_record(reports / SHARD_FILE)
    # the selection after -k, before the split; a test without a cluster goes to shard 1
    assert got.selection == ["test_two.py::test_t[a]", "test_two.py::test_t[b]", "test_two.py::test_without_a_cluster"]
    assert got.tests == ["test_two.py::test_t[a]", "test_two.py::test_without_a_cluster"]
    assert (got.index, got.inputs.count, got.inputs.commit, got.inputs.kubernetes) == (1, 2, None, None)
    assert got.inputs.durations == digest({"test_two.py::test_t[a]": 60.0, "test_two.py::test_t[b]": 60.0})


def test_a_run_without_shard_removes_an_earlier_shards_record(pytester, tmp_path, monkeypatch):
    from e2e.plugin import clusters

    monkeypatch.setattr(clusters, "_preflight", lambda config: None)
    monkeypatch.delenv("PYTEST_XDIST_WORKER_COUNT", raising=False)
    pytester.makepyfile(test_two=TWO)
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("")
    reports = tmp_path / "R"
    args = (f"--kubeconfig={kubeconfig}", f"--reports-dir={reports}", "-p", "no:cacheprovider")
    pytester.runpytest(*args, "--shard=2/2").assert_outcomes(passed=1)
    assert read_record(reports / SHARD_FILE).tests == ["test_two.py::test_t[b]"]
    monkeypatch.delenv("E2E_RUN_ID")
    pytester.runpytest(*args).assert_outcomes(passed=4)
    assert not (reports / SHARD_FILE).exists()  # its reports are its own: no earlier shard's record beside them
