"""Multi-step changes are one transaction, checked against the store's current rows.

Two PersistentMemoryStore objects on one file stand for two processes: each read the
file when it was opened, so the second one acts on a stale view. Every change that
depends on a memory's state (supersede, replace a fact, consolidate, prune) re-checks
that state in the file inside its one transaction, and a file whose links are broken
(a cycle, a dangling id, half a cluster archived) is refused on opening, naming the ids.
"""

from __future__ import annotations

import sqlite3

import pytest

from chat_with_memory import chat_with_memory
from conftest import DAY, NOW, POOL_LEAK
from embedding_helpers import Embedder
from extensions.consolidation import consolidate
from extensions.forgetting import prune
from extensions.superseding import replace_fact
from llm import gateway
from memory_store import Memory, MemoryStore
from retriever import retrieve
from storage import sqlite_file
from storage.sqlite_store import PersistentMemoryStore, StoreFileError

EMBEDDER = Embedder("memorylab/hashed-bow-384")


@pytest.fixture
def path(tmp_path):
    return tmp_path / "memories.sqlite3"


def memory(memory_id, text="a note", **fields) -> Memory:
    fields.setdefault("created_at", NOW - DAY)
    fields.setdefault("embedding", [1.0, 0.0, 0.0])
    return Memory(memory_id, text, **fields)


def rows(path) -> list[tuple]:
    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT user_id, id, superseded_by FROM memories ORDER BY seq").fetchall()
    finally:
        db.close()


def two_stores(path, *memories):
    first = PersistentMemoryStore(path)
    for m in memories:
        first.add(m)
    return first, PersistentMemoryStore(path)  # the second reads the file as it is now


# --- supersede ----------------------------------------------------------------------------


def test_two_stores_cannot_build_a_cycle_from_stale_views(path):
    a, b = two_stores(path, memory("m1"), memory("m2"))
    a.supersede("m1", "m2")
    with pytest.raises(ValueError, match=r"memory 'm1' (is itself|was already) superseded by 'm2'"):
        b.supersede("m2", "m1")  # b read m1 live; the rows say otherwise
    assert b.get("m2").superseded_by is None  # b's view is unchanged too
    a.close(), b.close()
    assert rows(path) == [("default", "m1", "m2"), ("default", "m2", None)]
    with PersistentMemoryStore(path) as reopened:
        assert [m.id for m in reopened.live()] == ["m2"]  # one live memory, no cycle


def test_a_memory_another_store_superseded_is_not_relinked(path):
    a, b = two_stores(path, memory("m1"), memory("m2"), memory("m3"))
    a.supersede("m1", "m2")
    with pytest.raises(ValueError, match=r"memory 'm1' (is|was) already superseded by 'm2'"):
        b.supersede("m1", "m3")  # read again, and locked: the row says it is replaced
    a.close(), b.close()
    assert rows(path)[0] == ("default", "m1", "m2")


@pytest.mark.parametrize("store_kind", ["memory", "file"])
def test_re_superseding_a_superseded_memory_raises_instead_of_relinking(path, store_kind):
    store = MemoryStore() if store_kind == "memory" else PersistentMemoryStore(path)
    for m in (memory("m1"), memory("m2"), memory("m3")):
        store.add(m)
    store.supersede("m1", "m2")
    with pytest.raises(ValueError, match="'m1' is already superseded by 'm2'"):
        store.supersede("m1", "m3")
    assert store.get("m1").superseded_by == "m2"
    store.save()


# --- multi-step operations ------------------------------------------------------------------


def test_a_stale_replace_fact_is_refused_so_a_fact_never_has_two_live_versions(path):
    a = PersistentMemoryStore(path)
    EMBEDDER.remember(a, "Eric prefers Groq for the default API", kind="semantic", now=NOW)
    b = PersistentMemoryStore(path)
    replace_fact(a, EMBEDDER, "m1", "Eric now prefers OpenAI for the default API", NOW)
    with pytest.raises(ValueError, match="'m1' was already replaced by 'm2'"):
        replace_fact(b, EMBEDDER, "m1", "Eric now prefers Ollama for the default API", NOW)
    assert len(b) == 2  # a's two: nothing of the fact b began to write
    a.close(), b.close()
    assert rows(path) == [("default", "m1", "m2"), ("default", "m2", None)]


def test_a_second_consolidation_of_archived_episodes_sees_them_and_writes_no_fact(path):
    a = PersistentMemoryStore(path)
    for i, text in enumerate(POOL_LEAK):
        EMBEDDER.remember(a, text, now=NOW - (10 - i) * DAY)
    b = PersistentMemoryStore(path)
    assert len(consolidate(a, EMBEDDER, NOW)) == 1
    assert consolidate(b, EMBEDDER, NOW) == []  # b opened before a consolidated: it reads rows
    assert len(b) == 6 and [m.id for m in b.live()] == ["m6"]
    a.close(), b.close()
    assert rows(path) == [("default", f"m{i}", "m6") for i in range(1, 6)] + [
        ("default", "m6", None)
    ]


def test_consolidating_again_in_the_same_store_finds_nothing_to_do():
    store = MemoryStore()
    for i, text in enumerate(POOL_LEAK):
        EMBEDDER.remember(store, text, now=NOW - (10 - i) * DAY)
    assert len(consolidate(store, EMBEDDER, NOW)) == 1
    assert consolidate(store, EMBEDDER, NOW) == [] and len(store) == 6


