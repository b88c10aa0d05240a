"""``make report``: one HTML page of a run's ``allure-results`` (``python -m e2e.cli.htmlreport REPORTS``).

Every run with a cluster builds it at its end (:func:`build`, from :mod:`e2e.plugin.options`);
``make report`` builds it again, e.g. after installing Node.js.

With Node.js and npm: the Allure 3 report (Awesome plugin, one self-contained
``REPORTS/allure-report/index.html`` that opens from disk). The Allure CLI is pinned by
``hack/report/package.json`` + ``package-lock.json`` and installed with ``npm ci`` into
``~/.cache/pod-lifecycle-e2e/allure/<hash of the lock>`` (``E2E_CACHE`` overrides the cache),
never globally; its configuration is ``hack/report/allurerc.mjs``. The history of earlier runs
(``REPORTS/allure-history.jsonl``, one entry per run: a second ``make report`` of the same
results reads it without adding the run again) gives the trend and each test's previous results.

Without Node.js or npm: ``REPORTS/summary.html``, a plain page written by :mod:`e2e.report.summary`.

Either page shows, in each test's description, its judged values over the last nights against their
bands, from ``REPORTS/values-history.jsonl`` (:mod:`e2e.report.nights`; the run itself records it).

The Awesome template always embeds Google Analytics (plugin-awesome ``generators.js``:
``analyticsEnable: true``); the report is for reading offline and must not call out, so the
tag is removed from the generated page.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ..base.verdicts import FLAKY
from ..report import nights, summary

HERE = Path(__file__).resolve().parents[2] / "hack" / "report"
PACKAGE_FILES = ("package.json", "package-lock.json")
_ANALYTICS = re.compile(
    r'\s*<script async src="https://www\.googletagmanager\.com/[^"]*"></script>\s*<script>.*?</script>', re.S
)


class ReportError(RuntimeError):
    """The report could not be made; the message says why."""


def cache_dir() -> Path:
    base = Path(os.environ.get("E2E_CACHE") or Path.home() / ".cache" / "pod-lifecycle-e2e")
    return base / "allure"


def allure_cli(npm: str = "npm") -> Path:
    """The pinned Allure CLI, installed with ``npm ci`` on first use (see module doc)."""
    lock = (HERE / "package-lock.json").read_bytes()
    dest = cache_dir() / hashlib.sha256(lock).hexdigest()[:16]
    cli = dest / "node_modules" / ".bin" / "allure"
    if cli.exists():
        return cli
    dest.mkdir(parents=True, exist_ok=True)
    for name in PACKAGE_FILES:
        shutil.copy2(HERE / name, dest / name)
    # in a session of its own (as the generate below): a Ctrl-C the run ignores while it finishes
    # does not reach it; a Ctrl-C that stops the caller still ends it (subprocess.run kills it)
    done = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=dest,
                          capture_output=True, text=True, start_new_session=True)
    if done.returncode != 0 or not cli.exists():
        raise ReportError(f"npm ci in {dest} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    return cli


def strip_analytics(html: str) -> str:
    """``html`` without the Awesome template's Google Analytics tag (see module doc)."""
    return _ANALYTICS.sub("", html)


def generate(results: Path, output: Path, history: Path | None, name: str) -> Path:
    """Write the Allure report of ``results`` into ``output``; return its ``index.html``.

    ``history`` (a ``.jsonl`` file, created when missing) gets this run appended; ``None``:
    no history. Raises :class:`ReportError` when ``results`` holds no result or the CLI fails.
    """
    if not any(results.glob("*-result.json")):
        raise ReportError(f"{results}: no allure results (run the scenarios with --alluredir {results})")
    env = {**os.environ, "E2E_REPORT_NAME": name, "E2E_ALLURE_OUTPUT": str(output.resolve())}
    if output.exists():
        shutil.rmtree(output)
    digest = hashlib.sha256("\n".join(sorted(p.name for p in results.glob("*-result.json"))).encode()).hexdigest()
    last = history.with_name(history.name + ".last") if history is not None else None
    with tempfile.TemporaryDirectory() as tmp:
        if history is not None and last is not None:
            # results reported before (their digest in <history>.last) read a copy: no second entry
            if last.exists() and last.read_text().strip() == digest:
                if history.exists():
                    history = Path(shutil.copy2(history, Path(tmp) / history.name))
                else:
                    history = Path(tmp) / history.name
                last = None
            env["E2E_ALLURE_HISTORY"] = str(history.resolve())
        # a session of its own: make interrupt-check's SIGINT to the run's process group in its finish
        # (said and ignored by the run, e2e.plugin.signals) killed it: no HTML report, exit 1
        done = subprocess.run([str(allure_cli()), "generate", "--config", str(HERE / "allurerc.mjs"),
                               str(results.resolve())], env=env, capture_output=True, text=True,
                              start_new_session=True)
    index = output / "index.html"
    if done.returncode != 0 or not index.exists():
        raise ReportError(f"allure generate failed ({done.returncode}): {(done.stderr or done.stdout).strip()[-2000:]}")
    index.write_text(strip_analytics(index.read_text()))
    if last is not None:
        last.write_text(digest + "\n")
    return index


