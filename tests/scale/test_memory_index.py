"""scale/memory_index.py: the same memories in the same order as the learner's retriever, faster."""

from __future__ import annotations

import tracemalloc
from functools import partial

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import DAY, HOUR, NOW
from memory_store import Memory, MemoryStore
from retriever import rank_memories, retrieve
from scale.memory_index import IndexOutOfStep, MemoryIndex

# Few distinct values, so that exact ties are common, plus near-ties that float32 cannot
# tell apart: [1, 1e-7] and [1, 0] are the same vector in float32, not in float64.
VECTORS = [
    (1.0, 0.0, 0.0),
    (1.0, 1e-7, 0.0),
    (2.0, 0.0, 0.0),  # same direction, other length: an exact relevance tie
    (0.6, 0.8, 0.0),
    (0.6, 0.8, 1e-8),
    (0.0, 0.0, 0.0),  # zero vector: relevance 0.0 by definition
    (-1.0, 0.5, 0.25),
    (0.3, -0.2, 0.9),
]
HOURS = [0.0, 1.0, 1.0 + 1e-9, 48.0, 1000.0, -0.5]  # -0.5: last access in the future
USERS = ["alice", "bob"]
KIND_NAMES = ["episodic", "semantic", "procedural"]

memory_specs = st.lists(
    st.tuples(
        st.sampled_from(VECTORS),
        st.sampled_from(HOURS),
        st.sampled_from([1, 5, 5.5, 10]),  # importance
        st.booleans(),  # superseded?
        st.sampled_from(USERS),
        st.sampled_from(KIND_NAMES),
    ),
    max_size=40,
)
weight_choices = st.tuples(*[st.sampled_from([0.0, 0.25, 1.0, 3.0])] * 3)


def build_store(specs) -> MemoryStore:
    """specs: (embedding, hours since last access, importance, superseded, user, kind)."""
    store = MemoryStore(user_id=None)  # many users, as under the index
    store.add(Memory("keeper", "current fact", created_at=NOW - DAY, embedding=[1.0, 1.0, 1.0]))
    for i, (vector, hours, importance, _, user, kind) in enumerate(specs):
        t = NOW - hours * HOUR
        store.add(
            Memory(
                f"m{i}",
                f"memory {i}",
                kind=kind,
                created_at=min(t, NOW),
                last_accessed=t,
                importance=importance,
                embedding=vector,
                user_id=user,
            )
        )
    for i, (*_, superseded, _user, _kind) in enumerate(specs):
        if superseded:
            store.supersede(f"m{i}", "keeper")
    return store


def as_rows(scored):
    return [
        (row.memory.id, row.relevance, row.recency, row.importance, row.score) for row in scored
    ]


@settings(max_examples=150, deadline=None)
@given(
    memory_specs,
    st.sampled_from(VECTORS),
    st.integers(min_value=1, max_value=12),
    weight_choices,
    st.sampled_from([0.995, 0.9, 1.0]),
    st.sampled_from([None, *USERS]),
    st.sampled_from([None, "semantic", ("episodic", "procedural")]),
)
def test_top_k_equals_the_reference_ranking_ties_and_filters_included(
    specs, query, k, weights, decay_rate, user, kinds
):
    store = build_store(specs)
    index = MemoryIndex(store)
    kept = {kinds} if isinstance(kinds, str) else set(kinds or KIND_NAMES)
    expected = [
        row
        for row in rank_memories(store, query, NOW, weights=weights, decay_rate=decay_rate)
        if (user is None or row.memory.user_id == user) and row.memory.kind in kept
    ][:k]

    got = index.top_k(query, NOW, k, weights, decay_rate, user_id=user, kinds=kinds)

    assert as_rows(got) == as_rows(expected)  # same memories, order and scores, to the bit


