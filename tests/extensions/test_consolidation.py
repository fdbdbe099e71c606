"""consolidation.py: five related episodes become one fact; the episodes are archived, not lost."""

from __future__ import annotations

import pytest

from conftest import DAY, NOW, POOL_LEAK
from embedding_helpers import Embedder
from extensions.consolidation import (
    MIN_CLUSTER_SIZE,
    SUMMARY_PROMPT,
    consolidate,
    find_clusters,
    offline_summary,
    summarise_cluster,
)
from extensions.superseding import fact_history
from memory_store import MemoryStore
from retriever import retrieve

OTHER = ["Eric had lunch with Maya", "ran the weekly backup", "lunch with Maya, talked hiking"]
REAL_MODEL = "openai/gpt-4o-mini"  # answered by litellm's mock_response, never called


@pytest.fixture
def embedder():
    return Embedder("memorylab/hashed-bow-384")


def make_store(embedder, episodes, extra=OTHER):
    store = MemoryStore()
    for i, text in enumerate([*episodes, *extra]):
        embedder.remember(store, text, kind="episodic", importance=4, now=NOW - (30 - i) * DAY)
    return store


@pytest.mark.parametrize(("size", "clusters"), [(4, 0), (5, 1), (6, 1)])
def test_only_clusters_of_at_least_five_are_consolidated(embedder, size, clusters):
    episodes = [*POOL_LEAK, "the connection pool leak is back in the billing API"][:size]
    store = make_store(embedder, episodes)
    results = consolidate(store, embedder, NOW)
    assert len(results) == clusters
    if clusters:
        assert len(results[0].evidence) == size


def test_the_fact_lists_its_evidence_and_the_episodes_are_archived_not_lost(embedder):
    store = make_store(embedder, POOL_LEAK)
    size = len(store)
    (result,) = consolidate(store, embedder, NOW)
    fact = result.fact
    assert fact.kind == "semantic" and fact.importance == 6
    assert fact.metadata["evidence"] == ["m1", "m2", "m3", "m4", "m5"]
    assert len(store) == size + 1  # nothing removed
    for memory_id in fact.metadata["evidence"]:
        assert store.get(memory_id).superseded_by == fact.id
    assert [m.id for m in fact_history(store, fact.id)][-1] == fact.id
    assert len(fact_history(store, fact.id)) == 6


def test_after_consolidation_recall_returns_the_fact_instead_of_the_episodes(embedder):
    store = make_store(embedder, POOL_LEAK)
    (result,) = consolidate(store, embedder, NOW)
    query = embedder.query(store, "what about the connection pool leak?")
    recalled = retrieve(store, query, now=NOW, k=3)
    assert recalled[0] is result.fact
    assert not set(result.fact.metadata["evidence"]) & {m.id for m in recalled}


def test_a_dry_run_reports_the_same_cluster_and_changes_nothing(embedder):
    store = make_store(embedder, POOL_LEAK)
    before = [(m.id, m.superseded_by, m.last_accessed) for m in store]
    (planned,) = consolidate(store, embedder, NOW, dry_run=True)
    assert planned.fact is None and len(planned.evidence) == 5
    assert [(m.id, m.superseded_by, m.last_accessed) for m in store] == before
    (done,) = consolidate(store, embedder, NOW)
    assert done.text == planned.text


def test_a_second_run_finds_nothing_left_to_consolidate(embedder):
    store = make_store(embedder, POOL_LEAK)
    consolidate(store, embedder, NOW)
    assert consolidate(store, embedder, NOW) == []


def test_facts_and_skills_are_never_clustered(embedder):
    store = MemoryStore()
    for text in POOL_LEAK:
        embedder.remember(store, text, kind="semantic", now=NOW)
    assert find_clusters(store) == []


def test_an_empty_store_has_no_clusters(embedder):
    assert find_clusters(MemoryStore()) == []
    assert consolidate(MemoryStore(), embedder, NOW) == []


