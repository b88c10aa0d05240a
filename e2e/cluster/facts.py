"""The cluster's own facts, read at the start of a run (issue 42 item 3, the read-only part), and
whether a node satisfies a profile's kubelet settings.

Per node, through the API server only (a ``--kubeconfig`` cluster has no ``docker exec``; every
request goes to the kubeconfig's server, which the readers require to be on 127.0.0.1, as
:mod:`e2e.cluster.gates` does):

- ``kubelet`` and ``runtime``: ``status.nodeInfo.kubeletVersion`` and ``containerRuntimeVersion``
  (``"containerd://2.1.4"``), with ``os_image`` and ``kernel``;
- ``zone`` (label ``topology.kubernetes.io/zone``, None without one), ``control_plane`` (label
  ``node-role.kubernetes.io/control-plane``) and ``taints`` (``"key=value:Effect"``);
- ``kubelet_config``: the running KubeletConfiguration, ``GET /api/v1/nodes/<node>/proxy/configz``
  (its ``kubeletconfig``);
- ``gates_on``: the kubelet's feature gates that are on (``kubernetes_feature_enabled`` of the
  node proxy's ``/metrics``, :func:`e2e.cluster.gates.kubelet`);
- ``cgroup``: ``{"version": 1 | 2}`` when the suite could read it in the node (its own kind
  clusters: ``docker exec`` into the control plane; a ``--kubeconfig`` cluster with
  ``--node-agent``: on each worker through the agent), else ``{"version": None, "reason": …}``
  — without node access, on a control-plane node (the agent never enters one), or the read's error.

A piece that cannot be read is recorded as ``{"unknown": "<why>"}`` in its place, never dropped.
Shape of :func:`collect`'s answer (``facts.json`` holds one per profile's cluster):
``{"server": "v1.37.2", "api_server_gates_on": [...], "nodes": {name: {...}}}``.

Profiles by facts (:func:`profile_needs`, :func:`differences`, :func:`choose_node`): a profile whose
patch is ``KubeletConfiguration`` settings (``profiles/crashloop-cap-20s.yaml``: ``crashLoopBackOff.
maxContainerRestartPeriod: 20s``) is satisfied by the schedulable nodes whose running configuration
has those values (durations compared as durations: ``5m0s`` == ``300s``; a ``featureGates`` entry
against the kubelet's live gates). More nodes (``nodes:`` of the kind config, with the control
plane's taint removed: ``profiles/multi-node.yaml``) are read as a count of such nodes
(:attr:`Needs.nodes`). A patch with anything else (controller-manager flags, cluster feature gates)
cannot be read off a node: :attr:`Needs.unreadable` names it — except the node-lifecycle settings,
which set a band rather than ask for a node (:data:`FROM_FACTS`: ``nodeLeaseDurationSeconds``, the
controller manager's ``node-monitor-grace-period`` and ``node-monitor-period``): they go to
:attr:`Needs.from_facts`, and the values that depend on them take their band from the cluster's own
settings (:func:`lifecycle`). The default profile's needs are the upstream kubelet defaults its
documented values assume (:func:`e2e.plugin.clusters.default_needs`).

The controller manager's flags cannot be read on a managed cluster: the user may give them in a
facts file (``--cluster-facts FILE``, :func:`read_cluster_facts`); without one they are the
upstream defaults (:data:`CM_DEFAULTS`), and every value judged from them says so.

Two runs' facts side by side and a report's section: :mod:`e2e.base.facts`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import quote

from ..base.facts import flatten, shown
from . import gates

ZONE_LABEL = "topology.kubernetes.io/zone"
CONTROL_PLANE_LABEL = "node-role.kubernetes.io/control-plane"
CGROUP_NEEDS_NODE = "needs node access (a process in the node reads /sys/fs/cgroup: --node-agent)"
"""Why a ``--kubeconfig`` cluster's cgroup version is unknown without ``--node-agent``."""
CGROUP_NOT_ENTERED = "not read: the node agent does not enter this node (a control plane, or a node outside --node-selector)"
"""Why the cgroup version of a node the agent does not enter (a control plane, a node outside --node-selector) is unknown."""
# taints that keep a test's pod (no tolerations) off a node
_BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")
_DURATION = re.compile(r"(?P<n>\d+(?:\.\d+)?)(?P<unit>ns|us|µs|ms|s|m|h)")
_UNIT_S = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def duration_s(value: object) -> float | None:
    """A Go duration (``"5m0s"``, ``"20s"``, ``"1h2m3.5s"``) in seconds; None for anything else."""
    if not isinstance(value, str) or not value:
        return None
    pos, total = 0, 0.0
    for m in _DURATION.finditer(value):
        if m.start() != pos:
            return None
        total += float(m.group("n")) * _UNIT_S[m.group("unit")]
        pos = m.end()
    return total if pos == len(value) else None


