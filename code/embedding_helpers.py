"""Embeddings: text in, vectors out, and one embedding model per store, enforced.

Relevance is a cosine between two vectors, and it only means something when both were
made by the same model. Mixing models fails silently (you still get numbers), so the
Embedder stamps every memory with its model's name and refuses to query a store whose
memories came from another model.

    embedder = Embedder()                                  # the model from config.py
    memory = embedder.remember(store, "Eric prefers Groq for the default API",
                               kind="semantic", importance=7, now=now)
    query = embedder.query(store, "which API should I default to?")
    retrieve(store, query, now=now, k=3)

The offline models need no network, no key and no download (embeddings/registry.py
turns each name into its model object):

    memorylab/minilm-words-1616 the default: the real sentence-embedding model
                               all-MiniLM-L6-v2 (run in numpy, embeddings/minilm.py) joined with
                               a bag of words, so one cosine mixes meaning and shared
                               words (hybrid search, embeddings/hybrid.py). A query's
                               words are weighted by their rarity in the store it searches.
    memorylab/minilm-l6-v2     the sentence model alone: meaning only
    memorylab/hashed-bow-384   the transparent toy (embeddings/hashed_words.py): two texts
                               are similar exactly when they share words

Any litellm embedding model can be set instead (MEMORY_LAB_EMBED_MODEL, see config.py).
The sentence model reads at most 256 tokens (about 190 words) of a text: a longer text
is embedded from its start, and the memory made from it says so in its metadata
("embedded": "the first 256 of 1,204 tokens"), as does `Embedder.truncated`.

Deliberately left out: storing vectors (memory_store.py) and scoring (scoring.py).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from base.redaction import redact, redact_data
from base.validation import check_memory_text, check_text
from embeddings import minilm
from embeddings.registry import offline_model
from memory_store import Memory, MemoryStore, check_store

REEMBED_COMMAND = "python code/run.py reembed"  # re-embeds a store file with today's model


class Embedder:
    """Embeds text with one model and stamps the results with that model's name.

    Inputs:
        model: any litellm embedding model, or an offline one: memorylab/minilm-words-N
            (the hybrid), memorylab/minilm-l6-v2 or memorylab/hashed-bow-N. None reads
            MEMORY_LAB_EMBED_MODEL (default memorylab/minilm-words-1616).
        api_base, timeout: passed to litellm for real models.

    embedder.offline_model is the offline model object (embeddings/registry.py), or None
    for a real model.
    """

    def __init__(self, model: str | None = None, api_base: str | None = None, timeout=None):
        if model is None or api_base is None or timeout is None:
            from config import load_settings  # what is not given comes from the settings

            settings = load_settings()
            model = settings.embed_model if model is None else model
            api_base = settings.api_base if api_base is None else api_base
            timeout = settings.timeout if timeout is None else timeout
        check_text(model, "model")
        self.offline_model = offline_model(model)  # a bad offline name fails now, not later
        self.model, self.api_base, self.timeout = model, api_base, timeout
        self.truncated: list[int] = []  # indexes of the last call's texts cut at 256 tokens

    def __repr__(self) -> str:
        return f"Embedder({self.model!r})"

    def embed(self, texts: Sequence[str]) -> list[tuple[float, ...]]:
        """One vector per text, in order (for the hybrid: the memory side)."""
        texts = _check_texts(texts)
        self.truncated = []
        if not texts:
            return []
        if self.offline_model is not None:
            # The offline models run here rather than through litellm (seconds to import).
            # llm/gateway.py registers the very same model objects with litellm, and a test
            # checks that both paths agree.
            return self.offline_model.embed_documents(texts, self.truncated)
        from llm.gateway import embed  # imports litellm: only for a real model

        return embed(self.model, texts, api_base=self.api_base, timeout=self.timeout)

    def embed_one(self, text: str) -> tuple[float, ...]:
        return self.embed([text])[0]

    def query(self, store: MemoryStore, text: str) -> tuple[float, ...]:
        """Embed a query for `store`, refusing if the store was filled by another model.

        For the hybrid model the query's words are weighted by their rarity in `store`
        (the model's query_context: embeddings/hybrid.py).
        """
        check_store(store).check_model(self.model, what=f"the query {text!r}")
        return self.queries(store, [text])[0]

    def queries(self, store: MemoryStore, texts: Sequence[str]) -> list[tuple[float, ...]]:
        """Embed several queries for `store` in one call (as query() does each)."""
        check_store(store)
        texts = _check_texts(texts)
        if self.offline_model is None:
            return self.embed(texts)  # a real model embeds queries as it embeds memories
        self.truncated = []
        if not texts:
            return []
        context = self.offline_model.query_context(store)  # the hybrid: word rarities
        return self.offline_model.embed_queries(texts, context, self.truncated)

    def memory(
        self,
        memory_id: str,
        text: str,
        kind: str = "episodic",
        importance: float = 5,
        now=None,
        metadata: dict | None = None,
        user_id: str = "default",
    ) -> Memory:
        """A new Memory of `text`, embedded and stamped with this model, created at `now`.

        Secrets are redacted from the text and metadata first (base/redaction.py): a key a
        provider echoed in an error, or one pasted into the chat, is never stored, never
        sent along with a recalled memory, never exported. metadata["redacted"] counts them.
        """
        now = time.time() if now is None else now
        check_text(text, "text")
        if metadata is not None and not isinstance(metadata, dict):
            raise TypeError(f"metadata must be a dict or None, got {type(metadata).__name__}")
        clean = redact(text)
        metadata = redact_data(dict(metadata or {}))
        if clean != text:
            metadata["redacted"] = clean.count("[redacted")
        text = check_memory_text(clean, "text")  # before the embedding: a clear error first
        embedding = self.embed_one(text)
        if self.truncated:
            tokens = minilm.token_count(text)
            metadata["embedded"] = f"the first {minilm.MAX_TOKENS} of {tokens:,} tokens"
        return Memory(
            memory_id,
            text,
            kind=kind,
            created_at=now,
            last_accessed=now,
            importance=importance,
            embedding=embedding,
            embedding_model=self.model,
            metadata=metadata,
            user_id=user_id,
        )

    def remember(
        self,
        store: MemoryStore,
        text: str,
        kind: str = "episodic",
        importance: float = 5,
        now=None,
        memory_id: str | None = None,
        metadata: dict | None = None,
        user_id: str | None = None,
    ) -> Memory:
        """Embed `text`, add it to `store` as a new memory (id m1, m2, ...) and return it.

        The memory belongs to `user_id`, by default the store's user when it has one.
        """
        check_store(store).check_model(self.model, what=f"the memory {text!r}")
        user_id = user_id or store.user_id or "default"  # None: the index's many-user store
        if memory_id is not None:
            check_text(memory_id, "memory_id", "a non-empty string or None (None: the next id)")
        memory = self.memory(
            store.next_id() if memory_id is None else memory_id,
            text,
            kind,
            importance,
            now,
            metadata,
            user_id,
        )
        return store.add(memory)


def _check_texts(texts) -> list[str]:
    if isinstance(texts, str):
        raise TypeError("embed expects a list of texts; use embed_one for a single text")
    texts = list(texts)
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"texts[{i}] must be a string, got {type(text).__name__}")
        if not text.strip():
            raise ValueError(f"texts[{i}] is empty: there is nothing to embed, got {text!r}")
    return texts