def test_unrelated_episodes_do_not_join_the_cluster(embedder):
    store = make_store(embedder, POOL_LEAK)
    (cluster,) = find_clusters(store)
    assert [m.text for m in cluster] == POOL_LEAK
    pairs = [[m.id for m in c] for c in find_clusters(store, min_size=2)]
    assert ["m6", "m8"] in pairs  # the two lunches with Maya


def test_the_offline_summary_counts_dates_and_quotes_the_most_typical_episode(embedder):
    store = make_store(embedder, POOL_LEAK, extra=[])
    summary = offline_summary(list(store))
    assert summary.startswith(f"Recurring ({len(POOL_LEAK)} episodes, ")
    assert summary.endswith(POOL_LEAK[0])  # the episode sharing most words with the rest
    assert summary == offline_summary(list(store))  # deterministic


@pytest.mark.slow
@pytest.mark.parametrize(
    ("reply", "source", "expected"),
    [
        ('"The billing API leaks pooled connections."\n', "model", "The billing API leaks"),
        ("   \n  ", "offline (the model's reply was empty)", "Recurring (5 episodes"),
    ],
)
def test_a_real_model_writes_the_fact_and_an_empty_reply_falls_back(
    embedder, reply, source, expected
):
    store = make_store(embedder, POOL_LEAK)
    (result,) = consolidate(store, embedder, NOW, model=REAL_MODEL, mock_response=reply)
    assert result.source == source
    assert result.fact.text.startswith(expected)
    assert result.fact.metadata["source"] == source


@pytest.mark.slow
def test_a_failing_model_falls_back_to_the_offline_summary(embedder, monkeypatch):
    from llm import gateway

    def broken(**kwargs):
        raise ConnectionError("no route to host")

    monkeypatch.setattr(gateway.load_litellm(), "completion", broken)
    store = make_store(embedder, POOL_LEAK)
    text, source = summarise_cluster(list(store)[:5], model=REAL_MODEL)
    assert text.startswith("Recurring") and "no route to host" in source


def test_the_summary_prompt_asks_for_one_standalone_sentence():
    prompt = SUMMARY_PROMPT.format(n=5, notes="- a\n- b", data_not_instructions="")
    assert "ONE standalone sentence" in prompt and "- a\n- b" in prompt


@pytest.mark.parametrize(
    ("kwargs", "error", "pattern"),
    [
        ({"min_size": 1}, ValueError, "min_size must be an integer >= 2"),
        ({"min_size": 2.5}, TypeError, "min_size must be an integer >= 2"),
        ({"min_size": True}, TypeError, "min_size must be an integer >= 2"),
        ({"min_similarity": 2.0}, ValueError, "min_similarity must be a cosine"),
        ({"importance": 0}, ValueError, "importance must be in"),
    ],
)
def test_bad_settings_are_refused_before_anything_is_written(embedder, kwargs, error, pattern):
    store = make_store(embedder, POOL_LEAK)
    with pytest.raises(error, match=pattern):
        consolidate(store, embedder, NOW, **kwargs)
    assert all(m.superseded_by is None for m in store)


def test_an_empty_cluster_cannot_be_summarised():
    with pytest.raises(ValueError, match="empty cluster"):
        offline_summary([])
    with pytest.raises(ValueError, match="empty cluster"):
        summarise_cluster([])


def test_the_default_cluster_size_is_the_courses_five():
    assert MIN_CLUSTER_SIZE == 5


def test_a_cluster_never_mixes_two_users_episodes(embedder):
    store = MemoryStore(user_id=None)  # the many-user store under the index
    for i, text in enumerate(POOL_LEAK):
        memory = embedder.remember(store, text, now=NOW - i * DAY)
        memory.user_id = "alice" if i < 3 else "bob"
    assert find_clusters(store) == []
    assert [{m.user_id for m in c} for c in find_clusters(store, min_size=2)] == [
        {"alice"},
        {"bob"},
    ]


