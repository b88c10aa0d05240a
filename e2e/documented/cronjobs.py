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

from ..judge.expectations import equal, exact, register
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

register([*CJ1], VERIFIED_IN)
