"""The memory stream: Memory objects and the in-memory MemoryStore that holds them.

A memory is one thing worth remembering (a statement, an event, a skill) plus what
retrieval needs: when it was created and last recalled (epoch seconds; a datetime is
converted), how much it matters (1-10) and an embedding of its text. A store keeps
memories in the order they were added, with unique ids, one embedding model and one user.
Every value is checked when it is set (base/memory_fields.py), and the links between
memories (superseded_by) when a transaction ends (base/links.py).

Deliberately left out: scoring and ranking (scoring.py, retriever.py), embeddings
(embedding_helpers.py), files and databases (storage/).

    >>> now = 1_000_000.0
    >>> store = MemoryStore()
    >>> store.add(Memory("m1", "decided to default to Groq", kind="semantic",
    ...                  created_at=now - 10, last_accessed=now - 10, importance=8,
    ...                  embedding=[1.0, 0.0, 0.0]))
    Memory(id='m1', kind='semantic', importance=8, text='decided to default to Groq')
    >>> len(store), store.get("m1").last_accessed
    (1, 999990.0)
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from base.links import feature_problems
from base.memory_fields import memory_field
from base.store_base import StoreBase
from base.tracked import Tracked
from base.validation import as_vector, check_text


@dataclass(eq=False)
class Memory(Tracked):
    """One entry of the memory stream.

    Inputs:
        id: unique within its store, e.g. "m1"; fixed once the memory is made.
        text: what is remembered, at most MAX_TEXT_CHARS (8,000) characters.
        kind: "episodic" (an event), "semantic" (a durable fact) or "procedural" (a skill).
        created_at, last_accessed: epoch seconds or datetime; each defaults to the other,
            else now. Retrieval refreshes last_accessed; recency is measured from it.
        importance: 1 (mundane, "brushed teeth") to 10 (core, "signed the contract").
        embedding: the vector of `text`, rounded to float32 (a reopened store ranks alike).
        embedding_model: the model that made `embedding`, or None for hand-made vectors.
        superseded_by: id of the memory that replaced this one; retrieval skips it.
        metadata: free-form extras (e.g. {"role": "user"}); memory.metadata["x"] = 1 is
            saved like an assignment (base/tracked.py tells the memory's stores).
        user_id: whose memory this is; a store claims a memory of "default" for its user.
    """

    id: str
    text: str
    kind: str = "episodic"
    created_at: float | datetime | None = None
    last_accessed: float | datetime | None = None
    importance: float = 5
    embedding: Any = None
    embedding_model: str | None = None
    superseded_by: str | None = None
    metadata: dict = field(default_factory=dict)
    user_id: str = "default"

    def __setattr__(self, name: str, value: Any) -> None:
        value = memory_field(name, value)  # on every assignment, not only in __init__
        ready = "_ready" in self.__dict__
        if value is None and ready and name in ("created_at", "last_accessed", "embedding"):
            raise ValueError(f"memory {self.id!r}: {name} cannot be set to None")
        if name == "id" and ready and value != self.id:
            # subtle: a store finds a memory (and its row) by id; a renamed memory would be
            # saved over whichever memory has the new id
            raise ValueError(
                f"memory {self.id!r} cannot be renamed to {value!r}: a memory's id is its "
                "name in the store; make a new Memory with the new id instead"
            )
        if name == "superseded_by" and value is not None and value == self.id:
            raise ValueError(
                f"memory {self.id!r} cannot supersede itself: superseded_by must name another"
            )
        if name == "metadata" and not isinstance(value, dict):
            raise TypeError(f"metadata must be a dict, got {type(value).__name__}")
        super().__setattr__(name, value)  # base/tracked.py: tells its stores, then sets

    def __post_init__(self) -> None:
        if self.embedding is None:
            raise ValueError(
                f"memory {self.id!r} needs an embedding: pass embedding=[...] or create it "
                "with embedding_helpers.Embedder().memory(...)"
            )
        if self.created_at is None:
            self.created_at = time.time() if self.last_accessed is None else self.last_accessed
        if self.last_accessed is None:
            self.last_accessed = self.created_at
        if self.last_accessed < self.created_at:  # (only here: a recall may set it earlier)
            raise ValueError(
                f"memory {self.id!r}: last_accessed ({self.last_accessed}) is earlier than "
                f"created_at ({self.created_at}); a memory cannot be recalled before it exists"
            )
        object.__setattr__(self, "_ready", True)  # from now on None is refused

    def __repr__(self) -> str:  # the embedding is left out: 384 floats help nobody
        text = self.text if len(self.text) <= 60 else self.text[:57] + "..."
        extra = f", superseded_by={self.superseded_by!r}" if self.superseded_by else ""
        return (
            f"Memory(id={self.id!r}, kind={self.kind!r}, importance={self.importance!r}, "
            f"text={text!r}{extra})"
        )

    def to_dict(self) -> dict:
        """A JSON-ready copy (the embedding as a list)."""
        data = {name: getattr(self, name) for name in self.__dataclass_fields__}
        return {**data, "embedding": list(self.embedding), "metadata": dict(self.metadata)}

    @classmethod
    def from_dict(cls, data: dict) -> Memory:
        """The inverse of to_dict; validates exactly as the constructor does."""
        if not isinstance(data, dict):
            raise TypeError(f"expected a dict, got {type(data).__name__}")
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown Memory field(s): {', '.join(sorted(unknown))}")
        return cls(**data)


# --- the store -------------------------------------------------------------------------


class UnknownMemory(KeyError, ValueError):
    """No memory has that id in the store (both a failed lookup and a bad value given)."""

    def __str__(self) -> str:  # KeyError would show the message in quotes
        return str(self.args[0]) if self.args else ""


class EmbeddingModelMismatch(ValueError):
    """Two embedding models' vectors met in one store: their cosines are meaningless, and
    fail silently (numbers, just wrong ones), so the store refuses loudly."""


class MemoryStore(StoreBase):
    """An in-memory memory stream of one user, with unique ids and one embedding model.

    store = MemoryStore()             # user "default"; model learned from the first memory
    store = MemoryStore("memorylab/hashed-bow-384", user_id="alice")   # or fixed up front

    A memory of another user is refused, so recall never puts one person's memory into
    another's prompt. user_id=None makes a store of any users' memories (what
    scale.MemoryIndex filters per query); recall refuses it once it holds two users.
    extend(), transaction(), save() and check_one_user() come from base/store_base.py.
    """

    memory_type = Memory  # what add() and extend() accept

    def __init__(self, embedding_model: str | None = None, *, user_id: str | None = "default"):
        if embedding_model is not None and not (
            isinstance(embedding_model, str) and embedding_model
        ):
            raise ValueError(
                f"embedding_model must be a non-empty string or None, got {embedding_model!r}"
            )
        self.embedding_model = embedding_model
        if user_id is not None:
            check_text(user_id, "user_id", "a non-empty string (or None for any users)")
        self.user_id = user_id
        self._memories: dict[str, Memory] = {}  # insertion-ordered: the stream's order
        self.dimension: int | None = None  # length of every embedding, set by the first add

    def add(self, memory: Memory) -> Memory:
        """Append `memory` and return it. Refuses duplicate ids, foreign embeddings and users."""
        if not isinstance(memory, Memory):
            raise TypeError(f"MemoryStore.add expects a Memory, got {type(memory).__name__}")
        if self.user_id is not None and memory.user_id not in ("default", self.user_id):
            raise ValueError(
                f"memory {memory.id!r} belongs to user {memory.user_id!r}, but this store holds "
                f"only the memories of user {self.user_id!r}: one user per store, so add it to "
                f"a store of its own user, e.g. MemoryStore(user_id={memory.user_id!r})"
            )
        if memory.id in self._memories:
            raise ValueError(f"a memory with id {memory.id!r} is already in the store")
        self.check_model(memory.embedding_model, what=f"memory {memory.id!r}")
        if self.dimension not in (None, len(memory.embedding)):
            raise ValueError(
                f"memory {memory.id!r} has a {len(memory.embedding)}-dimensional embedding, "
                f"but this store holds {self.dimension}-dimensional ones"
            )
        if memory.superseded_by is not None and memory.superseded_by not in self:
            raise ValueError(
                f"memory {memory.id!r} says it is superseded by {memory.superseded_by!r}, "
                "which is not in the store"
            )
        problems = [] if self._in_transaction else feature_problems(self._link_view(), memory)
        if problems:  # (inside a transaction, links are checked when it ends)
            raise ValueError(
                f"{problems[0]}: add a consolidated fact or a replacing fact together with "
                "its links, inside one `with store.transaction():`"
            )
        self._note(memory)  # inside a transaction: undone if the block fails
        self.embedding_model, self.dimension = memory.embedding_model, len(memory.embedding)
        if self.user_id is not None:
            memory.user_id = self.user_id  # an unassigned ("default") memory is now this user's
        self._memories[memory.id] = memory
        self._watch(memory)
        return memory

    def check_model(self, model: str | None, what: str = "the query") -> None:
        """Raise EmbeddingModelMismatch unless `model` is this store's; an empty store with
        no fixed model accepts any (its first memory decides)."""
        if (self._has_memories() or self.embedding_model is not None) and (
            model != self.embedding_model
        ):
            mine, theirs = (
                m or "hand-made vectors (no model)" for m in (self.embedding_model, model)
            )
            raise EmbeddingModelMismatch(
                f"{what} was embedded with {theirs!r}, but this store's memories were embedded "
                f"with {mine!r}. Similarities between two models' vectors are meaningless: "
                "embed both sides with the same model."
            )

    def check_query(self, query_embedding: Any) -> tuple[float, ...]:
        """Return the query as a vector of this store's length, or raise saying which model."""
        query = as_vector(query_embedding, "query_embedding")
        if self.dimension not in (None, len(query)):
            raise ValueError(
                f"query_embedding has {len(query)} values but the store's memories have "
                f"{self.dimension}: embed the query with the store's model "
                f"({self.embedding_model or 'hand-made vectors'})"
            )
        return query

    def get(self, memory_id: str) -> Memory:
        """The memory named `memory_id`; KeyError naming it when there is none."""
        check_text(memory_id, "memory_id", "a memory's id, a non-empty string")
        try:
            memory = self._memories[memory_id]
        except KeyError:
            raise UnknownMemory(f"no memory with id {memory_id!r} in the store") from None
        self._note(memory)  # handed out inside a transaction: its metadata may change in place
        return memory

    def supersede(self, old_id: str, new_id: str) -> None:
        """Mark `old_id` as replaced by `new_id`: both stay stored, retrieval skips old_id.
        Both must be live: re-linking a replaced memory would rewrite its history."""
        old, new = self.get(old_id), self.get(new_id)
        if old is new:
            raise ValueError(f"memory {old_id!r} cannot supersede itself")
        if old.superseded_by is not None:
            raise ValueError(
                f"memory {old_id!r} is already superseded by {old.superseded_by!r}; a "
                "replaced memory is history and is not linked again: supersede the current "
                "version instead (extensions/superseding.py's current_version finds it)"
            )
        if new.superseded_by is not None:  # also rules out cycles: m1 -> m2 -> m1
            raise ValueError(
                f"memory {new_id!r} is itself superseded by {new.superseded_by!r}; "
                f"supersede {old_id!r} with the current memory instead"
            )
        old.superseded_by = new.id

    def remove(self, memory_id: str) -> Memory:
        """Take a memory out and return it; refused while another names it as replacement."""
        self.get(memory_id)
        citing = [m.id for m in self._memories.values() if m.superseded_by == memory_id]
        if citing:
            raise ValueError(
                f"memory {memory_id!r} replaced {', '.join(map(repr, citing))}; remove "
                "those first, or keep it so their superseded_by link stays valid"
            )
        memory = self._memories[memory_id]
        self._note(memory)
        if self._journal is not None and self._order_before is None:
            self._order_before = list(self._memories)  # a failed block puts it back in place
        self._unwatch(memory)
        return self._memories.pop(memory_id)

    def live(self) -> Iterator[Memory]:
        """Memories that have not been superseded, in the order they were added."""
        return (m for m in self if m.superseded_by is None)

    def next_id(self, prefix: str = "m") -> str:
        """The first unused id of the form prefix + number, counting from len + 1."""
        check_text(prefix, "prefix", "a non-empty string (ids are prefix + number, e.g. m1)")
        n = len(self._memories) + 1
        while f"{prefix}{n}" in self._memories:
            n += 1
        return f"{prefix}{n}"

    def _has_memories(self) -> bool:
        return bool(self._memories)

    def _put_back(self, memories: list[Memory]) -> None:
        """After a failed transaction: memories it removed go back to their places."""
        by_id = {**{m.id: m for m in memories}, **self._memories}
        order = self._order_before or list(by_id)
        self._memories = {i: by_id[i] for i in order if i in by_id}

    def __iter__(self) -> Iterator[Memory]:
        return iter(list(self._memories.values()))  # a snapshot: safe to add while looping

    def __len__(self) -> int:
        return len(self._memories)

    def __contains__(self, memory_id: object) -> bool:
        return memory_id in self._memories

    def __repr__(self) -> str:
        return (
            f"MemoryStore({len(self)} memories, user_id={self.user_id!r}, "
            f"embedding_model={self.embedding_model!r})"
        )


def check_store(store: Any) -> MemoryStore:
    """Return `store` if it is a MemoryStore (or a subclass), else raise TypeError naming it."""
    if not isinstance(store, MemoryStore):
        raise TypeError(f"store must be a MemoryStore, got {type(store).__name__}")
    return store