@settings(max_examples=60, deadline=None)
@given(memory_specs, st.lists(st.sampled_from(VECTORS), min_size=1, max_size=4))
def test_a_sequence_of_recalls_matches_the_reference_and_refreshes_the_same_memories(
    specs, queries
):
    reference, indexed = build_store(specs), build_store(specs)
    index = MemoryIndex(indexed)
    for step, query in enumerate(queries):
        now = NOW + step * 7 * HOUR  # later each time, so the refreshes matter
        expected = [m.id for m in retrieve(reference, query, now, k=3)]
        assert [m.id for m in index.retrieve(query, now, k=3)] == expected
    assert {m.id: m.last_accessed for m in indexed} == {m.id: m.last_accessed for m in reference}
    index.verify()  # the arrays saw every refresh


operations = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.sampled_from(VECTORS), st.sampled_from(HOURS)),
        st.tuples(st.just("supersede"), st.integers(0, 5), st.integers(0, 5)),
        st.tuples(st.just("remove"), st.integers(0, 5)),
        st.tuples(st.just("retrieve"), st.sampled_from(VECTORS), st.integers(1, 4)),
    ),
    max_size=40,
)


def apply(history, target, recall):
    """The last operation of `history` on a plain store or through an index.

    Returns what it returned, or the error it raised.
    """
    (name, *args), history = history[-1], history[:-1]
    now = NOW + len(history) * HOUR
    try:
        if name == "add":  # the i-th add makes memory m{i}
            vector, hours = args
            memory_id = f"m{sum(op[0] == 'add' for op in history)}"
            target.add(Memory(memory_id, "x", created_at=now - hours * HOUR, embedding=vector))
        elif name == "supersede":
            target.supersede(*(f"m{i}" for i in args))
        elif name == "remove":
            target.remove(f"m{args[0]}")
        else:
            query, k = args
            return "ok", [m.id for m in recall(query, now, k=k)]
        return "ok", None
    except (KeyError, ValueError) as error:
        return type(error).__name__, str(error)


@pytest.mark.needs_milestones(4)
@settings(max_examples=80, deadline=None)
@given(operations)
def test_any_sequence_of_changes_through_the_index_matches_the_plain_store(ops):
    # The same operations on a plain store (with the learner's retrieve) and through the
    # index: every recall agrees, every refusal is the same, and nothing is ever rebuilt.
    reference, index = MemoryStore(user_id=None), MemoryIndex()
    for step in range(1, len(ops) + 1):
        expected = apply(ops[:step], reference, partial(retrieve, reference))
        assert apply(ops[:step], index, index.retrieve) == expected
    index.verify()
    assert [(m.id, m.last_accessed, m.superseded_by) for m in index.store] == [
        (m.id, m.last_accessed, m.superseded_by) for m in reference
    ]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_agreement_in_a_cluster_too_tight_for_float32_to_order(seed):
    # 384 dimensions, enough rows for BLAS to block its sums, and every memory within
    # ~1e-7 of one direction: float32 similarities are all but noise there, so only the
    # rescoring inside the error bound can find the true order.
    rng = np.random.default_rng(seed)
    center = rng.standard_normal(384)
    scales = rng.choice([1e-9, 1e-8, 1e-7, 1e-6], size=(500, 1))
    vectors = center + scales * rng.standard_normal((500, 384))
    store = MemoryStore(user_id=None)  # many users, as under the index
    for i, vector in enumerate(vectors):
        t = NOW - float(rng.choice([1.0, 2.0])) * HOUR
        store.add(Memory(f"m{i}", "x", created_at=t, importance=5, embedding=vector))
    index = MemoryIndex(store)
    for query in (center, center + 1e-7 * rng.standard_normal(384), vectors[3]):
        expected = rank_memories(store, query, NOW)[:10]
        assert as_rows(index.top_k(query, NOW, k=10)) == as_rows(expected)
        assert index.rescored > 10  # the bound did admit extra candidates


def make_index(n=5, user="default"):
    index = MemoryIndex()
    for i in range(n):
        index.add(
            Memory(
                f"m{i}",
                f"memory {i}",
                created_at=NOW - i * HOUR,
                importance=5,
                embedding=[1.0, float(i), 0.5],
                user_id=user,
            )
        )
    return index


