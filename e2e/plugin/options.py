"""The plugin's options and run-wide set-up: the command-line options, the markers, the reports'
defaults and what a run leaves in them, the run id, live progress and the run summary (see
:mod:`e2e.plugin`)."""

from __future__ import annotations

import datetime as dt
import os
import re
import secrets
import shutil
from pathlib import Path

import pytest

from ..app.spec import AppInputError, AppSpec, load_app
from ..cluster.facts import ClusterFactsError, read_cluster_facts
from ..cli import htmlreport
from ..cluster.nodeaccess import parse_node_selector
from ..judge.measurements import MeasurementLog
from ..report import history
from ..report.summary import RunSummary
from ..run.progress import LiveProgress
from ..run.selection import parse_case_option
from ..run.shards import SHARD_FILE, parse_shard
from ..base.waiting import set_observer


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
    g.addoption("--node-agent", action="store_true",
                help="with --kubeconfig: enter the worker nodes through a privileged agent pod per node (hostPID, "
                     "hostNetwork, nsenter into PID 1) for node reads and node faults; never on a control-plane node "
                     "(e2e.cluster.nodeaccess). Without it a --kubeconfig run enters no node")
    g.addoption("--node-selector", default=None, metavar="LABEL=VALUE[,...]",
                help="with --node-agent: the agent pods and node faults only on the workers with all these labels "
                     "(e.g. topology.kubernetes.io/zone=zone-a); a test that needs another node is skipped naming it")
    g.addoption("--agent-image", default=None, metavar="IMAGE",
                help="the node agent's image: must be on every worker already (imagePullPolicy Never) and have "
                     "nsenter (default: the workload busybox, E2E_BUSYBOX_IMAGE)")
    g.addoption("--registry-image", default=None, metavar="IMAGE",
                help="with --kubeconfig: the image of the IM family's registry pod; must be on the nodes already "
                     "(imagePullPolicy Never; default: the tag hack/images/registry/build.sh builds, which make "
                     "foreign-cluster loads)")
    g.addoption("--cluster-facts", default=None, metavar="FILE",
                help="with --kubeconfig: a YAML file of what no node shows, e.g. controllerManager: "
                     "{node-monitor-grace-period: 50s, node-monitor-period: 5s} (e2e.cluster.facts "
                     "read_cluster_facts); without it the upstream defaults are assumed, and said so")
    g.addoption("--keep-cluster", action="store_true", help="keep the kind cluster after the run")
    g.addoption("--keep-namespaces", action="store_true", help="keep the namespaces of failed tests")
    g.addoption(
        "--reports-dir",
        default="reports",
        help="directory for measurements.json, artifacts and (unless --junitxml/--alluredir) junit.xml and allure-results/",
    )
    g.addoption("--case", default=None, metavar="IDS",
                help="only tests judging these CASES.md case IDs or families, comma-separated (CL-1,SC-3 or CL)")
    g.addoption("--app", action="append", default=[], metavar="DIR",
                help="your own app: a directory of manifests (a Deployment and its Service) and an optional app.yaml, "
                     "judged by apps/ (repeatable; default there: the two embedded examples/apps)")
    g.addoption("--rooms", action="store_true", default=os.environ.get("E2E_ROOMS") == "1",
                help="the default, crashloop-cap-20s, image-pulls and multi-node profiles as rooms (workers with their own "
                     "kubelet settings, label and taint) of one kind cluster instead of a cluster each (e2e.cluster.rooms; "
                     "default: E2E_ROOMS=1)")
    g.addoption("--shard", default=os.environ.get("E2E_SHARD") or None, metavar="I/N",
                help="run shard I of N of the selection, balanced by the tests' durations, each profile's tests "
                     "together where that is cheaper (e2e.run.shards; default: E2E_SHARD)")


# the apps of --app, read and checked before anything else (e2e.app.spec; apps/test_contracts.py)
APPS = pytest.StashKey[list[AppSpec]]()


