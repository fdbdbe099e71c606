"""What the chat writes back: each turn as a memory of its kind, rated, replacing what it updates.

Notebooks 07a-07c teach three habits of a memory system; the chat's write-back uses all
three, so the assistant a learner talks to keeps what the workbook taught:

  - kinds (07a): "I drive a blue Toyota" is a standing fact (semantic), "always run the
    tests before a deploy" a practice (procedural), "we met Ana for lunch today" an event
    (episodic); facts and practices keep their recency, events fade;
  - superseded facts (07b): "I sold the Toyota, now I drive a red Honda" replaces the
    Toyota fact instead of standing beside it, so "What car do I own?" recalls one car;
  - rated importance (07c): "I'm allergic to peanuts" outranks "the weather is nice".

    turn = remember_turn(store, embedder, "I sold the Toyota, now I drive a red Honda", now)
    turn.memory.kind, turn.replaced.text    -> ('semantic', 'I drive a blue Toyota.')

Offline, the kind comes from cue words (`guess_kind`, every decision traceable to the
words that made it) and the importance from extensions/importance_rating.py's rater.
With a real chat model configured, one call returns both (`classify_turn`); a model that
fails falls back to the cues, so writing a turn never fails because of the classifier.

A fact is replaced only when the new statement says that something changed ("now",
"no longer", "sold", "moved", ...) *and* an old fact or practice is similar enough
(UPDATE_MIN_SIMILARITY): "I like hiking" and "I like swimming" are similar, yet both
stay true. Deliberately left out: asking a model whether two facts contradict.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from base.redaction import redact
from base.validation import as_timestamp, check_importance, check_text
from embedding_helpers import Embedder
from extensions.importance_rating import heuristic_importance, parse_rating
from extensions.model_choice import ask, is_offline, resolve_chat_model
from extensions.superseding import FACT_KINDS, likely_replaced, replace_fact
from llm.gateway import ModelCallError
from llm.memory_block import DATA_NOT_INSTRUCTIONS, render_notes
from memory_store import Memory, MemoryStore

UPDATE_MIN_SIMILARITY = 0.35  # cosine, default embedding (half meaning): "about the same thing"

# Cue words, matched on whole words of the lower-cased text. Visible on purpose: a learner
# can read exactly why a turn became a fact, a practice or an event.
CHANGE = re.compile(
    r"\b(now|no longer|not any ?more|anymore|sold|moved|switched|changed|quit|stopped|"
    r"instead|replaced|new|got rid of|gave up|traded|swapped)\b"
)
PRACTICE = re.compile(
    r"^(please )?(always|never|whenever|make sure|remember to|don't|do not)\b|"
    r"^(when|before|after|every time|if) [^,]+, "
)
FACT = re.compile(
    r"\b(i am|i'm|i live|i work|i drive|i own|i have|i prefer|i like|i love|i hate|i use|"
    r"i speak|i need|i can't|i cannot|my [a-z]+( [a-z]+)? (is|are|was|lives|works)|"
    r"[a-z]+ (now )?(prefers|likes|loves|hates|lives|works|drives|owns|uses|speaks|needs))\b"
)
EVENT = re.compile(
    r"\b(today|yesterday|tonight|this (morning|afternoon|evening|week)|last (night|week)|"
    r"just|earlier|went|met|had|visited|saw|finished|started)\b"
)

CLASSIFY_PROMPT = """You help an assistant file what a person told it. For the note below, \
answer two things on two lines:
Kind: episodic (an event that happened), semantic (a standing fact about the person or \
their world) or procedural (how they want something done, a practice or a rule).
Importance: a whole number from 1 (an everyday trifle) to 10 (should shape many future \
conversations).
{data_not_instructions}

The note to file is the one note below.
{notes}
Kind:"""


class Classification(NamedTuple):
    """A turn's kind and importance, where they came from, and a note saying how."""

    kind: str
    importance: float
    source: str  # "heuristic" or "model"
    note: str


class Turn(NamedTuple):
    """What remember_turn wrote: the new memory, and the memory it replaced (or None)."""

    memory: Memory
    replaced: Memory | None
    classification: Classification


