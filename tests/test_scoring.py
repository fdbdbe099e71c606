"""scoring.py: each signal against hand-computed values, references and bad input."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from base.validation import check_weights
from conftest import HOUR, NOW
from scoring import importance_score, recency_score, relevance_score, retrieval_score

# --- recency ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hours", "decay_rate", "expected"),
    [
        (0, 0.995, 1.0),
        (1, 0.995, 0.995),
        (2, 0.995, 0.990025),
        (24, 0.995, 0.995**24),
        (0.5, 0.99, 0.99**0.5),  # fractional hours count
        (10, 1.0, 1.0),  # a decay rate of 1 never forgets
    ],
)
def test_recency_is_decay_rate_to_the_hours_since_access(hours, decay_rate, expected):
    assert recency_score(NOW, NOW - hours * HOUR, decay_rate=decay_rate) == pytest.approx(expected)


def test_recency_default_decay_rate_is_the_papers_0_995():
    assert recency_score(NOW, NOW - HOUR) == pytest.approx(0.995)


def test_recency_halves_after_one_half_life():
    decay_rate = 0.995
    half_life_hours = math.log(0.5) / math.log(decay_rate)  # about 138.3 hours
    assert recency_score(NOW, NOW - half_life_hours * HOUR, decay_rate) == pytest.approx(0.5)


def test_recency_in_the_future_counts_as_zero_hours_never_above_one():
    assert recency_score(NOW, NOW + 5 * HOUR) == 1.0


def test_recency_accepts_datetimes():
    now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    assert recency_score(now, now - timedelta(hours=2)) == pytest.approx(0.990025)


@given(
    st.floats(min_value=0, max_value=1e5),
    st.floats(min_value=0, max_value=1e5),
    st.floats(min_value=1e-6, max_value=1.0),
)
def test_recency_never_increases_with_age_and_stays_in_zero_one(h1, h2, decay_rate):
    young, old = sorted((h1, h2))
    r_young = recency_score(NOW, NOW - young * HOUR, decay_rate)
    r_old = recency_score(NOW, NOW - old * HOUR, decay_rate)
    assert 0.0 <= r_old <= r_young <= 1.0


@pytest.mark.parametrize("decay_rate", [0.0, -0.5, 1.5, float("nan"), float("inf")])
def test_recency_rejects_decay_rates_outside_zero_one(decay_rate):
    with pytest.raises(ValueError, match="decay_rate"):
        recency_score(NOW, NOW, decay_rate=decay_rate)


@pytest.mark.parametrize(
    ("now", "last_accessed", "error", "name"),
    [
        ("noon", NOW, TypeError, "now"),
        (NOW, None, TypeError, "last_accessed"),
        (NOW, float("nan"), ValueError, "last_accessed"),
        (True, NOW, TypeError, "now"),
    ],
)
def test_recency_rejects_bad_times_naming_the_argument(now, last_accessed, error, name):
    with pytest.raises(error, match=name):
        recency_score(now, last_accessed)


# --- importance ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rating", "expected"), [(1, 0.1), (5, 0.5), (8, 0.8), (10, 1.0), (7.5, 0.75)]
)
def test_importance_maps_one_to_ten_onto_a_tenth_to_one(rating, expected):
    assert importance_score(rating) == pytest.approx(expected)


@pytest.mark.parametrize("rating", [0, 0.5, 11, -3, float("nan")])
def test_importance_outside_one_to_ten_is_refused(rating):
    with pytest.raises(ValueError, match="importance"):
        importance_score(rating)


def test_importance_of_a_string_is_a_type_error():
    with pytest.raises(TypeError, match="importance"):
        importance_score("8")


# --- relevance -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ([1.0, 0.0, 0.0], [1.0, 0.0, 0.0], 1.0),
        ([1.0, 0.0], [0.0, 1.0], 0.0),
        ([1.0, 0.0], [-1.0, 0.0], -1.0),
        ([1.0, 0.0], [1.0, 1.0], 1 / math.sqrt(2)),
        ([3.0, 4.0], [6.0, 8.0], 1.0),  # length does not matter, direction does
    ],
)
def test_relevance_is_cosine_similarity(a, b, expected):
    assert relevance_score(a, b) == pytest.approx(expected)


# 0 or at least 1e-100 in size: smaller values square to subnormals, where neither this
# code nor numpy can keep the precision a comparison to 1e-9 needs.
components = st.one_of(
    st.just(0.0),
    st.floats(min_value=1e-100, max_value=1e3),
    st.floats(min_value=-1e3, max_value=-1e-100),
)
vectors = st.lists(components, min_size=1, max_size=16)


@given(st.data())
def test_relevance_matches_a_numpy_reference_and_is_symmetric(data):
    a = data.draw(vectors)
    b = data.draw(st.lists(components, min_size=len(a), max_size=len(a)))
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    expected = 0.0 if na == 0 or nb == 0 else float(np.dot(a, b) / (na * nb))
    got = relevance_score(a, b)
    assert -1.0 <= got <= 1.0
    assert got == pytest.approx(expected, abs=1e-9)
    assert got == pytest.approx(relevance_score(b, a), abs=1e-12)


def test_relevance_with_a_zero_vector_is_zero_not_nan():
    assert relevance_score([0.0, 0.0, 0.0], [1.0, 2.0, 3.0]) == 0.0
    assert relevance_score([1.0, 2.0], [0.0, 0.0]) == 0.0


def test_relevance_accepts_numpy_arrays_and_returns_a_python_float():
    got = relevance_score(np.array([1.0, 0.0]), np.array([1.0, 1.0], dtype=np.float32))
    assert type(got) is float
    assert got == pytest.approx(1 / math.sqrt(2))


@pytest.mark.parametrize(
    ("query", "memory"),
    [([-0.5, -0.2, 0.6], [-1.5, -0.6, 1.8]), ([-1.0, 0.7, -0.5], [-1.0, 0.7, -0.5])],
)
def test_relevance_of_one_direction_never_exceeds_one(query, memory):
    # an unclamped cosine gives 1.0000000000000002 on both: floats round
    assert relevance_score(query, memory) == 1.0


def test_relevance_of_vectors_of_different_lengths_is_an_error():
    with pytest.raises(ValueError, match=r"3 values.*2"):
        relevance_score([1.0, 0.0, 0.0], [1.0, 0.0])


@pytest.mark.parametrize(
    ("a", "error", "match"),
    [
        ([], ValueError, "at least one"),
        ([1.0, float("nan")], ValueError, r"query_embedding\[1\]"),
        ([1.0, float("inf")], ValueError, "finite"),
        ("1,0", TypeError, "sequence"),
        (None, TypeError, "sequence"),
        ([1.0, "x"], TypeError, r"query_embedding\[1\]"),
    ],
)
def test_relevance_rejects_bad_vectors(a, error, match):
    with pytest.raises(error, match=match):
        relevance_score(a, [1.0, 0.0])


# --- the combined score ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("rel", "rec", "imp", "weights", "expected"),
    [
        (0.9, 0.10, 0.3, (1.0, 1.0, 1.0), 1.30),
        (0.1, 1.00, 0.2, (1.0, 1.0, 1.0), 1.30),
        (0.8, 0.90, 0.7, (1.0, 1.0, 1.0), 2.40),
        (1.0, 0.0, 0.0, (0.55, 0.25, 0.20), 0.55),  # each weight goes with its own signal
        (0.0, 1.0, 0.0, (0.55, 0.25, 0.20), 0.25),
        (0.0, 0.0, 1.0, (0.55, 0.25, 0.20), 0.20),
        (0.5, 0.5, 0.5, (0.0, 0.0, 0.0), 0.0),
    ],
)
def test_retrieval_score_is_the_weighted_sum(rel, rec, imp, weights, expected):
    assert retrieval_score(rel, rec, imp, weights=weights) == pytest.approx(expected)


def test_retrieval_score_defaults_to_equal_weights():
    assert retrieval_score(0.8, 0.9, 0.7) == pytest.approx(2.4)


@pytest.mark.parametrize(
    ("weights", "error", "match"),
    [
        ((1.0, 1.0), ValueError, "three numbers"),
        ((1.0, 1.0, 1.0, 1.0), ValueError, "three numbers"),
        (1.0, TypeError, "three numbers"),
        ((1.0, -0.5, 1.0), ValueError, "recency weight must be >= 0"),
        ((1.0, 1.0, float("nan")), ValueError, "importance weight"),
        (("a", 1.0, 1.0), TypeError, "relevance weight"),
    ],
)
def test_bad_weights_are_refused_naming_the_weight(weights, error, match):
    with pytest.raises(error, match=match):
        retrieval_score(0.5, 0.5, 0.5, weights=weights)


def test_check_weights_accepts_any_three_number_sequence():
    assert check_weights([1, 2, 3]) == (1.0, 2.0, 3.0)
    assert check_weights(np.array([0.5, 0.3, 0.2])) == pytest.approx((0.5, 0.3, 0.2))


@pytest.mark.parametrize("name", ["rel", "rec", "imp"])
def test_retrieval_score_rejects_a_nan_signal(name):
    signals = {"rel": 0.5, "rec": 0.5, "imp": 0.5, name: float("nan")}
    with pytest.raises(ValueError, match=name):
        retrieval_score(**signals)
