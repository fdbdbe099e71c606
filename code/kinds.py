"""Half-lives: the human way to state a decay rate, and a default per kind of memory.

`recency_score` takes an hourly decay rate (0.995 keeps 99.5% of recency per hour). A
half-life says the same thing in words people use: "after 138 hours, half is left".
The two convert exactly: rate ** half_life = 0.5.

Kinds differ in how they should fade. An episode ("on 12 March we debugged a pool
leak") is history and fades; a fact ("deploys on Fridays are forbidden") or a skill
stays true until it is superseded, so it does not fade at all (infinite half-life,
decay rate 1.0).

Deliberately left out: ranking with these rates (see kind-aware retrieval).

    >>> round(half_life_hours(0.995), 1)
    138.3
    >>> round(decay_rate_for_half_life(138.3), 5)
    0.995
    >>> decay_rate_for_kind("semantic")  # facts do not fade
    1.0
"""

from __future__ import annotations

import math

from memory_store import KINDS, as_number, check_kind

HOURS_PER_DAY = 24.0

# hours; episodes fade over ~6 weeks, facts and skills only when superseded
DEFAULT_HALF_LIVES: dict[str, float] = {
    "episodic": 45 * HOURS_PER_DAY,
    "semantic": math.inf,
    "procedural": math.inf,
}


def decay_rate_for_half_life(half_life_hours: float) -> float:
    """The hourly decay rate that halves recency every `half_life_hours` (inf -> 1.0).

    decay_rate_for_half_life(138.3) -> 0.99500 (approximately)
    """
    if half_life_hours == math.inf and not isinstance(half_life_hours, bool):
        return 1.0  # never fades
    hours = as_number(half_life_hours, "half_life_hours")
    if not hours > 0:
        raise ValueError(f"half_life_hours must be positive (or math.inf), got {half_life_hours!r}")
    return 0.5 ** (1.0 / hours)


def half_life_hours(decay_rate: float) -> float:
    """Hours until recency halves at an hourly `decay_rate` in (0, 1] (1.0 -> inf).

    half_life_hours(0.995) -> 138.28...
    """
    rate = as_number(decay_rate, "decay_rate")
    if not 0.0 < rate <= 1.0:
        raise ValueError(f"decay_rate must be in (0, 1], got {decay_rate!r}")
    if rate == 1.0:
        return math.inf
    return math.log(0.5) / math.log(rate)


def decay_rate_for_kind(kind: str, half_lives: dict[str, float] | None = None) -> float:
    """The hourly decay rate for one kind of memory, from `half_lives` (hours per kind)."""
    kind = check_kind(kind)
    table = DEFAULT_HALF_LIVES if half_lives is None else half_lives
    missing = [k for k in KINDS if k not in table]
    if missing:
        raise ValueError(f"half_lives needs an entry for every kind; missing {missing}")
    return decay_rate_for_half_life(table[kind])
