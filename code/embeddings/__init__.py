"""Offline embedding models and what deserves an embedding.

    hashed_words.py   the word toy: a hashed bag of words (memorylab/hashed-bow-384)
    minilm.py         all-MiniLM-L6-v2 in numpy: a real sentence-embedding model
    hybrid.py         the default: MiniLM and hashed words in one vector
    worth_embedding.py which texts deserve a memory (the chat's write-back follows it)

Stands on base/ and memory_store.py. Importing it is cheap: minilm.py loads numpy and its
weights on the first embedding. Real models are reached through llm/gateway.py.
"""
