"""Every measurement name the cases judge is one the registry knows (issue: unknown names
are errors). Reads the sources of e2e/ and of the case folders (``scenarios/``, ``examples/`` and
a user's own, ``make test CASES=…``: tests/case_dirs.py), no cluster, after importing the cases'
modules (their own ``register`` calls): each call of ``expect``/``set_aside``/
``expect_order`` whose case and name are written in the code — literal strings or f-strings,
whose ``{fields}`` may stand for anything — must match a registered (case, name) the way
``Registry.lookup`` matches (exact, or without a trailing ``[...]`` qualifier). A misspelt name
fails ``make test`` here, before any cluster runs."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from case_dirs import case_dirs, case_sources, import_cases, shown
from e2e import documented  # noqa: F401  (registers every family)
from e2e.judge.expectations import CASE_ID, REGISTRY, Registry

ROOT = Path(__file__).resolve().parents[1]
import_cases(case_dirs())  # the cases' own expectations (an import error fails tests/test_user_cases.py)
SOURCES = case_sources(case_dirs()) + sorted((ROOT / "e2e").rglob("*.py"))
JUDGING = {"expect", "set_aside", "expect_order", "Value"}  # Value: e2e.measure's measured values (case, name, …)


def _pattern(node: ast.expr) -> str | None:
    """A regex for a string literal or f-string (fields → ``.*``); None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return re.escape(node.value)
    if isinstance(node, ast.JoinedStr):
        return "".join(re.escape(v.value) if isinstance(v, ast.Constant) else ".*" for v in node.values)
    return None


def judged_names(path: Path) -> list[tuple[int, str | None, str]]:
    """``(line, case or None when computed, name regex)`` of every judging call in ``path``."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name not in JUDGING:
            continue
        args = node.args[1:] if name == "expect_order" else node.args  # expect_order(judge, case, name, ...)
        if len(args) < 2:
            continue
        case = args[0].value if isinstance(args[0], ast.Constant) and isinstance(args[0].value, str) else None
        if case is not None and not CASE_ID.fullmatch(case):
            continue
        pattern = _pattern(args[1])
        if pattern is not None:
            out.append((node.lineno, case, pattern))
    return out


def known(case: str | None, pattern: str, registry: Registry = REGISTRY) -> bool:
    """True when some registered name (of ``case``, or of any case) is what lookup would find
    for a string matching ``pattern``."""
    entries = [e for e in registry.entries if case is None or e.case == case]
    stripped = pattern[: pattern.rindex(r"\[")] if pattern.endswith(r"\]") and r"\[" in pattern else pattern
    for e in entries:
        if re.fullmatch(pattern, e.name) or re.fullmatch(stripped, e.name):
            return True
    return False


CALLS = [(path, line, case, pattern) for path in SOURCES for line, case, pattern in judged_names(path)]


def test_the_scan_finds_the_scenarios_judging_calls():
    # the scanner itself, on the suite's own scenarios whatever CASES names
    calls = [(path, line) for path in case_sources([ROOT / "scenarios"]) for line, *_ in judged_names(path)]
    assert len(calls) > 150, f"the scan found {len(calls)} judging calls in scenarios/ (expected > 150)"
    assert {p.parent.name for p, _ in calls} >= {"crashloop", "sidecar", "termination", "storage", "memory", "api"}


def unknown_names(calls: list[tuple[Path, int, str | None, str]]) -> list[str]:
    """One message per call of ``calls`` whose name the registry does not know, naming its file and line."""
    return [
        f"{shown(path)}:{line}: {case or '<computed case>'} {pattern!r} is not a measurement the registry knows; "
        f"{case} documents: {', '.join(REGISTRY.names(case)) if case else '...'}"
        for path, line, case, pattern in calls if not known(case, pattern)
    ]


def test_every_judged_name_is_known_to_the_registry():
    unknown = unknown_names(CALLS)
    assert not unknown, "\n".join(unknown)


def test_a_misspelt_name_in_a_folder_outside_the_checkout_is_named(tmp_path):
    """Trial 7: with CASES="../cases-typo" the check died with ValueError (path.relative_to(ROOT))
    instead of naming the misspelt measurement."""
    src = tmp_path / "test_x.py"
    src.write_text('def test(sc):\n    sc.expect("CL-1", "restart_gpa", 1)\n')
    (message,) = unknown_names([(src, line, case, pattern) for line, case, pattern in judged_names(src)])
    assert message.startswith(f"{src}:2: CL-1 'restart_gpa' is not a measurement the registry knows")


def test_a_misspelt_name_is_caught(tmp_path):
    src = tmp_path / "test_x.py"
    src.write_text('def test(sc):\n    sc.expect("CL-1", f"restart_gpa[{i}]", 1)\n    sc.expect("CL-1", f"restart_gap[{i}]", 1)\n')
    (bad_line, bad_case, bad), (_, _, good) = judged_names(src)
    assert bad_line == 2 and bad_case == "CL-1"
    assert not known("CL-1", bad) and known("CL-1", good)


def test_a_misspelt_name_of_a_measured_value_is_caught(tmp_path):
    """e2e.measure's functions name their values in ``Value(case, name, …)``, which the scenario
    hands to ``expect`` later: the names moved there are checked as before."""
    src = tmp_path / "x.py"
    src.write_text('def m():\n    return [Value("JB-8", "restart_count_at_fialure", 2), Value("JB-8", "restart_count_at_failure", 2)]\n')
    (_, case, bad), (_, _, good) = judged_names(src)
    assert case == "JB-8" and not known("JB-8", bad) and known("JB-8", good)


def test_a_three_letter_case_id_is_scanned_too(tmp_path):
    # --case accepts three-letter families (e2e.run.selection.CASE_ID); the scan skipped them
    src = tmp_path / "test_x.py"
    src.write_text('def test(sc):\n    sc.expect("ABC-1", "ready_after_s", 1)\n')
    assert [(case, line) for line, case, _ in judged_names(src)] == [("ABC-1", 2)]
