"""PostgreSQL: a client holding user A's URL, running any SQL it likes, cannot reach user B.

Each user has a login role of its own (storage/postgres_database.create_user). Here A's
role runs, on a plain psycopg connection with none of the store's code, what an attacker
would: the user setting (SET, set_config, a startup option), SET ROLE, every LOCK mode,
ALTER ROLE, pg_terminate_backend, COPY, temporary functions and tables that shadow ours,
TRUNCATE, DELETE, UPDATE of the key columns, statistics. Each test checks that B's
memories are unread and unchanged, and that B's store keeps working while A does it.
"""

from __future__ import annotations

import threading
import time

import psycopg
import pytest
from psycopg import sql

import pg_fixtures
from conftest import DAY, NOW
from memory_store import Memory
from storage.postgres_database import (
    LAB_ROLE,
    OWNER_ROLE,
    SCHEMA,
    USER_LIMITS,
    USER_TABLES,
    USERS_ROLE,
    PostgresStoreError,
    create_user,
    user_role,
)
from storage.postgres_store import PostgresMemoryStore

pytestmark = pytest.mark.postgres

DENIED = (psycopg.errors.InsufficientPrivilege, psycopg.errors.FeatureNotSupported)


def memory(memory_id, text, **fields) -> Memory:
    fields.setdefault("created_at", NOW - DAY)
    fields.setdefault("embedding", [1.0, 0.0, 0.0])
    return Memory(memory_id, text, **fields)


@pytest.fixture
def two_users():
    """(A's URL, A's id, B's URL, B's id): two memories each, in their own roles."""
    server = pg_fixtures.server()
    ids = {name: pg_fixtures.unique(name) for name in ("a", "b")}
    urls = {name: server.user_url(user) for name, user in ids.items()}
    for name, user in ids.items():
        with PostgresMemoryStore(urls[name], user) as store:
            store.add(memory("m1", f"{name}'s first secret"))
            store.add(memory("m2", f"{name}'s second secret"))
            store.next_id()
    return urls["a"], ids["a"], urls["b"], ids["b"]


def b_is_intact(url_b, user_b) -> None:
    """B's memories are exactly as written, and B can still change them."""
    with PostgresMemoryStore(url_b, user_b) as store:
        assert [(m.id, m.text) for m in store] == [
            ("m1", "b's first secret"),
            ("m2", "b's second secret"),
        ]
        store.add(memory("m9", "b writes on"))
        store.remove("m9")


def attempt(db, statement, params=None):
    """Run `statement` in its own transaction: the rows, or the error it raised."""
    try:
        with db.transaction():
            cursor = db.execute(statement, params)
            return cursor.fetchall() if cursor.description else cursor.rowcount
    except psycopg.Error as error:
        return error


def everything_a_sees(db) -> set[str]:
    seen = set()
    for table in ("memories", "users", "id_counters"):
        seen |= {row[0] for row in db.execute(f"SELECT user_id FROM {SCHEMA}.{table}")}
    return seen


# --- whose rows: the role's, whatever the client sets ---------------------------------------


def test_the_user_setting_does_not_choose_whose_rows_a_user_role_sees(two_users):
    url_a, user_a, url_b, user_b = two_users
    with psycopg.connect(url_a, autocommit=True) as db:
        assert everything_a_sees(db) == {user_a}
        db.execute(sql.SQL("SET memorylab.user_id = {}").format(sql.Literal(user_b)))
        assert everything_a_sees(db) == {user_a}
        db.execute("SELECT set_config('memorylab.user_id', %s, false)", (user_b,))
        assert everything_a_sees(db) == {user_a}
        assert db.execute(f"UPDATE {SCHEMA}.memories SET text = 'forged'").rowcount == 2
    b_is_intact(url_b, user_b)


def test_a_startup_option_does_not_choose_whose_rows_either(two_users):
    url_a, user_a, url_b, user_b = two_users
    options = f"-c memorylab.user_id={user_b} -c search_path=pg_temp,{SCHEMA}"
    with psycopg.connect(url_a, autocommit=True, options=options) as db:
        assert db.execute("SHOW memorylab.user_id").fetchone() == (user_b,)
        assert everything_a_sees(db) == {user_a}
    with pytest.raises(psycopg.OperationalError, match="permission denied to set role"):
        psycopg.connect(url_a, options="-c role=" + LAB_ROLE)
    b_is_intact(url_b, user_b)


