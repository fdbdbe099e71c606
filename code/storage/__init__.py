"""Where memories live beyond one process: SQLite files and PostgreSQL.

    store.py           the store algorithm, written once: each change written as it happens
    limits.py          what both backends can keep: name sizes, metadata, dimensions, no NUL
    sqlite_store.py    the store's SQLite dialect: a MemoryStore in a file, one user a store; export
    sqlite_file.py     the file under it: opening safely, a stray -wal, copies
    sqlite_schema.py   the tables, version by version; older files migrated on open
    rows.py            one memory <-> one row: packed float32 vectors, per-row checksums
    postgres_store.py  the store's PostgreSQL dialect, with pgvector
    postgres_database.py  the database under it: schema, roles, policies, connecting safely
    pg_server.py       a local PostgreSQL server (embedded wheel) started in a folder

Stands on base/, memory_store.py and config.py; never imports the models or the chat.
"""
