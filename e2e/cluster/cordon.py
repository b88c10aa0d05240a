"""A node a run cordons (DR-2's ``kubectl drain``): whether it may, and the mark that lets a killed
run's cordon be found and undone.

``kubectl drain`` cordons the node it drains (``spec.unschedulable: true``) and DR-2 uncordons it
in a ``finally``. A run killed in between (SIGKILL, a lost laptop) leaves the node cordoned: no new
pod lands there. So before the drain the test marks the node through the API (:func:`mark`: the
annotation :data:`CORDONED_BY`, the run's id), and the uncordon removes the mark in the same patch
(:func:`uncordon`). ``make clean`` (``KUBECONFIG=…`` for a cluster the suite did not make;
e2e.cli.clean) uncordons every node whose mark names a dead run and removes the mark
(:func:`marked`); ``hack/interrupt_check.py`` reports a cordoned worker or a mark left behind.

On a cluster the suite did not make a cordon is a change to the user's node: :func:`refusal` allows it
only with the explicit node flag ``--node-agent`` and only on a node the node agent may enter
(never a control-plane node; inside ``--node-selector``: :meth:`e2e.cluster.nodeaccess.AgentAccess.refusal`).
On the kind clusters the suite makes (``docker exec``) it is always allowed.
"""

from __future__ import annotations

from dataclasses import dataclass

from .nodeaccess import AgentAccess, DockerAccess

# The annotation of a node cordoned by a run: its value is the run's id (the namespaces' run-id label).
CORDONED_BY = "pod-lifecycle-e2e/cordoned-by"


def refusal(access, node: dict | None = None, what: str = "kubectl drain") -> str | None:
    """Why a test must not cordon ``node`` (the API's JSON; ``None``: whichever node, only the flag
    is checked) of the cluster that ``access`` enters (:attr:`e2e.run.scenario.Scenario.access`):
    ``None`` on a kind cluster the suite made (:class:`~e2e.cluster.nodeaccess.DockerAccess`) and,
    through the node agent, on a node it may enter; else the reason, naming what is missing —
    ``--node-agent``, or the node the agent refuses (a control plane, one outside
    ``--node-selector``). ``what`` names the command that cordons, for the reason."""
    if isinstance(access, DockerAccess):
        return None
    name = ((node or {}).get("metadata") or {}).get("name")
    which = f"node {name}" if name else "a node"
    if not isinstance(access, AgentAccess):
        return (f"{what} cordons {which} of a cluster the suite did not make: a node change, made only with the "
                "explicit node flag --node-agent, which this run was not given")
    refused = access.refusal(node) if node is not None else None
    if refused:
        return f"{what} cordons {which}, a node change made only where the node agent may go: {refused}"
    return None


def mark(kube, node: str, run_id: str) -> None:
    """Annotate ``node`` with :data:`CORDONED_BY` = ``run_id`` (a merge patch through ``kube``,
    :class:`e2e.cluster.kube.Kube`), before the command that cordons it runs.
    :class:`e2e.cluster.kube.ApiRefused` when the API refuses it (no ``patch nodes``)."""
    kube.patch("Node", node, None, {"metadata": {"annotations": {CORDONED_BY: run_id}}}, patch_type="merge")


def uncordon(kube, node: str) -> dict:
    """Uncordon ``node`` (``spec.unschedulable: false``, as ``kubectl uncordon``) and remove its
    :data:`CORDONED_BY` mark, in one merge patch; returns the Node as the server answered.
    :class:`e2e.cluster.kube.ApiRefused` when the API refuses it."""
    return kube.patch("Node", node, None, {"metadata": {"annotations": {CORDONED_BY: None}},
                                           "spec": {"unschedulable": False}}, patch_type="merge")


@dataclass(frozen=True)
class Marked:
    """A node that carries the :data:`CORDONED_BY` mark: its ``node`` name, the ``run`` id of the
    run that cordoned it, and whether it is ``cordoned`` now (``spec.unschedulable``)."""

    node: str
    run: str
    cordoned: bool


def marked(kube) -> list[Marked]:
    """Every node of ``kube``'s cluster that carries the :data:`CORDONED_BY` mark, by name (a list
    of every node: ``list nodes``; the client's ``ApiException`` when the API refuses it)."""
    out = []
    for node in kube.nodes():
        meta = node.get("metadata") or {}
        run = (meta.get("annotations") or {}).get(CORDONED_BY)
        if run is not None:
            out.append(Marked(meta["name"], run, bool((node.get("spec") or {}).get("unschedulable"))))
    return sorted(out, key=lambda m: m.node)
