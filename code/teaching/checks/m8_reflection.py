"""Optional milestone 8: the checks of reflection_groups (which episodes add up to a fact).

Every case is plain data: the memories as dicts (id, kind, a 2-value embedding,
superseded_by), the keyword arguments, and the expected groups as lists of ids. The
embeddings are chosen so the cosines are exact in any arithmetic (0, 1, or two equal
ones): (1, 0) and (0, 1) are orthogonal (cosine 0), (1, 1) is 45 degrees from both
(cosine 0.7071 to each). The named slips are written out the same way, as the answer
each slip gives on a case: facts or skills grouped, archived memories grouped, "reaches"
read as "exceeds", groups below min_size returned, the seed, the last or the most similar
member compared instead of the group's mean, the first group that fits taken instead of
the best, a tie given to the newer group, the groups or their members reordered.

Deliberately left out: the reference solution; only answers and slips are written down.

    >>> check_reflection_groups()   # prints "reflection_groups: 12 checks passed"
"""

from __future__ import annotations

from collections.abc import Callable

from memory_store import Memory
from teaching.checks.core import (
    NOW,
    Case,
    CheckFailed,
    Crash,
    attempt,
    passed,
    report,
)

NAME = "reflection_groups"

FACTS_GROUPED = (
    "a fact or a skill joined a group: only episodes (kind 'episodic') are reflected on; "
    "facts and skills are durable already"
)
ARCHIVED_GROUPED = (
    "a superseded memory joined a group: skip every memory whose superseded_by is set "
    "(it is evidence of a fact already)"
)
STRICT = (
    "a memory whose mean cosine equals min_similarity was left out: 'reaches' includes "
    "equal (>=, not >)"
)
TOO_SMALL = "a group smaller than min_size was returned: keep only groups of min_size or more"
SEED_ONLY = (
    "the memory was compared with the group's first member only: compare it with every "
    "member and take the mean"
)
LAST_ONLY = (
    "the memory was compared with the group's last member only: compare it with every "
    "member and take the mean"
)
MAX_LINK = (
    "the memory was compared with the group's most similar member only (the highest "
    "cosine): compare it with every member and take the mean"
)
FIRST_FIT = (
    "the memory joined the first group that reached min_similarity: it joins the group it "
    "is most similar to (the highest mean)"
)
NEWER_WINS = (
    "of two groups equally similar, the newer one was chosen: a tie goes to the older group "
    "(replace the best only when a mean is strictly higher)"
)
GROUPS_REORDERED = (
    "the groups came back in another order: keep them in the order their first member was "
    "given (no sorting by size or id)"
)
MEMBERS_REORDERED = (
    "a group's members came back in another order: keep the order the memories were given "
    "(no sorting by id)"
)


def row(memory_id: str, embedding, kind: str = "episodic", superseded_by=None) -> dict:
    """One memory as plain data."""
    return {
        "id": memory_id,
        "kind": kind,
        "embedding": list(embedding),
        "superseded_by": superseded_by,
    }


def build_memories(rows: list[dict]) -> list[Memory]:
    """The Memory objects a case's plain rows describe (what every check and grader runs on)."""
    return [
        Memory(
            r["id"],
            f"memory {r['id']}",
            kind=r["kind"],
            embedding=r["embedding"],
            created_at=NOW - 3600.0 * (len(rows) - i),
            superseded_by=r["superseded_by"],
        )
        for i, r in enumerate(rows)
    ]


X, Y, XY, X2Y3 = (1.0, 0.0), (0.0, 1.0), (1.0, 1.0), (2.0, 3.0)
LEAKS = [row(f"e{i}", X) for i in range(1, 6)]

