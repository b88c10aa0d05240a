"""The registry of documented values: one entry per (case ID, measurement name, version range).

Every number here comes from ``docs/cases/CASES.md`` (the case ID says where) or from the
Kubernetes source named in ``source``; every band says in ``why`` why it is that wide.
Bands are decided from the mechanism, never from a run: a value outside its band is a
finding to report, not a band to widen.

Shapes
------
``Expectation.documented`` is a number (with ``unit``) or a string (an exact status, reason
or message). Numbers are judged against ``band`` (inclusive ``[low, high]``), strings by
equality, or by ``re.fullmatch`` when ``pattern`` is true.

Lookup is by case ID, measurement name and the cluster's Kubernetes minor version
(``1.<minor>``); an entry may also be keyed by the node's cgroup version.

A **known upstream bug** (``Expectation.known_bug``, :class:`KnownBug`) documents today's buggy
behaviour as the expectation and names the upstream issue, the correct value and the mechanism in
the source: the judge calls a value that holds the documented (buggy) expectation ``bug-present``
and one that holds the correct value ``bug-fixed`` (e2e.judge.measurements). A bug that shows only
when a race goes its way (``KnownBug.race``) accepts either outcome: the buggy one is
``bug-present``, the correct one a pass — never ``bug-fixed`` — and the value's ``details.race``
records which; ``make compare`` counts how often over the runs it reads. A known bug also names the patch range that
has it and its fix (``KnownBug.since``, :class:`Fix`: PR, release per minor, :class:`CherryPick`):
on a patch the fix reaches, the correct value is ``fixed-as-expected`` and the buggy one
``bug-present-despite-fix``, a failure naming the fix. A race whose fix should
still be noticed is measured over several attempts in one test and counted (KB-2
``runs_ended_succeeded``: unit ``runs``, a plain known bug of the count).

A **race upstream tolerates** that is no bug (``Expectation.race``, :class:`Race`) documents its
other outcome beside the usual one: a value holding either passes, ``details.race`` records which
(the race ``happened``: the other outcome), and ``make compare`` counts them the same way.

Builders
--------
Four functions make the four shapes of a documented value: :func:`equal` (by equality, no band),
:func:`exact` (a number with no slack), :func:`within` (a number in a band), :func:`at_least`.
Their arguments: ``case``: the case ID; ``name``: the measurement's name; ``source``: where the
value is documented; ``why``: the mechanism that makes the band that wide; ``unit``: the value's
unit (``""`` for a count); ``kw``: further :class:`Expectation` fields as they are (``minors``,
``cgroup``, ``pattern``, ``race``, ``known_bug``…). Each returns the :class:`Expectation`.
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass, field, replace
from typing import Iterable, Sequence, cast

# A case ID, one rule wherever one is written — an Expectation, a ``case`` marker, ``--case``
# and ``-k`` (e2e.run.selection) — as the catalogues (CASES*.md) write them.
CASE_FAMILY = r"[A-Z]{2,3}"
CASE_ID = re.compile(CASE_FAMILY + r"-[1-9][0-9]*")
CASE_ID_RULE = ("a case ID is its family of 2 or 3 capital letters, a hyphen and a number from 1 "
                "without leading zeros (CL-1, NF-12)")


def case_id_problem(case: object) -> str | None:
    """Returns why ``case`` is not a case ID (:data:`CASE_ID_RULE`), or None when it is one."""
    if isinstance(case, str) and CASE_ID.fullmatch(case):
        return None
    return f"{case!r} is not a case ID: {CASE_ID_RULE}"


def number(value: float | int) -> str:
    """The number ``value`` as a person reads it (in its own unit): integers in full (``104857000``, never ``1.04857e+08``),
    other values with up to 6 decimals (``0.25``, ``12.345678``), ``∞`` for an open end."""
    if isinstance(value, float):
        if math.isinf(value):
            return "∞" if value > 0 else "-∞"
        if value.is_integer():
            return str(int(value))
        return f"{value:.6f}".rstrip("0").rstrip(".")
    return str(value)


def equal_to(documented: object, unit: str = "") -> str:
    """Returns ``documented``, a value judged by equality, as a person reads it: a number with its
    ``unit`` (``"6 s"``), else as written (``'Running'``, ``True``). Raises nothing."""
    if isinstance(documented, (int, float)) and not isinstance(documented, bool):
        return number(documented) + (f" {unit}" if unit else "")
    return repr(documented)


def decimals(value: float | int) -> int:
    """How many decimals (a count, no unit) :func:`number` writes ``value`` with."""
    return len(number(value).partition(".")[2])


def measured_number(value: float | int, documented: object = None, band: Sequence[float | None] | None = None) -> str:
    """The measured number ``value`` with the precision of its ``documented`` number: as many decimals as the
    documented value and its band's ends are written with (``20.195712`` against ``20 within [19,
    24]``: ``20``; against ``[5.5, 6.5]``: ``20.2``), and more where fewer would carry it across a
    band end, or onto the documented value when it is judged by equality (``23.04`` against ``[9,
    23]``: ``23.04``, not ``23``), or would show a value that is not zero as ``0`` (``0.355``
    against ``0 within [0, 19]``: ``0.4``), or a value inside the band as a band end (``-0.806``
    against ``[-1, 1]``: ``-0.8``), or round a value up to more than 1.5 times itself (``0.054``
    against ``[0, 1]``: ``0.05``). ``band`` as measurements.json writes it (``[low, high]``, ``None``
    an open end). As :func:`number` when no number is documented, and for an integer."""
    if not isinstance(value, float) or not math.isfinite(value) \
            or not isinstance(documented, (int, float)) or isinstance(documented, bool):
        return number(value)
    low, high = documented, documented
    if band:
        low, high = cast(float, band[0]), math.inf if band[1] is None else band[1]
    holds = value >= low and value <= high
    for places in range(max(decimals(x) for x in (documented, low, high) if math.isfinite(x)), 7):
        text = f"{value:.{places}f}"
        shown = float(text)
        if (low <= shown <= high) == holds and (shown != 0 or value == 0) \
                and (shown not in (low, high) or shown == value) and abs(shown) <= 1.5 * abs(value):
            return text
    return number(value)


@dataclass(frozen=True)
class Band:
    """An inclusive range ``[low, high]`` in the expectation's unit; ``high`` may be
    ``math.inf`` (see :meth:`at_least`)."""

    low: float
    high: float

    @classmethod
    def at_least(cls, low: float) -> "Band":
        """The open-ended band ``[low, ∞)``: "at least ``low``", read ``≥ low``."""
        return cls(low, math.inf)

    def __contains__(self, value: float) -> bool:
        return self.low <= value <= self.high

    def __str__(self) -> str:
        if math.isinf(self.high):
            return f"[{number(self.low)}, ∞)"
        return f"[{number(self.low)}, {number(self.high)}]"

    def as_list(self) -> list[float | None]:
        """``[low, high]`` for JSON (an open end is ``None``)."""
        return [self.low, None if math.isinf(self.high) else self.high]


# -- a known bug's patch range and fix ------------------------------------------------------------
# The state of a known bug a cluster's patch release is expected to be in (KnownBug.expected_on):
# the bug is there, its fix is in, the facts on record cannot tell, or the patch is one of a range
# inside the bug's that never had it (KnownBug.unaffected).
PRESENT, FIXED, UNKNOWN, ABSENT = "present", "fixed", "unknown", "absent"

# A release as a known bug's fix names it (Fix.released, CherryPick.released): "1.37.0" the first
# release with the fix; "≤1.37.2" in that release, the first patch of its minor with it unknown;
# ">1.36.3" not in that release, in a later one or in none yet (unknown); "" not yet released.
_RELEASE = re.compile(r"(≤|>)?1\.(\d+)\.(\d+)")
_PATCH = re.compile(r"v?1\.(\d+)\.(\d+)")


def version_patch(version: str) -> tuple[int, int] | None:
    """Returns ``(minor, patch)`` of a cluster's Kubernetes ``version``: ``"v1.36.2"``, ``"1.36.2"``
    and a vendor's ``"v1.36.2-eks-4a1b"`` give ``(36, 2)``; None when it names no patch release."""
    m = _PATCH.match(version)
    return (int(m.group(1)), int(m.group(2))) if m else None


