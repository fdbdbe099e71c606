"""Memories that survive a restart: a MemoryStore kept in a SQLite file, one user at a time.

    store = PersistentMemoryStore("memory_lab.sqlite3", user_id="alice")
    Embedder().remember(store, "Alice prefers Groq", now=now)   # on disk when add returns
    retrieve(store, query, now=now)      # the unchanged retriever: it touches last_accessed
    store.save()                         # ... and save() puts those touches on disk
    store.close()                        # (or: with PersistentMemoryStore(...) as store:)

How changes reach the file:
  - add, remove and supersede write through: each is one SQLite transaction, committed
    before the method returns, so a memory you were handed back is on disk.
  - Changes made by plain attribute assignment (the retriever's
    `memory.last_accessed = now`, a consolidation step raising `importance`) cannot be
    seen as they happen. The store remembers what each row on disk holds; save() compares
    every memory with that and writes the fields that differ, all in one transaction.
    chat_with_memory() calls save() after every turn; close() and `with` call it too.
  - Only the changed fields are written, so two processes that touch different fields of
    one memory do not undo each other; for the same field the last save wins.

One user per store: the store holds, and accepts, only the memories of `user_id`, so
anything given this store (the retriever, consolidation, pruning, export) is scoped to
that user by construction and can never reach another user's memories. A memory with the
unassigned user "default" is claimed by the store it is added to; one that names another
user is refused. list_users() tells which users a file holds.

Safety: WAL journal, synchronous=FULL and a busy timeout, so a process killed mid-write
loses no committed memory; the WAL is checkpointed after every write transaction, so the
.sqlite3 alone holds every committed memory; and two processes can write one file (ids
come from a counter in the file, so they never pick the same one). If the file is deleted
or moved while a store has it open, the store refuses to write (SQLite would write to the
vanished file and report success) and still holds its memories for export_jsonl. A file
that is not SQLite, is damaged (PRAGMA integrity_check), has a stray -wal beside it, or
has a newer schema (PRAGMA user_version) is checked through a read-only connection and
refused with StoreFileError before anything could write to it (storage/sqlite_file.py); every
row's checksum is verified as it is loaded (storage/rows.py). A write SQLite refuses (a
full disk, a read-only file, an I/O error) is rolled back and raised as StoreFileError
naming the file and the cause. docs/store.md has the whole list.

extend() writes a whole batch in one transaction (100,000 memories in seconds); a failed
add or extend takes out only the memories it added.

Deliberately left out: a vector index (recall stays the retriever's loop over every
memory) and seeing another process's new memories without reopening.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO

from base.links import link_problems
from base.validation import check_no_nul, check_text
from memory_store import EmbeddingModelMismatch, Memory, MemoryStore, check_store
from storage.rows import (
    FIELDS,
    MEMORY_COLUMNS,
    USER_COLUMNS,
    StoreFileError,
    check_row,
    memory_from_row,
    row_checksum,
    sealed_row,
    snapshot,
    to_columns,
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
from storage.write_through import WriteThroughStore

__all__ = [
    "ForeignWalError",
    "NewerSchemaError",
    "PersistentMemoryStore",
    "StoreFileError",
    "export_jsonl",
    "list_users",
]


class PersistentMemoryStore(WriteThroughStore):
    """A MemoryStore whose memories live in a SQLite file; scoped to one user.

    Inputs:
        path: the SQLite file; created (with its folder) if missing.
        user_id: whose memories this store holds, e.g. "alice".
        embedding_model: fix the model up front; a file already holding this user's
            memories from another model raises EmbeddingModelMismatch.
    Raises:
        StoreFileError (NewerSchemaError) for a file that is not a usable store.
    """

    def __init__(self, path, user_id: str = "default", embedding_model: str | None = None):
        _check_path(path)
        if str(path) == ":memory:":
            raise ValueError(
                "PersistentMemoryStore needs a file path; use MemoryStore() for memories "
                "that live in this process only"
            )
        check_no_nul(check_text(user_id, "user_id"), "user_id")  # as PostgreSQL must
        super().__init__(embedding_model, user_id=user_id)  # one user per store
        self.path = Path(path)
        self._db = open_for_writing(self.path)
        # (device, inode) of the file, to notice it being deleted or replaced; the absolute
        # path, so that a later os.chdir() is not mistaken for that
        self._absolute = self.path.resolve()
        self._file_id = _file_id(self._absolute)
        try:
            self._load(embedding_model)
        except BaseException:
            self._db.close()
            raise

    # --- loading -------------------------------------------------------------------------

    def _load(self, embedding_model: str | None) -> None:
        self._db.execute("BEGIN")  # one consistent snapshot, even while others write
        try:
            self._read(embedding_model)
        except sqlite3.DatabaseError as exc:  # e.g. text that is no longer UTF-8
            raise StoreFileError(
                f"{self.path} is damaged: reading the memories of user {self.user_id!r} "
                f"failed (SQLite says: {exc}). It was left untouched: restore it from a backup."
            ) from None
        finally:
            self._db.execute("COMMIT")

    def _read(self, embedding_model: str | None) -> None:
        self._identity = read_file_id(self._db)  # every row's checksum includes it
        user = self._db.execute(
            f"SELECT {', '.join(USER_COLUMNS)} FROM users WHERE user_id = ?", (self.user_id,)
        ).fetchone()
        if user is not None:
            check_row(self.path, self._identity, user, f"the row of user {self.user_id!r}")
            self.embedding_model, self.dimension = user[1:3]
            if embedding_model is not None and embedding_model != self.embedding_model:
                raise EmbeddingModelMismatch(
                    f"{self.path}: the memories of user {self.user_id!r} were embedded with "
                    f"{self.embedding_model or 'hand-made vectors'!r}, not {embedding_model!r}"
                    ". Open it with the same embedding model (or none to accept the stored one)."
                )
        rows = self._db.execute(
            f"SELECT {', '.join(MEMORY_COLUMNS)} FROM memories WHERE user_id = ? ORDER BY seq",
            (self.user_id,),
        ).fetchall()
        if rows and user is None:
            raise StoreFileError(
                f"{self.path} is inconsistent: user {self.user_id!r} has memories but no row "
                "in the users table (which records their embedding model). The file was left "
                "untouched: restore it from a backup."
            )
        for row in rows:
            memory = memory_from_row(self.path, self._identity, self.dimension, row)
            if memory.embedding_model != self.embedding_model:
                raise StoreFileError(
                    f"{self.path} is inconsistent: memory {memory.id!r} of user "
                    f"{self.user_id!r} was embedded with {memory.embedding_model!r}, but the "
                    f"user's memories with {self.embedding_model!r}. The file was left untouched."
                )
            self._memories[memory.id] = memory
        problems = link_problems(self._memories)  # no dangling link, no cycle, no half cluster
        if problems:
            shown = "; ".join(problems[:3]) + ("; ..." if len(problems) > 3 else "")
            raise StoreFileError(
                f"{self.path} is inconsistent, so it was not opened (and was left untouched): "
                f"in the memories of user {self.user_id!r}, {shown}"
            )
        self._saved = {m.id: snapshot(m) for m in self._memories.values()}

    # --- write-through changes -----------------------------------------------------------

    def add(self, memory: Memory) -> Memory:
        """Append `memory` and commit it to the file before returning it.

        A memory for user "default" is claimed by this store's user; another user's
        memory is refused, so a store can only ever hold its own user's memories.
        """
        if not isinstance(memory, Memory):
            return super().add(memory)  # raises its TypeError
        self._check_user(memory)
        row = snapshot(memory)  # first: refuses metadata that JSON cannot hold
        with self._undo_adds([memory]):
            super().add(memory)
            with self._transaction() as db:
                if memory.superseded_by is not None:
                    self._check_stored(db, memory.superseded_by)
                self._insert(db, [(memory, row)])
        memory.user_id = self.user_id  # an unassigned ("default") memory is now this user's
        self._saved[memory.id] = row
        return memory

    def extend(self, memories) -> list[Memory]:
        """Add a batch of memories in one transaction of the file: all of them, or none.

        Checked exactly as MemoryStore.extend checks (a memory may be superseded by one
        later in the batch), then written with one executemany in a single transaction:
        100,000 memories take seconds, where as many add() calls, each its own
        transaction and fsync, take minutes.
        """
        batch = list(memories)
        for memory in batch:
            if isinstance(memory, Memory):
                self._check_user(memory)
                snapshot(memory)  # refuses metadata that JSON cannot hold, before anything
        with self._undo_adds(batch):
            with self._in_memory_only():
                super().extend(batch)  # every check first, then adds and links in memory
            rows = [snapshot(m) for m in batch]  # with their links now
            with self._transaction() as db:
                ids = {m.id for m in batch}
                for target in {m.superseded_by for m in batch} - ids - {None}:
                    self._check_stored(db, target)
                self._insert(db, list(zip(batch, rows)))
        for memory, row in zip(batch, rows):
            memory.user_id = self.user_id  # an unassigned ("default") memory is now this user's
            self._saved[memory.id] = row
        return batch

    @contextmanager
    def _in_memory_only(self) -> Iterator[None]:
        """Inside: self.add and self.supersede change this process's memories only.

        subtle: MemoryStore.extend calls self.add and self.supersede; instance attributes
        shadow the methods of the class, so for this block they skip the file, and extend
        writes the whole batch at the end, in one transaction.
        """
        self.add = lambda memory: MemoryStore.add(self, memory)
        self.supersede = lambda old_id, new_id: MemoryStore.supersede(self, old_id, new_id)
        try:
            yield
        finally:
            del self.add, self.supersede

    def _check_user(self, memory: Memory) -> None:
        if memory.user_id not in ("default", self.user_id):
            raise ValueError(
                f"memory {memory.id!r} belongs to user {memory.user_id!r}; this store holds "
                f"only the memories of user {self.user_id!r} (open a store for that user)"
            )

    def _insert(self, db: sqlite3.Connection, memories: list[tuple[Memory, tuple]]) -> None:
        """INSERT (memory, snapshot) pairs as sealed rows, in order, inside a transaction."""
        (last,) = db.execute(
            "SELECT COALESCE(MAX(seq), 0) FROM (SELECT seq FROM sqlite_sequence WHERE "
            "name = 'memories' UNION ALL SELECT MAX(seq) AS seq FROM memories)"
        ).fetchone()
        rows = [
            sealed_row(self._identity, last + n, self.user_id, m.id, to_columns(row))
            for n, (m, row) in enumerate(memories, start=1)
        ]
        try:
            db.executemany(
                f"INSERT INTO memories ({', '.join(MEMORY_COLUMNS)}) "
                f"VALUES ({', '.join('?' * len(MEMORY_COLUMNS))})",
                rows,
            )
        except sqlite3.IntegrityError:
            stored = {
                memory_id
                for (memory_id,) in db.execute(
                    "SELECT id FROM memories WHERE user_id = ?", (self.user_id,)
                )
            }
            taken = next((m.id for m, _ in memories if m.id in stored), memories[0][0].id)
            raise ValueError(
                f"a memory with id {taken!r} is already stored for user "
                f"{self.user_id!r} in {self.path} (added by another process?)"
            ) from None
        self._claim_model(db)

    @contextmanager
    def _undo_adds(self, batch: list) -> Iterator[None]:
        """If the file refuses new memories, take just those out again: O(batch), not O(store).

        (It replaces a copy of the whole store made before every add.)
        """
        kept = self.embedding_model, self.dimension
        links = [(m, m.superseded_by, m.user_id) for m in batch if isinstance(m, Memory)]
        present = {m.id for m, _, _ in links if m.id in self._memories}  # already here: not ours
        try:
            yield
        except BaseException:
            for memory, link, user in links:
                if memory.id not in present and self._memories.get(memory.id) is memory:
                    del self._memories[memory.id]
                object.__setattr__(memory, "superseded_by", link)  # as it was handed in
                object.__setattr__(memory, "user_id", user)
            self.embedding_model, self.dimension = kept
            raise

    def remove(self, memory_id: str) -> Memory:
        """Take a memory out of the store and delete it from the file."""
        with self._undo_if_failed():
            memory = super().remove(memory_id)
            with self._transaction() as db:
                citing = db.execute(  # another process may have linked to it meanwhile
                    "SELECT id FROM memories WHERE user_id = ? AND superseded_by = ? ORDER BY seq",
                    (self.user_id, memory_id),
                ).fetchall()
                if citing:
                    raise ValueError(
                        f"memory {memory_id!r} replaced {', '.join(repr(i) for (i,) in citing)} "
                        f"in the file {self.path} (another process linked them); reopen the "
                        "store to see the link, and keep it so their superseded_by stays valid"
                    )
                db.execute(
                    "DELETE FROM memories WHERE user_id = ? AND id = ?", (self.user_id, memory_id)
                )
            self._saved.pop(memory_id, None)
        return memory

    def supersede(self, old_id: str, new_id: str) -> None:
        """Mark `old_id` as replaced by `new_id`, in memory and in the file.

        Checked against the file's current rows, inside the write: another process may
        have superseded either memory since this store read them. The link is written
        only if `old_id` is still live in the file (UPDATE ... WHERE superseded_by IS
        NULL) and `new_id` is stored and live there; otherwise ValueError, and neither
        the file nor this store changes. So two stores on one file can never build a
        cycle (A: m1 -> m2, then a stale B: m2 -> m1 is refused) or relink a memory.
        """
        old = self.get(old_id)
        before = old.superseded_by
        try:
            super().supersede(old_id, new_id)
            with self._transaction() as db:
                self._check_live_in_file(db, new_id, "The replacement")
                linked = db.execute(
                    "UPDATE memories SET superseded_by = ? "
                    "WHERE user_id = ? AND id = ? AND superseded_by IS NULL",
                    (new_id, self.user_id, old_id),
                )
                if linked.rowcount != 1:
                    self._check_live_in_file(db, old_id, "The memory to supersede")
                    raise AssertionError("unreachable: the row is live but was not updated")
            saved = list(self._saved[old_id])
            saved[FIELDS.index("superseded_by")] = new_id
            self._saved[old_id] = tuple(saved)
        except BaseException:
            old.superseded_by = before
            raise

    def _check_live_in_file(self, db: sqlite3.Connection, memory_id: str, role: str) -> None:
        """Raise unless the file holds `memory_id`, not superseded (inside a transaction)."""
        row = db.execute(
            "SELECT superseded_by FROM memories WHERE user_id = ? AND id = ?",
            (self.user_id, memory_id),
        ).fetchone()
        if row is None:
            raise ValueError(
                f"{role}, memory {memory_id!r} is no longer stored in {self.path} (removed "
                "by another process?); nothing was changed: reopen the store to see its "
                "current memories"
            )
        if row[0] is not None:
            raise ValueError(
                f"{role}, memory {memory_id!r} was already superseded by {row[0]!r} in "
                f"{self.path} (by another process, after this store read it); nothing was "
                "changed: reopen the store and supersede the current version instead"
            )

    def next_id(self, prefix: str = "m") -> str:
        """An id no process has used for this user: reserved in the file's counter."""
        check_text(prefix, "prefix", "a non-empty string (ids are prefix + number, e.g. m1)")
        with self._transaction() as db:
            stored = db.execute(
                "SELECT last_number FROM id_counters WHERE user_id = ? AND prefix = ?",
                (self.user_id, prefix),
            ).fetchone()
            n = max(stored[0] if stored else 0, len(self)) + 1
            taken = "SELECT 1 FROM memories WHERE user_id = ? AND id = ?"
            while (
                f"{prefix}{n}" in self
                or db.execute(taken, (self.user_id, f"{prefix}{n}")).fetchone()
            ):
                n += 1
            db.execute(
                "INSERT OR REPLACE INTO id_counters VALUES (?, ?, ?)", (self.user_id, prefix, n)
            )
        return f"{prefix}{n}"

    def reread(self, memory_id: str) -> Memory | None:
        """A fresh copy of `memory_id` as the file holds it now (None if it is gone there).

        Inside store.transaction() this is the row as of the transaction, which no other
        process can change until it ends: what a multi-step change checks before acting.
        """
        check_text(memory_id, "memory_id", "a memory's id, a non-empty string")
        with self._transaction() as db:
            row = db.execute(
                f"SELECT {', '.join(MEMORY_COLUMNS)} FROM memories WHERE user_id = ? AND id = ?",
                (self.user_id, memory_id),
            ).fetchone()
        if row is None:
            return None
        return memory_from_row(self.path, self._identity, self.dimension, row)

    # --- in-place changes ----------------------------------------------------------------

    def unsaved(self) -> list[Memory]:
        """Memories changed in place (e.g. touched by retrieval) since they were saved."""
        return [m for m in self._memories.values() if snapshot(m) != self._saved.get(m.id)]

    def save(self) -> int:
        """Write every field changed in place since the last save, in one transaction.

        Returns how many memories were written (0 when nothing changed). A memory that
        another process removed meanwhile stays removed: its update finds no row.
        """
        changed = self.unsaved()
        if changed:
            self._check_links("save")  # an in-place edit must not write a broken link
            with self._transaction():
                for memory in changed:
                    self._write(memory, FIELDS)
        return len(changed)

    def _write(self, memory: Memory, names: tuple[str, ...]) -> None:
        """UPDATE only the `names` fields that differ from the file (inside a transaction)."""
        new, old = snapshot(memory), self._saved[memory.id]
        columns = dict(zip(FIELDS, to_columns(new)))
        changed = [n for n in names if new[FIELDS.index(n)] != old[FIELDS.index(n)]]
        if changed:
            self._db.execute(
                "UPDATE memories SET "
                + ", ".join(f"{name} = ?" for name in changed)
                + " WHERE user_id = ? AND id = ?",
                [columns[name] for name in changed] + [self.user_id, memory.id],
            )
        self._saved[memory.id] = tuple(
            new[i] if name in names else old[i] for i, name in enumerate(FIELDS)
        )

    def _check_stored(self, db: sqlite3.Connection, memory_id: str) -> None:
        """Raise unless the file holds `memory_id`: never write a link to a missing row."""
        stored = "SELECT 1 FROM memories WHERE user_id = ? AND id = ?"
        if db.execute(stored, (self.user_id, memory_id)).fetchone() is None:
            raise ValueError(
                f"memory {memory_id!r} is no longer stored in {self.path} (removed by "
                "another process?); reopen the store to see its current memories"
            )

    def _claim_model(self, db: sqlite3.Connection) -> None:
        """Record this user's embedding model, or refuse if another process set another."""
        stored = db.execute(
            "SELECT embedding_model, dimension FROM users WHERE user_id = ?", (self.user_id,)
        ).fetchone()
        if stored is None:
            user = (self.user_id, self.embedding_model, self.dimension)
            db.execute(
                f"INSERT INTO users ({', '.join(USER_COLUMNS)}) VALUES (?, ?, ?, ?)",
                (*user, row_checksum(self._identity, *user)),
            )
        elif tuple(stored) != (self.embedding_model, self.dimension):
            raise EmbeddingModelMismatch(
                f"{self.path}: user {self.user_id!r}'s memories are {stored[1]}-dimensional "
                f"vectors of {stored[0] or 'hand-made vectors'!r}, not {self.dimension}-"
                f"dimensional ones of {self.embedding_model or 'hand-made vectors'!r}"
            )

    # --- export, closing -----------------------------------------------------------------

    def export_jsonl(self, target) -> int:
        """Write this user's memories to `target` (a path or text file), one JSON per line."""
        return export_jsonl(self, target)

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

    def _where(self) -> str:
        return str(self.path)

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        if self._db is None:
            raise ValueError(f"the store for {self.path} is closed: open it again")
        if self._block_open:  # inside store.transaction(): its one BEGIN ... COMMIT holds
            yield self._db
            return
        try:
            self._db.execute("BEGIN IMMEDIATE")  # take the write lock now, not halfway through
        except sqlite3.OperationalError as exc:  # locked by another program for too long
            raise self._write_error(exc) from None
        try:
            if _file_id(self._absolute) != self._file_id:
                # subtle: SQLite keeps writing to the open, unlinked file and reports success;
                # every such "committed" memory would vanish when the store is closed.
                raise StoreFileError(
                    f"{self.path} was deleted, moved or replaced while this store was open, "
                    "so nothing more is written to it (the change was not made). The memories "
                    "this store holds are still here: save them with store.export_jsonl(...), "
                    "then open the store again."
                )
            yield self._db
            self._db.execute("COMMIT")
        except BaseException as exc:
            if self._db.in_transaction:
                with suppress(sqlite3.Error):  # SQLite rolls back itself when this fails too
                    self._db.execute("ROLLBACK")  # all of it or none of it
            if isinstance(exc, sqlite3.OperationalError):  # full, read-only, I/O error, locked
                raise self._write_error(exc) from None
            raise
        checkpoint(self._db)  # the .sqlite3 alone now holds this commit too

    def _write_error(self, exc: sqlite3.OperationalError) -> StoreFileError:
        """The error a failed write raises: which file, what SQLite said, nothing written."""
        cause = str(exc)
        hint = {
            "full": "the disk (or the file's size limit) is full: free some space",
            "readonly": "the file, its folder or the disk is read-only: make them writable",
            "locked": "another program kept the file locked: close it, or try again",
            "I/O": "the disk reported an I/O error: check it, and keep a backup",
        }
        advice = next((text for key, text in hint.items() if key in cause), "see SQLite's words")
        return StoreFileError(
            f"{self.path} could not be written (SQLite says: {cause}); {advice}. Nothing of "
            "this change was written: the file and this store are as they were before it."
        )

    @contextmanager
    def _undo_if_failed(self) -> Iterator[None]:
        """If the file refuses a change, the in-memory store goes back to what it was."""
        kept = dict(self._memories), self.embedding_model, self.dimension
        try:
            yield
        except BaseException:
            self._memories, self.embedding_model, self.dimension = kept
            raise


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


def export_jsonl(store: MemoryStore, target) -> int:
    """Write every memory of `store`, superseded ones too, as JSON lines; returns the count.

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
            return export_jsonl(store, file)
    if not callable(getattr(target, "write", None)):
        raise TypeError(
            f"target must be a file path or an open text file, got {type(target).__name__}"
        )
    out: IO[str] = target
    count = 0
    for memory in store:
        out.write(json.dumps(memory.to_dict(), ensure_ascii=False) + "\n")
        count += 1
    return count
