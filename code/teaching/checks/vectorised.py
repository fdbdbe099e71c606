"""Notebook 09's exercise: your score on whole arrays, checked against your own loop.

`retrieval_scores` (code/scoring.py) computes Milestones 1-3 for N memories at once. The
reference here is not a number written out but your own scalar functions, one memory at
a time (the loop notebook 04 built): the two must agree to 1e-9 on every memory.

    check_retrieval_scores()              prints "retrieval_scores: 6 checks passed"
    check_retrieval_scores()              a first wrong try: which memories, which signal
    check_retrieval_scores()              a further wrong try: the next step to take
    check_retrieval_scores(reveal=True)   the expected array beside yours, on request
    compare_with_loop(store, query, now)  largest difference and speed-up on a real store

Each failure says what is off, never the code: which signal is wrong is found by
checking it alone (weights (1, 0, 0), (0, 1, 0), (0, 0, 1)), and which memories by
comparing element by element.

Deliberately left out: grading (this exercise is formative) and the float32 bound of the
index (scale/matrix_scoring.py), which needs your function only to be close, not equal.
"""

from __future__ import annotations

import importlib
import time
from typing import NamedTuple

from teaching.checks.core import HOUR, NOW, CheckFailed, NotImplementedYet

WHERE = "code/scoring.py, notebook 09's exercise (09_scale.ipynb)"
ATOL = 1e-9  # float64 on both sides: the loop and the arrays agree to ~1e-15
SIGNALS = {(1.0, 0.0, 0.0): "relevance", (0.0, 1.0, 0.0): "recency", (0.0, 0.0, 1.0): "importance"}
TRIES: list[str] = []  # what each failed try of this kernel got wrong, for the hint ladder


class ArrayCase(NamedTuple):
    """One call: N memories' inputs and the settings, and what the case is about."""

    about: str
    relevance: tuple[float, ...]
    last_accessed: tuple[float, ...]
    importance: tuple[float, ...]
    weights: tuple[float, float, float] = (1.0, 1.0, 1.0)
    decay_rate: float = 0.995


CASES = [
    ArrayCase("the course's three signals", (0.8, 0.0, -0.5), (NOW - HOUR, NOW, NOW - 24 * HOUR),
              (7, 10, 1)),
    ArrayCase("hours between recalls", (0.1, 0.2, 0.3, 0.4),
              (NOW - 90.0, NOW - 5 * HOUR, NOW - 138 * HOUR, NOW - 2000 * HOUR), (5, 5, 5, 5)),
    ArrayCase("a last access in the future, beside past ones", (0.5, 0.5, 0.5),
              (NOW + 3 * HOUR, NOW - 3 * HOUR, NOW + 1.0), (4, 4, 4)),
    ArrayCase("fractional ratings", (0.0, 0.0, 0.0), (NOW, NOW, NOW), (5.5, 6, 9.9)),
    ArrayCase("unequal weights", (0.9, 0.3), (NOW - 10 * HOUR, NOW - 200 * HOUR), (2, 9),
              weights=(0.55, 0.25, 0.2)),
    ArrayCase("another decay rate", (0.2, 0.6), (NOW - 7 * HOUR, NOW - 30 * HOUR), (3, 8),
              decay_rate=0.9),
]  # fmt: skip

NEXT_STEP = {  # which signal is off -> the next step (a concept and a number, never code)
    "relevance": "the relevance part is passed in already: each memory's cosine counts once, "
    "times the first weight, as it is",
    "recency": "work out one memory by hand: recalled 24 hours ago at 0.995 an hour it keeps "
    "about 0.887 of its recency; the gap is counted in hours",
    "recency in the future": "only memories whose last access is after `now` are off: such a "
    "memory counts as recalled no time ago (recency 1.0), each one on its own, whatever the "
    "other memories' gaps are",
    "importance": "a rating of 7 contributes 0.7 at weight 1: the rating as a share of the top "
    "of the scale, for every memory, fractions kept",
    "weights": "each weight multiplies its own signal: relevance, recency, importance, in that "
    "order; try weights (1, 0, 0) by hand",
    "shape": "return one score per memory: a 1-D array as long as the inputs, not a single "
    "number or a list of rows",
}


