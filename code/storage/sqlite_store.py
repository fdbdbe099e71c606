"""Memories that survive a restart: a MemoryStore kept in a SQLite file, one user at a time.

    store = PersistentMemoryStore("memory_lab.sqlite3", user_id="alice")
    Embedder().remember(store, "Alice prefers Groq", now=now)   # on disk when add returns
    retrieve(store, query, now=now)      # the unchanged retriever: it touches last_accessed
    store.save()                         # ... and save() puts those touches on disk
    store.close()                        # (or: with PersistentMemoryStore(...) as store:)

How each change reaches the file is the store algorithm (storage/store.py), which this is
the SQLite dialect of: ? for values; a write begins with BEGIN IMMEDIATE, which locks the
whole file (what FOR UPDATE does for rows on PostgreSQL); rows are sealed with checksums
(storage/rows.py); a refused write (a full disk, a read-only file, an I/O error) is raised
as StoreFileError naming the file and the cause. list_users() tells which users a file
holds; export_jsonl() writes one user's memories out.

Safety: WAL journal, synchronous=FULL and a busy timeout, so a process killed mid-write
loses no committed memory; the WAL is checkpointed after every write transaction, so the
.sqlite3 alone holds every committed memory. If the file is deleted or moved while a store
has it open, the store refuses to write (SQLite would write to the vanished file and report
success) and still holds its memories for export_jsonl. A file that is not SQLite, is
damaged (PRAGMA integrity_check), has a stray -wal beside it, or has a newer schema (PRAGMA
user_version) is refused with StoreFileError before anything could write to it
(storage/sqlite_file.py). docs/store.md has the whole list.

Deliberately left out: a vector index (retrieve stays the learner's loop over every memory;
a chat turn's shortlist from a float32 matrix of the file is scale/sqlite_retrieval.py's).
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import IO

from memory_store import Memory, MemoryStore, check_store
from storage.rows import (
    MEMORY_COLUMNS,
    USER_COLUMNS,
    StoreFileError,
    check_row,
    memory_from_row,
    row_checksum,
    sealed_row,
    to_columns,
    unpack_vector,
)
from storage.sqlite_file import (
    ForeignWalError,
    NewerSchemaError,
    backup_to,
    check_copy_target,
    checkpoint,
    open_for_writing,
    open_read_only,
    read_file_id,
    written_atomically,
)
from storage.store import DatabaseStore

__all__ = [
    "ForeignWalError",
    "NewerSchemaError",
    "PersistentMemoryStore",
    "StoreFileError",
    "export_jsonl",
    "list_users",
]

WRITE_HINTS = {  # what SQLite's words for a refused write mean, and what to do about it
    "full": "the disk (or the file's size limit) is full: free some space",
    "readonly": "the file, its folder or the disk is read-only: make them writable",
    "locked": "another program kept the file locked: close it, or try again",
    "I/O": "the disk reported an I/O error: check it, and keep a backup",
}


class PersistentMemoryStore(DatabaseStore):
    """A MemoryStore whose memories live in a SQLite file; scoped to one user.

    Inputs:
        path: the SQLite file; created (with its folder) if missing.
        user_id: whose memories this store holds, e.g. "alice".
        embedding_model: fix the model up front; a file already holding this user's
            memories from another model raises EmbeddingModelMismatch.
    Raises:
        StoreFileError (NewerSchemaError) for a file that is not a usable store.
    """

    columns = MEMORY_COLUMNS  # seq, user_id, id, the fields, and the row's checksum
    version = "checksum"  # changes whenever the row does: the trigger re-seals every UPDATE
    # subtle: without it SQLite reads a batch through the (user_id, id) index, visiting every
    # row of the user and sorting; NOT INDEXED keeps the seq (rowid) range: 1,000 rows read
    by_seq = "memories NOT INDEXED"
    _to_columns = staticmethod(to_columns)  # numbers as floats, the vector packed
    refusal = StoreFileError
    medium = "file"

    def __init__(self, path, user_id: str = "default", embedding_model: str | None = None):
        _check_path(path)
        if str(path) == ":memory:":
            raise ValueError(
                "PersistentMemoryStore needs a file path; use MemoryStore() for memories "
                "that live in this process only"
            )
        super().__init__(embedding_model, user_id=user_id)  # one user per store
        self.path = Path(path)
        db = open_for_writing(self.path)
        # (device, inode) of the file, to notice it being deleted or replaced; the absolute
        # path, so that a later os.chdir() is not mistaken for that
        self._absolute = self.path.resolve()
        self._file_id = _file_id(self._absolute)
        self._open(db, embedding_model)

    def backup(self, target) -> Path:
        """Save, then copy the whole store file (every user) to `target` consistently.

        Uses SQLite's backup API, so the copy is one snapshot even while other processes
        write, and is a single self-contained file; a plain copy of the .sqlite3 alone
        may miss memories still in its -wal. The same targets as export_jsonl are refused.
        """
        self.save()
        if self._db is None:
            raise ValueError(f"the store for {self.path} is closed: open it again")
        backup_to(self._db, Path(target), self.path)
        return Path(target)

    def export_jsonl(self, target) -> int:
        """Write this user's memories to `target` (a path or text file), one JSON per line."""
        return export_jsonl(self, target)

    # --- the dialect (storage/store.py) -------------------------------------------------

    def _where(self) -> str:
        return str(self.path)

    def _begin(self, read_only: bool) -> None:
        self._run("BEGIN" if read_only else "BEGIN IMMEDIATE")  # the write lock now, not later
        if not read_only and _file_id(self._absolute) != self._file_id:  # reads: still there
            # subtle: SQLite keeps writing to the open, unlinked file and reports success;
            # every such "committed" memory would vanish when the store is closed.
            raise StoreFileError(
                f"{self.path} was deleted, moved or replaced while this store was open, "
                "so nothing more is written to it (the change was not made). The memories "
                "this store holds are still here: save them with store.export_jsonl(...), "
                "then open the store again."
            )

    def _transaction_open(self) -> bool:
        return self._db.in_transaction

    def _after_commit(self) -> None:
        checkpoint(self._db)  # the .sqlite3 alone now holds this commit too

    def _error(self, error: BaseException, read_only: bool) -> Exception | None:
        if read_only and isinstance(error, sqlite3.DatabaseError):  # e.g. text no longer UTF-8
            return StoreFileError(
                f"{self.path} is damaged: reading the memories of user {self.user_id!r} "
                f"failed (SQLite says: {error}). It was left untouched: restore it from a backup."
            )
        if not isinstance(error, sqlite3.OperationalError):  # full, read-only, I/O, locked
            return None
        cause = str(error)
        advice = next(
            (text for key, text in WRITE_HINTS.items() if key in cause), "see SQLite's words"
        )
        return StoreFileError(
            f"{self.path} could not be written (SQLite says: {cause}); {advice}. Nothing of "
            "this change was written: the file and this store are as they were before it."
        )

    def _read_user(self) -> tuple[str | None, int] | None:
        self._identity = read_file_id(self._db)  # every row's checksum includes it
        user = self._run(
            f"SELECT {', '.join(USER_COLUMNS)} FROM users WHERE user_id = ?", (self.user_id,)
        ).fetchone()
        if user is None:
            return None
        check_row(self.path, self._identity, user, f"the row of user {self.user_id!r}")
        return user[1], user[2]

    def _memory_from_row(self, row: tuple) -> Memory:
        return memory_from_row(self.path, self._identity, self.dimension, row)

    def _new_rows(self, pairs: list[tuple[Memory, tuple]]) -> list[tuple]:
        """Sealed rows (storage/rows.py), numbered after every seq the file ever handed out."""
        (last,) = self._run(
            "SELECT COALESCE(MAX(seq), 0) FROM (SELECT seq FROM sqlite_sequence WHERE "
            "name = 'memories' UNION ALL SELECT MAX(seq) AS seq FROM memories)"
        ).fetchone()
        return [
            sealed_row(self._identity, last + n, self.user_id, memory.id, to_columns(row))
            for n, (memory, row) in enumerate(pairs, start=1)
        ]

    def _version_of(self, row: tuple) -> bytes:
        return row[-1]  # a sealed row's checksum

    def _user_row(self) -> tuple:
        user = (self.user_id, self.embedding_model, self.dimension)
        return (*user, row_checksum(self._identity, *user))

    def _run_many(self, sql: str, rows: list[tuple]) -> int:
        return self._db.executemany(sql, rows).rowcount

    def _counts_table(self, writing: bool) -> bool:
        # made by the first write that keeps counts: a file of schema 2 without it is read
        # as before (older code ignores the table, and its writes leave the counts stale)
        if writing:
            self._run(COUNTS_TABLE)
            return True
        return (
            self._run("SELECT 1 FROM sqlite_master WHERE name = 'position_counts'").fetchone()
            is not None
        )

    def _vector_of(self, stored):
        return unpack_vector(stored, self.dimension)


