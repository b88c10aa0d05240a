"""e2e.judge.drift: the two drift rules over crafted histories (towards an edge, spread widened),
what a series is (one test's value on one minor, numbers with a band), and the lines a summary shows."""

from __future__ import annotations

import pytest

from e2e.judge import drift

TEST = "scenarios/crashloop/test_crashloop.py::test_backoff_gaps_and_waiting_state"


def night(i: int) -> str:
    return f"202612{i + 1:02d}-021700-{i:04x}"


def runs(values: list, band: list | None = (9, 20), kubernetes: str = "v1.37.2", name: str = "restart_gap[2]",
         test: str = TEST, verdict: str = "pass", first: int = 0) -> list[dict]:
    """One history line per value (None: the night did not measure it), nights ``first``, ``first + 1``, …"""
    out = []
    for i, v in enumerate(values, first):
        values_ = [] if v is None else [{"case": "CL-1", "name": name, "test": test, "kubernetes": kubernetes,
                                         "value": v, "unit": "s", "documented": 10,
                                         "band": None if band is None else list(band), "verdict": verdict}]
        out.append({"run_id": night(i), "time": f"2026-12-{i + 1:02d}T02:17:00+00:00", "values": values_})
    return out


def found(history: list[dict], k: int = drift.K) -> list[drift.Drift]:
    return drift.drifts(drift.series(history), k)


def test_a_value_creeping_to_its_upper_edge_drifts_and_the_line_names_values_edge_band_and_nights():
    (d,) = found(runs([13, 15, 17, 18, 19]))
    assert d.kind == "edge" and d.edge == 20
    assert d.line() == (f"drift: CL-1 restart_gap[2] 13 → 15 → 17 → 18 → 19 s towards 20 (band [9, 20]) "
                        f"over nights {night(0)} … {night(4)} (Kubernetes 1.37)")


def test_a_value_creeping_to_its_lower_edge_drifts():
    (d,) = found(runs([15, 13, 12, 11, 10]))
    assert (d.kind, d.edge) == ("edge", 9)
    assert "15 → 13 → 12 → 11 → 10 s towards 9" in d.line()


def test_a_value_moving_away_from_its_nearer_edge_does_not_drift():
    # 10 → 14: away from 9, and 14 is still nearer 9 than 20
    assert found(runs([10, 11, 12, 13, 14])) == []


def test_a_flat_value_and_monotonic_jitter_smaller_than_a_third_of_the_band_do_not_drift():
    assert found(runs([17, 17, 17, 17, 17])) == []
    # strictly rising towards 20, but by 3.5 s of an 11 s band (less than a third)
    assert found(runs([15.5, 16.5, 17.5, 18.5, 19])) == []
    # a third of it: drifts
    assert [d.kind for d in found(runs([15.3, 16.5, 17.5, 18.5, 19]))] == ["edge"]


def test_values_get_the_decimals_that_tell_the_nights_apart():
    # documented 10 within [9, 20]: whole seconds, as the summary shows them; 21.7 and 22.5 would both read 22
    (d,) = found(runs([20.066, 20.9, 21.7, 22.5, 23.3], band=(19, 24)))
    assert "20.1 → 20.9 → 21.7 → 22.5 → 23.3 s towards 24" in d.line()
    (d,) = found(runs([13, 15, 17, 18, 19]))
    assert "13 → 15 → 17 → 18 → 19 s" in d.line()


def test_one_night_against_the_trend_breaks_it():
    assert found(runs([13, 15, 14, 18, 19])) == []
    # only the last k nights count: an old night against the trend is past
    assert [d.kind for d in found(runs([19, 13, 15, 17, 18, 19]))] == ["edge"]


def test_fewer_than_k_nights_are_not_judged():
    assert found(runs([13, 15, 17, 19])) == []
    assert drift.lines(drift.series(runs([13, 15, 17, 19]))) == [
        "drift: none over the last 5 nights (0 value(s) with 5 nights or more and room in their band)"]
    # k is the caller's
    assert [d.kind for d in found(runs([13, 15, 17, 19]), k=4)] == ["edge"]
    with pytest.raises(ValueError, match="at least 2"):
        found(runs([13, 15]), k=1)


def test_nights_that_did_not_measure_the_value_are_skipped_not_counted():
    assert [len(d.nights) for d in found(runs([13, None, 15, 17, None, 18, 19]))] == [5]


