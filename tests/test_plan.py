"""The plan of a concurrent run (e2e.run.plan): lanes per profile, longest first, durations."""

from __future__ import annotations

import json

from e2e.run.plan import UNKNOWN_S, Cost, lane_count, load_durations, make_plan


def test_a_sequential_run_keeps_each_profile_together_default_first_one_cluster_each():
    costs = [Cost("f1", "fast", serial=True, duration_s=180), Cost("d1", "default", duration_s=5),
             Cost("c1", "cap", duration_s=100), Cost("d2", "default", serial=True, duration_s=30)]
    plan = make_plan(costs, workers=0)
    assert plan.order == ["d1", "d2", "c1", "f1"]
    assert plan.lanes == {"fast": [0], "default": [0]}


def test_serial_tests_get_lanes_by_their_summed_duration():
    costs = [Cost(f"f{i}", "fast", serial=True, duration_s=150) for i in range(6)]  # 900 s, nothing shared
    costs += [Cost("d1", "default", duration_s=20), Cost("d2", "default", serial=True, duration_s=100)]
    costs += [Cost("m1", "multi", duration_s=20)] + [Cost(f"m{i}", "multi", serial=True, duration_s=300) for i in (2, 3)]
    plan = make_plan(costs, workers=8, lane_s=360, max_replicas=3)
    # fast: 3 lanes from copy 0 (nobody shares it); default: a short serial line takes turns on
    # the shared copy 0; multi: 600 s of serial tests fill two lanes next to the shared copy 0
    assert plan.lanes == {"fast": [0, 1, 2], "default": [0], "multi": [1, 2]}
    assert plan.order[-1] == "d2"  # takes turns on default's shared copy: last, it waits for no one
    assert plan.clusters == [("fast", 0), ("fast", 1), ("fast", 2), ("multi", 1), ("multi", 2), ("default", 0), ("multi", 0)]


def test_traffic_tests_form_a_second_phase_after_every_other_test():
    costs = [Cost("nf6", "fast", serial=True, traffic=True, duration_s=80), Cost("nf1", "fast", serial=True, duration_s=180),
             Cost("nf8", "multi", serial=True, traffic=True, duration_s=150), Cost("cl1", "default", duration_s=120),
             Cost("sc1", "default", duration_s=10)]
    plan = make_plan(costs, workers=4)
    assert plan.order == ["nf1", "cl1", "sc1", "nf8", "nf6"]  # each phase longest first
    assert plan.second_phase == {"nf6", "nf8"}
    assert plan.first_phase_s == 310
    assert [Cost("x", "p", serial=True, traffic=True).cost_class, Cost("x", "p", traffic=True).phase] == ["serial", 2]


def test_only_traffic_tests_or_a_sequential_run_have_no_second_phase():
    only = [Cost("nf6", "fast", serial=True, traffic=True, duration_s=80), Cost("nf8", "fast", serial=True, traffic=True)]
    assert make_plan(only, workers=4).second_phase == frozenset()  # nothing to wait for
    mixed = [*only, Cost("cl1", "default", duration_s=120)]
    assert make_plan(mixed, workers=0).second_phase == frozenset()


def test_lanes_are_capped_and_never_none():
    assert lane_count(0) == 1
    assert lane_count(10_000, lane_s=360, max_replicas=3) == 3
    assert lane_count(361, lane_s=360, max_replicas=3) == 2


def test_longest_first_interleaved_for_two_tests_a_worker():
    costs = [Cost(f"t{d}", "default", duration_s=d) for d in (10, 90, 50, 70, 30, 20, 80)]
    plan = make_plan(costs, workers=2)
    # xdist sends worker 1 the first two, worker 2 the next two: each starts with one of the
    # two longest, and runs the 3rd or 4th longest next
    assert plan.order == ["t90", "t70", "t80", "t50", "t30", "t20", "t10"]


def test_durations_learned_over_the_seed_unknown_tests_assumed(tmp_path):
    seed, learned = tmp_path / "seed.json", tmp_path / "learned.json"
    seed.write_text(json.dumps({"a": {"wall_s": 10}, "b": {"wall_s": 20}}))
    learned.write_text(json.dumps({"b": {"wall_s": 25.5, "cpu_s": 1.0}, "c": 7}))
    known = load_durations(seed, learned, tmp_path / "missing.json")
    assert known == {"a": 10.0, "b": 25.5, "c": 7.0}
    plan = make_plan([Cost("a", "default", duration_s=known["a"]), Cost("z", "default")], workers=4)
    assert plan.order == ["z", "a"]  # z: UNKNOWN_S
    assert UNKNOWN_S > 10


def test_a_broken_durations_file_is_ignored(tmp_path):
    bad = tmp_path / "d.json"
    bad.write_text("{not json")
    assert load_durations(bad) == {}


ROOMS = ("default", "cap", "pulls", "multi")


def test_rooms_share_one_cluster_and_their_serial_tests_take_turns_in_their_own_room():
    """--rooms (e2e.cluster.rooms): no copy of a room's cluster, whatever its serial tests sum to; the
    rooms cluster is one entry of the clusters to make, through the default room."""
    costs = [Cost("d1", "default", duration_s=20), Cost("d2", "default", serial=True, duration_s=600),
             Cost("c1", "cap", duration_s=120), Cost("m1", "multi", serial=True, duration_s=500),
             Cost("f1", "fast", serial=True, duration_s=300), Cost("f2", "fast", serial=True, duration_s=300)]
    plan = make_plan(costs, workers=4, lane_s=480, max_replicas=2, rooms=ROOMS)
    assert plan.lanes == {"default": [0], "multi": [0], "fast": [0, 1]}
    assert plan.clusters == [("fast", 0), ("fast", 1), ("default", 0)]
    assert plan.rooms == {"default", "cap", "multi"}  # pulls: no test of it here
    assert plan.order[-1] == "d2" and "m1" in plan.order[:4]  # m1: nothing of its room to wait for
    without = make_plan(costs, workers=4, lane_s=480, max_replicas=2)
    assert without.lanes == {"default": [1, 2], "multi": [0, 1], "fast": [0, 1]}


def test_a_cluster_wide_serial_test_of_a_room_holds_every_room_after_the_rest():
    costs = [Cost("taint", "default", serial=True, cluster_wide=True, duration_s=20),
             Cost("drain", "default", serial=True, duration_s=30), Cost("d1", "default", duration_s=5),
             Cost("c1", "cap", duration_s=100), Cost("nf7", "fast", serial=True, cluster_wide=True, duration_s=90)]
    plan = make_plan(costs, workers=2, rooms=ROOMS)
    assert plan.every_room == {"taint"}  # nf7: its own cluster, no room to hold
    assert plan.order[-2:] == ["drain", "taint"]
    assert make_plan(costs, workers=2).every_room == frozenset()  # without rooms


def test_a_sequential_run_with_rooms_runs_the_rooms_first_default_first():
    costs = [Cost("f1", "fast", serial=True), Cost("m1", "multi"), Cost("a1", "alpha"), Cost("c1", "cap"),
             Cost("d1", "default")]
    plan = make_plan(costs, workers=0, rooms=ROOMS)
    # the rooms cluster ends after m1, before alpha's and fast's clusters are made
    assert plan.order == ["d1", "c1", "m1", "a1", "f1"]
    assert make_plan(costs, workers=0).order == ["d1", "a1", "c1", "f1", "m1"]
