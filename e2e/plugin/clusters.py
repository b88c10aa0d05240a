"""The clusters of a run: the preflight, one cluster per profile made on first use and shared
(:class:`Clusters`, see :mod:`e2e.plugin`), a node shared or held alone, and the clusters
released after a profile's last test and at the end of the run."""

from __future__ import annotations

import logging
import os
import time
import zlib
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterator, Sequence

import pytest
from kubernetes.client.exceptions import ApiException

from ..base.locks import EXCLUSIVE, SHARED, first_free, remove_unused, take
from ..cluster import cordon, egress
from ..cluster import facts as cluster_facts
from ..cluster import rooms as cluster_rooms
from ..cluster.kind import (
    DEFAULT_PROFILE,
    STATE_DIR,
    Kind,
    PreflightError,
    Profile,
    check_docker,
    creation_locks,
    hold_run,
    owned_clusters,
    profile_patches,
    release_run,
)
from ..cluster.images import ENV_VARS, missing_on_nodes, workload_images
from ..cluster.kube import ClusterUnreachable, Kube
from ..base.jsonfile import read_json, update_json
from ..cluster.nodeaccess import (AgentAccess, DockerAccess, NodeAccess, NodeRefused, NodeUnreachable, cgroup_version,
                               parse_node_selector)
from ..documented import crashloop, storage
from ..documented.kubelet import KUBELET_SYNC_FREQUENCY_S
from ..run.plan import Plan
from .options import APPS, CLUSTER_FACTS, STAGED, _is_controller, _reports, run_id

log = logging.getLogger("e2e")


# Seconds the preflight waits for images missing from the nodes' status.images: the kubelet
# lists an image loaded a moment ago (`kind load`) only at its next image-list refresh (~30 s)
IMAGE_LIST_WAIT_S = 45.0
IMAGE_LIST_POLL_S = 5.0


def _check_workload_images(kube: Kube, config: pytest.Config) -> None:
    """On a ``--kubeconfig`` cluster the workload images (with ``--app``: the apps' images) must already be on the nodes
    (manifests use ``imagePullPolicy: Never``): one ``PreflightError`` naming what is missing
    where, instead of every test timing out on ``ErrImageNeverPull``. What the nodes do not list
    yet is awaited for :data:`IMAGE_LIST_WAIT_S` s first (and said so)."""
    apps = config.stash.get(APPS, None)
    # a run of --app needs the apps' own images (the embedded apps' ${app_image} is the suite's)
    images = {i: i for app in apps for i in app.images} if apps else workload_images()
    deadline, said = time.monotonic() + IMAGE_LIST_WAIT_S, False
    while True:
        try:
            nodes = kube.nodes()
        except ApiException as e:  # e.g. 403: this user may not list nodes; the tests will tell
            log.warning("cannot list nodes to check the workload images (%s %s); not checked", e.status, e.reason)
            return
        missing = missing_on_nodes(nodes, images)
        if not missing or time.monotonic() >= deadline:
            break
        if not said:
            said = True
            config.get_terminal_writer().line(
                f"pod-lifecycle-e2e: {', '.join(missing)} not in the nodes' image lists yet (the kubelet refreshes "
                f"them about every 30 s, e.g. after `kind load`): waiting up to {IMAGE_LIST_WAIT_S:g} s")
        time.sleep(IMAGE_LIST_POLL_S)
    if not missing:
        return
    if apps:
        what = "; ".join(f"{ref} missing on {', '.join(nodes)}" for ref, nodes in missing.items())
        raise PreflightError(
            f"the app's image(s) not on the cluster's nodes: {what}. The app's containers get imagePullPolicy: Never, "
            "so load them onto every node first (a kind cluster: `kind load docker-image IMAGE --name CLUSTER`; other "
            "clusters: `docker save IMAGE | ctr -n k8s.io images import -` on each node)")
    env = {ref: ENV_VARS[name] for name, ref in images.items()}
    what = "; ".join(f"{ref} ({env[ref]}) missing on {', '.join(nodes)}" for ref, nodes in missing.items())
    raise PreflightError(
        f"workload image(s) not on the cluster's nodes: {what}. Manifests use imagePullPolicy: Never, so load "
        "them onto every node first (a kind cluster: `kind load docker-image IMAGE --name CLUSTER`; other clusters: "
        "`docker save IMAGE | ctr -n k8s.io images import -` on each node), or point "
        f"{' / '.join(ENV_VARS.values())} at images the nodes have"
    )


def _preflight(config: pytest.Config) -> None:
    """Fail fast, once, in the controller (before any xdist worker starts) when Docker, kind
    or an existing cluster is missing, or that cluster's nodes lack the workload images: a
    clear message, printed once, and exit code 4, no test errors. (A usage error: pytest prints
    it once; ``pytest.exit`` this early is printed twice, as ``Exit:`` and as an interruption.)"""
    try:
        profile = profile_of(config)
        if profile is None:
            kube = Kube(config.getoption("--kubeconfig"), config.getoption("--context"))
            kube.version()
            _check_workload_images(kube, config)
        else:
            profile.config()
            if room_profiles(config):
                rooms_profile(config).config()
            check_docker()
            Kind.of(profile)  # finds the kind binary
    except (PreflightError, ClusterUnreachable) as e:
        raise pytest.UsageError(f"pod-lifecycle-e2e cannot run: {e}") from None


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    config = session.config
    configured = config.getoption("--node-image") or config.getoption("--kubeconfig")
    if _is_controller(config) and configured and not config.option.collectonly:
        _preflight(config)



