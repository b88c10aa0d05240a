"""Kernel OOM-killer reports (``dmesg``) and the signs that tell an OOM kill from an eviction.

Two different mechanisms end a container for memory (CASES.md OM-1, ES-1; [S0] «Eviction
kubelet и OOM killer — разные механизмы и оставляют разные признаки»):

- the **kernel's OOM killer** fires when a memory cgroup reaches its limit: it SIGKILLs a
  process (exit code 128 + 9 = 137), writes a report to the kernel log, and the runtime
  (containerd: ``internal/cri/server/events.go``, TaskOOM / handleContainerExit) sets the
  container's ``terminated.reason`` to ``OOMKilled``. The kubelet does not kill anything: no
  ``Killing`` event, no ``Evicted`` event, the pod's ``status.reason`` stays empty, and under
  ``restartPolicy: Always`` the container simply restarts (with back-off).
- a **kubelet eviction** (node pressure or a local-storage limit) stops the whole pod: the
  kubelet kills the containers itself (event ``Killing``), the pod goes ``phase: Failed`` with
  ``status.reason: Evicted`` and an ``Evicted`` event (node-pressure evictions also add the
  ``DisruptionTarget`` condition); the kernel log has no OOM report for the container.

A kernel report looks like this (cgroup v1 node, Linux 6.18; each line has the printk
``[seconds since boot]`` prefix)::

    dd invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=999
    ...
    memory: usage 32768kB, limit 32768kB, failcnt 123
    Memory cgroup stats for /…/kubelet-kubepods-burstable-pod<uid>.slice:
    total_shmem 31973376                              (v2: "shmem 31973376")
    Tasks state (memory values in pages):
    oom-kill:constraint=CONSTRAINT_MEMCG,…,oom_memcg=/…pod<uid>.slice,task_memcg=/…/cri-containerd-<id>.scope,task=dd,pid=10152,uid=0
    Memory cgroup out of memory: Killed process 10152 (dd) total-vm:3292kB, anon-rss:1024kB, file-rss:1392kB, shmem-rss:0kB, …, oom_score_adj:999
    [v2 with memory.oom.group=1:]
    Tasks in /…/cri-containerd-<id>.scope are going to be killed due to memory.oom.group set
    Memory cgroup out of memory: Killed process 10151 (sh) …

(format: Linux ``mm/oom_kill.c`` dump_header / dump_oom_victim / __oom_kill_process,
``mm/memcontrol.c`` mem_cgroup_print_oom_meminfo / mem_cgroup_print_oom_group).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# 128 + SIGKILL (9): the exit code of a process the kernel's OOM killer killed ([S2] describe output).
SIGKILL_EXIT_CODE = 137

_PREFIX = re.compile(r"^\[\s*(\d+\.\d+)\]\s?")
_INVOKED = re.compile(r"^(?P<comm>.+?) invoked oom-killer: ")
_OOM_KILL = re.compile(r"^oom-kill:(?P<fields>.*)$")
_KILLED = re.compile(
    r"^(?P<kind>Memory cgroup out of memory|Out of memory|Out of memory \(oom_kill_allocating_task\)): "
    r"Killed process (?P<pid>\d+) \((?P<name>[^)]*)\)(?P<rest>.*)$"
)
_USAGE = re.compile(r"^memory: usage (?P<usage>\d+)kB, limit (?P<limit>\d+)kB")
_STATS_FOR = re.compile(r"^Memory cgroup stats for (?P<cg>.*?):?$")
_STAT = re.compile(r"^(?P<key>[a-z][a-z0-9_]*) (?P<value>\d+)$")
_GROUP = re.compile(r"^Tasks in (?P<cg>\S+) are going to be killed due to memory\.oom\.group set")
_KB = re.compile(r"(?P<key>[a-z-]+):(?P<value>-?\d+)kB")
_ADJ = re.compile(r"oom_score_adj:(?P<value>-?\d+)")
# a runtime container ID at the end of a cgroup path: systemd driver ("cri-containerd-<id>.scope",
# "crio-<id>.scope", "docker-<id>.scope") or cgroupfs driver ("…/<id>")
_CONTAINER_ID = re.compile(r"(?:^|[/-])([0-9a-f]{64})(?:\.scope)?$")


@dataclass(frozen=True)
class KilledTask:
    """A process the kernel killed: its ``pid`` and ``name``; ``anon_rss_kb``, ``file_rss_kb``,
    ``shmem_rss_kb`` are the victim's own memory in KiB, ``oom_score_adj`` its score; ``line`` the
    ``Killed process`` line."""

    pid: int
    name: str
    anon_rss_kb: int | None
    file_rss_kb: int | None
    shmem_rss_kb: int | None
    oom_score_adj: int | None
    line: str


@dataclass
class OomReport:
    """One OOM-killer invocation in the kernel log.

    ``uptime_s``: printk time of the ``invoked oom-killer`` line (seconds since boot, or None
    without timestamps); ``invoker``: the command that invoked it. ``constraint``: ``CONSTRAINT_MEMCG`` when a memory cgroup hit its limit,
    ``CONSTRAINT_NONE`` for the whole machine. ``oom_memcg``: the cgroup that hit its limit (the
    container's or its pod's); ``task_memcg``: the first victim's cgroup; ``container_id``: the
    runtime ID at its end; ``task``, ``pid``: the first victim's name and PID. ``usage_kb``/``limit_kb``: the limited cgroup's usage and limit in KiB.
    ``stats``: that cgroup's memory.stat printed in the report (bytes; v1 ``total_*`` keys are
    hierarchical). ``group``: the cgroup killed as a whole (memory.oom.group), else None.
    ``killed``: every process killed for this invocation; ``lines``: the report's lines.
    """

    uptime_s: float | None
    invoker: str
    constraint: str = ""
    oom_memcg: str = ""
    task_memcg: str = ""
    task: str = ""
    pid: int | None = None
    usage_kb: int | None = None
    limit_kb: int | None = None
    stats: dict[str, int] = field(default_factory=dict)
    group: str | None = None
    killed: list[KilledTask] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)

    @property
    def container_id(self) -> str | None:
        m = _CONTAINER_ID.search(self.task_memcg)
        return m.group(1) if m else None

    @property
    def shmem_bytes(self) -> int | None:
        """tmpfs/shared memory charged to the limited cgroup at the kill (v1 ``total_shmem``,
        v2 ``shmem``), in bytes."""
        if "total_shmem" in self.stats:
            return self.stats["total_shmem"]
        return self.stats.get("shmem")

    @property
    def unaccounted_bytes(self) -> int | None:
        """How much of the usage line the report's own memory.stat does not account for: usage
        minus page cache and anonymous memory (v1 ``total_cache`` + ``total_rss``, v2 ``file`` +
        ``anon``), in bytes; None without both. A few hundred KiB are the memcg's per-CPU charge
        stock and kernel memory; once, on cgroup v1 (kernel 6.18), the statistics of an OOM report
        lagged the charge counter by 11.5 MiB (usage 32,768 KiB, total_cache 19,427,328 B,
        total_rss 1,146,880 B) — the shmem figure of such a report is not the charge at the kill."""
        if self.usage_kb is None:
            return None
        if "total_cache" in self.stats and "total_rss" in self.stats:
            accounted = self.stats["total_cache"] + self.stats["total_rss"]
        elif "file" in self.stats and "anon" in self.stats:
            accounted = self.stats["file"] + self.stats["anon"]
        else:
            return None
        return self.usage_kb * 1024 - accounted

    @property
    def killed_names(self) -> list[str]:
        return sorted({k.name for k in self.killed})

    def summary(self) -> str:
        """The report's key lines (the ``oom-kill:`` record and each ``Killed process``)."""
        keep = [ln for ln in self.lines if ln.startswith(("oom-kill:", "memory: usage", "Tasks in "))
                or "Killed process" in ln or "invoked oom-killer" in ln]
        return "\n".join(keep)


