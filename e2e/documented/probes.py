"""PB — probes beyond PR-1/PR-2 (CASES-workloads.md §4 PB-1 … PB-4).

- PB-1: unset probe fields take their defaults (``pkg/apis/core/v1/defaults.go``
  ``SetDefaults_Probe``: timeoutSeconds 1, periodSeconds 10, successThreshold 1, failureThreshold
  3; initialDelaySeconds stays 0, which the API omits), and a liveness or startup probe with a
  successThreshold other than 1 is refused ("must be 1", ``pkg/apis/core/validation/validation.go``
  ``validateLivenessProbe`` / ``validateStartupProbe``); a readiness probe may have 2. A
  timeoutSeconds of 0 is *defaulted* to 1 (defaulting runs before validation, and
  ``SetDefaults_Probe`` tests ``== 0``), so it is never refused (open point 7 of §5).

- PB-2: the prober worker's arithmetic (liveness kill after F failures P apart, readiness down after
  F and up after S results), the Killing texts, preStop before the liveness kill's SIGTERM, and a
  startupProbe's own terminationGracePeriodSeconds (R16) against the 2 s floor.
- PB-3: what each handler counts as success: 2xx and a followed same-host redirect; 4xx/5xx fail
  ("HTTP probe failed with statuscode: N"); a 3xx that is not followed (another host, or 399)
  *succeeds* with a ProbeWarning "Probe terminated redirects, Response body: …"; TCP; the
  kubelet's User-Agent ``kube-probe/1.<minor>`` and Accept ``*/*``; (e) a grpc probe on the standard
  health service: Ready while it answers SERVING, not Ready within one period of NOT_SERVING with
  "service unhealthy (responded with "NOT_SERVING")", User-Agent ``kube-probe/1.<minor> grpc-go/…``.
- PB-4: timeoutSeconds bounds an HTTP probe (Go client timeout) and an exec probe ("command timed
  out"), but an exec probe whose background child keeps its stdout open is held by containerd's
  output drain until the child exits or the kubelet's CRI deadline (2 min + timeoutSeconds) — R17.

Versions: ``SetDefaults_Probe``, ``validateLivenessProbe``, ``validateReadinessProbe`` and
``validateStartupProbe`` are byte-identical in v1.34.4, v1.35.4, v1.36.3 and v1.37.2;
``validateProbe`` differs only in 1.37.2 (``validateHandler`` lost its ``opts`` argument), not in
the checks of the timing fields. The prober (worker.go, prober.go), pkg/probe/http, pkg/probe/tcp and
pkg/probe/exec were read in the four versions too (differences named where they are used). Only
the User-Agent is keyed by minor: it names the kubelet's own version (component-base
``version.Get()``, whose gitMinor the build sets: hack/offline/build-kubernetes.sh ``-X
…gitMinor=<minor>``, as upstream's hack/lib/version.sh does for a release).
"""

from __future__ import annotations

from ..judge.expectations import equal, exact, register, within
from .kubelet import API_TIMESTAMP_RESOLUTION_S, KUBELET_HANDOFF_S, MINIMUM_GRACE_PERIOD_S, STATUS_UPDATE_S, UPGRADE_PATH_READ
from .termination import SIGNAL_DELIVERY_S

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

