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

import math
import numbers
from typing import NamedTuple

from base.defaults import COURSE_NOW
from base.units import SECONDS_PER_HOUR
from memory_store import Memory, MemoryStore
from teaching.checks.core import learner_function


class Answer(NamedTuple):
    """The number a question asks for, how close counts, and the slips that give others."""

    question: str  # what is asked, short
    expected: float
    rel_tol: float
    slips: tuple[tuple[str, float], ...] = ()


ANSWERS: dict[str, Answer] = {
    "00.3": Answer(
        "notes after which replaying everything overflows a 128,000-token window",
        128_000 / (12 * 4 / 3),  # 8,000
        0.01,
        (
            (
                "the tokens per word were left out: 128,000 / 12 counts words, not tokens",
                128_000 / 12,
            ),
            ("the old 8,000-token window was kept", 8_000 / (12 * 4 / 3)),
        ),
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
            ("0.995 * 3600 multiplies; recency raises decay_rate to the power", 0.995 * 3600),
        ),
    ),
    "01.3": Answer(
        "the decay_rate that gives episodes a one-week half-life",
        0.5 ** (1 / 168),
        1e-5,
        (
            ("that is a one-day half-life: a week is 168 hours", 0.5 ** (1 / 24)),
            ("that is the half-life formula upside down: rate = 0.5 ** (1 / hours)", 0.5**168),
            ("0.995 halves in about 138 hours, not 168", 0.995),
            (
                "that is the 45-day half-life the table cell printed; a week is 168 hours",
                0.5 ** (1 / (45 * 24)),
            ),
            ("1/168 is the exponent, not the rate: raise 0.5 to it", 1 / 168),
            (
                "that loses 1/168 of the recency each hour, as if decay were a straight line; "
                "recency multiplies by the rate every hour: rate = 0.5 ** (1 / 168)",
                1 - 1 / 168,
            ),
            (
                "that loses half of it in 168 equal steps, as if decay were a straight line; "
                "recency multiplies by the rate every hour: rate = 0.5 ** (1 / 168)",
                1 - 0.5 / 168,
            ),
        ),
    ),
    "02.1": Answer(
        "the contract's score with importance left undivided (rating 10)",
        0.0 + 0.1 + 10,
        1e-6,
        (
            ("that divides by 10 after all; the question leaves the rating as it is", 1.1),
            ("that is brushed teeth's score (0.9 + 1.0 + 1)", 2.9),
        ),
    ),
    "03.3": Answer(
        "the smallest importance weight that puts the contract on top",
        0.7665,  # (cheap's rel + rec - acme's) / (1.0 - 0.3); a test recomputes it
        0.01,
        (
            ("at 1.0 the contract is on top already; the smallest weight is lower", 1.0),
            ("that is the question's own weight (3); look for the smallest", 3.0),
        ),
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
    ),
    "04.3": Answer(
        "the lunch's recency on day 30 with decay_rate 0.98",
        0.98 ** (30 * 24),
        1e-2,
        (
            ("that is the rate 0.995; the question sets 0.98", 0.995 ** (30 * 24)),
            ("that is one day at 0.98; the lunch was never recalled in 30 days", 0.98**24),
            ("30 counts days, but the rate is per hour: 30 days are 30 * 24 hours", 0.98**30),
        ),
    ),
    "06b.2": Answer(
        "the largest recency weight at which the design review's note wins day 4",
        0.6083,  # (m2's rel - m1's rel) / (m1's rec - m2's rec) on day 4; a test recomputes it
        0.03,
        (
            ("0.3 breaks the loop, but the question asks for the largest weight that does", 0.3),
            ("1.0 is the default weight, at which the loop holds", 1.0),
            ("at 0.7 the standup's note still wins day 4", 0.7),
            (
                "that is the ratio upside down: the relevance gap goes on top, the recency "
                "gap below",
                1 / 0.6083,
            ),
        ),
    ),
}


def _number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def check_answer(key: str, answer) -> bool:
    """Check the number recorded for question `key` ("01.2" = notebook 01, question 2)."""
    spec = ANSWERS.get(key)
    if spec is None:
        raise ValueError(f"no answer cell {key!r}; known: {', '.join(ANSWERS)}")
    if answer is None:
        print(f"{key}: no answer yet. Work it out, set answer = ..., and run this cell again.")
        return False
    if not _number(answer):
        print(
            f"{key} ({spec.question})\n  expected: a number\n  got:      {answer!r}\n"
            "  likely mistake: write the number, or the expression that computes it"
        )
        return False
    if math.isclose(answer, spec.expected, rel_tol=spec.rel_tol):
        print(f"{key}: right, {answer:.4g} ({spec.question}).")
        return True
    slip = next(
        (label for label, value in spec.slips if math.isclose(answer, value, rel_tol=spec.rel_tol)),
        "none of the usual slips matches: redo the computation step by step",
    )
    print(
        f"{key} ({spec.question})\n  expected: {spec.expected:.4g} (within "
        f"{spec.rel_tol * 100:g}%)\n  got:      {answer:.4g}\n  likely slip: {slip}"
    )
    return False


