"""Live feature gates: what a running component says it runs with, not what a source file defaults to.

Every Kubernetes component exports the gauge ``kubernetes_feature_enabled{name="<Gate>",stage="<STAGE>"}``
on its ``/metrics`` (component-base ``metrics/prometheus/feature``: value 1 enabled, 0 disabled;
``stage`` is ``ALPHA``, ``BETA``, ``DEPRECATED`` or empty for GA). This module reads it from three
components, each without a packet to a pod's or container's address from the host (a client
whose API server is not on the loopback is refused, :class:`GatesUnreadable`):

- the API server: ``GET /metrics`` through the client (the kubeconfig's 127.0.0.1 port);
- a kubelet: ``GET /api/v1/nodes/<node>/proxy/metrics`` through the same client (the API server
  proxies to the kubelet from inside the cluster's network);
- the controller manager: ``curl`` in the control-plane node (``docker exec``) to its secure port
  on the node's loopback (``https://127.0.0.1:10257/metrics``), authenticated with the client
  certificate of kubeadm's ``/etc/kubernetes/admin.conf`` (group ``kubeadm:cluster-admins``, bound
  to cluster-admin: ``/metrics`` is allowed; kubeadm's ``apiserver-kubelet-client`` certificate is
  refused with 403 on v1.37.2), written to a temporary directory of the node and removed after.

Shape: each reader returns a :class:`Gates`, a mapping ``{gate name: Gate}``;
``gates.enabled("PodReadyToStartContainersCondition")`` is a bool, and raises
:class:`GateUnknown` (a ``KeyError``) for a gate the component does not export — a gate unknown
to that version, removed after GA, or a typo, never a silent False. A component that cannot be
read raises :class:`GatesUnreadable` with what was asked and why.

```python
from e2e.cluster import gates
gates.api_server(sc.kube).enabled("InPlacePodVerticalScaling")           # True / False
gates.kubelet(sc.kube, sc.kind.control_plane)["PodReadyToStartContainersCondition"].stage   # "BETA"
sc.controller_manager_gates().enabled("StatefulSetAutoDeletePVC")
```
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

METRIC = "kubernetes_feature_enabled"
REQUEST_TIMEOUT_S = 15
"""How long one ``/metrics`` read may take (the API server's is a few hundred kB)."""
CONTROLLER_MANAGER_URL = "https://127.0.0.1:10257/metrics"
"""kubeadm's controller manager: ``--bind-address=127.0.0.1``, secure port 10257, in the node."""
ADMIN_CONF = "/etc/kubernetes/admin.conf"
"""kubeadm's admin kubeconfig in the control-plane node: its embedded client certificate reads ``/metrics``."""

LOOPBACK = ("127.0.0.1", "localhost", "::1")
"""Hosts the readers send to: the host's traffic goes to its own loopback only."""
# the admin certificate and key, decoded into a temporary directory (removed on exit), then curl
_CURL_AS_ADMIN = (
    'd=$(mktemp -d); trap \'rm -rf "$d"\' EXIT; '
    f"grep client-certificate-data {ADMIN_CONF} | awk '{{print $2}}' | base64 -d > \"$d/c\"; "
    f"grep client-key-data {ADMIN_CONF} | awk '{{print $2}}' | base64 -d > \"$d/k\"; "
    f'curl -sS --fail -k --max-time {REQUEST_TIMEOUT_S} --cert "$d/c" --key "$d/k" {CONTROLLER_MANAGER_URL}'
)
_LINE = re.compile(r'^' + METRIC + r'\{(?P<labels>[^}]*)\}\s+(?P<value>\S+)')
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def gate_key(on: bool) -> str:
    """The qualifier of a documented value keyed by a gate the cluster runs, read here:
    ``gate on`` / ``gate off`` (``sc.expect("ST-3", f"deleted_first[{gate_key(on)}][Parallel]", …)``
    against the entry ``deleted_first[gate on]``). A gate the version does not know counts as off."""
    return "gate on" if on else "gate off"


class GatesUnreadable(RuntimeError):
    """A component's gates could not be read: the request failed, or its metrics hold no gate."""


class GateUnknown(KeyError):
    """The component exports no gate of this name (unknown to its version, removed, or a typo)."""


@dataclass(frozen=True)
class Gate:
    """One gate as a component runs it: ``stage`` ``ALPHA``/``BETA``/``DEPRECATED``, ``""`` for GA."""

    name: str
    stage: str
    enabled: bool


class Gates(Mapping[str, Gate]):
    """The gates of one component (``source`` says which and how they were read)."""

    def __init__(self, gates: dict[str, Gate], source: str):
        self._gates = dict(gates)
        self.source = source

    def __getitem__(self, name: str) -> Gate:
        try:
            return self._gates[name]
        except KeyError:
            raise GateUnknown(f"{self.source} exports no feature gate {name!r} ({len(self._gates)} gates read)") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._gates)

    def __len__(self) -> int:
        return len(self._gates)

    def enabled(self, name: str) -> bool:
        """Whether gate ``name`` is on; :class:`GateUnknown` if the component does not export it."""
        return self[name].enabled

    def describe(self, name: str) -> str:
        """One line for a report: ``Gate=true (BETA) per <source>``, or that it is not exported."""
        try:
            g = self[name]
        except GateUnknown:
            return f"{name} not exported by {self.source}"
        return f"{name}={str(g.enabled).lower()} ({g.stage or 'GA'}) per {self.source}"


