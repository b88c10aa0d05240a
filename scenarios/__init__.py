"""The scenarios, one package per case family: their helper modules import as packages
(``from .fault_helpers import ...``) and no test module name clashes with one of tests/."""
