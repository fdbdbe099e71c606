"""Your exercises for notebooks 07b-10: one small function each, checked in its notebook.

Milestones 1-5 built the score and the retriever (scoring.py, retriever.py). The later
notebooks add habits around them; each asks you to write one piece of that habit here,
then its "your turn" cell checks it and the cells after it run on your version:

    07b  fact_to_replace      which stored fact a new one replaces, if any
    07f  noise_reason         why a message is not worth a memory ("greeting", ...)
    07g  fit_in_budget        which memories fit a prompt's token budget, in rank order
    08   recall_at_k          the share of the evidence found in the first k
    08   reciprocal_rank      1 / the position of the first piece of evidence
    10   score_sql            the three-signal score as one SQL expression

The checks are formative: nothing here is graded. Each function checks its inputs first
where that part is provided; the TODO says what to compute. Pure Python.

Deliberately left out: the notebooks' fuller versions of the same ideas
(extensions/superseding.py, extensions/what_to_embed.py, extensions/context_budget.py,
evaluation/metrics.py, scale/pg_retrieval.py), which handle embeddings, stores and
models as well.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from base.defaults import DECAY_RATE, WEIGHTS
from base.text import words
from base.units import SECONDS_PER_HOUR
from base.validation import (
    Weights,
    as_number,
    as_timestamp,
    check_decay_rate,
    check_ids,
    check_int,
    check_weights,
)
from embeddings.worth_embedding import ACK_WORDS, FILLER_WORDS, GREETING_WORDS


def fact_to_replace(user_id: str, candidates: Sequence[dict], threshold: float = 0.6):
    """The id of the stored fact that a new fact of `user_id` replaces, or None.  (07b)

    Inputs:
        user_id: whose new fact it is.
        candidates: stored memories, each a dict {"id": str, "user": str, "kind":
            "semantic" | "episodic" | "procedural", "similarity": float (cosine with the
            new fact), "superseded": bool}.
        threshold: the smallest similarity that counts as "about the same thing".
    Returns:
        the id of the most similar candidate that may be replaced, or None when none may.

    Example: a new fact of eric's, stored facts f1 (0.86) and f2 (0.31) of eric's:
        fact_to_replace("eric", [f1, f2]) -> "f1"
    """
    if isinstance(candidates, (str, bytes, dict)) or not isinstance(candidates, Sequence):
        raise TypeError(f"candidates must be a list of dicts, got {type(candidates).__name__}")
    threshold = as_number(threshold, "threshold")
    for i, c in enumerate(candidates):
        if not isinstance(c, dict) or not {"id", "user", "kind", "similarity"} <= set(c):
            raise ValueError(
                f"candidates[{i}] must be a dict with id, user, kind and similarity, got {c!r}"
            )
    # TODO: notebook 07b. Only some candidates may be replaced: the same person's, facts
    # or skills (kind "semantic" or "procedural"; an event is never replaced), not
    # replaced already, and similar enough (at or above the threshold). Among those, the
    # most similar one wins; on a tie the one listed later (stored later: the newer).
    # Return its id, or None when no candidate qualifies. Pitfall: a fact of another
    # user can be the most similar of all; it is never a candidate.
    ### BEGIN SOLUTION
    winner = None
    for c in candidates:
        mine = c["user"] == user_id and c["kind"] in ("semantic", "procedural")
        live = not c.get("superseded", False)
        close = c["similarity"] >= threshold
        if mine and live and close and (winner is None or c["similarity"] >= winner["similarity"]):
            winner = c  # >=: on a tie the later (newer) one wins
    return None if winner is None else winner["id"]
    ### END SOLUTION


def noise_reason(text: str) -> str | None:
    """Why a message is not worth a memory, or None when it is.  (07f)

    Reasons: "empty" (nothing but spaces), "greeting", "acknowledgement".
    The words that count as noise are given: GREETING_WORDS ("hi", "morning", ...),
    ACK_WORDS ("ok", "thanks", ...) and FILLER_WORDS ("you", "so", "very", ...).

    Examples:
        noise_reason("ok, thanks!")                 -> "acknowledgement"
        noise_reason("Good morning")                -> "greeting"
        noise_reason("We decided to use HNSW.")     -> None
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}: {text!r}")
    # TODO: notebook 07f. A blank message is "empty". Otherwise look at its words, one by
    # one (base.text.words splits a text into lower-case words, punctuation and emoji
    # dropped): a message with no words at all ("👍") is an acknowledgement; a message
    # whose words are ALL greeting, acknowledgement or filler words is noise: a
    # "greeting" if any of them is a greeting word, else an "acknowledgement". One real
    # word makes it worth a memory (None).
    ### BEGIN SOLUTION
    said = set(words(text))
    noise = GREETING_WORDS.union(ACK_WORDS, FILLER_WORDS)
    if text.strip() == "":
        return "empty"  # nothing but spaces
    if said <= noise:  # no word at all ("👍"), or nothing but noise words
        return "greeting" if said & GREETING_WORDS else "acknowledgement"
    return None  # one real word is enough
    ### END SOLUTION


