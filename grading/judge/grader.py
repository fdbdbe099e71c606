"""Grade one submission: stage its learner files, run sandboxed workers, judge.

    scoring    the functions of scoring.py (Milestones 1-3 and kind_recency_score of 5) on
               the learner's scoring.py
    retriever  the functions of retriever.py (Milestone 4 and retrieve_by_kind of 5): the
               learner's retriever.py on the instructor's reference scoring, so a scoring
               mistake costs only its own milestone (and retriever code cannot patch the
               scoring graded in the first run: that ran in another process). The
               reference is never in that sandbox: its scoring is a proxy the trusted
               parent answers for the case's own memories (grading/judge/oracle.py)
    hint       the retriever's public checks on the learner's own scoring, only for the
               feedback: when it changes the retriever's answers, it says which milestone
               to fix first
    optional   each optional milestone's file of practice/ (6 onward) on its own, in the
               learner's folder (reflection.py on the reference scoring, as the retriever)

Every cell's inputs, hidden ones too, are drawn afresh for each grading from a secret
the sandbox never sees (grading/judge/fresh.py): an input carried out by a side channel says
nothing about the next grading or a classmate's.

Each is run twice, public cells first, then hidden cells in a fresh worker of their own:
whatever the learner's code learns from a hidden input dies with that worker, before any
later answer can show it. All the runs of one submission share one time budget
(SUBMISSION_SECONDS); cells left when it is spent score 0, and the table says so.

Collecting follows nothing: a file is read only if it is a regular file (no symlink,
device or fifo), under the size cap, in a code/ folder (and practice/ folder) that is
itself no symlink. Beside the learner files (scoring.py, retriever.py, the optional
milestones' files of practice/, staged in a practice/ package of the grader's own, with
an empty __init__.py), every other module of the learner's own at the top of code/ (a
`mymath.py` that scoring.py imports) is collected and staged read-only next to them, so
honest helpers cost nothing; a file named like a module the course provides is not (the
sandbox's read-only copy of the course's own is imported instead). What
is collected (bytes and notes) is all a grader needs, so it can travel to another
machine (grading/course/queue.py) and be graded there exactly as here.

Deliberately left out: writing results (grading/course/results.py does that, after this returns
and every sandbox is gone).
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from grading.judge.fresh import fresh_cells, seeded
from grading.judge.oracle import Oracle
from grading.judge.verdict import CELLS, Files, Outcome, failure, run_cell
from grading.layout import LEARNER_NAMES, REGISTRY
from grading.sandbox.launcher import PROVIDED, Worker

MAX_BYTES = 256 << 10  # a learner file; the reference is about 9 KB
MAX_HELPERS = 16  # the learner's own modules staged beside the two learner files, at most
HELPER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}\.py")  # an importable module's file name
SUBMISSION_SECONDS = 60.0  # wall clock for all the runs of one submission (honest: < 1 s)
MODULE = {name: row.module for name, row in REGISTRY.MILESTONES.items()}  # function -> file
STRETCH_MODULES = tuple(dict.fromkeys(row.module for row in REGISTRY.MILESTONES.values()
                                      if row.number >= REGISTRY.FIRST_STRETCH))  # fmt: skip
# Optional milestones that call the scoring (reflection_groups: relevance_score) run on the
# reference's, answered by the parent for the case's own memories (oracle.py), as the
# retriever does: a Milestone 2 mistake costs only Milestone 2.
ON_REFERENCE_SCORING = ("practice.reflection",)


@dataclass
class Graded:
    """One student's verdict: an outcome per grade cell, notes, and the fix-first hint."""

    student: str
    outcomes: list[Outcome] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    hint: str = ""
    seconds: float = 0.0
    isolated: bool = True
    out_of_time: bool = False  # the submission's time budget ran out before every cell ran
    folder: Path | None = None  # what was handed in: the notebooks, timestamp.txt, secret
    penalty: float = 0.0  # nbgrader's late penalty, once recorded (grading/course/results.py)
    written: dict = field(default_factory=dict)  # the written answers' grades, once recorded

    def milestone(self, number: int) -> float:
        return sum(o.score for o in self.outcomes if o.cell.milestone == number)

    @property
    def total(self) -> float:
        """Every checked cell, as nbgrader adds them up: the core and the stretch points."""
        return sum(o.score for o in self.outcomes)

    @property
    def core(self) -> float:
        """Milestones 1-5: the lab's 31 points."""
        return sum(o.score for o in self.outcomes if o.cell.milestone < REGISTRY.FIRST_STRETCH)

    @property
    def stretch(self) -> float:
        """The optional milestones (6 onward): stretch points, counted apart."""
        return self.total - self.core


def find_code(submission: Path) -> Path | None:
    """The submission's code/ folder (at the top or one folder down), never via a link."""
    return locate(submission)[0]


