"""The database under the PostgreSQL store: schema, roles, policies; connecting, and reconnecting.

    install_schema(admin_url)              # once per database, as its administrator
    url = create_user(admin_url, "alice")  # alice's own login role; prints nothing, returns URL
    db = connect(url)                      # a Connection: psycopg with pgvector, reconnecting
    check_database(db, url, "alice")       # refuses a role that would bypass the policies

What storage/sqlite_file.py and sqlite_schema.py are to the SQLite store: the tables
(memories with a pgvector column, users with their embedding model, id counters), row-level
security on each, a NOLOGIN owner role, and the login roles the lab connects as:

  - one login role per user (create_user): the policies show and accept only the rows of
    the user mapped to `session_user` (which neither SET ROLE nor a setting changes), and
    its grants are narrow (table-level SELECT and INSERT, UPDATE of named columns only,
    deletes through the SECURITY DEFINER function forget()), so it cannot LOCK a table in
    any mode that blocks another user, TRUNCATE, or alter anything shared;
  - the old shared role LAB_ROLE, whose user is the setting memorylab.user_id that the
    client itself sets: one trusted app, which this guards against its own bugs only.

Every error names its cause as a PostgresStoreError (an unreachable server, refused
credentials, no pgvector, a schema missing or of another version, an unsafe role, a lost
connection), with the password shown as ***. A connection lost between transactions is
reopened with backoff; one lost inside a transaction raises ConnectionLost, after which
nothing of that transaction was written, except a COMMIT whose reply was lost: its
outcome is looked up in the database (pg_xact_status of its transaction id), never
guessed and never replayed.

What no role may use is closed by install_schema (_close_shared_resources): temporary
tables, large objects, and the planner's statistics of the lab's tables (so EXPLAIN says
nothing of another user's rows); each role's temp_file_limit is its administrator's.

Deliberately left out: reading and writing memories (storage/postgres_store.py, on the
algorithm of storage/store.py), starting a server (storage/pg_server.py), quotas (a
user's role may fill the disk with its own rows), and settings PostgreSQL lets any role
raise for itself (work_mem, the timeouts): docs/postgres.md, "Neighbours on one server".
"""

from __future__ import annotations

import re
import secrets
import time
from urllib.parse import quote

SCHEMA = "memorylab"
SCHEMA_VERSION = 2  # in memorylab.schema_version; 1 is upgraded by install_schema, others refused
OWNER_ROLE = "memorylab_owner"  # owns the tables; cannot log in
USERS_ROLE = "memorylab_users"  # NOLOGIN: holds the grants every login role of the lab has
LAB_ROLE = "memorylab_lab"  # the shared role of one trusted app: its user is a setting
USER_ROLE_PREFIX = "memorylab_u_"  # + 24 random hex digits (user_roles says whose): a login
USER_SETTING = "memorylab.user_id"  # LAB_ROLE only: whose rows the policies show
CONNECT_TIMEOUT = 10  # seconds
RECONNECT_SECONDS = 30.0  # how long a lost connection is retried (server restarts take ~1 s)
USER_LIMITS = {  # what create_user sets on each user's role (an administrator may change them)
    "connection_limit": 8,
    "statement_timeout": "60s",
    "lock_timeout": "10s",
    "idle_in_transaction_session_timeout": "60s",
    "transaction_timeout": "120s",
    "work_mem": "4MB",
    "temp_file_limit": "64MB",
}
# the limits whose breach ends the session itself (FATAL), so the client sees only a
# closed connection: a lost connection names the one whose time had run out
SESSION_ENDING_LIMITS = ("transaction_timeout",)
# subtle: of USER_LIMITS only temp_file_limit is a superuser-only setting, which a user's
# role cannot raise; the others are the role's defaults, which its own SET changes
# (PostgreSQL has no way to fix a user-settable parameter): docs/postgres.md says what
# bounds them instead
SUPERUSER_ONLY_LIMITS = ("temp_file_limit",)
# the functions that make or grow a large object: a large object outlives its session and
# counts against no role, so one user could fill the disk (and WAL) for everyone
LARGE_OBJECT_WRITERS = (
    "lo_creat(integer)", "lo_create(oid)", "lo_from_bytea(oid, bytea)", "lo_import(text)",
    "lo_import(text, oid)", "lowrite(integer, bytea)", "lo_put(oid, bigint, bytea)",
)  # fmt: skip
# the columns a store changes in place (storage/rows.py's FIELDS): never user_id, id or seq
UPDATABLE = (
    "text", "kind", "created_at", "last_accessed", "importance", "embedding",
    "embedding_model", "superseded_by", "metadata",
)  # fmt: skip

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
USER_TABLES = ("memories", "users", "id_counters", "position_counts")
TRUSTED_NORM = (1e-15, 1e15)  # vector lengths whose float32 squares neither under- nor overflow

