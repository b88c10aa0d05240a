"""A user's own cases are checked by ``make test`` like the suite's (issue 29): the folders of
``CASES`` (default ``scenarios examples apps``; tests/case_dirs.py) are imported — their own
``register`` calls run — and scanned for judged measurement names and version holes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

import e2e.judge.expectations as expectations
from case_dirs import ROOT, case_dirs, case_sources, claimed_minors, empty, header, import_cases
from e2e.judge.expectations import Expectation, Registry
from test_documented_versions import VERSIONS_ENV, holes, unverified, upgrade_path, upgrade_path_minors
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


WIDGET_37 = '''
    import pytest
    from e2e.judge.expectations import Expectation, register

    pytestmark = pytest.mark.k8s_minors({claim}, reason="grounded in v1.37.2's source only")
    register([Expectation("WG-1", "ready_after_s", 2, "[UP] widget.go (v1.37.2)", unit="s", minors=(37, None))],
             verified_in=("1.37.2",))

    def test_widget(scenario):
        scenario.expect("WG-1", "ready_after_s", 2.1)
    '''


def _import_widget(tmp_path, monkeypatch, claim: str) -> Registry:
    mine = tmp_path / "my-cases"
    mine.mkdir()
    (mine / "test_widget.py").write_text(textwrap.dedent(WIDGET_37.format(claim=claim)))
    registry = Registry()
    monkeypatch.setattr(expectations, "REGISTRY", registry)
    assert import_cases([mine]) == []
    return registry


def test_a_users_case_claims_the_minors_it_was_grounded_in(tmp_path, monkeypatch):
    # issue 41 (7): a case grounded in one minor's source could not pass make test (1.34–1.36 holes),
    # and a module-level k8s_minors, which skips its tests on the other minors, did not count
    registry = _import_widget(tmp_path, monkeypatch, "37")
    (entry,) = registry.entries
    assert claimed_minors(entry, registry) == (37,)
    path = upgrade_path(VERSIONS_ENV.read_text())
    assert holes(upgrade_path_minors(VERSIONS_ENV.read_text()), registry) == []
    assert unverified(path, registry) == []


def test_a_claimed_minor_is_held_to_the_rule(tmp_path, monkeypatch):
    # claiming 1.36 too: its hole, and its release not read, are named as for the catalogue
    registry = _import_widget(tmp_path, monkeypatch, "36, 37")
    assert holes(upgrade_path_minors(VERSIONS_ENV.read_text()), registry) == ["WG-1 ready_after_s: 1.36"]
    e = Expectation("WG-1", "ready_after_s", 2, "[UP] widget.go", unit="s", minors=(36, None), verified_in=("1.37.2",))
    registry = _claiming(monkeypatch, e, (36, 37), tmp_path / "test_widget.py")
    assert holes([34, 35, 36, 37], registry) == []
    assert unverified(["1.34.4", "1.36.3", "1.37.2"], registry) == ["WG-1 ready_after_s (1.36–newer): 1.36.3"]
    # a claimed minor off the upgrade path: some release of it must have been read
    registry = _claiming(monkeypatch, e, (36, 37, 38), tmp_path / "test_widget.py")
    assert unverified(["1.36.3", "1.37.2"], registry) == ["WG-1 ready_after_s (1.36–newer): 1.36.3, 1.38 (a release of it)"]


def _claiming(monkeypatch, entry: Expectation, minors: tuple, file: Path) -> Registry:
    """A registry holding ``entry``, registered by a module at ``file`` whose pytestmark claims ``minors``."""
    module = types.ModuleType("claiming_module")
    module.__file__ = str(file)
    module.pytestmark = [pytest.mark.k8s_minors(*minors)]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    registry = Registry()
    registry.add(entry, module=module.__name__)
    return registry


def test_the_catalogue_documents_every_minor_whatever_it_claims(monkeypatch):
    entry = Expectation("WG-1", "ready_after_s", 2, "[UP] widget.go", unit="s", minors=(37, None), verified_in=("1.37.2",))
    for folder in ("scenarios/widgets", "e2e/documented"):
        registry = _claiming(monkeypatch, entry, (37,), ROOT / folder / "widgets.py")
        assert claimed_minors(entry, registry) is None
        assert holes([34, 35, 36, 37], registry) == ["WG-1 ready_after_s: 1.34, 1.35, 1.36"]


def test_a_claim_without_minors_is_refused(monkeypatch, tmp_path):
    entry = Expectation("WG-1", "ready_after_s", 2, "[UP] widget.go", unit="s", minors=(37, None), verified_in=("1.37.2",))
    registry = _claiming(monkeypatch, entry, ("1.37",), tmp_path / "test_widget.py")
    with pytest.raises(ValueError, match=r"test_widget.py: pytestmark k8s_minors takes the minors the module claims .*'1.37'"):
        claimed_minors(entry, registry)
