"""CL — crash loop back-off (CASES.md CL-1 … CL-8).

The kubelet's back-off for a crashing container starts at 10 s and doubles to a 300 s cap;
the first restart is immediate (``doBackOff`` in pkg/kubelet/kuberuntime/kuberuntime_manager.go:
no back-off entry on the first exit, ``flowcontrol.Backoff.Next`` sets 10 s). A restart gap is
``startedAt`` of the next run − ``finishedAt`` of the previous one, both API timestamps.
"""

from __future__ import annotations

import math

from ..judge.expectations import Band, Expectation, equal, exact, register
from .kubelet import API_TIMESTAMP_RESOLUTION_S, CONTAINER_START_S, KUBELET_SYNC_FREQUENCY_S, PLEG_RELIST_S, POD_WORKER_JITTER, SYNC_TICKER_S, UPGRADE_PATH_READ

# Read in v1.34.4, v1.35.4, v1.36.3, v1.37.2 (SINCE_MIN_BACKOFF_EXPIRATION; fb61d9e, 975f36d of issue 15).
VERIFIED_IN = UPGRADE_PATH_READ

S0_PHASES = "[S0] «Фазы, состояния…» (flowcontrol.Backoff keyed by pod+container)"
S1_CRASHLOOP = "[S1] «CrashLoopBackOff своими глазами»"
S1_POLICY = "[S1] restartPolicy table"
UP_DOBACKOFF = "[UP] pkg/kubelet/kuberuntime/kuberuntime_manager.go doBackOff"

# Documented back-off before restart i (s): immediate, then 10 s doubling to the 300 s cap (CL-1).
DOCUMENTED_GAPS_S = (0, 10, 20, 40, 80, 160, 300)
# Go's time.Duration spelling of each back-off in the waiting message (CL-2).
BACKOFF_TEXT = {10: "10s", 20: "20s", 40: "40s", 80: "1m20s", 160: "2m40s", 300: "5m0s"}

# -- how wide a gap band is, and why -----------------------------------------------------
# startedAt and finishedAt are truncated to whole seconds (kubelet.API_TIMESTAMP_RESOLUTION_S): their
# difference is off by up to 1 s either way (CASES.md "Measuring timings honestly").
# The pod worker re-syncs a pod whose sync failed (here: still in back-off) with jitter factor
# 0.5 (kubelet.POD_WORKER_JITTER: pkg/kubelet/pod_workers.go completeWork).
# Up to 1.34 (read in v1.34.4) it re-syncs after backOffPeriod = 10 s (→ [10, 15) s) whatever the
# back-off; from 1.35 (read in v1.35.4, v1.36.3, v1.37.2) after the back-off's *remaining* time:
# doBackOff returns kubecontainer.NewBackoffError(ErrCrashLoopBackOff, finishedAt + d) and
# completeWork waits kubecontainer.MinBackoffExpiration(syncErr) − now (container/sync_result.go,
# new in 1.35), capped at the kubelet's syncFrequency (default 1 m, pkg/kubelet/apis/config/v1beta1/defaults.go).
# The back-off expires at finishedAt + d (kuberuntime_manager.go doBackOff: IsInBackOffSince(key,
# finishedAt)), so the restart comes at the first re-sync at or after that.
POD_WORKER_BACKOFF_PERIOD_S = 10.0
# Where the re-sync at the back-off's expiry is documented from, and what the source shows.
SINCE_MIN_BACKOFF_EXPIRATION = ("from 1.35: MinBackoffExpiration, kuberuntime_manager.go doBackOff returns NewBackoffError; "
                                "read in v1.34.4 (absent), v1.35.4, v1.36.3, v1.37.2")