# Tests of each profile selected (for releasing a profile's clusters after its last test).
_TESTS_LEFT = pytest.StashKey[Counter]()
# Tests of a concurrent run's first phase selected, when it has a second (e2e.run.plan).
_FIRST_PHASE = pytest.StashKey[int]()
_CLUSTERS = pytest.StashKey["Clusters"]()
# The run's plan (e2e.run.plan), made at collection.
PLAN = pytest.StashKey[Plan]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    """Once the last test of a profile other than the default has ended, run-wide (also when its
    teardown failed; every xdist worker counts into one file), delete that profile's clusters if
    this run created them (unless --keep-cluster), so that a run does not keep clusters it no
    longer needs; with --rooms the rooms cluster once the last test of every room (the default's
    too) has ended. A test ends with this hook, not with its teardown: with ``--reruns``
    pytest-rerunfailures runs a failed test's setup, call and teardown again within it (its
    ``pytest_runtest_protocol``), so a test counts once, after its last attempt. A test stopped by
    Ctrl-C or ``pytest.exit`` does not count (the end of the run deletes what is left). Under xdist
    each worker lets go of a finished profile's clusters after its next test, and before its next
    test starts (:func:`let_go_of_finished`), and the last one to let go deletes them (the
    controller deletes what is left at the end)."""
    ended = yield
    _release_finished(item)
    return ended


def _release_finished(item: pytest.Item) -> None:
    config = item.config
    if "cluster" not in getattr(item, "fixturenames", ()) or _TESTS_LEFT not in config.stash:
        return
    plan = config.stash.get(PLAN, None)
    if plan is not None and plan.second_phase and item.nodeid not in plan.second_phase:
        count_first_phase_done(config.stash[_FIRST_PHASE])
    release_finished(config, count_down(config.stash[_TESTS_LEFT], profile_name(item)), item.session.testsfailed > 0)


def let_go_of_finished(config: pytest.Config, failed: bool) -> None:
    """Before a test starts (the ``cluster`` fixture, after a second-phase test's wait): let go of
    the clusters of the profiles that other workers have finished meanwhile (:func:`release_finished`),
    so that this worker's use lock does not keep them alive beside its next test."""
    if _TESTS_LEFT in config.stash and _CLUSTERS in config.stash:
        selected: Counter = config.stash[_TESTS_LEFT]
        left = read_json(_left_file(), lambda: dict(selected))
        release_finished(config, {p for p, n in left.items() if n <= 0}, failed)


def release_finished(config: pytest.Config, finished: set[str], failed: bool) -> None:
    """Let go of the clusters of the profiles in ``finished`` (none of their tests left, run-wide),
    each deleted if this run created it and no other process uses it (:meth:`Clusters.release`),
    unless --keep-cluster: every such profile's but the default's, and with --rooms the rooms
    cluster once every room of the run is finished (the default room too). ``failed``: a test of the
    run failed, so their kind logs are exported first."""
    clusters = config.stash.get(_CLUSTERS, None)
    if clusters is None or not finished or config.getoption("--keep-cluster"):
        return
    logs = _reports(config) / run_id() / "kind-logs" if failed else None
    rooms = {p for p in room_profiles(config) if p in config.stash[_TESTS_LEFT]}
    for name in sorted(finished - rooms - {DEFAULT_PROFILE}):
        clusters.release(name, logs)
    if rooms and rooms <= finished:
        clusters.release_rooms(logs)


def _left_file() -> Path:
    return STATE_DIR / "runs" / f"{run_id()}.left.json"


def _used_file() -> Path:
    """The kind clusters this run used (every process adds the ones it connects to)."""
    return STATE_DIR / "runs" / f"{run_id()}.used.json"


def count_down(selected: Counter, name: str) -> set[str]:
    """Count one test of profile ``name`` done in this run (a file every process of the run
    shares, starting from ``selected``: the tests of each profile); the profiles with none left."""
    def count(left: dict) -> dict:
        return {**left, name: left.get(name, 0) - 1}

    left = update_json(_left_file(), count, lambda: dict(selected))
    return {p for p, n in left.items() if n <= 0}


def _phase_file() -> Path:
    return STATE_DIR / "runs" / f"{run_id()}.phase1.json"


def count_first_phase_done(selected: int) -> int:
    """Count one test of the run's first phase done (a file every process of the run shares,
    starting from ``selected``); the number left."""
    return update_json(_phase_file(), lambda left: {"left": left["left"] - 1}, lambda: {"left": selected})["left"]


def wait_for_first_phase(selected: int, limit_s: float, poll_s: float = 1.0) -> float:
    """Wait until none of the run's ``selected`` first-phase tests is left (e2e.run.plan: a
    traffic test runs once every other test has ended); the seconds waited. After ``limit_s``
    (the first phase's tests one after another: a worker that died never counts its test) it
    stops waiting with a warning."""
    start = time.monotonic()
    while read_json(_phase_file(), lambda: {"left": selected})["left"] > 0:
        if time.monotonic() - start > limit_s:
            log.warning("the first phase still has tests left after %.0f s: starting the second phase anyway", limit_s)
            break
        time.sleep(poll_s)
    return time.monotonic() - start


def _default_kind_config(config: pytest.Config) -> str:
    """``kind-config.yaml`` of the rootdir, else the suite's own (a folder of your own cases
    run from anywhere uses the suite's default profile)."""
    here = config.rootpath / "kind-config.yaml"
    suite = Path(__file__).resolve().parents[2] / "kind-config.yaml"
    return str(here if here.exists() or not suite.exists() else suite)


def profile_name(item: pytest.Item) -> str:
    """The cluster profile a test asks for (``@pytest.mark.profile("name")``), else ``default``."""
    marker = item.get_closest_marker("profile")
    if marker is None:
        return DEFAULT_PROFILE
    if len(marker.args) != 1 or not isinstance(marker.args[0], str):
        raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.profile takes one profile name, got {marker.args!r}")
    return marker.args[0]


