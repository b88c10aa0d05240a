"""AP — your own app under the lifecycle contracts (issue 28, issue 41 item 5; docs/your-own-app.md).

``make app APP=dir`` (``pytest apps --app dir``) runs each contract on the app of ``dir`` (a
Deployment or a StatefulSet): its manifests applied into the test's namespace (its images loaded
into the kind nodes, nothing pulled), its Service published on 127.0.0.1 as NodePort 30080, HTTP
load on new connections at the config's rate. Without ``--app`` the two embedded apps of
``examples/apps`` run: ``graceful`` (every contract holds) and ``naive`` (a negative control:
``expect_to_fail`` AP-1, AP-2, AP-4).

- AP-1 delete one pod under load: failed requests, the main container's exit time and code,
  SIGKILL at the grace end or not, the endpoint's removal, the preStop's margin over it; a
  StatefulSet: the ordinal recreated under its name once the old pod is gone, its hostname,
  subdomain and the governing Service's endpoint hostname;
- AP-2 rolling update under load (a pod-template annotation): failed requests, rollout time; a
  Deployment's surge arithmetic (largest ReplicaSet sum, smallest availability); a StatefulSet's
  one pod per ordinal (most pods at once, smallest availability, the order from the highest ordinal);
- AP-3 readiness before serving (scale up by one under load): failed requests, pod created → Ready;
  a StatefulSet: the new pod's name (the next ordinal) and its ordered creation (OrderedReady:
  each ordinal after the previous is Ready; Parallel: all at once);
- AP-4 ``kubectl drain`` of the node with most of the app's pods (profile ``multi-node``), with and without its
  PodDisruptionBudget: failed requests, the drain's time and exit code, evictions refused; with the
  budget: disruptionsAllowed before, the 429 refusals it caused and their line, its lowest
  disruptionsAllowed and currentHealthy (the budget held);
- AP-5 a crash (SIGKILL of the main process in the node) under load: exit code, restart gap,
  SIGKILL → Ready again, the requests lost (bounded by the platform's detection time and the replicas);
- AP-6 memory under load: each pod's peak (the cgroup's high-water mark) against its limit, OOM kills;
- AP-7 (opt-in: ``node_fault: kubelet-stop`` in app.yaml; profile ``multi-node``) the kubelet of the
  node with most of the app's pods stopped under load (e2e.faults.components.kubelet_stopped: always undone, the cluster's
  health checked after): the time from its last Lease renewal until the Service's traffic moved off
  its pods, the node's Ready reason, the requests lost.

The documented values are the app's (``e2e/documented/app.py``: :func:`app_registry`); each
value's source says whether it is the platform's (the catalogue's mechanism) or the app's
objective (``app.yaml``). Each test leaves ``verdicts.md`` (contract, measured, objective, verdict,
what to change), ``traffic.png``, ``requests.txt`` and ``applied.yaml``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from e2e.app.spec import AppSpec, load_app
from e2e.app.verdicts import Seen, hint, table
from e2e.cluster.images import missing_on_nodes
from e2e.cluster.kube import ApiRefused
from e2e.documented import termination as term_doc
from e2e.app.spec import statefulset_max_unavailable
from e2e.documented import faults as faults_doc
from e2e.documented.app import KUBE_PROXY_SYNC_S, AppFacts, Objectives, app_registry
from e2e.evidence import endpoints
from e2e.evidence.kubectl import run
from e2e.evidence.load import LoadGenerator, LoadResult
from e2e.evidence.nodeview import cgroup_dir, inspect_container, memory_limit_bytes
from e2e.faults.components import kubelet_stopped
from e2e.judge.measurements import ExpectationFailed
from e2e.pictures import traffic as traffic_picture
from e2e.plugin.options import APPS
from e2e.record import pods
from e2e.measure.drain import RETRY
from e2e.record.nodes import first_condition, last_renew_before
from e2e.record.pods import Until
from e2e.record.apitime import api_time
from e2e.record.recorder import Change
from e2e.record.timeline import parse_time
from e2e.run.scenario import Scenario
from e2e.base.waiting import PODS_SLACK_S, WAIT_SLACK_S
from scenarios.disruption.disruption_helpers import deployment_status, replicaset_sum
from scenarios.statefulset.test_statefulset import Life, lives, max_not_ready_at_once, most_at_once

ROOT = Path(__file__).resolve().parents[1]
EMBEDDED = (ROOT / "examples" / "apps" / "graceful", ROOT / "examples" / "apps" / "naive")
RECORD = ("Pod", "Event", "EndpointSlice", "ReplicaSet", "Deployment", "StatefulSet")
# load before anything changes (a clean baseline, also the pods' settling: termination SETTLE_S),
# and after the last change (failures that come late)
BASELINE_S = max(2.0, term_doc.SETTLE_S)
TAIL_S = 2.0
ROLLOUT_ANNOTATION = "pod-lifecycle-e2e/rollout"
SERVICE_NAME_LABEL = "kubernetes.io/service-name"  # an EndpointSlice's Service (discovery.k8s.io/v1)
_LOADED: set[tuple[str, str]] = set()  # (cluster, image) loaded by this process


def _apps(config: pytest.Config) -> list[AppSpec]:
    """The apps of ``--app`` (read and checked by the plugin before collection: bad input has
    stopped the run already), else the two embedded ones."""
    return config.stash.get(APPS, None) or [load_app(d, check_images_on_host=False) for d in EMBEDDED]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "app" not in metafunc.fixturenames:
        return
    contract = next(m.args[0] for m in metafunc.definition.iter_markers("case"))
    params = []
    for app in _apps(metafunc.config):
        marks = []
        if contract in app.expect_to_fail:
            marks.append(pytest.mark.xfail(strict=True, raises=ExpectationFailed,
                                           reason=f"negative control: {app.name} breaks {contract} (app.yaml expect_to_fail)"))
        params.append(pytest.param(app, id=app.name, marks=marks))
    metafunc.parametrize("app", params)


def facts(app: AppSpec, unavailable: int | None = None, drained_pods: int | None = None) -> AppFacts:
    """The documented values' facts of ``app`` (``unavailable``: a StatefulSet's maxUnavailable as
    the API stored it, default the manifest's; ``drained_pods``: AP-4's pods on the drained node)."""
    o = app.objectives
    return AppFacts(app.replicas, app.max_surge, app.max_unavailable if unavailable is None else unavailable, app.grace_s,
                    max(app.prestop_s or 0, 0), rate_per_s=app.rate_per_s, timeout_s=app.timeout_s,
                    objectives=Objectives(*((o[k].value, o[k].source) for k in
                                            ("max_failed_requests", "max_shutdown_s", "exit_code", "max_rollout_s",
                                             "max_startup_s", "max_drain_s", "min_memory_headroom_pct"))),
                    kind=app.kind, ordinal_start=app.ordinal_start, budget=app.budget, drained_pods=drained_pods)


def _write(objs: list[dict], name: str) -> Path:
    """``objs`` as one YAML file ``name`` in a temporary folder of its own (the timeline's apply row names it)."""
    path = Path(tempfile.mkdtemp(prefix="ple2e-app-")) / name
    path.write_text(yaml.safe_dump_all(objs, sort_keys=False))
    return path


def _images_on_cluster(sc: Scenario, app: AppSpec) -> None:
    """kind: load the app's images from the local Docker engine into every node (once per
    cluster and process). --kubeconfig: the nodes must list them, else the run stops."""
    if sc.kind is not None:
        todo = [i for i in app.images if (sc.kind.name, i) not in _LOADED]
        sc.kind.load_images(todo)
        _LOADED.update((sc.kind.name, i) for i in todo)
        return
    missing = missing_on_nodes(sc.kube.nodes(), {i: i for i in app.images})
    if missing:
        what = "; ".join(f"{i} missing on {', '.join(n)}" for i, n in missing.items())
        pytest.exit(f"app {app.path}: image(s) not on the cluster's nodes: {what} (imagePullPolicy: Never: load them "
                    "onto every node first)", returncode=4)


def deploy(sc: Scenario, app: AppSpec) -> AppFacts:
    """The app's registry as the judge's; its images on the nodes; a server dry run of its
    manifests (a refusal stops the run: the manifest does not apply); the manifests applied
    (the Service on NodePort 30080); every replica Ready and answering on 127.0.0.1. Returns the
    facts the registry was made of (a StatefulSet's maxUnavailable as the API stored it: the API
    server drops the field without the MaxUnavailableStatefulSet gate, and then one pod at a time)."""
    sc.judge.registry = app_registry(facts(app))
    for k, v in app.facts().items():
        sc.note(f"app.{k}", v)
    _images_on_cluster(sc, app)
    dry, applied = _write(app.dry_run_objects, f"{app.name}-as-written.yaml"), _write(app.objects, f"{app.name}.yaml")
    try:
        try:
            sc.apply(str(dry), dry_run=True)
        except ApiRefused as e:
            pytest.exit(f"app {app.path}: a manifest does not apply (server dry run): {e}", returncode=4)
        sc.add_file("applied.yaml", applied.read_text())
        sc.apply_node_port(str(applied))
    finally:
        for f in (dry, applied):
            shutil.rmtree(f.parent, ignore_errors=True)
    # an OrderedReady StatefulSet starts its pods one after the other
    budget = (app.startup_budget_s or 0) * (app.replicas if app.pod_management_policy == "OrderedReady"
                                            and app.kind == "StatefulSet" else 1) + PODS_SLACK_S
    sc.wait(ready_count(app, app.replicas), budget)
    sc.wait_for(f"the {app.kind}'s rollout complete", lambda: _complete(sc, app), budget)
    url = sc.node_port_url(path=app.path_url)
    sc.wait_for(f"the app answering on {url}", lambda: _answers(url), WAIT_SLACK_S, interval_s=0.2)
    f = facts(app)
    if app.kind == "StatefulSet":
        stored = ((((sc.get("StatefulSet", app.workload_name) or {}).get("spec") or {}).get("updateStrategy") or {})
                  .get("rollingUpdate") or {}).get("maxUnavailable")
        f = dataclasses.replace(f, unavailable=statefulset_max_unavailable(app.replicas, stored))
        sc.note("app.maxUnavailable (as stored by the API)", stored if stored is not None else "absent: 1")
        sc.judge.registry = app_registry(f)
    return f


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=1.0, headers={"Connection": "close"}).is_success
    except httpx.HTTPError:
        return False


