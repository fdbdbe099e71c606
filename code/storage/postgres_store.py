"""The same memory store on PostgreSQL with pgvector: many processes, many machines, one database.

    store = PostgresMemoryStore(url, user_id="alice")  # url: MEMORY_LAB_DATABASE_URL
    Embedder().remember(store, "Alice prefers Groq", now=now)   # committed when add returns
    retrieve(store, query, now=now)                  # the unchanged retriever
    store.save(); store.close()

The store algorithm is storage/store.py's, as for SQLite; this is its PostgreSQL dialect
(%s for values, FOR UPDATE on the rows a change checks); the database under it (schema,
roles, policies, connecting) is storage/postgres_database.py. Vectors
are pgvector `vector` (float32, what a memory's embedding already is), so reopening gives
back exactly what the store held.

Isolation is enforced by the database, not only by this code's WHERE clauses
(storage/postgres_database.py, docs/postgres.md's trust table):
  - each user has a login role of its own (create_user, `python code/run.py pg-user`);
    the policies show and accept only the rows of the user mapped to `session_user`, and
    the role's grants let it lock, truncate or alter nothing that others use (deletes go
    through the function forget(), see _delete);
  - the shared role LAB_ROLE instead shows the rows of the setting memorylab.user_id,
    which _begin sets at every transaction: one trusted app, guarded against its own bugs;
  - a store refuses a role that would bypass the policies, and another user's role.
Links are kept by the database too: superseded_by is a foreign key within one user's rows,
checked when a transaction commits.

Errors name the cause: PostgresStoreError for an unreachable server, refused credentials,
a database without pgvector, a schema missing or of another version, or an unsafe role;
nothing is written before those checks pass.

Deliberately left out: connection pooling, seeing another process's new memories without
reopening, schema migrations (a schema of another version is refused), and vector search
(scale/pg_retrieval.py scores in SQL).
"""

from __future__ import annotations

from base.vectors import Float32Vector
from memory_store import Memory
from storage.postgres_database import (
    USER_SETTING,
    PostgresStoreError,
    check_database,
    connect,
    safe_url,
)
from storage.rows import FIELDS, memory_from_fields
from storage.sqlite_store import export_jsonl
from storage.store import DatabaseStore


