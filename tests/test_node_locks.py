"""Who may use a cluster at once (e2e.plugin.clusters): shared and serial tests, lanes, heavy
slots, and the run-wide count of tests left per profile. Threads stand in for xdist workers:
flock locks of separate open files exclude each other within one process too."""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest

from e2e.plugin import clusters


@pytest.fixture(autouse=True)
def state(tmp_path, monkeypatch):
    monkeypatch.setattr(clusters, "STATE_DIR", tmp_path)
    monkeypatch.setattr(clusters, "node_lock_path", lambda config, name, r: tmp_path / f"{name}-{r}.node.lock")
    monkeypatch.setattr(clusters, "run_id", lambda: "run-1")
    return tmp_path


def _hold(events: list, label: str, seconds: float, *args):
    with clusters.hold_node(None, *args) as replica:
        events.append((time.monotonic(), f"{label} in", replica))
        time.sleep(seconds)
        events.append((time.monotonic(), f"{label} out", replica))


def _start(*threads: threading.Thread, gap: float = 0.1) -> None:
    for t in threads:
        t.start()
        time.sleep(gap)
    for t in threads:
        t.join(10)


def test_a_serial_test_waits_for_the_running_ones_and_new_ones_queue_behind_it():
    events: list = []
    first = threading.Thread(target=_hold, args=(events, "shared-1", 0.6, "default", [0], False))
    serial = threading.Thread(target=_hold, args=(events, "serial", 0.3, "default", [0], True))
    later = threading.Thread(target=_hold, args=(events, "shared-2", 0.1, "default", [0], False))
    _start(first, serial, later)
    order = [label for _, label, _ in sorted(events)]
    # without the turnstile shared-2 would join shared-1 and the serial test could starve
    assert order == ["shared-1 in", "shared-1 out", "serial in", "serial out", "shared-2 in", "shared-2 out"]


def test_shared_tests_run_side_by_side():
    events: list = []
    a = threading.Thread(target=_hold, args=(events, "a", 0.4, "default", [0], False))
    b = threading.Thread(target=_hold, args=(events, "b", 0.4, "default", [0], False))
    _start(a, b)
    order = [label for _, label, _ in sorted(events)]
    assert order[:2] == ["a in", "b in"]


def test_serial_tests_take_the_free_lanes_and_a_third_waits_for_one():
    events: list = []
    threads = [threading.Thread(target=_hold, args=(events, f"s{i}", 0.4, "fast", [0, 1], True)) for i in range(3)]
    _start(*threads)
    ins = [(label, replica) for _, label, replica in sorted(events) if label.endswith(" in")]
    assert [r for _, r in ins[:2]] == [0, 1]
    outs = [(t, label, r) for t, label, r in sorted(events) if label.endswith(" out")]
    third_in = next(t for t, label, _ in events if label == "s2 in")
    assert third_in >= outs[0][0]  # only after a lane was free again


def _hold_rooms(events: list, label: str, seconds: float, rooms: tuple[str, ...]):
    with clusters.hold_node(None, "default", [0], True, rooms) as replica:
        events.append((time.monotonic(), f"{label} in", replica))
        time.sleep(seconds)
        events.append((time.monotonic(), f"{label} out", replica))


def test_a_rooms_serial_test_holds_its_own_room_only():
    """issue 45: a serial test of the image-pulls room leaves the default room's tests running."""
    events: list = []
    serial = threading.Thread(target=_hold, args=(events, "pulls-serial", 0.5, "image-pulls", [0], True))
    other = threading.Thread(target=_hold, args=(events, "default-shared", 0.1, "default", [0], False))
    _start(serial, other)
    order = [label for _, label, _ in sorted(events)]
    assert order == ["pulls-serial in", "default-shared in", "default-shared out", "pulls-serial out"]


