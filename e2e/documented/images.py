"""IM — image pulls (CASES-workloads.md §1.10, §2 "Image pull", "Image back-off constants", "Serial
pulls", "Pod worker retry", §3.2, §4 IM-1 … IM-4), against a real registry.

The registry is CNCF distribution v3 (``hack/images/registry``) on the suite's Docker network,
reachable from the nodes only (:mod:`e2e.cluster.registry`); its access log is the registry's side
of every pull (each request's time, ns, and status). The catalogue's loopback targets (§3.2,
``127.0.0.1:5999`` in the node: nothing listens, connection refused) stay as the no-registry baseline.

Upstream, read in v1.34.4, v1.35.4, v1.36.3 and v1.37.2 (``$(go env GOMODCACHE)/k8s.io/kubernetes@…``):

- pkg/kubelet/images/image_manager.go ``EnsureImageExists`` → ``imagePullPrecheck`` (the policy:
  ``shouldPullImage`` — Never → never, Always → always, IfNotPresent → only when absent; a present
  image with IfNotPresent never reaches the back-off check), then ``pullImage``: the back-off check
  (``IsInBackOffSinceUpdate`` on key ``<pod UID>_<image>``: event ``BackOff`` "Back-off pulling image
  "<i>"", error ``ImagePullBackOff``), event ``Pulling`` "Pulling image "<i>"", the CRI pull, and on
  failure event ``Failed`` "Failed to pull image "<i>": <err>", ``backOff.Next`` and the error
  ``ErrImagePull`` with the CRI's message (``evalCRIPullErr``); on success ``Pulled`` "Successfully
  pulled image "<i>" in <d> (<d'> including waiting). Image size: <n> bytes.". The same texts in
  all four versions (1.37 only moves the logger into an argument).
- The "already present" text depends on the gate ``KubeletEnsureSecretPulledImages``: off →
  "Container image "<i>" already present on machine"; on → "… and can be accessed by the pod"
  (pkg/features/kube_features.go: Alpha/off in 1.34, Beta/on from 1.35; open point 11). With the
  gate on, a present image is still pulled when its image ID was pulled by the kubelet under
  another name (pullmanager ``MustAttemptImagePull``: a pulled record makes it "pulled by the
  kubelet", the default policy NeverVerifyPreloadedImages then wants a credential record for the
  name) — IM-2 ``retagged``.
- ``ErrImageNeverPull`` "Container image "<i>" is not present with pull policy of Never"
  (``imageNotPresentOnNeverPolicyError``); ``InvalidImageName`` with "Failed to apply default image
  tag "<i>": couldn't parse image name "<i>": <reference error>" (``applyDefaultImageTag`` →
  pkg/util/parsers/parsers.go ``ParseImageName`` → github.com/distribution/reference v0.6.0
  ``ParseNormalizedNamed``: "invalid reference format: repository name (<r>) must be lowercase"),
  event ``InspectFailed``. Reasons: pkg/kubelet/images/types.go; events: pkg/kubelet/events/event.go.
- Back-off: pkg/kubelet/kubelet.go ``imageBackOffPeriod`` 10 s, ``MaxImageBackOff`` 300 s,
  ``flowcontrol.NewBackOff`` (client-go util/flowcontrol/backoff.go: doubling from 10 s, capped).
- Retry: pkg/kubelet/pod_workers.go ``completeWork``: after a failed sync the pod is requeued after
  ``backOffPeriod`` 10 s × ``wait.Jitter`` factor 0.5 ([10, 15) s). From 1.35 an error carrying a
  back-off expiry (``kubecontainer.BackoffError``, ``MinBackoffExpiration``) is requeued at that
  expiry — but only ``ErrCrashLoopBackOff`` is ever wrapped (kuberuntime_manager.go
  ``doBackOff``, the only ``NewBackoffError`` caller in 1.35.4, 1.36.3, 1.37.2): an image
  back-off error is a plain error, so every minor retries every 10–15 s (open point 5: settled
  from the source, the same on all four).
- Serial pulls: pkg/kubelet/apis/config/v1beta1/defaults.go ``SetDefaults_KubeletConfiguration``:
  ``serializeImagePulls`` true unless ``maxParallelImagePulls`` ≥ 2 (kind sets neither); the
  serial puller (images/puller.go) runs one pull at a time, in order.
- Default policy: pkg/apis/core/v1/defaults.go ``SetDefaults_Container``: tag ``latest`` (or none)
  → Always, else IfNotPresent.
"""

