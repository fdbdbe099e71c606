"""An instructor's whole term in a scratch course, with nbgrader's own exchange and tools.

Three students, each with a HOME of their own (nbgrader knows a student by $USER and
keeps their cache in $HOME): one right (with a written answer), one with one mistake who
submits after the due date, one who hands the release back untouched. The instructor
releases, collects, grades in the sandbox, reads the scores and opens the notebooks
through the formgrader's API, grades a written answer by hand through the formgrader's
own handler logic, regrades, releases feedback, and exports; each student fetches their
own feedback. Then every in-kernel path (nbgrader generate_assignment, the formgrader's
Generate and Autograde, nbgrader autograde) is tried: none publishes the solution or
changes a grade.
"""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import nbformat
import pytest

from grading.course.editions import grading_environment, release
from grading.layout import ASSIGNMENT, COURSE_ID, GRADED, LEARNER_FILES, ROOT
from grading.markers import find_leaks, secret_lines
from grading.selfcheck.mistakes import SUBMISSIONS

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap (apt bwrap)"),
]

RIGHT, SLIP, UNTOUCHED = "ana", "bo", "cy"  # bo submits late
MISTAKE = next(s for s in SUBMISSIONS if s.name == "recency-in-seconds")
ANSWER = "Because reading a memory is what makes it recent again: a refresh, not a write."
PLANTED = "<script>document.title = 'planted'</script>"  # in a written answer and a raw cell


class Term:
    """The scratch course and the exchange, and nbgrader run as the instructor or a student."""

    def __init__(self, root: Path):
        self.root = root
        self.course = root / "dist" / "course"
        self.exchange = root / "exchange"
        self.exchange.mkdir(mode=0o777)
        self.exchange.chmod(0o777)

    def nbgrader(self, *args: str, student: str | None = None, check: bool = True, cwd=None):
        env = {k: v for k, v in grading_environment().items() if not k.startswith("JUPYTER")}
        home = cwd = cwd or self.course
        if student is not None:  # a learner on their own machine: their HOME, their name
            home = self.root / "home" / student
            cwd = cwd if cwd != self.course else home
            home.mkdir(parents=True, exist_ok=True)
            env.update(HOME=str(home), USER=student, LOGNAME=student)
        else:
            env.update(HOME=str(self.root / "home" / "instructor"))
        command = [sys.executable, "-m", "nbgrader", *args, f"--Exchange.root={self.exchange}"]
        if args[0] == "validate":
            command = command[:-1]
        elif student is not None:
            command.append(f"--course={COURSE_ID}")
            if args[0] == "submit":  # as root, nbgrader would take the OS user's name
                command.append(f"--student={student}")
        done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
        if check:
            assert done.returncode == 0, f"nbgrader {' '.join(args)}:\n{done.stdout}{done.stderr}"
        return done

    def api(self):
        from nbgrader.apps.api import NbGraderAPI
        from nbgrader.coursedir import CourseDirectory

        from grading.course.results import course_settings

        config = course_settings(self.course)
        config.Exchange.root = str(self.exchange)
        coursedir = CourseDirectory(config=config)
        coursedir.root = str(self.course)
        return NbGraderAPI(coursedir=coursedir, config=config)


def work(term: Term, student: str) -> None:
    """What each student hands in, written into the assignment they fetched."""
    folder = term.root / "home" / student / ASSIGNMENT
    if student == UNTOUCHED:
        return
    for name in LEARNER_FILES:
        shutil.copy2(ROOT / name, folder / name)
    if student == SLIP:
        for name, old, new in MISTAKE.edits:
            text = (folder / name).read_text()
            assert text.count(old) == 1
            (folder / name).write_text(text.replace(old, new))
    if student == RIGHT:  # every written answer, in words of their own
        for nb in GRADED:
            path = folder / f"{nb.name}.ipynb"
            notebook = nbformat.read(path, as_version=4)
            for cell in notebook.cells:
                meta = cell.metadata.get("nbgrader", {})
                if meta.get("solution") and meta.get("grade") and cell.cell_type == "markdown":
                    cell.source = f"{ANSWER}\n\n{PLANTED}"
            raw = nbformat.v4.new_raw_cell(PLANTED, metadata={"format": "text/html"})
            notebook.cells.append(raw)
            nbformat.write(notebook, path)


