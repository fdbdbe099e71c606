"""Optional Milestone 7: the checks of should_forget, and the slips they recognise.

One memory, one question: may it be forgotten? Only a live episode, strictly older than
`older_than_days`, of importance strictly below `importance_below` and never recalled.
Each case changes one thing of a memory that may go (its kind, a recall, its age, its
importance, a replacement, the thresholds) and lists what the usual slips answer on it
(`Case.slips`): a rule left out, "or" instead of "and", the age in seconds, a limit
that counts as inside, the course's 0-1 scale, the default thresholds used always.
"""

from __future__ import annotations

from collections.abc import Callable

from base.defaults import COURSE_NOW
from base.units import SECONDS_PER_DAY
from memory_store import Memory
from teaching.checks.core import Case, ValueMistakes, check_values, passed

NAME = "should_forget"
NOW = COURSE_NOW
MISTAKES = ValueMistakes(
    returns="True or False (a bool)",
    messages={
        "kind_ignored": (
            "a fact or a skill was forgotten: only episodes (kind 'episodic') may go; "
            "facts and skills are replaced, never pruned"
        ),
        "recall_ignored": (
            "a memory recalled since it was written was forgotten: 'never recalled' means "
            "last_accessed is still equal to created_at"
        ),
        "superseded_ignored": (
            "a replaced episode was forgotten: a superseded memory (superseded_by set) is "
            "evidence for the one that replaced it, so it stays"
        ),
        "any_rule": ("one rule was enough to forget; every rule must hold (and, not or)"),
        "age_units": (
            "the age was compared in seconds or hours: older_than_days counts days "
            "(divide the seconds between created_at and now by SECONDS_PER_DAY)"
        ),
        "age_inclusive": (
            "a memory exactly older_than_days old was forgotten: 'older than' is strict (> not >=)"
        ),
        "importance_inclusive": (
            "a memory whose importance equals importance_below was forgotten: 'below' is "
            "strict (< not <=)"
        ),
        "importance_scale": (
            "an important memory was forgotten: importance is on the 1-10 scale here, like "
            "importance_below (the course's 0.3 is 3 on this scale); compare them as they are"
        ),
        "thresholds_ignored": (
            "the older_than_days / importance_below arguments were ignored (180 and 3 "
            "were used): compare with the arguments"
        ),
    },
)


def episode(
    age_days: float,
    importance: float,
    *,
    kind: str = "episodic",
    recalled_days_ago: float | None = None,
    superseded_by: str | None = None,
) -> Memory:
    """A memory written `age_days` before NOW; recalled `recalled_days_ago` if given."""
    created = NOW - age_days * SECONDS_PER_DAY
    accessed = created if recalled_days_ago is None else NOW - recalled_days_ago * SECONDS_PER_DAY
    return Memory(
        id="m1",
        text="a memory",
        kind=kind,
        created_at=created,
        last_accessed=accessed,
        importance=importance,
        embedding=[1.0, 0.0],
        superseded_by=superseded_by,
    )


def case(call: str, memory: Memory, expected: bool, slips=(), **kwargs) -> Case:
    """`slips` names the mistakes that answer the opposite of `expected` here."""
    return Case((memory, NOW), expected, kwargs, f"should_forget({call}, now)",
                {key: not expected for key in slips})  # fmt: skip


CASES = [
    case("an episode, 200 days old, importance 2, never recalled", episode(200, 2), True),
    case(
        "a fact (semantic), 400 days old, importance 1",
        episode(400, 1, kind="semantic"),
        False,
        ["kind_ignored", "any_rule"],
    ),
    case(
        "an episode, 200 days old, importance 2, recalled 20 days ago",
        episode(200, 2, recalled_days_ago=20),
        False,
        ["recall_ignored", "any_rule"],
    ),
    case("an episode, 30 days old, importance 1", episode(30, 1), False, ["age_units", "any_rule"]),
    case(
        "an episode, exactly 180 days old, importance 1",
        episode(180, 1),
        False,
        ["age_inclusive", "age_units", "any_rule"],
    ),
    case(
        "an episode, 250 days old, importance 3",
        episode(250, 3),
        False,
        ["importance_inclusive", "importance_scale", "any_rule"],
    ),
    case(
        "an episode, 250 days old, importance 7",
        episode(250, 7),
        False,
        ["importance_scale", "any_rule"],
    ),
    case(
        "an episode, 250 days old, importance 2, superseded by 'm9'",
        episode(250, 2, superseded_by="m9"),
        False,
        ["superseded_ignored", "any_rule"],
    ),
    case(
        "an episode, 100 days old, importance 2, older_than_days=90",
        episode(100, 2),
        True,
        ["thresholds_ignored"],
        older_than_days=90,
    ),
    case(
        "an episode, 250 days old, importance 4, importance_below=5",
        episode(250, 4),
        True,
        ["thresholds_ignored"],
        importance_below=5,
    ),
]


def check_should_forget(function: Callable | None = None) -> None:
    """Optional Milestone 7: each rule alone keeps a memory; the thresholds are arguments."""
    passed(NAME, check_values(NAME, CASES, function, MISTAKES))