# subtle: every function below is SECURITY DEFINER (it runs as OWNER_ROLE) with a fixed
# search_path that ends in pg_temp, and names every object by its schema: a client's own
# temporary table or function called `memories` or `session_user_id` is never what runs.
VERSION_2_SQL = f"""
ALTER TABLE {SCHEMA}.memories ADD COLUMN IF NOT EXISTS norm_trusted boolean
    GENERATED ALWAYS AS (vector_norm(embedding) BETWEEN {TRUSTED_NORM[0]} AND {TRUSTED_NORM[1]})
    STORED;                                         -- float32 squares neither under- nor overflow
CREATE INDEX IF NOT EXISTS memories_untrusted ON {SCHEMA}.memories (user_id)
    WHERE NOT norm_trusted;                         -- rare rows every ranking must rescore
CREATE TABLE IF NOT EXISTS {SCHEMA}.user_roles (   -- no grants: read by the functions only
    role_name name PRIMARY KEY,
    user_id text NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS {SCHEMA}.position_counts (  -- the hybrid's document frequencies
    user_id text PRIMARY KEY,
    last_seq bigint NOT NULL,                       -- the user's highest seq when counted
    documents bigint NOT NULL,                      -- the user's rows when counted
    counts bytea NOT NULL                           -- little-endian int32s, one a position
);
CREATE OR REPLACE FUNCTION {SCHEMA}.session_user_id() RETURNS text
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT CASE WHEN session_user = '{LAB_ROLE}'
                THEN current_setting('{USER_SETTING}', true)
                ELSE (SELECT user_id FROM {SCHEMA}.user_roles WHERE role_name = session_user)
           END
$$;
CREATE OR REPLACE FUNCTION {SCHEMA}.forget(memory_id text) RETURNS integer
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    WITH gone AS (
        DELETE FROM {SCHEMA}.memories
        WHERE user_id = {SCHEMA}.session_user_id() AND id = memory_id
        RETURNING 1
    )
    SELECT count(*)::integer FROM gone
$$;
REVOKE ALL ON FUNCTION {SCHEMA}.session_user_id() FROM PUBLIC;
REVOKE ALL ON FUNCTION {SCHEMA}.forget(text) FROM PUBLIC;
"""
# subtle: (SELECT f()) is an InitPlan, computed once per statement; a bare f() in a
# policy would be called for every row scanned (a SECURITY DEFINER call is never inlined)
MINE = f"user_id = (SELECT {SCHEMA}.session_user_id())"


class PostgresStoreError(RuntimeError):
    """The database cannot be used as a memory store; nothing was written to it."""


class ConnectionLost(PostgresStoreError):
    """The connection broke inside a transaction, which the server rolled back: nothing of
    it was written. The next call reconnects; the operation may simply be retried."""

    retryable = True


# --- connecting ----------------------------------------------------------------------------


def connect(url: str) -> Connection:
    """A Connection (psycopg with pgvector's types), or PostgresStoreError naming the cause."""
    if not isinstance(url, str) or not url.startswith(("postgresql://", "postgres://")):
        raise ValueError(
            f"the database URL must be a string starting with postgresql://, got {safe_url(url)!r}"
        )
    return Connection(url)


def _open_raw(url: str):
    """One psycopg connection, set up for the store: pgvector's types, our schema first."""
    import psycopg
    from pgvector.psycopg import register_vector

    db = bare_connection(url)
    try:
        register_vector(db)
    except psycopg.ProgrammingError:
        db.close()
        raise PostgresStoreError(
            f"the database at {safe_url(url)} has no pgvector extension (type vector not "
            "found): run install_schema(admin_url), or CREATE EXTENSION vector as its owner"
        ) from None
    except psycopg.Error as error:
        db.close()
        raise PostgresStoreError(f"{safe_url(url)}: {_cause(error)}") from None
    # the store's SQL (storage/store.py) names its tables as SQLite does: memories, users;
    # the same statement reads the session's time limits, which a lost connection may name
    limits = db.execute(
        "SELECT set_config('search_path', %s || ', ' || current_setting('search_path'), false), "
        + ", ".join(
            f"(SELECT setting::bigint FROM pg_settings WHERE name = '{name}')"
            for name in SESSION_ENDING_LIMITS
        ),
        (SCHEMA,),
    ).fetchone()[1:]
    return db, dict(zip(SESSION_ENDING_LIMITS, limits))


