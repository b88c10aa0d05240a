"""NF-2, NF-4, NF-8: the node lifecycle controller's chain on a node that stopped renewing its
Lease — last renewal → ``Ready=Unknown`` → the ``unreachable`` taints — from the recorder's Node
and Lease changes.

One clock for the chain: the API's own times. ``Ready=Unknown``'s ``lastTransitionTime`` and each
taint's ``timeAdded`` are set by kube-controller-manager (whole seconds); both taints carry
``timeAdded``: doNoScheduleTaintingPass and doNoExecuteTaintingPass add theirs through
SwapNodeControllerTaint, which stamps every taint it adds with ``metav1.Now()`` (v1.37.2
pkg/controller/util/node/controller_utils.go SwapNodeControllerTaint; seen on a real cluster:
``node.kubernetes.io/unreachable:NoSchedule`` and ``:NoExecute`` both with ``timeAdded``, the
second of the Unknown write). Lease ``renewTime`` has µs resolution.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from e2e.measure.values import Value
from e2e.record.nodes import Seen, first_condition, last_renew_before, taint_seen
from e2e.record.recorder import Change
from e2e.record.timeline import parse_time

UNREACHABLE = "node.kubernetes.io/unreachable"


def after_unknown_s(api_time: str | None, unknown: dict) -> float | None:
    """The chain's clock: ``api_time`` (an API timestamp: a taint's ``timeAdded``, a pod condition's
    ``lastTransitionTime``) − the node's ``Ready=Unknown`` ``lastTransitionTime`` (``unknown``: the
    condition's dict), s; None when ``api_time`` is missing."""
    at, unknown_at = parse_time(api_time), parse_time(unknown.get("lastTransitionTime"))
    return None if at is None or unknown_at is None else round(at - unknown_at, 3)


def unknown_values(case: str, profile: str, last_renew: float | None, unknown: Seen, fault_at: float) -> list[Value]:
    """``<case> unknown_after_last_renew_s[<profile>]`` (Unknown's ``lastTransitionTime`` − the last
    ``renewTime`` before the fault, s; None without a renewal), ``ready_unknown_reason`` and
    ``ready_unknown_message``, ``around`` when Unknown was received. Source: CASES-faults.md §2.1
    (node-monitor-grace-period)."""
    unknown_at = parse_time(unknown.obj.get("lastTransitionTime"))
    gap = None if last_renew is None or unknown_at is None else round(unknown_at - last_renew, 3)
    details = {"last_renew": last_renew, "unknown": unknown.obj, "fault_at": fault_at}
    return [Value(case, f"unknown_after_last_renew_s[{profile}]", gap, at=unknown.received_at, details=details or {}),
            Value(case, "ready_unknown_reason", unknown.obj.get("reason"), at=unknown.received_at),
            Value(case, "ready_unknown_message", unknown.obj.get("message"), at=unknown.received_at)]


def taint_values(case: str, unknown: Seen, noschedule: Seen | None, noexecute: Seen | None) -> list[Value]:
    """``<case> noschedule_taint_after_unknown_s`` (the ``unreachable:NoSchedule`` taint's
    ``timeAdded`` after Unknown, :func:`after_unknown_s`; None: no such taint seen) and, when the
    ``unreachable:NoExecute`` taint was seen, ``noexecute_taint_after_unknown_s`` (the same clock);
    details: the taint. Source: CASES-faults.md §2.1, §2.2."""
    out = [Value(case, "noschedule_taint_after_unknown_s",
                 None if noschedule is None else after_unknown_s(noschedule.obj.get("timeAdded"), unknown.obj),
                 at=unknown.received_at, details={"taint": noschedule and noschedule.obj})]
    if noexecute is not None:
        out.append(Value(case, "noexecute_taint_after_unknown_s", after_unknown_s(noexecute.obj.get("timeAdded"), unknown.obj),
                         at=unknown.received_at, details={"taint": noexecute.obj}))
    return out


@dataclass(frozen=True)
class NodeLost:
    """The chain as recorded: the node's ``unknown`` condition and its ``noschedule``/``noexecute``
    taints as first seen after the fault (None: not seen), the ``last_renew`` (epoch s, µs; None:
    no renewal recorded before the fault) and the chain's ``values``."""

    unknown: Seen
    noschedule: Seen | None
    noexecute: Seen | None
    last_renew: float | None
    values: list[Value]

    @property
    def noexecute_added(self) -> float | None:
        """The NoExecute taint's ``timeAdded`` (epoch s, whole seconds), or None."""
        return None if self.noexecute is None else parse_time(self.noexecute.obj.get("timeAdded"))


def node_lost(case: str, profile: str, node: Iterable[Change], lease: Iterable[Change], fault_at: float,
              renewed_by: float) -> NodeLost:
    """The chain of a node whose ``node`` (Node changes) and ``lease`` (its Lease changes) were
    recorded across a fault injected at ``fault_at`` (epoch s, host time): the first ``Ready=Unknown``
    received after it, the last renewal at or before ``renewed_by`` (epoch s), the taints received
    after the fault (:func:`unknown_values`, :func:`taint_values`). ValueError when no Unknown was
    recorded after the fault (the caller waits for it first)."""
    node = list(node)
    unknown = first_condition(node, "Unknown", after=fault_at)
    if unknown is None:
        raise ValueError(f"{case}: no Ready=Unknown recorded after the fault at {fault_at:.3f}")
    last_renew = last_renew_before(lease, renewed_by)
    noschedule = taint_seen(node, UNREACHABLE, "NoSchedule", after=fault_at)
    noexecute = taint_seen(node, UNREACHABLE, "NoExecute", after=fault_at)
    values = unknown_values(case, profile, last_renew, unknown, fault_at) + taint_values(case, unknown, noschedule, noexecute)
    return NodeLost(unknown, noschedule, noexecute, last_renew, values)
