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
import struct
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from base.vectors import Float32Vector

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
# A memory's text holds at most this many characters (about two pages, 2,000 tokens):
# enough for a note or an episode, while a pasted file would make every prompt that
# recalls it as large as the file. Only the embedding input is cut shorter (256 tokens).
MAX_TEXT_CHARS = 8_000
FLOAT32_MAX = 3.4028234663852886e38  # the largest finite float32
FLOAT32_SMALLEST_NORMAL = 1.1754943508222875e-38  # below it float32 loses precision


def as_timestamp(value: Any, name: str = "time") -> float:
    """Return `value` as epoch seconds (float), or raise naming `name` and the rule.

    Accepts int/float seconds or a datetime. A naive datetime is read as local time,
    exactly like `datetime.timestamp()`, so `datetime.now()` and `time.time()` agree.

        as_timestamp(datetime(2026, 1, 1, tzinfo=timezone.utc)) -> 1767225600.0
    """
    if type(value) is float and EPOCH_RANGE[0] <= value <= EPOCH_RANGE[1]:
        return value  # already checked seconds (NaN fails the comparison): the hot path
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
    if isinstance(values, Float32Vector):
        return values.as_tuple()  # a memory's embedding: checked when it was made
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


def as_float32_vector(values: Any, name: str = "embedding") -> tuple[float, ...]:
    """as_vector, then each value rounded to the nearest float32 (kept as Python floats).

    A memory's vector is rounded once, when the memory is made, so that a file holding
    float32s keeps it exactly and a reopened store ranks exactly as before; scores are
    still computed in float64 from these values.
        as_float32_vector([0.1, 1.0]) -> (0.10000000149011612, 1.0)
    A value beyond float32's range (3.4e38) is refused. A value too small for float32
    (below about 1e-45) becomes 0 when the vector's largest value is of normal float32
    size, since that changes its direction less than float32's own rounding does; a
    vector whose every value is that tiny would lose its direction, so it is refused.
    """
    vector = as_vector(values, name)
    packing = struct.Struct(f"<{len(vector)}f")
    try:  # C-speed rounding to float32; too large a value raises OverflowError
        rounded = packing.unpack(packing.pack(*vector))
    except OverflowError:
        rounded = ()
    if len(rounded) != len(vector) or (
        rounded.count(0.0) != vector.count(0.0) and max(map(abs, vector)) < FLOAT32_SMALLEST_NORMAL
    ):
        i, x = next((i, x) for i, x in enumerate(vector) if not _fits_float32(x))
        raise ValueError(
            f"{name}[{i}] = {x!r} cannot be kept as a float32: values must be at most "
            f"{FLOAT32_MAX:.3g} in size, and a vector needs at least one value above "
            f"{FLOAT32_SMALLEST_NORMAL:.3g}; rescale the vector (cosine similarity "
            "ignores its length)"
        )
    return rounded


def _fits_float32(x: float) -> bool:
    """True if float32 holds `x` as a number of the same kind (not inf, not 0 for non-0)."""
    try:
        (rounded,) = struct.unpack("<f", struct.pack("<f", x))
    except OverflowError:
        return False
    return (rounded == 0.0) == (x == 0.0)


def check_memory_text(value: Any, name: str = "text") -> str:
    """Return `value` if it is a string of at most MAX_TEXT_CHARS characters, else raise."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {type(value).__name__}: {value!r:.80}")
    if len(value) > MAX_TEXT_CHARS:
        raise ValueError(
            f"{name} is {len(value):,} characters long; a memory holds at most "
            f"{MAX_TEXT_CHARS:,} (MAX_TEXT_CHARS): split it into several memories or "
            f"store a summary. It starts {value[:40]!r}"
        )
    _check_unicode(value, name)
    return value


def check_bool(value: Any, name: str) -> bool:
    """Return `value` if it is True or False, else TypeError: "yes", 1 or None are no flag."""
    if not isinstance(value, bool):
        raise TypeError(
            f"{name} must be True or False, got {value!r} of type {type(value).__name__}"
        )
    return value


def check_ids(values: Any, name: str) -> tuple[str, ...]:
    """Return memory ids (a list, tuple or set of non-empty strings) as a tuple, else raise.

    A single string is refused: "m12" is not the ids "m", "1", "2" (the substring trap
    of `"m1" in "m12"`).
        check_ids(["m1", "m2"], "evidence") -> ('m1', 'm2')
    """
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise TypeError(
            f"{name} must be a list or set of memory ids, got {type(values).__name__}: "
            f"{values!r:.60}"
            + (f" (for one id write [{values!r}])" if isinstance(values, str) else "")
        )
    ids = tuple(values)
    for i, value in enumerate(ids):
        if not isinstance(value, str) or not value:
            raise TypeError(f"{name}[{i}] must be a memory id (a non-empty string), got {value!r}")
    return ids


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
    _check_unicode(value, name)
    return value


def _check_unicode(value: str, name: str) -> None:
    """Refuse lone surrogates: undecodable bytes (argv, a file) that no file can store."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"{name} must be valid Unicode text, but it holds {value[exc.start]!r} at "
            f"position {exc.start}: bytes that were not UTF-8 (decode them first, e.g. "
            f"data.decode('utf-8', 'replace')); got {value[:40]!r}"
        ) from None


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


def check_half_lives(half_lives: Any) -> dict[str, float]:
    """Return `half_lives` as {kind: hours} for every kind, or raise naming the rule.

    A half-life is in hours and > 0; math.inf means "never fades" (the kind's recency
    stays 1.0). None is refused rather than guessed at: write math.inf for a kind
    that does not fade, so one spelling means one thing.

        check_half_lives({"episodic": 1080, "semantic": math.inf, "procedural": math.inf})
            -> {'episodic': 1080.0, 'semantic': inf, 'procedural': inf}
    """
    if not isinstance(half_lives, Mapping):
        raise TypeError(
            f"half_lives must be a dict of hours per kind, e.g. {{'episodic': 1080.0, "
            f"'semantic': math.inf, 'procedural': math.inf}}; got {half_lives!r}"
        )
    missing = [kind for kind in KINDS if kind not in half_lives]
    if missing:
        raise ValueError(f"half_lives needs an entry for every kind; missing {missing}")
    unknown = sorted(set(half_lives) - set(KINDS), key=repr)  # repr: keys of any type sort
    if unknown:
        raise ValueError(f"half_lives has unknown kind(s) {unknown}; kinds are {list(KINDS)}")
    checked = {}
    for kind in KINDS:
        value = half_lives[kind]
        if value is None:
            raise TypeError(
                f"half_lives[{kind!r}] is None; write math.inf for a kind that never fades"
            )
        if isinstance(value, numbers.Real) and not isinstance(value, bool) and value == math.inf:
            checked[kind] = math.inf  # never fades
            continue
        hours = as_number(value, f"half_lives[{kind!r}]")
        if not hours > 0:
            raise ValueError(
                f"half_lives[{kind!r}] must be a positive number of hours (or math.inf "
                f"for never), got {value!r}"
            )
        checked[kind] = hours
    return checked