def _complete(sc: Scenario, app: AppSpec, generation: int = 0) -> bool:
    """The app's workload (as the API has it now) has rolled out ``generation`` (default: its own)."""
    dep = sc.get(app.kind, app.workload_name) or {}
    return _status_complete(dep, app, max(generation, (dep.get("metadata") or {}).get("generation", 0)))


def _mine(pod: dict, app: AppSpec) -> bool:
    return all(((pod.get("metadata") or {}).get("labels") or {}).get(k) == v for k, v in app.labels.items())


def _pods_of(sc: Scenario, app: AppSpec) -> list[str]:
    """The app's pods that exist and are not being deleted, oldest first."""
    items = [p for p in sc.kube.pods(sc.namespace) if not (p.get("metadata") or {}).get("deletionTimestamp") and _mine(p, app)]
    return [p["metadata"]["name"] for p in sorted(items, key=lambda p: p["metadata"]["creationTimestamp"])]


def busiest_node(placed: list[tuple[str, str]]) -> tuple[str, list[str]]:
    """The node holding most of the app's pods and those pods, of ``placed`` (``(pod, node)``,
    oldest pod first); a tie goes to the node of the oldest pod. AP-4 drains it and AP-7 stops its
    kubelet: where a node loss or a drain costs the app most (and a budget has pods to refuse)."""
    nodes = list(dict.fromkeys(node for _, node in placed))
    node = max(nodes, key=lambda n: (sum(1 for _, m in placed if m == n), -nodes.index(n)))
    return node, [p for p, m in placed if m == node]


def _placed(sc: Scenario, app: AppSpec) -> list[tuple[str, str]]:
    return [(p, (sc.pod(p) or {})["spec"]["nodeName"]) for p in _pods_of(sc, app)]


def _uids(sc: Scenario, app: AppSpec) -> dict[str, str]:
    """``uid → name`` of the app's pods now (not being deleted)."""
    return {p["metadata"]["uid"]: p["metadata"]["name"] for p in sc.kube.pods(sc.namespace)
            if not (p.get("metadata") or {}).get("deletionTimestamp") and _mine(p, app)}


def _of_uid(sc: Scenario, name: str, uid: str) -> list[Change]:
    """The recorded changes of pod object ``uid`` (a StatefulSet's recreated pod keeps the name)."""
    return [ch for ch in sc.recorder.changes("Pod", name) if (ch.obj.get("metadata") or {}).get("uid") == uid]


def _uid_gone(sc: Scenario, name: str, uid: str) -> bool:
    return any(ch.type == "DELETED" for ch in _of_uid(sc, name, uid))


