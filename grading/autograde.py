"""`python -m grading autograde DIR`: grade every DIR/<student_id>/ submission.

Each DIR/<student_id>/ is a filled-in student edition (or a folder holding one). What is
graded is the learner's code: their code/scoring.py and code/retriever.py, exactly as
submitted, each run in a sandboxed worker (grading/sandbox.py) that gets inputs only;
the verdict is computed here, in the trusted parent (grading/verdict.py), which never
imports learner code. Notebooks are not run: edits to notebook cells cannot change a
grade. Milestones are graded independently (grading/grader.py).

Students are graded in parallel (a worker per core). One student's failure never stops
the batch: it is "grading failed", 0 points, never an earlier grade.

Out: a table on the terminal, dist/course/grades.csv (student_id, one column per
milestone, total; written last, from the gradebook), one HTML feedback page per student
in dist/course/feedback/<student_id>/milestones/, and nbgrader's gradebook
dist/course/gradebook.db for the formgrader.
"""

from __future__ import annotations

import os
import queue
import re
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from grading.cgroup import describe
from grading.editions import CELL_TIMEOUT, release
from grading.gradebook import database_url, opened, reach, shown
from grading.grader import SUBMISSION_SECONDS, Graded, collect, grade, grade_collected
from grading.layout import ASSIGNMENT, COURSE
from grading.markers import BuildError
from grading.results import maxima, record, write_csv, write_feedback, write_gradebook
from grading.sandbox import probe
from grading.verdict import CELLS, Outcome

STUDENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@+-]{0,63}")  # the whole name: fullmatch
NOT_ISOLATED = "NOT ISOLATED: learner code ran without a sandbox (--no-isolation)"


def submissions_in(folder: Path, log: Callable[[str], None]) -> list[Path]:
    """The student folders of `folder`, each named by a usable student id."""
    if not folder.is_dir():
        raise BuildError(f"{folder} is not a folder of submissions (one folder per student)")
    students = []
    for path in sorted(folder.iterdir()):
        if path.name.startswith("."):
            continue
        if path.is_symlink():
            log(f"skipped {path.name!r}: a student is a folder, not a link")
            continue
        if not path.is_dir():
            continue
        if not STUDENT_ID.fullmatch(path.name):  # subtle: `$` would match before a final \n
            log(f"skipped {path.name!r}: a student id is letters, digits and _ . @ + -")
            continue
        students.append(path)
    if not students:
        raise BuildError(f"{folder} holds no student folders (DIR/<student_id>/code/...)")
    return students


def safely(submission: Path, slots: queue.Queue, isolated: bool) -> Graded:
    """grade(), on a free worker slot; an unexpected error is 'grading failed', 0 points."""
    slot = slots.get()
    try:
        return grade(submission, slot, isolated)
    except Exception as error:  # one student's failure never stops the batch
        failed = Graded(submission.name, isolated=isolated)
        failed.notes = [f"grading failed: 0 points ({type(error).__name__}; see the log)"]
        failed.outcomes = [Outcome(c, message="grading failed") for c in CELLS]
        traceback.print_exc()
        return failed
    finally:
        slots.put(slot)


def autograde(
    folder: Path,
    jobs: int | None = None,
    isolated: bool = True,
    course: Path = COURSE,
    log: Callable[[str], None] = print,
    url: str | None = None,
    student: str | None = None,
    assignment: str | None = None,
    queued: bool = False,
    lease: float | None = None,
) -> list[Graded]:
    """Grade every student of `folder` (or only `student`), in parallel; a table, grades.csv
    and feedback. `queued`: through the gradebook's queue, shared with other graders."""
    if isolated:
        try:
            probe()
        except RuntimeError as error:
            raise BuildError(str(error)) from None
    students = chosen(submissions_in(folder, log), folder, student, assignment)
    url = database_url(course, url)
    if not knows_assignment(url):
        if course != COURSE:
            raise BuildError(f"the gradebook {shown(url)} has no assignment {ASSIGNMENT!r}: "
                             "build the course first (python -m grading release)")  # fmt: skip
        log("no course yet: building it first (python -m grading release)")
        release(cell_timeout=CELL_TIMEOUT, log=log)
    jobs = max(1, jobs or os.cpu_count() or 1)
    if queued:
        return through_queue(students, url, jobs, isolated, course, log, lease)
    log(f"grading {len(students)} submissions, {jobs} at a time ...")
    log(f"  {describe()}")  # whether the kernel caps each worker's memory as a whole
    if not isolated:
        log(NOT_ISOLATED)
    slots: queue.Queue = queue.Queue()
    for slot in range(jobs):
        slots.put(slot)
    results = []
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        running = [pool.submit(safely, s, slots, isolated) for s in students]
        for done in as_completed(running):
            graded = done.result()  # its sandboxes are gone: only now is anything written
            try:
                write_gradebook(graded, course, url)
                write_feedback(graded, course)
            except Exception as error:  # one student's failure never stops the batch
                graded.notes.append(f"results not written: {type(error).__name__}: {error}")
            results.append(graded)
            log(f"[{len(results)}/{len(students)}] {graded.student}: "
                f"{graded.total:g}/{sum(maxima().values()):g} in {graded.seconds:.1f} s"
                + "".join(f"\n      {note}" for note in graded.notes
                          if note != "graded code/"))  # fmt: skip
    results.sort(key=lambda r: r.student)
    write_csv(course / "grades.csv", course, [r.student for r in results], url)
    log("")
    log(table(results, isolated))
    log("")
    log("grades:   dist/course/grades.csv")
    log(f"feedback: dist/course/feedback/<student_id>/{ASSIGNMENT}/feedback.html")
    return results