@pytest.mark.parametrize("role", [LAB_ROLE, USERS_ROLE, OWNER_ROLE, "b"])
def test_set_role_to_any_other_role_is_refused(two_users, role):
    url_a, _, url_b, user_b = two_users
    role = user_role(pg_fixtures.admin_database(), user_b) if role == "b" else role
    with psycopg.connect(url_a, autocommit=True) as db:
        refused = attempt(db, f'SET ROLE "{role}"')
        assert isinstance(refused, DENIED), refused
        assert isinstance(attempt(db, f'SET SESSION AUTHORIZATION "{role}"'), DENIED)
    b_is_intact(url_b, user_b)


def test_a_user_role_cannot_write_or_change_the_keys_of_another_users_rows(two_users):
    url_a, _, url_b, user_b = two_users
    with psycopg.connect(url_a, autocommit=True) as db:
        forged = attempt(
            db,
            f"INSERT INTO {SCHEMA}.memories (user_id, id, text, kind, created_at, "
            "last_accessed, importance, embedding, metadata) "
            "VALUES (%s, 'm7', 'forged', 'episodic', 0, 0, 5, '[1,0,0]', '{}')",
            (user_b,),
        )
        assert isinstance(forged, psycopg.errors.InsufficientPrivilege), forged
        for statement in (
            f"UPDATE {SCHEMA}.memories SET user_id = '{user_b}'",
            f"UPDATE {SCHEMA}.memories SET id = 'x'",
            f"UPDATE {SCHEMA}.users SET user_id = '{user_b}'",
            f"DELETE FROM {SCHEMA}.memories",
            f"DELETE FROM {SCHEMA}.id_counters",
            f"TRUNCATE {SCHEMA}.memories",
            f"TRUNCATE {SCHEMA}.users, {SCHEMA}.id_counters",
            f"SELECT * FROM {SCHEMA}.user_roles",
            f"ALTER TABLE {SCHEMA}.memories DISABLE ROW LEVEL SECURITY",
            f"DROP POLICY one_user ON {SCHEMA}.memories",
            f"CREATE TABLE {SCHEMA}.mine (x int)",
            f"CREATE TRIGGER t BEFORE INSERT ON {SCHEMA}.memories EXECUTE FUNCTION "
            "pg_catalog.suppress_redundant_updates_trigger()",
            f"SELECT setval('{SCHEMA}.memories_seq_seq', 1)",
        ):
            assert isinstance(attempt(db, statement), DENIED), statement
        assert attempt(db, f"SELECT {SCHEMA}.forget('m1')") == [(1,)]  # its own, through forget
    b_is_intact(url_b, user_b)


def test_copy_reads_only_the_users_own_rows_and_cannot_write(two_users):
    url_a, user_a, url_b, user_b = two_users
    with psycopg.connect(url_a, autocommit=True) as db:
        with db.cursor() as cursor:
            with cursor.copy(f"COPY (SELECT user_id, text FROM {SCHEMA}.memories) TO STDOUT") as c:
                copied = b"".join(bytes(chunk) for chunk in c)
            assert b"b's" not in copied and copied.count(user_a.encode()) == 2
            with cursor.copy(f"COPY {SCHEMA}.memories (user_id, text) TO STDOUT") as c:
                assert b"b's" not in b"".join(bytes(chunk) for chunk in c)
        with (
            pytest.raises(DENIED),
            db.cursor() as cursor,
            cursor.copy(f"COPY {SCHEMA}.memories FROM STDIN") as c,
        ):
            c.write(b"")
        for statement in (
            f"COPY {SCHEMA}.memories TO '/tmp/stolen'",
            "COPY (SELECT 1) TO PROGRAM 'true'",
        ):
            assert isinstance(attempt(db, statement), DENIED), statement
    b_is_intact(url_b, user_b)