def _objects(sc: Scenario, app: AppSpec) -> dict[str, tuple[str, float, float]]:
    """Every pod object of the app the recorder saw: ``uid → (name, first seen, DELETED seen or ∞)``."""
    out: dict[str, tuple[str, float, float]] = {}
    for ch in sc.recorder.changes("Pod"):
        meta = ch.obj.get("metadata") or {}
        if not _mine(ch.obj, app):
            continue
        name, first, gone = out.get(meta.get("uid", ""), (ch.name, ch.received_at, float("inf")))
        out[meta.get("uid", "")] = (name, first, ch.received_at if ch.type == "DELETED" else gone)
    return out


def most_pods_at_once(objects: dict[str, tuple[str, float, float]], since: float, until: float) -> int:
    """The most pod objects of ``objects`` (``uid → (name, first seen, gone)``) that existed at one
    instant of ``[since, until]`` (host epoch s; one gone at the instant another appears is not counted twice)."""
    return most_at_once((max(first, since), gone if gone <= until else float("inf"))
                        for _, first, gone in objects.values() if first <= until and gone > since)


def _load(sc: Scenario, app: AppSpec, duration_s: float) -> LoadGenerator:
    """The app's load (its Service, the config's rate and timeout, new connections), started, after a
    baseline of BASELINE_S without a failed request (a precondition: else the load is stopped)."""
    gen = LoadGenerator(sc.node_port_url(path=app.path_url), app.rate_per_s, duration_s=duration_s, mode="new",
                        timeout_s=app.timeout_s).start()
    try:
        sc.require(sc.never_within(BASELINE_S, "a failed request before anything changed",
                                   lambda: any(r.failed for r in gen.snapshot()), interval_s=0.1),
                   f"no request failed before anything changed: {[r for r in gen.snapshot() if r.failed][:5]}")
    except BaseException:
        gen.stop()
        gen.result()
        raise
    return gen


@contextlib.contextmanager
def _under_load(sc: Scenario, app: AppSpec, duration_s: float) -> Iterator[LoadGenerator]:
    """The app's load (:func:`_load`, at most ``duration_s`` s) for the ``with`` block: stopped at
    the block's end and its requests in flight finished (read them with ``gen.result()`` after
    the block); then the app's Service is deleted (:meth:`Scenario.release_node_port`) so that the
    next test gets the NodePort at once — also when the load's baseline or the block failed."""
    try:
        gen = _load(sc, app, duration_s)
        try:
            yield gen
        finally:
            gen.stop()
            gen.result()
    finally:
        sc.release_node_port(app.service_name)


def _states(sc: Scenario, app: AppSpec) -> list[endpoints.EndpointState]:
    """The endpoint states of the app's own Service (its EndpointSlices: label
    ``kubernetes.io/service-name``), whatever else the app's directory runs beside it."""
    return endpoints.endpoint_states(
        ch for ch in sc.recorder.changes("EndpointSlice")
        if ((ch.obj.get("metadata") or {}).get("labels") or {}).get(SERVICE_NAME_LABEL) == app.service_name)


def ready_count(app: AppSpec, count: int) -> Until[set[str]]:
    """A named wait: exactly ``count`` pods with a ready endpoint in the app's Service; gives their names."""
    def check(sc) -> set[str] | None:  # a Scenario (e2e.record.pods.Watched)
        ready = endpoints.ready_pods(_states(sc, app))
        return ready if len(ready) == count else None
    return Until(f"{count} ready endpoints of Service {app.service_name}", check)


def _pod_events(sc: Scenario, app: AppSpec, pod: str, delete_at: float, uid: str | None = None) -> traffic_picture.PodEvents:
    """The pod's moments on the traffic picture: delete, preStop (the Killing event → its length),
    the container's exit as the recorder saw it (a user's app writes no SIGTERM stamp); ``uid``:
    that object of the name only (a StatefulSet's recreated pod keeps it)."""
    term = pods.first_terminated(_of_uid(sc, pod, uid) if uid else sc.recorder.changes("Pod", pod), app.container)
    killing = next((ch.received_at for ch in sc.events("Killing", pod)), None)
    prestop = (killing, killing + app.prestop_s) if killing is not None and app.prestop_s and app.prestop_s > 0 else None
    exit_at, label = (term[0].received_at, f"exit {term[1].get('exitCode')}") if term else (None, "exit")
    return traffic_picture.PodEvents(pod, delete_at, prestop, None, exit_at, label)


def _picture(sc: Scenario, app: AppSpec, contract: str, result: LoadResult, moved: list[traffic_picture.PodEvents]) -> None:
    title = (f"{contract} {app.name}: HTTP load on new connections through its Service "
             f"({app.rate_per_s:g}/s) — {app.kind}/{app.workload_name}, {app.replicas} replicas")
    sc.add_file("traffic.png", traffic_picture.render(result.requests, _states(sc, app), moved, result.started_at, title))
    sc.add_file("requests.txt", result.to_text(result.started_at))


Value = tuple  # (case, name, value, around, details[, params]) — see _judge


def _judge(sc: Scenario, app: AppSpec, seen: Seen, values: list[Value]) -> None:
    """Judge each ``(case, name, value, around, details)`` — a sixth element: the ``{placeholders}``
    of a documented text (``pod``…); ``set`` (the workload's name) and ``namespace`` are always
    given — with its hint as context, then write the verdict table (also when a value failed)."""
    rows, shown = [], set()
    for case, name, value, around, details, *more in values:
        params = {"set": app.workload_name, "namespace": sc.namespace, **(more[0] if more else {})}
        text = hint(case, name, app, seen, KUBE_PROXY_SYNC_S)
        excerpt = sc.timeline_excerpt(around) if around else ""
        try:
            fails = not sc.judge.expectation(case, name, **params).holds_for(value)
        except LookupError:  # undocumented here: the judge says so
            fails = False
        if fails and excerpt and excerpt in shown:  # a failed value above quotes the same moment
            excerpt = "timeline: the one under the failed value above"
        elif fails:
            shown.add(excerpt)
        sc.judge.expect(case, name, value, context=f"what to change: {text}\n{excerpt}".rstrip(), details=details,  # type: ignore[arg-type]
                        **params)
        rows.append((sc.judge.verdicts[-1].measurement, text))
    sc.add_file("verdicts.md", f"# {app.name} ({app.path})\n\n{table(rows)}")


