"""Several graders on one PostgreSQL gradebook and queue (grading/course/queue.py), for real.

Two `python -m grading worker` processes, each in a working folder of its own (two
machines), grade 60 queued submissions; one is killed (SIGKILL) while it holds a claim.
Every submission is then graded exactly once, none half, and nbgrader's grade table is
the one a single grader writes. A grader killed in the middle of writing leaves nothing.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import nbformat
import pytest

from grading.course.gradebook import opened
from grading.layout import ASSIGNMENT, LEARNER_FILES, REGISTRY, ROOT
from grading.selfcheck import runner as selfcheck
from grading.selfcheck.mistakes import SUBMISSIONS

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

LEASE = 4.0  # seconds: a killed grader's claim is back in the queue this soon
STALL = 90.0  # seconds without a single new grade: the batch is stuck, the test fails
COUNT = 60
PLAIN = [  # right, untouched, and every one-mistake learner core of the self-check
    s for s in SUBMISSIONS
    if not (s.attack or s.retriever_attack or s.links or s.folders or s.nested or s.alias
            or s.transform or s.extra or s.edit_check_cells or s.delete)
]  # fmt: skip


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    """A scratch course and student edition, built by the course's own release."""
    from grading.course.editions import release

    dist = tmp_path_factory.mktemp("dist")
    path = os.environ["PATH"]
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{path}"  # nbgrader's alembic
    try:
        release(dist=dist, log=lambda line: None)
    finally:
        os.environ["PATH"] = path
    return dist


def course_on(released: Path, target: Path, url: str | None) -> Path:
    """A copy of the scratch course whose gradebook is `url` (None: its own SQLite file),
    holding the assignment as release records it (nbgrader generate_assignment)."""
    from grading.course.editions import nbgrader
    from grading.course.gradebook import gradebook_setting

    course = target / "course"
    shutil.copytree(released / "course", course)
    if url is None:
        return course
    config = course / "nbgrader_config.py"
    config.write_text(config.read_text() + gradebook_setting(url))
    result = nbgrader("generate_assignment", ASSIGNMENT, "--force", cwd=course)
    assert result.returncode == 0, result.stdout + result.stderr
    return course


@pytest.fixture
def gradebook_url(monkeypatch, released, tmp_path):
    """A fresh database on the tests' embedded server, the gradebook of a scratch course
    (tmp_path/pg/course) that holds the assignment as release records it."""
    from pg_fixtures import server

    # nbgrader runs the `alembic` command to make a new gradebook: the venv's, on PATH
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    name = f"gradebook_{uuid.uuid4().hex[:12]}"
    server().create_database(name)
    url = server().admin_url(name).replace("postgresql://", "postgresql+psycopg://", 1)
    course_on(released, tmp_path / "pg", url)
    return url


@pytest.fixture
def submissions(tmp_path, monkeypatch, released):
    """60 collected submissions as nbgrader collect leaves them (DIR/<student>/milestones/:
    the released notebooks, code/, timestamp.txt), the learner core filled in by
    selfcheck.build from the student edition as right, untouched or wrong in one known
    way; every third student has written one answer in words."""
    monkeypatch.setattr(selfcheck, "SCRATCH", {"course": released / "course",
                                               "student": released / "student"})  # fmt: skip
    kinds = tmp_path / "kinds"
    kinds.mkdir()
    built = {kind.name: selfcheck.build(kind, kinds) for kind in PLAIN}
    notebook, cells = next(iter(REGISTRY.MANUAL_CELLS.items()))
    folder = tmp_path / "submitted"
    for index in range(COUNT):
        kind = PLAIN[index % len(PLAIN)]
        target = folder / f"s{index:02d}-{kind.name}" / ASSIGNMENT
        shutil.copytree(released / "course" / "release" / ASSIGNMENT, target)
        for name in LEARNER_FILES:
            shutil.copy2(built[kind.name] / name, target / name)
        (target / "timestamp.txt").write_text(f"2026-11-{1 + index % 28:02d} 10:00:00.000000 UTC")
        if index % 3 == 0:
            answered = nbformat.read(target / notebook, as_version=4)
            for cell in answered.cells:
                if cell.metadata.get("nbgrader", {}).get("grade_id") in cells:
                    cell.source += f"\nMy answer, student {index}."
            nbformat.write(answered, target / notebook)
    return folder


