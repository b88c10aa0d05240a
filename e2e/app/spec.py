"""An app directory read into an :class:`AppSpec`: its manifests, its config, the facts of its
manifest the contracts are judged with, and its objectives — or one :class:`AppInputError` that
says what is wrong, before any cluster is made.

The directory holds YAML manifests (``*.yaml``, ``*.yml``; every file but ``app.yaml``): exactly
one workload — a Deployment or a StatefulSet (:data:`WORKLOAD_KINDS`) — the Service that selects
its pods, optionally a PodDisruptionBudget and other namespaced objects (ConfigMaps…); a
HorizontalPodAutoscaler is ignored (the contracts need a fixed replica count) and a Namespace is
refused (the suite applies everything into the test's own namespace, and drops any
``metadata.namespace``). ``${app_image}`` and ``${busybox_image}`` are the suite's images (as in
its own manifests: ``e2e.cluster.kube.load_manifests``).

A StatefulSet's ``spec.serviceName`` must name a Service of the directory (its governing,
headless Service: the pods' DNS names ``<pod>.<service>``). The load goes through a Service that
selects the pods and is not headless; when the only one is headless (``clusterIP: None``), it is
applied as written and the suite adds a NodePort copy of it named ``<service>-load``
(:data:`LOAD_SUFFIX`) for the load.

``app.yaml`` (optional; every key optional, an unknown key is an error — see README "Your own
app"):

.. code-block:: yaml

    workload: web              # the Deployment or StatefulSet (default: the only one)
    container: app             # its main container (default: the first)
    service:
      name: web                # default: the Service whose selector matches the pods
      port: 80                 # the Service port loaded (number or name; default: its first)
      path: /                  # the path requested
    load:
      rate_per_s: 20           # requests per second, new connections (≤ 50)
      timeout_s: 1             # per request
    objectives:
      max_failed_requests: 0   # per contract under load
      max_shutdown_s: 30       # delete → container exit (default: terminationGracePeriodSeconds)
      exit_code: 0             # the main container's exit code after SIGTERM
      max_rollout_s: 600       # template change → rollout complete (default: progressDeadlineSeconds;
                               # a StatefulSet: replicas × (grace + startup budget))
      max_startup_s: 150       # pod created → Ready (default: the startupProbe's budget)
      max_drain_s: 600         # kubectl drain of the app's node → done (default: as max_rollout_s)
      min_memory_headroom_pct: 0  # (limit − peak) / limit under load (default 0: below the limit)
    node_fault: kubelet-stop   # opt in to AP-7: the kubelet of the app's node stopped (NODE_FAULTS)
    expect_to_fail: [AP-1]     # negative controls only: contracts that must fail (examples/apps/naive)

Each default's source is :data:`DEFAULT_SOURCES` (the seeds' recommendations), a StatefulSet's
rollout and drain defaults :data:`STATEFULSET_DEFAULT_SOURCES`.
"""

from __future__ import annotations

import copy
import math
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..cluster.images import workload_images
from ..cluster.kube import ManifestError, load_manifests
from ..evidence.load import MAX_RATE_PER_S