# Case.args = (rows,), Case.kwargs = the keyword arguments, Case.expected = list of id lists.
CASES = [
    Case(
        ([*LEAKS[:2], row("f1", X, "semantic"), *LEAKS[2:], row("p1", X, "procedural")],),
        [["e1", "e2", "e3", "e4", "e5"]],
        {},
        "five episodes alike, a fact and a skill alike too (default min_size 5)",
    ),
    Case(
        ([row("a", X), row("b", X), row("c", X, superseded_by="f"), row("d", X)],),
        [["a", "b", "d"]],
        {"min_size": 3},
        "four alike, c archived (superseded_by='f'), min_size=3",
    ),
    Case(
        ([row("a", X), row("b", Y), row("c", X)],),
        [["a", "b", "c"]],
        {"min_similarity": 0.0, "min_size": 2},
        "orthogonal episodes (cosine exactly 0), min_similarity=0.0",
    ),
    Case(
        ([row("a", X), row("b", Y), row("c", Y), row("d", X), row("e", Y)],),
        [["b", "c", "e"]],
        {"min_similarity": 0.5, "min_size": 3},
        "two topics of 2 and 3 episodes, min_size=3",
    ),
    Case(
        ([row("z9", Y), row("m1", X), row("b5", X), row("a7", Y), row("k2", X)],),
        [["z9", "a7"], ["m1", "b5", "k2"]],
        {"min_similarity": 0.5, "min_size": 2},
        "two topics, ids not in alphabetical order, min_size=2",
    ),
    Case(
        ([row("a", X), row("b", XY), row("c", Y)],),
        [["a", "b", "c"]],
        {"min_similarity": 0.3, "min_size": 3},
        "c has cosine 0 with a and 0.7071 with b: a mean of 0.3536",
    ),
    Case(
        ([row("a", X), row("b", Y), row("d", X2Y3)],),
        [["b", "d"]],
        {"min_similarity": 0.5, "min_size": 2},
        "d = (2, 3): cosine 0.5547 with a's group, 0.8321 with b's",
    ),
    Case(
        ([row("a", X), row("b", Y), row("d", XY)],),
        [["a", "d"]],
        {"min_similarity": 0.5, "min_size": 2},
        "d = (1, 1): cosine 0.7071 with both groups (a tie)",
    ),
    Case(([],), [], {}, "no memories at all"),
    Case(
        ([row("a", X), row("b", X), row("c", X)],),
        [["a", "b", "c"]],
        {"min_similarity": 1.0, "min_size": 3},
        "three identical directions (cosine exactly 1), min_similarity=1.0",
    ),
    Case(
        ([row("a", X), row("b", XY), row("c", Y)],),
        [],
        {"min_similarity": 0.5, "min_size": 3},
        "c has cosine 0 with a and 0.7071 with b: a mean of 0.3536, below 0.5",
    ),
    Case(
        ([row("a", X), row("b", XY), row("c", (1.0, -1.0))],),
        [["a", "b"]],
        {"min_similarity": 0.5, "min_size": 2},
        "c = (1, -1): cosine 0.7071 with a and 0 with b: a mean of 0.3536, below 0.5",
    ),
]

# slip -> {index of a case in CASES: the answer that slip gives on it}
MISTAKES: dict[str, dict[int, list[list[str]]]] = {
    FACTS_GROUPED: {0: [["e1", "e2", "f1", "e3", "e4", "e5", "p1"]]},
    ARCHIVED_GROUPED: {1: [["a", "b", "c", "d"]]},
    STRICT: {2: [["a", "c"]], 9: []},
    TOO_SMALL: {3: [["a", "d"], ["b", "c", "e"]]},
    GROUPS_REORDERED: {4: [["m1", "b5", "k2"], ["z9", "a7"]]},
    MEMBERS_REORDERED: {4: [["a7", "z9"], ["b5", "k2", "m1"]]},
    SEED_ONLY: {5: [], 11: [["a", "b", "c"]]},
    LAST_ONLY: {10: [["a", "b", "c"]]},
    MAX_LINK: {10: [["a", "b", "c"]], 11: [["a", "b", "c"]]},
    FIRST_FIT: {6: [["a", "d"]]},
    NEWER_WINS: {7: [["b", "d"]]},
}


def _shown(case: Case) -> str:
    ids = [(r["id"], r["kind"][:3], tuple(r["embedding"])) for r in case.args[0]]
    kwargs = ", ".join(f"{k}={v!r}" for k, v in case.kwargs.items())
    return f"{NAME}(memories, {kwargs})  # {case.call}\n  memories (id, kind, embedding): {ids}"


def likely_slip(index: int, got, answers: dict | None = None) -> str:
    """The named slip whose answer on case `index` is `got`, or a general hint.

    With `answers` (case index -> the learner's answer on every case), a slip that some
    other answer contradicts is left out, and of the rest the ones that explain the most
    answers are named: a slip that is not the learner's is never named.
    """
    named = [message for message, slip in MISTAKES.items() if slip.get(index) == got]
    if answers is not None:
        named = [m for m in named if all(answers.get(i) == a for i, a in MISTAKES[m].items())]
        most = max((len(MISTAKES[m]) for m in named), default=0)
        named = [m for m in named if len(MISTAKES[m]) == most]
    if named:
        return " or ".join(named) if len(named) > 1 else named[0]
    if not isinstance(got, list) or not all(isinstance(g, list) for g in got):
        return "return a list of groups, each a list of memory ids (strings), not Memory objects"
    if any(not isinstance(i, str) for g in got for i in g):
        return "each group lists memory ids (memory.id), not the memories themselves"
    return (
        "compare with the rule: live episodes only, the group with the highest mean cosine "
        "if it reaches min_similarity, groups of min_size or more, in the order given"
    )


