"""Faults tested the way SQLite tests itself: a crash at every write, I/O errors, a stray -wal.

Crashes: every multi-step operation runs once with every SQL statement it sends recorded;
before each statement the store's files (the .sqlite3 and its -wal) are copied aside. Each
copy is the file a process killed at that moment leaves behind (SIGKILL loses nothing
the process already wrote, see the SIGKILL tests of test_sqlite_store.py), and each must
reopen (integrity_check and every row's checksum pass) to exactly the state before the
operation or exactly the state after it, with valid links. Then the same operation runs
again with an I/O error injected at each statement in turn: it must raise, and leave the
store in memory and the file as they were.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from chat_with_memory import chat_with_memory
from conftest import DAY, NOW, POOL_LEAK
from embedding_helpers import Embedder
from extensions.consolidation import consolidate
from extensions.forgetting import prune
from extensions.superseding import replace_fact
from memory_store import Memory
from storage import sqlite_file
from storage.sqlite_store import ForeignWalError, PersistentMemoryStore, StoreFileError

EMBEDDER = Embedder("memorylab/hashed-bow-384")
CODE = Path(__file__).resolve().parents[2] / "code"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fill(path: Path) -> None:
    """A store of user eric: a fact, five related episodes, three old trivial episodes."""
    with PersistentMemoryStore(path, "eric") as store:
        EMBEDDER.remember(
            store, "Eric prefers Groq for the default API", kind="semantic", now=NOW - 9 * DAY
        )
        for i, text in enumerate(POOL_LEAK):
            EMBEDDER.remember(store, text, importance=4, now=NOW - (30 - i) * DAY)
        for i in range(3):
            EMBEDDER.remember(store, f"brushed teeth {i}", importance=1, now=NOW - 400 * DAY)


def state(path: Path) -> list[dict]:
    with PersistentMemoryStore(path, "eric") as store:
        memories = [m.to_dict() for m in store]
        check_links(store)
    return memories


def check_links(store) -> None:
    """No dangling link, no cycle, no two live versions of one replaced fact."""
    by_id = {m.id: m for m in store}
    for memory in store:
        seen = [memory.id]
        while by_id[seen[-1]].superseded_by is not None:
            target = by_id[seen[-1]].superseded_by
            assert target in by_id, f"{seen[-1]} superseded by missing {target}"
            assert target not in seen, f"cycle {[*seen, target]}"
            seen.append(target)
    live_replacing = [m.metadata.get("replaces") for m in store.live()]
    for old in filter(None, live_replacing):
        assert by_id[old].superseded_by is not None, f"{old} and its replacement both live"


def structure(store) -> list[tuple]:
    return [(m.id, m.text, m.superseded_by) for m in store]


def structure_of(memories: list[dict]) -> list[tuple]:
    return [(m["id"], m["text"], m["superseded_by"]) for m in memories]


# --- the operations, each given an open store of eric --------------------------------------


def op_extend(store):
    batch = [
        Memory(f"x{i}", f"batch note {i}", created_at=NOW, embedding=[1.0] * 384) for i in range(4)
    ]
    for memory in batch:
        memory.embedding_model = store.embedding_model
    batch[0].superseded_by = "x1"  # a link inside the batch
    store.extend(batch)


def op_save(store):
    for memory in list(store)[:3]:
        memory.last_accessed = NOW
        memory.importance = 9
    store.save()


def op_replace_fact(store):
    replace_fact(store, EMBEDDER, "m1", "Eric now prefers OpenAI for the default API", NOW)


def op_consolidate(store):
    assert consolidate(store, EMBEDDER, NOW)[0].fact is not None


def op_chat(store):
    chat_with_memory(
        "I switched the billing API to a new connection pool library",
        store,
        now=NOW,
        k=3,
        embedder=EMBEDDER,
        remember_replies=True,
    )


def op_prune(store):
    assert len(prune(store, NOW)) == 3


OPERATIONS = [op_extend, op_save, op_replace_fact, op_consolidate, op_chat, op_prune]
IDS = ["extend", "save", "replace_fact", "consolidate", "chat", "prune"]


class Recorder:
    """Stands in for the store's sqlite3 connection and calls `before(k)` before statement k."""

    def __init__(self, db: sqlite3.Connection, before):
        self._db, self._before, self.count = db, before, 0

    def _statement(self):
        self.count += 1
        self._before(self.count)

    def execute(self, *args):
        self._statement()
        return self._db.execute(*args)

    def executemany(self, *args):
        self._statement()
        return self._db.executemany(*args)

    def __getattr__(self, name):
        return getattr(self._db, name)


