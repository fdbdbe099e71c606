"""Property tests: any sequence of changes to a PersistentMemoryStore, reopened, is what a
simple model of the rules says, and the extensions never leave the links broken.

The model is a dict of id -> superseded_by with the rules written out plainly: supersede
needs two different live memories, remove refuses a memory another one names. Hypothesis
draws sequences of add / supersede / remove / touch / a transaction that fails halfway,
applies each to the file-backed store and to the model, and checks that both accept or
refuse the same calls and that the reopened file holds exactly the model's memories.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from base.links import link_problems
from conftest import DAY, NOW
from embedding_helpers import Embedder
from extensions.consolidation import consolidate
from extensions.forgetting import prune
from extensions.superseding import replace_fact
from memory_store import Memory, MemoryStore
from storage.sqlite_store import PersistentMemoryStore

IDS = [f"m{i}" for i in range(1, 7)]
EMBEDDER = Embedder("memorylab/hashed-bow-384")

operations = st.lists(
    st.one_of(
        st.tuples(
            st.just("add"), st.sampled_from(IDS), st.one_of(st.just(0.0), st.floats(1e-30, 1.0))
        ),
        st.tuples(st.just("supersede"), st.sampled_from(IDS), st.sampled_from(IDS)),
        st.tuples(st.just("remove"), st.sampled_from(IDS)),
        st.tuples(st.just("touch"), st.sampled_from(IDS), st.floats(0.0, 10.0)),
        st.tuples(st.just("failed transaction"), st.sampled_from(IDS), st.sampled_from(IDS)),
    ),
    max_size=14,
)


class Model:
    """The rules, written out plainly: id -> [superseded_by, last_accessed, x]."""

    def __init__(self):
        self.rows: dict[str, list] = {}

    def add(self, memory_id, x):
        if memory_id in self.rows:
            raise ValueError
        self.rows[memory_id] = [None, NOW - DAY, x]

    def supersede(self, old, new):
        if old not in self.rows or new not in self.rows:
            raise ValueError
        if old == new or self.rows[old][0] is not None or self.rows[new][0] is not None:
            raise ValueError
        self.rows[old][0] = new

    def remove(self, memory_id):
        if memory_id not in self.rows or any(r[0] == memory_id for r in self.rows.values()):
            raise ValueError
        del self.rows[memory_id]

    def touch(self, memory_id, hours):
        if memory_id not in self.rows:
            raise ValueError
        self.rows[memory_id][1] = NOW + hours * 3600


def apply(store: MemoryStore, operation) -> None:
    name, *args = operation
    if name == "add":
        memory_id, x = args
        store.add(Memory(memory_id, "a note", created_at=NOW - DAY, embedding=[1.0, x]))
    elif name == "supersede":
        store.supersede(*args)
    elif name == "remove":
        store.remove(args[0])
    elif name == "touch":
        memory_id, hours = args
        store.get(memory_id).last_accessed = NOW + hours * 3600
        store.save()
    else:  # a transaction whose second step fails: nothing of it may remain
        old, new = args
        with store.transaction():
            store.add(Memory("tmp", "transient", created_at=NOW, embedding=[0.0, 1.0]))
            store.supersede(old, new)
            raise ValueError("the second step failed")


def apply_to_model(model: Model, operation) -> None:
    name, *args = operation
    if name == "failed transaction":
        raise ValueError
    getattr(model, name)(*args)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations)
def test_any_sequence_of_changes_reopens_as_the_model_says(ops):
    model = Model()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "p.sqlite3"
        store = PersistentMemoryStore(path)
        for operation in ops:
            try:
                apply_to_model(model, operation)
                expected = None
            except (KeyError, ValueError) as exc:
                expected = exc
            try:
                apply(store, operation)
                refused = False
            except (KeyError, ValueError):
                refused = True
            assert refused == (expected is not None), operation
            assert view(store) == expected_view(model), operation  # the store's own view too
        store.close()
        with PersistentMemoryStore(path) as reopened:
            assert view(reopened) == expected_view(model)
            assert link_problems({m.id: m for m in reopened}) == []


def view(store) -> dict:
    return {m.id: [m.superseded_by, m.last_accessed, m.embedding[1]] for m in store}


def expected_view(model: Model) -> dict:
    return {i: [sup, last, _float32(x)] for i, (sup, last, x) in model.rows.items()}


def _float32(x: float) -> float:
    return Memory("x", "x", embedding=[x]).embedding[0]


POOL = [
    "debugged the connection pool leak in the billing API",
    "the connection pool leaked again after the deploy",
    "restarted the billing API because the connection pool was exhausted",
    "connection pool leak: raised the pool size as a stopgap",
    "found the connection pool leak: sessions never closed in the billing API",
    "Eric prefers Groq for the default API",
    "brushed teeth",
]

steps = st.lists(
    st.one_of(
        st.tuples(st.just("remember"), st.sampled_from(POOL), st.integers(0, 400)),
        st.tuples(st.just("replace"), st.integers(1, 12)),
        st.tuples(st.just("consolidate"), st.integers(2, 5)),
        st.tuples(st.just("prune"), st.integers(0, 200)),
    ),
    max_size=12,
)


def run_step(store, step) -> None:
    name, arg = step[0], step[-1]
    if name == "remember":
        text, days = step[1], step[2]
        kind = "semantic" if text.startswith("Eric") else "episodic"
        EMBEDDER.remember(store, text, kind=kind, importance=2, now=NOW - days * DAY)
    elif name == "replace":
        memories = list(store)  # by position: the two stores may name it differently
        target = memories[arg - 1].id if arg <= len(memories) else "missing"
        replace_fact(store, EMBEDDER, target, "Eric now prefers OpenAI for the API", NOW)
    elif name == "consolidate":
        consolidate(store, EMBEDDER, NOW, min_size=arg)
    else:
        prune(store, NOW, older_than_days=arg)


def normalised(store) -> list[dict]:
    """The store with ids replaced by positions: a file never reuses a pruned memory's id
    (its counter only grows), an in-memory store may, and that is the one allowed difference."""
    position = {m.id: i for i, m in enumerate(store)}

    def rename(value):
        if isinstance(value, str):
            return position.get(value, value)
        if isinstance(value, list):
            return [rename(v) for v in value]
        return value

    rows = []
    for memory in store:
        row = memory.to_dict()
        row["id"] = position[memory.id]
        row["superseded_by"] = rename(row["superseded_by"])
        row["metadata"] = {
            k: rename(v) if k in ("evidence", "replaces") else v for k, v in row["metadata"].items()
        }
        rows.append(row)
    return rows


@pytest.mark.needs_milestones(5)  # reaches the learner's retriever
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps)
def test_the_extensions_on_a_file_match_them_in_memory_and_never_break_a_link(script):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "e.sqlite3"
        in_memory, on_file = MemoryStore(), PersistentMemoryStore(path)
        for step in script:
            outcomes = []
            for store in (in_memory, on_file):
                try:
                    run_step(store, step)
                    outcomes.append(None)
                except (KeyError, ValueError) as exc:
                    outcomes.append(type(exc))
            assert outcomes[0] == outcomes[1], step  # the same call is refused by both or none
            assert link_problems({m.id: m for m in in_memory}) == []
        on_file.close()
        with PersistentMemoryStore(path) as reopened:
            assert normalised(reopened) == normalised(in_memory)
            assert link_problems({m.id: m for m in reopened}) == []
            for memory in reopened:  # never two live versions of one replaced fact
                if "replaces" in memory.metadata and memory.metadata["replaces"] in reopened:
                    assert reopened.get(memory.metadata["replaces"]).superseded_by == memory.id
