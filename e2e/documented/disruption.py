"""DR — voluntary disruption: the Eviction API and PodDisruptionBudgets, ``kubectl drain``,
rolling-update arithmetic, the progress deadline, Job failure policy and back-off
(CASES-faults.md §1.3, §1.4, §2.7, §4 DR-1 … DR-6).

What protects a workload ([S2] L537–551):

- A PodDisruptionBudget limits only the eviction API (``pods/eviction``): the API server's
  ``EvictionREST.Create`` checks it and decrements ``disruptionsAllowed``; a plain DELETE,
  a rolling update and a lost node bypass it (DR-1).
- ``kubectl drain`` cordons the node, then evicts every selected pod in its own goroutine and
  retries a 429 after ``EvictErrorRetryDelay`` = 5 s until ``--timeout`` (DR-2).
- A rolling update keeps the sum of its ReplicaSets' ``spec.replicas`` ≤ replicas + maxSurge
  (rounded up) and the available pods ≥ replicas − maxUnavailable (rounded down); both 0 →
  unavailable 1 (DR-3).
- ``progressDeadlineSeconds`` counts from the last progress (DR-4).
- A Job's ``podFailurePolicy`` can ignore disruptions (DR-5); its back-off is 10 s × 2ⁿ (DR-6).

Times are host seconds (the test's clock, which kind nodes share) unless a name says API time:
API timestamps (``lastUpdateTime``, ``creationTimestamp``, ``finishedAt``) have 1 s resolution.
The scenario settings are constants here because the documented values follow from them.

Versions: the [UP] sources were read in v1.34.4, v1.35.4, v1.36.3 and v1.37.2, and the kubectl
ones (the cluster's own kubectl runs) in k8s.io/kubectl v0.34.4, v0.35.4, v0.36.3 and v0.37.2:
the same there, except where an entry is keyed by version — the eviction's budget message
(DR-1 ``second_cause_message``, from 1.35) and ``status.terminatingReplicas`` (DR-3, from 1.35).
"""

from __future__ import annotations

from ..judge.expectations import Band, Expectation, Race, equal, exact, register
from .kubelet import API_TIMESTAMP_RESOLUTION_S, UPGRADE_PATH_READ

# Read in v1.34.4, v1.35.4, v1.36.3, v1.37.2 and kubectl v0.34.4–v0.37.2 (module doc; 4aa0016 of issue 15).
VERIFIED_IN = UPGRADE_PATH_READ

# -- sources -----------------------------------------------------------------------------
S2_PDB = "[S2] L537–549 (PodDisruptionBudget, eviction API)"
S2_DRAIN = "[S2] L551 (kubectl drain)"
S2_ROLLOUT = "[S2] L139–142, L524–533 (rolling update, fenceposts, terminating pods)"
S2_DEADLINE = "[S2] L142, L531 (progressDeadlineSeconds)"
S2_JOB = "[S2] L572–602 (Job backoffLimit, podFailurePolicy)"
UP_EVICTION = "[UP] pkg/registry/core/pod/storage/eviction.go EvictionREST.Create, checkAndDecrement, canIgnorePDB"
UP_EVICTION_MSG = ("[UP] pkg/registry/core/pod/storage/eviction.go checkAndDecrement (the message switch: from 1.35; "
                   "read in v1.34.4 (one text), v1.35.4, v1.36.3, v1.37.2)")
UP_EVICTION_NEW = "[UP] pkg/registry/core/pod/storage/eviction.go createTooManyRequestsError (observedGeneration < generation)"
UP_CONDITION = "[UP] pkg/registry/core/pod/storage/eviction.go addConditionAndDeletePod; CASES-faults.md §1.4"
# DR-1 (c): an eviction right after its PDB's creation races the PDB controller, which upstream
# tolerates (CASES-faults.md DR-1 (c): "or success, if the controller was faster: record which").
NEW_PDB_RACE = Race("201", why=(
    "the disruption controller (pkg/controller/disruption/disruption.go trySync → updatePdbStatus) wrote "
    "status.observedGeneration before the eviction read the PDB, so checkAndDecrement found it observed and "
    f"the eviction went through (201) ({UP_EVICTION_NEW})"),
    seen="201 in 3 of the 4 runs on disk (v1.37.2: two on the foreign cluster, one on the suite's own), 429 in 1")
