"""Forgetting on purpose: prune episodes that are old, unimportant and never recalled.

A store that only grows gets worse: every query scores more memories that nobody has
ever needed, and some of them crowd out the ones that matter. So a memory system
forgets deliberately. A memory is forgettable only when all of these hold:

    it is an episode        facts and skills are superseded when wrong, never pruned
    it is live              a superseded episode is evidence for the fact that replaced it
    it is old               created more than `older_than_days` ago (course: 180 days)
    it is unimportant       importance below `importance_below` (course: 0.3 of 1, so 3 of 10)
    it was never recalled   last_accessed is still created_at: no query ever wanted it
    nothing links to it     MemoryStore.remove refuses those, so they are kept

The first five rules are the learner's `should_forget` (code/practice/forgetting_rule.py,
optional Milestone 7): `forgettable`, `prune` and `keep_reasons` ask it about every memory
and add the sixth, which only the store can answer. Until it is written they raise
NotWrittenYet, naming it. `keep_reasons` puts the learner's verdict into words without
knowing the rules itself: it asks should_forget about variants of the memory that differ
from a forgettable one in one respect only (its kind, its link, its age, its importance,
its recalls), and names each respect that on its own makes should_forget keep it.

`prune` removes those and returns them, so the caller can archive them elsewhere;
`prune(..., dry_run=True)` and `keep_reasons` show what would go and why the rest stays.

    gone = prune(store, now)            # [Memory(...), ...]: removed, yours to archive
    keep_reasons(store.get("m4"), now)  # ['recalled since it was written']

A store holding several users' memories is refused: pruning is one user's business.

Deliberately left out: scheduling, archiving to disk, and choosing a user inside a
shared store (open one user's store instead).
"""

from __future__ import annotations

import dataclasses

from base.units import SECONDS_PER_DAY
from base.unwritten import runs_on_learner_code
from base.validation import IMPORTANCE_RANGE, as_number, as_timestamp, check_bool, check_ids
from memory_store import Memory, MemoryStore, check_store
from practice.forgetting_rule import should_forget

OLDER_THAN_DAYS = 180.0
IMPORTANCE_BELOW = 3.0  # on the 1-10 scale; the course's 0.3 on a 0-1 scale


def check_thresholds(older_than_days, importance_below) -> tuple[float, float]:
    """Return both thresholds as floats, or raise naming the bad one and its rule."""
    days = as_number(older_than_days, "older_than_days")
    if days < 0:
        raise ValueError(f"older_than_days must be >= 0, got {older_than_days!r}")
    below = as_number(importance_below, "importance_below")
    low, high = IMPORTANCE_RANGE
    if not low <= below <= high:
        hint = f" (on a 0-1 scale that is {below * 10:g} here)" if 0 < below < 1 else ""
        raise ValueError(
            f"importance_below is on the {low}-{high} importance scale, so it must be in "
            f"[{low}, {high}]; got {importance_below!r}{hint}"
        )
    return days, below


@runs_on_learner_code
def keep_reasons(
    memory: Memory,
    now,
    *,
    older_than_days: float = OLDER_THAN_DAYS,
    importance_below: float = IMPORTANCE_BELOW,
    linked: frozenset[str] = frozenset(),
) -> list[str]:
    """Why `memory` must stay, as your should_forget decides; an empty list means it may go.

    Each reason is one respect of the memory (kind, link, age, importance, recalls) that
    alone makes should_forget keep a variant of a forgettable memory; `linked` holds the
    ids that some memory's superseded_by names (see forgettable).
        keep_reasons(trivial_old_episode, now) -> []
        keep_reasons(fact, now) -> ['semantic: facts and skills are superseded, not pruned']
    """
    if not isinstance(memory, Memory):
        raise TypeError(f"memory must be a Memory, got {type(memory).__name__}")
    linked = frozenset(check_ids(linked, "linked"))  # "m12" alone would match "m1"
    now = as_timestamp(now, "now")
    days, below = check_thresholds(older_than_days, importance_below)
    store_rule = ["another memory names it as its replacement"] if memory.id in linked else []
    if _asked(memory, now, days, below):
        return store_rule
    return _respects_that_keep(memory, now, days, below) + store_rule


_EXPLAINING = []  # the keep_reasons calls under way: should_forget must not call it back


