"""Notebook 06's checks: predict the signal to blame, reproduce a failure, then fix it.

Each failure of notebook 06 is a numbered section. Before a failure is revealed the
learner records which signal they expect to blame (`blame = "recency"`); after the
reveal `check_blame` compares it with the signal that caused the failure and, when the
prediction was wrong, says why that signal and not the one chosen:

    check_blame(3, "relevance")
      failure 3 (no decay: a stale preference wins)
        expected: recency
        got:      relevance
        why:      with decay_rate=1.0 every note has recency 1.00 ...
        likely mistake: relevance only broke the tie that recency left ...

"none" is the answer when the cause is a step outside the score (nothing was written
back, the prompt hid the ages). The "your turn" section builds a store in which a
trivial memory crowds out a constraint: `check_crowded_out` proves that it fails,
`check_constraint_recalled` that the learner's fix works. Both rank with the learner's
own `rank_memories` (which changes nothing). These checks are formative: they print
and return True or False, never stop the notebook.

Deliberately left out: the scenarios themselves (they are built in the notebook, where
the learner can change them) and grading (nothing here is graded).
"""

from __future__ import annotations

from typing import NamedTuple

from teaching.checks.core import learner_function

SIGNALS = ("relevance", "recency", "importance", "none")
TRIVIAL = 3  # importance at or below this is trivial
CONSTRAINT = 7  # importance at or above this is a constraint worth keeping
IMPORTANCE_OFF = (1.0, 1.0, 0.0)  # the weights of the "your turn" failure


class Failure(NamedTuple):
    """One failure of notebook 06: its section, the signal to blame, why, and the fix."""

    number: int
    title: str  # the section heading of notebook 06, after "## N. "
    blame: str  # one of SIGNALS
    why: str
    fix: str
    slips: dict  # a wrong answer -> why it tempts and why it is not the cause