def test_temporary_functions_and_tables_do_not_hijack_the_lab_functions(two_users):
    url_a, user_a, url_b, user_b = two_users
    with psycopg.connect(url_a, autocommit=True) as db:  # no user may make temporary objects
        assert isinstance(attempt(db, "CREATE TEMP TABLE t (x int)"), DENIED)
    # and had an administrator granted it, they still would not hijack the lab's functions
    admin = pg_fixtures.admin_database()
    role_a = user_role(admin, user_a)
    with psycopg.connect(admin, autocommit=True) as db:
        db.execute(f'GRANT TEMPORARY ON DATABASE memorylab TO "{role_a}"')
    try:
        temporary_objects_hijack_nothing(url_a, user_a, user_b)
    finally:
        with psycopg.connect(admin, autocommit=True) as db:
            db.execute(f'REVOKE TEMPORARY ON DATABASE memorylab FROM "{role_a}"')
    b_is_intact(url_b, user_b)


def temporary_objects_hijack_nothing(url_a, user_a, user_b) -> None:
    with psycopg.connect(url_a, autocommit=True) as db:
        db.execute("SET search_path = pg_temp, memorylab, public")
        db.execute(f"CREATE TEMP TABLE memories AS SELECT * FROM {SCHEMA}.memories LIMIT 0")
        db.execute(
            "CREATE FUNCTION pg_temp.session_user_id() RETURNS text LANGUAGE sql AS "
            f"$$ SELECT '{user_b}' $$"
        )
        assert db.execute("SELECT pg_temp.session_user_id()").fetchone() == (user_b,)
        # forget() and the policies name memorylab.session_user_id, in a fixed search_path
        assert db.execute(f"SELECT {SCHEMA}.forget('m2')").fetchone() == (1,)
        assert db.execute(f"SELECT {SCHEMA}.session_user_id()").fetchone() == (user_a,)
        assert everything_a_sees(db) == {user_a}


def test_statistics_show_nothing_of_another_user(two_users):
    url_a, _, url_b, user_b = two_users
    admin = pg_fixtures.admin_database()
    with psycopg.connect(admin, autocommit=True) as db:
        db.execute(f"ANALYZE {SCHEMA}.memories")
    with psycopg.connect(url_a, autocommit=True) as db:
        stats = db.execute(
            "SELECT most_common_vals::text, tablename, attname, null_frac, n_distinct "
            "FROM pg_stats WHERE schemaname = %s AND tablename = ANY(%s)",
            (SCHEMA, list(USER_TABLES)),
        ).fetchall()
        assert not [row for row in stats if row[0] and "b's" in row[0]]
        # none for any table that holds users' data (schema_version holds one constant, and
        # a database-wide ANALYZE by another client may give it statistics: they tell nothing)
        assert stats == [], stats
    b_is_intact(url_b, user_b)


# --- disturbing no one -----------------------------------------------------------------


def b_writes_while(url_b, user_b, seconds: float = 10.0) -> float:
    """Time B's store takes to add, supersede, remove, number and save (in a thread)."""
    took = {}

    def work():
        began = time.monotonic()
        with PostgresMemoryStore(url_b, user_b) as store:
            store.add(memory("m5", "b, while a holds its locks"))
            store.add(memory("m6", "b again"))
            store.supersede("m5", "m6")
            store.next_id()
            store.get("m1").last_accessed = NOW
            store.save()
        took["s"] = time.monotonic() - began

    worker = threading.Thread(target=work)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"B's writes were blocked for more than {seconds} s"
    return took["s"]


@pytest.mark.parametrize(
    "mode",
    ["SHARE UPDATE EXCLUSIVE", "SHARE", "SHARE ROW EXCLUSIVE", "EXCLUSIVE", "ACCESS EXCLUSIVE"],
)
@pytest.mark.parametrize("table", ["memories", "users", "id_counters"])
def test_no_lock_that_blocks_others_can_be_taken(two_users, mode, table):
    url_a = two_users[0]
    with psycopg.connect(url_a, autocommit=True) as db:
        refused = attempt(db, f"LOCK TABLE {SCHEMA}.{table} IN {mode} MODE")
        assert isinstance(refused, psycopg.errors.InsufficientPrivilege), refused


