"""The one table of value verdicts and test outcomes (standard library only).

A **value verdict** is what the judge (:mod:`e2e.judge.measurements`) writes as ``verdict`` of a
value in ``measurements.json``; a **test outcome** is how a test ended, as junit.xml, the
terminal, the summary and ``make compare`` name it. Every name below is a value written to or
read from the reports: renaming one changes what old reports mean, so a name stays and the
Python constant says what it is.

Two names that read alike name different things:

- :data:`TOLERATED_RACE` (written ``"flake"``): a *value* set aside because it hit a race
  upstream tolerates (OOMKilled missing on a 137 exit, OM-1); its test ends xfailed;
- :data:`FLAKY` (written ``"flaky"``): a *test* that failed, then passed on a rerun
  (pytest-rerunfailures ``--reruns``; Maven Surefire's ``flakyFailure``); never a pass.

What is derived from the rows, and where:

- the judge's precedence (:data:`SETTLING`, :meth:`e2e.judge.measurements.Judge.outcome`): the
  verdicts that settle a test's outcome, in the order the first found settles it;
- the terminal status and sections (:mod:`e2e.plugin.outcomes`): :data:`OUTCOMES` rows with a
  ``letter``;
- the summary's order of verdicts (:func:`rank`, :mod:`e2e.report.summary`);
- compare's classes (:mod:`e2e.cli.compare`): :data:`VALUE_CHANGES` for values,
  :attr:`TestOutcome.change` for a test's outcome.
"""

from __future__ import annotations

from dataclasses import dataclass

# -- value verdicts (Measurement.verdict) -----------------------------------------------------
PASS = "pass"
FAIL = "fail"
# nothing documented for this cluster's version/cgroup: kept, never a pass
UNDOCUMENTED = "undocumented"
# a failed timing value judged while the host was overloaded (e2e.judge.pressure)
INCONCLUSIVE = "inconclusive"
# a known upstream bug's value (Expectation.known_bug), by the state the cluster's patch is expected
# to be in (KnownBug.expected_on): where its fix is not known to be in, it holds the buggy value
# (present as expected on this patch) / the correct one (gone although no fix is known: a finding
# the test is skipped for, loudly); where its fix should be in, the correct value (fixed as
# expected) / the buggy one (present although the fix should be in: a finding, the test fails)
BUG_PRESENT = "bug-present"
BUG_FIXED = "bug-fixed"
FIXED_AS_EXPECTED = "fixed-as-expected"
BUG_PRESENT_DESPITE_FIX = "bug-present-despite-fix"
# ... and on a patch inside its range that never had it (KnownBug.unaffected), the correct value
# (absent as expected; the buggy one fails)
ABSENT_AS_EXPECTED = "absent-as-expected"
# held an expectation whose source was not read in the cluster's minor (Expectation.verified_in)
UNVERIFIED = "unverified-carried-forward"
# set aside with a reason (Judge.set_aside): an environment limit (clamped OOM scores, OM-5) ...
ENVIRONMENT = "skipped"
# ... or a race upstream tolerates (OM-1): the test ends xfailed. Not FLAKY (a test's outcome).
TOLERATED_RACE = "flake"

# -- test outcomes (junit.xml, the terminal, the summary, compare) ------------------------------
PASSED = "passed"
FAILED = "failed"
ERROR = "error"  # setup or teardown failed
SKIPPED = "skipped"
XFAILED = "xfailed"
XPASSED = "xpassed"
# skipped by the plugin for values with nothing documented (letter U)
UNDOCUMENTED_OUTCOME = UNDOCUMENTED
# skipped by the plugin for a timing value that failed under host overload (letter I)
INCONCLUSIVE_OUTCOME = INCONCLUSIVE
# skipped by the plugin for a known bug's correct value (letter B)
BUG_FIXED_OUTCOME = "bug fixed?"
# failed, then passed on a rerun (letter F): never a pass. Not TOLERATED_RACE (a value's verdict).
FLAKY = "flaky"
# its setup passed, its body never ended: Ctrl-C (e2e.report.junit.mark_interrupted)
INTERRUPTED = "interrupted"

