"""``make clean``: remove what dead runs left behind (``python -m e2e.cli.clean [--dry-run]``).

- **Clusters**: every kind cluster with a state file in ``STATE_DIR`` (``$E2E_STATE_DIR``,
  default ``/tmp/pod-lifecycle-e2e``) that no live process uses (:func:`e2e.cluster.kind.cluster_in_use`):
  clusters kept with ``--keep-cluster`` included. A ``ple2e-*`` cluster without a state file
  (another ``E2E_STATE_DIR``, or made before state files existed) is listed, not touched.
- **Namespaces** labelled with the run id of a run that is no longer alive
  (:func:`e2e.cluster.kind.run_alive`), in every cluster that stays (kept namespaces of failed tests
  included); there too a node a dead run cordoned (DR-2's ``kubectl drain``; its mark
  :data:`e2e.cluster.cordon.CORDONED_BY` names the run) is uncordoned and its mark removed.
- **Files**: state and lock files of clusters that no longer exist (or are deleted here), lock
  files of dead runs (``runs/<run id>.lock``, a ``--kubeconfig`` run's ``<run id>.node.lock`` and
  ``.node.turn``), the cluster creations' ``creating.lock`` and ``create.<i>.lock`` once no run
  is alive, per-node CNI configs, node guard files and rooms' kubelet patches (e2e.cluster.rooms) no
  remaining cluster mounts, and the rooms' kind config patch once no run is alive.
- **Egress guard** (:mod:`e2e.cluster.egress`): the suite's Docker network and the host guard's
  iptables rules, once no node is on the network and no live run holds it.

With ``--kubeconfig PATH [--context NAME]`` (``make clean KUBECONFIG=PATH [CONTEXT=NAME]``) it
cleans that cluster instead, a cluster the suite did not make (:func:`clean_cluster`): never the
cluster itself, only what dead runs left there:

- **Armed units** on the nodes a dead run's node agent entered (its ``ple2e-agent-<run id>``
  namespace is still there: the run was killed): through that run's own agent pods (clean makes
  no pod), every armed undo fires now and every pending inject is stopped
  (:func:`e2e.cluster.nodeaccess.sweep_units`). A node whose agent does not answer (the fault
  cut the exec channel: the kubelet stopped) is waited for, every 5 s for at most ``--wait-s``
  (default the longest a fault's armed undo takes to fire by itself: its window + 30 s), then
  swept; its Ready condition is said, once it is True or after :data:`READY_WAIT_S` (a node just
  thawed or whose kubelet the undo just started posts Ready on its next status update; not Ready
  then is said, not counted). A node still out of reach keeps its agent namespace (the next clean
  tries again) and counts as a failure. An IM registry fault still on in a registry pod of the run
  (:func:`e2e.faults.registry.left_in_pod`: the stop's ``DROP``, a throttle's qdisc, a freeze) is
  said; it goes with the pod when the run's namespace is deleted.
- **Cordons**: a node whose :data:`e2e.cluster.cordon.CORDONED_BY` mark names a dead run (DR-2's
  ``kubectl drain`` cordoned it, the run was killed before its uncordon) is uncordoned and the mark
  removed; a live run's is left alone.
- **Namespaces** labelled with the run id of a run that is no longer alive (its agent namespace
  too, once its nodes are swept); then the dead runs' lock files in ``STATE_DIR`` (no kind
  cluster is looked at: this needs no Docker).

Prints what it removes (``--dry-run``: the same list, removing nothing), or ``nothing to clean:``
with what it looked at; exit code 0, or 1 when something could not be removed.
"""

from __future__ import annotations

import argparse
import logging
import subprocess
import sys
import time
from typing import Any, Callable

from ..cluster import cordon, kind as cluster, egress
from ..cluster.kind import CLUSTER_PREFIX, Kind, PreflightError, cluster_in_use, kind_clusters, run_alive
from ..base.locks import remove_unused, unused
from ..cluster.kube import RUN_LABEL, Kube
from ..cluster.nodeaccess import AGENT_LABEL, UNDO_MARGIN_S, AgentAccess, NodeUnreachable, sweep_units
from ..cluster.nodeaccess import run as node_run
from ..cluster.registry import POD_LABEL as REGISTRY_LABEL
from ..faults.core import REACH_POLL_S, WINDOW_S
from ..faults.registry import left_in_pod

log = logging.getLogger(__name__)

