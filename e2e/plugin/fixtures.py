"""The fixtures a scenario uses: ``clusters``, ``cluster`` (its profile's), ``host_load`` (the
host's CPU pressure, sampled in this process), ``scenario`` (a fresh namespace, a recorder
already watching it, a judge; reports and cleanup afterwards; the test's cost in
``durations.json``) and ``kubectl`` (the real kubectl of the cluster's version)."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Generator
from contextlib import nullcontext
from pathlib import Path
from typing import Iterator

import allure
import pytest

from ..cluster.kind import wait_for_creations
from ..cluster.kube import CASE_LABEL, RUN_LABEL
from ..evidence.kubectl import KubectlNotFound, kubectl_for
from ..judge.measurements import Judge, MeasurementLog
from ..record.hostload import DurationLog, HostLoad, Pressure, Stopwatch, stall_counter
from ..record.recorder import Recorder
from ..report.artifacts import gather, slug, write
from ..run.minors import off_minor
from ..run.plan import DURATIONS_FILE, HEAVY_SLOTS
from ..run.scenario import Scenario
from ..run.selection import cases_of
from .clusters import (_FIRST_PHASE, PLAN, ClusterInfo, Clusters, clusters_of, heavy_slot, hold_node, let_go_of_finished,
                       profile_name, profile_settings, room_profiles, wait_for_first_phase)
from .options import _reports, run_id
from .outcomes import CALL_REPORT, FILES, SCENARIO, published, test_folder

log = logging.getLogger("e2e")


@pytest.fixture(scope="session")
def clusters(pytestconfig: pytest.Config) -> Clusters:
    """Every profile's cluster of this process (:class:`Clusters`)."""
    return clusters_of(pytestconfig)


@pytest.fixture
def cluster(request: pytest.FixtureRequest, clusters: Clusters) -> Iterator[ClusterInfo]:
    """The cluster of the test's profile (``@pytest.mark.profile``), created or reused; or the
    ``--kubeconfig`` cluster. Stops the whole run with a clear message when Docker, kind or
    the default cluster is missing. A ``serial`` test has its cluster alone — one of its
    profile's copies (e2e.run.plan), or in the rooms cluster its room, or every room when its fault
    reaches beyond its node — for the whole test; a ``heavy`` one holds one of the run's
    heavy slots; a ``traffic`` test of a concurrent run waits first for every test of the run's
    first phase to end (e2e.run.plan). Before the test starts, every cluster creation in
    progress ends (a judged window never begins during one). On a ``--kubeconfig`` cluster a test
    whose ``k8s_minors`` leave out the cluster's minor is skipped for that before any placement."""
    item = request.node
    if request.config.getoption("--kubeconfig", None):  # its minor before its profile's placement: the first reason
        base = clusters.connection()
        off = off_minor(item, base.minor, base.kubernetes)
        if off is not None:
            pytest.skip(off)
    name = profile_name(item)
    serial = item.get_closest_marker("serial") is not None
    plan = request.config.stash.get(PLAN, None)
    lanes = (plan.lanes.get(name) if plan else None) or [0]
    if plan is not None and item.nodeid in plan.second_phase:
        waited = wait_for_first_phase(request.config.stash[_FIRST_PHASE], plan.first_phase_s + 600)
        log.info("%s waited %.0f s for the first phase to end", item.nodeid, waited)
    let_go_of_finished(request.config, request.session.testsfailed > 0)  # e.g. the rooms cluster, done meanwhile
    every_room = room_profiles(request.config) if plan is not None and item.nodeid in plan.every_room else ()
    with hold_node(request.config, name, lanes, serial, every_room) as replica:
        info = clusters.get(name, replica, profile_settings(item))
        with heavy_slot(HEAVY_SLOTS) if item.get_closest_marker("heavy") else nullcontext():
            waited = wait_for_creations()
            if waited > 1:
                log.info("%s waited %.0f s for cluster creations in progress", item.nodeid, waited)
            yield info


@pytest.fixture(scope="session")
def host_load() -> Generator[HostLoad, None, None]:
    """The host's CPU pressure (:class:`~e2e.record.hostload.HostLoad`), sampled every second in
    this process from the first scenario to the end of the session."""
    host = HostLoad(stall_counter()).start()
    yield host
    host.stop()


@pytest.fixture
def kubectl(cluster: ClusterInfo) -> str:
    """Path of the real kubectl of the test's cluster's version (:func:`e2e.evidence.kubectl.kubectl_for`:
    ``$E2E_KUBECTL``, else copied out of the kind node, cached per version); run it with
    :func:`e2e.evidence.kubectl.run`, pointed at the test's cluster by :func:`e2e.evidence.kubectl.kubectl_flags`,
    e.g. ``run([kubectl, *kubectl_flags(sc.kube), "-n", sc.namespace, "get", "pods"], timeout_s=30)``. Skips the test (``environment: …``) when
    there is none (a ``--kubeconfig`` cluster without ``$E2E_KUBECTL``)."""
    try:
        return str(kubectl_for(cluster.kubernetes, cluster.kind))
    except KubectlNotFound as e:
        pytest.skip(f"environment: {e}")


