"""Rank the memory stream for a query; page the top k into the prompt. (Learner core: Milestone 4)

    rank_memories  scores every live memory with the three signals and sorts best first;
                   it changes nothing, so notebooks can show the table behind a decision.
    retrieve       takes the top k of that ranking and refreshes their last_accessed,
                   because being recalled is what keeps a memory warm.

Superseded memories (a fact that a newer memory replaced) are left out entirely: a
contradicted fact is wrong, not merely weak. Ties are broken by the store's order:
of two memories with exactly the same score, the one added first comes first.

Deliberately left out: embedding the query (embedding_helpers.py), and speed: this is a
readable loop over every memory, fine for thousands of memories, not for millions.
"""

from __future__ import annotations

from typing import NamedTuple

from lab.validation import as_timestamp, check_decay_rate, check_k, check_weights
from memory_store import Memory, MemoryStore
from scoring import importance_score, recency_score, relevance_score, retrieval_score


class ScoredMemory(NamedTuple):
    """One row of a ranking: the memory, its three signals and their weighted total."""

    memory: Memory
    relevance: float
    recency: float
    importance: float
    score: float


def rank_memories(
    store: MemoryStore,
    query_embedding,
    now,
    weights=(1.0, 1.0, 1.0),
    decay_rate: float = 0.995,
) -> list[ScoredMemory]:
    """Score every live memory in `store` against the query, best first. Changes nothing.

    Inputs:
        store: a MemoryStore; iterate it with `for memory in store`.
        query_embedding: the query's vector, same model and length as the memories'.
        now: current time, epoch seconds (float) or datetime.
        weights: (w_relevance, w_recency, w_importance).
        decay_rate: recency kept per hour, in (0, 1].
    Returns:
        list of ScoredMemory(memory, relevance, recency, importance, score), one per
        memory whose superseded_by is None, sorted by score, highest first; equal scores
        keep the store's order.

    Example (the course's relevance tie: same vector, m1 fresher and more important):
        [row.memory.id for row in rank_memories(store, [1.0, 0.0, 0.0], now)] -> ['m1', 'm0']

    TODO: for each live memory compute relevance (query vs memory.embedding), recency
    (from memory.last_accessed) and importance with your scoring functions, combine
    them with retrieval_score, then sort.
    Pitfall: sort highest first; sorted(..., reverse=True) keeps ties in store order.
    """
    query_embedding, now, weights, decay_rate = _checked(
        store, query_embedding, now, weights, decay_rate
    )
    ### BEGIN SOLUTION
    rows = []
    for memory in store:
        if memory.superseded_by is not None:
            continue  # replaced by a newer fact: never recall it
        rel = relevance_score(query_embedding, memory.embedding)
        rec = recency_score(now, memory.last_accessed, decay_rate=decay_rate)
        imp = importance_score(memory.importance)
        total = retrieval_score(rel, rec, imp, weights=weights)
        rows.append(ScoredMemory(memory, rel, rec, imp, total))
    # Python's sort is stable, and reverse=True preserves it: ties stay in store order.
    return sorted(rows, key=lambda row: row.score, reverse=True)
    ### END SOLUTION


def retrieve(
    store: MemoryStore,
    query_embedding,
    now,
    k: int = 3,
    weights=(1.0, 1.0, 1.0),
    decay_rate: float = 0.995,
) -> list[Memory]:
    """The k memories most worth recalling for this query; refreshes their last_accessed.

    Inputs:
        store, query_embedding, now, weights, decay_rate: as for rank_memories.
        k: how many memories to return, an int >= 1 (the prompt's memory budget).
    Returns:
        list of at most k Memory objects, best first. Fewer if the store has fewer
        live memories; [] for an empty store. Each returned memory now has
        last_accessed == now; every other memory is left untouched.

    Example:
        retrieve(store, [1.0, 0.0, 0.0], now=now, k=1)[0].id -> 'm1'

    TODO: rank, keep the first k, set last_accessed = now on exactly those, return them.
    Pitfall: return Memory objects (not ScoredMemory rows, scores or ids), and touch
    only the memories you return: refreshing all of them would make recency meaningless.
    """
    query_embedding, now, weights, decay_rate = _checked(
        store, query_embedding, now, weights, decay_rate
    )
    k = check_k(k)
    ### BEGIN SOLUTION
    top = rank_memories(store, query_embedding, now, weights=weights, decay_rate=decay_rate)[:k]
    for row in top:
        row.memory.last_accessed = now  # recalled: recency restarts from here
    return [row.memory for row in top]
    ### END SOLUTION


def _checked(store, query_embedding, now, weights, decay_rate):
    """Validate the shared arguments once, with messages that name the bad value."""
    if not isinstance(store, MemoryStore):
        raise TypeError(f"store must be a MemoryStore, got {type(store).__name__}")
    query_embedding = store.check_query(query_embedding)
    now = as_timestamp(now, "now")
    weights = check_weights(weights)
    decay_rate = check_decay_rate(decay_rate)
    return query_embedding, now, weights, decay_rate