# -- AP-1 -------------------------------------------------------------------------------------
@pytest.mark.heavy
@pytest.mark.record(*RECORD)
@pytest.mark.case("AP-1")
def test_delete_one_pod_under_load(scenario: Scenario, app: AppSpec):
    """AP-1: one pod of the app deleted under load: failed requests; the main container's exit
    (time after the delete, code; SIGKILL at the grace end or not); the endpoint's ready=false
    after the delete (the platform's value) and the preStop's margin over it (+ kube-proxy's sync)."""
    sc = scenario
    deploy(sc, app)
    victim = _pods_of(sc, app)[0]
    victim_uid = (sc.pod(victim) or {})["metadata"]["uid"]
    with _under_load(sc, app, BASELINE_S + app.grace_s + (app.startup_budget_s or 0) + 2 * PODS_SLACK_S) as gen:
        t_delete = sc.delete_pod(victim)
        sc.wait_for(f"{victim} gone and {app.replicas} ready endpoints again",
                    lambda: _uid_gone(sc, victim, victim_uid) and ready_count(app, app.replicas).check(sc),
                    app.grace_s + (app.startup_budget_s or 0) + PODS_SLACK_S)
        time.sleep(TAIL_S)  # documented wait: failures that come late are counted
    result = gen.result()
    _picture(sc, app, "AP-1", result, [_pod_events(sc, app, victim, t_delete)])

    not_ready = sc.require(endpoints.first(_states(sc, app), victim, after=t_delete - 1, ready=False),
                           f"{victim}: its endpoint turned not ready after the delete")
    removal = round(not_ready.received_at - t_delete, 3)
    ended = sc.require(pods.first_terminated(_of_uid(sc, victim, victim_uid), app.container),
                       f"{victim}: the recorder saw container {app.container} terminated")
    state = ended[1]
    finished = sc.require(api_time(state.get("finishedAt")), f"{victim}: finishedAt of {app.container}")
    low, high = finished.seconds_after(t_delete)
    code = state.get("exitCode")
    seen = Seen(endpoint_removal_s=removal, exit_code=code, exit_after_delete_s=round(high, 3),
                failures_by_class=result.failures_by_class())
    exit_details = {"finishedAt": state.get("finishedAt"), "seconds_after_delete": [round(low, 3), round(high, 3)],
                    "judged": "the upper end (finishedAt has 1 s resolution)", "reason": state.get("reason"),
                    "exit_seen_by_recorder_s": round(ended[0].received_at - t_delete, 3)}
    load_details = {"summary": result.summary(), "failures_by_class": result.failures_by_class(), "pod": victim}
    values: list[Value] = [
        ("AP-1", "failed_requests", len(result.failures), t_delete, load_details),
        ("AP-1", "exit_after_delete_s", round(high, 3), ended[0].received_at, exit_details),
        ("AP-1", "exit_code", code, ended[0].received_at, exit_details),
        ("AP-1", "sigkill_at_grace_end", code == 137 and low >= app.grace_s - 1, ended[0].received_at, exit_details),
        ("AP-1", "endpoint_not_ready_after_delete_s", removal, not_ready.received_at, None),
    ]
    if app.prestop_s is None or app.prestop_s >= 0:
        prestop = app.prestop_s or 0.0
        values.append(("AP-1", "prestop_margin_s", round(prestop - removal, 3), not_ready.received_at,
                       {"prestop_s": app.prestop_s, "endpoint_removal_s": removal}))
    else:
        sc.note("AP-1 prestop_margin_s", "not judged: the preStop hook's length cannot be read from the manifest")
    if app.kind == "StatefulSet":
        values += _identity(sc, app, victim, victim_uid, t_delete)
    _judge(sc, app, seen, values)


def _identity(sc: Scenario, app: AppSpec, victim: str, victim_uid: str, t_delete: float) -> list[Value]:
    """AP-1 on a StatefulSet: the pods created after the delete (only the victim's ordinal, under
    its name), when after the old pod was gone, the replacement's hostname and subdomain, and its
    endpoint's hostname in the governing Service's EndpointSlice."""
    objects = _objects(sc, app)
    created = {uid: o for uid, o in objects.items() if o[1] > t_delete}
    new_uid = next((uid for uid, o in created.items() if o[0] == victim), None)
    gone_at = objects[victim_uid][2]
    replacement = next((ch.obj for ch in reversed(_of_uid(sc, victim, new_uid))), {}) if new_uid else {}
    spec = replacement.get("spec") or {}
    values: list[Value] = [
        ("AP-1", "replacement_name_kept", sorted(o[0] for o in created.values()) == [victim], gone_at,
         {"created_after_delete": sorted(o[0] for o in created.values()), "deleted": victim}),
        ("AP-1", "recreated_after_gone_s", round(created[new_uid][1] - gone_at, 3) if new_uid else None, gone_at,
         {"old_uid": victim_uid, "new_uid": new_uid}),
        ("AP-1", "hostname_is_pod_name", spec.get("hostname") == victim if new_uid else None, None, {"hostname": spec.get("hostname")}),
    ]
    if app.governing_service:
        hostnames = [ep.get("hostname") for ch in sc.recorder.changes("EndpointSlice")
                     if ((ch.obj.get("metadata") or {}).get("labels") or {}).get(SERVICE_NAME_LABEL) == app.governing_service
                     for ep in ch.obj.get("endpoints") or [] if (ep.get("targetRef") or {}).get("uid") == new_uid]
        values += [
            ("AP-1", "subdomain_is_service", spec.get("subdomain") == app.governing_service if new_uid else None, None,
             {"subdomain": spec.get("subdomain"), "serviceName": app.governing_service}),
            ("AP-1", "endpoint_hostname_is_pod_name", hostnames[-1] == victim if hostnames else None, None,
             {"service": app.governing_service, "hostnames_seen": hostnames}),
        ]
    else:
        sc.note("AP-1 subdomain_is_service", "not judged: the StatefulSet names no serviceName (no subdomain, no DNS name)")
    return values