# -- PB-2 liveness and readiness arithmetic --------------------------------------------------
# The prober worker (pkg/kubelet/prober/worker.go run, doProbe; v1.34.4 … v1.37.2): a ticker of
# periodSeconds whose phase against anything the test does is arbitrary, so the first probe to see
# the removed file runs within (t_f, t_f + P]; each further one adds exactly P; the F-th failure
# (liveness) or the F-th / S-th consecutive result (readiness) acts. A liveness kill:
# computePodActions (pkg/kubelet/kuberuntime/kuberuntime_manager.go) → killContainer, message
# "Container <c> failed liveness probe" + ", will be restarted" when the policy restarts it; the
# kill's grace is the probe's own terminationGracePeriodSeconds when set (kuberuntime_container.go
# setTerminationGracePeriod, isProbeTerminationGracePeriodSecondsSet: identical in the four
# versions), never below 2 s (minimumGracePeriodInSeconds). doProbe differs from 1.35 only for a
# container started before a kubelet restart (ChangeContainerStatusOnKubeletRestart, the sidecar
# startup seed of #136910) and in logging: no kubelet restarts here.
PB2_SLOW_PERIOD_S, PB2_SLOW_FAILURE_THRESHOLD = 5, 3   # (a), (e)
PB2_FAST_PERIOD_S = 2                                   # (c): failureThreshold 1
PB2_READY_PERIOD_S, PB2_READY_FAILURE_THRESHOLD, PB2_READY_SUCCESS_THRESHOLD = 5, 2, 2  # (b)
PB2_STARTUP_PERIOD_S = 5                                # (d): failureThreshold 1, probe grace 1

UP_WORKER = "[UP] pkg/kubelet/prober/worker.go run (probeTicker), doProbe (resultRun vs thresholds) (v1.34.4 … v1.37.2)"
UP_KILL = ("[UP] pkg/kubelet/kuberuntime/kuberuntime_manager.go computePodActions («Container %s failed liveness probe», "
           "«…, will be restarted») (v1.34.4 … v1.37.2)")
UP_PROBE_GRACE = ("[UP] pkg/kubelet/kuberuntime/kuberuntime_container.go setTerminationGracePeriod, "
                  "isProbeTerminationGracePeriodSecondsSet; kuberuntime_manager.go minimumGracePeriodInSeconds = 2 (v1.34.4 … v1.37.2)")
S_PROBES = "[S1] L223–238; [S2] L77–91"
# a probe's exec result comes within timeoutSeconds (default 1) of its tick
PROBE_EXEC_S = 1.0


def _kill_band(period: int, threshold: int) -> tuple[float, float, str]:
    low = (threshold - 1) * period
    high = threshold * period + PROBE_EXEC_S + KUBELET_HANDOFF_S + SIGNAL_DELIVERY_S
    why = (f"the first failing tick within (t_f, t_f + {period} s], {threshold - 1} more × {period} s; +{PROBE_EXEC_S:g} s the "
           f"probe's exec +{KUBELET_HANDOFF_S:g} s the kill's sync +{SIGNAL_DELIVERY_S:g} s the signal (container stamps)")
    return low, high, why


def _ready_band(period: int, threshold: int) -> tuple[float, float, str]:
    low = (threshold - 1) * period
    high = threshold * period + PROBE_EXEC_S + STATUS_UPDATE_S
    why = (f"{threshold} consecutive results {period} s apart, the first within (t, t + {period} s]; +{PROBE_EXEC_S:g} s "
           f"the probe's exec +{STATUS_UPDATE_S:g} s status write and watch (receive time of the Ready change)")
    return low, high, why


