"""Evidence helpers: what a case family reads besides the recorder's API view — container-written
stamps, the lifecycle-app's log, kernel OOM reports, the node's own view (crictl, /proc, cgroups),
the kubelet's storage view, EndpointSlice conditions, HTTP load, the real kubectl. The core
(:mod:`e2e.run.scenario`, :mod:`e2e.record.recorder`, :mod:`e2e.judge.measurements`) never imports them.

Arguments their functions share:

- ``sc``: the test's :class:`e2e.run.scenario.Scenario` (the ``scenario`` fixture);
- ``changes``: a recording, :class:`e2e.record.recorder.Change` objects oldest first
  (``sc.recorder.changes()``, or of one kind and object: ``sc.recorder.changes("Pod", "web")``);
- ``stamps``: container-written stamps (:class:`e2e.evidence.stamps.Stamp`), in time order;
- ``pod``, ``container``: names in the test's namespace; ``namespace``: the test's (``sc.namespace``);
- ``node``: a node's name (on kind also its container's);
- ``node_exec``: runs a command in the kind node and returns its stdout (``sc.node_exec``);
- ``version``: the node's cgroup version, 1 or 2 (``sc.cgroup``);
- ``api_client``: the Kubernetes client's ``ApiClient`` (``sc.kube.api_client``); ``kube``: the
  cluster's clients (:class:`e2e.cluster.kube.Kube`, ``sc.kube``); ``judge``: the test's
  :class:`e2e.judge.measurements.Judge` (``sc.judge``).

Times called "epoch s" are host time; on kind the nodes share the host's clock.
"""
