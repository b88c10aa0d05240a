"""The fault protocol: inject, yield a :class:`FaultWindow`, always undo, then check the cluster.

Every fault of the suite (CASES-faults.md §3b, §5) is one :func:`fault` context manager::

    with kubelet_stopped(sc) as window:          # e2e.faults.components
        ...                                       # the test acts and records meanwhile
    window.injected_at, window.undone_at          # host wall-clock (epoch s)
    window.recovery.text()                        # what the health check saw

The protocol, in this order, whatever happens inside the ``with`` block (a failed value, a
timeout, Ctrl-C / ``KeyboardInterrupt``):

1. **inject** — ``injected_at`` is the host time the inject command returned;
2. **undo** — always, with SIGINT deferred meanwhile (a second Ctrl-C during the undo is
   delivered after it, so the node is never left with a stopped kubelet); ``undone_at`` is the
   time the undo command returned. An undo that itself fails is retried once, then the
   cluster counts as broken;
3. **health check** (:func:`check_health`), polled up to ``recovery_timeout_s``: every node
   ``Ready=True`` *and* its heartbeat Lease renewed after the undo (a node's Ready lags the
   kubelet by up to the grace period: right after a kubelet stop it still reads True), every
   kube-system pod Running with every container ready, the API server's
   ``/readyz`` answering ``ok`` — through the test's own client, whose server must be on
   127.0.0.1 (host traffic goes nowhere else). In the rooms cluster (e2e.cluster.rooms) the
   nodes of the other rooms and their pods are left out (the site's ``elsewhere``): another
   room's test may have its node down on purpose, and must not make this one's cluster broken.
   The :class:`RecoveryReport` is added to the test's report (``recovery-<fault>.txt``) and kept
   on the window;
4. a cluster that has not recovered within the bound is **broken**: the site's
   ``cluster_broken(reason)`` exports its logs (``kind export logs`` into the reports dir),
   deletes it and makes the next test that needs the profile get a new one — a broken cluster
   is never reused (e2e.plugin ``Clusters.replace_broken``). Then :class:`ClusterBroken` is
   raised, unless the body's own exception is already on its way (that one stays the test's
   failure; the broken cluster is logged and replaced all the same).

The faults act on a *site*: anything with ``node_exec``, ``kube``, ``mark``, ``add_file``,
``cluster_broken``, ``profile`` and ``recorder`` (a :class:`e2e.run.scenario.Scenario`; the unit
tests use a fake). Node faults refuse to run on the ``default`` profile: its cluster is shared
with every other test of a run, and a fault there would break their tests
(:class:`FaultRefused`).
"""

from __future__ import annotations

import logging
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Collection, Iterator, Protocol, TypeVar
from urllib.parse import urlsplit

from ..base.interrupts import signals_deferred
from ..base.waiting import WaitTimeout, wait_until
from ..cluster.nodeaccess import (
    DETACH_S,
    UNDO_MARGIN_S,
    ArmedUndo,
    FireTimeUnknown,
    NodeAccess,
    NodeRefused,
    NodeUnreachable,
    arm,
    disarm,
)

if TYPE_CHECKING:
    from ..cluster.kind import Kind
    from ..cluster.kube import Kube

log = logging.getLogger(__name__)

# Seconds the cluster gets after an undo to pass the health check. The slowest documented
# recovery is an API-server outage: the kubelet restarts the static pod (inotify, ≤ 20 s
# re-check: pkg/kubelet/config/file.go), etcd-backed /readyz, then kube-controller-manager and
# kube-scheduler restart with crash-loop back-off (10 s, 20 s: CASES.md CL-1) after losing
# their lease (CASES-faults.md §2.5) — about a minute on a calm host; 3 min covers a loaded one.
RECOVERY_TIMEOUT_S = 180
# Seconds between two health polls.
HEALTH_POLL_S = 2.0
# Seconds one API request of the health check may take.
HEALTH_REQUEST_S = 5.0
# The profile whose cluster every ordinary test shares (e2e.cluster.kind.DEFAULT_PROFILE).
SHARED_PROFILE = "default"
# Seconds a fault armed on the node lasts at most by default (``window_s``): the longest block
# of a fault test (NF-2's default variant holds the kubelet stopped 420 s).
WINDOW_S = 600.0
# Seconds between two attempts to reach the node again while its armed undo has not fired.
REACH_POLL_S = 5.0
# Hosts the health check may reach the API server on (loopback only).
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class FaultRefused(RuntimeError):
    """A fault was asked for where it must not run (the shared default cluster)."""