_LIVE_MSG = "Container app failed liveness probe, will be restarted"
register(
    [
        within("PB-2", "sigterm_after_removal_s[slow]", PB2_SLOW_FAILURE_THRESHOLD * PB2_SLOW_PERIOD_S,
               *_kill_band(PB2_SLOW_PERIOD_S, PB2_SLOW_FAILURE_THRESHOLD), f"{S_PROBES}; CASES-workloads.md PB-2 (a) [10, 16] s; {UP_WORKER}; {UP_KILL}"),
        within("PB-2", "sigterm_after_removal_s[fast]", PB2_FAST_PERIOD_S,
               *_kill_band(PB2_FAST_PERIOD_S, 1), f"[S0] L264–267; CASES-workloads.md PB-2 (c) [0, 3] s; {UP_WORKER}; {UP_KILL}"),
        equal("PB-2", "killing_event_message[slow]", _LIVE_MSG, f"{S_PROBES}; {UP_KILL}"),
        equal("PB-2", "killing_event_message[fast]", _LIVE_MSG, f"{S_PROBES}; {UP_KILL}"),
        equal("PB-2", "last_state_exit_code[slow]", 0, "CASES-workloads.md PB-2 (a) (TERM trapped, exit 0)"),
        equal("PB-2", "last_state_reason[slow]", "Completed", "CASES-workloads.md PB-2 (a); [UP] kuberuntime toContainerStatus (exit 0 → Completed)"),
        equal("PB-2", "prestop_before_sigterm[slow]", True,
              "CASES-workloads.md PB-2 (e); [UP] pkg/kubelet/kuberuntime/kuberuntime_container.go killContainer (executePreStopHook before StopContainer)"),
        within("PB-2", "not_ready_after_removal_s", PB2_READY_FAILURE_THRESHOLD * PB2_READY_PERIOD_S,
               *_ready_band(PB2_READY_PERIOD_S, PB2_READY_FAILURE_THRESHOLD), f"{S_PROBES}; CASES-workloads.md PB-2 (b) [5, 10] s + w; {UP_WORKER}"),
        within("PB-2", "ready_after_restore_s", PB2_READY_SUCCESS_THRESHOLD * PB2_READY_PERIOD_S,
               *_ready_band(PB2_READY_PERIOD_S, PB2_READY_SUCCESS_THRESHOLD), f"{S_PROBES}; CASES-workloads.md PB-2 (b) [5, 10] s + w; {UP_WORKER}"),
        equal("PB-2", "restart_count[ready]", 0, f"{S_PROBES} (readiness never restarts)"),
        equal("PB-2", "probe_grace_stored[startup]", 1, "CASES-workloads.md PB-2 (d); R16 (kubernetes/kubernetes#119377)"),
        equal("PB-2", "killing_event_message[startup]", "Container app failed startup probe, will be restarted", f"R16; {UP_KILL}"),
        within("PB-2", "startup_kill_to_finish_s", MINIMUM_GRACE_PERIOD_S, MINIMUM_GRACE_PERIOD_S - API_TIMESTAMP_RESOLUTION_S,
               MINIMUM_GRACE_PERIOD_S + SIGNAL_DELIVERY_S + API_TIMESTAMP_RESOLUTION_S,
               f"the probe's grace 1 s raised to the {MINIMUM_GRACE_PERIOD_S:g} s floor, then SIGKILL (PID 1 sleep ignores TERM): "
               f"Killing event's firstTimestamp → finishedAt, both truncated: ±{API_TIMESTAMP_RESOLUTION_S:g} s, "
               f"+{SIGNAL_DELIVERY_S:g} s SIGKILL delivery (the R16 regression: ≈ 300 s, the pod's grace)",
               f"CASES-workloads.md PB-2 (d) (≈ 2 s, accept [1, 5]); R16; {UP_PROBE_GRACE}"),
        equal("PB-2", "startup_exit_code", 137, "CASES-workloads.md PB-2 (d) (SIGKILL: 128 + 9)"),
    ],
    VERIFIED_IN,
)

# -- PB-3 handler semantics ------------------------------------------------------------------
# pkg/probe/http/http.go DoHTTPProbe (identical v1.34.4–v1.36.3; v1.37.2 adds an h2c transport
# behind the H2CContainerProbe gate, same DoHTTPProbe): 200 ≤ code < 400 succeeds, but 300–399
# (a redirect the client did not follow: another host, or a 3xx that is no redirect, like 399) is
# probe.Warning "Probe terminated redirects, Response body: <body>", which the prober turns into a
# success with a Warning event ProbeWarning "<Kind> probe warning: <output>"
# (pkg/kubelet/prober/prober.go runProbe). RedirectChecker(false) follows a redirect only to the
# same host name. A failure reads "HTTP probe failed with statuscode: N" (event Unhealthy
# "<Kind> probe failed: <output>"). pkg/probe/http/request.go newProbeRequest: User-Agent
# "kube-probe/<major>.<minor>" (userAgent: k8s.io/component-base/version Get(), the kubelet's own
# build), Accept "*/*". pkg/probe/tcp/tcp.go DoTCPProbe: the dial error's text (identical in the
# four versions).
PB3_PERIOD_S = 2
PB3_SUCCEEDS = ("code-200", "redirect-same", "code-399", "redirect-other", "tcp-open")
PB3_FAILS = {"code-400": 400, "code-500": 500, "code-503": 503}
PB3_WARNS = {"code-399": 399, "redirect-other": 302}
UP_HTTP = "[UP] pkg/probe/http/http.go DoHTTPProbe, RedirectChecker (v1.34.4 … v1.37.2)"
UP_PROBER = "[UP] pkg/kubelet/prober/prober.go runProbe (Warning → Success + ProbeWarning event) (v1.34.4 … v1.37.2)"
UP_REQUEST = ("[UP] pkg/probe/http/request.go newProbeRequest, userAgent («kube-%s/%s.%s», component-base version.Get()) "
              "(v1.34.4 … v1.37.2: identical)")
