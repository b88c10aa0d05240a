"""e2e.cli.upgrade: each contract's first change along a path of versions, unexplained ones, exit code."""

from __future__ import annotations

import json

from e2e.cli.upgrade import main
from test_compare import T, m, write_run

OK = ("test_backoff_gaps_and_waiting_state", "")


def path_of_runs(tmp_path, last_gap=15.0, last_verdict="pass"):
    """Four runs: CL-2 visibility documented 12 s up to 1.35 and 0 s from 1.36 (a documented
    change at 1.35 → 1.36); a band re-keyed with the same value at 1.35 (no change)."""
    runs = []
    for i, (k8s, vis_doc, vis, versions) in enumerate([
        ("v1.34.4", 12.0, 11.0, "1.34–1.35"), ("v1.35.4", 12.0, 12.5, "1.34–1.35"),
        ("v1.36.3", 0.0, 0.2, "1.36–newer"), ("v1.37.2", 0.0, 0.1, "1.36–newer"),
    ]):
        gap = last_gap if i == 3 else 15.0
        runs.append(write_run(tmp_path / k8s, [
            m(f"r{i}", k8s, "crashloopbackoff_visible_s", vis, vis_doc, [vis_doc - 1, vis_doc + 3], case="CL-2",
              versions=versions),
            m(f"r{i}", k8s, "restart_gap[1]", gap, 10.0, [9, 18], versions="1.34" if i == 0 else "1.35–newer",
              verdict=last_verdict if i == 3 else "pass"),
        ], [OK]))
    return runs


def test_documented_change_attributed_to_the_upgrade_that_made_it(tmp_path):
    runs = path_of_runs(tmp_path)
    assert main([str(r) for r in runs] + ["--out", str(tmp_path / "m")]) == 0
    report = json.loads((tmp_path / "m" / "upgrade.json").read_text())
    assert report["path"] == ["v1.34.4", "v1.35.4", "v1.36.3", "v1.37.2"]
    [change] = report["changes"]  # the re-keyed band with the same value is no change
    assert (change["case"], change["name"], change["a"], change["b"], change["change"]) == (
        "CL-2", "crashloopbackoff_visible_s", "v1.35.4", "v1.36.3", "documented change")
    assert (change["old"], change["new"]) == (12.5, 0.2)
    text = (tmp_path / "m" / "upgrade.md").read_text()
    assert "### v1.35.4 → v1.36.3" in text and "| CL-2 | `crashloopbackoff_visible_s` | 12.5 | 0.2 |" in text
    assert "## Unexplained\n\nnone" in text
    assert [r["kubernetes"] for r in report["runs"]] == report["path"]


def test_unexplained_change_fails(tmp_path):
    runs = path_of_runs(tmp_path, last_gap=40.0, last_verdict="fail")
    assert main([str(r) for r in runs] + ["--out", str(tmp_path / "m")]) == 1
    text = (tmp_path / "m" / "upgrade.md").read_text()
    assert "v1.36.3 → v1.37.2: CL-1 `restart_gap[1]`: 15 → 40" in text


def test_a_failed_test_in_the_first_run_fails_too(tmp_path):
    runs = path_of_runs(tmp_path)
    (runs[0] / "junit.xml").write_text(
        '<testsuites><testsuite name="pytest" time="61.5"><testcase classname="scenarios.crashloop.test_crashloop" '
        'name="test_backoff_gaps_and_waiting_state"><failure message="x"/></testcase></testsuite></testsuites>')
    assert main([str(r) for r in runs] + ["--out", str(tmp_path / "m")]) == 1
    report = json.loads((tmp_path / "m" / "upgrade.json").read_text())
    assert report["runs"][0]["failed_tests"] == ["scenarios/crashloop/test_crashloop.py::test_backoff_gaps_and_waiting_state"]
    assert report["runs"][0]["wall_s"] == 61.5


def test_a_flaky_test_is_counted_and_named_without_failing_the_report(tmp_path):
    # issue 41 (4): the nightly's upgrade report counted a flaky test nowhere
    runs = path_of_runs(tmp_path)
    (runs[3] / "junit.xml").write_text(
        '<testsuites><testsuite name="pytest"><testcase classname="scenarios.crashloop.test_crashloop" '
        'name="test_backoff_gaps_and_waiting_state"><properties><property name="outcome" value="flaky"/></properties>'
        '<flakyFailure message="WaitTimeout: x"/></testcase></testsuite></testsuites>')
    assert main([str(r) for r in runs] + ["--out", str(tmp_path / "m")]) == 0
    text = (tmp_path / "m" / "upgrade.md").read_text()
    assert "| v1.37.2 | 1 | 0 | 0 | 1 | 0 |" in text
    assert "## Flaky (failed, then passed on a rerun: not a pass, not a failure)\n\n- v1.37.2: " \
           "`scenarios/crashloop/test_crashloop.py::test_backoff_gaps_and_waiting_state`" in text
    assert json.loads((tmp_path / "m" / "upgrade.json").read_text())["runs"][3]["flaky_tests"] == [
        "scenarios/crashloop/test_crashloop.py::test_backoff_gaps_and_waiting_state"]


def test_a_race_going_the_other_way_at_an_upgrade_is_no_contract_change(tmp_path):
    # NF-8's NoExecute taint one token late in one run of the path (Expectation.race): either outcome documented
    runs = []
    for i, (k8s, value, documented, band, outcome) in enumerate([
        ("v1.36.3", 0.0, 0.0, [0, 2], "did not happen"), ("v1.37.2", 10.0, 10.0, [9, 12], "happened"),
    ]):
        item = m(f"r{i}", k8s, "noexecute_taint_after_unknown_s", value, documented, band, case="NF-8")
        item["details"] = {"race": {"outcome": outcome, "about": "the tainting pass read a stale node"}}
        item["template"] = 0.0
        runs.append(write_run(tmp_path / k8s, [item], [OK]))
    assert main([str(r) for r in runs] + ["--out", str(tmp_path / "m")]) == 0
    assert json.loads((tmp_path / "m" / "upgrade.json").read_text())["changes"] == []


