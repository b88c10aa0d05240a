"""The plugin's options and run-wide set-up: the command-line options, the markers, the reports'
defaults, the run id, live progress and the run summary (see :mod:`e2e.plugin`)."""

from __future__ import annotations

import datetime as dt
import os
import secrets
from pathlib import Path

import pytest

from ..report.summary import RunSummary
from ..run.progress import LiveProgress
from ..run.waiting import set_observer


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
    "serial: must not share a node with other scenarios (under xdist: one of its profile's cluster copies alone, e2e.run.plan)",
    "heavy: HTTP load, filling a disk, allocating memory or many pods: few at once (E2E_HEAVY_SLOTS, e2e.run.plan)",
    "min_k8s(minor): needs Kubernetes 1.<minor> or newer",
    "record(*kinds): what the recorder watches (default Pod, Event; also EndpointSlice, Job, Deployment, "
    "ReplicaSet, PodDisruptionBudget, Node, Lease: the kube-node-lease heartbeats)",
    "profile(name): the cluster profile the test needs (profiles/<name>.yaml; default: kind-config.yaml as is)",
)


@pytest.hookimpl(tryfirst=True)  # before junitxml's and allure's own pytest_configure read the options
def pytest_configure(config: pytest.Config) -> None:
    for line in MARKERS:
        config.addinivalue_line("markers", line)
    if getattr(config.option, "maxschedchunk", 0) is None:
        # pytest-xdist's load scheduling sends each worker two tests, then one at a time: the
        # plan's longest-first order holds (e2e.run.plan)
        config.option.maxschedchunk = 1
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



def run_id() -> str:
    return os.environ["E2E_RUN_ID"]


def _reports(config: pytest.Config) -> Path:
    return Path(config.getoption("--reports-dir")).resolve()



def _is_controller(config: pytest.Config) -> bool:
    return not hasattr(config, "workerinput")
