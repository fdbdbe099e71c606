"""What every store shares beneath the course's API: all or nothing, batches, one user.

MemoryStore (memory_store.py) inherits StoreBase; the stores of storage/ fill in its hooks.
transaction() groups changes so that they all happen or none does:

    with store.transaction():
        fact = embedder.remember(store, "Eric now prefers OpenAI", now=now)
        store.supersede("m1", fact.id)    # if this raises, the fact is gone too

If the block raises, the store is put back as it was: memories added are gone, memories
removed are back, and every field changed in place has its old value. A transaction
inside another joins it. Before the block ends, the links of the memories it touched are
checked (base/links.py), so a block that would break one is rolled back too.

What a block costs is what it touches, never a copy of the store: a journal keeps each
memory the block changes (added, removed, linked, handed out by get(), or assigned a field:
a memory tells the stores holding it before a field changes, `_changing`) as it was, once,
and only those are put back or link-checked. A memory's metadata changed in place
(metadata["x"] = 1) tells its stores too (base/metadata.py); a value changed inside it
(metadata["tags"].append(...)) is put back only for memories the block handed out or
changed through the store.

Hooks: `_write_block()` wraps the block in one write of the storage (a file's or a
database's transaction; nothing in memory), `_kept()`/`_restore_kept()` what else a store
keeps per memory, `_link_view()` the memories the link rules read, `reread(id)` reads a
memory as the storage holds it now, `save()` writes changes made in place. extend() adds
a batch as one transaction, linking each memory to one later in the batch;
check_one_user() guards what works on one user's memories.

Memories are read by their attributes only, so this module needs nothing else of code/.
Deliberately left out: the rules of one memory and one add (memory_store.py).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from base.links import link_order, touched_link_problems
from base.validation import check_text


class StoreBase:
    """Beneath a store that keeps its memories in _memories (id -> memory, in order)."""

    memory_type: type  # what add() accepts: memory_store.Memory
    _memories: dict[str, Any]
    user_id: str | None
    embedding_model: str | None
    dimension: int | None
    _in_transaction = False
    _journal: dict | None = None  # in a transaction: id(memory) -> (memory, fields, held, kept)
    _order_before: list | None = None  # in a transaction: the ids before its first remove

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
        stored = {new for new in links.values() if new not in given and new in self}
        order = link_order(links, known=given.keys() | stored)  # may raise
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
        kept = self.embedding_model, self.dimension
        self._journal, self._order_before = {}, None  # what this block touches, as it was
        self._in_transaction = True
        try:
            with self._write_block():
                yield self
                self._check_commit()  # inside the write: a refusal rolls it back too
        except BaseException:
            self._roll_back(kept)
            raise
        finally:
            self._in_transaction = False
            self._journal, self._order_before = None, None

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
        """What transaction() checks before the block is written: the links it touched."""
        self._check_links(self._touched(), "this transaction")

    def _touched(self) -> list[tuple[Any, str | None]]:
        """(memory, its link before the block) for every memory the block touched."""
        return [(m, fields.get("superseded_by")) for m, fields, *_ in self._journal.values()]

    def _check_links(self, touched: Iterable[tuple[Any, str | None]], what: str) -> None:
        """Raise ValueError if a change to `touched` memories breaks a rule of base/links.py.

        touched: (memory, the memory it was superseded by before the change). Only these
        memories, what they link to and what they linked to are read: a new cycle or a
        dangling link passes through a changed link, and a feature's rule (an evidence
        list, a replaced fact) is read from the memory its links point at.
        """
        memories = self._link_view()
        ids = set()
        for memory, before in touched:
            ids.update(i for i in (memory.id, memory.superseded_by, before) if i is not None)
        problems = []
        for memory_id in sorted(ids):
            problems.extend(touched_link_problems(memories, memory_id))
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

    # --- the journal: what a transaction touched, as it was (never a copy of the store) ---

    def _link_view(self) -> Mapping[str, Any]:
        """id -> memory, for the link rules: here the memories themselves."""
        return self._memories

    def _watch(self, memory: Any) -> None:
        """From now on `memory` tells this store before a field of it changes (_changing)."""
        refs = memory.__dict__.get("_stores", ())
        if not any(ref() is self for ref in refs):
            object.__setattr__(memory, "_stores", (*refs, weakref.ref(self)))

    def _unwatch(self, memory: Any) -> None:
        refs = tuple(ref for ref in memory.__dict__.get("_stores", ()) if ref() not in (self, None))
        object.__setattr__(memory, "_stores", refs)

    def _changing(self, memory: Any) -> None:
        """A field of `memory`, held by this store, is about to be assigned."""
        self._note(memory)

    def _note(self, memory: Any) -> None:
        """Inside a transaction: keep `memory` as it is now, once, to put back on failure."""
        journal = self._journal
        if journal is not None and id(memory) not in journal:
            fields = {**memory.__dict__, "metadata": dict(memory.metadata)}
            journal[id(memory)] = (memory, fields, self._holds(memory), self._kept(memory))

    def _holds(self, memory: Any) -> bool:
        return self._memories.get(memory.id) is memory

    def _kept(self, memory: Any) -> Any:
        """What else a store keeps about `memory` that a failed block must put back."""
        return None

    def _roll_back(self, kept: tuple) -> None:
        """A failed block: every memory it touched as it was, the added gone, the removed back."""
        self.embedding_model, self.dimension = kept
        back = []
        for memory, fields, held, extra in self._journal.values():
            memory.__dict__.update(fields)  # subtle: bypasses validation (and watchers) on purpose
            adopt = getattr(memory, "_adopt_metadata", None)  # its dict watched again
            if adopt is not None:
                adopt()
            if held and not self._holds(memory):
                back.append(memory)
            elif not held and self._holds(memory):
                del self._memories[memory.id]
            self._restore_kept(memory, held, extra)
        if back:
            self._put_back(back)

    def _restore_kept(self, memory: Any, held: bool, extra: Any) -> None:
        """Put back what _kept returned (nothing here)."""

    def _put_back(self, memories: list[Any]) -> None:
        for memory in memories:
            self._memories[memory.id] = memory
