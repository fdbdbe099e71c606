"""The offline chat model: an assistant that answers only from the memories in its prompt.

memorylab/offline-chat reads the recalled memories out of the system message's memory
block (lab/memory_block.py), keeps those that share a word with the user's message
(lab/text.py's tokenize) and answers a question by quoting them with their age, or
acknowledges a statement. With nothing recalled it says it remembers nothing, which is
all a stateless model can say. It cannot reason; it can show exactly what retrieval
gave it.

Deliberately left out: talking to litellm. lab/models.py registers offline_reply as the
"memorylab" provider's chat model.
"""

from __future__ import annotations

import re

from lab.memory_block import parse_memory_block
from lab.text import tokenize

_QUESTION_START = re.compile(
    r"^\s*(what|which|who|whom|whose|when|where|why|how|do|does|did|is|are|was|were|can|"
    r"could|should|would|will|shall|have|has|any|tell me|remind me)\b",
    re.IGNORECASE,
)


def offline_reply(messages: list[dict]) -> str:
    """The offline assistant's answer: built only from the memories in its prompt.

    It reads the recalled memories from the system message (the <memories> block that
    chat_with_memory writes), keeps those that share a word with the user's message,
    and answers a question by quoting them with their age, or acknowledges a statement.
    With nothing recalled it says it remembers nothing, which is all a stateless model
    can say.

        a question with "Eric prefers Groq for the default API" recalled ->
        "Here is what I remember about that:\n- Eric prefers Groq for the default API
         (noted 2 days ago)"
    """
    system = "\n".join(m.get("content") or "" for m in messages if m.get("role") == "system")
    user = next((m.get("content") or "" for m in reversed(messages) if m.get("role") == "user"), "")
    memories = parse_memory_block(system)
    words = set(tokenize(user))
    related = [m for m in memories if words & set(tokenize(str(m.get("text", ""))))]
    unrelated = len(memories) - len(related)
    listed = "\n".join(f"- {_describe(m)}" for m in related)
    aside = (
        f"\n(I was also reminded of {unrelated} note{'s' if unrelated != 1 else ''} "
        f"that {'seem' if unrelated != 1 else 'seems'} unrelated, so I left "
        f"{'them' if unrelated != 1 else 'it'} out.)"
        if unrelated
        else ""
    )
    is_question = user.rstrip().endswith("?") or bool(_QUESTION_START.match(user))
    if is_question and not related:
        return (
            "I don't remember anything about that. Each call to me starts from scratch: "
            "what I know about you is only what memory puts into my prompt." + aside
        )
    if is_question:
        return "Here is what I remember about that:\n" + listed + aside
    reply = "Noted. I'll remember that."
    if related:
        reply += "\nRelated things I remember:\n" + listed
    return reply + aside


def _describe(memory: dict) -> str:
    text = str(memory.get("text", "")).strip()
    age = memory.get("age") or "at an unknown time"
    said = "you told me" if memory.get("role") == "user" else "noted"
    return f"{text} ({said} {age})"
