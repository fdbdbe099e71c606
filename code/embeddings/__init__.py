"""Offline embedding models as objects, looked up by name, and what deserves an embedding.

    registry.py       a model's name read once: offline_model("memorylab/minilm-words-1616")
                      -> Hybrid(MiniLM(), HashedWords(1616), mix=0.5); None for a real model
    model.py          what every offline model has: name, dimensions, embed_documents,
                      query_context and embed_queries
    hashed_words.py   the word toy: a hashed bag of words, HashedWords(384)
    minilm.py         all-MiniLM-L6-v2 in numpy, MiniLM(): a real sentence-embedding model
    hybrid.py         the default, Hybrid(semantic, lexical, mix): MiniLM and hashed words in
                      one vector, a query's words weighted by their rarity in the store
    expansion.py      the hybrid's query-side cues: "home" -> "live", "moved" when no memory
                      says "home" (a question naming a fact by its kind)
    worth_embedding.py the word lists and machine-output rules behind the write-back's filter

Stands on base/, memory_store.py and config.py. Importing it is cheap: minilm.py loads numpy
and its weights on the first embedding. Real models are reached through llm/gateway.py.
"""