CONFIG_FILE = "app.yaml"
# The workloads the contracts run on (one per app directory).
WORKLOAD_KINDS = ("Deployment", "StatefulSet")
# The node faults app.yaml's node_fault opts in to (AP-7; e2e.faults.components).
NODE_FAULTS = ("kubelet-stop",)
# The name of the NodePort copy of a headless load Service: <service>-load.
LOAD_SUFFIX = "-load"
# The NodePort the suite publishes on 127.0.0.1 (kind-config.yaml; e2e.run.scenario.NODE_PORT):
# the app's Service is made a NodePort Service on it, the only way host load reaches the pods.
NODE_PORT = 30080
# The upstream defaults the objectives fall back to, and the seeds' recommendations.
DEFAULT_GRACE_S = 30            # pkg/apis/core/v1/defaults.go SetDefaults_PodSpec
DEFAULT_PROGRESS_DEADLINE_S = 600  # pkg/apis/apps/v1/defaults.go SetDefaults_Deployment; [S2] L142
DEFAULT_STARTUP_BUDGET_S = 150  # [S2] 3.1 startupProbe 30 × 5 s
DEFAULT_POD_MANAGEMENT = "OrderedReady"  # pkg/apis/apps/v1/defaults.go SetDefaults_StatefulSet
DEFAULT_RATE_PER_S = 20.0       # the suite's own traffic cases (PS-4, DR-3): 20/s on 2 cores
DEFAULT_TIMEOUT_S = 1.0
# Where each objective's default comes from (the verdicts name it).
DEFAULT_SOURCES = {
    "max_failed_requests": "[S2] 3.1 «Модель и базовые объекты» (maxUnavailable: 0 — «ни одного меньше … доступных»; "
                           "preStop sleep «дать время эндпоинтам разойтись»): 0 lost requests",
    "max_shutdown_s": "[S2] 3.2 «Остановка пода по шагам» (step 5: SIGKILL when the grace period ends; "
                      "«terminationGracePeriodSeconds ≥ preStop + самый долгий запрос + закрытие ресурсов + запас»): "
                      "the pod's terminationGracePeriodSeconds",
    "exit_code": "[S2] 3.1 (the Go service's graceful shutdown: srv.Shutdown, then return): exit 0",
    "max_rollout_s": "[S2] 3.1 progressDeadlineSeconds (default 600, pkg/apis/apps/v1/defaults.go): the Deployment's own deadline",
    "max_startup_s": "[S2] 3.1 «startupProbe: бюджет на старт: 30 × 5 = 150 секунд»: the app's startupProbe "
                     "initialDelaySeconds + failureThreshold × periodSeconds (150 s without one)",
    "max_drain_s": "[S2] 3.1 progressDeadlineSeconds (default 600) and [S2] «PodDisruptionBudget и drain» (a drain "
                   "replaces the node's pods through the eviction API as a rollout does through its ReplicaSets): "
                   "the Deployment's progressDeadlineSeconds",
    "min_memory_headroom_pct": "[S0] «Нехватка памяти: выселение kubelet и OOM killer» (at limits.memory the kernel's "
                               "OOM killer ends the container, OM-1): 0 % — the peak stays below the limit",
}
# A StatefulSet has no progressDeadlineSeconds: its rollout and drain objectives default to the
# time its one-at-a-time replacement may take.
_STS_ONE_AT_A_TIME = ("[UP] pkg/controller/statefulset/stateful_set_control.go updateStatefulSet (a StatefulSet has no "
                      "progressDeadlineSeconds; one ordinal at a time: a terminating ordinal is recreated only once its pod is "
                      "gone, the next is deleted once the new one is Running and Ready, ST-2, ST-5)")
STATEFULSET_DEFAULT_SOURCES = {
    "max_rollout_s": f"[S2] L678 («обновление идёт с наибольшего номера»); {_STS_ONE_AT_A_TIME}: replicas × "
                     "(terminationGracePeriodSeconds + the startup budget)",
    "max_drain_s": f"[S2] «PodDisruptionBudget и drain» (evictions one at a time while the budget allows one); "
                   f"{_STS_ONE_AT_A_TIME}: replicas × (terminationGracePeriodSeconds + the startup budget)",
}
CONTRACTS = ("AP-1", "AP-2", "AP-3", "AP-4", "AP-5", "AP-6", "AP-7")
_KEYS = {
    "workload": None, "container": None, "expect_to_fail": None, "node_fault": None,
    "service": {"name", "port", "path"},
    "load": {"rate_per_s", "timeout_s"},
    "objectives": set(DEFAULT_SOURCES),
}
_IGNORED_KINDS = {"HorizontalPodAutoscaler"}


class AppInputError(ValueError):
    """The app directory cannot be run: the message says what and where (one line per problem)."""


@dataclass(frozen=True)
class Objective:
    """One objective of the app: its ``value`` and where it comes from (``source``: the config's
    key, or the default's seed section)."""

    value: float
    source: str


