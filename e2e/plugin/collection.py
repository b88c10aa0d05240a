"""Which tests run, and in which order: case-ID labels and selection (``--case``, ``-k``), a
clear usage error when selected scenarios have no cluster, each profile's tests together."""

from __future__ import annotations

from collections import Counter

import pytest

from ..cluster.kind import DEFAULT_PROFILE, PreflightError, profile_patches
from ..run.selection import keyword_selection, label, select_cases
from .clusters import _TESTS_LEFT, _profiles_dir, profile_name


@pytest.hookimpl(wrapper=True, tryfirst=True)  # around pytest's own -k and -m (see e2e.run.selection)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]):
    label(items)
    select_cases(config, items)
    with keyword_selection(config, items):
        result = yield
    _check_and_order(config, items)  # what -k, -m and the others left: nothing selected needs no cluster
    return result


def _check_and_order(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.option.collectonly:
        return
    if any("cluster" in getattr(item, "fixturenames", ()) for item in items):
        if not (config.getoption("--node-image") or config.getoption("--kubeconfig")):
            raise pytest.UsageError(
                "scenarios need a cluster: give --node-image (or E2E_NODE_IMAGE) for a kind cluster, "
                "or --kubeconfig for an existing one (`make e2e` sets these up)"
            )
        if config.getoption("--context") and not config.getoption("--kubeconfig"):
            raise pytest.UsageError("--context goes with --kubeconfig")
    for name in sorted({profile_name(item) for item in items}):
        try:
            profile_patches(_profiles_dir(config), name)
        except PreflightError as e:
            raise pytest.UsageError(str(e)) from None
    # each profile's tests together, the default's first (stable): one extra cluster at a time
    items.sort(key=lambda item: (profile_name(item) != DEFAULT_PROFILE, profile_name(item)))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Count each profile's tests as finally selected (after -k, -m and every deselection)."""
    session.config.stash[_TESTS_LEFT] = Counter(
        profile_name(i) for i in session.items if "cluster" in getattr(i, "fixturenames", ()))
