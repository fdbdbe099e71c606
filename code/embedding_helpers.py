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

The offline default, memorylab/hashed-bow-384, is a bag of words: each content word
(lower-cased, crudely stemmed, stop words dropped) is hashed to one of 384 positions,
and the counts are scaled to length 1. Two texts are similar exactly when they share
words. It needs no network and no download and always gives the same vector, but it
knows no synonyms: "car" and "automobile" are unrelated to it. A real model
(MEMORY_LAB_EMBED_MODEL, see config.py) captures meaning; this one captures overlap.

Deliberately left out: storing vectors (memory_store.py) and scoring (scoring.py).
"""

from __future__ import annotations

import hashlib
import math
import re
import time
from collections.abc import Sequence

from memory_store import Memory, MemoryStore

OFFLINE_PREFIX = "memorylab/hashed-bow-"

# Words that carry no topic: "which API should I default to?" is about "api" and "default".
STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself
    yourselves let lets i'm i've i'd i'll it's that's don't""".split()
)
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")  # letters and digits of any alphabet


def tokenize(text: str) -> list[str]:
    """Content words of `text`, lower-cased and crudely stemmed.

    tokenize("Eric prefers Groq for the default API")
        -> ['eric', 'prefer', 'groq', 'default', 'api']
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}: {text!r}")
    words = _WORD.findall(text.lower().replace("\u2019", "'"))  # curly apostrophe too
    content = [w for w in words if w not in STOP_WORDS]
    return [_stem(w) for w in (content or words)]  # only stop words ("what is it?"): keep them


def _stem(word: str) -> str:
    """A deliberately tiny stemmer, so that 'prefers', 'preferred' and 'prefer' meet."""
    word = word.split("'")[0]  # "eric's" -> "eric"
    for suffix, keep in (("ies", "y"), ("ing", ""), ("ed", ""), ("s", "")):
        stem = word[: -len(suffix)] + keep
        if word.endswith(suffix) and len(stem) >= 3 and not word.endswith("ss"):
            if keep == "" and len(stem) > 3 and stem[-1] == stem[-2] and stem[-1] not in "ls":
                stem = stem[:-1]  # "preferr" -> "prefer", "debugg" -> "debug"
            word = stem
            break
    return word[:-1] if len(word) >= 5 and word.endswith("e") else word  # "decide" ~ "decid"


def offline_embedding(text: str, model: str = OFFLINE_PREFIX + "384") -> tuple[float, ...]:
    """The hashed bag-of-words vector of `text`: unit length, or all zeros if no words.

    offline_embedding("Groq API")  -> 384 floats, two of them 0.7071..., the rest 0.0
    """
    dims = offline_dimensions(model)
    vector = [0.0] * dims
    for word in tokenize(text):
        # hashlib, not hash(): Python salts hash() per process, and vectors must not change
        digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
        vector[int.from_bytes(digest, "big") % dims] += 1.0
    norm = math.sqrt(sum(x * x for x in vector))
    return tuple(x / norm for x in vector) if norm else tuple(vector)


def offline_dimensions(model: str) -> int:
    """384 for 'memorylab/hashed-bow-384'; any size from 8 to 65536 may be asked for."""
    size = model[len(OFFLINE_PREFIX) :] if model.startswith(OFFLINE_PREFIX) else ""
    canonical = size.isascii() and size.isdigit() and str(int(size)) == size  # no "064"
    if not canonical or not 8 <= int(size) <= 65536:
        raise ValueError(
            f"unknown offline embedding model {model!r}: expected {OFFLINE_PREFIX}N "
            "with N from 8 to 65536, e.g. memorylab/hashed-bow-384"
        )
    return int(size)


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
        if not isinstance(model, str) or not model:
            raise ValueError(f"model must be a non-empty string, got {model!r}")
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
            # importing litellm (seconds) for it. local_models registers the very same
            # function with litellm, and a test checks that both paths agree.
            return [offline_embedding(t, self.model) for t in texts]
        from local_models import embed

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
