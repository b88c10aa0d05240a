"""RS — in-place resize and resources (CASES-workloads.md §4 RS-1 … RS-4, §1.4, §2 "Resize allocation",
"Memory-limit decrease", open points 3 and 13).

CPU and memory of a running pod's containers change through the pod's ``resize`` subresource
(InPlacePodVerticalScaling: beta/on 1.33–1.34, GA from 1.35, pkg/features/kube_features.go of each
version). What the API accepts is ``ValidatePodResize`` (pkg/apis/core/validation/validation.go); from
1.36 the admission plugin ``PodResizeValidator`` (plugin/pkg/admission/podresize/admission.go, in the
default-on list of pkg/kubeapiserver/options/plugins.go) also refuses, with **403**, a resize whose pod
requests exceed the node's allocatable — on 1.34 and 1.35 the kubelet marks that resize ``Infeasible``
instead (pkg/kubelet/allocation/allocation_manager.go ``canResizePod``). A resize that fits the node but
not what is free waits ``Deferred`` and is retried on pod removal, pod addition, another resize, and a
3-minute ticker (``retryPeriod``). Lowering a memory limit below current usage is refused by the kubelet's
best-effort check (pkg/kubelet/kuberuntime/kuberuntime_manager.go ``validateMemoryResizes``/the memory
decrease check, "cannot decrease memory limits: …") and surfaces as ``PodResizeInProgress`` reason
``Error``.

cgroup values: this host is cgroup v1 (read inside the container, where runc mounts the container's own
cgroup at ``/sys/fs/cgroup/<controller>``). On cgroup v2 (not runnable here) the quota and memory limit are
the same numbers in ``cpu.max`` and ``memory.max``; ``cpu.shares`` does not exist (the kubelet's shares
become ``cpu.weight``, pkg/kubelet/cm/cgroup_manager_linux.go / runc's conversion): documented from source
as ``absent`` for v2.
"""

from __future__ import annotations

from ..judge.expectations import Band, CherryPick, Expectation, Fix, KnownBug, Race, equal, exact, register, within
from .kubelet import (
    CONTAINER_START_S,
    KUBELET_HANDOFF_S,
    MINIMUM_GRACE_PERIOD_S,
    PLEG_RELIST_S,
    POD_WORKER_JITTER,
    STATUS_UPDATE_S,
    SYNC_TICKER_S,
    UPGRADE_PATH_READ,
)

# pkg/kubelet/kubelet.go backOffPeriod = 10 s: the pod worker retries a failed sync after it (× jitter)
POD_WORKER_BACKOFF_S = 10.0

# Read in v1.34.4, v1.35.4, v1.36.3 and v1.37.2 (GOMODCACHE k8s.io/kubernetes@v…) for session 9 (issue 26).
VERIFIED_IN = UPGRADE_PATH_READ

S4_RECREATE = "[S4] L212 («чтобы изменить requests/limits, под пересоздают» — wrong since 1.33)"
S4_QUOTA = "[S4] L236–242 (100m CPU limit → cfs_quota_us 10000 over cfs_period_us 100000)"
S1_MUTABLE = "[S1] L70 (mutable pod fields; resources through a separate subresource)"
UP_GATE = ("[UP] pkg/features/kube_features.go InPlacePodVerticalScaling (1.34 beta/on; 1.35–1.37 GA, locked on); "
           "KEP-1287")
UP_VALIDATE = "[UP] pkg/apis/core/validation/validation.go ValidatePodResize"
UP_UPDATE = "[UP] pkg/apis/core/validation/validation.go ValidatePodUpdate (updatablePodSpecFields)"
UP_POLICY = "[UP] pkg/apis/core/validation/validation.go validateResizePolicy"
UP_INIT_GATE = ("[UP] pkg/features/kube_features.go InPlacePodVerticalScalingInitContainers (absent 1.34–1.35; "
                "1.36 beta/on; 1.37 GA) and ValidatePodResize (canResize = restartable || that gate)")
UP_ADMISSION = ("[UP] plugin/pkg/admission/podresize/admission.go validateRequestsWithinAllocatable (from 1.36, "
                "default-on in pkg/kubeapiserver/options/plugins.go; absent in 1.34.4 and 1.35.4)")
