"""The exercises of notebooks 07b-10 (code/practice/exercises.py), checked on case tables.

Each exercise is one small function of yours; its check runs it on a table of cases
with known answers and, when an answer is off, names the likely slip, climbing the
hint ladder (teaching/checks/ladder.py):

    check_fact_to_replace()              prints "fact_to_replace: 8 checks passed"
    check_fact_to_replace()              a first wrong try: the case, what you got, the slip
    check_fact_to_replace()              a further wrong try: the next step to take
    check_fact_to_replace(reveal=True)   the expected answer beside yours, on request

The expected answers are written out in the cases below (never computed by a reference
function), except for score_sql, whose reference is your own Python score (Milestones
1-3) on the same rows: your SQL runs in an in-memory SQLite database given PostgreSQL's
power() and greatest(), so the check needs no server.

Deliberately left out: grading. These checks are formative; nothing here is graded.
"""

from __future__ import annotations

import contextlib
import importlib
import math
import sqlite3
import traceback
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from teaching.checks import ladder
from teaching.checks.core import HOUR, NOW, CheckFailed, NotImplementedYet
from teaching.milestones import EXERCISES, file_of

FILE = file_of("practice.exercises")  # code/practice/exercises.py


class Case(NamedTuple):
    """One call with a known answer: what it is about, the arguments, the answer."""

    about: str
    args: tuple
    expected: Any
    kwargs: dict = {}  # noqa: RUF012 (read only: a NamedTuple's default)


class Slip(NamedTuple):
    """A likely mistake: what it returns on a case's arguments, and what to say about it."""

    what: str  # the first rung: what is off, in words, never the answer
    next_step: str  # the second rung: a concept and a worked number, never code
    model: Callable  # the slip's answer on the same arguments


def where(name: str) -> str:
    module, notebook = EXERCISES[name]
    return f"{file_of(module)}, notebook {notebook.split('_')[0]}'s exercise ({notebook})"


def learner(name: str) -> Callable:
    """Your `name`, looked up at call time so an edit is picked up (autoreload or not)."""
    try:
        module = importlib.import_module(EXERCISES[name][0])
    except Exception as error:  # whatever the file raised: the learner needs to know
        raise CheckFailed(
            f"{file_of(EXERCISES[name][0])} could not be imported, so {name} cannot be "
            f"checked:\n  {type(error).__name__}: {error}\n  (fix it in {where(name)})"
        ) from None
    function = getattr(module, name, None)
    if not callable(function):
        raise CheckFailed(f"{where(name)} has no function {name}: keep its name and signature")
    return function


def not_written(name: str) -> NotImplementedYet:
    return NotImplementedYet(
        f"{name} is not implemented yet: open {where(name)} and replace the line "
        f"`raise NotImplementedError()` in {name} with your code, then run this cell again."
    )


def crashed(name: str, call: str, error: Exception) -> CheckFailed:
    """A crash in the learner's function: the error and the line of its file that raised it."""
    frames = [f for f in traceback.extract_tb(error.__traceback__)
              if f.filename.replace("\\", "/").endswith(FILE.removeprefix("code"))]  # fmt: skip
    at = f"\n  at {FILE}, line {frames[-1].lineno}: `{(frames[-1].line or '').strip()}`"
    return CheckFailed(
        f"{call}\n  got: {type(error).__name__}: {error}{at if frames else ''}\n"
        f"  likely slip: read the error and the line above, then the TODO's rules again\n"
        f"  (fix it in {where(name)})"
    )


def show_call(name: str, case: Case) -> str:
    shown = [repr(a) for a in case.args] + [f"{k}={v!r}" for k, v in case.kwargs.items()]
    return f"{name}({', '.join(shown)})  [{case.about}]"


def same(expected: Any, got: Any) -> bool:
    if isinstance(expected, float) and isinstance(got, (int, float)) and not isinstance(got, bool):
        return math.isclose(expected, got, rel_tol=1e-6, abs_tol=1e-9)
    if isinstance(expected, list) and isinstance(got, (list, tuple)):
        return len(expected) == len(got) and all(same(e, g) for e, g in zip(expected, got))
    return type(expected) is type(got) and expected == got


