"""The hint ladder of the practice checks: what is off, then the next step, then the answer.

Every practice check (a number question, a field quiz, a set of labels, a blame) climbs it:

    first wrong try              what is off: too big or too small, a unit off by 3600,
                                 out of range, how many items are wrong; never the value
    a second, different one      the next step: a stronger hint, still without the value
    reveal=True                  the answer, and only then

Tries are remembered per question for as long as the kernel runs (module-level state, as
notebooks run in one process). The same wrong answer twice is one try: rerunning a cell
must not climb the ladder. A prediction made before its evidence is shown stops the
notebook when it is empty (`PredictionMissing`), so Run All never prints the evidence first.

Deliberately left out: scoring the tries. These checks are formative and never graded.
"""

from __future__ import annotations

import math

TRIES: dict[str, list] = {}  # question -> the distinct wrong answers given so far
REVEALED: set[str] = set()  # questions whose answer was shown on request
PREDICTED: set[str] = set()  # predictions recorded, so their evidence may be shown


def reset() -> None:
    """Forget every try, reveal and prediction: a fresh kernel's ladder."""
    TRIES.clear()
    REVEALED.clear()
    PREDICTED.clear()


class PredictionMissing(Exception):
    """An empty prediction where the notebook asks for one before it shows the evidence."""


def require_prediction(value, what: str) -> None:
    """Stop the notebook here until `value` holds a prediction ("make your prediction first")."""
    if value is None:
        raise PredictionMissing(
            f"make your prediction first: set {what}, then run this cell again. The "
            "evidence is shown only once you have committed to an answer."
        )


def wrong_try(question: str, answer) -> int:
    """Record a wrong `answer` to `question`; the rung it earns: 1 for the first, 2 after.

    Answers are compared as given (normalise them first: rounded numbers, frozensets), so
    one wrong answer run twice is one try.
    """
    tries = TRIES.setdefault(question, [])
    if answer not in tries:
        tries.append(answer)
    return min(len(tries), 2)


def tries(question: str) -> int:
    """How many distinct wrong answers `question` has had."""
    return len(TRIES.get(question, []))


def revealed(question: str) -> None:
    REVEALED.add(question)


def was_revealed(question: str) -> bool:
    return question in REVEALED


def reveal_hint(call: str) -> str:
    """The line that says how to see the answer: `call` is the check with reveal=True."""
    return f"  Still stuck after a second, different try? {call} shows the answer."


def rounded(value: float, digits: int = 4) -> float:
    """A number as a try: close answers (0.99588, 0.995879) are the same try."""
    if value == 0 or not math.isfinite(value):
        return value
    return round(value, digits - 1 - math.floor(math.log10(abs(value))))


# a factor between two answers -> the units it usually mixes up
UNIT_FACTORS = {
    3600: "seconds and hours (3,600 seconds an hour)",
    1000: "milliseconds and seconds",
    60: "minutes and hours, or seconds and minutes",
    24: "hours and days (24 hours a day)",
    7: "days and weeks",
}


def unit_slip(answer: float, expected: float, tolerance: float = 0.02) -> str | None:
    """The units mixed up when `answer` is `expected` off by a unit factor, or None.

    Checks the values themselves (8,000 vs 2,222,222: a factor) and, for numbers in (0, 1)
    such as a recency or a rate, their logarithms (a power off by the factor: 0.995 ** 1 vs
    0.995 ** 3600).
    """
    pairs = [(answer, expected, "")]
    if 0 < answer < 1 and 0 < expected < 1:
        pairs.append((math.log(answer), math.log(expected), " in the exponent"))
    for got, want, where in pairs:
        if want == 0 or got == 0:
            continue
        ratio = got / want
        for factor, units in UNIT_FACTORS.items():
            for side in (factor, 1 / factor):
                if math.isclose(ratio, side, rel_tol=tolerance):
                    return f"off by a factor of {factor:,}{where}: {units} mixed up?"
    return None


def direction(answer: float, expected: float) -> str:
    """'too big' or 'too small', with how far when it is far."""
    big = answer > expected
    word = "too big" if big else "too small"
    if expected and answer and (answer > 0) == (expected > 0):
        ratio = answer / expected if big else expected / answer
        if ratio >= 10:
            return f"{word}, by more than a factor of 10"
        if ratio >= 2:
            return f"{word}, by more than a factor of 2"
    return word