FAILURES: dict[int, Failure] = {
    f.number: f
    for f in (
        Failure(
            1,
            "Fixation on an old trivial memory",
            "relevance",
            "with weights (1, 0, 0) relevance is the only signal that counts, and the "
            "year-old pasta note shares the most words with the question",
            "let recency and importance count: equal weights",
            {
                "recency": "the pasta note's recency is 0.00: recency would have sunk it, "
                "had its weight not been 0",
                "importance": "importance (0.1) would have sunk it too; its weight was 0",
            },
        ),
        Failure(
            2,
            "No write-back: a standing instruction forgotten",
            "none",
            "the instruction was never stored (written == []): no signal can rank a "
            "memory that is not in the store",
            "write every turn back (write_back=True)",
            {
                "importance": "a low importance would rank the instruction low, but it "
                "was not ranked at all: the store never held it",
                "recency": "a day of decay leaves 0.89; the instruction was not old, it "
                "was missing",
                "relevance": "the question shares words with the instruction; there was "
                "just nothing to match",
            },
        ),
        Failure(
            3,
            "No decay: a stale preference wins",
            "recency",
            "with decay_rate=1.0 every note has recency 1.00, so nothing told the "
            "retriever that one preference is three months old",
            "decay (0.995 per hour), or supersede the old fact",
            {
                "relevance": "relevance only broke the tie that switched-off recency left: "
                "the cause is the missing decay",
                "importance": "both preferences are rated 6: importance is equal and "
                "decides nothing here",
            },
        ),
        Failure(
            4,
            "A mixed-up embedding model",
            "relevance",
            "a cosine between vectors of two different models is noise: relevance is "
            "the signal computed from the embeddings",
            "one embedding model per store; re-embed to switch",
            {
                "recency": "recency reads only last_accessed, which no embedding model changes",
                "importance": "importance is a rating, untouched by embeddings",
                "none": "the error is loud only because the store checks; without the "
                "check the failure is in relevance, silently",
            },
        ),
        Failure(
            5,
            "An ever-growing store",
            "recency",
            "the pile keeps getting fresh notes (recency near 1) while the fact, written "
            "30 days ago, has decayed to 0.03; a lucky word match is enough for fresh trivia",
            "forget and consolidate (notebooks 07d, 07e)",
            {
                "relevance": "relevance helps the pile only a little (a word or two); what "
                "lifts the trivia above the fact is their freshness",
                "importance": "importance is what still keeps the fact above most of the "
                "pile; it is the signal that resists, not the cause",
            },
        ),
        Failure(
            6,
            "Contradicts a decision you made yesterday",
            "relevance",
            "yesterday's decision is worded differently from today's question: a "
            "word-only embedding scores it 0, while an old note that shares the "
            "question's words is recalled instead",
            "an embedding that captures meaning (the default hybrid), and supersede "
            "the note the decision replaces",
            {
                "recency": "the decision is a day old (recency 0.89), far fresher than "
                "the note recalled instead: recency was on its side",
                "importance": "the decision is rated higher than the note recalled "
                "instead: importance was on its side too",
            },
        ),
        Failure(
            7,
            "A trivial memory crowds out a constraint",
            "importance",
            "with weights (1, 1, 0) importance counts for nothing, so a fresh trivial "
            "note beats a month-old constraint rated 9",
            "give importance its weight back (or rate the constraint higher, with "
            "importance weighted)",
            {
                "recency": "recency does favour the fresh trivial note, but that is its "
                "job; the constraint lost because the one signal that protects it was off",
                "relevance": "both notes are about lunch; relevance does not separate them much",
            },
        ),
        Failure(
            8,
            "Self-reinforcing recall",
            "recency",
            "every recall resets last_accessed, so the memory recalled yesterday has "
            "recency 0.89 today while the one never recalled keeps fading: a recall "
            "makes the next recall likelier",
            "weigh recency less (or rate the neglected memory higher): a recall should "
            "not be able to win the next one on freshness alone",
            {
                "relevance": "the neglected memory is the more relevant one: relevance "
                "was on its side",
                "importance": "both memories are rated the same: importance decides nothing here",
            },
        ),
        Failure(
            9,
            "A memory block without ages",
            "none",
            "retrieval found both notes; the prompt then showed them without dates or "
            "ages, so the model cannot tell the old preference from the new one",
            "render every recalled memory with its date and age (llm/memory_block.py)",
            {
                "recency": "recency decided which notes were recalled, and both were; "
                "what went missing is the age in the prompt, after ranking",
                "relevance": "both notes were relevant and both were recalled",
                "importance": "both notes were recalled; importance played its part",
            },
        ),
    )
}


def check_blame(number: int, blame) -> bool:
    """Compare the learner's predicted signal for failure `number` with its cause.

    check_blame(3, "recency") prints "failure 3 ...: right, recency. ..." and returns True.
    """
    failure = FAILURES.get(number)
    if failure is None:
        raise ValueError(f"notebook 06 has failures 1-{len(FAILURES)}, got {number!r}")
    head = f"failure {number} ({failure.title.lower()})"
    if blame is None:
        print(
            f"{head}: no prediction recorded. Set blame = one of {', '.join(map(repr, SIGNALS))} "
            "in the prediction cell before the failure is shown, run it, then run this cell."
        )
        return False
    if not isinstance(blame, str) or blame.strip().lower() not in SIGNALS:
        print(
            f"{head}\n  expected: one of {', '.join(map(repr, SIGNALS))}\n  got:      {blame!r}\n"
            "  likely mistake: blame is one word, a signal of the score, or 'none' when the "
            "cause is a step outside the score (write-back, the prompt)"
        )
        return False
    blame = blame.strip().lower()
    if blame == failure.blame:
        print(f"{head}: right, {failure.blame}. {failure.why[0].upper()}{failure.why[1:]}.")
        print(f"  fix: {failure.fix}")
        return True
    print(
        f"{head}\n  expected: {failure.blame}\n  got:      {blame}\n  why:      {failure.why}\n"
        f"  likely mistake: {failure.slips.get(blame, 'reread the signal paragraph above')}"
    )
    return False


