"""e2e.pictures.traffic renders a PS-4 picture from synthetic data (no cluster)."""

from __future__ import annotations

from e2e.pictures import traffic as traffic_picture
from e2e.evidence.endpoints import EndpointState
from e2e.evidence.load import Request


def test_render_png_with_failures_and_markers(tmp_path):
    t0 = 1000.0
    reqs = [Request(i, t0 + i * 0.05, 0.12, "200", body="web-a") for i in range(200)]
    reqs[110] = Request(110, t0 + 5.5, 0.002, "reset", error="RemoteProtocolError")
    reqs[111] = Request(111, t0 + 5.55, 0.001, "refused")
    reqs[112] = Request(112, t0 + 5.6, 1.0, "timeout")
    reqs[113] = Request(113, t0 + 5.65, 0.01, "502")
    states = [
        EndpointState(t0 - 1, "web-a", True, True, False),
        EndpointState(t0 - 1, "web-b", True, True, False),
        EndpointState(t0 + 5.2, "web-a", False, True, True),
        EndpointState(t0 + 6.0, "web-a", False, False, True),
        EndpointState(t0 + 7.0, "web-a", None, None, None, present=False),
        EndpointState(t0 + 7.5, "web-c", True, True, False),
    ]
    pods = [traffic_picture.PodEvents("web-a", delete_at=t0 + 5.0, prestop=(t0 + 5.1, t0 + 5.4), sigterm_at=t0 + 5.4,
                                      exit_at=t0 + 5.45, exit_label="exit 143")]
    png = traffic_picture.render(reqs, states, pods, t0, "PS-4 test picture")
    assert png.startswith(b"\x89PNG")
    assert len(png) > 20_000
    (tmp_path / "traffic.png").write_bytes(png)


def test_bins_and_classes():
    t0 = 0.0
    reqs = [Request(0, 0.1, 0.01, "200"), Request(1, 0.6, 0.01, "refused"), Request(2, 0.7, 0.01, "503")]
    b = traffic_picture.bins(reqs, t0, 0.5)
    assert b["ok"] == {0: 1} and b["refused"] == {1: 1} and b["http-error"] == {1: 1}


def test_render_a_fault_window_without_pod_events(tmp_path):
    """NF scenarios: no pod is deleted; the fault window (inject → undo) is shaded and named."""
    t0 = 1000.0
    reqs = [Request(i, t0 + i * 0.1, 0.01, "200" if not 30 <= i < 60 else "refused") for i in range(100)]
    states = [EndpointState(t0, "web-a", True, True, False), EndpointState(t0 + 3.1, "web-a", False, False, False)]
    plain = traffic_picture.render(reqs, states, [], t0, "NF-2")
    shaded = traffic_picture.render(reqs, states, [], t0, "NF-2", windows=[(t0 + 2.0, t0 + 7.0, "kubelet-stop")])
    assert shaded.startswith(b"\x89PNG") and shaded != plain
    (tmp_path / "traffic.png").write_bytes(shaded)
