"""Context budget: recalled memories must fit the prompt; what does not fit is summarised.

The prompt is main memory: small and fixed. Retrieval decides which memories are
worth paging in; the budget decides how many of them fit. Cutting the list at the
budget would drop memories silently, and the model would answer as if they did not
exist. Instead, `fit_to_budget` keeps the best memories in rank order while they fit
and folds the rest into one summary line, so the model at least knows that more was
recalled and roughly what about ("3 more memories did not fit; they mention ...").

    context = fit_to_budget(recalled, budget_tokens=120, now=now)
    context.included      # memories shown in full, best first
    context.summarised    # memories folded into context.summary
    context.block         # the <memories> block for the system prompt, within budget

`recall_within_budget(store, query, now, budget_tokens=...)` does both steps on a one-user
MemoryStore: kind-aware ranking, then the budget, refreshing only what is shown.

Tokens are estimated at 4 characters each (a common rule of thumb for English with
GPT-style tokenizers); pass `count=` to use a real tokenizer instead. The summary is
offline and deterministic; with a real chat model (`model=`) the model writes it, and
the offline one is used whenever the model's version would not fit.

recall_within_budget refuses a store that mixes users' memories (see extensions/kinds.py).

Deliberately left out: shortening individual memories, and the rest of the prompt (system
text, conversation): the budget here is for the memory block alone.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from typing import NamedTuple

from base.defaults import WEIGHTS
from base.text import STOP_WORDS, words
from base.unwritten import runs_on_learner_code
from base.validation import Weights, as_timestamp, check_int
from extensions.kinds import rank_by_kind
from extensions.model_choice import ask, is_offline, resolve_chat_model
from llm.gateway import ModelCallError
from llm.memory_block import (
    DATA_NOT_INSTRUCTIONS,
    format_date,
    memory_item,
    render_items,
    render_notes,
)
from memory_store import Memory, MemoryStore

CHARS_PER_TOKEN = 4  # rough average for English text


class BudgetedContext(NamedTuple):
    included: list[Memory]
    summarised: list[Memory]
    summary: str | None
    block: str
    tokens: int
    source: str  # who wrote the summary: "offline", "model", or "" when nothing overflowed


def count_tokens(text: str) -> int:
    """An estimate of how many tokens `text` costs: 4 characters per token, rounded up.

    count_tokens("Eric prefers Groq") -> 5      (17 characters)
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def overflow_summary(memories: list[Memory]) -> str:
    """One line about memories that did not fit: how many, which, what about, when.

    -> "2 more memories did not fit (m4, m7); they mention: pool, leak, billing;
        written 2026-03-01 to 2026-03-20."
    """
    memories = _check_memories(memories)
    if not memories:
        raise ValueError("there is nothing to summarise: no memory overflowed")
    mentions = Counter(
        w
        for m in memories
        for w in dict.fromkeys(word.split("'")[0] for word in words(m.text))  # once per memory
        if len(w) >= 3 and w.isalpha() and w not in STOP_WORDS  # topics: no numbers, no "ok"
    )
    topics = ", ".join(w for w, _ in mentions.most_common(5)) or "nothing searchable"
    first = format_date(min(m.created_at for m in memories))[:10]
    last = format_date(max(m.created_at for m in memories))[:10]
    when = first if first == last else f"{first} to {last}"
    ids = ", ".join(m.id for m in memories)
    noun = "memory" if len(memories) == 1 else "memories"
    return (
        f"{len(memories)} more {noun} did not fit ({ids}); they mention: {topics}; written {when}."
    )


def render_with_summary(included: list[Memory], summary: str | None, now) -> str:
    """The memory block of `included`, plus the summary as a last item of kind 'summary'."""
    now = as_timestamp(now, "now")
    items = [memory_item(memory, now) for memory in _check_memories(included)]
    if summary is not None:
        if not isinstance(summary, str):
            raise TypeError(f"summary must be a string or None, got {type(summary).__name__}")
        items.append({"id": "overflow", "kind": "summary", "text": summary})
    return render_items(items)


