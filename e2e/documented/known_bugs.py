"""KB — known upstream bugs, tracked per version (CASES.md KB-1 … KB-8).

Each entry with a :class:`~e2e.judge.expectations.KnownBug` documents what the cluster does today (the
bug) as its expectation, and names the upstream issue (as found on GitHub, state when read), the
correct value and the mechanism in the source. The judge calls a measured value ``bug-present``
(holds today's behaviour: the test passes, marked "known bug present"), ``bug-fixed`` (holds the
correct value: a loud outcome of its own, "bug no longer present — fixed on this version?") or
``fail`` (neither). The entries around them (exit codes, events, invariants of a race) are
ordinary expectations. Versions: read in v1.34.4, v1.35.4, v1.36.3 and v1.37.2 (KB-8 in v1.36.2
too; where the mechanism differs between them, its entry says so); the known-bug entries are
open-ended so that a newer version is judged too — a fix shows there as ``bug-fixed``.

KB-1 — a preStop ``sleep`` action outlives its container (kubernetes/kubernetes#134338, open;
proposed fixes #141484 (open) and #134839 (closed)). ``killContainer`` runs the preStop hook first
and waits for it up to the grace period (pkg/kubelet/kuberuntime/kuberuntime_container.go
``killContainer`` → ``executePreStopHook``: ``select`` on the hook's ``done`` or the grace timer);
the sleep action is ``runSleepHandler`` (pkg/kubelet/lifecycle/handlers.go), a ``time.After`` that
ends early only when the pod worker's context is cancelled — nothing watches the container. So
when the container exits by itself during the hook, the kubelet still sleeps the full N s; the
pod worker is busy in ``SyncTerminatingPod`` → ``killPod`` all that time, so the exit is not
written to the API (no ``generateAPIPodStatus`` runs) and the pod is not removed until the hook
ends. Correct (#134338, the KEP-3960 "container exit" test): the sleep ends when the container
exits; the pod goes as soon as the exit is seen (PLEG relist).

KB-2 — an evicted pod whose container exits 0 on SIGTERM ends ``Succeeded`` with no reason
(kubernetes/kubernetes#141483, open; earlier #120182, closed: "keep it as changed"; the change
itself #118310 / PR #115331, 1.27: a killed pod's phase comes from its exit codes). The eviction
manager's ``evictPod`` (pkg/kubelet/eviction/eviction_manager.go) kills with grace 1 s and a
status function that sets ``Failed`` / ``Evicted`` / the message; ``SyncTerminatingPod``
(pkg/kubelet/kubelet.go) applies it to the status manager *before* the kill, but the status
manager holds a terminal phase back while containers may run (status/status_manager.go
``mergePodStatus``). After the kill ``SyncTerminatingPod`` recomputes the status with
``generateAPIPodStatus(…, podIsTerminal=true)`` (kubelet_pods.go): ``getPhase`` derives the phase
from the exit codes alone — the trapped SIGTERM's exit 0 gives ``Succeeded`` — and the reason and
message are carried over only when the phase stays the same, so ``Evicted`` is dropped; the guard
against leaving a terminal phase looks only at what the API server already shows, which the
status manager withheld. The pod ends ``Failed`` / ``Evicted`` only when the status read after the
kill has no exit 0 to read: the kubelet no longer finds the container it saw running and
publishes a ``ContainerStatusUnknown`` / 137 placeholder instead — as ``state`` (kubelet_pods.go
``convertToAPIContainerStatuses`` for an unknown state, status_manager.go ``TerminatePod``), or as
``lastState`` under a ``waiting: ContainerCreating`` state with ``restartCount`` + 1
(``convertToAPIContainerStatuses`` for a missing container; no second run) — which ``getPhase``
counts as a failure: a race with the kubelet's status read, so both outcomes occur for the
same manifest (seen on v1.37.2: Succeeded 5 of 7 runs). Judged on what is invariant: the
``Evicted`` event and its message, one run of the container, a terminal phase; the number of
runs that ended ``Succeeded`` (of N) is the known bug. Correct: every run
``Failed`` / ``Evicted`` (the eviction is the kubelet's decision, #141483).

KB-3 — an init container whose child is OOM-killed while the init container itself exits 0
leaves the pod ``Pending`` forever, its sandbox stopped (kubernetes/kubernetes#116676, closed
as rotten, not fixed; the fix PR #117712 was closed unmerged; background #104454 / PR #104650).
On cgroup v1 only the child dies (the kubelet forces ``singleProcessOOMKill``, see OM-2);
containerd's CRI still sets ``reason: OOMKilled`` on the init container for any OOM kill in its
cgroup (containerd v2.3.4 internal/cri/server/events.go ``handleEvent`` TaskOOM). Two kubelet
parts then disagree: the runtime manager counts an ``OOMKilled`` init container as failed
(pkg/kubelet/kuberuntime/helpers.go ``isInitContainerFailed``), so with ``restartPolicy: Never``
``computeInitContainerActions`` sets ``KillPod`` and the sandbox is stopped (and on every later
sync ``computePodActions`` finds the sandbox gone and, for a pod that must not restart, creates
nothing); the status side counts an init container failed only by a non-zero exit code
(kubelet_pods.go ``getPhase``) and calls it ready (terminated, exit 0), so ``Initialized=True``,
the main containers wait (``PodInitializing``) and the phase stays ``Pending`` — a non-terminal
pod the kubelet never finishes. Nothing in the re-syncs changes it. Correct: ``Failed`` (what
PR #117712 proposed). cgroup v2 (``memory.oom.group``) kills the whole init container (137): the
input cannot arise there, and the scenario judges that absence — the init container fails like
OM-3's (137, ``OOMKilled``, dd and sh killed), the sandbox is stopped, the pod ends ``Failed``.

KB-4 — a container restarted after a liveness failure inherits ``started=true``
(kubernetes/kubernetes#141155; fix #141342 merged on master, cherry-picks #142041 to release-1.37,
#142042 to release-1.36, #142043 to release-1.35 open when read, 2026-12-07). Since 1.35 the
feature gate ``ChangeContainerStatusOnKubeletRestart`` is off by default (pkg/features/kube_features.go:
"1.35: Default false, Deprecated"), and with it off ``convertToAPIContainerStatuses``
(pkg/kubelet/kubelet_pods.go) copies ``Started`` from the previous status of the same container
*name* into every running container — also into the new container of a restart, whose ID differs.
``isContainerStarted`` (pkg/kubelet/prober/prober_manager.go) then finds no startup result for the
new container ID (the startup worker has not seen it yet) and returns that copied ``true``; the
liveness and readiness workers (prober/worker.go ``doProbe``) read ``c.Started`` from the status
manager and probe the new container at once, and ``UpdatePodStatus`` even triggers the readiness
worker. The copy carries ``true`` because the kill and the new start happen in one ``SyncPod``
(pkg/kubelet/kuberuntime/kuberuntime_manager.go ``computePodActions``: a liveness failure puts the
container in both ``ContainersToKill`` and ``ContainersToStart``; ``doBackOff`` finds no exited
container of that name in the status read before the kill: no back-off on the first restart), so
no status in between records the old container terminated (``Started`` false). The window closes
at the startup worker's next tick (its ``periodSeconds``), which records ``Unknown`` for the new ID. v1.34.4 has no copy (the startup probe gates the new container); v1.35.4,
v1.36.3 and v1.37.2 have it unchanged, none carries #141342's ID check. A race: the bug shows unless
the startup worker's tick falls between the new container's start and the kubelet's first status
of it.

KB-5 — ``OOMKilled`` for a container that exited 143 on SIGTERM after a child of it was OOM-killed
earlier (kubernetes/kubernetes#140716; fix PR #140718, open: the kubelet would report ``Error``
for ``OOMKilled`` with 143). The reason is containerd's (v2.3.4, every node image): the runc
shim watches each container's cgroup for OOM events (cmd/containerd-shim-runc-v2/task/service.go
``Create``: on cgroup v1 pkg/oom/v1 ``epoller.Add`` — an eventfd on ``memory.oom_control`` — on
cgroup v2 internal/oom ``watcher`` — the ``oom_kill`` counter of ``memory.events`` rising) and
publishes ``TaskOOM`` for *any* OOM kill in it; the CRI's ``handleEvent`` TaskOOM
(internal/cri/server/events.go) sets ``status.Reason = "OOMKilled"``, which stays, and
``toCRIContainerStatus`` (container_status.go) replaces only an empty reason by Completed/Error,
whatever the exit code. (The cumulative counter itself — ``oomMetricsEventOccurred``: v1
``memory.oom_control`` ``oom_kill``, v2 ``memory.events`` ``oom_kill`` — is read only for an exit
137, ``handleContainerExit``.) The kubelet passes the reason through
(pkg/kubelet/kuberuntime/kuberuntime_container.go ``toKubeContainerStatus``, the same in v1.34.4 …
v1.37.2). cgroup v1 (this machine): the kubelet forces ``singleProcessOOMKill`` (see KB-3), only the
child dies, the container lives on — the input arises. cgroup v2 with the kubelet's default
``memory.oom.group=1``: the child's OOM kill takes the whole container (137, ``OOMKilled``, as
OM-2), so the input cannot arise; it would with ``singleProcessOOMKill: true``.

KB-6 — exec readiness probes stop while a pod terminates (kubernetes/kubernetes#140881, the 1.35
regression; fix #140882 "detach probe workers from the pod sync context", merged, in v1.37.0:
CHANGELOG-1.37.md; cherry-picks #141006 to release-1.36 and #141005 to release-1.35 open when
read). Since 1.35 ``AddPod(ctx, pod)`` (prober/prober_manager.go) runs the probe workers on the
pod worker's sync context, which ``UpdatePod`` cancels when the pod becomes terminating
(pod_workers.go: "Cancelling current pod sync"); every later exec probe fails "context canceled",
``doProbe`` throws the errored result away and Ready stays as it was until the container is gone.
v1.34.4: ``go w.run()``, no context — the probe runs on. v1.35.4, v1.36.3: ``go w.run(ctx)`` with
that context (1.36.3's ``startPodSync`` reuses ``status.ctx`` until cancelled). v1.37.2:
``AddPod`` detaches it (``context.WithoutCancel``) — the fix; ``SyncTerminatingPod`` stops only
liveness and startup (``StopLivenessAndStartup``), the readiness worker probes through the grace
period until ``RemovePod``. v1.36.0–v1.36.2 do not have it (#141006; read in v1.36.2's
pod_workers.go ``startPodSync``: a new ``context.WithCancel`` per sync, whose ``cancelFn`` the next
sync overwrites, so the context ``AddPod`` got is never cancelled — the leak of #139823; v1.36.3's
#140066 reuses one context until ``UpdatePod`` cancels it, which re-armed the bug):
``KnownBug.unaffected`` (verdict ``absent-as-expected`` there).

KB-7 — a container recreated while its kubelet was cut off from the API server comes back Ready,
after a kubelet restart, before its own readiness probe ran (kubernetes/kubernetes#141473; fix
#141487 merged on master, "Do not inherit probe state from a replaced container"; cherry-picks
#142254 to release-1.36 and #142255 to release-1.35 open when read, 2026-12-07; none to release-1.37
found). With ``ChangeContainerStatusOnKubeletRestart`` off (the default from 1.35, see KB-4) the
kubelet keeps a container's readiness across its own restart, and it tells such a container from a
new one by its start time alone: started more than 10 s before the prober manager
(prober_manager.go ``kubeletRestartGracePeriod``). prober/worker.go ``doProbe`` then calls it a
restart (``isRestart``) and does not seed the readiness worker's initial ``Failure`` for it;
prober_manager.go ``UpdatePodStatus`` → ``setReadyStateOnKubeletRestart`` sets ``ready=true`` for a
container with no readiness result yet and backs off only when the ``PodReady`` condition of the
pod *as the API server has it* (``generateAPIPodStatus`` passes the API object) is not True.
Neither compares the container ID with the one that status names. Cut off, the kubelet restarts the
exited container as usual but cannot write the new status, so the API server still shows the old
container, Ready; a kubelet restarted ≥ 10 s after the new container's start then reports the new
container Ready until its first readiness probe — ``initialDelaySeconds`` after its start — fails
or passes. The node must stay Ready meanwhile: at ``Ready=Unknown`` the node-lifecycle controller
marks the node's pods not Ready (pkg/controller/util/node/controller_utils.go
``MarkPodsNotReady``), which would make the API status not Ready and the bug's input vanish — the
cut is shorter than the grace period less one Lease renewal and the kubelet's start
(:func:`kb7_cut_limit_s`). The same code in v1.36.2, v1.36.3 and v1.37.2 (read for KB-7: only the
logger argument differs; ``ChangeContainerStatusOnKubeletRestart`` "1.35: Default false,
Deprecated" in each pkg/features/kube_features.go), none with #141487's ID check; v1.35.4 as NF-5
read it (``UP_PROBER`` of e2e.documented.faults). v1.34.4: the gate is on, the restarted kubelet
starts every readiness worker at ``Failure`` (NF-5's ``UP_PROBER_134``) — no bug.
KB-8 — the kubelet leaks a context on every pod sync (kubernetes/kubernetes#139823, the 1.36
regression: commit e94e67337, 2026-02-19; fix #139850 "reuse the previous context", merged, in
v1.37.0: CHANGELOG-1.37.md of v1.37.2; its cherry-pick #140066 is in v1.36.3: read in v1.36.3's
source). v1.36.2's ``startPodSync`` (pkg/kubelet/pod_workers.go) runs ``ctx, status.cancelFn =
context.WithCancel(parentCtx)`` on every sync and never calls the ``cancelFn`` it overwrites;
``parentCtx`` is the context ``UpdatePod`` started the pod worker with, which derives from the
kubelet's ``genericapiserver.SetupSignalContext()`` (cmd/kubelet/app/server.go: a
``context.WithCancel(context.Background())``), so ``propagateCancel`` (Go's context.go) enters each
new context into that root's ``children`` map, where it stays until the kubelet stops. Retained per
sync (Go 1.26, the toolchain of v1.36.2's go.mod and .go-version): the ``cancelCtx`` (80 B), its
``done`` channel once anything asked for ``Done()`` (112 B), its own ``children`` map once the sync
derived a context from it (a ``Map`` of 48 B and one 8-slot group of 144 B; 4 objects once more than
8 children at once grew it into a table) and its slot in the root's map (≈ 20–40 B): 1 to 6 objects,
≈ 0.3–0.45 KB. The issue's profile (8 days of a 1.36.0 node) held 380,195 contexts from
``context.withCancel``, 276,216 channels from ``(*cancelCtx).Done`` and 642,456 objects of
``propagateCancel`` (the maps): 3.42 objects per leaked context. No goroutine: ``propagateCancel``
starts one only for a parent that is neither a ``*cancelCtx`` nor an ``afterFuncer``. v1.36.3 and
v1.37.2 (``startPodSync`` the same in both): ``status.ctx`` is made once, from
``context.WithoutCancel(parentCtx)`` (whose ``Done()`` is nil: registered nowhere), and reused until
``UpdatePod`` cancels it. v1.34.4 and v1.35.4: ``status.ctx`` made once from
``context.Background()`` and reused — nothing per sync either. The syncs the case drives are the
readiness probe's: the results manager sends an update only when a result changes
(prober/results/results_manager.go ``Set``), and each update is a sync (kubelet.go
``syncLoopIteration`` → ``handleProbeSync`` → ``HandlePodSyncs``); a probe that keeps its result
causes none.
"""

