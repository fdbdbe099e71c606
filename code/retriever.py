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

from lab.defaults import DECAY_RATE, TOP_K, WEIGHTS
from lab.validation import (
    Timestamp,
    Vector,
    Weights,
    as_timestamp,
    check_decay_rate,
    check_k,
    check_weights,
)
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
    query_embedding: Vector,
    now: Timestamp,
    weights: Weights = WEIGHTS,
    decay_rate: float = DECAY_RATE,
) -> list[ScoredMemory]:
    """Score every live memory in `store` against the query, best first. Changes nothing.

    Inputs:
        store: a MemoryStore; iterate it with `for memory in store` (in the order the
            memories were added).
        query_embedding: the query's vector, same model and length as the memories'.
        now: current time, epoch seconds (float) or datetime.
        weights: (w_relevance, w_recency, w_importance); default (1.0, 1.0, 1.0).
        decay_rate: recency kept per hour, in (0, 1]; default 0.995.
    Returns:
        list of ScoredMemory(memory, relevance, recency, importance, score), one per
        memory whose superseded_by is None, highest score first; memories with equal
        scores keep the store's order.

    Example (the course's relevance tie: same vector, m1 fresher and more important):
        [row.memory.id for row in rank_memories(store, [1.0, 0.0, 0.0], now)] -> ['m1', 'm0']
    """
    query_embedding, now, weights, decay_rate = _checked(
        store, query_embedding, now, weights, decay_rate
    )
    # TODO: Milestone 4. The arguments are checked and converted now: a tuple of floats
    # of the store's length, float seconds, three float weights, a float rate. Give
    # every live memory one ScoredMemory row built with your four scoring functions
    # (recency is measured from the last access, not from creation), and return the
    # rows best first. A superseded memory gets no row at all. Two rows with the same
    # score must come out in the store's order, whatever the ordering method you use.
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
    query_embedding: Vector,
    now: Timestamp,
    k: int = TOP_K,
    weights: Weights = WEIGHTS,
    decay_rate: float = DECAY_RATE,
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
    """
    query_embedding, now, weights, decay_rate = _checked(
        store, query_embedding, now, weights, decay_rate
    )
    k = check_k(k)
    # TODO: Milestone 4. Everything is checked and converted as in rank_memories, and
    # `k` is an int >= 1. Return the Memory objects (not rows, scores or ids) of the k
    # best rows of your ranking, best first, and mark each of those, and only those, as
    # recalled `now`: being recalled is what keeps a memory fresh, and refreshing the
    # ones you did not return would make recency meaningless.
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
