"""Notebooks 06a and 06b's checks: blame the signal behind a failure, then break and fix a store.

Each failure of notebooks 06a and 06b is a numbered section. The learner sees what the
user sees and the table behind the decision (the three signals and the score), then
predicts the signal to blame, `blame = "recency"`, or "none" when the fault is a step outside
the score. `check_blame` answers on the hint ladder (teaching/checks/ladder.py), never with
the answer unless asked:

    check_blame(2, None)                         stops the notebook: "make your prediction
                                                 first" (PredictionMissing), so Run All never
                                                 runs on to the fix before a prediction
    check_blame(2, "relevance")                  a first wrong answer: what is off
      failure 2 (a stale preference wins): not relevance.
        hint: Relevance did break a tie between the two notes. Which columns tied, ...
    check_blame(2, "importance")                 a second, different one: the next step
    check_blame(2, blame, reveal=True)           the answer, only on request

A wrong answer tried again gets its hint again. `require_blame(n)`, at the top of a cell that
shows the fix, stops that cell too until failure n has a prediction.

This module is also the answer key of the two notebooks: each failure's `broken` settings
are what teaching/failure_demos.py's `assistant(n)` changes, so the notebooks can show an
assistant's behaviour without naming its wrong setting before the prediction.

The "your turn" section of 06a builds a store in which an on-topic trivial memory crowds
out a constraint at the assistant's default weights: `check_crowded_out` proves that it
fails, `check_constraint_recalled` that the learner's new weights save the constraint while
relevance still counts. Both rank with the learner's own `rank_memories` (which changes
nothing). These checks are formative: they print and return True or False, never stop the
notebook, and nothing here is graded.

Deliberately left out: the stores themselves (they are built in the notebooks, where the
learner can change them).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import replace
from typing import NamedTuple

from base.defaults import DECAY_RATE, WEIGHTS
from memory_store import Memory, MemoryStore
from teaching.checks import ladder
from teaching.checks.core import learner_function

SIGNALS = ("relevance", "recency", "importance", "none")
TRIVIAL = 3  # importance at or below this is trivial
CONSTRAINT = 7  # importance at or above this is a constraint worth keeping
# subtle: a note that only shares a name or a word with the question ("Sam said hi") gets
# most of the constraint's relevance with the default embedding; a note about what the
# question asks gets clearly more. So on topic means more relevant than the constraint.
ON_TOPIC_SHARE = 1.2  # a note is on topic when its relevance is 1.2x the constraint's or more
COPY = 0.95  # a trivial note this similar to the constraint is a copy of it, not trivia
CONTROL_IMPORTANCE = 10  # the off-topic note a fix must not let win: rated higher than a constraint
FRESH = 0.95  # recency of a note a few hours old: it cannot get much fresher
TABLE = "read the table again"


class Failure(NamedTuple):
    """One failure of notebooks 06a-06b: where it is, what to blame, and how to get there."""

    number: int
    notebook: str  # "06a" or "06b"
    title: str  # the section heading, after "## N. "
    blame: str  # one of SIGNALS
    why: str  # the explanation, shown once the answer is right or revealed
    fix: str
    hints: dict  # a wrong answer -> where in the table to look (never the answer)
    step: str  # the second rung, a sentence: a stronger pointer at the evidence, not the answer
    slips: dict  # a wrong answer -> why it tempts and why it is not the cause
    broken: dict  # the Settings fields this failure's assistant changes (empty: as shipped)


FAILURES: dict[int, Failure] = {
    f.number: f
    for f in (
        Failure(
            1,
            "06a",
            "Fixation on an old trivial memory",
            "relevance",
            "this assistant ranks by relevance alone (weights (1, 0, 0)): every score equals "
            "the note's relevance, and the year-old pasta note is the closest match to the "
            "question; its recency and importance, which would have sunk it, count for nothing",
            "let recency and importance count: the default, equal weights",
            {
                "recency": "the pasta note ranks first with a recency close to 0. Compare each "
                "row's score with its three signal columns: which one does the score follow?",
                "importance": "the pasta note ranks first with the lowest importance in the "
                "store. Compare each row's score with its three signal columns: which one does "
                "the score follow?",
                "none": "the vegan note is in the table, so it was stored and ranked: the fault "
                "is in how it was scored. Compare each row's score with its three signal columns.",
            },
            "Every row's score equals one of its three columns exactly, to the last digit: "
            "that column alone decided the ranking. Which one is it?",
            {
                "recency": "the pasta note's recency is about 0: recency would have sunk it, "
                "had its weight not been 0",
                "importance": "importance (0.1) would have sunk it too; its weight was 0",
                "none": "the vegan note was stored and ranked; it lost on the score",
            },
            {"weights": (1.0, 0.0, 0.0)},
        ),
        Failure(
            2,
            "06a",
            "A stale preference wins",
            "recency",
            "this assistant's recency never decays (decay_rate 1.0: 100% kept per hour), so "
            "both notes have recency 1.00 and nothing says that one preference is 90 days old; "
            "with importance equal too, relevance broke the tie for the older note",
            "decay: 0.995 per hour, the default (a changed fact is better superseded, 07b)",
            {
                "relevance": "relevance did break a tie between the two notes. Which columns "
                "tied, and should they, for notes written 90 days and 1 day ago?",
                "importance": "both notes are rated 6: importance is equal and cannot have chosen "
                "between them. Read the other two columns for the note written 90 days ago: "
                "does each value fit its age?",
                "none": "both notes are in the table: stored and ranked. Read each column for the "
                "note written 90 days ago: does every value fit its age?",
            },
            "One column shows the same value for a note written 90 days ago and one written "
            "yesterday. A signal that should depend on age and does not is the broken one.",
            {
                "relevance": "relevance only broke the tie that recency left: with decay, the "
                "90-day-old note would have lost by far",
                "importance": "both preferences are rated 6: importance decides nothing here",
                "none": "both notes were stored and ranked; the ranking itself was wrong",
            },
            {"decay_rate": 1.0},
        ),
        Failure(
            3,
            "06a",
            "A trivial memory crowds out a constraint",
            "importance",
            "this assistant leaves importance out (weights (1, 1, 0)): every score is "
            "relevance + recency, so the constraint rated 9 counts no more than the note rated "
            "1, and the fresher note wins",
            "give importance its weight back: the default, equal weights",
            {
                "recency": "recency does favour the two-hour-old note: that is its job, in "
                "every assistant. Add up each row's three signals and compare with its score.",
                "relevance": "both notes are about lunch, and their relevance is close. Add up "
                "each row's three signals and compare with its score.",
                "none": "both notes are in the table: stored and ranked. Add up each row's three "
                "signals and compare with its score.",
            },
            "Each score is the sum of two of its columns only. The third, left out, is the one "
            "that would have kept the note rated 9 on top.",
            {
                "recency": "recency favours the fresh note, as it should; the constraint lost "
                "because the one signal that protects it had no weight",
                "relevance": "both notes are about lunch; relevance barely separates them",
                "none": "both notes were stored and ranked; the score left one signal out",
            },
            {"weights": (1.0, 1.0, 0.0)},
        ),
        Failure(
            4,
            "06b",
            "Contradicts a decision you made yesterday",
            "relevance",
            "the old note repeats the question's words and meaning (billing, service, "
            "database), while the decision talks of moving billing to Postgres: relevance is "
            "the only signal on the old note's side, and it outweighs the decision's higher "
            "recency and importance",
            "mark the old note as replaced (supersede it, notebook 07b): it is wrong, not weak; "
            "word a decision the way it will be asked about",
            {
                "recency": "compare the rec column of the two notes: which one does recency "
                "favour?",
                "importance": "compare the imp column of the two notes: which one does "
                "importance favour?",
                "none": "the decision is in the table: stored and ranked, and it lost on the "
                "score. Which column is on the old note's side?",
            },
            "Of the three columns, only one is on the old note's side: the decision leads in "
            "the other two. The one left is what the old note wins on.",
            {
                "recency": "the decision is the fresher note: recency was on its side",
                "importance": "the decision is rated higher: importance was on its side too",
                "none": "the decision was stored and ranked; it lost on the score",
            },
            {},
        ),
        Failure(
            5,
            "06b",
            "The same note, turn after turn",
            "recency",
            "every recall resets last_accessed, so the note recalled yesterday has recency "
            "0.89 today while the other keeps fading: a recall makes the next recall likelier, "
            "and from day 4 freshness outvotes relevance",
            "weigh recency less, so that freshness from a recall cannot outvote relevance "
            "(or rate the neglected note higher; per-kind half-lives, 07a)",
            {
                "relevance": "from day 4 the questions are about the design review: on day 4's "
                "row, which note does relevance favour?",
                "importance": "both notes are rated 5: importance cannot separate them. On day "
                "4's row, which column is on m1's side?",
                "none": "both notes are ranked every morning, and the wrong one wins on the "
                "numbers. On day 4's row, which column is on m1's side, and why is it so high?",
            },
            "The note m1 was recalled on days 1-3. A recall resets one field of a memory; "
            "which column is computed from it, and how high is it for m1 on day 4?",
            {
                "relevance": "the neglected note is the more relevant one from day 4: relevance "
                "was on its side",
                "importance": "both notes are rated the same: importance decides nothing here",
                "none": "the notes were ranked and the score chose m1 each morning",
            },
            {},
        ),
        Failure(
            6,
            "06b",
            "The model cannot tell old from new",
            "none",
            "retrieval chose well: both notes were recalled. The other team's prompt then "
            "showed them without dates or ages, so the model holds two equally good answers "
            "and cannot tell which one is current",
            "render every recalled memory with its date and age (llm/memory_block.py)",
            {
                "recency": "recency decided which notes were recalled, and both were (see "
                "`recalled`). Read the block the model was given: what would it need to pick "
                "the current one?",
                "relevance": "both notes were relevant, and both were recalled. Read the block "
                "the model was given: what would it need to pick the current one?",
                "importance": "both notes were recalled: importance did its part. Read the "
                "block the model was given: what would it need to pick the current one?",
            },
            "Both notes were recalled, so ranking did its job. The fault lies after ranking: "
            "what was the model shown about each note, and what did it lack?",
            {
                "recency": "recency decided which notes were recalled, and both were; what "
                "went missing is the age in the prompt, after ranking",
                "relevance": "both notes were relevant and both were recalled",
                "importance": "both notes were recalled; importance played its part",
            },
            {},
        ),
    )
}


def _failure(number) -> Failure:
    failure = FAILURES.get(number)
    if failure is None:
        raise ValueError(f"notebooks 06a-06b have failures 1-{len(FAILURES)}, got {number!r}")
    return failure


def _key(number: int) -> str:
    return f"blame {number}"


def _sentence(text: str) -> str:
    return text[0].upper() + text[1:] + ("" if text.endswith(".") else ".")


def _answer(failure: Failure, wrong: list[str]) -> str:
    lines = [f"  answer: {failure.blame}. {_sentence(failure.why)}"]
    lines += [f"  why not {w}: {failure.slips[w]}" for w in wrong if w in failure.slips]
    lines.append(f"  fix: {failure.fix}")
    return "\n".join(lines)


def check_blame(number: int, blame, *, reveal: bool = False) -> bool:
    """Compare the learner's predicted signal for failure `number` with its cause.

    An empty prediction stops the notebook ("make your prediction first"). A right answer
    says why and the fix; a first wrong one gets a hint that points at the table; a second,
    different wrong one gets the next step; only reveal=True shows the answer.
    check_blame(2, "recency") prints "failure 2 (...): right, recency, ..." and returns True.
    """
    failure = _failure(number)
    head = f"failure {number} ({failure.title.lower()})"
    key = _key(number)
    wrong = list(ladder.TRIES.get(key, []))
    known = isinstance(blame, str) and blame.strip().lower() in SIGNALS
    if reveal and not (known and blame.strip().lower() == failure.blame):
        ladder.revealed(key)
        ladder.PREDICTED.add(key)
        print(f"{head}: the answer, as asked.\n{_answer(failure, wrong)}")
        return False
    ladder.require_prediction(
        blame, f"blame = one of {', '.join(map(repr, SIGNALS))} from the evidence above"
    )
    if not known:
        print(
            f"{head}\n  expected: one of {', '.join(map(repr, SIGNALS))}\n  got:      {blame!r}\n"
            "  likely mistake: blame is one word, a signal of the score, or 'none' when the "
            "cause is a step outside the score (what is stored, what the prompt shows)"
        )
        return False
    ladder.PREDICTED.add(key)
    blame = blame.strip().lower()
    if blame == failure.blame:
        when = {0: "on the first try", 1: "after one hint"}.get(len(wrong), "after two hints")
        if ladder.was_revealed(key):
            when = "as the answer said"
        print(f"{head}: right, {blame}, {when}. {_sentence(failure.why)}\n  fix: {failure.fix}")
        return True
    rung = ladder.wrong_try(key, blame)
    hint = failure.hints.get(blame, TABLE)
    lines = [f"{head}: not {blame}.", f"  hint: {hint[0].upper()}{hint[1:]}"]
    if rung >= 2:
        lines.append(f"  next step: {failure.step}")
    lines.append("  Change blame and run this cell again.")
    lines.append(ladder.reveal_hint(f"check_blame({number}, blame, reveal=True)"))
    print("\n".join(lines))
    return False


def require_blame(number: int) -> None:
    """Stop a cell that shows failure `number`'s fix until its blame has been predicted."""
    _failure(number)
    if _key(number) not in ladder.PREDICTED:
        raise ladder.PredictionMissing(
            f"make your prediction first: run check_blame({number}, blame) with your blame "
            "above; the fix is shown once you have committed to an answer."
        )