def run_recorded(path: Path, operation, before) -> int:
    store = PersistentMemoryStore(path, "eric")
    recorder = Recorder(store._db, before)
    store._db = recorder
    try:
        operation(store)
    finally:
        store._db = recorder._db
        store.close()
    return recorder.count


@pytest.mark.parametrize("operation", OPERATIONS, ids=IDS)
def test_a_crash_at_every_write_point_leaves_the_old_state_or_the_new_one(tmp_path, operation):
    path = tmp_path / "memories.sqlite3"
    fill(path)
    before = state(path)
    crashes = tmp_path / "crashes"
    crashes.mkdir()

    def crash_copy(k):  # what a process killed just before statement k leaves on disk
        for name in (path.name, path.name + "-wal"):
            if (path.parent / name).exists():
                shutil.copy(path.parent / name, crashes / f"{k}-{name}")

    statements = run_recorded(path, operation, crash_copy)
    after = state(path)
    assert after != before and statements > 2
    outcomes = []
    for k in range(1, statements + 1):
        folder = tmp_path / f"after-crash-{k}"
        folder.mkdir()
        for copy in crashes.glob(f"{k}-*"):
            shutil.copy(copy, folder / copy.name.split("-", 1)[1])
        reopened = state(folder / path.name)  # opens: integrity_check, checksums, links
        assert reopened in (before, after), f"half an operation after a crash at {k}"
        outcomes.append("old" if reopened == before else "new")
    assert outcomes[0] == "old" and "new" not in outcomes[: outcomes.index("new")]
    assert "".join(o[0] for o in outcomes).strip("o").strip("n") == "", outcomes  # o...on...n


@pytest.mark.parametrize("operation", OPERATIONS, ids=IDS)
def test_an_io_error_at_every_step_leaves_the_store_and_the_file_as_they_were(tmp_path, operation):
    path = tmp_path / "memories.sqlite3"
    fill(path)
    before = state(path)
    k = 0
    while True:
        k += 1
        folder = tmp_path / f"fail-{k}"
        folder.mkdir()
        copy = folder / path.name
        shutil.copy(path, copy)

        def fail(n, k=k):
            if n == k:
                raise sqlite3.OperationalError("disk I/O error")

        store = PersistentMemoryStore(copy, "eric")
        recorder = Recorder(store._db, fail)
        store._db = recorder
        try:
            operation(store)
        except StoreFileError as exc:  # never a raw sqlite3.OperationalError
            assert "disk I/O error" in str(exc) and str(copy) in str(exc)
            # nothing added, removed or relinked; in-place touches made before the failed
            # write (the retriever's, save's caller's) stay, unsaved, as they would anyway
            assert structure(store) == structure_of(before), f"changed by a failure at {k}"
            recorder._db.close()  # not store.close(): that would save the touches
            store._db = None
            assert state(copy) == before, f"file changed by a failure at {k}"
            continue
        store._db = recorder._db
        store.close()
        if recorder.count < k:  # the operation ran to its end without reaching step k
            break
        # step k was the last statement (the checkpoint after COMMIT): committed, not failed
        assert state(copy) != before
    assert k > 3


# --- a -wal that does not belong to the file ------------------------------------------------


def note(memory_id: str, text: str) -> Memory:
    return Memory(memory_id, text, created_at=NOW, embedding=[1.0, 0.5, 0.25])


def test_another_stores_live_wal_beside_a_store_is_refused_and_both_stay_untouched(tmp_path):
    a, b = tmp_path / "a.sqlite3", tmp_path / "b.sqlite3"
    with PersistentMemoryStore(b, "u") as store_b:
        store_b.add(note("b1", "Bob's only memory"))
    store_a = PersistentMemoryStore(a, "u")
    store_a.add(note("a1", "Alice's first memory"))
    store_a.add(note("a2", "Alice's second memory"))
    stray = Path(f"{b}-wal")
    shutil.copy(f"{a}-wal", stray)  # A is still open: its -wal is live and non-empty
    before, wal_before = sha256(b), sha256(stray)
    with pytest.raises(ForeignWalError, match="does not belong to") as raised:
        PersistentMemoryStore(b, "u")
    assert str(stray) in str(raised.value) and "move b.sqlite3-wal away" in str(raised.value)
    assert (sha256(b), sha256(stray)) == (before, wal_before)  # nothing merged
    store_a.close()
    stray.unlink()
    Path(f"{b}-shm").unlink(missing_ok=True)
    with PersistentMemoryStore(b, "u") as store_b:
        assert [m.id for m in store_b] == ["b1"]


