"""docs/learning-objectives.md cannot rot: every notebook, section and check it names exists.

Also keeps the self-assessment in step: EVALUATION.md's failure-mode rows are the sections of
notebooks 06a and 06b, and every answer cell a notebook holds is one the answer checks know.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from teaching import checks
from teaching.checks import answers, failure_modes
from teaching.milestones import GRADE_CELLS, MANUAL_CELLS

ROOT = Path(__file__).resolve().parents[2]
TABLE = (ROOT / "docs" / "learning-objectives.md").read_text(encoding="utf-8")
EVALUATION = (ROOT / "EVALUATION.md").read_text(encoding="utf-8")


def rows() -> list[list[str]]:
    """The objective rows of the table: [number, objective, taught, practised, checked]."""
    found = []
    for line in TABLE.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0].isdigit():
            found.append(cells)
    return found


def headings(notebook: str) -> list[str]:
    cells = nbformat.read(ROOT / "notebooks" / notebook, as_version=4).cells
    return [
        line.lstrip("#").strip()
        for cell in cells
        if cell.cell_type == "markdown"
        for line in cell.source.splitlines()
        if line.startswith("#")
    ]


def sections(cell: str) -> list[tuple[str, str]]:
    """(notebook, section) for each `notebook` § section reference in a table cell."""
    found = []
    for part in cell.split(";"):
        match = re.search(r"`(\w+\.ipynb)`", part)
        if not match:
            continue
        for section in part.split("§")[1:]:
            section = re.split(r" \(| \.\.\.", section)[0].strip()
            found.append((match.group(1), section))
    return found


def grade_cells(cell: str) -> list[str]:
    return re.findall(r"grade cell `(\w+)`", cell)


def check_names(cell: str) -> list[str]:
    return [n for n in re.findall(r"`(check_\w+)`", cell) if n not in grade_cells(cell)]


def test_the_table_has_the_seven_objectives_and_no_empty_cell():
    table = rows()
    assert [row[0] for row in table] == [str(n) for n in range(1, 8)]
    for row in table:
        assert len(row) == 5 and all(row), row
        assert sections(row[2]), f"objective {row[0]}: 'taught' names no notebook section"
        assert check_names(row[4]) or grade_cells(row[4]), f"objective {row[0]}: no check"


REFERENCES = sorted({ref for row in rows() for col in (2, 3) for ref in sections(row[col])})


@pytest.mark.parametrize(("notebook", "section"), REFERENCES)
def test_every_section_the_table_names_is_a_heading_of_that_notebook(notebook, section):
    path = ROOT / "notebooks" / notebook
    assert path.is_file(), f"{notebook} does not exist"
    found = any(h.lower().startswith(section.lower()) for h in headings(notebook))
    assert found, f"{notebook} has no section starting {section!r}: {headings(notebook)}"


CHECKS = sorted({name for row in rows() for name in check_names(row[4])})


@pytest.mark.parametrize("name", CHECKS)
def test_every_check_the_table_names_exists(name):
    modules = (checks, failure_modes, answers)
    found = any(callable(getattr(module, name, None)) for module in modules)
    assert found, f"no check {name} in teaching.checks"


def test_every_grade_cell_the_table_names_is_in_the_registry():
    known = set().union(*GRADE_CELLS.values(), *MANUAL_CELLS.values())
    named = {cell for row in rows() for cell in grade_cells(row[4])}
    assert named and named <= known, named - known


def test_every_answer_cell_the_table_names_is_known():
    named = set(re.findall(r"answer cells? `([\d.]+)`(?: and `([\d.]+)`)?", TABLE))
    keys = {key for pair in named for key in pair if key}
    assert keys and keys <= set(answers.ANSWERS) | set(answers.FIELD_QUESTIONS)


def notebook_answer_keys() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            for key in re.findall(r'check_(?:answer|field)\("([\w.]+)"', cell.source):
                found.setdefault(key, set()).add(path.name)
    return found


def test_every_answer_check_has_exactly_one_cell_in_its_own_notebook():
    found = notebook_answer_keys()
    assert set(found) == set(answers.ANSWERS) | set(answers.FIELD_QUESTIONS)
    for key, notebooks in found.items():
        assert len(notebooks) == 1 and next(iter(notebooks)).startswith(key[:2]), (key, notebooks)


# --- the self-assessment follows notebooks 06a and 06b ------------------------------------

FAILURE_NOTEBOOKS = ("06a_failure_modes.ipynb", "06b_failure_modes.ipynb")


def numbered_failures(notebook: str) -> list[str]:
    """A failure notebook's numbered sections: ['1. Fixation on an old trivial memory', ...]."""
    return [h for h in headings(notebook) if re.match(r"\d+\. ", h)]


def notebook_06_failures() -> list[str]:
    return [h for notebook in FAILURE_NOTEBOOKS for h in numbered_failures(notebook)]


def evaluation_failure_rows() -> list[str]:
    section = EVALUATION[EVALUATION.index("Failure modes reproduced") :]
    section = section[: section.index("\n## ")]
    return [
        line.strip("|").split("|")[0].strip()
        for line in section.splitlines()
        if re.match(r"\| \d+\. ", line)
    ]


def test_evaluation_has_one_failure_row_per_section_of_notebooks_06a_and_06b():
    assert evaluation_failure_rows() == notebook_06_failures()


def test_the_blame_checks_know_every_failure_and_its_notebook():
    for notebook in FAILURE_NOTEBOOKS:
        titles = [
            f"{f.number}. {f.title}"
            for f in failure_modes.FAILURES.values()
            if notebook.startswith(f.notebook + "_")
        ]
        assert titles == numbered_failures(notebook), notebook


def test_each_failure_notebook_checks_a_blame_for_each_of_its_failures_in_order():
    for notebook in FAILURE_NOTEBOOKS:
        cells = nbformat.read(ROOT / "notebooks" / notebook, as_version=4).cells
        blamed = [
            int(n) for c in cells for n in re.findall(r"check_blame\((\d+), blame\)", c.source)
        ]
        mine = [
            f.number for f in failure_modes.FAILURES.values() if notebook.startswith(f.notebook)
        ]
        assert blamed == mine, notebook


def test_no_failure_names_its_cause_before_the_prediction():
    """Between a failure's heading and its check_blame cell: no broken setting, and no prose
    naming the signal to blame. The fix, which does, comes after the prediction."""
    for notebook in FAILURE_NOTEBOOKS:
        cells = nbformat.read(ROOT / "notebooks" / notebook, as_version=4).cells
        section: list[tuple[str, str]] = []  # (cell type, text) since the last heading
        for cell in cells:
            heading = re.search(r"^#+ \d+\. ", cell.source, re.MULTILINE)
            if heading:
                section = [(cell.cell_type, cell.source[heading.start() :])]
                continue
            found = re.findall(r"check_blame\((\d+), blame\)", cell.source)
            if found:
                failure = failure_modes.FAILURES[int(found[0])]
                text = "\n".join(t for _, t in section)
                prose = "\n".join(t for kind, t in section if kind == "markdown")
                for name, value in failure.broken.items():
                    assert name not in text and str(value) not in text, (notebook, name)
                if failure.blame != "none":
                    assert failure.blame not in prose.lower(), (notebook, failure.number)
            section.append((cell.cell_type, cell.source))