def _broken(request: pytest.FixtureRequest, clusters: Clusters, cluster: ClusterInfo, reason: str) -> None:
    """A fault left ``cluster`` broken (``reason``, e2e.faults.core): a kind cluster of the run is
    replaced (:meth:`Clusters.replace_broken`); a ``--kubeconfig`` one is never deleted or
    replaced, so the run stops after this test (``session.shouldstop``) with ``reason``: the
    node's state and the next step (:func:`e2e.faults.core.stranded`)."""
    clusters.replace_broken(cluster.profile, cluster.replica, reason, _reports(request.config) / run_id() / "kind-logs")
    if cluster.kind is None:
        request.session.shouldstop = f"pod-lifecycle-e2e: {reason}"


def _namespace_name(item: pytest.Item) -> str:
    base = slug(item.name.lower()).replace("_", "-").replace(".", "-")
    return f"e2e-{base[:40].strip('-')}-{secrets.token_hex(3)}"

@pytest.fixture
def scenario(request: pytest.FixtureRequest, cluster: ClusterInfo, host_load: HostLoad):
    """A fresh namespace (labelled with the run id and case), a recorder already watching it,
    and a judge for this test; reports and cleanup afterwards, also on failure and Ctrl-C.

    The test starts once it has its node (a ``serial`` one waits for it first): the judge's
    host-pressure windows start there, and the test's wall time, CPU time and pressure up to
    the end of its cleanup go to ``durations.json`` when its body ran to an end."""
    item = request.node
    cases = cases_of(item)
    for m in item.iter_markers("min_k8s"):
        if cluster.minor < m.args[0]:
            pytest.skip(f"needs Kubernetes 1.{m.args[0]}+, cluster is {cluster.kubernetes}")
    off = off_minor(item, cluster.minor, cluster.kubernetes)  # k8s_minors when the image did not say (e2e.run.minors)
    if off is not None:
        pytest.skip(off)
    allure.dynamic.parameter("kubernetes", cluster.kubernetes)
    item.user_properties.append(("kubernetes", cluster.kubernetes))
    allure.dynamic.parameter("profile", cluster.profile)
    item.user_properties.append(("profile", cluster.profile))

    watch = Stopwatch()
    yield from _scenario(request, cluster, item, cases, lambda: host_load.window(watch.started))
    if CALL_REPORT in item.stash:
        DurationLog(_reports(request.config) / DURATIONS_FILE).record(item.nodeid, watch.stop(host_load), run_id())


def _scenario(request: pytest.FixtureRequest, cluster: ClusterInfo, item: pytest.Item, cases: list[str],
              host: Callable[[], Pressure | None]):
    ns = _namespace_name(item)
    labels = {RUN_LABEL: run_id()}
    if cases:
        labels[CASE_LABEL] = cases[0]
    kinds = [k for m in item.iter_markers("record") for k in m.args] or ["Pod", "Event"]
    clusters = request.getfixturevalue("clusters")
    recorder = Recorder(cluster.kube.api_client, ns, kinds)
    judge = Judge(
        MeasurementLog(_reports(request.config) / "measurements.json"),
        test=item.nodeid,
        run_id=run_id(),
        kubernetes=cluster.kubernetes,
        minor=cluster.minor,
        cgroup=cluster.cgroup,
        host=host,
        attempt=getattr(item, "execution_count", 1),  # pytest-rerunfailures counts the runs of a test
    )
    sc = Scenario(cluster.kube, ns, recorder, judge, Path(item.path).parent, cluster.minor, cluster.cgroup, cluster.kind,
                  access=cluster.access, profile=cluster.profile, facts=cluster.facts,
                  nodes=cluster.placement(item.nodeid), tolerations=cluster.tolerations, elsewhere=cluster.elsewhere,
                  on_broken=lambda reason: _broken(request, clusters, cluster, reason))
    judge.context = sc.timeline_excerpt
    item.stash[SCENARIO] = sc
    # the cleanup is armed before the namespace is asked for: a Ctrl-C or failure while it is
    # created, its default ServiceAccount awaited or the recorder started deletes it too
    ready = False
    try:
        cluster.kube.create_namespace(ns, labels)
        recorder.start()
        ready = True
        yield sc
    finally:
        recorder.stop()
        if ready:
            _finish(request, item, sc)
        else:  # nothing ran in it: no report, only the namespace (if it was created) to delete
            cluster.kube.delete_namespace(ns)


def _finish(request: pytest.FixtureRequest, item: pytest.Item, sc: Scenario) -> None:
    """After the test: its files in its folder (a failed one's with its failure); then the
    namespace's cleanup."""
    rep = item.stash.get(CALL_REPORT, None)
    failed = rep is None or rep.failed
    try:
        files = item.stash.get(FILES, None)
        if files is None:  # the test body never finished (interrupted)
            files = gather(sc, item.nodeid)
            published(item, files)
        if failed and rep is not None:
            files = {**files, "failure.txt": str(rep.longrepr)}
        write(files, test_folder(item))
    finally:
        sc.clean_up(keep_namespace=failed and request.config.getoption("--keep-namespaces"))
