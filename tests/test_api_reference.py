"""The API reference (``make docs``: Sphinx's autodoc, from the docstrings; the site itself:
tests/test_docs.py) states the contract of every
public name a case author uses — :class:`~e2e.run.scenario.Scenario`, the pod vocabulary
(:mod:`e2e.record.pods`, :mod:`e2e.record.podstatus`, :mod:`e2e.record.apitime`), the evidence
helpers (``e2e.evidence.*``), the faults (``e2e.faults.*``) and the registry's
:class:`~e2e.judge.expectations.Expectation` / :class:`~e2e.judge.expectations.Band`
(:mod:`e2e.judge.expectations`) — so that nobody reads the framework's source to write a case
(issue 29).

"Public" is what pdoc's model of a module (``pdoc.doc``, read here, rendered nowhere) shows: a name without a leading ``_`` (or the module's ``__all__``), defined
in the module. The rule, checked on each public function, method and class of those modules:

1. **a docstring**;
2. **every argument** named in it as a code span (````timeout_s````), or defined once for the
   whole module — in its docstring or its package's — as ````name``: …`` (e.g. ``site`` of
   every fault, in :mod:`e2e.faults`); a class
   names the arguments of its constructor (a dataclass: its fields) in its docstring, or a field
   has a docstring of its own;
3. **what it returns**, when it returns something: said with "returns"/"yields"/"gives", or by a
   summary that names the value ("The status of …", "True when …", "``(READY, STATUS)`` of …");
4. **a unit for every number** it takes or returns: in the name (``timeout_s``, ``gap_ms``,
   ``memory_limit_bytes``) or in the docstring (s, ms, µs, epoch, bytes, KiB, %…, or what a
   unitless number counts: a count, an index, a PID, an exit code, a score…);
5. **the errors it raises**: every exception class the body raises itself is named, and a
   ``pytest.skip`` is said ("skips"). Errors that only pass through from what it calls are the
   callee's to document.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import textwrap
from pathlib import Path

import pdoc
import pdoc.doc
import pdoc.extract
import pytest

ROOT = Path(__file__).resolve().parents[1]

CHECKED = [
    "e2e.run.scenario",
    "e2e.record.pods", "e2e.record.podstatus", "e2e.record.apitime",
    "e2e.judge.expectations",
    "e2e.faults", "e2e.faults.core", "e2e.faults.components", "e2e.faults.taints", "e2e.faults.node",
    *sorted(f"e2e.evidence.{p.stem}" for p in (ROOT / "e2e" / "evidence").glob("*.py") if p.stem != "__init__"),
]

# a unit in a name: seconds, milliseconds, µs, bytes...; or a name that is a count
UNIT_IN_NAME = re.compile(r"(_(s|ms|us|bytes|kib|mib|kb|pct|count)|^(n|count|nth))$")
UNIT_IN_TEXT = re.compile(
    r"(\bs\b|\bms\b|µs|\bseconds?\b|\bepoch\b|\bbytes\b|\bKiB\b|\bMiB\b|\bkB\b|%|\bfraction\b"
    r"|\bcount\b|\bnumber of\b|\bindex\b|\bPID\b|\bexit code\b|\bscore\b|\bbit\b|\bgeneration\b|\bminor\b|\bversion\b)")
RETURN_SAID = re.compile(r"\b(returns?|returned|yields?|gives)\b", re.I)
NAMES_THE_VALUE = re.compile(r"^(``|The\b|A\b|An\b|True\b|False\b|Whether\b|What\b|Every\b|Each\b|One\b|Lines\b|How\b)")


def code_names(doc: str, name: str) -> bool:
    """True when ``name`` is a word inside some ````code span```` of ``doc``."""
    return any(re.search(rf"(?<![\w.]){re.escape(name)}\b", span) for span in re.findall(r"``(.+?)``", doc, re.S))


def defined(module_doc: str, name: str) -> bool:
    """True when the module's docstring defines ``name`` for all its functions: ````name``: …``."""
    return f"``{name}``:" in module_doc


def numeric(annotation: object) -> bool:
    """An annotation that is (or may be) a number: ``int``, ``float``, ``float | None``…"""
    text = str(annotation)
    return re.search(r"\b(int|float)\b", text) is not None and re.search(r"\b(dict|list|tuple|set|Iterable|Sequence|Callable)\b", text) is None


