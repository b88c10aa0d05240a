"""Selecting tests by the CASES.md case IDs they judge (``@pytest.mark.case("CL-1", "CL-2")``).

- ``--case CL-1,SC-3`` keeps the tests that judge any of the given cases; a family (``CL``)
  stands for all of its cases. An ID no collected test judges is a usage error.
- ``-k``: an identifier written as a case ID or family (``CL-1``, ``CL``: upper case, as
  CASES.md writes them) that some collected test judges matches exactly the tests judging it
  (``CL-1`` not ``CL-10``, ``CL`` not "in**cl**udes"); every other identifier keeps pytest's
  own matching (a case-insensitive substring of names, markers and keywords, which include
  the case IDs). ``-k "CL and not slow"``, ``-k "CL-1 or SC-3"`` work as expected.
- Every test carries its case IDs and its family as allure labels (``case``, ``tag``,
  ``parentSuite`` = the family's title, ``suite`` = the case IDs) and as junit ``case``
  properties, also when it is skipped before its body runs.
"""

from __future__ import annotations

import re
from typing import Iterable

import allure
import pytest
# pytest's -k expression language and keyword matcher: no public API exposes them
from _pytest.mark import KeywordMatcher
from _pytest.mark.expression import Expression

CASE_ID = re.compile(r"[A-Z]{2,3}-\d+")
FAMILY = re.compile(r"[A-Z]{2,3}")
# an identifier of pytest's -k language (_pytest/mark/expression.py, Scanner)
_IDENT = re.compile(r"(?:\w|:|\+|-|\.|\[|\]|\\|/)+")


def cases_of(item: pytest.Item) -> list[str]:
    """The case IDs of ``item``'s ``case`` markers, in marker order, without repeats."""
    out: list[str] = []
    for mark in item.iter_markers("case"):
        out.extend(c for c in mark.args if c not in out)
    return out


def family(case: str) -> str:
    """``"CL-1"`` → ``"CL"``."""
    return case.split("-", 1)[0]


def matches(cases: Iterable[str], wanted: str) -> bool:
    """True when a case of ``cases`` is ``wanted`` (a case ID) or of family ``wanted``."""
    return any(c == wanted or family(c) == wanted for c in cases)


def parse_case_option(text: str) -> list[str]:
    """``"CL-1, SC-3"`` → ``["CL-1", "SC-3"]``; ``pytest.UsageError`` on an ID that is neither
    a case ID (``CL-1``) nor a family (``CL``)."""
    ids = [part.strip() for part in text.split(",") if part.strip()]
    bad = [i for i in ids if not (CASE_ID.fullmatch(i) or FAMILY.fullmatch(i))]
    if not ids or bad:
        raise pytest.UsageError(
            f"--case {text!r}: give case IDs or families as CASES.md writes them, comma-separated "
            f"(e.g. --case CL-1,SC-3 or --case CL){'; not understood: ' + ', '.join(bad) if bad else ''}"
        )
    return ids


def family_title(item: pytest.Item) -> str:
    """The family's title: the first line of the scenario module's docstring up to `` (``
    (``"CL — crash loop back-off"``), else the module's name."""
    module = getattr(item, "module", None)
    doc = (getattr(module, "__doc__", None) or "").strip()
    if not doc:
        return item.path.stem
    return re.split(r" \(|, on a real cluster", doc.splitlines()[0], maxsplit=1)[0].rstrip(".")


def label(items: list[pytest.Item]) -> None:
    """Give every item with cases its keywords, allure labels and junit properties (see module
    doc); every item gets the hidden allure label ``_nodeid`` (what ``summary.html`` and
    ``measurements.json`` key tests by)."""
    for item in items:
        item.add_marker(allure.label("_nodeid", item.nodeid))
        cases = cases_of(item)
        if not cases:
            continue
        item.extra_keyword_matches.update(cases)
        item.add_marker(allure.label("case", *cases))
        item.add_marker(allure.tag(*cases))
        item.add_marker(allure.parent_suite(family_title(item)))
        item.add_marker(allure.suite(", ".join(cases)))
        item.user_properties.extend(("case", c) for c in cases)


def _known(items: list[pytest.Item]) -> set[str]:
    cases = {c for item in items for c in cases_of(item)}
    return cases | {family(c) for c in cases}


def select_cases(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Apply ``--case`` to ``items`` in place (deselected ones reported to pytest)."""
    option = config.getoption("--case")
    if not option:
        return
    wanted = parse_case_option(option)
    unknown = [w for w in wanted if w not in _known(items)]
    if unknown:
        raise pytest.UsageError(
            f"--case: no collected test judges {', '.join(unknown)} "
            f"(collected: {', '.join(sorted(c for c in _known(items) if '-' in c)) or 'none'})"
        )
    _keep(config, items, lambda item: any(matches(cases_of(item), w) for w in wanted))


def select_keyword(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Evaluate ``-k`` with case IDs and families matched exactly (see module doc) and clear
    it, so that pytest's own ``-k`` pass does not match ``CL`` inside other words again.
    Expressions without a case-ID identifier are left to pytest."""
    text = config.option.keyword.strip()
    if not text:
        return
    try:
        expr = Expression.compile(text)
    except SyntaxError:
        return  # pytest reports the bad expression itself
    known = _known(items)
    exact = {i for i in _IDENT.findall(text) if (CASE_ID.fullmatch(i) or FAMILY.fullmatch(i)) and i in known}
    if not exact:
        return

    def keep(item: pytest.Item) -> bool:
        cases, names = cases_of(item), KeywordMatcher.from_item(item)
        return expr.evaluate(lambda ident, **kw: matches(cases, ident) if ident in exact else names(ident, **kw))  # type: ignore[arg-type]

    _keep(config, items, keep)
    config.option.keyword = ""


def _keep(config: pytest.Config, items: list[pytest.Item], keep) -> None:
    selected = [i for i in items if keep(i)]
    deselected = [i for i in items if not keep(i)]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = selected
