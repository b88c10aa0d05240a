"""ES — ephemeral-storage eviction (CASES.md ES-1 … ES-7).

How the kubelet enforces ephemeral-storage limits (read in v1.34.4, v1.35.4, v1.36.3 and v1.37.2;
identical where it matters here unless said):

- **The loop.** pkg/kubelet/eviction/eviction_manager.go ``Start``: ``synchronize``, then wait
  ``monitoringInterval`` = ``evictionMonitoringPeriod`` = 10 s (pkg/kubelet/kubelet.go; a
  constant, not in the KubeletConfiguration). With ``localStorageCapacityIsolation`` on,
  ``synchronize`` runs ``localStorageEviction`` over every active pod; per pod, in this order:
  ``emptyDirLimitEviction`` (a volume's usage > its ``sizeLimit``),
  ``podEphemeralStorageLimitEviction`` (the pod total > the sum of its containers' limits),
  ``containerEphemeralStorageLimitEviction`` (a container's logs + writable layer > its limit;
  the writable layer only when the image filesystem is not dedicated). The first that fires
  evicts: ``evictPod`` with grace ``immediateEvictionGracePeriodSeconds`` = 1, the message, and
  no condition — an Event ``Warning Evicted <message>`` and the pod status ``phase: Failed``,
  ``reason: Evicted``, ``message: <message>``; no ``DisruptionTarget`` (only node-pressure
  evictions pass one).
- **The messages** (pkg/kubelet/eviction/helpers.go): ``containerEphemeralStorageMessageFmt``
  ``"Container %s exceeded its local ephemeral storage limit %q. "``,
  ``podEphemeralStorageMessageFmt`` ``"Pod ephemeral local storage usage exceeds the total limit
  of containers %s. "``, ``emptyDirMessageFmt`` ``"Usage of EmptyDir volume %q exceeds the limit
  %q. "`` (each ends with a space). For a single-container pod the pod limit equals the
  container's and the pod total (writable layer + logs + etc-hosts + volumes) is never below the
  container's usage, and the pod check runs first: the pod-level message is what one normally
  sees (CASES.md ES-1: accept both).
- **The stats** (Summary API, pkg/kubelet/stats, CRI stats provider with containerd): the
  writable layer comes from CRI ``ListContainerStats``, which containerd answers from a snapshot
  usage cache refreshed every ``stats_collect_period`` = 10 s
  (containerd internal/cri/server/images/snapshots.go, default in internal/cri/config/config_unix.go);
  container logs are ``du`` of the log files at every call (stats/host_stats_provider.go
  ``getPodContainerLogStats``): no lag; emptyDir volumes come from the volume stats cache
  (server/stats/fs_resource_analyzer.go, volume_stat_calculator.go): a new pod is picked up
  within ``volumeStatsAggPeriod`` (60 s), measured at once, then every
  ``volumeStatsAggPeriod × [1, 2)`` (``wait.JitterUntil`` jitter 1.0). A memory-backed emptyDir
  is not local ephemeral storage (pkg/volume/util ``IsLocalEphemeralVolume``: medium "" only), so
  it never enters the pod total.
- **The kill.** ``killPodNow`` → ``SyncTerminatingPod``: grace 1 s, raised to the runtime
  manager's ``minimumGracePeriodInSeconds`` = 2 (pkg/kubelet/kuberuntime/kuberuntime_manager.go).
  The ES workloads' PID 1 is a shell with no TERM trap, which ignores SIGTERM: SIGKILL after 2 s,
  exit code 137. The status manager holds back a terminal phase until the containers stopped
  (pkg/kubelet/status/status_manager.go ``mergePodStatus``), so ``Failed`` + ``Evicted`` + message
  reach the API together, after the kill.

A delay is measured from the container's own ``crossed`` mark (epoch s, written right after the
block that took its usage over the limit) to the receive time of the ``Evicted`` event and of
the first terminal pod status.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kubernetes.utils import parse_quantity

from ..judge.expectations import Band, Expectation, at_least, register
from .kubelet import KUBELET_HANDOFF_S, MINIMUM_GRACE_PERIOD_S, STATUS_UPDATE_S, UPGRADE_PATH_READ

# Read in v1.34.4, v1.35.4, v1.36.3, v1.37.2 (module doc, CHECKED; 5d96d18 of issue 15).
VERIFIED_IN = UPGRADE_PATH_READ

S0_ES = "[S0] «ephemeral-storage» (десятисекундный цикл kubelet, grace 1 s, сообщение «Container app exceeded…»)"
S0_CONFIGZ = "[S0] «Пороги и порядок выселения» (kind configz: evictionHard 0 %)"
S0_PS5 = "[S0] «Остановка пода по шагам» / CASES.md PS-5 (PID 1 without a handler: SIGKILL, 137)"
UP_LOOP = "[UP] pkg/kubelet/kubelet.go evictionMonitoringPeriod; pkg/kubelet/eviction/eviction_manager.go Start, localStorageEviction, evictPod"
UP_MSG = "[UP] pkg/kubelet/eviction/helpers.go {fmt}; eviction_manager.go {func}"
UP_KILL = "[UP] pkg/kubelet/pod_workers.go killPodNow; kuberuntime/kuberuntime_manager.go minimumGracePeriodInSeconds; status/status_manager.go mergePodStatus"
CHECKED = "(read in v1.34.4, v1.35.4, v1.36.3, v1.37.2)"

# -- mechanism constants (seconds) -------------------------------------------------------
# The eviction's grace (1 s) is raised to kubelet.MINIMUM_GRACE_PERIOD_S: SIGKILL 2 s after SIGTERM;
# the pod worker takes up the kill request within kubelet.KUBELET_HANDOFF_S.
# The eviction manager's loop: synchronize, then wait this long (pkg/kubelet/kubelet.go).
EVICTION_MONITORING_PERIOD_S = 10.0
# One synchronize pass (Summary API: CRI ListContainerStats + du of log files, then the
# per-pod checks) on a one-node kind cluster; the next 10 s wait starts after it.
SYNCHRONIZE_S = 1.0
# The kubelet's event broadcaster → API server → the recorder's watch.
EVENT_DELIVERY_S = 1.0
# containerd's CRI image service refreshes snapshot (writable layer) usage every
# stats_collect_period s (default 10: internal/cri/config/config_unix.go; ES-7 reads the node's).
CONTAINERD_STATS_COLLECT_PERIOD_S = 10.0
# kubelet volumeStatsAggPeriod (default 1m: pkg/kubelet/apis/config/v1beta1/defaults.go; ES-7
# reads the node's) and the volume calculator's jitter factor (server/stats/volume_stat_calculator.go).
VOLUME_STATS_AGG_PERIOD_S = 60.0
VOLUME_STATS_JITTER = 1.0

# How stale each kind of usage can be when synchronize reads it (s).
WRITABLE_LAYER_LAG_S = CONTAINERD_STATS_COLLECT_PERIOD_S
LOGS_LAG_S = 0.0
# A pod's volumes are first measured when the analyzer picks the pod up (≤ 60 s after it
# appears: then at once) and then every 60–120 s; a write just after a measurement waits for
# the next one: up to 2 × 60 s.
EMPTYDIR_LAG_S = VOLUME_STATS_AGG_PERIOD_S * (1 + VOLUME_STATS_JITTER)

WRITABLE_LAYER_WHY = f"+{WRITABLE_LAYER_LAG_S:g} s containerd snapshot usage refresh (stats_collect_period)"
LOGS_WHY = "+0 s: log usage is du of the log files at every synchronize"
EMPTYDIR_WHY = (
    f"+{EMPTYDIR_LAG_S:g} s volume stats refresh (volumeStatsAggPeriod {VOLUME_STATS_AGG_PERIOD_S:g} s × "
    f"(1 + jitter {VOLUME_STATS_JITTER:g}))"
)


def crossing_to_event_high(lag_s: float) -> float:
    """Upper end (s) of crossing → ``Evicted`` event received, for a usage ``lag_s`` stale."""
    return lag_s + EVICTION_MONITORING_PERIOD_S + SYNCHRONIZE_S + EVENT_DELIVERY_S


def _timing(case: str, lag_s: float, lag_why: str, minors) -> list[Expectation]:
    loop_why = (
        f"+{EVICTION_MONITORING_PERIOD_S:g} s eviction monitoring period +{SYNCHRONIZE_S:g} s one synchronize pass"
    )
    to_event_high = crossing_to_event_high(lag_s)
    to_failed_high = (
        lag_s + EVICTION_MONITORING_PERIOD_S + SYNCHRONIZE_S + KUBELET_HANDOFF_S + MINIMUM_GRACE_PERIOD_S + STATUS_UPDATE_S
    )
    return [
        Expectation(
            case=case, name="crossing_to_evicted_event_s", documented=EVICTION_MONITORING_PERIOD_S, unit="s",
            band=Band(0.0, to_event_high),
            why=f"0: not before the crossing (the mark is taken after the block); {lag_why} {loop_why} "
                f"+{EVENT_DELIVERY_S:g} s event delivery",
            source=f"{S0_ES}; {UP_LOOP}", minors=minors,
        ),
        Expectation(
            case=case, name="crossing_to_failed_s", documented=EVICTION_MONITORING_PERIOD_S + MINIMUM_GRACE_PERIOD_S, unit="s",
            band=Band(MINIMUM_GRACE_PERIOD_S, to_failed_high),
            why=f"≥ {MINIMUM_GRACE_PERIOD_S:g} s: the phase turns terminal only after the kill; {lag_why} {loop_why} "
                f"+{KUBELET_HANDOFF_S:g} s pod worker +{MINIMUM_GRACE_PERIOD_S:g} s SIGTERM→SIGKILL "
                f"+{STATUS_UPDATE_S:g} s status update",
            source=f"{S0_ES}; {UP_LOOP}; {UP_KILL}", minors=minors,
        ),
        Expectation(
            case=case, name="evicted_event_to_failed_s", documented=MINIMUM_GRACE_PERIOD_S, unit="s",
            band=Band(MINIMUM_GRACE_PERIOD_S - EVENT_DELIVERY_S, MINIMUM_GRACE_PERIOD_S + KUBELET_HANDOFF_S + STATUS_UPDATE_S),
            why=f"grace 1 s raised to the {MINIMUM_GRACE_PERIOD_S:g} s minimum (PID 1 ignores SIGTERM: killed at SIGKILL); "
                f"−{EVENT_DELIVERY_S:g} s event delivery later than the status; +{KUBELET_HANDOFF_S:g} s pod worker "
                f"+{STATUS_UPDATE_S:g} s status update",
            source=f"{S0_ES}; {UP_KILL}", minors=minors,
        ),
    ]


def _outcome(case: str, source: str, minors) -> list[Expectation]:
    return [
        Expectation(case=case, name="phase", documented="Failed", source=source, minors=minors),
        Expectation(case=case, name="reason", documented="Evicted", source=f"{source}; [UP] eviction/helpers.go Reason", minors=minors),
        Expectation(case=case, name="event_type", documented="Warning",
                    source=f"{source}; [UP] eviction_manager.go evictPod (v1.EventTypeWarning)", minors=minors),
        Expectation(case=case, name="disruption_target_condition", documented=False,
                    source=f"CASES.md ES-1 (only node-pressure evictions add it); [UP] eviction_manager.go localStorageEviction → evictPod(…, condition nil) {CHECKED}",
                    minors=minors),
        Expectation(case=case, name="exit_code", documented=137,
                    source=f"{S0_PS5}; {UP_KILL}", minors=minors),
        # The first terminal phase the pod reaches: the workload cannot exit 0 (no TERM trap,
        # `sleep 3600 & wait`), so a Succeeded here would be a real finding, not a race.
        Expectation(case=case, name="first_terminal_phase", documented="Failed",
                    source=f"{source}; [UP] status_manager.go mergePodStatus, kubelet_pods.go generateAPIPodStatus", minors=minors),
    ]


CONTAINER_MSG = 'Container {container} exceeded its local ephemeral storage limit "{limit}". '
POD_MSG = "Pod ephemeral local storage usage exceeds the total limit of containers {limit}. "
EMPTYDIR_MSG = 'Usage of EmptyDir volume "{volume}" exceeds the limit "{limit}". '
# Either message for a single-container pod (regex; the test passes re.escape()d values).
SINGLE_CONTAINER_MSG_RE = (
    r'(Container {container} exceeded its local ephemeral storage limit "{limit}"'
    r"|Pod ephemeral local storage usage exceeds the total limit of containers {limit})\. "
)


def _messages(case: str, variants: dict[str, tuple[str, bool, str]], minors) -> list[Expectation]:
    """``variants``: measurement-name suffix → (documented, is-pattern, source); each gives a
    ``message…`` (pod status) and an ``event_message…`` (the Evicted event) entry."""
    out = []
    for suffix, (documented, pattern, source) in variants.items():
        for what in ("message", "event_message"):
            out.append(Expectation(case=case, name=what + suffix, documented=documented, pattern=pattern, source=source, minors=minors))
    return out


# ES-1 … ES-3 are keyed to the versions whose eviction manager source was read (v1.34.4, v1.35.4,
# v1.36.3, v1.37.2: pkg/kubelet/eviction/eviction_manager.go localStorageEviction and its helpers, the
# same in both); older versions stay undocumented until read.
READ = (34, None)

# ES-1 — a container over its own limit (writable layer). "[single]": one container, either
# message; "[sibling]": an idle second container with the same limit keeps the pod total under
# the sum of limits, so only the container check can fire.
register(
    _timing("ES-1", WRITABLE_LAYER_LAG_S, WRITABLE_LAYER_WHY, READ)
    + _outcome("ES-1", S0_ES, READ)
    + _messages(
        "ES-1",
        {
            "[single]": (SINGLE_CONTAINER_MSG_RE, True,
                         f"CASES.md ES-1 (accept both); {UP_MSG.format(fmt='containerEphemeralStorageMessageFmt, podEphemeralStorageMessageFmt', func='localStorageEviction (pod check first)')}"),
            "[sibling]": (CONTAINER_MSG, False,
                          f"{S0_ES}; {UP_MSG.format(fmt='containerEphemeralStorageMessageFmt', func='containerEphemeralStorageLimitEviction')}"),
        },
        READ,
    ),
    VERIFIED_IN,
)

# ES-2 — an emptyDir over its sizeLimit (volume stats).
register(
    _timing("ES-2", EMPTYDIR_LAG_S, EMPTYDIR_WHY, READ)
    + _outcome("ES-2", S0_ES, READ)
    + _messages("ES-2", {"": (EMPTYDIR_MSG, False, f"CASES.md ES-2; {S0_ES}; {UP_MSG.format(fmt='emptyDirMessageFmt', func='emptyDirLimitEviction')}")}, READ), VERIFIED_IN
)

# ES-3 — the pod total over the sum of container limits (a writer with no limit of its own).
register(
    _timing("ES-3", WRITABLE_LAYER_LAG_S, WRITABLE_LAYER_WHY, READ)
    + _outcome("ES-3", S0_ES, READ)
    + _messages("ES-3", {"": (POD_MSG, False, f"CASES.md ES-3; {S0_ES}; {UP_MSG.format(fmt='podEphemeralStorageMessageFmt', func='podEphemeralStorageLimitEviction')}")}, READ), VERIFIED_IN
)

# ES-4 — controls: under the limit, and a memory-backed emptyDir, are not evicted.
register(
    [
        Expectation(case="ES-4", name="evicted", documented=False,
                    source=f"CASES.md ES-4; {S0_ES}; {UP_LOOP} (usage > limit, strictly)"),
        Expectation(case="ES-4", name="memory_emptydir_counted", documented=False,
                    source="CASES.md ES-4; [S0] «…emptyDir с medium: Memory живёт в tmpfs и считается памятью»; "
                           f"[UP] pkg/volume/util/util.go IsLocalEphemeralVolume (medium \"\" only); stats/helper.go calcEphemeralStorage {CHECKED}"),
    ],
    VERIFIED_IN,
)

# ES-5 — stdout/stderr logs count toward the container's usage. The eviction manager adds the
# container's log usage to its writable layer (containerEphemeralStorageLimitEviction:
# ``containerUsed := diskUsage(containerStat.Logs)``) and the CRI stats provider measures the
# log files with du (getPodContainerLogStats): the same in v1.34.4, v1.35.4, v1.36.3, v1.37.2; older
# versions were not read, so they stay undocumented here.
ES5 = (34, None)
ES5_SOURCE = (
    "[S0] «Логи входят в счёт…»; [UP] eviction_manager.go containerEphemeralStorageLimitEviction (logs + rootfs), "
    "stats/cri_stats_provider.go makeContainerStats → host_stats_provider.go getPodContainerLogStats (v1.34.4, v1.35.4, v1.36.3, v1.37.2)"
)
register(
    _timing("ES-5", LOGS_LAG_S, LOGS_WHY, ES5)
    + _outcome("ES-5", ES5_SOURCE, ES5)
    + _messages("ES-5", {"": (CONTAINER_MSG, False, f"{ES5_SOURCE}; {UP_MSG.format(fmt='containerEphemeralStorageMessageFmt', func='containerEphemeralStorageLimitEviction')}")}, ES5), VERIFIED_IN
)

# ES-6 — a request above the node's allocatable is not scheduled.
UP_FIT = "[UP] pkg/scheduler/framework/plugins/noderesources/fit.go (\"Insufficient %v\"); pkg/scheduler/framework/types.go FitError"
register(
    [
        Expectation(case="ES-6", name="phase", documented="Pending", source="CASES.md ES-6; [S0]"),
        Expectation(case="ES-6", name="pod_scheduled_reason", documented="Unschedulable", source=f"CASES.md ES-6; {UP_FIT}"),
        Expectation(case="ES-6", name="failed_scheduling_message",
                    documented=r"0/\d+ nodes are available: (.+, )?\d+ Insufficient ephemeral-storage[.,].*",
                    pattern=True, source=f"CASES.md ES-6; [S0] «Requests сверяет планировщик (Insufficient ephemeral-storage)»; {UP_FIT}"),
    ],
    VERIFIED_IN,
)

# ES-7 — the node can enforce limits, and the settings the bands above assume.
register(
    [
        Expectation(case="ES-7", name="allocatable_ephemeral_storage_reported", documented=True,
                    source="CASES.md ES-7 (rootless kind / capacity isolation off report none)"),
        Expectation(case="ES-7", name="local_storage_capacity_isolation", documented=True,
                    source="CASES.md ES-7; [UP] pkg/kubelet/apis/config/v1beta1/defaults.go (LocalStorageCapacityIsolation default true)"),
        Expectation(case="ES-7", name="eviction_hard[kind]",
                    documented='{"imagefs.available": "0%", "nodefs.available": "0%", "nodefs.inodesFree": "0%"}',
                    source=f"CASES.md ES-7; {S0_CONFIGZ}", fact="kubelet_config.evictionHard"),
        Expectation(case="ES-7", name="volume_stats_agg_period_s", documented=VOLUME_STATS_AGG_PERIOD_S, unit="s",
                    band=Band(VOLUME_STATS_AGG_PERIOD_S, VOLUME_STATS_AGG_PERIOD_S),
                    why="a configuration value: exact (the ES-2 band assumes it)",
                    source="[UP] pkg/kubelet/apis/config/v1beta1/defaults.go VolumeStatsAggPeriod (1m)"),
        Expectation(case="ES-7", name="containerd_stats_collect_period_s", documented=CONTAINERD_STATS_COLLECT_PERIOD_S, unit="s",
                    band=Band(CONTAINERD_STATS_COLLECT_PERIOD_S, CONTAINERD_STATS_COLLECT_PERIOD_S),
                    why="a configuration value: exact (the ES-1/ES-3 bands assume it)",
                    source="[containerd v2.3.4] internal/cri/config/config_unix.go DefaultImageConfig StatsCollectPeriod (10)"),
    ],
    VERIFIED_IN,
)


# -- ES-7: the disk signals against the node's own hard eviction thresholds ----------------------
# Below a hard threshold the kubelet reports DiskPressure and evicts pods by node pressure (with a
# DisruptionTarget condition), which the limit evictions of ES-1 … ES-5 must not meet. The
# thresholds are the node's own: its kubelet's running evictionHard (configz); the documented
# values are built from it per node (:func:`disk_signal_from`), never fixed to one cluster's.

UP_EVICTION_DEFAULTS = ("[UP] pkg/kubelet/eviction/defaults_linux.go DefaultEvictionHard, set by cmd/kubelet/app/server.go "
                        f"loadConfigFile when evictionHard is unset {CHECKED}")
# The kubelet's hard thresholds when its configuration sets none (UP_EVICTION_DEFAULTS; Linux).
DEFAULT_EVICTION_HARD = {"memory.available": "100Mi", "nodefs.available": "10%", "nodefs.inodesFree": "5%",
                         "imagefs.available": "15%", "imagefs.inodesFree": "5%"}
UP_THRESHOLD = ("[UP] pkg/kubelet/eviction/helpers.go parseThresholdStatement (\"0%\" and \"100%\" ignored), "
                "api/types.go GetThresholdQuantity (a percentage of the capacity), OpForSignal LessThan; helpers.go "
                f"makeSignalObservations (Summary API node.fs, node.runtime.imageFs) {CHECKED}")
# The disk signals and their units (pkg/kubelet/eviction/api/types.go; the Summary API's node.fs
# and node.runtime.imageFs give the available amount and the capacity).
DISK_SIGNALS = {"nodefs.available": "bytes", "nodefs.inodesFree": "inodes",
                "imagefs.available": "bytes", "imagefs.inodesFree": "inodes"}
@dataclass(frozen=True)
class EvictionHard:
    """A node's hard eviction thresholds (``{"nodefs.available": "10%", …}``, as the
    KubeletConfiguration writes them), ``source`` naming the setting and where it was read, and
    ``assumed`` the sentence every value judged from the upstream defaults carries in its details
    (``""`` when read from the node)."""

    thresholds: Mapping[str, str]
    source: str
    assumed: str = ""


def eviction_hard_of(node: str, config: Mapping | None, error: str | None = None) -> EvictionHard:
    """The :class:`EvictionHard` of ``node`` from its kubelet's running configuration ``config``
    (configz ``kubeletconfig``); when ``config`` is empty or has no ``evictionHard`` (``error``:
    why it could not be read), the upstream defaults :data:`DEFAULT_EVICTION_HARD`, said so."""
    hard = (config or {}).get("evictionHard")
    if isinstance(hard, Mapping):
        return EvictionHard(dict(hard), f"kubelet evictionHard (configz of node {node})")
    why = error or ("configz has no evictionHard" if config else "configz not read")
    return EvictionHard(dict(DEFAULT_EVICTION_HARD), f"{UP_EVICTION_DEFAULTS}, assumed for node {node}",
                        f"the running evictionHard of node {node} is unknown ({why}): upstream defaults assumed "
                        f"({UP_EVICTION_DEFAULTS})")


def threshold_amount(statement: str | None, capacity: int) -> int:
    """The amount (bytes or inodes) below which a hard threshold ``statement`` (``"10%"``,
    ``"150Mi"``, ``"1000"``) puts the node under pressure, for ``capacity``: a percentage of
    ``capacity`` rounded down as the kubelet does; 0 for no statement, ``"0%"`` or ``"100%"`` (the
    kubelet ignores those). ``ValueError`` naming the statement when it is neither."""
    if statement is None or statement in ("0%", "100%"):
        return 0
    text = str(statement).strip()
    try:
        if text.endswith("%"):
            return int(capacity * float(text[:-1]) / 100)
        return int(parse_quantity(text))
    except ValueError:
        raise ValueError(f"eviction threshold {statement!r}: neither a percentage nor a quantity") from None


def disk_signal_from(signal: str, hard: EvictionHard, capacity: int) -> Expectation | None:
    """ES-7's ``<signal>`` (:data:`DISK_SIGNALS`: ``nodefs.available`` …) on a node whose hard
    thresholds are ``hard`` and whose filesystem holds ``capacity`` (bytes or inodes): at least the
    threshold's amount (:func:`threshold_amount`), the source naming the setting and where it was
    read; None when the kubelet has no threshold for it (unset, ``0%``, ``100%``: nothing to stay
    above, nothing to judge). ``ValueError`` for an unknown signal or a threshold that cannot be read."""
    if signal not in DISK_SIGNALS:
        raise ValueError(f"ES-7: {signal!r} is not a disk eviction signal ({', '.join(DISK_SIGNALS)})")
    statement = hard.thresholds.get(signal)
    low = threshold_amount(statement, capacity)
    if not low:
        return None
    setting = f"{signal}={statement}"
    return at_least("ES-7", signal, low, f"{hard.source}: {setting}; {UP_THRESHOLD}",
                    why=f"below {setting} of capacity {capacity} {DISK_SIGNALS[signal]} the kubelet reports DiskPressure and "
                        "evicts by node pressure, which the ES bands do not expect",
                    unit=DISK_SIGNALS[signal], verified_in=VERIFIED_IN)
