"""extensions/what_to_embed.py: noise is not stored; turns group into episodes at pauses."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import NOW
from embedding_helpers import Embedder
from extensions.what_to_embed import (
    episode_text,
    filter_turns,
    group_episodes,
    remember_episodes,
    skip_reason,
    worth_embedding,
)
from memory_store import MemoryStore

MINUTE = 60.0


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("hi", "greeting"),
        ("Hello there!", "greeting"),
        ("good morning", "greeting"),
        ("ok thanks!", "acknowledgement"),
        ("Thank you so much.", "acknowledgement"),
        ("got it", "acknowledgement"),
        ("👍", "acknowledgement"),
        ("", "empty"),
        ("  \n ", "empty"),
        ('{"status": 200, "rows": [1, 2]}', "tool output (JSON)"),
        ('[{"id": 1}]', "tool output (JSON)"),
    ],
)
def test_noise_is_not_worth_embedding(text, reason):
    assert skip_reason(text) == reason
    assert not worth_embedding(text)


@pytest.mark.parametrize(
    "text",
    [
        "I prefer Groq for the default API",
        "Good morning! I decided to move the launch to Friday",
        "ok, use HNSW instead of IVFFlat",
        "[draft] notes on the pool leak",  # starts like JSON but is not
        "Привет, я люблю чай",  # no Latin letters, still content
        "42",
    ],
)
def test_content_is_worth_embedding(text):
    assert skip_reason(text) is None
    assert worth_embedding(text)


def test_a_tool_turn_is_skipped_even_when_it_is_not_json():
    assert skip_reason("rows: 3", role="tool") == "tool output"


def test_filter_turns_keeps_content_and_says_why_each_skipped_turn_went():
    turns = [
        {"role": "user", "content": "hi"},
        {"role": "user", "content": "I prefer Groq"},
        {"role": "tool", "content": '{"ok": true}'},
        {"role": "assistant", "content": "Noted, Groq it is."},
    ]
    kept, skipped = filter_turns(turns)
    assert [t["content"] for t in kept] == ["I prefer Groq", "Noted, Groq it is."]
    assert [(t["content"], why) for t, why in skipped] == [
        ("hi", "greeting"),
        ('{"ok": true}', "tool output (JSON)"),
    ]


def turns_at(*minutes):
    return [{"role": "user", "content": f"turn at {m}", "time": NOW + m * MINUTE} for m in minutes]


@pytest.mark.parametrize(
    ("minutes", "gap", "sizes"),
    [
        ((0, 5, 10, 60), 30, [3, 1]),
        ((0, 5, 10, 60), 60, [4]),
        ((0, 31, 62), 30, [1, 1, 1]),
        ((0, 30), 30, [2]),  # exactly the gap: still the same episode
        ((), 30, []),
    ],
)
def test_a_pause_longer_than_the_gap_starts_a_new_episode(minutes, gap, sizes):
    episodes = group_episodes(turns_at(*minutes), max_gap_minutes=gap)
    assert [len(e) for e in episodes] == sizes


def test_a_long_run_of_turns_is_split_at_max_turns():
    assert [len(e) for e in group_episodes(turns_at(*range(7)), max_turns=3)] == [3, 3, 1]


def test_episode_text_has_one_line_per_turn():
    episode = [
        {"role": "user", "content": " which index? ", "time": NOW},
        {"role": "assistant", "content": "HNSW", "time": NOW},
    ]
    assert episode_text(episode) == "user: which index?\nassistant: HNSW"


def test_remember_episodes_stores_one_memory_per_episode_without_the_noise():
    turns = [
        {"role": "user", "content": "hi", "time": NOW},
        {"role": "user", "content": "the pool leaks connections", "time": NOW + MINUTE},
        {"role": "assistant", "content": "close the sessions", "time": NOW + 2 * MINUTE},
        {"role": "user", "content": "thanks!", "time": NOW + 3 * MINUTE},
        {"role": "user", "content": "I prefer Groq", "time": NOW + 120 * MINUTE},
    ]
    store = MemoryStore()
    memories = remember_episodes(store, Embedder("memorylab/hashed-bow-384"), turns)
    assert [m.text for m in memories] == [
        "user: the pool leaks connections\nassistant: close the sessions",
        "user: I prefer Groq",
    ]
    assert memories[0].created_at == NOW + MINUTE
    assert memories[0].metadata == {"turns": 2, "ended": NOW + 2 * MINUTE}
    assert len(store) == 2


@pytest.mark.parametrize(
    ("turns", "error", "pattern"),
    [
        ("hi", TypeError, "list of dicts"),
        ([{"role": "user"}], ValueError, r"turns\[0\] must be a dict with a 'content'"),
        ([{"role": "robot", "content": "x", "time": NOW}], ValueError, "unknown role 'robot'"),
        ([{"content": "x"}], ValueError, "needs a 'time'"),
        ([{"content": "x", "time": "noon"}], TypeError, "time'\\] must be epoch seconds"),
    ],
)
def test_malformed_turns_are_refused_with_the_index(turns, error, pattern):
    with pytest.raises(error, match=pattern):
        group_episodes(turns)


def test_turns_out_of_time_order_are_refused():
    with pytest.raises(ValueError, match="time order"):
        group_episodes(turns_at(10, 0))


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [({"max_gap_minutes": 0}, "max_gap_minutes must be > 0"), ({"max_turns": 0}, "max_turns")],
)
def test_bad_grouping_settings_are_refused(kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        group_episodes(turns_at(0), **kwargs)


def test_skip_reason_refuses_non_text():
    with pytest.raises(TypeError, match="text must be a string"):
        skip_reason(None)


@given(st.text(max_size=60))
@settings(max_examples=200, deadline=None)
def test_any_text_gets_a_known_reason_or_none(text):
    assert skip_reason(text) in (
        None,
        "empty",
        "tool output (JSON)",
        "greeting",
        "acknowledgement",
    )


def test_deeply_nested_brackets_are_machine_output_not_a_crash():
    for text in ("[" * 100_000 + "]" * 100_000, "[" * 100_000, '{"a":' * 50_000):
        assert skip_reason(text) == "tool output (JSON)"  # no person types that


def test_max_turns_may_be_any_integer_type():
    import numpy as np

    assert [len(e) for e in group_episodes(turns_at(*range(7)), max_turns=np.int64(3))] == [3, 3, 1]


@pytest.mark.parametrize("role", ["robot", None, ["user"]])
def test_skip_reason_refuses_an_unknown_role(role):
    with pytest.raises(ValueError, match="unknown role"):
        skip_reason("I prefer Groq for the default API", role=role)


# --- the rules the chat's write-back follows ------------------------------------------------


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("Which city is my home?", "question"),
        ("can I eat prawns", "question"),
        ("Remind me which API I use", "question"),
        ("ok thanks!", "acknowledgement"),
        ("hi there", "greeting"),
        ("My name is Dana and I live in Lisbon", None),
        ("I wonder why it broke.", None),
    ],
)
def test_the_chat_does_not_write_back_questions_or_small_talk(text, reason):
    from extensions.what_to_embed import write_back_reason

    skip_reason(text)  # the learner's noise_reason first: a stub waits for the learner
    assert write_back_reason(text) == reason


def test_episodes_keep_questions_the_chat_does_not_store():
    from extensions.what_to_embed import write_back_reason

    assert skip_reason("Which city is my home?") is None
    assert write_back_reason("Which city is my home?") == "question"


def test_small_talk_is_judged_by_the_learner_noise_reason(monkeypatch):
    from extensions import what_to_embed

    monkeypatch.setattr(what_to_embed, "noise_reason", lambda text: "greeting")
    assert skip_reason("I prefer Groq for the default API") == "greeting"
    assert skip_reason('{"rows": 3}') == "tool output (JSON)"  # machine output is not asked


@pytest.mark.parametrize("answer", ["noise", True, 0])
def test_a_noise_reason_of_the_wrong_kind_is_refused(monkeypatch, answer):
    from extensions import what_to_embed

    monkeypatch.setattr(what_to_embed, "noise_reason", lambda text: answer)
    with pytest.raises(TypeError, match="noise_reason must return one of"):
        skip_reason("hi")


def test_before_noise_reason_is_written_the_chat_skips_questions_and_machine_output(monkeypatch):
    from base.unwritten import NotWrittenYet
    from extensions import what_to_embed

    def stub(text):
        raise NotWrittenYet("not implemented yet: noise_reason")

    monkeypatch.setattr(what_to_embed, "noise_reason", stub)
    with pytest.raises(NotWrittenYet):
        skip_reason("ok thanks!")
    assert what_to_embed.write_back_reason("ok thanks!") is None  # stored until it is written
    assert what_to_embed.write_back_reason("Which city is my home?") == "question"
    assert what_to_embed.write_back_reason('{"rows": 3}') == "tool output (JSON)"


def test_is_question_refuses_a_non_string():
    from embeddings.worth_embedding import is_question

    with pytest.raises(TypeError, match="text must be a string, got int"):
        is_question(3)
