"""The default offline embedding: meaning and words in one vector (hybrid search).

memorylab/minilm-words-N joins two unit vectors, each scaled so that the plain cosine of
two joined vectors is a fixed mix of the two similarities:

    memory vector = [sqrt(a) * MiniLM(text),  sqrt(1 - a) * hashed words(text)]
    cosine(query, memory) = a * semantic similarity + (1 - a) * lexical similarity

The semantic half (384 numbers, embeddings/minilm.py) knows that "Which city is my home?" is
about "I live in Lisbon"; the lexical half (N numbers, embeddings/hashed_words.py's hashed
bag of words) knows that a rare name or number in the question is in the answer. This
is hybrid search, a production pattern; here it is one vector, so the learner's plain
cosine (scoring.relevance_score) scores it unchanged.

A memory's lexical half says which words it has, each once (HashedWords.presence: a
turn that repeats a name is no better match). A query's lexical half weighs each word by
how rare it is in the store it searches (BM25's inverse document frequency), and its
semantic half is MiniLM of the query without the words most of the store holds:

    query vector = [sqrt(a) * MiniLM(q without common words),
                    sqrt(1 - a) * unit(count(w) * idf(w) per word w)]

The memory side cannot carry idf (it changes as the store grows), so the query side does,
and a memory's vector never changes as the store grows. A common word is one that more
than COMMON_SHARE (30%) of the store's memories hold, once it has COMMON_MIN (20): in a
chat between two people each turn begins with its speaker's name, and to MiniLM a name
in a short question weighs as much as its topic (Hybrid.topic). Both are query-side
only: the vectors stored are the same whatever they are.
The document frequencies are counted from the store's own vectors (which hashed word
positions are non-zero in each memory), in memory, by DocumentFrequencies: never saved,
rebuilt on the first query after a restart, and kept up to date as memories come and go.
A query with no word at all ("?") has a zero lexical half: its cosine is then
sqrt(a) * semantic similarity, the same ranking as meaning alone.

A question may name a personal fact by its kind where the memory states the fact
("Which city is my home?" against "I live in Lisbon with my partner"): no word is shared,
the lexical half finds nothing, and MiniLM alone puts "I am saving for a house" first.
So a query word that no memory of the store has, and that embeddings/expansion.py's small
lexicon of cues knows, is replaced in the lexical half by its cue words that some memory
has ("home" by "live" and "moved"), each at EXPANSION (0.5) times its idf. A query word
the store has is never replaced, and a store with none of the cue words is ranked as
without them; on LoCoMo's tuning half the cues change nothing (docs/evaluation.md).

    MIX = 0.5, the tuned a; LEXICAL = 1616, the tuned N: 384 + 1616 = 2,000 numbers,
    pgvector's HNSW limit for `vector` (docs/evaluation.md says how they were tuned: on
    real conversations, LoCoMo, and on the generated year together)

The query side needs the store, and says so: `hybrid.query_context(store)` gives the
store's DocumentFrequencies, and `hybrid.embed_queries(texts, frequencies)` uses them.

Deliberately left out: a second index or rank fusion; one vector keeps every strategy,
the SQLite store and pgvector unchanged. Expanding the semantic half too (MiniLM of
"Which city is my home? live" is still nearer the house).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Iterable, Sequence

from base.text import tokenize, without_words
from embeddings import minilm
from embeddings.expansion import CUES
from embeddings.hashed_words import HashedWords
from embeddings.minilm import MiniLM
from embeddings.model import OfflineModel, Vector

MIX = 0.5  # a: the semantic share of the cosine, tuned on LoCoMo and data/eval (docs/evaluation.md)
LEXICAL = 1616  # N: the lexical half's dimensions, tuned likewise; 384 + 1616 = MAX_DIMENSIONS
MAX_DIMENSIONS = 2000  # pgvector's HNSW limit (DESIGN.md)
NAME = "memorylab/minilm-words-"  # + N; the family before (minilm-bow-N) is retired
IDF_POWER = 1  # the query side weighs a word by its idf, as BM25 does (see above)
COMMON_SHARE = 0.3  # a query word in more of the store's memories than this share...
COMMON_MIN = 20  # ...of a store of at least this many is left out of the semantic half
EXPANSION = 0.5  # a cue word standing in for a query word no memory has: this share of its idf


class Hybrid(OfflineModel):
    """Meaning and words in one vector: cosine = mix * semantic + (1 - mix) * lexical.

        hybrid = Hybrid(MiniLM(), HashedWords(1616), mix=0.5)
        hybrid.name, hybrid.dimensions         -> ('memorylab/minilm-words-1616', 2000)
        hybrid.embed_documents(["I live in Lisbon"])    -> [2000 floats]: which words it has
        frequencies = hybrid.query_context(store)       # how many memories have each word
        hybrid.embed_query("Where do I live?", frequencies)  -> 2000 floats: rare words weigh more

    semantic is the sentence model (MiniLM(): its embed_array gives float32 rows), lexical
    the hashed words. Only the tuned mix is named memorylab/minilm-words-N; another mix is
    named apart (memorylab/minilm-words-256-mix-0.9), so its vectors are never taken for
    the default's.
    """

    def __init__(self, semantic: MiniLM, lexical: HashedWords, mix: float = MIX):
        if not 0.0 <= mix <= 1.0:
            raise ValueError(f"mix (the semantic share of the cosine) must be in [0, 1], got {mix}")
        dimensions = semantic.dimensions + lexical.dimensions
        if dimensions > MAX_DIMENSIONS:
            raise ValueError(
                f"a hybrid has at most {MAX_DIMENSIONS} dimensions (pgvector's index limit), "
                f"got {semantic.dimensions} + {lexical.dimensions}"
            )
        self.semantic, self.lexical, self.mix = semantic, lexical, mix
        self.dimensions = dimensions
        self.name = f"{NAME}{lexical.dimensions}"
        if mix != MIX:
            self.name += f"-mix-{mix:g}"

    def __repr__(self) -> str:
        return f"Hybrid({self.semantic!r}, {self.lexical!r}, mix={self.mix})"

    @property
    def uses_minilm(self) -> bool:
        return self.semantic.uses_minilm

    def embed_documents(self, texts: Sequence[str], truncated: list | None = None) -> list[Vector]:
        """The memory side: which words it has (each once) in the lexical half, so a
        memory's vector never changes as the store grows."""
        semantic = self.semantic.embed_array(texts, truncated)  # (N, 384) float32
        s, w = math.sqrt(self.mix), math.sqrt(1.0 - self.mix)
        out = []
        for i, text in enumerate(texts):
            lexical = [0.0] * self.lexical.dimensions  # HashedWords.presence, times w
            filled = self.lexical.filled(text)
            for position in filled:
                lexical[position] = w / math.sqrt(len(filled))
            out.append(tuple((s * semantic[i]).tolist()) + tuple(lexical))
        return out

    def query_context(self, store) -> DocumentFrequencies:
        """The store's document frequencies, cached with the store and brought up to date."""
        return frequencies_for(store, self.lexical.dimensions)

    def embed_queries(
        self,
        texts: Sequence[str],
        frequencies: DocumentFrequencies | None = None,
        truncated: list | None = None,
    ) -> list[Vector]:
        """The query side: each word weighted by its rarity in the store (`frequencies`),
        and meaning without the store's most common words (topic)."""
        if not isinstance(frequencies, DocumentFrequencies):
            raise TypeError(
                "the hybrid weights a query's words by their rarity in the store it searches: "
                f"pass hybrid.query_context(store), got {type(frequencies).__name__}"
            )
        if frequencies.dims != self.lexical.dimensions:
            raise ValueError(
                f"document frequencies of {frequencies.dims} positions do not fit "
                f"{self.name}'s {self.lexical.dimensions}"
            )
        topics = [self.topic(text, frequencies) for text in texts]
        semantic = self.semantic.embed_array(topics, truncated)
        s, w = math.sqrt(self.mix), math.sqrt(1.0 - self.mix)
        out = []
        for i, text in enumerate(texts):
            weights: dict[int, float] = {}
            tokens = tokenize(text)
            for word in tokens:
                position = self.lexical.bucket(word)  # where a memory's same word is
                weights[position] = (
                    weights.get(position, 0.0) + frequencies.idf(position) ** IDF_POWER
                )
            self._stand_in(weights, tokens, frequencies)
            norm = math.sqrt(sum(x * x for x in weights.values()))
            lexical = [0.0] * self.lexical.dimensions
            for position, weight in weights.items():  # only the query's words: a handful
                lexical[position] = w * weight / norm
            out.append(tuple((s * semantic[i]).tolist()) + tuple(lexical))
        return out

    def _stand_in(self, weights: dict, tokens: list, frequencies: DocumentFrequencies) -> None:
        """A query word no memory has, replaced in `weights` by its cue words that some
        memory has (embeddings/expansion.py), each at EXPANSION times its idf."""
        counts, bucket = frequencies.counts, self.lexical.bucket
        for word in dict.fromkeys(tokens):
            if not EXPANSION or counts[bucket(word)]:
                continue
            found = [bucket(cue) for cue in CUES.get(word, ()) if counts[bucket(cue)]]
            if found:
                weights.pop(bucket(word), None)
            for position in found:
                if position not in weights:  # a word of the query's own keeps its weight
                    weights[position] = EXPANSION * frequencies.idf(position) ** IDF_POWER

    def topic(self, text: str, frequencies: DocumentFrequencies) -> str:
        """What the query's semantic half embeds: `text` without the words that more than
        COMMON_SHARE of the store's memories hold (once it has COMMON_MIN of them).

        In a chat between two people every turn starts with a speaker's name, so a name is
        in half the memories: it tells them apart no better than "the" does, yet to MiniLM
        a name in a short question weighs as much as its topic ("What did Caroline
        research?" is near every turn of Caroline's). The lexical half keeps every word,
        each weighted by its rarity, a name barely.
        """
        n = frequencies.documents
        if n < COMMON_MIN:
            return text
        counts, bucket = frequencies.counts, self.lexical.bucket
        return without_words(text, lambda stem: counts[bucket(stem)] > COMMON_SHARE * n)