class PostgresMemoryStore(DatabaseStore):
    """A MemoryStore whose memories live in PostgreSQL; scoped to one user.

    Inputs:
        url: a postgresql:// URL of the lab's role; None reads MEMORY_LAB_DATABASE_URL.
        user_id: whose memories this store holds, e.g. "alice".
        embedding_model: fix the model up front; a database already holding this user's
            memories from another model raises EmbeddingModelMismatch.
    Raises:
        PostgresStoreError when the database cannot be used (the cause is named).
    """

    placeholder = "%s"
    row_lock = " FOR UPDATE"  # the rows a change checks stay as read until it commits
    same = " IS NOT DISTINCT FROM "  # null-safe equality, for compare-and-set
    version = "xmin::text"  # the transaction that last wrote the row: changes with it
    columns = ("user_id", "id", *FIELDS)  # seq is the database's own (bigserial)
    refusal = PostgresStoreError

    def __init__(
        self, url: str | None = None, user_id: str = "default", embedding_model: str | None = None
    ) -> None:
        super().__init__(embedding_model, user_id=user_id)  # one user per store
        if url is None:
            from config import load_settings

            url = load_settings().database_url
            if url is None:
                raise ValueError(
                    "PostgresMemoryStore needs a database URL: pass one, or set "
                    "MEMORY_LAB_DATABASE_URL=postgresql://role:password@host/database"
                )
        self.url = safe_url(url)
        self._open(connect(url), embedding_model)

    def select(self, query: str, params=(), settings: dict | None = None) -> list[tuple]:
        """Rows of a read-only SQL query, run as this store's user (the policies apply).

        store.select("SELECT count(*) FROM memorylab.memories") -> [(12,)]
        settings: server settings for this query only, e.g. {"hnsw.ef_search": 100}.
        """
        with self._transaction(read_only=not self._block_open):
            for name, value in (settings or {}).items():
                self._run("SELECT set_config(?, ?, true)", (name, str(value)))
            cursor = self._db.execute(query, params)
            return cursor.fetchall() if cursor.description is not None else []

    def export_jsonl(self, target) -> int:
        """Write this user's memories to `target` (a path or text file), one JSON per line."""
        return export_jsonl(self, target)

    # --- the dialect (storage/store.py) -------------------------------------------------

    def _where(self) -> str:
        return self.url

    def _load(self, embedding_model: str | None) -> None:
        check_database(self._db, self.url, self.user_id)  # first: a role that bypasses them
        super()._load(embedding_model)

    def _begin(self, read_only: bool) -> None:
        self._run("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" if read_only else "BEGIN")
        # whose rows the policies show and accept, until this transaction ends
        self._run("SELECT set_config(?, ?, true)", (USER_SETTING, self.user_id))

    def _transaction_open(self) -> bool:
        return self._db.in_transaction()  # False once the connection broke: nothing to undo

    def _delete(self, memory_id: str) -> int:
        # subtle: a user's role has no DELETE grant (it would let it LOCK the table in any
        # mode, see postgres_database._grant); forget() deletes one row of its own user
        return self._run("SELECT memorylab.forget(?)", (memory_id,)).fetchone()[0]

    def _error(self, error: BaseException, read_only: bool) -> Exception | None:
        import psycopg

        if isinstance(error, psycopg.errors.ForeignKeyViolation):  # checked at COMMIT
            return ValueError(
                f"a superseded_by link of user {self.user_id!r} would name a memory that is not "
                f"stored in {self.url} (removed by another process?); nothing was changed"
            )
        if isinstance(error, psycopg.Error):  # postgres_database.Connection maps the rest
            return PostgresStoreError(f"{self.url}: {type(error).__name__}: {error}")
        return None

    def _read_user(self) -> tuple[str | None, int] | None:
        return self._run(
            "SELECT embedding_model, dimension FROM users WHERE user_id = ?", (self.user_id,)
        ).fetchone()

    def _memory_from_row(self, row: tuple) -> Memory:
        user_id, memory_id, *columns = row
        values = dict(zip(FIELDS, columns))
        vector = values["embedding"].to_numpy()  # pgvector's Vector: float32 already
        values["embedding"] = Float32Vector.from_bytes(vector.astype("<f4").tobytes())
        return memory_from_fields(memory_id, user_id, values)

    def _to_columns(self, row: tuple) -> tuple:
        import numpy as np

        values = dict(zip(FIELDS, row))
        values["embedding"] = np.asarray(values["embedding"], dtype=np.float32)  # pgvector's
        values["importance"] = float(values["importance"])
        return tuple(values[name] for name in FIELDS)

    def _new_rows(self, pairs: list[tuple[Memory, tuple]]) -> list[tuple]:
        return [(self.user_id, memory.id, *self._to_columns(row)) for memory, row in pairs]

    def _user_row(self) -> tuple:
        return self.user_id, self.embedding_model, self.dimension

    def _run_many(self, sql: str, rows: list[tuple]) -> int:
        with self._db.cursor() as cursor:
            cursor.executemany(sql, rows)  # pipelined: one round trip, not one a row
            return cursor.rowcount

    _has_counts: bool | None = None

    def _counts_table(self, writing: bool) -> bool:
        # install_schema makes it; a database installed before it had one counts when read
        if self._has_counts is None:
            (found,) = self._run(
                "SELECT to_regclass('memorylab.position_counts') IS NOT NULL"
            ).fetchone()
            self._has_counts = bool(found)
        return self._has_counts

    def _vector_of(self, stored):
        return stored.to_numpy()  # pgvector's Vector
