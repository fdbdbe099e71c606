"""`python -m grading autograde DIR`: grade every DIR/<student_id>/ with nbgrader.

Each DIR/<student_id>/ is a filled-in student edition (or a folder holding one). What
is graded is the learner's code: their code/scoring.py and code/retriever.py, exactly
as submitted, run by the released notebooks 01-04 with the instructor's copy of every
other file (the checks included). A learner's edits to notebook cells therefore cannot
change a grade; nbgrader also restores any check cell it finds edited or deleted.

Students are graded in parallel, one nbgrader process each (a process per core). A
submission whose code hangs loses the cell that hangs (a cell timeout) and, if the
whole notebook run exceeds its time, the rest; the batch goes on either way.

Out: a table on the terminal, dist/course/grades.csv (student_id, one column per
milestone, total), HTML feedback in dist/course/feedback/<student_id>/milestones/, and the
nbgrader gradebook dist/course/gradebook.db for the formgrader.
"""

from __future__ import annotations

import contextlib
import csv
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from grading.editions import CELL_TIMEOUT, grading_environment, nbgrader, release
from grading.layout import ASSIGNMENT, COURSE, GRADED, LEARNER_FILES
from grading.markers import BuildError

STUDENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@+-]{0,63}$")
STUDENT_TIMEOUT = 600  # seconds for one student's four notebooks, kernel starts included


@dataclass
class Result:
    """One student's grade: points per check cell, and what went wrong on the way."""

    student: str
    cells: dict[str, tuple[str, float, float]] = field(default_factory=dict)  # id: nb, got, max
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def milestone(self, number: int) -> float:
        names = {nb.name for nb in GRADED if nb.milestone == number}
        return sum(got for notebook, got, _ in self.cells.values() if notebook in names)

    @property
    def total(self) -> float:
        return sum(got for _, got, _ in self.cells.values())


def find_root(submission: Path) -> Path | None:
    """The folder of a submission that holds code/ (the folder itself, or one below it)."""
    for depth in range(3):
        pattern = "/".join(["*"] * depth + ["code"]) if depth else "code"
        found = sorted(p.parent for p in submission.glob(pattern) if p.is_dir())
        if depth:  # never a hidden folder (.git, .ipynb_checkpoints) inside the submission
            found = [p for p in found if not any(x.startswith(".") for x in p.parts[-depth:])]
        if found:
            return found[0]
    return None


def stage(submission: Path, student: str) -> list[str]:
    """submitted/<student>/milestones/: the released notebooks beside the learner's code."""
    target = COURSE / "submitted" / student / ASSIGNMENT
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    release_dir = COURSE / "release" / ASSIGNMENT
    for nb in GRADED:
        shutil.copy2(release_dir / f"{nb.name}.ipynb", target / f"{nb.name}.ipynb")
    root = find_root(submission)
    notes = []
    if root is None:
        return [f"no code/ folder in {submission.name}/: nothing to grade"]
    for name in LEARNER_FILES:
        if (root / name).is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / name, target / name)
        else:
            notes.append(f"{name} is missing: what depends on it scores 0")
    return notes


