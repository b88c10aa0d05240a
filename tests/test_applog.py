"""e2e.evidence.applog: the lifecycle-app's log lines."""

from __future__ import annotations

from e2e.evidence import applog

LOG = """\
1795940099.305 START pid=1 mode=drain listen=:8080 drain_delay=0s host=web
1795940099.619 PROBE path=/readyz status=200 agent="kube-probe/1.37"
1795940099.700 PROBE path=/healthz status=200 agent="kube-probe/1.37"
1795940099.835 PROBE path=/readyz status=200 agent="curl/7.88.1"
not an app line
1795940100.725 SIGTERM mode=drain pid=1 inflight=1
1795940101.619 PROBE path=/readyz status=503 agent="kube-probe/1.37"
1795940102.620 PROBE path=/readyz status=503 agent="kube-probe/1.37"
1795940102.9 TICK
1795940103.227 EXIT code=0
"""


def test_parse_lines_and_fields():
    events = applog.parse(LOG)
    assert [e.event for e in events] == ["START", "PROBE", "PROBE", "PROBE", "SIGTERM", "PROBE", "PROBE", "EXIT"]
    assert events[0].at == 1795940099.305
    assert events[1].fields == {"path": "/readyz", "status": "200", "agent": "kube-probe/1.37"}
    assert applog.parse_line("1795940100.725 TICK") == applog.AppEvent(1795940100.725, "TICK", {})
    assert applog.parse_line("garbage") is None


def test_first_last_and_probe_hits():
    events = applog.parse(LOG)
    assert applog.first(events, "SIGTERM").at == 1795940100.725
    assert applog.first(events, "PROBE", path="/readyz", status="503").at == 1795940101.619
    assert applog.first(events, "PROBE", after=1795940102.0).at == 1795940102.620
    assert applog.last(events, "PROBE").at == 1795940102.620
    assert applog.first(events, "HOOK") is None
    # curl's hit is not a kubelet probe
    assert applog.probe_hits(events, "/readyz") == [1795940099.619, 1795940101.619, 1795940102.620]
    assert applog.max_interval([3.0, 1.0, 1.5]) == 1.5
    assert applog.max_interval([1.0]) is None
