"""The IM family's registry: a fresh CNCF distribution container per test, on the suite's Docker
network, reachable from the nodes only (:mod:`e2e.cluster.registry`)."""

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
def registry_image() -> str:
    """The registry image (built from the Go module when absent: hack/images/registry/build.sh)."""
    try:
        return reg_mod.build_image()
    except reg_mod.RegistryError as e:
        pytest.skip(f"no registry image: {e}")


@pytest.fixture
def registries(scenario: Scenario, registry_image: str):
    """``start(auth=False)`` → a running :class:`~e2e.cluster.registry.Registry` whose host every
    node's containerd knows as plain HTTP; removed (and the nodes' hosts.toml with it) after the
    test, its access log attached to the report."""
    if scenario.kind is None:
        pytest.skip("the registry joins the kind nodes' Docker network (not available with --kubeconfig)")
    started: list[reg_mod.Registry] = []

    def start(auth: bool = False) -> reg_mod.Registry:
        reg = reg_mod.start(registry_image, auth=auth)
        started.append(reg)
        reg_mod.configure_nodes(scenario.node_exec, scenario.kind.nodes(), reg)
        scenario.note(f"registry{'-auth' if auth else ''}", f"{reg.name} ({reg.image}; nodes pull {reg.host}, "
                                                             f"{reg.address()} on {reg_mod.egress.NETWORK}; host {reg.url})")
        return reg

    yield start
    for reg in started:
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
def payload_image():
    """``make(kib)`` → a local image of its own: the suite's busybox plus ``kib`` KiB of random data
    (incompressible), so its layer is in no node's content store and a pull really transfers it
    (an image whose layers the node has already is "pulled" with one manifest request).
    Built with the classic builder from the local busybox (never pulls); removed after the test."""
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