UP_ALLOC = "[UP] pkg/kubelet/allocation/allocation_manager.go canResizePod (Infeasible: requests > allocatable)"
UP_RETRY = ("[UP] pkg/kubelet/kubelet.go HandlePodRemoves → allocationManager.RetryPendingResizes(TriggerReasonPodsRemoved); "
            "allocation_manager.go retryPeriod = 3 * time.Minute")
UP_CGROUP = ("[UP] pkg/kubelet/cm/helpers_linux.go MilliCPUToQuota (quota = mCPU × 100000 / 1000), "
             "MilliCPUToShares (shares = mCPU × 1024 / 1000, minimum 2)")
UP_ACTUATE = ("[UP] pkg/kubelet/kuberuntime/kuberuntime_manager.go computePodActions (NotRequired → "
              "UpdateContainerResources; RestartContainer → kill and start in the same sync), doPodResizeAction")
UP_DECREASE = "[UP] pkg/kubelet/kuberuntime/kuberuntime_manager.go (memory-limit decrease check: #133012, 1.34)"
UP_INPROGRESS = ("[UP] pkg/kubelet/kubelet.go SyncPod (a failed resize action → "
                 "statusManager.SetPodResizeInProgressCondition(reason Error, the error's text))")
CATALOGUE = "CASES-workloads.md"

CFS_PERIOD_US = 100_000
MIB = 1024 * 1024

# patch → the kubelet sees the new spec (watch → pod worker, one hand-off) → actuation
# (UpdateContainerResources, a CRI call) → the runtime's new resources in the pod status at the next
# relist (1 s generic relist; on demand from 1.36, PLEGOnDemandRelist) → status write and watch.
APPLY_BAND = Band(0, KUBELET_HANDOFF_S + PLEG_RELIST_S + STATUS_UPDATE_S)
APPLY_WHY = ("host time of the patch → the recorder's receive time of the pod whose status shows it: "
             "+1 s hand-off (watch → pod worker → UpdateContainerResources) +1 s PLEG relist +1 s status write")
# a RestartContainer resize: hand-off, the container stops on TERM (its trap ends the ≤ 1 s sleep: within
# the 2 s minimum grace), started again in the same sync, relist and status
RESTART_BAND = Band(0, KUBELET_HANDOFF_S + MINIMUM_GRACE_PERIOD_S + CONTAINER_START_S + PLEG_RELIST_S + STATUS_UPDATE_S)
RESTART_WHY = ("host time of the patch → receive time of the new container running: +1 s hand-off +2 s stop "
               "(trap ends its ≤ 1 s sleep) +1 s container start +1 s relist +1 s status write")


def _cgroup_values(case: str, prefix: str, cpu_m: int, memory_mi: int | None, source: str) -> list:
    out = [
        exact(case, f"{prefix}cpu_quota_us", cpu_m * CFS_PERIOD_US // 1000, f"{source}; {UP_CGROUP}",
              "a file the kubelet writes: exact", unit="µs"),
        exact(case, f"{prefix}cpu_shares", cpu_m * 1024 // 1000, f"{source}; {UP_CGROUP}",
              "a file the kubelet writes: exact", unit="shares", cgroup=1),
        equal(case, f"{prefix}cpu_shares", "absent",
              f"{UP_CGROUP}; cgroup v2 has cpu.weight, no cpu.shares (documented from source: not runnable here)",
              cgroup=2),
    ]
    if memory_mi is not None:
        out.append(exact(case, f"{prefix}memory_limit_bytes", memory_mi * MIB, f"{source}; {UP_ACTUATE}",
                         "a file the kubelet writes: exact", unit="bytes"))
    return out


