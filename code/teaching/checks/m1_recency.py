"""Milestone 1: the checks of recency_score, and the mistakes they recognise.

recency = decay_rate ** hours since last access. The cases hold the course's numbers
(1.0 / 0.995 / 0.990025 for 0, 1 and 2 hours at 0.995), other rates, a rate that never
fades and a last access in the future; the mistakes model the usual slips: seconds or
days instead of hours, a product instead of a power, the part forgotten instead of the
part kept.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from teaching.checks.core import HOUR, NOW, Case, Mistakes, check_cases, passed


def _gap(model: Callable) -> Callable:
    """A recency mistake as a function of (seconds since last access, decay rate)."""
    return lambda now, last_accessed, decay_rate=0.995: model(now - last_accessed, decay_rate)


LINEAR = (
    "recency fell by the same amount every hour (a straight line that reaches 0); it should "
    "keep the same share every hour, so the fall slows down"
)
FUTURE = "a last access in the future must count as 0 hours (clock skew): clamp the hours at 0"

MISTAKES = Mistakes(
    models=[
        (
            "the gap was used in seconds; divide by 3600 to get hours",
            _gap(lambda seconds, rate: rate**seconds),
        ),
        (
            "the gap was used in minutes; divide the seconds by 3600 to get hours",
            _gap(lambda seconds, rate: rate ** (seconds / 60)),
        ),
        (
            "the gap was converted to days; the decay rate is per hour (divide by 3600)",
            _gap(lambda seconds, rate: rate ** (seconds / 86400)),
        ),
        (
            "the gap was divided by 3,600,000, as if the times were milliseconds; times are "
            "epoch seconds, so an hour is 3600 of them",
            _gap(lambda seconds, rate: rate ** (seconds / 3_600_000)),
        ),
        *[
            (
                "the hours were cut to whole hours (floor division, or int): 30 minutes "
                "counted as 0 hours; keep the fraction of an hour",
                _gap(model),
            )
            for model in (
                lambda seconds, rate: rate ** max(0.0, seconds // HOUR),
                lambda seconds, rate: rate ** (seconds // HOUR),
            )
        ],
        (
            "decay_rate was multiplied by the hours; recency keeps the share decay_rate once "
            "per hour, so decay_rate is applied as many times as there are hours (a power)",
            _gap(lambda seconds, rate: rate * seconds / HOUR),
        ),
        (
            LINEAR,
            _gap(lambda seconds, rate: 1 - (1 - rate) * max(0.0, seconds / HOUR)),
        ),
        (
            LINEAR,
            _gap(lambda seconds, rate: 1 - (1 - rate) * seconds / HOUR),
        ),
        (
            "e was raised to the power of minus decay_rate times the hours; decay_rate is "
            "already the share kept per hour, no e is needed: 1 hour must give decay_rate itself",
            _gap(lambda seconds, rate: math.exp(-rate * max(0.0, seconds / HOUR))),
        ),
        (
            "a continuous decay (e to the power of minus the part lost, times the hours) is "
            "close but not the rule: 1 hour must give exactly decay_rate, 2 hours its square",
            _gap(lambda seconds, rate: math.exp(-(1 - rate) * max(0.0, seconds / HOUR))),
        ),
        (
            "base and exponent were swapped: the hours were raised to the power decay_rate; "
            "the hours belong in the exponent",
            _gap(lambda seconds, rate: max(0.0, seconds / HOUR) ** rate),
        ),
        (
            "the hours were returned, not the recency they give (1 hour gives decay_rate)",
            _gap(lambda seconds, rate: seconds / HOUR),
        ),
        (
            "this is the part forgotten (1 minus the recency); return the part kept",
            _gap(lambda seconds, rate: 1 - rate ** (seconds / HOUR)),
        ),
        (
            "(1 - decay_rate) ** hours treats decay_rate as the part lost per hour "
            "(LangChain's convention); here it is the part kept",
            _gap(lambda seconds, rate: (1 - rate) ** (seconds / HOUR)),
        ),
        (
            "the gap was taken the wrong way round (last_accessed - now): a past access "
            "gives a negative gap; hours since last access are now - last_accessed",
            _gap(lambda seconds, rate: rate ** (-seconds / HOUR)),
        ),
        (
            "recency stayed 1.0 for every past access: the gap was taken the wrong way round "
            "(last_accessed - now), and clamping that at 0 turned every past access into 0 hours",
            _gap(lambda seconds, rate: rate ** max(0.0, -seconds / HOUR)),
        ),
        (
            "the size of the gap was used (its absolute value), so a last access in the future "
            "counted as hours ago; " + FUTURE,
            _gap(lambda seconds, rate: rate ** (abs(seconds) / HOUR)),
        ),
        (
            "recency was 1.0 whatever the gap: is the gap computed from the two arguments, "
            "in hours, and does it reach the decay?",
            _gap(lambda seconds, rate: 1.0),
        ),
        (FUTURE, _gap(lambda seconds, rate: rate ** (seconds / HOUR))),
        (
            "the decay_rate argument was ignored (0.995 was used instead)",
            _gap(lambda seconds, rate: 0.995 ** (seconds / HOUR)),
        ),
    ],
    limits=(0.0, 1.0, "recency above 1: " + FUTURE),
)

CASES = [
    Case((NOW, NOW), 1.0, {"decay_rate": 0.995}, "recency_score(now, now)  # 0 hours"),
    Case((NOW, NOW - HOUR), 0.995, {"decay_rate": 0.995}, "recency_score(now, now - hour)"),
    Case(
        (NOW, NOW - 2 * HOUR), 0.990025, {"decay_rate": 0.995}, "recency_score(now, now - 2*hour)"
    ),
    Case((NOW, NOW - 30 * 60), 0.9974968671, {}, "recency_score(now, now - 30 minutes)"),
    Case((NOW, NOW - 10 * HOUR), 0.3486784401, {"decay_rate": 0.9}),
    Case(
        (NOW, NOW - 48 * HOUR),
        1.0,
        {"decay_rate": 1.0},
        "recency_score(now, now - 48*hour, decay_rate=1.0)",
    ),
    Case((NOW, NOW + HOUR), 1.0, {}, "recency_score(now, now + hour)  # clock skew: future"),
]


def check_recency_score(function: Callable | None = None) -> None:
    """Milestone 1: the course's 1.0 / 0.995 / 0.990025, other rates, never fading, skew."""
    passed("recency_score", check_cases("recency_score", CASES, function, MISTAKES))
