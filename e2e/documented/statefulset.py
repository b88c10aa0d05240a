"""ST — StatefulSet (docs/cases/CASES-workloads.md §1.8, §2 "StatefulSet defaults", "StatefulSet
control", §4 ST-1, ST-2, ST-5).

- ST-1: the API's defaults (dry run); OrderedReady creates ordinal k+1 once k is Ready and scales
  down from the top, one pod gone before the next is deleted; Parallel creates and deletes all at once.
- ST-2: a rolling update with ``partition: 2`` replaces only ordinals 3 then 2, each after the
  previous new pod is Ready; partition 0 then replaces 1 and 0 and the revisions meet.
- ST-3: ``maxUnavailable: 2`` in a rolling update, keyed by the live MaxUnavailableStatefulSet gate
  (on 1.34 also on the profile ``gates-1.34``, which turns it on).
- ST-5: ``ordinals.start``, hostname and subdomain; a deleted pod's ordinal is recreated only once
  the old object is gone (a Deployment replaces at once); ``minReadySeconds`` delays availability.

Source read in v1.34.4, v1.35.4, v1.36.3, v1.37.2: ``pkg/apis/apps/v1/defaults.go``
``SetDefaults_StatefulSet`` (OrderedReady, RollingUpdate, partition 0, replicas 1,
revisionHistoryLimit 10, PVC retention Retain/Retain — v1.34.4 behind StatefulSetAutoDeletePVC,
GA and locked on; ``maxUnavailable: 1`` only with MaxUnavailableStatefulSet on);
``pkg/features/kube_features.go`` (MaxUnavailableStatefulSet alpha/off 1.34, beta/off 1.35.4 and
1.36.3, beta/on 1.37.2); ``pkg/controller/statefulset/stateful_set_control.go``
``updateStatefulSet``/``processReplica``/``processCondemned`` (monotonic = OrderedReady: block on
a terminating, not Running-and-Ready or not available replica; condemned pods from the highest
ordinal; an update deletes the highest non-updated ordinal above the partition after every lower
replica is Ready); ``stateful_set_utils.go`` ``getStartOrdinal``, ``initIdentity`` (hostname = pod
name, subdomain = serviceName); ``stateful_set.go`` ``sync`` (re-queued after minReadySeconds: +1 s
in v1.34.4, exactly minReadySeconds from v1.35.4).
"""

from __future__ import annotations

from ..judge.expectations import equal, exact, register, within
from .kubelet import API_TIMESTAMP_RESOLUTION_S, KUBELET_HANDOFF_S, MINIMUM_GRACE_PERIOD_S, STATUS_UPDATE_S, UPGRADE_PATH_READ

VERIFIED_IN = UPGRADE_PATH_READ

S2_STS = "[S2] L673–678 (sts.yaml dry run; OrderedReady, partition)"
S2_DNS = "[S2] L983 (hostname and subdomain)"
UP_DEFAULTS = "[UP] pkg/apis/apps/v1/defaults.go SetDefaults_StatefulSet"
UP_CONTROL = "[UP] pkg/controller/statefulset/stateful_set_control.go updateStatefulSet, processReplica, processCondemned"
UP_UPDATE = "[UP] pkg/controller/statefulset/stateful_set_control.go updateStatefulSet (rolling update from the highest ordinal down to the partition)"
UP_IDENTITY = "[UP] pkg/controller/statefulset/stateful_set_utils.go getStartOrdinal, initIdentity, updateIdentity"
UP_MIN_READY = "[UP] pkg/controller/statefulset/stateful_set.go sync (enqueueSSAfter minReadySeconds), stateful_set_control.go isRunningAndAvailable"
UP_GATE = "[UP] pkg/features/kube_features.go MaxUnavailableStatefulSet"
UP_REPLICASET = "[UP] pkg/controller/replicaset/replica_set.go syncReplicaSet (a terminating pod is not counted: replaced at once)"

READY_AFTER_S = 5      # the container creates /tmp/ready this long after its start
TERM_EXIT_S = 2        # its TERM trap exits after this long
ST5_GRACE_S = 10       # ST-5's TERM-ignoring container: SIGKILL after the grace period
MIN_READY_S = 10
# ST-5's pod m (no probe): Ready this long after the StatefulSet's creation (sandbox, start, relist)
ST5_READY_AFTER_CREATE_S = 4