def parse(text: str, source: str = "metrics") -> Gates:
    """The gates in a Prometheus text exposition ``text`` (other metrics are ignored).
    :class:`GatesUnreadable` when it holds no ``kubernetes_feature_enabled`` sample."""
    gates: dict[str, Gate] = {}
    for line in text.splitlines():
        m = _LINE.match(line.strip())
        if not m:
            continue
        labels = dict(_LABEL.findall(m.group("labels")))
        if "name" not in labels:
            continue
        try:
            value = float(m.group("value"))
        except ValueError:
            raise GatesUnreadable(f"{source}: {METRIC} of {labels['name']} has the value {m.group('value')!r}") from None
        gates[labels["name"]] = Gate(labels["name"], labels.get("stage", ""), value == 1)
    if not gates:
        raise GatesUnreadable(f"{source}: no {METRIC} sample in {len(text)} characters of metrics")
    return Gates(gates, source)


def read(kube, path: str, source: str) -> str:
    """The body of ``GET path`` on the API server of ``kube`` (:class:`e2e.cluster.kube.Kube`) as text;
    :class:`GatesUnreadable` (naming ``source``) when its server is not on the loopback, or the
    request fails or is not answered with 200."""
    host = kube.api_client.configuration.host
    if urlsplit(host).hostname not in LOOPBACK:
        raise GatesUnreadable(f"{source}: the API server is read on 127.0.0.1 only; this client's is {host}")
    try:
        # param_serialize puts the kubeconfig's bearer token in (call_api alone sends none: a
        # token-only user, a ServiceAccount's, was refused with 403 as anonymous)
        method, url, headers, _, _ = kube.api_client.param_serialize("GET", path, auth_settings=["BearerToken"])
        answer = kube.api_client.call_api(method, url, header_params=headers, _request_timeout=REQUEST_TIMEOUT_S)
        answer.read()
    except Exception as e:  # refused, 403, timeout: one error saying what was asked
        raise GatesUnreadable(f"{source}: GET {path}: {type(e).__name__}: {str(e).strip()[:200]}") from e
    status = getattr(answer, "status", 200)
    if status != 200:
        raise GatesUnreadable(f"{source}: GET {path}: HTTP {status}")
    return (answer.data or b"").decode(errors="replace")


def api_server(kube) -> Gates:
    """The API server's gates, ``GET /metrics`` through ``kube`` (:class:`e2e.cluster.kube.Kube`)."""
    source = "kube-apiserver /metrics"
    return parse(read(kube, "/metrics", source), source)


def kubelet(kube, node: str) -> Gates:
    """The gates of ``node``'s kubelet, through the API server's node proxy
    (``/api/v1/nodes/<node>/proxy/metrics``)."""
    source = f"kubelet of {node} (node proxy /metrics)"
    return parse(read(kube, f"/api/v1/nodes/{quote(node, safe='')}/proxy/metrics", source), source)


def feature_gates_flag(value: str) -> dict[str, bool]:
    """A ``--feature-gates`` value as the components take it (``"A=true,B=false"``; k8s.io/component-base
    featuregate ``Set``): gate name → on. ``ValueError`` naming the first item that is not
    ``Name=true|false``."""
    out: dict[str, bool] = {}
    for item in (part.strip() for part in value.split(",")):
        name, eq, on = item.partition("=")
        if not eq or not name.strip() or on.strip().lower() not in ("true", "false"):
            raise ValueError(f"{item!r} is not Name=true or Name=false")
        out[name.strip()] = on.strip().lower() == "true"
    return out


def controller_manager_assumed(api: Gates, given: Mapping[str, bool], origin: str | None) -> Gates:
    """The controller manager's gates where its ``/metrics`` cannot be read (a ``--kubeconfig``
    cluster: it listens on the control-plane node's loopback, and the node agent never enters a
    control plane): the ``given`` gates (``--cluster-facts`` ``controllerManager.feature-gates``,
    named by ``origin``) over the API server's as read (``api``, :func:`api_server`), which stand for
    the rest — kubeadm, kind's included, gives every control-plane component the one
    ``featureGates`` of its ClusterConfiguration. Its ``source`` says so in each value's note."""
    merged = {name: Gate(name, gate.stage, given[name]) if name in given else gate for name, gate in api.items()}
    merged.update({name: Gate(name, "", on) for name, on in given.items() if name not in merged})
    assumed = (f"{api.source}, assumed for kube-controller-manager (its /metrics is on the control-plane node, "
               "which the suite does not enter; give controllerManager.feature-gates in --cluster-facts)")
    if given:
        assumed = f"kube-controller-manager --feature-gates {','.join(sorted(given))} ({origin}); the rest: {assumed}"
    return Gates(merged, assumed)


def controller_manager(node_exec: Callable[..., str]) -> Gates:
    """The controller manager's gates, read by ``node_exec`` (``Scenario.node_exec`` or
    ``Kind.node_exec``: runs a command in the control-plane node, returns its stdout) with curl
    on the node's loopback."""
    source = f"kube-controller-manager {CONTROLLER_MANAGER_URL} (in the node)"
    try:
        text = node_exec("sh", "-c", _CURL_AS_ADMIN, timeout=REQUEST_TIMEOUT_S + 5)
    except Exception as e:  # docker exec or curl failed: one error saying what
        raise GatesUnreadable(f"{source}: {type(e).__name__}: {str(e).strip()[:200]}") from e
    return parse(text, source)