def test_a_test_holding_every_room_waits_for_each_and_the_rooms_queue_behind_it():
    """A serial test whose fault reaches beyond its node (e2e.run.plan.Plan.every_room): it waits for
    the running tests of two rooms; a test of a third room that comes after it waits for it."""
    events: list = []
    rooms = ("crashloop-cap-20s", "default", "image-pulls")
    a = threading.Thread(target=_hold, args=(events, "default-shared", 0.5, "default", [0], False))
    b = threading.Thread(target=_hold, args=(events, "pulls-shared", 0.7, "image-pulls", [0], False))
    whole = threading.Thread(target=_hold_rooms, args=(events, "every-room", 0.2, rooms))
    later = threading.Thread(target=_hold, args=(events, "cap-shared", 0.1, "crashloop-cap-20s", [0], False))
    _start(a, b, whole, later)
    order = [label for _, label, _ in sorted(events)]
    assert order == ["default-shared in", "pulls-shared in", "default-shared out", "pulls-shared out",
                     "every-room in", "every-room out", "cap-shared in", "cap-shared out"]


def test_two_tests_holding_every_room_take_turns():
    events: list = []
    rooms = ("default", "image-pulls", "multi-node")
    threads = [threading.Thread(target=_hold_rooms, args=(events, f"w{i}", 0.2, rooms[::1 - 2 * i])) for i in (0, 1)]
    _start(*threads, gap=0.02)
    assert [label for _, label, _ in sorted(events)] == ["w0 in", "w0 out", "w1 in", "w1 out"]


def test_heavy_slots_limit_how_many_run_at_once():
    running, peak = [0], [0]
    lock = threading.Lock()

    def heavy():
        with clusters.heavy_slot(2):
            with lock:
                running[0] += 1
                peak[0] = max(peak[0], running[0])
            time.sleep(0.3)
            with lock:
                running[0] -= 1

    _start(*(threading.Thread(target=heavy) for _ in range(4)), gap=0.02)
    assert peak[0] == 2


def test_the_count_of_tests_left_is_run_wide_and_names_finished_profiles():
    selected = Counter({"default": 2, "cap": 2})
    assert clusters.count_down(selected, "cap") == set()
    # another worker (its own stash, same file) counts the cap profile's second test
    assert clusters.count_down(Counter(selected), "cap") == {"cap"}
    assert clusters.count_down(selected, "default") == {"cap"}
    assert clusters.count_down(selected, "default") == {"cap", "default"}


def test_a_second_phase_test_waits_for_every_first_phase_test_of_the_run():
    done: list = []

    def second():
        done.append(("waited", clusters.wait_for_first_phase(2, limit_s=10, poll_s=0.02)))

    t = threading.Thread(target=second)
    t.start()
    time.sleep(0.2)
    assert clusters.count_first_phase_done(2) == 1  # one worker's test
    time.sleep(0.2)
    assert not done  # still one left
    assert clusters.count_first_phase_done(2) == 0  # another worker's: the file is run-wide
    t.join(5)
    assert done and done[0][1] >= 0.4


def test_a_second_phase_test_stops_waiting_at_its_limit(caplog):
    # a worker that died never counts its test down: the wait ends, with a warning
    assert clusters.wait_for_first_phase(1, limit_s=0.1, poll_s=0.02) >= 0.1
    assert "starting the second phase anyway" in caplog.text


def test_nothing_to_wait_for_without_a_first_phase():
    assert clusters.wait_for_first_phase(0, limit_s=10) < 0.5


def test_each_worker_creates_its_share_of_the_plans_clusters_ahead(monkeypatch):
    from types import SimpleNamespace

    from e2e.run.plan import Plan

    made = []

    class FakeClusters:
        def get(self, name, replica=0):
            made.append((name, replica))
            if name == "broken":
                pytest.fail("cannot set up the cluster")

    monkeypatch.setattr(clusters, "clusters_of", lambda config: FakeClusters())
    plan = Plan(clusters=[("fast", 0), ("fast", 1), ("broken", 0), ("default", 0), ("cap", 0)])
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "2")
    clusters.create_ahead(SimpleNamespace(), plan)  # the broken one is left to its tests
    assert made == [("fast", 0), ("broken", 0), ("cap", 0)]
    monkeypatch.delenv("PYTEST_XDIST_WORKER")
    made.clear()
    clusters.create_ahead(SimpleNamespace(), plan)  # not a worker: a sequential run creates on demand
    assert made == []


