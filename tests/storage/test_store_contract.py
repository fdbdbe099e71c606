"""One contract, every backend: the SQLite file and PostgreSQL stores (and, where it applies,
the in-memory MemoryStore) must behave alike, so the two persistent stores cannot drift.

Each test gets a `backend` that opens stores by user: `backend.open("alice")` is a new
connection to the same place (a second process, as far as the store can tell), and
`backend.user("alice")` the user id actually used (PostgreSQL tests share one server, so
their users are made unique). File-level behaviour that only SQLite has (-wal, damaged
files, permissions) stays in test_sqlite_store.py.
"""

from __future__ import annotations

import json
import re

import pytest

from chat_with_memory import chat_with_memory
from conftest import DAY, HOUR, NOW, POOL_LEAK
from embedding_helpers import Embedder
from llm.memory_block import parse_memory_block
from memory_store import EmbeddingModelMismatch, Memory, MemoryStore
from retriever import rank_memories, retrieve

EMBEDDER = Embedder("memorylab/hashed-bow-384")
PERSISTENT = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
EVERY = ["memory", *PERSISTENT]


class Backend:
    """Opens stores of one kind at one place (a file, a database), user by user."""

    def __init__(self, kind: str, tmp_path) -> None:
        self.kind = kind
        self.opened: list[MemoryStore] = []
        if kind == "sqlite":
            self.path = tmp_path / "memories.sqlite3"
        elif kind == "postgres":
            import pg_fixtures

            self.url = pg_fixtures.lab_database()
            self._users: dict[str, str] = {}
            self._unique = pg_fixtures.unique

    def user(self, name: str) -> str:
        if self.kind != "postgres":
            return name
        return self._users.setdefault(name, self._unique(name))

    def open(self, name: str = "alice", embedding_model: str | None = None) -> MemoryStore:
        if self.kind == "memory":
            return MemoryStore(embedding_model)
        return self.open_exactly(self.user(name), embedding_model)

    def open_exactly(self, user_id, embedding_model: str | None = None) -> MemoryStore:
        """A persistent store of `user_id` as given (not made unique), e.g. a bad one."""
        if self.kind == "sqlite":
            from storage.sqlite_store import PersistentMemoryStore

            store = PersistentMemoryStore(self.path, user_id, embedding_model)
        else:
            from storage.postgres_store import PostgresMemoryStore

            store = PostgresMemoryStore(self.url, user_id, embedding_model)
        self.opened.append(store)
        return store

    def others_see_nothing(self) -> bool:
        """True if another connection finds no memory (of this test's users) yet."""
        if self.kind == "memory":
            return True
        if self.kind == "sqlite":  # read-only: a writer's open transaction holds the lock
            from storage.sqlite_store import list_users

            return list_users(self.path) == []
        return len(self.open()) == 0

    def close_all(self) -> None:
        for store in self.opened:
            if hasattr(store, "close"):
                store.close()


@pytest.fixture
def backend(request, tmp_path):
    made = Backend(request.param, tmp_path)
    yield made
    made.close_all()


def memory(memory_id, text="a note", **fields) -> Memory:
    fields.setdefault("created_at", NOW - DAY)
    fields.setdefault("embedding", [1.0, 0.0, 0.0])
    return Memory(memory_id, text, **fields)


def rows(store) -> list[tuple]:
    return [(m.id, m.superseded_by, m.importance) for m in store]


# --- surviving a restart -------------------------------------------------------------------


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
@pytest.mark.parametrize(
    "vector",
    [
        [0.5, -0.25, 2.0**-20],  # float32 values: exact in both backends
        [0.1, 1 / 3, -2.5e-30],  # rounded to float32 once, when made, then kept exactly
    ],
    ids=["float32", "rounded-once"],
)
def test_every_field_survives_closing_and_reopening(backend, vector):
    originals = [
        memory(
            "m1",
            "Eric prefers Groq, 'quoted' and \"double\" % _ é 😀",
            kind="semantic",
            importance=8,
            created_at=NOW - 2 * DAY,
            last_accessed=NOW - HOUR,
            embedding=vector,
            embedding_model="hand-rolled",
            metadata={"role": "user", "tags": ["api", "é"], "score": 0.5, "nul": "a\x00b"},
        ),
        memory("m2", "Eric now prefers Ollama", importance=6.5, embedding_model="hand-rolled"),
    ]
    store = backend.open()
    for m in originals:
        store.add(m)
    store.supersede("m1", "m2")
    store.close()
    reopened = backend.open()
    assert [m.to_dict() for m in reopened] == [m.to_dict() for m in originals]
    assert reopened.embedding_model == "hand-rolled" and reopened.dimension == 3
    assert [m.id for m in reopened.live()] == ["m2"]


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_a_reopened_store_ranks_exactly_as_before(backend):
    store = backend.open()
    for i in range(6):
        text = f"note {i} about the default API" if i % 2 else f"lunch plan {i}"
        EMBEDDER.remember(store, text, importance=1 + i, now=NOW - i * HOUR)
    query = EMBEDDER.query(store, "which API?")
    before = [(r.memory.id, r.score) for r in rank_memories(store, query, NOW)]
    store.close()
    after = [(r.memory.id, r.score) for r in rank_memories(backend.open(), query, NOW)]
    assert after == before  # vectors float32 when made: nothing changes across a restart


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_a_memory_is_stored_as_soon_as_add_returns(backend):
    writer = backend.open()
    writer.add(memory("m1"))
    assert "m1" in backend.open()  # a second connection; the writer still open and unsaved


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
@pytest.mark.parametrize("change", ["remove", "supersede"])
def test_remove_and_supersede_write_through(backend, change):
    store = backend.open()
    store.add(memory("m1"))
    store.add(memory("m2"))
    getattr(store, change)(*(["m1"] if change == "remove" else ["m1", "m2"]))
    assert [m.id for m in backend.open().live()] == ["m2"]


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_a_touch_by_the_unchanged_retriever_is_saved_and_stays_warm_after_reopening(backend):
    store = backend.open()
    EMBEDDER.remember(store, "Eric prefers Groq for the default API", now=NOW - DAY)
    EMBEDDER.remember(store, "The team lunch is on Friday", now=NOW - DAY)
    [top] = retrieve(store, EMBEDDER.query(store, "which API?"), now=NOW, k=1)
    assert [m.id for m in store.unsaved()] == [top.id] == ["m1"]
    assert backend.open().get("m1").last_accessed == pytest.approx(NOW - DAY)  # not yet saved
    assert store.save() == 1
    assert store.save() == 0
    reopened = backend.open()
    assert reopened.get("m1").last_accessed == pytest.approx(NOW)
    assert reopened.get("m2").last_accessed == pytest.approx(NOW - DAY)


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_an_unsaved_touch_is_lost_only_when_the_store_is_neither_saved_nor_closed(backend):
    store = backend.open()
    store.add(memory("m1"))
    store.get("m1").last_accessed = NOW
    assert backend.open().get("m1").last_accessed == pytest.approx(NOW - DAY)  # not saved yet
    store.close()  # close() saves
    assert backend.open().get("m1").last_accessed == pytest.approx(NOW)


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_a_recall_stamped_before_creation_by_clock_skew_can_be_reopened(backend):
    store = backend.open()
    store.add(memory("m1", created_at=NOW))
    retrieve(store, [1.0, 0.0, 0.0], now=NOW - 2, k=1)  # another machine's clock
    store.close()
    assert backend.open().get("m1").last_accessed == pytest.approx(NOW - 2)


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_save_writes_only_changed_fields_so_two_stores_do_not_undo_each_other(backend):
    first = backend.open()
    first.add(memory("m1"))
    second = backend.open()
    first.get("m1").last_accessed = NOW
    second.get("m1").importance = 9
    first.save()
    second.save()
    m1 = backend.open().get("m1")
    assert (m1.last_accessed, m1.importance) == (pytest.approx(NOW), 9)


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_next_id_never_hands_out_the_same_id_to_two_stores(backend):
    first, second = backend.open(), backend.open()
    ids = [first.next_id(), second.next_id(), first.next_id(), second.next_id()]
    assert len(set(ids)) == 4
    for store, memory_id in zip([first, second, first, second], ids):
        store.add(memory(memory_id))
    assert sorted(m.id for m in backend.open()) == sorted(ids)