from __future__ import annotations

from ..judge.expectations import (Band, CherryPick, Expectation, Fix, KnownBug, Unaffected, at_least, equal, exact, register,
                                   within)
from .faults import KUBELET_RESTART_GRACE_S, KUBELET_START_S, RENEW_FRACTION, RENEW_JITTER, UP_PROBER, UP_PROBER_134
from .kubelet import (CONTAINER_START_S, KUBELET_HANDOFF_S, KUBELET_SYNC_FREQUENCY_S, PLEG_RELIST_S, POD_WORKER_JITTER,
                      PROBE_DELAY_FROM_WHOLE_SECOND_S, SANDBOX_STOP_S, STATUS_UPDATE_S, SYNC_TICKER_S, UPGRADE_PATH_READ)
from .memory import SIGKILL_EXIT_CODE
from .storage import POD_MSG

# Read in v1.34.4, v1.35.4, v1.36.3, v1.37.2 (module doc; 5e3f063 "KB read in v1.34.4–v1.37.2").
VERIFIED_IN = UPGRADE_PATH_READ

# Versions whose source was read for every entry here (v1.34.4, v1.35.4, v1.36.3, v1.37.2); open-ended
# (module doc).
READ = (34, None)

# -- KB-1 scenario settings (the documented values follow from them) -------------------------
KB1_GRACE_S = 30          # terminationGracePeriodSeconds
KB1_PRESTOP_SLEEP_S = 20  # lifecycle.preStop.sleep.seconds
KB1_RUN_S = 8             # the container: `sleep 8; exit 0`
KB1_DELETE_AT_S = 2       # the test deletes the pod this long after the container's start stamp
KB1_EXIT_AFTER_DELETE_S = KB1_RUN_S - KB1_DELETE_AT_S

