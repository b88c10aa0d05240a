"""The profiles that turn on, where a minor ships them off, the feature gates RR-1, RR-2 and ST-3
need (CASES-workloads.md §3.1), as the ``profile`` parameter of a test that also runs on the gates
as shipped (``@pytest.mark.parametrize("profile", ["default", GATES_1_34])``). Each is valid on its
minor only: a component refuses a gate its version does not know (e2e.run.minors)."""

from __future__ import annotations

import pytest

GATES_1_34 = pytest.param("gates-1.34", id="gates-1.34", marks=[
    pytest.mark.profile("gates-1.34"),
    pytest.mark.k8s_minors(34, reason="profile gates-1.34 turns on 1.34's alpha ContainerRestartRules and "
                           "MaxUnavailableStatefulSet: the catalogue's gate-on run of 1.34"),
])
GATES_1_35 = pytest.param("gates-1.35", id="gates-1.35", marks=[
    pytest.mark.profile("gates-1.35"),
    pytest.mark.k8s_minors(35, reason="profile gates-1.35 turns on 1.35's alpha RestartAllContainersOnContainerExits "
                           "and NodeDeclaredFeatures: unknown to 1.34, on as shipped from 1.36"),
])
