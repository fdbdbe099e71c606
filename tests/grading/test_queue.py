"""Several graders on one PostgreSQL gradebook and queue (grading/queue.py), for real.

Two `python -m grading worker` processes, each in a working folder of its own (two
machines), grade 60 queued submissions; one is killed (SIGKILL) while it holds a claim.
Every submission is then graded exactly once, none half, and nbgrader's grade table is
the one a single grader writes. A grader killed in the middle of writing leaves nothing.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from grading import selfcheck
from grading.gradebook import opened
from grading.layout import ASSIGNMENT, LEARNER_FILES, REGISTRY, ROOT
from grading.markers import clear_solutions
from grading.mistakes import SUBMISSIONS

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

LEASE = 4.0  # seconds: a killed grader's claim is back in the queue this soon
STALL = 90.0  # seconds without a single new grade: the batch is stuck, the test fails
COUNT = 60
PLAIN = [  # right, untouched, and every one-mistake learner core of the self-check
    s for s in SUBMISSIONS
    if not (s.attack or s.retriever_attack or s.links or s.folders or s.nested or s.alias
            or s.transform or s.extra or s.edit_check_cells or s.delete)
]  # fmt: skip


@pytest.fixture
def gradebook_url(monkeypatch):
    """A fresh database on the tests' embedded server, holding the assignment as release
    records it; its SQLAlchemy URL."""
    from pg_fixtures import server

    # nbgrader runs the `alembic` command to make a new gradebook: the venv's, on PATH
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    name = f"gradebook_{uuid.uuid4().hex[:12]}"
    server().create_database(name)
    url = server().admin_url(name).replace("postgresql://", "postgresql+psycopg://", 1)
    with_assignment(url)
    return url


def with_assignment(url: str) -> None:
    with opened(url) as gradebook:
        gradebook.add_assignment(ASSIGNMENT)
        for notebook, cells in REGISTRY.GRADE_CELLS.items():
            name = notebook.removesuffix(".ipynb")
            gradebook.add_notebook(name, ASSIGNMENT)
            for cell, points in cells.items():
                gradebook.add_grade_cell(cell, name, ASSIGNMENT, max_score=points, cell_type="code")
            for cell, points in REGISTRY.MANUAL_CELLS.get(notebook, {}).items():
                gradebook.add_grade_cell(
                    cell, name, ASSIGNMENT, max_score=points, cell_type="markdown"
                )


@pytest.fixture
def submissions(tmp_path, monkeypatch):
    """60 collected submissions: the student edition's learner core (as release clears it),
    filled in by selfcheck.build as right, untouched or wrong in one known way."""
    student = tmp_path / "student"
    for name in LEARNER_FILES:
        (student / name).parent.mkdir(parents=True, exist_ok=True)
        (student / name).write_text(clear_solutions((ROOT / name).read_text(), name))
    monkeypatch.setattr(selfcheck, "STUDENT", student)
    folder = tmp_path / "submitted"
    folder.mkdir()
    for index in range(COUNT):
        kind = PLAIN[index % len(PLAIN)]
        selfcheck.build(dataclasses.replace(kind, name=f"s{index:02d}-{kind.name}"), folder)
    return folder


def grade_table(url: str) -> dict[tuple[str, str, str], float | None]:
    """(student, notebook, cell) -> auto score, for every grade row of the gradebook."""
    with opened(url) as gradebook:
        table = {
            (student.id, notebook.name, grade.name): grade.auto_score
            for student in gradebook.students
            for submission in student.submissions
            for notebook in submission.notebooks
            for grade in notebook.grades
        }
    return table


def sql(url: str, query: str, **values) -> list:
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    try:
        with engine.connect() as db:
            return list(db.execute(text(query), values))
    finally:
        engine.dispose()


def single_grader(submissions: Path, tmp_path: Path) -> dict:
    """The table one grader writes, one submission after another, into its own gradebook."""
    from grading.autograde import autograde

    course = tmp_path / "single"
    course.mkdir()
    url = f"sqlite:///{course / 'gradebook.db'}"
    with_assignment(url)
    results = autograde(submissions, jobs=1, course=course, url=url, log=lambda line: None)
    assert len(results) == COUNT
    return grade_table(url)


def grader(tmp_path: Path, name: str, url: str, slot: int) -> subprocess.Popen:
    """`python -m grading worker` in a working folder of its own, as on another machine."""
    home = tmp_path / name
    (home / "course").mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    with (home / "log").open("w") as log:  # the child has its own copy of the descriptor
        return subprocess.Popen(
            [sys.executable, "-m", "grading", "worker", "--db-url", url, "--course",
             str(home / "course"), "--slot", str(slot), "--lease", str(LEASE)],
            cwd=home, env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip


def enqueue(url: str, submissions: Path) -> None:
    from grading import queue
    from grading.grader import collect

    engine = queue.engine_for(url)
    try:
        queue.enqueue(engine, ASSIGNMENT, [collect(p) for p in sorted(submissions.iterdir())])
    finally:
        engine.dispose()


def wait(process: subprocess.Popen, url: str, log: Path) -> None:
    """Until `process` ends; fail when the batch makes no progress for STALL seconds."""
    seen, since = -1, time.monotonic()
    while process.poll() is None:
        graded = sql(url, "SELECT count(*) FROM memorylab_grading_log")[0][0]
        if graded != seen:
            seen, since = graded, time.monotonic()
        elif time.monotonic() - since > STALL:
            process.kill()
            process.wait()
            open_rows = sql(url, "SELECT student, state, grader FROM memorylab_grading_queue "
                                 "WHERE state <> 'done'")  # fmt: skip
            pytest.fail(f"no grade written for {STALL:g} s with {graded} of {COUNT} graded; "
                        f"still open: {open_rows}\n{log.read_text()[-3000:]}")  # fmt: skip
        time.sleep(0.5)
    assert process.returncode == 0, log.read_text()[-3000:]


def test_two_graders_one_killed_grade_each_submission_once_as_one_grader_does(
    gradebook_url, submissions, tmp_path
):
    url = gradebook_url
    single = single_grader(submissions, tmp_path)
    enqueue(url, submissions)
    started = time.monotonic()
    first, second = grader(tmp_path, "a", url, 0), grader(tmp_path, "b", url, 1)
    doomed = f"{os.uname().nodename}:{first.pid}"
    held: list = []
    while not held:  # kill the first grader mid-batch, while it holds a claim
        assert first.poll() is None, (tmp_path / "a" / "log").read_text()[-3000:]
        mine = sql(url, "SELECT count(*) FROM memorylab_grading_log WHERE grader = :g", g=doomed)
        if mine[0][0] >= 10:
            os.kill(first.pid, signal.SIGKILL)
            first.wait()
            held = sql(url, "SELECT id, student FROM memorylab_grading_queue WHERE grader = :g "
                            "AND state = 'claimed'", g=doomed)  # fmt: skip
            assert held, "killed between two submissions: the test could not show a reclaim"
        time.sleep(0.05)
    wait(second, url, tmp_path / "b" / "log")
    seconds = time.monotonic() - started

    log = sql(url, "SELECT queue_id, student, grader, attempt FROM memorylab_grading_log")
    rows = sql(url, "SELECT id, student, state, attempts FROM memorylab_grading_queue")
    assert len(rows) == COUNT and {row.state for row in rows} == {"done"}
    assert sorted(entry.queue_id for entry in log) == sorted(row.id for row in rows)  # once each
    by_id = {entry.queue_id: entry for entry in log}
    for row_id, _student in held:  # the killed grader's claim ran out; the other took it over
        assert by_id[row_id].grader != doomed and by_id[row_id].attempt == 2, by_id[row_id]
    assert sum(row.attempts for row in rows) == COUNT + len(held)  # no other claim was lost
    graders = {entry.grader for entry in log}
    assert doomed in graders and len(graders) == 2
    assert grade_table(url) == single  # every grade row, none half-written, none extra
    print(f"\n{COUNT} graded by two graders in {seconds:.1f} s; the killed one wrote "
          f"{sum(e.grader == doomed for e in log)}; reclaimed after the kill: "
          f"{[student for _, student in held]}")  # fmt: skip


KILLED_WHILE_WRITING = """
import os, signal, sys
from grading import queue, results
from grading.grader import Graded
from grading.verdict import CELLS, Outcome

