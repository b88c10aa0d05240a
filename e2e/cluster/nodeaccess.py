"""One way into a node, two backends (issue 42 item 1), and the undo a node runs by itself (item 2).

:class:`NodeAccess` runs a command in a node's own namespaces: ``exec(node, argv, timeout)`` →
:class:`e2e.cluster.kube.ExecResult` ``(exit_code, stdout, stderr)``. Every fault of e2e.faults and
:meth:`e2e.run.scenario.Scenario.node_exec` go through it.

- :class:`DockerAccess` — ``docker exec <node> …`` into a kind node container: the clusters the
  suite creates (a kind node's container is named as its Node).
- :class:`AgentAccess` — a node agent for a ``--kubeconfig`` cluster: one privileged pod per node,
  pinned by ``spec.nodeName`` (hostPID, hostNetwork, hostIPC, every taint tolerated), that runs
  each command as ``nsenter -t 1 -m -u -i -n -p -- /bin/sh -c 'exec "$0" "$@"' argv`` in PID 1's
  namespaces with the node's own programs (:data:`NSENTER`), through the API's
  ``pods/exec`` (the kubernetes client's ``stream``). Chosen over ``kubectl debug node/…
  --profile=sysadmin`` because that one makes a new pod per call (seconds each, a pod left
  behind per command unless deleted), needs the kubectl binary and attaches through a TTY, while a
  pod made once per node answers every later call in one exec round trip and is cleaned with
  its namespace. The agent's image must already be on the node (no pull: ``imagePullPolicy:
  Never``): the suite's busybox (the offline build: Debian's busybox 1.35, whose applet list has
  ``nsenter``; docker.io busybox 1.36.1 has it too) is loaded on every node for the workloads
  anyway; ``--agent-image`` names another. Pods live in one namespace per run
  (:func:`agent_namespace`, labelled with the run's id so that the end of the run and ``make
  clean`` delete it with the run's other namespaces). A control-plane node is refused
  (:class:`NodeRefused`): the agent never runs there; so is, with ``--node-selector``
  (:func:`parse_node_selector`), every node whose labels do not match the selector.

The exec channel of the agent goes API server → kubelet → containerd → the agent container.
Stopping the kubelet or containerd, or cutting the node's path to the API server, cuts it. So
a fault arms its own undo on the node first (:class:`ArmedUndo`): a transient systemd timer
(``systemd-run --on-active=<ms>ms --unit=ple2e-undo-<id> -- <undo>``, within 100 ms: kind nodes and real nodes run
systemd), which fires at the end of the window even if the suite never reaches the node again
(Ctrl-C, SIGKILL, a lost laptop); once the suite reaches the node again it stops the timer
(:meth:`ArmedUndo.disarm_argv`), fired or not, so that no unit is left.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
import subprocess
import time
from dataclasses import dataclass
from typing import Protocol, Sequence

from kubernetes.client.exceptions import ApiException

from . import freezer
from .kube import RUN_LABEL, ApiRefused, ExecError, ExecResult

log = logging.getLogger(__name__)

# kubeadm's (and every managed distribution's) label of a control-plane node.
CONTROL_PLANE_LABEL = "node-role.kubernetes.io/control-plane"
# The prefix of every agent namespace and armed-undo unit (``make clean`` finds them by it).
PREFIX = "ple2e"
AGENT_LABEL = "pod-lifecycle-e2e/node-agent"
# Pod Security admission: the agent's namespace admits privileged pods (a cluster whose default
# level is baseline or restricted would refuse the agent otherwise).
PRIVILEGED = {"pod-security.kubernetes.io/enforce": "privileged"}
# The phases of a pod that will never run again (restartPolicy Always notwithstanding: a pod the
# kubelet's graceful node shutdown killed, or one it rejected, stays Failed).
TERMINAL = ("Failed", "Succeeded")
# Seconds the agent pod gets to run after it is created (no pull: the image is on the node).
AGENT_START_S = 60.0
# The command that puts the agent's argv into PID 1's (the node's) namespaces and runs it with the
# node's own programs. Busybox's exec runs its own applet for any name it has (sh, tc, find, grep,
# stat…) before it looks at PATH, also after entering the node's mount namespace: a bare ``tc``
# through the agent was busybox's, which knows no tbf. A path is no applet name, so the node's own
# /bin/sh runs, and its ``exec`` finds argv[0] on the node's PATH (a node without /bin/sh: exit 127).
NSENTER = ("nsenter", "-t", "1", "-m", "-u", "-i", "-n", "-p", "--", "/bin/sh", "-c", 'exec "$0" "$@"')
# The PATH the node's commands are looked up in (a node's usual one, /usr/local first).
NODE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# Seconds an armed undo fires after the end of the window it guards (the suite's own undo
# comes first when it can reach the node).
UNDO_MARGIN_S = 30.0
# The node's systemd units the agent's exec channel goes through (API server → kubelet →
# containerd → the agent container): stopping one cuts the channel until it starts again.
AGENT_CHANNEL_UNITS = ("kubelet", "containerd")


def cut_by_shutdown(access: NodeAccess | None) -> bool:
    """Whether a graceful node shutdown (logind's ``PrepareForShutdown(true)``, NF-9) cuts
    ``access``'s exec channel into the node until it is cancelled: through the node agent, whose
    pod the kubelet's shutdown manager kills with every other pod (``Failed``, never restarted;
    measured on the foreign cluster, v1.37.2) and admits no new one while the node shuts down;
    never through ``docker exec`` (nor without access)."""
    return access is not None and access.name != "docker"


def cut_by_stop(access: NodeAccess | None, unit: str) -> bool:
    """Whether stopping the node's systemd ``unit`` cuts ``access``'s exec channel into the node
    until the unit starts again: through the node agent for :data:`AGENT_CHANNEL_UNITS`; never
    through ``docker exec`` (nor without access)."""
    return access is not None and access.name != "docker" and unit in AGENT_CHANNEL_UNITS


class NodeUnreachable(RuntimeError):
    """The command could not be run in the node (the exec channel is cut, the container is gone)."""


class NodeRefused(RuntimeError):
    """The node must not be entered by this backend (a control-plane node, for the agent)."""


class NodeAccess(Protocol):
    """A way into the nodes: ``name`` (``docker`` or ``agent``) and :meth:`exec`, whose answer is an
    :class:`e2e.cluster.kube.ExecResult` ``(exit_code, stdout, stderr)``."""

    name: str

    def exec(self, node: str, argv: Sequence[str], timeout: float = 30) -> ExecResult:
        """Run ``argv`` in ``node``'s namespaces for at most ``timeout`` s. :class:`NodeUnreachable`
        when it could not be run at all, :class:`NodeRefused` for a node this backend must not
        enter; a command that ran and failed is a result with ``exit_code != 0``."""
        ...

    def close(self) -> None:
        """Let go of whatever the backend made (the agent's pods and namespace)."""
        ...


def run(access: NodeAccess, node: str, argv: Sequence[str], timeout: float = 30) -> str:
    """``access.exec``'s stdout; ``RuntimeError`` naming the backend, node, command and stderr when
    its exit code is not 0."""
    r = access.exec(node, argv, timeout)
    if r.exit_code != 0:
        raise RuntimeError(f"{access.name} exec {node} {' '.join(argv)}: exit {r.exit_code}: {(r.stderr or r.stdout).strip()}")
    return r.stdout


class DockerAccess:
    """``docker exec`` into a kind node container (its name is the Node's)."""

    name = "docker"

    def exec(self, node: str, argv: Sequence[str], timeout: float = 30) -> ExecResult:
        try:
            r = subprocess.run(["docker", "exec", node, *argv], capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            raise NodeUnreachable(f"docker exec {node} {' '.join(argv)}: no answer within {timeout:g} s") from e
        if r.returncode in (125, 126, 127) and "Error response from daemon" in r.stderr:
            raise NodeUnreachable(f"docker exec {node}: {r.stderr.strip()}")
        return ExecResult(r.returncode, r.stdout, r.stderr)

    def close(self) -> None:
        pass


def agent_namespace(run_id: str) -> str:
    """The namespace of run ``run_id``'s agent pods: ``ple2e-agent-<run id>`` as a DNS label
    (lower case, ``[a-z0-9-]``, ≤ 63 characters; a longer id is cut and given a hash)."""
    label = re.sub(r"[^a-z0-9-]+", "-", run_id.lower()).strip("-")
    name = f"{PREFIX}-agent-{label}"
    if len(name) > 63:
        name = f"{name[:54]}-{hashlib.sha256(run_id.encode()).hexdigest()[:8]}"
    return name


def agent_pod_name(node: str) -> str:
    """The agent pod of ``node``: ``agent-<node>`` (a hash instead when that is over 63 characters)."""
    name = f"agent-{node}"
    return name if len(name) <= 63 else f"agent-{hashlib.sha256(node.encode()).hexdigest()[:16]}"


def agent_pod(node: str, image: str, run_id: str) -> dict:
    """The agent pod for ``node`` (the API's JSON): pinned by ``nodeName`` (no scheduler, so
    NoSchedule taints do not keep it off; ``operator: Exists`` tolerates every taint, NoExecute
    too), hostPID/hostNetwork/hostIPC, privileged, ``imagePullPolicy: Never``, no service account
    token, killed at once on delete."""
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": agent_pod_name(node), "labels": {AGENT_LABEL: "1", "pod-lifecycle-e2e/run-id": run_id}},
        "spec": {
            "nodeName": node, "hostPID": True, "hostNetwork": True, "hostIPC": True,
            "tolerations": [{"operator": "Exists"}], "automountServiceAccountToken": False,
            "enableServiceLinks": False, "terminationGracePeriodSeconds": 0, "restartPolicy": "Always",
            "containers": [{
                "name": "agent", "image": image, "imagePullPolicy": "Never",
                "command": ["sleep", "2147483647"],
                # nsenter looks the command up in its own environment's PATH: a busybox image sets
                # none (busybox's default lacks /usr/local/bin, where kind keeps containerd, crictl)
                "env": [{"name": "PATH", "value": NODE_PATH}],
                "securityContext": {"privileged": True},
                "resources": {"requests": {"cpu": "1m", "memory": "4Mi"}},
            }],
        },
    }


def is_control_plane(node: dict) -> bool:
    """Whether the Node (the API's JSON) carries the control-plane role label."""
    return CONTROL_PLANE_LABEL in ((node.get("metadata") or {}).get("labels") or {})


# a label key (an optional DNS-subdomain prefix and "/", then a name) and a label value, as the API
# validates them (k8s.io/apimachinery validation: IsQualifiedName, IsValidLabelValue)
_LABEL_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_LABEL_KEY = re.compile(rf"([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?{_LABEL_NAME}")
_LABEL_VALUE = re.compile(rf"({_LABEL_NAME})?")


def parse_node_selector(text: str) -> dict[str, str]:
    """``--node-selector``'s ``LABEL=VALUE[,LABEL=VALUE…]`` as a dict (every pair must match, as a
    pod's ``nodeSelector``); ``ValueError`` naming the bad part for an empty selector, a pair
    without ``=``, a key or value the API would refuse, or one key given twice."""
    selector: dict[str, str] = {}
    for part in text.split(","):
        key, eq, value = part.strip().partition("=")
        if not eq or not _LABEL_KEY.fullmatch(key) or len(key.rpartition("/")[0]) > 253 \
                or not _LABEL_VALUE.fullmatch(value):
            raise ValueError(f"--node-selector {text!r}: {part.strip()!r} is not LABEL=VALUE (a node label and its value, "
                             "e.g. topology.kubernetes.io/zone=zone-a; several: comma-separated)")
        if key in selector:
            raise ValueError(f"--node-selector {text!r}: {key} given twice")
        selector[key] = value
    return selector


def shown_selector(selector: dict[str, str]) -> str:
    """``selector`` as ``--node-selector`` takes it: ``LABEL=VALUE,…``."""
    return ",".join(f"{k}={v}" for k, v in selector.items())


def matches(node: dict, selector: dict[str, str]) -> bool:
    """Whether the Node (the API's JSON) has every label of ``selector`` with its value (an empty
    selector: every node)."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    return all(labels.get(k) == v for k, v in selector.items())


class AgentAccess:
    """The node agent (module doc) on the cluster of ``kube`` (:class:`e2e.cluster.kube.Kube`),
    its pods in namespace :func:`agent_namespace` of ``run_id``, running ``image``, only on the
    workers whose labels match ``selector`` (``--node-selector``, :func:`parse_node_selector`;
    empty: every worker)."""

    name = "agent"

    def __init__(self, kube, run_id: str, image: str, start_timeout_s: float = AGENT_START_S,
                 selector: dict[str, str] | None = None):
        self.kube, self.run_id, self.image, self.start_timeout_s = kube, run_id, image, start_timeout_s
        self.selector = dict(selector or {})
        self.namespace = agent_namespace(run_id)
        self._pods: dict[str, str] = {}

    def _node(self, node: str) -> dict:
        return self.kube.api_client.sanitize_for_serialization(self.kube.core.read_node(node))

    def workers(self) -> list[str]:
        """The names of the nodes the agent may enter (every node but the control plane, that
        matches the selector), sorted."""
        return sorted(n["metadata"]["name"] for n in self.kube.nodes()
                      if not is_control_plane(n) and matches(n, self.selector))

    def refusal(self, node: dict) -> str | None:
        """Why the agent must not enter the Node (the API's JSON): a control-plane node, or one the
        selector does not match; None when it may."""
        name = (node.get("metadata") or {}).get("name")
        if is_control_plane(node):
            return f"node {name} is a control-plane node ({CONTROL_PLANE_LABEL}): the node agent never runs there"
        if not matches(node, self.selector):
            labels = (node.get("metadata") or {}).get("labels") or {}
            has = ", ".join(f"{k}={labels[k]}" if k in labels else f"no {k}" for k in self.selector)
            return (f"node {name} is not selected by --node-selector {shown_selector(self.selector)} (it has {has}): "
                    "the node agent enters only the nodes the selector names")
        return None

    def pod(self, node: str) -> str:
        """The name of ``node``'s agent pod, Running (made on first use, with the namespace);
        :class:`NodeRefused` on a control-plane node or one the selector does not match (the
        reason: :meth:`refusal`), :class:`NodeUnreachable` when it does not run within the start
        timeout, or when the node killed or rejected it (a terminal phase: it is deleted and made
        again on the next call, once the node admits pods again)."""
        if node in self._pods:
            return self._pods[node]
        refused = self.refusal(self._node(node))
        if refused:
            raise NodeRefused(refused)
        try:
            self.kube.core.create_namespace({"metadata": {"name": self.namespace,
                                                          "labels": {RUN_LABEL: self.run_id, AGENT_LABEL: "1", **PRIVILEGED}}})
        except ApiException as e:
            if e.status != 409:  # another xdist worker made it
                raise
        name = agent_pod_name(node)
        try:
            self.kube.core.create_namespaced_pod(self.namespace, agent_pod(node, self.image, self.run_id))
        except ApiException as e:
            if e.status != 409:
                raise
        deadline = time.monotonic() + self.start_timeout_s
        while True:
            pod = self.kube.core.read_namespaced_pod(name, self.namespace)
            if pod.status.phase == "Running" and all(c.ready for c in pod.status.container_statuses or []):
                break
            if pod.status.phase in TERMINAL:  # killed or rejected by the node: never restarted
                try:
                    self.kube.core.delete_namespaced_pod(name, self.namespace, grace_period_seconds=0)
                except ApiException as e:
                    if e.status != 404:
                        raise
                raise NodeUnreachable(f"agent pod {self.namespace}/{name} on {node} is {pod.status.phase} "
                                      f"({pod.status.reason}: {pod.status.message}): the node killed or rejected it "
                                      "(a graceful node shutdown kills every pod); deleted, made again on the next call")
            if time.monotonic() > deadline:
                waiting = [c.state.waiting.reason for c in pod.status.container_statuses or [] if c.state.waiting]
                raise NodeUnreachable(f"agent pod {self.namespace}/{name} on {node} not running after "
                                      f"{self.start_timeout_s:g} s: phase {pod.status.phase} {waiting} (image {self.image} "
                                      "must be on the node: imagePullPolicy Never; --agent-image names another)")
            time.sleep(0.5)
        self._pods[node] = name
        return name

    def exec(self, node: str, argv: Sequence[str], timeout: float = 30) -> ExecResult:
        pod = self.pod(node)
        try:
            return self.kube.exec(self.namespace, pod, "agent", [*NSENTER, *argv], timeout_s=timeout)
        except (ApiRefused, ExecError) as e:  # the kubelet down, containerd down, the API cut: the channel is cut
            if self._ended(pod):  # the node killed it: the next call makes it again (pod())
                self._pods.pop(node, None)
            raise NodeUnreachable(f"agent exec {node} {' '.join(argv)}: {type(e).__name__}: {e}") from e

    def _ended(self, pod: str) -> bool:
        """Whether agent pod ``pod`` is gone or in a terminal phase (:data:`TERMINAL`); False when
        that cannot be read (the API out of reach: the channel is cut, the pod may be fine)."""
        try:
            return self.kube.core.read_namespaced_pod(pod, self.namespace).status.phase in TERMINAL
        except ApiException as e:
            return e.status == 404
        except Exception:  # noqa: BLE001 - no answer says nothing about the pod
            return False

    def close(self) -> None:
        """Delete the agent namespace (its pods at once); a 404 is fine."""
        self._pods.clear()
        self.kube.delete_namespace(self.namespace)


# The filesystem type of /sys/fs/cgroup in a node (stat -f): cgroup2fs on a cgroup v2 (unified)
# node; tmpfs (the v1 controllers mounted below it) on a v1 node.
CGROUP_ARGV = ("stat", "-fc", "%T", "/sys/fs/cgroup")


def cgroup_version(access: NodeAccess, node: str) -> int:
    """The cgroup version of ``node`` (2 or 1), read in the node through ``access``: ``stat -f`` of
    ``/sys/fs/cgroup`` is ``cgroup2fs`` on v2, anything else (``tmpfs``) is v1. The errors of
    :func:`run` (``RuntimeError``, :class:`NodeUnreachable`, :class:`NodeRefused`)."""
    return 2 if run(access, node, CGROUP_ARGV).strip() == "cgroup2fs" else 1


# -- the undo a node runs by itself ----------------------------------------------------------

def undo_unit(fault: str, node: str, when: float | None = None, role: str = "undo") -> str:
    """The unit name of an armed undo: ``ple2e-undo-<fault>-<8 hex>`` (the hash of node and time:
    two faults never share one); ``role="inject"``: of a detached inject, ``ple2e-inject-…``."""
    stamp = f"{node}/{time.time() if when is None else when}"
    return f"{PREFIX}-{role}-{re.sub(r'[^a-z0-9-]+', '-', fault.lower())}-{hashlib.sha256(stamp.encode()).hexdigest()[:8]}"


@dataclass(frozen=True)
class ArmedUndo:
    """An undo armed on a node: ``unit`` (:func:`undo_unit`) runs ``argv`` ``after_s`` seconds
    after it was armed (``armed_at``, host epoch s), as a transient systemd timer, whatever became
    of the suite."""

    unit: str
    argv: tuple[str, ...]
    after_s: float
    armed_at: float = 0.0

    def arm_argv(self) -> list[str]:
        """``systemd-run --on-active=<after_s, whole ms up, ≥ 1 s>ms --unit=<unit>
        --timer-property=AccuracySec=100ms --timer-property=RemainAfterElapse=no --collect -- argv``:
        the timer fires within 100 ms of its time (systemd's default accuracy is 1 min; whole
        seconds rounded up and ``AccuracySec=1s`` made a heal planned as part of a case's timeline,
        KB-7's through the agent, up to 2 s late) and unloads once it fired, the service once it
        ran (even when it failed): a fired undo leaves no unit behind."""
        return ["systemd-run", f"--on-active={max(1000, math.ceil(self.after_s * 1000))}ms", f"--unit={self.unit}",
                "--timer-property=AccuracySec=100ms", "--timer-property=RemainAfterElapse=no", "--collect",
                "--", *self.argv]

    def state_argv(self) -> list[str]:
        """The timer's ``ActiveState`` (``active`` while armed; ``inactive`` once it fired and
        unloaded)."""
        return ["systemctl", "show", "-p", "ActiveState", "--value", f"{self.unit}.timer"]

    def disarm_argv(self) -> list[str]:
        """Stop the timer (when still armed) and forget a failed service run; succeeds when the
        units are gone already."""
        return ["sh", "-c", f"systemctl stop {self.unit}.timer 2>/dev/null; "
                            f"systemctl reset-failed {self.unit}.timer {self.unit}.service 2>/dev/null; true"]


# Seconds between the exec that queues a detached inject (:func:`detached_argv`) and the inject:
# the exec's answer is back through the channel before the inject cuts it.
DETACH_S = 1.0


def detached_argv(unit: str, argv: Sequence[str], delay_s: float = DETACH_S) -> list[str]:
    """``argv`` run by a transient timer ``unit`` ``delay_s`` s from now (within 100 ms): for an
    inject that cuts the exec channel it runs through (``systemctl stop kubelet`` through the
    agent: the kubelet carries the exec, which would be cut before it answered)."""
    return ["systemd-run", f"--on-active={int(delay_s * 1000)}ms", f"--unit={unit}",
            "--timer-property=AccuracySec=100ms", "--timer-property=RemainAfterElapse=no", "--collect", "--", *argv]


def arm(access: NodeAccess, node: str, fault: str, argv: Sequence[str], after_s: float) -> ArmedUndo:
    """Arm ``argv`` on ``node`` to run ``after_s`` s from now (:class:`ArmedUndo`), for the fault
    named ``fault``; ``RuntimeError`` when systemd-run refuses (the fault must not be injected)."""
    undo = ArmedUndo(undo_unit(fault, node), tuple(argv), after_s, time.time())
    run(access, node, undo.arm_argv(), timeout=30)
    log.info("armed on %s: %s fires in %.0f s: %s", node, undo.unit, after_s, " ".join(argv))
    return undo


class FireTimeUnknown(RuntimeError):
    """An armed undo fired, but the node's journal holds no start of its service: when the node
    undid the fault is unknown."""


def fired_argv(undo: ArmedUndo) -> list[str]:
    """The node's journal about ``undo``'s service, one JSON object a line (``journalctl -u
    <unit>.service -o json``): systemd's own ``Started …`` entry comes first."""
    return ["journalctl", "-u", f"{undo.unit}.service", "-o", "json", "--no-pager"]


def fired_at(journal: str) -> float | None:
    """When the undo's service started (epoch s, the node's clock): the earliest entry of
    ``journal`` (:func:`fired_argv`'s output), at its ``_SOURCE_REALTIME_TIMESTAMP`` (when
    systemd logged it) or else ``__REALTIME_TIMESTAMP`` (when journald received it), both µs;
    ``None`` when there is none. Lines that are not JSON objects are skipped."""
    times = []
    for line in journal.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict):
            continue
        stamp = entry.get("_SOURCE_REALTIME_TIMESTAMP") or entry.get("__REALTIME_TIMESTAMP")
        if isinstance(stamp, str) and stamp.isdigit():
            times.append(int(stamp) / 1e6)
    return min(times, default=None)


def disarm(access: NodeAccess, node: str, undo: ArmedUndo) -> float | None:
    """Stop ``undo`` on ``node``, fired or not. Returns ``None`` when it was still armed (the
    suite's own undo came first), else when it fired: the start of its service as the node's
    journal has it (:func:`fired_at`; epoch s, the node's clock — a kind node's is the host's).
    :class:`FireTimeUnknown` when it fired and the journal has no entry of it (the timer is
    stopped all the same); the errors of :func:`run`."""
    state = run(access, node, undo.state_argv(), timeout=30).strip()
    journal = "" if state == "active" else run(access, node, fired_argv(undo), timeout=30)
    run(access, node, undo.disarm_argv(), timeout=30)
    if state == "active":
        return None
    at = fired_at(journal)
    if at is None:
        raise FireTimeUnknown(f"{undo.unit} on {node} fired (its timer is {state or 'gone'}), but `{' '.join(fired_argv(undo))}` "
                              "shows no entry: when the node undid the fault is unknown")
    return at


# -- what a dead run left on a node (make clean KUBECONFIG=…, e2e.cli.clean) --------------------

# the suite's units on a node: armed undos (undo_unit) and detached injects (detached_argv)
LIST_UNITS = ("systemctl", "list-units", "--all", "--plain", "--no-legend", "--full", f"{PREFIX}-*")


def units_on(access: NodeAccess, node: str) -> dict[str, str]:
    """The suite's units loaded on ``node``: ``{unit: ActiveState}`` (``ple2e-undo-….timer``:
    ``active`` while armed); :class:`NodeUnreachable` when the node cannot be entered."""
    units = {}
    for line in run(access, node, LIST_UNITS).splitlines():
        fields = line.split()
        if len(fields) >= 3 and fields[0].startswith(f"{PREFIX}-"):
            units[fields[0]] = fields[2]
    return units


def frozen_on(access: NodeAccess, node: str) -> list[str]:
    """What a node pause left frozen or in place on ``node`` (:mod:`e2e.cluster.freezer`
    ``state``), a line per cgroup (``<path> <state>``); empty when nothing is.
    :class:`NodeUnreachable` when the node cannot be entered."""
    return [line.strip() for line in run(access, node, freezer.argv("state")).splitlines() if line.strip()]


def sweep_units(access: NodeAccess, node: str) -> tuple[list[str], list[str]]:
    """Remove what a dead run left armed on ``node``: ``(done, left)``, each a line per unit.

    - an armed undo (``ple2e-undo-….timer`` active) **fires now**: its service is started (the
      undo runs at once), then the timer is stopped. The run that armed it is dead, so nothing
      else undoes the fault before the timer would fire (up to the fault's window + 30 s later),
      and every undo is one that is fine to run on a node already well (``systemctl start …``,
      ``mv`` the manifest back when it is parked);
    - a pending inject (``ple2e-inject-….timer`` active) is stopped, never run;
    - failed units are forgotten (``systemctl reset-failed``);
    - a node pause's freeze left in place (:mod:`e2e.cluster.freezer` ``state``: its own freezer
      cgroup, a frozen kubepods tree, a frozen unit) is thawed (its ``thaw``).

    ``left``: what is still loaded or frozen after that (an undo's service still running is said,
    not counted as left: it unloads itself when it ends). :class:`NodeUnreachable` when the node
    cannot be entered."""
    done = []
    for unit, state in sorted(units_on(access, node).items()):
        base, _, suffix = unit.rpartition(".")
        if suffix != "timer" or state != "active":
            continue
        if base.startswith(f"{PREFIX}-undo-"):
            run(access, node, ["systemctl", "start", f"{base}.service"], timeout=60)
            done.append(f"{node}: {unit} fired now (armed by a dead run)")
        else:
            done.append(f"{node}: {unit} stopped (a pending inject of a dead run: never run)")
        run(access, node, ["systemctl", "stop", unit], timeout=60)
    run(access, node, ["sh", "-c", f"systemctl reset-failed '{PREFIX}-*' 2>/dev/null; true"], timeout=60)
    frozen = frozen_on(access, node)
    if frozen:
        thaw = access.exec(node, freezer.argv("thaw"), 60)
        if thaw.exit_code == 0:
            done += [f"{node}: {line} thawed (a node pause of a dead run)" for line in frozen]
    left = [f"{node}: {line}" for line in frozen_on(access, node)]
    for unit, state in sorted(units_on(access, node).items()):
        if unit.endswith(".service") and state in ("active", "activating", "deactivating"):
            done.append(f"{node}: {unit} is running (an undo; it unloads itself when it ends)")
        else:
            left.append(f"{node}: {unit} {state}")
    return done, left
