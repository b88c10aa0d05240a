"""JB — Job (CASES-workloads.md §1.6, §2 "Job controller", "Job/CronJob defaults", §4 JB-1 … JB-8).

The Job controller (``pkg/controller/job/job_controller.go`` ``syncJob``) decides a Job's end in
one sync and writes it in two steps: first the interim condition — ``FailureTarget`` (reasons
``PodFailurePolicy``, ``BackoffLimitExceeded``, ``DeadlineExceeded``, ``FailedIndexes``,
``MaxFailedIndexesExceeded``) or ``SuccessCriteriaMet`` — with its pods deleted in the same sync
(``deleteActivePods``), then the terminal ``Failed``/``Complete`` with the same reason and message
once no pod is terminating any more (``enactJobFinished``: ``*jobCtx.terminating > 0`` delays it).
A FailJob rule's message is ``pod_failure_policy.go`` ``matchPodFailurePolicy``'s "Container <c> for
pod <ns>/<p> failed with exit code N matching FailJob rule at index i" (JB-1). The deadline is a
requeue at startTime + activeDeadlineSeconds (``queue.AddAfter``, JB-2); a finished Job with
``ttlSecondsAfterFinished`` is deleted by ``pkg/controller/ttlafterfinished`` with foreground
propagation at finish + TTL (``processJob``).

Versions: read in v1.34.4, v1.35.4, v1.36.3 and v1.37.2: ``job_controller.go`` (``syncJob``,
``newFailureCondition``, ``enactJobFinished``, ``pastBackoffLimitOnFailure``, ``isPodFailed``),
``pod_failure_policy.go`` (identical in 1.34.4 and 1.35.4; 1.36.3 and 1.37.2 differ by the
``JobBackoffLimitPerIndex`` gate checks removed — GA — and ``slices.Contains``: the same texts),
``success_policy.go`` (identical 1.34.4–1.36.3; 1.37.2 drops the ``JobSuccessPolicy`` gate, GA),
``backoff_utils.go`` (identical 1.34.4–1.36.3; 1.37.2 reworked, the same constants),
``ttlafterfinished_controller.go`` ``processJob`` (foreground in all four). The condition texts
are the same string literals in all four.
"""

from __future__ import annotations

from ..judge.expectations import Band, Expectation, KnownBug, equal, exact, register
from .disruption import JOB_STATUS_S, JOB_SYNC_S, S2_JOB
from .kubelet import API_TIMESTAMP_RESOLUTION_S, UPGRADE_PATH_READ

VERIFIED_IN = UPGRADE_PATH_READ
TRUNC = API_TIMESTAMP_RESOLUTION_S

UP_JOB_END = ("[UP] pkg/controller/job/job_controller.go syncJob (FailureTarget/SuccessCriteriaMet first, deleteActivePods), "
              "trackJobStatusAndRemoveFinalizers, enactJobFinished (terminal condition once terminating == 0) (v1.34.4–v1.37.2)")
UP_PFP = ("[UP] pkg/controller/job/pod_failure_policy.go matchPodFailurePolicy (the FailJob message); "
          "job_controller.go syncJob (JobReasonPodFailurePolicy) (v1.34.4–v1.37.2)")
UP_DEADLINE = ("[UP] pkg/controller/job/job_controller.go syncJob (queue.AddAfter(key, activeDeadlineSeconds − since startTime)), "
               "pastActiveDeadline, newFailureCondition(DeadlineExceeded) (v1.34.4–v1.37.2)")
UP_TTL = ("[UP] pkg/controller/ttlafterfinished/ttlafterfinished_controller.go enqueueJob/processJob "
          "(AddAfter the remaining TTL; Delete with PropagationPolicy Foreground) (v1.34.4–v1.37.2)")
UP_GC = "[UP] pkg/controller/garbagecollector/garbagecollector.go processDeletingDependentsItem (foreground: dependents first)"

