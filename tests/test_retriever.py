"""retriever.py: ranking, top-k, the refresh on recall, superseded facts, ties, bad input."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import DAY, HOUR, NOW
from memory_store import Memory, MemoryStore
from retriever import ScoredMemory, rank_memories, retrieve
from scoring import importance_score, recency_score, relevance_score, retrieval_score


def make_store(*specs) -> MemoryStore:
    """specs: (id, embedding, hours since last access, importance)."""
    store = MemoryStore()
    for memory_id, embedding, hours, importance in specs:
        t = NOW - hours * HOUR
        store.add(
            Memory(
                memory_id,
                f"memory {memory_id}",
                created_at=t,
                last_accessed=t,
                importance=importance,
                embedding=embedding,
            )
        )
    return store


@pytest.fixture
def store():
    return make_store(
        ("old_trivial", [1.0, 0.0], 1000, 1),  # on topic but old and mundane
        ("fresh_core", [0.8, 0.6], 1, 9),  # mostly on topic, fresh, important
        ("off_topic", [0.0, 1.0], 0, 5),  # brand new but about something else
    )


def snapshot(store):
    return {m.id: m.last_accessed for m in store}


def test_rank_memories_scores_every_memory_with_the_three_signals(store):
    rows = rank_memories(store, [1.0, 0.0], NOW, weights=(0.5, 0.3, 0.2), decay_rate=0.99)
    assert {row.memory.id for row in rows} == {"old_trivial", "fresh_core", "off_topic"}
    for row in rows:
        m = row.memory
        assert isinstance(row, ScoredMemory)
        assert row.relevance == pytest.approx(relevance_score([1.0, 0.0], m.embedding))
        assert row.recency == pytest.approx(recency_score(NOW, m.last_accessed, 0.99))
        assert row.importance == pytest.approx(importance_score(m.importance))
        assert row.score == pytest.approx(
            retrieval_score(row.relevance, row.recency, row.importance, (0.5, 0.3, 0.2))
        )


def test_rank_memories_sorts_best_first_and_changes_nothing(store):
    before = snapshot(store)
    rows = rank_memories(store, [1.0, 0.0], NOW)
    assert [row.score for row in rows] == sorted((row.score for row in rows), reverse=True)
    assert [row.memory.id for row in rows] == ["fresh_core", "off_topic", "old_trivial"]
    assert snapshot(store) == before


def test_retrieve_returns_the_top_k_memories_best_first(store):
    top = retrieve(store, [1.0, 0.0], NOW, k=2)
    assert [m.id for m in top] == ["fresh_core", "off_topic"]
    assert all(isinstance(m, Memory) for m in top)


def test_retrieve_refreshes_exactly_the_returned_memories(store):
    later = NOW + 5 * HOUR
    top = retrieve(store, [1.0, 0.0], later, k=1)
    assert [m.id for m in top] == ["fresh_core"]
    assert store.get("fresh_core").last_accessed == later
    assert store.get("off_topic").last_accessed == NOW
    assert store.get("old_trivial").last_accessed == NOW - 1000 * HOUR


def test_retrieve_with_a_datetime_now_stores_epoch_seconds(store):
    when = datetime.fromtimestamp(NOW + HOUR, tz=UTC)
    (top,) = retrieve(store, [1.0, 0.0], when, k=1)
    assert top.last_accessed == pytest.approx(NOW + HOUR)


def test_relevance_only_weights_fixate_on_the_old_trivial_memory(store):
    # The course's first failure mode: rank on relevance alone and the stale memory wins.
    (top,) = retrieve(store, [1.0, 0.0], NOW, k=1, weights=(1.0, 0.0, 0.0))
    assert top.id == "old_trivial"


def test_retrieving_with_a_clock_behind_the_writers_touches_every_winner(store):
    store.add(
        Memory("written_later", "x", created_at=NOW + 30, embedding=[1.0, 0.0], importance=10)
    )
    top = retrieve(store, [1.0, 0.0], NOW, k=2)  # our clock is 30 s behind
    assert top[0].id == "written_later"
    assert all(m.last_accessed == NOW for m in top)
    assert recency_score(NOW, top[0].created_at) == 1.0  # a future time counts as 0 hours


def test_k_larger_than_the_store_returns_every_memory(store):
    assert len(retrieve(store, [1.0, 0.0], NOW, k=50)) == 3


def test_an_empty_store_returns_an_empty_list():
    assert retrieve(MemoryStore(), [1.0, 0.0], NOW, k=3) == []
    assert rank_memories(MemoryStore(), [1.0, 0.0], NOW) == []


def test_superseded_memories_are_never_returned_but_stay_stored(store):
    store.add(Memory("newer", "memory newer", created_at=NOW, importance=9, embedding=[1.0, 0.0]))
    store.supersede("fresh_core", "newer")
    ids = [m.id for m in retrieve(store, [1.0, 0.0], NOW, k=10)]
    assert "fresh_core" not in ids
    assert "newer" in ids
    assert "fresh_core" in store
    assert store.get("fresh_core").last_accessed == NOW - HOUR  # not touched either


def test_equal_scores_keep_the_order_the_memories_were_added():
    store = make_store(*[(f"m{i}", [1.0, 0.0], 2, 5) for i in (3, 1, 2)])
    assert [m.id for m in retrieve(store, [1.0, 0.0], NOW, k=3)] == ["m3", "m1", "m2"]


def test_retrieval_keeps_used_memories_warm_and_lets_unused_ones_fade():
    # Two equal memories; only one is ever recalled. A week later, recency tells them apart.
    store = make_store(("used", [1.0, 0.0], 0, 5), ("unused", [0.0, 1.0], 0, 5))
    for day in range(1, 8):
        retrieve(store, [1.0, 0.0], NOW + day * DAY, k=1)
    rows = {r.memory.id: r for r in rank_memories(store, [1.0, 1.0], NOW + 7 * DAY)}
    assert rows["used"].recency == 1.0
    assert rows["unused"].recency == pytest.approx(0.995 ** (7 * 24))


@pytest.mark.parametrize(
    ("k", "error"),
    [
        (0, ValueError),
        (-1, ValueError),
        (1.5, TypeError),
        ("3", TypeError),
        (True, TypeError),
        (None, TypeError),
    ],
)
def test_k_must_be_a_positive_integer(store, k, error):
    with pytest.raises(error, match="k must be an integer >= 1"):
        retrieve(store, [1.0, 0.0], NOW, k=k)


def test_k_may_be_a_numpy_integer(store):
    assert len(retrieve(store, [1.0, 0.0], NOW, k=np.int64(2))) == 2


def test_a_query_of_the_wrong_length_names_both_lengths(store):
    with pytest.raises(ValueError, match="3 values but the store's memories have 2"):
        retrieve(store, [1.0, 0.0, 0.0], NOW)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"store": [1, 2]}, TypeError, "MemoryStore"),
        ({"query_embedding": []}, ValueError, "query_embedding"),
        ({"now": "today"}, TypeError, "now"),
        ({"weights": (1.0, 1.0)}, ValueError, "weights"),
        ({"decay_rate": 1.5}, ValueError, "decay_rate"),
    ],
)
def test_bad_arguments_raise_naming_the_argument(store, kwargs, error, match):
    args = {"store": store, "query_embedding": [1.0, 0.0], "now": NOW, **kwargs}
    with pytest.raises(error, match=match):
        retrieve(**args)
    with pytest.raises(error, match=match):
        rank_memories(**args)


memory_specs = st.lists(
    st.tuples(
        st.sampled_from([(1.0, 0.0), (0.0, 1.0), (0.6, 0.8), (0.0, 0.0), (-1.0, 0.5)]),
        st.sampled_from([0.0, 1.0, 5.0, 48.0, 1000.0]),  # hours since access: few values, many ties
        st.integers(min_value=1, max_value=10),
        st.booleans(),  # superseded?
    ),
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(memory_specs, st.integers(min_value=1, max_value=15))
def test_retrieve_returns_the_k_best_live_memories_and_touches_only_them(specs, k):
    store = make_store(*[(f"m{i}", e, h, imp) for i, (e, h, imp, _) in enumerate(specs)])
    store.add(Memory("keeper", "x", created_at=NOW - DAY, embedding=[1.0, 1.0]))
    for i, (*_, superseded) in enumerate(specs):
        if superseded:
            store.supersede(f"m{i}", "keeper")
    before = snapshot(store)
    live = [m for m in store if m.superseded_by is None]
    expected = rank_memories(store, [1.0, 0.2], NOW)[:k]

    top = retrieve(store, [1.0, 0.2], NOW, k=k)

    assert len(top) == min(k, len(live))
    assert [m.id for m in top] == [row.memory.id for row in expected]
    for m in store:
        assert m.last_accessed == (NOW if m in top else before[m.id])
