"""Provided code that runs on the learner's functions says which one is still a stub.

A provided function built on the learner core (kinds.rank_by_kind on rank_memories, the
index on retrieval_scores, ...) meets a bare NotImplementedError while the learner has
not written that function yet. `@runs_on_learner_code` turns it into a message that names
the function, its file and its milestone:

    NotWrittenYet: not implemented yet: rank_by_kind runs on your rank_memories; open
    code/retriever.py, Milestone 4, and replace `raise NotImplementedError()` with your code

NotWrittenYet is a NotImplementedError, so whatever caught the bare one catches it still.
Deliberately left out: the checks (teaching/checks/), which say the same for a notebook
cell. The table below mirrors teaching/milestones.py (a test holds them equal): this
folder imports nothing else of code/.
"""

from __future__ import annotations

import functools
import os

WHERE = {  # learner function -> where it is written
    "recency_score": "code/scoring.py, Milestone 1",
    "importance_score": "code/scoring.py, Milestone 2",
    "relevance_score": "code/scoring.py, Milestone 2",
    "retrieval_score": "code/scoring.py, Milestone 3",
    "rank_memories": "code/retriever.py, Milestone 4",
    "retrieve": "code/retriever.py, Milestone 4",
    "kind_recency_score": "code/scoring.py, Milestone 5",
    "retrieve_by_kind": "code/retriever.py, Milestone 5",
    "fact_to_replace": "code/practice/exercises.py, notebook 07b's exercise",
    "noise_reason": "code/practice/exercises.py, notebook 07f's exercise",
    "fit_in_budget": "code/practice/exercises.py, notebook 07g's exercise",
    "recall_at_k": "code/practice/exercises.py, notebook 08's exercise",
    "reciprocal_rank": "code/practice/exercises.py, notebook 08's exercise",
    "reflection_groups": "code/practice/reflection.py, optional Milestone 8",
    "memory_to_record": "code/practice/persistence.py, optional Milestone 9",
    "memory_from_record": "code/practice/persistence.py, optional Milestone 9",
    "parse_importance": "code/practice/importance_parsing.py, optional Milestone 6",
    "should_forget": "code/practice/forgetting_rule.py, optional Milestone 7",
    "retrieval_scores": "code/scoring.py, notebook 09's exercise",
    "score_sql": "code/practice/exercises.py, notebook 10's exercise",
}
LEARNER_FILES = {
    "scoring.py",
    "retriever.py",
    "exercises.py",
    "importance_parsing.py",
    "forgetting_rule.py",
    "reflection.py",
    "persistence.py",
}


class NotWrittenYet(NotImplementedError):
    """A learner function that provided code needs is still the stub."""


def stub_raised(error: NotImplementedError) -> str | None:
    """The learner function whose stub raised `error` (its innermost learner frame), if any."""
    name, tb = None, error.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if os.path.basename(code.co_filename) in LEARNER_FILES and code.co_name in WHERE:
            name = code.co_name
        tb = tb.tb_next
    return name


def runs_on_learner_code(function):
    """Decorate a provided function: a learner stub it reaches is named, with its milestone."""

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except NotWrittenYet:
            raise
        except NotImplementedError as error:
            name = stub_raised(error)
            if name is None:
                raise
            raise NotWrittenYet(
                f"not implemented yet: {function.__name__} runs on your {name}; open "
                f"{WHERE[name]}, and replace `raise NotImplementedError()` with your code"
            ) from None

    return wrapper
