"""`python -m grading selfcheck`: prove the grading pipeline on known submissions.

Builds both editions, then grades a batch of submissions whose right grade is known
(mistakes.py and attacks.py): the reference solution (full marks), the untouched student
edition (zero), one-mistake learner cores (each loses exactly the points of the checks
its mistake breaks, only in its own milestone, and its feedback names the mistake),
honest edge cases (CRLF, BOM, tabs, extra helpers, numpy floats, warnings: full marks),
and attacks on the grader (patched checks, frame inspection, reading the solution or the
gradebook, writing the gradebook, surviving children, symlinks, always-equal objects,
early exit, a resubmission after a crash, HTML in the feedback, printing secrets, a
loopback connection, huge output, a hang, a fork bomb, a crafted traceback, echoed hidden
inputs, a table of the public answers, a slow submission). First, one at a time on one
slot, the kernel channels: the keyring pair (across two submissions and a regrade),
shared-memory, tmpfs and many-process memory bombs, with the host's Shmem and
MemAvailable sampled. Each attack must gain nothing and harm no classmate. It also
proves that the feedback shows no hidden check, hidden input, solution line (where none
was handed in), secret, script or path of this machine, that no descriptor leaked, and
that the export (memory-lab-grades.csv) agrees with the table after every child the batch
could have left has had time to act.

Everything happens in a scratch course (a temporary dist/ of its own, built by the same
release): the live course's gradebook, feedback and export are never touched, and the
self-check fails if they changed.
Exit status 0 only if every expectation holds.
"""

from __future__ import annotations

import csv
import html
import json
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

from grading.course.autograde import autograde
from grading.course.editions import CELL_TIMEOUT, grading_environment, release
from grading.course.results import EXPORT, write_gradebook
from grading.judge.grader import Graded
from grading.judge.verdict import CELLS, Outcome, request
from grading.layout import (
    ASSIGNMENT,
    COURSE,
    GRADED,
    LEARNER_FILES,
    MILESTONE_TESTS,
    REGISTRY,
    ROOT,
    STUDENT,
)
from grading.markers import HIDDEN, BuildError, regions, secret_lines
from grading.sandbox import cgroup
from grading.sandbox.launcher import SLOTS, UID_BASE, slot_in_use
from grading.selfcheck.attacks import (
    ATTACK_SUBMISSIONS,
    ECHO,
    KERNEL,
    KEYRING_FIRST,
    LINKS,
    RESUBMITTED,
)
from grading.selfcheck.mistakes import SUBMISSIONS, Submission

BATCH = [*SUBMISSIONS, *ATTACK_SUBMISSIONS, *LINKS, RESUBMITTED]  # graded together, in this order

TAGS = re.compile(r"<[^>]+>")
# A fake key, set in the environment while grading; written in two parts so that no
# secret scanner takes this file for one that leaks a real key.
FAKE_SECRET = "sk-" + "selfcheck-FAKE-0123456789abcdef"
AFTERMATH = 6  # seconds the batch's leftovers get to act before the results are read
SHMEM_RISE = 256 << 20  # bytes of host Shmem the kernel-channel batch may add (a bomb: 1 GB)
# bytes of MemAvailable it may take at its lowest: one worker's cap, and as much again for
# whatever else the machine does meanwhile (the bomb without a cgroup takes 3.6 GB)
MEMORY_DROP = 2 * cgroup.MEMORY_BYTES + (512 << 20)


def fill(text: str, folder: Path, port: int) -> str:
    course = SCRATCH["course"]
    for token, value in (("__ROOT__", ROOT), ("__COURSE__", course), ("__FOLDER__", folder),
                         ("__PORT__", port), ("__TABLE__", repr(numbers_table())),
                         ("__STORES__", repr(stores_table()))):  # fmt: skip
        if token in text:
            text = text.replace(token, str(value))
    return text


def numbers_table() -> dict[str, float]:
    """The student edition's public numeric cases: json of (function, args, kwargs) -> answer."""
    table = {}
    for cell in CELLS:
        optional = cell.milestone >= REGISTRY.FIRST_STRETCH  # their answers are no floats
        if not cell.hidden and not optional and not hasattr(cell.cases[0], "rows"):
            for case in cell.cases:
                sent = json.loads(json.dumps(request(cell, case)))
                key = json.dumps([sent["function"], sent["args"], sent["kwargs"]], sort_keys=True)
                table[key] = float(case.expected)
    return table