def test_add_supersede_and_remove_keep_the_index_in_step_with_the_store():
    index = make_index(40)  # past the initial capacity of 16 rows
    index.add(Memory("new", "newer fact", created_at=NOW, embedding=[1.0, 2.0, 0.5]))
    index.supersede("m2", "new")
    index.remove("m5")  # the last row moves into its place
    index.remove("m39")
    index.verify()
    assert len(index) == len(index.store) == 39
    assert "m5" not in index and "m5" not in index.store
    query = [1.0, 3.0, 0.5]
    assert as_rows(index.top_k(query, NOW, k=50)) == as_rows(rank_memories(index.store, query, NOW))


def test_a_memory_added_again_after_removal_goes_last_among_ties():
    index = MemoryIndex()
    for memory_id in ("a", "b", "c"):
        index.add(Memory(memory_id, "same", created_at=NOW, embedding=[1.0, 0.0]))
    index.remove("a")
    index.add(Memory("a", "same", created_at=NOW, embedding=[1.0, 0.0]))
    assert [m.id for m in index.retrieve([1.0, 0.0], NOW, k=3)] == ["b", "c", "a"]
    assert [m.id for m in retrieve(index.store, [1.0, 0.0], NOW, k=3)] == ["b", "c", "a"]


def test_retrieve_refreshes_exactly_the_returned_memories():
    index = make_index(6)
    before = {m.id: m.last_accessed for m in index.store}
    later = NOW + 5 * HOUR
    top = index.retrieve([1.0, 0.0, 0.0], later, k=2)
    assert {m.id: m.last_accessed for m in index.store} == {
        memory_id: later if memory_id in {m.id for m in top} else t
        for memory_id, t in before.items()
    }
    index.verify()


def test_a_query_for_one_user_never_returns_another_users_memory():
    index = make_index(5, user="alice")
    index.add(Memory("b1", "bob's", created_at=NOW, importance=10, embedding=[1.0, 0.0, 0.0]))
    assert index.store.get("b1").user_id == "default"
    for user, expected in [("alice", {"m0", "m1", "m2", "m3", "m4"}), ("default", {"b1"})]:
        assert {m.id for m in index.retrieve([1.0, 0.0, 0.0], NOW, k=10, user_id=user)} == expected
    assert index.top_k([1.0, 0.0, 0.0], NOW, k=3, user_id="carol") == []


def test_an_empty_index_returns_an_empty_list():
    assert MemoryIndex().retrieve([1.0, 0.0], NOW, k=3) == []


def test_rerank_with_enough_candidates_is_the_exact_ranking():
    index = make_index(30)
    query = [1.0, 7.0, 0.5]
    assert as_rows(index.top_k(query, NOW, k=5, candidates=30)) == as_rows(
        index.top_k(query, NOW, k=5)
    )


@pytest.mark.parametrize("seed", [0, 1])
def test_rerank_ranks_exactly_the_nearest_candidates_by_similarity(seed):
    rng = np.random.default_rng(seed)
    store = MemoryStore(user_id=None)  # many users, as under the index
    for i in range(200):
        t = NOW - float(rng.uniform(0, 100)) * HOUR
        importance = int(rng.integers(1, 11))
        store.add(
            Memory(
                f"m{i}", "x", created_at=t, importance=importance, embedding=rng.standard_normal(16)
            )
        )
    index = MemoryIndex(store)
    query = rng.standard_normal(16)
    ranking = rank_memories(store, query, NOW)
    nearest = {row.memory.id for row in sorted(ranking, key=lambda row: -row.relevance)[:40]}
    expected = [row for row in ranking if row.memory.id in nearest][:5]
    assert as_rows(index.top_k(query, NOW, k=5, candidates=40)) == as_rows(expected)


