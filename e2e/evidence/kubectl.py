"""The real ``kubectl``, of the cluster's own version, run with every output line timestamped.

Some documented behaviour lives in kubectl, not in the API server: ``kubectl drain`` cordons,
evicts in parallel and retries a refused eviction every 5 s (CASES-faults.md DR-2),
``kubectl rollout status`` turns ``ProgressDeadlineExceeded`` into an error (DR-4). A scenario
checks those with the kubectl that matches the cluster (kubectl v0.Y.Z is built from the same
tree as Kubernetes 1.Y.Z), talking to the API server through the cluster's kubeconfig
(127.0.0.1, the published API port).

- :func:`kubectl_for` finds that binary: ``$E2E_KUBECTL``, else a copy taken out of the kind
  node (every kind node image carries the kubectl of its Kubernetes at ``/usr/bin/kubectl``),
  cached per version; its ``version --client`` must say the cluster's ``gitVersion``.
- :func:`run` runs a command and keeps each stdout/stderr line with the host time it was read
  (epoch s) — a :class:`Transcript`.
- :func:`server_columns` asks the API server for what ``kubectl get`` prints (its columns —
  READY, STATUS, RESTARTS, AGE… of a pod — computed by the server: server-side printing, a
  ``meta.k8s.io/v1`` ``Table``), with no kubectl binary; :func:`e2e.record.podstatus.pod_columns`
  computes READY and STATUS from any recorded state instead (a port of the same printer).

The ``kubectl`` fixture of :mod:`e2e.plugin.fixtures` gives a test the path of the first.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

from ..cluster.kind import STATE_DIR, Kind

if TYPE_CHECKING:
    from ..run.scenario import Scenario

# Where the node's kubectl is in every kind node image (kind pkg/build/nodeimage installs it there).
NODE_KUBECTL = "/usr/bin/kubectl"
# What kubectl asks for to get its columns from the server (k8s.io/cli-runtime pkg/resource
# helper: as=Table of meta.k8s.io/v1)
TABLE_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io"


class KubectlNotFound(RuntimeError):
    """No kubectl of the cluster's version could be found or taken from the node."""


@dataclass(frozen=True)
class Line:
    """One output line: ``at`` (epoch s, host clock, when the test read it), ``stream``
    (``stdout``/``stderr``) and ``text`` (without the newline)."""

    at: float
    stream: str
    text: str


@dataclass
class Transcript:
    """A finished command: ``args``, ``started_at``/``ended_at`` (epoch s), ``exit_code``
    (``None`` if it was killed at its timeout) and every output line in the order read
    (``lines``: :class:`Line`)."""

    args: list[str]
    started_at: float
    ended_at: float = 0.0
    exit_code: int | None = None
    lines: list[Line] = field(default_factory=list)

    def stdout(self) -> list[Line]:
        """The stdout lines, in the order read."""
        return [ln for ln in self.lines if ln.stream == "stdout"]

    def stderr(self) -> list[Line]:
        """The stderr lines, in the order read."""
        return [ln for ln in self.lines if ln.stream == "stderr"]

    def matching(self, prefix: str, stream: str | None = None) -> list[Line]:
        """Lines starting with ``prefix`` (of ``stream`` only, when given)."""
        return [ln for ln in self.lines if ln.text.startswith(prefix) and (stream is None or ln.stream == stream)]

    def to_text(self, t0: float | None = None) -> str:
        """The transcript as a report shows it: ``+s.mmm stream text`` per line, relative to
        ``t0`` (default: the start)."""
        t0 = self.started_at if t0 is None else t0
        head = f"$ {' '.join(self.args)}\n# started {self.started_at:.3f}, exit code {self.exit_code}"
        body = [f"{ln.at - t0:+9.3f} {ln.stream:6} {ln.text}" for ln in self.lines]
        return "\n".join([head, *body])


def _read(pipe: IO[str], stream: str, out: list[Line], lock: threading.Lock) -> None:
    for raw in iter(pipe.readline, ""):
        at = time.time()
        with lock:
            out.append(Line(at, stream, raw.rstrip("\n")))
    pipe.close()


