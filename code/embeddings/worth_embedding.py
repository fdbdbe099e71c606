"""What to embed: the word lists and the machine-output rules behind the write-back's filter.

Not every message deserves a vector. "hi", "ok thanks!" and a tool's raw JSON output
have no content a future query would look for, yet each one stored is one more
candidate that can crowd a useful memory out of the top k. This module holds what
needs no judgement of a person's words:

    machine_reason('{"status": 200, "rows": 3}') -> 'tool output (JSON)'
    machine_reason("rows: 3", role="tool")        -> 'tool output'
    machine_reason("ok, thanks!")                 -> None   (a person's words: not decided here)
    is_question("Which city is my home?")         -> True

and the word lists (GREETING_WORDS, ACK_WORDS, FILLER_WORDS) that a person's small talk
is judged by. The judging itself, which messages are greetings or acknowledgements, is
the learner's `noise_reason` (code/practice/exercises.py, notebook 07f's exercise);
extensions/what_to_embed.py puts the two together (skip_reason, write_back_reason),
and the chat's write-back follows it.

Deliberately left out: judging small talk (the learner's exercise), grouping turns into
episodes (extensions/what_to_embed.py) and judging content with a model.
"""

from __future__ import annotations

import json
import re

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


def machine_reason(text: str, role: str = "user") -> str | None:
    """'tool output (JSON)' or 'tool output' when `text` is a machine's, else None.

    A blank text is None here: whether it is worth a memory is the noise rule's to say.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}: {text!r}")
    if not isinstance(role, str) or role not in ROLES:
        raise ValueError(f"unknown role {role!r}: a turn's role is one of {', '.join(ROLES)}")
    stripped = text.strip()
    if not stripped:
        return None
    if _is_json(stripped):
        return "tool output (JSON)"
    if role == "tool":
        return "tool output"
    return None


def is_question(text: str) -> bool:
    """True for a question: it ends with '?' or starts like one ("which", "can", "tell me")."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}: {text!r}")
    return text.rstrip().endswith("?") or bool(QUESTION_START.match(text))


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