def test_a_test_waits_for_creations_in_progress_also_between_two(tmp_path, monkeypatch):
    from e2e.cluster import kind

    monkeypatch.setattr(kind, "STATE_DIR", tmp_path)
    monkeypatch.setattr(kind, "CREATE_SLOTS", 1)
    order = []

    def create(label):
        with kind.creating():
            order.append(f"{label} creates")
            time.sleep(0.3)

    def test():
        kind.wait_for_creations(5)
        order.append("test starts")

    a, b, t = (threading.Thread(target=create, args=("a",)), threading.Thread(target=create, args=("b",)),
               threading.Thread(target=test))
    _start(a, b, t, gap=0.05)
    # b waited for the one slot while a created: the test still waited for b
    assert order == ["a creates", "b creates", "test starts"]


@pytest.mark.parametrize("kubeconfig", [None, "kept.kubeconfig"])
def test_the_end_of_a_run_removes_the_lock_files_it_made_unless_someone_holds_them(tmp_path, monkeypatch, kubeconfig):
    """issue 41 (6): a run left its liveness lock, a --kubeconfig run its node lock and turnstile, and
    the creation marker and slots stayed, all until a `make clean`."""
    import fcntl
    import os
    from types import SimpleNamespace

    from e2e.cluster import kind
    from e2e.base.locks import take

    monkeypatch.setattr(kind, "STATE_DIR", tmp_path)
    monkeypatch.setattr(clusters, "WORKERS_EXIT_S", 0.0)
    config = SimpleNamespace(getoption=lambda name: kubeconfig if name == "--kubeconfig" else None)
    kind.hold_run("run-1")
    with clusters.hold_node(config, "default", [0], False), kind.creating():
        pass
    made = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert "runs/run-1.lock" in made and "creating.lock" in made and "default-0.node.turn" in made
    other = take(tmp_path / "create.0.lock", fcntl.LOCK_EX)  # another run creating a cluster now
    try:
        clusters.remove_lock_files(config)
    finally:
        os.close(other)
    left = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    if kubeconfig:  # its node's locks are named by the run; it creates no cluster: the creation locks are not its own
        assert left == ["create.0.lock", "creating.lock"]
    else:  # a kind cluster's node locks go with the cluster (Kind.delete), or stay with a kept one
        assert left == ["create.0.lock", "default-0.node.lock", "default-0.node.turn"]
    assert not kind.run_alive("run-1")


def test_the_lock_files_of_a_cluster_whose_creation_was_stopped_go_at_the_end_of_the_run(state, monkeypatch):
    """make interrupt-check run 5 (v4: SIGINT 11.3 s into kind create): the cluster and its state
    files went, but its node's lock and turnstile (taken before the cluster is made) stayed."""
    import fcntl
    import os
    from types import SimpleNamespace

    from e2e.base.locks import take
    from e2e.base.jsonfile import update_json

    monkeypatch.setattr(clusters, "WORKERS_EXIT_S", 0.0)
    update_json(clusters._used_file(), lambda names: ["ple2e-gone", "ple2e-held", "ple2e-kept"], list)
    for name in ("ple2e-gone", "ple2e-held", "ple2e-kept"):
        for suffix in (".use", ".lock", ".node.lock", ".node.turn"):
            (state / f"{name}{suffix}").write_text("")
    (state / "ple2e-kept.json").write_text("{}")  # a cluster that exists: its files are its own
    held = take(state / "ple2e-held.node.lock", fcntl.LOCK_SH)  # another run about to make it
    try:
        clusters._sweep_used(SimpleNamespace(getoption=lambda name: None), set())
    finally:
        os.close(held)
    assert sorted(p.name for p in state.iterdir() if p.is_file()) == [
        "ple2e-held.node.lock", "ple2e-kept.json", "ple2e-kept.lock", "ple2e-kept.node.lock", "ple2e-kept.node.turn",
        "ple2e-kept.use"]


def test_waiting_for_creations_makes_no_lock_file(tmp_path, monkeypatch):
    """make interrupt-check (INTERRUPTS=10, row 9): a --kubeconfig run, which creates no cluster,
    left ``creating.lock``: its test's wait for creations in progress had made it."""
    from e2e.cluster import kind

    monkeypatch.setattr(kind, "STATE_DIR", tmp_path)
    assert kind.wait_for_creations(5) < 0.5
    assert list(tmp_path.iterdir()) == []