# --- your turn: a constraint crowded out at the default weights, then saved ----------------


def _ranking(store, query_embedding, now, weights, decay_rate):
    rank_memories = learner_function("rank_memories")
    return rank_memories(store, query_embedding, now, weights=weights, decay_rate=decay_rate)


def _place(ranking, memory_id) -> int | None:
    ids = [row.memory.id for row in ranking]
    return ids.index(memory_id) if memory_id in ids else None


def _constraint_problem(store, constraint_id) -> str | None:
    ids = [memory.id for memory in store]
    if constraint_id not in ids:
        return f"the store holds no memory {constraint_id!r} (it holds {ids})"
    if store.get(constraint_id).importance < CONSTRAINT:
        return (
            f"{constraint_id!r} has importance {store.get(constraint_id).importance}: a "
            f"constraint is rated {CONSTRAINT} or more, or there is nothing to crowd out"
        )
    return None


def _crowding(ranking, constraint_id, k):
    """(the constraint's place, the on-topic trivial rows above it, the off-topic ones)."""
    place = _place(ranking, constraint_id)
    if place is None or place < k:
        return place, [], []
    relevance = ranking[place].relevance
    constraint = ranking[place].memory.embedding
    trivial = [row for row in ranking[:k] if row.memory.importance <= TRIVIAL
               and _cosine(row.memory.embedding, constraint) < COPY]  # fmt: skip
    on_topic = [row for row in trivial if row.relevance >= ON_TOPIC_SHARE * relevance]
    return place, on_topic, [row for row in trivial if row not in on_topic]


