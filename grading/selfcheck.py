"""`python -m grading selfcheck`: prove the grading pipeline on known submissions.

Builds both editions, then grades a batch of submissions whose right grade is known
(grading/mistakes.py): the reference solution (full marks), the untouched student
edition (zero), one-mistake learner cores (each loses exactly the points of the checks
its mistake breaks, only in its own milestone, and its feedback names the mistake),
honest edge cases (CRLF, BOM, tabs, extra helpers, numpy floats, warnings: full marks),
and attacks on the grader (patched checks, frame inspection, reading the solution or the
gradebook, writing the gradebook, surviving children, symlinks, always-equal objects,
early exit, a resubmission after a crash, HTML in the feedback, printing secrets, a
loopback connection, huge output, a hang, a fork bomb). Each attack must gain nothing
and harm no classmate. It also proves that the feedback shows no hidden check, no
secret, no script and no path of this machine, and that grades.csv agrees with the
table after every child the batch could have left has had time to act.
Exit status 0 only if every expectation holds.
"""

from __future__ import annotations

import csv
import html
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from xml.etree import ElementTree

import nbformat
import psutil

from grading.autograde import autograde
from grading.editions import CELL_TIMEOUT, grading_environment, release
from grading.grader import Graded
from grading.layout import ASSIGNMENT, COURSE, GRADED, MILESTONE_TESTS, ROOT, STUDENT
from grading.markers import HIDDEN, BuildError, regions
from grading.mistakes import RESUBMITTED, SUBMISSIONS, Submission
from grading.results import write_gradebook
from grading.sandbox import UID_BASE
from grading.verdict import CELLS, Outcome

TAGS = re.compile(r"<[^>]+>")
# A fake key, set in the environment while grading; written in two parts so that no
# secret scanner takes this file for one that leaks a real key.
FAKE_SECRET = "sk-" + "selfcheck-FAKE-0123456789abcdef"
AFTERMATH = 6  # seconds the batch's leftovers get to act before the results are read


def fill(text: str, folder: Path, port: int) -> str:
    for token, value in (("__ROOT__", ROOT), ("__COURSE__", COURSE), ("__FOLDER__", folder),
                         ("__PORT__", port)):  # fmt: skip
        text = text.replace(token, str(value))
    return text


