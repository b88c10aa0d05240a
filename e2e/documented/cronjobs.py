"""CJ — CronJob (CASES-workloads.md §1.7, §2 "CronJob controller v2", "Job/CronJob defaults", §4 CJ-1 … CJ-4).

- API defaults (``SetDefaults_CronJob``): concurrencyPolicy ``Allow``, suspend false, history limits
  3 successful and 1 failed; validation of ``timeZone`` (an IANA name the API server's embedded
  tzdata knows) and of ``TZ=``/``CRON_TZ=`` in a new object's schedule (CJ-1).
- The v2 controller (``cronjob_controllerv2.go``) requeues at the next slot + ``nextScheduleDelta``
  100 ms, takes only the most recent missed slot (``utils.go`` ``nextScheduleTime``,
  ``mostRecentScheduleTime``), and warns ``TooManyMissedTimes`` beyond 100 missed slots while still
  returning the newest one (CJ-4).

Versions: read in v1.34.4, v1.35.4, v1.36.3 and v1.37.2 — ``pkg/apis/batch/v1/defaults.go``
``SetDefaults_CronJob`` (the same function in all four), ``pkg/apis/batch/validation/validation.go``
``validateScheduleFormat``, ``validateTimeZone`` (the same texts in all four; ``time.LoadLocation``
against the tzdata ``cmd/kube-apiserver/apiserver.go`` imports, ``_ "time/tzdata"``),
``pkg/controller/cronjob/cronjob_controllerv2.go`` and ``utils.go`` (``utils.go`` identical in
1.35.4–1.37.2; 1.34.4 differs only by the ``CronJobsScheduledAnnotation`` gate around the
scheduled-timestamp annotation: GA, on; the ``TooManyMissedTimes`` text is the same in all four).
"""

from __future__ import annotations

from ..judge.expectations import Band, Expectation, equal, exact, register
from .kubelet import API_TIMESTAMP_RESOLUTION_S
from .kubelet import UPGRADE_PATH_READ

VERIFIED_IN = UPGRADE_PATH_READ

S2_CJ_DRY = "[S2] L628–633 (cronjob.yaml dry run, timeZone, TZ= in the schedule)"
UP_CJ_DEFAULTS = "[UP] pkg/apis/batch/v1/defaults.go SetDefaults_CronJob (v1.34.4–v1.37.2)"
UP_CJ_TZ = ("[UP] pkg/apis/batch/validation/validation.go validateTimeZone (time.LoadLocation; tzdata embedded by "
            "cmd/kube-apiserver/apiserver.go) (v1.34.4–v1.37.2)")
UP_CJ_SCHEDULE = ("[UP] pkg/apis/batch/validation/validation.go ValidateCronJobSpec, validateScheduleFormat "
                  "(allowTZInSchedule only when the old object had TZ) (v1.34.4–v1.37.2)")
UP_CJ_DEADLINE = "[UP] pkg/apis/batch/validation/validation.go ValidateCronJobSpec (startingDeadlineSeconds ≥ 0) (v1.34.4–v1.37.2)"

# -- CJ-1 ------------------------------------------------------------------------------------
# The refusals of a dry run: a field error's Status cause (field, message) and the HTTP status.
CJ1 = [
    equal("CJ-1", "defaults", "Allow False 3 1", f"{S2_CJ_DRY}; {UP_CJ_DEFAULTS}",
          why="concurrencyPolicy, suspend, successfulJobsHistoryLimit, failedJobsHistoryLimit as the server defaults them"),
    exact("CJ-1", "rejected_status[MSK]", 422, f"{S2_CJ_DRY}; {UP_CJ_TZ}", why="a field.Invalid error: 422 Unprocessable Entity"),
    equal("CJ-1", "rejected_field[MSK]", "spec.timeZone", UP_CJ_TZ),
    equal("CJ-1", "rejected_message[MSK]", 'Invalid value: "MSK": unknown time zone MSK', f"{S2_CJ_DRY}; {UP_CJ_TZ}"),
    equal("CJ-1", "accepted[Europe/Moscow]", True, f"{S2_CJ_DRY}; {UP_CJ_TZ}"),
    exact("CJ-1", "rejected_status[TZ=]", 422, f"{S2_CJ_DRY}; {UP_CJ_SCHEDULE}", why="a field.Invalid error: 422 Unprocessable Entity"),
    equal("CJ-1", "rejected_field[TZ=]", "spec.schedule", UP_CJ_SCHEDULE),
    equal("CJ-1", "rejected_message[TZ=]",
          'Invalid value: "TZ=UTC 0 3 * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead',
          f"{S2_CJ_DRY}; {UP_CJ_SCHEDULE}"),
    equal("CJ-1", "accepted[deadline=5]", True, UP_CJ_DEADLINE),
]