from __future__ import annotations

from ..judge.expectations import Band, Expectation, at_least, equal, exact, register, within
from .kubelet import CONTAINER_START_S, STATUS_UPDATE_S, SYNC_TICKER_S, UPGRADE_PATH_READ

VERIFIED_IN = UPGRADE_PATH_READ
ALL = (34, None)

# -- sources ---------------------------------------------------------------------------------
S1_PULL = "[S1] L61 (the kubelet calls CRI PullImage per imagePullPolicy), L269, L379"
UP_ENSURE = "[UP] pkg/kubelet/images/image_manager.go EnsureImageExists, imagePullPrecheck (v1.34.4–v1.37.2)"
UP_PULL = "[UP] pkg/kubelet/images/image_manager.go pullImage, evalCRIPullErr (v1.34.4–v1.37.2)"
UP_GATE_34 = "[UP] pkg/features/kube_features.go KubeletEnsureSecretPulledImages: Alpha 1.33, default false (v1.34.4)"
UP_GATE_35 = ("[UP] pkg/features/kube_features.go KubeletEnsureSecretPulledImages: Beta 1.35, default true "
              "(v1.35.4, v1.36.3, v1.37.2; read live from the kubelet's /metrics)")
UP_PULLMGR = ("[UP] pkg/kubelet/images/pullmanager/image_pull_manager.go MustAttemptImagePull, image_pull_policies.go "
              "NeverVerifyPreloadedPullPolicy (v1.35.4, v1.36.3, v1.37.2)")
UP_NEVER = "[UP] pkg/kubelet/images/image_manager.go imageNotPresentOnNeverPolicyError; images/types.go ErrImageNeverPull"
UP_INVALID = ("[UP] pkg/kubelet/images/image_manager.go EnsureImageExists → applyDefaultImageTag; pkg/util/parsers/parsers.go "
              "ParseImageName; github.com/distribution/reference v0.6.0 normalize.go ParseNormalizedNamed")
UP_DEFAULTS = "[UP] pkg/apis/core/v1/defaults.go SetDefaults_Container (v1.34.4–v1.37.2)"
UP_BACKOFF = ("[UP] pkg/kubelet/kubelet.go imageBackOffPeriod = 10 s, MaxImageBackOff = 300 s (NewBackOff); "
              "client-go util/flowcontrol/backoff.go Next (doubling, capped)")
UP_RETRY = ("[UP] pkg/kubelet/pod_workers.go completeWork (backOffPeriod 10 s × wait.Jitter 0.5; v1.35+: "
            "MinBackoffExpiration only for kubecontainer.BackoffError, which only ErrCrashLoopBackOff carries: "
            "kuberuntime_manager.go doBackOff)")
UP_SERIAL = ("[UP] pkg/kubelet/apis/config/v1beta1/defaults.go SetDefaults_KubeletConfiguration (serializeImagePulls "
             "true unless maxParallelImagePulls ≥ 2); pkg/kubelet/images/puller.go serialImagePuller")
CONTAINERD = ("containerd v2.3.4 CRI PullImage / remotes/docker resolver (the offline node images' runtime), "
              "text as seen on v1.37.2")
REGISTRY = "[UP] CNCF distribution v3.1.2 registry/handlers (the registry's own answer, read from the wire)"

