"""The workbook as a learner uses it: JupyterLab in a real, headless browser.

Each test opens a notebook (01, 03, 08) of a private JupyterLab (jupyter_lab_server.py,
serving a copy of the workbook) in headless Chromium, runs every cell from the Run menu,
checks that no cell failed and that the live figure drew, then moves a slider with the
keyboard as a person would and checks that the figure and its readout follow.

Needs a Chromium (Debian's `chromium` package, or MEMORY_LAB_CHROMIUM naming any
Chromium/Chrome executable) and Playwright from requirements-browser.txt; skipped
otherwise, so a plain `pytest` stays fast without them. With MEMORY_LAB_REQUIRE_BROWSER=1
(CI) a missing browser fails instead. Screenshots of the figures go to a temporary folder
(printed on failure); with MEMORY_LAB_UPDATE_SCREENSHOTS=1 they also replace the pictures
in docs/images/.

Deliberately left out: the sliders of notebooks 06a, 07 and 09 (tests/notebooks/test_notebooks.py
runs every notebook top to bottom), mouse drags (arrow keys move the same handle) and the
numbers themselves (the learner-core tests check those).
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

try:
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import expect, sync_playwright
except ImportError:  # the optional browser requirements are not installed
    sync_playwright = None

from jupyter_lab_server import ROOT, JupyterLab

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# Read at import: the shared fixtures strip MEMORY_LAB_* variables before each test runs.
CHROMIUM = os.environ.get("MEMORY_LAB_CHROMIUM") or shutil.which("chromium")
REQUIRE_BROWSER = os.environ.get("MEMORY_LAB_REQUIRE_BROWSER") == "1"
UPDATE_SCREENSHOTS = os.environ.get("MEMORY_LAB_UPDATE_SCREENSHOTS") == "1"
HOW_TO_ENABLE = (
    "install Debian's chromium (`sudo apt-get install chromium`) and "
    "`pip install -r requirements-browser.txt`, or set MEMORY_LAB_CHROMIUM to a "
    "Chromium/Chrome executable"
)

# Nothing but this machine: Chromium otherwise looks up Google's update, sign-in and autofill
# servers in the background. --no-sandbox: the sandbox refuses to start as root or in many
# containers.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    "--disable-features=AutofillServerCommunication,MediaRouter,OptimizationHints",
    "--disable-sync",
    "--no-pings",
]
VIEWPORT = {"width": 1280, "height": 900}  # the notebook's outputs come out ~1100 px wide
HIDE_TOASTS = ".Toastify { display: none !important; }"  # notifications cover the outputs
KERNEL_READY = 90_000  # ms: page load plus a cold kernel start on a busy 2-core machine
RUN_ALL = 120_000  # ms: every cell of one notebook
REDRAW = 30_000  # ms: one slider move -> kernel -> learner's function -> figure


def missing_browser() -> str | None:
    """Why the browser test cannot run here, or None when it can."""
    if sync_playwright is None:
        return "playwright is not installed"
    if not CHROMIUM:
        return "no `chromium` on PATH and MEMORY_LAB_CHROMIUM is not set"
    if not Path(CHROMIUM).is_file():
        return f"MEMORY_LAB_CHROMIUM={CHROMIUM!r} is not a file"
    return None


@pytest.fixture(scope="module")
def browser():
    reason = missing_browser()
    if reason:
        message = f"browser test skipped ({reason}): {HOW_TO_ENABLE}"
        if REQUIRE_BROWSER:
            pytest.fail(message.replace("skipped", "required but cannot run"), pytrace=False)
        pytest.skip(message)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="module")
def lab(browser, tmp_path_factory):
    with JupyterLab(tmp_path_factory.mktemp("lab")) as server:
        yield server


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("screenshots")


@pytest.fixture
def page(browser, lab):
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(REDRAW)  # clicks and key presses on a busy machine
    expect.set_options(timeout=REDRAW)
    try:
        yield context.new_page()
    finally:
        context.close()
        lab.shutdown_kernels()  # closing the tab leaves the kernel running


@contextmanager
def screenshot_on_failure(page, path: Path, lab: JupyterLab):
    """Turn any failure inside the block into one that names a screenshot of the page."""
    try:
        yield
    except Exception as error:  # an assertion, or a Playwright timeout
        try:
            page.screenshot(path=path)
            shot = f"screenshot of the page: {path}"
        except PlaywrightError as shot_error:
            shot = f"no screenshot could be taken: {shot_error}"
        pytest.fail(f"{error}\n\n{shot}\n\n{lab.log_tail(2000)}")


# ---- what a learner does ---------------------------------------------------------------


def open_notebook(page, lab: JupyterLab, path: str) -> None:
    """Open the notebook with a fresh layout, hide the file browser, wait for the kernel."""
    page.goto(lab.url(path))
    page.add_style_tag(content=HIDE_TOASTS)
    # subtle: the status reads "idle" also while there is no kernel yet ("No Kernel"), and
    # Run All then asks which kernel to start; wait for the notebook's own kernel.
    kernel_name = page.locator(".jp-NotebookPanel-toolbar .jp-KernelName")
    expect(kernel_name).to_have_text(re.compile(r"^Python 3"), timeout=KERNEL_READY)
    expect(kernel_status(page)).to_have_attribute("data-status", "idle", timeout=KERNEL_READY)
    page.keyboard.press("Control+b")  # more room for the outputs
    expect(page.locator("#filebrowser")).to_be_hidden()


def kernel_status(page):
    return page.locator(".jp-NotebookPanel-toolbar .jp-Notebook-ExecutionIndicator")


def run_all_cells(page) -> None:
    """Run > Run All Cells; wait until every code cell ran, or one failed and stopped the run.

    Fails with the error's text when a cell raised or wrote to stderr, or a widget failed.
    """
    page.locator(".lm-MenuBar-itemLabel").get_by_text("Run", exact=True).click()
    page.locator(".lm-Menu-itemLabel").get_by_text("Run All Cells", exact=True).click()
    prompts = page.locator(".jp-CodeCell .jp-InputPrompt")
    busy = prompts.filter(has_text="[*]")
    ran = prompts.filter(has_text=re.compile(r"\[\d+\]"))
    total = prompts.count()
    deadline = time.monotonic() + RUN_ALL / 1000
    # Done when nothing is busy and either every cell ran or one failed (Run All stops there).
    while busy.count() or (ran.count() < total and not stderr_outputs(page).count()):
        if time.monotonic() > deadline:
            raise AssertionError(
                f"Run All did not finish within {RUN_ALL / 1000:.0f} s: "
                f"{ran.count()} of {total} code cells ran, {busy.count()} still busy"
            )
        time.sleep(0.25)  # polling interval
    assert_no_error_output(page)
    expect(kernel_status(page)).to_have_attribute("data-status", "idle", timeout=RUN_ALL)
    assert ran.count() == total, f"only {ran.count()} of {total} code cells ran"


def stderr_outputs(page):
    """Tracebacks and anything written to stderr (JupyterLab shows both as stderr)."""
    return page.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')


def assert_no_error_output(page) -> None:
    """No traceback, nothing on stderr, no widget that failed to display."""
    texts = [shorten(text) for text in stderr_outputs(page).all_inner_texts()]
    assert not texts, "a cell raised an error or wrote to stderr:\n" + "\n---\n".join(texts)
    outputs = "\n".join(page.locator(".jp-OutputArea-output").all_inner_texts())
    assert "Error displaying widget" not in outputs, f"a widget failed to display:\n{outputs}"


def shorten(text: str, keep: int = 1200) -> str:
    """A traceback's start (which cell) and end (which error), without the middle."""
    return text if len(text) <= 2 * keep else f"{text[:keep]}\n[...]\n{text[-keep:]}"


