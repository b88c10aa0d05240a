"""Selecting tests by the CASES.md case IDs they judge (``@pytest.mark.case("CL-1", "CL-2")``).

- A ``case`` marker's every argument is a case ID (:data:`e2e.judge.expectations.CASE_ID_RULE`),
  checked at collection: any other is a usage error naming the test and the rule
  (:func:`check_declared`), as ``--case`` names it for an ID it cannot take.
- ``--case CL-1,SC-3`` keeps the tests that judge any of the given cases; a family (``CL``)
  stands for all of its cases. An ID no collected test judges is a usage error.
- ``-k``: an identifier written as a case ID or family (``CL-1``, ``CL``: upper case, as
  CASES.md writes them) that some collected test judges matches exactly the tests judging it
  (``CL-1`` not ``CL-10``, ``CL`` not "in**cl**udes"); every other identifier keeps pytest's
  own matching (a case-insensitive substring of names, markers and keywords, which include
  the case IDs: ``item.extra_keyword_matches``). ``-k "CL and not slow"``, ``-k "CL-1 or SC-3"``
  work as expected. Public pytest only: the ``-k`` grammar and names pytest documents are
  rebuilt here (:func:`compile_keywords`, :func:`keyword_names`); pytest's own ``-k`` pass sees
  no expression while it runs after such a selection (:func:`keyword_selection`).
- Every test carries its case IDs and its family as allure labels (``case``, ``tag``,
  ``parentSuite`` = the family's title, ``suite`` = the case IDs) and as junit ``case``
  properties, also when it is skipped before its body runs.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Callable, Iterable, Iterator

import allure
import pytest

from ..judge.expectations import CASE_FAMILY, CASE_ID, CASE_ID_RULE, case_id_problem

FAMILY = re.compile(CASE_FAMILY)
# an identifier of pytest's -k language (pytest's docs, "-k": letters, digits, _ : + - . [ ] \ /)
_IDENT = re.compile(r"(?:\w|:|\+|-|\.|\[|\]|\\|/)+")
# attributes of a test function that are no keywords (pytest's own, "pytestmark", "cache_parameters")
_NOT_KEYWORDS = frozenset({"pytestmark", "cache_parameters"})


def cases_of(item: pytest.Item) -> list[str]:
    """The case IDs of ``item``'s ``case`` markers, in marker order, without repeats."""
    out: list[str] = []
    for mark in item.iter_markers("case"):
        out.extend(c for c in mark.args if c not in out)
    return out


def check_declared(items: list[pytest.Item]) -> None:
    """``pytest.UsageError`` naming each test whose ``case`` marker has no argument or one that is
    not a case ID, with the rule (:data:`e2e.judge.expectations.CASE_ID_RULE`)."""
    bad: list[str] = []
    for item in items:
        for mark in item.iter_markers("case"):
            problems = [p for p in map(case_id_problem, mark.args) if p] if mark.args else [f"no case ID given: {CASE_ID_RULE}"]
            bad.extend(f"{item.nodeid}: @pytest.mark.case({', '.join(map(repr, mark.args))}): {p}" for p in problems)
    if bad:
        raise pytest.UsageError("case markers that are no case IDs:\n" + "\n".join(dict.fromkeys(bad)))


def family(case: str) -> str:
    """``"CL-1"`` → ``"CL"``."""
    return case.split("-", 1)[0]


def matches(cases: Iterable[str], wanted: str) -> bool:
    """True when a case of ``cases`` is ``wanted`` (a case ID) or of family ``wanted``."""
    return any(c == wanted or family(c) == wanted for c in cases)


def parse_case_option(text: str) -> list[str]:
    """``"CL-1, SC-3"`` → ``["CL-1", "SC-3"]``; ``pytest.UsageError`` naming the rule
    (:data:`e2e.judge.expectations.CASE_ID_RULE`) on an ID that is neither a case ID (``CL-1``)
    nor a family (``CL``)."""
    ids = [part.strip() for part in text.split(",") if part.strip()]
    bad = [i for i in ids if not (CASE_ID.fullmatch(i) or FAMILY.fullmatch(i))]
    if not ids or bad:
        raise pytest.UsageError(
            f"--case {text!r}: {'not a case ID or family: ' + ', '.join(bad) if bad else 'no case ID given'}; "
            f"{CASE_ID_RULE}; a family alone (CL) selects all its cases; several comma-separated: --case CL-1,SC-3"
        )
    return ids


def family_title(item: pytest.Item) -> str:
    """The family's title, as plain text: the scenario module docstring's first sentence (its first
    paragraph up to `` (``, ``, on a real cluster`` or ``. ``, lines joined, reST inline markup such
    as ````kubectl drain```` without its quotes: ``"CL — crash loop back-off"``), else the module's
    name."""
    module = getattr(item, "module", None)
    doc = (getattr(module, "__doc__", None) or "").strip()
    if not doc:
        return item.path.stem
    paragraph = " ".join(line.strip() for line in doc.split("\n\n", 1)[0].splitlines())
    sentence = re.split(r" \(|, on a real cluster|\. ", paragraph, maxsplit=1)[0].rstrip(".")
    return re.sub(r"``([^`]+)``|`([^`]+)`", lambda m: m.group(1) or m.group(2), sentence)


