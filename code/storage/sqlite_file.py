"""The SQLite file under PersistentMemoryStore: its schema, and opening it safely.

Opening is careful because the file holds memories nobody can re-create:
  - a file that is not SQLite, is damaged, is some other program's database, or has a
    newer schema version (PRAGMA user_version) is checked through a read-only connection
    and refused with StoreFileError; its bytes are never changed;
  - the check is PRAGMA integrity_check, which also compares every index with its rows
    (quick_check does not); every row carries a checksum (storage/rows.py), verified
    when the row is loaded;
  - a non-empty -wal beside the file is checked before SQLite may merge it: SQLite records
    nothing that ties a -wal to its file, so the file with its -wal, seen through a
    read-only connection, must pass integrity_check, keep the file's identity (file_id,
    written once when the file is made) and have every row's checksum right (checksums
    include file_id). A -wal copied from another store, or left beside a restored backup
    (backups get an identity of their own), fails that and is refused by name;
  - writing uses the WAL journal with synchronous=FULL, so a transaction is either all on
    disk or not at all, even when the process is killed halfway, and a busy timeout, so two
    processes take turns instead of failing; after each write transaction the WAL is
    checkpointed into the .sqlite3, so that file alone holds every committed memory;
  - a file of schema 1 (float64 vectors, no checksums) is migrated on open, in one
    transaction, after a backup copy of it is written beside it (name.schema-1.sqlite3).

Deliberately left out: what the store does with the rows (storage/sqlite_store.py), the row
format (storage/rows.py), and a -wal made by a plain file copy of this very store (cp):
it has the same identity, so only integrity_check stands between it and the file.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from storage.rows import (
    MEMORY_COLUMNS,
    USER_COLUMNS,
    StoreFileError,
    check_row,
    row_checksum,
    row_ok,
)
from storage.sqlite_schema import (
    COLUMNS,
    OLDEST_SCHEMA,
    SCHEMA_VERSION,
    backup_name,
    create_schema,
    migrate,
)

BUSY_TIMEOUT = 10.0  # seconds to wait for another process's write before giving up
SQLITE_HEADER = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite database
SIDE_FILES = ("-wal", "-shm")  # beside an open store: its journal and shared index


class NewerSchemaError(StoreFileError):
    """The file was written by a newer version of Memory Lab than this one."""


class DamagedFileError(StoreFileError):
    """integrity_check (or a row's checksum) failed: the file's bytes are damaged."""


class ForeignWalError(StoreFileError):
    """A -wal beside the file does not belong to it; SQLite would have merged it in."""


# --- opening the file ------------------------------------------------------------


def wal_of(path: Path) -> Path:
    return path.with_name(path.name + "-wal")


def open_read_only(path: Path) -> sqlite3.Connection:
    """Check the file without any chance of writing to it; return a read-only connection."""
    if path.is_dir():
        raise StoreFileError(f"{path} is a folder: give the path of a file inside it instead")
    if not path.is_file():
        raise FileNotFoundError(f"no memory store at {path}")
    with open(path, "rb") as file:
        header = file.read(len(SQLITE_HEADER))
    if header and header != SQLITE_HEADER:
        raise StoreFileError(
            f"{path} is not a SQLite database, so it is not a Memory Lab store. It was left "
            "untouched: point MEMORY_LAB_DB (or --db) at another file, or move this one away."
        )
    # With no -wal file beside it, nobody has the file open for writing and everything is in
    # the file itself: read it as immutable, which creates no -wal or -shm file next to it.
    wal = wal_of(path)
    if wal.exists():
        return _checked(path, wal, immutable=False)
    try:
        return _checked(path, wal, immutable=True)
    except DamagedFileError:
        # subtle: immutable reads take no lock, so another process that wrote meanwhile
        # (it makes the -wal as it starts) can make the file look damaged: look again,
        # with locks; a file that is really damaged fails that check too
        return _checked(path, wal, immutable=False)


def _checked(path: Path, wal: Path, immutable: bool) -> sqlite3.Connection:
    with_wal = wal.exists() and wal.stat().st_size > 0
    db = _connect_read_only(path, immutable=immutable)
    try:
        version = _check_layout(db, path)
        problem = _problem(db, version, all_rows=with_wal)
        if problem and with_wal:
            _blame_wal(path, wal, problem)
        if problem:
            raise sqlite3.DatabaseError(problem)  # reported below as damage
        if with_wal and version >= 2:
            _check_identity(db, path, wal)
    except sqlite3.DatabaseError as exc:
        db.close()
        raise DamagedFileError(
            f"{path} is damaged or not a database (the check found: {exc}). It was left untouched: "
            "restore it from a backup, or move it away to start a new store."
        ) from None
    except BaseException:
        db.close()
        raise
    return db


def _connect_read_only(path: Path, immutable: bool) -> sqlite3.Connection:
    mode = "mode=ro&immutable=1" if immutable else "mode=ro"  # immutable: the -wal unread
    return sqlite3.connect(f"{path.resolve().as_uri()}?{mode}", uri=True, timeout=BUSY_TIMEOUT)


def _check_layout(db: sqlite3.Connection, path: Path) -> int:
    """The file's schema version, or StoreFileError if its tables are not a store's."""
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise NewerSchemaError(
            f"{path} was written by a newer Memory Lab (schema version {version}; this "
            f"code reads up to {SCHEMA_VERSION}). It was left untouched: update Memory "
            "Lab (git pull) to open it, or use another file."
        )
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    tables.discard("sqlite_sequence")
    expected = COLUMNS.get(version, {})
    if (version == 0 and tables) or (0 < version < OLDEST_SCHEMA) or not tables >= set(expected):
        raise StoreFileError(
            f"{path} is a SQLite database but not a Memory Lab store (its tables: "
            f"{', '.join(sorted(tables)) or 'none'}). It was left untouched: use another file."
        )
    for table in sorted(expected):
        have = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
        missing = expected[table] - have
        if missing:
            raise StoreFileError(
                f"{path} is not a store this code can use: its {table} table lacks the "
                f"column(s) {', '.join(sorted(missing))}. It was left untouched: use "
                "another file."
            )
    return version


def _problem(db: sqlite3.Connection, version: int, all_rows: bool) -> str | None:
    """What is wrong with the database seen through `db`, or None."""
    try:
        # subtle: quick_check skips indexes, so a file whose index disagrees with its rows
        # (e.g. after a stray -wal was merged in) passes it; integrity_check reads them all
        problem = db.execute("PRAGMA integrity_check(1)").fetchone()[0]
        if problem != "ok":
            return problem
        if all_rows and version >= 2:
            check_all_rows(db, Path(db.execute("PRAGMA database_list").fetchone()[2]))
    except (sqlite3.DatabaseError, StoreFileError) as exc:
        return str(exc)
    return None


def check_all_rows(db: sqlite3.Connection, path: Path) -> None:
    """Raise StoreFileError unless every memory and user row matches its checksum."""
    file_id = read_file_id(db)
    for row in db.execute(f"SELECT {', '.join(MEMORY_COLUMNS)} FROM memories"):
        if not row_ok(file_id, row):
            raise StoreFileError(f"memory {row[2]!r} of user {row[1]!r} fails its checksum")
    for row in db.execute(f"SELECT {', '.join(USER_COLUMNS)} FROM users"):
        if not row_ok(file_id, row):
            raise StoreFileError(f"the row of user {row[0]!r} fails its checksum")


def read_file_id(db: sqlite3.Connection) -> str:
    row = db.execute("SELECT value FROM meta WHERE key = 'file_id'").fetchone()
    if row is None:
        raise StoreFileError("the store has no file_id in its meta table")
    return row[0]


def _blame_wal(path: Path, wal: Path, problem: str) -> None:
    """The file with its -wal is wrong: if the file alone is right, the -wal is to blame."""
    try:
        alone = _connect_read_only(path, immutable=True)
        try:
            version = alone.execute("PRAGMA user_version").fetchone()[0]
            fine = _problem(alone, version, all_rows=True) is None
        finally:
            alone.close()
    except sqlite3.DatabaseError:
        fine = False
    if fine:
        _refuse_wal(path, wal, problem)


def _check_identity(db: sqlite3.Connection, path: Path, wal: Path) -> None:
    """The -wal must not change the file's identity (it is written once, when made)."""
    try:
        alone = _connect_read_only(path, immutable=True)
        try:
            before = read_file_id(alone) if _has_meta(alone) else None
        finally:
            alone.close()
    except (sqlite3.DatabaseError, StoreFileError):
        return  # the file alone is unreadable mid-checkpoint: the rows' checksums decide
    after = read_file_id(db)
    if before is not None and before != after:
        _refuse_wal(path, wal, f"it changes the file's identity from {before} to {after}")


def _has_meta(db: sqlite3.Connection) -> bool:
    return bool(db.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone())


def _refuse_wal(path: Path, wal: Path, problem: str) -> None:
    raise ForeignWalError(
        f"{wal} does not belong to {path}: with it, {problem}. It is probably a stray -wal "
        "(copied from another store, or left beside a restored backup), which SQLite would "
        f"merge into the file. Both were left untouched: move {wal.name} away (keep it until "
        "you are sure you do not need it), then open the store again."
    )


def _set_wal(db: sqlite3.Connection) -> None:
    """Switch the file to WAL mode, waiting out another process that is creating it too.

    subtle: changing the journal mode needs the file to itself, and SQLite reports "locked"
    at once instead of waiting, so two processes opening a new file together must retry.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT
    while True:
        try:
            db.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def checkpoint(db: sqlite3.Connection) -> None:
    """Copy the committed WAL into the .sqlite3 itself, after every write transaction.

    Then the .sqlite3 alone holds every committed memory: a -wal lost or deleted after a
    crash, or a plain copy of the file, loses nothing. PASSIVE never waits for readers;
    pages a reader still needs are copied by the next write's checkpoint.
    """
    # subtle: the transaction is committed, so a failed checkpoint must not report the change
    # as failed (the caller would undo it in memory while the file keeps it); the -wal
    # still holds it, and the next write's checkpoint copies it.
    with suppress(sqlite3.Error):
        db.execute("PRAGMA wal_checkpoint(PASSIVE)")


def connect(path: Path) -> sqlite3.Connection:
    """A writing connection: no hidden transactions, row_checksum known to SQL."""
    # isolation_level=None: no hidden transactions; every write uses an explicit BEGIN.
    db = sqlite3.connect(path, timeout=BUSY_TIMEOUT, isolation_level=None)
    db.create_function("row_checksum", -1, row_checksum, deterministic=True)  # the triggers
    return db


def open_for_writing(path: Path) -> sqlite3.Connection:
    """Validate read-only first, then open for writing; create the tables or migrate them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        open_read_only(path).close()
    db = None
    try:
        if path.exists() and not os.access(path, os.W_OK):
            # subtle: SQLite opens a write-protected file read-only without a word, and only
            # the first add would fail (root passes this check; a read-only mount does not)
            raise sqlite3.OperationalError("attempt to write a readonly database")
        db = connect(path)
        _set_wal(db)  # readers never block the one writer
        db.execute("PRAGMA synchronous = FULL")  # a commit is on disk when it returns
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if 0 < version < SCHEMA_VERSION:  # an old file: keep a copy of it before migrating
            keep_copy(db, path, version)
        db.execute("BEGIN IMMEDIATE")
        version = db.execute("PRAGMA user_version").fetchone()[0]  # again, under the lock
        if version == 0:  # new: nobody beat us to it
            create_schema(db)
        elif version < SCHEMA_VERSION:
            migrate(db, version)
        db.execute("COMMIT")
        checkpoint(db)
    except sqlite3.OperationalError as exc:  # a read-only file or folder, a full disk, a lock
        if db is not None:
            db.close()  # its open transaction, if any, is rolled back: nothing was written
        raise StoreFileError(
            f"{path} cannot be written (SQLite says: {exc}). It was left untouched: check that "
            "the file and its folder are writable, that the disk has room, and that no other "
            "program keeps it locked."
        ) from None
    except BaseException:
        if db is not None:
            db.close()
        raise
    return db


# --- copies of a store: exports and backups ------------------------------------------------


def check_copy_target(target: Path, store_path: Path | None = None) -> None:
    """Refuse a target that would overwrite a store: ValueError naming the path and the rule.

    Refused: the store file itself, its -wal or -shm, a link to any of them, any existing
    SQLite file, and the -wal or -shm of one. check_copy_target(Path("notes.jsonl")) -> None
    """
    reason = None
    if store_path is not None:
        for path in [store_path] + [store_path.with_name(store_path.name + s) for s in SIDE_FILES]:
            if os.path.realpath(target) == os.path.realpath(path) or (
                target.exists() and path.exists() and os.path.samefile(target, path)
            ):
                reason = f"the memory store {store_path} or one of its -wal/-shm side files"
    for side in SIDE_FILES:  # subtle: a stray -wal beside a database is merged into it
        database = target.with_name(target.name.removesuffix(side))
        if target.name.endswith(side) and _is_sqlite(database):
            reason = reason or f"the {side} side file of the SQLite database {database}"
    if reason is None and _is_sqlite(target):
        reason = "an existing SQLite database"
    if reason is not None:
        raise ValueError(
            f"refusing to write to {target}: it is {reason}, and an export or backup never "
            "writes over a store (that would destroy its memories). Choose a new file name."
        )


def _is_sqlite(path: Path) -> bool:
    try:
        with open(path, "rb") as file:
            return file.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:  # missing, a folder, unreadable: not a database we could destroy
        return False


@contextmanager
def written_atomically(target: Path) -> Iterator[Path]:
    """A temporary file in target's folder, renamed onto target once written and fsynced.

    A crash or an error halfway leaves target as it was: never half a file.
    """
    folder = target.parent
    handle, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    os.close(handle)
    temporary = Path(name)
    try:
        yield temporary
        with open(temporary, "rb+") as file:
            os.fsync(file.fileno())  # the bytes are on disk before the name points at them
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    if hasattr(os, "O_DIRECTORY"):  # POSIX: make the rename itself survive a power cut
        descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def keep_copy(db: sqlite3.Connection, path: Path, version: int) -> Path:
    """A copy of an old file beside it, made before it is migrated (storage/sqlite_schema.py).

    (SQLite's backup API waits forever for a connection's own open write transaction.)
    """
    kept = backup_name(path, version)
    with written_atomically(kept) as temporary:  # the old file, whole, before any change
        copy = sqlite3.connect(temporary)
        try:
            db.backup(copy)
            copy.execute("PRAGMA journal_mode = DELETE")  # one self-contained file
        finally:
            copy.close()
    return kept


def backup_to(db: sqlite3.Connection, target: Path, store_path: Path | None = None) -> None:
    """A consistent copy of the open database `db` at target, with SQLite's backup API.

    The copy gets an identity of its own (file_id, and every checksum re-sealed with it,
    each row verified first), so the original's -wal beside a restored backup is refused.
    """
    target = Path(target)
    check_copy_target(target, store_path)
    with written_atomically(target) as temporary:
        copy = connect(temporary)
        try:
            db.backup(copy)  # one snapshot, even while another process writes
            copy.execute("PRAGMA journal_mode = DELETE")  # one self-contained file
            if copy.execute("PRAGMA user_version").fetchone()[0] >= 2:
                with_new_identity(copy, store_path or target)
        finally:
            copy.close()


def with_new_identity(db: sqlite3.Connection, path: Path) -> None:
    """Give the file a new file_id and re-seal every row with it, in one transaction."""
    old, new = read_file_id(db), secrets.token_hex(16)
    db.execute("BEGIN IMMEDIATE")
    try:
        memories = db.execute(f"SELECT {', '.join(MEMORY_COLUMNS)} FROM memories").fetchall()
        users = db.execute(f"SELECT {', '.join(USER_COLUMNS)} FROM users").fetchall()
        for row in memories:  # never launder a damaged row into a fresh checksum
            check_row(path, old, row, f"the row of memory {row[2]!r} of user {row[1]!r}")
        for row in users:
            check_row(path, old, row, f"the row of user {row[0]!r}")
        db.execute("UPDATE meta SET value = ? WHERE key = 'file_id'", (new,))
        db.executemany(
            "UPDATE memories SET checksum = ? WHERE seq = ?",
            [(row_checksum(new, *row[:-1]), row[0]) for row in memories],
        )
        db.executemany(
            "UPDATE users SET checksum = ? WHERE user_id = ?",
            [(row_checksum(new, *row[:-1]), row[0]) for row in users],
        )
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