# -- RS-1 ----------------------------------------------------------------------------------------
RS1 = f"{CATALOGUE} RS-1; {S4_RECREATE}; {S4_QUOTA}; {UP_GATE}"
register(
    [
        *_cgroup_values("RS-1", "before:", 200, None, RS1),
        exact("RS-1", "before:memory_limit_bytes", 64 * MIB, f"{RS1}; {UP_ACTUATE}", "a file: exact", unit="bytes"),
        *_cgroup_values("RS-1", "cpu-resized:", 400, None, RS1),
        within("RS-1", "cpu_status_after_patch_s", 0.5, APPLY_BAND.low, APPLY_BAND.high, APPLY_WHY,
               f"{RS1}; {UP_ACTUATE}; [UP] pkg/kubelet/pleg/generic.go relist"),
        equal("RS-1", "cpu_status_limit", "400m", f"{RS1}; {UP_ACTUATE} (status resources from the runtime)"),
        exact("RS-1", "cpu_restarts", 0, f"{RS1}; {UP_ACTUATE} (resizePolicy cpu NotRequired)",
              "a count: exact", unit="restarts"),
        equal("RS-1", "cpu_same_container", True, f"{RS1}; {UP_ACTUATE}"),
        exact("RS-1", "mem_restarts", 1, f"{RS1}; {UP_ACTUATE} (resizePolicy memory RestartContainer)",
              "a count: exact", unit="restarts"),
        equal("RS-1", "mem_new_container", True, f"{RS1}; {UP_ACTUATE}"),
        within("RS-1", "mem_running_after_patch_s", 2, RESTART_BAND.low, RESTART_BAND.high, RESTART_WHY,
               f"{RS1}; {UP_ACTUATE}"),
        exact("RS-1", "mem-resized:memory_limit_bytes", 96 * MIB, f"{RS1}; {UP_ACTUATE}", "a file: exact", unit="bytes"),
        exact("RS-1", "cpu_restarts_after_mem", 0, f"{RS1} (patch 2 leaves `cpu` untouched)", "a count: exact",
              unit="restarts"),
        equal("RS-1", "same_pod_uid", True, f"{RS1} (in place: no re-creation)"),
        equal("RS-1", "same_pod_ip", True, f"{RS1} (same sandbox)"),
        equal("RS-1", "resize_conditions_at_end", "none",
              f"{RS1}; [UP] pkg/kubelet/status/status_manager.go (PodResizePending/PodResizeInProgress cleared once done)"),
        exact("RS-1", "generation_increase", 2, f"{RS1}; [UP] pkg/registry/core/pod/strategy.go (generation +1 per spec change)",
              "a count: exact", unit="generations"),
        equal("RS-1", "observed_generation_caught_up", True,
              f"{RS1}; [UP] PodObservedGenerationTracking (1.34 beta/on, GA 1.35) kube_features.go; "
              "pkg/kubelet/status/generate.go"),
    ],
    VERIFIED_IN,
)

