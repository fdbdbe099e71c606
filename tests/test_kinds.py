"""Half-life <-> hourly decay rate, and the default fade of each kind of memory."""

from __future__ import annotations

import math

import pytest

from kinds import DEFAULT_HALF_LIVES, decay_rate_for_half_life, decay_rate_for_kind, half_life_hours
from scoring import recency_score

NOW = 1_000_000.0
HOUR = 3600.0


@pytest.mark.parametrize("half_life", [1.0, 24.0, 138.3, 45 * 24.0])
def test_recency_halves_after_one_half_life(half_life):
    rate = decay_rate_for_half_life(half_life)
    assert recency_score(NOW, NOW - half_life * HOUR, decay_rate=rate) == pytest.approx(0.5)


@pytest.mark.parametrize("rate", [0.5, 0.9, 0.995, 0.9999])
def test_half_life_and_decay_rate_are_inverses(rate):
    assert decay_rate_for_half_life(half_life_hours(rate)) == pytest.approx(rate)
    assert half_life_hours(rate) == pytest.approx(math.log(0.5) / math.log(rate))


def test_the_course_decay_rate_has_a_half_life_of_about_138_hours():
    assert half_life_hours(0.995) == pytest.approx(138.28, abs=0.01)


def test_an_infinite_half_life_never_fades_and_rate_one_has_an_infinite_half_life():
    assert decay_rate_for_half_life(math.inf) == 1.0
    assert half_life_hours(1.0) == math.inf


def test_episodes_fade_and_facts_and_skills_do_not_by_default():
    assert decay_rate_for_kind("episodic") < 1.0
    assert decay_rate_for_kind("semantic") == decay_rate_for_kind("procedural") == 1.0
    assert DEFAULT_HALF_LIVES["episodic"] == 45 * 24


@pytest.mark.parametrize("bad", [0, -3, float("nan"), True, "24"])
def test_decay_rate_for_half_life_rejects_non_positive_or_non_numbers(bad):
    with pytest.raises((ValueError, TypeError), match="half_life_hours"):
        decay_rate_for_half_life(bad)


@pytest.mark.parametrize("bad", [0.0, 1.5, -0.1])
def test_half_life_hours_rejects_rates_outside_zero_to_one(bad):
    with pytest.raises(ValueError, match="decay_rate"):
        half_life_hours(bad)


def test_decay_rate_for_kind_names_a_missing_kind_and_a_bad_kind():
    with pytest.raises(ValueError, match="procedural"):
        decay_rate_for_kind("episodic", {"episodic": 24.0, "semantic": math.inf})
    with pytest.raises(ValueError, match="kind"):
        decay_rate_for_kind("dream")