@pytest.mark.parametrize("backend", EVERY, indirect=True)
def test_next_id_counts_from_the_store_size(backend):
    store = backend.open()
    store.add(memory("m1"))
    assert store.next_id() == "m2"


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_an_id_taken_by_another_store_is_refused_and_the_store_is_unchanged(backend):
    first, second = backend.open(), backend.open()
    first.add(memory("m1", "first"))
    stored_for = f"'m1' is already stored for user {backend.user('alice')!r}.*another process"
    with pytest.raises(ValueError, match=stored_for):
        second.add(memory("m1", "second"))
    assert second.get("m1").text == "first" and len(second) == 1  # the database's, not its own
    assert [m.text for m in backend.open()] == ["first"]


@pytest.mark.parametrize("backend", EVERY, indirect=True)
def test_metadata_that_json_cannot_hold_is_refused_before_anything_is_stored(backend):
    store = backend.open()
    if backend.kind == "memory":
        pytest.skip("an in-memory store keeps any metadata: nothing is serialised")
    with pytest.raises(ValueError, match="'m1': metadata must be JSON data"):
        store.add(memory("m1", metadata={"when": object()}))
    assert len(store) == 0 and len(backend.open()) == 0


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_a_closed_store_refuses_to_write(backend):
    store = backend.open()
    store.close()
    with pytest.raises(ValueError, match="closed: open it again"):
        store.add(memory("m1"))
    assert len(store) == 0
    store.close()  # twice is fine


# --- one embedding model per user ----------------------------------------------------------


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_a_reopened_store_still_refuses_a_foreign_embedding_model(backend):
    store = backend.open()
    store.add(memory("m1", embedding_model="model-a"))
    store.close()
    reopened = backend.open()
    with pytest.raises(EmbeddingModelMismatch):
        reopened.add(memory("m2", embedding_model="model-b"))
    with pytest.raises(EmbeddingModelMismatch, match="'model-a', not 'model-b'"):
        backend.open(embedding_model="model-b")


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_a_reopened_store_keeps_its_embedders_model_and_refuses_another(backend):
    store = backend.open()
    EMBEDDER.remember(store, "Eric prefers Groq", now=NOW)
    store.close()
    reopened = backend.open()
    assert reopened.embedding_model == EMBEDDER.model and reopened.dimension == 384
    with pytest.raises(EmbeddingModelMismatch, match="hashed-bow-64"):
        Embedder("memorylab/hashed-bow-64").query(reopened, "which API?")
    with pytest.raises(EmbeddingModelMismatch, match="not 'memorylab/hashed-bow-64'"):
        backend.open(embedding_model="memorylab/hashed-bow-64")


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
@pytest.mark.parametrize("how", ["hand-made", "embedders"])
def test_two_stores_cannot_fill_one_user_with_two_models(backend, how):
    first, second = backend.open(), backend.open()
    if how == "embedders":
        EMBEDDER.remember(first, "Eric prefers Groq", now=NOW)
        with pytest.raises(EmbeddingModelMismatch, match="384-dimensional"):
            Embedder("memorylab/hashed-bow-64").remember(second, "Eric prefers Ollama", now=NOW)
        assert [m.text for m in second] == ["Eric prefers Groq"]  # first's, nothing of its own
        return
    first.add(memory("m1", embedding_model="model-a"))
    with pytest.raises(EmbeddingModelMismatch):
        second.add(memory("m2", embedding_model="model-b"))
    assert [m.id for m in second] == ["m1"]
    assert [m.id for m in backend.open()] == ["m1"]