def given_apps(config: pytest.Config) -> list[AppSpec]:
    """The apps of ``--app`` (none: an empty list), each read and checked — its images in the local
    Docker engine unless the run uses ``--kubeconfig`` (the nodes are checked then) or only
    collects: bad input is a usage error, one message and exit 4, before any cluster is made."""
    on_host = not config.getoption("--kubeconfig", None) and not config.option.collectonly
    apps = []
    for d in config.getoption("--app", None) or []:
        try:
            apps.append(load_app(d, check_images_on_host=on_host))
        except AppInputError as e:
            said = str(e).removeprefix(f"{Path(d).resolve()}: ")  # the directory is named once
            raise pytest.UsageError(f"pod-lifecycle-e2e: app {d} cannot run: {said}") from None
    return apps


# the facts file of --cluster-facts, read and checked before anything else (e2e.cluster.facts)
CLUSTER_FACTS = pytest.StashKey[dict]()


def given_cluster_facts(config: pytest.Config) -> dict:
    """The content of ``--cluster-facts`` (``{}`` without one); a file that cannot be used is a
    usage error naming the file and key (:func:`e2e.cluster.facts.read_cluster_facts`)."""
    path = config.getoption("--cluster-facts", None)
    if not path:
        return {}
    if not config.getoption("--kubeconfig", None):
        raise pytest.UsageError("pod-lifecycle-e2e: --cluster-facts is for a --kubeconfig cluster (the suite "
                                "knows the settings of the clusters it makes from their profiles)")
    try:
        return read_cluster_facts(Path(path))
    except ClusterFactsError as e:
        raise pytest.UsageError(f"pod-lifecycle-e2e: {e}") from None


# the markers a scenario test uses, registered wherever its file lives (your own test folder too)
MARKERS = (
    "case(*ids): CASES.md case IDs this test checks (CL-1, SC-3, ...)",
    "serial: must not share a node with other scenarios (under xdist: one of its profile's cluster copies alone, e2e.run.plan)",
    "heavy: HTTP load, filling a disk, allocating memory or many pods: few at once (E2E_HEAVY_SLOTS, e2e.run.plan)",
    "traffic: judges requests a Service served through a fault: in a concurrent run, after every other test (e2e.run.plan)",
    "min_k8s(minor): needs Kubernetes 1.<minor> or newer",
    "k8s_minors(*minors, reason=...): runs on Kubernetes 1.<minor> of these only (a gate profile valid there; as a "
    "module's pytestmark outside scenarios/, the minors a case of one's own claims: make test checks only those): "
    "skipped at collection by --node-image's tag, else at setup (e2e.run.minors)",
    "record(*kinds): what the recorder watches (default Pod, Event; also EndpointSlice, Job, Deployment, "
    "ReplicaSet, PodDisruptionBudget, Node, Lease: the kube-node-lease heartbeats)",
    "profile(name, needs=(settings...)): the cluster profile the test needs (profiles/<name>.yaml; default: kind-config.yaml "
    "as is); needs: the profile's kubelet settings the test depends on, by which a --kubeconfig cluster's nodes are chosen "
    "(default: all of them; (): none, the node count stays)",
    "node_faults(action, case=ID, window_s=S or {profile: S}): a change the test makes to a node (an action of "
    "e2e.faults.actions.ACTIONS), the case and its planned window (s); listed by hack/census.py --plan",
)