# -- RS-2: the API's rules ------------------------------------------------------------------------------
RS2 = f"{CATALOGUE} RS-2; {S1_MUTABLE}; {S4_RECREATE}"
ACCEPTED = 200
INVALID = 422
_OLD, _NEW = (34, 35), (36, None)
register(
    [
        # (a) the pod's own spec: resources are not among updatablePodSpecFields
        exact("RS-2", "status[plain-patch]", INVALID, f"{RS2}; {UP_UPDATE} (field.Forbidden → 422 Invalid)",
              "an HTTP status: exact", unit="HTTP"),
        equal("RS-2", "message[plain-patch]", r"(?s).*pod updates may not change fields other than .*", f"{RS2}; {UP_UPDATE}",
              pattern=True),
        # (b) requests below limits would make the Guaranteed pod Burstable
        exact("RS-2", "status[requests-only]", INVALID, f"{RS2}; {UP_VALIDATE}", "an HTTP status: exact", unit="HTTP"),
        equal("RS-2", "message[requests-only]", r".*Pod QOS Class may not change as a result of resizing.*",
              f"{RS2}; {UP_VALIDATE}", pattern=True),
        # (c) another resource than cpu and memory
        exact("RS-2", "status[ephemeral-storage]", INVALID, f"{RS2}; {UP_VALIDATE}", "an HTTP status: exact", unit="HTTP"),
        equal("RS-2", "message[ephemeral-storage]", r".*only cpu and memory resources are mutable.*",
              f"{RS2}; {UP_VALIDATE}", pattern=True),
        # (d) a regular (non-sidecar) init container: immutable on 1.34–1.35, resizable from 1.36
        exact("RS-2", "status[init-container]", INVALID, f"{RS2}; {UP_VALIDATE}; {UP_INIT_GATE}",
              "an HTTP status: exact", unit="HTTP", minors=_OLD),
        equal("RS-2", "message[init-container]", r".*resources for non-sidecar init containers are immutable.*",
              f"{RS2}; {UP_VALIDATE}", pattern=True, minors=_OLD),
        exact("RS-2", "status[init-container]", ACCEPTED, f"{RS2}; {UP_INIT_GATE}", "an HTTP status: exact",
              unit="HTTP", minors=_NEW),
        equal("RS-2", "message[init-container]", "accepted", f"{RS2}; {UP_INIT_GATE}", minors=_NEW),
        # (e) a sidecar (restartable init container): resizable everywhere
        exact("RS-2", "status[sidecar]", ACCEPTED, f"{RS2}; {UP_VALIDATE} (restartable init containers)",
              "an HTTP status: exact", unit="HTTP"),
        # (f) a memory limit lowered with resizePolicy NotRequired: allowed since 1.34 (R20)
        exact("RS-2", "status[memory-decrease]", ACCEPTED,
              f"{RS2}; {UP_VALIDATE} / validateContainerResize (only removal of requests/limits is refused from 1.34)",
              "an HTTP status: exact", unit="HTTP"),
        # (g) pod restartPolicy Never with a RestartContainer resize policy: the pod itself is refused
        exact("RS-2", "status[never-restartcontainer]", INVALID, f"{RS2}; {UP_POLICY}", "an HTTP status: exact",
              unit="HTTP"),
        equal("RS-2", "message[never-restartcontainer]", r".*must be 'NotRequired' when `restartPolicy` is 'Never'.*",
              f"{RS2}; {UP_POLICY} (1.34.4, 1.35.4 text)", pattern=True, minors=_OLD),
        equal("RS-2", "message[never-restartcontainer]", r".*must be 'NotRequired' when pod `restartPolicy` is 'Never'.*",
              f"{RS2}; {UP_POLICY} (1.36.3, 1.37.2 text)", pattern=True, minors=_NEW),
        equal("RS-2", "pod_unchanged", True, f"{RS2} (every refused or dry-run request leaves the pod as it was)"),
    ],
    VERIFIED_IN,
)

# -- RS-3: a resize beyond the node; one beyond what is free ---------------------------------------
RS3 = f"{CATALOGUE} RS-3 (R19, R40), open point 13"
# (ii): B, applied at 400m in (i) with nothing left free, is resized to RS3_DEFER_AGAIN_M (+300m:
# Deferred again); then X is lowered by RS3_SHRINK_M, which frees more than B needs.
RS3_DEFER_AGAIN_M = 700
RS3_SHRINK_M = 400
# allocation_manager.go retryDelay: the periodic retry of pending resizes (a wait's budget: a value
# after the trigger missed is measured, not lost)
RETRY_DELAY_S = 180
UP_SHRINK = ("[UP] pkg/kubelet/kubelet.go HandlePodUpdates (a resize of X: PushPendingResize, "
             "RetryPendingResizes(TriggerReasonPodUpdated); and 'If cpu or memory requests shrank, then retry the pending "
             "resizes'); pkg/kubelet/allocation/allocation_manager.go sortPendingResizes ('First, prioritizing resizes that do "
             "not increase requests'), retryPendingResizes, retryDelay 3 min (v1.34.4 … v1.37.2)")
