"""The SQLite file under PersistentMemoryStore: its schema, opening it safely, and rows.

Opening is careful because the file holds memories nobody can re-create:
  - a file that is not SQLite, is damaged, is some other program's database, or has a
    newer schema version (PRAGMA user_version) is checked through a read-only connection
    and refused with StoreFileError; its bytes are never changed;
  - the check is PRAGMA integrity_check, which also compares every index with its rows
    (quick_check does not);
  - writing uses the WAL journal with synchronous=FULL, so a transaction is either all on
    disk or not at all, even when the process is killed halfway, and a busy timeout, so two
    processes take turns instead of failing; after each write transaction the WAL is
    checkpointed into the .sqlite3, so that file alone holds every committed memory.

Rows: a memory's fields are columns of the same name; its embedding is packed as
little-endian float64s (exact, no rounding) and its metadata is a JSON object.

Deliberately left out: what the store does with the rows (lab/sqlite_store.py) and
migrations between schema versions (there is only version 1 so far).
"""

from __future__ import annotations

import json
import os
import sqlite3
import struct
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memory_store import Memory

SCHEMA_VERSION = 1  # stored in PRAGMA user_version; bump it (and migrate) when tables change
BUSY_TIMEOUT = 10.0  # seconds to wait for another process's write before giving up
SQLITE_HEADER = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite database
SIDE_FILES = ("-wal", "-shm")  # beside an open store: its journal and shared index

SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,       -- insertion order: the stream's order
    user_id TEXT NOT NULL,
    id TEXT NOT NULL,
    text TEXT NOT NULL,
    kind TEXT NOT NULL,
    created_at REAL NOT NULL,                    -- epoch seconds
    last_accessed REAL NOT NULL,                 -- epoch seconds
    importance REAL NOT NULL,                    -- 1 to 10
    embedding BLOB NOT NULL,                     -- little-endian float64s
    embedding_model TEXT,
    superseded_by TEXT,
    metadata TEXT NOT NULL,                      -- JSON object
    UNIQUE (user_id, id)
);
CREATE TABLE IF NOT EXISTS users (
    user_id TEXT PRIMARY KEY,
    embedding_model TEXT,                        -- NULL: hand-made vectors
    dimension INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS id_counters (         -- the last number handed out by next_id
    user_id TEXT NOT NULL,
    prefix TEXT NOT NULL,
    last_number INTEGER NOT NULL,
    PRIMARY KEY (user_id, prefix)
);
"""
FIELDS = (  # the Memory fields kept in columns of the same name
    "text", "kind", "created_at", "last_accessed", "importance", "embedding",
    "embedding_model", "superseded_by", "metadata",
)  # fmt: skip
COLUMNS = {  # what each table must have for this code to read and write it
    "memories": {"seq", "user_id", "id", *FIELDS},
    "users": {"user_id", "embedding_model", "dimension"},
    "id_counters": {"user_id", "prefix", "last_number"},
}
TABLES = set(COLUMNS)


class StoreFileError(RuntimeError):
    """The file cannot be used as a memory store; it has been left exactly as it was."""


class NewerSchemaError(StoreFileError):
    """The file was written by a newer version of Memory Lab than this one."""


# --- opening the file ------------------------------------------------------------


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
    wal = path.with_name(path.name + "-wal")
    mode = "mode=ro" if wal.exists() else "mode=ro&immutable=1"
    db = sqlite3.connect(f"{path.resolve().as_uri()}?{mode}", uri=True, timeout=BUSY_TIMEOUT)
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise NewerSchemaError(
                f"{path} was written by a newer Memory Lab (schema version {version}; this "
                f"code reads up to {SCHEMA_VERSION}). It was left untouched: update Memory "
                "Lab (git pull) to open it, or use another file."
            )
        tables = {
            row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        tables.discard("sqlite_sequence")
        if (version == 0 and tables) or (version > 0 and not tables >= TABLES):
            raise StoreFileError(
                f"{path} is a SQLite database but not a Memory Lab store (its tables: "
                f"{', '.join(sorted(tables)) or 'none'}). It was left untouched: use another file."
            )
        for table in sorted(COLUMNS) if version > 0 else ():
            have = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
            missing = COLUMNS[table] - have
            if missing:
                raise StoreFileError(
                    f"{path} is not a store this code can use: its {table} table lacks the "
                    f"column(s) {', '.join(sorted(missing))}. It was left untouched: use "
                    "another file."
                )
        # subtle: quick_check skips indexes, so a file whose index disagrees with its rows
        # (e.g. after a stray -wal was merged in) passes it; integrity_check reads them all
        problem = db.execute("PRAGMA integrity_check(1)").fetchone()[0]
        if problem != "ok":
            raise sqlite3.DatabaseError(problem)
    except sqlite3.DatabaseError as exc:
        db.close()
        raise StoreFileError(
            f"{path} is damaged or not a database (SQLite says: {exc}). It was left untouched: "
            "restore it from a backup, or move it away to start a new store."
        ) from None
    except BaseException:
        db.close()
        raise
    return db


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
    db.execute("PRAGMA wal_checkpoint(PASSIVE)")


def open_for_writing(path: Path) -> sqlite3.Connection:
    """Validate read-only first, then open for writing and create the tables if new."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        open_read_only(path).close()
    db = None
    try:
        # isolation_level=None: no hidden transactions; every write uses an explicit BEGIN.
        db = sqlite3.connect(path, timeout=BUSY_TIMEOUT, isolation_level=None)
        _set_wal(db)  # readers never block the one writer
        db.execute("PRAGMA synchronous = FULL")  # a commit is on disk when it returns
        db.execute("BEGIN IMMEDIATE")
        if db.execute("PRAGMA user_version").fetchone()[0] == 0:  # new: nobody beat us to it
            for statement in SCHEMA.split(";")[:-1]:
                db.execute(statement)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")  # part of the transaction
        db.execute("COMMIT")
        checkpoint(db)
    except sqlite3.OperationalError as exc:  # a read-only file or folder, a lock never freed
        if db is not None:
            db.close()  # its open transaction, if any, is rolled back: nothing was written
        raise StoreFileError(
            f"{path} cannot be written (SQLite says: {exc}). It was left untouched: check that "
            "the file and its folder are writable and that no other program keeps it locked."
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


def backup_to(db: sqlite3.Connection, target: Path, store_path: Path | None = None) -> None:
    """A consistent copy of the open database `db` at target, with SQLite's backup API."""
    target = Path(target)
    check_copy_target(target, store_path)
    with written_atomically(target) as temporary:
        copy = sqlite3.connect(temporary)
        try:
            db.backup(copy)  # one snapshot, even while another process writes
            copy.execute("PRAGMA journal_mode = DELETE")  # one self-contained file
        finally:
            copy.close()


# --- one memory <-> one row ------------------------------------------------------------------


def snapshot(memory: Memory) -> tuple:
    """The FIELDS values of `memory`, comparable with ==, to tell what changed since a save."""
    try:
        metadata = json.dumps(memory.metadata, sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"memory {memory.id!r}: metadata must be JSON data (str, numbers, lists, dicts) "
            f"to be saved, got {memory.metadata!r} ({exc})"
        ) from None
    values = {name: getattr(memory, name) for name in FIELDS if name != "metadata"}
    return tuple(metadata if name == "metadata" else values[name] for name in FIELDS)


def to_columns(snapshot: tuple) -> tuple:
    """A snapshot as SQLite values: the embedding packed as little-endian float64s."""
    values = dict(zip(FIELDS, snapshot))
    vector = values["embedding"]
    values["embedding"] = struct.pack(f"<{len(vector)}d", *vector)  # exact: no rounding
    values["importance"] = float(values["importance"])
    return tuple(values[name] for name in FIELDS)


def memory_from_row(path: Path, row: tuple) -> Memory:
    """A Memory from a row of (id, user_id, *FIELDS), or StoreFileError saying why not."""
    memory_id, user_id, *columns = row
    values = dict(zip(FIELDS, columns))
    try:
        blob = values["embedding"]
        if not isinstance(blob, bytes) or len(blob) % 8:
            raise ValueError(f"embedding is not a packed float64 vector: {blob!r:.60}")
        last_accessed = values.pop("last_accessed")
        memory = Memory(
            memory_id,
            user_id=user_id,
            last_accessed=values["created_at"],  # set for real below: it may be earlier
            **{
                **values,
                "embedding": struct.unpack(f"<{len(blob) // 8}d", blob),
                "metadata": json.loads(values["metadata"]),
            },
        )
        # Retrieval may stamp a recall slightly before created_at (two clocks), which the
        # constructor would refuse; plain assignment accepts it, as it did before saving.
        memory.last_accessed = last_accessed
    except (TypeError, ValueError) as exc:
        raise StoreFileError(
            f"{path} holds a memory that cannot be read back (user {user_id!r}, id "
            f"{memory_id!r}): {exc}. The file was left untouched."
        ) from None
    return memory
