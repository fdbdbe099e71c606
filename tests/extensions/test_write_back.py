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
@pytest.mark.needs_milestones(6)  # the model's rating is read by optional Milestone 6
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


def _said(store, *texts, start=NOW):
    turns = []
    for hours, text in enumerate(texts):
        turns.append(remember_turn(store, EMBEDDER, text, start + hours * HOUR))
    return turns


def test_an_update_of_part_of_a_combined_note_keeps_the_rest_as_a_note_of_its_own():
    store = MemoryStore()
    *_, turn = _said(store, "My name is Lucia and I live in Seville.", "I like jazz.",
                     "We moved to Valencia last week.")  # fmt: skip
    assert turn.replaced.text == "My name is Lucia and I live in Seville."
    kept = [m for m in store.live() if m.metadata.get("split_from") == turn.replaced.id]
    assert [m.text for m in kept] == ["My name is Lucia and I live in Valencia."]
    assert kept[0].created_at == turn.replaced.created_at  # said then: its age stays honest


def test_news_of_another_person_touches_nothing_of_the_users():
    store = MemoryStore()
    *_, lars, van = _said(store, "I live in Galway.", "I own a small red van.",
                          "My friend Lars moved to Oslo last week.",
                          "My neighbour sold his van yesterday.")  # fmt: skip
    assert lars.replaced is None and van.replaced is None
    assert all(m.superseded_by is None for m in store)


def test_news_of_another_person_replaces_the_note_that_names_them():
    store = MemoryStore()
    *_, moved = _said(store, "My sister Ingrid lives in Stockholm.", "I live in Uppsala.",
                      "Ingrid moved to Malmo last month.")  # fmt: skip
    assert moved.replaced.text == "My sister Ingrid lives in Stockholm."


def test_an_earlier_move_stored_as_an_event_is_replaced_by_the_next_move():
    store = MemoryStore()
    store_event = EMBEDDER.remember(store, "In March I moved to Braga.", kind="episodic", now=NOW)
    turn = remember_turn(store, EMBEDDER, "Then I relocated to Coimbra for my studies.", NOW + HOUR)
    assert turn.replaced.id == store_event.id and turn.memory.kind == "semantic"


def test_a_corrected_value_keeps_the_rest_of_the_note_with_the_new_value():
    store = MemoryStore()
    *_, fix = _said(store, "My office is in room 212 of the Atrium block.", "Lunch was nice.",
                    "Sorry, it's room 221, not 212.")  # fmt: skip
    assert fix.replaced.text.startswith("My office is in room 212")
    texts = [m.text for m in store.live()]
    assert "My office is in room 221 of the Atrium block." in texts
    assert not any("212 of" in t for t in texts)


def test_every_replacement_says_why_it_was_chosen():
    store = MemoryStore()
    *_, turn = _said(store, "I'm vegan.", "I've started eating eggs again.")
    assert turn.replaced.text == "I'm vegan."
    assert "topic diet" in turn.memory.metadata["replaces_why"]


@pytest.mark.slow  # imports litellm
def test_a_real_model_decides_kind_importance_and_the_replaced_note_in_one_call():
    store = MemoryStore()
    _said(store, "My name is Priya and I live in Leeds.", "I like jazz.")
    reply = ('Sure: {"kind": "semantic", "importance": 7, "replaces": "m1", '
             '"keeps": "My name is Priya"}')  # fmt: skip
    turn = remember_turn(store, EMBEDDER, "I live in York now.", NOW + 5 * HOUR,
                         model="gpt-4o-mini", mock_response=reply)  # fmt: skip
    assert (turn.memory.kind, turn.memory.importance) == ("semantic", 7)
    assert turn.replaced.id == "m1" and turn.classification.source == "model"
    assert "My name is Priya" in [m.text for m in store.live()]
    # an id the model was not shown replaces nothing; no kind falls back to the rules
    other = MemoryStore()
    _said(other, "I like jazz.")
    wild = remember_turn(
        other,
        EMBEDDER,
        "I like blues now.",
        NOW + HOUR,
        model="gpt-4o-mini",
        mock_response='{"kind": "semantic", "importance": 3, "replaces": "m9"}',
    )
    assert wild.replaced is None and "not a note it was shown" in wild.classification.note
    vague = remember_turn(other, EMBEDDER, "I moved to Leeds.", NOW + 2 * HOUR,
                          model="gpt-4o-mini", mock_response="no idea")  # fmt: skip
    assert (
        vague.classification.source == "heuristic" and "named no kind" in vague.classification.note
    )