@dataclass
class AppSpec:
    """An app directory, read and checked (module doc).

    ``workload``: the Deployment or StatefulSet as applied; ``service``: the Service the load goes
    through (a NodePort copy of a headless one: module doc); ``objects``: what is applied (the load
    Service first, made a NodePort Service on :data:`NODE_PORT`; every container of the workload
    ``imagePullPolicy: Never``; no namespace); ``dry_run_objects``: the same as the user wrote them
    (the Service unchanged, no copy), for the server's dry run; ``images``: every image the pod
    template names; ``ignored``: what was left out and why; ``added``: what the suite adds and why;
    ``node_fault``: the opted-in fault of AP-7 (:data:`NODE_FAULTS`) or None.
    Facts of the manifest: ``replicas``, ``max_surge`` / ``max_unavailable`` (resolved as the
    workload's controller does), ``grace_s``, ``prestop_s`` (a preStop ``sleep`` action or an exec
    ``sleep N``; None when there is no preStop, -1 when its length cannot be read), ``readiness``
    (a readinessProbe is defined), ``startup_budget_s`` (None without a startupProbe); a
    StatefulSet's ``pod_management_policy``, ``governing_service``, ``update_strategy``,
    ``ordinal_start``; ``budget`` (the PodDisruptionBudget's desiredHealthy and disruptionsAllowed).
    """

    path: Path
    name: str
    workload: dict
    service: dict
    container: str
    objects: list[dict]
    dry_run_objects: list[dict]
    images: list[str]
    pdb: dict | None
    path_url: str
    service_port: int
    rate_per_s: float
    timeout_s: float
    objectives: dict[str, Objective]
    expect_to_fail: tuple[str, ...] = ()
    ignored: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    node_fault: str | None = None

    def __repr__(self) -> str:  # what pytest and the HTML report show as the test's parameter
        return f"app {self.name} ({self.path})"

    @property
    def kind(self) -> str:
        """``Deployment`` or ``StatefulSet``."""
        return self.workload["kind"]

    @property
    def workload_name(self) -> str:
        return self.workload["metadata"]["name"]

    @property
    def labels(self) -> dict[str, str]:
        return dict(self.workload["spec"]["selector"].get("matchLabels") or {})

    @property
    def template(self) -> dict:
        return self.workload["spec"]["template"]

    @property
    def main(self) -> dict:
        return next(c for c in self.template["spec"]["containers"] if c["name"] == self.container)

    @property
    def replicas(self) -> int:
        return int(self.workload["spec"].get("replicas", 1))

    @property
    def grace_s(self) -> int:
        return int(self.template["spec"].get("terminationGracePeriodSeconds", DEFAULT_GRACE_S))

    @property
    def max_surge(self) -> int:
        """A Deployment's surge (ResolveFenceposts); 0 for a StatefulSet (one pod per ordinal)."""
        if self.kind == "StatefulSet":
            return 0
        return resolve_fenceposts(self.replicas, *_rolling(self.workload))[0]

    @property
    def max_unavailable(self) -> int:
        """A Deployment's (ResolveFenceposts); a StatefulSet's as written (:func:`statefulset_max_unavailable`:
        the API server keeps the field only with the MaxUnavailableStatefulSet gate on — the test
        reads what it stored)."""
        if self.kind == "StatefulSet":
            return statefulset_max_unavailable(self.replicas, _sts_rolling(self.workload).get("maxUnavailable"))
        return resolve_fenceposts(self.replicas, *_rolling(self.workload))[1]

    @property
    def pod_management_policy(self) -> str:
        """A StatefulSet's ``spec.podManagementPolicy`` (default OrderedReady: SetDefaults_StatefulSet)."""
        return str(self.workload["spec"].get("podManagementPolicy") or DEFAULT_POD_MANAGEMENT)

    @property
    def governing_service(self) -> str | None:
        """A StatefulSet's ``spec.serviceName`` (its pods' subdomain), else None."""
        return self.workload["spec"].get("serviceName") or None

    @property
    def update_strategy(self) -> tuple[str, int]:
        """A StatefulSet's update strategy: ``(type, partition)`` (defaults RollingUpdate, 0)."""
        strategy = self.workload["spec"].get("updateStrategy") or {}
        return str(strategy.get("type") or "RollingUpdate"), int(_sts_rolling(self.workload).get("partition") or 0)

    @property
    def ordinal_start(self) -> int:
        """A StatefulSet's first ordinal (``spec.ordinals.start``, default 0: getStartOrdinal)."""
        return int((self.workload["spec"].get("ordinals") or {}).get("start") or 0)

    def pod_name(self, ordinal: int) -> str:
        """The name of a StatefulSet's pod ``ordinal`` (stateful_set_utils.go getPodName: <set>-<ordinal>)."""
        return f"{self.workload_name}-{ordinal}"

    @property
    def budget(self) -> tuple[int, int] | None:
        """The PodDisruptionBudget's ``(desiredHealthy, disruptionsAllowed)`` with every replica
        healthy (:func:`pdb_budget`); None without a PDB."""
        return pdb_budget(self.pdb, self.replicas) if self.pdb else None

    @property
    def prestop_s(self) -> float | None:
        return prestop_seconds(self.main)

    @property
    def readiness(self) -> bool:
        return bool(self.main.get("readinessProbe"))

    @property
    def startup_budget_s(self) -> float | None:
        probe = self.main.get("startupProbe")
        if not probe:
            return None
        return probe_budget_s(probe)

    @property
    def service_name(self) -> str:
        return self.service["metadata"]["name"]

    def facts(self) -> dict[str, object]:
        """The manifest's facts the contracts use (for the report)."""
        out: dict[str, object] = {
            "workload": f"{self.kind}/{self.workload_name}", "container": self.container, "replicas": self.replicas,
            "maxSurge": self.max_surge, "maxUnavailable": self.max_unavailable,
            "terminationGracePeriodSeconds": self.grace_s, "preStop_s": self.prestop_s,
            "readinessProbe": self.readiness, "startup_budget_s": self.startup_budget_s,
            "service": f"{self.service_name}:{self.service_port}{self.path_url}", "images": self.images,
            "pdb": self.pdb["metadata"]["name"] if self.pdb else None, "ignored": self.ignored, "added": self.added,
            "node_fault": self.node_fault}
        if self.kind == "StatefulSet":
            out.update({"podManagementPolicy": self.pod_management_policy, "serviceName": self.governing_service,
                        "updateStrategy": "{} partition {}".format(*self.update_strategy), "ordinals.start": self.ordinal_start})
        if self.budget:
            out.update({"pdb.desiredHealthy": self.budget[0], "pdb.disruptionsAllowed": self.budget[1]})
        return out


