"""What every store shares beneath the course's API: all or nothing, batches, one user.

MemoryStore (memory_store.py) inherits StoreBase; the stores of storage/ fill in its hooks.
transaction() groups changes so that they all happen or none does:

    with store.transaction():
        fact = embedder.remember(store, "Eric now prefers OpenAI", now=now)
        store.supersede("m1", fact.id)    # if this raises, the fact is gone too

If the block raises, the store is put back as it was: memories added are gone, memories
removed are back, and every field changed in place has its old value. A transaction
inside another joins it. Before the block ends, the links between memories are checked
(base/links.py), so a block that would break one is rolled back too.

Hooks: `_write_block()` wraps the block in one write of the storage (a file's or a
database's transaction; nothing in memory), `_state()`/`_restore()` say what must be put
back, `reread(id)` reads a memory as the storage holds it now, `save()` writes changes
made in place. extend() adds a batch as one transaction, linking each memory to one later
in the batch; check_one_user() guards what works on one user's memories.

Memories are read by their attributes only, so this module needs nothing else of code/.
Deliberately left out: the rules of one memory and one add (memory_store.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from base.links import link_order, link_problems
from base.validation import check_text


class StoreBase:
    """Beneath a store that keeps its memories in _memories (id -> memory, in order)."""

    memory_type: type  # what add() accepts: memory_store.Memory
    _memories: dict[str, Any]
    user_id: str | None
    embedding_model: str | None
    dimension: int | None
    _in_transaction = False

    def extend(self, memories: Iterable[Any]) -> list[Any]:
        """Add several memories in order, all or none; one may be superseded by a later one.

        store.extend(Memory.from_dict(d) for d in copies)   # a store rebuilt from copies
        """
        name = self.memory_type.__name__
        if isinstance(memories, (str, bytes, dict, self.memory_type)) or not isinstance(
            memories, Iterable
        ):
            raise TypeError(f"extend expects an iterable of {name} objects, got {memories!r:.60}")
        batch = list(memories)
        for memory in batch:
            if not isinstance(memory, self.memory_type):
                raise TypeError(f"extend expects {name} objects, got {type(memory).__name__}")
        given = {m.id: m for m in batch}
        links = {i: m.superseded_by for i, m in given.items() if m.superseded_by is not None}
        order = link_order(links, known=given.keys() | self._memories.keys())  # may raise
        try:
            with self.transaction():  # every memory and every link, or none of them
                for memory in batch:
                    memory.superseded_by = None  # linked below, once both ends are stored
                    self.add(memory)
                for old, new in order:
                    self.supersede(old, new)
        except BaseException:
            for old, new in links.items():  # the caller's memories as they were given
                object.__setattr__(given[old], "superseded_by", new)
            raise
        return batch

    def check_one_user(self, what: str) -> str | None:
        """The one user whose memories this store holds (None while a many-user store is
        empty), or ValueError: `what` works on one user's memories.

            PersistentMemoryStore(path, "alice").check_one_user("recall") -> 'alice'
        """
        users = sorted({m.user_id for m in self._memories.values()} - {self.user_id})
        if self.user_id is not None and users:  # a stored memory's user_id changed in place
            stray = next(m for m in self._memories.values() if m.user_id != self.user_id)
            raise ValueError(
                f"{what} works on one user's memories, but memory {stray.id!r} of this store "
                f"of user {self.user_id!r} now says it belongs to user {stray.user_id!r} (its "
                "user_id was changed in place): keep each user's memories in their own store"
            )
        if len(users) > 1:  # MemoryStore(user_id=None), the many-user store
            shown = ", ".join(map(repr, users[:5])) + (", ..." if len(users) > 5 else "")
            raise ValueError(
                f"{what} works on one user's memories, but this store holds memories of "
                f"{len(users)} users ({shown}): give it one user's store, e.g. "
                "MemoryStore(user_id=...) or PersistentMemoryStore(path, user_id=...)"
            )
        return self.user_id or (users[0] if users else None)

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """Group changes so that they all happen or none does (see the module docstring)."""
        if self._in_transaction:
            yield self  # nested: the outer transaction decides
            return
        kept = self._state()
        self._in_transaction = True
        try:
            with self._write_block():
                yield self
                self._check_commit()  # inside the write: a refusal rolls it back too
        except BaseException:
            self._restore(kept)
            raise
        finally:
            self._in_transaction = False

    def save(self) -> int:
        """Write what changed in place to wherever the store keeps its memories.

        Returns how many memories were written. A store in memory keeps nothing anywhere
        else, so this writes nothing and returns 0; code that works on any store calls it.
        """
        return 0

    def reread(self, memory_id: str) -> Any:
        """The memory as the store keeps it right now, or None if it is not there.

        In memory that is the memory itself; a store kept in a file or a database reads
        its current row, which another process may have changed. Multi-step changes call
        it inside their transaction to act on current rows, not a stale view.
        """
        check_text(memory_id, "memory_id", "a memory's id, a non-empty string")
        return self._memories.get(memory_id)

    def _check_commit(self) -> None:
        """What transaction() checks before the block is written: the links between memories."""
        self._check_links("this transaction")

    def _check_links(self, what: str) -> None:
        """Raise ValueError if the links between memories break a rule of base/links.py."""
        problems = link_problems(self._memories)
        if problems:
            shown = "; ".join(problems[:3]) + ("; ..." if len(problems) > 3 else "")
            raise ValueError(
                f"{what} would leave the links between memories broken: {shown}. Nothing "
                "was changed: make every step of a multi-step change inside one "
                "`with store.transaction():`"
            )

    @contextmanager
    def _write_block(self) -> Iterator[None]:
        """Where a store kept elsewhere begins and commits one write; nothing here."""
        yield

    def _state(self) -> tuple:
        """Everything transaction() must be able to put back."""
        fields = {
            m.id: {**m.__dict__, "metadata": dict(m.metadata)} for m in self._memories.values()
        }
        return dict(self._memories), fields, self.embedding_model, self.dimension

    def _restore(self, state: tuple) -> None:
        memories, fields, self.embedding_model, self.dimension = state
        for memory_id, memory in memories.items():
            memory.__dict__.update(fields[memory_id])  # subtle: bypasses validation on purpose
        self._memories = memories
