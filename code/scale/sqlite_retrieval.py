"""On SQLite: a float32 matrix kept in step with the file, and the learner's ranking from it.

    shortlist(store, query, now, k=3)     # a Shortlist holding every memory of the exact top k
    recall(store, query, now, k=3)        # the learner's retrieve, on that shortlist; saved

What a chat turn on PostgreSQL asks SQL (scale/pg_retrieval.py), a chat turn on SQLite asks a
FileMatrix: the user's live memories as arrays, held beside the store object,

    dense         (N, d) float32   the positions most memories use (the hybrid's meaning half)
    sparse        rows, columns, values of the rest (the word half: a few words a memory)
    last_accessed (N,) float64, importance (N,) float64, live (N,) bool, seq (N,) store order

each row scaled to length 1, so one pass gives every cosine. The learner's own
`retrieval_scores` (scoring.py, notebook 09's exercise) turns those into fast scores; a fast
score is within scale/matrix_scoring.error_bound of the exact one, so every memory within
twice that of the k-th best is fetched from the file and handed, in store order, to the
learner's `retrieve` as a small in-memory store (a Shortlist of the store's own Memory
objects). Since that holds every memory that can be in the exact top k, any correct
retrieve returns on it exactly what it returns over the whole store, ties included.

Kept in step: a new store object reads the arrays saved in the file, then the rows written
since, as the file's change log names them (scale/sqlite_matrix_file.py: a few blobs, not
every 8 KB vector); where none are saved (a file's first turn, fewer than SAVE_FROM
memories, damaged or stale arrays), it builds them from one read of the user's rows in the
file's order, 2,000 vectors converted at a time, and saves them. Before each use it asks
SQLite whether anything was committed since (`PRAGMA data_version` counts the other
processes' commits, the connection's total_changes this store's own). If only this store
object wrote (data_version unchanged), the rows it wrote are read again, and nothing else
(the store names them: rows_changed_since); a turn's own save of its k touches costs k rows.
If another connection wrote, the rows the change log names since are read (when the arrays
are saved); otherwise, or when rows were added or removed out of order, one read of every
row's small columns (seq, id, checksum, last_accessed, importance, superseded_by) updates
the arrays; a row whose checksum changed has its vector read again, a new row is appended,
a removed one dropped. Changes this process made in place and has not saved (a retrieve's
touch of last_accessed) are laid over the file's values, as iterating the store would show
them.

Where the shortcut cannot decide, `shortlist` returns None and the caller runs the learner's
`retrieve` over the whole store: while `retrieval_scores` is not written yet
(NotImplementedError), for a query or memory too large or small for float32, and for a
vector changed in place and not saved.

Deliberately left out: checking each row's checksum when the arrays are built (the memories
of the shortlist are read, and checked, by the store itself), and memory-mapping the saved
arrays (a new store object still reads them: 1.6 KB a memory at the default embedding, a
few tenths of a second at 100,000 memories, docs/scale.md).
"""

from __future__ import annotations

import weakref

import numpy as np

from base.defaults import DECAY_RATE, TOP_K, WEIGHTS
from base.unwritten import runs_on_learner_code
from base.validation import as_timestamp, check_decay_rate, check_k, check_weights
from memory_store import Memory
from scale import sqlite_matrix_file as matrix_file
from scale.matrix_scoring import (
    SAFE_MAGNITUDE,
    Query,
    Shortlist,
    error_bound,
    fast_scores,
    magnitudes_ok,
    within_bound,
)
from storage.rows import FIELDS
from storage.sqlite_store import PersistentMemoryStore

CHUNK = 2_000  # rows converted at a time: 2,000 x 2,000 float32s is 16 MB
OWN_ROWS_READ = 500  # at most this many rows written here since: read those rows only
DENSE_SHARE = 0.25  # a position non-zero in more than this share of memories is kept dense
SMALL = ("seq", "id", "checksum", "last_accessed", "importance", "superseded_by IS NULL")

