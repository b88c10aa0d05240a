"""What a test leaves behind: allure attachments for every scenario and, on failure, an
artifacts folder ``reports/<run-id>/<test>/`` with the same files.

Files: ``timeline.txt`` (the table), ``timeline.png`` (the picture), ``recording.json``
(every recorded change, replayable with ``e2e.recorder.load_changes``), ``pods.yaml``,
``events.txt``, ``measurements.txt`` (the judge's summary), ``recorder-errors.txt`` when a
watch failed, and ``logs/<pod>.<container>[.previous].log``.
"""

from __future__ import annotations

import logging
import re
import tempfile
from pathlib import Path

import allure
import yaml
from kubernetes.client.exceptions import ApiException

from . import picture
from .scenario import Scenario
from .recorder import dump_changes
from .timeline import Row, format_table, rows

log = logging.getLogger(__name__)


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_")[:120]


def _container_logs(sc: Scenario) -> dict[str, str]:
    out = {}
    for pod in sc.kube.pods(sc.namespace):
        name = pod["metadata"]["name"]
        status = pod.get("status") or {}
        for cs in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
            for previous in (False, True):
                if previous and not cs.get("restartCount"):
                    continue
                key = f"{name}.{cs['name']}{'.previous' if previous else ''}.log"
                try:
                    out[key] = sc.kube.logs(sc.namespace, name, cs["name"], previous=previous)
                except ApiException as e:
                    out[key] = f"(no log: {e.status} {e.reason})"
    return out


def gather(sc: Scenario, title: str) -> dict[str, str | bytes]:
    """The scenario's record as ``{file name: content}`` (see module doc).

    Each piece is collected on its own: one that fails (e.g. the cluster went away) is noted
    and the others are still there.
    """
    t0 = sc.t0 or sc.recorder.started_at or 0.0
    changes = sc.recorder.changes()
    files: dict[str, str | bytes] = {}
    table = sorted(rows(changes, t0) + [Row(when - t0, "mark", label) for when, label in sc.marks], key=lambda r: r.t)
    files["timeline.txt"] = f"t0 = {t0:.3f} (epoch s; first manifest applied)\n\n" + format_table(table)
    files["recording.json"] = dump_changes(changes)
    if sc.judge.verdicts or sc.judge.undocumented:
        files["measurements.txt"] = sc.judge.summary()
    if sc.recorder.errors:
        files["recorder-errors.txt"] = "\n".join(sc.recorder.errors)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            png = picture.render(changes, t0, Path(tmp) / "timeline.png", title=title, marks=sc.marks)
            if png is not None:
                files["timeline.png"] = png.read_bytes()
    except Exception as e:  # noqa: BLE001 - the picture is one piece among several
        files["timeline-picture-error.txt"] = f"{type(e).__name__}: {e}"
    try:
        files["pods.yaml"] = yaml.safe_dump_all(sc.kube.pods(sc.namespace), sort_keys=False)
        files["events.txt"] = "\n".join(
            f"{e.get('lastTimestamp') or e.get('eventTime')}  {e.get('type')}  {e.get('reason')}  "
            f"{(e.get('involvedObject') or {}).get('kind')}/{(e.get('involvedObject') or {}).get('name')}: {e.get('message')}"
            for e in sc.kube.events(sc.namespace)
        )
        for key, text in _container_logs(sc).items():
            files[f"logs/{key}"] = text
    except Exception as e:  # noqa: BLE001
        files["collect-error.txt"] = f"reading the namespace failed: {type(e).__name__}: {e}"
    return files


_TYPES = {
    ".png": allure.attachment_type.PNG,
    ".yaml": allure.attachment_type.YAML,
    ".json": allure.attachment_type.JSON,
}


def attach(files: dict[str, str | bytes]) -> None:
    """Attach every file to the running allure test."""
    for name, content in files.items():
        allure.attach(content, name=name, attachment_type=_TYPES.get(Path(name).suffix, allure.attachment_type.TEXT))


def write(files: dict[str, str | bytes], dest: Path) -> None:
    """Write every file under ``dest`` (the artifacts folder of a failed test)."""
    for name, content in files.items():
        path = dest / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    log.info("artifacts in %s", dest)