# A pod event → the StatefulSet controller (informer, work queue, one sync) → the API write →
# our watch: kubelet-free, two hand-offs of ≤ 1 s each.
CONTROLLER_S = KUBELET_HANDOFF_S + STATUS_UPDATE_S
# ST-5's earliest availableReplicas after our watch's Ready: Ready's lastTransitionTime (truncated, up to
# 1 s early) + minReadySeconds, our watch's Ready up to one status write after that time
ST5_AVAILABLE_LOW_S = MIN_READY_S - API_TIMESTAMP_RESOLUTION_S - STATUS_UPDATE_S

ST1 = [
    equal("ST-1", "default[podManagementPolicy]", "OrderedReady", f"{S2_STS}; {UP_DEFAULTS}"),
    equal("ST-1", "default[updateStrategy.type]", "RollingUpdate", f"{S2_STS}; {UP_DEFAULTS}"),
    equal("ST-1", "default[partition]", "0", f"{S2_STS}; {UP_DEFAULTS}"),
    equal("ST-1", "default[whenDeleted]", "Retain", f"{S2_STS}; {UP_DEFAULTS}"),
    equal("ST-1", "default[whenScaled]", "Retain", f"{S2_STS}; {UP_DEFAULTS}"),
    equal("ST-1", "default[replicas]", "1", UP_DEFAULTS),
    equal("ST-1", "default[revisionHistoryLimit]", "10", UP_DEFAULTS),
    equal("ST-1", "default[maxUnavailable]", "absent", f"{UP_DEFAULTS} (MaxUnavailableStatefulSet off: not defaulted); {UP_GATE} "
          "alpha/off 1.34, beta/off 1.35.4 and 1.36.3", minors=(34, 36)),
    equal("ST-1", "default[maxUnavailable]", "1", f"{S2_STS}; {UP_DEFAULTS}; {UP_GATE} beta/on 1.37", minors=(37, None)),
    equal("ST-1", "max_unavailable_gate", False, f"{UP_GATE} (alpha/off 1.34; beta/off 1.35.4, 1.36.3)", minors=(34, 36)),
    equal("ST-1", "max_unavailable_gate", True, f"{UP_GATE} (beta/on 1.37)", minors=(37, None)),
    within("ST-1", "next_created_after_ready_s[OrderedReady]", 0.5, 0, CONTROLLER_S,
           f"host times: Ready(k) reaches the controller and its sync creates k+1 ({KUBELET_HANDOFF_S:g} s), the create "
           f"reaches our watch ({STATUS_UPDATE_S:g} s)", f"{S2_STS}; {UP_CONTROL}"),
    equal("ST-1", "not_ready_at_once_max[OrderedReady]", 1, f"{S2_STS}; {UP_CONTROL}",
          why="monotonic: no new ordinal while a lower one is not Running and Ready"),
    within("ST-1", "next_deleted_after_gone_s[OrderedReady]", 0.5, 0, CONTROLLER_S,
           "host times: the DELETED of the higher ordinal reaches the controller, its sync deletes the next "
           f"({KUBELET_HANDOFF_S:g} s), the deletionTimestamp reaches our watch ({STATUS_UPDATE_S:g} s)", UP_CONTROL),
    equal("ST-1", "scale_down_order[OrderedReady]", "2,1,0", f"{S2_STS}; {UP_CONTROL}"),
    within("ST-1", "created_spread_s[Parallel]", 0.5, 0, CONTROLLER_S,
           f"one sync creates every missing ordinal (burst); the creates reach our watch within {CONTROLLER_S:g} s",
           f"{S2_STS}; {UP_CONTROL} (runForAll, monotonic false)"),
    within("ST-1", "deleted_spread_s[Parallel]", 0.5, 0, CONTROLLER_S,
           f"one sync deletes every condemned ordinal; the deletes reach our watch within {CONTROLLER_S:g} s", UP_CONTROL),
]

ST2 = [
    equal("ST-2", "replaced_order[partition-2]", "3,2", f"{S2_STS}; {UP_UPDATE}"),
    exact("ST-2", "updated_replicas[partition-2]", 2, f"{S2_STS}; {UP_UPDATE}", "ordinals ≥ partition 2 of 4"),
    equal("ST-2", "revisions_differ[partition-2]", True, UP_UPDATE),
    equal("ST-2", "replaced_order[partition-0]", "1,0", f"{S2_STS}; {UP_UPDATE}"),
    equal("ST-2", "revisions_differ[partition-0]", False, UP_UPDATE),
    within("ST-2", "next_deleted_after_ready_s", 0.5, 0, CONTROLLER_S,
           f"host times: the new pod's Ready reaches the controller, its sync deletes the next ordinal ({KUBELET_HANDOFF_S:g} s), "
           f"our watch ({STATUS_UPDATE_S:g} s)", UP_UPDATE),
]