# the longer suffix first: "x.node.lock" is cluster x's, not cluster "x.node"'s
STATE_SUFFIXES = (".json", ".kubeconfig", ".kind-config.yaml", ".node.lock", ".node.turn", ".lock", ".use")
# a node's lock and turnstile (e2e.plugin.clusters.hold_node): a --kubeconfig run's are named by its run id
NODE_LOCKS = (".node.lock", ".node.turn")
# cluster creations' marker and slots (e2e.cluster.kind.creating): creating.lock, create.<i>.lock
CREATION_LOCKS = ("creating.lock", "create.*.lock")
# lock files: removed only while held exclusively (e2e.base.locks), so a process that
# takes one meanwhile keeps it
LOCK_SUFFIXES = (".lock", ".use", ".turn")


def _remove(path) -> None:
    """Remove ``path``; a lock file only if nobody holds it (then it stays: it is in use again)."""
    if path.name.endswith(LOCK_SUFFIXES):
        remove_unused(path)
    else:
        path.unlink(missing_ok=True)


# how many removals were said since the last clean()/clean_cluster() began (none: "nothing to clean")
_said = 0
# How long a swept node's Ready=True is waited for (s): a kubelet posts its status every
# nodeStatusUpdateFrequency (10 s by default) and after a thaw or a start needs a few more for its
# runtime and PLEG checks; on the foreign cluster a worker was still NotReady as the clean ended (f7)
READY_WAIT_S = 60.0


def _say(dry_run: bool, what: str) -> None:
    global _said
    _said += 1
    print(("would remove " if dry_run else "removing ") + what)


def clean(dry_run: bool = False) -> int:
    """Remove what dead runs left (see module doc); returns the number of failures."""
    global _said
    _said = 0
    state_dir = cluster.STATE_DIR
    failures = 0
    try:
        existing = set(kind_clusters())
    except PreflightError as e:
        print(f"cannot list kind clusters: {e}", file=sys.stderr)
        return 1
    stateful = {p.name[: -len(".json")] for p in state_dir.glob(f"{CLUSTER_PREFIX}*.json")} if state_dir.is_dir() else set()
    # the files as they are before any cluster is deleted (deleting one removes some of its own):
    # a dry run lists exactly what a real one removes
    files = sorted(state_dir.glob("*")) if state_dir.is_dir() else []

    for name in sorted(existing - stateful):
        print(f"leaving kind cluster {name}: no state file in {state_dir} (delete it with `kind delete cluster --name {name}` if it is yours)")

    remaining = set()
    for name in sorted(existing & stateful):
        kind = Kind(name)
        if cluster_in_use(name):
            remaining.add(name)
            continue
        _say(dry_run, f"kind cluster {name} (no live run uses it; created by run {kind.state().get('owner')})")
        if dry_run:
            existing.discard(name)  # its files are listed below, as a real clean removes them
            continue
        try:
            if kind.delete_unless_used():  # a run that started using it meanwhile keeps it
                existing.discard(name)  # its files go below with the other leftovers
            else:
                remaining.add(name)
        except PreflightError as e:
            print(f"  failed: {e}", file=sys.stderr)
            failures += 1
            remaining.add(name)

    for name in sorted(remaining):
        failures += _clean_namespaces(name, dry_run)

    for path in files:
        of = next((path.name[: -len(s)] for s in STATE_SUFFIXES if path.name.endswith(s)), None)
        if not of:
            continue
        if of.startswith(CLUSTER_PREFIX):  # files of clusters that no longer exist
            if of in existing | remaining or cluster_in_use(of):
                continue
            _say(dry_run, f"file {path}")
        elif path.name.endswith(NODE_LOCKS) and not run_alive(of):  # a --kubeconfig run's node lock or turnstile
            _say(dry_run, f"node lock of dead run {path}")
        else:
            continue
        if not dry_run:
            _remove(path)
    if state_dir.is_dir():
        alive = _remove_run_locks(dry_run)
        # the creation marker and slots (e2e.cluster.kind.creating) are shared by every run: they
        # go when nobody holds them and no run is alive (an older checkout's run, which does not
        # lock a removed file again, may share the state directory)
        for path in [] if alive else sorted(p for g in CREATION_LOCKS for p in state_dir.glob(g)):
            if unused(path):
                _say(dry_run, f"cluster creation lock {path}")
                if not dry_run:
                    _remove(path)
        mounted = "".join(
            (state_dir / f"{n}.kind-config.yaml").read_text() for n in remaining if (state_dir / f"{n}.kind-config.yaml").is_file()
        )
        mounts = [*((state_dir / "cni").glob("*.conflist") if (state_dir / "cni").is_dir() else []),
                  *((state_dir / "guard").glob("*.sh") if (state_dir / "guard").is_dir() else []),
                  *((state_dir / "guard").glob("*.conf") if (state_dir / "guard").is_dir() else [])]
        for path in sorted(mounts):
            if str(path) not in mounted:
                _say(dry_run, f"node file {path} (no remaining cluster mounts it)")
                if not dry_run:
                    path.unlink(missing_ok=True)
        # the rooms cluster's files (e2e.cluster.rooms): each room's kubeadm patches directory, mounted
        # by its node, and the kind config patch, which every live run writes again before it is read
        rooms = state_dir / "rooms"
        for path in sorted(rooms.glob("*/kubeletconfiguration.yaml")) if rooms.is_dir() else []:
            if str(path.parent) not in mounted:
                _say(dry_run, f"room patch {path} (no remaining cluster mounts it)")
                if not dry_run:
                    path.unlink(missing_ok=True)
                    path.parent.rmdir()
        for path in [] if alive or not rooms.is_dir() else sorted(rooms.glob("rooms-*.yaml")):
            _say(dry_run, f"rooms config patch {path} (no run alive)")
            if not dry_run:
                path.unlink(missing_ok=True)
    failures += _clean_egress(dry_run)
    if not _said and not failures:
        print(f"nothing to clean: kind clusters with a state file in {state_dir}: {', '.join(sorted(remaining)) or 'none'}"
              f"{' (each in use by a live run, no namespace of a dead run in them)' if remaining else ''}; "
              "no file of a dead run or a removed cluster there; no unused egress guard")
    return failures