def nearest_then_rerank(store, query, k, c, **options):
    """The rerank's definition, from the reference: the c live memories with the highest
    relevance_score (ties in store order), ranked by the full score."""
    ranking = rank_memories(store, query, NOW, **options)
    position = {memory.id: i for i, memory in enumerate(store)}
    by_relevance = sorted(ranking, key=lambda row: (-row.relevance, position[row.memory.id]))
    nearest = {row.memory.id for row in by_relevance[:c]}
    return [row for row in ranking if row.memory.id in nearest][:k]


@settings(max_examples=100, deadline=None)
@given(
    memory_specs,
    st.sampled_from(VECTORS),
    st.integers(min_value=1, max_value=5),
    st.integers(min_value=0, max_value=10),
    weight_choices,
)
def test_rerank_is_the_reference_ranking_of_the_nearest_candidates_ties_included(
    specs, query, k, extra, weights
):
    store = build_store(specs)
    index = MemoryIndex(store)
    c = k + extra
    expected = nearest_then_rerank(store, query, k, c, weights=weights)
    assert as_rows(index.top_k(query, NOW, k, weights, candidates=c)) == as_rows(expected)


def test_rerank_candidates_tied_on_similarity_are_taken_in_store_order_whatever_the_rows():
    # 60 memories in one direction: the nearest 40 are a 60-way tie, broken by store order
    # (the oldest 40 here), not by where removals happened to move the rows.
    def build(shuffle_rows):
        index = MemoryIndex()
        if shuffle_rows:
            index.add(Memory("gone", "x", created_at=NOW, embedding=[0.0, 1.0]))
        for i in range(60):
            t = NOW - (60 - i) * HOUR
            index.add(Memory(f"m{i}", "x", created_at=t, importance=5, embedding=[1.0, 0.0]))
        if shuffle_rows:
            index.remove("gone")  # the last row, m59, moves to row 0
        return index

    for index in (build(False), build(True)):
        got = [row.memory.id for row in index.top_k([1.0, 0.0], NOW, k=3, candidates=40)]
        assert got == ["m39", "m38", "m37"]  # the freshest of the first 40 added


def test_rerank_misses_a_fresh_important_memory_outside_the_nearest_candidates():
    # The failure candidate-then-rerank trades for speed: the best memory overall is
    # not among the nearest by similarity, so the rerank never sees it.
    index = MemoryIndex()
    for i in range(5):  # on topic, but stale and mundane
        t = NOW - 2000 * HOUR
        index.add(Memory(f"old{i}", "x", created_at=t, importance=1, embedding=[1.0, 0.1 * i]))
    index.add(Memory("fresh", "y", created_at=NOW, importance=10, embedding=[0.5, 1.0]))
    exact = [m.id for m in index.retrieve([1.0, 0.0], NOW, k=1)]
    reranked = [m.id for m in index.retrieve([1.0, 0.0], NOW, k=1, candidates=3)]
    assert (exact, reranked) == (["fresh"], ["old0"])


def test_a_query_does_not_copy_the_embedding_matrix():
    rng = np.random.default_rng(0)
    index = MemoryIndex()
    for i in range(2000):
        index.add(Memory(f"m{i}", "x", created_at=NOW - i, embedding=rng.standard_normal(256)))
    index.supersede("m3", "m4")  # exercise the filter path too
    query = rng.standard_normal(256)
    matrix_bytes = index.embeddings.nbytes  # 2 MB; the (N,) float64 temporaries are 16 kB

    def peak_bytes(action):
        tracemalloc.start()
        try:
            action()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    # numpy reports its buffers to tracemalloc: a float64 view of the matrix would show
    assert peak_bytes(lambda: index.embeddings.astype(np.float64) @ query) > matrix_bytes
    for options in ({}, {"user_id": "default", "kinds": "episodic"}, {"candidates": 40}):
        assert peak_bytes(lambda: index.top_k(query, NOW, k=10, **options)) < matrix_bytes / 4  # noqa: B023
    assert np.shares_memory(index.embeddings, index._matrix)