def have_node() -> bool:
    return shutil.which("node") is not None and shutil.which("npm") is not None


def build(reports: Path, results: Path | None = None, name: str | None = None, history: bool = True) -> Path:
    """The HTML page of a run's reports directory ``reports`` (see module doc): the Allure report
    of ``results`` (default ``reports/allure-results``) in ``reports/allure-report/``, or without
    Node.js or npm the plain ``reports/summary.html``; returns the page. Either page of an earlier
    run is removed first, so none is left to pass for this run's, also when this one fails
    (:class:`ReportError` or ``OSError``). ``history``: read and append ``allure-history.jsonl``.
    Each test's values over the last nights (``values-history.jsonl``) are charted at the end of its
    description (:mod:`e2e.report.nights`), in a copy of the results: ``results`` stay as they are."""
    results = results if results is not None else reports / "allure-results"
    name = name or f"pod-lifecycle-e2e — {reports.resolve().name}"
    mark_flaky(results)
    drop_unfinished_teardowns(results)
    shutil.rmtree(reports / "allure-report", ignore_errors=True)
    (reports / "summary.html").unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        shown = nights.with_charts(results, reports, Path(tmp))
        if not have_node():
            return summary.write_html(reports, name, shown)
        return generate(shown, reports / "allure-report", reports / "allure-history.jsonl" if history else None, name)


def _json_files(results: Path, pattern: str) -> Iterator[tuple[Path, dict]]:
    """Each file of ``results`` matching ``pattern`` with its JSON (none when ``results`` is no
    directory; a file that is not JSON is skipped)."""
    for f in results.glob(pattern) if results.is_dir() else []:
        try:
            yield f, json.loads(f.read_text())
        except ValueError:
            continue


def mark_flaky(results: Path) -> int:
    """Give each allure result the plugin tagged ``flaky`` (a test that failed, then passed on a
    rerun: e2e.plugin.outcomes) Allure's own flaky mark, ``statusDetails.flaky`` — allure-pytest
    has no call for it, and without it the report showed the test as a plain pass with a retry.
    In place (a result marked already is left as it is); returns how many were marked. A file that
    is not JSON is left alone."""
    marked = 0
    for f, result in _json_files(results, "*-result.json"):
        tagged = any(label.get("name") == "tag" and label.get("value") == FLAKY for label in result.get("labels", []))
        details = result.get("statusDetails") or {}
        if tagged and not details.get("flaky"):
            result["statusDetails"] = {**details, "flaky": True}
            f.write_text(json.dumps(result))
            marked += 1
    return marked


def drop_unfinished_teardowns(results: Path) -> int:
    """Remove from each allure container the teardowns that never finished — pytest's own
    finalizer of every fixture (a ``lambda`` calling ``pytest_fixture_post_finalizer``, shown as
    ``<fixture>::<lambda>``), which allure-pytest records after it has written the fixture's
    container: no status, no stop, Allure's "unknown", read as something gone wrong. The fixtures'
    own teardowns stay. In place; returns how many were removed. A file that is not JSON is left alone."""
    removed = 0
    for f, container in _json_files(results, "*-container.json"):
        afters = container.get("afters", [])
        finished = [a for a in afters if "status" in a]
        if len(finished) < len(afters):
            container["afters"] = finished
            f.write_text(json.dumps(container))
            removed += len(afters) - len(finished)
    return removed


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m e2e.cli.htmlreport", description=__doc__.splitlines()[0])
    p.add_argument("reports", type=Path, help="the run's reports directory (with allure-results/)")
    p.add_argument("--name", default=None, help="report title (default: pod-lifecycle-e2e — <reports dir>)")
    p.add_argument("--no-history", action="store_true", help="do not read or append REPORTS/allure-history.jsonl")
    args = p.parse_args(argv)
    try:
        page = build(args.reports, name=args.name, history=not args.no_history)
    except (ReportError, OSError) as e:
        print(f"make report: {e}", file=sys.stderr)
        return 1
    print(said(page))
    return 0


def said(page: Path) -> str:
    """What a run or ``make report`` says of the page it built."""
    if page.name == "summary.html":
        return f"node/npm not found: wrote the plain summary page {page} (install Node.js and npm for the Allure report)"
    return f"report: {page}"


if __name__ == "__main__":
    sys.exit(main())
