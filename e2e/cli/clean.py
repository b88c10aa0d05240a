"""``make clean``: remove what dead runs left behind (``python -m e2e.cli.clean [--dry-run]``).

- **Clusters**: every kind cluster with a state file in ``STATE_DIR`` (``$E2E_STATE_DIR``,
  default ``/tmp/pod-lifecycle-e2e``) that no live process uses (:func:`e2e.cluster.kind.cluster_in_use`):
  clusters kept with ``--keep-cluster`` included. A ``ple2e-*`` cluster without a state file
  (another ``E2E_STATE_DIR``, or made before state files existed) is listed, not touched.
- **Namespaces** labelled with the run id of a run that is no longer alive
  (:func:`e2e.cluster.kind.run_alive`), in every cluster that stays (kept namespaces of failed tests
  included).
- **Files**: state and lock files of clusters that no longer exist (or are deleted here), lock
  files of dead runs (``runs/<run id>.lock``, a ``--kubeconfig`` run's ``<run id>.node.lock`` and
  ``.node.turn``), the cluster creations' ``creating.lock`` and ``create.<i>.lock`` once no run
  is alive, per-node CNI configs and node guard files no remaining cluster mounts.
- **Egress guard** (:mod:`e2e.cluster.egress`): the suite's Docker network and the host guard's
  iptables rules, once no node is on the network and no live run holds it.

Prints what it removes (``--dry-run``: the same list, removing nothing); exit code 0, or 1 when
something could not be removed.
"""

from __future__ import annotations

import argparse
import logging
import subprocess
import sys
from typing import Any

from ..cluster import kind as cluster, egress
from ..cluster.kind import CLUSTER_PREFIX, Kind, PreflightError, cluster_in_use, kind_clusters, run_alive
from ..base.locks import remove_unused, unused
from ..cluster.kube import RUN_LABEL, Kube

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


def _say(dry_run: bool, what: str) -> None:
    print(("would remove " if dry_run else "removing ") + what)


def clean(dry_run: bool = False) -> int:
    """Remove what dead runs left (see module doc); returns the number of failures."""
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
        runs = state_dir / "runs"
        run_locks = sorted(runs.glob("*.lock")) if runs.is_dir() else []
        alive = [path for path in run_locks if run_alive(path.name[: -len(".lock")])]
        for path in run_locks:
            if path not in alive:
                _say(dry_run, f"lock of dead run {path}")
                if not dry_run:
                    _remove(path)
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
    failures += _clean_egress(dry_run)
    return failures


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
        namespaces: list[Any] = kube.core.list_namespace(label_selector=RUN_LABEL).items  # the API sets these fields
    except Exception as e:  # noqa: BLE001 - one cluster's trouble does not stop the rest
        print(f"cannot list namespaces of cluster {name}: {e}", file=sys.stderr)
        return 1
    failures = 0
    for ns in namespaces:
        run = ns.metadata.labels[RUN_LABEL]
        if run_alive(run) or ns.status.phase == "Terminating":
            continue
        _say(dry_run, f"namespace {ns.metadata.name} of dead run {run} in cluster {name}")
        if not dry_run:
            try:
                kube.delete_namespace(ns.metadata.name)
            except Exception as e:  # noqa: BLE001
                print(f"  failed: {e}", file=sys.stderr)
                failures += 1
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m e2e.cli.clean", description=__doc__.split("\n\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="only say what would be removed")
    args = parser.parse_args(argv)
    return 1 if clean(args.dry_run) else 0


if __name__ == "__main__":
    sys.exit(main())
