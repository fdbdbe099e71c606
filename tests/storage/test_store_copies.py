"""Exports and backups of a store: written atomically, never over a store file.

The targets that would destroy memories (the store, its -wal/-shm, a link to one, any
SQLite file) are each tried for real, and the store is checked byte for byte afterwards.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from commands.backup import main as backup_main
from conftest import DAY, NOW
from memory_store import Memory, MemoryStore
from storage.sqlite_store import PersistentMemoryStore, export_jsonl


def memory(memory_id, text="a note") -> Memory:
    return Memory(memory_id, text, created_at=NOW - DAY, embedding=[1.0, 0.0, 0.0])


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def store(tmp_path):
    with PersistentMemoryStore(tmp_path / "memory_lab.sqlite3", "alice") as store:
        store.add(memory("m1", "Alice prefers Groq"))
        yield store


def target_of(store, name: str) -> Path:
    """The path `name` stands for: a side file, a symlink or a hard link to the store."""
    path = store.path
    if name in ("store", "-wal", "-shm"):
        return path if name == "store" else path.with_name(path.name + name)
    link = path.with_name("link.jsonl")
    if name == "symlink":
        link.symlink_to(path)
    elif name == "hard link":
        os.link(path, link)
    else:  # another user's store in the same folder
        with PersistentMemoryStore(path.with_name("bob.sqlite3"), "bob") as bob:
            bob.add(memory("m1", "Bob likes tea"))
        return bob.path
    return link


@pytest.mark.parametrize("name", ["store", "-wal", "-shm", "symlink", "hard link", "sqlite"])
def test_export_refuses_every_target_that_is_a_store_and_leaves_it_untouched(store, name):
    target = target_of(store, name)
    before = target.read_bytes() if target.exists() else None
    with pytest.raises(ValueError, match=rf"refusing to write to {target}: it is .*never"):
        export_jsonl(store, target)
    with pytest.raises(ValueError, match="refusing to write"):
        store.export_jsonl(str(target))
    assert (target.read_bytes() if target.exists() else None) == before
    assert [m.text for m in PersistentMemoryStore(store.path, "alice")] == ["Alice prefers Groq"]


def test_export_refuses_the_side_file_of_any_sqlite_database(store):
    target = store.path.with_name(store.path.name + "-wal")
    store.close()  # no -wal left, and an in-process store: the name alone is refused
    in_process = MemoryStore()
    in_process.add(memory("m1"))
    with pytest.raises(ValueError, match="-wal side file of the SQLite database"):
        export_jsonl(in_process, target)
    assert not target.exists()


def test_export_replaces_an_older_export_atomically_and_leaves_no_temporary_file(store):
    target = store.path.with_name("alice.jsonl")
    target.write_text("an older export\n")
    assert export_jsonl(store, target) == 1
    assert json.loads(target.read_text())["text"] == "Alice prefers Groq"
    assert sorted(p.name for p in target.parent.iterdir() if p.name.endswith(".tmp")) == []


def test_a_failed_export_leaves_the_old_file_whole(store, monkeypatch):
    target = store.path.with_name("alice.jsonl")
    target.write_text("an older export\n")

    def broken(self):
        raise OSError("disk full")

    monkeypatch.setattr(Memory, "to_dict", broken)
    with pytest.raises(OSError, match="disk full"):
        export_jsonl(store, target)
    assert target.read_text() == "an older export\n"
    assert [p.name for p in target.parent.iterdir() if p.name.endswith(".tmp")] == []


# --- backups -------------------------------------------------------------------------------


def test_a_backup_holds_every_committed_memory_even_those_still_in_the_wal(store, tmp_path):
    store.add(memory("m2", "Alice's flight is on Friday"))
    wal = store.path.with_name(store.path.name + "-wal")
    assert wal.exists()  # the store is open: committed pages may still be in its -wal
    target = store.backup(tmp_path / "copy.sqlite3")
    assert not target.with_name(target.name + "-wal").exists()  # one self-contained file
    with PersistentMemoryStore(target, "alice") as copy:
        assert [m.text for m in copy] == ["Alice prefers Groq", "Alice's flight is on Friday"]


@pytest.mark.parametrize("name", ["store", "-wal", "-shm", "symlink", "hard link", "sqlite"])
def test_a_backup_refuses_every_target_that_is_a_store(store, name):
    target = target_of(store, name)
    before = target.read_bytes() if target.exists() else None
    with pytest.raises(ValueError, match=rf"refusing to write to {target}"):
        store.backup(target)
    assert (target.read_bytes() if target.exists() else None) == before


def test_the_backup_command_copies_a_store_file_and_refuses_to_overwrite_one(store, tmp_path):
    store.add(memory("m2", "Alice's flight is on Friday"))
    target = tmp_path / "copy.sqlite3"
    assert backup_main(["--db", str(store.path), str(target)]) == 0
    with PersistentMemoryStore(target, "alice") as copy:
        assert len(copy) == 2
    assert backup_main(["--db", str(target), str(store.path)]) == 1  # never over a store
    assert [m.id for m in PersistentMemoryStore(store.path, "alice")] == ["m1", "m2"]


def test_the_backup_command_is_one_of_the_labs_commands(store, tmp_path):
    run = Path(__file__).resolve().parents[2] / "code" / "run.py"
    target = tmp_path / "copy.sqlite3"
    done = subprocess.run(
        [sys.executable, str(run), "backup", "--db", str(store.path), str(target)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert f"backed up {store.path} to {target}" in done.stdout