# --- the memory stream: a memory's fields ------------------------------------------------

FIELD_QUESTIONS: dict[str, tuple[str, str, dict[str, str]]] = {
    # key -> (what is asked, the field, a wrong field -> why it is not that one)
    "01.fields": (
        "the field recency counts the hours from",
        "last_accessed",
        {
            "created_at": "created_at never changes: counted from it, a memory in daily use "
            "would fade like one never needed",
            "importance": "importance is the rating; recency reads a time",
        },
    ),
}


def check_field(key: str, answer) -> bool:
    """Check the name of a Memory field recorded for question `key`."""
    question, field_name, slips = FIELD_QUESTIONS[key]
    if answer is None:
        print(f'{key}: no answer yet. Set field = "..." (a field of Memory), then run again.')
        return False
    if answer == field_name:
        print(f"{key}: right, {field_name} ({question}).")
        return True
    print(
        f"{key} ({question})\n  expected: {field_name!r}\n  got:      {answer!r}\n"
        f"  likely slip: {slips.get(answer, 'look at the fields printed above')}"
    )
    return False


# --- the memory stream: what a recall changes -------------------------------------------

RECALL_CHANGES = frozenset({"last_accessed"})


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


def check_recall_changes(predicted) -> bool:
    """Compare the learner's set of field names with what a recall changes."""
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
            f"your retrieve changed {sorted(actual)} on a recalled memory\n"
            f"  expected: {sorted(RECALL_CHANGES)}\n  likely mistake: retrieve sets "
            "last_accessed = now on the memories it returns, and changes nothing else "
            "(code/retriever.py, Milestone 4)"
        )
        return False
    predicted = set(predicted)
    if predicted == RECALL_CHANGES:
        print(
            "right: a recall changes only last_accessed. id, text, kind, created_at, "
            "importance and embedding never change; the stream only grows."
        )
        return True
    extra, missing = sorted(predicted - actual), sorted(actual - predicted)
    why = []
    if "created_at" in extra:
        why.append("created_at records when the memory was written, once")
    if "importance" in extra:
        why.append("importance is rated once, at write time")
    if extra and not why:
        why.append(f"{', '.join(extra)} is set when the memory is written and stays")
    if missing:
        why.append("the recall resets last_accessed to now: that is the refresh")
    print(
        f"expected: {sorted(RECALL_CHANGES)}\ngot:      {sorted(predicted)}\n"
        f"likely mistake: {'; '.join(why)}"
    )
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


def check_fit_budget(fit_budget) -> bool:
    """Run the learner's fit_budget(ranked, budget_tokens, now) on fixed memories and budgets."""
    if not callable(fit_budget):
        print(f"expected: the function fit_budget\ngot:      {fit_budget!r}")
        return False
    for question, budget, n, expected, slips in BUDGET_CASES:
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
            mistake = slips.get(
                ids,
                "walk the ranking best first and keep each memory while the rendered "
                "block of all kept so far, it included, costs at most budget_tokens",
            )
            got = list(ids)
        print(
            f"{call}  ({question})\n  expected: {list(expected)}\n  got:      {got!r}\n"
            f"  likely mistake: {mistake}"
        )
        return False
    print(f"fit_budget: {len(BUDGET_CASES)} checks passed")
    return True


def check_block_fits(block: str, budget_tokens: int, k: int | None = None) -> bool:
    """True when the rendered memory block costs at most `budget_tokens` tokens."""
    from extensions.context_budget import count_tokens

    if not isinstance(block, str):
        print(f"expected: the rendered block (a str)\ngot:      {type(block).__name__}")
        return False
    tokens = count_tokens(block)
    if tokens <= budget_tokens:
        print(f"fits: {tokens} tokens of memory block within a budget of {budget_tokens}.")
        return True
    print(
        f"over budget\n  expected: at most {budget_tokens} tokens\n  got:      {tokens} tokens"
        + (f" for k = {k}" if k is not None else "")
        + "\n  likely mistake: k counts memories, not tokens; long memories cost more, "
        "so lower k until the block fits"
    )
    return False