def _asked(memory: Memory, now: float, days: float, below: float) -> bool:
    """should_forget's verdict, refusing a rule that is keep_reasons itself."""
    if _EXPLAINING:
        raise RuntimeError(
            "keep_reasons puts your should_forget's verdict into words, so it cannot be "
            "should_forget's answer: write the five rules in code/practice/forgetting_rule.py "
            "(optional Milestone 7)"
        )
    _EXPLAINING.append(memory.id)
    try:
        result = should_forget(memory, now, days, below)
    finally:
        _EXPLAINING.pop()
    if type(result) is not bool:
        raise TypeError(
            f"should_forget must return True or False, got {result!r} for memory "
            f"{memory.id!r} (code/practice/forgetting_rule.py, optional Milestone 7)"
        )
    return result


def _respects_that_keep(memory: Memory, now: float, days: float, below: float) -> list[str]:
    """The respects of `memory` that alone make should_forget keep a forgettable variant."""
    age_days = (now - memory.created_at) / SECONDS_PER_DAY  # days, not seconds
    recalled_after = memory.last_accessed - memory.created_at  # seconds after it was written
    try:  # a memory every rule lets go: an old, trivial, never-recalled, live episode
        born = min(memory.created_at, now - (days + 365) * SECONDS_PER_DAY)
        base = dataclasses.replace(
            memory, kind="episodic", superseded_by=None, created_at=born,
            last_accessed=born, importance=IMPORTANCE_RANGE[0], metadata={},
        )  # fmt: skip
    except (TypeError, ValueError):  # limits so wide that no valid memory is that old
        base = None
    if base is None or not _asked(base, now, days, below):
        return ["your should_forget keeps it (it keeps even a memory no rule protects)"]
    respects = [
        ({"kind": memory.kind}, f"{memory.kind}: facts and skills are superseded, not pruned"),
        (
            {"superseded_by": memory.superseded_by},
            f"evidence for {memory.superseded_by!r}, which replaced it",
        ),
        (
            {"created_at": memory.created_at, "last_accessed": memory.created_at},
            f"only {age_days:.0f} days old (limit {days:g})",
        ),
        (
            {"importance": memory.importance},
            f"importance {memory.importance:g} is not below {below:g}",
        ),
        ({"last_accessed": base.created_at + recalled_after}, "recalled since it was written"),
    ]
    reasons = []
    for change, reason in respects:
        variant = dataclasses.replace(base, **change)
        if not _asked(variant, now, days, below):
            reasons.append(reason)
    return reasons or ["your should_forget keeps it (no one respect alone explains it)"]


def may_forget(
    memory: Memory, now, *, older_than_days: float, importance_below: float, linked: frozenset
) -> bool:
    """The learner's rule (should_forget), plus the store's: nothing links to it."""
    return _asked(memory, now, older_than_days, importance_below) and memory.id not in linked


@runs_on_learner_code
def forgettable(
    store: MemoryStore,
    now,
    *,
    older_than_days: float = OLDER_THAN_DAYS,
    importance_below: float = IMPORTANCE_BELOW,
) -> list[Memory]:
    """The memories prune would remove, in store order. Changes nothing (a dry run)."""
    now = as_timestamp(now, "now")  # fail before looking at any memory, even in an empty store
    days, below = check_thresholds(older_than_days, importance_below)
    check_store(store).check_one_user("pruning")
    linked = frozenset(m.superseded_by for m in store if m.superseded_by is not None)
    rules = {"older_than_days": days, "importance_below": below, "linked": linked}
    return [m for m in store if may_forget(m, now, **rules)]


@runs_on_learner_code
def prune(
    store: MemoryStore,
    now,
    *,
    older_than_days: float = OLDER_THAN_DAYS,
    importance_below: float = IMPORTANCE_BELOW,
    dry_run: bool = False,
) -> list[Memory]:
    """Remove the forgettable memories and return them (dry_run: only return them).

    The list is decided before the first removal, so a failure cannot leave the store
    half pruned by a rule that changed midway. Inside the one transaction, each memory
    is checked again as the store holds it now (store.reread): a memory kept in a file
    that another process recalled or linked to meanwhile is not pruned (ValueError,
    nothing removed).
        len(prune(store, now)) -> 2
    """
    check_bool(dry_run, "dry_run")
    rules = {"older_than_days": older_than_days, "importance_below": importance_below}
    doomed = forgettable(store, now, **rules)
    if not dry_run:
        with store.transaction():  # every forgettable memory, or none
            for memory in doomed:
                current = store.reread(memory.id)  # the file's row now, not this store's view
                stays = current is not None and not should_forget(current, now, *rules.values())
                if stays:  # e.g. another process recalled it since this store read it
                    reasons = keep_reasons(current, now, **rules) or ["your should_forget says so"]
                    raise ValueError(
                        f"memory {memory.id!r} changed in the store since it was read and "
                        f"must now stay ({'; '.join(reasons)}); nothing was pruned: reopen "
                        "the store and prune again"
                    )
                store.remove(memory.id)
    return doomed