# every finite float32 (2**-149 to 3.4e38 in size) is within SAFE_MAGNITUDE: a vector stored
# as float32s needs only a check that it is finite
FLOAT32_SAFE = (
    SAFE_MAGNITUDE[0] <= 2.0**-149 <= float(np.finfo(np.float32).max) <= SAFE_MAGNITUDE[1]
)

_MATRICES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # store -> FileMatrix


class FileMatrix:
    """One user's memories of a SQLite store as float32 arrays, in step with the file."""

    def __init__(self, store: PersistentMemoryStore) -> None:
        self.store = store
        self.stamp = None  # (connection, data_version, total_changes) when last in step
        self.dimension = store.dimension
        self.upto = None  # the change log's number the arrays are in step at (saved arrays)
        self.saved_at = None  # the change log's number of the arrays saved in the file
        self._row_of = self._checksums = None
        self.loaded_changes = 0  # rows of the change log a load took in
        if self._load():
            if self.loaded_changes >= matrix_file.REWRITE_AFTER:
                matrix_file.save(self)
        else:
            self.rebuild()
            if len(self.ids) >= matrix_file.SAVE_FROM:
                matrix_file.save(self)

    # built when first needed: a load from the file (sqlite_matrix_file) may never need them
    @property
    def row_of(self) -> dict[str, int]:
        """{memory id: its row of the arrays}."""
        if self._row_of is None:
            self._row_of = {memory_id: i for i, memory_id in enumerate(self.ids)}
        return self._row_of

    @row_of.setter
    def row_of(self, value) -> None:
        self._row_of = value

    @property
    def checksums(self) -> list[bytes]:
        """Each row's checksum as the file held it when the row was last read."""
        if self._checksums is None:
            packed, size = self._packed_checksums, matrix_file.CHECKSUM_BYTES
            self._checksums = [packed[i : i + size] for i in range(0, len(packed), size)]
        return self._checksums

    @checksums.setter
    def checksums(self, value) -> None:
        if isinstance(value, bytes):  # packed, as saved in the file: split when first needed
            self._checksums, self._packed_checksums = None, value
        else:
            self._checksums = value

    def _load(self) -> bool:
        """The arrays as saved in the file (scale/sqlite_matrix_file.py); False if none."""
        if self.store.dimension is None:
            return False
        stamp = self._stamp()
        mark, _ = self.store.rows_changed_since(None)
        if not matrix_file.load(self):
            return False
        self.stamp, self.mark = stamp, mark
        return True

    # --- reading the file ------------------------------------------------------------------

    def _stamp(self):
        db = self.store._db
        with self.store._transaction(read_only=True):  # its errors are the store's errors
            (version,) = self.store._run("PRAGMA data_version").fetchone()
        return id(db), version, db.total_changes

    def _small_rows(self) -> list[tuple]:
        return self.store._run(
            f"SELECT {', '.join(SMALL)} FROM memories WHERE user_id = ? ORDER BY seq",
            (self.store.user_id,),
        ).fetchall()

    def _blobs(self, seqs) -> dict[int, bytes]:
        """{seq: the stored vector} of these rows (read a few hundred at a time)."""
        found, seqs = {}, [int(seq) for seq in seqs]
        for start in range(0, len(seqs), 500):
            chunk = seqs[start : start + 500]
            found.update(
                self.store._run(
                    f"SELECT seq, embedding FROM memories WHERE user_id = ? AND seq IN "
                    f"({', '.join('?' * len(chunk))})",
                    (self.store.user_id, *chunk),
                ).fetchall()
            )
        return found

    def rebuild(self) -> None:
        """Every array from the file (on first use, and when rows were renumbered).

        One read of the user's rows in the file's order (seq is the rowid: no sort), CHUNK
        rows at a time, each chunk's vectors converted at once.
        """
        self.stamp = self._stamp()
        self.mark, _ = self.store.rows_changed_since(None)
        self.dimension = self.store.dimension
        dim, store = self.dimension or 1, self.store
        rows, trusted, parts = [], [], []
        with store._transaction(read_only=True):
            self.upto = self._log_position()
            (n,) = store._run(
                "SELECT count(*) FROM memories WHERE user_id = ?", (store.user_id,)
            ).fetchone()
            cursor = store._run(
                f"SELECT {', '.join(SMALL)}, embedding FROM memories NOT INDEXED "
                "WHERE user_id = ? ORDER BY seq",
                (store.user_id,),
            )
            while chunk := cursor.fetchmany(CHUNK):
                blobs = [row[-1] for row in chunk]
                block, ok = self._block(blobs)
                if not rows:  # the first chunk decides which positions are dense
                    share = (block != 0).mean(axis=0)
                    self.dense_at = np.flatnonzero(share > DENSE_SHARE)
                    self.sparse_at = np.setdiff1d(np.arange(dim), self.dense_at)
                    self.dense = np.zeros((n, len(self.dense_at)), dtype=np.float32)
                at = len(rows)
                rows.extend(row[:-1] for row in chunk)
                if len(rows) > n:  # pragma: no cover - one read transaction: cannot happen
                    raise RuntimeError("the user's rows changed during one read transaction")
                dense, r, c, v = self._unit(block)
                self.dense[at : len(rows)] = dense
                parts.append((r + at, c, v))
                trusted.append(ok)
        if not rows:  # no memories yet: every position dense
            self.dense_at, self.sparse_at = np.arange(dim), np.zeros(0, np.int64)
            self.dense = np.zeros((0, dim), dtype=np.float32)
        self.dense = self.dense[: len(rows)]
        self._set_small(rows)
        self.trusted = np.concatenate(trusted) if trusted else np.ones(0, dtype=bool)
        # each row's vector's hash: 0 (not hashed: no pass over every vector for it) until the
        # row is written; then it is converted once more and hashed, so that a later touch of
        # the row (a new checksum) compares hashes and converts nothing
        self.blob_hash = np.zeros(len(rows), dtype=np.int64)
        self.sp_rows = np.concatenate([p[0] for p in parts] or [[]]).astype(np.int32)
        self.sp_cols = np.concatenate([p[1] for p in parts] or [[]]).astype(np.int32)
        self.sp_vals = np.concatenate([p[2] for p in parts] or [[]]).astype(np.float32)

    def _block(self, blobs: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
        """(these stored vectors as rows, which rows the error bound covers); a row it does not
        cover (a value too large or small, or not finite) is all zeros and always shortlisted."""
        dim = self.dimension or 1
        if all(len(blob) == 4 * dim for blob in blobs):  # float32s, as the store packs them
            block = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), dim)
            if FLOAT32_SAFE:
                ok = np.isfinite(block).all(axis=1)
            else:  # pragma: no cover - SAFE_MAGNITUDE holds every finite float32 today
                ok = np.array([magnitudes_ok(row) for row in block], dtype=bool)
        else:
            block = np.array([self._vector(blob) for blob in blobs]).reshape(-1, dim)
            ok = np.array([magnitudes_ok(row) for row in block], dtype=bool)
        if not ok.all():
            block = np.where(ok[:, None], block, 0)
        return block, ok

    def _unit(self, block: np.ndarray):
        """Rows of `block` scaled to length 1 (norms in float64, then rounded to float32 once):
        (the dense columns, and rows, columns, values of the non-zero sparse ones)."""
        dense = block[:, self.dense_at].astype(np.float64)
        rest = block[:, self.sparse_at]  # a copy: contiguous, so one flat pass finds its entries
        flat = np.flatnonzero(rest)
        r, c = np.divmod(flat, max(rest.shape[1], 1))
        values = rest.ravel()[flat].astype(np.float64)
        squares = np.einsum("ij,ij->i", dense, dense)
        squares += np.bincount(r, weights=values * values, minlength=len(block))
        norms = np.sqrt(squares)
        scale = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
        dense = (dense * scale[:, None]).astype(np.float32)
        values = (values * scale[r]).astype(np.float32)
        return dense, r, self.sparse_at[c], values

    def _vector(self, blob: bytes) -> np.ndarray:
        dtype = "<f4" if len(blob) == 4 * self.dimension else "<f8"
        return np.frombuffer(blob, dtype=dtype).astype(np.float64)

    def _set_small(self, rows) -> None:
        self.seq = np.array([row[0] for row in rows], dtype=np.int64)
        self.ids = [row[1] for row in rows]
        self.row_of = {memory_id: i for i, memory_id in enumerate(self.ids)}
        self.checksums = [row[2] for row in rows]
        self.last = np.array([row[3] for row in rows], dtype=np.float64)
        self.importance = np.array([row[4] for row in rows], dtype=np.float64)
        self.live = np.array([bool(row[5]) for row in rows], dtype=bool)

    def _put(self, at: np.ndarray, blobs: list[bytes]) -> None:
        """Rows `at` (replaced, or new at the end) take the unit float32 rows of `blobs`."""
        block, self.trusted[at] = self._block(blobs)
        dense, r, c, v = self._unit(block)
        self.dense[at] = dense
        keep = ~np.isin(self.sp_rows, at)  # a replaced row's old entries go
        self.sp_rows = np.concatenate([self.sp_rows[keep], at[r].astype(np.int32)])
        self.sp_cols = np.concatenate([self.sp_cols[keep], c.astype(np.int32)])
        self.sp_vals = np.concatenate([self.sp_vals[keep], v])

    def in_step(self) -> None:
        """Bring the arrays up to the file: one read of the small columns if anything changed."""
        if self.store.dimension != self.dimension:
            self.rebuild()
            return
        with self.store._transaction(read_only=True):  # the rows and their vectors: one read
            stamp = self._stamp()
            mark, ids = self.store.rows_changed_since(self.mark)
            if stamp == self.stamp:
                self.mark = mark
                return
            if stamp[:2] != self.stamp[:2] or not self._follow_own(ids):
                if not self._follow_log():
                    self._follow()
            self.upto = self._log_position()  # the same snapshot as the rows just read
        self.stamp, self.mark = stamp, mark

    def _log_position(self) -> int | None:
        """The change log's last number, if this user's arrays are saved in the file (then
        every write of their rows since is logged); else None."""
        store = self.store
        if store._run("SELECT 1 FROM sqlite_master WHERE name = 'matrix_blocks'").fetchone():
            if store._run(
                "SELECT 1 FROM matrix_blocks WHERE user_id = ? AND part = 0", (store.user_id,)
            ).fetchone():
                (n,) = store._run("SELECT COALESCE(MAX(n), 0) FROM matrix_changes").fetchone()
                return n
        return None

    def _follow_log(self) -> bool:
        """Another connection wrote: read the rows the change log names since the arrays
        were in step. False when the log cannot say (no saved arrays, a save since that
        dropped the log, too many rows)."""
        if self.upto is None:
            return False
        saved = matrix_file.saved_upto(self.store)
        if saved is None or saved > self.upto:
            return False
        changes = matrix_file.changes_since(self.store, self.upto)
        return len(changes) <= matrix_file.REBUILD_AFTER and self.apply_changes(changes)

    def apply_changes(self, changes: list[tuple[int, int]]) -> bool:
        """Bring the rows of `changes` ((seq, vector may have changed), by seq) up to the file:
        read again, dropped if gone, appended if new. False, with the arrays half-changed,
        when the rows do not fit (a new row before the last): the caller reads them all."""
        if not changes:
            return True
        store, seqs = self.store, [int(seq) for seq, _ in changes]
        rows = {}
        for start in range(0, len(seqs), 500):
            chunk = seqs[start : start + 500]
            for row in store._run(
                f"SELECT {', '.join(SMALL)} FROM memories WHERE user_id = ? AND seq IN "
                f"({', '.join('?' * len(chunk))})",
                (store.user_id, *chunk),
            ):
                rows[row[0]] = row
        n, flagged = len(self.ids), {int(seq) for seq, vector in changes if vector}
        updated, gone, new = [], [], []
        for seq, i in zip(seqs, np.searchsorted(self.seq, seqs).tolist()):
            row = rows.get(seq)
            if i < n and self.seq[i] == seq:
                if row is None:
                    gone.append(i)
                elif row[1] != self.ids[i]:
                    return False  # an id changed in place: read every row
                else:
                    updated.append((i, row))
            elif row is not None:
                new.append(row)
        if new and n and new[0][0] <= self.seq[-1]:
            return False  # a row numbered into the middle: read every row
        blobs = self._blobs([row[0] for i, row in updated if row[0] in flagged]
                            + [row[0] for row in new])  # fmt: skip
        moved = [(i, blobs[row[0]]) for i, row in updated if row[0] in blobs]
        if moved:
            at = np.array([i for i, _ in moved], dtype=np.int64)
            self.blob_hash[at] = [_hash(blob) for _, blob in moved]
            self._put(at, [blob for _, blob in moved])
        for i, row in updated:
            self.checksums[i] = row[2]
            self.last[i], self.importance[i], self.live[i] = row[3], row[4], bool(row[5])
        if gone:
            self._drop(np.array(gone, dtype=np.int64))
        if new:
            self._append(new, blobs)
        return True

    def _keep_vectors(self, kept: np.ndarray) -> None:
        """Only rows `kept` (in order) of the vector arrays stay, numbered anew; the small
        columns are the caller's to renumber."""
        renumber = np.full(len(self.dense), -1, dtype=np.int64)
        renumber[kept] = np.arange(len(kept))
        keep = renumber[self.sp_rows] >= 0
        self.sp_rows = renumber[self.sp_rows[keep]].astype(np.int32)
        self.sp_cols, self.sp_vals = self.sp_cols[keep], self.sp_vals[keep]
        self.dense, self.trusted = self.dense[kept], self.trusted[kept]
        self.blob_hash = self.blob_hash[kept]

    def _drop(self, rows: np.ndarray) -> None:
        """Rows `rows` of the arrays go; the others keep their entries, in order."""
        kept = np.setdiff1d(np.arange(len(self.ids)), rows)
        self._keep_vectors(kept)
        self.seq, self.last = self.seq[kept], self.last[kept]
        self.importance, self.live = self.importance[kept], self.live[kept]
        self.ids = [self.ids[i] for i in kept]
        self.checksums = [self.checksums[i] for i in kept]
        self.row_of = {memory_id: i for i, memory_id in enumerate(self.ids)}

    def _append(self, rows: list[tuple], blobs: dict[int, bytes]) -> None:
        """New rows (SMALL columns, in seq order) at the end, their vectors from `blobs`."""
        pad, at = len(rows), len(self.ids)
        self.dense = np.concatenate([self.dense, np.zeros((pad, len(self.dense_at)), np.float32)])
        self.trusted = np.concatenate([self.trusted, np.ones(pad, dtype=bool)])
        self.blob_hash = np.concatenate([self.blob_hash, np.zeros(pad, dtype=np.int64)])
        self.seq = np.concatenate([self.seq, [row[0] for row in rows]]).astype(np.int64)
        self.last = np.concatenate([self.last, [row[3] for row in rows]]).astype(np.float64)
        self.importance = np.concatenate([self.importance, [row[4] for row in rows]]).astype(
            np.float64
        )
        self.live = np.concatenate([self.live, [bool(row[5]) for row in rows]]).astype(bool)
        for row in rows:
            self.row_of[row[1]] = len(self.ids)
            self.ids.append(row[1])
            self.checksums.append(row[2])
        where = np.arange(at, at + pad, dtype=np.int64)
        self.blob_hash[where] = [_hash(blobs[row[0]]) for row in rows]
        self._put(where, [blobs[row[0]] for row in rows])

    def _follow_own(self, ids: list[str] | None) -> bool:
        """Only this store object wrote since the arrays were in step (no other connection
        committed: data_version), and it wrote the rows of `ids`: read those rows only.
        False (nothing changed) when that cannot be done: rows added, removed or too many."""
        if ids is None or len(ids) > OWN_ROWS_READ:
            return False
        ids = list(dict.fromkeys(ids))
        if any(memory_id not in self.row_of for memory_id in ids):
            return False  # a row added (or added again): read everything
        rows = self.store._run(
            f"SELECT {', '.join(SMALL)}, embedding FROM memories WHERE user_id = ? AND id IN "
            f"({', '.join('?' * len(ids))})",
            (self.store.user_id, *ids),
        ).fetchall()
        at = [self.row_of[row[1]] for row in rows]
        if len(rows) != len(ids) or any(self.seq[i] != row[0] for i, row in zip(at, rows)):
            return False  # a row removed (or renumbered)
        moved = [(i, row[-1]) for i, row in zip(at, rows) if self.blob_hash[i] != _hash(row[-1])]
        if moved:
            where = np.array([i for i, _ in moved], dtype=np.int64)
            self.blob_hash[where] = [_hash(blob) for _, blob in moved]
            self._put(where, [blob for _, blob in moved])
        for i, row in zip(at, rows):
            self.checksums[i] = row[2]
            self.last[i], self.importance[i], self.live[i] = row[3], row[4], bool(row[5])
        return True

    def _follow(self) -> None:
        rows = self._small_rows()
        old = self.row_of
        kept = np.array([old[row[1]] for row in rows if row[1] in old], dtype=np.int64)
        n_new = len(rows) - len(kept)
        if (
            np.any(np.diff(kept) <= 0)  # an id removed and added again: a new place in order
            or any(row[1] not in old for row in rows[: len(kept)])  # new rows are the last
            or any(self.seq[i] != row[0] for i, row in zip(kept, rows))
        ):
            self.rebuild()
            return
        if len(kept) != len(self.ids):  # rows removed: the others keep their entries
            self._keep_vectors(kept)
        rewritten = [i for i, row in enumerate(rows[: len(kept)])
                     if self.checksums[kept[i]] != row[2]]  # fmt: skip
        pad = n_new
        self.dense = np.concatenate([self.dense, np.zeros((pad, len(self.dense_at)), np.float32)])
        self.trusted = np.concatenate([self.trusted, np.ones(pad, dtype=bool)])
        self.blob_hash = np.concatenate([self.blob_hash, np.zeros(pad, dtype=np.int64)])
        seqs = [rows[i][0] for i in rewritten] + [row[0] for row in rows[len(kept) :]]
        blobs = self._blobs(seqs)
        at = [i for i in rewritten if self.blob_hash[i] != _hash(blobs[rows[i][0]])]
        at += range(len(kept), len(rows))  # the new rows
        if at:
            at = np.array(at, dtype=np.int64)
            self.blob_hash[at] = [_hash(blobs[rows[i][0]]) for i in at]
            self._put(at, [blobs[rows[i][0]] for i in at])
        self._set_small(rows)

    # --- scoring -------------------------------------------------------------------------

    def cosines(self, query: Query) -> np.ndarray:
        """(N,) cosines of every row with the query, float32 products summed."""
        q = query.unit
        sims = (self.dense @ q[self.dense_at]).astype(np.float64)
        if len(self.sp_vals):
            qs = q[self.sp_cols]
            hit = qs != 0
            sims += np.bincount(
                self.sp_rows[hit],
                weights=(self.sp_vals[hit] * qs[hit]).astype(np.float64),
                minlength=len(sims),
            )
        return sims

    def overlay(self):
        """(last_accessed, importance, live) with this process's unsaved changes laid over the
        file's, as iterating the store shows them; None if a vector was changed in place."""
        store, last, importance, live = self.store, self.last, self.importance, self.live
        copied = False
        for memory in list(store._dirty.values()):
            saved = store._saved.get(memory.id)
            i = self.row_of.get(memory.id)
            if saved is None or i is None or not store._holds(memory):
                continue  # not a row of the file now: iterating would not show it either
            values = dict(zip(FIELDS, saved))
            if (
                memory.embedding is not values["embedding"]
                and memory.embedding != values["embedding"]
            ):
                return None
            if not copied:
                last, importance, live = last.copy(), importance.copy(), live.copy()
                copied = True
            if memory.last_accessed != values["last_accessed"]:
                last[i] = memory.last_accessed
            if memory.importance != values["importance"]:
                importance[i] = memory.importance
            if memory.superseded_by != values["superseded_by"]:
                live[i] = memory.superseded_by is None
        return last, importance, live


