"""Writing results as nbgrader's own records: gradebook, autograded notebooks, feedback, export.

Only the trusted parent writes, one student at a time, after that student's sandboxes
are gone. What it writes is what `nbgrader autograde` would have written, so the
formgrader, manual grading, `release_feedback`/`fetch_feedback` and `nbgrader export`
work on the sandboxed grades:

    gradebook      the submission, its time from the student's timestamp.txt, an auto
                   score per checked cell; each written answer "needs manual grading"
                   (or scores 0, "No response.", when left as released); a regrade
                   updates the submission in place, so manual grades and comments stay
    autograded/    <student>/milestones/: the submitted notebooks (locked cells restored
                   from the gradebook by nbgrader's OverwriteCells, each checked cell's
                   output the sandbox's verdict), the learner files, timestamp.txt and
                   submission_secret.txt as submitted
    late penalty   nbgrader's AssignLatePenalties with the course's plugin and settings
    feedback/      <student>/milestones/<notebook>.html, one page per notebook, beside the
                   student's own submission_secret.txt: release_feedback names each page
                   by md5(secret + notebook), which is what fetch_feedback looks for
    export         memory-lab-grades.csv (EXPORT), never `nbgrader export`'s grades.csv

The feedback page is data: every text is escaped, nothing is loaded from the network (no
script, no remote stylesheet; formulas are plain text), the page size is capped. In the
autograded notebooks (what the formgrader renders) every markdown or raw cell that is not
the instructor's is made inert (`inert`): its tags show as text, its links cannot run
script, its attachments are dropped, so no learner HTML is ever live for an instructor.

Deliberately left out: judging (grading/judge/verdict.py) and running code (grading/sandbox/).
"""

from __future__ import annotations

import contextlib
import csv
import html
import re
import secrets
import shutil
import warnings
from datetime import UTC, datetime
from pathlib import Path

import nbformat

from grading.course.gradebook import database_url, transaction
from grading.judge.grader import Graded
from grading.layout import ASSIGNMENT, COURSE, GRADED, LEARNER_FILES, REGISTRY

PAGE_BYTES = 64 << 10
MESSAGE_CHARS = 1500
NOTEBOOK_BYTES = 4 << 20  # a submitted notebook larger than this is not read
EXPORT = "memory-lab-grades.csv"  # nbgrader export writes grades.csv: never the same file
NOTEBOOK = {cell.id: row.notebook.removesuffix(".ipynb")
            for row in REGISTRY.MILESTONES.values() for cell in row.grade_cells}  # fmt: skip
MILESTONES = sorted({row.number for row in REGISTRY.MILESTONES.values()})
SECRET = re.compile(r"[0-9a-f]{16,256}")  # nbgrader's submit writes token_hex(64)
NO_RESPONSE = "No response."  # nbgrader's own comment on an answer left as released


def maxima() -> dict[int, float]:
    """{milestone: points} of the checked cells, from the notebooks (grading/points.py)."""
    from grading.judge.verdict import CELLS

    points = dict.fromkeys(MILESTONES, 0.0)
    for cell in CELLS:
        points[cell.milestone] += cell.points
    return points


def course_settings(course: Path = COURSE):
    """The course's nbgrader_config.py as a traitlets Config (empty if there is none)."""
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    if not (course / "nbgrader_config.py").is_file():
        return Config()
    return PyFileConfigLoader("nbgrader_config.py", str(course)).load_config()


def gradebook_url(course: Path = COURSE) -> str:
    """The course's gradebook: CourseDirectory.db_url if its config sets one (or --db-url
    chose one), else its file; as SQLAlchemy takes it (grading/course/gradebook.py)."""
    return database_url(course)


def submitted_timestamp(folder: Path | None) -> tuple[datetime | None, str]:
    """(the time, the text) of folder/timestamp.txt, parsed as nbgrader parses it."""
    from nbgrader.utils import parse_utc

    path = None if folder is None else folder / "timestamp.txt"
    if path is None or path.is_symlink() or not path.is_file() or path.stat().st_size > 200:
        return None, ""
    text = path.read_text(errors="replace").strip()
    try:
        return (parse_utc(text), text) if text else (None, "")
    except ValueError:
        return None, ""


