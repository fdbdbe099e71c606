"""The database under the PostgreSQL store: its schema, roles and policies; connecting safely.

    install_schema(admin_url)          # once per database, as its administrator
    db = connect(url)                  # a psycopg connection with pgvector's types
    check_database(db, url)            # refuses a role that would bypass the policies

What storage/sqlite_file.py and sqlite_schema.py are to the SQLite store: the tables
(memories with a pgvector column, users with their embedding model, id counters), row-level
security on each, a NOLOGIN owner role and the lab's login role LAB_ROLE, which owns
nothing and cannot bypass the policies. Every error names its cause as a
PostgresStoreError (an unreachable server, refused credentials, no pgvector, a schema
missing or of another version, an unsafe role), with the password shown as ***.

Deliberately left out: reading and writing memories (storage/postgres_store.py, on the
algorithm of storage/store.py) and starting a server (storage/pg_server.py).
"""

from __future__ import annotations

import re

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


def connect(url: str):
    """A psycopg connection with pgvector's types, or PostgresStoreError naming the cause."""
    import psycopg
    from pgvector.psycopg import register_vector

    if not isinstance(url, str) or not url.startswith(("postgresql://", "postgres://")):
        raise ValueError(
            f"the database URL must be a string starting with postgresql://, got {safe_url(url)!r}"
        )
    db = bare_connection(url)
    try:
        register_vector(db)
    except psycopg.ProgrammingError:
        db.close()
        raise PostgresStoreError(
            f"the database at {safe_url(url)} has no pgvector extension (type vector not "
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
    where = safe_url(url)
    if "password authentication failed" in text or "no password supplied" in text:
        return f"the PostgreSQL server at {where} refused the credentials (wrong role or password)"
    if "does not exist" in text and "database" in text:
        return f"the PostgreSQL server at {where} has no such database: {message[-1]}"
    return f"cannot reach a PostgreSQL server at {where}: {message[0] if message else error}"


def safe_url(url) -> str:
    """The URL with its password replaced by ***, fit for an error message."""
    return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", str(url))


# --- installing the schema (as an administrator, once per database) ----------------------


def install_schema(admin_url: str, lab_password: str | None = None) -> None:
    """Create the pgvector extension, the tables, the policies and the lab's role. Idempotent.

    admin_url connects as a superuser (or the database's owner with CREATEROLE). The
    lab's role LAB_ROLE gets lab_password (when given) and only the rights it needs.
    """
    from psycopg import sql

    db = bare_connection(admin_url)
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


def bare_connection(url: str):
    import psycopg

    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT)
    except psycopg.OperationalError as error:
        raise PostgresStoreError(_why_not_connected(url, error)) from None


def check_database(db, url: str) -> None:
    """Refuse a role that bypasses row-level security, or a schema this code cannot read."""
    where = safe_url(url)
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
            "storage.postgres_database.install_schema(admin_url) once as its administrator"
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
