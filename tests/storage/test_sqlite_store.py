"""storage/sqlite_store.py, storage/sqlite_file.py: memories survive restarts, one user a store.

The failure paths run for real: a writer killed with SIGKILL in a subprocess, two writer
processes on one file, files that are not stores (checked byte for byte afterwards).
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

from chat_with_memory import chat_with_memory
from conftest import DAY, HOUR, NOW
from embedding_helpers import Embedder
from llm.memory_block import parse_memory_block
from memory_store import EmbeddingModelMismatch, Memory, MemoryStore
from retriever import retrieve
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
EMBEDDER = Embedder("memorylab/hashed-bow-384")


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


# --- surviving a restart -------------------------------------------------------------------


def test_every_field_survives_closing_and_reopening(path):
    originals = [
        memory(
            "m1",
            "Eric prefers Groq",
            kind="semantic",
            importance=8,
            created_at=NOW - 2 * DAY,
            last_accessed=NOW - HOUR,
            embedding=[0.1, 1 / 3, -2.5e-30],  # rounded to float32 once, then kept exactly
            embedding_model="hand-rolled",
            metadata={"role": "user", "tags": ["api", "é"], "score": 0.5},
        ),
        memory("m2", "Eric now prefers Ollama", importance=6.5, embedding_model="hand-rolled"),
    ]
    with open_store(path) as store:
        for m in originals:
            store.add(m)
        store.supersede("m1", "m2")
    with open_store(path) as reopened:
        assert [m.to_dict() for m in reopened] == [m.to_dict() for m in originals]
        assert reopened.embedding_model == "hand-rolled" and reopened.dimension == 3
        assert [m.id for m in reopened.live()] == ["m2"]


def test_a_memory_is_on_disk_as_soon_as_add_returns(path):
    writer = open_store(path)
    writer.add(memory("m1"))
    with open_store(path) as reader:  # a second connection, writer still open and unsaved
        assert "m1" in reader
    writer.close()


@pytest.mark.parametrize("change", ["remove", "supersede"])
def test_remove_and_supersede_write_through(path, change):
    with open_store(path) as store:
        store.add(memory("m1"))
        store.add(memory("m2"))
        getattr(store, change)(*(["m1"] if change == "remove" else ["m1", "m2"]))
        with open_store(path) as reader:
            expected = {"remove": ["m2"], "supersede": ["m2"]}[change]
            assert [m.id for m in reader.live()] == expected


def test_a_touch_by_the_unchanged_retriever_is_saved_and_stays_warm_after_reopening(path):
    with open_store(path) as store:
        EMBEDDER.remember(store, "Eric prefers Groq for the default API", now=NOW - DAY)
        EMBEDDER.remember(store, "The team lunch is on Friday", now=NOW - DAY)
        [top] = retrieve(store, EMBEDDER.query(store, "which API?"), now=NOW, k=1)
        assert [m.id for m in store.unsaved()] == [top.id] == ["m1"]
        assert store.save() == 1
        assert store.save() == 0  # nothing changed since
    with open_store(path) as reopened:
        assert reopened.get("m1").last_accessed == pytest.approx(NOW)  # warm
        assert reopened.get("m2").last_accessed == pytest.approx(NOW - DAY)  # untouched


def test_an_unsaved_touch_is_lost_only_when_the_store_is_neither_saved_nor_closed(path):
    store = open_store(path)
    store.add(memory("m1"))
    store.get("m1").last_accessed = NOW
    with open_store(path) as other:
        assert other.get("m1").last_accessed == pytest.approx(NOW - DAY)  # not saved yet
    store.close()  # close() saves
    with open_store(path) as other:
        assert other.get("m1").last_accessed == pytest.approx(NOW)


def test_a_recall_stamped_before_creation_by_clock_skew_can_be_reopened(path):
    with open_store(path) as store:
        store.add(memory("m1", created_at=NOW))
        retrieve(store, [1.0, 0.0, 0.0], now=NOW - 2, k=1)  # another machine's clock
    with open_store(path) as reopened:
        assert reopened.get("m1").last_accessed == pytest.approx(NOW - 2)


def test_save_writes_only_changed_fields_so_two_stores_do_not_undo_each_other(path):
    first = open_store(path)
    first.add(memory("m1"))
    second = open_store(path)
    first.get("m1").last_accessed = NOW  # first touches it
    second.get("m1").importance = 9  # second rates it
    first.save()
    second.save()
    first.close(), second.close()
    with open_store(path) as reopened:
        m1 = reopened.get("m1")
        assert (m1.last_accessed, m1.importance) == (pytest.approx(NOW), 9)


def test_next_id_never_hands_out_the_same_id_to_two_stores_on_one_file(path):
    first, second = open_store(path), open_store(path)
    ids = [first.next_id(), second.next_id(), first.next_id(), second.next_id()]
    assert len(set(ids)) == 4
    for store, memory_id in zip([first, second, first, second], ids):
        store.add(memory(memory_id))
    first.close(), second.close()
    with open_store(path) as reopened:
        assert sorted(m.id for m in reopened) == sorted(ids)


def test_an_id_taken_by_another_process_is_refused_and_the_store_is_unchanged(path):
    first, second = open_store(path), open_store(path)
    first.add(memory("m1", "first"))
    with pytest.raises(ValueError, match="'m1' is already stored for user 'default'.*another"):
        second.add(memory("m1", "second"))
    assert len(second) == 0 and "m1" not in second
    first.close(), second.close()


def test_metadata_that_json_cannot_hold_is_refused_before_anything_is_stored(path):
    with open_store(path) as store:
        with pytest.raises(ValueError, match="'m1': metadata must be JSON data"):
            store.add(memory("m1", metadata={"when": object()}))
        assert len(store) == 0
    with open_store(path) as reopened:
        assert len(reopened) == 0


def test_a_closed_store_refuses_to_write(path):
    store = open_store(path)
    store.close()
    store.close()  # twice is fine
    with pytest.raises(ValueError, match="closed: open it again"):
        store.add(memory("m1"))
    assert len(store) == 0


# --- the embedding model is remembered -----------------------------------------------------


def test_a_reopened_store_still_refuses_a_foreign_embedding_model(path):
    with open_store(path) as store:
        EMBEDDER.remember(store, "Eric prefers Groq", now=NOW)
    with open_store(path) as reopened:
        assert reopened.embedding_model == EMBEDDER.model and reopened.dimension == 384
        with pytest.raises(EmbeddingModelMismatch, match="hashed-bow-64"):
            Embedder("memorylab/hashed-bow-64").query(reopened, "which API?")
    with pytest.raises(EmbeddingModelMismatch, match="not 'memorylab/hashed-bow-64'"):
        open_store(path, embedding_model="memorylab/hashed-bow-64")


def test_two_stores_cannot_fill_one_user_with_two_models(path):
    first, second = open_store(path), open_store(path)
    EMBEDDER.remember(first, "Eric prefers Groq", now=NOW)
    with pytest.raises(EmbeddingModelMismatch, match="384-dimensional"):
        Embedder("memorylab/hashed-bow-64").remember(second, "Eric prefers Ollama", now=NOW)
    assert len(second) == 0
    first.close(), second.close()


# --- one user per store --------------------------------------------------------------------


@pytest.fixture
def two_users(path):
    """Alice and Bob in one file; Bob's memory matches Alice's question best."""
    with open_store(path, "alice") as alice:
        EMBEDDER.remember(alice, "Alice has a cat", now=NOW - DAY)
    with open_store(path, "bob") as bob:
        EMBEDDER.remember(bob, "Bob decided the default API is Groq", importance=10, now=NOW)
    return path


def test_a_store_holds_only_its_own_users_memories(two_users):
    with open_store(two_users, "alice") as alice, open_store(two_users, "bob") as bob:
        assert [(m.id, m.user_id, m.text) for m in alice] == [("m1", "alice", "Alice has a cat")]
        assert [m.user_id for m in bob] == ["bob"]
    assert list_users(two_users) == ["alice", "bob"]


def test_recall_and_the_prompt_never_reach_another_users_memory(two_users):
    with open_store(two_users, "alice") as alice:
        query = EMBEDDER.query(alice, "which default API did we decide on?")
        recalled = retrieve(alice, query, now=NOW, k=10)
        assert [m.user_id for m in recalled] == ["alice"]
        result = chat_with_memory(
            "which default API did we decide on?", alice, now=NOW, k=10, embedder=EMBEDDER
        )
        prompt = json.dumps(result.messages)
        assert "Bob" not in prompt and "Groq" not in prompt
        assert [item["text"] for item in parse_memory_block(result.messages[0]["content"])] == [
            "Alice has a cat"
        ]


def test_each_user_counts_ids_from_m1(two_users):
    with open_store(two_users, "alice") as alice, open_store(two_users, "bob") as bob:
        assert (alice.next_id(), bob.next_id()) == ("m2", "m2")


def test_another_users_memory_is_refused_and_an_unassigned_one_is_claimed(path):
    with open_store(path, "alice") as alice:
        with pytest.raises(
            ValueError, match="belongs to user 'bob'.*only the memories of user 'alice'"
        ):
            alice.add(memory("m1", user_id="bob"))
        assert alice.add(memory("m1")).user_id == "alice"  # "default": not yet anyone's
    assert list_users(path) == ["alice"]


def test_export_writes_one_users_memories_as_json_lines_that_load_back(two_users, tmp_path):
    target = tmp_path / "alice.jsonl"
    with open_store(two_users, "alice") as alice:
        alice.add(
            memory("m2", "a newer note", embedding=[0.0] * 384, embedding_model=EMBEDDER.model)
        )
        alice.supersede("m1", "m2")
        assert alice.export_jsonl(target) == 2
        lines = target.read_text(encoding="utf-8").splitlines()
        restored = [Memory.from_dict(json.loads(line)) for line in lines]
        assert [m.to_dict() for m in restored] == [m.to_dict() for m in alice]
    assert {m.user_id for m in restored} == {"alice"}


def test_export_works_on_any_store_and_open_file():
    store = MemoryStore()
    store.add(memory("m1"))
    lines = []

    class Sink:
        def write(self, text):
            lines.append(text)

    assert export_jsonl(store, Sink()) == 1
    assert json.loads(lines[0])["id"] == "m1"


@pytest.mark.parametrize(
    ("user_id", "error"), [("", ValueError), ("  ", ValueError), (None, TypeError)]
)
def test_a_store_needs_a_user(path, user_id, error):
    with pytest.raises(error, match="user_id must be a non-empty string"):
        open_store(path, user_id)
    assert not path.exists()


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
    attempts = [open_store] if make is write_bad_row else [open_store, list_users]
    for attempt in attempts:  # list_users reads no memory, so a bad row does not stop it
        with pytest.raises(error, match=message) as raised:
            attempt(path)
        assert str(path) in str(raised.value) and "untouched" in str(raised.value)
    assert sha256(path) == before
    if make is not write_bad_row:  # that one is a real store, opened before the row is read
        assert not Path(f"{path}-wal").exists() and not Path(f"{path}-shm").exists()


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


def test_removing_a_memory_another_store_linked_to_is_refused_and_the_file_stays_readable(path):
    first = open_store(path)
    first.add(memory("m1"))
    first.add(memory("m2"))
    second = open_store(path)  # sees m1 and m2, not yet linked
    first.supersede("m1", "m2")  # m2 is now m1's replacement, in the file
    with pytest.raises(ValueError, match="'m2' replaced 'm1'.*in the file"):
        second.remove("m2")
    assert "m2" in second
    first.close(), second.close()
    with open_store(path) as reopened:  # not "inconsistent": the link is intact
        assert reopened.get("m1").superseded_by == "m2"


def test_superseding_with_a_memory_another_store_removed_is_refused(path):
    first = open_store(path)
    first.add(memory("m1"))
    first.add(memory("m2"))
    second = open_store(path)
    first.remove("m2")
    with pytest.raises(ValueError, match="'m2' is no longer stored.*another process"):
        second.supersede("m1", "m2")
    assert second.get("m1").superseded_by is None
    first.close(), second.close()
    with open_store(path) as reopened:
        assert [(m.id, m.superseded_by) for m in reopened] == [("m1", None)]


def test_adding_a_memory_superseded_by_one_another_store_removed_is_refused(path):
    first = open_store(path)
    first.add(memory("m1"))
    second = open_store(path)
    first.remove("m1")
    with pytest.raises(ValueError, match="'m1' is no longer stored.*another process"):
        second.add(memory("m2", superseded_by="m1"))
    assert "m2" not in second
    first.close(), second.close()
    with open_store(path) as reopened:  # still opens: no row names a missing memory
        assert len(reopened) == 0


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


# --- store.transaction(): one write of the file ---------------------------------------------


class Interrupted(Exception):
    """Raised inside a transaction to stand for any failure halfway through."""


def test_a_failed_transaction_leaves_the_file_and_the_store_as_they_were(path):
    with open_store(path, "alice") as store:
        store.add(memory("m1"))
    with open_store(path, "alice") as store:
        with pytest.raises(Interrupted), store.transaction():
            store.add(memory("m2"))
            store.supersede("m1", "m2")
            store.get("m1").importance = 9
            store.save()
            raise Interrupted
        assert [m.id for m in store] == ["m1"] and store.unsaved() == []
        assert store.get("m1").superseded_by is None and store.get("m1").importance == 5
    with open_store(path, "alice") as again:
        assert [(m.id, m.superseded_by, m.importance) for m in again] == [("m1", None, 5)]


def test_a_transaction_is_written_when_its_block_ends_and_joins_nested_writes(path):
    with open_store(path, "alice") as store, store.transaction():
        store.add(memory("m1"))
        store.add(memory("m2"))
        store.supersede("m1", "m2")
        assert list_users(path) == []  # another reader sees nothing before the block ends
    with open_store(path, "alice") as again:
        assert [(m.id, m.superseded_by) for m in again] == [("m1", "m2"), ("m2", None)]
