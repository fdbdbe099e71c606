"""What to embed: which texts deserve a memory, the rules the chat's write-back follows.

Not every message deserves a vector. "hi", "ok thanks!" and a tool's raw JSON output
have no content a future query would look for, yet each one stored is one more
candidate that can crowd a useful memory out of the top k:

    skip_reason("ok, thanks!")               -> 'acknowledgement'
    skip_reason('{"status": 200, "rows": 3}') -> 'tool output (JSON)'
    skip_reason("I prefer Groq for the API")  -> None      (worth embedding)

A question is not a fact either: stored, "Which city is my home?" would be recalled the
next time it is asked and answer itself. The chat's write-back therefore also skips
questions (write_back_reason); the extensions keep them, since a question can be part
of an episode (extensions/what_to_embed.py builds episodes on these rules).

    write_back_reason("Which city is my home?")  -> 'question'

Deliberately left out: grouping turns into episodes (extensions/what_to_embed.py) and
judging content with a model.
"""

from __future__ import annotations

import json
import re

from base.text import words

QUESTION_START = re.compile(
    r"^\s*(what|which|who|whom|whose|when|where|why|how|do|does|did|is|are|was|were|can|"
    r"could|should|would|will|shall|have|has|any|tell me|remind me)\b",
    re.IGNORECASE,
)
GREETING_WORDS = frozenset(
    "hi hello hey hiya yo morning evening afternoon night bye goodbye cya see later".split()
)
ACK_WORDS = frozenset(
    """ok okay k kk thanks thank thx ty cheers cool great nice perfect sure yes yep yeah no
    nope alright got it sounds good fine awesome lol haha right understood noted""".split()
)
FILLER_WORDS = frozenset(
    "you so very much a lot there all the and again too good that s is it this me".split()
)
ROLES = ("user", "assistant", "tool", "system")


def skip_reason(text: str, role: str = "user") -> str | None:
    """Why `text` should not be stored as a memory, or None if it is worth embedding.

    Reasons: 'empty', 'tool output (JSON)', 'greeting', 'acknowledgement'.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}: {text!r}")
    if not isinstance(role, str) or role not in ROLES:
        raise ValueError(f"unknown role {role!r}: a turn's role is one of {', '.join(ROLES)}")
    stripped = text.strip()
    if not stripped:
        return "empty"
    if _is_json(stripped):
        return "tool output (JSON)"
    if role == "tool":
        return "tool output"
    said = words(stripped)
    if not said:
        return "acknowledgement"  # only punctuation or emoji: "👍", "!!"
    if all(w in GREETING_WORDS | ACK_WORDS | FILLER_WORDS for w in said):
        return "greeting" if any(w in GREETING_WORDS for w in said) else "acknowledgement"
    return None


def worth_embedding(text: str, role: str = "user") -> bool:
    """True when `text` has content a future query could search for."""
    return skip_reason(text, role) is None


def is_question(text: str) -> bool:
    """True for a question: it ends with '?' or starts like one ("which", "can", "tell me")."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}: {text!r}")
    return text.rstrip().endswith("?") or bool(QUESTION_START.match(text))


def write_back_reason(text: str, role: str = "user") -> str | None:
    """Why the chat should not store `text`: skip_reason's reasons, or 'question'; else None."""
    reason = skip_reason(text, role)
    if reason is None and role == "user" and is_question(text):
        return "question"
    return reason


def _is_json(text: str) -> bool:
    if not text.startswith(("{", "[")):
        return False  # cheap: only an object or a list counts as tool output
    try:
        json.loads(text)
    except ValueError:
        return False
    except RecursionError:  # brackets nested thousands deep: machine output, not a person
        return True
    return True
