"""Ctrl-C at random moments of a smoke-sized run leaks nothing and still writes reports.

Runs ``pytest scenarios -m smoke`` until N runs were interrupted, on a profile of its own (the default kind config
without its port mappings: a hash of its own, so it never touches another run's cluster) and sends SIGINT at a random
moment of each run: the first half of the runs own their cluster (created by the run, so the
interrupted run must delete it — also when interrupted while creating it); the second half run
with ``--keep-cluster`` on a cluster kept for them (the run must delete its namespaces). After
each run it checks, from outside the suite: no container of a cluster the run owned, no
namespace labelled with the run's id, and ``junit.xml`` written and readable (none when the run
says no test ran: a run interrupted before its first test leaves the last run's reports).

Usage (after ``make e2e`` wrote ``reports/profile.env``; Docker and kind as for the suite):

    set -a; . reports/profile.env; set +a
    .venv/bin/python hack/interrupt_check.py --runs 10 [--seed 1] [--out reports/interrupts.md]

Exit 0 when nothing leaked and every run wrote its reports, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from e2e.cluster.kind import Profile  # noqa: E402
from e2e.cluster.kube import Kube  # noqa: E402

EXIT_TIMEOUT_S = 240  # an interrupted run must be gone (cleanup included) within this


def check_profile(work: Path) -> tuple[Path, Profile]:
    """kind-config.yaml without its port mappings (a profile hash of its own), as a file."""
    config = yaml.safe_load((ROOT / "kind-config.yaml").read_text())
    for node in config.get("nodes", []):
        node.pop("extraPortMappings", None)
    path = work / "kind-config-interrupt-check.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    patches = tuple(Path(p) for p in os.environ.get("E2E_PROFILE_PATCH", "").split(":") if p)
    return path, Profile(path, os.environ["E2E_NODE_IMAGE"], patches)


def containers(prefix: str) -> list[str]:
    out = subprocess.run(["docker", "ps", "-a", "--format", "{{.Names}}"], capture_output=True, text=True, check=True).stdout
    return [n for n in out.split() if n.startswith(prefix + "-")]


NAMESPACE_GONE_S = 60  # a namespace deleted by the run may still be Terminating this long


def namespaces(kubeconfig: Path, run_id: str) -> list[str]:
    """Namespaces labelled with ``run_id`` still there ``NAMESPACE_GONE_S`` after the run ended
    (a deleted one is Terminating for a while; one never deleted stays)."""
    kube = Kube(str(kubeconfig))
    end = time.monotonic() + NAMESPACE_GONE_S
    while (left := kube.namespaces_of_run(run_id)) and time.monotonic() < end:
        time.sleep(2)
    return left


def junit_ok(reports: Path, log: Path) -> str:
    path = reports / "junit.xml"
    if not path.exists():
        # interrupted before its first test: the last run's reports (none here) are left as they were
        return "ok (no test ran)" if "pod-lifecycle-e2e: no test ran" in log.read_text() else "no junit.xml"
    try:
        ET.parse(path)
    except ET.ParseError as e:
        return f"junit.xml unreadable: {e}"
    return "ok"


def one_run(i: int, keep: bool, kind_config: Path, at_s: float, work: Path) -> dict:
    run_id = f"interrupt-{int(time.time())}-{i}"
    reports = work / f"run-{i}"
    cmd = [sys.executable, "-m", "pytest", str(ROOT / "scenarios"), "-m", "smoke", "-p", "no:cacheprovider", "-q",
           "--kind-config", str(kind_config), "--reports-dir", str(reports)] + (["--keep-cluster"] if keep else [])
    env = {**os.environ, "E2E_RUN_ID": run_id}
    started = time.monotonic()
    with open(work / f"run-{i}.log", "w") as log:
        # SIGINT as a terminal delivers it: with its default action, even when this checker runs
        # in the background (where the shell leaves SIGINT ignored, and Python then never raises
        # KeyboardInterrupt)
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        try:
            proc.wait(timeout=at_s)
            interrupted = False  # it finished before the moment came
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGINT)
            interrupted = True
        try:
            code = proc.wait(timeout=EXIT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = "killed (did not exit)"
    return {"run": i, "variant": "--keep-cluster" if keep else "owns its cluster", "sigint_at_s": round(at_s, 1),
            "interrupted": interrupted, "exit": code, "exit_after_s": round(time.monotonic() - started - at_s, 1),
            "run_id": run_id, "reports": junit_ok(reports, work / f"run-{i}.log"), "log": str(work / f"run-{i}.log")}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=10, help="how many runs to interrupt")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--out", default=None, help="write the table (markdown) here too")
    args = p.parse_args(argv)
    if not os.environ.get("E2E_NODE_IMAGE"):
        print("interrupt_check: E2E_NODE_IMAGE is not set (source reports/profile.env first)", file=sys.stderr)
        return 2
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="interrupt-check-"))
    kind_config, profile = check_profile(work)
    kind = os.environ.get("E2E_KIND", "kind")
    name = profile.cluster_name
    if containers(name):
        print(f"interrupt_check: cluster {name} already exists; delete it first", file=sys.stderr)
        return 2
    owned = args.runs - args.runs // 2  # interruptions of runs owning their cluster; the rest kept
    rows: list[dict] = []
    i = 0
    # until --runs runs were really interrupted (one that ended before its moment does not count)
    while sum(r["interrupted"] for r in rows) < args.runs and i < 2 * args.runs:
        i += 1
        keep = sum(r["interrupted"] for r in rows) >= owned
        if keep and not containers(name):  # the kept cluster the --keep-cluster runs find
            subprocess.run([sys.executable, "-m", "pytest", str(ROOT / "scenarios"), "-m", "smoke", "-k", "conditions",
                            "-q", "-p", "no:cacheprovider", "--kind-config", str(kind_config), "--keep-cluster",
                            "--reports-dir", str(work / "keep-setup")], cwd=ROOT, check=True,
                           stdout=subprocess.DEVNULL)
        row = one_run(i, keep, kind_config, rng.uniform(2, 50 if not keep else 30), work)
        if keep:
            kubeconfig = work / "kubeconfig"
            kubeconfig.write_text(subprocess.run([kind, "get", "kubeconfig", "--name", name], capture_output=True,
                                                 text=True, check=True).stdout)
            row["leaked"] = namespaces(kubeconfig, row["run_id"])
        else:
            row["leaked"] = containers(name)
        rows.append(row)
        print(json.dumps(row), flush=True)
    subprocess.run([kind, "delete", "cluster", "--name", name], capture_output=True)
    head = "| run | variant | SIGINT at (s) | interrupted | exit | exit after (s) | leaked | reports |"
    lines = [head, "|" + "---|" * 8]
    for r in rows:
        lines.append(f"| {r['run']} | {r['variant']} | {r['sigint_at_s']} | {r['interrupted']} | {r['exit']} | "
                     f"{r['exit_after_s']} | {', '.join(r['leaked']) or 'none'} | {r['reports']} |")
    # an interrupted run ends with pytest's INTERRUPTED status (2), never as a pass
    bad = [r for r in rows if r["leaked"] or not r["reports"].startswith("ok") or r["exit"] != (2 if r["interrupted"] else 0)]
    lines.append(f"\n{len(rows)} runs, {sum(r['interrupted'] for r in rows)} interrupted, "
                 f"{sum(bool(r['leaked']) for r in rows)} leaked, {len(rows) - sum(r['reports'].startswith('ok') for r in rows)} without reports"
                 f" (work dir {work})")
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