@pytest.hookimpl(tryfirst=True)  # before junitxml's and allure's own pytest_configure read the options
def pytest_configure(config: pytest.Config) -> None:
    for line in MARKERS:
        config.addinivalue_line("markers", line)
    if not os.environ.get("E2E_RUN_ID"):
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        os.environ["E2E_RUN_ID"] = f"{stamp}-{secrets.token_hex(2)}"  # as RUN_ID reads it
    if config.getoption("--case", None):
        parse_case_option(config.getoption("--case"))  # a malformed ID is refused before collection
    if config.getoption("--node-selector", None):
        if not config.getoption("--node-agent", None):
            raise pytest.UsageError("--node-selector names the nodes the node agent may enter: it needs --node-agent "
                                    "(and --kubeconfig)")
        try:
            parse_node_selector(config.getoption("--node-selector"))
        except ValueError as e:
            raise pytest.UsageError(str(e)) from None
    if config.getoption("--shard", None):
        try:
            parse_shard(config.getoption("--shard"))
        except ValueError as e:
            raise pytest.UsageError(str(e)) from None
    config.stash[APPS] = given_apps(config)
    config.stash[CLUSTER_FACTS] = given_cluster_facts(config)
    if getattr(config.option, "maxschedchunk", 0) is None:
        # pytest-xdist's load scheduling sends each worker two tests, then one at a time: the
        # plan's longest-first order holds (e2e.run.plan)
        config.option.maxschedchunk = 1
    if (config.getoption("--node-image") or config.getoption("--kubeconfig")) and not config.option.collectonly:
        # a run with a cluster writes the same reports however it is started (make e2e, or
        # pytest directly): junit.xml and allure-results/ in --reports-dir unless given
        # (--collect-only lists the cases without touching the last run's reports)
        staged = StagedReports(config, _reports(config))
        config.stash[STAGED] = staged.incoming
        if _is_controller(config):
            config.pluginmanager.register(staged, STAGED_REPORTS)
    live = LiveProgress(config)
    config.pluginmanager.register(live, "e2e-live-progress")
    set_observer(live)
    if _is_controller(config) and not config.option.collectonly:
        config.pluginmanager.register(RunSummary(_reports(config), run_id()), RUN_SUMMARY)


def pytest_unconfigure(config: pytest.Config) -> None:
    set_observer(None)