def _strip(line: str) -> tuple[float | None, str]:
    m = _PREFIX.match(line)
    if not m:
        return None, line.rstrip()
    return float(m.group(1)), line[m.end():].rstrip()


def _fields(text: str) -> dict[str, str]:
    out = {}
    for part in text.split(","):
        if "=" in part:
            k, v = part.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def _killed(match: re.Match, line: str) -> KilledTask:
    rest = match.group("rest")
    kb = {m.group("key"): int(m.group("value")) for m in _KB.finditer(rest)}
    adj = _ADJ.search(rest)
    return KilledTask(
        pid=int(match.group("pid")),
        name=match.group("name"),
        anon_rss_kb=kb.get("anon-rss"),
        file_rss_kb=kb.get("file-rss"),
        shmem_rss_kb=kb.get("shmem-rss"),
        oom_score_adj=int(adj.group("value")) if adj else None,
        line=line,
    )


def parse_dmesg(text: str) -> list[OomReport]:
    """Every OOM-killer report in ``text`` (``dmesg`` output), oldest first (see module doc for the format).

    A report starts at ``<comm> invoked oom-killer:``; lines up to the next one belong to it
    (the kernel prints a report under its oom_lock, so reports do not interleave). Unknown lines
    are kept in ``lines`` only.
    """
    reports: list[OomReport] = []
    current: OomReport | None = None
    in_stats = False
    for raw in text.splitlines():
        t, line = _strip(raw)
        m = _INVOKED.match(line)
        if m:
            current = OomReport(uptime_s=t, invoker=m.group("comm"))
            reports.append(current)
            in_stats = False
        if current is None:
            continue
        current.lines.append(line)
        if m:
            continue
        if (u := _USAGE.match(line)) and current.usage_kb is None:
            current.usage_kb, current.limit_kb = int(u.group("usage")), int(u.group("limit"))
        elif _STATS_FOR.match(line):
            in_stats = True
        elif line.startswith("Tasks state"):
            in_stats = False
        elif in_stats and (s := _STAT.match(line)):
            current.stats[s.group("key")] = int(s.group("value"))
        elif o := _OOM_KILL.match(line):
            f = _fields(o.group("fields"))
            current.constraint = f.get("constraint", "")
            current.oom_memcg = f.get("oom_memcg", "")
            current.task_memcg = f.get("task_memcg", "")
            current.task = f.get("task", "")
            current.pid = int(f["pid"]) if f.get("pid", "").isdigit() else None
        elif g := _GROUP.match(line):
            current.group = g.group("cg")
        elif k := _KILLED.match(line):
            current.killed.append(_killed(k, line))
    return reports


