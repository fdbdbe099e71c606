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
that is not SQLite, is damaged (PRAGMA integrity_check), or has a newer schema (PRAGMA
user_version) is checked through a read-only connection and refused with StoreFileError
before anything could write to it.

Deliberately left out: a vector index (recall stays the retriever's loop over every
memory), seeing another process's new memories without reopening, and schema migrations.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from lab.store_file import (
    FIELDS,
    NewerSchemaError,
    StoreFileError,
    backup_to,
    check_copy_target,
    checkpoint,
    memory_from_row,
    open_for_writing,
    open_read_only,
    snapshot,
    to_columns,
    written_atomically,
)
from lab.validation import check_no_nul, check_text
from memory_store import EmbeddingModelMismatch, Memory, MemoryStore, check_store

__all__ = [
    "NewerSchemaError",
    "PersistentMemoryStore",
    "StoreFileError",
    "export_jsonl",
    "list_users",
]


class PersistentMemoryStore(MemoryStore):
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
        if str(path) == ":memory:":
            raise ValueError(
                "PersistentMemoryStore needs a file path; use MemoryStore() for memories "
                "that live in this process only"
            )
        check_no_nul(check_text(user_id, "user_id"), "user_id")  # as PostgreSQL must
        super().__init__(embedding_model)
        self.path, self.user_id = Path(path), user_id
        self._saved: dict[str, tuple] = {}  # id -> the FIELDS values the file holds
        self._block_open = False  # inside store.transaction(): one write for the block
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
        finally:
            self._db.execute("COMMIT")

    def _read(self, embedding_model: str | None) -> None:
        user = self._db.execute(
            "SELECT embedding_model, dimension FROM users WHERE user_id = ?", (self.user_id,)
        ).fetchone()
        if user is not None:
            self.embedding_model, self.dimension = user
            if embedding_model is not None and embedding_model != self.embedding_model:
                raise EmbeddingModelMismatch(
                    f"{self.path}: the memories of user {self.user_id!r} were embedded with "
                    f"{self.embedding_model or 'hand-made vectors'!r}, not {embedding_model!r}"
                    ". Open it with the same embedding model (or none to accept the stored one)."
                )
        rows = self._db.execute(
            "SELECT id, user_id, " + ", ".join(FIELDS) + " FROM memories "
            "WHERE user_id = ? ORDER BY seq",
            (self.user_id,),
        ).fetchall()
        links = {}
        for row in rows:
            memory = memory_from_row(self.path, row)
            links[memory.id] = memory.superseded_by
            memory.superseded_by = None  # restored below, once its target is loaded too
            self._memories[memory.id] = memory
        for memory_id, target in links.items():
            if target is not None and target not in self._memories:
                raise StoreFileError(
                    f"{self.path} is inconsistent: memory {memory_id!r} of user "
                    f"{self.user_id!r} is superseded by {target!r}, which is not stored"
                )
            self._memories[memory_id].superseded_by = target
        self._saved = {m.id: snapshot(m) for m in self._memories.values()}

    # --- write-through changes -----------------------------------------------------------

    def add(self, memory: Memory) -> Memory:
        """Append `memory` and commit it to the file before returning it.

        A memory for user "default" is claimed by this store's user; another user's
        memory is refused, so a store can only ever hold its own user's memories.
        """
        if not isinstance(memory, Memory):
            return super().add(memory)  # raises its TypeError
        if memory.user_id not in ("default", self.user_id):
            raise ValueError(
                f"memory {memory.id!r} belongs to user {memory.user_id!r}; this store holds "
                f"only the memories of user {self.user_id!r} (open a store for that user)"
            )
        row = snapshot(memory)  # first: refuses metadata that JSON cannot hold
        with self._undo_if_failed():
            super().add(memory)
            with self._transaction() as db:
                if memory.superseded_by is not None:
                    self._check_stored(db, memory.superseded_by)
                try:
                    db.execute(
                        "INSERT INTO memories (user_id, id, " + ", ".join(FIELDS) + ") "
                        "VALUES (?, ?" + ", ?" * len(FIELDS) + ")",
                        (self.user_id, memory.id, *to_columns(row)),
                    )
                except sqlite3.IntegrityError:
                    raise ValueError(
                        f"a memory with id {memory.id!r} is already stored for user "
                        f"{self.user_id!r} in {self.path} (added by another process?)"
                    ) from None
                self._claim_model(db)
        memory.user_id = self.user_id  # an unassigned ("default") memory is now this user's
        self._saved[memory.id] = row
        return memory

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
        """Mark `old_id` as replaced by `new_id`, in memory and in the file."""
        old = self.get(old_id)
        before = old.superseded_by
        try:
            super().supersede(old_id, new_id)
            with self._transaction() as db:
                self._check_stored(db, new_id)
                self._write(old, ("superseded_by",))
        except BaseException:
            old.superseded_by = before
            raise

    def next_id(self, prefix: str = "m") -> str:
        """An id no process has used for this user: reserved in the file's counter."""
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
            db.execute(
                "INSERT INTO users VALUES (?, ?, ?)",
                (self.user_id, self.embedding_model, self.dimension),
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

    def close(self) -> None:
        """Save what changed in place, then close the file. Safe to call twice."""
        if self._db is not None:
            try:
                self.save()
            finally:
                self._db.close()
                self._db = None

    def __enter__(self) -> PersistentMemoryStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"PersistentMemoryStore({str(self.path)!r}, user_id={self.user_id!r}, "
            f"{len(self)} memories, embedding_model={self.embedding_model!r})"
        )

    @contextmanager
    def _write_block(self) -> Iterator[None]:
        """store.transaction(): the whole block is one transaction of the file."""
        with self._transaction():
            self._block_open = True
            try:
                yield
            finally:
                self._block_open = False

    def _state(self) -> tuple:
        return (*super()._state(), dict(self._saved))

    def _restore(self, state: tuple) -> None:
        *base, self._saved = state
        super()._restore(tuple(base))

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        if self._db is None:
            raise ValueError(f"the store for {self.path} is closed: open it again")
        if self._block_open:  # inside store.transaction(): its one BEGIN ... COMMIT holds
            yield self._db
            return
        self._db.execute("BEGIN IMMEDIATE")  # take the write lock now, not halfway through
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
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")  # all of it or none of it
            raise
        checkpoint(self._db)  # the .sqlite3 alone now holds this commit too

    @contextmanager
    def _undo_if_failed(self) -> Iterator[None]:
        """If the file refuses a change, the in-memory store goes back to what it was."""
        kept = dict(self._memories), self.embedding_model, self.dimension
        try:
            yield
        except BaseException:
            self._memories, self.embedding_model, self.dimension = kept
            raise


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
    db = open_read_only(Path(path))
    try:
        rows = db.execute("SELECT DISTINCT user_id FROM memories ORDER BY user_id").fetchall()
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
    out: IO[str] = target
    count = 0
    for memory in store:
        out.write(json.dumps(memory.to_dict(), ensure_ascii=False) + "\n")
        count += 1
    return count