def release_problem(release: str) -> str | None:
    """Returns why ``release`` is no release as a fix names it, or None when it is one: ``"1.37.0"``
    the first release with the fix; ``"≤1.37.2"`` in that release, the first patch of its minor with
    it unknown; ``">1.36.3"`` not in that release, in a later one or in none yet (unknown); ``""``
    not yet released."""
    if release == "" or _RELEASE.fullmatch(release):
        return None
    return f"{release!r} is no release: '1.37.0' (first with the fix), '≤1.37.2' (in it, first unknown), '>1.36.3' (after it) or ''"


def _state_in(release: str, minor: int, patch: int) -> str:
    """The state of patch ``1.<minor>.<patch>`` by ``release`` of a fix in that minor."""
    if not release:
        return PRESENT
    m = cast(re.Match, _RELEASE.fullmatch(release))
    mark, first = m.group(1), int(m.group(3))
    if int(m.group(2)) < minor:
        return FIXED  # a fix released in an older minor is in every newer one
    if int(m.group(2)) > minor:
        return PRESENT
    if mark == ">":
        return PRESENT if patch <= first else UNKNOWN
    return FIXED if patch >= first else UNKNOWN if mark == "≤" else PRESENT


def release_text(release: str) -> str:
    """Returns ``release`` (a fix's, as :func:`release_problem` reads it) as a person reads it:
    ``"released in 1.37.0"``, ``"released by 1.37.2 (its first 1.37 patch unknown)"``, ``"not in
    1.36.3: released later or not yet (unknown)"``, ``"not yet released"``."""
    m = _RELEASE.fullmatch(release)
    if m is None:
        return "not yet released"
    version = release.lstrip("≤>")
    if m.group(1) == "≤":
        return f"released by {version} (its first 1.{m.group(2)} patch unknown)"
    if m.group(1) == ">":
        return f"not in {version}: released later or not yet (unknown)"
    return f"released in {version}"


