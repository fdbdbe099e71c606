"""Milestone 3: the checks of retrieval_score, and the mistakes they recognise.

score = w_rel * relevance + w_rec * recency + w_imp * importance. The cases hold the
course's 1.30 / 1.30 / 2.40 with equal weights, then unequal weights, where a weight
paired with the wrong signal shows; the mistakes model swapped or ignored weights, a
mean instead of a sum, a product, a maximum.
"""

from __future__ import annotations

from collections.abc import Callable

from teaching.checks.core import Case, Mistakes, check_cases, passed


def _wsum(weights, *signals):
    return sum(w * s for w, s in zip(weights, signals))


MISTAKES = Mistakes(
    models=[
        *[
            (
                "the weights were paired with the wrong signals: " + text,
                lambda rel, rec, imp, weights=(1.0, 1.0, 1.0), order=order: sum(
                    weights[i] * s for i, s in zip(order, (rel, rec, imp))
                ),
            )
            for order, text in [
                ((0, 2, 1), "the recency and importance weights are swapped"),
                ((1, 0, 2), "the relevance and recency weights are swapped"),
                ((2, 1, 0), "the relevance and importance weights are swapped"),
                ((1, 2, 0), "each weight is one signal off (weights rotated)"),
                ((2, 0, 1), "each weight is one signal off (weights rotated)"),
            ]
        ],
        (
            "the weights were ignored (plain sum)",
            lambda rel, rec, imp, weights=None: rel + rec + imp,
        ),
        (
            "each weight was added to its signal; multiply each signal by its weight, then add",
            lambda rel, rec, imp, weights=(1.0, 1.0, 1.0): sum(
                w + s for w, s in zip(weights, (rel, rec, imp))
            ),
        ),
        (
            "only the relevance weight was used, for all three signals; each signal has its "
            "own weight",
            lambda rel, rec, imp, weights=(1.0, 1.0, 1.0): weights[0] * (rel + rec + imp),
        ),
        (
            "the weighted sum was divided by 3 (a mean); return the sum",
            lambda rel, rec, imp, weights=(1.0, 1.0, 1.0): _wsum(weights, rel, rec, imp) / 3,
        ),
        (
            "the weighted sum was divided by the sum of the weights; return the sum",
            lambda rel, rec, imp, weights=(1.0, 1.0, 1.0): (
                _wsum(weights, rel, rec, imp) / sum(weights)
            ),
        ),
        (
            "the signals were multiplied together; add the weighted signals",
            lambda rel, rec, imp, weights=(1.0, 1.0, 1.0): rel * rec * imp,
        ),
        (
            "only the largest weighted signal was kept; add all three",
            lambda rel, rec, imp, weights=(1.0, 1.0, 1.0): max(
                w * s for w, s in zip(weights, (rel, rec, imp))
            ),
        ),
    ],
)

CASES = [
    Case((), 1.30, {"rel": 0.9, "rec": 0.10, "imp": 0.3, "weights": (1.0, 1.0, 1.0)}),
    Case((), 1.30, {"rel": 0.1, "rec": 1.00, "imp": 0.2, "weights": (1.0, 1.0, 1.0)}),
    Case((), 2.40, {"rel": 0.8, "rec": 0.90, "imp": 0.7, "weights": (1.0, 1.0, 1.0)}),
    Case((0.8, 0.9, 0.7), 2.40, {}, "retrieval_score(0.8, 0.9, 0.7)  # default weights"),
    Case((0.5, 0.2, 0.9), 2.0, {"weights": (2.0, 0.5, 1.0)}),
    Case((0.5, 0.2, 0.9), 0.2, {"weights": (0.0, 1.0, 0.0)}),
    Case((0.6, 0.3, 0.4), 0.485, {"weights": (0.55, 0.25, 0.20)}),
]


def check_retrieval_score(function: Callable | None = None) -> None:
    """Milestone 3: the course's 1.30 / 1.30 / 2.40, then unequal weights."""
    passed("retrieval_score", check_cases("retrieval_score", CASES, function, MISTAKES))
