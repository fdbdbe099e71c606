"""The score in SQL: the learner's ranking exactly (property tests), and the HNSW shortlist.

sql_rank must return rank_memories' rows, in its order, with its scores, ties included,
although pgvector computes similarities in float32; candidates_then_rerank is allowed to
miss (it scores only the nearest by similarity) and a test shows how.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pg_fixtures
from conftest import DAY, HOUR, NOW
from memory_store import Memory, MemoryStore
from retriever import rank_memories, retrieve
from scale import pg_retrieval
from scale.pg_retrieval import (
    candidates_then_rerank,
    create_hnsw_index,
    error_bound,
    retrieve_sql,
    sql_rank,
    sql_scores,
)
from storage.postgres_store import PostgresMemoryStore

pytestmark = pytest.mark.postgres


def fresh_store() -> PostgresMemoryStore:
    return PostgresMemoryStore(pg_fixtures.lab_database(), pg_fixtures.unique("user"))


def ranked(rows) -> list[tuple[str, float]]:
    return [(row.memory.id, row.score) for row in rows]


# few distinct values, so that equal vectors, times and importances (ties) are common
VALUE = st.sampled_from([0.0, 1.0, -1.0, 0.5, 0.25, 3.0, 1e-3])
TIME = st.sampled_from([NOW, NOW - HOUR, NOW - DAY, NOW - 10 * DAY, NOW + HOUR, 0.0])


@st.composite
def cases(draw):
    dim = draw(st.integers(1, 6))
    vector = st.lists(VALUE, min_size=dim, max_size=dim)
    n = draw(st.integers(1, 14))
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
    superseded = draw(st.lists(st.integers(0, n - 1), unique=True, max_size=n // 3))
    links = {i: n - 1 for i in superseded if i != n - 1}  # old -> the newest, which stays live
    weights = draw(st.sampled_from([(1.0, 1.0, 1.0), (2.0, 0.5, 0.0), (0.0, 1.0, 1.0)]))
    decay = draw(st.sampled_from([0.995, 0.5, 1.0]))
    return memories, links, draw(vector), draw(st.integers(1, n + 2)), weights, decay


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_the_sql_ranking_equals_rank_memories_ties_included(case):
    memories, links, query, k, weights, decay = case
    with fresh_store() as store:
        store.extend(memories)
        for old, new in links.items():
            store.supersede(f"m{old}", f"m{new}")
        expected = rank_memories(store, query, NOW, weights=weights, decay_rate=decay)[:k]
        got = sql_rank(store, query, NOW, k=k, weights=weights, decay_rate=decay)
        assert ranked(got) == ranked(expected)


def near_ties(n: int, dim: int, seed: int) -> list[Memory]:
    """n memories whose similarities to a base direction differ in the 8th digit."""
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


def test_near_ties_in_384_dimensions_are_ranked_exactly_and_the_bound_holds():
    with fresh_store() as store:
        store.extend(near_ties(200, 384, seed=1))
        query = store.get("m0").embedding
        exact = {r.memory.id: r.score for r in rank_memories(store, query, NOW)}
        fast = sql_scores(store, query, NOW)
        worst = max(abs(fast[i] - exact[i]) for i in exact)
        assert 0 < worst <= error_bound(384, (1.0, 1.0, 1.0))  # float32 did round
        for k in (1, 5, 20):
            assert ranked(sql_rank(store, query, NOW, k=k)) == ranked(
                rank_memories(store, query, NOW)[:k]
            )


def test_without_the_error_bound_float32_would_reorder_near_ties(monkeypatch):
    """The guard the exact ranking rests on: with no margin, the SQL order leaks through."""
    with fresh_store() as store:
        store.extend(near_ties(200, 384, seed=1))
        query = store.get("m0").embedding
        monkeypatch.setattr(pg_retrieval, "error_bound", lambda dim, weights: 0.0)
        mismatches = sum(
            ranked(sql_rank(store, store.get(f"m{q}").embedding, NOW, k=10))
            != ranked(rank_memories(store, store.get(f"m{q}").embedding, NOW)[:10])
            for q in range(20)
        )
        assert query and mismatches > 0


def test_retrieve_sql_is_retrieve_refreshing_the_same_memories_and_saving_them():
    rng = np.random.default_rng(7)
    memories = [
        Memory(
            f"m{i}",
            f"note {i}",
            created_at=NOW - i * HOUR,
            importance=1 + i % 10,
            embedding=rng.normal(size=8).tolist(),
        )
        for i in range(60)
    ]
    with fresh_store() as store:
        store.extend(memories)
        twin = MemoryStore(user_id=store.user_id)
        twin.extend(Memory.from_dict(m.to_dict()) for m in store)
        for step in range(3):
            query = rng.normal(size=8).tolist()
            now = NOW + step * HOUR
            expected = [m.id for m in retrieve(twin, query, now, k=4)]
            assert [m.id for m in retrieve_sql(store, query, now, k=4)] == expected
            assert store.unsaved() == []  # saved: the next SQL query sees the new recency
        assert [m.last_accessed for m in store] == [m.last_accessed for m in twin]
        user, url = store.user_id, pg_fixtures.lab_database()
    with PostgresMemoryStore(url, user) as reopened:
        assert [m.last_accessed for m in reopened] == [m.last_accessed for m in twin]


def test_a_zero_query_or_zero_memory_scores_relevance_zero_as_the_learner_does():
    with fresh_store() as store:
        store.add(Memory("m1", "zero", created_at=NOW, importance=3, embedding=[0.0, 0.0]))
        store.add(Memory("m2", "unit", created_at=NOW - DAY, importance=9, embedding=[1.0, 0.0]))
        for query in ([0.0, 0.0], [1.0, 0.0], [-1.0, 1e-30]):
            assert ranked(sql_rank(store, query, NOW, k=2)) == ranked(
                rank_memories(store, query, NOW)
            )
        assert not any(math.isnan(s) for s in sql_scores(store, [0.0, 0.0], NOW).values())


def test_memories_another_process_added_are_ranked_without_reopening():
    with fresh_store() as store:  # the database is the source of truth: nothing to reload
        store.add(Memory("m1", "mine", created_at=NOW, embedding=[1.0, 0.0]))
        with PostgresMemoryStore(pg_fixtures.lab_database(), store.user_id) as other:
            other.add(Memory("m2", "theirs", created_at=NOW, importance=10, embedding=[1.0, 0.0]))
        assert [row.memory.id for row in sql_rank(store, [1.0, 0.0], NOW, k=1)] == ["m2"]


def test_bad_arguments_get_retrieves_errors():
    with fresh_store() as store:
        store.add(Memory("m1", "x", created_at=NOW, embedding=[1.0, 0.0]))
        with pytest.raises(ValueError, match="query_embedding has 3 values"):
            sql_rank(store, [1.0, 0.0, 0.0], NOW)
        with pytest.raises(ValueError, match="k"):
            sql_rank(store, [1.0, 0.0], NOW, k=0)
        with pytest.raises(TypeError, match="PostgresMemoryStore"):
            sql_rank(MemoryStore(), [1.0, 0.0], NOW)
        with pytest.raises(ValueError, match="candidates"):
            candidates_then_rerank(store, [1.0, 0.0], NOW, k=3, candidates=2)


# --- candidate then rerank (HNSW) ------------------------------------------------------------


def test_the_shortlist_by_similarity_can_drop_a_recent_important_memory():
    """The course's warning, measured: candidates by similarity alone miss m_recent."""
    create_hnsw_index(pg_fixtures.admin_database(), 8)
    rng = np.random.default_rng(3)
    query = np.ones(8)
    memories = [  # 60 close to the query, but a year old and mundane
        Memory(
            f"m{i}",
            f"old {i}",
            created_at=NOW - 365 * DAY,
            importance=1,
            embedding=(query + 0.1 * rng.normal(size=8)).tolist(),
        )
        for i in range(60)
    ]
    far = np.array([1.0, -1.0] * 4)  # unrelated (orthogonal), but fresh and core
    memories.append(Memory("recent", "signed", created_at=NOW, importance=10, embedding=far))
    with fresh_store() as store:
        store.extend(memories)
        exact = [r.memory.id for r in sql_rank(store, query.tolist(), NOW, k=3)]
        shortlist = candidates_then_rerank(store, query.tolist(), NOW, k=3, candidates=40)
        assert exact[0] == "recent"
        assert "recent" not in [r.memory.id for r in shortlist]
        assert len(shortlist) == 3
        exact_rows = {r.memory.id: r.score for r in rank_memories(store, query.tolist(), NOW)}
        assert all(row.score == exact_rows[row.memory.id] for row in shortlist)  # rescored
        everything = candidates_then_rerank(store, query.tolist(), NOW, k=3, candidates=61)
        assert [r.memory.id for r in everything] == exact  # a shortlist of all: exact again