def test_the_fact_belongs_to_the_user_whose_episodes_it_sums_up(embedder):
    store = MemoryStore(user_id="alice")
    for i, text in enumerate(POOL_LEAK):
        embedder.remember(store, text, kind="episodic", importance=4, now=NOW - (30 - i) * DAY)
    (result,) = consolidate(store, embedder, NOW)
    assert result.fact.user_id == "alice"


BACKUP = [
    "the weekly backup of the NAS failed",
    "weekly backup of the NAS failed again",
    "reran the failed weekly NAS backup",
    "the NAS weekly backup failed overnight",
    "weekly backup failed: the NAS disk is full",
]


def test_a_failure_while_archiving_leaves_every_episode_live_and_no_fact(embedder, monkeypatch):
    store = make_store(embedder, POOL_LEAK)
    before = [(m.id, m.superseded_by) for m in store]
    real_supersede, calls = store.supersede, []

    def flaky_supersede(old_id, new_id):
        calls.append(old_id)
        if len(calls) == 3:
            raise RuntimeError("the store file is locked")
        real_supersede(old_id, new_id)

    monkeypatch.setattr(store, "supersede", flaky_supersede)
    with pytest.raises(RuntimeError, match="locked"):
        consolidate(store, embedder, NOW)
    assert [(m.id, m.superseded_by) for m in store] == before  # no fact, no dangling link


def test_every_summary_is_written_before_any_store_change(embedder, monkeypatch):
    from extensions import consolidation

    store = make_store(embedder, POOL_LEAK, extra=BACKUP)
    assert len(find_clusters(store)) == 2
    before = [(m.id, m.superseded_by) for m in store]
    real, calls = consolidation.summarise_cluster, []

    def interrupted(memories, *args, **kwargs):
        calls.append(memories)
        if len(calls) == 2:
            raise KeyboardInterrupt  # Ctrl-C while the model writes the second summary
        return real(memories, *args, **kwargs)

    monkeypatch.setattr(consolidation, "summarise_cluster", interrupted)
    with pytest.raises(KeyboardInterrupt):
        consolidate(store, embedder, NOW)
    assert [(m.id, m.superseded_by) for m in store] == before


@pytest.mark.parametrize("bad", [[], None, "store"])
def test_find_clusters_needs_a_store(bad):
    with pytest.raises(TypeError, match="store must be a MemoryStore"):
        find_clusters(bad)


def test_offline_summary_takes_any_iterable_of_memories(embedder):
    store = make_store(embedder, POOL_LEAK, extra=[])
    assert offline_summary(iter(store)) == offline_summary(list(store))
    with pytest.raises(ValueError, match="empty cluster"):
        offline_summary(iter([]))


def test_a_failed_archive_in_a_store_file_leaves_a_file_that_reopens_unchanged(
    embedder, monkeypatch, tmp_path
):
    from storage.sqlite_store import PersistentMemoryStore

    path = tmp_path / "memories.sqlite3"
    with PersistentMemoryStore(path, "eric") as store:
        for i, text in enumerate(POOL_LEAK):
            embedder.remember(store, text, importance=4, now=NOW - (30 - i) * DAY)
        real_supersede, calls = store.supersede, []

        def flaky_supersede(old_id, new_id):
            calls.append(old_id)
            if len(calls) == 4:
                raise RuntimeError("the store file is locked")
            real_supersede(old_id, new_id)

        monkeypatch.setattr(store, "supersede", flaky_supersede)
        with pytest.raises(RuntimeError, match="locked"):
            consolidate(store, embedder, NOW)
        # read by another process before this one closes (or dies): no link to a missing fact
        with PersistentMemoryStore(path, "eric") as other:
            assert [(m.text, m.superseded_by) for m in other] == [(t, None) for t in POOL_LEAK]
