"""The instructor's grading tools: markers, leak detection, preprocessors, tables.

The whole pipeline (release, nbgrader autograding of 21 known submissions, the student
edition's own tests) runs in `python -m grading selfcheck`; these are its parts, fast.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
from pathlib import Path
from typing import ClassVar

import nbformat
import pytest

from grading.course.autograde import submissions_in, table
from grading.course.editions import check_markers
from grading.course.preprocessors import HideHiddenChecks, StderrIsNotFailure
from grading.judge.grader import Graded, find_code
from grading.layout import ROOT, is_listed
from grading.markers import BuildError, clear_solutions, find_leaks, regions, secret_lines
from grading.selfcheck.mistakes import SUBMISSIONS

SOLUTION = ("### BEGIN SOLUTION", "### END SOLUTION")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("### BEGIN SOLUTION\n### BEGIN SOLUTION\n", "inside another region"),
        ("x = 1\n### END SOLUTION\n", "without a ### BEGIN SOLUTION"),
        ("### BEGIN SOLUTION\nx = 1\n", "never ended"),
        ("    ### BEGIN SOLUTION  # the answer\n", "malformed marker"),
        ("# BEGIN SOLUTION\n", "malformed marker"),
    ],
)
def test_a_malformed_marker_stops_the_build_naming_the_line(text, message):
    with pytest.raises(BuildError, match=message):
        regions(text, "code/example.py", SOLUTION)


def test_clearing_the_learner_core_leaves_stubs_and_no_solution_line():
    for name in ("code/scoring.py", "code/retriever.py"):
        source = (ROOT / name).read_text()
        secrets = secret_lines([(ROOT / name, name)])
        cleared = clear_solutions(source, name)
        assert secrets
        assert not [line for line in cleared.splitlines() if line.strip() in secrets]
        assert cleared.count("raise NotImplementedError()") == len(regions(source, name, SOLUTION))
        compile(cleared, name, "exec")


def test_a_file_without_solution_regions_is_not_taken_for_the_learner_core():
    with pytest.raises(BuildError, match="no ### BEGIN SOLUTION region"):
        clear_solutions("def f():\n    return 1\n", "code/other.py")


def test_secret_lines_skip_imports_short_lines_and_allowed_lines(tmp_path):
    path = tmp_path / "core.py"
    path.write_text(
        "def f(store):\n    ### BEGIN SOLUTION\n    import math\n    x = 1\n"
        "    for memory in store:\n        total = math.sqrt(sum(v * v for v in store))\n"
        "    ### END SOLUTION\n"
    )
    assert secret_lines([(path, "core.py")]) == {
        "total = math.sqrt(sum(v * v for v in store))": "solution in core.py"
    }


def test_every_surviving_secret_or_marker_is_found_with_its_file_and_line(tmp_path):
    secret = "return decay_rate**hours"
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "helper.py").write_text(f"def g():\n    {secret}\n")
    (tmp_path / "notes.md").write_text("text\n### END HIDDEN TESTS\n")
    notebook = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("print(1)")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"{secret}\n")]
    notebook.cells = [cell]
    nbformat.write(notebook, tmp_path / "nb.ipynb")
    (tmp_path / "picture.png").write_bytes(bytes(range(256)))
    leaks = find_leaks(tmp_path, {secret: "solution in code/scoring.py"})
    assert leaks == [
        "code/helper.py:2: solution in code/scoring.py: 'return decay_rate**hours'",
        "nb.ipynb:1: solution in code/scoring.py: 'return decay_rate**hours'",
        "notes.md:2: marker left in: '### END HIDDEN TESTS'",
    ]


def test_answers_are_refused_outside_the_learner_core_and_graded_notebooks(tmp_path):
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "extra.py").write_text("### BEGIN SOLUTION\nx = 1\n### END SOLUTION\n")
    with pytest.raises(BuildError, match="code/extra.py: holds ### BEGIN SOLUTION but is not"):
        check_markers(["code/extra.py"], root=tmp_path)


@pytest.mark.parametrize(
    ("name", "listed"),
    [
        ("grading/course/autograde.py", True),
        ("tests/teaching/test_checks.py", True),
        ("code/__pycache__/scoring.cpython-311.pyc", True),
        ("memory_lab.sqlite3-wal", True),
        ("code/scoring.py", False),
        ("tests/test_scoring.py", False),
        ("docs/learner-guide.md", False),
    ],
)
def test_instructor_files_and_junk_never_ship(name, listed):
    from grading.layout import INSTRUCTOR_ONLY, JUNK

    assert is_listed(name, INSTRUCTOR_ONLY + JUNK) is listed


def grade_cell(source: str, outputs) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = {"grade": True, "grade_id": "c", "points": 1, "solution": False}
    cell.outputs = outputs
    return cell


def test_stderr_in_a_grade_cell_is_kept_as_marked_stdout_so_it_costs_no_points():
    warning = nbformat.v4.new_output("stream", name="stderr", text="DeprecationWarning: x\n")
    cell, _ = StderrIsNotFailure().preprocess_cell(grade_cell("check()", [warning]), {}, 0)
    assert cell.outputs[0].name == "stdout"
    assert cell.outputs[0].text == "[stderr] DeprecationWarning: x\n"


def test_feedback_drops_hidden_code_and_cuts_a_failure_to_the_likely_mistake():
    source = "# more cases\n### BEGIN HIDDEN TESTS\nrun_cases('f', [Case((3,), 0.3)])\n"
    source += "### END HIDDEN TESTS\n"
    error = nbformat.v4.new_output(
        "error",
        ename="CheckFailed",
        evalue="f(3)\n  expected: 0.3\n  got:      3\n  likely mistake: divide by 10\n"
        "  (fix it in code/scoring.py, Milestone 2)",
        traceback=["Cell In[5], line 3", "run_cases('f', [Case((3,), 0.3)])"],
    )
    cell, _ = HideHiddenChecks().preprocess_cell(grade_cell(source, [error]), {}, 0)
    assert cell.source == "# more cases\n# (hidden checks)"
    shown = cell.outputs[0]
    assert shown.evalue == (
        "a hidden check failed. likely mistake: divide by 10 "
        "(fix it in code/scoring.py, Milestone 2)"
    )
    assert shown.traceback == [f"CheckFailed: {shown.evalue}"]
    assert "0.3" not in shown.evalue


def test_a_submission_is_found_in_its_folder_or_one_below(tmp_path):
    tmp_path = tmp_path / ".hidden-parent"  # where the folder lies does not matter
    (tmp_path / "ana" / "code").mkdir(parents=True)
    (tmp_path / "ben" / "memory-lab-main" / "code").mkdir(parents=True)
    (tmp_path / "cy" / "notes").mkdir(parents=True)
    assert find_code(tmp_path / "ana") == tmp_path / "ana" / "code"
    assert find_code(tmp_path / "ben") == tmp_path / "ben" / "memory-lab-main" / "code"
    assert find_code(tmp_path / "cy") is None


def test_student_folders_are_listed_and_odd_names_skipped_with_a_reason(tmp_path):
    for name in ("ana", "ben.k", ".git", "two words"):
        (tmp_path / name).mkdir()
    (tmp_path / "readme.txt").write_text("")
    said = []
    assert [p.name for p in submissions_in(tmp_path, said.append)] == ["ana", "ben.k"]
    assert said == ["skipped 'two words': a student id is letters, digits and _ . @ + -"]
    with pytest.raises(BuildError, match="holds no student folders"):
        submissions_in(tmp_path / "ana", said.append)


def test_the_table_gives_points_per_milestone_and_the_total():
    from grading.judge.verdict import CELLS, Outcome

    ana = Graded("ana", [Outcome(c, score=float(c.points)) for c in CELLS if c.milestone != 2])
    bo = Graded("bo", [Outcome(c) for c in CELLS])
    assert table([ana, bo]).splitlines() == [
        "student  M1 /5  M2 /6  M3 /4  M4 /8  M5 /8  M6 /4  M7 /4  M8 /4  M9 /4  total /31  "
        "stretch /16",
        "ana          5      0      4      8      8      4      4      4      4         25  "
        "         16",
        "bo           0      0      0      0      0      0      0      0      0          0  "
        "          0",
    ]
    assert table([bo], isolated=False).splitlines()[-1].startswith("NOT ISOLATED")


@pytest.mark.parametrize("submission", SUBMISSIONS, ids=lambda s: s.name)
def test_every_self_check_edit_applies_to_the_reference_exactly_once(submission):
    for name, old, _ in submission.edits:
        assert (ROOT / name).read_text().count(old) == 1, f"{submission.name}: {old!r}"


def test_instructor_parts_of_markdown_are_left_out_of_the_student_edition():
    from grading.course.editions import without_instructor_parts

    text = "# Lab\n<!-- instructor-only: why -->\n## For instructors\nrun it\n"
    text += "<!-- /instructor-only -->\n## Start\n"
    assert without_instructor_parts(text, "README.md") == "# Lab\n## Start\n"
    with pytest.raises(BuildError, match="README.md: an instructor-only comment without its pair"):
        without_instructor_parts("<!-- instructor-only -->\nhalf\n", "README.md")


def test_staging_copies_regular_files_and_refuses_links_fifos_and_huge_files(tmp_path):
    from grading.judge.grader import MAX_BYTES, copy_regular

    (tmp_path / "ok.py").write_text("x = 1\n")
    (tmp_path / "link.py").symlink_to(tmp_path / "ok.py")
    os.mkfifo(tmp_path / "fifo.py")
    (tmp_path / "huge.py").write_bytes(b"#" * (MAX_BYTES + 1))
    out = tmp_path / "out.py"
    assert copy_regular(tmp_path / "ok.py", out) is None
    assert out.read_text() == "x = 1\n"
    assert "symbolic link" in copy_regular(tmp_path / "link.py", out)
    assert "not a regular file" in copy_regular(tmp_path / "fifo.py", out)
    assert "larger than" in copy_regular(tmp_path / "huge.py", out)
    assert "missing" in copy_regular(tmp_path / "absent.py", out)


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.parametrize("kind", ["folder", "socket", "device"])
def test_a_folder_socket_or_device_in_place_of_a_learner_file_is_refused_by_name(tmp_path, kind):
    import socket

    from grading.judge.grader import copy_regular

    path = tmp_path / "scoring.py"
    if kind == "folder":
        path.mkdir()
    elif kind == "socket":
        with socket.socket(socket.AF_UNIX) as server:
            server.bind(str(path))  # the file stays after the socket is closed
    elif os.geteuid() == 0:
        os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # what /dev/null is
    else:
        pytest.skip("making a device needs root")
    before = open_fds()
    note = copy_regular(path, tmp_path / "out.py")
    assert note == f"code/scoring.py was refused: it is a {kind}, not a regular file"
    assert open_fds() == before  # nothing leaked
    assert not (tmp_path / "out.py").exists()


def test_student_ids_are_matched_whole_so_a_trailing_newline_is_skipped(tmp_path):
    (tmp_path / "victim").mkdir()
    (tmp_path / "victim\n").mkdir()
    said = []
    assert [p.name for p in submissions_in(tmp_path, said.append)] == ["victim"]
    assert said == ["skipped 'victim\\n': a student id is letters, digits and _ . @ + -"]


def test_an_empty_code_folder_at_the_top_is_passed_over_for_the_real_one_and_said(tmp_path):
    from grading.judge.grader import locate

    (tmp_path / "ana" / "code").mkdir(parents=True)
    (tmp_path / "ana" / "memory-lab-main" / "code").mkdir(parents=True)
    (tmp_path / "ana" / "memory-lab-main" / "code" / "scoring.py").write_text("")
    code, note = locate(tmp_path / "ana")
    assert code == tmp_path / "ana" / "memory-lab-main" / "code"
    assert note.startswith("graded memory-lab-main/code/ (the code/ folder at the top holds")
    (tmp_path / "ana" / "copy" / "code").mkdir(parents=True)
    (tmp_path / "ana" / "copy" / "code" / "retriever.py").write_text("")
    assert locate(tmp_path / "ana") == (
        None,
        "two folders hold learner files (copy/code/, memory-lab-main/code/): keep one, "
        "nothing graded",
    )
    (tmp_path / "ana" / "code" / "scoring.py").write_text("")  # the top one wins when it holds one
    assert locate(tmp_path / "ana") == (tmp_path / "ana" / "code", "graded code/")


def test_a_symlinked_code_folder_is_refused(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "ana").mkdir()
    (tmp_path / "ana" / "code").symlink_to(tmp_path / "real")
    assert find_code(tmp_path / "ana") is None


@pytest.mark.parametrize(
    "reply",
    [
        {"value": "0.8"},  # a string that looks right
        {"value": True},  # a bool is no float
        {"value": 1},  # an int, not the exact float the worker must send
        {"value": [0.8]},
        {"type": "<script>"},  # a type name the parent does not know
        {"error": "<img src=x>", "line": 10**9},
        None,  # the worker died or hung
    ],
)
def test_the_parent_accepts_only_an_exact_float_and_quotes_nothing_unvalidated(reply):
    from grading.judge.verdict import CELLS, run_cell

    cell = next(c for c in CELLS if c.id == "check_importance_score")
    outcome = run_cell(cell, lambda request: reply, {})
    assert outcome.score == 0.0
    assert "<" not in outcome.message
    assert "expected" in outcome.message or "likely mistake" in outcome.message


def test_the_parent_scores_exact_right_floats_in_full():
    from grading.judge.verdict import CELLS, run_cell

    cell = next(c for c in CELLS if c.id == "check_importance_score")
    answers = iter(case.expected for case in cell.cases)
    outcome = run_cell(cell, lambda request: {"value": float(next(answers))}, {})
    assert (outcome.score, outcome.message) == (cell.points, "")


def test_hidden_cases_come_from_the_instructor_notebooks_and_never_show_their_inputs():
    from grading.judge.verdict import CELLS, run_cell

    cell = next(c for c in CELLS if c.id == "check_recency_score_hidden")
    assert len(cell.cases) == 7 and cell.hidden
    outcome = run_cell(cell, lambda request: {"value": 0.5}, {})
    assert outcome.score == 0.0
    assert "hidden case failed" in outcome.message
    assert "0.970299" not in outcome.message and "0.5" not in outcome.message


@pytest.fixture
def course(tmp_path, monkeypatch):
    """A gradebook with the assignment's notebooks and grade cells, as release makes it."""
    from nbgrader.api import Gradebook

    # nbgrader runs the `alembic` command to make a new gradebook: the venv's, on PATH
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")

    from grading.layout import ASSIGNMENT, REGISTRY
    from grading.points import points

    worth = points()
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gradebook:
        gradebook.add_assignment(ASSIGNMENT)
        for notebook, cells in REGISTRY.GRADE_CELLS.items():
            name = notebook.removesuffix(".ipynb")
            gradebook.add_notebook(name, ASSIGNMENT)
            for cell in cells:
                gradebook.add_grade_cell(cell, name, ASSIGNMENT, max_score=worth[cell],
                                         cell_type="code")  # fmt: skip
    return tmp_path