def submitted_secret(folder: Path | None) -> str | None:
    """The student's own submission_secret.txt (written by nbgrader's submit), if valid."""
    path = None if folder is None else folder / "submission_secret.txt"
    if path is None or path.is_symlink() or not path.is_file() or path.stat().st_size > 300:
        return None
    text = path.read_text(errors="replace")
    return text if SECRET.fullmatch(text) else None


def submitted_notebook(folder: Path | None, name: str):
    """The learner's notebook `name` as data (never run), or None if missing or unreadable."""
    path = None if folder is None else folder / f"{name}.ipynb"
    if path is None or path.is_symlink() or not path.is_file():
        return None
    if path.stat().st_size > NOTEBOOK_BYTES:
        return None
    try:
        return nbformat.read(path, as_version=4)
    except Exception:  # any damage: the notebook counts as not handed in
        return None


LINK_SCRIPT = re.compile(r"(?i)(\]\(\s*<?|\]:\s*<?)(javascript|vbscript|data)(\s*):")


def inert(text: str) -> str:
    """Learner markdown with no live HTML: `<b>` shows as text, a `javascript:` link is text.

    Escaping `&` and `<` leaves no tag and no entity for a renderer to act on; markdown's
    own emphasis, lists, headings and code stay.
    """
    text = text.replace("&", "&amp;").replace("<", "&lt;")
    return LINK_SCRIPT.sub(lambda m: f"{m.group(1)}{m.group(2)}{m.group(3)}&#58;", text)


def make_inert(notebook, instructor: set[str]) -> None:
    """Every markdown and raw cell whose text is not one of `instructor`'s, made inert."""
    for cell in notebook.cells:
        if cell.cell_type not in ("markdown", "raw") or cell.source in instructor:
            continue
        cell.source = inert(cell.source)
        cell.pop("attachments", None)  # an SVG attachment is a document of its own
        if cell.cell_type == "raw":  # a raw cell marked text/html is pasted into the page
            for key in ("format", "raw_mimetype"):
                cell.metadata.pop(key, None)


def _grade_id(cell) -> str | None:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
    return grade_id if isinstance(grade_id, str) else None


def write_gradebook(graded: Graded, course: Path = COURSE, folder: Path | None = None) -> None:
    """The student's submission in nbgrader's gradebook, in one transaction (fill_gradebook)."""
    with transaction(gradebook_url(course)) as (gradebook, _):
        fill_gradebook(gradebook, graded, folder)


def fill_gradebook(gradebook, graded: Graded, folder: Path | None = None) -> None:
    """The student's submission in an open nbgrader Gradebook, updated in place.

    Checked cells get the sandbox's score; a manual grade set earlier stays and, as
    nbgrader does, the cell is flagged for review. Written answers keep their manual
    grades and comments; an answer left as released scores 0, "No response.".
    """
    from nbgrader.api import MissingEntry
    from nbgrader.utils import compute_checksum
    from sqlalchemy.exc import SAWarning

    timestamp, _ = submitted_timestamp(folder)
    checked = {o.cell.id for o in graded.outcomes}
    gradebook.update_or_create_student(graded.student)
    with warnings.catch_warnings():  # nbgrader 0.9 on SQLAlchemy 2 warns, harmlessly
        warnings.simplefilter("ignore", SAWarning)
        submission = gradebook.update_or_create_submission(ASSIGNMENT, graded.student)
    submission.timestamp = timestamp  # subtle: the formgrader compares it with submitted/
    for outcome in graded.outcomes:
        cell = outcome.cell.id
        grade = gradebook.find_grade(cell, NOTEBOOK[cell], ASSIGNMENT, graded.student)
        grade.auto_score = outcome.score
        grade.needs_manual_grade = grade.manual_score is not None
    for notebook in submission.notebooks:
        answers = {}
        if (submitted := submitted_notebook(folder, notebook.name)) is not None:
            answers = {_grade_id(c): c for c in submitted.cells if _grade_id(c)}
        for grade in notebook.grades:
            if grade.name in checked:
                continue
            released = None  # the checksum generate_assignment recorded, if it did
            with contextlib.suppress(MissingEntry):
                released = gradebook.find_source_cell(
                    grade.name, notebook.name, ASSIGNMENT
                ).checksum
            answer = answers.get(grade.name)
            unchanged = answer is None or compute_checksum(answer) == released
            grade.auto_score = 0.0 if unchanged else None
            if grade.manual_score is None:
                grade.needs_manual_grade = not unchanged
            with contextlib.suppress(MissingEntry):
                comment = gradebook.find_comment(
                    grade.name, notebook.name, ASSIGNMENT, graded.student
                )
                comment.auto_comment = NO_RESPONSE if unchanged else None
    gradebook.db.commit()


