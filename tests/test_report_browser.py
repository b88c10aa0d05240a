"""The HTML report in a real browser (e2e.cli.htmlreport): the Allure 3 report of a real run's
``allure-results`` (``tests/data/report-cl``: CL tests of a run on a kind cluster with
Kubernetes v1.37.2, see its README) opened from disk by headless Chromium; the rendered DOM must
show the number of tests by status, the case families, and on the CL-1/CL-2 test's page its
timeline picture and its measured ``restart_gap`` values with their bands and sources.

Screenshots (``report-overview.png``, ``report-cl-test.png``) go to pytest's temporary directory,
never the user's ``reports/`` (which holds only the last run); the test prints where. Skipped
where Chromium (Debian's ``chromium``, installed by ``.ci/run``) or Node.js/npm is missing.
The browser resolves no host name: the report must not need the network.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest

from e2e.cli.htmlreport import generate, have_node

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "data" / "report-cl" / "allure-results"
CHROMIUM = shutil.which("chromium")
CL_TEST = "test_backoff_gaps_and_waiting_state"

pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (apt-get install chromium; .ci/run does)"),
    pytest.mark.skipif(not have_node(), reason="node/npm not installed: the Allure report needs them"),
]

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Dom(HTMLParser):
    """The parts of a rendered page the test reads: text per ``data-testid`` (with its
    descendants' text), every ``<img>``'s attributes, and all text; an ``<iframe srcdoc>``'s
    images and text count as the page's."""

    def __init__(self, html: str):
        super().__init__()
        self.by_testid: dict[str, list[str]] = {}
        self.images: list[dict[str, str]] = []
        self.text: list[str] = []
        self._open: list[tuple[str, list[str] | None]] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attrs = {k: v or "" for k, v in attrs}
        if tag == "img":
            self.images.append(attrs)
        if tag == "iframe" and attrs.get("srcdoc"):  # the test's description is rendered in one
            inner = Dom(attrs["srcdoc"])
            self.images += inner.images
            self.text += inner.text
        if tag in VOID:
            return
        testid = attrs.get("data-testid")
        self._open.append((tag, self.by_testid.setdefault(testid, []) if testid else None))
        if testid:
            self.by_testid[testid].append("")

    def handle_endtag(self, tag):
        while self._open:
            opened, _ = self._open.pop()
            if opened == tag:
                break

    def handle_data(self, data):
        if self._open and self._open[-1][0] in ("script", "style"):
            return
        self.text.append(data)
        for _, texts in self._open:
            if texts is not None:
                texts[-1] += data


def chromium(url: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--host-resolver-rules=MAP * ~NOTFOUND", "--virtual-time-budget=10000", *args, url],
        capture_output=True, text=True, timeout=180, check=True)


def render(url: str, screenshot: Path, size: str) -> Dom:
    """The DOM of ``url`` after its scripts ran, and a screenshot of it."""
    screenshot.parent.mkdir(parents=True, exist_ok=True)
    return Dom(chromium(url, f"--window-size={size}", f"--screenshot={screenshot}", "--dump-dom").stdout)


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory) -> Path:
    """Where the screenshots go: pytest's temporary directory (printed, for a person to look at)."""
    out = tmp_path_factory.mktemp("screenshots")
    print(f"screenshots of the report: {out}")
    return out


def test_screenshots_go_to_pytest_temp_not_reports(screenshots, tmp_path_factory):
    assert screenshots.is_relative_to(tmp_path_factory.getbasetemp())
    assert not screenshots.is_relative_to(HERE.parent / "reports")


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report")
    shutil.copytree(FIXTURE, out / "allure-results")
    return generate(out / "allure-results", out / "allure-report", None, "pod-lifecycle-e2e — browser test")


def fixture_statuses() -> Counter:
    return Counter(json.loads(p.read_text())["status"] for p in FIXTURE.glob("*-result.json"))


def test_overview_counts_tests_by_status_and_groups_by_family(report, screenshots):
    dom = render(report.as_uri(), screenshots / "report-overview.png", "1400,1000")
    counts = {tid.removeprefix("metadata-item-"): int("".join(ch for ch in texts[0] if ch.isdigit()))
              for tid, texts in dom.by_testid.items() if tid.startswith("metadata-item-") and tid != "metadata-item-new"}
    statuses = fixture_statuses()
    assert counts == {"total": sum(statuses.values()), **statuses}
    assert counts["total"] >= 2 and counts["passed"] >= 1
    assert "CL — crash loop back-off" in dom.by_testid["tree-section-title"]
    assert "googletagmanager" not in report.read_text()


def test_cl_test_page_shows_its_timeline_and_restart_gaps(report, screenshots):
    ids = json.loads((report.parent / "test-results.json").read_text())["byId"]
    (test_id,) = [i for i, t in ids.items() if t["name"] == CL_TEST]
    dom = render(f"{report.as_uri()}#/{test_id}", screenshots / "report-cl-test.png", "1400,2400")
    pictures = [img for img in dom.images if img.get("alt") == "timeline.png"]
    assert pictures and pictures[0]["src"].startswith("data:image/png;base64,")
    text = " ".join(dom.text)
    for i in range(4):  # CL-1 judges the first four gaps; each a step with measured and documented values
        assert f"CL-1 restart_gap[{i}] = " in text
    assert "within [" in text and "documented" in text and "source" in text
    assert "pkg/kubelet" in text  # the source of a restart gap band names the upstream file