register(
    [
        *[equal("PB-3", f"ready[{c}]", True, f"[S1] L218; {UP_HTTP}; {UP_PROBER}") for c in PB3_SUCCEEDS],
        *[equal("PB-3", f"ready[{c}]", False, f"[S1] L218; {UP_HTTP}") for c in (*PB3_FAILS, "tcp-closed")],
        *[equal("PB-3", f"unhealthy_message[{c}]", f"Readiness probe failed: HTTP probe failed with statuscode: {code}",
                f"[S2] L1148–1149; {UP_HTTP}; {UP_PROBER}") for c, code in PB3_FAILS.items()],
        *[equal("PB-3", f"warning_message[{c}]", rf"Readiness probe warning: Probe terminated redirects, Response body: {code}\s*",
                f"CASES-workloads.md PB-3 (b) (verify text); {UP_HTTP} (3xx not followed → probe.Warning); {UP_PROBER}",
                pattern=True) for c, code in PB3_WARNS.items()],
        equal("PB-3", "warning_events[redirect-same]", 0, f"{UP_HTTP} (RedirectChecker follows a same-host redirect: the 200 decides)"),
        equal("PB-3", "redirect_followed[redirect-same]", True, f"{UP_HTTP} RedirectChecker (same host name)"),
        equal("PB-3", "unhealthy_message[tcp-closed]", r"Readiness probe failed: dial tcp [0-9.]+:1: connect: connection refused",
              "CASES-workloads.md PB-3 (d); [UP] pkg/probe/tcp/tcp.go DoTCPProbe (err.Error()) (v1.34.4 … v1.37.2)", pattern=True),
        equal("PB-3", "accept_header", "*/*", f"{UP_REQUEST} (Accept not given: «*/*»)"),
        *[equal("PB-3", "user_agent", f"kube-probe/1.{m}",
                f"[S1] L218 (kube-probe/1.36 on 1.36); {UP_REQUEST}; the kubelet's minor", minors=(m, m)) for m in (34, 35, 36, 37)],
    ],
    VERIFIED_IN,
)

