"""How store-schema-1.sqlite3 was made: once, with the schema-1 code, before the format changed.

Run from the repository folder: python tests/storage/data/make_store_schema_1.py OUT (it needs the
schema-1 code to reproduce the fixture; today's code writes schema 2).
"""

import sys
from pathlib import Path

sys.path.insert(0, "code")
from memory_store import Memory
from storage.sqlite_store import PersistentMemoryStore

NOW = 1_000_000.0
out = Path(sys.argv[1])
with PersistentMemoryStore(out, user_id="alice") as s:
    s.add(
        Memory(
            "m1",
            "Alice prefers Groq",
            kind="semantic",
            created_at=NOW - 86400,
            importance=8,
            embedding=[0.5, -0.25, 1.0],
            embedding_model="hand-rolled",
            metadata={"role": "user", "tags": ["é"]},
        )
    )
    s.add(
        Memory(
            "m2",
            "Alice now prefers Ollama",
            created_at=NOW - 3600,
            last_accessed=NOW - 60,
            importance=6.5,
            embedding=[0.1, 1 / 3, -2.5e-300],
            embedding_model="hand-rolled",
        )
    )
    s.supersede("m1", "m2")
    s.next_id()
with PersistentMemoryStore(out, user_id="bob") as s:
    s.add(Memory("b1", "Bob likes tea", created_at=NOW, embedding=[1.0, 0.0], embedding_model=None))
