"""A planted `<script>` never runs in a page an instructor or a student opens: the
formgrader's page of an autograded notebook and the sandbox's feedback page, each opened
in headless Chromium, which prints the page as it stands after its scripts ran.

Needs a Chromium (Debian's `chromium`, or MEMORY_LAB_CHROMIUM naming one); skipped
without one unless MEMORY_LAB_REQUIRE_BROWSER=1 (CI), as tests/notebooks/test_browser.py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from test_inert import INSTRUCTOR, LIVE, formgrade, planted_notebook

from grading.course.results import make_inert, page
from grading.judge.grader import Graded
from grading.judge.verdict import CELLS, Outcome

# Read at import: the shared fixtures strip MEMORY_LAB_* variables before each test runs.
CHROMIUM = os.environ.get("MEMORY_LAB_CHROMIUM") or shutil.which("chromium")
REQUIRED = os.environ.get("MEMORY_LAB_REQUIRE_BROWSER") == "1"

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def chromium() -> str:
    if CHROMIUM is None:
        if REQUIRED:
            pytest.fail("MEMORY_LAB_REQUIRE_BROWSER=1 but no chromium (apt-get install chromium)")
        pytest.skip("no chromium on PATH and MEMORY_LAB_CHROMIUM is not set")
    return CHROMIUM


def opened(chromium: str, html: str, folder: Path) -> str:
    """The page's DOM in headless Chromium, once its scripts had two seconds to run."""
    path = folder / "page.html"
    path.write_text(html, encoding="utf-8")
    done = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            f"--user-data-dir={folder / 'profile'}",
            "--virtual-time-budget=2000",
            "--dump-dom",
            path.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "<html" in done.stdout, done.stderr[-2000:]
    return done.stdout


def ran(dom: str) -> bool:
    return 'data-planted="yes"' in dom


def test_the_formgrader_page_runs_the_planted_script_only_before_it_is_made_inert(
    chromium, tmp_path
):
    notebook = planted_notebook()
    assert ran(opened(chromium, formgrade(notebook), tmp_path))  # the control: it would run
    make_inert(notebook, {INSTRUCTOR})
    dom = opened(chromium, formgrade(notebook), tmp_path)
    assert not ran(dom) and "My answer: recency is refreshed on access." in dom


def test_the_feedback_page_runs_no_planted_script(chromium, tmp_path):
    graded = Graded(f"ana{LIVE[0]}", [Outcome(CELLS[0], 0.0, LIVE[1])], notes=[LIVE[2]])
    written = {"explain_last_access": {"notebook": "01_recency", "score": 1.0, "max": 2.0,
                                       "comment": LIVE[0]}}  # fmt: skip
    dom = opened(chromium, page(graded, "01_recency", written), tmp_path)
    assert not ran(dom) and "explain_last_access (written answer)" in dom
    bare = f"<!DOCTYPE html><html><body>{LIVE[0]}</body></html>"  # the control
    assert ran(opened(chromium, bare, tmp_path))