class ClusterBroken(RuntimeError):
    """The cluster did not recover from a fault within the bound; it has been replaced."""


@dataclass
class RecoveryReport:
    """What the health check after an undo saw.

    ``fault`` the fault's window name (``kubelet-stop``…); ``healthy`` whether every check passed; ``took_s`` seconds from the undo to the first
    healthy poll (or to giving up); ``problems`` what the last failing poll found (empty when
    healthy); ``checks`` the last poll's lines (``node X Ready=True``, ``kube-system/etcd-… Running 1/1``,
    ``/readyz ok``); ``polls`` how many polls it took.
    """

    fault: str
    healthy: bool
    took_s: float
    problems: list[str] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    polls: int = 0

    def text(self) -> str:
        """The report as attached to the test (``recovery-<fault>.txt``): a verdict line with the
        time it took (s), then every check and problem."""
        head = (f"recovery after {self.fault}: {'HEALTHY' if self.healthy else 'NOT RECOVERED'} "
                f"after {self.took_s:.1f} s ({self.polls} polls, bound {RECOVERY_TIMEOUT_S} s)")
        lines = [head, *("  " + c for c in self.checks)]
        if self.problems:
            lines += ["problems:", *("  " + p for p in self.problems)]
        return "\n".join(lines)


@dataclass
class FaultWindow:
    """One fault: ``name`` (``kubelet-stop``…), ``node`` (container name), ``injected_at`` /
    ``undone_at`` host wall-clock epoch seconds (``None`` until that step returned),
    ``recovery`` the health check's report after the undo, ``armed`` the undo armed on the node
    (:class:`e2e.cluster.nodeaccess.ArmedUndo`; ``None`` without node access), ``node_undo_at``
    when that one fired (host epoch s; ``None`` when the suite's own undo came first) and
    ``disarmed`` whether the suite stopped it afterwards (no timer of it left on the node)."""

    name: str
    node: str
    injected_at: float | None = None
    undone_at: float | None = None
    recovery: RecoveryReport | None = None
    # the undo armed on the node before the inject (e2e.cluster.nodeaccess), and when it fired
    # (node clock, epoch s; None when the suite's own undo came first)
    armed: ArmedUndo | None = None
    node_undo_at: float | None = None
    disarmed: bool = False

    def contains(self, t: float) -> bool:
        """Whether epoch second ``t`` lies inside the window (an open window: up to now)."""
        if self.injected_at is None:
            return False
        return self.injected_at <= t <= (self.undone_at if self.undone_at is not None else time.time())


class FaultSite(Protocol):
    """What a fault needs of a test (a :class:`e2e.run.scenario.Scenario` has it all)."""

    kube: Kube
    kind: Kind | None
    profile: str
    recorder: object
    access: NodeAccess | None

    def node_exec(self, *cmd: str, timeout: float = 30, node: str | None = None) -> str:
        """Run ``cmd`` in the kind node container ``node`` for at most ``timeout`` s; returns stdout
        (:meth:`e2e.run.scenario.Scenario.node_exec`)."""
        ...

    def mark(self, when: float, label: str) -> None:
        """Draw the moment ``when`` (epoch s) with ``label`` on the test's picture."""
        ...

    def add_file(self, name: str, content: str | bytes) -> None:
        """Attach the file ``name`` with ``content`` to the test's report."""
        ...

    def cluster_broken(self, reason: str) -> None:
        """The cluster did not recover (``reason``): export its logs, replace it."""
        ...


# -- health ---------------------------------------------------------------------------------