def test_b_writes_while_a_holds_every_lock_it_can_take(two_users):
    url_a, _, url_b, user_b = two_users
    with psycopg.connect(url_a) as db:  # one open transaction, held until the end
        db.execute(f"LOCK TABLE {SCHEMA}.memories, {SCHEMA}.users, {SCHEMA}.id_counters "
                   "IN ROW EXCLUSIVE MODE")  # fmt: skip
        db.execute(f"SELECT * FROM {SCHEMA}.memories FOR UPDATE").fetchall()
        db.execute(f"SELECT * FROM {SCHEMA}.id_counters FOR UPDATE").fetchall()
        db.execute("SELECT pg_advisory_lock(1), pg_advisory_lock(0)")
        assert b_writes_while(url_b, user_b) < 10
        db.rollback()
    with PostgresMemoryStore(url_b, user_b) as store:
        assert store.get("m5").superseded_by == "m6"


def test_a_cannot_terminate_or_cancel_another_users_session(two_users):
    url_a, _, url_b, user_b = two_users
    with PostgresMemoryStore(url_b, user_b) as store, psycopg.connect(url_a, autocommit=True) as db:
        pid = store.select("SELECT pg_backend_pid()")[0][0]
        for function in ("pg_terminate_backend", "pg_cancel_backend"):
            refused = attempt(db, f"SELECT {function}(%s)", (pid,))
            assert isinstance(refused, psycopg.errors.InsufficientPrivilege), refused
        assert store.select("SELECT pg_backend_pid()") == [(pid,)]  # the same session, alive
        store.add(memory("m5", "still here"))
    b_is_intact_after_m5(url_b, user_b)


def b_is_intact_after_m5(url_b, user_b) -> None:
    with PostgresMemoryStore(url_b, user_b) as store:
        assert [m.id for m in store] == ["m1", "m2", "m5"]


@pytest.mark.parametrize("target", ["lab", "b"])
def test_alter_role_of_another_role_is_refused(two_users, target):
    url_a, user_a, url_b, user_b = two_users
    role = LAB_ROLE if target == "lab" else user_role(pg_fixtures.admin_database(), user_b)
    own = user_role(pg_fixtures.admin_database(), user_a)
    with psycopg.connect(url_a, autocommit=True) as db:
        for statement in (
            f"ALTER ROLE \"{role}\" PASSWORD 'taken'",
            f'ALTER ROLE "{role}" SET statement_timeout = 1',
            f'ALTER ROLE "{role}" CONNECTION LIMIT 0',
            f'ALTER ROLE "{role}" NOLOGIN',
            f'ALTER ROLE "{own}" CONNECTION LIMIT 100',  # not even its own
            f'ALTER ROLE "{own}" BYPASSRLS',
            f'GRANT "{own}" TO "{role}"',
            f'DROP ROLE "{role}"',
        ):
            assert isinstance(attempt(db, statement), DENIED), statement
    b_is_intact(url_b, user_b)
    with psycopg.connect(pg_fixtures.server().lab_url(), autocommit=True) as db:
        assert db.execute("SHOW statement_timeout").fetchone() == ("0",)


def test_each_user_role_has_the_administrators_limits(two_users):
    url_a = two_users[0]
    with psycopg.connect(url_a, autocommit=True) as db:
        for name in ("statement_timeout", "lock_timeout", "idle_in_transaction_session_timeout"):
            assert db.execute(f"SHOW {name}").fetchone() == ("1min" if name != "lock_timeout"
                                                            else "10s",)  # fmt: skip
        (limit,) = db.execute(
            "SELECT rolconnlimit FROM pg_roles WHERE rolname = current_user"
        ).fetchone()
    assert limit == USER_LIMITS["connection_limit"]


def test_a_user_at_its_connection_limit_is_refused_and_others_are_not():
    server = pg_fixtures.server()
    user_a, user_b = pg_fixtures.unique("a"), pg_fixtures.unique("b")
    url_a = create_user(server.admin_url(), user_a, connection_limit=2)
    url_b = server.user_url(user_b)
    held = [psycopg.connect(url_a) for _ in range(2)]
    try:
        with pytest.raises(PostgresStoreError, match="too many connections.*CONNECTION LIMIT"):
            PostgresMemoryStore(url_a, user_a)
        with PostgresMemoryStore(url_b, user_b) as store:
            store.add(memory("m1", "b is not limited by a"))
    finally:
        for db in held:
            db.close()


# --- the store: a user's URL opens that user's store only ------------------------------------


