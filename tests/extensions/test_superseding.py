"""extensions/superseding.py: replacing a fact keeps the old one as history and never recalls it."""

from __future__ import annotations

import pytest

from conftest import DAY, NOW
from embedding_helpers import Embedder
from extensions.superseding import (
    current_version,
    fact_history,
    likely_replaced,
    remember_fact,
    replace_fact,
)
from memory_store import Memory, MemoryStore
from retriever import retrieve

GROQ = "Eric prefers Groq for the default API"
OPENAI = "Eric now prefers OpenAI for the default API"


@pytest.fixture
def embedder():
    return Embedder("memorylab/hashed-bow-384")


@pytest.fixture
def store(embedder):
    store = MemoryStore()
    embedder.remember(store, GROQ, kind="semantic", importance=7, now=NOW - 30 * DAY)
    embedder.remember(store, "Eric likes dark mode in every editor", kind="semantic", now=NOW)
    embedder.remember(store, "debugged the default API timeout", kind="episodic", now=NOW)
    return store


def test_a_replacing_fact_supersedes_the_old_one_which_stays_stored(store, embedder):
    update = remember_fact(store, embedder, OPENAI, NOW)
    assert update.replaced is not None and update.replaced.text == GROQ
    assert update.replaced.superseded_by == update.memory.id
    assert update.memory.metadata["replaces"] == update.replaced.id
    assert update.memory.importance == 7  # inherited from the fact it replaces
    assert len(store) == 4  # nothing deleted


def test_the_replaced_fact_is_never_recalled_again(store, embedder):
    remember_fact(store, embedder, OPENAI, NOW)
    query = embedder.query(store, "which default API does Eric prefer?")
    recalled = retrieve(store, query, now=NOW, k=len(store))
    assert GROQ not in [m.text for m in recalled]
    assert OPENAI in [m.text for m in recalled]


def test_an_unrelated_fact_replaces_nothing(store, embedder):
    update = remember_fact(store, embedder, "Eric's cat is called Miso", NOW)
    assert update.replaced is None
    assert all(m.superseded_by is None for m in store)
    assert update.memory.importance == 5


def test_episodes_are_never_candidates_for_replacement(store, embedder):
    query = embedder.embed_one("debugged the default API timeout again")
    assert likely_replaced(store, query, min_similarity=0.1).kind == "semantic"
    assert likely_replaced(store, query, min_similarity=0.99) is None


@pytest.mark.parametrize(("threshold", "found"), [(0.5, True), (0.9, False)])
def test_the_similarity_threshold_decides_whether_a_candidate_is_offered(
    store, embedder, threshold, found
):
    candidate = likely_replaced(store, embedder.embed_one(OPENAI), min_similarity=threshold)
    assert (candidate is not None) is found


def test_likely_replaced_on_an_empty_store_is_none(embedder):
    assert likely_replaced(MemoryStore(), embedder.embed_one(OPENAI)) is None


@pytest.mark.parametrize("bad", [1.5, -2, float("nan")])
def test_likely_replaced_rejects_a_threshold_that_is_not_a_cosine(store, embedder, bad):
    with pytest.raises(ValueError, match="min_similarity"):
        likely_replaced(store, embedder.embed_one(OPENAI), min_similarity=bad)


def test_history_runs_oldest_first_from_any_version(store, embedder):
    second = remember_fact(store, embedder, OPENAI, NOW + 1).memory
    third = remember_fact(
        store, embedder, "Eric now prefers Anthropic for the default API", NOW + 2
    ).memory
    expected = [GROQ, OPENAI, third.text]
    for start in ("m1", second.id, third.id):
        assert [m.text for m in fact_history(store, start)] == expected
        assert current_version(store, start) is third


def test_a_fact_that_was_never_replaced_is_its_own_history(store):
    assert [m.id for m in fact_history(store, "m2")] == ["m2"]


def test_replacing_an_already_replaced_fact_names_the_current_version(store, embedder):
    new = replace_fact(store, embedder, "m1", OPENAI, NOW)
    size = len(store)
    with pytest.raises(ValueError, match=f"already replaced by '{new.id}'.*current version"):
        replace_fact(store, embedder, "m1", "Eric prefers Mistral for the default API", NOW)
    assert len(store) == size  # refused before writing


def test_an_event_cannot_be_replaced(store, embedder):
    with pytest.raises(ValueError, match="m3' is episodic"):
        replace_fact(store, embedder, "m3", "debugged nothing", NOW)
    assert len(store) == 3


def test_an_explicit_replacement_and_an_unknown_id(store, embedder):
    update = remember_fact(store, embedder, "dark mode off", NOW, replaces="m2")
    assert update.replaced.id == "m2"
    with pytest.raises(KeyError, match="no memory with id 'm99'"):
        remember_fact(store, embedder, "x", NOW, replaces="m99")


