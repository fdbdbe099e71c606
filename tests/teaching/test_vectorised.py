"""Notebook 09's exercise: retrieval_scores checked against the learner's own loop.

Each slip gets its own diagnosis (which signal is off), a first wrong try shows no
expected value, a further try gives the next step, and only reveal=True shows the
expected scores. The reference passes.
"""

from __future__ import annotations

import numpy as np
import pytest

import scoring
from teaching.checks import vectorised
from teaching.checks.core import CheckFailed, NotImplementedYet


@pytest.fixture(autouse=True)
def fresh_ladder():
    vectorised.TRIES.clear()
    yield
    vectorised.TRIES.clear()


def slip(recency=None, importance=None, weights_order=(0, 1, 2), shape=False):
    """The reference's arithmetic with one thing changed, as a learner might."""

    def scores(rel, now, last, imp, weights=(1.0, 1.0, 1.0), decay_rate=0.995):
        rel, last, imp = (np.asarray(x, dtype=float) for x in (rel, last, imp))
        gap = now - last
        rec = recency(gap, decay_rate) if recency else decay_rate ** (np.maximum(gap, 0) / 3600)
        share = importance(imp) if importance else imp / 10
        w = [weights[i] for i in weights_order]
        total = w[0] * rel + w[1] * rec + w[2] * share
        return float(total.sum()) if shape else total

    return scores


SLIPS = {  # slip -> what the first message must name
    "seconds": (slip(recency=lambda gap, r: r ** np.maximum(gap, 0)), "the recency part"),
    "future not clamped": (slip(recency=lambda gap, r: r ** (gap / 3600)), "after `now`"),
    "raw rating": (slip(importance=lambda imp: imp), "the importance part"),
    "weights swapped": (slip(weights_order=(0, 2, 1)), "which weight goes with which signal"),
    "one number": (slip(shape=True), "the shape of the result"),
}


def test_the_reference_passes_against_its_own_loop(capsys):
    assert vectorised.check_retrieval_scores(scoring.retrieval_scores) is None  # prints, no True
    assert "retrieval_scores: 6 checks passed" in capsys.readouterr().out


@pytest.mark.parametrize("name", sorted(SLIPS))
def test_each_slip_is_named_first_without_the_expected_values(name):
    function, named = SLIPS[name]
    with pytest.raises(CheckFailed) as first:
        vectorised.check_retrieval_scores(function)
    assert named in str(first.value)
    assert "expected (" not in str(first.value) and "next step" not in str(first.value)


def test_a_further_try_gives_the_next_step_and_reveal_the_expected_scores():
    function, _ = SLIPS["seconds"]
    with pytest.raises(CheckFailed):
        vectorised.check_retrieval_scores(function)
    with pytest.raises(CheckFailed) as second:
        vectorised.check_retrieval_scores(function)
    assert "next step" in str(second.value) and "0.887" in str(second.value)
    assert "expected" not in str(second.value).replace("reveal=True shows the expected", "")
    with pytest.raises(CheckFailed) as revealed:
        vectorised.check_retrieval_scores(function, reveal=True)
    assert "expected (your loop): [2.495, 2.0" in str(revealed.value)


def test_the_stub_says_where_to_write_it():
    def stub(*args, **kwargs):
        raise NotImplementedError()

    with pytest.raises(NotImplementedYet, match="open code/scoring.py, notebook 09"):
        vectorised.check_retrieval_scores(stub)


def test_compare_with_loop_reports_float64_agreement(capsys):
    from memory_store import Memory

    rng = np.random.default_rng(0)
    memories = [
        Memory(f"m{i}", "x", created_at=1e6 - 3600.0 * i, importance=1 + i % 10,
               embedding=rng.standard_normal(8))
        for i in range(50)
    ]  # fmt: skip
    gap, scores = vectorised.compare_with_loop(memories, rng.standard_normal(8), 1e6)
    assert gap < 1e-12 and scores.shape == (50,)
    assert "largest difference between your loop and your arrays" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (([0.5, 0.5], 0.0, [0.0], [5, 5]), "one value per memory"),
        (([0.5], 0.0, [0.0], [11]), "importance must be in"),
        (([[0.5]], 0.0, [0.0], [5]), "must be 1-D"),
        (([float("nan")], 0.0, [0.0], [5]), "finite"),
    ],
)
def test_retrieval_scores_refuses_bad_arrays_by_name(arguments, message):
    with pytest.raises(ValueError, match=message):
        scoring.retrieval_scores(*arguments)


def test_a_crash_in_the_learners_arrays_is_explained_not_dumped():
    def with_pythons_max(relevance, now, last_accessed, importance, weights, decay_rate):
        hours = max(0.0, (now - last_accessed) / 3600.0)  # the pitfall the notebook names
        return relevance + decay_rate**hours + importance / 10

    with pytest.raises(CheckFailed) as caught:
        vectorised.check_retrieval_scores(with_pythons_max)
    said = str(caught.value)
    assert "your function raised ValueError" in said
    assert "Python's own max()" in said and "np.maximum" not in said  # the idea, not the call
    assert "code/scoring.py" in said
