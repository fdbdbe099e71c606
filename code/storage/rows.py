"""One memory <-> one row of the store file: the packed embedding and the row's checksum.

A row holds a memory's fields in columns of the same name. Its embedding is packed as
little-endian float32s when every value is a float32 (what base.validation makes of a
vector), else as float64s, so reading it back is always exact; its metadata is a JSON
object. Every row also carries a checksum: an 8-byte BLAKE2b of its values, including
its place in the stream (seq) and the file's random identity (file_id):

    row_checksum("3f2a...", 1, "alice", "m1", "Alice prefers Groq", ...) -> b'\\x8c...'

so a flipped bit anywhere in a row (a letter of the text, a time, a link, one float of
the embedding) is refused on load instead of returned, and so is a row that came from
another store file, e.g. through a stray -wal that SQLite merged in.

Deliberately left out: which rows are read or written (storage/sqlite_store.py) and opening
the file (storage/sqlite_file.py).
"""

from __future__ import annotations

import hashlib
import json
import struct
from pathlib import Path

from base.vectors import Float32Vector
from memory_store import Memory

FIELDS = (  # the Memory fields kept in columns of the same name
    "text", "kind", "created_at", "last_accessed", "importance", "embedding",
    "embedding_model", "superseded_by", "metadata",
)  # fmt: skip
MEMORY_COLUMNS = ("seq", "user_id", "id", *FIELDS, "checksum")  # the order rows are read in
USER_COLUMNS = ("user_id", "embedding_model", "dimension", "checksum")


class StoreFileError(RuntimeError):
    """The file cannot be used as a memory store; it has been left exactly as it was."""


def row_checksum(*values) -> bytes:
    """8 bytes that change when any of `values` (str, bytes, numbers, None) changes.

    Each value is tagged with its type and length, so ("ab", "c") and ("a", "bc") differ.
    Numbers are hashed as float64: SQLite hands a REAL column back as a float either way.
    """
    digest = hashlib.blake2b(digest_size=8)
    for value in values:
        if value is None:
            digest.update(b"N")
        elif isinstance(value, bytes):
            digest.update(b"B%d:" % len(value) + value)
        elif isinstance(value, str):
            data = value.encode("utf-8", "surrogatepass")
            digest.update(b"S%d:" % len(data) + data)
        else:
            digest.update(b"F" + struct.pack("<d", value))
    return digest.digest()


# --- embeddings ------------------------------------------------------------------------------


def pack_vector(vector) -> bytes:
    """Little-endian float32s when that is exact (4 bytes a value), else float64s."""
    if isinstance(vector, Float32Vector):
        return vector.to_bytes()  # a memory's embedding: float32s already
    n = len(vector)
    try:
        small = struct.pack(f"<{n}f", *vector)
    except OverflowError:  # beyond float32's range (about 3.4e38): cannot be float32
        small = None
    if small is not None and struct.unpack(f"<{n}f", small) == tuple(vector):
        return small
    return struct.pack(f"<{n}d", *vector)  # not float32-exact: what the Memory holds, exactly


def unpack_vector(blob, dimension: int):
    """The inverse of pack_vector; the user's `dimension` tells float32 from float64.

    float32s come back as a Float32Vector (base/vectors.py): 4 bytes a value in RAM too.
    """
    if not isinstance(blob, bytes) or len(blob) not in (4 * dimension, 8 * dimension):
        raise ValueError(f"embedding is not {dimension} packed float32s or float64s: {blob!r:.60}")
    if len(blob) == 4 * dimension:
        return Float32Vector.from_bytes(blob)
    return struct.unpack(f"<{dimension}d", blob)


# --- a memory as a row, and back ---------------------------------------------------------------


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
    """A snapshot as the SQLite values of FIELDS: numbers as floats, the vector packed."""
    values = dict(zip(FIELDS, snapshot))
    values["embedding"] = pack_vector(values["embedding"])
    for name in ("created_at", "last_accessed", "importance"):
        values[name] = float(values[name])
    return tuple(values[name] for name in FIELDS)


def sealed_row(file_id: str, seq: int, user_id: str, memory_id: str, columns: tuple) -> tuple:
    """The values of MEMORY_COLUMNS for one new row, its checksum last."""
    return (
        seq,
        user_id,
        memory_id,
        *columns,
        row_checksum(file_id, seq, user_id, memory_id, *columns),
    )


def row_ok(file_id: str, row: tuple) -> bool:
    """Whether the row's last value is the checksum of the others (and the file's id)."""
    *values, checksum = row
    return checksum == row_checksum(file_id, *values)


def check_row(path: Path, file_id: str, row: tuple, what: str) -> None:
    """Raise StoreFileError unless the row's last value is the checksum of the others."""
    if not row_ok(file_id, row):
        raise StoreFileError(
            f"{path}: {what} does not match its checksum, so it was damaged on disk, changed "
            "by another program, or came from another store file (a stray -wal). It is not "
            "read back; the file was left untouched: restore it from a backup "
            "(python code/run.py backup makes one), or move it away to start a new store."
        )


def memory_from_row(path: Path, file_id: str, dimension: int, row: tuple) -> Memory:
    """A Memory from a row of MEMORY_COLUMNS, checksum verified, or StoreFileError."""
    _, user_id, memory_id, *columns, _ = row
    check_row(path, file_id, row, f"the row of memory {memory_id!r} of user {user_id!r}")
    values = dict(zip(FIELDS, columns))
    try:
        values["embedding"] = unpack_vector(values["embedding"], dimension)
        return memory_from_fields(memory_id, user_id, values)
    except (TypeError, ValueError) as exc:
        raise StoreFileError(
            f"{path} holds a memory that cannot be read back (user {user_id!r}, id "
            f"{memory_id!r}): {exc}. The file was left untouched."
        ) from None


def memory_from_fields(memory_id: str, user_id: str, values: dict) -> Memory:
    """A Memory from its FIELDS values as any store keeps them (metadata as JSON text)."""
    last_accessed = values.pop("last_accessed")
    memory = Memory(
        memory_id,
        user_id=user_id,
        last_accessed=values["created_at"],  # set for real below: it may be earlier
        **{**values, "metadata": json.loads(values["metadata"])},
    )
    # Retrieval may stamp a recall slightly before created_at (two clocks), which the
    # constructor would refuse; plain assignment accepts it, as it did before saving.
    memory.last_accessed = last_accessed
    return memory
