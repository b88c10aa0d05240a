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
from pathlib import Path

import allure
import yaml
from kubernetes.client.exceptions import ApiException

from . import picture
from .scenario import Scenario
from .recorder import dump_changes
from .timeline import format_table, rows

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


def collect(sc: Scenario, title: str, dest: Path | None) -> None:
    """Attach the scenario's record to allure; also write it under ``dest`` when given.

    Each piece is collected on its own: one that fails (e.g. the cluster went away) is noted
    and the others are still written.
    """
    t0 = sc.t0 or sc.recorder.started_at or 0.0
    changes = sc.recorder.changes()
    files: dict[str, str | bytes] = {}
    files["timeline.txt"] = f"t0 = {t0:.3f} (epoch s; first manifest applied)\n\n" + format_table(rows(changes, t0))
    files["recording.json"] = dump_changes(changes)
    if sc.judge.verdicts:
        files["measurements.txt"] = sc.judge.summary()
    if sc.recorder.errors:
        files["recorder-errors.txt"] = "\n".join(sc.recorder.errors)
    try:
        png = picture.render(changes, t0, Path(dest or Path("/tmp")) / f".{slug(title)}.png", title=title, marks=sc.marks)
        if png is not None:
            files["timeline.png"] = png.read_bytes()
            if dest is None:
                png.unlink()
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

    for name, content in files.items():
        if name.endswith(".png"):
            allure.attach(content, name=name, attachment_type=allure.attachment_type.PNG)
        elif name.endswith(".yaml"):
            allure.attach(content, name=name, attachment_type=allure.attachment_type.YAML)
        elif name.endswith(".json"):
            allure.attach(content, name=name, attachment_type=allure.attachment_type.JSON)
        else:
            allure.attach(content, name=name, attachment_type=allure.attachment_type.TEXT)
    if dest is not None:
        for name, content in files.items():
            path = dest / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content)
        (dest / f".{slug(title)}.png").unlink(missing_ok=True)
        log.info("artifacts of %s in %s", title, dest)