def _remove_run_locks(dry_run: bool) -> list:
    """Remove the liveness locks of dead runs (``runs/<run id>.lock`` in the state directory) and
    their records there; returns the locks of live runs."""
    runs = cluster.STATE_DIR / "runs"
    run_locks = sorted(runs.glob("*.lock")) if runs.is_dir() else []
    alive = [path for path in run_locks if run_alive(path.name[: -len(".lock")])]
    for path in run_locks:
        if path not in alive:
            _say(dry_run, f"lock of dead run {path}")
            if not dry_run:
                _remove(path)
    # a killed run's own records beside its lock (e2e.plugin.clusters: <run id>.left.json,
    # .used.json, .phase1.json)
    for path in sorted(runs.glob("*.json")) if runs.is_dir() else []:
        if not run_alive(path.name.partition(".")[0]):
            _say(dry_run, f"record of dead run {path}")
            if not dry_run:
                path.unlink(missing_ok=True)
    return alive


def _remove_node_locks(dry_run: bool) -> None:
    """Remove the node locks and turnstiles of dead ``--kubeconfig`` runs (``<run id>.node.lock``,
    ``.node.turn`` in the state directory)."""
    for suffix in NODE_LOCKS:
        for path in sorted(cluster.STATE_DIR.glob(f"*{suffix}")):
            of = path.name[: -len(suffix)]
            if not of.startswith(CLUSTER_PREFIX) and not run_alive(of):
                _say(dry_run, f"node lock of dead run {path}")
                if not dry_run:
                    _remove(path)


def _clean_egress(dry_run: bool) -> int:
    """The suite's Docker network and the host guard, once no node is on it and no run holds it;
    says nothing when neither is there."""
    try:
        if egress.nodes_on_network() or not (egress.network_exists() or egress.host_guard_installed()):
            return 0
        if dry_run:
            _say(dry_run, f"Docker network {egress.NETWORK} and the host egress guard (no node on it), unless a run uses them")
        elif egress.release():
            _say(dry_run, f"Docker network {egress.NETWORK} and the host egress guard (no node on it)")
    except (egress.EgressError, OSError, subprocess.SubprocessError) as e:
        print(f"  removing the egress guard failed: {e}", file=sys.stderr)
        return 1
    return 0


def _clean_namespaces(name: str, dry_run: bool) -> int:
    """Delete the namespaces of dead runs in the live cluster ``name``; returns failures."""
    kind = Kind(name)
    try:
        kube = Kube(str(kind.write_kubeconfig()))
    except Exception as e:  # noqa: BLE001 - one cluster's trouble does not stop the rest
        print(f"cannot list namespaces of cluster {name}: {e}", file=sys.stderr)
        return 1
    return _uncordon_dead(kube, name, dry_run) + _delete_dead_namespaces(kube, name, dry_run)