def _cosine(a, b) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    norms = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norms if norms else 0.0


def _copies(ranking, constraint_id, k) -> list:
    """Trivial rows in the top k that restate the constraint itself."""
    place = _place(ranking, constraint_id)
    if place is None:
        return []
    constraint = ranking[place].memory.embedding
    return [row for row in ranking[:k] if row.memory.importance <= TRIVIAL
            and _cosine(row.memory.embedding, constraint) >= COPY]  # fmt: skip


def check_crowded_out(
    store, query_embedding, now, constraint_id, k=1, weights=WEIGHTS, decay_rate=DECAY_RATE
) -> bool:
    """True when an on-topic trivial memory keeps the constraint out of the top k at `weights`."""
    problem = _constraint_problem(store, constraint_id)
    if problem:
        print(f"not reproduced yet\n  likely mistake: {problem}")
        return False
    weights = tuple(weights)
    ranking = _ranking(store, query_embedding, now, weights, decay_rate)
    place, on_topic, off_topic = _crowding(ranking, constraint_id, k)
    if on_topic:
        row = on_topic[0]
        print(
            f"reproduced: at weights {weights} the top {k} holds {row.memory.id!r} (importance "
            f"{row.memory.importance:g}, relevance {row.relevance:.2f}, score {row.score:.2f}) "
            f"and the constraint ranks {place + 1} of {len(ranking)} (score "
            f"{ranking[place].score:.2f}): a trivial note about the same thing outranked it."
        )
        return True
    got = "outside the ranking" if place is None else f"rank {place + 1}"
    if place is None:
        mistake = f"{constraint_id!r} is not ranked at all: is it superseded?"
    elif off_topic:
        row = off_topic[0]
        mistake = (
            f"{row.memory.id!r} wins on freshness, but its relevance ({row.relevance:.2f}) is "
            f"not clearly above the constraint's ({ranking[place].relevance:.2f}; on topic is "
            f"{ON_TOPIC_SHARE * ranking[place].relevance:.2f} or more): sharing a name or a word "
            "with the question is not being about it, so it is not about what the question "
            "asks. Write a trivial note on the question's topic"
        )
    elif _copies(ranking, constraint_id, k):
        row = _copies(ranking, constraint_id, k)[0]
        mistake = (
            f"{row.memory.id!r} says what the constraint says (similarity "
            f"{_cosine(row.memory.embedding, ranking[place].memory.embedding):.2f}): a copy "
            "rated low is the constraint again, not trivia. Write a note of its own"
        )
    elif not any(m.importance <= TRIVIAL for m in store):
        mistake = f"add a trivial memory (importance 1-{TRIVIAL}) to the store"
    elif place < k:
        best = max(
            (row for row in ranking if row.memory.importance <= TRIVIAL), key=lambda r: r.score
        )
        short = ranking[place].score - best.score
        needs = (
            "it is as fresh as a note gets, so it needs more relevance: make it closer to "
            "what the question asks"
            if best.recency >= FRESH
            else "make it closer to what the question asks, or fresher"
        )
        mistake = (
            f"your best trivial note, {best.memory.id!r}, scores {best.score:.2f}, {short:.2f} "
            f"short of the constraint's {ranking[place].score:.2f}: {needs}"
        )
    else:
        mistake = f"what beats the constraint is not trivial (importance {TRIVIAL} or less)"
    print(
        f"not reproduced yet\n  expected: {constraint_id!r} outside the top {k}, behind a "
        f"trivial note on the question's topic\n  got:      {constraint_id!r} at {got}\n"
        f"  likely mistake: {mistake}"
    )
    return False


