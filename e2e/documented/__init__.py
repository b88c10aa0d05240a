"""The documented values of every case family, one module per family (``crashloop``, ...),
registered in :data:`e2e.judge.expectations.REGISTRY` when this package is imported (the plugin
does). Every module of this package is imported: a new family needs no edit here."""

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
