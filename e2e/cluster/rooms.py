"""Rooms: the profiles that differ only in kubelet settings as nodes of one kind cluster (issue 45 step 2).

Every kind cluster brings a control plane that costs CPU while it idles (issue 45: ~11 % of a core
for the control-plane node of an idle cluster on a 2-core host, ~1.4 % for a worker). A profile
whose patch is ``KubeletConfiguration`` settings only (``profiles/crashloop-cap-20s.yaml``,
``profiles/image-pulls.yaml``; the default profile: none) needs no control plane of its own: it
can be a *room*, one worker of the shared cluster ``rooms`` whose kubelet runs that profile's
settings. A kubelet's configuration can differ per node: kubeadm's join reads a ``patches``
directory (``kubeletconfiguration.yaml``, a strategic merge over the cluster's
KubeletConfiguration; the same trick as ``hack/foreign-cluster.yaml``'s zone-b worker), which
the room's node mounts read-only from ``<state dir>/rooms/<digest>/``.

Each room's node carries the label ``pod-lifecycle-e2e/room=<profile>`` and the zone
``topology.kubernetes.io/zone=room-<profile>``; every room but the default's is tainted
``pod-lifecycle-e2e/room=<profile>:NoSchedule``, so that no other test's pod (nor an add-on) lands
there, and its tests' pods carry the matching toleration (:func:`toleration`). The control plane
keeps kubeadm's taint (kind leaves it when there are workers). Which room's node a test is placed
on is decided by the cluster's facts (e2e.cluster.facts.choose_node, in e2e.plugin.clusters), so a
room whose kubelet does not run its profile's settings is found, not trusted.

A profile that sets anything else cannot be a room (:func:`room_patch` raises ``ValueError``
naming it): the controller manager's node-lifecycle periods (``fast-lifecycle``,
``default-lifecycle``, ``multi-node-fast-lifecycle``) and cluster feature gates (``gates-*``)
are cluster-wide and would change every other test's contract on the cluster. A profile that only
adds nodes (``multi-node``: a worker, and the control plane made schedulable) is a room of as many
workers (:attr:`Room.workers`: 2), the control plane tainted as for every room. See
docs/profiles-and-concurrency.md, "Rooms".
"""

from __future__ import annotations

import copy
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .kind import DEFAULT_PROFILE

ROOMS_PROFILE = "rooms"
ROOM_LABEL = "pod-lifecycle-e2e/room"
ZONE_LABEL = "topology.kubernetes.io/zone"
# The profiles E2E_ROOMS=1 (--rooms) puts into rooms, in the order of the cluster's workers.
ROOM_PROFILES = (DEFAULT_PROFILE, "crashloop-cap-20s", "image-pulls", "multi-node")
# Where a room's node mounts its kubeadm patches directory.
PATCHES_IN_NODE = "/etc/ple2e-room-patches"


def taint(profile: str) -> str:
    """The taint of ``profile``'s room as e2e.cluster.facts records taints (``key=value:Effect``);
    ``""`` for the default room, which has none."""
    return "" if profile == DEFAULT_PROFILE else f"{ROOM_LABEL}={profile}:NoSchedule"


def toleration(profile: str) -> dict | None:
    """The toleration a pod of ``profile``'s tests carries to be scheduled in its room (None: the
    default room, untainted)."""
    if profile == DEFAULT_PROFILE:
        return None
    return {"key": ROOM_LABEL, "operator": "Equal", "value": profile, "effect": "NoSchedule"}


@dataclass(frozen=True)
class Room:
    """What a profile's room is made of: ``kubelet`` its KubeletConfiguration patch (``{}``: none),
    on each of ``workers`` workers (1; ``multi-node``: 2)."""

    kubelet: dict = field(default_factory=dict)
    workers: int = 1


def _untainted_control_plane(part: dict) -> bool:
    """Whether an ``InitConfiguration`` entry sets only ``nodeRegistration.taints: []`` (the
    control plane made schedulable: one more node for the profile's tests)."""
    return set(part) <= {"kind", "apiVersion", "nodeRegistration"} and part.get("nodeRegistration") == {"taints": []}