def api_host_is_loopback(kube) -> str:
    """The API server URL of ``kube``; ``FaultRefused`` unless its host is a loopback address."""
    host = kube.api_client.configuration.host
    if urlsplit(host).hostname not in LOOPBACK:
        raise FaultRefused(f"the health check talks to the API server on 127.0.0.1 only; this client's is {host}")
    return host


def health(kube, since: float | None = None, elsewhere: Collection[str] = ()) -> tuple[list[str], list[str]]:
    """One poll of the cluster's health through ``kube`` (:class:`e2e.cluster.kube.Kube`):
    ``(checks, problems)``, each a list of one-line texts; healthy when ``problems`` is empty.
    With ``since`` (epoch s, the undo) every node's Lease must have been renewed after it.
    ``elsewhere``: nodes not checked, nor the kube-system pods bound to them (the other rooms of
    the rooms cluster; one check line names them). Any error of a request is a problem, not an
    exception (the API may still be coming back)."""
    checks: list[str] = []
    problems: list[str] = []
    host = api_host_is_loopback(kube)
    try:
        answer = kube.api_client.call_api("GET", f"{host}/readyz", _request_timeout=HEALTH_REQUEST_S)
        answer.read()
        text = (answer.data or b"").decode(errors="replace").strip()
        (checks if text == "ok" else problems).append(f"/readyz {text[:80]!r}")
    except Exception as e:  # noqa: BLE001 - refused, 500 while starting: a problem to report
        problems.append(f"/readyz: {type(e).__name__}: {str(e)[:120]}")
        return checks, problems
    try:
        nodes = kube.core.list_node(_request_timeout=HEALTH_REQUEST_S).items
        pods = kube.core.list_namespaced_pod("kube-system", _request_timeout=HEALTH_REQUEST_S).items
    except Exception as e:  # noqa: BLE001
        problems.append(f"list nodes/kube-system pods: {type(e).__name__}: {str(e)[:120]}")
        return checks, problems
    left_out = sorted(n.metadata.name for n in nodes if n.metadata.name in elsewhere)
    if left_out:
        checks.append(f"not checked, the other rooms' nodes and their pods: {', '.join(left_out)}")
    for n in nodes:
        if n.metadata.name in elsewhere:
            continue
        ready = next((c.status for c in n.status.conditions or [] if c.type == "Ready"), "absent")
        (checks if ready == "True" else problems).append(f"node {n.metadata.name} Ready={ready}")
        if since is not None:
            try:
                renewed = kube.lease_renewed_at(n.metadata.name)
            except Exception as e:  # noqa: BLE001
                problems.append(f"lease of {n.metadata.name}: {type(e).__name__}: {str(e)[:120]}")
                continue
            line = f"lease of {n.metadata.name} renewed {'never' if renewed is None else f'{renewed - since:+.1f} s after the undo'}"
            (checks if renewed is not None and renewed >= since else problems).append(line)
    for p in pods:
        if p.spec.node_name in elsewhere:
            continue
        statuses = p.status.container_statuses or []
        ready = sum(1 for cs in statuses if cs.ready)
        line = f"kube-system/{p.metadata.name} {p.status.phase} {ready}/{len(statuses)}"
        ok = p.status.phase == "Running" and statuses and ready == len(statuses) and not p.metadata.deletion_timestamp
        (checks if ok else problems).append(line)
    if not pods:
        problems.append("kube-system has no pods")
    return checks, problems


def check_health(fault: str, kube, timeout_s: float = RECOVERY_TIMEOUT_S, poll_s: float | None = None,
                 probe: Callable[[object], tuple[list[str], list[str]]] | None = None,
                 since: float | None = None, elsewhere: Collection[str] = ()) -> RecoveryReport:
    """Poll ``probe(kube)`` every ``poll_s`` (default :data:`HEALTH_POLL_S`) seconds until it
    finds no problem or ``timeout_s`` passed (``probe``: default :func:`health` with ``since``
    and ``elsewhere``);
    returns the :class:`RecoveryReport` for ``fault`` (the window name), healthy or not — never
    raises for an unhealthy cluster."""
    started = time.monotonic()
    last: dict = {"checks": [], "problems": ["never polled"], "polls": 0}

    def poll() -> bool:
        checks, problems = probe(kube) if probe else health(kube, since, elsewhere)
        last.update(checks=checks, problems=problems, polls=last["polls"] + 1)
        return not problems

    try:
        wait_until(f"the cluster healthy after {fault}", poll, timeout_s, poll_s or HEALTH_POLL_S)
        healthy = True
    except WaitTimeout:
        healthy = False
    return RecoveryReport(fault, healthy, time.monotonic() - started, [] if healthy else last["problems"],
                          last["checks"], last["polls"])


