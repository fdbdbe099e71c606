"""Kind-aware ranking built on Milestone 5: each kind of memory fades at its own pace.

The learner core does the work: `kind_recency_score` (scoring.py) halves a memory's
recency every half-life of its kind, and `retrieve_by_kind` (retriever.py) recalls with
it. This module adds what the notebooks and the other extensions need around them:

    decay_rates / decay_rate_for_kind   the hourly rate each half-life amounts to
    rank_by_kind                         the table behind a kind-aware decision (rows)
    retrieve_by_kind                     the learner's, for a one-user store only

A half-life says "after 1080 hours, half is left"; a decay rate says "99.936% is kept per
hour". They convert exactly: rate ** half_life = 0.5. An episode ("on 12 March we debugged
a pool leak") is history and fades; a fact ("deploys on Fridays are forbidden") or a skill
("run the tests before pushing") stays true until it is superseded, so its half-life is
math.inf and its recency stays 1.0. A skill that changes is replaced, not faded
(extensions/superseding.py keeps its kind).

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

from collections.abc import Mapping

import retriever
from base.decay import decay_rate_for_half_life, half_life_hours  # noqa: F401 (doctest)
from base.defaults import HALF_LIVES, TOP_K, WEIGHTS
from base.unwritten import runs_on_learner_code
from base.validation import (
    KINDS,
    Weights,
    as_timestamp,
    check_half_lives,
    check_kind,
    check_weights,
)
from memory_store import Memory, MemoryStore, check_store
from retriever import ScoredMemory, rank_memories

# hours; episodes fade over ~6 weeks, facts and skills only when superseded (base/defaults.py)
DEFAULT_HALF_LIVES: Mapping[str, float] = HALF_LIVES


def decay_rate_for_kind(kind: str, half_lives: Mapping[str, float] | None = None) -> float:
    """The hourly decay rate for one kind of memory, from `half_lives` (hours per kind)."""
    kind = check_kind(kind)
    return decay_rates(half_lives)[kind]


def decay_rates(half_lives: Mapping[str, float] | None = None) -> dict[str, float]:
    """The hourly decay rate of every kind, from `half_lives` (hours per kind).

    decay_rates() -> {'episodic': 0.99936..., 'semantic': 1.0, 'procedural': 1.0}
    """
    table = check_half_lives(HALF_LIVES if half_lives is None else half_lives)
    return {kind: decay_rate_for_half_life(table[kind]) for kind in KINDS}


# --- kind-aware ranking ------------------------------------------------------------


@runs_on_learner_code
def rank_by_kind(
    store: MemoryStore,
    query_embedding,
    now,
    *,
    weights: Weights = WEIGHTS,
    half_lives: Mapping[str, float] | None = None,
) -> list[ScoredMemory]:
    """The ranking retrieve_by_kind recalls from, as rows with their signals. Changes nothing.

    Inputs:
        store: a one-user MemoryStore (a store mixing users raises ValueError).
        query_embedding: the query's vector, same model and length as the memories'.
        now: epoch seconds or datetime.
        weights: (w_relevance, w_recency, w_importance).
        half_lives: hours per kind (default: episodes 45 days, facts and skills never fade).
    Returns:
        ScoredMemory rows for every live (not superseded) memory, best first; equal
        scores keep the store's order.

    Example: a 90-day-old fact and a fresh episode, both on topic: with the defaults
    the fact keeps recency 1.0, where one rate of 0.995 an hour would have left it ~0.
    """
    _checked(store, query_embedding, now, weights)
    table = HALF_LIVES if half_lives is None else half_lives
    # your rank_memories given half_lives: the ranking your retrieve_by_kind recalls from
    return rank_memories(store, query_embedding, now, weights=weights, half_lives=table)


@runs_on_learner_code
def retrieve_by_kind(
    store: MemoryStore,
    query_embedding,
    now,
    *,
    k: int = TOP_K,
    weights: Weights = WEIGHTS,
    half_lives: Mapping[str, float] | None = None,
) -> list[Memory]:
    """Your retrieve_by_kind (Milestone 5), for a one-user store only.

    retrieve_by_kind(store, query, now, k=3) -> [Memory, ...] (at most k, best first)
    """
    _checked(store, query_embedding, now, weights)
    table = HALF_LIVES if half_lives is None else half_lives
    return retriever.retrieve_by_kind(
        store, query_embedding, now, k=k, weights=weights, half_lives=table
    )


def _checked(store, query_embedding, now, weights):
    check_store(store).check_one_user("recall")  # never rank two people's memories into one prompt
    return store.check_query(query_embedding), as_timestamp(now, "now"), check_weights(weights)
