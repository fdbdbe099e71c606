"""Whether one memory may be forgotten: the course's pruning rule.  (Optional Milestone 7.)

A store that only grows gets worse: every query scores memories nobody ever needed. So a
memory system forgets on purpose, by a rule you can read. A memory may be forgotten only
when every one of these holds:

    it is an episode       kind "episodic": facts and skills are replaced, never pruned
    it is live             superseded_by is None: a replaced episode is evidence
    it is old              created more than `older_than_days` days before `now` (180)
    it is unimportant      importance below `importance_below` on the 1-10 scale (3;
                           the course writes 0.3 on a 0-1 scale)
    it was never recalled  last_accessed is still created_at: no query ever wanted it

extensions/forgetting.forgettable and prune ask this function about every memory (and
add one rule of the store's: a memory another one links to is kept).

Deliberately left out: the links between memories (the store knows them, one memory does
not), and removing anything (prune does that).
"""

from __future__ import annotations

from base.units import SECONDS_PER_DAY
from base.validation import as_timestamp
from memory_store import Memory

OLDER_THAN_DAYS = 180.0
IMPORTANCE_BELOW = 3.0  # on the 1-10 scale


def should_forget(
    memory: Memory,
    now,
    older_than_days: float = OLDER_THAN_DAYS,
    importance_below: float = IMPORTANCE_BELOW,
) -> bool:
    """True when `memory` is an old, unimportant, never-recalled, live episode.

    Inputs:
        memory: a Memory (its kind, superseded_by, created_at, last_accessed and
            importance are what count).
        now: the current time, epoch seconds (or a timezone-aware datetime).
        older_than_days: how old, in days, a memory must be: strictly older than this.
        importance_below: the importance (1-10) a memory must stay strictly under.
    Returns:
        bool: True to forget it, False to keep it.

    Example:
        an episode of importance 2, written 200 days ago and never recalled -> True;
        the same memory 180 days old exactly, or of importance 3, or recalled once -> False
    """
    if not isinstance(memory, Memory):
        raise TypeError(f"memory must be a Memory, got {type(memory).__name__}")
    now = as_timestamp(now, "now")
    # TODO: optional Milestone 7. `now` is float epoch seconds, like the memory's
    # created_at and last_accessed; the thresholds are checked by the caller. Return
    # True only when all five rules of the module's docstring hold. The age is in days
    # (SECONDS_PER_DAY is imported above), "older than" and "below" are strict, and
    # "never recalled" compares two of the memory's own times.
    ### BEGIN SOLUTION
    days_old = (now - memory.created_at) / SECONDS_PER_DAY
    return (
        memory.kind == "episodic"
        and memory.superseded_by is None
        and days_old > older_than_days
        and memory.importance < importance_below
        and memory.last_accessed == memory.created_at
    )
    ### END SOLUTION
