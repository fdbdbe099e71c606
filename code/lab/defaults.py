"""The lab's defaults, written once: the course's recall settings and its fixed clock.

    recency_score(now, then)            uses DECAY_RATE  (0.995 kept per hour)
    retrieval_score(rel, rec, imp)      uses WEIGHTS     (1.0, 1.0, 1.0)
    retrieve(store, query, now)         returns TOP_K    (3) memories

config.py reads the same values as the defaults of its settings, so a setting that is
not given means exactly what a function argument that is not given means.

Deliberately left out: anything a user sets (config.py reads the environment).
"""

from __future__ import annotations

DECAY_RATE = 0.995  # recency kept per hour: it halves in about 138 hours
WEIGHTS = (1.0, 1.0, 1.0)  # (relevance, recency, importance): the course's equal weights
TOP_K = 3  # memories paged into the prompt per message
COURSE_NOW = 1_000_000.0  # the course examples' fixed "now", epoch seconds
