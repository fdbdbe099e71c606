"""PostgreSQL: a user holding only their own URL cannot exhaust what the others need, nor read
another user's data from the planner.

Each test runs, as user A on a plain psycopg connection, what a hostile neighbour would:
large objects and temporary tables (disk that counts against no role), a setting raised
past its limit, sockets that never finish authenticating, EXPLAIN of another user's id
or of a text range. docs/postgres.md's trust table quotes these measurements.
"""

from __future__ import annotations

import json
import socket
import struct
import time

import psycopg
import pytest

import pg_fixtures
from conftest import DAY, NOW
from memory_store import Memory
from storage.postgres_database import (
    SCHEMA,
    USER_LIMITS,
    USER_ROLE_PREFIX,
    bare_connection,
    user_role,
)
from storage.postgres_store import PostgresMemoryStore

pytestmark = pytest.mark.postgres

DENIED = psycopg.errors.InsufficientPrivilege


def memory(memory_id, text, **fields) -> Memory:
    fields.setdefault("created_at", NOW - DAY)
    fields.setdefault("embedding", [1.0, 0.0, 0.0])
    return Memory(memory_id, text, **fields)


@pytest.fixture
def neighbours():
    """(A's URL, B's URL, B's id): B holds 50 memories, A none."""
    server = pg_fixtures.server()
    user_a, user_b = pg_fixtures.unique("a"), pg_fixtures.unique("b")
    url_a, url_b = server.user_url(user_a), server.user_url(user_b)
    with PostgresMemoryStore(url_b, user_b) as store:
        store.extend(memory(f"m{i}", f"bob's diary, page {i}: zebra {i}") for i in range(50))
    return url_a, url_b, user_b


def refused(db, statement) -> psycopg.Error | None:
    try:
        with db.transaction():
            db.execute(statement)
    except psycopg.Error as error:
        return error
    return None


# --- disk: nothing that outlives a session or counts against no role -------------------------


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT lo_from_bytea(0, 'x')",
        "SELECT lo_create(0)",
        "SELECT lo_creat(-1)",
        "CREATE TEMP TABLE filler (x text)",
        "CREATE TEMPORARY TABLE filler AS SELECT 1",
        "SET temp_file_limit = -1",
    ],
)
def test_large_objects_temporary_tables_and_the_temp_file_limit_are_refused(neighbours, statement):
    url_a, url_b, user_b = neighbours
    with psycopg.connect(url_a, autocommit=True) as db:
        assert isinstance(refused(db, statement), DENIED), statement
        assert db.execute("SELECT count(*) FROM pg_largeobject_metadata").fetchone() == (0,)
    with PostgresMemoryStore(url_b, user_b) as store:
        assert len(store) == 50


def test_a_sort_spilling_past_the_roles_temp_file_limit_is_cancelled(neighbours):
    url_a = neighbours[0]
    with psycopg.connect(url_a, autocommit=True) as db:
        assert db.execute("SHOW temp_file_limit").fetchone() == (USER_LIMITS["temp_file_limit"],)
        error = refused(
            db,
            "SELECT count(*) FROM (SELECT md5(g::text) AS h FROM generate_series(1, 3000000) g "
            "ORDER BY h) AS spilled",
        )
    assert isinstance(error, psycopg.errors.ConfigurationLimitExceeded), error
    assert "temp_file_limit" in str(error)


# --- connections: sockets that never authenticate starve no one ------------------------------


def startup_packet(role: str, database: str) -> bytes:
    body = struct.pack("!i", 196608)  # protocol 3.0
    body += f"user\0{role}\0database\0{database}\0\0".encode()
    return struct.pack("!i", len(body) + 4) + body


def test_unauthenticated_sockets_beyond_every_slot_leave_a_user_able_to_connect(neighbours):
    url_a = neighbours[0]
    server = pg_fixtures.server()
    with bare_connection(server.admin_url()) as admin:
        (slots,) = admin.execute("SHOW max_connections").fetchone()
    held = []
    try:
        for _ in range(int(slots) + 20):  # 120 at the default 100 slots
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(str(server.directory / f".s.PGSQL.{server.port}"))
            sock.sendall(startup_packet("nobody_at_all", "memorylab"))
            held.append(sock)  # and never answers the password request
        started = time.monotonic()
        with bare_connection(url_a) as db:
            assert db.execute("SELECT 1").fetchone() == (1,)
        waited = time.monotonic() - started
    finally:
        for sock in held:
            sock.close()
    assert waited < 10  # the server's authentication_timeout, then a free slot


# --- the planner: estimates say nothing of another user's rows ------------------------------


def estimated_rows(db, where: str, params=()) -> float:
    (plan,) = db.execute(
        f"EXPLAIN (FORMAT JSON) SELECT * FROM {SCHEMA}.memories WHERE {where}", params
    ).fetchone()
    plan = plan if isinstance(plan, list) else json.loads(plan)
    return plan[0]["Plan"]["Plan Rows"]


def test_explain_estimates_are_the_same_for_a_present_and_a_missing_user(neighbours):
    url_a, _, user_b = neighbours
    with bare_connection(pg_fixtures.admin_database()) as admin:
        admin.execute(f"ANALYZE {SCHEMA}.memories")
    with psycopg.connect(url_a, autocommit=True) as db:
        present = estimated_rows(db, "user_id = %s", (user_b,))
        missing = estimated_rows(db, "user_id = %s", (pg_fixtures.unique("nobody"),))
        bounds = [("bob", "boc"), ("bob's diary, page 1", "bob's diary, page 2"), ("a", "b")]
        ranges = {estimated_rows(db, "text >= %s AND text < %s", pair) for pair in bounds}
    assert present == missing
    assert len(ranges) == 1


# --- role names: nothing to confirm by guessing ---------------------------------------------


def test_role_names_are_random_and_kept_for_the_same_user():
    import hashlib

    server = pg_fixtures.server()
    user = pg_fixtures.unique("carol")
    server.user_url(user)
    role = user_role(server.admin_url(), user)
    guessed = USER_ROLE_PREFIX + hashlib.sha256(user.encode()).hexdigest()[:24]
    assert role.startswith(USER_ROLE_PREFIX) and role != guessed
    from storage.postgres_database import create_user

    create_user(server.admin_url(), user)  # re-keyed: the same role, a new password
    assert user_role(server.admin_url(), user) == role