def _taint(t: Mapping) -> str:
    value = f"={t['value']}" if t.get("value") else ""
    return f"{t.get('key')}{value}:{t.get('effect')}"


Cgroup = int | str | None | Mapping[str, "int | str"]
"""What a caller read of the nodes' cgroup version: one version (1, 2) for every node; ``None``
(not read: :data:`CGROUP_NEEDS_NODE`); or per node name a version or why it is unknown (a node
missing from the mapping: :data:`CGROUP_NOT_ENTERED`)."""


def node_facts(node: dict, get: Callable[[str], str], cgroup: int | str | None = None) -> dict:
    """The facts of one node: ``node`` is the API's JSON of it (``GET /api/v1/nodes``), ``get(path)``
    answers a GET on the API server (its body as text; raises on any failure), ``cgroup`` the version
    when the caller read it in the node, or why it could not (a text; see module doc for the shape)."""
    name = node["metadata"]["name"]
    labels = node["metadata"].get("labels") or {}
    info = (node.get("status") or {}).get("nodeInfo") or {}
    out: dict = {
        "kubelet": info.get("kubeletVersion"),
        "runtime": info.get("containerRuntimeVersion"),
        "os_image": info.get("osImage"),
        "kernel": info.get("kernelVersion"),
        "zone": labels.get(ZONE_LABEL),
        "control_plane": CONTROL_PLANE_LABEL in labels,
        "taints": sorted(_taint(t) for t in (node.get("spec") or {}).get("taints") or []),
        "cgroup": ({"version": cgroup} if isinstance(cgroup, int)
                   else {"version": None, "reason": cgroup or CGROUP_NEEDS_NODE}),
    }
    proxy = f"/api/v1/nodes/{quote(name, safe='')}/proxy"
    try:
        out["kubelet_config"] = json.loads(get(f"{proxy}/configz")).get("kubeletconfig") or {}
    except Exception as e:  # noqa: BLE001 - recorded as unknown, with why
        out["kubelet_config"] = {"unknown": f"GET {proxy}/configz: {type(e).__name__}: {str(e).strip()[:200]}"}
    try:
        out["gates_on"] = sorted(g.name for g in gates.parse(get(f"{proxy}/metrics"), f"kubelet of {name}").values()
                                 if g.enabled)
    except Exception as e:  # noqa: BLE001
        out["gates_on"] = {"unknown": f"GET {proxy}/metrics: {type(e).__name__}: {str(e).strip()[:200]}"}
    return out


def _cgroup_of(cgroup: Cgroup, name: str) -> int | str | None:
    if isinstance(cgroup, Mapping):
        return cgroup.get(name, CGROUP_NOT_ENTERED)
    return cgroup


def facts_from(server: str, nodes: list[dict], get: Callable[[str], str], cgroup: Cgroup = None) -> dict:
    """The cluster's facts (module doc) from its server version, its nodes' JSON, ``get`` (see
    :func:`node_facts`) and ``cgroup`` (:data:`Cgroup`)."""
    try:
        api_gates: object = sorted(g.name for g in gates.parse(get("/metrics"), "kube-apiserver").values() if g.enabled)
    except Exception as e:  # noqa: BLE001
        api_gates = {"unknown": f"GET /metrics: {type(e).__name__}: {str(e).strip()[:200]}"}
    return {"server": server, "api_server_gates_on": api_gates,
            "nodes": {n["metadata"]["name"]: node_facts(n, get, _cgroup_of(cgroup, n["metadata"]["name"])) for n in nodes}}


