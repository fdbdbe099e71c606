"""Several graders, one gradebook: a queue of collected submissions in the gradebook's
PostgreSQL database.

    python -m grading autograde DIR --queue     # queue DIR's submissions, then grade too
    python -m grading worker                    # on every other machine: grade until empty

Queueing collects each submission's learner files (grading/judge/grader.py: collect), and what
nbgrader's records read beside them (the graded notebooks, timestamp.txt,
submission_secret.txt), into a row of `memorylab_grading_queue`: a grader needs only the
database URL, not the folder.
A grader claims the oldest free row with `SELECT ... FOR UPDATE SKIP LOCKED` (two graders
never claim the same row, and neither waits for the other) and takes a lease on it: a
random token and a time, measured on the database's clock, that the grader renews while
its sandboxes run. A grader that is killed or stops renewing loses its claim when the
lease runs out, and the next grader takes the submission over.

The verdict is written only after the sandboxes are gone, in one transaction with
nbgrader's grade rows (grading/course/gradebook.py): the queue row is locked, its token
checked, the rows and the late penalty written, the row marked done, one line logged in
`memorylab_grading_log`. A grader whose lease was taken over meanwhile finds another
token and writes nothing, so a submission is graded once, never half, never twice. The
files (autograded/ and the feedback pages) follow once that transaction has committed.
A student's rows are graded in the order they were queued (a resubmission after the
first).

Deliberately left out: SQLite (no SKIP LOCKED, no row locks: one grader only) and
shipping the feedback pages between machines (each grader writes them into its own
course folder, which several graders share as nbgrader's course folder).
"""

from __future__ import annotations

import base64
import json
import os
import socket
import stat
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from grading.course.gradebook import reach, shown, transaction
from grading.judge.grader import Collected, Graded
from grading.layout import GRADED, LEARNER_NAMES
from grading.markers import BuildError

QUEUE, LOG = "memorylab_grading_queue", "memorylab_grading_log"
HANDED_IN = ("timestamp.txt", "submission_secret.txt", *(f"{nb.name}.ipynb" for nb in GRADED))
HANDED_IN_BYTES = 4 << 20  # a file larger than this counts as not handed in
LEASE_SECONDS = 120.0  # a claim nobody renews for this long returns to the queue
MAX_ATTEMPTS = 3  # claims of one submission whose results could not be written
POLL_SECONDS = 1.0  # how often an idle grader looks again while others hold claims

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {QUEUE} (
    id bigserial PRIMARY KEY,
    assignment text NOT NULL,
    student text NOT NULL,
    submission jsonb NOT NULL,          -- grader.Collected: notes, files (base64)
    state text NOT NULL DEFAULT 'queued'
        CHECK (state IN ('queued', 'claimed', 'done', 'failed')),
    grader text,                        -- who holds (or last held) the claim
    lease uuid,                         -- the claim's token: only its holder writes
    lease_until timestamptz,            -- on the database's clock, never a grader's
    attempts integer NOT NULL DEFAULT 0,
    queued_at timestamptz NOT NULL DEFAULT now(),
    done_at timestamptz,
    total double precision,
    error text
);
CREATE UNIQUE INDEX IF NOT EXISTS {QUEUE}_one_queued
    ON {QUEUE} (assignment, student) WHERE state = 'queued';
CREATE INDEX IF NOT EXISTS {QUEUE}_open ON {QUEUE} (id) WHERE state IN ('queued', 'claimed');
CREATE TABLE IF NOT EXISTS {LOG} (
    queue_id bigint NOT NULL REFERENCES {QUEUE} (id),
    student text NOT NULL,
    grader text NOT NULL,
    attempt integer NOT NULL,
    total double precision NOT NULL,
    graded_at timestamptz NOT NULL DEFAULT now()
);
"""

# The oldest row nobody holds: queued, or claimed by a grader whose lease ran out; never a
# student's later row while an earlier one is open (a resubmission waits for the first).
CLAIM = f"""
UPDATE {QUEUE} SET state = 'claimed', grader = :grader, lease = :lease,
       lease_until = now() + make_interval(secs => :seconds), attempts = attempts + 1