def write_autograded(graded: Graded, course: Path = COURSE, folder: Path | None = None) -> Path:
    """autograded/<student>/milestones/: what the formgrader opens for this submission."""
    from nbgrader.preprocessors import DeduplicateIds, OverwriteCells

    from grading.judge.grader import copy_regular

    target = course / "autograded" / graded.student / ASSIGNMENT
    if target.exists():
        shutil.rmtree(target)
    (target / "code").mkdir(parents=True)
    verdicts = {o.cell.id: o for o in graded.outcomes}
    released = course / "release" / ASSIGNMENT
    url = gradebook_url(course)
    for nb in GRADED:
        own = submitted_notebook(released, nb.name) or nbformat.v4.new_notebook()
        instructor = {c.source for c in own.cells if c.cell_type in ("markdown", "raw")}
        notebook = submitted_notebook(folder, nb.name)
        if notebook is None:  # not handed in: the released copy, so the page still opens
            notebook = submitted_notebook(released, nb.name) or nbformat.v4.new_notebook()
        resources = {"nbgrader": {"db_url": url, "assignment": ASSIGNMENT, "notebook": nb.name}}
        try:  # nbgrader's own sanitizing, as its autograde does
            notebook, _ = DeduplicateIds().preprocess(notebook, resources)
            notebook, _ = OverwriteCells(add_missing_cells=True).preprocess(notebook, resources)
        except Exception:  # a notebook nbgrader cannot restore: the released one instead
            notebook = submitted_notebook(released, nb.name) or nbformat.v4.new_notebook()
            notebook, _ = OverwriteCells(add_missing_cells=True).preprocess(notebook, resources)
        make_inert(notebook, instructor)
        for cell in notebook.cells:
            if cell.cell_type != "code":
                continue
            cell.outputs, cell.execution_count = [], None
            outcome = verdicts.get(_grade_id(cell))
            if outcome is not None:  # the sandbox's verdict, where the check's output was
                cell.outputs = [verdict_output(outcome)]
        nbformat.write(notebook, target / f"{nb.name}.ipynb")
    if folder is not None:
        for name in LEARNER_FILES:  # code/scoring.py, ..., code/practice/reflection.py
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            copy_regular(folder / name, target / name)
    _, stamp = submitted_timestamp(folder)
    if stamp:
        (target / "timestamp.txt").write_text(stamp)
    if (secret := submitted_secret(folder)) is not None:
        (target / "submission_secret.txt").write_text(secret)
    return target


def verdict_output(outcome):
    """A checked cell's output in the autograded notebook: the sandbox's verdict."""
    head = f"sandboxed grader: {outcome.score:g} / {outcome.cell.points:g}"
    if outcome.score or not outcome.message:
        return nbformat.v4.new_output("stream", name="stdout", text=f"{head}\n")
    message = outcome.message[:MESSAGE_CHARS]
    return nbformat.v4.new_output(
        "error", ename="CheckFailed", evalue=f"{head}\n{message}", traceback=[head, message]
    )


def assign_late_penalties(student: str, course: Path = COURSE) -> float:
    """nbgrader's late penalty for the student's submission, in one transaction."""
    with transaction(gradebook_url(course)) as (gradebook, _):
        return late_penalty(gradebook, student, course)


