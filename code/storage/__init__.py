"""Where memories live beyond one process: SQLite files and PostgreSQL.

    write_through.py   what the two stores share: changes written as they happen
    sqlite_store.py    a MemoryStore kept in a SQLite file, one user per store; export
    sqlite_file.py     the file under it: opening safely, a stray -wal, copies
    sqlite_schema.py   the tables, version by version; older files migrated on open
    rows.py            one memory <-> one row: packed float32 vectors, per-row checksums
    postgres_store.py  the same store on PostgreSQL with pgvector
    pg_server.py       a local PostgreSQL server (embedded wheel) started in a folder

Stands on base/, memory_store.py and config.py; never imports the models or the chat.
"""