def profile_settings(item: pytest.Item) -> tuple[str, ...] | None:
    """The settings of its profile's kubelet a test depends on (``@pytest.mark.profile("name",
    needs=("shutdownGracePeriod", …))``; ``needs=()``: none of them), by which a ``--kubeconfig``
    cluster's nodes are chosen for it (:meth:`e2e.cluster.facts.Needs.only`); ``None`` (no
    ``needs``): all of them. ``pytest.UsageError`` for another keyword or a ``needs`` that is no
    sequence of names."""
    marker = item.get_closest_marker("profile")
    if marker is None or not marker.kwargs:
        return None
    needs = marker.kwargs.get("needs")
    if set(marker.kwargs) != {"needs"} or isinstance(needs, str) or not isinstance(needs, (tuple, list)) \
            or not all(isinstance(n, str) for n in needs):
        raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.profile takes needs=(kubelet setting names, …), "
                                f"got {marker.kwargs!r}")
    return tuple(needs)


def _profiles_dir(config: pytest.Config) -> Path:
    """``profiles/`` of the rootdir, else the suite's own (like :func:`_default_kind_config`)."""
    here = config.rootpath / "profiles"
    suite = Path(__file__).resolve().parents[2] / "profiles"
    return here if here.is_dir() or not suite.is_dir() else suite


def profile_of(config: pytest.Config, name: str = DEFAULT_PROFILE, replica: int = 0) -> Profile | None:
    """The kind profile ``name`` from the options (``profiles/<name>.yaml`` merged over the
    kind config and ``--profile-patch`` files) — its copy ``replica`` (e2e.run.plan) — or
    ``None`` when ``--kubeconfig`` names a cluster. ``PreflightError`` for an unknown profile."""
    if config.getoption("--kubeconfig"):
        return None
    image = config.getoption("--node-image")
    if not image:
        raise pytest.UsageError("--node-image (or E2E_NODE_IMAGE) is required unless --kubeconfig is given")
    kind_config = config.getoption("--kind-config") or _default_kind_config(config)
    patches = tuple(Path(p) for p in config.getoption("--profile-patch")) + profile_patches(_profiles_dir(config), name)
    return Profile(Path(kind_config), image, patches, name, replica)


def room_profiles(config: pytest.Config) -> tuple[str, ...]:
    """The profiles whose tests run in a room of the one ``rooms`` cluster (``--rooms``, E2E_ROOMS=1:
    :data:`e2e.cluster.rooms.ROOM_PROFILES`); ``()`` without it, and with ``--kubeconfig``."""
    if not config.getoption("--rooms") or config.getoption("--kubeconfig"):
        return ()
    return cluster_rooms.ROOM_PROFILES


def rooms_profile(config: pytest.Config) -> Profile:
    """The kind profile of the rooms cluster (e2e.cluster.rooms): the default profile's config
    (the kind config and ``--profile-patch`` files) plus the workers of each room of
    :func:`room_profiles`, each with its profile's kubelet settings, label and taint.
    ``PreflightError`` for a profile that cannot be a room, naming what it sets."""
    default = profile_of(config)
    if default is None:
        raise PreflightError("--rooms: the rooms are a kind cluster the suite makes; not with --kubeconfig")
    try:
        rooms = {name: cluster_rooms.room_patch(profile_patches(_profiles_dir(config), name)[0]
                                                if name != DEFAULT_PROFILE else None)
                 for name in room_profiles(config)}
    except ValueError as e:
        raise PreflightError(str(e)) from None
    patch = cluster_rooms.rooms_config(rooms, STATE_DIR)
    return Profile(default.kind_config, default.node_image, (*default.patches, patch), cluster_rooms.ROOMS_PROFILE)


@dataclass
class ClusterInfo:
    """The cluster of one profile, shared by every test of the run that asks for it."""

    kube: Kube
    kubernetes: str
    minor: int
    cgroup: int | None
    kind: Kind | None
    profile: str = DEFAULT_PROFILE
    replica: int = 0
    # the nodes the profile's tests may use (a --kubeconfig cluster's nodes whose facts satisfy the
    # profile, e2e.cluster.facts.choose_node; (): anywhere) and how many one test needs (multi-node: 2)
    nodes: tuple[str, ...] = ()
    # the way into its nodes (e2e.cluster.nodeaccess; None: --kubeconfig without --node-agent)
    access: NodeAccess | None = None
    # its facts read at the start (e2e.cluster.facts.collect, with "controller_manager")
    facts: dict | None = None
    needed: int = 1
    # what the tests' pods tolerate to be kept on :attr:`nodes` (a room's taint, e2e.cluster.rooms)
    tolerations: tuple[dict, ...] = ()
    # the nodes of the rooms cluster's other rooms: a fault's health check leaves them out (e2e.faults.core)
    elsewhere: tuple[str, ...] = ()

    def placement(self, test_id: str) -> tuple[str, ...]:
        """The nodes test ``test_id``'s pods are kept on (e2e.run.scenario.pin_to_nodes): all of
        :attr:`nodes` for a test that needs several; else one of them, the same for the test on every
        run (by a CRC-32 of its id), so that tests spread over the matching nodes while each one's
        pods and its ``node_exec`` meet on one node; ``()`` when the cluster has no such choice."""
        if self.needed > 1 or len(self.nodes) <= 1:
            return self.nodes
        return (self.nodes[zlib.crc32(test_id.encode()) % len(self.nodes)],)


