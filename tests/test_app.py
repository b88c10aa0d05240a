"""Your own app (issue 28, e2e/app, e2e/documented/app.py, apps/): the app directory and its
config read and checked, each bad input's message, the objectives' defaults and sources, the
manifest's facts (fenceposts, preStop, probe budget), the registry of one app and the verdict
texts — no cluster."""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path

import pytest

from e2e.app import spec as spec_mod
from e2e.app.spec import (NODE_PORT, AppInputError, load_app, missing_on_host, pdb_budget, prestop_seconds, probe_budget_s,
                          resolve_fenceposts, statefulset_max_unavailable)
from e2e.app.verdicts import PLATFORM, Seen, hint, table
from e2e.documented.app import SEED_REFERENCE, SEED_STATEFULSET, AppFacts, Objectives, app_registry, crash_failures_max
from e2e.judge.expectations import REGISTRY, UnknownMeasurement
from e2e.judge.measurements import ExpectationFailed, Judge, MeasurementLog
from e2e.record.recorder import Change
from helpers import nodes_holding

ROOT = Path(__file__).resolve().parents[1]
GRACEFUL, NAIVE = ROOT / "examples" / "apps" / "graceful", ROOT / "examples" / "apps" / "naive"
STATEFUL = ROOT / "examples" / "apps" / "stateful"

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: shop, namespace: prod}
spec:
  replicas: 3
  selector: {matchLabels: {app: shop}}
  template:
    metadata: {labels: {app: shop, tier: web}}
    spec:
      terminationGracePeriodSeconds: 40
      containers:
        - name: shop
          image: example/shop:1.2
          imagePullPolicy: Always
          startupProbe: {httpGet: {path: /up, port: 8080}, periodSeconds: 2, failureThreshold: 10, initialDelaySeconds: 1}
          readinessProbe: {httpGet: {path: /ready, port: 8080}}
          lifecycle: {preStop: {exec: {command: ["sh", "-c", "sleep 8"]}}}
"""
SERVICE = """\
apiVersion: v1
kind: Service
metadata: {name: shop}
spec:
  type: ClusterIP
  clusterIP: 10.96.7.7
  selector: {app: shop}
  ports:
    - {name: metrics, port: 9090, targetPort: 9090}
    - {name: http, port: 80, targetPort: 8080, nodePort: 31000}
"""

STATEFULSET = """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: shop}
spec:
  serviceName: shop-peers
  replicas: 3
  ordinals: {start: 2}
  selector: {matchLabels: {app: shop}}
  template:
    metadata: {labels: {app: shop}}
    spec:
      containers:
        - name: shop
          image: example/shop:1.2
          readinessProbe: {httpGet: {path: /ready, port: 8080}}
"""
PEERS = """\
apiVersion: v1
kind: Service
metadata: {name: shop-peers}
spec:
  clusterIP: None
  selector: {app: shop}
  ports:
    - {name: http, port: 80, targetPort: 8080}
"""
PDB = """\
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: shop}
spec:
  maxUnavailable: 1
  selector: {matchLabels: {app: shop}}