# PB-3 (e) gRPC: pkg/probe/grpc/grpc.go Probe (v1.34.4 … v1.36.3 identical; v1.37.2 adds only the
# TLS mode behind the GRPCContainerProbeTLS gate, plain by default): it dials the pod IP with
# grpc.WithUserAgent("kube-probe/<major>.<minor>") (grpc-go appends " grpc-go/<its version>") and
# calls grpc.health.v1.Health/Check for the probe's service ("" here); a status other than SERVING
# is a Failure with output «service unhealthy (responded with "<STATUS>")», and err is always nil,
# so runProbeWithRetries never retries it (pkg/kubelet/prober/prober.go). The event is Unhealthy
# "Readiness probe failed: <output>". The readiness arithmetic is PB-2's (F 1, P 2 s): the ticker's
# phase against the switch is arbitrary (seen 0.03 s and 2.02 s). A probe before the server
# listens fails too ("timeout: failed to connect service …": grpc.WithBlock): the message judged is
# the first one after the switch.
PB3_GRPC_NOT_SERVING_AFTER_S = 20
UP_GRPC = "[UP] pkg/probe/grpc/grpc.go Probe (v1.34.4 … v1.37.2: same outcome and texts; 1.37 adds a TLS mode, off here)"
register(
    [
        equal("PB-3", "ready_while_serving[grpc]", True, f"[S1] L218 (grpc on the standard health protocol); {UP_GRPC}"),
        within("PB-3", "not_ready_after_not_serving_s[grpc]", PB3_PERIOD_S, *_ready_band(PB3_PERIOD_S, 1),
               f"CASES-workloads.md PB-3 (e); {UP_GRPC}; {UP_WORKER}"),
        equal("PB-3", "unhealthy_message[grpc]", 'Readiness probe failed: service unhealthy (responded with "NOT_SERVING")',
              f"CASES-workloads.md PB-3 (e) (verify text); {UP_GRPC}; {UP_PROBER}"),
        *[equal("PB-3", "user_agent[grpc]", rf"kube-probe/1\.{m} grpc-go/[0-9][0-9.]*(-dev)?",
                f"{UP_GRPC} (grpc.WithUserAgent «kube-probe/%s.%s», component-base version.Get(); grpc-go appends its own); the kubelet's minor",
                pattern=True, minors=(m, m)) for m in (34, 35, 36, 37)],
    ],
    VERIFIED_IN,
)

# -- PB-4 timeouts ---------------------------------------------------------------------------
# HTTP: the client's Timeout is timeoutSeconds (pkg/probe/http/http.go Probe: http.Client{Timeout});
# Go's client error "Get "<url>": context deadline exceeded (Client.Timeout exceeded while awaiting
# headers)" is the output (DoHTTPProbe: err.Error()). Exec: the kubelet asks the runtime for
# ExecSync with Timeout = timeoutSeconds and a gRPC deadline of runtimeRequestTimeout (2 min,
# pkg/kubelet/apis/config/v1beta1/defaults.go) + timeoutSeconds (k8s.io/cri-client
# remote_runtime.go ExecSync); a DeadlineExceeded answer becomes «command timed out: "<cmd>" timed
# out after <timeout>» (execSyncV1, ErrCommandTimedOut), a failure (pkg/probe/exec/exec.go Probe;
# 1.34.4 still behind the ExecProbeTimeout gate, GA and on). containerd 2.3.4 kills the exec at
# Timeout and then drains its output for drain_exec_sync_io_timeout ("0s": forever) — a background
# child that keeps stdout open holds the probe until the child exits or the kubelet's deadline
# (internal/cri/server/container_execsync.go execInternal, drainExecSyncIO; R17).
PB4_PERIOD_S, PB4_TIMEOUT_S = 5, 2
PB4_CHILD_S = 60           # (d): the child's life
RUNTIME_REQUEST_TIMEOUT_S = 120
PB4_NEVER_READY_WATCH_S = 3 * PB4_PERIOD_S  # (a), (b): watched for three periods
STAMP_LAG_S = 0.5          # a probe's stamp lags its start by the fork of adjtimex (as HK-1)
UP_EXEC = ("[UP] pkg/probe/exec/exec.go Probe; k8s.io/cri-client pkg/remote_runtime.go ExecSync, execSyncV1 "
           "(ErrCommandTimedOut); pkg/kubelet/apis/config/v1beta1/defaults.go RuntimeRequestTimeout 2m (v1.34.4 … v1.37.2)")
UP_CONTAINERD = ("[containerd v2.3.4] internal/cri/server/container_execsync.go execInternal, drainExecSyncIO; "
                 "internal/cri/config/config_unix.go DrainExecSyncIOTimeout \"0s\"")