# The pod worker can be one PLEG event behind: while a sync waits for a cache newer than its
# previous sync (pkg/kubelet/pod_workers.go podWorkerLoop → podCache.GetNewerThan), the next
# relist's event only marks an update pending, and completeWork requeues it at once — it runs
# after one more relist. So when the pod's events come on consecutive relists (the pod's start,
# then runs of ~1 s: started, died, restarted, started, died), the exit that starts the first
# back-off is synced twice, ≤ one relist apart: two failing syncs (two BackOff events, "x2"),
# the second one from the first's status on. Seen on v1.35.4 (kubelet -v4: "Error syncing pod"
# at 16:14:22.54 and 23.54 for the same exit); the wait (podWorkerLoop: GetNewerThan(…,
# lastSyncTime)), the requeue (completeWork: "Requeuing pod due to pending update") and the 1 s
# relist are in v1.34.4, v1.35.4, v1.36.3, v1.37.2 alike (1.36 adds an on-demand relist after a
# sync that started something, kubelet.go SyncPod postSync → RequestPodRelist). After a back-off the
# restart comes from a re-sync and the worker is idle when the next events come: only the first
# back-off (restart_gap[1], CL-2 restartCount=1) is reached this way.
POD_WORKER_BEHIND_S = PLEG_RELIST_S


def resync_late_s(minor_key: int, d: float, behind: bool = False) -> float:
    """How late after the back-off's expiry (finishedAt + ``d``, s) the restarting sync can start.

    ``minor_key`` 34 (the model up to 1.34) or 35 (from 1.35). ``d`` = 0 (the first restart):
    only the PLEG relist. 1.34: the failing sync comes up to ``PLEG_RELIST_S`` after the exit
    (``behind``, the first back-off: up to one more relist, ``POD_WORKER_BEHIND_S``) and re-syncs
    follow every [10, 15) s + ≤ 1 s tick; with n = ⌈d / 10⌉ re-syncs at the least, the first one
    at or after the expiry is at most min(n × 16 − d, 16) s late. From 1.35: one re-sync at the
    remaining back-off × [1, 1.5), counted from the last failing sync: at most 0.5 × min(d, 60)
    late, + ≤ 1 s tick (``behind`` changes nothing).
    """
    if not d:
        return PLEG_RELIST_S
    hop = POD_WORKER_BACKOFF_PERIOD_S * (1 + POD_WORKER_JITTER) + SYNC_TICKER_S
    if minor_key <= 34:
        n = math.ceil(d / POD_WORKER_BACKOFF_PERIOD_S)
        return PLEG_RELIST_S + (POD_WORKER_BEHIND_S if behind else 0.0) + min(n * hop - d, hop)
    return POD_WORKER_JITTER * min(d, KUBELET_SYNC_FREQUENCY_S) + SYNC_TICKER_S


def resync_why(minor_key: int, d: float, behind: bool = False) -> str:
    """The terms of :func:`resync_late_s`, for a band's ``why``."""
    if not d:
        return f"+{PLEG_RELIST_S:g} s PLEG relist"
    if minor_key <= 34:
        n = math.ceil(d / POD_WORKER_BACKOFF_PERIOD_S)
        hop = POD_WORKER_BACKOFF_PERIOD_S * (1 + POD_WORKER_JITTER) + SYNC_TICKER_S
        second = (f" +{POD_WORKER_BEHIND_S:g} s a second failing sync one relist later (pod worker one event behind "
                  "before the first back-off)") if behind else ""
        return (f"+{PLEG_RELIST_S:g} s PLEG relist (the failing sync){second} +{min(n * hop - d, hop):g} s re-sync lateness "
                f"(every 10 s × [1, 1.5) + ≤ {SYNC_TICKER_S:g} s tick; {n} re-sync(s) to reach {d:g} s)")
    return (f"+{POD_WORKER_JITTER * min(d, KUBELET_SYNC_FREQUENCY_S):g} s re-sync at the remaining back-off × [1, 1.5) "
            f"(remaining capped at syncFrequency {KUBELET_SYNC_FREQUENCY_S:g} s) +{SYNC_TICKER_S:g} s sync ticker")