def test_a_regrade_replaces_the_sandboxed_scores_and_the_export_holds_every_student(course):
    from grading.course.results import EXPORT, write_csv, write_gradebook
    from grading.judge.verdict import CELLS, Outcome

    write_gradebook(Graded("ana", [Outcome(c, score=float(c.points)) for c in CELLS]), course)
    write_gradebook(Graded("bo", [Outcome(c, score=float(c.points)) for c in CELLS]), course)
    crashed = Graded("ana", [Outcome(c, message="grading failed") for c in CELLS])
    write_gradebook(crashed, course)  # resubmitted, and this time the worker crashed
    path = write_csv(course=course)
    assert path.name == EXPORT != "grades.csv"  # nbgrader export's file is never overwritten
    rows = path.read_text().splitlines()
    assert rows == [
        "student_id,timestamp,milestone_1,milestone_2,milestone_3,milestone_4,milestone_5,"
        "milestone_6,milestone_7,milestone_8,milestone_9,core,stretch,written,raw_score,"
        "late_submission_penalty,score,max_score",
        "ana,,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,47",
        "bo,,5,6,4,8,8,4,4,4,4,31,16,0,47,0,47,47",
    ]


def test_the_feedback_page_is_escaped_offline_and_capped(tmp_path):
    from grading.course.results import PAGE_BYTES, write_feedback
    from grading.judge.verdict import CELLS, Outcome
    from grading.layout import GRADED

    graded = Graded("ana", [Outcome(c, message="<script>x</script>" * 10_000) for c in CELLS])
    graded.notes = ["<img src=x onerror=alert(1)>"]
    folder = write_feedback(graded, tmp_path)
    for nb in GRADED:
        page = (folder / f"{nb.name}.html").read_text()
        assert "<script" not in page and "<img" not in page and "://" not in page
        assert "default-src 'none'" in page  # the browser refuses any script or fetch too
        assert len(page.encode()) <= PAGE_BYTES
    # one page per notebook: release_feedback names each by md5(secret + notebook)
    assert {p.name for p in folder.iterdir()} == {f"{nb.name}.html" for nb in GRADED} | {
        "timestamp.txt",
        "submission_secret.txt",
    }


