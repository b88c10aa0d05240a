"""The pytest plugin: options, the shared cluster, a namespace + recorder + judge per test,
reports, and cleanup that survives failures, Ctrl-C (also twice) and SIGTERM.

Options (``pytest --help``, group "pod-lifecycle-e2e")::

  --node-image IMG         kind node image of the profile
  --kind-config FILE       kind config of the profile (default: kind-config.yaml)
  --profile-patch FILE     kind config merged over it (repeatable; the offline build's patch)
  --kubeconfig FILE        use an existing cluster instead of kind (with --context)
  --keep-cluster           do not delete the kind cluster at the end
  --keep-namespaces        keep the namespaces of failed tests
  --reports-dir DIR        where measurements.json and artifacts go (default: reports); a run
                           with a cluster also writes junit.xml and allure-results/ there
                           unless --junitxml / --alluredir say otherwise: they replace the last
                           run's only when a test ran, and the run's HTML report is built at
                           its end (e2e.plugin.options.StagedReports)
  --case IDS               only the tests judging these case IDs or families (CL-1,SC-3 / CL)
  --shard I/N              shard I of N of the selection, balanced by durations (e2e.run.shards)

Case IDs are keywords too: ``-k CL-1``, ``-k CL`` select exactly the tests judging them
(:mod:`e2e.run.selection`). ``--collect-only`` and ``--help`` need no cluster and no Docker.

The run id (``E2E_RUN_ID``, made by the first process and inherited by xdist workers) labels
every namespace and measurement. A test runs on the cluster of its profile
(``@pytest.mark.profile("name")``: ``profiles/<name>.yaml`` merged over the kind config and
patches above; ``default`` without the marker). Each profile's cluster is created lazily by the
first test that needs it, under a file lock, shared by every worker, and deleted at the end of
the run (:mod:`~e2e.plugin.runend`, in the controller) by the run that created it.

The plugin is this package (entry point ``pytest11``: ``pod_lifecycle_e2e = "e2e.plugin"``); its
hooks and fixtures live in the modules it names in ``pytest_plugins``, which pytest registers with
it: :mod:`~e2e.plugin.options` (options, markers, run id, reports' defaults),
:mod:`~e2e.plugin.collection` (selection, order), :mod:`~e2e.plugin.clusters` (preflight, one
cluster per profile, release), :mod:`~e2e.plugin.outcomes` (the outcome policy, terminal lines),
:mod:`~e2e.plugin.runend` (the run's end: its steps in order, the only ``pytest_sessionfinish``),
:mod:`~e2e.plugin.fixtures` (``clusters``, ``cluster``, ``host_load``, ``scenario``), :mod:`~e2e.plugin.signals`
(Ctrl-C and SIGTERM stop a run once, with its cleanup).
"""

from __future__ import annotations

from ..base.interrupts import quiet_while_starting

quiet_while_starting()  # until e2e.plugin.signals' pytest_cmdline_main: loading what follows takes seconds

from .. import documented  # noqa: E402,F401  (registers every family's expectations)

# in the order they import each other: pytest imports each one itself, first (assertion rewriting
# warns about a module already imported by a sibling)
pytest_plugins = [
    "e2e.plugin.options",
    "e2e.plugin.signals",
    "e2e.plugin.clusters",
    "e2e.plugin.collection",
    "e2e.plugin.outcomes",
    "e2e.plugin.runend",
    "e2e.plugin.fixtures",
]