UP_CREATE = ("[UP] k8s.io/apiserver pkg/endpoints/handlers/create.go createHandler (code := http.StatusCreated, "
             "also for a returned Status) → response.go transformResponseObject(statusCode)")
UP_FINISHER = ("[UP] k8s.io/apiserver pkg/endpoints/handlers/finisher/finisher.go FinishRequest "
               "(a returned Status with status != Success is an error: errors.FromObject)")
UP_PDB = "[UP] pkg/controller/disruption/disruption.go getExpectedPodCount, countHealthyPods, updatePdbStatus"
UP_DRAIN = ("[UP] k8s.io/kubectl pkg/drain/drain.go Helper.evictPods; pkg/cmd/drain/drain.go (EvictErrorRetryDelay 5 s; "
            "a hard-coded 5 s in v0.34.4, the same text)")
UP_DRAIN_CMD = "[UP] k8s.io/kubectl pkg/cmd/drain/drain.go RunDrain, deleteOrEvictPodsSimple, RunCordonOrUncordon"
UP_CMDUTIL = "[UP] k8s.io/kubectl pkg/cmd/util/helpers.go CheckErr (DefaultErrorExitCode 1)"
UP_FENCEPOSTS = "[UP] pkg/controller/deployment/util/deployment_util.go ResolveFenceposts, NewRSNewReplicas, MaxSurge"
UP_ROLLING = "[UP] pkg/controller/deployment/rolling.go reconcileNewReplicaSet, reconcileOldReplicaSets"
UP_VALIDATION = "[UP] pkg/apis/apps/validation/validation.go ValidateRollingUpdateDeployment"
UP_TERMINATING = ("[UP] pkg/controller/deployment/sync.go calculateStatus (TerminatingReplicas); "
                  "feature DeploymentReplicaSetTerminatingReplicas: alpha/off 1.34, beta/on 1.35+")
UP_PROGRESS = ("[UP] pkg/controller/deployment/progress.go syncRolloutStatus, requeueStuckDeployment (+1 s); "
               "util/deployment_util.go DeploymentTimedOut, DeploymentProgressing")
UP_ROLLOUT_STATUS = "[UP] k8s.io/kubectl pkg/polymorphichelpers/rollout_status.go DeploymentStatusViewer.Status"
UP_JOB = "[UP] pkg/controller/job/job_controller.go syncJob, matchPodFailurePolicy (Ignore: not counted), getNewFinishedPods"
UP_JOB_DEFAULTS = "[UP] pkg/apis/batch/v1/defaults.go SetDefaults_Job"
UP_JOB_BACKOFF = ("[UP] pkg/controller/job/job_controller.go DefaultJobPodFailureBackOff 10 s, MaxJobPodFailureBackOff 10 min; "
                  "backoff_utils.go getFinishedTime, getRemainingTimeForFailuresCount")
UP_JOB_BACKOFF_IGNORED = ("[UP] pkg/controller/job/job_controller.go syncJob: newBackoffRecord(key, newSucceededPods, newFailedPods) "
                          "takes every new failed pod (only jobCtx.failed uses nonIgnoredFailedPodsCount); backoff_utils.go getRemainingTime")
UP_TAINT = "[UP] pkg/controller/tainteviction/taint_eviction.go addConditionAndDeletePod; CASES-faults.md §1.4"
UP_E2E_JOB = "[UP] test/e2e/apps/job.go (Conformance 1.32: ignore failure matching on DisruptionTarget)"

