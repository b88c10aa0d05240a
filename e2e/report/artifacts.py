"""What a test leaves behind: its files in its folder ``reports/<run-id>/<test>/`` (every test;
a failed one also gets ``failure.txt``), and what the HTML report shows of it (:func:`publish`).

Files: ``timeline.txt`` (the table), ``timeline.png`` (the picture), ``recording.json.gz``
(every recorded change, gzip-compressed, replayable with ``e2e.record.recorder.load_changes``),
``pods.yaml`` (as ``kubectl get -o yaml`` shows them: without ``managedFields``; a pod deleted
before the end in the last state the recorder saw, which its first line says; none without a pod), ``events.txt``,
``measurements.txt`` (the judge's summary), ``recorder-errors.txt`` when a watch failed,
``logs/<pod>.<container>[.previous].log``, and the files the test added (``Scenario.add_file``).

The report is one HTML file that embeds all it shows (base64) and has to open quickly on a laptop
and travel as a CI artifact (a default run: a few MB). So it shows what a reader reads — the
test's docstring, its pictures, every judged value (a step with its status, and a row of the
description with its band, why and source) — and names the test's folder with its files, which
stay beside it: no file is attached.
"""

from __future__ import annotations

import base64
import gzip
import html
import inspect
import logging
import re
import tempfile
import uuid
from collections import Counter
from pathlib import Path

import allure
import pytest
import yaml
from allure_commons import plugin_manager
from kubernetes.client.exceptions import ApiException

from ..pictures import states as picture
from ..base.verdicts import ABSENT_AS_EXPECTED, BUG_PRESENT, FAILING_VERDICTS, FIXED_AS_EXPECTED, PASS, TOLERATED_RACE, UNDOCUMENTED
from ..judge.measurements import Judge, Verdict, known_bug_note, measured
from ..judge.pressure import describe
from ..run.scenario import Scenario
from ..record.recorder import Change, dump_changes
from ..record.timeline import format_table, mark_rows, rows

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


def _as_kubectl_shows(obj: dict) -> dict:
    """``obj`` without ``metadata.managedFields`` (``kubectl get -o yaml`` leaves them out too)."""
    metadata = {k: v for k, v in (obj.get("metadata") or {}).items() if k != "managedFields"}
    return {**obj, "metadata": metadata}


def pods_yaml(pods: list[dict], changes: list[Change]) -> str:
    """``pods.yaml``: the namespace's ``pods`` as ``kubectl get -o yaml`` shows them, then each
    pod recorded in ``changes`` that is gone from it (deleted before the end of the test) in the
    last state the recorder saw, a comment line at the top saying which; ``""`` when there is no pod."""
    listed = {(p.get("metadata") or {}).get("name") for p in pods}
    gone = {c.name: c.obj for c in changes if c.kind == "Pod" and c.name not in listed}
    text = yaml.safe_dump_all([_as_kubectl_shows(p) for p in [*pods, *gone.values()]], sort_keys=False) if pods or gone else ""
    if gone:
        text = (f"# {', '.join(gone)}: deleted before the end of the test, the last state the recorder saw "
                "(a watch event), not kubectl get's\n" + text)
    return text


def gather(sc: Scenario, title: str) -> dict[str, str | bytes]:
    """The scenario's record as ``{file name: content}`` (see module doc).

    Each piece is collected on its own: one that fails (e.g. the cluster went away) is noted
    and the others are still there.
    """
    t0 = sc.t0 or sc.recorder.started_at or 0.0
    changes = sc.recorder.changes()
    files: dict[str, str | bytes] = {name: content() if callable(content) else content for name, content in sc.files.items()}
    table = sorted(rows(changes, t0) + mark_rows(sc.marks, t0), key=lambda r: r.t)
    files["timeline.txt"] = f"t0 = {t0:.3f} (epoch s; first manifest applied)\n\n" + format_table(table)
    files["recording.json.gz"] = gzip.compress(dump_changes(changes).encode(), mtime=0)
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
        pods = pods_yaml(sc.kube.pods(sc.namespace), changes)
        if pods:
            files["pods.yaml"] = pods
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


