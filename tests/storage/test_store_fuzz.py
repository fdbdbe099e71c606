"""Damaged store files: each is refused by name, or read back exactly as it was written.

Seeded and bounded: bit flips at a few hundred offsets of a small store file (and of its
-wal), truncation at many lengths, and files that are not stores at all. For every
damaged copy, every user's store must either open and hold exactly the memories that
were written (every field, in order) or raise StoreFileError / ValueError naming the
file. Anything else (a raw sqlite3 error, a struct or Unicode error, a memory that
differs by one bit) fails the test.
"""

from __future__ import annotations

import random
import shutil
import sqlite3
from pathlib import Path

import pytest

from conftest import DAY, NOW
from memory_store import Memory
from storage.sqlite_store import PersistentMemoryStore, StoreFileError, list_users

USERS = ("alice", "bob")
SEED = 16


def written() -> dict[str, list[Memory]]:
    """Two users' memories: float32-exact and float64 vectors, links, metadata, unicode."""
    rng = random.Random(SEED)
    memories = {}
    for u, user in enumerate(USERS):
        batch = []
        for i in range(12):
            exact = [rng.choice([0.5, -0.25, 1.0, 0.0, 2.0]) for _ in range(16)]
            vector = exact if i % 2 else [rng.uniform(-1, 1) for _ in range(16)]  # float64
            batch.append(
                Memory(
                    f"m{i}",
                    f"{user}'s note {i}: café, 日本, " + "words " * rng.randint(0, 30),
                    kind=("episodic", "semantic")[i % 2],
                    created_at=NOW - (i + 1) * DAY,
                    last_accessed=NOW - i * DAY,
                    importance=1 + (i + u) % 10,
                    embedding=vector,
                    embedding_model="fuzz/16",
                    metadata={"i": i, "tags": ["x", "é"]},
                )
            )
        batch[1].superseded_by = "m3"
        memories[user] = batch
    return memories


def expected(memories: dict[str, list[Memory]]) -> dict[str, list[dict]]:
    return {
        user: [{**m.to_dict(), "user_id": user} for m in batch] for user, batch in memories.items()
    }


@pytest.fixture(scope="module")
def original(tmp_path_factory) -> tuple[Path, dict]:
    path = tmp_path_factory.mktemp("fuzz") / "memories.sqlite3"
    memories = written()
    for user, batch in memories.items():
        with PersistentMemoryStore(path, user) as store:
            store.extend(batch)
    return path, expected(memories)


def outcome(path: Path, want: dict) -> str:
    """'exact' if every user reads back exactly, 'refused' if refused by name; else fail."""
    results = set()
    for user in USERS:
        try:
            with PersistentMemoryStore(path, user) as store:
                got = [m.to_dict() for m in store]
        except (StoreFileError, ValueError) as exc:
            assert str(path) in str(exc), f"refused without naming the file: {exc}"
            results.add("refused")
            continue
        assert got == want[user], f"{user}'s memories came back changed, not refused"
        results.add("exact")
    return "refused" if "refused" in results else "exact"


def damaged_copy(original: Path, folder: Path, data: bytes, name: str = "memories.sqlite3"):
    folder.mkdir()
    copy = folder / name
    copy.write_bytes(data)
    return copy


def test_bit_flips_anywhere_in_the_file_are_refused_or_harmless(original, tmp_path):
    path, want = original
    data = path.read_bytes()
    rng = random.Random(SEED)
    counts = {"exact": 0, "refused": 0}
    for n in range(300):
        offset, bit = rng.randrange(len(data)), rng.randrange(8)
        flipped = bytearray(data)
        flipped[offset] ^= 1 << bit
        copy = damaged_copy(path, tmp_path / f"flip-{n}", bytes(flipped))
        counts[outcome(copy, want)] += 1
    assert counts["refused"] > 30 and counts["exact"] > 30, counts  # both kinds of offset hit


def test_a_flipped_bit_in_an_embedding_is_refused_naming_the_user_and_memory(original, tmp_path):
    path, want = original
    data = bytearray(path.read_bytes())
    needle = Memory("x", "x", created_at=0.0, embedding=want["bob"][5]["embedding"])
    import struct

    offset = data.index(struct.pack("<16f", *needle.embedding)) + 7
    data[offset] ^= 0x01  # one bit of one float32 of bob's m5
    copy = damaged_copy(path, tmp_path / "one-bit", bytes(data))
    with (
        pytest.raises(StoreFileError, match=r"memory 'm5' of user 'bob'.*checksum") as raised,
        PersistentMemoryStore(copy, "bob") as bob,  # refused when the row is read
    ):
        list(bob)
    assert str(copy) in str(raised.value)
    with PersistentMemoryStore(copy, "alice") as alice:  # another user's rows are intact
        assert [m.to_dict() for m in alice] == want["alice"]


def test_a_truncated_file_is_refused_or_read_back_exactly(original, tmp_path):
    path, want = original
    data = path.read_bytes()
    lengths = sorted({*range(0, len(data), max(1, len(data) // 60)), 1, 15, 16, 99, 100, 101})
    for length in lengths:
        copy = damaged_copy(path, tmp_path / f"cut-{length}", data[:length])
        if length == 0:  # an empty file is a new, empty store
            with PersistentMemoryStore(copy, "alice") as store:
                assert len(store) == 0
            continue
        assert outcome(copy, want) == "refused", f"cut at {length} of {len(data)} bytes"


def write_text(path):
    path.write_text("my shopping list: eggs, milk\n" * 50)


def write_png(path):
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(200))


def write_other_app(path):
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE memories (id INTEGER, note TEXT)")  # same table name, other app
    db.execute("INSERT INTO memories VALUES (1, 'hello')")
    db.commit()
    db.close()


def write_sqlite_header_only(path):
    path.write_bytes(b"SQLite format 3\x00" + bytes(84))


@pytest.mark.parametrize("make", [write_text, write_png, write_other_app, write_sqlite_header_only])
def test_a_foreign_file_is_refused_by_name_and_left_as_it_was(tmp_path, make):
    path = tmp_path / "memories.sqlite3"
    make(path)
    before = path.read_bytes()
    for attempt in (lambda: PersistentMemoryStore(path, "alice"), lambda: list_users(path)):
        with pytest.raises(StoreFileError) as raised:
            attempt()
        assert str(path) in str(raised.value)
    assert path.read_bytes() == before


def test_bit_flips_in_the_stores_own_wal_are_refused_or_harmless(original, tmp_path):
    path, want = original
    live = tmp_path / "live" / "memories.sqlite3"
    live.parent.mkdir()
    shutil.copy(path, live)
    store = PersistentMemoryStore(live, "alice")
    store.get("m0").last_accessed = NOW + 1  # committed, then copied into the file
    store.save()
    want = {**want, "alice": [m.to_dict() for m in store]}
    db_bytes, wal = live.read_bytes(), Path(f"{live}-wal").read_bytes()  # a crash copy
    store.close()
    rng = random.Random(SEED)
    counts = {"exact": 0, "refused": 0}
    for n in range(60):
        flipped = bytearray(wal)
        flipped[rng.randrange(len(wal))] ^= 1 << rng.randrange(8)
        copy = damaged_copy(path, tmp_path / f"wal-{n}", db_bytes)
        Path(f"{copy}-wal").write_bytes(bytes(flipped))
        counts[outcome(copy, want)] += 1
    assert sum(counts.values()) == 60
