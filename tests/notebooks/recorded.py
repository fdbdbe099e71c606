"""Recorded predictions: how the master's notebooks run top to bottom in the tests.

A notebook that asks for a prediction before it shows the evidence stops at an empty one
(`blame = None` raises "make your prediction first"), as a learner's Run All must. The
tests and nbval run the master's notebooks through, so they record a prediction first: the
cell is run with `blame = None` replaced by the answer key's signal (teaching/checks/
failure_modes.py). The notebook files themselves keep the empty prediction; the student
edition's runs are never filled, and stop there ("waits for you").

tests/notebooks/test_notebooks.py's test of the empty prediction runs a notebook unfilled.
"""

from __future__ import annotations

import re

import nbformat

BLAME_CELL = re.compile(r"check_blame\((\d+), blame\)")
EMPTY_BLAME = re.compile(r"^blame = None\b", re.MULTILINE)
EMPTY_GROUPS = re.compile(r"^my_groups = None\b", re.MULTILINE)
EMPTY_REFUSED = re.compile(r"^my_refused = None\b", re.MULTILINE)


def with_recorded_prediction(source: str) -> str:
    """`source` with an empty blame replaced by the key's, when it is a blame cell, and
    07d's and 07h's empty predictions (the groups, the refused records) by theirs."""
    from teaching.checks.failure_modes import FAILURES
    from teaching.checks.m8_reflection import TOY_GROUPS
    from teaching.checks.m9_persistence import REFUSED

    source = EMPTY_GROUPS.sub(f"my_groups = {TOY_GROUPS!r}", source, count=1)
    source = EMPTY_REFUSED.sub(f"my_refused = {set(REFUSED)!r}", source, count=1)
    found = BLAME_CELL.search(source)
    if not found:
        return source
    blame = FAILURES[int(found.group(1))].blame
    return EMPTY_BLAME.sub(f"blame = {blame!r}", source, count=1)


def recorded(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of `notebook` with every empty prediction recorded."""
    copy = nbformat.from_dict(notebook)
    for cell in copy.cells:
        if cell.cell_type == "code":
            cell.source = with_recorded_prediction(cell.source)
    return copy
