"""Where things are: the repository, the two editions, the graded notebooks and files."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
DIST = ROOT / "dist"
STUDENT = DIST / "student"
COURSE = DIST / "course"
ASSIGNMENT = "lab"  # the nbgrader assignment: notebooks 01-04 and code/
COURSE_ID = "memory-lab"

# What a learner writes, graded exactly as submitted.
LEARNER_FILES = ("code/scoring.py", "code/retriever.py")


class GradedNotebook(NamedTuple):
    name: str  # notebooks/<name>.ipynb, and the nbgrader notebook id
    milestone: int


GRADED = (
    GradedNotebook("01_recency", 1),
    GradedNotebook("02_importance_and_relevance", 2),
    GradedNotebook("03_retrieval_score", 3),
    GradedNotebook("04_retriever", 4),
)

# Instructor material, never shipped to learners: the grading tools (their self-check
# holds near-solutions), tests that import the reference solution or inspect its
# markers, CI, and the instructor's guide.
INSTRUCTOR_ONLY = (
    "grading/",
    "dist/",
    ".ci/",
    "tests/test_checks.py",
    "tests/test_learner_core_markers.py",
    "tests/test_grading.py",
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
