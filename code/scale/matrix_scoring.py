"""Scoring every memory at once, and knowing when the fast scores can be trusted.

The retriever's score for N memories, as array arithmetic (see scale/memory_index.py for
the arrays): relevance from one float32 matrix-vector product over unit-length rows, then
the learner's own `retrieval_scores` (scoring.py, notebook 09's exercise) for the rest.
Until that is written, `fast_scores` returns None and the caller ranks every memory with
the learner's loop instead: slower, never different.

float32 keeps about 7 digits, so two memories whose scores differ further down can
swap places. The fix is a bound, not more precision: a fast score is never further
than `error_bound` from the exact one, so only memories whose fast score is within
twice that of the k-th best can belong to the exact top k (`within_bound`). Those few
are ranked exactly, by the learner's own rank_memories on a `Shortlist` of them.

    scores = fast_scores(sims, last_accessed, importance, now, weights, 0.995)
    rows = within_bound(scores, k=10, bound=error_bound(384, weights))  # >= 10 rows

Deliberately left out: keeping the arrays in step with a store (scale/memory_index.py) and
approximate nearest-neighbour search, which gives up exactness.
"""

from __future__ import annotations

import math

import numpy as np

from base.validation import as_vector
from memory_store import Memory, MemoryStore

FLOAT32_UNIT = 2.0**-24  # relative rounding error of one float32 operation
# Values outside this range over- or underflow when squared in float64, and the
# reference cosine itself stops being accurate there; they are refused.
SAFE_MAGNITUDE = (1e-100, 1e100)


def fast_scores(sims, last_accessed, importance, now, weights, decay_rate) -> np.ndarray | None:
    """The three-signal score of M memories at once, within error_bound of the exact one.

    Inputs:
        sims: (M,) float32 cosines, from unit rows @ unit query.
        last_accessed: (M,) float64 epoch seconds.   importance: (M,) float64 ratings, 1-10.
        now, weights, decay_rate: already validated, as for rank_memories.
    Returns:
        (M,) float64 scores from the learner's retrieval_scores, or None while it is still
        the stub (raise NotImplementedError): the caller then ranks every memory exactly.
    """
    from scoring import retrieval_scores  # here: scoring stays out of numpy-only imports

    rel = sims.astype(np.float64)  # (M,): float64 from here on, so the bound below holds
    try:
        scores = retrieval_scores(
            rel, now, last_accessed, importance, weights=weights, decay_rate=decay_rate
        )
    except NotImplementedError:
        return None  # notebook 09's exercise not done yet: no shortcut, the loop decides
    return np.asarray(scores, dtype=np.float64)


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


class Shortlist(MemoryStore):
    """Some memories of one store, in that store's order: what the learner's ranking reads.

    The Memory objects are the store's own, so a refresh of last_accessed is the store's;
    nothing is copied and no link rule runs (the memories are live, their links stored).
    """

    def __init__(self, store, memories: list[Memory]) -> None:
        super().__init__(store.embedding_model, user_id=store.user_id)
        self.dimension = store.dimension
        self._memories = {memory.id: memory for memory in memories}
