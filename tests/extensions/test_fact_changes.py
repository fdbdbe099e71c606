"""extensions/fact_changes.py: who a sentence is about, its topics, its clauses, new values."""

from __future__ import annotations

import pytest

from extensions.fact_changes import about, clauses, corrected, is_correction, says_change, topics


@pytest.mark.parametrize(
    ("text", "cue"),
    [
        ("We relocated to Krakow", "relocated"),
        ("Felix turned eleven on Sunday", "turned eleven"),
        ("I'm not in the choir anymore", "anymore"),
        ("Sorry, it's room 221, not 212.", "sorry"),
        ("It's the blue one, not the red", "X, not Y"),
        ("I like swimming.", None),
        ("I do not eat meat", None),
    ],
)
def test_a_change_or_a_correction_is_named_by_its_words(text, cue):
    assert says_change(text) == cue


def test_a_statement_with_not_is_no_correction():
    assert not is_correction("I do not eat meat")
    assert is_correction("Oops, I meant Tuesday")


@pytest.mark.parametrize(
    ("text", "user", "people"),
    [
        ("Hana and I got engaged", True, {"hana"}),
        ("My cousin Aoife moved to Berlin", False, {"cousin", "aoife"}),
        ("Our neighbours sold their house", True, set()),  # "our": the user's side
        ("My neighbour sold his van", False, {"neighbour"}),
        ("Felix turned eleven", False, {"felix"}),
        ("Oops, I meant the 5th", False, set()),  # the speaker's "I meant" is no subject
        ("My office is in room 212", True, set()),
    ],
)
def test_a_sentence_is_about_the_user_or_the_people_it_names(text, user, people):
    found = about(text)
    assert found.user is user
    assert people <= found.people


def test_topics_group_words_that_share_no_stem():
    assert "diet" in topics("I've started eating eggs again") & topics("I'm vegan")
    assert "home" in topics("We relocated to Krakow") & topics("I live in a flat in Gdansk")
    assert not topics("The weather is grim")


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("My daughter Zoe is four and my son Max is nine",
         ["My daughter Zoe is four", "my son Max is nine"]),
        ("Hi, I'm Tomasz and I live in Gdansk", ["Hi, I'm Tomasz", "I live in Gdansk"]),
        ("My husband Omar and I have been married", ["My husband Omar and I have been married"]),
        ("I like tea and coffee", ["I like tea and coffee"]),
    ],
)  # fmt: skip
def test_a_combined_note_splits_into_its_clauses_only_where_each_has_a_verb(text, parts):
    assert clauses(text) == parts


@pytest.mark.parametrize(
    ("old", "new", "fixed"),
    [
        ("My accountant is called Mr. Brennan", "the accountant is Mr. Brannan, not Brennan",
         "My accountant is called Mr. Brannan"),
        ("My office is in room 212", "Sorry, it's room 221, not 212.", "My office is in room 221"),
        ("The rent is due on the 3rd of each month", "Oops, I meant the 5th of each month",
         "The rent is due on the 5th of each month"),
        ("my son Max is nine", "Max turned ten today", "my son Max is ten"),
        ("I work as a junior developer at Spotify", "I was promoted to senior developer!",
         "I work as a senior developer at Spotify"),
        ("I live in Seville", "We moved to Valencia", "I live in Valencia"),
        ("We're decorating the bedroom blue", "the bedroom will be dusty pink, not blue",
         "We're decorating the bedroom dusty pink"),
        ("I drink two cups of coffee", "I switched from coffee to green tea", None),
    ],
)  # fmt: skip
def test_a_new_value_is_put_in_place_of_the_old_one(old, new, fixed):
    assert corrected(old, new) == fixed
