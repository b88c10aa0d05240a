"""e2e.report.junit: junit.xml rewritten to say what the summary says (interrupted tests; a
rerun's attempts are tested through the plugin in test_reruns.py)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from e2e.base.junit import junit_names, junit_nodeid
from e2e.cli.compare import _outcomes
from e2e.report.junit import mark_interrupted

JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" errors="0"
failures="0" skipped="0" tests="1" time="3.0"><testcase classname="scenarios.api.test_api" name="test_a" time="1.0"/>
<testcase classname="scenarios.api.test_api" name="test_b[x-1]" time="2.0"><properties><property name="case" value="AD-1"/>
</properties></testcase><testcase time="5.137"/></testsuite></testsuites>"""


def test_a_test_stopped_in_its_body_is_marked_and_one_never_reported_is_added(tmp_path):
    junit = tmp_path / "junit.xml"
    junit.write_text(JUNIT)
    mark_interrupted(junit, {"scenarios/api/test_api.py::test_b[x-1]": ("stopped before its body ended", 2.0),
                             "scenarios/faults/test_nf.py::TestNF::test_c": ("stopped during its set-up, before any report", 0),
                             "scenarios/api/test_api.py::test_d": ("stopped before its body ended", 5.137)})
    suite = ET.parse(junit).getroot().find("testsuite")
    cases = {junit_nodeid(c): c for c in suite.iter("testcase")}
    # make interrupt-check run 9: pytest's own nameless testcase of test_d (stopped after its set-up) went
    assert [(c.get("classname"), c.get("name"), c.get("time")) for c in suite.findall("testcase")][2:] == [
        ("scenarios.faults.test_nf.TestNF", "test_c", "0.000"), ("scenarios.api.test_api", "test_d", "5.137")]
    assert {p.get("name"): p.get("value") for p in cases["scenarios/api/test_api.py::test_b[x-1]"].iter("property")} == {
        "case": "AD-1", "outcome": "interrupted", "interrupted_reason": "stopped before its body ended"}
    assert suite.get("tests") == "1"  # pytest's own count: interrupted tests are in no outcome
    assert _outcomes(junit)["scenarios/api/test_api.py::test_a"] == "passed"
    assert _outcomes(junit)["scenarios/api/test_api.py::test_b[x-1]"] == "interrupted"


def test_junit_names_are_read_back_as_the_node_id():
    for nodeid in ("scenarios/api/test_api.py::test_x", "scenarios/api/test_api.py::test_x[a-b]", "test_y.py::test_z"):
        classname, name = junit_names(nodeid)
        assert junit_nodeid(ET.Element("testcase", classname=classname, name=name)) == nodeid
    assert junit_names("scenarios/api/test_api.py::test_x[a/b]") == ("scenarios.api.test_api", "test_x[a/b]")
