"""DR-2 — ``kubectl drain`` against a PodDisruptionBudget (CASES-faults.md §1.3 C30, §2.7, §4 DR-2).

The real kubectl of the cluster's version drains the only node, limited by ``--pod-selector``
to this test's two pods, with ``--timeout=30s``; every stdout/stderr line is kept with the
host time it was read (e2e.evidence.kubectl). The node is cordoned meanwhile, so the test is ``serial``
(no other scenario's pods are being scheduled) and always uncordons it, also on failure, then
checks it is schedulable again.

On a cluster the suite did not make (``--kubeconfig``) the cordon is a change to the user's node:
it runs only with ``--node-agent`` and only on a node the node agent may enter, else it is skipped
saying what is missing (:func:`e2e.cluster.cordon.refusal`). Before the drain the node is marked
with the run's id (:data:`e2e.cluster.cordon.CORDONED_BY`) and the uncordon removes the mark, so
that ``make clean`` uncordons a node a killed run left cordoned.
"""

from __future__ import annotations

import logging
import re
import time

import pytest

from e2e.cluster import cordon
from e2e.cluster.kube import RUN_LABEL
from e2e.documented import disruption as doc
from e2e.evidence.kubectl import kubectl_flags, run
from e2e.measure.drain import RETRY, retry_interval_values, retry_intervals
from e2e.measure.values import expect_all
from e2e.run.scenario import Scenario

from .disruption_helpers import apply_pdb, attach_transcript, wait_pdb, wait_ready, web_values

log = logging.getLogger(__name__)

# kubectl gets this long beyond --timeout to print its summary and exit before it is killed.
KUBECTL_EXIT_S = 60
EVICTING = re.compile(r"^evicting pod (?P<ns>[^/]+)/(?P<pod>\S+)$")
PENDING_POD = re.compile(r"^pod/\S+$")
EVICTED = re.compile(r"^pod/\S+ evicted$")


def skip_unless_cordon_allowed(sc: Scenario, node: str | None) -> None:
    """Skip the test when it must not cordon ``node`` (None: whichever; only ``--node-agent`` is
    checked) — :func:`e2e.cluster.cordon.refusal`."""
    refused = cordon.refusal(sc.access, sc.kube.get("Node", node, None) if node else None)
    if refused:
        pytest.skip(refused)


def uncordon_and_check(sc: Scenario, node: str) -> None:
    """``kubectl uncordon`` through the API (the run's cordon mark removed with it), then make sure
    the node takes pods again."""
    sc.mark(time.time(), f"uncordon node/{node}")
    cordon.uncordon(sc.kube, node)
    obj = sc.kube.get("Node", node, None) or {}
    if (obj.get("spec") or {}).get("unschedulable"):
        raise RuntimeError(f"node {node} is still cordoned after uncordon: fix it by hand (kubectl uncordon {node})")