# -- CJ-4 ------------------------------------------------------------------------------------
# Three CronJobs on "* * * * *", created suspended, their status.lastScheduleTime patched to the
# past (status subresource) — (a) and (b) CJ4_MISSED_SLOTS slots back, as if suspended that long,
# (c) CJ4_HOURS_BACK hours back — then resumed together between seconds CJ4_RESUME_WINDOW of a
# minute. (b) has startingDeadlineSeconds CJ4_DEADLINE_S: the window's lower end is past it.
CJ4_MISSED_SLOTS = 3
CJ4_HOURS_BACK = 3
CJ4_DEADLINE_S = 20
CJ4_RESUME_WINDOW = (22, 45)
# The CronJob controller's requeue: nextScheduleDelta 100 ms after the slot; its informer, the sync
# and the Job's create: budget 1 s on the loaded host.
CJ_SYNC_S = 1.0
S2_CJ_MISSED = "[S2] L606, L635–640 (missed slots: lastScheduleTime, only the newest, startingDeadlineSeconds, TooManyMissedTimes)"
UP_CJ_SYNC = ("[UP] pkg/controller/cronjob/cronjob_controllerv2.go updateCronJob (a spec change enqueues at once), syncCronJob "
              "(one scheduledTime; getJobName <cj>-<scheduled Unix minutes>; SuccessfulCreate \"Created job <n>\") (v1.34.4–v1.37.2)")
UP_CJ_MOST_RECENT = ("[UP] pkg/controller/cronjob/utils.go mostRecentScheduleTime (from lastScheduleTime, never before now − "
                     "startingDeadlineSeconds; the newest slot only), nextScheduleTime (v1.34.4–v1.37.2)")
UP_CJ_ANNOTATION = ("[UP] pkg/controller/cronjob/utils.go getJobFromTemplate2 (batch.kubernetes.io/cronjob-scheduled-timestamp, RFC 3339 "
                    "in the CronJob's zone; gate CronJobsScheduledAnnotation GA in 1.34) (v1.34.4–v1.37.2)")
UP_CJ_TOO_MANY = ("[UP] pkg/controller/cronjob/utils.go nextScheduleTime (manyMissed > 100: Warning TooManyMissedTimes, then the newest "
                  "slot is still returned), mostRecentScheduleTime (v1.34.4–v1.37.2: the same text, no count)")
UP_CJ_MISS = ("[UP] pkg/controller/cronjob/cronjob_controllerv2.go syncCronJob (MissSchedule only for a scheduledTime found and too late); "
              "utils.go mostRecentScheduleTime (the window starts at now − startingDeadlineSeconds: a slot past the deadline is "
              "never found, so no MissSchedule) (v1.34.4–v1.37.2)")
