"""Your own app under the lifecycle contracts (issue 28): a directory of the user's manifests
(a Deployment + its Service, an optional PodDisruptionBudget; a HorizontalPodAutoscaler is
ignored) and an optional config ``app.yaml``, read into one :class:`e2e.app.spec.AppSpec`.

``spec.py`` reads and checks the input (bad input stops at once with one message:
:class:`e2e.app.spec.AppInputError`), ``contracts.py`` says per contract (AP-1 … AP-3) what is
measured, the objective it is held to, where that objective comes from, and what to change in
the manifest when it fails. The documented values themselves are registered by
``e2e/documented/app.py``; the tests are ``apps/test_contracts.py`` (``make app APP=dir``)."""