class StagedReports:
    """What a run with a cluster leaves in ``reports``: the reports of its own, never one of an
    earlier run beside them (README "What a run leaves"), and only when a test ran (reported).

    junit.xml and allure-results/ — in ``reports`` unless ``--junitxml``/``--alluredir`` say
    otherwise — go into ``reports/.incoming-<run id>/`` first and replace the last run's at the
    end. Then the rest follows (:meth:`publish`): ``measurements.json`` keeps this run's values only,
    which ``values-history.jsonl`` records (:func:`e2e.report.history.record`; a line of it that
    cannot be read is dropped and named at the end of the run), the folders of earlier runs
    (``reports/<run id>/``) and the last ``summary.md`` go, and the HTML
    report is built from this run's results (:func:`e2e.cli.htmlreport.build`; a passing run whose
    report cannot be made fails, exit 1). A run stopped by the preflight, an empty selection or a
    Ctrl-C before any test leaves the last run's reports (junit.xml, allure-results/, the HTML
    report, summary, measurements, folders) as they were, and says so. A shard's record
    (``--shard``, e2e.run.shards) is written at collection, not staged: a shard stopped before
    its first test still says what it was given (the merge tells its stale junit.xml by the run
    id, :func:`e2e.report.junit.run_id_of`); a run without ``--shard`` removes an earlier shard's.

    Made in every process (xdist workers get the controller's options, so the same paths);
    registered as a plugin in the controller only, which publishes them."""

    def __init__(self, config: pytest.Config, reports: Path):
        self.config, self.reports = config, reports
        self.incoming = reports / f".incoming-{run_id()}"
        self.staged: list[tuple[Path, Path]] = []  # (written to, published as)
        if not config.option.xmlpath:
            config.option.xmlpath = str(self.incoming / "junit.xml")
            self.staged.append((self.incoming / "junit.xml", reports / "junit.xml"))
        # where this run's allure results are once published (what its HTML report shows)
        self.results = Path(config.option.allure_report_dir or reports / "allure-results")
        if not config.option.allure_report_dir:
            config.option.allure_report_dir = str(self.incoming / "allure-results")
            self.staged.append((self.incoming / "allure-results", self.results))
        self.reported = False
        self.collected: int | None = None  # unknown with xdist (the workers collect)
        self.deselected = 0
        self.said: str | None = None  # what the end of the run says of its HTML report
        self.history_problems: list[str] = []  # lines of values-history.jsonl skipped (e2e.report.history)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # also the reports of the xdist workers' tests
        self.reported = True

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.deselected += len(items)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.collected = len(session.items) + self.deselected

    def publish(self) -> None:
        """Put this run's reports in place of the last run's (see class doc): a step of the run's
        end (e2e.plugin.runend), after every plugin's finish (junit.xml written, clusters deleted,
        kind logs exported), before the terminal summary (which writes summary.md). Nothing when
        no test reported."""
        if not self.reported:
            return
        self.reports.mkdir(parents=True, exist_ok=True)
        for written, published in self.staged:
            if written.exists():
                if published.is_dir():
                    shutil.rmtree(published)
                os.replace(written, published)
        log = MeasurementLog(self.reports / "measurements.json")
        log.keep_only(run_id())
        # the cluster facts of this run (e2e.plugin.clusters.record_facts), never an earlier run's
        facts = self.incoming / "facts.json"
        if facts.exists():
            os.replace(facts, self.reports / "facts.json")
        else:
            (self.reports / "facts.json").unlink(missing_ok=True)
        try:
            self.history_problems = history.record(self.reports, run_id(), log.read()["measurements"])
        except OSError as e:
            self.history_problems = [f"{history.HISTORY} not written: {e}"]
        (self.reports / "summary.md").unlink(missing_ok=True)  # this run's comes with the terminal summary
        for folder in self.reports.iterdir():
            if folder.is_dir() and RUN_ID.fullmatch(folder.name) and folder.name != run_id():
                shutil.rmtree(folder)
        if not self.config.getoption("--shard", None):
            # an earlier shard's record (e2e.run.shards): this run is no shard
            (self.reports / SHARD_FILE).unlink(missing_ok=True)

    def build_html(self, session: pytest.Session) -> None:
        """The run's HTML report from its published results (:func:`e2e.cli.htmlreport.build`), a
        step of the run's end after :meth:`publish`: a report that cannot be made (or a Ctrl-C
        while it is made) is said at the end, and fails a passing run. Nothing when no test
        reported."""
        if not self.reported:
            return
        try:
            self.said = htmlreport.said(htmlreport.build(self.reports, self.results))
        except (htmlreport.ReportError, OSError, KeyboardInterrupt) as e:
            stopped = isinstance(e, KeyboardInterrupt)  # Ctrl-C while it was made: the rest of the finish goes on
            self.said = (f"pod-lifecycle-e2e: the HTML report of the run not made: {'interrupted' if stopped else e} "
                         "(`make report` makes it)")
            if session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.INTERRUPTED if stopped else pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter) -> None:
        for problem in self.history_problems:
            terminalreporter.write_line(f"pod-lifecycle-e2e: values history: {problem}: skipped", yellow=True)
        if self.said is not None:
            terminalreporter.write_line(self.said, red=self.said.startswith("pod-lifecycle-e2e:"))
        if self.reported:
            return
        kept = f"the last run's reports in {self.reports} are left as they were"
        if self.collected and self.collected == self.deselected:
            option = self.config.option
            given = [f"{name} {value!r}" for name, value in
                     (("-m", option.markexpr), ("-k", option.keyword), ("--case", self.config.getoption("--case"))) if value]
            terminalreporter.write_line(f"pod-lifecycle-e2e: no test selected: {self.collected} collected, all deselected by "
                                        f"{' '.join(given) or 'the arguments'}; {kept}", yellow=True)
        else:
            terminalreporter.write_line(f"pod-lifecycle-e2e: no test ran: {kept}", yellow=True)

    def pytest_unconfigure(self) -> None:
        shutil.rmtree(self.incoming, ignore_errors=True)


# the names of the controller's StagedReports and RunSummary plugins (config.pluginmanager.get_plugin)
STAGED_REPORTS = "e2e-staged-reports"
RUN_SUMMARY = "e2e-run-summary"

# where a run with a cluster stages its reports (StagedReports.incoming), for what other parts add
STAGED = pytest.StashKey[Path]()

# a run id as pytest_configure makes it: the name of the run's folder in the reports directory
RUN_ID = re.compile(r"\d{8}-\d{6}-[0-9a-f]{4}")


def run_id() -> str:
    return os.environ["E2E_RUN_ID"]


def _reports(config: pytest.Config) -> Path:
    return Path(config.getoption("--reports-dir")).resolve()



def _is_controller(config: pytest.Config) -> bool:
    return not hasattr(config, "workerinput")
