"""PB — probes beyond PR-1/PR-2 (CASES-workloads.md §4 PB-1 … PB-4).

- PB-1: unset probe fields take their defaults (``pkg/apis/core/v1/defaults.go``
  ``SetDefaults_Probe``: timeoutSeconds 1, periodSeconds 10, successThreshold 1, failureThreshold
  3; initialDelaySeconds stays 0, which the API omits), and a liveness or startup probe with a
  successThreshold other than 1 is refused ("must be 1", ``pkg/apis/core/validation/validation.go``
  ``validateLivenessProbe`` / ``validateStartupProbe``); a readiness probe may have 2. A
  timeoutSeconds of 0 is *defaulted* to 1 (defaulting runs before validation, and
  ``SetDefaults_Probe`` tests ``== 0``), so it is never refused (open point 7 of §5).

Versions: ``SetDefaults_Probe``, ``validateLivenessProbe``, ``validateReadinessProbe`` and
``validateStartupProbe`` are byte-identical in v1.34.4, v1.35.4, v1.36.3 and v1.37.2;
``validateProbe`` differs only in 1.37.2 (``validateHandler`` lost its ``opts`` argument), not in
the checks of the timing fields. Nothing here is keyed by minor.
"""

from __future__ import annotations

from ..judge.expectations import equal, exact, register
from .kubelet import UPGRADE_PATH_READ

VERIFIED_IN = UPGRADE_PATH_READ

# -- sources -----------------------------------------------------------------------------
S1_DEFAULTS = "[S1] L229–236 (defaults; successThreshold 1 only for liveness and startup)"
UP_DEFAULTS = "[UP] pkg/apis/core/v1/defaults.go SetDefaults_Probe (v1.34.4, v1.35.4, v1.36.3, v1.37.2: identical)"
UP_VALIDATION = ("[UP] pkg/apis/core/validation/validation.go validateLivenessProbe, validateStartupProbe "
                 "(SuccessThreshold != 1 → field.Invalid «must be 1»), validateReadinessProbe (v1.34.4 … v1.37.2: identical)")
UP_INVALID = "[UP] apimachinery pkg/api/errors NewInvalid (422, reason Invalid)"

# -- PB-1 --------------------------------------------------------------------------------
PROBES = ("liveness", "readiness", "startup")
PB1_DEFAULTS = {"periodSeconds": 10, "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3}
# the probes whose successThreshold must be 1, and the one that may have more
PB1_SUCCESS_ONE = ("liveness", "startup")
PB1_SUCCESS_TWO = 2

register(
    [
        *[exact("PB-1", f"default_{field}[{probe}]", value, f"{S1_DEFAULTS}; {UP_DEFAULTS}",
                "a defaulted constant, copied as is", unit="s" if field.endswith("Seconds") else "")
          for probe in PROBES for field, value in PB1_DEFAULTS.items()],
        *[equal("PB-1", f"initial_delay_stored[{probe}]", "absent",
                f"{S1_DEFAULTS} (initialDelaySeconds 0); {UP_DEFAULTS} (not defaulted: 0, omitted by omitempty)")
          for probe in PROBES],
        *[equal("PB-1", f"success_threshold_2_accepted[{probe}]", probe not in PB1_SUCCESS_ONE, f"{S1_DEFAULTS}; {UP_VALIDATION}")
          for probe in PROBES],
        equal("PB-1", "rejected_status", 422, f"{UP_VALIDATION}; {UP_INVALID}"),
        equal("PB-1", "rejected_reason", "Invalid", f"{UP_VALIDATION}; {UP_INVALID}"),
        *[equal("PB-1", f"rejected_message[{probe}]",
                f'Pod "{{pod}}" is invalid: spec.containers[0].{probe}Probe.successThreshold: Invalid value: {PB1_SUCCESS_TWO}: must be 1',
                f"{UP_VALIDATION} (fldPath.Child(\"successThreshold\")); {UP_INVALID}")
          for probe in PB1_SUCCESS_ONE],
        # §5 open point 7: timeoutSeconds 0 is not refused but defaulted (SetDefaults_Probe: == 0 → 1)
        *[exact("PB-1", f"timeout_zero_stored[{probe}]", 1, f"CASES-workloads.md §5 point 7; {UP_DEFAULTS} (TimeoutSeconds == 0 → 1)",
                "defaulting runs before validation: 0 is replaced by 1, never seen by ValidateNonnegativeField", unit="s")
          for probe in PROBES],
    ],
    VERIFIED_IN,
)