def test_bad_input(tmp_path, capsys):
    assert main([str(tmp_path / "nothing"), str(tmp_path / "neither")]) == 2
    assert "no measurements.json" in capsys.readouterr().err
    assert main([str(tmp_path)]) == 2


def test_a_long_templated_change_shows_its_template_and_where_the_texts_part(tmp_path):
    """IM-3's message on 1.34 → 1.37: the documented text is a template filled with the run's own
    registry address, and the two templates part after 52 equal characters. The report shows the
    templates (the contract), each cut to where they part, not two renderings cut to the same
    first 57 characters."""
    old = 'Container image "{image}" already present on machine'
    new = old + " and can be accessed by the pod"
    runs = []
    for k8s, template, host in (("v1.34.4", old, "ple2e-registry-898723"), ("v1.37.2", new, "ple2e-registry-af3442")):
        text = template.format(image=f"{host}:5000/suite/present:1")
        item = m(k8s, k8s, "ifnotpresent_pulled_message", text, text, None, case="IM-3")
        item["template"] = template
        runs.append(write_run(tmp_path / k8s, [item], [OK]))
    assert main([str(r) for r in runs] + ["--out", str(tmp_path / "m")]) == 0
    row = next(line for line in (tmp_path / "m" / "upgrade.md").read_text().splitlines()
               if "ifnotpresent_pulled_message" in line)
    assert "| …already present on machine' | …already present on machine and can be accessed by the pod' |" in row
    assert "…image \"ple2e-registry-898723:5000/suite/present:1\" alrea..." in row  # the values part there
    assert row.endswith("| documented change |")


def test_a_value_that_moved_to_another_variant_is_one_row_of_the_report(tmp_path):
    """ST-1 on 1.34 (gate on only in the gates-1.34 variant) → 1.37 (on by default): the documented
    change is listed once, under the variant that ran on 1.37; the variants' passed/skipped swap and
    the moved values are not listed as new, skipped or outcome changes."""
    base = "scenarios/statefulset/test_statefulset.py::test_max_unavailable_rolling_update"
    runs = []
    for k8s, ran, skipped, doc in (("v1.34.4", "[gates-1.34]", "[default]", 1.0), ("v1.37.2", "[default]", "[gates-1.34]", 2.0)):
        runs.append(write_run(tmp_path / k8s, [m(k8s, k8s, "max_unavailable_seen", doc, doc, [doc, doc], test=base + ran, case="ST-3")]))
        (tmp_path / k8s / "junit.xml").write_text(
            '<testsuites><testsuite name="pytest">'
            f'<testcase classname="scenarios.statefulset.test_statefulset" name="test_max_unavailable_rolling_update{ran}"/>'
            f'<testcase classname="scenarios.statefulset.test_statefulset" name="test_max_unavailable_rolling_update{skipped}">'
            "<skipped/></testcase></testsuite></testsuites>")
    assert main([str(r) for r in runs] + ["--out", str(tmp_path / "m")]) == 0
    [change] = json.loads((tmp_path / "m" / "upgrade.json").read_text())["changes"]
    assert (change["name"], change["test"], change["change"]) == ("max_unavailable_seen", base + "[default]", "documented change")
    assert (change["old"], change["new"]) == (1.0, 2.0)


def test_the_upgrade_report_lists_per_run_the_known_bugs_its_patch_still_has_with_their_fix(tmp_path):
    """RS-5 judged by the suite's own entries: present on v1.36.3 (its 1.36 cherry-pick merged after
    1.36.3), fixed as expected on v1.37.2 — the upgrade's row says so, and only 1.36.3 is listed."""
    from e2e.judge.measurements import Judge, MeasurementLog

    runs = []
    for kubernetes, running, limit in (("v1.36.3", False, 64 * 2**20), ("v1.37.2", True, 256 * 2**20)):
        log = MeasurementLog(tmp_path / f"{kubernetes}.json")
        j = Judge(log, T, f"r-{kubernetes}", kubernetes, minor=int(kubernetes.split(".")[1]), cgroup=1)
        j.expect("RS-5", "running_after_resize", running)
        j.expect("RS-5", "pod_cgroup_memory_limit_bytes", limit)
        runs.append(write_run(tmp_path / kubernetes, log.read()["measurements"], [OK]))
    assert main([str(r) for r in runs] + ["--out", str(tmp_path / "m")]) == 0
    text = (tmp_path / "m" / "upgrade.md").read_text()
    assert ("## Known bugs each patch still has\n\n- v1.36.3 still has kubernetes/kubernetes#138760 (R21; closed: fixed by "
            "#140387) — RS-5 running_after_resize, RS-5 pod_cgroup_memory_limit_bytes: the fix is cherry-pick "
            "kubernetes/kubernetes#141004 to release-1.36 (merged), not in 1.36.3: released later or not yet (unknown) "
            "(on master: kubernetes/kubernetes#140387, merged)\n\n## What each upgrade changed") in text
    assert "| RS-5 | `running_after_resize` | False | True | False | True | known bug: present → fixed |" in text
    report = json.loads((tmp_path / "m" / "upgrade.json").read_text())
    assert [len(r["known_bugs"]) for r in report["runs"]] == [1, 0]