def collect(kube, cgroup: Cgroup = None) -> dict:
    """The facts of the cluster of ``kube`` (:class:`e2e.cluster.kube.Kube`), read through its API
    server on 127.0.0.1 (:func:`e2e.cluster.gates.read`); ``cgroup``: the nodes' cgroup version when
    read in a node. A node list the user may not read is ``{"unknown": …}`` under ``nodes``."""
    server = kube.version().git_version

    def get(path: str) -> str:
        return gates.read(kube, path, f"GET {path}")

    try:
        nodes = kube.nodes()
    except Exception as e:  # noqa: BLE001 - e.g. 403: this user may not list nodes
        facts = facts_from(server, [], get, cgroup)
        facts["nodes"] = {"unknown": f"list nodes: {type(e).__name__}: {str(e).strip()[:200]}"}
        return facts
    return facts_from(server, nodes, get, cgroup)


# -- profiles by facts -------------------------------------------------------------------------


@dataclass(frozen=True)
class Needs:
    """What a profile asks of the nodes: ``kubelet`` the KubeletConfiguration fields (dotted paths,
    ``featureGates.<Gate>`` included) and their values, on each of ``nodes`` schedulable nodes
    (1; ``multi-node``: 2); ``unreadable`` what else its patch sets, which no node fact shows (e.g.
    ``ClusterConfiguration``). ``from_facts`` the node-lifecycle settings it sets
    (:data:`FROM_FACTS`, ``{"nodeLeaseDurationSeconds": 20, "node-monitor-grace-period": "20s"}``),
    which ask for no node: the values that depend on them take their band from the cluster's own
    settings (:func:`lifecycle`). ``unset_is_default``: a field the node's configz lacks counts as
    satisfied (``kubelet`` holds the kubelet's own defaults: an older kubelet omits a field it does
    not know, and then runs with the upstream default). ``tolerates``: the taints (``key=value:Effect``)
    the test's pods tolerate, which do not keep a node out (a room of e2e.cluster.rooms)."""

    profile: str
    kubelet: dict[str, object] = field(default_factory=dict)
    unreadable: tuple[str, ...] = ()
    from_facts: dict[str, object] = field(default_factory=dict)
    nodes: int = 1
    unset_is_default: bool = False
    tolerates: tuple[str, ...] = ()

    def only(self, settings: tuple[str, ...]) -> Needs:
        """These needs with :attr:`kubelet` narrowed to ``settings`` (a test that depends on those of
        the profile's kubelet settings only: ``@pytest.mark.profile(name, needs=(…))``; ``()``: none,
        the node count stays). ``ValueError`` naming a setting the profile does not set."""
        unknown = [k for k in settings if k not in self.kubelet]
        if unknown:
            raise ValueError(f"profile {self.profile} sets no kubelet {', '.join(unknown)} "
                             f"(it sets: {', '.join(self.kubelet) or 'none'})")
        return replace(self, kubelet={k: v for k, v in self.kubelet.items() if k in settings})


def _init_unreadable(part: dict) -> bool:
    """Whether an ``InitConfiguration`` entry sets more than ``nodeRegistration.taints: []`` (the
    control plane made schedulable, which the node count and the taints in the facts cover)."""
    rest = {k: v for k, v in part.items() if k not in ("kind", "apiVersion", "nodeRegistration")}
    registration = part.get("nodeRegistration") or {}
    return bool(rest) or registration != {"taints": []}