# -- the protocol ---------------------------------------------------------------------------

def refuse_shared(site: FaultSite, name: str) -> None:
    """``FaultRefused`` when ``site`` runs on the shared default profile (see module doc);
    ``name`` is the fault's, for the message."""
    if getattr(site, "profile", SHARED_PROFILE) == SHARED_PROFILE:
        raise FaultRefused(f"fault {name} must run on a cluster of its own profile (@pytest.mark.profile), "
                           f"never on the shared {SHARED_PROFILE!r} cluster: it would break other tests")


def require_docker(site: FaultSite, name: str, what: str) -> None:
    """Skip the test when ``site`` enters its nodes through the node agent: fault ``name`` is
    ``what`` on the host's Docker (a kind node container), with no node-side equivalent."""
    access = getattr(site, "access", None)
    if access is not None and access.name != "docker":
        import pytest

        pytest.skip(f"fault {name} is {what}: it needs the kind node container on the host's Docker; "
                    f"through the node agent ({access.name}) it has no node-side equivalent")


def _undo(name: str, undo: Callable[[], object]) -> str | None:
    """Run ``undo`` (retried once); the error text when both attempts failed."""
    error = None
    for attempt in (1, 2):
        try:
            undo()
            return None
        except Exception as e:  # noqa: BLE001 - the undo must be tried again, then reported
            error = f"undo of {name} failed (attempt {attempt}): {type(e).__name__}: {e}"
            log.error("%s", error)
    return error


T = TypeVar("T")


def _until_reached(what: str, call: Callable[[], T], deadline: float,
                   retry_on: type[Exception] | tuple[type[Exception], ...] = Exception) -> T:
    """``call()`` tried every :data:`REACH_POLL_S` s while it raises ``retry_on`` (the node out of
    reach: its exec channel cut until its armed undo fired and the channel is back), until the
    epoch second ``deadline`` (:func:`~e2e.base.waiting.wait_until`); returns its result. Any
    other error at once; :class:`~e2e.base.waiting.WaitTimeout` naming the last error after
    ``deadline``."""
    last = ["not tried"]

    def attempt() -> tuple[T] | None:
        try:
            return (call(),)
        except retry_on as e:
            last[0] = f"{type(e).__name__}: {e}"
            return None

    return wait_until(what, attempt, max(0.0, deadline - time.time()), REACH_POLL_S, describe=lambda: last[0])[0]


def _undo_armed(name: str, undo: Callable[[], object], deadline: float) -> str | None:
    """Try ``undo`` every :data:`REACH_POLL_S` s until it succeeds (the node's armed undo fired
    and the exec channel is back) or the epoch second ``deadline``; the error then."""
    try:
        _until_reached(f"the undo of {name} to reach the node", undo, deadline)
        return None
    except WaitTimeout as e:
        error = f"undo of {name} failed until {deadline:.0f} (the node's armed undo did not bring it back): {e}"
        log.error("%s", error)
        return error


def _disarm(access: NodeAccess, node: str, armed: ArmedUndo, deadline: float) -> float | None:
    """:func:`~e2e.cluster.nodeaccess.disarm`, tried again while the node is out of reach (a
    restarted kubelet or containerd: the agent's channel comes back seconds after the undo
    answered) until the epoch second ``deadline``; returns what it does."""
    return _until_reached(f"disarming {armed.unit} on {node}", lambda: disarm(access, node, armed), deadline,
                          NodeUnreachable)


