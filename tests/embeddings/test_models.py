"""The offline models as objects (hashed_words.py, minilm.py, hybrid.py, model.py)."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest

from base.text import tokenize
from conftest import NOW
from embedding_helpers import Embedder
from embeddings.hashed_words import HashedWords
from embeddings.hybrid import MIX, DocumentFrequencies, Hybrid
from embeddings.minilm import MiniLM, embed_texts
from memory_store import MemoryStore

TEXTS = ["Eric prefers Groq for the default API", "I live in Lisbon", "?!"]


def reference_bag(text: str, dims: int) -> np.ndarray:
    """An independent hashed bag of words: blake2b of each token, counts, unit length."""
    counts = np.zeros(dims)
    for token in tokenize(text):
        digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
        counts[int.from_bytes(digest, "big") % dims] += 1
    norm = np.linalg.norm(counts)
    return counts / norm if norm else counts


# --- HashedWords ---------------------------------------------------------------------------


@pytest.mark.parametrize("dims", [8, 64, 384])
def test_hashed_words_is_the_unit_bag_of_hashed_tokens(dims):
    vectors = HashedWords(dims).embed_documents(TEXTS)
    for text, vector in zip(TEXTS, vectors):
        assert len(vector) == dims
        np.testing.assert_allclose(vector, reference_bag(text, dims), rtol=0, atol=1e-15)


def test_the_docstring_example_two_shared_words_of_0_7071():
    vector = HashedWords(384).embed_query("Groq API")
    assert sorted(vector)[-2:] == [pytest.approx(1 / math.sqrt(2))] * 2
    assert sum(1 for x in vector if x) == 2


@pytest.mark.parametrize("dims", [4, 7, 65537, 64.0, True, "384"])
def test_hashed_words_refuses_a_size_outside_8_to_65536(dims):
    with pytest.raises(ValueError, match=f"from 8 to 65536 dimensions, got {dims!r}"):
        HashedWords(dims)


@pytest.mark.parametrize("word", ["lisbon", "prefer", "meeting", "?", "the"])
def test_a_words_position_is_where_its_one_word_vector_is_not_zero(word):
    words = HashedWords(256)
    vector = words.vector(word)
    assert words.position(word) == next((i for i, x in enumerate(vector) if x), 0)


@pytest.mark.parametrize("model", [HashedWords(64), MiniLM()], ids=repr)
def test_a_plain_model_embeds_queries_as_it_embeds_memories(model):
    assert model.query_context(MemoryStore()) is None
    assert model.embed_queries(TEXTS) == model.embed_documents(TEXTS)
    assert model.embed_query(TEXTS[0]) == model.embed_documents(TEXTS[:1])[0]


# --- MiniLM --------------------------------------------------------------------------------


def test_minilm_is_embed_texts_as_tuples_and_reports_the_cut():
    long_text = "gardening " * 400
    cut: list[int] = []
    vectors = MiniLM().embed_documents(["short", long_text], cut)
    assert cut == [1]
    assert vectors == [tuple(v.tolist()) for v in embed_texts(["short", long_text])]
    assert (MiniLM().name, MiniLM().dimensions, MiniLM().uses_minilm) == (
        "memorylab/minilm-l6-v2",
        384,
        True,
    )


# --- Hybrid --------------------------------------------------------------------------------


def test_a_hybrid_memory_is_the_two_halves_scaled_by_the_mix():
    hybrid = Hybrid(MiniLM(), HashedWords(256), MIX)
    [vector] = hybrid.embed_documents(TEXTS[:1])
    semantic, words = np.asarray(vector[:384]), np.asarray(vector[384:])
    np.testing.assert_allclose(semantic, math.sqrt(MIX) * embed_texts(TEXTS[:1])[0], atol=1e-7)
    np.testing.assert_allclose(words, math.sqrt(1 - MIX) * reference_bag(TEXTS[0], 256))
    assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-6)


def test_a_hybrid_query_needs_the_document_frequencies_of_its_store():
    hybrid = Hybrid(MiniLM(), HashedWords(256))
    with pytest.raises(TypeError, match=r"pass hybrid.query_context\(store\), got NoneType"):
        hybrid.embed_queries(["Where do I live?"])
    with pytest.raises(ValueError, match="frequencies of 128 positions do not fit"):
        hybrid.embed_queries(["Where do I live?"], DocumentFrequencies(128))


def test_the_query_context_counts_the_stores_memories():
    hybrid = Hybrid(MiniLM(), HashedWords(256))
    store = MemoryStore()
    embedder = Embedder(hybrid.name)
    for text in TEXTS[:2]:
        embedder.remember(store, text, now=NOW)
    frequencies = hybrid.query_context(store)
    assert frequencies.documents == 2
    lisbon = HashedWords(256).position("lisbon")
    assert frequencies.counts[lisbon] == 1
    _, words = np.split(np.asarray(hybrid.embed_query("lisbon", frequencies)), [384])
    assert words[lisbon] == pytest.approx(math.sqrt(1 - MIX))


def test_another_mix_is_named_apart_from_the_registered_hybrid():
    assert Hybrid(MiniLM(), HashedWords(256), 0.9).name == "memorylab/minilm-words-256-mix-0.9"
    assert Hybrid(MiniLM(), HashedWords(256), 0.9) != Hybrid(MiniLM(), HashedWords(256))


@pytest.mark.parametrize(
    ("lexical", "mix", "message"),
    [
        (1617, MIX, r"at most 2000 dimensions .*got 384 \+ 1617"),
        (256, 1.5, r"mix .* must be in \[0, 1\], got 1.5"),
        (256, -0.1, r"must be in \[0, 1\]"),
    ],
)
def test_a_hybrid_out_of_bounds_is_refused(lexical, mix, message):
    with pytest.raises(ValueError, match=message):
        Hybrid(MiniLM(), HashedWords(lexical), mix)