def likely(slips: Sequence[Slip], cases_got: list[tuple[Case, Any]], got: Any, case: Case):
    """The first slip that gives this wrong answer and every other answer of yours; None if
    none does. A slip that some answer of yours contradicts is not yours: naming it would
    send you the wrong way, so the neutral UNKNOWN is said instead."""
    for slip in slips:
        try:
            if not same(slip.model(*case.args, **case.kwargs), got):
                continue
        except Exception:  # this slip cannot even produce an answer here
            continue
        if all(_agrees(slip, other, answer) for other, answer in cases_got):
            return slip
    return None


def _agrees(slip: Slip, case: Case, answer: Any) -> bool:
    """Does `slip` give `answer` on `case`? A case it cannot answer does not count against it."""
    try:
        return same(slip.model(*case.args, **case.kwargs), answer)
    except Exception:
        return True


def slip_model(function: Callable) -> Callable:
    """A slip's answer only: called with every rule right it refuses (no reference to import).

    The slip models below take the rules as keyword flags whose defaults are the right rules;
    at least one flag must be changed, so none of them can stand in for your function.
    """
    defaults = function.__kwdefaults__ or {}

    def model(*args, **flags):
        if all(flags.get(key, value) == value for key, value in defaults.items()):
            raise TypeError(f"{function.__name__} models a slip: change at least one rule")
        return function(*args, **flags)

    model.__name__ = function.__name__
    return model


UNKNOWN = Slip(
    "none of the usual slips gives this answer",
    "work this case by hand, rule by rule from the TODO, and see which rule your code skips",
    lambda *args, **kwargs: None,
)


def wrong_type(expected: Any, got: Any) -> Slip:
    """A slip of the answer's type (a dict where an id is wanted, ...), else UNKNOWN."""
    number = isinstance(got, (int, float)) and not isinstance(got, bool)
    if expected is None or isinstance(got, type(expected)) or (isinstance(expected, float)
                                                               and number):  # fmt: skip
        return UNKNOWN
    want = {str: "a str", list: "a list of positions", float: "a float"}.get(type(expected))
    return Slip(
        f"the function returned {'None' if got is None else 'a ' + type(got).__name__}, where "
        f"{want or type(expected).__name__} is wanted",
        "read the docstring's Returns and its example, and return that (is a `return` missing?)",
        UNKNOWN.model,
    )


def run_exercise(
    name: str,
    cases: Sequence[Case],
    slips: Sequence[Slip],
    function: Callable | None = None,
    *,
    reveal: bool = False,
    answer_of: Callable[[Callable, Case], Any] | None = None,
    expected_of: Callable[[Case], Any] | None = None,
) -> None:
    """Run every case, then report the first miss on the ladder; print a pass line if none.

    Nothing is returned: a value would show as a stray `True` under the cell's pass line."""
    function = learner(name) if function is None else function
    answer_of = answer_of or (lambda f, case: f(*case.args, **case.kwargs))
    results = []
    for case in cases:
        try:
            got = answer_of(function, case)
        except NotImplementedYet:
            raise
        except NotImplementedError:
            raise not_written(name) from None
        except CheckFailed:
            raise
        except Exception as error:  # a crash is a finding, reported in the learner's terms
            raise crashed(name, show_call(name, case), error) from None
        try:
            expected = case.expected if expected_of is None else expected_of(case)
        except NotImplementedError:  # your Milestone 1-3 functions are the reference
            raise NotImplementedYet(
                f"{name} is checked against your retrieval_score, which is not implemented "
                "yet: finish Milestones 1-3 in code/scoring.py first"
            ) from None
        results.append((case, got, expected))
    for case, got, expected in results:
        if same(expected, got):
            continue
        slip = likely(slips, [(c, g) for c, g, _ in results], got, case) or wrong_type(
            expected, got
        )
        head = f"{show_call(name, case)}\n  got:      {got!r}"
        fix = f"(fix it in {where(name)})"
        if reveal:
            ladder.REVEALED.add(name)
            raise CheckFailed(
                f"{show_call(name, case)}\n  expected: {expected!r}\n  got:      {got!r}\n"
                f"  likely slip: {slip.what}\n  next step: {slip.next_step}\n  {fix}"
            )
        rung = ladder.wrong_try(name, (case.about, repr(got)))
        if rung == 1:
            raise CheckFailed(
                f"{head}\n  likely slip: {slip.what}\n  {fix}; run this cell again after a "
                "fix for a further hint, or pass reveal=True for the expected answer"
            )
        raise CheckFailed(
            f"{head}\n  likely slip: {slip.what}\n  next step: {slip.next_step}\n"
            f"  {fix}; reveal=True shows the expected answer"
        )
    ladder.TRIES.pop(name, None)
    print(f"{name}: {len(cases)} checks passed")


