"""teaching/milestones.py is the one table of milestones: the notebooks, checks and grader agree."""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import pytest

from teaching import checks
from teaching.milestones import (
    CORE_FILES,
    FIRST_STRETCH,
    GRADE_CELLS,
    LEARNER_FILES,
    MANUAL_CELLS,
    MILESTONES,
    NOTEBOOKS,
)

ROOT = Path(__file__).resolve().parents[2]
# nbgrader's solution markers, spelled in two parts: the release refuses them outside a region
MARKERS = ("### BEGIN" + " SOLUTION", "### END" + " SOLUTION")


def notebook_grade_cells(notebook: str, manual: bool = False) -> dict[str, int]:
    """grade_id -> points of the graded cells of notebooks/<notebook>, read from nbgrader.

    manual=False: the autograded checks (grade set, solution not); manual=True: the answers
    in words an instructor grades by hand (grade and solution both set, nbgrader's rule).
    """
    cells = nbformat.read(ROOT / "notebooks" / notebook, as_version=4).cells
    found = {}
    for cell in cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") and bool(meta.get("solution")) == manual:
            found[meta["grade_id"]] = meta["points"]
    return found


@pytest.mark.parametrize("notebook", sorted(NOTEBOOKS))
def test_each_graded_notebook_has_exactly_the_grade_cells_of_the_registry(notebook):
    assert list(notebook_grade_cells(notebook)) == list(GRADE_CELLS[notebook])


@pytest.mark.parametrize("notebook", sorted(NOTEBOOKS))
def test_each_graded_notebook_has_exactly_the_manual_cells_of_the_registry(notebook):
    assert list(notebook_grade_cells(notebook, manual=True)) == list(MANUAL_CELLS.get(notebook, ()))


def test_manual_cells_are_markdown_answers_with_a_model_answer_to_clear():
    """The instructor's copy holds a model answer in each; the student edition holds none."""
    instructor = (ROOT / "grading").is_dir()  # the grading tools never ship to learners
    assert set(MANUAL_CELLS) <= set(NOTEBOOKS)  # only graded notebooks go through nbgrader
    for notebook, ids in MANUAL_CELLS.items():
        cells = nbformat.read(ROOT / "notebooks" / notebook, as_version=4).cells
        for cell in cells:
            if cell.metadata.get("nbgrader", {}).get("grade_id") in ids:
                assert cell.cell_type == "markdown", cell.metadata
                lines = cell.source.strip().splitlines()
                if instructor:
                    assert lines[0] == MARKERS[0] and lines[-1] == MARKERS[1]
                    assert len(lines) > 2, "a model answer between the markers"
                else:
                    assert not any(m in cell.source for m in MARKERS), "a model answer shipped"


def points(manual: bool, stretch: bool = False) -> int:
    """The points of the graded notebooks' checked (or written) cells: their metadata;
    the core's notebooks, or (stretch=True) the optional milestones'."""
    chosen = [nb for nb, number in NOTEBOOKS.items() if (number >= FIRST_STRETCH) == stretch]
    return sum(sum(notebook_grade_cells(nb, manual).values()) for nb in chosen)


def test_manual_cells_are_not_in_the_autograded_total():
    assert not set().union(*MANUAL_CELLS.values()) & set().union(*GRADE_CELLS.values())
    assert points(manual=True) == 8 and points(manual=False) == 31
    assert points(manual=True, stretch=True) == 0


def test_no_other_notebook_is_graded():
    others = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb") if p.name not in NOTEBOOKS)
    assert others
    for name in others:
        assert notebook_grade_cells(name) == notebook_grade_cells(name, manual=True) == {}


def test_the_points_add_up_to_the_lab_total():
    assert points(manual=False) == 31  # 5 + 6 + 4 + 8 + 8
    assert points(manual=False, stretch=True) == 16  # optional Milestones 6-9: 4 each


def test_the_optional_milestones_are_the_stretch_rows():
    assert {name for name, row in MILESTONES.items() if row.stretch} == {
        "parse_importance",
        "should_forget",
        "reflection_groups",
        "memory_to_record",
        "memory_from_record",
    }
    assert MILESTONES["should_forget"].where == (
        "code/practice/forgetting_rule.py, optional Milestone 7 (07e_forgetting.ipynb)"
    )
    assert CORE_FILES == ("code/scoring.py", "code/retriever.py")


def test_the_optional_milestones_8_and_9_are_worth_points_of_their_own():
    assert sum(notebook_grade_cells("07d_consolidation.ipynb").values()) == 4
    assert sum(notebook_grade_cells("07h_persistence.ipynb").values()) == 4
    assert points(manual=True, stretch=True) == 0  # no answers in words there


def test_every_learner_function_has_a_public_check_of_its_name():
    assert set(checks.CHECKS) == set(MILESTONES)
    for name, row in MILESTONES.items():
        assert checks.CHECKS[name] is getattr(checks, row.check)


@pytest.mark.parametrize("name", sorted(MILESTONES))
def test_every_learner_function_is_defined_in_the_file_the_registry_names(name):
    row = MILESTONES[name]
    tree = ast.parse((ROOT / row.file).read_text(encoding="utf-8"))
    defined = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert name in defined, f"{name} is not defined in {row.file}"
    assert (ROOT / "notebooks" / row.notebook).is_file()


def test_milestones_are_numbered_in_order_and_each_has_a_notebook():
    numbers = [row.number for row in MILESTONES.values()]
    assert numbers == sorted(numbers) and set(numbers) >= {1, 2, 3, 4, 5, 6, 7}
    assert sorted(NOTEBOOKS.values()) == sorted(set(numbers))  # one notebook each


def test_the_grader_reads_the_same_table():
    layout = pytest.importorskip("grading.layout", reason="the instructor's tools are not here")
    assert layout.LEARNER_FILES == LEARNER_FILES
    assert LEARNER_FILES[:4] == (
        "code/scoring.py",
        "code/retriever.py",
        "code/practice/importance_parsing.py",
        "code/practice/forgetting_rule.py",
    )
    assert {"code/practice/reflection.py", "code/practice/persistence.py"} <= set(LEARNER_FILES)
    assert {f"{nb.name}.ipynb": nb.milestone for nb in layout.GRADED} == NOTEBOOKS


def test_where_names_the_file_the_milestone_and_the_notebook():
    assert MILESTONES["retrieve"].where == "code/retriever.py, Milestone 4 (04_retriever.ipynb)"
    five = "code/scoring.py, Milestone 5 (07a_kinds.ipynb)"
    assert MILESTONES["kind_recency_score"].where == five


def test_milestone_5_is_one_scoring_and_one_retriever_function_graded_in_07a():
    rows = [row for row in MILESTONES.values() if row.number == 5]
    assert [(row.name, row.module) for row in rows] == [
        ("kind_recency_score", "scoring"),
        ("retrieve_by_kind", "retriever"),
    ]
    assert notebook_grade_cells("07a_kinds.ipynb") == {
        "check_kind_recency_score": 2,
        "check_kind_recency_score_hidden": 2,
        "check_retrieve_by_kind": 2,
        "check_retrieve_by_kind_hidden": 2,
    }
    assert GRADE_CELLS["07a_kinds.ipynb"] == tuple(notebook_grade_cells("07a_kinds.ipynb"))