# -- scenario settings (the documented values follow from them) --------------------------
# DR-1: replicas of the guarded Deployment, and its pods' terminationGracePeriodSeconds (an
# eviction deletes with the pod's own grace).
DR1_REPLICAS = 3
DR1_GRACE_S = 5
# Exec readiness probe of the busybox workloads (DR-1, DR-3, DR-4): period 1 s, 1 failure.
READINESS_PERIOD_S = 1
# DR-2: kubectl drain --timeout, and kubectl's fixed retry delay after a 429.
DRAIN_TIMEOUT_S = 30
DRAIN_RETRY_S = 5
DR2_REPLICAS = 2
# DR-3 variants: (replicas, maxSurge, maxUnavailable) as written in the Deployment.
DR3_VARIANTS = {
    "surge-25-unavailable-0": (10, "25%", 0),
    "surge-25-unavailable-25": (4, "25%", "25%"),
    "one-replica-unavailable-25": (1, 0, "25%"),
    "traffic": (2, 1, 0),
}
# DR-3 (e): old pods ignore SIGTERM with this grace: they stay Terminating for the whole rollout.
DR3_TERMINATING_GRACE_S = 60
DR3_TERMINATING_REPLICAS = 2
# DR-3 traffic: the lifecycle-app keeps serving (not ready) this long after SIGTERM, then
# finishes in-flight requests: longer than endpoint removal (EndpointSlice ≤ 1.5 s, PS-3) +
# kube-proxy's iptables sync (minSyncPeriod 1 s).
DR3_DRAIN_DELAY_S = 5
# DR-4: progressDeadlineSeconds, replicas, and (b) the time between new pods becoming Ready.
PROGRESS_DEADLINE_S = 30
DR4_REPLICAS = 3
DR4_STEP_S = 20
# DR-5/DR-6: Job settings.
DR5_GRACE_S = 5
# DR-5: the disrupted Job pod stays this long after SIGTERM (< grace), long enough for the Job
# controller to report it in status.terminating.
DR5_TERM_DELAY_S = 3
DR6_BACKOFF_LIMIT = 3
JOB_BACKOFF_S = 10

# -- how wide a band is, and why ----------------------------------------------------------
# kubectl drain: one eviction POST (429) and one pod GET between two retries, on loopback to a
# busy 2-core API server: budget 1.5 s (CASES-faults.md DR-2).
DRAIN_CALLS_S = 1.5
# The parallel evictions start in goroutines right after the pod list: budget 1 s apart.
DRAIN_PARALLEL_S = 1.0
# The deployment controller requeues a stuck Deployment at lastUpdateTime + deadline + 1 s
# (requeueStuckDeployment); the condition is written within the sync and seen by the watch:
# budget 1 s for the sync, the status write and the watch on the loaded host.
REQUEUE_S = 1.0
SYNC_AND_WATCH_S = 1.0
# Job back-off: the controller's requeue is exact; +1 s creationTimestamp truncation margin the
# other way, +1 s for the sync after the requeue (queue, pod create), +1 s for the watch of the
# failed pod (the back-off runs from finishedAt, the sync from the kubelet's status update).
JOB_SYNC_S = 1.0
JOB_STATUS_S = 1.0


BUDGET_MESSAGE = "Cannot evict pod as it would violate the pod's disruption budget."
TWO_PDBS_MESSAGE = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
NEEDS = "The disruption budget {pdb} needs {desired} healthy pods and has {current} currently"