# -- scenario settings (the documented values follow from them) ------------------------------
# JB-1: index 1 exits 42 after JB1_FAIL_AFTER_S; the others wait and, on SIGTERM, stay
# JB1_TERM_DELAY_S then exit 143 (grace JB1_GRACE_S > that delay).
JB1_FAIL_AFTER_S = 5
JB1_TERM_DELAY_S = 3
JB1_GRACE_S = 10
JB1_PARALLELISM = 2
# JB-2 (a): deadline; each pod fails after JB2_FAIL_AFTER_S, so the second pod (created 10 s after the
# first one's finishedAt) is running at the deadline: created at 15 s + the first pod's start latency L1
# (before 20 s while L1 < ~4 s), it runs until ≥ 20 s + its own start latency. With 8 s (first tried)
# the second pod came at the deadline itself on v1.34.4 (L1 = 2 s on the loaded host): none was created.
# (b): a Job done after 2 s, TTL 10 s.
JB2_DEADLINE_S = 20
JB2_FAIL_AFTER_S = 5
JB2_TTL_S = 10
# The kubelet's SIGTERM to a deleted pod's container: the pod worker's kill after the watch of the
# deletion (budget 1 s on the loaded host).
KILL_PATH_S = 1.0
JOB_BACKOFF_S = 10
# A busybox pod's start on the single node: sandbox, container create and start (budget 2 s on the
# loaded host).
WAIT_POD_START_S = 2.0

# -- JB-1 ------------------------------------------------------------------------------------
FAILJOB_MESSAGE = "Container app for pod {namespace}/{pod} failed with exit code 42 matching FailJob rule at index 0"
JB1 = [
    equal("JB-1", "failure_target_reason", "PodFailurePolicy", f"{S2_JOB} (S2:585–590); {UP_PFP}"),
    equal("JB-1", "failure_target_message", FAILJOB_MESSAGE, f"{S2_JOB} (S2:585–590); {UP_PFP}"),
    Expectation("JB-1", "failure_target_after_exit_s", 0.0, f"{UP_PFP}; {UP_JOB_END}", unit="s",
                band=Band(-TRUNC, TRUNC + JOB_STATUS_S + JOB_SYNC_S),
                why=f"FailureTarget lastTransitionTime − the pod's finishedAt (API times): ±{TRUNC:g} s truncation, "
                    f"+{JOB_STATUS_S:g} s the kubelet's status update, +{JOB_SYNC_S:g} s the Job sync"),
    Expectation("JB-1", "other_pod_deleted_after_target_s", 0.0, UP_JOB_END, unit="s",
                band=Band(-TRUNC, TRUNC),
                why="the other pod's deletion request (deletionTimestamp − deletionGracePeriodSeconds) − FailureTarget "
                    "lastTransitionTime: the same sync (deleteActivePods, "
                    "then the status write), ±1 s truncation"),
    Expectation("JB-1", "failed_after_failure_target_s", float(JB1_TERM_DELAY_S), UP_JOB_END, unit="s",
                band=Band(JB1_TERM_DELAY_S - TRUNC, JB1_TERM_DELAY_S + TRUNC + KILL_PATH_S + JOB_STATUS_S + JOB_SYNC_S),
                why=f"Failed − FailureTarget (API times): the other pod's TERM trap ({JB1_TERM_DELAY_S} s); ±{TRUNC:g} s truncation, "
                    f"+{KILL_PATH_S:g} s delete → SIGTERM, +{JOB_STATUS_S:g} s status update, +{JOB_SYNC_S:g} s sync"),
    Expectation("JB-1", "failed_after_last_pod_finished_s", 0.0, UP_JOB_END, unit="s",
                band=Band(-TRUNC, TRUNC + JOB_STATUS_S + JOB_SYNC_S),
                why=f"Failed lastTransitionTime − the last pod's finishedAt: the terminal condition waits for terminating == 0; "
                    f"±{TRUNC:g} s truncation, +{JOB_STATUS_S:g} s status update, +{JOB_SYNC_S:g} s sync "
                    f"(a Failed before the pods are gone reads ≈ −{JB1_TERM_DELAY_S} s)"),
    equal("JB-1", "failed_reason", "PodFailurePolicy", UP_JOB_END),
    equal("JB-1", "failed_message", FAILJOB_MESSAGE, UP_JOB_END),
    equal("JB-1", "complete_seen", False, UP_JOB_END),
    exact("JB-1", "pods_total", JB1_PARALLELISM, f"{UP_PFP}; {UP_JOB_END}",
          why="parallelism 2 start indexes 0 and 1; FailJob ends the Job before any other pod (no replacement for index 1)"),
    exact("JB-1", "other_pod_exit_code", 143, "the scenario's container (job-failjob.yaml: the TERM trap exits 143)",
          why="the trap's exit status"),
]