# -- KB-1 band constants (seconds) ------------------------------------------------------------
# The test reads the container's start stamp by polling its log (every 0.25 s, plus the logs API
# round trip) and deletes at start + 2 s, or at once when it read the stamp later: the delete is
# up to 0.5 s late; the container's own exit stamp comes after busybox `sleep 8` (+ the stamp's
# fork of adjtimex and awk): up to 0.5 s late.
KB1_STAMP_S = 0.5
# After SyncTerminatingPod: SyncTerminatedPod waits for the volume manager to unmount the
# projected token volume (reconciler every 100 ms), status_manager.go TerminatePod → syncPod →
# canBeDeleted → Delete with grace 0, and the recorder's watch (kubelet.go SyncTerminatedPod).
POD_CLEANUP_S = 1.0

KB1_SOURCE = ("CASES.md KB-1; [UP] pkg/kubelet/kuberuntime/kuberuntime_container.go killContainer, executePreStopHook; "
              "pkg/kubelet/lifecycle/handlers.go runSleepHandler; pkg/kubelet/kubelet.go SyncTerminatingPod")
KB1_BUG = "kubernetes/kubernetes#134338 (open; fixes proposed: #141484 open, #134839 closed)"
# The proposed fix as read (2026-12-07): PR #141484 "Stop preStop sleep hook when the container exits"
# ("Fixes #134338") is open; nothing is merged or released (#134839 was closed unmerged).
KB1_FIX = Fix("open", "upstream PR kubernetes/kubernetes#141484 (open when read, 2026-12-07); #134839 closed unmerged",
              pr="kubernetes/kubernetes#141484")
KB1_MECHANISM = ("kuberuntime_container.go killContainer → executePreStopHook waits for the hook (or the grace period); "
                 "lifecycle/handlers.go runSleepHandler is time.After(N s) cancelled only by the pod worker's context, "
                 "never by the container's exit; the pod worker sits in SyncTerminatingPod → killPod meanwhile, so the "
                 "exit reaches the API and the pod is removed only after the full sleep")

_HOOK_END_WHY = (f"the hook sleeps {KB1_PRESTOP_SLEEP_S} s from the kubelet's reaction to the delete whatever the container "
                 f"does: +{KUBELET_HANDOFF_S:g} s kubelet reaction +{SANDBOX_STOP_S:g} s sandbox stop")
_AT_EXIT_WHY = (f"the container's own exit {KB1_EXIT_AFTER_DELETE_S} s after the delete (±{KB1_STAMP_S:g} s delete and "
                f"stamp timing) +{PLEG_RELIST_S:g} s PLEG relist +{SANDBOX_STOP_S:g} s sandbox stop")


def _kb1_known(name: str, last_step_s: float, last_step_why: str) -> Expectation:
    """A KB-1 time after the delete: today at the hook's end, correct at the container's exit."""
    return Expectation(
        case="KB-1", name=name, documented=float(KB1_PRESTOP_SLEEP_S), unit="s",
        band=Band(KB1_PRESTOP_SLEEP_S, KB1_PRESTOP_SLEEP_S + KUBELET_HANDOFF_S + SANDBOX_STOP_S + last_step_s),
        why=f"{_HOOK_END_WHY} {last_step_why}", source=KB1_SOURCE, minors=READ,
        known_bug=KnownBug(
            KB1_BUG, correct=float(KB1_EXIT_AFTER_DELETE_S), mechanism=KB1_MECHANISM, fix=KB1_FIX,
            correct_band=Band(KB1_EXIT_AFTER_DELETE_S - KB1_STAMP_S,
                              KB1_EXIT_AFTER_DELETE_S + KB1_STAMP_S + PLEG_RELIST_S + SANDBOX_STOP_S + last_step_s),
        ),
    )


register(
    [
        Expectation(case="KB-1", name="container_exit_after_delete_s", documented=float(KB1_EXIT_AFTER_DELETE_S), unit="s",
                    band=Band(KB1_EXIT_AFTER_DELETE_S - KB1_STAMP_S, KB1_EXIT_AFTER_DELETE_S + KB1_STAMP_S),
                    why=f"`sleep {KB1_RUN_S}` from the start stamp, deleted at +{KB1_DELETE_AT_S} s: ±{KB1_STAMP_S:g} s "
                        "delete and stamp timing (the container's own stamp: the API does not show it yet)",
                    source=f"CASES.md KB-1 (≈ 6.5 s); {KB1_SOURCE} (the sleep action sends no signal)", minors=READ),
        Expectation(case="KB-1", name="exit_code", documented=0,
                    source="CASES.md KB-1 (`sleep 8; exit 0`: the container ends by itself, no signal)", minors=READ),
        # when the API first shows the container not running (or the pod gone)
        _kb1_known("api_shows_exit_after_delete_s", STATUS_UPDATE_S, f"+{STATUS_UPDATE_S:g} s status update"),
        # when the pod object is gone
        _kb1_known("pod_gone_after_delete_s", POD_CLEANUP_S,
                   f"+{POD_CLEANUP_S:g} s volume unmount, TerminatePod and the delete with grace 0"),
    ],
    VERIFIED_IN,
)

# -- KB-2 -------------------------------------------------------------------------------------
KB2_LIMIT = "8Mi"    # limits.ephemeral-storage of the one container
KB2_WRITE_MI = 20    # written into its writable layer
KB2_RUNS = 10        # pods per test (in parallel)

KB2_SOURCE = ("CASES.md KB-2; [UP] pkg/kubelet/eviction/eviction_manager.go evictPod; pkg/kubelet/kubelet.go "
              "SyncTerminatingPod; pkg/kubelet/kubelet_pods.go generateAPIPodStatus, getPhase; "
              "pkg/kubelet/status/status_manager.go mergePodStatus")
KB2_BUG = ("kubernetes/kubernetes#141483 (open); #120182 (closed: kept as changed); phase from exit codes since 1.27: "
           "#118310 / PR #115331")
KB2_MECHANISM = ("evictPod's status function (Failed/Evicted) is held back by mergePodStatus until the containers "
                 "stopped; after the kill generateAPIPodStatus(podIsTerminal) → getPhase takes the phase from the exit "
                 "codes (exit 0 → Succeeded) and drops the reason of the phase it replaces; Failed/Evicted remains only "
                 "when the status read after the kill no longer finds the container (ContainerStatusUnknown/137 placeholder): "
                 "a race")

register(
    [
        Expectation(case="KB-2", name="evicted_event_message", documented=POD_MSG,
                    source="CASES.md KB-2; [UP] pkg/kubelet/eviction/helpers.go podEphemeralStorageMessageFmt; "
                           "eviction_manager.go podEphemeralStorageLimitEviction (the pod check runs first; see ES-3)",
                    minors=READ),
        # Runs of the container the recorder saw (by container ID), not restartCount: in the Failed
        # outcome the kubelet publishes restartCount 1 with a waiting(ContainerCreating) state and a
        # ContainerStatusUnknown/137 lastState for a container it no longer finds (kubelet_pods.go
        # convertToAPIContainerStatuses: "If the pod was not deleted, then it's been restarted") —
        # bookkeeping, not a second run.
        Expectation(case="KB-2", name="container_runs", documented=1, unit="runs", band=Band(1, 1),
                    why="exact: restartPolicy Never, an evicted pod is never restarted (restartCount of the Failed "
                        "outcome is the kubelet's placeholder increment: counted here by container ID)",
                    source="CASES.md KB-2 (invariant of the race); [UP] kubelet_pods.go convertToAPIContainerStatuses",
                    minors=READ),
        Expectation(case="KB-2", name="terminal_phase", documented="Succeeded|Failed", pattern=True,
                    source=f"CASES.md KB-2 (either, by the race); {KB2_SOURCE}", minors=READ),
        Expectation(
            case="KB-2", name="runs_ended_succeeded", documented=1, unit="runs", band=Band.at_least(1),
            why=f"a race (module doc): the exit-0 outcome shows in some of the {KB2_RUNS} runs — seen 5 of 7 on v1.37.2; "
                "the frequency of each outcome is in the details",
            source=KB2_SOURCE, minors=READ,
            known_bug=KnownBug(KB2_BUG, correct=0, correct_band=Band(0, 0), mechanism=KB2_MECHANISM),
        ),
    ],
    VERIFIED_IN,
)

