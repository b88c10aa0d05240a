"""The folders of cases ``make test`` checks (measurement names, version holes): the suite's own
``scenarios/``, ``examples/`` and ``apps/`` by default; ``make test CASES="scenarios examples ../my-cases"``
(the environment variable ``E2E_CASES``, space-separated, relative to the repository) checks a
user's own folders too.

Their documented values are registered when their modules are imported (``register([...])`` at
module level, as ``examples/job_deadline`` does), so :func:`import_cases` imports every module of
those folders the way pytest's default import mode does: a module inside packages (folders with
``__init__.py``) by its dotted name from the first folder above them, any other by its path with
its own folder on ``sys.path`` (for the import only).

The catalogue (``scenarios/``, ``e2e/``) documents every minor of the upgrade path. A case of
one's own may claim fewer, the ones whose source was read: the module that registers its
values says so at module level, ``pytestmark = pytest.mark.k8s_minors(37, reason="…")``
(:func:`claimed_minors`); its tests then also run on those minors only (e2e.run.minors)."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path

import pytest

from e2e.judge.expectations import Expectation, Registry
from e2e.run.minors import MARKER

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CASES = "scenarios examples apps"
# held to every minor of the upgrade path, whatever their modules' k8s_minors say
CATALOGUE = (ROOT / "scenarios", ROOT / "e2e")


def case_dirs() -> list[Path]:
    """The folders of ``$E2E_CASES`` (default ``scenarios examples apps``), relative to the repository."""
    return [(ROOT / d).resolve() for d in (os.environ.get("E2E_CASES") or DEFAULT_CASES).split()]


def empty(dirs: list[Path]) -> list[Path]:
    """The folders of ``dirs`` that are missing or hold no ``*.py``: a misspelt ``CASES`` folder
    would otherwise be checked as nothing."""
    return [d for d in dirs if not d.is_dir() or not any(d.rglob("*.py"))]


def shown(path: Path) -> str:
    """``path`` as a message shows it: relative to the checkout, or as given when it lies outside
    (a case folder of one's own, ``CASES="../my-cases"``)."""
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def header() -> str:
    """The last line ``make test`` prints: which case folders it checked."""
    dirs = case_dirs()
    return (f"case folders checked (make test CASES=..., or E2E_CASES for pytest tests): {' '.join(map(shown, dirs))} "
            f"({len([p for p in case_sources(dirs) if p.name != '__init__.py'])} modules)")


def case_sources(dirs: list[Path]) -> list[Path]:
    """Every ``*.py`` file of ``dirs``, sorted."""
    return sorted(p for d in dirs for p in d.rglob("*.py"))


_IMPORTED: dict[Path, str | None] = {}


def import_case(path: Path) -> str | None:
    """Import the module at ``path`` once (see the module doc); returns None, or the error it
    raised as ``"<file>: <error>"``."""
    path = path.resolve()
    if path not in _IMPORTED:
        _IMPORTED[path] = _import(path)
    return _IMPORTED[path]


def import_cases(dirs: list[Path]) -> list[str]:
    """Import every module of ``dirs`` (:func:`import_case`); returns the errors."""
    return [e for e in (import_case(p) for p in case_sources(dirs) if p.name != "__init__.py") if e]


def _import(path: Path) -> str | None:
    parts, base = [path.stem], path.parent
    while (base / "__init__.py").is_file():
        parts.insert(0, base.name)
        base = base.parent
    saved = list(sys.path)  # restored after: a checkout on sys.path shows its *.egg-info to importlib.metadata,
    sys.path.insert(0, str(base))  # and pytester's sessions would then mark e2e for assertion rewriting
    try:
        if len(parts) > 1:
            importlib.import_module(".".join(parts))
        else:  # rootless: by path, under a name of its own (conftest.py and test_*.py names repeat)
            name = f"_e2e_case_{abs(hash(path))}_{path.stem}"
            spec = importlib.util.spec_from_file_location(name, path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
    except Exception as e:  # noqa: BLE001  (any error of a user's module is reported, by file)
        return f"{shown(path)}: {type(e).__name__}: {e}"
    finally:
        sys.path[:] = saved
    return None


def claimed_minors(entry: Expectation, registry: Registry) -> tuple[int, ...] | None:
    """The minors the module that registered ``entry`` claims (the module doc), ascending; None
    when it claims none, or lies in the :data:`CATALOGUE`: then every minor of the upgrade path.
    ``ValueError`` for a claim that names no minor or one that is not a number (pytest refuses
    the marker so at collection too, e2e.run.minors)."""
    module = sys.modules.get(registry.module_of(entry) or "")
    file = getattr(module, "__file__", None)
    if module is None or file is None or any(Path(file).resolve().is_relative_to(c) for c in CATALOGUE):
        return None
    marks = getattr(module, "pytestmark", [])
    for mark in marks if isinstance(marks, list) else [marks]:
        mark = mark.mark if isinstance(mark, pytest.MarkDecorator) else mark
        if isinstance(mark, pytest.Mark) and mark.name == MARKER:
            if not mark.args or not all(isinstance(m, int) and not isinstance(m, bool) for m in mark.args):
                raise ValueError(f"{shown(Path(file))}: pytestmark {MARKER} takes the minors the module claims "
                                 f"(37, or 36, 37), got {mark.args!r}")
            return tuple(sorted(mark.args))
    return None
