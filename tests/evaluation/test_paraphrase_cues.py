"""Paraphrase recall through the chat when meaning alone ranks the fact too low.

A question that names a personal fact by its kind ("Which city is my home?") shares no
word with the memory that states it ("I have lived in Ghent with two flatmates since
2019"), so the default embedding's words half is zero and MiniLM alone decides; among
memories about houses, flats and rent, it puts the fact 4th or 5th, out of the chat's
three. The query-side cues (embeddings/expansion.py: a question word no memory has is
replaced by the words such a fact is stated with, "home" by "live", "moved") bring it
back. Facts, questions and distractors written for this test, not tuned on; relevance
alone decides, three memories recalled (the chat's default k), as in
test_paraphrase_own.py.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from base.text import tokenize
from chat_with_memory import chat_with_memory
from config import load_settings
from embedding_helpers import Embedder
from embeddings import hybrid
from memory_store import MemoryStore

BY_MEANING = replace(load_settings({}), weights=(1.0, 0.0, 0.0))
DISTRACTORS = [
    "We hope to buy a flat with a balcony next year", "My parents' house has a huge garden",
    "The house next door is for sale", "The roof of our cottage leaks when it rains",
    "My sister lives in Oslo", "The landlord raised the rent again",
    "I repaired the garden fence on Sunday", "I like jazz more than rock",
    "My colleague Omar brews his own beer", "The bakery on the corner closes at noon",
    "I booked a dentist appointment for Tuesday", "We watched the fireworks from the bridge",
    "I need to renew my library card", "The train was late twice this week",
    "I planted tomatoes on the balcony", "My nephew collects football stickers",
    "I am knitting a blanket for winter", "The heating bill was high in January",
    "My laptop fan makes a strange noise", "Our street is being resurfaced",
]  # fmt: skip
HOME = ["Which city is my home?", "Where is my home town?", "Which city do I call home?"]
CASES = [
    ("I have lived in Ghent with two flatmates since 2019", HOME),
    ("I live near the harbour in Gdansk", HOME),
    ("We moved to Leuven after the wedding", HOME),
    ("I work night shifts as a paramedic", ["What is my profession?", "Which career am I in?"]),
    ("Our son Teo turns four in May", ["How many kids do I have?"]),
    ("I drive a battered green Skoda", ["Which vehicle is mine?"]),
    ("My wife Ana teaches chemistry", ["Who is my partner?"]),
    ("We adopted a grey cat called Pixel", ["Which pet do we have?"]),
]  # fmt: skip


@pytest.fixture(scope="module")
def embedder():
    return Embedder()


def recalled(embedder, fact: str, ask: str) -> list[str]:
    store = MemoryStore()
    for i, text in enumerate([*DISTRACTORS[:10], fact, *DISTRACTORS[10:]]):
        embedder.remember(store, text, kind="semantic", importance=5, now=1e6 + i)
    result = chat_with_memory(ask, store, now=2e6, settings=BY_MEANING, embedder=embedder,
                              write_back=False)  # fmt: skip
    return [m.text for m in result.recalled]


@pytest.mark.parametrize(("fact", "asks"), CASES, ids=[c[0][:24] for c in CASES])
def test_the_chat_recalls_a_fact_asked_by_its_kind(embedder, fact, asks):
    for ask in asks:
        assert not set(tokenize(ask)) & set(tokenize(fact)), "a paraphrase shares no word"
        assert fact in (found := recalled(embedder, fact, ask)), (ask, found)


def test_meaning_alone_misses_the_home_the_cues_find(embedder, monkeypatch):
    """Without the cues MiniLM puts houses and flats first: the case the cues are for."""
    fact, ask = CASES[0][0], HOME[0]
    assert fact in recalled(embedder, fact, ask)
    monkeypatch.setattr(hybrid, "EXPANSION", 0.0)
    assert fact not in recalled(embedder, fact, ask)
