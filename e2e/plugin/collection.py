"""Which tests run, and in which order: case markers checked against the case-ID rule, case-ID
labels and selection (``--case``, ``-k``), tests for other Kubernetes minors skipped before any
cluster is made (``k8s_minors``, e2e.run.minors), a clear usage error when selected scenarios have
no cluster, each profile's tests together."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from ..cluster.kind import PreflightError, profile_patches
from ..faults.actions import MARKER as NODE_FAULTS
from ..faults.actions import cluster_wide
from ..run.minors import image_version, off_minor
from ..run.plan import DURATIONS_FILE, UNKNOWN_S, Cost, load_durations, make_plan
from ..run.selection import check_declared, keyword_selection, label, select_cases
from ..run.shards import SHARD_FILE, ShardRecord, commit_of, expected_s, parse_shard, split, split_inputs, write_record
from .clusters import (_FIRST_PHASE, _TESTS_LEFT, PLAN, _profiles_dir, create_ahead, profile_name, profile_needs_of,
                       profile_settings, room_profiles)
from .options import STAGED, _reports

# --shard's line for the terminal (pytest_report_collectionfinish)
_SHARD_LINE = pytest.StashKey[str]()

# Each test's duration in a sequential run (v1.37.2, 2 cores; some on a loaded host: the file's
# git log says which): what the plan assumes before this machine's own runs are known (the run's
# durations file, same shape, overrides it).
SEED_DURATIONS = Path(__file__).resolve().parents[2] / "scenarios" / "durations.json"


# the key of an xdist worker's usage error in its workeroutput (read by the controller)
WORKER_USAGE_ERROR = "pod_lifecycle_e2e_usage_error"


@pytest.hookimpl(wrapper=True, tryfirst=True)  # around pytest's own -k and -m (see e2e.run.selection)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]):
    refused = None
    try:
        check_declared(items)
        label(items)
        select_cases(config, items)
    except pytest.UsageError as e:
        refused = _refuse_in_worker(config, items, e)
    with keyword_selection(config, items):
        result = yield
    if refused is None:
        try:
            _skip_other_minors(config, items)
            _check_and_order(config, items)  # what -k, -m and the others left: nothing selected needs no cluster
        except pytest.UsageError as e:
            _refuse_in_worker(config, items, e)
    return result


def _refuse_in_worker(config: pytest.Config, items: list[pytest.Item], error: pytest.UsageError) -> str:
    """Re-raise ``error`` in the controller (pytest prints it, exit 4). In an xdist worker, where
    a raise ends the whole run in an INTERNALERROR (xdist's dsession: "assert not crashitem"), hand
    its text to the controller (:func:`pytest_testnodedown`) and collect nothing instead."""
    if not hasattr(config, "workerinput"):
        raise error
    config.workeroutput[WORKER_USAGE_ERROR] = str(error)  # type: ignore[attr-defined]  # set by xdist on a worker
    if items:
        config.hook.pytest_deselected(items=list(items))
        items.clear()
    return str(error)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    """The controller's end of :func:`_refuse_in_worker`: a worker's usage error ends the run as
    one in the controller would (``ERROR: …`` on stderr, exit status 4, the reports' end as after
    any usage error)."""
    said = (getattr(node, "workeroutput", None) or {}).get(WORKER_USAGE_ERROR)
    if said:
        pytest.exit(f"ERROR: {said}", returncode=pytest.ExitCode.USAGE_ERROR)


# why a test was skipped at collection for the node image's minor (e2e.run.minors)
OFF_MINOR = pytest.StashKey[str]()


def _skip_other_minors(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip each test whose ``k8s_minors`` leave out the minor of ``--node-image``'s tag (none
    with ``--kubeconfig``, or a tag naming no version: then at setup, e2e.plugin.fixtures); such a
    test needs no cluster (:func:`_costs`)."""
    known = None if config.getoption("--kubeconfig", None) else image_version(config.getoption("--node-image", None))
    if known is None:
        return
    version, minor = known
    for item in items:
        reason = off_minor(item, minor, version)
        if reason is not None:
            item.stash[OFF_MINOR] = reason
            item.add_marker(pytest.mark.skip(reason=reason))


def _costs(config: pytest.Config, items: list[pytest.Item]) -> list[Cost]:
    """What the plan knows of each test with a cluster (e2e.run.plan.Cost), durations learned; a
    test skipped for its minor (:data:`OFF_MINOR`) has none: no cluster is made for it.
    ``pytest.UsageError`` naming a test whose ``node_faults`` marker names no known action."""
    known = load_durations(SEED_DURATIONS, _reports(config) / DURATIONS_FILE)
    return [Cost(item.nodeid, profile_name(item), item.get_closest_marker("serial") is not None,
                 item.get_closest_marker("heavy") is not None, known.get(item.nodeid, UNKNOWN_S),
                 item.get_closest_marker("traffic") is not None, _cluster_wide(item))
            for item in items if "cluster" in getattr(item, "fixturenames", ()) and OFF_MINOR not in item.stash]


def _cluster_wide(item: pytest.Item) -> bool:
    """Whether a fault the test declares reaches beyond its node (e2e.faults.actions.cluster_wide)."""
    try:
        return bool(cluster_wide(item.iter_markers(NODE_FAULTS)))
    except ValueError as e:
        raise pytest.UsageError(f"{item.nodeid}: {e}") from None


def _check_and_order(config: pytest.Config, items: list[pytest.Item]) -> None:
    costs = _costs(config, items)
    if config.getoption("--shard", None):
        costs = _keep_shard(config, items, costs)
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
    for name, needs in sorted({(profile_name(i), s) for i in items if (s := profile_settings(i)) is not None}):
        try:  # a misspelt setting would ask for nothing
            profile_needs_of(config, name, needs)
        except ValueError as e:
            raise pytest.UsageError(f"@pytest.mark.profile({name!r}, needs={needs!r}): {e}") from None
    # sequential: each profile's tests together, the rooms' first and the default's first of
    # them (one extra cluster at a time); under xdist: longest first, serial tests on their
    # profile's lanes or in their room (e2e.run.plan)
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    plan = make_plan(costs, workers, rooms=room_profiles(config))
    config.stash[PLAN] = plan
    rank = {nodeid: i for i, nodeid in enumerate(plan.order)}
    items.sort(key=lambda item: rank.get(item.nodeid, -1))


def _keep_shard(config: pytest.Config, items: list[pytest.Item], costs: list[Cost]) -> list[Cost]:
    """Keep shard ``--shard I/N`` of ``items`` (e2e.run.shards; a test without a cluster goes to
    shard 1), deselecting the rest; returns the kept tests' costs. A run with a cluster writes the
    shard's record into its reports directory now, before any test runs (e2e.run.shards)."""
    index, count = parse_shard(config.getoption("--shard"))
    rooms = room_profiles(config)
    keep = set(split(costs, count, rooms=rooms)[index - 1])
    config.stash[_SHARD_LINE] = (f"shard {index}/{count}: {len(keep)} of {len(costs)} tests with a cluster, expected "
                                 f"{expected_s(costs, keep, rooms=rooms) / 60:.0f} min (profiles: "
                                 f"{', '.join(sorted({c.profile for c in costs if c.nodeid in keep})) or 'none'})")
    clustered = {c.nodeid for c in costs}
    kept = [i for i in items if i.nodeid in keep or (i.nodeid not in clustered and index == 1)]
    dropped = [i for i in items if i not in kept]
    if config.stash.get(STAGED, None) is not None:  # a run with a cluster (not --collect-only)
        selection = [i.nodeid for i in items]
        known = image_version(config.getoption("--node-image", None)) if not config.getoption("--kubeconfig", None) else None
        inputs = split_inputs(commit_of(config.rootpath), known[0] if known else None, costs, selection, count,
                              bool(rooms))
        write_record(_reports(config) / SHARD_FILE,
                     ShardRecord(index, os.environ["E2E_RUN_ID"], inputs, selection, [i.nodeid for i in kept]))
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
    return [c for c in costs if c.nodeid in keep]


def pytest_report_collectionfinish(config: pytest.Config) -> str | None:
    """The shard's line under pytest's "collected" line: its tests, expected minutes, profiles."""
    return config.stash.get(_SHARD_LINE, None)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Count each profile's tests as finally selected (after -k, -m and every deselection); in
    a concurrent run with a cluster, create the plan's clusters before the first test
    (:func:`~e2e.plugin.clusters.create_ahead`). Count its first phase's tests (e2e.run.plan)."""
    config = session.config
    config.stash[_TESTS_LEFT] = Counter(profile_name(i) for i in session.items if "cluster" in getattr(i, "fixturenames", ()))
    plan = config.stash.get(PLAN, None)
    if plan is not None:
        config.stash[_FIRST_PHASE] = sum(1 for i in session.items if "cluster" in getattr(i, "fixturenames", ())
                                         and i.nodeid not in plan.second_phase)
    if plan is not None and config.stash[_TESTS_LEFT] and not config.option.collectonly:
        create_ahead(config, plan)