# containerd's error texts (CONTAINERD), with the image reference in each place it names it
NOT_FOUND = ('rpc error: code = NotFound desc = failed to pull and unpack image "{image}": '
             'failed to resolve reference "{image}": {image}: not found')
DENIED = ('failed to pull and unpack image "{image}": failed to resolve reference "{image}": pull access denied, '
          'repository does not exist or may require authorization: authorization failed: no basic auth credentials')

# -- mechanism constants ------------------------------------------------------------------------
IMAGE_BACKOFF_S = 10.0      # kubelet.go imageBackOffPeriod
MAX_IMAGE_BACKOFF_S = 300.0  # kubelet.go MaxImageBackOff
RETRY_S = 10.0              # pod_workers.go: kubelet.go backOffPeriod, the requeue after a failed sync
RETRY_JITTER = 0.5          # pod_workers.go workerBackOffPeriodJitterFactor
RETRY_MAX_S = RETRY_S * (1 + RETRY_JITTER)
# A pull the registry answers at once (404, 401, refused) or a small image over the bridge:
# budget 1 s between the Pulling decision and the back-off's start (Next at the failure).
PULL_ANSWER_S = 1.0
# containerd's registry client: net.Dialer KeepAlive 30 s (Go: first probe after 30 s idle).
KEEPALIVE_S = 30.0
CONTAINERD_KEEPALIVE = ("containerd v2.3.4 core/remotes/docker/registry.go DefaultHTTPTransport (net.Dialer KeepAlive 30 s), "
                        "config/hosts.go (the same for hosts.toml hosts)")
STOP_CMD_S = 1.0   # `docker stop -t 1`: SIGTERM, SIGKILL after 1 s
KUBELET_S = 1.0    # the CRI error back in the kubelet and its event (budget)
# An event's write and the recorder's watch (CASES-workloads.md §3.3 "+w ≤ 0.5 s").
EVENT_LAG_S = 0.5


def backoff_delays(n: int) -> list[float]:
    """The first ``n`` image back-off delays: 10, 20, 40, 80, 160, 300, 300… s."""
    return [min(IMAGE_BACKOFF_S * 2 ** k, MAX_IMAGE_BACKOFF_S) for k in range(n)]


# -- scenario settings ----------------------------------------------------------------------------
# The registry's throttle (e2e.faults.registry.registry_throttled): an image with 1 MiB of random
# data in a layer of its own (no node has it: an image whose layers the node holds is "pulled" with
# one manifest request, seen in the first run) then takes ~30 s to transfer — long enough to cut it (IM-1 stopped mid-pull) or to
# queue a second pull behind it (IM-4).
THROTTLE_RATE = "256kbit"
PAYLOAD_KIB = 1024           # random bytes in the pulled image's own layer (e2e: the payload_image fixture)
CUT_AFTER_MANIFEST_S = 3.0   # the registry is stopped this long after it served the manifest
STOP_WINDOW_S = 20.0         # and stays stopped this long
CUT_FAILED_WAIT_S = 180.0    # a wait (no band): the broken pull's Failed event after the restart
IM4_B_AFTER_S = 3.0          # pod B is created this long after A's pull reached its registry
IM4_WAIT_S = 180.0           # both running: A's throttled pull (~30 s) and B's, with room

# Events of one pod from the kubelet pass client-go's spam filter (tools/record/events_cache.go
# EventSourceObjectSpamFilter: burst 25, then one per 5 min): a back-off sync emits BackOff and
# "Error: ImagePullBackOff", a pull Pulling, Failed and "Error: ErrImagePull" — after about ten
# syncs events are dropped. Counting Pulling events against the registry's pulls holds for the
# first pulls only; the registry's log is the clock of the long tail.
EVENTS_COMPLETE_PULLS = 3