def part(signal: str) -> str:
    """How a diagnosis reads in a message: "the recency part", "the shape of the result"."""
    return {
        "recency in the future": "recency, for the memories last accessed after `now`",
        "weights": "which weight goes with which signal",
        "shape": "the shape of the result",
    }.get(signal, f"the {signal} part")


def learner(name: str, module: str = "scoring"):
    return getattr(importlib.import_module(module), name)


def loop_scores(case: ArrayCase, weights=None) -> list[float]:
    """Your scalar functions, one memory at a time: the reference for the arrays."""
    recency, importance, total = (
        learner(name) for name in ("recency_score", "importance_score", "retrieval_score")
    )
    weights = case.weights if weights is None else weights
    return [
        total(rel, recency(NOW, last, decay_rate=case.decay_rate), importance(imp), weights=weights)
        for rel, last, imp in zip(case.relevance, case.last_accessed, case.importance)
    ]


def arrays_of(function, case: ArrayCase, weights=None):
    """Your retrieval_scores on the case, as a list of floats (or the reason it is not one)."""
    import numpy as np

    weights = case.weights if weights is None else weights
    try:
        got = function(
            np.array(case.relevance), NOW, np.array(case.last_accessed),
            np.array(case.importance, dtype=float), weights=weights, decay_rate=case.decay_rate,
        )  # fmt: skip
    except NotImplementedError:
        raise NotImplementedYet(
            f"retrieval_scores is not implemented yet: open {WHERE} and replace the line "
            "`raise NotImplementedError()` in retrieval_scores with your code, then run this "
            "cell again."
        ) from None
    except Exception as error:  # the learner's code crashed: say so in a learner's words
        raise CheckFailed(crash_message(case, error)) from None
    try:
        got = np.asarray(got, dtype=float)
    except (TypeError, ValueError):
        return None  # not numbers at all: "expected one score per memory"
    if got.shape != (len(case.relevance),):
        return None
    return got.tolist()


def crash_message(case: ArrayCase, error: Exception) -> str:
    """What a crash of retrieval_scores means, with the likely slip when it is a known one."""
    text = str(error).splitlines()[0] if str(error) else ""
    said = f"retrieval_scores, case {case.about!r}: your function raised {type(error).__name__}"
    said += f": {text}" if text else ""
    if "truth value of an array" in text:
        said += (
            "\n  likely mistake: Python's own max(), min(), `if` or `and` was given a whole "
            "array; they want one number. numpy has elementwise versions of each (look for "
            "the one that takes the larger of two arrays, element by element)"
        )
    return f"{said}\n  (fix it in {WHERE}, then run this cell again)"


def differing(expected, got) -> list[int]:
    return [i for i, (e, g) in enumerate(zip(expected, got)) if not abs(e - g) <= ATOL]


def diagnose(function, case: ArrayCase) -> str:
    """Which part is off: "shape", one of SIGNALS' values, or "weights"."""
    for weights, signal in SIGNALS.items():
        got = arrays_of(function, case, weights)
        if got is None:
            return "shape"
        wrong = differing(loop_scores(case, weights), got)
        if wrong and any(
            not differing(loop_scores(case, other), got) for other in SIGNALS if other != weights
        ):
            return "weights"  # the weight of one signal went to another
        if wrong and signal == "recency":
            future = [i for i, last in enumerate(case.last_accessed) if last > NOW]
            return "recency in the future" if wrong == future else signal
        if wrong:
            return signal
    return "weights"  # each signal right alone, the weighted sum wrong


