"""A chat turn on PostgreSQL: SQL ranks, the learner's retrieve decides, the answer is exact.

scale.pg_retrieval.recall hands the learner's retrieve the SQL shortlist (every memory
whose float32 score lies within the proven bound of the k-th) and saves its refreshes.
Property tests hold it to retrieve over the whole store on random stores full of ties;
the chat loop is held to the same answer, and to never reading the whole store.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pg_fixtures
import retriever
from chat_with_memory import chat_with_memory
from config import Settings, load_settings
from conftest import DAY, HOUR, NOW
from embedding_helpers import Embedder
from llm import terminal_chat
from memory_store import Memory, MemoryStore
from scale import pg_retrieval
from scale.pg_retrieval import Shortlist, recall, shortlist
from storage.postgres_store import PostgresMemoryStore

pytestmark = pytest.mark.postgres

VALUE = st.sampled_from([0.0, 1.0, -1.0, 0.5, 0.25, 3.0, 1e-3])  # few values: many ties
TIME = st.sampled_from([NOW, NOW - HOUR, NOW - DAY, NOW - 10 * DAY, NOW + HOUR, 0.0])


def user_store() -> PostgresMemoryStore:
    user = pg_fixtures.unique("user")
    return PostgresMemoryStore(pg_fixtures.server().user_url(user), user)


@st.composite
def cases(draw):
    dim = draw(st.integers(1, 6))
    vector = st.lists(VALUE, min_size=dim, max_size=dim)
    n = draw(st.integers(1, 16))
    memories = [
        Memory(
            f"m{i}",
            f"note {i}",
            created_at=0.0,
            last_accessed=draw(TIME),
            importance=draw(st.sampled_from([1, 5, 5.5, 10])),
            embedding=draw(vector),
        )
        for i in range(n)
    ]
    superseded = draw(st.lists(st.integers(0, max(n - 2, 0)), unique=True, max_size=(n - 1) // 3))
    queries = draw(st.lists(vector, min_size=1, max_size=3))  # recalls in a row: refreshes count
    weights = draw(st.sampled_from([(1.0, 1.0, 1.0), (2.0, 0.5, 0.0), (0.0, 1.0, 1.0)]))
    decay = draw(st.sampled_from([0.995, 0.5, 1.0]))
    return memories, superseded, queries, draw(st.integers(1, n + 2)), weights, decay


def stored(store) -> list[tuple]:
    """(id, last_accessed) as the database holds them now, read without saving."""
    return store.select("SELECT id, last_accessed FROM memorylab.memories ORDER BY seq")


def state(store) -> list[tuple]:
    return [(m.id, m.last_accessed, m.superseded_by) for m in store]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_recall_on_the_shortlist_equals_retrieve_over_the_whole_store(case):
    memories, superseded, queries, k, weights, decay = case
    whole = MemoryStore()
    whole.extend(copy.deepcopy(memories))
    with user_store() as store:
        store.extend(memories)
        for old in superseded:
            whole.supersede(f"m{old}", f"m{len(memories) - 1}")
            store.supersede(f"m{old}", f"m{len(memories) - 1}")
        for i, query in enumerate(queries):
            now = NOW + i * HOUR
            expected = retriever.retrieve(whole, query, now, k=k, weights=weights, decay_rate=decay)
            got = recall(store, query, now, k=k, weights=weights, decay_rate=decay)
            assert [m.id for m in got] == [m.id for m in expected]
            assert state(store) == state(whole)  # exactly the same memories refreshed
            assert stored(store) == [(m.id, m.last_accessed) for m in whole]  # and written
        url, user = store._db.url, store.user_id
    with PostgresMemoryStore(url, user) as reopened:  # and the refreshes were written
        assert state(reopened) == state(whole)


def near_ties(n: int, dim: int, seed: int) -> list[Memory]:
    rng = np.random.default_rng(seed)
    base = rng.normal(size=dim)
    return [
        Memory(
            f"m{i}",
            f"note {i}",
            created_at=NOW - DAY,
            importance=5,
            embedding=(base + 1e-4 * rng.normal(size=dim)).tolist(),
        )
        for i in range(n)
    ]


def test_near_ties_in_384_dimensions_are_decided_exactly_and_need_the_bound(monkeypatch):
    memories = near_ties(200, 384, seed=1)
    whole = MemoryStore()
    whole.extend(copy.deepcopy(memories))
    with user_store() as store:
        store.extend(memories)
        queries = [store.get(f"m{i}").embedding for i in range(0, 40, 4)]
        for k in (1, 5):
            for query in queries:
                expected = retriever.rank_memories(whole, query, NOW)[:k]
                sizes = len(shortlist(store, query, NOW, k=k))
                assert sizes >= k
                got = pg_retrieval.shortlist(store, query, NOW, k=k)
                assert [r.memory.id for r in retriever.rank_memories(got, query, NOW)[:k]] == [
                    r.memory.id for r in expected
                ]
        # the guard: with no margin for float32, the shortlist misses the exact winners
        monkeypatch.setattr(pg_retrieval, "error_bound", lambda dim, weights: 0.0)
        wrong = 0
        for query in queries:
            got = pg_retrieval.shortlist(store, query, NOW, k=5)
            ranked = [r.memory.id for r in retriever.rank_memories(got, query, NOW)[:5]]
            wrong += ranked != [r.memory.id for r in retriever.rank_memories(whole, query, NOW)[:5]]
        assert wrong > 0


def test_recall_runs_the_learners_retrieve_on_a_shortlist(monkeypatch):
    seen = []

    def learner(store, query_embedding, now, k=3, weights=(1.0, 1.0, 1.0), decay_rate=0.995):
        seen.append(type(store))
        return list(
            reversed(retriever.retrieve(store, query_embedding, now, k, weights, decay_rate))
        )

    with user_store() as store:
        store.extend(near_ties(30, 8, seed=2))
        got = recall(store, store.get("m0").embedding, NOW, k=3, retrieve=learner)
        assert seen == [Shortlist] and len(got) == 3
        assert got == list(reversed(retriever.retrieve(store, store.get("m0").embedding, NOW)))


# --- the chat loop ---------------------------------------------------------------------


TEXTS = [
    "My name is Dana and I live in Lisbon",
    "I am allergic to shellfish",
    "I prefer Groq for quick experiments",
    "We met Ana for lunch today",
    "Always run the tests before a deploy",
    "My favourite editor theme is solarized dark",
    "I drive a blue Toyota",
]


MODEL = "memorylab/minilm-l6-v2"  # the default hybrid reads every memory to weigh a query's
# words (embeddings/hybrid.py), a full scan on any store; this model embeds a query alone
TURN = Settings(embed_model=MODEL, db_path=None)


def remembered(store) -> MemoryStore:
    embedder = Embedder(MODEL)
    for i, text in enumerate(TEXTS):
        embedder.remember(store, text, now=NOW - i * DAY, importance=1 + i % 9)
    return store


def test_a_chat_turn_on_postgresql_recalls_what_it_recalls_in_memory(monkeypatch):
    whole = remembered(MemoryStore())
    with remembered(user_store()) as store:
        for i, question in enumerate(["where do I live?", "what do I drive?", "any allergies?"]):
            now = NOW + i * HOUR
            expected = chat_with_memory(question, whole, now=now, settings=TURN, write_back=False)
            # subtle: the turn must not read the whole store (it may hold 100,000 memories)
            monkeypatch.setattr(PostgresMemoryStore, "__iter__", _no_full_scan)
            got = chat_with_memory(question, store, now=now, settings=TURN, write_back=False)
            monkeypatch.undo()
            assert [m.id for m in got.recalled] == [m.id for m in expected.recalled]
            assert got.messages == expected.messages
        assert state(store) == state(whole)
        url, user = store._db.url, store.user_id
    with PostgresMemoryStore(url, user) as reopened:
        assert state(reopened) == state(whole)


def _no_full_scan(self):
    raise AssertionError("the chat turn iterated the whole PostgreSQL store")


def test_a_failed_turn_on_postgresql_refreshes_nothing(monkeypatch):
    from llm import gateway

    def down(*args, **kwargs):
        raise gateway.ModelCallError("the model is down")

    monkeypatch.setattr(gateway, "complete", down)
    with remembered(user_store()) as store:
        before = state(store)
        with pytest.raises(gateway.ModelCallError):
            chat_with_memory("where do I live?", store, now=NOW + DAY, settings=TURN)
        assert state(store) == before
        assert store.save() == 0


def test_the_terminal_chat_opens_postgresql_from_memory_lab_database_url(monkeypatch):
    user = pg_fixtures.unique("dana")
    monkeypatch.setenv("MEMORY_LAB_DATABASE_URL", pg_fixtures.server().user_url(user))
    monkeypatch.setenv("MEMORY_LAB_USER", user)
    store = terminal_chat.open_chat_store(load_settings())
    with store:
        assert isinstance(store, PostgresMemoryStore) and store.user_id == user
    assert isinstance(terminal_chat.open_chat_store(Settings(), use_database=False), MemoryStore)


def test_a_store_larger_than_the_top_query_is_decided_in_one_sort(monkeypatch):
    """Random directions (few near ties): the top k + PADDING rows settle it, exactly."""
    rng = np.random.default_rng(3)
    memories = [
        Memory(f"m{i}", f"note {i}", created_at=NOW - float(rng.integers(1, 500)) * HOUR,
               importance=int(rng.integers(1, 11)), embedding=rng.standard_normal(64).tolist())
        for i in range(300)
    ]  # fmt: skip
    memories[7].embedding = [0.0] * 64  # a zero vector: untrusted, always rescored
    whole = MemoryStore()
    whole.extend(copy.deepcopy(memories))
    with user_store() as store:
        store.extend(memories)
        monkeypatch.setattr(pg_retrieval, "WITHIN_BOUND_SQL", "SELECT no_fallback_here")
        for q in range(8):
            query = rng.standard_normal(64).tolist()
            now = NOW + q * HOUR
            expected = retriever.retrieve(whole, query, now, k=5)
            assert [m.id for m in recall(store, query, now, k=5)] == [m.id for m in expected]
            assert "m7" in shortlist(store, query, now, k=5)