def test_the_index_is_refused_beyond_pgvectors_2000_dimensions():
    with pytest.raises(ValueError, match="at most 2000 dimensions"):
        create_hnsw_index(pg_fixtures.admin_database(), 2001)


def test_a_recency_too_small_for_a_float_is_zero_in_sql_as_in_python():
    # 0.5 ** 2778 hours underflows: PostgreSQL's power() would raise instead of returning 0
    now = 10_000_000.0
    with fresh_store() as store:
        store.add(Memory("m1", "ancient", created_at=0.0, embedding=[1.0, 0.0]))
        store.add(Memory("m2", "newer", created_at=now - HOUR, embedding=[0.0, 1.0]))
        got = sql_rank(store, [1.0, 0.0], now, k=2, decay_rate=0.5)
        assert ranked(got) == ranked(rank_memories(store, [1.0, 0.0], now, decay_rate=0.5))
        assert (got[0].memory.id, got[0].recency) == ("m1", 0.0)


def test_a_flood_of_another_users_rows_leaves_a_users_shortlist_unchanged():
    """The shared index holds every user's rows; 25,000 of A's, nearer the query than any
    of B's, exhaust pgvector's iterative scan (hnsw.max_scan_tuples, 20,000) before it
    reaches B's: a short shortlist is then computed exactly, so B's answer stays B's."""
    create_hnsw_index(pg_fixtures.admin_database(), 5)
    rng = np.random.default_rng(5)
    query = np.ones(5)
    mine = [
        Memory(f"m{i}", f"b {i}", created_at=NOW - DAY, importance=1 + i % 10,
               embedding=(query + 0.3 * rng.normal(size=5)).tolist())
        for i in range(30)
    ]  # fmt: skip
    with fresh_store() as b:
        b.extend(mine)
        before = [r.memory.id for r in candidates_then_rerank(b, query.tolist(), NOW, k=3,
                                                               candidates=10)]  # fmt: skip
        with fresh_store() as a:
            a.extend(
                Memory(f"f{i}", "flood", created_at=NOW - DAY,
                       embedding=(query + 0.01 * rng.normal(size=5)).tolist())
                for i in range(25_000)
            )  # fmt: skip
            after = candidates_then_rerank(b, query.tolist(), NOW, k=3, candidates=10)
    assert [r.memory.id for r in after] == before
    assert len(after) == 3 and all(r.memory.id.startswith("m") for r in after)