# --- one user per store ----------------------------------------------------------------------


HOSTILE = ["alice'; DROP TABLE memories; --", "%", "_", "alice%", "аlice", "alice\u200b", "ALICE"]


def two_users(backend) -> None:
    """Alice and Bob in one place; Bob's memory matches Alice's question best."""
    alice, bob = backend.open("alice"), backend.open("bob")
    EMBEDDER.remember(alice, "Alice has a cat", now=NOW - DAY)
    EMBEDDER.remember(bob, "Bob decided the default API is Groq", importance=10, now=NOW)
    alice.close(), bob.close()


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_a_store_holds_only_its_own_users_memories(backend):
    two_users(backend)
    alice, bob = backend.open("alice"), backend.open("bob")
    mine = ("m1", backend.user("alice"), "Alice has a cat")
    assert [(m.id, m.user_id, m.text) for m in alice] == [mine]
    assert [m.user_id for m in bob] == [backend.user("bob")]
    if backend.kind == "sqlite":
        from storage.sqlite_store import list_users

        assert list_users(backend.path) == ["alice", "bob"]


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_each_user_counts_ids_from_m1(backend):
    two_users(backend)
    assert (backend.open("alice").next_id(), backend.open("bob").next_id()) == ("m2", "m2")


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_another_users_memory_is_refused_and_an_unassigned_one_is_claimed(backend):
    store = backend.open("alice")
    alice, bob = backend.user("alice"), backend.user("bob")
    with pytest.raises(
        ValueError, match=f"belongs to user {bob!r}.*only the memories of user {alice!r}"
    ):
        store.add(memory("m1", user_id=bob))
    assert store.add(memory("m1")).user_id == alice  # "default": not yet anyone's
    if backend.kind == "sqlite":
        from storage.sqlite_store import list_users

        assert list_users(backend.path) == ["alice"]


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
@pytest.mark.parametrize(
    ("user_id", "error"), [("", ValueError), ("  ", ValueError), (None, TypeError)]
)
def test_a_store_needs_a_user(backend, user_id, error):
    with pytest.raises(error, match="user_id must be a non-empty string"):
        backend.open_exactly(user_id)
    if backend.kind == "sqlite":
        assert not backend.path.exists()


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_hostile_and_look_alike_user_ids_stay_apart(backend):
    # Cyrillic "а", a zero-width space, SQL quotes, LIKE wildcards: each its own user
    names = ["alice", *HOSTILE]
    for i, name in enumerate(names):
        store = backend.open(name)
        store.add(memory("m1", f"secret of user {i}"))
        store.close()
    for i, name in enumerate(names):
        store = backend.open(name)
        assert [(m.id, m.text, m.user_id) for m in store] == [
            ("m1", f"secret of user {i}", backend.user(name))
        ]
        assert store.next_id() == "m2"


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_recall_and_the_prompt_never_reach_another_users_memory(backend):
    two_users(backend)
    alice = backend.open("alice")
    recalled = retrieve(alice, EMBEDDER.query(alice, "which default API?"), now=NOW, k=10)
    assert [m.text for m in recalled] == ["Alice has a cat"]
    assert [m.user_id for m in recalled] == [backend.user("alice")]
    question = "which default API did we decide on?"
    result = chat_with_memory(question, alice, now=NOW, k=10, embedder=EMBEDDER)
    prompt = json.dumps(result.messages)
    assert "Bob" not in prompt and "Groq" not in prompt
    block = parse_memory_block(result.messages[0]["content"])
    assert [item["text"] for item in block] == ["Alice has a cat"]


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_export_writes_one_users_memories_as_json_lines_that_load_back(backend, tmp_path):
    store = backend.open("alice")
    backend.open("bob").add(memory("m1", "bob's"))
    store.add(memory("m1", "alice's"))
    store.add(memory("m2", "newer", embedding=[0.0, 0.5, 0.25]))
    store.supersede("m1", "m2")
    target = tmp_path / "alice.jsonl"
    assert store.export_jsonl(target) == 2
    lines = target.read_text(encoding="utf-8").splitlines()
    restored = [Memory.from_dict(json.loads(line)) for line in lines]
    assert [m.to_dict() for m in restored] == [m.to_dict() for m in store]
    assert {m.user_id for m in restored} == {backend.user("alice")}


# --- NUL, which PostgreSQL text cannot hold: refused alike ---------------------------------


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
@pytest.mark.parametrize("field", ["text", "id", "embedding_model"])
def test_a_nul_character_is_refused_alike_by_every_backend(backend, field):
    # (the in-memory store keeps a NUL like any character: it serialises nothing)
    store = backend.open()
    values = {"id": "m1", "text": "a note", "embedding_model": "model-a"}
    values[field] = values[field][:1] + "\x00" + values[field][1:]
    with pytest.raises(ValueError, match=f"{field} must not contain a NUL character"):
        store.add(memory(values.pop("id"), values.pop("text"), **values))
    assert len(store) == 0


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_a_user_id_with_nul_is_refused_alike(backend):
    with pytest.raises(ValueError, match="user_id must not contain a NUL character"):
        backend.open("al\x00ice")


# --- the same limits on every backend (storage/limits.py), before any SQL -------------------

NOT_KEPT = "the in-memory store keeps any value: nothing is serialised, so it has no limit"


class NoSQL:
    """Stands in for a store's connection: any statement at all fails the test."""

    def __getattr__(self, name):
        raise AssertionError(f"SQL ran (connection.{name}) before the value was refused")


def refused_before_sql(store, call, pattern: str) -> None:
    """`call()` raises ValueError matching `pattern` without sending a statement."""
    db, store._db = store._db, NoSQL()
    try:
        with pytest.raises(ValueError, match=pattern):
            call()
    finally:
        store._db = db


def sized_user(backend, size: int) -> str:
    """A user name whose id (as the backend makes it unique) is `size` bytes long."""
    suffix = len(backend.user("probe")) - len("probe")
    return "u" * (size - suffix)


