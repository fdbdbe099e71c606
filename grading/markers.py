"""Solution and hidden-test markers: checked, cleared, and proven gone from what ships.

The learner core (code/scoring.py, code/retriever.py) and the graded notebooks share
nbgrader's markers:

    ### BEGIN SOLUTION / ### END SOLUTION          the answer; a learner gets a stub
    ### BEGIN HIDDEN TESTS / ### END HIDDEN TESTS  checks that run only when grading

A marker must stand alone on its line, regions never nest, and every BEGIN has its END.
nbgrader itself ignores an END without a BEGIN and any text around a marker, so a typo
could ship an answer; `regions` refuses all of those. After building, `find_leaks` reads
every file of an edition and fails on any line of a solution or a hidden check.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path

import nbformat
from nbgrader.preprocessors import ClearSolutions

from grading.layout import REGISTRY

SOLUTION = ("### BEGIN SOLUTION", "### END SOLUTION")
HIDDEN = ("### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS")
MARKER_WORDS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")

# A secret line shorter than this says nothing on its own ("continue", "rows = []").
MIN_SECRET_LENGTH = 12

# Lines of the solution that provided modules need too, with the reason they may ship.
ALLOWED = {
    "if memory.superseded_by is not None:": "the store's own rule, used by provided modules",
    "w_rel, w_rec, w_imp = weights": "unpacking the documented weights tuple",
    "for memory in store:": "iterating a store is its documented API",
    **{  # a hidden check names the function it checks, as the registry and checks do
        f'"{name}",': "a learner function's name, public in the milestone registry"
        for name in REGISTRY.MILESTONES
    },
}


class BuildError(RuntimeError):
    """The editions cannot be built safely; the message says where and why."""


def regions(text: str, where: str, markers: tuple[str, str]) -> list[list[str]]:
    """The lines inside each `markers` region of `text`; refuses malformed markers."""
    begin, end = markers
    found, current = [], None
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped == begin:
            if current is not None:
                raise BuildError(f"{where}:{number}: {begin} inside another region")
            current = []
        elif stripped == end:
            if current is None:
                raise BuildError(f"{where}:{number}: {end} without a {begin} before it")
            found.append(current)
            current = None
        elif any(word in line for word in MARKER_WORDS) and stripped not in (*SOLUTION, *HIDDEN):
            raise BuildError(
                f"{where}:{number}: malformed marker {stripped!r}: a marker must be alone on "
                f"its line, exactly {begin!r} or {end!r}"
            )
        elif current is not None:
            current.append(line)
    if current is not None:
        raise BuildError(f"{where}: {begin} never ended with {end}")
    return found


def clear_solutions(source: str, where: str) -> str:
    """`source` with each solution region replaced by nbgrader's `raise NotImplementedError()`."""
    if not regions(source, where, SOLUTION):
        raise BuildError(f"{where}: no {SOLUTION[0]} region; is this the learner core?")
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = {"solution": True, "grade": False, "grade_id": "x", "locked": False}
    cell, _ = ClearSolutions().preprocess_cell(cell, {"language": "python"}, 0)
    return cell.source


def cell_sources(path: Path) -> Iterator[str]:
    """Every code and markdown source of a notebook."""
    for cell in nbformat.read(path, as_version=4).cells:
        yield cell.source


def secret_lines(files: Iterable[tuple[Path, str]]) -> dict[str, str]:
    """{stripped line: where it comes from} for every solution and hidden-check line."""
    secrets: dict[str, str] = {}
    for path, where in files:
        texts = list(cell_sources(path)) if path.suffix == ".ipynb" else [path.read_text()]
        for text in texts:
            for markers, kind in ((SOLUTION, "solution"), (HIDDEN, "hidden check")):
                for region in regions(text, where, markers):
                    for line in region:
                        stripped = line.strip()
                        if _is_secret(stripped):
                            secrets.setdefault(stripped, f"{kind} in {where}")
    return secrets


def _is_secret(line: str) -> bool:
    """Long enough to say something, not an import, not allowed on purpose."""
    return (
        len(line) >= MIN_SECRET_LENGTH
        and not line.startswith(("import ", "from ", "#"))
        and line not in ALLOWED
    )


def _texts(path: Path) -> Iterator[str]:
    """The text of a file; for a notebook, each cell's source and text outputs."""
    if path.suffix == ".ipynb":
        notebook = json.loads(path.read_text())
        for cell in notebook.get("cells", []):
            yield _joined(cell.get("source", ""))
            for output in cell.get("outputs", []):
                yield _joined(output.get("text", ""))
                for value in output.get("data", {}).values():
                    yield _joined(value) if isinstance(value, (str, list)) else ""
        return
    try:
        yield path.read_text()
    except UnicodeDecodeError:  # images and other binary files hold no source
        return


def _joined(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def find_leaks(tree: Path, secrets: dict[str, str]) -> list[str]:
    """Every place under `tree` where a marker or a secret line survives."""
    leaks = []
    for path in sorted(p for p in tree.rglob("*") if p.is_file()):
        name = path.relative_to(tree).as_posix()
        for text in _texts(path):
            for number, line in enumerate(text.splitlines(), 1):
                stripped = line.strip()
                if any(word in line for word in MARKER_WORDS):
                    leaks.append(f"{name}:{number}: marker left in: {stripped!r}")
                elif stripped in secrets:
                    leaks.append(f"{name}:{number}: {secrets[stripped]}: {stripped!r}")
    return leaks