def test_a_users_url_opens_only_that_users_store(two_users):
    url_a, user_a, url_b, user_b = two_users
    with pytest.raises(PostgresStoreError, match=f"another user, not of {user_b!r}"):
        PostgresMemoryStore(url_a, user_b)
    with PostgresMemoryStore(url_a, user_a) as store:
        assert [m.text for m in store] == ["a's first secret", "a's second secret"]
        store.remove("m2")  # through forget(): no DELETE grant
        assert store.select(f"SELECT user_id FROM {SCHEMA}.memories") == [(user_a,)]
    b_is_intact(url_b, user_b)


def test_a_role_that_is_no_users_is_refused_by_the_store():
    admin = pg_fixtures.admin_database()
    with psycopg.connect(admin, autocommit=True) as db:
        db.execute("DROP ROLE IF EXISTS stray_login")
        db.execute(f"CREATE ROLE stray_login LOGIN PASSWORD 'pw' IN ROLE {USERS_ROLE}")
    url = admin.replace(admin.split("@")[0], "postgresql://stray_login:pw")
    with pytest.raises(PostgresStoreError, match="no Memory Lab user's role.*pg-user"):
        PostgresMemoryStore(url, "alice")


def test_the_url_of_a_user_is_stable_and_rekeying_it_locks_the_old_one_out():
    server = pg_fixtures.server()
    user = pg_fixtures.unique("c")
    first = server.user_url(user)
    assert server.user_url(user) == first  # the saved password: the same URL
    rekeyed = create_user(server.admin_url(), user)
    assert rekeyed != first
    with pytest.raises(PostgresStoreError, match="refused the credentials"):
        PostgresMemoryStore(first, user)
    with PostgresMemoryStore(rekeyed, user) as store:
        assert len(store) == 0


# --- the shared role: one trusted app, as docs/postgres.md says ---------------------------------


def test_the_shared_role_is_one_trust_domain_guarding_only_against_its_own_bugs():
    """What the single-role mode does not protect: said here so the docs cannot overstate it."""
    url = pg_fixtures.lab_database()
    victim = pg_fixtures.unique("victim")
    with PostgresMemoryStore(url, victim) as store:
        store.add(memory("m1", "the victim's secret"))
        pid = store.select("SELECT pg_backend_pid()")[0][0]
        with psycopg.connect(url, autocommit=True) as db:
            db.execute("SELECT set_config('memorylab.user_id', %s, false)", (victim,))
            assert db.execute(f"SELECT text FROM {SCHEMA}.memories").fetchall() == [
                ("the victim's secret",)
            ]
            assert db.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone() == (True,)


# --- the administrator's command -----------------------------------------------------------


def test_pg_user_prints_a_url_that_opens_only_that_users_store(capsys, monkeypatch):
    from commands import pg_user
    from run import COMMANDS

    assert COMMANDS["pg-user"][0] == "commands.pg_user"
    user = pg_fixtures.unique("erin")
    monkeypatch.setenv("MEMORY_LAB_ADMIN_URL", pg_fixtures.admin_database())
    assert pg_user.main([user, "--connection-limit", "3", "--statement-timeout", "5s"]) == 0
    url = capsys.readouterr().out.strip()
    assert url.startswith("postgresql://memorylab_u_") and "memorylab_admin" not in url
    with PostgresMemoryStore(url, user) as store:
        store.add(memory("m1", "erin's note"))
        assert store.select("SHOW statement_timeout") == [("5s",)]
        assert store.select("SELECT rolconnlimit FROM pg_roles WHERE rolname = current_user") == [
            (3,)
        ]
    assert pg_user.main([user, "--drop"]) == 0
    with pytest.raises(PostgresStoreError, match="refused the credentials"):
        PostgresMemoryStore(url, user)


def test_pg_user_without_an_admin_url_or_with_a_bad_one_says_so(capsys):
    from commands import pg_user

    with pytest.raises(SystemExit):
        pg_user.main(["erin"])
    assert "--admin-url" in capsys.readouterr().err
    bad = pg_fixtures.admin_database().replace("memorylab_admin:", "memorylab_admin:x")
    assert pg_user.main(["erin", "--admin-url", bad]) == 1
    err = capsys.readouterr().err
    assert "refused the credentials" in err and "***@" in err  # the password is not shown