@dataclass(frozen=True)
class CherryPick:
    """A fix's cherry-pick to one release branch: ``branch`` (``"release-1.36"``), ``pr`` as
    upstream names it (``"kubernetes/kubernetes#141004"``), ``state`` when read (``"open"``,
    ``"merged"``, ``"closed unmerged"``) and ``released``: the first patch release of that minor
    with it, written as :func:`release_problem` reads it (``""``: not yet released).
    ``ValueError`` for a branch that is no ``release-1.<minor>``, a blank PR or state, or a release
    of another minor."""

    branch: str
    pr: str
    state: str
    released: str = ""

    def __post_init__(self) -> None:
        m = re.fullmatch(r"release-1\.(\d+)", self.branch)
        problems = [] if m else [f"{self.branch!r} is no release branch release-1.<minor>"]
        problems += [f"no {what}" for what, text in (("pr", self.pr), ("state", self.state)) if not text.strip()]
        problem = release_problem(self.released)
        problems += [problem] if problem else []
        if m and not problem and self.released and self.released.lstrip("≤>").split(".")[1] != m.group(1):
            problems.append(f"released {self.released} is not on {self.branch}")
        if problems:
            raise ValueError(f"cherry-pick {self.pr or '?'}: " + "; ".join(problems))

    @property
    def minor(self) -> int:
        """The minor of its branch: ``release-1.36`` → ``36``."""
        return int(self.branch.rsplit(".", 1)[1])


@dataclass(frozen=True)
class Unaffected:
    """Patches of one minor inside a known bug's range that do not have it, ``first`` … ``last``
    (``"1.36.0"``, ``"1.36.2"``), and ``source``: why, as read in their source (file and
    function) and upstream. ``ValueError`` for a range that is no patch range of one minor."""

    first: str
    last: str
    source: str

    def __post_init__(self) -> None:
        a, b = version_patch(self.first), version_patch(self.last)
        if a is None or b is None or a[0] != b[0] or a[1] > b[1]:
            raise ValueError(f"unaffected {self.first}…{self.last}: no patch range of one minor")
        if not self.source.strip():
            raise ValueError(f"unaffected {self.first}…{self.last}: say why, as read in the source")

    def covers(self, minor: int, patch: int) -> bool:
        """Whether patch release ``1.<minor>.<patch>`` is in this range."""
        a, b = cast(tuple[int, int], version_patch(self.first)), cast(tuple[int, int], version_patch(self.last))
        return minor == a[0] and a[1] <= patch <= b[1]

    def text(self) -> str:
        """``"1.36.0–1.36.2 do not have it (<source>)"``."""
        return f"{self.first}–{self.last} do not have it ({self.source})"


@dataclass(frozen=True)
class Fix:
    """The upstream fix of a known bug, as far as it is known: ``pr`` the fix on master
    (``"kubernetes/kubernetes#138462"``; ``""``: unknown), ``state`` when read (``"merged"``,
    ``"open"``…), ``released`` the first release with it (as :func:`release_problem` reads it;
    every newer minor has it too; ``""``: not yet released), ``cherry_picks`` (:class:`CherryPick`,
    one per release branch known) and ``source``: where each of these facts was read (the
    release's CHANGELOG, its source, the upstream thread). Only facts read go here: a PR or
    release not found stays unknown. ``ValueError`` without a state or source, or for a release
    written otherwise."""

    state: str
    source: str
    pr: str = ""
    released: str = ""
    cherry_picks: tuple[CherryPick, ...] = ()

    def __post_init__(self) -> None:
        problems = [f"no {what}" for what, text in (("state", self.state), ("source", self.source)) if not text.strip()]
        problem = release_problem(self.released)
        problems += [problem] if problem else []
        branches = [c.branch for c in self.cherry_picks]
        problems += [f"two cherry-picks to {b}" for b in sorted(set(branches)) if branches.count(b) > 1]
        if problems:
            raise ValueError(f"fix {self.pr or '(PR unknown)'}: " + "; ".join(problems))

    def pick(self, minor: int) -> CherryPick | None:
        """The cherry-pick to ``release-1.<minor>``, or None when none is known."""
        return next((c for c in self.cherry_picks if c.minor == minor), None)

    def state_on(self, minor: int, patch: int) -> str:
        """Whether patch release ``1.<minor>.<patch>`` has the fix: :data:`FIXED` (the master fix's
        release or its minor's cherry-pick's is at or below it), :data:`UNKNOWN` (the facts cannot
        tell: ``≤``/``>`` releases) or :data:`PRESENT` (no released fix reaches it)."""
        states = [_state_in(self.released, minor, patch)]
        pick = self.pick(minor)
        if pick is not None:
            states.append(_state_in(pick.released, minor, patch))
        return FIXED if FIXED in states else UNKNOWN if UNKNOWN in states else PRESENT

    def remedy(self, minor: int) -> str:
        """The fix that removes the bug from a ``1.<minor>`` patch, as the reports name it:
        ``"the fix kubernetes/kubernetes#138462 (merged) is released in 1.37.0"``, ``"the fix is
        cherry-pick kubernetes/kubernetes#142042 to release-1.36 (open), not yet released"``, with
        ``"; no cherry-pick to release-1.36 is known"`` where the master fix's release is newer."""
        pr = self.pr or "(its PR unknown)"
        m = _RELEASE.fullmatch(self.released)
        if m is not None and int(m.group(2)) < minor:
            return f"the fix {pr} ({self.state}) is {release_text(self.released)}, so in every 1.{minor} patch"
        if m is not None and int(m.group(2)) == minor:
            return f"the fix {pr} ({self.state}) is {release_text(self.released)}"
        pick = self.pick(minor)
        if pick is not None:
            return (f"the fix is cherry-pick {pick.pr} to {pick.branch} ({pick.state}), {release_text(pick.released)}"
                    f" (on master: {pr}, {self.state})")
        return f"the fix {pr} ({self.state}) is {release_text(self.released)}; no cherry-pick to release-1.{minor} is known"


