"""ES — ephemeral-storage eviction (CASES.md ES-1 … ES-7), on a real cluster.

Every writer is a busybox script (manifests next to this file) that writes a fixed number of
1 MiB blocks with ``dd`` (ES-5: to stdout) and stamps ``crossed`` (e2e.evidence.stamps) right after
the block that takes its usage over the limit — the crossing time is known to the
microsecond on the node's kernel clock, which on kind is this process's clock too. A delay is
measured from that stamp to the receive time (by the recorder) of the kubelet's ``Evicted``
event and of the pod's first terminal status. Bands: e2e/documented/storage.py.

Why the verdict does not depend on a race with the workload's exit: the writer's PID 1 is a
shell with no TERM trap waiting on ``sleep 3600 & wait``. PID 1 ignores SIGTERM, so nothing
but the eviction's SIGKILL (2 s after SIGTERM) ends it: exit 137, never 0. A pod whose
containers all exit 0 under ``restartPolicy: Never`` could otherwise end ``Succeeded`` after
an eviction (the kubelet's final status recomputes the phase from the exit codes). The test
also judges the *first* terminal phase the recorder saw, not only the last.

The kubelet deletes an evicted pod's containers (and their logs) as soon as the pod is
terminal, so the stamps are read from the log while the writer runs, and the container's
final state may reach the API only as ``lastState`` ``ContainerStatusUnknown`` (a placeholder
137): the exit code is judged only when the runtime's own terminated state was published
(e2e/evidence/ephemeral.py ``container_ends``); what was seen is in the details either way.

While waiting, the kubelet's Summary API (the numbers the eviction manager reads) is polled
about once a second; the first sample over the limit goes into the measurement details as
evidence of the stats lag (not judged).

Sizes are small (limits of 3–16 MiB): the node's disk is the host's.
"""

from __future__ import annotations

import json
import re
import time

import pytest

from e2e.base.verdicts import TOLERATED_RACE
from e2e.record import pods
from e2e.documented.storage import DISK_SIGNALS, EVICTION_MONITORING_PERIOD_S, disk_signal_from, eviction_hard_of
from e2e.evidence.ephemeral import (Eviction, NodeStorage, UsageWatch, container_used, containerd_stats_collect_period_s, disk_signals,
                                    eviction, eviction_settings, first_terminal, parse_duration_s, read_node_storage, stats_summary)
from e2e.evidence.stamps import event_times
from e2e.evidence.stamp_logs import StampWatch, stamps_from_logs
from e2e.measure.storage import eviction_delays
from e2e.measure.values import expect_all
from e2e.run.scenario import Scenario
from e2e.base.waiting import WAIT_SLACK_S

MIB = 1024 * 1024
# Writing up to 16 MiB in 1 MiB blocks on a shared host (waits only).
WRITE_BUDGET_S = 10


# -- can this cluster enforce ephemeral-storage limits? (ES-7) --------------------------


@pytest.fixture  # per test: `cluster` is the test's own profile's cluster
def node_storage(cluster) -> NodeStorage:
    return read_node_storage(cluster.kube)


def require_enforcement(storage: NodeStorage) -> None:
    reason = storage.problem()
    if reason:
        pytest.skip(reason)


# -- the kubelet's view while waiting (evidence, not judged) ----------------------------


# -- one eviction -------------------------------------------------------------------------


def run_eviction(sc: Scenario, case: str, manifest: str, pod: str, writer: str, watch: UsageWatch,
                 **values: object) -> tuple[Eviction, dict[str, float]]:
    """Apply ``manifest`` and wait for the ``Evicted`` event and then the first terminal
    status of ``pod``; return the eviction and the writer's stamp times. Timeouts: the upper ends of
    the case's bands plus start and write budgets."""
    sc.apply(manifest, name=pod, **values)
    to_event = sc.judge.wait_budget_s(case, "crossing_to_evicted_event_s")
    to_failed = sc.judge.wait_budget_s(case, "evicted_event_to_failed_s")
    written = StampWatch(sc, pod, writer, "crossed")

    def evicted() -> Eviction | None:
        written.poll()
        watch.poll()
        return eviction(sc.recorder.changes(), pod)

    sc.wait_for(f"an Evicted event of pod {pod}", evicted, WAIT_SLACK_S + WRITE_BUDGET_S + to_event)
    ev = sc.wait_for(f"pod {pod} in a terminal phase", lambda: (e := eviction(sc.recorder.changes(), pod)) and e.terminal_phase and e,
                     to_failed + WAIT_SLACK_S)
    sc.require("crossed" in written.times, f"{case}: the writer's crossed stamp read before the eviction (stamps: {written.times})")
    return ev, written.times