def test_changes_made_behind_the_index_are_refused_until_resync():
    index = make_index(4)
    index.store.add(Memory("direct", "x", created_at=NOW, embedding=[1.0, 0.0, 0.0]))
    with pytest.raises(IndexOutOfStep, match="store holds 5 memories but the index 4"):
        index.retrieve([1.0, 0.0, 0.0], NOW)
    index.resync()
    retrieve(index.store, [1.0, 0.0, 0.0], NOW + DAY, k=4)  # the reference touches memories
    with pytest.raises(IndexOutOfStep, match="changed outside the index .last_accessed"):
        index.retrieve([1.0, 0.0, 0.0], NOW + DAY, k=4)
    index.resync()
    index.store.get("m1").user_id = "mallory"
    with pytest.raises(IndexOutOfStep, match="'m1' changed outside the index .user_id"):
        index.verify()
    index.resync()
    index.verify()
    assert [m.id for m in index.retrieve([1.0, 0.0, 0.0], NOW + DAY, k=5, user_id="mallory")] == [
        "m1"
    ]


def test_refused_memories_leave_both_store_and_index_unchanged():
    index = make_index(2)
    with pytest.raises(ValueError, match="already in the store"):
        index.add(Memory("m0", "x", created_at=NOW, embedding=[1.0, 0.0, 0.0]))
    with pytest.raises(ValueError, match="already in the store"):
        index.add(Memory("m1", "x", created_at=NOW, embedding=[1.0, 0.0, 0.0]))
    index.supersede("m0", "m1")
    with pytest.raises(ValueError, match="remove those first"):
        index.remove("m1")
    assert len(index) == len(index.store) == 2
    index.verify()


def test_a_memory_the_index_could_not_rank_exactly_cannot_even_be_made():
    # Vectors are rounded to float32 when a memory is made, and every non-zero float32 is
    # inside the range the index ranks exactly: such a memory is refused at its creation.
    for tiny_or_huge in (1e-200, 1e200):
        with pytest.raises(ValueError, match=r"embedding\[0\] = .* cannot be kept as a float32"):
            Memory("odd", "x", created_at=NOW, embedding=[tiny_or_huge, 0.0])


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"query_embedding": [1.0, 0.0]}, ValueError, "2 values but the store's memories have 3"),
        ({"query_embedding": [1.0, float("nan"), 0.0]}, ValueError, r"query_embedding\[1\]"),
        ({"query_embedding": np.array([1.0, 1e300, 0.0])}, ValueError, "query_embedding: embed"),
        ({"query_embedding": "abc"}, TypeError, "query_embedding"),
        ({"now": "today"}, TypeError, "now"),
        ({"k": 0}, ValueError, "k must be an integer >= 1"),
        ({"k": True}, TypeError, "k must be an integer >= 1"),
        ({"weights": (1.0, -1.0, 1.0)}, ValueError, "recency weight must be >= 0"),
        ({"decay_rate": 0.0}, ValueError, "decay_rate"),
        ({"candidates": 2}, ValueError, r"candidates \(2\) must be >= k \(3\)"),
        ({"candidates": 4.0}, TypeError, "candidates must be an integer"),
        ({"user_id": ""}, ValueError, "user_id must be a non-empty string"),
        ({"kinds": "dream"}, ValueError, "kind must be one of"),
        ({"kinds": []}, ValueError, "kinds must name at least one kind"),
        ({"kinds": 5}, TypeError, "kinds must be a kind, a list of kinds or None, got 5"),
    ],
)
def test_bad_arguments_raise_naming_the_argument(kwargs, error, match):
    args = {"query_embedding": [1.0, 0.0, 0.0], "now": NOW, "k": 3, **kwargs}
    with pytest.raises(error, match=match):
        make_index(4).retrieve(**args)


def test_only_a_memory_store_can_be_indexed():
    with pytest.raises(TypeError, match="store must be a MemoryStore, got list"):
        MemoryIndex([])
