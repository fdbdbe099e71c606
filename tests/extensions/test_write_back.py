"""extensions/write_back.py: turns written back as memories of their kind, rated, replacing."""

from __future__ import annotations

import pytest

from conftest import HOUR, NOW
from embedding_helpers import Embedder
from extensions.write_back import classify_turn, guess_kind, remember_turn, updates
from memory_store import MemoryStore
from retriever import retrieve

EMBEDDER = Embedder()  # the default: the kind of similarity the threshold was set for


@pytest.mark.parametrize(
    ("text", "kind", "cue"),
    [
        ("I drive a blue Toyota.", "semantic", "i drive"),
        ("My sister lives in Lyon.", "semantic", "my sister lives"),
        ("I moved to Porto last month, I live there now.", "semantic", "i live"),
        ("Always run the tests before a deploy", "procedural", "always"),
        ("When I ask for code, use Python.", "procedural", "when i ask for code"),
        ("We met Ana for lunch today", "episodic", "met"),
        ("The weather is nice.", "episodic", "no cue word"),
    ],
)
def test_a_turn_gets_its_kind_from_the_words_that_decide_it(text, kind, cue):
    guessed, why = guess_kind(text)
    assert guessed == kind
    assert cue in why


def test_only_a_statement_of_change_can_replace_a_fact():
    assert updates("I sold the Toyota, now I drive a red Honda.")
    assert updates("I no longer eat meat")
    assert not updates("I like swimming.")


def test_a_new_fact_supersedes_the_old_one_and_recall_quotes_only_the_new():
    store = MemoryStore()
    for hours, text in enumerate(
        ["I drive a blue Toyota.", "My sister lives in Lyon.", "I like hiking."]
    ):
        remember_turn(store, EMBEDDER, text, NOW + hours * HOUR)
    turn = remember_turn(
        store, EMBEDDER, "I sold the Toyota, now I drive a red Honda.", NOW + 9 * HOUR
    )
    assert turn.replaced is not None and turn.replaced.text == "I drive a blue Toyota."
    assert turn.memory.kind == "semantic" and turn.memory.metadata["replaces"] == turn.replaced.id
    recalled = retrieve(store, EMBEDDER.query(store, "What car do I own?"), NOW + 10 * HOUR, k=3)
    texts = [m.text for m in recalled]
    assert "I sold the Toyota, now I drive a red Honda." in texts
    assert "I drive a blue Toyota." not in texts


def test_two_similar_facts_without_a_change_both_stay_live():
    store = MemoryStore()
    remember_turn(store, EMBEDDER, "I like hiking.", NOW)
    turn = remember_turn(store, EMBEDDER, "I like swimming.", NOW + HOUR)
    assert turn.replaced is None
    assert [m.superseded_by for m in store] == [None, None]


def test_an_event_is_never_replaced():
    store = MemoryStore()
    remember_turn(store, EMBEDDER, "We met Ana for lunch today", NOW)
    turn = remember_turn(store, EMBEDDER, "Now we met Ana for dinner today", NOW + HOUR)
    assert turn.memory.kind == "episodic" and turn.replaced is None


def test_importance_is_rated_unless_it_is_given():
    store = MemoryStore()
    rated = remember_turn(store, EMBEDDER, "I am allergic to peanuts.", NOW)
    assert rated.memory.importance > 5  # "allergic" is a cue of the offline rater
    fixed = remember_turn(store, EMBEDDER, "I am allergic to cats.", NOW, importance=5)
    assert fixed.memory.importance == 5
    assert rated.memory.metadata["kind_source"] == "heuristic"


@pytest.mark.slow  # imports litellm
def test_a_real_model_classifies_in_one_call_and_a_reply_without_a_kind_falls_back():
    said = classify_turn(
        "I drive a Honda", "gpt-4o-mini", mock_response="Kind: semantic\nImportance: 6"
    )
    assert (said.kind, said.importance, said.source) == ("semantic", 6, "model")
    vague = classify_turn("I drive a Honda", "gpt-4o-mini", mock_response="no idea")
    assert vague.source == "heuristic" and "named no kind" in vague.note


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda s: remember_turn(s, EMBEDDER, "", NOW), ValueError, "text"),
        (
            lambda s: remember_turn(s, EMBEDDER, "hi there", NOW, importance=11),
            ValueError,
            "importance",
        ),
        (
            lambda s: remember_turn(s, EMBEDDER, "hi there", NOW, metadata=[1]),
            TypeError,
            "metadata",
        ),
    ],
)
def test_bad_input_is_refused_before_anything_is_written(call, error, match):
    store = MemoryStore()
    with pytest.raises(error, match=match):
        call(store)
    assert len(store) == 0
