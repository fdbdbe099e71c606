"""`python -m grading release`: the student edition and the nbgrader course.

    dist/student/   what a learner receives: this repository's layout, the learner core
                    as stubs, hidden checks removed, no outputs, no instructor material
    dist/course/    an nbgrader course: source/milestones/ (the graded notebooks with solutions and
                    hidden checks, code/) and release/milestones/ (what nbgrader hands out)

The .py learner core is cleared with nbgrader's own ClearSolutions, the notebooks with
`nbgrader generate_assignment`, so one set of markers serves both. The build ends by
reading every file of both outputs; any surviving solution or hidden-check line, or a
malformed marker anywhere, stops it with the file and line.

Deliberately left out: publishing (copy dist/student/ to wherever learners fetch it).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import nbformat

from grading import layout
from grading.course.gradebook import configured_url, gradebook_setting
from grading.layout import (
    ASSIGNMENT,
    COURSE,
    COURSE_ID,
    DIST,
    GRADED,
    INSTRUCTOR_ONLY,
    JUNK,
    LEARNER_FILES,
    ROOT,
    STUDENT,
    is_listed,
)
from grading.markers import (
    HIDDEN,
    SOLUTION,
    BuildError,
    clear_solutions,
    find_leaks,
    regions,
    secret_lines,
)

CELL_TIMEOUT = 20  # seconds one notebook cell may run when grading; a loop is cut there

STUDENT_NBGRADER_CONFIG = '''\
"""nbgrader settings: none are needed to work through the lab.

JupyterLab's nbgrader extension looks for this file and complains when it is missing.
"""

c = get_config()  # noqa: F821 (nbgrader provides get_config)
'''


LATE_SETTINGS_BEGIN = "# --- late work (kept by every release; edit freely) ---"
LATE_SETTINGS_END = "# --- end of late work ---"
LATE_SETTINGS = f"""{LATE_SETTINGS_BEGIN}
# The due date is the assignment's in the gradebook (nbgrader db assignment add milestones
# --duedate=...; or the formgrader's Manage Assignments). The submission time is the
# student's timestamp.txt. nbgrader's own plugin: "none" (default) or "zero".
# c.LateSubmissionPlugin.penalty_method = "zero"
# or a plugin of your own: c.AssignLatePenalties.plugin_class = "module.ClassName"
{LATE_SETTINGS_END}
"""


def late_settings(course: Path) -> str:
    """The course config's late-work part as the instructor left it (or the default)."""
    path = course / "nbgrader_config.py"
    text = path.read_text() if path.is_file() else ""
    start, end = text.find(LATE_SETTINGS_BEGIN), text.find(LATE_SETTINGS_END)
    if start < 0 or end < start:
        return LATE_SETTINGS
    return text[start : end + len(LATE_SETTINGS_END)] + "\n"


def course_config(cell_timeout: int = CELL_TIMEOUT, late: str = LATE_SETTINGS) -> str:
    """dist/course/nbgrader_config.py: how this course is graded (see the guide)."""
    return f'''\
"""nbgrader settings for the Memory Lab course (written by `python -m grading release`)."""

import os
import sys

c = get_config()  # noqa: F821 (nbgrader provides get_config)
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.course_id = {COURSE_ID!r}
if {str(ROOT)!r} not in sys.path:  # this course's nbgrader classes live in grading/
    sys.path.insert(0, {str(ROOT)!r})

# Grading runs in a sandbox: `python -m grading autograde dist/course/submitted`.
# nbgrader autograde and the formgrader's Autograde button refuse, naming that command,
# before they touch a submission or a grade.
c.Autograde.exporter_class = "grading.course.preprocessors.SandboxedGradingOnly"

{late}
# The learner's code is the graded work: never replace it with the instructor's copy.
# Every other file (the checks included) is overwritten with the source version.
c.Autograde.exclude_overwriting = {{{ASSIGNMENT!r}: {list(LEARNER_FILES)!r}}}

# An infinite loop costs the cell it is in, not the batch.
c.Execute.timeout = {cell_timeout}

# A check cell restored from the source if it was deleted, not just if it was edited.
c.OverwriteCells.add_missing_cells = True

# A library warning on stderr must not zero a correct answer: only errors fail a cell.
c.Autograde.autograde_preprocessors = [
    "nbgrader.preprocessors.Execute",
    "grading.course.preprocessors.StderrIsNotFailure",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]

# Feedback pages are the sandbox's, written by `python -m grading autograde`: nbgrader
# generate_feedback and the formgrader's Generate Feedback button refuse, naming it.
c.GenerateFeedback.exporter_class = "grading.course.preprocessors.SandboxedFeedbackOnly"

# Feedback shows what failed and the likely mistake, never the hidden checks' code.
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "grading.course.preprocessors.HideHiddenChecks",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]
'''


