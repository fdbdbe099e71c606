"""The offline embedding: a hashed bag of words, the transparent toy of the lab.

memorylab/hashed-bow-384 hashes each content word (base/text.py's tokenize: lower-cased,
crudely stemmed, stop words dropped) to one of 384 positions and scales the counts to
length 1. Two texts are similar exactly when they share words. It needs no network and
no download and always gives the same vector, but it knows no synonyms: "car" and
"automobile" are unrelated to it.

    offline_embedding("Groq API")  -> 384 floats, two of them 0.7071..., the rest 0.0

Deliberately left out: meaning. A real model (MEMORY_LAB_EMBED_MODEL, see config.py)
captures it; this one captures overlap.
"""

from __future__ import annotations

import hashlib
import math

from base.text import tokenize

OFFLINE_PREFIX = "memorylab/hashed-bow-"


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