TRUNC = API_TIMESTAMP_RESOLUTION_S
CJ4 = [
    exact("CJ-4", "jobs_at_resume[missed]", 1, f"{S2_CJ_MISSED} (S2:635); {UP_CJ_MOST_RECENT}",
          why="only the most recent missed slot is run, however many were missed"),
    equal("CJ-4", "job_slot[missed]", "newest", f"{S2_CJ_MISSED}; {UP_CJ_MOST_RECENT}; {UP_CJ_SYNC}",
          why="the Job's name and scheduled-timestamp annotation name the newest slot before the resume"),
    equal("CJ-4", "scheduled_annotation[missed]", "{slot}", UP_CJ_ANNOTATION),
    Expectation("CJ-4", "job_after_resume_s[missed]", 0.0, UP_CJ_SYNC, unit="s", band=Band(-TRUNC, CJ_SYNC_S),
                why=f"the Job's creationTimestamp − the resume's host time: API − host reads up to 1 s short; +{CJ_SYNC_S:g} s "
                    "the informer, the sync and the create"),
    exact("CJ-4", "jobs_at_resume[deadline]", 0, f"{S2_CJ_MISSED} (S2:636); {UP_CJ_MOST_RECENT}",
          why="the newest slot is older than now − startingDeadlineSeconds: outside the search window"),
    exact("CJ-4", "miss_schedule_events[deadline]", 0, UP_CJ_MISS,
          why="the catalogue expected a MissSchedule warning; the source finds no slot at all, so none is emitted"),
    Expectation("CJ-4", "next_job_after_slot_s[deadline]", 0.0, f"{S2_CJ_MISSED}; {UP_CJ_SYNC}", unit="s",
                band=Band(-TRUNC, TRUNC + CJ_SYNC_S),
                why=f"the next Job's creationTimestamp − its slot (both whole seconds): requeue at slot + 100 ms; ±{TRUNC:g} s "
                    f"truncation, +{CJ_SYNC_S:g} s the sync and the create"),
    equal("CJ-4", "too_many_missed_message", "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew",
          f"{S2_CJ_MISSED} (S2:640); {UP_CJ_TOO_MANY}"),
    equal("CJ-4", "too_many_missed_type", "Warning", UP_CJ_TOO_MANY),
    exact("CJ-4", "jobs_at_resume[too-many]", 1, f"{S2_CJ_MISSED} (S2:640); {UP_CJ_TOO_MANY}",
          why="the warning, and still one Job for the newest slot"),
    equal("CJ-4", "job_slot[too-many]", "newest", f"{UP_CJ_TOO_MANY}; {UP_CJ_SYNC}",
          why="the Job's name names the newest slot before the resume"),
]

# -- CJ-2 ------------------------------------------------------------------------------------
# "*/1 * * * *", history limits 2 successful and 1 failed; a Job exits with its minute's parity
# (even minute: 0, odd: 1); CJ2_SLOTS slots are watched.
CJ2_SLOTS = 6
CJ2_SUCCESSFUL_LIMIT = 2
CJ2_FAILED_LIMIT = 1
UP_CJ_HISTORY = ("[UP] pkg/controller/cronjob/cronjob_controllerv2.go cleanupFinishedJobs, removeOldestJobs (sorted byJobStartTime, "
                 "oldest first; SuccessfulDelete \"Deleted job <n>\"), syncCronJob (SawCompletedJob \"Saw completed job: <n>, "
                 "condition: <type>\") (v1.34.4–v1.37.2)")
S2_CJ_SLOTS = "[S2] L606–640 (CronJob slots, naming, history limits)"
CJ2 = [
    Expectation("CJ-2", "created_after_slot_s", 0.0, f"{S2_CJ_SLOTS}; {UP_CJ_SYNC}", unit="s",
                band=Band(0.0, TRUNC + CJ_SYNC_S),
                why=f"creationTimestamp − the slot (whole seconds both; the slot is exact): requeue at slot + 100 ms; +{TRUNC:g} s "
                    f"truncation, +{CJ_SYNC_S:g} s the sync and the create"),
    exact("CJ-2", "jobs_named_after_their_slot", CJ2_SLOTS, f"{S2_CJ_SLOTS} (S2:638); {UP_CJ_SYNC}; {UP_CJ_ANNOTATION}",
          why="every Job's name is <cj>-<scheduled Unix minutes> and its annotation that slot"),
    exact("CJ-2", "created_events", CJ2_SLOTS, UP_CJ_SYNC, why="one SuccessfulCreate per slot, no second Job for a slot"),
    equal("CJ-2", "saw_completed_message", r"Saw completed job: cj-\d+, condition: (Complete|Failed)", UP_CJ_HISTORY, pattern=True),
    equal("CJ-2", "last_schedule_time", "{slot}", f"{S2_CJ_SLOTS} (S2:606); {UP_CJ_SYNC}"),
    exact("CJ-2", "complete_jobs_left", CJ2_SUCCESSFUL_LIMIT, UP_CJ_HISTORY, why="successfulJobsHistoryLimit 2"),
    exact("CJ-2", "failed_jobs_left", CJ2_FAILED_LIMIT, UP_CJ_HISTORY, why="failedJobsHistoryLimit 1"),
    equal("CJ-2", "oldest_deleted_first", True, UP_CJ_HISTORY),
]

