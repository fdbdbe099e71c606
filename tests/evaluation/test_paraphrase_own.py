"""Paraphrase recall through the chat, on the test suite's own facts.

Six facts, each stored among the same 20 unrelated memories, each asked two ways that
share no content word with it ("What do I do for a living?" for "I work as a
pharmacist in a small town"). Relevance alone decides, three memories recalled (the
chat's default k): the fact must be among them every time. Written for this test, not
tuned on: the default embedding's meaning half has to carry it, since the words half
finds nothing to match.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from base.text import tokenize
from chat_with_memory import chat_with_memory
from config import load_settings
from embedding_helpers import Embedder
from memory_store import MemoryStore

BY_MEANING = replace(load_settings({}), weights=(1.0, 0.0, 0.0))
DISTRACTORS = [
    "I collect vintage postcards", "My neighbour owns a noisy parrot",
    "We painted the hallway yellow", "I usually take the bus on Mondays",
    "My uncle repairs old clocks", "The printer at work jams a lot",
    "I ran a half marathon in October", "My cousin studies marine biology",
    "I bake sourdough on weekends", "Our team meets every Thursday",
    "I lost my umbrella at the station", "My grandmother knits scarves",
    "I watched a documentary about volcanoes", "The garden needs more sunlight",
    "I keep my passport in the drawer", "My friend Nadia plays chess online",
    "I fixed the squeaky door yesterday", "We ordered pizza on Friday",
    "I am reading a book about Rome", "My phone battery drains quickly",
]  # fmt: skip
CASES = [
    ("I work as a pharmacist in a small town",
     ["What do I do for a living?", "Which profession am I in?"]),
    ("My daughter is seven years old", ["What age is my kid?", "How big is my child now?"]),
    ("I cannot eat peanuts because of an allergy",
     ["Which nuts should I avoid?", "Is there a food that makes me ill?"]),
    ("I moved to Edinburgh with my wife",
     ["Which city is my home?", "Where is my place of residence?"]),
    ("I drive an old red Volvo", ["What car do I own?", "Which vehicle is mine?"]),
    ("My dog Biscuit is a beagle", ["What breed is my pet?", "Which animal do I have?"]),
]  # fmt: skip


@pytest.fixture(scope="module")
def embedder():
    return Embedder()


@pytest.mark.parametrize(("fact", "asks"), CASES, ids=[c[0][:24] for c in CASES])
def test_the_chat_recalls_a_fact_asked_in_other_words(embedder, fact, asks):
    for ask in asks:
        assert not set(tokenize(ask)) & set(tokenize(fact)), "a paraphrase shares no word"
        store = MemoryStore()
        for i, text in enumerate([*DISTRACTORS[:10], fact, *DISTRACTORS[10:]]):
            embedder.remember(store, text, kind="semantic", importance=5, now=1e6 + i)
        result = chat_with_memory(ask, store, now=2e6, settings=BY_MEANING, embedder=embedder,
                                  write_back=False)  # fmt: skip
        assert fact in [m.text for m in result.recalled], (ask, [m.text for m in result.recalled])
