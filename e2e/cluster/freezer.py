"""A node frozen from inside (issue 42 item 2): the node-side form of ``docker pause`` (NF-4,
:func:`e2e.faults.node.node_paused`) for a node entered through the node agent.

``docker pause`` freezes every process of a kind node container with the cgroup freezer. Inside a
node the same freezer is at hand, but not for the whole node: the kernel, systemd and journald
must keep running (systemd fires the armed thaw). What is frozen is what ``docker pause`` stops
that matters to Kubernetes: the **kubelet** (the node's Lease and status stop), **containerd and
its shims** (``containerd.service``'s processes: ``KillMode=process`` keeps the shims in its
cgroup) and **every pod's processes** (the kubepods cgroup tree: apps time out instead of
refusing). The node agent's own pod lives under kubepods and its exec goes through the kubelet,
so the freeze cuts the exec channel: it is injected detached and thawed by a timer armed on the
node first (:func:`e2e.cluster.nodeaccess.arm`).

One shell script (:data:`SCRIPT`) in four modes, run in the node (``sh -c SCRIPT sh <mode>``),
picks the node's cgroup version as :func:`e2e.cluster.nodeaccess.cgroup_version` reads it
(``stat -f /sys/fs/cgroup``: ``cgroup2fs`` is v2):

- **cgroup v1** (this machine's nodes: a hybrid layout) — the v1 freezer (kernel
  Documentation/admin-guide/cgroup-v1/freezer-subsystem.rst): writing ``FROZEN`` to a cgroup's
  ``freezer.state`` freezes it and every descendant; a task moved into a frozen cgroup is frozen
  too. systemd does not use the v1 freezer controller, so the kubelet and containerd sit in the
  freezer hierarchy's root, where freezing is not possible; the freeze makes a cgroup of its own,
  :data:`FREEZE_CGROUP`, sets it ``FROZEN`` while empty and moves the processes of
  ``kubelet.service`` and ``containerd.service`` (read from the ``name=systemd`` hierarchy, three
  passes for what forked meanwhile) into it, then freezes the kubepods tree's root. The thaw
  writes ``THAWED`` to kubepods, then to its own cgroup, moves every process back to the root
  (where ``check`` found them) and removes the cgroup. The pods are thawed first so the kubelet
  wakes to running pods.
- **cgroup v2** — ``cgroup.freeze`` (kernel Documentation/admin-guide/cgroup-v2.rst, "Core
  Interface Files"): ``1`` freezes the cgroup and its descendants; written in the units' own
  cgroups (``systemctl show -p ControlGroup``) and kubepods' root. This is the file
  ``systemctl freeze`` writes (systemctl(1), systemd ≥ 246: "freeze … by means of the cgroup
  freezer"); it is written directly because kubepods is no systemd unit under the ``cgroupfs``
  driver. **Untested here**: this machine's nodes are cgroup v1.

kubepods' root is the shallowest directory named ``kubepods`` or ``*kubepods.slice`` (kubelet's
``cgroupfs`` and ``systemd`` drivers; with ``cgroupRoot: /kubelet``, as kind sets it:
``kubelet.slice/kubelet-kubepods.slice``) within three levels of the hierarchy's root.

Modes: ``check`` (exit 0 and one line of what would be frozen, else exit 2 and why: run first,
through the agent), ``freeze``, ``thaw`` (idempotent; exits 1 naming what is still frozen), and
``state`` (a line per cgroup the suite left frozen or in place; none when the node is thawed: the
leftover look of ``make clean`` and ``make interrupt-check``).
"""

from __future__ import annotations

# The v1 freezer cgroup the freeze moves the kubelet's and containerd's processes into (below the
# freezer hierarchy's root; ``make clean`` finds it by its name).
FREEZE_CGROUP = "ple2e-freeze"

