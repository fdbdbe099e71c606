"""Persistence across sessions: a memory as a plain record, and back.  (Optional milestone 9.)

A memory outlives the Python process only as data a file can hold: a JSON object of
plain values. Written out and read back, it must be the same memory, exactly:

    every field               id, text, kind, created_at, last_accessed, importance,
                              embedding, embedding_model, superseded_by, metadata and
                              user_id; a field that is None (no model, not superseded)
                              is written as null, never left out
    every number exactly      JSON keeps a float's 17 significant digits: 1e6 + 1/3
                              comes back as 1000000.3333333334, not 1000000.333
    the embedding as a list   of Python floats (384 numbers for the default model),
                              not a numpy array or the store's compact vector
    nothing shared            the record's metadata is its own copy: changing one
                              never changes the memory (and the other way round)
    one user per file         a record of another user is refused on the way in

export_jsonl and import_jsonl below write and read one record a line (JSON Lines) with
your two functions; the chat's own /export (storage/sqlite_store.py) does not need them.

Deliberately left out: the SQLite and PostgreSQL stores (storage/), which keep a memory
in columns and check every row; this file is what a backup or a move between machines uses.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from base.unwritten import runs_on_learner_code
from base.validation import check_text
from memory_store import Memory, MemoryStore, check_store
from storage.sqlite_store import export_jsonl as _export_jsonl

RECORD_FIELDS = (  # every key of a record, in the order written
    "id",
    "text",
    "kind",
    "created_at",
    "last_accessed",
    "importance",
    "embedding",
    "embedding_model",
    "superseded_by",
    "metadata",
    "user_id",
)


def memory_to_record(memory: Memory) -> dict:
    """The memory as a dict of plain JSON values, one key per field of RECORD_FIELDS.

    Inputs:
        memory: a Memory.
    Returns:
        a new dict: numbers as they are (no rounding), the embedding as a list of floats,
        None fields as None, metadata as a copy the memory does not share.

    Example:
        memory_to_record(m) -> {"id": "m1", "text": "Alice likes tea", "kind": "semantic",
            "created_at": 999000.0, "last_accessed": 999500.25, "importance": 7,
            "embedding": [0.6, 0.8], "embedding_model": None, "superseded_by": None,
            "metadata": {}, "user_id": "alice"}
    """
    if not isinstance(memory, Memory):
        raise TypeError(f"memory must be a Memory, got {type(memory).__name__}")
    # TODO: optional Milestone 9, part 1. `memory` is a Memory. Return a new dict with one
    # key per name in RECORD_FIELDS, each the memory's value of that field. Two fields
    # need care: the embedding is held compactly (iterate it, or list() it, to get plain
    # floats), and metadata is a dict the memory owns (give the record its own deep copy).
    # Pitfalls: do not round or format numbers; keep None fields as None.
    ### BEGIN SOLUTION
    record = {name: getattr(memory, name) for name in RECORD_FIELDS}
    record["embedding"] = [float(x) for x in memory.embedding]
    record["metadata"] = copy.deepcopy(memory.metadata)
    return record
    ### END SOLUTION


def memory_from_record(record: dict, user_id: str) -> Memory:
    """The Memory a record describes, for the store of `user_id`, or a clear error.

    Inputs:
        record: a dict as memory_to_record writes it (read back from JSON).
        user_id: the user whose store it goes into.
    Returns:
        a new Memory equal, field by field, to the one the record was made from.
    Raises:
        ValueError naming the field, when a field of RECORD_FIELDS is missing or the record
        has one more; ValueError naming both users, when record["user_id"] is not user_id;
        the Memory's own ValueError/TypeError, naming the field, for a value of the wrong
        type or range (Memory checks every field as it is set).

    Example:
        memory_from_record({"id": "m1", ..., "user_id": "alice"}, "alice") -> Memory(id='m1', ...)
        memory_from_record({..., "user_id": "bob"}, "alice") -> ValueError: ... 'bob' ... 'alice'
    """
    if not isinstance(record, dict):
        raise TypeError(f"a record must be a dict, got {type(record).__name__}")
    user_id = check_text(user_id, "user_id")
    # TODO: optional Milestone 9, part 2. `record` is a dict and `user_id` a non-empty
    # string now. Refuse (ValueError) a record that lacks a field of RECORD_FIELDS or has
    # one more, naming the field, and a record of another user, naming both users. Then
    # build the Memory from the record's values: Memory itself checks each value. Two
    # pitfalls: a memory may have been recalled a moment before its created_at (two
    # clocks), which the constructor refuses but assigning last_accessed afterwards
    # accepts; and the memory's metadata must be its own copy, not the record's dict.
    ### BEGIN SOLUTION
    missing = [name for name in RECORD_FIELDS if name not in record]
    extra = sorted(set(record) - set(RECORD_FIELDS), key=str)
    problem = None
    if missing:
        problem = f"the record lacks field(s) {', '.join(missing)}: every field is needed"
    elif extra:
        problem = f"the record has unknown field(s) {', '.join(map(str, extra))}"
    elif record["user_id"] != user_id:
        owner = record["user_id"]
        problem = f"the record of memory {record['id']!r} belongs to user {owner!r}, "
        problem += f"not {user_id!r}: a store holds one user's memories"
    if problem is not None:
        raise ValueError(problem)
    values = {name: record[name] for name in RECORD_FIELDS if name != "last_accessed"}
    values["metadata"] = copy.deepcopy(record["metadata"])
    restored = Memory(**{**values, "last_accessed": record["created_at"]})
    restored.last_accessed = record["last_accessed"]  # may be a moment before created_at
    return restored
    ### END SOLUTION


@runs_on_learner_code
def export_jsonl(store: MemoryStore, target) -> int:
    """Write every memory of a one-user store, one memory_to_record per line; the count.

    target: a file path (written to a temporary file, then renamed into place, so a
    failure leaves no half file) or an open text file.
    """
    return _export_jsonl(store, target, to_record=memory_to_record)


@runs_on_learner_code
def import_jsonl(store: MemoryStore, source) -> int:
    """Add every record of a JSON Lines file to `store`, all or none; returns the count.

    source: a file path or an open text file. Every line is read and turned into a
    Memory (memory_from_record, for the store's user) before the store changes; a bad
    line is refused naming its number, and nothing is added.
    """
    store = check_store(store)
    user_id = store.check_one_user("import") or store.user_id
    if user_id is None:
        raise ValueError("import works on one user's store: give MemoryStore(user_id=...)")
    if isinstance(source, (str, Path)):
        with open(source, encoding="utf-8") as file:
            return import_jsonl(store, file)
    if not callable(getattr(source, "read", None)):
        raise TypeError(
            f"source must be a file path or an open text file, got {type(source).__name__}"
        )
    memories = []
    for number, line in enumerate(source.read().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            memories.append(memory_from_record(json.loads(line), user_id))
        except NotImplementedError:
            raise
        except (TypeError, ValueError) as exc:  # json.JSONDecodeError is a ValueError
            raise ValueError(f"line {number}: {exc}; nothing was imported") from None
    links = {m.id: m.superseded_by for m in memories if m.superseded_by is not None}
    with store.transaction():  # every memory, or none
        for memory in memories:
            memory.superseded_by = None  # linked below, once the memory it names is in
            store.add(memory)
        for old_id, new_id in links.items():
            store.supersede(old_id, new_id)  # the store checks every link
    return len(memories)