def first_backoff(gaps: tuple[float, ...], i: int) -> bool:
    """Whether gap ``i`` of a crash-loop sequence (an immediate first restart, then back-offs) is
    the first back-off, the one a pod worker one PLEG event behind can sync twice
    (``POD_WORKER_BEHIND_S``)."""
    return i == 1 and gaps[0] == 0


def _gap(case: str, i: int, minors: tuple[int | None, int | None], minor_key: int, source: str,
         gaps: tuple[int, ...] = DOCUMENTED_GAPS_S, name: str | None = None) -> Expectation:
    d = gaps[i]
    behind = first_backoff(gaps, i)
    why = (
        f"−{API_TIMESTAMP_RESOLUTION_S:g} s timestamp truncation; +{API_TIMESTAMP_RESOLUTION_S:g} s truncation "
        f"+{CONTAINER_START_S:g} s container start {resync_why(minor_key, d, behind)}"
    )
    return Expectation(
        case=case,
        name=name or f"restart_gap[{i}]",
        documented=float(d),
        unit="s",
        band=Band(max(0.0, d - API_TIMESTAMP_RESOLUTION_S),
                  d + API_TIMESTAMP_RESOLUTION_S + CONTAINER_START_S + resync_late_s(minor_key, d, behind)),
        why=why,
        source=source,
        minors=minors,
    )


def gap_expectations(case: str, indices: range, source: str, gaps: tuple[int, ...] = DOCUMENTED_GAPS_S,
                     name: str | None = None) -> list[Expectation]:
    """The version-keyed restart_gap[i] expectations of CL-1 for ``case`` (any family whose
    containers restart with the crash-loop back-off); ``gaps`` the documented back-off before
    each restart (s), ``name`` a measurement name other than ``restart_gap[i]``."""
    out = []
    for i in indices:
        out.append(_gap(case, i, (None, 34), 34,
                        source + "; [UP] pkg/kubelet/pod_workers.go completeWork (1.34: backOffPeriod 10 s); kubelet.go syncLoop",
                        gaps, name))
        out.append(_gap(case, i, (35, None), 35,
                        source + f"; [UP] pkg/kubelet/pod_workers.go completeWork ({SINCE_MIN_BACKOFF_EXPIRATION}); kubelet.go syncLoop",
                        gaps, name))
    return out


register(gap_expectations("CL-1", range(len(DOCUMENTED_GAPS_S)), f"{S0_PHASES}; {S1_CRASHLOOP}; {UP_DOBACKOFF}"), VERIFIED_IN)

register(
    [
        equal("CL-2", "waiting_reason", "CrashLoopBackOff", f"{S1_CRASHLOOP}; {S0_PHASES}"),
        equal(
            "CL-2",
            "waiting_message",
            "back-off {delay} restarting failed container={container} pod={pod}_{namespace}({uid})",
            f"{S1_CRASHLOOP}; {UP_DOBACKOFF} (format.Pod: name_namespace(uid))",
        ),
        equal("CL-2", "phase_while_waiting", "Running", S1_CRASHLOOP),
        equal("CL-2", "last_terminated_reason", "Error", S1_CRASHLOOP),
        equal("CL-2", "last_exit_code", 1, S1_CRASHLOOP),
        exact("CL-2", "restart_count_vs_runs", 0,
              S1_CRASHLOOP, "restartCount counts restarts: runs seen − 1, exactly", unit="restarts"),
    ],
    VERIFIED_IN,
)

