"""What the suite does to a node, declared once (issue 42 item 5: a dry run lists what would be done
to which node): :data:`ACTIONS`, one :class:`Action` per entry point that changes a node (the faults
of :mod:`e2e.faults`, DR-2's cordon), and :func:`reached`, the entry points a test function reaches
through its module's functions (static: the names its source loads, resolved in its module).

A test declares what it does with the marker ``node_faults`` (one per action; on the test, its
class, its module's ``pytestmark`` or a ``pytest.param``)::

    @pytest.mark.node_faults("kubelet_stopped", case="NF-2", window_s=doc.NF2_STOP_S)

``window_s``: the planned window in seconds, the documented number of ``case`` (a ``{profile: s}``
dict when it depends on the test's profile; omitted: the action has no window of its own, e.g. a
restart at the start of the block). ``node``: which node of a ``--kubeconfig`` run's placement the
test acts on (:data:`NODES`; omitted: any of them, e.g. its pod's). ``hack/census.py --plan`` lists them per test and node;
``tests/test_actions.py`` fails when a test reaches an action it does not declare (or declares one it
never reaches), so the list cannot drift from what the tests do.

An action whose change reaches beyond the node it acts on, to every pod of the cluster, says so
(:attr:`Action.cluster_wide`, :func:`cluster_wide`): in the rooms cluster (e2e.cluster.rooms) a
serial test that declares one holds every room (e2e.run.plan), not only its own. The others change
one node: in a room, its own node(s), in the room's own zone (the node lifecycle controller
rate-limits its NoExecute taints per zone). ``node_shutdown`` deletes only the kube-system pods it
left Failed on its node; ``cordon`` (DR-2's ``kubectl drain --pod-selector``) evicts the test's own
pods only; the registry faults act on the test's own registry.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import textwrap
import types
from dataclasses import dataclass
from typing import Any, Callable, Iterable

MARKER = "node_faults"  # registered with the others in e2e.plugin.options.MARKERS
# the ``node`` of a declaration: which node a --kubeconfig run's test acts on
NODES = {
    "first": "the first placed node (Scenario.default_node)",
    "last": "the last placed node by name (the two-node faults' worker)",
    "control-plane": "the control plane: the suite's kind clusters only (the node agent never enters one)",
    "kind": "a kind node container: the suite's kind clusters only",
}


@dataclass(frozen=True)
class Action:
    """``entry``: the function's import path (``module:name``); ``does``: the change; ``undo``: the
    undo (and the undo armed on the node where there is one); ``enters``: whether it runs commands in
    the node (the node agent on a ``--kubeconfig`` cluster) rather than API writes; ``cluster_wide``:
    what it changes beyond that node, for every pod of the cluster (``""``: nothing)."""
    entry: str
    does: str
    undo: str
    enters: bool = True
    cluster_wide: str = ""

    def function(self) -> Callable:
        module, name = self.entry.split(":")
        return getattr(importlib.import_module(module), name)


_ARMED = "; armed on the node first: a ple2e-undo-* systemd timer at the planned end + 30 s"
ACTIONS: dict[str, Action] = {
    "kubelet_stopped": Action("e2e.faults.components:kubelet_stopped", "systemctl stop kubelet",
                              "systemctl start kubelet" + _ARMED),
    "kubelet_restarted": Action("e2e.faults.components:kubelet_restarted", "systemctl restart kubelet",
                                "systemctl start kubelet" + _ARMED),
    "kubelet_killed": Action("e2e.faults.components:kubelet_killed", "kill -9 the kubelet (systemd restarts it)",
                             "systemctl start kubelet" + _ARMED),
    "containerd_restarted": Action("e2e.faults.components:containerd_restarted", "systemctl restart containerd",
                                   "systemctl start containerd" + _ARMED),
    "containerd_stopped": Action("e2e.faults.components:containerd_stopped", "systemctl stop containerd",
                                 "systemctl start containerd" + _ARMED),
    "apiserver_down": Action("e2e.faults.components:apiserver_down",
                             "the API server's static pod manifest moved out of /etc/kubernetes/manifests",
                             "the manifest moved back" + _ARMED,
                             cluster_wide="the API server is away: every test of the cluster loses its API for the window"),
    "node_paused": Action("e2e.faults.node:node_paused",
                          "node frozen (docker pause; through the agent: kubelet, containerd, shims, kubepods frozen)",
                          "docker unpause / the freezer's thaw" + _ARMED),
    "node_partitioned": Action("e2e.faults.node:node_partitioned",
                               "iptables/ip6tables OUTPUT rules cut the node from the API server (REJECT or DROP)",
                               "the rules deleted (iptables -D)" + _ARMED),
    "node_partitioned_kubelet_restarted": Action("e2e.faults.node:node_partitioned_kubelet_restarted",
                                                 "iptables/ip6tables OUTPUT rules cut the node from the API server "
                                                 "(REJECT or DROP); at the heal systemctl restart kubelet while they still cut it",
                                                 "the rules deleted (iptables -D) after the kubelet restart" + _ARMED),
    "node_shutdown": Action("e2e.faults.node:node_shutdown",
                            "logind's PrepareForShutdown(true) emitted in the node (busctl; no machine shuts down)",
                            "PrepareForShutdown(false); kube-system pods it left Failed deleted; the kubelet restarted "
                            "if it lost its inhibitor lock"),
    "node_rebooted": Action("e2e.faults.node:node_rebooted", "docker stop of the node container (a kind node only)",
                            "docker start; routes set again, the kubelet awaited"),
    "node_tainted": Action("e2e.faults.taints:node_tainted", "NoExecute taint chaos.e2e/evict=1 on the node (API)",
                           "the taint removed (API) and checked gone", enters=False,
                           cluster_wide="the cluster's add-on Deployments (CoreDNS, local-path-provisioner) are rolled "
                                        "out to tolerate it and back (e2e.faults.taints.addons_tolerate): every pod's "
                                        "DNS and volume provisioning"),
    "cordon": Action("e2e.cluster.cordon:mark", "cordon and kubectl drain (annotation pod-lifecycle-e2e/cordoned-by)",
                     "uncordon and the annotation removed (API); make clean uncordons a dead run's node",
                     enters=False),
    # the registry faults: on the suite's clusters its Docker container; on a --kubeconfig cluster
    # its pod's process in the pod's node (the first placed node, scenarios/images/conftest.py)
    "registry_stopped": Action("e2e.faults.registry:registry_stopped",
                               "docker stop of the suite's registry container; through the agent: the registry pod's "
                               "network darkened (iptables DROP of its OUTPUT, its connections reset)",
                               "docker start; through the agent: the DROP removed"),
    "registry_paused": Action("e2e.faults.registry:registry_paused",
                              "docker pause of the suite's registry container; through the agent: the registry pod's "
                              "processes frozen (cgroup freezer)", "docker unpause; through the agent: thawed"),
    "registry_throttled": Action("e2e.faults.registry:registry_throttled",
                                 "tc tbf qdisc on the registry's eth0 (container, or the pod's netns through the agent)",
                                 "tc qdisc del"),
}


def _entries() -> dict[int, str]:
    return {id(a.function()): name for name, a in ACTIONS.items()}


def _chain(node: ast.AST) -> list[str] | None:
    """``a.b.c`` → ``["a", "b", "c"]``; ``None`` for anything but names and attributes."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(parts)]


