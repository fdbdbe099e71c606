"""The three retrieval signals and their combination.  (Learner core: Milestones 1-3, 5.)

Every memory in the stream gets one number per query, built from three signals:

    relevance   is it about this?  the cosine of the angle between the query's and the
                memory's embeddings                                            [-1, 1]
    recency     is it fresh?       the share left after decaying by decay_rate for every
                hour since the last access (0.995 per hour: 1 hour -> 0.995,
                about 138 hours -> 0.5)                                        (0, 1]
    importance  does it matter?    the 1-10 rating as a share of 10 (8 -> 0.8)  [0.1, 1]
    score       each signal times its own weight, added up (equal weights: 2.4 for
                0.8, 0.9 and 0.7)

    kind recency  per kind: the share left when recency halves once every half-life of
                  the memory's kind, in hours (1080 hours for an episode -> 0.5)  (0, 1]

The last line is Milestone 5: each kind of memory fades at its own pace (episodes halve
every 45 days; facts and skills, with an infinite half-life, never fade).

This is the scoring rule of Generative Agents (Park et al., 2023) with equal weights and
without its min-max normalisation. Each function checks and converts its inputs first
(that part is provided), then computes its signal (that part is yours: the TODO at the
place to write it says what the lines above it have already done). Pure Python.
Checks and grading compare each float you return with the expected one to a relative
1e-6 (absolute 1e-9 near 0): float32 arithmetic, numpy's included, is fine.

Deliberately left out: choosing which memories to return (retriever.py) and tuning the
half-lives (an evaluation question: notebook 08).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from base.defaults import DECAY_RATE, HALF_LIVES, WEIGHTS
from base.units import SECONDS_PER_HOUR
from base.validation import (
    Timestamp,
    Vector,
    Weights,
    as_number,
    as_timestamp,
    as_vector,
    check_decay_rate,
    check_half_lives,
    check_importance,
    check_kind,
    check_weights,
)


def recency_score(
    now: Timestamp, last_accessed: Timestamp, decay_rate: float = DECAY_RATE
) -> float:
    """How fresh a memory is: decay_rate raised to the hours since it was last accessed.

    Inputs:
        now: the current time, epoch seconds (float) or datetime.
        last_accessed: when the memory was last created or recalled, same units.
        decay_rate: fraction of recency kept per hour, in (0, 1]; default 0.995,
            which halves in about 138 hours.
    Returns:
        float in (0, 1]: 1.0 for a memory touched right now, smaller as it ages.

    Example:
        recency_score(now, now - 3600) -> 0.995      (one hour at 0.995 per hour)
    """
    now = as_timestamp(now, "now")
    last_accessed = as_timestamp(last_accessed, "last_accessed")
    decay_rate = check_decay_rate(decay_rate)
    # TODO: Milestone 1. `now` and `last_accessed` are float epoch seconds now, and
    # `decay_rate` a float in (0, 1]. Return the share of recency left after the time
    # since the last access, when each *hour* keeps `decay_rate` of what the hour before
    # left: two hours at 0.995 keep 0.995 of 0.995, about 0.990. The clock counts in
    # seconds (SECONDS_PER_HOUR is imported above). Pitfall: a last access in the
    # future (two clocks that disagree) counts as no time at all, so the result never
    # exceeds 1.0.
    ### BEGIN SOLUTION
    hours = max(0.0, (now - last_accessed) / SECONDS_PER_HOUR)  # hours, not seconds
    return decay_rate**hours
    ### END SOLUTION


def importance_score(importance: float) -> float:
    """A memory's importance rating (1-10) on the scale of the other two signals.

    Inputs:
        importance: a number in [1, 10]; 1 is mundane ("brushed teeth"),
            10 is core ("signed the contract").
    Returns:
        float in [0.1, 1.0]: the rating as a share of the top of the scale.

    Example:
        importance_score(8) -> 0.8
    """
    importance = check_importance(importance)
    # TODO: Milestone 2. `importance` is a float in [1, 10] now. Rescale it so that the
    # top of the scale is 1.0, as the course's importance signal defines it. Keep the
    # fraction: a rating of 5.5 must stay distinguishable from 5 and from 6. Returning
    # the rating unscaled would let importance outweigh the other signals tenfold.
    ### BEGIN SOLUTION
    return importance / 10.0
    ### END SOLUTION


def relevance_score(query_embedding: Vector, memory_embedding: Vector) -> float:
    """Cosine similarity between the query's embedding and the memory's embedding.

    Inputs:
        query_embedding: sequence of floats (list, tuple or 1-D numpy array).
        memory_embedding: sequence of floats of the same length.
    Returns:
        float in [-1, 1]: 1.0 for the same direction, 0.0 for unrelated (orthogonal),
        -1.0 for opposite. If either vector is all zeros the similarity is 0.0, not NaN.
        Checked to a relative 1e-6, so a float32 computation (numpy's) is fine.

    Example:
        relevance_score([1.0, 0.0], [1.0, 1.0]) -> 0.7071...   (45 degrees apart)
    """
    query_embedding = as_vector(query_embedding, "query_embedding")
    memory_embedding = as_vector(memory_embedding, "memory_embedding")
    if len(query_embedding) != len(memory_embedding):
        raise ValueError(
            f"query_embedding has {len(query_embedding)} values but memory_embedding has "
            f"{len(memory_embedding)}: both must come from the same embedding model"
        )
    # TODO: Milestone 2. Both vectors are tuples of finite floats of the same length now.
    # Return the cosine of the angle between them: it must not change when either
    # vector is scaled (a longer text must not look more relevant), and a zero vector
    # points nowhere, so it has similarity 0.0. Pure Python (`math` is imported).
    # Rounding can push a cosine a hair past 1.0; the result must stay in [-1, 1].
    ### BEGIN SOLUTION
    dot = sum(q * m for q, m in zip(query_embedding, memory_embedding))
    query_norm = math.sqrt(sum(q * q for q in query_embedding))
    memory_norm = math.sqrt(sum(m * m for m in memory_embedding))
    if query_norm == 0.0 or memory_norm == 0.0:
        return 0.0  # a zero vector points nowhere: no evidence of relevance
    cosine = dot / (query_norm * memory_norm)
    return max(-1.0, min(1.0, cosine))  # subtle: rounding can give 1.0000000000000002
    ### END SOLUTION


def retrieval_score(rel: float, rec: float, imp: float, weights: Weights = WEIGHTS) -> float:
    """The weighted sum of the three signals: one number to rank memories by.

    Inputs:
        rel: relevance, from relevance_score.
        rec: recency, from recency_score.
        imp: importance, from importance_score.
        weights: (w_relevance, w_recency, w_importance), each finite and >= 0, in the
            same order as the signals; default (1.0, 1.0, 1.0).
    Returns:
        float: each signal times its own weight, added up.

    Example:
        retrieval_score(rel=0.8, rec=0.9, imp=0.7) -> 2.4
    """
    rel = as_number(rel, "rel")
    rec = as_number(rec, "rec")
    imp = as_number(imp, "imp")
    weights = check_weights(weights)
    # TODO: Milestone 3. The signals are floats and `weights` a tuple of three floats
    # now. Combine them into one score in which each signal counts as much as its own
    # weight says. Pairing a weight with the wrong signal still gives a plausible
    # number, and with equal weights nobody would notice: think of unequal ones.
    ### BEGIN SOLUTION
    w_rel, w_rec, w_imp = weights
    return w_rel * rel + w_rec * rec + w_imp * imp
    ### END SOLUTION


def kind_recency_score(
    now: Timestamp,
    last_accessed: Timestamp,
    kind: str,
    half_lives: Mapping[str, float] = HALF_LIVES,
) -> float:
    """Recency for a memory of `kind`: it halves every half_lives[kind] hours since last access.

    Inputs:
        now: the current time, epoch seconds (float) or datetime.
        last_accessed: when the memory was last created or recalled, same units.
        kind: the memory's kind, "episodic", "semantic" or "procedural".
        half_lives: hours until recency halves, one entry per kind, each > 0 or
            math.inf ("never fades"); default: episodes 45 days (1080 hours), facts and
            skills math.inf.
    Returns:
        float in [0, 1]: 1.0 when just accessed, 0.5 after one half-life, 0.25 after
        two; always 1.0 for a kind whose half-life is math.inf.

    Example:
        kind_recency_score(now, now - 1080 * 3600, "episodic") -> 0.5   (45 days: one half-life)
        kind_recency_score(now, now - 1080 * 3600, "semantic") -> 1.0   (facts never fade)
    """
    now = as_timestamp(now, "now")
    last_accessed = as_timestamp(last_accessed, "last_accessed")
    kind = check_kind(kind)
    half_lives = check_half_lives(half_lives)
    # TODO: Milestone 5. The times are float seconds now, `kind` one of the three kinds
    # and `half_lives` a dict {kind: float hours, or math.inf}. Return the share of
    # recency left when it halves once every half-life of *this memory's kind*, counted
    # in hours since the last access (a future access counts as none). A half-life is
    # not a decay rate: 1080 is how many hours until half is left, not the share kept
    # per hour. Check what your formula gives for math.inf: it must be exactly 1.0.
    ### BEGIN SOLUTION
    hours = max(0.0, now - last_accessed) / SECONDS_PER_HOUR  # hours, not seconds
    half_life = half_lives[kind]  # hours; math.inf for a kind that never fades
    return 0.5 ** (hours / half_life)  # hours / inf == 0.0, so a fact keeps 1.0
    ### END SOLUTION


def retrieval_scores(
    relevance,
    now: Timestamp,
    last_accessed,
    importance,
    weights: Weights = WEIGHTS,
    decay_rate: float = DECAY_RATE,
):
    """Milestones 1-3 for N memories at once, on numpy arrays.  (Notebook 09's exercise.)

    Inputs:
        relevance: (N,) floats, each memory's cosine with the query, in [-1, 1].
        now: the current time, epoch seconds (float) or datetime.
        last_accessed: (N,) floats, epoch seconds, when each memory was last recalled.
        importance: (N,) floats, each memory's rating in [1, 10].
        weights, decay_rate: as for retrieval_score and recency_score.
    Returns:
        (N,) float64 numpy array: element i is what your loop gives memory i,
        retrieval_score(relevance[i], recency_score(now, last_accessed[i], decay_rate),
        importance_score(importance[i]), weights), to about 1e-12.

    Example (one hour old and on topic; just recalled, unrelated, top importance):
        retrieval_scores([0.8, 0.0], now, [now - 3600, now], [7, 10]) -> array([2.495, 2.])
    """
    import numpy as np  # here, not at the top: importing scoring stays fast and pure Python

    now = as_timestamp(now, "now")
    weights = check_weights(weights)
    decay_rate = check_decay_rate(decay_rate)
    relevance, last_accessed, importance = (
        _float_array(values, name)
        for values, name in (
            (relevance, "relevance"),
            (last_accessed, "last_accessed"),
            (importance, "importance"),
        )
    )
    if not len(relevance) == len(last_accessed) == len(importance):
        raise ValueError(
            f"relevance, last_accessed and importance must have one value per memory, got "
            f"{len(relevance)}, {len(last_accessed)} and {len(importance)} values"
        )
    if importance.size and not ((importance >= 1) & (importance <= 10)).all():
        bad = importance[(importance < 1) | (importance > 10)][0]
        raise ValueError(f"importance must be in [1, 10], got {bad:g}")
    # TODO: notebook 09. The inputs are 1-D float64 arrays of the same length N, `now`
    # float seconds, `weights` three floats, `decay_rate` a float in (0, 1]. Compute the
    # score of every memory at once, with numpy operations on whole arrays and no Python
    # loop over memories: the same three signals and weighted sum as your scalar
    # functions, each applied elementwise. Check one number by hand: a memory last
    # recalled 24 hours ago keeps about 0.887 of its recency at 0.995 an hour. Pitfall:
    # the clamp for a last access in the future must act on each memory's own gap, not
    # on the array as a whole (Python's max() of an array is one number).
    ### BEGIN SOLUTION
    hours = np.maximum(now - last_accessed, 0.0) / SECONDS_PER_HOUR  # (N,) hours, not seconds
    recency = decay_rate**hours  # (N,): elementwise, one memory's gap each
    w_relevance, w_recency, w_importance = weights
    return w_relevance * relevance + w_recency * recency + w_importance * (importance / 10.0)
    ### END SOLUTION


def _float_array(values, name: str):
    """`values` as a 1-D float64 numpy array of finite numbers, or a ValueError naming it."""
    import numpy as np

    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a sequence of numbers, got {values!r:.60}") from None
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one value per memory), got shape {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} must hold finite numbers, got {array[~np.isfinite(array)][0]}")
    return array
