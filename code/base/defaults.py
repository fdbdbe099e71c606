"""The lab's defaults, written once: the course's recall settings and its fixed clock.

    recency_score(now, then)            uses DECAY_RATE  (0.995 kept per hour)
    retrieval_score(rel, rec, imp)      uses WEIGHTS     (1.0, 1.0, 1.0)
    retrieve(store, query, now)         returns TOP_K    (3) memories
    kind_recency_score(now, then, kind) uses HALF_LIVES  (hours per kind: episodes 45 days,
                                                          facts and skills never fade)

config.py reads the same values as the defaults of its settings, so a setting that is
not given means exactly what a function argument that is not given means.

Deliberately left out: anything a user sets (config.py reads the environment).
"""

from __future__ import annotations

import math
from types import MappingProxyType

DECAY_RATE = 0.995  # recency kept per hour: it halves in about 138 hours
WEIGHTS = (1.0, 1.0, 1.0)  # (relevance, recency, importance): the course's equal weights
TOP_K = 3  # memories paged into the prompt per message
# Hours until a kind's recency halves (Milestone 5). Episodes are history: they fade over
# weeks. Facts and skills stay true until they are superseded, so they never fade:
# math.inf, where 0.5 ** (hours / inf) = 0.5 ** 0 = 1.0. (A half-life is not a decay rate:
# rate = 0.5 ** (1 / half_life), so 1080 hours is a rate of about 0.99936 per hour.)
HALF_LIVES = MappingProxyType(  # read-only: a default argument nobody can change by accident
    {"episodic": 45 * 24.0, "semantic": math.inf, "procedural": math.inf}
)
COURSE_NOW = 1_000_000.0  # the course examples' fixed "now", epoch seconds