def _uncordon_dead(kube: Kube, name: str, dry_run: bool) -> int:
    """Uncordon every node of cluster ``name`` (of ``kube``) that a dead run marked as cordoned by
    it (:func:`e2e.cluster.cordon.marked`) and remove the mark; returns failures."""
    try:
        marks = cordon.marked(kube)
    except Exception as e:  # noqa: BLE001 - one cluster's trouble does not stop the rest
        print(f"cannot list the nodes of cluster {name}: {e}", file=sys.stderr)
        return 1
    failures = 0
    for m in marks:
        if run_alive(m.run):
            continue
        if m.cordoned:
            _say(dry_run, f"cordon of node {m.node} by dead run {m.run} in cluster {name} (DR-2's kubectl drain: "
                          f"the node is uncordoned, its mark {cordon.CORDONED_BY} removed)")
        else:
            _say(dry_run, f"mark {cordon.CORDONED_BY} of dead run {m.run} on node {m.node} in cluster {name} (not cordoned)")
        if not dry_run:
            try:
                cordon.uncordon(kube, m.node)
            except Exception as e:  # noqa: BLE001
                print(f"  failed: {e}", file=sys.stderr)
                failures += 1
    return failures


def _delete_dead_namespaces(kube: Kube, name: str, dry_run: bool, keep: frozenset[str] = frozenset()) -> int:
    """Delete the namespaces of dead runs (but ``keep``) in cluster ``name`` of ``kube``; returns failures."""
    try:
        namespaces: list[Any] = kube.core.list_namespace(label_selector=RUN_LABEL).items  # the API sets these fields
    except Exception as e:  # noqa: BLE001 - one cluster's trouble does not stop the rest
        print(f"cannot list namespaces of cluster {name}: {e}", file=sys.stderr)
        return 1
    failures = 0
    for ns in namespaces:
        run = ns.metadata.labels[RUN_LABEL]
        if run_alive(run) or ns.status.phase == "Terminating" or ns.metadata.name in keep:
            continue
        _say(dry_run, f"namespace {ns.metadata.name} of dead run {run} in cluster {name}")
        if not dry_run:
            try:
                kube.delete_namespace(ns.metadata.name)
            except Exception as e:  # noqa: BLE001
                print(f"  failed: {e}", file=sys.stderr)
                failures += 1
    return failures


def clean_cluster(kube: Kube, dry_run: bool = False, wait_s: float = WINDOW_S + UNDO_MARGIN_S,
                  poll_s: float = REACH_POLL_S, sleep: Callable[[float], None] = time.sleep) -> int:
    """Clean the cluster of ``kube``, one the suite did not make (module doc): the armed units a
    dead run's node agent left on its nodes, then the dead runs' namespaces; returns the number
    of failures (a node out of reach after ``wait_s`` s, polled every ``poll_s`` s)."""
    global _said
    _said = 0
    name = kube.kubeconfig or "of the kubeconfig"
    try:
        agents: list[Any] = kube.core.list_namespace(label_selector=AGENT_LABEL).items
    except Exception as e:  # noqa: BLE001
        print(f"cannot list namespaces of cluster {name}: {e}", file=sys.stderr)
        return 1
    failures, keep = 0, set()
    for ns in agents:
        run = (ns.metadata.labels or {}).get(RUN_LABEL)
        if not run or run_alive(run) or ns.status.phase == "Terminating":
            continue
        listed: list[Any] = kube.core.list_namespaced_pod(ns.metadata.name).items  # the API sets these fields
        pods: dict[str, str] = {p.spec.node_name: p.metadata.name for p in listed if p.spec.node_name}
        if dry_run:
            for node in sorted(pods):
                _said += 1
                print(f"would fire the armed undos and stop the pending injects of dead run {run} on node {node}")
            continue
        access = AgentAccess(kube, run, image="")
        access.namespace = ns.metadata.name
        access._pods.update(pods)  # the dead run's own agent pods: clean makes none
        for node in sorted(pods):
            swept = _sweep_node(kube, access, node, wait_s, poll_s, sleep)
            if swept is None:
                keep.add(ns.metadata.name)
                failures += 1
                print(f"  node {node} out of reach for {wait_s:g} s: namespace {ns.metadata.name} kept "
                      "(its agent pods enter the node; `make clean KUBECONFIG=…` again later)", file=sys.stderr)
            else:
                failures += swept
        _said += _registry_faults(kube, access, run, set(pods))
    failures += _uncordon_dead(kube, name, dry_run)
    failures += _delete_dead_namespaces(kube, name, dry_run, frozenset(keep))
    _remove_node_locks(dry_run)
    _remove_run_locks(dry_run)  # after the namespaces: a run is alive or dead for both alike
    if not _said and not failures:
        print(f"nothing to clean in cluster {name}: no namespace labelled {RUN_LABEL} of a dead run "
              f"({len(agents)} node agent namespaces: of live runs or already terminating), no node cordoned by a dead run, "
              f"no lock file of a dead run in {cluster.STATE_DIR}")
    return failures


