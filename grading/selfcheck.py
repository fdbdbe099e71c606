"""`python -m grading selfcheck`: prove the grading pipeline on known submissions.

Builds both editions, then grades a batch of submissions whose right grade is known
(grading/mistakes.py): the reference solution (full marks), the untouched student
edition (zero), one-mistake learner cores (each loses exactly the points of the checks
its mistake breaks, and its feedback names the mistake), and submissions that attack
the grader (edited checks and check cells, a deleted or broken file, an endless loop,
warnings on stderr). It also proves the feedback shows no hidden check's code and that
grades.csv agrees with the table. Exit status 0 only if every expectation holds.
"""

from __future__ import annotations

import csv
import html
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from xml.etree import ElementTree

import nbformat

from grading.autograde import Result, autograde
from grading.editions import CELL_TIMEOUT, grading_environment, release
from grading.layout import ASSIGNMENT, COURSE, GRADED, MILESTONE_TESTS, ROOT, STUDENT
from grading.markers import HIDDEN, BuildError, regions
from grading.mistakes import SUBMISSIONS, Submission

TAGS = re.compile(r"<[^>]+>")


def build(submission: Submission, folder: Path) -> Path:
    """DIR/<name>/: the student edition with this submission's learner files."""
    target = folder / submission.name
    shutil.copytree(STUDENT, target)
    for name in submission.solved:
        shutil.copy2(ROOT / name, target / name)
    for name, old, new in submission.edits:
        text = (target / name).read_text()
        if text.count(old) != 1:
            raise BuildError(
                f"self-check submission {submission.name!r}: {old!r} occurs "
                f"{text.count(old)} times in {name}, not once; update grading/mistakes.py"
            )
        (target / name).write_text(text.replace(old, new))
    for name in submission.delete:
        (target / name).unlink()
    for name, content in submission.extra.items():
        (target / name).write_text(content)
    if submission.edit_check_cells:
        for nb in GRADED:
            path = target / "notebooks" / f"{nb.name}.ipynb"
            notebook = nbformat.read(path, as_version=4)
            for cell in notebook.cells:
                if cell.metadata.get("nbgrader", {}).get("grade"):
                    cell.source = 'print("all checks passed")'
            nbformat.write(notebook, path)
    return target


def feedback_text(student: str) -> str:
    """The visible text of a student's HTML feedback, all notebooks."""
    pages = sorted((COURSE / "feedback" / student / ASSIGNMENT).glob("*.html"))
    return "\n".join(html.unescape(TAGS.sub("", page.read_text())) for page in pages)


def hidden_lines() -> set[str]:
    """Lines of the hidden checks that appear nowhere in the (leak-free) student edition."""
    lines = set()
    for nb in GRADED:
        notebook = nbformat.read(ROOT / "notebooks" / f"{nb.name}.ipynb", as_version=4)
        for cell in notebook.cells:
            for region in regions(cell.source, nb.name, HIDDEN):
                lines |= {line.strip() for line in region if len(line.strip()) >= 12}
    public = set()  # a line like "run_scenario(" is also in the shipped checks' code
    for path in STUDENT.rglob("*.py"):
        public |= {line.strip() for line in path.read_text().splitlines()}
    return lines - public


def verdict(submission: Submission, result: Result, hidden: set[str]) -> list[str]:
    """What is wrong with this result, if anything."""
    problems = []
    for cell, (_, got, most) in sorted(result.cells.items()):
        expected = 0.0 if cell in submission.breaks else most
        if got != expected:
            problems.append(f"{cell}: {got:g} points, expected {expected:g}")
    text = feedback_text(submission.name)
    if not text:
        problems.append("no feedback was written")
    elif submission.says and submission.says.lower() not in text.lower():
        problems.append(f"feedback does not say {submission.says!r}")
    lines = {line.strip() for line in text.splitlines()}
    shown = sorted(hidden & lines)
    if shown:
        problems.append(f"feedback shows hidden check code: {shown[0]!r}")
    return problems


