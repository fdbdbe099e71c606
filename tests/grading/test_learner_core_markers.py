"""The learner core's solution fences: well formed, and clearing them leaves working stubs.

The student edition is made by nbgrader's ClearSolutions, which replaces each
`### BEGIN SOLUTION` ... `### END SOLUTION` region with `raise NotImplementedError()`.
These tests clear the regions the same way and check what a learner would receive.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys
from pathlib import Path

import nbformat
import pytest
from nbgrader.preprocessors import ClearSolutions

from teaching.milestones import EXERCISES, MILESTONES, file_of

CODE = Path(__file__).resolve().parents[2] / "code"
LEARNER_CORE: dict[str, list[str]] = {}  # "scoring.py" -> its learner functions, in order
for _row in MILESTONES.values():  # "practice/reflection.py": the file, under code/
    LEARNER_CORE.setdefault(file_of(_row.module).removeprefix("code/"), []).append(_row.name)
for _name, (_module, _notebook) in EXERCISES.items():  # checked in a notebook, not graded
    LEARNER_CORE.setdefault(file_of(_module).removeprefix("code/"), []).append(_name)
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"


def regions(source: str) -> list[tuple[int, int]]:
    """(begin line, end line) of each solution region; fails on unbalanced markers."""
    found, start = [], None
    for number, line in enumerate(source.splitlines(), 1):
        if line.strip() == BEGIN:
            assert start is None, f"line {number}: BEGIN SOLUTION inside another region"
            start = number
        elif line.strip() == END:
            assert start is not None, f"line {number}: END SOLUTION without a BEGIN"
            found.append((start, number))
            start = None
        else:
            assert "SOLUTION" not in line or "###" not in line, (
                f"line {number}: odd marker {line!r}"
            )
    assert start is None, f"line {start}: BEGIN SOLUTION never ended"
    return found


def cleared(source: str) -> str:
    cell = nbformat.v4.new_code_cell(source)
    assert ClearSolutions()._replace_solution_region(cell, "python")
    return cell.source


@pytest.mark.parametrize("filename", sorted(LEARNER_CORE))
def test_every_learner_function_has_exactly_one_solution_region(filename):
    source = (CODE / filename).read_text()
    spans = regions(source)
    function_lines = {
        name: next(
            i for i, line in enumerate(source.splitlines(), 1) if line.startswith(f"def {name}(")
        )
        for name in LEARNER_CORE[filename]
    }
    starts = [*sorted(function_lines.values()), 10**9]
    for name, line in function_lines.items():
        following = starts[starts.index(line) + 1]
        inside = [s for s in spans if line < s[0] < following]
        assert len(inside) == 1, f"{filename}:{name} has {len(inside)} solution regions"
    assert len(spans) == len(function_lines), f"{filename} has a region outside a learner function"


@pytest.fixture
def student_modules(tmp_path, monkeypatch):
    """The code/ folder as a learner receives it, imported fresh from a temporary copy."""
    shutil.copytree(
        CODE, tmp_path, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__")
    )
    for filename in LEARNER_CORE:
        (tmp_path / filename).write_text(cleared((CODE / filename).read_text()))
    for name in ("scoring", "retriever", "memory_store"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    modules = {}
    for filename in LEARNER_CORE:
        name = filename[:-3].replace("/", ".")  # "practice.reflection"
        spec = importlib.util.spec_from_file_location(name, tmp_path / filename)
        module = importlib.util.module_from_spec(spec)
        monkeypatch.setitem(sys.modules, name, module)
        spec.loader.exec_module(module)
        modules[name] = module
    return tmp_path, modules  # monkeypatch puts the real modules back afterwards


def test_no_solution_line_survives_clearing(student_modules):
    folder, _ = student_modules
    for filename in LEARNER_CORE:
        solution = (CODE / filename).read_text().splitlines()
        student = (folder / filename).read_text()
        assert BEGIN not in student and END not in student
        for begin, end in regions("\n".join(solution)):
            for line in solution[begin : end - 1]:  # the lines strictly inside the fence
                if line.strip() and not line.strip().startswith("#"):
                    assert not re.search(rf"^{re.escape(line)}$", student, re.M), (
                        f"{filename}: solution line survived: {line.strip()!r}"
                    )


def test_the_stubs_import_and_raise_not_implemented_after_checking_inputs(student_modules):
    _, modules = student_modules
    scoring, retriever = modules["scoring"], modules["retriever"]
    from memory_store import Memory, MemoryStore

    store = MemoryStore()
    store.add(Memory("m1", "x", created_at=0.0, embedding=[1.0, 0.0]))
    calls = [
        lambda: scoring.recency_score(3600.0, 0.0),
        lambda: scoring.importance_score(8),
        lambda: scoring.relevance_score([1.0, 0.0], [0.0, 1.0]),
        lambda: scoring.retrieval_score(0.5, 0.5, 0.5),
        lambda: retriever.rank_memories(store, [1.0, 0.0], 3600.0),
        lambda: retriever.retrieve(store, [1.0, 0.0], 3600.0, k=1),
        lambda: scoring.retrieval_scores([0.5], 3600.0, [0.0], [5]),
    ]
    for call in calls:
        with pytest.raises(NotImplementedError):
            call()
    # the provided input checks stay in the student edition
    with pytest.raises(ValueError, match="importance must be in"):
        scoring.importance_score(11)
    with pytest.raises(ValueError, match="k must be an integer"):
        retriever.retrieve(store, [1.0, 0.0], 3600.0, k=0)