def run_reflection_case(
    case: Case,
    index: int | None = None,
    function: Callable | None = None,
    answers: dict | None = None,
):
    """Run reflection_groups on one case; raise CheckFailed naming the likely slip.

    `answers` (case index -> answer, every case of CASES) lets the slip be read from all
    of the learner's answers, not this one alone."""
    from teaching.checks.core import learner_function

    function = function or learner_function(NAME)
    got = attempt(NAME, function, build_memories(case.args[0]), **case.kwargs)
    if isinstance(got, Crash):
        raise report(_shown(case), case.expected, str(got), got.hint, NAME)
    if got != case.expected:
        slip = likely_slip(-1 if index is None else index, got, answers)
        raise report(_shown(case), case.expected, got, slip, NAME)
    again = attempt(NAME, function, build_memories(case.args[0]), **case.kwargs)
    if again != got:
        raise report(
            _shown(case) + "\n  (called twice on the same memories)",
            got,
            again,
            "the answer changed between two calls: no randomness and no sets, whose order "
            "is not the order given",
            NAME,
        )


def run_reflection_cases(cases: list[Case], function: Callable | None = None) -> None:
    """Run several cases (the grader's hidden ones, say); print how many passed."""
    for case in cases:
        run_reflection_case(case, None, function)
    passed(NAME, len(cases))


def check_reflection_groups(function: Callable | None = None) -> None:
    """Optional milestone 8: episodes only, live only, >=, min_size, mean link, ties, order."""
    from teaching.checks.core import learner_function

    function = function or learner_function(NAME)
    answers = {  # every answer first, so a slip is read from all of them
        i: attempt(NAME, function, build_memories(case.args[0]), **case.kwargs)
        for i, case in enumerate(CASES)
    }
    for index, case in enumerate(CASES):
        run_reflection_case(case, index, function, answers)
    passed(NAME, len(CASES))


__all__ = [
    "CASES",
    "MISTAKES",
    "CheckFailed",
    "build_memories",
    "check_reflection_groups",
    "row",
    "run_reflection_case",
    "run_reflection_cases",
]


# --- the prediction of notebook 07d: which groups come out? ----------------------------

PREDICTION = "07d.groups"  # its key on the hint ladder
TOY = [row("a", X), row("b", XY), row("c", Y), row("d", X)]  # min_similarity 0.5, min_size 2
TOY_GROUPS = [["a", "b", "d"]]
TOY_WHY = (
    "a starts a group; b has cosine 0.7071 with a (>= 0.5): it joins; c has a mean of "
    "(0 + 0.7071) / 2 = 0.3536 with a's group: it starts its own; d has a mean of "
    "(1 + 0.7071) / 2 = 0.8536 with a's group and 0 with c's: it joins a's group. "
    "c's group has one member, below min_size 2, so it is left out"
)


def check_groups_prediction(groups, *, reveal: bool = False) -> None:
    """Your prediction of reflection_groups on TOY, on the hint ladder (reveal=True: answer)."""
    from teaching.checks.ladder import reveal_hint, revealed, was_revealed, wrong_try

    if reveal:
        revealed(PREDICTION)
        raise CheckFailed(f"the answer, as asked: {TOY_GROUPS}\n  why: {TOY_WHY}")
    if groups is None:  # no stop: the groups are shown only by this check
        print("no prediction yet: set my_groups to the groups you expect, then run this cell")
        return
    if not isinstance(groups, list) or not all(
        isinstance(g, list) and all(isinstance(i, str) for i in g) for g in groups
    ):
        raise CheckFailed(
            f"a prediction is a list of groups, each a list of ids, e.g. [['a', 'c']]; "
            f"got {groups!r}"
        )
    if groups == TOY_GROUPS:
        said = " (as the answer said)" if was_revealed(PREDICTION) else ""
        print(f"prediction right{said}: {TOY_GROUPS}")
        return
    rung = wrong_try(PREDICTION, repr(groups))
    lines = [f"not quite: {groups}"]
    if any(len(g) < 2 for g in groups):
        lines.append("  a group below min_size (2) is not returned")
    elif len(groups) != len(TOY_GROUPS):
        lines.append(f"  {len(TOY_GROUPS)} group comes out, not {len(groups)}")
    else:
        lines.append("  the right number of groups, not the right members")
    if rung >= 2:
        lines.append(
            "  next step: walk the memories in order; for each, take the mean cosine to each "
            "group so far (cosines: a-b 0.7071, a-c 0, a-d 1, b-c 0.7071, b-d 0.7071, c-d 0)"
        )
    lines.append(reveal_hint("check_groups_prediction(my_groups, reveal=True)"))
    raise CheckFailed("\n".join(lines))