DR1 = [
    # (a) minAvailable 3 over 3 ready pods: disruptionsAllowed 0
    exact("DR-1", "pdb_expected_pods[min-available]", 3, UP_PDB,
           why="integer minAvailable: expectedPods = the selected pods themselves (getExpectedPodCount)"),
    exact("DR-1", "pdb_desired_healthy[min-available]", 3, UP_PDB, why="desiredHealthy = minAvailable"),
    exact("DR-1", "pdb_current_healthy[min-available]", 3, UP_PDB, why="three Ready pods"),
    exact("DR-1", "pdb_disruptions_allowed[min-available]", 0, UP_PDB, why="currentHealthy − desiredHealthy"),
    exact("DR-1", "eviction_status[min-available]", 429, f"{S2_PDB}; {UP_EVICTION}", why="HTTP status: TooManyRequests"),
    equal("DR-1", "eviction_message[min-available]", BUDGET_MESSAGE, f"{S2_PDB}; {UP_EVICTION}"),
    equal("DR-1", "cause_type[min-available]", "DisruptionBudget", f"{UP_EVICTION}; test/e2e/apps/disruption.go asserts it"),
    equal("DR-1", "cause_message[min-available]", NEEDS.replace("{desired}", "3").replace("{current}", "3"),
          f"{UP_EVICTION_MSG}: currentHealthy ≤ desiredHealthy and the condition is not SyncFailed — the same text as 1.34's only one"),
    exact("DR-1", "retry_after_s[min-available]", 0, UP_EVICTION,
           unit="s", why="NewTooManyRequests(…, 0): no Retry-After on a budget refusal (details.retryAfterSeconds absent)"),
    # (b) maxUnavailable 1: the first eviction passes, an immediate second one does not
    exact("DR-1", "pdb_expected_pods[max-unavailable]", 3, UP_PDB,
           why="maxUnavailable: expectedPods = the owner's scale (the ReplicaSet's spec.replicas)"),
    exact("DR-1", "pdb_desired_healthy[max-unavailable]", 2, UP_PDB, why="expectedPods − maxUnavailable = 3 − 1"),
    exact("DR-1", "pdb_disruptions_allowed[max-unavailable]", 1, UP_PDB, why="currentHealthy 3 − desiredHealthy 2"),
    exact("DR-1", "eviction_status[max-unavailable]", 201, f"{UP_EVICTION}; {UP_CREATE}",
           why="HTTP status of a successful eviction (a create): 201 Created"),
    equal("DR-1", "disruption_target_status[max-unavailable]", "True", UP_CONDITION),
    equal("DR-1", "disruption_target_reason[max-unavailable]", "EvictionByEvictionAPI", UP_CONDITION),
    equal("DR-1", "disruption_target_message[max-unavailable]", "Eviction API: evicting", UP_CONDITION),
    exact("DR-1", "deletion_grace_period_s[max-unavailable]", DR1_GRACE_S, f"{S2_PDB}; {UP_EVICTION}",
           unit="s", why="the eviction deletes with the pod's own terminationGracePeriodSeconds (no override)"),
    exact("DR-1", "second_eviction_status[max-unavailable]", 429, f"{S2_PDB}; {UP_EVICTION}",
           why="disruptionsAllowed was decremented to 0 by the first eviction"),
    # The second refusal's cause: from 1.35 checkAndDecrement checks the condition and the counts
    # in this order; with the PDB controller not yet resynced (currentHealthy 3 > desiredHealthy 2,
    # condition InsufficientPods without a message) it is the generic text; after its resync
    # (currentHealthy 2) "needs 2 … has 2". 1.34 had only "needs … has …", with the stale count.
    Expectation("DR-1", "second_cause_message[max-unavailable]",
                r"The disruption budget {pdb} (needs 2 healthy pods and has 2 currently|does not allow evicting pods currently)",
                f"{UP_EVICTION_MSG}; CASES-faults.md §1.3 notes on C29", pattern=True, minors=(35, None),
                why="which of the two depends on whether the PDB controller resynced between the two evictions"),
    Expectation("DR-1", "second_cause_message[max-unavailable]",
                r"The disruption budget {pdb} needs 2 healthy pods and has [23] currently",
                "[UP] pkg/registry/core/pod/storage/eviction.go checkAndDecrement (v1.34.4: only this text, "
                "Sprintf of Status.DesiredHealthy and CurrentHealthy); CASES-faults.md §1.3 notes on C29", pattern=True, minors=(34, 34),
                why="3 while the PDB controller has not resynced (the eviction's own decrement), 2 after"),
    exact("DR-1", "disruptions_allowed_after_replacement_ready[max-unavailable]", 1, UP_PDB,
           why="the replacement is Ready: currentHealthy 3 − desiredHealthy 2"),
    # (c) a PDB created just before the eviction
    Expectation("DR-1", "answer[new-pdb]",
                r"429 The disruption budget {pdb} is still being processed by the server\.",
                f"{UP_EVICTION_NEW}; CASES-faults.md DR-1 (c)", pattern=True,
                why="429 while status.observedGeneration < generation", race=NEW_PDB_RACE),
    Expectation("DR-1", "retry_after_s[new-pdb]", 10, UP_EVICTION_NEW, unit="s", band=Band(10, 10),
                why="createTooManyRequestsError: NewTooManyRequests(…, 10)",
                race=Race(0, band=Band(0, 0), why=f"no Retry-After: the eviction went through. {NEW_PDB_RACE.why}",
                          seen=NEW_PDB_RACE.seen)),
    # (d) two PDBs over the same pods
    exact("DR-1", "eviction_status[two-pdbs]", 500, f"{UP_EVICTION}; {UP_FINISHER}",
           why="Create returns a Status{Failure, code 500}; the request finisher turns a non-success Status into that error"),
    exact("DR-1", "status_code[two-pdbs]", 500, f"{S2_PDB}; {UP_EVICTION}", why="Status.code of the answer"),
    equal("DR-1", "eviction_message[two-pdbs]", TWO_PDBS_MESSAGE, UP_EVICTION),
    equal("DR-1", "pod_deleted[two-pdbs]", False, UP_EVICTION),
    # (e) an unready pod
    exact("DR-1", "eviction_status[unready-if-healthy-short]", 429, UP_EVICTION,
           why="IfHealthyBudget: currentHealthy 2 < desiredHealthy 3 → the budget check, disruptionsAllowed 0"),
    equal("DR-1", "cause_message[unready-if-healthy-short]", NEEDS.replace("{desired}", "3").replace("{current}", "2"),
          UP_EVICTION_MSG),
    exact("DR-1", "eviction_status[unready-if-healthy-enough]", 201, UP_EVICTION,
           why="IfHealthyBudget: currentHealthy 2 ≥ desiredHealthy 2 > 0 → deleted without a budget decrement"),
    exact("DR-1", "pdb_disruptions_allowed[unready-if-healthy-enough]", 0, UP_PDB,
           why="minAvailable 2 with 2 healthy: the budget allows nothing, yet the unready pod goes"),
    exact("DR-1", "eviction_status[unready-always-allow]", 201, UP_EVICTION,
           why="AlwaysAllow: an unready pod is deleted at once, whatever the counts"),
    exact("DR-1", "pdb_current_healthy[unready-always-allow]", 2, UP_PDB, why="one of three pods unready"),
    # (f) a Pending pod
    equal("DR-1", "pod_phase[pending]", "Pending", UP_EVICTION),
    exact("DR-1", "pdb_disruptions_allowed[pending]", 0, UP_PDB, why="minAvailable 1 and no healthy pod"),
    exact("DR-1", "eviction_status[pending]", 201, f"{UP_EVICTION} canIgnorePDB; {UP_CREATE}",
           why="Pending, Succeeded, Failed or terminating pods are evicted with no budget check"),
    # (g) a plain DELETE
    equal("DR-1", "disruption_target_reason[delete]", "none", f"{S2_PDB}; CASES-faults.md §1.4 (a plain DELETE adds nothing)"),
    exact("DR-1", "pdb_current_healthy_min[delete]", 2, f"{S2_PDB} (the PDB still counts the loss); {UP_PDB}",
           why="the deleted pod stops counting; its replacement is not Ready yet"),
]