def prefer_selected(nodes: tuple[str, ...], needed: int, selected: tuple[str, ...] | None) -> tuple[str, ...]:
    """The nodes a test's pods are kept on, given ``nodes`` (those that satisfy its profile) and
    ``selected`` (the workers ``--node-selector`` lets the node agent enter; ``None``: no selector):
    those of ``nodes`` that are selected when at least ``needed`` (≥ 1) are, so that a test that
    enters its node lands where the agent may go; else ``nodes`` as they are (a test that enters a
    node then skips there, saying the selector refused it)."""
    if selected is None:
        return nodes
    chosen = tuple(n for n in nodes if n in selected)
    return chosen if len(chosen) >= max(needed, 1) else nodes


def cgroup_versions(kind: Kind | None, access: NodeAccess | None) -> tuple[int | None, cluster_facts.Cgroup]:
    """The cgroup version read in the nodes: ``(the cluster's, the facts')``. On a kind cluster the
    suite made, its control plane's (``docker exec``), for every node. Through the node agent each
    worker's (:func:`e2e.cluster.nodeaccess.cgroup_version`; a failed read, the agent refused by the
    API included, is recorded as why: never an error of the run), the
    cluster's when every worker read the same, else ``None``; the control plane is not entered.
    Without node access ``(None, None)``."""
    if kind is not None:
        version = cgroup_version(access or DockerAccess(), kind.control_plane)
        return version, version
    if not isinstance(access, AgentAccess):
        return None, None
    try:
        workers = access.workers()
    except ApiException as e:  # this user may not list nodes: facts.json says so under "nodes"
        return None, f"not read: list nodes: {e.status} {e.reason}"
    per_node: dict[str, int | str] = {}
    for node in workers:
        try:
            per_node[node] = cgroup_version(access, node)
        except (RuntimeError, NodeUnreachable, NodeRefused, ApiException) as e:  # ApiException: the agent refused (RBAC, admission)
            per_node[node] = f"read through the node agent failed: {type(e).__name__}: {str(e)[:200]}"
    versions = {v for v in per_node.values() if isinstance(v, int)}
    whole = versions.pop() if len(versions) == 1 and all(isinstance(v, int) for v in per_node.values()) else None
    return whole, per_node


def node_access(config: pytest.Config, kind: Kind | None, kube: Kube) -> NodeAccess | None:
    """How tests enter the nodes: ``docker exec`` on a kind cluster the suite made, the node
    agent on a ``--kubeconfig`` cluster with ``--node-agent`` (its image: ``--agent-image``, else
    the workload busybox; only on the nodes of ``--node-selector``), else none."""
    if kind is not None:
        return DockerAccess()
    if not config.getoption("--node-agent"):
        return None
    selector = config.getoption("--node-selector")
    return AgentAccess(kube, run_id(), config.getoption("--agent-image") or workload_images()["busybox_image"],
                       selector=parse_node_selector(selector) if selector else None)


def clusters_of(config: pytest.Config) -> "Clusters":
    """This process's :class:`Clusters` (made on first use)."""
    if _CLUSTERS not in config.stash:
        config.stash[_CLUSTERS] = Clusters(config)
    return config.stash[_CLUSTERS]


def create_ahead(config: pytest.Config, plan: Plan) -> None:
    """In xdist worker ``gw<i>`` of ``n``, before its first test: bring up the plan's clusters
    ``i``, ``i + n``, … (e2e.run.plan), so that every cluster of the run exists before any test
    starts. A cluster that cannot be made is left to the tests that need it (they report it)."""
    worker, count = os.environ.get("PYTEST_XDIST_WORKER", ""), int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if not worker.startswith("gw") or count <= 0:
        return
    for name, replica in plan.clusters[int(worker[2:])::count]:
        try:
            clusters_of(config).get(name, replica)
        except (pytest.fail.Exception, pytest.skip.Exception) as e:
            log.warning("cluster of profile %s (copy %d) not made ahead: %s", name, replica, e)