def publish(judge: Judge, files: dict[str, str | bytes], doc: str | None, folder: str) -> None:
    """What the running allure test shows (see module doc): a step per judged value
    (:func:`judged_steps`) and a description (:func:`description_html`) naming ``folder``."""
    judged_steps(judge)
    allure.dynamic.description_html(description_html(doc or "", files, judge, folder))


# the judged values' table: the report's description frame sets tables to nowrap and max-content
# (a <style> after the table: one before everything else would be dropped by the frame's sanitizer)
_TABLE_STYLE = ("<style>.judged-values{display:table;width:100%;font-size:90%}"
                ".judged-values th,.judged-values td{padding:2px 6px;vertical-align:top;white-space:normal;"
                "overflow-wrap:break-word;text-align:left}.judged-values .why{color:#555;font-size:90%}</style>")


# a reST inline literal of a docstring (``kubectl drain``): shown as code
_LITERAL = re.compile(r"``(.+?)``", re.S)


def size(n: int) -> str:
    """``812 B``, ``12.3 KB``, ``1.4 MB`` (powers of 1000)."""
    if n < 1000:
        return f"{n} B"
    return f"{n / 1000:.1f} KB" if n < 1_000_000 else f"{n / 1_000_000:.1f} MB"


def description_html(text: str, files: dict[str, str | bytes], judge: Judge | None, folder: str) -> str:
    """``text`` (the test's docstring) as paragraphs (its ````literals```` as code), each PNG of
    ``files`` inline (data URI), then a table of ``judge``'s values: per value a row (case and
    name, measured, documented, verdict) and a row with its band (why), a known bug's issue,
    correct value and mechanism, source, versions and the host's CPU pressure, in full; last,
    ``folder`` (the test's, relative to the reports directory) with ``files`` and their sizes."""
    parts = ["<p>" + _LITERAL.sub(r"<code>\1</code>", html.escape(p.strip())) + "</p>"
             for p in re.split(r"\n\s*\n", inspect.cleandoc(text)) if p.strip()]
    for name, content in files.items():
        if name.endswith(".png") and isinstance(content, bytes):
            data = base64.b64encode(content).decode()
            parts.append(f'<figure><img alt="{html.escape(name)}" style="max-width:100%" '
                         f'src="data:image/png;base64,{data}"><figcaption>{html.escape(name)}</figcaption></figure>')
    rows = []
    for v in judge.verdicts if judge else []:
        m, e = v.measurement, v.expectation
        bug = m.details.get("known_bug")
        notes = [("band", e.why), ("reason", m.details.get("reason", "")),
                 ("known bug", known_bug_note(bug, mechanism=True) if bug else ""),
                 ("source", e.source),
                 ("versions", "" if e.versions() == "all versions" else e.versions()),
                 ("host", describe(m.details["host"]) if "host" in m.details else "")]
        rows.append((f"{m.case} {m.name}", measured(m), e.describe(), m.verdict, notes))
    for m in judge.undocumented if judge else []:
        rows.append((f"{m.case} {m.name}", measured(m), "-", m.verdict, [("why", m.why)]))
    if rows:
        out = ['<table class="judged-values">',
               "<tr>" + "".join(f"<th>{h}</th>" for h in ("value", "measured", "documented", "verdict")) + "</tr>"]
        for *row, notes in rows:
            out.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>")
            text = "<br>".join(f"<b>{k}</b>: {html.escape(t)}" for k, t in notes if t)
            out.append(f'<tr><td colspan="4" class="why">{text}</td></tr>')
        parts.append("".join(out) + "</table>" + _TABLE_STYLE)
    listed = ", ".join(f"{html.escape(name)} ({size(len(c if isinstance(c, bytes) else c.encode()))})"
                       for name, c in files.items())
    parts.append(f"<p>The test's files are in its folder <code>{html.escape(folder)}</code> of the reports "
                 f"directory, beside <code>allure-report/</code>: {listed or 'none'}.</p>")
    return "\n".join(parts)


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


