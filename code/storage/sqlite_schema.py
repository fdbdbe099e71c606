"""The store file's tables, schema version by schema version, and the migration between.

SCHEMA_VERSION (PRAGMA user_version) says which layout a file has. Version 2, today's:
memories and users carry a checksum per row (storage/rows.py), meta holds the file's
random identity (file_id), and triggers re-seal a row whenever any code updates it.

Schema 1 (the first release) kept embeddings as float64s and had no checksums and no
file identity. A file of schema 1 is migrated when it is opened for writing, inside one
write transaction, so a crash halfway leaves the file exactly as it was:

  1. a copy of the old file is written beside it first, with SQLite's backup API, as
     memory_lab.schema-1.sqlite3 (never over an existing file): older code can still
     read that one, and it is the way back (storage/sqlite_file.py, keep_copy);
  2. memories and users are copied into tables of today's layout, each vector packed as
     float32s where that is exact, each row sealed with its checksum; seq (the stream's
     order), every id, link, time and metadata stay as they were;
  3. user_version becomes 2, in the same transaction.

Deliberately left out: downgrades (open the copy from step 1 with the older code).
"""

from __future__ import annotations

import secrets
import sqlite3
import struct
from pathlib import Path

from storage.rows import FIELDS, MEMORY_COLUMNS, pack_vector, row_checksum, sealed_row

SCHEMA_VERSION = 2  # stored in PRAGMA user_version; bump it (and migrate) when tables change
OLDEST_SCHEMA = 1  # the oldest version this code can migrate (in place, on open)
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS memories (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,       -- insertion order: the stream's order
    user_id TEXT NOT NULL,
    id TEXT NOT NULL,
    text TEXT NOT NULL,
    kind TEXT NOT NULL,
    created_at REAL NOT NULL,                    -- epoch seconds
    last_accessed REAL NOT NULL,                 -- epoch seconds
    importance REAL NOT NULL,                    -- 1 to 10
    embedding BLOB NOT NULL,                     -- little-endian float32s (float64s if inexact)
    embedding_model TEXT,
    superseded_by TEXT,
    metadata TEXT NOT NULL,                      -- JSON object
    checksum BLOB NOT NULL,                      -- row_checksum(file_id, seq, user_id, id, ...)
    UNIQUE (user_id, id)
);
CREATE TABLE IF NOT EXISTS users (
    user_id TEXT PRIMARY KEY,
    embedding_model TEXT,                        -- NULL: hand-made vectors
    dimension INTEGER NOT NULL,
    checksum BLOB NOT NULL                       -- row_checksum(file_id, user_id, ...)
);
CREATE TABLE IF NOT EXISTS id_counters (         -- the last number handed out by next_id
    user_id TEXT NOT NULL,
    prefix TEXT NOT NULL,
    last_number INTEGER NOT NULL,
    PRIMARY KEY (user_id, prefix)
);
CREATE TABLE IF NOT EXISTS meta (                -- file_id: this file's random identity
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
-- Any UPDATE of a row, by any code, re-seals it: a writer cannot leave a stale checksum.
-- (A connection without the row_checksum function cannot update rows at all.)
CREATE TRIGGER IF NOT EXISTS memories_sealed
AFTER UPDATE OF seq, user_id, id, {", ".join(FIELDS)} ON memories
BEGIN
    UPDATE memories SET checksum = row_checksum(
        (SELECT value FROM meta WHERE key = 'file_id'), NEW.seq, NEW.user_id, NEW.id,
        {", ".join("NEW." + name for name in FIELDS)}
    ) WHERE seq = NEW.seq;
END;
CREATE TRIGGER IF NOT EXISTS users_sealed
AFTER UPDATE OF user_id, embedding_model, dimension ON users
BEGIN
    UPDATE users SET checksum = row_checksum(
        (SELECT value FROM meta WHERE key = 'file_id'), NEW.user_id, NEW.embedding_model,
        NEW.dimension
    ) WHERE user_id = NEW.user_id;
END;
"""
COLUMNS = {  # what each table must have, per schema version, for this code to read it
    1: {
        "memories": {"seq", "user_id", "id", *FIELDS},
        "users": {"user_id", "embedding_model", "dimension"},
        "id_counters": {"user_id", "prefix", "last_number"},
    },
    2: {
        "memories": {"seq", "user_id", "id", *FIELDS, "checksum"},
        "users": {"user_id", "embedding_model", "dimension", "checksum"},
        "id_counters": {"user_id", "prefix", "last_number"},
        "meta": {"key", "value"},
    },
}


def create_schema(db: sqlite3.Connection) -> None:
    """The tables of SCHEMA_VERSION and a new identity (inside the caller's transaction)."""
    for statement in _statements(SCHEMA):
        db.execute(statement)
    db.execute("INSERT INTO meta VALUES ('file_id', ?)", (secrets.token_hex(16),))
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")  # part of the transaction


def _statements(script: str) -> list[str]:
    """SCHEMA as single statements (executescript would COMMIT the caller's transaction).

    A trigger's body keeps its inner semicolons: a statement ends where SQLite says it does.
    """
    statements, current = [], ""
    for line in script.splitlines(keepends=True):
        if line.lstrip().startswith("--") or not line.strip():
            continue
        current += line
        if sqlite3.complete_statement(current):
            statements.append(current.strip())
            current = ""
    return statements


def backup_name(path: Path, version: int) -> Path:
    """memory_lab.sqlite3 -> memory_lab.schema-1.sqlite3 (then .schema-1.2..., never taken)."""
    candidate, n = path.with_name(f"{path.stem}.schema-{version}{path.suffix}"), 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.stem}.schema-{version}.{n}{path.suffix}")
    return candidate


def migrate(db: sqlite3.Connection, version: int) -> None:
    """Steps 2 and 3: migrate the file open in `db` (inside BEGIN IMMEDIATE) to today's.

    Step 1, the copy of the old file, is store_file.keep_copy, made before that BEGIN.
    """
    if version != 1:  # pragma: no cover - there is no other older version
        raise ValueError(f"no migration from schema version {version}")
    db.execute("ALTER TABLE memories RENAME TO memories_1")
    db.execute("ALTER TABLE users RENAME TO users_1")
    create_schema(db)  # today's tables, a new identity, user_version = 2
    file_id = db.execute("SELECT value FROM meta WHERE key = 'file_id'").fetchone()[0]
    users = db.execute("SELECT user_id, embedding_model, dimension FROM users_1").fetchall()
    db.executemany(
        "INSERT INTO users VALUES (?, ?, ?, ?)",
        [(*user, row_checksum(file_id, *user)) for user in users],
    )
    rows = db.execute(
        f"SELECT {', '.join(MEMORY_COLUMNS[:-1])} FROM memories_1 ORDER BY seq"
    ).fetchall()
    embedding = 3 + FIELDS.index("embedding")  # after seq, user_id, id
    new_rows = []
    for seq, user_id, memory_id, *columns in rows:
        blob = columns[embedding - 3]
        columns[embedding - 3] = pack_vector(struct.unpack(f"<{len(blob) // 8}d", blob))
        new_rows.append(sealed_row(file_id, seq, user_id, memory_id, tuple(columns)))
    db.executemany(
        f"INSERT INTO memories ({', '.join(MEMORY_COLUMNS)}) "
        f"VALUES ({', '.join('?' * len(MEMORY_COLUMNS))})",
        new_rows,
    )
    db.execute("DROP TABLE memories_1")
    db.execute("DROP TABLE users_1")
