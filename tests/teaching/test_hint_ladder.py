"""The hint ladder: no practice check shows its answer before reveal=True.

For every practice check: a first wrong try says what is off, a second, different one gives
the next step (a longer, more specific message), the same wrong try again climbs nothing,
and only reveal=True shows the answer. "Shows the answer" is searched for in every way a
number is plausibly written (8000, 8,000, 8e+03, 0.767, 0.7665, ...). The answers come from
the checks' own key, so this file names none.
"""

from __future__ import annotations

import math
import re

import pytest

from teaching.checks import CheckFailed, check_kind_labels, ladder
from teaching.checks.answers import (
    ANSWERS,
    BUDGET_CASES,
    FIELD_QUESTIONS,
    RECALL_CHANGES,
    check_answer,
    check_block_fits,
    check_field,
    check_fit_budget,
    check_recall_changes,
)
from teaching.checks.failure_modes import FAILURES, SIGNALS, check_blame
from teaching.checks.m5_kinds import TO_LABEL


@pytest.fixture(autouse=True)
def fresh_ladder():
    """Every test starts on the hint ladder's first rung: no tries, nothing revealed."""
    ladder.reset()
    yield
    ladder.reset()


def written(value: float) -> set[str]:
    """The ways an output could show `value`: 3 to 6 significant digits, fixed or not."""
    forms = set()
    for digits in range(3, 7):
        forms.add(f"{value:.{digits}g}")
        decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
        forms.add(f"{value:.{decimals}f}")
        forms.add(f"{value:,.{decimals}f}")
    return {form.rstrip("0").rstrip(".") if "." in form and "e" not in form else form
            for form in forms}  # fmt: skip


def shows(out: str, value: float) -> bool:
    numbers = re.findall(r"-?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?", out)
    return any(number in written(value) for number in numbers)


def wrong_numbers(key: str) -> list[float]:
    """Two different wrong answers: a named slip where there is one, then far off."""
    spec = ANSWERS[key]
    slip = spec.slips[0][1] if spec.slips else spec.expected * 3
    return [slip, spec.expected * 1.5]


# --- number questions ------------------------------------------------------------------------


@pytest.mark.parametrize("key", sorted(ANSWERS))
def test_a_number_question_climbs_the_ladder_and_shows_its_number_only_on_reveal(capsys, key):
    expected = ANSWERS[key].expected
    first, second = wrong_numbers(key)
    check_answer(key, None)
    check_answer(key, "a lot")
    check_answer(key, 0)
    capsys.readouterr()
    ladder.TRIES.clear()
    outs = []
    for answer in (first, first, second):
        assert check_answer(key, answer) is False
        outs.append(capsys.readouterr().out)
    for out in outs:
        assert not shows(out, expected), (key, out)
        assert "what is off:" in out and f'check_answer("{key}", answer, reveal=True)' in out
    assert outs[0] == outs[1], "the same wrong try again climbs nothing"
    assert "next step:" not in outs[0] and "next step:" in outs[2]
    assert len(outs[2]) > len(outs[0])
    assert check_answer(key, second, reveal=True) is False
    revealed = capsys.readouterr().out
    assert "the answer, as asked" in revealed and shows(revealed, expected)


@pytest.mark.parametrize(
    ("key", "factor", "says"),
    [
        ("00.3", 3600, "off by a factor of 3,600: seconds and hours"),
        ("03.3", 1 / 60, "off by a factor of 60"),
        ("06b.2", 24, "off by a factor of 24: hours and days"),
    ],
)
def test_a_unit_slip_is_named_by_its_factor(capsys, key, factor, says):
    check_answer(key, ANSWERS[key].expected * factor)
    assert says in capsys.readouterr().out


@pytest.mark.parametrize(
    ("key", "answer", "says"),
    [
        ("01.3", 1.2, "out of range: a decay rate"),
        ("01.3", 0.5, "too small"),
        ("04.1", 0.95, "too big"),
        ("04.3", 0.5, "too big, by more than a factor of 10"),
        ("00.3", 0, "out of range: a number of notes"),
    ],
)
def test_an_unnamed_wrong_number_gets_its_range_or_direction(capsys, key, answer, says):
    check_answer(key, answer)
    assert says in capsys.readouterr().out


def test_a_unit_slip_in_the_exponent_is_named():
    assert "in the exponent: seconds and hours" in ladder.unit_slip(0.995**3600, 0.995)
    assert ladder.unit_slip(0.5, 0.6) is None


def test_no_slip_label_or_step_shows_its_questions_number():
    for key, spec in ANSWERS.items():
        for text in (spec.step, *(label for label, _ in spec.slips)):
            assert not shows(text, spec.expected), (key, text)


# --- the field quiz and the recall quiz ------------------------------------------------------


