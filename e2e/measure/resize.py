"""RS: a container's own cgroup limits as values (CASES-workloads.md §4 RS-1 … RS-4) — what
:mod:`scenarios.resize` judges and tests/test_mutations.py feeds with mutated reads."""

from __future__ import annotations

from .values import Value

#: What a container's cgroup read holds (:func:`cgroup_read`).
CPU_KEYS = ("cpu_quota_us", "cpu_shares")
MEMORY_KEYS = ("memory_limit_bytes",)

#: The files a container reads its own limits from, in :func:`cgroup_read`'s order, by cgroup version.
CGROUP_FILES = {1: ("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "/sys/fs/cgroup/cpu/cpu.shares", "/sys/fs/cgroup/memory/memory.limit_in_bytes"),
                2: ("/sys/fs/cgroup/cpu.max", "/sys/fs/cgroup/memory.max")}


def cgroup_read(output: str, cgroup: int) -> dict[str, int | str]:
    """``cpu_quota_us``, ``cpu_shares`` and ``memory_limit_bytes`` from ``cat`` of :data:`CGROUP_FILES`
    in the container. cgroup v1: runc mounts the container's cgroup at ``/sys/fs/cgroup/<controller>``;
    cgroup v2: ``cpu.max`` (quota, period) and ``memory.max`` (``max`` → -1), no ``cpu.shares``
    (``absent``). Raises ``ValueError`` on output of another shape."""
    out = output.split()
    if len(out) != 3:
        raise ValueError(f"cgroup v{cgroup} limits: 3 fields expected, got {output!r}")
    if cgroup == 2:
        return {"cpu_quota_us": int(out[0]) if out[0] != "max" else -1, "cpu_shares": "absent",
                "memory_limit_bytes": int(out[2]) if out[2] != "max" else -1}
    return {"cpu_quota_us": int(out[0]), "cpu_shares": int(out[1]), "memory_limit_bytes": int(out[2])}


def cgroup_values(case: str, prefix: str, read: dict, memory: bool = True, cpu: bool = True) -> list[Value]:
    """``read`` (:func:`cgroup_read`) as ``<prefix>cpu_quota_us``, ``<prefix>cpu_shares`` (with ``cpu``)
    and ``<prefix>memory_limit_bytes`` (with ``memory``) of ``case``, each with the read in its details."""
    keys = (CPU_KEYS if cpu else ()) + (MEMORY_KEYS if memory else ())
    return [Value(case, f"{prefix}{key}", read[key], dict(read)) for key in keys]
