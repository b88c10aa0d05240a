"""Evidence helpers: what a case family reads besides the recorder's API view — container-written
stamps, the lifecycle-app's log, kernel OOM reports, the node's own view (crictl, /proc, cgroups),
the kubelet's storage view, EndpointSlice conditions, HTTP load, the real kubectl. The core
(:mod:`e2e.run.scenario`, :mod:`e2e.record.recorder`, :mod:`e2e.judge.measurements`) never imports them."""