# -- JB-2 ------------------------------------------------------------------------------------
JB2 = [
    Expectation("JB-2", "failure_target_after_start_s", float(JB2_DEADLINE_S), f"{S2_JOB} (S2:572, S2:584); {UP_DEADLINE}",
                unit="s", band=Band(JB2_DEADLINE_S - TRUNC, JB2_DEADLINE_S + TRUNC + JOB_SYNC_S + JOB_STATUS_S),
                why="FailureTarget lastTransitionTime − startTime (API times): the requeue is exact; ±1 s truncation, "
                    "+1 s queue wake-up and sync, +1 s status write"),
    equal("JB-2", "failure_target_reason", "DeadlineExceeded", f"{S2_JOB} (S2:572); {UP_DEADLINE}"),
    equal("JB-2", "failure_target_message", "Job was active longer than specified deadline", UP_DEADLINE),
    equal("JB-2", "failed_reason", "DeadlineExceeded", f"{UP_DEADLINE}; {UP_JOB_END}"),
    equal("JB-2", "running_pod_deleted", True, UP_JOB_END),
    exact("JB-2", "pods_total", 2, f"{UP_DEADLINE}; [UP] job_controller.go DefaultJobPodFailureBackOff 10 s",
          why=f"pod 1 fails {JB2_FAIL_AFTER_S} s after its start, pod 2 comes 10 s later and is still running at {JB2_DEADLINE_S} s"),
    Expectation("JB-2", "ttl_delete_after_completion_s", float(JB2_TTL_S), f"{S2_JOB} (S2:602); {UP_TTL}", unit="s",
                band=Band(JB2_TTL_S - TRUNC, JB2_TTL_S + TRUNC + JOB_SYNC_S),
                why="the Job's deletionTimestamp − completionTime (API times): the TTL controller's AddAfter is exact; "
                    "±1 s truncation, +1 s queue wake-up and the DELETE"),
    equal("JB-2", "ttl_propagation", "foregroundDeletion", UP_TTL,
          why="the Job's finalizer while it is being deleted: Foreground propagation"),
    equal("JB-2", "pods_gone_before_job", True, f"{UP_TTL}; {UP_GC}",
          why="the pod's DELETED resourceVersion below the Job's: the garbage collector removes the foregroundDeletion "
              "finalizer only once the blocking dependents are gone (k8s.io/apiserver storage/etcd3: resourceVersion is the "
              "etcd revision of the write)"),
]

