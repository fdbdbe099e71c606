"""teaching/checks/answers.py: answers within tolerance, slips named, the stream, the budget."""

from __future__ import annotations

import math

import pytest

from teaching.checks import answers, ladder
from teaching.checks.answers import ANSWERS, check_answer, check_block_fits, check_recall_changes


@pytest.fixture(autouse=True)
def fresh_ladder():
    """Every test starts on the hint ladder's first rung: no tries, nothing revealed."""
    ladder.reset()
    yield
    ladder.reset()


@pytest.mark.parametrize("key", sorted(ANSWERS))
def test_the_keys_own_number_passes_within_the_tolerance(capsys, key):
    spec = ANSWERS[key]
    assert check_answer(key, spec.expected * (1 + spec.rel_tol / 2)) is True
    assert f"{key}: right" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("key", "answer", "slip"),
    [
        ("01.2", 0.995, "the right recency of one hour"),
        ("01.2", 0.995 * 3600, "multiplies"),
        ("01.3", 0.5 ** (1 / 24), "one-day half-life"),
        ("01.3", 0.999358, "the 45-day half-life the table cell printed"),
        ("01.3", 1 / 168, "that is an exponent, not a rate"),
        ("01.3", 1 - 1 / 168, "as if decay were a straight line"),
        ("04.3", 0.98**30, "that counts days"),
        ("04.3", 0.995**720, "the rate 0.995"),
        ("03.3", 3, "the question's own weight"),
        ("00.3", 128_000 / 12, "counts words, not tokens"),
    ],
)
def test_a_known_slip_is_named_with_what_came_back_but_not_the_answer(capsys, key, answer, slip):
    assert check_answer(key, answer) is False
    out = capsys.readouterr().out
    assert "got:" in out and "what is off: " in out and slip in out
    assert "expected" not in out and f"{ANSWERS[key].expected:.4g}" not in out


def test_no_answer_yet_and_a_non_number_are_told_apart(capsys):
    assert check_answer("01.2", None) is False
    assert "no answer yet" in capsys.readouterr().out
    assert check_answer("01.2", "tiny") is False
    assert "expected: a number" in capsys.readouterr().out


def test_an_unknown_question_is_a_value_error():
    with pytest.raises(ValueError, match="no answer cell '09.9'"):
        check_answer("09.9", 1.0)


def test_every_answer_has_a_tolerance_and_slips_that_are_wrong():
    for key, spec in ANSWERS.items():
        assert 0 < spec.rel_tol < 0.05, key
        for label, value in spec.slips:
            assert not math.isclose(value, spec.expected, rel_tol=spec.rel_tol), (key, label)


def test_the_smallest_importance_weight_is_recomputed_from_notebook_03s_stream():
    from embedding_helpers import Embedder
    from memory_store import MemoryStore
    from scoring import importance_score, recency_score, relevance_score

    now, hour, day = 1_000_000.0, 3600.0, 86400.0
    embedder, store = Embedder(), MemoryStore()
    for memory_id, text, age, importance in [
        ("groq", "decided to default to the Groq API for chat", 30 * day, 8),
        ("cheap", "asked which API has the cheapest tokens", 2 * hour, 3),
        ("vault", "the Groq API key lives in the team vault", 10 * day, 6),
        ("teeth", "brushed teeth before the standup", 1 * hour, 1),
        ("acme", "signed the contract with Acme on Friday", 3 * day, 10),
        ("openai", "tried the OpenAI API as the default model last year", 300 * day, 4),
    ]:
        store.add(embedder.memory(memory_id, text, importance=importance, now=now - age))
    q = embedder.query(store, "which API should I default to?")
    signals = {
        m.id: (relevance_score(q, m.embedding), recency_score(now, m.last_accessed),
               importance_score(m.importance))
        for m in store
    }  # fmt: skip
    acme = signals.pop("acme")
    smallest = max((o[0] + o[1] - acme[0] - acme[1]) / (acme[2] - o[2]) for o in signals.values())
    assert smallest == pytest.approx(ANSWERS["03.3"].expected, rel=1e-3)


def test_a_recall_changes_only_last_accessed(capsys):
    assert answers.recall_changes() == {"last_accessed"}
    assert check_recall_changes({"last_accessed"}) is True
    assert "only last_accessed" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("predicted", "says"),
    [
        ({"last_accessed", "importance"}, "rated once, at write time"),
        ({"created_at"}, "written, once"),
        ({"recency"}, "recency is not stored: it is computed"),
        ({"score", "last_accessed"}, "the score is not stored"),
        ("last_accessed", "a single string is not a set"),
        (None, "no prediction yet"),
    ],
)
def test_a_wrong_prediction_of_what_a_recall_changes_is_explained(capsys, predicted, says):
    assert check_recall_changes(predicted) is False
    assert says in capsys.readouterr().out


def test_a_retriever_that_changes_more_than_last_accessed_is_reported(capsys, monkeypatch):
    monkeypatch.setattr(answers, "recall_changes", lambda: {"last_accessed", "importance"})
    assert check_recall_changes({"last_accessed"}) is False
    out = capsys.readouterr().out
    assert "your retrieve changed ['importance', 'last_accessed']" in out
    assert "expected" not in out


def test_a_block_within_the_budget_fits_and_one_over_it_says_lower_k(capsys):
    assert check_block_fits("x" * 40, budget_tokens=10) is True
    assert check_block_fits("x" * 44, budget_tokens=10, k=3) is False
    out = capsys.readouterr().out
    assert "got:      11 tokens for k = 3" in out and "lower k" in out


def test_the_recency_weight_that_breaks_the_loop_is_recomputed_from_notebook_06b():
    """06b, failure 5: day 4's ranking after three mornings of recalling the standup's note."""
    from datetime import UTC, datetime, timedelta

    from embedding_helpers import Embedder
    from memory_store import MemoryStore
    from retriever import rank_memories, retrieve

    start, day = datetime(2026, 3, 1, 9, tzinfo=UTC), timedelta(days=1)
    embedder, store = Embedder(), MemoryStore()
    for text in (
        "booked room Ada for the standup",
        "the design review is every Thursday in room Turing",
    ):
        embedder.remember(store, text, importance=5, now=start - 10 * day)  # fmt: skip
    for n in (1, 2, 3):
        retrieve(
            store, embedder.query(store, "which room is the standup in?"), start + n * day, k=1
        )
    query = embedder.query(store, "which room is the design review in?")
    rows = {row.memory.id: row for row in rank_memories(store, query, start + 4 * day)}
    standup, review = rows["m1"], rows["m2"]
    largest = (review.relevance - standup.relevance) / (standup.recency - review.recency)
    assert largest == pytest.approx(ANSWERS["06b.2"].expected, rel=1e-3)