def grades(term: Term) -> dict[str, dict[str, float]]:
    """{student: {grade_id: score}} as the gradebook (and so the formgrader) holds them."""
    from nbgrader.api import Gradebook

    from grading.course.results import gradebook_url

    found = {}
    with Gradebook(gradebook_url(term.course)) as gradebook:
        for student in gradebook.students:
            submission = gradebook.find_submission(ASSIGNMENT, student.id)
            found[student.id] = {
                g.name: g.score for notebook in submission.notebooks for g in notebook.grades
            }
    return found


def set_manual_grade(term: Term, student: str, cell: str, notebook: str, score, comment):
    """What the formgrader's PUT /api/grade and /api/comment do (its apihandlers.py)."""
    from nbgrader.api import Gradebook

    from grading.course.results import gradebook_url

    with Gradebook(gradebook_url(term.course)) as gradebook:
        grade = gradebook.find_grade(cell, notebook, ASSIGNMENT, student)
        grade.manual_score = score
        grade.needs_manual_grade = grade.manual_score is None and grade.auto_score is None
        row = gradebook.find_comment(cell, notebook, ASSIGNMENT, student)
        row.manual_comment = comment
        gradebook.db.commit()


@pytest.fixture(scope="module")
def term(tmp_path_factory):
    root = tmp_path_factory.mktemp("term")
    root.chmod(0o755)
    release(log=lambda line: None, dist=root / "dist")
    term = Term(root)
    config = term.course / "nbgrader_config.py"  # the instructor's late policy: nbgrader's own
    text = config.read_text().replace(
        '# c.LateSubmissionPlugin.penalty_method = "zero"',
        'c.LateSubmissionPlugin.penalty_method = "zero"',
    )
    config.write_text(text)
    term.nbgrader("release_assignment", ASSIGNMENT)
    for student in (RIGHT, UNTOUCHED, SLIP):
        term.nbgrader("fetch_assignment", ASSIGNMENT, student=student)
        work(term, student)
        if student == SLIP:  # the due date passes before the last one submits
            from nbgrader.api import Gradebook

            from grading.course.results import gradebook_url

            with Gradebook(gradebook_url(term.course)) as gradebook:
                gradebook.update_or_create_assignment(ASSIGNMENT, duedate=datetime.now(UTC))
            time.sleep(1.5)
        term.nbgrader("submit", ASSIGNMENT, student=student)
    term.nbgrader("collect", ASSIGNMENT)
    return term


def test_the_exchange_hands_out_the_whole_workbook_and_nbgrader_validate_passes_on_it(term):
    fetched = term.root / "home" / RIGHT / ASSIGNMENT
    student = term.root / "dist" / "student"
    graded = {f"notebooks/{nb.name}.ipynb" for nb in GRADED}
    everything = {p.relative_to(student).as_posix() for p in student.rglob("*") if p.is_file()}
    for name in sorted(everything - graded):  # every file a learner works with
        assert (fetched / name).is_file(), name
    for nb in GRADED:  # the graded ones at the top, where nbgrader grades them
        done = term.nbgrader("validate", f"{nb.name}.ipynb", student=RIGHT, cwd=fetched)
        assert "Success! Your notebook passes all the tests." in done.stdout, done.stdout


