"""PB — probes beyond PR-1/PR-2 (CASES-workloads.md §4 PB-1 … PB-4), on a real cluster.

PB-1 is a server dry-run (no pod runs). Documented values, bands and their reasons are in
:mod:`e2e.documented.probes`; manifests are next to this file.
"""

from __future__ import annotations

import json

import pytest

from e2e.cluster.kube import ApiRefused
from e2e.documented import probes as doc
from e2e.run.scenario import Scenario

BARE = {"exec": {"command": ["true"]}}


def _dry_run(sc: Scenario, name: str, **overrides: dict) -> tuple[dict | None, ApiRefused | None]:
    """Server dry-run of probes.yaml with three bare exec probes, each updated by ``overrides``
    (``liveness={"successThreshold": 2}``); (the stored pod, None) or (None, the refusal)."""
    values = {p: json.dumps({**BARE, **overrides.get(p, {})}) for p in doc.PROBES}
    try:
        return sc.apply("probes.yaml", dry_run=True, name=name, **values)[0], None
    except ApiRefused as e:
        return None, e


def _probe(pod: dict, probe: str) -> dict:
    return pod["spec"]["containers"][0].get(f"{probe}Probe") or {}


@pytest.mark.smoke
@pytest.mark.case("PB-1")
def test_probe_defaults_and_validation(scenario: Scenario):
    """PB-1: bare exec probes are stored with periodSeconds 10, timeoutSeconds 1,
    successThreshold 1, failureThreshold 3 and no initialDelaySeconds; successThreshold 2 is
    refused on liveness and startup ("must be 1"), accepted on readiness; timeoutSeconds 0 is
    defaulted to 1. Server dry-run."""
    sc = scenario
    pod, err = _dry_run(sc, "bare")
    pod = sc.require(pod, f"the bare probes accepted: {err}")
    for probe in doc.PROBES:
        stored = _probe(pod, probe)
        for field in doc.PB1_DEFAULTS:
            sc.expect("PB-1", f"default_{field}[{probe}]", stored.get(field), details={"probe": stored})
        sc.expect("PB-1", f"initial_delay_stored[{probe}]", str(stored["initialDelaySeconds"]) if "initialDelaySeconds" in stored else "absent")

    for probe in doc.PROBES:
        name = f"success-two-{probe}"
        stored, err = _dry_run(sc, name, **{probe: {"successThreshold": doc.PB1_SUCCESS_TWO}})
        sc.expect("PB-1", f"success_threshold_2_accepted[{probe}]", err is None,
                  details={"error": err.body if err else None, "stored": _probe(stored, probe) if stored else None})
        if probe in doc.PB1_SUCCESS_ONE and err is not None:
            sc.expect("PB-1", "rejected_status", err.status, details={"body": err.body})
            sc.expect("PB-1", "rejected_reason", err.body.get("reason"))
            sc.expect("PB-1", f"rejected_message[{probe}]", err.message, pod=name)

    stored, err = _dry_run(sc, "timeout-zero", **{p: {"timeoutSeconds": 0} for p in doc.PROBES})
    stored = sc.require(stored, f"timeoutSeconds 0 accepted (defaulted, §5 point 7): {err}")
    for probe in doc.PROBES:
        sc.expect("PB-1", f"timeout_zero_stored[{probe}]", _probe(stored, probe).get("timeoutSeconds"), details={"probe": _probe(stored, probe)})