def fit_to_budget(
    memories: list[Memory],
    budget_tokens: int,
    now,
    *,
    count: Callable[[str], int] = count_tokens,
    model: str | None = None,
    **model_kwargs,
) -> BudgetedContext:
    """Keep the longest prefix of `memories` that fits with a summary of the rest.

    Inputs:
        memories: recalled memories, best first (e.g. from retrieve).
        budget_tokens: tokens the memory block may use, an int >= 1.
        count: text -> tokens (default: 4 characters per token).
        model: the chat model that writes the summary of what does not fit (None: the
            configured MEMORY_LAB_CHAT_MODEL; an offline model keeps the offline summary).
            model_kwargs go to litellm, e.g. mock_response=....
    Returns:
        BudgetedContext(included, summarised, summary, block, tokens, source).
        Order is kept: a memory is never skipped in favour of a lower-ranked one.
    Raises ValueError if not even the empty block with a summary can fit.
    """
    budget_tokens = check_int(budget_tokens, "budget_tokens")
    now = as_timestamp(now, "now")
    memories = _check_memories(memories)
    if not callable(count):
        raise TypeError(f"count must be a function text -> tokens, got {count!r}")
    model, model_kwargs = resolve_chat_model(model, **model_kwargs)
    for keep in range(len(memories), -1, -1):  # the most memories first
        included, rest = memories[:keep], memories[keep:]
        summary = overflow_summary(rest) if rest else None
        block = render_with_summary(included, summary, now)
        if _tokens(count, block) <= budget_tokens:
            break
    else:
        summary = overflow_summary(memories) if memories else None
        smallest = _tokens(count, render_with_summary([], summary, now))
        raise ValueError(
            f"budget_tokens={budget_tokens} is too small: the smallest possible block "
            f"needs {smallest} tokens; raise the budget"
        )
    source = "offline" if rest else ""
    if rest and not is_offline(model):
        written = _model_summary(rest, model, model_kwargs)
        candidate = render_with_summary(included, written, now) if written else None
        if candidate is not None and _tokens(count, candidate) <= budget_tokens:
            summary, block, source = written, candidate, "model"
    return BudgetedContext(included, rest, summary, block, _tokens(count, block), source)


@runs_on_learner_code
def recall_within_budget(
    store: MemoryStore,
    query_embedding,
    now,
    *,
    budget_tokens: int,
    k: int = 10,
    weights: Weights = WEIGHTS,
    half_lives: dict[str, float] | None = None,
    count: Callable[[str], int] = count_tokens,
) -> BudgetedContext:
    """Rank a one-user store (kinds.rank_by_kind), then fit its top k into the budget.

    Only the memories shown in full count as recalled: their last_accessed becomes `now`.
    A summarised memory was not put in front of the model, so it is not refreshed.

        recall_within_budget(store, query, now, budget_tokens=160).included -> [Memory, ...]
    """
    k = check_int(k, "k", 1, "how many memories to consider")
    rows = rank_by_kind(store, query_embedding, now, weights=weights, half_lives=half_lives)
    context = fit_to_budget([row.memory for row in rows[:k]], budget_tokens, now, count=count)
    now = as_timestamp(now, "now")
    for memory in context.included:
        memory.last_accessed = now  # recalled: recency restarts here
    return context


def _tokens(count: Callable[[str], int], text: str) -> int:
    """count(text), checked: a NaN or a string would make every budget comparison wrong."""
    return check_int(count(text), "count(text)", 0, "a whole number of tokens")


def _check_memories(memories) -> list[Memory]:
    """`memories` as a list, each checked to be a Memory (the error names the first that is not)."""
    if isinstance(memories, (str, bytes, dict)) or not hasattr(memories, "__iter__"):
        raise TypeError(
            f"memories must be a list of Memory objects, best first; got {type(memories).__name__}"
        )
    memories = list(memories)
    for i, memory in enumerate(memories):
        if not isinstance(memory, Memory):
            raise TypeError(f"memories[{i}] must be a Memory, got {type(memory).__name__}")
    return memories


def _model_summary(memories: list[Memory], model: str, kwargs: dict) -> str | None:
    """One line from the model about the overflow, or None if it fails or says nothing."""
    prompt = (  # the chat's escaped block: a note cannot pose as an instruction
        "In one short line, say what these remembered notes are about, so a reader knows "
        f"they exist without reading them.\n{DATA_NOT_INSTRUCTIONS}\n\n{render_notes(memories)}"
    )
    try:
        reply = ask(model, prompt, **kwargs)
    except ModelCallError:
        return None  # the offline summary stands
    line = next((x.strip() for x in reply.splitlines() if x.strip()), "")
    return line or None
