"""Container-written stamps and the SC order judge (e2e.evidence.stamps): a broken order fails with the
measured order, the documented order and the case ID — through the same code the SC scenarios use
(``expect_order`` with the real registry of e2e/documented/sidecar.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

import e2e.documented  # noqa: F401  (registers the SC expectations)
from e2e.judge.expectations import REGISTRY, NotDocumented
from e2e.cluster.kube import PLACEHOLDER, load_manifests
from e2e.judge.measurements import ExpectationFailed, Judge, MeasurementLog
from e2e.record.recorder import Change
from e2e.evidence.stamps import STAMP_SH, Stamp, find, gap_ms, merge, parse, stamps_from_changes, stamps_from_pod
from e2e.evidence.stamp_order import expect_order, measured_order
from e2e.evidence.stamp_table import merged_rows, merged_table

from helpers import cstatus, running, terminated

T = 1_795_940_222.0  # an epoch second (2026-11-29, the clock of the first real SC-3 run)
DOCUMENTED_STOP = "app sigterm → app exit → sidecar-2 sigterm → sidecar-2 exit → sidecar-1 sigterm → sidecar-1 exit"
MANIFESTS = Path(__file__).resolve().parent.parent / "scenarios" / "sidecar"


def stamps(*items: tuple[float, str]) -> list[Stamp]:
    """``(seconds after T, "container event")`` pairs as stamps."""
    out = []
    for dt, key in items:
        container, event = key.split(" ", 1)
        out.append(Stamp(T + dt, event, (("container", container),)))
    return out


def judge(tmp_path, minor: int = 37) -> Judge:
    return Judge(MeasurementLog(tmp_path / "measurements.json"), "tests/test_sidecar_order.py", "unit", f"v1.{minor}.2", minor=minor,
                 registry=REGISTRY)


# a sidecar that stops before the main container: what a plain second container does
BROKEN_STOP = stamps(
    (0.010, "sidecar-2 sigterm"),
    (0.020, "app sigterm"),
    (0.025, "sidecar-1 sigterm"),
    (1.030, "sidecar-2 exit"),
    (1.035, "sidecar-1 exit"),
    (1.040, "app exit"),
)
# the documented order, with the gaps of the first real run on v1.37.2 (ms after the delete)
GOOD_STOP = stamps(
    (1.3067, "app sigterm"),
    (2.3143, "app exit"),
    (2.3942, "sidecar-2 sigterm"),
    (3.3979, "sidecar-2 exit"),
    (3.4594, "sidecar-1 sigterm"),
    (4.4622, "sidecar-1 exit"),
)


# -- the order judge --------------------------------------------------------------------------


def test_a_sidecar_stopping_before_the_main_container_fails_with_a_clear_message(tmp_path):
    j = judge(tmp_path)
    assert expect_order(j, "SC-3", "stop_order", BROKEN_STOP, context="the merged timeline", t_ref=T) is False
    with pytest.raises(ExpectationFailed) as err:
        j.verify()
    text = str(err.value)
    measured = "sidecar-2 sigterm → app sigterm → sidecar-1 sigterm → sidecar-2 exit → sidecar-1 exit → app exit"
    assert f"SC-3 stop_order: measured '{measured}', expected '{DOCUMENTED_STOP}'" in text
    assert "documented for Kubernetes 1.33–newer (cluster: v1.37.2, cgroup unknown)" in text
    assert "killContainersWithSyncResult" in text and "waitForTurn" in text  # the source is named
    assert "the merged timeline" in text  # the context a scenario passes (API view + stamps)

    (m,) = MeasurementLog(tmp_path / "measurements.json").read()["measurements"]
    assert (m["case"], m["name"], m["verdict"]) == ("SC-3", "stop_order", "fail")
    assert m["value"] == measured and m["documented"] == DOCUMENTED_STOP
    # each key's time in ms after the reference (the delete), µs stamps → 0.1 ms
    assert m["details"]["ms_after_ref"] == {
        "app sigterm": 20.0, "app exit": 1040.0, "sidecar-2 sigterm": 10.0,
        "sidecar-2 exit": 1030.0, "sidecar-1 sigterm": 25.0, "sidecar-1 exit": 1035.0,
    }


def test_the_documented_stop_order_passes(tmp_path):
    j = judge(tmp_path)
    assert expect_order(j, "SC-3", "stop_order", GOOD_STOP, t_ref=T) is True
    j.verify()
    (m,) = MeasurementLog(tmp_path / "measurements.json").read()["measurements"]
    assert m["value"] == DOCUMENTED_STOP and m["verdict"] == "pass"
    assert m["details"]["ms_after_ref"]["sidecar-1 exit"] == 4462.2


def test_the_broken_order_also_fails_the_gap_after_the_previous_exit(tmp_path):
    """sidecar-2's signal came 1030 ms *before* app exited: the gap is negative, outside [0, …]."""
    j = judge(tmp_path)
    gap = gap_ms(BROKEN_STOP, "app exit", "sidecar-2 sigterm")
    assert gap == -1030.0
    assert j.expect("SC-3", "sigterm_after_previous_exit_ms[sidecar-2]", gap) is False
    with pytest.raises(ExpectationFailed, match=r"SC-3 sigterm_after_previous_exit_ms\[sidecar-2\]: measured -1030 ms, expected 0 ms within \[0, 1000\] ms"):
        j.verify()
    assert gap_ms(GOOD_STOP, "app exit", "sidecar-2 sigterm") == 79.9


