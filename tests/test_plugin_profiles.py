"""The profile marker in the plugin (pytester: real pytest runs of small test files)."""

from __future__ import annotations

pytest_plugins = ["pytester"]


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


def test_profile_marker_takes_one_name(pytester):
    pytester.makepyfile("""
        import pytest

        @pytest.mark.profile("a", "b")
        def test_x():
            pass
    """)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.stderr.fnmatch_lines(["*profile takes one profile name*"])
    assert result.ret == 4


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