def explorer(page, title: str):
    """The output holding the live figure titled `title`, scrolled into view."""
    figure = page.locator(".js-plotly-plot").filter(has=page.locator(".gtitle", has_text=title))
    output = page.locator(".jp-OutputArea-output").filter(has=figure)
    expect(output, f"no live figure titled {title!r} rendered").to_have_count(1, timeout=REDRAW)
    output.scroll_into_view_if_needed()
    return output


def slider(output, label: str):
    """(focusable handle, readout) of the ipywidgets slider whose label is `label`."""
    box = output.locator(".widget-slider").filter(
        has=output.page.locator(".widget-label", has_text=re.compile(f"^{re.escape(label)}$"))
    )
    expect(box, f"no slider labelled {label!r}").to_have_count(1)
    return box.locator(".noUi-handle"), box.locator(".widget-readout")


def press(handle, key: str, readout) -> str:
    """Press `key` on the slider handle; wait for its readout to change and return it."""
    before = readout.inner_text()
    handle.press(key)
    expect(readout, f"the slider readout stayed at {before} after {key}").not_to_have_text(
        before, timeout=REDRAW
    )
    return readout.inner_text()


def wait_for_change(read, before, what: str, timeout: float = REDRAW / 1000):
    """Poll `read()` until it differs from `before`; return the new value."""
    deadline = time.monotonic() + timeout
    while (now := read()) == before:
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not change within {timeout:.0f} s")
        time.sleep(0.1)  # polling interval
    return now


def save_screenshot(output, folder: Path, name: str, docs: bool = False) -> Path:
    """The output (sliders and figure) as a PNG; `docs` ones replace docs/images/ on request."""
    path = folder / name
    output.page.mouse.move(1, VIEWPORT["height"] - 1)  # off the plot: no hover toolbar
    output.screenshot(path=path, animations="disabled")
    if docs and UPDATE_SCREENSHOTS:
        shutil.copyfile(path, ROOT / "docs" / "images" / name)
    return path


# ---- the tests -------------------------------------------------------------------------


