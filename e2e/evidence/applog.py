"""The log lines of the suite's lifecycle-app (``hack/images/lifecycle-app``) and a follower
that keeps a container's log while the container runs.

The app writes one line per fact, with its own millisecond wall-clock time::

    <epoch seconds>.<milliseconds> <EVENT> [key=value ...]

for example ``1764400000.123 SIGTERM mode=drain pid=1 inflight=0`` or
``1764400000.456 PROBE path=/readyz status=200 agent="kube-probe/1.37"``. On kind the node
shares the host's kernel clock, so these times compare directly with the test process's
``time.time()`` (CASES.md "Measuring timings honestly"). Events: START, SIGTERM, SIGINT,
DRAIN, SHUTDOWN, EXIT, PROBE, REQUEST, TICK, HOOK (written by ``/app hook`` to PID 1's
stdout), ERROR. Lines of any other shape are ignored.

A terminated pod's log disappears with the pod, often within a second of the container's
exit: :class:`LogFollower` streams the log (``follow=true``) from the container's start so
that the lines a container wrote just before it died are kept.
"""

from __future__ import annotations

import logging
import re
import shlex
import threading
import time
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from kubernetes import client

log = logging.getLogger(__name__)

LINE = re.compile(r"^(?P<sec>\d{9,11})\.(?P<ms>\d{3}) (?P<event>[A-Z]+)(?: (?P<rest>.*))?$")


@dataclass(frozen=True)
class AppEvent:
    """One app log line: ``at`` (epoch s, ms resolution), ``event`` (``SIGTERM``...),
    ``fields`` (its ``key=value`` pairs, quotes removed)."""

    at: float
    event: str
    fields: dict[str, str] = field(default_factory=dict)

    def get(self, key: str, default: str = "") -> str:
        return self.fields.get(key, default)


def parse_line(line: str) -> AppEvent | None:
    """The :class:`AppEvent` of one line, or None for a line of another shape."""
    m = LINE.match(line.rstrip("\r\n"))
    if not m:
        return None
    fields: dict[str, str] = {}
    rest = m.group("rest") or ""
    try:
        tokens = shlex.split(rest)
    except ValueError:
        tokens = rest.split()
    for tok in tokens:
        if "=" in tok:
            k, v = tok.split("=", 1)
            fields[k] = v
    return AppEvent(int(m.group("sec")) + int(m.group("ms")) / 1000, m.group("event"), fields)


def parse(text: str | Iterable[str]) -> list[AppEvent]:
    """Every app event of a log (text or lines), in log order."""
    lines = text.splitlines() if isinstance(text, str) else text
    return [e for e in (parse_line(line) for line in lines) if e is not None]


def first(events: Sequence[AppEvent], event: str, after: float | None = None, **fields: str) -> AppEvent | None:
    """The first ``event`` (at or after ``after``, epoch s) whose fields include ``fields``."""
    for e in events:
        if e.event == event and (after is None or e.at >= after) and all(e.fields.get(k) == v for k, v in fields.items()):
            return e
    return None


def last(events: Sequence[AppEvent], event: str, **fields: str) -> AppEvent | None:
    for e in reversed(events):
        if e.event == event and all(e.fields.get(k) == v for k, v in fields.items()):
            return e
    return None


def probe_hits(events: Sequence[AppEvent], path: str) -> list[float]:
    """Times (epoch s) of the kubelet's probe requests to ``path`` (User-Agent kube-probe/*)."""
    return [e.at for e in events if e.event == "PROBE" and e.get("path") == path and e.get("agent").startswith("kube-probe/")]


def max_interval(times: Sequence[float]) -> float | None:
    """The longest gap between consecutive times (s), or None with fewer than two."""
    ts = sorted(times)
    return max((b - a for a, b in zip(ts, ts[1:])), default=None)


class LogFollower:
    """Streams the log of ``pod``/``container`` in a thread from :meth:`start` until the
    container's log ends (it exited) or :meth:`stop`; :attr:`lines` and :meth:`events`.

    Start it once the container has started (the API refuses logs of a container that was
    never started: the follower then retries every 0.5 s for ``start_timeout_s`` seconds).
    Errors are kept in :attr:`errors`.
    """

    def __init__(self, api_client: client.ApiClient, namespace: str, pod: str, container: str, start_timeout_s: float = 30):
        self.core = client.CoreV1Api(api_client)
        self.namespace, self.pod, self.container = namespace, pod, container
        self.start_timeout_s = start_timeout_s
        self.lines: list[str] = []
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._resp = None
        self._thread: threading.Thread | None = None
        self.ended = threading.Event()

    def start(self) -> "LogFollower":
        self._thread = threading.Thread(target=self._run, name=f"log-{self.pod}-{self.container}", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        deadline = time.monotonic() + self.start_timeout_s
        try:
            while not self._stop.is_set():
                try:
                    self._resp = self.core.read_namespaced_pod_log(
                        self.pod, self.namespace, container=self.container, follow=True, _preload_content=False
                    )
                    break
                except client.exceptions.ApiException as e:
                    if time.monotonic() > deadline:
                        self.errors.append(f"cannot follow {self.pod}/{self.container}: {e.status} {e.reason}")
                        return
                    self._stop.wait(0.5)
            if self._resp is None:
                return
            buf = b""
            for chunk in self._resp.stream(4096, decode_content=False):
                buf += chunk
                *complete, buf = buf.split(b"\n")
                if complete:
                    with self._lock:
                        self.lines.extend(c.decode(errors="replace") for c in complete)
                if self._stop.is_set():
                    break
            if buf:
                with self._lock:
                    self.lines.append(buf.decode(errors="replace"))
        except Exception as e:  # noqa: BLE001 - a closed stream on stop() lands here too
            if not self._stop.is_set():
                self.errors.append(f"{self.pod}/{self.container} log stream: {type(e).__name__}: {e}")
                log.warning("log follower %s/%s: %s", self.pod, self.container, e)
        finally:
            self.ended.set()

    def stop(self, wait_s: float = 2.0) -> None:
        """Stop following (waits up to ``wait_s`` for the stream's end first)."""
        self.ended.wait(wait_s)
        self._stop.set()
        if self._resp is not None:
            try:
                self._resp.close()
            except Exception:  # noqa: BLE001
                pass
        if self._thread is not None:
            self._thread.join(timeout=5)

    def text(self) -> str:
        with self._lock:
            return "\n".join(self.lines)

    def events(self) -> list[AppEvent]:
        with self._lock:
            return parse(list(self.lines))
