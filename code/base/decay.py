"""Helpers on the signals, written once: half-lives and decay rates, min-max rescaling.

    decay_rate_for_half_life(138.3) -> 0.995 (approximately)   a rate that halves in 138 h
    half_life_hours(0.995)          -> 138.28...
    min_max([2.0, 4.0, 3.0])        -> [0.0, 1.0, 0.5]

Recency is decay_rate ** hours, so it halves after log(0.5) / log(decay_rate) hours;
that formula and its inverse are here, used by kind-aware decay (extensions/kinds.py),
the evaluation's strategies and the decay-curve slider. Min-max rescaling is Generative
Agents' normalisation of each signal over the candidates, used by the evaluation and
the weight sliders.

Deliberately left out: the signals themselves (the learner's scoring.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from base.validation import as_number


def decay_rate_for_half_life(half_life_hours: float) -> float:
    """The hourly decay rate that halves recency every `half_life_hours` (inf -> 1.0).

    decay_rate_for_half_life(138.3) -> 0.99500 (approximately)
    """
    if half_life_hours == math.inf and not isinstance(half_life_hours, bool):
        return 1.0  # never fades
    hours = as_number(half_life_hours, "half_life_hours")
    if not hours > 0:
        raise ValueError(f"half_life_hours must be positive (or math.inf), got {half_life_hours!r}")
    rate = 0.5 ** (1.0 / hours)
    if rate == 0.0:  # subtle: below ~0.00093 hours the rate underflows, and 0 is no rate
        raise ValueError(
            f"half_life_hours={half_life_hours!r} is too short: its hourly decay rate "
            "0.5 ** (1 / half_life_hours) rounds to 0; use at least 0.001 hours"
        )
    return rate


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


def min_max(values: Sequence[float]) -> list[float]:
    """Rescale to [0, 1]; if all values are equal there is no spread, so all become 0.5.

    min_max([2.0, 4.0, 3.0]) -> [0.0, 1.0, 0.5];  min_max([7.0, 7.0]) -> [0.5, 0.5]
    """
    low, high = min(values, default=0.0), max(values, default=0.0)
    if high == low:
        return [0.5] * len(values)  # as Generative Agents does; 0/0 otherwise
    return [(v - low) / (high - low) for v in values]