def room_patch(path: Path | None) -> Room:
    """The :class:`Room` of the profile file ``path`` (``None``: the default profile: one worker,
    no patch): its ``kubeadmConfigPatches`` of ``kind: KubeletConfiguration``, and one worker more
    per ``role: worker`` entry of its ``nodes`` (the control plane it makes schedulable,
    ``InitConfiguration`` ``nodeRegistration.taints: []``, is a worker of the room too).
    ``ValueError`` naming the file and what it sets when the profile cannot be a room: anything
    else (``featureGates``, a ``ClusterConfiguration``, another node role, another
    ``InitConfiguration``), or a ``nodeLeaseDurationSeconds`` (its bands are keyed together with
    the controller manager's periods, e2e.documented.faults)."""
    if path is None:
        return Room()
    try:
        patch = yaml.safe_load(Path(path).read_text()) or {}
    except (OSError, yaml.YAMLError) as e:
        raise ValueError(f"profile {path}: {e}") from e
    if not isinstance(patch, dict):
        raise ValueError(f"profile {path}: not a mapping")
    other = [k for k in patch if k not in ("kubeadmConfigPatches", "nodes")]
    entries = patch.get("nodes") or []
    if not isinstance(entries, list) or not all(isinstance(n, dict) and n == {"role": "worker"} for n in entries):
        other.append("nodes other than plain workers")
    kubelet: dict = {}
    for doc in patch.get("kubeadmConfigPatches") or []:
        part = yaml.safe_load(doc) if isinstance(doc, str) else doc
        if not isinstance(part, dict):
            raise ValueError(f"profile {path}: a kubeadmConfigPatches entry is not a mapping")
        if part.get("kind") == "InitConfiguration" and entries and _untainted_control_plane(part):
            continue
        if part.get("kind") != "KubeletConfiguration":
            other.append(str(part.get("kind")))
            continue
        kubelet.update({k: v for k, v in part.items() if k not in ("kind", "apiVersion")})
    if "nodeLeaseDurationSeconds" in kubelet:
        other.append("KubeletConfiguration nodeLeaseDurationSeconds (keyed with the controller manager's periods)")
    if other:
        raise ValueError(f"profile {Path(path).stem} cannot be a room: {path} sets {', '.join(other)}, "
                         "not only kubelet settings")
    return Room(kubelet, 1 + len(entries))


def _write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` unless it holds it already (content-addressed: another process
    writes the same), through a temporary file renamed over it (a reader never sees half)."""
    if path.is_file() and path.read_text() == text:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    tmp.replace(path)


def rooms_config(rooms: dict[str, Room], state_dir: Path) -> Path:
    """Write the kind config patch of the rooms cluster (merged over the kind config and the
    ``--profile-patch`` files, e2e.cluster.kind.Profile) and each room's kubeadm patches
    directory under ``state_dir/rooms/``; return the patch's path. ``rooms``: per profile, its
    :class:`Room` (:func:`room_patch`), in the order of the workers. Every file is
    named by a digest of its content, so the cluster's name (a hash of the rendered config) follows
    the rooms' settings."""
    nodes = []
    for profile, room in rooms.items():
        kubelet = room.kubelet
        node: dict = {"role": "worker", "labels": {ROOM_LABEL: profile, ZONE_LABEL: f"room-{profile}"}}
        join: dict = {"kind": "JoinConfiguration"}
        t = toleration(profile)
        if t is not None:
            join["nodeRegistration"] = {"taints": [{"key": t["key"], "value": t["value"], "effect": t["effect"]}]}
        if kubelet:
            text = yaml.safe_dump({"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
                                   **kubelet}, sort_keys=True)
            directory = state_dir / "rooms" / hashlib.sha256(text.encode()).hexdigest()[:12]
            _write(directory / "kubeletconfiguration.yaml", text)
            node["extraMounts"] = [{"hostPath": str(directory), "containerPath": PATCHES_IN_NODE, "readOnly": True}]
            join["patches"] = {"directory": PATCHES_IN_NODE}
        if len(join) > 1:
            node["kubeadmConfigPatches"] = [yaml.safe_dump(join, sort_keys=True)]
        nodes += [copy.deepcopy(node) for _ in range(room.workers)]  # no YAML alias: each node its own mounts
    text = "# the rooms cluster (e2e.cluster.rooms): one worker per room\n" + yaml.safe_dump({"nodes": nodes}, sort_keys=True)
    path = state_dir / "rooms" / f"rooms-{hashlib.sha256(text.encode()).hexdigest()[:12]}.yaml"
    _write(path, text)
    return path


def members(nodes: list[dict], profile: str) -> list[str]:
    """The names of the nodes (the API's JSON, e2e.cluster.kube.Kube.nodes) of ``profile``'s room."""
    return sorted(n["metadata"]["name"] for n in nodes if ((n["metadata"].get("labels") or {}).get(ROOM_LABEL)) == profile)


def elsewhere(nodes: list[dict], profile: str) -> list[str]:
    """The names of the nodes (the API's JSON) of the rooms other than ``profile``'s: a fault of
    ``profile``'s room leaves them out of its health check (e2e.faults.core.health)."""
    return sorted(n["metadata"]["name"] for n in nodes
                  if ((n["metadata"].get("labels") or {}).get(ROOM_LABEL)) not in (None, profile))