class Connection:
    """A psycopg connection that survives a server restart or a terminated session.

    execute(), cursor(), info and close() are psycopg's. Outside a transaction a lost
    connection is reopened (backoff from 50 ms to 1 s, for RECONNECT_SECONDS) and the
    statement (a BEGIN, or a read) is sent again: nothing had run. Inside one, the server
    has rolled the transaction back, so ConnectionLost says nothing of it was written, and
    the next statement reconnects. A COMMIT that breaks is the one case whose outcome is
    unknown: its transaction id, read just before, is looked up after reconnecting, and
    the COMMIT counts as done only if the database says that transaction committed.
    Every other driver error becomes PostgresStoreError naming the cause, except the
    constraint violations that the store's dialect turns into ValueError.
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self.where = safe_url(url)
        self.reconnects = 0  # how many times a lost connection was reopened
        self._raw, self._limits = _open_raw(url)
        self._began = time.monotonic()  # when the open transaction began
        self._lost = False  # broken inside a transaction: the next BEGIN reconnects
        self._read_only = False  # the open transaction began READ ONLY

    # --- what the store uses ---------------------------------------------------------

    @property
    def info(self):
        return self._raw.info

    @property
    def closed(self) -> bool:
        return self._raw is None

    def in_transaction(self) -> bool:
        import psycopg

        if self._raw is None or self._lost or self._raw.broken:
            return False  # the server ended it when the connection broke
        return self._raw.info.transaction_status != psycopg.pq.TransactionStatus.IDLE

    def execute(self, query, params=None):
        import psycopg

        if self._raw is None:
            raise PostgresStoreError(f"the connection to {self.where} is closed")
        text = query.strip().upper() if isinstance(query, str) else ""
        if self._lost or self._raw.broken:
            if text.startswith("ROLLBACK"):
                return None  # the server rolled back when the connection broke
            if self._lost and not text.startswith("BEGIN"):
                raise ConnectionLost(
                    f"the connection to {self.where} was lost inside a transaction, which "
                    "the server rolled back: nothing of it was written"
                )
            self._reconnect()
        if text == "COMMIT":
            return self._commit()
        if text.startswith("BEGIN"):
            self._read_only = "READ ONLY" in text
            self._began = time.monotonic()
        idle = not self.in_transaction()
        try:
            return self._raw.execute(query, params)
        except psycopg.Error as error:
            if not self._raw.broken:
                raise _mapped(error, self.where) from None
            if idle and text.startswith(("BEGIN", "SHOW")):
                # nothing ran, or nothing that writes: sent again on a new connection
                self._reconnect()
                try:
                    return self._raw.execute(query, params)
                except psycopg.Error as again:
                    raise _mapped(again, self.where) from None
            if idle:  # subtle: a statement of its own (autocommit) may or may not have run
                raise PostgresStoreError(
                    f"the connection to {self.where} was lost ({_cause(error)}) while a "
                    "statement outside any transaction ran: whether it ran is unknown"
                ) from None
            self._lost = True
            raise self._lost_error(error) from None

    def cursor(self):
        return _Cursor(self, self._raw.cursor())

    def close(self) -> None:
        if self._raw is not None:
            raw, self._raw = self._raw, None
            raw.close()

    def __getattr__(self, name):  # transaction(), pgconn, ...: psycopg's own
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._raw, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- faults --------------------------------------------------------------------

    def _commit(self):
        import psycopg

        try:
            if self._read_only:  # subtle: wrote nothing, so its outcome changes nothing
                xid = None
            else:
                (xid,) = self._raw.execute("SELECT pg_current_xact_id_if_assigned()").fetchone()
        except psycopg.Error as error:
            if not self._raw.broken:
                raise _mapped(error, self.where) from None
            self._lost = True
            raise self._lost_error(error) from None
        try:
            return self._raw.execute("COMMIT")
        except psycopg.Error as error:
            if not self._raw.broken:
                raise _mapped(error, self.where) from None
            if xid is None:
                return None  # it wrote nothing: committed or not, the database is the same
            self._reconnect()
            status = self.transaction_status(xid)
            if status == "committed":
                return None  # the COMMIT went through; only its reply was lost
            raise ConnectionLost(
                f"the connection to {self.where} was lost during COMMIT ({_cause(error)}); "
                f"the database says transaction {xid} was {status or 'not committed'}: "
                "nothing of it was written"
            ) from None

    def transaction_status(self, xid, wait: float = 10.0) -> str | None:
        """'committed', 'aborted' or None (unknown to the server) for transaction `xid`.

        A transaction of a session that is being terminated is 'in progress' until its
        backend has rolled it back: this waits for that, up to `wait` seconds.
        """
        deadline = time.monotonic() + wait
        while True:
            (status,) = self.execute("SELECT pg_xact_status(%s)", (xid,)).fetchone()
            if status != "in progress" or time.monotonic() > deadline:
                return status
            time.sleep(0.02)

    def _reconnect(self) -> None:
        """Reopen the connection, retrying with backoff while the server restarts."""
        if self._raw is not None:
            self._raw.close()
        delay, deadline = 0.05, time.monotonic() + RECONNECT_SECONDS
        while True:
            try:
                self._raw, self._limits = _open_raw(self.url)
                break
            except PostgresStoreError as error:
                if time.monotonic() + delay > deadline:
                    raise PostgresStoreError(
                        f"the connection to {self.where} was lost and could not be reopened "
                        f"in {RECONNECT_SECONDS:g} s: {error}"
                    ) from None
                time.sleep(delay)
                delay = min(1.0, delay * 2)
        self._lost = False
        self.reconnects += 1

    def _lost_error(self, error) -> ConnectionLost:
        return ConnectionLost(
            f"the connection to {self.where} was lost ({_cause(error)}) inside a "
            "transaction, which the server rolled back: nothing of it was written; the "
            f"next call reconnects{self._limit_reached()}"
        )

    def _limit_reached(self) -> str:
        """Why the server may have ended the session: a transaction that outlived the
        role's transaction_timeout (one extend of very many memories on a busy machine)."""
        limit = self._limits.get("transaction_timeout") or 0  # milliseconds; 0: none
        took = time.monotonic() - self._began
        if limit and took >= limit / 1000:
            return (
                f". The transaction had run {took:.0f} s, and this role's transaction_timeout "
                f"is {limit / 1000:g} s: the server ends a session whose transaction runs "
                "longer. Write in smaller transactions (store.extend of fewer memories at "
                "a time), or have the administrator raise the role's transaction_timeout "
                "(create_user(..., transaction_timeout=...))"
            )
        return ""