def locate(submission: Path) -> tuple[Path | None, str]:
    """(the code/ folder to grade, a note saying which, or why none), never via a link.

    A code/ at the top that holds neither learner file, beside one folder down that does
    (an empty folder made by mistake next to the unpacked repository), is passed over,
    and the note says so; two folders down that both hold learner files are refused.
    """
    top = submission / "code"
    if top.is_symlink():
        return None, "no code/ folder (or a symlinked one): nothing to grade"
    nested = []
    if not submission.is_symlink():
        for folder in sorted(submission.iterdir()):
            if folder.name.startswith(".") or folder.is_symlink() or not folder.is_dir():
                continue
            if (folder / "code").is_symlink():
                return None, "no code/ folder (or a symlinked one): nothing to grade"
            if (folder / "code").is_dir():
                nested.append(folder / "code")
    holding = [c for c in nested if _holds_learner_files(c)]
    if top.is_dir() and (_holds_learner_files(top) or not holding):
        return top, "graded code/"
    if len(holding) > 1:
        names = ", ".join(f"{c.parent.name}/code/" for c in holding)
        return None, f"two folders hold learner files ({names}): keep one, nothing graded"
    chosen = holding[0] if holding else (nested[0] if nested else None)
    if chosen is None:
        return None, "no code/ folder (or a symlinked one): nothing to grade"
    note = f"graded {chosen.parent.name}/code/"
    if top.is_dir():
        note += " (the code/ folder at the top holds neither scoring.py nor retriever.py)"
    return chosen, note


def _holds_learner_files(code: Path) -> bool:
    return any(os.path.lexists(code / name) for name in LEARNER_NAMES)