# How long the API shows state.waiting.reason = CrashLoopBackOff before the restart (s, receive
# times), per restartCount N of the waiting status: the back-off then is DOCUMENTED_GAPS_S[N]
# (the cap from N = 6). CASES.md CL-2 documents the reason "while waiting". The kubelet writes it
# from its reason cache (pkg/kubelet/kubelet_pods.go convertToAPIContainerStatuses:
# reasonCache.Get), which the sync that hits the back-off fills only *after* that sync's status
# was generated (pkg/kubelet/kubelet.go SyncPod: generateAPIPodStatus, then kuberuntime SyncPod,
# then reasonCache.Update), and which the restart's successful StartContainer empties
# (pkg/kubelet/reason_cache.go Update): the first status after an exit shows it terminated, the
# reason shows from the next sync on — the same in v1.34.4, v1.35.4, v1.36.3, v1.37.2. Which sync
# is next changed in 1.35 (completeWork, see resync_late_s):
# - from 1.35 it is the re-sync at the back-off's remaining time, capped at syncFrequency (60 s):
#   for a back-off up to 60 s that is the one at the expiry, which also restarts the container —
#   the reason is visible from that sync's status until the status that shows the new run; for a
#   longer back-off the first re-sync comes 60–90 s after the failing sync, before the expiry, and
#   the reason shows from then until the restart (nominally d − 60 s);
# - up to 1.34 it is the first re-sync, 10–16 s after the failing sync: for the 10 s back-off that
#   re-sync is past the expiry and restarts (visible briefly); for a longer back-off the reason
#   shows from that re-sync until the restart (nominally d − 10 s, re-syncs exactly 10 s apart).
# The first back-off (restartCount 1) can be synced twice (POD_WORKER_BEHIND_S): then the second
# failing sync, one relist after the first, shows the reason until the restart, ≈ 10 s on every
# version (seen on v1.35.4: 10.3 s and 9.0 s; v1.34.4: 0.3 s, synced once).
# [S1]'s transcript shows the reason ≈ 2 s before a restart.
CL2_VISIBLE_HIGH_S = CONTAINER_START_S + PLEG_RELIST_S + API_TIMESTAMP_RESOLUTION_S
# restartCount values named one by one; from CL2_CAPPED_FROM on the back-off is the cap (the
# measurement name without [restartCount=…] documents those)
CL2_CAPPED_FROM = len(DOCUMENTED_GAPS_S) - 1


def crashloopbackoff_visible(minor_key: int, d: float, behind: bool = False) -> tuple[float, Band, str]:
    """Documented value (s), band and why of ``crashloopbackoff_visible_s`` before a restart
    after a back-off of ``d`` s; ``minor_key`` 34 (the model up to 1.34) or 35 (from 1.35);
    ``behind``: the first back-off, which the pod worker may sync twice (``POD_WORKER_BEHIND_S``).

    The reason shows from the first re-sync after the failing sync (which comes ≤ ``PLEG_RELIST_S``
    after the exit). Up to 1.34 that re-sync waits backOffPeriod × [1, 1.5) + tick (10–16 s) and
    so does every next one; from 1.35 it waits min(remaining back-off, syncFrequency) × [1, 1.5) +
    tick. When it can come at or after the expiry it is the restart: visible ≥ 0. Otherwise the
    reason stays until the restart, ≥ d − (the latest first re-sync) s; the restart is at most one
    hop past the expiry (up to 1.34 fewer than ⌈(d − 10) / 10⌉ hops stay short of it; from 1.35
    the last hop overshoots by ≤ 0.5 × what remained). ``behind``: the second failing sync, ≤ two
    relists after the exit, may show the reason, which then stays until the restart — at most the
    first re-sync at or after the expiry counted from it.
    """
    documented, band, why = _visible_normally(minor_key, d)
    if not behind:
        return documented, band, why
    # from the second failing sync (after the exit, so ≤ d before the expiry) to the restart
    if minor_key <= 34:
        hop_max = POD_WORKER_BACKOFF_PERIOD_S * (1 + POD_WORKER_JITTER) + SYNC_TICKER_S
        longest = min(math.ceil(d / POD_WORKER_BACKOFF_PERIOD_S) * hop_max, d + hop_max)
    else:
        longest = d + POD_WORKER_JITTER * min(d, KUBELET_SYNC_FREQUENCY_S) + SYNC_TICKER_S
    high = max(band.high, longest + CL2_VISIBLE_HIGH_S)
    return documented, Band(band.low, high), (
        f"{why}; or, the first back-off synced twice (pod worker one PLEG event behind), from the second failing sync, "
        f"≤ {POD_WORKER_BEHIND_S:g} s after the first, to the restart: ≤ {longest:g} s +{CL2_VISIBLE_HIGH_S:g} s")