# ST-5 (a): the old pod is killed after its grace period (10 s: the container ignores TERM), the
# kubelet's final delete removes it, then the controller recreates the ordinal.
RECREATE_AFTER_DELETE_S = ST5_GRACE_S
ST5 = [
    equal("ST-5", "pod_names", "s-5,s-6", f"{S2_DNS}; {UP_IDENTITY}"),
    equal("ST-5", "hostname_is_pod_name", True, f"{S2_DNS}; {UP_IDENTITY}"),
    equal("ST-5", "subdomain_is_service", True, f"{S2_DNS}; {UP_IDENTITY}"),
    within("ST-5", "recreated_after_delete_s[statefulset]", RECREATE_AFTER_DELETE_S, RECREATE_AFTER_DELETE_S,
           RECREATE_AFTER_DELETE_S + 2 * CONTROLLER_S,
           f"the grace period {ST5_GRACE_S} s (TERM ignored, SIGKILL), then the kubelet's kill and final delete "
           f"({CONTROLLER_S:g} s), the controller's create and our watch ({CONTROLLER_S:g} s)",
           "CASES-faults C34; " + UP_CONTROL + " (a terminating replica blocks its ordinal)"),
    within("ST-5", "recreated_after_delete_s[deployment]", 0.5, 0, CONTROLLER_S,
           f"the ReplicaSet controller replaces a terminating pod at once; create and watch within {CONTROLLER_S:g} s",
           UP_REPLICASET),
    # measured from our watch's Ready, which comes the kubelet's status write after the lastTransitionTime the
    # controller counts from: v1.36.3 read 8.9 s (2026-12-02), under the first band's 9 s that forgot it
    within("ST-5", "available_after_ready_s", MIN_READY_S, ST5_AVAILABLE_LOW_S,
           MIN_READY_S + CONTROLLER_S, f"minReadySeconds {MIN_READY_S} s from Ready's lastTransitionTime (truncated: "
           f"−{API_TIMESTAMP_RESOLUTION_S:g} s), which our watch sees up to the status write ({STATUS_UPDATE_S:g} s) later; "
           f"re-queue and status write {CONTROLLER_S:g} s", UP_MIN_READY, minors=(35, None)),
    # v1.34.4 read 16 s (2026-12-02: first sync 13:33:59.10, Ready 13:34:03.13, availableReplicas
    # 13:34:19.12): not the minReadySeconds + 1 s the pod handler asks for, but the re-queue chain below
    within("ST-5", "available_after_ready_s", 2 * MIN_READY_S - ST5_READY_AFTER_CREATE_S,
           ST5_AVAILABLE_LOW_S, 2 * MIN_READY_S + CONTROLLER_S,
           f"v1.34.4: every sync while availableReplicas != replicas re-queues the set minReadySeconds later — from "
           f"its first sync at creation on — and the work queue keeps only the earliest of a key's waits, so the pod "
           f"handler's 'Ready + minReadySeconds + 1 s' is dropped: availableReplicas is written at the first link of "
           f"that {MIN_READY_S} s chain at or after Ready's lastTransitionTime + {MIN_READY_S} s, between "
           f"{ST5_AVAILABLE_LOW_S:g} s (truncation, our watch's Ready a status write late) and {2 * MIN_READY_S:g} s after Ready + the "
           f"write {CONTROLLER_S:g} s; {2 * MIN_READY_S - ST5_READY_AFTER_CREATE_S:g} s for a pod Ready "
           f"~{ST5_READY_AFTER_CREATE_S} s after the set's creation",
           f"{UP_MIN_READY}; [UP] v1.34.4 stateful_set.go syncStatefulSet (enqueueSSAfter minReadySeconds while "
           f"AvailableReplicas != Replicas), updatePod (minReadySeconds + 1 s); client-go v0.34.4 "
           f"util/workqueue/delaying_queue.go insert (a waiting key's time only moves sooner)", minors=(34, 34)),
]

# the kill of ST-1's pods: TERM trap exits after TERM_EXIT_S (≥ the 2 s minimum grace)
assert TERM_EXIT_S >= MINIMUM_GRACE_PERIOD_S