@pytest.mark.parametrize("backend", EVERY, indirect=True)
def test_the_longest_ids_every_backend_can_index_are_stored_and_read_back(backend):
    if backend.kind == "memory":
        pytest.skip(NOT_KEPT)
    name = sized_user(backend, 1_000)
    store = backend.open(name)
    assert len(store.user_id.encode()) == 1_000
    longest = "é" * 499 + "mm"  # 1,000 bytes of UTF-8 in 501 characters
    store.add(memory(longest, embedding_model="e" * 1_000))
    store.add(memory("m2", superseded_by=None, embedding_model="e" * 1_000))
    store.supersede(longest, "m2")
    assert store.next_id("p" * 990).startswith("p" * 990)
    reopened = backend.open(name)
    assert [(m.id, m.superseded_by) for m in reopened] == [(longest, "m2"), ("m2", None)]


@pytest.mark.parametrize("backend", EVERY, indirect=True)
@pytest.mark.parametrize("field", ["id", "superseded_by", "embedding_model"])
def test_an_id_or_model_name_over_1000_bytes_is_refused_alike_before_any_sql(backend, field):
    store = backend.open()
    if backend.kind == "memory":
        pytest.skip(NOT_KEPT)
    store.add(memory("m1"))
    too_long = "é" * 500 + "x"  # 1,001 bytes, though only 501 characters
    values = {"id": "m2", field: too_long}
    name = "memory id" if field == "id" else field
    pattern = (
        f"{name} must be at most 1,000 bytes of UTF-8 .PostgreSQL indexes .*, "
        "got 1,001 bytes: 'éééééééééééééééééééééééé...'"
    )
    refused_before_sql(store, lambda: store.add(memory(values.pop("id"), **values)), pattern)
    assert [m.id for m in store] == ["m1"] and [m.id for m in backend.open()] == ["m1"]


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_a_user_id_or_a_fixed_model_over_1000_bytes_is_refused_before_opening(backend):
    with pytest.raises(ValueError, match="user_id must be at most 1,000 bytes .*got 1,001 bytes"):
        backend.open_exactly("u" * 1_001)
    with pytest.raises(ValueError, match="embedding_model must be at most 1,000 bytes"):
        backend.open(embedding_model="e" * 1_001)
    if backend.kind == "sqlite":
        assert not backend.path.exists()  # refused before the file was made


@pytest.mark.parametrize("backend", EVERY, indirect=True)
def test_an_id_prefix_over_1000_bytes_is_refused_before_any_sql(backend):
    store = backend.open()
    if backend.kind == "memory":
        pytest.skip(NOT_KEPT)
    pattern = "prefix must be at most 1,000 bytes of UTF-8 .*got 1,001 bytes"
    refused_before_sql(store, lambda: store.next_id("p" * 1_001), pattern)


@pytest.mark.parametrize("backend", EVERY, indirect=True)
def test_metadata_over_64_kib_of_json_is_refused_alike_and_64_kib_is_kept(backend):
    store = backend.open()
    if backend.kind == "memory":
        pytest.skip(NOT_KEPT)
    fits = {"blob": "x" * (65_536 - len('{"blob": ""}'))}  # 65,536 bytes as JSON, exactly
    store.add(memory("m1", metadata=fits))
    shown = repr('{"blob": "' + "x" * 14 + "...")  # the JSON, cut to 24 characters
    pattern = (
        "metadata of memory 'm2' must be at most 65,536 bytes of JSON .small extras.*"
        f"got 65,537 bytes: {re.escape(shown)}"
    )
    too_big = {"blob": fits["blob"] + "x"}
    refused_before_sql(store, lambda: store.add(memory("m2", metadata=too_big)), pattern)
    store.get("m1").metadata = too_big  # in place: save() must refuse it just the same
    refused_before_sql(store, store.save, pattern.replace("'m2'", "'m1'"))
    store.get("m1").metadata = fits
    assert backend.open().get("m1").metadata == fits


@pytest.mark.parametrize("backend", EVERY, indirect=True)
def test_an_embedding_over_16000_values_is_refused_alike_and_16000_are_kept(backend):
    store = backend.open()
    if backend.kind == "memory":
        pytest.skip(NOT_KEPT)
    pattern = (
        r"embedding of memory 'm2' must have at most 16,000 values "
        r".pgvector's vector type holds no more., got 16,001"
    )
    too_many = memory("m2", embedding=[1.0] * 16_001)
    refused_before_sql(store, lambda: store.add(too_many), pattern)
    refused_before_sql(store, lambda: store.extend([too_many]), pattern)
    store.add(memory("m1", embedding=[0.5] * 16_000))
    assert backend.open().get("m1").embedding == (0.5,) * 16_000


@pytest.mark.parametrize("backend", EVERY, indirect=True)
@pytest.mark.parametrize("field", ["text", "id", "superseded_by", "embedding_model"])
def test_a_nul_the_memory_let_through_is_refused_by_the_store_before_any_sql(backend, field):
    # Memory refuses NUL itself today; the store must not rely on that: it is the store's
    # rule (PostgreSQL text cannot hold NUL), so it is forced past Memory's own check here.
    store = backend.open()
    if backend.kind == "memory":
        pytest.skip(NOT_KEPT)
    store.add(memory("m1"))
    fresh = memory("m2", embedding_model=None)
    object.__setattr__(fresh, field, {"id": "m\x002"}.get(field, "m\x001"))
    name = "memory id" if field == "id" else field
    pattern = f"{name} must not contain a NUL character"
    refused_before_sql(store, lambda: store.add(fresh), pattern)
    refused_before_sql(store, lambda: store.extend([fresh]), pattern)
    if field != "id":  # in place, then saved: refused just the same
        held = store.get("m1")
        object.__setattr__(held, field, "m\x001")  # unseen by the store: looked at with only=
        refused_before_sql(store, lambda: store.save(only=[held]), pattern)
        object.__setattr__(store.get("m1"), field, {"text": "a note"}.get(field))
    assert [m.id for m in backend.open()] == ["m1"]


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_a_nul_in_an_id_prefix_or_a_looked_up_id_is_refused_before_any_sql(backend):
    store = backend.open()
    pattern = "must not contain a NUL character"
    refused_before_sql(store, lambda: store.next_id("m\x00"), "prefix " + pattern)
    refused_before_sql(store, lambda: store.reread("m\x001"), "memory_id " + pattern)


