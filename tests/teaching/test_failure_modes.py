"""teaching/checks/failure_modes.py: a blame gets a hint before the answer; "your turn" teaches."""

from __future__ import annotations

import dataclasses

import pytest

from config import Settings
from memory_store import Memory, MemoryStore
from teaching.checks import ladder
from teaching.checks.failure_modes import (
    FAILURES,
    SIGNALS,
    check_blame,
    check_constraint_recalled,
    check_crowded_out,
    require_blame,
)
from teaching.checks.ladder import PredictionMissing
from teaching.failure_demos import DEFAULT, assistant

NOW = 1_000_000.0
HOUR = 3600.0
QUERY = [1.0, 0.0, 0.0]


@pytest.fixture(autouse=True)
def fresh_ladder():
    """Every test starts on the hint ladder's first rung: no tries, nothing revealed."""
    ladder.reset()
    yield
    ladder.reset()


def sam_store(constraint=(0.6, 0.8, 0.0), trivial=(0.8, 0.0, 0.6), trivial_importance=1):
    """A constraint (importance 9, 20 days old) and one trivial note an hour old."""
    store = MemoryStore()
    store.add(Memory("m1", "never book Sam after 15:30", created_at=NOW - 480 * HOUR,
                     importance=9, embedding=list(constraint)))  # fmt: skip
    if trivial is not None:
        store.add(Memory("m2", "a trivial note", created_at=NOW - HOUR,
                         importance=trivial_importance, embedding=list(trivial)))  # fmt: skip
    return store


# --- the answer key ------------------------------------------------------------------------


def test_every_failure_blames_a_known_signal_with_a_hint_for_every_wrong_answer():
    assert sorted(FAILURES) == list(range(1, len(FAILURES) + 1))
    fields = {f.name for f in dataclasses.fields(Settings)}
    for failure in FAILURES.values():
        assert failure.notebook in ("06a", "06b")
        assert failure.blame in SIGNALS and failure.why and failure.fix
        wrong = set(SIGNALS) - {failure.blame}
        assert set(failure.hints) == wrong and set(failure.slips) == wrong, failure.number
        assert set(failure.broken) <= fields


@pytest.mark.parametrize("number", sorted(FAILURES))
def test_no_hint_names_the_signal_it_points_to(number):
    failure = FAILURES[number]
    for hint in (*failure.hints.values(), failure.step):
        assert failure.blame not in hint.lower(), (number, hint)


def test_each_assistant_is_the_default_with_only_its_broken_settings_changed():
    for number, failure in FAILURES.items():
        changed = {
            f.name
            for f in dataclasses.fields(Settings)
            if getattr(assistant(number), f.name) != getattr(DEFAULT, f.name)
        }
        assert changed == set(failure.broken), number
    with pytest.raises(ValueError, match="failures 1-6, got 7"):
        assistant(7)


# --- check_blame: right, hinted, answered ---------------------------------------------------


def test_a_right_blame_on_the_first_try_says_why_and_the_fix(capsys):
    assert check_blame(2, "Recency ") is True
    out = capsys.readouterr().out
    assert "right, recency, on the first try" in out and "fix: decay" in out


def test_a_first_wrong_blame_gets_a_hint_that_points_at_the_table_not_the_answer(capsys):
    assert check_blame(3, "recency") is False
    out = capsys.readouterr().out
    assert "not recency" in out and "hint: Recency does favour" in out
    assert "answer:" not in out and "importance" not in out.split("hint:")[1].split("\n")[0]
    assert "check_blame(3, blame, reveal=True)" in out


def test_the_same_wrong_blame_again_gets_the_hint_again(capsys):
    check_blame(3, "recency")
    capsys.readouterr()
    assert check_blame(3, "recency") is False
    out = capsys.readouterr().out
    assert "hint:" in out and "answer:" not in out


