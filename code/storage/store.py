"""The store written once: a MemoryStore whose database is the source of truth.

PersistentMemoryStore (storage/sqlite_store.py) and PostgresMemoryStore
(storage/postgres_store.py) are this class with a dialect each. The algorithm is here:

  - opening reads the user's row only (model, dimension): O(1), whatever the user holds;
  - iterating streams the user's rows in the stream's order, BATCH at a time (each batch
    one short read: a write made inside the learner's loop never waits on an open cursor);
    len(), `in` and get() ask the database. Each memory handed out is kept (`_memories`,
    by id, with the values its row held, `_saved`), so the retriever's in-place touches
    (last_accessed) are what save() writes: a memory tells the store before a field of it
    is assigned (memory_store.Memory), and save() looks only at those (`_dirty`);
  - the ids of the rows this store object wrote are kept, in order (the last 10,000 at
    most): rows_changed_since(mark) names them, so a cache of the rows that knows no other
    connection wrote since (scale/sqlite_retrieval.py) reads those rows only;
  - a row read again that another process changed updates the memory handed out, except
    the fields this process changed and has not saved (its row's version tells: SQLite's
    checksum, PostgreSQL's xmin), so recall sees what others superseded;
  - every write is compare-and-set: an UPDATE names the values this store last read of the
    fields it writes (`... AND superseded_by IS ?`), so a stale process is refused with
    StaleMemory, naming the memory, instead of undoing another's change or writing a link
    that breaks the user's history; last_accessed, a recall's time, is the exception
    (two recalls at once are both right: the later save wins);
  - add, extend, remove, supersede, next_id are one transaction each, checked against
    the rows as they are now, locked (PostgreSQL's FOR UPDATE; SQLite locks the file);
  - `with store.transaction():` is one transaction of the database, each step a
    savepoint; what it costs is what it touches: a journal of the memories it changed
    (base/store_base.py), and the links of those only are checked, in the database;
  - the limits of storage/limits.py are checked, and secrets redacted (base/redaction.py),
    before any SQL, so both backends refuse the same values with the same error and
    neither keeps a key or a password.

The SQL is written once, with ? for each value and the tables by name. A dialect supplies
what differs (the methods under "the dialect" below): its placeholder, its row lock,
null-safe equality, a row's version, how a transaction begins and what follows a commit,
how a row becomes a Memory and back, and which of its errors become which of ours.

Deliberately left out: connections, files, servers, schemas and any backend's own errors;
a full check of every link at open (store.check() does it on demand: the writes above
keep the links whole, so opening need not read every row).
"""

from __future__ import annotations

import copy
import gc
import json
import weakref
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from typing import NamedTuple

from base.links import link_problems
from base.redaction import redactor
from base.validation import check_text
from memory_store import EmbeddingModelMismatch, Memory, MemoryStore, UnknownMemory
from storage.limits import check_name, check_row, shown
from storage.rows import FIELDS, snapshot

LINK = FIELDS.index("superseded_by")
LINKS = (LINK, FIELDS.index("metadata"))  # what the link rules read
BATCH = 1_000  # rows a stream reads at a time: bounded memory, few round trips
CHANGED_IDS_KEPT = 10_000  # ids of rows written, kept for rows_changed_since (then halved)


class StaleMemory(ValueError):
    """Another writer changed or removed a memory after this store read it; nothing was saved."""

    def __init__(self, message: str, memory_id: str, removed: bool) -> None:
        super().__init__(message)
        self.memory_id, self.removed = memory_id, removed


class RefusedSave(ValueError):
    """save() refused a change no backend may keep (a broken link, a value past a limit);
    the change is kept aside in store.refused, and the store goes on."""

    def __init__(self, message: str, memory_ids: list[str]) -> None:
        super().__init__(message)
        self.memory_ids = memory_ids


class Refused(NamedTuple):
    """A change save() refused: the memory as it was refused (a copy, in no store), and why."""

    memory: Memory
    reason: str