def late_penalty(gradebook, student: str, course: Path = COURSE) -> float:
    """nbgrader's AssignLatePenalties on each notebook, as the course configures it, on an
    open Gradebook (so it joins the transaction of the grades it depends on)."""
    from nbgrader.preprocessors import AssignLatePenalties

    assigner = AssignLatePenalties(config=course_settings(course))
    assigner.init_plugin()  # the course's plugin (LateSubmissionPlugin or its own)
    gradebook.db.flush()
    gradebook.db.expire_all()  # subtle: scores are SQL expressions, loaded before the grades
    submission = gradebook.find_submission(ASSIGNMENT, student)
    for notebook in submission.notebooks:  # what AssignLatePenalties.preprocess does, per notebook
        notebook.late_submission_penalty = None
        if submission.total_seconds_late > 0:
            penalty = assigner.plugin_inst.late_submission_penalty(
                student, notebook.score, submission.total_seconds_late
            )
            if penalty is not None:
                notebook.late_submission_penalty = assigner._check_late_penalty(notebook, penalty)
    gradebook.db.flush()
    gradebook.db.expire_all()
    return float(gradebook.find_submission(ASSIGNMENT, student).late_submission_penalty or 0.0)


def written_grades(student: str, course: Path = COURSE) -> dict[str, dict]:
    """{grade_id: {score (None until graded by hand), max, comment, notebook}}: written cells."""
    from nbgrader.api import Gradebook, MissingEntry

    found = {}
    with Gradebook(gradebook_url(course)) as gradebook:
        submission = gradebook.find_submission(ASSIGNMENT, student)
        for notebook in submission.notebooks:
            for grade in notebook.grades:
                if grade.name in NOTEBOOK:
                    continue
                comment = ""
                with contextlib.suppress(MissingEntry):
                    row = gradebook.find_comment(grade.name, notebook.name, ASSIGNMENT, student)
                    comment = row.manual_comment or row.auto_comment or ""
                found[grade.name] = {"score": grade.score if not grade.needs_manual_grade
                                     else None, "max": grade.max_score, "comment": comment,
                                     "notebook": notebook.name}  # fmt: skip
    return found


CSP = "default-src 'none'; style-src 'unsafe-inline'"  # no script, nothing fetched, ever
STYLE = """body{font-family:sans-serif;max-width:50em;margin:2em auto;padding:0 1em}
pre{background:#f4f4f4;padding:.6em;white-space:pre-wrap}td,th{padding:.2em .8em}
.ok{color:#176117}.lost{color:#a11}"""


FRESH = (
    "Every check was graded on fresh inputs of the same kind as your notebook's, drawn for"
    " this grading alone (floats within a relative 1e-6); a hidden check's inputs stay hidden."
)


def page(graded: Graded, notebook: str | None = None, written: dict | None = None) -> str:
    """One self-contained HTML page: points per milestone, then the notebook's cells.

    With `notebook`, the cells listed are that notebook's (checked ones with each lost
    check's message, written ones with the grade and comment given by hand); the
    milestone table and the total always cover the whole submission.
    """
    e = html.escape
    most = maxima()
    rows = "".join(
        f"<tr><td>{_label(n)}</td><td>{graded.milestone(n):g} / {most[n]:g}</td></tr>"
        for n in MILESTONES
    )
    core = sum(most[n] for n in MILESTONES if n < REGISTRY.FIRST_STRETCH)
    stretch = sum(most.values()) - core
    title = f"Memory Lab feedback: {graded.student}" + (f", {notebook}" if notebook else "")
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">",
        f"<title>{e(title)}</title><style>{STYLE}</style>",
        f"</head><body><h1>Memory Lab: your milestones</h1><p>{e(graded.student)}: "
        f"<b>{graded.core:g} / {core:g}</b> checked by the grader"
        + (
            f"; stretch points (optional milestones, counted apart): <b>{graded.stretch:g} / "
            f"{stretch:g}</b>"
            if stretch
            else ""
        )
        + "</p>"
        f"<table>{rows}</table>",
    ]
    if notebook:
        parts.append(f"<h2>{e(notebook)}</h2>")
    if not graded.isolated:
        parts.append("<p><b>This run was not isolated.</b></p>")
    parts.append(f"<p>{e(FRESH)}</p>")
    if graded.hint:
        parts.append(f"<p><b>{e(graded.hint)}</b></p>")
    parts += [f"<p>{e(note)}</p>" for note in graded.notes]
    for outcome in graded.outcomes:
        if notebook and NOTEBOOK.get(outcome.cell.id) != notebook:
            continue
        css = "ok" if outcome.score else "lost"
        head = f"{outcome.cell.id}: {outcome.score:g} / {outcome.cell.points:g}"
        parts.append(f"<h3 class='{css}'>{e(head)}</h3>")
        if outcome.message:
            parts.append(f"<pre>{e(outcome.message[:MESSAGE_CHARS])}</pre>")
    for cell, grade in (written or {}).items():
        if notebook and grade["notebook"] != notebook:
            continue
        score = "not graded yet" if grade["score"] is None else f"{grade['score']:g}"
        parts.append(f"<h3>{e(cell)} (written answer): {e(score)} / {grade['max']:g}</h3>")
        if grade["comment"]:
            parts.append(f"<pre>{e(grade['comment'][:MESSAGE_CHARS])}</pre>")
    text = "".join(parts)[: PAGE_BYTES - 100]
    return text + "</body></html>"


