"""Answer cells: the numbers the "what happens if" questions ask for, checked with a tolerance.

A question at the end of a notebook whose answer is a number gets a cell such as

    answer = 0.995 ** 3600        # notebook 01, question 2
    check_answer("01.2", answer)

which prints "01.2: right, 1.456e-08 ..." or what was expected, what came back and the
likely slip (a slip is modelled by the value it gives, as the milestone checks model
mistakes). With `answer = None` it only says that no answer is recorded yet.

Three more formative checks sit beside it, on the learner's own functions:
`check_recall_changes` (which fields of a memory does a recall change? notebook 04),
`check_fit_budget` (the budget step the learner writes in notebook 04: which memories fit a
token budget, best first) and `check_block_fits` (does a rendered memory block fit?).

These checks print and return True or False; they never stop a notebook and are not graded.
Deliberately left out: questions whose answer is an explanation; those are answered in
words, in the notebooks' manually graded cells.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from typing import NamedTuple

from base.defaults import COURSE_NOW
from base.units import SECONDS_PER_HOUR
from memory_store import Memory, MemoryStore
from teaching.checks import ladder
from teaching.checks.core import learner_function


class Answer(NamedTuple):
    """The number a question asks for, how close counts, and the slips that give others.

    `step` is the second rung of the hint ladder: the next step of the computation, never
    its result. `within` is the range every sensible answer lies in, with what it is.
    """

    question: str  # what is asked, short
    expected: float
    rel_tol: float
    slips: tuple[tuple[str, float], ...] = ()
    step: str = "redo the computation step by step, with every quantity in its unit"
    within: tuple[float, float, str] | None = None  # (low, high, what the number is)


RECENCY = (0.0, 1.0, "a recency lies between 0 and 1")
RATE = (0.0, 1.0, "a decay rate is the share of recency kept per hour, between 0 and 1")

ANSWERS: dict[str, Answer] = {
    "00.3": Answer(
        "notes after which replaying everything overflows a 128,000-token window",
        128_000 / (12 * 4 / 3),
        0.01,
        (
            ("the tokens per word were left out: that counts words, not tokens", 128_000 / 12),
            (
                "that is the example window of the cell above; the question's holds 128,000 tokens",
                8_000 / (12 * 4 / 3),
            ),
        ),
        "one note costs its words times the tokens per word; the window holds as many "
        "notes as that cost fits into it. The cell above did the same for its own window.",
        (1.0, math.inf, "a number of notes is at least 1"),
    ),
    "01.2": Answer(
        "what a one-hour-old memory scores when the gap stays in seconds",
        0.995**3600,
        1e-3,
        (
            (
                "that is the right recency of one hour; the question asks what the "
                "seconds mistake gives",
                0.995,
            ),
            (
                "that multiplies the rate by the gap; recency raises the rate to the power of "
                "the gap",
                0.995 * 3600,
            ),
        ),
        "with the gap left in seconds, a one-hour-old memory looks 3,600 hours old to the "
        "formula: the hourly rate is applied once for each of them. Expect a tiny number.",
        RECENCY,
    ),
    "01.3": Answer(
        "the decay_rate that gives episodes a one-week half-life",
        0.5 ** (1 / 168),
        1e-5,
        (
            ("that is a one-day half-life: count the hours of a week", 0.5 ** (1 / 24)),
            (
                "that is the conversion upside down: a rate that small halves recency in a "
                "fraction of an hour",
                0.5**168,
            ),
            ("that is the course's rate, which halves in about 138 hours, not in a week", 0.995),
            (
                "that is the 45-day half-life the table cell printed, not a week's",
                0.5 ** (1 / (45 * 24)),
            ),
            (
                "that is an exponent, not a rate: a rate is the share kept per hour, close to 1",
                1 / 168,
            ),
            (
                "that loses an equal share every hour, as if decay were a straight line; "
                "recency is multiplied by the rate every hour",
                1 - 1 / 168,
            ),
            (
                "that loses half of it in 168 equal steps, as if decay were a straight line; "
                "recency is multiplied by the rate every hour",
                1 - 0.5 / 168,
            ),
        ),
        "a half-life h is the age at which the rate, applied once per hour, has brought "
        "recency down to one half: the rate to the power h is 0.5. Solve that for the rate, "
        "with h in hours.",
        RATE,
    ),
    "02.1": Answer(
        "the contract's score with importance left undivided (rating 10)",
        0.0 + 0.1 + 10,
        1e-6,
        (
            ("that divides the rating by 10 after all; the question leaves it as it is", 1.1),
            ("that is brushed teeth's score, not the contract's", 2.9),
        ),
        "add the contract's three signals as the table prints its relevance and recency, "
        "with its rating as the raw number instead of its importance score.",
    ),
    "03.3": Answer(
        "the smallest importance weight that puts the contract on top",
        0.7665,  # (cheap's rel + rec - acme's) / (1.0 - 0.3); a test recomputes it
        0.01,
        (
            ("at 1.0 the contract is on top already; the smallest weight is lower", 1.0),
            ("that is the question's own weight (3); look for the smallest", 3.0),
        ),
        "for each other memory, the contract wins once the weight times its importance "
        "lead makes up its deficit in relevance plus recency. Find the weight each rival "
        "needs; the largest of those beats them all.",
        (0.0, math.inf, "a weight is not negative"),
    ),
    "04.1": Answer(
        "every memory's recency on day 30 when k = 5 (all recalled every morning)",
        0.995**24,
        1e-3,
        (
            (
                "1.0 is the recency just after a recall; the plot reads it the next "
                "morning, 24 hours later",
                1.0,
            ),
            (
                "that is 30 days without a recall; with k = 5 every memory is recalled daily",
                0.995 ** (30 * 24),
            ),
        ),
        "with k = 5 every memory is recalled every morning, so on day 30 each was last "
        "accessed the morning before: how much recency do that many hours take away?",
        RECENCY,
    ),
    "04.3": Answer(
        "the lunch's recency on day 30 with decay_rate 0.98",
        0.98 ** (30 * 24),
        1e-2,
        (
            ("that is the rate 0.995; the question sets 0.98", 0.995 ** (30 * 24)),
            ("that is one day at 0.98; the lunch was never recalled in 30 days", 0.98**24),
            ("that counts days, but the rate is per hour", 0.98**30),
        ),
        "the lunch is never recalled, so its clock has run since day 0: count the hours of "
        "30 days and apply the hourly rate once for each. Expect a very small number.",
        RECENCY,
    ),
    "07c.1": Answer(
        "the rating of the reply 'somewhere from 6 to 9, say'",
        8,
        0.001,
        (
            ("that is the range's first number; a range means its midpoint", 6),
            ("that is the range's last number; a range means its midpoint", 9),
            ("that is the midpoint itself; a rating is a whole number, halves round up", 7.5),
            ("that half was rounded down (or to the even number); halves round up", 7),
        ),
        "a range stands for its middle: add its two ends and halve; a rating is a whole "
        "number, so a half goes to the next one up",
        (1.0, 10.0, "a rating lies between 1 and 10"),
    ),
    "07e.1": Answer(
        "the age in days of a memory written 15,811,200 seconds before now",
        183,
        0.001,
        (
            ("that is the age in hours: a day has 24 of them", 4392),
            ("that is the age in weeks: a week has 7 days", 183 / 7),
        ),
        "a day has 24 hours of 3,600 seconds each, so 86,400 seconds: divide the memory's "
        "age in seconds by that, then compare the days with the limit of 180 (older than "
        "means strictly more)",
        (0.0, math.inf, "an age is not negative"),
    ),
    "06b.2": Answer(
        "the largest recency weight at which the design review's note wins day 4",
        0.6083,  # (m2's rel - m1's rel) / (m1's rec - m2's rec) on day 4; a test recomputes it
        0.03,
        (
            ("0.3 breaks the loop, but the question asks for the largest weight that does", 0.3),
            ("1.0 is the default weight, at which the loop holds", 1.0),
            ("at 0.7 the standup's note still wins day 4", 0.7),
            ("that is the ratio upside down", 1 / 0.6083),
        ),
        "on day 4's row, the review's note wins while its relevance lead is larger than the "
        "recency weight times the standup's recency lead (importance is equal). Find the "
        "weight at which the two are equal.",
        (0.0, math.inf, "a weight is not negative"),
    ),
}


def _number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def _what_is_off(spec: Answer, answer: float) -> str:
    """The first rung: the named slip, a unit mixed up, out of range, or the direction."""
    for label, value in spec.slips:
        if math.isclose(answer, value, rel_tol=spec.rel_tol):
            return label
    if spec.within is not None:
        low, high, what = spec.within
        if not low <= answer <= high:
            return f"out of range: {what}"
    unit = ladder.unit_slip(answer, spec.expected)
    if unit:
        return unit
    return ladder.direction(answer, spec.expected)


def check_answer(key: str, answer, *, reveal: bool = False) -> bool:
    """Check the number recorded for question `key` ("01.2" = notebook 01, question 2).

    A wrong number gets what is off (a slip, a unit, the range, too big or too small); a
    second, different wrong number gets the next step too; the number itself only with
    reveal=True.
    """
    spec = ANSWERS.get(key)
    if spec is None:
        raise ValueError(f"no answer cell {key!r}; known: {', '.join(ANSWERS)}")
    right = _number(answer) and math.isclose(answer, spec.expected, rel_tol=spec.rel_tol)
    if reveal and not right:
        ladder.revealed(key)
        print(
            f"{key} ({spec.question}): the answer, as asked: {spec.expected:.4g} (within "
            f"{spec.rel_tol * 100:g}%).\n  how: {spec.step}"
        )
        return False
    if answer is None:
        print(f"{key}: no answer yet. Work it out, set answer = ..., and run this cell again.")
        return False
    if not _number(answer):
        print(
            f"{key} ({spec.question})\n  expected: a number\n  got:      {answer!r}\n"
            "  likely mistake: write the number, or the expression that computes it"
        )
        return False
    if right:
        said = " (as the answer said)" if ladder.was_revealed(key) else ""
        print(f"{key}: right, {answer:.4g} ({spec.question}){said}.")
        return True
    rung = ladder.wrong_try(key, ladder.rounded(answer))
    lines = [f"{key} ({spec.question}): not yet.", f"  got:         {answer:.4g}",
             f"  what is off: {_what_is_off(spec, answer)}"]  # fmt: skip
    if rung >= 2:
        lines.append(f"  next step:   {spec.step}")
    else:
        lines.append("  Change answer and run this cell again: a second, different try gets "
                     "the next step.")  # fmt: skip
    lines.append(ladder.reveal_hint(f'check_answer("{key}", answer, reveal=True)'))
    print("\n".join(lines))
    return False


# --- the memory stream: a memory's fields ------------------------------------------------

FIELD_QUESTIONS: dict[str, tuple[str, str, dict[str, str], str]] = {
    # key -> (what is asked, the field, a wrong field -> why it is not that one, next step)
    "01.fields": (
        "the field recency counts the hours from",
        "last_accessed",
        {
            "created_at": "created_at never changes: counted from it, a memory in daily use "
            "would fade like one never needed",
            "importance": "importance is the rating; recency reads a time",
        },
        "recency counts hours, so the field holds a time; of the fields that hold one, take "
        "the one that a recall resets, so that a memory in use stays fresh",
    ),
}
TIMES = ("created_at", "last_accessed")  # the fields of a memory that hold a time


def _memory_fields() -> list[str]:
    return [f.name for f in dataclasses.fields(Memory)]


def check_field(key: str, answer, *, reveal: bool = False) -> bool:
    """Check the name of a Memory field recorded for question `key`."""
    question, field_name, slips, step = FIELD_QUESTIONS[key]
    if reveal and answer != field_name:
        ladder.revealed(key)
        print(f"{key} ({question}): the answer, as asked: {field_name!r}.\n  why: {step}")
        return False
    if answer is None:
        print(f'{key}: no answer yet. Set field = "..." (a field of Memory), then run again.')
        return False
    if answer == field_name:
        said = " (as the answer said)" if ladder.was_revealed(key) else ""
        print(f"{key}: right, {field_name} ({question}){said}.")
        return True
    if not isinstance(answer, str) or answer not in _memory_fields():
        off = (f"{answer!r} is not a field of Memory: write one of the names printed above, "
               "as a string")  # fmt: skip
    elif answer in slips:
        off = slips[answer]
    elif answer not in TIMES:
        off = f"{answer} does not hold a time, and recency counts hours"
    else:
        off = "look at the fields printed above"
    rung = ladder.wrong_try(key, answer if isinstance(answer, str) else repr(answer))
    lines = [f"{key} ({question}): not {answer!r}.", f"  what is off: {off}"]
    if rung >= 2:
        lines.append(f"  next step:   {step}")
    lines.append(ladder.reveal_hint(f'check_field("{key}", field, reveal=True)'))
    print("\n".join(lines))
    return False


# --- the memory stream: what a recall changes -------------------------------------------

RECALL_CHANGES = frozenset({"last_accessed"})
RECALL = "04.recall"  # the question's key on the hint ladder
SET_ONCE = {
    "created_at": "created_at records when the memory was written, once",
    "importance": "importance is rated once, at write time",
}
NOT_STORED = {  # names a learner may write that are signals, computed, never stored
    "recency": "recency is not stored: it is computed from a stored time whenever memories "
    "are ranked",
    "relevance": "relevance is not stored: it is computed against each question",
    "score": "the score is not stored: it is computed whenever memories are ranked",
}


def recall_changes() -> set[str]:
    """The fields of a memory that the learner's `retrieve` changed when it recalled it."""
    retrieve = learner_function("retrieve")
    now = COURSE_NOW
    store = MemoryStore()
    store.add(
        Memory(
            "m1",
            "decided to default to Groq",
            kind="semantic",
            created_at=now - 48 * SECONDS_PER_HOUR,
            last_accessed=now - 24 * SECONDS_PER_HOUR,
            importance=8,
            embedding=[1.0, 0.0, 0.0],
        )
    )
    before = store.get("m1").to_dict()
    retrieve(store, [1.0, 0.0, 0.0], now=now, k=1)
    after = store.get("m1").to_dict()
    return {name for name in before if before[name] != after[name]}