KINDS = (  # what stands where a learner file should be, as the refusal names it
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a fifo (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
    (stat.S_ISLNK, "a symbolic link"),
)


def copy_regular(source: Path, target: Path, name: str | None = None) -> str | None:
    """Copy one learner file without following anything; a note when it is refused.

    What stands there is looked at first (lstat), so a folder, fifo, socket or device is
    refused by name without being opened; a regular file is then opened without
    following links and checked to be the same file, in case it was swapped meanwhile.
    `name`: the file as the notes say it, under code/ ("practice/reflection.py"; its own
    name by default).
    """
    name = f"code/{name or source.name}"
    if source.parent.is_symlink():  # code/practice/ as a link: nothing is read through it
        return f"{name} was refused: its folder is a symbolic link"
    try:
        seen = os.lstat(source)
    except FileNotFoundError:
        return f"{name} is missing: the milestones that need it score 0"
    except OSError:
        return f"{name} was refused: it cannot be read"
    for test, kind in KINDS:
        if test(seen.st_mode):
            return f"{name} was refused: it is {kind}, not a regular file"
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return f"{name} was refused: it is a symbolic link or cannot be read"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or (info.st_dev, info.st_ino) != (
            seen.st_dev,
            seen.st_ino,
        ):
            return f"{name} was refused: it changed while it was read"
        data = b""
        while len(data) <= MAX_BYTES and (chunk := os.read(fd, MAX_BYTES + 1 - len(data))):
            data += chunk
    finally:
        os.close(fd)
    if len(data) > MAX_BYTES:
        return f"{name} was refused: larger than {MAX_BYTES >> 10} KB"
    target.write_bytes(data)
    target.chmod(0o644)
    return None


COURSE_NAMES = {Path(name).stem for name in PROVIDED} | {"scoring", "retriever", "practice"}


def helpers(code: Path) -> list[str]:
    """The learner's own modules at the top of `code/`: every .py the course does not ship."""
    names = []
    for entry in sorted(os.listdir(code)):
        if HELPER.fullmatch(entry) and not entry.startswith("__"):
            if Path(entry).stem not in COURSE_NAMES:
                names.append(entry)
    return names


def is_helper(name: str) -> bool:
    """Whether `name` may be staged as a learner's own module (a queue's row is data)."""
    return bool(HELPER.fullmatch(name)) and Path(name).stem not in COURSE_NAMES


@dataclass
class Collected:
    """What is graded of one submission: its learner files' bytes and the notes on them.

    Collected once, where the submission is (the instructor's machine, or each grader's
    for a local batch); a queue carries it to a grader elsewhere (grading/course/queue.py).
    """

    student: str
    notes: list[str]  # which code/ folder was graded, or why none; each refused file
    files: dict[str, bytes] = field(default_factory=dict)  # "scoring.py": its bytes; helpers
    found: bool = True  # False: no code/ folder to grade (notes[0] says why)
    folder: Path | None = None  # what was handed in (notebooks, timestamp.txt, secret)


def collect(submission: Path) -> Collected:
    """The learner files of `submission`, read as stage() once did: nothing followed."""
    code, where = locate(submission)
    if code is None:
        return Collected(submission.name, [where], found=False, folder=submission)
    collected = Collected(submission.name, [where], folder=code.parent)  # the page says which
    with tempfile.TemporaryDirectory(prefix="memory-lab-collect-") as scratch:
        for name in LEARNER_NAMES:  # "scoring.py", ..., "practice/reflection.py"
            target = Path(scratch) / name.replace("/", "-")
            if note := copy_regular(code / name, target, name):
                if "/" in name and os.path.lexists(code / Path(name).name):
                    note += f" (code/{Path(name).name} is not graded: move it into code/{name})"
                collected.notes.append(note)
            else:
                collected.files[name] = target.read_bytes()
        own = helpers(code)
        if len(own) > MAX_HELPERS:
            collected.notes.append(f"only the first {MAX_HELPERS} of your own modules in "
                                   f"code/ were staged ({len(own)} found)")  # fmt: skip
        for name in own[:MAX_HELPERS]:
            target = Path(scratch) / name
            if note := copy_regular(code / name, target):
                collected.notes.append(note)
            else:
                collected.files[name] = target.read_bytes()
    return collected


def stage(collected: Collected, folder: Path) -> dict[str, Path]:
    """folder/{own,reference}/: the run folders, each world-readable ({} when none).

    reference/ holds the learner's retriever.py, practice/ and own modules: its scoring is
    the parent's proxy. A name that is no learner file and no helper is never written; a
    learner file's package (practice/) gets an empty __init__.py of the grader's own.
    """
    if not collected.found:
        return {}
    own, reference = folder / "own", folder / "reference"
    for run in (own, reference):
        run.mkdir()
        run.chmod(0o755)
    for name, data in collected.files.items():
        if name not in LEARNER_NAMES and not is_helper(name):
            continue
        for run in (own,) if name == "scoring.py" else (own, reference):
            target = run / name
            if not target.parent.is_dir():  # run/practice/
                target.parent.mkdir()
                target.parent.chmod(0o755)
                (target.parent / "__init__.py").write_bytes(b"")
                (target.parent / "__init__.py").chmod(0o644)
            target.write_bytes(data)
            target.chmod(0o644)
    return {"own": own, "reference": reference}


def run(cells, folder: Path, modules: list[str], files: Files, budget: Budget, stop_early=True,
        proxy=False):  # fmt: skip
    """Outcomes of `cells` from fresh workers over `folder`; a new worker after one dies.

    `proxy`: the workers' scoring is the reference, answered here for each case (Oracle).
    """
    outcomes, worker = [], None
    try:
        for cell in cells:
            if time.monotonic() > budget.deadline:
                budget.spent = True
                where = REGISTRY.where(cell.function)
                message = (f"not checked: your code used up the submission's "
                           f"{SUBMISSION_SECONDS:g} s ({where})")  # fmt: skip
                outcomes.append(Outcome(cell, message=message))
                continue
            if worker is None or worker.process.poll() is not None:
                if worker is not None:
                    worker.__exit__()
                worker = Worker(folder, modules, budget.slot, budget.isolated,
                                deadline=budget.deadline, proxy=proxy)  # fmt: skip
            hello = worker.hello or {}
            if "import_error" in hello:
                outcome = Outcome(cell)
                outcome.message = import_message(hello, cell.function, folder, files)
                outcomes.append(outcome)
                continue
            ask = worker.ask
            if proxy:
                ask = lambda request, worker=worker: proxied(worker, request)  # noqa: E731
            outcomes.append(run_cell(cell, ask, files, stop_early))
    finally:
        if worker is not None:
            worker.__exit__()
    return outcomes


def proxied(worker: Worker, request: dict) -> dict | None:
    """The worker's reply to one case of the Milestone 4 run: the case goes with the
    reference's answers about its own memories (Oracle.scores), and any other scoring call
    the worker makes is answered here, call by call (Oracle.answer)."""
    oracle = Oracle(request)
    return worker.ask({**request, "scores": oracle.scores()}, oracle.answer)


@dataclass
class Budget:
    """Where one submission's workers run, and until when."""

    slot: int
    isolated: bool
    deadline: float
    spent: bool = False


def import_message(hello: dict, function: str, folder: Path, files: Files) -> str:
    name = hello.get("import_error")
    name = name if name in set(MODULE.values()) else "retriever"
    crash = failure({k: v for k, v in hello.items() if k != "import_error"}, function, files)
    file = REGISTRY.file_of(name)  # code/scoring.py, code/practice/reflection.py
    if not (folder / file.removeprefix("code/")).is_file():
        return f"{file} is missing, so {function} could not be imported or checked"
    first = (crash or "").split("\n")[0].replace(f"{function} raised", "it raised")
    return f"{file} could not be imported, so {function} cannot be checked: {first}"


def hint(
    own: list[Outcome],
    reference: list[Outcome],
    first: list[Outcome],
    retriever: list[Outcome] | None = None,
) -> str:
    """The fix-Milestone-N-first line, when the learner's scoring changes right answers.

    `retriever` is every retriever cell's outcome on the reference scoring, hidden ones
    too: the line says "your retriever is right" only when all of them scored, so the hint
    never contradicts a grade (a retriever that forgets to refresh loses Milestone 4
    points even where its ranking is right).
    """
    failing = [o for o in first if o.score == 0]
    if not failing:
        return ""
    worst = failing[0].cell
    all_right = all(o.score for o in (reference if retriever is None else retriever))
    for mine, ref in zip(own, reference):
        if not ref.score or mine.cell.hidden or mine.answers == ref.answers:
            continue
        for index, (got, right) in enumerate(zip(mine.answers, ref.answers)):
            if got == right:
                continue
            scenario = mine.cell.cases[index]
            shown = f"returns {got}" if got is not None else "fails"
            if all_right:
                return (
                    f"your retriever is right; with your {worst.function} it {shown} on"
                    f" '{scenario.title}' — fix Milestone {worst.milestone} first"
                )
            return (
                f"with your {worst.function}, {mine.cell.function} {shown} on"
                f" '{scenario.title}' — fix Milestone {worst.milestone} first; your retriever"
                " also loses points of its own (Milestone 4 and 5 checks below)"
            )
    return ""  # the learner's scoring gives the same answers: nothing to add


def grade(submission: Path, slot: int = 0, isolated: bool = True) -> Graded:
    return grade_collected(collect(submission), slot, isolated)


def grade_collected(collected: Collected, slot: int = 0, isolated: bool = True) -> Graded:
    start = time.monotonic()
    graded = Graded(collected.student, isolated=isolated, folder=collected.folder)
    graded.notes = list(collected.notes)
    budget = Budget(slot, isolated, start + SUBMISSION_SECONDS)
    with tempfile.TemporaryDirectory(prefix="memory-lab-grade-") as scratch:
        Path(scratch).chmod(0o755)
        folders = stage(collected, Path(scratch))
        if not folders:
            graded.outcomes = [Outcome(c, message=graded.notes[0]) for c in CELLS]
        else:
            own = [collected.files.get(name, b"") for name in ("scoring.py", "retriever.py")]
            rng = seeded(collected.student, own)
            graded.outcomes, graded.hint = runs(fresh_cells(CELLS, rng), folders, budget)
    graded.seconds = time.monotonic() - start
    graded.out_of_time = budget.spent
    if budget.spent:
        graded.notes.append(f"time budget of {SUBMISSION_SECONDS:g} s used up: the cells not "
                            "checked in time score 0")  # fmt: skip
    return graded


def runs(cells, folders: dict[str, Path], budget: Budget) -> tuple[list[Outcome], str]:
    """Every cell's outcome, public runs first, then hidden ones; and the fix-first hint."""
    own, reference = folders["own"], folders["reference"]
    mine = {path.name: path for path in own.glob("*.py")}  # what a crash line may quote
    mine.update({name: own / name for name in LEARNER_NAMES})
    theirs = {name: path for name, path in mine.items() if name != "scoring.py"}

    def part(module: str, hidden: bool) -> list:
        return [c for c in cells if MODULE[c.function] == module and c.hidden == hidden]

    both = ["scoring", "retriever"]
    scoring = run(part("scoring", False), own, ["scoring"], mine, budget)

    def optional(hidden: bool) -> list[Outcome]:  # each file alone, on the learner's own folder
        outcomes = []
        for module in STRETCH_MODULES:
            proxy = module in ON_REFERENCE_SCORING
            outcomes += run(part(module, hidden), own, [module], mine, budget, proxy=proxy)
        return outcomes

    stretch = optional(hidden=False)
    retriever = run(part("retriever", False), reference, ["retriever"], theirs, budget, proxy=True)
    hint_text, with_own, public_retriever = "", None, list(retriever)
    if any(o.score == 0 for o in scoring) and any(o.score for o in retriever):
        public = part("retriever", False)
        with_own = run(public, own, both, mine, budget, stop_early=False)
    public_scoring = list(scoring)
    scoring += run(part("scoring", True), own, ["scoring"], mine, budget)
    retriever += run(part("retriever", True), reference, ["retriever"], theirs, budget, proxy=True)
    stretch += optional(hidden=True)  # in fresh workers too, after every public case
    if with_own is not None:
        hint_text = hint(with_own, public_retriever, public_scoring, retriever)
    order = {cell.id: index for index, cell in enumerate(cells)}
    outcomes = scoring + retriever + stretch
    return sorted(outcomes, key=lambda o: order[o.cell.id]), hint_text