# -- JB-3 ------------------------------------------------------------------------------------
# A pod-level activeDeadlineSeconds in a Job's template (R18): the kubelet fails the pod with
# DeadlineExceeded although its container exits 0 on the TERM; the pod carries no condition a
# podFailurePolicy rule could match, and an exit-code rule sees 0. Open upstream:
# kubernetes/kubernetes#115688 (kind/bug; the maintainers: matching should be on "some positive
# indication the kubelet killed the container", a pod condition — PR #117973 ActiveDeadlineExceeded,
# closed unmerged). Settings: pod deadline 5 s, grace 10 s, TERM trap exit 0, backoffLimit 1,
# rule FailJob onExitCodes NotIn [0].
JB3_POD_DEADLINE_S = 5
JB3_GRACE_S = 10
JB3_BACKOFF_LIMIT = 1
# The kubelet checks the deadline on each sync-loop tick (activeDeadlineHandler is a
# PodSyncLoopHandler; the syncCh ticker is 1 s) and then kills the containers: budget 1 s + 1 s.
SYNC_TICKER_S = 1.0
JB3_BUG = "kubernetes/kubernetes#115688 (open; PR #117973 closed unmerged)"
UP_POD_DEADLINE = ("[UP] pkg/kubelet/active_deadline.go ShouldEvict (reason DeadlineExceeded, message); kubelet.go syncLoopIteration "
                   "(getPodsToSync: the sync-loop handlers each 1 s tick); kubelet_pods.go generateAPIPodStatus (v1.34.4–v1.37.2)")
JB3_MECHANISM = (f"{UP_POD_DEADLINE}: the phase Failed comes from the eviction reason, not the exit code, and no pod condition "
                 "is added; pkg/controller/job/pod_failure_policy.go matchPodFailurePolicy sees only exit codes and conditions")
R18 = "CASES-workloads.md R18 (kubernetes/kubernetes#115688, #117973, kubernetes/enhancements#3999)"
JB3 = [
    equal("JB-3", "pod_phase", "Failed", f"{R18}; {UP_POD_DEADLINE}"),
    equal("JB-3", "pod_reason", "DeadlineExceeded", f"{R18}; {UP_POD_DEADLINE}"),
    equal("JB-3", "pod_message", "Pod was active on the node longer than the specified deadline", f"{R18}; {UP_POD_DEADLINE}"),
    exact("JB-3", "container_exit_code", 0, "the scenario's container (job-pod-deadline.yaml: the TERM trap exits 0)",
          why="the trap's exit status"),
    Expectation("JB-3", "container_finished_after_start_s", float(JB3_POD_DEADLINE_S), f"{R18}; {UP_POD_DEADLINE}", unit="s",
                band=Band(JB3_POD_DEADLINE_S - TRUNC, JB3_POD_DEADLINE_S + TRUNC + SYNC_TICKER_S + KILL_PATH_S),
                why=f"finishedAt − the pod's startTime (API times): ±{TRUNC:g} s truncation, +{SYNC_TICKER_S:g} s the sync-loop "
                    f"tick that checks the deadline, +{KILL_PATH_S:g} s the kill (TERM, the trap's exit)"),
    equal("JB-3", "disruption_target", False, f"{R18}; {UP_POD_DEADLINE}"),
    Expectation("JB-3", "deadline_condition", False, f"{R18}; {UP_POD_DEADLINE}",
                known_bug=KnownBug(JB3_BUG, correct=True, mechanism=JB3_MECHANISM)),
    exact("JB-3", "pods_total", JB3_BACKOFF_LIMIT + 1, f"{R18}; {UP_PFP}; {UP_JOB_END}",
          why="no rule matches (exit 0 is not NotIn [0]; no condition): each failure counts, backoffLimit 1 → 2 pods"),
    equal("JB-3", "failed_reason", "BackoffLimitExceeded", f"{R18}; {UP_JOB_END}"),
]

# -- JB-5 ------------------------------------------------------------------------------------
# successPolicy {succeededIndexes: "0"}: index 0 exits 0 after JB5_DONE_AFTER_S; indexes 1 and 2
# wait, and on SIGTERM stay JB5_TERM_DELAY_S, then exit 0 (so they end Succeeded).
JB5_DONE_AFTER_S = 3
JB5_TERM_DELAY_S = 2
JB5_GRACE_S = 10
UP_SUCCESS = ("[UP] pkg/controller/job/success_policy.go matchSuccessPolicy (\"Matched rules at index\" i); job_controller.go syncJob "
              "(JobSuccessCriteriaMet, JobReasonSuccessPolicy), trackJobStatusAndRemoveFinalizers (Complete with the same reason and "
              "message once terminating == 0) (v1.34.4–v1.37.2; gate JobSuccessPolicy GA, checks removed in 1.37)")
