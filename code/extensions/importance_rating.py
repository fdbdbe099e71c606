"""Rated importance: how much a memory matters, on 1-10, decided when it is written.

Importance is the signal that lets "we signed the contract" outrank "brushed teeth"
when both are equally fresh and equally on topic. Generative Agents asks the language
model itself to rate each memory's poignancy; this module does the same through
litellm when a real chat model is configured, and otherwise uses a small rule-based
rater whose every point can be traced to a cue word (`heuristic_importance`).

A model's reply is text, not a number, and it is not always the number asked for:
"7", "Rating: 7", "I'd say 7/10", "12", "very important!". `parse_rating` turns any
reply into a number in [1, 10] and says how it got there (read as-is, found inside
the text, clamped into range, or defaulted), so a bad reply never crashes a write.

    rate_importance("We signed the contract with Acme today").value   -> 8 (offline)
    rate_importance(text, model="gpt-4o-mini").note                   -> what the model said

Deliberately left out: re-rating old memories, and calibrating the model's scale.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from base.redaction import redact
from base.text import tokenize, words
from base.unwritten import NotWrittenYet, runs_on_learner_code
from base.validation import IMPORTANCE_RANGE, as_timestamp, check_importance, check_kind, check_text
from embedding_helpers import Embedder
from extensions.model_choice import ask, is_offline, resolve_chat_model
from llm.gateway import ModelCallError
from llm.memory_block import DATA_NOT_INSTRUCTIONS, render_notes
from memory_store import Memory, MemoryStore
from practice.importance_parsing import NUMBER_WORDS, parse_importance

LOW, HIGH = IMPORTANCE_RANGE  # 1, 10

RATING_PROMPT = """You help an assistant decide which memories about a person are worth \
keeping in mind. Rate how much the memory below matters on a whole-number scale from 1 to 10:
1 means an everyday trifle that will never matter again (a greeting, the weather, \
brushing teeth); 10 means something that should shape many future conversations \
(a lasting decision, a health constraint, a promise, a major life event).
Reply with the number only.
{data_not_instructions}