WHERE id = (
    SELECT id FROM {QUEUE} AS row
    WHERE (row.state = 'queued' OR (row.state = 'claimed' AND row.lease_until < now()))
      AND NOT EXISTS (SELECT 1 FROM {QUEUE} AS earlier
                      WHERE earlier.assignment = row.assignment
                        AND earlier.student = row.student AND earlier.id < row.id
                        AND earlier.state IN ('queued', 'claimed'))
    ORDER BY id LIMIT 1
    FOR UPDATE SKIP LOCKED
)
RETURNING id, assignment, student, submission, attempts
"""
RENEW = f"""
UPDATE {QUEUE} SET lease_until = now() + make_interval(secs => :seconds)
WHERE id = :id AND lease = :lease AND state = 'claimed'
"""


class LeaseLost(RuntimeError):
    """The claim ran out and another grader took the submission over: write nothing."""


@dataclass
class Job:
    id: int
    assignment: str
    student: str
    payload: dict  # pack()'s: unpack() makes it a Collected again
    attempt: int
    lease: str


def engine_for(url: str):
    """A SQLAlchemy engine on the gradebook's database, which must be PostgreSQL."""
    from sqlalchemy import create_engine

    if not url.startswith("postgresql"):
        raise BuildError(
            f"the grading queue needs PostgreSQL (SELECT ... FOR UPDATE SKIP LOCKED), and "
            f"the gradebook is {shown(url)}: set CourseDirectory.db_url in the course's "
            "nbgrader_config.py (or --db-url) to postgresql://user:password@host/database"
        )
    reach(url)
    return create_engine(url, pool_size=2, max_overflow=2, pool_pre_ping=True)


def install(engine) -> None:
    """The queue's tables, once; two graders starting together make them once."""
    from sqlalchemy import text

    with engine.begin() as db:
        db.execute(text("SELECT pg_advisory_xact_lock(hashtext(:name))"), {"name": QUEUE})
        for statement in SCHEMA.split(";"):
            if statement.strip():
                db.execute(text(statement))


