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
  (epoch s) — a :class:`Transcript`; :func:`background` runs one beside the test (a
  :class:`Background`: its lines as they come, stopped and reaped when the block ends, also on
  failure and Ctrl-C), and :func:`kubectl_background` runs the cluster's kubectl so, with the
  test's cluster's ``--kubeconfig`` and ``--context`` (:func:`kubectl_flags`: the kind cluster's,
  or the run's own on a ``--kubeconfig`` cluster), its start, end and chosen lines marked on the test's timeline and its
  transcript in the test's report — ``kubectl drain`` racing the test's own eviction.
- :func:`server_columns` asks the API server for what ``kubectl get`` prints (its columns —
  READY, STATUS, RESTARTS, AGE… of a pod — computed by the server: server-side printing, a
  ``meta.k8s.io/v1`` ``Table``), with no kubectl binary; :func:`e2e.record.podstatus.pod_columns`
  computes READY and STATUS from any recorded state instead (a port of the same printer).

The ``kubectl`` fixture of :mod:`e2e.plugin.fixtures` gives a test the path of the first.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Callable, Iterator, cast

from ..cluster.kind import STATE_DIR, Kind
from ..base.waiting import WaitTimeout

if TYPE_CHECKING:
    from ..run.scenario import Scenario

# Where the node's kubectl is in every kind node image (kind pkg/build/nodeimage installs it there).
NODE_KUBECTL = "/usr/bin/kubectl"
# What kubectl asks for to get its columns from the server (k8s.io/cli-runtime pkg/resource
# helper: as=Table of meta.k8s.io/v1)
TABLE_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io"
# Seconds a stopped background command gets after SIGTERM before SIGKILL.
STOP_GRACE_S = 5.0
# Seconds the reader threads get to read what a command wrote before it ended (or was killed).
READER_JOIN_S = 5.0
# Characters of a marked output line shown on the test's picture and timeline.
MARK_TEXT = 80


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
    """A finished command: ``args``, ``started_at``/``ended_at`` (epoch s), ``exit_code`` (``None``
    if the suite killed it: at its timeout, or when the test's block failed; -N when signal N
    ended it otherwise) and every output line in the order read (``lines``: :class:`Line`)."""

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
        head = (f"$ {' '.join(self.args)}\n# started {self.started_at:.3f}, exit code {self.exit_code}; "
                f"times: s after {t0:.3f}")
        body = [f"{ln.at - t0:+9.3f} {ln.stream:6} {ln.text}" for ln in self.lines]
        return "\n".join([head, *body])


def _read(pipe: IO[str], stream: str, out: list[Line], cond: threading.Condition,
          on_line: Callable[[Line], None] | None) -> None:
    for raw in iter(pipe.readline, ""):
        line = Line(time.time(), stream, raw.rstrip("\n"))
        with cond:
            out.append(line)
            cond.notify_all()
        if on_line is not None:
            on_line(line)
    pipe.close()


class Background:
    """A command running beside the test, started by :func:`background` (its context manager
    stops and reaps it). ``args`` the command; ``started_at`` (epoch s) when it was started;
    ``timeout_s`` how long it may run from then (s); ``transcript`` the :class:`Transcript` once it
    has ended (``None`` while it runs). Its stdout and stderr are read line by line as they come,
    each :class:`Line` with the host time it was read (epoch s), by two reader threads.

    ``env`` is added to the environment; ``on_line(line)`` is called from a reader thread with
    each line as it comes (keep it short; :func:`background` marks matching lines with it).
    ``FileNotFoundError`` for a missing program."""

    def __init__(self, args: list[str], timeout_s: float, env: dict[str, str] | None = None,
                 on_line: Callable[[Line], None] | None = None):
        self.args = list(args)
        self.timeout_s = timeout_s
        self.transcript: Transcript | None = None
        self._lines: list[Line] = []
        self._cond = threading.Condition()
        self.started_at = time.time()
        self._deadline = time.monotonic() + timeout_s
        # its own process group: a stop or a kill reaches whatever it started too (they hold the pipes)
        self._proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1,
                                      env={**os.environ, **(env or {})}, start_new_session=True)
        self._readers = [threading.Thread(target=_read, args=(pipe, stream, self._lines, self._cond, on_line),
                                          name=f"background-{stream}", daemon=True)
                         for pipe, stream in ((self._proc.stdout, "stdout"), (self._proc.stderr, "stderr"))]
        for r in self._readers:
            r.start()

    @property
    def pid(self) -> int:
        """The command's PID (also its process group's ID)."""
        return self._proc.pid

    def running(self) -> bool:
        """Whether the command has not ended yet."""
        return self._proc.poll() is None

    def lines(self) -> list[Line]:
        """Every output line read so far (both streams), in the order read."""
        with self._cond:
            return sorted(self._lines, key=lambda ln: ln.at)

    def text(self, t0: float | None = None) -> str:
        """What it printed so far (or in all, once ended) as :meth:`Transcript.to_text` shows it,
        times relative to ``t0`` (epoch s; default: its start)."""
        if self.transcript is not None:
            return self.transcript.to_text(t0)
        return Transcript(self.args, self.started_at, lines=self.lines()).to_text(t0) + "\n# (still running)"

    def wait_for_line(self, pattern: str, timeout_s: float, stream: str | None = None) -> Line:
        """The first line (of ``stream`` only, when given: ``stdout`` or ``stderr``) that the
        regular expression ``pattern`` matches (``re.search``), waiting up to ``timeout_s`` seconds
        for it; an earlier line counts too. :class:`e2e.base.waiting.WaitTimeout` when none came
        in time or the command ended without one (the message says which, with its output)."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout_s

        def found() -> Line | None:
            return next((ln for ln in sorted(self._lines, key=lambda ln: ln.at)
                         if regex.search(ln.text) and (stream is None or ln.stream == stream)), None)

        with self._cond:
            while True:
                line = found()
                if line is not None:
                    return line
                ended = not any(r.is_alive() for r in self._readers)  # both pipes closed: nothing more can come
                left = deadline - time.monotonic()
                if ended or left <= 0:
                    break
                self._cond.wait(min(left, 0.5))
        what = f"a line of `{' '.join(self.args)}` matching {pattern!r}" + (f" on {stream}" if stream else "")
        state = f"it ended (exit code {self._proc.poll()}) without one" if ended else "it is still running"
        raise WaitTimeout(what, timeout_s, observed=f"{state}; its output:\n{self.text()}")

    def wait(self, timeout_s: float | None = None) -> int | None:
        """Wait up to ``timeout_s`` seconds (default: until its own ``timeout_s`` from the start runs
        out) for the command to end; returns its exit code, or ``None`` when it is still running
        (it is left running: :meth:`stop` ends it)."""
        left = self._deadline - time.monotonic() if timeout_s is None else timeout_s
        try:
            return self._proc.wait(timeout=max(left, 0))
        except subprocess.TimeoutExpired:
            return None

    def stop(self, grace_s: float = STOP_GRACE_S) -> Transcript:
        """End the command before its time (a ``kubectl get -w``, a drain no longer needed): SIGTERM
        to its process group, SIGKILL after ``grace_s`` seconds if it still runs; then reap it.
        Returns its :class:`Transcript`, whose ``exit_code`` is what it exited with (-N when
        signal N ended it: -15 for the SIGTERM, as ``subprocess`` says). When it has ended
        already, only returns it."""
        if self.running():
            _signal_group(self._proc.pid, signal.SIGTERM)
            try:
                self._proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                _signal_group(self._proc.pid, signal.SIGKILL)
        return self._finish(self._proc.wait())

    def kill(self) -> Transcript:
        """SIGKILL its process group now if it still runs, reap it; returns its :class:`Transcript`
        (``exit_code`` ``None`` when it was killed here)."""
        code: int | None = self._proc.poll()
        if code is None:
            _signal_group(self._proc.pid, signal.SIGKILL)
            self._proc.wait()
        return self._finish(code)

    def _finish(self, code: int | None) -> Transcript:
        if self.transcript is None:
            for r in self._readers:
                r.join(timeout=READER_JOIN_S)
            self.transcript = Transcript(self.args, self.started_at, time.time(), code, self.lines())
        return self.transcript


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:  # ended meanwhile
        pass


@contextmanager
def background(args: list[str], timeout_s: float, env: dict[str, str] | None = None,
               on_line: Callable[[Line], None] | None = None) -> Iterator[Background]:
    """Run ``args`` (no shell) beside the ``with`` block: yields its :class:`Background` (output
    lines with the time each was read, :meth:`~Background.wait_for_line`,
    :meth:`~Background.stop`); ``env`` and ``on_line`` as there. At the end of the block it waits
    for the command to end within ``timeout_s`` seconds of its start, then kills its process
    group (``exit_code`` ``None``), and reaps it; when the block fails — an error, a failed
    value, Ctrl-C — it is killed at once. Afterwards ``transcript`` holds exit code and lines.
    ``FileNotFoundError`` for a missing program. A test's command: :func:`kubectl_background`."""
    bg = Background(args, timeout_s, env, on_line)
    try:
        yield bg
        bg.wait()
    finally:  # ended: reaped; else killed (its timeout, or the block failed / Ctrl-C)
        bg.kill()