UP_HTTP_TIMEOUT = "[UP] pkg/probe/http/http.go Probe (http.Client Timeout = timeoutSeconds), DoHTTPProbe (err.Error()) (v1.34.4 … v1.37.2)"
_STATUS_WHY = f"+{STATUS_UPDATE_S:g} s the status write and watch (receive time of the Ready change)"
register(
    [
        equal("PB-4", "drain_exec_sync_io_timeout", "0s", f"CASES-workloads.md PB-4 (drain timeout \"0s\"); {UP_CONTAINERD}"),
        equal("PB-4", "ever_ready[http-slow]", False, f"[S1] L244; {UP_HTTP_TIMEOUT}"),
        equal("PB-4", "ever_ready[exec-sleep]", False, f"[S1] L244; {UP_EXEC}"),
        equal("PB-4", "unhealthy_message[http-slow]",
              r'Readiness probe failed: Get "http://[0-9.]+:8080/slow\?delay=3s": context deadline exceeded '
              r"\(Client\.Timeout exceeded while awaiting headers\)",
              f"CASES-workloads.md PB-4 (a); {UP_HTTP_TIMEOUT}", pattern=True),
        equal("PB-4", "unhealthy_message[exec-sleep]", f'Readiness probe failed: command timed out: "sleep 3" timed out after {PB4_TIMEOUT_S}s',
              f"CASES-workloads.md PB-4 (b) (verify wording); {UP_EXEC}; {UP_CONTAINERD}"),
        within("PB-4", "ready_after_first_probe_s[child-quiet]", 0, -STAMP_LAG_S, PROBE_EXEC_S + STATUS_UPDATE_S,
               f"the control's child holds no pipe: the probe ends at once; −{STAMP_LAG_S:g} s the probe's own stamp lag; "
               f"+{PROBE_EXEC_S:g} s the exec {_STATUS_WHY}", f"CASES-workloads.md PB-4 (e); R17; {UP_CONTAINERD}"),
        within("PB-4", "ready_after_first_probe_s[child-60]", PB4_CHILD_S, PB4_CHILD_S - STAMP_LAG_S,
               PB4_CHILD_S + PROBE_EXEC_S + STATUS_UPDATE_S,
               f"the probe ends when its child exits {PB4_CHILD_S} s after the probe's start (drain forever), succeeds: "
               f"−{STAMP_LAG_S:g} s stamp lag; +{PROBE_EXEC_S:g} s exec end {_STATUS_WHY}",
               f"CASES-workloads.md PB-4 (d) ([55, 66] s); R17; {UP_CONTAINERD}"),
        equal("PB-4", "unhealthy_before_ready[child-60]", False,
              f"CASES-workloads.md PB-4 (d); {UP_CONTAINERD} (the probe neither times out nor fails before the child exits)"),
        within("PB-4", "first_failure_after_first_probe_s[child-300]", RUNTIME_REQUEST_TIMEOUT_S + PB4_TIMEOUT_S,
               RUNTIME_REQUEST_TIMEOUT_S + PB4_TIMEOUT_S - STAMP_LAG_S, RUNTIME_REQUEST_TIMEOUT_S + PB4_TIMEOUT_S + PROBE_EXEC_S + STATUS_UPDATE_S,
               f"only the kubelet's gRPC deadline ends the probe: runtimeRequestTimeout {RUNTIME_REQUEST_TIMEOUT_S} s + "
               f"timeoutSeconds {PB4_TIMEOUT_S} s; −{STAMP_LAG_S:g} s stamp lag; +{PROBE_EXEC_S:g} s +{STATUS_UPDATE_S:g} s "
               "event write and watch (receive time of the Unhealthy event)",
               f"CASES-workloads.md PB-4 (c) ([117, 128] s); R17; {UP_EXEC}; {UP_CONTAINERD}"),
        equal("PB-4", "unhealthy_message[child-300]",
              r'Readiness probe failed: command timed out: "sh -c [\s\S]*sleep 300 &(\\n)?" timed out after ' + f"{PB4_TIMEOUT_S}s",
              f"CASES-workloads.md PB-4 (c); {UP_EXEC} (%q of the whole command, its newlines escaped or kept)", pattern=True),
        equal("PB-4", "ever_ready[child-300]", False, f"CASES-workloads.md PB-4 (c); {UP_CONTAINERD}"),
    ],
    VERIFIED_IN,
)