def project_files(root: Path = ROOT) -> list[str]:
    """The repository's files (relative, posix), without caches, environments or dist/."""
    listed = None
    if (root / ".git").exists() and shutil.which("git"):
        result = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
            cwd=root,
            capture_output=True,
            text=True,
        )
        if result.returncode == 0:
            listed = result.stdout.splitlines()
    if listed is None:  # not a git checkout (a downloaded archive): walk the folder
        listed = [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()]
    return sorted(
        name for name in set(listed) if (root / name).is_file() and not is_listed(name, JUNK)
    )


def nbgrader(
    *args: str, cwd: Path, timeout: float | None = None, **popen
) -> subprocess.CompletedProcess:
    """Run `python -m nbgrader ARGS` in the course folder, with this package importable."""
    return subprocess.run(
        [sys.executable, "-m", "nbgrader", *args],
        cwd=cwd,
        env=grading_environment(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def grading_environment() -> dict[str, str]:
    """The environment for nbgrader and its kernels: offline defaults, grading importable.

    An instructor's own model settings (MEMORY_LAB_* or a .env) must not send learners'
    work to a paid model: they are dropped, and MEMORY_LAB_DB keeps memories in RAM.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_LAB_")}
    env.update(MEMORY_LAB_ENV_FILE="", MEMORY_LAB_DB=":memory:", PYTHONDONTWRITEBYTECODE="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    # nbgrader runs the `alembic` script it installed: the environment's bin/ comes first,
    # also when the venv was never activated.
    scripts = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join(filter(None, [scripts, env.get("PATH")]))
    return env


def _made(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, target)


def _clear_notebook(path: Path) -> None:
    """Outputs, execution counts and widget state removed, in place."""
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    notebook.metadata.pop("widgets", None)
    nbformat.write(notebook, path)


def check_markers(files: list[str], root: Path = ROOT) -> list[tuple[Path, str]]:
    """Every file that holds markers, each checked; markers outside them are refused."""
    holders = []
    for name in files:
        path = root / name
        if name in LEARNER_FILES or name in {f"notebooks/{nb.name}.ipynb" for nb in GRADED}:
            holders.append((path, name))
            continue
        if path.suffix not in (".py", ".ipynb") or is_listed(name, INSTRUCTOR_ONLY):
            continue
        texts = _sources(path) if path.suffix == ".ipynb" else [path.read_text()]
        for text in texts:
            for markers in (SOLUTION, HIDDEN):
                if regions(text, name, markers):
                    raise BuildError(
                        f"{name}: holds {markers[0]} but is not graded; only "
                        f"{', '.join(LEARNER_FILES)} and the graded notebooks "
                        f"({', '.join(nb.name for nb in GRADED)}) may hold answers"
                    )
    for path, name in holders:
        texts = list(_sources(path)) if path.suffix == ".ipynb" else [path.read_text()]
        for text in texts:
            regions(text, name, SOLUTION)
            regions(text, name, HIDDEN)
    return holders


def _sources(path: Path) -> list[str]:
    return [cell.source for cell in nbformat.read(path, as_version=4).cells]


def build_course(
    files: list[str], cell_timeout: int, log: Callable[[str], None], course: Path = COURSE
) -> None:
    """course/: source/milestones/ from this repository, then release/milestones/ via nbgrader.

    Only source/ and release/ are rebuilt: the gradebook, submissions, autograded work
    and feedback of earlier grading stay (nbgrader updates the assignment in place), and
    so do the late-work settings of the course's nbgrader_config.py.

    source/ holds the learner core already cleared to stubs: nbgrader copies files other
    than notebooks verbatim, so `nbgrader generate_assignment` (or the formgrader's
    Generate button) can never publish the solution. Grading never reads source/'s
    learner core: the sandboxed grader takes the reference from this repository.
    """
    late = late_settings(course)
    kept = gradebook_setting(configured_url(course))  # CourseDirectory.db_url stays too
    previous = course / ".previous-release"  # put back if nbgrader refuses the new one
    if previous.exists():
        shutil.rmtree(previous)
    for built in ("source", "release"):
        if (course / built).exists():
            (course / built).rename(_made(previous) / built)
    source = course / "source" / ASSIGNMENT
    for nb in GRADED:
        _copy(layout.NOTEBOOKS / f"{nb.name}.ipynb", source / f"{nb.name}.ipynb")
        _clear_notebook(source / f"{nb.name}.ipynb")
    _copy(ROOT / "notebooks" / "workbook.py", source / "workbook.py")  # their first cell runs it
    for name in files:
        if name.startswith("code/") and name.endswith(".py"):
            _copy(ROOT / name, source / name)  # the lab's packages too: the checks live there
    for name in LEARNER_FILES:
        (source / name).write_text(clear_solutions((ROOT / name).read_text(), name))
    (course / "nbgrader_config.py").write_text(course_config(cell_timeout, late) + kept)
    log("nbgrader generate_assignment: clearing solutions and hidden checks ...")
    result = nbgrader("generate_assignment", ASSIGNMENT, "--force", cwd=course)
    if result.returncode != 0:
        for built in ("source", "release"):
            if (previous / built).exists():
                if (course / built).exists():
                    shutil.rmtree(course / built)
                (previous / built).rename(course / built)
        said = f"{result.stdout}{result.stderr}"
        if "Cannot add or remove cells" in said:
            raise BuildError(
                "a graded cell was added or removed after students submitted, which nbgrader "
                "refuses; the previous release is kept. Run `python -m grading reshape` (it "
                "keeps every hand grade it can and names the rest)."
            )
        raise BuildError(f"nbgrader generate_assignment failed (the previous release is kept):"
                         f"\n{said}")  # fmt: skip
    if previous.exists():
        shutil.rmtree(previous)


GRADED_WHERE = """\
# Where notebooks 01-04 and 07a are

In this nbgrader assignment the five graded notebooks (01_recency, 02_importance_and_relevance,
03_retrieval_score, 04_retriever, 07a_kinds) sit at the top of the folder, beside `code/`:
nbgrader grades the notebooks it finds there. Open them there; they run as they would here
(each finds `code/` through its first cell). Everything else of the workbook is where the
README says.
"""


def whole_workbook(course: Path, student: Path) -> int:
    """The student edition's other files into the assignment, source/ and release/ alike.

    The released assignment then holds everything a learner works with (notebooks 00, 05,
    06a, 06b, 07b-10, data/, the tests, the docs), so the exchange alone hands out the
    whole workbook; nbgrader copies these files verbatim, so the formgrader's Generate
    button rebuilds the same release. Returns how many files were added.
    """
    graded = {f"notebooks/{nb.name}.ipynb" for nb in GRADED}
    added = 0
    for path in sorted(p for p in student.rglob("*") if p.is_file()):
        name = path.relative_to(student).as_posix()
        if name in graded or (name.startswith("code/") and name.endswith(".py")):
            continue  # the assignment's own: the graded notebooks at the top, its code/
        for built in ("source", "release"):
            _copy(path, course / built / ASSIGNMENT / name)
        added += 1
    for built in ("source", "release"):
        (course / built / ASSIGNMENT / "notebooks" / "GRADED_NOTEBOOKS.md").write_text(GRADED_WHERE)
    return added


INSTRUCTOR_PART = re.compile(
    r"^<!-- instructor-only[^\n]*-->\n.*?^<!-- /instructor-only -->\n", re.M | re.S
)


def without_instructor_parts(text: str, where: str) -> str:
    """Markdown with its instructor-only parts (between the two comments) removed."""
    stripped = INSTRUCTOR_PART.sub("", text)
    if "instructor-only" in stripped:
        raise BuildError(f"{where}: an instructor-only comment without its pair")
    return stripped


def build_student(files: list[str], course: Path = COURSE, student: Path = STUDENT) -> None:
    """dist/student/: the repository as a learner receives it."""
    if student.exists():
        shutil.rmtree(student)
    release = course / "release" / ASSIGNMENT
    graded = {f"notebooks/{nb.name}.ipynb": release / f"{nb.name}.ipynb" for nb in GRADED}
    for name in files:
        if is_listed(name, INSTRUCTOR_ONLY):
            continue
        target = student / name
        if name in graded:
            _copy(graded[name], target)
        elif name in LEARNER_FILES:
            _copy(release / name, target)
        else:
            _copy(ROOT / name, target)
            if name.endswith(".ipynb"):
                _clear_notebook(target)
            elif name.endswith(".md"):
                target.write_text(without_instructor_parts(target.read_text(), name))
    (student / "nbgrader_config.py").write_text(STUDENT_NBGRADER_CONFIG)
    _quiet_ruff_on_stubs(student / "pyproject.toml")
    learner_jupyter_settings(student / "tools" / "jupyter-settings")


# The instructor's nbgrader panels, switched off in a learner's JupyterLab: the formgrader
# and the course list (their lab plugins and server extensions) and Create Assignment. A
# learner keeps Assignments (fetch, submit) and Validate.
INSTRUCTOR_PLUGINS = (
    "@jupyter/nbgrader:formgrader",
    "@jupyter/nbgrader:create-assignment",
    "@jupyter/nbgrader:course-list",
)
INSTRUCTOR_SERVER_EXTENSIONS = (
    "nbgrader.server_extensions.formgrader",
    "nbgrader.server_extensions.course_list",
)
PAGE_CONFIG = "page_config.json"  # JupyterLab reads etc/jupyter/labconfig/page_config.json


def learner_jupyter_settings(folder: Path) -> None:
    """The student edition's tools/jupyter-settings: without the instructor's nbgrader panels.

    Adds page_config.json (installed as .venv/etc/jupyter/labconfig/page_config.json) with
    the plugins disabled, and turns the two server extensions off in the package's
    jupyter_server_config.json, which Jupyter reads after nbgrader's own file in
    jupyter_server_config.d/ (so it wins).
    """
    pyproject, server = folder / "pyproject.toml", folder / "jupyter_server_config.json"
    table = "[tool.setuptools.data-files]\n"
    text = pyproject.read_text()
    if table not in text:
        raise BuildError(f"{pyproject}: no {table.strip()} table to extend")
    pages = {"disabledExtensions": dict.fromkeys(INSTRUCTOR_PLUGINS, True)}
    (folder / PAGE_CONFIG).write_text(json.dumps(pages, indent=2) + "\n")
    pyproject.write_text(
        text.replace(table, table + f'"etc/jupyter/labconfig" = ["{PAGE_CONFIG}"]\n', 1)
    )
    settings = json.loads(server.read_text())
    extensions = settings.setdefault("ServerApp", {}).setdefault("jpserver_extensions", {})
    extensions.update(dict.fromkeys(INSTRUCTOR_SERVER_EXTENSIONS, False))
    server.write_text(json.dumps(settings, indent=2) + "\n")


RUFF_TABLE = "[tool.ruff.lint.per-file-ignores]\n"
STUB_IGNORES = (
    "# Student edition: the stubs import what the learner's code will use, and the released\n"
    "# notebooks import what their hidden checks used; `ruff check --fix` must not remove it.\n"
    + "".join(f'"{name}" = ["F401"]\n' for name in LEARNER_FILES)
    + "".join(f'"notebooks/{nb.name}.ipynb" = ["F401"]\n' for nb in GRADED)
)


def _quiet_ruff_on_stubs(pyproject: Path) -> None:
    text = pyproject.read_text()
    if RUFF_TABLE not in text:
        raise BuildError(f"{pyproject.name}: no {RUFF_TABLE.strip()} table to extend")
    pyproject.write_text(text.replace(RUFF_TABLE, RUFF_TABLE + STUB_IGNORES, 1))


def release(
    cell_timeout: int = CELL_TIMEOUT, log: Callable[[str], None] = print, dist: Path = DIST
) -> None:
    """Build dist/course/ and dist/student/ (or `dist`'s), then prove neither holds an answer."""
    course, student = dist / COURSE.name, dist / STUDENT.name
    files = project_files()
    holders = check_markers(files)
    secrets = secret_lines(holders)
    log(f"markers checked in {len(holders)} files; {len(secrets)} secret lines to hide")
    build_course(files, cell_timeout, log, course)
    build_student(files, course, student)
    added = whole_workbook(course, student)
    leaks = [
        f"{tree.relative_to(dist).as_posix()}/{leak}"
        for tree in (student, course / "release", course / "source")
        for leak in find_leaks(tree, secrets)
        if tree.name != "source" or leak.split(":")[0].endswith(".py")
    ]
    if leaks:
        raise BuildError(
            "solution or hidden-check text survived in what learners receive; nothing may "
            "be published until it is gone:\n  " + "\n  ".join(leaks)
        )
    shipped = sum(1 for p in student.rglob("*") if p.is_file())
    log(f"dist/student/: {shipped} files, learner core as stubs, no solution or hidden check")
    log(f"dist/course/: source/{ASSIGNMENT}/ and release/{ASSIGNMENT}/ ({len(GRADED)} graded "
        f"notebooks, and {added} files more: the whole workbook)")  # fmt: skip
