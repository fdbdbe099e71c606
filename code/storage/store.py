"""The store written once: a MemoryStore whose every change goes to a database as it happens.

PersistentMemoryStore (storage/sqlite_store.py) and PostgresMemoryStore
(storage/postgres_store.py) are this class with a dialect each. The algorithm is here:

  - opening reads the user's embedding model and memories in one read-only transaction,
    checks their links (link_problems) and remembers what each row holds (`_saved`);
  - add, extend, remove, supersede, next_id and reread are one transaction each, checked
    against the rows as they are now, not as this process last saw them: another process
    may have added, linked or removed a memory since (the error names it);
  - save() writes only the fields changed in place since the last save (the retriever's
    last_accessed), in id order, so that two processes touching different fields of one
    memory do not undo each other, and two saving the same memories cannot deadlock;
  - `with store.transaction():` is one transaction of the database; each step inside is a
    savepoint, so a step that fails and is caught leaves the block usable;
  - a change the database refuses is undone in memory too, at the cost of what it touched;
  - the limits of storage/limits.py are checked before any SQL, so both backends refuse
    the same values with the same error.

The SQL is written once, with ? for each value and the tables by name. A dialect supplies
what differs (the methods under "the dialect" below): its placeholder, its row lock
(PostgreSQL's FOR UPDATE; SQLite locks the whole file when a write begins), how a
transaction begins and what follows a commit, how a row becomes a Memory and back, and
which of its errors become which of ours.

Deliberately left out: connections, files, servers, schemas and any backend's own errors.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress

from base.links import link_problems
from base.validation import check_text
from memory_store import EmbeddingModelMismatch, Memory, MemoryStore
from storage.limits import check_name, check_row
from storage.rows import FIELDS, snapshot

LINKS = (FIELDS.index("superseded_by"), FIELDS.index("metadata"))  # what link_problems reads


class DatabaseStore(MemoryStore):
    """A MemoryStore written through to a database, one user a store (subclassed by a dialect)."""

    placeholder = "?"  # how the dialect's SQL marks a value
    row_lock = ""  # appended to a SELECT of rows about to change: " FOR UPDATE"
    columns: tuple[str, ...] = ()  # a memory's row as _memory_from_row and _new_rows see it
    refusal: type[Exception] = RuntimeError  # the backend's own error: a store it cannot use
    medium = "database"  # what _where() names, in messages: "the file memories.sqlite3"
    _db = None  # the open connection, None once closed

    def __init__(self, embedding_model: str | None = None, *, user_id: str = "default") -> None:
        check_name(check_text(user_id, "user_id"), "user_id")  # never None: one user a store
        super().__init__(embedding_model, user_id=user_id)
        if embedding_model is not None:
            check_name(embedding_model, "embedding_model")
        self._saved: dict[str, tuple] = {}  # id -> the FIELDS values its row holds
        self._block_open = False  # inside store.transaction(): one transaction for the block

    # --- the dialect: what each backend defines (sqlite_store.py, postgres_store.py) ---
    #   _where()                  the file, or the URL with its password hidden
    #   _begin(read_only)         BEGIN: a write takes its locks, a read sees one snapshot
    #   _transaction_open()       whether the connection is inside a transaction
    #   _read_user()              (embedding_model, dimension) in this user's row, or None
    #   _memory_from_row(row)     a Memory from a row of `columns`
    #   _to_columns(snapshot)     a snapshot (storage/rows.py) as the values of FIELDS
    #   _new_rows(pairs)          rows of `columns` for new (memory, snapshot) pairs
    #   _user_row()               the users row recording this user's model and dimension
    #   _run_many(sql, rows)      executemany: how many rows it changed in all
    # and, when the backend needs them:

    def _after_commit(self) -> None:
        """What follows a committed write (SQLite copies its WAL into the file)."""

    def _delete(self, memory_id: str) -> None:
        """DELETE this user's row `memory_id` (PostgreSQL: through a function, see there)."""
        self._run("DELETE FROM memories WHERE user_id = ? AND id = ?", (self.user_id, memory_id))

    def _error(self, error: BaseException, read_only: bool) -> Exception | None:
        """The error to raise instead of the backend's `error`; None: raise it as it is."""
        return None

    # --- SQL and transactions -------------------------------------------------------------

    def _sql(self, text: str) -> str:
        return text.replace("?", self.placeholder)  # the SQL here has no literal "?"

    def _run(self, text: str, params=()):
        """Execute one statement of the shared SQL; its cursor."""
        return self._db.execute(self._sql(text), params)

    @contextmanager
    def _transaction(self, read_only: bool = False) -> Iterator[None]:
        """One transaction of the database; inside store.transaction(), one savepoint of it."""
        if self._db is None:
            raise ValueError(f"the store for {self._where()} is closed: open it again")
        nested = self._block_open
        if nested and not self._transaction_open():
            # subtle: SQLite ends a transaction itself after some I/O errors; a SAVEPOINT
            # would then begin a new one, and its RELEASE commit half of the block
            raise self.refusal(
                f"{self._where()} ended this block's transaction after an earlier error; "
                "nothing more of the block is written, and the block is rolled back"
            )
        try:
            if nested:
                self._run("SAVEPOINT step")  # a failed step is undone alone: the block goes on
            else:
                self._begin(read_only)
            yield
            self._run("RELEASE SAVEPOINT step" if nested else "COMMIT")
        except BaseException as error:
            if self._transaction_open():
                with suppress(Exception):  # the first error says more than a failed rollback
                    self._run("ROLLBACK TO SAVEPOINT step" if nested else "ROLLBACK")
            mapped = self._error(error, read_only)
            if mapped is None:
                raise
            raise mapped from None
        if not (nested or read_only):
            self._after_commit()

    @contextmanager
    def _write_block(self) -> Iterator[None]:
        """store.transaction(): the whole block is one transaction of the database."""
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
    def _undo_if_failed(self, memories: list[Memory]) -> Iterator[None]:
        """If the database refuses a change, this process's store goes back as it was.

        Kept is what the change can touch, never a copy of the store: the store's model and
        dimension, and for each of `memories` whether it was stored, its link and its user.
        """
        kept = self.embedding_model, self.dimension
        touched = [(m, self._memories.get(m.id) is m, m.superseded_by, m.user_id) for m in memories]
        try:
            yield
        except BaseException:
            self.embedding_model, self.dimension = kept
            for memory, stored, link, user in touched:
                object.__setattr__(memory, "superseded_by", link)  # as it was handed in
                object.__setattr__(memory, "user_id", user)
                if not stored and self._memories.get(memory.id) is memory:
                    del self._memories[memory.id]
            back = {m.id: m for m, stored, _, _ in touched if stored and m.id not in self._memories}
            if back:  # subtle: _saved holds the stored ids in the stream's order
                self._memories = {i: self._memories.get(i) or back[i] for i in self._saved}
            raise

    # --- opening --------------------------------------------------------------------------

    def _open(self, db, embedding_model: str | None) -> None:
        """Read this user's memories through the new connection `db`; close it on failure."""
        self._db = db
        try:
            self._load(embedding_model)
        except BaseException:
            db.close()
            self._db = None
            raise

    def _load(self, embedding_model: str | None) -> None:
        with self._transaction(read_only=True):  # one consistent snapshot, even while others write
            user = self._read_user()
            if user is not None:
                self.embedding_model, self.dimension = user
                if embedding_model is not None and embedding_model != self.embedding_model:
                    raise EmbeddingModelMismatch(
                        f"{self._where()}: the memories of user {self.user_id!r} were embedded "
                        f"with {self.embedding_model or 'hand-made vectors'!r}, not "
                        f"{embedding_model!r}. Open it with the same embedding model (or none "
                        "to accept the stored one)."
                    )
            rows = self._run(
                f"SELECT {', '.join(self.columns)} FROM memories WHERE user_id = ? ORDER BY seq",
                (self.user_id,),
            ).fetchall()
            memories = [self._memory_from_row(row) for row in rows]
        if memories and user is None:
            raise self._inconsistent("they have no row in the users table (their model's)")
        for memory in memories:
            if memory.embedding_model != self.embedding_model:
                raise self._inconsistent(
                    f"memory {memory.id!r} was embedded with {memory.embedding_model!r}, but "
                    f"the others with {self.embedding_model!r}"
                )
            self._memories[memory.id] = memory
        problems = link_problems(self._memories)  # no dangling link, no cycle, no half cluster
        if problems:
            raise self._inconsistent("; ".join(problems[:3]) + ("; ..." if problems[3:] else ""))
        self._saved = {m.id: snapshot(m) for m in self._memories.values()}

    def _inconsistent(self, problem: str) -> Exception:
        return self.refusal(
            f"{self._where()} is inconsistent, so the store was not opened and nothing was "
            f"changed: in the memories of user {self.user_id!r}, {problem}"
        )

    # --- changes, each one transaction ------------------------------------------------------

    def add(self, memory: Memory) -> Memory:
        """Append `memory` and commit its row before returning it.

        A memory of user "default" is claimed by this store's user; another user's memory is
        refused, and so is a value a backend cannot keep (storage/limits.py), before any SQL.
        """
        if not isinstance(memory, Memory):
            return super().add(memory)  # raises its TypeError
        row = self._row(memory)
        with self._undo_if_failed([memory]):
            super().add(memory)
            with self._transaction():
                if memory.superseded_by is not None:
                    self._check_stored(memory.superseded_by)
                self._insert([(memory, row)])
        self._saved[memory.id] = row
        return memory

    def extend(self, memories) -> list[Memory]:
        """Add a batch of memories in one transaction: all of them, or none.

        Checked exactly as MemoryStore.extend checks (a memory may be superseded by one
        later in the batch), then written with one executemany: 100,000 memories take
        seconds, where as many add() calls, each its own transaction and fsync, take minutes.
        """
        if isinstance(memories, (str, bytes, dict, Memory)):
            return super().extend(memories)  # raises its TypeError
        batch = list(memories)
        given = [m for m in batch if isinstance(m, Memory)]
        for memory in given:
            self._row(memory)  # the limits, before any SQL
        with self._undo_if_failed(given), self.transaction():
            with self._in_memory_only():
                super().extend(batch)  # every check first, then adds and links in memory
            pairs = [(m, snapshot(m)) for m in batch]  # with their links now
            if pairs:
                with self._transaction():
                    for target in {m.superseded_by for m in batch} - {m.id for m in batch}:
                        if target is not None:
                            self._check_stored(target)
                    self._insert(pairs)
            self._saved.update((m.id, row) for m, row in pairs)
        return batch

    @contextmanager
    def _in_memory_only(self) -> Iterator[None]:
        """Inside: self.add and self.supersede change this process's memories only.

        subtle: MemoryStore.extend calls self.add and self.supersede; instance attributes
        shadow the methods of the class, so for this block they skip the database, and
        extend writes the whole batch at the end, with one statement.
        """
        self.add = lambda memory: MemoryStore.add(self, memory)
        self.supersede = lambda old_id, new_id: MemoryStore.supersede(self, old_id, new_id)
        try:
            yield
        finally:
            del self.add, self.supersede

    def remove(self, memory_id: str) -> Memory:
        """Take a memory out of the store and delete its row, unless another row now names it."""
        memory = self.get(memory_id)
        with self._undo_if_failed([memory]):
            super().remove(memory_id)
            with self._transaction():
                rows = self._run(  # it and the rows naming it, locked in id order
                    "SELECT id, superseded_by FROM memories WHERE user_id = ? "
                    f"AND (id = ? OR superseded_by = ?) ORDER BY id{self.row_lock}",
                    (self.user_id, memory_id, memory_id),
                ).fetchall()
                citing = [other for other, link in rows if link == memory_id]
                if citing:
                    raise ValueError(
                        f"memory {memory_id!r} replaced {', '.join(map(repr, citing))} in the "
                        f"{self.medium} {self._where()} (another process linked them); reopen the "
                        "store to see the link, and keep it so their superseded_by stays valid"
                    )
                self._delete(memory_id)
        self._saved.pop(memory_id, None)
        return memory

    def supersede(self, old_id: str, new_id: str) -> None:
        """Mark `old_id` as replaced by `new_id`, checked against both rows as they are now.

        Both rows are locked (in id order: two processes cannot deadlock) and must be stored
        and live: another process may have superseded or removed either since this store
        read them. Otherwise ValueError, and neither the database nor this store changes; so
        two stores can never build a cycle (A: m1 -> m2, then a stale B: m2 -> m1 is
        refused) or relink a memory.
        """
        old = self.get(old_id)
        with self._undo_if_failed([old]):
            super().supersede(old_id, new_id)
            with self._transaction():
                links = self._run(
                    "SELECT id, superseded_by FROM memories WHERE user_id = ? "
                    f"AND id IN (?, ?) ORDER BY id{self.row_lock}",
                    (self.user_id, old_id, new_id),
                ).fetchall()
                self._check_live(dict(links), new_id, "The replacement")
                self._check_live(dict(links), old_id, "The memory to supersede")
                self._write(old, snapshot(old), ("superseded_by",))

    def _check_live(self, links: dict, memory_id: str, role: str) -> None:
        """Raise unless `links` (id -> superseded_by, as stored) holds `memory_id`, live."""
        if memory_id not in links:
            raise ValueError(
                f"{role}, memory {memory_id!r} is no longer stored in {self._where()} (removed "
                "by another process?); nothing was changed: reopen the store to see its "
                "current memories"
            )
        if links[memory_id] is not None:
            raise ValueError(
                f"{role}, memory {memory_id!r} was already superseded by {links[memory_id]!r} "
                f"in {self._where()} (by another process, after this store read it); nothing "
                "was changed: reopen the store and supersede the current version instead"
            )

    def next_id(self, prefix: str = "m") -> str:
        """An id no process has used for this user: reserved in the database's counter."""
        check_text(prefix, "prefix", "a non-empty string (ids are prefix + number, e.g. m1)")
        check_name(prefix, "prefix")
        key = (self.user_id, prefix)
        with self._transaction():
            self._run("INSERT INTO id_counters VALUES (?, ?, 0) ON CONFLICT DO NOTHING", key)
            (stored,) = self._run(  # locked: two processes take turns
                f"SELECT last_number FROM id_counters WHERE user_id = ? AND prefix = ?"
                f"{self.row_lock}",
                key,
            ).fetchone()
            n = max(stored, len(self)) + 1
            taken = "SELECT 1 FROM memories WHERE user_id = ? AND id = ?"
            while (
                f"{prefix}{n}" in self
                or self._run(taken, (self.user_id, f"{prefix}{n}")).fetchone()
            ):
                n += 1
            self._run(
                "UPDATE id_counters SET last_number = ? WHERE user_id = ? AND prefix = ?", (n, *key)
            )
        return f"{prefix}{n}"

    def reread(self, memory_id: str) -> Memory | None:
        """A fresh copy of `memory_id` as the database holds it now (None if it is gone there).

        Inside store.transaction() the row stays as read until the block ends (SQLite locks
        the file, PostgreSQL the row): what a multi-step change checks before acting.
        """
        check_name(
            check_text(memory_id, "memory_id", "a memory's id, a non-empty string"), "memory_id"
        )
        with self._transaction():
            row = self._run(
                f"SELECT {', '.join(self.columns)} FROM memories WHERE user_id = ? AND id = ?"
                f"{self.row_lock}",
                (self.user_id, memory_id),
            ).fetchone()
        return None if row is None else self._memory_from_row(row)

    # --- changes made in place ---------------------------------------------------------------

    def unsaved(self, fields: tuple[str, ...] = FIELDS) -> list[Memory]:
        """Memories changed in place (e.g. touched by retrieval) since they were saved.

        `fields` narrows the comparison, e.g. to what the SQL score reads: comparing
        ("last_accessed",) is far cheaper than a full snapshot of every memory.
        """
        if tuple(fields) == FIELDS:
            return [m for m in self._memories.values() if snapshot(m) != self._saved.get(m.id)]
        at = [(name, FIELDS.index(name)) for name in fields if name != "metadata"]
        return [  # `is not` first: a vector compared with itself would be read value by value
            m
            for m in self._memories.values()
            if (saved := self._saved.get(m.id)) is None
            or any(getattr(m, n) is not saved[i] and getattr(m, n) != saved[i] for n, i in at)
        ]

    def save(self, only=None) -> int:
        """Write every field changed in place since the last save, in one transaction.

        Returns how many memories were written (0 when nothing changed). only: the memories
        to look at (e.g. the k a recall touched), instead of all. A memory that another
        process removed meanwhile stays removed: its UPDATE finds no row.
        """
        if only is None:
            changed = self.unsaved()
        else:
            changed = [m for m in only if snapshot(m) != self._saved.get(m.id)]
        rows = {m.id: self._row(m) for m in changed}  # the limits, before any SQL
        if any(rows[m.id][i] != self._saved[m.id][i] for m in changed for i in LINKS):
            self._check_links("save")  # an in-place edit must not write a broken link
        if changed:
            with self._transaction():
                # in id order, as supersede and remove lock: two processes saving the same
                # memories touched in different orders would otherwise deadlock
                for memory in sorted(changed, key=lambda m: m.id):
                    self._write(memory, rows[memory.id])
        return len(changed)

    def _write(self, memory: Memory, new: tuple, names: tuple[str, ...] = FIELDS) -> None:
        """UPDATE the `names` fields that differ from the row (inside a transaction)."""
        old = self._saved[memory.id]
        changed = [name for name in names if new[FIELDS.index(name)] != old[FIELDS.index(name)]]
        if changed:
            columns = dict(zip(FIELDS, self._to_columns(new)))
            self._run(
                "UPDATE memories SET "
                + ", ".join(f"{name} = ?" for name in changed)
                + " WHERE user_id = ? AND id = ?",
                [columns[name] for name in changed] + [self.user_id, memory.id],
            )
        self._saved[memory.id] = tuple(
            new[i] if name in names else old[i] for i, name in enumerate(FIELDS)
        )

    # --- rows ----------------------------------------------------------------------------------

    def _row(self, memory: Memory) -> tuple:
        """snapshot(memory), refused unless every backend can keep it (storage/limits.py)."""
        row = snapshot(memory)  # refuses metadata that JSON cannot hold
        check_row(memory.id, dict(zip(FIELDS, row)))
        return row

    def _check_stored(self, memory_id: str) -> None:
        """Raise unless the database holds `memory_id`, locked: never link to a missing row."""
        stored = f"SELECT 1 FROM memories WHERE user_id = ? AND id = ?{self.row_lock}"
        if self._run(stored, (self.user_id, memory_id)).fetchone() is None:
            raise ValueError(
                f"memory {memory_id!r} is no longer stored in {self._where()} (removed by "
                "another process?); reopen the store to see its current memories"
            )

    def _insert(self, pairs: list[tuple[Memory, tuple]]) -> None:
        """INSERT (memory, snapshot) pairs as new rows, then claim the user's model."""
        marks = ", ".join("?" * len(self.columns))
        inserted = self._run_many(
            self._sql(
                f"INSERT INTO memories ({', '.join(self.columns)}) VALUES ({marks}) "
                "ON CONFLICT DO NOTHING"
            ),
            self._new_rows(pairs),
        )
        if inserted != len(pairs):  # an id another process took after this store read its rows
            which = f"with id {pairs[0][0].id!r}" if len(pairs) == 1 else "of this batch"
            raise ValueError(
                f"a memory {which} is already stored for user {self.user_id!r} in "
                f"{self._where()} (added by another process?); nothing was added: reopen the "
                "store to see it"
            )
        self._claim_model()

    def _claim_model(self) -> None:
        """Record this user's embedding model, or refuse if another process recorded another."""
        row = self._user_row()
        marks = ", ".join("?" * len(row))
        self._run(f"INSERT INTO users VALUES ({marks}) ON CONFLICT DO NOTHING", row)
        stored = self._run(
            "SELECT embedding_model, dimension FROM users WHERE user_id = ?", (self.user_id,)
        ).fetchone()
        if tuple(stored) != (self.embedding_model, self.dimension):
            raise EmbeddingModelMismatch(
                f"{self._where()}: user {self.user_id!r}'s memories are {stored[1]}-dimensional "
                f"vectors of {stored[0] or 'hand-made vectors'!r}, not {self.dimension}-"
                f"dimensional ones of {self.embedding_model or 'hand-made vectors'!r}"
            )

    # --- closing ----------------------------------------------------------------------------

    def close(self) -> None:
        """Save what changed in place, then close the connection. Safe to call twice."""
        if self._db is not None:
            try:
                self.save()
            finally:
                self._db.close()
                self._db = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self._where()!r}, user_id={self.user_id!r}, "
            f"{len(self)} memories, embedding_model={self.embedding_model!r})"
        )
