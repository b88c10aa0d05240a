"""load_manifests (e2e.cluster.kube): ${placeholders}, shell dollars, errors that name the file, and the
real scenario manifests."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from e2e.cluster.images import workload_images
from e2e.cluster.kube import PLACEHOLDER, ManifestError, load_manifests

ROOT = Path(__file__).resolve().parents[1]
CRASHLOOP = ROOT / "scenarios" / "crashloop"


def write(tmp_path: Path, text: str, name: str = "m.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


POD = """\
    apiVersion: v1
    kind: Pod
    metadata:
      name: ${name}
    spec:
      terminationGracePeriodSeconds: ${grace}
      containers:
        - name: app
          image: ${busybox_image}
          command:
            - sh
            - -c
            - |
              n=$(( $(cat /state/n 2>/dev/null || echo 0) + 1 ))
              echo $n > /state/n; echo "$HOME ${HOME} $((n * 2))"
              printf '%s\\n' "$${literal}"
"""


def test_fills_placeholders_and_leaves_shell_dollars_alone(tmp_path):
    (pod,) = load_manifests(write(tmp_path, POD), {"name": "crash-1", "grace": 5, "busybox_image": "busybox:1.36.1"})
    assert pod["metadata"]["name"] == "crash-1"
    assert pod["spec"]["terminationGracePeriodSeconds"] == 5  # filled text is parsed as YAML: an int
    assert pod["spec"]["containers"][0]["image"] == "busybox:1.36.1"
    script = pod["spec"]["containers"][0]["command"][2]
    assert "n=$(( $(cat /state/n 2>/dev/null || echo 0) + 1 ))" in script
    assert 'echo $n > /state/n; echo "$HOME ${HOME} $((n * 2))"' in script  # upper-case ${HOME} is the shell's
    assert '"${literal}"' in script  # $${ is a literal ${
    assert "$$" not in script


def test_escaped_placeholder_needs_no_value(tmp_path):
    path = write(tmp_path, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {script: 'echo $${name}'}\n")
    (cm,) = load_manifests(path)
    assert cm["data"]["script"] == "echo ${name}"


def test_missing_placeholder_names_file_and_placeholder(tmp_path):
    path = write(tmp_path, POD, "pod-missing.yaml")
    with pytest.raises(ManifestError) as err:
        load_manifests(path, {"name": "x"})
    msg = str(err.value)
    assert str(path) in msg
    assert "${busybox_image}" in msg and "${grace}" in msg
    assert "${name}" not in msg and "${literal}" not in msg and "HOME" not in msg


def test_invalid_yaml_names_the_file(tmp_path):
    path = write(tmp_path, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: [unclosed\n", "broken.yaml")
    with pytest.raises(ManifestError, match=r"broken\.yaml: invalid YAML"):
        load_manifests(path)


def test_a_yaml_error_is_located_in_the_file(tmp_path):
    """issue 30 (10): the error said in "<unicode string>", at a line of the filled text (a value of
    several lines before it shifted the lines)."""
    path = write(tmp_path, "apiVersion: v1\nkind: Pod\nmetadata:\n  annotations:\n    script: |\n      ${script}\n"
                           "  name: [unclosed\n", "broken.yaml")
    with pytest.raises(ManifestError) as err:
        load_manifests(path, {"script": "one\n      two\n      three"})
    assert f'in "{path}", line 7, column 9' in str(err.value)
    assert "<unicode string>" not in str(err.value)


def test_a_value_that_breaks_the_yaml_is_a_manifest_error(tmp_path):
    path = write(tmp_path, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\n", "inject.yaml")
    with pytest.raises(ManifestError, match=r"inject\.yaml"):
        load_manifests(path, {"name": "a: b: c"})


@pytest.mark.parametrize(
    "text",
    [
        "kind: Pod\nmetadata: {name: p}\n",  # no apiVersion
        "apiVersion: v1\nmetadata: {name: p}\n",  # no kind
        "- apiVersion: v1\n  kind: Pod\n",  # a list, not an object
        "just a string\n",
        "apiVersion: v1\nkind: Pod\n---\nmetadata: {name: second}\n",  # the second document lacks both
    ],
)
def test_document_without_api_version_and_kind_raises(tmp_path, text):
    path = write(tmp_path, text, "incomplete.yaml")
    with pytest.raises(ManifestError, match=r"incomplete\.yaml: every document needs apiVersion and kind"):
        load_manifests(path)


def test_unreadable_file_names_the_file(tmp_path):
    with pytest.raises(ManifestError, match=r"nope\.yaml: cannot read manifest"):
        load_manifests(tmp_path / "nope.yaml")


def test_several_documents_and_empty_ones(tmp_path):
    text = """\
        # a comment-only document
        ---
        apiVersion: v1
        kind: Service
        metadata: {name: ${name}}
        ---
        ---
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: ${name}}
        """
    objs = load_manifests(write(tmp_path, text), {"name": "web"})
    assert [(o["kind"], o["metadata"]["name"]) for o in objs] == [("Service", "web"), ("Deployment", "web")]


def test_placeholder_syntax():
    assert [m.group(1) for m in PLACEHOLDER.finditer("${a} ${b_2} $${c} ${D} $e ${1x} ${ok_}")] == ["a", "b_2", "ok_"]


# -- the real manifests ------------------------------------------------------------------


def test_real_crashloop_pod_manifest():
    values = {**workload_images(), "name": "crashloop", "restart_policy": "Always", "exit_code": 1, "run_s": 1}
    (pod,) = load_manifests(CRASHLOOP / "pod.yaml", values)
    assert (pod["apiVersion"], pod["kind"]) == ("v1", "Pod")
    assert pod["metadata"]["name"] == "crashloop"
    spec = pod["spec"]
    assert spec["restartPolicy"] == "Always"
    (app,) = spec["containers"]
    assert app["name"] == "app"
    assert app["image"] == workload_images()["busybox_image"]
    assert app["imagePullPolicy"] == "Never"
    script = app["command"][-1]
    assert "sleep 1\n" in script and "exit 1\n" in script
    assert "n=$(( $(cat /state/attempts 2>/dev/null || echo 0) + 1 ))" in script  # the shell's, untouched
    assert 'echo "attempt $n"' in script
    assert app["volumeMounts"][0]["mountPath"] == "/state"
    assert spec["volumes"][0] == {"name": "state", "emptyDir": {}}


def test_real_crashloop_pod_manifest_needs_its_values():
    with pytest.raises(ManifestError) as err:
        load_manifests(CRASHLOOP / "pod.yaml", {"name": "crashloop"})
    assert "pod.yaml" in str(err.value)
    for name in ("busybox_image", "exit_code", "restart_policy", "run_s"):
        assert "${" + name + "}" in str(err.value)


def test_real_init_fails_manifest():
    values = {**workload_images(), "name": "init", "restart_policy": "Never"}
    (pod,) = load_manifests(CRASHLOOP / "init-fails.yaml", values)
    spec = pod["spec"]
    assert pod["metadata"]["name"] == "init"
    assert spec["restartPolicy"] == "Never"
    (init,) = spec["initContainers"]
    assert "restartPolicy" not in init  # a plain init container, not a sidecar
    assert "exit 1" in init["command"][-1]
    assert [c["name"] for c in spec["containers"]] == ["app"]


# Plausible values for every scenario manifest; a placeholder not listed gets "1".
PLAUSIBLE = {**workload_images(), "name": "p", "restart_policy": "Always", "exit_code": 1, "run_s": 1}


@pytest.mark.parametrize("path", sorted(ROOT.glob("scenarios/**/*.yaml")), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_scenario_manifest_loads(path):
    names = {m.group(1) for m in PLACEHOLDER.finditer(path.read_text())}
    objs = load_manifests(path, {n: PLAUSIBLE.get(n, "1") for n in names})
    assert objs, f"{path}: no objects"
    assert all(o["apiVersion"] and o["kind"] for o in objs)