# the next pull after a failure happens at the first pod-worker retry once the back-off expired:
# the retry that crosses the expiry started before it and waits one jittered period, plus the
# sync loop's 1 s tick; the failing pull itself (start to failure) adds its answer time
GAP_SLACK_S = RETRY_MAX_S + SYNC_TICKER_S + PULL_ANSWER_S
GAP_WHY = (f"the back-off starts at the failure (Next) and the next pull is the first pod-worker retry after it expires: "
           f"retries every {RETRY_S:g}–{RETRY_MAX_S:g} s (jitter {RETRY_JITTER}), so up to one retry period "
           f"+{SYNC_TICKER_S:g} s sync tick late; +{PULL_ANSWER_S:g} s the failing pull's own answer (start-to-start gap); "
           "no expiry-aware requeue for image back-off on any minor (pod_workers.go completeWork)")


def _gap(k: int, d: float) -> Expectation:
    return Expectation(case="IM-1", name=f"pull_gap_s[{k}]", documented=d, unit="s", band=Band(d, d + GAP_SLACK_S),
                       why=GAP_WHY, source=f"CASES-workloads.md IM-1; {UP_BACKOFF}; {UP_RETRY}; R41", minors=ALL)


register(
    [
        # -- IM-3: the policy matrix ------------------------------------------------------------
        equal("IM-3", "ifnotpresent_pulled_message", 'Container image "{image}" already present on machine',
              source=f"CASES-workloads.md IM-3a (open point 11); {UP_ENSURE}; {UP_GATE_34}", minors=(34, 34)),
        equal("IM-3", "ifnotpresent_pulled_message",
              'Container image "{image}" already present on machine and can be accessed by the pod',
              source=f"CASES-workloads.md IM-3a; {UP_ENSURE}; {UP_GATE_35} (MustAttemptImagePull false: NeverVerifyPreloadedImages)",
              minors=(35, None)),
        exact("IM-3", "ifnotpresent_registry_requests", 0, source=f"CASES-workloads.md IM-3a; {UP_ENSURE} (shouldPullImage)",
              why="IfNotPresent with the image present: no CRI pull, so containerd asks the registry nothing", minors=ALL),
        equal("IM-3", "always_state", "running",
              source=f"CASES-workloads.md IM-3b; {UP_PULL} (with a registry that holds the image the pull succeeds)", minors=ALL),
        at_least("IM-3", "always_manifest_requests", 1,
                 source=f"CASES-workloads.md IM-3b; {UP_ENSURE} (Always: a CRI pull although present); {REGISTRY}",
                 why="Always pulls even with the image on the node: containerd resolves the tag at the registry "
                     "(HEAD, then GET of the manifest), at least one manifest request", minors=ALL),
        equal("IM-3", "always_pulled_message",
              r'Successfully pulled image "{image}" in [0-9.]+m?s \([0-9.]+m?s including waiting\)\. Image size: [0-9]+ bytes\.',
              pattern=True, source=f"{UP_PULL} (PulledImage after a successful pull)", minors=ALL),
        equal("IM-3", "loopback_always_failed_message", r'Failed to pull image "{image}": .*connection refused.*', pattern=True,
              source=f"CASES-workloads.md IM-3b, §3.2 (refused loopback); {UP_PULL}", minors=ALL),
        equal("IM-3", "loopback_always_reason", "ErrImagePull",
              source=f"CASES-workloads.md IM-3b; {UP_PULL}; images/types.go ErrImagePull", minors=ALL),
        equal("IM-3", "never_reason", "ErrImageNeverPull", source=f"CASES-workloads.md IM-3c; {UP_NEVER}", minors=ALL),
        equal("IM-3", "never_message", 'Container image "{image}" is not present with pull policy of Never',
              source=f"CASES-workloads.md IM-3c; {UP_NEVER}", minors=ALL),
        exact("IM-3", "never_registry_requests", 0, source=f"CASES-workloads.md IM-3c; {UP_NEVER}",
              why="Never: no CRI pull at all, so no request", minors=ALL),
        equal("IM-3", "invalid_reason", "InvalidImageName", source=f"CASES-workloads.md IM-3d; {UP_INVALID}", minors=ALL),
        equal("IM-3", "invalid_message",
              'Failed to apply default image tag "{image}": couldn\'t parse image name "{image}": '
              "invalid reference format: repository name (library/Busybox) must be lowercase",
              source=f"CASES-workloads.md IM-3d; {UP_INVALID}", minors=ALL),
        equal("IM-3", "invalid_event_reason", "InspectFailed",
              source=f"{UP_INVALID}; pkg/kubelet/events/event.go FailedToInspectImage", minors=ALL),
        equal("IM-3", "default_policy_latest", "Always", source=f"CASES-workloads.md IM-3e; {UP_DEFAULTS}", minors=ALL),
        equal("IM-3", "default_policy_fixed_tag", "IfNotPresent", source=f"CASES-workloads.md IM-3e; {UP_DEFAULTS}", minors=ALL),
        # -- IM-1: an absent tag, 404 ---------------------------------------------------------------
        equal("IM-1", "registry_manifest_status", 404, source=f"CASES-workloads.md IM-1 (with a registry); {REGISTRY}: "
              "an absent tag of an existing repository is MANIFEST_UNKNOWN", minors=ALL),
        equal("IM-1", "registry_error_code", "MANIFEST_UNKNOWN", source=f"{REGISTRY} (errcode MANIFEST_UNKNOWN, 'manifest unknown')",
              minors=ALL),
        equal("IM-1", "first_reason", "ErrImagePull", source=f"CASES-workloads.md IM-1; {UP_PULL}", minors=ALL),
        equal("IM-1", "backoff_reason", "ImagePullBackOff", source=f"CASES-workloads.md IM-1; {UP_PULL} (ErrImagePullBackOff)",
              minors=ALL),
        equal("IM-1", "backoff_message", f'Back-off pulling image "{{image}}": ErrImagePull: {NOT_FOUND}',
              source=f"{UP_PULL} (the back-off message wraps the previous pull error: prevPullErrMsg)", minors=ALL),
        exact("IM-1", "pulls_equal_pulling_events", 1, source=f"{UP_PULL} (one Pulling event per CRI pull)",
              why="a flag (1 = every pull the registry saw had its Pulling event, none more)", minors=ALL),
        equal("IM-1", "failed_message", f'Failed to pull image "{{image}}": {NOT_FOUND}',
              source=f"CASES-workloads.md IM-1; {UP_PULL}; {CONTAINERD} (NotFound for the 404)", minors=ALL),
        equal("IM-1", "err_image_pull_message", NOT_FOUND,
              source=f"{UP_PULL} (evalCRIPullErr: the CRI error text is the waiting message); {CONTAINERD}", minors=ALL),
        *(_gap(k, d) for k, d in enumerate(backoff_delays(7), start=1)),
        # -- IM-1 against the htpasswd registry -------------------------------------------------------
        equal("IM-1", "auth_registry_status", 401, source=f"{REGISTRY} (registry/auth/htpasswd: no credentials → 401)", minors=ALL),
        equal("IM-1", "auth_registry_challenge", 'Basic realm="ple2e"',
              source=f"{REGISTRY} (htpasswd challenge: Basic realm=<auth.htpasswd.realm>, e2e.cluster.registry.AUTH_REALM)", minors=ALL),
        equal("IM-1", "auth_registry_error_code", "UNAUTHORIZED", source=f"{REGISTRY} (errcode UNAUTHORIZED 'authentication required')",
              minors=ALL),
        equal("IM-1", "auth_failed_message", f'Failed to pull image "{{image}}": {DENIED}',
              source=f"{UP_PULL}; {CONTAINERD} (the 401 with a Basic challenge and no credentials: no gRPC status prefix)",
              minors=ALL),
        # -- IM-1 with the registry stopped mid-pull -------------------------------------------------
        equal("IM-1", "cut_failed_message",
              r'Failed to pull image "{image}": failed to pull and unpack image "{image}": failed to copy: '
              r'read tcp [0-9.]+:[0-9]+->[0-9.]+:{port}: read: connection reset by peer', pattern=True,
              source=f"{UP_PULL}; {CONTAINERD} (the blob read reset by the restarted registry's address; {{port}} the "
                     f"port the node dials: the registry container's 5000, a registry pod's NodePort)", minors=ALL),
        exact("IM-1", "cut_failed_during_stop", 0,
              why=f"the registry's close dies in the throttle's queue with its network namespace and the node, only "
                  f"receiving, sends nothing until its keepalive ({KEEPALIVE_S:g} s idle) — longer than the "
                  f"{STOP_WINDOW_S:g} s stop: no error while stopped",
              source=f"{CONTAINERD_KEEPALIVE}; measured on v1.37.2 (first run: no Failed within 30 s of the stop)", minors=ALL),
        within("IM-1", "cut_failed_after_stop_s", KEEPALIVE_S, KEEPALIVE_S - STOP_CMD_S, KEEPALIVE_S + KUBELET_S + EVENT_LAG_S,
               why=f"the node's first packet is its keepalive probe {KEEPALIVE_S:g} s after the last byte it received (at most "
                   f"{STOP_CMD_S:g} s before `docker stop -t 1` returned); the registry is back on the same address by then "
                   f"(stop window {STOP_WINDOW_S:g} s) and resets it: containerd's read fails, the kubelet emits Failed "
                   f"(+{KUBELET_S:g} s) and the recorder sees it (+{EVENT_LAG_S:g} s)",
              source=f"{CONTAINERD_KEEPALIVE}; {UP_PULL}; measured 29.8 s on v1.37.2", minors=ALL),
        equal("IM-1", "cut_pulled_after_restart",
              r'Successfully pulled image "{image}" in [0-9.]+m?s \([0-9.]+m?s including waiting\)\. Image size: [0-9]+ bytes\.',
              pattern=True, source=f"{UP_PULL} (the pull after the back-off, the registry back)", minors=ALL),
        exact("IM-1", "cut_pulls", 2, why="the cut pull, then one pull after the 10 s back-off that succeeds",
              source=f"{UP_PULL}; {UP_BACKOFF}", minors=ALL),
        # -- IM-2: the image appears during the back-off ------------------------------------------
        within("IM-2", "tagged_running_after_tag_s", RETRY_S, 0.0, RETRY_MAX_S + SYNC_TICKER_S + CONTAINER_START_S + STATUS_UPDATE_S,
               why=f"the next pod-worker retry ({RETRY_S:g}–{RETRY_MAX_S:g} s after the last failed sync, +{SYNC_TICKER_S:g} s tick) "
                   "finds the image present (IfNotPresent: imagePullPrecheck before pullImage's back-off check) and starts "
                   f"the container: +{CONTAINER_START_S:g} s start +{STATUS_UPDATE_S:g} s status",
               source=f"CASES-workloads.md IM-2; R41; {UP_ENSURE}; {UP_RETRY}", minors=ALL),
        exact("IM-2", "tagged_pulls_after_tag", 0, why="present with IfNotPresent: no CRI pull, the registry sees nothing",
              source=f"CASES-workloads.md IM-2; {UP_ENSURE}", minors=ALL),
        equal("IM-2", "tagged_pulled_message", 'Container image "{image}" already present on machine',
              source=f"CASES-workloads.md IM-2 (IM-3 texts); {UP_ENSURE}; {UP_GATE_34}", minors=(34, 34)),
        equal("IM-2", "tagged_pulled_message", 'Container image "{image}" already present on machine and can be accessed by the pod',
              source=f"CASES-workloads.md IM-2 (IM-3 texts); {UP_ENSURE}; {UP_GATE_35}", minors=(35, None)),
        exact("IM-2", "retagged_pulls_after_tag", 0, why="gate off: a present image under IfNotPresent is never pulled",
              source=f"{UP_ENSURE}; {UP_GATE_34}", minors=(34, 34)),
        at_least("IM-2", "retagged_pulls_after_tag", 1,
                 why="gate on: the image ID has a pulled record (the kubelet pulled it as the seed pod's image), so it counts "
                     "as pulled by the kubelet and NeverVerifyPreloadedImages requires a credential check; the new name has no "
                     "credential mapping → MustAttemptImagePull true → pullImage, through the back-off, asks the registry",
                 source=f"{UP_PULLMGR}; {UP_GATE_35}; measured on v1.37.2 (first run: 4th pull at the back-off expiry, 404)",
                 minors=(35, None)),
        Expectation(case="IM-2", name="pushed_pull_after_last_failure_s", documented=40.0, unit="s",
                    band=Band(40.0, 40.0 + GAP_SLACK_S), why="the image in the registry changes nothing before the back-off "
                    f"(40 s after the third failure) expires: {GAP_WHY}",
                    source=f"CASES-workloads.md IM-2 (open point 5); {UP_BACKOFF}; {UP_RETRY}", minors=ALL),
        within("IM-2", "pushed_running_after_pull_s", CONTAINER_START_S, 0.0, PULL_ANSWER_S + CONTAINER_START_S + STATUS_UPDATE_S,
               why=f"the pull of a ~1 MB image over the bridge (budget {PULL_ANSWER_S:g} s), the container's start "
                   f"(+{CONTAINER_START_S:g} s) and the status (+{STATUS_UPDATE_S:g} s)",
               source=f"{UP_PULL} (a successful pull returns to startContainer at once)", minors=ALL),
        # -- IM-4: serial pulls ---------------------------------------------------------------------
        within("IM-4", "b_first_request_after_a_pulled_s", 0.0, -EVENT_LAG_S, PULL_ANSWER_S,
               why="the serial puller takes B's request when A's PullImage returned — the moment the kubelet emits A's Pulled "
                   f"event — and containerd resolves B's tag at once (budget {PULL_ANSWER_S:g} s); A's event reaches the "
                   f"recorder up to {EVENT_LAG_S:g} s late (event write and watch), so B's request may come first",
               source=f"CASES-workloads.md IM-4; {UP_SERIAL}; {UP_PULL} (Pulled after the pull returns)", minors=ALL),
        equal("IM-4", "b_pulling_event_before_a_pulled", 1,
              source=f"{UP_PULL} (the Pulling event is logged before m.puller.pullImage, i.e. before the serial queue); "
                     "the catalogue's 'B's Pulling event only after A's pull returns' does not hold (first run, v1.37.2: "
                     "B's Pulling 30.6 s before A's Pulled)", minors=ALL),
        within("IM-4", "b_waited_minus_queue_time_s", 0.0, -(EVENT_LAG_S + PULL_ANSWER_S), EVENT_LAG_S + PULL_ANSWER_S,
               why="B's '(… including waiting)' minus its pull time is the time from its Pulling event (startTime, just "
                   "before the serial queue) to A's pull return: both ends read from events, each up to "
                   f"{EVENT_LAG_S:g} s late, plus the budget of B's own pull start {PULL_ANSWER_S:g} s",
               source=f"{UP_PULL} (imagePullDuration = time.Since(startTime) includes the wait); {UP_SERIAL}", minors=ALL),
        equal("IM-4", "b_pulled_message",
              r'Successfully pulled image "{image}" in [0-9.]+m?s \([0-9.]+m?s including waiting\)\. Image size: [0-9]+ bytes\.',
              pattern=True, source=f"{UP_PULL} (the 'including waiting' part is B's time in the serial queue)", minors=ALL),
    ],
    VERIFIED_IN,
)