# --- 07b: fact_to_replace -----------------------------------------------------------------


def fact(memory_id: str, similarity: float, user="eric", kind="semantic", superseded=False):
    return {"id": memory_id, "user": user, "kind": kind, "similarity": similarity,
            "superseded": superseded}  # fmt: skip


FACT_CASES = [
    Case("the closest of two facts", ("eric", [fact("f1", 0.86), fact("f2", 0.31)]), "f1"),
    Case("the best is not listed first",
         ("eric", [fact("f3", 0.7), fact("f1", 0.86), fact("f2", 0.62)]), "f1"),
    Case("nothing similar enough", ("eric", [fact("f1", 0.41), fact("f2", 0.31)]), None),
    Case("exactly at the threshold", ("eric", [fact("f1", 0.6)]), "f1"),
    Case("another person's fact is closer",
         ("eric", [fact("b1", 0.97, user="bob"), fact("f1", 0.7)]), "f1"),
    Case("an episode is closer", ("eric", [fact("e1", 0.9, kind="episodic"), fact("f1", 0.65)]),
         "f1"),
    Case("the closest was replaced already",
         ("eric", [fact("f0", 0.95, superseded=True), fact("f1", 0.8)]), "f1"),
    Case("a lower threshold", ("eric", [fact("f1", 0.45), fact("f2", 0.35)]), "f1",
         {"threshold": 0.4}),
    Case("a tie: the newer, listed later, wins", ("eric", [fact("f1", 0.75), fact("f4", 0.75)]),
         "f4"),
    Case("a skill may be replaced", ("eric", [fact("p1", 0.8, kind="procedural")]), "p1"),
]  # fmt: skip


def _newest_best(allowed: list[dict]) -> dict:
    return max(reversed(allowed), key=lambda c: c["similarity"])  # the later one on a tie


@slip_model
def _choose(user_id, candidates, threshold=0.6, *, users=True, kinds=("semantic", "procedural"),
            live=True, at=True, pick=_newest_best, threshold_used=True):  # fmt: skip
    """The rules with one of them dropped or changed: a slip's answer."""
    allowed = [
        c for c in candidates
        if (not users or c["user"] == user_id) and (not kinds or c["kind"] in kinds)
        and (not live or not c.get("superseded")) and (not threshold_used or (
            c["similarity"] >= threshold if at else c["similarity"] > threshold))
    ]  # fmt: skip
    return pick(allowed)["id"] if allowed else None


FACT_SLIPS = [
    Slip("another person's fact was chosen: a fact of a different user is never replaced",
         "look at each candidate's user: only the new fact's own user's facts may go",
         lambda u, c, threshold=0.6: _choose(u, c, threshold, users=False)),
    Slip("an event was chosen: an episode records what happened and is never replaced",
         "only facts and skills (kind \"semantic\" or \"procedural\") can be out of date",
         lambda u, c, threshold=0.6: _choose(u, c, threshold, kinds=False)),
    Slip("a skill was left out: a procedure can change like a fact",
         "kind \"procedural\" may be replaced too, as \"semantic\" may",
         lambda u, c, threshold=0.6: _choose(u, c, threshold, kinds=("semantic",))),
    Slip("a fact that was replaced already was chosen again",
         "a candidate marked superseded is history: skip it, the newer version counts",
         lambda u, c, threshold=0.6: _choose(u, c, threshold, live=False)),
    Slip("a similarity exactly at the threshold was left out",
         "the threshold itself counts as similar enough: 0.6 at a threshold of 0.6 qualifies",
         lambda u, c, threshold=0.6: _choose(u, c, threshold, at=False)),
    Slip("the least similar qualifying fact was chosen, not the most similar",
         "of the candidates left, keep the one with the highest similarity (0.86 over 0.31)",
         lambda u, c, threshold=0.6: _choose(
             u, c, threshold, pick=lambda a: min(a, key=lambda x: x["similarity"]))),
    Slip("the first qualifying candidate in the list was chosen, not the most similar",
         "compare all qualifying candidates: the list is in storage order, not by similarity",
         lambda u, c, threshold=0.6: _choose(u, c, threshold, pick=lambda a: a[0])),
    Slip("on a tie the older fact was kept; the newer one, listed later, wins",
         "two candidates at 0.75: the one stored later is the newer statement of the fact",
         lambda u, c, threshold=0.6: _choose(
             u, c, threshold, pick=lambda a: max(a, key=lambda x: x["similarity"]))),
    Slip("the threshold was ignored: a fact about something else would be replaced",
         "a similarity below the threshold means another subject: return None then",
         lambda u, c, threshold=0.6: _choose(u, c, threshold, threshold_used=False)),
]  # fmt: skip