def reformat(text: str, how: str) -> str:
    if how == "crlf":
        return text.replace("\n", "\r\n")
    if how == "bom":
        return "\ufeff" + text
    if how == "tabs":
        lines = []
        for line in text.splitlines(keepends=True):
            spaces = len(line) - len(line.lstrip(" "))
            lines.append("\t" * (spaces // 4) + " " * (spaces % 4) + line[spaces:])
        return "".join(lines)
    return text


def build(submission: Submission, folder: Path, port: int = 0) -> Path:
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
    if submission.attack:
        scoring = target / "code" / "scoring.py"
        scoring.write_text(scoring.read_text() + fill(submission.attack, folder, port))
    if submission.transform:
        for name in ("code/scoring.py", "code/retriever.py"):
            text = (target / name).read_text()
            (target / name).write_bytes(reformat(text, submission.transform).encode())
    for name, link in submission.links.items():
        path = target / name
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()
        path.symlink_to(fill(link, folder, port))
    if submission.edit_check_cells:
        for nb in GRADED:
            path = target / "notebooks" / f"{nb.name}.ipynb"
            notebook = nbformat.read(path, as_version=4)
            for cell in notebook.cells:
                if cell.metadata.get("nbgrader", {}).get("grade"):
                    cell.source = 'print("all checks passed")'
            nbformat.write(notebook, path)
    return target


def feedback_page(student: str) -> str:
    pages = sorted((COURSE / "feedback" / student / ASSIGNMENT).glob("*.html"))
    return "\n".join(page.read_text() for page in pages)


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


def verdict(submission: Submission, result: Graded, hidden: set[str]) -> list[str]:
    """What is wrong with this result, if anything."""
    problems = []
    for outcome in result.outcomes:
        cell, most = outcome.cell.id, outcome.cell.points
        expected = 0.0 if cell in submission.breaks else most
        if outcome.score != expected:
            problems.append(f"{cell}: {outcome.score:g} points, expected {expected:g}")
    raw = feedback_page(submission.name)
    text = html.unescape(TAGS.sub("", raw))
    if not raw:
        problems.append("no feedback was written")
    for phrase in filter(None, submission.says.split(" && ")):
        if phrase.lower() not in text.lower():
            problems.append(f"feedback does not say {phrase!r}")
    shown = sorted(hidden & {line.strip() for line in text.splitlines()})
    if shown:
        problems.append(f"feedback shows hidden check code: {shown[0]!r}")
    for bad, why in (("<script", "a script"), ("<img", "learner HTML"), ("://", "an address"),
                     (str(ROOT), "a path of this machine"), ("/tmp/", "a path of this machine"),
                     (FAKE_SECRET, "the instructor's secret")):  # fmt: skip
        if bad in raw or (bad == FAKE_SECRET and bad in text):
            problems.append(f"feedback holds {why}")
    return problems


def check_csv(results: list[Graded]) -> list[str]:
    try:
        with open(COURSE / "grades.csv", newline="") as file:
            rows = {row["student_id"]: row for row in csv.DictReader(file)}
    except (OSError, KeyError):
        return ["grades.csv is unreadable"]
    problems = []
    for result in results:
        row = rows.get(result.student)
        if row is None or float(row.get("total", "nan")) != result.total:
            problems.append(f"grades.csv disagrees with the table for {result.student}")
    return problems


def listen() -> tuple[socket.socket, list[bytes]]:
    """A loopback server on this machine: a submission that reaches it has escaped."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.5)
    heard: list[bytes] = []

    def serve():
        while server.fileno() != -1:
            try:
                connection, _ = server.accept()
                heard.append(connection.recv(100) or b"connected")
                connection.close()
            except OSError:
                continue

    threading.Thread(target=serve, daemon=True).start()
    return server, heard


def survivors(jobs: int) -> list[int]:
    uids = set(range(UID_BASE, UID_BASE + jobs))
    alive = []
    for process in psutil.process_iter(["uids"]):
        uid = process.info["uids"]
        if uid and uid.real in uids:
            alive.append(process.pid)
    return alive


def aftermath(results: list[Graded], jobs: int, heard: list[bytes]) -> list[str]:
    """What the batch left behind: processes, a rewritten CSV, a connection."""
    time.sleep(AFTERMATH)
    problems = check_csv(results)
    alive = survivors(jobs)
    if alive:
        problems.append(f"{len(alive)} process(es) of the grading uids outlived the batch")
    if heard:
        problems.append(f"a submission reached a loopback server on this machine: {heard[0]!r}")
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
        c.get("name", ""): c
        for c in cases
        if c.get("classname") == "tests.notebooks.test_notebooks"
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


def seed_full_grade(student: str) -> None:
    """An earlier, full grade: the resubmission that crashes must not keep it."""
    full = Graded(student)
    full.outcomes = [Outcome(cell, score=float(cell.points)) for cell in CELLS]
    write_gradebook(full)


def selfcheck(jobs: int | None = None, cell_timeout: int = CELL_TIMEOUT, isolated=True) -> int:
    start = time.monotonic()
    release(cell_timeout=cell_timeout)
    hidden = hidden_lines()
    jobs = max(1, jobs or os.cpu_count() or 1)
    server, heard = listen()
    saved = dict(os.environ)
    os.environ.update(OPENAI_API_KEY=FAKE_SECRET, MEMORY_LAB_FAKE_SECRET=FAKE_SECRET)
    failures, problems_after = 0, []
    try:
        with tempfile.TemporaryDirectory(prefix="memory-lab-selfcheck-") as folder:
            for submission in SUBMISSIONS:
                build(submission, Path(folder), server.getsockname()[1])
            classmate = (Path(folder) / "reference" / "code" / "scoring.py").read_bytes()
            seed_full_grade(RESUBMITTED.name)
            print()
            try:
                results = autograde(Path(folder), jobs=jobs, isolated=isolated)
            except Exception as error:  # an attack that breaks the batch is a failure
                print(f"\nself-check FAILED: the batch stopped: {type(error).__name__}: {error}")
                return 1
            problems_after = aftermath(results, jobs, heard)
            if (Path(folder) / "reference" / "code" / "scoring.py").read_bytes() != classmate:
                problems_after.append("a submission overwrote a classmate's submitted file")
    finally:
        os.environ.clear()
        os.environ.update(saved)
        server.close()
    by_name = {r.student: r for r in results}
    print("\nself-check: every submission against the grade it must get")
    for submission in SUBMISSIONS:
        result = by_name[submission.name]
        maximum = sum(o.cell.points for o in result.outcomes)
        lost = sum(o.cell.points for o in result.outcomes if o.cell.id in submission.breaks)
        problems = verdict(submission, result, hidden)
        failures += bool(problems)
        mark = "ok  " if not problems else "FAIL"
        print(f"  {mark} {submission.name:<36} {result.total:>4g}/{maximum:g} "
              f"(expected {maximum - lost:g})"
              + "".join(f"\n         {p}" for p in problems))  # fmt: skip
    print("\nself-check: after the batch, and the student edition's tests")
    problems_after += student_tests()
    for problem in problems_after:
        print(f"  FAIL {problem}")
    failures += len(problems_after)
    seconds = time.monotonic() - start
    if not isolated:
        print("\n(this run was NOT isolated: --no-isolation)")
    if failures:
        print(f"\nself-check FAILED: {failures} problem(s), {seconds:.0f} s")
        return 1
    print(f"\nself-check passed: {len(SUBMISSIONS)} submissions graded as expected, "
          f"feedback free of hidden checks and secrets, nothing outlived the batch, "
          f"grades.csv consistent ({seconds:.0f} s)")  # fmt: skip
    return 0