def _step(title: str, params: dict[str, str]) -> str:
    """Start an allure step (a child of the running one); ``_stop(uuid, error)`` ends it."""
    step = uuid.uuid4().hex
    plugin_manager.hook.start_step(uuid=step, title=title, params=params)
    return step


def _stop(step: str, error: BaseException | None) -> None:
    plugin_manager.hook.stop_step(uuid=step, exc_type=type(error) if error else None, exc_val=error, exc_tb=None)


class _Flake(Exception):
    """A value set aside as a flake (allure shows it as broken)."""


def _error(v: Verdict) -> BaseException | None:
    """What ends the value's step: nothing (pass, a known bug present or fixed as expected on this
    patch: it holds its documented value), an AssertionError with the explanation (failed, or a
    known bug present although its fix should be in), a skip with the reason (skipped) or a
    :class:`_Flake` (broken)."""
    verdict = v.measurement.verdict
    if verdict in (PASS, BUG_PRESENT, FIXED_AS_EXPECTED, ABSENT_AS_EXPECTED):
        return None
    if verdict in FAILING_VERDICTS:
        return AssertionError(v.explain())
    reason = v.measurement.details.get("reason", "")
    if verdict == TOLERATED_RACE:
        return _Flake(reason)
    return pytest.skip.Exception(f"{verdict}: {reason}" if reason else verdict)


def judged_steps(judge: Judge) -> None:
    """One allure step per judged value of ``judge``, under a step ``judged values: 4 pass,
    1 fail``; each titled ``CL-1 restart_gap[2] = 41 s (expected 20 s within [19, 33] s)``
    with its status from the verdict and, as its one parameter, the reason of a value set aside
    (an ``inconclusive`` value: a skipped step with its reason) or, of a ``bug-present`` value (a
    passed step: it holds its documented value), ``known bug present``: the issue and the correct
    value; band, why, source and the host's CPU pressure are the description's
    (:func:`description_html`). Values with nothing documented for the cluster's version are
    skipped steps with the registry's message (parameter ``why``)."""
    counts = Counter(v.measurement.verdict for v in judge.verdicts)
    counts.update(UNDOCUMENTED for _ in judge.undocumented)
    if not counts:
        return
    title = ", ".join(f"{n} {k}" for k, n in counts.most_common())
    head = _step(f"judged values: {title}", {})
    errors: list[BaseException] = []
    for v in judge.verdicts:
        m, e = v.measurement, v.expectation
        params = {"reason": m.details["reason"]} if "reason" in m.details else {}
        if m.verdict == BUG_PRESENT:
            params["known bug present"] = known_bug_note(m.details["known_bug"])
        step = _step(f"{m.case} {m.name} = {measured(m)} (expected {e.describe()})", params)
        error = _error(v)
        errors.append(error) if error is not None else None
        _stop(step, error)
    for m in judge.undocumented:
        step = _step(f"{m.case} {m.name} = {measured(m)} (nothing documented)", {"why": m.why})
        error = pytest.skip.Exception(f"undocumented: {m.why}")
        errors.append(error)
        _stop(step, error)
    _stop(head, _worst(errors, title))


def _worst(errors: list[BaseException], title: str) -> BaseException | None:
    """The status of the ``judged values`` step: its worst child's — failed over broken (a flake)
    over skipped (inconclusive, undocumented, bug fixed?, set aside) over passed (also a known bug
    present) — so that a green head never holds a value that did not pass."""
    for kind in (AssertionError, _Flake, pytest.skip.Exception):
        if any(isinstance(e, kind) for e in errors):
            return kind(title)
    return None
