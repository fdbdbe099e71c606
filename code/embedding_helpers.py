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

The offline default, memorylab/hashed-bow-384 (lab/offline_embedding.py), is a bag of
words: two texts are similar exactly when they share words. It needs no network and no
download, but it knows no synonyms. A real model (MEMORY_LAB_EMBED_MODEL, see config.py)
captures meaning; this one captures overlap.

Deliberately left out: storing vectors (memory_store.py) and scoring (scoring.py).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from lab.offline_embedding import offline_dimensions, offline_embedding
from lab.validation import check_text
from memory_store import Memory, MemoryStore


class Embedder:
    """Embeds text with one model and stamps the results with that model's name.

    Inputs:
        model: any litellm embedding model, or memorylab/hashed-bow-N (offline).
            None reads MEMORY_LAB_EMBED_MODEL (default memorylab/hashed-bow-384).
        api_base, timeout: passed to litellm for real models.
    """

    def __init__(self, model: str | None = None, api_base: str | None = None, timeout=None):
        if model is None or api_base is None or timeout is None:
            from config import load_settings  # what is not given comes from the settings

            settings = load_settings()
            model = settings.embed_model if model is None else model
            api_base = settings.api_base if api_base is None else api_base
            timeout = settings.timeout if timeout is None else timeout
        check_text(model, "model")
        if model.startswith("memorylab/"):
            offline_dimensions(model)  # fail now, not at the first embed
        self.model, self.api_base, self.timeout = model, api_base, timeout

    def __repr__(self) -> str:
        return f"Embedder({self.model!r})"

    def embed(self, texts: Sequence[str]) -> list[tuple[float, ...]]:
        """One vector per text, in order."""
        if isinstance(texts, str):
            raise TypeError("embed expects a list of texts; use embed_one for a single text")
        texts = list(texts)
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"texts[{i}] must be a string, got {type(text).__name__}")
        if not texts:
            return []
        if self.model.startswith("memorylab/"):
            # The offline model is a few lines of Python: compute it here rather than
            # importing litellm (seconds) for it. lab/models.py registers the very same
            # function with litellm, and a test checks that both paths agree.
            return [offline_embedding(t, self.model) for t in texts]
        from lab.models import embed  # imports litellm: only for a real model

        return embed(self.model, texts, api_base=self.api_base, timeout=self.timeout)

    def embed_one(self, text: str) -> tuple[float, ...]:
        return self.embed([text])[0]

    def query(self, store: MemoryStore, text: str) -> tuple[float, ...]:
        """Embed a query for `store`, refusing if the store was filled by another model."""
        store.check_model(self.model, what=f"the query {text!r}")
        return self.embed_one(text)

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
        """A new Memory of `text`, embedded and stamped with this model, created at `now`."""
        now = time.time() if now is None else now
        return Memory(
            memory_id,
            text,
            kind=kind,
            created_at=now,
            last_accessed=now,
            importance=importance,
            embedding=self.embed_one(text),
            embedding_model=self.model,
            metadata=dict(metadata or {}),
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
        store.check_model(self.model, what=f"the memory {text!r}")
        user_id = user_id or getattr(store, "user_id", "default")
        memory = self.memory(
            memory_id or store.next_id(), text, kind, importance, now, metadata, user_id
        )
        return store.add(memory)