def _local_imports(tree: ast.AST, module: str) -> dict[str, Any]:
    """Names bound by ``import``/``from … import`` inside a function body (resolved now)."""
    found: dict[str, Any] = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom):
            base = importlib.import_module(("." * n.level) + (n.module or ""), module.rpartition(".")[0] or None) \
                if n.level else importlib.import_module(n.module or "")
            for a in n.names:
                found[a.asname or a.name] = getattr(base, a.name, None)
        elif isinstance(n, ast.Import):
            for a in n.names:
                found[a.asname or a.name.split(".")[0]] = importlib.import_module(a.name if a.asname else a.name.split(".")[0])
    return found


def reached(func: Callable, _seen: dict | None = None) -> set[str]:
    """The :data:`ACTIONS` names ``func`` reaches: every name or attribute chain its source loads,
    resolved in its module (and its own imports); a function of the same top-level package (the
    test's helpers, ``scenarios.faults.fault_helpers``) is followed. A reference counts as reaching
    (an over-approximation: a fault passed along is reached too), and so does each value of a dict,
    list, tuple or set it names (a table of faults)."""
    seen = {} if _seen is None else _seen
    func = inspect.unwrap(func)
    code = getattr(func, "__code__", None)
    if code is None:
        return set()
    if code in seen:
        return seen[code]
    seen[code] = found = set()
    entries = _entries()
    package = func.__module__.split(".")[0]
    tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    names = {**vars(importlib.import_module("builtins")), **func.__globals__, **_local_imports(tree, func.__module__)}
    for n in ast.walk(tree):
        chain = _chain(n) if isinstance(n, (ast.Name, ast.Attribute)) and isinstance(n.ctx, ast.Load) else None
        if not chain or chain[0] not in names:
            continue
        obj: Any = names[chain[0]]
        for part in chain[1:]:
            obj = getattr(obj, part, None)
        # a table of faults (``FAULTS = {"restart": kubelet_restarted, …}``) reaches each of them
        values = obj.values() if isinstance(obj, dict) else obj if isinstance(obj, (list, tuple, set, frozenset)) else (obj,)
        for value in values:
            if id(value) in entries:
                found.add(entries[id(value)])
            elif isinstance(value, types.FunctionType) and value.__module__.split(".")[0] == package:
                found |= reached(value, seen)
    return found