class Clusters:
    """The clusters of this process, one per profile, each made on first use (see module doc)."""

    def __init__(self, config: pytest.Config):
        self._config = config
        # by (profile, replica); on --kubeconfig a test that narrows its needs adds them: (profile, 0, needs)
        self._ready: dict[tuple, ClusterInfo] = {}
        self._failed: dict[tuple, str] = {}
        self._facts: dict[tuple[str, int], dict] = {}
        self._skipped: dict[tuple, str] = {}
        self._connection: ClusterInfo | None = None  # a --kubeconfig cluster's, before placement
        self._selected: tuple[str, ...] | None = None  # the workers --node-selector names (read once)

    def get(self, name: str, replica: int = 0, needs: tuple[str, ...] | None = None) -> ClusterInfo:
        """The cluster of profile ``name`` (its copy ``replica``, e2e.run.plan). The default
        profile's failure stops the run (exit 4); another profile's (or a replica's) failure
        errors the tests that need it, each with the same message. ``needs``: the profile's kubelet
        settings the test depends on (:func:`profile_settings`; None: all), which choose a
        ``--kubeconfig`` cluster's nodes; a kind cluster is the profile's whatever they are."""
        key: tuple = (name, replica)
        if needs is not None and self._config.getoption("--kubeconfig"):
            key = (name, replica, needs)
        if key in self._ready:
            return self._ready[key]
        if key in self._failed:
            pytest.fail(self._failed[key], pytrace=False)
        if key in self._skipped:
            pytest.skip(self._skipped[key])
        try:
            self._ready[key] = self._connect(name, replica, needs)
        except Exception as e:  # noqa: BLE001 - one clear message instead of one traceback per test
            what = "cannot run" if isinstance(e, (PreflightError, ClusterUnreachable)) else f"cannot set up the cluster: {type(e).__name__}:"
            first = key == (DEFAULT_PROFILE, 0)
            where = f"profile {name}" + (f" (replica {replica})" if replica else "")
            msg = f"pod-lifecycle-e2e {what} {e}" if first else f"{where}: pod-lifecycle-e2e {what} {e}"
            if first:
                pytest.exit(msg, returncode=4)
            self._failed[key] = msg
            pytest.fail(msg, pytrace=False)
        return self._ready[key]

    def release(self, name: str, logs: Path | None = None) -> None:
        """Let go of profile ``name``'s clusters (every copy) and delete each now if this run
        created it and no other process uses it (see module doc), after exporting its kind logs
        to ``logs/<cluster>`` when ``logs`` is given. Not for a room (:meth:`release_rooms`)."""
        for key in [k for k in self._ready if k[0] == name]:
            self._release(self._ready.pop(key), logs)

    def release_rooms(self, logs: Path | None = None) -> None:
        """Let go of the rooms cluster (e2e.cluster.rooms) once no room has a test left, as
        :meth:`release` does a profile's cluster: every room's placement is forgotten with it."""
        for name in room_profiles(self._config):
            self._ready.pop((name, 0), None)
        info = self._ready.pop((cluster_rooms.ROOMS_PROFILE, 0), None)
        if info is not None:
            self._release(info, logs)

    def _release(self, info: ClusterInfo, logs: Path | None) -> None:
        if info.kind is not None and info.kind.owned_by(run_id()):
            try:
                if info.kind.delete_unless_used(export_logs_to=logs / info.kind.name if logs else None):
                    log.warning("profile %s: no test left, deleted kind cluster %s", info.profile, info.kind.name)
            except PreflightError as e:
                log.warning("deleting kind cluster %s failed (the end of the run tries again): %s", info.kind.name, e)

    def replace_broken(self, name: str, replica: int, reason: str, logs: Path) -> None:
        """Profile ``name``'s cluster (copy ``replica``) did not recover from a fault (``reason``, e2e.faults): export
        its kind logs to ``logs/<cluster>-broken``, mark it broken (whoever ensures it next
        recreates it: :meth:`e2e.cluster.kind.Kind.ensure`), delete it unless another run uses it, and
        forget it here, so that the next test of the profile gets a new cluster — never this one. The
        rooms cluster is forgotten for every room (each one's next test gets the new one)."""
        info = self._ready.pop((name, replica), None)
        if info is None or info.kind is None:
            return
        kind = info.kind
        for key in [k for k, other in self._ready.items() if other.kind is not None and other.kind.name == kind.name]:
            del self._ready[key]
        try:
            kind.export_logs(logs / f"{kind.name}-broken")
        except Exception as e:  # noqa: BLE001 - the replacement matters more than the logs
            log.warning("kind export logs of broken cluster %s failed: %s", kind.name, e)
        kind.mark_broken(reason)
        try:
            kind.delete_unless_used()
        except PreflightError as e:
            log.warning("deleting broken cluster %s failed (the next ensure recreates it): %s", kind.name, e)

    def _connect(self, name: str, replica: int, needs: tuple[str, ...] | None = None) -> ClusterInfo:
        hold_run(run_id())  # `make clean` leaves this run's namespaces alone while it lives
        if replica == 0 and name in room_profiles(self._config):
            return self._room(name)
        profile = profile_of(self._config, name, replica)
        if profile is None:
            return self._by_facts(name, needs)
        return self._own(profile, name, replica)

    def _own(self, profile: Profile, name: str, replica: int) -> ClusterInfo:
        """The kind cluster of ``profile`` (made unless it exists), connected as profile ``name``'s."""
        check_docker()
        kind = Kind.of(profile)
        used = {kind.name}  # before it is made: one whose creation fails leaves lock files to remove (_sweep_used)
        update_json(_used_file(), lambda names: sorted({*names, *used}), list)
        started = time.monotonic()
        kubeconfig = str(kind.ensure(profile, run_id(), list(workload_images().values())))
        log.info("cluster %s (profile %s) ready in %.1f s", kind.name, name, time.monotonic() - started)
        return self._info(name, replica, Kube(kubeconfig), kind)

    def _info(self, name: str, replica: int, kube: Kube, kind: Kind | None) -> ClusterInfo:
        """Connect to the cluster of profile ``name`` (copy ``replica``), record its facts."""
        version = kube.version()
        access = node_access(self._config, kind, kube)
        cgroup, per_node = cgroup_versions(kind, access)
        self._facts[(name, replica)] = facts = cluster_facts.collect(kube, per_node)
        facts["controller_manager"] = self._controller_manager(name)
        record_facts(self._config, name if not replica else f"{name}-{replica}", facts)
        return ClusterInfo(kube, version.git_version, version.minor, cgroup, kind, name, replica, access=access,
                           facts=facts)

    def _room(self, name: str) -> ClusterInfo:
        """Profile ``name``'s room of the rooms cluster (e2e.cluster.rooms; made on first use, shared
        by every room): its tests' pods are kept on the nodes labelled with the room whose facts
        satisfy the profile's needs (:func:`profile_needs_of`, the room's taint tolerated:
        e2e.cluster.facts.choose_node, as on a ``--kubeconfig`` cluster) and carry the room's
        toleration; its faults' health checks leave the other rooms' nodes out. ``PreflightError``
        with the precise difference when its node does not satisfy them: the suite made that node,
        so a room without its settings is an error, not a skip."""
        key = (cluster_rooms.ROOMS_PROFILE, 0)
        if key not in self._ready:
            self._ready[key] = self._own(rooms_profile(self._config), cluster_rooms.ROOMS_PROFILE, 0)
        base = self._ready[key]
        taint = cluster_rooms.taint(name)
        try:
            needs = replace(profile_needs_of(self._config, name), tolerates=(taint,) if taint else ())
        except ValueError as e:
            raise PreflightError(str(e)) from None
        facts = self._facts[key]
        listed = base.kube.nodes()
        members = cluster_rooms.members(listed, name)
        nodes, reason = cluster_facts.choose_node(
            needs, {**facts, "nodes": {n: facts["nodes"][n] for n in members if n in facts["nodes"]}})
        if not nodes:
            raise PreflightError(f"room {name} of cluster {base.kind.name if base.kind else '?'} (nodes labelled "
                                 f"{cluster_rooms.ROOM_LABEL}={name}: {', '.join(members) or 'none'}): {reason}")
        toleration = cluster_rooms.toleration(name)
        return replace(base, profile=name, nodes=nodes, needed=needs.nodes,
                       tolerations=(toleration,) if toleration else (),
                       elsewhere=tuple(cluster_rooms.elsewhere(listed, name)))

    def _controller_manager(self, name: str) -> dict:
        """The controller manager's node-lifecycle flags (e2e.cluster.facts.controller_manager): on a
        ``--kubeconfig`` cluster those of ``--cluster-facts``, on a cluster the suite made those of
        its profile's file (``profiles/<name>.yaml``); a flag given in neither is the upstream default."""
        if self._config.getoption("--kubeconfig"):
            given = self._config.stash.get(CLUSTER_FACTS, {}).get("controllerManager", {})
            return cluster_facts.controller_manager(given, f"--cluster-facts {self._config.getoption('--cluster-facts')}")
        path = _profiles_dir(self._config) / f"{name}.yaml"
        if name == DEFAULT_PROFILE or not path.is_file():
            return cluster_facts.controller_manager({}, None)
        needs = cluster_facts.profile_needs(path)
        given = {k: v for k, v in needs.from_facts.items() if k in cluster_facts.CM_DEFAULTS}
        return cluster_facts.controller_manager(given, f"profiles/{name}.yaml")

    def connection(self) -> ClusterInfo:
        """The ``--kubeconfig`` cluster before any placement (its version, facts and node access),
        connected at the first call; the errors of connecting (:class:`PreflightError`)."""
        if self._connection is None:
            kube = Kube(self._config.getoption("--kubeconfig"), self._config.getoption("--context"))
            self._connection = self._info(DEFAULT_PROFILE, 0, kube, None)
        return self._connection

    def _by_facts(self, name: str, only: tuple[str, ...] | None = None) -> ClusterInfo:
        """A ``--kubeconfig`` cluster stands in for profile ``name`` (``default`` too) on the nodes whose
        facts satisfy the profile's needs (e2e.cluster.facts.choose_node; the default's:
        :func:`default_needs`), of its kubelet settings those in ``only`` when given
        (:func:`profile_settings`): the tests' pods are kept on them (:meth:`ClusterInfo.placement`).
        Else the test is skipped with the precise difference."""
        try:
            needs = profile_needs_of(self._config, name, only)
        except ValueError as e:
            raise PreflightError(str(e)) from None
        base = self.connection()
        nodes, reason = cluster_facts.choose_node(needs, self._facts[(DEFAULT_PROFILE, 0)])
        if not nodes:
            self._skipped[(name, 0) if only is None else (name, 0, only)] = reason
            pytest.skip(reason)
        if isinstance(base.access, AgentAccess) and base.access.selector:
            try:
                self._selected = self._selected if self._selected is not None else tuple(base.access.workers())
            except ApiException as e:  # this user may not list nodes: placed by the facts alone
                log.warning("--node-selector: cannot list the nodes it names (%s %s): tests placed by the facts alone",
                            e.status, e.reason)
            nodes = prefer_selected(nodes, needs.nodes, self._selected)
        return ClusterInfo(base.kube, base.kubernetes, base.minor, base.cgroup, None, name, 0, nodes, base.access,
                           facts=base.facts, needed=needs.nodes)


