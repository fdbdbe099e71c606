"""`python -m grading reshape`: a graded cell added or removed after students submitted.

nbgrader's generate_assignment refuses to add or remove a cell of a notebook that has
submissions ("Cannot add or remove cells"), so `python -m grading release` cannot record
the new shape. This command does it, keeping every grade given by hand that it can:

1. reads every hand grade (manual score, extra credit) and comment of the assignment
   from the gradebook and writes them to <course>/reshape-<UTC time>.json, the record
   of what was there;
2. removes the assignment's submissions from the gradebook (the students, the due date
   and the collected files in submitted/ stay);
3. builds the course again from notebooks/ (grading/course/editions.py), so the gradebook
   holds the new cells and points;
4. grades <course>/submitted/ again in the sandbox;
5. puts back every hand grade and comment whose cell still exists (same notebook and
   grade_id), then grades once more, so late penalties, feedback pages and the export
   include them;
6. says which it could not put back (their cell is gone): student, cell, grade, comment.

Deliberately left out: moving a hand grade to a renamed cell (a rename is a removal and an
addition: the record in the JSON file is what to enter again by hand).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from grading.layout import ASSIGNMENT, COURSE


def given_by_hand(course: Path = COURSE) -> list[dict]:
    """Every hand grade and comment of the assignment: student, notebook, cell, what."""
    from nbgrader.api import Gradebook, MissingEntry

    from grading.course.results import gradebook_url

    kept = []
    with Gradebook(gradebook_url(course)) as gradebook:
        for student in gradebook.students:
            try:
                submission = gradebook.find_submission(ASSIGNMENT, student.id)
            except MissingEntry:
                continue
            for notebook in submission.notebooks:
                by_cell: dict[str, dict] = {}
                for grade in notebook.grades:
                    if grade.manual_score is not None or grade.extra_credit is not None:
                        by_cell.setdefault(grade.name, {}).update(
                            manual_score=grade.manual_score, extra_credit=grade.extra_credit
                        )
                for comment in notebook.comments:
                    if comment.manual_comment:
                        by_cell.setdefault(comment.name, {})["manual_comment"] = (
                            comment.manual_comment
                        )
                for cell, given in sorted(by_cell.items()):
                    kept.append({"student": student.id, "notebook": notebook.name, "cell": cell,
                                 **given})  # fmt: skip
    return kept


def put_back(given: list[dict], course: Path = COURSE) -> list[dict]:
    """Each hand grade and comment into its cell, if the cell still exists; the rest."""
    from nbgrader.api import Gradebook, MissingEntry

    from grading.course.results import gradebook_url

    lost = []
    with Gradebook(gradebook_url(course)) as gradebook:
        for item in given:
            where = (item["cell"], item["notebook"], ASSIGNMENT, item["student"])
            try:
                if "manual_score" in item:
                    grade = gradebook.find_grade(*where)
                    grade.manual_score = item["manual_score"]
                    grade.extra_credit = item["extra_credit"]
                    grade.needs_manual_grade = False
                if "manual_comment" in item:
                    gradebook.find_comment(*where).manual_comment = item["manual_comment"]
            except MissingEntry:
                lost.append(item)
        gradebook.db.commit()
    return lost


def reshape(
    course: Path = COURSE,
    jobs: int | None = None,
    isolated: bool = True,
    log: Callable[[str], None] = print,
) -> list[dict]:
    """Steps 1-6 above; returns the hand grades and comments that could not be put back."""
    from nbgrader.api import Gradebook, MissingEntry

    from grading.course.autograde import autograde
    from grading.course.editions import CELL_TIMEOUT, release
    from grading.course.results import gradebook_url

    given = given_by_hand(course)
    record = course / f"reshape-{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"
    record.write_text(json.dumps(given, indent=1))
    log(f"{len(given)} hand grades and comments saved in {record}")
    with Gradebook(gradebook_url(course)) as gradebook:
        for student in gradebook.students:
            try:
                gradebook.remove_submission(ASSIGNMENT, student.id)
            except MissingEntry:
                continue
    release(cell_timeout=CELL_TIMEOUT, log=log, dist=course.parent)
    submitted = course / "submitted"
    autograde(submitted, jobs=jobs, isolated=isolated, course=course, log=lambda line: None)
    lost = put_back(given, course)
    autograde(submitted, jobs=jobs, isolated=isolated, course=course, log=log)
    log(f"put back {len(given) - len(lost)} of {len(given)} hand grades and comments")
    for item in lost:
        what = ", ".join(f"{k} {item[k]!r}" for k in ("manual_score", "extra_credit",
                         "manual_comment") if item.get(k) is not None)  # fmt: skip
        log(f"  not put back (its cell is gone): {item['student']} {item['notebook']}/"
            f"{item['cell']}: {what}")  # fmt: skip
    return lost