class DocumentFrequencies:
    """How many of a store's memories have each lexical position, kept up to date.

    Counted from the memories' own vectors (the non-zero lexical coordinates), so it
    needs no text and agrees with the hashing exactly. update(store) adds the memories
    it has not seen and forgets those that are gone. On an in-memory store that is one
    pass over its memories; a database store (storage/store.py) says first what changed
    (rows_stamp: its highest seq and its row count), so a query reads nothing more when
    nothing changed, only the new rows when rows were only added, and every row again
    only after a removal.
    """

    def __init__(self, dims: int):
        self.dims = dims
        self.counts = [0] * dims
        self.seen: dict[str, tuple] = {}  # memory id -> (the memory, its lexical positions)
        self.stamp: tuple[int, int] | None = None  # the database store's, when last counted
        self.kept: int | None = None  # memories counted by the database (position_counts)

    def update(self, memories: Iterable) -> DocumentFrequencies:
        # a database store keeps the counts itself, updated by each write (storage/store.py
        # position_counts(): (memories, per position of the whole vector how many are
        # non-zero)): one short read, whatever the store holds
        kept = memories.position_counts() if hasattr(memories, "position_counts") else None
        if kept is not None and len(kept[1]) == minilm.DIMENSIONS + self.dims:
            self.kept, self.counts = kept[0], kept[1][minilm.DIMENSIONS :].tolist()
            self.seen, self.stamp = {}, None
            return self
        if self.kept is not None:  # the database's counts until now: count from nothing
            self.kept, self.counts = None, [0] * self.dims
        stamp = memories.rows_stamp() if hasattr(memories, "rows_stamp") else None
        if stamp is not None and self.stamp is not None:
            if stamp == self.stamp:
                return self  # no row added or removed since: nothing to read
            if stamp[0] > self.stamp[0] and stamp[1] > self.stamp[1]:
                for memory in memories.added_after(self.stamp[0]):
                    if memory.id not in self.seen:
                        self._count(memory)
                if len(self.seen) == stamp[1]:  # only additions: counted
                    self.stamp = stamp
                    return self
        self._recount(memories)
        self.stamp = stamp  # taken before the pass: a row added during it is read again
        return self

    def _recount(self, memories: Iterable) -> None:
        current = {}
        for memory in memories:
            current[memory.id] = memory
        for gone in [i for i, (m, _) in self.seen.items() if current.get(i) is not m]:
            for p in self.seen.pop(gone)[1]:
                self.counts[p] -= 1
        for memory_id, memory in current.items():
            if memory_id not in self.seen:
                self._count(memory)

    def _count(self, memory) -> None:
        lexical = memory.embedding[minilm.DIMENSIONS :]
        if len(lexical) != self.dims:  # another model's vector: counts nothing
            lexical = ()
        positions = tuple(p for p, x in enumerate(lexical) if x)
        self.seen[memory.id] = (memory, positions)
        for p in positions:
            self.counts[p] += 1

    @property
    def documents(self) -> int:
        return len(self.seen) if self.kept is None else self.kept

    def idf(self, position: int) -> float:
        """BM25's inverse document frequency: log(1 + (n - df + 0.5) / (df + 0.5)), > 0."""
        df = self.counts[position]
        return math.log(1.0 + (self.documents - df + 0.5) / (df + 0.5))


_frequencies: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def frequencies_for(store, dims: int) -> DocumentFrequencies:
    """The store's document frequencies, cached with the store and brought up to date."""
    cached = _frequencies.get(store)
    if cached is None or cached.dims != dims:
        cached = DocumentFrequencies(dims)
        _frequencies[store] = cached
    return cached.update(store)