def _visible_normally(minor_key: int, d: float) -> tuple[float, Band, str]:
    """:func:`crashloopbackoff_visible` when the exit is synced once."""
    brief = (f"+{CONTAINER_START_S:g} s container start +{PLEG_RELIST_S:g} s PLEG relist sees it running "
             f"+{API_TIMESTAMP_RESOLUTION_S:g} s status write → API → watch")
    hop_min = POD_WORKER_BACKOFF_PERIOD_S if minor_key <= 34 else KUBELET_SYNC_FREQUENCY_S
    hop_max = hop_min * (1 + POD_WORKER_JITTER) + SYNC_TICKER_S
    if d <= hop_min:
        when = (f"the first re-sync, ≥ {hop_min:g} s after the exit: past the {d:g} s back-off" if minor_key <= 34 else
                f"the re-sync at the back-off's expiry, {d:g} s ≤ syncFrequency {hop_min:g} s")
        return 0.0, Band(0.0, CL2_VISIBLE_HIGH_S), f"shown only from the restarting sync's status ({when}): {brief}"
    remaining = d - hop_min  # from the earliest first re-sync to the expiry
    if minor_key <= 34:
        longest = min(math.ceil(remaining / hop_min) * hop_max, remaining + hop_max)
        last_hop = f"< one hop ({hop_max:g} s) past the expiry"
    else:
        longest = remaining + POD_WORKER_JITTER * min(remaining, hop_min) + SYNC_TICKER_S
        last_hop = (f"≤ {POD_WORKER_JITTER * min(remaining, hop_min) + SYNC_TICKER_S:g} s past the expiry "
                    "(the last hop: what remained × [1, 1.5) + tick)")
    first_latest = PLEG_RELIST_S + hop_max
    # up to 1.34 a re-sync in back-off is followed by at least one more 10 s hop
    shortest = max(hop_min, d - first_latest) if minor_key <= 34 else d - first_latest
    low = shortest - API_TIMESTAMP_RESOLUTION_S if d > first_latest else 0.0
    period = "backOffPeriod" if minor_key <= 34 else "syncFrequency"
    why = (f"from the first re-sync ({period} {hop_min:g} s × [1, 1.5) + tick after the failing sync) to the restart, "
           f"nominally {remaining:g} s: "
           + ("≥ 0 (that re-sync may already be past the expiry); " if low == 0 else
              f"≥ {shortest:g} s (that re-sync as late as PLEG relist + {hop_max:g} s"
              + (", then one more hop" if minor_key <= 34 else "") + f") −{API_TIMESTAMP_RESOLUTION_S:g} s its status write; ")
           + f"≤ {longest:g} s (that re-sync {hop_min:g} s after the exit, the restart {last_hop}) {brief}")
    return remaining, Band(low, longest + CL2_VISIBLE_HIGH_S), why


def _visible(minors: tuple[int | None, int | None], minor_key: int, restart_count: int | None) -> Expectation:
    i = restart_count if restart_count is not None else CL2_CAPPED_FROM
    d = DOCUMENTED_GAPS_S[i]
    documented, band, why = crashloopbackoff_visible(minor_key, d, first_backoff(DOCUMENTED_GAPS_S, i))
    name = "crashloopbackoff_visible_s" + (f"[restartCount={restart_count}]" if restart_count is not None else "")
    changed = ("pkg/kubelet/pod_workers.go completeWork (up to 1.34: re-sync every backOffPeriod 10 s; read in v1.34.4)"
               if minor_key <= 34 else f"pkg/kubelet/pod_workers.go completeWork ({SINCE_MIN_BACKOFF_EXPIRATION})")
    return Expectation(
        case="CL-2", name=name, documented=documented, unit="s", minors=minors, band=band,
        why=why if restart_count is not None else f"restartCount ≥ {CL2_CAPPED_FROM} (back-off at the cap): {why}",
        source=f"{S1_CRASHLOOP} (transcript: CrashLoopBackOff ≈ 2 s before each restart); [UP] {changed}; "
               "pkg/kubelet/kubelet.go SyncPod; kubelet_pods.go convertToAPIContainerStatuses; reason_cache.go Update",
    )