UP_SUCCESS_COUNT = ("[UP] pkg/controller/job/job_controller.go deleteJobPods (removeTrackingFinalizerPatch before the DELETE), "
                    "trackJobStatusAndRemoveFinalizers (only pods still holding batch.kubernetes.io/job-tracking are counted) "
                    "(v1.34.4–v1.37.2)")
JB5 = [
    equal("JB-5", "criteria_met_reason", "SuccessPolicy", UP_SUCCESS),
    equal("JB-5", "criteria_met_message", "Matched rules at index 0", UP_SUCCESS),
    Expectation("JB-5", "criteria_met_after_exit_s", 0.0, UP_SUCCESS, unit="s",
                band=Band(-TRUNC, TRUNC + JOB_STATUS_S + JOB_SYNC_S),
                why=f"SuccessCriteriaMet lastTransitionTime − index 0's finishedAt (API times): ±{TRUNC:g} s truncation, "
                    f"+{JOB_STATUS_S:g} s the kubelet's status update, +{JOB_SYNC_S:g} s the Job sync"),
    exact("JB-5", "other_pods_deleted", 2, UP_SUCCESS, why="indexes 1 and 2 were running: deleteActivePods in the same sync"),
    Expectation("JB-5", "complete_after_criteria_met_s", float(JB5_TERM_DELAY_S), UP_SUCCESS, unit="s",
                band=Band(JB5_TERM_DELAY_S - TRUNC, JB5_TERM_DELAY_S + TRUNC + KILL_PATH_S + JOB_STATUS_S + JOB_SYNC_S),
                why=f"Complete − SuccessCriteriaMet (API times): the others' TERM trap ({JB5_TERM_DELAY_S} s); ±{TRUNC:g} s "
                    f"truncation, +{KILL_PATH_S:g} s delete → SIGTERM, +{JOB_STATUS_S:g} s status update, +{JOB_SYNC_S:g} s sync"),
    equal("JB-5", "complete_reason", "SuccessPolicy", UP_SUCCESS),
    exact("JB-5", "succeeded", 1, UP_SUCCESS_COUNT,
          why="only index 0 counts: the deleted indexes end Succeeded (their trap exits 0) but lost their tracking "
              "finalizer before the DELETE, so they are never counted"),
]

# -- JB-4 ------------------------------------------------------------------------------------
# backoffLimitPerIndex 1 (one retry per index), completions 4, parallelism 4; index 1 always
# exits 1, index 2 exits 42 (FailIndex), 0 and 3 exit 0. Variant maxFailedIndexes 1.
JB4_PER_INDEX = 1
JB4_MAX_FAILED = 1
UP_PER_INDEX = ("[UP] pkg/controller/job/job_controller.go syncJob (calculateFailedIndexes; FailedIndexes \"Job has failed indexes\" "
                "once failed + succeeded ≥ completions; MaxFailedIndexesExceeded \"Job has exceeded the specified maximal number of "
                "failed indexes\" once failed > maxFailedIndexes) (v1.34.4–v1.37.2)")
UP_FAIL_INDEX = "[UP] pkg/controller/job/pod_failure_policy.go matchPodFailurePolicy (FailIndex: the index fails at once) (v1.34.4–v1.37.2)"
UP_INDEX_BACKOFF = ("[UP] pkg/controller/job/indexed_job_utils.go getNewIndexFailureCounts, addIndexFailureCountAnnotation "
                    "(batch.kubernetes.io/job-index-failure-count); backoff_utils.go getRemainingTimeForFailuresCount "
                    "(DefaultJobPodFailureBackOff 10 s for the index's first failure) (v1.34.4–v1.37.2)")
UP_PER_INDEX_VALIDATION = ("[UP] pkg/apis/batch/validation/validation.go validateJobSpec (backoffLimitPerIndex \"requires indexed "
                           "completion mode\"; restartPolicy restricted to Never only when podFailurePolicy is set) (v1.34.4–v1.37.2)")
