"""Feature gates as a running component reports them: the ``kubernetes_feature_enabled`` metric
(component-base featuregate metrics: ``kubernetes_feature_enabled{name="X",stage="BETA"} 1``).
The kubelet's ``/metrics`` is read through the API server's node proxy (host traffic to 127.0.0.1
only)."""

from __future__ import annotations

import re

FEATURE = re.compile(r'^kubernetes_feature_enabled\{([^}]*)\}\s+([0-9.eE+-]+)\s*$')


def parse_feature_metrics(text: str) -> dict[str, bool]:
    """``{gate name: enabled}`` from a Prometheus text exposition."""
    out: dict[str, bool] = {}
    for line in text.splitlines():
        m = FEATURE.match(line.strip())
        if not m:
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        if "name" in labels:
            out[labels["name"]] = float(m.group(2)) == 1.0
    return out


def kubelet_gates(kube, node: str) -> dict[str, bool]:
    """The kubelet's gates on ``node`` (``kube``: :class:`e2e.cluster.kube.Kube`), through
    ``/api/v1/nodes/<node>/proxy/metrics``."""
    text = kube.core.connect_get_node_proxy_with_path(node, "metrics", _request_timeout=10)
    return parse_feature_metrics(text if isinstance(text, str) else str(text))