def declared_marks(marks: Iterable[Any]) -> list[tuple[str, str | None, Any, str | None]]:
    """``(action, case, window_s, node)`` of the ``node_faults`` marks in ``marks``; ``ValueError``
    naming an action that :data:`ACTIONS` does not know or a ``node`` not in :data:`NODES`."""
    out = []
    for m in marks:
        if m.name != MARKER:
            continue
        if len(m.args) != 1 or m.args[0] not in ACTIONS:
            raise ValueError(f"@pytest.mark.{MARKER}{m.args}: one action of {', '.join(ACTIONS)}")
        node = m.kwargs.get("node")
        if node is not None and node not in NODES:
            raise ValueError(f"@pytest.mark.{MARKER}({m.args[0]!r}, node={node!r}): node is one of {', '.join(NODES)}")
        out.append((m.args[0], m.kwargs.get("case"), m.kwargs.get("window_s"), node))
    return out


def cluster_wide(marks: Iterable[Any]) -> list[str]:
    """``"action: what it changes beyond its node"`` for each ``node_faults`` mark of ``marks`` whose
    action reaches beyond the node it acts on (:attr:`Action.cluster_wide`), in their order; ``[]``
    when none does. ``ValueError`` as :func:`declared_marks`."""
    return [f"{a}: {ACTIONS[a].cluster_wide}" for a, *_ in declared_marks(marks) if ACTIONS[a].cluster_wide]


def window_of(window_s: Any, profile: str) -> float | None:
    """The planned window (s) of a declaration for a test of ``profile``: ``window_s`` itself, or its
    ``profile`` entry when it is a dict."""
    return window_s.get(profile) if isinstance(window_s, dict) else window_s


def _marks(obj: Any) -> list[Any]:
    marks = getattr(obj, "pytestmark", [])
    return list(marks) if isinstance(marks, (list, tuple)) else [marks]


def declared(func: Callable, *owners: Any) -> set[str]:
    """The actions a test function declares: its ``node_faults`` marks, its owners' (its class, its
    module: ``pytestmark``) and those of its ``parametrize`` values' ``pytest.param(..., marks=…)``."""
    marks = [m for o in (func, *owners) for m in _marks(o)]
    params = [m for p in marks if p.name == "parametrize" and len(p.args) > 1
              for v in p.args[1] for m in getattr(v, "marks", ())]
    return {d[0] for d in declared_marks([*marks, *params])}


def drift(module: types.ModuleType) -> list[str]:
    """What the test functions of ``module`` (``test_*``, also in ``Test*`` classes) reach but do not
    declare, and declare but never reach (:func:`reached`, :func:`declared`): one line each, empty
    when every declaration is true."""
    tests: list[tuple[str, types.FunctionType, tuple[type, ...]]]
    tests = [(n, f, ()) for n, f in vars(module).items() if n.startswith("test_") and isinstance(f, types.FunctionType)]
    tests += [(f"{c}.{n}", f, (cls,)) for c, cls in vars(module).items() if c.startswith("Test") and isinstance(cls, type)
              for n, f in vars(cls).items() if n.startswith("test_") and isinstance(f, types.FunctionType)]
    out = []
    for name, func, owners in tests:
        if func.__module__ != module.__name__:
            continue  # imported from elsewhere: checked there
        did, said = reached(func), declared(func, *owners, module)
        out += [f"{module.__name__}::{name} reaches {a} but does not declare it: "
                f"@pytest.mark.{MARKER}({a!r}, case=…, window_s=…)" for a in sorted(did - said)]
        out += [f"{module.__name__}::{name} declares {a} but never reaches it" for a in sorted(said - did)]
    return out
