"""teaching/checks/failure_modes.py: blame predictions and the "your turn" checks teach."""

from __future__ import annotations

import pytest

from memory_store import Memory, MemoryStore
from teaching.checks.failure_modes import (
    FAILURES,
    SIGNALS,
    check_blame,
    check_constraint_recalled,
    check_crowded_out,
)

NOW = 1_000_000.0
HOUR = 3600.0
QUERY = [1.0, 0.0]


def lunch_store(trivial_importance=1, trivial_hours=2, trivial_embedding=(0.6, 0.8)):
    """A constraint (importance 9, a month old, relevance 1.0) and one fresh note (0.6)."""
    store = MemoryStore()
    store.add(Memory("m1", "allergic to peanuts", created_at=NOW - 720 * HOUR,
                     importance=9, embedding=[1.0, 0.0]))  # fmt: skip
    store.add(Memory("m2", "lunch was satay", created_at=NOW - trivial_hours * HOUR,
                     importance=trivial_importance, embedding=list(trivial_embedding)))  # fmt: skip
    return store


def test_every_failure_blames_a_known_signal_and_explains_every_wrong_answer():
    assert sorted(FAILURES) == list(range(1, len(FAILURES) + 1))
    for failure in FAILURES.values():
        assert failure.blame in SIGNALS and failure.why and failure.fix
        assert set(failure.slips) <= set(SIGNALS) - {failure.blame}


def test_a_right_blame_says_why_and_the_fix(capsys):
    assert check_blame(3, "Recency ") is True
    out = capsys.readouterr().out
    assert "right, recency" in out and "fix: decay" in out


def test_a_wrong_blame_prints_expected_got_and_why(capsys):
    assert check_blame(7, "recency") is False
    out = capsys.readouterr().out
    assert "expected: importance" in out and "got:      recency" in out
    assert "why:" in out and "likely mistake: recency does favour" in out


@pytest.mark.parametrize("blame", [None, "decay", 3])
def test_a_missing_or_unknown_blame_asks_for_one_of_the_signals(capsys, blame):
    assert check_blame(1, blame) is False
    out = capsys.readouterr().out
    assert "'relevance', 'recency', 'importance', 'none'" in out


def test_an_unknown_failure_number_is_a_value_error():
    with pytest.raises(ValueError, match="failures 1-9, got 10"):
        check_blame(10, "recency")


def test_a_fresh_trivial_note_crowds_out_the_constraint_at_importance_off(capsys):
    assert check_crowded_out(lunch_store(), QUERY, NOW, "m1") is True
    assert "reproduced" in capsys.readouterr().out


def test_with_importance_weighted_nothing_is_crowded_out(capsys):
    assert check_crowded_out(lunch_store(), QUERY, NOW, "m1", weights=(1, 1, 1)) is False
    assert "importance switched off" in capsys.readouterr().out


def test_a_store_without_trivia_is_not_a_reproduction(capsys):
    assert check_crowded_out(lunch_store(trivial_importance=6), QUERY, NOW, "m1") is False
    assert "add a trivial memory" in capsys.readouterr().out


def test_a_trivial_note_too_weak_to_win_is_explained(capsys):
    store = lunch_store(trivial_hours=2000, trivial_embedding=(0.0, 1.0))
    assert check_crowded_out(store, QUERY, NOW, "m1") is False
    assert "share the question's words" in capsys.readouterr().out


def test_a_constraint_that_is_not_rated_as_one_is_refused(capsys):
    store = lunch_store()
    store.get("m1").importance = 4
    assert check_crowded_out(store, QUERY, NOW, "m1") is False
    assert "a constraint is rated 7 or more" in capsys.readouterr().out


def test_weights_that_count_importance_enough_fix_it(capsys):
    assert check_constraint_recalled(lunch_store(), QUERY, NOW, "m1", (1, 1, 2)) is True
    assert "fixed" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("weights", "says"),
    [(None, "set fix_weights"), ((1, 1, 0), "still has weight 0"), ((1, 1, 0.1), "not enough")],
)
def test_a_fix_that_does_not_work_says_what_to_change(capsys, weights, says):
    assert check_constraint_recalled(lunch_store(), QUERY, NOW, "m1", weights) is False
    assert says in capsys.readouterr().out


def test_removing_the_trivial_note_is_not_a_fix(capsys):
    store = lunch_store()
    store.remove("m2")
    assert check_constraint_recalled(store, QUERY, NOW, "m1", (1, 1, 1)) is False
    assert "keep the store that fails" in capsys.readouterr().out
