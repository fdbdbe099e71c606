"""Writing results: the gradebook, one feedback page per student, grades.csv.

Only the trusted parent writes, one student at a time, after that student's sandboxes
are gone. The gradebook is nbgrader's (its API, so `nbgrader export` and the formgrader
keep working); a regrade removes the old submission first, so it starts from zero, and a
submission's rows are written in one transaction (grading/gradebook.py). The
feedback page is data: every text is escaped, nothing is loaded from the network (no
script, no remote stylesheet; formulas are plain text), the page size is capped.

Deliberately left out: judging (grading/verdict.py) and running code (grading/sandbox.py).
"""

from __future__ import annotations

import contextlib
import csv
import html
import secrets
import warnings
from datetime import UTC, datetime
from pathlib import Path

from grading.gradebook import database_url, opened, transaction
from grading.grader import Graded
from grading.layout import ASSIGNMENT, COURSE, REGISTRY

PAGE_BYTES = 64 << 10
MESSAGE_CHARS = 1500
NOTEBOOK = {cell.id: row.notebook.removesuffix(".ipynb")
            for row in REGISTRY.MILESTONES.values() for cell in row.grade_cells}  # fmt: skip
MILESTONES = sorted({row.number for row in REGISTRY.MILESTONES.values()})


def maxima() -> dict[int, float]:
    points = dict.fromkeys(MILESTONES, 0.0)
    for row in REGISTRY.MILESTONES.values():
        points[row.number] += sum(cell.points for cell in row.grade_cells)
    return points


def write_gradebook(graded: Graded, course: Path = COURSE, url: str | None = None) -> None:
    """The student's scores in the course's gradebook, in one transaction (see record)."""
    with transaction(database_url(course, url)) as (gradebook, _):
        record(gradebook, graded)


def record(gradebook, graded: Graded) -> None:
    """The student's scores in an open nbgrader Gradebook, replacing any earlier submission."""
    from nbgrader.api import MissingEntry
    from sqlalchemy.exc import SAWarning

    gradebook.update_or_create_student(graded.student)
    with contextlib.suppress(MissingEntry):  # a regrade starts from zero
        gradebook.remove_submission(ASSIGNMENT, graded.student)
    with warnings.catch_warnings():  # nbgrader 0.9 on SQLAlchemy 2 warns, harmlessly
        warnings.simplefilter("ignore", SAWarning)
        gradebook.add_submission(ASSIGNMENT, graded.student, timestamp=datetime.now(UTC))
    for outcome in graded.outcomes:
        cell = outcome.cell.id
        grade = gradebook.find_grade(cell, NOTEBOOK[cell], ASSIGNMENT, graded.student)
        grade.auto_score = outcome.score
        grade.needs_manual_grade = False
    gradebook.db.commit()


CSP = "default-src 'none'; style-src 'unsafe-inline'"  # no script, nothing fetched, ever
STYLE = """body{font-family:sans-serif;max-width:50em;margin:2em auto;padding:0 1em}
pre{background:#f4f4f4;padding:.6em;white-space:pre-wrap}td,th{padding:.2em .8em}
.ok{color:#176117}.lost{color:#a11}"""


FRESH = (
    "Public checks were graded on fresh inputs of the same kind as your notebook's (drawn for"
    " this submission; floats within a relative 1e-6), hidden checks on the course's own."
)


def page(graded: Graded) -> str:
    """One self-contained HTML page: points per milestone, then each lost check's message."""
    e = html.escape
    most = maxima()
    rows = "".join(
        f"<tr><td>Milestone {n}</td><td>{graded.milestone(n):g} / {most[n]:g}</td></tr>"
        for n in MILESTONES
    )
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">",
        f"<title>Memory Lab feedback: {e(graded.student)}</title><style>{STYLE}</style>",
        f"</head><body><h1>Memory Lab: your milestones</h1><p>{e(graded.student)}: "
        f"<b>{graded.total:g} / {sum(most.values()):g}</b></p><table>{rows}</table>",
    ]
    if not graded.isolated:
        parts.append("<p><b>This run was not isolated.</b></p>")
    parts.append(f"<p>{e(FRESH)}</p>")
    if graded.hint:
        parts.append(f"<p><b>{e(graded.hint)}</b></p>")
    parts += [f"<p>{e(note)}</p>" for note in graded.notes]
    for outcome in graded.outcomes:
        css = "ok" if outcome.score else "lost"
        head = f"{outcome.cell.id}: {outcome.score:g} / {outcome.cell.points:g}"
        parts.append(f"<h3 class='{css}'>{e(head)}</h3>")
        if outcome.message:
            parts.append(f"<pre>{e(outcome.message[:MESSAGE_CHARS])}</pre>")
    text = "".join(parts)[: PAGE_BYTES - 100]
    return text + "</body></html>"


def write_feedback(graded: Graded, course: Path = COURSE) -> Path:
    """feedback/<student>/milestones/feedback.html, where nbgrader's release_feedback looks."""
    folder = course / "feedback" / graded.student / ASSIGNMENT
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.html"):
        old.unlink()
    (folder / "timestamp.txt").write_text(datetime.now(UTC).isoformat())
    (folder / "submission_secret.txt").write_text(secrets.token_hex(16))
    path = folder / "feedback.html"
    path.write_text(page(graded), encoding="utf-8")
    return path


def write_csv(
    path: Path, course: Path = COURSE, students: list[str] | None = None, url: str | None = None
) -> None:
    """grades.csv from the gradebook (the source of truth): this batch's students, or all."""
    from nbgrader.api import MissingEntry

    with (
        opened(database_url(course, url)) as gradebook,
        open(path, "w", newline="") as file,
    ):
        writer = csv.writer(file)
        writer.writerow(["student_id", *[f"milestone_{n}" for n in MILESTONES], "total"])
        milestone_of = {c: row.number for row in REGISTRY.MILESTONES.values()
                        for c in (g.id for g in row.grade_cells)}  # fmt: skip
        everyone = {s.id for s in gradebook.students}
        for student in sorted(everyone if students is None else everyone & set(students)):
            try:
                submission = gradebook.find_submission(ASSIGNMENT, student)
            except MissingEntry:
                continue
            points = dict.fromkeys(MILESTONES, 0.0)
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    if grade.name in milestone_of:  # answers in words are graded by hand
                        points[milestone_of[grade.name]] += grade.auto_score or 0.0
            row = [f"{points[n]:g}" for n in MILESTONES]
            writer.writerow([student, *row, f"{sum(points.values()):g}"])