# -- AP-2 -------------------------------------------------------------------------------------
@pytest.mark.heavy
@pytest.mark.record(*RECORD)
@pytest.mark.case("AP-2")
def test_rolling_update_under_load(scenario: Scenario, app: AppSpec):
    """AP-2: a rolling update (a pod-template annotation, as `kubectl rollout restart` does) under
    load: failed requests, template change → rollout complete, the largest sum of the ReplicaSets'
    replicas (replicas + maxSurge) and the smallest availability (≥ replicas − maxUnavailable)."""
    sc = scenario
    if app.kind == "StatefulSet" and app.update_strategy != ("RollingUpdate", 0):
        pytest.skip("{}: updateStrategy {} partition {}: a template change replaces not every pod (OnDelete: none; a "
                    "partition: only the ordinals at or above it) — the rolling-update contract needs RollingUpdate, "
                    "partition 0".format(app.name, *app.update_strategy))
    deploy(sc, app)
    old = _uids(sc, app)
    budget = app.objectives["max_rollout_s"].value + app.replicas * app.grace_s + PODS_SLACK_S
    with _under_load(sc, app, BASELINE_S + budget + 2 * TAIL_S) as gen:
        since = time.time()
        patched = sc.patch(app.kind, app.workload_name, {"spec": {"template": {"metadata": {"annotations": {
            ROLLOUT_ANNOTATION: dt.datetime.now(dt.timezone.utc).isoformat()}}}}})
        generation = patched["metadata"]["generation"]
        sc.wait_for("the rollout complete and the old pods gone",
                    lambda: _complete(sc, app, generation) and all(_uid_gone(sc, n, u) for u, n in old.items()), budget)
        until = time.time()
        time.sleep(TAIL_S)  # documented wait: failures that come late are counted
    result = gen.result()
    deleted = {u: (pods.deletion_seen(_of_uid(sc, n, u)) or _of_uid(sc, n, u)[-1]).received_at for u, n in old.items()}
    _picture(sc, app, "AP-2", result, [_pod_events(sc, app, old[u], t, u) for u, t in sorted(deleted.items(), key=lambda kv: kv[1])])

    done = next((ch.received_at for ch in sc.recorder.changes(app.kind, app.workload_name)
                 if ch.received_at >= since and _status_complete(ch.obj, app, generation)), until)
    available = deployment_status(sc, "availableReplicas", since, until, name=app.workload_name, kind=app.kind)
    first_old = min(deleted.values()) if deleted else since
    codes = [(pods.first_terminated(_of_uid(sc, n, u), app.container) or (None, {}))[1].get("exitCode") for u, n in old.items()]
    seen = Seen(exit_code=next((c for c in codes if c not in (None, 0)), codes[0] if codes else None),
                failures_by_class=result.failures_by_class())
    values: list[Value] = [
        ("AP-2", "failed_requests", len(result.failures), first_old,
         {"summary": result.summary(), "failures_by_class": result.failures_by_class(), "old_pods_exit_codes": codes}),
        ("AP-2", "rollout_s", round(done - since, 3), done, {"until_old_pods_gone_s": round(until - since, 3)}),
        ("AP-2", "min_available", available.min, available.min_at, {"at_s": round(available.min_at - since, 3)}),
    ]
    if app.kind == "StatefulSet":
        order = [old[u] for u, _ in sorted(deleted.items(), key=lambda kv: kv[1])]
        values += [
            ("AP-2", "max_pods", most_pods_at_once(_objects(sc, app), since, until), None,
             {"pod_objects": {u: list(o) for u, o in _objects(sc, app).items()}}),
            ("AP-2", "replaced_order", ",".join(order), first_old, {"deleted_at_s": {old[u]: round(t - since, 3) for u, t in deleted.items()}}),
        ]
    else:
        sums = replicaset_sum(sc, since, until)
        values.append(("AP-2", "max_replicaset_sum", sums.max, sums.max_at, {"at_s": round(sums.max_at - since, 3)}))
    _judge(sc, app, seen, values)


def _status_complete(dep: dict, app: AppSpec, generation: int) -> bool:
    """``dep`` (the app's Deployment or StatefulSet) has observed ``generation`` and runs the app's
    replicas, all updated and available (a StatefulSet: also Ready and its current revision the
    update revision, as ``kubectl rollout status`` asks)."""
    st, n = dep.get("status") or {}, app.replicas
    done = (st.get("observedGeneration", 0) >= generation and st.get("updatedReplicas") == n
            and st.get("availableReplicas") == n and st.get("replicas") == n)
    if app.kind == "StatefulSet":
        done = done and st.get("readyReplicas") == n and st.get("currentRevision") == st.get("updateRevision")
    return done


# -- AP-3 -------------------------------------------------------------------------------------
@pytest.mark.heavy
@pytest.mark.record(*RECORD)
@pytest.mark.case("AP-3")
def test_readiness_before_serving(scenario: Scenario, app: AppSpec):
    """AP-3: the app scaled up by one pod under load, nothing stopping: a request can only fail
    when the Service sends it to the new pod before the app serves (0 expected: a readinessProbe
    that answers only when the app can serve); the new pod's creation → Ready against the
    startup objective (default: its startupProbe's budget)."""
    sc = scenario
    deploy(sc, app)
    before = set(_pods_of(sc, app))
    want = app.replicas + 1
    budget = app.objectives["max_startup_s"].value + PODS_SLACK_S
    with _under_load(sc, app, BASELINE_S + budget + 2 * TAIL_S) as gen:
        since = time.time()
        sc.patch(app.kind, app.workload_name, {"spec": {"replicas": want}})
        sc.wait(ready_count(app, want), budget)
        time.sleep(TAIL_S)  # documented wait: failures that come late are counted
    result = gen.result()
    new = sc.require(next(iter(set(_pods_of(sc, app)) - before), None), "the new pod of the scale-up")
    _picture(sc, app, "AP-3", result, [traffic_picture.PodEvents(new, None, None, None, None, "")])
    pod = sc.pod(new) or {}
    ready = sc.require(pods.condition(pod, "Ready"), f"{new}: its Ready condition")
    ready_s = parse_time(ready["lastTransitionTime"]) - parse_time(pod["metadata"]["creationTimestamp"])
    seen = Seen(failures_by_class=result.failures_by_class())
    values: list[Value] = [
        ("AP-3", "failed_requests", len(result.failures), since,
         {"summary": result.summary(), "failures_by_class": result.failures_by_class(), "new_pod": new}),
        ("AP-3", "ready_after_create_s", ready_s, None,
         {"creationTimestamp": pod["metadata"]["creationTimestamp"], "ready": ready["lastTransitionTime"],
          "resolution": "two API times, ±1 s"}),
    ]
    if app.kind == "StatefulSet":
        values.append(("AP-3", "new_pod_name", new, since, None))
        values += _ordered_creation(sc, app, [x for x in lives(sc, app.workload_name) if x.added < since])
    _judge(sc, app, seen, values)


