"""What the SQLite and PostgreSQL stores share: a MemoryStore written through to storage.

Both keep every memory in memory (so the learner's retriever runs on them unchanged) and
write each change to their storage as it happens. Both remember what the storage holds
(`_saved`, so `save()` writes only what changed in place), turn `store.transaction()` into
one transaction of their storage, and close by saving first. What differs (the SQL, the
connection, how a transaction begins and ends) stays in sqlite_store.py and
postgres_store.py: each defines `_transaction()`, `save()` and `_where()`.

Deliberately left out: any SQL, and any knowledge of files or servers.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from memory_store import MemoryStore


class WriteThroughStore(MemoryStore):
    """A MemoryStore whose changes go to storage as they happen (subclassed, not used alone)."""

    _db = None  # the open connection, None once closed

    def __init__(self, embedding_model: str | None = None, *, user_id: str = "default") -> None:
        super().__init__(embedding_model, user_id=user_id)
        self._saved: dict[str, tuple] = {}  # id -> the FIELDS values the storage holds
        self._block_open = False  # inside store.transaction(): one write for the block

    def _where(self) -> str:  # the file or the database, for messages and repr
        raise NotImplementedError

    def close(self) -> None:
        """Save what changed in place, then close the connection. Safe to call twice."""
        if self._db is not None:
            try:
                self.save()
            finally:
                self._db.close()
                self._db = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self._where()!r}, user_id={self.user_id!r}, "
            f"{len(self)} memories, embedding_model={self.embedding_model!r})"
        )

    @contextmanager
    def _write_block(self) -> Iterator[None]:
        """store.transaction(): the whole block is one transaction of the storage."""
        with self._transaction():
            self._block_open = True
            try:
                yield
            finally:
                self._block_open = False

    def _state(self) -> tuple:
        return (*super()._state(), dict(self._saved))

    def _restore(self, state: tuple) -> None:
        *base, self._saved = state
        super()._restore(tuple(base))
