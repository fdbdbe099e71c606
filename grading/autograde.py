"""`python -m grading autograde DIR`: grade every DIR/<student_id>/ submission.

Each DIR/<student_id>/ is a filled-in student edition, or what `nbgrader collect` puts
in dist/course/submitted/<student_id>/ (the assignment one folder down, with the
student's timestamp.txt and submission_secret.txt). What is graded is the learner's
code: their code/scoring.py and code/retriever.py, exactly as submitted, each run in a
sandboxed worker (grading/sandbox.py) that gets inputs only; the verdict is computed
here, in the trusted parent (grading/verdict.py), which never imports learner code.
Notebooks are not run: edits to notebook cells cannot change a grade. Milestones are
graded independently (grading/grader.py).

Students are graded in parallel (a worker per core). One student's failure never stops
the batch: it is "grading failed", 0 points, never an earlier grade.

`grade_and_record` is one submission, graded and then recorded: the unit a batch (here)
or a queue of collected submissions is made of.

Out (grading/results.py): nbgrader's records of each submission (gradebook,
autograded/, late penalty, feedback/<student_id>/milestones/<notebook>.html), a table on
the terminal, and dist/course/memory-lab-grades.csv, written last, from the gradebook.
"""

from __future__ import annotations

import os
import queue
import re
import threading
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from grading.cgroup import describe
from grading.editions import CELL_TIMEOUT, release
from grading.grader import SUBMISSION_SECONDS, Graded, grade
from grading.layout import ASSIGNMENT, COURSE
from grading.markers import BuildError
from grading.points import stale
from grading.results import (
    EXPORT,
    assign_late_penalties,
    maxima,
    write_autograded,
    write_csv,
    write_feedback,
    write_gradebook,
    written_grades,
)
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


RECORDING = threading.Lock()  # one student's records at a time, in this process


def safely(submission: Path, slots: queue.Queue, isolated: bool) -> Graded:
    """grade(), on a free worker slot; an unexpected error is 'grading failed', 0 points."""
    slot = slots.get()
    try:
        return grade_safely(submission, slot, isolated)
    finally:
        slots.put(slot)


def grade_safely(submission: Path, slot: int = 0, isolated: bool = True) -> Graded:
    """grade(); an unexpected error is 'grading failed', 0 points, never an earlier grade."""
    try:
        return grade(submission, slot, isolated)
    except Exception as error:  # one student's failure never stops the batch
        failed = Graded(submission.name, isolated=isolated)
        failed.notes = [f"grading failed: 0 points ({type(error).__name__}; see the log)"]
        failed.outcomes = [Outcome(c, message="grading failed") for c in CELLS]
        traceback.print_exc()
        return failed


def record(graded: Graded, course: Path = COURSE) -> Graded:
    """Write nbgrader's records of one graded submission; a failure is a note, not a stop.

    Called only once the submission's sandboxes are gone. Gradebook first (the regrade
    updates it in place), then the autograded notebooks, the late penalty and the
    feedback pages, which show the written answers' grades as they stand.
    """
    with RECORDING:
        try:
            write_gradebook(graded, course, graded.folder)
            write_autograded(graded, course, graded.folder)
            graded.penalty = assign_late_penalties(graded.student, course)
            graded.written = written_grades(graded.student, course)
            write_feedback(graded, course, graded.folder, graded.written)
        except Exception as error:  # one student's failure never stops the batch
            graded.notes.append(f"results not written: {type(error).__name__}: {error}")
    return graded


def grade_and_record(
    submission: Path, course: Path = COURSE, slot: int = 0, isolated: bool = True
) -> Graded:
    """Grade ONE submission (DIR/<student_id>/) in its sandboxes, then record it."""
    return record(grade_safely(submission, slot, isolated), course)


def check_release(course: Path = COURSE) -> None:
    """Refuse to grade when the course's release and notebooks/ disagree, naming each cell."""
    problems = stale(course)
    if problems:
        raise BuildError(
            "the course was released from other notebooks than notebooks/ holds now; "
            "nothing was graded:\n  " + "\n  ".join(problems) + "\nA changed point value "
            "or hidden check: run `python -m grading release`, then grade again (manual "
            "grades stay). A cell added or removed: `python -m grading reshape`."
        )


def autograde(
    folder: Path,
    jobs: int | None = None,
    isolated: bool = True,
    course: Path = COURSE,
    log: Callable[[str], None] = print,
) -> list[Graded]:
    """Grade every student of `folder`, in parallel; nbgrader's records, a table, the export."""
    if isolated:
        try:
            probe()
        except RuntimeError as error:
            raise BuildError(str(error)) from None
    students = submissions_in(folder, log)
    if not (course / "gradebook.db").is_file():
        log("no course yet: building it first (python -m grading release)")
        release(cell_timeout=CELL_TIMEOUT, log=log)
    check_release(course)
    jobs = max(1, jobs or os.cpu_count() or 1)
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
            graded = record(done.result(), course)  # its sandboxes are gone: now it is written
            results.append(graded)
            log(f"[{len(results)}/{len(students)}] {graded.student}: "
                f"{graded.total:g}/{sum(maxima().values()):g} in {graded.seconds:.1f} s"
                + "".join(f"\n      {note}" for note in graded.notes
                          if note != "graded code/"))  # fmt: skip
    results.sort(key=lambda r: r.student)
    export = write_csv(course / EXPORT, course)
    log("")
    log(table(results, isolated))
    log("")
    log(f"grades:   {export} (every student graded so far; formgrader: nbgrader formgrader)")
    log(f"feedback: {course}/feedback/<student_id>/{ASSIGNMENT}/<notebook>.html "
        "(nbgrader release_feedback hands them out)")  # fmt: skip
    return results


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
        late += f"  late: -{r.penalty:g} (nbgrader's late penalty)" if r.penalty else ""
        lines.append(
            f"{r.student:<{width}}"
            + "".join(f"  {p:>{len(h)}g}" for p, h in zip(points, headers))
            + late
        )
    if not isolated:
        lines.append(NOT_ISOLATED)
    return "\n".join(lines)


def autograde_command(folder: Path, jobs: int | None, isolated: bool = True) -> int:
    autograde(folder, jobs=jobs, isolated=isolated)
    return 0
