"""A learner's own modules: every .py handed in at the top of code/ is staged read-only
beside the learner files and may be imported, so an honest helper costs nothing; a
file named like a module the course provides is not staged (the course's is imported).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from grading.judge.grader import Collected, collect, grade, stage
from grading.layout import LEARNER_FILES

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap (apt bwrap)"),
]

ROOT = Path(__file__).resolve().parents[2]
MYMATH = "def share_of_ten(rating: float) -> float:\n    return rating / 10.0\n"


def reference(tmp_path: Path) -> Path:
    code = tmp_path / "ana" / "code"
    code.mkdir(parents=True)
    for name in LEARNER_FILES:  # the learner core and the optional milestones' files
        (code.parent / name).parent.mkdir(exist_ok=True)  # code/practice/
        shutil.copy(ROOT / name, code.parent / name)
    return code


def test_a_scoring_that_imports_its_own_helper_module_scores_full_marks(tmp_path):
    code = reference(tmp_path)
    scoring = (code / "scoring.py").read_text()
    old = "    return importance / 10.0\n"
    assert scoring.count(old) == 1
    scoring = scoring.replace(old, "    from mymath import share_of_ten\n\n"
                                   "    return share_of_ten(importance)\n")  # fmt: skip
    (code / "scoring.py").write_text(scoring)
    (code / "mymath.py").write_text(MYMATH)
    retriever = (code / "retriever.py").read_text()  # the retriever imports it too
    future = "from __future__ import annotations\n"
    (code / "retriever.py").write_text(retriever.replace(future, future + "\nimport mymath\n"))
    graded = grade(code.parent)
    assert (graded.core, graded.stretch) == (31, 16), [
        o.message for o in graded.outcomes if not o.score
    ]


def test_a_module_named_like_the_course_own_is_not_staged_and_the_course_one_is_used(tmp_path):
    code = reference(tmp_path)
    (code / "memory_store.py").write_text("raise ImportError('a learner copy')\n")
    (code / "mymath.py").write_text(MYMATH)
    collected = collect(code.parent)
    assert set(collected.files) == {
        "scoring.py",
        "retriever.py",
        "practice/importance_parsing.py",
        "practice/forgetting_rule.py",
        "practice/reflection.py",
        "practice/persistence.py",
        "mymath.py",
    }
    assert grade(code.parent).core == 31


def test_names_from_a_queue_row_are_staged_only_when_they_are_module_files(tmp_path):
    rows = {"scoring.py": b"", "retriever.py": b"", "mymath.py": b"", "../escape.py": b"",
            "memory_store.py": b"", "notes.txt": b""}  # fmt: skip
    folder = tmp_path / "scratch"
    folder.mkdir()
    folders = stage(Collected("ana", [], rows), folder)
    assert sorted(p.name for p in folders["own"].iterdir()) == [
        "mymath.py", "retriever.py", "scoring.py"]  # fmt: skip
    assert sorted(p.name for p in folders["reference"].iterdir()) == ["mymath.py", "retriever.py"]
    assert not (tmp_path / "escape.py").exists()


def test_a_symlinked_practice_folder_is_never_read_through(tmp_path):
    code = reference(tmp_path)
    shutil.rmtree(code / "practice")
    (code / "practice").symlink_to(ROOT / "code" / "practice")  # the reference solution
    collected = collect(code.parent)
    assert sorted(collected.files) == ["retriever.py", "scoring.py"]
    assert "code/practice/reflection.py was refused: its folder is a symbolic link" in (
        collected.notes
    )


def test_the_practice_files_are_staged_as_a_package_of_the_graders_own(tmp_path):
    rows = {"practice/reflection.py": b"x = 1\n", "practice/../escape.py": b"",
            "practice/__init__.py": b"import os\n", "retriever.py": b""}  # fmt: skip
    folder = tmp_path / "scratch"
    folder.mkdir()
    folders = stage(Collected("ana", [], rows), folder)
    for run in ("own", "reference"):
        assert sorted(p.name for p in (folders[run] / "practice").iterdir()) == [
            "__init__.py", "reflection.py"]  # fmt: skip
        assert (folders[run] / "practice" / "__init__.py").read_bytes() == b""
    assert not (folder / "escape.py").exists() and not (tmp_path / "escape.py").exists()
