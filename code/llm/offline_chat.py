"""The offline chat model: an assistant that answers only from the memories in its prompt.

memorylab/offline-chat reads the recalled memories out of the system message's memory
block (llm/memory_block.py) and answers a question by quoting those related to it, by
meaning or by a shared word, newest first, with their age; a statement it acknowledges,
adding the notes that share a word with it (and a few whole greetings and thanks, SMALL_TALK,
it simply returns). With nothing recalled it says it remembers nothing, which is all a
stateless model can say. It cannot reason; it can show exactly what retrieval gave it.

"Related by meaning" is the cosine of the two texts' sentence embeddings
(all-MiniLM-L6-v2, embeddings/minilm.py, the semantic half of the default embedding), at least
RELATED_SIMILARITY = 0.3. Unrelated sentences score below about 0.25 with this model
(two facts about the same person share a little: "Do I have any pets?" and "I am
allergic to shellfish" 0.24; "brushed teeth" and "which API should I default to?" 0.07),
paraphrases above it: "Which city is my home?" and "My name is Dana and I live in
Lisbon" 0.34 with no content word in common, "Can I eat prawns?" and "I am allergic to
shellfish" 0.43, "What do I do for a living?" and "I work as a nurse" 0.48. A shared
content word (base/text.py's tokenize) also counts, so a note that names what the
question names is never left out: "what should I cook tonight?" and "Dana is vegan: no
meat when cooking for her" score only 0.2 but share "cook". A recalled memory that is
itself a question is never quoted as an answer (embeddings/worth_embedding.py's is_question).

Deliberately left out: talking to litellm. llm/gateway.py registers offline_reply as the
"memorylab" provider's chat model.
"""

from __future__ import annotations

from base.text import tokenize, words
from embeddings import minilm
from embeddings.worth_embedding import is_question
from llm.memory_block import parse_memory_block

RELATED_SIMILARITY = 0.3  # MiniLM cosine from which two texts are "about the same thing"
# The few whole messages the offline model answers in kind, looked up as their words; a
# real model needs no list, and anything else is read as a statement or a question.
SMALL_TALK = dict.fromkeys(
    ["hi", "hello", "hey", "hi there", "hello there", "good morning", "good evening"], "Hello!"
) | dict.fromkeys(
    ["ok", "okay", "thanks", "thank you", "ok thanks", "okay thanks", "thanks a lot",
     "thank you so much", "cheers", "cool", "great", "perfect", "got it", "sounds good"],
    "You're welcome.",
)  # fmt: skip


def offline_reply(messages: list[dict]) -> str:
    """The offline assistant's answer: built only from the memories in its prompt.

    It reads the recalled memories from the system message (the <memories> block that
    chat_with_memory writes), keeps those related to the user's message, and
    answers a question by quoting them with their age, or acknowledges a statement.

        a question with "Eric prefers Groq for the default API" recalled ->
        "Here is what I remember about that:\n- Eric prefers Groq for the default API
         (noted 2 days ago)"
    """
    system = "\n".join(m.get("content") or "" for m in messages if m.get("role") == "system")
    user = next((m.get("content") or "" for m in reversed(messages) if m.get("role") == "user"), "")
    memories = [m for m in parse_memory_block(system) if str(m.get("text", "")).strip()]
    facts = [m for m in memories if not is_question(str(m["text"]))]  # never self-answers
    small_talk = SMALL_TALK.get(" ".join(words(user)))
    if small_talk is not None:
        return small_talk
    question = is_question(user)
    # newest first: the latest word on a subject leads (a date string sorts as its time)
    related = sorted(
        _related(user, facts, by_meaning=question),
        key=lambda m: str(m.get("written", "")),
        reverse=True,
    )
    listed = "\n".join(f"- {_describe(m)}" for m in related)
    if question and not related:
        aside = ""
        if memories:  # retrieval did give notes: say why none is quoted
            n = len(memories)
            aside = (
                f"\n(I was reminded of {n} note{'s' if n != 1 else ''}, but "
                f"{'none seems' if n != 1 else 'it does not seem'} related to your question.)"
            )
        return (
            "I don't remember anything about that. Each call to me starts from scratch: "
            "what I know about you is only what memory puts into my prompt." + aside
        )
    if question:
        return "Here is what I remember about that:\n" + listed
    reply = "Noted. I'll remember that."
    if related:
        reply += "\nRelated things I remember:\n" + listed
    return reply


def similarity(a: str, b: str) -> float:
    """The cosine of two texts' MiniLM sentence embeddings, in [-1, 1]."""
    first, second = minilm.embed_texts([a, b])
    return float(first @ second)


def _related(user: str, memories: list[dict], by_meaning: bool) -> list[dict]:
    """The memories that share a content word with `user`, or (by_meaning) mean the same."""
    if not memories or not user.strip():
        return []
    words = set(tokenize(user))
    shared = [bool(words & set(tokenize(str(m["text"])))) for m in memories]
    if not by_meaning:
        return [m for m, share in zip(memories, shared) if share]
    vectors = minilm.embed_texts([user] + [str(m["text"]) for m in memories])
    scores = vectors[1:] @ vectors[0]
    return [
        m
        for m, score, share in zip(memories, scores, shared)
        if share or score >= RELATED_SIMILARITY
    ]


def _describe(memory: dict) -> str:
    text = str(memory.get("text", "")).strip()
    age = memory.get("age") or "at an unknown time"
    said = "you told me" if memory.get("role") == "user" else "noted"
    return f"{text} ({said} {age})"
