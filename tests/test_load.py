"""e2e.evidence.load against a local http.server on 127.0.0.1 (no cluster): rate, bounds, modes and
error classes."""

from __future__ import annotations

import socket
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from e2e.evidence.load import LoadGenerator, Request, classify, failure_windows


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive possible
    peers: list[tuple[str, int]] = []

    def log_message(self, *args) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        Handler.peers.append(self.client_address)
        if self.path == "/reset":
            # abortive close: SO_LINGER 0 sends RST instead of FIN
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            return
        if self.path == "/close":
            self.close_connection = True  # FIN without a response
            return
        if self.path == "/slow":
            time.sleep(0.6)
        status = 503 if self.path == "/503" else 200
        body = f"server {status}\n".encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def server():
    Handler.peers = []
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def run(url: str, **kw) -> list[Request]:
    gen = LoadGenerator(url, **kw).start()
    return gen.result().requests


def test_constant_rate_and_time_bound(server):
    reqs = run(server + "/", rate_per_s=20, duration_s=1.0)
    assert 19 <= len(reqs) <= 20
    assert all(r.outcome == "200" and r.ok for r in reqs)
    assert [r.seq for r in reqs] == list(range(len(reqs)))
    gaps = [b.sent_at - a.sent_at for a, b in zip(reqs, reqs[1:], strict=False)]
    assert sum(gaps) / len(gaps) == pytest.approx(0.05, abs=0.01)
    assert reqs[-1].sent_at - reqs[0].sent_at < 1.0
    assert reqs[0].body == "server 200"


def test_count_bound(server):
    reqs = run(server + "/", rate_per_s=50, duration_s=10, max_requests=5)
    assert len(reqs) == 5


def test_slow_server_does_not_slow_the_schedule(server):
    """Requests are sent on schedule while earlier ones are still waiting (no coordinated omission)."""
    reqs = run(server + "/slow", rate_per_s=10, duration_s=1.0, timeout_s=2)
    assert len(reqs) == 10
    assert reqs[-1].sent_at - reqs[0].sent_at < 1.0
    assert all(r.latency_s >= 0.55 and r.outcome == "200" for r in reqs)


def test_status_codes_are_outcomes(server):
    reqs = run(server + "/503", rate_per_s=10, duration_s=0.3)
    assert reqs and all(r.outcome == "503" and r.failed for r in reqs)


def test_refused_on_a_closed_port():
    reqs = run(f"http://127.0.0.1:{closed_port()}/", rate_per_s=10, duration_s=0.3)
    assert reqs and {r.outcome for r in reqs} == {"refused"}
    assert "ConnectError" in reqs[0].error


def test_reset_by_peer(server):
    reqs = run(server + "/reset", rate_per_s=10, duration_s=0.3)
    assert reqs and {r.outcome for r in reqs} == {"reset"}


def test_closed_without_response_is_reset(server):
    reqs = run(server + "/close", rate_per_s=10, duration_s=0.3)
    assert reqs and {r.outcome for r in reqs} == {"reset"}


def test_timeout(server):
    reqs = run(server + "/slow", rate_per_s=5, duration_s=0.2, timeout_s=0.2)
    assert reqs and {r.outcome for r in reqs} == {"timeout"}
    assert all(0.15 < r.latency_s < 0.5 for r in reqs)


def test_other_class():
    assert classify(httpx.UnsupportedProtocol("no")) == "other"
    assert classify(ValueError("x")) == "other"


def test_new_connection_per_request(server):
    run(server + "/", rate_per_s=20, duration_s=0.5)
    assert len(Handler.peers) == 10
    assert len(set(Handler.peers)) == 10


def test_keep_alive_reuses_connections(server):
    run(server + "/", rate_per_s=20, duration_s=0.5, mode="keep-alive")
    assert len(Handler.peers) == 10
    assert len(set(Handler.peers)) < 10


def test_stop_ends_the_run_early(server):
    gen = LoadGenerator(server + "/", rate_per_s=20, duration_s=30).start()
    time.sleep(0.3)
    gen.stop()
    started = time.monotonic()
    res = gen.result()
    assert time.monotonic() - started < 3
    assert 3 <= res.total <= 10
    assert not gen.running


@pytest.mark.parametrize(
    "kw",
    [
        {"url": "http://10.0.0.1:30080/", "rate_per_s": 1, "duration_s": 1},
        {"url": "http://127.0.0.1:30080/", "rate_per_s": 51, "duration_s": 1},
        {"url": "http://127.0.0.1:30080/", "rate_per_s": 1, "duration_s": float("inf")},
        {"url": "http://127.0.0.1:30080/", "rate_per_s": 1, "duration_s": 1, "mode": "pipelined"},
    ],
    ids=["not-loopback", "rate-too-high", "unbounded", "bad-mode"],
)
def test_refuses_unsafe_or_unbounded_runs(kw):
    with pytest.raises(ValueError):
        LoadGenerator(**kw)


def test_summary_and_windows(server):
    gen = LoadGenerator(server + "/", rate_per_s=10, duration_s=0.3).start()
    res = gen.result()
    assert res.by_outcome() == {"200": 3}
    assert res.failures_by_class() == {}
    assert "3 requests" in res.summary() and "0 failed" in res.summary()
    assert "+" in res.to_text(res.started_at)
    fails = [Request(i, t, 0.01, "refused") for i, t in enumerate([10.0, 10.2, 10.5, 13.0])]
    assert failure_windows(fails + [Request(9, 11.0, 0.01, "200")]) == [(10.0, 10.5, 3), (13.0, 13.0, 1)]