def test_a_crash_line_is_quoted_only_from_the_learner_own_file(tmp_path):
    from grading.judge.verdict import CELLS, run_cell

    mine = tmp_path / "retriever.py"
    mine.write_text("def retrieve(store, query, now):\n    return store.missing\n")
    cell = next(c for c in CELLS if c.id == "check_retrieve")
    crafted = {"error": "ValueError", "file": "scoring.py", "line": 2}  # the reference's line
    outcome = run_cell(cell, lambda request: crafted, {"retriever.py": mine})
    assert "raised ValueError\n" in outcome.message and "line 2" not in outcome.message
    own = {"error": "AttributeError", "file": "retriever.py", "line": 2}
    outcome = run_cell(cell, lambda request: own, {"retriever.py": mine})
    assert "line 2 of code/retriever.py: `return store.missing`" in outcome.message


class FakeWorker:
    """A worker that answers every case with 0.0 and records what each instance was asked."""

    started: ClassVar[list] = []

    def __init__(self, folder, modules, slot, isolated, deadline=None, proxy=False):
        self.asked, self.hello = [], {"ready": True}
        self.process = type("Process", (), {"poll": lambda self: None})()
        FakeWorker.started.append((folder.name, self.asked))

    def ask(self, request, calls=None):
        self.asked.append(request)
        return {"value": 0.0}

    def __exit__(self, *exc):
        pass


