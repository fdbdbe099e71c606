"""Distillation: turn an episode (a run of turns) into a few standalone facts.

An episode stored verbatim is noisy: half of it is questions, hedges and replies. A
distillation pass asks a model for the one to three facts worth keeping, each readable
on its own months later ("On 2026-03-12 the user chose HNSW over IVFFlat after a
latency benchmark"). Those are the highest signal-to-noise memories a store can hold.

A model asked for JSON usually returns JSON, and sometimes returns prose, a
half-closed list, or objects with the wrong keys. `parse_facts` accepts exactly the
shape asked for (a list of {"fact": text, "tags": [text, ...]}, optionally inside a
```json fence) and rejects anything else with a DistillationError that quotes what
came back and says what was expected: a malformed reply never becomes a memory.

Offline, `offline_distill` is deterministic: it keeps the user's statements (not
questions) that carry a decision or a preference cue ("decided", "prefer", "always",
...), dated, and falls back to the user's longest statement.

    facts = distill_episode(episode)          # offline, or the configured chat model
    remember_distilled(store, embedder, episode, now)   # stored as semantic memories

Facts are written for the store's user (see Embedder.remember).

Deliberately left out: scheduling the pass (nightly, say), and merging a distilled fact
with an existing one (see extensions/superseding.py).
"""

from __future__ import annotations

import json
import re
from typing import NamedTuple

from base.redaction import redact
from base.text import STOP_WORDS, words
from base.validation import as_timestamp, check_int
from embedding_helpers import Embedder
from extensions.importance_rating import heuristic_importance
from extensions.model_choice import ask, is_offline, resolve_chat_model
from extensions.what_to_embed import check_turns, worth_embedding
from llm.memory_block import DATA_NOT_INSTRUCTIONS, format_date, render_notes
from memory_store import Memory, MemoryStore

MAX_FACTS = 3

DISTILL_PROMPT = """Below is part of a conversation between a user and an assistant. \
Extract between one and {max_facts} facts about the user that are worth remembering for \
months: decisions, preferences, constraints, lessons. Each fact must make sense on its \
own, without the conversation (name the subject, give the date if it matters).
Answer with JSON only, in exactly this shape:
[{{"fact": "...", "tags": ["...", "..."]}}]
{data_not_instructions}

The conversation, one turn per note:
{turns}"""

CUE_WORDS = frozenset(
    """decided decide chose choose prefer prefers preferred always never must switched
    switch use using plan planned agreed allergic deadline""".split()
)
EXPECTED_SHAPE = 'a JSON list like [{"fact": "...", "tags": ["..."]}]'


class DistillationError(ValueError):
    """A model's distillation reply was not the JSON asked for; nothing was stored."""


class Fact(NamedTuple):
    fact: str
    tags: tuple[str, ...]


def parse_facts(reply, max_facts: int = MAX_FACTS) -> list[Fact]:
    """Validate a model's reply and return its facts, or raise DistillationError.

    parse_facts('[{"fact": "Eric prefers Groq", "tags": ["api"]}]')
        -> [Fact(fact='Eric prefers Groq', tags=('api',))]
    parse_facts("Sure! Here are the facts: ...")  -> DistillationError: not valid JSON
    """
    _check_max(max_facts)
    if not isinstance(reply, str) or not reply.strip():
        raise DistillationError(f"the model's reply is empty; expected {EXPECTED_SHAPE}")
    text = reply.strip()
    fence = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", text, re.S)  # ```json ... ```
    text = fence.group(1) if fence else text
    shown = redact(text if len(text) <= 80 else text[:77] + "...")  # quoted in the error
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise DistillationError(
            f"the model's reply is not valid JSON ({exc}): {shown!r}; expected {EXPECTED_SHAPE}"
        ) from None
    except RecursionError:  # json's parser recurses once per bracket
        raise DistillationError(
            f"the model's reply is nested too deeply to parse: {shown!r}; expected {EXPECTED_SHAPE}"
        ) from None
    if not isinstance(data, list):
        raise DistillationError(
            f"expected {EXPECTED_SHAPE}, got a JSON {type(data).__name__}: {shown!r}"
        )
    if len(data) > max_facts:
        raise DistillationError(f"expected at most {max_facts} facts, got {len(data)}")
    facts = []
    for i, item in enumerate(data):
        if not isinstance(item, dict):
            raise DistillationError(f"item {i} must be an object, got {item!r}")
        fact = item.get("fact")
        if not isinstance(fact, str) or not fact.strip():
            raise DistillationError(f"item {i} needs a non-empty 'fact' string, got {item!r}")
        tags = item.get("tags", [])
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise DistillationError(f"item {i}: 'tags' must be a list of strings, got {tags!r}")
        facts.append(Fact(fact.strip(), tuple(t.strip() for t in tags if t.strip())))
    return facts