def grade_table(url: str) -> dict[tuple[str, str, str], tuple]:
    """(student, notebook, cell) -> (auto score, needs manual grade, submitted at), for
    every grade row of the gradebook."""
    with opened(url) as gradebook:
        table = {
            (student.id, notebook.name, grade.name): (
                grade.auto_score,
                grade.needs_manual_grade,
                submission.timestamp,
            )
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


def single_grader(submissions: Path, released: Path, tmp_path: Path) -> dict:
    """The table one grader writes, one submission after another, into its own gradebook
    (the scratch course's SQLite file)."""
    from grading.course.autograde import autograde

    course = course_on(released, tmp_path / "single", None)
    results = autograde(submissions, jobs=1, course=course, log=lambda line: None)
    assert len(results) == COUNT
    return grade_table(f"sqlite:///{course / 'gradebook.db'}")


def grader(tmp_path: Path, name: str, url: str, slot: int) -> subprocess.Popen:
    """`python -m grading worker` in a working folder of its own, as on another machine."""
    home = tmp_path / name  # its course folder: where its feedback pages go
    (home / "course").mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    with (home / "log").open("w") as log:  # the child has its own copy of the descriptor
        return subprocess.Popen(
            [sys.executable, "-m", "grading", "worker", "--db-url", url, "--course",
             str(home / "course"), "--slot", str(slot), "--lease", str(LEASE)],
            cwd=home, env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip


def enqueue(url: str, submissions: Path) -> None:
    from grading.course import queue
    from grading.judge.grader import collect

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
    gradebook_url, submissions, released, tmp_path
):
    url = gradebook_url
    single = single_grader(submissions, released, tmp_path)
    enqueue(url, submissions)
    started = time.monotonic()
    first, second = grader(tmp_path, "a", url, 0), grader(tmp_path, "b", url, 1)
    doomed = f"{os.uname().nodename}:{first.pid}"
    try:
        held: list = []
        while not held:  # kill the first grader mid-batch, while it holds a claim
            assert first.poll() is None, (tmp_path / "a" / "log").read_text()[-3000:]
            mine = sql(url, "SELECT count(*) FROM memorylab_grading_log WHERE grader = :g",
                       g=doomed)[0][0]  # fmt: skip
            claimed = sql(url, "SELECT id, student FROM memorylab_grading_queue WHERE "
                               "grader = :g AND state = 'claimed'", g=doomed)  # fmt: skip
            if mine >= 10 and claimed:
                os.kill(first.pid, signal.SIGKILL)
                first.wait()
                held = sql(url, "SELECT id, student FROM memorylab_grading_queue WHERE "
                                "grader = :g AND state = 'claimed'", g=doomed)  # fmt: skip
                assert held, "it wrote the claimed one before it died: no reclaim to show"
            time.sleep(0.02)
        wait(second, url, tmp_path / "b" / "log")
    finally:
        for process in (first, second):
            if process.poll() is None:
                process.kill()
                process.wait()
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
from grading.course import queue, results
from grading.judge.grader import Graded
from grading.judge.verdict import CELLS, Outcome

url = sys.argv[1]
engine = queue.engine_for(url)
job = queue.claim(engine, "doomed", 3600)
graded = Graded(job.student)
graded.outcomes = [Outcome(cell, score=float(cell.points)) for cell in CELLS]

def half_then_killed(gradebook, graded):
    half = Graded(graded.student, graded.outcomes[: len(graded.outcomes) // 2])
    results.fill_gradebook(gradebook, half)  # nbgrader commits after each call
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

    from grading.course import queue

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


@pytest.fixture
def queue_url():
    """A fresh database on the tests' embedded server holding only the queue's tables."""
    from grading.course import queue
    from pg_fixtures import server

    name = f"queue_{uuid.uuid4().hex[:12]}"
    server().create_database(name)
    url = server().admin_url(name).replace("postgresql://", "postgresql+psycopg://", 1)
    engine = queue.engine_for(url)
    try:
        queue.install(engine)
    finally:
        engine.dispose()
    return url


def test_a_grading_that_outlasts_its_lease_keeps_the_claim_while_the_lease_is_renewed(queue_url):
    from grading.course import queue
    from grading.judge.grader import Collected

    lease = 1.2  # seconds; renewed every 0.4 s while the sandboxes run
    mine, theirs = queue.engine_for(queue_url), queue.engine_for(queue_url)
    try:
        queue.enqueue(mine, ASSIGNMENT, [Collected("s1", ["a note"], {}, True, None)])
        job = queue.claim(mine, "slow grader", lease)
        assert job is not None
        taken = []
        with queue.Lease(mine, job, lease) as renewing:
            deadline = time.monotonic() + 3.5 * lease  # a grading three leases long
            while time.monotonic() < deadline:
                taken.append(queue.claim(theirs, "other grader", lease))
                time.sleep(0.1)
        assert not renewing.lost
        assert taken and all(other is None for other in taken), "the renewed claim was taken"
        time.sleep(lease + 0.5)  # renewal stopped: the claim runs out and comes back
        again = queue.claim(theirs, "other grader", lease)
        assert again is not None and (again.id, again.attempt) == (job.id, 2)
    finally:
        mine.dispose()
        theirs.dispose()
