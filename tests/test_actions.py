"""e2e.faults.actions: every node action declared once, and each scenario's node_faults markers true
to what its tests reach (the drift check), on scenarios/ and on modules made to drift."""

from __future__ import annotations

import ast
import importlib
import sys
import textwrap
from pathlib import Path

import pytest
from case_dirs import case_dirs, case_sources, import_case, shown

from e2e.faults import actions
from e2e.faults.actions import ACTIONS, declared_marks, drift, reached, window_of

ROOT = Path(__file__).resolve().parents[1]


def scenario(path: str):
    """The module of scenarios/<path> (imported as a run imports it: tests/case_dirs.py)."""
    assert import_case(ROOT / "scenarios" / path) is None
    return sys.modules["scenarios." + path[:-3].replace("/", ".")]


def case_module(path: Path):
    """The module of a case folder's test file ``path``, imported as a run imports it (tests/case_dirs.py)."""
    assert import_case(path) is None
    return next(m for m in list(sys.modules.values()) if getattr(m, "__file__", None) and Path(m.__file__).resolve() == path)


@pytest.mark.parametrize("path", [p for p in case_sources(case_dirs()) if p.name.startswith("test_")], ids=shown)
def test_each_case_declares_exactly_the_node_actions_it_reaches(path):
    """Every test module of the case folders (scenarios examples apps; make test CASES=… a folder of one's own)."""
    assert drift(case_module(path)) == []


def test_the_scenarios_reach_the_node_faults():
    """The drift check sees through helpers, tables of faults and imports inside a test: the faults
    scenarios/ is known to call are found (a check that found nothing would pass vacuously)."""
    test_drain, test_job = scenario("disruption/test_drain.py"), scenario("disruption/test_job.py")
    test_kubelet, test_restart = scenario("faults/test_kubelet.py"), scenario("restart/test_restart.py")
    assert reached(test_kubelet.test_kubelet_stopped) == {"kubelet_stopped"}  # through _kubelet_stopped → _stop_the_kubelet
    assert reached(test_kubelet.test_kubelet_restart) == {"kubelet_restarted", "kubelet_killed"}  # FAULTS = {…}
    assert reached(test_restart.test_crash_beside_a_probed_sidecar_after_a_kubelet_restart) == {"kubelet_restarted"}
    assert reached(test_job.test_pod_failure_policy) == {"node_tainted"}  # through disrupt()
    assert reached(test_drain.test_drain_against_pdb) == {"cordon"}  # cordon.mark


def _fault_functions(path: Path) -> set[str]:
    """Public top-level functions of a module of e2e/faults that run the fault protocol (call ``fault``
    or ``_unit_fault``)."""
    tree = ast.parse(path.read_text())
    return {f.name for f in tree.body if isinstance(f, ast.FunctionDef) and not f.name.startswith("_")
            and any(isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id in ("fault", "_unit_fault")
                    for c in ast.walk(f))}


def test_every_fault_of_e2e_faults_is_an_action():
    entries = {a.entry for a in ACTIONS.values()}
    for module in ("components", "node", "registry", "taints"):
        faults = _fault_functions(ROOT / "e2e" / "faults" / f"{module}.py")
        assert faults, module
        assert {f"e2e.faults.{module}:{f}" for f in faults} <= entries, module
    for name, a in ACTIONS.items():
        assert callable(a.function()), name


def _package(tmp_path: Path, monkeypatch, name: str, files: dict[str, str]):
    pkg = tmp_path / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for file, text in files.items():
        (pkg / file).write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    return {file: importlib.import_module(f"{name}.{file[:-3]}") for file in files if file.startswith("test_")}