# a race's value records ``details.race.outcome`` (e2e.judge.expectations Race, KnownBug.race)
RACE_HAPPENED, RACE_ABSENT = "happened", "did not happen"

# how the reasons of the outcomes the judge settles start (compare reads a junit.xml older than the
# ``outcome`` property by them)
UNDOCUMENTED_PREFIX = "undocumented:"
INCONCLUSIVE_PREFIX = "inconclusive: host overloaded"
BUG_FIXED_PREFIX = "bug no longer present — fixed on this version?"
BUG_PRESENT_PREFIX = "known bug present:"
UNVERIFIED_PREFIX = "unverified, carried forward:"

# -- compare's classes ----------------------------------------------------------------------
SAME = "same"
DOCUMENTED_CHANGE = "documented change"
UNEXPLAINED = "unexplained"
EXPECTED_FAILURE = "expected failure"  # a value that fails in a test B ran as an expected failure
HOLDS_NOW = "holds now"
SET_ASIDE = "set aside"
KNOWN_BUG = "known bug"  # compare says "known bug: <A> → <B>" (e2e.cli.compare._known_bug_change)
CARRIED_FORWARD = "unverified (carried forward)"
OUTCOME_CHANGED = "outcome changed"
NOT_RUN = "not run"

# how the plugin ends a test whose outcome the judge settled
PASS_MARKED, SKIP, XFAIL, FAIL_TEST = "pass", "skip", "xfail", "fail"


@dataclass(frozen=True)
class ValueVerdict:
    """One value verdict: ``name`` as written; ``holds`` whether the value counts as holding its
    documented expectation (a test with only such values passes); ``outcome`` the test outcome
    it implies (an :data:`OUTCOMES` name); ``rank`` its place in the summary (0 most telling:
    a case's verdict is the lowest rank among its values and tests); ``reason`` how the reason of
    a test it settles starts (``""``: it settles nothing)."""

    name: str
    holds: bool
    outcome: str
    rank: int
    reason: str = ""


@dataclass(frozen=True)
class TestOutcome:
    """One test outcome: ``name`` as junit/compare/the summary name it; ``prop`` the ``outcome``
    user property the plugin writes for it (``""``: none, pytest's own outcome); ``letter`` and
    ``word`` on the terminal (``""``: pytest's own); ``section`` the title of its terminal section
    (``""``: none); ``ends`` how the plugin ends the test (:data:`SKIP`, :data:`XFAIL`,
    :data:`PASS_MARKED`, ``""``: pytest's own); ``change`` how ``compare`` classes a test whose
    outcome went to it; ``listed`` whether compare lists it also when unchanged; ``summary`` the
    outcome the summary's test list gives it; ``rank`` its place in the summary's order (``None``:
    a case's verdict does not take it from a test)."""

    __test__ = False  # not a pytest test class

    name: str
    prop: str = ""
    letter: str = ""
    word: str = ""
    section: str = ""
    ends: str = ""
    change: str = OUTCOME_CHANGED
    listed: bool = False
    summary: str = ""
    rank: int | None = None


# In the judge's precedence: of a test's values, the first verdict of this order that one of them
# has settles the test's outcome (Judge.outcome); pass, fixed-as-expected, absent-as-expected, fail, bug-present-despite-fix
# and unverified settle nothing (a failing value fails the test before, Judge.verify; an unverified one
# is listed apart, whatever the outcome).
VERDICTS: tuple[ValueVerdict, ...] = (
    ValueVerdict(INCONCLUSIVE, holds=False, outcome=INCONCLUSIVE_OUTCOME, rank=1, reason=INCONCLUSIVE_PREFIX),
    ValueVerdict(UNDOCUMENTED, holds=False, outcome=UNDOCUMENTED_OUTCOME, rank=4, reason=UNDOCUMENTED_PREFIX),
    ValueVerdict(BUG_FIXED, holds=False, outcome=BUG_FIXED_OUTCOME, rank=1, reason=BUG_FIXED_PREFIX),
    ValueVerdict(ENVIRONMENT, holds=False, outcome=SKIPPED, rank=7, reason="environment:"),
    ValueVerdict(TOLERATED_RACE, holds=False, outcome=XFAILED, rank=6, reason="flake:"),
    ValueVerdict(BUG_PRESENT, holds=True, outcome=PASSED, rank=1, reason=BUG_PRESENT_PREFIX),
    ValueVerdict(UNVERIFIED, holds=True, outcome=PASSED, rank=5),
    ValueVerdict(FAIL, holds=False, outcome=FAILED, rank=0),
    ValueVerdict(BUG_PRESENT_DESPITE_FIX, holds=False, outcome=FAILED, rank=0),
    ValueVerdict(FIXED_AS_EXPECTED, holds=True, outcome=PASSED, rank=8),
    ValueVerdict(ABSENT_AS_EXPECTED, holds=True, outcome=PASSED, rank=8),
    ValueVerdict(PASS, holds=True, outcome=PASSED, rank=8),
)