def profile_needs_of(config: pytest.Config, name: str, only: tuple[str, ...] | None = None) -> cluster_facts.Needs:
    """What profile ``name`` asks of a ``--kubeconfig`` cluster's nodes: :func:`default_needs`, or
    its file's (:func:`e2e.cluster.facts.profile_needs`), its kubelet settings narrowed to ``only``
    when given (:meth:`e2e.cluster.facts.Needs.only`). ``ValueError`` for an unknown profile, a
    file that is no kind config patch, or a setting in ``only`` the profile does not set."""
    if name == DEFAULT_PROFILE:
        needs = default_needs()
    else:
        path = _profiles_dir(config) / f"{name}.yaml"
        if not path.is_file():
            raise ValueError(f"unknown profile {name}: no {path}")
        needs = cluster_facts.profile_needs(path)
    return needs if only is None else needs.only(only)


def default_needs() -> cluster_facts.Needs:
    """What the default profile's documented values assume of a node's kubelet — the upstream
    defaults (pkg/kubelet/apis/config/v1beta1/defaults.go SetDefaults_KubeletConfiguration), where a
    band is keyed to one: ``crashLoopBackOff.maxContainerRestartPeriod`` 5m0s (CL-1 … CL-5: the
    300 s cap, e2e.documented.crashloop ``DOCUMENTED_GAPS_S``), ``syncFrequency`` 1m0s (CL-2's
    re-sync, ``KUBELET_SYNC_FREQUENCY_S``), ``volumeStatsAggPeriod`` 1m0s (ES-2, ES-7:
    e2e.documented.storage ``VOLUME_STATS_AGG_PERIOD_S``). A field a node's configz lacks counts as
    its default."""
    def go(seconds: float) -> str:
        minutes, rest = divmod(int(seconds), 60)
        return f"{minutes}m{rest}s" if minutes else f"{rest}s"

    return cluster_facts.Needs(DEFAULT_PROFILE, {
        "crashLoopBackOff.maxContainerRestartPeriod": go(crashloop.DOCUMENTED_GAPS_S[-1]),
        "syncFrequency": go(KUBELET_SYNC_FREQUENCY_S),
        "volumeStatsAggPeriod": go(storage.VOLUME_STATS_AGG_PERIOD_S),
    }, unset_is_default=True)


