"""distillation.py: an episode becomes standalone facts; malformed model JSON is rejected."""

from __future__ import annotations

import json

import pytest

from conftest import NOW
from embedding_helpers import Embedder
from extensions.distillation import (
    DISTILL_PROMPT,
    DistillationError,
    Fact,
    distill_episode,
    offline_distill,
    parse_facts,
    remember_distilled,
)
from memory_store import MemoryStore

REAL_MODEL = "openai/gpt-4o-mini"  # answered by litellm's mock_response, never called
DAY_TEXT = "1970-01-12"  # format_date(NOW)[:10]

EPISODE = [
    {"role": "user", "content": "hi", "time": NOW},
    {"role": "user", "content": "Search is slow. We ran a latency benchmark.", "time": NOW + 60},
    {"role": "assistant", "content": "HNSW was 4x faster than IVFFlat.", "time": NOW + 120},
    {
        "role": "user",
        "content": "We decided to use HNSW over IVFFlat. Also I prefer cosine distance.",
        "time": NOW + 180,
    },
]


@pytest.mark.parametrize(
    "reply",
    [
        '[{"fact": "Eric prefers Groq", "tags": ["api"]}]',
        '```json\n[{"fact": "Eric prefers Groq", "tags": ["api"]}]\n```',
        '  [{"fact": "  Eric prefers Groq ", "tags": ["api", " "]}]  ',
    ],
)
def test_well_formed_replies_become_facts(reply):
    assert parse_facts(reply) == [Fact("Eric prefers Groq", ("api",))]


def test_tags_are_optional_and_an_empty_list_means_nothing_to_keep():
    assert parse_facts('[{"fact": "x"}]') == [Fact("x", ())]
    assert parse_facts("[]") == []


@pytest.mark.parametrize(
    ("reply", "pattern"),
    [
        ("", "reply is empty"),
        (None, "reply is empty"),
        ("Sure! Eric prefers Groq.", "not valid JSON"),
        ('[{"fact": "Eric prefers Groq"', "not valid JSON"),
        ('{"fact": "Eric prefers Groq"}', "got a JSON dict"),
        ('"Eric prefers Groq"', "got a JSON str"),
        ('["Eric prefers Groq"]', "item 0 must be an object"),
        ('[{"text": "Eric prefers Groq"}]', "item 0 needs a non-empty 'fact'"),
        ('[{"fact": ""}]', "item 0 needs a non-empty 'fact'"),
        ('[{"fact": 42}]', "item 0 needs a non-empty 'fact'"),
        ('[{"fact": "x", "tags": "api"}]', "'tags' must be a list of strings"),
        ('[{"fact": "x", "tags": [1]}]', "'tags' must be a list of strings"),
        (json.dumps([{"fact": str(i)} for i in range(4)]), "at most 3 facts, got 4"),
    ],
)
def test_malformed_replies_are_rejected_with_a_clear_message(reply, pattern):
    with pytest.raises(DistillationError, match=pattern):
        parse_facts(reply)


def test_a_distillation_error_is_a_value_error_and_quotes_the_reply():
    with pytest.raises(ValueError, match="Sure! Eric"):
        parse_facts("Sure! Eric prefers Groq.")


def test_offline_distill_keeps_the_users_dated_sentences_with_a_cue():
    facts = offline_distill(EPISODE)
    assert [f.fact for f in facts] == [
        f"On {DAY_TEXT} the user said: We decided to use HNSW over IVFFlat.",
        f"On {DAY_TEXT} the user said: Also I prefer cosine distance.",
    ]
    assert "hnsw" in facts[0].tags
    assert offline_distill(EPISODE) == facts  # deterministic


def test_without_a_cue_the_longest_user_statement_is_the_gist():
    facts = offline_distill(EPISODE[:3])
    assert facts == [
        Fact(
            f"On {DAY_TEXT} the user said: We ran a latency benchmark.",
            ("ran", "latency", "benchmark"),
        )
    ]


@pytest.mark.parametrize(
    ("episode", "expected"),
    [([], 0), ([{"role": "user", "content": "ok thanks", "time": NOW}], 0)],
)
def test_an_episode_with_nothing_worth_keeping_gives_no_facts(episode, expected):
    assert len(offline_distill(episode)) == expected


def test_offline_distill_gives_at_most_max_facts():
    many = [{"role": "user", "content": f"I prefer option {i}.", "time": NOW + i} for i in range(5)]
    assert len(offline_distill(many)) == 3
    assert len(offline_distill(many, max_facts=1)) == 1
    with pytest.raises(ValueError, match="max_facts must be an integer >= 1"):
        offline_distill(many, max_facts=0)


def test_distill_episode_offline_is_the_offline_distiller():
    assert distill_episode(EPISODE) == offline_distill(EPISODE)


@pytest.mark.slow
def test_a_real_models_json_is_validated():
    good = '[{"fact": "The team chose HNSW over IVFFlat for latency", "tags": ["search"]}]'
    facts = distill_episode(EPISODE, model=REAL_MODEL, mock_response=good)
    assert facts == [Fact("The team chose HNSW over IVFFlat for latency", ("search",))]
    with pytest.raises(DistillationError, match="not valid JSON"):
        distill_episode(EPISODE, model=REAL_MODEL, mock_response="Here you go: HNSW!")


@pytest.mark.slow
def test_a_malformed_reply_stores_nothing():
    store = MemoryStore()
    embedder = Embedder("memorylab/hashed-bow-384")
    with pytest.raises(DistillationError):
        remember_distilled(store, embedder, EPISODE, NOW, model=REAL_MODEL, mock_response="{")
    assert len(store) == 0


def test_remember_distilled_stores_semantic_facts_with_tags_and_the_episode_span():
    store = MemoryStore()
    memories = remember_distilled(store, Embedder("memorylab/hashed-bow-384"), EPISODE, NOW)
    assert [m.text for m in memories] == [f.fact for f in offline_distill(EPISODE)]
    assert all(m.kind == "semantic" for m in memories)
    assert memories[0].metadata["episode"] == [NOW, NOW + 180]
    assert memories[0].importance > 3  # "decided" is a cue of the offline rater


def test_the_prompt_asks_for_the_json_shape_that_parse_facts_accepts():
    prompt = DISTILL_PROMPT.format(max_facts=3, turns="user: hi", data_not_instructions="")
    assert '[{"fact": "...", "tags": ["...", "..."]}]' in prompt
    assert parse_facts('[{"fact": "...", "tags": ["...", "..."]}]')


def test_malformed_turns_are_refused():
    with pytest.raises(ValueError, match="needs a 'time'"):
        distill_episode([{"role": "user", "content": "I prefer tea"}])


def test_a_question_is_never_distilled_into_a_fact():
    episode = [
        {"role": "user", "content": "Which index should we use?", "time": NOW},
        {"role": "user", "content": "We will use HNSW.", "time": NOW + 60},
    ]
    assert [f.fact for f in offline_distill(episode)] == [
        f"On {DAY_TEXT} the user said: We will use HNSW."
    ]
    assert offline_distill(episode[:1]) == []  # only a question: nothing to keep


def test_a_reply_nested_too_deeply_to_parse_is_a_distillation_error():
    with pytest.raises(DistillationError, match="nested too deeply"):
        parse_facts("[" * 100_000 + "]" * 100_000)