class _Cursor:
    """psycopg's cursor, its driver errors named as Connection names them."""

    def __init__(self, connection: Connection, cursor) -> None:
        self._connection, self._cursor = connection, cursor

    def executemany(self, query, rows):
        import psycopg

        try:
            return self._cursor.executemany(query, rows)
        except psycopg.Error as error:
            if self._connection._raw.broken:
                self._connection._lost = True
                raise self._connection._lost_error(error) from None
            raise _mapped(error, self._connection.where) from None

    def __getattr__(self, name):
        return getattr(self._cursor, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self._cursor.close()


def _cause(error) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


def _mapped(error, where: str) -> Exception:
    """The error to raise for a psycopg error on a working connection."""
    import psycopg

    if isinstance(error, psycopg.errors.IntegrityError):
        return error  # the dialect's: a link to nothing becomes ValueError
    if isinstance(error, psycopg.errors.QueryCanceled):
        return PostgresStoreError(
            f"{where} cancelled the statement ({_cause(error)}): a statement_timeout or "
            "lock_timeout, or a cancel request; nothing of its transaction was written"
        )
    if isinstance(error, psycopg.errors.InsufficientPrivilege):
        return PostgresStoreError(f"{where} refused the statement: {_cause(error)}")
    return PostgresStoreError(f"{where}: {type(error).__name__}: {_cause(error)}")


def _why_not_connected(url: str, error: Exception) -> str:
    message = str(error).strip().splitlines()
    text = " ".join(message).lower()
    where = safe_url(url)
    if "password authentication failed" in text or "no password supplied" in text:
        return f"the PostgreSQL server at {where} refused the credentials (wrong role or password)"
    if "does not exist" in text and "database" in text:
        return f"the PostgreSQL server at {where} has no such database: {message[-1]}"
    if "too many connections for role" in text:
        return f"the PostgreSQL server at {where} refused: {message[-1]} (its CONNECTION LIMIT)"
    return f"cannot reach a PostgreSQL server at {where}: {message[0] if message else error}"


def safe_url(url) -> str:
    """The URL with its password replaced by ***, fit for an error message."""
    return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", str(url))


def with_login(url: str, role: str, password: str) -> str:
    """`url` with its role and password replaced: the same server and database."""
    head, sep, tail = url.partition("://")
    tail = tail.split("@", 1)[1] if "@" in tail else tail
    return f"{head}{sep}{quote(role, safe='')}:{quote(password, safe='')}@{tail}"


# --- installing the schema (as an administrator, once per database) ----------------------


def install_schema(admin_url: str, lab_password: str | None = None) -> None:
    """Create the pgvector extension, the tables, the policies and the roles. Idempotent.

    admin_url connects as a superuser (or the database's owner with CREATEROLE). A schema
    of version 1 (the shared role only, table-wide grants) is upgraded in place. The shared
    role LAB_ROLE gets lab_password (when given); users' own roles come from create_user.
    """
    from psycopg import sql

    db = bare_connection(admin_url)
    try:
        with db.transaction():
            db.execute("CREATE EXTENSION IF NOT EXISTS vector")
            for role, login in ((OWNER_ROLE, "NOLOGIN"), (USERS_ROLE, "NOLOGIN"),
                                (LAB_ROLE, "LOGIN")):  # fmt: skip
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
            db.execute(f"SET LOCAL ROLE {OWNER_ROLE}")  # so what it makes is the owner's
            if present is None:
                db.execute(TABLES_SQL)
                db.execute(f"INSERT INTO {SCHEMA}.schema_version VALUES (%s)", (SCHEMA_VERSION,))
            (version,) = db.execute(f"SELECT max(version) FROM {SCHEMA}.schema_version").fetchone()
            if version not in (1, SCHEMA_VERSION):
                db.execute("RESET ROLE")
                return  # another version: check_database names it, nothing is changed
            db.execute(VERSION_2_SQL)
            for table in USER_TABLES:
                db.execute(f"ALTER TABLE {SCHEMA}.{table} ENABLE ROW LEVEL SECURITY")
                db.execute(f"ALTER TABLE {SCHEMA}.{table} FORCE ROW LEVEL SECURITY")
                db.execute(f"DROP POLICY IF EXISTS one_user ON {SCHEMA}.{table}")
                db.execute(
                    f"CREATE POLICY one_user ON {SCHEMA}.{table} USING ({MINE}) WITH CHECK ({MINE})"
                )
            db.execute(f"UPDATE {SCHEMA}.schema_version SET version = %s", (SCHEMA_VERSION,))
            db.execute("RESET ROLE")
            _grant(db)
            _close_shared_resources(db)
    finally:
        db.close()


def _close_shared_resources(db) -> None:
    """What no role of the lab may use, because it counts against no role: temporary
    tables (TEMP on the database) and large objects (their writing functions), both
    revoked from PUBLIC; and every column's statistics (target 0, the gathered ones
    deleted), so the planner's estimates say nothing of any user's rows.

    Revoking a pg_catalog function takes a superuser; a database owner that is not one
    gets the rest, and check_database's caller sees the large objects still open.
    """
    (database,) = db.execute("SELECT current_database()").fetchone()
    db.execute(f'REVOKE TEMPORARY ON DATABASE "{database}" FROM PUBLIC')
    (superuser,) = db.execute(
        "SELECT rolsuper FROM pg_roles WHERE rolname = current_user"
    ).fetchone()
    if superuser:
        for function in LARGE_OBJECT_WRITERS:
            db.execute(f"REVOKE EXECUTE ON FUNCTION pg_catalog.{function} FROM PUBLIC")
    for table in USER_TABLES:
        columns = db.execute(
            "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 "
            "AND NOT attisdropped AND attstattarget IS DISTINCT FROM 0",
            (f"{SCHEMA}.{table}",),
        ).fetchall()
        for (column,) in columns:
            db.execute(f'ALTER TABLE {SCHEMA}.{table} ALTER COLUMN "{column}" SET STATISTICS 0')
        if superuser:  # gathered before: the planner would go on reading them
            db.execute(
                "DELETE FROM pg_statistic WHERE starelid = %s::regclass", (f"{SCHEMA}.{table}",)
            )


def _grant(db) -> None:
    """The narrow grants: nothing that lets one role lock, truncate or alter what others use.

    PostgreSQL lets LOCK TABLE take ACCESS SHARE with SELECT, ROW EXCLUSIVE with INSERT,
    and every stronger mode (each of which blocks other users' writes) only with
    table-level UPDATE, DELETE or TRUNCATE: a column-level UPDATE does not count. So the
    lab's roles get table-level SELECT and INSERT, UPDATE of the columns a store changes,
    and deletes through forget().
    """
    # subtle: a role of version 1 had table-wide UPDATE and DELETE; revoked first
    for role in (LAB_ROLE, USERS_ROLE):
        db.execute(f"REVOKE ALL ON ALL TABLES IN SCHEMA {SCHEMA} FROM {role}")
    db.execute(f"GRANT {USERS_ROLE} TO {LAB_ROLE} WITH INHERIT TRUE, SET FALSE")
    db.execute(f"GRANT USAGE ON SCHEMA {SCHEMA} TO {USERS_ROLE}")
    db.execute(f"GRANT SELECT ON {SCHEMA}.schema_version TO {USERS_ROLE}")
    db.execute(f"GRANT SELECT, INSERT ON {SCHEMA}.memories TO {USERS_ROLE}")
    db.execute(f"GRANT UPDATE ({', '.join(UPDATABLE)}) ON {SCHEMA}.memories TO {USERS_ROLE}")
    db.execute(f"GRANT SELECT, INSERT ON {SCHEMA}.users TO {USERS_ROLE}")
    db.execute(f"GRANT SELECT, INSERT ON {SCHEMA}.id_counters TO {USERS_ROLE}")
    db.execute(f"GRANT UPDATE (last_number) ON {SCHEMA}.id_counters TO {USERS_ROLE}")
    db.execute(f"GRANT SELECT, INSERT ON {SCHEMA}.position_counts TO {USERS_ROLE}")
    db.execute(
        f"GRANT UPDATE (last_seq, documents, counts) ON {SCHEMA}.position_counts TO {USERS_ROLE}"
    )
    db.execute(f"GRANT USAGE ON SEQUENCE {SCHEMA}.memories_seq_seq TO {USERS_ROLE}")
    for function in ("session_user_id()", "forget(text)"):
        db.execute(f"GRANT EXECUTE ON FUNCTION {SCHEMA}.{function} TO {USERS_ROLE}")


def user_role(admin_url_or_db, user_id: str) -> str | None:
    """The login role of `user_id` (None if it has none), read as the administrator.

    Role names are random (USER_ROLE_PREFIX + 24 hex digits), kept with their user in
    user_roles, which no user's role can read: every role can list every role's name
    (pg_roles), and a name made from the user id (a hash) could be confirmed by hashing a
    guess.
    """
    db = bare_connection(admin_url_or_db) if isinstance(admin_url_or_db, str) else admin_url_or_db
    try:
        row = db.execute(
            f"SELECT role_name FROM {SCHEMA}.user_roles WHERE user_id = %s", (user_id,)
        ).fetchone()
    finally:
        if db is not admin_url_or_db:
            db.close()
    return None if row is None else row[0]


def create_user(admin_url: str, user_id: str, password: str | None = None, **limits) -> str:
    """Create (or re-key) `user_id`'s own login role; returns its URL. As the administrator.

    The role sees and changes only `user_id`'s rows, and has USER_LIMITS (connection_limit,
    statement_timeout, lock_timeout, idle_in_transaction_session_timeout: pass any to
    override). Called again for the same user, it sets a new password: the old URL stops
    working. The schema must be installed (install_schema).
    """
    from psycopg import sql

    from storage.limits import check_name

    if not isinstance(user_id, str) or not user_id:
        raise ValueError(f"user_id must be a non-empty string, got {user_id!r}")
    check_name(user_id, "user_id")
    unknown = set(limits) - set(USER_LIMITS)
    if unknown:
        raise ValueError(
            f"unknown limit {sorted(unknown)[0]!r}: the limits are {list(USER_LIMITS)}"
        )
    settings = {**USER_LIMITS, **limits}
    count = settings.pop("connection_limit")
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise ValueError(f"connection_limit must be an int >= 1, got {count!r}")
    password = password or secrets.token_urlsafe(24)
    db = bare_connection(admin_url)
    try:
        with db.transaction():
            installed = db.execute("SELECT to_regclass(%s)", (f"{SCHEMA}.user_roles",))
            if installed.fetchone()[0] is None:
                raise PostgresStoreError(
                    f"the database at {safe_url(admin_url)} holds no Memory Lab schema of "
                    f"version {SCHEMA_VERSION}: run install_schema(admin_url) first"
                )
            db.execute(f"LOCK TABLE {SCHEMA}.user_roles IN SHARE ROW EXCLUSIVE MODE")
            role = user_role(db, user_id) or USER_ROLE_PREFIX + secrets.token_hex(12)
            exists = db.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone()
            verb = "ALTER" if exists else "CREATE"
            db.execute(
                sql.SQL(
                    verb + " ROLE {} LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE "
                    "CONNECTION LIMIT {} PASSWORD {}"
                ).format(sql.Identifier(role), sql.Literal(count), sql.Literal(password))
            )
            db.execute(f'GRANT {USERS_ROLE} TO "{role}" WITH INHERIT TRUE, SET FALSE')
            for name, value in settings.items():
                db.execute(
                    sql.SQL("ALTER ROLE {} SET {} = {}").format(
                        sql.Identifier(role), sql.Identifier(name), sql.Literal(str(value))
                    )
                )
            db.execute(
                f"INSERT INTO {SCHEMA}.user_roles VALUES (%s, %s) ON CONFLICT DO NOTHING",
                (role, user_id),
            )
    finally:
        db.close()
    return with_login(admin_url, role, password)


def drop_user(admin_url: str, user_id: str) -> None:
    """Remove `user_id`'s login role (its memories stay). As the administrator."""
    db = bare_connection(admin_url)
    try:
        with db.transaction():
            role = user_role(db, user_id)
            if role is None:
                return
            db.execute(f"DELETE FROM {SCHEMA}.user_roles WHERE role_name = %s", (role,))
            db.execute(f'DROP ROLE IF EXISTS "{role}"')
    finally:
        db.close()


def bare_connection(url: str):
    """A psycopg connection in autocommit, or PostgresStoreError naming the cause.

    A server whose slots are all taken ("too many clients already", e.g. by sockets that
    never finish authenticating, which the server drops after its authentication_timeout)
    is asked again with backoff, for up to CONNECT_TIMEOUT seconds.
    """
    import psycopg

    delay, deadline = 0.05, time.monotonic() + CONNECT_TIMEOUT
    while True:
        try:
            return psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT)
        except psycopg.OperationalError as error:
            full = "too many clients already" in str(error)
            if not full or time.monotonic() + delay > deadline:
                raise PostgresStoreError(_why_not_connected(url, error)) from None
            time.sleep(delay)
            delay = min(0.5, delay * 2)


