"""The offline embedding: a hashed bag of words, the transparent toy of the lab.

memorylab/hashed-bow-384 hashes each content word (base/text.py's tokenize: lower-cased,
crudely stemmed, stop words dropped) to one of 384 positions and scales the counts to
length 1. Two texts are similar exactly when they share words. It needs no network and
no download and always gives the same vector, but it knows no synonyms: "car" and
"automobile" are unrelated to it.

    HashedWords(384).embed_query("Groq API")  -> 384 floats, two of them 0.7071..., the rest 0.0

Deliberately left out: meaning. A real model (MEMORY_LAB_EMBED_MODEL, see config.py)
captures it; this one captures overlap.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

from base.text import tokenize
from embeddings.model import OfflineModel, Vector

SIZES = range(8, 65536 + 1)  # the dimensions a hashed bag of words may have


class HashedWords(OfflineModel):
    """A hashed bag of words of `dims` positions; queries and memories are embedded alike.

        words = HashedWords(384)
        words.name                                   -> 'memorylab/hashed-bow-384'
        words.embed_documents(["Groq API", "?"])     -> [two 0.7071... and 382 zeros, 384 zeros]

    A text with no word at all ("?") has the zero vector: it is similar to nothing.
    """

    def __init__(self, dims: int = 384):
        if isinstance(dims, bool) or not isinstance(dims, int) or dims not in SIZES:
            raise ValueError(
                f"a hashed bag of words has from {SIZES[0]} to {SIZES[-1]} dimensions, got {dims!r}"
            )
        self.dimensions = dims
        self.name = f"memorylab/hashed-bow-{dims}"

    def __repr__(self) -> str:
        return f"HashedWords({self.dimensions})"

    def embed_documents(self, texts: Sequence[str], truncated: list | None = None) -> list[Vector]:
        return [self.vector(text) for text in texts]  # never cut: `truncated` stays as it is

    def vector(self, text: str) -> Vector:
        """The unit-length bag of words of `text`, or all zeros if it has no words."""
        vector = [0.0] * self.dimensions
        for word in tokenize(text):
            vector[self._bucket(word)] += 1.0
        norm = math.sqrt(sum(x * x for x in vector))
        return tuple(x / norm for x in vector) if norm else tuple(vector)

    def presence(self, text: str) -> Vector:
        """Which positions `text`'s words fill, each once, scaled to length 1 (or all zeros).

        A word said twice counts as once: the sublinear extreme of term frequency, which
        the hybrid's memory side uses (a chatty turn repeating a name is no better match).
        """
        vector = [0.0] * self.dimensions
        filled = self.filled(text)
        for position in filled:
            vector[position] = 1.0 / math.sqrt(len(filled))
        return tuple(vector)

    def filled(self, text: str) -> set[int]:
        """The positions `text`'s words land on (presence's non-zero coordinates)."""
        return {self._bucket(word) for word in tokenize(text)}

    def bucket(self, token: str) -> int:
        """The position of one word exactly as tokenize gave it (no second split or stem)."""
        return self._bucket(token)

    def position(self, word: str) -> int:
        """Where vector(word) puts `word`: the lowest position the one-word text fills, 0 if none.

        subtle: `word` is split again, as any text is, so a token that stems again lands
        where its second stem does ("meeting" -> "meet"), not where it does in a memory:
        for a token tokenize already gave, ask bucket(token).
        """
        return min((self._bucket(w) for w in tokenize(word)), default=0)

    def _bucket(self, token: str) -> int:
        # hashlib, not hash(): Python salts hash() per process, and vectors must not change
        digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
        return int.from_bytes(digest, "big") % self.dimensions