def profile_needs(path: Path) -> Needs:
    """The :class:`Needs` of the profile file ``path`` (``profiles/<name>.yaml``); ``ValueError``
    naming the file when it is not a kind config patch. Each ``role: worker`` entry of its ``nodes``
    adds one schedulable node to :attr:`Needs.nodes` (with the untainted control plane: the
    ``multi-node`` profile's two nodes); another role stays :attr:`Needs.unreadable`."""
    import yaml  # here: the rest of the module serves make compare, which has the standard library only

    try:
        patch = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as e:
        raise ValueError(f"profile {path}: {e}") from e
    if not isinstance(patch, dict):
        raise ValueError(f"profile {path}: not a mapping")
    kubelet: dict[str, object] = {}
    from_facts: dict[str, object] = {}
    other = [k for k in patch if k not in ("kubeadmConfigPatches", "nodes")]
    entries = patch.get("nodes") or []
    if not isinstance(entries, list) or not all(isinstance(n, dict) for n in entries):
        raise ValueError(f"profile {path}: nodes is not a list of mappings")
    workers = sum(1 for n in entries if n.get("role") == "worker")
    if workers != len(entries):
        other.append("nodes")
    for doc in patch.get("kubeadmConfigPatches") or []:
        part = yaml.safe_load(doc) if isinstance(doc, str) else doc
        if not isinstance(part, dict):
            raise ValueError(f"profile {path}: a kubeadmConfigPatches entry is not a mapping")
        body = {k: v for k, v in part.items() if k not in ("kind", "apiVersion")}
        if part.get("kind") == "KubeletConfiguration":
            for key, value in flatten(body).items():
                (from_facts if ("KubeletConfiguration", key) in FROM_FACTS else kubelet)[key] = value
        elif part.get("kind") == "ClusterConfiguration" and _cm_flags_only(body):
            from_facts.update(body["controllerManager"]["extraArgs"])
        elif part.get("kind") != "InitConfiguration" or _init_unreadable(part):
            other.append(str(part.get("kind")))
    return Needs(path.stem, kubelet, tuple(other), from_facts=from_facts, nodes=1 + workers)


def _cm_flags_only(cluster_configuration: Mapping) -> bool:
    """Whether a ClusterConfiguration patch sets only the controller manager's node-lifecycle flags
    (:data:`FROM_FACTS`), as a map-form ``extraArgs``."""
    cm = cluster_configuration.get("controllerManager")
    if set(cluster_configuration) != {"controllerManager"} or not isinstance(cm, Mapping) or set(cm) != {"extraArgs"}:
        return False
    args = cm["extraArgs"]
    return isinstance(args, Mapping) and bool(args) and all(("controllerManager", k) in FROM_FACTS for k in args)


def _same(want: object, have: object) -> bool:
    dw, dh = duration_s(want), duration_s(have)
    if dw is not None and dh is not None:
        return abs(dw - dh) < 1e-9
    return want == have or str(want).lower() == str(have).lower()


def differences(needs: Needs, name: str, node: Mapping) -> list[str]:
    """What keeps node ``name`` (its facts, :func:`node_facts`) from satisfying ``needs``:
    ``["tainted node-role.kubernetes.io/control-plane:NoSchedule"]``,
    ``["crashLoopBackOff.maxContainerRestartPeriod 5m0s"]``; ``[]`` when it satisfies them."""
    out = [f"tainted {t}" for t in node.get("taints") or [] if t.endswith(_BLOCKING_EFFECTS) and t not in needs.tolerates]
    config = node.get("kubelet_config") or {}
    gates_on = node.get("gates_on")
    for key, want in needs.kubelet.items():
        if key.startswith("featureGates.") and isinstance(gates_on, list):
            gate = key.split(".", 1)[1]
            have: object = gate in gates_on
            if not _same(want, have):
                out.append(f"{gate} {'on' if have else 'off'}")
            continue
        if "unknown" in config:
            out.append(f"{key} unknown ({config['unknown']})")
            continue
        have = flatten(config).get(key)
        if have is None and needs.unset_is_default:
            continue
        if not _same(want, have):
            out.append(f"{key} {shown(have)}")
    return out


