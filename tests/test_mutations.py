"""Mutation proof of the real registry: recorded real timelines (tests/data), and synthetic
mutations of them that a broken kubelet or a wrong case would produce, are measured with the
scenarios' own functions and judged against the **real** ``REGISTRY``. Every real recording
holds; every mutation FAILS, with a message naming its case, value and band.

The table of mutations and what caught them is printed by ``test_mutation_table``
(``make test`` shows it with ``-rA``); all must be caught.
"""

from __future__ import annotations

import copy
import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

from e2e import documented  # noqa: F401  (registers every family)
from e2e.expectations import REGISTRY
from e2e.measurements import ExpectationFailed, Judge, MeasurementLog
from e2e.recorder import Change, load_changes
from e2e.timeline import attempts, parse_time, restart_gaps

DATA = Path(__file__).parent / "data"
_API_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


# -- mutating a recording ---------------------------------------------------------------------


def _shift_obj(obj, at: float, delta: float):
    if isinstance(obj, dict):
        return {k: _shift_obj(v, at, delta) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_shift_obj(v, at, delta) for v in obj]
    if isinstance(obj, str) and _API_TIME.match(obj):
        t = parse_time(obj)
        if t is not None and t >= at:
            return dt.datetime.fromtimestamp(t + delta, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return obj


def shift_after(changes: list[Change], at: float, delta: float) -> list[Change]:
    """The recording with everything from epoch ``at`` on — receive times and API timestamps —
    ``delta`` seconds later: the cluster doing the same thing, later."""
    out = []
    for c in changes:
        received = c.received_at + delta if c.received_at >= at else c.received_at
        out.append(Change(received, c.kind, c.type, c.name, _shift_obj(copy.deepcopy(c.obj), at, delta)))
    return out


# -- judging ------------------------------------------------------------------------------------


@dataclass
class Outcome:
    failed: list[str]  # "case name: measured …, expected …" of each failed value
    message: str


def judge(minor: int, values: list[tuple[str, str, object]], tmp: Path, cgroup: int | None = 1, **params) -> Outcome:
    """Judge ``(case, name, value)`` against the real registry on ``1.<minor>``."""
    j = Judge(MeasurementLog(tmp / f"m-{minor}.json"), "mutation", "r", f"v1.{minor}.0", minor=minor, cgroup=cgroup)
    for case, name, value in values:
        j.expect(case, name, value, **params)
    try:
        j.verify()
    except ExpectationFailed as e:
        return Outcome([v.explain().splitlines()[0] for v in j.failures], str(e))
    return Outcome([], "")


# -- CL: the first real CL-1 recording (v1.37.2) ---------------------------------------------------

CL1 = load_changes(DATA / "cl1-v1.37.2-recording.json")


def cl1_gaps(changes: list[Change]) -> list[tuple[str, str, object]]:
    gaps = restart_gaps(attempts(changes, "crashloop", "app"))
    return [("CL-1", f"restart_gap[{i}]", g) for i, g in enumerate(gaps[:4])]


def doubled_backoff(changes: list[Change]) -> list[Change]:
    """Each back-off twice as long: 0, 20, 40, 80 s instead of 0, 10, 20, 40 s."""
    runs = attempts(changes, "crashloop", "app")
    extra = 0.0
    for k, documented_gap in zip(range(2, len(runs)), (10, 20, 40)):
        changes = shift_after(changes, runs[k].started_at + extra, documented_gap)
        extra += documented_gap
    return changes


def ten_second_first_gap(changes: list[Change]) -> list[Change]:
    """The first restart after a 10 s back-off instead of at once."""
    runs = attempts(changes, "crashloop", "app")
    return shift_after(changes, runs[1].started_at, 9)


@dataclass(frozen=True)
class Mutation:
    family: str
    name: str
    minor: int
    values: Callable[[], list[tuple[str, str, object]]]
    expected_failures: tuple[str, ...]  # "CASE name" prefixes that must fail


MUTATIONS = [
    Mutation("CL", "doubled back-off (1.37)", 37, lambda: cl1_gaps(doubled_backoff(CL1)),
             ("CL-1 restart_gap[1]", "CL-1 restart_gap[2]", "CL-1 restart_gap[3]")),
    Mutation("CL", "doubled back-off (1.34)", 34, lambda: cl1_gaps(doubled_backoff(CL1)),
             ("CL-1 restart_gap[1]", "CL-1 restart_gap[2]", "CL-1 restart_gap[3]")),
    Mutation("CL", "10 s first gap (1.37)", 37, lambda: cl1_gaps(ten_second_first_gap(CL1)), ("CL-1 restart_gap[0]",)),
    Mutation("CL", "10 s first gap (1.34)", 34, lambda: cl1_gaps(ten_second_first_gap(CL1)), ("CL-1 restart_gap[0]",)),
]

REAL = [
    ("CL", "CL-1 v1.37.2 recording (1.37)", 37, lambda: cl1_gaps(CL1)),
    ("CL", "CL-1 v1.37.2 recording against the 1.34 model", 34, lambda: cl1_gaps(CL1)),
]


@pytest.mark.parametrize("family,name,minor,values", REAL, ids=[r[1] for r in REAL])
def test_the_real_recording_holds(family, name, minor, values, tmp_path):
    outcome = judge(minor, values(), tmp_path)
    assert outcome.failed == [], outcome.message


@pytest.mark.parametrize("mutation", MUTATIONS, ids=[m.name for m in MUTATIONS])
def test_the_mutation_fails_naming_case_value_and_band(mutation, tmp_path):
    outcome = judge(mutation.minor, mutation.values(), tmp_path)
    for prefix in mutation.expected_failures:
        line = next((f for f in outcome.failed if f.startswith(prefix + ":")), None)
        assert line is not None, f"{mutation.name}: {prefix} not caught; failed: {outcome.failed}"
        assert re.search(r"measured .+, expected .+ within \[.+\]|measured .+, expected .+", line), line
    assert "documented for Kubernetes" in outcome.message and "source:" in outcome.message


def test_mutation_table(tmp_path, capsys):
    rows, caught = [], 0
    for m in MUTATIONS:
        outcome = judge(m.minor, m.values(), tmp_path)
        ok = all(any(f.startswith(p + ":") for f in outcome.failed) for p in m.expected_failures)
        caught += ok
        rows.append(f"{m.family:3} {'caught' if ok else 'MISSED':7} {m.name:45} {'; '.join(outcome.failed)[:150]}")
    families = sorted({m.family for m in MUTATIONS})
    with capsys.disabled():
        print(f"\nmutations: {len(MUTATIONS)}, caught: {caught}, families: {', '.join(families)}")
        print("\n".join(rows))
    assert caught == len(MUTATIONS)
