"""The SQLite shortlist's arrays kept in the store file, so a new store object reads them, not
every 8 KB vector.

    save(matrix)        # the arrays of an in-step FileMatrix, written as of now
    load(matrix)        # the arrays as last saved, brought up to the file; False: build anew

Two tables, made by the first save (a file without them is read as before):

    matrix_blocks   per user: part 0 a header (the file's identity, the dimension, how
                    many rows, which positions are dense, a CRC-32 of each block, and
                    `upto`, the change log's last number when the arrays were saved);
                    parts 1.. the arrays of BLOCK rows each, as float32s and float64s
    matrix_changes  (n, user, seq, vector): one line per row inserted, updated or deleted
                    since, written by triggers in the same transaction as the change;
                    vector is 1 when the row's vector (or its place) may have changed

Kept in step by SQLite itself: the triggers fire for every write, by this code, older code
or any other client of the file, and only for users whose arrays are saved. A load reads
the header, the blocks and the log after `upto`, then the rows the log names (their vectors
only where vector is 1). A block whose CRC differs, another file's identity (a copy made
with a new identity), another dimension or more than REBUILD_AFTER logged rows, and the
arrays are built from the rows instead (and saved again).

A save is made only when the arrays are exactly the file's rows: inside the write
transaction that writes them, the file's change stamp must be the one the arrays were last
brought in step at (else nothing is written, and a later build saves). It replaces every
block of the user and drops the log it has taken in. A save that cannot get the write lock
at once, or that the file refuses (full, read-only), is skipped: the arrays are a copy.

Deliberately left out: saving only the blocks that changed (a save writes them all, once
per REWRITE_AFTER logged rows: 160 MB at 100,000 memories) and memory-mapping the arrays (a
load still reads them: 1.6 KB a memory at the default embedding, 0.75 s at 100,000).
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from contextlib import suppress

import numpy as np

from storage.sqlite_file import BUSY_TIMEOUT

FORMAT = 1
BLOCK = 4_096  # rows a block: 6 MB of float32s at the default embedding's dense half
SAVE_FROM = 2_000  # fewer memories than this are built from the rows each time: fast enough
REWRITE_AFTER = 1_000  # saved again once this many rows were logged since the last save
REBUILD_AFTER = 20_000  # more logged rows than this: build from the rows (reads them all)
CHECKSUM_BYTES = 8  # storage/rows.row_checksum

TABLES = """
CREATE TABLE IF NOT EXISTS matrix_blocks (   -- per user: the shortlist's arrays, as of upto
    user_id TEXT NOT NULL,
    part INTEGER NOT NULL,                   -- 0: the header (JSON); 1..: blocks of rows
    data BLOB NOT NULL,
    PRIMARY KEY (user_id, part)
);
CREATE TABLE IF NOT EXISTS matrix_changes (  -- rows written since a user's arrays were saved
    n INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    vector INTEGER NOT NULL                  -- 1: the row's vector may have changed
);
CREATE INDEX IF NOT EXISTS matrix_changes_of_user ON matrix_changes (user_id, n);
CREATE TRIGGER IF NOT EXISTS matrix_inserted AFTER INSERT ON memories
WHEN EXISTS (SELECT 1 FROM matrix_blocks WHERE user_id = NEW.user_id AND part = 0)
BEGIN
    INSERT INTO matrix_changes (user_id, seq, vector) VALUES (NEW.user_id, NEW.seq, 1);
END;
CREATE TRIGGER IF NOT EXISTS matrix_deleted AFTER DELETE ON memories
WHEN EXISTS (SELECT 1 FROM matrix_blocks WHERE user_id = OLD.user_id AND part = 0)
BEGIN
    INSERT INTO matrix_changes (user_id, seq, vector) VALUES (OLD.user_id, OLD.seq, 1);
END;
CREATE TRIGGER IF NOT EXISTS matrix_updated
AFTER UPDATE OF seq, user_id, id, last_accessed, importance, embedding, superseded_by
ON memories
BEGIN
    INSERT INTO matrix_changes (user_id, seq, vector)
    SELECT OLD.user_id, OLD.seq, 1
    WHERE (OLD.seq != NEW.seq OR OLD.user_id != NEW.user_id)
      AND EXISTS (SELECT 1 FROM matrix_blocks WHERE user_id = OLD.user_id AND part = 0);
    INSERT INTO matrix_changes (user_id, seq, vector)
    SELECT NEW.user_id, NEW.seq,
           OLD.embedding IS NOT NEW.embedding OR OLD.seq != NEW.seq
           OR OLD.user_id != NEW.user_id
    WHERE EXISTS (SELECT 1 FROM matrix_blocks WHERE user_id = NEW.user_id AND part = 0);
