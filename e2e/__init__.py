"""pod-lifecycle-e2e: measure Kubernetes pod lifecycle on real kind clusters against the
documented values of docs/cases/CASES.md. The pytest plugin is :mod:`e2e.plugin`.

Writing a case (README, "Write your own case"), what a test uses:

- :class:`e2e.run.scenario.Scenario` — the ``scenario`` fixture: apply, act, wait, read, judge;
  the plugin's other fixtures (``cluster``, ``kubectl``) are in :mod:`e2e.plugin.fixtures`;
- :mod:`e2e.record.pods` — the pod vocabulary and the named waits; :mod:`e2e.record.podstatus`
  (kubectl's READY/STATUS), :mod:`e2e.record.apitime` (API timestamps against host time);
- :mod:`e2e.judge.expectations` — :class:`~e2e.judge.expectations.Expectation`,
  :class:`~e2e.judge.expectations.Band`, :func:`~e2e.judge.expectations.register`;
- :mod:`e2e.evidence` — stamps, logs, kernel OOM reports, the node's view, EndpointSlices, HTTP
  load, the real kubectl;
- :mod:`e2e.faults` — fault injectors (and :mod:`e2e.faults.node` for worker nodes).
"""