def _recall_hints(predicted: set[str]) -> tuple[str, str]:
    """(what is off, the next step) for a wrong set of fields, by count and category."""
    fields = set(_memory_fields())
    unknown = sorted(predicted - fields)
    extra = sorted((predicted & fields) - RECALL_CHANGES)
    missing = RECALL_CHANGES - predicted
    off = []
    for name in unknown:
        off.append(NOT_STORED.get(name, f"{name!r} is not a field of Memory"))
    if extra:
        said = [SET_ONCE[name] for name in extra if name in SET_ONCE]
        off.append(
            f"{len(extra)} of the fields you named {'is' if len(extra) == 1 else 'are'} set "
            "when the memory is written and never changed by a recall"
            + (f" ({'; '.join(said)})" if said else "")
        )
    if missing:
        off.append("a field that every recall changes is missing from your set")
    step = (
        "a recall changes exactly one field: the one that restarts the recency clock, so "
        "that memories in use stay fresh. Everything else is set once, when written."
    )
    return "; ".join(off), step


def check_recall_changes(predicted, *, reveal: bool = False) -> bool:
    """Compare the learner's set of field names with what a recall changes."""
    if reveal and (predicted is None or set(predicted) != RECALL_CHANGES):
        ladder.revealed(RECALL)
        print(
            f"the answer, as asked: a recall changes {sorted(RECALL_CHANGES)} and nothing "
            "else; the rest of a memory is written once, and the stream only grows."
        )
        return False
    if predicted is None:
        print("no prediction yet: set changes_on_recall = {...} (field names), then run again.")
        return False
    if isinstance(predicted, str) or not all(isinstance(p, str) for p in predicted):
        print(
            f"expected: a set of field names, e.g. {{'text'}}\ngot:      {predicted!r}\n"
            "likely mistake: a single string is not a set; write {'name'}"
        )
        return False
    actual = recall_changes()
    if actual != RECALL_CHANGES:
        print(
            f"your retrieve changed {sorted(actual)} on a recalled memory, which is not what "
            "a recall does\n  likely mistake: retrieve refreshes the memories it returns and "
            "changes nothing else (code/retriever.py, Milestone 4); fix it, then run again"
        )
        return False
    predicted = set(predicted)
    if predicted == RECALL_CHANGES:
        said = " (as the answer said)" if ladder.was_revealed(RECALL) else ""
        print(
            "right: a recall changes only last_accessed. id, text, kind, created_at, "
            f"importance and embedding never change; the stream only grows{said}."
        )
        return True
    off, step = _recall_hints(predicted)
    rung = ladder.wrong_try(RECALL, frozenset(predicted))
    lines = [f"not yet: {len(predicted)} field(s) named", f"  what is off: {off}"]
    if rung >= 2:
        lines.append(f"  next step:   {step}")
    lines.append(ladder.reveal_hint("check_recall_changes(changes_on_recall, reveal=True)"))
    print("\n".join(lines))
    return False


