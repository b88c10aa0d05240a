"""Your own app under the lifecycle contracts (issue 28, issue 41 item 5; docs/your-own-app.md):
a directory of the user's manifests (a Deployment or a StatefulSet + its Service, an optional
PodDisruptionBudget; a HorizontalPodAutoscaler is ignored) and an optional config ``app.yaml``,
read into one :class:`e2e.app.spec.AppSpec`.

``spec.py`` reads and checks the input (bad input stops at once with one message:
:class:`e2e.app.spec.AppInputError`; the plugin turns it into a usage error for ``--app``) and
gives the manifest's facts and the app's objectives with their sources; ``verdicts.py`` says,
for each judged value, what to change in the manifest when it fails, and writes the app's
verdict table. The documented values are ``e2e/documented/app.py`` (AP-1 … AP-7); the contracts
are the tests of ``apps/test_contracts.py`` (``make app APP=dir``)."""
