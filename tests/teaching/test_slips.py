"""Every slip named: a wrong function, written as a learner writes it, gets its own message.

Each row is a wrong implementation and a phrase of the message its check must give. The
phrases are distinct on purpose: a slip blamed on another slip (the absolute value of the
gap reported as "the wrong way round") fails here.
"""

from __future__ import annotations

import math
import random

import pytest

from base.defaults import HALF_LIVES
from retriever import rank_memories, retrieve, retrieve_by_kind
from teaching import checks
from teaching.checks import CheckFailed, m4_retriever

HOUR = 3600.0


def _recency(hours_of):
    """A recency_score whose only slip is how it turns the two times into hours."""
    return lambda now, last, decay_rate=0.995: decay_rate ** hours_of(now, last)


def _recency_formula(formula):
    """A recency_score with the hours right (clamped at 0) and the formula wrong."""
    return lambda now, last, decay_rate=0.995: formula(max(0.0, (now - last) / HOUR), decay_rate)


RECENCY_SLIPS = [
    ("abs of the gap", _recency(lambda now, last: abs(now - last) / HOUR), "absolute value"),
    ("gap reversed", _recency(lambda now, last: (last - now) / HOUR), "wrong way round"),
    (
        "gap reversed, then clamped",
        _recency(lambda now, last: max(0.0, (last - now) / HOUR)),
        "clamping that at 0 turned every past access into 0 hours",
    ),
    ("floor division", _recency(lambda now, last: max(0.0, (now - last) // HOUR)), "whole hours"),
    ("int hours", _recency(lambda now, last: int(max(0.0, now - last) / HOUR)), "whole hours"),
    ("seconds", _recency(lambda now, last: max(0.0, now - last)), "used in seconds"),
    ("minutes", _recency(lambda now, last: max(0.0, now - last) / 60), "used in minutes"),
    ("days", _recency(lambda now, last: max(0.0, now - last) / 86400), "converted to days"),
    ("milliseconds", _recency(lambda now, last: max(0.0, now - last) / 3.6e6), "milliseconds"),
    ("not clamped", _recency(lambda now, last: (now - last) / HOUR), "must count as 0 hours"),
    ("linear decay", _recency_formula(lambda h, r: 1 - (1 - r) * h), "a straight line"),
    ("exp(-rate * h)", _recency_formula(lambda h, r: math.exp(-r * h)), "minus decay_rate times"),
    ("exp(-(1-rate) * h)", _recency_formula(lambda h, r: math.exp(-(1 - r) * h)), "continuous"),
    ("hours ** rate", _recency_formula(lambda h, r: h**r), "base and exponent were swapped"),
    ("1 - rate ** h", _recency_formula(lambda h, r: 1 - r**h), "the part forgotten"),
    ("hours returned", _recency_formula(lambda h, r: h), "the hours were returned"),
    ("rate * h", _recency_formula(lambda h, r: r * h), "multiplied by the hours"),
    ("always 1", _recency_formula(lambda h, r: 1.0), "recency was 1.0 whatever the gap"),
    ("rate ignored", _recency_formula(lambda h, r: 0.995**h), "decay_rate argument was ignored"),
]

IMPORTANCE_SLIPS = [
    ("round first", lambda importance: round(importance) / 10, "rounded to a whole number"),
    ("int first", lambda importance: int(importance) / 10, "cut to a whole number (int)"),
    ("/ 100", lambda importance: importance / 100, "divided by 100"),
    ("1 - r / 10", lambda importance: 1 - importance / 10, "turned upside down"),
    ("(r - 1) / 10", lambda importance: (importance - 1) / 10, "one was subtracted"),
    ("raw", lambda importance: importance, "returned as is"),
]


def _dot(q, m):
    return sum(a * b for a, b in zip(q, m))


def _norm(v):
    return math.sqrt(_dot(v, v))


def _guarded(formula):
    """A relevance_score that gets the zero vector right and the formula wrong."""
    return lambda q, m: 0.0 if not _norm(q) or not _norm(m) else formula(q, m)


RELEVANCE_SLIPS = [
    (
        "norms not square-rooted",
        _guarded(lambda q, m: _dot(q, m) / (_dot(q, q) * _dot(m, m))),
        "not square-rooted",
    ),
    ("dot product", _dot, "bare dot product"),
    (
        "brackets missing",
        _guarded(lambda q, m: _dot(q, m) / _norm(q) * _norm(m)),
        "multiplied by the other",
    ),
    (
        "the angle",
        _guarded(lambda q, m: math.acos(max(-1.0, min(1.0, _dot(q, m) / (_norm(q) * _norm(m)))))),
        "the angle between the vectors",
    ),
    (
        "memory length only",
        _guarded(lambda q, m: _dot(q, m) / _norm(m)),
        "the memory's length only",
    ),
]

RETRIEVAL_SCORE_SLIPS = [
    (
        "weights ignored",
        lambda rel, rec, imp, weights=(1.0, 1.0, 1.0): rel + rec + imp,
        "weights were ignored",
    ),
    (
        "weights added",
        lambda rel, rec, imp, weights=(1.0, 1.0, 1.0): sum(
            w + s for w, s in zip(weights, (rel, rec, imp))
        ),
        "each weight was added to its signal",
    ),
    (
        "one weight for all",
        lambda rel, rec, imp, weights=(1.0, 1.0, 1.0): weights[0] * (rel + rec + imp),
        "only the relevance weight was used",
    ),
]


def _kind_recency(formula):
    """A kind_recency_score with the hours right and the halving wrong."""

    def wrong(now, last, kind, half_lives=HALF_LIVES):
        return formula(max(0.0, (now - last) / HOUR), half_lives[kind], now - last)

    return wrong


KIND_RECENCY_SLIPS = [
    ("e-folding", _kind_recency(lambda h, hl, s: math.exp(-h / hl)), "e-folding time"),
    ("minutes", _kind_recency(lambda h, hl, s: 0.5 ** (max(0.0, s) / 60 / hl)), "in minutes"),
    ("seconds", _kind_recency(lambda h, hl, s: 0.5 ** (max(0.0, s) / hl)), "used in seconds"),
    ("days", _kind_recency(lambda h, hl, s: 0.5 ** (h / 24 / hl)), "converted to days"),
    ("straight line", _kind_recency(lambda h, hl, s: max(0.0, 1 - h / (2 * hl))), "straight line"),
    ("half-life as rate", _kind_recency(lambda h, hl, s: hl**h), "not a decay rate"),
    ("swapped", _kind_recency(lambda h, hl, s: 0.5 ** (hl / h) if h else 1.0), "were swapped"),
]

SCORING_SLIPS = (
    [(checks.check_recency_score, *slip) for slip in RECENCY_SLIPS]
    + [(checks.check_importance_score, *slip) for slip in IMPORTANCE_SLIPS]
    + [(checks.check_relevance_score, *slip) for slip in RELEVANCE_SLIPS]
    + [(checks.check_retrieval_score, *slip) for slip in RETRIEVAL_SCORE_SLIPS]
    + [(checks.check_kind_recency_score, *slip) for slip in KIND_RECENCY_SLIPS]
)


@pytest.mark.parametrize(
    ("check", "slip", "wrong", "says"), SCORING_SLIPS, ids=[row[1] for row in SCORING_SLIPS]
)
def test_each_scoring_slip_gets_its_own_message(check, slip, wrong, says, capsys):
    with pytest.raises(CheckFailed) as failure:
        check(wrong)
    message = str(failure.value)
    assert "expected:" in message and "got:" in message and "(fix it in code/" in message
    assert says in message, message
    assert "none of the usual mistakes matches" not in message


def test_every_scoring_slip_says_something_no_other_slip_of_its_function_says():
    """A phrase shared by two slips' messages would not tell them apart."""
    by_check: dict = {}
    for check, slip, _, says in SCORING_SLIPS:
        by_check.setdefault(check, []).append((slip, says))
    for check, slips in by_check.items():
        labels = {says for _, says in slips}
        for slip, says in slips:
            assert sum(says in other for other in labels) == 1, (check.__name__, slip)


# --- rankings --------------------------------------------------------------------------------


def _rows(store, q, now, weights, decay_rate):
    """The rows a learner builds before sorting: the signals right, in the store's order."""
    rows = rank_memories(store, q, now, weights, decay_rate)
    order = {m.id: i for i, m in enumerate(store)}
    return sorted(rows, key=lambda row: order[row.memory.id])


def _ranker(sort):
    def wrong(store, q, now, weights=(1.0, 1.0, 1.0), decay_rate=0.995):
        return sort(_rows(store, q, now, weights, decay_rate))

    return wrong


def _random_ties(rows):
    return sorted(rows, key=lambda row: (row.score, random.random()), reverse=True)


def _shuffled_then_sorted(rows):
    rows = list(rows)
    random.shuffle(rows)
    return sorted(rows, key=lambda row: row.score, reverse=True)


def _raw_importance(store, q, now, weights=(1.0, 1.0, 1.0), decay_rate=0.995):
    rows = [
        row._replace(importance=row.memory.importance, score=row.score + row.memory.importance)
        for row in rank_memories(store, q, now, weights, decay_rate)
    ]
    return sorted(rows, key=lambda row: row.score, reverse=True)


def _ages_too(store, q, now, weights=(1.0, 1.0, 1.0), decay_rate=0.995):
    rows = rank_memories(store, q, now, weights, decay_rate)
    for row in rows:
        row.memory.created_at = now  # the slip: "recalled, so it is new again"
    return rows


RANKING_SLIPS = [
    (
        "(score, id) key with reverse=True",
        _ranker(lambda rows: sorted(rows, key=lambda r: (r.score, r.memory.id), reverse=True)),
        "the ids' reverse order",
    ),
    (
        "(-score, id) key",
        _ranker(lambda rows: sorted(rows, key=lambda r: (-r.score, r.memory.id))),
        "were put in the ids' order",
    ),
    (
        "ascending, then reversed",
        _ranker(lambda rows: sorted(rows, key=lambda r: r.score)[::-1]),
        "sorting ascending and reversing the list",
    ),
    ("random key on ties", _ranker(_random_ties), "the tie-break is random"),
    ("shuffled, then sorted", _ranker(_shuffled_then_sorted), "the tie-break is random"),
    ("raw importance", _raw_importance, "the raw rating (1-10)"),
    ("created_at touched", _ages_too, "a recall changes only last_accessed"),
    (
        "worst first",
        _ranker(lambda rows: sorted(rows, key=lambda r: r.score)),
        "sorted worst first",
    ),
]


@pytest.mark.parametrize(
    ("slip", "wrong", "says"), RANKING_SLIPS, ids=[r[0] for r in RANKING_SLIPS]
)
def test_each_ranking_slip_gets_its_own_message(slip, wrong, says):
    with pytest.raises(CheckFailed) as failure:
        checks.check_rank_memories(wrong)
    message = str(failure.value)
    assert "expected:" in message and "got:" in message
    assert says in message, message
    assert "code/retriever.py, Milestone 4" in message


@pytest.mark.parametrize("tie_break", [_random_ties, _shuffled_then_sorted])
def test_a_random_tie_break_fails_rank_memories_on_every_run(tie_break):
    for _ in range(20):
        with pytest.raises(CheckFailed, match="the tie-break is random"):
            checks.check_rank_memories(_ranker(tie_break))


def _retrieve_with(sort):
    def wrong(store, q, now, k=3, weights=(1.0, 1.0, 1.0), decay_rate=0.995):
        top = sort(_rows(store, q, now, weights, decay_rate))[:k]
        for row in top:
            row.memory.last_accessed = now
        return [row.memory for row in top]

    return wrong


def test_a_random_tie_break_fails_retrieve_on_every_run():
    for _ in range(20):
        with pytest.raises(CheckFailed, match="the tie-break is random"):
            checks.check_retrieve(_retrieve_with(_random_ties))


def _refresh_ages_too(base):
    def wrong(store, q, now, *args, **kwargs):
        memories = base(store, q, now, *args, **kwargs)
        for memory in memories:
            memory.created_at = now  # the slip: the refresh also makes it "new"
        return memories

    return wrong


@pytest.mark.parametrize(
    ("check", "wrong"),
    [
        (checks.check_retrieve, _refresh_ages_too(retrieve)),
        (checks.check_retrieve_by_kind, _refresh_ages_too(retrieve_by_kind)),
    ],
)
def test_a_refresh_that_also_sets_created_at_is_named(check, wrong):
    with pytest.raises(CheckFailed) as failure:
        check(wrong)
    message = str(failure.value)
    assert "created_at is when the memory was made; a recall changes only last_accessed" in message
    assert "created_at after the call" in message and "got:      changed on [" in message


@pytest.mark.parametrize(
    ("got", "says"),
    [
        (["t7", "t4", "t1", "t8"], m4_retriever.TIES_BY_ID_DOWN),
        (["t1", "t4", "t7", "t2"], m4_retriever.TIES_BY_ID_UP),
        (["t7", "t1", "t4", "t5"], m4_retriever.TIES_REVERSED),
        (["t1", "t7", "t4", "t2"], m4_retriever.TIES_OTHER),
    ],
)
def test_ties_are_read_from_the_rows_so_a_renamed_store_is_named_alike(got, says):
    """The tie-break is recognised from the rows (equal memories), not from a list of ids:
    the same slips are named on a store whose ids are renamed, as the grader's are."""
    scenario = m4_retriever.tie_scenario()
    assert m4_retriever.tie_mistake(got, scenario, scenario.k) == says
    renamed = {f"t{n}": f"z{10 - n}" for n in range(1, 10)}  # the ids' order reversed
    other = type(scenario)(
        scenario.title,
        tuple((renamed[row[0]], *row[1:]) for row in scenario.rows),
        scenario.query,
        scenario.k,
        tuple(renamed[i] for i in scenario.ranking),
    )
    mapped = [renamed[i] for i in got]
    expected = {
        m4_retriever.TIES_BY_ID_DOWN: m4_retriever.TIES_BY_ID_UP,
        m4_retriever.TIES_BY_ID_UP: m4_retriever.TIES_BY_ID_DOWN,
    }.get(says, says)
    assert m4_retriever.tie_mistake(mapped, other, other.k) == expected