def test_a_missing_stamp_is_named_in_the_measured_order(tmp_path):
    j = judge(tmp_path)
    partial = [s for s in GOOD_STOP if s.key != "sidecar-1 exit"]
    assert expect_order(j, "SC-3", "stop_order", partial) is False
    assert j.failures[0].measurement.value == (
        "app sigterm → app exit → sidecar-2 sigterm → sidecar-2 exit → sidecar-1 sigterm (missing: sidecar-1 exit)"
    )


def test_a_main_container_starting_before_the_startup_probe_succeeded_fails(tmp_path):
    j = judge(tmp_path)
    early = stamps((0, "init start"), (1.0, "init exit"), (1.2, "sidecar start"), (1.4, "app start"), (4.3, "sidecar startup-ok"))
    assert expect_order(j, "SC-1", "start_order", early) is False
    with pytest.raises(ExpectationFailed) as err:
        j.verify()
    assert ("SC-1 start_order: measured 'init start → init exit → sidecar start → app start → sidecar startup-ok', "
            "expected 'init start → init exit → sidecar start → sidecar startup-ok → app start'") in str(err.value)


def test_the_documented_order_can_name_the_container(tmp_path):
    """SC-2 keys its order by main container: start_order[app-2] with container=app-2."""
    j = judge(tmp_path)
    got = stamps((0.6, "init exit"), (1.0, "sidecar start"), (1.2, "app-1 start"), (1.3, "app-2 start"))
    assert expect_order(j, "SC-2", "start_order[app-2]", got, container="app-2") is True
    assert j.verdicts[0].expectation.documented == "init exit → sidecar start → app-2 start"


def test_orders_are_documented_from_1_33_only():
    with pytest.raises(NotDocumented, match="documented for: 1.33–newer"):
        REGISTRY.lookup("SC-3", "stop_order", 32)
    for case in ("SC-1", "SC-2", "SC-3", "SC-4", "SC-5", "SC-6", "SC-7"):
        assert case in REGISTRY.cases()


def test_measured_order_breaks_ties_in_the_given_order():
    same = stamps((1.0, "b x"), (1.0, "a x"))
    assert measured_order(same, ["a x", "b x"]) == "a x → b x"


# -- stamps: parsing and sources ----------------------------------------------------------------


