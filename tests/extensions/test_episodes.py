"""Episode memories through the chat (extensions/episodes.py, MEMORY_LAB_ITEMS=episode)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from chat_with_memory import chat_with_memory
from config import load_settings
from extensions.episodes import EPISODE_GAP_MINUTES, EPISODE_KEY, EPISODE_TURNS
from memory_store import MemoryStore
from storage.sqlite_store import PersistentMemoryStore

EPISODES = replace(load_settings({}), items="episode")
START = 1_700_000_000.0


def say(store, messages, start=START, step=60.0):
    results = []
    for i, message in enumerate(messages):
        results.append(chat_with_memory(message, store, now=start + i * step, settings=EPISODES))
    return results


def live(store):
    return [m for m in store if m.superseded_by is None]


def test_consecutive_turns_are_recalled_as_one_episode_and_every_version_is_kept():
    store = MemoryStore()
    facts = ["I live in Lisbon with my partner", "My sister plays the cello",
             "I drive a blue Toyota", "We adopted a cat last spring"]  # fmt: skip
    say(store, facts)
    episodes = live(store)
    assert [m.text for m in episodes] == ["\n".join(facts[:EPISODE_TURNS]), facts[3]]
    assert [len(m.metadata[EPISODE_KEY]) for m in episodes] == [3, 1]
    assert episodes[0].created_at == START  # the episode's start, not its last turn's
    # each turn and each shorter version is history, never lost
    assert {m.text for m in store} >= {*facts, "\n".join(facts[:2])}
    recalled = say(store, ["Where do I live?"], start=START + 600)[0].recalled
    assert recalled[0].text.startswith("I live in Lisbon")
    assert all(m.superseded_by is None for m in recalled)


def test_a_turn_after_a_pause_starts_a_new_episode():
    store = MemoryStore()
    say(store, ["I live in Lisbon with my partner"])
    say(store, ["My sister plays the cello"], start=START + EPISODE_GAP_MINUTES * 60 + 1)
    assert [m.text for m in live(store)] == [
        "I live in Lisbon with my partner",
        "My sister plays the cello",
    ]


def test_a_fact_that_changes_supersedes_its_episode_and_the_other_turns_are_kept():
    store = MemoryStore()
    say(store, ["I live in Lisbon with my partner", "My sister plays the cello",
                "I drive a blue Toyota", "I moved to Bristol last month"])  # fmt: skip
    result = say(store, ["Where do I live now?"], start=START + 600)[0]
    texts = [m.text for m in live(store)]
    assert not any("Lisbon" in t for t in texts), texts
    assert any("cello" in t and "Toyota" in t for t in texts), texts  # split off, kept
    assert "Bristol" in result.reply


def test_episodes_are_kept_in_a_store_file(tmp_path):
    path = tmp_path / "chat.sqlite3"
    store = PersistentMemoryStore(path, user_id="alice", embedding_model=EPISODES.embed_model)
    say(store, ["I live in Lisbon with my partner", "My sister plays the cello"])
    store.close()
    again = PersistentMemoryStore(path, user_id="alice", embedding_model=EPISODES.embed_model)
    try:
        assert [m.text for m in live(again)] == [
            "I live in Lisbon with my partner\nMy sister plays the cello"
        ]
    finally:
        again.close()


def test_items_is_turn_or_episode():
    assert load_settings({}).items == "turn"
    assert load_settings({"MEMORY_LAB_ITEMS": "episode"}).items == "episode"
    with pytest.raises(ValueError, match="MEMORY_LAB_ITEMS must be one of turn, episode.*'pair'"):
        load_settings({"MEMORY_LAB_ITEMS": "pair"})