def test_replaces_none_only_adds(store, embedder):
    update = remember_fact(store, embedder, OPENAI, NOW, replaces=None)
    assert update.replaced is None and store.get("m1").superseded_by is None


def test_a_hand_made_cycle_is_reported_not_followed_forever():
    store = MemoryStore()
    for memory_id in ("a", "b"):
        store.add(Memory(memory_id, memory_id, kind="semantic", created_at=NOW, embedding=[1.0]))
    store.get("a").superseded_by = "b"
    store.get("b").superseded_by = "a"  # bypasses MemoryStore.supersede's checks
    with pytest.raises(ValueError, match="cycle"):
        current_version(store, "a")


def test_the_new_version_belongs_to_the_old_facts_user(embedder):
    store = MemoryStore(user_id="eric")
    embedder.remember(store, GROQ, kind="semantic", now=NOW)
    assert replace_fact(store, embedder, "m1", OPENAI, NOW).user_id == "eric"


def test_a_fact_is_never_matched_against_another_users_fact(embedder):
    store = MemoryStore(user_id=None)  # the many-user store under the index
    embedder.remember(store, GROQ, kind="semantic", now=NOW, user_id="bob")
    embedder.remember(store, "Alice likes dark mode", kind="semantic", now=NOW, user_id="alice")
    with pytest.raises(ValueError, match=r"2 users \('alice', 'bob'\)"):
        remember_fact(store, embedder, OPENAI, NOW)
    with pytest.raises(ValueError, match="2 users"):
        likely_replaced(store, embedder.embed_one(OPENAI))
    assert len(store) == 2 and all(m.superseded_by is None for m in store)


@pytest.mark.parametrize(
    ("text", "error"), [("", ValueError), ("   ", ValueError), (None, TypeError), (42, TypeError)]
)
def test_an_empty_or_non_text_fact_is_refused_before_anything_is_written(
    store, embedder, text, error
):
    with pytest.raises(error, match="fact must be a non-empty string"):
        remember_fact(store, embedder, text, NOW)
    with pytest.raises(error, match="fact must be a non-empty string"):
        replace_fact(store, embedder, "m1", text, NOW)
    assert len(store) == 3 and store.get("m1").superseded_by is None


def test_a_replacement_that_cannot_be_linked_leaves_no_second_live_fact(
    store, embedder, monkeypatch
):
    def refuse(old_id, new_id):
        raise RuntimeError("the store file is locked")

    monkeypatch.setattr(store, "supersede", refuse)
    with pytest.raises(RuntimeError, match="locked"):
        replace_fact(store, embedder, "m1", OPENAI, NOW)
    assert [m.text for m in store] == [
        GROQ,
        "Eric likes dark mode in every editor",
        store.get("m3").text,
    ]
    assert store.get("m1").superseded_by is None


def test_exclude_names_whole_ids_not_substrings(embedder):
    store = MemoryStore()
    embedder.remember(store, GROQ, kind="semantic", now=NOW)
    query = embedder.embed_one(OPENAI)
    assert likely_replaced(store, query, exclude=("m10",)).id == "m1"
    assert likely_replaced(store, query, exclude="m10").id == "m1"  # one id, not "m", "1", "0"
    assert likely_replaced(store, query, exclude="m1") is None


@pytest.mark.parametrize(("embedding", "error"), [("abc", TypeError), ([1.0, 0.0], ValueError)])
def test_a_bad_embedding_is_refused_even_with_no_candidate_fact(embedder, embedding, error):
    store = MemoryStore()
    embedder.remember(store, "debugged the default API timeout", kind="episodic", now=NOW)
    with pytest.raises(error, match="query_embedding"):
        likely_replaced(store, embedding)


def test_the_learner_fact_to_replace_decides_which_fact_is_replaced(store, embedder, monkeypatch):
    from extensions import superseding

    seen = []

    def the_event(user_id, candidates, threshold):  # a rule that picks the episode
        seen.extend(candidates)
        return next(c["id"] for c in candidates if c["kind"] == "episodic")

    monkeypatch.setattr(superseding, "fact_to_replace", the_event)
    assert likely_replaced(store, embedder.embed_one(OPENAI)).kind == "episodic"
    assert [c["id"] for c in seen] == [m.id for m in store]  # every memory, in store order
    assert {c["user"] for c in seen} == {store.user_id}


@pytest.mark.parametrize("answer", ["nope", 3, ["m1"]])
def test_an_answer_that_is_no_candidate_id_is_refused(store, embedder, monkeypatch, answer):
    from extensions import superseding

    monkeypatch.setattr(superseding, "fact_to_replace", lambda *args: answer)
    with pytest.raises(TypeError, match="fact_to_replace must return one candidate's id"):
        likely_replaced(store, embedder.embed_one(OPENAI))
