"""The SQLite shortlist: the learner's retrieve over the whole store, exactly, at matrix speed.

A recall on a PersistentMemoryStore through scale/sqlite_retrieval.py must return what
retrieve returns over the whole store (ties included), persist the same refreshes, and see
what other store objects and other processes wrote to the file since it last looked.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import scoring
from base.unwritten import NotWrittenYet
from conftest import DAY, HOUR, NOW
from memory_store import Memory, MemoryStore
from retriever import retrieve
from scale import sqlite_retrieval
from scale.sqlite_retrieval import recall, shortlist, shortlist_ids
from storage.sqlite_store import PersistentMemoryStore

CODE = Path(__file__).resolve().parents[2] / "code"

# few distinct values, so that equal vectors, times and importances (ties) are common
VALUE = st.sampled_from([0.0, 0.0, 1.0, -1.0, 0.5, 0.25, 3.0, 1e-3])
TIME = st.sampled_from([NOW, NOW - HOUR, NOW - DAY, NOW - 10 * DAY, 0.0])
IMPORTANCE = st.sampled_from([1, 5, 5.5, 10])
WEIGHTS = st.sampled_from([(1.0, 1.0, 1.0), (2.0, 0.5, 0.0), (0.0, 1.0, 1.0)])


def copy_of(memory: Memory) -> Memory:
    return Memory.from_dict(memory.to_dict())


def file_view(path, user="u") -> dict[str, tuple]:
    """{id: (last_accessed, superseded_by)} as a new store object reads the file."""
    other = PersistentMemoryStore(path, user)
    try:
        return {m.id: (m.last_accessed, m.superseded_by) for m in other}
    finally:
        other._db.close()  # not close(): that would save


@st.composite
def scripts(draw):
    dim = draw(st.integers(1, 6))
    vector = st.lists(VALUE, min_size=dim, max_size=dim)
    memory = st.builds(
        lambda v, t, imp: (v, t, imp), vector, TIME, IMPORTANCE
    )  # a memory's (embedding, last_accessed, importance)
    start = draw(st.lists(memory, min_size=1, max_size=12))
    steps = draw(
        st.lists(
            st.one_of(
                st.tuples(
                    st.just("recall"),
                    vector,
                    st.integers(1, 5),
                    WEIGHTS,
                    st.sampled_from([0.995, 0.5, 1.0]),
                ),
                st.tuples(st.just("add"), memory, st.booleans()),  # by us, or by another
                st.tuples(st.just("remove"), st.integers(0, 40), st.booleans()),
                st.tuples(st.just("supersede"), st.integers(0, 40), st.booleans()),
                st.tuples(st.just("touch"), st.integers(0, 40), TIME),  # another, saved
            ),
            min_size=1,
            max_size=10,
        )
    )
    return start, steps


def made(i: int, fields) -> Memory:
    vector, last, importance = fields
    return Memory(f"m{i}", f"note {i}", created_at=0.0, last_accessed=last,
                  importance=importance, embedding=vector)  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
          HealthCheck.function_scoped_fixture])  # fmt: skip
@given(scripts())
def test_recall_on_the_shortlist_is_retrieve_over_the_whole_store(tmp_path_factory, script):
    play(script, tmp_path_factory.mktemp("s") / "store.sqlite3")


def play(script, path, reopen: bool = False) -> None:
    """Run a script's steps on two store objects of one file (ours recalls; theirs, another
    connection, writes too) beside an in-memory mirror: every recall must be the mirror's
    retrieve, and the file must hold the mirror's refreshes. With `reopen`, ours is a new
    store object after every recall (it reads what the last one left in the file)."""
    start, steps = script
    ours, theirs = PersistentMemoryStore(path, "u"), PersistentMemoryStore(path, "u")
    mirror = MemoryStore(user_id="u")  # what retrieve over the whole store reads
    memories = [made(i, fields) for i, fields in enumerate(start)]
    ours.extend(memories)
    mirror.extend([copy_of(m) for m in memories])
    count = len(memories)
    for i, step in enumerate(steps):
        now = NOW + i
        live = [m.id for m in mirror if m.superseded_by is None]
        if step[0] == "recall":
            _, query, k, weights, decay = step
            want = retrieve(mirror, query, now=now, k=k, weights=weights, decay_rate=decay)
            got = recall(ours, query, now, k=k, weights=weights, decay_rate=decay)
            assert [m.id for m in got] == [m.id for m in want]
            assert file_view(path) == {m.id: (m.last_accessed, m.superseded_by) for m in mirror}
            if reopen:
                ours.close()
                ours = PersistentMemoryStore(path, "u")
        elif step[0] == "add":
            memory = made(count, step[1])
            count += 1
            (ours if step[2] else theirs).add(memory)
            mirror.add(copy_of(memory))
        elif step[0] == "remove" and live:
            memory_id = live[step[1] % len(live)]
            if any(m.superseded_by == memory_id for m in mirror):
                continue  # refused by every store: the link would break
            (ours if step[2] else theirs).remove(memory_id)
            mirror.remove(memory_id)
        elif step[0] == "supersede" and len(live) > 1:
            old = live[step[1] % len(live)]
            new = live[(step[1] + 1) % len(live)]
            (ours if step[2] else theirs).supersede(old, new)
            mirror.supersede(old, new)
        elif step[0] == "touch" and live:
            memory_id = live[step[1] % len(live)]
            theirs.get(memory_id).last_accessed = step[2]
            theirs.save()
            mirror.get(memory_id).last_accessed = step[2]
    theirs.close()
    ours.close()


def vectorised_written() -> bool:
    """Whether the learner's retrieval_scores (notebook 09's exercise) is written yet."""
    try:
        scoring.retrieval_scores(np.zeros(1), NOW, np.full(1, NOW), np.ones(1))
    except NotImplementedError:
        return False
    return True


# the shortlist stands on the learner's vectorised score; before it, recall falls back
# to retrieve over the whole store (tested below), and these wait
needs_vectorised = pytest.mark.skipif(
    not vectorised_written(),
    reason="waits for you: retrieval_scores is not implemented yet (code/scoring.py, "
    "notebook 09's exercise)",
)


def memories(n: int, seed: int = 7) -> list[Memory]:
    """n memories of 8 dense numbers and one word of 40 (mostly zero: the sparse half)."""
    rng = np.random.default_rng(seed)
    words = np.zeros((n, 40))
    words[np.arange(n), rng.integers(0, 40, n)] = 1.0
    dense = rng.normal(size=(n, 8))
    return [
        Memory(
            f"m{i}",
            f"note {i}",
            created_at=NOW - i * HOUR,
            importance=1 + i % 10,
            embedding=[*dense[i], *words[i]],
        )
        for i in range(n)
    ]


@pytest.fixture
def store(tmp_path):
    store = PersistentMemoryStore(tmp_path / "store.sqlite3", "u")
    store.extend(memories(300))
    yield store
    store.close()


@needs_vectorised
def test_the_shortlist_is_a_few_memories_and_the_arrays_keep_the_word_half_sparse(store):
    query = [*np.ones(8), *np.eye(40)[3]]
    ids = shortlist_ids(store, query, NOW, k=3)
    assert 3 <= len(ids) < 20
    matrix = sqlite_retrieval.matrix_of(store)
    assert matrix.dense.shape == (300, 8) and matrix.dense.dtype == np.float32
    assert len(matrix.sp_vals) == 300  # one word each, not 40 numbers each


@needs_vectorised
def test_an_unsaved_touch_in_this_process_is_ranked_as_iterating_the_store_shows_it(store):
    query, weights = [*np.ones(8), *np.eye(40)[3]], (0.0, 1.0, 1.0)  # recency and importance
    assert shortlist_ids(store, query, NOW, k=1, weights=weights) == ["m9"]  # built now
    store.get("m299").last_accessed = NOW  # in place, not saved (importance 10, 299 h old)
    assert [m.id for m in store if m.last_accessed == NOW] == ["m0", "m299"]
    got = recall(store, query, NOW, k=1, weights=weights)
    assert [m.id for m in got] == ["m299"]
    assert [m.id for m in retrieve(store, query, now=NOW, k=1, weights=weights)] == ["m299"]


def test_while_retrieval_scores_is_not_written_the_whole_store_is_ranked(store, monkeypatch):
    def unwritten(*args, **kwargs):
        raise NotWrittenYet("retrieval_scores")

    monkeypatch.setattr(scoring, "retrieval_scores", unwritten)
    query = [*np.ones(8), *np.eye(40)[3]]
    assert shortlist(store, query, NOW, k=3) is None
    other = PersistentMemoryStore(store.path, "u")
    want = [m.id for m in retrieve(other, query, now=NOW, k=3)]
    other._db.close()
    assert [m.id for m in recall(store, query, NOW, k=3)] == want  # the learner's loop
    assert {m.id for m in store if m.last_accessed == NOW} >= set(want)


@needs_vectorised
def test_a_memory_another_process_writes_is_seen_without_reopening(store):
    query = [*np.full(8, -1.0), *np.eye(40)[39]]
    assert shortlist_ids(store, query, NOW, k=1)  # the arrays are built now
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(CODE)!r})
        from memory_store import Memory
        from storage.sqlite_store import PersistentMemoryStore
        with PersistentMemoryStore({str(store.path)!r}, "u") as other:
            other.add(Memory("news", "new", created_at={NOW}, importance=10,
                             embedding={[-1.0] * 8 + [0.0] * 39 + [1.0]!r}))
            other.supersede("m5", "news")
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    got = recall(store, query, NOW, k=1)
    assert [m.id for m in got] == ["news"]
    assert "m5" not in shortlist_ids(store, [*np.ones(8), *np.zeros(40)], NOW, k=300)


def whole_store_top(path, query, now, k):
    """The ids retrieve returns over a new store object of the file (nothing saved)."""
    other = PersistentMemoryStore(path, "u")
    try:
        return [m.id for m in retrieve(other, query, now=now, k=k)]
    finally:
        other._db.close()


@needs_vectorised
def test_this_store_objects_own_writes_are_followed_by_reading_only_their_rows(store, monkeypatch):
    query = [*np.zeros(8), *np.eye(40)[39]]
    recall(store, query, NOW, k=2)  # the arrays are built now
    read_all = []
    monkeypatch.setattr(
        sqlite_retrieval.FileMatrix, "_follow", lambda matrix: read_all.append(1)
    )  # every step below is followed by reading the rows this store object wrote
    moved = store.get("m7")
    moved.embedding = [*np.zeros(8), *np.eye(40)[39] * 3]  # saved: now the best match
    store.save()
    assert [m.id for m in recall(store, query, NOW, k=1)] == ["m7"]
    store.supersede("m7", "m8")  # no longer live
    assert "m7" not in shortlist_ids(store, query, NOW, k=300)
    store.get("m9").importance = 10
    store.save()
    for k in (1, 3):
        want = whole_store_top(store.path, query, NOW, k)  # before recall refreshes them
        assert [m.id for m in recall(store, query, NOW, k=k)] == want
    assert read_all == []
    store.remove("m11")  # a row gone: every row is read again
    monkeypatch.undo()
    assert "m11" not in shortlist_ids(store, query, NOW, k=300)
    store.add(Memory("new", "new", created_at=NOW, importance=10, embedding=query))
    assert [m.id for m in recall(store, query, NOW, k=1)] == ["new"]