def run(args: list[str], timeout_s: float, env: dict[str, str] | None = None) -> Transcript:
    """Run ``args`` (no shell), reading stdout and stderr line by line as they come; kill it
    and its process group after ``timeout_s`` seconds (then ``exit_code`` is ``None``). ``env`` is added to the
    environment. Returns the :class:`Transcript`; raises ``FileNotFoundError`` for a missing program.
    (:func:`background` runs it beside the test instead.)"""
    with background(args, timeout_s, env) as bg:
        pass
    return cast(Transcript, bg.transcript)


def client_version(binary: Path) -> str:
    """``gitVersion`` of ``binary version --client`` (e.g. ``v1.37.2``); :class:`KubectlNotFound`
    when that fails."""
    out = subprocess.run([str(binary), "version", "--client", "-o", "json"], capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        raise KubectlNotFound(f"{binary} version --client failed: {out.stderr.strip()}")
    return json.loads(out.stdout)["clientVersion"]["gitVersion"]


def kubectl_candidates(kubernetes: str) -> list[Path]:
    """Where a ``--kubeconfig`` run looks for a kubectl of the cluster's version ``kubernetes``
    when ``$E2E_KUBECTL`` is not set: ``kubectl`` on ``PATH``, then the offline build's
    (``$E2E_CACHE``, default ``~/.cache/pod-lifecycle-e2e``, ``offline/kubernetes-<version>-*/kubectl``,
    written by ``make e2e OFFLINE=1`` or ``make offline``); returns those that exist, in that order."""
    cache = Path(os.environ.get("E2E_CACHE") or Path.home() / ".cache" / "pod-lifecycle-e2e")
    on_path = shutil.which("kubectl")
    return [*([Path(on_path)] if on_path else []), *sorted(cache.glob(f"offline/kubernetes-{kubernetes}-*/kubectl"))]


def kubectl_for(kubernetes: str, kind: Kind | None, cache_dir: Path = STATE_DIR / "kubectl",
                candidates: list[Path] | None = None) -> Path:
    """A kubectl binary whose ``gitVersion`` is ``kubernetes`` (the cluster's, e.g. ``v1.37.2``).

    ``$E2E_KUBECTL`` when set, else ``cache_dir/<version>/kubectl`` copied out of the node of the
    ``kind`` cluster (``docker cp``) on first use; with no kind node (a ``--kubeconfig`` cluster)
    the first of ``candidates`` (default :func:`kubectl_candidates`) of that version. Raises
    :class:`KubectlNotFound` when none is at hand (the message names what was tried) or
    ``$E2E_KUBECTL``'s version differs.
    """
    given = os.environ.get("E2E_KUBECTL")
    if given:
        path = Path(given)
    else:
        path = cache_dir / kubernetes / "kubectl"
        if not path.exists():
            if kind is None:
                tried = []
                for candidate in kubectl_candidates(kubernetes) if candidates is None else candidates:
                    try:
                        version = client_version(candidate)
                    except (KubectlNotFound, OSError, subprocess.SubprocessError, ValueError, KeyError) as e:
                        version = f"unreadable ({e})"
                    if version == kubernetes:
                        return candidate
                    tried.append(f"{candidate} is {version}")
                raise KubectlNotFound(f"no kubectl {kubernetes}: set E2E_KUBECTL (a --kubeconfig cluster has no kind node to copy "
                                      f"it from; tried: {'; '.join(tried) or 'no kubectl on PATH or in the offline cache'})")
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


def kubectl_flags(kube) -> list[str]:
    """The flags that point kubectl at the cluster of ``kube`` (:class:`e2e.cluster.kube.Kube`):
    ``["--kubeconfig", PATH]`` and ``["--context", NAME]`` of what the client was made from — the
    kind cluster's kubeconfig, or the run's ``--kubeconfig`` and ``--context`` — each only when set
    (none: kubectl's own default, as the client's)."""
    return (["--kubeconfig", str(kube.kubeconfig)] if kube.kubeconfig else []) + \
        (["--context", kube.context] if kube.context else [])


@contextmanager
def kubectl_background(sc: "Scenario", kubectl: str, *args: str, timeout_s: float, name: str | None = None,
                       mark: str | None = None) -> Iterator[Background]:
    """``kubectl <args>`` beside the ``with`` block, as :func:`background` runs a command (yields
    its :class:`Background`; at the block's end waits for it to end within ``timeout_s`` seconds
    of its start, then kills it; kills it at once when the block fails or on Ctrl-C; reaps it),
    talking to the test's cluster: ``kubectl`` is the ``kubectl`` fixture's binary, and the
    ``--kubeconfig`` (and ``--context``) of the test's client go first. ``sc`` is the test's
    scenario:

    - its start and end are marks on the test's picture and timeline (``kubectl drain started``,
      ``kubectl drain ended (exit code 0)``), and so is each output line that the regular
      expression ``mark`` matches (``re.search``), at the moment it was read, e.g.
      ``mark=r"^evicting pod|evicted$"``;
    - its transcript is the test's report file ``name`` (default ``kubectl <first argument>``),
      each line's time in seconds from the zero of the test's timeline (``t0``).

    A drain racing the test's own eviction::

        with kubectl_background(sc, kubectl, "drain", node, "--pod-selector", "app=web",
                                "--ignore-daemonsets", "--timeout=90s", timeout_s=120) as drain:
            drain.wait_for_line(r"^evicting pod ", 30)      # a Line: .at (epoch s), .stream, .text
            answer = sc.evict("web", grace_period_s=1)
        drain.transcript.exit_code, drain.transcript.stdout()

    ``ValueError`` for no ``args``; ``FileNotFoundError`` when ``kubectl`` does not exist."""
    if not args:
        raise ValueError("kubectl_background needs kubectl's arguments (a verb: drain, get -w…)")
    flags = kubectl_flags(sc.kube)
    label = name or f"kubectl {args[0]}"
    pattern = re.compile(mark) if mark else None

    def on_line(line: Line) -> None:
        if pattern is not None and pattern.search(line.text):
            sc.mark(line.at, f"{label}: {line.text}"[:MARK_TEXT])

    running: list[Background] = []
    try:
        with background([kubectl, *flags, *args], timeout_s, on_line=on_line) as bg:
            running.append(bg)
            sc.mark(bg.started_at, f"{label} started")
            sc.add_file(label, lambda: bg.text(sc.t0 or bg.started_at))  # read when the report is written
            yield bg
    finally:
        for ended in running:
            if ended.transcript is not None:
                sc.mark(ended.transcript.ended_at, f"{label} ended (exit code {ended.transcript.exit_code})")
