"""Bad input everywhere: a TypeError or ValueError naming the value and the rule, and the
store (in memory and in its file) exactly as it was before the call.

One table of bad calls across memory_store, the persistent store, chat_with_memory,
embedding_helpers, the extensions and the evaluation metrics. Each row is a call, the
error class it must raise and a pattern its message must match (the value, or the rule).
"""

from __future__ import annotations

import pytest

from chat_with_memory import build_messages, chat_with_memory
from conftest import DAY, NOW
from embedding_helpers import Embedder
from evaluation import metrics
from extensions import (
    consolidation,
    context_budget,
    distillation,
    forgetting,
    importance_rating,
    kinds,
    superseding,
    what_to_embed,
)
from memory_store import Memory, MemoryStore, UnknownMemory
from storage.sqlite_store import PersistentMemoryStore, export_jsonl, list_users

E = Embedder("memorylab/hashed-bow-384")
MODEL = E.model


def fill(store):
    E.remember(store, "Eric prefers Groq for the default API", kind="semantic", now=NOW - 10)
    E.remember(store, "brushed teeth", importance=1, now=NOW - 400 * DAY)
    return store


@pytest.fixture
def stores(tmp_path):
    plain = fill(MemoryStore())
    persistent = fill(PersistentMemoryStore(tmp_path / "bad.sqlite3"))
    yield plain, persistent
    persistent.close()


def vec(value=1.0):
    return [value] * 384


def mem(memory_id="m9", **fields):
    fields.setdefault("created_at", NOW)
    fields.setdefault("embedding", vec())
    fields.setdefault("embedding_model", MODEL)
    return Memory(memory_id, fields.pop("text", "a note"), **fields)


def query(store):
    return E.query(store, "which API?")


TURN = {"role": "user", "content": "hello there friend", "time": NOW}

