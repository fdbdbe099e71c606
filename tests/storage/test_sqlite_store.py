"""storage/sqlite_store.py, storage/sqlite_file.py: what only a store kept in a file has.

The behaviour every store shares (surviving a restart, one user a store, one model a user,
stale views, transactions) is in test_store_contract.py, run on SQLite and PostgreSQL
alike. Here are the file's own failure paths, run for real: a writer killed with SIGKILL in
a subprocess, two writer processes on one file, files that are not stores (checked byte for
byte afterwards), a file deleted, moved or read-only while a store has it open.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import DAY, NOW
from memory_store import Memory, MemoryStore
from storage import sqlite_file
from storage.sqlite_file import SCHEMA_VERSION
from storage.sqlite_store import (
    NewerSchemaError,
    PersistentMemoryStore,
    StoreFileError,
    export_jsonl,
    list_users,
)

CODE = Path(__file__).resolve().parents[2] / "code"


@pytest.fixture
def path(tmp_path):
    return tmp_path / "memories.sqlite3"


def open_store(path, user_id="default", **kwargs) -> PersistentMemoryStore:
    return PersistentMemoryStore(path, user_id, **kwargs)


def memory(memory_id, text="a note", **fields) -> Memory:
    fields.setdefault("created_at", NOW - DAY)
    fields.setdefault("embedding", [1.0, 0.0, 0.0])
    return Memory(memory_id, text, **fields)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- exports, paths and the users of a file --------------------------------------------------


def test_export_works_on_any_store_and_open_file():
    store = MemoryStore()
    store.add(memory("m1"))
    lines = []

    class Sink:
        def write(self, text):
            lines.append(text)

    assert export_jsonl(store, Sink()) == 1
    assert json.loads(lines[0])["id"] == "m1"


def test_an_in_memory_path_is_refused_with_the_alternative():
    with pytest.raises(ValueError, match=r"needs a file path; use MemoryStore\(\)"):
        PersistentMemoryStore(":memory:")


def test_list_users_of_a_missing_file_says_so(path):
    with pytest.raises(FileNotFoundError, match="no memory store at"):
        list_users(path)


# --- files that are not (this version's) stores are refused and left untouched --------------


def write_not_sqlite(path):
    path.write_bytes(b"my shopping list: eggs, milk\n" * 200)


def write_newer_schema(path):
    with open_store(path) as store:
        store.add(memory("m1"))
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()


def write_other_database(path):
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE invoices (id INTEGER, total REAL)")
    db.commit()
    db.close()


def write_damaged(path):
    with open_store(path) as store:
        for i in range(200):  # a few pages of rows
            store.add(memory(f"m{i}", "words " * 50))
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode = DELETE")  # fold the WAL in: one self-contained file
    db.close()
    data = bytearray(path.read_bytes())
    data[4096 * 2 : 4096 * 4] = b"\xff" * 8192  # overwrite two pages in the middle
    path.write_bytes(bytes(data))


def write_index_damaged(path):  # rows intact, but the (user_id, id) index disagrees with them
    with open_store(path, "u") as store:
        for i in range(100):
            store.add(memory(f"m{i}"))
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode = DELETE")  # fold the WAL in: one self-contained file
    (root,) = db.execute(
        "SELECT rootpage FROM sqlite_master WHERE type = 'index' AND tbl_name = 'memories'"
    ).fetchone()
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    db.close()
    data = bytearray(path.read_bytes())
    page = slice((root - 1) * page_size, root * page_size)  # the index's only page
    entry = data[page].index(b"um99") + (root - 1) * page_size  # the last key, in order
    data[entry + 3] = ord("z")  # "m99" -> "m9z": still last, so the tree stays ordered
    path.write_bytes(bytes(data))
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA quick_check").fetchone()[0] == "ok"  # what used to let it in
    db.close()


def write_missing_column(path):  # the right tables and version, an older layout of one
    db = sqlite3.connect(path)
    db.executescript(
        """CREATE TABLE memories (seq INTEGER PRIMARY KEY, user_id TEXT, id TEXT, text TEXT);
        CREATE TABLE users (user_id TEXT PRIMARY KEY, embedding_model TEXT, dimension INTEGER);
        CREATE TABLE id_counters (user_id TEXT, prefix TEXT, last_number INTEGER);
        PRAGMA user_version = 1;"""
    )
    db.close()


def write_bad_row(path):
    with open_store(path) as store:
        store.add(memory("m1"))
    db = sqlite_file.connect(path)  # its trigger re-seals the row: the checksum stays right
    db.execute("UPDATE memories SET kind = 'dream'")
    db.close()


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (write_not_sqlite, StoreFileError, "is not a SQLite database"),
        (
            write_newer_schema,
            NewerSchemaError,
            f"newer Memory Lab .schema version {SCHEMA_VERSION + 1}",
        ),
        (write_other_database, StoreFileError, "not a Memory Lab store .its tables: invoices"),
        (write_damaged, StoreFileError, "is damaged or not a database"),
        (write_index_damaged, StoreFileError, "is damaged or not a database"),
        (write_missing_column, StoreFileError, "memories table lacks the column.*kind"),
        (write_bad_row, StoreFileError, "id 'm1'.*kind must be one of"),
    ],
    ids=[
        "not-sqlite",
        "newer-schema",
        "other-database",
        "damaged",
        "index-damaged",
        "missing-column",
        "bad-row",
    ],
)
def test_a_file_that_is_not_a_usable_store_is_refused_and_left_untouched(
    path, make, error, message
):
    make(path)
    before = sha256(path)
    attempts = [read_every_memory] if make is write_bad_row else [open_store, list_users]
    for attempt in attempts:  # list_users reads no memory, so a bad row does not stop it
        with pytest.raises(error, match=message) as raised:
            attempt(path)
        assert str(path) in str(raised.value) and "untouched" in str(raised.value)
    assert sha256(path) == before
    if make is not write_bad_row:  # that one is a real store, opened before the row is read
        assert not Path(f"{path}-wal").exists() and not Path(f"{path}-shm").exists()


def read_every_memory(path) -> list:
    """Open the store and read its rows: a bad row is refused when it is read, not at open."""
    with open_store(path) as store:
        return list(store)


def test_a_folder_is_not_a_store_file(tmp_path):
    with pytest.raises(StoreFileError, match="is a folder: give the path of a file inside it"):
        open_store(tmp_path)


def test_an_empty_file_becomes_a_new_store(path):
    path.touch()
    with open_store(path) as store:
        store.add(memory("m1"))
    assert list_users(path) == ["default"]


# --- real processes --------------------------------------------------------------------------


def python(source: str, *args: str) -> subprocess.Popen:
    """Start `python -c source *args` with code/ importable; talk to it through pipes."""
    env = {**os.environ, "PYTHONPATH": str(CODE), "MEMORY_LAB_ENV_FILE": ""}
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(source), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


KILLED_WRITER = """
    import sys
    from memory_store import Memory
    from storage.sqlite_store import PersistentMemoryStore

    store = PersistentMemoryStore(sys.argv[1])
    for i in range(1, 1_000_000):  # writes until it is killed
        store.add(Memory(f"m{i}", "note " * 20, created_at=0.0, embedding=[1.0, 0.0]))
        print("added", i, flush=True)  # printed only once add() returned: committed
        if i >= 30:  # from now on, also rewrite every memory's last_accessed in one save
            for m in store:
                m.last_accessed = float(i)
            store.save()
            print("saved", i, flush=True)
