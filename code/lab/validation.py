"""Validation: every value that crosses into the lab is checked once, where it enters.

Each helper returns the value in the one form the rest of the code relies on (epoch
seconds as a float, a vector as a tuple of floats, weights as three floats) or raises
naming the value and the rule it broke, so a bad input is reported where it was given
rather than surfacing later as a NaN or a traceback from deep inside the arithmetic.

    as_timestamp(datetime(2026, 1, 1, tzinfo=timezone.utc)) -> 1767225600.0
    check_weights((1, 1, 1))                                -> (1.0, 1.0, 1.0)

Deliberately left out: what a value means (scoring.py) and whole objects (a Memory
checks its own fields with these helpers, in memory_store.py).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

# What the signatures say, and what each helper returns:
Timestamp = float | datetime  # epoch seconds, or a datetime converted to them
Vector = Sequence[float]  # a list, tuple or 1-D numpy array of finite floats
Weights = tuple[float, float, float]  # (relevance, recency, importance), each >= 0

# Epoch seconds from 0001-01-01 to 9999-12-31 23:59:59 UTC: what a datetime can hold.
# subtle: not from 0 (1970), because the course's examples reach back before their fixed
# now = 1_000_000.0 (a memory 60 days old is created at now - 60 days < 0).
EPOCH_RANGE = (-62_135_596_800.0, 253_402_300_799.0)
KINDS = ("episodic", "semantic", "procedural")  # events, durable facts, skills
IMPORTANCE_RANGE = (1, 10)  # the Generative Agents "poignancy" scale


def as_timestamp(value: Any, name: str = "time") -> float:
    """Return `value` as epoch seconds (float), or raise naming `name` and the rule.

    Accepts int/float seconds or a datetime. A naive datetime is read as local time,
    exactly like `datetime.timestamp()`, so `datetime.now()` and `time.time()` agree.

        as_timestamp(datetime(2026, 1, 1, tzinfo=timezone.utc)) -> 1767225600.0
    """
    if isinstance(value, datetime):
        seconds = value.timestamp()
    elif isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{name} must be epoch seconds (a number) or a datetime, "
            f"got {value!r} of type {type(value).__name__}"
        )
    else:
        seconds = _to_float(value, name)
    if not math.isfinite(seconds):
        raise ValueError(f"{name} must be a finite number of epoch seconds, got {value!r}")
    problem = time_problem(seconds)
    if problem:
        raise ValueError(f"{name} {value!r} {problem}")
    return seconds


def time_problem(seconds: float) -> str | None:
    """Why `seconds` is outside EPOCH_RANGE, as the end of a message; None if inside.

    The one rule for every time (memories, the chat's now, the dataset loader):
        time_problem(1_000_000.0) -> None
        time_problem(1.7e12)      -> "is after the year 9999: ... milliseconds ..."
    """
    low, high = EPOCH_RANGE
    if seconds < low:
        return f"is before the year 1: times are epoch seconds in [{low:.0f}, {high:.0f}]"
    if seconds > high:
        # subtle: a millisecond timestamp (JavaScript's Date.now(), 1.7e12 in 2024) is the
        # usual slip, and lands tens of thousands of years in the future
        hint = "; it looks like milliseconds: divide by 1000" if seconds <= 1e14 else ""
        return (
            f"is after the year 9999: times are epoch seconds in [{low:.0f}, {high:.0f}], "
            f"not milliseconds{hint}"
        )
    return None


def as_number(value: Any, name: str) -> float:
    """Return `value` as a finite float, or raise naming `name` (bools are refused)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {value!r} of type {type(value).__name__}")
    number = _to_float(value, name)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return number


def as_vector(values: Any, name: str = "embedding") -> tuple[float, ...]:
    """Return `values` as a non-empty tuple of finite floats, or raise naming `name`.

    Lists, tuples and 1-D numpy arrays are all accepted. A zero vector is allowed
    (relevance_score defines its similarity as 0.0); an empty one or a NaN is not.
    """
    if (
        isinstance(values, (tuple, list))
        and values
        and set(map(type, values)) == {float}
        and all(map(math.isfinite, values))
    ):
        return tuple(values)  # the common case (a stored embedding), checked at C speed
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise TypeError(
            f"{name} must be a sequence of numbers, got {type(values).__name__}: {values!r}"
        )
    vector = []
    for i, x in enumerate(values):
        if isinstance(x, bool) or not isinstance(x, numbers.Real):
            raise TypeError(f"{name}[{i}] must be a number, got {x!r} of type {type(x).__name__}")
        x = _to_float(x, f"{name}[{i}]")
        if not math.isfinite(x):
            raise ValueError(f"{name}[{i}] must be finite, got {x!r}")
        vector.append(x)
    if not vector:
        raise ValueError(f"{name} must have at least one value, got an empty sequence")
    return tuple(vector)


def check_int(value: Any, name: str, minimum: int = 1, meaning: str = "") -> int:
    """Return `value` as an int >= `minimum`, or raise naming `name` and the rule.

    A value of the wrong type (a float, a string, a bool) is a TypeError; an integer
    below `minimum` is a ValueError. `meaning` is said in the message, e.g.
    check_int(0, "k", 1, "how many memories to return") ->
        ValueError: k must be an integer >= 1 (how many memories to return), got 0
    """
    rule = f"{name} must be an integer >= {minimum}" + (f" ({meaning})" if meaning else "")
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{rule}, got {value!r} of type {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{rule}, got {value!r}")
    return int(value)


def check_text(value: Any, name: str, meaning: str = "a non-empty string") -> str:
    """Return `value` if it is a string with something besides white space, else raise.

    A value that is not a string is a TypeError; an empty or blank string a ValueError:
        check_text("", "message") -> ValueError: message must be a non-empty string, got ''
    """
    if not isinstance(value, str):
        raise TypeError(f"{name} must be {meaning}, got {value!r} of type {type(value).__name__}")
    if not value.strip():
        raise ValueError(f"{name} must be {meaning}, got {value!r}")
    return value


def check_no_nul(value: str, name: str) -> str:
    """Return `value` unless it holds a NUL character, which no store can keep alike.

    PostgreSQL text cannot hold NUL at all, so every text a store keeps (a memory's id,
    text, user, model and link; a store's user) is refused with this error:
        check_no_nul("a\x00b", "text") -> ValueError: text must not contain a NUL ...
    """
    if "\x00" in value:
        raise ValueError(
            f"{name} must not contain a NUL character (\\x00), got {value!r:.80}: "
            "PostgreSQL text cannot hold one; remove it or replace it with a space"
        )
    return value


def check_k(k: Any) -> int:
    """Return k as an int >= 1 (how many memories to return), or raise naming it."""
    return check_int(k, "k", 1, "how many memories to return")


def _to_float(value: numbers.Real, name: str) -> float:
    try:
        return float(value)
    except OverflowError:  # e.g. 10**400: an int too large for a float
        raise ValueError(f"{name} is too large to be a float: {value!r}") from None


def check_importance(importance: Any) -> float:
    """Return `importance` as a float in [1, 10], or raise saying so."""
    value = as_number(importance, "importance")
    low, high = IMPORTANCE_RANGE
    if not low <= value <= high:
        raise ValueError(f"importance must be in [{low}, {high}], got {importance!r}")
    return value


def check_kind(kind: Any) -> str:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}; got {kind!r}")
    return kind


def check_weights(weights) -> tuple[float, float, float]:
    """Return weights as three finite non-negative floats, or raise saying which rule broke."""
    try:
        values = tuple(weights)
    except TypeError:
        raise TypeError(
            f"weights must be three numbers (relevance, recency, importance), got {weights!r}"
        ) from None
    if len(values) != 3:
        raise ValueError(
            f"weights must be three numbers (relevance, recency, importance), "
            f"got {len(values)}: {weights!r}"
        )
    names = ("relevance", "recency", "importance")
    values = tuple(as_number(w, f"{name} weight") for w, name in zip(values, names))
    for w, name in zip(values, names):
        if w < 0:
            raise ValueError(f"{name} weight must be >= 0, got {w!r}")
    return values


def check_decay_rate(decay_rate) -> float:
    """Return decay_rate as a float in (0, 1], or raise: 0 forgets at once, above 1 grows."""
    decay_rate = as_number(decay_rate, "decay_rate")
    if not 0.0 < decay_rate <= 1.0:
        raise ValueError(
            f"decay_rate must be in (0, 1] (the fraction of recency kept per hour), "
            f"got {decay_rate!r}"
        )
    return decay_rate