# (id, call(S, P) where S is a plain store and P a persistent one, error, pattern)
CASES = [
    # --- memory_store: Memory ---------------------------------------------------------------
    ("Memory id ''", lambda S, P: mem(""), ValueError, "id must be a non-empty string, got ''"),
    ("Memory id 5", lambda S, P: mem(5), TypeError, "id must be a non-empty string, got 5"),
    ("Memory text None", lambda S, P: mem(text=None), TypeError, "text must be a string"),
    ("Memory text too long", lambda S, P: mem(text="x" * 8001), ValueError, "at most 8,000"),
    ("Memory kind", lambda S, P: mem(kind="fact"), ValueError, "kind must be one of .*'fact'"),
    ("Memory importance 0", lambda S, P: mem(importance=0), ValueError, r"\[1, 10\], got 0"),
    ("Memory importance str", lambda S, P: mem(importance="high"), TypeError, "'high'"),
    ("Memory NaN", lambda S, P: mem(embedding=[float("nan")]), ValueError, "must be finite"),
    ("Memory 1e300", lambda S, P: mem(embedding=[1e300]), ValueError, "float32"),
    ("Memory empty vector", lambda S, P: mem(embedding=[]), ValueError, "at least one value"),
    ("Memory ms time", lambda S, P: mem(created_at=1.7e12), ValueError, "milliseconds"),
    ("Memory metadata 5", lambda S, P: mem(metadata=5), TypeError, "metadata must be a dict"),
    ("Memory user ''", lambda S, P: mem(user_id=""), ValueError, "user_id must be a non-empty"),
    ("Memory surrogate", lambda S, P: mem(text="a\udcffb"), ValueError, "valid Unicode"),
    ("Memory.from_dict []", lambda S, P: Memory.from_dict([]), TypeError, "expected a dict"),
    ("Memory rename", lambda S, P: setattr(S.get("m1"), "id", "m2"), ValueError, "renamed"),
    # --- memory_store: MemoryStore --------------------------------------------------------------
    ("MemoryStore(5)", lambda S, P: MemoryStore(5), ValueError, "embedding_model must be"),
    ("MemoryStore user ''", lambda S, P: MemoryStore(user_id=""), ValueError, "user_id must"),
    ("MemoryStore user 5", lambda S, P: MemoryStore(user_id=5), TypeError, "user_id must"),
    ("add None", lambda S, P: S.add(None), TypeError, "expects a Memory, got NoneType"),
    ("add duplicate", lambda S, P: S.add(mem("m1")), ValueError, "'m1' is already in"),
    ("add other user", lambda S, P: S.add(mem(user_id="bob")), ValueError, "user 'bob'.*'default'"),
    ("add wrong dim", lambda S, P: S.add(mem(embedding=[1.0])), ValueError, "1-dimensional"),
    ("add other model", lambda S, P: S.add(mem(embedding_model="x")), ValueError, "'x'"),
    ("extend None", lambda S, P: S.extend(None), TypeError, "iterable of Memory"),
    ("extend [5]", lambda S, P: S.extend([mem(), 5]), TypeError, "Memory objects, got int"),
    ("get 5", lambda S, P: S.get(5), TypeError, "memory_id must be"),
    ("get missing", lambda S, P: S.get("m99"), UnknownMemory, "no memory with id 'm99'"),
    ("remove None", lambda S, P: S.remove(None), TypeError, "memory_id must be"),
    ("remove missing", lambda S, P: S.remove("m99"), ValueError, "'m99'"),
    ("supersede self", lambda S, P: S.supersede("m1", "m1"), ValueError, "supersede itself"),
    ("supersede missing", lambda S, P: S.supersede("m1", "m99"), ValueError, "'m99'"),
    ("next_id None", lambda S, P: S.next_id(None), TypeError, "prefix must be .* got None"),
    ("next_id ''", lambda S, P: S.next_id(""), ValueError, "prefix must be .* got ''"),
    ("check_query str", lambda S, P: S.check_query("abc"), TypeError, "sequence of numbers"),
    ("check_query len", lambda S, P: S.check_query([1.0]), ValueError, "1 values but .* 384"),
    # --- the persistent store -------------------------------------------------------------------
    ("P path None", lambda S, P: PersistentMemoryStore(None), TypeError, "path must be a file"),
    ("P :memory:", lambda S, P: PersistentMemoryStore(":memory:"), ValueError, "MemoryStore()"),
    ("P user ''", lambda S, P: PersistentMemoryStore(P.path, ""), ValueError, "user_id must"),
    ("P user 5", lambda S, P: PersistentMemoryStore(P.path, 5), TypeError, "user_id must"),
    ("P model", lambda S, P: PersistentMemoryStore(P.path, embedding_model="x"), ValueError, "'x'"),
    ("P add None", lambda S, P: P.add(None), TypeError, "expects a Memory"),
    ("P add bob", lambda S, P: P.add(mem(user_id="bob")), ValueError, "user 'bob'"),
    ("P add dup", lambda S, P: P.add(mem("m1")), ValueError, "'m1' is already in"),
    ("P add set", lambda S, P: P.add(mem(metadata={"a": {1}})), ValueError, "JSON data"),
    ("P next_id None", lambda S, P: P.next_id(None), TypeError, "prefix must be"),
    ("P supersede self", lambda S, P: P.supersede("m1", "m1"), ValueError, "itself"),
    ("P supersede twice", lambda S, P: resupersede(P), ValueError, "already superseded"),
    ("P remove missing", lambda S, P: P.remove("m99"), ValueError, "'m99'"),
    ("P reread None", lambda S, P: P.reread(None), TypeError, "memory_id must be"),
    ("P export self", lambda S, P: P.export_jsonl(P.path), ValueError, "refusing to write"),
    ("export None", lambda S, P: export_jsonl(None, []), TypeError, "store must be a"),
    ("export target 5", lambda S, P: export_jsonl(S, 5), TypeError, "target must be a file"),
    ("list_users None", lambda S, P: list_users(None), TypeError, "path must be a file"),
    # --- embedding_helpers ----------------------------------------------------------------------
    ("Embedder(5)", lambda S, P: Embedder(5), TypeError, "model must be a non-empty string"),
    ("Embedder nope", lambda S, P: Embedder("memorylab/nope"), ValueError, "'memorylab/nope'"),
    ("embed str", lambda S, P: E.embed("abc"), TypeError, "use embed_one"),
    ("embed [None]", lambda S, P: E.embed([None]), TypeError, r"texts\[0\] must be a string"),
    ("remember []", lambda S, P: E.remember([], "x y"), TypeError, "store must be a MemoryStore"),
    ("remember id ''", lambda S, P: E.remember(S, "x y", memory_id=""), ValueError, "memory_id"),
    ("remember id 5", lambda S, P: E.remember(P, "x y", memory_id=5), TypeError, "memory_id"),
    ("remember text ''", lambda S, P: E.remember(S, ""), ValueError, "text must be a non-empty"),
    ("remember kind", lambda S, P: E.remember(P, "x y", kind="fact"), ValueError, "'fact'"),
    ("remember metadata", lambda S, P: E.remember(S, "x y", metadata=[]), TypeError, "metadata"),
    ("remember ms", lambda S, P: E.remember(P, "x y", now=1.7e12), ValueError, "milliseconds"),
    ("remember bob", lambda S, P: E.remember(P, "x y", user_id="bob"), ValueError, "'bob'"),
    ("query None", lambda S, P: E.query(None, "x"), TypeError, "store must be a MemoryStore"),
    ("query ''", lambda S, P: E.query(S, ""), ValueError, "nothing to embed"),
    # --- chat_with_memory -----------------------------------------------------------------------
    ("chat k=0", lambda S, P: chat(S, k=0), ValueError, "k must be an integer >= 1.* got 0"),
    ("chat k=1.5", lambda S, P: chat(P, k=1.5), TypeError, "k must be an integer .* 1.5"),
    ("chat k=True", lambda S, P: chat(S, k=True), TypeError, "got True"),
    ("chat ''", lambda S, P: chat(S, message=""), ValueError, "message must be a non-empty"),
    ("chat None", lambda S, P: chat(P, message=None), TypeError, "message must be"),
    ("chat huge", lambda S, P: chat(P, message="x" * 9000), ValueError, "9,000 characters"),
    ("chat store", lambda S, P: chat([]), TypeError, "store must be a MemoryStore"),
    ("chat now", lambda S, P: chat(P, now="x"), TypeError, "now must be epoch seconds"),
    ("chat now nan", lambda S, P: chat(S, now=float("nan")), ValueError, "finite"),
    ("chat now ms", lambda S, P: chat(P, now=1.7e12), ValueError, "milliseconds"),
    ("chat settings", lambda S, P: chat(S, settings=5), TypeError, "settings must be"),
    ("chat embedder", lambda S, P: chat(S, embedder="x"), TypeError, "embedder must be"),
    ("chat write_back", lambda S, P: chat(P, write_back="yes"), TypeError, "write_back must"),
    ("chat replies", lambda S, P: chat(S, remember_replies=1), TypeError, "remember_replies"),
    ("chat many users", lambda S, P: chat(MemoryStore(user_id=None)), ValueError, "one user's"),
    ("messages None", lambda S, P: build_messages(None, [], NOW), TypeError, "message must"),
    ("messages ['x']", lambda S, P: build_messages("hi", ["x"], NOW), TypeError, r"memories\[0\]"),
    # --- extensions -----------------------------------------------------------------------------
    (
        "keep_reasons 'm12'",
        lambda S, P: forgetting.keep_reasons(S.get("m2"), NOW, linked="m12"),
        TypeError,
        r"linked must be a list or set of memory ids.*\['m12'\]",
    ),
    (
        "keep_reasons 5",
        lambda S, P: forgetting.keep_reasons(S.get("m2"), NOW, linked=5),
        TypeError,
        "linked",
    ),
    ("keep_reasons None", lambda S, P: forgetting.keep_reasons(None, NOW), TypeError, "Memory"),
    ("prune days", lambda S, P: forgetting.prune(P, NOW, older_than_days=-1), ValueError, ">= 0"),
    ("prune 0.3", lambda S, P: forgetting.prune(S, NOW, importance_below=0.3), ValueError, "0-1"),
    ("prune dry_run", lambda S, P: forgetting.prune(P, NOW, dry_run="no"), TypeError, "dry_run"),
    ("prune now", lambda S, P: forgetting.prune(S, None), TypeError, "now must be"),
    (
        "replace None",
        lambda S, P: superseding.replace_fact(S, E, None, "a b", NOW),
        TypeError,
        "memory_id",
    ),
    (
        "replace missing",
        lambda S, P: superseding.replace_fact(P, E, "m99", "a b", NOW),
        ValueError,
        "'m99'",
    ),
    (
        "replace episode",
        lambda S, P: superseding.replace_fact(S, E, "m2", "a b", NOW),
        ValueError,
        "episodic",
    ),
    (
        "replace ''",
        lambda S, P: superseding.replace_fact(P, E, "m1", "", NOW),
        ValueError,
        "a fact",
    ),
    (
        "replace importance",
        lambda S, P: superseding.replace_fact(S, E, "m1", "a b", NOW, importance=0),
        ValueError,
        r"importance must be in \[1, 10\], got 0",
    ),
    (
        "replace metadata",
        lambda S, P: superseding.replace_fact(P, E, "m1", "a b", NOW, metadata=[]),
        TypeError,
        "metadata must be a dict",
    ),
    (
        "replaces 5",
        lambda S, P: superseding.remember_fact(S, E, "a b", NOW, replaces=5),
        TypeError,
        "memory_id",
    ),
    (
        "min_similarity 2",
        lambda S, P: superseding.likely_replaced(S, query(S), min_similarity=2),
        ValueError,
        r"\[-1, 1\]",
    ),
    (
        "exclude 5",
        lambda S, P: superseding.likely_replaced(S, query(S), exclude=5),
        TypeError,
        "exclude",
    ),
    (
        "consolidate size",
        lambda S, P: consolidation.consolidate(P, E, NOW, min_size=1),
        ValueError,
        ">= 2",
    ),
    ("consolidate store", lambda S, P: consolidation.consolidate(None, E, NOW), TypeError, "store"),
    (
        "consolidate embedder",
        lambda S, P: consolidation.consolidate(S, None, NOW),
        TypeError,
        "embedder",
    ),
    (
        "consolidate dry_run",
        lambda S, P: consolidation.consolidate(P, E, NOW, dry_run="x"),
        TypeError,
        "dry_run",
    ),
    (
        "summary ['x']",
        lambda S, P: consolidation.offline_summary(["x"]),
        TypeError,
        r"cluster\[0\]",
    ),
    ("summary []", lambda S, P: consolidation.offline_summary([]), ValueError, "empty cluster"),
    ("by_kind k", lambda S, P: kinds.retrieve_by_kind(P, query(P), NOW, k=0), ValueError, "got 0"),
    (
        "by_kind weights",
        lambda S, P: kinds.rank_by_kind(S, query(S), NOW, weights=(1, 1)),
        ValueError,
        "three numbers",
    ),
    (
        "budget 0",
        lambda S, P: context_budget.fit_to_budget([], 0, NOW),
        ValueError,
        "budget_tokens",
    ),
    (
        "budget memories",
        lambda S, P: context_budget.fit_to_budget(5, 10, NOW),
        TypeError,
        "list of Memory",
    ),
    (
        "budget k",
        lambda S, P: context_budget.recall_within_budget(P, query(P), NOW, budget_tokens=99, k=0),
        ValueError,
        "k must be an integer >= 1",
    ),
    ("rate ''", lambda S, P: importance_rating.rate_importance(""), ValueError, "text to rate"),
    (
        "rate default",
        lambda S, P: importance_rating.parse_rating("7", default=11),
        ValueError,
        "got 11",
    ),
    (
        "rated kind",
        lambda S, P: importance_rating.remember_rated(P, E, "a b", NOW, kind="x"),
        ValueError,
        "'x'",
    ),
    (
        "distill max",
        lambda S, P: distillation.parse_facts("[]", max_facts=0),
        ValueError,
        "max_facts",
    ),
    ("distill str", lambda S, P: distillation.offline_distill("x"), TypeError, "list of dicts"),
    (
        "distill time",
        lambda S, P: distillation.remember_distilled(S, E, [{"content": "x"}], NOW),
        ValueError,
        "'time'",
    ),
    (
        "episodes gap",
        lambda S, P: what_to_embed.group_episodes([], max_gap_minutes=0),
        ValueError,
        "> 0",
    ),
    (
        "episodes importance",
        lambda S, P: what_to_embed.remember_episodes(P, E, [TURN], importance=0),
        ValueError,
        "got 0",
    ),
    ("skip role", lambda S, P: what_to_embed.skip_reason("x", role="bot"), ValueError, "'bot'"),
    # --- evaluation -----------------------------------------------------------------------------
    (
        "recall 'abc'",
        lambda S, P: metrics.recall_at_k("abc", ["a"], 1),
        TypeError,
        r"ranked_ids.*\['abc'\]",
    ),
    ("recall None", lambda S, P: metrics.recall_at_k(None, ["a"], 1), TypeError, "ranked_ids"),
    ("recall [1]", lambda S, P: metrics.recall_at_k([1], ["a"], 1), TypeError, r"ranked_ids\[0\]"),
    (
        "recall evidence 'a'",
        lambda S, P: metrics.recall_at_k(["a"], "ab", 1),
        TypeError,
        "evidence",
    ),
    (
        "recall evidence []",
        lambda S, P: metrics.recall_at_k(["a"], [], 1),
        ValueError,
        "at least one",
    ),
    ("recall k=0", lambda S, P: metrics.recall_at_k(["a"], ["a"], 0), ValueError, "k must be"),
    ("rr 'abc'", lambda S, P: metrics.reciprocal_rank("abc", ["a"]), TypeError, "ranked_ids"),
    ("rr evidence 'a'", lambda S, P: metrics.reciprocal_rank(["a"], "a"), TypeError, "evidence"),
    ("table []", lambda S, P: metrics.format_table([]), ValueError, "at least one report"),
]


def chat(store, message="I like green tea a lot", now=NOW, **kwargs):
    kwargs.setdefault("embedder", E)
    return chat_with_memory(message, store, now, **kwargs)


def resupersede(store):
    with store.transaction():  # both steps, then undone by the failure of the second
        store.supersede("m2", "m1")
        store.supersede("m2", "m1")


def snapshot(store) -> list[dict]:
    return [m.to_dict() for m in store]


def test_the_table_covers_at_least_sixty_bad_calls_with_unique_names():
    assert len(CASES) >= 60
    assert len({name for name, *_ in CASES}) == len(CASES)


@pytest.mark.parametrize(("name", "call", "error", "pattern"), CASES, ids=[c[0] for c in CASES])
def test_a_bad_call_names_the_value_and_rule_and_changes_nothing(
    stores, name, call, error, pattern
):
    plain, persistent = stores
    before_plain, before_persistent = snapshot(plain), snapshot(persistent)
    with pytest.raises(error, match=pattern):
        call(plain, persistent)
    assert snapshot(plain) == before_plain
    assert snapshot(persistent) == before_persistent and persistent.unsaved() == []
    with PersistentMemoryStore(persistent.path) as reopened:  # and the file is unchanged too
        assert snapshot(reopened) == before_persistent
