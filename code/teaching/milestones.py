"""The milestones, in one place: which function, in which file, checked by which cells.

Everything that needs to know the learner's functions reads this table: the checks
(which file to fix), progress, the widgets, the test configuration, the marker test,
the grading tools and their self-check. Adding a milestone is one new row here (and its
function, its check and its notebook).

    MILESTONES["recency_score"].where -> 'code/scoring.py, Milestone 1 (01_recency.ipynb)'

This module imports nothing from the lab, so the instructor's tools can read it on its
own (by file path) without putting code/ on sys.path.

Deliberately left out: the checks themselves (teaching/checks/) and what each cell is
worth. Points, like hidden checks, live in one place only, the graded notebooks' nbgrader
metadata, which nbgrader and the sandboxed grader both read; a test holds the cells'
ids here equal to the notebooks'.
"""

from __future__ import annotations

from typing import NamedTuple


class GradeCell(NamedTuple):
    """One graded cell of a milestone notebook: its nbgrader grade_id (points: its metadata)."""

    id: str


class Milestone(NamedTuple):
    """One learner function: where it lives, which milestone it is and how it is graded."""

    name: str  # the function, e.g. "recency_score"
    number: int  # the milestone: 1-5 the core, 6 onward optional (graded as stretch points)
    module: str  # the module that holds it, as imported: "scoring", "practice.reflection"
    notebook: str  # the notebook that teaches and checks it
    grade_cells: tuple[GradeCell, ...]

    @property
    def stretch(self) -> bool:
        """An optional milestone: graded, but counted apart from the core's points."""
        return self.number >= FIRST_STRETCH

    @property
    def file(self) -> str:
        return file_of(self.module)

    @property
    def check(self) -> str:
        """The name of its public check in teaching.checks, e.g. 'check_recency_score'."""
        return f"check_{self.name}"

    @property
    def label(self) -> str:
        """'Milestone 4', or 'optional Milestone 6' for a stretch one."""
        return f"{'optional ' if self.stretch else ''}Milestone {self.number}"

    @property
    def where(self) -> str:
        return f"{self.file}, {self.label} ({self.notebook})"


FIRST_STRETCH = 6  # milestones from this number on are optional: the course's Extended list


def file_of(module: str) -> str:
    """'code/practice/reflection.py' for 'practice.reflection': where a learner edits it."""
    return f"code/{module.replace('.', '/')}.py"


def _row(name, number, module, notebook, *cells: str) -> Milestone:
    return Milestone(name, number, module, notebook, tuple(GradeCell(c) for c in cells))


# function, milestone, module (its file: file_of), notebook, then each grade cell's grade_id
_ROWS = (
    _row("recency_score", 1, "scoring", "01_recency.ipynb",
         "check_recency_score", "check_recency_score_hidden"),
    _row("importance_score", 2, "scoring", "02_importance_and_relevance.ipynb",
         "check_importance_score", "check_importance_score_hidden"),
    _row("relevance_score", 2, "scoring", "02_importance_and_relevance.ipynb",
         "check_relevance_score", "check_relevance_score_hidden"),
    _row("retrieval_score", 3, "scoring", "03_retrieval_score.ipynb",
         "check_retrieval_score", "check_retrieval_score_hidden"),
    _row("rank_memories", 4, "retriever", "04_retriever.ipynb",
         "check_rank_memories"),
    _row("retrieve", 4, "retriever", "04_retriever.ipynb",
         "check_retrieve", "check_retrieve_hidden"),
    _row("kind_recency_score", 5, "scoring", "07a_kinds.ipynb",
         "check_kind_recency_score", "check_kind_recency_score_hidden"),
    _row("retrieve_by_kind", 5, "retriever", "07a_kinds.ipynb",
         "check_retrieve_by_kind", "check_retrieve_by_kind_hidden"),
    # optional milestones (stretch points): one learner file each, in code/practice/
    _row("parse_importance", 6, "practice.importance_parsing", "07c_rated_importance.ipynb",
         "check_parse_importance", "check_parse_importance_hidden"),
    _row("should_forget", 7, "practice.forgetting_rule", "07e_forgetting.ipynb",
         "check_should_forget", "check_should_forget_hidden"),
    _row("reflection_groups", 8, "practice.reflection", "07d_consolidation.ipynb",
         "check_reflection_groups", "check_reflection_groups_hidden"),
    _row("memory_to_record", 9, "practice.persistence", "07h_persistence.ipynb",
         "check_memory_to_record", "check_memory_to_record_hidden"),
    _row("memory_from_record", 9, "practice.persistence", "07h_persistence.ipynb",
         "check_memory_from_record", "check_memory_from_record_hidden"),
)  # fmt: skip

