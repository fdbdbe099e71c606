"""The SQLite shortlist's arrays saved in the store file (scale/sqlite_matrix_file.py).

A new store object must read them instead of every row, see every write made since by any
connection (the triggers' change log), refuse them when damaged or of another file, and
still return exactly what retrieve returns over the whole store.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from test_sqlite_retrieval import memories, needs_vectorised, play, scripts

from conftest import NOW
from memory_store import Memory
from retriever import retrieve
from scale import sqlite_matrix_file as matrix_file
from scale.sqlite_retrieval import FileMatrix, recall, shortlist_ids
from storage.sqlite_store import PersistentMemoryStore

CODE = Path(__file__).resolve().parents[2] / "code"
pytestmark = needs_vectorised


@pytest.fixture
def small_blocks(monkeypatch):
    """Arrays saved from the first memory on, three rows a block, saved again often."""
    monkeypatch.setattr(matrix_file, "SAVE_FROM", 1)
    monkeypatch.setattr(matrix_file, "BLOCK", 3)
    monkeypatch.setattr(matrix_file, "REWRITE_AFTER", 4)


def whole_store_top(path, query, now, k, user="u"):
    other = PersistentMemoryStore(path, user)
    try:
        return [m.id for m in retrieve(other, query, now=now, k=k)]
    finally:
        other._db.close()


def no_reading_every_row(monkeypatch):
    """From here on, building the arrays from every row (or re-reading them all) fails."""

    def refused(*args):
        raise AssertionError("every row was read")

    monkeypatch.setattr(FileMatrix, "rebuild", refused)
    monkeypatch.setattr(FileMatrix, "_follow", refused)


QUERY = [*np.full(8, 0.3), *np.eye(40)[5]]


@pytest.fixture
def saved(tmp_path, small_blocks):
    """A store file of 50 memories whose arrays have been saved by a first recall."""
    path = tmp_path / "store.sqlite3"
    with PersistentMemoryStore(path, "u") as store:
        store.extend(memories(50))
        recall(store, QUERY, NOW, k=3)
    db = sqlite3.connect(path)
    parts = db.execute("SELECT count(*) FROM matrix_blocks WHERE user_id = 'u'").fetchone()[0]
    db.close()
    assert parts == 1 + 17  # the header and ceil(50 / 3) blocks
    return path


def test_a_new_store_object_reads_the_saved_arrays_not_every_row(saved, monkeypatch):
    want = whole_store_top(saved, QUERY, NOW + 1, 3)
    no_reading_every_row(monkeypatch)
    with PersistentMemoryStore(saved, "u") as store:
        assert [m.id for m in recall(store, QUERY, NOW + 1, k=3)] == want
        assert len(shortlist_ids(store, QUERY, NOW + 1, k=3)) < 50


def test_what_another_connection_writes_after_a_save_is_in_the_next_load(saved, monkeypatch):
    with PersistentMemoryStore(saved, "u") as other:  # any writer: the triggers log it
        other.add(Memory("news", "news", created_at=NOW, importance=10, embedding=QUERY))
        other.supersede("m3", "news")
        moved = other.get("m9")
        moved.embedding = [*np.full(8, -1.0), *np.eye(40)[39]]
        other.get("m10").last_accessed = NOW + 5
        other.remove("m11")
        other.save()
    no_reading_every_row(monkeypatch)
    with PersistentMemoryStore(saved, "u") as store:
        ids = shortlist_ids(store, [*np.full(8, -1.0), *np.eye(40)[39]], NOW + 9, k=50)
        assert "m3" not in ids and "m11" not in ids and {"news", "m9"} <= set(ids)
        for query in (QUERY, [*np.full(8, -1.0), *np.eye(40)[39]]):
            want = whole_store_top(saved, query, NOW + 9, 2)
            assert [m.id for m in recall(store, query, NOW + 9, k=2)] == want


def test_a_store_object_follows_another_process_through_the_log(saved, monkeypatch):
    with PersistentMemoryStore(saved, "u") as store:
        recall(store, QUERY, NOW, k=1)  # loaded, in step
        script = textwrap.dedent(
            f"""
            import sys
            sys.path.insert(0, {str(CODE)!r})
            from memory_store import Memory
            from storage.sqlite_store import PersistentMemoryStore
            with PersistentMemoryStore({str(saved)!r}, "u") as other:
                other.add(Memory("theirs", "t", created_at={NOW}, importance=10,
                                 embedding={[-1.0] * 8 + [0.0] * 39 + [1.0]!r}))
                other.supersede("m5", "theirs")
            """
        )
        subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
        no_reading_every_row(monkeypatch)
        query = [*np.full(8, -1.0), *np.eye(40)[39]]
        assert [m.id for m in recall(store, query, NOW, k=1)] == ["theirs"]
        assert "m5" not in shortlist_ids(store, QUERY, NOW, k=60)


def damage(path, where: str) -> None:
    db = sqlite3.connect(path)
    if where == "block":
        (blob,) = db.execute("SELECT data FROM matrix_blocks WHERE part = 4").fetchone()
        blob = bytearray(blob)
        blob[-7] ^= 0x40  # one bit of a vector's value
        db.execute("UPDATE matrix_blocks SET data = ? WHERE part = 4", (bytes(blob),))
    elif where == "missing block":
        db.execute("DELETE FROM matrix_blocks WHERE part = 2")
    elif where == "header":
        db.execute("UPDATE matrix_blocks SET data = x'7b7d' WHERE part = 0")
    db.commit()
    db.close()


@pytest.mark.parametrize("where", ["block", "missing block", "header"])
def test_damaged_saved_arrays_are_built_again_from_the_rows(saved, monkeypatch, where):
    damage(saved, where)
    built = []
    real = FileMatrix.rebuild
    monkeypatch.setattr(FileMatrix, "rebuild", lambda m: built.append(1) or real(m))
    with PersistentMemoryStore(saved, "u") as store:
        for query in (QUERY, [*np.full(8, -1.0), *np.eye(40)[39]]):
            want = whole_store_top(saved, query, NOW, 3)
            assert [m.id for m in recall(store, query, NOW, k=3)] == want
    assert built == [1]
    no_reading_every_row(monkeypatch)  # and saved again, sound
    with PersistentMemoryStore(saved, "u") as store:
        recall(store, QUERY, NOW, k=3)


def test_arrays_saved_under_another_file_identity_are_not_used(saved):
    with PersistentMemoryStore(saved, "u") as store:
        assert matrix_file.load(_bare(store))
        store._identity = "another"  # as a copy of the file under a new identity reads
        assert not matrix_file.load(_bare(store))


def _bare(store) -> FileMatrix:
    matrix = FileMatrix.__new__(FileMatrix)
    matrix.store, matrix.stamp, matrix.dimension = store, None, store.dimension
    matrix.upto, matrix.loaded_changes = None, 0
    return matrix


def test_no_save_while_another_process_holds_the_write_lock(tmp_path, small_blocks):
    path = tmp_path / "store.sqlite3"
    with PersistentMemoryStore(path, "u") as store:
        store.extend(memories(20))
    with PersistentMemoryStore(path, "u") as store:
        blocker = sqlite3.connect(path, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")
        try:
            FileMatrix(store)  # built from the rows; its save could not get the lock at once
            assert matrix_file.saved_upto(store) is None
            assert shortlist_ids(store, QUERY, NOW, k=3)
            assert store._db.execute("PRAGMA busy_timeout").fetchone()[0] == 10_000
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()


def test_no_save_of_arrays_the_file_has_moved_past(tmp_path, small_blocks):
    path = tmp_path / "store.sqlite3"
    with PersistentMemoryStore(path, "u") as store:
        store.extend(memories(20))
        matrix = FileMatrix(store)
        with PersistentMemoryStore(path, "u") as other:
            other.add(Memory("late", "late", created_at=NOW, embedding=QUERY))
        assert not matrix_file.save(matrix)  # the arrays lack "late"
        matrix.in_step()
        assert matrix_file.save(matrix)
        assert "late" in matrix.ids


def test_other_users_rows_are_neither_logged_nor_saved_with_these(saved, monkeypatch):
    with PersistentMemoryStore(saved, "v") as neighbour:
        neighbour.extend(memories(10, seed=3))  # v has no saved arrays: nothing logged
    db = sqlite3.connect(saved)
    assert db.execute("SELECT count(*) FROM matrix_changes WHERE user_id = 'v'").fetchone() == (0,)
    db.close()
    no_reading_every_row(monkeypatch)
    with PersistentMemoryStore(saved, "u") as store:
        ids = shortlist_ids(store, QUERY, NOW, k=50)
        assert len(ids) == 50 and all(store.get(i).text.startswith("note") for i in ids)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
          HealthCheck.function_scoped_fixture])  # fmt: skip
@given(scripts())
def test_saved_arrays_reopened_at_any_step_rank_as_retrieve_does(
    tmp_path_factory, small_blocks, script
):
    play(script, tmp_path_factory.mktemp("s") / "store.sqlite3", reopen=True)


def test_a_saved_file_stays_readable_by_the_store_without_the_shortlist(saved):
    with PersistentMemoryStore(saved, "u") as store:  # the tables are extra, nothing else
        assert len(store) == 50
    db = sqlite3.connect(saved)
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    db.close()


def test_a_save_by_a_third_store_object_between_two_looks_is_noticed(saved, monkeypatch):
    monkeypatch.setattr(matrix_file, "REWRITE_AFTER", 1)
    far = [*np.full(8, -1.0), *np.eye(40)[39]]
    with PersistentMemoryStore(saved, "u") as ours:
        recall(ours, QUERY, NOW, k=1)  # loaded, in step at the log's end
        with PersistentMemoryStore(saved, "u") as other:
            other.add(Memory("first", "x", created_at=NOW, importance=10, embedding=far))
        with PersistentMemoryStore(saved, "u") as third:
            recall(third, QUERY, NOW, k=1)  # loads "first" from the log, saves, drops the log
        with PersistentMemoryStore(saved, "u") as other:
            other.add(Memory("second", "y", created_at=NOW, importance=1, embedding=QUERY))
        ids = shortlist_ids(ours, far, NOW, k=60)
        assert {"first", "second"} <= set(ids)
        assert [m.id for m in recall(ours, far, NOW, k=1)] == ["first"]


def test_a_long_lived_store_object_saves_again_so_the_log_stays_short(saved):
    def logged() -> int:
        db = sqlite3.connect(saved)
        try:
            return db.execute("SELECT count(*) FROM matrix_changes").fetchone()[0]
        finally:
            db.close()

    with PersistentMemoryStore(saved, "u") as store:
        recall(store, QUERY, NOW, k=1)
        for i in range(6):  # each touch and add is logged: REWRITE_AFTER is 4 here
            store.add(Memory(f"late{i}", "late", created_at=NOW, embedding=QUERY))
            recall(store, QUERY, NOW + i, k=1)
        assert logged() < 4
        assert [m.id for m in recall(store, QUERY, NOW + 9, k=1)] == whole_store_top(
            saved, QUERY, NOW + 9, 1
        )
