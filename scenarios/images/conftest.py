"""The IM family's registry: a fresh CNCF distribution registry per test, reachable from the nodes
only — a container on the suite's Docker network on a kind cluster the suite creates, a pod with a
NodePort Service on a ``--kubeconfig`` cluster (:mod:`e2e.cluster.registry`; its faults,
:mod:`e2e.faults.registry`, then act on the pod through the node agent)."""

from __future__ import annotations

import os
import secrets
import subprocess
import tempfile
from pathlib import Path

import pytest

from e2e.cluster import registry as reg_mod
from e2e.cluster.images import BUSYBOX
from e2e.run.scenario import Scenario


@pytest.fixture(scope="session")
def registry_image(request: pytest.FixtureRequest) -> str:
    """The registry image: with ``--registry-image`` that one; else the tag
    hack/images/registry/build.sh builds — built from the Go module when absent on a kind cluster,
    only named on a ``--kubeconfig`` one (its nodes must hold it: no Docker, no pull)."""
    chosen = request.config.getoption("--registry-image")
    if chosen:
        return chosen
    try:
        return reg_mod.image_tag() if request.config.getoption("--kubeconfig") else reg_mod.build_image()
    except reg_mod.RegistryError as e:
        pytest.skip(f"no registry image: {e}")


# Why the pod registry cannot be used without the node agent.
NEEDS_AGENT = ("the registry as a pod needs node access (the node's image export, the pull check in the node "
               "and the registry faults in its network namespace and cgroup): --node-agent")


@pytest.fixture
def made_images() -> dict[str, reg_mod.Layout]:
    """Images made on the host for a pod registry to push (name -> Layout: :func:`payload_image`
    on a ``--kubeconfig`` cluster); empty on a kind cluster, whose images Docker builds."""
    return {}


@pytest.fixture
def registries(scenario: Scenario, registry_image: str, made_images: dict[str, reg_mod.Layout]):
    """``start(auth=False)`` → a running :class:`~e2e.cluster.registry.Registry` whose host every
    node's containerd pulls over plain HTTP; removed after the test, its access log attached to the
    report. On a kind cluster the suite creates: a container on its Docker network (the nodes'
    hosts.toml names it); on a ``--kubeconfig`` cluster: a pod with a NodePort Service in the test's
    namespace, on the node the test's pods run on, pulled as ``127.0.0.1:<nodePort>``
    (:class:`~e2e.cluster.registry.PodRegistry`; skipped without node access: :data:`NEEDS_AGENT`)."""
    started: list[reg_mod.Registry] = []

    def start(auth: bool = False) -> reg_mod.Registry:
        if scenario.kind is None:
            if scenario.access is None:
                pytest.skip(NEEDS_AGENT)
            node = scenario.default_node()
            reg: reg_mod.Registry = reg_mod.start_pod(scenario.kube, scenario.namespace, registry_image, node,
                                                      scenario.node_exec, auth=auth, made=made_images)
            started.append(reg)
            scenario.note(f"registry{'-auth' if auth else ''}", f"pod {reg.name} ({reg.image}) on {node}; nodes pull {reg.host} "
                                                                 f"(NodePort); host {reg.url} (pods/portforward)")
            return reg
        reg = reg_mod.start(registry_image, auth=auth)
        started.append(reg)
        reg_mod.configure_nodes(scenario.node_exec, scenario.kind.nodes(), reg)
        scenario.note(f"registry{'-auth' if auth else ''}", f"{reg.name} ({reg.image}; nodes pull {reg.host}, "
                                                             f"{reg.address()} on {reg_mod.egress.NETWORK}; host {reg.url})")
        return reg

    yield start
    for reg in started:
        if isinstance(reg, reg_mod.PodRegistry):
            try:
                scenario.add_file(f"registry-{reg.name}.log", reg.log())
            finally:
                reg_mod.remove_pod(reg, scenario.node_exec)
            continue
        scenario.add_file(f"registry-{reg.name}.log", reg.log())
        try:
            reg_mod.unconfigure_nodes(scenario.node_exec, scenario.kind.nodes(), reg)
        finally:
            reg_mod.remove(reg)


@pytest.fixture
def registry(registries) -> reg_mod.Registry:
    """The open registry, holding the suite's busybox as ``suite/busybox:1``."""
    reg = registries()
    reg.push(BUSYBOX, "suite/busybox", "1")
    return reg


@pytest.fixture
def payload_image(scenario: Scenario, made_images: dict[str, reg_mod.Layout]):
    """``make(kib)`` → a local image of its own: the suite's busybox plus ``kib`` KiB of random data
    (incompressible) in a file ``/payload``, so its layer is in no node's content store and a pull
    really transfers it (an image whose layers the node has already is "pulled" with one manifest
    request). On a kind cluster built with Docker's classic builder from the local busybox (never
    pulls) and removed after the test; on a ``--kubeconfig`` cluster (no Docker) made on the host
    as a :class:`~e2e.cluster.registry.Layout` — the node's busybox export plus the same file as one
    more layer (:func:`~e2e.cluster.registry.with_file_layer`) — for the pod registry's push
    (``made_images``)."""
    made: list[str] = []

    def make(kib: int) -> str:
        tag = f"pod-lifecycle-e2e/im-payload:{secrets.token_hex(4)}"
        data = os.urandom(kib * 1024)
        if scenario.kind is None:
            if scenario.access is None:
                pytest.skip(NEEDS_AGENT)
            made_images[tag] = reg_mod.with_file_layer(reg_mod.node_layout(scenario.node_exec, BUSYBOX), "payload", data)
            return tag
        with tempfile.TemporaryDirectory() as ctx:
            (Path(ctx) / "payload").write_bytes(data)
            (Path(ctx) / "Dockerfile").write_text(f"FROM {BUSYBOX}\nCOPY payload /payload\n")
            subprocess.run(["docker", "build", "-q", "-t", tag, ctx], check=True, capture_output=True, timeout=300,
                           env={**os.environ, "DOCKER_BUILDKIT": "0"})
        made.append(tag)
        return tag

    yield make
    for tag in made:
        subprocess.run(["docker", "rmi", "-f", tag], capture_output=True, timeout=120)
