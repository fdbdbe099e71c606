"""What the course's modules stand on: the machinery a learner uses but never edits.

    validation.py        every value checked where it enters (times, vectors, weights, ...)
    units.py             seconds, hours, days
    defaults.py          the course's decay rate, weights, k and fixed clock, written once
    signals.py           half-lives and decay rates, min-max rescaling
    text.py              the word splitter (tokenize) and the stop words
    memory_block.py      recalled memories as a block of JSON lines in a prompt; dates, ages
    models.py            the litellm gateway: chat and embedding calls, offline or real
    redaction.py         secrets (key-like variables' values, key shapes) cut out of any text
    offline_chat.py      the offline chat model: answers only from the memories it is shown
    offline_embedding.py the word toy embedding: a hashed bag of words
    minilm.py            all-MiniLM-L6-v2 in numpy: a real sentence-embedding model
    hybrid_embedding.py  the default embedding: MiniLM and hashed words in one vector
    what_to_embed.py     which texts deserve a memory (the chat's write-back follows it)
    reembed.py           re-embed a store file with today's embedding model
    write_through.py     what the two stores below share: changes written as they happen
    sqlite_store.py      a MemoryStore kept in a SQLite file, one user per store; export
    store_file.py        the file under it: schema, opening safely, a stray -wal, copies
    store_rows.py        one memory <-> one row: packed float32 vectors, per-row checksums
    store_schema.py      the tables, version by version; older files migrated on open
    backup.py            python code/run.py backup: a consistent copy of a store file
    postgres_store.py    the same store on PostgreSQL with pgvector; isolation by row-level security
    pg_server.py         a local PostgreSQL server (embedded wheel) started in a folder
    terminal_chat.py     the terminal chat loop around the course's chat turn

Nothing here imports the learner core (scoring.py, retriever.py), the course's chat and
embedding modules, or the packages above (teaching/, extensions/, evaluation/, scale/).
Importing this package is cheap: no numpy, no litellm (lab/models.py imports litellm on
the first model call; lab/minilm.py loads numpy and its weights on the first embedding).
"""