def stores_table() -> dict[str, list[str]]:
    """The student edition's public stores: json of (function, ids, k, the rest) -> answer."""
    table = {}
    for cell in CELLS:
        if not cell.hidden and hasattr(cell.cases[0], "rows"):
            for scenario in cell.cases:
                sent = json.loads(json.dumps(request(cell, scenario)))
                ids = [memory["id"] for memory in sent["memories"]]
                k = sent.pop("k", None)
                rest = {key: sent[key] for key in ("weights", "decay_rate", "half_lives")
                        if key in sent}  # fmt: skip
                key = json.dumps([cell.function, ids, k, rest], sort_keys=True)
                table[key] = list(scenario.ranking) if k is None else scenario.expected
    return table


def hidden_echoes() -> set[str]:
    """What the echo attack would show as "got" for each hidden case, if it could."""
    namespace: dict = {}
    exec(ECHO, namespace)  # the attack's own arithmetic, from grading/selfcheck/attacks.py
    shown = set()
    for cell in CELLS:
        if cell.hidden and not hasattr(cell.cases[0], "rows"):
            for case in cell.cases:
                sent = json.loads(json.dumps(request(cell, case)))
                value = namespace["echo_value"](sent["args"], sent["kwargs"])
                if not (value.is_integer() and abs(value) <= 10):  # 0.0, 3.0: any answer's
                    shown.add(f"got:      {value}")
    return shown


def solution_lines() -> set[str]:
    """The reference solution's lines, which no attack's feedback may quote."""
    files = [(ROOT / name, name) for name in LEARNER_FILES]
    return {line for line in secret_lines(files) if len(line) >= 12}


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
    shutil.copytree(SCRATCH["student"], target)
    for name in submission.solved:
        shutil.copy2(ROOT / name, target / name)
    for name, old, new in submission.edits:
        text = (target / name).read_text()
        if text.count(old) != 1:
            raise BuildError(
                f"self-check submission {submission.name!r}: {old!r} occurs "
                f"{text.count(old)} times in {name}, not once; update grading/selfcheck/mistakes.py"
            )
        (target / name).write_text(text.replace(old, new))
    for name in submission.delete:
        (target / name).unlink()
    for name, content in submission.extra.items():
        (target / name).write_text(content)
    if submission.attack:
        scoring = target / "code" / "scoring.py"
        scoring.write_text(scoring.read_text() + fill(submission.attack, folder, port))
    if submission.retriever_attack:
        retriever = target / "code" / "retriever.py"
        retriever.write_text(
            retriever.read_text() + fill(submission.retriever_attack, folder, port)
        )
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
    for name in submission.folders:
        (target / name).unlink()
        (target / name).mkdir()
        (target / name / "__init__.py").write_text("")
    if submission.nested:
        inner = target / "memory-lab-main"
        inner.mkdir()
        for path in list(target.iterdir()):
            if path != inner:
                path.rename(inner / path.name)
        (target / "code").mkdir()  # empty, made by mistake
    if submission.alias and not (folder / submission.alias).exists():
        shutil.copytree(target, folder / submission.alias, symlinks=True)
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
    pages = sorted((SCRATCH["course"] / "feedback" / student / ASSIGNMENT).glob("*.html"))
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
    for path in SCRATCH["student"].rglob("*.py"):
        public |= {line.strip() for line in path.read_text().splitlines()}
    return lines - public


def verdict(submission: Submission, result: Graded, hidden: set[str]) -> list[str]:
    """What is wrong with this result, if anything."""
    problems = []
    if submission.most_seconds and result.seconds > submission.most_seconds:
        problems.append(f"grading took {result.seconds:.0f} s, more than its budget allows")
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
    lines = {line.strip() for line in text.splitlines()}
    shown = sorted(hidden & lines)
    if shown:
        problems.append(f"feedback shows hidden check code: {shown[0]!r}")
    if not submission.solved:  # nothing of the solution was handed in: none may be quoted
        quoted = sorted(line for line in SOLUTION if line in text)
        if quoted:
            problems.append(f"feedback quotes the reference solution: {quoted[0]!r}")
    echoed = sorted(e for e in ECHOES if e in lines)
    if echoed:
        problems.append(f"feedback shows a value made of a hidden input: {echoed[0]!r}")
    for bad, why in (("<script", "a script"), ("<img", "learner HTML"), ("://", "an address"),
                     (str(ROOT), "a path of this machine"), ("/tmp/", "a path of this machine"),
                     (FAKE_SECRET, "the instructor's secret")):  # fmt: skip
        if bad in raw or (bad == FAKE_SECRET and bad in text):
            problems.append(f"feedback holds {why}")
    return problems


def check_csv(results: list[Graded]) -> list[str]:
    try:
        with open(SCRATCH["course"] / EXPORT, newline="") as file:
            rows = {row["student_id"]: row for row in csv.DictReader(file)}
    except (OSError, KeyError):
        return [f"{EXPORT} is unreadable"]
    problems = []
    for result in results:
        row = rows.get(result.student)
        numbers = sorted({o.cell.milestone for o in result.outcomes})
        checked = sum(float(row.get(f"milestone_{n}", "nan")) for n in numbers) if row else None
        if checked != result.total:
            problems.append(f"{EXPORT} disagrees with the table for {result.student}")
        elif (float(row.get("core", "nan")), float(row.get("stretch", "nan"))) != (
            result.core,
            result.stretch,
        ):
            problems.append(f"{EXPORT}'s core and stretch columns disagree for {result.student}")
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