def offline_distill(episode: list[dict], max_facts: int = MAX_FACTS) -> list[Fact]:
    """Deterministic facts from an episode: the user's dated sentences with a cue word.

    [{"role": "user", "content": "We decided to use HNSW. It was faster.", "time": t}]
        -> [Fact('On 2026-03-12 the user said: We decided to use HNSW.', ('decided', ...))]
    """
    facts = []
    for turn, sentence in offline_statements(episode, max_facts):
        day = format_date(turn["time"])[:10]
        tags = tuple(dict.fromkeys(w for w in words(sentence) if w not in STOP_WORDS))[:3]
        facts.append(Fact(f"On {day} the user said: {sentence}", tags))
    return facts


def offline_statements(episode: list[dict], max_facts: int = MAX_FACTS) -> list[tuple[dict, str]]:
    """The (turn, sentence) pairs offline_distill keeps, in order, at most `max_facts`.

    Each turn comes back checked (its time in epoch seconds) with any other keys it had,
    so a caller can name who said the sentence (evaluation/locomo.py's "distilled" items).
    """
    _check_max(max_facts)
    turns = check_turns(episode, need_time=True)
    said = [t for t in turns if t["role"] == "user" and worth_embedding(t["content"])]
    sentences = [
        (turn, sentence.strip())
        for turn in said
        for sentence in re.split(r"(?<=[.!?])\s+", turn["content"].strip())
        if sentence.strip()
    ]
    statements = [(t, s) for t, s in sentences if not s.endswith("?")]  # a question is no fact
    chosen = [(t, s) for t, s in statements if CUE_WORDS & set(words(s))]
    if not chosen and statements:  # no cue anywhere: the longest statement is the gist
        chosen = [max(statements, key=lambda pair: len(pair[1]))]  # first of equal lengths
    return chosen[:max_facts]


def distill_episode(
    episode: list[dict], model: str | None = None, *, max_facts: int = MAX_FACTS, **model_kwargs
) -> list[Fact]:
    """Standalone facts from an episode: by `model` through litellm, or offline.

    model None reads MEMORY_LAB_CHAT_MODEL; a memorylab/ model means offline_distill.
    A model's reply goes through parse_facts: malformed output raises DistillationError.
    """
    turns = check_turns(episode, need_time=True)
    model, kwargs = resolve_chat_model(model, **model_kwargs)
    if is_offline(model):
        return offline_distill(turns, max_facts)
    notes = render_notes(  # escaped: a turn cannot forge another turn or an instruction
        [
            {"role": t["role"], "written": format_date(t["time"]), "text": t["content"]}
            for t in turns
        ]
    )
    prompt = DISTILL_PROMPT.format(
        max_facts=max_facts, turns=notes, data_not_instructions=DATA_NOT_INSTRUCTIONS
    )
    reply = ask(model, prompt, **kwargs)  # a model that cannot be reached: ModelCallError
    return parse_facts(reply, max_facts)


def remember_distilled(
    store: MemoryStore,
    embedder: Embedder,
    episode: list[dict],
    now,
    *,
    model: str | None = None,
    **model_kwargs,
) -> list[Memory]:
    """Distil `episode` and store each fact as a semantic memory; all or nothing.

    Importance comes from the offline rater (importance_rating.heuristic_importance);
    metadata holds the tags and the episode's time span.
    """
    now = as_timestamp(now, "now")
    facts = distill_episode(episode, model, **model_kwargs)  # raises before any write
    times = [t["time"] for t in check_turns(episode, need_time=True)]
    with store.transaction():  # every fact of the episode, or none
        return [
            embedder.remember(
                store,
                fact.fact,
                kind="semantic",
                importance=heuristic_importance(fact.fact).value,
                now=now,
                metadata={"tags": list(fact.tags), "episode": [min(times), max(times)]},
            )
            for fact in facts
        ]


def _check_max(max_facts) -> None:
    check_int(max_facts, "max_facts")