RETRY_LINE = ('error when evicting pods/"{pod}" -n "{namespace}" (will retry after 5s): '
              "Cannot evict pod as it would violate the pod's disruption budget.")
TIMEOUT_ERROR = r'error when evicting pods/"[^"]+" -n "{namespace}": global timeout reached: 30s'

DR2 = [
    equal("DR-2", "first_stdout_line", "node/{node} cordoned", f"{S2_DRAIN}; {UP_DRAIN_CMD}; CASES-faults.md §2.7"),
    Expectation("DR-2", "evicting_spread_s", 0.0, f"{UP_DRAIN} (one goroutine per pod)", unit="s",
                band=Band(0.0, DRAIN_PARALLEL_S), why=f"parallel: the goroutines start together; +{DRAIN_PARALLEL_S:g} s scheduling on 2 busy cores"),
    equal("DR-2", "retry_line", RETRY_LINE, f"{UP_DRAIN}; CASES-faults.md §2.7 (a StatusError prints only its message)"),
    Expectation("DR-2", "retry_interval_s", float(DRAIN_RETRY_S), f"{S2_DRAIN}; {UP_DRAIN}", unit="s",
                band=Band(DRAIN_RETRY_S, DRAIN_RETRY_S + DRAIN_CALLS_S),
                why=f"time.Sleep(5 s) between two lines, + one pod GET and one eviction POST (budget {DRAIN_CALLS_S:g} s)"),
    exact("DR-2", "evicted_lines[max-unavailable-0]", 0, UP_DRAIN, why="maxUnavailable 0: no eviction is ever allowed"),
    exact("DR-2", "evicted_lines[max-unavailable-1]", 1, f"{UP_DRAIN}; CASES-faults.md DR-2 (the single-node trap)",
           why="the first eviction passes; its replacement cannot schedule on the cordoned only node, so the second never does"),
    Expectation("DR-2", "pending_pods_line",
                rf'There are pending pods in node "{{node}}" when an error occurred: (\[{TIMEOUT_ERROR}, {TIMEOUT_ERROR}\]|{TIMEOUT_ERROR})',
                f"{UP_DRAIN_CMD} deleteOrEvictPodsSimple; {UP_DRAIN} (utilerrors aggregate: [a, b] for two errors)",
                pattern=True),
    exact("DR-2", "pending_pods[max-unavailable-0]", 2, UP_DRAIN_CMD, why="both selected pods are still on the node"),
    exact("DR-2", "pending_pods[max-unavailable-1]", 1, UP_DRAIN_CMD,
           why="the evicted pod is gone; its Pending replacement has no node, so it is not listed"),
    Expectation("DR-2", "unable_to_drain_line",
                r'error: unable to drain node "{node}" due to error: .*global timeout reached: 30s.*, continuing command\.\.\.',
                UP_DRAIN_CMD, pattern=True),
    equal("DR-2", "pending_nodes_lines", "There are pending nodes to be drained:\n {node}", UP_DRAIN_CMD),
    Expectation("DR-2", "timeout_after_s", float(DRAIN_TIMEOUT_S), f"{UP_DRAIN} (ctx.Done checked at the top of each attempt)",
                unit="s", band=Band(DRAIN_TIMEOUT_S, DRAIN_TIMEOUT_S + DRAIN_RETRY_S + DRAIN_CALLS_S),
                why="the timeout is noticed at the first attempt after 30 s: at most one retry period (5 s + the calls) late"),
    # Not in §2.7: after the summary, CheckErr prints the (nested, unwrapped) aggregate as one
    # line per error, with no "error: " prefix (MultipleErrors(``, …)).
    Expectation("DR-2", "final_error_line", TIMEOUT_ERROR, f"{UP_CMDUTIL} checkErr case utilerrors.Aggregate → MultipleErrors",
                pattern=True),
    exact("DR-2", "final_error_lines[max-unavailable-0]", 2, UP_CMDUTIL, why="one line per pod that timed out"),
    exact("DR-2", "final_error_lines[max-unavailable-1]", 1, UP_CMDUTIL, why="one line per pod that timed out"),
    exact("DR-2", "exit_code", 1, UP_CMDUTIL, why="CheckErr exits DefaultErrorExitCode 1 on the aggregate error"),
    equal("DR-2", "node_unschedulable_after_drain", True, f"{UP_DRAIN_CMD}; CASES-faults.md DR-2 (the node stays cordoned)"),
]