def fit_in_budget(costs: Sequence[int], budget: int, summary_cost: int) -> list[int]:
    """The positions of the memories shown in full, best first, within a token budget.  (07g)

    Inputs:
        costs: each recalled memory's cost in tokens, in rank order (best first).
        budget: the tokens the memory block may use.
        summary_cost: the tokens of the one summary line that names what did not fit;
            it is needed only when at least one memory is left out.
    Returns:
        the positions (0, 1, ...) of the memories shown in full.

    Example: costs [40, 50, 30], budget 100, summary 15 -> [0] (40 + 50 + 15 = 105 > 100)
    """
    if isinstance(costs, (str, bytes, dict)) or not isinstance(costs, Sequence):
        raise TypeError(f"costs must be a list of token counts, got {type(costs).__name__}")
    costs = [check_int(c, f"costs[{i}]", 0, "tokens") for i, c in enumerate(costs)]
    budget = check_int(budget, "budget", 0, "tokens the memory block may use")
    summary_cost = check_int(summary_cost, "summary_cost", 0, "tokens of the summary line")
    # TODO: notebook 07g. Show the best memories, in rank order, while they fit: the
    # first memory that does not fit ends the list (a lower-ranked one is never shown in
    # its place). "Fits" counts the summary line too whenever some memory is left out;
    # when every memory fits, no summary is needed. A block that fills the budget
    # exactly fits.
    ### BEGIN SOLUTION
    for keep in range(len(costs), -1, -1):  # the most memories first
        summary = summary_cost if keep < len(costs) else 0
        if sum(costs[:keep]) + summary <= budget:
            return list(range(keep))
    return []
    ### END SOLUTION


def recall_at_k(ranked_ids: Sequence[str], evidence: Iterable[str], k: int) -> float:
    """The share of the evidence found among the first k ranked ids.  (08)

    Example: recall_at_k(["m7", "m2", "m9"], ["m2"], k=1) -> 0.0; with k=3 -> 1.0
    """
    ranked_ids, evidence = check_ids(ranked_ids, "ranked_ids"), check_ids(evidence, "evidence")
    if not evidence:
        raise ValueError("evidence must name at least one id")
    k = check_int(k, "k")
    # TODO: notebook 08. Of the evidence ids (each counted once), how many are among the
    # first k ranked ids? Return that as a share of all the evidence: 1 of 2 -> 0.5.
    ### BEGIN SOLUTION
    wanted = set(evidence)
    return len(wanted.intersection(ranked_ids[:k])) / len(wanted)
    ### END SOLUTION


def reciprocal_rank(ranked_ids: Sequence[str], evidence: Iterable[str]) -> float:
    """1 / the position of the first evidence id (counting from 1), 0.0 if none.  (08)

    Example: reciprocal_rank(["m7", "m2", "m9"], ["m2"]) -> 0.5
    """
    ranked_ids, evidence = check_ids(ranked_ids, "ranked_ids"), check_ids(evidence, "evidence")
    if not evidence:
        raise ValueError("evidence must name at least one id")
    # TODO: notebook 08. Walk down the ranking; at the first id that is evidence, return
    # one over its position (the top is position 1). None found: 0.0.
    ### BEGIN SOLUTION
    for position, memory_id in enumerate(ranked_ids, start=1):
        if memory_id in evidence:
            return 1.0 / position
    return 0.0
    ### END SOLUTION


def score_sql(now, weights: Weights = WEIGHTS, decay_rate: float = DECAY_RATE) -> str:
    """The three-signal score of one row, as an SQL expression (PostgreSQL's dialect).  (10)

    The row has the columns relevance (the cosine, a float), last_accessed (epoch
    seconds, a float) and importance (the 1-10 rating, an integer). The numbers now,
    weights and decay_rate go into the text as literals.

    Example: score_sql(1e6) -> "1.0 * relevance + 1.0 * power(0.995, ...) + ..."
    SQL has power(x, y), greatest(a, b) and CASE WHEN ... THEN ... ELSE ... END.
    """
    now = as_timestamp(now, "now")
    w_relevance, w_recency, w_importance = check_weights(weights)
    decay_rate = check_decay_rate(decay_rate)
    # TODO: notebook 10. Write what your retrieval_score computes as SQL text over the
    # three columns: each weight times its own signal, added up. Recency counts hours since
    # the last access (never fewer than 0); importance is the rating as a share of 10.
    # Pitfall: in SQL an integer divided by an integer is an integer (7 / 10 is 0).
    ### BEGIN SOLUTION
    hours = f"greatest({now!r} - last_accessed, 0) / {SECONDS_PER_HOUR!r}"
    return (
        f"{w_relevance!r} * relevance + {w_recency!r} * power({decay_rate!r}, {hours}) "
        f"+ {w_importance!r} * (importance / 10.0)"
    )
    ### END SOLUTION