# --- paging into a budget: tokens, not only k ------------------------------------------


def _budget_memories() -> list[Memory]:
    """Four memories, best first, of very different lengths (block costs: 49, 118, 155, 197)."""
    texts = (
        ("m1", "Eric prefers Groq for the default API"),
        ("m2", "The staging API key expires at the end of March; rotate it in the vault and "
               "tell the team in the channel before Friday, or the nightly jobs fail"),
        ("m3", "lunch with Maya"),
        ("m4", "the Acme contract renews every March"),
    )  # fmt: skip
    return [
        Memory(
            memory_id,
            text,
            created_at=COURSE_NOW - (n + 1) * 24 * SECONDS_PER_HOUR,
            importance=5,
            embedding=[1.0, 0.0],
        )
        for n, (memory_id, text) in enumerate(texts)
    ]


TEXTS_ONLY = "only the texts were counted: the block's dates, ages and markers cost tokens too"
# (what is asked, the budget, how many of the four are ranked, the ids that fit,
#  {the ids a slip gives: the slip})
BUDGET_CASES = (
    ("everything fits", 200, 4, ("m1", "m2", "m3", "m4"), {}),
    (
        "the second memory is too long",
        100,
        4,
        ("m1",),
        {
            ("m1", "m3"): "a lower-ranked memory took the place of a better one that did not "
            "fit: stop at the first memory that does not fit",
            ("m1", "m2", "m3", "m4"): TEXTS_ONLY,
        },
    ),
    (
        "a block of exactly the budget",
        49,
        4,
        ("m1",),
        {(): "a block that costs exactly budget_tokens fits: at most, not less than",
         ("m1", "m2", "m3", "m4"): TEXTS_ONLY},
    ),
    (
        "not even the best memory fits",
        40,
        4,
        (),
        {("m1",): "the first memory was kept although its block costs more than the budget"},
    ),
    ("two of three", 150, 3, ("m1", "m2"), {("m1", "m2", "m3"): TEXTS_ONLY}),
    ("nothing was recalled", 100, 0, (), {}),
)  # fmt: skip