register(
    [
        _visible(minors, minor_key, n)
        for minors, minor_key in (((None, 34), 34), ((35, None), 35))
        for n in (*range(1, CL2_CAPPED_FROM), None)
    ],
    VERIFIED_IN,
)

register(
    [
        equal("CL-3", "last_terminated_reason", "Completed", S1_POLICY),
        equal("CL-3", "last_exit_code", 0, S1_POLICY),
        equal("CL-3", "waiting_reason", "CrashLoopBackOff", S1_POLICY),
        *gap_expectations("CL-3", range(2), f"{S1_POLICY} (same back-off as CL-1)"),
    ],
    VERIFIED_IN,
)

register(
    [
        equal("CL-4", "phase[OnFailure,exit0]", "Succeeded", S1_POLICY),
        exact("CL-4", "restart_count[OnFailure,exit0]", 0, S1_POLICY, "no restart at all", unit="restarts"),
        equal("CL-4", "waiting_reason[OnFailure,exit1]", "CrashLoopBackOff", S1_POLICY),
        Expectation(
            case="CL-4",
            name="restart_count[OnFailure,exit1]",
            documented=1,
            unit="restarts",
            band=Band.at_least(1),
            why="restarted at least once (the first restart is immediate)",
            source=S1_POLICY,
        ),
        equal("CL-4", "phase[Never,exit1]", "Failed", S1_POLICY),
        exact("CL-4", "restart_count[Never,exit1]", 0, S1_POLICY, "no restart at all", unit="restarts"),
    ],
    VERIFIED_IN,
)

CL5_SOURCE = ("[S1] «kubectl logs, exec, port-forward» (--previous) and «CrashLoopBackOff своими глазами» "
              "(kubectl logs crash --previous); [S2] «События, describe и логи упавшего контейнера» "
              "(Error from server (BadRequest): previous terminated container … not found)")
CL8_SOURCE = "[S0] «Init-контейнеры и нативные sidecar»; [S1] «Init-контейнеры» (Init:Error, Init:CrashLoopBackOff)"
register(
    [
        equal("CL-5", "previous_log_status_before_restart", 400, CL5_SOURCE),
        equal(
            "CL-5",
            "previous_log_message_before_restart",
            r'previous terminated container "{container}" in pod "{pod}" not found',
            CL5_SOURCE,
            pattern=True,
        ),
        equal("CL-5", "previous_log_after_restart", "attempt {attempt}", CL5_SOURCE),
    ],
    VERIFIED_IN,
)

register(
    [
        equal(
            "CL-8",
            "status_sequence[Always]",
            r"(.* → )?Init:Error → (.* → )?Init:CrashLoopBackOff( → .*)?",
            f"{CL8_SOURCE}; {S0_PHASES}",
            pattern=True,
        ),
        equal("CL-8", "main_started[Always]", False, CL8_SOURCE),
        equal("CL-8", "phase[Never]", "Failed", CL8_SOURCE),
        equal("CL-8", "status[Never]", "Init:Error", CL8_SOURCE),
        equal("CL-8", "main_started[Never]", False, CL8_SOURCE),
    ],
    VERIFIED_IN,
)


# -- CL-6, CL-7: a kubelet with its own back-off cap (cluster profile crashloop-cap-20s) -----
# profiles/crashloop-cap-20s.yaml sets crashLoopBackOff.maxContainerRestartPeriod to this (s);
# the scenario checks the running kubelet's configz says so before judging anything.
CL6_MAX_RESTART_PERIOD_S = 20
# The initial back-off, 10 s (pkg/kubelet/kubelet.go initialCrashLoopBackOff), unless the cap
# is lower (newCrashLoopBackOff: then the initial delay is the cap).
INITIAL_BACKOFF_S = 10