def test_drift_names_a_fault_a_test_reaches_without_declaring_it(tmp_path, monkeypatch):
    mods = _package(tmp_path, monkeypatch, "driftpkg", {
        "helpers.py": """
            from e2e.faults import kubelet_stopped

            def stop(sc, node):
                with kubelet_stopped(sc, node):
                    pass
            """,
        "test_drifting.py": """
            import pytest
            from e2e.cluster import cordon
            from .helpers import stop

            TABLE = {"a": None}

            def test_through_a_helper(sc):
                stop(sc, "w1")

            @pytest.mark.node_faults("kubelet_stopped", case="NF-2", window_s=120)
            def test_declared(sc):
                stop(sc, "w1")

            @pytest.mark.node_faults("node_paused", case="NF-4")
            def test_declares_what_it_never_does(sc):
                pass

            def test_cordon_by_attribute(sc):
                cordon.mark(sc.kube, "w1", "run")

            def test_imports_inside(sc):
                from e2e.faults.node import node_partitioned
                node_partitioned(sc, "w1", "drop")

            @pytest.mark.parametrize("how", [pytest.param("a", marks=pytest.mark.node_faults("kubelet_stopped", case="NF-2"))])
            def test_declared_on_a_param(sc, how):
                stop(sc, "w1")
            """,
    })
    assert drift(mods["test_drifting.py"]) == [
        "driftpkg.test_drifting::test_through_a_helper reaches kubelet_stopped but does not declare it: "
        "@pytest.mark.node_faults('kubelet_stopped', case=…, window_s=…)",
        "driftpkg.test_drifting::test_declares_what_it_never_does declares node_paused but never reaches it",
        "driftpkg.test_drifting::test_cordon_by_attribute reaches cordon but does not declare it: "
        "@pytest.mark.node_faults('cordon', case=…, window_s=…)",
        "driftpkg.test_drifting::test_imports_inside reaches node_partitioned but does not declare it: "
        "@pytest.mark.node_faults('node_partitioned', case=…, window_s=…)",
    ]


def test_a_module_mark_declares_for_every_test_of_it(tmp_path, monkeypatch):
    mods = _package(tmp_path, monkeypatch, "modmark", {"test_m.py": """
        import pytest
        from e2e.faults import node_tainted

        pytestmark = pytest.mark.node_faults("node_tainted", case="NF-3")

        def test_taints(sc):
            with node_tainted(sc, "w1"):
                pass
        """})
    assert drift(mods["test_m.py"]) == []


def test_a_declaration_must_name_one_known_action():
    with pytest.raises(ValueError, match=r"one action of kubelet_stopped, "):
        declared_marks([pytest.mark.node_faults("kubelet_stoped").mark])
    with pytest.raises(ValueError):
        declared_marks([pytest.mark.node_faults("kubelet_stopped", "node_paused").mark])
    assert declared_marks([pytest.mark.node_faults("cordon", case="DR-2", window_s=30).mark,
                           pytest.mark.serial.mark]) == [("cordon", "DR-2", 30, None)]
    with pytest.raises(ValueError, match=r"node is one of first, last, control-plane, kind"):
        declared_marks([pytest.mark.node_faults("node_paused", node="worker").mark])


def test_window_of_a_profile():
    assert window_of({"fast-lifecycle": 120, "default-lifecycle": 420}, "fast-lifecycle") == 120
    assert window_of(60, "default") == 60
    assert window_of(None, "default") is None


def test_the_registry_faults_enter_the_registry_pods_node_through_the_agent():
    # on a --kubeconfig cluster the registry is a pod on the first placed node (scenarios/images/conftest.py)
    assert all(ACTIONS[n].enters for n in ("registry_stopped", "registry_paused", "registry_throttled"))
    assert actions.MARKER == "node_faults"


def test_only_the_api_server_outage_and_the_test_taint_reach_beyond_their_node():
    """In the rooms cluster (e2e.cluster.rooms) these hold every room: the API server is every test's,
    and the test taint rolls out CoreDNS and local-path-provisioner (e2e.faults.taints.ADDONS)."""
    assert sorted(a for a, action in ACTIONS.items() if action.cluster_wide) == ["apiserver_down", "node_tainted"]
    marks = [pytest.mark.node_faults("cordon", case="DR-2").mark, pytest.mark.node_faults("node_tainted", case="DR-5").mark,
             pytest.mark.serial.mark]
    assert [line.split(":")[0] for line in actions.cluster_wide(marks)] == ["node_tainted"]
    assert actions.cluster_wide(marks[:1]) == []
    with pytest.raises(ValueError, match="one action of"):
        actions.cluster_wide([pytest.mark.node_faults("cordoned").mark])