def raised(obj: object) -> tuple[set[str], bool]:
    """The exception classes ``obj``'s own body raises (``raise X(...)``) and whether it calls
    ``pytest.skip``."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(obj)))  # type: ignore[arg-type]
    except (OSError, TypeError):
        return set(), False
    names, skips = set(), False
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            name = exc.attr if isinstance(exc, ast.Attribute) else exc.id if isinstance(exc, ast.Name) else ""
            if name[:1].isupper():
                names.add(name)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "skip"
              and isinstance(node.func.value, ast.Name) and node.func.value.id == "pytest"):
            skips = True
    return names, skips


def function_problems(f: pdoc.doc.Function, module_doc: str) -> list[str]:
    doc = f.docstring.strip()
    if not doc:
        return ["no docstring"]
    out = []
    for p in f.signature.parameters.values():
        if p.name in ("self", "cls"):
            continue
        if not (code_names(doc, p.name) or defined(module_doc, p.name)):
            out.append(f"argument {p.name} is not named (``{p.name}``)")
        elif numeric(p.annotation) and not UNIT_IN_NAME.search(p.name) and not UNIT_IN_TEXT.search(doc + module_doc):
            out.append(f"argument {p.name} is a number without a unit")
    returns = f.signature.return_annotation
    if returns not in (inspect.Signature.empty, None, "None") and str(returns) != "None":
        if not (RETURN_SAID.search(doc) or NAMES_THE_VALUE.match(doc)):
            out.append(f"does not say what it returns ({returns})")
        if numeric(returns) and not UNIT_IN_NAME.search(f.name) and not UNIT_IN_TEXT.search(doc):
            out.append("returns a number without a unit")
    names, skips = raised(f.obj)
    out += [f"raises {n} without naming it" for n in sorted(names) if n not in doc]
    if skips and "skip" not in doc.lower():
        out.append("calls pytest.skip without saying so")
    return out


def class_problems(c: pdoc.doc.Class, module_doc: str) -> list[str]:
    doc = c.docstring.strip()
    if not doc:
        return ["no docstring"]
    if issubclass(c.obj, BaseException) or getattr(c.obj, "_is_protocol", False):
        return []  # an error's arguments are its message; a protocol is never constructed
    try:
        params = [p for p in inspect.signature(c.obj).parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    except (TypeError, ValueError):
        return []
    documented_fields = {m.name for m in c.own_members if isinstance(m, pdoc.doc.Variable) and m.docstring.strip()}
    missing = [p.name for p in params
               if not (code_names(doc, p.name) or defined(module_doc, p.name) or p.name in documented_fields)]
    return [f"constructor argument(s) not named: {', '.join(missing)}"] if missing else []


def shared_definitions(module_name: str) -> str:
    """The docstrings of the module and of its package, where shared arguments are defined."""
    package = module_name.rpartition(".")[0]
    return "\n".join((importlib.import_module(m).__doc__ or "") for m in (module_name, package) if m)


def problems(module_name: str) -> list[str]:
    """``"qualname: problem"`` for every public name of the module that breaks the rule; a name
    the module re-exports (``__all__``) is checked in the module that defines it."""
    module = pdoc.doc.Module(importlib.import_module(module_name))
    out = []
    for member in module.members.values():
        if member.name.startswith("_") or isinstance(member, pdoc.doc.Variable):
            continue
        defined_in = getattr(member.obj, "__module__", module_name)
        if defined_in != module_name and (defined_in in CHECKED or not defined_in.startswith("e2e")):
            continue
        definitions = shared_definitions(defined_in)
        if isinstance(member, pdoc.doc.Class):
            out += [f"{member.qualname}: {p}" for p in class_problems(member, definitions)]
            for m in member.own_members:
                if isinstance(m, pdoc.doc.Function) and not m.name.startswith("_"):
                    out += [f"{m.qualname}: {p}" for p in function_problems(m, definitions)]
        elif isinstance(member, pdoc.doc.Function):
            out += [f"{member.qualname}: {p}" for p in function_problems(member, definitions)]
    return out


@pytest.mark.parametrize("module_name", CHECKED)
def test_every_public_name_states_its_contract(module_name):
    found = problems(module_name)
    assert not found, f"{module_name}: docstrings short of the rule (tests/test_api_reference.py):\n  " + "\n  ".join(found)


def test_the_rule_finds_each_kind_of_gap(tmp_path, monkeypatch):
    (tmp_path / "gappy.py").write_text(textwrap.dedent('''
        """A module. ``shared``: an argument every function here takes."""

        def undocumented(x): pass

        def wait(shared, timeout, what: str) -> float:
            """Wait for ``what``."""
            raise TimeoutError(what)

        def fine(shared, timeout_s: float, what: str) -> float:
            """Wait up to ``timeout_s`` for ``what``; returns the seconds waited.
            ``TimeoutError`` when it does not come."""
            raise TimeoutError(what)

        def count(n: int) -> int:
            """The number of pods, at most ``n``."""
            return n

        class Point:
            """A point ``x``."""
            def __init__(self, x: int, y: int):
                self.x, self.y = x, y
        '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    found = problems("gappy")
    assert found == [
        "undocumented: no docstring",
        "wait: argument timeout is not named (``timeout``)",
        "wait: does not say what it returns (<class 'float'>)",
        "wait: returns a number without a unit",
        "wait: raises TimeoutError without naming it",
        "Point: constructor argument(s) not named: y",
    ]


def test_the_registry_reads_short_in_the_reference():
    # a new user's trial: the page of e2e.judge.expectations showed the whole registry, ~300 KB on one line
    import e2e.documented  # noqa: F401
    from e2e.judge.expectations import REGISTRY

    assert len(repr(REGISTRY)) < 60 and "entries" in repr(REGISTRY)