def judge_eviction(sc: Scenario, case: str, pod: str, writer: str, ev: Eviction, times: dict[str, float],
                   watch: UsageWatch, suffix: str = "", **message: str) -> None:
    """Judge the eviction's delays, status, event and exit code (documented in
    e2e/documented/storage.py); ``message`` fills the documented message."""
    crossed = times["crossed"]
    details = {"crossed_at": crossed, "stamps": times, "evicted_event_received_at": round(ev.event_received_at, 3),
               "terminal_received_at": round(ev.terminal_received_at, 3), **watch.details(since=crossed)}
    expect_all(sc.expect, eviction_delays(case, ev, crossed, details))
    status = (sc.pod(pod) or {}).get("status") or {}
    end = ev.ends.get(writer)
    ends = {name: vars(e) for name, e in ev.ends.items()}
    sc.expect(case, "first_terminal_phase", ev.terminal_phase, around=ev.terminal_received_at, details={"container_ends": ends})
    sc.expect(case, "phase", pods.phase(sc.pod(pod)))
    sc.expect(case, "reason", status.get("reason"))
    sc.expect(case, f"message{suffix}", status.get("message"), **message)
    sc.expect(case, f"event_message{suffix}", ev.event_message, **message)
    sc.expect(case, "event_type", ev.event_type)
    sc.expect(case, "disruption_target_condition", ev.disruption_target)
    # The exit code is the process's only if the runtime's terminated state reached the API; when
    # the kubelet had already removed the container it publishes ContainerStatusUnknown with a
    # placeholder 137 (see e2e/evidence/ephemeral.py): that is kept in the details above, not judged.
    if end is None or end.from_runtime:
        sc.expect(case, "exit_code", end.exit_code if end else None, details={"container_ends": ends})
    else:
        sc.judge.set_aside(case, "exit_code", end.exit_code, TOLERATED_RACE,
                           "the kubelet removed the evicted container before the runtime's terminated state "
                           "reached the API (ContainerStatusUnknown, placeholder 137): the process's own exit "
                           "code was not observable", details={"container_ends": ends})


# -- ES-1 … ES-5 ---------------------------------------------------------------------------


@pytest.mark.heavy
@pytest.mark.case("ES-1")
@pytest.mark.parametrize("variant", ["single", "sibling"])
def test_container_limit(scenario: Scenario, node_storage: NodeStorage, variant: str):
    """ES-1: a container writes 10 MiB into its writable layer over limits.ephemeral-storage
    8Mi → evicted. ``single``: one container (the pod-level or the container-level message);
    ``sibling``: an idle second container keeps the pod total under the sum of limits, so the
    container-level message."""
    require_enforcement(node_storage)
    sc = scenario
    manifest = "writer.yaml" if variant == "single" else "writer-sibling.yaml"
    watch = UsageWatch(sc, "writer", container_used("app"), 8 * MIB)
    ev, times = run_eviction(sc, "ES-1", manifest, "writer", "app", watch, limit="8Mi", blocks=10, cross_mib=8)
    params = {"container": "app", "limit": "8Mi"}
    if variant == "single":  # a regex: escape the values
        params = {k: re.escape(v) for k, v in params.items()}
    judge_eviction(sc, "ES-1", "writer", "app", ev, times, watch, suffix=f"[{variant}]", **params)