# the run's cluster facts (e2e.cluster.facts), one entry per profile's cluster, staged with its
# reports and published as REPORTS/facts.json beside measurements.json
FACTS_FILE = "facts.json"


def record_facts(config: pytest.Config, cluster: str, facts: dict) -> None:
    """Add the facts of ``cluster`` (a profile's name, ``-<replica>`` for a copy) to the run's staged
    ``facts.json`` (every process of the run writes into the one file)."""
    staged = config.stash.get(STAGED, None)
    if staged is None:
        return
    update_json(Path(staged) / FACTS_FILE, lambda known: {**known, cluster: facts}, dict)



def node_lock_path(config: pytest.Config, name: str, replica: int) -> Path:
    """The lock file of profile ``name``'s cluster copy ``replica``: shared by the tests that
    share its node, held alone by a serial test (:func:`hold_node`)."""
    profile = profile_of(config, name, replica)
    return STATE_DIR / f"{profile.cluster_name if profile else run_id()}.node.lock"


@contextmanager
def hold_node(config: pytest.Config, name: str, replicas: list[int], serial: bool,
              every_room: Sequence[str] = ()) -> Iterator[int]:
    """Share the node of profile ``name``'s cluster (copy 0) with other workers' tests, or
    (``serial``) have one of the copies ``replicas`` alone, waiting for one. Yields the copy.

    A ``flock`` per cluster: shared for ordinary tests, exclusive for serial ones. On a copy
    that serial and ordinary tests share (``replicas == [0]``), every test first passes a
    turnstile (a second lock): a serial test holds it while it waits for the running tests to
    end, so that new ones queue behind it instead of starving it. Several lane copies (only
    serial tests use them): the first one free. A room of the rooms cluster (e2e.cluster.rooms)
    has the lock of its profile's own cluster name, so a room's serial test holds its own room's
    node(s) only. ``every_room`` (the room profiles; a serial test whose fault reaches beyond its
    node, e2e.run.plan.Plan.every_room): every room's lock, each through its turnstile, one after
    the other in sorted order (so two such tests never wait for each other crosswise); yields 0."""
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    if every_room:
        held: list[int] = []
        try:
            for room in sorted(every_room):
                held.append(_take_turn(node_lock_path(config, room, 0), EXCLUSIVE))
            yield 0
        finally:
            for fd in held:
                os.close(fd)
        return
    choices = replicas if serial else [0]
    mode = EXCLUSIVE if serial else SHARED
    if len(choices) == 1:
        fd = _take_turn(node_lock_path(config, name, choices[0]), mode)
        i = 0
    else:
        i, fd = first_free([node_lock_path(config, name, r) for r in choices], mode)
    try:
        yield choices[i]
    finally:
        os.close(fd)


def _take_turn(lock: Path, mode: int) -> int:
    """``lock`` taken with ``mode`` behind its turnstile (:func:`hold_node`): the descriptor."""
    turnstile = take(lock.with_suffix(".turn"), EXCLUSIVE)
    try:
        return take(lock, mode)
    finally:
        os.close(turnstile)


@contextmanager
def heavy_slot(slots: int) -> Iterator[None]:
    """Hold one of ``slots`` heavy-test slots of this run (e2e.run.plan), waiting for one."""
    runs = STATE_DIR / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    _, fd = first_free([runs / f"{run_id()}.heavy.{i}.lock" for i in range(max(1, slots))], EXCLUSIVE)
    try:
        yield
    finally:
        os.close(fd)


def export_logs(session: pytest.Session, exitstatus: int) -> None:
    """The end of a run (e2e.plugin.runend, controller): export the kind logs of every cluster this
    run created into ``<reports>/<run id>/kind-logs/<cluster>/`` when something failed (a test, or
    an exit status other than 0 and 5), not after Ctrl-C; an export that fails is logged and the
    next cluster's goes on."""
    config = session.config
    if config.getoption("--kubeconfig"):
        return
    try:
        kinds = [Kind(name) for name in owned_clusters(run_id())]
    except PreflightError:
        return
    if kinds and (session.testsfailed > 0 or exitstatus not in (0, 5)) and exitstatus != pytest.ExitCode.INTERRUPTED:
        for kind in kinds:
            dest = _reports(config) / run_id() / "kind-logs" / kind.name
            try:
                kind.export_logs(dest)
                log.warning("kind logs exported to %s", dest)
            except Exception as e:  # noqa: BLE001
                log.warning("kind export logs of %s failed: %s", kind.name, e)


# Seconds the end of a run waits for its exiting xdist workers to let go of the run's own locks
WORKERS_EXIT_S = 10.0


def remove_lock_files(config: pytest.Config) -> None:
    """The end of a run (e2e.plugin.runend, controller), after the clusters' release: the lock
    files this run made in the state directory go once no process holds them
    (e2e.base.locks: removed while held exclusively, every taker checks): a --kubeconfig
    run's node lock and turnstile and the run's own liveness lock (after its exiting workers let
    go, at most :data:`WORKERS_EXIT_S` s), and the cluster creations' marker and slots, which any
    run of the state directory shares (unless another run holds one now) — only in a run that
    reached a cluster (its liveness lock is there). Its clusters' lock
    files went with them (Kind.delete_unless_used). One a live process still holds stays, said in
    the log: `make clean` removes it once that process is gone."""
    if not (STATE_DIR / "runs" / f"{run_id()}.lock").exists():
        return  # no test of the run reached a cluster (hold_run): it made none of them
    held = []
    if config.getoption("--kubeconfig"):
        lock = node_lock_path(config, DEFAULT_PROFILE, 0)
        held += [p for p in (lock, lock.with_suffix(".turn")) if not remove_unused(p, WORKERS_EXIT_S)]
    else:
        for name in room_profiles(config):  # a room's node lock is named by its profile's own cluster, never made
            lock = node_lock_path(config, name, 0)
            held += [p for p in (lock, lock.with_suffix(".turn")) if not remove_unused(p, WORKERS_EXIT_S)]
        held += [p for p in creation_locks() if not remove_unused(p)]
    if not release_run(run_id(), WORKERS_EXIT_S):
        held.append(STATE_DIR / "runs" / f"{run_id()}.lock")
    if held:
        log.info("lock files held by a live process stay (`make clean` removes them once it is gone): %s",
                 ", ".join(map(str, held)))


