"""The same memory store on PostgreSQL with pgvector: many processes, many machines, one database.

    store = PostgresMemoryStore(url, user_id="alice")  # url: MEMORY_LAB_DATABASE_URL
    Embedder().remember(store, "Alice prefers Groq", now=now)   # committed when add returns
    retrieve(store, query, now=now)                  # the unchanged retriever
    store.save(); store.close()

The store algorithm is storage/store.py's, as for SQLite; this is its PostgreSQL dialect
(%s for values, FOR UPDATE on the rows a change checks) and the schema under it. Vectors
are pgvector `vector` (float32, what a memory's embedding already is), so reopening gives
back exactly what the store held.

Isolation is enforced by the database, not only by this code's WHERE clauses:
  - install_schema(admin_url) makes the tables as a NOLOGIN owner role, turns on row-level
    security, and creates the lab's login role LAB_ROLE, which owns nothing, is not a
    superuser and has no BYPASSRLS (any of those skips row-level security);
  - every transaction begins with set_config('memorylab.user_id', <user>, true), a setting
    that lasts until the transaction ends, and the policies show and accept only rows of
    that user; so even `SELECT * FROM memorylab.memories` sees one user's rows;
  - a store refuses to open through a role that would bypass the policies.
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

import re

from memory_store import Memory
from storage.rows import FIELDS, memory_from_fields
from storage.sqlite_store import export_jsonl
from storage.store import DatabaseStore

SCHEMA = "memorylab"
SCHEMA_VERSION = 1  # in memorylab.schema_version; a database of another version is refused
OWNER_ROLE = "memorylab_owner"  # owns the tables; cannot log in
LAB_ROLE = "memorylab_lab"  # what the lab connects as: row-level security applies to it
USER_SETTING = "memorylab.user_id"  # per transaction: whose rows the policies show
CONNECT_TIMEOUT = 10  # seconds

TABLES_SQL = f"""
CREATE TABLE {SCHEMA}.schema_version (version integer NOT NULL);
CREATE TABLE {SCHEMA}.memories (
    seq bigserial,                                  -- insertion order: the stream's order
    user_id text NOT NULL,
    id text NOT NULL,
    text text NOT NULL,
    kind text NOT NULL,
    created_at double precision NOT NULL,           -- epoch seconds
    last_accessed double precision NOT NULL,        -- epoch seconds
    importance double precision NOT NULL,           -- 1 to 10
    embedding vector NOT NULL,                      -- float32, any one length per user
    embedding_model text,
    superseded_by text,
    metadata text NOT NULL,                         -- JSON object, exactly as saved
    PRIMARY KEY (user_id, id),
    FOREIGN KEY (user_id, superseded_by) REFERENCES {SCHEMA}.memories (user_id, id)
        DEFERRABLE INITIALLY DEFERRED               -- a batch may link forwards
);
CREATE INDEX memories_by_user ON {SCHEMA}.memories (user_id, seq);
CREATE TABLE {SCHEMA}.users (
    user_id text PRIMARY KEY,
    embedding_model text,                           -- NULL: hand-made vectors
    dimension integer NOT NULL
);
CREATE TABLE {SCHEMA}.id_counters (
    user_id text NOT NULL,
    prefix text NOT NULL,
    last_number bigint NOT NULL,
    PRIMARY KEY (user_id, prefix)
);
"""
USER_TABLES = ("memories", "users", "id_counters")


class PostgresStoreError(RuntimeError):
    """The database cannot be used as a memory store; nothing was written to it."""


def _connect(url: str):
    """A psycopg connection with pgvector's types, or PostgresStoreError naming the cause."""
    import psycopg
    from pgvector.psycopg import register_vector

    if not isinstance(url, str) or not url.startswith(("postgresql://", "postgres://")):
        raise ValueError(
            f"the database URL must be a string starting with postgresql://, got {_safe(url)!r}"
        )
    db = _bare_connection(url)
    try:
        register_vector(db)
    except psycopg.ProgrammingError:
        db.close()
        raise PostgresStoreError(
            f"the database at {_safe(url)} has no pgvector extension (type vector not "
            "found): run install_schema(admin_url), or CREATE EXTENSION vector as its owner"
        ) from None
    # the store's SQL (storage/store.py) names its tables as SQLite does: memories, users
    db.execute(
        "SELECT set_config('search_path', %s || ', ' || current_setting('search_path'), false)",
        (SCHEMA,),
    )
    return db


def _why_not_connected(url: str, error: Exception) -> str:
    message = str(error).strip().splitlines()
    text = " ".join(message).lower()
    where = _safe(url)
    if "password authentication failed" in text or "no password supplied" in text:
        return f"the PostgreSQL server at {where} refused the credentials (wrong role or password)"
    if "does not exist" in text and "database" in text:
        return f"the PostgreSQL server at {where} has no such database: {message[-1]}"
    return f"cannot reach a PostgreSQL server at {where}: {message[0] if message else error}"


def _safe(url) -> str:
    """The URL with its password replaced by ***, fit for an error message."""
    return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", str(url))


# --- installing the schema (as an administrator, once per database) ----------------------


