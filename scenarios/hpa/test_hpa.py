"""HP-1 — the HorizontalPodAutoscaler's defaults and what it does with no metrics server
(docs/cases/CASES-workloads.md §4 HP). Documented values: :mod:`e2e.documented.hpa`."""

from __future__ import annotations

import time

import pytest

from e2e.cluster import gates
from e2e.cluster.kube import ApiRefused
from e2e.documented import hpa as doc
from e2e.record import pods
from e2e.run.scenario import Scenario
from e2e.base.waiting import PODS_SLACK_S, WAIT_SLACK_S

# a workload family (CASES-workloads.md): `make e2e-workloads`, not in the default `make e2e`
pytestmark = pytest.mark.workloads


def _rules(rules: dict) -> str:
    policies = ",".join(f"{p['type']} {p['value']}/{p['periodSeconds']}" for p in rules.get("policies") or [])
    window = rules.get("stabilizationWindowSeconds")
    return f"{policies};{rules.get('selectPolicy')};window {'absent' if window is None else window}"


def _ready_pods(sc: Scenario) -> int:
    return sum(1 for p in sc.kube.pods(sc.namespace) if p["metadata"]["name"].startswith("web-")
               and not p["metadata"].get("deletionTimestamp") and (pods.condition(p, "Ready") or {}).get("status") == "True")


@pytest.mark.case("HP-1")
@pytest.mark.record("Pod", "Event", "HorizontalPodAutoscaler", "Deployment")
def test_hpa_defaults_and_no_metrics(scenario: Scenario):
    """HP-1: dry runs (behavior defaults, minReplicas 0, tolerance); live: 1 replica under
    minReplicas 3 scaled to 3 with no metrics, then ScalingActive False FailedGetResourceMetric
    one sync later and the replicas stay 3."""
    sc = scenario
    api = gates.api_server(sc.kube)
    for gate in ("HPAScaleToZero", "HPAConfigurableTolerance"):
        sc.note(gate, api.describe(gate))
    behavior = sc.apply("hpa-seed.yaml", dry_run=True, name="seed")[0]["spec"]["behavior"]
    sc.expect("HP-1", "scale_up_default", _rules(behavior.get("scaleUp") or {}), details={"behavior": behavior})
    sc.expect("HP-1", "scale_down_as_given", _rules(behavior.get("scaleDown") or {}))
    try:
        sc.apply("hpa-zero.yaml", dry_run=True, name="zero")
        zero = "accepted"
    except ApiRefused as e:
        zero = f"refused {e.status}"
        sc.note("min_replicas_zero refusal", e.message)
    sc.expect("HP-1", "min_replicas_zero", zero)
    up = sc.apply("hpa-tolerance.yaml", dry_run=True, name="tol")[0]["spec"]["behavior"].get("scaleUp") or {}
    sc.expect("HP-1", "tolerance", str(up["tolerance"]) if up.get("tolerance") is not None else "absent", details={"scaleUp": up})

    created = time.time()
    sc.apply("live.yaml")
    budget = doc.SYNC_PERIOD_S + doc.SCALE_PROPAGATION_S + PODS_SLACK_S
    rescale = sc.wait_for("SuccessfulRescale", lambda: next(iter(sc.events("SuccessfulRescale", "web")), None), budget)
    sc.wait_for("3 pods of web ready", lambda: _ready_pods(sc) >= doc.MIN_REPLICAS or None, budget)
    scaled = next(ch.received_at for ch in sc.recorder.changes("Deployment", "web")
                  if (ch.obj.get("spec") or {}).get("replicas") == doc.MIN_REPLICAS)
    sc.expect("HP-1", "scaled_to_min_after_create_s", scaled - created, around=scaled)
    sc.expect("HP-1", "rescale_message", rescale.obj.get("message"))

    def inactive():
        for ch in sc.recorder.changes("HorizontalPodAutoscaler", "web"):
            c = pods.condition(ch.obj, "ScalingActive")
            if c and c.get("status") == "False" and ch.received_at > rescale.received_at:
                return ch
        return None
    seen = sc.wait_for("ScalingActive False", inactive, doc.SYNC_PERIOD_S + doc.SCALE_PROPAGATION_S + WAIT_SLACK_S)
    cond = pods.condition(seen.obj, "ScalingActive") or {}
    sc.expect("HP-1", "metrics_failure_after_rescale_s", seen.received_at - rescale.received_at, around=seen.received_at)
    sc.expect("HP-1", "scaling_active_status", cond.get("status"), details={"condition": cond})
    sc.expect("HP-1", "scaling_active_reason", cond.get("reason"))
    sc.wait_for("both warnings", lambda: (sc.events("FailedGetResourceMetric", "web") and sc.events("FailedComputeMetricsReplicas", "web")) or None,
                WAIT_SLACK_S)
    warnings = sorted({ch.obj.get("reason") for ch in sc.recorder.changes("Event")
                       if ch.obj.get("type") == "Warning" and (ch.obj.get("involvedObject") or {}).get("kind") == "HorizontalPodAutoscaler"})
    sc.expect("HP-1", "warning_events", ",".join(warnings),
              details={"messages": sorted({ch.obj.get("message") for ch in sc.recorder.changes("Event") if ch.obj.get("type") == "Warning"})})
    sc.expect("HP-1", "replicas_after_failure", (sc.get("Deployment", "web") or {}).get("spec", {}).get("replicas"))
