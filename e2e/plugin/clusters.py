"""The clusters of a run: the preflight, one cluster per profile made on first use and shared
(:class:`Clusters`, see :mod:`e2e.plugin`), a node shared or held alone, and the clusters
released after a profile's last test and at the end of the run."""

from __future__ import annotations

import fcntl
import logging
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from kubernetes.client.exceptions import ApiException

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
from ..cluster.images import ENV_VARS, missing_on_nodes, workload_images
from ..cluster.kube import ClusterUnreachable, Kube
from .options import _is_controller, _reports, run_id
from .signals import SIGNALS

log = logging.getLogger("e2e")


# Seconds the preflight waits for images missing from the nodes' status.images: the kubelet
# lists an image loaded a moment ago (`kind load`) only at its next image-list refresh (~30 s)
IMAGE_LIST_WAIT_S = 45.0
IMAGE_LIST_POLL_S = 5.0


def _check_workload_images(kube: Kube, config: pytest.Config) -> None:
    """On a ``--kubeconfig`` cluster the workload images must already be on the nodes
    (manifests use ``imagePullPolicy: Never``): one ``PreflightError`` naming what is missing
    where, instead of every test timing out on ``ErrImageNeverPull``. What the nodes do not list
    yet is awaited for :data:`IMAGE_LIST_WAIT_S` s first (and said so)."""
    images = workload_images()
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



# Tests left per profile in this process (for releasing a cluster after its last test).
_TESTS_LEFT = pytest.StashKey[Counter]()
_CLUSTERS = pytest.StashKey["Clusters"]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    """Without xdist: once the last test of a profile other than the default is torn down
    (also when its teardown failed), delete that profile's cluster if this run created it
    (unless --keep-cluster), so that a run does not keep several clusters on the machine. With
    xdist the controller deletes them at the end (no worker knows what the others still need)."""
    try:
        return (yield)
    finally:
        _release_after_last(item)


def _release_after_last(item: pytest.Item) -> None:
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



@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Controller only, after every worker: export kind logs when something failed (not
    after Ctrl-C), then delete every cluster this run created, whatever its profile (unless
    --keep-cluster, which sweeps this run's namespaces instead). On a --kubeconfig cluster,
    sweep this run's namespaces: those of tests whose worker was stopped before its teardown
    (xdist ends a worker that is not done within seconds of a Ctrl-C or SIGTERM)."""
    config = session.config
    if not _is_controller(config):
        return
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
        stop = config.pluginmanager.get_plugin(SIGNALS)
        for kind in kinds:
            for again in (False, True):
                ignored = stop.ignored if stop is not None else 0
                try:
                    _finish_cluster(config, kind)
                    break
                except Exception as e:  # noqa: BLE001 - the next cluster is still deleted
                    # a Ctrl-C ignored meanwhile (e2e.plugin.signals) reached `kind delete` too, a
                    # process of the terminal's group: it may have cut it short, once more then
                    cut = not again and stop is not None and stop.ignored > ignored
                    log.warning("finishing kind cluster %s failed%s: %s", kind.name, " (cut by Ctrl-C: once more)" if cut else "", e)
                    if not cut:
                        break
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
            _sweep_namespaces(config, Kube(str(kind.kubeconfig)))
        except Exception as e:  # noqa: BLE001
            log.warning("sweeping namespaces of run %s failed: %s", run_id(), e)
        return
    kind.delete_unless_used()


def _sweep_namespaces(config: pytest.Config, kube: Kube) -> None:
    """Delete this run's namespaces left on a cluster that stays (unless --keep-namespaces)."""
    if config.getoption("--keep-namespaces"):
        return
    for ns in kube.namespaces_of_run(run_id()):
        kube.delete_namespace(ns)