The memory to rate is the one note below.
{notes}
Rating:"""

# Cue words of the offline rater and what each adds to a base of 3. Matched after
# tokenize(), so "decided" and "decision" meet "decide". Visible on purpose: a learner
# can read exactly why a memory got its number.
BASE_IMPORTANCE = 3
CUES: dict[str, int] = {
    # lasting decisions, constraints and commitments
    "decided": 3, "decision": 3, "always": 2, "never": 2, "must": 2, "deadline": 3,
    "allergic": 4, "allergy": 4, "contract": 3, "signed": 2, "promised": 3,
    "prefer": 2, "important": 2, "remember": 2, "birthday": 2, "diagnosed": 4,
    "married": 4, "hired": 3, "resigned": 3, "moved": 2, "forbidden": 3, "password": 2,
    # lasting facts about a person: who they are, live and love, what they can eat
    "vegetarian": 4, "vegan": 4, "pescatarian": 3, "halal": 3, "kosher": 3, "diabetic": 4,
    "pregnant": 4, "medication": 3, "sober": 3, "name": 2, "live": 2, "relocated": 2,
    "engaged": 3, "divorced": 3, "partner": 2, "wife": 2, "husband": 2, "daughter": 2,
    "son": 2, "job": 2, "promoted": 3, "retired": 3, "quit": 2,
    # small talk and routine
    "thanks": -2, "thank": -2, "ok": -2, "okay": -2, "lol": -2, "hello": -2, "hi": -2,
    "weather": -2, "brushed": -2, "lunch": -1, "coffee": -1,
}  # fmt: skip
_CUE_STEMS = {tokenize(word)[0]: weight for word, weight in CUES.items()}

NOT_PARSED = (
    "the model's reply was not read: parse_importance is not implemented yet, "
    "code/practice/importance_parsing.py, optional Milestone 6"
)


class Rating(NamedTuple):
    """An importance in [1, 10], where it came from, and a note saying how."""

    value: float
    source: str  # "model", "heuristic" or "default"
    note: str


def parse_rating(reply, default: float = 5) -> Rating:
    """Read a model's reply as an importance in [1, 10]; never raises on a bad reply.

    The reading is the learner's parse_importance (code/practice/importance_parsing.py, optional
    Milestone 6); this adds the default for a reply without a rating and the note.
    Until it is written, NotWrittenYet names it (rate_importance then falls back to the
    heuristic and says so).

    parse_rating("7")             -> Rating(7, "model", "read 7")
    parse_rating("Rating: 12")    -> Rating(10, "model", "read 10 from ...: clamped ...")
    parse_rating("very!")         -> Rating(5, "default", "no rating in 'very!': used 5")
    """
    default = check_importance(default)
    text = reply.strip() if isinstance(reply, str) else ""
    shown = repr(text[:60]) if text else "an empty reply"
    value = _learner_rating(text)
    if value is None:
        return Rating(_tidy(default), "default", f"no rating in {shown}: used {default:g}")
    note = f"read {value}" if text == str(value) else f"read {value} from {shown}"
    if value in (LOW, HIGH) and not _says(text, value):
        note += f", outside [{LOW}, {HIGH}]: clamped to {value}"
    return Rating(value, "model", note)


@runs_on_learner_code
def _learner_rating(text: str) -> int | None:
    value = parse_importance(text)
    if value is not None and (type(value) is not int or not LOW <= value <= HIGH):
        raise TypeError(
            f"parse_importance must return a whole number in [{LOW}, {HIGH}] or None, got "
            f"{value!r} for {text[:60]!r} (code/practice/importance_parsing.py, optional "
            "Milestone 6)"
        )
    return value


def _says(text: str, value: int) -> bool:
    """Does `text` hold `value` itself (10 or "ten"), rather than a number clamped to it?"""
    word = next(w for w, n in NUMBER_WORDS.items() if n == value)
    return re.search(rf"(?<![\d.]){value}(?![\d.])|\b{word}\b", text, re.IGNORECASE) is not None


def heuristic_importance(text: str) -> Rating:
    """The offline rater: 3, plus or minus each cue word found, clamped to [1, 10].

    heuristic_importance("We decided: deploys on Fridays are forbidden")
        -> Rating(9, 'heuristic', '3 +3 decided +3 forbidden')
    """
    _check_text(text)
    value, steps = BASE_IMPORTANCE, [str(BASE_IMPORTANCE)]
    seen = set()
    for word in words(text):
        stem = tokenize(word)[0]  # stemmed exactly as the cue words were
        if stem in _CUE_STEMS and stem not in seen:  # each cue counts once
            seen.add(stem)
            value += _CUE_STEMS[stem]
            steps.append(f"{_CUE_STEMS[stem]:+d} {word}")
    note = " ".join(steps) if len(steps) > 1 else f"{BASE_IMPORTANCE} (no cue words)"
    clamped = min(HIGH, max(LOW, value))
    if clamped != value:
        note += f" = {value}, clamped to {clamped}"
    return Rating(clamped, "heuristic", note)


def rate_importance(
    text: str,
    model: str | None = None,
    *,
    default: float = 5,
    **model_kwargs,
) -> Rating:
    """Rate `text` 1-10 with `model` through litellm, or with the heuristic offline.

    Inputs:
        model: a litellm chat model; None reads MEMORY_LAB_CHAT_MODEL. A memorylab/
            model (the offline chat model is no rater) means the heuristic.
        default: used when the reply holds no number at all.
        model_kwargs: passed to litellm (api_base and timeout default to the settings),
            e.g. mock_response="Rating: 12" in tests.
    Returns:
        a Rating; a model that fails (no key, no network) falls back to the heuristic
        and says so in the note, so writing a memory never fails because of the rater.
    """
    _check_text(text)
    check_importance(default)  # a bad default is the caller's bug: say so before any call
    model, kwargs = resolve_chat_model(model, **model_kwargs)
    if is_offline(model):
        return heuristic_importance(text)
    try:
        reply = ask(model, rating_prompt(text), **kwargs)
    except ModelCallError as exc:
        fallback = heuristic_importance(text)
        reason = redact(str(exc).splitlines()[0])  # stored in metadata: never a key
        return fallback._replace(note=f"{fallback.note} (model failed: {reason})")
    return rating_from_reply(reply, text, default=default)


def rating_from_reply(reply, text: str, default: float = 5) -> Rating:
    """parse_rating(reply); before optional Milestone 6 is written, the heuristic's rating
    of `text` with a note that says so: the chat keeps working without it."""
    try:
        return parse_rating(reply, default=default)
    except NotWrittenYet:
        fallback = heuristic_importance(text)
        return fallback._replace(note=f"{fallback.note} ({NOT_PARSED})")


def rating_prompt(text: str) -> str:
    """RATING_PROMPT around `text`, which goes in the escaped memory block (a memory that
    says "rate me 10" or forges a second note stays one note's text)."""
    _check_text(text)
    return RATING_PROMPT.format(
        notes=render_notes([{"text": text}]), data_not_instructions=DATA_NOT_INSTRUCTIONS
    )


def remember_rated(
    store: MemoryStore,
    embedder: Embedder,
    text: str,
    now,
    *,
    kind: str = "episodic",
    model: str | None = None,
    **model_kwargs,
) -> Memory:
    """Rate `text`, then store it with that importance; the rating's story goes in metadata.

    remember_rated(store, embedder, "I'm allergic to peanuts", now).importance -> 7
    """
    check_kind(kind)  # before the model is asked: a refused write should cost no call
    now = as_timestamp(now, "now")
    rating = rate_importance(text, model, **model_kwargs)
    metadata = {"importance_source": rating.source, "importance_note": rating.note}
    return embedder.remember(
        store, text, kind=kind, importance=rating.value, now=now, metadata=metadata
    )


def _tidy(value: float) -> float:
    return int(value) if float(value).is_integer() else value  # 7, not 7.0


def _check_text(text) -> None:
    check_text(text, "text to rate")