# --- links between memories, under two stores ------------------------------------------------


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_removing_a_memory_another_store_linked_to_is_refused(backend):
    first = backend.open()
    first.add(memory("m1"))
    first.add(memory("m2"))
    second = backend.open()
    first.supersede("m1", "m2")
    medium = {"sqlite": "file", "postgres": "database"}[backend.kind]
    with pytest.raises(ValueError, match=f"'m2' replaced 'm1'.*in the {medium}"):
        second.remove("m2")
    assert "m2" in second
    assert backend.open().get("m1").superseded_by == "m2"


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_a_removal_the_database_refuses_puts_the_memory_back_in_its_place(backend):
    first = backend.open()
    for memory_id in ("m1", "m2", "m3"):
        first.add(memory(memory_id))
    second = backend.open()
    first.supersede("m1", "m2")
    with pytest.raises(ValueError, match="'m2' replaced 'm1'"):
        second.remove("m2")  # refused by the rows, after the store had let it go
    assert [m.id for m in second] == ["m1", "m2", "m3"]  # the stream's order, not m2 last
    assert second.unsaved() == []


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_superseding_with_a_memory_another_store_removed_is_refused(backend):
    first = backend.open()
    first.add(memory("m1"))
    first.add(memory("m2"))
    second = backend.open()
    first.remove("m2")
    with pytest.raises(ValueError, match="no memory with id 'm2'"):  # the database's answer
        second.supersede("m1", "m2")
    assert second.get("m1").superseded_by is None
    assert [(m.id, m.superseded_by) for m in backend.open()] == [("m1", None)]


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_adding_a_memory_superseded_by_one_another_store_removed_is_refused(backend):
    first = backend.open()
    first.add(memory("m1"))
    second = backend.open()
    first.remove("m1")
    with pytest.raises(ValueError, match="superseded by 'm1', which is not in the store"):
        second.add(memory("m2", superseded_by="m1"))
    assert "m2" not in second and len(backend.open()) == 0


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_two_stores_superseding_from_stale_views_cannot_make_a_cycle(backend):
    first = backend.open()
    first.add(memory("m1"))
    first.add(memory("m2"))
    second = backend.open()
    first.supersede("m1", "m2")
    with pytest.raises(ValueError):
        second.supersede("m2", "m1")  # second still thinks m1 is live
    assert [m.id for m in backend.open().live()] == ["m2"]


# --- transactions --------------------------------------------------------------------------


class Interrupted(Exception):
    """Raised inside a transaction to stand for any failure halfway through."""


@pytest.mark.parametrize("backend", EVERY, indirect=True)
def test_a_failed_transaction_leaves_the_store_as_it_was(backend):
    store = backend.open()
    store.add(memory("m1"))
    with pytest.raises(Interrupted), store.transaction():
        store.add(memory("m2"))
        store.supersede("m1", "m2")
        store.get("m1").importance = 9
        store.save()
        raise Interrupted
    assert rows(store) == [("m1", None, 5)]
    if backend.kind != "memory":
        assert store.unsaved() == []
        assert rows(backend.open()) == [("m1", None, 5)]


@pytest.mark.parametrize("backend", EVERY, indirect=True)
def test_a_transaction_is_written_when_its_block_ends_and_joins_nested_ones(backend):
    store = backend.open()
    with store.transaction():
        store.add(memory("m1"))
        with store.transaction():  # nested: joins the outer one
            store.add(memory("m2"))
        store.supersede("m1", "m2")
        assert backend.others_see_nothing()  # another connection sees nothing yet
    assert rows(store) == [("m1", "m2", 5), ("m2", None, 5)]
    if backend.kind != "memory":
        assert rows(backend.open()) == [("m1", "m2", 5), ("m2", None, 5)]


@pytest.mark.parametrize("backend", EVERY, indirect=True)
def test_a_failed_nested_step_that_is_caught_leaves_the_block_usable(backend):
    store = backend.open()
    store.add(memory("m1"))
    with store.transaction():
        with pytest.raises(ValueError, match="already (in the store|stored)"):
            store.add(memory("m1"))
        store.add(memory("m2"))
    assert [m.id for m in store] == ["m1", "m2"]
    if backend.kind != "memory":
        assert [m.id for m in backend.open()] == ["m1", "m2"]


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_a_block_whose_transaction_the_database_ended_writes_nothing_more(backend):
    store = backend.open()
    with pytest.raises(RuntimeError, match="ended this block's transaction"), store.transaction():
        store.add(memory("m1"))
        store._db.execute("ROLLBACK")  # what SQLite does by itself after some I/O errors
        store.add(memory("m2"))  # must not begin a transaction of its own and commit it
    assert len(store) == 0 and len(backend.open()) == 0


@pytest.mark.parametrize("backend", EVERY, indirect=True)
def test_extend_links_forwards_and_a_bad_batch_changes_nothing(backend):
    store = backend.open()
    store.extend([memory("m1", superseded_by="m2"), memory("m2")])
    assert rows(store) == [("m1", "m2", 5), ("m2", None, 5)]
    with pytest.raises(ValueError, match="neither in the store nor in this batch"):
        store.extend([memory("m3"), memory("m4", superseded_by="m9")])
    assert [m.id for m in store] == ["m1", "m2"]
    if backend.kind != "memory":
        assert rows(backend.open()) == [("m1", "m2", 5), ("m2", None, 5)]


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_a_batch_holding_an_id_another_store_took_is_refused_whole(backend):
    first, second = backend.open(), backend.open()
    second.add(memory("m2", "taken"))
    with pytest.raises(ValueError, match="already stored"):
        first.extend([memory("m1"), memory("m2")])
    assert [m.text for m in first] == ["taken"]  # nothing of the batch
    assert [m.text for m in backend.open()] == ["taken"]


