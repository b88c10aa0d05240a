"""The suite's lifecycle-app (``hack/images/lifecycle-app``) in a container log: a follower
that keeps the log while the container runs, and what the app's stamps tell.

The app writes the suite's one stamp shape (:mod:`e2e.evidence.stamps`), one line per fact::

    1764400000.123456 SIGTERM mode=drain pid=1 inflight=0
    1764400000.456789 PROBE path=/readyz status=200 agent="kube-probe/1.37"

Events: START, SIGTERM, SIGINT, DRAIN, SHUTDOWN, EXIT, PROBE, REQUEST, TICK, HOOK (written by
``/app hook`` to PID 1's stdout), ERROR; read them with :func:`e2e.evidence.stamps.first` /
:func:`~e2e.evidence.stamps.last`.

A terminated pod's log disappears with the pod, often within a second of the container's
exit: :class:`LogFollower` streams the log (``follow=true``) from the container's start so
that the lines a container wrote just before it died are kept.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Sequence

from kubernetes import client

from .stamps import Stamp, parse

log = logging.getLogger(__name__)


def probe_hits(events: Sequence[Stamp], path: str) -> list[float]:
    """The times (epoch s) of the kubelet's probe requests to ``path`` (User-Agent ``kube-probe/*``)
    among the app's ``events`` (:meth:`LogFollower.events`)."""
    return [e.at for e in events if e.event == "PROBE" and e.get("path") == path and e.get("agent").startswith("kube-probe/")]


def max_interval(times: Sequence[float]) -> float | None:
    """The longest gap between consecutive ``times`` (s), or None with fewer than two."""
    ts = sorted(times)
    return max((b - a for a, b in zip(ts, ts[1:], strict=False)), default=None)


class LogFollower:
    """Streams the log of ``pod``/``container`` (in ``namespace``, through ``api_client``) in a
    thread from :meth:`start` until the container's log ends (it exited) or :meth:`stop`;
    :attr:`lines` and :meth:`events`.

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
        self._resp: Any = None  # the log stream: urllib3's response (_preload_content=False)
        self._thread: threading.Thread | None = None
        self.ended = threading.Event()

    def start(self) -> "LogFollower":
        """Start following in a thread; returns the follower itself."""
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
        """The log so far, one line per line read."""
        with self._lock:
            return "\n".join(self.lines)

    def events(self) -> list[Stamp]:
        """The app's stamps in the log so far (:func:`e2e.evidence.stamps.parse`)."""
        with self._lock:
            return parse(list(self.lines))