# -- ST-3 ------------------------------------------------------------------------------------
UP_MAX_UNAVAILABLE = ("[UP] pkg/controller/statefulset/stateful_set_control.go updateStatefulSet → "
                      "updateStatefulSetAfterInvariantEstablished (gate on: delete from the top while fewer than "
                      "maxUnavailable replicas are unavailable, any podManagementPolicy)")
UP_DROP = ("[UP] pkg/registry/apps/statefulset/strategy.go dropStatefulSetDisabledFields (gate off: maxUnavailable "
           "dropped on create); stateful_set_control.go updateStatefulSet (gate off: one pod at a time)")
# Keyed by the MaxUnavailableStatefulSet gate the cluster runs, read live (the first qualifier: "gate on" /
# "gate off"; the API server's for the stored field, the controller manager's for the update): off as
# shipped on 1.34–1.36, on with profiles/gates-1.34.yaml and on 1.37. The functions are the same in
# v1.34.4 … v1.37.2 (from 1.35 isUnavailable takes a `now`: minReadySeconds, none here).
ST3 = [
    equal("ST-3", "max_unavailable_field[gate off]", "absent", f"{UP_DROP}; {UP_GATE} (alpha/off 1.34; beta/off 1.35.4, 1.36.3)"),
    equal("ST-3", "max_unavailable_field[gate on]", "2",
          f"[UP] pkg/registry/apps/statefulset/strategy.go dropStatefulSetDisabledFields (gate on: kept); {UP_GATE} "
          "(beta/on 1.37; on with gates-1.34)"),
    exact("ST-3", "max_unavailable_seen[gate off]", 1, f"[S2] L678; {UP_DROP}", "the field is dropped: one replica at a time"),
    # the catalogue's "(b) record": with the gate on the same function serves OrderedReady — the
    # seed's "may have no effect under OrderedReady" does not hold in the source (v1.34.4 to v1.37.2)
    exact("ST-3", "max_unavailable_seen[gate on]", 2, f"[S2] L678; {UP_MAX_UNAVAILABLE}",
          "two pods deleted at once, the next two once those are Ready again"),
    equal("ST-3", "deleted_first[gate on]", "4,3", f"{UP_MAX_UNAVAILABLE} (from the highest ordinal)"),
    equal("ST-3", "deleted_first[gate off]", "4", f"{UP_DROP} (from the highest ordinal, one at a time)"),
]

# -- ST-4 ------------------------------------------------------------------------------------
UP_RETENTION = ("[UP] pkg/controller/statefulset/stateful_pod_control.go ClaimsMatchRetentionPolicy, "
                "UpdatePodClaimForRetentionPolicy; stateful_set_utils.go updateClaimOwnerRefForSetAndPod "
                "(whenScaled Delete: the condemned pod owns its claim; whenDeleted Delete: the set owns every claim; "
                "the garbage collector deletes the claim with its owner; StatefulSetAutoDeletePVC GA since 1.32)")
S2_PVC = "[S2] L665, L676–678 (PVCs stay after deletion)"
# the garbage collector sees the owner gone (informer), deletes the claim; pvc-protection then
# lets it go (no pod uses it): two controller hand-offs, polled every 0.25 s
PVC_GONE_S = 2 * CONTROLLER_S + 1
ST4 = [
    equal("ST-4", "claims_after_scale_down[retain]", "data-a-0,data-a-1,data-a-2", f"{S2_PVC}; {UP_RETENTION}"),
    equal("ST-4", "claims_after_delete[retain]", "data-a-0,data-a-1,data-a-2", f"{S2_PVC}; {UP_RETENTION}"),
    equal("ST-4", "claims_after_scale_down[when-scaled-delete]", "data-b-0", UP_RETENTION),
    equal("ST-4", "claims_after_delete[when-scaled-delete]", "data-b-0", UP_RETENTION),
    equal("ST-4", "claims_after_scale_down[when-deleted-delete]", "data-c-0,data-c-1,data-c-2", UP_RETENTION),
    equal("ST-4", "claims_after_delete[when-deleted-delete]", "", UP_RETENTION),
    within("ST-4", "claim_gone_after_pod_gone_s", 1, 0, PVC_GONE_S,
           f"the garbage collector deletes the claim once its owner pod is gone, pvc-protection releases it "
           f"(two hand-offs of {CONTROLLER_S:g} s) + 1 s of polling and API", UP_RETENTION),
]

register([*ST1, *ST2, *ST3, *ST4, *ST5], VERIFIED_IN)
