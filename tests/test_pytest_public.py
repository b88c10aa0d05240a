"""pytest as pytest intends (issue 25, 5): the plugin and the framework use pytest's public API
only — no ``_pytest`` import, new-style ``wrapper=True`` hooks, no private attribute of pytest's
objects — and a bare ``pytest`` at the root runs the framework's tests (``testpaths``), while the
scenarios are packages that collect next to them without a clash."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[1]
MODULES = sorted((ROOT / "e2e").rglob("*.py"))
# names that hold pytest's objects in e2e/ (config, items, reports, the terminal reporter, ...)
PYTEST_OBJECTS = {"config", "early_config", "item", "items", "session", "request", "node", "rep", "report",
                  "reports", "terminalreporter", "tr", "pluginmanager", "excinfo", "call", "outcome",
                  "parser", "metafunc", "pytestconfig", "pytester"}


def _where(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(ROOT)}:{node.lineno}"


def offences(path: Path) -> list[str]:
    """Private pytest in one module: ``_pytest`` imports, ``hookwrapper=True``, ``x._name`` on a
    name that holds a pytest object, private keywords of a ``pytest.…`` call (``_use_item_location``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [f"{_where(path, node)} import {a.name}" for a in node.names if a.name.split(".")[0] == "_pytest"]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "_pytest" and not node.level:
            found.append(f"{_where(path, node)} from {node.module} import")
        elif isinstance(node, ast.keyword) and node.arg == "hookwrapper":
            found.append(f"{_where(path, node.value)} hookwrapper= (use wrapper=True)")
        elif isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[0] == "pytest":
            found += [f"{_where(path, k.value)} private keyword {k.arg}=" for k in node.keywords
                      if (k.arg or "").startswith("_")]
        elif (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
              and isinstance(node.value, (ast.Name, ast.Attribute))
              and (node.value.id if isinstance(node.value, ast.Name) else node.value.attr) in PYTEST_OBJECTS):
            found.append(f"{_where(path, node)} private attribute .{node.attr}")
    return found


def test_the_framework_uses_public_pytest_only():
    assert MODULES
    assert [o for path in MODULES for o in offences(path)] == []


@pytest.mark.parametrize("source, offence", [
    ("import _pytest.mark\n", "import _pytest.mark"),
    ("from _pytest.mark.expression import Expression\n", "from _pytest.mark.expression import"),
    ("import pytest\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_call(item):\n    yield\n",
     "hookwrapper= (use wrapper=True)"),
    ("def f(tr):\n    return tr._tw.fullwidth\n", "private attribute ._tw"),
    ("import pytest\nraise pytest.skip.Exception('x', _use_item_location=True)\n", "private keyword _use_item_location="),
])
def test_the_check_finds_each_kind_of_offence(tmp_path, monkeypatch, source, offence):
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    path = tmp_path / "m.py"
    path.write_text(source)
    assert [o.split(" ", 1)[1] for o in offences(path)] == [offence]


def test_testpaths_is_tests():
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert options["testpaths"] == ["tests"]


def _collect(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("E2E_", "PYTEST_"))}
    return subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist", *args],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_a_bare_pytest_at_the_root_collects_the_framework_tests_only():
    done = _collect()
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    ids = [line for line in done.stdout.splitlines() if "::" in line]
    assert ids and all(i.startswith("tests/") for i in ids), [i for i in ids if not i.startswith("tests/")][:5]
    assert any(i.startswith(f"tests/{Path(__file__).name}::") for i in ids)


def test_scenarios_collect_next_to_the_tests_without_a_clash():
    """Test module basenames repeat between tests/ and scenarios/ (test_known_bugs.py,
    test_progress.py): the scenario folders are packages, so both collect in one session."""
    done = _collect("tests", "scenarios")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    ids = [line for line in done.stdout.splitlines() if "::" in line]
    assert any(i.startswith("scenarios/known_bugs/test_known_bugs.py::") for i in ids)
    assert any(i.startswith("tests/test_known_bugs.py::") for i in ids)
    assert any(i.startswith("scenarios/faults/test_kubelet.py::") for i in ids)  # its helpers import as a package