def test_hidden_cells_run_in_fresh_workers_after_every_public_one(tmp_path, monkeypatch):
    from grading.judge import grader
    from grading.judge.verdict import CELLS, request

    monkeypatch.setattr(grader, "Worker", FakeWorker)
    FakeWorker.started = []
    folders = {"own": tmp_path / "own", "reference": tmp_path / "reference"}
    budget = grader.Budget(0, True, float("inf"))
    outcomes, _ = grader.runs(CELLS, folders, budget)
    assert [o.cell.id for o in outcomes] == [c.id for c in CELLS]
    hidden_inputs = [[request(c, case) for case in c.cases] for c in CELLS if c.hidden]
    seen_hidden = False
    for folder, asked in FakeWorker.started:
        asked = [{k: v for k, v in r.items() if k != "scores"} for r in asked]  # the proxy's
        kinds = {any(request in inputs for inputs in hidden_inputs) for request in asked}
        assert len(kinds) <= 1, f"a worker over {folder} got public and hidden cases"
        if kinds == {True}:
            seen_hidden = True
        elif seen_hidden:
            raise AssertionError("a public case was asked after a hidden one")
    assert seen_hidden


def test_cells_left_when_the_time_budget_is_spent_score_0_and_say_so(tmp_path, monkeypatch):
    from grading.judge import grader
    from grading.judge.verdict import CELLS

    monkeypatch.setattr(grader, "Worker", FakeWorker)
    budget = grader.Budget(0, True, deadline=0.0)  # long past
    outcomes = grader.run(CELLS[:2], tmp_path, ["scoring"], {}, budget)
    assert budget.spent and [o.score for o in outcomes] == [0.0, 0.0]
    assert "used up the submission's 60 s" in outcomes[0].message
    late = Graded("slow", outcomes, out_of_time=True)
    assert table([late]).splitlines()[1].endswith("time budget of 60 s used up")


