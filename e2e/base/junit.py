"""A test's pytest node id and its junit ``testcase`` names, both ways: :func:`junit_names` writes
them as pytest's junitxml does, :func:`junit_nodeid` reads them back (the compare of two runs, the
merge of shards, the junit.xml fix-ups of e2e.report.junit). Standard library only."""

from __future__ import annotations

import xml.etree.ElementTree as ET


def junit_nodeid(testcase: ET.Element) -> str:
    """The node id of a junit ``testcase`` (``classname`` dots as path separators, ``.py::``,
    ``name``), as the measurements name their test."""
    classname, name = testcase.get("classname", ""), testcase.get("name", "")
    return classname.replace(".", "/") + ".py::" + name if classname else name


def junit_names(nodeid: str) -> tuple[str, str]:
    """``(classname, name)`` of a testcase as pytest's junitxml names the test ``nodeid``
    (``scenarios/api/test_api.py::test_x[a]`` -> ``scenarios.api.test_api``, ``test_x[a]``);
    :func:`junit_nodeid` reads them back."""
    path, *rest = nodeid.split("::")
    path = path[: -len(".py")] if path.endswith(".py") else path
    return ".".join([path.replace("/", ".")] + rest[:-1]), rest[-1] if rest else nodeid
