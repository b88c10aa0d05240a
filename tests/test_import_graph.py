"""The import graph of e2e/ has no circle (issue 25: e2e/scenario.py → e2e/evidence/stamps.py →
e2e/pods.py → e2e/scenario.py was one), and its packages are layers (issue 43): a package imports
only packages to its left in :data:`LAYERS`. Every import statement counts — also one under
``if TYPE_CHECKING:`` or inside a function: a circle that only the type checker or a late call
walks is still two layers that lean on each other. Read with ``ast`` (no module is imported)."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# the packages of e2e/ from the bottom up (issue 43): each imports only packages to its left
LAYERS = ["base", "cluster", "record", "judge", "documented", "run", "evidence", "measure", "faults", "app",
          "pictures", "report", "cli", "plugin"]


def modules(root: Path, package: str) -> dict[str, Path]:
    """``{dotted name: file}`` of every module of the package at ``root / package``."""
    out = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """``{module: the modules of the package it imports}``; ``from pkg import name`` counts as an
    import of ``pkg.name`` when that is a module, else of ``pkg``."""
    mods = modules(root, package)
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here[: len(here) - node.level + 1]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in mods else module for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            for target in targets:
                while target and target not in mods:  # an attribute or a module outside the package
                    target = target.rpartition(".")[0]
                if target and target != name:
                    deps.add(target)
        graph[name] = deps
    return graph


def upward_imports(graph: dict[str, set[str]], package: str, layers: list[str]) -> list[str]:
    """Every import between two subpackages of ``package`` that ``layers`` (bottom first) does not
    allow, as ``"importer → imported (why)"``: of a package to the importer's right, or from or of
    a module in no layer (a subpackage not in ``layers``, a module beside them, ``package`` itself)."""
    rank = {f"{package}.{name}": i for i, name in enumerate(layers)}
    found = []
    for module in sorted(graph):
        for dep in sorted(graph[module]):
            here, there = (".".join(m.split(".")[:2]) for m in (module, dep))
            if here == there:
                continue
            if here not in rank or there not in rank:
                found.append(f"{module} → {dep} ({' and '.join(p for p in (here, there) if p not in rank)} in no layer)")
            elif rank[there] > rank[here]:
                found.append(f"{module} → {dep} ({here} is below {there})")
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle per strongly connected group of modules (Tarjan), each as ``[a, b, ..., a]``."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(group)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_circle(graph, group) for group in groups]


def _circle(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    """A shortest circle through the first module of ``group`` (breadth-first inside the group)."""
    start = min(group)
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph[v] & group):
            if w == start:
                return paths[v] + [start]
            if w not in paths:
                paths[w] = paths[v] + [w]
                queue.append(w)
    raise AssertionError(f"no circle in {sorted(group)}")


def test_e2e_imports_no_module_that_imports_it_back():
    graph = import_graph(ROOT, "e2e")
    assert len(graph) > 50 and graph["e2e.run.scenario"]  # the scan sees the package
    found = cycles(graph)
    assert not found, "import circles in e2e/: " + "; ".join(" → ".join(c) for c in found)


def test_a_typing_only_circle_is_found_and_named(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "b.py").write_text("from .c import X\n")
    (pkg / "sub" / "c.py").write_text(
        "from typing import TYPE_CHECKING\nX = 1\nif TYPE_CHECKING:\n    from ..a import Y\n")
    (pkg / "d.py").write_text("import pkg.a\nfrom pkg import sub\n")  # into the circle, not part of it
    assert cycles(import_graph(tmp_path, "pkg")) == [["pkg.a", "pkg.sub.b", "pkg.sub.c", "pkg.a"]]


def test_every_package_of_e2e_has_a_layer():
    packages = sorted(p.parent.name for p in (ROOT / "e2e").glob("*/__init__.py"))
    assert sorted(LAYERS) == packages, f"packages of e2e/ not in LAYERS {sorted(set(packages) - set(LAYERS))}, " \
                                       f"LAYERS that are no package {sorted(set(LAYERS) - set(packages))}"
    beside = sorted(p.name for p in (ROOT / "e2e").glob("*.py") if p.name != "__init__.py")
    assert not beside, f"modules of e2e/ in no layer: {beside}"


def test_the_layer_table_of_the_guide_is_this_order():
    # the table a reader goes by (docs/architecture.md, "Layers") says what LAYERS enforces:
    # the same packages, in the same order, numbered from 1
    page = (ROOT / "docs" / "architecture.md").read_text()
    table = page[page.index("\n## Layers\n"):]
    table = table[:table.index("\n## ", 1)]
    rows = re.findall(r"^\| (\d+) \| `e2e/([a-z]+)/` \|", table, re.M)
    assert [name for _, name in rows] == LAYERS, "docs/architecture.md's layer table and LAYERS differ"
    assert [int(n) for n, _ in rows] == list(range(1, len(LAYERS) + 1))


def test_e2e_packages_import_only_packages_to_their_left():
    found = upward_imports(import_graph(ROOT, "e2e"), "e2e", LAYERS)
    assert not found, f"{len(found)} imports against the layers {' < '.join(LAYERS)}:\n" + "\n".join(found)


def test_an_import_upwards_or_of_no_layer_is_named(tmp_path):
    pkg = tmp_path / "pkg"
    for sub in ("low", "high", "stray"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "low" / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..high import b\n")
    (pkg / "low" / "c.py").write_text("from . import a\n")  # inside one package: allowed
    (pkg / "high" / "b.py").write_text("def f():\n    from pkg.low import c\n    from ..stray import d\n")
    (pkg / "stray" / "d.py").write_text("")
    assert upward_imports(import_graph(tmp_path, "pkg"), "pkg", ["low", "high"]) == [
        "pkg.high.b → pkg.stray.d (pkg.stray in no layer)",
        "pkg.low.a → pkg.high.b (pkg.low is below pkg.high)",
    ]


def test_what_compare_loads_of_e2e_imports_the_standard_library_only():
    # `make compare` runs e2e.cli.compare with the system Python (no venv): so does every module of
    # e2e/ it imports, and the packages those are in
    graph = import_graph(ROOT, "e2e")
    files = modules(ROOT, "e2e")
    loaded, todo = set(), ["e2e.cli.compare"]
    while todo:
        module = todo.pop()
        if module not in loaded:
            loaded.add(module)
            parts = module.split(".")
            todo += [".".join(parts[:i]) for i in range(1, len(parts))] + sorted(graph[module])
    assert "e2e.base.junit" in loaded  # the walk follows compare's imports
    outside = {}
    for module in sorted(loaded):
        for node in ast.walk(ast.parse(files[module].read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in ("e2e", "__future__"):
                    outside.setdefault(module, set()).add(name)
    assert not outside, f"modules compare loads import outside the standard library: {outside}"