def _ordered_creation(sc: Scenario, app: AppSpec, first: list[Life]) -> list[Value]:
    """AP-3 on a StatefulSet: how its pods were created when it was applied (``first``: the
    recorded pod objects of that creation, host receive times; ST-1): OrderedReady — each ordinal
    after the previous one was Ready, one not Ready at a time; Parallel — all within one sync."""
    if app.replicas < 2:
        sc.note("AP-3 ordered creation", f"not judged: {app.replicas} replica — nothing to order")
        return []
    by_ordinal = {int(x.name.rsplit("-", 1)[1]): x for x in first}
    details = {x.name: {"created_s": round(x.added - min(y.added for y in first), 3),
                        "ready_s": None if x.ready is None else round(x.ready - min(y.added for y in first), 3)} for x in first}
    if app.pod_management_policy == "Parallel":
        spread = max(x.added for x in first) - min(x.added for x in first)
        return [("AP-3", "created_spread_s[Parallel]", round(spread, 3), None, details)]
    ordered = [by_ordinal.get(k) for k in range(app.ordinal_start, app.ordinal_start + app.replicas)]
    values: list[Value] = [
        ("AP-3", "next_created_after_ready_s[OrderedReady]",
         round(nxt.added - prev.ready, 3) if prev and nxt and prev.ready is not None else None, nxt.added if nxt else None,
         {"pods": f"{prev.name if prev else '?'} Ready → {nxt.name if nxt else '?'} created", **details})
        for prev, nxt in zip(ordered, ordered[1:], strict=False)]
    values.append(("AP-3", "not_ready_at_once_max[OrderedReady]", max_not_ready_at_once(first), None, details))
    return values


# -- AP-4 -------------------------------------------------------------------------------------
# kubectl gets this long beyond the drain objective to finish (its --timeout is the objective).
KUBECTL_EXIT_S = 30


@pytest.mark.serial
@pytest.mark.heavy
@pytest.mark.profile("multi-node")
@pytest.mark.record(*RECORD, "PodDisruptionBudget", "Node")
@pytest.mark.case("AP-4")
@pytest.mark.parametrize("budget", ["with-pdb", "without-pdb"])
def test_drain_the_apps_node(scenario: Scenario, cluster, kubectl: str, app: AppSpec, budget: str):
    """AP-4: on the two-node profile, ``kubectl drain`` (the cluster's own kubectl) of the node with
    most of the app's pods (:func:`busiest_node`), limited to them (``--pod-selector``), under load, with the
    app's PodDisruptionBudget and without it: failed requests, the drain's time (kubectl start →
    exit, its ``--timeout`` the objective), its exit code, the evictions the API refused (429,
    "will retry after 5s"; none without a budget). With the budget (its status as recorded):
    disruptionsAllowed before the drain, the refusals it caused (at least the node's pods beyond
    what it allows) and their line, its lowest disruptionsAllowed and currentHealthy during the
    drain (the budget held: never below desiredHealthy). The node is uncordoned afterwards, always."""
    sc = scenario
    if budget == "with-pdb" and app.pdb is None:
        pytest.skip(f"{app.name} has no PodDisruptionBudget: only the drain without one is run")
    if cluster.kind is None:
        pytest.skip("environment: the drain uses the kind cluster's kubeconfig")
    if budget == "without-pdb":
        app = dataclasses.replace(app, objects=[o for o in app.objects if o["kind"] != "PodDisruptionBudget"],
                                  dry_run_objects=[o for o in app.dry_run_objects if o["kind"] != "PodDisruptionBudget"], pdb=None)
    f = deploy(sc, app)
    node, names = busiest_node(_placed(sc, app))
    on_node = {u: n for u, n in _uids(sc, app).items() if n in names}
    sc.note("AP-4 node drained", f"{node} ({len(on_node)} of {app.replicas} pods: {', '.join(sorted(on_node.values()))})")
    sc.judge.registry = app_registry(dataclasses.replace(f, drained_pods=len(on_node)))
    pdb, before = "", {}
    if app.pdb is not None:
        pdb = app.pdb["metadata"]["name"]
        before = sc.wait_for(f"PodDisruptionBudget {pdb} counting every replica healthy", lambda: _pdb_counted(sc, pdb, app.replicas),
                             WAIT_SLACK_S)
    limit = app.objectives["max_drain_s"].value
    selector = ",".join(f"{k}={v}" for k, v in app.labels.items())
    args = [kubectl, "--kubeconfig", str(cluster.kind.kubeconfig), "drain", node, "--pod-selector", selector,
            "--ignore-daemonsets", "--delete-emptydir-data", f"--timeout={int(limit)}s"]
    with _under_load(sc, app, BASELINE_S + limit + KUBECTL_EXIT_S + app.grace_s + PODS_SLACK_S) as gen:
        try:
            sc.mark(time.time(), f"kubectl drain {node}")
            t = run(args, timeout_s=limit + KUBECTL_EXIT_S)
            sc.wait(ready_count(app, app.replicas), (app.startup_budget_s or 0) + PODS_SLACK_S)
            time.sleep(TAIL_S)  # documented wait: failures that come late are counted
        finally:
            sc.mark(time.time(), f"uncordon node/{node}")
            sc.kube.patch("Node", node, None, {"spec": {"unschedulable": False}}, patch_type="merge")
    result = gen.result()
    sc.add_file("kubectl-drain.txt", t.to_text(t.started_at))
    deleted = {u: (pods.deletion_seen(_of_uid(sc, n, u)) or _of_uid(sc, n, u)[-1]).received_at for u, n in on_node.items()}
    _picture(sc, app, f"AP-4 ({budget})", result,
             [_pod_events(sc, app, on_node[u], at, u) for u, at in sorted(deleted.items(), key=lambda kv: kv[1])])
    refusals = [ln for ln in t.stderr() if RETRY.match(ln.text)]
    done = round(t.ended_at - t.started_at, 3) if t.exit_code is not None else None
    codes = [(pods.first_terminated(_of_uid(sc, n, u), app.container) or (None, {}))[1].get("exitCode") for u, n in on_node.items()]
    seen = Seen(exit_code=next((c for c in codes if c not in (None, 0)), codes[0] if codes else None),
                failures_by_class=result.failures_by_class(), evicted_at_once=len(on_node) if budget == "without-pdb" else None)
    details = {"transcript": t.to_text(t.started_at), "exit_code": t.exit_code, "evictions_refused": len(refusals),
               "pods_on_node": sorted(on_node.values())}
    values: list[Value] = [
        ("AP-4", "failed_requests", len(result.failures), min(deleted.values(), default=None),
         {"summary": result.summary(), "failures_by_class": result.failures_by_class(), "old_pods_exit_codes": codes}),
        ("AP-4", "drain_s", done, t.ended_at, details),
        ("AP-4", "drain_exit_code", t.exit_code, t.ended_at, details),
    ]
    if app.pdb is None:
        values.append(("AP-4", "evictions_refused[without-pdb]", len(refusals), t.ended_at, details))
    else:
        values += _budget_held(sc, app, pdb, before, refusals, t.started_at, t.ended_at, details)
    _judge(sc, app, seen, values)