def test_a_prune_opened_earlier_keeps_a_memory_another_store_recalled_since(path):
    old = memory("m1", "brushed teeth", importance=1, created_at=NOW - 400 * DAY)
    a, b = two_stores(path, old)
    retrieve(a, [1.0, 0.0, 0.0], NOW, k=1)  # recalled: it must stay
    a.save()
    assert prune(b, NOW) == []  # b reads the recall a saved
    assert "m1" in b
    a.close(), b.close()
    assert rows(path) == [("default", "m1", None)]


def test_a_transaction_that_would_archive_half_a_cluster_is_refused_whole(path):
    with PersistentMemoryStore(path) as store:
        for i in range(1, 4):
            store.add(memory(f"m{i}"))
        fact = memory("f1", metadata={"consolidated": 3, "evidence": ["m1", "m2", "m3"]})
        refused = pytest.raises(ValueError, match="'m3' is evidence of the consolidated fact 'f1'")
        with refused, store.transaction():
            store.add(fact)
            store.supersede("m1", "f1")
            store.supersede("m2", "f1")  # ... and m3 forgotten
        assert len(store) == 3 and all(m.superseded_by is None for m in store)
    assert rows(path) == [("default", f"m{i}", None) for i in range(1, 4)]


def test_a_consolidated_fact_added_alone_outside_a_transaction_is_refused():
    store = MemoryStore()
    store.add(memory("m1"))
    with pytest.raises(ValueError, match="'m1' is evidence of .* inside one `with store"):
        store.add(memory("f1", metadata={"consolidated": 1, "evidence": ["m1"]}))
    assert len(store) == 1


# --- links validated on load ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("damage", "pattern"),
    [
        (
            "UPDATE memories SET superseded_by = CASE id WHEN 'm1' THEN 'm2' ELSE 'm1' END",
            r"circle: m1 -> m2 -> m1",
        ),
        (
            "UPDATE memories SET superseded_by = 'm9' WHERE id = 'm1'",
            r"memory 'm1' is superseded by 'm9', which is not stored",
        ),
        (
            'UPDATE memories SET metadata = \'{"consolidated": 2, "evidence": ["m1"]}\' '
            "WHERE id = 'm2'",
            r"'m1' is evidence of the consolidated fact 'm2' but is still live",
        ),
        (
            "UPDATE memories SET metadata = '{\"replaces\": \"m1\"}' WHERE id = 'm2'",
            r"memory 'm2' replaces 'm1', but 'm1' is still live",
        ),
    ],
    ids=["cycle", "dangling", "half-archived cluster", "two live versions"],
)
def test_a_file_with_broken_links_is_refused_by_check_naming_the_ids(path, damage, pattern):
    with PersistentMemoryStore(path) as store:
        store.add(memory("m1"))
        store.add(memory("m2"))
    db = sqlite_file.connect(path)  # rows stay sealed: only the links are wrong
    db.execute(damage)
    db.close()
    before = path.read_bytes()
    with (
        pytest.raises(StoreFileError, match=f"inconsistent.*user 'default'.*{pattern}"),
        PersistentMemoryStore(path) as store,  # opening reads one row: check() reads all
    ):
        store.check()
    assert path.read_bytes() == before


def test_a_link_broken_in_place_is_not_saved(path):
    with PersistentMemoryStore(path) as store:
        for m in (memory("m1"), memory("m2")):
            store.add(m)
        store.get("m1").superseded_by = "m2"
        store.get("m2").superseded_by = "m1"  # assignment bypasses supersede's checks
        with pytest.raises(ValueError, match="save would leave the links.*circle"):
            store.save()
        store.get("m1").superseded_by = store.get("m2").superseded_by = None
    assert rows(path) == [("default", "m1", None), ("default", "m2", None)]


# --- the chat turn is all or nothing --------------------------------------------------------


def test_a_failed_chat_turn_neither_refreshes_nor_saves_last_accessed(path, monkeypatch):
    with PersistentMemoryStore(path) as store:
        EMBEDDER.remember(store, "Eric prefers Groq for the default API", now=NOW - DAY)

    def unreachable(*args, **kwargs):
        raise gateway.ModelCallError("the chat model 'x' failed: no route to host")

    monkeypatch.setattr(gateway, "complete", unreachable)
    with PersistentMemoryStore(path) as store:
        with pytest.raises(gateway.ModelCallError):
            chat_with_memory("which API do I prefer?", store, NOW, embedder=EMBEDDER)
        assert store.get("m1").last_accessed == NOW - DAY  # not refreshed by the failed turn
        assert store.unsaved() == []
    with PersistentMemoryStore(path) as reopened:
        assert reopened.get("m1").last_accessed == NOW - DAY and len(reopened) == 1


# --- ids are fixed --------------------------------------------------------------------------


def test_renaming_a_stored_memory_is_refused_so_save_cannot_overwrite_another(path):
    with PersistentMemoryStore(path) as store:
        store.add(memory("m1", "first"))
        store.add(memory("m2", "second"))
        with pytest.raises(ValueError, match="'m1' cannot be renamed to 'm2'.*new Memory"):
            store.get("m1").id = "m2"
        assert store.save() == 0
    with PersistentMemoryStore(path) as reopened:
        assert [(m.id, m.text) for m in reopened] == [("m1", "first"), ("m2", "second")]