def check_fact_to_replace(function=None, *, reveal: bool = False) -> None:
    """Your fact_to_replace on 10 cases: which stored fact a new one replaces."""
    return run_exercise("fact_to_replace", FACT_CASES, FACT_SLIPS, function, reveal=reveal)


# --- 07f: noise_reason --------------------------------------------------------------------

NOISE_CASES = [
    Case("an acknowledgement with punctuation", ("ok, thanks!",), "acknowledgement"),
    Case("a greeting in capitals", ("Good morning",), "greeting"),
    Case("a decision", ("We decided to use HNSW over IVFFlat.",), None),
    Case("an emoji alone", ("👍",), "acknowledgement"),
    Case("spaces only", ("   ",), "empty"),
    Case("a greeting and thanks", ("hi, thank you so much",), "greeting"),
    Case("a greeting before real content", ("hi, which index should we use?",), None),
    Case("a preference", ("I prefer Groq as the default API",), None),
    Case("thanks with filler", ("thank you very much",), "acknowledgement"),
]


@slip_model
def _noise(text, *, split=True, every=True, emoji=True, blank=True, greeting_first=True,
           one_set=True):  # fmt: skip
    """The rules with one of them dropped or changed: a slip's answer."""
    from base.text import words
    from embeddings.worth_embedding import ACK_WORDS, FILLER_WORDS, GREETING_WORDS

    if not text.strip():
        return "empty" if blank else ("acknowledgement" if emoji else None)
    said = words(text) if split else [text.strip()]
    if not said:
        return "acknowledgement" if emoji else None
    if not one_set:  # greetings and acknowledgements judged apart, never mixed in one message
        for reason, kind in (("greeting", GREETING_WORDS), ("acknowledgement", ACK_WORDS)):
            if all(w in kind | FILLER_WORDS for w in said):
                return reason
        return None
    noise = GREETING_WORDS | ACK_WORDS | FILLER_WORDS
    if (all if every else any)(w in noise for w in said):
        if greeting_first:
            return "greeting" if any(w in GREETING_WORDS for w in said) else "acknowledgement"
        return "acknowledgement" if any(w in ACK_WORDS for w in said) else "greeting"
    return None


NOISE_SLIPS = [
    Slip("the whole message was looked up as one word, so \"ok, thanks!\" counts as content",
         "split the message into words first (base.text.words: lower case, punctuation gone), "
         "then judge each word",
         lambda t: _noise(t, split=False)),
    Slip("one noise word was enough to call the message noise; a real word in it was ignored",
         "noise means EVERY word is a greeting, acknowledgement or filler word: \"hi, which "
         "index should we use?\" has real words, so it is worth a memory",
         lambda t: _noise(t, every=False)),
    Slip("a message with no words at all (an emoji, punctuation) was kept",
         "after splitting, \"👍\" has zero words: nothing a query could find, an "
         "acknowledgement", lambda t: _noise(t, emoji=False)),
    Slip("a blank message was not called \"empty\"",
         "test for a message of nothing but spaces first, before splitting it",
         lambda t: _noise(t, blank=False)),
    Slip("a message mixing a greeting and thanks was kept: greetings and acknowledgements "
         "were checked apart, each word list on its own",
         "noise words are one pool: a message whose words are ALL greeting, acknowledgement "
         "or filler words is noise, whichever list each word comes from; only then decide "
         "between greeting and acknowledgement", lambda t: _noise(t, one_set=False)),
    Slip("a greeting with thanks in it was called an acknowledgement",
         "a greeting word anywhere makes it a greeting: \"hi, thank you\" -> greeting",
         lambda t: _noise(t, greeting_first=False)),
]  # fmt: skip


def check_noise_reason(function=None, *, reveal: bool = False) -> None:
    """Your noise_reason on 9 messages: greetings, acknowledgements, empties and content."""
    return run_exercise("noise_reason", NOISE_CASES, NOISE_SLIPS, function, reveal=reveal)