@dataclass(frozen=True)
class KnownBug:
    """An upstream bug behind an expectation: the expectation documents what the cluster does
    today (the bug); ``correct`` (with ``correct_band`` for a number, in the expectation's unit) is
    what it would do without the bug. ``issue`` names the upstream issue as found there
    (``"kubernetes/kubernetes#134338 (open)"``), ``mechanism`` the source that causes it (file and
    function).

    ``race``: set when the bug shows only when a race goes its way, so one attempt may see either
    outcome. The text says what decides the race (file and function), and how often each of the two
    outcomes was seen: the **buggy** one, the expectation's own documented value (the race went the
    bug's way), and the **correct** one, ``correct`` (e.g. NF-2: "the taint stuck in 6 of the 8
    runs": buggy 6, correct 2). Both are accepted and recorded in the value's ``details.race``
    (e2e.judge.measurements): the buggy value is ``bug-present`` with ``details.race.outcome =
    "happened"`` (the race the bug needs happened), the correct value a pass — never ``bug-fixed``
    — with ``"did not happen"``; ``details.race.about`` is this text. Any other value fails.

    The patch range that has the bug: ``since``, the first release known to have it (text, as
    read: ``""`` when no release older than the ones the suite reads was checked), up to ``fix``
    (:class:`Fix`; None: no fix known) — the fix's PR, the release it landed in per minor and its
    cherry-picks. The judge reads the cluster's patch against it (:meth:`expected_on`): on a patch
    the fix reaches, the **correct** value is the documented one — ``fixed-as-expected``, the buggy
    one ``bug-present-despite-fix`` (a finding: the test fails, naming the fix), whether or not
    the bug is a race; elsewhere as above, the correct value of a patch no fix is known to reach
    being ``bug-fixed`` (gone although no fix is known: a finding, never a silent pass).
    ``unaffected`` (:class:`Unaffected`): patches inside that range that never had the bug (a
    regression that skipped them): there the correct value is ``absent-as-expected``, the buggy
    one a ``fail`` naming the range."""

    issue: str
    correct: float | str | bool
    mechanism: str
    correct_band: Band | None = None
    race: str = ""
    since: str = ""
    fix: Fix | None = None
    unaffected: tuple[Unaffected, ...] = ()

    def __post_init__(self) -> None:
        if not self.issue or not self.mechanism:
            raise ValueError("a known bug needs its upstream issue and the mechanism in the source")
        if self.since and version_patch(self.since) is None:
            raise ValueError(f"{self.issue}: since {self.since!r} is no release 1.<minor>.<patch>")

    def expected_on(self, version: str) -> str:
        """The bug's state expected on a cluster of Kubernetes ``version`` (``"v1.36.2"``):
        :data:`FIXED` when the fix's release (or its minor's cherry-pick's) reaches that patch,
        :data:`UNKNOWN` when the facts cannot tell (a ``≤``/``>`` release, or a version with no
        patch to read), :data:`ABSENT` on a patch of :attr:`unaffected`, else :data:`PRESENT` — also
        always without a known fix."""
        patch = version_patch(version)
        if patch is not None and any(u.covers(*patch) for u in self.unaffected):
            return ABSENT
        if self.fix is None:
            return PRESENT
        return UNKNOWN if patch is None else self.fix.state_on(*patch)

    def remedy(self, version: str) -> str:
        """What removes the bug from a cluster of ``version``, as the reports say it
        (:meth:`Fix.remedy`); ``"no fix is known"`` without one; the master fix's own release
        when the version names no minor; on a patch of :attr:`unaffected`, why it has none."""
        patch = version_patch(version)
        hit = next((u for u in self.unaffected if patch is not None and u.covers(*patch)), None)
        if hit is not None:
            return hit.text()
        if self.fix is None:
            return "no fix is known"
        if patch is None:
            return f"the fix {self.fix.pr or '(its PR unknown)'} ({self.fix.state}) is {release_text(self.fix.released)}"
        return self.fix.remedy(patch[0])

    def patch_range(self) -> str:
        """The releases that have the bug, as read: ``"since 1.35.0; fix kubernetes/kubernetes#138462
        (merged): released in 1.37.0; release-1.36: #142042 (open), not yet released"``; ``"since an
        unknown release (none older than the ones read was checked); no fix known"``."""
        head = f"since {self.since}" if self.since else "since an unknown release (none older than the ones read was checked)"
        head += "".join(f"; {u.first}–{u.last} do not have it" for u in self.unaffected)
        if self.fix is None:
            return f"{head}; no fix known"
        picks = "".join(f"; {c.branch}: {c.pr} ({c.state}), {release_text(c.released)}" for c in self.fix.cherry_picks)
        return f"{head}; fix {self.fix.pr or '(PR unknown)'} ({self.fix.state}): {release_text(self.fix.released)}{picks}"