def capped_gaps(cap_s: int, count: int) -> tuple[int, ...]:
    """Documented back-off before each of ``count`` restarts with the kubelet's cap at
    ``cap_s``: immediate, then the initial delay (``min(10, cap)``) doubling up to the cap
    (pkg/kubelet/kubelet.go newCrashLoopBackOff; client-go flowcontrol Backoff.Next)."""
    initial = min(INITIAL_BACKOFF_S, cap_s)
    return (0, *(min(initial * 2**i, cap_s) for i in range(count - 1)))


CL6_GAPS_S = capped_gaps(CL6_MAX_RESTART_PERIOD_S, 5)  # (0, 10, 20, 20, 20)
UP_CAP = ("[UP] pkg/kubelet/kubelet.go newCrashLoopBackOff (KubeletCrashLoopBackOffMax: beta, on from 1.35; "
          "alpha before); client-go util/flowcontrol/backoff.go Backoff.Next (min(2 × delay, max))")
register(gap_expectations("CL-6", range(len(CL6_GAPS_S)), f"{S0_PHASES}; {S1_CRASHLOOP}; {UP_CAP}", CL6_GAPS_S), VERIFIED_IN)

# CL-7: when is the back-off forgotten? CASES.md (after [S0] HasExpiredFunc and client-go's
# default) says after 2 × cap without a restart (40 s at a 20 s cap). Since 1.32 the kubelet
# overrides that: its crash-loop Backoff's HasExpiredFunc is a flat 600 s, whatever the cap
# (pkg/kubelet/kubelet.go, KEP-4603, kubernetes#128356 "Maintain current 10 minute recovery
# threshold ... regardless of changes to the maximum duration"). The clock runs from the last
# restart (Backoff.Next's lastUpdate) to the exit (doBackOff passes finishedAt).
BACKOFF_RESET_S = 600
# A run longer than 2 × cap (by 5 s: more than the 1 s timestamp truncation + 1 s container
# start between lastUpdate and startedAt) but far below the reset threshold.
CL7_RUN_OVER_2X_CAP_S = 2 * CL6_MAX_RESTART_PERIOD_S + 5
# A run longer than the reset threshold (same 5 s margin).
CL7_RUN_OVER_RESET_S = BACKOFF_RESET_S + 5
UP_RESET = ("[UP] pkg/kubelet/kubelet.go crashLoopBackOff.HasExpiredFunc (> 600 s since the last restart; "
            "kubernetes#128356, KEP-4603, since 1.32); kuberuntime_manager.go doBackOff (IsInBackOffSince(finishedAt))")
register(
    [
        # after a run of 2 × cap + 5 s the back-off is still at the cap (not reset, unlike CASES.md's 2 × cap)
        *gap_expectations("CL-7", range(1), f"{UP_RESET}; CASES.md CL-7 (2 × cap) superseded",
                          (CL6_MAX_RESTART_PERIOD_S,), f"restart_gap_after_run[{CL7_RUN_OVER_2X_CAP_S}s]"),
        # after a run longer than the reset threshold: immediate, as a first crash
        *gap_expectations("CL-7", range(1), f"{S0_PHASES} (HasExpiredFunc); {UP_RESET}",
                          (0,), f"restart_gap_after_run[{CL7_RUN_OVER_RESET_S}s]"),
        # ... and the next one starts over at the initial delay
        *gap_expectations("CL-7", range(1), f"{UP_RESET}; client-go Backoff.Next (initEntryUnsafe)",
                          (min(INITIAL_BACKOFF_S, CL6_MAX_RESTART_PERIOD_S),), "restart_gap_after_reset"),
    ],
    VERIFIED_IN,
)