def reports_for_container(reports: list[OomReport], container_id: str) -> list[OomReport]:
    """The ones of ``reports`` whose victim cgroup (or oom.group cgroup) is the container ``container_id``
    (a runtime ID, with or without its ``containerd://`` prefix)."""
    cid = container_id.split("://", 1)[-1]
    return [r for r in reports if r.container_id == cid or (r.group or "").rstrip("/").endswith((cid, cid + ".scope"))]


# -- OOM kill or eviction ----------------------------------------------------------------

# Event reasons the kubelet records when *it* ends a pod or container (pkg/kubelet/events:
# KillingContainer = "Killing"; eviction manager: "Evicted"; scheduler preemption: "Preempting").
KUBELET_KILL_EVENTS = ("Killing", "Evicted", "Preempting")


@dataclass
class Termination:
    """How one container run ended, with each sign that tells a kernel OOM kill from a kubelet
    eviction (module doc): of ``container`` (run ``container_id``) of ``pod``, its ``exit_code``,
    ``reason`` and the reasons the API showed in order (``reasons_seen``), the pod's
    ``pod_phase`` and ``pod_reason``, whether it had a ``DisruptionTarget`` condition
    (``disruption_target``), the pod's ``events`` as ``(reason, fieldPath, message)``.
    ``kernel`` is the matching kernel report, None when none was found;
    ``kernel_note`` says why the kernel log could not be read, if it could not."""

    pod: str
    container: str
    container_id: str
    exit_code: int | None
    reason: str
    reasons_seen: list[str]
    pod_phase: str
    pod_reason: str
    disruption_target: bool
    events: list[tuple[str, str, str]]  # (reason, fieldPath, message)
    kernel: OomReport | None
    kernel_note: str = ""

    def eviction_signals(self) -> list[str]:
        """The signs of a kubelet eviction or kubelet-initiated kill present for this pod/container
        (empty for a pure kernel OOM kill)."""
        out = []
        if self.pod_reason == "Evicted":
            out.append("pod status.reason=Evicted")
        if self.disruption_target:
            out.append("condition DisruptionTarget")
        for reason, path, _ in self.events:
            if reason in KUBELET_KILL_EVENTS and (not path or self.container in path):
                out.append(f"event {reason}" + (f" ({path})" if path else ""))
        return sorted(set(out))

    def verdict(self) -> str:
        """``kernel OOM kill``, ``kubelet eviction``, ``neither``, or — when the kernel killed a
        process in the container but its PID 1 ended by itself (cgroup v1, OM-2) — ``kernel OOM
        kill of a process in the container; the container exited <code>``."""
        if self.eviction_signals():
            return "kubelet eviction"
        oom = self.reason == "OOMKilled" or self.kernel is not None
        if oom and self.exit_code == SIGKILL_EXIT_CODE:
            return "kernel OOM kill"
        if oom:
            return f"kernel OOM kill of a process in the container; the container exited {self.exit_code}"
        return "neither"

    def details(self) -> dict:
        """The evidence as plain data (for measurement details)."""
        k = self.kernel
        return {
            "told_apart_as": self.verdict(),
            "container_id": self.container_id,
            "terminated.exitCode": self.exit_code,
            "terminated.reason": self.reason,
            "terminated.reasons_seen_in_order": self.reasons_seen,
            "pod.phase": self.pod_phase,
            "pod.status.reason": self.pod_reason or None,
            "DisruptionTarget": self.disruption_target,
            "pod_events": [f"{r}{' ' + p if p else ''}: {m}" for r, p, m in self.events],
            "eviction_signals": self.eviction_signals(),
            "kernel": None if k is None else {
                "constraint": k.constraint,
                "oom_memcg": k.oom_memcg,
                "task_memcg": k.task_memcg,
                "killed": [f"{t.pid} ({t.name}) anon-rss:{t.anon_rss_kb}kB shmem-rss:{t.shmem_rss_kb}kB oom_score_adj:{t.oom_score_adj}" for t in k.killed],
                "memcg_usage_kb": k.usage_kb,
                "memcg_limit_kb": k.limit_kb,
                "memcg_shmem_bytes": k.shmem_bytes,
                "oom_group": k.group,
            },
            "kernel_note": self.kernel_note or None,
        }

    def table(self) -> str:
        """A text table: each sign, what an OOM kill and an eviction show, what was observed."""
        k = self.kernel
        ev = ", ".join(sorted({r for r, _, _ in self.events})) or "(none)"
        kernel_seen = (
            f"{k.constraint}: killed {', '.join(f'{t.pid} ({t.name})' for t in k.killed)}; oom_memcg …{k.oom_memcg[-60:]}"
            if k else f"(no report for this container{': ' + self.kernel_note if self.kernel_note else ''})"
        )
        rows = [
            ("sign", "kernel OOM kill", "kubelet eviction", "observed"),
            ("container terminated.reason", "OOMKilled (set by the runtime)", "Error/Completed (pod.status.reason=Evicted)",
             f"{self.reason or '(none)'}; seen in order: {' → '.join(self.reasons_seen) or '-'}"),
            ("container exitCode", "137 = 128 + SIGKILL from the kernel", "143 on SIGTERM, 137 after the grace period", str(self.exit_code)),
            ("pod status.reason / phase", "(empty) / Running under Always", "Evicted / Failed", f"{self.pod_reason or '(empty)'} / {self.pod_phase}"),
            ("DisruptionTarget condition", "absent", "present (node-pressure eviction)", "present" if self.disruption_target else "absent"),
            ("events of the pod", "no Killing, no Evicted (BackOff on restart)", "Killing + Evicted", ev),
            ("kernel log (dmesg)", "oom-kill: constraint=CONSTRAINT_MEMCG, task_memcg=<container>", "no OOM report for the container", kernel_seen),
            ("who killed", "the kernel (memory cgroup limit)", "the kubelet (eviction manager)", self.verdict()),
        ]
        widths = [max(len(r[i]) for r in rows) for i in range(3)]
        lines = [f"pod {self.pod}, container {self.container}, run {self.container_id[:12]}"]
        for r in rows:
            lines.append("  ".join(c.ljust(widths[i]) if i < 3 else c for i, c in enumerate(r)))
        return "\n".join(lines)