def undo_after_s(window_s: float, cuts_channel: bool, detached: bool = True) -> float:
    """Returns the seconds from arming a fault's undo on the node to its firing (:func:`fault`). A fault that
    cuts the channel into the node (``cuts_channel``) is ended by the node at its planned end,
    ``window_s`` after the inject: a ``detached`` inject runs :data:`~e2e.cluster.nodeaccess.DETACH_S`
    after the arm (the exec that queues it comes right after): ``window_s + DETACH_S``; an inject
    run in the exec itself (the API-server cut: its rules go in before the channel goes) right
    after the arm: ``window_s``. Any other fault is ended by the suite, the armed undo only guards
    it: ``window_s +`` :data:`~e2e.cluster.nodeaccess.UNDO_MARGIN_S`."""
    if not cuts_channel:
        return window_s + UNDO_MARGIN_S
    return window_s + (DETACH_S if detached else 0.0)


@contextmanager
def fault(site: FaultSite, name: str, node: str, inject: Callable[[], object], undo: Callable[[], object],
          recovery_timeout_s: float = RECOVERY_TIMEOUT_S, shared_ok: bool = False,
          probe: Callable[[object], tuple[list[str], list[str]]] | None = None,
          node_undo: tuple[str, ...] | None = None, window_s: float = WINDOW_S,
          cuts_channel: bool = False, detached: bool = True) -> Iterator[FaultWindow]:
    """The fault protocol (module doc) for a fault of your own: ``inject()``, yield the
    :class:`FaultWindow` named ``name`` on ``node``, always ``undo()``, then the health check
    (``probe``: instead of :func:`health`, as :func:`check_health`); ``ClusterBroken`` when the
    cluster does not recover, ``FaultRefused`` on the shared default profile unless ``shared_ok``
    (a mild fault, e.g. a test taint).

    ``node_undo`` (an argv run in the node) is armed on the node before the inject
    (:func:`e2e.cluster.nodeaccess.arm`, through ``site.access``) to fire :func:`undo_after_s`
    later, whatever becomes of the suite: ``window_s`` + :data:`~e2e.cluster.nodeaccess.UNDO_MARGIN_S`;
    with ``cuts_channel`` (the inject cuts ``site.access``'s exec channel until the undo: the
    kubelet or containerd stopped through the node agent, :func:`e2e.cluster.nodeaccess.cut_by_stop`)
    at the planned end, ``window_s`` (s) after the inject, with no margin: the suite cannot end
    it then (``detached``: the inject runs :data:`~e2e.cluster.nodeaccess.DETACH_S` after the arm;
    else right after it). When ``undo()`` cannot reach the node, it is tried again every :data:`REACH_POLL_S` s
    until the armed undo has fired and the node answers; then the armed undo is disarmed and
    ``window.node_undo_at`` and ``window.undone_at`` are when it fired, read back from the node's
    journal (:func:`e2e.cluster.nodeaccess.disarm`); after the health check
    :class:`~e2e.cluster.nodeaccess.FireTimeUnknown` when that cannot be read (a timing measured
    from the undo would be a guess).
    A node the access refuses (a control-plane node through the agent) skips the test (``pytest.skip``)."""
    if not shared_ok:
        refuse_shared(site, name)
    window = FaultWindow(name, node)
    access = getattr(site, "access", None)
    if node_undo is not None and access is not None:
        try:
            window.armed = arm(access, node, name, node_undo, undo_after_s(window_s, cuts_channel, detached))
        except NodeRefused as e:  # a control-plane node through the agent
            import pytest

            pytest.skip(f"fault {name}: {e}")
    armed_at = time.time()
    site.mark(time.time(), f"fault {name} on {node}")
    body_failed = False
    try:
        try:
            inject()
        finally:  # a half-done inject (or Ctrl-C in it) is undone too
            window.injected_at = time.time()
        yield window
    except BaseException:
        body_failed = True
        raise
    finally:
        with signals_deferred():
            undo_error = _undo(name, undo)
            if undo_error and window.armed is not None:  # the node is out of reach until its own undo fires
                undo_error = _undo_armed(name, undo, armed_at + window.armed.after_s + recovery_timeout_s)
            window.undone_at = time.time()
            unknown: FireTimeUnknown | None = None
            if window.armed is not None and access is not None:
                try:
                    window.node_undo_at = _disarm(access, node, window.armed, time.time() + recovery_timeout_s)
                    window.disarmed = True
                except FireTimeUnknown as e:
                    log.error("%s", e)
                    window.disarmed = True  # the timer is stopped; only its fire time is unknown
                    unknown = e
                except Exception as e:  # noqa: BLE001 - the health check tells whether the node is back
                    log.error("disarming %s on %s failed: %s", window.armed.unit, node, e)
                if window.node_undo_at is not None:
                    log.warning("%s on %s was undone by the node itself (%s) at %.1f, not by the suite",
                                name, node, window.armed.unit, window.node_undo_at)
                    window.undone_at = min(window.undone_at, window.node_undo_at)
            site.mark(window.undone_at, f"undo {name}")
            _declare(site, window)
            report = check_health(name, site.kube, recovery_timeout_s, probe=probe, since=window.undone_at,
                                  elsewhere=getattr(site, "elsewhere", ()))
            if undo_error:
                report.healthy = False
                report.problems.insert(0, undo_error)
            window.recovery = report
            site.add_file(f"recovery-{name}.txt", report.text())
            log.log(logging.INFO if report.healthy else logging.ERROR, "%s", report.text())
            if not report.healthy:
                reason = f"the cluster did not recover from {name} on {node} within {recovery_timeout_s:g} s: " + \
                         "; ".join(report.problems)
                if getattr(site, "kind", None) is None:  # a cluster the suite did not make stays as it is
                    reason += ". " + stranded(site.kube, node, window)
                site.cluster_broken(reason)
                if not body_failed:
                    replaced = " (logs exported; the cluster is replaced for the next test)" if getattr(site, "kind", None) else ""
                    raise ClusterBroken(reason + replaced)
            if unknown is not None and not body_failed:
                raise unknown