def _weights(weights) -> tuple[float, float, float] | None:
    if isinstance(weights, (str, bytes)) or not hasattr(weights, "__len__") or len(weights) != 3:
        return None
    if not all(isinstance(w, numbers.Real) and not isinstance(w, bool) for w in weights):
        return None
    if not all(math.isfinite(w) and w >= 0 for w in weights):
        return None
    return tuple(float(w) for w in weights)


def _off_topic_control(store, query_embedding, constraint: Memory) -> Memory:
    """A note the question is not about (relevance 0), rated 10, as old as the constraint."""
    query = [float(x) for x in query_embedding]
    norm = math.sqrt(sum(x * x for x in query)) or 1.0
    unit = [x / norm for x in query]
    # the basis vector least aligned with the query, minus its part along the query
    axis = min(range(len(unit)), key=lambda i: abs(unit[i]))
    vector = [-unit[axis] * u for u in unit]
    vector[axis] += 1.0
    length = math.sqrt(sum(x * x for x in vector))
    return replace(
        constraint,
        id="control",
        text="an important note about something else",
        importance=CONTROL_IMPORTANCE,
        embedding=[x / length for x in vector],
        superseded_by=None,
        metadata={},
    )


def _with(store: MemoryStore, extra: Memory) -> MemoryStore:
    copy = MemoryStore(store.embedding_model, user_id=store.user_id)
    for memory in store:
        copy.add(replace(memory, superseded_by=None))  # a copy: the learner's store is untouched
    for memory in store:
        if memory.superseded_by is not None:
            copy.supersede(memory.id, memory.superseded_by)
    copy.add(extra)
    return copy


