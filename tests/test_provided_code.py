"""No provided module computes a milestone's result on its own: with the learner's stubs
in place, each provided function that ranks or recalls names the stub it waits for.

The learner core is cleared in a copy of code/ exactly as the student edition clears it
(nbgrader's ClearSolutions, grading/markers.py); tests/grading/test_provided_code_edition.py
checks the released student edition itself. A provided function that regains its own
rows-then-sort (or recency, or weighted sum) returns here instead of raising, and fails.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from provided_probes import PROBES, expected_words, run_probe
from teaching.milestones import EXERCISE_FILES, EXERCISES, LEARNER_FILES, MILESTONES, file_of

# the instructor's tools clear the learner core; the student edition has no grading/ (and
# its own learner core is the stubs already: tests/grading/ checks it at release)
clear_solutions = pytest.importorskip("grading.markers").clear_solutions
ROOT = Path(__file__).resolve().parents[1]
CODE = ROOT / "code"


@pytest.fixture(scope="module")
def stubbed(tmp_path_factory) -> Path:
    """code/ as the student edition has it: every solution region of the learner core cleared."""
    code = tmp_path_factory.mktemp("student") / "code"
    shutil.copytree(CODE, code, ignore=shutil.ignore_patterns("__pycache__"))
    for name in LEARNER_FILES:
        target = code.parent / name  # code/scoring.py, code/practice/reflection.py
        target.write_text(clear_solutions(target.read_text(), name))
    return code


@pytest.mark.parametrize("name", sorted(PROBES))
def test_with_the_stubs_a_provided_function_names_the_stub_it_waits_for(stubbed, name):
    outcome = run_probe(stubbed, name)
    assert outcome["raised"] == "NotWrittenYet", f"{name} returned without the learner's code"
    for word in expected_words(name):
        assert word in outcome["message"], outcome["message"]


@pytest.mark.parametrize("name", sorted(PROBES))
def test_on_the_reference_every_provided_function_runs(name):
    assert run_probe(CODE, name) == {"raised": None, "message": ""}


def fast_scores_of(code: Path) -> str:
    script = (
        f"import sys; sys.path.insert(0, {str(code)!r})\n"
        "import numpy as np\nfrom scale.matrix_scoring import fast_scores\n"
        "s = fast_scores(np.array([1.0, 0.5], np.float32), np.array([0.0, 3600.0]),"
        " np.array([5.0, 8.0]), 7200.0, (1.0, 1.0, 1.0), 0.995)\n"
        "print(None if s is None else [round(x, 6) for x in s.tolist()])\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_index_has_no_shortcut_until_the_learner_writes_retrieval_scores(stubbed):
    assert fast_scores_of(stubbed) == "None"  # the caller then ranks every memory exactly
    assert fast_scores_of(CODE) == "[2.490025, 2.295]"  # 1 + 0.995**2 + 0.5; 0.5 + 0.995 + 0.8


def test_the_stub_table_of_base_unwritten_mirrors_the_milestones():
    from base.unwritten import WHERE

    expected = {name: f"{row.file}, {row.label}" for name, row in MILESTONES.items()}
    expected |= {
        name: f"{file_of(module)}, notebook {notebook.split('_')[0]}'s exercise"
        for name, (module, notebook) in EXERCISES.items()
    }
    assert expected == WHERE


@pytest.fixture(scope="module")
def exercises_stubbed(tmp_path_factory) -> Path:
    """code/ of a learner who finished the milestones but not notebook 08's exercise."""
    code = tmp_path_factory.mktemp("exercises") / "code"
    shutil.copytree(CODE, code, ignore=shutil.ignore_patterns("__pycache__"))
    for name in EXERCISE_FILES:
        target = code.parent / name  # code/practice/exercises.py
        target.write_text(clear_solutions(target.read_text(), name))
    return code


def metrics_of(code: Path) -> str:
    script = (
        f"import sys; sys.path.insert(0, {str(code)!r})\n"
        "from evaluation.metrics import recall_at_k, reciprocal_rank\n"
        "for call in (lambda: recall_at_k(['m7', 'm2'], ['m2'], 1),\n"
        "             lambda: reciprocal_rank(['m7', 'm2'], ['m2'])):\n"
        "    try:\n        print(call())\n"
        "    except NotImplementedError as error:\n"
        "        print(type(error).__name__, error)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_evaluation_metrics_are_the_learners_own(exercises_stubbed):
    said = metrics_of(exercises_stubbed)
    for name in ("recall_at_k", "reciprocal_rank"):
        assert f"NotWrittenYet not implemented yet: {name} runs on your {name}" in said, said
    assert said.count("code/practice/exercises.py, notebook 08's exercise") == 2, said
    assert metrics_of(CODE) == "0.0\n0.5\n"


RATED_BY_A_MODEL = """
import sys
sys.path.insert(0, {code!r})
import extensions.importance_rating as rating
rating.is_offline = lambda model: False  # a real model's reply, without the network
rating.ask = lambda model, prompt, **kwargs: "Rating: 12"
print(repr(tuple(rating.rate_importance("we signed the contract", model="openai/gpt-4o-mini"))))
"""


def rated_by_a_model(code: Path) -> tuple:
    done = subprocess.run(
        [sys.executable, "-c", RATED_BY_A_MODEL.format(code=str(code))],
        capture_output=True,
        text=True,
        cwd=code,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return ast.literal_eval(done.stdout.strip().splitlines()[-1])


def test_before_milestone_6_a_model_rating_falls_back_to_the_heuristic_and_says_so(stubbed):
    value, source, note = rated_by_a_model(stubbed)
    assert (value, source) == (8, "heuristic")  # 3 +3 contract +2 signed
    assert "parse_importance is not implemented yet" in note and "optional Milestone 6" in note
    assert rated_by_a_model(CODE)[:2] == (10, "model")  # the reference reads and clamps 12