@pytest.mark.heavy
@pytest.mark.case("ES-2")
def test_emptydir_size_limit(scenario: Scenario, node_storage: NodeStorage):
    """ES-2: 10 MiB into an emptyDir with sizeLimit 8Mi → evicted ("Usage of EmptyDir volume…").
    The kubelet measures volumes every 60–120 s: up to ~2 minutes."""
    require_enforcement(node_storage)
    sc = scenario
    watch = UsageWatch(sc, "scratch", lambda s: s.volumes.get("scratch"), 8 * MIB)
    ev, times = run_eviction(sc, "ES-2", "emptydir-sizelimit.yaml", "scratch", "app", watch, limit="8Mi", blocks=10, cross_mib=8)
    judge_eviction(sc, "ES-2", "scratch", "app", ev, times, watch, volume="scratch", limit="8Mi")


@pytest.mark.heavy
@pytest.mark.case("ES-3")
def test_pod_total_over_sum_of_limits(scenario: Scenario, node_storage: NodeStorage):
    """ES-3: a container without a limit of its own writes 10 MiB; its two siblings have 4Mi each
    → the pod total exceeds their sum 8Mi → evicted ("Pod ephemeral local storage usage…")."""
    require_enforcement(node_storage)
    sc = scenario
    watch = UsageWatch(sc, "total", lambda s: s.ephemeral_bytes, 8 * MIB)
    ev, times = run_eviction(sc, "ES-3", "pod-total.yaml", "total", "writer", watch, limit_each="4Mi", blocks=10, cross_mib=8)
    judge_eviction(sc, "ES-3", "total", "writer", ev, times, watch, limit="8Mi")


def _eviction_seen(sc: Scenario, pod: str) -> bool:
    changes = sc.recorder.changes()
    return eviction(changes, pod) is not None or first_terminal(changes, pod) is not None


def _stamps_of(sc: Scenario, pod: str, container: str) -> dict[str, float]:
    return event_times(stamps_from_logs(sc, pod, [container]))


def no_eviction_window_s(sc: Scenario) -> float:
    """How long after its write a pod that must not be evicted is watched (s): the upper end of
    the ES-1 crossing → Evicted event band (writable-layer stats lag + monitoring period + one
    pass + event delivery), so an eviction that the mechanism would produce is seen."""
    return sc.judge.wait_budget_s("ES-1", "crossing_to_evicted_event_s")


@pytest.mark.heavy
@pytest.mark.case("ES-4")
def test_under_limit_not_evicted(scenario: Scenario, node_storage: NodeStorage):
    """ES-4: 12 MiB in the writable layer under limits.ephemeral-storage 16Mi: not evicted
    within the ES-1 band's upper end after the write (and the kubelet's stats saw the usage)."""
    require_enforcement(node_storage)
    sc = scenario
    sc.apply("writer.yaml", name="under", limit="16Mi", blocks=12, cross_mib=0)
    written = sc.wait_for("the write of under/app", lambda: _stamps_of(sc, "under", "app").get("written"),
                          WAIT_SLACK_S + WRITE_BUDGET_S, interval_s=0.5)
    watch = UsageWatch(sc, "under", container_used("app"), 12 * MIB - 1)
    window = no_eviction_window_s(sc)
    end = written + window

    def evicted_or_seen() -> bool:
        watch.poll()
        return _eviction_seen(sc, "under")

    quiet = sc.never_within(max(0.0, end - time.time()), "an eviction of pod under", evicted_or_seen)
    details = {"written_at": written, "window_s": window, "limit_bytes": 16 * MIB, "written_bytes": 12 * MIB,
               **watch.details(since=written, event="written")}
    sc.expect("ES-4", "evicted[under-limit]", not quiet, around=end, details=details)