def _registry_faults(kube: Kube, access: AgentAccess, run: str, nodes: set[str]) -> int:
    """Say the IM registry faults still on in the registry pods of dead run ``run`` on ``nodes``
    (its agent's; :func:`e2e.faults.registry.left_in_pod`: a dark network, a throttle, a freeze);
    they go with the run's namespaces, deleted next. Returns how many lines were said."""
    try:
        registries: list[Any] = kube.core.list_pod_for_all_namespaces(label_selector=REGISTRY_LABEL).items
        namespaces: list[Any] = kube.core.list_namespace(label_selector=RUN_LABEL).items
        dead = {ns.metadata.name for ns in namespaces if (ns.metadata.labels or {}).get(RUN_LABEL) == run}
    except Exception as e:  # noqa: BLE001 - the namespaces' deletion removes them all the same
        print(f"  cannot list the registry pods of dead run {run}: {e}", file=sys.stderr)
        return 0
    said = 0
    for pod in registries:
        namespace, name, node = pod.metadata.namespace, pod.metadata.name, pod.spec.node_name
        if namespace not in dead or node not in nodes:
            continue
        try:
            left = left_in_pod(lambda on, argv: node_run(access, on, argv, 60), node, namespace, name)
        except Exception as e:  # noqa: BLE001 - said; the namespace's deletion removes the pod
            print(f"  registry pod {namespace}/{name} on {node} not looked at: {e}", file=sys.stderr)
            continue
        for line in left:
            print(f"registry pod {namespace}/{name} on {node}: {line} (goes with namespace {namespace})")
        said += len(left)
    return said


def _sweep_node(kube: Kube, access: AgentAccess, node: str, wait_s: float, poll_s: float,
                sleep: Callable[[float], None]) -> int | None:
    """:func:`e2e.cluster.nodeaccess.sweep_units` on ``node``, waiting for it to answer for at most
    ``wait_s`` s; the number of units left (failures), None when the node stayed out of reach."""
    global _said
    deadline = time.monotonic() + wait_s
    said = False
    while True:
        try:
            done, left = sweep_units(access, node)
            break
        except NodeUnreachable as e:
            if time.monotonic() >= deadline:
                print(f"  node {node}: {e}", file=sys.stderr)
                return None
            if not said:
                print(f"waiting up to {wait_s:g} s for node {node} (its agent does not answer: a fault cut it off; "
                      "its armed undo fires by itself)")
                said = True
            sleep(poll_s)
    _said += len(done)
    for line in done:
        print(f"removing {line}")
    for line in left:
        print(f"  left: {line}", file=sys.stderr)
    ready, polls = _ready(kube, node), 0
    while not ready.startswith("Ready=True") and polls < READY_WAIT_S // max(poll_s, 1):
        sleep(poll_s)
        polls += 1
        ready = _ready(kube, node)
    print(f"node {node}: {ready}" + (f" (after {polls} polls of {poll_s:g} s)" if polls else ""))
    return len(left)


def _ready(kube: Kube, node: str) -> str:
    """The node's Ready condition, as ``Ready=True`` (or the reason it cannot be read)."""
    try:
        read: Any = kube.core.read_node(node)  # the API sets status
        conditions = read.status.conditions or []
    except Exception as e:  # noqa: BLE001
        return f"Ready unknown ({e})"
    ready = next((c for c in conditions if c.type == "Ready"), None)
    return f"Ready={ready.status} ({ready.reason})" if ready else "no Ready condition"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m e2e.cli.clean", description=__doc__.split("\n\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="only say what would be removed")
    parser.add_argument("--kubeconfig", help="clean this cluster (one the suite did not make) instead: what dead runs "
                                             "left there (armed units on its nodes, namespaces)")
    parser.add_argument("--context", help="the kubeconfig's context (with --kubeconfig)")
    parser.add_argument("--wait-s", type=float, default=WINDOW_S + UNDO_MARGIN_S,
                        help="with --kubeconfig: how long to wait for a node a fault cut off (s)")
    args = parser.parse_args(argv)
    if args.context and not args.kubeconfig:
        parser.error("--context needs --kubeconfig")
    if args.kubeconfig:
        try:
            kube = Kube(args.kubeconfig, args.context)
        except Exception as e:  # noqa: BLE001 - a bad kubeconfig is said, nothing is touched
            print(f"cannot use kubeconfig {args.kubeconfig}: {e}", file=sys.stderr)
            return 1
        return 1 if clean_cluster(kube, args.dry_run, args.wait_s) else 0
    return 1 if clean(args.dry_run) else 0


if __name__ == "__main__":
    sys.exit(main())
