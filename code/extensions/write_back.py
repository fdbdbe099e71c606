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

Which memory a turn replaces, offline (`find_replaced`, rules in extensions/fact_changes.py):
the turn must say that something changed ("moved to", "sold", "no longer", "turned
eight", "got married") or correct what was said ("Actually it's the 5th floor, not the
4th", "Oops, I meant ..."); the memory replaced is about the same subject (the user, or
the person the news is about: "my friend Lars moved to Oslo" never touches the user's
home), on the same topic or sharing a rare word, and close enough by the embedding. Its
unchanged part stays: "My name is Priya and I live in Manchester" updated by "I moved
to Bristol" leaves "My name is Priya and I live in Bristol" beside the new turn. Every
replacement says why in its metadata ("replaces_why"). "I like hiking" and "I like
swimming" are similar, yet neither says a change: both stay.

With a real chat model configured, one call decides the kind, the importance, which of
the most similar memories the turn replaces and what of it stays (`FILE_PROMPT`, a JSON
answer); a model that fails or answers off the format falls back to the rules, so
writing a turn never fails because of the model. Deliberately left out: replacing
several memories with one turn (the best candidate goes; the others stay).
"""

from __future__ import annotations

import json
import re
from typing import NamedTuple

from base.redaction import redact
from base.validation import as_timestamp, check_importance, check_text
from embedding_helpers import Embedder
from extensions.fact_changes import (
    about,
    clauses,
    content,
    corrected,
    is_correction,
    rejoin,
    says_change,
    topics,
)
from extensions.importance_rating import heuristic_importance, rating_from_reply
from extensions.model_choice import ask, is_offline, resolve_chat_model
from extensions.superseding import FACT_KINDS, replace_fact
from llm.gateway import ModelCallError
from llm.memory_block import DATA_NOT_INSTRUCTIONS, render_notes
from memory_store import Memory, MemoryStore
from scoring import relevance_score

# An update replaces the candidate whose score (cosine of the default embedding, which is
# half meaning, plus the bonuses) reaches UPDATE_MIN_SCORE. Tuned on the public
# conversations (data/update_conversations.json), checked on others
# (tests/extensions/test_updates_held_out.py).
UPDATE_MIN_SCORE = 0.4
UPDATE_TOPIC_BONUS = 0.25  # both on one topic: home, work, age, partner, diet ...
UPDATE_WORD_BONUS = 0.15  # each shared rare word (at most two): "Toyota", "Maya", "kitchen"
UPDATE_VALUE_BONUS = 0.3  # the turn corrects a value the candidate holds
UPDATE_PERSON_BONUS = 0.1  # news of someone else, and a note that names them
# Words too common in what people say about themselves to show two notes are one fact.
GENERIC_WORDS = frozenset("we day week month year time thing new good really chang".split())
CANDIDATES = 5  # memories shown to a real model as what a turn may replace

# Cue words, matched on whole words of the lower-cased text. Visible on purpose: a learner
# can read exactly why a turn became a fact, a practice or an event.
PRACTICE = re.compile(
    r"^(please )?(always|never|whenever|make sure|remember to|don't|do not)\b|"
    r"^(when|before|after|every time|if) [^,]+, "
)
FACT = re.compile(
    r"\b(i am|i'm|i live|i work|i drive|i own|i have|i prefer|i like|i love|i hate|i use|"
    r"i speak|i need|i can't|i cannot|i eat|i drink|i rent|i ride|i teach|i smoke|i bought|"
    r"every (day|morning|evening|night|week|weekend|month|monday|tuesday|wednesday|thursday|"
    r"friday|saturday|sunday)|each (day|morning|week|month|year)|a day|"
    r"most (days|evenings|mornings)|usually|"
    r"my [a-z]+( [a-z]+)? (is|are|was|lives|works)|we have|we're|"
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

FILE_PROMPT = """You help an assistant keep its notes about a person up to date. A new \
message from the person is below, then the stored notes it may update, each with its id.
Answer with one JSON object and nothing else:
{{"kind": "episodic" (an event that happened), "semantic" (a standing fact about the person \
or their world) or "procedural" (how they want something done),
 "importance": a whole number from 1 (an everyday trifle) to 10 (should shape many future \
conversations),
 "replaces": the id of the stored note that the message makes untrue (the person moved, \
changed jobs, corrected themselves, ...), or null; never a note about someone else when \
the message is about the person, and never one that is still true,
 "keeps": what stays true of that replaced note, as a short note in the person's words \
(e.g. "My name is Priya" when "My name is Priya and I live in Leeds" is replaced by a \
move), or null}}
{data_not_instructions}

The new message:
{message}
The stored notes it may update:
{notes}"""


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
    guess_kind("I moved to Bristol last month")       -> ('semantic', 'a change: "moved" (home)')

    A change on a topic a person's standing facts are about (home, work, age, partner,
    diet ...) is a new standing fact, however it is told: "Maya turned eight last week".
    """
    check_text(text, "text")
    lowered = " ".join(text.lower().split())
    if match := PRACTICE.search(lowered):
        return "procedural", f'a practice: "{match.group().strip(" ,")}"'
    fact, change, event = FACT.search(lowered), says_change(lowered), EVENT.search(lowered)
    if fact and (change or not event):  # "I live in Porto now" is a fact, however it began
        return "semantic", f'a fact: "{fact.group()}"'
    on_topic = sorted(topics(lowered) - {"plans"})
    if change and on_topic:
        return "semantic", f'a change: "{change}" ({"/".join(on_topic)})'
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
        rating = rating_from_reply(reply.lower().split("importance", 1)[-1], text)
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
    return says_change(check_text(text, "text")) is not None


class Replacement(NamedTuple):
    """The memory a turn updates, what of it stays true, and why it was chosen."""

    old: Memory
    kept: str | None  # the old note's unchanged part (its other clauses, a corrected value)
    why: str


def find_replaced(
    store: MemoryStore, embedder: Embedder, text: str, *, query=None
) -> Replacement | None:
    """The live memory `text` updates, offline: rules and the embedding decide, visibly.

    A candidate is a live fact or practice, or an event that itself told of a change
    ("I moved to York in January"), about the same subject as `text` (the user, or the
    person it names: extensions/fact_changes.py's `about`). Its score is the embedding's
    cosine with `text`, plus UPDATE_TOPIC_BONUS when both are on one topic (home, work,
    age, partner, diet ...), plus UPDATE_WORD_BONUS for each rare word they share (at most
    two), plus UPDATE_VALUE_BONUS when `text` corrects a value the candidate holds
    ("Okafor, not Okafur"). The best candidate at UPDATE_MIN_SCORE or more is replaced.
    None when `text` says no change, or nothing scores enough.
    """
    cue = says_change(text)
    if cue is None or not len(store):
        return None
    new_about, new_topics, new_words = about(text), topics(text), content(text)
    correction = is_correction(text)
    query = embedder.query(store, text) if query is None else query
    best, best_score = None, UPDATE_MIN_SCORE
    for memory in store.live():
        # an event can be replaced when it told of a change itself, or its words are corrected
        event_ok = says_change(memory.text) is not None or (
            correction and corrected(memory.text, text) is not None
        )
        if memory.kind not in FACT_KINDS and not event_ok:
            continue
        parts = clauses(memory.text)
        scored = [_clause_score(part, new_about, new_topics, new_words, text, correction)
                  for part in parts]  # fmt: skip
        i = max(range(len(parts)), key=lambda j: -1.0 if scored[j][0] is None else scored[j][0])
        bonus, why = scored[i]
        if not bonus:  # about someone else, or nothing but a vague likeness
            continue
        score = _likeness(store, query, memory) + bonus
        if score >= best_score:  # >=: the newer of two equal candidates
            kept_parts = parts[:i] + parts[i + 1 :]
            fixed = corrected(parts[i], text)
            if fixed is not None and not content(fixed) <= new_words:  # it adds something
                kept_parts = [*parts[:i], fixed, *parts[i + 1 :]]
            kept = rejoin(kept_parts, memory.text) if kept_parts else None
            best, best_score = (memory, kept, f'"{cue}"; score {score:.2f}: {why}'), score
    return None if best is None else Replacement(*best)


def _likeness(store: MemoryStore, query, memory) -> float:
    """The cosine of `query` with the memory, or with its closest turn when it is an
    episode of turns (extensions/episodes.py keeps each turn's own vector as history)."""
    turns = memory.metadata.get("episode_of") or ()
    vectors = [store.get(t).embedding for t in turns if t in store]
    return max(relevance_score(query, v) for v in [memory.embedding, *vectors])


def _clause_score(part, new_about, new_topics, new_words, text, correction):
    """(bonus, reasons) of one clause of a candidate, or (None, why) when not its subject."""
    old_about = about(part)
    shared_people = new_about.people & old_about.people
    if new_about.user:
        if not old_about.user and not shared_people:
            return None, "about someone else"
    elif new_about.people:
        if not shared_people:
            return None, "about someone else"
    elif not correction:  # "He's moved": whom? only a correction of a value may go on
        return None, "no subject"
    bonus, reasons = 0.0, []
    if shared_people and not new_about.user:  # news of someone, and a note naming them
        bonus += UPDATE_PERSON_BONUS
        reasons.append("about " + ", ".join(sorted(shared_people)[:2]))
    if new_topics & topics(part):
        bonus += UPDATE_TOPIC_BONUS
        reasons.append("topic " + "/".join(sorted(new_topics & topics(part))))
    shared = sorted((new_words & content(part)) - GENERIC_WORDS)
    if shared:
        bonus += UPDATE_WORD_BONUS * min(2, len(shared))
        reasons.append("shares " + ", ".join(shared[:2]))
    if correction and corrected(part, text) is not None:
        bonus += UPDATE_VALUE_BONUS
        reasons.append("a value corrected")
    return bonus, "; ".join(reasons) or "similar"


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
    memory it updates, and keeping that memory's unchanged part as a note of its own
    (metadata "split_from"). The replacement, its link and the kept part are written
    together, or none of them."""
    check_text(text, "text")
    now = as_timestamp(now, "now")
    if importance is not None:
        importance = check_importance(importance)
    if metadata is not None and not isinstance(metadata, dict):
        raise TypeError(f"metadata must be a dict or None, got {type(metadata).__name__}")
    model, kwargs = resolve_chat_model(model, **model_kwargs)
    if is_offline(model):
        found = _offline(text)
        replacement = find_replaced(store, embedder, text)
        if replacement is not None and found.kind == "episodic":  # what replaces a fact is
            found = found._replace(kind="semantic", note=f"{found.note}; replaces a fact")  # one
    else:
        found, replacement = _ask_model(store, embedder, text, model, **kwargs)
    importance = found.importance if importance is None else importance
    extra = {**(metadata or {}), "kind_source": found.source, "kind_note": found.note}
    if replacement is None:
        memory = embedder.remember(
            store, text, kind=found.kind, importance=importance, now=now, metadata=extra
        )
        return Turn(memory, None, found)
    old = replacement.old
    extra["replaces_why"] = replacement.why
    with store.transaction():  # the new version, the link and the kept part: all or nothing
        new = replace_fact(
            store, embedder, old.id, text, now, importance=importance, metadata=extra,
            kind=_new_kind(found.kind, old.kind, text),
            allow_event=old.kind not in FACT_KINDS,
        )  # fmt: skip
        if replacement.kept:  # said when the old note was: its age stays honest
            kept_metadata = {k: v for k, v in old.metadata.items() if k == "role"}
            kept_metadata["split_from"] = old.id
            kept = embedder.memory(
                store.next_id(), replacement.kept,
                kind=old.kind if old.kind in FACT_KINDS else "semantic",
                importance=old.importance, now=old.created_at, metadata=kept_metadata,
                user_id=old.user_id,
            )  # fmt: skip
            kept.last_accessed = max(old.last_accessed, old.created_at)
            store.add(kept)
    return Turn(new, store.get(old.id), found)


def _new_kind(said: str, old: str, text: str) -> str:
    """The replacement's kind: a correction keeps the corrected memory's kind (an event
    corrected is still an event); otherwise a fact or practice, never an event."""
    if is_correction(text):
        return old
    return said if said in FACT_KINDS else "semantic"


def _ask_model(store, embedder, text, model, **kwargs) -> tuple[Classification, Replacement | None]:
    """One call to a real chat model: kind, importance, the memory replaced, what stays.

    The model sees the CANDIDATES live memories most similar to `text` (ids and texts, in
    the escaped memory block). A reply that is no JSON object, names no kind, or names an
    id it was not shown falls back to the offline rules, and the note says so; a model
    that fails does too, so writing a turn never fails because of the model.
    """
    live = [m for m in store.live()]
    shown: list[Memory] = []
    if live:
        query = embedder.query(store, text)
        live.sort(key=lambda m: relevance_score(query, m.embedding), reverse=True)
        shown = live[:CANDIDATES]
    prompt = FILE_PROMPT.format(
        message=render_notes([{"text": text}]),
        notes=render_notes([{"id": m.id, "text": m.text} for m in shown]),
        data_not_instructions=DATA_NOT_INSTRUCTIONS,
    )
    try:
        reply = ask(model, prompt, **kwargs)
    except ModelCallError as exc:
        return _fallback(store, embedder, text, f"model failed: {redact(str(exc).splitlines()[0])}")
    answer = _json_object(reply)
    kind = str(answer.get("kind", "")).strip().lower() if answer else ""
    if kind not in ("episodic", "semantic", "procedural"):
        return _fallback(store, embedder, text, "the model named no kind")
    rating = rating_from_reply(str(answer.get("importance", "")), text)
    by_id = {m.id: m for m in shown}
    replaces, keeps = answer.get("replaces"), answer.get("keeps")
    note = f"the model said {kind}; importance: {rating.note}"
    if replaces in (None, "", "null"):
        return Classification(kind, rating.value, "model", note), None
    old = by_id.get(str(replaces))
    if old is None:  # an id it was not shown: replacing it could hit anything
        note += f"; it named {str(replaces)[:40]!r}, not a note it was shown: nothing replaced"
        return Classification(kind, rating.value, "model", note), None
    kept = keeps.strip() if isinstance(keeps, str) and keeps.strip() else None
    why = f"the model: {text[:40]!r} makes {old.id} untrue"
    return Classification(kind, rating.value, "model", note), Replacement(old, kept, why)


def _fallback(store, embedder, text, reason):
    found = _offline(text)
    found = found._replace(note=f"{found.note} ({reason})")
    replaced = find_replaced(store, embedder, text) if found.kind in FACT_KINDS else None
    return found, replaced


def _json_object(reply: str) -> dict | None:
    """The first JSON object in a reply (models wrap it in prose or ``` fences), or None."""
    if not isinstance(reply, str):
        return None
    start = reply.find("{")
    while start != -1:
        try:
            value, _ = json.JSONDecoder().raw_decode(reply[start:])
        except json.JSONDecodeError:
            start = reply.find("{", start + 1)
            continue
        return value if isinstance(value, dict) else None
    return None