def test_a_second_different_wrong_blame_gets_the_next_step_not_the_answer(capsys):
    check_blame(3, "recency")
    first = capsys.readouterr().out
    assert check_blame(3, "relevance") is False
    out = capsys.readouterr().out
    assert "not relevance" in out and "next step: Each score is the sum of two" in out
    assert "next step" not in first
    assert "answer:" not in out and "importance" not in out.replace("reveal=True", "")


def test_the_answer_after_wrong_tries_says_why_each_tempted(capsys):
    check_blame(3, "recency")
    check_blame(3, "relevance")
    capsys.readouterr()
    assert check_blame(3, None, reveal=True) is False
    out = capsys.readouterr().out
    assert "answer: importance." in out
    assert "why not recency:" in out and "why not relevance:" in out and "fix:" in out


def test_a_right_blame_after_a_hint_says_so(capsys):
    check_blame(1, "none")
    assert check_blame(1, "relevance") is True
    assert "right, relevance, after one hint" in capsys.readouterr().out


def test_the_answer_on_request(capsys):
    assert check_blame(5, None, reveal=True) is False
    out = capsys.readouterr().out
    assert "the answer, as asked" in out and "answer: recency." in out


@pytest.mark.parametrize("blame", ["decay", 3])
def test_an_unknown_blame_asks_for_one_of_the_signals(capsys, blame):
    assert check_blame(1, blame) is False
    out = capsys.readouterr().out
    assert "'relevance', 'recency', 'importance', 'none'" in out
    assert "answer:" not in out


@pytest.mark.parametrize("number", sorted(FAILURES))
def test_an_empty_blame_stops_the_notebook_until_a_prediction_is_made(capsys, number):
    with pytest.raises(PredictionMissing, match="make your prediction first: set blame = one"):
        check_blame(number, None)
    assert capsys.readouterr().out == ""
    with pytest.raises(PredictionMissing, match=rf"run check_blame\({number}, blame\)"):
        require_blame(number)
    check_blame(number, "none" if FAILURES[number].blame != "none" else "recency")
    require_blame(number)  # a wrong prediction is a prediction: the fix may be shown


def test_an_unknown_failure_number_is_a_value_error():
    with pytest.raises(ValueError, match="failures 1-6, got 10"):
        check_blame(10, "recency")


# --- your turn: crowded out at the default weights ------------------------------------------


def test_an_on_topic_trivial_note_crowds_out_the_constraint_at_the_default_weights(capsys):
    assert check_crowded_out(sam_store(), QUERY, NOW, "m1") is True
    assert "reproduced: at weights (1.0, 1.0, 1.0)" in capsys.readouterr().out


def test_an_off_topic_note_that_wins_on_freshness_is_not_the_failure(capsys):
    store = sam_store(
        constraint=(0.2, 0.98, 0.0), trivial=(0.05, 0.0, 0.99875), trivial_importance=3
    )
    assert check_crowded_out(store, QUERY, NOW, "m1") is False
    assert "is not about what the question asks" in capsys.readouterr().out


def test_a_note_that_only_shares_a_name_with_the_question_is_not_on_topic(capsys):
    # "Sam said hi" beside "when can I book the planning meeting with Sam?": about 0.8 of
    # the constraint's relevance, winning on freshness
    store = sam_store(
        constraint=(0.56, 0.83, 0.0), trivial=(0.45, 0.0, 0.893), trivial_importance=2
    )
    assert check_crowded_out(store, QUERY, NOW, "m1") is False
    assert "sharing a name or a word with the question is not being about it" in (
        capsys.readouterr().out
    )


def test_a_copy_of_the_constraint_rated_low_is_not_trivia(capsys):
    store = sam_store(trivial=(0.6, 0.8, 0.0))
    assert check_crowded_out(store, QUERY, NOW, "m1") is False
    assert "says what the constraint says" in capsys.readouterr().out


def test_a_right_blame_after_the_answer_was_shown_is_not_a_first_try(capsys):
    check_blame(1, None, reveal=True)
    assert check_blame(1, "Relevance ") is True
    out = capsys.readouterr().out
    assert "as the answer said" in out and "first try" not in out


