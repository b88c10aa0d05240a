"""pod-lifecycle-e2e: measure Kubernetes pod lifecycle on real kind clusters against the
documented values of ../shared/CASES.md. The pytest plugin is :mod:`e2e.plugin`."""
