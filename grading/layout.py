"""Where things are: the repository, the two editions, the graded notebooks and files."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
DIST = ROOT / "dist"
STUDENT = DIST / "student"
COURSE = DIST / "course"
NOTEBOOKS = ROOT / "notebooks"  # the graded notebooks: points and hidden checks (points.py)
ASSIGNMENT = "milestones"  # the nbgrader assignment: the graded notebooks (01-04, 07a) and code/
COURSE_ID = "memory-lab"


def _load_registry(path: Path = ROOT / "code" / "teaching" / "milestones.py"):
    """The lab's milestone registry, read from the instructor's copy by its file path.

    It imports nothing from the lab, so reading it puts nothing on sys.path and runs no
    other lab code (and never a learner's: this is the repository, not a submission).
    """
    spec = importlib.util.spec_from_file_location("memory_lab_milestones", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # NamedTuple and dataclass look their module up
    spec.loader.exec_module(module)
    return module


REGISTRY = _load_registry()

# What a learner writes, graded exactly as submitted.
LEARNER_FILES: tuple[str, ...] = REGISTRY.LEARNER_FILES  # ("code/scoring.py", ...)
# The same, as they lie under a submission's code/ folder: ("scoring.py", ...,
# "practice/reflection.py", ...); and what they lie in at its top ("practice" among them).
LEARNER_NAMES: tuple[str, ...] = tuple(name.removeprefix("code/") for name in LEARNER_FILES)
LEARNER_TOP = frozenset(name.split("/")[0] for name in LEARNER_NAMES)
# Ungraded exercises' files ("code/practice/exercises.py"): cleared to stubs like the
# learner core, never collected for grading.
EXERCISE_FILES: tuple[str, ...] = REGISTRY.EXERCISE_FILES
CLEARED_FILES: tuple[str, ...] = LEARNER_FILES + EXERCISE_FILES


class GradedNotebook(NamedTuple):
    name: str  # notebooks/<name>.ipynb, and the nbgrader notebook id
    milestone: int


GRADED = tuple(
    GradedNotebook(notebook.removesuffix(".ipynb"), number)
    for notebook, number in REGISTRY.NOTEBOOKS.items()
)
MILESTONE_TESTS: tuple[str, ...] = REGISTRY.MILESTONE_TESTS  # the learner's to-do list

# Instructor material, never shipped to learners: the grading tools (their self-check
# holds near-solutions), tests that import the reference solution or inspect its
# markers, CI, and the instructor's guide.
INSTRUCTOR_ONLY = (
    "grading/",
    "dist/",
    ".ci/",
    "tests/teaching/test_checks.py",
    "tests/teaching/test_optional_checks.py",
    "tests/notebooks/test_learner_jupyterlab.py",
    "tests/grading/",
    "benchmarks/bench_grading.py",
    "docs/instructor-guide.md",
    "nbgrader_config.py",
)

# Never copied anywhere: caches, environments and a learner's private files.
JUNK = (
    ".git/",
    ".venv/",
    "__pycache__/",
    ".ipynb_checkpoints/",
    ".pytest_cache/",
    ".hypothesis/",
    ".ruff_cache/",
    ".env",
    "memory_lab.sqlite3",
    "UNDERSTANDING_FEEDBACK.md",
)


def is_listed(relative: str, patterns: tuple[str, ...]) -> bool:
    """`relative` (a/b/c.py) matches a file name, or lies under a folder ending in '/'."""
    parts = relative.split("/")
    for pattern in patterns:
        if pattern.endswith("/"):
            folder = pattern.rstrip("/")
            if relative.startswith(pattern) or folder in parts[:-1]:
                return True
        elif relative == pattern or parts[-1] == pattern or parts[-1].startswith(pattern + "-"):
            return True
    return False