@dataclass(frozen=True)
class Race:
    """The other outcome of a race upstream tolerates, where no bug is filed (a late informer, a
    token spent on a stale read): ``documented`` with ``band`` in the expectation's unit, ``why``
    the mechanism — what decides the race, file and function — and how wide the band is, ``seen``
    how often it was seen (``"2 of 31 values on v1.37.2"``) — all of this text about the other
    outcome, this ``documented``. The expectation's own value is the usual outcome; a value
    holding either passes (Expectation.race) and is recorded in ``details.race``: holding this
    ``documented``, ``details.race.outcome = "happened"`` (the race happened; judged against this
    band, ``details.race.about`` this ``why``), holding the expectation's own value ``"did not
    happen"``."""

    documented: float | str | bool
    why: str
    band: Band | None = None
    seen: str = ""

    def __post_init__(self) -> None:
        if not self.why.strip():
            raise ValueError("a race's other outcome needs its mechanism (why)")


# a placeholder of a documented string: {name} (never a regex quantifier such as {1,3})
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


_VERSION = re.compile(r"v?1\.(\d+)\.\d+")


def version_minor(version: str) -> int:
    """The minor of the Kubernetes ``version`` ``"1.37.2"`` or ``"v1.37.2"``: ``37``. Raises
    ``ValueError`` for anything else."""
    m = _VERSION.fullmatch(version)
    if m is None:
        raise ValueError(f"{version!r} is not a Kubernetes version 1.<minor>.<patch>")
    return int(m.group(1))