def check_retrieval_scores(function=None, *, reveal: bool = False) -> None:
    """Your retrieval_scores against your own loop on six small cases; a hint ladder.

    Prints "retrieval_scores: 6 checks passed" when every element of
    every case agrees with your scalar functions to 1e-9. Otherwise raises CheckFailed:
    a first wrong try says which memories and which signal are off, a further one the
    next step, and reveal=True shows the expected scores beside yours.
    """
    function = learner("retrieval_scores") if function is None else function
    for case in CASES:
        expected, got = loop_scores(case), arrays_of(function, case)
        wrong = list(range(len(expected))) if got is None else differing(expected, got)
        if not wrong:
            continue
        signal = diagnose(function, case)
        head = f"retrieval_scores, case {case.about!r}: "
        if got is None:
            head += f"expected one score per memory ({len(expected)} of them)"
        else:
            worst = max(abs(expected[i] - got[i]) for i in wrong)
            head += (
                f"memories {wrong} of {len(expected)} differ from your loop (by up to {worst:.3g})"
            )
        if reveal:
            raise CheckFailed(
                f"{head}\n  expected (your loop): {[round(x, 12) for x in expected]}\n"
                f"  got (your arrays):    {got}\n  what is off: {part(signal)}: "
                f"{NEXT_STEP[signal]}\n  (fix it in {WHERE})"
            )
        first = not TRIES
        TRIES.append(signal)
        if first:
            raise CheckFailed(
                f"{head}\n  what is off: {part(signal)} "
                f"(each signal checked alone, the other weights 0)\n  (fix it in {WHERE}; run this "
                "cell again after a fix for a further hint, or pass reveal=True for the answer)"
            )
        raise CheckFailed(
            f"{head}\n  what is off: {part(signal)}\n  next step: {NEXT_STEP[signal]}\n"
            f"  (fix it in {WHERE}; reveal=True shows the expected scores)"
        )
    TRIES.clear()
    print(f"retrieval_scores: {len(CASES)} checks passed")


def compare_with_loop(memories, query, now, weights=(1.0, 1.0, 1.0), decay_rate=0.995):
    """Your arrays against your loop on real memories: largest difference, and the speed-up.

    Both timings are printed as information only (they vary from run to run). Returns
    (largest absolute difference, your array of N scores).
    """
    import numpy as np

    scores = learner("retrieval_scores")
    relevance, recency, importance, total = (
        learner(name)
        for name in ("relevance_score", "recency_score", "importance_score", "retrieval_score")
    )

    def one(m) -> float:
        rel = relevance(query, m.embedding)
        rec = recency(now, m.last_accessed, decay_rate=decay_rate)
        return total(rel, rec, importance(m.importance), weights=weights)

    def loop():
        return [one(m) for m in memories]

    vectors = np.array([m.embedding for m in memories], dtype=np.float64)  # (N, D)
    lengths = np.linalg.norm(vectors, axis=1, keepdims=True)  # (N, 1)
    matrix = np.divide(vectors, lengths, out=np.zeros_like(vectors), where=lengths > 0)
    unit_query = np.asarray(query, dtype=np.float64) / np.linalg.norm(query)  # (D,)
    last = np.array([m.last_accessed for m in memories])  # (N,) epoch seconds
    ratings = np.array([m.importance for m in memories], dtype=float)  # (N,) 1-10

    def arrays():
        cosines = matrix @ unit_query  # (N,) float64: one pass over the matrix
        return scores(cosines, now, last, ratings, weights=weights, decay_rate=decay_rate)

    start = time.perf_counter()
    slow = np.array(loop())
    loop_seconds = time.perf_counter() - start
    start = time.perf_counter()
    fast = np.asarray(arrays(), dtype=float)
    array_seconds = time.perf_counter() - start
    gap = float(np.max(np.abs(fast - slow))) if len(slow) else 0.0
    print(f"largest difference between your loop and your arrays: {gap:.1e}")
    print(
        f"(for information: loop {loop_seconds * 1e3:.1f} ms, arrays "
        f"{array_seconds * 1e3:.2f} ms, about {loop_seconds / max(array_seconds, 1e-9):.0f}x)"
    )
    return gap, fast