S2_PER_INDEX = "[S2] L579–602 (backoffLimitPerIndex, maxFailedIndexes, FailIndex)"
JB4 = [
    equal("JB-4", "failed_indexes", "1,2", f"{S2_PER_INDEX}; {UP_PER_INDEX}; {UP_FAIL_INDEX}"),
    equal("JB-4", "completed_indexes", "0,3", UP_PER_INDEX),
    equal("JB-4", "failed_reason", "FailedIndexes", UP_PER_INDEX),
    equal("JB-4", "failed_message", "Job has failed indexes", UP_PER_INDEX),
    exact("JB-4", "pods_of_index_1", JB4_PER_INDEX + 1, f"{S2_PER_INDEX}; {UP_PER_INDEX}",
          why="backoffLimitPerIndex 1: the first pod and one retry"),
    exact("JB-4", "pods_of_index_2", 1, f"{S2_PER_INDEX}; {UP_FAIL_INDEX}", why="FailIndex: no retry"),
    equal("JB-4", "retry_failure_count", "1", UP_INDEX_BACKOFF),
    Expectation("JB-4", "index_retry_gap_s", float(JOB_BACKOFF_S), UP_INDEX_BACKOFF, unit="s",
                band=Band(JOB_BACKOFF_S - TRUNC, JOB_BACKOFF_S + TRUNC + JOB_SYNC_S + JOB_STATUS_S),
                why="the retry's creationTimestamp − the first pod's finishedAt (API times): the per-index back-off 10 s; "
                    "−1 s truncation; +1 s truncation, +1 s sync and pod create, +1 s the kubelet's status update"),
    equal("JB-4", "failed_reason[max-failed]", "MaxFailedIndexesExceeded", f"{S2_PER_INDEX}; {UP_PER_INDEX}"),
    equal("JB-4", "failed_message[max-failed]", "Job has exceeded the specified maximal number of failed indexes", UP_PER_INDEX),
    equal("JB-4", "failed_indexes[max-failed]", "1,2", UP_PER_INDEX),
    equal("JB-4", "accepted[OnFailure]", True, f"{S2_PER_INDEX} (S2:602: 1.37 accepts it); {UP_PER_INDEX_VALIDATION}"),
    equal("JB-4", "rejected_message[NonIndexed]", "Invalid value: 1: requires indexed completion mode", UP_PER_INDEX_VALIDATION),
    equal("JB-4", "rejected_field[NonIndexed]", "spec.backoffLimitPerIndex", UP_PER_INDEX_VALIDATION),
]

# -- JB-7 ------------------------------------------------------------------------------------
# completions 2, parallelism 1, pods of JB7_RUN_S; suspended once the first pod runs, resumed
# JB7_PAUSE_S after that pod is gone.
JB7_RUN_S = 8
JB7_PAUSE_S = 5
UP_SUSPEND = ("[UP] pkg/controller/job/job_controller.go syncJob (JobSuspended/\"Job suspended\", event Suspended; JobResumed/"
              "\"Job resumed\", event Resumed, startTime = now), manageJob (a suspended Job's active pods deleted), deleteJobPods "
              "(the tracking finalizer removed before the DELETE: the pod is never counted) (v1.34.4–v1.37.2)")
UP_SUSPEND_START = ("[UP] pkg/controller/job/job_controller.go syncJob: on suspend startTime = nil behind MutableSchedulingDirectivesForSuspendedJobs "
                    "(absent in v1.34.4; pkg/features/kube_features.go: alpha/off 1.35, beta/on 1.36, 1.37)")
