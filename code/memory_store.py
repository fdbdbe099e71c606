"""The memory stream: Memory objects and the in-memory MemoryStore that holds them.

A memory is one thing worth remembering (a statement, an event, a skill) plus the
numbers retrieval needs: when it was created, when it was last recalled, how much it
matters (1-10) and an embedding of its text. The store keeps them in the order
they were added, with the ids unique, one embedding model for all, and one user: a
store is bound to its user_id (default "default") and refuses another user's memory.
Memories are appended; one leaves only when asked to by name (`remove`), never as a
side effect. Links between memories (superseded_by, a consolidated fact's evidence)
are checked whenever a transaction ends (link_problems).

Times are epoch seconds (floats), as in the course examples. A `datetime` is accepted
anywhere a time is and converted on the way in, so the rest of the code only ever sees
seconds. Every value is validated when it is set (with the helpers of base/validation.py):
a bad one raises ValueError or TypeError naming the value and the rule it broke, rather
than surfacing later as a NaN.

Deliberately left out: scoring and ranking (scoring.py, retriever.py), computing
embeddings (embedding_helpers.py) and saving to disk (storage/sqlite_store.py).

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
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from base.validation import (
    as_float32_vector,
    as_timestamp,
    as_vector,
    check_importance,
    check_kind,
    check_memory_text,
    check_no_nul,
    check_text,
)

# --- one memory ----------------------------------------------------------------------

_REQUIRED_AFTER_INIT = ("created_at", "last_accessed", "embedding")


@dataclass(eq=False)
class Memory:
    """One entry of the memory stream.

    Inputs:
        id: unique within its store, e.g. "m1"; fixed once the memory is made (it is the
            memory's name in its store and file: make a new Memory for another id).
        text: what is remembered, e.g. "Eric prefers Groq for the default API"; at most
            MAX_TEXT_CHARS (8,000) characters. Only the embedding input is cut shorter
            (the sentence model reads 256 tokens, and the memory's metadata says so).
        kind: "episodic" (an event), "semantic" (a durable fact) or "procedural" (a skill).
        created_at: epoch seconds or datetime; defaults to last_accessed, else now.
        last_accessed: epoch seconds or datetime; defaults to created_at.
            Retrieval refreshes it, and recency is measured from it.
        importance: 1 (mundane, "brushed teeth") to 10 (core, "signed the contract").
        embedding: the vector of `text` (non-empty, finite); kept as a tuple of floats,
            each rounded to float32 (so a saved and reopened store ranks exactly alike;
            scores are still computed in float64 from these values).
        embedding_model: the model that made `embedding`, or None for hand-made vectors.
        superseded_by: id of the memory that replaced this one; retrieval skips it.
        metadata: free-form extras (e.g. {"role": "user"}).
        user_id: whose memory this is. A store holds one user's memories: a memory of
            "default" added to the store of user "alice" becomes alice's.
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
        # Validate on every assignment, not only in __init__, so that
        # `memory.last_accessed = datetime.now()` is converted to seconds too.
        if value is None and name in _REQUIRED_AFTER_INIT and "_ready" in self.__dict__:
            raise ValueError(f"memory {self.id!r}: {name} cannot be set to None")
        if name == "id":
            check_no_nul(check_text(value, "id"), "id")  # PostgreSQL text cannot hold NUL
            if "_ready" in self.__dict__ and value != self.id:
                # subtle: a store finds a memory (and its row in a file) by id; a renamed
                # memory would be saved over whichever memory has the new id
                raise ValueError(
                    f"memory {self.id!r} cannot be renamed to {value!r}: a memory's id is "
                    "its name in the store; make a new Memory with the new id instead"
                )
        elif name == "text":
            value = check_no_nul(check_memory_text(value, "text"), "text")
        elif name == "kind":
            value = check_kind(value)
        elif name in ("created_at", "last_accessed") and value is not None:
            value = as_timestamp(value, name)
        elif name == "importance":
            value = check_importance(value)
            value = int(value) if value.is_integer() else value  # show 8, not 8.0
        elif name == "embedding" and value is not None:
            value = as_float32_vector(value, "embedding")
        elif name in ("embedding_model", "superseded_by"):
            if value is not None:
                check_no_nul(check_text(value, name, "a non-empty string or None"), name)
            if name == "superseded_by" and value is not None and value == self.id:
                raise ValueError(
                    f"memory {self.id!r} cannot supersede itself: "
                    "superseded_by must name another memory"
                )
        elif name == "user_id":
            check_no_nul(check_text(value, "user_id"), "user_id")
        elif name == "metadata" and not isinstance(value, dict):
            raise TypeError(f"metadata must be a dict, got {type(value).__name__}")
        object.__setattr__(self, name, value)

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
        if self.last_accessed < self.created_at:
            # Checked here only: later, retrieval may set last_accessed to a `now` a little
            # before created_at when two clocks disagree, and recency reads that as 0 hours.
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
        return {
            "id": self.id,
            "text": self.text,
            "kind": self.kind,
            "created_at": self.created_at,
            "last_accessed": self.last_accessed,
            "importance": self.importance,
            "embedding": list(self.embedding),
            "embedding_model": self.embedding_model,
            "superseded_by": self.superseded_by,
            "metadata": dict(self.metadata),
            "user_id": self.user_id,
        }

    @classmethod
    def from_dict(cls, data: dict) -> Memory:
        """The inverse of to_dict; validates exactly as the constructor does."""
        if not isinstance(data, dict):
            raise TypeError(f"expected a dict, got {type(data).__name__}")
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown Memory field(s): {', '.join(sorted(unknown))}")
        return cls(**data)


# --- links between memories -------------------------------------------------------


def link_problems(memories: dict[str, Memory]) -> list[str]:
    """What is wrong with the links between `memories` (id -> Memory); [] when nothing.

    The rules every store keeps at every commit, and checks again when a file is opened:
      - superseded_by names a memory of the store (no dangling link);
      - following superseded_by always ends at a live memory (no cycle);
      - a consolidated fact's evidence (metadata "consolidated" and "evidence") is
        archived under it: each listed episode still stored has superseded_by = the fact;
      - a fact that replaces another (metadata "replaces") is what the old one points to.
    The last two catch a cluster or a replacement written half (a crash between steps).

        link_problems({"a": <a superseded by "b">})  -> ["memory 'a' is superseded by 'b', ..."]
    """
    problems = []
    for memory in memories.values():
        target = memory.superseded_by
        if target is not None and target not in memories:
            problems.append(
                f"memory {memory.id!r} is superseded by {target!r}, which is not stored"
            )
    walked: set[str] = set()  # ids whose chain has been followed already
    for first in memories:
        path: list[str] = []
        current: str | None = first
        while current is not None and current in memories and current not in walked:
            if current in path:  # came back round: a -> b -> a
                loop = [*path[path.index(current) :], current]
                problems.append("superseded_by links go round in a circle: " + " -> ".join(loop))
                break
            path.append(current)
            current = memories[current].superseded_by
        walked.update(path)
    for memory in memories.values():
        problems.extend(_history_problems(memories, memory))
    return problems


def _history_problems(memories: dict[str, Memory], memory: Memory) -> list[str]:
    """The evidence and replaces rules of link_problems, for one memory."""
    problems = []
    metadata = memory.metadata
    evidence = metadata.get("evidence") if "consolidated" in metadata else None
    for episode_id in evidence if isinstance(evidence, list) else ():
        episode = memories.get(episode_id) if isinstance(episode_id, str) else None
        if episode is not None and episode.superseded_by != memory.id:
            problems.append(
                f"memory {episode_id!r} is evidence of the consolidated fact {memory.id!r} "
                f"but is {_linked(episode)}, not archived under it"
            )
    replaced = metadata.get("replaces")
    old = memories.get(replaced) if isinstance(replaced, str) else None
    if old is not None and old.superseded_by != memory.id:
        problems.append(
            f"memory {memory.id!r} replaces {old.id!r}, but {old.id!r} is {_linked(old)}"
        )
    return problems


def _linked(memory: Memory) -> str:
    if memory.superseded_by is None:
        return "still live"
    return f"superseded by {memory.superseded_by!r}"


# --- the store -----------------------------------------------------------------------


class UnknownMemory(KeyError, ValueError):
    """No memory has that id in the store. A KeyError (a failed lookup, as for a dict) and
    a ValueError (a bad value given), so `except KeyError` and `except ValueError` both work."""

    def __str__(self) -> str:  # KeyError would show the message in quotes
        return str(self.args[0]) if self.args else ""


class EmbeddingModelMismatch(ValueError):
    """Vectors from two different embedding models met in one store.

    Cosine similarity between vectors of different models is meaningless, and it fails
    silently (you get numbers, just wrong ones), so the store refuses it loudly.
    """


class MemoryStore:
    """An in-memory memory stream of one user, with unique ids and one embedding model.

    store = MemoryStore()             # user "default"; model learned from the first memory
    store = MemoryStore("memorylab/hashed-bow-384", user_id="alice")   # or fixed up front

    One user per store: a memory of another user is refused (one of "default" is
    claimed by the store's user), so recall from a store can never put one person's
    memory into another person's prompt. user_id=None makes the one exception, a store
    of any users' memories (what scale.MemoryIndex keeps under its arrays, filtering per
    query); recall, the chat and the extensions refuse it once it holds two users.
    """

    def __init__(self, embedding_model: str | None = None, *, user_id: str | None = "default"):
        if embedding_model is not None and (
            not isinstance(embedding_model, str) or not embedding_model
        ):
            raise ValueError(
                f"embedding_model must be a non-empty string or None, got {embedding_model!r}"
            )
        if user_id is not None:
            check_text(user_id, "user_id", "a non-empty string (or None for any users)")
        self.user_id = user_id
        self._memories: dict[str, Memory] = {}  # insertion-ordered: the stream's order
        self.embedding_model = embedding_model
        self.dimension: int | None = None  # length of every embedding, set by the first add
        self._in_transaction = False

    def add(self, memory: Memory) -> Memory:
        """Append `memory` and return it. Refuses duplicate ids, foreign embeddings and users."""
        if not isinstance(memory, Memory):
            raise TypeError(f"MemoryStore.add expects a Memory, got {type(memory).__name__}")
        self._check_user(memory)
        if memory.id in self._memories:
            raise ValueError(f"a memory with id {memory.id!r} is already in the store")
        self.check_model(memory.embedding_model, what=f"memory {memory.id!r}")
        if self.dimension is not None and len(memory.embedding) != self.dimension:
            raise ValueError(
                f"memory {memory.id!r} has a {len(memory.embedding)}-dimensional embedding, "
                f"but this store holds {self.dimension}-dimensional ones"
            )
        if memory.superseded_by is not None and memory.superseded_by not in self._memories:
            raise ValueError(
                f"memory {memory.id!r} says it is superseded by {memory.superseded_by!r}, "
                "which is not in the store"
            )
        if not self._in_transaction:  # inside one, the links are checked when it ends
            problems = _history_problems(self._memories, memory)
            if problems:
                raise ValueError(
                    f"{problems[0]}: add a consolidated fact or a replacing fact together "
                    "with its links, inside one `with store.transaction():`"
                )
        self.embedding_model = memory.embedding_model
        self.dimension = len(memory.embedding)
        if self.user_id is not None:
            memory.user_id = self.user_id  # an unassigned ("default") memory is now this user's
        self._memories[memory.id] = memory
        return memory

    def _check_links(self, what: str) -> None:
        """Raise ValueError if the store's links break a rule of link_problems."""
        problems = link_problems(self._memories)
        if problems:
            shown = "; ".join(problems[:3]) + ("; ..." if len(problems) > 3 else "")
            raise ValueError(
                f"{what} would leave the links between memories broken: {shown}. Nothing "
                "was changed: make every step of a multi-step change inside one "
                "`with store.transaction():`"
            )

    def _check_user(self, memory: Memory) -> None:
        """Refuse a memory of a user other than this store's ("default" is claimed)."""
        if self.user_id is None or memory.user_id in ("default", self.user_id):
            return
        raise ValueError(
            f"memory {memory.id!r} belongs to user {memory.user_id!r}, but this store holds "
            f"only the memories of user {self.user_id!r}: one user per store, so add it to "
            f"a store of its own user, e.g. MemoryStore(user_id={memory.user_id!r})"
        )

    def extend(self, memories: Iterable[Memory]) -> list[Memory]:
        """Add several memories in order, e.g. a store rebuilt from `to_dict` copies.

        Unlike one `add` at a time, a memory may be superseded by one later in the batch.
        Everything is checked before anything is added: on an error the store is unchanged.
        """
        if isinstance(memories, (str, bytes, dict, Memory)) or not isinstance(memories, Iterable):
            raise TypeError(
                f"extend expects an iterable of Memory objects, got {type(memories).__name__}"
            )
        batch = list(memories)
        seen: set[str] = set()
        for memory in batch:
            if not isinstance(memory, Memory):
                raise TypeError(f"extend expects Memory objects, got {type(memory).__name__}")
            self._check_user(memory)
            if memory.id in self._memories or memory.id in seen:
                raise ValueError(f"a memory with id {memory.id!r} is already in the store")
            seen.add(memory.id)
        trial = MemoryStore(self.embedding_model, user_id=None)  # same rules, touching nothing
        trial.dimension = self.dimension
        trial._memories = dict.fromkeys(self._memories)  # ids only: enough for the checks
        links = {m.id: m.superseded_by for m in batch if m.superseded_by is not None}
        for memory in batch:
            link = links.get(memory.id)  # subtle: set lookups; a tuple of every id was O(n^2)
            if link is not None and link not in seen and link not in self._memories:
                raise ValueError(
                    f"memory {memory.id!r} says it is superseded by {links[memory.id]!r}, "
                    "which is neither in the store nor in this batch"
                )
            trial.check_model(memory.embedding_model, what=f"memory {memory.id!r}")
            if trial.dimension is not None and len(memory.embedding) != trial.dimension:
                raise ValueError(
                    f"memory {memory.id!r} has a {len(memory.embedding)}-dimensional "
                    f"embedding, but this store holds {trial.dimension}-dimensional ones"
                )
            trial.embedding_model, trial.dimension = memory.embedding_model, len(memory.embedding)
            trial._memories[memory.id] = None
        for old, new in links.items():
            if new in self._memories and self._memories[new].superseded_by is not None:
                raise ValueError(
                    f"memory {old!r} says it is superseded by {new!r}, which is itself "
                    f"superseded by {self._memories[new].superseded_by!r}"
                )
            chain = [old]
            while chain[-1] in links:  # a -> b -> ... must end, not come back round
                chain.append(links[chain[-1]])
                if chain[-1] in chain[:-1]:
                    raise ValueError(f"superseded_by links go round in a circle: {chain}")
        with self.transaction():  # a fact and its archived evidence arrive together
            for memory in batch:
                memory.superseded_by = None  # linked again below, once both ends are stored
                self.add(memory)
            waiting = Counter(links.values())  # how many links still point at each memory
            ready = [old for old in links if not waiting[old]]  # nobody waits to link to them
            while ready:  # oldest link first: a -> b before b -> c, as supersede requires
                old = ready.pop()
                new = links[old]
                self.supersede(old, new)
                waiting[new] -= 1
                if not waiting[new] and new in links:
                    ready.append(new)
        return batch

    def check_model(self, model: str | None, what: str = "the query") -> None:
        """Raise EmbeddingModelMismatch unless `model` is the model of this store.

        An empty store with no fixed model accepts any: its first memory decides.
        """
        if not self._memories and self.embedding_model is None:
            return
        if model != self.embedding_model:
            mine = self.embedding_model or "hand-made vectors (no model)"
            theirs = model or "hand-made vectors (no model)"
            raise EmbeddingModelMismatch(
                f"{what} was embedded with {theirs!r}, but this store's memories were "
                f"embedded with {mine!r}. Similarities between two models' vectors are "
                "meaningless: embed both sides with the same model."
            )

    def check_query(self, query_embedding: Any) -> tuple[float, ...]:
        """Return the query as a vector of this store's length, or raise saying which model."""
        query = as_vector(query_embedding, "query_embedding")
        if self.dimension is not None and len(query) != self.dimension:
            raise ValueError(
                f"query_embedding has {len(query)} values but the store's memories "
                f"have {self.dimension}: embed the query with the store's model "
                f"({self.embedding_model or 'hand-made vectors'})"
            )
        return query

    def get(self, memory_id: str) -> Memory:
        """The memory named `memory_id`; KeyError naming it when there is none."""
        check_text(memory_id, "memory_id", "a memory's id, a non-empty string")
        try:
            return self._memories[memory_id]
        except KeyError:
            raise UnknownMemory(f"no memory with id {memory_id!r} in the store") from None

    def supersede(self, old_id: str, new_id: str) -> None:
        """Mark `old_id` as replaced by `new_id`. Both stay stored; retrieval skips old_id.

        Both must be live: a memory replaced already is refused (re-linking it would
        silently rewrite its history), and so is a replacement that is itself replaced.
        """
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

    def reread(self, memory_id: str) -> Memory | None:
        """The memory as the store keeps it right now, or None if it is not there.

        In memory that is the memory itself; a store kept in a file (storage/sqlite_store.py)
        reads the file's current row, which another process may have changed. Multi-step
        changes call it inside their transaction to act on current rows, not a stale view.
        """
        check_text(memory_id, "memory_id", "a memory's id, a non-empty string")
        return self._memories.get(memory_id)

    def remove(self, memory_id: str) -> Memory:
        """Take a memory out of the store and return it (forgetting is deliberate).

        Refused while another memory still names it as its replacement: the history
        link `old.superseded_by` must never point at nothing.
        """
        memory = self.get(memory_id)
        citing = [m.id for m in self._memories.values() if m.superseded_by == memory_id]
        if citing:
            raise ValueError(
                f"memory {memory_id!r} replaced {', '.join(map(repr, citing))}; remove "
                "those first, or keep it so their superseded_by link stays valid"
            )
        del self._memories[memory_id]
        return memory

    # --- all or nothing ---------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[MemoryStore]:
        """Group changes so that they all happen or none does.

            with store.transaction():
                fact = embedder.remember(store, "Eric now prefers OpenAI", now=now)
                store.supersede("m1", fact.id)    # if this raises, the fact is gone too

        If the block raises, the store is put back as it was when the block began: the
        memories added are gone, the ones removed are back, and every field changed in
        place (last_accessed, superseded_by, importance, ...) has its old value. A
        transaction inside another joins it: only the outermost one decides. A store
        kept in a file (storage/sqlite_store.py) also writes the whole block as one
        transaction of the file. Before it ends, the links between memories are checked
        (link_problems): a block that would leave, say, half a cluster archived raises.
        """
        if self._in_transaction:
            yield self  # nested: the outer transaction decides
            return
        kept = self._state()
        self._in_transaction = True
        try:
            with self._write_block():
                yield self
                self._check_links("this transaction")  # inside: a refusal rolls back the file
        except BaseException:
            self._restore(kept)
            raise
        finally:
            self._in_transaction = False

    def save(self) -> int:
        """Write what changed in place to wherever the store keeps its memories.

        Returns how many memories were written. An in-memory store keeps nothing
        anywhere else, so this writes nothing and returns 0; a store kept in a file
        overrides it. Code that works on any store simply calls store.save().
        """
        return 0

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

    def check_one_user(self, what: str) -> str | None:
        """The one user whose memories this store holds; else ValueError naming the users.

        Recall, the chat, superseding, pruning and export work on one user's memories. A
        store is bound to its user_id and refuses other users' memories, so this only
        fails when a stored memory's user_id was changed in place, or for the many-user
        store of MemoryStore(user_id=None) once it holds two users (None while it is empty).

            PersistentMemoryStore(path, "alice").check_one_user("recall") -> 'alice'
        """
        if self.user_id is not None:
            stray = next((m for m in self._memories.values() if m.user_id != self.user_id), None)
            if stray is not None:
                raise ValueError(
                    f"{what} works on one user's memories, but memory {stray.id!r} of this "
                    f"store of user {self.user_id!r} now says it belongs to user "
                    f"{stray.user_id!r} (its user_id was changed in place): keep each "
                    "user's memories in that user's own store"
                )
            return self.user_id
        users = sorted({memory.user_id for memory in self._memories.values()})
        if len(users) > 1:
            shown = ", ".join(map(repr, users[:5])) + (", ..." if len(users) > 5 else "")
            raise ValueError(
                f"{what} works on one user's memories, but this store holds memories of "
                f"{len(users)} users ({shown}): give it one user's store, e.g. "
                "MemoryStore(user_id=...) or PersistentMemoryStore(path, user_id=...)"
            )
        return users[0] if users else None

    def live(self) -> Iterator[Memory]:
        """Memories that have not been superseded, in the order they were added."""
        return (m for m in self._memories.values() if m.superseded_by is None)

    def next_id(self, prefix: str = "m") -> str:
        """The first unused id of the form prefix + number, counting from len + 1."""
        check_text(prefix, "prefix", "a non-empty string (ids are prefix + number, e.g. m1)")
        n = len(self._memories) + 1
        while f"{prefix}{n}" in self._memories:
            n += 1
        return f"{prefix}{n}"

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
