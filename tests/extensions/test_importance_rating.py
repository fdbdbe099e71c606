"""importance_rating.py: any model reply becomes an importance in [1, 10]; offline, a heuristic."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import NOW
from embedding_helpers import Embedder
from extensions.importance_rating import (
    BASE_IMPORTANCE,
    CUES,
    heuristic_importance,
    parse_rating,
    rate_importance,
    rating_prompt,
    remember_rated,
)
from memory_store import MemoryStore

REAL_MODEL = "openai/gpt-4o-mini"  # never called: litellm's mock_response answers instead


@pytest.mark.parametrize(
    ("reply", "value", "source"),
    [
        ("7", 7, "model"),
        ("  3\n", 3, "model"),
        ("Rating: 8", 8, "model"),
        ("I'd say 7/10", 7, "model"),
        ("6.5", 7, "model"),  # whole numbers: halves round up
        ("eight", 8, "model"),
        ("Rating: 12", 10, "model"),
        ("0", 1, "model"),
        ("-4", 1, "model"),
        ("99999999999999999999", 10, "model"),
        ("very important!", 5, "default"),
        ("", 5, "default"),
        (None, 5, "default"),
        ("NaN", 5, "default"),
        ("On a scale of 1 to 10, I'd rate this a 7.", 7, "model"),  # not the scale's 1
        ("Rating (1-10): 9", 9, "model"),
        ("On a scale of one to ten: seven", 7, "model"),
        ("I'd give it 3 out of 10", 3, "model"),
        ("10/10", 10, "model"),
        (".5", 1, "model"),  # a half, not a five
        ("1e5", 10, "model"),  # a hundred thousand, not a one
    ],
)
def test_any_reply_becomes_an_importance_in_range(reply, value, source):
    rating = parse_rating(reply)
    assert rating.value == pytest.approx(value)
    assert rating.source == source
    assert 1 <= rating.value <= 10


@pytest.mark.parametrize(("reply", "word"), [("Rating: 12", "clamped"), ("-4", "clamped")])
def test_a_clamped_reply_says_so(reply, word):
    assert word in parse_rating(reply).note


def test_a_reply_without_a_number_uses_the_default_given():
    assert parse_rating("no idea", default=2).value == 2
    with pytest.raises(ValueError, match="importance must be in"):
        parse_rating("7", default=11)
    with pytest.raises(ValueError, match="importance must be in"):
        rate_importance("We signed the contract", default=0)


@pytest.mark.parametrize(
    ("text", "cues"),
    [
        ("brushed teeth", ["brushed"]),
        ("We decided: deploys on Fridays are forbidden", ["decided", "forbidden"]),
        ("I am allergic to peanuts", ["allergic"]),
        ("Tuesday", []),
    ],
)
def test_the_heuristic_is_the_base_plus_its_cue_words_clamped(text, cues):
    expected = min(10, max(1, BASE_IMPORTANCE + sum(CUES[c] for c in cues)))
    rating = heuristic_importance(text)
    assert (rating.value, rating.source) == (expected, "heuristic")
    for cue in cues:
        assert cue in rating.note


def test_the_heuristic_ranks_a_core_memory_above_a_mundane_one():
    assert (
        heuristic_importance("We signed the contract").value
        > heuristic_importance("brushed teeth").value
    )


def test_a_repeated_cue_counts_once_and_extremes_are_clamped():
    assert heuristic_importance("decided decided decided").value == BASE_IMPORTANCE + 3
    loud = heuristic_importance("allergic diagnosed married decided deadline always never must")
    assert loud.value == 10 and "clamped" in loud.note
    assert heuristic_importance("ok thanks, hi, lol").value == 1


def test_offline_rating_uses_the_heuristic_not_the_offline_chat_model():
    text = "We signed the contract"
    assert rate_importance(text) == heuristic_importance(text)
    assert rate_importance(text, model="memorylab/offline-chat") == heuristic_importance(text)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("reply", "value", "source"),
    [("Rating: 12", 10, "model"), ("4", 4, "model"), ("important!", 5, "default")],
)
@pytest.mark.needs_milestones(6)  # its reply is read by parse_importance
def test_a_real_model_is_asked_through_litellm_and_its_reply_parsed(reply, value, source):
    rating = rate_importance("We signed the contract", model=REAL_MODEL, mock_response=reply)
    assert (rating.value, rating.source) == (value, source)


@pytest.mark.slow
def test_a_failing_model_falls_back_to_the_heuristic_and_says_why(monkeypatch):
    from llm import gateway

    litellm = gateway.load_litellm()

    def broken(**kwargs):
        raise ConnectionError("no route to host")

    monkeypatch.setattr(litellm, "completion", broken)
    rating = rate_importance("We signed the contract", model=REAL_MODEL)
    assert rating.source == "heuristic"
    assert "model failed" in rating.note and "no route to host" in rating.note


def test_the_prompt_asks_for_one_number_on_the_1_to_10_scale():
    prompt = rating_prompt("We signed the contract")
    assert "1 to 10" in prompt and "We signed the contract" in prompt


@pytest.mark.parametrize(
    ("bad", "error"), [("", ValueError), ("   ", ValueError), (None, TypeError), (7, TypeError)]
)
def test_rating_refuses_empty_or_non_text(bad, error):
    with pytest.raises(error, match="text to rate must be a non-empty string"):
        rate_importance(bad)


@pytest.mark.needs_milestones(6)  # its reply is read by parse_importance
@pytest.mark.slow
def test_remember_rated_never_fails_on_a_bad_reply_and_records_how():
    store = MemoryStore()
    embedder = Embedder("memorylab/hashed-bow-384")
    memory = remember_rated(
        store, embedder, "We signed the contract", NOW, model=REAL_MODEL, mock_response="Rating: 12"
    )
    assert memory.importance == 10
    assert memory.metadata["importance_source"] == "model"
    assert "clamped" in memory.metadata["importance_note"]
    offline = remember_rated(store, embedder, "brushed teeth", NOW, kind="episodic")
    assert offline.importance == heuristic_importance("brushed teeth").value
    assert len(store) == 2


@given(st.text(max_size=60))
@settings(max_examples=200, deadline=None)
def test_no_reply_whatsoever_escapes_the_range(reply):
    rating = parse_rating(reply)
    assert 1 <= rating.value <= 10
    assert rating.source in ("model", "default")


@given(st.text(min_size=1, max_size=80).filter(str.strip))
@settings(max_examples=200, deadline=None)
def test_the_heuristic_always_rates_in_range(text):
    assert 1 <= heuristic_importance(text).value <= 10


def test_a_bad_kind_is_refused_before_the_model_is_asked(monkeypatch):
    from extensions import importance_rating

    def no_call(*args, **kwargs):
        raise AssertionError("the model was asked before the arguments were checked")

    monkeypatch.setattr(importance_rating, "ask", no_call)
    store = MemoryStore()
    with pytest.raises(ValueError, match="kind must be one of"):
        remember_rated(
            store,
            Embedder("memorylab/hashed-bow-384"),
            "We signed the contract",
            NOW,
            kind="dream",
            model=REAL_MODEL,
        )
    assert len(store) == 0


def test_a_lasting_fact_about_a_person_is_rated_above_small_talk():
    assert heuristic_importance("I'm vegetarian").value >= 7
    assert heuristic_importance("My partner and I got engaged").value >= 6
    assert heuristic_importance("The weather has been grim all week").value <= 3


@pytest.mark.parametrize("answer", [12, 0, 7.0, "7", True])
def test_a_parser_answer_outside_the_scale_or_not_an_int_is_refused(monkeypatch, answer):
    from extensions import importance_rating

    monkeypatch.setattr(importance_rating, "parse_importance", lambda reply: answer)
    with pytest.raises(
        TypeError, match=r"parse_importance must return a whole number in \[1, 10\]"
    ):
        parse_rating("Rating: 7")


def test_a_parser_answer_of_none_means_the_default():
    assert parse_rating("no number here", default=4) == (
        4,
        "default",
        "no rating in 'no number here': used 4",
    )