def _dr3(variant: str, max_sum: int, min_available: int, why_sum: str, why_available: str) -> list[Expectation]:
    src = f"{S2_ROLLOUT}; {UP_FENCEPOSTS}; {UP_ROLLING}"
    return [
        exact("DR-3", f"max_replicaset_sum[{variant}]", max_sum, src, why=why_sum),
        exact("DR-3", f"min_available[{variant}]", min_available, src, why=why_available),
        equal("DR-3", f"max_replicas_annotation[{variant}]", str(max_sum),
              f"{UP_FENCEPOSTS}; deployment.kubernetes.io/max-replicas = replicas + maxSurge"),
    ]


DR3 = [
    *_dr3("surge-25-unavailable-0", 13, 10,
          "replicas + maxSurge = 10 + ceil(2.5) = 13: the new ReplicaSet is scaled to 3 at once (NewRSNewReplicas)",
          "replicas − maxUnavailable = 10: an old pod goes only after a new one is available"),
    *_dr3("surge-25-unavailable-25", 5, 3,
          "4 + ceil(1) = 5", "4 − floor(1) = 3: one old pod is scaled down at once"),
    *_dr3("one-replica-unavailable-25", 1, 0,
          "1 + 0: maxSurge 0", "floor(0.25) = 0 and maxSurge 0 → ResolveFenceposts makes maxUnavailable 1: "
          "the old pod is scaled down before the new one is created"),
    *_dr3("traffic", 3, 2, "2 + 1", "2 − 0"),
    exact("DR-3", "failed_requests[traffic]", 0, f"{S2_ROLLOUT}; CASES-faults.md DR-3; lifecycle-app drain mode",
           why=f"maxUnavailable 0 keeps 2 ready endpoints; a stopping pod fails /readyz and serves {DR3_DRAIN_DELAY_S} s more "
               "(longer than endpoint removal + kube-proxy sync), then finishes in-flight requests"),
    exact("DR-3", "rejected_status[zero-zero]", 422, UP_VALIDATION, why="Invalid"),
    equal("DR-3", "rejected_message[zero-zero]",
          'Deployment.apps "{deployment}" is invalid: spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: '
          "may not be 0 when `maxSurge` is 0", f"{S2_ROLLOUT} (C19); {UP_VALIDATION}"),
    exact("DR-3", "max_pods[terminating]", 2 * DR3_TERMINATING_REPLICAS, f"{S2_ROLLOUT} (C23); [UP] pkg/controller/replicaset FilterActivePods",
           why="terminating pods are not counted: 2 new + 2 old still Terminating (they ignore SIGTERM, grace 60 s) > replicas + maxSurge = 3"),
    exact("DR-3", "terminating_replicas[terminating]", DR3_TERMINATING_REPLICAS, UP_TERMINATING, minors=(35, None),
           why="status.terminatingReplicas = the old pods still Terminating"),
    equal("DR-3", "terminating_replicas[terminating]", "absent", UP_TERMINATING, minors=(None, 34)),
]

