"""The pytest plugin: options, the shared cluster, a namespace + recorder + judge per test,
reports, and cleanup that survives failures and Ctrl-C.

Options (``pytest --help``, group "pod-lifecycle-e2e"):
  --node-image IMG         kind node image of the profile
  --kind-config FILE       kind config of the profile (default: kind-config.yaml)
  --profile-patch FILE     kind config merged over it (repeatable; the offline build's patch)
  --kubeconfig FILE        use an existing cluster instead of kind (with --context)
  --keep-cluster           do not delete the kind cluster at the end
  --keep-namespaces        keep the namespaces of failed tests
  --reports-dir DIR        where measurements.json and artifacts go (default: reports); a run
                           with a cluster also writes junit.xml and allure-results/ there
                           (cleaned per run) unless --junitxml / --alluredir say otherwise
  --case IDS               only the tests judging these case IDs or families (CL-1,SC-3 / CL)

Case IDs are keywords too: ``-k CL-1``, ``-k CL`` select exactly the tests judging them
(:mod:`e2e.run.selection`). ``--collect-only`` and ``--help`` need no cluster and no Docker.

The run id (``E2E_RUN_ID``, made by the first process and inherited by xdist workers) labels
every namespace and measurement. A test runs on the cluster of its profile
(``@pytest.mark.profile("name")``: ``profiles/<name>.yaml`` merged over the kind config and
patches above; ``default`` without the marker). Each profile's cluster is created lazily by the
first test that needs it, under a file lock, shared by every worker, and deleted in the
controller's ``pytest_sessionfinish`` by the run that created it.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import logging
import os
import secrets
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import allure
import pytest
from kubernetes.client.exceptions import ApiException

from .. import documented  # noqa: F401  (registers every family's expectations)
from ..cluster import egress
from ..cluster.kind import (
    DEFAULT_PROFILE,
    STATE_DIR,
    Kind,
    PreflightError,
    Profile,
    check_docker,
    hold_run,
    owned_clusters,
    profile_patches,
)
from ..faults.core import ClusterBroken
from ..cluster.images import ENV_VARS, missing_on_nodes, workload_images
from ..cluster.kube import CASE_LABEL, RUN_LABEL, ClusterUnreachable, Kube
from ..judge.measurements import BUG_FIXED_PREFIX, BUG_PRESENT, ExpectationFailed, Judge, MeasurementLog
from ..run.progress import LiveProgress
from ..record.recorder import Recorder, RecorderDied
from ..report.artifacts import gather, publish, slug, write
from ..run.scenario import Scenario
from ..run.selection import cases_of, label, select_cases, select_keyword
from ..report.summary import UNDOCUMENTED_PREFIX, RunSummary
from ..run.waiting import set_observer

log = logging.getLogger("e2e")


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("pod-lifecycle-e2e")
    g.addoption("--node-image", default=os.environ.get("E2E_NODE_IMAGE"), help="kind node image of the cluster profile")
    g.addoption("--kind-config", default=None, help="kind config file (default: kind-config.yaml in the rootdir)")
    g.addoption(
        "--profile-patch",
        action="append",
        default=[p for p in os.environ.get("E2E_PROFILE_PATCH", "").split(":") if p],
        help="kind config merged over --kind-config (repeatable; default: E2E_PROFILE_PATCH, ':'-separated)",
    )
    g.addoption("--kubeconfig", default=None, help="use the existing cluster of this kubeconfig instead of kind")
    g.addoption("--context", default=None, help="kubeconfig context (with --kubeconfig)")
    g.addoption("--keep-cluster", action="store_true", help="keep the kind cluster after the run")
    g.addoption("--keep-namespaces", action="store_true", help="keep the namespaces of failed tests")
    g.addoption(
        "--reports-dir",
        default="reports",
        help="directory for measurements.json, artifacts and (unless --junitxml/--alluredir) junit.xml and allure-results/",
    )
    g.addoption("--case", default=None, metavar="IDS",
                help="only tests judging these CASES.md case IDs or families, comma-separated (CL-1,SC-3 or CL)")


# the markers a scenario test uses, registered wherever its file lives (your own test folder too)
MARKERS = (
    "case(*ids): CASES.md case IDs this test checks (CL-1, SC-3, ...)",
    "serial: must not share a node with other scenarios",
    "min_k8s(minor): needs Kubernetes 1.<minor> or newer",
    "record(*kinds): what the recorder watches (default Pod, Event; also EndpointSlice, Job, Deployment, "
    "ReplicaSet, PodDisruptionBudget, Node, Lease: the kube-node-lease heartbeats)",
    "profile(name): the cluster profile the test needs (profiles/<name>.yaml; default: kind-config.yaml as is)",
)


@pytest.hookimpl(tryfirst=True)  # before junitxml's and allure's own pytest_configure read the options
def pytest_configure(config: pytest.Config) -> None:
    for line in MARKERS:
        config.addinivalue_line("markers", line)
    if (config.getoption("--node-image") or config.getoption("--kubeconfig")) and not config.option.collectonly:
        # a run with a cluster writes the same reports however it is started (make e2e, or
        # pytest directly): junit.xml and allure-results/ in --reports-dir unless given
        # (--collect-only lists the cases without touching the last run's reports)
        reports = _reports(config)
        if not config.option.xmlpath:
            config.option.xmlpath = str(reports / "junit.xml")
        if not config.option.allure_report_dir:
            config.option.allure_report_dir = str(reports / "allure-results")
            # cleaned once, by the controller, before any xdist worker writes its results
            config.option.clean_alluredir = _is_controller(config)
    if not os.environ.get("E2E_RUN_ID"):
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        os.environ["E2E_RUN_ID"] = f"{stamp}-{secrets.token_hex(2)}"
    live = LiveProgress(config)
    config.pluginmanager.register(live, "e2e-live-progress")
    set_observer(live)
    if _is_controller(config) and not config.option.collectonly:
        config.pluginmanager.register(RunSummary(_reports(config), run_id()), "e2e-run-summary")


def pytest_unconfigure(config: pytest.Config) -> None:
    set_observer(None)


def _check_workload_images(kube: Kube) -> None:
    """On a ``--kubeconfig`` cluster the workload images must already be on the nodes
    (manifests use ``imagePullPolicy: Never``): one ``PreflightError`` naming what is missing
    where, instead of every test timing out on ``ErrImageNeverPull``."""
    images = workload_images()
    try:
        nodes = kube.nodes()
    except ApiException as e:  # e.g. 403: this user may not list nodes; the tests will tell
        log.warning("cannot list nodes to check the workload images (%s %s); not checked", e.status, e.reason)
        return
    missing = missing_on_nodes(nodes, images)
    if not missing:
        return
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
    clear message and exit code 4, no test errors."""
    try:
        profile = profile_of(config)
        if profile is None:
            kube = Kube(config.getoption("--kubeconfig"), config.getoption("--context"))
            kube.version()
            _check_workload_images(kube)
        else:
            profile.config()
            check_docker()
            Kind.of(profile)  # finds the kind binary
    except (PreflightError, ClusterUnreachable) as e:
        pytest.exit(f"pod-lifecycle-e2e cannot run: {e}", returncode=4)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    config = session.config
    configured = config.getoption("--node-image") or config.getoption("--kubeconfig")
    if _is_controller(config) and configured and not config.option.collectonly:
        _preflight(config)