def release_clusters(session: pytest.Session) -> None:
    """The end of a run (e2e.plugin.runend, controller): delete every cluster this run created,
    whatever its profile (unless --keep-cluster, which sweeps this run's namespaces instead), a
    failure logged and the next cluster still deleted; sweep this run's namespaces on the clusters
    it used without creating them, and remove the egress guard with the last cluster on it. On a
    --kubeconfig cluster, sweep this run's namespaces: those of tests whose worker was stopped
    before its teardown (xdist ends a worker that is not done within seconds of a Ctrl-C or
    SIGTERM). First, the run's own files of the state directory go (heavy slots, tests left)."""
    config = session.config
    for path in (*(STATE_DIR / "runs").glob(f"{run_id()}.heavy.*.lock"), _left_file(), Path(f"{_left_file()}.lock"),
                 _phase_file(), Path(f"{_phase_file()}.lock")):
        path.unlink(missing_ok=True)
    if config.getoption("--kubeconfig"):
        try:
            _sweep_namespaces(config, Kube(config.getoption("--kubeconfig"), config.getoption("--context")))
        except Exception as e:  # noqa: BLE001
            log.warning("sweeping namespaces of run %s failed: %s", run_id(), e)
        return
    try:
        kinds = [Kind(name) for name in owned_clusters(run_id())]
    except PreflightError:
        return
    for kind in kinds:
        try:
            _finish_cluster(config, kind)
        except Exception as e:  # noqa: BLE001 - the next cluster is still deleted
            log.warning("finishing kind cluster %s failed: %s", kind.name, e)
    _sweep_used(config, {kind.name for kind in kinds})
    if kinds or egress.prepared():
        _release_egress()


def _sweep_used(config: pytest.Config, owned: set[str]) -> None:
    """Sweep this run's namespaces on the clusters it used without creating them (a kept cluster of
    an earlier run): a test whose xdist worker was stopped before its teardown (a Ctrl-C or SIGTERM
    to the group) left its namespace there. Of a cluster it meant to use that does not exist (its
    creation failed or was stopped: no state file), the lock files go unless someone holds them:
    its use and creation locks, its node's lock and turnstile (taken before the cluster was made)."""
    used = _used_file()
    try:
        names = read_json(used, list)
    except (OSError, ValueError):
        names = []
    for name in names:
        if not (STATE_DIR / f"{name}.json").exists():
            for suffix in (".use", ".lock", ".node.lock", ".node.turn"):
                remove_unused(STATE_DIR / f"{name}{suffix}", WORKERS_EXIT_S)
        kubeconfig = STATE_DIR / f"{name}.kubeconfig"
        if name in owned or not kubeconfig.exists():
            continue
        try:
            _sweep_namespaces(config, Kube(str(kubeconfig)))
        except Exception as e:  # noqa: BLE001 - the next cluster is still swept
            log.warning("sweeping namespaces of run %s on %s failed: %s", run_id(), name, e)
    for path in (used, Path(f"{used}.lock")):
        path.unlink(missing_ok=True)


def _release_egress() -> None:
    """The host guard and the suite's network go with the last cluster on it (e2e.cluster.egress)."""
    try:
        if egress.release():
            log.info("egress guard and Docker network %s removed: no cluster left on it", egress.NETWORK)
    except Exception as e:  # noqa: BLE001 - `make clean` removes them later
        log.warning("removing the egress guard failed (`make clean` tries again): %s", e)


def _finish_cluster(config: pytest.Config, kind: Kind) -> None:
    if config.getoption("--keep-cluster"):
        log.warning("keeping kind cluster %s (kubeconfig %s)", kind.name, kind.kubeconfig)
        try:
            _sweep_namespaces(config, Kube(str(kind.kubeconfig)))
        except Exception as e:  # noqa: BLE001
            log.warning("sweeping namespaces of run %s failed: %s", run_id(), e)
        return
    kind.delete_unless_used()


def _sweep_namespaces(config: pytest.Config, kube: Kube) -> None:
    """On a cluster that stays: uncordon a node this run's DR-2 left cordoned (its mark
    :data:`e2e.cluster.cordon.CORDONED_BY` names the run: a test stopped before its own uncordon, by
    a second Ctrl-C or an xdist worker ended) and remove the mark, a failure logged; then delete this
    run's namespaces left there (unless --keep-namespaces)."""
    try:
        for m in cordon.marked(kube):
            if m.run == run_id():
                log.warning("node %s is still %s by this run: uncordoning it", m.node, "cordoned" if m.cordoned else "marked")
                cordon.uncordon(kube, m.node)
    except Exception as e:  # noqa: BLE001 - the namespaces are still swept; `make clean` tries again
        log.warning("undoing run %s's cordon failed (`make clean` tries again): %s", run_id(), e)
    if config.getoption("--keep-namespaces"):
        return
    for ns in kube.namespaces_of_run(run_id()):
        kube.delete_namespace(ns)
