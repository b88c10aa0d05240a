"""The table of value verdicts and test outcomes (e2e.base.verdicts): its rows agree with each
other, the orders derived from them are the documented ones, and it stays standard-library only
(``make compare`` imports it with the system Python)."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import pytest

from e2e.base import verdicts as v

ROOT = Path(__file__).resolve().parents[1]


def test_every_name_has_one_row_and_every_verdict_implies_a_known_outcome():
    names = [r.name for r in v.VERDICTS]
    outcomes = [o.name for o in v.OUTCOMES]
    assert len(set(names)) == len(names) and len(set(outcomes)) == len(outcomes)
    assert {r.outcome for r in v.VERDICTS} <= set(outcomes)
    props = [o.prop for o in v.OUTCOMES if o.prop]
    assert len(set(props)) == len(props)  # the ``outcome`` property names one outcome


def test_a_value_verdict_and_a_test_outcome_that_read_alike_are_different_names():
    # issue 43: "flake" (a value set aside for a race upstream tolerates: the test ends xfailed) and
    # "flaky" (a test that passed on a rerun after failing) collided; each now has its own constant
    assert v.outcome(v.verdict(v.TOLERATED_RACE).outcome).ends == v.XFAIL
    assert v.outcome(v.FLAKY).ends == v.PASS_MARKED
    assert v.TOLERATED_RACE not in {o.name for o in v.OUTCOMES}
    assert v.FLAKY not in {r.name for r in v.VERDICTS}


def test_the_summarys_order_is_the_documented_one():
    # most telling first (e2e.report.summary's module doc); ties keep the order met
    order = [v.FAIL, v.INCONCLUSIVE, v.INTERRUPTED, v.FLAKY, v.UNDOCUMENTED, v.UNVERIFIED, v.TOLERATED_RACE,
             v.ENVIRONMENT, v.PASS]
    assert [v.rank(n) for n in order] == sorted(v.rank(n) for n in order)
    assert len({v.rank(n) for n in order}) == len(order)
    # a verdict string the table does not know ranks with the known bugs, right after fail
    assert v.rank("made-up") == v.rank(v.BUG_PRESENT) == v.rank(v.BUG_FIXED) == v.rank(v.INCONCLUSIVE) == v.rank(v.FAIL) + 1


def test_a_name_that_is_a_verdict_and_an_outcome_ranks_the_same_either_way():
    both = {r.name for r in v.VERDICTS} & {o.name for o in v.OUTCOMES}
    assert both == {v.UNDOCUMENTED, v.SKIPPED, v.INCONCLUSIVE}
    for name in both:
        o = v.outcome(name)
        assert o.rank is None or o.rank == v.verdict(name).rank, name


def test_the_judges_precedence_and_how_each_settled_test_ends():
    assert [r.name for r in v.SETTLING] == [v.INCONCLUSIVE, v.UNDOCUMENTED, v.BUG_FIXED, v.ENVIRONMENT,
                                            v.TOLERATED_RACE, v.BUG_PRESENT]
    ends = {r.name: v.outcome(r.outcome).ends for r in v.SETTLING}
    assert ends == {v.INCONCLUSIVE: v.SKIP, v.UNDOCUMENTED: v.SKIP, v.BUG_FIXED: v.SKIP, v.ENVIRONMENT: v.SKIP,
                    v.TOLERATED_RACE: v.XFAIL, v.BUG_PRESENT: ""}  # a known bug present: pytest's own pass
    assert [r.name for r in v.VERDICTS if r.holds] == [v.BUG_PRESENT, v.UNVERIFIED, v.FIXED_AS_EXPECTED, v.ABSENT_AS_EXPECTED,
                                                       v.PASS]
    # a known bug present although its fix should be in fails its test, as a failed value does (Judge.verify)
    assert v.FAILING_VERDICTS == (v.FAIL, v.BUG_PRESENT_DESPITE_FIX)


def test_the_terminal_tells_apart_four_outcomes_in_the_order_of_its_sections():
    assert [(o.name, o.letter, o.word) for o in v.TERMINAL] == [
        (v.UNDOCUMENTED, "U", "UNDOCUMENTED"), (v.INCONCLUSIVE, "I", "INCONCLUSIVE"),
        (v.BUG_FIXED_OUTCOME, "B", "BUG FIXED?"), (v.FLAKY, "F", "FLAKY")]
    assert all(o.section for o in v.TERMINAL)
    # an own skip is read from junit by its property, or by its reason's prefix in an older junit.xml
    assert {o.prop for o in v.OWN_SKIPS} == {v.UNDOCUMENTED, v.INCONCLUSIVE, v.BUG_FIXED}
    assert all(r.reason for o in v.OWN_SKIPS for r in v.VERDICTS if r.outcome == o.name)


@pytest.mark.parametrize("a, b, change", [
    (v.PASS, v.BUG_PRESENT, v.KNOWN_BUG),
    (v.UNDOCUMENTED, v.BUG_FIXED, v.KNOWN_BUG),  # the known bug is read first
    (v.UNDOCUMENTED, v.FAIL, v.UNDOCUMENTED),  # shown, not judged: also when B fails
    (v.PASS, v.UNDOCUMENTED, v.UNDOCUMENTED),
    (v.PASS, v.INCONCLUSIVE, v.INCONCLUSIVE),
    (v.INCONCLUSIVE, v.TOLERATED_RACE, v.HOLDS_NOW),
    (v.INCONCLUSIVE, v.FAIL, None),  # a failure after an inconclusive value is the failure's
    (v.PASS, v.TOLERATED_RACE, v.TOLERATED_RACE),
    (v.TOLERATED_RACE, v.PASS, v.TOLERATED_RACE),  # the race not happening again is no fix
    (v.TOLERATED_RACE, v.FAIL, None),
    (v.PASS, v.ENVIRONMENT, v.UNEXPLAINED),  # set aside after holding: a regression
    (v.UNVERIFIED, v.ENVIRONMENT, v.UNEXPLAINED),
    (v.BUG_PRESENT, v.ENVIRONMENT, v.SET_ASIDE),
    (v.ENVIRONMENT, v.PASS, v.HOLDS_NOW),
    (v.ENVIRONMENT, v.UNVERIFIED, v.HOLDS_NOW),
    (v.PASS, v.UNVERIFIED, v.CARRIED_FORWARD),
    (v.PASS, v.PASS, None), (v.PASS, v.FAIL, None),  # same / documented change / unexplained: by compare
    (v.BUG_PRESENT, v.FIXED_AS_EXPECTED, v.KNOWN_BUG),  # a known bug's four states are its own class
    (v.FIXED_AS_EXPECTED, v.BUG_PRESENT_DESPITE_FIX, v.KNOWN_BUG),
])
def test_compares_classes_of_a_value(a, b, change):
    assert v.value_change(a, b) == change


def test_every_pair_of_verdicts_gets_one_class_from_compare(tmp_path):
    # through compare itself: every (A, B) pair of the table's verdicts is classed, a failed value in B
    # is never "same", and B's set-aside or inconclusive value is never "same" either
    from e2e.cli.compare import Run, compare

    names = [r.name for r in v.VERDICTS]
    pairs = list(itertools.product(names, names))

    def run(side: int) -> Run:
        ms = {("t", "XX-1", f"n{i}"): {"verdict": pair[side], "value": 1, "documented": 1, "band": None, "unit": "",
                                       "details": {}, "run_id": "r", "kubernetes": "v1.37.2"}
              for i, pair in enumerate(pairs)}
        return Run("p", "r", "v1.37.2", ms, {"t": v.PASSED})

    rows = {r.name: r.change for r in compare(run(0), run(1)) if r.name != "outcome"}
    assert len(rows) == len(pairs)
    for i, (a, b) in enumerate(pairs):
        change = rows[f"n{i}"]
        assert change != v.SAME or v.verdict(b).holds, (a, b, change)
        if b == v.FAIL and a != v.UNDOCUMENTED:
            assert change == v.UNEXPLAINED, (a, b, change)


def test_the_table_and_compare_import_nothing_outside_the_standard_library():
    # run as `make compare` runs it (no venv): what it loads is the standard library, and of e2e/
    # only the command and leaves of e2e.base (the table among them)
    code = ("import sys; import e2e.cli.compare; "
            "extra = sorted(m for m in sys.modules if m.split('.')[0] not in sys.stdlib_module_names "
            "and m not in ('__main__', 'e2e', 'e2e.cli', 'e2e.cli.compare', 'e2e.base') and not m.startswith('e2e.base.')); "
            "print(extra); sys.exit(1 if extra or 'e2e.base.verdicts' not in sys.modules else 0)")
    done = subprocess.run([sys.executable, "-S", "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_an_unknown_name_is_a_clear_error():
    with pytest.raises(KeyError, match="no value verdict 'flaky'"):
        v.verdict("flaky")
    with pytest.raises(KeyError, match="no test outcome 'flake'"):
        v.outcome("flake")
