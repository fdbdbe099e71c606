"""Milestone 2: the checks of importance_score and relevance_score, and their mistakes.

importance = rating / 10; relevance = cosine similarity. The cases hold the course's
0.8 for a rating of 8, the ends of the scale, vectors of every angle (same, orthogonal,
45 degrees, opposite) and a zero vector; the mistakes model the raw rating, floor
division, rounding, the bare dot product, one length instead of two, lengths not
square-rooted, a distance or an angle instead of a similarity.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from teaching.checks.core import Case, Mistakes, check_cases, passed

IMPORTANCE_MISTAKES = Mistakes(
    models=[
        ("the rating was returned as is; divide by 10", lambda imp: imp),
        ("floor division (//) drops the fraction; use / 10", lambda imp: imp // 10),
        ("divided by 100; the rating is out of 10", lambda imp: imp / 100),
        (
            "the rating was cut to a whole number (int) first; keep its fraction: 5.5 -> 0.55",
            lambda imp: int(imp) / 10,
        ),
        (
            "the rating was rounded to a whole number first (5.5 became 6); keep its fraction: "
            "a rating of 5.5 is 0.55",
            lambda imp: round(imp) / 10,
        ),
        (
            "the scale was turned upside down (1 - rating / 10): a core rating of 10 must give "
            "1.0, a mundane 1 gives 0.1",
            lambda imp: 1 - imp / 10,
        ),
        (
            "one was subtracted from the rating first; the rule is rating / 10",
            lambda imp: (imp - 1) / 10,
        ),
        ("min-max scaling (imp - 1) / 9; the rule is importance / 10", lambda imp: (imp - 1) / 9),
        ("the rating was inverted (1 / importance)", lambda imp: 1 / imp),
    ],
)
RELEVANCE_MISTAKES = Mistakes(
    models=[
        (
            "this is the bare dot product; divide it by both vectors' lengths (cosine)",
            lambda q, m: _dot(q, m),
        ),
        (
            "divided by the query's length only; divide by both lengths",
            lambda q, m: _dot(q, m) / _norm(q),
        ),
        (
            "divided by the memory's length only; divide by both lengths",
            lambda q, m: _dot(q, m) / _norm(m),
        ),
        (
            "the lengths were not square-rooted: a vector's length is the square root of the "
            "sum of its squares; divide the dot product by both lengths",
            lambda q, m: _dot(q, m) / (_dot(q, q) * _dot(m, m)),
        ),
        (
            "divided by one length, then multiplied by the other: the product of the two "
            "lengths must be divided as a whole (mind the brackets)",
            lambda q, m: _dot(q, m) / _norm(q) * _norm(m),
        ),
        (
            "divided by the sum of the lengths; divide by their product",
            lambda q, m: _dot(q, m) / (_norm(q) + _norm(m)),
        ),
        (
            "this is cosine distance (1 - cosine); return the similarity",
            lambda q, m: 1 - _cos(q, m),
        ),
        ("this is the Euclidean distance; use cosine similarity", lambda q, m: _dist(q, m)),
        (
            "this is the angle between the vectors (the arccos of the cosine); return the "
            "cosine itself: 1 for the same direction, 0 at right angles",
            lambda q, m: math.acos(max(-1.0, min(1.0, _cos(q, m)))),
        ),
        (
            "the absolute value of cosine; keep the sign (opposite = -1)",
            lambda q, m: abs(_cos(q, m)),
        ),
    ],
    nan="NaN comes from dividing by a zero length: return 0.0 for a zero vector",
    limits=(
        -1.0,
        1.0,
        "cosine lies in [-1, 1], but rounding can push it a hair past 1.0: clamp the result "
        "into [-1, 1] after dividing by both lengths",
    ),
)


def _dot(q, m):
    return sum(a * b for a, b in zip(q, m))


def _norm(v):
    return math.sqrt(_dot(v, v))


def _cos(q, m):
    return _dot(q, m) / (_norm(q) * _norm(m))


def _dist(q, m):
    return math.sqrt(sum((a - b) ** 2 for a, b in zip(q, m)))


IMPORTANCE_CASES = [
    Case((8,), 0.8),
    Case((1,), 0.1),
    Case((10,), 1.0),
    Case((5.5,), 0.55),
]

RELEVANCE_CASES = [
    Case(([1.0, 0.0, 0.0], [1.0, 0.0, 0.0]), 1.0),
    Case(([1.0, 0.0], [0.0, 1.0]), 0.0),
    Case(([1.0, 0.0], [1.0, 1.0]), 0.7071067812),
    Case(([3.0, 4.0], [6.0, 8.0]), 1.0, {}, "relevance_score([3, 4], [6, 8])  # same direction"),
    Case(([1.0, 2.0, 2.0], [2.0, 0.0, 1.0]), 0.5962847940),
    Case(([1.0, 0.0], [-2.0, 0.0]), -1.0, {}, "relevance_score([1, 0], [-2, 0])  # opposite"),
    Case(([0.0, 0.0], [1.0, 1.0]), 0.0, {}, "relevance_score([0, 0], [1, 1])  # zero vector"),
    # subtle: every plain formula gives 1.0000000000000002 here (floats round): two square
    # roots or one, math.hypot, numpy's norm or dot alike; only a clamped cosine stays in [-1, 1]
    Case(
        ([-0.5, -0.2, 0.6], [-1.5, -0.6, 1.8]),
        1.0,
        {},
        "relevance_score([-0.5, -0.2, 0.6], [-1.5, -0.6, 1.8])  # same direction, rounding",
    ),
]


def check_importance_score(function: Callable | None = None) -> None:
    """Milestone 2: ratings 1-10 become 0.1-1.0."""
    passed(
        "importance_score",
        check_cases("importance_score", IMPORTANCE_CASES, function, IMPORTANCE_MISTAKES),
    )


def check_relevance_score(function: Callable | None = None) -> None:
    """Milestone 2: cosine similarity, length-independent, signed, 0.0 for a zero vector."""
    passed(
        "relevance_score",
        check_cases("relevance_score", RELEVANCE_CASES, function, RELEVANCE_MISTAKES),
    )