def test_another_kubernetes_minor_is_another_series():
    history = runs([13, 15, 17], kubernetes="v1.36.4") + runs([18, 19], kubernetes="v1.37.2", first=3)
    series = drift.series(history)
    assert [(s.minor, [p.value for p in s.points]) for s in series] == [("1.36", [13, 15, 17]), ("1.37", [18, 19])]
    assert found(history) == []
    # a patch release is the same minor
    assert len(drift.series(runs([13, 15], kubernetes="v1.37.1") + runs([17], kubernetes="v1.37.2", first=2))) == 1


def test_a_new_band_starts_over():
    history = runs([13, 15, 17], band=(9, 20)) + runs([18, 19], band=(9, 21), first=3)
    assert found(history) == []
    assert [p.value for p in drift.series(history)[0].banded()] == [18, 19]


def test_spread_widened_threefold_and_by_a_third_of_the_band_drifts():
    (d,) = found(runs([14, 15, 14, 15, 14.5, 11, 18, 12, 17, 14]))
    assert d.kind == "spread"
    assert d.line() == (f"drift: CL-1 restart_gap[2] spread 11–18 s over nights {night(5)} … {night(9)}, "
                        f"7.0× the 14–15 s over nights {night(0)} … {night(4)} (band [9, 20], Kubernetes 1.37)")


def test_a_spread_that_widened_less_or_stayed_small_against_the_band_does_not_drift():
    assert found(runs([14, 16, 14, 16, 15, 11, 16, 12, 15, 14])) == []  # 5 s from 2 s: 2.5×
    assert found(runs([15, 15.1, 15, 15.1, 15, 14, 16, 14.5, 15, 15.5])) == []  # 20×, but 2 s of 11
    assert found(runs([14, 15, 14, 15, 14.5, 11, 18, 12, 17])) == []  # 9 nights: the spread needs 2k


def test_an_open_band_drifts_only_towards_its_lower_edge_by_a_third_of_the_way_left():
    (d,) = found(runs([100, 80, 60, 40, 20], band=(1, None)))
    assert (d.kind, d.edge) == ("edge", 1)
    assert "towards 1 (band ≥ 1)" in d.line()
    assert found(runs([20, 40, 60, 80, 100], band=(1, None))) == []
    assert found(runs([100, 95, 90, 85, 80], band=(1, None))) == []  # 20 of 99: less than a third
    assert found(runs([10, 14, 10, 14, 12, 1, 40, 5, 30, 12], band=(1, None))) == []  # no width: no spread rule


def test_a_band_of_one_value_a_string_a_flag_and_an_inconclusive_value_make_no_drift():
    assert found(runs([0, 1, 2, 3, 4], band=(0, 0))) == []
    assert drift.series(runs(["Running"] * 5, band=None)) == []
    assert drift.series(runs([True] * 5, band=(0, 1))) == []
    assert drift.series(runs([13, 15, 17, 18, 19], verdict="inconclusive")) == []


def test_a_failed_value_beyond_the_edge_still_drifts_towards_it():
    (d,) = found(runs([16, 18, 19.5, 20.5, 21]))
    assert d.edge == 20 and d.nights[-1].value == 21


def test_a_name_judged_by_two_tests_is_two_series_and_its_lines_name_the_test():
    other = TEST.replace("test_backoff_gaps_and_waiting_state", "test_other")
    history = runs([13, 15, 17, 18, 19])
    for line, extra in zip(history, runs([17, 17, 17, 17, 17], test=other), strict=True):
        line["values"] += extra["values"]
    assert len(drift.series(history)) == 2
    assert drift.lines(drift.series(history)) == [
        f"drift: CL-1 restart_gap[2] (test_backoff_gaps_and_waiting_state) 13 → 15 → 17 → 18 → 19 s towards 20 "
        f"(band [9, 20]) over nights {night(0)} … {night(4)} (Kubernetes 1.37)"]


def test_a_run_lists_only_the_values_it_measured():
    history = runs([13, 15, 17, 18, 19]) + [{"run_id": night(5), "time": "", "values": []}]
    assert [d.kind for d in drift.drifts(drift.series(history), run_id=night(4))] == ["edge"]
    assert drift.drifts(drift.series(history), run_id=night(5)) == []


def test_the_same_name_twice_in_one_test_and_night_counts_its_last_value():
    history = runs([13, 15, 17, 18, 19])
    history[-1]["values"].insert(0, {**history[-1]["values"][0], "value": 5})
    assert [p.value for p in drift.series(history)[0].points][-1] == 19