# --- 07g: fit_in_budget -------------------------------------------------------------------

BUDGET_CASES = [
    Case("everything fits, no summary needed", ([40, 30, 20], 90, 15), [0, 1, 2]),
    Case("the summary line needs room", ([40, 50, 30], 100, 15), [0]),
    Case("a big memory ends the list", ([30, 80, 10], 100, 20), [0]),
    Case("exactly the budget", ([50, 35, 40], 100, 15), [0, 1]),
    Case("nothing fits but the summary", ([120, 10], 100, 25), []),
    Case("the best memory first, whatever its size", ([60, 5, 5, 30], 90, 20), [0, 1, 2]),
    Case("no memories at all", ([], 50, 10), []),
    Case("all fit, but only without the summary", ([40, 10], 50, 15), [0, 1]),
]


@slip_model
def _fit(costs, budget, summary_cost, *, stop=True, reserve=True, always=False, strict=False,
         order=False):  # fmt: skip
    """The rules with one of them dropped or changed: a slip's answer."""
    positions = sorted(range(len(costs)), key=lambda i: costs[i]) if order else range(len(costs))
    shown, used = [], 0
    for i in positions:
        left = len(costs) - len(shown) - 1  # memories after this one would be left out
        summary = summary_cost if reserve and (always or left > 0) else 0
        fits = used + costs[i] + summary < budget if strict else used + costs[i] + summary <= budget
        if fits:
            shown.append(i)
            used += costs[i]
        elif stop:
            break
    return shown


BUDGET_SLIPS = [
    Slip("a memory was shown after one that did not fit: lower-ranked memories jumped the "
         "queue", "the first memory that does not fit ends the list; later ones go to the "
         "summary even when they are small", lambda c, b, s: _fit(c, b, s, stop=False)),
    Slip("no room was kept for the summary line",
         "when a memory is left out, the block is the shown memories plus the summary: "
         "40 + 50 + 15 = 105 tokens does not fit 100",
         lambda c, b, s: _fit(c, b, s, reserve=False)),
    Slip("room for the summary was kept even though every memory fits",
         "with nothing left out there is no summary: 40 + 30 + 20 = 90 fits a budget of 90",
         lambda c, b, s: _fit(c, b, s, always=True)),
    Slip("a block that fills the budget exactly was refused",
         "\"within the budget\" includes the budget itself: 50 + 35 + 15 = 100 fits 100",
         lambda c, b, s: _fit(c, b, s, strict=True)),
    Slip("the cheapest memories were shown first instead of the best",
         "keep the rank order: the list is best first, and position 0 is shown first",
         lambda c, b, s: _fit(c, b, s, order=True)),
]  # fmt: skip


def check_fit_in_budget(function=None, *, reveal: bool = False) -> None:
    """Your fit_in_budget on 7 rankings: which memories are shown within the budget."""
    return run_exercise("fit_in_budget", BUDGET_CASES, BUDGET_SLIPS, function, reveal=reveal)


# --- 08: recall_at_k, reciprocal_rank -----------------------------------------------------

RANKED = ["m7", "m2", "m9", "m4"]
RECALL_CASES = [
    Case("the answer second, k=1", (RANKED, ["m2"], 1), 0.0),
    Case("the answer second, k=3", (RANKED, ["m2"], 3), 1.0),
    Case("two pieces of evidence, one found", (RANKED, ["m9", "m5"], 3), 0.5),
    Case("both found", (RANKED, ["m4", "m7"], 4), 1.0),
    Case("k longer than the ranking", (RANKED, ["m4", "m8"], 10), 0.5),
    Case("evidence listed twice", (RANKED, ["m2", "m2"], 2), 1.0),
    Case("one of three in the top 2", (RANKED, ["m2", "m4", "m8"], 2), 1 / 3),
    Case("an id listed twice counts once", (RANKED, ["m2", "m2", "m4"], 2), 0.5),
]


@slip_model
def _recall(ranked, evidence, k, *, off=0, per="evidence", unique=True, total_unique=True):
    wanted = set(evidence) if unique else list(evidence)
    found = sum(1 for e in wanted if e in ranked[: max(k + off, 0)])
    total = {"evidence": len(set(evidence) if total_unique else evidence), "k": k, "none": 1}[per]
    return min(found, 1) if per == "none" else found / total


