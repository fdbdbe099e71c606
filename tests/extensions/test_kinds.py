"""Half-life <-> hourly decay rate, and the default fade of each kind of memory."""

from __future__ import annotations

import math

import pytest

from base.decay import decay_rate_for_half_life, half_life_hours
from extensions.kinds import (
    DEFAULT_HALF_LIVES,
    decay_rate_for_kind,
    decay_rates,
    rank_by_kind,
    retrieve_by_kind,
)
from memory_store import Memory, MemoryStore
from retriever import rank_memories
from scoring import importance_score, recency_score, relevance_score, retrieval_score

NOW = 1_000_000.0
HOUR = 3600.0


@pytest.mark.parametrize("half_life", [1.0, 24.0, 138.3, 45 * 24.0])
def test_recency_halves_after_one_half_life(half_life):
    rate = decay_rate_for_half_life(half_life)
    assert recency_score(NOW, NOW - half_life * HOUR, decay_rate=rate) == pytest.approx(0.5)


@pytest.mark.parametrize("rate", [0.5, 0.9, 0.995, 0.9999])
def test_half_life_and_decay_rate_are_inverses(rate):
    assert decay_rate_for_half_life(half_life_hours(rate)) == pytest.approx(rate)
    assert half_life_hours(rate) == pytest.approx(math.log(0.5) / math.log(rate))


def test_the_course_decay_rate_has_a_half_life_of_about_138_hours():
    assert half_life_hours(0.995) == pytest.approx(138.28, abs=0.01)


def test_an_infinite_half_life_never_fades_and_rate_one_has_an_infinite_half_life():
    assert decay_rate_for_half_life(math.inf) == 1.0
    assert half_life_hours(1.0) == math.inf


def test_episodes_fade_and_facts_and_skills_do_not_by_default():
    assert decay_rate_for_kind("episodic") < 1.0
    assert decay_rate_for_kind("semantic") == decay_rate_for_kind("procedural") == 1.0
    assert DEFAULT_HALF_LIVES["episodic"] == 45 * 24


@pytest.mark.parametrize("bad", [0, -3, float("nan"), True, "24"])
def test_decay_rate_for_half_life_rejects_non_positive_or_non_numbers(bad):
    with pytest.raises((ValueError, TypeError), match="half_life_hours"):
        decay_rate_for_half_life(bad)


def test_a_half_life_so_short_that_its_rate_underflows_to_zero_is_refused_by_name():
    with pytest.raises(ValueError, match=r"half_life_hours=1e-05 is too short.*rounds to 0"):
        decay_rate_for_half_life(1e-5)  # 0.5 ** 100000 is below the smallest float
    assert 0.0 < decay_rate_for_half_life(0.01) < 1e-30  # tiny, but still a rate


@pytest.mark.parametrize("bad", [0.0, 1.5, -0.1])
def test_half_life_hours_rejects_rates_outside_zero_to_one(bad):
    with pytest.raises(ValueError, match="decay_rate"):
        half_life_hours(bad)


def test_decay_rate_for_kind_names_a_missing_kind_and_a_bad_kind():
    with pytest.raises(ValueError, match="procedural"):
        decay_rate_for_kind("episodic", {"episodic": 24.0, "semantic": math.inf})
    with pytest.raises(ValueError, match="kind"):
        decay_rate_for_kind("dream")


# --- kind-aware ranking ------------------------------------------------------------


def make(memory_id, kind, hours_ago, importance=5, embedding=(1.0, 0.0)):
    t = NOW - hours_ago * HOUR
    return Memory(
        memory_id,
        f"{kind} {memory_id}",
        kind=kind,
        created_at=t,
        last_accessed=t,
        importance=importance,
        embedding=list(embedding),
    )


@pytest.fixture
def store():
    store = MemoryStore()
    store.add(make("old_fact", "semantic", hours_ago=90 * 24, importance=6))
    store.add(make("fresh_episode", "episodic", hours_ago=2, importance=4))
    store.add(make("old_episode", "episodic", hours_ago=90 * 24, importance=6))
    store.add(make("skill", "procedural", hours_ago=400 * 24, importance=5, embedding=(0.6, 0.8)))
    return store


def test_decay_rates_gives_every_kind_its_own_rate():
    rates = decay_rates({"episodic": 24.0, "semantic": 240.0, "procedural": math.inf})
    assert rates["episodic"] == pytest.approx(0.5 ** (1 / 24))
    assert rates["semantic"] == pytest.approx(0.5 ** (1 / 240))
    assert rates["procedural"] == 1.0


def test_rank_by_kind_uses_each_kinds_rate_with_the_learners_scoring_functions(store):
    rates = decay_rates()
    rows = rank_by_kind(store, [1.0, 0.0], NOW, weights=(0.55, 0.25, 0.20))
    assert len(rows) == 4
    for row in rows:
        m = row.memory
        assert row.relevance == pytest.approx(relevance_score([1.0, 0.0], m.embedding))
        assert row.recency == pytest.approx(recency_score(NOW, m.last_accessed, rates[m.kind]))
        assert row.importance == pytest.approx(importance_score(m.importance))
        assert row.score == pytest.approx(
            retrieval_score(row.relevance, row.recency, row.importance, (0.55, 0.25, 0.20))
        )
    assert [r.score for r in rows] == sorted((r.score for r in rows), reverse=True)


def test_an_old_fact_keeps_full_recency_while_an_equally_old_episode_has_faded(store):
    rows = {r.memory.id: r for r in rank_by_kind(store, [1.0, 0.0], NOW)}
    assert rows["old_fact"].recency == 1.0
    assert rows["old_episode"].recency == pytest.approx(0.25)  # 90 days = two half-lives


