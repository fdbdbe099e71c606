"""Schema 2 of the store file: checksums, float32 vectors, file identity, schema 1 migrated.

tests/storage/data/store-schema-1.sqlite3 was written by the schema-1 code (see
make_store_schema_1.py beside it), so the migration is tested on a real old file.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from base.validation import as_float32_vector
from conftest import NOW
from memory_store import Memory
from storage import sqlite_file
from storage.sqlite_schema import SCHEMA_VERSION
from storage.sqlite_store import PersistentMemoryStore, StoreFileError, list_users

SCHEMA_1 = Path(__file__).parent / "data" / "store-schema-1.sqlite3"


@pytest.fixture
def old_file(tmp_path) -> Path:
    path = tmp_path / "memory_lab.sqlite3"
    shutil.copy(SCHEMA_1, path)
    return path


def version(path: Path) -> int:
    db = sqlite3.connect(path)
    try:
        return db.execute("PRAGMA user_version").fetchone()[0]
    finally:
        db.close()


ALICE_1 = [  # what the schema-1 code stored (make_store_schema_1.py)
    {
        "id": "m1",
        "text": "Alice prefers Groq",
        "kind": "semantic",
        "created_at": NOW - 86400,
        "last_accessed": NOW - 86400,
        "importance": 8,
        "embedding": [0.5, -0.25, 1.0],
        "embedding_model": "hand-rolled",
        "superseded_by": "m2",
        "metadata": {"role": "user", "tags": ["é"]},
        "user_id": "alice",
    },
    {
        "id": "m2",
        "text": "Alice now prefers Ollama",
        "kind": "episodic",
        "created_at": NOW - 3600,
        "last_accessed": NOW - 60,
        "importance": 6.5,
        # not float32-exact: the file keeps the float64s, and the Memory made from them
        # is rounded to float32 like every other (the tiny value becomes -0.0)
        "embedding": list(as_float32_vector([0.1, 1 / 3, -2.5e-300])),
        "embedding_model": "hand-rolled",
        "superseded_by": None,
        "metadata": {},
        "user_id": "alice",
    },
]


def test_a_schema_1_file_is_migrated_on_open_with_every_field_and_counter_kept(old_file):
    assert version(old_file) == 1 and list_users(old_file) == ["alice", "bob"]
    with PersistentMemoryStore(old_file, "alice") as alice:
        assert [m.to_dict() for m in alice] == ALICE_1
        assert alice.next_id() == "m4"  # the schema-1 counter had handed out m3
    assert version(old_file) == SCHEMA_VERSION
    with PersistentMemoryStore(old_file, "bob") as bob:
        assert [(m.id, m.embedding, m.embedding_model) for m in bob] == [("b1", (1.0, 0.0), None)]


def test_the_migration_keeps_a_copy_of_the_old_file_beside_it(old_file):
    PersistentMemoryStore(old_file, "alice").close()
    kept = old_file.with_name("memory_lab.schema-1.sqlite3")
    assert version(kept) == 1 and list_users(kept) == ["alice", "bob"]
    db = sqlite3.connect(kept)
    rows = db.execute("SELECT id, length(embedding) FROM memories ORDER BY seq").fetchall()
    db.close()
    assert rows == [("m1", 24), ("m2", 24), ("b1", 16)]  # float64s, as schema 1 wrote them
    shutil.copy(SCHEMA_1, old_file.with_name("second.sqlite3"))
    PersistentMemoryStore(old_file.with_name("second.sqlite3"), "bob").close()
    assert old_file.with_name("second.schema-1.sqlite3").exists()


def test_vectors_are_float32_on_disk_when_exact_and_float64_when_not(old_file):
    PersistentMemoryStore(old_file, "alice").close()
    db = sqlite3.connect(old_file)
    rows = db.execute("SELECT id, length(embedding) FROM memories ORDER BY seq").fetchall()
    db.close()
    assert rows == [("m1", 3 * 4), ("m2", 3 * 8), ("b1", 2 * 4)]


class Interrupted(Exception):
    pass


def test_a_migration_that_fails_at_any_step_leaves_the_old_file_readable(old_file, monkeypatch):
    real = sqlite_file.migrate
    steps = []

    class Failing:
        def __init__(self, db, at):
            self._db, self._at, self._n = db, at, 0

        def _step(self):
            self._n += 1
            if self._n == self._at:
                raise Interrupted(f"step {self._at}")

        def execute(self, *args):
            self._step()
            return self._db.execute(*args)

        def executemany(self, *args):
            self._step()
            return self._db.executemany(*args)

    at = 1
    while True:
        monkeypatch.setattr(sqlite_file, "migrate", lambda db, v, at=at: real(Failing(db, at), v))
        try:
            PersistentMemoryStore(old_file, "alice").close()
        except Interrupted:
            assert version(old_file) == 1, f"half migrated after a failure at step {at}"
            steps.append(at)
            at += 1
            continue
        break
    assert len(steps) > 5
    monkeypatch.setattr(sqlite_file, "migrate", real)
    with PersistentMemoryStore(old_file, "alice") as alice:
        assert [m.to_dict() for m in alice] == ALICE_1


def note(memory_id: str, text: str = "a note") -> Memory:
    return Memory(memory_id, text, created_at=NOW, embedding=[1.0, 0.5, 0.25])


def test_a_plain_sqlite_connection_cannot_change_a_row(tmp_path):
    path = tmp_path / "m.sqlite3"
    with PersistentMemoryStore(path, "u") as store:
        store.add(note("m1"))
    db = sqlite3.connect(path)
    with pytest.raises(sqlite3.OperationalError, match="no such function: row_checksum"):
        db.execute("UPDATE memories SET text = 'forged'")
    db.close()


def test_a_row_changed_behind_the_checksum_is_refused_naming_file_user_and_memory(tmp_path):
    path = tmp_path / "m.sqlite3"
    with PersistentMemoryStore(path, "u") as store:
        store.add(note("m1"))
        store.add(note("m2"))
    db = sqlite3.connect(path)
    db.execute("DROP TRIGGER memories_sealed")  # another program, ignoring the seal
    db.execute("UPDATE memories SET importance = 10 WHERE id = 'm2'")
    db.commit()
    db.close()
    with PersistentMemoryStore(path, "u") as store:  # opening reads no row: reading does
        assert store.get("m1").id == "m1"
        with pytest.raises(StoreFileError, match=r"m.sqlite3: the row of memory 'm2' of user 'u'"):
            store.get("m2")
        with pytest.raises(StoreFileError, match=r"m.sqlite3: the row of memory 'm2' of user 'u'"):
            list(store)


def test_a_row_copied_from_another_store_file_is_refused(tmp_path):
    a, b = tmp_path / "a.sqlite3", tmp_path / "b.sqlite3"
    for path in (a, b):
        with PersistentMemoryStore(path, "u") as store:
            store.add(note("m1", f"from {path.name}"))
    db = sqlite3.connect(b)
    db.execute("ATTACH ? AS a", (str(a),))
    db.execute("DROP TRIGGER memories_sealed")
    db.execute("DELETE FROM memories")
    db.execute("INSERT INTO memories SELECT * FROM a.memories")  # a's row, a's checksum
    db.commit()
    db.close()
    with (
        pytest.raises(StoreFileError, match="memory 'm1' of user 'u' does not match"),
        PersistentMemoryStore(b, "u") as store,
    ):
        list(store)


def test_a_backup_has_its_own_identity_and_refuses_to_launder_a_damaged_row(tmp_path):
    path = tmp_path / "m.sqlite3"
    with PersistentMemoryStore(path, "u") as store:
        store.add(note("m1"))
        store.backup(tmp_path / "copy.sqlite3")
    identity = {}
    for file in (path, tmp_path / "copy.sqlite3"):
        db = sqlite3.connect(file)
        identity[file.name] = db.execute("SELECT value FROM meta").fetchone()[0]
        db.close()
    assert identity["m.sqlite3"] != identity["copy.sqlite3"]
    with PersistentMemoryStore(tmp_path / "copy.sqlite3", "u") as copy:
        assert [m.to_dict() for m in copy] == [{**note("m1").to_dict(), "user_id": "u"}]
    store = PersistentMemoryStore(path, "u")
    store._db.execute("DROP TRIGGER memories_sealed")
    store._db.execute("UPDATE memories SET text = 'damaged'")
    with pytest.raises(StoreFileError, match="memory 'm1' of user 'u' does not match"):
        store.backup(tmp_path / "second.sqlite3")
    assert not (tmp_path / "second.sqlite3").exists()
    store._db.close()
    store._db = None
