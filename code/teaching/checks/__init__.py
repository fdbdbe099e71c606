"""Checks that teach, one module per milestone: what notebooks, tests and the grader call.

    from teaching.checks import check_recency_score
    check_recency_score()          # prints "recency_score: 7 checks passed", or explains

    core.py                     the machinery: run cases, name the likely mistake, report
    m1_recency.py               Milestone 1: recency_score
    m2_importance_relevance.py  Milestone 2: importance_score, relevance_score
    m3_retrieval_score.py       Milestone 3: retrieval_score
    m4_retriever.py             Milestone 4: rank_memories, retrieve (scenarios on stores)
    m5_kinds.py                 Milestone 5: kind_recency_score, retrieve_by_kind; kind labels
    m6_importance_parsing.py    optional Milestone 6: parse_importance (a reply -> 1-10/None)
    m7_forgetting.py            optional Milestone 7: should_forget (a bool per memory)
    m8_reflection.py            optional Milestone 8: reflection_groups
    m9_persistence.py           optional Milestone 9: memory_to_record, memory_from_record
    failure_modes.py            notebooks 06a-06b: blame a signal from the table, then fix it
    answers.py                  answer cells: numbers checked with a tolerance, a recall's
                                fields, the memory block's tokens (formative, not graded)
    ladder.py                   the hint ladder those practice checks climb: what is off,
                                the next step, the answer only with reveal=True

Each check takes the function to check (default: the learner's own, looked up in the
file that teaching/milestones.py names) and raises CheckFailed with what was expected,
what came back and the likely mistake.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable

from teaching.checks.core import (
    HOUR,
    NOW,
    Case,
    CheckFailed,
    Mistakes,
    NotImplementedYet,
    ValueMistakes,
    check_cases,
    check_values,
)
from teaching.checks.m1_recency import MISTAKES as RECENCY_MISTAKES
from teaching.checks.m1_recency import check_recency_score
from teaching.checks.m2_importance_relevance import (
    IMPORTANCE_MISTAKES,
    RELEVANCE_MISTAKES,
    check_importance_score,
    check_relevance_score,
)
from teaching.checks.m3_retrieval_score import MISTAKES as RETRIEVAL_SCORE_MISTAKES
from teaching.checks.m3_retrieval_score import check_retrieval_score
from teaching.checks.m4_retriever import (
    CREATED_AT,
    SUPERSEDED,
    Scenario,
    check_rank_memories,
    check_retrieve,
    run_scenario,
)
from teaching.checks.m5_kinds import MISTAKES as KIND_RECENCY_MISTAKES
from teaching.checks.m5_kinds import (
    KindScenario,
    check_kind_labels,
    check_kind_recency_score,
    check_retrieve_by_kind,
    run_kind_scenario,
)
from teaching.checks.m6_importance_parsing import MISTAKES as PARSE_IMPORTANCE_MISTAKES
from teaching.checks.m6_importance_parsing import check_parse_importance
from teaching.checks.m7_forgetting import MISTAKES as SHOULD_FORGET_MISTAKES
from teaching.checks.m7_forgetting import check_should_forget
from teaching.checks.m8_reflection import (
    check_groups_prediction,
    check_reflection_groups,
    run_reflection_cases,
)
from teaching.checks.m9_persistence import (
    check_memory_from_record,
    check_memory_to_record,
    check_refusal_prediction,
    run_persistence_cases,
)
from teaching.milestones import MILESTONES

__all__ = [
    "CREATED_AT",
    "HOUR",
    "NOW",
    "SUPERSEDED",
    "Case",
    "CheckFailed",
    "KindScenario",
    "NotImplementedYet",
    "Scenario",
    "check_groups_prediction",
    "check_importance_score",
    "check_kind_labels",
    "check_kind_recency_score",
    "check_memory_from_record",
    "check_memory_to_record",
    "check_parse_importance",
    "check_rank_memories",
    "check_recency_score",
    "check_reflection_groups",
    "check_refusal_prediction",
    "check_relevance_score",
    "check_retrieval_score",
    "check_retrieve",
    "check_retrieve_by_kind",
    "check_should_forget",
    "require_milestones",
    "run_cases",
    "run_kind_scenario",
    "run_persistence_cases",
    "run_reflection_cases",
    "run_scenario",
]

MISTAKES: dict[str, Mistakes] = {
    "recency_score": RECENCY_MISTAKES,
    "importance_score": IMPORTANCE_MISTAKES,
    "relevance_score": RELEVANCE_MISTAKES,
    "retrieval_score": RETRIEVAL_SCORE_MISTAKES,
    "kind_recency_score": KIND_RECENCY_MISTAKES,
}

CHECKS: dict[str, Callable[..., None]] = {
    "recency_score": check_recency_score,
    "importance_score": check_importance_score,
    "relevance_score": check_relevance_score,
    "retrieval_score": check_retrieval_score,
    "rank_memories": check_rank_memories,
    "retrieve": check_retrieve,
    "kind_recency_score": check_kind_recency_score,
    "retrieve_by_kind": check_retrieve_by_kind,
    "reflection_groups": check_reflection_groups,
    "memory_to_record": check_memory_to_record,
    "memory_from_record": check_memory_from_record,
    "parse_importance": check_parse_importance,
    "should_forget": check_should_forget,
}

# Optional milestones whose answers are plain values (an int or None, a bool, ids, a
# table), checked by core.check_values: function -> its named slips.
VALUE_MISTAKES: dict[str, ValueMistakes] = {
    "parse_importance": PARSE_IMPORTANCE_MISTAKES,
    "should_forget": SHOULD_FORGET_MISTAKES,
}


def run_cases(name: str, cases: list[Case], function: Callable | None = None) -> int:
    """Check the learner's `name` on more cases (the graded notebooks' hidden checks).

    Returns how many cases passed; on the first wrong answer raises CheckFailed naming
    the likely mistake from that function's milestone.
    """
    if name in VALUE_MISTAKES:
        return check_values(name, cases, function, VALUE_MISTAKES[name])
    return check_cases(name, cases, function, MISTAKES.get(name, Mistakes()))


def require_milestones(notebook: str, up_to: int = 4) -> None:
    """Run the checks of Milestones 1 to `up_to` quietly; stop at the first that fails.

    The first cells of the notebooks past the milestones call it: they run on the
    learner's own functions, so those must work before anything else makes sense.
    """
    with contextlib.redirect_stdout(io.StringIO()):  # one line below, not six
        for name, milestone in MILESTONES.items():
            if milestone.number <= up_to:
                CHECKS[name]()
    print(f"Milestones 1-{up_to} pass: {notebook} runs on your own functions.")