@pytest.mark.heavy
@pytest.mark.case("ES-4")
def test_memory_emptydir_not_counted(scenario: Scenario, node_storage: NodeStorage):
    """ES-4: 16 MiB in a memory-backed emptyDir of a container with limits.ephemeral-storage 8Mi:
    once the kubelet's volume stats show the 16 MiB, the pod's ephemeral-storage total does not
    include them, and no eviction follows within the ES-1 band's upper end."""
    require_enforcement(node_storage)
    sc = scenario
    sc.apply("memory-emptydir.yaml", name="tmpfs", limit="8Mi", memory="64Mi", blocks=16, cross_mib=8)
    watch = UsageWatch(sc, "tmpfs", lambda s: s.volumes.get("ram"), 16 * MIB - 1)
    # the volume stats appear within the ES-2 lag (volumeStatsAggPeriod × 2) after the write
    stats_wait = sc.judge.wait_budget_s("ES-2", "crossing_to_evicted_event_s") + WAIT_SLACK_S

    def volume_seen_or_evicted():
        watch.poll()
        return watch.first_over or _eviction_seen(sc, "tmpfs")

    sc.wait_for("16 MiB of emptyDir ram in the kubelet's volume stats (or an eviction)", volume_seen_or_evicted, stats_wait)
    if watch.first_over is None:  # evicted before the volume stats showed the 16 MiB
        sc.expect("ES-4", "evicted[memory-emptydir]", True, details=watch.details())
        return
    seen_at, storage = watch.first_over
    ram = storage.volumes["ram"]
    details = {"stamps": _stamps_of(sc, "tmpfs", "app"), "seen_at": round(seen_at, 3), **storage.as_dict()}
    sc.expect("ES-4", "memory_emptydir_counted", (storage.ephemeral_bytes or 0) >= ram, details=details)
    window = no_eviction_window_s(sc)
    quiet = sc.never_within(window, "an eviction of pod tmpfs", lambda: _eviction_seen(sc, "tmpfs"))
    sc.expect("ES-4", "evicted[memory-emptydir]", not quiet, details={"window_s": window, **details})


@pytest.mark.heavy
@pytest.mark.case("ES-5")
@pytest.mark.min_k8s(34)  # documented from the kubelet source of 1.34–1.37 only
def test_logs_count(scenario: Scenario, node_storage: NodeStorage):
    """ES-5: a container that only prints (4 MiB to stdout, nothing to its writable layer) with
    limits.ephemeral-storage 3Mi evicts itself: "Container app exceeded…" (its idle sibling
    keeps the pod total under the sum of limits)."""
    require_enforcement(node_storage)
    sc = scenario
    watch = UsageWatch(sc, "chatty", container_used("app"), 3 * MIB)
    ev, times = run_eviction(sc, "ES-5", "chatty.yaml", "chatty", "app", watch, limit="3Mi", blocks=4, cross_mib=3)
    judge_eviction(sc, "ES-5", "chatty", "app", ev, times, watch, container="app", limit="3Mi")


# -- ES-6, ES-7 ---------------------------------------------------------------------------


@pytest.mark.case("ES-6")
def test_request_above_allocatable(scenario: Scenario, node_storage: NodeStorage):
    """ES-6: requests.ephemeral-storage twice the largest node allocatable → Pending,
    FailedScheduling "… Insufficient ephemeral-storage …"."""
    require_enforcement(node_storage)
    sc = scenario
    request = 2 * max(a for a in node_storage.allocatable.values() if a)
    sc.apply("too-big-request.yaml", name="huge", request=request)
    event = sc.wait_for("a FailedScheduling event of pod huge", lambda: sc.events("FailedScheduling", "huge"), WAIT_SLACK_S)[0].obj
    scheduled = pods.condition(sc.pod("huge"), "PodScheduled") or {}
    details = {"request_bytes": request, "allocatable_bytes": node_storage.allocatable}
    sc.expect("ES-6", "phase", pods.phase(sc.pod("huge")), details=details)
    sc.expect("ES-6", "pod_scheduled_reason", scheduled.get("reason"), details={"condition": scheduled})
    sc.expect("ES-6", "failed_scheduling_message", event.get("message"), details=details)


