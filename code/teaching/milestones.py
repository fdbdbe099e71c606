"""The milestones, in one place: which function, in which file, checked where, worth what.

Everything that needs to know the learner's functions reads this table: the checks
(which file to fix), progress, the widgets, the test configuration, the marker test,
the grading tools and their self-check. Adding a milestone is one new row here (and its
function, its check and its notebook).

    MILESTONES["recency_score"].where -> 'code/scoring.py, Milestone 1 (01_recency.ipynb)'

This module imports nothing from the lab, so the instructor's tools can read it on its
own (by file path) without putting code/ on sys.path.

Deliberately left out: the checks themselves (teaching/checks/) and the notebooks' cells,
whose nbgrader metadata a test compares with GRADE_CELLS below.
"""

from __future__ import annotations

from typing import NamedTuple


class GradeCell(NamedTuple):
    """One graded cell of a milestone notebook: its nbgrader grade_id and its points."""

    id: str
    points: int


class Milestone(NamedTuple):
    """One learner function: where it lives, which milestone it is and how it is graded."""

    name: str  # the function, e.g. "recency_score"
    number: int  # the milestone, 1-5
    module: str  # the file in code/ that holds it, without .py
    notebook: str  # the notebook that teaches and checks it
    grade_cells: tuple[GradeCell, ...]

    @property
    def file(self) -> str:
        return f"code/{self.module}.py"

    @property
    def check(self) -> str:
        """The name of its public check in teaching.checks, e.g. 'check_recency_score'."""
        return f"check_{self.name}"

    @property
    def where(self) -> str:
        return f"{self.file}, Milestone {self.number} ({self.notebook})"


def _row(name, number, module, notebook, *cells: tuple[str, int]) -> Milestone:
    return Milestone(name, number, module, notebook, tuple(GradeCell(*c) for c in cells))


# function, milestone, file in code/, notebook, then each grade cell (grade_id, points)
_ROWS = (
    _row("recency_score", 1, "scoring", "01_recency.ipynb",
         ("check_recency_score", 3), ("check_recency_score_hidden", 2)),
    _row("importance_score", 2, "scoring", "02_importance_and_relevance.ipynb",
         ("check_importance_score", 1), ("check_importance_score_hidden", 1)),
    _row("relevance_score", 2, "scoring", "02_importance_and_relevance.ipynb",
         ("check_relevance_score", 2), ("check_relevance_score_hidden", 2)),
    _row("retrieval_score", 3, "scoring", "03_retrieval_score.ipynb",
         ("check_retrieval_score", 2), ("check_retrieval_score_hidden", 2)),
    _row("rank_memories", 4, "retriever", "04_retriever.ipynb",
         ("check_rank_memories", 2)),
    _row("retrieve", 4, "retriever", "04_retriever.ipynb",
         ("check_retrieve", 3), ("check_retrieve_hidden", 3)),
    _row("kind_recency_score", 5, "scoring", "07a_kinds.ipynb",
         ("check_kind_recency_score", 2), ("check_kind_recency_score_hidden", 2)),
    _row("retrieve_by_kind", 5, "retriever", "07a_kinds.ipynb",
         ("check_retrieve_by_kind", 2), ("check_retrieve_by_kind_hidden", 2)),
)  # fmt: skip

MILESTONES: dict[str, Milestone] = {row.name: row for row in _ROWS}  # in milestone order

# Derived, never written out again elsewhere:
LEARNER_FILES = tuple(dict.fromkeys(row.file for row in _ROWS))  # code/scoring.py, ...
NOTEBOOKS = {row.notebook: row.number for row in _ROWS}  # graded notebook -> its milestone
GRADE_CELLS = {  # notebook -> {grade_id: points}
    notebook: {cell.id: cell.points for row in _ROWS if row.notebook == notebook
               for cell in row.grade_cells}
    for notebook in NOTEBOOKS
}  # fmt: skip
TOTAL_POINTS = sum(cell.points for row in _ROWS for cell in row.grade_cells)

# The tests that are a learner's to-do list: they fail until the milestones are right,
# while every other test that reaches an unfinished function is skipped ("waits for you").
MILESTONE_TESTS = (
    "test_scoring.py",
    "test_retriever.py",
    "test_guiding_examples.py",
    "test_kind_recency.py",
)


def where(name: str) -> str:
    """'code/scoring.py, Milestone 1 (01_recency.ipynb)' for 'recency_score'."""
    return MILESTONES[name].where


# Answers in words, graded by hand in nbgrader's formgrader (markdown cells with
# `solution` and `grade` set): notebook -> {grade_id: points}. They are not milestones:
# the autograder's table, total and grades.csv leave them out (TOTAL_POINTS above counts
# only the checked cells), and the instructor's model answer in each is a solution region,
# cleared from the student edition like any other.
MANUAL_CELLS = {
    "01_recency.ipynb": {"explain_last_access": 2, "explain_flat_store": 2},
    "04_retriever.ipynb": {"explain_refresh_cost": 2, "explain_no_replay": 2},
}
MANUAL_POINTS = sum(points for cells in MANUAL_CELLS.values() for points in cells.values())