@pytest.mark.needs_milestones(1)  # the student edition waits for them
def test_decay_curve_redraws_when_the_decay_rate_slider_moves(page, lab, screenshots):
    with screenshot_on_failure(page, screenshots / "01-failure.png", lab):
        open_notebook(page, lab, "notebooks/01_recency.ipynb")
        run_all_cells(page)

        output = explorer(page, "Your recency_score")
        curve = output.locator(".scatterlayer .trace").first.locator("path.js-line")
        expect(curve, "the decay curve has no line").to_have_attribute("d", re.compile("^M.+L"))
        status = output.locator(".widget-html-content").first
        handle, readout = slider(output, "decay_rate")
        rate = readout.inner_text()
        expect(status).to_contain_text(f"decay_rate {rate} per hour")
        save_screenshot(output, screenshots, "decay-curve.png", docs=True)

        before = curve.get_attribute("d")
        for _ in range(5):  # five steps of 0.001 towards faster forgetting
            rate = press(handle, "ArrowLeft", readout)
        expect(status, "the readout under the sliders did not follow").to_contain_text(
            f"decay_rate {rate} per hour", timeout=REDRAW
        )
        expect(curve, "the curve did not redraw").not_to_have_attribute("d", before)
        save_screenshot(output, screenshots, "decay-curve-moved.png")


@pytest.mark.needs_milestones(3)  # the student edition waits for them
def test_lowering_the_recency_weight_puts_the_decision_first(page, lab, screenshots):
    with screenshot_on_failure(page, screenshots / "03-failure.png", lab):
        open_notebook(page, lab, "notebooks/03_retrieval_score.ipynb")
        run_all_cells(page)

        output = explorer(page, "Each memory's score")
        bars = output.locator(".barlayer path")
        ticks = output.locator(".yaxislayer-above .ytick text")
        table_ids = output.locator("table tbody tr td:nth-child(2)")
        expect(bars.first, "the score bars did not draw").to_be_visible()

        def bar_shapes() -> list[str]:
            return bars.evaluate_all("paths => paths.map(p => p.getAttribute('d'))")

        def ranking() -> list[str]:  # the memory ids top to bottom, as a person reads them
            return ticks.evaluate_all(
                "ts => ts.sort((a, b) => a.getBoundingClientRect().top"
                " - b.getBoundingClientRect().top).map(t => t.textContent)"
            )

        first = ranking()
        assert first == table_ids.all_inner_texts(), "figure and table rank differently"
        assert first[0] != "groq", f"with equal weights the decision should not win: {first}"
        save_screenshot(output, screenshots, "weight-sliders.png", docs=True)

        # The notebook asks: lower w_rec until the decision comes first.
        handle, readout = slider(output, "w_rec")
        shapes = bar_shapes()
        for _ in range(20):  # 20 steps of 0.05: from 1.00 down to 0.00
            press(handle, "ArrowLeft", readout)
            shapes = wait_for_change(bar_shapes, shapes, "the score bars")
            if ranking()[0] == "groq":  # bars and labels redraw in one update
                break
        assert ranking()[0] == "groq", f"the decision never came first: {ranking()}"
        expect(table_ids).to_have_text(ranking())
        save_screenshot(output, screenshots, "weight-sliders-moved.png")


@pytest.mark.needs_milestones(3)  # the student edition waits for them
def test_fact_half_life_log_slider_moves_by_equal_factors_and_retunes(page, lab, screenshots):
    with screenshot_on_failure(page, screenshots / "08-failure.png", lab):
        open_notebook(page, lab, "notebooks/08_evaluation.ipynb")
        run_all_cells(page)

        output = explorer(page, "MRR by category: yours vs the course")
        summary = output.locator(".widget-html-content").first
        yours = output.locator(".barlayer .trace").nth(1).locator("path")

        def overall() -> tuple[float, float]:  # (yours, course) overall MRR
            match = re.search(r"MRR\s+yours ([\d.]+) vs course ([\d.]+)", summary.inner_text())
            assert match, f"no overall MRR in the summary: {summary.inner_text()!r}"
            return float(match[1]), float(match[2])

        def shapes() -> list[str]:
            return yours.evaluate_all("paths => paths.map(p => p.getAttribute('d'))")

        mine, course = overall()
        assert mine == pytest.approx(course), "the sliders should start at the course's rule"

        # A log slider: each PageUp multiplies the half-life by the same factor.
        handle, readout = slider(output, "facts (d)")
        days = [float(readout.inner_text())]
        before = shapes()
        for _ in range(7):  # from about 6 days to about a year
            days.append(float(press(handle, "PageUp", readout)))
        # The first step lands on the slider's grid (5.76 days is between two grid points).
        ratios = [later / earlier for earlier, later in itertools.pairwise(days[1:])]
        assert ratios[0] > 1, f"PageUp did not lengthen the half-life: {days}"
        assert ratios == pytest.approx([ratios[0]] * len(ratios), rel=0.03), days
        wait_for_change(shapes, before, "the 'yours' bars")
        expect(summary).not_to_contain_text(f"yours {mine:.3f} vs")
        save_screenshot(output, screenshots, "evaluation-tuning-moved.png")
