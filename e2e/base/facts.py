"""A run's cluster facts (``facts.json``, written by :mod:`e2e.cluster.facts`) read back: two runs'
facts side by side (:func:`diff`, for ``make compare``) and a report's section (:func:`markdown`).
Standard library only: ``make compare`` runs with the system Python."""

from __future__ import annotations

from collections.abc import Mapping


def flatten(d: Mapping, prefix: str = "") -> dict[str, object]:
    out: dict[str, object] = {}
    for k, v in d.items():
        if isinstance(v, Mapping) and v:
            out.update(flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def shown(value: object) -> str:
    return "unset" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def _labelled(nodes: Mapping) -> dict[str, Mapping]:
    """The nodes by role, not name (two clusters' names differ): ``control-plane``, ``control-plane-2``,
    ``worker-1``, ``worker-2`` … in order of zone, then name."""
    out: dict[str, Mapping] = {}
    order = sorted(nodes, key=lambda n: (not nodes[n].get("control_plane"), str(nodes[n].get("zone")), n))
    counts = {"control-plane": 0, "worker": 0}
    for name in order:
        role = "control-plane" if nodes[name].get("control_plane") else "worker"
        counts[role] += 1
        label = role if role == "control-plane" and counts[role] == 1 else f"{role}-{counts[role]}"
        out[label] = nodes[name]
    return out


def _comparable(node: Mapping) -> dict[str, object]:
    flat: dict[str, object] = {}
    for key in ("kubelet", "runtime", "zone", "taints"):
        flat[key] = node.get(key)
    flat["cgroup"] = (node.get("cgroup") or {}).get("version")
    config = node.get("kubelet_config")
    if isinstance(config, Mapping):
        flat.update({f"kubelet_config.{k}": v for k, v in flatten(config).items()})
    return flat


def _gates_change(a: object, b: object) -> str | None:
    if not isinstance(a, list) or not isinstance(b, list) or a == b:
        return None if a == b else f"{shown(a)} → {shown(b)}"
    on, off = sorted(set(b) - set(a)), sorted(set(a) - set(b))
    return ", ".join([*(f"+{g}" for g in on), *(f"-{g}" for g in off)])


def diff(a: Mapping, b: Mapping) -> list[str]:
    """What differs between two runs' facts (``facts.json``: ``{cluster: facts}``), one line each:
    ``"default: server v1.36.1 → v1.37.2"``, ``"default/worker-2: kubelet_config.crashLoopBackOff.
    maxContainerRestartPeriod unset → 20s"``, ``"default: nodes control-plane → control-plane,
    worker-1, worker-2"``; a cluster (profile) in one run only is one line. ``[]``: the same facts."""
    out = []
    for cluster in sorted(set(a) | set(b)):
        if cluster not in a or cluster not in b:
            out.append(f"{cluster}: only in {'B' if cluster in b else 'A'}")
            continue
        fa, fb = a[cluster], b[cluster]
        if fa.get("server") != fb.get("server"):
            out.append(f"{cluster}: server {fa.get('server')} → {fb.get('server')}")
        gates_change = _gates_change(fa.get("api_server_gates_on"), fb.get("api_server_gates_on"))
        if gates_change:
            out.append(f"{cluster}: API server gates on {gates_change}")
        cma, cmb = _controller_manager(fa), _controller_manager(fb)
        for flag in sorted(set(cma) | set(cmb)):
            if cma.get(flag) != cmb.get(flag):
                out.append(f"{cluster}: controller-manager {flag} {cma.get(flag, 'unrecorded')} → {cmb.get(flag, 'unrecorded')}")
        na, nb = fa.get("nodes") or {}, fb.get("nodes") or {}
        if "unknown" in na or "unknown" in nb:
            out.append(f"{cluster}: nodes {na.get('unknown', 'read')} → {nb.get('unknown', 'read')}")
            continue
        la, lb = _labelled(na), _labelled(nb)
        if list(la) != list(lb):
            out.append(f"{cluster}: nodes {', '.join(la) or 'none'} → {', '.join(lb) or 'none'}")
        for label in [n for n in lb if n in la]:
            ca, cb = _comparable(la[label]), _comparable(lb[label])
            for key in sorted(set(ca) | set(cb)):
                if ca.get(key) != cb.get(key):
                    out.append(f"{cluster}/{label}: {key} {shown(ca.get(key))} → {shown(cb.get(key))}")
            gates_change = _gates_change(la[label].get("gates_on"), lb[label].get("gates_on"))
            if gates_change:
                out.append(f"{cluster}/{label}: kubelet gates on {gates_change}")
    return out


def _controller_manager(facts: Mapping) -> dict[str, str]:
    """The controller manager's flags of one cluster's facts, each with where it came from:
    ``{"node-monitor-grace-period": "50s (upstream default (…))"}``; ``{}`` when not recorded."""
    cm = facts.get("controller_manager") or {}
    flags, where = cm.get("flags") or {}, cm.get("from") or {}
    return {k: f"{v} ({where.get(k, 'unknown origin')})" for k, v in flags.items()}


def markdown(facts: Mapping) -> str:
    """The report's section "Cluster facts" of a run's ``facts.json``: per cluster, one table row per
    node (versions, runtime, zone, taints, cgroup, the crash-loop cap and eviction thresholds)."""
    lines = ["## Cluster facts", ""]
    for cluster in sorted(facts):
        f = facts[cluster]
        nodes = f.get("nodes") or {}
        lines += [f"### {cluster}: server {f.get('server')}", ""]
        cm = _controller_manager(f)
        if cm:
            lines += ["controller manager: " + "; ".join(f"{k} {v}" for k, v in sorted(cm.items())), ""]
        if "unknown" in nodes:
            lines += [f"nodes unknown: {nodes['unknown']}", ""]
            continue
        lines += ["| node | kubelet | runtime | zone | taints | cgroup | maxContainerRestartPeriod | evictionHard |",
                  "|---|---|---|---|---|---|---|---|"]
        for name in sorted(nodes):
            n = nodes[name]
            cfg = n.get("kubelet_config") or {}
            cgroup = n.get("cgroup") or {}
            cap = (cfg.get("crashLoopBackOff") or {}).get("maxContainerRestartPeriod") if "unknown" not in cfg else None
            hard = ", ".join(f"{k}<{v}" for k, v in sorted((cfg.get("evictionHard") or {}).items()))
            lines.append(f"| {name} | {n.get('kubelet')} | {n.get('runtime')} | {n.get('zone') or '—'} | "
                         f"{', '.join(n.get('taints') or []) or '—'} | "
                         f"{cgroup.get('version') or 'unknown: ' + str(cgroup.get('reason'))} | "
                         f"{cap or ('unknown' if 'unknown' in cfg else 'unset')} | {hard or '—'} |")
        lines.append("")
    return "\n".join(lines)
