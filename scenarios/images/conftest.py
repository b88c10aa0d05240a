"""The IM family's registry: a fresh CNCF distribution registry per test, reachable from the nodes
only — a container on the suite's Docker network on a kind cluster the suite creates, a pod with a
NodePort Service on a ``--kubeconfig`` cluster (:mod:`e2e.cluster.registry`)."""

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


@pytest.fixture
def registries(scenario: Scenario, registry_image: str):
    """``start(auth=False)`` → a running :class:`~e2e.cluster.registry.Registry` whose host every
    node's containerd pulls over plain HTTP; removed after the test, its access log attached to the
    report. On a kind cluster the suite creates: a container on its Docker network (the nodes'
    hosts.toml names it); on a ``--kubeconfig`` cluster: a pod with a NodePort Service in the test's
    namespace, on the node the test's pods run on, pulled as ``127.0.0.1:<nodePort>``
    (:class:`~e2e.cluster.registry.PodRegistry`; needs node access for the image export)."""
    started: list[reg_mod.Registry] = []

    def start(auth: bool = False) -> reg_mod.Registry:
        if scenario.kind is None:
            node = scenario.default_node()  # skips without node access
            reg: reg_mod.Registry = reg_mod.start_pod(scenario.kube, scenario.namespace, registry_image, node,
                                                      scenario.node_exec, auth=auth)
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
def payload_image(scenario: Scenario):
    """``make(kib)`` → a local image of its own: the suite's busybox plus ``kib`` KiB of random data
    (incompressible), so its layer is in no node's content store and a pull really transfers it
    (an image whose layers the node has already is "pulled" with one manifest request).
    Built with the classic builder from the local busybox (never pulls); removed after the test."""
    if scenario.kind is None:
        pytest.skip("the registry faults (docker stop, pause; tc in its network namespace) and this image's "
                    "docker build act on the host's Docker: a kind cluster the suite creates, not --kubeconfig")
    made: list[str] = []

    def make(kib: int) -> str:
        tag = f"pod-lifecycle-e2e/im-payload:{secrets.token_hex(4)}"
        with tempfile.TemporaryDirectory() as ctx:
            (Path(ctx) / "payload").write_bytes(os.urandom(kib * 1024))
            (Path(ctx) / "Dockerfile").write_text(f"FROM {BUSYBOX}\nCOPY payload /payload\n")
            subprocess.run(["docker", "build", "-q", "-t", tag, ctx], check=True, capture_output=True, timeout=300,
                           env={**os.environ, "DOCKER_BUILDKIT": "0"})
        made.append(tag)
        return tag

    yield make
    for tag in made:
        subprocess.run(["docker", "rmi", "-f", tag], capture_output=True, timeout=120)