COUNTS_TABLE = """
CREATE TABLE IF NOT EXISTS position_counts (   -- per user: memories non-zero at each position
    user_id TEXT PRIMARY KEY,
    last_seq INTEGER NOT NULL,                  -- the user's highest seq when counted
    documents INTEGER NOT NULL,                 -- the user's rows when counted
    counts BLOB NOT NULL                        -- little-endian int32s, one a position
)"""


def _check_path(path):
    """Return `path` if it is a str or os.PathLike (a file path), else raise TypeError."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(
            f"path must be a file path (str or pathlib.Path), got {type(path).__name__}: {path!r}"
        )
    return path


def _file_id(path: Path) -> tuple[int, int] | None:
    """(device, inode) of the file at `path`, or None if there is none: its identity."""
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return None
    return status.st_dev, status.st_ino


# --- the file as a whole -------------------------------------------------------------------


def list_users(path) -> list[str]:
    """The users with at least one memory in the file, sorted: ['alice', 'bob']."""
    db = open_read_only(Path(_check_path(path)))
    try:
        rows = db.execute("SELECT DISTINCT user_id FROM memories ORDER BY user_id").fetchall()
    except sqlite3.DatabaseError as exc:  # e.g. a user id that is no longer UTF-8
        raise StoreFileError(f"{path} is damaged (SQLite says: {exc})") from None
    finally:
        db.close()
    return [user for (user,) in rows]


def export_jsonl(store: MemoryStore, target, *, to_record=None) -> int:
    """Write every memory of `store`, superseded ones too, as JSON lines; returns the count.

    to_record: memory -> the dict written for it (default Memory.to_dict; the export_jsonl
    of practice/persistence.py passes the learner's memory_to_record, optional Milestone 9).

    Give it a one-user store (PersistentMemoryStore(path, user_id)) to export one user.
    The embedding is included, so Memory.from_dict(json.loads(line)) restores a memory.
    A store holding several users' memories is refused before any file is opened.
    A file path is written to a temporary file beside it, then renamed into place; a
    path that is a store, its -wal/-shm, a link to one or any SQLite file is refused
    with ValueError.
    """
    check_store(store).check_one_user("export")
    if isinstance(target, (str, Path)):
        target = Path(target)
        check_copy_target(target, getattr(store, "path", None))  # never over a store
        with (
            written_atomically(target) as temporary,
            open(temporary, "w", encoding="utf-8") as file,  # closed before the rename
        ):
            return export_jsonl(store, file, to_record=to_record)
    if not callable(getattr(target, "write", None)):
        raise TypeError(
            f"target must be a file path or an open text file, got {type(target).__name__}"
        )
    out: IO[str] = target
    to_record = Memory.to_dict if to_record is None else to_record
    count = 0
    for memory in store:
        record = to_record(memory)
        try:
            line = json.dumps(record, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"the record of memory {memory.id!r} is not JSON data ({exc}): a record holds "
                "str, numbers, None, lists and dicts only (an embedding as a list of floats)"
            ) from None
        out.write(line + "\n")
        count += 1
    return count