register(
    [
        # (a) beyond allocatable: 1.34–1.35 the kubelet's Infeasible; 1.36+ the API's 403
        equal("RS-3", "beyond_node_path", "Infeasible", f"{RS3}; {UP_ALLOC}", minors=_OLD),
        equal("RS-3", "beyond_node_path", "403 Forbidden", f"{RS3}; {UP_ADMISSION}", minors=_NEW),
        equal("RS-3", "beyond_node_message",
              r"Node didn't have enough capacity: cpu, requested: {requested}, capacity: {allocatable}",
              f"{RS3}; {UP_ALLOC}", pattern=True, minors=_OLD),
        equal("RS-3", "beyond_node_message",
              r".*node didn't have enough allocatable resources: cpu, requested: {requested}, allocatable: {allocatable}",
              f"{RS3}; {UP_ADMISSION}", pattern=True, minors=_NEW),
        exact("RS-3", "after_kill:cpu_quota_us", 20_000, f"{RS3}; R19 (#126033: the infeasible value must not leak)",
              "a file: exact", unit="µs"),
        equal("RS-3", "after_kill:status_cpu_limit", "200m", f"{RS3}; R19", ),
        exact("RS-3", "after_kill:restarts", 1, f"{RS3} (kill 1 → one restart)", "a count: exact", unit="restarts"),
        exact("RS-3", "after_kill:last_exit_code", 3, f"{RS3} (trap exit 3 on TERM; kill 1 sends TERM)",
              "an exit code: exact", unit="code"),
        equal("RS-3", "after_kill:pending_reason", "Infeasible", f"{RS3}; {UP_ALLOC}", minors=_OLD),
        equal("RS-3", "after_kill:pending_reason", "none", f"{RS3}; {UP_ADMISSION} (nothing was admitted)",
              minors=_NEW),
        # (b) fits the node, not what is free: Deferred, retried when a pod is removed
        equal("RS-3", "deferred_reason", "Deferred", f"{RS3}; {UP_ALLOC} (canAdmitPod fails → Deferred)"),
        within("RS-3", "deferred_cleared_after_removal_s", 1.5, 0, KUBELET_HANDOFF_S + PLEG_RELIST_S + STATUS_UPDATE_S,
               "the pod's DELETED receive time → the receive time of B's pod without PodResizePending: +1 s "
               "the kubelet's removal hand-off (HandlePodRemoves → RetryPendingResizes) +1 s relist of the "
               "actuated resources +1 s status write",
               f"{RS3}; {UP_RETRY}"),
        equal("RS-3", "deferred_applied_cpu_limit", "400m", f"{RS3}; {UP_ACTUATE}"),
        # (ii) Deferred again (B → RS3_DEFER_AGAIN_M), then X lowered by RS3_SHRINK_M
        equal("RS-3", "deferred_again_reason", "Deferred", f"{RS3} (ii); {UP_ALLOC}"),
        within("RS-3", "deferred_cleared_after_shrink_s", 1.5, 0, KUBELET_HANDOFF_S + PLEG_RELIST_S + STATUS_UPDATE_S,
               "host time of X's resize request → the receive time of B's pod without PodResizePending at its new CPU: "
               "X's spec change reaches HandlePodUpdates, PushPendingResize sorts X's decrease before B's increase and "
               "RetryPendingResizes(TriggerReasonPodUpdated) allocates both in one pass (never the 3-min retry tick); "
               "+1 s hand-off +1 s relist of the actuated resources +1 s status write",
               f"{RS3} (ii) ([0, 3] s where the trigger exists, else the 3-min tick); {UP_SHRINK}"),
        equal("RS-3", "deferred_applied_cpu_limit[shrink]", f"{RS3_DEFER_AGAIN_M}m", f"{RS3} (ii); {UP_ACTUATE}"),
    ],
    VERIFIED_IN,
)

