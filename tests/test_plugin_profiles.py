"""The profile marker in the plugin (pytester: real pytest runs of small test files)."""

from __future__ import annotations

import pytest


def test_unknown_profile_is_a_usage_error_naming_the_known_ones(pytester):
    pytester.mkdir("profiles").joinpath("multi-node.yaml").write_text("nodes: [{role: worker}]\n")
    pytester.makepyfile("""
        import pytest

        @pytest.mark.profile("nope")
        def test_x():
            pass
    """)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.stderr.fnmatch_lines(["*unknown cluster profile 'nope'*known: default, multi-node*"])
    assert result.ret == 4  # pytest.ExitCode.USAGE_ERROR


CAPPED = "kubeadmConfigPatches:\n  - |\n    kind: KubeletConfiguration\n    syncFrequency: 30s\n"


@pytest.mark.parametrize(("marker", "message"), [
    ('"a", "b"', "*profile takes one profile name*"),
    ('"capped", needs=("syncFrequncy",)',
     "*profile('capped', needs=('syncFrequncy',)): profile capped sets no kubelet syncFrequncy*"),
    ('"default", needs="syncFrequency"', "*profile takes needs=(kubelet setting names, …)*"),
], ids=["two-names", "needs-a-setting-it-does-not-set", "needs-not-a-sequence"])
def test_a_malformed_profile_marker_is_a_usage_error(pytester, marker, message):
    pytester.mkdir("profiles").joinpath("capped.yaml").write_text(CAPPED)
    pytester.makepyfile(f"""
        import pytest

        @pytest.mark.profile({marker})
        def test_x():
            pass
    """)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.stderr.fnmatch_lines([message])
    assert result.ret == 4  # pytest.ExitCode.USAGE_ERROR


def test_known_profiles_collect(pytester):
    pytester.mkdir("profiles").joinpath("multi-node.yaml").write_text("nodes: [{role: worker}]\n")
    pytester.makepyfile("""
        import pytest

        @pytest.mark.profile("multi-node")
        def test_x():
            pass

        def test_default():
            pass
    """)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def test_no_wider_fixture_depends_on_the_per_test_cluster():
    """``cluster`` is per test (its profile's cluster): a module- or session-scoped fixture on it
    is a ScopeMismatch at run time, so none of the scenarios or examples may declare one."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    offenders = []
    for path in sorted([*root.joinpath("scenarios").rglob("*.py"), *root.joinpath("examples").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.FunctionDef):
                continue
            for dec in node.decorator_list:
                scope = next((kw.value.value for kw in getattr(dec, "keywords", []) if kw.arg == "scope"
                              and isinstance(kw.value, ast.Constant)), "function")
                if scope != "function" and {"cluster", "scenario"} & {a.arg for a in node.args.args}:
                    offenders.append(f"{path.relative_to(root)}:{node.lineno} {node.name} (scope={scope})")
    assert not offenders, offenders


def test_a_node_faults_marker_naming_no_action_is_a_usage_error_at_collection(pytester):
    """The plan asks each test's declared faults whether they reach beyond its node (issue 45: a test
    of a room that does holds every room): a declaration of no known action cannot say."""
    pytester.makepyfile("""
        import pytest

        @pytest.fixture
        def cluster():
            return None

        @pytest.mark.serial
        @pytest.mark.node_faults("node_tainted", case="DR-5")
        def test_known(cluster):
            pass

        @pytest.mark.node_faults("node_painted", case="DR-5")
        def test_unknown(cluster):
            pass
    """)
    result = pytester.runpytest("-p", "no:cacheprovider", "--collect-only")
    result.stderr.fnmatch_lines(["*test_unknown: @pytest.mark.node_faults('node_painted',): one action of*"])
    assert result.ret == 4  # pytest.ExitCode.USAGE_ERROR