# -- KB-3 -------------------------------------------------------------------------------------
KB3_LIMIT_MI = 64   # limits.memory of the init container
KB3_ALLOC_MI = 128  # one dd block of its child: twice the limit
# The pod stays Pending through one full pod-worker re-sync (syncFrequency × (1 + jitter), plus
# the sync ticker) after its sandbox stopped: every sync finds the same state (module doc).
KB3_WINDOW_S = KUBELET_SYNC_FREQUENCY_S * (1 + POD_WORKER_JITTER) + SYNC_TICKER_S

KB3_SOURCE = ("CASES.md KB-3; [UP] pkg/kubelet/kuberuntime/helpers.go isInitContainerFailed; kuberuntime_container.go "
              "computeInitContainerActions; kuberuntime_manager.go computePodActions; kubelet_pods.go getPhase")
KB3_TASKOOM = ("[containerd v2.3.4] internal/cri/server/events.go handleEvent TaskOOM (status.Reason = OOMKilled for any "
               "OOM kill in the container's cgroup); container_status.go toCRIContainerStatus")
KB3_BUG = ("kubernetes/kubernetes#116676 (closed as rotten, not fixed; fix PR #117712 closed unmerged; "
           "background #104454 / PR #104650)")
KB3_MECHANISM = ("isInitContainerFailed counts reason OOMKilled as a failure → computeInitContainerActions sets KillPod "
                 "(restartPolicy Never): the sandbox is stopped; getPhase counts an init container failed only by a "
                 "non-zero exit code → main containers waiting → Pending, never terminal")

register(
    [
        Expectation(case="KB-3", name="init_terminated_reason", documented="OOMKilled",
                    source=f"CASES.md KB-3; {KB3_TASKOOM}; see OM-2", cgroup=1, minors=READ),
        Expectation(case="KB-3", name="init_exit_code", documented=0,
                    source="CASES.md KB-3 (the init container's own script exits 0; cgroup v1: only the child is killed)",
                    cgroup=1, minors=READ),
        Expectation(case="KB-3", name="kernel_killed_tasks", documented="dd",
                    source="CASES.md KB-3 (dmesg: only the child); [UP] pkg/kubelet/kubelet.go NewMainKubelet "
                           "(cgroup v1: singleProcessOOMKill)", cgroup=1, minors=READ),
        Expectation(case="KB-3", name="main_started", documented=False,
                    source=f"CASES.md KB-3; {KB3_SOURCE} (an OOMKilled init container counts as failed: no main start)",
                    minors=READ),
        Expectation(case="KB-3", name="ready_to_start_containers", documented="False",
                    source=f"CASES.md KB-3 (PodSandboxNotReady: the kubelet stopped the sandbox); {KB3_SOURCE}; "
                           "pkg/kubelet/status/generate.go GeneratePodReadyToStartContainersCondition",
                    cgroup=1, minors=READ),
        Expectation(
            case="KB-3", name="phase", documented="Pending",
            source=f"CASES.md KB-3 (Pending / PodInitializing for ≥ 7.5 min); {KB3_SOURCE}", cgroup=1, minors=READ,
            known_bug=KnownBug(KB3_BUG, correct="Failed", mechanism=KB3_MECHANISM),
        ),
    ],
    VERIFIED_IN,
)

# cgroup v2: the bug's input does not arise (module doc) — the same manifest fails like OM-3.
KB3_V2_SOURCE = ("CASES.md KB-3 (cgroup v1 only); [UP] pkg/kubelet/kuberuntime/kuberuntime_container_linux.go "
                 "generateLinuxContainerResources (memory.oom.group=1 on cgroup v2): the whole init container is killed; see OM-2, OM-3")
register(
    [
        Expectation(case="KB-3", name="init_terminated_reason", documented="OOMKilled",
                    source=f"{KB3_V2_SOURCE}; {KB3_TASKOOM}", cgroup=2, minors=READ),
        Expectation(case="KB-3", name="init_exit_code", documented=137,
                    source=f"{KB3_V2_SOURCE} (SIGKILL: 128 + 9)", cgroup=2, minors=READ),
        Expectation(case="KB-3", name="kernel_killed_tasks", documented="dd sh",
                    source=f"{KB3_V2_SOURCE} (the oom group: every task of the cgroup)", cgroup=2, minors=READ),
        Expectation(case="KB-3", name="ready_to_start_containers", documented="False",
                    source=f"{KB3_V2_SOURCE}; [UP] kuberuntime/helpers.go isInitContainerFailed (exit 137) → "
                           "kuberuntime_container.go computeInitContainerActions KillPod (restartPolicy Never): sandbox stopped",
                    cgroup=2, minors=READ),
        Expectation(case="KB-3", name="phase", documented="Failed",
                    source=f"{KB3_V2_SOURCE}; [UP] pkg/kubelet/kubelet_pods.go getPhase (a failed init container under "
                           "restartPolicy Never: Failed) — the bug needs an init container that exits 0",
                    cgroup=2, minors=READ),
    ],
    VERIFIED_IN,
)

# -- KB-4: a restarted container inherits started=true (kubernetes#141155) --------------------
KB4_STARTS_AFTER_S = 2           # every run creates /tmp/started (the startup probe's file) this long after its start
KB4_UNHEALTHY_AFTER_S = 4        # the first run creates /tmp/unhealthy (liveness then fails) this long after its start
KB4_STARTUP_PERIOD_S = 20        # startupProbe.periodSeconds: the window of the bug is up to one period
KB4_STARTUP_FAILURE_THRESHOLD = 6  # 120 s: never reached (the file comes after 2 s)
KB4_OTHER_PERIOD_S = 1           # liveness (failureThreshold 1) and readiness periodSeconds

KB4_SOURCE = ("CASES.md KB-4; [UP] pkg/kubelet/kubelet_pods.go convertToAPIContainerStatuses (ChangeContainerStatusOnKubeletRestart "
              "off: Started copied from the previous status of the same name into a running container); "
              "pkg/kubelet/prober/prober_manager.go isContainerStarted, UpdatePodStatus; prober/worker.go doProbe; "
              "pkg/features/kube_features.go ChangeContainerStatusOnKubeletRestart (1.35: default false)")
KB4_GATED = ("[UP] pkg/kubelet/prober/worker.go doProbe (liveness and readiness skip while c.Started is not true); "
             "prober_manager.go isContainerStarted (a startup worker without a result for the container: not started)")
KB4_BUG = "kubernetes/kubernetes#141155 (closed: fixed on master by #141342; cherry-picks #142041, #142042, #142043 open)"
KB4_MECHANISM = ("kubelet_pods.go convertToAPIContainerStatuses copies Started=true from the killed container's status into "
                 "its replacement (same name, new ID); prober_manager.go isContainerStarted finds no startup result for the "
                 "new ID and returns the copy; worker.go doProbe lets liveness and readiness probe it before its startup "
                 "probe passed, until the startup worker's next tick records Unknown for the new ID")
# The fix as read (2026-12-07): PR #141342 "Fix startup probe gating after container restart" (merged,
# "Fixes #141155": Started no longer inherited when the container ID changes); its cherry-picks #142041
# (release-1.37), #142042 (release-1.36), #142043 (release-1.35) are open. Not in the source of v1.37.2,
# v1.36.3 or v1.35.4 (convertToAPIContainerStatuses copies Started by name alone); no release carries it.
KB4_FIX = Fix("merged", "upstream threads kubernetes/kubernetes#141155, #141342, #142041, #142042, #142043 (read 2026-12-07); "
                        "the source of v1.35.4, v1.36.3, v1.37.2 (kubelet_pods.go convertToAPIContainerStatuses)",
              pr="kubernetes/kubernetes#141342",
              cherry_picks=(CherryPick("release-1.37", "kubernetes/kubernetes#142041", "open"),
                            CherryPick("release-1.36", "kubernetes/kubernetes#142042", "open"),
                            CherryPick("release-1.35", "kubernetes/kubernetes#142043", "open")))
