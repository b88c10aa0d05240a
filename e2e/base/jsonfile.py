"""One JSON file that every process of a run updates: read, change and rewrite it under a file
lock (``<file>.lock``), atomically (a temp file renamed over it), so parallel xdist workers never
lose an update and a reader never sees half a file. Used for ``measurements.json``,
``durations.json`` and the run's count of tests left per profile."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from filelock import FileLock


def read_json(path: Path, empty: Callable[[], Any]) -> Any:
    """The file's JSON document, or ``empty()`` when there is no file."""
    if not path.exists():
        return empty()
    with open(path) as f:
        return json.load(f)


def update_json(path: Path, change: Callable[[Any], Any], empty: Callable[[], Any], **dump: Any) -> Any:
    """Rewrite ``path`` with ``change(document)`` (the document read under the lock, or
    ``empty()`` when there is none); return the new document. ``dump``: ``json.dump`` options.
    The file is readable by everyone (a report)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(f"{path}.lock"):
        data = change(read_json(path, empty))
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.")
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, **dump)
        os.chmod(tmp, 0o644)  # mkstemp makes it private
        os.replace(tmp, path)
    return data
