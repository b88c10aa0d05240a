"""``make help`` (issue 41, item 7): every ``.PHONY`` target of the Makefile with what it does, read
from the ``## `` after its rule — README's list is no longer the only index of targets."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _make(*args: str, makefile: Path | None = None) -> subprocess.CompletedProcess:
    # a make of its own: not the one running this test (make test passes its flags on in MAKEFLAGS)
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    cmd = ["make", "--no-print-directory", *(["-f", str(makefile)] if makefile else []), *args]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env, timeout=60)


def phony(text: str) -> list[str]:
    """The targets of the ``.PHONY:`` lines of a Makefile text."""
    return [t for line in re.findall(r"^\.PHONY:(.*)$", text, re.M) for t in line.split()]


def listed(help_text: str) -> dict[str, str]:
    """``{target: what it does}`` of ``make help``'s lines ``make <target>  <what it does>``."""
    return {m.group(1): m.group(2) for m in re.finditer(r"^make (\S+) +(\S.*)$", help_text, re.M)}


def test_make_help_lists_every_phony_target_with_what_it_does():
    targets = phony((ROOT / "Makefile").read_text())
    assert len(targets) > 15 and "help" in targets
    r = _make("help")
    assert r.returncode == 0, r.stderr
    shown = listed(r.stdout)
    assert sorted(shown) == sorted(targets), f"not in make help: {set(targets) - set(shown)}; not phony: {set(shown) - set(targets)}"
    assert all(len(what) > 10 and "$(" not in what for what in shown.values()), shown
    assert _make().stdout == r.stdout  # plain make says the same, and does nothing else


def test_a_target_without_its_line_is_caught(tmp_path):
    # the check above fails on a target a Makefile adds without "## ": make help leaves it out
    makefile = tmp_path / "Makefile"
    makefile.write_text((ROOT / "Makefile").read_text().replace(".PHONY: help", ".PHONY: help new-target", 1)
                        + "\nnew-target:\n\ttrue\n")
    shown = listed(_make("help", makefile=makefile).stdout)
    assert "new-target" in phony(makefile.read_text()) and "new-target" not in shown and "e2e" in shown


def test_readme_names_make_help():
    assert "\nmake help    # every target" in (ROOT / "README.md").read_text()
