"""``k8s_minors`` (e2e.run.minors): a test on a gate profile runs only on the minors that know its
gates, decided at collection from the node image's tag — no cluster made or planned for it on
another minor — else at setup (pytester: real pytest runs of small test files, no cluster)."""

from __future__ import annotations

import json

import pytest

from e2e.run.minors import image_version

GATED = """
    import pytest

    @pytest.mark.profile("gates-1.34")
    @pytest.mark.k8s_minors(34, reason="its gates are alpha in 1.34")
    def test_gated(cluster):
        pass

    @pytest.mark.skip(reason="stands for a test of the default profile")
    def test_plain(cluster):
        pass
"""
# writes the plan's clusters made ahead (e2e.run.plan) and the skip reasons for the test to read
PLAN_WRITER = """
    import json
    from e2e.plugin.clusters import PLAN

    def pytest_collection_finish(session):
        plan = session.config.stash[PLAN]
        reasons = {i.name: [m.kwargs.get("reason") for m in i.iter_markers("skip")] for i in session.items}
        open("plan.json", "w").write(json.dumps({"clusters": plan.clusters, "order": plan.order, "skips": reasons}))
"""


@pytest.mark.parametrize("image, version", [
    ("kindest/node:v1.34.4", ("v1.34.4", 34)),
    ("kindest/node:v1.37.2@sha256:0123abcd", ("v1.37.2", 37)),
    ("pod-lifecycle-e2e/kind-node:v1.35.4-3f2a9c01b2", ("v1.35.4", 35)),  # the offline build's tag (hack/offline/build.sh)
    ("localhost:5000/kind-node:v1.36.3", ("v1.36.3", 36)),  # a registry host with a port
    ("localhost:5000/kind-node", None),
    ("kindest/node:latest", None),
    ("kindest/node@sha256:0123abcd", None),
    ("", None),
    (None, None),
])
def test_the_version_is_read_from_the_node_images_tag(image, version):
    assert image_version(image) == version


def _run_collecting(pytester, monkeypatch, tmp_path, *args: str):
    """A concurrent run's plan (2 xdist workers, as the workers make it) for GATED with ``args``."""
    from e2e.plugin import clusters

    monkeypatch.setattr(clusters, "_preflight", lambda config: None)
    monkeypatch.setattr(clusters, "STATE_DIR", tmp_path)
    monkeypatch.setattr(clusters, "owned_clusters", lambda run_id: [])
    monkeypatch.setattr(clusters.egress, "prepared", lambda: False)
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "2")  # the plan of a concurrent run: clusters made ahead
    (tmp_path / "runs").mkdir(exist_ok=True)
    pytester.mkdir("profiles").joinpath("gates-1.34.yaml").write_text("featureGates: {ContainerRestartRules: true}\n")
    pytester.makeconftest(PLAN_WRITER)
    pytester.makepyfile(test_gated_profile=GATED)
    result = pytester.runpytest_inprocess(*args, "--reports-dir", str(tmp_path / "R"), "-rs")
    return result, json.loads((pytester.path / "plan.json").read_text())


def test_on_another_minor_the_test_is_skipped_at_collection_and_its_profile_planned_no_cluster(pytester, monkeypatch, tmp_path):
    result, plan = _run_collecting(pytester, monkeypatch, tmp_path, "--node-image", "pod-lifecycle-e2e/kind-node:v1.37.2-4e5f")
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines(["*environment: runs on Kubernetes 1.34 only (its gates are alpha in 1.34); "
                                 "this cluster is v1.37.2*"])
    assert plan["clusters"] == [["default", 0]]  # gates-1.34: no cluster made ahead
    assert plan["order"] == ["test_gated_profile.py::test_plain"]
    assert plan["skips"]["test_gated"] == ["environment: runs on Kubernetes 1.34 only (its gates are alpha in 1.34); "
                                           "this cluster is v1.37.2"]


def _no_clusters(monkeypatch) -> list[str]:
    """The profiles whose cluster a test asked for (none is made: the test is skipped there)."""
    from e2e.plugin import clusters

    asked: list[str] = []

    def refuse(self, name, replica=0, needs=None):
        asked.append(name)
        pytest.skip(f"no cluster in this unit test ({name})")

    monkeypatch.setattr(clusters.Clusters, "get", refuse)
    return asked


@pytest.mark.parametrize("image", [
    "pod-lifecycle-e2e/kind-node:v1.34.4-abc",  # its minor
    "kindest/node:latest",  # no version in the tag: planned, decided at setup from the cluster (e2e.plugin.fixtures)
])
def test_on_its_minor_or_an_unknown_one_the_test_is_planned_with_its_profiles_cluster(pytester, monkeypatch, tmp_path, image):
    asked = _no_clusters(monkeypatch)
    result, plan = _run_collecting(pytester, monkeypatch, tmp_path, "--node-image", image)
    assert sorted(map(tuple, plan["clusters"])) == [("default", 0), ("gates-1.34", 0)]
    assert plan["skips"]["test_gated"] == []
    assert asked == ["gates-1.34"]  # the test went on to its cluster
    result.assert_outcomes(skipped=2)


def test_the_marker_takes_minors(pytester):
    pytester.makepyfile("""
        import pytest

        @pytest.mark.k8s_minors("1.34")
        def test_x(cluster):
            pass
    """)
    result = pytester.runpytest_inprocess("--node-image", "kindest/node:v1.34.4", "--collect-only")
    result.stderr.fnmatch_lines(["*k8s_minors takes the minors it runs on (34, 35), got ('1.34',)*"])
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_setup_skips_it_once_the_clusters_version_is_known():
    """With --kubeconfig (or a tag without a version) the scenario fixture decides, from the cluster."""
    from e2e.run.minors import off_minor

    class Item:
        nodeid = "t.py::test_gated"

        def __init__(self, *args, **kwargs):
            self.marker = pytest.mark.k8s_minors(*args, **kwargs).mark

        def get_closest_marker(self, name):
            return self.marker if name == "k8s_minors" else None

    assert off_minor(Item(34, 35, reason="alpha gates"), 35, "v1.35.4") is None
    assert off_minor(Item(34, 35, reason="alpha gates"), 36, "v1.36.3") == (
        "environment: runs on Kubernetes 1.34, 1.35 only (alpha gates); this cluster is v1.36.3")
    assert off_minor(Item(34), 37, "v1.37.2") == "environment: runs on Kubernetes 1.34 only; this cluster is v1.37.2"


def test_on_a_kubeconfig_cluster_of_another_minor_its_minor_is_the_reason_not_its_profile(pytester, monkeypatch, tmp_path):
    """With ``--kubeconfig`` the minor is known once connected: the test is skipped for it before its
    profile's placement by the nodes' facts, whose reason ("it sets featureGates, which no node
    fact shows") named a difference that does not matter on this minor (seen on the foreign cluster)."""
    from types import SimpleNamespace

    from e2e.plugin import clusters

    asked = _no_clusters(monkeypatch)
    monkeypatch.setattr(clusters.Clusters, "connection", lambda self: SimpleNamespace(minor=37, kubernetes="v1.37.2"))
    (tmp_path / "kubeconfig").write_text("apiVersion: v1\nkind: Config\n")
    result, _ = _run_collecting(pytester, monkeypatch, tmp_path, "--kubeconfig", str(tmp_path / "kubeconfig"))
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines(["*environment: runs on Kubernetes 1.34 only (its gates are alpha in 1.34); "
                                 "this cluster is v1.37.2*"])
    assert asked == []  # no placement asked for