def run(args: list[str], timeout_s: float, env: dict[str, str] | None = None) -> Transcript:
    """Run ``args`` (no shell), reading stdout and stderr line by line as they come; kill it
    and its process group after ``timeout_s`` seconds (then ``exit_code`` is ``None``). ``env`` is added to the
    environment. Returns the :class:`Transcript`; raises ``FileNotFoundError`` for a missing program."""
    lines: list[Line] = []
    lock = threading.Lock()
    started = time.time()
    # its own process group: a timeout kills whatever it started too (they hold the pipes)
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1,
                            env={**os.environ, **(env or {})}, start_new_session=True)
    readers = [threading.Thread(target=_read, args=(proc.stdout, "stdout", lines, lock), daemon=True),
               threading.Thread(target=_read, args=(proc.stderr, "stderr", lines, lock), daemon=True)]
    for r in readers:
        r.start()
    try:
        code: int | None = proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        code = None
    except BaseException:  # Ctrl-C: the group is not in the terminal's foreground group, stop it here
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    for r in readers:
        r.join(timeout=5)
    with lock:
        ordered = sorted(lines, key=lambda ln: ln.at)
    return Transcript(list(args), started, time.time(), code, ordered)


def client_version(binary: Path) -> str:
    """``gitVersion`` of ``binary version --client`` (e.g. ``v1.37.2``); :class:`KubectlNotFound`
    when that fails."""
    out = subprocess.run([str(binary), "version", "--client", "-o", "json"], capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        raise KubectlNotFound(f"{binary} version --client failed: {out.stderr.strip()}")
    return json.loads(out.stdout)["clientVersion"]["gitVersion"]


def kubectl_for(kubernetes: str, kind: Kind | None, cache_dir: Path = STATE_DIR / "kubectl") -> Path:
    """A kubectl binary whose ``gitVersion`` is ``kubernetes`` (the cluster's, e.g. ``v1.37.2``).

    ``$E2E_KUBECTL`` when set, else ``cache_dir/<version>/kubectl`` copied out of the node of the
    ``kind`` cluster (``docker cp``) on first use. Raises :class:`KubectlNotFound` when none is at hand (a
    ``--kubeconfig`` cluster without ``$E2E_KUBECTL``) or the version differs.
    """
    given = os.environ.get("E2E_KUBECTL")
    if given:
        path = Path(given)
    else:
        path = cache_dir / kubernetes / "kubectl"
        if not path.exists():
            if kind is None:
                raise KubectlNotFound(f"no kubectl {kubernetes}: set E2E_KUBECTL (a --kubeconfig cluster has no kind node to copy it from)")
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_suffix(f".{os.getpid()}.partial")
            kind.copy_from_node(NODE_KUBECTL, partial)
            partial.chmod(0o755)
            partial.replace(path)
    found = client_version(path)
    if found != kubernetes:
        raise KubectlNotFound(f"{path} is kubectl {found}, the cluster is {kubernetes}")
    return path


def table_rows(table: dict) -> list[dict[str, object]]:
    """The rows of ``table``, a ``meta.k8s.io/v1`` ``Table`` (the API's answer to :data:`TABLE_ACCEPT`), each
    as column name → cell (``{"Name": "web", "Ready": "1/1", "Status": "Running", "Restarts": 0,
    …}``: a cell is a string or a number as the server printed it); every column, also those
    ``kubectl get`` shows only with ``-o wide`` (``priority`` > 0). ``ValueError`` for a row whose
    cells do not match the columns."""
    names = [c["name"] for c in table.get("columnDefinitions") or []]
    return [dict(zip(names, row.get("cells") or [], strict=True)) for row in table.get("rows") or []]


def server_columns(sc: "Scenario", kind: str, name: str, api_version: str | None = None) -> dict[str, object]:
    """What ``kubectl get <kind> <name>`` prints for ``kind``/``name`` of the test's namespace
    (``sc``: the test's scenario), computed by the API server now (server-side printing): column
    name → cell, as :func:`table_rows` (a pod's ``Status`` is the STATUS column:
    ``Init:0/2``, ``CrashLoopBackOff``, ``Terminating``…). ``api_version`` only where the kind is
    in several groups. Raises ``kubernetes.dynamic.exceptions.NotFoundError`` when the object
    does not exist."""
    res = sc.kube.resource(kind, api_version)
    table = res.get(name=name, namespace=sc.namespace if res.namespaced else None,
                    header_params={"Accept": TABLE_ACCEPT}).to_dict()
    (row,) = table_rows(table)
    return row
