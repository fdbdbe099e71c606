"""Every notebook has at least one exercise the learner writes, with a check.

What counts as an exercise, read from the notebook and the learner files alone (no
kernel):

- a code cell that calls a check from teaching.checks (`check_<name>(`) for a learner
  function of teaching/milestones.py (a milestone or an exercise), where that function's
  body in its file is the learner's to write: a solution region in the master, which the
  student edition clears to `raise NotImplementedError()` (notebook 05 counts by its
  checks of Milestones 1-4; every registered function is also checked in its own
  notebook); or
- a code cell that leaves an answer to the learner (`<name> = None`) and passes it to a
  practice check from teaching.checks (an answer, a blame, a field, a label, a weight).

Deliberately left out: running the notebooks (tests/notebooks/test_notebooks.py does).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest

from teaching.milestones import EXERCISES, MILESTONES, file_of

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
LEARNER = {name: (row.module, row.notebook) for name, row in MILESTONES.items()} | EXERCISES
BEGIN = "### BEGIN " + "SOLUTION"  # spelt apart: the release refuses a marker inside a line
CHECK_CALL = re.compile(r"\bcheck_(\w+)\(")
LEFT_TO_LEARNER = re.compile(r"^(\w+) = None\b", re.M)


# Exercises still to come on this branch: strict, so a notebook that gains one fails here
# until it leaves this set.
def learners_to_write(name: str) -> bool:
    """Whether `name`'s body in its file is the learner's: a solution region or a stub."""
    if name not in LEARNER:
        return False
    module = LEARNER[name][0]
    source = (ROOT / file_of(module)).read_text()
    lines = source.splitlines()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            body = lines[node.lineno - 1 : node.end_lineno]
            return any(line.strip() == BEGIN for line in body) or any(
                line.strip() == "raise NotImplementedError()" for line in body
            )
    return False


def imports_from_checks(source: str, function: str) -> bool:
    return bool(re.search(rf"from teaching\.checks[\w.]* import [^#]*\b{function}\b", source,
                          re.S))  # fmt: skip


def exercises_in(path: Path) -> list[str]:
    """What the notebook's learner writes and a check tests: 'function f' or 'answer a'."""
    cells = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    whole = "\n".join(cells)
    found = []
    for source in cells:
        for name in CHECK_CALL.findall(source):
            check = f"check_{name}"
            if not imports_from_checks(whole, check):
                continue
            if learners_to_write(name):
                found.append(f"function {name}")
            for answer in LEFT_TO_LEARNER.findall(source):
                if re.search(rf"{check}\([^)]*\b{answer}\b", source):
                    found.append(f"answer {answer} ({check})")
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_notebook_has_an_exercise_with_a_check(path):
    assert exercises_in(path), (
        f"{path.name}: no exercise with a check: add a cell that calls a check from "
        "teaching.checks on a function the learner writes (a row of teaching/milestones.py) "
        "or on an answer the cell leaves as None"
    )


def test_every_exercise_function_is_checked_in_its_own_notebook():
    for name, (_, notebook) in LEARNER.items():
        assert f"function {name}" in exercises_in(ROOT / "notebooks" / notebook), name
        assert learners_to_write(name), f"{name}: no solution region (or stub) in its file"


def test_a_notebook_without_its_exercise_is_found_out(tmp_path):
    source = nbformat.read(ROOT / "notebooks" / "07g_context_budget.ipynb", as_version=4)
    source.cells = [c for c in source.cells if "check_fit_in_budget" not in c.source]
    stripped = tmp_path / "07g_context_budget.ipynb"
    nbformat.write(source, stripped)
    assert exercises_in(stripped) == []


def test_a_check_of_a_provided_function_is_no_exercise():
    assert not learners_to_write("no_such_function")
    assert exercises_in(ROOT / "notebooks" / "08_evaluation.ipynb") == [
        "function recall_at_k",
        "function reciprocal_rank",
    ]