# --- multi-step changes, checked against the store's current rows ---------------------------
# Each opens two stores on one place (two processes, as far as they can tell); the second
# acts on what it read at opening, and must be refused, writing nothing.


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_a_stale_replace_fact_is_refused_so_one_fact_keeps_one_live_version(backend):
    from extensions.superseding import replace_fact

    first = backend.open()
    EMBEDDER.remember(first, "Eric prefers Groq for the default API", kind="semantic", now=NOW)
    second = backend.open()
    replace_fact(first, EMBEDDER, "m1", "Eric now prefers OpenAI for the default API", NOW)
    with pytest.raises(ValueError, match="'m1' was already replaced by 'm2'"):
        replace_fact(second, EMBEDDER, "m1", "Eric now prefers Ollama for the default API", NOW)
    assert len(second) == 2  # first's two, and nothing of the fact it began to write
    assert rows(backend.open()) == [("m1", "m2", 5), ("m2", None, 5)]


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_a_second_consolidation_of_the_same_episodes_sees_the_archive_and_writes_no_fact(backend):
    from extensions.consolidation import consolidate

    first = backend.open()
    for i, text in enumerate(POOL_LEAK):
        EMBEDDER.remember(first, text, now=NOW - (10 - i) * DAY)
    second = backend.open()
    assert len(consolidate(first, EMBEDDER, NOW)) == 1
    assert consolidate(second, EMBEDDER, NOW) == []  # opened before: it reads the rows now
    assert len(second) == 6 and [m.id for m in second.live()] == ["m6"]
    stored = backend.open()
    assert [m.id for m in stored] == [f"m{i}" for i in range(1, 7)]
    assert [m.id for m in stored.live()] == ["m6"]


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_a_prune_opened_earlier_keeps_a_memory_another_store_recalled_since(backend):
    from extensions.forgetting import prune

    first = backend.open()
    first.add(memory("m1", "brushed teeth", importance=1, created_at=NOW - 400 * DAY))
    second = backend.open()
    retrieve(first, [1.0, 0.0, 0.0], NOW, k=1)  # recalled: it must stay
    first.save()
    assert prune(second, NOW) == []  # it reads the recall another store saved
    assert "m1" in second and [m.id for m in backend.open()] == ["m1"]


# --- stale clients: every write is compare-and-set ---------------------------------------------
# Two stores on one place are two clients: A holds memories it read, B changes the rows.


def stale_pair(backend, *memories):
    """(A, B): A holds `memories` (added and read), B is a second client of the same user."""
    a = backend.open()
    a.extend(memories)
    held = {m.id: m for m in a}
    return a, backend.open(), held


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_a_stale_in_place_link_is_refused_naming_the_memory_and_the_user_stays_usable(backend):
    from storage.store import StaleMemory

    a, b, held = stale_pair(backend, memory("m1"), memory("m2"), memory("m3"))
    b.supersede("m1", "m2")  # B: m1 -> m2
    held["m1"].superseded_by = "m3"  # A, from its stale copy: m1 -> m3
    with pytest.raises(StaleMemory, match="memory 'm1' was changed by another writer") as refused:
        a.save()
    assert "superseded_by" in str(refused.value) and "Nothing was saved" in str(refused.value)
    assert held["m1"].superseded_by == "m2"  # A now shows what the database holds
    assert a.save() == 0  # and has nothing left to write
    fresh = backend.open()
    assert [(m.id, m.superseded_by) for m in fresh] == [("m1", "m2"), ("m2", None), ("m3", None)]
    fresh.check()  # the user opens and reads whole: never left inconsistent


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_a_stale_field_edit_is_refused_and_a_recall_time_is_not(backend):
    from storage.store import StaleMemory

    a, b, held = stale_pair(backend, memory("m1"), memory("m2"))
    b.get("m1").importance = 9
    b.save()
    held["m1"].importance = 2  # A still read 5
    held["m2"].last_accessed = NOW + HOUR  # a recall: written whatever others did
    with pytest.raises(StaleMemory, match="'m1'.*importance.*is now 9, not 5"):
        a.save()
    assert a.save() == 1  # m2's recall, on the second try; m1 shows B's value
    assert [(m.id, m.importance, m.last_accessed) for m in backend.open()] == [
        ("m1", 9, NOW - DAY),
        ("m2", 5, NOW + HOUR),
    ]


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_a_save_of_a_memory_another_client_removed_says_so_and_forgets_it(backend):
    from storage.store import StaleMemory

    a, b, _ = stale_pair(backend, memory("m1"), memory("m3", embedding=[0.0, 1.0, 0.0]))
    assert [m.id for m in retrieve(a, [0.0, 1.0, 0.0], NOW, k=1)] == ["m3"]  # touched
    b.remove("m3")
    with pytest.raises(StaleMemory, match="memory 'm3' was removed .* by another writer"):
        a.save()  # not `1`: nothing was written
    assert "m3" not in a and [m.id for m in a] == ["m1"]
    assert [m.id for m in retrieve(a, [0.0, 1.0, 0.0], NOW, k=1)] == ["m1"]  # m3 not recalled
    assert a.save() == 1


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_recall_never_returns_a_memory_another_client_superseded(backend):
    a, b, held = stale_pair(backend, memory("m1", importance=9), memory("m2", importance=1))
    assert [m.id for m in retrieve(a, [1.0, 0.0, 0.0], NOW, k=1)] == ["m1"]
    a.save()
    b.supersede("m1", "m2")
    assert [m.id for m in retrieve(a, [1.0, 0.0, 0.0], NOW, k=2)] == ["m2"]
    assert held["m1"].superseded_by == "m2"  # the copy A holds follows the row


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_an_in_place_link_is_checked_against_the_rows_not_a_stale_copy(backend):
    a, b, held = stale_pair(backend, memory("m1"), memory("m2"))
    b.supersede("m1", "m2")  # m1 -> m2 in the database; A's m1 still says live
    held["m2"].superseded_by = "m1"  # with A's copy alone, no circle is seen
    with pytest.raises(ValueError, match="circle: m2 -> m1 -> m2"):
        a.save()
    held["m2"].superseded_by = None  # (as the caller would: the edit stays unsaved until then)
    assert [(m.id, m.superseded_by) for m in backend.open()] == [("m1", "m2"), ("m2", None)]


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_an_in_place_link_to_a_memory_another_client_removed_is_not_saved(backend):
    a, b, held = stale_pair(backend, memory("m1"), memory("m2"))
    b.remove("m2")
    held["m1"].superseded_by = "m2"  # A still holds m2
    with pytest.raises(ValueError, match="'m1' is superseded by 'm2', which is not stored"):
        a.save()
    held["m1"].superseded_by = None
    assert [(m.id, m.superseded_by) for m in backend.open()] == [("m1", None)]