def test_the_stores_own_wal_beside_a_restored_backup_is_refused(tmp_path):
    path, copy = tmp_path / "memories.sqlite3", tmp_path / "backup.sqlite3"
    store = PersistentMemoryStore(path, "u")
    store.add(note("m1", "kept in the backup"))
    store.backup(copy)
    store.add(note("m2", "written after the backup"))
    shutil.copy(f"{path}-wal", f"{copy}-wal")  # restored the backup, the old -wal stayed
    with pytest.raises(ForeignWalError, match="backup.sqlite3-wal does not belong"):
        PersistentMemoryStore(copy, "u")
    store.close()


def test_a_wal_left_by_a_killed_writer_is_the_files_own_and_is_merged(tmp_path):
    path = tmp_path / "memories.sqlite3"
    script = textwrap.dedent(
        f"""
        import os, sys
        sys.path.insert(0, {str(CODE)!r})
        from storage import sqlite_file
        from storage.sqlite_store import PersistentMemoryStore
        from memory_store import Memory
        sqlite_file.checkpoint = lambda db: None  # killed before any checkpoint could run
        import storage.sqlite_store
        storage.sqlite_store.checkpoint = sqlite_file.checkpoint
        store = PersistentMemoryStore({str(path)!r}, "u")
        for i in range(20):
            store.add(Memory(f"m{{i}}", "note", created_at=1e6, embedding=[1.0, 0.0]))
        os.kill(os.getpid(), 9)
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60)
    assert result.returncode == -9, result.stderr
    assert Path(f"{path}-wal").stat().st_size > 0  # the commits are in the -wal only
    with PersistentMemoryStore(path, "u") as store:
        assert len(store) == 20


# --- I/O errors: a full disk, read-only files, folders and mounts ---------------------------


def test_a_full_disk_gives_a_clear_error_and_leaves_the_file_unchanged(tmp_path):
    path = tmp_path / "memories.sqlite3"
    fill(path)
    before = state(path)
    store = PersistentMemoryStore(path, "eric")
    pages = store._db.execute("PRAGMA page_count").fetchone()[0]
    store._db.execute(f"PRAGMA max_page_count = {pages}")  # the disk is full: no page more
    batch = [
        Memory(f"x{i}", "words " * 200, created_at=NOW, embedding=[1.0] * 384) for i in range(50)
    ]
    for memory in batch:
        memory.embedding_model = store.embedding_model
    with pytest.raises(StoreFileError, match=r"memories.sqlite3 could not be written.*full"):
        store.extend(batch)
    assert [m.to_dict() for m in store] == before
    store.close()
    assert state(path) == before


def run_as_nobody_or_readonly(how: str, folder: Path, script: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(CODE)}
    commands = {
        "mount": [
            "bwrap",
            "--bind",
            "/",
            "/",
            "--ro-bind",
            str(folder),
            str(folder),
            "--dev",
            "/dev",
        ],
        "nobody": ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"],
    }
    return subprocess.run(
        [*commands[how], sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def reachable_by_others(*paths: Path) -> bool:
    """True if every folder on the way to each path lets other users through (o+x)."""
    return all(p.stat().st_mode & 0o001 for path in paths for p in (path, *path.parents))


@pytest.mark.parametrize("case", ["read-only mount", "read-only file", "read-only folder"])
def test_a_store_that_cannot_be_written_says_which_file_and_why(case):
    if shutil.which("bwrap") is None or shutil.which("setpriv") is None:
        pytest.skip("needs bubblewrap and setpriv")
    if case != "read-only mount" and not reachable_by_others(CODE, Path(sys.prefix)):
        pytest.skip(  # e.g. a checkout inside /root or another 0700 folder
            "the unprivileged user cannot reach this checkout or its Python (a parent folder "
            "is closed to other users); the read-only mount case still runs here"
        )
    # subtle: pytest's tmp_path is private to root, so the unprivileged user could not even
    # reach it; a folder of its own in the system's temporary folder can be
    folder = Path(tempfile.mkdtemp(prefix="memory-lab-ro-"))
    try:
        check_cannot_be_written(folder, case)
    finally:
        os.chmod(folder, 0o755)
        shutil.rmtree(folder)


def check_cannot_be_written(folder: Path, case: str) -> None:
    os.chmod(folder, 0o755)
    path = folder / "memories.sqlite3"
    with PersistentMemoryStore(path, "u") as store:
        store.add(note("m1", "already here"))
    how = "mount" if case == "read-only mount" else "nobody"
    if case == "read-only file":  # nobody may enter the folder but not write the file
        os.chmod(folder, 0o777)
        os.chmod(path, 0o444)
    elif case == "read-only folder":
        os.chmod(folder, 0o555)
        os.chmod(path, 0o666)
    before = sha256(path)
    script = textwrap.dedent(
        f"""
        import sqlite3
        from storage.sqlite_store import PersistentMemoryStore, StoreFileError
        try:
            PersistentMemoryStore({str(path)!r}, "u")
        except StoreFileError as exc:
            print("refused:", exc)
        except sqlite3.Error as exc:
            print("raw:", type(exc).__name__, exc)
        else:
            print("opened")
        """
    )
    result = run_as_nobody_or_readonly(how, folder, script)
    assert result.stderr == "" and result.stdout.startswith("refused:"), result
    assert str(path) in result.stdout and "cannot be written" in result.stdout
    assert (
        "readonly" in result.stdout
        or "read-only" in result.stdout
        or "unable to open" in result.stdout
    )
    assert sha256(path) == before


def test_a_wal_that_changes_the_files_identity_is_refused_even_if_every_row_agrees(tmp_path):
    # The stray -wal carries a whole other store: its identity (meta) and every row, each
    # sealed with that identity. Rows and integrity_check agree; only file_id tells.
    path = tmp_path / "memories.sqlite3"
    with PersistentMemoryStore(path, "u") as store:
        store.add(note("m1", "the file's own memory"))
    db = sqlite_file.connect(path)
    db.execute("PRAGMA wal_autocheckpoint = 0")  # keep the change in the -wal only
    db.execute("BEGIN IMMEDIATE")
    other = "0" * 32
    db.execute("UPDATE meta SET value = ? WHERE key = 'file_id'", (other,))
    db.execute("UPDATE memories SET text = 'a memory of another store'")  # re-sealed: new id
    db.execute(
        "UPDATE users SET checksum = row_checksum(?, user_id, embedding_model, dimension)",
        (other,),
    )
    db.execute("COMMIT")
    folder = tmp_path / "restored"
    folder.mkdir()
    shutil.copy(path, folder / path.name)  # the file alone: its own identity and row
    shutil.copy(f"{path}-wal", folder / f"{path.name}-wal")  # the other store's -wal
    db.close()
    with pytest.raises(ForeignWalError, match="changes the file's identity"):
        PersistentMemoryStore(folder / path.name, "u")


KILL_AT = textwrap.dedent(
    """
    import os, sys
    sys.path[:0] = [{code!r}, {tests!r}, {root_tests!r}]
    import test_store_faults as t
    from storage.sqlite_store import PersistentMemoryStore

    def kill(k):
        if k == {k}:
            os.kill(os.getpid(), 9)  # SIGKILL: no rollback, no close, no Python cleanup

    store = PersistentMemoryStore({path!r}, "eric")
    store._db = t.Recorder(store._db, kill)
    t.op_replace_fact(store)
    """
)


def test_replace_fact_killed_with_sigkill_at_every_statement_leaves_one_live_version(tmp_path):
    here = Path(__file__).parent
    env = {**os.environ, "MEMORY_LAB_ENV_FILE": ""}
    k, outcomes = 0, []
    while True:  # kill at statement 1, 2, ... until the operation finishes before k
        k += 1
        path = tmp_path / f"kill-{k}" / "memories.sqlite3"
        path.parent.mkdir()
        fill(path)
        before = state(path)
        script = KILL_AT.format(
            code=str(CODE), tests=str(here), root_tests=str(here.parent), k=k, path=str(path)
        )
        result = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, env=env, timeout=60
        )
        assert result.returncode in (0, -9), result.stderr
        after = state(path)  # reopens the real file: integrity, checksums, links
        live = [m for m in after if m["superseded_by"] is None and "default API" in m["text"]]
        assert len(live) == 1, f"killed at statement {k}: {live}"
        outcomes.append("old" if after == before else "new")
        if result.returncode == 0:
            break
    assert k > 5 and outcomes[0] == "old" and outcomes[-1] == "new", outcomes