KB4_RACE = (f"the startup worker ticks every {KB4_STARTUP_PERIOD_S} s from its own start (worker.go run); when a tick falls "
            f"between the restarted container's start and the kubelet's first status of it (PLEG relist ≤ {PLEG_RELIST_S:g} s "
            "and the sync that writes it), doProbe records Unknown for the new container ID first, isContainerStarted "
            "returns false and the copy never shows: the correct outcome. The first run creates /tmp/unhealthy before "
            "its startup probe passes, so its liveness kill and the restart follow a startup tick by a few seconds and "
            "the next tick is most of a period away: the bug. (A restart held back by a back-off, from the second on, "
            "would let a status record the old container terminated, started=false, and the copy carry that.) "
            "Seen (2026-12-07): the bug in 2 of 2 runs on v1.37.2 — started=true in the restarted container's first "
            "status, 38 liveness and readiness runs in the ≈ 18.5 s before the startup tick that recorded Unknown")
KB4_SINCE = "1.35.0"   # kube_features.go: ChangeContainerStatusOnKubeletRestart default false from 1.35; v1.34.4 has no copy


def _kb4_bug(correct: float | bool, correct_band: Band | None = None) -> KnownBug:
    """KB-4's known bug with the ``correct`` value (and its band) of one measurement."""
    return KnownBug(KB4_BUG, correct=correct, correct_band=correct_band, mechanism=KB4_MECHANISM, race=KB4_RACE,
                    since=KB4_SINCE, fix=KB4_FIX)


_KB4_WINDOW_WHY = (f"the liveness and readiness workers probe every {KB4_OTHER_PERIOD_S} s (and UpdatePodStatus triggers "
                   f"readiness at once) while the copied started=true lasts — up to one startup period "
                   f"({KB4_STARTUP_PERIOD_S} s): at least 1 run")

register(
    [
        # the first run: no earlier status to copy from — the startup probe gates it on every minor (the control)
        exact("KB-4", "probe_runs_before_started[first run]", 0, f"CASES.md KB-4; {KB4_GATED}",
              "liveness and readiness never run before the startup probe's first success: none", unit="runs", minors=READ),
        equal("KB-4", "started_when_first_running[first run]", False, f"CASES.md KB-4; {KB4_GATED}", minors=READ),
        exact("KB-4", "restart_count", 1, "CASES.md KB-4 (one liveness failure: only the first run creates /tmp/unhealthy); "
              "[UP] pkg/kubelet/kuberuntime/kuberuntime_manager.go computePodActions (liveness failure → restart)",
              "one restart, by the first run's liveness failure; the second run stays healthy", unit="restarts", minors=READ),
        # the restarted container: 1.34 gates it (no copy), 1.35+ has the bug
        exact("KB-4", "probe_runs_before_started[restarted]", 0, f"CASES.md KB-4; {KB4_GATED} (v1.34.4: no copy of Started)",
              "the startup probe gates the new container as the first: none", unit="runs", minors=(34, 34)),
        equal("KB-4", "started_when_first_running[restarted]", False, f"CASES.md KB-4; {KB4_GATED} (v1.34.4: no copy of Started)",
              minors=(34, 34)),
        Expectation("KB-4", "probe_runs_before_started[restarted]", 1, KB4_SOURCE, unit="runs", band=Band.at_least(1),
                    why=_KB4_WINDOW_WHY, minors=(35, None),
                    known_bug=_kb4_bug(0, Band(0, 0))),
        Expectation("KB-4", "started_when_first_running[restarted]", True, KB4_SOURCE, minors=(35, None),
                    known_bug=_kb4_bug(False)),
    ],
    VERIFIED_IN,
)

# -- KB-5: OOMKilled for a container that exited 143 on SIGTERM (kubernetes#140716) ------------
KB5_LIMIT_MI = 64    # limits.memory
KB5_ALLOC_MI = 128   # one dd block of the child: twice the limit
KB5_EXIT_CODE = 143  # the container's own trap: exit 143 on SIGTERM (128 + 15), as a JVM does

KB5_CONTAINERD = ("[UP] containerd v2.3.4 cmd/containerd-shim-runc-v2/task/service.go Create (OOM watch: pkg/oom/v1 epoller "
                  "on memory.oom_control, cgroup v1; internal/oom watcher on memory.events oom_kill, cgroup v2) → "
                  "internal/cri/server/events.go handleEvent TaskOOM (status.Reason = OOMKilled, kept) → "
                  "container_status.go toCRIContainerStatus (a set reason is not replaced by Error); "
                  "pkg/kubelet/kuberuntime/kuberuntime_container.go toKubeContainerStatus (passed through)")
KB5_BUG = "kubernetes/kubernetes#140716 (open, triage accepted; fix PR #140718 open)"
KB5_MECHANISM = ("containerd's shim sends TaskOOM for any OOM kill in the container's cgroup (the child's); "
                 "internal/cri/server/events.go handleEvent sets the container's reason OOMKilled for good and "
                 "toCRIContainerStatus keeps it at the later exit 143; the kubelet passes it through "
                 "(kuberuntime_container.go toKubeContainerStatus)")
# PR #140718 "kubelet: don't report OOMKilled for containers that exited with SIGTERM" ("Fixes #140716") is
# open (2026-12-07); toKubeContainerStatus of v1.34.4 … v1.37.2 copies the runtime's reason unchanged.
KB5_FIX = Fix("open", "upstream PR kubernetes/kubernetes#140718 (open when read, 2026-12-07); the source of v1.34.4 … v1.37.2 "
                      "(kuberuntime_container.go toKubeContainerStatus)", pr="kubernetes/kubernetes#140718")
KB5_V1 = "CASES.md KB-5 (cgroup v1: only the child dies, see OM-2, KB-3); [UP] pkg/kubelet/kubelet.go NewMainKubelet (singleProcessOOMKill)"
KB5_V2 = ("CASES.md KB-5 (cgroup v2: the input does not arise); [UP] pkg/kubelet/kuberuntime/kuberuntime_container_linux.go "
          "generateLinuxContainerResources (memory.oom.group=1): the child's OOM kill takes the whole container, as OM-2")

register(
    [
        equal("KB-5", "child_exit_code", SIGKILL_EXIT_CODE, f"{KB5_V1} (dd killed: 128 + 9)", cgroup=1, minors=READ),
        equal("KB-5", "kernel_killed_tasks", "dd", f"{KB5_V1} (dmesg: only the child)", cgroup=1, minors=READ),
        equal("KB-5", "exit_code", KB5_EXIT_CODE, "CASES.md KB-5 (the container's trap: exit 143 on the delete's SIGTERM)",
              cgroup=1, minors=READ),
        Expectation("KB-5", "terminated_reason", "OOMKilled", f"CASES.md KB-5; {KB5_CONTAINERD}", cgroup=1, minors=READ,
                    known_bug=KnownBug(KB5_BUG, correct="Error", mechanism=KB5_MECHANISM, fix=KB5_FIX)),
        equal("KB-5", "child_exit_code", "absent", f"{KB5_V2} (PID 1 dies with the child: no 'child exit')", cgroup=2, minors=READ),
        equal("KB-5", "kernel_killed_tasks", "dd sh", f"{KB5_V2} (the oom group: every task)", cgroup=2, minors=READ),
        equal("KB-5", "exit_code", SIGKILL_EXIT_CODE, f"{KB5_V2} (SIGKILL before any SIGTERM: 128 + 9)", cgroup=2, minors=READ),
        equal("KB-5", "terminated_reason", "OOMKilled", f"{KB5_V2}; {KB5_CONTAINERD}", cgroup=2, minors=READ),
    ],
    VERIFIED_IN,
)

# -- KB-6: exec readiness probes during termination (kubernetes#140881) ---------------------
KB6_GRACE_S = 15         # terminationGracePeriodSeconds: the container ignores SIGTERM beyond its trap
KB6_READINESS_PERIOD_S = 1  # readinessProbe.periodSeconds (failureThreshold 1)
# The container's sigterm stamp (adjtimex + awk) is written up to this long after the signal.
KB6_STAMP_S = 0.5

KB6_SOURCE = ("CASES.md KB-6; [UP] pkg/kubelet/prober/prober_manager.go AddPod (the workers' context); pkg/kubelet/pod_workers.go "
              "UpdatePod ('Cancelling current pod sync' when the pod becomes terminating), startPodSync; prober/worker.go "
              "doProbe (an errored probe's result is thrown away); kubelet.go SyncTerminatingPod (StopLivenessAndStartup, "
              "readiness runs on until RemovePod)")
KB6_BUG = "kubernetes/kubernetes#140881 (closed: fixed on master by #140882; cherry-picks #141006, #141005 open)"
KB6_MECHANISM = ("prober_manager.go AddPod starts the probe workers with the pod worker's sync context; pod_workers.go UpdatePod "
                 "cancels it when the pod becomes terminating; every exec probe after that fails 'context canceled' and "
                 "worker.go doProbe throws the result away: Ready stays True until the container is gone")