END;
"""


# --- packing arrays into a blob ---------------------------------------------------------


def pack(arrays: dict[str, np.ndarray]) -> bytes:
    """A blob of named arrays: a JSON index (4-byte length first), then their bytes."""
    index, parts, offset = [], [], 0
    for name, array in arrays.items():
        array = np.ascontiguousarray(array)
        data = array.tobytes()
        index.append([name, array.dtype.str, list(array.shape), offset, len(data)])
        parts.append(data)
        offset += len(data)
    head = json.dumps(index).encode()
    return len(head).to_bytes(4, "little") + head + b"".join(parts)


def unpack(blob: bytes) -> dict[str, np.ndarray]:
    """pack's arrays again (views of the blob); ValueError if it is not pack's output."""
    size = int.from_bytes(blob[:4], "little")
    index = json.loads(blob[4 : 4 + size])
    start, arrays = 4 + size, {}
    for name, dtype, shape, offset, length in index:
        if start + offset + length > len(blob):
            raise ValueError("a block is shorter than its index says")
        count = int(np.prod(shape, dtype=np.int64))
        array = np.frombuffer(blob, dtype=np.dtype(dtype), count=count, offset=start + offset)
        arrays[name] = array.reshape(shape)
    return arrays


# --- the tables -------------------------------------------------------------------------


def _has_tables(store) -> bool:
    return (
        store._run("SELECT 1 FROM sqlite_master WHERE name = 'matrix_blocks'").fetchone()
        is not None
    )


def save(matrix) -> bool:
    """Write the arrays of `matrix` (in step with the file) as the user's saved arrays.

    False, with nothing written, when they are not the file's rows at the moment of writing,
    when another process holds the write lock, or when the file refuses the write.
    """
    store, db = matrix.store, matrix.store._db
    if db is None or store._block_open or db.in_transaction or len(matrix.ids) == 0:
        return False
    if any(len(checksum) != CHECKSUM_BYTES for checksum in matrix.checksums):
        return False  # pragma: no cover - every row of schema 2 is sealed with 8 bytes
    db.execute("PRAGMA busy_timeout = 0")  # the lock now or never: the arrays are a copy
    try:
        with store._transaction():
            if matrix._stamp() != matrix.stamp:
                return False  # the file changed since the arrays were in step
            for statement in _statements(TABLES):
                store._run(statement)
            (upto,) = store._run("SELECT COALESCE(MAX(n), 0) FROM matrix_changes").fetchone()
            user = store.user_id
            store._run("DELETE FROM matrix_blocks WHERE user_id = ?", (user,))
            blocks = [_block(matrix, at) for at in range(0, len(matrix.ids), BLOCK)]
            header = {
                "format": FORMAT,
                "file_id": store._identity,
                "dimension": matrix.dimension,
                "rows": len(matrix.ids),
                "dense_at": [int(i) for i in matrix.dense_at],
                "blocks": [zlib.crc32(block) for block in blocks],
                "upto": upto,
            }
            store._run_many(
                "INSERT INTO matrix_blocks VALUES (?, ?, ?)",
                [(user, 0, json.dumps(header).encode())]
                + [(user, part, block) for part, block in enumerate(blocks, start=1)],
            )
            store._run("DELETE FROM matrix_changes WHERE user_id = ? AND n <= ?", (user, upto))
    except store.refusal:
        return False  # locked by another writer, full or read-only: built again next time
    finally:
        with suppress(sqlite3.Error):
            db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")
    matrix.stamp = matrix._stamp()  # this write is the file's own copy, not a change of rows
    matrix.upto = matrix.saved_at = upto
    return True


def _block(matrix, at: int) -> bytes:
    end = min(at + BLOCK, len(matrix.ids))
    in_block = (matrix.sp_rows >= at) & (matrix.sp_rows < end)
    return pack(
        {
            "seq": matrix.seq[at:end],
            "last": matrix.last[at:end],
            "importance": matrix.importance[at:end],
            "live": matrix.live[at:end],
            "trusted": matrix.trusted[at:end],
            "checksums": np.frombuffer(b"".join(matrix.checksums[at:end]), dtype=np.uint8),
            "ids": np.frombuffer(
                json.dumps(matrix.ids[at:end]).encode("utf-8", "surrogatepass"), dtype=np.uint8
            ),
            "dense": matrix.dense[at:end],
            "sp_rows": matrix.sp_rows[in_block] - at,
            "sp_cols": matrix.sp_cols[in_block],
            "sp_vals": matrix.sp_vals[in_block],
        }
    )


def load(matrix) -> bool:
    """Fill `matrix` from the user's saved arrays and the log since; False (nothing filled)
    when there are none, or they cannot be used: the caller builds from the rows."""
    store = matrix.store
    with store._transaction(read_only=True):
        if not _has_tables(store):
            return False
        head = store._run(
            "SELECT data FROM matrix_blocks WHERE user_id = ? AND part = 0", (store.user_id,)
        ).fetchone()
        header = _header(head, store, matrix)
        if header is None:
            return False
        changes = changes_since(store, header["upto"])
        if len(changes) > REBUILD_AFTER:
            return False
        (upto,) = store._run("SELECT COALESCE(MAX(n), 0) FROM matrix_changes").fetchone()
        blobs = store._run(
            "SELECT part, data FROM matrix_blocks WHERE user_id = ? AND part > 0 ORDER BY part",
            (store.user_id,),
        ).fetchall()
        if [part for part, _ in blobs] != list(range(1, len(header["blocks"]) + 1)) or any(
            zlib.crc32(blob) != crc for (_, blob), crc in zip(blobs, header["blocks"])
        ):
            return False  # damaged, or written by something else: built from the rows
        try:
            blocks = [unpack(blob) for _, blob in blobs]
            _fill(matrix, header, blocks)
        except (ValueError, KeyError, TypeError):
            return False
        if not matrix.apply_changes(changes):
            return False
        matrix.upto = upto
        matrix.saved_at = header["upto"]
    matrix.loaded_changes = len(changes)
    return True


def changes_since(store, upto: int) -> list[tuple[int, int]]:
    """[(seq, 1 if its vector may have changed)] of the user's rows logged after `upto`."""
    return store._run(
        "SELECT seq, MAX(vector) FROM matrix_changes WHERE user_id = ? AND n > ? "
        "GROUP BY seq ORDER BY seq",
        (store.user_id, upto),
    ).fetchall()