@pytest.mark.case("ES-7")
def test_node_capability(scenario: Scenario, node_storage: NodeStorage):
    """ES-7: the node reports allocatable ephemeral-storage and the kubelet runs with
    localStorageCapacityIsolation (else: skip, the other ES cases cannot hold); the kubelet's
    eviction settings (configz) and the periods the ES bands assume are recorded. Each node's disk
    signals (Summary API) stay at or above its own hard eviction thresholds (its configz; the
    upstream defaults when unknown, said in the details): no DiskPressure eviction beside ES-1 … ES-5."""
    sc = scenario
    for node, cfg in node_storage.kubelet.items():
        sc.add_file(f"configz-{node}.json", json.dumps({"kubeletconfig": cfg}, indent=1))
    reason = node_storage.problem()
    if reason:
        pytest.skip(reason)
    constants = {"evictionMonitoringPeriod_s": EVICTION_MONITORING_PERIOD_S,
                 "evictionMonitoringPeriod_source": "pkg/kubelet/kubelet.go evictionMonitoringPeriod (constant, not in configz)"}
    for node, alloc in node_storage.allocatable.items():
        cfg = node_storage.kubelet.get(node, {})
        settings = {"node": node, **eviction_settings(cfg), **constants,
                    "allocatable_ephemeral_storage_bytes": alloc, "configz_error": node_storage.errors.get(node)}
        settings["disk_signals"] = judge_disk_signals(sc, node, cfg, node_storage.errors.get(node))
        sc.expect("ES-7", "allocatable_ephemeral_storage_reported", bool(alloc), details=settings)
        if not cfg:
            continue
        sc.expect("ES-7", "local_storage_capacity_isolation", cfg.get("localStorageCapacityIsolation"), details=settings)
        if sc.kind is not None:  # the documented 0 % thresholds are kind's; elsewhere a fact (make compare: keyed by facts)
            hard = json.dumps(cfg.get("evictionHard") or {}, sort_keys=True)
            sc.expect("ES-7", "eviction_hard[kind]", hard, details=settings)
        if "volumeStatsAggPeriod" in cfg:
            sc.expect("ES-7", "volume_stats_agg_period_s", parse_duration_s(cfg["volumeStatsAggPeriod"]), details=settings)
    if sc.access is not None:  # in the node: docker exec on the suite's clusters, else the node agent
        dump = sc.node_exec("containerd", "config", "dump")
        sc.add_file("containerd-config-dump.toml", dump)
        sc.expect("ES-7", "containerd_stats_collect_period_s", containerd_stats_collect_period_s(dump),
                  details={"source": "containerd config dump, [plugins.'io.containerd.cri.v1.images'] stats_collect_period"})


def judge_disk_signals(sc: Scenario, node: str, config: dict, error: str | None) -> dict:
    """ES-7: ``node``'s disk signals (its Summary API) against its hard eviction thresholds
    (:func:`e2e.documented.storage.eviction_hard_of` of its configz ``config``, unreadable for ``error``);
    returns what was observed and which signals have no threshold to judge, for the node's other values."""
    hard = eviction_hard_of(node, config, error)
    summary = stats_summary(sc.kube.api_client, node)
    observed = disk_signals(summary)
    details = {"node": node, "eviction_hard": dict(hard.thresholds), "eviction_hard_source": hard.source,
               **({"assumed": hard.assumed} if hard.assumed else {}),
               "observed": {k: {"available": a, "capacity": c} for k, (a, c) in observed.items()}}
    judged = {}
    for signal in DISK_SIGNALS:
        if signal not in observed:
            sc.require(not signal.startswith("nodefs"), f"ES-7: node {node}'s Summary API has no node.fs for {signal}")
            continue  # a kubelet without an image filesystem in its summary observes no imagefs signal
        available, capacity = observed[signal]
        judged[signal] = (available, disk_signal_from(signal, hard, capacity))
    details["not_judged (no threshold: unset, 0% or 100%)"] = sorted(s for s, (_, e) in judged.items() if e is None)
    for signal, (available, expectation) in judged.items():
        if expectation is not None:
            sc.expect("ES-7", signal, available, details=details, expectation=expectation)
    return details