"""


def test_a_lost_wal_after_a_crash_loses_no_committed_memory(path):
    writer = python(
        """
        import os, sys
        from memory_store import Memory
        from storage.sqlite_store import PersistentMemoryStore

        store = PersistentMemoryStore(sys.argv[1])
        for i in range(1, 201):
            store.add(Memory(f"m{i}", "note " * 20, created_at=0.0, embedding=[1.0, 0.0]))
        store.get("m1").last_accessed = 5.0
        store.save()
        print("committed", flush=True)
        os.kill(os.getpid(), 9)  # a crash: no close(), nothing flushed on the way out
        """,
        str(path),
    )
    out, err = writer.communicate()
    assert out == "committed\n", err
    Path(f"{path}-wal").unlink(missing_ok=True)  # deleted by hand, or lost with a copy
    with open_store(path) as store:
        assert [m.id for m in store] == [f"m{i}" for i in range(1, 201)]
        assert store.get("m1").last_accessed == 5.0


def test_a_plain_copy_of_the_file_alone_holds_every_committed_memory(path, tmp_path):
    store = open_store(path)  # left open, as a running chat would
    for i in range(50):
        store.add(memory(f"m{i}"))
    copy = tmp_path / "copy.sqlite3"
    copy.write_bytes(path.read_bytes())  # the .sqlite3 only, without its -wal
    with open_store(copy) as copied:
        assert len(copied) == 50
    store.close()


@pytest.mark.parametrize("kill_after", [31, 45, 60])  # the add after which to kill it
@pytest.mark.slow
def test_a_writer_killed_mid_write_loses_no_committed_memory_and_no_half_save(path, kill_after):
    writer = python(KILLED_WRITER, str(path))
    added = saved = 0
    for line in writer.stdout:
        what, number = line.split()
        if what == "saved":
            saved = int(number)
        elif int(number) == kill_after:  # it is now saving its 31 or more touched memories
            added = int(number)
            break
    writer.kill()  # SIGKILL: no cleanup and no close(), wherever it is in a write
    writer.communicate()
    with open_store(path) as store:
        numbers = sorted(int(m.id[1:]) for m in store)
        assert numbers == list(range(1, numbers[-1] + 1))  # every add up to the last one
        assert numbers[-1] >= added  # ... and every committed one
        *earlier, last = [store.get(f"m{n}").last_accessed for n in numbers]
        assert len(set(earlier)) == 1  # one whole save, never half of one
        assert earlier[0] >= saved
        assert last in (earlier[0], 0.0)  # the newest either made it into a save or not
        assert store._db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


CONCURRENT_WRITER = """
    import sys
    from embedding_helpers import Embedder
    from storage.sqlite_store import PersistentMemoryStore

    path, user, name = sys.argv[1:]
    embedder = Embedder("memorylab/hashed-bow-384")
    store = PersistentMemoryStore(path, user)
    print("ready", flush=True)
    sys.stdin.readline()  # start together: wait until both writers are ready
    for i in range(60):
        embedder.remember(store, f"{name} note {i}", now=1_000_000.0 + i)
        next(iter(store)).last_accessed = 1_000_000.0 + i  # a touch, as recall would
        store.save()
    store.close()
    print("done", flush=True)