def choose_node(needs: Needs, facts: Mapping) -> tuple[tuple[str, ...], str]:
    """The nodes of ``facts`` (:func:`collect`) that satisfy ``needs``, by name: ``((name, …), "")``
    when at least :attr:`Needs.nodes` do (a test's pods may land on any of them); else ``((),
    reason)``, the precise difference per node: ``"needs crashLoopBackOff.maxContainerRestartPeriod
    20s; node w1 has 5m0s; node cp has tainted …"``, ``"needs 2 schedulable nodes with …; only w1
    satisfies it; node cp has tainted …"``."""
    if needs.unreadable:
        return (), (f"needs a kind cluster of profile {needs.profile}: it sets {', '.join(needs.unreadable)}, "
                    "which no node fact shows")
    nodes = facts.get("nodes")
    if not isinstance(nodes, Mapping) or "unknown" in nodes:
        return (), f"profile {needs.profile}: the nodes' facts are unknown ({(nodes or {}).get('unknown')})"
    want = ", ".join(f"{k} {shown(v)}" for k, v in needs.kubelet.items())
    if needs.nodes > 1:
        want = f"{needs.nodes} schedulable nodes" + (f" with {want}" if want else "")
    matching, why = [], []
    for name in sorted(nodes):
        diff = differences(needs, name, nodes[name])
        if diff:
            why.append(f"node {name} has {', '.join(diff)}")
        else:
            matching.append(name)
    if matching and len(matching) >= needs.nodes:
        return tuple(matching), ""
    if matching:
        why.insert(0, f"only {', '.join(matching)} satisf{'ies' if len(matching) == 1 else 'y'} it")
    return (), f"needs {want or 'a schedulable node'}; " + "; ".join(why or ["no node"])


# -- the node-lifecycle settings: bands from the cluster's facts ---------------------------------

# kube-controller-manager's upstream defaults (k8s.io/kubernetes v1.37.2
# pkg/controller/nodelifecycle/config/v1alpha1/defaults.go RecommendedDefaultNodeLifecycleControllerConfiguration)
CM_DEFAULTS = {"node-monitor-grace-period": "50s", "node-monitor-period": "5s"}
CM_DEFAULTS_SOURCE = ("pkg/controller/nodelifecycle/config/v1alpha1/defaults.go "
                      "RecommendedDefaultNodeLifecycleControllerConfiguration, v1.37.2")
# the facts file's sections and keys (--cluster-facts)
# (feature-gates: its --feature-gates, "A=true,B=false": e2e.cluster.gates.controller_manager_assumed)
CM_FEATURE_GATES = "feature-gates"
CLUSTER_FACTS_KEYS = {"controllerManager": (*CM_DEFAULTS, CM_FEATURE_GATES)}
# the profile settings that set a band instead of asking for a node: (section, key)
FROM_FACTS = (("KubeletConfiguration", "nodeLeaseDurationSeconds"),
              *(("controllerManager", k) for k in CM_DEFAULTS))


class ClusterFactsError(ValueError):
    """A facts file (``--cluster-facts``) that cannot be used: the message names the file and key."""


def read_cluster_facts(path: Path) -> dict:
    """The facts file ``path`` (YAML): ``{"controllerManager": {"node-monitor-grace-period": "50s",
    "node-monitor-period": "5s", "feature-gates": "MaxUnavailableStatefulSet=true"}}`` (any key may be
    left out). Raises :class:`ClusterFactsError` naming the file and the key for a file that cannot
    be read, an unknown section or key, a period that is not a Go duration (``"50s"``, ``"1m0s"``)
    or gates not as ``--feature-gates`` takes them."""
    import yaml  # here: see profile_needs

    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as e:
        raise ClusterFactsError(f"--cluster-facts {path}: {e}") from None
    if not isinstance(data, dict):
        raise ClusterFactsError(f"--cluster-facts {path}: not a mapping (expected {', '.join(CLUSTER_FACTS_KEYS)})")
    out: dict = {}
    for section, entries in data.items():
        if section not in CLUSTER_FACTS_KEYS:
            raise ClusterFactsError(f"--cluster-facts {path}: unknown key {section!r} (known: {', '.join(CLUSTER_FACTS_KEYS)})")
        if not isinstance(entries, dict):
            raise ClusterFactsError(f"--cluster-facts {path}: {section} is not a mapping")
        known = CLUSTER_FACTS_KEYS[section]
        for key, value in entries.items():
            if key not in known:
                raise ClusterFactsError(f"--cluster-facts {path}: unknown key {section}.{key} (known: {', '.join(known)})")
            if key == CM_FEATURE_GATES:
                try:
                    gates.feature_gates_flag(str(value))
                except ValueError as e:
                    raise ClusterFactsError(f"--cluster-facts {path}: {section}.{key}: {e} (e.g. MaxUnavailableStatefulSet=true)") from None
            elif duration_s(value) is None:
                raise ClusterFactsError(f"--cluster-facts {path}: {section}.{key} {value!r} is not a duration (e.g. 50s, 1m0s)")
        out[section] = dict(entries)
    return out


