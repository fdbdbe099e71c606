"""No learner HTML is ever live: what the formgrader renders of an autograded notebook, and
the sandbox's feedback page, carry a planted `<script>` only as text.

The formgrader shows a submission through nbconvert's HTMLExporter with nbgrader's
"formgrade" template (its SubmissionHandler); rendered here the same way. The browser
half (tests/grading/test_inert_browser.py) opens the same pages in headless Chromium.
"""

from __future__ import annotations

from html.parser import HTMLParser

import nbformat
import pytest

from grading.course.results import inert, make_inert, page
from grading.judge.grader import Graded
from grading.judge.verdict import CELLS, Outcome

PLANTED = "document.body.setAttribute('data-planted', 'yes')"
LIVE = [
    f"<script>{PLANTED}</script>",
    f'<img src="x" onerror="{PLANTED}">',
    f'<svg onload="{PLANTED}"></svg>',
    f"[click me](javascript:{PLANTED})",
]
INSTRUCTOR = "## Milestone 1\n\nThe instructor's own <b>bold</b> prose stays as written."


def planted_notebook():
    """A submission: the instructor's cell, and a learner's markdown and raw HTML cells."""
    notebook = nbformat.v4.new_notebook()
    answer = "My answer: recency is refreshed on access.\n\n" + "\n\n".join(LIVE)
    raw = nbformat.v4.new_raw_cell("\n".join(LIVE), metadata={"format": "text/html"})
    notebook.cells = [
        nbformat.v4.new_markdown_cell(INSTRUCTOR),
        nbformat.v4.new_markdown_cell(answer),
        raw,
    ]
    return notebook


def formgrade(notebook) -> str:
    """The HTML the formgrader's SubmissionHandler writes for this notebook."""
    from nbconvert.exporters import HTMLExporter
    from nbgrader.server_extensions.formgrader import handlers
    from traitlets.config import Config

    config = Config()
    config.HTMLExporter.template_name = "formgrade"
    config.HTMLExporter.extra_template_basedirs = [handlers.template_path]
    resources = {"assignment_id": "milestones", "notebook_id": "01_recency",
                 "submission_id": "x", "index": 0, "total": 1, "base_url": "",
                 "student": "ana", "last_name": None, "first_name": None,
                 "notebook_path": "autograded/ana/milestones/01_recency.ipynb"}  # fmt: skip
    html, _ = HTMLExporter(config=config).from_notebook_node(notebook, resources=resources)
    return html


class Live(HTMLParser):
    """The planted code a browser would run: in a script, an on* attribute or a link."""

    def __init__(self):
        super().__init__()
        self.found, self.in_script = [], False

    def handle_starttag(self, tag, attrs):
        self.in_script = tag == "script"
        for name, value in attrs:
            if "data-planted" in (value or "") and (name.startswith("on") or name == "href"):
                self.found.append(f"<{tag} {name}>")

    def handle_data(self, data):
        if self.in_script and "data-planted" in data:
            self.found.append("<script>")

    def handle_endtag(self, tag):
        self.in_script = False


def live(html: str) -> list[str]:
    parser = Live()
    parser.feed(html)
    return parser.found


def test_the_formgrader_page_of_an_inert_notebook_runs_no_learner_html():
    notebook = planted_notebook()
    assert live(formgrade(notebook))  # the control: rendered as submitted, it would run
    make_inert(notebook, {INSTRUCTOR})
    html = formgrade(notebook)
    assert live(html) == []
    assert "My answer: recency is refreshed on access." in html
    assert "&lt;script&gt;" in html  # shown to the instructor, as text
    assert "<b>bold</b>" in html  # the instructor's own cell is left alone


@pytest.mark.parametrize("text", LIVE)
def test_inert_markdown_keeps_no_tag_and_no_script_link(text):
    kept = inert(text)
    assert "<" not in kept and "javascript:" not in kept


def test_inert_leaves_plain_markdown_alone():
    text = "# Why\n\n*Recency* is **refreshed**: see `recency_score`.\n\n- one\n- two"
    assert inert(text) == text


def test_raw_html_cells_lose_their_html_format():
    notebook = planted_notebook()
    make_inert(notebook, {INSTRUCTOR})
    assert "format" not in notebook.cells[2].metadata


def test_the_feedback_page_shows_planted_html_as_text():
    cell = CELLS[0]
    graded = Graded(f"ana{LIVE[0]}", [Outcome(cell, 0.0, LIVE[1])], notes=[LIVE[2]])
    written = {"explain_last_access": {"notebook": "01_recency", "score": 1.0, "max": 2.0,
                                       "comment": LIVE[0]}}  # fmt: skip
    html = page(graded, "01_recency", written)
    assert live(html) == [] and "&lt;script&gt;" in html
