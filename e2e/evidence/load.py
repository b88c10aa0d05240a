"""A constant-rate HTTP load generator (httpx, threads) that records every request.

Used by the traffic scenarios (CASES.md PS-4): requests go to a published port on the
loopback address only (the cluster's NodePort on ``127.0.0.1:<host port>``, DESIGN.md
"host-side traffic"), at a constant rate, bounded in time *and* count, and stop by
themselves. Every request is kept as a :class:`Request`: when it was sent (epoch seconds,
the test process's clock, which on kind is the nodes' clock too), how long it took, and its
outcome: the HTTP status code, or an error class:

- ``refused``: the TCP connection was refused (nothing listens: RST to the SYN);
- ``reset``: the connection was reset or closed by the peer before a full response
  (ECONNRESET, EPIPE, "server disconnected without sending a response");
- ``timeout``: no connection or no response within the request timeout;
- ``other``: anything else (the exception's type and text are kept in ``error``).

Two connection modes (CASES.md PS-4 speaks of "new connections"):

- ``new``: every request opens a new TCP connection and closes it (``Connection: close``,
  no keep-alive pool): what a client behind a fresh DNS lookup or a short-lived job sees;
- ``keep-alive``: one pooled client, connections are reused across requests.

Rate: requests are *scheduled* at ``start + i / rate_per_s`` whatever the previous ones are
doing (a pool of worker threads large enough for ``rate × timeout`` requests in flight), so a
slow or hanging server does not slow the load down (no coordinated omission). The machine
has 2 cores: keep ``rate_per_s`` ≤ :data:`MAX_RATE_PER_S`.
"""

from __future__ import annotations

import errno
import logging
import math
import socket
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Iterable, Sequence
from urllib.parse import urlsplit

import httpx

log = logging.getLogger(__name__)

# Upper bound of the request rate (requests per second) on the suite's 2-core machines.
MAX_RATE_PER_S = 50.0
# Hosts the generator may send to: the loopback range only (published ports).
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")

ERROR_CLASSES = ("refused", "reset", "timeout", "other")
MODES = ("new", "keep-alive")


@dataclass(frozen=True)
class Request:
    """One request: ``seq`` (0, 1, ...), ``sent_at`` (epoch s, test clock), ``latency_s``,
    ``outcome`` (``"200"``, ``"503"``... or an error class), ``error`` (text of the
    exception, empty on a response), ``body`` (first line of the response, ≤ 200 chars)."""

    seq: int
    sent_at: float
    latency_s: float
    outcome: str
    error: str = ""
    body: str = ""

    @property
    def ok(self) -> bool:
        """A 2xx response."""
        return self.outcome.isdigit() and 200 <= int(self.outcome) < 300

    @property
    def failed(self) -> bool:
        return not self.ok

    @property
    def done_at(self) -> float:
        return self.sent_at + self.latency_s


def classify(exc: BaseException) -> str:
    """The error class (``refused``, ``reset``, ``timeout``, ``other``: module doc) of a request
    that raised ``exc``: walks the exception's causes."""
    if isinstance(exc, httpx.TimeoutException):
        return "timeout"
    seen: list[BaseException] = []
    e: BaseException | None = exc
    while e is not None and e not in seen:
        seen.append(e)
        e = e.__cause__ or e.__context__
    for e in seen:
        if isinstance(e, ConnectionRefusedError):
            return "refused"
        if isinstance(e, (ConnectionResetError, BrokenPipeError, ConnectionAbortedError)):
            return "reset"
        if isinstance(e, (socket.timeout, TimeoutError)):
            return "timeout"
        if isinstance(e, OSError) and e.errno in (errno.ECONNREFUSED,):
            return "refused"
        if isinstance(e, OSError) and e.errno in (errno.ECONNRESET, errno.EPIPE, errno.ECONNABORTED):
            return "reset"
    text = " ".join(str(e) for e in seen).lower()
    if isinstance(exc, httpx.ConnectError) and ("refused" in text or "errno 111" in text):
        return "refused"
    if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)) and (
        "disconnected" in text or "reset" in text or "broken pipe" in text or "closed" in text
        or "errno 104" in text or "errno 32" in text or isinstance(exc, (httpx.ReadError, httpx.WriteError))
    ):
        return "reset"
    return "other"