RECALL_SLIPS = [
    Slip("the first k + 1 ids were counted (k=1 looked at two)",
         "the first k ids are positions 1 to k: k=1 is the top one only",
         lambda r, e, k: _recall(r, e, k, off=1)),
    Slip("the first k - 1 ids were counted", "k=3 looks at the top three ids, all three",
         lambda r, e, k: _recall(r, e, k, off=-1)),
    Slip("the count was divided by k, not by how much evidence there is (that is precision)",
         "recall asks how much of the evidence was found: 1 found of 2 -> 0.5, whatever k is",
         lambda r, e, k: _recall(r, e, k, per="k")),
    Slip("the answer is 1 whenever anything was found (a hit rate, not a share)",
         "with 2 pieces of evidence and 1 found, recall is 0.5",
         lambda r, e, k: _recall(r, e, k, per="none")),
    Slip("an evidence id listed twice was found twice (the share can pass 1)",
         "count each evidence id once: ['m2', 'm2'] is one piece of evidence",
         lambda r, e, k: _recall(r, e, k, unique=False)),
    Slip("an evidence id listed twice was counted twice in the total",
         "count each evidence id once: ['m2', 'm2'] is one piece of evidence, found or not",
         lambda r, e, k: _recall(r, e, k, total_unique=False)),
    Slip("an evidence id listed twice was counted twice, among those found and in the total",
         "count each evidence id once, on both sides: ['m2', 'm2', 'm4'] is two pieces of "
         "evidence, so finding m2 is 1 of 2",
         lambda r, e, k: _recall(r, e, k, unique=False, total_unique=False)),
]  # fmt: skip

RANK_CASES = [
    Case("the answer second", (RANKED, ["m2"]), 0.5),
    Case("the answer first", (RANKED, ["m7"]), 1.0),
    Case("not ranked at all", (RANKED, ["m8"]), 0.0),
    Case("two answers: the first one counts", (RANKED, ["m4", "m9"]), 1 / 3),
    Case("the answer fourth", (RANKED, ["m4"]), 0.25),
]


@slip_model
def _rank(ranked, evidence, *, start=1, last=False, missing=0.0, invert=True):
    positions = [p for p, m in enumerate(ranked, start=start) if m in set(evidence)]
    if not positions:
        return missing
    p = positions[-1] if last else positions[0]
    return 1.0 / p if invert else float(p)


RANK_SLIPS = [
    Slip("positions were counted from 0, so the second place became 1/1",
         "the top of the ranking is position 1: second place gives 1/2 = 0.5",
         lambda r, e: _rank(r, e, start=0) if r and r[0] not in set(e) else _rank(r, e, start=2)),
    Slip("the last piece of evidence counted, not the first",
         "stop at the first evidence id going down the ranking: m9 at 3 beats m4 at 4",
         lambda r, e: _rank(r, e, last=True)),
    Slip("the position itself was returned, not one over it",
         "second place gives 1/2 = 0.5, tenth 0.1", lambda r, e: _rank(r, e, invert=False)),
    Slip("an answer that is not ranked gave something other than 0.0",
         "no evidence anywhere in the ranking: the reciprocal rank is 0.0",
         lambda r, e: _rank(r, e, missing=None)),
]  # fmt: skip


def check_recall_at_k(function=None, *, reveal: bool = False) -> None:
    """Your recall_at_k on 7 rankings."""
    return run_exercise("recall_at_k", RECALL_CASES, RECALL_SLIPS, function, reveal=reveal)


def check_reciprocal_rank(function=None, *, reveal: bool = False) -> None:
    """Your reciprocal_rank on 5 rankings."""
    return run_exercise("reciprocal_rank", RANK_CASES, RANK_SLIPS, function, reveal=reveal)


# --- 10: score_sql ------------------------------------------------------------------------

ROWS = [  # relevance, last_accessed, importance (an integer, as a rating is)
    (0.8, NOW - HOUR, 7),
    (0.0, NOW, 10),
    (-0.5, NOW - 24 * HOUR, 1),
    (0.3, NOW + 3 * HOUR, 4),  # last accessed after `now`
    (0.6, NOW - 200 * HOUR, 9),
]
SQL_CASES = [
    Case("the course's weights", (NOW,), None),
    Case("unequal weights", (NOW,), None, {"weights": (0.55, 0.25, 0.2)}),
    Case("another decay rate", (NOW,), None, {"decay_rate": 0.9}),
]


