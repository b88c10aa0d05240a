"""The documented values of every case family, registered in :data:`e2e.expectations.REGISTRY`
when this package is imported (the plugin does)."""

from . import crashloop  # noqa: F401