def test_the_field_quiz_names_its_field_only_on_reveal(capsys):
    (key, (_, field_name, _, _)), *_ = FIELD_QUESTIONS.items()
    outs = []
    for answer in ("created_at", "created_at", "text"):
        assert check_field(key, answer) is False
        outs.append(capsys.readouterr().out)
    assert all(field_name not in out for out in outs)
    assert outs[0] == outs[1] and "next step:" not in outs[0] and "next step:" in outs[2]
    assert "reveal=True" in outs[0]
    check_field(key, None, reveal=True)
    assert f"the answer, as asked: {field_name!r}" in capsys.readouterr().out
    assert check_field(key, field_name) is True
    assert "(as the answer said)" in capsys.readouterr().out


def test_the_recall_quiz_names_its_set_only_on_reveal(capsys):
    outs = []
    for predicted in ({"created_at"}, {"created_at"}, {"recency", "importance"}):
        assert check_recall_changes(predicted) is False
        outs.append(capsys.readouterr().out)
    assert all(name not in out for out in outs for name in RECALL_CHANGES)
    assert outs[0] == outs[1] and "next step:" not in outs[0] and "next step:" in outs[2]
    check_recall_changes(None, reveal=True)
    assert str(sorted(RECALL_CHANGES)) in capsys.readouterr().out


# --- the kind labels ---------------------------------------------------------------------------


def label_failure(labels, reveal=False) -> str:
    with pytest.raises(CheckFailed) as failure:
        check_kind_labels(labels, reveal=reveal)
    return str(failure.value)


def pairs_shown(message: str) -> list[str]:
    """Lines that put a memory beside its right kind: the key, or part of it."""
    return [line for line in message.splitlines() for memory_id, _, kind in TO_LABEL
            if re.search(rf"\b{memory_id}\b", line) and kind in line]  # fmt: skip


@pytest.mark.parametrize("kind", ["episodic", "semantic", "procedural"])
def test_labels_all_of_one_kind_get_counts_then_ids_never_the_key(kind):
    every = {memory_id: kind for memory_id, *_ in TO_LABEL}
    other = {**every, "k1": "semantic" if kind != "semantic" else "episodic"}
    first, again, second = label_failure(every), label_failure(every), label_failure(other)
    for message in (first, again, second):
        assert not pairs_shown(message), message
        assert "check_kind_labels(labels, reveal=True)" in message
    assert first == again and "next step" not in first and "next step: look again at" in second
    answer = label_failure(every, reveal=True)
    wrong = [memory_id for memory_id, _, right in TO_LABEL if right != kind]
    assert answer.startswith("the answer, as asked") and len(pairs_shown(answer)) == len(wrong)


# --- blame predictions -------------------------------------------------------------------------


@pytest.mark.parametrize("number", sorted(FAILURES))
def test_a_blame_climbs_the_ladder_and_is_named_only_on_reveal(capsys, number):
    failure = FAILURES[number]
    first, second = [s for s in SIGNALS if s != failure.blame][:2]
    outs = []
    for blame in (first, first, second):
        assert check_blame(number, blame) is False
        outs.append(capsys.readouterr().out)
    for out in outs:
        said = out.replace(f"check_blame({number}, blame, reveal=True)", "")
        assert not re.search(rf"\b{failure.blame}\b", said.split(":", 1)[1]), out
        assert "answer:" not in out
    assert outs[0] == outs[1] and "next step:" not in outs[0] and "next step:" in outs[2]
    check_blame(number, second, reveal=True)
    assert f"answer: {failure.blame}." in capsys.readouterr().out


# --- the budget step and the block ---------------------------------------------------------


def test_the_budget_step_shows_which_memories_fit_only_on_reveal(capsys):
    def first_only(ranked, budget_tokens, now):
        return ranked[:1]

    def first_two(ranked, budget_tokens, now):
        return ranked[:2]

    expected = str(list(BUDGET_CASES[0][3]))
    outs = []
    for fit in (first_only, first_only, first_two):
        assert check_fit_budget(fit) is False
        outs.append(capsys.readouterr().out)
    # the call's first line shows the input; "everything fits" is the input itself
    assert all(expected not in out.split("\n", 1)[1] and "expected" not in out for out in outs)
    assert outs[0] == outs[1] and "next step:" not in outs[0] and "next step:" in outs[2]
    check_fit_budget(first_two, reveal=True)
    assert f"the answer, as asked: {expected}" in capsys.readouterr().out


def test_a_block_over_budget_twice_gets_the_next_step(capsys):
    outs = []
    for block in ("x" * 80, "x" * 80, "x" * 120):
        assert check_block_fits(block, budget_tokens=10, k=4) is False
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1] and "next step" not in outs[0] and "next step" in outs[2]