SCRIPT = r"""
set -u
mode=$1
units="kubelet containerd"
fail() { echo "$*" >&2; exit 2; }
if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
  v=2; root=/sys/fs/cgroup
else
  v=1; root=/sys/fs/cgroup/freezer
  [ -f "$root/freezer.state" ] || fail "cgroup v1 without a freezer hierarchy at $root"
fi
own="$root/%(name)s"
pods() {
  find "$root" -maxdepth 3 -type d \( -name kubepods -o -name '*kubepods.slice' \) 2>/dev/null |
    awk '{ print length($0), $0 }' | sort -n | cut -d' ' -f2-
}
kp=$(pods | head -n 1)
unit_cgroup() { systemctl show -p ControlGroup --value "$1.service"; }
v1_procs() {
  cg=$(unit_cgroup "$1")
  if [ -n "$cg" ] && [ -f "/sys/fs/cgroup/systemd$cg/cgroup.procs" ]; then cat "/sys/fs/cgroup/systemd$cg/cgroup.procs"; fi
}
state() {
  if [ $v = 1 ]; then
    [ -d "$own" ] && echo "$own $(cat "$own/freezer.state") ($(wc -l < "$own/cgroup.procs") processes)"
    for d in $(pods); do [ "$(cat "$d/freezer.self_freezing")" = 1 ] && echo "$d $(cat "$d/freezer.state")"; done
  else
    for d in $(pods) $(for u in $units; do echo "$root$(unit_cgroup $u)"; done); do
      [ "$(cat "$d/cgroup.freeze" 2>/dev/null)" = 1 ] && echo "$d frozen"
    done
  fi
  true
}
case $mode in
check)
  [ -n "$kp" ] || fail "no kubepods cgroup within 3 levels of $root"
  for u in $units; do
    if [ $v = 1 ]; then
      p=$(v1_procs $u)
      [ -n "$p" ] || fail "$u.service has no processes"
      for i in $p; do
        f=$(sed -n 's/^[0-9]*:freezer://p' /proc/$i/cgroup)
        [ "$f" = / ] || [ -z "$f" ] || fail "process $i of $u.service is in freezer cgroup $f, not the root"
      done
    else
      [ -f "$root$(unit_cgroup $u)/cgroup.freeze" ] || fail "$u.service has no cgroup.freeze at $root$(unit_cgroup $u)"
    fi
  done
  [ -z "$(state)" ] || fail "frozen already: $(state)"
  echo "cgroup v$v: $units and $kp" ;;
freeze)
  [ -n "$kp" ] || fail "no kubepods cgroup within 3 levels of $root"
  if [ $v = 1 ]; then
    mkdir -p "$own" && echo FROZEN > "$own/freezer.state" || exit 1
    for pass in 1 2 3; do
      for u in $units; do for p in $(v1_procs $u); do echo "$p" > "$own/cgroup.procs" 2>/dev/null; done; done
    done
    echo FROZEN > "$kp/freezer.state" || exit 1
  else
    for u in $units; do echo 1 > "$root$(unit_cgroup $u)/cgroup.freeze" || exit 1; done
    echo 1 > "$kp/cgroup.freeze" || exit 1
  fi
  echo "frozen: $(state | tr '\n' ';')" ;;
thaw)
  if [ $v = 1 ]; then
    for d in $(pods); do [ "$(cat "$d/freezer.self_freezing")" = 1 ] && echo THAWED > "$d/freezer.state"; done
    if [ -d "$own" ]; then
      echo THAWED > "$own/freezer.state"
      for pass in 1 2 3 4 5; do
        for p in $(cat "$own/cgroup.procs"); do echo "$p" > "$root/cgroup.procs" 2>/dev/null; done
        [ -z "$(cat "$own/cgroup.procs")" ] && break
      done
      rmdir "$own"
    fi
  else
    for d in $(pods) $(for u in $units; do echo "$root$(unit_cgroup $u)"; done); do
      [ "$(cat "$d/cgroup.freeze" 2>/dev/null)" = 1 ] && echo 0 > "$d/cgroup.freeze"
    done
  fi
  left=$(state)
  [ -z "$left" ] || { echo "still frozen: $left" >&2; exit 1; }
  echo thawed ;;
state) state ;;
*) fail "mode must be check, freeze, thaw or state: $mode" ;;
esac
""".replace("%(name)s", FREEZE_CGROUP)

MODES = ("check", "freeze", "thaw", "state")


def argv(mode: str) -> tuple[str, ...]:
    """The node command of :data:`SCRIPT` in ``mode`` (one of :data:`MODES`); ``ValueError`` for
    another."""
    if mode not in MODES:
        raise ValueError(f"freezer mode must be one of {MODES}, not {mode!r}")
    return ("sh", "-c", SCRIPT, "sh", mode)