@dataclass
class LoadResult:
    """All ``requests`` of one run (:class:`Request`, in send order), with the run's settings:
    ``url``, ``mode``, ``rate_per_s`` (requests per second), ``started_at`` / ``stopped_at`` (epoch
    s: the schedule's start and end)."""

    url: str
    mode: str
    rate_per_s: float
    started_at: float
    stopped_at: float
    requests: list[Request] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.requests)

    @property
    def failures(self) -> list[Request]:
        return [r for r in self.requests if r.failed]

    def by_outcome(self) -> dict[str, int]:
        """``{"200": 812, "refused": 3, ...}``."""
        return dict(Counter(r.outcome for r in self.requests))

    def failures_by_class(self) -> dict[str, int]:
        """The count of failed requests by outcome (error classes and non-2xx status codes)."""
        return dict(Counter(r.outcome for r in self.failures))

    def between(self, start: float, end: float) -> list[Request]:
        """The requests sent in ``[start, end)`` (epoch s)."""
        return [r for r in self.requests if start <= r.sent_at < end]

    def summary(self) -> str:
        """One line: how many requests, how, to where, over how many seconds; the count of each outcome."""
        outcomes = ", ".join(f"{k}: {v}" for k, v in sorted(self.by_outcome().items()))
        return (f"{self.total} requests ({self.mode} connections, {self.rate_per_s:g}/s) to {self.url} over "
                f"{self.stopped_at - self.started_at:.1f} s; {len(self.failures)} failed; {outcomes}")

    def to_text(self, t0: float) -> str:
        """One line per request (for a report attachment); times relative to ``t0`` (epoch s)."""
        lines = [f"# {self.summary()}", f"# t0 = {t0:.3f}", "seq  sent(s)  latency(ms)  outcome  body/error"]
        for r in self.requests:
            lines.append(f"{r.seq:5d} {r.sent_at - t0:+9.3f} {r.latency_s * 1000:9.1f}  {r.outcome:8} {r.error or r.body}")
        return "\n".join(lines)


