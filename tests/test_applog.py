"""e2e.evidence.applog: the kubelet's probe hits in the lifecycle-app's stamps."""

from __future__ import annotations

from e2e.evidence import applog
from e2e.evidence.stamps import parse

LOG = """\
1795940099.305000 START pid=1 mode=drain listen=:8080 drain_delay=0s host=web
1795940099.619000 PROBE path=/readyz status=200 agent="kube-probe/1.37"
1795940099.700000 PROBE path=/healthz status=200 agent="kube-probe/1.37"
1795940099.835000 PROBE path=/readyz status=200 agent="curl/7.88.1"
not an app line
1795940100.725000 SIGTERM mode=drain pid=1 inflight=1
1795940101.619000 PROBE path=/readyz status=503 agent="kube-probe/1.37"
1795940102.620000 PROBE path=/readyz status=503 agent="kube-probe/1.37"
1795940103.227000 EXIT code=0
"""


def test_probe_hits_are_the_kubelets_only():
    events = parse(LOG)
    # curl's hit is not a kubelet probe
    assert applog.probe_hits(events, "/readyz") == [1795940099.619, 1795940101.619, 1795940102.620]
    assert applog.probe_hits(events, "/startupz") == []


def test_max_interval():
    assert applog.max_interval([3.0, 1.0, 1.5]) == 1.5
    assert applog.max_interval([1.0]) is None