# --- your turn: a constraint crowded out, then fixed ------------------------------------


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


def check_crowded_out(
    store, query_embedding, now, constraint_id, k=1, weights=IMPORTANCE_OFF, decay_rate=0.995
) -> bool:
    """True when a trivial memory keeps the constraint out of the top k at `weights`."""
    problem = _constraint_problem(store, constraint_id)
    if problem:
        print(f"not reproduced yet\n  likely mistake: {problem}")
        return False
    ranking = _ranking(store, query_embedding, now, weights, decay_rate)
    place = _place(ranking, constraint_id)
    top = ranking[:k]
    trivial = [row for row in top if row.memory.importance <= TRIVIAL]
    if place is not None and place >= k and trivial:
        row = trivial[0]
        print(
            f"reproduced: at weights {tuple(weights)} the top {k} holds {row.memory.id!r} "
            f"(importance {row.memory.importance:g}, score {row.score:.2f}) and the "
            f"constraint ranks {place + 1} of {len(ranking)}: importance counted for nothing."
        )
        return True
    if place is None:
        mistake = f"{constraint_id!r} is not ranked at all: is it superseded?"
    elif weights[2] != 0:
        mistake = f"the failure needs importance switched off: weights {IMPORTANCE_OFF}"
    elif not any(m.importance <= TRIVIAL for m in store):
        mistake = f"add a trivial memory (importance 1-{TRIVIAL}) to the store"
    elif place < k:
        mistake = (
            "your trivial memory needs more relevance + recency than the constraint: make it "
            "share the question's words and make it fresher (written after the constraint)"
        )
    else:
        mistake = f"what beats the constraint is not trivial (importance {TRIVIAL} or less)"
    got = "outside the ranking" if place is None else f"rank {place + 1}"
    print(
        f"not reproduced yet\n  expected: {constraint_id!r} outside the top {k}, behind a "
        f"trivial memory\n  got:      {constraint_id!r} at {got}\n  likely mistake: {mistake}"
    )
    return False


def check_constraint_recalled(
    store, query_embedding, now, constraint_id, weights, k=1, decay_rate=0.995
) -> bool:
    """True when the fix works: the constraint is back in the top k, the trivia still there."""
    problem = _constraint_problem(store, constraint_id)
    if problem:
        print(f"not fixed yet\n  likely mistake: {problem}")
        return False
    if weights is None:
        print("not fixed yet: set fix_weights = (w_rel, w_rec, w_imp), then run this cell")
        return False
    weights = tuple(float(w) for w in weights)
    ranking = _ranking(store, query_embedding, now, weights, decay_rate)
    place = _place(ranking, constraint_id)
    still_broken = _ranking(store, query_embedding, now, IMPORTANCE_OFF, decay_rate)
    crowd = _place(still_broken, constraint_id)
    if crowd is not None and crowd < k:
        print(
            "not a fix of the signal\n  expected: the trivial memory still beats the "
            f"constraint at {IMPORTANCE_OFF}\n  got:      the constraint ranks {crowd + 1} there"
            "\n  likely mistake: the trivial memory was removed or changed; keep the store "
            "that fails and fix the weights or the constraint's importance"
        )
        return False
    if place is not None and place < k:
        row = ranking[place]
        print(
            f"fixed: at weights {weights} the constraint ranks {place + 1} (score "
            f"{row.score:.2f}, importance {row.importance:.1f} of it weighted {weights[2]:g})."
        )
        return True
    mistake = (
        "importance still has weight 0: give it a weight"
        if weights[2] == 0
        else "importance counts now, but not enough: weigh it more, or rate the constraint higher"
    )
    got = "outside the ranking" if place is None else f"rank {place + 1}"
    print(
        f"not fixed yet\n  expected: {constraint_id!r} in the top {k}\n  got:      {got}\n"
        f"  likely mistake: {mistake}"
    )
    return False