FIT = "04.fit_budget"  # the budget step's key on the hint ladder
WALK = (
    "walk the ranking best first and keep each memory while the rendered block of all kept "
    "so far, it included, costs at most budget_tokens; stop at the first that does not fit"
)


def _fit_off(ids: tuple, expected: tuple) -> str:
    """What is off in the ids a budget step kept, by count and place, not which ones fit."""
    if len(ids) > len(expected):
        extra = len(ids) - len(expected)
        return f"{extra} memor{'y' if extra == 1 else 'ies'} too many: the block is over budget"
    if len(ids) < len(expected):
        short = len(expected) - len(ids)
        return f"{short} memor{'y' if short == 1 else 'ies'} too few: more fit in the budget"
    return "as many as fit, but not the right ones: keep the best first, in ranking order"


def check_fit_budget(fit_budget, *, reveal: bool = False) -> bool:
    """Run the learner's fit_budget(ranked, budget_tokens, now) on fixed memories and budgets."""
    if not callable(fit_budget):
        print(f"expected: the function fit_budget\ngot:      {fit_budget!r}")
        return False
    for number, (question, budget, n, expected, slips) in enumerate(BUDGET_CASES):
        ranked = _budget_memories()[:n]
        before = [memory.to_dict() for memory in ranked]
        given = list(ranked)
        call = f"fit_budget({[m.id for m in ranked]}, budget_tokens={budget}, now)"
        try:
            got = fit_budget(given, budget, COURSE_NOW)
        except NotImplementedError:
            print("fit_budget is not implemented yet: write its body in the cell above.")
            return False
        if isinstance(got, int) and not isinstance(got, bool):
            mistake = "return the memories that fit (a list of Memory), not how many"
        elif not isinstance(got, (list, tuple)) or not all(isinstance(m, Memory) for m in got):
            mistake = "return a list of the Memory objects that fit, best first (not their ids)"
        else:
            ids = tuple(memory.id for memory in got)
            if ids == expected:
                if given != ranked or [m.to_dict() for m in ranked] != before:
                    print(
                        f"{call}\n  the right memories, but the input changed\n  likely "
                        "mistake: fit_budget only chooses; it changes neither the list nor "
                        "a memory (the recall already refreshed them)"
                    )
                    return False
                continue
            if reveal:
                ladder.revealed(FIT)
                print(f"{call}  ({question})\n  the answer, as asked: {list(expected)}\n"
                      f"  got:      {list(ids)}\n  how: {WALK}")  # fmt: skip
                return False
            rung = ladder.wrong_try(FIT, (number, ids))
            lines = [f"{call}  ({question})", f"  got:         {list(ids)}",
                     f"  what is off: {slips.get(ids) or _fit_off(ids, expected)}"]  # fmt: skip
            if rung >= 2:
                lines.append(f"  next step:   {WALK}")
            lines.append(ladder.reveal_hint("check_fit_budget(fit_budget, reveal=True)"))
            print("\n".join(lines))
            return False
        print(f"{call}  ({question})\n  got:      {got!r}\n  likely mistake: {mistake}")
        return False
    print(f"fit_budget: {len(BUDGET_CASES)} checks passed")
    return True


