"""The three retrieval signals and their combination.  (Learner core: Milestones 1-3.)

Every memory in the stream gets one number per query, built from three signals:

    relevance  = cosine(query_embedding, memory_embedding)   is it about this?   [-1, 1]
    recency    = decay_rate ** hours_since_last_access        is it fresh?        (0, 1]
    importance = importance / 10                              does it matter?     [0.1, 1]
    score      = w_rel * relevance + w_rec * recency + w_imp * importance

This is the scoring rule of Generative Agents (Park et al., 2023) with equal weights and
without its min-max normalisation. Each function checks its inputs first (that part is
provided) and then computes its signal (that part is yours). Pure Python: no numpy.

Deliberately left out: choosing which memories to return (retriever.py) and any
per-kind decay (an extension: semantic facts should not fade like events do).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from lab.units import SECONDS_PER_HOUR
from lab.validation import (
    as_number,
    as_timestamp,
    as_vector,
    check_decay_rate,
    check_importance,
    check_weights,
)


def recency_score(now, last_accessed, decay_rate: float = 0.995) -> float:
    """How fresh a memory is: decay_rate raised to the hours since it was last accessed.

    Inputs:
        now: the current time, epoch seconds (float) or datetime.
        last_accessed: when the memory was last created or recalled, same units.
        decay_rate: fraction kept per hour, in (0, 1]. 0.995 halves in ~138 hours.
    Returns:
        float in (0, 1]: 1.0 for a memory touched right now, smaller as it ages.

    Example:
        recency_score(now, now - 3600) -> 0.995      (one hour at 0.995 per hour)

    TODO: convert the gap to hours, then raise decay_rate to that power.
    Pitfall: times are in *seconds*; and a last access in the future (clock skew)
    must count as zero hours, never give a score above 1.
    """
    now = as_timestamp(now, "now")
    last_accessed = as_timestamp(last_accessed, "last_accessed")
    decay_rate = check_decay_rate(decay_rate)
    ### BEGIN SOLUTION
    hours = max(0.0, (now - last_accessed) / SECONDS_PER_HOUR)  # hours, not seconds
    return decay_rate**hours
    ### END SOLUTION


def importance_score(importance) -> float:
    """A memory's importance rating (1-10) rescaled to [0.1, 1.0].

    Inputs:
        importance: a number in [1, 10]; 1 is mundane ("brushed teeth"),
            10 is core ("signed the contract").
    Returns:
        float in [0.1, 1.0], on the same scale as the other two signals.

    Example:
        importance_score(8) -> 0.8

    TODO: divide by 10.
    Pitfall: returning the raw rating (8 instead of 0.8) lets importance outweigh
    the other two signals tenfold, and floor division (8 // 10 == 0) erases it.
    """
    importance = check_importance(importance)
    ### BEGIN SOLUTION
    return importance / 10.0
    ### END SOLUTION


def relevance_score(query_embedding: Sequence[float], memory_embedding: Sequence[float]) -> float:
    """Cosine similarity between the query's embedding and the memory's embedding.

    Inputs:
        query_embedding: sequence of floats (list, tuple or 1-D numpy array).
        memory_embedding: sequence of floats of the same length.
    Returns:
        float in [-1, 1]: 1.0 for the same direction, 0.0 for unrelated (orthogonal).
        If either vector is all zeros the similarity is defined as 0.0, not NaN.

    Example:
        relevance_score([1.0, 0.0], [1.0, 1.0]) -> 0.7071...   (45 degrees apart)

    TODO: dot product divided by the product of the two lengths (L2 norms).
    Pitfall: the bare dot product is not cosine: it grows with vector length, so
    long texts would look more relevant. Guard the zero-length case before dividing.
    """
    query_embedding = as_vector(query_embedding, "query_embedding")
    memory_embedding = as_vector(memory_embedding, "memory_embedding")
    if len(query_embedding) != len(memory_embedding):
        raise ValueError(
            f"query_embedding has {len(query_embedding)} values but memory_embedding has "
            f"{len(memory_embedding)}: both must come from the same embedding model"
        )
    ### BEGIN SOLUTION
    dot = sum(q * m for q, m in zip(query_embedding, memory_embedding))
    query_norm = math.sqrt(sum(q * q for q in query_embedding))
    memory_norm = math.sqrt(sum(m * m for m in memory_embedding))
    if query_norm == 0.0 or memory_norm == 0.0:
        return 0.0  # a zero vector points nowhere: no evidence of relevance
    cosine = dot / (query_norm * memory_norm)
    return max(-1.0, min(1.0, cosine))  # subtle: rounding can give 1.0000000000000002
    ### END SOLUTION


def retrieval_score(rel: float, rec: float, imp: float, weights=(1.0, 1.0, 1.0)) -> float:
    """The weighted sum of the three signals: one number to rank memories by.

    Inputs:
        rel: relevance, from relevance_score.
        rec: recency, from recency_score.
        imp: importance, from importance_score.
        weights: (w_relevance, w_recency, w_importance), each finite and >= 0,
            in that order: the same order as the arguments.
    Returns:
        float: w_rel * rel + w_rec * rec + w_imp * imp.

    Example:
        retrieval_score(rel=0.8, rec=0.9, imp=0.7) -> 2.4

    TODO: multiply each signal by its own weight and add the three products.
    Pitfall: pairing a weight with the wrong signal still returns a plausible number;
    with equal weights you would not notice, so test with unequal ones.
    """
    rel = as_number(rel, "rel")
    rec = as_number(rec, "rec")
    imp = as_number(imp, "imp")
    weights = check_weights(weights)
    ### BEGIN SOLUTION
    w_rel, w_rec, w_imp = weights
    return w_rel * rel + w_rec * rec + w_imp * imp
    ### END SOLUTION
