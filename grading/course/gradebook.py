"""The course's gradebook: which database it is, and one transaction per submission.

    url = database_url(course)               # the course's CourseDirectory.db_url, or
                                             # sqlite:///<course>/gradebook.db
    with transaction(url) as (gradebook, connection):
        gradebook.add_submission(...)        # nbgrader's own API, its commits held back
        connection.execute(...)              # more SQL in the same transaction
                                             # one COMMIT here, or nothing on any error

nbgrader's Gradebook commits after every call (the submission, then the grades), so a
grader killed between two calls would leave a submission with only some of its grade
rows. Here its session is joined to one outer transaction on one connection: a
submission's rows are written together or not at all, and grading/course/queue.py marks the
submission done in that same transaction. Any SQLAlchemy URL nbgrader supports works
(nbgrader's FAQ recommends PostgreSQL when several people grade); a PostgreSQL URL
without a driver (postgresql://...) gets psycopg 3, the driver this project installs.

Deliberately left out: what the rows hold (results.py), the queue (queue.py).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path

from grading.layout import COURSE, ROOT
from grading.markers import BuildError

SCHEMES = re.compile(r"(sqlite|postgresql|postgres|mysql|mariadb)(\+\w+)?://")


def sqlalchemy_url(url: str) -> str:
    """`url` as SQLAlchemy takes it: postgresql://... gets the psycopg 3 driver."""
    if not isinstance(url, str) or not SCHEMES.match(url):
        raise BuildError(
            f"gradebook URL {shown(str(url))!r} is not a database URL: use "
            "sqlite:///path/gradebook.db or postgresql://user:password@host/database"
        )
    for bare in ("postgresql://", "postgres://"):
        if url.startswith(bare):  # SQLAlchemy's default would be psycopg2, not installed
            return "postgresql+psycopg://" + url.removeprefix(bare)
    return url


def configured_url(course: Path) -> str | None:
    """CourseDirectory.db_url from the course's nbgrader_config.py (and, for the course in
    dist/course/, the repository's, which nbgrader's formgrader reads there), or None."""
    from traitlets.config.loader import Config, PyFileConfigLoader

    files = [course / "nbgrader_config.py"]
    if course.resolve() == COURSE.resolve():  # release rewrites dist/course/'s own file
        files.append(ROOT / "nbgrader_config.py")
    config = Config()
    for path in files:
        if path.is_file():
            config.merge(PyFileConfigLoader(path.name, path=str(path.parent)).load_config())
    url = config.CourseDirectory.get("db_url") if "CourseDirectory" in config else None
    return str(url) if url else None


def gradebook_setting(url: str | None) -> str:
    """The course config's gradebook line, which every release keeps ("" for the default)."""
    if not url:
        return ""
    return (
        "\n# The gradebook (kept by every release; nbgrader and python -m grading both use it).\n"
        f"c.CourseDirectory.db_url = {sqlalchemy_url(url)!r}\n"
    )


CHOSEN: dict[Path, str] = {}  # course folder -> the URL --db-url gave for it (this process)


def choose(course: Path, url: str | None) -> None:
    """--db-url: this process uses `url` as the gradebook of `course` (None: the configured)."""
    if url is None:
        CHOSEN.pop(course.resolve(), None)
    else:
        CHOSEN[course.resolve()] = sqlalchemy_url(url)


def database_url(course: Path = COURSE, url: str | None = None) -> str:
    """The gradebook's SQLAlchemy URL: `url`, or --db-url's, or the course's CourseDirectory.
    db_url, or its SQLite file course/gradebook.db."""
    chosen = url or CHOSEN.get(course.resolve()) or configured_url(course)
    return sqlalchemy_url(chosen or f"sqlite:///{course / 'gradebook.db'}")


def shown(url: str) -> str:
    """The URL with its password hidden, for messages and logs."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)


def reach(url: str) -> None:
    """Connect once, so an unreachable gradebook is one clear line, not a traceback."""
    from sqlalchemy import create_engine
    from sqlalchemy.exc import SQLAlchemyError

    engine = create_engine(url)
    try:
        with engine.connect():
            pass
    except SQLAlchemyError as error:
        reason = str(getattr(error, "orig", None) or error).strip().splitlines()[0]
        raise BuildError(f"cannot reach the gradebook {shown(url)}: {reason}") from None
    finally:
        engine.dispose()


@contextlib.contextmanager
def opened(url: str) -> Iterator:
    """nbgrader's Gradebook, its connections closed afterwards (nbgrader leaves its pool)."""
    from nbgrader.api import Gradebook

    gradebook = Gradebook(url)
    try:
        yield gradebook
    finally:
        gradebook.close()
        gradebook.engine.dispose()


@contextlib.contextmanager
def transaction(url: str) -> Iterator[tuple]:
    """(nbgrader's Gradebook, the connection) inside one transaction, committed on success."""
    from sqlalchemy.orm import scoped_session, sessionmaker

    with opened(url) as gradebook:  # makes nbgrader's tables on first use (own commits)
        connection = gradebook.engine.connect()
        outer = connection.begin()
        gradebook.db.remove()
        # subtle: "rollback_only" - the Gradebook's commit() only flushes into `outer`; a
        # rollback (nbgrader rolls back on an IntegrityError) rolls `outer` back.
        gradebook.db = scoped_session(
            sessionmaker(bind=connection, autoflush=True, join_transaction_mode="rollback_only")
        )
        try:
            yield gradebook, connection
            gradebook.db.flush()
            outer.commit()
        except BaseException:
            if outer.is_active:
                outer.rollback()
            raise
        finally:
            gradebook.db.remove()
            connection.close()