@dataclass(frozen=True)
class Expectation:
    """One documented value and how far a measurement may stray from it.

    ``case`` is the case ID (``"CL-1"``) and ``name`` the measurement's name (``"restart_gap"``;
    a judged ``restart_gap[2]`` falls back to it, :meth:`Registry.lookup`). ``documented`` is the
    value: a number in ``unit`` (``"s"``, ``"ms"``, ``"bytes"``…; ``""`` for a count), a string
    (an exact status, reason or message; a regex matched whole when ``pattern``; ``{name}``
    placeholders filled by :meth:`fill`) or a flag. ``band`` is a number's inclusive range
    (:class:`Band`, in ``unit``; without one a number is judged by equality) and ``why`` the
    mechanism that makes it that wide. ``source`` names where the value is documented (``[S0]``…
    the seeds, ``[UP]`` upstream source with file, function and version). ``known_bug`` documents
    an upstream bug (:class:`KnownBug`): ``documented`` is then today's buggy value. ``race``
    documents the other outcome of a race upstream tolerates (:class:`Race`; not with a known
    bug, which has its own ``KnownBug.race``): a value holding either passes. ``fact`` names the
    cluster fact a value reads where it holds on the suite's own clusters only, as
    :func:`e2e.base.facts.diff` names it (``"kubelet_config.evictionHard"``: ES-7's kind
    thresholds): a run on a cluster whose fact differs does not measure it, and ``make compare``
    calls its absence there ``keyed by facts``.

    ``minors`` is the inclusive range of Kubernetes minor versions the entry applies to
    (``None`` = open end); ``cgroup`` restricts it to cgroup v1 or v2 nodes. ``verified_in``
    holds the Kubernetes versions (``"1.37.2"``, no ``v``) whose source was read for this entry:
    on a cluster of another minor the entry still applies by ``minors`` but is only carried
    forward (:meth:`verified_for`; the judge labels such values ``unverified-carried-forward``).

    Checked when the entry is made, so a bad entry fails the import of its family (and with it
    ``make test``): the case is a case ID (:data:`CASE_ID_RULE`), name and source are not blank; a band has a ``why``, ``low ≤ high``
    and contains the documented number; every ``verified_in`` version is a
    ``1.<minor>.<patch>`` inside ``minors``. Raises ``ValueError`` naming the entry and each
    problem.
    """

    case: str
    name: str
    documented: float | str | bool
    source: str
    unit: str = ""
    band: Band | None = None
    why: str = ""
    pattern: bool = False
    minors: tuple[int | None, int | None] = (None, None)
    cgroup: int | None = None
    known_bug: KnownBug | None = None
    verified_in: tuple[str, ...] = ()
    race: Race | None = None
    fact: str = ""

    def __post_init__(self) -> None:
        problems = self._problems()
        if problems:
            raise ValueError(f"{self.case} {self.name} ({self.versions()}): " + "; ".join(problems))

    def _problems(self) -> list[str]:
        out = [problem for problem in [case_id_problem(self.case)] if problem]
        out += [f"no {what}" for what, text in (("name", self.name), ("source", self.source)) if not text.strip()]
        if self.band is not None:
            if not self.why.strip():
                out.append(f"band {self.band} without why")
            if self.band.low > self.band.high:
                out.append(f"band {self.band}: low above high")
            documented = self.documented
            if not isinstance(documented, (int, float)) or isinstance(documented, bool) or documented not in self.band:
                out.append(f"documented {documented!r} outside its band {self.band}")
        if self.known_bug is not None and (self.band is None) != (self.known_bug.correct_band is None):
            out.append("the correct value of a known bug is judged like the documented one (both with a band, or neither)")
        if self.race is not None:
            other = self.race.documented
            if self.known_bug is not None:
                out.append("a race's other outcome beside a known bug (a known bug's race is KnownBug.race)")
            if (self.band is None) != (self.race.band is None):
                out.append("the other outcome of a race is judged like the documented one (both with a band, or neither)")
            elif self.race.band is not None and (not isinstance(other, (int, float)) or isinstance(other, bool)
                                                 or other not in self.race.band):
                out.append(f"the race's other outcome {other!r} outside its band {self.race.band}")
        for version in self.verified_in:
            try:
                minor = version_minor(version)
            except ValueError as e:
                out.append(f"verified_in: {e}")
                continue
            if version.startswith("v"):
                out.append(f"verified_in: {version!r} without the v")
            elif not self.applies_to(minor):
                out.append(f"verified_in: {version} is outside the entry's versions")
        return out

    def verified_for(self, minor: int) -> bool:
        """Whether the source of some ``1.<minor>`` release was read for this entry
        (``verified_in``); a patch release of a read minor counts as read — the registry is keyed
        by minor, and ``make test`` checks the suite's own patch releases exactly."""
        return any(version_minor(v) == minor for v in self.verified_in)

    def correct(self) -> "Expectation":
        """The expectation of the correct behaviour of a known bug (same unit, versions and
        source); raises ``ValueError`` when this expectation documents no known bug."""
        if self.known_bug is None:
            raise ValueError(f"{self.case} {self.name}: not a known bug")
        kb = self.known_bug
        return replace(self, documented=kb.correct, band=kb.correct_band, pattern=False, known_bug=None)

    def raced(self) -> "Expectation":
        """The expectation of the other outcome of a race (:class:`Race`: its value, band and
        ``why``; same unit, versions and source); raises ``ValueError`` when none is documented."""
        if self.race is None:
            raise ValueError(f"{self.case} {self.name}: no race documented")
        r = self.race
        why = r.why + (f" (seen {r.seen})" if r.seen else "")
        return replace(self, documented=r.documented, band=r.band, why=why, pattern=False, race=None)

    def applies_to(self, minor: int, cgroup: int | None = None) -> bool:
        """True when the entry covers Kubernetes ``1.<minor>`` (its ``minors``) and a node of
        cgroup version ``cgroup`` (``None``: unknown, covered)."""
        low, high = self.minors
        if low is not None and minor < low:
            return False
        if high is not None and minor > high:
            return False
        return self.cgroup is None or cgroup is None or self.cgroup == cgroup

    def holds_for(self, value: object) -> bool:
        """True when ``value`` meets the expectation (band, equality or pattern)."""
        if self.band is not None:
            return isinstance(value, (int, float)) and not isinstance(value, bool) and value in self.band
        if self.pattern:
            return isinstance(value, str) and re.fullmatch(str(self.documented), value) is not None
        # True == 1 in Python; a documented flag and a documented number must not stand in for each other
        return isinstance(value, bool) == isinstance(self.documented, bool) and value == self.documented

    def fill(self, **params: object) -> "Expectation":
        """This expectation with the ``{placeholders}`` of a documented string filled from
        ``params`` (e.g. the pod name in a message). Only ``{identifier}`` is a placeholder, so a
        regex quantifier such as ``\\d{1,3}`` stays as it is; in a ``pattern`` the values are
        inserted literally (``re.escape``). With no ``params`` the expectation is returned as it
        is (e.g. to read its band). Raises ``KeyError`` naming a placeholder without a value."""
        if not params or not isinstance(self.documented, str) or not _PLACEHOLDER.search(self.documented):
            return self

        def value(m: re.Match) -> str:
            key = m.group(1)
            if key not in params:
                raise KeyError(f"{self.case} {self.name}: no value for placeholder {{{key}}} (given: {sorted(params)})")
            text = str(params[key])
            return re.escape(text) if self.pattern else text

        return replace(self, documented=_PLACEHOLDER.sub(value, self.documented))

    def describe(self) -> str:
        """``"20 s within [19, 23] s"``, ``"≥ 1 restarts"`` (an open band), ``"'CrashLoopBackOff'"`` or
        ``"matching /re/"``; with a race's other outcome ``"0 s within [0, 2] s, or after the race
        10 s within [9, 12] s"``."""
        if self.race is not None:
            return f"{replace(self, race=None).describe()}, or after the race {self.raced().describe()}"
        if self.band is not None:
            unit = f" {self.unit}" if self.unit else ""
            if math.isinf(self.band.high):
                return f"≥ {number(self.band.low)}{unit}"
            return f"{number(cast(float, self.documented))}{unit} within {self.band}{unit}"  # a band: a number
        if self.pattern:
            return f"matching /{self.documented}/"
        return equal_to(self.documented, self.unit)

    def versions(self) -> str:
        """The versions the entry covers, as a message shows them: ``"1.35–newer"``, ``"1.34"``,
        ``"all versions, cgroup v2"``."""
        low, high = self.minors
        if low is None and high is None:
            text = "all versions"
        elif low == high:
            text = f"1.{low}"
        else:
            text = f"1.{low if low is not None else '0'}–{'1.' + str(high) if high is not None else 'newer'}"
        return text + (f", cgroup v{self.cgroup}" if self.cgroup else "")


