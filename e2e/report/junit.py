"""Finishing touches to the junit.xml pytest writes, so that it says what the suite's summary says:
a rerun's attempts folded into their test (:func:`fold_attempts`), a test stopped by Ctrl-C or
SIGTERM marked interrupted — also one stopped before pytest reported anything of it
(:func:`mark_interrupted`), and the run it is of (:func:`stamp_run_id`). Each rewrites the file in
place, after pytest's junitxml wrote it."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from ..base.junit import junit_names, junit_nodeid
from ..base.verdicts import INTERRUPTED  # the testcase property of a test stopped before its body ended
# the testsuite property naming the run the file is of (a shard's record names its run the same
# way: the merge, e2e.cli.merge, tells a junit.xml an earlier run left by it)
RUN_ID = "run_id"


def fold_attempts(path: Path, failed: dict[str, list[str]]) -> None:
    """Rewrite the junit.xml at ``path`` (see :class:`e2e.plugin.outcomes.RerunAttempts`): per test, the testcases of
    its earlier attempts (same ``classname`` and ``name``, in file order) folded into its last
    one. ``failed`` maps a node id (as :func:`e2e.base.junit.junit_nodeid` reads a testcase) to
    the first line of each failed attempt, oldest first; an attempt without one reads "failed
    (see its report)". Raises ``OSError``/``xml.etree.ElementTree.ParseError`` for a file that
    cannot be read."""
    tree = ET.parse(path)
    for suite in tree.getroot().iter("testsuite"):
        cases = [c for c in suite if c.tag == "testcase"]
        groups: dict[tuple[str, str], list[ET.Element]] = {}
        for case in cases:
            groups.setdefault((case.get("classname", ""), case.get("name", "")), []).append(case)
        for attempts in groups.values():
            if len(attempts) < 2:
                continue
            last, earlier = attempts[-1], attempts[:-1]
            messages = failed.get(junit_nodeid(last), [])
            tag = "rerunFailure" if any(c.tag in ("failure", "error") for c in last) else "flakyFailure"
            for i, case in enumerate(earlier):
                suite.remove(case)
                message = messages[i] if i < len(messages) else "failed (see its report)"
                child = ET.Element(tag, message=message, time=case.get("time", ""))
                child.text = message
                last.append(child)
    tree.write(path, encoding="utf-8", xml_declaration=True)


def mark_interrupted(path: Path, interrupted: dict[str, tuple[str, float]]) -> None:
    """Rewrite the junit.xml at ``path``: each test of ``interrupted`` (node id -> why, e.g.
    "stopped during its set-up, before any report", and the seconds it ran) is a testcase of its
    own, named as pytest names tests, with the properties ``outcome=interrupted`` and
    ``interrupted_reason``. pytest's junitxml writes a test stopped after its set-up as a testcase
    with a duration and no name (it times the set-up report but opens a testcase only for a call's);
    those nameless testcases are removed. No failure, error or skip is added: pytest counts an
    interrupted test in no outcome, nor do the suite's ``tests`` attributes. Raises
    ``OSError``/``xml.etree.ElementTree.ParseError`` for a file that cannot be read."""
    tree = ET.parse(path)
    root = tree.getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    if suite is None:
        return
    for s in root.iter("testsuite"):
        for nameless in [c for c in s.findall("testcase") if not c.get("classname") and not c.get("name")]:
            s.remove(nameless)
    cases = {junit_nodeid(c): c for c in root.iter("testcase")}
    for nodeid, (why, seconds) in interrupted.items():
        case = cases.get(nodeid)
        if case is None:
            classname, name = junit_names(nodeid)
            case = ET.SubElement(suite, "testcase", classname=classname, name=name, time=f"{seconds:.3f}")
        properties = case.find("properties")
        if properties is None:
            properties = ET.Element("properties")
            case.insert(0, properties)
        ET.SubElement(properties, "property", name="outcome", value=INTERRUPTED)
        ET.SubElement(properties, "property", name="interrupted_reason", value=why)
    tree.write(path, encoding="utf-8", xml_declaration=True)


def stamp_run_id(path: Path, run_id: str) -> None:
    """Rewrite the junit.xml at ``path``: each test suite's property :data:`RUN_ID` is ``run_id``
    (added, or replacing one). Raises ``OSError``/``xml.etree.ElementTree.ParseError`` for a file
    that cannot be read."""
    tree = ET.parse(path)
    for suite in tree.getroot().iter("testsuite"):
        properties = suite.find("properties")
        if properties is None:
            properties = ET.Element("properties")
            suite.insert(0, properties)
        for old in [p for p in properties.findall("property") if p.get("name") == RUN_ID]:
            properties.remove(old)
        ET.SubElement(properties, "property", name=RUN_ID, value=run_id)
    tree.write(path, encoding="utf-8", xml_declaration=True)


def run_id_of(path: Path) -> str | None:
    """The run id the junit.xml at ``path`` names (its first test suite's :data:`RUN_ID` property),
    None when it names none (a file older than the property, or not the suite's). Raises
    ``OSError``/``xml.etree.ElementTree.ParseError`` for a file that cannot be read."""
    for suite in ET.parse(path).getroot().iter("testsuite"):
        for prop in suite.findall("properties/property"):
            if prop.get("name") == RUN_ID:
                return prop.get("value")
        return None
    return None