def _pdb_counted(sc: Scenario, pdb: str, replicas: int) -> dict | None:
    """The status of PodDisruptionBudget ``pdb`` once its controller has observed its generation and
    counts ``replicas`` healthy pods (before the drain), else None."""
    obj = sc.get("PodDisruptionBudget", pdb) or {}
    st = obj.get("status") or {}
    done = st.get("observedGeneration", 0) >= (obj.get("metadata") or {}).get("generation", 1) and st.get("currentHealthy") == replicas
    return st if done else None


def _budget_held(sc: Scenario, app: AppSpec, pdb: str, before: dict, refusals: list, since: float, until: float,
                 details: dict) -> list[Value]:
    """AP-4 with the app's PodDisruptionBudget ``pdb``: its ``before`` status' disruptionsAllowed, the
    ``refusals`` (kubectl's 429 lines) and the first one's text, and its status as recorded in
    ``[since, until]`` (kubectl's start and exit): the lowest disruptionsAllowed and currentHealthy."""
    statuses = [(ch.received_at, ch.obj.get("status") or {}) for ch in sc.recorder.changes("PodDisruptionBudget", pdb)
                if since <= ch.received_at <= until and ch.type != "DELETED"]
    lowest = {k: min((st.get(k, 0) for _, st in statuses), default=before.get(k)) for k in ("disruptionsAllowed", "currentHealthy")}
    budget_details = {"before": {k: before.get(k) for k in ("expectedPods", "desiredHealthy", "currentHealthy", "disruptionsAllowed")},
                      "during": [{"at_s": round(at - since, 3), **{k: st.get(k) for k in ("currentHealthy", "disruptionsAllowed")}}
                                 for at, st in statuses]}
    values: list[Value] = [
        ("AP-4", "disruptions_allowed_before[with-pdb]", before.get("disruptionsAllowed"), since, budget_details),
        ("AP-4", "evictions_refused[with-pdb]", len(refusals), until, details),
        ("AP-4", "disruptions_allowed_min[with-pdb]", lowest["disruptionsAllowed"], None, budget_details),
    ]
    if refusals:
        first = RETRY.match(refusals[0].text)
        values.append(("AP-4", "refusal_line[with-pdb]", refusals[0].text, refusals[0].at, None,
                       {"pod": first["pod"] if first else "?"}))
    if app.budget and app.budget[0] > 0:
        values.append(("AP-4", "current_healthy_min[with-pdb]", lowest["currentHealthy"], None, budget_details))
    else:
        sc.note("AP-4 current_healthy_min", "not judged: the budget's desiredHealthy is 0 (it protects no pod)")
    return values


# -- AP-5 -------------------------------------------------------------------------------------
@pytest.mark.heavy
@pytest.mark.record(*RECORD)
@pytest.mark.case("AP-5")
def test_crash_of_the_main_process(scenario: Scenario, app: AppSpec):
    """AP-5: SIGKILL of one pod's main process (``kill -9`` of its PID in the kind node) under
    load: its exit code (137), the restart gap (``startedAt`` − ``finishedAt``: the first restart is
    immediate, CL-1), the pod Ready again after the kill, and the requests lost meanwhile: the Service
    sends the dead pod its share of new connections until the kubelet, the EndpointSlice and
    kube-proxy have caught up (``crash_failures_max``: fewer with more replicas)."""
    sc = scenario
    if sc.kind is None:
        pytest.skip("environment: the crash is a kill -9 in the kind node")
    deploy(sc, app)
    victim = _pods_of(sc, app)[0]
    pod = sc.pod(victim) or {}
    cid = pods.container_status(pod, app.container)["containerID"]
    node = pod["spec"]["nodeName"]
    view = inspect_container(lambda *cmd: sc.node_exec(*cmd, node=node), cid)
    budget = app.objectives["max_startup_s"].value + PODS_SLACK_S
    with _under_load(sc, app, BASELINE_S + budget + 2 * TAIL_S) as gen:
        t_kill = time.time()
        sc.mark(t_kill, f"kill -9 {view.pid} ({victim}/{app.container} in {node})")
        sc.node_exec("kill", "-9", str(view.pid), node=node)
        sc.wait_for(f"{victim} restarted and Ready again",
                    lambda: pods.container_status(sc.pod(victim), app.container).get("restartCount", 0) >= 1
                    and pods.pod_ready(victim).check(sc), budget)
        ready_at = next((ch.received_at for ch in sc.recorder.changes("Pod", victim)
                         if ch.received_at > t_kill and (pods.condition(ch.obj, "Ready") or {}).get("status") == "True"
                         and pods.container_status(ch.obj, app.container).get("restartCount", 0) >= 1), time.time())
        time.sleep(TAIL_S)  # documented wait: failures that come late are counted
    result = gen.result()
    _picture(sc, app, "AP-5", result, [traffic_picture.PodEvents(victim, None, None, None, t_kill, "SIGKILL")])
    status = pods.container_status(sc.pod(victim), app.container)
    last = (status.get("lastState") or {}).get("terminated") or {}
    started = ((status.get("state") or {}).get("running") or {}).get("startedAt")
    gap = parse_time(started) - parse_time(last["finishedAt"]) if started and last.get("finishedAt") else None
    answered = 100.0 * (result.total - len(result.failures)) / result.total if result.total else None
    seen = Seen(exit_code=last.get("exitCode"), failures_by_class=result.failures_by_class())
    _judge(sc, app, seen, [
        ("AP-5", "crash_exit_code", last.get("exitCode"), t_kill, {"lastState": last}),
        ("AP-5", "restart_gap_s", gap, t_kill, {"finishedAt": last.get("finishedAt"), "startedAt": started}),
        ("AP-5", "ready_again_s", round(ready_at - t_kill, 3), ready_at, None),
        ("AP-5", "failed_requests", len(result.failures), t_kill,
         {"summary": result.summary(), "failures_by_class": result.failures_by_class(),
          "answered_pct": None if answered is None else round(answered, 2)}),
    ])


# -- AP-6 -------------------------------------------------------------------------------------
# How long the memory contract loads the app (s): long enough for its caches and buffers to grow
# with the load, short enough for a 2-core host.
MEMORY_LOAD_S = 20.0