# -- CJ-3 ------------------------------------------------------------------------------------
# "*/1 * * * *", Jobs of CJ3_JOB_S (> one slot): (A) Forbid, (B) Forbid + deadline 20, (C) Forbid +
# deadline 200 (R37), (D) Replace, (E) Allow. M0 is the first slot.
CJ3_JOB_S = 90
CJ3_DEADLINES = {"forbid": "null", "forbid-20": 20, "forbid-200": 200, "replace": "null", "allow": "null"}
UP_CJ_FORBID = ("[UP] pkg/controller/cronjob/cronjob_controllerv2.go syncCronJob (Forbid with an active Job: JobAlreadyActive, "
                "lastScheduleTime unchanged), updateJob (a finished Job enqueues its CronJob: the skipped slot is still unmet) "
                "(v1.34.4–v1.37.2)")
UP_CJ_REPLACE = ("[UP] pkg/controller/cronjob/cronjob_controllerv2.go syncCronJob (Replace: deleteJob of each active Job, "
                 "SuccessfulDelete \"Deleted job <n>\", then the new Job in the same sync) (v1.34.4–v1.37.2)")
R37 = "CASES-workloads.md R37 (kubernetes/website#44796, #57853, #63371, #117528)"
CJ3 = [
    equal("CJ-3", "skip_message", "Not starting job because prior execution is running and concurrency policy is Forbid",
          f"[S2] L637; {UP_CJ_FORBID}"),
    equal("CJ-3", "second_job_slot[forbid]", "M0+60", f"{R37}; {UP_CJ_FORBID}; {UP_CJ_MOST_RECENT}",
          why="the skipped slot is not lost: its Job starts when the first ends"),
    equal("CJ-3", "second_job_slot[forbid-200]", "M0+60", f"{R37}; {UP_CJ_FORBID}; {UP_CJ_MOST_RECENT}",
          why="the skipped slot is still within the 200 s deadline when the first Job ends"),
    Expectation("CJ-3", "second_job_after_first_done_s", 0.0, f"{R37}; {UP_CJ_FORBID}", unit="s",
                band=Band(-TRUNC, TRUNC + CJ_SYNC_S),
                why=f"the second Job's creationTimestamp − the first's completionTime (API times): the Job informer "
                    f"enqueues the CronJob; ±{TRUNC:g} s truncation, +{CJ_SYNC_S:g} s the sync and the create"),
    equal("CJ-3", "second_job_slot[forbid-20]", "M0+120", f"{S2_CJ_MISSED} (S2:636); {UP_CJ_MOST_RECENT}",
          why="when the first Job ends the skipped slot is 32 s old, past the 20 s deadline: the next Job is the next slot's"),
    exact("CJ-3", "miss_schedule_events[forbid-20]", 0, UP_CJ_MISS,
          why="the catalogue expected a MissSchedule warning; the window starts at now − deadline, so the old slot is never found"),
    Expectation("CJ-3", "second_job_after_slot_s", 0.0, UP_CJ_SYNC, unit="s", band=Band(0.0, TRUNC + CJ_SYNC_S),
                why="creationTimestamp − its slot (exact): requeue at slot + 100 ms; +1 s truncation, +1 s the sync and the create"),
    equal("CJ-3", "first_job_deleted[replace]", True, f"[S2] L637; {UP_CJ_REPLACE}"),
    equal("CJ-3", "second_job_slot[replace]", "M0+60", UP_CJ_REPLACE),
    equal("CJ-3", "second_job_slot[allow]", "M0+60", "[S2] L637; [UP] cronjob_controllerv2.go syncCronJob (Allow: no check)"),
    equal("CJ-3", "overlap[allow]", True, "[S2] L637; [UP] cronjob_controllerv2.go syncCronJob (Allow: no check)"),
]

register([*CJ1, *CJ2, *CJ3, *CJ4], VERIFIED_IN)