def test_the_whole_term_runs_in_nbgrader_tools_on_sandboxed_grades(term):
    from nbconvert.exporters import HTMLExporter

    from grading.course.autograde import autograde
    from grading.course.results import EXPORT

    submitted = term.course / "submitted"
    assert sorted(p.name for p in submitted.iterdir()) == [RIGHT, SLIP, UNTOUCHED]
    lines: list[str] = []
    results = {r.student: r for r in autograde(submitted, course=term.course, log=lines.append)}
    lost = sum(o.cell.points for o in results[RIGHT].outcomes if o.cell.id in MISTAKE.breaks)
    assert (results[RIGHT].core, results[SLIP].core, results[UNTOUCHED].core) == (
        31,
        31 - lost,
        0,
    )
    assert (results[RIGHT].stretch, results[UNTOUCHED].stretch) == (16, 0)  # counted apart

    # The formgrader lists every student as autograded, with the sandboxed scores.
    api = term.api()
    listed = {s["student"]: s for s in api.get_submissions(ASSIGNMENT)}
    assert set(listed) == {RIGHT, SLIP, UNTOUCHED}
    for student, graded in results.items():
        assert listed[student]["autograded"] is True, student
        assert listed[student]["score"] == graded.total, student  # written answers: 0 so far
        assert listed[student]["max_score"] == 55  # 31 core, 8 written, 16 stretch
    assert listed[RIGHT]["needs_manual_grade"] is True  # the written answer waits
    assert listed[UNTOUCHED]["needs_manual_grade"] is False  # "No response.": nothing to read
    # ... and opens each student's notebooks as its SubmissionHandler does (its "formgrade"
    # template): the planted script of a written answer or raw cell is text, never live.
    from nbgrader.server_extensions.formgrader import handlers

    exporter = HTMLExporter(template_name="formgrade",
                            extra_template_basedirs=[handlers.template_path])  # fmt: skip
    for student in results:
        folder = Path(api.coursedir.format_path(api.coursedir.autograded_directory, student,
                                                ASSIGNMENT))  # fmt: skip
        for nb in GRADED:
            resources = {"assignment_id": ASSIGNMENT, "notebook_id": nb.name, "index": 0,
                         "submission_id": student, "total": 3, "base_url": "",
                         "student": student, "last_name": None, "first_name": None,
                         "notebook_path": f"autograded/{student}/{nb.name}.ipynb"}  # fmt: skip
            html, _ = exporter.from_filename(str(folder / f"{nb.name}.ipynb"), resources)
            assert "sandboxed grader:" in html
            assert PLANTED not in html and "document.title = &#39;planted&#39;" not in html
            if student == RIGHT:
                assert "&lt;script&gt;document.title" in html  # shown, as text
        assert len(api.get_student_notebook_submissions(student, ASSIGNMENT)) == len(GRADED)

    # A written answer graded by hand survives a regrade, with its comment.
    set_manual_grade(term, RIGHT, "explain_last_access", "01_recency", 2.0, "Well put.")
    before = grades(term)
    assert before[RIGHT]["explain_last_access"] == 2.0
    again = {r.student: r for r in autograde(submitted, course=term.course, log=lines.append)}
    after = grades(term)
    assert after == before
    assert again[RIGHT].written["explain_last_access"]["comment"] == "Well put."
    assert term.api().get_submission(ASSIGNMENT, RIGHT)["score"] == 49  # 31 + 2 + 16

    # Late work: bo's timestamp.txt is after the due date; the course's plugin ("zero").
    from nbgrader.api import Gradebook

    from grading.course.results import gradebook_url

    with Gradebook(gradebook_url(term.course)) as gradebook:
        late = {s: gradebook.find_submission(ASSIGNMENT, s) for s in (RIGHT, SLIP, UNTOUCHED)}
        assert late[SLIP].total_seconds_late > 0
        assert late[SLIP].late_submission_penalty == 31 - lost + results[SLIP].stretch
        assert late[RIGHT].total_seconds_late == 0 == late[RIGHT].late_submission_penalty

    # Feedback reaches each student, keyed by their own secret.
    term.nbgrader("release_feedback", ASSIGNMENT)
    for student in (RIGHT, SLIP, UNTOUCHED):
        done = term.nbgrader("fetch_feedback", ASSIGNMENT, student=student)
        pages = list((term.root / "home" / student / ASSIGNMENT / "feedback").rglob("*.html"))
        assert sorted(p.stem for p in pages) == sorted(nb.name for nb in GRADED), done.stderr
        text = next(p for p in pages if p.stem == "01_recency").read_text()
        assert f"{student}: <b>{results[student].core:g} / 31</b>" in text
        assert f"counted apart): <b>{results[student].stretch:g} / 16</b>" in text
    mine = term.root / "home" / RIGHT / ASSIGNMENT / "feedback"
    page = next(mine.rglob("01_recency.html")).read_text()
    assert "explain_last_access (written answer): 2 / 2" in page and "Well put." in page

    # One export, beside nbgrader's own, with the same totals.
    term.nbgrader("export")
    with open(term.course / "grades.csv", newline="") as file:
        theirs = {row["student_id"]: row for row in csv.DictReader(file)}
    with open(term.course / EXPORT, newline="") as file:
        ours = {row["student_id"]: row for row in csv.DictReader(file)}
    assert set(ours) == set(theirs) == {RIGHT, SLIP, UNTOUCHED}
    for student, row in ours.items():
        for column in ("raw_score", "late_submission_penalty", "score", "max_score"):
            assert float(row[column]) == float(theirs[student][column]), (student, column)
        parts = [f"milestone_{n}" for n in range(1, 10)] + ["written"]
        assert sum(float(row[p]) for p in parts) == float(row["raw_score"])
        assert float(row["core"]) == sum(float(row[f"milestone_{n}"]) for n in range(1, 6))
        assert float(row["stretch"]) == sum(float(row[f"milestone_{n}"]) for n in range(6, 10))
    assert float(ours[RIGHT]["written"]) == 2 and float(ours[SLIP]["score"]) == 0