# The fix as read (2026-12-07): PR #140882 is listed in CHANGELOG/CHANGELOG-1.37.md of v1.37.2 under v1.37.0
# (Bug or Regression) and v1.37.2's AddPod has context.WithoutCancel; v1.36.3's and v1.35.4's have not. Its
# cherry-picks #141006 (release-1.36) and #141005 (release-1.35) are open.
KB6_FIX = Fix("merged", "CHANGELOG/CHANGELOG-1.37.md of v1.37.2 (v1.37.0, Bug or Regression: #140882); the source of v1.34.4 … "
                        "v1.37.2 (prober_manager.go AddPod); upstream threads kubernetes/kubernetes#140881, #140882, #141006, "
                        "#141005 (read 2026-12-07)",
              pr="kubernetes/kubernetes#140882", released="1.37.0",
              cherry_picks=(CherryPick("release-1.36", "kubernetes/kubernetes#141006", "open"),
                            CherryPick("release-1.35", "kubernetes/kubernetes#141005", "open")))
KB6_SINCE = "1.35.0"   # #130487 (v1.35.0) passed the sync context to AddPod; v1.34.4 runs the workers without one
KB6_UNAFFECTED = (Unaffected("1.36.0", "1.36.2", "kubernetes/kubernetes#141006; [UP] pkg/kubelet/pod_workers.go startPodSync of "
                             "v1.36.2: a new context.WithCancel per sync, the context AddPod got is never cancelled (#139823's "
                             "leak); v1.36.3 reuses it until UpdatePod cancels it (#140066)"),)
KB6_CORRECT_HIGH_S = KB6_READINESS_PERIOD_S + KUBELET_HANDOFF_S + STATUS_UPDATE_S
_KB6_CORRECT_WHY = (f"the trap removes the readiness file right after its sigterm stamp; the next probe (≤ {KB6_READINESS_PERIOD_S} s, "
                    f"failureThreshold 1) fails: +{KUBELET_HANDOFF_S:g} s probe result to status +{STATUS_UPDATE_S:g} s status write")
_KB6_BUGGY_WHY = (f"Ready turns False only when the container is gone: SIGKILL {KB6_GRACE_S} s after SIGTERM (−{KB6_STAMP_S:g} s "
                  f"the stamp's own delay), +{PLEG_RELIST_S:g} s PLEG relist +{KUBELET_HANDOFF_S:g} s sync +{STATUS_UPDATE_S:g} s "
                  "status write")
KB6_BUGGY_BAND = Band(KB6_GRACE_S - KB6_STAMP_S, KB6_GRACE_S + PLEG_RELIST_S + KUBELET_HANDOFF_S + STATUS_UPDATE_S)
_KB6_RUNS_WHY = (f"one exec probe per {KB6_READINESS_PERIOD_S} s from SIGTERM until the SIGKILL {KB6_GRACE_S} s later: at least "
                 "the one that fails")

register(
    [
        # 1.34: no context — the probe runs on through the grace period
        Expectation("KB-6", "ready_false_after_sigterm_s", float(KB6_READINESS_PERIOD_S),
                    f"CASES.md KB-6; [UP] prober_manager.go AddPod of v1.34.4 (go w.run(), no context); {KB6_SOURCE}",
                    unit="s", band=Band(0, KB6_CORRECT_HIGH_S), why=_KB6_CORRECT_WHY, minors=(34, 34)),
        Expectation("KB-6", "readiness_probe_runs_after_sigterm", 1, "CASES.md KB-6; [UP] prober_manager.go AddPod of v1.34.4",
                    unit="runs", band=Band.at_least(1), why=_KB6_RUNS_WHY, minors=(34, 34)),
        # 1.35+: the regression; the fix in 1.37.0 (the judge reads the patch against KB6_FIX)
        Expectation("KB-6", "ready_false_after_sigterm_s", float(KB6_GRACE_S), KB6_SOURCE, unit="s", band=KB6_BUGGY_BAND,
                    why=_KB6_BUGGY_WHY, minors=(35, None),
                    known_bug=KnownBug(KB6_BUG, correct=float(KB6_READINESS_PERIOD_S), correct_band=Band(0, KB6_CORRECT_HIGH_S),
                                       mechanism=KB6_MECHANISM, since=KB6_SINCE, fix=KB6_FIX,
                                       unaffected=KB6_UNAFFECTED)),
        Expectation("KB-6", "readiness_probe_runs_after_sigterm", 0, KB6_SOURCE, unit="runs", band=Band(0, 0),
                    why="every exec probe after the cancel fails before it reaches the container: none runs",
                    minors=(35, None),
                    known_bug=KnownBug(KB6_BUG, correct=1, correct_band=Band.at_least(1), mechanism=KB6_MECHANISM,
                                       since=KB6_SINCE, fix=KB6_FIX, unaffected=KB6_UNAFFECTED)),
    ],
    VERIFIED_IN,
)

# -- KB-7: Ready carried over to a container recreated during an API cut (kubernetes#141473) ----
KB7_INITIAL_DELAY_S = 40   # readinessProbe.initialDelaySeconds: the replacement's first probe, this long after its start
KB7_PERIOD_S = 1           # readinessProbe.periodSeconds (failureThreshold 1)
KB7_RUN_S = 50             # the first run exits 1 this long after its start stamp (Ready at ≈ 41 s: the cut comes between)
KB7_HEAL_AFTER_EXIT_S = 15  # the kubelet restart and the heal, this long after the first run's exit (its start + KB7_RUN_S)
# The cut begins once the first run is Ready (≥ initialDelaySeconds after its start) and ends at the heal: at most this long.
KB7_CUT_S = KB7_RUN_S - KB7_INITIAL_DELAY_S + KB7_HEAL_AFTER_EXIT_S
# The test's wait for the heal polls every 0.5 s (scenarios/faults/fault_helpers.py wait_until_time): the heal up to
# this late; a container's own start stamp (adjtimex + awk) comes up to this long after the process start the
# kubelet's StartedAt records; an exec probe's command starts up to this long after the worker's tick.
KB7_HEAL_LATE_S = 0.5
KB7_STAMP_S = 0.5
KB7_PROBE_EXEC_S = 1.0
# initialDelaySeconds counts from StartedAt cut to the second (kubelet.PROBE_DELAY_FROM_WHOLE_SECOND_S): a foreign
# run of 7936f5e (2026-12-07) saw the first run's first probe 39.484 s after its start stamp — StartedAt 20:11:35,
# the probe at 20:12:15.087, 40 s after the second, not after the start.

KB7_SOURCE = ("CASES.md KB-7; [UP] pkg/kubelet/prober/worker.go doProbe (isRestart from the start time alone: no initial Failure); "
              "prober_manager.go UpdatePodStatus, setReadyStateOnKubeletRestart (ready=true without a result; backs off only "
              "on the API's PodReady), kubeletRestartGracePeriod (10 s); kubelet_pods.go generateAPIPodStatus (the API pod "
              "object); pkg/features/kube_features.go ChangeContainerStatusOnKubeletRestart (1.35: default false)")
KB7_BUG = "kubernetes/kubernetes#141473 (closed: fixed on master by #141487; cherry-picks #142254, #142255 open)"
KB7_MECHANISM = ("worker.go doProbe counts a container started > 10 s before the kubelet as one that survived the restart "
                 "and seeds no Failure; prober_manager.go setReadyStateOnKubeletRestart sets ready=true while it has no "
                 "result and the API's PodReady is True — a status the cut left naming the old container; no container-ID "
                 "check, until the replacement's first readiness probe (initialDelaySeconds after its start)")
# The fix as read (2026-12-07): PR #141487 (merged, "Fixes #141473": canInheritProbeState — inherit only when the API status
# names the same container ID) and its cherry-picks #142254 (release-1.36) and #142255 (release-1.35), both open; no
# cherry-pick to release-1.37 found. Not in the source of v1.36.2, v1.36.3 or v1.37.2 (worker.go doProbe,
# prober_manager.go setReadyStateOnKubeletRestart: no ID check); v1.37.2's CHANGELOG-1.37.md (to v1.37.1) does not name it.
KB7_FIX = Fix("merged", "upstream threads kubernetes/kubernetes#141473, #141487, #142254, #142255 (read 2026-12-07; no "
                        "cherry-pick to release-1.37 found); the source of v1.36.2, v1.36.3, v1.37.2 (prober/worker.go doProbe, "
                        "prober_manager.go setReadyStateOnKubeletRestart)",
              pr="kubernetes/kubernetes#141487",
              cherry_picks=(CherryPick("release-1.36", "kubernetes/kubernetes#142254", "open"),
                            CherryPick("release-1.35", "kubernetes/kubernetes#142255", "open")))
