"""A graded cell removed after students submitted: grading refuses, `reshape` rebuilds.

The course is a scratch one; the changed notebooks are a copy (grading.layout.NOTEBOOKS
points at it), so this repository's notebooks are never edited.
"""

from __future__ import annotations

import csv
import shutil

import nbformat
import pytest

from grading import layout
from grading.course.editions import release
from grading.layout import ASSIGNMENT, GRADED, LEARNER_FILES, ROOT
from grading.markers import BuildError

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap (apt bwrap)"),
]

REMOVED, KEPT = "explain_flat_store", "explain_last_access"  # two written cells of 01


def written(course, student="ana"):
    from nbgrader.api import Gradebook

    from grading.course.results import gradebook_url

    with Gradebook(gradebook_url(course)) as gradebook:
        notebook = gradebook.find_submission_notebook("01_recency", ASSIGNMENT, student)
        grades = {g.name: g.manual_score for g in notebook.grades}
        comments = {c.name: c.manual_comment for c in notebook.comments}
        return grades, comments, gradebook.find_assignment(ASSIGNMENT).max_score


def test_a_written_cell_removed_after_submissions_keeps_every_other_hand_grade(
    tmp_path, monkeypatch
):
    from nbgrader.api import Gradebook

    from grading.course.autograde import autograde
    from grading.course.reshape import reshape
    from grading.course.results import EXPORT, gradebook_url

    tmp_path.chmod(0o755)
    release(log=lambda line: None, dist=tmp_path / "dist")
    course = tmp_path / "dist" / "course"
    handed_in = course / "submitted" / "ana" / ASSIGNMENT
    for name in LEARNER_FILES:  # code/scoring.py, ..., code/practice/reflection.py
        (handed_in / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, handed_in / name)
    for nb in GRADED:
        notebook = nbformat.read(course / "release" / ASSIGNMENT / f"{nb.name}.ipynb", 4)
        for cell in notebook.cells:
            if cell.metadata.get("nbgrader", {}).get("grade_id") in (REMOVED, KEPT):
                cell.source = "An answer in my own words."
        nbformat.write(notebook, handed_in / f"{nb.name}.ipynb")
    autograde(course / "submitted", course=course, log=lambda line: None)
    with Gradebook(gradebook_url(course)) as gradebook:  # as the formgrader's API does
        for cell, score, comment in ((KEPT, 2.0, "kept"), (REMOVED, 1.0, "gone")):
            grade = gradebook.find_grade(cell, "01_recency", ASSIGNMENT, "ana")
            grade.manual_score, grade.needs_manual_grade = score, False
            gradebook.find_comment(cell, "01_recency", ASSIGNMENT, "ana").manual_comment = comment
        gradebook.db.commit()
    assert written(course)[2] == 55  # 31 core + 8 written + 16 stretch

    changed = tmp_path / "notebooks"  # the instructor deletes one written question
    changed.mkdir()
    shutil.copy2(ROOT / "notebooks" / "workbook.py", changed / "workbook.py")
    for nb in GRADED:
        shutil.copy2(ROOT / "notebooks" / f"{nb.name}.ipynb", changed / f"{nb.name}.ipynb")
    path = changed / "01_recency.ipynb"
    notebook = nbformat.read(path, as_version=4)
    notebook.cells = [c for c in notebook.cells
                      if c.metadata.get("nbgrader", {}).get("grade_id") != REMOVED]  # fmt: skip
    nbformat.write(notebook, path)
    monkeypatch.setattr(layout, "NOTEBOOKS", changed)

    with pytest.raises(BuildError, match=f"01_recency: {REMOVED} is in the release but not"):
        autograde(course / "submitted", course=course, log=lambda line: None)
    with pytest.raises(BuildError, match="python -m grading reshape"):  # nbgrader refuses
        release(log=lambda line: None, dist=tmp_path / "dist")
    assert (course / "release" / ASSIGNMENT / "01_recency.ipynb").is_file()  # kept as it was
    said: list[str] = []
    lost = reshape(course, log=said.append)
    assert [(item["cell"], item["manual_score"], item["manual_comment"]) for item in lost] == [
        (REMOVED, 1.0, "gone")
    ]
    assert any(f"not put back (its cell is gone): ana 01_recency/{REMOVED}" in s for s in said)
    grades, comments, most = written(course)
    assert grades[KEPT] == 2.0 and comments[KEPT] == "kept" and REMOVED not in grades
    assert most == 53  # 31 core + 6 written left + 16 stretch
    with open(course / EXPORT, newline="") as file:
        row = next(csv.DictReader(file))
    assert (row["written"], row["raw_score"], row["max_score"]) == ("2", "49", "53")
    assert list(course.glob("reshape-*.json"))  # the record of what was there