@pytest.hookimpl(tryfirst=True)  # before pytest's own -k (see e2e.run.selection)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    label(items)
    select_cases(config, items)
    select_keyword(config, items)
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


# Tests left per profile in this process (for releasing a cluster after its last test).
_TESTS_LEFT = pytest.StashKey[Counter]()
_CLUSTERS = pytest.StashKey["Clusters"]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    """Without xdist: once the last test of a profile other than the default is torn down,
    delete that profile's cluster if this run created it (unless --keep-cluster), so that a
    run does not keep several clusters on the machine. With xdist the controller deletes them
    at the end (no worker knows what the others still need)."""
    yield
    config = item.config
    if not _is_controller(config) or "cluster" not in getattr(item, "fixturenames", ()):
        return
    name = profile_name(item)
    left = config.stash[_TESTS_LEFT]
    left[name] -= 1
    clusters = config.stash.get(_CLUSTERS, None)
    if left[name] == 0 and name != DEFAULT_PROFILE and clusters is not None and not config.getoption("--keep-cluster"):
        logs = _reports(config) / run_id() / "kind-logs" if item.session.testsfailed else None
        clusters.release(name, logs)


def run_id() -> str:
    return os.environ["E2E_RUN_ID"]


def _reports(config: pytest.Config) -> Path:
    return Path(config.getoption("--reports-dir")).resolve()


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