def check_csv(results: list[Result]) -> list[str]:
    with open(COURSE / "grades.csv", newline="") as file:
        rows = {row["student_id"]: row for row in csv.DictReader(file)}
    problems = []
    for result in results:
        row = rows.get(result.student)
        if row is None or float(row["total"]) != result.total:
            problems.append(f"grades.csv disagrees with the table for {result.student}")
    return problems


def student_tests() -> list[str]:
    """Run the student edition's own tests as a learner would, before writing any code.

    Expected: only the milestone tests fail; every other test passes or is skipped as
    waiting for the learner; notebook 00 runs clean and every other notebook stops at
    the learner's first stub.
    """
    problems = []
    with tempfile.TemporaryDirectory(prefix="memory-lab-student-tests-") as scratch:
        report = Path(scratch) / "report.xml"
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs"]
        command += ["--junitxml", str(report), "-o", "addopts="]
        env = grading_environment()
        env.pop("PYTHONPATH")  # the learner's repository alone, as on their machine
        done = subprocess.run(command, cwd=STUDENT, env=env, capture_output=True, text=True)
        tree = ElementTree.parse(report)
    cases = list(tree.iter("testcase"))
    failed = {c.get("classname", "") + "::" + c.get("name", "") for c in cases
              if c.find("failure") is not None or c.find("error") is not None}  # fmt: skip
    wrong = sorted(name for name in failed if not name.startswith(
        tuple(f"tests.{m.removesuffix('.py')}" for m in MILESTONE_TESTS)))  # fmt: skip
    problems += [f"student edition test failed outside the milestone tests: {n}" for n in wrong]
    for m in MILESTONE_TESTS:
        if not any(name.startswith(f"tests.{m.removesuffix('.py')}") for name in failed):
            problems.append(f"student edition: no test of {m} fails on the stubs")
    notebooks = {
        c.get("name", ""): c for c in cases if c.get("classname") == "tests.test_notebooks"
    }
    for name, case in notebooks.items():
        if "runs_top_to_bottom" not in name:
            continue
        skipped = case.find("skipped")
        if "00_start_here" in name:
            if skipped is not None or name in failed:
                problems.append("student edition: notebook 00 does not run clean")
        elif skipped is None or "stops where your code is needed" not in skipped.get("message", ""):
            problems.append(f"student edition: {name} does not stop at the learner's first stub")
    summary = (done.stdout.strip().splitlines() or ["no output"])[-1]
    print(f"  student edition's own tests: {summary}")
    return problems


def selfcheck(jobs: int | None = None, cell_timeout: int = CELL_TIMEOUT) -> int:
    start = time.monotonic()
    release(cell_timeout=cell_timeout)
    hidden = hidden_lines()
    with tempfile.TemporaryDirectory(prefix="memory-lab-selfcheck-") as folder:
        for submission in SUBMISSIONS:
            build(submission, Path(folder))
        print()
        results = autograde(Path(folder), jobs=jobs, cell_timeout=cell_timeout)
    by_name = {r.student: r for r in results}
    print("\nself-check: every submission against the grade it must get")
    failures = 0
    for submission in SUBMISSIONS:
        result = by_name[submission.name]
        maximum = sum(most for _, _, most in result.cells.values())
        lost = sum(m for c, (_, _, m) in result.cells.items() if c in submission.breaks)
        problems = verdict(submission, result, hidden)
        failures += bool(problems)
        mark = "ok  " if not problems else "FAIL"
        print(f"  {mark} {submission.name:<32} {result.total:>4g}/{maximum:g} "
              f"(expected {maximum - lost:g})"
              + "".join(f"\n         {p}" for p in problems))  # fmt: skip
    print("\nself-check: the student edition's tests, before any code is written")
    csv_problems = check_csv(results) + student_tests()
    for problem in csv_problems:
        print(f"  FAIL {problem}")
    failures += len(csv_problems)
    seconds = time.monotonic() - start
    if failures:
        print(f"\nself-check FAILED: {failures} problem(s), {seconds:.0f} s")
        return 1
    print(f"\nself-check passed: {len(SUBMISSIONS)} submissions graded as expected, "
          f"feedback free of hidden checks, grades.csv consistent ({seconds:.0f} s)")  # fmt: skip
    return 0