# -- RS-4: a memory limit lowered below usage ------------------------------------------------------------
RS4 = f"{CATALOGUE} RS-4 (R20: #129152, #133012)"
register(
    [
        exact("RS-4", "first-decrease:memory_limit_bytes", 100 * MIB, f"{RS4}; {UP_ACTUATE}", "a file: exact", unit="bytes"),
        equal("RS-4", "below_usage_reason", "Error", f"{RS4}; {UP_INPROGRESS}"),
        equal("RS-4", "below_usage_message",
              r"cannot decrease memory limits: .*memory limit \(20971520\) below current usage \(\d+\).*",
              f"{RS4}; {UP_DECREASE}", pattern=True),
        exact("RS-4", "below-usage:memory_limit_bytes", 100 * MIB, f"{RS4} (the old limit kept)", "a file: exact",
              unit="bytes"),
        equal("RS-4", "below_usage_status_limit", "100Mi", f"{RS4} (status keeps the actuated value)"),
        exact("RS-4", "restarts", 0, f"{RS4} (declined, not OOM-killed)", "a count: exact", unit="restarts"),
        exact("RS-4", "increase:memory_limit_bytes", 128 * MIB, f"{RS4}; {UP_ACTUATE}", "a file: exact", unit="bytes"),
        equal("RS-4", "conditions_after_increase", "none", f"{RS4}; {UP_INPROGRESS} (cleared by a successful resize)"),
        # measured 12.0 s on v1.37.2 (the catalogue expected "within one sync, ≤ 3 s"): SyncPod sets the
        # condition after the runtime's SyncPod returned the error, when this sync's status is already written;
        # the failed sync is retried after the pod worker's back-off (10 s × jitter [1, 1.5): the resize error
        # carries no back-off expiry) and that sync writes it
        within("RS-4", "error_condition_after_patch_s", POD_WORKER_BACKOFF_S * (1 + POD_WORKER_JITTER / 2),
               POD_WORKER_BACKOFF_S,
               POD_WORKER_BACKOFF_S * (1 + POD_WORKER_JITTER) + SYNC_TICKER_S + KUBELET_HANDOFF_S + STATUS_UPDATE_S,
               "host time of the patch → receive time of PodResizeInProgress Error: the failing sync sets the condition "
               "after writing its status, so the retry writes it: 10 s back-off × [1, 1.5) jitter +1 s sync ticker +1 s "
               "hand-off +1 s status write",
               f"{RS4}; {UP_INPROGRESS}; [UP] pkg/kubelet/pod_workers.go completeWork (backOffPeriod 10 s, "
               "workerBackOffPeriodJitterFactor 0.5; 1.35+: MinBackoffExpiration only for back-off errors); measured on v1.37.2",
               race=Race(KUBELET_HANDOFF_S / 2, band=Band(0, KUBELET_HANDOFF_S + STATUS_UPDATE_S),
                         why="a pod update that reached the pod worker while the failing sync ran (the kubelet's own "
                             "status write of the resize coming back through its watch) is a pending update: "
                             "completeWork requeues the pod at once instead of after the back-off "
                             "(pkg/kubelet/pod_workers.go completeWork 'if there is a pending update for this worker, "
                             "requeue immediately', v1.34.4 … v1.37.2), and that sync writes the condition: "
                             f"hand-off {KUBELET_HANDOFF_S:g} s + status write {STATUS_UPDATE_S:g} s",
                         seen="1 of 5 values: v1.36.3 0.36 s (2026-12-02); v1.34.4 15.5 s, v1.35.4 15.4 s, v1.37.2 12.5 "
                              "and 14.5 s took the back-off")),
    ],
    VERIFIED_IN,
)

# -- RS-5: growing the memory of an OOM-looping container ---------------------------------------------------
RS5 = f"{CATALOGUE} RS-5 (R21: kubernetes#138760, #140387, #138857, #127356)"
UP_STARTING_RESIZED = ("[UP] pkg/kubelet/kuberuntime/kuberuntime_manager.go computePodActions: 1.37.2 sets "
                       "UpdatePodResources = startingResizedContainer(…ContainersToStart) so the pod cgroup grows before a "
                       "resized container starts; 1.34.4, 1.35.4, 1.36.3 have no such step (the pod cgroup is resized only "
                       "with a running container: doPodResizeAction)")
RS5_BUG = "kubernetes/kubernetes#138760 (R21; closed: fixed by #140387)"
# The fix as read (2026-12-07): PR #140387 "Always set UpdatePodResources when a starting container is
# resized" (merged, "Fixes #138760", release note NONE: no CHANGELOG line names it) is in v1.37.2's source
# (startingResizedContainer), not in v1.36.3's or v1.35.4's; which 1.37 patch first carried it is not
# known. Its cherry-picks #141004 (release-1.36) and #141003 (release-1.35) are merged, after 1.36.3 and
# 1.35.4 (neither source has the step): the release that carries them is not known. No cherry-pick to
# release-1.34 was found (the thread: "I'll open a PR to backport to 1.34").
RS5_FIX = Fix("merged", "upstream threads kubernetes/kubernetes#138760, #140387, #141004, #141003 (read 2026-12-07); "
                        "the source of v1.34.4, v1.35.4, v1.36.3, v1.37.2 (computePodActions)",
              pr="kubernetes/kubernetes#140387", released="≤1.37.2",
              cherry_picks=(CherryPick("release-1.36", "kubernetes/kubernetes#141004", "merged", ">1.36.3"),
                            CherryPick("release-1.35", "kubernetes/kubernetes#141003", "merged", ">1.35.4")))
