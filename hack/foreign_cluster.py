"""The "foreign" cluster of issue 42 item 6: ``make foreign-cluster`` / ``make foreign-cluster-delete``.

A kind cluster made by plain ``kind create cluster`` from ``hack/foreign-cluster.yaml`` (a config
that matches none of the suite's profiles: one control plane, two workers in zones ``zone-a`` and
``zone-b``, non-default eviction thresholds, a 20 s crash-loop back-off cap on ``zone-b``'s worker
alone), so that runs with ``--kubeconfig`` meet a cluster the suite did not make. What it shares with
the suite's own clusters is what keeps packets on the machine and makes the offline image work:

- the egress guard (:mod:`e2e.cluster.egress`): :func:`e2e.cluster.egress.prepare` puts the host
  guard in place and makes the network ``ple2e`` before the first node exists, kind is pointed at that
  network (``KIND_EXPERIMENTAL_DOCKER_NETWORK``), and every node mounts the node guard (its script
  and kubelet drop-in, run before every kubelet start) as the suite's clusters do
  (:meth:`e2e.cluster.kind.Profile.config`);
- the offline node image's patch (``$E2E_PROFILE_PATCH``: static CNI, cgroup v1 allowed), its
  per-node pod subnets and the routes between the nodes (:meth:`e2e.cluster.kind.Kind.wire_nodes`);
- the workload images and the IM family's registry image, loaded into every node (``kind load
  docker-image``).

Its name has no ``ple2e-`` prefix, so ``make clean`` never takes it for the suite's (e2e.cli.clean
lists ``ple2e-*`` clusters only); it is deleted by ``make foreign-cluster-delete`` (or ``kind delete
cluster --name NAME``; the network and host guard then go with ``make clean``). Its files (the
kubeconfig, the rendered config, the guard and CNI files its nodes mount) live in ``--dir``, which
must be the ``E2E_STATE_DIR`` of this process (the Makefile sets both).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CONFIG = HERE / "foreign-cluster.yaml"
# what the zone-b worker's kubeadm join patches into its KubeletConfiguration (strategic merge)
KUBELET_PATCH = """apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
crashLoopBackOff:
  maxContainerRestartPeriod: 20s
"""


def create(name: str, out: Path) -> int:
    from e2e.cluster import egress, registry
    from e2e.cluster.images import workload_images
    from e2e.cluster.kind import KIND_WAIT, READY_TIMEOUT_S, Kind, Profile

    image = os.environ.get("E2E_NODE_IMAGE")
    if not image:
        print("E2E_NODE_IMAGE is not set (make foreign-cluster reads it from REPORTS/profile.env)", file=sys.stderr)
        return 2
    kind = Kind(name)
    if kind.exists():
        print(f"kind cluster {name} exists already (kubeconfig {out / 'kubeconfig'}); `make foreign-cluster-delete` first")
        return 0
    patches_dir = out / "kubelet-patches"
    patches_dir.mkdir(parents=True, exist_ok=True)
    (patches_dir / "kubeletconfiguration.yaml").write_text(KUBELET_PATCH)
    base = out / "foreign-cluster.yaml"
    base.write_text(CONFIG.read_text().replace("__PATCHES__", str(patches_dir)))
    extra = tuple(Path(p) for p in os.environ.get("E2E_PROFILE_PATCH", "").split(":") if p)
    profile = Profile(base, image, extra, "foreign")
    for path, text in profile.files().items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    rendered = out / "kind-config.yaml"
    rendered.write_text(profile.rendered())
    kubeconfig = out / "kubeconfig"
    print(egress.prepare())  # the host guard and the network before the first node
    try:
        kind._kind("create", "cluster", "--name", name, "--image", image, "--config", str(rendered),
                   "--kubeconfig", str(kubeconfig), "--wait", KIND_WAIT)
        kind.wire_nodes(profile.config())
        kubectl = ["kubectl", "--kubeconfig", "/etc/kubernetes/admin.conf"]
        kind.node_exec(*kubectl, "wait", "--for=condition=Ready", "nodes", "--all", f"--timeout={READY_TIMEOUT_S}s",
                       timeout=READY_TIMEOUT_S + 10)
        kind.node_exec(*kubectl, "-n", "kube-system", "rollout", "status", "deployment/coredns",
                       f"--timeout={READY_TIMEOUT_S}s", timeout=READY_TIMEOUT_S + 10)
        kind.load_images([*workload_images().values(), registry.build_image()])  # the IM family's registry pod
    except BaseException:
        kind.delete()
        raise
    print(f"foreign cluster {name} ready: --kubeconfig {kubeconfig} (API server on 127.0.0.1); "
          f"delete it with `make foreign-cluster-delete` (kind delete cluster --name {name})")
    return 0


def delete(name: str) -> int:
    from e2e.cluster import egress
    from e2e.cluster.kind import Kind

    kind = Kind(name)
    if kind.exists():
        kind.delete()
        print(f"deleted kind cluster {name}")
    else:
        print(f"no kind cluster {name}")
    if egress.release():
        print(f"egress guard and Docker network {egress.NETWORK} removed: no cluster left on it")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("action", choices=("create", "delete"))
    p.add_argument("--name", default="pod-lifecycle-foreign", help="the kind cluster's name (no ple2e- prefix)")
    p.add_argument("--dir", type=Path, required=True, help="its files: kubeconfig, config, mounted guard files")
    a = p.parse_args(argv)
    if a.name.startswith("ple2e-"):
        p.error("a name with the prefix ple2e- is the suite's own: make clean would delete it")
    a.dir.mkdir(parents=True, exist_ok=True)
    if Path(os.environ.get("E2E_STATE_DIR", "")).resolve() != a.dir.resolve():
        p.error(f"E2E_STATE_DIR must be --dir ({a.dir}): the nodes mount files from it")
    from e2e.cluster.kind import PreflightError

    try:
        return create(a.name, a.dir.resolve()) if a.action == "create" else delete(a.name)
    except PreflightError as e:  # no Docker, no kind: said in one line, not a traceback
        print(f"foreign-cluster {a.action}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