def _profiles_dir(config: pytest.Config) -> Path:
    """``profiles/`` of the rootdir, else the suite's own (like :func:`_default_kind_config`)."""
    here = config.rootpath / "profiles"
    suite = Path(__file__).resolve().parents[2] / "profiles"
    return here if here.is_dir() or not suite.is_dir() else suite


def profile_of(config: pytest.Config, name: str = DEFAULT_PROFILE) -> Profile | None:
    """The kind profile ``name`` from the options (``profiles/<name>.yaml`` merged over the
    kind config and ``--profile-patch`` files), or ``None`` when ``--kubeconfig`` names a
    cluster. ``PreflightError`` for an unknown profile."""
    if config.getoption("--kubeconfig"):
        return None
    image = config.getoption("--node-image")
    if not image:
        raise pytest.UsageError("--node-image (or E2E_NODE_IMAGE) is required unless --kubeconfig is given")
    kind_config = config.getoption("--kind-config") or _default_kind_config(config)
    patches = tuple(Path(p) for p in config.getoption("--profile-patch")) + profile_patches(_profiles_dir(config), name)
    return Profile(Path(kind_config), image, patches, name)


@dataclass
class ClusterInfo:
    """The cluster of one profile, shared by every test of the run that asks for it."""

    kube: Kube
    kubernetes: str
    minor: int
    cgroup: int | None
    kind: Kind | None
    profile: str = DEFAULT_PROFILE


def _cgroup_version(kind: Kind | None) -> int | None:
    if kind is None:
        return None
    fs = kind.node_exec("stat", "-fc", "%T", "/sys/fs/cgroup").strip()
    return 2 if fs == "cgroup2fs" else 1


class Clusters:
    """The clusters of this process, one per profile, each made on first use (see module doc)."""

    def __init__(self, config: pytest.Config):
        self._config = config
        self._ready: dict[str, ClusterInfo] = {}
        self._failed: dict[str, str] = {}

    def get(self, name: str) -> ClusterInfo:
        """The cluster of profile ``name``. The default profile's failure stops the run (exit 4);
        another profile's failure errors the tests that need it, each with the same message."""
        if name in self._ready:
            return self._ready[name]
        if name in self._failed:
            pytest.fail(self._failed[name], pytrace=False)
        try:
            self._ready[name] = self._connect(name)
        except Exception as e:  # noqa: BLE001 - one clear message instead of one traceback per test
            what = "cannot run" if isinstance(e, (PreflightError, ClusterUnreachable)) else f"cannot set up the cluster: {type(e).__name__}:"
            msg = f"pod-lifecycle-e2e {what} {e}" if name == DEFAULT_PROFILE else f"profile {name}: pod-lifecycle-e2e {what} {e}"
            if name == DEFAULT_PROFILE:
                pytest.exit(msg, returncode=4)
            self._failed[name] = msg
            pytest.fail(msg, pytrace=False)
        return self._ready[name]

    def release(self, name: str, logs: Path | None = None) -> None:
        """Delete profile ``name``'s cluster now if this run created it (see module doc),
        after exporting its kind logs to ``logs/<cluster>`` when ``logs`` is given."""
        info = self._ready.pop(name, None)
        if info is not None and info.kind is not None and info.kind.owned_by(run_id()):
            log.warning("profile %s: no test left, deleting kind cluster %s", name, info.kind.name)
            try:
                if logs is not None:
                    info.kind.export_logs(logs / info.kind.name)
                info.kind.delete_unless_used()
            except PreflightError as e:
                log.warning("deleting kind cluster %s failed (the end of the run tries again): %s", info.kind.name, e)

    def replace_broken(self, name: str, reason: str, logs: Path) -> None:
        """Profile ``name``'s cluster did not recover from a fault (``reason``, e2e.faults): export
        its kind logs to ``logs/<cluster>-broken``, mark it broken (whoever ensures it next
        recreates it: :meth:`e2e.cluster.kind.Kind.ensure`), delete it unless another run uses it, and
        forget it here, so that the next test of the profile gets a new cluster — never this one."""
        info = self._ready.pop(name, None)
        if info is None or info.kind is None:
            return
        kind = info.kind
        try:
            kind.export_logs(logs / f"{kind.name}-broken")
        except Exception as e:  # noqa: BLE001 - the replacement matters more than the logs
            log.warning("kind export logs of broken cluster %s failed: %s", kind.name, e)
        kind.mark_broken(reason)
        try:
            kind.delete_unless_used()
        except PreflightError as e:
            log.warning("deleting broken cluster %s failed (the next ensure recreates it): %s", kind.name, e)

    def _connect(self, name: str) -> ClusterInfo:
        hold_run(run_id())  # `make clean` leaves this run's namespaces alone while it lives
        profile = profile_of(self._config, name)
        kind = None
        if profile is None:
            if name != DEFAULT_PROFILE:
                pytest.skip(f"needs a kind cluster of profile {name} (not available with --kubeconfig)")
            kubeconfig, context = self._config.getoption("--kubeconfig"), self._config.getoption("--context")
        else:
            check_docker()
            kind = Kind.of(profile)
            started = time.monotonic()
            kubeconfig, context = str(kind.ensure(profile, run_id(), list(workload_images().values()))), None
            log.info("cluster %s (profile %s) ready in %.1f s", kind.name, name, time.monotonic() - started)
        kube = Kube(kubeconfig, context)
        version = kube.version()
        return ClusterInfo(kube, version.git_version, version.minor, _cgroup_version(kind), kind, name)