def controller_manager(given: Mapping[str, str], origin: str | None) -> dict:
    """The controller manager's node-lifecycle flags as facts.json records them: ``given`` (from the
    facts file or the profile the suite made the cluster from, named by ``origin``) over the
    upstream defaults; ``{"flags": {...}, "from": {flag: where}}``, where a flag not given says
    ``"upstream default (…)"``; with ``feature-gates`` given also ``"feature_gates": {"gates":
    {name: on}, "from": origin}``."""
    flags, where = {}, {}
    for key, default in CM_DEFAULTS.items():
        if key in given:
            flags[key], where[key] = given[key], str(origin)
        else:
            flags[key], where[key] = default, f"upstream default ({CM_DEFAULTS_SOURCE})"
    out: dict = {"flags": flags, "from": where}
    if CM_FEATURE_GATES in given:
        out["feature_gates"] = {"gates": gates.feature_gates_flag(str(given[CM_FEATURE_GATES])), "from": str(origin)}
    return out


@dataclass(frozen=True)
class Lifecycle:
    """A node's node-lifecycle settings, in seconds: ``lease_s`` (its kubelet's
    ``nodeLeaseDurationSeconds``), ``grace_s`` and ``period_s`` (the controller manager's
    ``node-monitor-grace-period`` and ``node-monitor-period``); ``source`` names each setting and
    where it came from; ``assumed`` is the sentence every value judged from an upstream default
    carries in its details (``""`` when every flag was given)."""

    lease_s: float
    grace_s: float
    period_s: float
    source: str
    assumed: str = ""


def lifecycle(facts: Mapping, node: str) -> Lifecycle:
    """The :class:`Lifecycle` of ``node`` from a cluster's facts (:func:`collect` with its
    ``controller_manager`` entry, :func:`controller_manager`). ``ValueError`` when the node's
    running configuration is unknown (its reason named)."""
    config = ((facts.get("nodes") or {}).get(node) or {}).get("kubelet_config") or {}
    lease = config.get("nodeLeaseDurationSeconds")
    if "unknown" in config or not isinstance(lease, (int, float)):
        raise ValueError(f"node {node}: nodeLeaseDurationSeconds unknown ({config.get('unknown', 'not in configz')})")
    cm = facts.get("controller_manager") or controller_manager({}, None)
    flags, where = cm["flags"], cm["from"]
    grace, period = (duration_s(flags[k]) for k in CM_DEFAULTS)
    if grace is None or period is None:
        raise ValueError(f"controller-manager flags {flags}: not durations")
    source = "; ".join([f"kubelet configz nodeLeaseDurationSeconds={lease:g} on node {node}",
                        *(f"controller-manager {k} {flags[k]} ({where[k]})" for k in CM_DEFAULTS)])
    defaulted = [f"{k} {flags[k]}" for k in CM_DEFAULTS if where[k].startswith("upstream default")]
    assumed = (f"controller-manager flags not given (--cluster-facts): upstream defaults assumed: {', '.join(defaulted)} "
               f"({CM_DEFAULTS_SOURCE})") if defaulted else ""
    return Lifecycle(float(lease), float(grace), float(period), source, assumed)
