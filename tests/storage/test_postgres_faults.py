"""PostgreSQL faults survived: a server restart, a terminated session, a COMMIT cut off.

A store's connection (storage/postgres_database.Connection) reopens itself with backoff
between transactions; inside one it says ConnectionLost, nothing of that transaction
written; a COMMIT whose reply is lost is resolved by asking the database about that
transaction, never by sending it again. These tests use a server of their own (they
restart it), real sessions and real terminations; only the moment of a fault is chosen.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import threading
import time

import psycopg
import pytest

import pg_fixtures
from conftest import DAY, NOW
from memory_store import Memory
from storage import postgres_database
from storage.pg_server import PostgresServer
from storage.postgres_database import SCHEMA, ConnectionLost, PostgresStoreError
from storage.postgres_store import PostgresMemoryStore

pytestmark = pytest.mark.postgres


def memory(memory_id, text="a note", **fields) -> Memory:
    fields.setdefault("created_at", NOW - DAY)
    fields.setdefault("embedding", [1.0, 0.0, 0.0])
    return Memory(memory_id, text, **fields)


@pytest.fixture(scope="module")
def server():
    pg_fixtures.server()  # skips (or fails) as the other tests do when no server can start
    folder = tempfile.mkdtemp(prefix=pg_fixtures.PREFIX + "faults-")
    server = PostgresServer(folder)
    server.start()
    yield server
    server.stop()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def store(server):
    user = pg_fixtures.unique("alice")
    with PostgresMemoryStore(server.user_url(user), user) as store:
        store.add(memory("m1"))
        yield store


def rows(server, user) -> list[tuple]:
    """(id, last_accessed) of `user`'s rows, as the database holds them (read as admin)."""
    with psycopg.connect(server.admin_url(), autocommit=True) as db:
        return db.execute(
            f"SELECT id, last_accessed FROM {SCHEMA}.memories WHERE user_id = %s ORDER BY seq",
            (user,),
        ).fetchall()


def terminate(server, pid: int) -> None:
    with psycopg.connect(server.admin_url(), autocommit=True) as db:
        assert db.execute("SELECT pg_terminate_backend(%s, 5000)", (pid,)).fetchone() == (True,)


def backend(store) -> int:
    return store.select("SELECT pg_backend_pid()")[0][0]


# --- between transactions: reconnected, nothing lost ------------------------------------------


def test_a_server_restart_between_calls_is_survived_and_loses_nothing(server, store):
    store.get("m1").last_accessed = NOW  # touched in place, not saved yet
    server.stop()
    threading.Timer(1.0, server.start).start()  # down for a second: the store waits
    store.add(memory("m2"))  # reconnects with backoff, then runs
    assert store.save() == 1  # the touch made before the restart is written
    assert rows(server, store.user_id) == [("m1", NOW), ("m2", NOW - DAY)]
    assert store._db.reconnects == 1


def test_a_terminated_session_is_reopened_on_the_next_call(server, store):
    terminate(server, backend(store))
    store.add(memory("m2"))
    store.remove("m1")
    assert [memory_id for memory_id, _ in rows(server, store.user_id)] == ["m2"]
    assert store._db.reconnects == 1


def test_close_after_the_server_went_away_and_came_back_works(server, store):
    server.stop()
    server.start()
    store.get("m1").importance = 9.0
    store.close()  # saves through a new connection
    with psycopg.connect(server.admin_url(), autocommit=True) as db:
        assert db.execute(
            f"SELECT importance FROM {SCHEMA}.memories WHERE user_id = %s", (store.user_id,)
        ).fetchone() == (9.0,)


# --- inside a transaction: said, nothing of it written, then retried -----------------------------


def test_a_session_terminated_inside_a_transaction_writes_none_of_it(server, store):
    pid = backend(store)
    with pytest.raises(ConnectionLost, match="nothing of it was written"), store.transaction():
        store.add(memory("m2"))
        terminate(server, pid)
        store.add(memory("m3"))
    assert "m2" not in store and "m3" not in store  # undone in this process too
    assert [memory_id for memory_id, _ in rows(server, store.user_id)] == ["m1"]
    store.add(memory("m2"))  # the retry: reconnected, written once
    assert [memory_id for memory_id, _ in rows(server, store.user_id)] == ["m1", "m2"]


