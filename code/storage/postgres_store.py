"""The same memory store on PostgreSQL with pgvector: many processes, many machines, one database.

    store = PostgresMemoryStore(url, user_id="alice")  # url: MEMORY_LAB_DATABASE_URL
    Embedder().remember(store, "Alice prefers Groq", now=now)   # committed when add returns
    retrieve(store, query, now=now)                  # the unchanged retriever
    store.save(); store.close()

The contract is PersistentMemoryStore's (storage/sqlite_store.py): add, remove and supersede
write through, each one transaction; save() writes the fields changed in place; with
store.transaction(): is one database transaction (nested ones join it); one embedding
model per user; next_id() reserves ids in the database; one user per store; export_jsonl.
Vectors are kept as pgvector `vector` (float32), so a memory's embedding is rounded to
float32 when it is added, and reopening gives back exactly what the store held.

Isolation is enforced by the database, not only by this code's WHERE clauses:
  - install_schema(admin_url) makes the tables as a NOLOGIN owner role, turns on row-level
    security, and creates the lab's login role LAB_ROLE, which owns nothing, is not a
    superuser and has no BYPASSRLS (any of those skips row-level security);
  - every transaction begins with set_config('memorylab.user_id', <user>, true), a setting
    that lasts until the transaction ends, and the policies show and accept only rows of
    that user; so even `SELECT * FROM memorylab.memories` sees one user's rows;
  - a store refuses to open through a role that would bypass the policies.
Links are kept by the database too: superseded_by is a foreign key within one user's rows,
and supersede locks both rows (in id order, so two processes cannot deadlock) and checks
them as they are now, not as this process last saw them.

Errors name the cause: PostgresStoreError for an unreachable server, refused credentials,
a database without pgvector, a schema missing or of another version, or an unsafe role;
nothing is written before those checks pass.

Deliberately left out: connection pooling, seeing another process's new memories without
reopening, schema migrations (a schema of another version is refused), and vector search
(scale/pg_retrieval.py scores in SQL).
"""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Iterator
from contextlib import contextmanager

from base.links import link_problems
from base.validation import check_no_nul, check_text
from memory_store import EmbeddingModelMismatch, Memory
from storage.rows import FIELDS, snapshot
from storage.sqlite_store import export_jsonl
from storage.write_through import WriteThroughStore

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
    try:
        db = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT)
    except psycopg.OperationalError as error:
        raise PostgresStoreError(_why_not_connected(url, error)) from None
    try:
        register_vector(db)
    except psycopg.ProgrammingError:
        db.close()
        raise PostgresStoreError(
            f"the database at {_safe(url)} has no pgvector extension (type vector not "
            "found): run install_schema(admin_url), or CREATE EXTENSION vector as its owner"
        ) from None
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
            for role, login in ((OWNER_ROLE, False), (LAB_ROLE, True)):
                exists = db.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,))
                if exists.fetchone() is None:
                    db.execute(
                        sql.SQL("CREATE ROLE {} {} NOSUPERUSER NOBYPASSRLS NOCREATEDB").format(
                            sql.Identifier(role), sql.SQL("LOGIN" if login else "NOLOGIN")
                        )
                    )
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


def float32(vector) -> tuple[float, ...]:
    """The vector rounded to float32, as pgvector keeps it: (0.1,) -> (0.10000000149011612,)."""
    return struct.unpack(f"<{len(vector)}f", struct.pack(f"<{len(vector)}f", *vector))