@pytest.mark.heavy
@pytest.mark.record(*RECORD)
@pytest.mark.case("AP-6")
def test_memory_under_load(scenario: Scenario, app: AppSpec):
    """AP-6: the app under its load for MEMORY_LOAD_S: each pod's peak memory (the container
    cgroup's high-water mark since its start: ``memory.max_usage_in_bytes``, cgroup v2
    ``memory.peak``) against its limit (``memory.limit_in_bytes`` / ``memory.max``); the smallest
    headroom of the pods, and the OOM kills meanwhile (0)."""
    sc = scenario
    if sc.kind is None:
        pytest.skip("environment: the peak is read from the cgroup in the kind node")
    if not ((app.main.get("resources") or {}).get("limits") or {}).get("memory"):
        pytest.skip(f"{app.name}: the main container sets no resources.limits.memory: no limit to judge the peak against")
    deploy(sc, app)
    names = _pods_of(sc, app)
    version = sc.require(sc.cgroup, "the node's cgroup version")
    views = {}
    for p in names:
        pod = sc.pod(p) or {}
        node = pod["spec"]["nodeName"]
        views[p] = (node, inspect_container(lambda *cmd, n=node: sc.node_exec(*cmd, node=n),
                                            pods.container_status(pod, app.container)["containerID"]))
    with _under_load(sc, app, BASELINE_S + MEMORY_LOAD_S + 1) as gen:
        time.sleep(MEMORY_LOAD_S)  # documented wait: the load the peak is measured under
    result = gen.result()
    _picture(sc, app, "AP-6", result, [])
    peaks = {}
    for p, (node, view) in views.items():
        d = cgroup_dir(view.cgroups, "memory", version)
        peak = int(sc.node_exec("cat", f"{d}/{'memory.peak' if version == 2 else 'memory.max_usage_in_bytes'}", node=node).strip())
        limit = sc.require(memory_limit_bytes(lambda *cmd, n=node: sc.node_exec(*cmd, node=n), view, version), f"{p}: a memory limit")
        peaks[p] = {"peak_bytes": peak, "limit_bytes": limit, "headroom_pct": round(100.0 * (limit - peak) / limit, 2)}
    worst = min(peaks, key=lambda p: peaks[p]["headroom_pct"])
    ooms = sum(1 for p in {ch.name for ch in sc.recorder.changes("Pod")}
               for _, term, _ in pods.terminated_runs(sc.recorder.changes("Pod", p), app.container) if term.get("reason") == "OOMKilled")
    sc.add_file("memory.txt", "\n".join(f"{p}: peak {v['peak_bytes']} B of {v['limit_bytes']} B, headroom {v['headroom_pct']} %"
                                         for p, v in peaks.items()) + f"\n{result.summary()}\n")
    _judge(sc, app, Seen(failures_by_class=result.failures_by_class()), [
        ("AP-6", "memory_headroom_pct", peaks[worst]["headroom_pct"], None, {"pods": peaks, "worst": worst, "load": result.summary()}),
        ("AP-6", "oom_kills", ooms, None, {"pods": peaks}),
    ])


# -- AP-7 -------------------------------------------------------------------------------------
@pytest.mark.serial
@pytest.mark.heavy
@pytest.mark.profile("multi-node")
@pytest.mark.record(*RECORD, "Node", "Lease")
@pytest.mark.case("AP-7")
@pytest.mark.node_faults("kubelet_stopped", case="AP-7")
def test_kubelet_of_the_apps_node_stopped(scenario: Scenario, app: AppSpec):
    """AP-7 (opt-in: ``node_fault: kubelet-stop`` in app.yaml): on the two-node profile, the kubelet
    of the node with most of the app's pods (:func:`busiest_node`) stopped under load (``systemctl stop kubelet``; always started
    again, then the cluster's health checked: e2e.faults.core.fault) until the endpoints of every
    app pod on that node are not ready and TAIL_S more: the time from the node's last Lease renewal
    before the stop until the Service's traffic moved off its pods (the last of their endpoints
    ready=false), the node's Ready reason meanwhile, and the requests lost (the containers keep
    running: the app's objective). The load stops before the kubelet starts again."""
    sc = scenario
    if app.node_fault is None:
        pytest.skip(f"{app.name}: the node fault is opt-in (app.yaml node_fault: kubelet-stop)")
    if sc.kind is None:
        pytest.skip("environment: the kubelet is stopped in the kind node container")
    deploy(sc, app)
    node, on_node = busiest_node(_placed(sc, app))
    sc.note("AP-7 node", f"{node} ({len(on_node)} of {app.replicas} pods: {', '.join(on_node)})")
    renew_s = faults_doc.LEASE_DURATION_S[faults_doc.DEFAULT] * faults_doc.RENEW_FRACTION * (1 + faults_doc.RENEW_JITTER)
    budget = renew_s + sc.judge.wait_budget_s("AP-7", "traffic_moved_after_last_renew_s") + WAIT_SLACK_S

    def moved() -> float | None:
        seen = [endpoints.first(_states(sc, app), p, after=window.injected_at, ready=False) for p in on_node]
        return max(s.received_at for s in seen) if all(seen) else None  # type: ignore[union-attr]

    with kubelet_stopped(sc, node) as window:
        with _under_load(sc, app, BASELINE_S + budget + TAIL_S) as gen:
            moved_at = sc.first_within(budget, f"the endpoints of {', '.join(on_node)} not ready", moved)
            time.sleep(TAIL_S)  # documented wait: failures that come late are counted
        result = gen.result()
    _picture(sc, app, "AP-7 (kubelet stopped)", result,
             [traffic_picture.PodEvents(p, None, None, None, None, "") for p in on_node])
    renewed = last_renew_before(sc.recorder.changes("Lease", node), sc.require(window.injected_at, "the stop's time"))
    unknown = first_condition(sc.recorder.changes("Node", node), "Unknown", after=window.injected_at)
    seen = Seen(failures_by_class=result.failures_by_class(), pods_on_node=len(on_node))
    details = {"node": node, "pods_on_node": on_node, "last_renew": renewed, "stopped_at": window.injected_at,
               "moved_at": moved_at, "recovery": window.recovery.text() if window.recovery else None}
    _judge(sc, app, seen, [
        ("AP-7", "failed_requests", len(result.failures), moved_at,
         {"summary": result.summary(), "failures_by_class": result.failures_by_class(), "pods_on_node": on_node}),
        ("AP-7", "traffic_moved_after_last_renew_s",
         round(moved_at - renewed, 3) if moved_at is not None and renewed is not None else None, moved_at, details),
        ("AP-7", "node_ready_reason", unknown.obj.get("reason") if unknown else None, unknown.received_at if unknown else None,
         {"condition": unknown.obj if unknown else None}),
    ])