@pytest.fixture(scope="session")
def clusters(pytestconfig: pytest.Config) -> Clusters:
    """Every profile's cluster of this process (:class:`Clusters`)."""
    pytestconfig.stash[_CLUSTERS] = Clusters(pytestconfig)
    return pytestconfig.stash[_CLUSTERS]


@pytest.fixture
def cluster(request: pytest.FixtureRequest, clusters: Clusters) -> ClusterInfo:
    """The cluster of the test's profile (``@pytest.mark.profile``), created or reused; or the
    ``--kubeconfig`` cluster. Stops the whole run with a clear message when Docker, kind or
    the default cluster is missing."""
    return clusters.get(profile_name(request.node))


@contextmanager
def node_share(cluster: ClusterInfo, serial: bool):
    """Share the cluster's node with other workers' tests, or (``serial``) have it alone.

    A shared ``flock`` for ordinary tests, an exclusive one for ``serial`` ones, on one lock
    file per cluster: with pytest-xdist a serial scenario waits for the running ones and
    blocks new ones while it runs.
    """
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    name = cluster.kind.name if cluster.kind else run_id()
    with open(STATE_DIR / f"{name}.node.lock", "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX if serial else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _namespace_name(item: pytest.Item) -> str:
    base = slug(item.name.lower()).replace("_", "-").replace(".", "-")
    return f"e2e-{base[:40].strip('-')}-{secrets.token_hex(3)}"


SCENARIO = pytest.StashKey[Scenario]()
CALL_REPORT = pytest.StashKey[pytest.TestReport]()
FILES = pytest.StashKey[dict]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call):
    outcome = yield
    rep = outcome.get_result()
    if call.excinfo is not None and rep.failed and isinstance(call.excinfo.value, (ExpectationFailed, RecorderDied, ClusterBroken)):
        # the explanation names the test's own lines ("judged at"): no framework traceback
        rep.longrepr = f"{call.excinfo.typename}: {call.excinfo.value}"
    if rep.when == "call":
        item.stash[CALL_REPORT] = rep