# --- the database is the source of truth -------------------------------------------------------


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_a_store_sees_what_another_client_added_without_reopening(backend):
    a, b = backend.open(), backend.open()
    a.add(memory("m1"))
    assert len(b) == 1 and "m1" in b and b.get("m1").text == "a note"
    assert [m.id for m in b] == ["m1"]


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_iterating_hands_out_one_object_per_memory_and_save_writes_its_touches(backend):
    store = backend.open()
    store.extend(memory(f"m{i}", created_at=NOW - i * DAY) for i in range(2_500))  # 3 batches
    first = list(store)
    assert [m.id for m in first] == [f"m{i}" for i in range(2_500)]
    assert all(x is y for x, y in zip(first, store))  # the same objects the second time
    assert store.get("m7") is first[7]
    first[2_400].last_accessed = NOW
    assert store.unsaved() == [first[2_400]] and store.save() == 1
    assert backend.open().get("m2400").last_accessed == NOW


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_a_transaction_checks_the_links_of_what_it_touched_only(backend):
    store = backend.open()
    store.extend([memory("m1"), memory("m2")])
    a = store.get("m1")
    with pytest.raises(Interrupted), store.transaction():
        store.add(memory("m3"))
        a.importance = 9  # in place: the journal keeps its old value
        raise Interrupted
    assert a.importance == 5 and "m3" not in store
    with pytest.raises(ValueError, match="circle: m1 -> m2 -> m1"), store.transaction():
        store.supersede("m1", "m2")
        store.get("m2").superseded_by = "m1"  # in place, inside the block: checked at its end
    assert [(m.id, m.superseded_by) for m in backend.open()] == [("m1", None), ("m2", None)]


# --- redaction and limits, in the store layer ----------------------------------------------


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_secrets_are_redacted_by_the_store_whatever_adds_them(backend):
    store = backend.open()
    store.add(memory("m1", "my password: hunter2hunter2, remember it"))
    store.extend([memory("m2", metadata={"url": "postgresql://lab:s3cret-pw@db.example/lab"})])
    store.add(memory("m3", "fine"))
    store.get("m3").text = "the api_key=abcd1234efgh is set"
    store.save()
    texts = [(m.text, m.metadata) for m in backend.open()]
    assert texts == [
        ("my password: [redacted], remember it", {}),
        ("a note", {"url": "postgresql://lab:[redacted]@db.example/lab"}),
        ("the api_key=[redacted] is set", {}),
    ]
    assert "hunter2" not in json.dumps(texts) and "s3cret" not in json.dumps(texts)


@pytest.mark.parametrize(
    ("user_id", "model", "pattern"),
    [
        ("u" * 1_001, None, "user_id must be at most 1,000 bytes"),
        ("alice", "m" * 1_001, "embedding_model must be at most 1,000 bytes"),
        ("al\x00ice", None, "user_id must not contain a NUL"),
    ],
    ids=["user-id", "model-name", "nul"],
)
def test_postgres_refuses_a_name_it_cannot_keep_before_connecting(user_id, model, pattern):
    from storage.postgres_store import PostgresMemoryStore

    closed_port = "postgresql://lab:pw@127.0.0.1:9/none"  # connecting would fail otherwise
    with pytest.raises(ValueError, match=pattern):
        PostgresMemoryStore(closed_port, user_id, model)


# --- metadata changed in place -------------------------------------------------------------


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_metadata_changed_in_place_is_saved_like_an_assignment(backend):
    store = backend.open()
    store.add(memory("m1", metadata={"source": "chat"}))
    store.add(memory("m2", metadata={"a": 1, "b": 2}))
    first, second = store.get("m1"), store.get("m2")
    first.metadata["reviewed"] = True  # no assignment to the memory: only to its dict
    second.metadata.pop("a")
    second.metadata.update(c=3)
    assert sorted(m.id for m in store.unsaved()) == ["m1", "m2"]
    assert store.save() == 2
    reopened = backend.open()
    assert reopened.get("m1").metadata == {"source": "chat", "reviewed": True}
    assert reopened.get("m2").metadata == {"b": 2, "c": 3}


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.__setitem__("x", 1),
        lambda d: d.__delitem__("keep"),
        lambda d: d.clear(),
        lambda d: d.pop("keep"),
        lambda d: d.popitem(),
        lambda d: d.setdefault("x", 1),
        lambda d: d.update({"x": 1}),
        lambda d: d.__ior__({"x": 1}),
    ],
    ids=["set", "del", "clear", "pop", "popitem", "setdefault", "update", "|="],
)
def test_every_way_of_changing_metadata_in_place_reaches_the_database(backend, change):
    store = backend.open()
    store.add(memory("m1", metadata={"keep": "me"}))
    held = store.get("m1")
    change(held.metadata)
    expected = dict(held.metadata)
    store.close()  # close() saves
    assert backend.open().get("m1").metadata == expected