class PostgresMemoryStore(WriteThroughStore):
    """A MemoryStore whose memories live in PostgreSQL; scoped to one user.

    Inputs:
        url: a postgresql:// URL of the lab's role; None reads MEMORY_LAB_DATABASE_URL.
        user_id: whose memories this store holds, e.g. "alice".
        embedding_model: fix the model up front; a database already holding this user's
            memories from another model raises EmbeddingModelMismatch.
    Raises:
        PostgresStoreError when the database cannot be used (the cause is named).
    """

    def __init__(
        self, url: str | None = None, user_id: str = "default", embedding_model: str | None = None
    ) -> None:
        check_no_nul(check_text(user_id, "user_id"), "user_id")
        if url is None:
            from config import load_settings

            url = load_settings().database_url
            if url is None:
                raise ValueError(
                    "PostgresMemoryStore needs a database URL: pass one, or set "
                    "MEMORY_LAB_DATABASE_URL=postgresql://role:password@host/database"
                )
        super().__init__(embedding_model, user_id=user_id)  # one user per store
        self.url = _safe(url)
        self._batch: list[Memory] | None = None  # inside extend(): memories to insert
        self._db = _connect(url)
        try:
            _check_database(self._db, url)
            self._load(embedding_model)
        except BaseException:
            self._db.close()
            raise

    # --- loading -----------------------------------------------------------------------

    def _load(self, embedding_model: str | None) -> None:
        with self._transaction(read_only=True) as db:
            user = db.execute(
                f"SELECT embedding_model, dimension FROM {SCHEMA}.users WHERE user_id = %s",
                (self.user_id,),
            ).fetchone()
            rows = db.execute(
                f"SELECT id, {', '.join(FIELDS)} FROM {SCHEMA}.memories "
                "WHERE user_id = %s ORDER BY seq",
                (self.user_id,),
            ).fetchall()
        if user is not None:
            self.embedding_model, self.dimension = user
            if embedding_model is not None and embedding_model != self.embedding_model:
                raise EmbeddingModelMismatch(
                    f"{self.url}: the memories of user {self.user_id!r} were embedded with "
                    f"{self.embedding_model or 'hand-made vectors'!r}, not {embedding_model!r}"
                    ". Open it with the same embedding model (or none to accept the stored one)."
                )
        for row in rows:
            memory = self._memory_from_row(row)
            self._memories[memory.id] = memory
        problems = link_problems(self._memories)  # no dangling link, no cycle, no half cluster
        if problems:
            shown = "; ".join(problems[:3]) + ("; ..." if len(problems) > 3 else "")
            raise PostgresStoreError(
                f"{self.url} is inconsistent, so the store was not opened (nothing was "
                f"changed): in the memories of user {self.user_id!r}, {shown}"
            )
        self._saved = {m.id: snapshot(m) for m in self._memories.values()}

    def _memory_from_row(self, row: tuple) -> Memory:
        """A Memory from a row of (id, *FIELDS), as the database holds it."""
        memory_id, *columns = row
        values = dict(zip(FIELDS, columns))
        last_accessed = values.pop("last_accessed")
        memory = Memory(
            memory_id,
            user_id=self.user_id,
            last_accessed=values["created_at"],  # set below: it may be earlier
            **{
                **values,
                "embedding": tuple(values["embedding"].to_numpy().tolist()),
                "metadata": json.loads(values["metadata"]),
            },
        )
        memory.last_accessed = last_accessed
        return memory

    def reread(self, memory_id: str) -> Memory | None:
        """A fresh copy of `memory_id` as the database holds it now (None if it is gone).

        Inside store.transaction() the row is locked until the commit, so no other
        process can change it meanwhile: what a multi-step change checks before acting.
        """
        check_text(memory_id, "memory_id", "a memory's id, a non-empty string")
        with self._transaction() as db:
            row = db.execute(
                f"SELECT id, {', '.join(FIELDS)} FROM {SCHEMA}.memories "
                "WHERE user_id = %s AND id = %s FOR UPDATE",
                (self.user_id, memory_id),
            ).fetchone()
        return None if row is None else self._memory_from_row(row)

    # --- write-through changes -----------------------------------------------------------

    def add(self, memory: Memory) -> Memory:
        """Append `memory` and commit it before returning it (its vector rounded to float32)."""
        if not isinstance(memory, Memory):
            return super().add(memory)  # raises its TypeError
        if memory.user_id not in ("default", self.user_id):
            raise ValueError(
                f"memory {memory.id!r} belongs to user {memory.user_id!r}; this store holds "
                f"only the memories of user {self.user_id!r} (open a store for that user)"
            )
        snapshot(memory)  # first: refuses metadata that JSON cannot hold
        if self._batch is not None:  # inside extend(): checked here, inserted all at once
            super().add(memory)
            memory.embedding = float32(memory.embedding)
            self._batch.append(memory)
            return memory
        import psycopg

        original = memory.embedding
        with self._undo_if_failed():
            super().add(memory)
            try:
                memory.embedding = float32(original)
                row = snapshot(memory)
                with self._transaction() as db:
                    if memory.superseded_by is not None:
                        self._lock_live(db, memory.superseded_by)
                    try:
                        db.execute(
                            f"INSERT INTO {SCHEMA}.memories (user_id, id, {', '.join(FIELDS)}) "
                            "VALUES (%s, %s" + ", %s" * len(FIELDS) + ")",
                            (self.user_id, memory.id, *self._columns(row)),
                        )
                    except psycopg.errors.UniqueViolation:
                        raise ValueError(
                            f"a memory with id {memory.id!r} is already stored for user "
                            f"{self.user_id!r} in {self.url} (added by another process?)"
                        ) from None
                    self._claim_model(db)
            except BaseException:
                memory.embedding = original
                raise
        memory.user_id = self.user_id
        self._saved[memory.id] = row
        return memory

    def remove(self, memory_id: str) -> Memory:
        """Take a memory out of the store and delete it from the database."""
        with self._undo_if_failed():
            memory = super().remove(memory_id)
            with self._transaction() as db:
                locked = db.execute(  # it and the rows naming it, locked in id order
                    f"SELECT id, superseded_by FROM {SCHEMA}.memories WHERE user_id = %s "
                    "AND (id = %s OR superseded_by = %s) ORDER BY id FOR UPDATE",
                    (self.user_id, memory_id, memory_id),
                ).fetchall()
                citing = [i for i, link in locked if link == memory_id]
                if citing:
                    raise ValueError(
                        f"memory {memory_id!r} replaced {', '.join(map(repr, citing))} "
                        f"in the database {self.url} (another process linked them); reopen the "
                        "store to see the link, and keep it so their superseded_by stays valid"
                    )
                db.execute(
                    f"DELETE FROM {SCHEMA}.memories WHERE user_id = %s AND id = %s",
                    (self.user_id, memory_id),
                )
            self._saved.pop(memory_id, None)
        return memory

    def supersede(self, old_id: str, new_id: str) -> None:
        """Mark `old_id` as replaced by `new_id`, checked against the rows as they are now."""
        if self._batch is not None:  # inside extend(): the rows go in with their links
            return super().supersede(old_id, new_id)
        old = self.get(old_id)
        before = old.superseded_by
        try:
            super().supersede(old_id, new_id)
            with self._transaction() as db:
                rows = dict(
                    db.execute(  # both rows locked, in id order: no deadlock between two
                        f"SELECT id, superseded_by FROM {SCHEMA}.memories "
                        "WHERE user_id = %s AND id IN (%s, %s) ORDER BY id FOR UPDATE",
                        (self.user_id, old_id, new_id),
                    ).fetchall()
                )
                for memory_id in (old_id, new_id):
                    if memory_id not in rows:
                        raise ValueError(
                            f"memory {memory_id!r} is no longer stored in {self.url} (removed "
                            "by another process?); reopen the store to see its memories"
                        )
                if (
                    rows[new_id] is not None
                    or rows[old_id] != self._saved[old_id][FIELDS.index("superseded_by")]
                ):
                    raise ValueError(
                        f"another process changed the links of {old_id!r} or {new_id!r} in "
                        f"{self.url} (now {old_id!r} -> {rows[old_id]!r}, {new_id!r} -> "
                        f"{rows[new_id]!r}); reopen the store and supersede the current memory"
                    )
                self._write(old, ("superseded_by",))
        except BaseException:
            old.superseded_by = before
            raise

    def next_id(self, prefix: str = "m") -> str:
        """An id no process has used for this user: reserved in the database's counter."""
        check_text(prefix, "prefix")
        with self._transaction() as db:
            db.execute(
                f"INSERT INTO {SCHEMA}.id_counters VALUES (%s, %s, 0) ON CONFLICT DO NOTHING",
                (self.user_id, prefix),
            )
            (stored,) = db.execute(  # locked: two processes take turns
                f"SELECT last_number FROM {SCHEMA}.id_counters "
                "WHERE user_id = %s AND prefix = %s FOR UPDATE",
                (self.user_id, prefix),
            ).fetchone()
            n = max(stored, len(self)) + 1
            taken = f"SELECT 1 FROM {SCHEMA}.memories WHERE user_id = %s AND id = %s"
            while (
                f"{prefix}{n}" in self
                or db.execute(taken, (self.user_id, f"{prefix}{n}")).fetchone()
            ):
                n += 1
            db.execute(
                f"UPDATE {SCHEMA}.id_counters SET last_number = %s "
                "WHERE user_id = %s AND prefix = %s",
                (n, self.user_id, prefix),
            )
        return f"{prefix}{n}"

    def extend(self, memories) -> list[Memory]:
        """Add several memories in order, as one database transaction (all or none).

        MemoryStore.extend checks the whole batch (ids, models, links) in memory; the rows
        then go to the database in one pipelined INSERT, which is what makes 100,000
        memories a matter of seconds rather than minutes.
        """
        import psycopg

        with self.transaction():
            self._batch = []
            try:
                added = super().extend(memories)
            finally:
                batch, self._batch = self._batch, None
            ids = {m.id for m in batch}
            rows = [snapshot(m) for m in batch]
            with self._transaction() as db:
                for target in {m.superseded_by for m in batch} - ids - {None}:
                    self._lock_live(db, target)  # a link to a stored memory: still there?
                try:
                    with db.cursor() as cursor:
                        cursor.executemany(
                            f"INSERT INTO {SCHEMA}.memories (user_id, id, {', '.join(FIELDS)}) "
                            "VALUES (%s, %s" + ", %s" * len(FIELDS) + ")",
                            [(self.user_id, m.id, *self._columns(r)) for m, r in zip(batch, rows)],
                        )
                except psycopg.errors.UniqueViolation as error:
                    raise ValueError(
                        f"a memory of this batch is already stored for user {self.user_id!r} "
                        f"in {self.url} (added by another process?): {error.diag.message_detail}"
                    ) from None
                if batch:
                    self._claim_model(db)
            for memory, row in zip(batch, rows):
                memory.user_id = self.user_id
                self._saved[memory.id] = row
        return added

    def select(self, query: str, params=(), settings: dict | None = None) -> list[tuple]:
        """Rows of a read-only SQL query, run as this store's user (the policies apply).

        store.select("SELECT count(*) FROM memorylab.memories") -> [(12,)]
        settings: server settings for this query only, e.g. {"hnsw.ef_search": 100}.
        """
        with self._transaction(read_only=not self._block_open) as db:
            for name, value in (settings or {}).items():
                db.execute("SELECT set_config(%s, %s, true)", (name, str(value)))
            cursor = db.execute(query, params)
            return cursor.fetchall() if cursor.description is not None else []

    # --- in-place changes ----------------------------------------------------------------

    def unsaved(self, fields: tuple[str, ...] = FIELDS) -> list[Memory]:
        """Memories changed in place (e.g. touched by retrieval) since they were saved.

        `fields` narrows the comparison, e.g. to what the SQL score reads: comparing
        ("last_accessed",) is far cheaper than a full snapshot of every memory.
        """
        if tuple(fields) == FIELDS:
            return [m for m in self._memories.values() if snapshot(m) != self._saved.get(m.id)]
        positions = [(name, FIELDS.index(name)) for name in fields if name != "metadata"]
        changed = []
        for m in self._memories.values():
            saved = self._saved.get(m.id)
            if saved is None or any(
                getattr(m, name) is not saved[i] and getattr(m, name) != saved[i]
                for name, i in positions
            ):
                changed.append(m)
        return changed

    def save(self, only=None) -> int:
        """Write every field changed in place since the last save, in one transaction.

        only: the memories to look at (e.g. the k a recall touched), instead of all.
        """
        if only is None:
            changed = self.unsaved()
        else:
            changed = [m for m in only if snapshot(m) != self._saved.get(m.id)]
        if changed:
            with self._transaction():
                # in id order, as supersede and remove lock: two processes saving the same
                # memories touched in different orders would otherwise deadlock
                for memory in sorted(changed, key=lambda m: m.id):
                    memory.embedding = float32(memory.embedding)  # as the database keeps it
                    self._write(memory, FIELDS)
        return len(changed)

    def _write(self, memory: Memory, names: tuple[str, ...]) -> None:
        new, old = snapshot(memory), self._saved[memory.id]
        columns = dict(zip(FIELDS, self._columns(new)))
        changed = [n for n in names if new[FIELDS.index(n)] != old[FIELDS.index(n)]]
        if changed:
            self._db.execute(
                f"UPDATE {SCHEMA}.memories SET "
                + ", ".join(f"{name} = %s" for name in changed)
                + " WHERE user_id = %s AND id = %s",
                [columns[name] for name in changed] + [self.user_id, memory.id],
            )
        self._saved[memory.id] = tuple(
            new[i] if name in names else old[i] for i, name in enumerate(FIELDS)
        )

    @staticmethod
    def _columns(row: tuple) -> tuple:
        import numpy as np

        values = dict(zip(FIELDS, row))
        values["embedding"] = np.asarray(values["embedding"], dtype=np.float32)
        values["importance"] = float(values["importance"])
        return tuple(values[name] for name in FIELDS)

    def _lock_live(self, db, memory_id: str) -> None:
        """Raise unless the database holds `memory_id`; lock it until the commit."""
        row = db.execute(
            f"SELECT superseded_by FROM {SCHEMA}.memories WHERE user_id = %s AND id = %s "
            "FOR UPDATE",
            (self.user_id, memory_id),
        ).fetchone()
        if row is None:
            raise ValueError(
                f"memory {memory_id!r} is no longer stored in {self.url} (removed by "
                "another process?); reopen the store to see its current memories"
            )

    def _claim_model(self, db) -> None:
        db.execute(
            f"INSERT INTO {SCHEMA}.users VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
            (self.user_id, self.embedding_model, self.dimension),
        )
        stored = db.execute(
            f"SELECT embedding_model, dimension FROM {SCHEMA}.users WHERE user_id = %s",
            (self.user_id,),
        ).fetchone()
        if tuple(stored) != (self.embedding_model, self.dimension):
            raise EmbeddingModelMismatch(
                f"{self.url}: user {self.user_id!r}'s memories are {stored[1]}-dimensional "
                f"vectors of {stored[0] or 'hand-made vectors'!r}, not {self.dimension}-"
                f"dimensional ones of {self.embedding_model or 'hand-made vectors'!r}"
            )

    # --- export, closing -----------------------------------------------------------------

    def export_jsonl(self, target) -> int:
        """Write this user's memories to `target` (a path or text file), one JSON per line."""
        return export_jsonl(self, target)

    def _where(self) -> str:
        return self.url

    # --- transactions --------------------------------------------------------------------

    @contextmanager
    def _transaction(self, read_only: bool = False):
        """One database transaction, scoped to this store's user by the policies."""
        if self._db is None:
            raise ValueError(f"the store for {self.url} is closed: open it again")
        import psycopg

        if self._block_open:  # inside store.transaction(): its one BEGIN ... COMMIT holds
            # a savepoint, so that a step that fails and is caught leaves the block usable
            self._db.execute("SAVEPOINT step")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK TO SAVEPOINT step")
                raise
            self._db.execute("RELEASE SAVEPOINT step")
            return

        db = self._db
        db.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" if read_only else "BEGIN")
        try:
            db.execute("SELECT set_config(%s, %s, true)", (USER_SETTING, self.user_id))
            yield db
            db.execute("COMMIT")  # deferred foreign keys are checked here
        except psycopg.errors.ForeignKeyViolation:
            db.execute("ROLLBACK")
            raise ValueError(
                f"a superseded_by link of user {self.user_id!r} would name a memory that is not "
                f"stored in {self.url} (removed by another process?); nothing was changed"
            ) from None
        except BaseException:
            if db.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                db.execute("ROLLBACK")
            raise

    @contextmanager
    def _undo_if_failed(self) -> Iterator[None]:
        kept = dict(self._memories), self.embedding_model, self.dimension
        try:
            yield
        except BaseException:
            self._memories, self.embedding_model, self.dimension = kept
            raise