def test_no_in_kernel_path_publishes_the_solution_or_replaces_a_sandboxed_grade(term):
    from grading.course.autograde import autograde

    autograde(term.course / "submitted", course=term.course, log=lambda line: None)
    sandboxed = grades(term)
    autograded = term.course / "autograded"
    notebooks = {p: p.read_bytes() for p in autograded.rglob("*.ipynb")}
    secrets = secret_lines([(ROOT / name, name) for name in LEARNER_FILES])

    def published() -> list[str]:
        return find_leaks(term.course / "release" / ASSIGNMENT, secrets)

    term.nbgrader("generate_assignment", ASSIGNMENT, "--force")  # the command line
    assert published() == []
    api = term.api()
    assert api.generate_assignment(ASSIGNMENT)["success"]  # the formgrader's Generate button
    assert published() == []
    for args in (("autograde", ASSIGNMENT), ("autograde", ASSIGNMENT, "--force")):
        done = term.nbgrader(*args, check=False)
        assert done.returncode != 0
        assert "python -m grading autograde" in done.stdout + done.stderr
    for student in (RIGHT, SLIP, UNTOUCHED):  # the formgrader's Autograde button
        result = api.autograde(ASSIGNMENT, student)
        assert not result["success"] and "python -m grading autograde" in result["log"]
    assert grades(term) == sandboxed
    assert {p: p.read_bytes() for p in autograded.rglob("*.ipynb")} == notebooks
    listed = {s["student"]: s for s in api.get_submissions(ASSIGNMENT)}
    assert all(s["autograded"] for s in listed.values())

    # nbgrader's Generate Feedback (command and button) refuses: the pages stay the sandbox's.
    pages = {p: p.read_bytes() for p in (term.course / "feedback").rglob("*.html")}
    assert pages
    done = term.nbgrader("generate_feedback", ASSIGNMENT, "--force", check=False)
    assert done.returncode != 0
    assert "python -m grading autograde" in done.stdout + done.stderr
    for student in (RIGHT, SLIP, UNTOUCHED):
        result = api.generate_feedback(ASSIGNMENT, student)
        assert not result["success"] and "python -m grading autograde" in result["log"]
    assert {p: p.read_bytes() for p in (term.course / "feedback").rglob("*.html")} == pages