OUTCOMES: tuple[TestOutcome, ...] = (
    TestOutcome(PASSED, summary=PASSED),
    TestOutcome(FAILED, change=UNEXPLAINED, listed=True, summary=FAILED),
    TestOutcome(ERROR, change=UNEXPLAINED, listed=True, summary=ERROR),
    TestOutcome(SKIPPED, prop=ENVIRONMENT, ends=SKIP, summary=SKIPPED, rank=7),
    TestOutcome(XFAILED, prop=TOLERATED_RACE, ends=XFAIL, summary=XFAILED),
    TestOutcome(XPASSED, summary=XPASSED),
    TestOutcome(UNDOCUMENTED_OUTCOME, prop=UNDOCUMENTED, letter="U", word="UNDOCUMENTED",
                section="undocumented values (measured, nothing documented for this cluster: not a pass)",
                ends=SKIP, summary=UNDOCUMENTED_OUTCOME, rank=4),
    TestOutcome(INCONCLUSIVE_OUTCOME, prop=INCONCLUSIVE, letter="I", word="INCONCLUSIVE",
                section="inconclusive values (a timing value failed while the host's CPU was starved: "
                        "neither a pass nor a product failure)",
                ends=SKIP, change=INCONCLUSIVE, summary=INCONCLUSIVE_OUTCOME),
    TestOutcome(BUG_FIXED_OUTCOME, prop=BUG_FIXED, letter="B", word="BUG FIXED?",
                section="known upstream bugs no longer present (the correct behaviour was measured: check the fix)",
                ends=SKIP, summary=SKIPPED),
    TestOutcome(FLAKY, prop=FLAKY, letter="F", word="FLAKY",
                section="flaky tests (failed, then passed on a rerun: not a pass; every attempt's values kept)",
                ends=PASS_MARKED, change=FLAKY, listed=True, summary=FLAKY, rank=3),
    TestOutcome(INTERRUPTED, prop=INTERRUPTED, summary=INTERRUPTED, rank=2),
)

_VERDICT = {v.name: v for v in VERDICTS}
_OUTCOME = {o.name: o for o in OUTCOMES}


def verdict(name: str) -> ValueVerdict:
    """The row of the value verdict ``name``; ``KeyError`` naming the known ones."""
    try:
        return _VERDICT[name]
    except KeyError:
        raise KeyError(f"no value verdict {name!r} (known: {', '.join(_VERDICT)})") from None


def outcome(name: str) -> TestOutcome:
    """The row of the test outcome ``name``; ``KeyError`` naming the known ones."""
    try:
        return _OUTCOME[name]
    except KeyError:
        raise KeyError(f"no test outcome {name!r} (known: {', '.join(_OUTCOME)})") from None


# the verdicts that settle a test's outcome, in the judge's precedence (see VERDICTS)
SETTLING: tuple[ValueVerdict, ...] = tuple(v for v in VERDICTS if v.reason)
# verdicts of values set aside with a reason (Judge.set_aside)
SET_ASIDE_VERDICTS = (ENVIRONMENT, TOLERATED_RACE)
KNOWN_BUG_VERDICTS = (BUG_PRESENT, BUG_FIXED, FIXED_AS_EXPECTED, BUG_PRESENT_DESPITE_FIX, ABSENT_AS_EXPECTED)
# a known bug's state as compare names it
KNOWN_BUG_STATES = {BUG_PRESENT: "present", BUG_FIXED: "gone (no fix known)", FIXED_AS_EXPECTED: "fixed",
                    BUG_PRESENT_DESPITE_FIX: "present despite its fix", ABSENT_AS_EXPECTED: "absent on this patch"}