BLOCK = "04.block_fits"


def check_block_fits(block: str, budget_tokens: int, k: int | None = None) -> bool:
    """True when the rendered memory block costs at most `budget_tokens` tokens.

    Nothing to reveal: the budget is the learner's own number. A block over it gets how far
    over; a second, different block over it gets the next step.
    """
    from extensions.context_budget import count_tokens

    if not isinstance(block, str):
        print(f"expected: the rendered block (a str)\ngot:      {type(block).__name__}")
        return False
    tokens = count_tokens(block)
    if tokens <= budget_tokens:
        print(f"fits: {tokens} tokens of memory block within a budget of {budget_tokens}.")
        return True
    rung = ladder.wrong_try(BLOCK, (budget_tokens, tokens))
    lines = [
        f"over budget\n  expected: at most {budget_tokens} tokens\n  got:      {tokens} tokens"
        + (f" for k = {k}" if k is not None else ""),
        "  likely mistake: k counts memories, not tokens; long memories cost more, so lower "
        "k until the block fits",
    ]
    if rung >= 2 and k:
        lines.append(
            f"  next step: this block costs about {tokens / k:.0f} tokens a memory on average, "
            "but not every memory costs the average: drop the lowest-ranked first, one at a time"
        )
    print("\n".join(lines))
    return False
