"""Milestone 5: kind_recency_score (scoring.py) and retrieve_by_kind (retriever.py).

Values against hand-computed numbers and Milestone 1 (a half-life is a decay rate in
disguise), the meaning of math.inf, the retriever's contract (the same as retrieve's) and
bad input.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from base.decay import decay_rate_for_half_life
from base.defaults import HALF_LIVES
from conftest import DAY, HOUR, NOW
from memory_store import Memory, MemoryStore
from retriever import retrieve, retrieve_by_kind
from scoring import kind_recency_score, recency_score

FAST = {"episodic": 24.0, "semantic": 240.0, "procedural": math.inf}

# --- kind_recency_score ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("hours", "kind", "half_lives", "expected"),
    [
        (0, "episodic", HALF_LIVES, 1.0),
        (45 * 24, "episodic", HALF_LIVES, 0.5),  # one half-life: 45 days
        (90 * 24, "episodic", HALF_LIVES, 0.25),  # two
        (90 * 24, "semantic", HALF_LIVES, 1.0),  # facts never fade
        (400 * 24, "procedural", HALF_LIVES, 1.0),  # nor skills
        (24, "episodic", FAST, 0.5),
        (24, "semantic", FAST, 0.5**0.1),
        (12, "episodic", FAST, 0.5**0.5),  # fractional half-lives count
    ],
)
def test_kind_recency_halves_once_per_half_life_of_the_memorys_kind(
    hours, kind, half_lives, expected
):
    got = kind_recency_score(NOW, NOW - hours * HOUR, kind, half_lives)
    assert got == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("kind", ["episodic", "semantic", "procedural"])
@pytest.mark.parametrize("half_life", [1.0, 24.0, 138.3, 1080.0])
def test_a_half_life_is_the_decay_rate_of_milestone_1_in_disguise(kind, half_life):
    table = {"episodic": half_life, "semantic": half_life, "procedural": half_life}
    rate = decay_rate_for_half_life(half_life)  # rate ** half_life == 0.5
    for hours in (0.5, 7.0, 300.0):
        assert kind_recency_score(NOW, NOW - hours * HOUR, kind, table) == pytest.approx(
            recency_score(NOW, NOW - hours * HOUR, decay_rate=rate), rel=1e-9
        )


def test_an_infinite_half_life_means_exactly_1_at_any_age():
    never = dict.fromkeys(HALF_LIVES, math.inf)  # every kind
    for days in (0, 1, 365, 3650):
        assert kind_recency_score(NOW, NOW - days * DAY, "episodic", never) == 1.0


def test_kind_recency_in_the_future_counts_as_zero_hours():
    assert kind_recency_score(NOW, NOW + 5 * HOUR, "episodic") == 1.0
    assert kind_recency_score(NOW, NOW + 5 * HOUR, "episodic", FAST) == 1.0


def test_kind_recency_counts_hours_not_seconds_or_days():
    assert kind_recency_score(NOW, NOW - HOUR, "episodic", FAST) == pytest.approx(0.5 ** (1 / 24))


def test_kind_recency_accepts_datetimes():
    now = datetime(2026, 3, 1, 12, tzinfo=UTC)
    assert kind_recency_score(now, now - timedelta(days=45), "episodic") == pytest.approx(0.5)


def test_the_default_half_lives_are_the_courses_and_cannot_be_changed_by_accident():
    assert dict(HALF_LIVES) == {"episodic": 1080.0, "semantic": math.inf, "procedural": math.inf}
    with pytest.raises(TypeError):
        HALF_LIVES["episodic"] = 1.0  # a default argument is shared by every call


@pytest.mark.parametrize(
    ("kind", "half_lives", "error", "match"),
    [
        ("dream", HALF_LIVES, ValueError, "kind must be one of"),
        ("episodic", {"episodic": 24.0}, ValueError, r"missing \['semantic', 'procedural'\]"),
        ("episodic", {**HALF_LIVES, "dream": 1.0}, ValueError, "unknown kind"),
        ("episodic", {**HALF_LIVES, "episodic": None}, TypeError, "write math.inf"),
        ("episodic", {**HALF_LIVES, "episodic": 0}, ValueError, "positive number of hours"),
        ("episodic", {**HALF_LIVES, "episodic": -24.0}, ValueError, "positive number of hours"),
        ("episodic", {**HALF_LIVES, "episodic": math.nan}, ValueError, "finite"),
        ("episodic", {**HALF_LIVES, "episodic": -math.inf}, ValueError, "finite"),
        ("episodic", {**HALF_LIVES, "episodic": True}, TypeError, "must be a number"),
        ("episodic", {**HALF_LIVES, "episodic": "24"}, TypeError, "must be a number"),
        ("episodic", [1080.0, math.inf, math.inf], TypeError, "dict of hours per kind"),
        ("episodic", 0.995, TypeError, "dict of hours per kind"),  # a rate is no table
    ],
)
def test_bad_kinds_and_half_lives_raise_naming_the_rule(kind, half_lives, error, match):
    with pytest.raises(error, match=match):
        kind_recency_score(NOW, NOW - HOUR, kind, half_lives)


# --- retrieve_by_kind --------------------------------------------------------------------


def make(memory_id, kind, hours_ago, importance=5, embedding=(1.0, 0.0), accessed=None):
    created = NOW - hours_ago * HOUR
    last = created if accessed is None else NOW - accessed * HOUR
    return Memory(
        memory_id,
        f"{kind} {memory_id}",
        kind=kind,
        created_at=created,
        last_accessed=last,
        importance=importance,
        embedding=list(embedding),
    )


def fresh_store() -> MemoryStore:
    """A new copy each time: retrieving refreshes what it returns."""
    store = MemoryStore()
    store.add(make("old_fact", "semantic", hours_ago=120 * 24, importance=6))
    store.add(make("fresh_episode", "episodic", hours_ago=3, importance=5))
    store.add(make("old_episode", "episodic", hours_ago=90 * 24, importance=6))
    store.add(make("skill", "procedural", hours_ago=400 * 24, importance=5, embedding=(0.6, 0.8)))
    store.add(make("recalled", "episodic", hours_ago=300 * 24, accessed=1, embedding=(0.8, 0.6)))
    return store


@pytest.fixture
def store():
    return fresh_store()


def test_a_standing_fact_outlasts_a_fresh_episode_where_one_rate_forgets_it(store):
    assert [m.id for m in retrieve(store, [1.0, 0.0], NOW, k=1)] == ["fresh_episode"]
    assert [m.id for m in retrieve_by_kind(store, [1.0, 0.0], NOW, k=1)] == ["old_fact"]


def test_retrieve_by_kind_ranks_best_first_with_every_signal(store):
    got = [m.id for m in retrieve_by_kind(store, [1.0, 0.0], NOW, k=5)]
    # old_fact 1 + 1 + 0.6 = 2.6; fresh_episode 1 + 0.998 + 0.5; recalled 0.8 + 0.9994 + 0.5;
    # skill 0.6 + 1 + 0.5 = 2.1; old_episode 1 + 0.25 + 0.6 = 1.85
    assert got == ["old_fact", "fresh_episode", "recalled", "skill", "old_episode"]


def test_recency_by_kind_counts_from_the_last_access_not_creation(store):
    top = retrieve_by_kind(store, [0.8, 0.6], NOW, k=1, weights=(0.0, 1.0, 0.0))
    assert top[0].id in {"old_fact", "skill"}  # never fade: 1.0
    rows = retrieve_by_kind(store, [0.8, 0.6], NOW, k=5, weights=(0.0, 1.0, 0.0))
    ids = [m.id for m in rows]
    assert ids.index("recalled") < ids.index("fresh_episode")  # recalled 1 hour ago


def test_retrieve_by_kind_refreshes_exactly_the_returned_memories(store):
    before = {m.id: m.last_accessed for m in store}
    top = retrieve_by_kind(store, [1.0, 0.0], NOW, k=2)
    for memory in store:
        assert memory.last_accessed == (NOW if memory in top else before[memory.id]), memory.id


def test_retrieve_by_kind_returns_the_stores_own_memories(store):
    top = retrieve_by_kind(store, [1.0, 0.0], NOW, k=3)
    assert all(store.get(m.id) is m for m in top)


def test_a_superseded_skill_is_never_recalled_but_stays_stored(store):
    store.add(make("new_skill", "procedural", hours_ago=1, embedding=(0.6, 0.8)))
    store.supersede("skill", "new_skill")
    got = [m.id for m in retrieve_by_kind(store, [0.6, 0.8], NOW, k=10)]
    assert "skill" not in got and "new_skill" in got and "skill" in store


def test_equal_scores_keep_the_order_the_memories_were_added():
    store = MemoryStore()
    for memory_id, kind in (("b", "semantic"), ("a", "procedural"), ("c", "semantic")):
        store.add(make(memory_id, kind, hours_ago=5 * (1 + len(store))))
    assert [m.id for m in retrieve_by_kind(store, [1.0, 0.0], NOW, k=3)] == ["b", "a", "c"]


def test_with_one_half_life_for_every_kind_it_is_retrieve_at_that_rate(store):
    rate = 0.995
    same = {kind: math.log(0.5) / math.log(rate) for kind in HALF_LIVES}
    twin = MemoryStore()
    for memory in store:
        twin.add(make(memory.id, memory.kind, (NOW - memory.created_at) / HOUR,
                      memory.importance, memory.embedding,
                      (NOW - memory.last_accessed) / HOUR))  # fmt: skip
    by_kind = retrieve_by_kind(store, [0.6, 0.8], NOW, k=5, half_lives=same)
    core = retrieve(twin, [0.6, 0.8], NOW, k=5, decay_rate=rate)
    assert [m.id for m in by_kind] == [m.id for m in core]


def test_half_lives_and_weights_are_passed_on():
    default = [m.id for m in retrieve_by_kind(fresh_store(), [1.0, 0.0], NOW, k=5)]
    fast = [m.id for m in retrieve_by_kind(fresh_store(), [1.0, 0.0], NOW, k=5, half_lives=FAST)]
    heavy = retrieve_by_kind(fresh_store(), [1.0, 0.0], NOW, k=2, weights=(0.0, 0.0, 1.0))
    # FAST: the 120-day-old fact (a 10-day half-life) and the 90-day-old episode are gone
    assert fast == ["fresh_episode", "recalled", "skill", "old_fact", "old_episode"] != default
    assert [m.id for m in heavy] == ["old_fact", "old_episode"]  # importance 6, then 6


def test_k_larger_than_the_store_and_an_empty_store(store):
    assert len(retrieve_by_kind(store, [1.0, 0.0], NOW, k=50)) == 5
    assert retrieve_by_kind(MemoryStore(), [1.0, 0.0], NOW) == []


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"k": 0}, ValueError, "k must be"),
        ({"k": 1.5}, TypeError, "k must be an integer"),
        ({"weights": (1.0, -1.0, 1.0)}, ValueError, "recency weight"),
        ({"half_lives": {"episodic": 1.0}}, ValueError, "missing"),
        ({"half_lives": {**HALF_LIVES, "semantic": None}}, TypeError, "math.inf"),
        ({"query_embedding": [1.0, 0.0, 0.0]}, ValueError, "3 values"),
        ({"now": "today"}, TypeError, "now must be"),
    ],
)
def test_bad_arguments_raise_and_leave_the_store_unchanged(store, kwargs, error, match):
    before = {m.id: m.last_accessed for m in store}
    call = {"query_embedding": [1.0, 0.0], "now": NOW, **kwargs}
    with pytest.raises(error, match=match):
        retrieve_by_kind(store, call.pop("query_embedding"), call.pop("now"), **call)
    assert {m.id: m.last_accessed for m in store} == before


def test_something_that_is_not_a_store_is_refused():
    with pytest.raises(TypeError, match="MemoryStore"):
        retrieve_by_kind([], [1.0], NOW)
