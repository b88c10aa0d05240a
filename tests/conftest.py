"""Unit tests of the framework itself: no cluster, Docker or network. Shared builders live in
``helpers.py``; this keeps it importable whatever pytest's import mode."""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
pytest_plugins = ["pytester"]