"""


@pytest.mark.parametrize("users", [("eric", "eric"), ("alice", "bob")], ids=["same", "two"])
def test_two_writer_processes_lose_nothing(path, users):
    writers = [
        python(CONCURRENT_WRITER, str(path), user, name)
        for user, name in zip(users, ("first", "second"))
    ]
    try:
        for writer in writers:
            assert writer.stdout.readline().strip() == "ready", writer.stderr.read()
        for writer in writers:
            writer.stdin.write("go\n")
            writer.stdin.flush()
        for writer in writers:
            out, err = writer.communicate(timeout=60)
            assert writer.returncode == 0 and out.strip() == "done", err
    finally:  # never leave a writer running, or its pipes open, after a failure
        for writer in writers:
            if writer.poll() is None:
                writer.kill()
            writer.communicate()
    texts = []
    for user in sorted(set(users)):
        with open_store(path, user) as store:
            assert len({m.id for m in store}) == len(store)  # no id handed out twice
            texts += [m.text for m in store]
    expected = [f"{name} note {i}" for name in ("first", "second") for i in range(60)]
    assert sorted(texts) == sorted(expected)


def test_export_refuses_a_store_of_two_users_and_writes_no_file(tmp_path):
    store = MemoryStore(user_id=None)  # the many-user store under the index
    store.add(memory("m1", user_id="alice"))
    store.add(memory("m2", user_id="bob"))
    target = tmp_path / "everyone.jsonl"
    with pytest.raises(ValueError, match=r"2 users \('alice', 'bob'\)"):
        export_jsonl(store, target)
    assert not target.exists()


@pytest.mark.parametrize("how", ["deleted", "moved"])
def test_a_store_whose_file_was_deleted_or_moved_refuses_to_write_instead_of_losing_it(
    path, tmp_path, how
):
    store = open_store(path)
    store.add(memory("m1"))
    if how == "deleted":
        path.unlink()
    else:
        path.rename(tmp_path / "elsewhere.sqlite3")
    with pytest.raises(
        StoreFileError, match="deleted, moved or replaced while this store was open"
    ):
        store.add(memory("m2"))
    assert [m.id for m in store] == ["m1"]  # the refused memory is not kept in memory either
    store.get("m1").last_accessed = NOW
    with pytest.raises(StoreFileError, match="export_jsonl"):
        store.save()
    with pytest.raises(StoreFileError):
        store.close()  # close() saves: the unsaved touch is reported, not dropped silently
    assert store.export_jsonl(tmp_path / "rescued.jsonl") == 1  # what it holds can be rescued


def test_a_relative_path_keeps_working_after_the_working_folder_changes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    store = open_store(Path("memories.sqlite3"))
    store.add(memory("m1"))
    monkeypatch.chdir(tmp_path.parent)
    store.add(memory("m2"))  # the same file, not "deleted or moved"
    store.close()
    with open_store(tmp_path / "memories.sqlite3") as reopened:
        assert [m.id for m in reopened] == ["m1", "m2"]


def test_a_file_that_cannot_be_written_is_refused_by_name_and_left_untouched(path, monkeypatch):

    with open_store(path) as store:
        store.add(memory("m1"))
    before = sha256(path)

    def read_only(db):
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(sqlite_file, "_set_wal", read_only)  # as SQLite answers a read-only file
    with pytest.raises(StoreFileError, match="cannot be written.*readonly.*writable"):
        open_store(path)
    assert sha256(path) == before


@pytest.mark.skipif(
    os.name != "posix" or os.geteuid() == 0, reason="needs POSIX permissions, not root"
)
def test_a_store_in_a_read_only_folder_is_refused_by_name(tmp_path):
    folder = tmp_path / "locked"
    folder.mkdir()
    with open_store(folder / "memories.sqlite3") as store:
        store.add(memory("m1"))
    folder.chmod(0o555)
    try:
        with pytest.raises(StoreFileError, match="cannot be written"):
            open_store(folder / "memories.sqlite3")
    finally:
        folder.chmod(0o755)
