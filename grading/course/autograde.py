"""`python -m grading autograde DIR`: grade every DIR/<student_id>/ submission.

Each DIR/<student_id>/ is a filled-in student edition, or what `nbgrader collect` puts
in dist/course/submitted/<student_id>/ (the assignment one folder down, with the
student's timestamp.txt and submission_secret.txt). What is graded is the learner's
code: their code/scoring.py and code/retriever.py, exactly as submitted, each run in a
sandboxed worker (grading/sandbox/launcher.py) that gets inputs only; the verdict is computed
here, in the trusted parent (grading/judge/verdict.py), which never imports learner code.
Notebooks are not run: edits to notebook cells cannot change a grade. Milestones are
graded independently (grading/judge/grader.py).

Students are graded in parallel (a worker per core). One student's failure never stops
the batch: it is "grading failed", 0 points, never an earlier grade.

`grade_and_record` is one submission, graded and then recorded: the unit a batch (here)
or a queue of collected submissions is made of.

Out (grading/course/results.py): nbgrader's records of each submission (gradebook,
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

from grading.course.editions import CELL_TIMEOUT, release
from grading.course.gradebook import choose, opened, reach, shown, transaction
from grading.course.results import (
    EXPORT,
    fill_gradebook,
    gradebook_url,
    late_penalty,
    maxima,
    write_autograded,
    write_csv,
    write_feedback,
    written_grades,
)
from grading.judge.grader import (
    SUBMISSION_SECONDS,
    Collected,
    Graded,
    collect,
    grade,
    grade_collected,
)
from grading.judge.verdict import CELLS, Outcome
from grading.layout import ASSIGNMENT, COURSE, REGISTRY
from grading.markers import BuildError
from grading.points import stale
from grading.sandbox.cgroup import describe
from grading.sandbox.launcher import probe

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


def grade_safely(submission: Path | Collected, slot: int = 0, isolated: bool = True) -> Graded:
    """grade(); an unexpected error is 'grading failed', 0 points, never an earlier grade."""
    try:
        if isinstance(submission, Collected):  # collected elsewhere (grading/course/queue.py)
            return grade_collected(submission, slot, isolated)
        return grade(submission, slot, isolated)
    except Exception as error:  # one student's failure never stops the batch
        name = submission.student if isinstance(submission, Collected) else submission.name
        failed = Graded(name, isolated=isolated)
        failed.notes = [f"grading failed: 0 points ({type(error).__name__}; see the log)"]
        failed.outcomes = [Outcome(c, message="grading failed") for c in CELLS]
        traceback.print_exc()
        return failed


def record(graded: Graded, course: Path = COURSE) -> Graded:
    """Write nbgrader's records of one graded submission; a failure is a note, not a stop.

    Called only once the submission's sandboxes are gone. The gradebook rows and the late
    penalty first, in one transaction (a grader killed meanwhile leaves no half-graded
    submission); then the autograded notebooks and the feedback pages, which show the
    written answers' grades as they stand.
    """
    with RECORDING:
        try:
            with transaction(gradebook_url(course)) as (gradebook, _):
                record_rows(gradebook, graded, course)
            record_files(graded, course)
        except Exception as error:  # one student's failure never stops the batch
            graded.notes.append(f"results not written: {type(error).__name__}: {error}")
    return graded


def record_rows(gradebook, graded: Graded, course: Path = COURSE) -> None:
    """The submission's gradebook rows and late penalty, in the caller's transaction."""
    fill_gradebook(gradebook, graded, graded.folder)
    graded.penalty = late_penalty(gradebook, graded.student, course)


def record_files(graded: Graded, course: Path = COURSE) -> None:
    """The autograded notebooks and feedback pages, from the committed gradebook."""
    write_autograded(graded, course, graded.folder)
    graded.written = written_grades(graded.student, course)
    write_feedback(graded, course, graded.folder, graded.written)


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
    url: str | None = None,
    student: str | None = None,
    assignment: str | None = None,
    queued: bool = False,
    lease: float | None = None,
) -> list[Graded]:
    """Grade every student of `folder` (or only `student`), in parallel; a table, the export
    and feedback. `url`: the gradebook (else the course's); `queued`: through the
    gradebook's queue, shared with every `python -m grading worker` (grading/course/queue.py)."""
    if isolated:
        try:
            probe()
        except RuntimeError as error:
            raise BuildError(str(error)) from None
    students = chosen(submissions_in(folder, log), folder, student, assignment)
    if url is not None:
        choose(course, url)
    if not knows_assignment(gradebook_url(course)):
        if course != COURSE:
            raise BuildError(f"the gradebook {shown(gradebook_url(course))} has no assignment "
                             f"{ASSIGNMENT!r}: build the course first (python -m grading "
                             "release)")  # fmt: skip
        log("no course yet: building it first (python -m grading release)")
        release(cell_timeout=CELL_TIMEOUT, log=log)
    check_release(course)
    jobs = max(1, jobs or os.cpu_count() or 1)
    if queued:
        return through_queue(students, jobs, isolated, course, log, lease)
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
    """Points per milestone, the core's total and the stretch points apart (the optional
    milestones, M6 onward), one row per student, maxima in the header."""
    most = maxima()
    core = sum(m for n, m in most.items() if n < REGISTRY.FIRST_STRETCH)
    headers = [f"M{n} /{m:g}" for n, m in most.items()]
    headers.append(f"total /{core:g}")
    stretch = sum(most.values()) - core
    if stretch:
        headers.append(f"stretch /{stretch:g}")
    width = max([len("student"), *(len(r.student) for r in results)])
    lines = [f"{'student':<{width}}" + "".join(f"  {h}" for h in headers)]
    for r in results:
        points = [r.milestone(n) for n in most] + [r.core] + ([r.stretch] if stretch else [])
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


def through_queue(students, jobs, isolated, course, log, lease) -> list[Graded]:
    """Queue the batch in the gradebook's database, then grade from it like any grader."""
    from grading.course import queue as grading_queue

    url = gradebook_url(course)
    engine = grading_queue.engine_for(url)
    try:
        count = grading_queue.enqueue(engine, ASSIGNMENT, [collect(s) for s in students])
    finally:
        engine.dispose()
    log(f"queued {count} submissions in {shown(url)}; other graders: python -m grading worker")
    results = work_queue(jobs, isolated, course, log, lease)
    export = write_csv(course / EXPORT, course)
    log("")
    log(f"graded here ({len(results)} of {count}; the rest by other graders):")
    log(table(results, isolated))
    log(f"grades:   {export} (every student graded so far, whoever graded them)")
    return results


def work_queue(jobs, isolated, course, log, lease, first_slot: int = 0) -> list[Graded]:
    """`jobs` graders in this process, each on its own sandbox slot, until the queue is done."""
    from grading.course import queue as grading_queue

    if not isolated:
        log(NOT_ISOLATED)
    url = gradebook_url(course)

    def rows(gradebook, graded: Graded) -> None:
        with RECORDING:  # subtle: nbgrader's late-penalty plugin is one object per call
            record_rows(gradebook, graded, course)

    def files(graded: Graded) -> None:
        with RECORDING:
            record_files(graded, course)

    def one(slot: int) -> list[Graded]:
        def grade_one(collected: Collected) -> Graded:
            return grade_safely(collected, slot, isolated)

        seconds = lease or grading_queue.LEASE_SECONDS
        return grading_queue.work(url, grade_one, rows, files, seconds, log)

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        done = [g for part in pool.map(one, range(first_slot, first_slot + jobs)) for g in part]
    return sorted(done, key=lambda r: r.student)


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
    if url is not None:
        choose(course, url)
    results = work_queue(max(1, jobs or 1), isolated, course, print, lease, first_slot)
    print(f"graded {len(results)} submissions; the queue is done")
    return 0
