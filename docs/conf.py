"""Sphinx configuration of the suite's site (`make docs`): the pages of docs/ (Markdown, read by
MyST-Parser) and the API reference of e2e/, from its reStructuredText docstrings (autodoc; one page
per module, found by autosummary's recursive walk, so a new or moved module needs no edit here).

Offline: the alabaster theme ships with Sphinx and loads no web font, script or image from
elsewhere; the search is Sphinx's own (an index in the site, read by the browser)."""

project = "pod-lifecycle-e2e"
author = "pod-lifecycle-e2e"
extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns: list[str] = []
templates_path = ["_templates"]

# Markdown: heading anchors (links such as running.md#selecting-by-case), ``:::`` fences
myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence"]

# the API reference: every module of e2e/ (docs/api/: generated, not committed), members in
# source order, nothing imported documented twice
autosummary_generate = True
autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "description"

# strict (`make docs`: -W): a broken link, a missing page, a page in no toctree, and docstring
# markup docutils cannot read (it would show as text, its inline errors as links to nowhere) fail
# the build. Not a type annotation's name that two modules define (ref.python: ``registry:
# Registry`` in e2e.judge.measurements; Sphinx links the first).
suppress_warnings = ["ref.python"]

html_theme = "alabaster"
html_title = project
html_static_path: list[str] = []
html_show_sourcelink = False
# alabaster writes a page's text first and its navigation after it: read as text (lynx -dump, a
# screen reader) a page opens with its own first line
html_sidebars = {"**": ["about.html", "searchbox.html", "navigation.html"]}
html_theme_options = {"sidebar_collapse": True, "show_powered_by": False, "page_width": "1100px",
                      "font_family": "system-ui, sans-serif", "head_font_family": "system-ui, sans-serif",
                      "code_font_family": "monospace"}