# the value verdicts that fail their test (Judge.verify explains each)
FAILING_VERDICTS: tuple[str, ...] = tuple(v.name for v in VERDICTS if v.outcome == FAILED)
# a value judged before its bug was declared a race, read as the race's outcome
RACE_OF_VERDICT = {BUG_PRESENT: RACE_HAPPENED, BUG_FIXED: RACE_ABSENT}
# the outcomes the plugin settles a skipped test with that junit and the terminal tell apart
OWN_SKIPS: tuple[TestOutcome, ...] = tuple(o for o in OUTCOMES if o.ends == SKIP and o.letter)
# the terminal's own statuses, in the order of its sections
TERMINAL: tuple[TestOutcome, ...] = tuple(o for o in OUTCOMES if o.letter)


def rank(name: str) -> int:
    """The summary's sort key of a verdict or test outcome name: the most telling first; a name
    in neither table ranks right after ``fail`` (shown as it is)."""
    row = _VERDICT.get(name)
    if row is not None:
        return row.rank
    o = _OUTCOME.get(name)
    return o.rank if o is not None and o.rank is not None else 1


@dataclass(frozen=True)
class ValueChange:
    """One rule of compare's classes of a value present in both runs: it applies when A's verdict
    is in ``a`` (None: any) and B's is in ``b`` (None: any) and B's is not in ``b_not``; the first
    rule that applies, in :data:`VALUE_CHANGES` order, gives the ``change``. A value no rule
    classes is ``same`` or ``documented change`` (its expectation moved), or, when B's fails,
    ``expected failure`` / ``unexplained``."""

    change: str
    a: frozenset[str] | None = None
    b: frozenset[str] | None = None
    b_not: frozenset[str] = frozenset()

    def applies(self, verdict_a: str, verdict_b: str) -> bool:
        return ((self.a is None or verdict_a in self.a) and (self.b is None or verdict_b in self.b)
                and verdict_b not in self.b_not)


def _set(*names: str) -> frozenset[str]:
    return frozenset(names)


VALUE_CHANGES: tuple[ValueChange, ...] = (
    ValueChange(KNOWN_BUG, b=_set(*KNOWN_BUG_VERDICTS)),
    ValueChange(UNDOCUMENTED, a=_set(UNDOCUMENTED)),  # shown, not judged: either side
    ValueChange(UNDOCUMENTED, b=_set(UNDOCUMENTED)),
    ValueChange(INCONCLUSIVE, b=_set(INCONCLUSIVE)),  # failed while the host was overloaded: counted apart
    ValueChange(HOLDS_NOW, a=_set(INCONCLUSIVE), b_not=_set(FAIL)),
    # a race upstream tolerates, in B or only in A (no fix): its reason in the details
    ValueChange(TOLERATED_RACE, b=_set(TOLERATED_RACE)),
    ValueChange(TOLERATED_RACE, a=_set(TOLERATED_RACE), b_not=_set(FAIL)),
    # set aside for an environment reason in B: a regression when it used to hold
    ValueChange(UNEXPLAINED, a=_set(PASS, UNVERIFIED), b=_set(ENVIRONMENT)),
    ValueChange(SET_ASIDE, b=_set(ENVIRONMENT)),
    ValueChange(HOLDS_NOW, a=_set(ENVIRONMENT), b_not=_set(FAIL)),
    ValueChange(CARRIED_FORWARD, b=_set(UNVERIFIED)),
)


def value_change(verdict_a: str, verdict_b: str) -> str | None:
    """compare's class of a value judged ``verdict_a`` in A and ``verdict_b`` in B by
    :data:`VALUE_CHANGES`, or None when no rule classes it."""
    return next((r.change for r in VALUE_CHANGES if r.applies(verdict_a, verdict_b)), None)