def check_database(db, url: str, user_id: str | None = None) -> None:
    """Refuse a role that bypasses row-level security, another user's role, or a schema
    this code cannot read."""
    where = safe_url(url)
    role, superuser, bypass = db.execute(
        "SELECT rolname, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user"
    ).fetchone()
    if superuser or bypass:
        raise PostgresStoreError(
            f"the URL {where} connects as {role!r}, "
            f"a {'superuser' if superuser else 'role with BYPASSRLS'}: row-level security "
            "would not keep users apart. Connect as the user's own role (create_user), or "
            f"the shared role ({LAB_ROLE!r}), which install_schema creates"
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
            f"reads version {SCHEMA_VERSION}. Use the Memory Lab that made it, or a new "
            "database (install_schema upgrades version 1)"
        )
    if user_id is None or role == LAB_ROLE:
        return
    (owner_of_role,) = db.execute(f"SELECT {SCHEMA}.session_user_id()").fetchone()
    if owner_of_role is None:
        raise PostgresStoreError(
            f"the URL {where} connects as {role!r}, which is no Memory Lab user's role: "
            "make one with `python code/run.py pg-user USER` (storage.postgres_database."
            "create_user)"
        )
    if owner_of_role != user_id:
        raise PostgresStoreError(
            f"the URL {where} is the login of another user, not of {user_id!r}: open the "
            "store with that URL's own user id, or make this user's URL with "
            "`python code/run.py pg-user USER`"
        )