def settle(outcome, sc: Scenario, item: pytest.Item) -> None:
    """The one outcome policy, applied to every scenario whatever its body did.

    A body that failed keeps its failure. Otherwise — also when the body called
    ``pytest.skip``/``pytest.xfail`` after judging values — in this order:
    a dead recorder fails the test (``RecorderDied``); any failed value fails it
    (``ExpectationFailed``, every value explained); a value with nothing documented for this
    cluster ends it **skipped**, reason ``undocumented: …`` (shown as UNDOCUMENTED); a known
    bug's correct value ends it skipped, reason ``bug no longer present — fixed on this
    version? …`` (shown as BUG FIXED?); a value set aside for the environment ends it skipped
    (``environment: …``); a flake ends it xfailed (``flake: …``); else the body's own
    skip/xfail or pass stands — a pass with known bugs present marked so (``known_bug``
    property, allure label, terminal section).
    """
    excinfo = outcome.excinfo
    body_exc = excinfo[1] if excinfo else None
    if body_exc is not None and not isinstance(body_exc, (pytest.skip.Exception, pytest.xfail.Exception)):
        return
    try:
        sc.recorder.check()
        sc.judge.verify()
    except (AssertionError, RecorderDied) as e:
        outcome.force_exception(e)
        return
    verdict = sc.judge.outcome()
    if verdict is None:
        return
    kind, reason = verdict
    if kind == BUG_PRESENT:
        item.user_properties.append(("known_bug", reason))
        allure.dynamic.label("known_bug", "present")
        allure.dynamic.tag("known bug present")
        return
    if body_exc is not None:
        reason += f" (the test also said: {body_exc})"
    item.user_properties.append(("outcome", kind))
    if kind == "flake":
        outcome.force_exception(pytest.xfail.Exception(reason))
    else:
        outcome.force_exception(pytest.skip.Exception(reason, _use_item_location=True))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item):
    """Settle the outcome from the judged values (:func:`settle`), then attach the record to
    the test's allure result (also when the body failed)."""
    outcome = yield
    sc = item.stash.get(SCENARIO, None)
    if sc is None:
        return
    settle(outcome, sc, item)
    for name, value in sc.properties:
        item.user_properties.append((name, value))
        allure.dynamic.parameter(name, value)
    item.stash[FILES] = gather(sc, item.nodeid)
    publish(sc.judge, item.stash[FILES], item.obj.__doc__)


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return ""


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config):
    """A test skipped for undocumented values counts as ``undocumented`` (letter U) in the
    progress and the final line, apart from environment skips; one that measured a known bug's
    correct value as ``bug fixed?`` (letter B)."""
    if report.when == "call" and report.skipped and not hasattr(report, "wasxfail"):
        if _skip_reason(report).startswith(UNDOCUMENTED_PREFIX):
            return "undocumented", "U", "UNDOCUMENTED"
        if _skip_reason(report).startswith(BUG_FIXED_PREFIX):
            return "bug fixed?", "B", "BUG FIXED?"
    return None


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    reports = terminalreporter.stats.get("undocumented", [])
    if reports:
        terminalreporter.section("undocumented values (measured, nothing documented for this cluster: not a pass)")
        for rep in reports:
            terminalreporter.line(f"UNDOCUMENTED {rep.nodeid}: {_skip_reason(rep)}")
    fixed = terminalreporter.stats.get("bug fixed?", [])
    if fixed:
        terminalreporter.section("known upstream bugs no longer present (the correct behaviour was measured: check the fix)")
        for rep in fixed:
            terminalreporter.line(f"BUG FIXED? {rep.nodeid}: {_skip_reason(rep)}")
    present = [(rep.nodeid, value) for rep in terminalreporter.stats.get("passed", []) if rep.when == "call"
               for name, value in rep.user_properties if name == "known_bug"]
    if present:
        terminalreporter.section("known upstream bugs present (today's documented behaviour: passed)")
        for nodeid, reason in present:
            terminalreporter.line(f"KNOWN BUG {nodeid}: {reason}")


@pytest.fixture
def scenario(request: pytest.FixtureRequest, cluster: ClusterInfo):
    """A fresh namespace (labelled with the run id and case), a recorder already watching it,
    and a judge for this test; reports and cleanup afterwards, also on failure and Ctrl-C."""
    item = request.node
    cases = cases_of(item)
    for m in item.iter_markers("min_k8s"):
        if cluster.minor < m.args[0]:
            pytest.skip(f"needs Kubernetes 1.{m.args[0]}+, cluster is {cluster.kubernetes}")
    allure.dynamic.parameter("kubernetes", cluster.kubernetes)
    item.user_properties.append(("kubernetes", cluster.kubernetes))
    allure.dynamic.parameter("profile", cluster.profile)
    item.user_properties.append(("profile", cluster.profile))

    with node_share(cluster, serial=item.get_closest_marker("serial") is not None):
        yield from _scenario(request, cluster, item, cases)


