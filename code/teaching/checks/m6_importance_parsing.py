"""Optional Milestone 6: the checks of parse_importance, and the slips they recognise.

A model's reply to "rate this memory 1-10" read as a whole number in [1, 10], or None.
The cases hold the shapes a reply takes (the number alone, inside a sentence, over the
scale, in words, a range, a fraction, out of range, no number at all); each case lists
what the usual slips return on it (`Case.slips`), so a wrong answer is named from the
table: the scale's 1 read as the rating, a range's first number, Python's round() on a
half, no clamping, a default where None belongs, a float or a str instead of an int.
"""

from __future__ import annotations

from collections.abc import Callable

from teaching.checks.core import Case, ValueMistakes, check_values, passed

NAME = "parse_importance"
MISTAKES = ValueMistakes(
    returns="a whole number (an int) in [1, 10], or None when the reply holds no number",
    messages={
        "float": "a float was returned (7.0); the rating is a whole number: return an int",
        "str": "the digits were returned as text ('7'); convert them to an int",
        "no_scale": (
            "the scale was read as the rating (the 1 of '1 to 10'): remove the scale "
            "(SCALE in the file) before looking for the number"
        ),
        "scale_as_range": (
            "the scale was read as a range ('1 to 10' gives its midpoint, 6): remove the "
            "scale (SCALE in the file) before looking for the number or a range"
        ),
        "no_words": "number words ('seven') were not read: look each up in NUMBER_WORDS",
        "range_first": (
            "a range gave its first number; a range ('6-8', '7 or 8') means its midpoint"
        ),
        "range_last": "a range gave its last number; a range means its midpoint",
        "bankers": (
            "a half was rounded to the even number (Python's round(6.5) is 6); the rule "
            "rounds halves up: add 0.5 and round down (math.floor)"
        ),
        "truncate": (
            "the fraction was cut off (int() of 6.5 or 7.5); round to the nearest whole "
            "number, halves up"
        ),
        "no_clamp": (
            "a number outside the scale was returned as is; clamp it into [1, 10] "
            "(12 -> 10, 0 -> 1)"
        ),
        "none_out_of_range": (
            "a number outside the scale gave None; the model did answer, so clamp it into "
            "[1, 10] instead; None is only for a reply with no number at all"
        ),
        "sign_dropped": (
            "the minus sign was dropped ('-3' read as 3); the sign belongs to the number, "
            "and a negative rating is clamped to 1"
        ),
        "default_five": (
            "a reply without a number gave a rating (5); return None and let the caller "
            "pick a default (parse_rating does)"
        ),
    },
)

FLOAT = {"float": 7.0, "str": "7"}
CASES = [
    Case(("7",), 7, slips=FLOAT),
    Case(("Rating: 7",), 7, slips=FLOAT),
    Case(("I'd say 7/10",), 7, slips=FLOAT),
    Case(
        ("On a scale of 1 to 10, I'd give it a 4",),
        4,
        slips={"no_scale": 1, "scale_as_range": 6, "float": 4.0},
    ),
    Case(("seven",), 7, slips={"no_words": None, "default_five": 5}),
    Case(("6-8",), 7, slips={"range_first": 6, "range_last": 8, "sign_dropped": 6}),
    Case(("7 or 8",), 8, slips={"range_first": 7, "truncate": 7}),
    Case(("6.5",), 7, slips={"bankers": 6, "truncate": 6, "float": 6.5}),
    Case(("Rating: 12",), 10, slips={"no_clamp": 12, "none_out_of_range": None}),
    Case(("0",), 1, slips={"no_clamp": 0, "none_out_of_range": None}),
    Case(("-3",), 1, slips={"sign_dropped": 3, "no_clamp": -3, "none_out_of_range": None}),
    Case(("I would rather not rate that.",), None, slips={"default_five": 5}),
]


def check_parse_importance(function: Callable | None = None) -> None:
    """Optional Milestone 6: the reply's shapes, a range, a half, out of range, none."""
    passed(NAME, check_values(NAME, CASES, function, MISTAKES))
