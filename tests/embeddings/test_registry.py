"""embeddings/registry.py: each offline model's name is read there once, into its object."""

from __future__ import annotations

import pytest

from config import OFFLINE_EMBED_MODEL, TOY_EMBED_MODEL
from conftest import NOW
from embedding_helpers import Embedder
from embeddings import registry
from embeddings.hashed_words import HashedWords
from embeddings.hybrid import LEXICAL, MIX, Hybrid
from embeddings.minilm import MiniLM
from embeddings.model import OfflineModel
from embeddings.registry import Entry, offline_model
from memory_store import MemoryStore


@pytest.mark.parametrize(
    ("name", "kind", "dimensions"),
    [
        ("memorylab/hashed-bow-384", HashedWords, 384),
        ("memorylab/hashed-bow-8", HashedWords, 8),
        ("memorylab/hashed-bow-65536", HashedWords, 65536),
        ("memorylab/minilm-l6-v2", MiniLM, 384),
        ("memorylab/minilm-bow-256", Hybrid, 384 + 256),
        ("memorylab/minilm-bow-8", Hybrid, 384 + 8),
        ("memorylab/minilm-bow-1616", Hybrid, 2000),  # pgvector's HNSW limit, exactly
    ],
)
def test_each_name_is_the_model_of_its_class_and_size(name, kind, dimensions):
    model = offline_model(name)
    assert type(model) is kind
    assert (model.name, model.dimensions) == (name, dimensions)


def test_the_configured_defaults_are_the_tuned_hybrid_and_the_toy():
    assert offline_model(OFFLINE_EMBED_MODEL) == Hybrid(MiniLM(), HashedWords(LEXICAL), MIX)
    assert offline_model(TOY_EMBED_MODEL) == HashedWords(384)
    assert repr(offline_model(OFFLINE_EMBED_MODEL)) == (
        f"Hybrid(MiniLM(), HashedWords({LEXICAL}), mix={MIX})"
    )


@pytest.mark.parametrize("entry", registry.MODELS, ids=lambda entry: entry.name)
def test_every_registry_line_makes_models_named_as_the_line_says(entry):
    sizes = [None] if entry.sizes is None else [entry.sizes[0], entry.sizes[-1]]
    for size in sizes:
        model = entry.make() if size is None else entry.make(size)
        assert offline_model(model.name) == model
        if size is not None:
            assert model.name == entry.name[:-1] + str(size)
    if entry.example:
        assert offline_model(entry.example).name == entry.example


@pytest.mark.parametrize(
    "name", ["text-embedding-3-small", "ollama/nomic-embed-text", "openai/memorylab/x"]
)
def test_a_real_models_name_is_no_offline_model(name):
    assert offline_model(name) is None
    assert not registry.is_offline(name)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("memorylab/hashed-bow-4", "with N from 8 to 65536, e.g. memorylab/hashed-bow-384"),
        ("memorylab/hashed-bow-65537", "with N from 8 to 65536"),
        ("memorylab/hashed-bow-", "expected memorylab/hashed-bow-N"),
        ("memorylab/hashed-bow-064", "expected memorylab/hashed-bow-N"),  # one model, one name
        ("memorylab/hashed-bow-\u00b2", "expected memorylab/hashed-bow-N"),
        ("memorylab/minilm-bow-0", "with N from 8 to 1616, e.g. memorylab/minilm-bow-256"),
        ("memorylab/minilm-bow-1617", "with N from 8 to 1616"),
        ("memorylab/minilm-bow-x", "expected memorylab/minilm-bow-N"),
    ],
)
def test_a_bad_size_names_the_rule_and_an_example(name, message):
    with pytest.raises(ValueError, match=f"unknown offline embedding model '{name}': .*{message}"):
        offline_model(name)


@pytest.mark.parametrize(
    "name",
    ["memorylab/word2vec", "memorylab/offline-chat", "memorylab/minilm-l6-v2 ", "memorylab/"],
)
def test_an_unknown_offline_name_lists_the_offline_models(name):
    listing = (
        r"the offline models are memorylab/minilm-bow-N \(meaning and words, N from 8 to 1616; "
        r"the default is memorylab/minilm-bow-256\), memorylab/minilm-l6-v2 \(meaning\) and "
        r"memorylab/hashed-bow-N \(words, N from 8 to 65536\)$"
    )
    with pytest.raises(ValueError, match=listing):
        offline_model(name)


class Letters(OfflineModel):
    """A made-up model: how often a, b and c occur in a text."""

    name, dimensions = "memorylab/letters", 3

    def embed_documents(self, texts, truncated=None):
        return [tuple(float(text.count(c)) for c in "abc") for text in texts]


def test_a_new_offline_model_is_one_class_and_one_registry_line(monkeypatch):
    line = Entry("memorylab/letters", "letters", Letters)
    monkeypatch.setattr(registry, "MODELS", (*registry.MODELS, line))
    embedder, store = Embedder("memorylab/letters"), MemoryStore()
    memory = embedder.remember(store, "abba", now=NOW)
    assert memory.embedding_model == "memorylab/letters"
    assert tuple(memory.embedding) == (2.0, 2.0, 0.0)
    assert embedder.query(store, "cab") == (1.0, 1.0, 1.0)
