"""What every offline embedding model is: a name, a size, and a document and a query side.

An offline model is a small object (after sentence-transformers' `encode_document` and
`encode_query`): a memory is embedded with `embed_documents`, a question with
`embed_queries`. For most models the two sides are the same function; the hybrid
(hybrid.py) weights a query's words by how rare they are in the store it searches, so a
query is embedded *for a store*, and the difference is in the signature:

    model = HashedWords(384)                       # hashed_words.py
    model.embed_documents(["I live in Lisbon"])    -> [384 floats]
    context = model.query_context(store)           # what the query side needs from the store
    model.embed_queries(["Where do I live?"], context)  -> [384 floats]

Only registry.py turns a name into a model; everything else asks it.

Deliberately left out: real models (llm/gateway.py reaches them through litellm) and
which model a store accepts (memory_store.py checks the name).
"""

from __future__ import annotations

from collections.abc import Sequence

Vector = tuple[float, ...]


class OfflineModel:
    """The shared part of the offline models; a model overrides embed_documents.

    name: what every memory it makes is stamped with ("memorylab/hashed-bow-384").
    dimensions: the length of each vector.
    uses_minilm: whether it runs all-MiniLM-L6-v2 (precomputed vectors then help it).
    """

    name: str
    dimensions: int
    uses_minilm = False

    def embed_documents(self, texts: Sequence[str], truncated: list | None = None) -> list[Vector]:
        """One vector per text (the memory side). `truncated` receives the index of each
        text the model had to cut (only MiniLM cuts, at 256 tokens)."""
        raise NotImplementedError

    def query_context(self, store) -> object | None:
        """What embed_queries needs to know about `store`: nothing, unless the query side
        depends on the store (the hybrid's document frequencies)."""
        return None

    def embed_queries(
        self, texts: Sequence[str], context=None, truncated: list | None = None
    ) -> list[Vector]:
        """One vector per query, for the store `context` came from; by default the same
        vectors as the memory side."""
        return self.embed_documents(texts, truncated)

    def embed_query(self, text: str, context=None) -> Vector:
        return self.embed_queries([text], context)[0]

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and vars(other) == vars(self)

    def __hash__(self) -> int:
        return hash(self.name)