def label(items: list[pytest.Item]) -> None:
    """Give every item with cases its keywords, allure labels and junit properties (see module
    doc); every item gets the hidden allure label ``_nodeid`` (what ``summary.html`` and
    ``measurements.json`` key tests by) and its module's title as ``parentSuite`` — also a test
    judging no case (the multi-node profile's check read ``scenarios.profiles`` in the report)."""
    for item in items:
        item.add_marker(allure.label("_nodeid", item.nodeid))
        item.add_marker(allure.parent_suite(family_title(item)))
        cases = cases_of(item)
        if not cases:
            continue
        item.extra_keyword_matches.update(cases)
        item.add_marker(allure.label("case", *cases))
        item.add_marker(allure.tag(*cases))
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


Keywords = Callable[[Callable[[str], bool]], bool]


def compile_keywords(text: str) -> Keywords:
    """A ``-k`` expression as pytest's documentation writes its grammar — identifiers, ``not``,
    ``and``, ``or`` (in that precedence), parentheses; empty matches everything — as a function
    of the matcher deciding each identifier. ``SyntaxError`` on anything else (pytest then
    reports the expression itself)."""
    tokens: list[str] = []
    pos = 0
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
        elif text[pos] in "()":
            tokens.append(text[pos])
            pos += 1
        elif m := _IDENT.match(text, pos):
            tokens.append(m.group())
            pos = m.end()
        else:
            raise SyntaxError(f"-k {text!r}: unexpected character at {pos + 1}")
    at = 0

    def take(token: str) -> bool:
        nonlocal at
        if at < len(tokens) and tokens[at] == token:
            at += 1
            return True
        return False

    def either() -> Keywords:
        terms = [both()]
        while take("or"):
            terms.append(both())
        return lambda match: any(t(match) for t in terms)

    def both() -> Keywords:
        terms = [negated()]
        while take("and"):
            terms.append(negated())
        return lambda match: all(t(match) for t in terms)

    def negated() -> Keywords:
        nonlocal at
        if take("not"):
            inner = negated()
            return lambda match: not inner(match)
        if take("("):
            inner = either()
            if not take(")"):
                raise SyntaxError(f"-k {text!r}: a parenthesis is not closed")
            return inner
        if at == len(tokens) or tokens[at] in ("(", ")", "or", "and"):
            raise SyntaxError(f"-k {text!r}: an identifier expected")
        ident = tokens[at]
        at += 1
        return lambda match: match(ident)

    if not tokens:
        return lambda match: True
    expr = either()
    if at != len(tokens):
        raise SyntaxError(f"-k {text!r}: unexpected {tokens[at]!r}")
    return expr


def keyword_names(item: pytest.Item) -> set[str]:
    """The names pytest's own ``-k`` matches ``item`` by (its documentation): the names of the
    test and its parents below the root directory, its extra keywords (the case IDs among
    them), the attributes set on its function, the names of its markers."""
    names = {node.name for node in item.listchain()
             if not isinstance(node, pytest.Session)
             and not (isinstance(node, pytest.Directory) and isinstance(node.parent, pytest.Session))}
    names |= item.listextrakeywords()
    function = getattr(item, "function", None)
    if function is not None:
        names |= {n for n in vars(function) if not n.startswith("_") and n not in _NOT_KEYWORDS}
    names |= {mark.name for mark in item.iter_markers()}
    return names


def select_keyword(config: pytest.Config, items: list[pytest.Item]) -> bool:
    """Apply ``-k`` with case IDs and families matched exactly (see module doc) and say whether
    it did: then pytest's own ``-k`` pass must not match ``CL`` inside other words again
    (:func:`keyword_selection`). Expressions without a case-ID identifier are left to pytest."""
    text = (config.getoption("keyword") or "").strip()
    if not text:
        return False
    try:
        expr = compile_keywords(text)
    except SyntaxError:
        return False  # pytest reports the bad expression itself
    known = _known(items)
    exact = {i for i in _IDENT.findall(text) if (CASE_ID.fullmatch(i) or FAMILY.fullmatch(i)) and i in known}
    if not exact:
        return False

    def keep(item: pytest.Item) -> bool:
        cases, names = cases_of(item), [n.lower() for n in keyword_names(item)]
        # pytest's matching for every other identifier: a case-insensitive substring of a name
        return expr(lambda ident: matches(cases, ident) if ident in exact else any(ident.lower() in n for n in names))

    _keep(config, items, keep)
    return True


@contextmanager
def keyword_selection(config: pytest.Config, items: list[pytest.Item]) -> Iterator[None]:
    """Around pytest's own selection (``pytest_collection_modifyitems``): apply ``-k`` with case
    IDs (:func:`select_keyword`) and, when it did, let pytest's own ``-k`` pass see no expression
    — no public API changes how ``-k`` matches, and pytest's substring matching would take
    ``CL-10`` for ``CL-1`` again — then give the option back as the user wrote it."""
    if not select_keyword(config, items):
        yield
        return
    given = config.option.keyword
    config.option.keyword = ""
    try:
        yield
    finally:
        config.option.keyword = given


def _keep(config: pytest.Config, items: list[pytest.Item], keep) -> None:
    selected = [i for i in items if keep(i)]
    deselected = [i for i in items if not keep(i)]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = selected
