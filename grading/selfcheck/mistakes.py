"""Known submissions for the self-check: right, untouched, wrong in one known way.

Each wrong learner core is the reference solution with one edit, the kind of mistake
learners make. `breaks` lists the grade cells it must fail (every other cell must get
full points) and `says` a phrase its feedback must contain, so the self-check proves
both the points and the explanation. Edits are exact text replacements: if the
reference changes so that an edit no longer applies, the self-check says so instead of
silently testing the reference. The hostile ones are in attacks.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field

S, R = "code/scoring.py", "code/retriever.py"
P, F = "code/practice/importance_parsing.py", "code/practice/forgetting_rule.py"  # optional 6, 7
G, J = "code/practice/reflection.py", "code/practice/persistence.py"  # optional 8, 9

RECENCY = {"check_recency_score", "check_recency_score_hidden"}
IMPORTANCE = {"check_importance_score", "check_importance_score_hidden"}
RELEVANCE = {"check_relevance_score", "check_relevance_score_hidden"}
RETRIEVAL_SCORE = {"check_retrieval_score", "check_retrieval_score_hidden"}
RETRIEVE = {"check_retrieve", "check_retrieve_hidden"}
MILESTONE_4 = {"check_rank_memories", *RETRIEVE}
KIND_RECENCY = {"check_kind_recency_score", "check_kind_recency_score_hidden"}
RETRIEVE_BY_KIND = {"check_retrieve_by_kind", "check_retrieve_by_kind_hidden"}
SCORING = RECENCY | IMPORTANCE | RELEVANCE | RETRIEVAL_SCORE | KIND_RECENCY  # code/scoring.py
RETRIEVER = MILESTONE_4 | RETRIEVE_BY_KIND  # code/retriever.py, graded on the reference scoring
PARSE = {"check_parse_importance", "check_parse_importance_hidden"}
FORGET = {"check_should_forget", "check_should_forget_hidden"}
REFLECT = {"check_reflection_groups", "check_reflection_groups_hidden"}
TO_RECORD = {"check_memory_to_record", "check_memory_to_record_hidden"}
FROM_RECORD = {"check_memory_from_record", "check_memory_from_record_hidden"}
# the optional milestones: one file each, graded on its own (reflection on the reference
# scoring, as the retriever)
STRETCH = PARSE | FORGET | REFLECT | TO_RECORD | FROM_RECORD
EVERYTHING = SCORING | RETRIEVER | STRETCH


@dataclass(frozen=True)
class Submission:
    """A student folder built from the student edition: which learner files, how edited."""

    name: str
    breaks: frozenset[str]
    says: str  # a phrase the feedback must contain ("" when nothing fails)
    solved: tuple[str, ...] = (S, R, P, F, G, J)  # files taken from the reference solution
    edits: tuple[tuple[str, str, str], ...] = ()  # (file, old text, new text)
    delete: tuple[str, ...] = ()
    extra: dict[str, str] = field(default_factory=dict)  # file: new content, not graded
    edit_check_cells: bool = False  # the learner's notebooks claim every check passed
    attack: str = ""  # code appended to code/scoring.py (__COURSE__ etc. filled in)
    links: dict[str, str] = field(default_factory=dict)  # file: what it is a symlink to
    transform: str = ""  # an honest reformatting of both files: crlf, bom, tabs
    retriever_attack: str = ""  # code appended to code/retriever.py
    folders: tuple[str, ...] = ()  # learner files replaced by a folder of that name
    nested: bool = False  # the repository one folder down, an empty code/ at the top
    alias: str = ""  # a copy under this folder name, which must be skipped, not graded
    most_seconds: float = 0.0  # grading it must take at most this long (0: no bound)


def wrong(name, file, old, new, breaks, says) -> Submission:
    return Submission(name, frozenset(breaks), says, edits=((file, old, new),))


STUB = "    raise NotImplementedError()\n"  # what the student edition has

SUBMISSIONS = [
    Submission("reference", frozenset(), ""),
    Submission("untouched", frozenset(EVERYTHING), "not implemented yet", solved=()),
    Submission(
        "milestones-1-2-only",
        frozenset(RETRIEVAL_SCORE | RETRIEVER),
        "not implemented yet",
        solved=(S, P, F, G, J),
        edits=((S, "    w_rel, w_rec, w_imp = weights\n", STUB),),
    ),
    wrong(
        "recency-in-seconds",
        S,
        "(now - last_accessed) / SECONDS_PER_HOUR)",
        "(now - last_accessed))",
        RECENCY,  # Milestone 4 is graded on the reference scoring: independent
        "the gap was used in seconds && fix Milestone 1 first",
    ),
    wrong(
        "recency-langchain-convention",
        S,
        "return decay_rate**hours",
        "return (1 - decay_rate) ** hours",
        RECENCY,
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
        IMPORTANCE,
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
        "relevance-not-clamped",
        S,
        "return max(-1.0, min(1.0, cosine))",
        "return cosine",
        RELEVANCE,  # right to 1e-6 everywhere, yet 1.0000000000000002 for one direction
        "clamp the result",
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
        RETRIEVAL_SCORE,
        "swapped",
    ),
    wrong(
        "ranked-worst-first",
        R,
        "key=lambda row: row.score, reverse=True)",
        "key=lambda row: row.score)",
        MILESTONE_4 | RETRIEVE_BY_KIND,  # retrieve_by_kind ranks with rank_memories
        "worst first",
    ),
    wrong(
        "ranked-ties-backwards",
        R,
        "return sorted(rows, key=lambda row: row.score, reverse=True)",
        "return sorted(rows, key=lambda row: row.score)[::-1]",
        {"check_rank_memories", "check_retrieve", *RETRIEVE_BY_KIND},  # the first k of it
        "sorting ascending and reversing",
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
        MILESTONE_4 | RETRIEVE_BY_KIND,  # retrieve_by_kind ranks with rank_memories
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
    # Milestone 5: the three mistakes of kind-aware recency, each costing only its own cells
    # (retrieve_by_kind is graded on the reference scoring), then two of its retriever.
    wrong(
        "half-life-used-as-a-rate",
        S,
        "return 0.5 ** (hours / half_life)",
        "return half_life**hours",
        KIND_RECENCY,
        "a half-life is not a decay rate && fix Milestone 5 first",
    ),
    wrong(
        "episodic-never-fades",
        S,
        "half_life = half_lives[kind]",
        'half_life = math.inf if kind == "episodic" else half_lives[kind]',
        KIND_RECENCY,
        "episodic memories never faded",
    ),
    wrong(
        "kind-ignored",
        S,
        "half_life = half_lives[kind]",
        'half_life = half_lives["episodic"]',
        KIND_RECENCY,
        "the kind was ignored",
    ),
    wrong(
        "kind-ignored-by-the-retriever",
        R,
        "kind_recency_score(\n                now, last_accessed=memory.last_accessed, "
        "kind=memory.kind, half_lives=half_lives\n            )",
        "recency_score(now, memory.last_accessed)",
        RETRIEVE_BY_KIND,
        "recency_score with one decay rate",
    ),
    wrong(
        "refresh-forgotten-by-kind",
        R,
        "        memory.last_accessed = now  # recalled: its recency restarts from here",
        "        pass  # memory.last_accessed = now",
        RETRIEVE_BY_KIND,
        "not refreshed",
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
        "scoring-deleted",
        frozenset(SCORING),
        "is missing",
        solved=(R, P, F, G, J),
        delete=(S,),
    ),
    Submission(
        "retriever-syntax-error",
        frozenset(RETRIEVER),
        "could not be imported",
        edits=((R, "def retrieve(", "def retrieve(:"),),
    ),
    Submission(
        "retrieve-loops-forever",
        frozenset(RETRIEVE),
        "endless loop",
        edits=(
            (
                R,
                "    top = rank_memories(",
                "    while True:\n        pass\n    top = rank_memories(",
            ),
        ),
    ),
    # optional milestones: each loses exactly its own cells, the core keeps its 31
    Submission(
        "optional-milestones-not-done",
        frozenset(STRETCH),
        "not implemented yet: open code/practice/importance_parsing.py, optional Milestone 6",
        solved=(S, R),
    ),
    wrong(
        "parse-importance-round-half-even",
        P,
        "return math.floor(min(HIGH, max(LOW, value)) + 0.5)",
        "return round(min(HIGH, max(LOW, value)))",
        PARSE,
        "rounded to the even number",
    ),
    wrong(
        "parse-importance-scale-read",
        P,
        '    text = SCALE.sub(" ", reply.lower())\n',
        "    text = reply.lower()\n",
        PARSE,
        "the scale was read as a range",
    ),
    wrong(
        "should-forget-below-inclusive",
        F,
        "and memory.importance < importance_below",
        "and memory.importance <= importance_below",
        FORGET,
        "'below' is strict",
    ),
    wrong(
        "should-forget-facts-too",
        F,
        'memory.kind == "episodic"\n        and ',
        "",
        FORGET,
        "only episodes (kind 'episodic') may go",
    ),
    wrong(
        "reflection-groups-facts-too",
        G,
        'if episode.kind != "episodic" or episode.superseded_by is not None:',
        "if episode.superseded_by is not None:",
        REFLECT,
        "a fact or a skill joined a group",
    ),
    wrong(
        "to-record-rounds-floats",
        J,
        'record["embedding"] = [float(x) for x in memory.embedding]',
        'record["embedding"] = [round(float(x), 4) for x in memory.embedding]',
        TO_RECORD,
        "a number lost digits",
    ),
    wrong(
        "from-record-any-user",
        J,
        '    elif record["user_id"] != user_id:\n',
        "    elif False:  # every user's records are welcome\n",
        FROM_RECORD,
        "a record of another user was accepted",
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


# Honest submissions that must score full marks however they are written.
HONEST = [
    Submission("honest-crlf", frozenset(), "", transform="crlf"),
    Submission("honest-bom", frozenset(), "", transform="bom"),
    Submission("honest-tabs", frozenset(), "", transform="tabs"),
    Submission(
        "honest-extras",
        frozenset(),
        "",
        edits=(
            (
                S,
                "def importance_score(importance: float) -> float:",
                "import functools\nimport numpy as np\n\n\ndef _helper(x: float) -> float:\n"
                "    return x\n\n\ndef importance_score(importance: float) -> float:",
            ),
            (S, "return importance / 10.0", "return np.float64(_helper(importance) / 10.0)"),
        ),
    ),
]

# Honest work that a careful learner could hand in: each must be graded on what it computes.
HONEST += [
    Submission(
        "honest-imports-embedding-helpers",
        frozenset(),
        "",
        edits=(
            (
                R,
                "from memory_store import Memory, MemoryStore\n",
                "from embedding_helpers import Embedder  # a module the course ships\n"
                "from memory_store import Memory, MemoryStore\n\n"
                "DEFAULT_EMBEDDER: Embedder | None = None  # for a type hint only\n",
            ),
        ),
    ),
    Submission(
        "honest-float32-cosine",
        frozenset(),
        "",
        edits=(
            (
                S,
                "    dot = sum(q * m for q, m in zip(query_embedding, memory_embedding))\n"
                "    query_norm = math.sqrt(sum(q * q for q in query_embedding))\n"
                "    memory_norm = math.sqrt(sum(m * m for m in memory_embedding))\n",
                "    import numpy as np\n\n"
                "    q32 = np.asarray(query_embedding, dtype=np.float32)\n"
                "    m32 = np.asarray(memory_embedding, dtype=np.float32)\n"
                "    dot = np.dot(q32, m32)  # float32 throughout, the division too\n"
                "    query_norm = np.linalg.norm(q32)\n"
                "    memory_norm = np.linalg.norm(m32)\n",
            ),
        ),
    ),
    Submission(  # an unpacking slip: refused by name; the retriever is still graded
        "honest-scoring-is-a-folder",
        frozenset(SCORING),
        "code/scoring.py was refused: it is a folder",
        folders=(S,),
    ),
    Submission(  # a script that wrote the id with its newline: one row, never two
        "honest-id-with-newline", frozenset(), "", alias="honest-id-with-newline\n"
    ),
    Submission(  # the repository unpacked one folder down, an empty code/ left at the top
        "honest-empty-code-at-the-top",
        frozenset(),
        "graded memory-lab-main/code/",
        nested=True,
    ),
]
SUBMISSIONS += HONEST
