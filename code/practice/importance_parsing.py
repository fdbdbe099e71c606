"""A model's reply to "rate this memory 1-10", read as a rating.  (Optional Milestone 6.)

Rated importance asks a chat model how much a memory matters, on a whole-number scale
from 1 to 10 (its poignancy). What comes back is text, and not always the number asked
for. This file turns a reply into the rating it means, or None when it holds none:

    "7"                               -> 7     the number itself
    "Rating: 7", "I'd say 7/10"       -> 7     the number inside the text
    "On a scale of 1 to 10, a 7"      -> 7     the scale is not the rating
    "seven"                           -> 7     a number word, one to ten
    "6-8", "7 or 8"                   -> 7, 8  a range: its midpoint, halves rounded up
    "6.5", ".5", "1e5"                -> 7, 1, 10   any written number: rounded, halves up
    "12", "0", "-3"                   -> 10, 1, 1   outside 1-10: clamped into the scale
    "I cannot rate that"              -> None  no number: no rating (the caller decides)

extensions/importance_rating.parse_rating is built on this function: it reports where
the rating came from and uses a default for None, so a bad reply never stops a write.

Deliberately left out: numbers above ten in words ("twelve"), and a reply's second
opinion ("7. Actually, 9"): the first number found is the rating.
"""

from __future__ import annotations

import math
import re

LOW, HIGH = 1, 10  # the rating scale, whole numbers

NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
    "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
}  # fmt: skip

# The scale itself, when a reply repeats it ("on a scale of 1 to 10", "7/10", "3 out of
# ten"): its 1 and its 10 are not the rating.
SCALE = re.compile(
    r"\b(?:1|one)\s*(?:to|-|\u2013|\u2014)\s*(?:10|ten)\b|(?:/|\bout\s+of)\s*(?:10|ten)\b",
    re.IGNORECASE,
)


def parse_importance(reply: str) -> int | None:
    """The rating a model's reply means, as a whole number in [1, 10]; None if it has none.

    Inputs:
        reply: the model's text, e.g. "Rating: 7", "7/10", "seven", "6-8".
    Returns:
        int in [1, 10], or None when the reply holds no number (a refusal, "very!", "").
        A range ("6-8", "7 or 8", "6 to 8") is its midpoint; a number that is not whole
        (6.5, or a range's midpoint 7.5) rounds to the nearest whole number, a half
        always up (6.5 -> 7, 7.5 -> 8); a number outside the scale is clamped into it
        (0 -> 1, 12 -> 10, -3 -> 1).

    Example:
        parse_importance("I'd say 7 or 8 out of 10") -> 8
    """
    if not isinstance(reply, str):
        raise TypeError(f"reply must be the model's text (a str), got {type(reply).__name__}")
    # TODO: optional Milestone 6. Remove the scale first (SCALE above), so "1 to 10"
    # and "/10" are not read as the rating. Then find the first number: digits (a sign,
    # a decimal point and an exponent belong to it: "-3", ".5", "1e5") or one of
    # NUMBER_WORDS; two numbers joined by "-", "to" or "or" are a range. Round halves
    # up (Python's round() rounds 6.5 to 6, the even number), clamp into [LOW, HIGH]
    # and return an int, or None.
    ### BEGIN SOLUTION
    text = SCALE.sub(" ", reply.lower())
    for word, digit in NUMBER_WORDS.items():
        text = re.sub(rf"\b{word}\b", str(digit), text)
    number = r"([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?)"  # 7, -3, 6.5, .5, 1e5
    found = re.search(number + r"\s*(?:-|\u2013|\bto\b|\bor\b)\s*" + number, text)
    if found:
        value = (float(found.group(1)) + float(found.group(2))) / 2
    else:
        found = re.search(number, text)
        if found is None:
            return None
        value = float(found.group(1))
    return math.floor(min(HIGH, max(LOW, value)) + 0.5)  # into the scale, then halves up
    ### END SOLUTION