def cut_commit(store, server, after: bool) -> None:
    """Make the store's next COMMIT break: the session is terminated just before the COMMIT
    is sent (after=False: the transaction is rolled back) or just after it committed
    (after=True: only its reply is lost). The server and the termination are real."""
    raw = store._db._raw
    real = raw.execute

    def execute(query, params=None, **kwargs):
        if query != "COMMIT":
            return real(query, params, **kwargs)
        raw.execute = real
        pid = raw.info.backend_pid
        if after:
            real("COMMIT")
            terminate(server, pid)
            real("SELECT 1")  # raises: the connection is gone, the COMMIT's reply with it
        terminate(server, pid)
        return real("COMMIT")

    raw.execute = execute


def test_a_commit_whose_reply_was_lost_counts_once_it_is_found_committed(server, store):
    cut_commit(store, server, after=True)
    store.add(memory("m2"))  # no error: the database says the transaction committed
    assert [memory_id for memory_id, _ in rows(server, store.user_id)] == ["m1", "m2"]
    store.add(memory("m3"))  # and nothing was replayed: m2 is there once
    assert [memory_id for memory_id, _ in rows(server, store.user_id)] == ["m1", "m2", "m3"]


def test_a_commit_that_never_arrived_is_found_aborted_and_said(server, store):
    cut_commit(store, server, after=False)
    with pytest.raises(ConnectionLost, match="was aborted: nothing of it was written"):
        store.add(memory("m2"))
    assert "m2" not in store
    assert [memory_id for memory_id, _ in rows(server, store.user_id)] == ["m1"]
    store.add(memory("m2"))  # retried: written once
    assert [memory_id for memory_id, _ in rows(server, store.user_id)] == ["m1", "m2"]


# --- every driver error is a PostgresStoreError naming its cause ------------------------------


def test_a_statement_timeout_is_named(store):
    with pytest.raises(PostgresStoreError, match="cancelled the statement.*statement_timeout"):
        store.select("SELECT pg_sleep(2)", settings={"statement_timeout": "50ms"})
    assert store.select("SELECT 1") == [(1,)]  # the connection is still usable


def test_sql_the_server_refuses_is_named(store):
    with pytest.raises(PostgresStoreError, match="SyntaxError: syntax error"):
        store.select("SELEC 1")
    with pytest.raises(PostgresStoreError, match="refused the statement: permission denied"):
        store.select(f"SELECT * FROM {SCHEMA}.user_roles")


def test_a_server_that_stays_down_is_named_after_the_retries(server, store, monkeypatch):
    monkeypatch.setattr(postgres_database, "RECONNECT_SECONDS", 1.0)
    server.stop()
    try:
        began = time.monotonic()
        with pytest.raises(PostgresStoreError, match="could not be reopened in 1 s"):
            store.add(memory("m2"))
        assert time.monotonic() - began < 5
    finally:
        server.start()
    assert "m2" not in store  # the database answers again: nothing was written
    store.add(memory("m2"))


def test_no_psycopg_error_escapes_a_store(server, store):
    """Across a burst of terminations, only PostgresStoreError (ConnectionLost) is raised."""
    raised = []
    for i in range(2, 12):
        if i % 3 == 0:
            terminate(server, backend(store))
        try:
            with store.transaction():
                store.add(memory(f"m{i}"))
                if i % 4 == 0:
                    terminate(server, store._db.info.backend_pid)
                store.add(memory(f"x{i}"))
        except PostgresStoreError as error:
            raised.append(type(error))
    assert raised == [ConnectionLost] * 2  # i = 4 and 8: inside the block
    stored = {memory_id for memory_id, _ in rows(server, store.user_id)}
    assert stored == {m.id for m in store}


# --- the server's own state ----------------------------------------------------------------------


def test_running_is_false_as_soon_as_the_postmaster_is_killed(server):
    pid = int((server.data / "postmaster.pid").read_text().split()[0])
    os.kill(pid, signal.SIGKILL)
    assert not server.running()  # pg_ctl status would still say "running" for a while
    url = server.start()  # waits for the dead server to go, then starts it again
    with psycopg.connect(url, autocommit=True) as db:
        assert db.execute("SELECT 1").fetchone() == (1,)
    assert server.running()