def _stand_in() -> sqlite3.Connection:
    """An in-memory SQLite table of ROWS, with PostgreSQL's power(), greatest(), least()."""
    db = sqlite3.connect(":memory:")
    db.create_function("power", 2, math.pow, deterministic=True)
    db.create_function("greatest", -1, max, deterministic=True)
    db.create_function("least", -1, min, deterministic=True)
    db.execute("CREATE TABLE memories (n INTEGER, relevance REAL, last_accessed REAL, "
               "importance INTEGER)")  # fmt: skip
    db.executemany("INSERT INTO memories VALUES (?, ?, ?, ?)",
                   [(i, *row) for i, row in enumerate(ROWS)])  # fmt: skip
    return db


def run_sql(expression: str) -> list[float]:
    """Your SQL expression's value on each row of ROWS, in order."""
    if not isinstance(expression, str) or not expression.strip():
        raise CheckFailed(f"score_sql must return the SQL text, a non-empty str, got "
                          f"{expression!r}\n  (fix it in {where('score_sql')})")  # fmt: skip
    with contextlib.closing(_stand_in()) as db:
        try:
            rows = db.execute(f"SELECT {expression} FROM memories ORDER BY n").fetchall()
        except sqlite3.Error as error:
            raise CheckFailed(
                f"your SQL could not run: {error}\n  the text: {expression}\n  likely slip: "
                "only the columns relevance, last_accessed and importance exist; the functions "
                f"are power(x, y), greatest(a, b), CASE WHEN\n  (fix it in {where('score_sql')})"
            ) from None
    return [float(value) if isinstance(value, (int, float)) else value for (value,) in rows]


def _python_scores(case: Case, *, hours=3600.0, clamp=True, integer=False, share=10.0,
                   order=(0, 1, 2)) -> list[float]:  # fmt: skip
    """The score of each row: with the defaults your own functions', else a slip's."""
    weights = case.kwargs.get("weights", (1.0, 1.0, 1.0))
    rate = case.kwargs.get("decay_rate", 0.995)
    now = case.args[0]
    if (hours, clamp, integer, share, order) == (3600.0, True, False, 10.0, (0, 1, 2)):
        scoring = importlib.import_module("scoring")
        return [scoring.retrieval_score(rel, scoring.recency_score(now, last, decay_rate=rate),
                                        scoring.importance_score(imp), weights=weights)
                for rel, last, imp in ROWS]  # fmt: skip
    w = [weights[i] for i in order]
    scores = []
    for rel, last, imp in ROWS:
        gap = max(now - last, 0.0) if clamp else now - last
        importance = imp // 10 if integer else imp / share
        scores.append(w[0] * rel + w[1] * rate ** (gap / hours) + w[2] * importance)
    return scores


SQL_SLIPS = [
    Slip("the importance term is 0 for every rating below 10: integer division",
         "in SQL 7 / 10 is 0, as both are integers; divide by 10.0 to get 0.7",
         lambda now, **kw: _python_scores(Case("", (now,), None, kw), integer=True)),
    Slip("the hours since the last access were counted in seconds",
         "one hour ago is 3,600 seconds: recency 0.995 needs the gap in hours",
         lambda now, **kw: _python_scores(Case("", (now,), None, kw), hours=1.0)),
    Slip("a row last accessed after `now` got a recency above 1",
         "a last access in the future counts as 0 hours ago (recency 1.0): keep the gap at "
         "least 0 (greatest)", lambda now, **kw: _python_scores(Case("", (now,), None, kw),
                                                                clamp=False)),
    Slip("the rating was used as it is, not as a share of 10",
         "a rating of 7 counts 0.7 at weight 1", lambda now, **kw: _python_scores(
             Case("", (now,), None, kw), share=1.0)),
    Slip("a weight went with the wrong signal",
         "relevance, recency, importance, in the order of the weights",
         lambda now, **kw: _python_scores(Case("", (now,), None, kw), order=(0, 2, 1))),
]  # fmt: skip


def check_score_sql(function=None, *, reveal: bool = False) -> None:
    """Your score_sql, run by SQL on 5 rows, against your own retrieval_score (Milestone 3)."""
    return run_exercise(
        "score_sql", SQL_CASES, SQL_SLIPS, function, reveal=reveal,
        answer_of=lambda f, case: run_sql(f(*case.args, **case.kwargs)),
        expected_of=_python_scores,
    )  # fmt: skip