DR4 = [
    Expectation("DR-4", "timed_out_after_s[never-ready]", float(PROGRESS_DEADLINE_S), f"{S2_DEADLINE}; {UP_PROGRESS}", unit="s",
                band=Band(PROGRESS_DEADLINE_S, PROGRESS_DEADLINE_S + REQUEUE_S + API_TIMESTAMP_RESOLUTION_S + SYNC_AND_WATCH_S),
                why=f"from the last lastUpdateTime: deadline + {REQUEUE_S:g} s requeue + {API_TIMESTAMP_RESOLUTION_S:g} s timestamp "
                    f"truncation + {SYNC_AND_WATCH_S:g} s sync and watch"),
    equal("DR-4", "progressing_status[never-ready]", "False", UP_PROGRESS),
    equal("DR-4", "progressing_reason[never-ready]", "ProgressDeadlineExceeded", UP_PROGRESS),
    equal("DR-4", "progressing_message[never-ready]", 'ReplicaSet "{rs}" has timed out progressing.', UP_PROGRESS),
    exact("DR-4", "old_replicaset_replicas[never-ready]", DR4_REPLICAS, f"{S2_DEADLINE} (nothing more happens)",
           why="maxUnavailable 0: no new pod is available, so no old one is scaled down"),
    equal("DR-4", "rolled_back[never-ready]", False, f"{S2_DEADLINE}: no rollback"),
    exact("DR-4", "rollout_status_exit_code[never-ready]", 1, f"{UP_ROLLOUT_STATUS}; {UP_CMDUTIL}",
           why="the status viewer returns an error; CheckErr exits 1"),
    equal("DR-4", "rollout_status_error[never-ready]", 'error: deployment "{deployment}" exceeded its progress deadline',
          UP_ROLLOUT_STATUS),
    Expectation("DR-4", "rollout_s[steady]", float(PROGRESS_DEADLINE_S), f"{S2_DEADLINE}; the scenario's own steps", unit="s",
                band=Band.at_least(PROGRESS_DEADLINE_S),
                why=f"the premise: the rollout takes longer than the deadline ({DR4_REPLICAS} steps of {DR4_STEP_S} s)"),
    equal("DR-4", "timed_out[steady]", False, f"{S2_DEADLINE}: the deadline counts from the last progress; {UP_PROGRESS}"),
    equal("DR-4", "progressing_reason[steady]", "NewReplicaSetAvailable", UP_PROGRESS),
    exact("DR-4", "rollout_status_exit_code[steady]", 0, UP_ROLLOUT_STATUS, why="done, no error"),
    equal("DR-4", "rollout_status_last_line[steady]", 'deployment "{deployment}" successfully rolled out', UP_ROLLOUT_STATUS),
]