class LoadGenerator:
    """Sends GET ``url`` at ``rate_per_s`` for at most ``duration_s`` seconds and
    ``max_requests`` requests, from :meth:`start` until then or :meth:`stop`.

    ``mode`` is ``"new"`` or ``"keep-alive"`` (module doc); ``timeout_s`` bounds each request
    (connect and read). Use as a context manager or ``start()`` … ``stop()``; :meth:`result`
    waits for the requests in flight and returns a :class:`LoadResult`.

    Raises ``ValueError`` for a host outside the loopback range, a rate above
    :data:`MAX_RATE_PER_S`, or an unbounded run.
    """

    def __init__(
        self,
        url: str,
        rate_per_s: float,
        duration_s: float,
        max_requests: int | None = None,
        mode: str = "new",
        timeout_s: float = 1.0,
    ):
        host = urlsplit(url).hostname or ""
        if host not in LOOPBACK_HOSTS and not host.startswith("127."):
            raise ValueError(f"load goes to the loopback range only (published ports), not {host!r}")
        if not 0 < rate_per_s <= MAX_RATE_PER_S:
            raise ValueError(f"rate_per_s must be in (0, {MAX_RATE_PER_S:g}], got {rate_per_s}")
        if not 0 < duration_s < math.inf:
            raise ValueError(f"duration_s must be positive and finite, got {duration_s}")
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        self.url, self.rate_per_s, self.duration_s, self.mode, self.timeout_s = url, rate_per_s, duration_s, mode, timeout_s
        limit = math.ceil(rate_per_s * duration_s)
        self.max_requests = min(max_requests, limit) if max_requests is not None else limit
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._requests: list[Request] = []
        self._thread: threading.Thread | None = None
        # enough workers for every request that may be in flight at once, plus one
        workers = max(2, math.ceil(rate_per_s * (timeout_s + 0.5)) + 1)
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="load")
        self._client = self._make_client()
        self.started_at = 0.0
        self.stopped_at = 0.0

    def _make_client(self) -> httpx.Client:
        timeout = httpx.Timeout(self.timeout_s)
        if self.mode == "new":
            return httpx.Client(timeout=timeout, headers={"Connection": "close"},
                                limits=httpx.Limits(max_keepalive_connections=0, max_connections=None))
        return httpx.Client(timeout=timeout, limits=httpx.Limits(max_keepalive_connections=16, max_connections=None))

    # -- running ---------------------------------------------------------------------------
    def start(self) -> "LoadGenerator":
        """Start sending (a scheduler thread); returns the generator itself."""
        self.started_at = time.time()
        self._thread = threading.Thread(target=self._schedule, name="load-scheduler", daemon=True)
        self._thread.start()
        log.info("load: %s %s at %g/s for ≤ %g s, ≤ %d requests", self.mode, self.url, self.rate_per_s,
                 self.duration_s, self.max_requests)
        return self

    def stop(self) -> None:
        """Stop sending (requests in flight finish or time out)."""
        self._stop.set()

    def __enter__(self) -> "LoadGenerator":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
        self.result()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _schedule(self) -> None:
        start = time.monotonic()
        wall0 = self.started_at
        try:
            for i in range(self.max_requests):
                due = start + i / self.rate_per_s
                if due - start >= self.duration_s:
                    break
                if self._stop.wait(max(0.0, due - time.monotonic())):
                    break
                self._pool.submit(self._one, i, wall0 + (due - start))
        finally:
            self.stopped_at = time.time()

    def _one(self, seq: int, due: float) -> None:
        sent = time.time()
        t = time.monotonic()
        try:
            resp = self._client.get(self.url)
            body = resp.text.splitlines()[0][:200] if resp.text else ""
            req = Request(seq, sent, time.monotonic() - t, str(resp.status_code), body=body)
        except Exception as e:  # noqa: BLE001 - every failure is a recorded outcome
            req = Request(seq, sent, time.monotonic() - t, classify(e), error=f"{type(e).__name__}: {e}"[:300])
        with self._lock:
            self._requests.append(req)

    # -- results ---------------------------------------------------------------------------
    def snapshot(self) -> list[Request]:
        """The requests finished so far, in send order."""
        with self._lock:
            return sorted(self._requests, key=lambda r: r.seq)

    def result(self, wait_s: float | None = None) -> LoadResult:
        """Wait until the schedule ended (at most ``wait_s`` seconds; default: the run's remaining time
        plus one timeout) and the requests in flight finished; returns the :class:`LoadResult`."""
        if self._thread is not None:
            remaining = self.duration_s - (time.time() - self.started_at) if self.started_at else 0
            self._thread.join(wait_s if wait_s is not None else max(0.0, remaining) + self.timeout_s + 5)
        self._pool.shutdown(wait=True)
        self._client.close()
        return LoadResult(self.url, self.mode, self.rate_per_s, self.started_at, self.stopped_at or time.time(),
                          self.snapshot())


def failure_windows(requests: Sequence[Request], gap_s: float = 1.0) -> list[tuple[float, float, int]]:
    """The failed ones of ``requests`` grouped into windows: ``(first sent_at, last sent_at,
    count)`` (epoch s), a new window when two failures are more than ``gap_s`` seconds apart."""
    out: list[tuple[float, float, int]] = []
    for r in sorted((r for r in requests if r.failed), key=lambda r: r.sent_at):
        if out and r.sent_at - out[-1][1] <= gap_s:
            first, _, n = out[-1]
            out[-1] = (first, r.sent_at, n + 1)
        else:
            out.append((r.sent_at, r.sent_at, 1))
    return out


def outcomes(requests: Iterable[Request]) -> dict[str, int]:
    """The count of ``requests`` per outcome: ``{"200": 812, "refused": 3, ...}``."""
    return dict(Counter(r.outcome for r in requests))


def answering_pods(url: str, seen: set[str]) -> set[str]:
    """One request (new connection) to ``url``; adds the answering pod's name — the first word
    of the lifecycle-app's body — to ``seen`` and returns it (to wait until every backend answers)."""
    try:
        r = httpx.get(url, timeout=1.0, headers={"Connection": "close"})
        if r.status_code == 200 and r.text:
            seen.add(r.text.split()[0])
    except httpx.HTTPError:
        pass
    return seen
