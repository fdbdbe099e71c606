"""Okapi BM25: the classic keyword ranking, as a baseline for the embeddings.

    BM25(["I live in Lisbon", "I like tea"]).scores("Where do I live?")  -> [0.693..., 0.0]

Each word of the query that a memory contains adds its rarity (inverse document
frequency) times a saturating function of how often the memory says it, discounted for
long memories. Words are the lab's words (base/text.py's tokenize), so BM25 and the
hashed bag of words see the same text; only the weighting differs.

    score(q, d) = sum over words w of q:
        idf(w) * f(w, d) * (k1 + 1) / (f(w, d) + k1 * (1 - b + b * |d| / avgdl))
    idf(w) = log(1 + (N - n(w) + 0.5) / (n(w) + 0.5))

with k1 = 1.2 and b = 0.75, the usual defaults (Robertson and Zaragoza, "The
Probabilistic Relevance Framework: BM25 and Beyond", 2009).

Deliberately left out: an inverted index; the evaluation set is small enough to score
every memory.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from base.text import tokenize


class BM25:
    """BM25 over a fixed list of documents; scores(query) gives one score per document."""

    def __init__(self, documents: Sequence[str], k1: float = 1.2, b: float = 0.75):
        self.k1, self.b = k1, b
        self.counts = [Counter(tokenize(d)) for d in documents]
        self.lengths = [sum(c.values()) for c in self.counts]
        self.average = sum(self.lengths) / len(self.lengths) if self.lengths else 0.0
        frequency = Counter(word for c in self.counts for word in c)
        n = len(self.counts)
        self.idf = {w: math.log(1.0 + (n - df + 0.5) / (df + 0.5)) for w, df in frequency.items()}

    def scores(self, query: str) -> list[float]:
        words = set(tokenize(query))
        out = []
        for counts, length in zip(self.counts, self.lengths):
            norm = self.k1 * (1.0 - self.b + self.b * length / self.average) if self.average else 0
            total = 0.0
            for word in words & counts.keys():
                f = counts[word]
                total += self.idf[word] * f * (self.k1 + 1.0) / (f + norm)
            out.append(total)
        return out