def handed_in(folder: Path | None) -> dict[str, bytes]:
    """What nbgrader's records read beside the code: the graded notebooks, timestamp.txt and
    submission_secret.txt; regular files only, never through a link, none over the cap."""
    found: dict[str, bytes] = {}
    if folder is None or folder.is_symlink() or not folder.is_dir():
        return found
    for name in HANDED_IN:
        try:
            fd = os.open(folder / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:  # missing, a link, unreadable: the records treat it as not handed in
            continue
        with os.fdopen(fd, "rb") as file:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                data = file.read(HANDED_IN_BYTES + 1)
                if len(data) <= HANDED_IN_BYTES:
                    found[name] = data
    return found


def pack(collected: Collected) -> str:
    def encoded(files: dict[str, bytes]) -> dict[str, str]:
        return {name: base64.b64encode(data).decode() for name, data in files.items()}

    return json.dumps({"notes": collected.notes, "files": encoded(collected.files),
                       "found": collected.found,
                       "handed_in": encoded(handed_in(collected.folder))})  # fmt: skip


def unpack(student: str, payload: dict, scratch: Path) -> Collected:
    """The submission as collected, its handed-in files written to scratch/<student>/."""
    files = {name: base64.b64decode(data) for name, data in payload["files"].items()}
    folder = scratch / student
    (folder / "code").mkdir(parents=True)
    for name, data in payload.get("handed_in", {}).items():
        if name in HANDED_IN:  # a row is data: only the names this module writes
            (folder / name).write_bytes(base64.b64decode(data))
    for name, data in files.items():
        if name in LEARNER_NAMES:  # "scoring.py", "practice/reflection.py"
            (folder / "code" / name).parent.mkdir(exist_ok=True)
            (folder / "code" / name).write_bytes(data)
    return Collected(student, list(payload["notes"]), files, bool(payload["found"]), folder)


def enqueue(engine, assignment: str, collected: list[Collected]) -> int:
    """Queue each submission; one already waiting for the same student is replaced."""
    from sqlalchemy import text

    install(engine)
    with engine.begin() as db:
        for item in collected:
            db.execute(
                text(
                    f"INSERT INTO {QUEUE} (assignment, student, submission) "
                    "VALUES (:assignment, :student, CAST(:submission AS jsonb)) "
                    "ON CONFLICT (assignment, student) WHERE state = 'queued' "
                    "DO UPDATE SET submission = EXCLUDED.submission, queued_at = now()"
                ),
                {"assignment": assignment, "student": item.student, "submission": pack(item)},
            )
    return len(collected)


def claim(engine, grader: str, lease_seconds: float) -> Job | None:
    from sqlalchemy import text

    lease = str(uuid.uuid4())
    with engine.begin() as db:
        row = db.execute(
            text(CLAIM), {"grader": grader, "lease": lease, "seconds": lease_seconds}
        ).one_or_none()
    if row is None:
        return None
    payload = row.submission if isinstance(row.submission, dict) else json.loads(row.submission)
    return Job(row.id, row.assignment, row.student, payload, row.attempts, lease)


def still_open(engine) -> int:
    """Rows queued or claimed (by anyone, lease running or not)."""
    from sqlalchemy import text

    with engine.connect() as db:
        return db.execute(
            text(f"SELECT count(*) FROM {QUEUE} WHERE state IN ('queued', 'claimed')")
        ).scalar_one()


class Lease:
    """Renews a job's lease every third of its length while the sandboxes run."""

    def __init__(self, engine, job: Job, seconds: float):
        self.engine, self.job, self.seconds = engine, job, seconds
        self.stopped = threading.Event()
        self.lost = False
        self.thread = threading.Thread(target=self._renew, daemon=True)

    def __enter__(self) -> Lease:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stopped.set()
        self.thread.join()

    def _renew(self) -> None:
        from sqlalchemy import text

        while not self.stopped.wait(self.seconds / 3):
            try:
                with self.engine.begin() as db:
                    renewed = db.execute(
                        text(RENEW),
                        {"id": self.job.id, "lease": self.job.lease, "seconds": self.seconds},
                    ).rowcount
            except Exception:  # the database is away: the lease may run out; writing checks
                continue
            if not renewed:
                self.lost = True
                return


def write(url: str, job: Job, graded: Graded, grader: str, rows: Callable) -> None:
    """The verdict, nbgrader's rows and the queue row's `done`, in one transaction, only
    while this grader's lease still holds the row (else LeaseLost and nothing written)."""
    from sqlalchemy import text

    with transaction(url) as (gradebook, db):
        held = db.execute(
            text(f"SELECT state, lease FROM {QUEUE} WHERE id = :id FOR UPDATE"), {"id": job.id}
        ).one()
        if held.state != "claimed" or str(held.lease) != job.lease:
            raise LeaseLost(
                f"{job.student}: the claim ran out and another grader took it over "
                "(this grade is discarded)"
            )
        rows(gradebook, graded)
        db.execute(
            text(f"UPDATE {QUEUE} SET state = 'done', done_at = now(), total = :total, "
                 "error = NULL WHERE id = :id"),
            {"id": job.id, "total": graded.total},
        )  # fmt: skip
        db.execute(
            text(f"INSERT INTO {LOG} (queue_id, student, grader, attempt, total) "
                 "VALUES (:id, :student, :grader, :attempt, :total)"),
            {"id": job.id, "student": job.student, "grader": grader,
             "attempt": job.attempt, "total": graded.total},
        )  # fmt: skip


def give_back(engine, job: Job, error: str) -> None:
    """Results that could not be written: the row is free again at once, or failed."""
    from sqlalchemy import text

    with engine.begin() as db:
        db.execute(
            text(f"UPDATE {QUEUE} SET state = CASE WHEN attempts >= :most THEN 'failed' "
                 "ELSE 'claimed' END, lease_until = now(), error = :error "
                 "WHERE id = :id AND lease = :lease"),
            {"id": job.id, "lease": job.lease, "error": error[:2000], "most": MAX_ATTEMPTS},
        )  # fmt: skip


def grader_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def work(
    url: str,
    grade: Callable[[Collected], Graded],
    rows: Callable,
    files: Callable[[Graded], None] = lambda graded: None,
    lease_seconds: float = LEASE_SECONDS,
    log: Callable[[str], None] = print,
) -> list[Graded]:
    """Claim, grade, write, until no row is queued or claimed by anyone; what it wrote.

    `grade` runs the sandboxes (never raising: a crash is a verdict), `rows(gradebook,
    graded)` writes nbgrader's rows into the open, fenced transaction, `files(graded)`
    the autograded notebooks and feedback pages once that transaction has committed.
    """
    if lease_seconds <= 0:
        raise BuildError(f"--lease must be a positive number of seconds, got {lease_seconds}")
    engine = engine_for(url)
    install(engine)
    grader = grader_name()
    written: list[Graded] = []
    try:
        while True:
            job = claim(engine, grader, lease_seconds)
            if job is None:
                if not still_open(engine):
                    break  # every submission is done (or failed): nothing to wait for
                time.sleep(POLL_SECONDS)  # others hold claims: one may run out and come back
                continue
            again = f" (attempt {job.attempt}: a claim ran out)" if job.attempt > 1 else ""
            log(f"{grader} grading {job.student}{again}")
            with tempfile.TemporaryDirectory(prefix="memory-lab-queued-") as scratch:
                collected = unpack(job.student, job.payload, Path(scratch))
                with Lease(engine, job, lease_seconds):
                    graded = grade(collected)
                try:
                    write(url, job, graded, grader, rows)
                except LeaseLost as lost:
                    log(f"{grader}: {lost}")
                    continue
                except Exception as error:  # one student's failure never stops the batch
                    give_back(engine, job, f"{type(error).__name__}: {error}")
                    log(f"{grader}: results for {job.student} not written: {error}")
                    continue
                try:
                    files(graded)
                except Exception as error:  # the grade stands; a regrade writes them again
                    log(f"{grader}: feedback for {job.student} not written: {error}")
            written.append(graded)
            log(f"{grader} graded {job.student}: {graded.total:g}")
    finally:
        engine.dispose()
    return written


def status(url: str) -> dict[str, int]:
    """How many rows are in each state."""
    from sqlalchemy import text

    engine = engine_for(url)
    try:
        install(engine)
        with engine.connect() as db:
            rows = db.execute(text(f"SELECT state, count(*) FROM {QUEUE} GROUP BY state"))
            return {state: count for state, count in rows}
    finally:
        engine.dispose()
