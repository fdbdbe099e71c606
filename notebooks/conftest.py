"""For nbval only: `pytest --nbval-lax notebooks/` runs the workbook cell by cell.

The tests (`python -m pytest`) already run every notebook, more strictly (nothing on
stderr, no network; tests/notebooks/test_notebooks.py). This file makes the nbval entry behave like
them in two ways:

- it runs in one process: the cells of a notebook run in order in one kernel, so they
  are not spread over pytest-xdist's workers (pyproject.toml asks for them);
- in the student edition, a notebook stops cleanly at the learner's first stub, or at an
  empty prediction ("make your prediction first"): that cell and the rest of its notebook
  are reported as skipped, "waits for you", instead of failing one after another;
- in the master, an empty prediction is recorded first, as the tests do
  (tests/notebooks/recorded.py), so that the notebook runs through.

Deliberately left out: comparing outputs (`--nbval-lax` checks that cells run).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from teaching.milestones import EXERCISE_FILES, LEARNER_FILES

ROOT = Path(__file__).resolve().parent.parent
STUDENT_EDITION = any(  # a stub left in the milestones' files or the exercises'
    "# YOUR CODE HERE" in (ROOT / name).read_text()
    for name in LEARNER_FILES + EXERCISE_FILES
    if (ROOT / name).exists()
)
STUBS = ("NotImplementedYet", "NotImplementedError", "PredictionMissing")
ANSI = re.compile(r"\x1b\[[0-9;]*m")  # the colours of a kernel's traceback
STOPPED: dict[str, str] = {}  # notebook -> the stub message it stopped at


def is_cell(item) -> bool:
    return type(item).__name__ == "IPyNbCell"


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist decides to start its workers
def pytest_configure(config):
    """One process: nbval runs a notebook's cells in order in one kernel, so its cells
    cannot be spread over pytest-xdist's workers (pyproject.toml asks for them)."""
    if config.getoption("nbval", False) or config.getoption("nbval_lax", False):
        config.option.dist, config.option.numprocesses = "no", 0


def pytest_runtest_setup(item):
    if is_cell(item) and item.parent.path.name in STOPPED:
        pytest.skip(f"waits for you: {STOPPED[item.parent.path.name]}")
    if is_cell(item) and not STUDENT_EDITION:
        from tests.notebooks.recorded import with_recorded_prediction

        item.cell.source = with_recorded_prediction(item.cell.source)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not (STUDENT_EDITION and is_cell(item) and report.failed and call.when == "call"):
        return
    text = str(report.longrepr)
    if any(stub in text for stub in STUBS):
        lines = [ANSI.sub("", line).strip() for line in text.splitlines()]
        line = next((s for s in lines if s.startswith("PredictionMissing: ")), None)
        line = line or next((s for s in lines if "not implemented yet" in s), STUBS[0])
        STOPPED[item.parent.path.name] = line.strip()
        report.outcome = "skipped"
        report.longrepr = (str(item.path), 0, f"waits for you: {line.strip()}")
