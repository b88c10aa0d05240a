"""e2e.plugin.options: ``--cluster-facts`` (pytester: real pytest runs of a small test file). A
facts file that cannot be used stops the run before any cluster, naming the file and the key."""

from __future__ import annotations

import pytest

TEST = "def test_x():\n    pass\n"


@pytest.mark.parametrize("text, said", [
    ("controllerManager: {node-monitor-grace: 50s}\n", "unknown key controllerManager.node-monitor-grace"),
    ("controllerManager: {node-monitor-period: soon}\n", "controllerManager.node-monitor-period 'soon' is not a duration"),
])
def test_a_bad_facts_file_is_a_usage_error(pytester, text, said):
    pytester.makepyfile(TEST)
    facts = pytester.path / "facts.yaml"
    facts.write_text(text)
    result = pytester.runpytest("-p", "no:cacheprovider", "--collect-only", "--kubeconfig", "kc", "--cluster-facts", str(facts))
    result.stderr.fnmatch_lines([f"*pod-lifecycle-e2e: --cluster-facts {facts}: {said}*"])
    assert result.ret == 4  # pytest.ExitCode.USAGE_ERROR


def test_the_facts_file_is_for_a_kubeconfig_cluster(pytester):
    pytester.makepyfile(TEST)
    (pytester.path / "facts.yaml").write_text("controllerManager: {node-monitor-period: 5s}\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--collect-only", "--cluster-facts", "facts.yaml")
    result.stderr.fnmatch_lines(["*--cluster-facts is for a --kubeconfig cluster*"])
    assert result.ret == 4


def test_a_good_facts_file_collects(pytester):
    pytester.makepyfile(TEST)
    (pytester.path / "facts.yaml").write_text("controllerManager: {node-monitor-grace-period: 40s}\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--collect-only", "--kubeconfig", "kc", "--cluster-facts", "facts.yaml")
    assert result.ret == 0