def _rolling(dep: dict) -> tuple[object, object]:
    strategy = dep["spec"].get("strategy") or {}
    ru = strategy.get("rollingUpdate") or {}
    return ru.get("maxSurge", "25%"), ru.get("maxUnavailable", "25%")


def _sts_rolling(sts: dict) -> dict:
    return ((sts["spec"].get("updateStrategy") or {}).get("rollingUpdate")) or {}


def _scaled(value: object, total: int, round_up: bool) -> int:
    """intstr.GetScaledValueFromIntOrPercent: a percentage of ``total``, rounded up or down."""
    if isinstance(value, str) and value.endswith("%"):
        exact = int(value[:-1]) * total / 100
        return math.ceil(exact) if round_up else math.floor(exact)
    return int(value)  # type: ignore[call-overload]


def resolve_fenceposts(replicas: int, max_surge: object, max_unavailable: object) -> tuple[int, int]:
    """``(surge, unavailable)`` as the Deployment controller resolves them
    (pkg/controller/deployment/util/deployment_util.go ResolveFenceposts): maxSurge rounded up,
    maxUnavailable down; both zero → unavailable 1."""
    surge = _scaled(max_surge, replicas, True)
    unavailable = _scaled(max_unavailable, replicas, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def statefulset_max_unavailable(replicas: int, max_unavailable: object) -> int:
    """A StatefulSet's pods that may be unavailable at once in a rolling update
    (pkg/controller/statefulset/stateful_set_utils.go getStatefulSetMaxUnavailable): the field
    (default 1) scaled by ``replicas`` rounded down, at least 1."""
    return max(1, _scaled(1 if max_unavailable is None else max_unavailable, replicas, False))


def pdb_budget(pdb: dict, replicas: int) -> tuple[int, int]:
    """``(desiredHealthy, disruptionsAllowed)`` of the PodDisruptionBudget ``pdb`` over
    ``replicas`` healthy pods, as the disruption controller computes them
    (pkg/controller/disruption/disruption.go getExpectedPodCount, updatePdbStatus): maxUnavailable
    (a percentage of the owner's replicas rounded up) → replicas − it; minAvailable (a percentage
    rounded up) → itself; neither → 0; disruptionsAllowed = healthy − desiredHealthy, at least 0."""
    spec = pdb.get("spec") or {}
    if spec.get("maxUnavailable") is not None:
        desired = max(0, replicas - _scaled(spec["maxUnavailable"], replicas, True))
    elif spec.get("minAvailable") is not None:
        desired = _scaled(spec["minAvailable"], replicas, True)
    else:  # neither: getExpectedPodCount leaves desiredHealthy 0
        desired = 0
    return desired, max(0, replicas - desired)


def prestop_seconds(container: dict) -> float | None:
    """How long the container's preStop hook holds the signal back: a ``sleep`` action's seconds,
    or N of an exec hook whose command is ``sleep N`` (``sh -c "sleep N"`` too); None without a
    preStop hook, -1 when one exists but its length cannot be read (an HTTP hook, another command)."""
    pre = (container.get("lifecycle") or {}).get("preStop")
    if not pre:
        return None
    if "sleep" in pre:
        return float((pre["sleep"] or {}).get("seconds", 0))
    command = ((pre.get("exec") or {}).get("command")) or []
    words = " ".join(str(c) for c in command).replace(";", " ").split()
    for i, w in enumerate(words[:-1]):
        if w.endswith("sleep"):
            try:
                return float(words[i + 1].rstrip("s"))
            except ValueError:
                return -1
    return -1


def probe_budget_s(probe: dict) -> float:
    """The time a probe allows before it gives up: initialDelaySeconds + failureThreshold ×
    periodSeconds (API defaults 0, 3, 10: pkg/apis/core/v1/defaults.go SetDefaults_Probe)."""
    return float(probe.get("initialDelaySeconds", 0) + probe.get("failureThreshold", 3) * probe.get("periodSeconds", 10))


def _read_config(path: Path) -> dict:
    file = path / CONFIG_FILE
    if not file.exists():
        return {}
    try:
        cfg = yaml.safe_load(file.read_text()) or {}
    except yaml.YAMLError as e:
        raise AppInputError(f"{file}: invalid YAML: {e}") from None
    if not isinstance(cfg, dict):
        raise AppInputError(f"{file}: expected a mapping of settings, got {type(cfg).__name__}")
    problems = []
    for key, value in cfg.items():
        if key not in _KEYS:
            problems.append(f"unknown key {key!r} (known: {', '.join(sorted(_KEYS))})")
        elif _KEYS[key] is not None:
            if not isinstance(value, dict):
                problems.append(f"{key}: expected a mapping, got {value!r}")
                continue
            for sub in value:
                if sub not in _KEYS[key]:  # type: ignore[operator]
                    problems.append(f"unknown key {key}.{sub} (known: {', '.join(sorted(_KEYS[key]))})")  # type: ignore[arg-type]
    if problems:
        raise AppInputError(f"{file}: " + "; ".join(problems))
    return cfg


def _number(cfg_file: Path, key: str, value: object, low: float = 0, high: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise AppInputError(f"{cfg_file}: {key}: expected a number in [{low:g}, {high:g}], got {value!r}")
    return float(value)


def _manifests(path: Path) -> tuple[list[tuple[Path, dict]], list[str]]:
    files = sorted(p for p in path.iterdir() if p.suffix in (".yaml", ".yml") and p.name != CONFIG_FILE)
    if not files:
        raise AppInputError(f"{path}: no manifest (*.yaml, *.yml besides {CONFIG_FILE}) in the app directory")
    out, ignored = [], []
    for f in files:
        try:
            docs = load_manifests(f, {**workload_images()})
        except ManifestError as e:
            raise AppInputError(f"broken manifest: {e}") from None
        for d in docs:
            meta = d.get("metadata") or {}
            if not meta.get("name"):
                raise AppInputError(f"broken manifest: {f}: {d['kind']} without metadata.name")
            if d["kind"] in _IGNORED_KINDS:
                ignored.append(f"{d['kind']}/{meta['name']} ({f.name}): ignored — the contracts need a fixed replica count")
                continue
            if d["kind"] == "Namespace":
                raise AppInputError(f"{f}: Namespace/{meta['name']}: the suite applies the app into a namespace of its own; "
                                    "remove the Namespace (metadata.namespace is dropped)")
            out.append((f, d))
    return out, ignored


def _selects(service: dict, labels: dict[str, str]) -> bool:
    selector = (service.get("spec") or {}).get("selector") or {}
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def _pick_port(svc_file: Path, service: dict, want: object) -> dict:
    ports = (service.get("spec") or {}).get("ports") or []
    if not ports:
        raise AppInputError(f"{svc_file}: Service/{service['metadata']['name']} has no ports")
    if want is None:
        return ports[0]
    for p in ports:
        if want in (p.get("port"), p.get("name")):
            return p
    shown = ", ".join(f"{p.get('name') or '-'}:{p.get('port')}" for p in ports)
    raise AppInputError(f"{svc_file}: Service/{service['metadata']['name']} has no port {want!r} (config service.port); "
                        f"its ports: {shown}")


def missing_on_host(images: list[str]) -> list[str]:
    """The ``images`` the local Docker engine does not have (``docker image inspect``): nothing is
    pulled, so each must be built or loaded there first. Raises :class:`AppInputError` without a
    docker CLI."""
    docker = shutil.which("docker")
    if docker is None:
        raise AppInputError("the docker CLI is not installed: the app's images are taken from the local Docker engine")
    return [i for i in images if subprocess.run([docker, "image", "inspect", i], capture_output=True,
                                                timeout=30).returncode != 0]


def _is_headless(service: dict) -> bool:
    return (service.get("spec") or {}).get("clusterIP") == "None"


def _load_copy(headless: dict) -> dict:
    """A NodePort copy of the ``headless`` Service for the load, named ``<name>-load``."""
    copy_ = copy.deepcopy(headless)
    copy_["metadata"] = {"name": headless["metadata"]["name"] + LOAD_SUFFIX}
    return copy_


def load_app(path: str | Path, check_images_on_host: bool = True) -> AppSpec:
    """Read and check the app directory ``path`` (module doc). Raises :class:`AppInputError`:
    no such directory, a broken manifest or config, no Deployment or StatefulSet or several without
    ``workload``, no Service selecting its pods, a StatefulSet whose ``serviceName`` names no
    Service of the directory, an unknown ``node_fault``, an image the local Docker engine lacks
    (``check_images_on_host``; with ``--kubeconfig`` the nodes are checked instead)."""
    path = Path(path).resolve()
    if not path.is_dir():
        raise AppInputError(f"{path}: not a directory (APP= / --app names a directory of manifests)")
    cfg = _read_config(path)
    cfg_file = path / CONFIG_FILE
    docs, ignored = _manifests(path)

    workloads = [(f, d) for f, d in docs if d["kind"] in WORKLOAD_KINDS]
    want = cfg.get("workload")
    if want is not None:
        workloads = [(f, d) for f, d in workloads if d["metadata"]["name"] == want]
    if not workloads:
        raise AppInputError(f"{path}: no Deployment or StatefulSet{f' named {want!r} (config workload)' if want else ''} "
                            "in the manifests")
    if len(workloads) > 1:
        names = ", ".join(f"{d['kind']}/{d['metadata']['name']}" for _, d in workloads)
        raise AppInputError(f"{path}: several workloads ({names}): name the one to judge with `workload:` in {CONFIG_FILE}")
    dep_file, dep = workloads[0]
    kind, dep_name = dep["kind"], dep["metadata"]["name"]
    spec = dep.get("spec") or {}
    template = spec.get("template") or {}
    containers = (template.get("spec") or {}).get("containers") or []
    labels = (spec.get("selector") or {}).get("matchLabels") or {}
    if not containers or not labels:
        raise AppInputError(f"broken manifest: {dep_file}: {kind}/{dep_name} needs "
                            "spec.selector.matchLabels and spec.template.spec.containers")
    container = cfg.get("container") or containers[0]["name"]
    if container not in [c["name"] for c in containers]:
        raise AppInputError(f"{cfg_file}: container {container!r} is not a container of {kind}/{dep_name} "
                            f"({', '.join(c['name'] for c in containers)})")

    svc_cfg = cfg.get("service") or {}
    pod_labels = (template.get("metadata") or {}).get("labels") or {}
    all_services = [(f, d) for f, d in docs if d["kind"] == "Service"]
    governing = spec.get("serviceName") if kind == "StatefulSet" else None
    if governing and governing not in [d["metadata"]["name"] for _, d in all_services]:
        raise AppInputError(f"{path}: StatefulSet/{dep_name}: spec.serviceName {governing!r} names no Service of the directory "
                            f"(its pods' DNS names <pod>.{governing} need it): add the headless Service {governing!r} "
                            "(clusterIP: None) that selects the pods")
    services = all_services
    if svc_cfg.get("name"):
        services = [(f, d) for f, d in services if d["metadata"]["name"] == svc_cfg["name"]]
    matching = sorted([(f, d) for f, d in services if _selects(d, pod_labels)], key=lambda fd: _is_headless(fd[1]))
    if not matching:
        found = ", ".join(d["metadata"]["name"] for _, d in services) or "none"
        raise AppInputError(f"{path}: no Service selects the pods of {kind}/{dep_name} "
                            f"(labels {pod_labels}); Services found: {found}. The contracts load the app through its Service: "
                            "add one (a ClusterIP Service is enough; the suite publishes it on 127.0.0.1)")
    svc_file, service = matching[0]
    port = _pick_port(svc_file, service, svc_cfg.get("port"))
    path_url = str(svc_cfg.get("path", "/"))
    if not path_url.startswith("/"):
        raise AppInputError(f"{cfg_file}: service.path must start with '/', got {path_url!r}")
    added = []
    load_service = service
    if _is_headless(service):
        load_service = _load_copy(service)
        taken = [f"{d['kind']}/{d['metadata']['name']}" for _, d in docs if d["kind"] == "Service"
                 and d["metadata"]["name"] == load_service["metadata"]["name"]]
        if taken:
            raise AppInputError(f"{path}: Service/{service['metadata']['name']} is headless and the NodePort copy the load needs "
                                f"would be named {load_service['metadata']['name']!r}, which {taken[0]} has: rename it, "
                                "or add a ClusterIP Service that selects the pods")
        added.append(f"Service/{load_service['metadata']['name']}: a NodePort copy of the headless Service/"
                     f"{service['metadata']['name']} ({svc_file.name}) for the load, which a headless Service cannot carry")

    load_cfg = cfg.get("load") or {}
    rate = _number(cfg_file, "load.rate_per_s", load_cfg.get("rate_per_s", DEFAULT_RATE_PER_S), 0.1, MAX_RATE_PER_S)
    timeout = _number(cfg_file, "load.timeout_s", load_cfg.get("timeout_s", DEFAULT_TIMEOUT_S), 0.1, 30)
    node_fault = cfg.get("node_fault")
    if node_fault is not None and node_fault not in NODE_FAULTS:
        raise AppInputError(f"{cfg_file}: node_fault: {node_fault!r} is not a node fault the contracts offer "
                            f"({', '.join(NODE_FAULTS)})")

    pdbs = [d for _, d in docs if d["kind"] == "PodDisruptionBudget"
            and all(pod_labels.get(k) == v for k, v in ((d.get("spec") or {}).get("selector") or {}).get("matchLabels", {}).items())]
    images = sorted({c.get("image", "") for c in containers + ((template.get("spec") or {}).get("initContainers") or [])})
    if "" in images:
        raise AppInputError(f"broken manifest: {dep_file}: a container of {kind}/{dep_name} names no image")

    objects: list[dict] = []
    dry: list[dict] = []
    for _, d in docs:
        d = copy.deepcopy(d)
        (d.get("metadata") or {}).pop("namespace", None)
        dry.append(copy.deepcopy(d))
        if (d["kind"], d["metadata"]["name"]) == (kind, dep_name):
            tspec = d["spec"]["template"]["spec"]
            for c in tspec.get("containers", []) + tspec.get("initContainers", []):
                c["imagePullPolicy"] = "Never"  # nothing is pulled: the images are loaded into the nodes
            dep = d
        objects.append(d)
    if load_service is service:  # the user's own Service becomes the NodePort Service (applied first)
        objects.remove(next(o for o in objects if o["kind"] == "Service" and o["metadata"]["name"] == service["metadata"]["name"]))
    objects.insert(0, _node_port(load_service, port))

    objectives = _objectives(cfg, cfg_file, dep)
    expect_to_fail = tuple(cfg.get("expect_to_fail") or ())
    bad = [c for c in expect_to_fail if c not in CONTRACTS]
    if bad:
        raise AppInputError(f"{cfg_file}: expect_to_fail: {bad} are not contracts ({', '.join(CONTRACTS)})")
    app = AppSpec(path=path, name=path.name, workload=dep, service=objects[0], container=container, objects=objects,
                  dry_run_objects=dry, images=images, pdb=pdbs[0] if pdbs else None, path_url=path_url,
                  service_port=int(port.get("port", 0)), rate_per_s=rate, timeout_s=timeout, objectives=objectives,
                  expect_to_fail=expect_to_fail, ignored=ignored, added=added, node_fault=node_fault)
    if check_images_on_host:
        missing = missing_on_host(images)
        if missing:
            raise AppInputError(f"{path}: image(s) not in the local Docker engine: {', '.join(missing)} (named by "
                                f"{kind}/{dep_name} in {dep_file.name}). Nothing is pulled: build or load "
                                "them first (`docker build -t IMAGE .`, `docker load -i IMAGE.tar`), then run again")
    return app


def _node_port(service: dict, port: dict) -> dict:
    """``service`` made the NodePort Service of the load: ``port`` on :data:`NODE_PORT`, no other
    nodePort, no cluster IP of its own, no namespace."""
    d = copy.deepcopy(service)
    (d.get("metadata") or {}).pop("namespace", None)
    d["spec"]["type"] = "NodePort"
    for p in d["spec"]["ports"]:
        p.pop("nodePort", None)
        if (p.get("port"), p.get("name")) == (port.get("port"), port.get("name")):
            p["nodePort"] = NODE_PORT
    d["spec"].pop("clusterIP", None)
    d["spec"].pop("clusterIPs", None)
    return d


def _objectives(cfg: dict, cfg_file: Path, dep: dict) -> dict[str, Objective]:
    given = cfg.get("objectives") or {}
    tspec = dep["spec"]["template"]["spec"]
    grace = tspec.get("terminationGracePeriodSeconds", DEFAULT_GRACE_S)
    main = tspec["containers"][0] if not cfg.get("container") else next(c for c in tspec["containers"] if c["name"] == cfg["container"])
    startup = probe_budget_s(main["startupProbe"]) if main.get("startupProbe") else DEFAULT_STARTUP_BUDGET_S
    sources = dict(DEFAULT_SOURCES)
    if dep["kind"] == "StatefulSet":
        replace_all = int(dep["spec"].get("replicas", 1)) * (grace + startup)
        rollout = drain = replace_all
        sources.update(STATEFULSET_DEFAULT_SOURCES)
    else:
        rollout = drain = dep["spec"].get("progressDeadlineSeconds", DEFAULT_PROGRESS_DEADLINE_S)
    defaults = {"max_failed_requests": 0, "max_shutdown_s": grace, "exit_code": 0, "max_rollout_s": rollout,
                "max_startup_s": startup, "max_drain_s": drain, "min_memory_headroom_pct": 0}
    out = {}
    for key, default in defaults.items():
        if key in given:
            high = 255 if key == "exit_code" else 100 if key.endswith("_pct") else math.inf
            out[key] = Objective(_number(cfg_file, f"objectives.{key}", given[key], 0, high),
                                 f"{cfg_file.name} objectives.{key} = {given[key]}")
        else:
            out[key] = Objective(float(default), f"default {default:g}: {sources[key]}")
    return out
