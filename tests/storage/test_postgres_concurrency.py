"""Four processes on one database: recalling and writing at once lose nothing and cross nothing.

Each worker is a separate Python process with its own connection, as an app server on
another machine would be. They add, supersede (add-then-supersede in one transaction),
recall with the learner's retrieve and save, for one shared user or each for its own.
Afterwards every committed memory is there exactly once, under its own user, every
supersede link is intact, and no worker saw a deadlock or any other error.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import psycopg
import pytest

import pg_fixtures
from conftest import CODE
from memory_store import Memory
from storage.postgres_database import SCHEMA
from storage.postgres_store import PostgresMemoryStore

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

WORKERS = 4
STEPS = 40

WORKER = textwrap.dedent(
    """
    import sys
    from storage.postgres_store import PostgresMemoryStore
    from memory_store import Memory
    from retriever import retrieve

    url, user, name, steps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    store = PostgresMemoryStore(url, user)
    previous = None
    for step in range(steps):
        with store.transaction():  # one transaction: the fact and its link, or neither
            memory_id = store.next_id()  # one counter for all four
            vector = [1.0, float(step % 7), float(len(name))]
            store.add(Memory(memory_id, f"{name} step {step}", created_at=1e6 + step,
                             embedding=vector))
            if previous is not None and step % 3 == 0:
                store.supersede(previous, memory_id)
        previous = memory_id
        retrieve(store, [1.0, 1.0, 1.0], now=1e6 + steps, k=3)  # touches last_accessed
        store.save()
        # a reader that opens while the others write sees a consistent store
        PostgresMemoryStore(url, user).close()
    store.close()
    print("done", name)
    """
)


def run_workers(url: str, users: list[str]) -> None:
    env = {**os.environ, "PYTHONPATH": str(CODE)}
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, url, user, f"w{i}", str(STEPS)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i, user in enumerate(users)
    ]
    for i, process in enumerate(processes):
        out, err = process.communicate(timeout=240)  # a deadlock would hang: fail instead
        assert process.returncode == 0 and out.strip() == f"done w{i}", err[-2000:]


def check_user(url: str, user: str, workers: list[str]) -> None:
    with PostgresMemoryStore(url, user) as store:
        ids = [m.id for m in store]
        assert len(ids) == len(set(ids)) == STEPS * len(workers)  # no lost write, no double
        for name in workers:
            mine = [m for m in store if m.text.startswith(name + " ")]
            assert sorted(m.text for m in mine) == sorted(f"{name} step {s}" for s in range(STEPS))
            linked = [m for m in mine if m.superseded_by is not None]
            assert len(linked) == len(range(3, STEPS, 3))  # every committed supersede
            assert all(store.get(m.superseded_by).user_id == user for m in linked)
        assert {m.user_id for m in store} == {user}


@pytest.mark.needs_milestones(4)  # reaches the learner's retriever
def test_four_processes_writing_and_recalling_for_one_user_lose_nothing():
    url = pg_fixtures.lab_database()
    user = pg_fixtures.unique("shared")
    run_workers(url, [user] * WORKERS)
    check_user(url, user, [f"w{i}" for i in range(WORKERS)])


@pytest.mark.needs_milestones(4)  # reaches the learner's retriever
def test_four_processes_for_four_users_never_cross():
    url = pg_fixtures.lab_database()
    users = [pg_fixtures.unique(f"user{i}") for i in range(WORKERS)]
    run_workers(url, users)
    for i, user in enumerate(users):
        check_user(url, user, [f"w{i}"])
    with psycopg.connect(pg_fixtures.admin_database()) as db:  # the administrator sees all
        counts = dict(
            db.execute(
                f"SELECT user_id, count(*) FROM {SCHEMA}.memories WHERE user_id = ANY(%s) "
                "GROUP BY user_id",
                (users,),
            ).fetchall()
        )
    assert counts == dict.fromkeys(users, STEPS)


SAVER = textwrap.dedent(
    """
    import random, sys
    from storage.postgres_store import PostgresMemoryStore

    url, user, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rng = random.Random(seed)
    store = PostgresMemoryStore(url, user)
    memories = list(store)
    for step in range(60):
        rng.shuffle(memories)  # each process touches the same rows in its own order
        for m in memories[:8]:
            m.last_accessed = 2e6 + step
        store.save(only=memories[:8])
    store.close()
    print("done")
    """
)


def test_four_processes_saving_the_same_memories_in_different_orders_do_not_deadlock():
    url, user = pg_fixtures.lab_database(), pg_fixtures.unique("hot")
    with PostgresMemoryStore(url, user) as store:
        store.extend(Memory(f"m{i}", "hot", created_at=1e6, embedding=[1.0]) for i in range(12))
    env = {**os.environ, "PYTHONPATH": str(CODE)}
    processes = [
        subprocess.Popen([sys.executable, "-c", SAVER, url, user, str(seed)], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for seed in range(WORKERS)
    ]  # fmt: skip
    for process in processes:
        out, err = process.communicate(timeout=240)
        assert process.returncode == 0 and out.strip() == "done", err[-1500:]