def test_a_store_without_trivia_is_not_a_reproduction(capsys):
    assert check_crowded_out(sam_store(trivial_importance=6), QUERY, NOW, "m1") is False
    assert "add a trivial memory" in capsys.readouterr().out


def test_a_trivial_note_too_weak_to_win_says_how_far_short_it_is(capsys):
    store = sam_store(trivial=(0.3, 0.95, 0.0))
    assert check_crowded_out(store, QUERY, NOW, "m1") is False
    out = capsys.readouterr().out
    assert "short of the constraint's" in out and "needs more relevance" in out


def test_a_constraint_that_is_not_rated_as_one_is_refused(capsys):
    store = sam_store()
    store.get("m1").importance = 4
    assert check_crowded_out(store, QUERY, NOW, "m1") is False
    assert "a constraint is rated 7 or more" in capsys.readouterr().out


# --- your turn: saved by new weights, with relevance still counting -------------------------


@pytest.mark.parametrize("weights", [(1, 1, 2), (1, 0.5, 1), (2.0, 1.0, 3.0)])
def test_weights_that_weigh_importance_up_or_recency_down_save_it(capsys, weights):
    assert check_constraint_recalled(sam_store(), QUERY, NOW, "m1", weights) is True
    assert "fixed" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("weights", "says"),
    [
        (None, "set fix_weights"),
        ((1, 1, 1), "are the weights your store fails at"),
        ((0, 0, 1), "keep relevance on"),
        ((1, 1, 0), "still has weight 0"),
        ((1, 1, 1.05), "weigh the signal that protects the constraint more"),
        ((0.1, 0.1, 1), "would answer every question with its most important note"),
        ((1, -1, 1), "three weights, each a number >= 0"),
        ("1, 1, 2", "three weights, each a number >= 0"),
    ],
)
def test_a_fix_that_is_no_fix_says_why(capsys, weights, says):
    assert check_constraint_recalled(sam_store(), QUERY, NOW, "m1", weights) is False
    assert says in capsys.readouterr().out


def test_removing_the_trivial_note_is_not_a_fix(capsys):
    store = sam_store()
    store.remove("m2")
    assert check_constraint_recalled(store, QUERY, NOW, "m1", (1, 1, 2)) is False
    assert "change only the weights" in capsys.readouterr().out


def test_the_fix_check_leaves_the_learners_store_as_it_was():
    store = sam_store()
    before = [m.to_dict() for m in store]
    check_constraint_recalled(store, QUERY, NOW, "m1", (1, 1, 2))
    assert [m.to_dict() for m in store] == before


# --- your turn, as notebook 06a poses it, with the default embedding -----------------------

TURN_CONSTRAINT = "Sam leaves at 16:00 for the school run: never book anything with Sam after 15:30"
TURN_QUESTION = "when can I book the planning meeting with Sam?"


def turn_store(trivial: str):
    from embedding_helpers import Embedder

    embedder = Embedder()
    store = MemoryStore()
    embedder.remember(store, TURN_CONSTRAINT, importance=9, now=NOW - 480 * HOUR)  # m1
    embedder.remember(store, trivial, importance=1, now=NOW - 2 * HOUR)
    return store, embedder.query(store, TURN_QUESTION)


@pytest.mark.parametrize(
    ("trivial", "on_topic"),
    [
        ("the planning meeting with Sam is still to be booked", True),
        ("asked Sam about a planning meeting", True),
        ("Sam said hi", False),  # the name alone
        ("Sam's favourite book is Dune", False),  # the name and "book"
        ("the printer is out of toner", False),
        (TURN_CONSTRAINT, False),  # the constraint again, rated 1
    ],
)
def test_only_a_note_about_the_question_reproduces_the_notebooks_turn(capsys, trivial, on_topic):
    store, query = turn_store(trivial)
    assert check_crowded_out(store, query, NOW, "m1") is on_topic, capsys.readouterr().out