def survivors() -> list[int]:
    """Processes of a grading uid whose slot no running worker holds: left behind by a
    sandbox that ended. A slot another batch holds now (a term's grading beside this
    self-check) runs that batch's worker, which is no survivor."""
    alive = []
    for process in psutil.process_iter(["uids"]):
        uid = process.info["uids"]
        if uid and UID_BASE <= uid.real < UID_BASE + SLOTS and not slot_in_use(uid.real - UID_BASE):
            alive.append(process.pid)
    return alive


def aftermath(results: list[Graded], jobs: int, heard: list[bytes]) -> list[str]:
    """What the batch left behind: processes, a rewritten CSV, a connection."""
    time.sleep(AFTERMATH)
    problems = check_csv(results)
    alive = survivors()
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
        done = subprocess.run(
            command, cwd=SCRATCH["student"], env=env, capture_output=True, text=True
        )
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
    write_gradebook(full, SCRATCH["course"])


class HostMemory:
    """The host's Shmem and MemAvailable (/proc/meminfo), sampled while a batch runs."""

    def __init__(self):
        self.before = self.read()
        self.peak_shmem, self.least_available = self.before
        self.running = True
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()

    @staticmethod
    def read() -> tuple[int, int]:
        fields = {}
        for line in Path("/proc/meminfo").read_text().splitlines():
            name, value = line.split(":", 1)
            fields[name] = int(value.split()[0]) * 1024
        return fields["Shmem"], fields["MemAvailable"]

    def _sample(self):
        while self.running:
            shmem, available = self.read()
            self.peak_shmem = max(self.peak_shmem, shmem)
            self.least_available = min(self.least_available, available)
            time.sleep(0.02)

    def stop(self) -> list[str]:
        self.running = False
        self.thread.join()
        after = self.read()
        (shmem, available), mb = self.before, 1 << 20
        print(f"  host Shmem {shmem / mb:.0f} MB before, peak +{(self.peak_shmem - shmem) / mb:.0f}"
              f" MB, after {(after[0] - shmem) / mb:+.0f} MB; MemAvailable {available / mb:.0f} MB"
              f" before, lowest -{(available - self.least_available) / mb:.0f} MB, after "
              f"{(after[1] - available) / mb:+.0f} MB")  # fmt: skip
        problems = []
        if self.peak_shmem - shmem > SHMEM_RISE:
            problems.append(f"host Shmem rose by {(self.peak_shmem - shmem) / mb:.0f} MB")
        if available - self.least_available > MEMORY_DROP:
            rise = (available - self.least_available) / mb
            if not cgroup.available():  # per process limits only: said, not failed
                print(f"  note: MemAvailable fell by {rise:.0f} MB: no memory cgroup here "
                      f"({cgroup.reason()})")  # fmt: skip
            else:
                problems.append(f"host MemAvailable fell by {rise:.0f} MB")
        return problems


def clear_keyrings(jobs: int) -> None:
    """Empty the user keyring of each grading uid, so a leftover key cannot decide a case."""
    if os.geteuid() != 0:
        return
    for uid in range(UID_BASE, UID_BASE + jobs):
        code = (
            f"import ctypes, os\nos.setgid({uid}); os.setuid({uid})\n"
            "ctypes.CDLL(None).syscall(250, 7, -4)"
        )  # KEYCTL_CLEAR @u
        subprocess.run([sys.executable, "-I", "-c", code], check=False, capture_output=True)


def kernel_channels(folder: Path, isolated: bool) -> tuple[list[Graded], Graded, list[str]]:
    """The kernel-channel cases, one at a time on one slot (one uid), then a regrade."""
    clear_keyrings(1)
    for submission in KERNEL:
        build(submission, folder)
    memory = HostMemory()
    try:
        results = autograde(folder, jobs=1, isolated=isolated, course=SCRATCH["course"],
                            log=lambda line: None)  # fmt: skip
    finally:
        problems = memory.stop()
    again = folder.parent / "regrade"
    again.mkdir()
    (folder / KEYRING_FIRST.name).rename(again / KEYRING_FIRST.name)
    regraded = autograde(again, jobs=1, isolated=isolated, course=SCRATCH["course"],
                         log=lambda line: None)[0]  # fmt: skip
    clear_keyrings(1)
    return results, regraded, problems


SCRATCH: dict[str, Path] = {"course": COURSE, "student": STUDENT}  # set by selfcheck()