@pytest.mark.serial
@pytest.mark.record("Pod", "Event", "PodDisruptionBudget", "Node")
@pytest.mark.case("DR-2")
@pytest.mark.parametrize("max_unavailable", [0, 1])
@pytest.mark.node_faults("cordon", case="DR-2", window_s=doc.DRAIN_TIMEOUT_S)
def test_drain_against_pdb(scenario: Scenario, kubectl: str, max_unavailable: int):
    """DR-2: ``kubectl drain --pod-selector … --timeout=30s`` over 2 pods guarded by a PDB with
    maxUnavailable 0 (nothing may go) or 1 (the single-node trap: the first pod goes, its
    replacement cannot schedule on the cordoned node, so the second never may): cordoned
    first, parallel evictions, a retry every 5 s on 429, the timeout summary, exit 1, the
    node left cordoned (then uncordoned by the test)."""
    sc = scenario
    variant = f"max-unavailable-{max_unavailable}"
    skip_unless_cordon_allowed(sc, sc.nodes[0] if len(sc.nodes) == 1 else None)  # before anything is made
    group = sc.namespace
    sc.apply("web.yaml", **web_values(doc.DR2_REPLICAS, group=group))
    names = wait_ready(sc, doc.DR2_REPLICAS, app="web")
    apply_pdb(sc, "pdb", maxUnavailable=max_unavailable)
    wait_pdb(sc, "pdb", currentHealthy=doc.DR2_REPLICAS, disruptionsAllowed=max_unavailable)
    node = sc.pod(names[0])["spec"]["nodeName"]
    skip_unless_cordon_allowed(sc, node)

    args = [kubectl, *kubectl_flags(sc.kube), "drain", node, "--pod-selector", f"e2e.disruption/group={group}",
            "--ignore-daemonsets", f"--timeout={doc.DRAIN_TIMEOUT_S}s"]
    # before kubectl cordons the node: `make clean` uncordons it should this run be killed meanwhile
    cordon.mark(sc.kube, node, sc.kube.get("Namespace", sc.namespace, None)["metadata"]["labels"][RUN_LABEL])
    try:
        sc.mark(time.time(), "kubectl drain")
        t = run(args, timeout_s=doc.DRAIN_TIMEOUT_S + KUBECTL_EXIT_S)
        node_after = sc.kube.get("Node", node, None) or {}
    finally:
        uncordon_and_check(sc, node)
    attach_transcript(sc, t, f"kubectl drain ({variant})")
    log.info("DR-2 %s transcript:\n%s", variant, t.to_text())

    intervals = retry_intervals(t.lines)
    details = {"transcript": t.to_text(), "retry_intervals_s": intervals}
    stdout = t.stdout()
    sc.expect("DR-2", f"first_stdout_line[{variant}]", stdout[0].text if stdout else None, details=details, node=node)

    first_evicting: dict[str, float] = {}
    for ln in stdout:
        m = EVICTING.match(ln.text)
        if m and m.group("pod") not in first_evicting:
            first_evicting[m.group("pod")] = ln.at
    sc.require(sorted(first_evicting) == sorted(names), f"kubectl evicted the test's pods {names} (it evicted {sorted(first_evicting)})")
    sc.expect("DR-2", f"evicting_spread_s[{variant}]", round(max(first_evicting.values()) - min(first_evicting.values()), 3),
              details=details)

    for i, pod in enumerate(sorted(intervals), 1):
        first_retry = next(ln.text for ln in t.stderr() if RETRY.match(ln.text) and RETRY.match(ln.text).group("pod") == pod)
        sc.expect("DR-2", f"retry_line[{variant}/{i}]", first_retry, details=details, pod=pod, namespace=sc.namespace)
    expect_all(sc.expect, retry_interval_values(variant, intervals))
    sc.expect("DR-2", f"evicted_lines[{variant}]", sum(1 for ln in stdout if EVICTED.match(ln.text)), details=details)

    stderr = [ln.text for ln in t.stderr()]
    pending_line = next((ln for ln in t.stderr() if ln.text.startswith("There are pending pods in node")), None)
    sc.expect("DR-2", f"pending_pods_line[{variant}]", pending_line.text if pending_line else None, details=details,
              node=node, namespace=sc.namespace)
    sc.expect("DR-2", f"pending_pods[{variant}]", sum(1 for s in stderr if PENDING_POD.match(s)), details=details)
    sc.expect("DR-2", f"unable_to_drain_line[{variant}]",
              next((s for s in stderr if s.startswith("error: unable to drain node")), None), details=details, node=node)
    header = next((i for i, s in enumerate(stderr) if s == "There are pending nodes to be drained:"), None)
    sc.expect("DR-2", f"pending_nodes_lines[{variant}]", "\n".join(stderr[header:header + 2]) if header is not None else None,
              details=details, node=node)
    final = stderr[header + 2:] if header is not None else []
    sc.expect("DR-2", f"final_error_lines[{variant}]", len(final), details=details)
    for i, line in enumerate(final, 1):
        sc.expect("DR-2", f"final_error_line[{variant}/{i}]", line, details=details, namespace=sc.namespace)
    if pending_line is not None:
        sc.expect("DR-2", f"timeout_after_s[{variant}]", round(pending_line.at - min(first_evicting.values()), 3), details=details)
    sc.expect("DR-2", f"exit_code[{variant}]", t.exit_code, details=details)
    sc.expect("DR-2", f"node_unschedulable_after_drain[{variant}]", bool((node_after.get("spec") or {}).get("unschedulable")))