JB7 = [
    equal("JB-7", "suspended_reason", "JobSuspended", f"CASES-workloads.md R35; {UP_SUSPEND}"),
    equal("JB-7", "suspended_message", "Job suspended", UP_SUSPEND),
    equal("JB-7", "events", "Suspended Resumed", UP_SUSPEND),
    equal("JB-7", "pod_deleted_on_suspend", True, UP_SUSPEND),
    exact("JB-7", "failed", 0, UP_SUSPEND, why="deleteJobPods removes the tracking finalizer first: the deleted pod is not counted"),
    equal("JB-7", "start_time_while_suspended", "kept", UP_SUSPEND_START, minors=(34, 35)),
    equal("JB-7", "start_time_while_suspended", "cleared", UP_SUSPEND_START, minors=(36, None)),
    Expectation("JB-7", "start_time_after_resume_s", 0.0, UP_SUSPEND, unit="s", band=Band(-TRUNC, TRUNC + JOB_SYNC_S),
                why="the new startTime − the resume's host time: API time − host time reads up to 1 s short; +1 s the sync "
                    "after the spec change"),
    Expectation("JB-7", "complete_after_resume_s", float(2 * JB7_RUN_S), f"CASES-workloads.md R35; {UP_SUSPEND}", unit="s",
                band=Band(2 * JB7_RUN_S - TRUNC, 2 * JB7_RUN_S + TRUNC + 2 * (JOB_SYNC_S + WAIT_POD_START_S + JOB_STATUS_S)),
                why=f"Complete lastTransitionTime − the resume (API − host): two pods of {JB7_RUN_S} s one after the other; "
                    f"−1 s truncation; +1 s, and per pod +{JOB_SYNC_S:g} s sync and create, +{WAIT_POD_START_S:g} s its start, "
                    f"+{JOB_STATUS_S:g} s the kubelet's status update"),
    exact("JB-7", "succeeded", 2, UP_SUSPEND, why="completions 2"),
    exact("JB-7", "tracking_finalizers_left", 0, f"CASES-workloads.md R35; {UP_SUSPEND}",
          why="every finished pod's batch.kubernetes.io/job-tracking finalizer is removed"),
]

# -- JB-8 ------------------------------------------------------------------------------------
# (a) restartPolicy OnFailure, backoffLimit 2, the container exits 1 after 1 s.
JB8_BACKOFF_LIMIT = 2
UP_ON_FAILURE = ("[UP] pkg/controller/job/job_controller.go pastBackoffLimitOnFailure (the sum of the active pods' restartCount, "
                 "init containers included, compared with `result >= *job.Spec.BackoffLimit`), syncJob (BackoffLimitExceeded, "
                 "\"Job has reached the specified backoff limit\"; the pod deleted) (v1.34.4–v1.37.2)")
# (b) R36 on a smaller scale: completions 4, parallelism 2, backoffLimit 3, pods failing after 5 s.
JB8B_BACKOFF_LIMIT = 3
JB8B_FAIL_AFTER_S = 5
UP_WAVES = ("[UP] pkg/controller/job/job_controller.go syncJob (exceedsBackoffLimit: failed > backoffLimit, Job-wide), newBackoffRecord "
            "(failures since the last success, any pod); backoff_utils.go getRemainingTimeForFailuresCount (v1.34.4–v1.37.2)")
JB8 = [
    equal("JB-8", "failed_reason[waves]", "BackoffLimitExceeded", f"CASES-workloads.md R36; {UP_WAVES}"),
    Expectation("JB-8", "failed_pods[waves]", JB8B_BACKOFF_LIMIT + 1, f"CASES-workloads.md R36; {UP_WAVES}",
                band=Band(JB8B_BACKOFF_LIMIT + 1, JB8B_BACKOFF_LIMIT + 2),
                why="the Job fails at the first sync that counts more than backoffLimit failures; with 2 pods in flight a "
                    "second may fail in the same window (waves overlap: no band for the total time, recorded in the details)"),
    exact("JB-8", "restart_count_at_failure", JB8_BACKOFF_LIMIT, f"{S2_JOB} (S2:572); {UP_ON_FAILURE}",
          why="`>=`: the Job fails as soon as the restarts reach backoffLimit (a `>` would read 3)"),
    equal("JB-8", "failed_reason", "BackoffLimitExceeded", UP_ON_FAILURE),
    equal("JB-8", "failed_message", "Job has reached the specified backoff limit", UP_ON_FAILURE),
    equal("JB-8", "pod_deleted", True, UP_ON_FAILURE),
    exact("JB-8", "pods_total", 1, UP_ON_FAILURE, why="OnFailure: the kubelet restarts the container in place; no new pod"),
]