# the bug is a race on 1.34–1.36: v1.36.3 grew the pod cgroup and kept the container running (2026-12-02)
RS5_RACE = ("the resize is applied only by a sync that finds the container running (doPodResizeAction): the bug "
            "shows when every sync after the patch finds it exited or in its back-off, the correct outcome when one "
            "comes in the fraction of a second the restarted container runs before its dd is OOM-killed (1.36: the "
            "on-demand relist after the start, kubelet.go SyncPod postSync RequestPodRelist, syncs right then) — "
            "seen (2026-12-02): correct in 2 of 2 runs on v1.36.3, buggy in 1 of 1 on v1.34.4 and on v1.35.4")
# One entry per value for every minor: the judge reads the cluster's patch against RS5_FIX — on 1.37.2
# the correct value is the documented one (fixed-as-expected), on 1.34.4–1.36.3 the bug's race.
register(
    [
        Expectation("RS-5", "running_after_resize", False, f"{RS5}; {UP_STARTING_RESIZED}", minors=(34, None),
                    known_bug=KnownBug(RS5_BUG, correct=True, mechanism=UP_STARTING_RESIZED, race=RS5_RACE, fix=RS5_FIX)),
        Expectation("RS-5", "pod_cgroup_memory_limit_bytes", float(64 * MIB), f"{RS5}; {UP_STARTING_RESIZED}",
                    unit="bytes", band=Band(64 * MIB, 64 * MIB), why="a file the kubelet writes: exact", minors=(34, None),
                    known_bug=KnownBug(RS5_BUG, correct=float(256 * MIB), mechanism=UP_STARTING_RESIZED,
                                       correct_band=Band(256 * MIB, 256 * MIB), race=RS5_RACE, fix=RS5_FIX)),
    ],
    VERIFIED_IN,
)

# -- RS-6: a sidecar's ephemeral-storage limit -------------------------------------------------------------
RS6 = f"{CATALOGUE} RS-6 (R32: kubernetes#138371, #138462)"
UP_EPHEMERAL = ("[UP] pkg/kubelet/eviction/eviction_manager.go containerEphemeralStorageLimitEviction: 1.37.2 adds the "
                "limits of restartable init containers (sidecars) to thresholdsMap; 1.34.4, 1.35.4, 1.36.3 only "
                "spec.containers; helpers.go containerEphemeralStorageMessageFmt")
RS6_BUG = "kubernetes/kubernetes#138371 (R32; fixed in 1.37 by #138462)"
# The fix as read (2026-12-07): PR #138462 (merged, "Fixes #138371") is listed under v1.37.0's "Bug or
# Regression" in CHANGELOG-1.37.md of v1.37.2; not in CHANGELOG-1.36.md of v1.36.3 (v1.36.0–v1.36.2) nor
# in v1.36.3's source; no cherry-pick was found.
RS6_FIX = Fix("merged", "CHANGELOG/CHANGELOG-1.37.md of v1.37.2 (v1.37.0, Bug or Regression: #138462); "
                        "CHANGELOG-1.36.md of v1.36.3; the source of v1.34.4–v1.37.2 (containerEphemeralStorageLimitEviction); "
                        "upstream PR kubernetes/kubernetes#138462",
              pr="kubernetes/kubernetes#138462", released="1.37.0")
RS6_WINDOW_S = 120
register(
    [
        Expectation("RS-6", "sidecar_evicted", False, f"{RS6}; {UP_EPHEMERAL} (within {RS6_WINDOW_S} s)",
                    minors=(34, None), known_bug=KnownBug(RS6_BUG, correct=True, mechanism=UP_EPHEMERAL, fix=RS6_FIX)),
        equal("RS-6", "event_message", r'Container side exceeded its local ephemeral storage limit "20Mi"\. ?',
              f"{RS6}; {UP_EPHEMERAL}", pattern=True, minors=(37, None)),
        equal("RS-6", "event_message", "absent", f"{RS6}; {UP_EPHEMERAL} (no eviction: no event)", minors=(34, 36)),
    ],
    VERIFIED_IN,
)