def test_parse_reads_the_stamp_lines_and_skips_others():
    text = "1795940222.692360 start container=sidecar-1\nsome other output\n1795940226.837347 sigterm container=sidecar-1 note=draining\n\n"
    got = parse(text)
    assert got == [Stamp(1795940222.69236, "start", (("container", "sidecar-1"),)),
                   Stamp(1795940226.837347, "sigterm", (("container", "sidecar-1"), ("note", "draining")))]
    assert got[1].key == "sidecar-1 sigterm"


def test_stamps_from_termination_messages_of_state_and_last_state():
    pod = {
        "status": {
            "initContainerStatuses": [
                cstatus("sidecar", running(5),
                        last={"terminated": {**terminated(1)["terminated"], "message": f"{T:.6f} start container=sidecar\n{T + 1:.6f} exit container=sidecar\n"}}),
            ],
            "containerStatuses": [
                cstatus("app", {"terminated": {**terminated(0)["terminated"], "message": f"{T + 0.5:.6f} start container=app\n"}}),
            ],
        }
    }
    got = stamps_from_pod(pod)
    assert [s.key for s in got] == ["sidecar start", "app start", "sidecar exit"]
    # the recorder sees the same message in many changes: merged without duplicates
    changes = [Change(T + i, "Pod", "MODIFIED", "p", pod) for i in range(3)] + [Change(T, "Pod", "MODIFIED", "other", pod)]
    assert stamps_from_changes(changes, "p") == got
    assert merge(got, got, parse(f"{T:.6f} start container=sidecar")) == got


def test_find_first_last_and_missing():
    ticks = stamps((1.0, "app tick"), (1.1, "app tick"), (1.2, "app tick"))
    assert find(ticks, "app tick").at == T + 1.0
    assert find(ticks, "app tick", -1).at == T + 1.2
    assert find(ticks, "app sigterm") is None and find(ticks, "app tick", 5) is None
    assert gap_ms(ticks, "app tick", "app sigterm") is None


def test_merged_table_puts_stamps_between_api_rows():
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "app"}]},
           "status": {"phase": "Running", "containerStatuses": [cstatus("app", running(0), ready=True)]}}
    changes = [Change(T + 0.1, "Pod", "MODIFIED", "p", pod)]
    got = stamps((0.05, "app start"), (0.2, "app sigterm"))
    table = merged_rows(changes, got, T, marks=[(T + 0.15, "delete")])
    assert [r.what for r in table] == ["start", "STATUS Running", "running", "delete", "sigterm"]
    text = merged_table(changes, got, T, keep=lambda s: s.event != "sigterm")
    assert "stamp app" in text and "sigterm" not in text and "+0.050" in text


# -- the shell prelude and the manifests ----------------------------------------------------------


def test_stamp_prelude_fits_a_placeholder():
    assert "\n" not in STAMP_SH  # fills one line of a YAML block scalar
    assert not PLACEHOLDER.search(STAMP_SH) and "$${" not in STAMP_SH  # survives placeholder filling as is
    assert "adjtimex" in STAMP_SH and "/dev/termination-log" in STAMP_SH and "stamp()" in STAMP_SH


@pytest.mark.parametrize("manifest", sorted(p.name for p in MANIFESTS.glob("*.yaml")))
def test_every_sc_manifest_loads_with_the_prelude(manifest):
    values = {"busybox_image": "busybox", "stamp_sh": STAMP_SH, "name": "x", "init_run_s": 1, "startup_delay_s": 3,
              "drain_s": 1, "grace_s": 4, "run_s": 2, "ready_after_s": 4, "ready_for_s": 3, "tick_s": 0.1}
    (obj,) = load_manifests(MANIFESTS / manifest, values)
    spec = obj["spec"]["template"]["spec"] if obj["kind"] == "Job" else obj["spec"]
    for c in (spec.get("initContainers") or []) + spec["containers"]:
        script = c["command"][-1]
        assert script.startswith(STAMP_SH + "\n"), c["name"]
        assert f"container={c['name']}" in script, c["name"]  # every container stamps under its own name
