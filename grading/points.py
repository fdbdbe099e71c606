"""Points and hidden checks: one source of truth, the graded notebooks in notebooks/.

nbgrader reads a grade cell's points from its notebook metadata and its hidden checks
from the cell's `### BEGIN HIDDEN TESTS` region; so does this grader (verdict.py takes
each cell's points from `notebook_cells`, its hidden cases from the same cell). The
course in dist/course/ is built from those notebooks by `python -m grading release`;
`stale` compares the release a grading run would record against (its source/ copy,
which is what nbgrader's gradebook holds) with the working tree, cell by cell, so a
change made after the release is never graded half-old, half-new.

    notebook_cells(folder) -> {notebook: {grade_id: (points, hidden source)}}

Deliberately left out: the learner-side registry (code/teaching/milestones.py keeps
which cells exist and what they check; tests/teaching/test_milestones.py holds its ids
and points equal to these notebooks).
"""

from __future__ import annotations

from pathlib import Path

import nbformat

from grading.layout import ASSIGNMENT, GRADED, ROOT
from grading.markers import HIDDEN, regions


def notebook_cells(folder: Path = ROOT / "notebooks") -> dict[str, dict[str, tuple]]:
    """{notebook: {grade_id: (points, hidden-check text)}} of every graded cell of `folder`."""
    found: dict[str, dict[str, tuple]] = {}
    for nb in GRADED:
        path = folder / f"{nb.name}.ipynb"
        cells = found.setdefault(nb.name, {})
        if not path.is_file():
            continue
        for cell in nbformat.read(path, as_version=4).cells:
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("grade"):
                hidden = "\n".join("\n".join(r) for r in regions(cell.source, nb.name, HIDDEN))
                cells[meta["grade_id"]] = (float(meta.get("points", 0)), hidden)
    return found


def points() -> dict[str, float]:
    """{grade_id: points} of the working tree's graded notebooks."""
    return {cell: p for cells in notebook_cells().values() for cell, (p, _) in cells.items()}


def stale(course: Path) -> list[str]:
    """Each graded cell whose release (course/source/) differs from notebooks/, named.

    Empty when they agree. A changed point value or hidden check is fixed by building the
    course again (`python -m grading release`, then grade again: manual grades stay). A
    cell added or removed after students submitted is refused by nbgrader's own
    generate_assignment ("Cannot add or remove cells"); the guide says what to do.
    """
    released = notebook_cells(course / "source" / ASSIGNMENT)
    working = notebook_cells()
    problems = []
    for notebook, cells in working.items():
        then = released.get(notebook, {})
        for cell in sorted(set(cells) | set(then)):
            if cell not in then:
                problems.append(f"{notebook}: {cell} is in notebooks/ but not in the release")
            elif cell not in cells:
                problems.append(f"{notebook}: {cell} is in the release but not in notebooks/")
            elif cells[cell][0] != then[cell][0]:
                problems.append(f"{notebook}: {cell} is worth {cells[cell][0]:g} points in "
                                f"notebooks/, {then[cell][0]:g} in the release")  # fmt: skip
            elif cells[cell][1] != then[cell][1]:
                problems.append(f"{notebook}: {cell}'s hidden checks differ from the release's")
    return problems