def guess_kind(text: str) -> tuple[str, str]:
    """The offline classifier: (kind, the cue that decided it).

    guess_kind("I drive a blue Toyota.")              -> ('semantic', 'a fact: "i drive"')
    guess_kind("Always run the tests before a deploy") -> ('procedural', 'a practice: ...')
    guess_kind("We met Ana for lunch today")          -> ('episodic', 'an event: "met"')
    """
    check_text(text, "text")
    lowered = " ".join(text.lower().split())
    if match := PRACTICE.search(lowered):
        return "procedural", f'a practice: "{match.group().strip(" ,")}"'
    fact, change, event = FACT.search(lowered), CHANGE.search(lowered), EVENT.search(lowered)
    if fact and (change or not event):  # "I live in Porto now" is a fact, however it began
        return "semantic", f'a fact: "{fact.group()}"'
    if event:
        return "episodic", f'an event: "{event.group()}"'
    return "episodic", "no cue word: kept as an event"


def classify_turn(text: str, model: str | None = None, **model_kwargs) -> Classification:
    """Kind and importance of `text`: one call to a real chat model, or the cue words offline.

    model: a litellm chat model; None reads MEMORY_LAB_CHAT_MODEL; a memorylab/ model
    means the offline cues. model_kwargs go to litellm (mock_response=... in tests).
    """
    check_text(text, "text")
    model, kwargs = resolve_chat_model(model, **model_kwargs)
    if not is_offline(model):
        prompt = CLASSIFY_PROMPT.format(
            notes=render_notes([{"text": text}]), data_not_instructions=DATA_NOT_INSTRUCTIONS
        )
        try:
            reply = ask(model, prompt, **kwargs)
        except ModelCallError as exc:
            fallback = _offline(text)
            reason = redact(str(exc).splitlines()[0])  # kept in metadata: never a key
            return fallback._replace(note=f"{fallback.note} (model failed: {reason})")
        kind = re.search(r"\b(episodic|semantic|procedural)\b", reply.lower())
        rating = parse_rating(reply.lower().split("importance", 1)[-1])
        if kind is not None:
            note = f"the model said {kind.group()}; importance: {rating.note}"
            return Classification(kind.group(), rating.value, "model", note)
        fallback = _offline(text)  # no kind in the reply: the cues decide, and say so
        return fallback._replace(note=f"{fallback.note} (the model named no kind)")
    return _offline(text)


def _offline(text: str) -> Classification:
    kind, why = guess_kind(text)
    rating = heuristic_importance(text)
    return Classification(kind, rating.value, "heuristic", f"{why}; importance {rating.note}")


def updates(text: str) -> bool:
    """Does `text` say that something changed? updates("now I drive a Honda") -> True"""
    return CHANGE.search(" ".join(check_text(text, "text").lower().split())) is not None


def remember_turn(
    store: MemoryStore,
    embedder: Embedder,
    text: str,
    now,
    *,
    importance: float | None = None,
    metadata: dict | None = None,
    model: str | None = None,
    **model_kwargs,
) -> Turn:
    """Write one turn: classified, rated (unless `importance` is given), replacing the live
    fact or practice it updates. The replacement and its link are written together."""
    check_text(text, "text")
    now = as_timestamp(now, "now")
    if importance is not None:
        importance = check_importance(importance)
    if metadata is not None and not isinstance(metadata, dict):
        raise TypeError(f"metadata must be a dict or None, got {type(metadata).__name__}")
    found = classify_turn(text, model, **model_kwargs)
    importance = found.importance if importance is None else importance
    extra = {**(metadata or {}), "kind_source": found.source, "kind_note": found.note}
    old = None
    if found.kind in FACT_KINDS and len(store) and updates(text):
        old = likely_replaced(
            store, embedder.query(store, text), min_similarity=UPDATE_MIN_SIMILARITY
        )
    if old is not None:
        new = replace_fact(
            store, embedder, old.id, text, now, importance=importance, metadata=extra
        )
        return Turn(new, store.get(old.id), found)
    memory = embedder.remember(
        store, text, kind=found.kind, importance=importance, now=now, metadata=extra
    )
    return Turn(memory, None, found)