def test_the_hint_calls_the_retriever_right_only_when_every_retriever_cell_scored():
    from grading.judge.grader import hint
    from grading.judge.verdict import CELLS, Outcome

    cells = {c.id: c for c in CELLS}
    rank, retrieve = cells["check_rank_memories"], cells["check_retrieve"]
    scoring = [Outcome(cells["check_recency_score"], message="wrong")]  # Milestone 1 lost
    ids = [list(rank.cases[0].ranking)]
    with_own = [Outcome(rank, answers=[ids[0][::-1]]), Outcome(retrieve, answers=[None])]
    right = [Outcome(rank, 2.0, answers=ids), Outcome(retrieve, 3.0, answers=[None])]
    assert hint(with_own, right, scoring, right).startswith("your retriever is right")
    # check_retrieve lost its points (no refresh) while the ranking was right
    refresh_lost = [Outcome(rank, 2.0, answers=ids), Outcome(retrieve, 0.0, answers=[None])]
    text = hint(with_own, refresh_lost, scoring, refresh_lost)
    assert "your retriever is right" not in text
    assert "fix Milestone 1 first" in text and "loses points of its own" in text


def test_grading_refuses_a_release_that_disagrees_with_the_notebooks_naming_the_cell(tmp_path):
    from grading.course.autograde import check_release
    from grading.layout import ASSIGNMENT, GRADED
    from grading.points import points

    source = tmp_path / "source" / ASSIGNMENT
    source.mkdir(parents=True)
    for nb in GRADED:
        shutil.copy2(ROOT / "notebooks" / f"{nb.name}.ipynb", source / f"{nb.name}.ipynb")
    check_release(tmp_path)  # the release as built from these notebooks: nothing to say
    path = source / "01_recency.ipynb"
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade_id") == "check_recency_score":
            meta["points"] = 4
        if meta.get("grade_id") == "check_recency_score_hidden":
            cell.source = cell.source.replace("run_cases(", "run_cases(  ", 1)
    nbformat.write(notebook, path)
    with pytest.raises(BuildError) as refused:
        check_release(tmp_path)
    said = str(refused.value)
    assert f"check_recency_score is worth {points()['check_recency_score']:g} points" in said
    assert "check_recency_score_hidden's hidden checks differ" in said
    assert "python -m grading release" in said


def test_the_guide_points_table_is_the_one_generated_from_the_notebooks():
    from grading.points import TABLE_BEGIN, TABLE_END, table

    guide = (ROOT / "docs" / "instructor-guide.md").read_text()
    start, end = guide.index(TABLE_BEGIN) + len(TABLE_BEGIN), guide.index(TABLE_END)
    assert guide[start:end].strip() == table(), "run: python -m grading points"
    assert "**31**" in table() and "**8**" in table() and "**16**" in table()
    assert "**55**" in table()