def _hash(blob: bytes) -> int:
    """A stored vector's hash, never 0 (0 is "not hashed yet")."""
    return hash(blob) or 1


def matrix_of(store: PersistentMemoryStore) -> FileMatrix:
    """The store object's FileMatrix, built on first use and brought in step with the file."""
    matrix = _MATRICES.get(store)
    if matrix is None:
        matrix = _MATRICES[store] = FileMatrix(store)
    else:
        matrix.in_step()
        if (
            matrix.upto is not None
            and matrix.saved_at is not None
            and matrix.upto - matrix.saved_at >= matrix_file.REWRITE_AFTER
        ):  # a long-lived store object saves them again: the log stays short
            matrix_file.save(matrix)
    return matrix


def shortlist_ids(store: PersistentMemoryStore, query_embedding, now, k: int = TOP_K,
                  weights=WEIGHTS, decay_rate=DECAY_RATE) -> list[str] | None:  # fmt: skip
    """The ids, in store order, of every live memory that may be in the exact top k; None
    where the arrays cannot decide (the caller then ranks the whole store)."""
    k, weights = check_k(k), check_weights(weights)
    decay_rate, now = check_decay_rate(decay_rate), as_timestamp(now, "now")
    if not isinstance(store, PersistentMemoryStore) or store._db is None:
        return None
    try:
        query = Query.of(query_embedding)
    except (TypeError, ValueError):
        return None  # retrieve itself says what is wrong with it
    matrix = matrix_of(store)
    if matrix.dimension != len(query.values):
        return None  # no memories yet, or a query of another model: retrieve decides
    laid = matrix.overlay()
    if laid is None:
        return None
    last, importance, live = laid
    alive = np.flatnonzero(live)
    if len(alive) > k:
        sims = matrix.cosines(query)[alive]
        scores = fast_scores(sims, last[alive], importance[alive], now, weights, decay_rate)
        if scores is None:
            return None  # retrieval_scores is not written yet: the learner's loop decides
        rows = within_bound(scores, k, error_bound(matrix.dimension, weights))
        if rows is None:
            return None
        alive = np.union1d(alive[rows], alive[~matrix.trusted[alive]])
    return [matrix.ids[i] for i in alive]


