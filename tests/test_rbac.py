"""deploy/rbac.yaml and deploy/rbac-nodes.yaml (issue 42 item 5): the RBAC a --kubeconfig run needs,
shipped as manifests, equal rule by rule to the table of docs/your-own-cluster.md, each ClusterRole
bound to the suite's ServiceAccount; no cluster."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
MANIFESTS = (ROOT / "deploy" / "rbac.yaml", ROOT / "deploy" / "rbac-nodes.yaml")
PAGE = ROOT / "docs" / "your-own-cluster.md"
MARK = "<!-- the rules of deploy/rbac*.yaml"
SA = {"kind": "ServiceAccount", "name": "pod-lifecycle-e2e", "namespace": "pod-lifecycle-e2e"}


def objects() -> list[dict]:
    return [d for path in MANIFESTS for d in yaml.safe_load_all(path.read_text()) if d]


def manifest_rules() -> list[tuple[str, str, str, str]]:
    """``(ClusterRole, API group, resources, verbs)`` of every rule, as the page's table writes them."""
    rows = []
    for obj in objects():
        if obj["kind"] != "ClusterRole":
            continue
        for rule in obj["rules"]:
            if "nonResourceURLs" in rule:
                group, what = "(URL)", rule["nonResourceURLs"]
            else:
                (group,) = rule["apiGroups"]
                group, what = group or "core", rule["resources"]
            rows.append((obj["metadata"]["name"], group, ", ".join(what), ", ".join(rule["verbs"])))
    return rows


def page_rules(text: str) -> list[tuple[str, ...]]:
    """The rows of the table after :data:`MARK` on the page."""
    after = text[text.index(MARK):].splitlines()[1:]
    lines = [line.strip() for line in after]
    start = next(i for i, line in enumerate(lines) if line.startswith("| ClusterRole |"))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append(tuple(cell.strip() for cell in line.strip("|").split("|")))
    return rows


def test_the_docs_table_is_the_manifests_rule_by_rule():
    assert page_rules(PAGE.read_text()) == manifest_rules()


def test_a_table_that_drifts_from_the_manifests_is_caught():
    text = PAGE.read_text().replace("| pod-lifecycle-e2e-nodes | core | nodes | patch, update |",
                                    "| pod-lifecycle-e2e-nodes | core | nodes | patch |")
    assert page_rules(text) != manifest_rules()


def test_every_cluster_role_is_bound_to_the_suites_service_account():
    objs = objects()
    roles = {o["metadata"]["name"] for o in objs if o["kind"] == "ClusterRole"}
    bound = {o["roleRef"]["name"]: o["subjects"] for o in objs if o["kind"] == "ClusterRoleBinding"}
    assert roles == set(bound) == {"pod-lifecycle-e2e", "pod-lifecycle-e2e-nodes"}
    assert all(subjects == [SA] for subjects in bound.values())
    assert {(o["kind"], o["metadata"]["name"]) for o in objs if o["kind"] in ("Namespace", "ServiceAccount")} == \
        {("Namespace", "pod-lifecycle-e2e"), ("ServiceAccount", "pod-lifecycle-e2e")}


def test_the_read_only_role_changes_no_node():
    (ro,) = [o for o in yaml.safe_load_all(MANIFESTS[0].read_text()) if o and o["kind"] == "ClusterRole"]
    node_rules = [rule for rule in ro["rules"] if "nodes" in rule.get("resources", [])]
    assert node_rules and all(set(rule["verbs"]) <= {"get", "list", "watch"} for rule in node_rules)