def check_constraint_recalled(
    store,
    query_embedding,
    now,
    constraint_id,
    weights,
    k=1,
    decay_rate=DECAY_RATE,
    failing_weights=WEIGHTS,
) -> bool:
    """True when new weights bring the constraint back while relevance still counts.

    The store must be the one that fails at `failing_weights` (unchanged), the weights must
    differ from them, and the constraint must still beat an off-topic note rated 10, as old
    as itself: weights that answer every question with the most important note are no fix.
    """
    problem = _constraint_problem(store, constraint_id)
    if problem:
        print(f"not fixed yet\n  likely mistake: {problem}")
        return False
    if weights is None:
        print("not fixed yet: set fix_weights = (w_rel, w_rec, w_imp), then run this cell")
        return False
    chosen = _weights(weights)
    failing = tuple(float(w) for w in failing_weights)
    if chosen is None:
        print(
            f"not fixed yet\n  expected: three weights, each a number >= 0\n  got:      "
            f"{weights!r}\n  likely mistake: write fix_weights = (w_rel, w_rec, w_imp)"
        )
        return False
    if chosen == failing:
        print(
            f"not fixed yet: {failing} are the weights your store fails at, where the trivial "
            "note wins. Change them: which signal protects the constraint, and which one lifts "
            "the trivial note?"
        )
        return False
    broken = _ranking(store, query_embedding, now, failing, decay_rate)
    place, on_topic, _ = _crowding(broken, constraint_id, k)
    if not on_topic:
        got = "outside the ranking" if place is None else f"rank {place + 1}"
        print(
            f"not a fix of the weights\n  expected: at {failing} an on-topic trivial note still "
            f"beats the constraint\n  got:      the constraint at {got} there\n  likely "
            "mistake: the store changed since check_crowded_out; keep the store that fails and "
            "change only the weights"
        )
        return False
    if chosen[0] == 0:
        print(
            f"not a fix\n  expected: weights that keep relevance on (w_rel > 0)\n  got:      "
            f"{chosen}\n  likely mistake: with relevance off the assistant no longer answers "
            "the question asked: any important note would do"
        )
        return False
    ranking = _ranking(store, query_embedding, now, chosen, decay_rate)
    spot = _place(ranking, constraint_id)
    if spot is None or spot >= k:
        trivial = ranking[0]
        mistake = (
            "importance still has weight 0: give it a weight"
            if chosen[2] == 0
            else f"{trivial.memory.id!r} still scores {trivial.score:.2f} against the "
            f"constraint's {ranking[spot].score:.2f}: weigh the signal that protects the "
            "constraint more, or the one that lifts the trivial note less"
        )
        print(
            f"not fixed yet\n  expected: {constraint_id!r} in the top {k}\n  got:      "
            f"rank {spot + 1}\n  likely mistake: {mistake}"
        )
        return False
    constraint = store.get(constraint_id)
    control = _off_topic_control(store, query_embedding, constraint)
    checked = _ranking(_with(store, control), query_embedding, now, chosen, decay_rate)
    if _place(checked, constraint_id) > _place(checked, "control"):
        print(
            f"not a fix\n  expected: relevance still counts: the constraint beats a note about "
            f"something else, rated {CONTROL_IMPORTANCE} and as old as it\n  got:      at "
            f"{chosen} that note ranks above the constraint\n  likely mistake: importance "
            "outweighs relevance so much that the assistant would answer every question with "
            "its most important note; weigh importance less against relevance"
        )
        return False
    row = ranking[spot]
    print(
        f"fixed: at weights {chosen} the constraint ranks {spot + 1} (score {row.score:.2f}), "
        "the trivial note is still in the store, and an important note about something else "
        "does not take its place."
    )
    return True