def pod_events(events: list[dict], pod: str) -> list[tuple[str, str, str]]:
    """``(reason, fieldPath, message)`` of every event about pod ``pod`` among ``events`` (API event dicts)."""
    out = []
    for ev in events:
        inv = ev.get("involvedObject") or {}
        if inv.get("kind") == "Pod" and inv.get("name") == pod:
            out.append((ev.get("reason") or "", inv.get("fieldPath") or "", ev.get("message") or ""))
    return out


def termination(pod_obj: dict, container: str, container_id: str, terminated: dict, reasons_seen: list[str],
                events: list[dict], kernel_reports: list[OomReport] | None, kernel_note: str = "") -> Termination:
    """The :class:`Termination` of the run ``container_id`` of ``container`` of ``pod_obj`` (the
    newest pod dict), from its ``terminated`` state dict, the reasons the API showed for it in
    order (``reasons_seen``), the namespace's ``events`` (API event dicts) and the parsed kernel
    log (``kernel_reports``: :func:`parse_dmesg`; None when it could not be read, ``kernel_note``
    saying why)."""
    status = pod_obj.get("status") or {}
    name = (pod_obj.get("metadata") or {}).get("name", "")
    matched = reports_for_container(kernel_reports, container_id) if kernel_reports is not None else []
    return Termination(
        pod=name,
        container=container,
        container_id=container_id.split("://", 1)[-1],
        exit_code=terminated.get("exitCode"),
        reason=terminated.get("reason") or "",
        reasons_seen=reasons_seen,
        pod_phase=status.get("phase") or "",
        pod_reason=status.get("reason") or "",
        disruption_target=any(c.get("type") == "DisruptionTarget" and c.get("status") == "True"
                              for c in status.get("conditions") or []),
        events=pod_events(events, name),
        kernel=matched[-1] if matched else None,
        kernel_note=kernel_note if kernel_reports is None else ("" if matched else "no report names this container"),
    )