KB7_SINCE = "1.35.0"   # kube_features.go: ChangeContainerStatusOnKubeletRestart default false from 1.35 (KB-4)
KB7_API_STATUS = "Ready=True restartCount=0"


def kb7_cut_limit_s(lease_s: float, grace_s: float) -> float:
    """The longest KB-7's cut may last (s) for the node to stay Ready through it and its kubelet's
    restart: the node-monitor grace period ``grace_s`` less one Lease renewal interval of
    ``lease_s`` (0.25 × the duration + 4 % jitter: the last renewal before the cut) and the
    restarted kubelet's start to its first renewal (:data:`~e2e.documented.faults.KUBELET_START_S`).
    Source: CASES.md KB-7; [UP] pkg/controller/nodelifecycle/node_lifecycle_controller.go
    monitorNodeHealth → controller_utils.go MarkPodsNotReady at Ready=Unknown."""
    return grace_s - lease_s * RENEW_FRACTION * (1 + RENEW_JITTER) - KUBELET_START_S


def _kb7_bug(correct: float | bool, correct_band: Band | None = None) -> KnownBug:
    """KB-7's known bug with the ``correct`` value (and its band) of one measurement."""
    return KnownBug(KB7_BUG, correct=correct, correct_band=correct_band, mechanism=KB7_MECHANISM, since=KB7_SINCE, fix=KB7_FIX)


_KB7_INPUT = ("CASES.md KB-7 (the bug's input); [UP] pkg/kubelet/status/status_manager.go syncPod (no status write without "
              "the API server); pkg/controller/util/node/controller_utils.go MarkPodsNotReady (only at Ready=Unknown: the "
              "cut is shorter, kb7_cut_limit_s)")
# The replacement starts after the first run's own exit: no back-off on a first restart (kuberuntime_manager.go
# doBackOff), the PLEG relist and the container start; the restart comes KB7_HEAL_AFTER_EXIT_S after the exit.
_KB7_BEFORE_RESTART_WHY = (f"the heal (and the kubelet restart) {KB7_HEAL_AFTER_EXIT_S} s after the first run's exit (+≤ "
                           f"{KB7_HEAL_LATE_S:g} s wait); the replacement starts ≤ {PLEG_RELIST_S:g} s PLEG relist + "
                           f"{CONTAINER_START_S:g} s start after that exit; the bug's input needs ≥ {KUBELET_RESTART_GRACE_S} s "
                           "(prober_manager.go kubeletRestartGracePeriod)")
_KB7_PROBE_WHY = (f"worker.go doProbe skips until int(time since StartedAt) ≥ initialDelaySeconds {KB7_INITIAL_DELAY_S}, then "
                  f"probes at the next tick (≤ {KB7_PERIOD_S} s) + ≤ {KB7_PROBE_EXEC_S:g} s exec; StartedAt as the prober "
                  f"reads it is cut to the second (−{PROBE_DELAY_FROM_WHOLE_SECOND_S:g} s: status_manager.go normalizeStatus); the start "
                  f"stamp comes up to {KB7_STAMP_S:g} s after StartedAt")
# Buggy: Ready from the restarted kubelet's first status (heal + restart + its first sync and status write) to the
# replacement's first probe (its start + initialDelaySeconds); the restart comes 10 … 15.5 s after that start.
KB7_STALE_LOW_S = (KB7_INITIAL_DELAY_S - PROBE_DELAY_FROM_WHOLE_SECOND_S - KB7_HEAL_AFTER_EXIT_S - KB7_HEAL_LATE_S - KUBELET_START_S
                   - STATUS_UPDATE_S - KB7_STAMP_S)
KB7_STALE_HIGH_S = KB7_INITIAL_DELAY_S - KUBELET_RESTART_GRACE_S + KB7_PERIOD_S + KB7_PROBE_EXEC_S
_KB7_STALE_WHY = (f"from the restarted kubelet's first status (≤ {KUBELET_START_S} s start + {STATUS_UPDATE_S:g} s status write "
                  f"after the heal, which comes {KUBELET_RESTART_GRACE_S}…{KB7_HEAL_AFTER_EXIT_S + KB7_HEAL_LATE_S:g} s after "
                  f"the replacement's start) to its first readiness probe, initialDelaySeconds {KB7_INITIAL_DELAY_S} s after "
                  f"its start (−{PROBE_DELAY_FROM_WHOLE_SECOND_S:g} s StartedAt cut to the second, +≤ {KB7_PERIOD_S} s tick + "
                  f"{KB7_PROBE_EXEC_S:g} s exec)")

register(
    [
        equal("KB-7", "api_status_at_restart", KB7_API_STATUS, _KB7_INPUT, minors=READ),
        Expectation("KB-7", "replacement_start_before_restart_s", float(KB7_HEAL_AFTER_EXIT_S - PLEG_RELIST_S - CONTAINER_START_S),
                    f"CASES.md KB-7; [UP] pkg/kubelet/kuberuntime/kuberuntime_manager.go doBackOff; {UP_PROBER}", unit="s",
                    band=Band(KUBELET_RESTART_GRACE_S, KB7_HEAL_AFTER_EXIT_S + KB7_HEAL_LATE_S), why=_KB7_BEFORE_RESTART_WHY,
                    minors=READ),
        *(Expectation("KB-7", f"first_readiness_probe_after_start_s[{key}]", float(KB7_INITIAL_DELAY_S),
                      "CASES.md KB-7; [UP] pkg/kubelet/prober/worker.go doProbe (InitialDelaySeconds), run (a restarted "
                      "kubelet's worker first sleeps a random part of the period); pkg/kubelet/status/status_manager.go "
                      "updateStatusInternal, normalizeStatus (StartedAt to the second)", unit="s",
                      band=Band(KB7_INITIAL_DELAY_S - PROBE_DELAY_FROM_WHOLE_SECOND_S - KB7_STAMP_S,
                                KB7_INITIAL_DELAY_S + KB7_PERIOD_S + KB7_PROBE_EXEC_S),
                      why=_KB7_PROBE_WHY, minors=READ) for key in ("first run", "replacement")),
        exact("KB-7", "restart_count", 1, "CASES.md KB-7 (only the first run exits; the replacement's failing readiness probe "
              "restarts nothing); [UP] kuberuntime_manager.go computePodActions", "one exit, one restart", unit="restarts",
              minors=READ),
        # 1.34: the restarted kubelet starts every readiness worker at Failure (NF-5's reading) — never Ready before the probe
        equal("KB-7", "ready_before_first_probe[replacement]", False, f"CASES.md KB-7; {UP_PROBER_134}", minors=(34, 34)),
        exact("KB-7", "ready_s_before_first_probe[replacement]", 0.0, f"CASES.md KB-7; {UP_PROBER_134}",
              "Failure until the first probe: no Ready before it", unit="s", minors=(34, 34)),
        # 1.35+: the bug (the judge reads the patch against KB7_FIX)
        Expectation("KB-7", "ready_before_first_probe[replacement]", True, KB7_SOURCE, minors=(35, None),
                    known_bug=_kb7_bug(False)),
        Expectation("KB-7", "ready_s_before_first_probe[replacement]",
                    float(KB7_INITIAL_DELAY_S - KB7_HEAL_AFTER_EXIT_S), KB7_SOURCE, unit="s",
                    band=Band(KB7_STALE_LOW_S, KB7_STALE_HIGH_S), why=_KB7_STALE_WHY, minors=(35, None),
                    known_bug=_kb7_bug(0.0, Band(0, 0))),
    ],
    VERIFIED_IN,
)