def _scenario(request: pytest.FixtureRequest, cluster: ClusterInfo, item: pytest.Item, cases: list[str]):
    ns = _namespace_name(item)
    labels = {RUN_LABEL: run_id()}
    if cases:
        labels[CASE_LABEL] = cases[0]
    cluster.kube.create_namespace(ns, labels)
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
    )
    sc = Scenario(cluster.kube, ns, recorder, judge, Path(item.path).parent, cluster.minor, cluster.cgroup, cluster.kind,
                  profile=cluster.profile,
                  on_broken=lambda reason: clusters.replace_broken(cluster.profile, reason,
                                                                   _reports(request.config) / run_id() / "kind-logs"))
    judge.context = sc.timeline_excerpt
    item.stash[SCENARIO] = sc
    recorder.start()
    try:
        yield sc
    finally:
        recorder.stop()
        rep = item.stash.get(CALL_REPORT, None)
        failed = rep is None or rep.failed
        try:
            files = item.stash.get(FILES, None)
            if files is None:  # the test body never finished (interrupted)
                files = gather(sc, item.nodeid)
                publish(sc.judge, files, item.obj.__doc__)
            if failed:
                if rep is not None:
                    files = {**files, "failure.txt": str(rep.longrepr)}
                write(files, _reports(request.config) / run_id() / slug(item.nodeid))
        finally:
            sc.clean_up(keep_namespace=failed and request.config.getoption("--keep-namespaces"))


def _is_controller(config: pytest.Config) -> bool:
    return not hasattr(config, "workerinput")


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Controller only, after every worker: export kind logs when something failed (not
    after Ctrl-C), then delete every cluster this run created, whatever its profile (unless
    --keep-cluster, which sweeps this run's namespaces instead)."""
    config = session.config
    if not _is_controller(config) or config.getoption("--kubeconfig"):
        return
    try:
        kinds = [Kind(name) for name in owned_clusters(run_id())]
    except PreflightError:
        return
    interrupted = exitstatus == pytest.ExitCode.INTERRUPTED
    try:
        if kinds and (session.testsfailed > 0 or exitstatus not in (0, 5)) and not interrupted:
            for kind in kinds:
                dest = _reports(config) / run_id() / "kind-logs" / kind.name
                try:
                    kind.export_logs(dest)
                    log.warning("kind logs exported to %s", dest)
                except Exception as e:  # noqa: BLE001
                    log.warning("kind export logs of %s failed: %s", kind.name, e)
    finally:  # a Ctrl-C during the export still deletes the clusters
        for kind in kinds:
            try:
                _finish_cluster(config, kind)
            except Exception as e:  # noqa: BLE001 - the next cluster is still deleted
                log.warning("finishing kind cluster %s failed: %s", kind.name, e)
        if kinds or egress.prepared():
            _release_egress()


def _release_egress() -> None:
    """The host guard and the suite's network go with the last cluster on it (e2e.cluster.egress)."""
    try:
        if egress.release(STATE_DIR):
            log.info("egress guard and Docker network %s removed: no cluster left on it", egress.NETWORK)
    except Exception as e:  # noqa: BLE001 - `make clean` removes them later
        log.warning("removing the egress guard failed (`make clean` tries again): %s", e)


def _finish_cluster(config: pytest.Config, kind: Kind) -> None:
    if config.getoption("--keep-cluster"):
        log.warning("keeping kind cluster %s (kubeconfig %s)", kind.name, kind.kubeconfig)
        try:
            kube = Kube(str(kind.kubeconfig))
            for ns in kube.namespaces_of_run(run_id()):
                if not config.getoption("--keep-namespaces"):
                    kube.delete_namespace(ns)
        except Exception as e:  # noqa: BLE001
            log.warning("sweeping namespaces of run %s failed: %s", run_id(), e)
        return
    kind.delete_unless_used()