MILESTONES: dict[str, Milestone] = {row.name: row for row in _ROWS}  # in milestone order

# Derived, never written out again elsewhere:
LEARNER_FILES = tuple(dict.fromkeys(row.file for row in _ROWS))  # code/scoring.py, ...
CORE_FILES = tuple(dict.fromkeys(row.file for row in _ROWS if not row.stretch))
STRETCH = frozenset(row.name for row in _ROWS if row.stretch)  # the optional milestones' functions
NOTEBOOKS = {row.notebook: row.number for row in _ROWS}  # graded notebook -> its milestone
GRADE_CELLS = {  # notebook -> (grade_id, ...) of its autograded cells
    notebook: tuple(cell.id for row in _ROWS if row.notebook == notebook
                    for cell in row.grade_cells)
    for notebook in NOTEBOOKS
}  # fmt: skip

# The tests that are a learner's to-do list: they fail until the milestones are right,
# while every other test that reaches an unfinished function is skipped ("waits for you").
MILESTONE_TESTS = (
    "test_scoring.py",
    "test_retriever.py",
    "test_guiding_examples.py",
    "test_kind_recency.py",
)


# Exercises that a notebook checks and nothing grades: function -> (module, notebook).
# Their solution regions are cleared from the student edition like a milestone's; their
# checks are teaching/checks/vectorised.py (09) and teaching/checks/practice.py (the rest,
# all in code/practice/exercises.py, which nothing grades).
EXERCISES = {
    "fact_to_replace": ("practice.exercises", "07b_superseded_facts.ipynb"),
    "noise_reason": ("practice.exercises", "07f_what_to_embed.ipynb"),
    "fit_in_budget": ("practice.exercises", "07g_context_budget.ipynb"),
    "recall_at_k": ("practice.exercises", "08_evaluation.ipynb"),
    "reciprocal_rank": ("practice.exercises", "08_evaluation.ipynb"),
    "retrieval_scores": ("scoring", "09_scale.ipynb"),
    "score_sql": ("practice.exercises", "10_postgres.ipynb"),
}
# The exercises' own files (not graded, so not LEARNER_FILES): cleared all the same.
EXERCISE_FILES = tuple(
    name
    for name in dict.fromkeys(file_of(module) for module, _ in EXERCISES.values())
    if name not in LEARNER_FILES
)  # ("code/practice/exercises.py",)


def where(name: str) -> str:
    """'code/scoring.py, Milestone 1 (01_recency.ipynb)' for 'recency_score'."""
    return MILESTONES[name].where


# Answers in words, graded by hand in nbgrader's formgrader (markdown cells with
# `solution` and `grade` set): notebook -> (grade_id, ...). They are not milestones: the
# autograder's table leaves them out (the export has them as "written"), and the
# instructor's model answer in each is a solution region, cleared from the student
# edition like any other.
MANUAL_CELLS = {
    "01_recency.ipynb": ("explain_last_access", "explain_flat_store"),
    "04_retriever.ipynb": ("explain_refresh_cost", "explain_no_replay"),
}