def _label(number: int) -> str:
    if number >= REGISTRY.FIRST_STRETCH:
        return f"Optional Milestone {number} (stretch)"
    return f"Milestone {number}"


def write_feedback(
    graded: Graded, course: Path = COURSE, folder: Path | None = None, written=None
) -> Path:
    """feedback/<student>/milestones/<notebook>.html and the secret release_feedback uses.

    The secret is the student's own (from their submission), so fetch_feedback finds
    the pages; a submission without one (not made by nbgrader's submit) gets a new one.
    """
    target = course / "feedback" / graded.student / ASSIGNMENT
    target.mkdir(parents=True, exist_ok=True)
    for old in target.glob("*.html"):
        old.unlink()
    _, stamp = submitted_timestamp(folder)
    (target / "timestamp.txt").write_text(stamp or datetime.now(UTC).isoformat())
    secret = submitted_secret(folder) or secrets.token_hex(64)
    (target / "submission_secret.txt").write_text(secret)
    for nb in GRADED:
        (target / f"{nb.name}.html").write_text(page(graded, nb.name, written), encoding="utf-8")
    return target


def write_csv(path: Path | None = None, course: Path = COURSE) -> Path:
    """memory-lab-grades.csv from the gradebook: every student ever graded, every cell group.

    Columns: student_id, timestamp, milestone_1 ... milestone_7 (checked cells), core
    (milestones 1-5, out of 31), stretch (the optional milestones 6 onward, counted
    apart), written (answers graded by hand), raw_score, late_submission_penalty, score,
    max_score; score is raw_score less the penalty, never below 0, as in `nbgrader
    export` (it holds the stretch points too: core and stretch say which are which).
    """
    from nbgrader.api import Gradebook, MissingEntry

    path = path or course / EXPORT
    milestone_of = {c: row.number for row in REGISTRY.MILESTONES.values()
                    for c in (g.id for g in row.grade_cells)}  # fmt: skip
    with (
        Gradebook(gradebook_url(course)) as gradebook,
        open(path, "w", newline="") as file,
    ):
        writer = csv.writer(file)
        writer.writerow(["student_id", "timestamp", *[f"milestone_{n}" for n in MILESTONES],
                         "core", "stretch", "written", "raw_score", "late_submission_penalty",
                         "score", "max_score"])  # fmt: skip
        maximum = gradebook.find_assignment(ASSIGNMENT).max_score
        for student in sorted(s.id for s in gradebook.students):
            try:
                submission = gradebook.find_submission(ASSIGNMENT, student)
            except MissingEntry:
                continue
            points = dict.fromkeys([*MILESTONES, "written"], 0.0)
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    points[milestone_of.get(grade.name, "written")] += grade.score or 0.0
            raw, penalty = submission.score, submission.late_submission_penalty or 0.0
            stamp = submission.timestamp.isoformat() if submission.timestamp else ""
            score = max(0.0, raw - penalty)
            core = sum(points[n] for n in MILESTONES if n < REGISTRY.FIRST_STRETCH)
            stretch = sum(points[n] for n in MILESTONES if n >= REGISTRY.FIRST_STRETCH)
            columns = [f"{points[n]:g}" for n in MILESTONES]
            columns += [f"{core:g}", f"{stretch:g}", f"{points['written']:g}"]
            writer.writerow([student, stamp, *columns, f"{raw:g}", f"{penalty:g}", f"{score:g}",
                             f"{maximum:g}"])  # fmt: skip
    return path