def test_kind_aware_ranking_lifts_the_old_fact_above_the_one_rate_ranking(store):
    one_rate = [r.memory.id for r in rank_memories(store, [1.0, 0.0], NOW)]
    by_kind = [r.memory.id for r in rank_by_kind(store, [1.0, 0.0], NOW)]
    assert one_rate[0] == "fresh_episode"
    assert by_kind[0] == "old_fact"


def test_with_every_kind_at_the_same_rate_it_matches_the_learners_ranking(store):
    rate = 0.995
    same = dict.fromkeys(("episodic", "semantic", "procedural"), half_life_hours(rate))
    by_kind = rank_by_kind(store, [0.6, 0.8], NOW, half_lives=same)
    core = rank_memories(store, [0.6, 0.8], NOW, decay_rate=rate)
    assert [r.memory.id for r in by_kind] == [r.memory.id for r in core]
    assert [r.score for r in by_kind] == pytest.approx([r.score for r in core])


def test_retrieve_by_kind_skips_superseded_and_touches_exactly_the_returned(store):
    store.add(make("new_fact", "semantic", hours_ago=1, importance=6))
    store.supersede("old_fact", "new_fact")
    before = {m.id: m.last_accessed for m in store}
    top = retrieve_by_kind(store, [1.0, 0.0], NOW, k=2)
    assert "old_fact" not in [m.id for m in top]
    assert len(top) == 2
    for m in store:
        expected = NOW if m in top else before[m.id]
        assert m.last_accessed == expected, m.id


def test_ties_keep_the_store_order():
    store = MemoryStore()
    for memory_id in ("b", "a", "c"):
        store.add(make(memory_id, "semantic", hours_ago=5))
    assert [m.id for m in retrieve_by_kind(store, [1.0, 0.0], NOW, k=3)] == ["b", "a", "c"]


def test_retrieve_by_kind_on_an_empty_store_returns_nothing():
    assert retrieve_by_kind(MemoryStore(), [1.0, 0.0], NOW) == []


@pytest.mark.parametrize(
    ("k", "error"),
    [(0, ValueError), (-1, ValueError), (1.5, TypeError), (True, TypeError), ("3", TypeError)],
)
def test_retrieve_by_kind_rejects_a_bad_k(store, k, error):
    with pytest.raises(error, match="k must be an integer"):
        retrieve_by_kind(store, [1.0, 0.0], NOW, k=k)


@pytest.mark.parametrize(
    ("args", "error", "pattern"),
    [
        ({"query_embedding": [1.0, 0.0, 0.0]}, ValueError, "3 values but the store"),
        ({"query_embedding": []}, ValueError, "at least one value"),
        ({"now": "yesterday"}, TypeError, "now must be epoch seconds"),
        ({"weights": (1.0, -1.0, 1.0)}, ValueError, "recency weight"),
        ({"half_lives": {"episodic": 24.0}}, ValueError, "missing"),
        ({"half_lives": {**DEFAULT_HALF_LIVES, "dream": 1.0}}, ValueError, "unknown kind"),
        (
            {"half_lives": {**DEFAULT_HALF_LIVES, 1: 1.0, "x": 1.0}},
            ValueError,
            r"unknown kind\(s\) \['x', 1\]",
        ),
        (
            {"half_lives": {**DEFAULT_HALF_LIVES, "semantic": 0}},
            ValueError,
            r"half_lives\['semantic'\] must be a positive number of hours",
        ),
        ({"half_lives": {**DEFAULT_HALF_LIVES, "semantic": None}}, TypeError, "math.inf"),
    ],
)
def test_rank_by_kind_names_the_bad_argument(store, args, error, pattern):
    call = {"query_embedding": [1.0, 0.0], "now": NOW, **args}
    with pytest.raises(error, match=pattern):
        rank_by_kind(store, call.pop("query_embedding"), call.pop("now"), **call)


def test_rank_by_kind_refuses_something_that_is_not_a_store():
    with pytest.raises(TypeError, match="MemoryStore"):
        rank_by_kind([], [1.0], NOW)


def mixed_store():
    store = MemoryStore(user_id=None)  # the many-user store under the index
    for memory_id, user in (("a1", "alice"), ("b1", "bob")):
        memory = make(memory_id, "semantic", hours_ago=1)
        memory.user_id = user
        store.add(memory)
    return store


@pytest.mark.parametrize("ranker", [rank_by_kind, retrieve_by_kind])
def test_a_store_mixing_two_users_is_refused_so_no_memory_reaches_another_users_prompt(ranker):
    store = mixed_store()
    before = {m.id: m.last_accessed for m in store}
    with pytest.raises(ValueError, match=r"2 users \('alice', 'bob'\).*one user's store"):
        ranker(store, [1.0, 0.0], NOW)
    assert {m.id: m.last_accessed for m in store} == before  # nothing touched


def test_a_replaced_practice_stays_procedural_and_only_the_new_one_is_recalled():
    from embedding_helpers import Embedder
    from extensions.superseding import replace_fact

    embedder = Embedder("memorylab/hashed-bow-384")
    store = MemoryStore()
    embedder.remember(store, "to deploy run make deploy", kind="procedural", now=NOW - 300 * 86400)
    new = replace_fact(store, embedder, "m1", "to deploy push a version tag", NOW)
    assert new.kind == "procedural" and store.get("m1").superseded_by == new.id
    query = embedder.query(store, "how do I deploy")
    assert [m.id for m in retrieve_by_kind(store, query, NOW, k=5)] == [new.id]