def stranded(kube, node: str, window: FaultWindow) -> str:
    """What to say when ``node`` of a cluster the suite did not make (``--kubeconfig``) stays
    unhealthy after the fault ``window``: the node's Ready condition (status, reason, since,
    message), that the suite leaves the cluster as it is and stops, where its armed undo stands,
    and the next steps to take."""
    try:
        conditions = kube.core.read_node(node, _request_timeout=HEALTH_REQUEST_S).status.conditions or []
        ready = next((c for c in conditions if c.type == "Ready"), None)
        state = (f"Ready={ready.status} ({ready.reason}) since {ready.last_transition_time}: {ready.message}" if ready
                 else "no Ready condition")
    except Exception as e:  # noqa: BLE001 - the API may be what is broken
        state = f"unknown ({type(e).__name__}: {str(e)[:120]})"
    if window.armed is None:
        undo = "no undo was armed on it"
    elif window.node_undo_at is not None:
        undo = f"its armed undo {window.armed.unit} ({' '.join(window.armed.argv)}) fired at {window.node_undo_at:.0f}"
    elif window.disarmed:
        undo = (f"its armed undo {window.armed.unit} ({' '.join(window.armed.argv)}) was stopped after the suite's own "
                f"undo ran at {window.undone_at:.0f} (epoch s): nothing of the suite acts on the node any more")
    else:
        undo = (f"its armed undo {window.armed.unit} ({' '.join(window.armed.argv)}) is due at "
                f"{window.armed.armed_at + window.armed.after_s:.0f} (epoch s) unless it ran already")
    return (f"Node {node}: {state}; {undo}. The suite never deletes or replaces a cluster it did not make: the run "
            f"stops here and leaves the node to you. Next: `kubectl describe node {node}`; in the node `systemctl status "
            f"kubelet containerd` and `journalctl -u kubelet -n 200`; once it is Ready, `make clean KUBECONFIG=…` "
            "removes what the run left")


def _declare(site: FaultSite, window: FaultWindow) -> None:
    """Tell the recorder about the window (a gap inside it is expected; e2e.record.recorder)."""
    declare = getattr(site.recorder, "declare_fault", None)
    if declare is not None:
        declare(window.name, window.node, window.injected_at, window.undone_at)