def install_schema(admin_url: str, lab_password: str | None = None) -> None:
    """Create the pgvector extension, the tables, the policies and the lab's role. Idempotent.

    admin_url connects as a superuser (or the database's owner with CREATEROLE). The
    lab's role LAB_ROLE gets lab_password (when given) and only the rights it needs.
    """
    from psycopg import sql

    db = _bare_connection(admin_url)
    try:
        with db.transaction():
            db.execute("CREATE EXTENSION IF NOT EXISTS vector")
            for role, login in ((OWNER_ROLE, "NOLOGIN"), (LAB_ROLE, "LOGIN")):  # our names
                exists = db.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,))
                if exists.fetchone() is None:
                    db.execute(f"CREATE ROLE {role} {login} NOSUPERUSER NOBYPASSRLS NOCREATEDB")
            if lab_password is not None:
                db.execute(
                    sql.SQL("ALTER ROLE {} PASSWORD {}").format(
                        sql.Identifier(LAB_ROLE), sql.Literal(lab_password)
                    )
                )
            present = db.execute(
                "SELECT 1 FROM pg_namespace WHERE nspname = %s", (SCHEMA,)
            ).fetchone()
            if present is None:
                db.execute(f"CREATE SCHEMA {SCHEMA} AUTHORIZATION {OWNER_ROLE}")
                db.execute(f"SET LOCAL ROLE {OWNER_ROLE}")  # so the tables are its own
                db.execute(TABLES_SQL)
                db.execute(f"INSERT INTO {SCHEMA}.schema_version VALUES (%s)", (SCHEMA_VERSION,))
                mine = f"user_id = current_setting('{USER_SETTING}', true)"
                for table in USER_TABLES:
                    db.execute(f"ALTER TABLE {SCHEMA}.{table} ENABLE ROW LEVEL SECURITY")
                    db.execute(f"ALTER TABLE {SCHEMA}.{table} FORCE ROW LEVEL SECURITY")
                    db.execute(
                        f"CREATE POLICY one_user ON {SCHEMA}.{table} USING ({mine}) "
                        f"WITH CHECK ({mine})"
                    )
                db.execute("RESET ROLE")
            db.execute(f"GRANT USAGE ON SCHEMA {SCHEMA} TO {LAB_ROLE}")
            db.execute(f"GRANT SELECT ON {SCHEMA}.schema_version TO {LAB_ROLE}")
            for table in USER_TABLES:
                db.execute(
                    f"GRANT SELECT, INSERT, UPDATE, DELETE ON {SCHEMA}.{table} TO {LAB_ROLE}"
                )
            db.execute(f"GRANT USAGE ON SEQUENCE {SCHEMA}.memories_seq_seq TO {LAB_ROLE}")
    finally:
        db.close()


def _bare_connection(url: str):
    import psycopg

    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT)
    except psycopg.OperationalError as error:
        raise PostgresStoreError(_why_not_connected(url, error)) from None


def _check_database(db, url: str) -> None:
    """Refuse a role that bypasses row-level security, or a schema this code cannot read."""
    where = _safe(url)
    role, superuser, bypass = db.execute(
        "SELECT rolname, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user"
    ).fetchone()
    if superuser or bypass:
        raise PostgresStoreError(
            f"the URL {where} connects as {role!r}, "
            f"a {'superuser' if superuser else 'role with BYPASSRLS'}: row-level security "
            "would not keep users apart. Connect as the lab's role "
            f"({LAB_ROLE!r}), which install_schema creates"
        )
    version = db.execute("SELECT to_regclass(%s)", (f"{SCHEMA}.schema_version",)).fetchone()[0]
    if version is None:
        raise PostgresStoreError(
            f"the database at {where} holds no Memory Lab schema: run "
            "storage.postgres_store.install_schema(admin_url) once as its administrator"
        )
    owner = db.execute(
        "SELECT pg_has_role(current_user, tableowner, 'USAGE') FROM pg_tables "
        "WHERE schemaname = %s AND tablename = 'memories'",
        (SCHEMA,),
    ).fetchone()
    if owner is None:
        raise PostgresStoreError(f"the database at {where} has no {SCHEMA}.memories table")
    if owner[0]:
        raise PostgresStoreError(
            f"the URL {where} connects as {role!r}, which owns the memory tables: an owner "
            f"can switch row-level security off. Connect as the lab's role ({LAB_ROLE!r})"
        )
    rows = db.execute(f"SELECT version FROM {SCHEMA}.schema_version").fetchall()
    if rows != [(SCHEMA_VERSION,)]:
        found = ", ".join(str(v) for (v,) in rows) or "none"
        raise PostgresStoreError(
            f"the database at {where} has Memory Lab schema version {found}; this code "
            f"reads version {SCHEMA_VERSION}. Use the Memory Lab that made it, or a new database"
        )


# --- the store ---------------------------------------------------------------------------


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
        self.url = _safe(url)
        self._open(_connect(url), embedding_model)

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
        _check_database(self._db, self.url)  # first: a role that would bypass the policies
        super()._load(embedding_model)

    def _begin(self, read_only: bool) -> None:
        self._run("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" if read_only else "BEGIN")
        # whose rows the policies show and accept, until this transaction ends
        self._run("SELECT set_config(?, ?, true)", (USER_SETTING, self.user_id))

    def _transaction_open(self) -> bool:
        import psycopg

        return self._db.info.transaction_status != psycopg.pq.TransactionStatus.IDLE

    def _error(self, error: BaseException, read_only: bool) -> Exception | None:
        import psycopg

        if isinstance(error, psycopg.errors.ForeignKeyViolation):  # checked at COMMIT
            return ValueError(
                f"a superseded_by link of user {self.user_id!r} would name a memory that is not "
                f"stored in {self.url} (removed by another process?); nothing was changed"
            )
        return None

    def _read_user(self) -> tuple[str | None, int] | None:
        return self._run(
            "SELECT embedding_model, dimension FROM users WHERE user_id = ?", (self.user_id,)
        ).fetchone()

    def _memory_from_row(self, row: tuple) -> Memory:
        user_id, memory_id, *columns = row
        values = dict(zip(FIELDS, columns))
        values["embedding"] = tuple(values["embedding"].to_numpy().tolist())  # pgvector's Vector
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
