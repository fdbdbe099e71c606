"""Rank the memory stream for a query; page the top k into the prompt. (Learner core: M4-5)

    rank_memories     scores every live memory with the three signals and sorts best first;
                      it changes nothing, so notebooks can show the table behind a decision.
    retrieve          takes the top k of that ranking and refreshes their last_accessed,
                      because being recalled is what keeps a memory warm.
    retrieve_by_kind  Milestone 5: the same ranking, given half_lives, so that each memory's
                      recency fades at the half-life of its own kind: facts stop fading.

The ranking is written once: rank_memories makes the rows and sorts them, and both
retrieve and retrieve_by_kind take the top k of it; only where recency comes from differs.

Superseded memories (a fact that a newer memory replaced) are left out entirely: a
contradicted fact is wrong, not merely weak. Ties are broken by the store's order:
of two memories with exactly the same score, the one added first comes first.

Deliberately left out: embedding the query (embedding_helpers.py), and speed: this is a
readable loop over every memory, fine for thousands of memories, not for millions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from base.defaults import DECAY_RATE, HALF_LIVES, TOP_K, WEIGHTS
from base.validation import (
    Timestamp,
    Vector,
    Weights,
    as_timestamp,
    check_decay_rate,
    check_half_lives,
    check_k,
    check_weights,
)
from memory_store import Memory, MemoryStore
from scoring import (
    importance_score,
    kind_recency_score,
    recency_score,
    relevance_score,
    retrieval_score,
)


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
    *,
    half_lives: Mapping[str, float] | None = None,
) -> list[ScoredMemory]:
    """Score every live memory in `store` against the query, best first. Changes nothing.

    Inputs:
        store: a MemoryStore; iterate it with `for memory in store` (in the order the
            memories were added).
        query_embedding: the query's vector, same model and length as the memories'.
        now: current time, epoch seconds (float) or datetime.
        weights: (w_relevance, w_recency, w_importance); default (1.0, 1.0, 1.0).
        decay_rate: recency kept per hour, in (0, 1]; default 0.995.
        half_lives: None (Milestone 4): every memory's recency is recency_score at
            decay_rate. Hours per kind (Milestone 5, what retrieve_by_kind passes): each
            memory's recency is kind_recency_score for its own kind; decay_rate is unused.
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
    if half_lives is not None:
        half_lives = check_half_lives(half_lives)
    # TODO: Milestone 4. The arguments are checked and converted now: a tuple of floats
    # of the store's length, float seconds, three float weights, a float rate. Give
    # every live memory one ScoredMemory row built with your four scoring functions,
    # and return the rows best first. Recency counts from the last access, not from
    # creation: a memory made 30 days ago and recalled an hour ago is one hour old.
    # A superseded memory gets no row at all. Two rows with the same score must come
    # out in the store's order, whatever the ordering method you use.
    # Milestone 5 comes back here: when `half_lives` is given, a row's recency is your
    # kind_recency_score for the memory's own kind; everything else stays the same.
    ### BEGIN SOLUTION
    rows = []
    for memory in store:
        if memory.superseded_by is not None:
            continue  # replaced by a newer fact: never recall it
        rel = relevance_score(query_embedding, memory.embedding)
        if half_lives is None:
            rec = recency_score(now, memory.last_accessed, decay_rate=decay_rate)
        else:  # Milestone 5: each memory fades at the pace of its own kind
            rec = kind_recency_score(
                now, last_accessed=memory.last_accessed, kind=memory.kind, half_lives=half_lives
            )
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


def retrieve_by_kind(
    store: MemoryStore,
    query_embedding: Vector,
    now: Timestamp,
    k: int = TOP_K,
    weights: Weights = WEIGHTS,
    half_lives: Mapping[str, float] = HALF_LIVES,
) -> list[Memory]:
    """Like retrieve, but each memory's recency fades at the half-life of its own kind.

    Inputs:
        store, query_embedding, now, k, weights: as for retrieve.
        half_lives: hours until recency halves, per kind (each > 0, or math.inf for a
            kind that never fades); default: episodes 45 days, facts and skills never.
    Returns:
        list of at most k Memory objects, best first: the top k of rank_memories given
        these half_lives (recency from kind_recency_score, from last_accessed, with
        memory.kind). Superseded memories are skipped; equal scores keep the store's
        order; exactly the returned memories get last_accessed == now.

    Example (a 120-day-old preference against a 3-hour-old episode, both on topic):
        retrieve_by_kind(store, [1.0, 0.0], now, k=1)[0].kind -> 'semantic'
    """
    query_embedding, now, weights, _ = _checked(store, query_embedding, now, weights)
    k = check_k(k)
    half_lives = check_half_lives(half_lives)
    # TODO: Milestone 5. Everything is checked as in retrieve, and `half_lives` is a dict
    # {kind: hours or math.inf}. Do what retrieve does, on the ranking that rank_memories
    # gives when it is passed these half_lives (teach it that first, see its TODO).
    # Ranking with one decay rate here would let a standing fact fade: at 0.995 an hour,
    # a preference stated 120 days (2,880 hours) ago keeps about 0.0000006 of its recency.
    ### BEGIN SOLUTION
    ranking = rank_memories(store, query_embedding, now, weights=weights, half_lives=half_lives)
    top_k = [row.memory for row in ranking[:k]]
    for memory in top_k:
        memory.last_accessed = now  # recalled: its recency restarts from here
    return top_k
    ### END SOLUTION


def _checked(store, query_embedding, now, weights, decay_rate=DECAY_RATE):
    """Validate the shared arguments once, with messages that name the bad value."""
    if not isinstance(store, MemoryStore):
        raise TypeError(f"store must be a MemoryStore, got {type(store).__name__}")
    query_embedding = store.check_query(query_embedding)
    now = as_timestamp(now, "now")
    weights = check_weights(weights)
    decay_rate = check_decay_rate(decay_rate)
    return query_embedding, now, weights, decay_rate
