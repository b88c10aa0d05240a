"""A user's own cases are checked by ``make test`` like the suite's (issue 29): the folders of
``CASES`` (default ``scenarios examples apps``; tests/case_dirs.py) are imported — their own
``register`` calls run — and scanned for judged measurement names and version holes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import e2e.judge.expectations as expectations
from case_dirs import ROOT, case_dirs, case_sources, empty, header, import_cases
from e2e.judge.expectations import Registry
from test_documented_versions import holes, unverified
from test_measurement_names import judged_names, known


def test_every_module_of_the_case_folders_imports():
    # issue 29: examples/job_deadline, the guide's worked example, called register() without the
    # verified_in it requires (TypeError at import), and no test imported it
    errors = import_cases(case_dirs())
    assert not errors, "modules of the case folders that do not import:\n  " + "\n  ".join(errors)


def test_every_case_folder_holds_modules():
    # a new user's trial (issue 29): make test CASES="scenarios ../my-case" (misspelt) checked
    # nothing of it and said nothing; the folders are named in make test's last line now
    missing = empty(case_dirs())
    assert not missing, "case folders (CASES / E2E_CASES) missing or without a *.py: " + " ".join(map(str, missing))


def test_the_header_names_the_folders_and_counts_their_modules(tmp_path, monkeypatch):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "test_a.py").write_text("")
    (tmp_path / "mine" / "__init__.py").write_text("")
    monkeypatch.setenv("E2E_CASES", f"examples {tmp_path / 'mine'}")
    line = header()
    assert line.startswith("case folders checked (make test CASES=..., or E2E_CASES for pytest tests): ")
    assert f"examples {tmp_path / 'mine'} (" in line
    assert line.endswith(f"({len([p for p in case_sources(case_dirs()) if p.name != '__init__.py'])} modules)")
    assert empty([tmp_path / "mine", tmp_path / "nope"]) == [tmp_path / "nope"]


def test_make_test_passes_the_case_folders():
    # a make of its own: not the one running this test (make test CASES=... passes CASES on in MAKEFLAGS)
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "CASES", "E2E_CASES")}
    plan = subprocess.run(["make", "-n", "test", "CASES=scenarios ../my-cases"], cwd=ROOT, capture_output=True,
                          text=True, check=True, env=env).stdout
    assert 'E2E_CASES="scenarios ../my-cases"' in plan
    default = subprocess.run(["make", "-n", "test"], cwd=ROOT, capture_output=True, text=True, check=True, env=env).stdout
    assert 'E2E_CASES="scenarios examples apps"' in default


def test_a_users_folder_is_checked_like_the_suites(tmp_path, monkeypatch):
    mine = tmp_path / "my-cases" / "widgets"
    mine.mkdir(parents=True)
    (mine / "test_widget.py").write_text(textwrap.dedent('''
        from e2e.judge.expectations import Expectation, register

        register([Expectation("WG-1", "ready_after_s", 2, "[UP] widget.go (v1.37.2)", unit="s", minors=(37, None))],
                 verified_in=("1.37.2",))

        def test_widget(scenario):
            scenario.expect("WG-1", "ready_after", 2.1)
        '''))
    registry = Registry()
    monkeypatch.setattr(expectations, "REGISTRY", registry)  # register() adds to the module's registry
    assert import_cases([tmp_path / "my-cases"]) == []
    assert [e.case for e in registry.entries] == ["WG-1"]
    ((line, case, pattern),) = [c for p in case_sources([tmp_path / "my-cases"]) for c in judged_names(p)]
    assert (line, case) == (8, "WG-1") and not known(case, pattern, registry)  # the misspelt name is caught
    assert holes([34, 37], registry) == ["WG-1 ready_after_s: 1.34"]  # and the version hole
    assert unverified(["1.37.2"], registry) == []


def test_make_tests_quiet_run_names_the_case_folders():
    # a new user's fourth trial: the line was under pytest's header, which make test's -q hides
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "CASES")}
    env["E2E_CASES"] = "examples"
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "tests/test_user_cases.py", "-k", "header"],
                       cwd=ROOT, capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stdout
    assert "case folders checked (make test CASES=..., or E2E_CASES for pytest tests): examples (" in r.stdout
