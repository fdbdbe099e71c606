"""Scoring every memory at once, and knowing when the fast scores can be trusted.

The retriever's score for N memories, as array arithmetic (see scale/memory_index.py for
the arrays): relevance from one float32 matrix-vector product over unit-length rows,
recency and importance in float64, all combined with the weights.

float32 keeps about 7 digits, so two memories whose scores differ further down can
swap places. The fix is a bound, not more precision: a fast score is never further
than `error_bound` from the exact one, so only memories whose fast score is within
twice that of the k-th best can belong to the exact top k (`within_bound`). Those few
are rescored exactly, by the learner's own scoring functions.

    scores = fast_scores(sims, last_accessed, importance_tenths, now, weights, 0.995)
    rows = within_bound(scores, k=10, bound=error_bound(384, weights))  # >= 10 rows

Deliberately left out: keeping the arrays in step with a store (scale/memory_index.py) and
approximate nearest-neighbour search, which gives up exactness.
"""

from __future__ import annotations

import math

import numpy as np

from base.units import SECONDS_PER_HOUR
from base.validation import as_vector

FLOAT32_UNIT = 2.0**-24  # relative rounding error of one float32 operation
# Values outside this range over- or underflow when squared in float64, and the
# reference cosine itself stops being accurate there; they are refused.
SAFE_MAGNITUDE = (1e-100, 1e100)


def fast_scores(sims, last_accessed, importance, now, weights, decay_rate) -> np.ndarray:
    """The three-signal score of M memories at once, within error_bound of the exact one.

    Inputs:
        sims: (M,) float32 cosines, from unit rows @ unit query.
        last_accessed: (M,) float64 epoch seconds.   importance: (M,) float64, rating / 10.
        now, weights, decay_rate: already validated, as for rank_memories.
    Returns:
        (M,) float64 scores.
    """
    w_rel, w_rec, w_imp = weights
    scores = sims.astype(np.float64)  # (M,): M-sized temporaries are small beside (M, D)
    scores *= w_rel
    # decay_rate ** hours == exp(hours * ln decay_rate): exp is 4x faster than power in
    # numpy, and the two differ by ~1e-16, far inside the bound
    x = np.subtract(now, last_accessed)  # seconds since last access
    x *= math.log(decay_rate) / SECONDS_PER_HOUR
    np.minimum(x, 0.0, out=x)  # a last access in the future counts as 0 hours
    np.exp(x, out=x)
    x *= w_rec
    scores += x
    np.multiply(importance, w_imp, out=x)
    scores += x
    return scores


def error_bound(dim: int, weights) -> float:
    """How far a fast score can be from the exact one, for unit rows of `dim` values.

    float32 rounds each stored value and the query by at most 2**-24 relative, and a dot
    product of D terms adds at most D roundings of a sum whose terms total <= 1
    (Cauchy-Schwarz on unit vectors), in any order BLAS sums them:
    |fast cosine - cosine| <= (D + 2) * 2**-24 (to first order; +8 covers the rest).
    The float64 parts (recency, importance, the weighted sum, the reference's own
    rounding) are ~1e-15; 1e-12 per weight covers them with room to spare.

        error_bound(384, (1.0, 1.0, 1.0)) -> 2.33e-05 (approximately)
    """
    w_rel, w_rec, w_imp = weights
    return w_rel * (dim + 8) * FLOAT32_UNIT + (w_rel + w_rec + w_imp + 1.0) * 1e-12


def within_bound(scores: np.ndarray, k: int, bound: float) -> np.ndarray | None:
    """Positions of every score that may belong to the exact top k (at least k of them).

    The k best fast scores have exact scores >= kth - bound, so the exact k-th best is
    >= kth - bound, and any memory of the exact top k has a fast score >= kth - 2 bound.
    Returns None when that floor is not a finite number (astronomical weights).
    """
    kth = np.partition(scores, len(scores) - k)[-k]  # the k-th best: O(M), no full sort
    floor = kth - 2.0 * bound
    if not math.isfinite(floor):
        return None
    return np.flatnonzero(scores >= floor)


class Query:
    """A validated query: its floats (for exact rescoring) and its float32 unit vector."""

    __slots__ = ("unit", "values")

    def __init__(self, values: tuple[float, ...]) -> None:
        array = np.asarray(values, dtype=np.float64)  # (D,)
        check_magnitudes(array, "query_embedding")
        self.values = values
        self.unit = unit_rows(array[None, :])[0]  # (D,) float32, so matrix @ unit stays float32

    @classmethod
    def of(cls, query_embedding) -> Query:
        q = query_embedding
        if isinstance(q, np.ndarray) and q.ndim == 1 and q.dtype.kind == "f" and q.size:
            if np.isfinite(q).all():  # fast path: as_vector's checks, vectorized
                return cls(tuple(q.astype(np.float64).tolist()))
        elif (
            isinstance(q, (tuple, list))
            and q
            and all(type(x) is float and math.isfinite(x) for x in q)
        ):
            return cls(tuple(q))  # fast path: already finite floats
        values = as_vector(q, "query_embedding")  # checks everything, with clear errors
        return cls(values)


def unit_rows(block: np.ndarray) -> np.ndarray:
    """(M, D) float64 -> (M, D) float32 rows of length 1; zero rows stay zero."""
    norms = np.sqrt(np.einsum("ij,ij->i", block, block))[:, None]  # (M, 1)
    return np.divide(block, norms, out=np.zeros_like(block), where=norms > 0).astype(np.float32)


def magnitudes_ok(values: np.ndarray) -> bool:
    """True if every value is 0 or within SAFE_MAGNITUDE in size (any array shape)."""
    sizes = np.abs(values[values != 0])
    low, high = SAFE_MAGNITUDE
    return not sizes.size or (sizes.min() >= low and sizes.max() <= high)


def check_magnitudes(values: np.ndarray, what: str) -> None:
    """Refuse values whose squares would over- or underflow (the reference goes wrong there)."""
    if not magnitudes_ok(values):
        sizes = np.abs(values[values != 0])
        low, high = SAFE_MAGNITUDE
        bad = sizes.min() if sizes.min() < low else sizes.max()
        raise ValueError(
            f"{what}: embedding values must be 0 or between {low:g} and {high:g} in size "
            f"for exact ranking, got {bad:g}; rescale the vector (cosine ignores length)"
        )
