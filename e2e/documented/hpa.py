"""HP — HorizontalPodAutoscaler with no metrics server (docs/cases/CASES-workloads.md §1.9, §2
"HPA", §4 HP-1).

- Dry runs: the API's behavior defaults, ``minReplicas: 0`` (HPAScaleToZero) and a per-direction
  ``tolerance`` (HPAConfigurableTolerance), per minor.
- Live: a Deployment of 1 replica under an HPA with ``minReplicas: 3`` is scaled to 3 with no
  metrics (the below-minimum correction comes before any metric is read); the next sync cannot
  read CPU: ``ScalingActive`` False ``FailedGetResourceMetric``, Warning events; replicas stay 3.

Source read in v1.34.4, v1.35.4, v1.36.3, v1.37.2: ``pkg/apis/autoscaling/v2/defaults.go`` (the
same file in the four: scaleUp {Pods 4/15 s, Percent 100/15 s, Max, window 0}; scaleDown given
policies kept, selectPolicy Max, window left nil); ``pkg/controller/podautoscaler/horizontal.go``
``reconcileAutoscaler`` (below minReplicas: desired = min, reason "Current number of replicas
below Spec.MinReplicas", no metrics; event "New size: %d; reason: %s"), ``enqueueHPA``
(v1.34.4–v1.36.3: ``AddRateLimited`` with the fixed 15 s interval — a new HPA is first synced
15 s after its creation; v1.37.2: ``queue.Add`` — at once), ``computeStatusForResourceMetric``
(FailedGetResourceMetric); ``pkg/controller/podautoscaler/config/v1alpha1/defaults.go`` (sync
period 15 s); ``pkg/registry/autoscaling/horizontalpodautoscaler/strategy.go`` and
``pkg/features/kube_features.go`` (HPAScaleToZero alpha/off 1.34–1.36, beta/on 1.37;
HPAConfigurableTolerance alpha/off 1.34 — the field dropped —, beta/on 1.35–1.36, GA 1.37).
"""

from __future__ import annotations

from ..judge.expectations import equal, exact, register, within
from .kubelet import KUBELET_HANDOFF_S, STATUS_UPDATE_S, UPGRADE_PATH_READ
from .storage import EVENT_DELIVERY_S

VERIFIED_IN = UPGRADE_PATH_READ

S2_HPA = "[S2] L110–132, L553–568 (hpa.yaml, behavior defaults)"
UP_DEFAULTS = "[UP] pkg/apis/autoscaling/v2/defaults.go SetDefaults_HorizontalPodAutoscalerBehavior, GenerateHPAScaleUpRules, GenerateHPAScaleDownRules"
UP_RECONCILE = "[UP] pkg/controller/podautoscaler/horizontal.go reconcileAutoscaler"
UP_ENQUEUE = "[UP] pkg/controller/podautoscaler/horizontal.go enqueueHPA"
UP_STRATEGY = "[UP] pkg/registry/autoscaling/horizontalpodautoscaler/strategy.go (validation options, dropped fields)"
UP_GATES = "[UP] pkg/features/kube_features.go"

SYNC_PERIOD_S = 15.0  # --horizontal-pod-autoscaler-sync-period (config/v1alpha1/defaults.go)
MIN_REPLICAS = 3
# the scale write → the Deployment and ReplicaSet controllers → three pods, as our watch sees them
SCALE_PROPAGATION_S = KUBELET_HANDOFF_S + STATUS_UPDATE_S

HP1 = [
    equal("HP-1", "scale_up_default", "Pods 4/15,Percent 100/15;Max;window 0", f"{S2_HPA}; {UP_DEFAULTS}"),
    equal("HP-1", "scale_down_as_given", "Pods 1/60;Max;window absent", f"{S2_HPA}; {UP_DEFAULTS} (scaleDown window left nil: the controller's 300 s)"),
    equal("HP-1", "min_replicas_zero", "refused 422", f"{UP_STRATEGY}: MinReplicasLowerBound 1 unless HPAScaleToZero "
          "(alpha/off 1.34–1.36)", minors=(34, 36)),
    equal("HP-1", "min_replicas_zero", "accepted", f"{S2_HPA}; {UP_STRATEGY}; {UP_GATES} HPAScaleToZero beta/on 1.37",
          minors=(37, None)),
    equal("HP-1", "tolerance", "absent", f"{UP_STRATEGY} dropDisabledFields: HPAConfigurableTolerance alpha/off in 1.34",
          minors=(34, 34)),
    # the manifest's "0.05" is a resource.Quantity: the API answers its canonical form, 50m
    # (measured on v1.37.2; the catalogue wrote 0.05)
    equal("HP-1", "tolerance", "50m", f"{UP_GATES} HPAConfigurableTolerance beta/on 1.35–1.36, GA 1.37; "
          "staging api autoscaling/v2 HPAScalingRules.Tolerance *resource.Quantity (canonical form)", minors=(35, None)),
    within("HP-1", "scaled_to_min_after_create_s", SYNC_PERIOD_S, SYNC_PERIOD_S, SYNC_PERIOD_S + SCALE_PROPAGATION_S,
           f"a new HPA is queued with the fixed {SYNC_PERIOD_S:g} s rate limit (AddRateLimited), then the scale write "
           f"and the ReplicaSet's pods reach our watch ({SCALE_PROPAGATION_S:g} s)",
           f"{S2_HPA}; {UP_ENQUEUE} (v1.34.4–v1.36.3); {UP_RECONCILE}", minors=(34, 36)),
    within("HP-1", "scaled_to_min_after_create_s", 0.5, 0, SCALE_PROPAGATION_S,
           f"a new HPA is queued at once (queue.Add); the sync, the scale write and the pods reach our watch "
           f"({SCALE_PROPAGATION_S:g} s)", f"{UP_ENQUEUE} (v1.37.2); {UP_RECONCILE}", minors=(37, None)),
    equal("HP-1", "rescale_message", f"New size: {MIN_REPLICAS}; reason: Current number of replicas below Spec.MinReplicas",
          UP_RECONCILE),
    equal("HP-1", "scaling_active_status", "False", UP_RECONCILE),
    equal("HP-1", "scaling_active_reason", "FailedGetResourceMetric",
          "[UP] pkg/controller/podautoscaler/horizontal.go computeStatusForResourceMetric, getUnableComputeReplicaCountCondition"),
    equal("HP-1", "warning_events", "FailedComputeMetricsReplicas,FailedGetResourceMetric", UP_RECONCILE),
    # measured from the rescale Event's receipt (the test's watch), which the controller's event
    # broadcaster delivers after the sync that rescaled: up to EVENT_DELIVERY_S late, so the
    # next sync's status can be received that much short of one period
    within("HP-1", "metrics_failure_after_rescale_s", SYNC_PERIOD_S, SYNC_PERIOD_S - EVENT_DELIVERY_S,
           SYNC_PERIOD_S + SCALE_PROPAGATION_S, f"the next sync one period ({SYNC_PERIOD_S:g} s) after the rescale; "
           f"its Event received up to {EVENT_DELIVERY_S:g} s late (event broadcaster → API server → watch); "
           f"status write and watch {SCALE_PROPAGATION_S:g} s", f"{UP_RECONCILE}; [UP] config/v1alpha1/defaults.go (15 s)"),
    exact("HP-1", "replicas_after_failure", MIN_REPLICAS, UP_RECONCILE,
          "with the metric failing the HPA changes nothing: replicas stay at the minimum"),
]

register(HP1, VERIFIED_IN)