def shortlist(store, query_embedding, now, k: int = TOP_K, weights=WEIGHTS,
              decay_rate=DECAY_RATE) -> Shortlist | None:  # fmt: skip
    """A Shortlist of the memories that may be in the exact top k (retrieve's input), or
    None: then retrieve reads the whole store."""
    ids = shortlist_ids(store, query_embedding, now, k, weights, decay_rate)
    if ids is None:
        return None
    return Shortlist(store, [store.get(memory_id) for memory_id in ids])


@runs_on_learner_code
def recall(store, query_embedding, now, k: int = TOP_K, weights=WEIGHTS,
           decay_rate=DECAY_RATE, retrieve=None) -> list[Memory]:  # fmt: skip
    """`retrieve` (default: the learner's) on the shortlist, or over the whole store; saved.

    Returns what retrieve(store, ...) returns over the whole store, with the same memories
    refreshed, and writes their last_accessed to the file.
    """
    if retrieve is None:
        from retriever import retrieve
    candidates = shortlist(store, query_embedding, now, k, weights, decay_rate)
    source = store if candidates is None else candidates
    before = [(memory, memory.last_accessed) for memory in source]
    try:
        recalled = retrieve(source, query_embedding, now=now, k=k, weights=weights,
                            decay_rate=decay_rate)  # fmt: skip
        store.save() if candidates is None else store.save(only=list(candidates))
    except BaseException:
        for memory, last_accessed in before:  # a failed recall recalls nothing
            memory.last_accessed = last_accessed
        raise
    return recalled