class DatabaseStore(MemoryStore):
    """A MemoryStore kept in a database, one user a store (subclassed by a dialect)."""

    placeholder = "?"  # how the dialect's SQL marks a value
    row_lock = ""  # appended to a SELECT of rows about to change: " FOR UPDATE"
    same = " IS "  # null-safe equality: PostgreSQL's " IS NOT DISTINCT FROM "
    version = "NULL"  # a column that changes whenever its row does: "checksum", "xmin::text"
    by_seq = "memories"  # the table as a stream reads it, by seq ranges
    columns: tuple[str, ...] = ()  # a memory's row as _memory_from_row and _new_rows see it
    refusal: type[Exception] = RuntimeError  # the backend's own error: a store it cannot use
    medium = "database"  # what _where() names, in messages: "the file memories.sqlite3"
    _db = None  # the open connection, None once closed

    def __init__(self, embedding_model: str | None = None, *, user_id: str = "default") -> None:
        check_name(check_text(user_id, "user_id"), "user_id")  # never None: one user a store
        super().__init__(embedding_model, user_id=user_id)
        if embedding_model is not None:
            check_name(embedding_model, "embedding_model")
        # subtle: held weakly, so a scan over every memory keeps none of them alive; a memory
        # with unsaved changes is held by _dirty (and a block's journal) until it is saved.
        # When a memory dies, what was kept of it (its row's values, vector included) goes too.
        self._memories = _Held(weakref.WeakMethod(self._collected))
        self._saved: dict[str, tuple] = {}  # id -> the FIELDS values of its row, as last read
        self._versions: dict[str, object] = {}  # id -> its row's version then (None: unknown)
        self._dirty: dict[str, Memory] = {}  # memories assigned a field since their last save
        self.refused: dict[str, Refused] = {}  # id -> its last change save() refused
        self._counting: list | None = None  # this transaction's change to position_counts
        self._block_open = False  # inside store.transaction(): one transaction for the block
        self._writing = False  # inside a write transaction: reads lock the rows they check
        # the ids this write transaction inserted (a list, so a failed step drops its own)
        self._inserted: list[str] = []
        self._inserted_ids: set[str] = set()
        self._id_at = self.columns.index("id")
        self._changed_ids: list[str] = []  # ids of rows this store wrote, in order (capped)
        self._changed_base = 0  # how many ids were dropped from the front of _changed_ids

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

    def _error(self, error: BaseException, read_only: bool) -> Exception | None:
        """The error to raise instead of the backend's `error`; None: raise it as it is."""
        return None

    def _version_of(self, row: tuple) -> object:
        """The version of a row _new_rows made, if the dialect knows it before the INSERT."""
        return None

    def _counts_table(self, writing: bool) -> bool:
        """Whether the database has the position_counts table (SQLite makes it when writing)."""
        return False

    def _vector_of(self, stored) -> object:
        """An embedding as stored in its column, as a sequence of numbers."""
        return stored

    def _delete(self, memory_id: str) -> int:
        """DELETE this user's row `memory_id` (inside a transaction): how many rows went."""
        return self._run(
            "DELETE FROM memories WHERE user_id = ? AND id = ?", (self.user_id, memory_id)
        ).rowcount

    # --- SQL and transactions -------------------------------------------------------------

    def _sql(self, text: str) -> str:
        return text.replace("?", self.placeholder)  # the SQL here has no literal "?"

    def _run(self, text: str, params=()):
        """Execute one statement of the shared SQL; its cursor."""
        return self._db.execute(self._sql(text), params)

    def _select(self, where: str, lock: bool = False, table: str = "memories") -> str:
        """SELECT seq, version, `columns` of this user's rows `where` (? is the user)."""
        return (
            f"SELECT seq, {self.version}, {', '.join(self.columns)} FROM {table} "
            f"WHERE user_id = ? AND {where}{self.row_lock if lock and self._writing else ''}"
        )

    @contextmanager
    def _transaction(self, read_only: bool = False) -> Iterator[None]:
        """One transaction of the database; inside store.transaction(), one savepoint of it."""
        if self._db is None:
            raise ValueError(f"the store for {self._where()} is closed: open it again")
        nested = self._block_open or self._transaction_open()
        if self._block_open and not self._transaction_open():
            # subtle: SQLite ends a transaction itself after some I/O errors; a SAVEPOINT
            # would then begin a new one, and its RELEASE commit half of the block
            raise self.refusal(
                f"{self._where()} ended this block's transaction after an earlier error; "
                "nothing more of the block is written, and the block is rolled back"
            )
        pending = None if self._counting is None else list(self._counting)
        inserted = len(self._inserted)
        try:
            if nested:
                self._run("SAVEPOINT step")  # a failed step is undone alone: the block goes on
            else:
                self._begin(read_only)
                self._writing = not read_only
                self._counting = None
                self._forget_inserted(0)
            yield
            if not nested and self._counting is not None:
                self._write_counts()  # last: every row lock this transaction takes comes first
            self._run("RELEASE SAVEPOINT step" if nested else "COMMIT")
        except BaseException as error:
            self._counting = pending if nested else None
            self._forget_inserted(inserted if nested else 0)
            if self._transaction_open():
                with suppress(Exception):  # the first error says more than a failed rollback
                    self._run("ROLLBACK TO SAVEPOINT step" if nested else "ROLLBACK")
            mapped = self._error(error, read_only)
            if mapped is None:
                raise
            raise mapped from None
        finally:
            if not nested:
                self._writing = False
                self._counting = None
                self._forget_inserted(0)
        if not (nested or read_only):
            self._after_commit()

    def _forget_inserted(self, keep: int) -> None:
        """Keep only the first `keep` ids of this transaction's inserts (a step rolled back)."""
        for memory_id in self._inserted[keep:]:
            self._inserted_ids.discard(memory_id)
        del self._inserted[keep:]

    @contextmanager
    def _write_block(self) -> Iterator[None]:
        """store.transaction(): the whole block is one transaction of the database."""
        with self._transaction():
            self._block_open = True
            try:
                yield
            finally:
                self._block_open = False

    # --- what this process keeps of each memory it handed out --------------------------------

    def _changing(self, memory: Memory) -> None:
        if self._memories.get(memory.id) is memory:
            self._note(memory)
            self._dirty[memory.id] = memory  # save() looks at it

    def _kept(self, memory: Memory) -> tuple:
        return self._saved.get(memory.id), self._versions.get(memory.id)

    def _restore_kept(self, memory: Memory, held: bool, extra: tuple) -> None:
        if held:
            self._saved[memory.id], self._versions[memory.id] = extra
            self._dirty[memory.id] = memory  # its fields are as before: save() compares
        elif memory.id not in self._memories:
            self._forget(memory.id)

    def _wrote_rows(self, memory_ids) -> None:
        """Inside a write: this store inserted, updated or deleted the rows of `memory_ids`
        (noted before the commit: a rolled-back write is noted too, which costs only a read)."""
        self._changed_ids.extend(memory_ids)
        if len(self._changed_ids) > CHANGED_IDS_KEPT:
            cut = len(self._changed_ids) // 2
            del self._changed_ids[:cut]
            self._changed_base += cut

    def rows_changed_since(self, mark: int | None) -> tuple[int, list[str] | None]:
        """(a new mark, the ids of the rows this store object wrote since `mark`), for a cache of
        the rows that knows no other connection wrote (SQLite's data_version): it reads those
        rows only. The ids are None when `mark` is None or older than what is kept (read all)."""
        now = self._changed_base + len(self._changed_ids)
        if mark is None or mark < self._changed_base:
            return now, None
        return now, self._changed_ids[mark - self._changed_base :]

    def _forget(self, memory_id: str) -> None:
        """Stop holding `memory_id` (gone from the database): never recalled or saved again."""
        memory = self._memories.pop(memory_id, None)
        if memory is not None:
            self._unwatch(memory)
        for kept in (self._saved, self._versions, self._dirty):
            kept.pop(memory_id, None)

    @contextmanager
    def _undo_if_failed(self, memories: list[Memory]) -> Iterator[None]:
        """If the database refuses a change, this process's store goes back as it was.

        Kept is what the change can touch, never a copy of the store: the store's model and
        dimension, and each of `memories` as it is now.
        """
        kept = self.embedding_model, self.dimension
        before = [
            (m, {**m.__dict__, "metadata": dict(m.metadata)}, self._holds(m), self._kept(m))
            for m in memories
        ]
        try:
            yield
        except BaseException:
            self.embedding_model, self.dimension = kept
            for memory, fields, held, extra in before:
                memory.__dict__.update(fields)  # subtle: bypasses validation on purpose
                memory._adopt_metadata()
                if held and not self._holds(memory):
                    self._memories[memory.id] = memory
                elif not held and self._holds(memory):
                    del self._memories[memory.id]
                self._restore_kept(memory, held, extra)
            raise

    def _from_row(self, row: tuple) -> Memory:
        """The memory of a row (seq, version, *columns): the one handed out before, if any.

        A row whose version is the one last read is not read again. Otherwise the memory
        handed out takes the row's values, except fields changed here and not yet saved.
        """
        version, columns = row[1], row[2:]
        memory_id = columns[self._id_at]
        if self.dimension is None:  # opened before this user's first memory: read its model now
            self._read_model(self.embedding_model)
        held = self._memories.get(memory_id)
        if held is not None and version is not None and self._versions.get(memory_id) == version:
            return held
        fresh = self._memory_from_row(columns)
        if fresh.embedding_model != self.embedding_model:
            raise self._inconsistent(
                f"memory {memory_id!r} was embedded with {fresh.embedding_model!r}, but "
                f"the others with {self.embedding_model!r}"
            )
        if held is None:
            self._prune()
            self._memories[memory_id] = fresh
            self._saved[memory_id], self._versions[memory_id] = snapshot(fresh), version
            self._watch(fresh)
            return fresh
        base, mine, theirs = self._saved[memory_id], snapshot(held), snapshot(fresh)
        kept = []
        for i, name in enumerate(FIELDS):
            if mine[i] == base[i]:  # not changed here: the database's value is current
                if theirs[i] != mine[i]:
                    object.__setattr__(held, name, getattr(fresh, name))
                    held._adopt_metadata()  # fresh's metadata, watched for held now
                kept.append(theirs[i])
            else:  # changed here: save() checks it against what was read before
                kept.append(base[i])
        self._saved[memory_id], self._versions[memory_id] = tuple(kept), version
        return held

    def _collected(self, memory_id: str) -> None:
        """A memory handed out was collected: what was kept of its row goes too (its vector
        among it), unless another memory of that id is held or it has unsaved changes."""
        if memory_id not in self._memories and memory_id not in self._dirty:
            self._saved.pop(memory_id, None)
            self._versions.pop(memory_id, None)

    def _prune(self) -> None:
        """Forget what was kept of memories no longer held (nobody refers to them): amortised
        O(1) a memory, so a scan's bookkeeping does not outlive the memories it read."""
        if len(self._saved) > 2 * len(self._memories) + 256:
            # subtle: list() copies the keys in one step; a collection inside the loop may
            # call _collected, which changes _saved
            for memory_id in [i for i in list(self._saved) if i not in self._memories]:
                if memory_id not in self._dirty:
                    self._saved.pop(memory_id, None)
                    self._versions.pop(memory_id, None)

    def _lookup(self, memory_id: str) -> Memory | None:
        """The memory `memory_id` as the database holds it now (locked inside a write).

        A row this write transaction inserted, of a memory not changed since, is that
        memory: nobody else sees the row before the commit, so it is not read again (a
        commit's link check of an extend of 10,000 memories would read them all, one
        statement each, inside the transaction).
        """
        if memory_id in self._inserted_ids and memory_id not in self._dirty:
            held = self._memories.get(memory_id)
            if held is not None:
                return held
        with self._transaction(read_only=True):
            row = self._run(self._select("id = ?", lock=True), (self.user_id, memory_id)).fetchone()
            memory = None if row is None else self._from_row(row)
        if memory is None and memory_id not in self._dirty:
            self._forget(memory_id)  # removed by another process
        return memory

    def _link_view(self) -> Mapping[str, Memory]:
        return _Rows(self)

    def _has_memories(self) -> bool:
        return self.dimension is not None  # the users row: set by the first memory ever

    # --- position counts: the hybrid's document frequencies, kept by each write --------------
    #
    # position_counts holds, per user, how many of its memories have a non-zero value at
    # each position of the embedding (int32s), and the (highest seq, row count) they were
    # counted at. Each write adds its change in its own transaction, last (so the counts
    # row is always the last lock a transaction takes); a reader trusts the counts only
    # while that stamp is the user's rows_stamp(), so a write by code that kept no counts
    # (an older release) makes them be counted again, never read wrong.

    def _count(self, added=(), removed=(), rows: int | None = None) -> None:
        """Inside a write: these embeddings were added to and removed from the user's rows."""
        import numpy as np

        if not self._counting:
            self._counting = [0, 0]
        delta = self._counting[0]
        for vectors, sign in ((added, 1), (removed, -1)):
            for start in range(0, len(vectors), BATCH):  # bounded: 1,000 vectors at a time
                chunk = np.asarray(vectors[start : start + BATCH], dtype=np.float64)
                if chunk.size:
                    delta = delta + sign * np.count_nonzero(chunk, axis=0)
        change = len(added) - len(removed) if rows is None else rows
        self._counting = [delta, self._counting[1] + change]

    def _write_counts(self) -> None:
        """Add this transaction's change to the user's counts row (inside it, before COMMIT)."""
        import numpy as np

        delta, change = self._counting
        self._counting = None
        if self.dimension is None or not self._counts_table(writing=True):
            return
        row = self._run(
            f"SELECT last_seq, documents, counts FROM position_counts WHERE user_id = ?"
            f"{self.row_lock}",
            (self.user_id,),
        ).fetchone()
        (last,) = self._run(
            "SELECT COALESCE(MAX(seq), 0) FROM memories WHERE user_id = ?", (self.user_id,)
        ).fetchone()
        if row is None:
            (rows,) = self._run(
                "SELECT count(*) FROM memories WHERE user_id = ?", (self.user_id,)
            ).fetchone()
            if rows != change:  # rows written before counts were kept: counted when read
                return
            counts = np.zeros(self.dimension, dtype=np.int64) + delta
            self._run(
                "INSERT INTO position_counts VALUES (?, ?, ?, ?)",
                (self.user_id, last, rows, _packed(counts)),
            )
            return
        counts = np.frombuffer(bytes(row[2]), dtype="<i4").astype(np.int64)
        if len(counts) != self.dimension:
            return
        self._run(
            "UPDATE position_counts SET last_seq = ?, documents = ?, counts = ? WHERE user_id = ?",
            (last, row[1] + change, _packed(counts + delta), self.user_id),
        )

    def position_counts(self):
        """(how many memories, for each position of the embedding how many of them have a
        non-zero value there) for this user, as the database keeps them; None when closed or
        when the database keeps none (a store file opened read-only before any write).

        One short read while the counts are current; counted again from the rows (one
        pass, BATCH rows at a time) when a write made by code that kept none left them out
        of step. What the hybrid embedding reads for its query side (embeddings/hybrid.py).
        """
        import numpy as np

        if self._db is None or self.dimension is None:
            return None
        with self._transaction(read_only=True):
            if not self._counts_table(writing=False):
                kept = None
            else:
                kept = self._run(
                    "SELECT last_seq, documents, counts FROM position_counts WHERE user_id = ?",
                    (self.user_id,),
                ).fetchone()
            stamp = self._run(
                "SELECT COALESCE(MAX(seq), 0), count(*) FROM memories WHERE user_id = ?",
                (self.user_id,),
            ).fetchone()
        if kept is not None and (kept[0], kept[1]) == tuple(stamp):
            counts = np.frombuffer(bytes(kept[2]), dtype="<i4")
            if len(counts) == self.dimension:
                return int(kept[1]), counts
        return self._count_again()

    def _count_again(self):
        """Count every row of this user again and keep the counts (one write transaction)."""
        import numpy as np

        try:
            with self._transaction():
                if not self._counts_table(writing=True):
                    return None
                counts, rows, after = np.zeros(self.dimension, dtype=np.int64), 0, 0
                while True:
                    batch = self._run(
                        f"SELECT seq, embedding FROM memories WHERE user_id = ? AND seq > ? "
                        f"ORDER BY seq LIMIT {BATCH}",
                        (self.user_id, after),
                    ).fetchall()
                    if not batch:
                        break
                    vectors = [self._vector_of(v) for _, v in batch]
                    counts += np.count_nonzero(np.asarray(vectors, dtype=np.float64), axis=0)
                    rows, after = rows + len(batch), batch[-1][0]
                self._run(
                    "INSERT INTO position_counts VALUES (?, ?, ?, ?) ON CONFLICT (user_id) DO "
                    "UPDATE SET last_seq = excluded.last_seq, documents = excluded.documents, "
                    "counts = excluded.counts",
                    (self.user_id, after, rows, _packed(counts)),
                )
        except self.refusal:
            return None  # a file that cannot be written: the caller counts for itself
        return rows, counts.astype(np.int32)

    # --- reading: the database answers -----------------------------------------------------

    def __iter__(self) -> Iterator[Memory]:
        """This user's memories in the stream's order, read BATCH rows at a time.

        The rows stored when the loop begins (as MemoryStore's snapshot: adding inside the
        loop is safe); each memory is the one handed out before, if any. A closed store
        iterates what it held (e.g. to export them after its file was deleted).
        """
        if self._db is None:
            yield from super().__iter__()
            return
        yield from self._stream(0, self._last_seq())

    def _stream(self, after: int, last: int) -> Iterator[Memory]:
        """The memories of rows with after < seq <= last, BATCH rows a read."""
        while after < last:
            with self._transaction(read_only=True):
                rows = self._run(
                    self._select(
                        f"seq > ? AND seq <= ? ORDER BY seq LIMIT {BATCH}", table=self.by_seq
                    ),
                    (self.user_id, after, last),
                ).fetchall()
                batch = [self._from_row(row) for row in rows]
            if not rows:
                return
            after = rows[-1][0]
            yield from batch
            batch = None  # subtle: held by nothing here, so the prune below can drop them
        self._prune()  # the memories of a scan nobody kept: their snapshots go too

    def rows_stamp(self) -> tuple[int, int] | None:
        """(the highest seq, how many rows) of this user now: one short read, so a cache of
        something counted over the rows (the hybrid's word frequencies) can tell whether
        rows were added (read only those: added_after) or removed (count again). None
        when closed. A field edited in place changes neither number."""
        if self._db is None:
            return None
        with self._transaction(read_only=True):
            (last, count) = self._run(
                "SELECT COALESCE(MAX(seq), 0), count(*) FROM memories WHERE user_id = ?",
                (self.user_id,),
            ).fetchone()
        return int(last), int(count)

    def added_after(self, seq: int) -> Iterator[Memory]:
        """The memories of rows whose seq is above `seq` (from rows_stamp), in order."""
        yield from self._stream(seq, self._last_seq())

    def _last_seq(self) -> int:
        """The highest seq of this user's rows now (0 for none): where a stream stops."""
        with self._transaction(read_only=True):
            (last,) = self._run(
                "SELECT COALESCE(MAX(seq), 0) FROM memories WHERE user_id = ?", (self.user_id,)
            ).fetchone()
        return last

    def __len__(self) -> int:
        if self._db is None:
            return super().__len__()
        with self._transaction(read_only=True):
            (count,) = self._run(
                "SELECT count(*) FROM memories WHERE user_id = ?", (self.user_id,)
            ).fetchone()
        return count

    def __contains__(self, memory_id: object) -> bool:
        if not isinstance(memory_id, str):
            return False
        if self._db is None:
            return super().__contains__(memory_id)
        with self._transaction(read_only=True):
            return (
                self._run(
                    "SELECT 1 FROM memories WHERE user_id = ? AND id = ?", (self.user_id, memory_id)
                ).fetchone()
                is not None
            )

    def get(self, memory_id: str) -> Memory:
        """The memory named `memory_id` as the database holds it now; KeyError naming it."""
        check_text(memory_id, "memory_id", "a memory's id, a non-empty string")
        if self._db is None:  # closed: what it held
            return super().get(memory_id)
        known = memory_id in self._memories
        memory = self._lookup(memory_id)
        if memory is None and known:
            raise UnknownMemory(
                f"memory {memory_id!r} is no longer stored in {self._where()} (another process "
                "removed it after this store read it)"
            )
        if memory is None:
            raise UnknownMemory(f"no memory with id {memory_id!r} in the store ({self._where()})")
        self._note(memory)
        return memory

    def check(self) -> None:
        """Read every memory of this user and check every link (base/links.py), or raise.

        Opening does not: the writes keep the links whole. This finds what SQL by hand, or
        another program, broke: refusal names the ids, like a damaged row's checksum.
        """
        problems = link_problems({m.id: m for m in self})
        if problems:
            raise self._inconsistent("; ".join(problems[:3]) + ("; ..." if problems[3:] else ""))

    # --- opening --------------------------------------------------------------------------

    def _open(self, db, embedding_model: str | None) -> None:
        """Read this user's row through the new connection `db`; close it on failure."""
        self._db = db
        try:
            self._load(embedding_model)
        except BaseException:
            db.close()
            self._db = None
            raise

    def _load(self, embedding_model: str | None) -> None:
        with self._transaction(read_only=True):  # the user's row only: O(1), however many
            if self._read_model(embedding_model):
                return
            if self._run(
                "SELECT 1 FROM memories WHERE user_id = ? LIMIT 1", (self.user_id,)
            ).fetchone():
                raise self._inconsistent("they have no row in the users table (their model's)")

    def _read_model(self, embedding_model: str | None) -> bool:
        """Take the model and dimension of this user's row, if it has one (inside a read)."""
        user = self._read_user()
        if user is None:
            return False
        if embedding_model is not None and embedding_model != user[0]:
            raise EmbeddingModelMismatch(
                f"{self._where()}: the memories of user {self.user_id!r} were embedded "
                f"with {user[0] or 'hand-made vectors'!r}, not {embedding_model!r}. Open it "
                "with the same embedding model (or none to accept the stored one)."
            )
        self.embedding_model, self.dimension = user
        return True

    def _inconsistent(self, problem: str) -> Exception:
        return self.refusal(
            f"{self._where()} is inconsistent, so nothing was changed: in the memories of "
            f"user {self.user_id!r}, {problem}"
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
        clean = redactor()
        for memory in given:
            self._row(memory, clean)  # the limits and the redaction, before any SQL
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
        return batch

    @contextmanager
    def _in_memory_only(self) -> Iterator[None]:
        """Inside: self.add, self.supersede and self.get see this process's memories only.

        subtle: MemoryStore.extend calls self.add and self.supersede; instance attributes
        shadow the methods of the class, so for this block they skip the database, and
        extend writes the whole batch at the end, with one statement.
        """
        self.add = lambda memory: MemoryStore.add(self, memory)
        self.supersede = lambda old_id, new_id: MemoryStore.supersede(self, old_id, new_id)
        self.get = lambda memory_id: (  # the batch first: it is not stored yet
            MemoryStore.get(self, memory_id)
            if memory_id in self._memories
            else DatabaseStore.get(self, memory_id)
        )
        try:
            yield
        finally:
            del self.add, self.supersede, self.get

    def remove(self, memory_id: str) -> Memory:
        """Take a memory out of the store and delete its row, unless another row names it."""
        memory = self.get(memory_id)
        with self._undo_if_failed([memory]):
            del self._memories[memory_id]
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
                        f"{self.medium} {self._where()}; remove those first, or keep it so "
                        "their superseded_by link stays valid"
                    )
                self._wrote_rows([memory_id])
                deleted = self._delete(memory_id)
                if deleted:
                    self._count(removed=[memory.embedding])
                if not deleted:
                    raise StaleMemory(
                        f"memory {memory_id!r} is no longer stored in {self._where()} (another "
                        "process removed it after this store read it); nothing was changed",
                        memory_id,
                        removed=True,
                    )
        self._forget(memory_id)
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
                saved = self._write(old, snapshot(old), ("superseded_by",))
        self._saved[old.id], self._versions[old.id] = saved, None

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
                "was changed: supersede the current version instead"
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
            while f"{prefix}{n}" in self:
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

        Only memories assigned a field since their last save are compared; `fields` narrows
        the comparison further, e.g. to what the SQL score reads.
        """
        if tuple(fields) == FIELDS:
            return [m for m in self._dirty.values() if snapshot(m) != self._saved.get(m.id)]
        at = [(name, FIELDS.index(name)) for name in fields if name != "metadata"]
        return [  # `is not` first: a vector compared with itself would be read value by value
            m
            for m in self._dirty.values()
            if (saved := self._saved.get(m.id)) is None
            or any(getattr(m, n) is not saved[i] and getattr(m, n) != saved[i] for n, i in at)
        ]

    def save(self, only=None) -> int:
        """Write every field changed in place since the last save, in one transaction.

        Returns how many memories were written (0 when nothing changed). only: the memories
        to look at (e.g. the k a recall touched), instead of all those assigned a field
        (memory.metadata["x"] = 1 counts as an assignment, base/metadata.py; a value
        changed inside a value, metadata["tags"].append(...), is seen through `only`).
        Each UPDATE is compare-and-set: a memory another process changed or removed
        after this store read it is refused with StaleMemory naming it, and nothing of the
        save is written; that memory then shows what the database holds (a removed one is
        no longer held), the others stay unsaved: call save() again to write them.
        """
        self._prune()
        if only is None:
            looked_at = list(self._dirty.values())
        else:
            looked_at = [m for m in only if isinstance(m, Memory) and self._holds(m)]
        changed = [m for m in looked_at if snapshot(m) != self._saved.get(m.id)]
        for memory_id in {m.id for m in looked_at} - {m.id for m in changed}:
            self._dirty.pop(memory_id, None)  # assigned, but back to what its row holds
        if not changed:
            return 0
        for memory in changed:
            self._note(memory)  # inside a block that fails, it is unsaved again
        clean = redactor()
        rows = {}
        for memory in changed:  # limits, redaction: before SQL
            try:
                rows[memory.id] = self._row(memory, clean)
            except (ValueError, TypeError) as error:  # no SQL: back to the values last read
                raise self._set_aside([memory], error, reread=False) from None
        relinked = [
            (m, self._saved[m.id][LINK])
            for m in changed
            if any(rows[m.id][i] != self._saved[m.id][i] for i in LINKS)
        ]
        written, broken = {}, None
        try:
            with self._transaction():
                if relinked:  # an in-place edit must not write a broken link: checked in SQL
                    try:
                        self._check_links(relinked, "save")
                    except ValueError as error:
                        broken = error
                        raise
                # in id order, as supersede and remove lock: two processes saving the same
                # memories touched in different orders would otherwise deadlock
                for memory in sorted(changed, key=lambda m: m.id):
                    written[memory.id] = self._write(memory, rows[memory.id])
        except StaleMemory as refused:
            self._show_current(refused.memory_id, refused.removed)
            raise
        except ValueError as error:
            if error is broken:
                raise self._set_aside([m for m, _ in relinked], error) from None
            raise
        for memory_id, saved in written.items():
            self._saved[memory_id], self._versions[memory_id] = saved, None
            self._dirty.pop(memory_id, None)
        return len(written)

    def _write(self, memory: Memory, new: tuple, names: tuple[str, ...] = FIELDS) -> tuple:
        """UPDATE the `names` fields that differ from the row, if it still holds what was read.

        Inside a transaction. Returns the values the row now holds (for _saved); raises
        StaleMemory when another process changed one of those fields, or removed the row.
        """
        old = self._saved[memory.id]
        changed = [name for name in names if new[FIELDS.index(name)] != old[FIELDS.index(name)]]
        if changed:
            now = dict(zip(FIELDS, self._to_columns(new)))
            was = dict(zip(FIELDS, self._to_columns(old)))
            checked = [name for name in changed if name != "last_accessed"]  # a recall: any wins
            self._wrote_rows([memory.id])
            cursor = self._run(
                "UPDATE memories SET "
                + ", ".join(f"{name} = ?" for name in changed)
                + " WHERE user_id = ? AND id = ?"
                + "".join(f" AND {name}{self.same}?" for name in checked),
                [now[name] for name in changed]
                + [self.user_id, memory.id]
                + [was[name] for name in checked],
            )
            if cursor.rowcount != 1:
                raise self._stale(memory.id, checked, old)
            if "embedding" in changed:
                self._count(added=[new[FIELDS.index("embedding")]],
                            removed=[old[FIELDS.index("embedding")]], rows=0)  # fmt: skip
        return tuple(new[i] if name in names else old[i] for i, name in enumerate(FIELDS))

    def _stale(self, memory_id: str, checked: list[str], old: tuple) -> StaleMemory:
        """What refused an UPDATE: the row is gone, or holds another value than was read."""
        row = self._run(
            f"SELECT {', '.join(self.columns)} FROM memories WHERE user_id = ? AND id = ?",
            (self.user_id, memory_id),
        ).fetchone()
        if row is None:
            return StaleMemory(
                f"memory {memory_id!r} was removed from {self._where()} by another writer after "
                "this store read it, so its change here cannot be saved. Nothing was saved; "
                "this store no longer holds it (it is not recalled again): call save() again "
                "to write the other changes",
                memory_id,
                removed=True,
            )
        current = dict(zip(FIELDS, snapshot(self._memory_from_row(row))))
        read = dict(zip(FIELDS, old))
        name = next((n for n in checked if current[n] != read[n]), checked[0] if checked else "")
        return StaleMemory(
            f"memory {memory_id!r} was changed by another writer after this store read it: its "
            f"{name} in {self._where()} is now {shown(current.get(name))}, not "
            f"{shown(read.get(name))} as read here. Nothing was saved, so that change is kept; "
            f"memory {memory_id!r} here now shows what the {self.medium} holds: make your "
            "change again if it still applies, then call save()",
            memory_id,
            removed=False,
        )

    def _show_current(self, memory_id: str, removed: bool = False) -> None:
        """After a refused save: `memory_id` as the database holds it now, nothing unsaved."""
        memory = self._memories.get(memory_id)
        fresh = None if removed else self.reread(memory_id)
        if memory is None or fresh is None:
            self._forget(memory_id)
            return
        for name in FIELDS:
            object.__setattr__(memory, name, getattr(fresh, name))
        memory._adopt_metadata()
        self._saved[memory.id], self._versions[memory.id] = snapshot(memory), None
        self._dirty.pop(memory.id, None)

    def _set_aside(self, memories: list[Memory], error: Exception, reread=True) -> RefusedSave:
        """A change save() must refuse: kept aside in self.refused, each memory shown as the
        database holds it (reread), or held it when last read, so the next save, turn and
        close() go on. The error to raise."""
        ids = sorted({m.id for m in memories})
        for memory in memories:
            self.refused[memory.id] = Refused(copy.copy(memory), str(error))
            if reread:
                self._show_current(memory.id)
            else:
                for name, value in zip(FIELDS, self._saved[memory.id]):
                    loaded = json.loads(value) if name == "metadata" else value
                    object.__setattr__(memory, name, loaded)
                memory._adopt_metadata()
                self._dirty.pop(memory.id, None)
        named = ", ".join(repr(i) for i in ids)
        return RefusedSave(
            f"{error}. The refused change of memory {named} is kept aside in store.refused"
            f"[{ids[0]!r}] (the memory as it was, and this reason); here memory {named} shows "
            f"what the {self.medium} holds again, and the other changes stay unsaved: save(), "
            "the next turn and close() go on",
            ids,
        )

    # --- rows ----------------------------------------------------------------------------------

    def _row(self, memory: Memory, clean=None) -> tuple:
        """snapshot(memory), secrets redacted, refused unless every backend can keep it."""
        clean = clean or redactor()
        text, metadata = clean(memory.text), clean.data(memory.metadata)
        if text != memory.text:
            object.__setattr__(memory, "text", text)  # what is stored is what is held
        if metadata != memory.metadata:
            object.__setattr__(memory, "metadata", metadata)
            memory._adopt_metadata()
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
        rows = self._new_rows(pairs)
        self._wrote_rows([memory.id for memory, _ in pairs])
        inserted = self._run_many(
            self._sql(
                f"INSERT INTO memories ({', '.join(self.columns)}) VALUES ({marks}) "
                "ON CONFLICT DO NOTHING"
            ),
            rows,
        )
        if inserted != len(pairs):  # an id already stored that this store had not read
            which = f"with id {pairs[0][0].id!r}" if len(pairs) == 1 else "of this batch"
            raise ValueError(
                f"a memory {which} is already stored for user {self.user_id!r} in "
                f"{self._where()} (added by another process, or earlier); nothing was added: "
                "give it another id (store.next_id())"
            )
        self._claim_model()
        self._count(added=[memory.embedding for memory, _ in pairs])
        for (memory, saved), row in zip(pairs, rows):
            self._saved[memory.id], self._versions[memory.id] = saved, self._version_of(row)
        if self._writing:
            self._inserted.extend(memory.id for memory, _ in pairs)
            self._inserted_ids.update(memory.id for memory, _ in pairs)

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


def _packed(counts) -> bytes:
    import numpy as np

    return np.asarray(counts, dtype="<i4").tobytes()


class _Held(weakref.WeakValueDictionary):
    """The memories a store handed out, held weakly; `collected(id)` is called when one of
    them is collected (a whole-store scan's memories live in reference cycles, so they go at
    the next garbage collection, after any call of the store that could prune)."""

    def __init__(self, collected: weakref.WeakMethod) -> None:
        super().__init__()
        self._collected = collected  # weakly: the store is not kept alive by its own memories
        self._refs: dict[str, weakref.KeyedRef] = {}

    def __setitem__(self, key, value) -> None:
        super().__setitem__(key, value)
        self._refs[key] = weakref.KeyedRef(value, self._gone, key)

    def _gone(self, ref) -> None:
        if self._refs.get(ref.key) is ref:  # not an older memory of an id held again
            del self._refs[ref.key]
            collected = self._collected()
            if collected is not None:
                collected(ref.key)
        _Held.collected += 1  # freed after the callbacks: the collection's end trims

    collected = 0  # memories collected, of every store, since memory was last given back


def _after_collection(phase: str, info: dict) -> None:
    """gc.callbacks: once a collection has freed many memories, give their pages back."""
    if phase == "stop" and _Held.collected >= TRIM_EVERY:
        _Held.collected = 0
        _give_back_freed_memory()


gc.callbacks.append(_after_collection)


TRIM_EVERY = 1024  # memories (8 KB each at 2,000 dimensions) collected between trims
_malloc_trim = None


def _give_back_freed_memory() -> None:
    """Return the C heap's free pages to the system (glibc's malloc_trim; elsewhere nothing).

    subtle: a whole-store scan frees its memories' vectors (8 KB each), but glibc keeps the
    freed pages of its heap resident, so a process that once read 100,000 memories would
    keep 800 MB; trimmed, a scan leaves nearly nothing (benchmarks/bench_turn_ratios.py).
    """
    global _malloc_trim
    if _malloc_trim is None:
        import ctypes

        try:
            _malloc_trim = ctypes.CDLL("libc.so.6").malloc_trim
        except (OSError, AttributeError, TypeError):
            _malloc_trim = False  # not glibc: its allocator decides
    if _malloc_trim:
        _malloc_trim(0)


class _Rows(Mapping):
    """id -> memory as the database holds it, looked up one id at a time (the link rules')."""

    def __init__(self, store: DatabaseStore) -> None:
        self._store = store

    def __getitem__(self, memory_id):
        memory = self._store._lookup(memory_id) if isinstance(memory_id, str) else None
        if memory is None:
            raise KeyError(memory_id)
        return memory

    def __iter__(self):
        return (memory.id for memory in self._store)

    def __len__(self) -> int:
        return len(self._store)