class NotDocumented(LookupError):
    """No expectation of the registry applies to this case, name and version (or the entries
    differ by cgroup version and the cluster's is unknown)."""


class UnknownMeasurement(LookupError):
    """The registry has never heard of this (case, name) for any version: a misspelt name,
    or a value the registry must document first. Raised at once, never recorded."""


def base_name(name: str) -> str:
    """``name`` without a trailing ``[...]`` qualifier: ``restart_gap[2]`` → ``restart_gap``."""
    if name.endswith("]") and "[" in name:
        return name[: name.rindex("[")]
    return name


@dataclass
class Registry:
    """The documented values, ``entries`` (:class:`Expectation`), looked up by case, name and
    version (:meth:`lookup`). The suite's is :data:`REGISTRY` (:func:`register` adds to it)."""

    entries: list[Expectation] = field(default_factory=list)
    # per entry (by id: entries are never removed), the module that registered it (module_of)
    _modules: dict[int, str] = field(default_factory=dict, repr=False, init=False)

    def add(self, *expectations: Expectation, module: str | None = None) -> None:
        """Add ``expectations``, registered by the module named ``module`` (:func:`register`
        passes its caller's; :meth:`module_of`); raises ``ValueError`` when one overlaps an entry
        of the same case, name and cgroup version in its ``minors``."""
        for new in expectations:
            for old in self.entries:
                if (old.case, old.name, old.cgroup) == (new.case, new.name, new.cgroup) and _overlap(
                    old.minors, new.minors
                ):
                    raise ValueError(f"{new.case} {new.name}: versions {new.versions()} overlap {old.versions()}")
            self.entries.append(new)
            if module is not None:
                self._modules[id(new)] = module

    def module_of(self, entry: Expectation) -> str | None:
        """The name of the module whose :func:`register` call added ``entry`` (as ``sys.modules``
        holds it, e.g. ``"e2e.documented.crashloop"``); None for an entry added otherwise. ``make
        test`` reads that module's claim of minors (README "Write your own case")."""
        return self._modules.get(id(entry))

    def _candidates(self, case: str, name: str) -> list[Expectation]:
        candidates = [e for e in self.entries if e.case == case and e.name == name]
        if not candidates and base_name(name) != name:
            candidates = [e for e in self.entries if e.case == case and e.name == base_name(name)]
        return candidates

    def lookup(self, case: str, name: str, minor: int, cgroup: int | None = None) -> Expectation:
        """The expectation for ``case``/``name`` on Kubernetes ``1.<minor>`` and a node of cgroup
        version ``cgroup`` (``None``: unknown, e.g. a ``--kubeconfig`` cluster).

        ``name`` is matched exactly, else without a trailing ``[...]`` qualifier (so
        ``waiting_message[restartCount=2]`` uses the ``waiting_message`` entry).
        Raises :class:`UnknownMeasurement` when no version documents the name, and
        :class:`NotDocumented` (with the versions that are documented) when none applies — also
        when the entries for this version are keyed by cgroup version and ``cgroup`` is unknown.
        """
        candidates = self._candidates(case, name)
        if not candidates:
            raise UnknownMeasurement(
                f"{case} {name}: not a measurement the registry knows (misspelt, or document it in "
                f"e2e/documented first); {case} documents: {', '.join(self.names(case)) or 'nothing'}"
            )
        applicable = [e for e in candidates if e.applies_to(minor, cgroup)]
        if cgroup is None and any(e.cgroup is not None for e in applicable):
            keyed = ", ".join(e.versions() for e in applicable)
            raise NotDocumented(f"{case} {name}: documented per cgroup version ({keyed}) and this cluster's cgroup version is unknown")
        if applicable:
            return applicable[0]
        known = ", ".join(e.versions() for e in candidates)
        raise NotDocumented(f"{case} {name}: nothing documented for 1.{minor} (documented for: {known})")

    def names(self, case: str) -> list[str]:
        """The measurement names documented for ``case`` (any version)."""
        return sorted({e.name for e in self.entries if e.case == case})

    def cases(self) -> list[str]:
        """Every case ID with a documented value, sorted."""
        return sorted({e.case for e in self.entries})

    def __repr__(self) -> str:
        # short: the API reference shows the suite's REGISTRY by its repr
        return f"Registry({len(self.entries)} entries, {len(self.cases())} cases)"


