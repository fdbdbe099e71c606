"""PostgreSQL: one extend of many memories fits the role's time limits, or names the limit.

A user's role has a transaction_timeout (storage/postgres_database.py's USER_LIMITS); the
server ends the session of a transaction that outlives it, so the client sees only a
closed connection. An extend is one transaction: its commit must not read back, one
statement each, the rows it has just written, and a transaction ended by the limit says
which limit it was.
"""

from __future__ import annotations

import time

import pytest

import pg_fixtures
from conftest import DAY, NOW
from memory_store import Memory
from storage import postgres_database
from storage.postgres_database import ConnectionLost
from storage.postgres_store import PostgresMemoryStore

pytestmark = pytest.mark.postgres


def memory(memory_id, text="a note", **fields) -> Memory:
    fields.setdefault("created_at", NOW - DAY)
    fields.setdefault("embedding", [1.0, 0.5, 0.0])
    return Memory(memory_id, text, **fields)


def test_an_extend_of_many_memories_does_not_read_them_back_one_by_one(monkeypatch):
    user = pg_fixtures.unique("many")
    url = pg_fixtures.server().user_url(user)
    statements = []
    execute = postgres_database.Connection.execute

    def counted(self, query, params=None):
        statements.append(query)
        return execute(self, query, params)

    with PostgresMemoryStore(url, user) as store:
        monkeypatch.setattr(postgres_database.Connection, "execute", counted)
        batch = [memory(f"m{i}", f"note {i}") for i in range(2_000)]
        batch[5].superseded_by = "m6"  # a link inside the batch: still checked
        store.extend(batch)
        monkeypatch.undo()
        assert len(statements) < 40, statements[:50]  # was three a memory: 6,000 and more
        assert len(store) == 2_000
        assert store.get("m5").superseded_by == "m6"
    with PostgresMemoryStore(url, user) as again:
        assert again.get("m1999").text == "note 1999" and again.get("m5").superseded_by == "m6"


def test_a_link_to_a_missing_memory_inside_an_extend_is_still_refused():
    user = pg_fixtures.unique("dangling")
    url = pg_fixtures.server().user_url(user)
    with PostgresMemoryStore(url, user) as store:
        store.add(memory("m1"))
        with pytest.raises(ValueError, match="m9"):
            store.extend([memory("m2", superseded_by="m9")])
        assert len(store) == 1


def test_a_transaction_past_the_roles_transaction_timeout_says_so():
    user = pg_fixtures.unique("slow")
    url = pg_fixtures.server().user_url(user, transaction_timeout="1s")
    with PostgresMemoryStore(url, user) as store:
        limit = pytest.raises(ConnectionLost, match=r"transaction_timeout is 1 s")
        with limit, store.transaction():
            store.add(memory("m1"))
            time.sleep(2.5)  # the server ends the session after 1 s in the transaction
            store.add(memory("m2"))
        assert "m1" not in store and len(store) == 0  # rolled back, and reconnected
