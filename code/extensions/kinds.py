"""Half-lives per kind of memory, and ranking in which each kind fades at its own pace.

`recency_score` takes an hourly decay rate (0.995 keeps 99.5% of recency per hour). A
half-life says the same thing in words people use: "after 138 hours, half is left".
The two convert exactly: rate ** half_life = 0.5.

Kinds differ in how they should fade. An episode ("on 12 March we debugged a pool
leak") is history and fades; a fact ("deploys on Fridays are forbidden") or a skill
stays true until it is superseded, so it does not fade at all (infinite half-life,
decay rate 1.0).

With those rates, `rank_by_kind` and `retrieve_by_kind` rank the stream exactly as
retriever.py does (the same three scoring functions, the same contract: superseded
memories skipped, ties kept in store order, only the returned memories touched), except
that each memory's recency decays at the rate of its own kind instead of one rate for all.
Recency is still measured from last_accessed, so recalling an episode keeps it warm.

A store holding several users' memories is refused (MemoryStore.check_one_user):
recall must never put one user's memory into another user's prompt.

Deliberately left out: choosing a user inside a shared store (open one user's store),
and tuning the half-lives, which belongs on an evaluation set, not in code.

    >>> round(half_life_hours(0.995), 1)
    138.3
    >>> round(decay_rate_for_half_life(138.3), 5)
    0.995
    >>> decay_rate_for_kind("semantic")  # facts do not fade
    1.0
"""

from __future__ import annotations

import math

from lab.defaults import TOP_K, WEIGHTS
from lab.signals import decay_rate_for_half_life
from lab.units import HOURS_PER_DAY
from lab.validation import (
    KINDS,
    Weights,
    as_timestamp,
    check_k,
    check_kind,
    check_weights,
)
from memory_store import Memory, MemoryStore, check_store
from retriever import ScoredMemory, rank_memories

# hours; episodes fade over ~6 weeks, facts and skills only when superseded
DEFAULT_HALF_LIVES: dict[str, float] = {
    "episodic": 45 * HOURS_PER_DAY,
    "semantic": math.inf,
    "procedural": math.inf,
}


def decay_rate_for_kind(kind: str, half_lives: dict[str, float] | None = None) -> float:
    """The hourly decay rate for one kind of memory, from `half_lives` (hours per kind)."""
    kind = check_kind(kind)
    return decay_rates(half_lives)[kind]


def decay_rates(half_lives: dict[str, float] | None = None) -> dict[str, float]:
    """The hourly decay rate of every kind, from `half_lives` (hours per kind).

    decay_rates() -> {'episodic': 0.99936..., 'semantic': 1.0, 'procedural': 1.0}
    """
    table = DEFAULT_HALF_LIVES if half_lives is None else half_lives
    if not isinstance(table, dict):
        raise TypeError(f"half_lives must be a dict of hours per kind, got {table!r}")
    missing = [k for k in KINDS if k not in table]
    if missing:
        raise ValueError(f"half_lives needs an entry for every kind; missing {missing}")
    unknown = sorted(set(table) - set(KINDS), key=repr)  # repr: keys of any type sort
    if unknown:
        raise ValueError(f"half_lives has unknown kind(s) {unknown}; kinds are {list(KINDS)}")
    return {kind: decay_rate_for_half_life(table[kind]) for kind in KINDS}


# --- kind-aware ranking ------------------------------------------------------------


def rank_by_kind(
    store: MemoryStore,
    query_embedding,
    now,
    *,
    weights: Weights = WEIGHTS,
    half_lives: dict[str, float] | None = None,
) -> list[ScoredMemory]:
    """Like retriever.rank_memories, but each kind decays at its own half-life.

    Inputs:
        store: a one-user MemoryStore (a store mixing users raises ValueError).
        query_embedding: the query's vector, same model and length as the memories'.
        now: epoch seconds or datetime.
        weights: (w_relevance, w_recency, w_importance).
        half_lives: hours per kind (default DEFAULT_HALF_LIVES: episodes 45 days,
            facts and skills never fade).
    Returns:
        ScoredMemory rows for every live (not superseded) memory, best first; equal
        scores keep the store's order. Changes nothing.

    Example: a 90-day-old fact and a fresh episode, both on topic: with the defaults
    the fact keeps recency 1.0, where one rate of 0.995 an hour would have left it ~0.
    """
    query_embedding, now, weights = _checked(store, query_embedding, now, weights)
    rates = decay_rates(half_lives)
    # retriever.rank_memories scores with one rate: run it once per distinct rate (facts
    # and skills share 1.0) and keep each memory's row from the pass with its kind's rate.
    rows = {}
    for rate in set(rates.values()):
        for row in rank_memories(store, query_embedding, now, weights=weights, decay_rate=rate):
            if rates[row.memory.kind] == rate:
                rows[row.memory.id] = row
    in_store_order = [rows[memory.id] for memory in store if memory.id in rows]
    return sorted(in_store_order, key=lambda row: row.score, reverse=True)  # ties: store order


def retrieve_by_kind(
    store: MemoryStore,
    query_embedding,
    now,
    *,
    k: int = TOP_K,
    weights: Weights = WEIGHTS,
    half_lives: dict[str, float] | None = None,
) -> list[Memory]:
    """The top k of rank_by_kind; sets last_accessed = now on exactly those memories.

    retrieve_by_kind(store, query, now, k=3) -> [Memory, ...] (at most k, best first)
    """
    k = check_k(k)
    recalled = [
        row.memory
        for row in rank_by_kind(store, query_embedding, now, weights=weights, half_lives=half_lives)
    ][:k]
    now = as_timestamp(now, "now")
    for memory in recalled:
        memory.last_accessed = now  # recalled: its recency restarts here
    return recalled


def _checked(store, query_embedding, now, weights):
    check_store(store).check_one_user("recall")  # never rank two people's memories into one prompt
    return store.check_query(query_embedding), as_timestamp(now, "now"), check_weights(weights)