@pytest.mark.parametrize("backend", EVERY, indirect=True)
def test_metadata_changed_in_place_in_a_failed_block_is_put_back_and_still_tracked(backend):
    store = backend.open()
    store.add(memory("m1", metadata={"n": 1}))
    held = store.get("m1")
    with pytest.raises(Interrupted), store.transaction():
        held.metadata["n"] = 2
        raise Interrupted
    assert held.metadata == {"n": 1}
    held.metadata["n"] = 3  # after the roll-back, an in-place change is still seen
    if backend.kind != "memory":
        assert store.save() == 1
        assert backend.open().get("m1").metadata == {"n": 3}


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_metadata_refreshed_from_another_client_is_still_tracked(backend):
    store, other = backend.open(), backend.open()
    store.add(memory("m1", metadata={"n": 1}))
    held = store.get("m1")
    theirs = other.get("m1")
    theirs.metadata = {"n": 2}
    other.save()
    assert store.get("m1") is held and held.metadata == {"n": 2}  # read again: theirs
    held.metadata["mine"] = True
    assert store.save() == 1
    assert backend.open().get("m1").metadata == {"n": 2, "mine": True}


def test_a_copy_of_a_memory_has_its_own_metadata_and_pickles_as_plain_data():
    import copy
    import pickle

    original = memory("m1", metadata={"n": 1})
    duplicate = copy.copy(original)
    duplicate.metadata["n"] = 2
    assert original.metadata == {"n": 1}
    assert type(pickle.loads(pickle.dumps(original.metadata))) is dict
    assert pickle.loads(pickle.dumps(original)).metadata == {"n": 1}


# --- the hybrid's word frequencies, kept up to date from the rows --------------------------


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_word_frequencies_are_kept_by_each_write_and_a_query_reads_no_row(backend, monkeypatch):
    from embeddings import hybrid

    default = Embedder()  # the hybrid: a query weighs its words by their rarity in the store
    store, other = backend.open(), backend.open()
    for text in ["Caroline moved to Lisbon", "Melanie paints sunsets", "Caroline adopted Rex"]:
        default.remember(store, text, now=NOW - DAY)
    read = []
    original = type(store)._from_row
    monkeypatch.setattr(type(store), "_from_row", lambda s, row: read.append(s) or original(s, row))

    def frequencies():
        read.clear()
        counted = hybrid.frequencies_for(store, hybrid.LEXICAL)
        fresh = hybrid.DocumentFrequencies(hybrid.LEXICAL).update(list(backend.open()))
        assert (counted.documents, counted.counts) == (fresh.documents, fresh.counts)
        return sum(1 for s in read if s is store)

    assert frequencies() == 0  # a new store object's first query: the counts, not the rows
    default.remember(other, "Melanie ran a charity race for Rex", now=NOW)  # another client
    assert frequencies() == 0
    other.remove("m2")
    assert frequencies() == 0
    with pytest.raises(ValueError), other.transaction():  # a block that fails counts nothing
        default.remember(other, "Caroline paints too", now=NOW)
        other.remove("m1")
        raise ValueError("changed my mind")
    assert frequencies() == 0
    m1 = other.get("m1")
    m1.embedding = default.memory("x", "Melanie moved to Porto", now=NOW).embedding  # in place
    other.save()
    assert frequencies() == 0
    default.query(store, "Who paints?")  # and the query itself works on what is counted now


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_counts_left_out_of_step_by_a_write_that_kept_none_are_counted_again(backend):
    default = Embedder()
    store = backend.open()
    for text in ["Caroline moved to Lisbon", "Melanie paints sunsets"]:
        default.remember(store, text, now=NOW - DAY)
    writer = backend.open()
    writer._count = lambda *args, **kwargs: None  # as code that keeps no counts writes
    default.remember(writer, "Caroline adopted Rex", now=NOW)
    documents, counts = store.position_counts()
    rows = [m.embedding for m in backend.open()]
    assert documents == 3
    assert counts.tolist() == [sum(1 for v in rows if v[p]) for p in range(len(rows[0]))]


# --- a refused save never wedges the store ----------------------------------------------------


def _relink_to_a_replaced_memory(backend, store) -> str:
    """m2 is linked, in place, to m1, which another process has just replaced by m2: the
    database, not this process, sees the circle m2 -> m1 -> m2."""
    m2 = store.get("m2")
    backend.open().supersede("m1", "m2")
    m2.superseded_by = "m1"
    return "m2"


def _oversized_metadata(backend, store) -> str:
    """70 KB of metadata written in place, past MAX_METADATA_BYTES (64 KiB)."""
    store.get("m2").metadata["notes"] = "x" * 70_000
    return "m2"


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
@pytest.mark.parametrize("trigger", [_relink_to_a_replaced_memory, _oversized_metadata])
def test_a_refused_save_is_reported_set_aside_and_the_store_goes_on(backend, trigger):
    store = backend.open()
    EMBEDDER.remember(store, "Eric prefers Groq for the default API", now=NOW - DAY)
    EMBEDDER.remember(store, "The team lunch is on Friday", now=NOW - DAY)
    refused_id = trigger(backend, store)
    with pytest.raises(ValueError, match=f"{refused_id!r}.*store.refused"):
        store.save()
    aside = store.refused[refused_id]  # the refused change, kept aside for the app to read
    assert aside.memory.id == refused_id and refused_id in aside.reason
    held = store.get(refused_id)
    assert held.superseded_by is None and "notes" not in held.metadata  # as the database holds
    store.get("m1").importance = 9  # a good save
    assert store.save() == 1
    result = chat_with_memory("which API do I prefer?", store, now=NOW, k=2, embedder=EMBEDDER)
    assert result.reply
    store.close()
    reopened = backend.open()
    assert reopened.get("m2").superseded_by is None and "notes" not in reopened.get("m2").metadata
    assert len(reopened) >= 2