def _kill_tree(process: subprocess.Popen) -> None:
    """Stop nbgrader and everything it started, kernels included."""
    try:
        family = psutil.Process(process.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        family = []
    for member in [*family, process]:
        with contextlib.suppress(psutil.NoSuchProcess, ProcessLookupError):
            member.kill()
    process.wait()


def run_autograde(student: str, cell_timeout: int, timeout: float) -> list[str]:
    """nbgrader autograde for one student; its log goes to dist/course/logs/."""
    command = [sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT]
    command += ["--student", student, "--create", "--force", f"--Execute.timeout={cell_timeout}"]
    logs = COURSE / "logs"
    logs.mkdir(exist_ok=True)
    notes = []
    with open(logs / f"{student}.log", "w") as log:
        process = subprocess.Popen(
            command, cwd=COURSE, env=grading_environment(), stdout=log, stderr=subprocess.STDOUT
        )
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_tree(process)
            notes.append(f"stopped after {timeout:.0f} s: what was not graded by then scores 0")
    if process.returncode not in (0, None) and not notes:
        notes.append(f"nbgrader reported errors: see dist/course/logs/{student}.log")
    return notes


def read_scores(student: str) -> dict[str, tuple[str, float, float]]:
    """{grade cell id: (notebook, points, max points)} from the gradebook; missing is 0."""
    from nbgrader.api import Gradebook, MissingEntry

    cells = {}
    with Gradebook(f"sqlite:///{COURSE / 'gradebook.db'}") as gradebook:
        assignment = gradebook.find_assignment(ASSIGNMENT)
        for notebook in assignment.notebooks:
            for cell in notebook.grade_cells:
                cells[cell.name] = (notebook.name, 0.0, float(cell.max_score))
        try:
            submission = gradebook.find_submission(ASSIGNMENT, student)
        except MissingEntry:
            return cells
        for notebook in submission.notebooks:
            for grade in notebook.grades:
                if grade.score is not None:
                    cells[grade.name] = (notebook.name, float(grade.score), float(grade.max_score))
    return cells


def grade_student(submission: Path, cell_timeout: int, timeout: float) -> Result:
    """Stage, autograde and write feedback for one student."""
    start = time.monotonic()
    result = Result(submission.name)
    result.notes += stage(submission, result.student)
    result.notes += run_autograde(result.student, cell_timeout, timeout)
    feedback = nbgrader(
        "generate_feedback", ASSIGNMENT, "--student", result.student, "--force",
        cwd=COURSE, timeout=300,
    )  # fmt: skip
    if feedback.returncode != 0:
        result.notes.append("no HTML feedback: nbgrader generate_feedback failed")
    result.cells = read_scores(result.student)
    result.seconds = time.monotonic() - start
    return result


def submissions_in(folder: Path, log: Callable[[str], None]) -> list[Path]:
    """The student folders of `folder`, each named by a usable student id."""
    if not folder.is_dir():
        raise BuildError(f"{folder} is not a folder of submissions (one folder per student)")
    students = []
    for path in sorted(folder.iterdir()):
        if path.name.startswith(".") or not path.is_dir():
            continue
        if not STUDENT_ID.match(path.name):
            log(f"skipped {path.name!r}: a student id is letters, digits and _ . @ + -")
            continue
        students.append(path)
    if not students:
        raise BuildError(f"{folder} holds no student folders (DIR/<student_id>/code/...)")
    return students


def autograde(
    folder: Path,
    jobs: int | None = None,
    cell_timeout: int = CELL_TIMEOUT,
    timeout: float = STUDENT_TIMEOUT,
    log: Callable[[str], None] = print,
) -> list[Result]:
    """Grade every student of `folder`, in parallel; a table, grades.csv and feedback."""
    students = submissions_in(folder, log)
    if not (COURSE / "gradebook.db").is_file() or not (COURSE / "release" / ASSIGNMENT).is_dir():
        log("no course yet: building it first (python -m grading release)")
        release(cell_timeout=cell_timeout, log=log)
    jobs = max(1, jobs or os.cpu_count() or 1)
    log(f"grading {len(students)} submissions, {jobs} at a time ...")
    results = []
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        running = {pool.submit(grade_student, s, cell_timeout, timeout): s for s in students}
        for done in as_completed(running):
            result = done.result()
            results.append(result)
            maximum = sum(cells[2] for cells in result.cells.values())
            log(
                f"[{len(results)}/{len(students)}] {result.student}: "
                f"{result.total:g}/{maximum:g} in {result.seconds:.0f} s"
                + "".join(f"\n      {note}" for note in result.notes)
            )
    results.sort(key=lambda r: r.student)
    write_csv(results, COURSE / "grades.csv")
    log("")
    log(table(results))
    log("")
    log("grades:   dist/course/grades.csv")
    log(f"feedback: dist/course/feedback/<student_id>/{ASSIGNMENT}/*.html")
    return results


def milestone_maxima(results: list[Result]) -> dict[int, float]:
    """{milestone: the points it is worth}, from the gradebook's cells."""
    maxima = {nb.milestone: 0.0 for nb in GRADED}
    milestone_of = {nb.name: nb.milestone for nb in GRADED}
    for notebook, _, most in results[0].cells.values() if results else []:
        maxima[milestone_of[notebook]] += most
    return maxima


def write_csv(results: list[Result], path: Path) -> None:
    numbers = sorted({nb.milestone for nb in GRADED})
    with open(path, "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["student_id", *[f"milestone_{n}" for n in numbers], "total"])
        for r in results:
            writer.writerow([r.student, *[f"{r.milestone(n):g}" for n in numbers], f"{r.total:g}"])


def table(results: list[Result]) -> str:
    """Points per milestone and in total, one row per student, maxima in the header."""
    maxima = milestone_maxima(results)
    headers = [f"M{n} /{most:g}" for n, most in maxima.items()]
    headers.append(f"total /{sum(maxima.values()):g}")
    width = max([len("student"), *(len(r.student) for r in results)])
    lines = [f"{'student':<{width}}" + "".join(f"  {h}" for h in headers)]
    for r in results:
        points = [r.milestone(n) for n in maxima] + [r.total]
        lines.append(
            f"{r.student:<{width}}" + "".join(f"  {p:>{len(h)}g}" for p, h in zip(points, headers))
        )
    return "\n".join(lines)


def autograde_command(folder: Path, jobs: int | None, cell_timeout: int) -> int:
    autograde(folder, jobs=jobs, cell_timeout=cell_timeout)
    return 0