def live_state() -> dict[str, tuple[int, int]]:
    """(size, mtime) of every file of the live course: the self-check must change none."""
    if not COURSE.is_dir():
        return {}
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in COURSE.rglob("*")
            if p.is_file()}  # fmt: skip


def selfcheck(jobs: int | None = None, cell_timeout: int = CELL_TIMEOUT, isolated=True) -> int:
    """The whole self-check in a scratch course; the live one is left as it was."""
    live = live_state()
    dist = Path(tempfile.mkdtemp(prefix="memory-lab-selfcheck-course-"))
    SCRATCH.update(course=dist / COURSE.name, student=dist / STUDENT.name)
    try:
        status = _selfcheck(jobs, cell_timeout, isolated, dist)
    finally:
        shutil.rmtree(dist, ignore_errors=True)
        SCRATCH.update(course=COURSE, student=STUDENT)
    if live_state() != live:
        print(f"\nself-check FAILED: it changed the live course {COURSE.relative_to(ROOT)}/")
        return 1
    return status


def _selfcheck(jobs: int | None, cell_timeout: int, isolated: bool, dist: Path) -> int:
    start = time.monotonic()
    release(cell_timeout=cell_timeout, dist=dist)
    dist.chmod(0o755)
    hidden = hidden_lines()
    jobs = max(1, jobs or os.cpu_count() or 1)
    server, heard = listen()
    saved = dict(os.environ)
    os.environ.update(OPENAI_API_KEY=FAKE_SECRET, MEMORY_LAB_FAKE_SECRET=FAKE_SECRET)
    failures, problems_after, said = 0, [], []
    try:
        with tempfile.TemporaryDirectory(prefix="memory-lab-selfcheck-") as folder:
            print("\nself-check: kernel channels, one submission at a time")
            kernel = Path(folder) / "kernel" / "submissions"
            kernel.mkdir(parents=True)
            kernel_results, regraded, problems_after = kernel_channels(kernel, isolated)
            batch = Path(folder) / "batch"
            batch.mkdir()
            for submission in BATCH:
                build(submission, batch, server.getsockname()[1])
            classmate = (batch / "reference" / "code" / "scoring.py").read_bytes()
            seed_full_grade(RESUBMITTED.name)
            print()
            fds = len(os.listdir("/proc/self/fd"))
            try:
                results = autograde(batch, jobs=jobs, isolated=isolated,
                                    course=SCRATCH["course"],
                                    log=lambda line: (said.append(line), print(line)))  # fmt: skip
            except Exception as error:  # an attack that breaks the batch is a failure
                print(f"\nself-check FAILED: the batch stopped: {type(error).__name__}: {error}")
                return 1
            problems_after += aftermath(results, jobs, heard)
            if len(os.listdir("/proc/self/fd")) > fds:
                problems_after.append("the batch left file descriptors open in the grader")
            if (batch / "reference" / "code" / "scoring.py").read_bytes() != classmate:
                problems_after.append("a submission overwrote a classmate's submitted file")
    finally:
        os.environ.clear()
        os.environ.update(saved)
        server.close()
    by_name = {r.student: r for r in results + kernel_results}
    checked = [(s, by_name[s.name]) for s in KERNEL + BATCH]
    checked.insert(1, (KEYRING_FIRST, regraded))
    print("\nself-check: every submission against the grade it must get")
    for index, (submission, result) in enumerate(checked):
        maximum = sum(o.cell.points for o in result.outcomes)
        lost = sum(o.cell.points for o in result.outcomes if o.cell.id in submission.breaks)
        problems = verdict(submission, result, hidden)
        failures += bool(problems)
        mark = "ok  " if not problems else "FAIL"
        name = submission.name + (" (regraded)" if index == 1 else "")
        print(f"  {mark} {name:<48} {result.total:>4g}/{maximum:g} "
              f"(expected {maximum - lost:g}; core {result.core:g}, stretch {result.stretch:g})"
              + "".join(f"\n         {p}" for p in problems))  # fmt: skip
    for submission in BATCH:
        if submission.alias and not any(repr(submission.alias) in line for line in said):
            problems_after.append(f"{submission.alias!r} was not skipped with a message")
        if submission.alias in by_name:
            problems_after.append(f"{submission.alias!r} was graded as a student of its own")
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
    print(f"\nself-check passed: {len(checked)} gradings of {len(KERNEL + BATCH)} "
          f"submissions as expected, feedback free of hidden checks, hidden inputs, the "
          f"solution and secrets, host memory within bounds, nothing outlived the batch, "
          f"{EXPORT} consistent, all in a scratch course ({seconds:.0f} s)")  # fmt: skip
    return 0


SOLUTION = solution_lines()
ECHOES = hidden_echoes()