# -- JB-6 ------------------------------------------------------------------------------------
# Two Jobs (no podFailurePolicy, backoffLimit 3) whose pod ignores SIGTERM, grace JB6_GRACE_S;
# the running pod is deleted. The first failure's back-off (10 s) runs from the failure time
# backoff_utils.go getFinishedTime takes: a container's finishedAt, else Ready=False, else the
# deletion request (deletionTimestamp − deletionGracePeriodSeconds).
JB6_GRACE_S = 15
UP_REPLACEMENT = ("[UP] pkg/controller/job/job_controller.go isPodFailed (TerminatingOrFailed: a pod with a deletionTimestamp "
                  "counts as failed; Failed: only phase Failed), manageJob (the replacement waits backoff.getRemainingTime); "
                  "backoff_utils.go getFinishedTime, getFinishTimeFromDeletionTimestamp, getRemainingTimeForFailuresCount "
                  "(DefaultJobPodFailureBackOff 10 s) (v1.34.4–v1.37.2; gate JobPodReplacementPolicy GA in 1.34)")
JB6 = [
    Expectation("JB-6", "replacement_after_delete_s[TerminatingOrFailed]", float(JOB_BACKOFF_S), UP_REPLACEMENT, unit="s",
                band=Band(JOB_BACKOFF_S - 2 * TRUNC, JOB_BACKOFF_S + JOB_SYNC_S + JOB_STATUS_S),
                why="the replacement's creationTimestamp − the delete (host): counted failed at the delete, the back-off "
                    "runs from the deletion request; −1 s the request's truncated time, −1 s creationTimestamp truncation; "
                    "+1 s the sync and the create, +1 s the controller's watch of the pod update (the catalogue expected "
                    "[0, 2] s: it left out the back-off)"),
    Expectation("JB-6", "replacement_after_delete_s[Failed]", float(JB6_GRACE_S + JOB_BACKOFF_S), UP_REPLACEMENT, unit="s",
                band=Band(JB6_GRACE_S + JOB_BACKOFF_S - 2 * TRUNC,
                          JB6_GRACE_S + JOB_BACKOFF_S + TRUNC + KILL_PATH_S + JOB_SYNC_S + JOB_STATUS_S),
                why=f"the replacement's creationTimestamp − the delete (host): the SIGKILL at the grace period's end "
                    f"({JB6_GRACE_S} s), then the back-off from its finishedAt; −2 s truncation of both; +1 s truncation, "
                    f"+{KILL_PATH_S:g} s the kill, +{JOB_SYNC_S:g} s sync and create, +{JOB_STATUS_S:g} s the status update"),
    equal("JB-6", "failed_before_old_pod_finished[TerminatingOrFailed]", True, UP_REPLACEMENT),
    equal("JB-6", "failed_before_old_pod_finished[Failed]", False, UP_REPLACEMENT),
    exact("JB-6", "max_active_while_terminating[TerminatingOrFailed]", 1, UP_REPLACEMENT,
          why=f"the replacement (after 10 s) runs beside the old pod, still terminating until {JB6_GRACE_S} s"),
    exact("JB-6", "max_active_while_terminating[Failed]", 0, UP_REPLACEMENT,
          why="no replacement before the old pod is Failed"),
    exact("JB-6", "max_terminating[Failed]", 1, UP_REPLACEMENT, why="status.terminating counts the old pod meanwhile"),
]

register([*JB1, *JB2, *JB3, *JB4, *JB5, *JB6, *JB7, *JB8], VERIFIED_IN)
