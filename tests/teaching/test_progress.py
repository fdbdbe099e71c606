"""python code/run.py progress: every milestone's check in its own process, and what next."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def returns_replaced(source: str, function: str, expression: str) -> str:
    """`source` with every `return ...` of `function` made to return `expression` instead.

    Works on any solution, however its author spelled it (`importance / 10`,
    `importance * 0.1`, ...): the mutation follows the syntax tree, not a literal line.
    """
    lines = source.splitlines(keepends=True)
    tree = ast.parse(source)
    (target,) = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == function]
    returns = [n for n in ast.walk(target) if isinstance(n, ast.Return) and n.value is not None]
    assert returns, f"{function} has no return to mutate"
    for node in sorted(returns, key=lambda n: (n.value.lineno, n.value.col_offset), reverse=True):
        value = node.value  # replaced from the last one up, so earlier positions stay valid
        first, last = value.lineno - 1, value.end_lineno - 1
        lines[first : last + 1] = [
            lines[first][: value.col_offset]
            + f"({expression})"
            + lines[last][value.end_col_offset :]
        ]
    return "".join(lines)


def test_a_return_is_mutated_whatever_its_spelling():
    for body in (
        "return importance / 10",
        "return importance * 0.1",
        "return (\n    importance / 10.0\n)",
    ):
        source = f"def importance_score(importance):\n    x = 1\n    {body}\n"
        mutated = returns_replaced(source, "importance_score", "importance")
        namespace: dict = {}
        exec(mutated, namespace)
        assert namespace["importance_score"](8) == 8, mutated


def run_progress(code: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(code / "run.py"), "progress", *args], capture_output=True, text=True
    )


@pytest.mark.slow
@pytest.mark.needs_milestones(5)
def test_progress_shows_each_milestone_and_what_to_do_next(tmp_path):
    code = tmp_path / "code"
    shutil.copytree(ROOT / "code", code, ignore=shutil.ignore_patterns("__pycache__"))
    done = run_progress(code)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "8 of 8 functions pass their checks." in done.stdout
    assert "All 5 milestones pass. Next: notebooks 07b-07h" in done.stdout
    assert re.search(r"Milestone 5 +kind_recency_score", done.stdout)
    scoring = code / "scoring.py"
    scoring.write_text(returns_replaced(scoring.read_text(), "importance_score", "importance"))
    done = run_progress(code)
    assert done.returncode == 1
    assert re.search(r"importance_score +FAIL  importance_score\(", done.stdout)
    assert "Next: fix importance_score in code/scoring.py, Milestone 2" in done.stdout
    assert "likely mistake: the rating was returned as is; divide by 10" in done.stdout


def test_progress_reports_todo_fail_and_pass_and_names_the_next_step():
    from teaching.progress import Outcome, report

    outcomes = [
        Outcome("recency_score", "pass", "7 checks passed"),
        Outcome("importance_score", "FAIL", "importance_score(7)\n  likely mistake: divide by 10"),
        Outcome("relevance_score", "todo", "relevance_score is not implemented yet: open ..."),
    ]
    lines = report(outcomes).splitlines()
    assert lines[0].split() == ["Milestone", "1", "recency_score", "pass", "7", "checks", "passed"]
    assert lines[1].split()[:4] == ["Milestone", "2", "importance_score", "FAIL"]
    assert lines[2].split()[:3] == ["relevance_score", "todo", "not"]
    assert "1 of 3 functions pass their checks." in lines
    assert any(line.startswith("Next: fix importance_score in code/scoring.py") for line in lines)
    assert lines[-1] == "  likely mistake: divide by 10"


def test_when_only_milestone_5_is_left_progress_points_to_notebooks_05_and_06_first():
    from teaching.milestones import MILESTONES
    from teaching.progress import Outcome, report

    outcomes = [
        Outcome(name, "todo" if name == "kind_recency_score" or row.stretch else "pass", "")
        for name, row in MILESTONES.items()
    ]
    text = report(outcomes)
    assert (
        "Next: notebooks 05, 06a and 06b if you have not yet, then implement kind_recency_score in "
        "code/scoring.py, Milestone 5 (07a_kinds.ipynb)." in text
    )
    assert any(
        line.split()[:4] == ["Milestone", "5", "kind_recency_score", "todo"]
        for line in text.splitlines()
    )
    assert "Optional:" not in text  # a core milestone first, the optional ones after


def test_when_the_core_passes_progress_offers_the_optional_milestones():
    from teaching.milestones import MILESTONES
    from teaching.progress import Outcome, report

    outcomes = [
        Outcome(name, "todo" if row.stretch else "pass", "") for name, row in MILESTONES.items()
    ]
    text = report(outcomes)
    assert "All 5 milestones pass." in text
    assert (
        "Optional: implement parse_importance in code/practice/importance_parsing.py, optional "
        in text
    )
    assert any(
        line.split()[:5] == ["optional", "Milestone", "7", "should_forget", "todo"]
        for line in text.splitlines()
    )


@pytest.mark.needs_milestones(2)
def test_progress_runs_a_check_in_process_and_sorts_its_outcome(monkeypatch):
    from teaching import checks
    from teaching.progress import run_one

    assert run_one("importance_score") == ("pass", "4 checks passed")

    def wrong():
        raise checks.CheckFailed("importance_score(7)\n  likely mistake: divide by 10")

    def stub():
        raise checks.NotImplementedYet("importance_score is not implemented yet")

    def broken():
        raise KeyError("x")

    for replacement, status in ((wrong, "FAIL"), (stub, "todo"), (broken, "FAIL")):
        monkeypatch.setitem(checks.CHECKS, "importance_score", replacement)
        assert run_one("importance_score")[0] == status


def test_a_passing_check_shows_only_its_own_count_never_what_else_it_printed():
    from teaching.progress import passed_line

    printed = "tables used: FAST = {'episodic': 24}\nkind_recency_score: 10 checks passed\n"
    assert passed_line("kind_recency_score", printed) == "10 checks passed"
    assert passed_line("recency_score", "recency_score: 7 checks passed\n") == "7 checks passed"
    assert passed_line("retrieve", "a table\n") == "all checks passed"


@pytest.mark.needs_milestones(5)
@pytest.mark.parametrize("name", ["kind_recency_score", "retrieve_by_kind", "recency_score"])
def test_every_function_passes_with_n_checks_passed_as_its_status(name):
    from teaching.progress import run_one

    status, message = run_one(name)
    assert status == "pass"
    assert re.fullmatch(r"\d+ checks passed", message), message