def _overlap(a: tuple[int | None, int | None], b: tuple[int | None, int | None]) -> bool:
    lo = max(x for x in (a[0], b[0], -1) if x is not None)
    hi = min(x for x in (a[1], b[1], 10**6) if x is not None)
    return lo <= hi


REGISTRY = Registry()


def register(expectations: Iterable[Expectation], verified_in: tuple[str, ...]) -> None:
    """Add ``expectations`` to :data:`REGISTRY`; ``verified_in`` are the Kubernetes versions
    (``"1.37.2"``) whose source was read for this family's entries. An entry gets those of them
    its ``minors`` cover, unless it names its own ``verified_in``. The calling module is noted
    (:meth:`Registry.module_of`): ``make test`` holds a case's entries to every minor of the
    upgrade path, or to the minors its module claims outside the catalogue (a module-level
    ``pytestmark = pytest.mark.k8s_minors(37, reason=…)``; README "Write your own case").
    ``ValueError`` as :meth:`Registry.add`, or for a version that is no ``1.<minor>.<patch>``."""
    minors = {v: version_minor(v) for v in verified_in}
    REGISTRY.add(*(e if e.verified_in else replace(e, verified_in=tuple(v for v in verified_in if e.applies_to(minors[v])))
                   for e in expectations), module=sys._getframe(1).f_globals.get("__name__"))


# -- builders: the four shapes of a documented value, one name each (the module doc) -------------

def equal(case: str, name: str, value: float | str | bool, source: str, **kw) -> Expectation:
    """Returns a value judged by equality, no band: ``value`` a string (a status, reason or
    message; a regex matched whole with ``pattern=True``), a flag, or a number that must be exactly
    it (an exit code, a configured setting). ``ValueError`` for a bad entry, as :class:`Expectation`.

    ``"absent"`` documents a behaviour a minor lacks, beside the value of the minors that have it
    (NF-5 ``not_ready_s``: a band up to 1.34, ``"absent"`` from 1.35: no Ready flip, nothing to
    time). The test passes ``"absent"`` when it saw nothing; on that minor ``"absent"`` passes and a
    measured number fails (``measured 3.2 s, expected 'absent'`` with ``unit="s"`` given here), and
    on a minor with a band ``"absent"`` fails against it. A judged wait
    that timed out measures ``None`` ("measured nothing"), which fails against ``"absent"`` too:
    look with ``Scenario.first_within`` where the behaviour may be absent."""
    return Expectation(case, name, value, source, **kw)


def exact(case: str, name: str, value: float, source: str, why: str, unit: str = "", **kw) -> Expectation:
    """Returns a number with no slack, ``value`` in ``unit`` shown with its band ``[value, value]``
    (a count, an arithmetic result); ``why`` says why nothing can move it. ``ValueError`` for a bad
    entry (no ``why``), as :class:`Expectation`."""
    return Expectation(case, name, value, source, unit=unit, band=Band(value, value), why=why, **kw)


def within(case: str, name: str, documented: float, low: float, high: float, why: str, source: str,
           unit: str = "s", **kw) -> Expectation:
    """Returns a number in the band ``[low, high]`` around ``documented`` (all in ``unit``), ``why``
    from the mechanism; a time in seconds (``unit="s"``, the default) is kept as a float.
    ``ValueError`` for a bad entry (``documented`` outside the band…), as :class:`Expectation`."""
    value = float(documented) if unit == "s" else documented
    return Expectation(case, name, value, source, unit=unit, band=Band(low, high), why=why, **kw)


def at_least(case: str, name: str, low: float, source: str, why: str, unit: str = "", **kw) -> Expectation:
    """Returns a number documented as "at least ``low``" in ``unit`` (``Band.at_least``: read
    ``≥ low``), ``why`` from the mechanism. ``ValueError`` for a bad entry, as :class:`Expectation`."""
    return Expectation(case, name, low, source, unit=unit, band=Band.at_least(low), why=why, **kw)
