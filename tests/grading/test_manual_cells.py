"""Answers in words (MANUAL_CELLS): graded by hand, outside the autograded total, never leaked."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from grading.judge.grader import Graded
from grading.layout import ASSIGNMENT, GRADED, REGISTRY, ROOT
from grading.markers import secret_lines


def test_the_export_counts_written_answers_apart_and_the_max_includes_them(tmp_path, monkeypatch):
    from nbgrader.api import Gradebook

    from grading.course.results import write_csv, write_gradebook
    from grading.judge.verdict import CELLS, Outcome

    # nbgrader runs the `alembic` command to make a new gradebook: the venv's, on PATH
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    from grading.points import points

    worth = points()  # every graded cell's, written ones too: the notebooks' metadata
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gradebook:
        gradebook.add_assignment(ASSIGNMENT)
        for notebook, cells in REGISTRY.GRADE_CELLS.items():
            name = notebook.removesuffix(".ipynb")
            gradebook.add_notebook(name, ASSIGNMENT)
            for cell in cells:
                gradebook.add_grade_cell(cell, name, ASSIGNMENT, max_score=worth[cell],
                                         cell_type="code")  # fmt: skip
            for cell in REGISTRY.MANUAL_CELLS.get(notebook, ()):  # as release
                gradebook.add_grade_cell(cell, name, ASSIGNMENT, max_score=worth[cell],
                                         cell_type="markdown")  # fmt: skip
    write_gradebook(Graded("ana", [Outcome(c, score=float(c.points)) for c in CELLS]), tmp_path)
    row = write_csv(course=tmp_path).read_text().splitlines()[-1]
    assert row == "ana,,5,6,4,8,8,4,4,4,4,31,16,0,47,0,47,55"  # written answers not graded: 0 of 8


def test_every_model_answer_line_is_a_secret_the_leak_check_looks_for():
    holders = [(ROOT / "notebooks" / f"{nb.name}.ipynb", nb.name) for nb in GRADED]
    secrets = secret_lines(holders)
    import nbformat

    for notebook, ids in REGISTRY.MANUAL_CELLS.items():
        for cell in nbformat.read(ROOT / "notebooks" / notebook, as_version=4).cells:
            if cell.metadata.get("nbgrader", {}).get("grade_id") in ids:
                answer = [line.strip() for line in cell.source.splitlines()[1:-1]]
                assert answer and all(line in secrets for line in answer if len(line) >= 12)
