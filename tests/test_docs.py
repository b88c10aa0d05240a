"""The site ``make docs`` builds (issue 43, step 5): README's pages under docs/ and the API
reference of e2e/ as one Sphinx site, strict on its own links, readable offline.

The site is built once per module, as ``make docs`` builds it (the ``sphinx-build`` line of
``make -n docs``), into pytest's temporary directory (~30 s on a quiet 2-core machine)."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from test_api_reference import CHECKED

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["running", "your-own-cluster", "reading-a-report", "comparing-and-upgrading", "profiles-and-concurrency",
         "writing-a-case", "your-own-app", "safety-and-cleanup", "architecture"]


def _build_command(source: Path, out: Path) -> list[str]:
    """``make docs``'s sphinx-build line, its source and output directories replaced."""
    plan = subprocess.run(["make", "-s", "-n", "docs"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    (line,) = [ln for ln in plan.splitlines() if "sphinx-build" in ln]
    args = shlex.split(line)
    assert args[-2:] == ["docs", "build/docs"], line
    return [str(ROOT / args[0]), *args[1:-2], str(source), str(out)]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    source = out.parent / "site-source"
    shutil.copytree(ROOT / "docs", source / "docs", ignore=shutil.ignore_patterns("api"))
    shutil.copy(ROOT / "README.md", source / "README.md")
    done = subprocess.run(_build_command(source / "docs", out), cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return out


class _Links(HTMLParser):
    """A page's links (``href``), scripts and style sheets (``src`` / ``href`` of ``link``), and
    how many list items come before the first text containing ``first``."""

    def __init__(self, page: str, first: str = "\0"):
        super().__init__()
        self.hrefs: list[str] = []
        self.loads: list[str] = []
        self.first, self.items_before, self.found = first, 0, False
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "a" and a.get("href"):
            self.hrefs.append(a["href"])
        if tag in ("script", "img") and a.get("src"):
            self.loads.append(a["src"])
        if tag == "link" and a.get("rel") == "stylesheet":
            self.loads.append(a["href"])
        self.items_before += tag == "li" and not self.found

    def handle_data(self, data):
        self.found = self.found or self.first in data


def test_every_task_page_is_in_the_navigation_of_the_home_page(site):
    links = _Links((site / "index.html").read_text())
    for page in [*PAGES, "reference", "cases/CASES", "cases/CASES-faults", "cases/CASES-workloads"]:
        assert f"{page}.html" in links.hrefs, page
    # README is the home page: its links to docs/<page>.md lead to the pages of the site
    assert "running.html#commands-and-options" in links.hrefs
    assert any(h.endswith("report.png") for h in links.loads)


def test_every_internal_link_of_the_site_leads_to_a_page_and_an_anchor_there(site):
    pages = sorted(site.rglob("*.html"))
    ids = {p: set(re.findall(r'\bid="([^"]+)"', p.read_text())) for p in pages}
    checked = 0
    for page in pages:
        for href in _Links(page.read_text()).hrefs:
            if re.match(r"^[a-z]+:", href):
                continue
            path, _, anchor = href.partition("#")
            target = (page.parent / path).resolve() if path else page
            assert target.is_file(), f"{page.relative_to(site)}: {href}"
            if anchor and target.suffix == ".html":
                assert anchor in ids[target], f"{page.relative_to(site)}: {href}"
            checked += 1
    assert checked > 1000


def test_the_site_loads_nothing_from_elsewhere(site):
    # the machines it is read on may have no network: no web font, script, style sheet or image
    for page in site.rglob("*.html"):
        for load in _Links(page.read_text()).loads:
            assert not re.match(r"^([a-z]+:)?//", load), f"{page.relative_to(site)} loads {load}"
    for css in site.rglob("*.css"):
        assert not re.search(r"url\(\s*['\"]?(https?:)?//", css.read_text()), css.name


def test_the_reference_has_a_page_for_every_checked_module_and_resolves_its_cross_references(site):
    for module in CHECKED:
        assert (site / "api" / f"{module}.html").is_file(), module
    page = (site / "api" / "e2e.run.scenario.html").read_text()
    # a docstring's :class:`~e2e.record.pods.Until` is a link to its entry on the module's page
    assert 'href="e2e.record.pods.html#e2e.record.pods.Until"' in page
    # and the search index knows the pages and the reference
    index = (site / "searchindex.js").read_text()
    assert '"Running and selecting"' in index and "e2e.run.scenario" in index


def test_a_page_read_as_text_opens_with_its_own_text_not_the_navigation(site):
    # issue 41 (7): read as text (lynx -dump, a screen reader) a module's page opened with its ~50
    # navigation entries; the theme (alabaster) writes the navigation after the page's body
    page = (site / "api" / "e2e.faults.core.html").read_text()
    reading = _Links(page, "The fault protocol: inject, yield")
    assert reading.found and reading.items_before == 0
    assert page.count("<li") > 10  # the navigation is there, after it


def test_a_broken_link_or_a_page_in_no_table_of_contents_fails_the_build(tmp_path):
    # the strictness make docs relies on, on the pages alone (no API reference: seconds)
    source = tmp_path / "src"
    shutil.copytree(ROOT / "docs", source / "docs", ignore=shutil.ignore_patterns("api"))
    shutil.copy(ROOT / "README.md", source / "README.md")
    (source / "docs" / "reference.md").write_text("# API reference\n")
    command = _build_command(source / "docs", tmp_path / "out")
    assert subprocess.run(command, cwd=ROOT, capture_output=True, text=True).returncode == 0
    page = source / "docs" / "safety-and-cleanup.md"
    page.write_text(page.read_text() + "\n[x](nowhere.md) [y](running.md#no-such-heading) [z](#no-such-anchor)\n")
    (source / "docs" / "orphan.md").write_text("# A page in no table of contents\n")
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode != 0
    for said in ("'nowhere.md' [myst.xref_missing]", "in doc 'running': 'no-such-heading' [myst.xref_missing]",
                 "'no-such-anchor' [myst.xref_missing]", "orphan.md: WARNING: document isn't included in any toctree"):
        assert said in done.stderr, (said, done.stderr)