def saved_upto(store) -> int | None:
    """The change-log number the user's saved arrays are as of; None if none are saved."""
    if not _has_tables(store):
        return None
    row = store._run(
        "SELECT data FROM matrix_blocks WHERE user_id = ? AND part = 0", (store.user_id,)
    ).fetchone()
    try:
        upto = json.loads(row[0])["upto"]
    except (TypeError, ValueError, KeyError):
        return None
    return upto if isinstance(upto, int) else None


def _header(row, store, matrix) -> dict | None:
    if row is None:
        return None
    try:
        header = json.loads(row[0])
    except (ValueError, TypeError):
        return None
    wanted = {"format": FORMAT, "file_id": store._identity, "dimension": store.dimension}
    if not isinstance(header, dict) or any(header.get(k) != v for k, v in wanted.items()):
        return None
    if not isinstance(header.get("upto"), int) or not isinstance(header.get("blocks"), list):
        return None
    return header


def _fill(matrix, header: dict, blocks: list[dict]) -> None:
    """The arrays of `matrix` from unpacked blocks (ValueError if they do not fit)."""
    dim = header["dimension"]
    dense_at = np.array(header["dense_at"], dtype=np.int64)
    if dense_at.size and (dense_at.min() < 0 or dense_at.max() >= dim):
        raise ValueError("a dense position out of range")
    ids = []  # (the blocks' CRCs matched: what was saved is read back)
    for block in blocks:
        ids.extend(json.loads(block["ids"].tobytes().decode("utf-8", "surrogatepass")))
    n = len(ids)
    if n != header["rows"]:
        raise ValueError("the blocks hold another number of rows")
    matrix.dimension = dim
    matrix.dense_at = dense_at
    matrix.sparse_at = np.setdiff1d(np.arange(dim), dense_at)
    joined = {name: np.concatenate([b[name] for b in blocks]) for name in blocks[0]}
    offsets = np.cumsum([0] + [len(b["seq"]) for b in blocks[:-1]])
    rows = np.concatenate([b["sp_rows"] + at for b, at in zip(blocks, offsets)])
    matrix.dense = joined["dense"].reshape(n, len(dense_at)).astype(np.float32, copy=False)
    matrix.sp_rows = rows.astype(np.int32)
    matrix.sp_cols = joined["sp_cols"].astype(np.int32)
    matrix.sp_vals = joined["sp_vals"].astype(np.float32)
    if len(matrix.sp_rows) and (
        matrix.sp_rows.min() < 0 or matrix.sp_rows.max() >= n
        or matrix.sp_cols.min() < 0 or matrix.sp_cols.max() >= dim
    ):  # fmt: skip
        raise ValueError("a sparse entry out of range")
    matrix.seq = joined["seq"].astype(np.int64)
    matrix.last = joined["last"].astype(np.float64)
    matrix.importance = joined["importance"].astype(np.float64)
    matrix.live = joined["live"].astype(bool)
    matrix.trusted = joined["trusted"].astype(bool)
    sums = joined["checksums"].tobytes()
    if len(sums) != CHECKSUM_BYTES * n or any(len(x) != n for x in (matrix.seq, matrix.last)):
        raise ValueError("a column of another length")
    if np.any(np.diff(matrix.seq) <= 0):
        raise ValueError("rows out of order")
    matrix.checksums = sums  # split into rows when first needed
    matrix.ids = ids
    matrix.row_of = None  # built when first needed
    matrix.blob_hash = np.zeros(n, dtype=np.int64)


def _statements(script: str) -> list[str]:
    from storage.sqlite_schema import _statements as split

    return split(script)
