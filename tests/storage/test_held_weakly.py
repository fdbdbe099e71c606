"""A scan keeps no memory it returned alive; a memory changed in place stays until saved."""

from __future__ import annotations

import gc
import weakref

from conftest import NOW
from memory_store import Memory
from storage.sqlite_store import PersistentMemoryStore


def new_store(path, n: int) -> PersistentMemoryStore:
    """A store object of a file of n memories, written and closed by another one first."""
    with PersistentMemoryStore(path, "u") as store:
        store.extend(
            Memory(f"m{i}", f"note {i}", created_at=NOW, embedding=[1.0, float(i)])
            for i in range(n)
        )
    return PersistentMemoryStore(path, "u")


def test_a_whole_store_scan_keeps_no_memory_alive_and_an_unsaved_change_is_kept(tmp_path):
    path = tmp_path / "store.sqlite3"
    store = new_store(path, 2_000)
    seen = [weakref.ref(memory) for memory in store]
    # (a collection during the scan may already have freed m7 and m8: get() then reads
    # them again, so the memories changed below are watched as well)
    changed = store.get("m7")
    changed.importance = 9  # changed in place, the memory dropped at once
    seen.append(weakref.ref(changed))
    changed = store.get("m8")
    changed.metadata["x"] = 1  # the same through its metadata
    seen.append(weakref.ref(changed))
    del changed
    gc.collect()
    alive = {ref().id for ref in seen if ref() is not None}
    assert alive == {"m7", "m8"}  # held until saved, nothing else
    assert store.save() == 2
    assert len(store._saved) < 1_000  # and what was kept of the others went with them
    store.close()
    with PersistentMemoryStore(path, "u") as again:
        assert again.get("m7").importance == 9 and again.get("m8").metadata == {"x": 1}


def test_what_was_kept_of_a_memory_goes_when_the_memory_does(tmp_path):
    # the learner's ranking holds every memory at once, so no prune during the scan can drop
    # anything: each memory's row values (its vector too) must go when the memory itself does
    path = tmp_path / "store.sqlite3"
    store = new_store(path, 300)
    everything = list(store)
    everything[3].importance = 9  # changed in place: kept until saved
    kept = everything[5]
    del everything
    gc.collect()
    assert set(store._saved) == set(store._versions) == {"m3", "m5"}
    assert store.save() == 1
    gc.collect()
    assert set(store._saved) == {"m5"} and kept.id == "m5"
    store.close()
    with PersistentMemoryStore(path, "u") as again:
        assert again.get("m3").importance == 9


def test_what_was_kept_of_a_scans_memories_goes_when_they_are_collected(tmp_path):
    # a whole-store retrieve holds every memory until it has ranked them all, so the scan's
    # own pruning finds them all alive; their vectors must not stay behind in the store
    path = tmp_path / "store.sqlite3"
    store = new_store(path, 2_000)
    ranked = sorted(store, key=lambda memory: memory.embedding[1])  # all held at once
    top = ranked[-1]
    del ranked
    gc.collect()  # no call of the store in between
    assert set(store._saved) == {top.id}  # only the memory still held
    top.importance = 9
    assert store.save() == 1
    store.close()
