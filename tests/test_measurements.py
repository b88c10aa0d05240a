"""Judge and MeasurementLog (e2e.judge.measurements): every value written at once, failures explained,
parallel writers safe."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

import e2e.documented  # noqa: F401
from e2e.judge.expectations import REGISTRY, Band, Expectation, NotDocumented, Registry, UnknownMeasurement
from e2e.judge.measurements import ExpectationFailed, Judge, Measurement, MeasurementLog

SOURCE = "[S1] «CrashLoopBackOff своими глазами»"
READ = ("1.37.2",)  # the fake cluster's release: its values are plain passes


@pytest.fixture
def registry() -> Registry:
    r = Registry()
    r.add(
        Expectation("CL-1", "restart_gap[1]", 10.0, SOURCE, unit="s", band=Band(9, 13), why="1 s truncation, 3 s kubelet", minors=(37, None),
                    verified_in=READ),
        Expectation("CL-2", "waiting_reason", "CrashLoopBackOff", SOURCE, verified_in=READ),
        Expectation("CL-2", "waiting_message", "back-off {delay} restarting failed container={container}", SOURCE,
                    verified_in=READ),
    )
    return r


@pytest.fixture
def log(tmp_path) -> MeasurementLog:
    return MeasurementLog(tmp_path / "reports" / "measurements.json")


def make_judge(log: MeasurementLog, registry: Registry, context=None, minor: int = 37) -> Judge:
    return Judge(log, test="tests/x.py::test_y", run_id="run-1", kubernetes=f"v1.{minor}.2", minor=minor, registry=registry, context=context)


def read_doc(log: MeasurementLog) -> dict:
    return json.loads(log.path.read_text())  # the file itself must be one valid JSON document


def test_expect_writes_every_measurement_immediately(log, registry):
    judge = make_judge(log, registry)
    assert judge.expect("CL-1", "restart_gap[1]", 11.0) is True
    doc = read_doc(log)
    assert list(doc) == ["measurements"]
    assert len(doc["measurements"]) == 1

    assert judge.expect("CL-1", "restart_gap[1]", 35.0) is False
    first, second = read_doc(log)["measurements"]
    assert (first["value"], first["verdict"]) == (11.0, "pass")
    assert (second["value"], second["verdict"]) == (35.0, "fail")
    assert second["case"] == "CL-1" and second["name"] == "restart_gap[1]"
    assert second["band"] == [9, 13]
    assert second["documented"] == 10.0 and second["unit"] == "s"
    assert second["source"] == SOURCE
    assert second["why"] == "1 s truncation, 3 s kubelet"
    assert second["versions"] == "1.37–newer"
    assert (second["test"], second["run_id"], second["kubernetes"]) == ("tests/x.py::test_y", "run-1", "v1.37.2")
    assert second["measured_at"].endswith("+00:00")


def test_expect_keeps_details_and_string_values(log, registry):
    judge = make_judge(log, registry)
    assert judge.expect("CL-2", "waiting_reason", "Error", details={"pod": "crash"}) is False
    (m,) = read_doc(log)["measurements"]
    assert m["value"] == "Error" and m["documented"] == "CrashLoopBackOff"
    assert m["band"] is None
    assert m["details"] == {"pod": "crash"}


def test_expect_fills_placeholders_and_uses_the_qualifier_fallback(log, registry):
    judge = make_judge(log, registry)
    value = "back-off 20s restarting failed container=app"
    assert judge.expect("CL-2", "waiting_message[restartCount=2]", value, delay="20s", container="app")
    (m,) = read_doc(log)["measurements"]
    assert m["name"] == "waiting_message[restartCount=2]"
    assert m["documented"] == value


def test_not_documented_is_written_as_undocumented_and_is_never_a_pass(log, registry):
    judge = make_judge(log, registry, minor=34)
    assert judge.expect("CL-1", "restart_gap[1]", 10.0) is False
    (m,) = log.read()["measurements"]
    assert m["verdict"] == "undocumented" and m["value"] == 10.0
    assert "nothing documented for 1.34" in m["why"]
    assert judge.verdicts == [] and judge.failures == []
    assert "UNDOCUMENTED" in judge.summary()
    judge.verify()  # nothing failed ...
    kind, reason = judge.outcome()  # ... and yet not a pass
    assert kind == "undocumented"
    assert reason.startswith("undocumented: 1 value(s)") and "CL-1 restart_gap[1] = 10" in reason
    with pytest.raises(NotDocumented):
        judge.expectation("CL-1", "restart_gap[1]")
    assert judge.wait_budget_s("CL-1", "restart_gap[1]", fallback_s=99) == 99


def test_a_name_the_registry_never_heard_of_raises_at_once(log, registry):
    judge = make_judge(log, registry)
    with pytest.raises(UnknownMeasurement, match="CL-1 restart_gpa\\[1\\]: not a measurement the registry knows"):
        judge.expect("CL-1", "restart_gpa[1]", 10.0)
    assert log.read()["measurements"] == []  # nothing recorded as if it were a value


def test_verify_passes_when_every_value_holds(log, registry):
    judge = make_judge(log, registry)
    judge.expect("CL-1", "restart_gap[1]", 9.0)
    judge.expect("CL-2", "waiting_reason", "CrashLoopBackOff")
    judge.verify()
    assert judge.failures == []
    assert judge.summary().count("PASS") == 2


def test_verify_explains_every_failure(log, registry):
    judge = make_judge(log, registry)
    judge.expect("CL-1", "restart_gap[1]", 12.0)
    judge.expect("CL-1", "restart_gap[1]", 35.0, context="t+30.000  pod/crash  STATUS CrashLoopBackOff\nt+35.000  pod/crash  STATUS Running")
    judge.expect("CL-2", "waiting_reason", "Error", context="container/app terminated(Error)")
    with pytest.raises(ExpectationFailed) as err:
        judge.verify()
    msg = str(err.value)
    assert msg.startswith("2 of 3 measured values outside their documented expectation")
    assert "CL-1 restart_gap[1]: measured 35 s, expected 10 s within [9, 13] s" in msg
    assert "CL-2 waiting_reason: measured 'Error', expected 'CrashLoopBackOff'" in msg
    assert "band: 1 s truncation, 3 s kubelet" in msg
    assert f"source: {SOURCE}" in msg
    assert "1.37–newer (cluster: v1.37.2, cgroup unknown)" in msg
    assert "judged at tests/test_measurements.py:" in msg  # the test's own line, not the framework's
    assert "    t+35.000  pod/crash  STATUS Running" in msg  # the timeline, indented
    assert "container/app terminated(Error)" in msg
    assert "measured 12" not in msg  # passing values are not reported as failures
    assert isinstance(err.value, AssertionError)


def test_measured_values_read_with_the_precision_of_the_documented_one(log, registry):
    # issue 29 (6): "measured 12.195712 s, expected 10 s within [9, 13] s"
    judge = make_judge(log, registry)
    judge.expect("CL-1", "restart_gap[1]", 12.195712)
    judge.expect("CL-1", "restart_gap[1]", 13.395712)
    assert "measured 12 s  expected 10 s within [9, 13] s" in judge.summary()
    (failed,) = judge.failures
    assert failed.explain().startswith("CL-1 restart_gap[1]: measured 13.4 s, expected 10 s within [9, 13] s")
    assert [m["value"] for m in read_doc(log)["measurements"]] == [12.195712, 13.395712]  # the data keeps every digit


def test_failure_without_explicit_context_uses_the_judges_timeline(log, registry):
    calls = []

    def timeline() -> str:
        calls.append(1)
        return "t+1.000  pod/crash  STATUS Error"

    judge = make_judge(log, registry, context=timeline)
    judge.expect("CL-1", "restart_gap[1]", 10.0)
    assert calls == []  # a passing value needs no timeline
    judge.expect("CL-1", "restart_gap[1]", 40.0)
    assert calls == [1]
    with pytest.raises(ExpectationFailed, match=r"timeline:\n    t\+1\.000  pod/crash  STATUS Error"):
        judge.verify()


def test_real_registry_band_in_failure_message(log):
    judge = Judge(log, test="t", run_id="r", kubernetes="v1.37.2", minor=37, registry=REGISTRY)
    judge.expect("CL-1", "restart_gap[2]", 45.0)
    exp = REGISTRY.lookup("CL-1", "restart_gap[2]", 37)
    with pytest.raises(ExpectationFailed) as err:
        judge.verify()
    assert f"measured 45 s, expected 20 s within {exp.band} s" in str(err.value)
    assert exp.source in str(err.value)


def test_on_a_release_no_entry_was_read_in_a_value_is_unverified_carried_forward(log):
    # a fake 1.38 cluster on the real registry: CL-1 restart_gap[1] applies (1.35–newer) but was
    # read in 1.35.4, 1.36.3 and 1.37.2 only
    judge = Judge(log, test="t", run_id="r", kubernetes="v1.38.0", minor=38, registry=REGISTRY)
    assert judge.expect("CL-1", "restart_gap[1]", 11.0) is True  # holds the newest documented value
    assert judge.expect("KB-1", "pod_gone_after_delete_s", 21.0) is True  # a known bug, present
    assert judge.expect("CL-1", "restart_gap[2]", 45.0) is False  # a regression still fails
    gap, bug, failed = log.read()["measurements"]
    assert gap["verdict"] == "unverified-carried-forward"
    assert gap["details"] == {"judged": "pass", "reason": "documented for 1.35–newer, read in 1.35.4, 1.36.3, 1.37.2, "
                                                          "not in 1.38: carried forward"}
    assert gap["verified_in"] == ["1.35.4", "1.36.3", "1.37.2"] and gap["kubernetes"] == "v1.38.0"
    assert bug["verdict"] == "unverified-carried-forward" and bug["details"]["judged"] == "bug-present"
    assert failed["verdict"] == "fail" and "not in 1.38: carried forward" in failed["details"]["carried_forward"]
    with pytest.raises(ExpectationFailed, match=r"restart_gap\[2\]: measured 45 s.*\n.*\n  unverified: documented for "
                                                 r"1\.35–newer, read in 1\.35\.4, 1\.36\.3, 1\.37\.2, not in 1\.38"):
        judge.verify()
    assert judge.carried_forward() == (
        "unverified, carried forward: CL-1 restart_gap[1] = 11 s (documented for 1.35–newer, read in 1.35.4, 1.36.3, "
        "1.37.2, not in 1.38: carried forward); KB-1 pod_gone_after_delete_s = 21 s (documented for 1.34–newer, "
        "read in 1.34.4, 1.35.4, 1.36.3, 1.37.2, not in 1.38: carried forward)")
    assert judge.outcome()[0] == "bug-present"  # the known bug is still reported as present
    # the same values on a release that was read: plain verdicts, nothing carried forward
    read = Judge(log, test="t", run_id="r", kubernetes="v1.37.2", minor=37, registry=REGISTRY)
    read.expect("CL-1", "restart_gap[1]", 11.0)
    assert read.verdicts[0].measurement.verdict == "pass" and read.carried_forward() is None


# -- several processes appending --------------------------------------------------------

WORKERS, PER_WORKER = 4, 25


def _measurement(worker: int, i: int) -> Measurement:
    return Measurement(
        case="CL-1", name=f"restart_gap[{i}]", value=float(i), unit="s", documented=10.0, band=[9.0, 13.0],
        why="w", source=SOURCE, versions="all versions", verdict="pass", test=f"worker-{worker}",
        run_id="run-1", kubernetes="v1.37.2", measured_at="2026-11-29T07:45:00.000+00:00",
    )


def _append_many(path: str, worker: int) -> None:
    log = MeasurementLog(Path(path))
    for i in range(PER_WORKER):
        log.append(_measurement(worker, i))


def test_concurrent_appends_from_several_processes_all_land(tmp_path):
    path = tmp_path / "measurements.json"
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_append_many, args=(str(path), w)) for w in range(WORKERS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=60)
    assert [p.exitcode for p in procs] == [0] * WORKERS

    doc = json.loads(path.read_text())
    got = {(m["test"], m["name"]) for m in doc["measurements"]}
    assert len(doc["measurements"]) == WORKERS * PER_WORKER
    assert got == {(f"worker-{w}", f"restart_gap[{i}]") for w in range(WORKERS) for i in range(PER_WORKER)}
    assert not list(tmp_path.glob(".measurements.*")), "temporary files left behind"