def _dr5_ignored(variant: str, reason: str, message: str, source: str) -> list[Expectation]:
    src = f"{S2_JOB}; {UP_JOB}; {UP_E2E_JOB}"
    return [
        equal("DR-5", f"disruption_target_reason[{variant}]", reason, source),
        equal("DR-5", f"disruption_target_message[{variant}]", message, source),
        exact("DR-5", f"old_pod_exit_code[{variant}]", 143, "the scenario's container (job.yaml)",
               why="its TERM trap exits 128 + 15, as a process killed by SIGTERM would (not 0: R10)"),
        exact("DR-5", f"max_terminating[{variant}]", 1, f"{UP_JOB} (status.terminating; JobPodReplacementPolicy)",
               why="the disrupted pod while it terminates"),
        exact("DR-5", f"max_active_while_terminating[{variant}]", 0, f"{UP_JOB_DEFAULTS} (podReplacementPolicy Failed with a podFailurePolicy); {UP_E2E_JOB}",
               why="no replacement until the old pod is Failed"),
        Expectation("DR-5", f"replacement_after_old_failed_s[{variant}]", 0.0, f"{UP_JOB_DEFAULTS}; {UP_JOB}", unit="s",
                    band=Band.at_least(0.0), why="podReplacementPolicy Failed: the replacement comes after the old pod is Failed"),
        # Not in the catalogue (it says the replacement "then starts"): the ignored failure is
        # still a failure for the pod back-off — syncJob passes every new failed pod, ignored or
        # not, to newBackoffRecord — so the replacement waits DefaultJobPodFailureBackOff.
        Expectation("DR-5", f"replacement_gap_s[{variant}]", float(JOB_BACKOFF_S), UP_JOB_BACKOFF_IGNORED, unit="s",
                    band=Band(JOB_BACKOFF_S - API_TIMESTAMP_RESOLUTION_S,
                              JOB_BACKOFF_S + API_TIMESTAMP_RESOLUTION_S + JOB_SYNC_S + JOB_STATUS_S),
                    why="replacement creationTimestamp − old finishedAt (API time): the first back-off, banded as DR-6's first gap"),
        exact("DR-5", f"failed[{variant}]", 0, src, why="Ignore: the failure is not counted (status.failed stays 0)"),
        exact("DR-5", f"succeeded[{variant}]", 1, src, why="the replacement finds the hostPath marker and exits 0"),
        equal("DR-5", f"job_condition[{variant}]", "Complete", src),
    ]


def _dr5_counted(variant: str, why: str) -> list[Expectation]:
    src = f"{S2_JOB}; {UP_JOB}"
    return [
        exact("DR-5", f"failed[{variant}]", 1, src, why=why),
        equal("DR-5", f"job_condition[{variant}]", "Failed", src),
        equal("DR-5", f"job_failed_reason[{variant}]", "BackoffLimitExceeded", src),
        equal("DR-5", f"job_failed_message[{variant}]", "Job has reached the specified backoff limit", src),
    ]


DR5 = [
    *_dr5_ignored("evict", "EvictionByEvictionAPI", "Eviction API: evicting", UP_CONDITION),
    *_dr5_ignored("taint", "DeletionByTaintManager", "Taint manager: deleting due to NoExecute taint", UP_TAINT),
    *_dr5_counted("delete", "a plain DELETE adds no DisruptionTarget: the rule does not match, backoffLimit 0 is exceeded"),
    *_dr5_counted("no-policy", "no podFailurePolicy: every failed pod counts, DisruptionTarget or not"),
    equal("DR-5", "indexed_defaults", "2147483647 Failed Indexed", f"{S2_JOB} (S2:582–602); {UP_JOB_DEFAULTS}"),
]

DR6 = [
    exact("DR-6", "pods_total", DR6_BACKOFF_LIMIT + 1,
          f"{S2_JOB}; {UP_JOB}", why="backoffLimit 3: the 4th failure fails the Job"),
    *[
        Expectation("DR-6", f"backoff_gap_s[{i}]", float(JOB_BACKOFF_S * 2 ** (i - 1)), f"{S2_JOB} (S2:572); {UP_JOB_BACKOFF}",
                    unit="s",
                    band=Band(JOB_BACKOFF_S * 2 ** (i - 1) - API_TIMESTAMP_RESOLUTION_S,
                              JOB_BACKOFF_S * 2 ** (i - 1) + API_TIMESTAMP_RESOLUTION_S + JOB_SYNC_S + JOB_STATUS_S),
                    why=f"next creationTimestamp − previous finishedAt (both API time): ±{API_TIMESTAMP_RESOLUTION_S:g} s truncation, "
                        f"+{JOB_SYNC_S:g} s sync and pod create, +{JOB_STATUS_S:g} s the kubelet's status update")
        for i in (1, 2, 3)
    ],
    equal("DR-6", "job_condition", "Failed", UP_JOB),
    equal("DR-6", "job_failed_reason", "BackoffLimitExceeded", UP_JOB),
    equal("DR-6", "job_failed_message", "Job has reached the specified backoff limit", UP_JOB),
    exact("DR-6", "default_backoff_limit", 6,
          f"{S2_JOB}; {UP_JOB_DEFAULTS}", why="6 when neither backoffLimit nor backoffLimitPerIndex is set"),
]

register([*DR1, *DR2, *DR3, *DR4, *DR5, *DR6], VERIFIED_IN)
