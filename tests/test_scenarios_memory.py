"""scenarios/memory/test_memory.py: OM-2 reads ``singleProcessOOMKill`` in the node its pod runs on
(``Scenario.node_of``), not the default node: on a ``--kubeconfig`` cluster the pod may be
placed on another node than the first the agent enters, whose kubelet may be configured otherwise."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest

from e2e.run.scenario import PreconditionFailed, Scenario

from case_dirs import ROOT, import_case

assert import_case(ROOT / "scenarios" / "memory" / "test_memory.py") is None
_single_process_oom_kill = sys.modules["scenarios.memory.test_memory"]._single_process_oom_kill


def _scenario(tmp_path, configs: dict[str, str], placed: dict[str, str]) -> Scenario:
    sc = Scenario(None, "ns", None, None, tmp_path, 37, 2, None, nodes=("w1", "w2"))
    sc.recorder = SimpleNamespace(latest=lambda kind, name: {"spec": {"nodeName": placed[name]}} if name in placed else None)
    sc.access = object()  # node access present; node_exec's transport replaced below
    read: list[str] = []

    def node_exec(*cmd: str, timeout: float = 30, node: str | None = None) -> str:
        read.append(node or sc.default_node())
        return configs[node or sc.default_node()]

    sc.node_exec = node_exec  # type: ignore[method-assign]
    sc.read = read  # type: ignore[attr-defined]
    return sc


def test_the_setting_is_read_in_the_pods_own_node(tmp_path):
    configs = {"w1": "singleProcessOOMKill: false\n", "w2": "singleProcessOOMKill: true\n"}
    sc = _scenario(tmp_path, configs, {"oom-child": "w2"})
    assert _single_process_oom_kill(sc, "oom-child") is True
    assert sc.read == ["w2"]  # type: ignore[attr-defined]
    on_default = _scenario(tmp_path, configs, {"oom-child": "w1"})
    assert _single_process_oom_kill(on_default, "oom-child") is False


def test_an_unscheduled_pod_is_a_failed_precondition(tmp_path):
    sc = _scenario(tmp_path, {"w1": "{}"}, {})
    with pytest.raises(PreconditionFailed, match="oom-child scheduled"):
        _single_process_oom_kill(sc, "oom-child")
    assert sc.read == []  # type: ignore[attr-defined]