url = sys.argv[1]
engine = queue.engine_for(url)
job = queue.claim(engine, "doomed", 3600)
graded = Graded(job.student)
graded.outcomes = [Outcome(cell, score=float(cell.points)) for cell in CELLS]

def half_then_killed(gradebook, graded):
    half = Graded(graded.student, graded.outcomes[: len(graded.outcomes) // 2])
    results.record(gradebook, half)  # nbgrader commits after each call
    os.kill(os.getpid(), signal.SIGKILL)

queue.write(url, job, graded, "doomed", half_then_killed)
"""


def test_a_grader_killed_while_writing_leaves_no_half_graded_submission(
    gradebook_url, submissions, tmp_path
):
    from nbgrader.api import MissingEntry

    url = gradebook_url
    one = sorted(submissions.iterdir())[0]
    enqueue(url, submissions)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.run(
        [sys.executable, "-c", KILLED_WHILE_WRITING, url],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert child.returncode == -signal.SIGKILL, child.stderr
    with opened(url) as gradebook, pytest.raises(MissingEntry):  # so no grade row either
        gradebook.find_submission(ASSIGNMENT, one.name)
    assert sql(url, "SELECT count(*) FROM memorylab_grading_log")[0][0] == 0
    state = sql(url, "SELECT state, grader FROM memorylab_grading_queue WHERE student = :s",
                s=one.name)  # fmt: skip
    assert [tuple(row) for row in state] == [("claimed", "doomed")]  # back once its lease ends


def test_a_grader_that_stalls_past_its_lease_writes_nothing_when_it_wakes(
    gradebook_url, submissions, tmp_path
):
    url = gradebook_url
    few = tmp_path / "few"
    few.mkdir()
    for path in sorted(submissions.iterdir())[:3]:
        path.rename(few / path.name)
    enqueue(url, few)
    stalled = grader(tmp_path, "a", url, 0)
    name = f"{os.uname().nodename}:{stalled.pid}"
    deadline = time.monotonic() + 120
    held: list = []
    while not held:
        assert time.monotonic() < deadline and stalled.poll() is None
        time.sleep(0.02)
        held = sql(url, "SELECT id FROM memorylab_grading_queue WHERE grader = :g "
                        "AND state = 'claimed'", g=name)  # fmt: skip
    os.kill(stalled.pid, signal.SIGSTOP)  # mid-grading: no renewal, no write
    try:
        time.sleep(LEASE + 1)
        other = grader(tmp_path, "b", url, 1)
        wait(other, url, tmp_path / "b" / "log")
    finally:
        os.kill(stalled.pid, signal.SIGCONT)
    assert stalled.wait(timeout=120) == 0
    log = sql(url, "SELECT queue_id, grader FROM memorylab_grading_log")
    assert len(log) == 3 and len({entry.queue_id for entry in log}) == 3  # once each
    taken_over = {entry.queue_id: entry.grader for entry in log}[held[0].id]
    assert taken_over != name  # it woke up to find its claim gone, and wrote nothing
    assert "another grader took it over" in (tmp_path / "a" / "log").read_text()


def test_a_second_grader_skips_a_claim_in_progress_instead_of_taking_or_waiting_for_it(
    gradebook_url, submissions, tmp_path
):
    import threading

    from sqlalchemy import create_engine, text

    from grading import queue

    url = gradebook_url
    two = tmp_path / "two"
    two.mkdir()
    for path in sorted(submissions.iterdir())[:2]:
        path.rename(two / path.name)
    enqueue(url, two)
    first, second = create_engine(url), queue.engine_for(url)
    try:
        with first.connect() as db, db.begin():  # the first grader, mid-claim, uncommitted
            row = db.execute(
                text(queue.CLAIM), {"grader": "first", "lease": str(uuid.uuid4()), "seconds": 60}
            ).one()
            got: list = []
            other = threading.Thread(target=lambda: got.append(queue.claim(second, "b", 60)))
            other.start()
            other.join(timeout=10)
            waited = other.is_alive()
        other.join()
    finally:
        first.dispose()
        second.dispose()
    assert not waited, "the second grader waited for the first one's claim"
    assert got[0] is not None and got[0].id != row.id  # the next submission, not the same