def chosen(
    students: list[Path], folder: Path, student: str | None, assignment: str | None
) -> list[Path]:
    """--student: that one submission only; --assignment: the course's one, by name."""
    if assignment is not None and assignment != ASSIGNMENT:
        raise BuildError(f"--assignment {assignment!r}: this course grades one assignment, "
                         f"{ASSIGNMENT!r}")  # fmt: skip
    if student is None:
        return students
    picked = [path for path in students if path.name == student]
    if not picked:
        raise BuildError(f"--student {student!r}: no usable folder {folder / student} "
                         "(one folder per student, named by the student id)")  # fmt: skip
    return picked


def knows_assignment(url: str) -> bool:
    """Whether the gradebook holds the assignment (a missing SQLite file is not made)."""
    from nbgrader.api import MissingEntry

    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).is_file():
        return False
    reach(url)
    with opened(url) as gradebook:
        try:
            gradebook.find_assignment(ASSIGNMENT)
        except MissingEntry:
            return False
    return True


def through_queue(students, url, jobs, isolated, course, log, lease) -> list[Graded]:
    """Queue the batch in the gradebook's database, then grade from it like any grader."""
    from grading import queue as grading_queue

    engine = grading_queue.engine_for(url)
    try:
        count = grading_queue.enqueue(engine, ASSIGNMENT, [collect(s) for s in students])
    finally:
        engine.dispose()
    log(f"queued {count} submissions in {shown(url)}; other graders: python -m grading worker")
    results = work_queue(url, jobs, isolated, course, log, lease)
    write_csv(course / "grades.csv", course, [s.name for s in students], url)
    log(f"grades:   {course / 'grades.csv'} (every student of the batch, whoever graded them)")
    return results


def work_queue(url, jobs, isolated, course, log, lease, first_slot: int = 0) -> list[Graded]:
    """`jobs` graders in this process, each on its own sandbox slot, until the queue is done."""
    from grading import queue as grading_queue

    if not isolated:
        log(NOT_ISOLATED)

    def one(slot: int) -> list[Graded]:
        def grade_one(collected):
            return safely_collected(collected, slot, isolated)

        def feedback(graded: Graded) -> None:
            write_feedback(graded, course)

        return grading_queue.work(
            url, grade_one, record, feedback, lease or grading_queue.LEASE_SECONDS, log
        )

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        done = [g for part in pool.map(one, range(first_slot, first_slot + jobs)) for g in part]
    return sorted(done, key=lambda r: r.student)


def safely_collected(collected, slot: int, isolated: bool) -> Graded:
    """grade_collected(); an unexpected error is 'grading failed', 0 points."""
    try:
        return grade_collected(collected, slot, isolated)
    except Exception as error:  # one student's failure never stops the batch
        failed = Graded(collected.student, isolated=isolated)
        failed.notes = [f"grading failed: 0 points ({type(error).__name__}; see the log)"]
        failed.outcomes = [Outcome(c, message="grading failed") for c in CELLS]
        traceback.print_exc()
        return failed


def table(results: list[Graded], isolated: bool = True) -> str:
    """Points per milestone and in total, one row per student, maxima in the header."""
    most = maxima()
    headers = [f"M{n} /{m:g}" for n, m in most.items()]
    headers.append(f"total /{sum(most.values()):g}")
    width = max([len("student"), *(len(r.student) for r in results)])
    lines = [f"{'student':<{width}}" + "".join(f"  {h}" for h in headers)]
    for r in results:
        points = [r.milestone(n) for n in most] + [r.total]
        late = f"  time budget of {SUBMISSION_SECONDS:g} s used up" if r.out_of_time else ""
        lines.append(
            f"{r.student:<{width}}"
            + "".join(f"  {p:>{len(h)}g}" for p, h in zip(points, headers))
            + late
        )
    if not isolated:
        lines.append(NOT_ISOLATED)
    return "\n".join(lines)


def autograde_command(folder: Path, jobs: int | None, isolated: bool = True, **options) -> int:
    autograde(folder, jobs=jobs, isolated=isolated, **options)
    return 0


def worker_command(
    jobs: int | None, isolated: bool, course: Path, url: str | None, lease, first_slot: int
) -> int:
    """`python -m grading worker`: grade from the gradebook's queue until it is done."""
    if isolated:
        try:
            probe()
        except RuntimeError as error:
            raise BuildError(str(error)) from None
    url = database_url(course, url)
    results = work_queue(url, max(1, jobs or 1), isolated, course, print, lease, first_slot)
    print(f"graded {len(results)} submissions; the queue is done")
    return 0