"""


def app_dir(tmp_path: Path, files: dict[str, str]) -> Path:
    d = tmp_path / "shop"
    d.mkdir()
    for name, text in files.items():
        (d / name).write_text(textwrap.dedent(text))
    return d


def load(d: Path):
    return load_app(d, check_images_on_host=False)


# -- reading an app -----------------------------------------------------------------------------
def test_an_app_is_read_with_its_service_published_and_nothing_pulled(tmp_path):
    d = app_dir(tmp_path, {"deploy.yaml": DEPLOYMENT, "svc.yml": SERVICE,
                           "hpa.yaml": "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: shop}\nspec: {}\n",
                           "app.yaml": "service: {port: http, path: /buy}\nload: {rate_per_s: 10}\n"})
    app = load(d)
    assert (app.name, app.workload_name, app.container, app.service_name) == ("shop", "shop", "shop", "shop")
    assert repr(app) == f"app shop ({d})"
    assert (app.replicas, app.grace_s, app.prestop_s, app.readiness, app.startup_budget_s) == (3, 40, 8.0, True, 21.0)
    assert (app.max_surge, app.max_unavailable) == (1, 0)  # 25 % of 3: up 0.75 → 1, down → 0
    assert (app.service_port, app.path_url, app.rate_per_s, app.timeout_s) == (80, "/buy", 10.0, 1.0)
    assert app.images == ["example/shop:1.2"]
    assert app.ignored == ["HorizontalPodAutoscaler/shop (hpa.yaml): ignored — the contracts need a fixed replica count"]
    svc, dep = app.objects[0], next(o for o in app.objects if o["kind"] == "Deployment")
    assert svc["kind"] == "Service" and svc["spec"]["type"] == "NodePort" and "clusterIP" not in svc["spec"]
    assert [p.get("nodePort") for p in svc["spec"]["ports"]] == [None, NODE_PORT]
    assert dep["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] == "Never"
    assert "namespace" not in dep["metadata"]
    # the dry run sees the manifests as written (but for the namespace)
    dry_svc = next(o for o in app.dry_run_objects if o["kind"] == "Service")
    assert dry_svc["spec"]["type"] == "ClusterIP" and dry_svc["spec"]["ports"][1]["nodePort"] == 31000


def test_objectives_default_from_the_manifest_and_the_seeds_and_name_their_source(tmp_path):
    app = load(app_dir(tmp_path, {"deploy.yaml": DEPLOYMENT, "svc.yaml": SERVICE}))
    o = app.objectives
    assert {k: v.value for k, v in o.items()} == {"max_failed_requests": 0, "max_shutdown_s": 40, "exit_code": 0,
                                                 "max_rollout_s": 600, "max_startup_s": 21, "max_drain_s": 600,
                                                 "min_memory_headroom_pct": 0}
    assert o["max_failed_requests"].source.startswith("default 0: [S2] 3.1")
    assert "terminationGracePeriodSeconds" in o["max_shutdown_s"].source and "[S2] 3.2" in o["max_shutdown_s"].source
    assert "30 × 5 = 150" in o["max_startup_s"].source
    assert (app.service_port, app.rate_per_s) == (9090, 20.0)  # no config: the Service's first port, the suite's rate


def test_config_objectives_replace_the_defaults_and_say_so(tmp_path):
    d = app_dir(tmp_path, {"deploy.yaml": DEPLOYMENT, "svc.yaml": SERVICE,
                           "app.yaml": "objectives: {max_failed_requests: 2, max_shutdown_s: 12.5}\n"})
    o = load(d).objectives
    assert (o["max_failed_requests"].value, o["max_failed_requests"].source) == (2, "app.yaml objectives.max_failed_requests = 2")
    assert o["max_shutdown_s"].value == 12.5 and o["exit_code"].source.startswith("default 0")


def test_a_statefulset_is_read_with_its_identity_and_a_nodeport_copy_of_its_headless_service(tmp_path):
    d = app_dir(tmp_path, {"sts.yaml": STATEFULSET, "peers.yaml": PEERS, "pdb.yaml": PDB})
    app = load(d)
    assert (app.kind, app.workload_name, app.pod_management_policy, app.governing_service) == ("StatefulSet", "shop", "OrderedReady", "shop-peers")
    assert (app.ordinal_start, app.pod_name(2), app.update_strategy) == (2, "shop-2", ("RollingUpdate", 0))
    assert (app.max_surge, app.max_unavailable, app.budget) == (0, 1, (2, 1))  # one pod per ordinal; the PDB: 3 − 1 healthy
    # the headless Service is applied as written; the load goes through a NodePort copy of it
    load_svc = app.objects[0]
    assert (app.service_name, load_svc["spec"]["type"], load_svc["spec"]["ports"][0]["nodePort"]) == ("shop-peers-load", "NodePort", NODE_PORT)
    assert "clusterIP" not in load_svc["spec"] and load_svc["spec"]["selector"] == {"app": "shop"}
    assert next(o for o in app.objects if o["metadata"]["name"] == "shop-peers")["spec"]["clusterIP"] == "None"
    assert [o["metadata"]["name"] for o in app.dry_run_objects if o["kind"] == "Service"] == ["shop-peers"]
    assert app.added == ["Service/shop-peers-load: a NodePort copy of the headless Service/shop-peers (peers.yaml) for the load, "
                         "which a headless Service cannot carry"]
    sts = next(o for o in app.objects if o["kind"] == "StatefulSet")
    assert sts["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] == "Never"
    # no progressDeadlineSeconds: rollout and drain default to replicas × (grace + startup budget) = 3 × (30 + 150)
    o = app.objectives
    assert (o["max_rollout_s"].value, o["max_drain_s"].value) == (540, 540)
    assert "replicas × (terminationGracePeriodSeconds + the startup budget)" in o["max_rollout_s"].source
    assert "stateful_set_control.go updateStatefulSet" in o["max_drain_s"].source
    assert app.facts()["podManagementPolicy"] == "OrderedReady" and app.facts()["pdb.disruptionsAllowed"] == 1


def test_a_clusterip_service_beside_the_headless_one_carries_the_load(tmp_path):
    app = load(app_dir(tmp_path, {"sts.yaml": STATEFULSET, "peers.yaml": PEERS, "svc.yaml": SERVICE}))
    assert (app.service_name, app.added) == ("shop", [])
    assert [o["metadata"]["name"] for o in app.objects if o["kind"] == "Service"] == ["shop", "shop-peers"]


@pytest.mark.parametrize("replicas, field, want", [(5, None, 1), (5, 2, 2), (5, "50%", 2), (1, "10%", 1), (4, "25%", 1)])
def test_a_statefulsets_max_unavailable_resolves_as_its_controller_does(replicas, field, want):
    assert statefulset_max_unavailable(replicas, field) == want


@pytest.mark.parametrize("budget, want", [
    ({"maxUnavailable": 1}, (2, 1)), ({"maxUnavailable": "50%"}, (1, 2)), ({"maxUnavailable": 0}, (3, 0)),
    ({"minAvailable": 2}, (2, 1)), ({"minAvailable": "50%"}, (2, 1)), ({"minAvailable": 3}, (3, 0)), ({}, (0, 3)),
])
def test_a_budget_resolves_as_the_disruption_controller_does(budget, want):
    assert pdb_budget({"spec": budget}, 3) == want


def test_the_node_fault_is_an_opt_in_of_app_yaml(tmp_path):
    d = app_dir(tmp_path, {"deploy.yaml": DEPLOYMENT, "svc.yaml": SERVICE, "app.yaml": "node_fault: kubelet-stop\n"})
    assert load(d).node_fault == "kubelet-stop"
    assert load(GRACEFUL).node_fault is None


# -- bad input: one message each, before any cluster -------------------------------------------
@pytest.mark.parametrize("files, message", [
    ({"deploy.yaml": DEPLOYMENT},
     "no Service selects the pods of Deployment/shop (labels {'app': 'shop', 'tier': 'web'}); Services found: none. "
     "The contracts load the app through its Service: add one"),
    ({"deploy.yaml": DEPLOYMENT, "svc.yaml": SERVICE.replace("app: shop", "app: other")},
     "no Service selects the pods of Deployment/shop (labels {'app': 'shop', 'tier': 'web'}); Services found: shop."),
    ({"deploy.yaml": DEPLOYMENT + "  bad: [unclosed\n", "svc.yaml": SERVICE}, "broken manifest: "),
    ({"deploy.yaml": "kind: Deployment\nmetadata: {name: x}\n", "svc.yaml": SERVICE},
     "broken manifest: {d}/deploy.yaml: every document needs apiVersion and kind"),
    ({"svc.yaml": SERVICE}, "{d}: no Deployment or StatefulSet in the manifests"),
    ({"app.yaml": "service: {port: 80}\n"}, "{d}: no manifest (*.yaml, *.yml besides app.yaml) in the app directory"),
    ({"deploy.yaml": DEPLOYMENT, "svc.yaml": SERVICE, "app.yaml": "objectivs: {}\n"},
     "{d}/app.yaml: unknown key 'objectivs' (known: container, expect_to_fail, load, node_fault, objectives, service, workload)"),
    ({"deploy.yaml": DEPLOYMENT, "svc.yaml": SERVICE, "app.yaml": "objectives: {max_failed: 1}\n"},
     "{d}/app.yaml: unknown key objectives.max_failed (known: exit_code, max_drain_s, max_failed_requests"),
    ({"deploy.yaml": DEPLOYMENT, "svc.yaml": SERVICE, "app.yaml": "load: {rate_per_s: 500}\n"},
     "{d}/app.yaml: load.rate_per_s: expected a number in [0.1, 50], got 500"),
    ({"deploy.yaml": DEPLOYMENT, "svc.yaml": SERVICE, "app.yaml": "service: {port: 8443}\n"},
     "{d}/svc.yaml: Service/shop has no port 8443 (config service.port); its ports: metrics:9090, http:80"),
    ({"deploy.yaml": DEPLOYMENT, "svc.yaml": SERVICE, "ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: prod}\n"},
     "{d}/ns.yaml: Namespace/prod: the suite applies the app into a namespace of its own"),
    ({"sts.yaml": STATEFULSET.replace("serviceName: shop-peers", "serviceName: shop-nodes"), "svc.yaml": SERVICE,
      "peers.yaml": PEERS},
     "{d}: StatefulSet/shop: spec.serviceName 'shop-nodes' names no Service of the directory (its pods' DNS names "
     "<pod>.shop-nodes need it): add the headless Service 'shop-nodes' (clusterIP: None) that selects the pods"),
    ({"sts.yaml": STATEFULSET, "deploy.yaml": DEPLOYMENT, "svc.yaml": SERVICE, "peers.yaml": PEERS},
     "{d}: several workloads (Deployment/shop, StatefulSet/shop): name the one to judge with `workload:` in app.yaml"),
    ({"sts.yaml": STATEFULSET, "peers.yaml": PEERS, "taken.yaml": PEERS.replace("name: shop-peers", "name: shop-peers-load")
      .replace("clusterIP: None", "clusterIP: 10.96.0.9").replace("app: shop", "app: other")},
     "{d}: Service/shop-peers is headless and the NodePort copy the load needs would be named 'shop-peers-load', which "
     "Service/shop-peers-load has: rename it, or add a ClusterIP Service that selects the pods"),
    ({"deploy.yaml": DEPLOYMENT, "svc.yaml": SERVICE, "app.yaml": "node_fault: node-reboot\n"},
     "{d}/app.yaml: node_fault: 'node-reboot' is not a node fault the contracts offer (kubelet-stop)"),
    ({"deploy.yaml": DEPLOYMENT, "svc.yaml": SERVICE, "app.yaml": "expect_to_fail: [AP-9]\n"},
     "{d}/app.yaml: expect_to_fail: ['AP-9'] are not contracts (AP-1, AP-2, AP-3, AP-4, AP-5, AP-6, AP-7)"),
])
def test_bad_input_stops_with_one_clear_message(tmp_path, files, message):
    d = app_dir(tmp_path, files)
    with pytest.raises(AppInputError) as e:
        load(d)
    assert message.replace("{d}", str(d)) in str(e.value)


def test_a_missing_directory_is_named(tmp_path):
    with pytest.raises(AppInputError, match=r"nope: not a directory \(APP= / --app names a directory of manifests\)"):
        load(tmp_path / "nope")


def test_an_image_missing_on_the_host_is_named_with_what_to_do(tmp_path, monkeypatch):
    d = app_dir(tmp_path, {"deploy.yaml": DEPLOYMENT, "svc.yaml": SERVICE})
    monkeypatch.setattr(spec_mod, "missing_on_host", lambda images: list(images))
    with pytest.raises(AppInputError) as e:
        load_app(d, check_images_on_host=True)
    assert str(e.value) == (f"{d}: image(s) not in the local Docker engine: example/shop:1.2 (named by Deployment/shop in "
                            "deploy.yaml). Nothing is pulled: build or load them first (`docker build -t IMAGE .`, "
                            "`docker load -i IMAGE.tar`), then run again")


def test_missing_on_host_asks_the_docker_engine():
    import shutil
    import subprocess
    if shutil.which("docker") is None or subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
        pytest.skip("environment: no Docker engine answers")
    assert missing_on_host(["pod-lifecycle-e2e/no-such-image:0"]) == ["pod-lifecycle-e2e/no-such-image:0"]


# -- the manifest's facts ------------------------------------------------------------------------
@pytest.mark.parametrize("replicas, surge, unavailable, want", [
    (10, "25%", 0, (3, 0)), (4, "25%", "25%", (1, 1)), (1, 0, "25%", (0, 1)), (2, "25%", "25%", (1, 0)), (2, 1, 0, (1, 0)),
])
def test_fenceposts_resolve_as_the_deployment_controller_does(replicas, surge, unavailable, want):
    assert resolve_fenceposts(replicas, surge, unavailable) == want


@pytest.mark.parametrize("lifecycle, want", [
    (None, None), ({"preStop": {"sleep": {"seconds": 5}}}, 5.0), ({"preStop": {"exec": {"command": ["sleep", "7"]}}}, 7.0),
    ({"preStop": {"exec": {"command": ["/bin/sh", "-c", "echo bye; sleep 3"]}}}, 3.0),
    ({"preStop": {"httpGet": {"path": "/quit", "port": 80}}}, -1),
])
def test_prestop_length_is_read_from_sleep_actions_and_exec_sleeps(lifecycle, want):
    assert prestop_seconds({"name": "a", **({"lifecycle": lifecycle} if lifecycle else {})}) == want


def test_probe_budget_uses_the_api_defaults():
    assert probe_budget_s({}) == 30.0
    assert probe_budget_s({"periodSeconds": 5, "failureThreshold": 30}) == 150.0


def test_the_stateful_example_is_a_statefulset_behind_a_headless_service_with_the_node_fault():
    app = load(STATEFUL)
    assert (app.kind, app.pod_management_policy, app.governing_service, app.service_name) == (
        "StatefulSet", "OrderedReady", "web", "web-load")
    assert (app.prestop_s, app.readiness, app.node_fault, app.expect_to_fail, app.budget) == (5.0, True, "kubelet-stop", (), (2, 1))
    assert app.replicas == 3  # on two nodes one holds two: the budget (one disruption) must refuse one of them


def test_the_embedded_apps_are_the_graceful_and_the_naive_shape():
    graceful, naive = load(GRACEFUL), load(NAIVE)
    assert (graceful.prestop_s, graceful.readiness, graceful.startup_budget_s, graceful.expect_to_fail) == (5.0, True, 30.0, ())
    assert (naive.prestop_s, naive.readiness, naive.startup_budget_s, naive.expect_to_fail) == (None, False, None, ("AP-1", "AP-2", "AP-4"))
    assert {k: v.value for k, v in naive.objectives.items()} == {k: v.value for k, v in graceful.objectives.items()}
    assert graceful.pdb is not None and naive.pdb is None


# -- the registry of one app and the verdicts -------------------------------------------------------
def facts(replicas=2, surge=1, unavailable=0, grace=30, prestop=0.0, failed=0.0) -> AppFacts:
    return AppFacts(replicas, surge, unavailable, grace, prestop,
                    Objectives((failed, "app.yaml objectives.max_failed_requests"), (10, "app.yaml objectives.max_shutdown_s"),
                               (0, "default 0"), (60, "default 60"), (30, "default 30"),
                               (120, "default 120")))


def judge(tmp_path, f: AppFacts) -> Judge:
    return Judge(MeasurementLog(tmp_path / "m.json"), test="t", run_id="r", kubernetes="v1.37.2", minor=37, registry=app_registry(f))


def test_the_registered_entries_are_the_seeds_reference_deployment():
    sums = [e for e in REGISTRY.entries if (e.case, e.name) == ("AP-2", "max_replicaset_sum")]
    assert [e.documented for e in sums] == [SEED_REFERENCE.replicas + SEED_REFERENCE.surge] == [13]


def test_an_apps_registry_judges_its_own_arithmetic_and_objectives(tmp_path):
    j = judge(tmp_path, facts(replicas=4, surge=1, unavailable=1, failed=2))
    assert j.expect("AP-2", "max_replicaset_sum", 5) and not j.expect("AP-2", "max_replicaset_sum", 6)
    assert j.expect("AP-2", "min_available", 3) and not j.expect("AP-2", "min_available", 2)
    assert j.expect("AP-1", "failed_requests", 2) and not j.expect("AP-3", "failed_requests", 3)
    assert j.expect("AP-1", "sigkill_at_grace_end", False) and not j.expect("AP-1", "exit_code", 143)
    assert j.expect("AP-1", "prestop_margin_s", 1.0) and not j.expect("AP-1", "prestop_margin_s", -0.4)
    # the suite's own entries are still there, read in their releases
    assert app_registry(facts()).lookup("PS-4", "failed_requests[prestop-drain]", 37).documented == 0
    assert all(e.verified_in for e in app_registry(facts()).entries if e.case.startswith("AP-"))


def test_a_failed_value_explains_itself_with_what_to_change(tmp_path):
    app = load(NAIVE)
    j = judge(tmp_path, facts(prestop=0.0))
    seen = Seen(endpoint_removal_s=0.42, exit_code=143, exit_after_delete_s=0.8, failures_by_class={"refused": 5, "reset": 2})
    text = hint("AP-1", "prestop_margin_s", app, seen)
    j.expect("AP-1", "prestop_margin_s", -0.42, context=f"what to change: {text}")
    with pytest.raises(ExpectationFailed) as e:
        j.verify()
    msg = str(e.value)
    assert "AP-1 prestop_margin_s: measured -0.4 s, expected ≥ 1 s" in msg
    assert ("what to change: no preStop hook < endpoint removal 0.42 s + kube-proxy sync 1 s: SIGTERM came while new "
            "connections still reached the pod — add lifecycle.preStop.sleep.seconds ≥ 3") in msg
    assert "minSyncPeriod 1 s" in msg and "app objective" not in msg


def test_hint_texts_name_the_measured_value_and_the_manifest_change():
    graceful, naive = load(GRACEFUL), load(NAIVE)
    assert hint("AP-1", "prestop_margin_s", graceful, Seen(endpoint_removal_s=6.2)) == (
        "preStop sleep 5 s < endpoint removal 6.2 s + kube-proxy sync 1 s: requests reached a terminating pod — raise "
        "lifecycle.preStop.sleep.seconds to ≥ 9")
    failed = hint("AP-1", "failed_requests", naive, Seen(exit_code=143, exit_after_delete_s=0.6, failures_by_class={"refused": 4}))
    assert failed.startswith("requests failed (4 refused): no preStop hook: the pod got SIGTERM while its endpoint")
    assert "the app exited 143 on SIGTERM at once after 0.6 s: requests in flight were cut" in failed
    assert "no readinessProbe" in hint("AP-2", "failed_requests", naive, Seen())
    assert "no readinessProbe" not in hint("AP-1", "failed_requests", naive, Seen())
    assert hint("AP-1", "exit_code", naive, Seen(exit_code=143)).startswith("exit code 143 = killed by SIGTERM")
    assert "grace period (15 s) ended" in hint("AP-1", "exit_code", graceful, Seen(exit_code=137))
    assert hint("AP-2", "max_replicaset_sum", naive, Seen()).startswith("the platform's own value")


def test_the_verdict_table_names_contract_measured_objective_verdict_and_change(tmp_path):
    app = load(NAIVE)
    j = judge(tmp_path, facts(failed=0))
    j.expect("AP-1", "failed_requests", 7)
    j.expect("AP-1", "exit_code", 0)
    j.expect("AP-2", "max_replicaset_sum", 3)
    j.expect("AP-1", "endpoint_not_ready_after_delete_s", 0.3)
    rows = [(v.measurement, hint(v.measurement.case, v.measurement.name, app, Seen(exit_code=143))) for v in j.verdicts]
    text = table(rows)
    lines = text.splitlines()
    assert lines[2].startswith("| AP-1 delete one pod under load | failed_requests | 7 requests | = 0 requests | fail | requests failed: no preStop")
    assert lines[3] == "| AP-1 delete one pod under load | exit_code | 0 | = 0 | pass |  |"
    assert lines[4] == "| AP-2 rolling update under load | max_replicaset_sum | 3 pods | = 3 pods | pass |  |"
    assert lines[5] == ("| AP-1 delete one pod under load | endpoint_not_ready_after_delete_s | 0.3 s | 0 s within [0, 1.5] s "
                        "| pass |  |")
    assert "- AP-1 failed_requests: app objective: app.yaml objectives.max_failed_requests" in text


def test_a_drain_without_budget_names_the_pods_evicted_at_once():
    app = load(GRACEFUL)
    text = hint("AP-4", "failed_requests", app, Seen(evicted_at_once=2, failures_by_class={"reset": 3}))
    assert text == ("requests failed (3 reset): without a PodDisruptionBudget kubectl evicted all 2 of the app's pods on the "
                    "node at once (2 replicas): add a PodDisruptionBudget (maxUnavailable: 1)")
    assert hint("AP-4", "evictions_refused[without-pdb]", app, Seen()).startswith("the platform's own value")


def test_a_crash_is_judged_against_the_first_restart_and_the_platforms_detection_time(tmp_path):
    j = judge(tmp_path, facts())
    assert j.expect("AP-5", "crash_exit_code", 137) and not j.expect("AP-5", "crash_exit_code", 143)
    # the first restart is immediate (CL-1): startedAt − finishedAt within [0, 1 + container start + PLEG relist]
    assert j.expect("AP-5", "restart_gap_s", 1.0) and not j.expect("AP-5", "restart_gap_s", 11.0)
    # its share of 20/s ÷ 2 replicas × (1 s PLEG + 1 s EndpointSlice + 1 s kube-proxy + 1 s in flight) = 40
    assert crash_failures_max(facts()) == 40
    assert j.expect("AP-5", "failed_requests", 40) and not j.expect("AP-5", "failed_requests", 41)
    assert crash_failures_max(facts(replicas=4)) == 20


def test_memory_is_judged_against_the_headroom_objective_and_no_oom_kill(tmp_path):
    f = facts()
    j = Judge(MeasurementLog(tmp_path / "m.json"), test="t", run_id="r", kubernetes="v1.37.2", minor=37,
              registry=app_registry(AppFacts(f.replicas, f.surge, f.unavailable, f.grace_s, f.prestop_s,
                                             dataclasses.replace(f.objectives, min_memory_headroom_pct=(20, "app.yaml")))))
    assert j.expect("AP-6", "memory_headroom_pct", 35.2) and not j.expect("AP-6", "memory_headroom_pct", 12.0)
    assert j.expect("AP-6", "oom_kills", 0) and not j.expect("AP-6", "oom_kills", 1)
    assert "GOMEMLIMIT" in hint("AP-6", "oom_kills", load(GRACEFUL), Seen())


def sts_facts(replicas=3, start=0, budget=None, drained=None, unavailable=1) -> AppFacts:
    f = facts(replicas=replicas, surge=0, unavailable=unavailable)
    return dataclasses.replace(f, kind="StatefulSet", ordinal_start=start, budget=budget, drained_pods=drained)


def test_a_statefulset_is_judged_by_its_own_documented_behaviour(tmp_path):
    j = Judge(MeasurementLog(tmp_path / "m.json"), test="t", run_id="r", kubernetes="v1.37.2", minor=37,
              registry=app_registry(sts_facts(start=2)))
    # one pod per ordinal: never more than the replicas; one down at a time; from the highest ordinal down
    assert j.expect("AP-2", "max_pods", 3) and not j.expect("AP-2", "max_pods", 4)
    assert j.expect("AP-2", "min_available", 2) and not j.expect("AP-2", "min_available", 1)
    assert j.expect("AP-2", "replaced_order", "web-4,web-3,web-2", set="web")
    assert not j.expect("AP-2", "replaced_order", "web-2,web-3,web-4", set="web")
    assert j.expect("AP-3", "new_pod_name", "web-5", set="web") and not j.expect("AP-3", "new_pod_name", "web-3", set="web")
    # ST-1 ordered creation, ST-5 identity
    assert j.expect("AP-3", "next_created_after_ready_s[OrderedReady]", 0.4)
    assert not j.expect("AP-3", "next_created_after_ready_s[OrderedReady]", -0.2)  # created before the previous was Ready
    assert not j.expect("AP-3", "not_ready_at_once_max[OrderedReady]", 2)
    assert j.expect("AP-1", "recreated_after_gone_s", 0.3) and not j.expect("AP-1", "recreated_after_gone_s", -0.1)
    assert not j.expect("AP-1", "replacement_name_kept", False) and j.expect("AP-1", "endpoint_hostname_is_pod_name", True)
    with pytest.raises(UnknownMeasurement):  # a Deployment's surge arithmetic is no StatefulSet's
        j.expect("AP-2", "max_replicaset_sum", 3)
    # a Deployment's registry has none of them
    with pytest.raises(UnknownMeasurement):
        judge(tmp_path, facts()).expect("AP-2", "max_pods", 2)


def test_a_budget_is_judged_by_the_refusals_it_must_cause_and_that_it_held(tmp_path):
    def j(drained: int) -> Judge:
        return Judge(MeasurementLog(tmp_path / f"m{drained}.json"), test="t", run_id="r", kubernetes="v1.37.2", minor=37,
                     registry=app_registry(sts_facts(budget=(2, 1), drained=drained)))
    # two of the app's pods on the node, one disruption allowed: the other is refused at least once
    two = j(2)
    assert two.expect("AP-4", "disruptions_allowed_before[with-pdb]", 1) and not two.expect("AP-4", "disruptions_allowed_before[with-pdb]", 2)
    assert not two.expect("AP-4", "evictions_refused[with-pdb]", 0)
    assert two.expect("AP-4", "evictions_refused[with-pdb]", 1) and two.expect("AP-4", "evictions_refused[with-pdb]", 7)
    assert two.expect("AP-4", "disruptions_allowed_min[with-pdb]", 0) and not two.expect("AP-4", "disruptions_allowed_min[with-pdb]", 1)
    assert two.expect("AP-4", "current_healthy_min[with-pdb]", 2) and not two.expect("AP-4", "current_healthy_min[with-pdb]", 1)
    line = ('error when evicting pods/"web-1" -n "ns-1" (will retry after 5s): Cannot evict pod as it would violate the '
            "pod's disruption budget.")
    assert two.expect("AP-4", "refusal_line[with-pdb]", line, pod="web-1", namespace="ns-1")
    assert not two.expect("AP-4", "refusal_line[with-pdb]", line.replace("(will", "(would"), pod="web-1", namespace="ns-1")
    # one pod on the node: the budget allows it at once, no refusal at all
    one = j(1)
    assert one.expect("AP-4", "evictions_refused[with-pdb]", 0) and not one.expect("AP-4", "evictions_refused[with-pdb]", 1)
    src = one.registry.lookup("AP-4", "evictions_refused[with-pdb]", 37).source
    assert "eviction.go EvictionREST.Create → checkAndDecrement" in src and "429 TooManyRequests" in src
    # without a budget, or before the drain counted the node's pods, nothing of it is registered
    with pytest.raises(UnknownMeasurement):
        Judge(MeasurementLog(tmp_path / "n.json"), test="t", run_id="r", kubernetes="v1.37.2", minor=37,
              registry=app_registry(sts_facts(budget=(2, 1)))).expect("AP-4", "evictions_refused[with-pdb]", 1)


def test_the_kubelet_stop_is_judged_by_the_node_lifecycle_chain_and_the_apps_objective(tmp_path):
    j = judge(tmp_path, facts())
    # multi-node: node-monitor-grace-period 50 s, period 5 s: [50, 50 + 2 × 5 + 2 × 1 + 1.5] s from the last renewal
    assert j.expect("AP-7", "traffic_moved_after_last_renew_s", 50.0) and j.expect("AP-7", "traffic_moved_after_last_renew_s", 63.5)
    assert not j.expect("AP-7", "traffic_moved_after_last_renew_s", 49.9)
    assert not j.expect("AP-7", "traffic_moved_after_last_renew_s", 63.6)
    assert j.expect("AP-7", "node_ready_reason", "NodeStatusUnknown") and not j.expect("AP-7", "node_ready_reason", "KubeletNotReady")
    assert j.expect("AP-7", "failed_requests", 0) and not j.expect("AP-7", "failed_requests", 1)
    assert "node_lifecycle_controller.go monitorNodeHealth" in j.registry.lookup("AP-7", "traffic_moved_after_last_renew_s", 37).source


def test_the_new_values_say_whose_they_are_and_what_to_change():
    app = load(GRACEFUL)
    spread = hint("AP-7", "failed_requests", app, Seen(pods_on_node=2, failures_by_class={"refused": 40}))
    assert spread.startswith("requests failed (40 refused): all 2 replicas ran on the node whose kubelet stopped")
    assert "topologySpreadConstraints" in spread
    assert "did not take the load" in hint("AP-7", "failed_requests", app, Seen(pods_on_node=1))
    assert "no budget prevents" in hint("AP-4", "current_healthy_min[with-pdb]", app, Seen())
    for case, name in [("AP-2", "max_pods"), ("AP-4", "evictions_refused[with-pdb]"), ("AP-7", "traffic_moved_after_last_renew_s"),
                       ("AP-1", "recreated_after_gone_s")]:
        assert hint(case, name, app, Seen()).startswith("the platform's own value"), (case, name)
    assert ("AP-7", "failed_requests") not in PLATFORM


def test_the_seeds_statefulset_registers_the_names_only_a_statefulset_has():
    names = {e.name for e in REGISTRY.entries if e.case == "AP-2"}
    assert {"max_pods", "replaced_order", "max_replicaset_sum"} <= names
    sums = [e.documented for e in REGISTRY.entries if (e.case, e.name) == ("AP-2", "max_pods")]
    assert sums == [SEED_STATEFULSET.replicas] == [3]
    refused = [e for e in REGISTRY.entries if (e.case, e.name) == ("AP-4", "evictions_refused[with-pdb]")]
    assert [e.band.low for e in refused] == [4]  # the seeds' 10 replicas, 5 on the node, a budget of 1


# -- the plugin: --app is read before anything else ------------------------------------------------
def test_bad_app_is_a_usage_error_before_any_test_or_cluster(pytester, tmp_path):
    d = app_dir(tmp_path, {"deploy.yaml": DEPLOYMENT})
    pytester.makepyfile("def test_x():\n    raise AssertionError('never run')\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--app", str(d))
    result.stderr.fnmatch_lines([f"ERROR: pod-lifecycle-e2e: app {d} cannot run: no Service selects the pods of "
                                 "Deployment/shop*add one (a ClusterIP Service is enough*"])
    assert result.ret == 4  # pytest.ExitCode.USAGE_ERROR: nothing collected, no cluster made
    assert "never run" not in result.stdout.str()


def test_the_apps_images_are_checked_in_the_local_engine_unless_only_collecting(pytester, tmp_path, monkeypatch):
    d = app_dir(tmp_path, {"deploy.yaml": DEPLOYMENT, "svc.yaml": SERVICE})
    asked: list[list[str]] = []
    monkeypatch.setattr(spec_mod, "missing_on_host", lambda images: asked.append(images) or list(images))
    pytester.makepyfile("def test_x():\n    pass\n")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--app", str(d), "--collect-only")
    assert result.ret == 0 and asked == []
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--app", str(d))
    result.stderr.fnmatch_lines(["*image(s) not in the local Docker engine: example/shop:1.2 (named by Deployment/shop*"])
    assert result.ret == 4 and asked == [["example/shop:1.2"]]


# a cluster that answers, whose one node holds busybox and the suite's app image only
_NodesWithBusyboxOnly = nodes_holding("docker.io/library/busybox:1.36.1", "docker.io/my/app:1")


def test_on_a_kubeconfig_cluster_the_apps_own_images_are_checked_on_the_nodes(pytester, monkeypatch, tmp_path):
    from e2e.plugin import clusters
    monkeypatch.setattr(clusters, "Kube", _NodesWithBusyboxOnly)
    monkeypatch.setattr(clusters, "IMAGE_LIST_WAIT_S", 0)
    monkeypatch.setattr(clusters, "workload_images", lambda: {"busybox_image": "busybox:1.36.1", "app_image": "my/app:1"})
    d = app_dir(tmp_path, {"deploy.yaml": DEPLOYMENT, "svc.yaml": SERVICE})
    pytester.makepyfile("def test_x():\n    raise AssertionError('never run')\n")
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("")
    result = pytester.runpytest("--kubeconfig", str(kubeconfig), "--app", str(d), "--reports-dir", str(tmp_path / "R"))
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*pod-lifecycle-e2e cannot run: the app's image(s) not on the cluster's nodes: "
                                 "example/shop:1.2 missing on worker. The app's containers get imagePullPolicy: Never*"])
    assert "never run" not in result.stdout.str()


# -- apps/test_contracts.py's own helpers ------------------------------------------------------------
def _slice(at: float, name: str, service: str, ready: dict[str, bool]) -> Change:
    return Change(at, "EndpointSlice", "MODIFIED", name, {
        "metadata": {"name": name, "labels": {"kubernetes.io/service-name": service}},
        "endpoints": [{"targetRef": {"name": pod}, "conditions": {"ready": r, "serving": r, "terminating": False}}
                      for pod, r in ready.items()]})


class _Recorded:
    def __init__(self, changes):
        self.recorder = type("R", (), {"changes": lambda _self, kind=None: changes})()


def test_the_contracts_count_only_the_apps_own_service(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))  # apps/ is a package of the checkout, as scenarios/ is
    from apps.test_contracts import _states, facts, ready_count
    app = load(app_dir(tmp_path, {"deploy.yaml": DEPLOYMENT, "svc.yaml": SERVICE}))
    sc = _Recorded([_slice(1, "shop-abc", "shop", {"shop-1": True, "shop-2": True}),
                    _slice(2, "redis-abc", "redis", {"redis-0": True}),
                    _slice(3, "shop-abc", "shop", {"shop-1": True, "shop-2": False})])
    assert {s.pod for s in _states(sc, app)} == {"shop-1", "shop-2"}
    assert ready_count(app, 1).check(sc) == {"shop-1"} and ready_count(app, 2).check(sc) is None
    f = facts(app)
    assert (f.replicas, f.surge, f.unavailable, f.grace_s, f.prestop_s, f.rate_per_s) == (3, 1, 0, 40, 8.0, 20.0)
    assert f.objectives.max_shutdown_s == (40.0, app.objectives["max_shutdown_s"].source)


def test_the_drained_and_stopped_node_is_the_one_with_most_of_the_apps_pods(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))
    from apps.test_contracts import busiest_node
    assert busiest_node([("web-0", "a"), ("web-1", "b"), ("web-2", "b")]) == ("b", ["web-1", "web-2"])
    assert busiest_node([("web-0", "a"), ("web-1", "b")]) == ("a", ["web-0"])  # a tie: the oldest pod's node
    assert busiest_node([("x", "b"), ("y", "b")]) == ("b", ["x", "y"])


def test_the_contracts_count_pod_objects_and_a_statefulsets_rollout(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))
    from apps.test_contracts import _status_complete, facts, most_pods_at_once
    # web-1 replaced (its new object after the old one is gone), then web-0: never more than 2 objects at once
    objects = {"a": ("web-0", 0, 20), "b": ("web-1", 0, 12), "c": ("web-1", 12, float("inf")), "d": ("web-0", 20.5, float("inf"))}
    assert most_pods_at_once(objects, 10, 30) == 2
    assert most_pods_at_once({**objects, "e": ("web-2", 11, 13)}, 10, 30) == 3  # a surge would show
    assert most_pods_at_once(objects, 21, 30) == 2  # objects alive before the window count from its start
    app = load(app_dir(tmp_path, {"sts.yaml": STATEFULSET, "peers.yaml": PEERS, "pdb.yaml": PDB}))
    status = {"observedGeneration": 2, "replicas": 3, "readyReplicas": 3, "availableReplicas": 3, "updatedReplicas": 3,
              "currentRevision": "shop-1", "updateRevision": "shop-2"}
    assert not _status_complete({"status": status}, app, 2)  # the revisions meet only at the end
    assert _status_complete({"status": {**status, "currentRevision": "shop-2"}}, app, 2)
    f = facts(app, unavailable=2, drained_pods=2)
    assert (f.kind, f.ordinal_start, f.surge, f.unavailable, f.budget, f.drained_pods) == ("StatefulSet", 2, 0, 2, (2, 1), 2)