# -- KB-8: the kubelet leaks a context on every pod sync (kubernetes#139823) -------------------
KB8_PODS = 30                # pods, all on one node (a required podAffinity to each other)
KB8_PROBE_PERIOD_S = 1       # readinessProbe.periodSeconds (httpGet, failureThreshold 1, successThreshold 1)
KB8_TOGGLE_S = 1             # each container's /www/ready exists for this long, then is gone for this long
# The kubelet's cAdvisor keeps each new container's stats for 2 min (pkg/kubelet/cadvisor/cadvisor_linux.go
# statsCacheDuration) and reads them at most every 15 s (maxHousekeepingInterval): its cache grows that
# long after the pods start, so the window opens only then. The kubelet's event spam filter (client-go
# tools/record EventCorrelator: 25 events per pod, then 1 per 5 min) is full within it too.
KB8_WARMUP_S = 120 + 15
KB8_WINDOW_S = 360           # the sampling window after the warm-up
KB8_SAMPLE_EVERY_S = 2       # one sample (/metrics, then the heap after a forced collection) this often
# The slope's standard error is the live heap's wander between samples (σ objects) over the spread of
# the syncs and √samples: with KB8_PODS syncs/s over KB8_WINDOW_S (≈ 10,800 syncs, 181 samples) σ up to
# ≈ 8400 objects still resolves KB8_FIT_STDERR_MAX (tests/test_known_bugs.py: ±3000 → < 0.2). The wander
# is one-sided bursts (objects in flight at the forced collection: up to +39,000 in one sample) over
# σ ≈ 2600: 1.36.2's bisect of 2026-12-08 measured σ ≈ 4900 over 240 s (121 samples), stderr 0.22;
# at 360 s the same bisect measured 0.087 (1.36.2) and 0.127 (1.36.3).

# Objects one leaked context keeps (module doc, KB-8): the cancelCtx, its done channel, its own children
# map (Map + one group; Map, directory, table and groups once grown past 8 children) — 1 at least, 6 at most.
KB8_LEAK_MIN_OBJECTS = 1
KB8_LEAK_MAX_OBJECTS = 1 + 1 + 4
# The issue's heap profile: (380,195 withCancel + 276,216 Done + 642,456 propagateCancel) / 380,195.
KB8_ISSUE_OBJECTS_PER_SYNC = round((380_195 + 276_216 + 642_456) / 380_195, 2)
# The fit resolves a slope to this standard error at worst (judged: heap_objects_fit_stderr) and each band
# leaves two of them beside its mechanism: a leak and none stay apart by the fit itself.
KB8_FIT_STDERR_MAX = 0.2
KB8_MARGIN = 2 * KB8_FIT_STDERR_MAX
# A goroutine leaked once in 100 syncs; over the window's thousands of syncs tens of goroutines, more
# than the kubelet's own that come and go (a probe, an HTTP handler in flight).
KB8_GOROUTINES_PER_SYNC_MAX = 0.01
KB8_SYNCS_PER_S = KB8_PODS / KB8_TOGGLE_S   # one readiness change per toggle per pod, one sync each (module doc)

KB8_READ = ("1.34.4", "1.35.4", "1.36.2", "1.36.3", "1.37.2")   # startPodSync read in each (module doc)
KB8_SOURCE = ("CASES.md KB-8; [UP] pkg/kubelet/pod_workers.go startPodSync (v1.36.2: a context.WithCancel(parentCtx) per "
              "sync, its cancelFn overwritten uncalled), UpdatePod (parentCtx); cmd/kubelet/app/server.go "
              "(genericapiserver.SetupSignalContext: a cancelable root); Go 1.26 context.go withCancel, propagateCancel, "
              "(*cancelCtx).Done; internal/runtime/maps (a map's Map, group, table)")
KB8_FIXED_SOURCE = ("CASES.md KB-8; [UP] pkg/kubelet/pod_workers.go startPodSync (v1.34.4, v1.35.4: status.ctx from "
                    "context.Background(), made once and reused; v1.36.3, v1.37.2: from context.WithoutCancel(parentCtx), "
                    "made once and reused): nothing kept per sync")
KB8_BUG = "kubernetes/kubernetes#139823 (closed: fixed on master by #139850, on release-1.36 by #140066)"
KB8_MECHANISM = ("pod_workers.go startPodSync makes a context.WithCancel(parentCtx) on every sync and overwrites its "
                 "cancelFn without calling it; context.go propagateCancel keeps each in the cancelable root's children "
                 "map until the kubelet stops: 1–6 heap objects (≈ 0.3–0.45 KB) per pod sync, no goroutine")
# The fix as read (2026-12-07): PR #139850 "kubelet startPodSync: reuse the previous context to fix memory leak
# regression" ("Fixes #139823") is listed in CHANGELOG/CHANGELOG-1.37.md of v1.37.2 under v1.37.0 and
# v1.37.0-alpha.3; its cherry-pick #140066 (release-1.36, merged) is in v1.36.3's pod_workers.go, not in v1.36.2's.
KB8_FIX = Fix("merged", "CHANGELOG/CHANGELOG-1.37.md of v1.37.2 (v1.37.0, Bug or Regression: #139850); the source of v1.36.2, "
                        "v1.36.3, v1.37.2 (pod_workers.go startPodSync); upstream threads kubernetes/kubernetes#139823, "
                        "#139850, #140066 (read 2026-12-07)",
              pr="kubernetes/kubernetes#139850", released="1.37.0",
              cherry_picks=(CherryPick("release-1.36", "kubernetes/kubernetes#140066", "merged", released="1.36.3"),))
# e94e67337 (2026-02-19, the 1.36 cycle) made a new context per sync; #140066: "all users of 1.36, 1.36.1,
# 1.36.2 are actively experiencing this memory leak"; v1.35.4 reuses one context per worker.
KB8_SINCE = "1.36.0"
_KB8_LEAK_WHY = (f"one context per sync, each keeping {KB8_LEAK_MIN_OBJECTS}–{KB8_LEAK_MAX_OBJECTS} objects (the cancelCtx; "
                 "its done channel; its children map) — the issue's profile: "
                 f"{KB8_ISSUE_OBJECTS_PER_SYNC:g}; ±{KB8_MARGIN:g}: two of the fit's largest standard error")
_KB8_NONE_WHY = f"nothing kept per sync; ±{KB8_MARGIN:g}: two of the fit's largest standard error"

register(
    [
        Expectation("KB-8", "heap_objects_per_pod_sync", 0.0, KB8_FIXED_SOURCE, unit="objects/sync",
                    band=Band(-KB8_MARGIN, KB8_MARGIN), why=_KB8_NONE_WHY, minors=(34, 35)),
        Expectation("KB-8", "heap_objects_per_pod_sync", KB8_ISSUE_OBJECTS_PER_SYNC, KB8_SOURCE, unit="objects/sync",
                    band=Band(KB8_LEAK_MIN_OBJECTS - KB8_MARGIN, KB8_LEAK_MAX_OBJECTS + KB8_MARGIN), why=_KB8_LEAK_WHY,
                    minors=(36, None),
                    known_bug=KnownBug(KB8_BUG, correct=0.0, correct_band=Band(-KB8_MARGIN, KB8_MARGIN),
                                       mechanism=KB8_MECHANISM, since=KB8_SINCE, fix=KB8_FIX)),
        within("KB-8", "heap_objects_fit_stderr", KB8_FIT_STDERR_MAX, 0, KB8_FIT_STDERR_MAX,
               f"the fit's own resolution: at most {KB8_FIT_STDERR_MAX:g}, so that a slope {KB8_MARGIN:g} inside a band "
               "is two standard errors from its edge (too few syncs, or a kubelet whose live heap wanders, fail here)",
               "CASES.md KB-8 (the least-squares fit over the window's samples: e2e.measure.known_bugs.fit_line)",
               unit="objects/sync"),
        Expectation("KB-8", "goroutines_per_pod_sync", 0.0,
                    f"{KB8_SOURCE}; {KB8_FIXED_SOURCE}; Go context.go propagateCancel (a goroutine only for a parent "
                    "that is neither a *cancelCtx nor an afterFuncer)", unit="goroutines/sync",
                    band=Band(-KB8_GOROUTINES_PER_SYNC_MAX, KB8_GOROUTINES_PER_SYNC_MAX),
                    why=f"no goroutine per sync on any patch (a leaked context is a map entry); ±{KB8_GOROUTINES_PER_SYNC_MAX:g}: "
                        "one goroutine in 100 syncs would be a leak of its own"),
        at_least("KB-8", "pod_syncs_per_s", KB8_SYNCS_PER_S / 2,
                 "CASES.md KB-8; [UP] pkg/kubelet/prober/results/results_manager.go Set (an update on a change only); "
                 "pkg/kubelet/kubelet.go syncLoopIteration → handleProbeSync → HandlePodSyncs",
                 f"{KB8_PODS} pods whose readiness result changes every {KB8_TOGGLE_S} s (failureThreshold and "
                 f"successThreshold 1): {KB8_SYNCS_PER_S:g} syncs/s; at least half — a toggle the probe's "
                 f"{KB8_PROBE_PERIOD_S} s ticker sees twice or never (the shell's loop takes {KB8_TOGGLE_S} s plus its "
                 "forks) loses its change", unit="syncs/s"),
    ],
    KB8_READ,
)
