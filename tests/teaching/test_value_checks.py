"""The optional milestones' checks (values, not floats): every named slip is caught and named.

Each slip is played from the table itself: a function that answers every case as the
slip does where the case lists it, and rightly elsewhere. The check must fail on it and
name that slip's message; the instructor's reference passes every case; a stub is
reported as not implemented.
"""

from __future__ import annotations

import pytest

from teaching import checks
from teaching.checks import core
from teaching.checks import m6_importance_parsing as m6
from teaching.checks import m7_forgetting as m7

TABLES = {
    "parse_importance": (m6.CASES, m6.MISTAKES, checks.check_parse_importance),
    "should_forget": (m7.CASES, m7.MISTAKES, checks.check_should_forget),
}
SLIPS = [(name, key) for name, (_, mistakes, _) in TABLES.items() for key in mistakes.messages]


def slipped(cases, key):
    """A function that commits slip `key` on every case that lists it."""
    answers = {shown(case.args[0], case.kwargs): case.slips.get(key, case.expected)
               for case in cases}  # fmt: skip
    assert len(answers) == len(cases), "two cases alike"

    def function(*args, **kwargs):
        return answers[shown(args[0], kwargs)]

    return function


def shown(first, kwargs) -> str:
    """A case's input as text: a reply, or a memory's every field."""
    return repr(first.to_dict() if hasattr(first, "to_dict") else first) + repr(kwargs)


@pytest.mark.parametrize(("name", "key"), SLIPS)
def test_every_slip_is_in_the_table_caught_and_named(name, key):
    cases, mistakes, check = TABLES[name]
    assert any(key in case.slips for case in cases), f"no public case catches {key}"
    with pytest.raises(core.CheckFailed) as failed:
        check(slipped(cases, key))
    assert mistakes.messages[key] in str(failed.value)
    assert "expected:" in str(failed.value) and "optional Milestone" in str(failed.value)


@pytest.mark.parametrize("name", sorted(TABLES))
def test_the_reference_passes_and_a_stub_is_not_implemented_yet(name, capsys):
    cases, _, check = TABLES[name]
    check()  # the master's own function
    assert f"{name}: {len(cases)} checks passed" in capsys.readouterr().out

    def stub(*args, **kwargs):
        raise NotImplementedError()

    with pytest.raises(core.NotImplementedYet, match="optional Milestone"):
        check(stub)


def test_a_wrong_type_is_said_before_any_slip():
    with pytest.raises(
        core.CheckFailed, match=r"returned a list \(\[7\]\); it should return a whole"
    ):
        checks.check_parse_importance(lambda reply: [7])
    with pytest.raises(core.CheckFailed, match=r"returned an int \(1\); it should return True"):
        checks.check_should_forget(lambda memory, now, *a, **k: 1)


def test_a_function_that_changes_its_memory_cannot_change_the_next_case():
    def meddler(memory, now, older_than_days=180.0, importance_below=3.0):
        memory.kind = "semantic"
        return False

    with pytest.raises(core.CheckFailed):
        checks.check_should_forget(meddler)
    assert all(case.args[0].kind != "semantic" or "fact" in case.call for case in m7.CASES)


@pytest.mark.parametrize(
    ("expected", "got", "same"),
    [
        (7, 7, True),
        (7, 7.0, False),  # a float is no whole number
        (True, 1, False),
        (None, None, True),
        (0.3, 0.1 + 0.2, True),  # floats to the tolerance
        (["a", "b"], ("a", "b"), True),  # a tuple stands for a list
        (["a", "b"], ["b", "a"], False),
        ({"x": 1.0}, {"x": 1.0000000001}, True),
        ({"x": 1}, {"y": 1}, False),
        (float("nan"), float("nan"), False),
    ],
)
def test_same_compares_plain_values_type_for_type(expected, got, same):
    assert core.same(expected, got) is same


def forget_from_the_limit_on(memory, now, older_than_days=180.0, importance_below=3.0):
    """should_forget with `>=` on the age (one slip, no other), as a learner might write it."""
    if memory.kind != "episodic" or memory.superseded_by:
        return False
    if memory.last_accessed > memory.created_at or memory.importance >= importance_below:
        return False
    return now - memory.created_at >= older_than_days * 86_400  # the slip: >= on the age


def test_a_boundary_slip_on_the_age_is_named_as_such_not_as_or_for_and():
    with pytest.raises(core.CheckFailed) as failed:
        checks.check_should_forget(forget_from_the_limit_on)
    assert m7.MISTAKES.messages["age_inclusive"] in str(failed.value)
    assert m7.MISTAKES.messages["any_rule"] not in str(failed.value)


def test_a_slip_the_other_answers_contradict_is_never_named():
    import dataclasses

    exact = next(c for c in m7.CASES if "exactly 180" in c.call)
    others = {k: v for k, v in exact.slips.items() if k != "age_inclusive"}
    without = dataclasses.replace(exact, slips=others)  # the one slip that fits, taken away
    answers = [(c, c.expected) for c in m7.CASES if c is not exact] + [(without, True)]
    said = core.diagnose_value(answers, without, True, m7.MISTAKES)
    assert said.startswith("none of the usual mistakes")  # "or" and seconds are contradicted
