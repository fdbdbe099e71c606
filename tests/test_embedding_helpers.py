"""embedding_helpers.py: tokens, the offline embedding, and one embedding model per store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from base.text import tokenize
from conftest import HOUR, NOW
from embedding_helpers import Embedder
from embeddings.hashed_words import HashedWords
from embeddings.registry import offline_model
from llm import gateway
from memory_store import EmbeddingModelMismatch, Memory, MemoryStore
from retriever import retrieve
from scoring import relevance_score

CODE_DIR = Path(__file__).resolve().parent.parent / "code"
QUERY = "which API should I default to?"
GROQ = "Eric prefers Groq for the default API"
UNRELATED = [
    "brushed teeth",
    "The team lunch is on Friday at noon",
    "I like dark mode in my editor",
    "We debugged a connection pool leak on 12 March",
]

# --- tokenize ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        (GROQ, ["eric", "prefer", "groq", "default", "api"]),
        (QUERY, ["api", "default"]),
        ("Eric's preferred API", ["eric", "prefer", "api"]),  # possessive and -ed go
        ("The cities were decided", ["city", "decid"]),  # crude, but both sides agree
        ("what is it?", ["what", "is", "it"]),  # only stop words: they are kept
        ("hi there", ["hi"]),  # "hi" is not a stop word, "there" is
        ("", []),
        ("?!", []),
        ("Eric\u2019s café in Zürich", ["eric", "café", "zürich"]),  # any alphabet, curly '
    ],
)
def test_tokenize_keeps_lower_cased_stemmed_content_words(text, tokens):
    assert tokenize(text) == tokens


@pytest.mark.parametrize("text", [None, 42, ["api"], b"api"])
def test_tokenize_rejects_non_strings(text):
    with pytest.raises(TypeError, match="text must be a string"):
        tokenize(text)


# --- the offline toy: hashed words -------------------------------------------------------

toy = HashedWords(384).embed_query  # the toy, memorylab/hashed-bow-384


def test_hashed_words_is_the_same_on_every_call():
    np.testing.assert_array_equal(toy(GROQ), toy(GROQ))


@pytest.mark.slow
def test_hashed_words_is_the_same_in_other_processes_whatever_the_hash_seed():
    script = (
        "import json; from embeddings.hashed_words import HashedWords; "
        f"print(json.dumps(HashedWords(384).embed_query({GROQ!r})))"
    )
    for seed in ["1", "2"]:
        env = os.environ | {"PYTHONHASHSEED": seed, "PYTHONPATH": str(CODE_DIR)}
        result = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
        )
        np.testing.assert_array_equal(json.loads(result.stdout), toy(GROQ))


@pytest.mark.parametrize("text", [GROQ, QUERY, "brushed teeth", "hi there"])
def test_hashed_words_has_unit_length(text):
    assert np.linalg.norm(toy(text)) == pytest.approx(1.0)


@pytest.mark.parametrize("text", ["", "  ?! "])
def test_hashed_words_of_text_without_words_is_all_zeros(text):
    np.testing.assert_array_equal(toy(text), np.zeros(384))


def test_hashed_words_has_384_values_by_default_and_others_on_request():
    assert len(toy(GROQ)) == 384
    assert len(HashedWords(64).embed_query(GROQ)) == 64


@pytest.mark.parametrize(("model", "dims"), [("memorylab/hashed-bow-64", 64)])
def test_the_registry_reads_the_size_from_the_name(model, dims):
    assert offline_model(model).dimensions == dims
    assert len(Embedder(model).embed_one(GROQ)) == dims


# --- the key behaviour: the right memory is the most relevant ---------------------------


@pytest.mark.parametrize("unrelated", UNRELATED)
def test_query_is_more_similar_to_the_groq_memory_than_to_an_unrelated_one(unrelated):
    query = toy(QUERY)
    groq = relevance_score(query, toy(GROQ))
    assert groq > relevance_score(query, toy(unrelated))


def test_retrieve_puts_the_groq_memory_first_when_recency_and_importance_are_equal():
    embedder, store = Embedder(), MemoryStore()
    for text in [*UNRELATED[:2], GROQ, *UNRELATED[2:]]:
        embedder.remember(store, text, importance=5, now=NOW - HOUR)
    top = retrieve(store, embedder.query(store, QUERY), now=NOW, k=3)
    assert top[0].text == GROQ


# --- Embedder ---------------------------------------------------------------------------


def test_embedder_defaults_to_the_offline_model_without_calling_litellm(monkeypatch):
    def no_litellm(*args, **kwargs):
        raise AssertionError("the offline model must not go through litellm")

    monkeypatch.setattr(gateway, "embed", no_litellm)
    embedder = Embedder()
    assert embedder.model == "memorylab/minilm-words-1616"
    np.testing.assert_allclose(
        embedder.embed_one(GROQ),
        offline_model(embedder.model).embed_documents([GROQ])[0],
        rtol=0,
        atol=0,
    )


def test_embed_of_no_texts_is_an_empty_list():
    assert Embedder().embed([]) == []


@pytest.mark.parametrize(
    ("texts", "message"),
    [("a string", "expects a list of texts"), ([1], r"texts\[0\] must be a string")],
)
def test_embed_rejects_anything_but_a_list_of_strings(texts, message):
    with pytest.raises(TypeError, match=message):
        Embedder().embed(texts)


@pytest.mark.parametrize(
    "model",
    [
        "memorylab/hashed-bow-4",
        "memorylab/hashed-bow-",
        "memorylab/hashed-bow-064",  # one model, one name: no leading zeros
        "memorylab/hashed-bow-\u00b2",
        "memorylab/foo",
        "memorylab/offline-chat",  # a chat model, not an embedding model
    ],
)
def test_an_unknown_offline_model_is_rejected_when_the_embedder_is_made(model):
    with pytest.raises(ValueError, match="unknown offline embedding model"):
        Embedder(model)


def test_embedder_memory_is_stamped_with_its_model():
    embedder = Embedder("memorylab/hashed-bow-64")
    memory = embedder.memory("m1", GROQ, kind="semantic", importance=7, now=NOW)
    assert memory.embedding_model == "memorylab/hashed-bow-64"
    assert (memory.created_at, memory.last_accessed) == pytest.approx((NOW, NOW))
    np.testing.assert_allclose(memory.embedding, HashedWords(64).embed_query(GROQ))


def test_embedder_remember_adds_memories_with_ids_m1_m2():
    embedder, store = Embedder(), MemoryStore()
    first = embedder.remember(store, GROQ, now=NOW)
    second = embedder.remember(store, "brushed teeth", now=NOW)
    assert [first.id, second.id] == ["m1", "m2"]
    assert [m.id for m in store] == ["m1", "m2"]
    assert store.embedding_model == embedder.model


def test_query_refuses_a_store_filled_by_another_model():
    store = MemoryStore()
    Embedder("memorylab/hashed-bow-64").remember(store, GROQ, now=NOW)
    with pytest.raises(EmbeddingModelMismatch, match="hashed-bow-384.*hashed-bow-64"):
        Embedder("memorylab/hashed-bow-384").query(store, QUERY)


def test_query_refuses_a_store_of_hand_made_vectors():
    store = MemoryStore()
    store.add(Memory("m1", GROQ, created_at=NOW, embedding=[1.0, 0.0, 0.0]))
    with pytest.raises(EmbeddingModelMismatch, match="hand-made vectors"):
        Embedder().query(store, QUERY)


def test_a_real_model_is_embedded_through_lab_models(monkeypatch):
    calls = []

    def fake_embed(model, texts, api_base=None, timeout=60.0):
        calls.append((model, texts, api_base, timeout))
        return [(1.0, 0.0), (0.0, 1.0)]

    monkeypatch.setattr(gateway, "embed", fake_embed)
    embedder = Embedder("openai/text-embedding-3-small", "http://localhost:4000", timeout=5)
    vectors = embedder.embed(["a", "b"])
    assert calls == [("openai/text-embedding-3-small", ["a", "b"], "http://localhost:4000", 5)]
    np.testing.assert_array_equal(vectors, [(1.0, 0.0), (0.0, 1.0)])


def test_a_real_model_takes_api_base_and_timeout_from_the_settings(monkeypatch):
    monkeypatch.setenv("MEMORY_LAB_API_BASE", "http://localhost:11434")
    monkeypatch.setenv("MEMORY_LAB_TIMEOUT", "12")
    embedder = Embedder("ollama/nomic-embed-text")
    assert embedder.api_base == "http://localhost:11434"
    assert embedder.timeout == pytest.approx(12.0)


# --- gateway.embed: the litellm path -----------------------------------------------


@pytest.mark.slow
def test_litellm_path_gives_the_same_vector_as_the_model_object():
    [vector] = gateway.embed("memorylab/hashed-bow-384", ["Groq API"])
    np.testing.assert_allclose(vector, toy("Groq API"), rtol=0, atol=1e-12)


def fake_litellm(monkeypatch, embedding):
    """Stand in for the litellm module, so these tests need neither it nor a network."""
    monkeypatch.setattr(gateway, "_litellm", SimpleNamespace(embedding=embedding))


def test_a_failing_embedding_model_raises_runtimeerror_with_a_hint(monkeypatch):
    def refuse(**kwargs):
        raise ConnectionError("no route to host")

    fake_litellm(monkeypatch, refuse)
    with pytest.raises(
        gateway.ModelCallError, match="(?s)no route to host.*unset MEMORY_LAB_EMBED_MODEL"
    ):
        gateway.embed("openai/text-embedding-3-small", ["a"])


def test_a_wrong_number_of_vectors_is_a_model_call_error(monkeypatch):
    one_vector = SimpleNamespace(data=[{"index": 0, "embedding": [1.0, 0.0]}])
    fake_litellm(monkeypatch, lambda **kwargs: one_vector)
    with pytest.raises(
        gateway.ModelCallError, match="text-embedding-3-small.*returned 1 vectors for 2 texts"
    ):
        gateway.embed("openai/text-embedding-3-small", ["a", "b"])


def test_an_empty_model_name_is_an_error_not_the_default():
    with pytest.raises(ValueError, match="model must be a non-empty string"):
        Embedder("")


def test_remember_gives_the_memory_the_stores_user_or_the_one_asked_for(tmp_path):
    from storage.sqlite_store import PersistentMemoryStore

    embedder = Embedder()
    assert embedder.remember(MemoryStore(), "likes tea", now=NOW).user_id == "default"
    assert embedder.memory("m1", "likes tea", now=NOW, user_id="ada").user_id == "ada"
    with PersistentMemoryStore(tmp_path / "m.sqlite3", user_id="bob") as store:
        assert embedder.remember(store, "likes coffee", now=NOW).user_id == "bob"
