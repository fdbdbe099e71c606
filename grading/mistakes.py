"""Known submissions for the self-check: right, untouched, wrong in one known way, hostile.

Each wrong learner core is the reference solution with one edit, the kind of mistake
learners make. `breaks` lists the grade cells it must fail (every other cell must get
full points) and `says` a phrase its feedback must contain, so the self-check proves
both the points and the explanation. Edits are exact text replacements: if the
reference changes so that an edit no longer applies, the self-check says so instead of
silently testing the reference.
"""

from __future__ import annotations

from dataclasses import dataclass, field

S, R = "code/scoring.py", "code/retriever.py"

RECENCY = {"check_recency_score", "check_recency_score_hidden"}
IMPORTANCE = {"check_importance_score", "check_importance_score_hidden"}
RELEVANCE = {"check_relevance_score", "check_relevance_score_hidden"}
RETRIEVAL_SCORE = {"check_retrieval_score", "check_retrieval_score_hidden"}
RETRIEVE = {"check_retrieve", "check_retrieve_hidden"}
MILESTONE_4 = {"check_rank_memories", *RETRIEVE}
EVERYTHING = RECENCY | IMPORTANCE | RELEVANCE | RETRIEVAL_SCORE | MILESTONE_4


@dataclass(frozen=True)
class Submission:
    """A student folder built from the student edition: which learner files, how edited."""

    name: str
    breaks: frozenset[str]
    says: str  # a phrase the feedback must contain ("" when nothing fails)
    solved: tuple[str, ...] = (S, R)  # files taken from the reference solution
    edits: tuple[tuple[str, str, str], ...] = ()  # (file, old text, new text)
    delete: tuple[str, ...] = ()
    extra: dict[str, str] = field(default_factory=dict)  # file: new content, not graded
    edit_check_cells: bool = False  # the learner's notebooks claim every check passed


def wrong(name, file, old, new, breaks, says) -> Submission:
    return Submission(name, frozenset(breaks), says, edits=((file, old, new),))


STUB = "    raise NotImplementedError()\n"  # what the student edition has

SUBMISSIONS = [
    Submission("reference", frozenset(), ""),
    Submission("untouched", frozenset(EVERYTHING), "not implemented yet", solved=()),
    Submission(
        "milestones-1-2-only",
        frozenset(RETRIEVAL_SCORE | MILESTONE_4),
        "not implemented yet",
        solved=(S,),
        edits=((S, "    w_rel, w_rec, w_imp = weights\n", STUB),),
    ),
    wrong(
        "recency-in-seconds",
        S,
        "(now - last_accessed) / SECONDS_PER_HOUR)",
        "(now - last_accessed))",
        RECENCY | MILESTONE_4,
        "the gap was used in seconds",
    ),
    wrong(
        "recency-langchain-convention",
        S,
        "return decay_rate**hours",
        "return (1 - decay_rate) ** hours",
        RECENCY | MILESTONE_4,
        "LangChain",
    ),
    wrong(
        "recency-future-not-clamped",
        S,
        "max(0.0, (now - last_accessed) / SECONDS_PER_HOUR)",
        "(now - last_accessed) / SECONDS_PER_HOUR",
        RECENCY,
        "clamp the hours at 0",
    ),
    wrong(
        "importance-not-divided",
        S,
        "return importance / 10.0",
        "return float(importance)",
        IMPORTANCE | MILESTONE_4,
        "divide by 10",
    ),
    wrong(
        "relevance-dot-product",
        S,
        "return max(-1.0, min(1.0, cosine))",
        "return dot",
        RELEVANCE,  # the retriever's stores use unit vectors, where dot = cosine
        "dot product",
    ),
    wrong(
        "relevance-zero-vector-crash",
        S,
        "    if query_norm == 0.0 or memory_norm == 0.0:\n",
        "    if False:\n",
        RELEVANCE,
        "division by zero",
    ),
    wrong(
        "weights-swapped",
        S,
        "return w_rel * rel + w_rec * rec + w_imp * imp",
        "return w_rel * rel + w_rec * imp + w_imp * rec",
        RETRIEVAL_SCORE | RETRIEVE,  # rank_memories is checked with equal weights
        "swapped",
    ),
    wrong(
        "ranked-worst-first",
        R,
        "key=lambda row: row.score, reverse=True)",
        "key=lambda row: row.score)",
        MILESTONE_4,
        "worst first",
    ),
    wrong(
        "returns-scored-rows",
        R,
        "return [row.memory for row in top]",
        "return top",
        RETRIEVE,
        "ranking rows were returned",
    ),
    wrong(
        "refresh-forgotten",
        R,
        "        row.memory.last_accessed = now",
        "        pass  # row.memory.last_accessed = now",
        RETRIEVE,
        "not refreshed",
    ),
    wrong(
        "superseded-recalled",
        R,
        "        if memory.superseded_by is not None:\n",
        "        if False:\n",
        MILESTONE_4,
        "superseded",
    ),
    wrong(
        "one-too-many",
        R,
        "decay_rate=decay_rate)[:k]",
        "decay_rate=decay_rate)[: k + 1]",
        RETRIEVE,
        "one result too many",
    ),
    wrong(
        "decay-from-created-at",
        R,
        "recency_score(now, memory.last_accessed,",
        "recency_score(now, memory.created_at,",
        MILESTONE_4,
        "created_at",
    ),
    # Submissions that test the grader rather than the learner.
    Submission(
        "warnings-on-stderr",
        frozenset(),
        "",
        edits=(
            (
                S,
                "    return importance / 10.0",
                "    import sys, warnings\n"
                '    warnings.warn("a library warning", DeprecationWarning, stacklevel=1)\n'
                '    print("debug output on stderr", file=sys.stderr)\n'
                "    return importance / 10.0",
            ),
        ),
    ),
    Submission(
        "scoring-deleted", frozenset(EVERYTHING), "could not be imported", solved=(R,), delete=(S,)
    ),
    Submission(
        "retriever-syntax-error",
        frozenset(MILESTONE_4),
        "could not be imported",
        edits=((R, "def retrieve(", "def retrieve(:"),),
    ),
    Submission(
        "retrieve-loops-forever",
        frozenset(RETRIEVE),
        "Timeout",
        edits=(
            (
                R,
                "    top = rank_memories(",
                "    while True:\n        pass\n    top = rank_memories(",
            ),
        ),
    ),
    Submission(
        "checks-and-check-cells-edited",
        frozenset(EVERYTHING),
        "not implemented yet",
        solved=(),
        extra={
            "code/teaching/checks/__init__.py": "def run_cases(*args, **kwargs):\n    return 7\n",
            "code/teaching/checks/core.py": "def check_cases(*args, **kwargs):\n    return 7\n",
            "code/teaching/checks/m4_retriever.py": (
                "def run_scenario(*args, **kwargs):\n    return None\n"
            ),
        },
        edit_check_cells=True,
    ),
]
